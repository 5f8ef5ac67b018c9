"""MXNet 1.x's sparse arrays: :class:`RowSparseNDArray` and :class:`CSRNDArray`.

A sparse array holds its layout's raw arrays (``core.sparse.storage``): the stored
values and the int64 index arrays. It is an :class:`~core.ndarray.NDArray`, so every
operator takes it: its ``_data`` (what the dispatcher reads) is the dense value, built
on first use and cached until the array is written (MXNet's *storage fallback*: an
operator without a sparse implementation computes densely and returns a dense array).
The operators MXNet computes sparsely (``core.sparse.ops``: ``dot``, ``elemwise_add``,
``retain``, ...) read the layout directly and return sparse arrays as MXNet does.

Writes go through the array's methods (``x[:] = v``, ``x += y``, ``copyto``, gradient
writes), which replace the layout and drop the cached dense value; code must never
write into ``x._data`` of a sparse array.

Example:
    >>> from core import nd
    >>> x = nd.array([[0, 0], [1, 2], [0, 0]]).tostype('row_sparse')
    >>> x.stype, x.indices.asnumpy().tolist(), x.data.asnumpy().tolist()
    ('row_sparse', [1], [[1.0, 2.0]])
    >>> (x * 2).asnumpy().tolist()
    [[0.0, 0.0], [2.0, 4.0], [0.0, 0.0]]
"""
from __future__ import annotations

import numpy

from .. import tape as _tape
from ..context import Context, as_context
from ..dtypes import as_dtype
from ..ndarray import NDArray
from ..ops.dispatch import MXNetError
from . import storage as _st

__all__ = [
    "STYPES",
    "BaseSparseNDArray",
    "CSRNDArray",
    "NotSupportedForSparseNDArray",
    "RowSparseNDArray",
]

STYPES = ("default", "row_sparse", "csr")


class NotSupportedForSparseNDArray(MXNetError):
    """MXNet's error for an NDArray method that sparse arrays do not have."""

    def __init__(self, function: str, alias=None, *args):
        msg = f"Function {function}"
        if alias:
            msg += f' (namely operator "{alias}")'
        if args:
            msg += f" with arguments ({', '.join(str(type(a)) for a in args)})"
        super().__init__(msg + " is not supported for SparseNDArray and only available in "
                         "NDArray.")


def _raw(xp, a, dtype=None):
    """A raw array of module ``xp`` from an NDArray, array or list (a copy)."""
    if isinstance(a, NDArray):
        a = a.asnumpy()
    return xp.array(numpy.asarray(a), dtype=dtype, copy=True)


class BaseSparseNDArray(NDArray):
    """The base class of sparse arrays (MXNet's ``BaseSparseNDArray``).

    Not built directly: use ``nd.sparse.csr_matrix``, ``nd.sparse.row_sparse_array``,
    ``nd.sparse.zeros`` or ``x.tostype(stype)``.
    """

    __slots__ = ("_aux", "_dense", "_sshape", "_values")
    _is_sparse = True
    STYPE = ""

    def __init__(self, *args, **kwargs):
        raise TypeError(f"{type(self).__name__}: build sparse arrays with "
                        "nd.sparse.csr_matrix / nd.sparse.row_sparse_array / "
                        "nd.sparse.zeros or x.tostype(stype)")

    @classmethod
    def _new(cls, ctx: Context, shape, values, aux, node=None):
        """A new array of layout ``values`` + ``aux`` (raw arrays of ``ctx``'s module)."""
        a = cls.__new__(cls)
        a._ctx = ctx
        a._node = node
        a._grad = None
        a._version = 0
        a._var = None
        a._sshape = tuple(int(s) for s in shape)
        a._values = values
        a._aux = tuple(aux)
        a._dense = None
        return a

    # ------------------------------------------------------------------ the dense value
    def _get_dense(self):
        d = self._dense
        if d is None:
            d = self._densify()
            self._dense = d
        return d

    def _set_dense(self, arr) -> None:
        self._assign_dense(arr)

    # The dispatcher reads ``_data``: the dense value (storage fallback).
    _data = property(_get_dense, _set_dense)

    def _densify(self):  # pragma: no cover - defined by the subclasses
        raise NotImplementedError

    def _layout_of(self, dense):  # pragma: no cover - defined by the subclasses
        raise NotImplementedError

    def _set_layout(self, values, aux) -> None:
        """Replace the stored layout (drops the cached dense value)."""
        self._values = values
        self._aux = tuple(aux)
        self._dense = None
        self._version += 1

    def _assign_dense(self, arr) -> None:
        """Take the values of the dense raw array ``arr`` (same shape), stored sparsely."""
        xp = self._ctx.xp
        arr = xp.asarray(arr)
        if tuple(arr.shape) != self._sshape:
            raise ValueError(f"{type(self).__name__}: cannot store a value of shape "
                             f"{tuple(arr.shape)} in an array of shape {self._sshape}")
        if arr.dtype != self.dtype:
            arr = arr.astype(self.dtype)
        values, *aux = self._layout_of(arr)
        self._set_layout(values, aux)

    # ------------------------------------------------------------------ properties
    @property
    def shape(self) -> tuple:
        return self._sshape

    @property
    def dtype(self) -> numpy.dtype:
        return self._values.dtype

    @property
    def ndim(self) -> int:
        return len(self._sshape)

    @property
    def size(self) -> int:
        """The number of elements of the dense array (MXNet disables ``size`` on sparse
        arrays as ambiguous; the dense count is what code written for NDArrays expects).
        ``x.data.size`` is the number of stored values."""
        return int(numpy.prod(self._sshape))

    @property
    def stype(self) -> str:
        return self.STYPE

    @property
    def handle(self):
        return self

    def _aux_data(self, i: int) -> NDArray:
        """A copy of aux array ``i`` (MXNet's order: csr ``indptr``, ``indices``)."""
        return NDArray._make(self._aux[i].copy(), self._ctx, None)

    @property
    def _num_aux(self) -> int:
        return len(self._aux)

    @property
    def _aux_types(self) -> list:
        return [a.dtype for a in self._aux]

    @property
    def data(self) -> NDArray:
        """A copy of the stored values (an NDArray)."""
        return NDArray._make(self._values.copy(), self._ctx, None)

    @data.setter
    def data(self, value):
        raise NotImplementedError(f"{type(self).__name__}.data cannot be assigned")

    # ------------------------------------------------------------------ conversions
    def asnumpy(self) -> numpy.ndarray:
        """A dense NumPy copy of the values."""
        d = self._get_dense()
        return numpy.array(d, copy=True) if self._ctx.device_type == "cpu" else d.get()

    def __array__(self, dtype=None, copy=None):
        a = self.asnumpy()
        return a if dtype is None else a.astype(dtype, copy=False)

    def tostype(self, stype: str) -> NDArray:
        """A copy of this array in storage ``stype`` (see ``nd.sparse.cast_storage``)."""
        from .create import cast_storage

        return cast_storage(self, stype)

    def _copy_to_ctx(self, ctx: Context) -> BaseSparseNDArray:
        xp = ctx.xp
        with ctx.device_guard():
            move = (lambda a: xp.asarray(a.get() if hasattr(a, "get") else a).copy())
            values, aux = move(self._values), [move(a) for a in self._aux]
        return type(self)._new(ctx, self._sshape, values, aux)

    def copy(self) -> BaseSparseNDArray:
        """A copy of the same storage type on the same context."""
        return self._copy_to_ctx(self._ctx)

    def copyto(self, other):
        """Copy to a context (a new array of this storage type), or into ``other``: a
        dense array or one of this storage type, of the same shape (returns it)."""
        if isinstance(other, NDArray):
            if other is self:
                import warnings

                warnings.warn("You are attempting to copy an array to itself", RuntimeWarning,
                              stacklevel=2)
                return False
            if other.stype not in ("default", self.STYPE):
                raise TypeError(f"copyto: cannot copy a {self.STYPE} array into a "
                                f"{other.stype} array (only 'default' or {self.STYPE!r})")
            if tuple(other.shape) != self._sshape:
                raise ValueError(f"copyto: shapes differ: source {self._sshape}, target "
                                 f"{tuple(other.shape)}")
            src = self if other._ctx is self._ctx else self._copy_to_ctx(other._ctx)
            if other.stype == "default":
                other[...] = NDArray._make(src._get_dense(), src._ctx, None)
            else:
                values = src._values.astype(other.dtype, copy=True)
                other._set_layout(values, [a.copy() for a in src._aux])
            return other
        if isinstance(other, (Context, str)):
            return self._copy_to_ctx(as_context(other))
        raise TypeError(f"copyto does not support type {type(other).__name__}")

    def as_in_context(self, ctx) -> BaseSparseNDArray:
        """This array if it is on ``ctx`` already, else a copy there."""
        ctx = as_context(ctx)
        return self if ctx is self._ctx else self._copy_to_ctx(ctx)

    as_in_ctx = as_in_context
    to_device = as_in_context

    def astype(self, dtype, copy: bool = True) -> BaseSparseNDArray:
        """A copy with values cast to ``dtype`` (same storage type)."""
        dtype = as_dtype(dtype, "astype")
        if not copy and dtype == self.dtype:
            return self
        return type(self)._new(self._ctx, self._sshape, self._values.astype(dtype),
                               [a.copy() for a in self._aux])

    def detach(self) -> BaseSparseNDArray:
        """The same values (sharing the layout), cut from the graph."""
        return type(self)._new(self._ctx, self._sshape, self._values, self._aux)

    def check_format(self, full_check: bool = True) -> None:
        """Check the layout (MXNet's ``check_format``).

        Args:
            full_check: also check the index values (sorted, unique, in range), O(nnz).

        Raises:
            ValueError: naming the fault (shapes, offsets, indices).
        """
        self._check(full_check)

    # ------------------------------------------------------------------ autograd
    def attach_grad(self, grad_req: str = "write", stype=None) -> None:
        """Mark this array as a variable; the gradient has this array's storage type
        unless ``stype`` says otherwise."""
        from .create import zeros

        g = zeros(stype or self.STYPE, self._sshape, ctx=self._ctx, dtype=self.dtype)
        self._attach(g, grad_req)

    def _take_grad(self, g, grad_req: str) -> None:
        """Write (``'write'``) or add (``'add'``) the gradient ``g`` into this array
        (a sparse ``.grad``): stored in this array's storage type."""
        if grad_req == "add":
            total = self._get_dense() + (g._data if isinstance(g, NDArray) else g)
            self._assign_dense(total)
        elif isinstance(g, BaseSparseNDArray) and g.STYPE == self.STYPE:
            self._set_layout(g._values.astype(self.dtype, copy=True),
                             [a.copy() for a in g._aux])
        else:
            self._assign_dense(g._data)

    # ------------------------------------------------------------------ in-place writes
    def _write_all(self, key, value, what: str) -> None:
        if not (isinstance(key, slice) and key == slice(None)) and key is not Ellipsis:
            raise TypeError(f"{type(self).__name__} only supports [:] for {what}, got "
                            f"{key!r}")
        if _tape._state.recording and self._node is not None:
            self._check_not_leaf(f"{type(self).__name__}.__setitem__")
        if isinstance(value, NDArray):
            if value is self:
                return
            if value._ctx is not self._ctx:
                value = value.as_in_context(self._ctx)
            if isinstance(value, BaseSparseNDArray) and value.STYPE == self.STYPE:
                if value.shape != self.shape:
                    raise ValueError(f"__setitem__: value shape {value.shape} differs from "
                                     f"{self.shape}")
                self._set_layout(value._values.astype(self.dtype, copy=True),
                                 [a.copy() for a in value._aux])
                return
            self._assign_dense(value._data)
            return
        xp = self._ctx.xp
        if isinstance(value, (bool, int, float, numpy.generic)) and not isinstance(
                value, numpy.ndarray):
            self._assign_scalar(value)
            return
        if isinstance(value, (numpy.ndarray, list, tuple)):
            self._assign_dense(xp.broadcast_to(xp.asarray(numpy.asarray(value, self.dtype)),
                                               self._sshape))
            return
        raise TypeError(f"{type(self).__name__}.__setitem__: type {type(value).__name__} "
                        "not supported")

    def _assign_scalar(self, value) -> None:
        xp = self._ctx.xp
        self._assign_dense(xp.full(self._sshape, value, self.dtype))

    def __setitem__(self, key, value):
        self._write_all(key, value, "assignment")

    def _inplace(self, name, other):
        from . import ops

        if _tape._state.recording and self._node is not None:
            self._check_not_leaf(f"in-place {name}")
        fn = ops.ARITHMETIC.get(name)
        res = fn(self, other) if fn is not None else self._dense_inplace(name, other)
        if tuple(res.shape) != self._sshape:
            raise ValueError(f"in-place {name}: the result has shape {tuple(res.shape)}, "
                             f"which does not fit the array's shape {self._sshape}")
        if isinstance(res, BaseSparseNDArray) and res.STYPE == self.STYPE:
            self._set_layout(res._values.astype(self.dtype, copy=False), res._aux)
        else:
            self._assign_dense(res._data)
        return self

    def _dense_inplace(self, name, other):
        tmp = NDArray._make(self._get_dense().copy(), self._ctx, None)
        NDArray._inplace(tmp, name, other)
        return tmp

    # ------------------------------------------------------------------ arithmetic
    def __add__(self, o):
        from .ops import add
        return add(self, o)

    def __radd__(self, o):
        from .ops import add
        return add(o, self)

    def __sub__(self, o):
        from .ops import subtract
        return subtract(self, o)

    def __rsub__(self, o):
        from .ops import subtract
        return subtract(o, self)

    def __mul__(self, o):
        from .ops import multiply
        return multiply(self, o)

    def __rmul__(self, o):
        from .ops import multiply
        return multiply(o, self)

    def __truediv__(self, o):
        from .ops import divide
        return divide(self, o)

    def __rtruediv__(self, o):
        from .ops import divide
        return divide(o, self)

    def __neg__(self):
        from .ops import multiply
        return multiply(self, -1.0)

    def __eq__(self, o):
        from .ops import compare
        return compare("equal", self, o)

    def __ne__(self, o):
        from .ops import compare
        return compare("not_equal", self, o)

    def __gt__(self, o):
        from .ops import compare
        return compare("greater", self, o)

    def __ge__(self, o):
        from .ops import compare
        return compare("greater_equal", self, o)

    def __lt__(self, o):
        from .ops import compare
        return compare("less", self, o)

    def __le__(self, o):
        from .ops import compare
        return compare("less_equal", self, o)

    def __abs__(self):
        from .ops import unary
        return unary("abs", self)

    __hash__ = NDArray.__hash__

    # ------------------------------------------------------------------ refused methods
    def reshape(self, *shape, **kwargs):
        raise NotSupportedForSparseNDArray("reshape", None, shape)

    def _at(self, idx):
        raise NotSupportedForSparseNDArray("_at", "[idx]", idx)

    def _slice(self, start, stop):
        raise NotSupportedForSparseNDArray("_slice", None, start, stop)

    def __repr__(self) -> str:
        shape = "x".join(str(s) for s in self._sshape)
        return f"\n<{type(self).__name__} {shape} @{self._ctx}>"

    def __reduce__(self):
        move = (lambda a: numpy.asarray(a.get() if hasattr(a, "get") else a))
        return (_rebuild, (self.STYPE, self._sshape, move(self._values),
                           tuple(move(a) for a in self._aux), self._ctx.device_type,
                           self._ctx.device_id))

    def __getstate__(self):
        raise TypeError(f"{type(self).__name__}: MXNet's raw-bytes state holds dense arrays "
                        "only; save sparse arrays with nd.save")


class RowSparseNDArray(BaseSparseNDArray):
    """Rows of an array stored at given row indices (MXNet's ``RowSparseNDArray``):
    ``dense[indices[i]] = data[i]``, other rows zero; ``indices`` are sorted, unique
    int64 row ids.

    Example:
        >>> from core.nd import sparse
        >>> a = sparse.row_sparse_array(([[1, 2]], [1]), shape=(3, 2))
        >>> a.asnumpy().tolist()
        [[0.0, 0.0], [1.0, 2.0], [0.0, 0.0]]
        >>> a.retain([0]).indices.asnumpy().tolist()
        []
    """

    __slots__ = ()
    STYPE = "row_sparse"

    @property
    def indices(self) -> NDArray:
        """A copy of the row indices (int64)."""
        return self._aux_data(0)

    @indices.setter
    def indices(self, value):
        raise NotImplementedError("RowSparseNDArray.indices cannot be assigned")

    def _densify(self):
        return _st.rsp_to_dense(self._ctx.xp, self._sshape, self.dtype, self._values,
                                self._aux[0])

    def _layout_of(self, dense):
        return _st.dense_to_rsp(self._ctx.xp, dense)

    def _check(self, full_check):
        _st.check_rsp(self._sshape, self._values, self._aux[0], full_check)

    def _assign_scalar(self, value) -> None:
        xp = self._ctx.xp
        n = self._sshape[0]
        if value == 0:
            self._set_layout(xp.zeros((0,) + self._sshape[1:], self.dtype),
                             [xp.zeros((0,), _st.AUX_DTYPE)])
            return
        self._set_layout(xp.full(self._sshape, value, self.dtype),
                         [xp.arange(n, dtype=_st.AUX_DTYPE)])

    def __getitem__(self, key):
        if isinstance(key, slice) and key == slice(None):
            return self
        if isinstance(key, tuple):
            raise ValueError("Multi-dimension indexing is not supported")  # noqa: TRY004
        raise TypeError(f"RowSparseNDArray only supports [:] for __getitem__, got {key!r}")

    def retain(self, indices) -> RowSparseNDArray:
        """The rows of ``indices`` only (``nd.sparse.retain``)."""
        from .ops import retain

        return retain(self, indices)

    def tostype(self, stype: str) -> NDArray:
        if stype == "csr":
            raise ValueError("cast_storage from row_sparse to csr is not supported")
        return super().tostype(stype)


class CSRNDArray(BaseSparseNDArray):
    """A 2-D array in compressed sparse row format (MXNet's ``CSRNDArray``): row ``i``
    holds ``data[indptr[i]:indptr[i+1]]`` at columns ``indices[indptr[i]:indptr[i+1]]``.

    Example:
        >>> from core.nd import sparse
        >>> a = sparse.csr_matrix(([1, 2, 3], [0, 2, 1], [0, 2, 2, 3]), shape=(3, 3))
        >>> a.asnumpy().tolist()
        [[1.0, 0.0, 2.0], [0.0, 0.0, 0.0], [0.0, 3.0, 0.0]]
        >>> a[1:3].indptr.asnumpy().tolist()
        [0, 0, 1]
    """

    __slots__ = ()
    STYPE = "csr"

    @property
    def indices(self) -> NDArray:
        """A copy of the column indices (int64)."""
        return self._aux_data(1)

    @indices.setter
    def indices(self, value):
        raise NotImplementedError("CSRNDArray.indices cannot be assigned")

    @property
    def indptr(self) -> NDArray:
        """A copy of the row pointers (int64, rows + 1)."""
        return self._aux_data(0)

    @indptr.setter
    def indptr(self, value):
        raise NotImplementedError("CSRNDArray.indptr cannot be assigned")

    def _densify(self):
        return _st.csr_to_dense(self._ctx.xp, self._sshape, self.dtype, self._values,
                                self._aux[0], self._aux[1])

    def _layout_of(self, dense):
        return _st.dense_to_csr(self._ctx.xp, dense)

    def _check(self, full_check):
        _st.check_csr(self._sshape, self._values, self._aux[0], self._aux[1], full_check)

    def _assign_scalar(self, value) -> None:
        raise ValueError("Assigning numeric types to CSRNDArray is not implemented yet.")

    def __getitem__(self, key):
        """Rows of the matrix: ``a[i]`` (one row, kept 2-D) or ``a[i:j]`` (step 1)."""
        from .ops import slice_rows

        if isinstance(key, (int, numpy.integer)) and not isinstance(key, bool):
            n = self._sshape[0]
            begin = int(key) + n if key < 0 else int(key)
            if not 0 <= begin < n:
                raise IndexError(f"CSRNDArray: index {key} is out of range for {n} rows")
            return slice_rows(self, begin, begin + 1)
        if isinstance(key, slice):
            if key.step is not None and key.step != 1:
                raise ValueError("CSRNDArray only supports continuous slicing on axis 0")
            if key.start is None and key.stop is None:
                return self
            begin, end, _ = key.indices(self._sshape[0])
            return slice_rows(self, begin, max(begin, end))
        if isinstance(key, tuple):
            raise ValueError("Multi-dimension indexing is not supported")  # noqa: TRY004
        raise ValueError(f"Undefined behaviour for {key!r}")

    def asscipy(self):
        """A ``scipy.sparse.csr_matrix`` copy."""
        import scipy.sparse as spsp

        move = (lambda a: numpy.asarray(a.get() if hasattr(a, "get") else a).copy())
        return spsp.csr_matrix((move(self._values), move(self._aux[1]), move(self._aux[0])),
                               shape=self._sshape, dtype=self.dtype)

    def tostype(self, stype: str) -> NDArray:
        if stype == "row_sparse":
            raise ValueError("cast_storage from csr to row_sparse is not supported")
        return super().tostype(stype)


def _rebuild(stype, shape, values, aux, device_type, device_id):
    ctx = Context(device_type, device_id)
    cls = RowSparseNDArray if stype == "row_sparse" else CSRNDArray
    xp = ctx.xp
    return cls._new(ctx, shape, xp.asarray(values), [xp.asarray(a) for a in aux])
