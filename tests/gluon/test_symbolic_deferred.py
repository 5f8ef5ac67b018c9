"""MXNet 1.x's symbolic mode with deferred shapes: a Gluon block called on a shapeless
``sym.var`` composes a Symbol (``hybrid_forward`` with ``F = core.sym``); its parameters
are variables whose shapes are inferred when the data shapes are given
(``infer_shape``, ``simple_bind``, ``bind``). The same block still runs on NDArrays
afterwards, and its graph computes what the block computes."""
import numpy as np
import pytest

import core
from core import nd, sym
from gluon import nn, rnn
from gluon.model_zoo import vision

X2, X3, X4 = (2, 6), (4, 2, 3), (2, 3, 8, 8)


def _seq(*layers):
    net = nn.HybridSequential()
    net.add(*layers)
    return net


def _nested():
    inner = _seq(nn.Conv2D(4, 3, padding=1), nn.BatchNorm(), nn.Activation("relu"))
    return _seq(inner, nn.MaxPool2D(2), _seq(nn.Flatten(), nn.Dense(5), nn.LayerNorm()),
                nn.Dense(3))


CASES = [
    (lambda: nn.Dense(5), X2, "float32"),
    (lambda: nn.Dense(5, activation="relu", flatten=False), X3, "float32"),
    (lambda: nn.Conv2D(4, 3, padding=1, strides=2), X4, "float32"),
    (lambda: nn.Conv1D(3, 2), X3, "float32"),
    (lambda: nn.Conv2DTranspose(2, 3), X4, "float32"),
    (lambda: nn.BatchNorm(), X4, "float32"),
    (lambda: nn.LayerNorm(), X3, "float32"),
    (lambda: nn.Embedding(10, 4), (2, 5), "int32"),
    (lambda: nn.PReLU(), X2, "float32"),
    (lambda: rnn.RNN(5, num_layers=2), X3, "float32"),
    (lambda: rnn.LSTM(5, num_layers=2, bidirectional=True), X3, "float32"),
    (lambda: rnn.GRU(4, layout="NTC"), X3, "float32"),
    (_nested, X4, "float32"),
]
IDS = [f"{i}-{make().__class__.__name__}" for i, (make, _, _) in enumerate(CASES)]


def _input(shape, dtype):
    rng = np.random.default_rng(0)
    if dtype == "int32":
        return nd.array(rng.integers(0, 10, shape), dtype="int32")
    return nd.array(rng.standard_normal(shape), dtype="float32")


def _check(block, out, x, shape):
    """``out`` (composed before initialization) infers the parameters' shapes and
    computes what ``block`` computes on ``x`` once initialized."""
    arg_shapes, out_shapes, aux_shapes = out.infer_shape(data=shape)
    assert arg_shapes is not None, out.infer_shape_partial(data=shape)
    block.initialize()
    expected = block(x)  # the same block on NDArrays: deferred initialization completes
    params = block.collect_params()
    args, aux = out.list_arguments(), out.list_auxiliary_states()
    assert args[0] == "data" and set(args[1:]) | set(aux) <= set(params)
    assert out_shapes == [tuple(expected.shape)]
    for name, s in zip(args[1:] + aux, arg_shapes[1:] + aux_shapes):
        assert s == params[name].shape, name
    ex = out.simple_bind(core.cpu(), grad_req="null", data=shape,
                         type_dict={"data": x.dtype})
    for name in args[1:]:
        ex.arg_dict[name][:] = params[name].data()
    for name in aux:
        ex.aux_dict[name][:] = params[name].data()
    got = ex.forward(is_train=False, data=x)[0]
    np.testing.assert_allclose(got.asnumpy(), expected.asnumpy(), rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("make, shape, dtype", CASES, ids=IDS)
def test_block_on_a_shapeless_variable(make, shape, dtype):
    block = make()
    out = block(sym.var("data"))  # before initialize(): no shape is known yet
    assert isinstance(out, sym.Symbol)
    _check(block, out, _input(shape, dtype), shape)


def test_parameter_shapes_stay_unknown_until_bound():
    net = nn.Dense(5)
    out = net(sym.var("data"))
    assert net.weight.shape == (5, 0)
    arg, _, _ = out.infer_shape_partial()
    assert arg[1] == (5, 0)
    assert out.infer_shape() == (None, None, None)
    with pytest.raises(ValueError, match=net.weight.name):
        out.simple_bind(core.cpu())


def test_symbolic_call_names_nodes_under_the_block_prefix():
    net = _seq(nn.Dense(3), nn.Dense(2))
    out = net(sym.var("data"))
    names = [n for n in out.get_internals().list_outputs() if n.endswith("_output")]
    assert names == [f"{child.prefix}fwd_output" for child in net]  # MXNet 1.9's names


def test_shared_parameter_is_one_variable():
    dense = nn.Dense(4, in_units=4)
    net = _seq(dense, nn.Activation("tanh"), dense)
    out = net(sym.var("data"))
    assert out.list_arguments().count(dense.weight.name) == 1
    assert out.infer_shape(data=(2, 4))[1] == [(2, 4)]


def test_mixing_symbols_and_ndarrays_is_refused():
    class Add(nn.HybridBlock):
        def hybrid_forward(self, F, a, b):
            return a + b

    with pytest.raises(ValueError, match="all Symbols or all NDArrays"):
        Add()(sym.var("a"), nd.ones((2,)))


def test_forward_hooks_run_on_symbolic_calls():
    seen = []
    net = nn.Dense(3)
    net.register_forward_hook(lambda block, args, out: seen.append(type(out).__name__))
    net(sym.var("data"))
    assert seen == ["Symbol"]


def test_rnn_layer_with_given_states_returns_them():
    layer = rnn.LSTM(4)
    h, c = sym.var("h"), sym.var("c")
    out, states = layer(sym.var("data"), [h, c])
    g = sym.Group([out, *states])
    _, outs, _ = g.infer_shape(data=(5, 2, 3), h=(1, 2, 4), c=(1, 2, 4))
    assert outs == [(5, 2, 4), (1, 2, 4), (1, 2, 4)]


def test_model_zoo_net_on_a_shapeless_variable():
    net = vision.get_model("resnet18_v1", classes=7)
    out = net(sym.var("data"))
    shape = (1, 3, 32, 32)
    _check(net, out, _input(shape, "float32"), shape)


def test_export_after_a_symbolic_call(tmp_path):
    net = _seq(_seq(nn.Conv2D(4, 3), nn.BatchNorm()), nn.Flatten(), nn.Dense(3))
    net(sym.var("data"))
    net.initialize()
    net.hybridize()
    x = _input(X4, "float32")
    y = net(x)
    sym_file, params_file = net.export(str(tmp_path / "net"))
    from gluon import SymbolBlock

    back = SymbolBlock.imports(sym_file, ["data"], params_file)
    np.testing.assert_allclose(back(x).asnumpy(), y.asnumpy(), rtol=1e-5, atol=1e-6)


# --------------------------------------------------------------------------- unroll
def _cell(kind):
    if kind == "rnn":
        return rnn.RNNCell(4, prefix="c_")
    if kind == "lstm":
        return rnn.LSTMCell(4, prefix="c_")
    if kind == "gru":
        return rnn.GRUCell(4, prefix="c_")
    if kind == "sequential":
        s = rnn.SequentialRNNCell(prefix="s_")
        with s.name_scope():
            s.add(rnn.LSTMCell(4))
            s.add(rnn.DropoutCell(0.5))
            s.add(rnn.GRUCell(3))
        return s
    if kind == "hybrid_sequential":
        s = rnn.HybridSequentialRNNCell(prefix="s_")
        with s.name_scope():
            s.add(rnn.RNNCell(4))
            s.add(rnn.ResidualCell(rnn.GRUCell(4)))
        return s
    if kind == "bidirectional":
        return rnn.BidirectionalCell(rnn.LSTMCell(4, prefix="l_"), rnn.GRUCell(3, prefix="r_"))
    if kind == "residual":
        return rnn.ResidualCell(rnn.GRUCell(3, prefix="g_"))
    if kind == "zoneout":
        return rnn.ZoneoutCell(rnn.LSTMCell(4, prefix="z_"), 0.3, 0.3)
    return rnn.DropoutCell(0.4)


def _run_symbol(g, cell, shape, x, **extra):
    params = cell.collect_params()
    ex = g.simple_bind(core.cpu(), grad_req="null", data=shape,
                       **{k: v.shape for k, v in extra.items()})
    for n in g.list_arguments():
        if n in params:
            ex.arg_dict[n][:] = params[n].data()
    return ex.forward(is_train=False, data=x, **extra)


CELLS = ["rnn", "lstm", "gru", "sequential", "hybrid_sequential", "bidirectional",
         "residual", "zoneout", "dropout"]


@pytest.mark.parametrize("kind", CELLS)
@pytest.mark.parametrize("layout", ["NTC", "TNC"])
@pytest.mark.parametrize("merge", [True, False])
def test_unroll_on_a_symbol(kind, layout, merge):
    cell = _cell(kind)
    shape = (2, 5, 3) if layout == "NTC" else (5, 2, 3)
    outs, states = cell.unroll(5, sym.var("data"), layout=layout, merge_outputs=merge)
    assert isinstance(states, list)
    if merge:
        assert isinstance(outs, sym.Symbol) and len(outs) == 1
    else:
        assert isinstance(outs, list) and len(outs) == 5
    g = sym.Group(([outs] if merge else list(outs)) + list(states))
    assert g.infer_shape(data=shape)[0] is not None
    cell.initialize()
    x = _input(shape, "float32")
    eo, es = cell.unroll(5, x, layout=layout, merge_outputs=merge)
    expected = ([eo] if merge else list(eo)) + list(es)
    got = _run_symbol(g, cell, shape, x)
    assert len(got) == len(expected)
    for a, b in zip(got, expected):
        np.testing.assert_allclose(a.asnumpy(), b.asnumpy(), rtol=1e-5, atol=1e-6)


def test_unroll_symbol_steps_given_states_and_valid_length():
    cell = rnn.LSTMCell(4, prefix="c_")
    steps = [sym.var(f"x{t}") for t in range(3)]
    h, c = sym.var("h"), sym.var("c")
    outs, states = cell.unroll(3, steps, begin_state=[h, c], merge_outputs=True)
    _, out_shapes, _ = sym.Group([outs, *states]).infer_shape(
        x0=(2, 5), x1=(2, 5), x2=(2, 5), h=(2, 4), c=(2, 4))
    assert out_shapes == [(2, 3, 4), (2, 4), (2, 4)]
    gru = rnn.GRUCell(3, prefix="g_")
    outs, states = gru.unroll(4, sym.var("data"), layout="NTC", merge_outputs=True,
                              valid_length=sym.var("len"))
    gru.initialize()
    x = _input((2, 4, 5), "float32")
    length = nd.array([2, 4])
    eo, es = gru.unroll(4, x, layout="NTC", merge_outputs=True, valid_length=length)
    g = sym.Group([outs, *states])
    got = _run_symbol(g, gru, (2, 4, 5), x, len=length)
    for a, b in zip(got, [eo, *es]):
        np.testing.assert_allclose(a.asnumpy(), b.asnumpy(), rtol=1e-5, atol=1e-6)
    with pytest.raises(TypeError, match="grouped Symbol"):
        gru.unroll(2, sym.Group([sym.var("a"), sym.var("b")]))


def test_unrolled_cells_name_their_nodes_as_mxnet():
    steps = [sym.var(f"t{i}_data") for i in range(3)]
    for cell in (rnn.RNNCell(5, prefix="rnn_"), rnn.LSTMCell(5, prefix="rnn_"),
                 rnn.GRUCell(5, prefix="rnn_")):
        outputs, _ = cell.unroll(3, steps)
        assert sym.Group(outputs).list_outputs() == [f"rnn_t{i}_out_output" for i in range(3)]
    bi = rnn.BidirectionalCell(rnn.LSTMCell(4, prefix="l0_"), rnn.LSTMCell(4, prefix="r0_"),
                               output_prefix="bi_")
    outputs, _ = bi.unroll(3, steps)
    assert sym.Group(outputs).list_outputs() == ["bi_t0_output", "bi_t1_output", "bi_t2_output"]
    merged, _ = bi.unroll(3, steps, merge_outputs=True)
    assert merged.list_outputs() == ["bi_out_output"]


def test_empty_prefix_blocks_continue_the_parent_counters():
    class Act(nn.HybridBlock):
        def hybrid_forward(self, F, x):
            return F.Activation(x, act_type="relu")

    stage = nn.HybridSequential(prefix="stage1_")
    with stage.name_scope():
        stage.add(Act(prefix=""), Act(prefix=""))
    out = stage(sym.var("data"))
    names = out.get_internals().list_outputs()
    assert names == ["data", "stage1_activation0_output", "stage1_activation1_output"]


def test_symbol_block_on_symbols_composes():
    from gluon import SymbolBlock

    data = sym.var("data")
    inner = sym.FullyConnected(data, num_hidden=3, name="fc")
    block = SymbolBlock(inner, data)
    out = block(sym.relu(sym.var("x"), name="pre"))
    assert out.list_arguments() == ["x", "fc_weight", "fc_bias"]
    assert out.infer_shape(x=(2, 5))[1] == [(2, 3)]
