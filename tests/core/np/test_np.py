"""core.np: creation defaults and devices, value-dependent functions, the added random
distributions, and nd/np interplay (the composed functions have op-table rows in
tests/core/ops/specs_np_extra.py)."""
import io

import numpy as onp
import pytest

from core import autograd, nd, np
from core.context import cpu


def test_creation_dtypes_follow_mxnet():
    assert np.zeros((2,)).dtype == onp.float32
    assert np.ones(2, dtype="int32").dtype == onp.int32
    assert np.empty((1, 2)).dtype == onp.float32
    assert np.arange(3).dtype == onp.float32
    assert np.linspace(0, 1, 5).dtype == onp.float32
    assert np.eye(2, 3).shape == (2, 3) and np.identity(3).dtype == onp.float32
    assert np.full((2,), 3).dtype == onp.int64
    assert np.full((2,), 3.0).dtype == onp.float32
    assert np.full((2,), True).dtype == onp.bool_
    assert np.full((2,), onp.float16(1)).dtype == onp.float16
    assert np.full((2, 2), np.array([1.0, 2.0])).tolist() == [[1.0, 2.0], [1.0, 2.0]]
    assert np.array([1.0, 2]).dtype == onp.float32
    assert np.array([1, 2]).dtype == onp.int64
    assert np.array(onp.zeros(2)).dtype == onp.float64  # NumPy arrays keep their dtype
    vals, step = np.linspace(0, 1, 5, retstep=True)
    assert step == 0.25 and vals.tolist()[-1] == 1.0
    assert np.logspace(0, 3, 4).tolist() == [1.0, 10.0, 100.0, 1000.0]
    assert np.tri(3, 2, k=-1).tolist() == [[0.0, 0.0], [1.0, 0.0], [1.0, 1.0]]
    with pytest.raises(ValueError, match="order='C'"):
        np.zeros(2, order="F")


def test_creation_on_devices_and_moves():
    for make in (lambda **k: np.zeros(2, **k), lambda **k: np.arange(3, **k),
                 lambda **k: np.full((2,), 1.0, **k), lambda **k: np.eye(2, **k),
                 lambda **k: np.array([1.0], **k), lambda **k: np.random.uniform(size=2, **k),
                 lambda **k: np.random.gumbel(size=2, **k)):
        assert make(device=cpu(1)).context == cpu(1)
        assert make(ctx="cpu(1)").context == cpu(1)
    x = np.ones(3)
    assert x.as_in_ctx(cpu(1)).context == cpu(1) and x.to_device(cpu(1)).device == cpu(1)
    y = x.copy()
    y[0] = 5.0
    assert x.tolist() == [1.0, 1.0, 1.0] and x.T.shape == (3,) and x.size == 3
    assert np.ones(()).item() == 1.0


def test_nd_and_np_mix():
    a = nd.ones((2, 3))
    b = np.ones((2, 3))
    assert isinstance(a, np.ndarray) and type(a) is type(b)
    assert np.sum(a + b, axis=0).tolist() == [4.0, 4.0, 4.0]
    assert nd.broadcast_add(np.arange(3), a).shape == (2, 3)


def test_ndarray_np_methods():
    x = np.array([[0.0, 2.0], [3.0, 0.0]])
    assert x.as_np_ndarray() is x and x.as_nd_ndarray() is x
    assert [i.tolist() for i in x.nonzero()] == [[0, 1], [1, 0]]
    assert (x - 1).clip(min=0).tolist() == [[0.0, 1.0], [2.0, 0.0]]
    assert x.diagonal().tolist() == [0.0, 0.0] and x.nbytes == 16


@pytest.mark.parametrize(("name", "args", "kwargs"), [
    ("nonzero", ([[0, 1.5], [2, 0]],), {}),
    ("flatnonzero", ([0, 1, 0, 3],), {}),
    ("argwhere", ([[0, 1], [1, 1]],), {}),
    ("count_nonzero", ([[0, 1], [1, 1]],), {"axis": 0}),
    ("unique", ([3, 1, 3, 2, 1],), {"return_index": True, "return_inverse": True,
                                     "return_counts": True}),
    ("unique", ([[1, 2], [1, 2], [0, 5]],), {"axis": 0}),
    ("bincount", ([0, 1, 1, 4],), {"minlength": 6}),
    ("histogram", ([0.0, 0.2, 0.9, 1.0, 0.5],), {"bins": 3}),
    ("unravel_index", ([5, 7],), {"shape": (2, 4)}),
])
def test_value_dependent_functions_match_numpy(name, args, kwargs):
    conv = [np.array(onp.asarray(a)) for a in args]
    ours = getattr(np, name)(*conv, **kwargs)
    ref = getattr(onp, name)(*[onp.asarray(a) for a in args], **kwargs)
    ours = ours if isinstance(ours, tuple) else (ours,)
    ref = ref if isinstance(ref, tuple) else (ref,)
    assert len(ours) == len(ref)
    for o, r in zip(ours, ref):
        onp.testing.assert_allclose(o.asnumpy(), onp.asarray(r).reshape(o.shape), rtol=1e-6)


def test_index_helpers():
    assert [i.tolist() for i in np.tril_indices(3, -1)] == [[1, 2, 2], [0, 0, 1]]
    assert [i.tolist() for i in np.triu_indices_from(np.zeros((2, 3)), 1)] == \
        [[0, 0, 1], [1, 2, 2]]
    assert np.indices((2, 3)).shape == (2, 2, 3)
    assert np.shape(np.zeros((2, 5))) == (2, 5) and np.shape([[1, 2]]) == (1, 2)
    x = np.zeros(4)
    assert np.shares_memory(x, x[1:]) and not np.may_share_memory(x, np.zeros(4))
    text = io.StringIO("1,2\n3,4\n")
    t = np.genfromtxt(text, delimiter=",")
    assert t.dtype == onp.float32 and t.tolist() == [[1.0, 2.0], [3.0, 4.0]]
    assert np.gcd(np.array([12, 20]), np.array([8, 15])).tolist() == [4, 5]
    assert np.lcm(np.array([4]), np.array([6])).tolist() == [12]
    with pytest.raises(TypeError, match="integer"):
        np.gcd(np.array([1.5]), np.array([2.0]))
    assert np.allclose(np.ones(2), np.ones(2) * (1 + 1e-7)) and not np.allclose(
        np.ones(2), np.zeros(2))
    assert np.array_equal(np.arange(3), np.arange(3))
    m = np.zeros((3, 3))
    np.fill_diagonal(m, 2.0)
    assert m.asnumpy().trace() == 6.0
    assert np.hanning(5).dtype == onp.float32
    onp.testing.assert_allclose(np.blackman(4).asnumpy(), onp.blackman(4), atol=1e-6)
    assert [a.shape for a in np.hsplit(np.zeros((2, 4)), 2)] == [(2, 2), (2, 2)]
    assert [a.shape for a in np.vsplit(np.zeros((4, 2)), [1])] == [(1, 2), (3, 2)]
    assert [a.shape for a in np.dsplit(np.zeros((1, 1, 4)), 2)] == [(1, 1, 2), (1, 1, 2)]


def test_meshgrid_gradients_flow_to_each_vector():
    x, y = np.array([1.0, 2.0, 3.0]), np.array([10.0, 20.0])
    x.attach_grad()
    y.attach_grad()
    with autograd.record():
        gx, gy = np.meshgrid(x, y)
        loss = (gx * gy).sum()
    loss.backward()
    assert gx.shape == (2, 3)
    assert x.grad.tolist() == [30.0, 30.0, 30.0] and y.grad.tolist() == [6.0, 6.0]


@pytest.mark.parametrize(("name", "args", "mean", "var"), [
    ("lognormal", (0.0, 0.5), onp.exp(0.125), (onp.exp(0.25) - 1) * onp.exp(0.25)),
    ("logistic", (1.0, 2.0), 1.0, onp.pi ** 2 / 3 * 4),
    ("gumbel", (0.0, 1.0), onp.euler_gamma, onp.pi ** 2 / 6),
    ("laplace", (0.0, 1.0), 0.0, 2.0),
    ("weibull", (2.0,), 0.886227, 0.214602),
    ("pareto", (5.0,), 0.25, 5 / 48),
    ("power", (2.0,), 2 / 3, 1 / 18),
    ("rayleigh", (1.0,), onp.sqrt(onp.pi / 2), (4 - onp.pi) / 2),
    ("beta", (2.0, 3.0), 0.4, 0.04),
    ("chisquare", (3.0,), 3.0, 6.0),
    ("f", (5.0, 10.0), 1.25, 1.35416),
])
def test_random_distributions_moments(name, args, mean, var):
    np.random.seed(11)
    s = getattr(np.random, name)(*args, size=(40000,))
    assert s.dtype == onp.float32 and s.shape == (40000,)
    a = s.asnumpy().astype(onp.float64)
    assert abs(a.mean() - mean) < 0.05 * max(1.0, abs(mean))
    assert abs(a.var() - var) < 0.12 * max(1.0, var)


def test_random_reparameterized_gradients():
    loc = np.array([0.5, -1.0], dtype="float64")
    scale = np.array([2.0, 0.5], dtype="float64")
    loc.attach_grad()
    scale.attach_grad()
    with autograd.record():
        s = np.random.laplace(loc, scale)
        s.sum().backward()
    assert loc.grad.tolist() == [1.0, 1.0]
    onp.testing.assert_allclose(scale.grad.asnumpy(), (s.asnumpy() - [0.5, -1.0]) / [2.0, 0.5])


def test_multivariate_normal_covariance():
    np.random.seed(5)
    cov = onp.array([[2.0, 0.8], [0.8, 1.0]])
    s = np.random.multivariate_normal(np.array([1.0, -1.0]), np.array(cov), size=30000)
    assert s.shape == (30000, 2)
    onp.testing.assert_allclose(onp.cov(s.asnumpy().T), cov, atol=0.06)
    onp.testing.assert_allclose(s.asnumpy().mean(0), [1.0, -1.0], atol=0.04)


def test_shuffle_and_randint():
    x = np.arange(10)
    np.random.shuffle(x)
    assert sorted(x.tolist()) == list(range(10))
    r = np.random.randint(0, 3, size=(50,))
    assert r.dtype == onp.int64 and set(r.tolist()) <= {0, 1, 2}
