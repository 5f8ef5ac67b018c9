"""Prometheus metrics of the server, written in Prometheus' text format (version 0.0.4).

Counters and histograms keyed by label values; :meth:`Metrics.render` is what
``GET /metrics`` answers. Thread-safe (one lock).

Example:
    >>> m = Metrics()
    >>> m.request("digits", "infer", 200)
    >>> m.batch("digits", 3, 0.002)
    >>> text = m.render()
    >>> 'kbackend_requests_total{model="digits",endpoint="infer",status="200"} 1' in text
    True
    >>> 'kbackend_batch_size_bucket{model="digits",le="4"} 1' in text
    True
"""
from __future__ import annotations

import bisect
import threading

__all__ = ["Metrics"]

_LATENCY_BUCKETS = (0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0,
                    10.0)


def _batch_buckets(max_batch: int) -> tuple:
    b, out = 1, []
    while b < max_batch:
        out.append(b)
        b *= 2
    out.append(max(max_batch, 1))
    return tuple(out)


def _escape(v: str) -> str:
    return str(v).replace("\\", "\\\\").replace("\n", "\\n").replace('"', '\\"')


def _labels(names, values, extra: str = "") -> str:
    parts = [f'{n}="{_escape(v)}"' for n, v in zip(names, values)]
    if extra:
        parts.append(extra)
    return "{" + ",".join(parts) + "}" if parts else ""


def _num(v) -> str:
    return str(int(v)) if float(v).is_integer() else repr(float(v))


class _Histogram:
    def __init__(self, buckets):
        self.buckets = tuple(buckets)
        self.counts = [0] * (len(self.buckets) + 1)
        self.sum = 0.0
        self.count = 0

    def observe(self, v: float) -> None:
        self.counts[bisect.bisect_left(self.buckets, v)] += 1
        self.sum += v
        self.count += 1


class Metrics:
    """The server's counters and histograms.

    Args:
        max_batch_size: the largest batch (sets the batch-size histogram's buckets).
    """

    def __init__(self, max_batch_size: int = 32):
        self._lock = threading.Lock()
        self._batch_buckets = _batch_buckets(max_batch_size)
        self.requests: dict[tuple, int] = {}
        self.inferences: dict[tuple, int] = {}
        self.executions: dict[tuple, int] = {}
        self.failures: dict[tuple, int] = {}
        self.batch_sizes: dict[tuple, _Histogram] = {}
        self.latency: dict[tuple, _Histogram] = {}
        self.compute: dict[tuple, _Histogram] = {}
        self.ready: dict[tuple, int] = {}

    def request(self, model: str, endpoint: str, status: int, seconds: float | None = None):
        """Count a finished request (and its latency, for inference requests)."""
        with self._lock:
            key = (model, endpoint, str(status))
            self.requests[key] = self.requests.get(key, 0) + 1
            if seconds is not None:
                self.latency.setdefault((model,), _Histogram(_LATENCY_BUCKETS)).observe(seconds)

    def batch(self, model: str, size: int, seconds: float, ok: bool = True) -> None:
        """Count one model execution of ``size`` samples taking ``seconds``."""
        with self._lock:
            key = (model,)
            self.executions[key] = self.executions.get(key, 0) + 1
            if ok:
                self.inferences[key] = self.inferences.get(key, 0) + size
            else:
                self.failures[key] = self.failures.get(key, 0) + 1
            self.batch_sizes.setdefault(key, _Histogram(self._batch_buckets)).observe(size)
            self.compute.setdefault(key, _Histogram(_LATENCY_BUCKETS)).observe(seconds)

    def set_ready(self, model: str, ready: bool) -> None:
        with self._lock:
            self.ready[(model,)] = int(bool(ready))

    def render(self) -> str:
        """All metrics in Prometheus' text exposition format."""
        out: list[str] = []
        with self._lock:
            self._counter(out, "kbackend_requests_total", "HTTP requests by model, endpoint "
                          "and status", ("model", "endpoint", "status"), self.requests)
            self._counter(out, "kbackend_inference_count_total", "samples inferred",
                          ("model",), self.inferences)
            self._counter(out, "kbackend_execution_count_total", "model executions "
                          "(batches run)", ("model",), self.executions)
            self._counter(out, "kbackend_execution_failures_total", "model executions that "
                          "raised", ("model",), self.failures)
            self._histogram(out, "kbackend_batch_size", "samples per model execution",
                            self.batch_sizes)
            self._histogram(out, "kbackend_request_duration_seconds", "inference request "
                            "latency, body read to response", self.latency)
            self._histogram(out, "kbackend_compute_duration_seconds", "model execution time",
                            self.compute)
            out.append("# HELP kbackend_model_ready 1 when the model is loaded and ready")
            out.append("# TYPE kbackend_model_ready gauge")
            out += [f"kbackend_model_ready{_labels(('model',), k)} {v}"
                    for k, v in sorted(self.ready.items())]
        return "\n".join(out) + "\n"

    @staticmethod
    def _counter(out, name, help_, label_names, values) -> None:
        out.append(f"# HELP {name} {help_}")
        out.append(f"# TYPE {name} counter")
        out += [f"{name}{_labels(label_names, k)} {v}" for k, v in sorted(values.items())]

    @staticmethod
    def _histogram(out, name, help_, values) -> None:
        out.append(f"# HELP {name} {help_}")
        out.append(f"# TYPE {name} histogram")
        for key, h in sorted(values.items()):
            total = 0
            for le, c in zip([*h.buckets, "+Inf"], h.counts):
                total += c
                le_text = le if le == "+Inf" else _num(le)
                labels = _labels(("model",), key, 'le="' + le_text + '"')
                out.append(f"{name}_bucket{labels} {total}")
            out.append(f"{name}_sum{_labels(('model',), key)} {h.sum!r}")
            out.append(f"{name}_count{_labels(('model',), key)} {h.count}")
