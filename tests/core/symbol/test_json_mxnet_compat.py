"""Symbol JSON written by real MXNet 1.x loads here and computes what MXNet computed.

The fixtures in ``tests/data/mxnet/json/`` were written by real MXNet 1.9.1
(``make_json_fixtures.py`` beside them): a graph composed with ``mx.sym`` (three heads,
hidden attributes, ``ctx_group``), a Gluon ``export``, and MXNet's own legacy 0.8.0 file
``save_000800.json`` (``param``/``attr`` keys, ``backward_source_id``, two-entry
references and heads, no auxiliary states) with what MXNet 1.9.1 makes of it. The last
test writes a loaded graph back and has real MXNet run it (skips without MXNet).
"""
from __future__ import annotations

import json
import os

import numpy as np
import pytest

from core import nd, sym
from gluon import SymbolBlock
from tests.mxnet_ref import requires_mxnet, run_mxnet

HERE = os.path.join(os.path.dirname(__file__), "..", "..", "data", "mxnet", "json")


def _f(name: str) -> str:
    return os.path.abspath(os.path.join(HERE, name))


def _run(prefix: str, inputs: list[str]):
    block = SymbolBlock.imports(_f(f"{prefix}-symbol.json"), inputs, _f(f"{prefix}-0000.params"))
    return block


def test_composed_symbol_matches_mxnet_outputs():
    block = _run("composed", ["data"])
    x = nd.array(np.load(_f("composed-input.npy")))
    outs = block(x)
    assert len(outs) == 3
    for i, out in enumerate(outs):
        want = np.load(_f(f"composed-output{i}.npy"))
        np.testing.assert_allclose(out.asnumpy().reshape(want.shape), want, rtol=1e-5,
                                   atol=1e-6, err_msg=f"output {i}")


def test_composed_symbol_keeps_mxnet_attributes():
    s = sym.load(_f("composed-symbol.json"))
    attrs = s.attr_dict()
    assert attrs["data"]["__lr_mult__"] == "0.5"
    assert attrs["data"]["__layout__"] == "NCHW"
    assert attrs["conv_weight"]["__ctx_group__"] == "dev1"
    assert attrs["conv_weight"]["__wd_mult__"] == "0.1"
    assert json.loads(attrs["conv_weight"]["__init__"])[0] == "xavier"
    assert s.list_auxiliary_states() == ["bn_moving_mean", "bn_moving_var"]
    assert len(s.list_outputs()) == 3


def test_gluon_export_of_real_mxnet_matches_its_output():
    block = _run("gluon", ["data"])
    x = nd.array(np.load(_f("gluon-input.npy")))
    want = np.load(_f("gluon-output.npy"))
    np.testing.assert_allclose(block(x).asnumpy(), want, rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("prefix", ["gluon_rnn", "gluon_misc"])
def test_more_gluon_exports_of_real_mxnet(prefix):
    """RNN layers (``_rnn_param_concat``, begin states ``_zeros`` of batch size 0) and
    ``SoftmaxActivation`` (both modes), ``split``, ``where``, ``norm``."""
    block = _run(prefix, ["data"])
    outs = block(nd.array(np.load(_f(f"{prefix}-input0.npy"))))
    outs = outs if isinstance(outs, (list, tuple)) else [outs]
    wants = sorted(f for f in os.listdir(HERE) if f.startswith(f"{prefix}-output"))
    assert len(outs) == len(wants)
    for i, out in enumerate(outs):
        want = np.load(_f(f"{prefix}-output{i}.npy"))
        np.testing.assert_allclose(out.asnumpy().reshape(want.shape), want, rtol=1e-5,
                                   atol=1e-6, err_msg=f"{prefix}: output {i}")


def test_load_000800():
    """MXNet's test_load_000800: the 0.8.0 file loads as the symbol it was saved from."""
    with open(_f("save_000800-expected.json")) as f:
        expected = json.load(f)
    s = sym.load(_f("save_000800.json"))
    loaded = expected["loaded"]
    assert s.list_arguments() == loaded["arguments"]
    assert s.list_auxiliary_states() == loaded["auxiliary_states"]
    assert s.list_outputs() == loaded["outputs"]
    original = expected["original"]
    assert s.list_arguments() == original["arguments"]
    assert s.list_auxiliary_states() == original["auxiliary_states"]
    ours = s.attr_dict()
    for name, kv in original["attr_dict"].items():
        assert name in ours, name
        for k, v in kv.items():
            if k.startswith("__") and k.endswith("__"):
                assert ours[name].get(k) == v, (name, k, ours[name].get(k), v)
    block = SymbolBlock.imports(_f("save_000800.json"), ["data", "softmax_label"],
                                _f("save_000800-0000.params"))
    x = nd.array(np.load(_f("save_000800-input.npy")))
    out = block(x, nd.zeros((1,)))
    np.testing.assert_allclose(out.asnumpy(), np.load(_f("save_000800-output.npy")),
                               rtol=1e-5, atol=1e-6)


def _doc(nodes, heads, **top):
    return json.dumps({"nodes": nodes, "heads": heads, **top})


def test_legacy_hidden_keys_and_missing_aux_inputs():
    text = _doc([
        {"op": "null", "param": {}, "name": "x", "inputs": [], "backward_source_id": -1,
         "attr": {"ctx_group": "g1", "lr_mult": "0.5"}},
        {"op": "BatchNorm", "param": {"fix_gamma": "False"}, "name": "bn",
         "inputs": [[0, 0]], "backward_source_id": -1,
         "attr": {"ctx_group": "g1", "gamma_wd_mult": "0.0"}},
        {"op": "argmax", "param": {"axis": "-1"}, "name": "am", "inputs": [[1, 0]],
         "backward_source_id": -1}], [[1, 0], [2, 0]])
    s = sym.load_json(text)
    assert s.list_arguments() == ["x", "bn_gamma", "bn_beta"]
    assert s.list_auxiliary_states() == ["bn_moving_mean", "bn_moving_var"]
    attrs = s.attr_dict()
    assert {k: attrs["x"][k] for k in ("__ctx_group__", "__lr_mult__")} == \
        {"__ctx_group__": "g1", "__lr_mult__": "0.5"}
    assert attrs["bn"]["__ctx_group__"] == "g1"
    assert attrs["bn_moving_mean"]["__ctx_group__"] == "g1"
    # before 0.9.5, argmax's axis=-1 meant all axes
    am = next(e.node for e in s.graph.outputs if e.node.name == "am")
    assert am.attrs["axis"] is None


def test_heads_with_three_entries_and_node_row_ptr():
    text = _doc([{"op": "null", "name": "x", "inputs": []},
                 {"op": "relu", "name": "r", "attrs": {}, "inputs": [[0, 0, 0]]}],
                [[1, 0, 0]], arg_nodes=[0], node_row_ptr=[0, 1, 2],
                attrs={"mxnet_version": ["int", 10600]})
    s = sym.load_json(text)
    out = s.eval(x=nd.array([-1.0, 2.0]))[0]
    assert out.asnumpy().tolist() == [0.0, 2.0]


@requires_mxnet
def test_real_mxnet_runs_the_fixture_written_back(tmp_path):
    s = sym.load(_f("composed-symbol.json"))
    path = os.fspath(tmp_path / "again-symbol.json")
    s.save(path)
    with open(path) as f:
        text = f.read()
    assert "__kbackend__" not in text and '"training"' not in text
    out_file = os.fspath(tmp_path / "out.npz")
    run_mxnet(f"""
import numpy as np, mxnet as mx
blk = mx.gluon.SymbolBlock.imports({path!r}, ["data"], {_f("composed-0000.params")!r})
out = blk(mx.nd.array(np.load({_f("composed-input.npy")!r})))
np.savez({out_file!r}, *[o.asnumpy() for o in out])
""")
    z = np.load(out_file)
    for i in range(3):
        np.testing.assert_allclose(z[f"arr_{i}"], np.load(_f(f"composed-output{i}.npy")),
                                   rtol=1e-5, atol=1e-6)


# --------------------------------------------------------------------------- ops sweep
_UNARY = ["abs", "arccos", "arcsin", "arctan", "arcsinh", "cbrt", "ceil", "cos", "cosh",
          "degrees", "erf", "erfinv", "exp", "expm1", "fix", "floor", "gamma", "gammaln",
          "log", "log10", "log1p", "log2", "logical_not", "negative", "radians",
          "reciprocal", "relu", "rint", "rsqrt", "sigmoid", "sign", "sin", "sinh", "sqrt",
          "square", "tan", "tanh", "trunc", "softsign", "round"]


def _unary(name):
    return lambda x, y: [getattr(sym, name)(x)]


def _sweep_cases():
    s = sym
    cases = {u: _unary(u) for u in _UNARY}
    cases.update({
        "arccosh_arctanh": lambda x, y: [s.arccosh(x + 1.5), s.arctanh(x * 0.5)],
        "binary": lambda x, y: [x + y, x - y, x * y, x / y, s.power(x, y), s.maximum(x, y),
                                s.minimum(x, y), s.broadcast_mod(x, y),
                                s.broadcast_hypot(x, y)],
        "scalar": lambda x, y: [x + 1, 2 - x, x * 3, 1 / x, x / 4, x ** 2, 2 ** x,
                                s.maximum(x, 0.5), s.minimum(x, 0.5), x % 0.3, 1.5 % x],
        "compare": lambda x, y: [x > y, x >= y, x < y, x <= y, x == y, x != y, x > 0.5,
                                 0.5 > x, x <= 0.4, 0.4 <= x],
        "logical": lambda x, y: [s.logical_and(x > 0.5, y > 0.5),
                                 s.logical_or(x > 0.5, y > 0.5),
                                 s.logical_xor(x > 0.5, y > 0.5)],
        "reduce": lambda x, y: [s.sum(x, axis=1), s.mean(x, axis=(0, 2), keepdims=True),
                                s.prod(x, axis=2), s.max(x, axis=0), s.min(x, axis=1),
                                s.nansum(x, axis=1), s.sum(x, axis=1, exclude=True)],
        "argmax": lambda x, y: [s.argmax(x, axis=1), s.argmin(x, axis=2, keepdims=True)],
        "shape": lambda x, y: [s.reshape(x, shape=(0, -1)), s.Reshape(x, shape=(-3, 0)),
                               s.transpose(x), s.transpose(x, axes=(1, 0, 2)),
                               s.expand_dims(x, axis=1), s.flatten(x), s.swapaxes(x, 0, 2),
                               s.flip(x, axis=1), s.tile(x, reps=(1, 2, 1)),
                               s.repeat(x, repeats=2, axis=1)],
        "slice": lambda x, y: [s.slice(x, begin=(0, 1, None), end=(None, 3, None)),
                               s.slice_axis(x, axis=2, begin=1, end=3),
                               s.slice_like(x, s.slice_axis(y, axis=1, begin=0, end=2),
                                            axes=(1,)),
                               s.squeeze(s.expand_dims(x, axis=0), axis=0)],
        "concat_stack": lambda x, y: [s.concat(x, y, dim=2), s.stack(x, y, axis=1),
                                      s.Concat(x, y, dim=0), s.add_n(x, y, x, num_args=3),
                                      s.ElementWiseSum(x, y)],
        "split": lambda x, y: [*[s.split(x, num_outputs=3, axis=1)[i] for i in range(3)],
                               *[s.SliceChannel(x, num_outputs=2, axis=0, squeeze_axis=True)[i]
                                 for i in range(2)]],
        "softmax": lambda x, y: [s.softmax(x, axis=1), s.log_softmax(x),
                                 s.softmax(x, temperature=2.0)],
        "clip_cast_like": lambda x, y: [
            s.clip(x, 0.2, 0.6), s.cast(x, dtype="float64"), s.zeros_like(x),
            s.ones_like(x), s.BlockGrad(x),
            s.broadcast_like(s.slice_axis(x, axis=0, begin=0, end=1), y),
            s.reshape_like(s.reshape(x, shape=(24,)), y),
            s.norm(x, axis=2), s.norm(x, ord=1, axis=1, keepdims=True),
            s.CTCLoss(s.reshape(x, shape=(6, 1, 4)), s.floor(s.slice(
                s.reshape(y, shape=(6, 4)), begin=(0, 0), end=(1, 2)) * 3),
                blank_label="last"),
            s.reshape_like(x, s.reshape(y, shape=(6, 4)), lhs_begin=0, lhs_end=2, rhs_begin=0,
                           rhs_end=1),
            s.broadcast_to(s.slice_axis(x, axis=0, begin=0, end=1), shape=(2, 3, 4))],
        "dot": lambda x, y: [s.dot(s.reshape(x, shape=(6, 4)), s.reshape(y, shape=(4, 6))),
                             s.batch_dot(x, s.swapaxes(y, 1, 2))],
        "index": lambda x, y: [s.where(x > 0.5, x, y),
                               s.pick(x, s.argmax(x, axis=2), axis=2),
                               s.one_hot(s.argmax(x, axis=2), depth=4),
                               s.topk(x, k=2, axis=2, ret_typ="value")],
        "pad": lambda x, y: [
            s.pad(s.reshape(x, shape=(1, 2, 3, 4)), mode="constant",
                  pad_width=(0, 0, 0, 0, 1, 1, 2, 0), constant_value=0.5),
            s.pad(s.reshape(x, shape=(1, 2, 3, 4)), mode="edge",
                  pad_width=(0, 0, 0, 0, 0, 2, 1, 1)),
            s.pad(s.reshape(x, shape=(1, 2, 3, 4)), mode="reflect",
                  pad_width=(0, 0, 0, 0, 1, 1, 1, 1))],
        "nn_misc": lambda x, y: [s.L2Normalization(x), s.smooth_l1(x, scalar=1.0),
                                 s.hard_sigmoid(x), s.LeakyReLU(x, act_type="leaky", slope=0.2),
                                 s.SequenceMask(x), s.SequenceReverse(x), s.SequenceLast(x)],
    })
    cases["traced_getitem_bias_act"] = _traced
    cases["traced_keras_ops"] = _traced_keras
    return cases


def _traced(x, y):
    """Operators only tracing makes: indexing (``_getitem``) and Gluon's ``_bias_act``."""
    from core.ops import F
    from core.symbol.symbol import Symbol
    from core.symbol.trace import Tracer

    with Tracer() as t:
        a = t.variable("x", (2, 3, 4), "float32")
        b = t.variable("y", (2, 3, 4), "float32")
        outs = [a[1], a[:, 1:3], a[0, ::2, -1], a[..., 1], a[-1, :, 1:4:2],
                F._bias_act(a, b[0, 0], act_type="tanh", axis=-1),
                F._bias_act(a, b[0, :, 0], act_type="sigmoid", axis=1)]
    g = t.graph(outs)
    return [Symbol.from_graph(g)[i] for i in range(len(outs))]


def _traced_keras(x, y):
    """Operators of traced Keras models (kbackend.save_mxnet_model): moveaxis, matmul
    (dot, batch_dot, linalg_gemm2), gelu (exact and tanh), silu, selu, softplus."""
    from core.ops import F
    from core.symbol.symbol import Symbol
    from core.symbol.trace import Tracer

    with Tracer() as t:
        a = t.variable("x", (2, 3, 4), "float32")
        b = t.variable("y", (2, 3, 4), "float32")
        m = F.reshape(a, newshape=(6, 4))
        w = F.reshape(b, newshape=(4, 6))
        a4 = F.reshape(a, newshape=(1, 2, 3, 4))
        b4 = F.reshape(b, newshape=(1, 2, 4, 3))
        outs = [F.moveaxis(a, source=-1, destination=0), F.moveaxis(a, source=0, destination=2),
                F.matmul(m, w), F.matmul(a, w), F.matmul(m, m, transpose_b=True),
                F.matmul(w, w, transpose_a=True), F.matmul(a, F.transpose(b, axes=(0, 2, 1))),
                F.matmul(a, b, transpose_b=True), F.matmul(a4, b4),
                F.matmul(a4, a4, transpose_a=True),
                F.matmul(F.reshape(a, newshape=(24,))[:4], w),
                F.gelu(a), F.gelu(a, approximate=True), F.silu(a), F.silu(a, beta=2.0),
                F.selu(a - 0.5), F.softplus(a)]
    g = t.graph(outs)
    return [Symbol.from_graph(g)[i] for i in range(len(outs))]


_SWEEP_SCRIPT = """
import json, os, numpy as np, mxnet as mx
root = {root!r}
failed = {{}}
for case in sorted(os.listdir(root)):
    d = os.path.join(root, case)
    try:
        s = mx.sym.load(os.path.join(d, "s.json"))
        args = {{n: mx.nd.array(np.load(os.path.join(d, n + ".npy"))) for n in s.list_arguments()}}
        ex = s.bind(mx.cpu(), args, grad_req="null")
        np.savez(os.path.join(d, "mx.npz"), *[o.asnumpy() for o in ex.forward(is_train=False)])
    except Exception as e:
        failed[case] = str(e)[:300]
print(json.dumps(failed))
"""


@requires_mxnet
def test_real_mxnet_computes_our_lowered_operators(tmp_path):
    """Every lowering rule, written by graph_to_json(strict=True), run by real MXNet."""
    from core.symbol.json_io import graph_to_json
    from core.symbol.json_lower import RULES

    rs = np.random.RandomState(0)
    x_val = rs.uniform(0.1, 0.9, (2, 3, 4)).astype("float32")
    y_val = rs.uniform(0.1, 0.9, (2, 3, 4)).astype("float32")
    ours, used = {}, set()
    for case, build in _sweep_cases().items():
        x, y = sym.var("x"), sym.var("y")
        g = sym.Group(build(x, y))
        used |= {n.op.name for n in g.graph.op_nodes()}
        d = tmp_path / case
        d.mkdir()
        text = graph_to_json(g.graph, strict=True)
        (d / "s.json").write_text(text)
        np.save(d / "x.npy", x_val)
        np.save(d / "y.npy", y_val)
        ours[case] = [o.asnumpy() for o in g.eval(x=nd.array(x_val), y=nd.array(y_val))]
        again = sym.load_json(text).eval(x=nd.array(x_val), y=nd.array(y_val))
        for i, (a, b) in enumerate(zip(ours[case], again)):  # and we read it back
            np.testing.assert_allclose(b.asnumpy(), a, rtol=1e-6, err_msg=f"{case}: {i}")
    failed = json.loads(run_mxnet(_SWEEP_SCRIPT.format(root=os.fspath(tmp_path))))
    assert not failed, failed
    for case, outs in ours.items():
        z = np.load(tmp_path / case / "mx.npz")
        assert len(z.files) == len(outs), case
        for i, a in enumerate(outs):
            b = z[f"arr_{i}"]
            assert a.size == b.size, (case, i, a.shape, b.shape)
            np.testing.assert_allclose(a.reshape(b.shape).astype("float64"),
                                       b.astype("float64"), rtol=1e-4, atol=1e-5,
                                       err_msg=f"{case}: output {i}")
    # the Gluon layers' rules are run by tests/gluon/test_export_mxnet.py
    gluon_side = {"Activation", "BatchNorm", "Convolution", "Deconvolution", "Dropout",
                  "Embedding", "FullyConnected", "LeakyReLU", "Pooling", "RNN",
                  "_layer_norm", "_instance_norm", "_group_norm"}
    untested = set(RULES) - used - gluon_side
    assert untested <= _NOT_SWEPT, sorted(untested - _NOT_SWEPT)


# Rules no sweep case reaches yet (each is MXNet's operator of the same name and
# arguments, checked against MXNet 1.9.1's argument lists when the table was written).
_NOT_SWEPT = {"BilinearSampler", "GridGenerator", "LRN", "LinearRegressionOutput",
              "LogisticRegressionOutput", "MAERegressionOutput", "MakeLoss", "SoftmaxOutput",
              "UpSampling", "gather_nd", "take", "linalg_gemm", "linalg_gemm2", "linalg_det",
              "linalg_slogdet", "copy", "nanprod", "hypot", "mod"}


def test_files_of_format_version_1_still_load():
    """Before MXNet's spelling (kbackend_version 1): every node ours, training attrs."""
    from core.symbol.graph import TRAIN

    text = _doc([{"op": "null", "name": "x", "inputs": []},
                 {"op": "Dropout", "name": "d", "attrs": {"p": "0.5", "training": "__is_train__"},
                  "inputs": [[0, 0, 0]]},
                 {"op": "add", "name": "a", "attrs": {"__literals__": '{"1": "1"}'},
                  "inputs": [[1, 0, 0]]}],
                [[2, 0, 0]], attrs={"mxnet_version": ["int", 10901],
                                    "kbackend_version": ["int", 1]})
    s = sym.load_json(text)
    nodes = {n.name: n for n in s.graph.op_nodes()}
    assert nodes["d"].attrs["training"] is TRAIN
    assert nodes["a"].inputs[1] == 1
    assert s.eval(x=nd.array([1.0, 2.0]))[0].asnumpy().tolist() == [2.0, 3.0]


def _node_graph(op_name, n_inputs, **attrs):
    from core.ops.registry import REGISTRY
    from core.symbol.graph import Entry, Graph, Node

    op = REGISTRY[op_name]
    xs = [Node(None, name) for name in ("x", "y", "z", "u", "v")[:n_inputs]]
    node = Node(op, "n0", [Entry(x, 0) for x in xs], dict(op.attrs, **attrs),
                num_outputs=5 if op_name == "BatchNorm" else 2 if op_name == "Dropout" else 1)
    return Graph([Entry(node, 0)])


def test_internal_operators_never_reach_a_strict_file():
    from core.symbol.json_io import graph_to_json

    g = _node_graph("_act_grad", 2, act_type="relu")
    with pytest.raises(ValueError, match=r"node 2 \('n0', op '_act_grad'\): MXNet 1.9 cannot "
                                         r"load this node: '_act_grad' is an internal operator"):
        graph_to_json(g, strict=True)
    text = graph_to_json(g)  # not strict: our own spelling, marked
    node = json.loads(text)["nodes"][2]
    assert node["op"] == "_act_grad" and node["attrs"]["__kbackend__"] == "1"


def test_fixed_training_modes_are_written_the_mxnet_way():
    from core.symbol.json_io import graph_from_json, graph_to_json

    def written(g):
        return json.loads(graph_to_json(g, strict=True))["nodes"][-1]

    bn = written(_node_graph("BatchNorm", 5, training=False))
    assert bn["op"] == "BatchNorm" and bn["attrs"]["use_global_stats"] == "True"
    assert "training" not in bn["attrs"]
    with pytest.raises(ValueError, match="BatchNorm with training fixed to True"):
        graph_to_json(_node_graph("BatchNorm", 5, training=True), strict=True)
    assert written(_node_graph("Dropout", 1, training=True))["attrs"]["mode"] == "always"
    assert written(_node_graph("Dropout", 1, training=False))["op"] == "_copy"
    # and they read back with the same meaning
    x = nd.array(np.ones((4, 8), dtype="float32"))
    from core.symbol.graph import evaluate

    for is_train in (False, True):
        g = graph_from_json(graph_to_json(_node_graph("Dropout", 1, training=False, p=0.5)))
        assert evaluate(g, {"x": x}, is_train=is_train)[0][0].asnumpy().tolist() == \
            x.asnumpy().tolist()
    g = graph_from_json(graph_to_json(_node_graph("Dropout", 1, training=True, p=0.5)))
    out = evaluate(g, {"x": x}, is_train=False)[0][0].asnumpy()
    assert set(np.unique(out)) <= {0.0, 2.0} and (out == 0).any()
