"""Indexing: ``x[key]`` (``_getitem``), ``x[key] = v`` under autograd (``_index_update``), the
scatter-add that is their adjoint (``_scatter_add``), and MXNet's ``slice``, ``slice_axis``
and ``slice_like``.

A key is a NumPy index (ints, slices, None, Ellipsis, integer and boolean arrays) in which
NDArrays were already replaced by raw arrays (``NDArray.__getitem__`` does this). Its
adjoint adds into zeros with ``xp.add.at``, so repeated advanced indices accumulate.
"""
from __future__ import annotations

import numpy

from ..dtypes import ML_FLOATS, is_float
from .broadcast import sum_to
from .registry import Aval, F, defop
from .shape import axis_of

_ADVANCED = ("arr", "bool", "bool0")


# ------------------------------------------------------------------ what a key selects
def _classify(name, k):
    """(kind, number of input axes read) of one index."""
    if k is None:
        return "new", 0
    if k is Ellipsis:
        return "ell", 0
    if isinstance(k, slice):
        return "slice", 1
    if isinstance(k, (bool, numpy.bool_)):
        return "bool0", 0
    if isinstance(k, (int, numpy.integer)):
        return "int", 1
    if hasattr(k, "shape") and hasattr(k, "dtype"):
        kind = numpy.dtype(k.dtype).kind
        if kind == "b":
            return ("bool", len(k.shape)) if len(k.shape) else ("bool0", 0)
        if kind in "iu":
            return "arr", 1
        raise IndexError(f"{name}: index arrays must be integer or boolean, got "
                         f"{numpy.dtype(k.dtype).name} (shape {tuple(k.shape)}); cast with "
                         ".astype('int64')")
    raise IndexError(f"{name}: only integers, slices, None, Ellipsis and integer or boolean "
                     f"arrays are valid indices, got {type(k).__name__} {k!r}")


def _listed(k):
    if isinstance(k, list):
        a = numpy.asarray(k)
        return a.astype(numpy.intp) if a.size == 0 else a
    return k


def walk(name, shape, key):
    """[(index, kind, first input axis it reads)] with the ellipsis expanded."""
    key = tuple(_listed(k) for k in key) if isinstance(key, tuple) else (_listed(key),)
    items = [(k,) + _classify(name, k) for k in key]
    used = sum(c for _, _, c in items)
    if used > len(shape):
        raise IndexError(f"{name}: too many indices for an array of shape {tuple(shape)}: "
                         f"{used} axes were indexed")
    ells = [i for i, it in enumerate(items) if it[1] == "ell"]
    if len(ells) > 1:
        raise IndexError(f"{name}: an index can only have a single ellipsis ('...')")
    fill = [(slice(None), "slice", 1)] * (len(shape) - used)
    at = ells[0] if ells else len(items)
    items[at:at + len(ells)] = fill
    out, d = [], 0
    for k, kind, c in items:
        out.append((k, kind, d))
        d += c
    return out


def _broadcast_index(name, shapes):
    nd = max(len(s) for s in shapes)
    out = []
    for i in range(nd):
        dims = [s[len(s) - nd + i] for s in shapes if len(s) - nd + i >= 0]
        known = {x for x in dims if x is not None and x != 1}
        if len(known) > 1:
            raise IndexError(f"{name}: shape mismatch: index arrays of shapes "
                             f"{', '.join(str(s) for s in shapes)} cannot be broadcast together")
        out.append(known.pop() if known else None if None in dims else 1)
    return tuple(out)


def index_shape(name, shape, key) -> tuple:
    """The shape of ``x[key]`` for ``x`` of ``shape`` (None where a boolean mask decides)."""
    items = walk(name, shape, key)
    adv = any(kind in _ADVANCED for _, kind, _ in items)
    out, adv_shapes, adv_pos, insert_at = [], [], [], None
    for pos, (k, kind, d) in enumerate(items):
        if kind == "new":
            out.append(1)
        elif kind == "slice":
            out.append(len(range(*k.indices(shape[d]))))
        elif kind == "int":
            if not -shape[d] <= k < shape[d]:
                raise IndexError(f"{name}: index {k} is out of bounds for axis {d} with size "
                                 f"{shape[d]} (array shape {tuple(shape)})")
            if adv:
                adv_shapes.append(())
        elif kind == "arr":
            adv_shapes.append(tuple(k.shape))
        elif kind == "bool":
            if tuple(k.shape) != tuple(shape[d:d + len(k.shape)]):
                raise IndexError(f"{name}: a boolean index of shape {tuple(k.shape)} does not "
                                 f"match axes {d}.. of an array of shape {tuple(shape)}")
            adv_shapes.append((None,))
        elif kind == "bool0":
            known = isinstance(k, (bool, numpy.bool_))
            adv_shapes.append((int(bool(k)) if known else None,))
        if kind in _ADVANCED or (adv and kind == "int"):
            adv_pos.append(pos)
            if insert_at is None:
                insert_at = len(out)
    if not adv_pos:
        return tuple(out)
    b = _broadcast_index(name, adv_shapes)
    if adv_pos[-1] - adv_pos[0] == len(adv_pos) - 1:
        return tuple(out[:insert_at]) + b + tuple(out[insert_at:])
    return b + tuple(out)


def _assignable(vshape, tshape) -> bool:
    v = list(vshape)
    while len(v) > len(tshape) and v[0] == 1:
        v.pop(0)
    if len(v) > len(tshape):
        return False
    return all(t is None or a == 1 or a == t for a, t in zip(reversed(v), reversed(tshape)))


# ------------------------------------------------------------------ raw keys in forwards
def raw_key(xp, key):
    """``key`` with lists, NDArrays and other devices' arrays made arrays of ``xp``."""
    if isinstance(key, tuple):
        return tuple(_raw(xp, k) for k in key)
    return _raw(xp, key)


def _raw(xp, k):
    if k is None or isinstance(k, (int, slice, numpy.integer, numpy.bool_)) or k is Ellipsis:
        return k
    d = getattr(k, "_data", None)  # an NDArray
    if d is not None:
        k = d
    if isinstance(k, list):
        k = numpy.asarray(k)
        if k.size == 0:
            k = k.astype(numpy.intp)
    if not isinstance(k, xp.ndarray):
        k = xp.asarray(k)
    return k


def check_bounds(shape, key):
    """IndexError for integer index arrays out of range (CuPy would wrap them silently).

    Raised inside forwards, where the dispatcher adds the operator's name.
    """
    for k, kind, d in walk("indexing", shape, key):
        if kind == "arr" and k.size:
            n = shape[d]
            lo, hi = int(k.min()), int(k.max())
            if lo < -n or hi >= n:
                bad = lo if lo < -n else hi
                raise IndexError(f"index {bad} is out of bounds for axis {d} with size {n} "
                                 f"(array shape {tuple(shape)})")


def has_array(key) -> bool:
    return any(hasattr(k, "shape") for k in (key if isinstance(key, tuple) else (key,)))


def scatter_zeros(xp, shape, key, value):
    """Zeros of ``shape`` (``value``'s dtype) with ``value`` added at ``key``.

    Repeated indices of a bfloat16 or float8 ``value`` accumulate in float32 (in the
    narrow dtype, many small gradients added into one row would be lost)."""
    dt = value.dtype
    wide = dt in ML_FLOATS and has_array(key)
    out = xp.zeros(tuple(shape), numpy.float32 if wide else dt)
    add_at(xp, out, key, value)
    return out.astype(dt) if wide else out


def add_at(xp, out, key, value):
    """``out[key] += value`` where repeated indices accumulate."""
    if not has_array(key):
        view = out[key]
        if getattr(value, "ndim", 0) > view.ndim:  # drop leading axes of size 1
            value = value.reshape(value.shape[value.ndim - view.ndim:])
        if isinstance(view, xp.ndarray):
            view += value
        else:  # NumPy returns a copied scalar, not a view, for a full integer key
            out[key] += value
        return
    at = getattr(xp.add, "at", None)
    if at is not None:
        at(out, key, value)
    else:  # CuPy before v13 has no ufunc.at
        import cupyx

        cupyx.scatter_add(out, key, value)


def to_value_shape(g, shape, dtype):
    """A gradient over the selection, summed to a (broadcast) value's shape and dtype."""
    core = tuple(shape)
    while len(core) > g.ndim and core[0] == 1:
        core = core[1:]
    g = sum_to(g, core, dtype)
    return g if core == tuple(shape) else F.reshape(g, newshape=tuple(shape), mx_codes=False)


# ------------------------------------------------------------------ x[key]
def _getitem_vjp(c, g):
    shape, dtype = c.node.in_meta[0]
    if not (is_float(dtype) or numpy.dtype(dtype).kind in "iu"):  # ints too, as in MXNet
        return (None,)
    return (F._scatter_add(g, key=c.attrs["key"], shape=shape),)


@defop("_getitem", infer=lambda x, key=(): Aval(index_shape("indexing", x.shape, key), x.dtype),
       attrs={"key": ()}, save=False, vjp=_getitem_vjp)
def _getitem(xp, x, key=()):
    """``x[key]`` with NumPy's basic and advanced indexing (a view for basic keys)."""
    if type(key) is int or type(key) is slice:
        return x[key]
    key = raw_key(xp, key)
    if has_array(key):
        check_bounds(x.shape, key)
    return x[key]


def _update_infer(x, value, key=()):
    target = index_shape("indexing", x.shape, key)
    vshape = value.shape if isinstance(value, Aval) else numpy.shape(value)
    if not _assignable(vshape, target):
        raise ValueError(f"__setitem__: cannot assign a value of shape {tuple(vshape)} to "
                         f"the selection of shape {target} of an array of shape {x.shape} "
                         f"(key {key!r}); the value must broadcast to the selection")
    return Aval(x.shape, x.dtype)


def _update_vjp(c, g):
    key = c.attrs["key"]
    (_, xdt), vm = c.node.in_meta
    gx = F._index_update(g, 0, key=key) if is_float(xdt) else None
    gv = None
    if vm is not None and is_float(vm[1]):
        gv = to_value_shape(F._getitem(g, key=key), vm[0], vm[1])
    return gx, gv


@defop("_index_update", infer=_update_infer, inputs=("x", "value"), attrs={"key": ()},
       save=False, vjp=_update_vjp)
def _index_update(xp, x, value, key=()):
    """A copy of ``x`` with ``x[key] = value`` (the recorded form of ``__setitem__``)."""
    key = raw_key(xp, key)
    if has_array(key):
        check_bounds(x.shape, key)
    out = x.copy()
    out[key] = value
    return out


def _scatter_infer(value, key=(), shape=()):
    shape = tuple(shape)
    target = index_shape("_scatter_add", shape, key)
    vshape = value.shape if isinstance(value, Aval) else ()
    if not _assignable(vshape, target):
        raise ValueError(f"_scatter_add: a value of shape {vshape} does not fit the selection "
                         f"of shape {target} of an array of shape {shape} (key {key!r})")
    return Aval(shape, value.dtype)


@defop("_scatter_add", infer=_scatter_infer, inputs=("value",), attrs={"key": (), "shape": ()},
       save=False, vjp=lambda c, g: (to_value_shape(F._getitem(g, key=c.attrs["key"]),
                                                    *c.node.in_meta[0]),))
def _scatter_add(xp, value, key=(), shape=()):
    """Zeros of ``shape`` with ``value`` added at ``key`` (repeated indices accumulate)."""
    key = raw_key(xp, key)
    if has_array(key):
        check_bounds(tuple(shape), key)
    return scatter_zeros(xp, shape, key, value)


# ------------------------------------------------------------------ MXNet's slices
def _slice_vjp(key_of):
    def vjp(c, g):
        shape, dtype = c.node.in_meta[0]
        gx = None
        if is_float(dtype):
            gx = F._scatter_add(g, key=key_of(shape, **c.attrs), shape=shape)
        return (gx,) + (None,) * (len(c.node.in_meta) - 1)

    return vjp


def _slice_key(shape, begin=(), end=(), step=()):
    begin, end = tuple(begin), tuple(end)
    step = tuple(step) if step else (None,) * len(begin)
    if not len(begin) == len(end) == len(step):
        raise ValueError(f"slice: begin {begin}, end {end} and step {step} must have the same "
                         f"length (input shape {tuple(shape)})")
    if len(begin) > len(shape):
        raise ValueError(f"slice: {len(begin)} axes sliced but the input has shape "
                         f"{tuple(shape)}")
    if any(s == 0 for s in step):
        raise ValueError(f"slice: step cannot be 0, got {step}")
    return tuple(slice(b, e, s) for b, e, s in zip(begin, end, step))


@defop("slice", infer=lambda x, **a: Aval(index_shape("slice", x.shape, _slice_key(
    x.shape, **a)), x.dtype), attrs={"begin": (), "end": (), "step": ()}, nd=("slice", "crop"),
    save=False, vjp=_slice_vjp(_slice_key))
def _slice(xp, x, begin=(), end=(), step=()):
    """``x[b0:e0:s0, b1:e1:s1, ...]``; None entries mean the default (MXNet's slice)."""
    return x[_slice_key(x.shape, begin, end, step)]


def _slice_axis_key(shape, axis=0, begin=0, end=None):
    ax = axis_of("slice_axis", axis, shape)
    return (slice(None),) * ax + (slice(begin, end),)


@defop("slice_axis", infer=lambda x, **a: Aval(index_shape("slice_axis", x.shape,
                                                           _slice_axis_key(x.shape, **a)),
                                               x.dtype),
       attrs={"axis": 0, "begin": 0, "end": None}, nd=("slice_axis",), save=False,
       vjp=_slice_vjp(_slice_axis_key))
def _slice_axis(xp, x, axis=0, begin=0, end=None):
    """``x[..., begin:end, ...]`` along ``axis`` (``end`` None: to the end)."""
    return x[_slice_axis_key(x.shape, axis, begin, end)]


def _like_key(shape, like_shape, axes=()):
    if axes is None or (isinstance(axes, (tuple, list)) and len(axes) == 0):
        if len(like_shape) != len(shape):
            raise ValueError(f"slice_like: with axes=() both inputs need the same number of "
                             f"dimensions, got shapes {tuple(shape)} and {tuple(like_shape)}")
        axes = range(len(shape))
    else:
        axes = [axis_of("slice_like", a, shape) for a in (
            axes if isinstance(axes, (tuple, list)) else (axes,))]
    key = [slice(None)] * len(shape)
    for a in axes:
        if a >= len(like_shape) or like_shape[a] > shape[a]:
            raise ValueError(f"slice_like: cannot slice axis {a} of an array of shape "
                             f"{tuple(shape)} like an array of shape {tuple(like_shape)}")
        key[a] = slice(0, like_shape[a])
    return tuple(key)


def _slice_like_infer(x, like, axes=()):
    key = _like_key(x.shape, like.shape, axes)
    return Aval(index_shape("slice_like", x.shape, key), x.dtype)


def _slice_like_vjp(c, g):
    (shape, dtype), (lshape, _) = c.node.in_meta
    if not is_float(dtype):
        return None, None
    return F._scatter_add(g, key=_like_key(shape, lshape, c.attrs["axes"]), shape=shape), None


@defop("slice_like", infer=_slice_like_infer, inputs=("data", "shape_like"),
       attrs={"axes": ()}, nd=("slice_like",), save=False, vjp=_slice_like_vjp)
def _slice_like(xp, x, like, axes=()):
    """``x`` sliced from 0 to the sizes of ``shape_like`` along ``axes`` (all when empty)."""
    return x[_like_key(x.shape, like.shape, axes)]

