"""Cross-device synchronized batch normalization (MXNet's ``contrib.nn.SyncBatchNorm``).

Each replica of the layer (one per context) normalizes its slice of the batch with the
mean and variance of the *whole* batch: in the forward pass every replica contributes
its per-channel sums ``(sum x, sum x^2, count)``, and in the backward pass its
``(sum dy, sum dy * x_hat)``; the contributions of the ``num_devices`` replicas are
added (a rendezvous per layer) and every replica continues with the totals, so outputs,
input gradients and running statistics are those of one BatchNorm over the whole
batch. The gamma/beta gradients stay per replica (their sum, made by the Trainer's
all-reduce, is the whole batch's).

As in MXNet, the replicas' forward (and backward) passes must run concurrently, which
MXNet's asynchronous engine does for a plain loop over devices. Here they do when run
by :func:`core.parallel.forward_backward` (what ``gluon.Trainer``-based data
parallelism uses) or from one thread per device; a replica that waits longer than
:data:`TIMEOUT_S` for the others raises an error that says so. With one device the
layer is ``nn.BatchNorm`` (axis 1); in inference it normalizes with the running
statistics like BatchNorm.
"""
from __future__ import annotations

import threading
import weakref

import numpy

from core import autograd, nd
from core.ndarray import NDArray, Placeholder

from ...nn import SyncBatchNorm as _NNSyncBatchNorm

__all__ = ["TIMEOUT_S", "SyncBatchNorm"]

#: seconds a replica waits for the other replicas' statistics before raising
TIMEOUT_S = 60.0

# each layer's rendezvous, outside the block (so blocks still copy and pickle)
_SYNC: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()
_SYNC_LOCK = threading.Lock()


class _Rendezvous:
    """Sums one array per context, over ``n`` contexts, once per round (thread-safe)."""

    def __init__(self, n: int, what: str):
        self.n = n
        self.what = what
        self.cond = threading.Condition()
        self.round = 0
        self.parts: dict = {}
        self.results: dict = {}

    def allreduce(self, ctx, value: numpy.ndarray) -> numpy.ndarray:
        with self.cond:
            if ctx in self.parts:
                raise RuntimeError(
                    f"{self.what}: context {ctx} contributed twice to one synchronization "
                    f"({len(self.parts)} of {self.n} replicas so far); each of the "
                    f"num_devices={self.n} replicas must run once per step, on its own "
                    "context")
            mine = self.round
            self.parts[ctx] = value
            if len(self.parts) == self.n:
                self.results[mine] = [sum(self.parts.values()), self.n]
                self.parts = {}
                self.round += 1
                self.cond.notify_all()
            elif not self.cond.wait_for(lambda: self.round > mine, timeout=TIMEOUT_S):
                got = sorted(str(c) for c in self.parts)
                self.parts.pop(ctx, None)
                raise RuntimeError(
                    f"{self.what}: waited {TIMEOUT_S:g} s for the other replicas; only "
                    f"{got} of num_devices={self.n} arrived. The replicas on the "
                    f"{self.n} contexts must run concurrently (core.parallel."
                    "forward_backward, or one thread per context), not one after another "
                    "in one thread; with one context use num_devices=1")
            entry = self.results[mine]
            entry[1] -= 1
            if entry[1] == 0:
                del self.results[mine]
            return entry[0]


def _reduce_axes(x) -> tuple:
    return (0,) + tuple(range(2, x.ndim))


def _per_channel(v, x):
    return v.reshape((1, -1) + (1,) * (x.ndim - 2))


class _SyncBN(autograd.Function):
    """One replica's synchronized BatchNorm over the channel axis 1."""

    def __init__(self, fwd: _Rendezvous, bwd: _Rendezvous, eps, momentum, fix_gamma,
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


class SyncBatchNorm(_NNSyncBatchNorm):
    """Batch normalization with the statistics of the whole batch over all the devices.

    Args:
        in_channels: the number of channels; 0 infers it from the first input.
        num_devices: how many replicas (contexts) share a batch (default: the number of
            GPUs, at least 1, with a warning as in MXNet).
        momentum: the running statistics' decay.
        epsilon: added to the variance.
        center: add ``beta``.
        scale: multiply by ``gamma`` (False: gamma is fixed to 1).
        use_global_stats: normalize with the running statistics in training too.
        beta_initializer, gamma_initializer, running_mean_initializer,
        running_variance_initializer: the parameters' initializers.
        **kwargs: ``prefix``, ``params`` (see :class:`gluon.Block`).

    Example:
        >>> from core import nd, cpu, parallel
        >>> from gluon.contrib.nn import SyncBatchNorm
        >>> bn = SyncBatchNorm(in_channels=1, num_devices=2)
        >>> bn.initialize(ctx=[cpu(0), cpu(1)])
        >>> xs = [nd.array([[1.0], [2.0]], ctx=cpu(0)), nd.array([[3.0], [6.0]], ctx=cpu(1))]
        >>> outs = [None, None]
        >>> def replica(x):
        ...     outs[x.context.device_id] = bn(x)
        ...     return outs[x.context.device_id].sum()
        >>> _ = parallel.forward_backward(replica, [(x,) for x in xs], [])
        >>> [o.asnumpy().round(3).ravel().tolist() for o in outs]   # mean 3, std 1.871
        [[-1.069, -0.535], [0.0, 1.604]]
    """

    def _rendezvous(self) -> tuple:
        with _SYNC_LOCK:
            sync = _SYNC.get(self)
            if sync is None or sync[0].n != self._kwargs["ndev"]:
                n = self._kwargs["ndev"]
                what = f"SyncBatchNorm '{self.name}'"
                sync = (_Rendezvous(n, what + " forward"), _Rendezvous(n, what + " backward"))
                _SYNC[self] = sync
            return sync

    def hybrid_forward(self, F, x, gamma, beta, running_mean, running_var):
        k = self._kwargs
        synced = (k["ndev"] > 1 and autograd.is_training() and not k["use_global_stats"]
                  and isinstance(x, NDArray))
        if not synced:
            return F.BatchNorm(x, gamma, beta, running_mean, running_var,
                               **self._batch_norm_kwargs())
        if x.ndim < 2:
            raise ValueError(f"SyncBatchNorm '{self.name}': the input needs a channel axis 1, "
                             f"got shape {tuple(x.shape)}")
        fwd, bwd = self._rendezvous()
        fn = _SyncBN(fwd, bwd, k["eps"], k["momentum"], k["fix_gamma"], running_mean,
                     running_var)
        return fn(x, gamma, beta)
