"""The data-parallel step: every replica's forward and backward on its context's engine
worker, and each parameter's all-reduce started as soon as its gradient is final.

:func:`forward_backward` pushes one piece of engine work per replica (forward under
``autograd.record``, then backward), each to the worker of the replica's context, so
the replicas run concurrently. During backward, ``autograd.on_grad_ready`` reports
each parameter replica whose gradient is final; when parameter ``i`` is final on every
replica, its all-reduce (the sum over the replicas, written into every replica's
gradient: :func:`~core.parallel.collective.allreduce_grads`) is pushed to the engine's
communication worker with priority ``-i`` and the gradients as its write variables.
So the last layers' gradients are summed while backward still runs through the first
layers, and when several all-reduces wait, the first layers' (needed first by the next
forward) go first. The arithmetic is the sequential path's: the same sums in the same
order, so results equal a plain ``backward`` per replica followed by
``allreduce_grads``, bitwise, under either engine.

Example:
    >>> from core import nd, cpu, parallel
    >>> ctxs = [cpu(0), cpu(1)]
    >>> w = [nd.array([1.0, 2.0], ctx=c) for c in ctxs]
    >>> for r in w:
    ...     r.attach_grad()
    >>> x = parallel.split_batch(nd.array([[1.0, 1.0], [2.0, 2.0]]), ctxs)
    >>> step = parallel.forward_backward(lambda xb: (xb * w[ctxs.index(xb.context)]).sum(),
    ...                                  [(xb,) for xb in x], [w])
    >>> step.wait(); w[1].grad.asnumpy().tolist()    # 1 + 2 on each replica
    [3.0, 3.0]
"""
from __future__ import annotations

import threading
from collections.abc import Callable, Sequence

from .. import autograd, nd
from ..ndarray import NDArray
from .collective import _keys, allreduce_grads

__all__ = ["Step", "forward_backward", "replica_mode"]

# how the calling thread runs a replica of forward_backward (None: it does not)
_REPLICA = threading.local()


def replica_mode() -> str | None:
    """How the calling thread runs a replica of :func:`forward_backward`, if it does.

    Layers that exchange data between replicas (``SyncBatchNorm``) wait for the other
    replicas only where they run at the same time.

    Returns:
        ``'concurrent'`` inside a replica run on its context's engine worker (the other
        replicas run at the same time), ``'sequential'`` inside one run one after
        another in one thread (``inline=True`` or the NaiveEngine), None outside
        :func:`forward_backward`.

    Example:
        >>> from core import parallel
        >>> parallel.replica_mode() is None
        True
    """
    return getattr(_REPLICA, "mode", None)


class Step:
    """What :func:`forward_backward` started.

    Attributes:
        losses: per replica, what its ``fn`` returned (the loss head or heads).
        fresh: ``fresh[i][r]``: backward wrote parameter ``i``'s gradient on replica ``r``.
        reduced: ``reduced[i]``: parameter ``i``'s gradients were all-reduced (summed
            over the fresh replicas, written into every replica), or are being: the
            engine finishes it; reading a gradient waits for it.
    """

    def __init__(self, losses: list, fresh: list, reduced: list, grads: list):
        self.losses = losses
        self.fresh = fresh
        self.reduced = reduced
        self._grads = grads

    def wait(self) -> None:
        """Wait until every all-reduce of this step has finished.

        Raises:
            core.engine.EngineError: an all-reduce failed (the message names it).
        """
        from .. import engine

        for i, done in enumerate(self.reduced):
            if done:
                for g in self._grads[i]:
                    engine.wait_to_read(g)


class _Reducer:
    """Counts, per parameter, the replicas whose gradient is final, and pushes the
    parameter's all-reduce when the last one reports (thread-safe: replicas report
    from their own workers)."""

    def __init__(self, params, kvstore, keys, n_rep: int, overlap: bool, reduce: bool,
                 release: bool = True):
        self.kvstore = kvstore
        self.keys = keys
        self.overlap = overlap
        self.release = release  # the replicas run as pushed work that holds the grads
        self.lock = threading.Lock()
        self.index: dict = {}
        self.grads: list = []
        self.left: list = []
        n = len(params)
        self.fresh = [[False] * n_rep for _ in range(n)]
        self.reported = [[False] * n_rep for _ in range(n)]
        self.reduced = [False] * n
        # a distributed store's collectives must be issued in the same order on every
        # worker: its all-reduces run in push order (the gradients' readiness order,
        # the same on every worker), not by priority
        self.chain = None
        if kvstore is not None and "dist" in str(getattr(kvstore, "type", "")):
            from .. import engine

            self.chain = engine.new_var("allreduce order")
        for i, reps in enumerate(params):
            grads = [w.grad for w in reps]
            self.grads.append(grads)
            # only 'write' gradients are summed here: an 'add' gradient accumulates over
            # several backward passes and is summed by the caller when it is complete
            ok = reduce and all(g is not None and w._node is not None
                                and getattr(w._node[0], "grad_req", None) == "write"
                                for w, g in zip(reps, grads))
            self.left.append(n_rep if ok else -1)
            for r, w in enumerate(reps):
                self.index[id(w)] = (i, r)

    def hook(self, replica: int) -> Callable:
        """The ``on_grad_ready`` callback of ``replica``: the replica's work ends its
        hold on the gradient (``engine.release``), so the all-reduce can start."""
        from .. import engine

        index, grads = self.index, self.grads

        def ready(leaf) -> None:
            where = index.get(id(leaf))
            if where is not None and where[1] == replica:
                if self.release:
                    engine.release(grads[where[0]][replica])
                self.report(where[0], replica, True)

        return ready

    def report(self, i: int, r: int, fresh: bool) -> None:
        with self.lock:
            if self.reported[i][r]:
                return
            self.reported[i][r] = True
            self.fresh[i][r] = fresh
            if self.left[i] < 0:
                return
            self.left[i] -= 1
            if self.left[i] == 0 and self.overlap:
                # pushed under the lock: the all-reduces are pushed in the order their
                # gradients became final (a distributed store needs the same order on
                # every worker; two replicas' threads must not swap two pushes)
                self.push(i)

    def finish(self, r: int) -> None:
        """Replica ``r``'s backward is over: a parameter it did not report got no
        gradient there (stale)."""
        from .. import engine

        for i, grads in enumerate(self.grads):
            if not self.reported[i][r]:
                if grads[r] is not None and self.release:
                    engine.release(grads[r])
                self.report(i, r, False)

    def push(self, i: int) -> None:
        """Push parameter ``i``'s all-reduce to the communication worker."""
        from .. import engine, profiler

        grads, fresh = self.grads[i], self.fresh[i]
        src = [g for g, f in zip(grads, fresh) if f]
        if (not src and self.chain is None) or (len(grads) == 1 and self.kvstore is None):
            return  # nothing to sum: no fresh replica, or one context and no store
        self.reduced[i] = True
        key, kv = self.keys[i], self.kvstore

        def run() -> None:
            # on a distributed store every worker takes part, with zeros if it has
            # no fresh gradient for this parameter
            srcs = src or [nd.zeros(grads[0].shape, ctx=grads[0].context,
                                    dtype=grads[0].dtype)]
            with profiler.scope(f"allreduce {key}", "communication"):
                allreduce_grads(kv, [srcs], out=[grads], keys=[key], priorities=[-i])

        writes = grads if self.chain is None else [*grads, self.chain]
        engine.push(run, read_vars=(), write_vars=writes, ctx=engine.COMM, priority=-i,
                    name=f"allreduce {key}")


def forward_backward(fn, batches: Sequence[Sequence[NDArray]],
                     params: Sequence[Sequence[NDArray]], *, kvstore=None, keys=None,
                     reduce: bool = True, overlap: bool = True,
                     train_mode: bool = True, inline: bool = False) -> Step:
    """One data-parallel forward and backward, with the gradients' all-reduce
    overlapping backward.

    Replica ``r`` runs ``fn(*batches[r])`` under ``autograd.record(train_mode)``, with
    its context as the current one (``with ctx:``), and backward from what it
    returns, as one piece of work on the engine worker of its context (the replicas
    run concurrently). Each parameter's gradients are summed
    over the replicas as soon as they are final on all of them (on the communication
    worker, priority ``-i``; through ``kvstore.pushpull`` when a store is given).
    Returns when every backward is done; the last all-reduces may still run: reading
    a gradient waits for its all-reduce (or call :meth:`Step.wait`).

    Only gradients with ``grad_req='write'`` on every replica are summed here
    (``'add'`` ones accumulate over calls: sum them with ``allreduce_grads`` when
    complete). A replica whose backward did not write a parameter's gradient (the
    parameter was not used) does not add to its sum but receives it; a loss that
    uses no parameter (not on a recorded graph) has no backward.

    Args:
        fn: ``fn(*batch) -> loss`` (an NDArray, or a list of NDArrays backward starts
            from together), run with the replica's slice of the batch; or a list of
            such callables, one per replica. It runs on a worker thread.
        batches: per replica, the tuple of its input arrays (on its context), e.g.
            from :func:`~core.parallel.collective.split_batch`.
        params: ``params[i][r]``: parameter ``i``'s replica on replica ``r``'s
            context, with a gradient attached (``attach_grad``/``mark_variables``).
        kvstore: the store that sums (``core.kvstore``), or None to sum directly.
        keys: the store keys of the parameters (default ``0, 1, ...``).
        reduce: False leaves the gradients unsummed (the caller sums them, e.g. with
            an update on the store).
        overlap: False starts the all-reduces only after every backward has finished
            (the same sums, for comparison).
        train_mode: the layers' mode during the forward pass.
        inline: run the replicas one after the other in the calling thread (for
            ``fn`` that must run there, e.g. one that swaps shared state per replica);
            the all-reduces still run on the communication worker, pushed in the same
            order as with concurrent replicas (during the last replica's backward),
            and an error in ``fn`` propagates as it is.

    Returns:
        A :class:`Step`: the losses per replica, which gradients were fresh and which
        are (being) reduced.

    Raises:
        ValueError: batches and parameters disagree on the number of replicas, or two
            replicas share a context.
        core.engine.EngineError: a replica's forward or backward raised (the message
            names the replica's context and the original error).

    Example:
        >>> from core import nd, cpu, parallel
        >>> w = [nd.array([2.0], ctx=c) for c in (cpu(0), cpu(1))]
        >>> for r in w:
        ...     r.attach_grad()
        >>> fns = [lambda x, r=r: (x * w[r]).sum() for r in (0, 1)]  # one per replica
        >>> batches = [(nd.array([1.0], ctx=cpu(0)),), (nd.array([3.0], ctx=cpu(1)),)]
        >>> step = parallel.forward_backward(fns, batches, [w])
        >>> [loss.item() for loss in step.losses], step.reduced, step.fresh
        ([2.0, 6.0], [True], [[True, True]])
        >>> w[0].grad.item()    # 1 + 3, summed over the replicas
        4.0
    """
    from .. import engine, profiler

    batches = [tuple(b) if isinstance(b, (list, tuple)) else (b,) for b in batches]
    n_rep = len(batches)
    if n_rep == 0:
        raise ValueError("forward_backward: no batches (give one tuple of arrays per "
                         "replica)")
    params = [list(p) for p in params]
    for i, reps in enumerate(params):
        if len(reps) != n_rep:
            raise ValueError(f"forward_backward: parameter {i} has {len(reps)} replicas "
                             f"for {n_rep} batches (one per context)")
    fns = list(fn) if isinstance(fn, (list, tuple)) else [fn] * n_rep
    if len(fns) != n_rep:
        raise ValueError(f"forward_backward: {len(fns)} functions for {n_rep} batches")
    ctxs = []
    for r, b in enumerate(batches):
        ctx = params[0][r].context if params else next(
            (a.context for a in b if isinstance(a, NDArray)), None)
        if ctx in ctxs:
            raise ValueError(f"forward_backward: replicas {ctxs.index(ctx)} and {r} are "
                             f"both on {ctx}; give each replica its own context")
        ctxs.append(ctx)
    keys = _keys(keys, len(params))
    reducer = _Reducer(params, kvstore, keys, n_rep, overlap, reduce, release=not inline)
    losses: list = [None] * n_rep
    mode = "sequential" if inline or engine.engine_type() == "NaiveEngine" else "concurrent"
    if inline:
        for r in range(n_rep):
            _replica_work(fns[r], batches[r], r, ctxs[r], reducer, losses, train_mode,
                          profiler, mode)()
    tokens = []
    for r in range(0 if inline else n_rep):
        # the replica's work writes its gradients and releases each one (engine.release)
        # as soon as it is final, so that parameter's all-reduce need not wait for the
        # rest of backward
        token = engine.new_var(f"forward_backward {ctxs[r]}")
        tokens.append(token)
        reads = [reps[r] for reps in params]
        reads += [a for a in batches[r] if isinstance(a, NDArray)]
        writes = [token] + [grads[r] for grads in reducer.grads if grads[r] is not None]
        engine.push(_replica_work(fns[r], batches[r], r, ctxs[r], reducer, losses,
                                  train_mode, profiler, mode),
                    read_vars=reads, write_vars=writes, ctx=ctxs[r],
                    name=f"forward_backward {ctxs[r]}")
    errors = []
    for token in tokens:  # every replica ends before this returns or raises
        try:
            engine.wait_for_var(token)
        except engine.EngineError as e:
            errors.append(e)
    if errors:
        raise errors[0]
    if not overlap:
        for i in range(len(params)):
            if reducer.left[i] == 0:
                reducer.push(i)
    return Step(losses, reducer.fresh, reducer.reduced, reducer.grads)


def _replica_work(fn, batch, r, ctx, reducer, losses, train_mode, profiler,
                  mode="concurrent"):
    """Replica ``r``'s forward and backward, as one piece of work for its worker; the
    thread running it is marked with ``mode`` (see :func:`replica_mode`)."""

    def run() -> None:
        prev = getattr(_REPLICA, "mode", None)
        _REPLICA.mode = mode
        try:
            _run()
        finally:
            _REPLICA.mode = prev

    def _run() -> None:
        # arrays fn creates without a context go to the replica's
        with ctx, profiler.scope("forward", "operator"), autograd.record(train_mode):
            out = fn(*batch)
        heads = list(out) if isinstance(out, (list, tuple)) else [out]
        for h in heads:
            if not isinstance(h, NDArray):
                raise TypeError(f"forward_backward: fn returned {type(h).__name__} on {ctx}; "
                                "it must return the loss as an NDArray (or a list of them)")
        heads = [h for h in heads if h._node is not None]  # others need no gradient
        if heads:
            with ctx, profiler.scope("backward", "operator"), \
                    autograd.on_grad_ready(reducer.hook(r)):
                autograd.backward(heads)
        reducer.finish(r)
        losses[r] = out

    return run
