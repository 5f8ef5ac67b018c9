"""The elementwise fusion pass and the ``_fused_elemwise`` operator (CPU)."""
from __future__ import annotations

import numpy as np
import pytest

import core
from core import nd
from core.ops import F
from core.ops import fused as fz
from core.ops.registry import REGISTRY, Aval
from core.symbol.graph import TRAIN, Entry, Graph, Node, evaluate
from core.symbol.passes import fusion
from core.symbol.trace import Tracer

FLOATS = ("float16", "float32", "float64")


def _data(rng, shape, dtype, specials=True):
    dtype = np.dtype(dtype)
    if dtype.kind == "f":
        x = (rng.standard_normal(shape) * 2).astype(dtype)
        if specials and x.size >= 6:
            x.flat[:6] = [np.nan, -0.0, 0.0, np.inf, -np.inf, 1.0]
        return x
    if dtype.kind == "b":
        return rng.integers(0, 2, shape).astype(bool)
    return rng.integers(-5, 6, shape).astype(dtype)


def _trace(fn, **specs):
    """Trace ``fn(**variables)``; specs: name=(shape, dtype). Returns (graph, values)."""
    rng = np.random.default_rng(0)
    with Tracer() as t:
        xs = {k: t.variable(k, s, d) for k, (s, d) in specs.items()}
        out = fn(**xs)
    outs = list(out) if isinstance(out, (list, tuple)) else [out]
    values = {k: nd.array(_data(rng, s, d), dtype=d) for k, (s, d) in specs.items()}
    return t.graph(outs), values


def _bits_equal(a, b) -> bool:
    a, b = np.atleast_1d(a), np.atleast_1d(b)
    return a.shape == b.shape and a.dtype == b.dtype and np.array_equal(
        np.ascontiguousarray(a).view(np.uint8), np.ascontiguousarray(b).view(np.uint8))


def _check(graph, values, groups=None, ops=None, seed=None):
    """Fuse ``graph``; outputs and updates equal the unfused ones bit for bit."""
    before = [(n.name, n.op_name, n.inputs) for n in graph.topo()]
    g2 = fusion.run(graph)
    assert [(n.name, n.op_name, n.inputs) for n in graph.topo()] == before  # pure
    with np.errstate(all="ignore"):
        if seed is not None:
            core.random.seed(seed)
        ref, ref_up = evaluate(graph, values)
        if seed is not None:
            core.random.seed(seed)
        got, got_up = evaluate(g2, values)
    assert len(ref) == len(got)
    for r, o in zip(ref, got):
        assert _bits_equal(r.asnumpy(), o.asnumpy()), (r.asnumpy(), o.asnumpy())
    assert ref_up.keys() == got_up.keys()
    for k in ref_up:
        assert _bits_equal(ref_up[k].asnumpy(), got_up[k].asnumpy())
    assert [v.name for v in g2.variables()] == [v.name for v in graph.variables()]
    assert all(a is b for a, b in zip(sorted(g2.variables(), key=lambda n: n.name),
                                      sorted(graph.variables(), key=lambda n: n.name)))
    if groups is not None:
        assert g2.pass_stats["fusion_groups"] == groups, g2.pass_stats
    if ops is not None:
        assert g2.pass_stats["fusion_ops"] == ops, g2.pass_stats
    for n in g2.op_nodes():
        if n.op_name == "_fused_elemwise":
            assert n.avals is not None and n.avals[0] == REGISTRY["_fused_elemwise"].infer(
                *[e.node.avals[e.index] for e in n.inputs], **n.attrs)
    return g2


def _op_names(g):
    return [n.op_name for n in g.op_nodes()]


# --------------------------------------------------------------- the pass on hand-made graphs
@pytest.mark.parametrize("dtype", FLOATS)
def test_dense_chain_relu(dtype):
    g, v = _trace(lambda x, w, b: nd.relu(x * w + b),
                  x=((8, 5), dtype), w=((8, 5), dtype), b=((5,), dtype))
    g2 = _check(g, v, groups=1, ops=3)
    assert _op_names(g2) == ["_fused_elemwise"]
    node = g2.op_nodes()[0]
    assert [e.node.name for e in node.inputs] == ["x", "w", "b"]
    assert node.attrs["program"][-1][0] == "relu"


@pytest.mark.parametrize("dtype", FLOATS)
def test_sigmoid_times_y(dtype):
    g, v = _trace(lambda x, y: nd.sigmoid(x) * y, x=((4, 6), dtype), y=((4, 6), dtype))
    _check(g, v, groups=1, ops=2)


@pytest.mark.parametrize("dtype", FLOATS)
def test_broadcasting_tree(dtype):
    def f(a, b):
        return nd.tanh(nd.exp(a) + b) * (a - 1.5)

    g, v = _trace(f, a=((3, 1), dtype), b=((1, 4), dtype))
    g2 = _check(g, v, groups=1, ops=5)
    assert g2.outputs[0].node.avals[0].shape == (3, 4)


@pytest.mark.parametrize("act", ["relu", "sigmoid", "tanh", "softrelu", "softsign"])
@pytest.mark.parametrize("dtype", FLOATS)
def test_activations(act, dtype):
    g, v = _trace(lambda x: nd.Activation(x * 3 - 1, act_type=act) + x, x=((7, 9), dtype))
    _check(g, v, groups=1, ops=4)


@pytest.mark.parametrize("dtype", FLOATS)
def test_standalone_activations(dtype):
    g, v = _trace(lambda x: nd.softplus(nd.softsign(x) * 4) - nd.sigmoid(-x) * nd.relu(x),
                  x=((5, 11), dtype))
    _check(g, v, groups=1, ops=8)


@pytest.mark.parametrize("dtype", ["int32", "int64", "uint8", "int8"])
def test_int_inputs_with_float_literals(dtype):
    g, v = _trace(lambda x, y: nd.exp(x * 0.5) + y * 2.25 - 1, x=((3, 4), dtype),
                  y=((4,), dtype))
    g2 = _check(g, v, groups=1, ops=5)
    out, _ = evaluate(g2, v)
    assert out[0].dtype == np.float64 or (dtype in ("int8", "uint8")
                                          and out[0].dtype == np.float16)
    assert g2.outputs[0].node.avals[0].dtype == out[0].dtype


def test_int_and_bool_ops():
    def f(i, j, m):
        k = (i + j) * 3 - j
        return nd.logical_and(k > 2, m), nd.maximum(k, i) ^ 5

    g, v = _trace(f, i=((4, 5), "int32"), j=((5,), "int16"), m=((4, 5), "bool"))
    # k = (i + j) * 3 - j feeds both outputs: three groups (k's own; > and and; max and ^)
    g2 = _check(g, v)
    assert g2.pass_stats == {"fusion_groups": 3, "fusion_ops": 7}


def test_mixed_precision_promotion():
    g, v = _trace(lambda a, b: nd.sqrt(nd.abs(a * b)) + 1, a=((6,), "float16"),
                  b=((6,), "float32"))
    g2 = _check(g, v, groups=1, ops=4)
    assert g2.outputs[0].node.avals[0].dtype == np.float32


def test_casts():
    def f(x, w, i):
        y = nd.cast(nd.cast(x, dtype="float32") * w, dtype="float16")  # mixed precision
        return y, nd.cast(nd.exp(nd.cast(i, dtype="float32")), dtype="int8"), \
            nd.cast(nd.tanh(w) * 300, dtype="uint8") + 1

    g, v = _trace(f, x=((4, 6), "float16"), w=((6,), "float32"), i=((4, 6), "int32"))
    g2 = _check(g, v, groups=3, ops=10)
    assert [e.node.avals[0].dtype.name for e in g2.outputs] == ["float16", "int8", "uint8"]
    assert not fz.can_fuse("cast", [Aval((2,), "float32")], {"dtype": "bfloat16"})


def test_zero_dim_and_constants():
    c = nd.array([1.0, 2.0, 3.0])
    g, v = _trace(lambda x: nd.exp(x * c) - x, x=((), "float32"))
    g2 = _check(g, v, groups=1, ops=3)
    g3, v3 = _trace(lambda x: nd.exp(x * 2) - x, x=((), "float64"))
    _check(g3, v3, groups=1, ops=3)
    assert any(n.is_constant for n in g2.topo())


def test_shared_intermediate_inside_group():
    # a feeds b and c, both inside the group: all four fuse
    def f(x):
        a = nd.exp(x)
        return (a + 1) * (a * 2)

    g, v = _trace(f, x=((5, 5), "float32"))
    _check(g, v, groups=1, ops=4)


# --------------------------------------------------------------- what must not fuse
def test_multi_consumer_boundary():
    def f(x):
        a = x * 2
        return nd.relu(a + 1), nd.sum(a)  # a is also read by sum: not fused into relu's

    g, v = _trace(f, x=((4, 4), "float32"))
    g2 = _check(g, v, groups=1, ops=2)
    fused = next(n for n in g2.op_nodes() if n.op_name == "_fused_elemwise")
    assert [e.node.op_name for e in fused.inputs] == ["multiply"]


def test_graph_output_boundary():
    g, v = _trace(lambda x: (x * 2, nd.relu(x * 2 + 1)), x=((3,), "float32"))
    g2 = _check(g, v)
    # the first x * 2 is an output; the second chain fuses on its own
    assert g2.pass_stats == {"fusion_groups": 1, "fusion_ops": 3}
    assert g2.outputs[0].node.op_name == "multiply"


def test_no_group_of_one():
    g, v = _trace(lambda x: nd.sum(nd.exp(x)), x=((3,), "float32"))
    g2 = _check(g, v, groups=0, ops=0)
    assert _op_names(g2) == ["exp", "sum"]


def test_non_elementwise_splits_groups():
    g, v = _trace(lambda x: nd.exp(nd.sum(x * 2 + 1, axis=1)) * 3, x=((3, 4), "float32"))
    g2 = _check(g, v, groups=2, ops=4)
    assert _op_names(g2) == ["_fused_elemwise", "sum", "_fused_elemwise"]


def test_random_op_not_fused():
    g, v = _trace(lambda x: nd.relu(x + nd.random.uniform(shape=(3, 4)) * 2),
                  x=((3, 4), "float32"))
    g2 = _check(g, v, groups=1, ops=3, seed=7)
    names = _op_names(g2)
    assert sum(REGISTRY[n].random for n in names if n in REGISTRY) == 1


def test_update_boundary():
    x = Node(None, "x", avals=[Aval((3,), "float32")])
    state = Node(None, "state", avals=[Aval((3,), "float32")])
    a = Node(REGISTRY["multiply"], "multiply0", [Entry(x, 0), 2.0],
             avals=[Aval((3,), "float32")])
    b = Node(REGISTRY["add"], "add0", [Entry(a, 0), Entry(state, 0)],
             avals=[Aval((3,), "float32")])
    c = Node(REGISTRY["exp"], "exp0", [Entry(b, 0)], avals=[Aval((3,), "float32")])
    d = Node(REGISTRY["negative"], "negative0", [Entry(c, 0)], avals=[Aval((3,), "float32")])
    g = Graph([Entry(d, 0)], {state: Entry(b, 0)})  # b becomes the new state
    v = {"x": nd.array([1.0, -2.0, 0.5]), "state": nd.array([0.0, 1.0, 2.0])}
    g2 = _check(g, v, groups=2, ops=4)
    upd = next(iter(g2.updates.values()))
    assert upd.node.op_name == "_fused_elemwise" and next(iter(g2.updates)) is state


def test_train_attr_and_unknown_avals_not_fused():
    x = Node(None, "x", avals=[Aval((3,), "float32")])
    a = Node(REGISTRY["Activation"], "activation0", [Entry(x, 0)], {"act_type": TRAIN},
             avals=[Aval((3,), "float32")])
    b = Node(REGISTRY["exp"], "exp0", [Entry(a, 0)], avals=None)
    c = Node(REGISTRY["negative"], "negative0", [Entry(b, 0)], avals=[Aval((3,), "float32")])
    g2 = fusion.run(Graph([Entry(c, 0)]))
    assert g2.pass_stats == {"fusion_groups": 0, "fusion_ops": 0}
    assert _op_names(g2) == ["Activation", "exp", "negative"]


def test_not_fusable_dtypes_and_ops():
    assert fz.can_fuse("add", [Aval((2,), "float32"), Aval((2,), "float64")], {})
    assert not fz.can_fuse("add", [Aval((2,), "bfloat16"), 1.0], {})
    assert not fz.can_fuse("subtract", [Aval((2,), "bool"), Aval((2,), "bool")], {})
    assert not fz.can_fuse("relu", [Aval((2,), "bool")], {})  # maximum(bool, 0) is int
    assert not fz.can_fuse("sigmoid", [Aval((2,), "int32")], {})
    assert not fz.can_fuse("floor_divide", [Aval((2,), "int32"), 2], {})
    assert not fz.can_fuse("Activation", [Aval((2,), "float32")], {"act_type": "mish"})
    assert not fz.can_fuse("add", [Aval((2,), "float32"), np.float64(1.0)], {})
    assert not fz.can_fuse("round", [Aval((2,), "float32")], {"decimals": 1})
    assert fz.can_fuse("reciprocal", [Aval((2,), "float32")], {})
    assert not fz.can_fuse("reciprocal", [Aval((2,), "int32")], {})  # no C form for ints


def test_run_twice_and_names():
    g, v = _trace(lambda x: (nd.exp(x) + 1, nd.relu(-x) * 2), x=((3,), "float32"))
    g2 = _check(g, v, groups=2, ops=5)
    assert sorted(n.name for n in g2.op_nodes()) == ["fused_elemwise0", "fused_elemwise1"]
    g3 = fusion.run(g2)
    assert g3.pass_stats["fusion_groups"] == 0


# --------------------------------------------------------------- random chains
_UNARY = ["exp", "tanh", "sigmoid", "relu", "negative", "abs", "square", "sin", "softsign",
          "log1p", "sqrt", "floor"]
_BINARY = ["add", "subtract", "multiply", "divide", "maximum", "minimum", "power"]


@pytest.mark.parametrize("seed", range(12))
def test_random_graphs(seed):
    rng = np.random.default_rng(seed)
    dtype = FLOATS[seed % 3]
    shapes = [(4, 5), (1, 5), (4, 1), (5,), ()]

    def f(**xs):
        pool = list(xs.values())
        for _ in range(int(rng.integers(3, 12))):
            if rng.random() < 0.4:
                op = _UNARY[int(rng.integers(len(_UNARY)))]
                pool.append(getattr(nd, op)(pool[int(rng.integers(len(pool)))]))
            else:
                op = getattr(nd, _BINARY[int(rng.integers(len(_BINARY)))])
                a = pool[int(rng.integers(len(pool)))]
                b = (float(rng.choice([0.5, 2.0, -1.0])) if rng.random() < 0.3
                     else pool[int(rng.integers(len(pool)))])
                pool.append(op(a, b) if rng.random() < 0.5 else op(b, a) if not isinstance(
                    b, float) else op(a, b))
        k = int(rng.integers(1, 3))
        return pool[-k:]

    specs = {f"x{i}": (shapes[int(rng.integers(len(shapes)))], dtype) for i in range(3)}
    g, v = _trace(f, **specs)
    _check(g, v)


# --------------------------------------------------------------- the operator itself
def test_fused_op_multiple_outputs_and_infer():
    prog = (("add", (("in", 0), ("in", 1))), ("exp", (("step", 0),)),
            ("greater", (("step", 1), 2.0)))
    a, b = nd.array([[0.0], [1.0]]), nd.array([0.5, -3.0, 2.0])
    y, m = F._fused_elemwise(a, b, program=prog, outputs=(1, 2))
    ref = np.exp(a.asnumpy() + b.asnumpy())
    assert _bits_equal(y.asnumpy(), ref) and _bits_equal(m.asnumpy(), ref > 2.0)
    op = REGISTRY["_fused_elemwise"]
    assert op.infer(Aval((2, 1), "float32"), Aval((3,), "float32"), program=prog,
                    outputs=(1, 2)) == (Aval((2, 3), "float32"), Aval((2, 3), "bool"))


def test_fused_op_errors():
    op = REGISTRY["_fused_elemwise"]
    x = Aval((2,), "float32")
    with pytest.raises(ValueError, match="_fused_elemwise"):
        op.infer(x, program=(("nope", (("in", 0),)),), outputs=0)
    with pytest.raises(ValueError, match="step 0 argument"):
        op.infer(x, program=(("exp", (("step", 0),)),), outputs=0)
    with pytest.raises(ValueError, match="input 3"):
        op.infer(x, program=(("exp", (("in", 3),)),), outputs=0)
    with pytest.raises(ValueError, match="outputs"):
        op.infer(x, program=(("exp", (("in", 0),)),), outputs=4)
    with pytest.raises(ValueError, match="cannot be broadcast"):
        op.infer(x, Aval((3,), "float32"), program=(("add", (("in", 0), ("in", 1))),))


def test_cpu_plan_reuses_one_buffer():
    prog = [("multiply", (("in", 0), ("in", 1))), ("add", (("step", 0), ("in", 2)))]
    for k in range(2, 10):
        prog.append((["exp", "tanh", "relu", "negative"][k % 4], (("step", k - 1),)))
    prog = tuple(prog)
    f32 = np.dtype("float32")
    plan, slots, _, _ = fz._cpu_plan(prog, -1, (((4, 8), f32), ((4, 8), f32), ((8,), f32)))
    assert len(plan) == 10 and slots == (((4, 8), f32),)
    # a value read after a later step keeps its buffer; softplus never overwrites its input
    prog2 = (("exp", (("in", 0),)), ("negative", (("step", 0),)),
             ("add", (("step", 0), ("step", 1))), ("softplus", (("step", 2),)))
    plan2, slots2, _, _ = fz._cpu_plan(prog2, -1, (((3,), f32),))
    assert [p[3] for p in plan2] == [0, 1, 0, 1]
    assert len(slots2) == 2


# --------------------------------------------------------------- GPU source (on CPU)
def test_kernel_source_text():
    prog = (("multiply", (("in", 0), ("in", 1))), ("add", (("step", 0), ("in", 2))),
            ("relu", (("step", 1),)))
    i, o, body = fz.kernel_source(prog, ("float32", "float32", "float32"))
    assert i == "float32 in0, float32 in1, float32 in2" and o == "float32 out0"
    assert body.splitlines() == [
        "float s0 = (float)((((float)in0) * ((float)in1)));",
        "float s1 = (float)((((float)s0) + ((float)in2)));",
        ("float s2 = (float)(((isnan(((float)s1)) || ((float)s1) > (float)0) ? ((float)s1)"
         " : (float)0));"),
        "out0 = (float)s2;"]
    name = fz.kernel_name(i, o, body)
    assert name.startswith("fused_") and name == fz.kernel_name(i, o, body)
    assert name != fz.kernel_name(i, o, body + " ")


def test_kernel_source_dtypes():
    # int32 * 1.5 runs in double (NumPy's float64 loop); the literal is a double
    _, o, body = fz.kernel_source((("multiply", (("in", 0), 1.5)),), (np.int32,))
    assert o == "float64 out0" and "((double)in0) * ((double)1.5)" in body
    # float16 steps compute in float and round through float16 after every step
    _, o, body = fz.kernel_source((("exp", (("in", 0),)), ("add", (("step", 0), 1))),
                                  ("float16",))
    assert o == "float16 out0"
    assert "float s0 = (float)(float16)(exp(((float)in0)));" in body
    assert "((float)(float16)(1LL))" in body  # the literal rounds to float16 first
    assert body.endswith("out0 = (float16)s1;")
    # comparisons: bool results of a float loop; non-finite literals keep their bits
    _, o, body = fz.kernel_source((("less", (("in", 0), float("inf"))),
                                   ("logical_and", (("step", 0), ("in", 1)))),
                                  ("float64", "bool"), 1)
    assert o == "bool out0" and "__longlong_as_double(9218868437227405312LL)" in body
    # several outputs
    _, o, body = fz.kernel_source((("negative", (("in", 0),)), ("square", (("step", 0),))),
                                  ("int8",), (0, 1))
    assert o == "int8 out0, int8 out1" and "signed char s1" in body
    with pytest.raises(ValueError, match="no fused form"):
        fz.kernel_source((("floor_divide", (("in", 0), 2)),), ("int32",))
    with pytest.raises(TypeError, match="bfloat16"):
        fz.kernel_source((("exp", (("in", 0),)),), ("bfloat16",))


# --------------------------------------------------------------- inside the executor
def test_training_step_through_the_executor(monkeypatch):
    from core.symbol import executor as ex_mod

    def f(x, w, b):
        h = nd.Activation(x * w + b, act_type="sigmoid")
        return nd.sum(nd.tanh(h * 2 - 1) * x)

    g, v = _trace(f, x=((16, 8), "float32"), w=((8,), "float32"), b=((8,), "float32"))

    def step():
        grads = {k: nd.zeros(v[k].shape) for k in ("w", "b")}
        ex = ex_mod.Executor(g, None, dict(v), args_grad=grads)
        out = ex.forward(is_train=True)[0].asnumpy()
        ex.backward()
        steps = [s.op.name for s in ex._program(True)[0][0].steps]
        return out, {k: a.asnumpy() for k, a in grads.items()}, steps

    with np.errstate(all="ignore"):  # the inputs hold nan and inf
        fused_out, fused_grads, fused_steps = step()
        monkeypatch.setattr(ex_mod, "_optimize", lambda graph, ctx=None: graph)
        ref_out, ref_grads, ref_steps = step()
    assert "_fused_elemwise" in fused_steps and len(fused_steps) < len(ref_steps)
    assert _bits_equal(fused_out, ref_out)
    for k in ref_grads:
        assert _bits_equal(fused_grads[k], ref_grads[k]), k
