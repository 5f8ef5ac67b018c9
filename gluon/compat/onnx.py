"""MXNet 1.9's ``mx.contrib.onnx``: ONNX files to Symbols and Gluon blocks, and back.

Through the ``mxnet`` alias this is ``mxnet.contrib.onnx`` (``from mxnet.contrib import
onnx as onnx_mxnet``). The engine is :mod:`core.onnx`; this module adds the Gluon form
of the import, :func:`import_to_gluon`, which core cannot build (core does not import
gluon).
"""
from __future__ import annotations

from core.onnx import export_model, get_model_metadata, import_model

__all__ = ["export_model", "get_model_metadata", "import_model", "import_to_gluon"]


def import_to_gluon(model_file: str, ctx=None):
    """Load an ONNX file as a Gluon :class:`~gluon.symbol_block.SymbolBlock`.

    Args:
        model_file: the ``.onnx`` file.
        ctx: the context(s) to put the parameters on (default the current context).

    Returns:
        A SymbolBlock whose inputs are the model's graph inputs (those without an
        initializer), in the file's order, with the file's weights loaded.
    """
    from core import sym

    from ..symbol_block import SymbolBlock

    graph_sym, arg_params, aux_params = import_model(model_file)
    meta = get_model_metadata(model_file)
    names = [name for name, _shape in meta["input_tensor_data"]]
    block = SymbolBlock(graph_sym, [sym.var(n) for n in names])
    params = {**arg_params, **aux_params}
    block.collect_params().load_dict(params, ctx=ctx)
    return block
