"""MXNet 1.x's ``nd._internal`` names that user code and MXNet's tests call directly.

``_crop_assign``/``_crop_assign_scalar`` (``slice_assign``): a copy of ``lhs`` with the
box ``[begin, end)`` (step ``step``) replaced by ``rhs`` or ``scalar``; with ``out=lhs``
it is written in place. The optimizer operators' internal names (``_adamw_update``, ...)
are here too.

Example:
    >>> from core import nd
    >>> x = nd.ones((2, 3))
    >>> _ = nd._internal._crop_assign_scalar(x, scalar=5, begin=(0, 1), end=(1, 3), out=x)
    >>> x.asnumpy().tolist()
    [[1.0, 5.0, 5.0], [1.0, 1.0, 1.0]]
"""
from __future__ import annotations

from ..ndarray import NDArray
from ..ops.namespace import namespace as _namespace
from ..ops.namespace import write_out
from ..ops.storage import nd_overrides as _nd_overrides
from ..ops.optimizer_ops import PUBLIC as _UPDATES

__all__ = ["_crop_assign", "_crop_assign_scalar", "_slice_assign", "_slice_assign_scalar"]


def _box(name, shape, begin, end, step):
    step = tuple(step or ())
    key = []
    for i, _n in enumerate(shape):
        b = begin[i] if i < len(begin) else None
        e = end[i] if i < len(end) else None
        s = step[i] if i < len(step) else None
        key.append(slice(b, e, s))
    if len(begin) > len(shape) or len(end) > len(shape):
        raise ValueError(f"{name}: begin {tuple(begin)} / end {tuple(end)} have more axes than "
                         f"the array's shape {tuple(shape)}")
    return tuple(key)


def _crop_assign(lhs: NDArray, rhs: NDArray, begin=(), end=(), step=(), out=None) -> NDArray:
    """``lhs`` with ``lhs[begin:end:step] = rhs`` (MXNet's ``_slice_assign``)."""
    key = _box("_crop_assign", lhs.shape, begin, end, step)
    res = lhs.copy()
    res[key] = rhs
    return res if out is None else write_out("_crop_assign", out, res)


def _crop_assign_scalar(data: NDArray, scalar=0.0, begin=(), end=(), step=(),
                        out=None) -> NDArray:
    """``data`` with ``data[begin:end:step] = scalar`` (MXNet's ``_slice_assign_scalar``)."""
    key = _box("_crop_assign_scalar", data.shape, begin, end, step)
    res = data.copy()
    res[key] = scalar
    return res if out is None else write_out("_crop_assign_scalar", out, res)


_slice_assign = _crop_assign
_slice_assign_scalar = _crop_assign_scalar

globals().update({k: v for k, v in _UPDATES.items() if k.startswith("_")})
# operators registered under ``_internal.<name>`` (``_sample_unique_zipfian``)
globals().update(_namespace("nd", "_internal"))
globals().update(_nd_overrides("_internal"))  # _square_sum on row_sparse arrays
