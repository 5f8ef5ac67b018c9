"""core.symbol.passes.cse: merging equal nodes and constants, bitwise-equal results."""
import numpy
import pytest

from core import nd
from core.context import cpu
from core.ops.registry import REGISTRY
from core.symbol import TRAIN, Entry, Graph, Node, Tracer, evaluate
from core.symbol.passes import cse

RNG = numpy.random.default_rng(1)


def _values(g):
    return {v.name: nd.array(RNG.standard_normal(v.avals[0].shape).astype(v.avals[0].dtype))
            for v in g.variables()}


def _check_bitwise(g, h, values):
    a, ua = evaluate(g, values)
    b, ub = evaluate(h, values)
    for p, q in zip(a, b, strict=True):
        p, q = p.asnumpy(), q.asnumpy()
        assert p.dtype == q.dtype and p.shape == q.shape and p.tobytes() == q.tobytes()
    assert ua.keys() == ub.keys()
    for k in ua:
        assert ua[k].asnumpy().tobytes() == ub[k].asnumpy().tobytes()


def _ops(g):
    return [n.op_name for n in g.topo() if n.op is not None]


def test_merges_equal_subexpressions():
    with Tracer() as t:
        x = t.variable("x", (2, 3), "float32")
        y = nd.exp(x) * nd.exp(x) + nd.sum(nd.exp(x), axis=0)
        z = nd.sum(nd.exp(x), axis=0)
    g = t.graph([y, z])
    h = cse.run(g)
    assert _ops(h) == ["exp", "multiply", "sum", "add"]
    assert h.pass_stats == {"cse_merged": 4, "cse_constants_merged": 0}
    assert h.outputs[1].node is h.outputs[0].node.inputs[1].node
    _check_bitwise(g, h, _values(g))


def test_chains_merge_transitively():
    with Tracer() as t:
        x = t.variable("x", (4,), "float32")
        a = nd.tanh(nd.exp(x) + 1)
        b = nd.tanh(nd.exp(x) + 1)
    g = t.graph([a, b])
    h = cse.run(g)
    assert _ops(h) == ["exp", "add", "tanh"]
    assert h.outputs[0] == h.outputs[1]
    _check_bitwise(g, h, _values(g))


@pytest.mark.parametrize("lits", [(1, 1.0), (1, True), (0.0, -0.0), (2, 3)])
def test_literals_must_match_exactly(lits):
    with Tracer() as t:
        x = t.variable("x", (3,), "float32")
        outs = [x * lit for lit in lits]
    g = t.graph(outs)
    assert len(_ops(cse.run(g))) == 2


def test_nan_literals_merge():
    with Tracer() as t:
        x = t.variable("x", (3,), "float32")
        outs = [nd.maximum(x, float("nan")), nd.maximum(x, float("nan"))]
    g = t.graph(outs)
    h = cse.run(g)
    assert len(_ops(h)) == 1
    _check_bitwise(g, h, _values(g))


def test_attribute_keys():
    k = cse.value_key
    assert k((3, 2)) != k([3, 2])
    assert k((3, 2)) == k((3, 2))
    assert k(1) != k(1.0) != k(True)
    assert k(0.0) != k(-0.0)
    assert k(float("nan")) == k(float("nan"))
    assert k(numpy.float32(1)) != k(1.0) and k(numpy.float32(1)) == k(numpy.float32(1))
    assert k(numpy.array([1, 2])) == k(numpy.array([1, 2]))
    assert k(numpy.array([1, 2])) != k(numpy.array([1, 2], dtype="int8"))
    assert k(numpy.dtype("float32")) == k(numpy.dtype("float32")) != k("float32")
    assert k(TRAIN) == k(TRAIN) != k(True)
    assert k(slice(0, 2)) == k(slice(0, 2)) != k(slice(0, 3))
    assert k(cpu(0)) == k(cpu(0))
    assert k({"a": (1,)}) == k({"a": (1,)}) != k({"a": [1]})
    obj = object()
    assert k(obj) == k(obj) != k(object())


def test_attributes_compared_with_types():
    with Tracer() as t:
        x = t.variable("x", (2, 3), "float32")
        a = nd.reshape(x, (3, 2))
        b = nd.reshape(x, [3, 2])
        c = nd.reshape(x, (3, 2))
        d = nd.sum(x, axis=0)
        e = nd.sum(x, axis=1)
    g = t.graph([a, b, c, d, e])
    h = cse.run(g)
    assert _ops(h) == ["reshape", "reshape", "sum", "sum"]
    assert h.outputs[0] == h.outputs[2]
    _check_bitwise(g, h, _values(g))


def test_train_attribute():
    x = Node(None, "x", avals=[])
    op = REGISTRY["relu"]
    n1 = Node(op, "a", (Entry(x, 0),), {"flag": TRAIN})
    n2 = Node(op, "b", (Entry(x, 0),), {"flag": TRAIN})
    n3 = Node(op, "c", (Entry(x, 0),), {"flag": True})
    h = cse.run(Graph([Entry(n1, 0), Entry(n2, 0), Entry(n3, 0)]))
    assert [e.node.name for e in h.outputs] == ["a", "a", "c"]


def test_random_ops_are_never_merged():
    with Tracer() as t:
        x = t.variable("x", (2, 3), "float32")
        a = x + nd.random.uniform(shape=(2, 3))
        b = x + nd.random.uniform(shape=(2, 3))
    g = t.graph([a, b])
    h = cse.run(g)
    assert _ops(h).count("random_uniform") == 2 and _ops(h).count("add") == 2


def test_constants_merge_by_value():
    c1 = numpy.arange(6, dtype="float32").reshape(2, 3)
    c2 = c1.copy()
    c3 = c1.astype("float64")
    c4 = c1 + 1
    z1 = numpy.zeros(3, "float32")
    z2 = -z1  # -0.0: other bytes
    with Tracer() as t:
        x = t.variable("x", (2, 3), "float32")
        outs = [x * nd.array(c1), x * nd.array(c2), x * nd.array(c3, dtype="float64"), x * nd.array(c4),
                x + nd.array(z1), x + nd.array(z2)]
    g = t.graph(outs)
    h = cse.run(g)
    consts = [n for n in h.topo() if n.is_constant]
    assert len(consts) == 5
    assert h.pass_stats == {"cse_merged": 1, "cse_constants_merged": 1}
    assert h.outputs[0] == h.outputs[1]
    _check_bitwise(g, h, _values(g))


def test_multi_output_nodes():
    with Tracer() as t:
        x = t.variable("x", (4, 2), "float32")
        a0, a1 = nd.split(x, num_outputs=2)
        b0, b1 = nd.split(x, num_outputs=2)
        y = a0 * b1 + b0 * a1
    g = t.graph([y])
    h = cse.run(g)
    assert _ops(h).count("split") == 1
    _check_bitwise(g, h, _values(g))


def test_pure_keeps_variables_outputs_and_updates():
    w = nd.ones((2, 3))
    with Tracer() as t:
        x = t.variable("x", (2, 3), "float32")
        t.bind(w, "w")
        w[:] = nd.exp(x) + w
        y = nd.exp(x)
    g = t.graph([y, x, y])
    before = [(n, n.inputs, dict(n.attrs)) for n in g.topo()]
    h = cse.run(g)
    assert [(n, n.inputs, n.attrs) for n, _, _ in before] == before
    assert h is not g
    assert {v.name: v for v in h.variables()} == {v.name: v for v in g.variables()}
    assert list(h.updates) == list(g.updates)
    assert _ops(h) == ["exp", "add", "_index_update"]
    values = _values(g)
    values["w"] = nd.ones((2, 3))
    _check_bitwise(g, h, values)


def test_different_contexts_not_merged():
    x = Node(None, "x")
    op = REGISTRY["exp"]
    a = Node(op, "a", (Entry(x, 0),), ctx=cpu(0))
    b = Node(op, "b", (Entry(x, 0),), ctx=cpu(1))
    h = cse.run(Graph([Entry(a, 0), Entry(b, 0)]))
    assert len(_ops(h)) == 2


def test_user_attributes_must_match():
    x = Node(None, "x")
    op = REGISTRY["exp"]
    a = Node(op, "a", (Entry(x, 0),), user_attrs={"ctx_group": "dev1"})
    b = Node(op, "b", (Entry(x, 0),), user_attrs={"ctx_group": "dev2"})
    c = Node(op, "c", (Entry(x, 0),), user_attrs={"ctx_group": "dev1"})
    h = cse.run(Graph([Entry(a, 0), Entry(b, 0), Entry(c, 0)]))
    assert [e.node.name for e in h.outputs] == ["a", "b", "a"]
