"""core.symbol.shape_infer: forward and backward shape/dtype inference."""
import numpy
import pytest

from core import sym
from core.ops.nn.rnn import param_size
from core.ops.registry import REGISTRY
from core.sym import NameManager
from core.symbol.graph import Entry, Graph, Node
from core.symbol.shape_infer import annotate, dtype_code, infer_graph, parse_dtype, parse_shape


@pytest.fixture(autouse=True)
def _fresh_names():
    with NameManager():
        yield


def args_of(s, **shapes):
    return dict(zip(s.list_arguments(), s.infer_shape(**shapes)[0]))


def test_parse_helpers():
    assert parse_shape("(2, 0, 3)") == (2, None, 3)
    assert parse_shape([4]) == (4,) and parse_shape(5) == (5,) and parse_shape(None) is None
    assert parse_shape("()") == () and parse_shape("(3,)") == (3,)
    assert parse_shape("[4, 5]") == (4, 5) and parse_shape("7") == (7,)
    for bad in ("(2,", "(a)", "((2))", "(2,,3)", "__import__('os')"):
        with pytest.raises(ValueError, match="shape"):
            parse_shape(bad)
    with pytest.raises(TypeError):
        parse_shape((2.5,))
    assert parse_dtype("0") == numpy.float32 and parse_dtype(6) == numpy.int64
    assert parse_dtype("float16") == numpy.float16 and parse_dtype(None) is None
    assert dtype_code("float64") == "1" and dtype_code(numpy.int32) == "4"
    with pytest.raises(ValueError, match="code"):
        parse_dtype(99)


def test_fully_connected_backward_rule():
    x = sym.var("x")
    f = sym.FullyConnected(x, num_hidden=5, name="f")
    assert args_of(f, x=(3, 2, 4)) == {"x": (3, 2, 4), "f_weight": (5, 8), "f_bias": (5,)}
    g = sym.FullyConnected(x, num_hidden=5, flatten=False, name="g")
    assert args_of(g, x=(3, 2, 4))["g_weight"] == (5, 4)
    assert g.infer_shape(x=(3, 2, 4))[1] == [(3, 2, 5)]


def test_convolution_and_deconvolution_weights():
    x = sym.var("x")
    c = sym.Convolution(x, kernel=(3, 3), num_filter=8, num_group=2, name="c")
    a = args_of(c, x=(1, 4, 9, 9))
    assert a["c_weight"] == (8, 2, 3, 3) and a["c_bias"] == (8,)
    cl = sym.Convolution(x, kernel=(3, 3), num_filter=8, layout="NHWC", name="cl")
    assert args_of(cl, x=(1, 9, 9, 4))["cl_weight"] == (8, 3, 3, 4)
    assert cl.infer_shape(x=(1, 9, 9, 4))[1] == [(1, 7, 7, 8)]
    d = sym.Deconvolution(x, kernel=(2, 2), stride=(2, 2), num_filter=6, name="d")
    assert args_of(d, x=(1, 4, 5, 5))["d_weight"] == (4, 6, 2, 2)
    assert d.infer_shape(x=(1, 4, 5, 5))[1] == [(1, 6, 10, 10)]
    c1 = sym.Convolution(x, kernel=(3,), num_filter=2, name="c1")
    assert args_of(c1, x=(2, 3, 10))["c1_weight"] == (2, 3, 3)


def test_normalization_parameters():
    x = sym.var("x")
    bn = sym.BatchNorm(x, axis=-1, name="bn")
    args, _, aux = bn.infer_shape(x=(2, 5, 7))
    assert args[1:] == [(7,), (7,)] and aux == [(7,), (7,)]
    ln = sym.LayerNorm(x, axis=1, name="ln")
    assert args_of(ln, x=(2, 5, 7))["ln_gamma"] == (5,)
    gn = sym.GroupNorm(x, num_groups=5, name="gn")
    assert args_of(gn, x=(2, 5, 7))["gn_beta"] == (5,)
    inn = sym.InstanceNorm(x, name="in")
    assert args_of(inn, x=(2, 5, 7))["in_gamma"] == (5,)


def test_embedding_prelu_rnn():
    x = sym.var("x")
    e = sym.Embedding(x, input_dim=10, output_dim=4, name="e")
    assert e.infer_shape(x=(2, 3)) == ([(2, 3), (10, 4)], [(2, 3, 4)], [])
    p = sym.LeakyReLU(x, act_type="prelu", name="p")
    assert args_of(p, x=(2, 6, 3))["p_gamma"] == (6,)
    r = sym.RNN(x, state_size=3, mode="gru", layout="NTC", name="r")
    a = args_of(r, x=(4, 7, 5))
    assert a["r_parameters"] == (param_size("gru", 1, 1, 5, 3),)
    assert a["r_state"] == (1, 4, 3)


def test_backward_rules_yield_to_given_shapes():
    # the operator's own rule decides: PReLU with one slope, MXNet 1.x per-group scales
    x = sym.var("x")
    p = sym.LeakyReLU(x, act_type="prelu", name="p")
    assert p.infer_shape(x=(2, 6, 3), p_gamma=(1,))[0] == [(2, 6, 3), (1,)]
    g = sym.GroupNorm(x, num_groups=2, name="g")
    assert g.infer_shape(x=(2, 6, 3), g_gamma=(2,), g_beta=(2,))[1] == [(2, 6, 3)]
    f = sym.FullyConnected(x, num_hidden=3, name="f")
    with pytest.raises(ValueError, match="FullyConnected"):
        f.infer_shape(x=(2, 4), f_weight=(3, 5))


def test_sequence_and_ctc_lengths():
    x = sym.var("x")
    m = sym.SequenceMask(x, use_sequence_length=True, name="m")
    assert args_of(m, x=(5, 3, 2))["m_sequence_length"] == (3,)
    m1 = sym.SequenceLast(x, use_sequence_length=True, axis=1, name="m1")
    assert args_of(m1, x=(5, 3, 2))["m1_sequence_length"] == (5,)
    c = sym.CTCLoss(x, sym.var("label"), use_data_lengths=True, use_label_lengths=True,
                    name="c")
    a = args_of(c, x=(6, 2, 5), label=(2, 3))
    assert a["c_data_lengths"] == (2,) and a["c_label_lengths"] == (2,)


def test_elementwise_operand_takes_the_other_shape():
    a, b = sym.var("a"), sym.var("b")
    s = sym.relu(a) + b
    assert s.infer_shape(b=(2, 3)) == ([(2, 3), (2, 3)], [(2, 3)], [])
    # and a unary shape-preserving op passes its output's shape back to its input
    t = sym.sigmoid(sym.tanh(a)) * b
    assert t.infer_shape(b=(4,))[0] == [(4,), (4,)]


def test_partial_inference_keeps_unknown_dims():
    x = sym.var("x")
    h = sym.FullyConnected(x, num_hidden=6, name="fc")
    h = sym.reshape(h, shape=(-1, 3, 2))
    out = sym.sum(h, axis=2)
    assert out.infer_shape(x=(0, 4)) == (None, None, None)
    args, outs, _ = out.infer_shape_partial(x=(0, 4))
    assert args == [(0, 4), (6, 4), (6,)] and outs == [(0, 3)]
    # nothing known: unknown shapes come out as (); an unknown data rank tells the
    # weight nothing (MXNet 1.9.1 gives [(), (), ()] here too)
    args, outs, _ = out.infer_shape_partial()
    assert args == [(), (), ()] and outs == [()]


def test_variable_shape_attribute_and_positional_args():
    x = sym.var("x", shape=(2, 3))
    y = sym.var("y")
    s = x * y
    assert s.infer_shape() == ([(2, 3), (2, 3)], [(2, 3)], [])
    assert s.infer_shape((2, 3), None)[1] == [(2, 3)]
    assert s.infer_shape(y=(1, 3))[0] == [(2, 3), (1, 3)]
    with pytest.raises(ValueError, match="not an input"):
        s.infer_shape(z=(1,))
    with pytest.raises(ValueError, match="positional"):
        s.infer_shape((1,), (1,), (1,))


def test_conflicting_shapes_name_the_node_and_op():
    x = sym.var("x")
    f = sym.FullyConnected(x, num_hidden=3, name="fc1")
    with pytest.raises(ValueError, match=r"fc1.*FullyConnected.*\(3, 5\)"):
        f.infer_shape(x=(2, 4), fc1_weight=(3, 5))
    a, b = sym.var("a"), sym.var("b")
    with pytest.raises(ValueError, match=r"add0.*add"):
        (a + b).infer_shape(a=(2, 3), b=(4, 5))
    with pytest.raises(ValueError, match="infer_shape"):
        (a + b).infer_shape_partial(a=(2, 3), b=(4, 5))


def test_infer_type():
    x = sym.var("x")
    f = sym.FullyConnected(x, num_hidden=3, name="f")
    assert f.infer_type(x="float64") == ([numpy.float64] * 3, [numpy.float64], [])
    assert f.infer_type() == (None, None, None)
    bn = sym.BatchNorm(x, name="bn")
    args, outs, aux = bn.infer_type(x=numpy.float16)
    assert args == [numpy.float16, numpy.float32, numpy.float32]
    assert outs == [numpy.float16] and aux == [numpy.float32, numpy.float32]
    # unknown variables default to float32 once anything is known (MXNet)
    y = sym.var("y")
    assert (sym.cast(x, dtype="int32") + y).infer_type(x="float64")[0] == [numpy.float64,
                                                                            numpy.int32]
    # the attribute decides without shapes: MXNet's argmax gives float32 indices
    assert sym.argmax(y, axis=0).infer_type(y="float64")[1] == [numpy.float32]
    assert sym.one_hot(y, depth=3, dtype="int64").infer_type(y="float32")[1] == [numpy.int64]
    assert (x < y).infer_type(x="float32")[1] == [numpy.bool_]
    v = sym.var("v", dtype="float16")
    assert (v * 2).infer_type() == ([numpy.float16], [numpy.float16], [])
    assert f.infer_type_partial() == ([None] * 3, [None], [])
    e = sym.Embedding(x, input_dim=4, output_dim=2, dtype="float16")
    assert e.infer_type(x="int32") == ([numpy.int32, numpy.float16], [numpy.float16], [])


def test_infer_type_with_shapes_uses_the_rules():
    x = sym.var("x", shape=(2, 3), dtype="int32")
    s = sym.sum(x, axis=1) + sym.var("w", shape=(1,), dtype="float64")
    assert s.infer_type()[1] == [numpy.float64]


def test_infer_graph_direct_and_annotate():
    x = Node(None, "x")
    w = Node(None, "w")
    conv = Node(REGISTRY["Convolution"], "conv", [Entry(x, 0), Entry(w, 0), None],
                {"kernel": (3, 3), "num_filter": 2, "no_bias": True})
    g = Graph([Entry(conv, 0)])
    r = infer_graph(g, {x: (1, 3, 5, 5)}, {"x": "float32"})
    assert r.shape(Entry(w, 0)) == (2, 3, 3, 3) and r.dtype(Entry(w, 0)) == numpy.float32
    assert r.aval(Entry(conv, 0)).shape == (1, 2, 3, 3)
    ga = annotate(g, {"x": (1, 3, 5, 5)}, {"x": "float32"})
    assert ga.outputs[0].node.avals[0].shape == (1, 2, 3, 3)
    assert conv.avals is None  # the original graph is left alone
    with pytest.raises(ValueError, match="cannot infer"):
        annotate(g)


def test_model_with_every_common_layer():
    x = sym.var("data")
    c = sym.Convolution(x, kernel=(3, 3), num_filter=4, pad=(1, 1))
    c = sym.BatchNorm(c)
    c = sym.LeakyReLU(c, act_type="prelu")
    c = sym.Pooling(c, kernel=(2, 2), stride=(2, 2), pool_type="avg")
    c = sym.Dropout(c, p=0.2)
    f = sym.FullyConnected(c, num_hidden=7)
    f = sym.LayerNorm(f)
    out = sym.SoftmaxOutput(f, name="softmax")
    args, outs, aux = out.infer_shape(data=(2, 3, 8, 8))
    assert outs == [(2, 7)] and len(aux) == 2
    assert dict(zip(out.list_arguments(), args))["fullyconnected0_weight"] == (7, 64)
    assert dict(zip(out.list_arguments(), args))["softmax_label"] == (2,)
