"""core.rnn.FusedRNNCell (the fused RNN operator), unfuse(), its weight layout and the
FusedRNN initializer."""
from __future__ import annotations

import warnings

import numpy
import pytest

from core import context, initializer, nd, rnn, sym
from core.module import Module


def _random_values(group, shapes, seed=0):
    rng = numpy.random.default_rng(seed)
    args = group.infer_shape(**shapes)[0]
    return {n: nd.array(rng.uniform(-0.5, 0.5, s).astype("float32"))
            for n, s in zip(group.list_arguments(), args)}


@pytest.mark.parametrize("mode", ["lstm", "gru", "rnn_tanh", "rnn_relu"])
@pytest.mark.parametrize("bidirectional", [False, True])
def test_unfused_cells_compute_the_fused_network(mode, bidirectional):
    fused = rnn.FusedRNNCell(4, num_layers=2, mode=mode, bidirectional=bidirectional,
                             prefix="f_", get_next_state=True)
    out, states = fused.unroll(3, sym.var("data"), layout="TNC", merge_outputs=True)
    group = sym.Group([out] + states)
    vals = _random_values(group, {"data": (3, 2, 5)})
    want = group.eval(**vals)
    assert [w.shape for w in want[1:]] == [((1 + bidirectional) * 2, 2, 4)] * len(states)
    stack = fused.unfuse()
    u_out, _ = stack.unroll(3, sym.var("data"), layout="TNC", merge_outputs=True)
    weights = stack.pack_weights(fused.unpack_weights({"f_parameters": vals["f_parameters"]}))
    weights["data"] = vals["data"]
    got = u_out.eval(**{k: weights[k] for k in u_out.list_arguments()})[0]
    numpy.testing.assert_allclose(got.asnumpy(), want[0].asnumpy(), rtol=1e-5, atol=1e-5)


def test_unfuse_names_match_mxnet():
    cell = rnn.FusedRNNCell(10, num_layers=3, mode="lstm", prefix="test_", bidirectional=True,
                            dropout=0.5).unfuse()
    outputs, _ = cell.unroll(3, [sym.var(f"t{i}") for i in range(3)])
    assert sym.Group(outputs).list_outputs() == [f"test_bi_l2_t{i}_output" for i in range(3)]
    kinds = [type(c).__name__ for c in cell._cells]
    assert kinds == ["BidirectionalCell", "DropoutCell"] * 2 + ["BidirectionalCell"]


def test_ntc_layout_warns_and_transposes():
    cell = rnn.FusedRNNCell(3, mode="gru", prefix="g_")
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        out, states = cell.unroll(4, sym.var("data"), merge_outputs=True)
    assert any("TNC" in str(x.message) for x in w)
    assert states == [] and out.infer_shape(data=(2, 4, 5))[1] == [(2, 4, 3)]
    steps, _ = cell.unroll(4, sym.var("data"), layout="TNC", merge_outputs=False)
    assert len(steps) == 4
    with pytest.raises(NotImplementedError, match="cannot be stepped"):
        cell(sym.var("x"), [])


def test_pack_unpack_round_trip_and_errors():
    cell = rnn.FusedRNNCell(3, num_layers=2, mode="lstm", bidirectional=True, prefix="f_")
    out, _ = cell.unroll(2, sym.var("data"), layout="TNC", merge_outputs=True)
    size = dict(zip(out.list_arguments(), out.infer_shape(data=(2, 1, 4))[0]))["f_parameters"]
    flat = nd.array(numpy.arange(size[0], dtype="float32"))
    un = cell.unpack_weights({"f_parameters": flat})
    assert un["f_l0_i2h_i_weight"].shape == (3, 4)
    assert un["f_r1_i2h_o_weight"].shape == (3, 6)  # layer 1 reads both directions
    assert un["f_l0_i2h_i_weight"].asnumpy().ravel().tolist() == list(range(12))
    back = cell.pack_weights(un)
    assert list(back) == ["f_parameters"]
    assert numpy.array_equal(back["f_parameters"].asnumpy(), flat.asnumpy())
    with pytest.raises(ValueError, match="fits no input size"):
        cell.unpack_weights({"f_parameters": nd.zeros((size[0] + 1,))})
    with pytest.raises(ValueError, match="has shape"):
        cell.pack_weights(dict(un, f_l0_h2h_f_bias=nd.zeros((4,))))
    with pytest.raises(ValueError, match="mode must be one of"):
        rnn.FusedRNNCell(3, mode="lstmp")


def test_initializer_fills_pieces_and_forget_gates():
    cell = rnn.FusedRNNCell(4, mode="lstm", forget_bias=3.0, prefix="f_")
    out, _ = cell.unroll(2, sym.var("data"), layout="TNC", merge_outputs=True)
    mod = Module(out, label_names=None, context=context.cpu(0))
    mod.bind(data_shapes=[("data", (2, 3, 5))], label_shapes=None)
    mod.init_params(initializer=initializer.Uniform(0.1))
    un = cell.unpack_weights(mod.get_params()[0])
    assert numpy.all(un["f_l0_i2h_f_bias"].asnumpy() == 3.0)
    assert numpy.all(un["f_l0_h2h_i_bias"].asnumpy() == 0.0)
    w = un["f_l0_i2h_c_weight"].asnumpy()
    assert numpy.abs(w).max() <= 0.1 and numpy.abs(w).max() > 0
    # the attribute is FusedRNN's JSON, which initializer.create reads back
    made = initializer.create(cell._parameter.attr("__init__"))
    assert isinstance(made, rnn.FusedRNN) and made._forget_bias == 3.0
    with pytest.raises(ValueError, match="no initializer for its pieces"):
        made._init_weight(initializer.InitDesc("p"), nd.zeros(out.infer_shape(
            data=(2, 3, 5))[0][1]))
