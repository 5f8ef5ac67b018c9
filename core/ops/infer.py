"""Pure helpers for operators' shape and dtype inference rules.

Every helper takes the operator's name so its errors name the operator.
"""
from __future__ import annotations

import numbers

import numpy

from ..dtypes import FLOATS
from .registry import Aval

_SCALAR = (bool, int, float, numbers.Number)


def fmt(avals) -> str:
    """``(2, 3) float32, (3,) int64`` for error messages."""
    out = []
    for a in avals:
        if isinstance(a, Aval):
            out.append(f"{a.shape} {a.dtype.name}")
        else:
            out.append(repr(a))
    return ", ".join(out)


def is_aval(a) -> bool:
    return isinstance(a, Aval)


def dtype_of(a):
    """The dtype of an aval, or the Python scalar itself (weak type) for scalars."""
    return a.dtype if isinstance(a, Aval) else a


def shape_of(a) -> tuple:
    return a.shape if isinstance(a, Aval) else ()


def broadcast(name: str, *avals) -> tuple:
    """The broadcast shape of the array inputs, or ValueError naming ``name``."""
    shapes = [a.shape for a in avals if isinstance(a, Aval)]
    if not shapes:
        return ()
    first = shapes[0]
    if all(s == first for s in shapes):
        return first
    try:
        return numpy.broadcast_shapes(*shapes)
    except ValueError:
        raise ValueError(
            f"{name}: shapes {', '.join(str(s) for s in shapes)} cannot be broadcast together "
            f"(inputs: {fmt(avals)}); sizes must match or be 1, aligned from the last axis"
        ) from None


def result_type(name: str, *avals):
    """NumPy's result dtype of the inputs (Python scalars are weakly typed)."""
    try:
        return numpy.result_type(*[dtype_of(a) for a in avals if a is not None])
    except TypeError as e:
        raise TypeError(f"{name}: no common dtype for inputs {fmt(avals)} ({e})") from None


def require_float(name: str, *avals, what: str = "inputs", shown=None,
                  fix: str = "cast with .astype('float32')") -> None:
    """TypeError naming ``name`` unless every array in ``avals`` is floating point.

    Floating point is ``core.dtypes.FLOATS`` (float16/32/64, bfloat16, float8); Python
    scalars and None pass.

    Args:
        name: the operator (or public function) the message names.
        *avals: the values that must be floating point.
        what: what the message calls them (``"inputs"``, ``"data"``, ``"logits"``, ...).
        shown: the values the message lists (default: ``avals``), e.g. all of an
            operator's inputs when only one of them must be floating point.
        fix: the advice after the semicolon.

    Raises:
        TypeError: ``"{name}: expects floating-point {what}, got {shown}; {fix}"``.

    Example:
        >>> import numpy
        >>> from core.ops.registry import Aval
        >>> require_float("relu", Aval((2,), numpy.float32), 1.5)
        >>> require_float("relu", Aval((2,), numpy.int32))
        Traceback (most recent call last):
        TypeError: relu: expects floating-point inputs, got (2,) int32; cast with .astype('float32')
    """
    for a in avals:
        if isinstance(a, Aval) and a.dtype not in FLOATS:
            raise TypeError(f"{name}: expects floating-point {what}, got "
                            f"{fmt(avals if shown is None else shown)}; {fix}")


def norm_axis(name: str, axis: int, ndim: int, what: str = "axis") -> int:
    """A non-negative axis, or ValueError naming ``name`` when out of range."""
    if isinstance(axis, bool) or not isinstance(axis, (int, numpy.integer)):
        raise TypeError(f"{name}: {what} must be an int, got {axis!r}")
    if not -max(ndim, 1) <= axis < max(ndim, 1):
        raise ValueError(f"{name}: {what}={axis} is out of range for an array of {ndim} "
                         f"dimension(s) (valid: {-max(ndim, 1)}..{max(ndim, 1) - 1})")
    return axis % ndim if ndim else 0


def norm_axes(name: str, axis, ndim: int) -> tuple:
    """Normalize ``axis`` (None, int or sequence) to a sorted tuple of axes."""
    if axis is None:
        return tuple(range(ndim))
    if isinstance(axis, (list, tuple)):
        axes = tuple(norm_axis(name, a, ndim) for a in axis)
        if len(set(axes)) != len(axes):
            raise ValueError(f"{name}: repeated axis in {axis!r}")
        return tuple(sorted(axes))
    return (norm_axis(name, axis, ndim),)


# Stand-in sizes for unknown dimensions: a rule runs once with each, and the output
# dimensions that agree are known (``fill_unknown``, ``agreed_dims``). Distinct primes,
# unlikely to equal a real dimension; the sizes Keras' numpy and torch backends use in
# compute_output_spec, so kbackend's output specs match theirs.
UNKNOWN_DIM_PROBES = (83, 89)


def fill_unknown(shape, size: int) -> tuple:
    """``shape`` with its unknown (None) dimensions set to ``size``.

    Example:
        >>> fill_unknown((None, 3, None), UNKNOWN_DIM_PROBES[0])
        (83, 3, 83)
    """
    return tuple(size if d is None else d for d in shape)


def agreed_dims(a, b) -> tuple:
    """The dimensions two probed results agree on, None where they differ.

    ``a`` and ``b`` are the output shapes of runs with different ``UNKNOWN_DIM_PROBES``;
    a dimension that changed with the probe depends on an unknown one. Like ``zip``,
    it stops at the shorter shape: callers that need equal ranks check them first.

    Example:
        >>> agreed_dims((83, 4, 166), (89, 4, 178))
        (None, 4, None)
    """
    return tuple(x if x == y else None for x, y in zip(a, b))


def reduced_shape(shape: tuple, axes: tuple, keepdims: bool) -> tuple:
    if keepdims:
        return tuple(1 if i in axes else s for i, s in enumerate(shape))
    return tuple(s for i, s in enumerate(shape) if i not in axes)


def ufunc_dtype(name: str, ufunc, *avals):
    """The output dtype NumPy's ``ufunc`` gives for these inputs (scalars weakly typed)."""
    dts = []
    for a in avals:
        if isinstance(a, Aval):
            dts.append(a.dtype)
        elif isinstance(a, bool):
            dts.append(numpy.dtype(bool))
        elif isinstance(a, int):
            dts.append(int)
        elif isinstance(a, float):
            dts.append(float)
        else:
            dts.append(numpy.asarray(a).dtype)
    try:
        res = ufunc.resolve_dtypes(tuple(dts) + (None,) * ufunc.nout)
    except TypeError as e:
        raise TypeError(f"{name}: not supported for inputs {fmt(avals)} ({e})") from None
    return res[ufunc.nin]
