"""MXNet's ``mxnet.runtime``: which features this build has (``Features``, ``feature_list``).

MXNet reports the compile-time features of its native library; here the same names
describe what kbackend can do in this process: ``CUDA``/``CUDNN``/``NCCL``/``CUDA_RTC``
follow CuPy and a visible GPU, ``OPENMP`` and ``SIGNAL_HANDLER`` are on (numba's threads,
Python's handlers), ``BLAS_OPEN`` follows NumPy's BLAS, ``LAPACK``, ``PROFILER``,
``DIST_KVSTORE`` (with mpi4py), ``INT64_TENSOR_SIZE`` (NumPy indexes with 64 bits) and
``CXX14`` are on; ``MKLDNN``, ``TENSORRT``, ``CAFFE``, ``TVM_OP``, ``JEMALLOC``, ``DEBUG``,
``OPENCV`` (images decode with Pillow) are off.

Example:
    >>> from gluon.compat import runtime
    >>> features = runtime.Features()
    >>> features.is_enabled("INT64_TENSOR_SIZE"), features.is_enabled("MKLDNN")
    (True, False)
"""
from __future__ import annotations

import collections
import importlib.util

import numpy

from core import context

__all__ = ["Feature", "Features", "feature_list"]

_NAMES = ("CUDA", "CUDNN", "NCCL", "CUDA_RTC", "TENSORRT", "CPU_SSE", "CPU_SSE2", "CPU_SSE3",
          "CPU_SSE4_1", "CPU_SSE4_2", "CPU_SSE4A", "CPU_AVX", "CPU_AVX2", "OPENMP", "SSE",
          "F16C", "JEMALLOC", "BLAS_OPEN", "BLAS_ATLAS", "BLAS_MKL", "BLAS_APPLE", "LAPACK",
          "MKLDNN", "OPENCV", "CAFFE", "PROFILER", "DIST_KVSTORE", "CXX14", "INT64_TENSOR_SIZE",
          "SIGNAL_HANDLER", "DEBUG", "TVM_OP")


class Feature(collections.namedtuple("Feature", ["name", "enabled"])):
    """One feature: its ``name`` and whether it is ``enabled``."""

    def __repr__(self) -> str:
        return ("✔ " if self.enabled else "✖ ") + self.name


def _blas() -> str:
    try:
        info = numpy.show_config(mode="dicts")["Build Dependencies"]["blas"]["name"]
    except Exception:  # noqa: BLE001 - an unknown NumPy build: report no BLAS flavour
        return ""
    return str(info).lower()


def _enabled() -> dict:
    gpu = context.num_gpus() > 0
    blas = _blas()
    cpu_flags = ("CPU_SSE", "CPU_SSE2", "CPU_SSE3", "CPU_SSE4_1", "CPU_SSE4_2", "CPU_AVX",
                 "CPU_AVX2", "SSE", "F16C")
    on = {"CUDA": gpu, "CUDNN": gpu, "NCCL": gpu, "CUDA_RTC": gpu, "OPENMP": True,
          "BLAS_OPEN": "openblas" in blas, "BLAS_MKL": "mkl" in blas,
          "BLAS_APPLE": "accelerate" in blas, "LAPACK": True, "PROFILER": True,
          "DIST_KVSTORE": importlib.util.find_spec("mpi4py") is not None, "CXX14": True,
          "INT64_TENSOR_SIZE": True, "SIGNAL_HANDLER": True}
    on.update({f: True for f in cpu_flags})  # NumPy's SIMD dispatch picks these at run time
    return {n: bool(on.get(n, False)) for n in _NAMES}


def feature_list() -> list[Feature]:
    """The features, in MXNet's order.

    Returns:
        A list of :class:`Feature`.
    """
    return [Feature(n, e) for n, e in _enabled().items()]


class Features(collections.OrderedDict):
    """The features by name (MXNet's ``mxnet.runtime.Features``)."""

    def __init__(self):
        super().__init__((f.name, f) for f in feature_list())

    def __repr__(self) -> str:
        return str(list(self.values()))

    def is_enabled(self, feature_name: str) -> bool:
        """Whether ``feature_name`` is on.

        Args:
            feature_name: a feature's name, case-insensitive (``"CUDA"``).

        Returns:
            True when it is on.

        Raises:
            RuntimeError: the name is not one of MXNet's features.
        """
        name = feature_name.upper()
        if name not in self:
            raise RuntimeError(f"Feature '{feature_name}' is unknown, known features are: "
                               f"{list(self.keys())}")
        return self[name].enabled
