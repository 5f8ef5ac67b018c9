"""Dynamic batching: requests for one model queue, run together, and split back.

A :class:`Batcher` (one per model, on the server's event loop) takes the first waiting
request, then keeps collecting requests whose inputs have the same per-sample shapes
and dtypes until ``max_batch_size`` samples are gathered or ``max_latency_ms`` has
passed since the first one, concatenates them along the batch dimension, runs the
model once on a thread pool (off the event loop; up to ``workers`` batches at a time)
and hands each request its rows of the outputs. A request bigger than
``max_batch_size`` runs as a batch of its own. If a batched run's outputs do not have
the batch as their first dimension, the model is marked unbatchable and each request
runs alone from then on.

Example:
    >>> import asyncio, numpy
    >>> from concurrent.futures import ThreadPoolExecutor
    >>> class Double:
    ...     name, batchable = "double", True
    ...     def run(self, arrays):
    ...         return {"y": arrays["x"] * 2}
    >>> async def main():
    ...     with ThreadPoolExecutor(1) as pool:
    ...         b = Batcher(Double(), pool, max_batch_size=8, max_latency_ms=20)
    ...         b.start()
    ...         outs = await asyncio.gather(*[b.submit({"x": numpy.full((1, 2), i)})
    ...                                       for i in range(3)])
    ...         await b.stop()
    ...     return [o["y"].tolist() for o in outs], b.batches_run
    >>> asyncio.run(main())
    ([[[0, 0]], [[2, 2]], [[4, 4]]], 1)
"""
from __future__ import annotations

import asyncio
import collections
import logging
import time

import numpy

__all__ = ["Batcher"]

_LOG = logging.getLogger(__name__)


class _Pending:
    __slots__ = ("arrays", "future", "key", "n")

    def __init__(self, arrays: dict, future):
        self.arrays = arrays
        self.n = int(next(iter(arrays.values())).shape[0])
        self.key = tuple((k, a.shape[1:], a.dtype.str) for k, a in sorted(arrays.items()))
        self.future = future


class Batcher:
    """The request queue of one model.

    Args:
        model: has ``name``, ``batchable`` and ``run({input: array}) -> {output: array}``.
        pool: the ``concurrent.futures`` executor the model runs on.
        max_batch_size: most samples in one run (1 disables batching).
        max_latency_ms: longest wait for more requests after the first of a batch.
        workers: batches of this model running at once.
        on_batch: ``on_batch(model_name, samples, seconds, ok)`` after every run.
    """

    def __init__(self, model, pool, max_batch_size: int = 32, max_latency_ms: float = 5.0,
                 workers: int = 1, on_batch=None):
        if max_batch_size < 1:
            raise ValueError(f"Batcher: max_batch_size must be >= 1, got {max_batch_size}")
        if max_latency_ms < 0:
            raise ValueError(f"Batcher: max_latency_ms must be >= 0, got {max_latency_ms}")
        self.model, self.pool = model, pool
        self.max_batch_size = int(max_batch_size)
        self.max_latency = float(max_latency_ms) / 1000.0
        self.on_batch = on_batch
        self.batches_run = 0
        self._queue: collections.deque = collections.deque()
        self._wake = asyncio.Event()
        self._slots = asyncio.Semaphore(max(1, int(workers)))
        self._task = None
        self._running: set = set()

    def start(self) -> None:
        """Start collecting (call on the event loop that will submit)."""
        if self._task is None:
            self._task = asyncio.get_running_loop().create_task(self._loop())

    async def stop(self) -> None:
        """Stop collecting, fail what still waits, and wait for running batches."""
        if self._task is not None:
            self._task.cancel()
            try:
                await self._task
            except asyncio.CancelledError:
                pass
            self._task = None
        while self._queue:
            p = self._queue.popleft()
            if not p.future.done():
                p.future.set_exception(RuntimeError("the server is shutting down"))
        if self._running:
            await asyncio.gather(*self._running, return_exceptions=True)

    async def submit(self, arrays: dict) -> dict:
        """Queue one request's inputs (batch first); returns its outputs."""
        fut = asyncio.get_running_loop().create_future()
        self._queue.append(_Pending(arrays, fut))
        self._wake.set()
        return await fut

    async def _next(self, deadline: float | None):
        """The next waiting request, or None once ``deadline`` (loop time) passes."""
        loop = asyncio.get_running_loop()
        while not self._queue:
            self._wake.clear()
            if deadline is None:
                await self._wake.wait()
                continue
            remaining = deadline - loop.time()
            if remaining <= 0:
                return None
            try:
                await asyncio.wait_for(self._wake.wait(), remaining)
            except asyncio.TimeoutError:
                return None
        return self._queue[0]

    async def _loop(self) -> None:
        loop = asyncio.get_running_loop()
        while True:
            await self._next(None)
            await self._slots.acquire()  # collect while earlier batches run
            first = self._queue.popleft()
            batch, n = [first], first.n
            if self.model.batchable:
                deadline = loop.time() + self.max_latency
                while n < self.max_batch_size:
                    nxt = await self._next(deadline)
                    if nxt is None or nxt.key != first.key or n + nxt.n > self.max_batch_size:
                        break
                    batch.append(self._queue.popleft())
                    n += nxt.n
            task = loop.create_task(self._run(batch, n))
            self._running.add(task)
            task.add_done_callback(self._running.discard)

    async def _run(self, batch: list, n: int) -> None:
        loop = asyncio.get_running_loop()
        try:
            batch = [p for p in batch if not p.future.done()]  # cancelled while waiting
            if not batch:
                return
            if len(batch) == 1:
                arrays = batch[0].arrays
            else:
                arrays = {k: numpy.concatenate([p.arrays[k] for p in batch], axis=0)
                          for k in batch[0].arrays}
            n = sum(p.n for p in batch)
            t0 = time.perf_counter()
            try:
                outs = await loop.run_in_executor(self.pool, self.model.run, arrays)
            except Exception as e:  # noqa: BLE001 - every request of the batch gets it
                self._report(n, time.perf_counter() - t0, False)
                _LOG.exception("model %r failed on a batch of %d", self.model.name, n)
                for p in batch:
                    if not p.future.done():
                        p.future.set_exception(e)
                return
            self._report(n, time.perf_counter() - t0, True)
            if len(batch) == 1:
                if not batch[0].future.done():
                    batch[0].future.set_result(outs)
                return
            if any(getattr(o, "ndim", 0) == 0 or o.shape[0] != n for o in outs.values()):
                _LOG.warning("model %r: outputs %s do not split by sample; running requests "
                             "one at a time from now on", self.model.name,
                             {k: list(o.shape) for k, o in outs.items()})
                self.model.batchable = False
                self._queue.extendleft(reversed(batch))  # run them again, alone
                self._wake.set()
                return
            start = 0
            for p in batch:
                if not p.future.done():
                    p.future.set_result({k: o[start:start + p.n] for k, o in outs.items()})
                start += p.n
        finally:
            self._slots.release()

    def _report(self, n: int, seconds: float, ok: bool) -> None:
        self.batches_run += 1
        if self.on_batch is not None:
            self.on_batch(self.model.name, n, seconds, ok)
