"""``npx``'s array functions (indexing, sorting, sequences, batched products, special
functions) with MXNet 2.0's signatures, bound onto operators of the registry."""
from __future__ import annotations

from .. import ops as _ops
from ..ndarray import NDArray
from ._nn import _dtype_name

_F = _ops.F


def pick(data, index, axis: int = -1, mode: str = "clip", keepdims: bool = False) -> NDArray:
    """``data[..., index[...], ...]`` along ``axis``: one entry per position of ``index``.

    Args:
        data: the input.
        index: integer (or integral float) indices, ``data``'s shape without ``axis``.
        axis: the axis to pick along.
        mode: ``'clip'`` (out-of-range indices clip) or ``'wrap'`` (they wrap around).
        keepdims: keep ``axis`` with size 1.

    Example:
        >>> from core import np, npx
        >>> x = np.array([[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]])
        >>> npx.pick(x, np.array([0, 1, 0]), axis=1).tolist()
        [1.0, 4.0, 5.0]
    """
    return _F.pick(data, index, axis=axis, keepdims=keepdims, mode=mode)


def one_hot(data, depth=None, on_value: float = 1.0, off_value: float = 0.0,
            dtype="float32") -> NDArray:
    """One-hot vectors of length ``depth`` for the integer ids in ``data``.

    Example:
        >>> from core import np, npx
        >>> npx.one_hot(np.array([1, 0]), 3).tolist()
        [[0.0, 1.0, 0.0], [1.0, 0.0, 0.0]]
    """
    if depth is None:
        raise TypeError("npx.one_hot: depth (the length of the one-hot vectors) is required")
    return _F.one_hot(data, depth=depth, on_value=on_value, off_value=off_value,
                      dtype=_dtype_name(dtype))


def topk(data, axis: int = -1, k: int = 1, ret_typ: str = "indices", is_ascend: bool = False,
         dtype="float32") -> NDArray | list:
    """The ``k`` largest (``is_ascend``: smallest) entries along ``axis``.

    Args:
        ret_typ: ``'indices'``, ``'value'``, ``'both'`` (``[values, indices]``) or
            ``'mask'`` (1 at the chosen entries).
        dtype: the dtype of the indices.

    Example:
        >>> from core import np, npx
        >>> x = np.array([[0.3, 0.2, 0.4], [0.1, 0.3, 0.2]])
        >>> npx.topk(x).tolist()
        [[2.0], [1.0]]
        >>> npx.topk(x, ret_typ="value", k=2).tolist()
        [[0.4000000059604645, 0.30000001192092896], [0.30000001192092896, 0.20000000298023224]]
    """
    res = _F.topk(data, axis=axis, k=k, ret_typ=ret_typ, is_ascend=is_ascend,
                  dtype=_dtype_name(dtype))
    return list(res) if isinstance(res, tuple) else res


def sequence_mask(data, sequence_length=None, use_sequence_length: bool = False,
                  value: float = 0.0, axis: int = 0) -> NDArray:
    """Set the steps past each sequence's length to ``value``.

    Args:
        data: ``(T, N, ...)`` for ``axis=0`` or ``(N, T, ...)`` for ``axis=1``.
        sequence_length: ``(N,)`` lengths, read with ``use_sequence_length=True``.
        value: the fill value.
        axis: the time axis (0 or 1).

    Example:
        >>> from core import np, npx
        >>> x = np.ones((2, 3))
        >>> npx.sequence_mask(x, np.array([1, 2]), use_sequence_length=True, axis=1).tolist()
        [[1.0, 0.0, 0.0], [1.0, 1.0, 0.0]]
    """
    return _F.SequenceMask(data, sequence_length, use_sequence_length=use_sequence_length,
                           value=value, axis=axis)


def sequence_last(data, sequence_length=None, use_sequence_length: bool = False,
                  axis: int = 0) -> NDArray:
    """The last valid step of each sequence (see :func:`sequence_mask`).

    Example:
        >>> from core import np, npx
        >>> x = np.arange(6.0).reshape(3, 2)
        >>> npx.sequence_last(x).tolist()
        [4.0, 5.0]
    """
    return _F.SequenceLast(data, sequence_length, use_sequence_length=use_sequence_length,
                           axis=axis)


def sequence_reverse(data, sequence_length=None, use_sequence_length: bool = False,
                     axis: int = 0) -> NDArray:
    """Reverse each sequence's valid steps along the time axis 0.

    Example:
        >>> from core import np, npx
        >>> npx.sequence_reverse(np.arange(3.0).reshape(3, 1)).tolist()
        [[2.0], [1.0], [0.0]]
    """
    return _F.SequenceReverse(data, sequence_length, use_sequence_length=use_sequence_length,
                              axis=axis)


def batch_dot(a, b, transpose_a: bool = False, transpose_b: bool = False,
              forward_stype=None) -> NDArray:
    """Matrix products of matching batches: ``(B, n, k) x (B, k, m) -> (B, n, m)``.

    Example:
        >>> from core import np, npx
        >>> npx.batch_dot(np.ones((2, 3, 4)), np.ones((2, 4, 5))).shape
        (2, 3, 5)
    """
    return _F.batch_dot(a, b, transpose_a=transpose_a, transpose_b=transpose_b,
                        forward_stype=forward_stype)


def batch_flatten(x) -> NDArray:
    """Flatten all axes but the first: ``(N, ...) -> (N, prod(...))``.

    Example:
        >>> from core import np, npx
        >>> npx.batch_flatten(np.ones((2, 3, 4))).shape
        (2, 12)
    """
    return _F.flatten(x)


def broadcast_like(lhs, rhs, lhs_axes=None, rhs_axes=None) -> NDArray:
    """Broadcast ``lhs`` to ``rhs``'s shape (on the given axes only, when given).

    Example:
        >>> from core import np, npx
        >>> npx.broadcast_like(np.ones((1, 3)), np.zeros((2, 3))).shape
        (2, 3)
    """
    return _F.broadcast_like(lhs, rhs, lhs_axes=lhs_axes, rhs_axes=rhs_axes)


def arange_like(data, start: float = 0.0, step: float = 1.0, repeat: int = 1, ctx=None,
                axis=None) -> NDArray:
    """``start, start + step, ...`` shaped like ``data`` (or along its ``axis``), each
    value repeated ``repeat`` times; float32 on ``data``'s device.

    Example:
        >>> from core import np, npx
        >>> npx.arange_like(np.zeros((2, 3)), axis=1).tolist()
        [0.0, 1.0, 2.0]
    """
    from .. import nd as _nd

    shape = tuple(data.shape)
    n = shape[axis] if axis is not None else _prod(shape)
    count = -(-n // repeat)
    vals = _nd.arange(start, start + step * count, step, repeat=repeat, dtype="float32",
                      ctx=ctx if ctx is not None else data.context)
    if vals.shape[0] != n:  # float steps may give one value too many
        vals = vals[:n]
    return vals if axis is not None else vals.reshape(shape)


def _prod(shape):
    out = 1
    for d in shape:
        out *= d
    return out


def nonzero(a) -> NDArray:
    """The indices of the non-zero entries, one row per entry: shape ``(count, a.ndim)``,
    int64 (MXNet's ``npx.nonzero``; ``np.nonzero`` gives one array per axis instead).

    Example:
        >>> from core import np, npx
        >>> npx.nonzero(np.array([[0.0, 1.0], [2.0, 0.0]])).tolist()
        [[0, 1], [1, 0]]
    """
    from ..np import argwhere

    return argwhere(a)


def slice(data, begin, end, step=()) -> NDArray:
    """``data[b0:e0:s0, b1:e1:s1, ...]``; None entries mean the default.

    Example:
        >>> from core import np, npx
        >>> npx.slice(np.arange(6.0).reshape(2, 3), (None, 1), (None, 3)).tolist()
        [[1.0, 2.0], [4.0, 5.0]]
    """
    return _F.slice(data, begin=tuple(begin), end=tuple(end), step=tuple(step or ()))


def gamma(data) -> NDArray:
    """The gamma function, elementwise.

    Example:
        >>> from core import np, npx
        >>> npx.gamma(np.array([5.0])).tolist()
        [24.0]
    """
    return _F.gamma(data)


def gammaln(data) -> NDArray:
    """``log(|gamma(data)|)``, elementwise.

    Example:
        >>> from core import np, npx
        >>> round(npx.gammaln(np.array([5.0])).item(), 4)
        3.1781
    """
    return _F.gammaln(data)


def stop_gradient(data) -> NDArray:
    """``data`` with no gradient flowing back through it.

    Example:
        >>> from core import np, npx
        >>> npx.stop_gradient(np.ones(2)).tolist()
        [1.0, 1.0]
    """
    return _F.BlockGrad(data)


def smooth_l1(data, scalar: float = 1.0) -> NDArray:
    """Smooth L1: ``0.5 (s x)^2`` where ``|x| < 1 / s^2``, ``|x| - 0.5 / s^2`` elsewhere.

    Example:
        >>> from core import np, npx
        >>> npx.smooth_l1(np.array([0.5, 2.0])).tolist()
        [0.125, 1.5]
    """
    return _F.smooth_l1(data, scalar=scalar)
