"""core.symbol.passes.dce: only what the outputs and updates need stays."""
import numpy

from core import nd
from core.ops.registry import REGISTRY
from core.symbol import Entry, Graph, Node, Tracer, evaluate
from core.symbol.passes import cse, dce


def _ops(g):
    return [n.op_name for n in g.topo() if n.op is not None]


def test_unused_nodes_and_constants_are_dropped():
    c = nd.array([1.0, 2.0, 3.0])
    with Tracer() as t:
        x = t.variable("x", (3,), "float32")
        t.variable("unused", (3,), "float32")
        dead = nd.exp(x) * c
        y = nd.relu(x)
    g = t.graph([y])
    h = dce.run(g)
    assert [n.name for n in h.topo()] == ["x", "relu0"]
    assert h.pass_stats == {"dce_dead_outputs": 0}
    assert dead is not None


def test_orphans_of_other_passes_are_gone():
    with Tracer() as t:
        x = t.variable("x", (3,), "float32")
        y = nd.exp(x) + nd.exp(x)
    g = cse.run(t.graph([y]))
    h = dce.run(g)
    assert _ops(h) == ["exp", "add"]
    assert all(n in g.topo() for n in h.topo())


def test_keeps_nodes_outputs_and_updates_in_order():
    w = nd.zeros((3,))
    with Tracer() as t:
        x = t.variable("x", (3,), "float32")
        t.bind(w, "w")
        w[:] = w + x
        a, b = nd.exp(x), nd.tanh(x)
    g = t.graph([b, a, x])
    h = dce.run(g)
    assert h is not g
    assert h.outputs == g.outputs and list(h.updates.items()) == list(g.updates.items())
    assert h.topo() == g.topo()
    vals = {"x": nd.array([1.0, -2.0, 0.5]), "w": nd.ones((3,))}
    (o1, u1), (o2, u2) = evaluate(g, vals), evaluate(h, vals)
    for p, q in zip(o1 + [u1["w"]], o2 + [u2["w"]]):
        assert p.asnumpy().tobytes() == q.asnumpy().tobytes()


def test_dead_outputs_of_multi_output_nodes_are_counted():
    x = Node(None, "x")
    s = Node(REGISTRY["split"], "s", (Entry(x, 0),), {"num_outputs": 3}, num_outputs=3)
    y = Node(REGISTRY["exp"], "e", (Entry(s, 2),))
    h = dce.run(Graph([Entry(y, 0), Entry(s, 0)]))
    assert h.pass_stats == {"dce_dead_outputs": 1}
    out = evaluate(h, {"x": nd.array(numpy.arange(6.0).reshape(2, 3))})[0]
    assert out[1].shape == (2, 1)


def test_with_inputs_keeps_or_copies():
    x = Node(None, "x")
    n = Node(REGISTRY["exp"], "e", (Entry(x, 0),), {"a": 1})
    assert dce.with_inputs(n, (Entry(x, 0),)) is n
    m = dce.with_inputs(n, (Entry(x, 1),))
    assert m is not n and m.inputs == (Entry(x, 1),) and n.inputs == (Entry(x, 0),)
    assert m.attrs == n.attrs and m.attrs is not n.attrs and m.name == "e"
    k = dce.with_inputs(Node(REGISTRY["add"], "a", (Entry(x, 0), 1)), (Entry(x, 0), 1.0))
    assert type(k.inputs[1]) is float  # 1 and 1.0 are different literals
