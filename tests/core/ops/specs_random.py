"""Rows for the random operators (``core/ops/random.py``).

Samples cannot be compared with NumPy's, so every row has a ``check``: shapes and
dtypes (the table also checks ``infer`` on every call), ranges, moments of a large
sample within a statistical tolerance, reproducibility after ``core.random.seed``,
identical streams on ``cpu(0)`` and ``cpu(1)`` after seeding all contexts, different
ones after seeding one, and bad input raising errors that name the operator.
"""
import math

import numpy as np
import pytest

import core
from core import cpu, nd
from core import np as knp

from .op_db import OpSpec

N = 200_000  # large-sample size for the moment checks
Z = 5.0  # tolerance of the moment checks, in standard errors


def _a(x):
    return x.asnumpy() if hasattr(x, "asnumpy") else np.asarray(x)


def _dt(x, shape, dtype):
    assert x.shape == tuple(shape), (x.shape, shape)
    assert x.dtype == np.dtype(dtype) if dtype != "bfloat16" else x.dtype.name == "bfloat16", \
        (x.dtype, dtype)


def _mean_close(x, mean, std, n=None):
    x = _a(x).astype(np.float64).ravel()
    n = n or x.size
    assert abs(x.mean() - mean) < Z * std / math.sqrt(n) + 1e-12, (x.mean(), mean, std)


def _std_close(x, std, rel=0.02):
    x = _a(x).astype(np.float64).ravel()
    assert abs(x.std() - std) < rel * std, (x.std(), std)


def _reproducible(draw):
    """draw(ctx) -> NDArray. Seeding makes streams reproducible, per context."""
    core.random.seed(1234)
    a0, a1 = _a(draw(cpu(0))), _a(draw(cpu(0)))
    b0 = _a(draw(cpu(1)))
    assert np.array_equal(a0, b0), "cpu(0) and cpu(1) differ after seed(..., ctx='all')"
    assert not np.array_equal(a0, a1), "consecutive draws are equal"
    core.random.seed(1234)
    assert np.array_equal(_a(draw(cpu(0))), a0)
    core.random.seed(99, ctx=cpu(1))  # leaves cpu(0)'s stream alone
    assert np.array_equal(_a(draw(cpu(0))), a1)
    assert not np.array_equal(_a(draw(cpu(1))), a0), "seeding cpu(1) alone had no effect"
    core.random.seed(99, ctx="cpu(1)")
    c = _a(draw(cpu(1)))
    core.random.seed(99, ctx=cpu(1))
    assert np.array_equal(_a(draw(cpu(1))), c)


def _same_on_views(arr, draw, *values, dtype=None):
    """After the same seed, ``draw`` gives the same values with its array arguments made
    by ``arr`` (views in ``test_noncontiguous``) as with contiguous ones, and writes
    them into an ``out=`` made by ``arr`` (arguments: NumPy values, as ``nd.array``
    makes them, or in ``dtype``)."""
    core.random.seed(77)
    expect = _a(draw(*[nd.array(v, dtype=dtype) for v in values]))
    core.random.seed(77)
    got = _a(draw(*[arr(v, dtype=dtype) for v in values]))
    assert got.dtype == expect.dtype and np.array_equal(got, expect), "views draw otherwise"
    core.random.seed(77)
    out = arr(np.zeros(expect.shape), dtype=expect.dtype)
    assert draw(*[arr(v, dtype=dtype) for v in values], out=out) is out
    assert np.array_equal(_a(out), expect), "a draw into a strided out= differs"


def _raises(name, *calls, exc=ValueError):
    for call in calls:
        with pytest.raises(exc, match=name):
            call()


# ----------------------------------------------------------------------- uniform/normal
def _check_uniform(spec, rng, arr):
    core.random.seed(0)
    for dt in ("float32", "float64", "float16", "bfloat16"):
        x = nd.random.uniform(-2, 3, shape=(N,), dtype=dt)
        _dt(x, (N,), dt)
        v = _a(x).astype(np.float64)
        assert v.min() >= -2 and v.max() < 3, (dt, v.min(), v.max())
        _mean_close(v, 0.5, 5 / math.sqrt(12))
    x = nd.random.uniform(shape=(N,))
    _dt(x, (N,), "float32")
    _std_close(x, 1 / math.sqrt(12))
    _dt(nd.random.uniform(0, 1), (1,), "float32")  # MXNet: no shape gives (1,)
    _dt(nd.random.uniform(high=4.0, shape=(2, 3)), (2, 3), "float32")
    _dt(nd.random_uniform(0, 1, shape=5), (5,), "float32")
    _dt(nd.random.uniform(shape=()), (), "float32")
    # Array parameters: `shape` samples per element (MXNet's sample_uniform).
    lo, hi = arr([0.0, 10.0, -5.0]), arr([1.0, 10.5, -4.0])
    x = nd.random.uniform(lo, hi, shape=(4000,))
    _dt(x, (3, 4000), "float32")
    v = _a(x)
    for i, (l, h) in enumerate([(0, 1), (10, 10.5), (-5, -4)]):
        assert v[i].min() >= l and v[i].max() < h
        _mean_close(v[i], (l + h) / 2, (h - l) / math.sqrt(12))
    _dt(nd.random.uniform(lo, hi), (3,), "float32")
    _dt(nd.sample_uniform(lo.astype("float64"), hi.astype("float64"), shape=2), (3, 2),
        "float64")
    _dt(nd.random.uniform(lo, 20.0, shape=(2, 2)), (3, 2, 2), "float32")
    out = nd.zeros((2, 2))
    assert nd.random.uniform(5, 6, shape=(2, 2), out=out) is out
    assert _a(out).min() >= 5
    _reproducible(lambda c: nd.random.uniform(shape=(3, 4), ctx=c))
    _same_on_views(arr, lambda lo, hi, **o: nd.random.uniform(lo, hi, shape=(5,), **o),
                   [[0.0, 10.0], [-5.0, 1.0]], [[1.0, 10.5], [-4.0, 2.0]])
    _same_on_views(arr, lambda **o: nd.random.uniform(-1, 2, shape=(3, 4), **o))
    _reproducible(lambda c: nd.random.uniform(nd.array([0, 1], ctx=c), nd.array([1, 2], ctx=c),
                                              shape=3))
    _raises("random_uniform",
            lambda: nd.random.uniform(2, 1, shape=(3,)),
            lambda: nd.random.uniform(shape=(0, 2)),
            lambda: nd.random.uniform(shape=(2, -1)),
            lambda: nd.random.uniform(nd.array([2.0]), nd.array([1.0])),
            lambda: nd.random.uniform(nd.zeros((2,)), nd.ones((3,))))
    _raises("random_uniform", lambda: nd.random.uniform(shape=(2,), dtype="int32"),
            lambda: nd.random.uniform(shape=2.5), exc=TypeError)


def _check_normal(spec, rng, arr):
    core.random.seed(1)
    for dt in ("float32", "float64", "float16", "bfloat16"):
        x = nd.random.normal(1.5, 2.0, shape=(N,), dtype=dt)
        _dt(x, (N,), dt)
        _mean_close(x, 1.5, 2.0)
        _std_close(x, 2.0, rel=0.03)
    x = nd.random.normal(scale=0.01, shape=(N,))  # loc not given: scale still binds
    _std_close(x, 0.01)
    _dt(nd.random.normal(), (1,), "float32")
    _dt(nd.random_normal(0, 1, shape=(2, 3)), (2, 3), "float32")
    loc, scale = arr([[-3.0], [4.0]]), arr([0.5, 2.0])
    x = nd.random.normal(loc, scale, shape=(20000,))
    _dt(x, (2, 2, 20000), "float32")
    v = _a(x)
    for i, m in enumerate((-3.0, 4.0)):
        for j, s in enumerate((0.5, 2.0)):
            _mean_close(v[i, j], m, s)
            _std_close(v[i, j], s, rel=0.03)
    _dt(nd.sample_normal(loc.astype("float64"), 1.0), (2, 1), "float64")
    _dt(nd.random.normal(0, 0, shape=(2,)), (2,), "float32")
    assert np.all(_a(nd.random.normal(3.0, 0.0, shape=(5,))) == 3.0)
    _reproducible(lambda c: nd.random.normal(shape=(7,), ctx=c))
    _same_on_views(arr, lambda loc, scale, **o: nd.random.normal(loc, scale, shape=(4,), **o),
                   [[-3.0, 1.0], [4.0, 0.0]], [[0.5, 2.0], [1.0, 3.0]])
    _same_on_views(arr, lambda **o: nd.random.normal(1, 2, shape=(2, 3), **o))
    _raises("random_normal", lambda: nd.random.normal(0, -1, shape=(2,)),
            lambda: nd.random.normal(shape=(3, 0)),
            lambda: nd.random.normal(nd.zeros((2,)), nd.array([1.0, -1.0])))


def _check_randint(spec, rng, arr):
    core.random.seed(2)
    x = nd.random.randint(-3, 7, shape=(N,))
    _dt(x, (N,), "int32")
    v = _a(x)
    assert v.min() == -3 and v.max() == 6
    counts = np.bincount(v + 3, minlength=10)
    _chi_square(counts, np.full(10, 0.1))
    _dt(nd.random.randint(0, 5), (1,), "int32")
    _dt(nd.random.randint(0, 5, shape=(2, 3), dtype="int64"), (2, 3), "int64")
    _dt(nd.random_randint(0, 2 ** 40, shape=(4,), dtype="int64"), (4,), "int64")
    assert set(_a(nd.random.randint(4, 5, shape=(10,))).tolist()) == {4}
    _reproducible(lambda c: nd.random.randint(0, 1000, shape=(6,), ctx=c))
    _same_on_views(arr, lambda **o: nd.random.randint(-3, 70, shape=(4, 3), **o))
    _raises("random_randint", lambda: nd.random.randint(5, 2, shape=(2,)),
            lambda: nd.random.randint(3, 3), lambda: nd.random.randint(0, 5, shape=(0,)),
            lambda: nd.random.randint(0, 2 ** 40, shape=(2,), dtype="int32"))
    _raises("random_randint", lambda: nd.random.randint(0, 5, dtype="float32"),
            lambda: nd.random.randint(0.5, 5), lambda: nd.random.randint(high=5), exc=TypeError)


def _chi_square(counts, probs):
    """Pearson's statistic well under a generous bound (about 6 sigma over its mean)."""
    counts = np.asarray(counts, dtype=np.float64)
    keep = probs > 0
    assert np.all(counts[~keep] == 0), "a zero-probability outcome was drawn"
    exp = counts.sum() * probs[keep]
    stat = ((counts[keep] - exp) ** 2 / exp).sum()
    dof = max(keep.sum() - 1, 1)
    assert stat < dof + 6 * math.sqrt(2 * dof), (stat, dof, counts, exp)


# ----------------------------------------------------------------------- other nd
def _check_exponential(spec, rng, arr):
    core.random.seed(3)
    x = nd.random.exponential(0.25, shape=(N,))  # nd.random.exponential takes the scale
    _dt(x, (N,), "float32")
    assert _a(x).min() >= 0
    _mean_close(x, 0.25, 0.25)
    _std_close(x, 0.25, rel=0.03)
    _mean_close(nd.random_exponential(4.0, shape=(N,)), 0.25, 0.25)  # the operator: rate
    _mean_close(nd.sample_exponential(nd.array([4.0]), shape=(N,)), 0.25, 0.25)
    _dt(nd.random.exponential(), (1,), "float32")
    scale = arr([1.0, 0.1], dtype="float64")
    v = _a(nd.random.exponential(scale, shape=(50000,)))
    assert v.shape == (2, 50000) and v.dtype == np.float64
    _mean_close(v[0], 1.0, 1.0)
    _mean_close(v[1], 0.1, 0.1)
    _dt(nd.random_exponential(2, shape=(3,), dtype="float16"), (3,), "float16")
    _reproducible(lambda c: nd.random.exponential(shape=(5,), ctx=c))
    _same_on_views(arr, lambda lam, **o: nd.random_exponential(lam, shape=(3,), **o),
                   [[1.0, 10.0], [0.5, 2.0]], dtype="float64")
    _same_on_views(arr, lambda **o: nd.random.exponential(2.0, shape=(2, 3), **o))
    _raises("random_exponential", lambda: nd.random_exponential(0.0, shape=(2,)),
            lambda: nd.random.exponential(-1, shape=(2,)),
            lambda: nd.random_exponential(nd.array([1.0, 0.0])))


def _check_negative_binomial(spec, rng, arr):
    core.random.seed(31)
    k, p = 3, 0.4
    x = nd.random.negative_binomial(k, p, shape=(N,))
    _dt(x, (N,), "float32")
    assert _a(x).min() >= 0 and np.all(_a(x) == np.round(_a(x)))
    _mean_close(x, k * (1 - p) / p, math.sqrt(k * (1 - p)) / p)
    _dt(nd.random.negative_binomial(2, 0.5, shape=(2, 3), dtype="float64"), (2, 3), "float64")
    v = _a(nd.sample_negative_binomial(arr([2.0, 5.0]), arr([0.5, 0.8]), shape=(40000,)))
    assert v.shape == (2, 40000)
    for i, (kk, pp) in enumerate(((2, 0.5), (5, 0.8))):
        _mean_close(v[i], kk * (1 - pp) / pp, math.sqrt(kk * (1 - pp)) / pp)
    _reproducible(lambda c: nd.random.negative_binomial(4, 0.3, shape=(6,), ctx=c))
    _raises("random_negative_binomial", lambda: nd.random.negative_binomial(0, 0.5, shape=(2,)),
            lambda: nd.random.negative_binomial(2, 1.5, shape=(2,)),
            lambda: nd.random.negative_binomial(2, 0.0, shape=(2,)))


def _check_generalized_negative_binomial(spec, rng, arr):
    core.random.seed(32)
    mu, alpha = 2.0, 0.3
    x = nd.random.generalized_negative_binomial(mu, alpha, shape=(N,))
    _dt(x, (N,), "float32")
    _mean_close(x, mu, math.sqrt(mu + alpha * mu * mu))
    _std_close(x, math.sqrt(mu + alpha * mu * mu), rel=0.03)
    # alpha = 0 is Poisson(mu)
    v = _a(nd.sample_generalized_negative_binomial(arr([3.0, 3.0]), arr([0.0, 1.0]),
                                                   shape=(40000,)))
    _mean_close(v[0], 3.0, math.sqrt(3.0))
    _std_close(v[0], math.sqrt(3.0), rel=0.04)
    _std_close(v[1], math.sqrt(3.0 + 9.0), rel=0.04)
    _reproducible(lambda c: nd.random.generalized_negative_binomial(shape=(6,), ctx=c))
    _raises("random_generalized_negative_binomial",
            lambda: nd.random.generalized_negative_binomial(-1.0, 0.5, shape=(2,)),
            lambda: nd.random.generalized_negative_binomial(1.0, -0.5, shape=(2,)))


def _check_unique_zipfian(spec, rng, arr):
    core.random.seed(33)
    classes, trials = nd._internal._sample_unique_zipfian(1000, shape=(3, 50))
    _dt(classes, (3, 50), "int64")
    _dt(trials, (3,), "int64")
    c = _a(classes)
    for row, t in zip(c, _a(trials)):
        assert np.unique(row).size == 50 and row.min() >= 0 and row.max() < 1000
        assert 50 <= t < 1000
    # every class: a draw of it in a row of 1 is one trial; frequent classes come first
    core.random.seed(33)
    one, t1 = nd._internal._sample_unique_zipfian(10, shape=(4000, 1))
    assert np.all(_a(t1) == 1)
    counts = np.bincount(_a(one).ravel(), minlength=10)
    probs = np.log((np.arange(10) + 2) / (np.arange(10) + 1)) / np.log(11)
    _chi_square(counts, probs)
    _reproducible(lambda c: nd._internal._sample_unique_zipfian(100, shape=(2, 5), ctx=c)[0])
    _raises("_sample_unique_zipfian",
            lambda: nd._internal._sample_unique_zipfian(5, shape=(2, 6)),
            lambda: nd._internal._sample_unique_zipfian(0, shape=(2, 1)),
            lambda: nd._internal._sample_unique_zipfian(5, shape=(6,)))
    # contrib.rand_zipfian: candidates with replacement and their expected counts
    s, et, es = nd.contrib.rand_zipfian(arr([0, 3], dtype="int32"), 2000, 20)
    _dt(s, (2000,), "int64")
    p20 = np.log((np.arange(20) + 2) / (np.arange(20) + 1)) / np.log(21)
    np.testing.assert_allclose(_a(et), 2000 * p20[[0, 3]])
    np.testing.assert_allclose(_a(es), 2000 * p20[_a(s)])
    _chi_square(np.bincount(_a(s), minlength=20), p20 / p20.sum())


def _check_gamma(spec, rng, arr):
    core.random.seed(4)
    x = nd.random.gamma(2.0, 3.0, shape=(N,))  # shape alpha, scale beta
    _dt(x, (N,), "float32")
    assert _a(x).min() >= 0
    _mean_close(x, 6.0, math.sqrt(2) * 3)
    _std_close(x, math.sqrt(2) * 3, rel=0.03)
    v = _a(nd.random.gamma(arr([0.5, 5.0]), arr([1.0, 2.0]), shape=(40000,)))
    assert v.shape == (2, 40000)
    _mean_close(v[0], 0.5, math.sqrt(0.5))
    _mean_close(v[1], 10.0, math.sqrt(5) * 2)
    _dt(nd.random_gamma(1, 1, shape=(2,), dtype="float64"), (2,), "float64")
    _reproducible(lambda c: nd.random.gamma(2, shape=(5,), ctx=c))
    _same_on_views(arr, lambda a, b, **o: nd.random.gamma(a, b, shape=(3,), **o),
                   [[0.5, 5.0], [2.0, 1.0]], [[1.0, 2.0], [0.5, 3.0]])
    _same_on_views(arr, lambda **o: nd.random.gamma(2.0, 3.0, shape=(2, 3), **o))
    _raises("random_gamma", lambda: nd.random.gamma(0, 1, shape=(2,)),
            lambda: nd.random.gamma(1, -1, shape=(2,)),
            lambda: nd.random.gamma(nd.array([1.0, -2.0])))


def _check_poisson(spec, rng, arr):
    core.random.seed(5)
    x = nd.random.poisson(3.5, shape=(N,))
    _dt(x, (N,), "float32")  # float32 by default, as in MXNet
    v = _a(x)
    assert np.all(v == np.round(v)) and v.min() >= 0
    _mean_close(v, 3.5, math.sqrt(3.5))
    _std_close(v, math.sqrt(3.5), rel=0.03)
    _dt(nd.random.poisson(2, shape=(3,), dtype="int32"), (3,), "int32")
    v = _a(nd.random.poisson(arr([0.0, 20.0]), shape=(20000,)))
    assert np.all(v[0] == 0)
    _mean_close(v[1], 20.0, math.sqrt(20))
    _reproducible(lambda c: nd.random.poisson(shape=(5,), ctx=c))
    _same_on_views(arr, lambda lam, **o: nd.random.poisson(lam, shape=(3,), **o),
                   [[0.5, 20.0], [3.0, 1.0]])
    _same_on_views(arr, lambda **o: nd.random.poisson(3.5, shape=(2, 3), **o))
    _raises("random_poisson", lambda: nd.random.poisson(-1, shape=(2,)),
            lambda: nd.random.poisson(nd.array([-1.0])))


def _check_shuffle(spec, rng, arr):
    core.random.seed(6)
    x = arr(np.arange(24).reshape(8, 3))
    y = nd.random.shuffle(x)
    _dt(y, (8, 3), "float32")
    v = _a(y)
    assert sorted(v[:, 0].tolist()) == list(range(0, 24, 3)), "not a permutation of rows"
    assert np.array_equal(v[:, 1] - v[:, 0], np.ones(8)), "rows were not kept together"
    assert np.array_equal(_a(x), np.arange(24).reshape(8, 3)), "the input changed"
    # Every permutation of 3 items about equally often.
    seen = {}
    for _ in range(3000):
        k = tuple(_a(nd.random.shuffle(nd.array([0, 1, 2], dtype="int32"))).tolist())
        seen[k] = seen.get(k, 0) + 1
    assert len(seen) == 6
    _chi_square(np.array(list(seen.values())), np.full(6, 1 / 6))
    p = knp.random.permutation(10)
    _dt(p, (10,), "int64")
    assert sorted(_a(p).tolist()) == list(range(10))
    _dt(knp.random.permutation(knp.array(np.arange(5.0))), (5,), "float64")
    _dt(knp.random.permutation(0), (0,), "int64")
    _reproducible(lambda c: nd.random.shuffle(nd.arange(20, ctx=c)))
    _same_on_views(arr, lambda x, **o: nd.random.shuffle(x, **o), np.arange(24.0).reshape(6, 4))
    _same_on_views(arr, lambda x, **o: knp.random.permutation(x, **o), np.arange(12.0))
    _raises("random_shuffle", lambda: nd.random.shuffle(nd.array(3.0)),
            lambda: knp.random.permutation(-1))


def _check_multinomial(spec, rng, arr):
    # MXNet: more categories than the output dtype holds exactly is an MXNetError
    from core.ops.dispatch import MXNetError

    for dt, k in (("uint8", 256), ("float16", 2049)):
        assert _a(nd.random.multinomial(arr(np.ones(k) / k), dtype=dt)).shape == (1,)
        with pytest.raises(MXNetError, match="random_multinomial.*do not fit"):
            nd.random.multinomial(arr(np.ones(k + 1) / (k + 1)), dtype=dt)
    y = nd.random.multinomial(arr([0.2, 0.8]), shape=5, get_prob=True)
    assert isinstance(y, list) and len(y) == 2  # MXNet's nd function returns a list
    core.random.seed(7)
    probs = np.array([[0.0, 0.1, 0.2, 0.3, 0.4], [0.4, 0.3, 0.2, 0.1, 0.0]])
    s = nd.random.multinomial(arr(probs), shape=N // 2)
    _dt(s, (2, N // 2), "int32")
    v = _a(s)
    for i in range(2):
        _chi_square(np.bincount(v[i], minlength=5), probs[i])
    _dt(nd.random.multinomial(nd.array(probs[0])), (1,), "int32")  # MXNet: shape (1,)
    _dt(nd.random.multinomial(nd.array(probs)), (2,), "int32")
    _dt(nd.random.multinomial(nd.array(probs[0]), shape=(2, 3), dtype="int64"), (2, 3), "int64")
    # Unnormalized rows are normalized; a single category is always drawn.
    v = _a(nd.sample_multinomial(nd.array([[2.0, 6.0], [0.0, 5.0]]), shape=20000))
    assert np.all(v[1] == 1)
    _mean_close(v[0], 0.75, math.sqrt(0.75 * 0.25))
    s, logp = nd.random.multinomial(arr(probs, dtype="float64"), shape=3, get_prob=True)
    _dt(s, (2, 3), "int32")
    _dt(logp, (2, 3), "float64")
    np.testing.assert_allclose(_a(logp), np.log(np.take_along_axis(probs, _a(s), axis=1)))
    # get_prob's gradient: d sum(g * log p[s]) / dp = scatter of g / p[s] (REINFORCE).
    p = arr(probs[:, :4] + 0.05)
    p.attach_grad()
    with core.autograd.record():
        s, logp = nd.random.multinomial(p, shape=6, get_prob=True)
    g = rng.uniform(-1, 1, (2, 6))
    logp.backward(nd.array(g))
    expect = np.zeros((2, 4))
    pv, sv = _a(p), _a(s)
    for i in range(2):
        for j in range(6):
            expect[i, sv[i, j]] += g[i, j] / pv[i, sv[i, j]]
    np.testing.assert_allclose(_a(p.grad), expect, rtol=1e-5)
    _reproducible(lambda c: nd.random.multinomial(nd.array(probs, ctx=c), shape=10))
    _same_on_views(arr, lambda p, **o: nd.random.multinomial(p, shape=7, **o), probs[:, :4] + 0.05)
    _same_on_views(arr, lambda p, **o: nd.random.multinomial(p, **o), probs[::-1] + 0.05)
    _raises("random_multinomial", lambda: nd.random.multinomial(nd.array([0.5, -0.1, 0.6])),
            lambda: nd.random.multinomial(nd.array([[0.0, 0.0]])),
            lambda: nd.random.multinomial(nd.array([0.5, 0.5]), shape=(0,)),
            lambda: nd.random.multinomial(nd.zeros((2, 0))))
    _raises("random_multinomial", lambda: nd.random.multinomial(nd.array([1, 2], dtype="int32")),
            exc=TypeError)


# ----------------------------------------------------------------------- np
def _check_np_uniform(spec, rng, arr):
    core.random.seed(8)
    x = knp.random.uniform(-1, 1, size=(N,))
    _dt(x, (N,), "float32")
    v = _a(x)
    assert v.min() >= -1 and v.max() < 1
    _mean_close(v, 0.0, 2 / math.sqrt(12))
    _dt(knp.random.uniform(), (), "float32")  # NumPy: no size gives one value
    _dt(knp.random.uniform(0, 1, 5), (5,), "float32")
    _dt(knp.random.uniform(0, 1, (2, 0)), (2, 0), "float32")
    low = arr([0.0, 100.0], dtype="float64")
    x = knp.random.uniform(low, low + 1)  # broadcast, not per-element samples
    _dt(x, (2,), "float64")
    assert 0 <= _a(x)[0] < 1 and 100 <= _a(x)[1] < 101
    v = _a(knp.random.uniform(low, 101.0, size=(30000, 2)))
    assert v.shape == (30000, 2)
    _mean_close(v[:, 0], 50.5, 101 / math.sqrt(12))
    _mean_close(v[:, 1], 100.5, 1 / math.sqrt(12))
    _reproducible(lambda c: knp.random.uniform(size=(4,), ctx=c))
    _same_on_views(arr, lambda lo, hi, **o: knp.random.uniform(lo, hi, **o),
                   [[0.0, 100.0], [-1.0, 3.0]], [[1.0, 101.0], [0.0, 5.0]], dtype="float64")
    _same_on_views(arr, lambda **o: knp.random.uniform(-1, 1, size=(3, 4), **o))
    _raises("np_random_uniform", lambda: knp.random.uniform(1, 0),
            lambda: knp.random.uniform(size=(-1,)),
            lambda: knp.random.uniform(knp.zeros((3,)), 1.0, size=(2,)))


def _check_np_normal(spec, rng, arr):
    core.random.seed(9)
    x = knp.random.normal(-1.0, 0.5, (N,), dtype="float64")
    _dt(x, (N,), "float64")
    _mean_close(x, -1.0, 0.5)
    _std_close(x, 0.5)
    _dt(knp.random.normal(), (), "float32")
    _dt(knp.random.normal(scale=2.0, size=3), (3,), "float32")
    v = _a(knp.random.normal(arr([[0.0], [10.0]], dtype="float64"), 1.0, size=(2, 20000)))
    _mean_close(v[0], 0.0, 1.0)
    _mean_close(v[1], 10.0, 1.0)
    _reproducible(lambda c: knp.random.normal(size=(4,), ctx=c))
    _same_on_views(arr, lambda loc, **o: knp.random.normal(loc, 2.0, size=(2, 3), **o),
                   [[0.0, 1.0, 2.0], [10.0, 11.0, 12.0]], dtype="float64")
    _same_on_views(arr, lambda **o: knp.random.normal(0.5, 2.0, size=(3, 4), **o))
    _raises("np_random_normal", lambda: knp.random.normal(0, -0.5, size=3))


def _check_np_randint(spec, rng, arr):
    core.random.seed(10)
    x = knp.random.randint(5, size=(N,))  # [0, low) without high
    _dt(x, (N,), "int64")
    _chi_square(np.bincount(_a(x), minlength=5), np.full(5, 0.2))
    _dt(knp.random.randint(2, 4), (), "int64")
    _dt(knp.random.randint(-4, -2, 3, dtype="int8"), (3,), "int8")
    assert set(_a(knp.random.randint(-4, -2, 100)).tolist()) == {-4, -3}
    _reproducible(lambda c: knp.random.randint(0, 100, size=(5,), ctx=c))
    _same_on_views(arr, lambda **o: knp.random.randint(0, 100, size=(3, 4), **o))
    _raises("np_random_randint", lambda: knp.random.randint(0),
            lambda: knp.random.randint(0, 300, size=2, dtype="uint8"))


def _check_np_exponential(spec, rng, arr):
    core.random.seed(11)
    x = knp.random.exponential(3.0, size=N)  # NumPy's argument is the scale
    _dt(x, (N,), "float32")
    _mean_close(x, 3.0, 3.0)
    _dt(knp.random.exponential(), (), "float32")
    _reproducible(lambda c: knp.random.exponential(size=(4,), ctx=c))
    _same_on_views(arr, lambda s, **o: knp.random.exponential(s, **o), [[1.0, 3.0], [0.5, 2.0]],
                   dtype="float64")
    _same_on_views(arr, lambda **o: knp.random.exponential(3.0, size=(3, 4), **o))
    _raises("np_random_exponential", lambda: knp.random.exponential(-1.0))


def _check_np_gamma(spec, rng, arr):
    core.random.seed(12)
    x = knp.random.gamma(3.0, 0.5, size=N)
    _dt(x, (N,), "float32")
    _mean_close(x, 1.5, math.sqrt(3) * 0.5)
    _dt(knp.random.gamma(2.0), (), "float32")
    _dt(knp.random.gamma(arr([1.0, 2.0, 3.0], dtype="float64")), (3,), "float64")
    _reproducible(lambda c: knp.random.gamma(2.0, size=(4,), ctx=c))
    _same_on_views(arr, lambda a, **o: knp.random.gamma(a, 0.5, **o), [[1.0, 2.0], [3.0, 0.5]],
                   dtype="float64")
    _same_on_views(arr, lambda **o: knp.random.gamma(3.0, 0.5, size=(3, 4), **o))
    _raises("np_random_gamma", lambda: knp.random.gamma(-1.0, size=2),
            lambda: knp.random.gamma(1.0, -2.0))


def _check_np_poisson(spec, rng, arr):
    core.random.seed(13)
    x = knp.random.poisson(0.7, size=N)
    _dt(x, (N,), "int64")
    _mean_close(x, 0.7, math.sqrt(0.7))
    _dt(knp.random.poisson(), (), "int64")
    _reproducible(lambda c: knp.random.poisson(4.0, size=(4,), ctx=c))
    _same_on_views(arr, lambda lam, **o: knp.random.poisson(lam, **o), [[0.7, 4.0], [2.0, 9.0]],
                   dtype="float64")
    _same_on_views(arr, lambda **o: knp.random.poisson(0.7, size=(3, 4), **o))
    _raises("np_random_poisson", lambda: knp.random.poisson(-0.1))


def _check_np_multinomial(spec, rng, arr):
    core.random.seed(14)
    pv = np.array([0.2, 0.0, 0.5, 0.3])
    x = knp.random.multinomial(10, pv.tolist(), size=20000)
    _dt(x, (20000, 4), "int64")
    v = _a(x)
    assert np.all(v.sum(axis=1) == 10) and np.all(v[:, 1] == 0)
    for j in range(4):
        _mean_close(v[:, j], 10 * pv[j], math.sqrt(10 * pv[j] * (1 - pv[j])))
    _dt(knp.random.multinomial(3, arr(pv, dtype="float64")), (4,), "int64")
    _dt(knp.random.multinomial(0, [0.5, 0.5], size=(2, 3)), (2, 3, 2), "int64")
    assert _a(knp.random.multinomial(0, [0.5, 0.5], size=2)).sum() == 0
    _reproducible(lambda c: knp.random.multinomial(20, [0.3, 0.7], size=5, ctx=c))
    _same_on_views(arr, lambda p, **o: knp.random.multinomial(10, p, size=(3, 2), **o),
                   pv[::-1].copy(), dtype="float64")
    _raises("np_random_multinomial", lambda: knp.random.multinomial(3, [0.7, 0.6, 0.1]),
            lambda: knp.random.multinomial(3, [-0.1, 1.1]),
            lambda: knp.random.multinomial(3, [0.5, 0.5], size=-1))
    _raises("np_random_multinomial", lambda: knp.random.multinomial(-1, [0.5, 0.5]),
            exc=TypeError)


def _check_np_choice(spec, rng, arr):
    core.random.seed(15)
    x = knp.random.choice(4, N)
    _dt(x, (N,), "int64")
    _chi_square(np.bincount(_a(x), minlength=4), np.full(4, 0.25))
    p = np.array([0.1, 0.0, 0.6, 0.3])
    x = knp.random.choice(4, N, p=p.tolist())
    _chi_square(np.bincount(_a(x), minlength=4), p)
    a = arr([10.0, 20.0, 30.0], dtype="float64")
    x = knp.random.choice(a, (2, 3))
    _dt(x, (2, 3), "float64")
    assert set(_a(x).ravel().tolist()) <= {10.0, 20.0, 30.0}
    _dt(knp.random.choice(a), (), "float64")
    x = knp.random.choice(10, 10, replace=False)
    assert sorted(_a(x).tolist()) == list(range(10))
    # Weighted without replacement: the first pick follows p; all picks distinct.
    firsts = np.zeros(4)
    for _ in range(2000):
        s = _a(knp.random.choice(4, 3, False, knp.array(p)))
        assert len(set(s.tolist())) == 3 and 1 not in s.tolist()
        firsts[s[0]] += 1
    _chi_square(firsts, p)
    _reproducible(lambda c: knp.random.choice(100, 5, ctx=c))
    _same_on_views(arr, lambda a, **o: knp.random.choice(a, (2, 3), **o),
                   [10.0, 20.0, 30.0, 40.0], dtype="float64")
    _same_on_views(arr, lambda a, p, **o: knp.random.choice(a, (2, 3), True, p, **o),
                   [10.0, 20.0, 30.0, 40.0], p[::-1].copy(), dtype="float64")
    _raises("np_random_choice", lambda: knp.random.choice(3, 4, replace=False),
            lambda: knp.random.choice(3, 2, p=[0.5, 0.5]),
            lambda: knp.random.choice(3, 2, p=[0.5, 0.6, -0.1]),
            lambda: knp.random.choice(3, 3, False, [0.5, 0.5, 0.0]),
            lambda: knp.random.choice(knp.zeros((2, 2)), 1),
            lambda: knp.random.choice(0, 1))


def _row(name, check, covers=()):
    return OpSpec(name, None, None, None, check=check, covers=covers)


SPECS = [
    _row("random_uniform", _check_uniform),
    _row("random_normal", _check_normal),
    _row("random_randint", _check_randint),
    _row("random_exponential", _check_exponential),
    _row("random_gamma", _check_gamma),
    _row("random_negative_binomial", _check_negative_binomial),
    _row("random_generalized_negative_binomial", _check_generalized_negative_binomial),
    _row("_sample_unique_zipfian", _check_unique_zipfian),
    _row("random_poisson", _check_poisson),
    _row("random_shuffle", _check_shuffle),
    _row("random_multinomial", _check_multinomial, covers=("_random_multinomial_grad",)),
    _row("np_random_uniform", _check_np_uniform),
    _row("np_random_normal", _check_np_normal),
    _row("np_random_randint", _check_np_randint),
    _row("np_random_exponential", _check_np_exponential),
    _row("np_random_gamma", _check_np_gamma),
    _row("np_random_poisson", _check_np_poisson),
    _row("np_random_multinomial", _check_np_multinomial),
    _row("np_random_choice", _check_np_choice),
]
