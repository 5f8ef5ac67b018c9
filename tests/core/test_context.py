"""Contexts: interning, scopes, several CPU devices, moving data, mixing errors."""
import numpy as np
import pytest

import core
from core import autograd, cpu, gpu, nd
from core.context import Context


def test_interned_and_parsed():
    assert Context("cpu", 1) is cpu(1)
    assert Context("cpu(2)") is cpu(2) and Context("gpu:1") is gpu(1)
    assert Context(cpu(3)) is cpu(3)
    assert repr(cpu(1)) == "cpu(1)" and cpu(0) != cpu(1)
    assert {cpu(0): 1}[Context("cpu", 0)] == 1


def test_bad_context():
    with pytest.raises(ValueError, match="unknown device type 'tpu'"):
        Context("tpu", 0)
    with pytest.raises(ValueError, match="non-negative"):
        cpu(-1)


def test_with_scope_sets_current_context():
    assert core.current_context() == cpu(0)
    with cpu(1):
        assert core.current_context() == cpu(1)
        assert nd.zeros((2,)).context == cpu(1)
        with cpu(2):
            assert nd.ones((1,)).ctx == cpu(2)
        assert core.current_context() == cpu(1)
    assert core.current_context() == cpu(0)


def test_num_gpus_never_raises():
    n = core.num_gpus()
    assert isinstance(n, int) and n >= 0


def test_same_computation_on_two_cpu_contexts_is_identical():
    rng = np.random.default_rng(0)
    data = rng.standard_normal((4, 5)).astype(np.float32)
    results = []
    for ctx in (cpu(0), cpu(1)):
        x = nd.array(data, ctx=ctx)
        x.attach_grad()
        with autograd.record():
            y = core.ops.F.sum_to(nd.tanh(x * 2 + 1) * nd.exp(-x), shape=())
        y.backward()
        assert y.context == ctx and x.grad.context == ctx
        results.append((y.asnumpy(), x.grad.asnumpy()))
    np.testing.assert_array_equal(results[0][0], results[1][0])
    np.testing.assert_array_equal(results[0][1], results[1][1])


def test_mixing_contexts_is_a_clear_error():
    a = nd.ones((2, 3), ctx=cpu(0))
    b = nd.ones((2, 3), ctx=cpu(1))
    with pytest.raises(ValueError, match=r"add: all inputs must be on one context, got "
                                         r"cpu\(0\), cpu\(1\).*as_in_context"):
        a + b
    with pytest.raises(ValueError, match="cpu"):
        nd.where(a > 0, a, b)
    with pytest.raises(ValueError, match="as_in_context"):
        a[0] = b[0]


def test_copyto_and_as_in_context():
    a = nd.array([1.0, 2.0], ctx=cpu(0))
    b = a.copyto(cpu(1))
    assert b.context == cpu(1) and b.asnumpy().tolist() == [1.0, 2.0]
    assert a.as_in_context(cpu(0)) is a
    c = a.as_in_context(cpu(2))
    assert c.context == cpu(2)
    target = nd.zeros((2,), ctx=cpu(3))
    assert a.copyto(target) is target
    assert target.asnumpy().tolist() == [1.0, 2.0] and target.context == cpu(3)
    # the copy is a copy
    b[0] = 10
    assert a.asnumpy()[0] == 1.0


def test_gradient_flows_across_contexts():
    a = nd.array([1.0, 2.0], ctx=cpu(0), dtype="float64")
    a.attach_grad()
    with autograd.record():
        b = a.as_in_context(cpu(1)) * 3
        c = b.copyto(cpu(0)) * a
    c.backward(nd.ones((2,), ctx=cpu(0), dtype="float64"))
    np.testing.assert_allclose(a.grad.asnumpy(), [6.0, 12.0])


def test_gpu_context_without_cupy_gives_clear_error():
    if core.num_gpus():
        pytest.skip("a GPU is present")
    with pytest.raises(RuntimeError, match=r"CuPy|GPU"):
        nd.zeros((2,), ctx=gpu(0))


def test_default_ctx_and_current_context_on_the_class_are_mxnet_1x_spellings():
    from core.context import Context, cpu

    assert Context.default_ctx is cpu(0)
    with cpu(2):
        assert Context.default_ctx is cpu(2)
        assert Context.current_context() is cpu(2)
