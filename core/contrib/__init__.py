"""MXNet 1.x's ``mx.contrib``: experimental APIs kept for old code.

Submodules: :mod:`~core.contrib.autograd` (the pre-1.0 autograd API:
``train_section``, ``mark_variables``, ``grad_and_loss``, ...),
:mod:`~core.contrib.ndarray` and :mod:`~core.contrib.symbol` (``nd.contrib`` and
``sym.contrib`` under MXNet's other names, also ``nd``/``sym``),
:mod:`~core.contrib.io` (``DataLoaderIter``), :mod:`~core.contrib.text`
(vocabularies, token embeddings) and :mod:`~core.contrib.tensorboard`
(``LogMetricsCallback``) and :mod:`~core.contrib.amp` (AMP, the same as
:mod:`core.amp`). ``mx.contrib.quantization`` has no counterpart here; using it raises
``ModuleNotFoundError``. ``mx.contrib.onnx`` (import to Symbols and Gluon blocks) is
:mod:`gluon.compat.onnx` through the ``mxnet`` alias; its engine is :mod:`core.onnx`.

Example:
    >>> from core import contrib, nd
    >>> contrib.nd.isnan(nd.array([1.0, float("nan")])).asnumpy().tolist()
    [0.0, 1.0]
"""
from __future__ import annotations

from . import amp, autograd, io, ndarray, symbol, tensorboard, text
from . import ndarray as nd
from . import symbol as sym

__all__ = ["amp", "autograd", "io", "nd", "ndarray", "sym", "symbol", "tensorboard", "text"]

# MXNet 1.9.1 modules that kbackend leaves to other work (ONNX, INT8 quantization)
_MISSING = {
    "quantization": "INT8 quantization",
    "quant": "INT8 quantization",
}


def __getattr__(name: str):
    if name == "onnx":
        # an AttributeError, so ``from mxnet.contrib import onnx`` goes on to import the
        # submodule, which the mxnet alias resolves to gluon.compat.onnx
        raise AttributeError(
            "core.contrib has no onnx: MXNet's mx.contrib.onnx is gluon.compat.onnx "
            "(through the mxnet alias, `from mxnet.contrib import onnx`); the exporter "
            "and importer are core.onnx")
    if name in _MISSING:
        raise ModuleNotFoundError(
            f"mx.contrib.{name} ({_MISSING[name]}) has no counterpart in kbackend's "
            "core.contrib", name=f"core.contrib.{name}")
    raise AttributeError(f"module 'core.contrib' has no attribute {name!r}")
