"""MXNet 1.x ``sym.contrib`` names (the operators of ``nd.contrib``, on Symbols)."""
from .compose import namespace as _namespace

globals().update(_namespace("contrib"))


def SparseEmbedding(data=None, weight=None, input_dim=None, output_dim=None,  # noqa: N802
                    dtype="float32", deterministic=False, name=None, **kwargs):
    """MXNet's ``sym.contrib.SparseEmbedding``: ``Embedding`` with a row_sparse weight
    gradient (``sparse_grad=True``); in a graph the values are dense, so it is an
    ``Embedding`` node (``deterministic`` is accepted: the result is deterministic).

    Example:
        >>> from core import sym
        >>> e = sym.contrib.SparseEmbedding(sym.var("d"), sym.var("w", stype="row_sparse"),
        ...                                 input_dim=10, output_dim=4, name="embed")
        >>> e.infer_shape(d=(2, 3))[1]
        [(2, 3, 4)]
    """
    from . import operator_functions

    del deterministic
    inputs = {k: v for k, v in (("data", data), ("weight", weight)) if v is not None}
    return operator_functions()["Embedding"](input_dim=input_dim, output_dim=output_dim,
                                             dtype=dtype, sparse_grad=True, name=name,
                                             **inputs, **kwargs)
