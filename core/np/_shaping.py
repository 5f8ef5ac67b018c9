"""``core.np``'s joining, splitting and rearranging functions that NumPy has and the
registry has as more general operators: each is composed of registry operators
(``concatenate``, ``reshape``, ``broadcast_to``, ``flip``, ``swapaxes``, ...), so each
is differentiable under ``autograd`` and traceable by ``hybridize``."""
from __future__ import annotations

from .. import ops as _ops
from ..ndarray import NDArray
from ..ndarray import array as _nd_array

_F = _ops.F


def _arr(a, like=None):
    if isinstance(a, NDArray):
        return a
    import numpy

    src = numpy.asarray(a)
    return _nd_array(src, ctx=like.context if isinstance(like, NDArray) else None,
                     dtype="float32" if src.dtype == numpy.float64 else src.dtype)


def _first_nd(arrays):
    return next((a for a in arrays if isinstance(a, NDArray)), None)


def _arrays(name, tup):
    if isinstance(tup, NDArray):
        raise TypeError(f"np.{name}: expects a sequence of arrays, got one array")
    like = _first_nd(tup)
    return [_arr(a, like) for a in tup]


def _expand(a, ndim):
    """``a`` with size-1 axes as NumPy's atleast_{1,2,3}d adds them."""
    a = _arr(a)
    n = a.ndim
    if n >= ndim:
        return a
    if ndim == 1:
        return _F.reshape(a, newshape=(1,), mx_codes=False)
    if ndim == 2:
        return _F.reshape(a, newshape=(1,) * (2 - n) + tuple(a.shape), mx_codes=False)
    if n == 0:
        shape = (1, 1, 1)
    elif n == 1:
        shape = (1, a.shape[0], 1)
    else:
        shape = tuple(a.shape) + (1,)
    return _F.reshape(a, newshape=shape, mx_codes=False)


def atleast_1d(*arys):
    """Arrays with at least one axis (a list for several inputs).

    Example:
        >>> from core import np
        >>> np.atleast_1d(np.array(3.0)).shape
        (1,)
    """
    res = [_expand(a, 1) for a in arys]
    return res[0] if len(res) == 1 else res


def atleast_2d(*arys):
    """Arrays with at least two axes (new leading axes).

    Example:
        >>> from core import np
        >>> np.atleast_2d(np.ones(3)).shape
        (1, 3)
    """
    res = [_expand(a, 2) for a in arys]
    return res[0] if len(res) == 1 else res


def atleast_3d(*arys):
    """Arrays with at least three axes (NumPy's placement: ``(N,) -> (1, N, 1)``).

    Example:
        >>> from core import np
        >>> np.atleast_3d(np.ones((2, 3))).shape
        (2, 3, 1)
    """
    res = [_expand(a, 3) for a in arys]
    return res[0] if len(res) == 1 else res


def vstack(tup):
    """Stack arrays row-wise (1-D arrays become rows).

    Example:
        >>> from core import np
        >>> np.vstack([np.ones(2), np.zeros(2)]).tolist()
        [[1.0, 1.0], [0.0, 0.0]]
    """
    return _F.concatenate(*[_expand(a, 2) for a in _arrays("vstack", tup)], axis=0)


row_stack = vstack


def hstack(tup):
    """Stack arrays column-wise (along axis 1; 1-D arrays are joined end to end).

    Example:
        >>> from core import np
        >>> np.hstack([np.ones(2), np.zeros(1)]).tolist()
        [1.0, 1.0, 0.0]
    """
    arrs = [_expand(a, 1) for a in _arrays("hstack", tup)]
    return _F.concatenate(*arrs, axis=0 if arrs and arrs[0].ndim == 1 else 1)


def dstack(tup):
    """Stack arrays along a third axis.

    Example:
        >>> from core import np
        >>> np.dstack([np.ones((2, 2)), np.zeros((2, 2))]).shape
        (2, 2, 2)
    """
    return _F.concatenate(*[_expand(a, 3) for a in _arrays("dstack", tup)], axis=2)


def column_stack(tup):
    """Stack 1-D arrays as columns of a 2-D array (2-D arrays as they are).

    Example:
        >>> from core import np
        >>> np.column_stack([np.ones(2), np.zeros(2)]).tolist()
        [[1.0, 0.0], [1.0, 0.0]]
    """
    cols = []
    for a in _arrays("column_stack", tup):
        cols.append(_F.reshape(a, newshape=(-1, 1), mx_codes=False) if a.ndim < 2 else a)
    return _F.concatenate(*cols, axis=1)


def append(arr, values, axis=None):
    """``values`` joined to the end of ``arr`` (both flattened when ``axis`` is None).

    Example:
        >>> from core import np
        >>> np.append(np.ones(2), np.zeros((1, 1))).tolist()
        [1.0, 1.0, 0.0]
    """
    arr = _arr(arr)
    values = _arr(values, arr)
    if axis is None:
        arr = _F.reshape(arr, newshape=(-1,), mx_codes=False)
        values = _F.reshape(values, newshape=(-1,), mx_codes=False)
        axis = 0
    return _F.concatenate(arr, values, axis=axis)


def _split(name, ary, sections, axis, min_ndim):
    if ary.ndim < min_ndim:
        raise ValueError(f"np.{name}: needs an array with at least {min_ndim} axes, got "
                         f"shape {tuple(ary.shape)}")
    from . import split

    return split(ary, sections, axis=axis)


def hsplit(ary, indices_or_sections):
    """Split along axis 1 (axis 0 for 1-D arrays).

    Example:
        >>> from core import np
        >>> [a.shape for a in np.hsplit(np.ones((2, 4)), 2)]
        [(2, 2), (2, 2)]
    """
    return _split("hsplit", ary, indices_or_sections, 1 if ary.ndim > 1 else 0, 1)


def vsplit(ary, indices_or_sections):
    """Split along axis 0 (arrays of at least 2 axes)."""
    return _split("vsplit", ary, indices_or_sections, 0, 2)


def dsplit(ary, indices_or_sections):
    """Split along axis 2 (arrays of at least 3 axes)."""
    return _split("dsplit", ary, indices_or_sections, 2, 3)


def meshgrid(*xi, indexing: str = "xy", sparse: bool = False, copy: bool = True):
    """Coordinate arrays from 1-D coordinate vectors (NumPy's ``meshgrid``).

    Args:
        xi: 1-D arrays (others are flattened).
        indexing: ``'xy'`` (Cartesian: the first two output axes swapped) or ``'ij'``.
        sparse: return broadcastable arrays instead of full grids.
        copy: accepted for NumPy compatibility.

    Example:
        >>> from core import np
        >>> xs, ys = np.meshgrid(np.arange(3), np.arange(2))
        >>> xs.shape, ys.tolist()
        ((2, 3), [[0.0, 0.0, 0.0], [1.0, 1.0, 1.0]])
    """
    if indexing not in ("xy", "ij"):
        raise ValueError(f"np.meshgrid: indexing must be 'xy' or 'ij', got {indexing!r}")
    arrs = [_arr(x) for x in xi]
    n = len(arrs)
    sizes = [int(a.size) for a in arrs]
    if indexing == "xy" and n > 1:
        sizes[0], sizes[1] = sizes[1], sizes[0]
    out = []
    for i, a in enumerate(arrs):
        pos = i
        if indexing == "xy" and n > 1 and i < 2:
            pos = 1 - i
        shape = [1] * n
        shape[pos] = int(a.size)
        g = _F.reshape(a, newshape=tuple(shape), mx_codes=False)
        if not sparse:
            g = _F.broadcast_to(g, shape=tuple(sizes))
        out.append(g)
    return out


def flipud(m):
    """Reverse the order along axis 0.

    Example:
        >>> from core import np
        >>> np.flipud(np.array([1.0, 2.0])).tolist()
        [2.0, 1.0]
    """
    return _F.flip(m, axis=0)


def fliplr(m):
    """Reverse the order along axis 1 (arrays of at least 2 axes)."""
    if m.ndim < 2:
        raise ValueError(f"np.fliplr: needs at least 2 axes, got shape {tuple(m.shape)}")
    return _F.flip(m, axis=1)


def rot90(m, k: int = 1, axes=(0, 1)):
    """Rotate by 90 degrees ``k`` times in the plane of ``axes`` (first towards second).

    Example:
        >>> from core import np
        >>> np.rot90(np.array([[1.0, 2.0], [3.0, 4.0]])).tolist()
        [[2.0, 4.0], [1.0, 3.0]]
    """
    a0, a1 = (ax % m.ndim for ax in axes)
    if a0 == a1 or len(axes) != 2:
        raise ValueError(f"np.rot90: axes must be two different axes, got {axes!r}")
    k %= 4
    if k == 0:
        return _F.copy(m)
    if k == 2:
        return _F.flip(_F.flip(m, axis=a0), axis=a1)
    if k == 1:
        return _F.swapaxes(_F.flip(m, axis=a1), axis1=a0, axis2=a1)
    return _F.flip(_F.swapaxes(m, axis1=a0, axis2=a1), axis=a1)


def rollaxis(a, axis: int, start: int = 0):
    """Move ``axis`` so that it comes before position ``start`` (NumPy's ``rollaxis``)."""
    n = a.ndim
    axis %= n
    if start < 0:
        start += n
    if not 0 <= start <= n:
        raise ValueError(f"np.rollaxis: start={start} is out of range for {n} axes")
    if axis < start:
        start -= 1
    if axis == start:
        return _F.copy(a)
    return _F.moveaxis(a, source=axis, destination=start)


def diagonal(a, offset: int = 0, axis1: int = 0, axis2: int = 1):
    """The ``offset`` diagonal in the plane of ``axis1`` and ``axis2`` (moved last).

    Example:
        >>> from core import np
        >>> np.diagonal(np.arange(4.0).reshape(2, 2)).tolist()
        [0.0, 3.0]
    """
    return _F.diag(a, k=offset, axis1=axis1, axis2=axis2)


def diagflat(v, k: int = 0):
    """A 2-D array with the flattened ``v`` on its ``k``-th diagonal."""
    return _F.diag(_F.reshape(_arr(v), newshape=(-1,), mx_codes=False), k=k)


def resize(a, new_shape):
    """``a`` repeated (or cut) to fill ``new_shape``, as NumPy's ``resize``."""
    a = _arr(a)
    shape = (new_shape,) if isinstance(new_shape, int) else tuple(new_shape)
    total = 1
    for d in shape:
        total *= d
    flat = _F.reshape(a, newshape=(-1,), mx_codes=False)
    n = int(flat.size)
    if n == 0 or total == 0:
        from ._creation import zeros

        return zeros(shape, dtype=a.dtype, ctx=a.context)
    reps = -(-total // n)
    if reps > 1:
        flat = _F.tile(flat, reps=(reps,))
    return _F.reshape(flat[:total], newshape=shape, mx_codes=False)


def delete(arr, obj, axis=None):
    """``arr`` without the entries ``obj`` (an int, slice or ints) along ``axis``
    (flattened when None); gradients flow to the kept entries.

    Example:
        >>> from core import np
        >>> np.delete(np.array([1.0, 2.0, 3.0]), 1).tolist()
        [1.0, 3.0]
    """
    import numpy

    if axis is None:
        arr = _F.reshape(arr, newshape=(-1,), mx_codes=False)
        axis = 0
    axis %= arr.ndim
    n = arr.shape[axis]
    if isinstance(obj, NDArray):
        obj = obj.asnumpy()
    keep = numpy.delete(numpy.arange(n), obj)
    return _F.take(arr, _nd_array(keep, ctx=arr.context, dtype="int64"), axis=axis)


def insert(arr, obj, values, axis=None):
    """``values`` inserted into ``arr`` before the index ``obj`` (an int) along ``axis``.

    Example:
        >>> from core import np
        >>> np.insert(np.array([1.0, 2.0]), 1, 5.0).tolist()
        [1.0, 5.0, 2.0]
    """
    if axis is None:
        arr = _F.reshape(arr, newshape=(-1,), mx_codes=False)
        axis = 0
    axis %= arr.ndim
    if not isinstance(obj, int):
        raise TypeError(f"np.insert: only an int position is supported, got {obj!r}")
    n = arr.shape[axis]
    pos = obj + n if obj < 0 else obj
    if not 0 <= pos <= n:
        raise IndexError(f"np.insert: index {obj} is out of bounds for axis {axis} with size {n}")
    vals = _arr(values, arr)
    shape = list(arr.shape)
    if vals.ndim == arr.ndim:
        piece = vals
    else:
        shape[axis] = 1
        piece = _F.broadcast_to(_F.expand_dims(vals, axis=axis) if vals.ndim == arr.ndim - 1
                                else vals, shape=tuple(shape))
    if piece.dtype != arr.dtype:
        piece = piece.astype(arr.dtype)
    from . import split

    head, tail = split(arr, [pos], axis=axis)
    return _F.concatenate(head, piece, tail, axis=axis)


def fill_diagonal(a, val, wrap: bool = False) -> None:
    """Write ``val`` on the main diagonal of ``a`` in place (NumPy's semantics).

    Example:
        >>> from core import np
        >>> x = np.zeros((2, 2)); np.fill_diagonal(x, 3.0); x.tolist()
        [[3.0, 0.0], [0.0, 3.0]]
    """
    import numpy

    host = a.asnumpy().copy()
    numpy.fill_diagonal(host, val.asnumpy() if isinstance(val, NDArray) else val, wrap=wrap)
    a[...] = _nd_array(host, ctx=a.context, dtype=a.dtype)
