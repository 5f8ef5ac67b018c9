"""The cross-replica synchronization behind ``SyncBatchNorm``: each layer's rendezvous
(:class:`core.parallel.rendezvous.Rendezvous`) that sums the replicas' per-channel
statistics, and the synchronized BatchNorm function (forward and backward).

In the forward pass every replica contributes ``(sum x, sum x^2, count)`` over its
shard, in the backward pass ``(sum dy, sum dy * x_hat)``; the contributions of the
``n`` replicas are added and every replica continues with the totals, so outputs, input
gradients and running statistics are those of one BatchNorm over the whole batch.

The replicas must run at the same time: on the engine workers of
:func:`core.parallel.forward_backward` (``gluon.Trainer.forward_backward``), or one
thread per context. A replica that cannot be joined by the others (a sequential
replica run, or the ``for x in xs: net(x)`` loop in the main thread) raises at once;
another thread waits ``core.parallel.rendezvous.TIMEOUT_S`` seconds.

Example:
    >>> class Layer:
    ...     name = "bn"
    >>> fwd, bwd = rendezvous_of(Layer(), 2)
    >>> fwd.n, fwd.what
    (2, "SyncBatchNorm 'bn' forward")
"""
from __future__ import annotations

import threading
import weakref

import numpy

from core import autograd, nd
from core.ndarray import Placeholder
from core.parallel.rendezvous import Rendezvous

__all__ = ["SyncBN", "rendezvous_of"]

# each layer's rendezvous, outside the block (so blocks still copy and pickle)
_SYNC: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()
_SYNC_LOCK = threading.Lock()


def rendezvous_of(layer, n: int) -> tuple:
    """The ``(forward, backward)`` rendezvous of ``layer`` for ``n`` replicas (made once
    per layer and ``n``; kept outside the layer, which stays copyable).

    Example:
        >>> class Layer:
        ...     name = "bn"
        >>> layer = Layer()
        >>> rendezvous_of(layer, 2) is rendezvous_of(layer, 2)
        True
    """
    with _SYNC_LOCK:
        sync = _SYNC.get(layer)
        if sync is None or sync[0].n != n:
            what = f"SyncBatchNorm '{layer.name}'"
            sync = (Rendezvous(n, what + " forward"), Rendezvous(n, what + " backward"))
            _SYNC[layer] = sync
        return sync


def _reduce_axes(x) -> tuple:
    return (0,) + tuple(range(2, x.ndim))


def _per_channel(v, x):
    return v.reshape((1, -1) + (1,) * (x.ndim - 2))


class SyncBN(autograd.Function):
    """One replica's synchronized BatchNorm over the channel axis 1.

    Args:
        fwd, bwd: the layer's forward and backward :class:`Rendezvous`.
        eps, momentum, fix_gamma: as ``BatchNorm``.
        running_mean, running_var: the replica's running statistics (updated in place
            with the whole batch's).
    """

    def __init__(self, fwd: Rendezvous, bwd: Rendezvous, eps, momentum, fix_gamma,
                 running_mean, running_var):
        super().__init__()
        self.fwd, self.bwd = fwd, bwd
        self.eps, self.momentum, self.fix_gamma = eps, momentum, fix_gamma
        self.running = (running_mean, running_var)

    def forward(self, x, gamma, beta):
        if type(x._data) is Placeholder:  # traced for the output's shape and dtype only
            return x * _per_channel(gamma, x) + _per_channel(beta, x)
        axes = _reduce_axes(x)
        count = x.size // x.shape[1]
        local = numpy.concatenate([x.astype("float64").sum(axis=axes).asnumpy(),
                                   (x.astype("float64") ** 2).sum(axis=axes).asnumpy(),
                                   [count]])
        total = self.fwd.allreduce(x.context, local)
        c = x.shape[1]
        n = total[-1]
        mean = total[:c] / n
        var = numpy.maximum(total[c:2 * c] / n - mean * mean, 0.0)
        invstd = 1.0 / numpy.sqrt(var + self.eps)
        ctx, dt = x.context, x.dtype
        mean_nd, invstd_nd = nd.array(mean, ctx=ctx, dtype=dt), nd.array(invstd, ctx=ctx,
                                                                           dtype=dt)
        xhat = (x - _per_channel(mean_nd, x)) * _per_channel(invstd_nd, x)
        g = nd.ones_like(gamma) if self.fix_gamma else gamma
        y = xhat * _per_channel(g, x) + _per_channel(beta, x)
        m = self.momentum
        rm, rv = self.running
        rm[:] = rm * m + nd.array(mean, ctx=ctx, dtype=rm.dtype) * (1 - m)
        rv[:] = rv * m + nd.array(var, ctx=ctx, dtype=rv.dtype) * (1 - m)
        self.save_for_backward(xhat, invstd_nd, g, n)
        return y

    def backward(self, dy):
        xhat, invstd, g, n = self.saved_tensors
        axes = _reduce_axes(dy)
        sg = dy.sum(axis=axes)
        sgx = (dy * xhat).sum(axis=axes)
        local = numpy.concatenate([sg.astype("float64").asnumpy(),
                                   sgx.astype("float64").asnumpy()])
        total = self.bwd.allreduce(dy.context, local)
        c = dy.shape[1]
        ctx, dt = dy.context, dy.dtype
        mean_g = _per_channel(nd.array(total[:c] / n, ctx=ctx, dtype=dt), dy)
        mean_gx = _per_channel(nd.array(total[c:] / n, ctx=ctx, dtype=dt), dy)
        dx = _per_channel(g * invstd, dy) * (dy - mean_g - xhat * mean_gx)
        dgamma = nd.zeros_like(sgx) if self.fix_gamma else sgx
        return dx, dgamma, sg
