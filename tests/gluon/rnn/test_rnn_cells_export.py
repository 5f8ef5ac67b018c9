"""Unrolled RNN cells export to Symbol JSON that MXNet 1.9.1 loads (split -> SliceChannel)."""
from __future__ import annotations

import json
import os

import numpy as np
import pytest

from core import nd
from gluon import HybridBlock, SymbolBlock, rnn
from tests.mxnet_ref import requires_mxnet, run_mxnet


class _Unrolled(HybridBlock):
    def __init__(self, cell, length, layout="NTC", **kw):
        super().__init__(**kw)
        self.length, self.layout = length, layout
        with self.name_scope():
            self.cell = cell

    def hybrid_forward(self, F, seq):
        outputs, _ = self.cell.unroll(inputs=seq, length=self.length, layout=self.layout,
                                      merge_outputs=True)
        return outputs


CELLS = {
    "rnn": lambda: rnn.RNNCell(hidden_size=3),
    "lstm": lambda: rnn.LSTMCell(hidden_size=3),
    "gru": lambda: rnn.GRUCell(hidden_size=3),
}


def _export(case, tmp_path, layout="NTC"):
    net = _Unrolled(CELLS[case](), 4, layout)
    net.initialize()
    net.hybridize()
    shape = (2, 4, 5) if layout == "NTC" else (4, 2, 5)
    x = nd.array(np.random.RandomState(0).randn(*shape).astype("float32"))
    y = net(x)
    sym_file, param_file = net.export(os.fspath(tmp_path / case), epoch=0)
    return x, y, sym_file, param_file


@pytest.mark.parametrize("layout", ["NTC", "TNC"])
@pytest.mark.parametrize("case", sorted(CELLS))
def test_unrolled_cell_exports_slice_channel_and_imports_back(case, layout, tmp_path):
    x, y, sym_file, param_file = _export(case, tmp_path, layout)
    with open(sym_file) as f:
        ops = {n["op"] for n in json.load(f)["nodes"]}
    assert "SliceChannel" in ops and "split" not in ops
    back = SymbolBlock.imports(sym_file, ["data"], param_file)
    np.testing.assert_allclose(back(x).asnumpy(), y.asnumpy(), rtol=1e-5, atol=1e-6)


_MX = """
import numpy as np, mxnet as mx
blk = mx.gluon.SymbolBlock.imports({sym!r}, ["data"], {params!r})
print(np.array2string(blk(mx.nd.array(np.load({x!r}))).asnumpy().ravel(), precision=6,
                      separator=",", max_line_width=10**6, floatmode="fixed"))
"""


@requires_mxnet
@pytest.mark.parametrize("case", sorted(CELLS))
def test_real_mxnet_runs_the_exported_unrolled_cell(case, tmp_path):
    x, y, sym_file, param_file = _export(case, tmp_path)
    np.save(tmp_path / "x.npy", x.asnumpy())
    out = run_mxnet(_MX.format(sym=sym_file, params=param_file, x=os.fspath(tmp_path / "x.npy")))
    theirs = np.array(json.loads(out.strip().splitlines()[-1]))
    np.testing.assert_allclose(theirs, y.asnumpy().ravel(), rtol=1e-4, atol=1e-5)
