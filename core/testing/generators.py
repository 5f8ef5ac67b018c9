"""Statistical checks of random generators (chi-square, mean, variance).

Part of ``core.test_utils`` (MXNet's ``mx.test_utils``); import from there.
"""
from __future__ import annotations

from collections.abc import Callable

import numpy as np

from .compare import asnumpy

__all__ = [
    "chi_square_check",
    "gen_buckets_probs_with_ppf",
    "mean_check",
    "var_check",
    "verify_generator",
]


def gen_buckets_probs_with_ppf(ppf: Callable, nbuckets: int) -> tuple:
    """``nbuckets`` equal-probability buckets ``[(lo, hi), ...]`` from a quantile function,
    and their probabilities."""
    if nbuckets <= 0:
        raise ValueError(f"gen_buckets_probs_with_ppf: nbuckets must be positive, got {nbuckets}")
    probs = [1.0 / nbuckets] * nbuckets
    buckets = [(ppf(i / float(nbuckets)), ppf((i + 1) / float(nbuckets)))
               for i in range(nbuckets)]
    return buckets, probs


def mean_check(generator: Callable, mu: float, sigma: float, nsamples: int = 1000000) -> bool:
    """Whether the mean of ``generator(nsamples)`` is within 3 sigma / sqrt(n) of ``mu``."""
    mean = np.asarray(asnumpy(generator(nsamples)), np.float64).mean()
    half = 3 * sigma / np.sqrt(nsamples)
    return bool(mu - half < mean < mu + half)


def var_check(generator: Callable, sigma: float, nsamples: int = 1000000) -> bool:
    """Whether the sample variance of ``generator(nsamples)`` is within 3 standard errors
    of ``sigma ** 2`` (normal approximation)."""
    samples = np.asarray(asnumpy(generator(nsamples)), np.float64)
    var = samples.var(ddof=1)
    half = 3 * np.sqrt(2 * sigma ** 4 / (nsamples - 1))
    return bool(sigma ** 2 - half < var < sigma ** 2 + half)


def chi_square_check(generator: Callable, buckets: list, probs, nsamples: int = 1000000):
    """Pearson's chi-square test of ``generator(nsamples)`` against bucket probabilities.

    Args:
        generator: ``generator(n)`` returns ``n`` i.i.d. samples.
        buckets: ascending, disjoint ``(lo, hi)`` ranges (continuous), or the possible
            values (discrete).
        probs: the probability of each bucket.
        nsamples: the number of samples.

    Returns:
        ``(p value, observed counts, expected counts)``.
    """
    from scipy import stats  # the test's reference distribution; scipy is a test dependency

    if not isinstance(buckets, list):
        raise TypeError("chi_square_check: buckets must be a list")
    if len(probs) != len(buckets):
        raise ValueError(f"chi_square_check: {len(probs)} probs for {len(buckets)} buckets")
    samples = np.asarray(asnumpy(generator(nsamples))).reshape(-1)
    expected = (nsamples * np.array(probs, dtype=np.float32)).astype(np.int64)
    observed = np.zeros(len(buckets), dtype=np.int64)
    if isinstance(buckets[0], (list, tuple)):
        edges = np.zeros(len(buckets) * 2, dtype=np.float32)
        for i, (lo, hi) in enumerate(buckets):
            if lo > hi or (i + 1 < len(buckets) and hi > buckets[i + 1][0]):
                raise ValueError(f"chi_square_check: buckets must be ascending and disjoint, "
                                 f"bucket {i} is {buckets[i]}")
            edges[2 * i], edges[2 * i + 1] = lo, hi
        ids = np.searchsorted(edges, samples, side="right") // 2
        for i in range(len(buckets)):
            observed[i] = int((ids == i).sum())
    else:
        for i, v in enumerate(buckets):
            observed[i] = int((samples == v).sum())
    # scipy wants equal totals: compare the observed share with the expected one
    scale = observed.sum() / max(expected.sum(), 1)
    _, p = stats.chisquare(f_obs=observed, f_exp=expected * scale)
    return p, observed, expected


def verify_generator(generator: Callable, buckets: list, probs, nsamples: int = 1000000,
                     nrepeat: int = 5, success_rate: float = 0.2, alpha: float = 0.05) -> list:
    """Repeat :func:`chi_square_check` ``nrepeat`` times; assert that at least
    ``success_rate`` of the runs have p > ``alpha``. Returns the p values."""
    ps, obs, exp = [], [], []
    for _ in range(nrepeat):
        p, o, e = chi_square_check(generator, buckets, probs, nsamples)
        ps.append(p)
        obs.append(o)
        exp.append(e)
    if (np.array(ps) > alpha).sum() < nrepeat * success_rate:
        raise AssertionError(f"verify_generator: chi-square p={ps}, obs_freq={obs}, "
                             f"expected_freq={exp}\nbuckets={buckets}, probs={probs}")
    return ps
