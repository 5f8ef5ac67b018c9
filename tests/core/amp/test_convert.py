"""AMP's graph conversion: convert_symbol, convert_model, convert_hybrid_block."""
import json

import numpy as np
import pytest

from core import amp, nd, sym
from core.amp import amp as amp_mod
from core.dtypes import bfloat16
from gluon import nn
from tests.mxnet_ref import requires_mxnet, run_mxnet

F16, F32 = np.dtype("float16"), np.dtype("float32")


def _ops(s):
    return [(n["op"], n["name"]) for n in json.loads(s.tojson(remove_amp_cast=False))["nodes"]]


def _net():
    net = nn.HybridSequential()
    net.add(nn.Dense(8, activation="relu", in_units=4), nn.BatchNorm(in_channels=8),
            nn.Dense(3, in_units=8))
    net.initialize()
    return net


@pytest.mark.parametrize("dt", ["float16", "bfloat16"])
@pytest.mark.parametrize("cast_optional", [False, True])
def test_convert_hybrid_block_output_dtype_and_values(dt, cast_optional):
    net = _net()
    net.hybridize()
    x = nd.array(np.random.RandomState(0).rand(5, 4))
    ref = net(x).asnumpy()
    conv = amp.convert_hybrid_block(net, dt, cast_optional_params=cast_optional)
    out = conv(x)
    assert out.dtype == F32  # MXNet 1.9: the graph's outputs are cast back to float32
    internals = conv._symbol.get_internals()
    last_fc = [n for n in internals.list_outputs()
               if n.startswith("fullyconnected") and "amp_cast" not in n][-1]
    assert last_fc.endswith("_output")
    args = {k: p.data() for k, p in conv.collect_params().items()}
    inner = internals[last_fc].eval(data=x, **args)[0]
    assert inner.dtype == np.dtype(dt)  # the Dense ran in the target dtype
    np.testing.assert_allclose(inner.asnumpy().astype(np.float32), ref, rtol=0.05, atol=0.02)
    np.testing.assert_allclose(out.asnumpy().astype(np.float32), ref, rtol=0.05, atol=0.02)
    params = [(k, p.data().dtype) for k, p in conv.collect_params().items()]
    want = np.dtype(dt) if cast_optional else F32
    dense = [d for k, d in params if k.startswith("dense")]
    norm = [d for k, d in params if k.startswith("batchnorm")]
    assert len(dense) == 4 and all(d == want for d in dense), params
    assert len(norm) == 4 and all(d == F32 for d in norm), params  # stay float32


def test_convert_hybrid_block_needs_a_traced_hybrid_block():
    net = _net()
    with pytest.raises(RuntimeError, match="hybridize"):
        amp.convert_hybrid_block(net)
    with pytest.raises(TypeError, match="HybridBlock"):
        amp.convert_hybrid_block(object())


def test_convert_symbol_casts_by_list_and_shares_casts():
    data = sym.var("data")
    fc1 = sym.FullyConnected(data, num_hidden=4, name="fc1")
    fc2 = sym.FullyConnected(data, num_hidden=4, name="fc2")
    out = sym.softmax(sym.broadcast_add(fc1, fc2, name="add"), name="sm")
    conv = amp.convert_symbol(out, "float16")
    names = [n for op, n in _ops(conv) if op in ("Cast", "amp_cast")]
    assert names.count("data_amp_cast_float16") == 1  # one cast, two readers
    assert "add_0_amp_cast_float32" in names            # softmax in float32
    args = {"data": nd.ones((2, 3)), "fc1_weight": nd.ones((4, 3)), "fc1_bias": nd.zeros(4),
            "fc2_weight": nd.ones((4, 3)), "fc2_bias": nd.zeros(4)}
    res = conv.eval(**args)[0]
    assert res.dtype == F32
    np.testing.assert_allclose(res.asnumpy(), 0.25)
    assert "fc1_output_amp_cast_float32" not in names  # add's inputs: both float16
    internals = conv.get_internals()
    fc = internals["fc1_output"].eval(**args)[0]
    assert fc.dtype == F16


def test_convert_symbol_excluded_and_bad_lists():
    fc = sym.FullyConnected(sym.var("data"), num_hidden=2, name="fc")
    kept = amp.convert_symbol(fc, "bfloat16", excluded_sym_names=["fc"])
    assert [op for op, _ in _ops(kept)].count("Cast") == 0
    with pytest.raises(ValueError, match="in none of"):
        amp.convert_symbol(fc, "float16", target_dtype_ops=["no_such_op"])
    with pytest.raises(ValueError, match="two lists"):
        amp.convert_symbol(fc, "float16", target_dtype_ops=["dot"], fp32_ops=["dot"])
    with pytest.raises(ValueError, match="target_dtype"):
        amp.convert_symbol(fc, "float64")
    with pytest.raises(TypeError, match="Symbol"):
        amp.convert_symbol(nd.ones(1))


def test_convert_model_casts_optional_params():
    fc = sym.FullyConnected(sym.var("data"), num_hidden=2, name="fc")
    args = {"fc_weight": nd.ones((2, 3)), "fc_bias": nd.zeros((2,))}
    s, a, x = amp.convert_model(fc, args, {}, "bfloat16", cast_optional_params=True)
    assert a["fc_weight"].dtype == bfloat16 and x == {}
    assert args["fc_weight"].dtype == F32  # the caller's dict is left alone
    out = s.eval(data=nd.ones((1, 3)), **a)[0]
    assert out.dtype == F32
    np.testing.assert_allclose(out.asnumpy(), [[3.0, 3.0]])
    assert "fc_weight_amp_cast_bfloat16" not in [n for _, n in _ops(s)]  # stored bfloat16
    _, a2, _ = amp.convert_model(fc, args, {}, "float16")
    assert a2["fc_weight"].dtype == F32
    with pytest.raises(TypeError, match="arg_params"):
        amp.convert_model(fc, [], {})


def test_init_wraps_symbol_functions():
    amp_mod._uninit()
    amp.init("float16")
    try:
        s = sym.FullyConnected(sym.var("data"), sym.var("w"), no_bias=True, num_hidden=2)
        assert ("Cast" in [op for op, _ in _ops(s)])
        out = s.eval(data=nd.ones((1, 3)), w=nd.ones((2, 3)))[0]
        assert out.dtype == F16  # init's casts: the op's own output, not a converted graph
    finally:
        amp_mod._uninit()


_GRAPH = """
data = {S}.var("data")
fc1 = {S}.FullyConnected(data, num_hidden=4, name="fc1")
fc2 = {S}.FullyConnected(data, num_hidden=4, name="fc2")
add = {S}.broadcast_add(fc1, {S}.exp(fc2, name="ex"), name="add")
act = {S}.Activation(add, act_type="softrelu", name="act")
bn = {S}.BatchNorm(fc2, name="bn")
out = {S}.Group([{S}.softmax(act, name="sm"), {S}.relu(fc1, name="r"), {S}.Flatten(bn, name="f")])
"""


def _structure(doc):
    nodes = doc["nodes"]
    op = {"cast": "amp_cast"}  # ours writes the cast op's own name, and lower-case Flatten
    return sorted((op.get(n["op"].lower(), n["op"].lower()), n["name"],
                   tuple(nodes[i[0]]["name"] for i in n["inputs"]),
                   n.get("attrs", {}).get("dtype") if n["op"] in ("Cast", "amp_cast") else None)
                  for n in nodes)


@requires_mxnet
@pytest.mark.parametrize("dt", ["float16", "bfloat16"])
def test_convert_symbol_matches_mxnet(dt):
    """The same casts, names and wiring as MXNet 1.9.1's ReducePrecision pass."""
    code = ("import json, mxnet as mx\nfrom mxnet.contrib import amp\n"
            + _GRAPH.replace("{S}", "mx.sym")
            + f"print(amp.convert_symbol(out, {dt!r}).tojson(remove_amp_cast=False))")
    theirs = json.loads(run_mxnet(code))
    ns = {"sym": sym}
    exec(_GRAPH.replace("{S}", "sym"), ns)  # noqa: S102 - our own test source
    ours = json.loads(amp.convert_symbol(ns["out"], dt).tojson(remove_amp_cast=False))
    assert _structure(ours) == _structure(theirs)
