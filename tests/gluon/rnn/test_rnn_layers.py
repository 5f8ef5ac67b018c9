"""gluon.rnn fused layers (RNN, LSTM, GRU): parameter names and shapes, outputs and
states for each layout, bidirectional and multi-layer; equality with unrolled cells
holding the same weights; gradients against finite differences; saving and loading;
dropout in training only; hybridize."""
import numpy
import pytest

import core
from core import autograd, nd
from gluon import rnn
from gluon.block import NameManager

MODES = ["rnn_relu", "rnn_tanh", "lstm", "gru"]
GATES = {"rnn_relu": 1, "rnn_tanh": 1, "lstm": 4, "gru": 3}


def make_layer(mode, hidden, **kwargs):
    if mode.startswith("rnn"):
        return rnn.RNN(hidden, activation=mode[4:], **kwargs)
    return {"lstm": rnn.LSTM, "gru": rnn.GRU}[mode](hidden, **kwargs)


def make_cell(mode, hidden, **kwargs):
    if mode.startswith("rnn"):
        return rnn.RNNCell(hidden, activation=mode[4:], **kwargs)
    return {"lstm": rnn.LSTMCell, "gru": rnn.GRUCell}[mode](hidden, **kwargs)


def randomize(block, rng, scale=0.5):
    """Fill every parameter with uniform values in [-scale, scale]."""
    for p in block.collect_params().values():
        p.set_data(nd.array(rng.uniform(-scale, scale, p.shape), dtype=p.dtype))


def seq(rng, layout, T, N, C, dtype="float32"):
    shape = (T, N, C) if layout == "TNC" else (N, T, C)
    return nd.array(rng.standard_normal(shape), dtype=dtype)


# --------------------------------------------------------------------------- names
@pytest.mark.parametrize("cls,gates", [(rnn.RNN, 1), (rnn.LSTM, 4), (rnn.GRU, 3)])
def test_parameter_names_and_shapes(cls, gates):
    with NameManager():
        layer = cls(5, num_layers=2, bidirectional=True)
    name = cls.__name__.lower()
    expected = [f"{name}0_{d}{i}_{g}_{t}" for i in range(2) for d in "lr"
                for g, t in (("i2h", "weight"), ("h2h", "weight"), ("i2h", "bias"),
                             ("h2h", "bias"))]
    assert list(layer.collect_params().keys()) == expected
    params = layer.collect_params()
    assert params[f"{name}0_l0_i2h_weight"].shape == (gates * 5, 0)  # deferred
    assert params[f"{name}0_l1_i2h_weight"].shape == (gates * 5, 10)
    assert params[f"{name}0_r0_h2h_weight"].shape == (gates * 5, 5)
    assert params[f"{name}0_r1_h2h_bias"].shape == (gates * 5,)
    layer.initialize()
    layer(nd.ones((3, 2, 7)))
    assert params[f"{name}0_l0_i2h_weight"].shape == (gates * 5, 7)
    assert params[f"{name}0_r0_i2h_weight"].shape == (gates * 5, 7)
    # Biases default to zeros; weights use the global initializer.
    assert not params[f"{name}0_l0_i2h_bias"].data().asnumpy().any()
    assert params[f"{name}0_l0_i2h_weight"].data().asnumpy().any()


def test_defaults_and_repr():
    layer = rnn.RNN(10)
    assert (layer._mode, layer._layout, layer._num_layers, layer._dir, layer._dropout) == \
        ("rnn_relu", "TNC", 1, 1, 0)
    assert repr(layer) == "RNN(None -> 10, TNC)"
    assert repr(rnn.LSTM(10, 2, layout="NTC", dropout=0.5, bidirectional=True,
                         input_size=3)) == \
        "LSTM(3 -> 10, NTC, num_layers=2, dropout=0.5, bidirectional)"
    assert rnn.GRU(4).l0_i2h_bias.init == "zeros"


def test_initializers_are_used():
    layer = rnn.GRU(3, input_size=2, i2h_weight_initializer="ones",
                    h2h_weight_initializer="zeros", i2h_bias_initializer="ones",
                    h2h_bias_initializer=core.initializer.Constant(2.0))
    layer.initialize()
    assert (layer.l0_i2h_weight.data().asnumpy() == 1).all()
    assert (layer.l0_h2h_weight.data().asnumpy() == 0).all()
    assert (layer.l0_i2h_bias.data().asnumpy() == 1).all()
    assert (layer.l0_h2h_bias.data().asnumpy() == 2).all()


def test_invalid_arguments():
    with pytest.raises(ValueError, match="layout"):
        rnn.LSTM(3, layout="NCT")
    with pytest.raises(ValueError, match="activation"):
        rnn.RNN(3, activation="sigmoid")
    with pytest.raises(ValueError, match="projection_size must be a positive integer"):
        rnn.LSTM(3, projection_size=2.5)
    with pytest.raises(ValueError, match="state_clip"):
        rnn.LSTM(3, state_clip_min=-1, state_clip_max=1)
    with pytest.raises(ValueError, match="dropout"):
        rnn.GRU(3, dropout=1.0)


# --------------------------------------------------------------------------- shapes
@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("layout", ["TNC", "NTC"])
@pytest.mark.parametrize("bidirectional", [False, True])
@pytest.mark.parametrize("num_layers", [1, 2])
def test_output_and_state_shapes(mode, layout, bidirectional, num_layers):
    T, N, C, H = 4, 3, 5, 6
    D = 2 if bidirectional else 1
    layer = make_layer(mode, H, num_layers=num_layers, layout=layout,
                       bidirectional=bidirectional)
    layer.initialize()
    x = nd.ones((T, N, C) if layout == "TNC" else (N, T, C))
    out_shape = (T, N, D * H) if layout == "TNC" else (N, T, D * H)
    out = layer(x)
    assert isinstance(out, core.ndarray.NDArray) and out.shape == out_shape
    states = layer.begin_state(N)
    assert len(states) == (2 if mode == "lstm" else 1)
    assert all(s.shape == (num_layers * D, N, H) for s in states)
    out2, new_states = layer(x, states)
    assert out2.shape == out_shape
    assert isinstance(new_states, list)
    assert [s.shape for s in new_states] == [s.shape for s in states]
    numpy.testing.assert_array_equal(out.asnumpy(), out2.asnumpy())


def test_single_state_array_and_wrong_states():
    layer = rnn.GRU(4, input_size=3)
    layer.initialize()
    x = nd.ones((5, 2, 3))
    out, states = layer(x, nd.zeros((1, 2, 4)))  # one array, not a list
    assert out.shape == (5, 2, 4) and states[0].shape == (1, 2, 4)
    with pytest.raises(ValueError, match="Invalid recurrent state shape"):
        layer(x, nd.zeros((1, 3, 4)))
    lstm = rnn.LSTM(4, input_size=3)
    lstm.initialize()
    with pytest.raises(ValueError, match="state"):
        lstm(x, [nd.zeros((1, 2, 4))])


def test_begin_state_func_and_kwargs():
    layer = rnn.LSTM(4, num_layers=2, prefix="lstm_")
    states = layer.begin_state(3, func=nd.ones, dtype="float64")
    assert [s.shape for s in states] == [(2, 3, 4), (2, 3, 4)]
    assert all(s.dtype == numpy.float64 and (s.asnumpy() == 1).all() for s in states)
    states = layer.begin_state(2, func=nd.random.uniform, low=2, high=3)
    assert all(s.shape == (2, 2, 4) and (s.asnumpy() >= 2).all() for s in states)
    states = layer.begin_state(1, ctx=core.cpu(1))
    assert states[0].context == core.cpu(1)


def test_default_states_follow_input_dtype_and_context():
    layer = rnn.GRU(3, dtype="float64")
    layer.initialize(ctx=core.cpu(1))
    x = nd.ones((2, 4, 5), dtype="float64", ctx=core.cpu(1))
    out = layer(x)
    assert out.dtype == numpy.float64 and out.context == core.cpu(1)


# --------------------------------------------------------------------------- fused == cells
def _cells_like(layer, mode, H, num_layers, bidirectional):
    """An independent stack of cells (no shared parameters) with the layer's weights."""
    stack = rnn.HybridSequentialRNNCell(prefix="stack_")
    with stack.name_scope():
        for i in range(num_layers):
            if bidirectional:
                stack.add(rnn.BidirectionalCell(make_cell(mode, H, prefix=f"l{i}_"),
                                                make_cell(mode, H, prefix=f"r{i}_")))
            else:
                stack.add(make_cell(mode, H, prefix=f"l{i}_"))
    stack.initialize()
    src = layer.collect_params()
    for name, p in stack.collect_params().items():
        p.set_data(src[layer.prefix + name[len("stack_"):]].data())
    return stack


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("layout", ["TNC", "NTC"])
@pytest.mark.parametrize("bidirectional", [False, True])
def test_fused_layer_equals_unrolled_cells(mode, layout, bidirectional):
    rng = numpy.random.RandomState(0)
    T, N, C, H, L = 5, 3, 4, 3, 2
    D = 2 if bidirectional else 1
    layer = make_layer(mode, H, num_layers=L, layout=layout, bidirectional=bidirectional)
    layer.initialize()
    x = seq(rng, layout, T, N, C)
    layer(x)
    randomize(layer, rng)
    begin = [nd.array(rng.uniform(-1, 1, s.shape)) for s in layer.begin_state(N)]
    out, states = layer(x, begin)

    stack = _cells_like(layer, mode, H, L, bidirectional)
    # The cells' states: per layer and direction [h] or [h, c].
    lstm = mode == "lstm"
    cell_begin = []
    for k in range(L * D):
        cell_begin += [begin[0][k], begin[1][k]] if lstm else [begin[0][k]]
    cout, cstates = stack.unroll(T, x, begin_state=cell_begin, layout=layout,
                                 merge_outputs=True)
    numpy.testing.assert_allclose(cout.asnumpy(), out.asnumpy(), rtol=1e-5, atol=1e-5)
    per = 2 if lstm else 1
    for k in range(L * D):
        numpy.testing.assert_allclose(cstates[per * k].asnumpy(), states[0][k].asnumpy(),
                                      rtol=1e-5, atol=1e-5)
        if lstm:
            numpy.testing.assert_allclose(cstates[per * k + 1].asnumpy(),
                                          states[1][k].asnumpy(), rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("mode", MODES)
def test_sequence_length_equals_cells_with_valid_length(mode):
    rng = numpy.random.RandomState(1)
    T, N, C, H = 5, 3, 2, 3
    layer = make_layer(mode, H, num_layers=2, bidirectional=True, layout="NTC",
                       use_sequence_length=True)
    layer.initialize()
    x = seq(rng, "NTC", T, N, C)
    lengths = nd.array([5, 2, 3])
    layer(x, sequence_length=lengths)
    randomize(layer, rng)
    out, states = layer(x, layer.begin_state(N), sequence_length=lengths)
    assert not out.asnumpy()[1, 2:].any()  # padded outputs are zero
    stack = layer._unfuse()  # shares the layer's parameters
    cout, cstates = stack.unroll(T, x, layout="NTC", merge_outputs=True,
                                 valid_length=lengths)
    numpy.testing.assert_allclose(cout.asnumpy(), out.asnumpy(), rtol=1e-5, atol=1e-5)
    per = 2 if mode == "lstm" else 1
    for k in range(4):
        numpy.testing.assert_allclose(cstates[per * k].asnumpy(), states[0][k].asnumpy(),
                                      rtol=1e-5, atol=1e-5)
    with pytest.raises(ValueError, match="sequence_length"):
        layer(x)


def test_unfuse_shares_parameters_and_structure():
    layer = rnn.LSTM(3, num_layers=2, dropout=0.3, bidirectional=True, prefix="lstm_")
    stack = layer._unfuse()
    assert isinstance(stack, rnn.HybridSequentialRNNCell) and len(stack) == 3
    assert isinstance(stack[0], rnn.BidirectionalCell)
    assert isinstance(stack[1], rnn.DropoutCell)
    l0 = stack[0]._children["l_cell"]
    assert l0.i2h_weight is layer.l0_i2h_weight
    assert stack[2]._children["r_cell"].h2h_bias is layer.r1_h2h_bias


# --------------------------------------------------------------------------- gradients
def _numeric_grad(f, arr, idx, eps=1e-6):
    a = arr.asnumpy()
    old = a[idx]
    a[idx] = old + eps
    arr[...] = nd.array(a, dtype=arr.dtype)
    up = f()
    a[idx] = old - eps
    arr[...] = nd.array(a, dtype=arr.dtype)
    down = f()
    a[idx] = old
    arr[...] = nd.array(a, dtype=arr.dtype)
    return (up - down) / (2 * eps)


@pytest.mark.parametrize("mode", ["lstm", "gru", "rnn_tanh"])
def test_gradients_match_finite_differences(mode):
    rng = numpy.random.RandomState(2)
    T, N, C, H = 3, 2, 2, 2
    layer = make_layer(mode, H, num_layers=2, bidirectional=True, dtype="float64")
    layer.initialize()
    x = seq(rng, "TNC", T, N, C, "float64")
    layer(x)
    randomize(layer, rng)
    begin = [nd.array(rng.uniform(-1, 1, s.shape), dtype="float64")
             for s in layer.begin_state(N)]
    head = nd.array(rng.standard_normal((T, N, 2 * H)), dtype="float64")
    heads_h = nd.array(rng.standard_normal(begin[0].shape), dtype="float64")

    def loss():
        out, states = layer(x, begin)
        return (out * head).sum() + (states[0] * heads_h).sum() + states[-1].sum()

    x.attach_grad()
    for b in begin:
        b.attach_grad()
    with autograd.record():
        value = loss()
    value.backward()

    def f():
        return loss().asscalar()

    checks = [(x, x.grad)] + [(b, b.grad) for b in begin]
    for name in ("l0_i2h_weight", "r0_h2h_weight", "l1_i2h_weight", "r1_h2h_bias",
                 "l0_i2h_bias"):
        p = getattr(layer, name)
        checks.append((p.data(), p.grad()))
    for arr, grad in checks:
        for _ in range(3):
            idx = tuple(rng.randint(0, s) for s in arr.shape)
            numeric = _numeric_grad(f, arr, idx)
            assert grad.asnumpy()[idx] == pytest.approx(numeric, rel=1e-5, abs=1e-7)


def test_parameter_gradients_equal_cells():
    rng = numpy.random.RandomState(3)
    layer = rnn.GRU(3, num_layers=2, layout="NTC", dtype="float64")
    layer.initialize()
    x = seq(rng, "NTC", 4, 2, 3, "float64")
    layer(x)
    randomize(layer, rng)
    with autograd.record():
        out = layer(x)
        (out * out).sum().backward()
    fused = {k: v.grad().asnumpy().copy() for k, v in layer.collect_params().items()}
    layer.collect_params().zero_grad()
    stack = layer._unfuse()
    with autograd.record():
        cout, _ = stack.unroll(4, x, layout="NTC", merge_outputs=True)
        (cout * cout).sum().backward()
    for k, v in layer.collect_params().items():
        numpy.testing.assert_allclose(v.grad().asnumpy(), fused[k], rtol=1e-9, atol=1e-12)


# --------------------------------------------------------------------------- save / load
@pytest.mark.parametrize("bidirectional", [False, True])
def test_save_load_round_trip(tmp_path, bidirectional):
    rng = numpy.random.RandomState(4)
    layer = rnn.LSTM(3, num_layers=2, bidirectional=bidirectional)
    layer.initialize()
    x = seq(rng, "TNC", 4, 2, 5)
    expected = layer(x).asnumpy()
    names = set(layer._collect_params_with_prefix())
    if bidirectional:
        assert "_unfused.0.l_cell.i2h_weight" in names
        assert "_unfused.1.r_cell.h2h_bias" in names
    else:
        assert names == {f"_unfused.{i}.{g}_{t}" for i in range(2) for g in ("i2h", "h2h")
                         for t in ("weight", "bias")}
    path = str(tmp_path / "lstm.params")
    layer.save_parameters(path)
    assert set(core.serialization.load(path)) == names
    other = rnn.LSTM(3, num_layers=2, bidirectional=bidirectional)  # deferred input size
    other.load_parameters(path)
    assert other.l0_i2h_weight.shape == (12, 5)
    numpy.testing.assert_array_equal(other(x).asnumpy(), expected)
    # The legacy format (full names minus the prefix) loads too.
    legacy = str(tmp_path / "legacy.params")
    layer.collect_params().save(legacy, strip_prefix=layer.prefix)
    third = rnn.LSTM(3, num_layers=2, bidirectional=bidirectional)
    third.load_parameters(legacy)
    numpy.testing.assert_array_equal(third(x).asnumpy(), expected)


def test_share_parameters_by_structural_name():
    layer = rnn.GRU(3, bidirectional=True, input_size=2)
    layer.initialize()
    other = rnn.GRU(3, bidirectional=True, input_size=2)
    other.share_parameters(layer._collect_params_with_prefix())
    assert other.r0_h2h_weight is layer.r0_h2h_weight
    x = nd.ones((3, 2, 2))
    numpy.testing.assert_array_equal(other(x).asnumpy(), layer(x).asnumpy())


# --------------------------------------------------------------------------- modes
@pytest.mark.parametrize("mode", MODES)
def test_dropout_only_in_training(mode):
    rng = numpy.random.RandomState(5)
    layer = make_layer(mode, 8, num_layers=3, dropout=0.5, prefix="net_")
    plain = make_layer(mode, 8, num_layers=3, prefix="net_", params=layer.collect_params())
    layer.initialize()
    x = seq(rng, "TNC", 4, 3, 5)
    expected = plain(x).asnumpy()
    numpy.testing.assert_array_equal(layer(x).asnumpy(), expected)  # inference
    with autograd.predict_mode():
        numpy.testing.assert_array_equal(layer(x).asnumpy(), expected)
    with autograd.train_mode():
        a = layer(x).asnumpy()
        b = layer(x).asnumpy()
    assert not numpy.allclose(a, expected) and not numpy.allclose(a, b)
    with autograd.record():
        c = layer(x)
    assert not numpy.allclose(c.asnumpy(), expected)
    with autograd.record(train_mode=False):
        numpy.testing.assert_array_equal(layer(x).asnumpy(), expected)


@pytest.mark.parametrize("mode", MODES)
def test_hybridize_gives_identical_results(mode):
    rng = numpy.random.RandomState(6)
    layer = make_layer(mode, 4, num_layers=2, bidirectional=True, layout="NTC")
    layer.initialize()
    x = seq(rng, "NTC", 5, 2, 3)
    begin = layer.begin_state(2, func=nd.ones)
    out, states = layer(x, begin)
    plain = layer(x).asnumpy()
    layer.hybridize()
    out_h, states_h = layer(x, begin)
    numpy.testing.assert_array_equal(out.asnumpy(), out_h.asnumpy())
    for s, sh in zip(states, states_h):
        numpy.testing.assert_array_equal(s.asnumpy(), sh.asnumpy())
    numpy.testing.assert_array_equal(layer(x).asnumpy(), plain)


def test_cast_and_float64():
    layer = rnn.LSTM(3, input_size=2)
    layer.initialize()
    layer.cast("float64")
    assert layer.l0_i2h_weight.dtype == numpy.float64
    assert layer.begin_state(2)[0].dtype == numpy.float64
    out = layer(nd.ones((4, 2, 2), dtype="float64"))
    assert out.dtype == numpy.float64


def test_lazy_import_from_gluon():
    import gluon

    assert gluon.rnn.LSTM is rnn.LSTM
    assert {"RNN", "LSTM", "GRU", "RNNCell", "LSTMCell", "GRUCell", "SequentialRNNCell",
            "HybridSequentialRNNCell", "BidirectionalCell", "DropoutCell", "ResidualCell",
            "ZoneoutCell", "ModifierCell", "RecurrentCell",
            "HybridRecurrentCell"} <= set(rnn.__all__)
