"""The methods MXNet 2.0's ``np.ndarray`` has on top of the NDArray basics.

MXNet kept two array types (``nd.NDArray`` and ``np.ndarray``) and converted between
them; here one type serves both namespaces, so the conversions return the array itself.
:class:`NumpyMethods` is a base class of :class:`core.ndarray.NDArray`.

Example:
    >>> from core import np
    >>> x = np.array([[1.0, -2.0], [0.0, 3.0]])
    >>> x.clip(min=0).asnumpy().tolist()
    [[1.0, 0.0], [0.0, 3.0]]
    >>> [i.asnumpy().tolist() for i in x.nonzero()]
    [[0, 0, 1], [0, 1, 1]]
"""
from __future__ import annotations


class NumpyMethods:
    """``np.ndarray`` methods of MXNet 2.0 (a mixin of NDArray; no state of its own)."""

    __slots__ = ()

    def as_np_ndarray(self):
        """MXNet's conversion to ``np.ndarray``: one array type here, so the array itself."""
        return self

    def as_nd_ndarray(self):
        """MXNet's conversion to ``nd.NDArray``: one array type here, so the array itself."""
        return self

    def clip(self, min=None, max=None, out=None, *, a_min=None, a_max=None):  # noqa: A002
        """Values limited to ``[min, max]`` (``np.ndarray.clip``; ``a_min``/``a_max`` as
        ``nd.clip`` names them). ``out``, when given, receives the result."""
        from .np import clip

        res = clip(self, a_min if min is None else min, a_max if max is None else max)
        if out is not None:
            out[...] = res
            return out
        return res

    def nonzero(self) -> tuple:
        """The indices of the non-zero entries, one int64 array per axis (``np.nonzero``)."""
        from .np import nonzero

        return nonzero(self)

    def diagonal(self, offset: int = 0, axis1: int = 0, axis2: int = 1):
        """The ``offset`` diagonal in the plane of ``axis1`` and ``axis2`` (``np.diagonal``)."""
        from .np import diagonal

        return diagonal(self, offset, axis1, axis2)

    @property
    def itemsize(self) -> int:
        """Bytes per element."""
        return self.dtype.itemsize

    @property
    def nbytes(self) -> int:
        """Bytes of the whole array's data."""
        return self.size * self.dtype.itemsize
