"""core.rnn's containers (SequentialRNNCell, BidirectionalCell) and modifiers
(DropoutCell, ZoneoutCell, ResidualCell)."""
from __future__ import annotations

import numpy
import pytest

from core import nd, rnn, sym


def _steps(n):
    return [sym.var(f"rnn_t{i}_data") for i in range(n)]


def _shapes(n, shape):
    return {f"rnn_t{i}_data": shape for i in range(n)}


def test_stack_names_and_states():
    stack = rnn.SequentialRNNCell()
    for i in range(3):
        cell = rnn.LSTMCell(8, prefix=f"s{i}_")
        stack.add(rnn.ResidualCell(cell) if i == 1 else cell)
    outputs, states = stack.unroll(2, _steps(2))
    assert sym.Group(outputs).list_outputs() == ["s2_t0_out_output", "s2_t1_out_output"]
    assert len(states) == 6
    assert sym.Group(outputs).infer_shape(**_shapes(2, (3, 8)))[1] == [(3, 8)] * 2
    assert all(f"s{i}_i2h_weight" in stack.params._params for i in range(3))


def test_stack_steps_like_its_unroll():
    stack = rnn.SequentialRNNCell()
    stack.add(rnn.GRUCell(4, prefix="a_"))
    stack.add(rnn.RNNCell(3, prefix="b_"))
    out, states = stack(sym.var("x"), stack.begin_state())
    assert out.name == "b_t0_out" and len(states) == 2


def test_params_for_a_container_and_its_children_are_refused():
    stack = rnn.SequentialRNNCell(params=rnn.RNNParams("p_"))
    with pytest.raises(ValueError, match="either specify params for SequentialRNNCell"):
        stack.add(rnn.RNNCell(2, prefix="d_", params=rnn.RNNParams("q_")))


def test_bidirectional_outputs_and_step_refusal():
    cell = rnn.BidirectionalCell(rnn.LSTMCell(5, prefix="l_"), rnn.LSTMCell(5, prefix="r_"),
                                 output_prefix="bi_")
    outputs, states = cell.unroll(3, _steps(3))
    assert sym.Group(outputs).list_outputs() == ["bi_t0_output", "bi_t1_output",
                                                 "bi_t2_output"]
    assert sym.Group(outputs).infer_shape(**_shapes(3, (2, 4)))[1] == [(2, 10)] * 3
    assert len(states) == 2 and len(states[0]) == 2  # [l_states, r_states], as MXNet
    merged, _ = cell.unroll(3, sym.var("data"), merge_outputs=True)
    assert merged.name == "bi_out"
    assert merged.infer_shape(data=(2, 3, 4))[1] == [(2, 3, 10)]
    with pytest.raises(NotImplementedError, match="cannot be stepped"):
        cell(sym.var("x"), [])


def test_bidirectional_reverses_the_backward_cell():
    # a backward RNN with zero recurrent weights: its output at t is f(x_t), so the
    # concatenation's second half must line up with the forward half step by step
    cell = rnn.BidirectionalCell(rnn.RNNCell(2, prefix="l_"), rnn.RNNCell(2, prefix="r_"))
    outputs, _ = cell.unroll(3, _steps(3))
    vals = {f"rnn_t{i}_data": nd.array(numpy.full((1, 2), float(i))) for i in range(3)}
    for side in ("l", "r"):
        vals[f"{side}_i2h_weight"] = nd.array(numpy.eye(2))
        vals[f"{side}_i2h_bias"] = nd.zeros((2,))
        vals[f"{side}_h2h_weight"] = nd.zeros((2, 2))
        vals[f"{side}_h2h_bias"] = nd.zeros((2,))
    got = [o.asnumpy() for o in sym.Group(outputs).eval(**vals)]
    for i, o in enumerate(got):
        numpy.testing.assert_allclose(o, numpy.tanh(numpy.full((1, 4), float(i))), rtol=1e-6)


def test_residual_adds_the_input():
    cell = rnn.ResidualCell(rnn.GRUCell(4, prefix="g_"))
    outputs, _ = cell.unroll(2, _steps(2))
    assert outputs[0].name == "g_t0_out_plus_residual"
    zeros = {k: nd.zeros(s) for k, s in (("g_i2h_weight", (12, 4)), ("g_i2h_bias", (12,)),
                                          ("g_h2h_weight", (12, 4)), ("g_h2h_bias", (12,)))}
    got = sym.Group(outputs).eval(rnn_t0_data=nd.ones((2, 4)) * 3, rnn_t1_data=nd.ones((2, 4)),
                                  **zeros)
    # zero weights: the GRU outputs 0.5 * h_prev (update gate 0.5, candidate 0)
    assert got[0].asnumpy().tolist() == [[3.0] * 4] * 2
    assert got[1].asnumpy().tolist() == [[1.0] * 4] * 2
    merged, _ = cell.unroll(2, sym.var("data"), merge_outputs=True)
    assert merged.infer_shape(data=(2, 2, 4))[1] == [(2, 2, 4)]


def test_modified_cells_are_used_through_the_modifier():
    base = rnn.RNNCell(3, prefix="b_")
    cell = rnn.ZoneoutCell(base, zoneout_outputs=0.5, zoneout_states=0.5)
    with pytest.raises(RuntimeError, match="modifier cell"):
        base.begin_state()
    assert [s.name for s in cell.begin_state()] == ["b_begin_state_0"]
    outputs, _ = cell.unroll(3, _steps(3))
    assert sym.Group(outputs).infer_shape(**_shapes(3, (2, 4)))[1] == [(2, 3)] * 3
    assert cell.params is base.params


def test_zoneout_refuses_cells_that_cannot_step():
    with pytest.raises(TypeError, match="unfuse first"):
        rnn.ZoneoutCell(rnn.FusedRNNCell(3))
    with pytest.raises(TypeError, match="BidirectionalCell doesn't support zoneout"):
        rnn.ZoneoutCell(rnn.BidirectionalCell(rnn.RNNCell(2), rnn.RNNCell(2, prefix="r_")))


def test_zoneout_keeps_previous_values_in_training_only():
    cell = rnn.ZoneoutCell(rnn.RNNCell(200, prefix="z_"), zoneout_outputs=0.5)
    outputs, _ = cell.unroll(2, _steps(2))
    ex = outputs[1].simple_bind(None, rnn_t0_data=(1, 1), rnn_t1_data=(1, 1))
    ex.arg_dict["z_i2h_weight"][:] = 1.0
    ex.arg_dict["rnn_t0_data"][:] = 1.0
    ex.arg_dict["rnn_t1_data"][:] = 2.0
    assert numpy.allclose(ex.forward(is_train=False)[0].asnumpy(), numpy.tanh(2.0))
    kept = ex.forward(is_train=True)[0].asnumpy()
    # zero recurrent weights: t1's output is tanh(2), or kept from t0 (tanh(1) or 0)
    choices = numpy.array([numpy.tanh(2.0), numpy.tanh(1.0), 0.0])
    assert (numpy.abs(kept.ravel()[:, None] - choices).min(axis=1) < 1e-5).all()
    assert (numpy.abs(kept - numpy.tanh(2.0)) > 1e-6).any()


def test_dropout_cell():
    cell = rnn.DropoutCell(0.5, prefix="d_")
    out, states = cell.unroll(3, sym.var("data"), merge_outputs=True)
    assert states == [] and out.infer_shape(data=(2, 3, 4))[1] == [(2, 3, 4)]
    steps, _ = cell.unroll(2, _steps(2))
    assert len(steps) == 2
    with pytest.raises(TypeError, match="dropout probability must be a number"):
        rnn.DropoutCell("0.5")
