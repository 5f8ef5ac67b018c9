"""core.rnn's step cells (RNNCell, LSTMCell, GRUCell), BaseRNNCell and RNNParams."""
from __future__ import annotations

import numpy
import pytest

from core import context, nd, rnn, sym
from core.module import Module


def _steps(n, prefix="rnn_t"):
    return [sym.var(f"{prefix}{i}_data") for i in range(n)]


@pytest.mark.parametrize("cls, gates", [(rnn.RNNCell, 1), (rnn.LSTMCell, 4), (rnn.GRUCell, 3)])
def test_unrolled_names_shapes_and_parameters(cls, gates):
    cell = cls(10, prefix="rnn_")
    outputs, states = cell.unroll(3, _steps(3))
    group = sym.Group(outputs)
    assert sorted(cell.params._params) == ["rnn_h2h_bias", "rnn_h2h_weight", "rnn_i2h_bias",
                                           "rnn_i2h_weight"]
    assert group.list_outputs() == [f"rnn_t{i}_out_output" for i in range(3)]
    args, outs, _ = group.infer_shape(**{f"rnn_t{i}_data": (4, 6) for i in range(3)})
    assert outs == [(4, 10)] * 3
    shapes = dict(zip(group.list_arguments(), args))
    assert shapes["rnn_i2h_weight"] == (gates * 10, 6)
    assert shapes["rnn_h2h_weight"] == (gates * 10, 10)
    assert len(states) == (2 if cls is rnn.LSTMCell else 1)


def test_merged_input_and_layouts():
    cell = rnn.GRUCell(5, prefix="g_")
    out, _ = cell.unroll(4, sym.var("data"), layout="TNC", merge_outputs=True)
    assert out.infer_shape(data=(4, 2, 3))[1] == [(4, 2, 5)]
    steps, _ = cell.unroll(4, sym.var("data"), layout="NTC", merge_outputs=False)
    assert len(steps) == 4 and steps[0].infer_shape(data=(2, 4, 3))[1] == [(2, 5)]


def test_an_lstm_step_computes_mxnets_gates():
    cell = rnn.LSTMCell(3, prefix="l_")
    _, (h, c) = cell(sym.var("x"), [sym.var("h0"), sym.var("c0")])
    rng = numpy.random.default_rng(0)
    v = {k: rng.standard_normal(s).astype("float32") for k, s in
         (("x", (2, 4)), ("h0", (2, 3)), ("c0", (2, 3)), ("l_i2h_weight", (12, 4)),
          ("l_i2h_bias", (12,)), ("l_h2h_weight", (12, 3)), ("l_h2h_bias", (12,)))}
    got_h, got_c = sym.Group([h, c]).eval(**{k: nd.array(a) for k, a in v.items()})
    z = v["x"] @ v["l_i2h_weight"].T + v["l_i2h_bias"] + v["h0"] @ v["l_h2h_weight"].T + \
        v["l_h2h_bias"]
    sig = 1 / (1 + numpy.exp(-z))
    i, f, g, o = sig[:, :3], sig[:, 3:6], numpy.tanh(z[:, 6:9]), sig[:, 9:]
    c = f * v["c0"] + i * g
    numpy.testing.assert_allclose(got_c.asnumpy(), c, rtol=1e-5, atol=1e-6)
    numpy.testing.assert_allclose(got_h.asnumpy(), o * numpy.tanh(c), rtol=1e-5, atol=1e-6)


def test_shared_params_share_weights():
    params = rnn.RNNParams("shared_")
    a, b = rnn.RNNCell(4, prefix="a_", params=params), rnn.RNNCell(4, prefix="b_", params=params)
    out_a, _ = a(sym.var("x"), a.begin_state())
    out_b, _ = b(out_a, b.begin_state())
    args = sym.Group([out_b]).list_arguments()
    assert args == ["x", "shared_i2h_weight", "shared_i2h_bias", "shared_h2h_weight",
                    "shared_h2h_bias"]


def test_begin_state_functions_and_counters():
    cell = rnn.LSTMCell(7, prefix="l_")
    states = cell.begin_state(func=sym.Variable)
    assert [s.name for s in states] == ["l_begin_state_0", "l_begin_state_1"]
    assert states[0].attr("__layout__") == "NC"
    assert cell.state_shape == [(0, 7), (0, 7)]
    again = cell.begin_state()
    assert [s.name for s in again] == ["l_begin_state_2", "l_begin_state_3"]
    cell.reset()
    assert cell.begin_state()[0].name == "l_begin_state_0"


def test_forget_bias_initializes_through_module():
    stack = rnn.SequentialRNNCell()
    stack.add(rnn.LSTMCell(5, forget_bias=2.0, prefix="l0_"))
    out, _ = stack.unroll(1, sym.var("data"), merge_outputs=True)
    mod = Module(out, label_names=None, context=context.cpu(0))
    mod.bind(data_shapes=[("data", (3, 1, 4))], label_shapes=None)
    mod.init_params()
    bias = mod.get_params()[0]["l0_i2h_bias"].asnumpy()
    assert bias.tolist() == [0.0] * 5 + [2.0] * 5 + [0.0] * 10


def test_states_as_module_inputs():
    stack = rnn.SequentialRNNCell()
    for i in range(2):
        stack.add(rnn.LSTMCell(6, prefix=f"l{i}_"))
    begin = stack.begin_state(func=sym.Variable)
    _, states = stack.unroll(3, begin_state=begin, inputs=sym.var("data"))
    mod = Module(sym.Group(states), label_names=None, state_names=[s.name for s in begin],
                 context=[context.cpu(0), context.cpu(1)])
    mod.bind(data_shapes=[("data", (4, 3))], label_shapes=None, for_training=False)
    mod.init_params()
    from core.io import DataBatch

    batch = DataBatch(data=[nd.zeros((4, 3))], label=[])
    mod.set_states(value=1)
    mod.forward(batch)
    first = [o.asnumpy() for o in mod.get_outputs()]
    mod.set_states(states=mod.get_outputs(merge_multi_context=False))
    mod.forward(batch)
    second = [o.asnumpy() for o in mod.get_outputs()]
    assert [a.shape for a in first] == [(4, 6)] * 4
    assert not all(numpy.allclose(a, b) for a, b in zip(first, second))


def test_pack_and_unpack_are_inverse():
    cell = rnn.LSTMCell(2, prefix="l_")
    w = {"l_i2h_weight": nd.array(numpy.arange(24.0).reshape(8, 3)),
         "l_i2h_bias": nd.array(numpy.arange(8.0)),
         "l_h2h_weight": nd.array(numpy.arange(16.0).reshape(8, 2)),
         "l_h2h_bias": nd.array(numpy.arange(8.0)), "other": nd.ones((1,))}
    un = cell.unpack_weights(w)
    assert sorted(un) == sorted(["other"] + [f"l_{g}{gate}_{k}" for g in ("i2h", "h2h")
                                             for gate in ("_i", "_f", "_c", "_o")
                                             for k in ("weight", "bias")])
    assert un["l_i2h_f_weight"].asnumpy().tolist() == [[6.0, 7.0, 8.0], [9.0, 10.0, 11.0]]
    back = cell.pack_weights(un)
    assert sorted(back) == sorted(w)
    for k, v in w.items():
        assert numpy.array_equal(back[k].asnumpy(), v.asnumpy())
    assert rnn.DropoutCell(0.5).unpack_weights({"x": w["other"]}).keys() == {"x"}  # no gates


def test_errors_name_what_is_wrong():
    with pytest.raises(ValueError, match="LSTMCell: num_hidden must be a positive int"):
        rnn.LSTMCell(0)
    with pytest.raises(KeyError, match=r"GRUCell.unpack_weights: no array named 'gru_i2h_weight'"):
        rnn.GRUCell(3).unpack_weights({})
    with pytest.raises(ValueError, match="inputs=None"):
        rnn.RNNCell(3).unroll(2, None)
    with pytest.raises(ValueError, match="length=3 but 2 input steps"):
        rnn.RNNCell(3).unroll(3, [sym.var("a"), sym.var("b")])
    with pytest.raises(ValueError, match="layout must name the time axis"):
        rnn.RNNCell(3).unroll(2, sym.var("a"), layout="NC")
    with pytest.raises(ValueError, match="grouped symbol"):
        rnn.RNNCell(3).unroll(2, sym.Group([sym.var("a"), sym.var("b")]))
