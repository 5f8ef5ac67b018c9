"""The executor: programs, memory plan, mirroring, Executor and CachedOp."""
import numpy as np
import pytest

import core
from core import autograd, nd
from core.symbol import CachedOp, Executor, Tracer, evaluate
from core.symbol import mirror as mirror_mod
from core.symbol.executor import compile_graph


def _mlp_graph(n=8, d=6, h=5):
    with Tracer() as t:
        x = t.variable("x", (n, d), "float32")
        w1 = t.variable("w1", (h, d), "float32")
        w2 = t.variable("w2", (3, h), "float32")
        hid = nd.relu(nd.FullyConnected(x, w1, num_hidden=h, no_bias=True))
        y = nd.FullyConnected(nd.tanh(hid * 2 + 1), w2, num_hidden=3, no_bias=True)
        loss = (y * y).sum()
    return t.graph([loss])


def _values(rng):
    return {"x": nd.array(rng.standard_normal((8, 6)), dtype="float32"),
            "w1": nd.array(rng.standard_normal((5, 6)), dtype="float32"),
            "w2": nd.array(rng.standard_normal((3, 5)), dtype="float32")}


def _eager_grads(values):
    vals = {k: v.copy() for k, v in values.items()}
    for v in vals.values():
        v.attach_grad()
    g = _mlp_graph()
    with autograd.record():
        (loss,), _ = evaluate(g, vals)
    loss.backward()
    return loss.asnumpy(), {k: v.grad.asnumpy() for k, v in vals.items()}


def test_executor_forward_backward_matches_autograd():
    rng = np.random.default_rng(0)
    values = _values(rng)
    ref_loss, ref = _eager_grads(values)
    grads = {k: nd.zeros(v.shape) for k, v in values.items()}
    ex = Executor(_mlp_graph(), None, values, args_grad=grads)
    out = ex.forward(is_train=True)
    ex.backward()
    np.testing.assert_array_equal(out[0].asnumpy(), ref_loss)
    for k in values:
        np.testing.assert_array_equal(ex.grad_dict[k].asnumpy(), ref[k])
    assert ex.output_dict.keys() == {"sum0_output"} or len(ex.output_dict) == 1


def test_grad_req_add_and_null():
    rng = np.random.default_rng(1)
    values = _values(rng)
    _, ref = _eager_grads(values)
    grads = {k: nd.ones(v.shape) for k, v in values.items()}
    ex = Executor(_mlp_graph(), None, values, args_grad=grads,
                  grad_req={"x": "null", "w1": "add", "w2": "write"})
    ex.forward(is_train=True)
    ex.backward()
    np.testing.assert_array_equal(ex.grad_dict["x"].asnumpy(), np.ones((8, 6)))
    np.testing.assert_allclose(ex.grad_dict["w1"].asnumpy(), ref["w1"] + 1, rtol=1e-6)
    np.testing.assert_array_equal(ex.grad_dict["w2"].asnumpy(), ref["w2"])
    with pytest.raises(ValueError, match="grad_req"):
        Executor(_mlp_graph(), None, values, args_grad=grads, grad_req="sometimes")


def test_backward_without_a_training_forward_says_so():
    values = _values(np.random.default_rng(2))
    ex = Executor(_mlp_graph(), None, values)
    ex.forward()
    with pytest.raises(RuntimeError, match="forward\\(is_train=True\\)"):
        ex.backward()


def test_memory_plan_releases_keeps_little_and_reuses_buffers():
    g = _mlp_graph()
    prog, _ = compile_graph(g, core.cpu(), True, ("w1", "w2"))
    n_values = sum(len(st.outs) for st in prog.steps)
    freed = sum(len(f) for f in prog.plan.frees)
    assert freed >= n_values - 3  # everything but the outputs is released early
    assert len(prog.plan.saved) < prog.n_fwd  # backward keeps a few forward values
    # Unfused, the elementwise steps write into dying inputs or dead buffers.
    prog, _ = compile_graph(g, core.cpu(), True, ("w1", "w2"), optimize=False)
    assert prog.plan.inplace_count + prog.plan.reuse_count >= 1


def test_buffer_reuse_gives_the_same_values():
    with Tracer() as t:
        x = t.variable("x", (64, 64), "float32")
        a = nd.exp(x * 0.01)       # dies at the next multiply ...
        b = nd.dot(a, a)
        c = nd.dot(b * 0.5, x)     # ... whose buffer the dots may take
        d = nd.tanh(c) + nd.sin(b)
    g = t.graph([d])
    prog, _ = compile_graph(g, core.cpu(), False, (), optimize=False)
    xv = nd.array(np.random.default_rng(3).standard_normal((64, 64)), dtype="float32")
    out = CachedOp(g, None)({"x": xv})[0]
    ref = evaluate(g, {"x": xv})[0][0]
    np.testing.assert_array_equal(out.asnumpy(), ref.asnumpy())
    assert prog.plan.reuse_count + prog.plan.inplace_count >= 1


def test_mirroring_recomputes_cheap_chains_and_keeps_results():
    with Tracer() as t:
        x = t.variable("x", (4, 8, 32, 32), "float32")
        w = t.variable("w", (8, 8, 3, 3), "float32")
        gamma, beta = t.variable("g", (8,), "float32"), t.variable("b", (8,), "float32")
        c = nd.Convolution(x, w, kernel=(3, 3), pad=(1, 1), num_filter=8, no_bias=True)
        mm, mv = nd.zeros((8,)), nd.ones((8,))
        with autograd.train_mode():
            y = nd.relu(nd.BatchNorm(c, gamma, beta, mm, mv, fix_gamma=False))
        z = nd.Convolution(y, w, kernel=(3, 3), pad=(1, 1), num_filter=8, no_bias=True)
        loss = (z * z).sum()
    g = t.graph([loss])
    assert mirror_mod.enabled()
    prog, _ = compile_graph(g, core.cpu(), True, ("x", "w", "g", "b"))
    assert any(st.name.endswith("_mirror") for st in prog.steps[prog.n_fwd:])
    rng = np.random.default_rng(4)
    vals = {"x": rng.standard_normal((4, 8, 32, 32)), "w": rng.standard_normal((8, 8, 3, 3)),
            "g": rng.standard_normal(8), "b": rng.standard_normal(8)}
    grads = []
    for mirror_on in (True, False):
        mirror_mod_env = "1" if mirror_on else "0"
        import os
        os.environ["KBACKEND_BACKWARD_MIRROR"] = mirror_mod_env
        try:
            arrays = {k: nd.array(v, dtype="float32") for k, v in vals.items()}
            for a in arrays.values():
                a.attach_grad()
            op = CachedOp(g, None)
            with autograd.record(), autograd.train_mode():
                (out,) = op(arrays)
            out.backward()
            grads.append([arrays[k].grad.asnumpy() for k in sorted(arrays)])
        finally:
            os.environ.pop("KBACKEND_BACKWARD_MIRROR", None)
    for a, b in zip(*grads):
        np.testing.assert_array_equal(a, b)


def test_outputs_never_alias_inputs_or_each_other():
    with Tracer() as t:
        x = t.variable("x", (3,), "float32")
        y = x * 1
    op = CachedOp(t.graph([y, y]), None)
    a = nd.ones((3,))
    o1, o2 = op({"x": a})
    o1 += 5
    assert a.asnumpy().tolist() == [1, 1, 1] and o2.asnumpy().tolist() == [1, 1, 1]


def test_parameter_gradients_are_delivered_early_and_exactly():
    rng = np.random.default_rng(5)
    values = _values(rng)
    _, ref = _eager_grads(values)
    op = CachedOp(_mlp_graph(), None)
    arrays = {k: v.copy() for k, v in values.items()}
    for a in arrays.values():
        a.attach_grad()
    with autograd.record():
        (loss,) = op(arrays)
    loss.backward()
    for k, a in arrays.items():
        np.testing.assert_array_equal(a.grad.asnumpy(), ref[k])
