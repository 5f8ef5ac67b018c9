"""``moments(synchronized=True)`` for Keras' ``BatchNormalization(synchronized=True)``
under ``keras.distribution.DataParallel``: the mean and variance of the *global* batch.

During a training step whose replicas run concurrently on the engine's device workers
(:class:`kbackend.data_parallel.ReplicatedSteps`, inside :func:`step_scope`), the k-th
synchronized ``moments`` call of every replica meets the others' k-th call in a
rendezvous (:class:`core.parallel.rendezvous.Rendezvous`): each contributes its
per-channel ``(sum x, sum x^2, count)``, and all continue with the totals. Backward
sums the replicas' gradients with respect to the mean and variance the same way, so
the input gradients are those of one BatchNormalization over the whole batch.
Outside such a step (one device, or ReplicatedSteps running the step on one device
with the whole batch) the batch a call sees is already the global one, and
:func:`kbackend.nn.moments` computes it plainly.

Example:
    >>> current() is None       # outside a data-parallel training step
    True
"""
from __future__ import annotations

import threading
from contextlib import contextmanager

import numpy

from core import autograd, nd
from core import parallel as _parallel
from core.parallel.rendezvous import Rendezvous

__all__ = ["SyncStep", "current", "moments", "step_scope"]

_STEP = None  # the SyncStep of the training step now running, if any


class SyncStep:
    """One training step's rendezvous points, the k-th for every replica's k-th
    synchronized ``moments`` call (a forward and a backward rendezvous each).

    Args:
        n: the number of replicas taking part.
    """

    def __init__(self, n: int):
        self.n = n
        self.lock = threading.Lock()
        self.points: dict = {}
        self.calls: dict = {}

    def next_point(self, ctx) -> tuple:
        """The ``(forward, backward)`` rendezvous of ``ctx``'s next call."""
        with self.lock:
            k = self.calls.get(ctx, 0)
            self.calls[ctx] = k + 1
            pt = self.points.get(k)
            if pt is None:
                what = f"BatchNormalization(synchronized=True) moments call {k}"
                pt = self.points[k] = (Rendezvous(self.n, what + " forward"),
                                       Rendezvous(self.n, what + " backward"))
            return pt


def current() -> SyncStep | None:
    """The :class:`SyncStep` a synchronized ``moments`` on this thread joins, or None:
    not inside a concurrent replica of a data-parallel training step."""
    if _STEP is None or _parallel.replica_mode() != "concurrent":
        return None
    return _STEP


@contextmanager
def step_scope(n: int):
    """Make the concurrent replicas of the training step run inside it synchronize
    their ``moments(synchronized=True)`` over ``n`` replicas.

    Example:
        >>> with step_scope(2):
        ...     current() is None   # the calling thread is no replica
        True
    """
    global _STEP
    prev, _STEP = _STEP, SyncStep(n)
    try:
        yield _STEP
    finally:
        _STEP = prev


class _SyncMoments(autograd.Function):
    """The global batch's (mean, variance) over ``axes`` (biased), on one replica."""

    def __init__(self, point: tuple, axes: tuple, keepdims: bool):
        super().__init__()
        self.fwd, self.bwd = point
        self.axes, self.keepdims = axes, keepdims

    def forward(self, x):
        axes = self.axes
        x64 = x.asnumpy().astype("float64")
        s = x64.sum(axis=axes, keepdims=True)
        q = (x64 * x64).sum(axis=axes, keepdims=True)
        count = int(numpy.prod([x64.shape[a] for a in axes]))
        total = self.fwd.allreduce(x.context, numpy.concatenate([s.ravel(), q.ravel(),
                                                                 [count]]))
        c = s.size
        n = total[-1]
        mean = total[:c].reshape(s.shape) / n
        var = numpy.maximum(total[c:2 * c].reshape(s.shape) / n - mean * mean, 0.0)
        self.save_for_backward(x, mean, n)
        return self._out(mean, x), self._out(var, x)

    def _out(self, v, x):
        if not self.keepdims:
            v = v.reshape([d for i, d in enumerate(v.shape) if i not in self.axes])
        return nd.array(v, ctx=x.context, dtype=x.dtype)

    def backward(self, gmean, gvar):
        x, mean, n = self.saved_tensors
        shape = mean.shape
        gm = numpy.zeros(shape) if gmean is None else gmean.asnumpy().astype(
            "float64").reshape(shape)
        gv = numpy.zeros(shape) if gvar is None else gvar.asnumpy().astype(
            "float64").reshape(shape)
        total = self.bwd.allreduce(x.context, numpy.concatenate([gm.ravel(), gv.ravel()]))
        c = gm.size
        gm_t, gv_t = total[:c].reshape(shape), total[c:].reshape(shape)
        gx = gm_t / n + gv_t * 2.0 * (x.asnumpy().astype("float64") - mean) / n
        return nd.array(gx, ctx=x.context, dtype=x.dtype)


def moments(x, axes: tuple, keepdims: bool, step: SyncStep):
    """``(mean, variance)`` of the global batch over ``axes``, for this replica's ``x``
    (an NDArray): joins ``step``'s next rendezvous (see the module doc)."""
    axes = tuple(a % x.ndim for a in axes)
    return _SyncMoments(step.next_point(x.context), axes, keepdims)(x)
