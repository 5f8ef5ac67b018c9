"""core.symbol.symbol / core.sym: composition, naming, listing, attributes, running."""
import copy

import numpy
import pytest

from core import nd, sym
from core.ops.namespace import namespace
from core.ops.registry import OpDef
from core.sym._base import NameManager, Prefix, compose
from core.symbol.graph import TRAIN, Entry, evaluate
from core.symbol.symbol import Symbol


@pytest.fixture(autouse=True)
def _fresh_names():
    with NameManager():
        yield


def mlp():
    x = sym.var("data")
    h = sym.FullyConnected(x, num_hidden=8, name="fc1")
    h = sym.Activation(h, act_type="relu", name="relu1")
    h = sym.FullyConnected(h, num_hidden=3, name="fc2")
    return sym.SoftmaxOutput(h, name="softmax")


def convnet():
    x = sym.var("data")
    c = sym.Convolution(x, kernel=(3, 3), num_filter=4, pad=(1, 1), name="conv1")
    b = sym.BatchNorm(c, name="bn1")
    a = sym.Activation(b, act_type="relu")
    p = sym.Pooling(a, kernel=(2, 2), stride=(2, 2), pool_type="max", name="pool1")
    return sym.FullyConnected(sym.Flatten(p), num_hidden=5, name="fc")


def rand(*shape, seed=0):
    return nd.array(numpy.random.default_rng(seed).standard_normal(shape).astype("float32"))


# --------------------------------------------------------------------------- variables
def test_var_attributes_are_mxnet_strings():
    x = sym.var("x", shape=(2, 3), dtype="float16", lr_mult=0.5, wd_mult=0.0,
                attr={"ctx_group": "dev1"})
    a = x.list_attr()
    # MXNet's hidden keys (ctx_group, lr_mult, ...) are stored as __key__ and listed
    # under both names, as MXNet 1.9.1's list_attr does
    assert a == {"__shape__": "(2, 3)", "__dtype__": "2", "__lr_mult__": "0.5",
                 "__wd_mult__": "0.0", "__ctx_group__": "dev1", "ctx_group": "dev1",
                 "lr_mult": "0.5", "wd_mult": "0.0"}
    assert x.attr("__shape__") == "(2, 3)" and x.attr("missing") is None
    node = x.outputs[0].node
    assert node.is_variable and node.avals[0].shape == (2, 3)
    assert node.avals[0].dtype == numpy.float16
    assert sym.Variable is sym.var and repr(x) == "<Symbol x>"


def test_var_init_and_bad_arguments():
    from core import initializer

    x = sym.var("w", init=initializer.Normal(0.1))
    assert "normal" in x.attr("__init__").lower()
    assert sym.var("w", init='["zero", {}]').attr("__init__") == '["zero", {}]'
    with pytest.raises(TypeError, match="name"):
        sym.var("")
    with pytest.raises(TypeError, match="strings"):
        sym.var("x", attr={"a": 1})
    with pytest.raises(ValueError, match="stype"):
        sym.var("x", stype="coo")
    assert sym.var("x", stype="csr").attr("__storage_type__") == "2"  # MXNet's code


# --------------------------------------------------------------------------- naming, listing
def test_mlp_lists():
    net = mlp()
    assert net.list_arguments() == ["data", "fc1_weight", "fc1_bias", "fc2_weight", "fc2_bias",
                                    "softmax_label"]
    assert net.list_outputs() == ["softmax_output"]
    assert net.list_auxiliary_states() == []
    assert net.list_inputs() == net.list_arguments()
    assert net.name == "softmax"


def test_convnet_with_batchnorm_lists_aux_states():
    net = convnet()
    assert net.list_arguments() == ["data", "conv1_weight", "conv1_bias", "bn1_gamma",
                                    "bn1_beta", "fc_weight", "fc_bias"]
    assert net.list_auxiliary_states() == ["bn1_moving_mean", "bn1_moving_var"]
    assert set(net.list_inputs()) == set(net.list_arguments() + net.list_auxiliary_states())
    g = net.graph
    assert sorted(v.name for v in g.updates) == ["bn1_moving_mean", "bn1_moving_var"]
    # an internal output before the BatchNorm carries no update
    assert net.get_internals()["conv1_output"].list_auxiliary_states() == []


def test_automatic_names_and_prefix():
    x = sym.var("x")
    a = sym.relu(x)
    b = sym.relu(a)
    c = sym.FullyConnected(b, num_hidden=2)
    assert (a.name, b.name, c.name) == ("relu0", "relu1", "fullyconnected0")
    assert c.list_arguments() == ["x", "fullyconnected0_weight", "fullyconnected0_bias"]
    with Prefix("net_"):
        d = sym.FullyConnected(x, num_hidden=2, no_bias=True)
    assert d.list_arguments() == ["x", "net_fullyconnected0_weight"]


def test_optional_inputs_follow_attributes():
    x = sym.var("x")
    assert sym.FullyConnected(x, num_hidden=2, no_bias=True, name="f").list_arguments() == \
        ["x", "f_weight"]
    assert sym.Convolution(x, kernel=(1, 1), num_filter=2, name="c").list_arguments() == \
        ["x", "c_weight", "c_bias"]
    assert sym.Deconvolution(x, kernel=(1, 1), num_filter=2, name="d").list_arguments() == \
        ["x", "d_weight"]
    assert sym.LeakyReLU(x, act_type="prelu", name="p").list_arguments() == ["x", "p_gamma"]
    assert sym.LeakyReLU(x, name="l").list_arguments() == ["x"]
    assert sym.softmax(x, name="s").list_arguments() == ["x"]
    assert sym.Embedding(x, input_dim=5, output_dim=2, name="e").list_arguments() == \
        ["x", "e_weight"]


def test_given_inputs_by_keyword_and_alias():
    x, w = sym.var("x"), sym.var("w")
    f = sym.FullyConnected(data=x, weight=w, num_hidden=2, name="f")
    assert f.list_arguments() == ["x", "w", "f_bias"]
    a = sym.broadcast_add(lhs=x, rhs=w)
    assert a.list_arguments() == ["x", "w"]


def test_multi_output_names_and_indexing():
    x = sym.var("x")
    parts = sym.split(x, num_outputs=3, axis=1, name="sp")
    assert len(parts) == 3
    assert parts.list_outputs() == ["sp_output0", "sp_output1", "sp_output2"]
    assert parts[1].list_outputs() == ["sp_output1"]
    assert parts["sp_output2"].list_outputs() == ["sp_output2"]
    assert [p.list_outputs()[0] for p in parts] == parts.list_outputs()
    assert parts[1:].list_outputs() == ["sp_output1", "sp_output2"]
    with pytest.raises(IndexError):
        parts[3]
    with pytest.raises(ValueError, match="no output named"):
        parts["nope"]
    # Dropout has two outputs, one visible: MXNet's single "_output" name
    d = sym.Dropout(x, p=0.3, name="drop")
    assert d.list_outputs() == ["drop_output"]
    assert d.outputs[0].node.num_outputs == 2
    assert d.outputs[0].node.attrs["training"] is TRAIN


def test_group_internals_children():
    a, b = sym.var("a"), sym.var("b")
    s = sym.elemwise_add(a, b, name="s")
    m = sym.elemwise_mul(s, b, name="m")
    g = sym.Group([s, m])
    assert g.list_outputs() == ["s_output", "m_output"]
    assert g.name is None and len(g) == 2
    assert g.list_arguments() == ["a", "b"]
    internals = m.get_internals()
    assert internals.list_outputs() == ["a", "b", "s_output", "m_output"]
    assert internals["s_output"].list_outputs() == ["s_output"]
    assert m.get_children().list_outputs() == ["s_output", "b"]
    assert a.get_children() is None
    assert g.get_children().list_outputs() == ["a", "b", "s_output", "b"]  # MXNet's order
    with pytest.raises(TypeError):
        sym.Group([a, 1])


def test_attributes():
    x = sym.var("x")
    f = sym.FullyConnected(x, num_hidden=4, name="fc", attr={"ctx_group": "g1"})
    assert f.attr("num_hidden") == "4"
    assert f.list_attr() == {"num_hidden": "4", "ctx_group": "g1", "__ctx_group__": "g1"}
    f._set_attr(mood="calm")
    assert f.attr("mood") == "calm"
    d = f.attr_dict()
    assert d["fc"]["mood"] == "calm" and "x" not in d
    with pytest.raises(TypeError):
        f._set_attr(mood=1)
    # the executor-mode flag is internal, not an MXNet attribute
    assert sym.BatchNorm(x).list_attr() == {}
    assert sym.Dropout(x, p=0.2).list_attr() == {"p": "0.2"}


def test_attr_scope_and_optimizer_multipliers():
    from core import optimizer

    with sym.AttrScope(ctx_group="dev1"), sym.AttrScope(stage="2"):
        w = sym.var("w", lr_mult=2.0, wd_mult=0.5)
        f = sym.FullyConnected(sym.var("x"), weight=w, num_hidden=2, name="f",
                               attr={"stage": "3"})
    assert w.list_attr()["ctx_group"] == "dev1" and w.attr("stage") == "2"
    assert f.attr("stage") == "3" and f.attr("ctx_group") == "dev1"
    assert sym.var("later").list_attr() == {}
    opt = optimizer.SGD(learning_rate=0.1, wd=0.1, sym=f,
                        param_idx2name={0: "w", 1: "f_bias"})
    assert opt._get_lr(0) == pytest.approx(0.2) and opt._get_wd(0) == pytest.approx(0.05)


# --------------------------------------------------------------------------- operators
def test_python_operators_with_scalars_are_literal_inputs():
    x = sym.var("x")
    y = 2 - x
    node = y.outputs[0].node
    assert node.op.name == "subtract" and node.inputs[0] == 2
    assert isinstance(node.inputs[1], Entry)
    ops = {"+": x + 1, "r+": 1 + x, "*": x * 3, "/": x / 2, "r/": 1 / x, "**": x ** 2,
           "r**": 2 ** x, "%": x % 2, "neg": -x, "==": x == 1, "!=": x != 1, "<": x < 1,
           "<=": x <= 1, ">": x > 1, ">=": x >= 1, "abs": abs(x)}
    names = {k: v.outputs[0].node.op.name for k, v in ops.items()}
    assert names == {"+": "add", "r+": "add", "*": "multiply", "/": "divide", "r/": "divide",
                     "**": "power", "r**": "power", "%": "mod", "neg": "negative",
                     "==": "equal", "!=": "not_equal", "<": "less", "<=": "less_equal",
                     ">": "greater", ">=": "greater_equal", "abs": "abs"}
    xv = nd.array([0.5, 1.0, 2.0])
    for k, s in ops.items():
        got = s.eval(x=xv)[0].asnumpy()
        want = {"+": xv + 1, "r+": 1 + xv, "*": xv * 3, "/": xv / 2, "r/": 1 / xv,
                "**": xv ** 2, "r**": 2 ** xv, "%": xv % 2, "neg": -xv, "==": xv == 1,
                "!=": xv != 1, "<": xv < 1, "<=": xv <= 1, ">": xv > 1, ">=": xv >= 1,
                "abs": abs(xv)}[k].asnumpy()
        numpy.testing.assert_allclose(got, want, rtol=1e-6, err_msg=k)


def test_fluent_methods():
    x = sym.var("x")
    y = x.reshape((3, 2)).transpose().sum(axis=1).astype("float64")
    v = nd.arange(6).reshape((2, 3))
    want = v.reshape((3, 2)).T.sum(axis=1).astype("float64")
    got = y.eval(x=v)[0]
    assert got.dtype == numpy.float64
    numpy.testing.assert_allclose(got.asnumpy(), want.asnumpy())
    assert "reshape" in dir(x)
    with pytest.raises(AttributeError):
        x.no_such_method()


def test_operator_arguments_errors_name_the_operator():
    x = sym.var("x")
    with pytest.raises(TypeError, match="FullyConnected.*bogus"):
        sym.FullyConnected(x, num_hidden=2, bogus=1)
    with pytest.raises(TypeError, match="relu.*2 outputs"):
        sym.relu(sym.Group([x, x]))
    with pytest.raises(TypeError, match="Symbol, an array or a scalar"):
        sym.relu(object())


# --------------------------------------------------------------------------- running
def _mlp_values(net, batch=4):
    arg_shapes, _, _ = net.infer_shape(data=(batch, 6))
    vals = {n: rand(*s, seed=i) for i, (n, s) in enumerate(zip(net.list_arguments(), arg_shapes))}
    vals["softmax_label"] = nd.array([0, 1, 2, 1][:batch], dtype="float32")
    return vals


def test_eval_matches_nd():
    net = mlp()
    v = _mlp_values(net)
    got = net.eval(**v)[0].asnumpy()
    h = nd.FullyConnected(v["data"], v["fc1_weight"], v["fc1_bias"], num_hidden=8)
    h = nd.Activation(h, act_type="relu")
    h = nd.FullyConnected(h, v["fc2_weight"], v["fc2_bias"], num_hidden=3)
    want = nd.SoftmaxOutput(h, v["softmax_label"]).asnumpy()
    numpy.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6)
    with pytest.raises(ValueError, match="softmax_label"):
        net.eval(data=v["data"])


def test_eval_convnet_inference_matches_nd():
    net = convnet()
    args, _, aux = net.infer_shape(data=(2, 3, 6, 6))
    v = {n: rand(*s, seed=i) for i, (n, s) in enumerate(zip(net.list_arguments(), args))}
    v["bn1_moving_mean"] = nd.zeros(aux[0]) + 0.1
    v["bn1_moving_var"] = nd.ones(aux[1]) * 2
    got = net.eval(**v)[0].asnumpy()
    c = nd.Convolution(v["data"], v["conv1_weight"], v["conv1_bias"], kernel=(3, 3),
                       num_filter=4, pad=(1, 1))
    b = nd.BatchNorm(c, v["bn1_gamma"], v["bn1_beta"], v["bn1_moving_mean"],
                     v["bn1_moving_var"])
    p = nd.Pooling(nd.relu(b), kernel=(2, 2), stride=(2, 2), pool_type="max")
    want = nd.FullyConnected(nd.Flatten(p), v["fc_weight"], v["fc_bias"], num_hidden=5)
    numpy.testing.assert_allclose(got, want.asnumpy(), rtol=1e-4, atol=1e-5)


def test_training_graph_updates_batchnorm_stats():
    x = sym.var("x")
    bn = sym.BatchNorm(x, fix_gamma=False, momentum=0.5, name="bn")
    v = {"x": nd.array([[1.0, 2.0], [3.0, 6.0]]), "bn_gamma": nd.ones((2,)),
         "bn_beta": nd.zeros((2,)), "bn_moving_mean": nd.zeros((2,)),
         "bn_moving_var": nd.ones((2,))}
    outs, updates = evaluate(bn.graph, v, is_train=True)
    assert sorted(updates) == ["bn_moving_mean", "bn_moving_var"]
    numpy.testing.assert_allclose(updates["bn_moving_mean"].asnumpy(), [1.0, 2.0])
    numpy.testing.assert_allclose(outs[0].asnumpy(), [[-1, -1], [1, 1]], atol=1e-3)


def test_dropout_is_identity_at_inference():
    x = sym.var("x")
    d = sym.Dropout(x, p=0.5)
    v = nd.ones((3, 4))
    numpy.testing.assert_array_equal(d.eval(x=v)[0].asnumpy(), v.asnumpy())
    out, _ = evaluate(d.graph, {"x": v}, is_train=True)
    assert set(numpy.unique(out[0].asnumpy())) <= {0.0, 2.0}


def test_overrides_compose_like_nd():
    x = sym.var("x")
    v = rand(2, 3, 4)
    cases = [
        (sym.softmin(x, axis=-1), nd.softmin(v, axis=-1)),
        (sym.SoftmaxActivation(x), nd.SoftmaxActivation(v)),
        (sym.SoftmaxActivation(x, mode="channel"), nd.SoftmaxActivation(v, mode="channel")),
        (sym.LeakyReLU(x, slope=0.2), nd.LeakyReLU(v, slope=0.2)),
    ]
    for s, want in cases:
        numpy.testing.assert_allclose(s.eval(x=v)[0].asnumpy(), want.asnumpy(), rtol=1e-5,
                                      atol=1e-6)
    ln = sym.LayerNorm(x, name="ln")
    assert ln.list_arguments() == ["x", "ln_gamma", "ln_beta"]
    assert ln.list_outputs() == ["ln_output"]
    g, b = rand(4, seed=1), rand(4, seed=2)
    numpy.testing.assert_allclose(ln.eval(x=v, ln_gamma=g, ln_beta=b)[0].asnumpy(),
                                  nd.LayerNorm(v, g, b).asnumpy(), rtol=1e-5, atol=1e-5)
    assert len(sym.LayerNorm(x, output_mean_var=True)) == 3
    assert sym.GroupNorm(x, num_groups=1, name="gn").list_arguments() == ["x", "gn_gamma",
                                                                          "gn_beta"]
    assert sym.InstanceNorm(x, name="in").list_outputs() == ["in_output"]
    rr = sym.LeakyReLU(x, act_type="rrelu")
    assert rr.outputs[0].node.attrs["training"] is TRAIN


def test_other_nd_overrides_run_recorded():
    from core.ops.registry import F
    from core.sym._compose import traced

    def nd_func(data, scale=2.0):
        """A hand-written nd function: its operator calls become nodes."""
        return F.relu(data) * scale + F.exp(-data)

    f = traced(nd_func, "my_func")
    x = sym.var("x")
    s = f(x, scale=3.0, name="mine", attr={"k": "v"})
    assert s.name == "mine" and s.attr("k") == "v"
    assert [n.op_name for n in s.graph.op_nodes()] == ["relu", "multiply", "negative",
                                                       "exp", "add"]
    v = rand(3)
    numpy.testing.assert_allclose(s.eval(x=v)[0].asnumpy(), nd_func(v, 3.0).asnumpy(),
                                  rtol=1e-6)


def test_rnn_creates_parameters_and_states():
    from core.ops.nn.rnn import param_size

    x = sym.var("data")
    r = sym.RNN(x, state_size=4, num_layers=2, mode="lstm", bidirectional=True,
                state_outputs=True, name="rnn")
    assert r.list_arguments() == ["data", "rnn_parameters", "rnn_state", "rnn_state_cell"]
    assert r.list_outputs() == ["rnn_output", "rnn_state_output", "rnn_statecell_output"]
    args, outs, _ = r.infer_shape(data=(5, 2, 3))
    assert args[1] == (param_size("lstm", 2, 2, 3, 4),)
    assert args[2] == args[3] == (4, 2, 4)
    assert outs == [(5, 2, 8), (4, 2, 4), (4, 2, 4)]
    g = sym.RNN(x, state_size=4, mode="gru", name="g")
    assert g.list_arguments() == ["data", "g_parameters", "g_state"]
    assert g.list_outputs() == ["g_output"]


def test_creation_ops_and_constants():
    z = sym.zeros(shape=(2, 3))
    assert z.list_arguments() == []
    numpy.testing.assert_array_equal(z.eval()[0].asnumpy(), numpy.zeros((2, 3)))
    a = sym.arange(start=0, stop=4)
    numpy.testing.assert_array_equal(a.eval()[0].asnumpy(), numpy.arange(4))
    x = sym.var("x")
    y = x + nd.array([1.0, 2.0])  # an array operand becomes a constant node
    assert y.list_arguments() == ["x"]
    numpy.testing.assert_array_equal(y.eval(x=nd.ones((2,)))[0].asnumpy(), [2.0, 3.0])
    z = numpy.array([1.0, 2.0], dtype="float32") * x
    assert isinstance(z, Symbol) and z.list_arguments() == ["x"]
    numpy.testing.assert_array_equal(z.eval(x=nd.ones((2,)))[0].asnumpy(), [1.0, 2.0])


def test_concat_stack():
    a, b = sym.var("a"), sym.var("b")
    c = sym.concat(a, b, dim=1)
    s = sym.stack(a, b, axis=0)
    cc = sym.Concat(a, b, dim=0)
    va, vb = nd.ones((2, 2)), nd.zeros((2, 2))
    assert c.eval(a=va, b=vb)[0].shape == (2, 4)
    assert s.eval(a=va, b=vb)[0].shape == (2, 2, 2)
    assert cc.eval(a=va, b=vb)[0].shape == (4, 2)
    assert c.infer_shape(a=(2, 2), b=(2, 3))[1] == [(2, 5)]


# --------------------------------------------------------------------------- graph, copies
def test_graph_round_trip_and_tracer():
    from core.symbol.trace import Tracer

    net = mlp()
    again = Symbol.from_graph(net.graph)
    assert again.list_arguments() == net.list_arguments()
    with Tracer() as t:
        xv = t.variable("x", (2, 3), "float32")
        yv = nd.relu(xv * 2)
    s = Symbol.from_graph(t.graph([yv]))
    assert s.list_arguments() == ["x"]
    assert s.infer_shape() == ([(2, 3)], [(2, 3)], [])


def test_copy_and_deepcopy():
    net = mlp()
    shallow = copy.copy(net)
    deep = copy.deepcopy(net)
    assert shallow.outputs[0].node is net.outputs[0].node
    assert deep.outputs[0].node is not net.outputs[0].node
    assert deep.list_arguments() == net.list_arguments()
    assert deep.list_outputs() == net.list_outputs()


def test_compose_call_replaces_variables():
    x = sym.var("x")
    net = sym.FullyConnected(x, num_hidden=2, name="fc")
    y = sym.var("y")
    net2 = net(x=sym.relu(y, name="r"))
    assert net2.list_arguments() == ["y", "fc_weight", "fc_bias"]
    assert net.list_arguments() == ["x", "fc_weight", "fc_bias"]


def test_generic_updates_from_op_definition():
    # any operator with ``updates`` makes the variable in that slot an auxiliary state
    from core.ops.registry import Aval

    op = OpDef(name="_toy_counter", inputs=("x", "count"), attrs={}, updates={1: 1},
               visible_outputs=1, infer=lambda x, c: (Aval(x.shape, x.dtype), c),
               nd=(), np=(), variadic=False)
    x, c = sym.var("x"), sym.var("c")
    s = compose(op, [x, c], {})
    assert s.list_arguments() == ["x"] and s.list_auxiliary_states() == ["c"]
    assert s.list_outputs() == ["toy_counter0_output"]
    assert (s + 1).list_auxiliary_states() == ["c"]


# --------------------------------------------------------------------------- namespace
def test_every_nd_name_exists_in_sym():
    import core.nd  # noqa: F401 - loads the overrides

    for prefix, mod in (("", sym), ("random", sym.random), ("linalg", sym.linalg),
                        ("contrib", sym.contrib)):
        names = set(namespace("nd", prefix))
        names.discard("var")  # sym.var is MXNet's variable constructor
        missing = sorted(n for n in names if not hasattr(mod, n))
        assert not missing, (prefix, missing)
    for n in ("var", "Variable", "Group", "load", "load_json", "zeros", "ones", "full",
              "arange", "concat", "stack"):
        assert callable(getattr(sym, n))


def test_random_ops_are_nodes():
    r = sym.random.uniform(low=0, high=1, shape=(2, 3), name="u")
    assert r.list_arguments() == []
    v = r.eval()[0].asnumpy()
    assert v.shape == (2, 3) and ((v >= 0) & (v < 1)).all()
    assert r.infer_shape() == ([], [(2, 3)], [])


# --------------------------------------------------------------------------- json, executor
def test_json_round_trip(tmp_path):
    net = convnet()
    text = net.tojson()
    back = sym.load_json(text)
    assert back.list_arguments() == net.list_arguments()
    assert back.list_outputs() == net.list_outputs()
    assert back.list_auxiliary_states() == net.list_auxiliary_states()
    f = tmp_path / "net-symbol.json"
    net.save(str(f))
    assert sym.load(str(f)).list_outputs() == net.list_outputs()


def test_simple_bind_and_bind():
    net = mlp()
    ex = net.simple_bind(None, data=(4, 6))
    assert sorted(ex.arg_dict) == sorted(net.list_arguments())
    v = _mlp_values(net)
    ex2 = net.bind(None, args=[v[n] for n in net.list_arguments()])
    out = ex2.forward(is_train=False)[0]
    numpy.testing.assert_allclose(out.asnumpy(), net.eval(**v)[0].asnumpy(), rtol=1e-5)
    with pytest.raises(ValueError, match="argument"):
        net.bind(None, args={"data": v["data"]})


def test_simple_bind_training_step_matches_autograd():
    from core import autograd

    x = sym.var("data")
    h = sym.FullyConnected(x, num_hidden=4, name="fc1")
    h = sym.Activation(sym.BatchNorm(h, fix_gamma=False, name="bn"), act_type="tanh")
    net = sym.sum(sym.FullyConnected(h, num_hidden=2, name="fc2"))
    ex = net.simple_bind(None, data=(3, 5))
    assert sorted(ex.aux_dict) == ["bn_moving_mean", "bn_moving_var"]
    for i, (k, v) in enumerate(sorted(ex.arg_dict.items())):
        v[:] = rand(*v.shape, seed=i)
    ex.aux_dict["bn_moving_var"][:] = 1.0
    out = ex.forward(is_train=True)[0]
    ex.backward()
    a = {k: v.copy() for k, v in ex.arg_dict.items()}
    for v in a.values():
        v.attach_grad()
    mm, mv = nd.zeros((4,)), nd.ones((4,))
    with autograd.record():
        y = nd.FullyConnected(a["data"], a["fc1_weight"], a["fc1_bias"], num_hidden=4)
        y = nd.BatchNorm(y, a["bn_gamma"], a["bn_beta"], mm, mv, fix_gamma=False)
        y = nd.FullyConnected(nd.tanh(y), a["fc2_weight"], a["fc2_bias"], num_hidden=2)
        y = nd.sum(y)
    y.backward()
    numpy.testing.assert_allclose(out.asnumpy(), y.asnumpy(), rtol=1e-5)
    numpy.testing.assert_allclose(ex.aux_dict["bn_moving_mean"].asnumpy(), mm.asnumpy(),
                                  rtol=1e-5, atol=1e-7)
    for k, v in a.items():
        numpy.testing.assert_allclose(ex.grad_dict[k].asnumpy(), v.grad.asnumpy(), rtol=1e-4,
                                      atol=1e-6, err_msg=k)


def test_named_outputs_follow_mxnet():
    # MXNet 1.9.1's FListOutputNames: RNN's output/state_output/statecell_output and
    # BatchNorm's output/mean/var (checked against MXNet's list_outputs())
    bn = sym.BatchNorm(sym.var("d"), name="bn", output_mean_var=True)
    assert bn.list_outputs() == ["bn_output", "bn_mean", "bn_var"]
    assert bn["bn_mean"].list_outputs() == ["bn_mean"]
    g = sym.RNN(sym.var("d"), state_size=3, mode="gru", state_outputs=True, name="g")
    assert g.list_outputs() == ["g_output", "g_state_output"]
    # the executor's output_dict uses the same names (a Dropout's hidden mask aside)
    net = sym.Group([sym.Dropout(sym.var("a"), p=0.5, name="drop"), g[1]])
    ex = net.simple_bind(None, a=(2,), d=(3, 1, 2))
    ex.forward()
    assert list(ex.output_dict) == ["drop_output", "g_state_output"]


def test_concat_has_mxnets_automatic_name():
    from core.name import NameManager

    with NameManager():
        assert sym.Concat(sym.var("a"), sym.var("b"), dim=1).name == "concat0"
        assert sym.concat(sym.var("a"), sym.var("b")).name == "concat1"
