"""core.rnn's checkpoint functions: per-gate weights on disk, packed in memory."""
from __future__ import annotations

import os

import numpy

from core import nd, rnn, sym


def _model():
    cell = rnn.FusedRNNCell(3, mode="gru", prefix="f_")
    out, _ = cell.unroll(2, sym.var("data"), layout="TNC", merge_outputs=True)
    size = out.infer_shape(data=(2, 1, 4))[0][1]
    arg = {"f_parameters": nd.array(numpy.arange(size[0], dtype="float32"))}
    return cell, out, arg


def test_save_unpacks_and_load_packs(tmp_path):
    cell, out, arg = _model()
    prefix = os.path.join(tmp_path, "m")
    rnn.save_rnn_checkpoint(cell, prefix, 3, out, arg, {})
    from core.model import load_checkpoint

    _, raw, _ = load_checkpoint(prefix, 3)
    assert "f_parameters" not in raw and "f_l0_i2h_r_weight" in raw
    symbol, packed, aux = rnn.load_rnn_checkpoint([cell], prefix, 3)
    assert symbol.list_arguments() == out.list_arguments() and aux == {}
    numpy.testing.assert_array_equal(packed["f_parameters"].asnumpy(),
                                     arg["f_parameters"].asnumpy())


def test_epoch_callback_saves_every_period(tmp_path):
    cell, out, arg = _model()
    prefix = os.path.join(tmp_path, "cb")
    callback = rnn.do_rnn_checkpoint(cell, prefix, period=2)
    for epoch in range(4):
        callback(epoch, out, arg, {})
    assert sorted(f for f in os.listdir(tmp_path) if f.endswith(".params")) == \
        ["cb-0002.params", "cb-0004.params"]
