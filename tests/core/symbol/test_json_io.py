"""Graph JSON (MXNet symbol layout): round trips through evaluate, validation, MXNet 1.x files."""
import json
import os

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from core import nd
from core import random as crandom
from core.context import cpu
from core.ops.registry import REGISTRY, OpDef
from core.symbol.graph import TRAIN, Entry, Graph, Node, evaluate
from core.symbol.json_io import (
    format_value,
    graph_from_json,
    graph_to_json,
    load_graph,
    parse_value,
    save_graph,
    variable_aval,
)
from core.symbol.trace import Tracer
from gluon.model_zoo import vision


def _rand(shape, dtype="float32", seed=0):
    return nd.array(np.random.RandomState(seed).randn(*shape).astype(dtype))


def _round_trip(g):
    text = graph_to_json(g)
    json.loads(text)
    g2 = graph_from_json(text)
    assert graph_to_json(g2) == text  # a second trip changes nothing
    return g2


def _same(g, g2, values, is_train=False, seed=None):
    if seed is not None:
        crandom.seed(seed)
    a, ua = evaluate(g, values, is_train=is_train)
    if seed is not None:
        crandom.seed(seed)
    b, ub = evaluate(g2, values, is_train=is_train)
    assert len(a) == len(b)
    for x, y in zip(a, b):
        assert x.dtype == y.dtype and x.shape == y.shape
        np.testing.assert_array_equal(x.asnumpy(), y.asnumpy())
    assert sorted(ua) == sorted(ub)
    for k in ua:
        np.testing.assert_array_equal(ua[k].asnumpy(), ub[k].asnumpy())
    return a, ua


# ------------------------------------------------------------------ round trips
def test_mlp_round_trip():
    with Tracer() as t:
        x = t.variable("data", (4, 6), "float32")
        w1 = t.variable("fc1_weight", (8, 6), "float32", __lr_mult__="2", __init__="zeros")
        b1 = t.variable("fc1_bias", (8,), "float32")
        w2 = t.variable("fc2_weight", (3, 8), "float32")
        h = nd.Activation(nd.FullyConnected(x, w1, b1, num_hidden=8), act_type="relu")
        y = nd.FullyConnected(h, w2, None, num_hidden=3, no_bias=True)
        out = nd.softmax(y, axis=-1)
    g = t.graph([out, h])
    g2 = _round_trip(g)
    names = [n.name for n in g2.topo()]
    assert names == [n.name for n in g.topo()]
    w = next(n for n in g2.variables() if n.name == "fc1_weight")
    assert w.user_attrs == {"__lr_mult__": "2", "__init__": "zeros"}
    fc = next(n for n in g2.op_nodes() if n.op_name == "FullyConnected" and n.attrs["no_bias"])
    assert fc.inputs[2] is None and fc.attrs["num_hidden"] == 3
    vals = {"data": _rand((4, 6)), "fc1_weight": _rand((8, 6), seed=1),
            "fc1_bias": _rand((8,), seed=2), "fc2_weight": _rand((3, 8), seed=3)}
    _same(g, g2, vals)


def test_conv_net_round_trip():
    with Tracer() as t:
        x = t.variable("x", (2, 3, 8, 8), "float32")
        w = t.variable("conv_weight", (4, 3, 3, 3), "float32")
        b = t.variable("conv_bias", (4,), "float32")
        fw = t.variable("fc_weight", (5, 16), "float32")
        c = nd.Convolution(x, w, b, kernel=(3, 3), num_filter=4, pad=(1, 1))
        p = nd.Pooling(nd.relu(c), kernel=(2, 2), stride=(2, 2), pool_type="max")
        p = nd.Pooling(p, kernel=(2, 2), stride=(2, 2), pool_type="avg")
        y = nd.FullyConnected(nd.flatten(p), fw, None, num_hidden=5, no_bias=True)
        parts = nd.split(y, num_outputs=5, axis=1)
        z = nd.Concat(parts[4], parts[0], dim=1)
    g = t.graph([y, z, y[:, 1:3], y[..., None]])
    g2 = _round_trip(g)
    conv = next(n for n in g2.op_nodes() if n.op_name == "Convolution")
    assert conv.attrs["kernel"] == (3, 3) and conv.attrs["pad"] == (1, 1)
    split = next(n for n in g2.op_nodes() if n.op_name == "split")
    assert split.num_outputs == 5
    vals = {"x": _rand((2, 3, 8, 8)), "conv_weight": _rand((4, 3, 3, 3), seed=1),
            "conv_bias": _rand((4,), seed=2), "fc_weight": _rand((5, 16), seed=3)}
    _same(g, g2, vals)


def test_literals_round_trip():
    with Tracer() as t:
        x = t.variable("x", (3, 4), "float32")
        i = t.variable("i", (3, 4), "int32")
        y = (x * 2 + 1.5) / 3 - x ** 2
        y = 1.0 - y
        z = i * 3 + np.int32(2)
        c = nd.clip(x, -0.5, float("inf"))
    g = t.graph([y, z, c])
    g2 = _round_trip(g)
    lits = [(n.op_name, tuple(e for e in n.inputs if not isinstance(e, Entry)))
            for n in g2.op_nodes()]
    assert ("subtract", (1.0,)) in lits
    z_node = g2.outputs[1].node
    lit = next(e for e in z_node.inputs if not isinstance(e, Entry))
    assert type(lit) is np.int32 and lit == 2  # kept in our spelling (dtype promotion)
    vals = {"x": _rand((3, 4)), "i": nd.array(np.arange(12, dtype="int32").reshape(3, 4))}
    _same(g, g2, vals)


def test_numpy_scalar_literals_round_trip():
    import ml_dtypes

    x = Node(None, "x")
    lits = [np.float16(2.5), ml_dtypes.bfloat16(1.5), np.uint8(7), np.bool_(True), None]
    nodes = [Node(REGISTRY["add"], f"add{k}", [Entry(x, 0), v]) for k, v in enumerate(lits[:4])]
    g = Graph([Entry(n, 0) for n in nodes])
    g2 = _round_trip(g)
    back = [n.inputs[1] for n in (e.node for e in g2.outputs)]
    for a, b in zip(lits, back):
        assert type(a) is type(b) and a == b


@pytest.mark.parametrize("dtype", ["float16", "bfloat16", "int32", "int64", "bool", "uint8",
                                   "float64"])
def test_constants_round_trip(dtype):
    rs = np.random.RandomState(0)
    raw = rs.randn(2, 3) * 10
    value = nd.array(raw.astype("float32")).astype(dtype)
    with Tracer() as t:
        x = t.variable("x", (2, 3), dtype)
        y = x + value
    g = t.graph([y, value])
    text = graph_to_json(g)
    g2 = _round_trip(g)
    const = next(n for n in g2.topo() if n.is_constant)
    assert const.value.dtype.name == dtype and const.value.shape == (2, 3)
    np.testing.assert_array_equal(const.value.astype("float64"),
                                  value.asnumpy().astype("float64"))
    node_json = next(n for n in json.loads(text)["nodes"] if n["name"] == const.name)
    assert node_json["op"] == "null"
    assert node_json["attrs"]["__const__"] == "1"
    assert node_json["attrs"]["__dtype__"] == dtype
    _same(g, g2, {"x": value})


def test_random_ops_round_trip():
    with Tracer() as t:
        x = t.variable("x", (3, 4), "float32")
        y = x + nd.random.uniform(-1, 1, shape=(3, 4))
        z = nd.random.normal(0, 2, shape=(2,))
    g = t.graph([y, z])
    g2 = _round_trip(g)
    assert sum(1 for n in g2.op_nodes() if n.op.random) == 2
    a, _ = _same(g, g2, {"x": _rand((3, 4))}, seed=7)
    b, _ = _same(g, g2, {"x": _rand((3, 4))}, seed=8)
    assert not np.array_equal(a[1].asnumpy(), b[1].asnumpy())


def test_train_attribute_round_trip():
    with Tracer() as t:
        x = t.variable("x", (8, 16), "float32")
        y = nd.Dropout(x, p=0.5)
    g = t.graph([y])
    drop = [n for n in g.op_nodes() if n.op_name == "Dropout"]
    if not drop or drop[0].attrs.get("training") is not TRAIN:
        drop_op = REGISTRY["Dropout"]
        node = Node(drop_op, "dropout0", [g.variables()[0].entries()[0]],
                    dict(drop_op.attrs, p=0.5, training=TRAIN), num_outputs=2)
        g = Graph([Entry(node, 0)])
    text = graph_to_json(g)
    assert '"training": ' not in text  # MXNet's spelling: the executor decides the mode
    g2 = _round_trip(g)
    assert g2.outputs[0].node.attrs["training"] is TRAIN
    x = _rand((8, 16))
    _same(g, g2, {"x": x}, is_train=True, seed=3)
    out, _ = _same(g, g2, {"x": x}, is_train=False)
    np.testing.assert_array_equal(out[0].asnumpy(), x.asnumpy())


def test_updates_round_trip():
    state = nd.zeros((3,))
    with Tracer() as t:
        x = t.variable("x", (3,), "float32")
        t.bind(state, "state")
        state += x * 0.5
        y = x + 1
    g = t.graph([y])
    assert g.updates
    g2 = _round_trip(g)
    assert [v.name for v in g2.updates] == ["state"]
    top = json.loads(graph_to_json(g))["attrs"]
    assert top["kbackend_updates"][0] == "list_int"
    _same(g, g2, {"x": _rand((3,)), "state": nd.ones((3,))})


def test_save_and_load_file(tmp_path):
    with Tracer() as t:
        x = t.variable("x", (2, 2), "float32")
        y = nd.tanh(x) * 3
    g = t.graph([y])
    path = tmp_path / "net-symbol.json"
    save_graph(g, path)
    save_graph(g, str(path))  # overwrite in place
    assert os.listdir(tmp_path) == ["net-symbol.json"]
    _same(g, load_graph(path), {"x": _rand((2, 2))})
    path.write_text("{not json")
    with pytest.raises(ValueError, match="net-symbol.json.*malformed JSON"):
        load_graph(path)


def test_variable_aval_from_attrs():
    g = graph_from_json(json.dumps({"nodes": [
        {"op": "null", "name": "a", "attrs": {"__shape__": "(2, 3)", "__dtype__": "float16"}},
        {"op": "null", "name": "b", "attrs": {"__shape__": "(0, 3)"}},
        {"op": "null", "name": "c", "attrs": {"__shape__": "(4,)", "__dtype__": "6"}},
        {"op": "add", "name": "s", "inputs": [[0, 0, 0], [1, 0, 0]]},
        {"op": "add", "name": "t", "inputs": [[3, 0, 0], [2, 0, 0]]}],
        "arg_nodes": [0, 1, 2], "heads": [[4, 0, 0]]}))
    a, b, c = [n for n in g.topo() if n.is_variable]
    assert variable_aval(a).shape == (2, 3) and variable_aval(a).dtype == np.float16
    assert variable_aval(b) is None
    assert variable_aval(c).dtype == np.int64


def test_indexing_keys_round_trip():
    with Tracer() as t:
        x = t.variable("x", (4, 6), "float32")
        a = x[[0, 2]]
        b = x[np.array([3, 1], dtype="int32"), 1:]
        d = x[..., None, -1]
    g = t.graph([a, b, d])
    text = graph_to_json(g)
    assert "array([3, 1], 'int32')" in text
    g2 = _round_trip(g)
    _same(g, g2, {"x": _rand((4, 6))})


# ------------------------------------------------------------------ attribute values
@pytest.mark.parametrize("value", [
    0, -3, 2**70, 0.9, 1e-10, -2.5e300, float("inf"), -float("inf"), True, False, None,
    "relu", "", "1", "None", "(3, 3)", "it's \"q\"\n", "__is_train__", (), (3,), (3, 3),
    [1, 2], [(1, 2), [3.5, None]], ("a", "b c"), slice(1, None, -1), Ellipsis,
    (slice(None), Ellipsis, None, 2),
])
def test_value_round_trip(value):
    text = format_value(value)
    back = parse_value(text)
    assert type(back) is type(value) and repr(back) == repr(value)


_ATOMS = st.one_of(st.none(), st.booleans(), st.integers(), st.text(),
                   st.floats(allow_nan=False), st.sampled_from([float("nan"), Ellipsis]))
_VALUES = st.recursive(_ATOMS, lambda inner: st.one_of(
    st.lists(inner, max_size=4), st.lists(inner, max_size=4).map(tuple)), max_leaves=12)


@settings(max_examples=300, deadline=None)
@given(_VALUES)
def test_value_round_trip_property(value):
    back = parse_value(format_value(value))
    assert repr(back) == repr(value)


def test_value_forms():
    assert format_value(TRAIN) == "__is_train__" and parse_value("__is_train__") is TRAIN
    assert parse_value("nan") != parse_value("nan")  # a NaN
    assert format_value((3, 3)) == "(3, 3)" and format_value("relu") == "relu"
    assert format_value(np.dtype("float16")) == "float16"
    assert format_value(np.float32) == "float32"
    assert format_value(np.int64(4)) == "4" and format_value(True) == "True"
    assert parse_value("  (1 ,2 ,)  ") == (1, 2)
    assert parse_value("NCHW") == "NCHW" and parse_value("1.5x") == "1.5x"
    for bad in ["(3, 3", "[1, 2", "(a, b)", "'open", "(1 2)", "('\\q')", "(__is_train__,)"]:
        with pytest.raises(ValueError):
            parse_value(bad)
    with pytest.raises(TypeError, match="no text form"):
        format_value(object())
    with pytest.raises(TypeError, match="no text form"):
        format_value(np.zeros(2))  # only integer and bool index arrays
    arr = parse_value(format_value(np.array([[1, 2]], dtype="uint8")))
    assert arr.dtype == np.uint8 and arr.tolist() == [[1, 2]]
    for bad in ["array([1], 'float32')", "array([1])", "array('a', 'int8')", "slice('a')"]:
        with pytest.raises(ValueError, match="array|slice"):
            parse_value(bad)


# ------------------------------------------------------------------ validation
def _doc(nodes, heads=((1, 0, 0),), **extra):
    d = {"nodes": nodes, "arg_nodes": [0], "heads": [list(h) for h in heads]}
    d.update(extra)
    return json.dumps(d)


_X = {"op": "null", "name": "x", "inputs": []}


def _relu(**kw):
    d = {"op": "relu", "name": "r", "inputs": [[0, 0, 0]]}
    d.update(kw)
    return d


def test_valid_minimal():
    g = graph_from_json(_doc([_X, _relu()]))
    out, _ = evaluate(g, {"x": nd.array([-1.0, 2.0])})
    np.testing.assert_array_equal(out[0].asnumpy(), [0, 2])


@pytest.mark.parametrize("text, match", [
    ("{nope", "malformed JSON"),
    ("[1, 2]", "expected an object"),
    (json.dumps({"heads": []}), "missing key 'nodes'"),
    (json.dumps({"nodes": []}), "missing key 'heads'"),
    (_doc([_X, {"name": "r", "inputs": [[0, 0, 0]]}]),
     r"node 1 \('r', op None\): missing key 'op'"),
    (_doc([_X, {"op": "relu", "inputs": [[0, 0, 0]]}]),
     r"node 1 \(None, op 'relu'\): missing key 'name'"),
    (_doc([_X, {"op": "relu", "name": "r"}]), r"node 1 \('r', op 'relu'\): missing key 'inputs'"),
    (_doc([_X, _relu(op="frobnicate")]), r"node 1 \('r', op 'frobnicate'\): unknown operator"),
    (_doc([_X, _relu(attrs={"alpha": "1"})]),
     r"node 1 \('r', op 'relu'\): unknown attribute 'alpha'"),
    (_doc([_X, _relu(op="elu", attrs={"alpha": "(1, "})]),
     r"node 1 \('r', op 'elu'\): attribute alpha='\(1, ' does not parse"),
    (_doc([_X, _relu(op="elu", attrs={"alpha": 1})]),
     r"node 1 .*attribute 'alpha' must be a string"),
    (_doc([_X, _relu(inputs=[[5, 0, 0]])]),
     r"node 1 \('r', op 'relu'\): input \[5, 0, 0\] refers to node 5, out of range"),
    (_doc([_X, _relu(inputs=[[1, 0, 0]])]), r"node 1 .*does not come before it"),
    (_doc([_X, _relu(inputs=[[0, 1, 0]])]), r"node 1 .*output 1 of node 0 \('x', op 'null'\)"),
    (_doc([_X, _relu(inputs=[["0", 0, 0]])]), r"node 1 .*must be \[node, output, version\]"),
    (_doc([_X, _relu(inputs=[])], attrs={"mxnet_version": ["int", 10901]}),
     r"node 1 .*has 0 inputs, but 'relu' needs x"),
    (_doc([_X, _relu(inputs=[[0, 0, 0], [0, 0, 0]])]), r"node 1 .*takes at most 1"),
    (_doc([_X, _relu()], heads=[(2, 0, 0)]),
     r"head 0: head \[2, 0, 0\] refers to node 2, out of range"),
    (_doc([_X, _relu()], heads=[(1, 3, 0)], node_row_ptr=[0, 1, 2]),
     r"head 0: .*output 3 of node 1 \('r', op 'relu'\), which has 1 output"),
    (_doc([_X, _relu()], node_row_ptr=[0, 1]), "node_row_ptr"),
    (_doc([_X, _relu()], arg_nodes=[1]), "arg_nodes"),
    (_doc([_X, _relu(attrs={"__literals__": "{\"0\": \"(\"}"})]),
     r"node 1 .*__literals__.*does not parse"),
    (_doc([_X, _relu(attrs={"__literals__": "[1]"})]), r"node 1 .*__literals__ must be"),
    (_doc([{"op": "null", "name": "c", "attrs": {"__const__": "1", "__shape__": "(2,)",
                                                  "__dtype__": "float32", "__value__": "AAAA"}},
           _relu()]), r"node 0 \('c', op 'null'\): constant of shape \(2,\)"),
    (_doc([{"op": "null", "name": "c", "attrs": {"__const__": "1"}}, _relu()]),
     r"node 0 .*needs attribute '__shape__'"),
    (_doc([_X, {"op": "null", "name": "v", "inputs": [[0, 0, 0]]}]), "node 1 .*has no inputs"),
    (_doc([_X, _relu()], attrs={"kbackend_updates": ["list_int", [1, 1, 0]]}),
     "kbackend_updates: node 1 is not a variable"),
    (_doc([_X, _relu()], attrs={"kbackend_updates": ["list_int", [0, 1, 4]]}),
     r"kbackend_updates: \[1, 4\]"),
])
def test_validation_errors(text, match):
    with pytest.raises(ValueError, match=match):
        graph_from_json(text)


def test_mxnet_attribute_types_checked():
    base = {"op": "Convolution", "name": "conv0", "inputs": [[0, 0, 0], [1, 0, 0]]}
    w = {"op": "null", "name": "w", "inputs": []}
    for attrs, match in [({"kernel": "abc", "num_filter": "2", "no_bias": "True"},
                          "kernel='abc' does not parse: expected a tuple"),
                         ({"kernel": "(3, 3)", "num_filter": "two", "no_bias": "True"},
                          "num_filter='two' does not parse: expected a number"),
                         ({"kernel": "(3, 3)", "num_filter": "2", "no_bias": "maybe"},
                          "no_bias='maybe' does not parse: expected a bool")]:
        text = json.dumps({"nodes": [_X, w, dict(base, attrs=attrs)], "arg_nodes": [0, 1],
                           "heads": [[2, 0, 0]]})
        where = r"node 2 \('conv0', op 'Convolution'\): attribute "
        with pytest.raises(ValueError, match=where + match):
            graph_from_json(text)


def test_save_errors():
    fake = OpDef(name="fused_elemwise0", inputs=("x",), attrs={})
    x = Node(None, "x")
    g = Graph([Entry(Node(fake, "fused0", [Entry(x, 0)]), 0)])
    with pytest.raises(ValueError, match=r"node 1 \('fused0', op 'fused_elemwise0'\): the "
                                         "operator is not in the registry"):
        graph_to_json(g)
    op = REGISTRY["_copyto"]
    g = Graph([Entry(Node(op, "copy0", [Entry(x, 0)], {"to": cpu(0)}), 0)])
    with pytest.raises(ValueError, match=r"node 1 \('copy0', op '_copyto'\): attribute 'to' "
                                         "cannot be saved"):
        graph_to_json(g)
    g = Graph([Entry(Node(REGISTRY["add"], "add0", [Entry(x, 0), object()]), 0)])
    with pytest.raises(ValueError, match=r"node 1 .*input 1 is a object"):
        graph_to_json(g)
    g = Graph([Entry(Node(REGISTRY["relu"], "relu0", [Entry(x, 0)], {"alpha": 1}), 0)])
    with pytest.raises(ValueError, match=r"node 1 \('relu0', op 'relu'\): attribute 'alpha' "
                                         "is not one of the operator's"):
        graph_to_json(g)
    with pytest.raises(TypeError, match="expects a Graph"):
        graph_to_json("nope")


def test_updates_in_nested_form():
    text = _doc([_X, _relu()], attrs={"kbackend_updates": [[0, 1, 0]]})
    g = graph_from_json(text)
    assert [(v.name, e.node.name) for v, e in g.updates.items()] == [("x", "r")]


# ------------------------------------------------------------------ MXNet 1.x files
MXNET_MLP = """{
  "nodes": [
    {"op": "null", "name": "data", "inputs": []},
    {"op": "Flatten", "name": "flatten0", "inputs": [[0, 0, 0]]},
    {"op": "null", "name": "fc1_weight", "attrs": {"__lr_mult__": "1.0"}, "inputs": []},
    {"op": "null", "name": "fc1_bias", "inputs": []},
    {"op": "FullyConnected", "name": "fc1",
     "attrs": {"num_hidden": "4", "no_bias": "false", "flatten": "1"},
     "inputs": [[1, 0, 0], [2, 0, 0], [3, 0, 0]]},
    {"op": "Activation", "name": "relu1", "attrs": {"act_type": "relu"}, "inputs": [[4, 0, 0]]},
    {"op": "_mul_scalar", "name": "_mulscalar0", "attrs": {"scalar": "2.0"},
     "inputs": [[5, 0, 0]]},
    {"op": "_rminus_scalar", "name": "_rminusscalar0", "attrs": {"scalar": "1", "is_int": "0"},
     "inputs": [[6, 0, 0]]},
    {"op": "elemwise_add", "name": "_plus0", "inputs": [[6, 0, 0], [7, 0, 0]]},
    {"op": "Dropout", "name": "drop0", "attrs": {"p": "0.5"}, "inputs": [[8, 0, 0]]},
    {"op": "null", "name": "fc2_weight", "inputs": []},
    {"op": "FullyConnected", "name": "fc2", "attrs": {"num_hidden": "3", "no_bias": "True"},
     "inputs": [[9, 0, 0], [10, 0, 0]]},
    {"op": "Reshape", "name": "reshape0", "attrs": {"shape": "(-1, 3)"}, "inputs": [[11, 0, 0]]},
    {"op": "null", "name": "softmax_label", "inputs": []},
    {"op": "SoftmaxOutput", "name": "softmax", "attrs": {"grad_scale": "1"},
     "inputs": [[12, 0, 0], [13, 0, 0]]},
    {"op": "sum", "name": "sum0", "attrs": {"axis": "1"}, "inputs": [[14, 0, 0]]},
    {"op": "argmax", "name": "argmax0", "attrs": {"axis": "1"}, "inputs": [[14, 0, 0]]}
  ],
  "arg_nodes": [0, 2, 3, 10, 13],
  "node_row_ptr": [0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 11, 12, 13, 14, 15, 16, 17, 18],
  "heads": [[14, 0, 0], [15, 0, 0], [16, 0, 0]],
  "attrs": {"mxnet_version": ["int", 10600]}
}"""


def test_load_mxnet_1x_json():
    g = graph_from_json(MXNET_MLP)
    ops = {n.name: n for n in g.op_nodes()}
    assert ops["flatten0"].op_name == "flatten"
    assert ops["_plus0"].op_name == "add"
    assert ops["_mulscalar0"].op_name == "multiply" and ops["_mulscalar0"].inputs[1] == 2
    assert type(ops["_mulscalar0"].inputs[1]) is int  # MXNet cast "2.0" to the array's dtype
    assert type(ops["_rminusscalar0"].inputs[0]) is int
    assert ops["_rminusscalar0"].inputs[0] == 1 and isinstance(ops["_rminusscalar0"].inputs[1],
                                                                 Entry)
    assert ops["fc1"].attrs["no_bias"] is False and ops["fc1"].attrs["flatten"] is True
    assert ops["fc2"].inputs[2] is None
    assert ops["drop0"].attrs["training"] is TRAIN and ops["drop0"].num_outputs == 2
    assert ops["softmax"].attrs["grad_scale"] == 1.0
    assert type(ops["softmax"].attrs["grad_scale"]) is float
    assert ops["reshape0"].op_name == "reshape"
    assert ops["sum0"].op_name == "sum" and ops["sum0"].attrs["_mx"] is True  # MXNet's sum
    assert ops["argmax0"].attrs["dtype"] == "float32"  # MXNet's argmax gives floats
    assert [v.name for v in g.variables()] == ["data", "fc1_weight", "fc1_bias", "fc2_weight",
                                               "softmax_label"]
    rs = np.random.RandomState(0)
    data = rs.randn(2, 2, 3).astype("float32")
    w1, b1 = rs.randn(4, 6).astype("float32"), rs.randn(4).astype("float32")
    w2 = rs.randn(3, 4).astype("float32")
    vals = {"data": nd.array(data), "fc1_weight": nd.array(w1), "fc1_bias": nd.array(b1),
            "fc2_weight": nd.array(w2), "softmax_label": nd.array([0.0, 1.0])}
    out, _ = evaluate(g, vals, is_train=False)
    h = np.maximum(data.reshape(2, 6) @ w1.T + b1, 0) * 2
    h = h + (1 - h)
    logits = h @ w2.T
    expect = np.exp(logits - logits.max(1, keepdims=True))
    expect /= expect.sum(1, keepdims=True)
    np.testing.assert_allclose(out[0].asnumpy(), expect, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(out[1].asnumpy(), [1, 1], rtol=1e-6)
    assert out[2].dtype == np.float32
    np.testing.assert_array_equal(out[2].asnumpy(), expect.argmax(1))
    # and it saves in our form and comes back the same
    g2 = _round_trip(g)
    _same(g, g2, vals)


def test_load_mxnet_legacy_keys_and_conv():
    text = json.dumps({
        "nodes": [
            {"op": "null", "name": "data", "inputs": []},
            {"op": "null", "name": "conv_weight", "inputs": []},
            {"op": "Convolution", "name": "conv",
             "param": {"kernel": "[3, 3]", "num_filter": "2", "no_bias": "1", "pad": "(1,1)"},
             "attr": {"__ctx_group__": "dev1"}, "inputs": [[0, 0], [1, 0]]},
            {"op": "Pooling", "name": "pool",
             "attrs": {"kernel": "(2, 2)", "stride": "(2, 2)", "pool_type": "max"},
             "inputs": [[2, 0]]},
            {"op": "_plus_scalar", "name": "p", "attrs": {"scalar": "1"}, "inputs": [[3, 0]]},
        ],
        "arg_nodes": [0, 1], "heads": [[4, 0]]})
    g = graph_from_json(text)
    conv = g.outputs[0].node.inputs[0].node.inputs[0].node
    assert conv.attrs["kernel"] == (3, 3) and conv.attrs["no_bias"] is True
    assert conv.user_attrs == {"__ctx_group__": "dev1"}
    x = _rand((1, 1, 4, 4))
    w = _rand((2, 1, 3, 3), seed=1)
    out, _ = evaluate(g, {"data": x, "conv_weight": w})
    ref = nd.Pooling(nd.Convolution(x, w, None, kernel=(3, 3), num_filter=2, no_bias=True,
                                    pad=(1, 1)), kernel=(2, 2), stride=(2, 2)) + 1
    np.testing.assert_array_equal(out[0].asnumpy(), ref.asnumpy())


MXNET_BN = {
    "nodes": [
        {"op": "null", "name": "data", "inputs": []},
        {"op": "null", "name": "bn0_gamma", "inputs": []},
        {"op": "null", "name": "bn0_beta", "inputs": []},
        {"op": "null", "name": "bn0_moving_mean", "attrs": {"__init__": "[\"zero\", {}]"},
         "inputs": []},
        {"op": "null", "name": "bn0_moving_var", "inputs": []},
        {"op": "BatchNorm", "name": "bn0",
         "attrs": {"eps": "1e-05", "fix_gamma": "False", "momentum": "0.9"},
         "inputs": [[0, 0, 0], [1, 0, 0], [2, 0, 0], [3, 0, 1], [4, 0, 1]]}],
    "arg_nodes": [0, 1, 2, 3, 4], "node_row_ptr": [0, 1, 2, 3, 4, 5, 8],
    "heads": [[5, 0, 0]], "attrs": {"mxnet_version": ["int", 10901]}}


def test_load_mxnet_batchnorm_aux_updates():
    g = graph_from_json(json.dumps(MXNET_BN))
    bn = g.outputs[0].node
    assert bn.attrs["training"] is TRAIN and bn.attrs["eps"] == 1e-5
    assert bn.num_outputs == 5  # MXNet counts 3 (node_row_ptr); ours has 5
    assert sorted(v.name for v in g.updates) == ["bn0_moving_mean", "bn0_moving_var"]
    x = _rand((4, 3, 2))
    vals = {"data": x, "bn0_gamma": nd.ones((3,)), "bn0_beta": nd.zeros((3,)),
            "bn0_moving_mean": nd.zeros((3,)), "bn0_moving_var": nd.ones((3,))}
    _, upd = evaluate(g, vals, is_train=True)
    np.testing.assert_allclose(upd["bn0_moving_mean"].asnumpy(),
                               x.asnumpy().mean(axis=(0, 2)) * 0.1, rtol=1e-5, atol=1e-7)
    _, upd = evaluate(g, vals, is_train=False)
    np.testing.assert_array_equal(upd["bn0_moving_mean"].asnumpy(), np.zeros(3))
    g2 = _round_trip(g)
    _same(g, g2, vals, is_train=True)
    _same(g, g2, vals, is_train=False)


def test_traced_batchnorm_round_trip():
    gamma, beta = nd.ones((3,)), nd.zeros((3,))
    mean, var = nd.zeros((3,)), nd.ones((3,))
    with Tracer() as t:
        x = t.variable("x", (4, 3, 5), "float32")
        for a, name in [(gamma, "gamma"), (beta, "beta"), (mean, "mean"), (var, "var")]:
            t.bind(a, name)
        y = nd.BatchNorm(x, gamma, beta, mean, var, fix_gamma=False)
    g = t.graph([y])
    g2 = _round_trip(g)
    assert sorted(v.name for v in g2.updates) == sorted(v.name for v in g.updates)
    vals = {"x": _rand((4, 3, 5)), "gamma": _rand((3,), seed=1), "beta": _rand((3,), seed=2),
            "mean": nd.zeros((3,)), "var": nd.ones((3,))}
    _same(g, g2, vals, is_train=True)
    _same(g, g2, vals, is_train=False)


@pytest.mark.parametrize("name, size", [("resnet18_v1", 32), ("mobilenet0.25", 32),
                                        ("squeezenet1.1", 224)])
def test_model_zoo_round_trip(name, size):
    net = vision.get_model(name, classes=10)
    net.initialize()
    x = _rand((1, 3, size, size))
    net(x)
    params = net.collect_params()
    with Tracer() as t:
        data = t.variable("data", x.shape, "float32")
        for key, p in params.items():
            t.bind(p.data(), key)
        y = net(data)
    g = t.graph([y])
    g2 = _round_trip(g)
    assert sorted(v.name for v in g2.updates) == sorted(v.name for v in g.updates)
    vals = {"data": x}
    vals.update({key: p.data() for key, p in params.items()})
    _same(g, g2, vals)
    _same(g, g2, vals, is_train=True, seed=5)


def test_fused_program_round_trip():
    # The fusion pass's operator is in the registry and its program is plain data, so an
    # optimized graph saves too (MXNet itself would not know the operator).
    from core.ops import F

    prog = (("multiply", (("in", 0), ("in", 1))), ("add", (("step", 0), 1.0)),
            ("relu", (("step", 1),)))
    with Tracer() as t:
        x = t.variable("x", (2, 3), "float32")
        y = F._fused_elemwise(x, x, program=prog, outputs=2)
    g = t.graph([y])
    g2 = _round_trip(g)
    assert g2.outputs[0].node.attrs["program"] == prog
    _same(g, g2, {"x": _rand((2, 3))})


def test_load_mxnet_internal_names():
    doc = {"nodes": [
        {"op": "null", "name": "data", "inputs": []},
        {"op": "_zeros", "name": "z", "attrs": {"shape": "(2, 3)", "ctx": "", "dtype": "float32"},
         "inputs": []},
        {"op": "_random_uniform", "name": "u", "attrs": {"low": "0", "high": "1",
                                                          "shape": "(2, 3)", "ctx": ""},
         "inputs": []},
        {"op": "Concat", "name": "c", "attrs": {"num_args": "3", "dim": "1"},
         "inputs": [[0, 0, 0], [1, 0, 0], [2, 0, 0]]},
        {"op": "SliceChannel", "name": "s", "attrs": {"num_outputs": "3", "axis": "1"},
         "inputs": [[3, 0, 0]]},
        {"op": "broadcast_mul", "name": "m", "inputs": [[4, 0, 0], [4, 2, 0]]},
        {"op": "_linalg_gemm2", "name": "g", "attrs": {"transpose_b": "True"},
         "inputs": [[5, 0, 0], [5, 0, 0]]}],
        "arg_nodes": [0], "node_row_ptr": [0, 1, 2, 3, 4, 7, 8, 9],
        "heads": [[6, 0, 0], [4, 1, 0]], "attrs": {"mxnet_version": ["int", 10901]}}
    g = graph_from_json(json.dumps(doc))
    assert [n.op_name for n in g.op_nodes()] == ["zeros", "random_uniform", "concatenate",
                                                 "split", "multiply", "linalg_gemm2"]
    data = _rand((2, 3))
    crandom.seed(0)
    (gram, zeros), _ = evaluate(g, {"data": data})
    np.testing.assert_array_equal(zeros.asnumpy(), np.zeros((2, 3)))
    d = data.asnumpy()
    crandom.seed(0)
    u = nd.random.uniform(0, 1, shape=(2, 3)).asnumpy()
    np.testing.assert_allclose(gram.asnumpy(), (d * u) @ (d * u).T, rtol=1e-5)


def test_np_shape_graphs_carry_mxnets_is_np_shape_attr():
    import json as _json

    from core import sym as _sym
    from gluon.compat.util import np_shape as _np_shape

    net = _sym.FullyConnected(_sym.var("data"), num_hidden=4)
    assert "is_np_shape" not in _json.loads(net.tojson())["attrs"]
    with _np_shape(True):
        text = net.tojson()
        assert _json.loads(text)["attrs"]["is_np_shape"] == ["int", 1]
        back = _sym.fromjson(text) if hasattr(_sym, "fromjson") else _sym.load_json(text)
    assert back.list_arguments() == net.list_arguments()
