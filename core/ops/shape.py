"""Shape operators: reshape, transposes, squeeze/expand, tile/repeat, flip/roll/pad,
diag/tril/triu (joins and splits are in ``join.py``).

Every VJP here is a linear map written with these same operators (and ``_getitem`` /
``_scatter_add`` from ``index.py``), so gradients of gradients need nothing more.
"""
from __future__ import annotations

import math
import operator

import numpy

from .broadcast import sum_to
from .registry import Aval, F, defop


# ------------------------------------------------------------------ axis helpers
def axis_of(name, axis, shape, ndim=None, what="axis") -> int:
    """``axis`` made non-negative, or ValueError naming the operator, the axis and the shape."""
    n = len(shape) if ndim is None else ndim
    if isinstance(axis, bool) or not isinstance(axis, (int, numpy.integer)):
        raise TypeError(f"{name}: {what} must be an int, got {axis!r} (input shape {shape})")
    if not -n <= axis < n:
        raise ValueError(f"{name}: {what}={axis} is out of range for an array of shape "
                         f"{tuple(shape)} (valid: {-n}..{n - 1})")
    return int(axis) % n


def axes_of(name, axis, shape, ndim=None, what="axis") -> tuple:
    """``axis`` (None: all, int, or a sequence) as a tuple of non-negative axes, in order."""
    n = len(shape) if ndim is None else ndim
    if axis is None:
        return tuple(range(n))
    if isinstance(axis, (list, tuple)):
        out = tuple(axis_of(name, a, shape, ndim, what) for a in axis)
        if len(set(out)) != len(out):
            raise ValueError(f"{name}: repeated {what} in {tuple(axis)} (input shape {shape})")
        return out
    return (axis_of(name, axis, shape, ndim, what),)


def int_tuple(name, what, v) -> tuple:
    try:
        if not hasattr(v, "__iter__"):
            return (operator.index(v),)
        return tuple(operator.index(s) for s in v)
    except TypeError:
        raise TypeError(f"{name}: {what} must be an int or a sequence of ints, got {v!r}") \
            from None


def _same(x, **_):
    return Aval(x.shape, x.dtype)


def _back(c, g):
    """The gradient of a pure reshape: ``g`` reshaped to the input's shape."""
    return (F.reshape(g, newshape=c.in_shapes[0], mx_codes=False),)


# ------------------------------------------------------------------ reshape
def _mx_target(shape, spec, reverse):
    """MXNet's reshape codes: 0 copy, -1 infer, -2 copy the rest, -3 merge two, -4 split one."""
    src = list(shape)
    groups, i = [], 0
    while i < len(spec):
        if spec[i] == -4:
            if i + 2 >= len(spec):
                raise ValueError("code -4 must be followed by the two sizes of the split")
            groups.append(tuple(spec[i:i + 3]))
            i += 3
        else:
            groups.append((spec[i],))
            i += 1
    if reverse:  # read both shapes from the right; a -4 group keeps its two sizes in order
        src.reverse()
        groups = [(-4, g[2], g[1]) if len(g) == 3 else g for g in reversed(groups)]
    out, s, inf = [], 0, -1

    def take(k):
        if s + k > len(src):
            raise ValueError(f"codes {tuple(spec)} read more dimensions than the input has")
        return src[s:s + k]

    for grp in groups:
        v = grp[0]
        if v > 0:
            out.append(v)
            s += 1
        elif v == 0:
            out.append(take(1)[0])
            s += 1
        elif v == -1:
            if inf >= 0:
                raise ValueError("only one dimension can be -1")
            inf = len(out)
            out.append(1)
            s += 1
        elif v == -2:
            out.extend(src[s:])
            s = len(src)
        elif v == -3:
            a, b = take(2)
            out.append(a * b)
            s += 2
        elif v == -4:
            (d0,), d1, d2 = take(1), grp[1], grp[2]
            if d1 == -1 and d2 == -1 or d1 == 0 or d2 == 0 or min(d1, d2) < -1:
                raise ValueError(f"code -4 needs two positive sizes (one may be -1), "
                                 f"got {d1}, {d2}")
            d1 = d0 // d2 if d1 == -1 else d1
            d2 = d0 // d1 if d2 == -1 else d2
            if d1 * d2 != d0:
                raise ValueError(f"code -4 cannot split a dimension of size {d0} into "
                                 f"{grp[1]} x {grp[2]}")
            out += [d1, d2]
            s += 1
        else:
            raise ValueError(f"unknown code {v}")
    if reverse:
        out.reverse()
        inf = len(out) - 1 - inf if inf >= 0 else -1
    return out, inf


def _reshape_target(shape, newshape=None, reverse=False, mx_codes=True, shape_=None):
    name = "reshape"
    spec = newshape if shape_ is None else shape_
    if spec is None:
        raise TypeError(f"{name}: a new shape is required (input shape {tuple(shape)})")
    spec = list(int_tuple(name, "newshape", spec))
    size = math.prod(shape)
    request = f"{tuple(spec)}{', reverse=True' if reverse else ''}"
    try:
        if mx_codes:
            out, inf = _mx_target(shape, spec, reverse)
        else:
            if any(v < -1 for v in spec) or spec.count(-1) > 1:
                raise ValueError("dimensions must be >= 0, with at most one -1")
            out, inf = spec, (spec.index(-1) if -1 in spec else -1)
    except ValueError as e:
        raise ValueError(f"{name}: cannot reshape an array of shape {tuple(shape)} with "
                         f"{request}: {e}") from None
    if inf >= 0:
        known = math.prod(out[:inf] + out[inf + 1:])
        if known == 0 or size % known:
            raise ValueError(f"{name}: cannot reshape an array of shape {tuple(shape)} (size "
                             f"{size}) into {request}: the -1 dimension cannot be inferred")
        out[inf] = size // known
    if math.prod(out) != size:
        raise ValueError(f"{name}: cannot reshape an array of shape {tuple(shape)} (size "
                         f"{size}) into shape {tuple(out)} (size {math.prod(out)}, requested "
                         f"{request}); the sizes must match")
    return tuple(out)


def _rs(x, newshape=None, reverse=False, mx_codes=True, shape=None, order="C"):
    if order not in ("C", "A", "K"):
        raise ValueError(f"reshape: only order='C' is supported, got {order!r} (input shape "
                         f"{tuple(x.shape)})")
    return _reshape_target(x.shape, newshape, reverse, mx_codes, shape)


@defop("reshape", infer=lambda x, **a: Aval(_rs(x, **a), x.dtype), vjp=_back, save=False,
       attrs={"newshape": None, "reverse": False, "mx_codes": True, "shape": None,
              "order": "C"},
       nd=("reshape", "Reshape"), np=(("reshape", {"mx_codes": False}),))
def _reshape(xp, x, **attrs):
    """Reshape; MXNet's codes 0/-1/-2/-3/-4 and ``reverse`` unless ``mx_codes=False``."""
    return x.reshape(_rs(x, **attrs))


def _like_span(shape, begin, end):
    n = len(shape)
    b = 0 if begin is None else int(begin) % (n + 1) if begin < 0 else int(begin)
    e = n if end is None else int(end) % (n + 1) if end < 0 else int(end)
    return b, e


def _reshape_like_shape(lhs, rhs, lhs_begin=None, lhs_end=None, rhs_begin=None,
                        rhs_end=None):
    ls, rs = tuple(lhs.shape), tuple(rhs.shape)
    lb, le = _like_span(ls, lhs_begin, lhs_end)
    rb, re_ = _like_span(rs, rhs_begin, rhs_end)
    if not (0 <= lb <= le <= len(ls) and 0 <= rb <= re_ <= len(rs)):
        raise ValueError(f"reshape_like: the axis ranges lhs [{lhs_begin}, {lhs_end}) and rhs "
                         f"[{rhs_begin}, {rhs_end}) do not fit lhs {ls} and rhs {rs}")
    shape = ls[:lb] + rs[rb:re_] + ls[le:]
    if math.prod(shape) != math.prod(ls):
        raise ValueError(f"reshape_like: cannot reshape lhs of shape {ls} ({math.prod(ls)} "
                         f"elements) to {shape} ({math.prod(shape)} elements): lhs axes "
                         f"[{lb}, {le}) replaced by rhs {rs} axes [{rb}, {re_})")
    return shape


@defop("reshape_like", infer=lambda x, like, **a: Aval(_reshape_like_shape(x, like, **a),
                                                       x.dtype),
       inputs=("x", "like"), save=False,
       attrs={"lhs_begin": None, "lhs_end": None, "rhs_begin": None, "rhs_end": None},
       nd=("reshape_like",), vjp=lambda c, g: (_back(c, g)[0], None))
def _reshape_like(xp, x, like, **attrs):
    """MXNet's ``reshape_like``: ``x`` reshaped to ``like``'s shape, or its axes
    ``[lhs_begin, lhs_end)`` replaced by ``like``'s axes ``[rhs_begin, rhs_end)``.

    Example:
        >>> from core import nd
        >>> nd.reshape_like(nd.arange(6), nd.zeros((2, 3))).shape
        (2, 3)
    """
    return x.reshape(_reshape_like_shape(x, like, **attrs))


# ------------------------------------------------------------------ axis permutations
def _perm(name, shape, axes):
    n = len(shape)
    if axes is None or (isinstance(axes, (tuple, list)) and len(axes) == 0):
        return tuple(range(n - 1, -1, -1))
    axes = axes_of(name, int_tuple(name, "axes", axes), shape, what="axes")
    if len(axes) != n:
        raise ValueError(f"{name}: axes {axes} are not a permutation of the {n} axes of an "
                         f"array of shape {tuple(shape)}")
    return axes


def _transpose_vjp(c, g):
    p = _perm("transpose", c.in_shapes[0], c.attrs["axes"])
    return (F.transpose(g, axes=tuple(numpy.argsort(p).tolist())),)


@defop("transpose", infer=lambda x, axes=None: Aval(
    tuple(x.shape[a] for a in _perm("transpose", x.shape, axes)), x.dtype),
    attrs={"axes": None}, nd=("transpose",), np=("transpose",), save=False,
    vjp=_transpose_vjp)
def _transpose(xp, x, axes=None):
    """Permute the axes (reverse them when ``axes`` is None or empty)."""
    return xp.transpose(x, _perm("transpose", x.shape, axes))


def _swap(shape, axis1=0, axis2=0, dim1=None, dim2=None):
    a = axis_of("swapaxes", axis1 if dim1 is None else dim1, shape, what="axis1")
    b = axis_of("swapaxes", axis2 if dim2 is None else dim2, shape, what="axis2")
    p = list(range(len(shape)))
    p[a], p[b] = b, a
    return tuple(p)


@defop("swapaxes", infer=lambda x, **a: Aval(tuple(x.shape[i] for i in _swap(x.shape, **a)),
                                             x.dtype),
       attrs={"axis1": 0, "axis2": 0, "dim1": None, "dim2": None},
       nd=("swapaxes", "SwapAxis"), np=("swapaxes",), save=False,
       vjp=lambda c, g: (F.transpose(g, axes=_swap(c.in_shapes[0], **c.attrs)),))
def _swapaxes(xp, x, **attrs):
    """Swap two axes (MXNet spells them ``dim1``/``dim2``)."""
    return xp.transpose(x, _swap(x.shape, **attrs))


def _axes_arg(v):
    # MXNet's moveaxis takes an int or any sequence of ints (a tuple, a list, a range).
    return tuple(v) if isinstance(v, (list, tuple, range)) else (v,)


def _move(shape, source=0, destination=0):
    src = axes_of("moveaxis", _axes_arg(source), shape, what="source")
    dst = axes_of("moveaxis", _axes_arg(destination), shape, what="destination")
    if len(src) != len(dst):
        raise ValueError(f"moveaxis: source {source} and destination {destination} must have "
                         f"the same number of axes (input shape {tuple(shape)})")
    order = [a for a in range(len(shape)) if a not in src]
    for d, s in sorted(zip(dst, src)):
        order.insert(d, s)
    return tuple(order)


@defop("moveaxis", infer=lambda x, **a: Aval(tuple(x.shape[i] for i in _move(x.shape, **a)),
                                             x.dtype),
       attrs={"source": 0, "destination": 0}, nd=("moveaxis",), np=("moveaxis",), save=False,
       vjp=lambda c, g: (F.transpose(g, axes=tuple(numpy.argsort(
           _move(c.in_shapes[0], **c.attrs)).tolist())),))
def _moveaxis(xp, x, source=0, destination=0):
    """Move axes to new positions; the other axes keep their order."""
    return xp.transpose(x, _move(x.shape, source, destination))


# ------------------------------------------------------------------ adding and removing axes
def _expand(shape, axis):
    ax = axis if isinstance(axis, (list, tuple)) else (axis,)
    n = len(shape) + len(ax)
    new = set(axes_of("expand_dims", tuple(ax), shape, ndim=n))
    it = iter(shape)
    return tuple(1 if i in new else next(it) for i in range(n))


@defop("expand_dims", infer=lambda x, axis=0: Aval(_expand(x.shape, axis), x.dtype),
       attrs={"axis": 0}, nd=("expand_dims",), np=("expand_dims",), save=False, vjp=_back)
def _expand_dims(xp, x, axis=0):
    """Insert axes of size 1 at ``axis`` (an int, or a tuple of positions in the result)."""
    return x.reshape(_expand(x.shape, axis))


def _squeeze(shape, axis):
    if axis is None:
        return tuple(s for s in shape if s != 1)
    axes = axes_of("squeeze", axis, shape)
    bad = [a for a in axes if shape[a] != 1]
    if bad:
        raise ValueError(f"squeeze: cannot remove axis {bad[0]} of size {shape[bad[0]]} "
                         f"(input shape {tuple(shape)}); only axes of size 1 can be squeezed")
    return tuple(s for i, s in enumerate(shape) if i not in axes)


@defop("squeeze", infer=lambda x, axis=None: Aval(_squeeze(x.shape, axis), x.dtype),
       attrs={"axis": None}, nd=("squeeze",), np=("squeeze",), save=False, vjp=_back)
def _squeeze_fwd(xp, x, axis=None):
    """Remove axes of size 1 (all of them, or those in ``axis``)."""
    return x.reshape(_squeeze(x.shape, axis))


def _flat2(shape):
    return (shape[0] if shape else 1, math.prod(shape[1:]))


@defop("flatten", infer=lambda x: Aval(_flat2(x.shape), x.dtype), nd=("flatten", "Flatten"),
       save=False, vjp=_back)
def _flatten(xp, x):
    """Collapse all axes but the first: (d1, d2, ..., dk) -> (d1, d2*...*dk) (MXNet)."""
    return x.reshape(_flat2(x.shape))


def _ravel_order(order):
    if order not in ("C", "F", "A", "K"):
        raise ValueError(f"ravel: order must be 'C', 'F', 'A' or 'K', got {order!r}")
    return "F" if order == "F" else "C"


def _ravel_vjp(c, g):
    shape = c.in_shapes[0]
    if _ravel_order(c.attrs["order"]) == "C":
        return _back(c, g)
    return (F.transpose(F.reshape(g, newshape=shape[::-1], mx_codes=False)),)


@defop("ravel", infer=lambda x, order="C": (_ravel_order(order), Aval((math.prod(x.shape),),
                                                                      x.dtype))[1],
       attrs={"order": "C"}, np=("ravel",), save=False, vjp=_ravel_vjp)
def _ravel(xp, x, order="C"):
    """The elements as a 1-D array (in C order, or Fortran order with ``order='F'``)."""
    if _ravel_order(order) == "F":
        return xp.transpose(x).reshape(-1)
    return x.reshape(-1)


# ------------------------------------------------------------------ tile, repeat
def _tile_shapes(shape, reps):
    reps = int_tuple("tile", "reps", reps)
    if any(r < 0 for r in reps):
        raise ValueError(f"tile: reps must be non-negative, got {reps} (input shape {shape})")
    n = max(len(shape), len(reps))
    s = (1,) * (n - len(shape)) + tuple(shape)
    r = (1,) * (n - len(reps)) + reps
    return s, r


def _tile_vjp(c, g):
    s, r = _tile_shapes(c.in_shapes[0], c.attrs["reps"])
    inter = sum(((ri, si) for ri, si in zip(r, s)), ())
    g = F.reshape(g, newshape=inter, mx_codes=False)
    g = sum_to(g, sum(((1, si) for si in s), ()))
    return (F.reshape(g, newshape=c.in_shapes[0], mx_codes=False),)


@defop("tile", infer=lambda x, reps=1: Aval(tuple(a * b for a, b in zip(
    *_tile_shapes(x.shape, reps))), x.dtype),
    attrs={"reps": 1}, nd=("tile",), np=("tile",), save=False, vjp=_tile_vjp)
def _tile(xp, x, reps=1):
    """Repeat the whole array ``reps`` times along each axis."""
    return xp.tile(x, _tile_shapes(x.shape, reps)[1])


def _repeat_info(shape, repeats, axis):
    if axis is None:
        shape, axis = (math.prod(shape),), 0
    ax = axis_of("repeat", axis, shape)
    n = shape[ax]
    if isinstance(repeats, (int, numpy.integer)):
        reps = int(repeats)
        total = n * reps
    else:
        reps = int_tuple("repeat", "repeats", repeats)
        if len(reps) == 1:
            reps = reps[0]
            total = n * reps
        elif len(reps) != n:
            raise ValueError(f"repeat: {len(reps)} repeats for axis {ax} of size {n} (input "
                             f"shape {tuple(shape)}); give one count, or one per element")
        else:
            total = sum(reps)
    if min(int_tuple("repeat", "repeats", reps), default=0) < 0:
        raise ValueError(f"repeat: repeats must be non-negative, got {repeats}")
    return shape, ax, reps, shape[:ax] + (total,) + shape[ax + 1:]


def _repeat_vjp(c, g):
    in_shape = c.in_shapes[0]
    shape, ax, reps, _ = _repeat_info(in_shape, c.attrs["repeats"], c.attrs["axis"])
    if isinstance(reps, int):
        g = F.reshape(g, newshape=shape[:ax + 1] + (reps,) + shape[ax + 1:], mx_codes=False)
        g = sum_to(g, shape[:ax + 1] + (1,) + shape[ax + 1:])
    else:
        idx = numpy.repeat(numpy.arange(shape[ax]), reps)
        g = F._scatter_add(g, key=(slice(None),) * ax + (idx,), shape=shape)
    return (F.reshape(g, newshape=in_shape, mx_codes=False),)


@defop("repeat", infer=lambda x, repeats=1, axis=None: Aval(
    _repeat_info(x.shape, repeats, axis)[3], x.dtype),
    attrs={"repeats": 1, "axis": None}, nd=("repeat",), np=("repeat",), save=False,
    vjp=_repeat_vjp)
def _repeat(xp, x, repeats=1, axis=None):
    """Repeat each element ``repeats`` times along ``axis`` (of the flattened array if None)."""
    shape, ax, reps, _ = _repeat_info(x.shape, repeats, axis)
    return xp.repeat(x.reshape(shape), reps if isinstance(reps, int) else list(reps), ax)


# ------------------------------------------------------------------ flip, roll, pad
@defop("flip", infer=lambda x, axis=None: (axes_of("flip", axis, x.shape), _same(x))[1],
       attrs={"axis": None}, nd=("flip", "reverse"), np=("flip",), save=False,
       vjp=lambda c, g: (F.flip(g, axis=c.attrs["axis"]),))
def _flip(xp, x, axis=None):
    """Reverse the order of elements along ``axis`` (all axes when None)."""
    axes = axes_of("flip", axis, x.shape)
    return x[tuple(slice(None, None, -1) if i in axes else slice(None)
                   for i in range(x.ndim))]


def _roll_check(x, shift=0, axis=None):
    shifts = int_tuple("roll", "shift", shift)
    if axis is not None:
        axes = axes_of("roll", axis, x.shape) if isinstance(axis, (list, tuple)) \
            else (axis_of("roll", axis, x.shape),)
        if len(shifts) != len(axes) and len(shifts) != 1 and len(axes) != 1:
            raise ValueError(f"roll: {len(shifts)} shifts for {len(axes)} axes")
    elif len(shifts) != 1:
        raise ValueError(f"roll: a tuple of shifts needs a tuple of axes, got shift={shift}")
    return _same(x)


def _neg(shift):
    return -int(shift) if isinstance(shift, (int, numpy.integer)) else tuple(-int(s)
                                                                             for s in shift)


@defop("roll", infer=_roll_check, attrs={"shift": 0, "axis": None}, np=("roll",), save=False,
       vjp=lambda c, g: (F.roll(g, shift=_neg(c.attrs["shift"]), axis=c.attrs["axis"]),))
def _roll(xp, x, shift=0, axis=None):
    """Shift elements cyclically along ``axis`` (of the flattened array when None)."""
    return xp.roll(x, shift, axis)


_PAD_MODES = ("constant", "edge", "reflect", "symmetric", "wrap")


def _pad_args(shape, pad_width=None, mode="constant", constant_values=0, constant_value=None):
    if isinstance(pad_width, str):  # MXNet's positional order: pad(data, mode, pad_width)
        pad_width, mode = mode, pad_width
    if mode not in _PAD_MODES:
        raise ValueError(f"pad: mode must be one of {_PAD_MODES}, got {mode!r}")
    n = len(shape)
    if pad_width is None:
        raise TypeError(f"pad: pad_width is required (input shape {tuple(shape)})")
    pw = numpy.asarray(pad_width, dtype=object)
    if pw.ndim == 1 and len(pw) == 2 * n and n > 1:  # MXNet: flat (before, after) per axis
        pw = pw.reshape(n, 2)
    try:
        pairs = numpy.broadcast_to(pw, (n, 2)).tolist() if n else []
        pairs = [(int(a), int(b)) for a, b in pairs]
    except (ValueError, TypeError):
        raise ValueError(f"pad: pad_width {pad_width!r} does not fit an array of shape "
                         f"{tuple(shape)}; give (before, after) per axis") from None
    if any(a < 0 or b < 0 for a, b in pairs):
        raise ValueError(f"pad: pad widths must be non-negative, got {pad_width!r}")
    if mode != "constant" and any(s == 0 and (a or b) for s, (a, b) in zip(shape, pairs)):
        raise ValueError(f"pad: cannot extend an empty axis with mode {mode!r} (input shape "
                         f"{tuple(shape)})")
    cv = constant_values if constant_value is None else constant_value
    return pairs, mode, cv


_PAD_ATTRS = {"pad_width": None, "mode": "constant", "constant_values": 0,
              "constant_value": None}


def _pad_vjp(c, g):
    shape = c.in_shapes[0]
    pairs, mode, _ = _pad_args(shape, **c.attrs)
    if mode == "constant":
        return (F._getitem(g, key=tuple(slice(a, a + s) for s, (a, _) in zip(shape, pairs))),)
    cur = list(g.shape)
    for ax, (s, (a, b)) in enumerate(zip(shape, pairs)):
        if a or b:  # each padded position reads one input position: scatter its gradient back
            idx = numpy.pad(numpy.arange(s), (a, b), mode=mode)
            cur[ax] = s
            g = F._scatter_add(g, key=(slice(None),) * ax + (idx,), shape=tuple(cur))
    return (g,)


@defop("pad", infer=lambda x, **a: Aval(tuple(s + p + q for s, (p, q) in zip(
    x.shape, _pad_args(x.shape, **a)[0])), x.dtype),
    attrs=_PAD_ATTRS, nd=("pad", "Pad"), np=("pad",), save=False, vjp=_pad_vjp)
def _pad(xp, x, **attrs):
    """Pad with a constant, edge values or reflections (NumPy or MXNet ``pad_width``)."""
    pairs, mode, cv = _pad_args(x.shape, **attrs)
    if mode == "constant":
        return xp.pad(x, pairs, mode="constant", constant_values=cv)
    return xp.pad(x, pairs, mode=mode)


# ------------------------------------------------------------------ diagonals, triangles
def _diag_info(shape, k, axis1, axis2):
    if len(shape) == 0:
        raise ValueError("diag: the input must have at least one dimension, got shape ()")
    if len(shape) == 1:
        n = shape[0] + abs(k)
        return None, (n, n)
    a = axis_of("diag", axis1, shape, what="axis1")
    b = axis_of("diag", axis2, shape, what="axis2")
    if a == b:
        raise ValueError(f"diag: axis1 and axis2 must differ, both are {a} (shape {shape})")
    n1, n2 = shape[a], shape[b]
    length = max(0, min(n1, n2 - k) if k >= 0 else min(n1 + k, n2))
    rest = tuple(s for i, s in enumerate(shape) if i not in (a, b))
    return (a, b, length), rest + (length,)


def _diag_vjp(c, g):
    shape = c.in_shapes[0]
    k = c.attrs["k"]
    info, _ = _diag_info(shape, k, c.attrs["axis1"], c.attrs["axis2"])
    if info is None:
        return (F.diag(g, k=k),)
    a, b, length = info
    rows = numpy.arange(length) + max(-k, 0)
    cols = numpy.arange(length) + max(k, 0)
    front = (shape[a], shape[b]) + tuple(s for i, s in enumerate(shape) if i not in (a, b))
    gx = F._scatter_add(F.moveaxis(g, source=-1, destination=0), key=(rows, cols), shape=front)
    return (F.moveaxis(gx, source=(0, 1), destination=(a, b)),)


@defop("diag", infer=lambda x, k=0, axis1=0, axis2=1: Aval(
    _diag_info(x.shape, k, axis1, axis2)[1], x.dtype),
    attrs={"k": 0, "axis1": 0, "axis2": 1}, nd=("diag",), np=("diag",), save=False,
    vjp=_diag_vjp)
def _diag(xp, x, k=0, axis1=0, axis2=1):
    """A 1-D input gives the matrix with it on diagonal ``k``; else extract diagonal ``k``."""
    info, _ = _diag_info(x.shape, k, axis1, axis2)
    if info is None:
        return xp.diag(x, k)
    return xp.diagonal(x, k, info[0], info[1]).copy()


def _tri_infer(name):
    def infer(x, k=0):
        if len(x.shape) == 0:
            raise ValueError(f"{name}: the input must have at least one dimension, got shape ()")
        shape = x.shape if len(x.shape) > 1 else (x.shape[0], x.shape[0])
        return Aval(shape, x.dtype)

    return infer


def _tri(name, doc):
    def forward(xp, x, k=0):
        return getattr(xp, name)(x, k)

    forward.__doc__ = doc
    defop(name, infer=_tri_infer(name), attrs={"k": 0}, np=(name,), save=False, doc=doc,
          vjp=lambda c, g: (sum_to(getattr(F, name)(g, k=c.attrs["k"]), c.in_shapes[0]),))(
        forward)


_tri("tril", "Zero the elements above diagonal ``k`` (of the last two axes).")
_tri("triu", "Zero the elements below diagonal ``k`` (of the last two axes).")
