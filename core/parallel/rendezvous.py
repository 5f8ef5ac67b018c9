"""A rendezvous of data-parallel replicas: each contributes one array per round and
every one gets the sum (what cross-replica layers, ``SyncBatchNorm`` and Keras'
synchronized ``BatchNormalization``, exchange their statistics with).

The replicas must run at the same time: on the engine workers of
:func:`core.parallel.forward_backward`, or one thread per context. A replica that the
others cannot join, because it runs in a sequential replica run (``inline=True``, the
NaiveEngine) or in the main thread outside ``forward_backward`` (a ``for x in xs:
net(x)`` loop, where the first replica would wait forever), raises at once; another
thread waits :data:`TIMEOUT_S` seconds.

Example:
    >>> import numpy
    >>> from core.parallel.rendezvous import Rendezvous
    >>> Rendezvous(1, "demo").allreduce("ctx", numpy.array([1.0, 2.0])).tolist()
    [1.0, 2.0]
"""
from __future__ import annotations

import threading

import numpy

from .step import replica_mode

__all__ = ["TIMEOUT_S", "Rendezvous"]

#: seconds a replica on a thread of its own waits for the other replicas' statistics
TIMEOUT_S = 60.0


def _cannot_wait() -> str | None:
    """Why the calling thread cannot wait for other replicas (None: it can)."""
    mode = replica_mode()
    if mode == "sequential":
        return ("core.parallel.forward_backward runs the replicas one after another here "
                "(inline=True or the NaiveEngine)")
    if mode is None and threading.current_thread() is threading.main_thread():
        return ("it was called in the main thread outside core.parallel.forward_backward "
                "(a loop over the contexts' shards runs the replicas one after another)")
    return None


class Rendezvous:
    """Sums one array per context, over ``n`` contexts, once per round (thread-safe).

    Args:
        n: the number of replicas (contexts) that contribute each round.
        what: the name used in errors (the layer and the pass).
    """

    def __init__(self, n: int, what: str):
        self.n = n
        self.what = what
        self.cond = threading.Condition()
        self.round = 0
        self.parts: dict = {}
        self.results: dict = {}

    def allreduce(self, ctx, value: numpy.ndarray) -> numpy.ndarray:
        """Contribute ``value`` for ``ctx`` and return the sum over the ``n`` contexts.

        Raises:
            RuntimeError: ``ctx`` contributed twice in one round, the caller runs the
                replicas one after another (at once), or the others did not arrive
                within :data:`TIMEOUT_S` seconds.
        """
        with self.cond:
            if ctx in self.parts:
                raise RuntimeError(
                    f"{self.what}: context {ctx} contributed twice to one synchronization "
                    f"({len(self.parts)} of {self.n} replicas so far); each of the "
                    f"num_devices={self.n} replicas must run once per step, on its own "
                    "context")
            if len(self.parts) + 1 < self.n:
                why = _cannot_wait()
                if why is not None:
                    raise RuntimeError(
                        f"{self.what}: the replica on {ctx} would wait forever for the "
                        f"other {self.n - 1 - len(self.parts)} of num_devices={self.n}: "
                        f"{why}. Run the replicas concurrently with core.parallel."
                        "forward_backward (gluon.Trainer.forward_backward) or one thread "
                        "per context; with one context use num_devices=1")
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
