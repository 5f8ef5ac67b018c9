"""ONNX export and import over the Symbol graph (MXNet 1.9's ``mx.onnx``).

- :func:`export_model` (:mod:`core.onnx.export`): a Symbol (or ``-symbol.json``) and
  its parameters (or a ``.params`` file) to an ONNX file, MXNet 1.9's signature.
- :func:`import_model`, :func:`get_model_metadata` (:mod:`core.onnx.importer`): an ONNX
  file to ``(sym, arg_params, aux_params)``, MXNet's ``mx.contrib.onnx``. The Gluon
  form, ``import_to_gluon``, is :mod:`gluon.compat.onnx` (core does not import gluon).

The ``onnx`` package (the ``[onnx]`` extra) is imported on first use.
"""
from __future__ import annotations

import importlib

# public name -> the submodule that defines it (imported on first use: onnx is an extra)
_LAZY = {
    "export_model": "export",
    "export_graph": "export",
    "get_operator_support": "export",
    "import_model": "importer",
    "get_model_metadata": "importer",
    "import_graph": "importer",
}

__all__ = ["export_graph", "export_model", "get_model_metadata", "get_operator_support",
           "import_graph", "import_model"]  # defined by _LAZY on first use


def __getattr__(name: str):
    if name in _LAZY:
        return getattr(importlib.import_module(f"{__name__}.{_LAZY[name]}"), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
