"""MXNet 1.9's ``mx.contrib.onnx``: ONNX files to Symbols and Gluon blocks, and back.

Through the ``mxnet`` alias this is ``mxnet.contrib.onnx`` (``from mxnet.contrib import
onnx as onnx_mxnet``). The engine is :mod:`core.onnx`; this module adds the Gluon form
of the import, :func:`import_to_gluon`, which core cannot build (core does not import
gluon), and MXNet 1.9's deprecated ``export_model`` spelling (``mx.onnx.export_model``
is the current one).
"""
from __future__ import annotations

import warnings

from core.onnx import get_model_metadata, import_model

__all__ = ["export_model", "get_model_metadata", "import_model", "import_to_gluon"]


def export_model(*args, **kwargs):
    """MXNet 1.9's ``mx.contrib.onnx.export_model``: :func:`core.onnx.export_model`.

    Warns (``DeprecationWarning``) as MXNet 1.9 did: the function moved to ``mx.onnx``.
    The arguments and result are ``core.onnx.export_model``'s.
    """
    from core.onnx import export_model as _export

    warnings.warn("mx.contrib.onnx.export_model is deprecated; use mx.onnx.export_model",
                  DeprecationWarning, stacklevel=2)
    return _export(*args, **kwargs)


def import_to_gluon(model_file, ctx=None):
    """Load an ONNX file as a Gluon :class:`~gluon.symbol_block.SymbolBlock`.

    The block runs imperatively or hybridized; the imported weights are its parameters
    (gradients reach them, so it can be fine-tuned with a ``Trainer``); BatchNorm's running
    statistics are its auxiliary states (``grad_req='null'``).

    Args:
        model_file: the ``.onnx`` file (or an ``onnx.ModelProto``).
        ctx: the context or list of contexts to put the parameters on (default the
            current context).

    Returns:
        A SymbolBlock called with the model's graph inputs (those without an initializer)
        in the file's order.

    Example:
        >>> from mxnet.contrib import onnx as onnx_mxnet  # doctest: +SKIP
        >>> net = onnx_mxnet.import_to_gluon("model.onnx", ctx=mx.cpu())  # doctest: +SKIP
        >>> out = net(mx.nd.ones((1, 3, 224, 224)))  # doctest: +SKIP
    """
    from core import sym
    from core.onnx.importer import _load

    from ..symbol_block import SymbolBlock

    model = _load(model_file)
    graph_sym, arg_params, aux_params = import_model(model)
    meta = get_model_metadata(model)
    names = [entry[0] for entry in meta["input_tensor_data"]]
    block = SymbolBlock(graph_sym, [sym.var(n) for n in names])
    params = block.collect_params()
    for name, value in {**arg_params, **aux_params}.items():
        if name in params:
            p = params[name]
            p.shape = value.shape
            p._load_init(value, ctx)
    return block
