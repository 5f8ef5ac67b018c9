"""``npx.reshape``: MXNet 2.0's reshape with the special codes -1 ... -6.

The target shape is computed here from the input's (concrete) shape and the codes, and
the registry's ``reshape`` operator does the work, so the result is differentiable and
traces into a graph like any reshape (a hybridized graph is cached per input shape).
"""
from __future__ import annotations

import math

from .. import ops as _ops

_CODES = "-1 infer, -2 copy, -3 drop a size-1 axis, -4 copy the rest, -5 merge two, -6 split one"


def npx_shape(src: tuple, newshape, reverse: bool = False) -> tuple:
    """The output shape of ``npx.reshape`` for input shape ``src``.

    Codes: ``-1`` infers the size (one at most; consumes one input axis), ``-2`` copies
    the next input axis, ``-3`` drops the next input axis (it must have size 1), ``-4``
    copies all remaining input axes, ``-5`` merges the next two input axes, ``-6`` splits
    the next input axis into the two sizes that follow it (one may be -1). A non-negative
    size is taken as it is and consumes one input axis. ``reverse`` reads both shapes
    from the right.

    Example:
        >>> npx_shape((8, 3, 3, 3, 4, 4), (-6, 2, -1, -4))
        (2, 4, 3, 3, 3, 4, 4)
        >>> npx_shape((8, 3, 2, 4, 8), (-4, -1, 2, -6), reverse=True)
        (8, 3, 2, 4, 4, 2)
    """
    src = tuple(int(d) for d in src)
    spec = (newshape,) if isinstance(newshape, int) else tuple(newshape)
    if not all(isinstance(v, int) and not isinstance(v, bool) for v in spec):
        raise TypeError(f"npx.reshape: newshape must be ints, got {newshape!r}")
    if reverse:
        return tuple(reversed(_forward(src[::-1], spec[::-1], src, newshape)))
    return _forward(src, spec, src, newshape)


def _forward(src, spec, orig, newshape) -> tuple:
    def fail(why):
        return ValueError(f"npx.reshape: cannot reshape {orig} to {newshape!r}: {why} "
                          f"(codes: {_CODES})")

    out: list[int] = []
    infer_at = None
    i = j = 0
    while j < len(spec):
        v = spec[j]
        if v < -6:
            raise fail(f"{v} is not a valid size or code")
        if v >= 0:
            out.append(v)
            i += 1
        elif v == -1:
            if infer_at is not None:
                raise fail("only one -1 may be given")
            infer_at = len(out)
            out.append(-1)
            i += 1
        elif v == -2:
            if i >= len(src):
                raise fail("-2 has no input axis left to copy")
            out.append(src[i])
            i += 1
        elif v == -3:
            if i >= len(src) or src[i] != 1:
                raise fail("-3 drops an input axis of size 1 only, got "
                           f"{src[i] if i < len(src) else 'none'}")
            i += 1
        elif v == -4:
            out.extend(src[i:])
            i = len(src)
        elif v == -5:
            if i + 1 >= len(src):
                raise fail("-5 needs two input axes to merge")
            out.append(src[i] * src[i + 1])
            i += 2
        else:  # -6
            if j + 2 >= len(spec) or i >= len(src):
                raise fail("-6 needs an input axis and two sizes after it")
            d0, a, b = src[i], spec[j + 1], spec[j + 2]
            if a == -1 and b == -1:
                raise fail("the two sizes after -6 cannot both be -1")
            if a < -1 or b < -1:
                raise fail("the sizes after -6 must be non-negative or -1")
            if a == -1:
                a = d0 // b if b else 0
            if b == -1:
                b = d0 // a if a else 0
            if a * b != d0:
                raise fail(f"-6 cannot split {d0} into {a} x {b}")
            out.extend((a, b))
            i += 1
            j += 2
        j += 1
    total = math.prod(src)
    if infer_at is not None:
        known = math.prod(d for k, d in enumerate(out) if k != infer_at)
        if known == 0 or total % known:
            raise fail(f"-1 cannot be inferred ({total} elements, {known} in the other axes)")
        out[infer_at] = total // known
    if math.prod(out) != total:
        raise fail(f"{total} elements do not fit shape {tuple(out)}")
    return tuple(out)


def reshape(a, newshape, reverse: bool = False, order: str = "C"):
    """Reshape ``a`` with MXNet 2.0's special codes (see :func:`npx_shape`).

    Args:
        a: the array.
        newshape: an int or a tuple of sizes and codes -1 ... -6.
        reverse: apply the codes from the right.
        order: only ``'C'``.

    Returns:
        The reshaped array (differentiable).

    Example:
        >>> from core import np, npx
        >>> npx.reshape(np.ones((2, 3, 8)), (-2, -2, 2, -1)).shape
        (2, 3, 2, 4)
        >>> npx.reshape(np.ones((8, 1, 1, 1, 3)), (-2, -3, -3, -3, -2)).shape
        (8, 3)
    """
    if order != "C":
        raise ValueError(f"npx.reshape: only order='C' is supported, got {order!r}")
    shape = npx_shape(a.shape, newshape, reverse)
    return _ops.F.reshape(a, newshape=shape, mx_codes=False)
