"""MXNet 1.x ``nd.contrib`` names."""
from .. import ops as _ops  # noqa: F401
from ..ops.namespace import namespace as _namespace

globals().update(_namespace("nd", "contrib"))
from ..sparse.ops import getnnz  # noqa: E402, F401 - MXNet's contrib.getnnz (csr arrays)


def _float_test(name):
    def f(data, out=None):
        from ..ops import F

        res = F.cast(getattr(F, name)(data), dtype="float32")
        if out is not None:
            from ..ops.namespace import write_out

            return write_out(f"contrib.{name}", out, res)
        return res

    f.__name__ = f.__qualname__ = name
    f.__doc__ = (f"MXNet's ``nd.contrib.{name}``: ``{name}`` elementwise, as float32 "
                 "0/1 (MXNet's type).")
    return f


isinf = _float_test("isinf")
isfinite = _float_test("isfinite")
isnan = _float_test("isnan")


def SparseEmbedding(data=None, weight=None, input_dim=None, output_dim=None,  # noqa: N802
                    dtype="float32", deterministic=False, out=None, **kwargs):
    """MXNet's ``nd.contrib.SparseEmbedding``: ``Embedding`` whose weight gradient is
    row_sparse (``sparse_grad=True``; a weight that called ``attach_grad()`` as
    row_sparse receives it so); a row_sparse ``weight`` is read densely."""
    from . import Embedding

    del deterministic
    return Embedding(data, weight, input_dim=input_dim, output_dim=output_dim, dtype=dtype,
                     sparse_grad=True, out=out, **kwargs)
