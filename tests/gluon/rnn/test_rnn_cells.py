"""gluon.rnn cells: one step against NumPy formulas, names and deferred input size,
begin_state, unroll (layouts, merge_outputs, lists, valid_length), the stacks,
BidirectionalCell, DropoutCell, ZoneoutCell, ResidualCell, hybridize, gradients."""
import numpy
import pytest

from core import autograd, nd
from gluon import nn, rnn
from gluon.block import NameManager


def sigmoid(z):
    return 1 / (1 + numpy.exp(-z))


def randomize(block, rng, scale=0.5):
    for p in block.collect_params().values():
        p.set_data(nd.array(rng.uniform(-scale, scale, p.shape), dtype=p.dtype))


def weights(cell):
    return [getattr(cell, n).data().asnumpy().astype(numpy.float64)
            for n in ("i2h_weight", "h2h_weight", "i2h_bias", "h2h_bias")]


def ref_step(kind, x, states, w, activation="tanh"):
    """One step in NumPy (float64), MXNet's formulas and gate orders."""
    wx, wh, bx, bh = w
    h = states[0]
    gx = x @ wx.T + bx
    gh = h @ wh.T + bh
    if kind == "rnn":
        out = numpy.tanh(gx + gh) if activation == "tanh" else numpy.maximum(gx + gh, 0)
        return out, [out]
    if kind == "lstm":
        i, f, g, o = numpy.split(gx + gh, 4, axis=1)
        c = sigmoid(f) * states[1] + sigmoid(i) * numpy.tanh(g)
        out = sigmoid(o) * numpy.tanh(c)
        return out, [out, c]
    xr, xz, xn = numpy.split(gx, 3, axis=1)
    hr, hz, hn = numpy.split(gh, 3, axis=1)
    r, z = sigmoid(xr + hr), sigmoid(xz + hz)
    n = numpy.tanh(xn + r * hn)
    out = (1 - z) * n + z * h
    return out, [out]


CELLS = [("rnn", lambda: rnn.RNNCell(4, prefix="c_"), 1),
         ("rnn_relu", lambda: rnn.RNNCell(4, activation="relu", prefix="c_"), 1),
         ("lstm", lambda: rnn.LSTMCell(4, prefix="c_"), 2),
         ("gru", lambda: rnn.GRUCell(4, prefix="c_"), 1)]


@pytest.mark.parametrize("kind,factory,n_states", CELLS)
def test_step_matches_numpy_formulas(kind, factory, n_states):
    rng = numpy.random.RandomState(0)
    cell = factory()
    cell.initialize()
    x = rng.standard_normal((3, 5))
    states = [rng.standard_normal((3, 4)) for _ in range(n_states)]
    cell(nd.array(x), [nd.array(s) for s in states])
    randomize(cell, rng)
    out, new = cell(nd.array(x), [nd.array(s) for s in states])
    ref_out, ref_new = ref_step(kind.split("_")[0], x, states, weights(cell),
                                "relu" if kind == "rnn_relu" else "tanh")
    numpy.testing.assert_allclose(out.asnumpy(), ref_out, rtol=1e-5, atol=1e-6)
    assert len(new) == n_states
    for a, b in zip(new, ref_new):
        numpy.testing.assert_allclose(a.asnumpy(), b, rtol=1e-5, atol=1e-6)


def test_names_shapes_and_deferred_input_size():
    with NameManager():
        cells = [rnn.RNNCell(3), rnn.LSTMCell(3), rnn.GRUCell(3), rnn.RNNCell(3)]
    assert [c.prefix for c in cells] == ["rnn0_", "lstm0_", "gru0_", "rnn1_"]
    lstm = cells[1]
    assert list(lstm.collect_params().keys()) == [
        "lstm0_i2h_weight", "lstm0_h2h_weight", "lstm0_i2h_bias", "lstm0_h2h_bias"]
    assert lstm.i2h_weight.shape == (12, 0)
    assert repr(lstm) == "LSTMCell(None -> 12)"
    lstm.initialize()
    lstm(nd.ones((2, 7)), lstm.begin_state(2))
    assert lstm.i2h_weight.shape == (12, 7)
    assert not lstm.i2h_bias.data().asnumpy().any()
    assert rnn.GRUCell(2, input_size=5).i2h_weight.shape == (6, 5)
    assert repr(rnn.RNNCell(2, activation="relu", input_size=5)) == "RNNCell(5 -> 2, relu)"


def test_state_info_and_begin_state():
    cell = rnn.LSTMCell(3, prefix="lstm_")
    assert cell.state_info(2) == [{"shape": (2, 3), "__layout__": "NC"}] * 2
    states = cell.begin_state(2)
    assert [s.shape for s in states] == [(2, 3), (2, 3)]
    states = cell.begin_state(batch_size=4, func=nd.ones, dtype="float64")
    assert all(s.dtype == numpy.float64 and (s.asnumpy() == 1).all() for s in states)
    assert cell._init_counter == 3
    cell.reset()
    assert (cell._init_counter, cell._counter) == (-1, -1)


def test_callable_activation():
    cell = rnn.RNNCell(3, activation=lambda x: x * 2, input_size=2)
    cell.initialize("ones")
    out, _ = cell(nd.ones((1, 2)), [nd.zeros((1, 3))])
    assert out.asnumpy().tolist() == [[4.0, 4.0, 4.0]]  # biases are zero
    cell = rnn.RNNCell(3, activation="softrelu", input_size=2)
    cell.initialize("zeros")
    out, _ = cell(nd.ones((1, 2)), [nd.zeros((1, 3))])
    numpy.testing.assert_allclose(out.asnumpy(), numpy.log(2.0), rtol=1e-6)


def test_gluon_block_activations():
    x, h = nd.array([[-1.0, -1.0]]), [nd.zeros((1, 3))]
    cell = rnn.RNNCell(3, activation=nn.LeakyReLU(0.1), input_size=2)
    cell.initialize("ones")
    numpy.testing.assert_allclose(cell(x, h)[0].asnumpy(), -0.2, rtol=1e-6)
    cell = rnn.RNNCell(3, activation=nn.Activation("sigmoid"), input_size=2)
    cell.initialize("ones")
    numpy.testing.assert_allclose(cell(x, h)[0].asnumpy(), sigmoid(-2.0), rtol=1e-6)


# --------------------------------------------------------------------------- unroll
def _unroll_reference(cell, kind, x_tnc, states):
    outs = []
    w = weights(cell)
    for t in range(x_tnc.shape[0]):
        out, states = ref_step(kind, x_tnc[t], states, w)
        outs.append(out)
    return numpy.stack(outs), states


@pytest.mark.parametrize("layout", ["NTC", "TNC"])
@pytest.mark.parametrize("merge", [True, False, None])
def test_unroll_layouts_and_merge(layout, merge):
    rng = numpy.random.RandomState(1)
    cell = rnn.GRUCell(3, input_size=2)
    cell.initialize()
    randomize(cell, rng)
    x_tnc = rng.standard_normal((5, 4, 2))
    x = x_tnc if layout == "TNC" else x_tnc.swapaxes(0, 1)
    outputs, states = cell.unroll(5, nd.array(x), layout=layout, merge_outputs=merge)
    ref, ref_states = _unroll_reference(cell, "gru", x_tnc, [numpy.zeros((4, 3))])
    if merge:
        want = ref if layout == "TNC" else ref.swapaxes(0, 1)
        numpy.testing.assert_allclose(outputs.asnumpy(), want, rtol=1e-5, atol=1e-6)
    else:
        assert isinstance(outputs, list) and len(outputs) == 5
        for t in range(5):
            numpy.testing.assert_allclose(outputs[t].asnumpy(), ref[t], rtol=1e-5, atol=1e-6)
    numpy.testing.assert_allclose(states[0].asnumpy(), ref_states[0], rtol=1e-5, atol=1e-6)


def test_unroll_list_inputs_and_begin_state():
    rng = numpy.random.RandomState(2)
    cell = rnn.LSTMCell(3, input_size=2)
    cell.initialize()
    steps = [nd.array(rng.standard_normal((4, 2))) for _ in range(3)]
    begin = [nd.array(rng.standard_normal((4, 3))) for _ in range(2)]
    out_list, s1 = cell.unroll(3, steps, begin_state=begin)
    merged, s2 = cell.unroll(3, nd.stack(*steps, axis=1), begin_state=begin,
                             merge_outputs=True)
    numpy.testing.assert_allclose(nd.stack(*out_list, axis=1).asnumpy(), merged.asnumpy(),
                                  rtol=1e-6)
    for a, b in zip(s1, s2):
        numpy.testing.assert_allclose(a.asnumpy(), b.asnumpy(), rtol=1e-6)
    with pytest.raises(ValueError, match="length"):
        cell.unroll(4, steps)
    with pytest.raises(ValueError, match="length"):
        cell.unroll(4, nd.ones((4, 3, 2)))
    with pytest.raises(ValueError, match="inputs=None"):
        cell.unroll(3, None)


def test_unroll_valid_length():
    rng = numpy.random.RandomState(3)
    cell = rnn.RNNCell(3, input_size=2)
    cell.initialize()
    randomize(cell, rng)
    x = rng.standard_normal((3, 5, 2))  # NTC
    lengths = [5, 2, 0]
    outputs, states = cell.unroll(5, nd.array(x), valid_length=nd.array(lengths))
    assert isinstance(outputs, nd.NDArray) and outputs.shape == (3, 5, 3)  # merged
    ref, _ = _unroll_reference(cell, "rnn", x.swapaxes(0, 1), [numpy.zeros((3, 3))])
    ref = ref.swapaxes(0, 1)
    for b, n in enumerate(lengths):
        numpy.testing.assert_allclose(outputs.asnumpy()[b, :n], ref[b, :n], rtol=1e-5,
                                      atol=1e-6)
        assert not outputs.asnumpy()[b, n:].any()
        if n:
            numpy.testing.assert_allclose(states[0].asnumpy()[b], ref[b, n - 1], rtol=1e-5,
                                          atol=1e-6)
    out_list, _ = cell.unroll(5, nd.array(x), valid_length=nd.array(lengths),
                              merge_outputs=False)
    assert len(out_list) == 5 and out_list[1].shape == (3, 3)


# --------------------------------------------------------------------------- stacks
@pytest.mark.parametrize("cls", [rnn.SequentialRNNCell, rnn.HybridSequentialRNNCell])
def test_sequential_step_equals_unroll(cls):
    rng = numpy.random.RandomState(4)
    stack = cls(prefix="stack_")
    with stack.name_scope():
        stack.add(rnn.LSTMCell(4))
        stack.add(rnn.GRUCell(3))
    assert next(iter(stack.collect_params().keys())) == "stack_lstm0_i2h_weight"
    assert len(stack) == 2 and isinstance(stack[1], rnn.GRUCell)
    stack.initialize()
    x = nd.array(rng.standard_normal((2, 4, 5)))
    outputs, states = stack.unroll(4, x, merge_outputs=True)
    assert [s.shape for s in states] == [(2, 4), (2, 4), (2, 3)]
    st = stack.begin_state(batch_size=2)
    steps = []
    for t in range(4):
        out, st = stack(x[:, t], st)
        steps.append(out)
    numpy.testing.assert_allclose(nd.stack(*steps, axis=1).asnumpy(), outputs.asnumpy(),
                                  rtol=1e-6)
    for a, b in zip(st, states):
        numpy.testing.assert_allclose(a.asnumpy(), b.asnumpy(), rtol=1e-6)
    assert "LSTMCell" in repr(stack)


def test_bidirectional_cell():
    rng = numpy.random.RandomState(5)
    bi = rnn.BidirectionalCell(rnn.GRUCell(3, prefix="l_"), rnn.GRUCell(3, prefix="r_"))
    assert sorted(bi.collect_params().keys()) == sorted(
        f"{d}_{g}_{t}" for d in "lr" for g in ("i2h", "h2h") for t in ("weight", "bias"))
    bi.initialize()
    x = nd.array(rng.standard_normal((4, 2, 5)))  # TNC
    with pytest.raises(NotImplementedError):
        bi(x[0], bi.begin_state(batch_size=2))
    out, states = bi.unroll(4, x, layout="TNC", merge_outputs=True)
    assert out.shape == (4, 2, 6) and len(states) == 2
    l_cell, r_cell = bi._children["l_cell"], bi._children["r_cell"]
    l_out, _ = l_cell.unroll(4, x, layout="TNC", merge_outputs=True)
    r_out, _ = r_cell.unroll(4, x[::-1], layout="TNC", merge_outputs=True)
    numpy.testing.assert_allclose(out.asnumpy()[:, :, :3], l_out.asnumpy(), rtol=1e-6)
    numpy.testing.assert_allclose(out.asnumpy()[:, :, 3:], r_out.asnumpy()[::-1], rtol=1e-6)
    outs, _ = bi.unroll(4, x, layout="TNC")
    assert isinstance(outs, list) and outs[0].shape == (2, 6)
    stack = rnn.SequentialRNNCell()
    stack.add(bi)
    with pytest.raises(NotImplementedError):
        stack(x[0], stack.begin_state(batch_size=2))


def test_bidirectional_valid_length_merge_none_ntc():
    bi = rnn.BidirectionalCell(rnn.RNNCell(2, prefix="l_"), rnn.RNNCell(2, prefix="r_"))
    bi.initialize()
    x = nd.ones((3, 4, 2))  # NTC, batch 3 != time 4
    out, _ = bi.unroll(4, x, valid_length=nd.array([4, 1, 2]))
    assert out.shape == (3, 4, 4)
    assert not out.asnumpy()[1, 1:].any()


# --------------------------------------------------------------------------- modifiers
def test_dropout_cell_only_in_training():
    cell = rnn.DropoutCell(0.5)
    x = nd.ones((20, 30))
    out, _states = cell(x, [])
    numpy.testing.assert_array_equal(out.asnumpy(), x.asnumpy())
    with autograd.train_mode():
        out, _ = cell(x, [])
    values = set(numpy.unique(out.asnumpy()).tolist())
    assert values == {0.0, 2.0}
    with autograd.train_mode():
        merged, _ = cell.unroll(30, nd.ones((20, 30, 4)), merge_outputs=True)
    assert merged.shape == (20, 30, 4) and (merged.asnumpy() == 0).any()
    steps, _ = cell.unroll(3, [nd.ones((2, 4))] * 3)
    assert len(steps) == 3
    with pytest.raises(TypeError, match="rate"):
        rnn.DropoutCell("0.5")
    assert repr(cell) == "DropoutCell(rate=0.5, axes=())"


def test_zoneout_cell():
    rng = numpy.random.RandomState(6)
    base = rnn.LSTMCell(4, prefix="lstm_")
    cell = rnn.ZoneoutCell(base, zoneout_outputs=0.5, zoneout_states=0.5)
    assert cell.prefix == "lstm_zoneout" and cell.params is base.params
    assert list(cell.collect_params().keys()) == list(base.collect_params().keys())
    cell.initialize()
    x = nd.array(rng.standard_normal((3, 6, 2)))
    out, _states = cell.unroll(6, x, merge_outputs=True)
    base._modified = False
    ref, _ref_states = base.unroll(6, x, merge_outputs=True)
    base._modified = True
    numpy.testing.assert_array_equal(out.asnumpy(), ref.asnumpy())  # inference: no zoneout
    with autograd.train_mode():
        outs, _ = cell.unroll(6, x, merge_outputs=False)
    # Each unit is either the new output or the previous (zoneout) one.
    prev = numpy.zeros((3, 4))
    kept = 0
    for o in outs:
        o = o.asnumpy()
        kept += numpy.sum(o == prev)
        prev = o
    assert kept > 0
    with pytest.raises(ValueError, match="modifier"):
        base.begin_state(2)
    with pytest.raises(ValueError, match="already modified"):
        rnn.ZoneoutCell(base)
    with pytest.raises(ValueError, match="Bidirectional"):
        rnn.ZoneoutCell(rnn.BidirectionalCell(rnn.GRUCell(2), rnn.GRUCell(2)))
    assert repr(cell).startswith("ZoneoutCell(p_out=0.5, p_state=0.5, LSTMCell")


def test_residual_cell():
    rng = numpy.random.RandomState(7)
    base = rnn.GRUCell(3, prefix="gru_")
    cell = rnn.ResidualCell(base)
    cell.initialize()
    x = nd.array(rng.standard_normal((2, 5, 3)))
    out, _states = cell.unroll(5, x, merge_outputs=True)
    base._modified = False
    ref, _ = base.unroll(5, x, merge_outputs=True)
    base._modified = True
    numpy.testing.assert_allclose(out.asnumpy(), ref.asnumpy() + x.asnumpy(), rtol=1e-6)
    step, _ = cell(x[:, 0], cell.begin_state(batch_size=2))
    numpy.testing.assert_allclose(step.asnumpy(), out.asnumpy()[:, 0], rtol=1e-6)
    lengths = nd.array([5, 2])
    masked, _ = cell.unroll(5, x, valid_length=lengths, merge_outputs=False)
    assert not masked[3].asnumpy()[1].any()
    with pytest.raises(TypeError, match="hybrid recurrent cell"):
        rnn.ResidualCell(rnn.SequentialRNNCell())


# --------------------------------------------------------------------------- hybridize, gradients
def test_hybridize_gives_identical_results():
    rng = numpy.random.RandomState(8)
    stack = rnn.HybridSequentialRNNCell()
    with stack.name_scope():
        stack.add(rnn.LSTMCell(4))
        stack.add(rnn.ResidualCell(rnn.GRUCell(4)))
    stack.initialize()
    x = nd.array(rng.standard_normal((2, 5, 3)))
    out, states = stack.unroll(5, x, merge_outputs=True)
    stack.hybridize()
    out_h, states_h = stack.unroll(5, x, merge_outputs=True)
    numpy.testing.assert_array_equal(out.asnumpy(), out_h.asnumpy())
    for a, b in zip(states, states_h):
        numpy.testing.assert_array_equal(a.asnumpy(), b.asnumpy())


def test_gradient_through_unrolled_cell_matches_finite_differences():
    rng = numpy.random.RandomState(9)
    cell = rnn.LSTMCell(2, input_size=2)
    cell.initialize()
    cell.collect_params().setattr("dtype", "float64")
    randomize(cell, rng)
    x = nd.array(rng.standard_normal((2, 3, 2)), dtype="float64")
    head = nd.array(rng.standard_normal((2, 3, 2)), dtype="float64")

    def loss():
        out, _ = cell.unroll(3, x, merge_outputs=True)
        return (out * head).sum()

    with autograd.record():
        value = loss()
    value.backward()
    w = cell.h2h_weight.data()
    grad = cell.h2h_weight.grad().asnumpy()
    eps = 1e-6
    for idx in [(0, 0), (3, 1), (7, 0)]:
        a = w.asnumpy()
        a[idx] += eps
        w[...] = nd.array(a, dtype="float64")
        up = loss().asscalar()
        a[idx] -= 2 * eps
        w[...] = nd.array(a, dtype="float64")
        down = loss().asscalar()
        a[idx] += eps
        w[...] = nd.array(a, dtype="float64")
        assert grad[idx] == pytest.approx((up - down) / (2 * eps), rel=1e-5, abs=1e-8)
