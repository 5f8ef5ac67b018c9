"""Joining and splitting: ``concatenate``, ``stack``, ``split`` and ``array_split``.

Each is the other's adjoint: the VJP of a join splits the gradient, the VJP of a split
joins the gradients (zeros for outputs that were not used).
"""
from __future__ import annotations

import itertools
import math

import numpy

from ..dtypes import as_dtype, is_float
from .infer import fmt, result_type
from .registry import Aval, F, defop
from .shape import axis_of, int_tuple


# ------------------------------------------------------------------ joining
def _join_axis(axis, dim):
    return axis if dim is None else dim


def _concat_infer(*xs, axis=0, dtype=None, dim=None, num_args=None):
    axis = _join_axis(axis, dim)
    if not xs:
        raise ValueError("concatenate: needs at least one array")
    dt = as_dtype(dtype, "concatenate") if dtype is not None else result_type("concatenate", *xs)
    if axis is None:
        return Aval((sum(math.prod(x.shape) for x in xs),), dt)
    first = xs[0].shape
    if not first:
        raise ValueError(f"concatenate: zero-dimensional arrays cannot be concatenated "
                         f"(inputs: {fmt(xs)})")
    ax = axis_of("concatenate", axis, first)
    for x in xs:
        if len(x.shape) != len(first) or any(
                a != b for i, (a, b) in enumerate(zip(x.shape, first)) if i != ax):
            raise ValueError(f"concatenate: all input shapes must match except along axis "
                             f"{axis} (inputs: {fmt(xs)})")
    out = list(first)
    out[ax] = sum(x.shape[ax] for x in xs)
    return Aval(out, dt)


def _concat_vjp(c, g):
    axis = _join_axis(c.attrs["axis"], c.attrs["dim"])
    shapes = c.in_shapes
    if axis is None:
        g = F.reshape(g, newshape=(-1,), mx_codes=False)
        ax = 0
        sizes = [math.prod(s) for s in shapes]
    else:
        ax = axis % len(shapes[0])
        sizes = [s[ax] for s in shapes]
    cuts = numpy.cumsum(sizes)[:-1].tolist()
    parts = F.split(g, indices_or_sections=tuple(cuts), axis=ax)
    parts = parts if isinstance(parts, tuple) else (parts,)
    out = []
    for p, (s, d) in zip(parts, c.node.in_meta):
        if not is_float(d):
            out.append(None)
            continue
        if axis is None:
            p = F.reshape(p, newshape=s, mx_codes=False)
        out.append(p if p.dtype == d else F.cast(p, dtype=d))
    return tuple(out)


@defop("concatenate", infer=_concat_infer, inputs=("arrays",), variadic=True, save=False,
       attrs={"axis": 0, "dtype": None, "dim": None, "num_args": None},
       nd=(("Concat", {"axis": 1}),), np=("concatenate",), vjp=_concat_vjp)
def _concatenate(xp, *xs, axis=0, dtype=None, dim=None, num_args=None):
    """Join arrays along an existing axis (of the flattened arrays when ``axis`` is None)."""
    aval = _concat_infer(*[Aval(x.shape, x.dtype) for x in xs], axis=axis, dtype=dtype, dim=dim)
    axis = _join_axis(axis, dim)
    if axis is None:
        xs = [x.reshape(-1) for x in xs]
    return xp.concatenate([x.astype(aval.dtype, copy=False) for x in xs],
                          axis=0 if axis is None else axis)


def _stack_infer(*xs, axis=0, dtype=None):
    if not xs:
        raise ValueError("stack: needs at least one array")
    if any(x.shape != xs[0].shape for x in xs):
        raise ValueError(f"stack: all input arrays must have the same shape (inputs: "
                         f"{fmt(xs)})")
    ax = axis_of("stack", axis, xs[0].shape, ndim=len(xs[0].shape) + 1)
    out = list(xs[0].shape)
    out.insert(ax, len(xs))
    return Aval(out, as_dtype(dtype, "stack") if dtype is not None else result_type("stack", *xs))


def _stack_vjp(c, g):
    n = len(c.in_shapes)
    ax = axis_of("stack", c.attrs["axis"], g.shape)
    parts = F.split(g, indices_or_sections=n, axis=ax, squeeze_axis=True)
    parts = parts if isinstance(parts, tuple) else (parts,)
    return tuple(None if not is_float(d) else p if p.dtype == d else F.cast(p, dtype=d)
                 for p, (_, d) in zip(parts, c.node.in_meta))


@defop("stack", infer=_stack_infer, inputs=("arrays",), variadic=True, save=False,
       attrs={"axis": 0, "dtype": None}, np=("stack",), vjp=_stack_vjp)
def _stack(xp, *xs, axis=0, dtype=None):
    """Join arrays of one shape along a new axis."""
    aval = _stack_infer(*[Aval(x.shape, x.dtype) for x in xs], axis=axis, dtype=dtype)
    return xp.stack([x.astype(aval.dtype, copy=False) for x in xs], axis=axis)


# ------------------------------------------------------------------ splitting
def _pieces(name, shape, indices_or_sections, axis, squeeze_axis, num_outputs, strict):
    """(axis, [(start, stop)]) of each piece."""
    ax = axis_of(name, axis, shape)
    n = shape[ax]
    ios = num_outputs if num_outputs is not None else indices_or_sections
    if ios is None:
        raise TypeError(f"{name}: give the number of sections or the split indices "
                        f"(input shape {tuple(shape)})")
    if isinstance(ios, (int, numpy.integer)):
        k = int(ios)
        if k <= 0:
            raise ValueError(f"{name}: the number of sections must be positive, got {k}")
        if strict and n % k:
            raise ValueError(f"{name}: axis {ax} of size {n} cannot be split into {k} equal "
                             f"sections (input shape {tuple(shape)})")
        q, r = divmod(n, k)
        bounds = [i * q + min(i, r) for i in range(k + 1)]
        spans = list(itertools.pairwise(bounds))
    else:
        cuts = [0] + list(int_tuple(name, "indices", ios)) + [n]
        spans = [slice(a, b).indices(n)[:2] for a, b in itertools.pairwise(cuts)]
    if squeeze_axis and any(max(b - a, 0) != 1 for a, b in spans):
        raise ValueError(f"{name}: squeeze_axis=True needs pieces of size 1 along axis {ax} "
                         f"(input shape {tuple(shape)})")
    return ax, spans


def _split_avals(name, strict):
    def infer(x, indices_or_sections=None, axis=1, squeeze_axis=False, num_outputs=None):
        ax, spans = _pieces(name, x.shape, indices_or_sections, axis, squeeze_axis,
                            num_outputs, strict)
        out = []
        for a, b in spans:
            s = list(x.shape)
            if squeeze_axis:
                del s[ax]
            else:
                s[ax] = max(b - a, 0)
            out.append(Aval(s, x.dtype))
        return tuple(out)

    return infer


def _split_fwd(name, strict):
    def forward(xp, x, indices_or_sections=None, axis=1, squeeze_axis=False,
                num_outputs=None):
        ax, spans = _pieces(name, x.shape, indices_or_sections, axis, squeeze_axis,
                            num_outputs, strict)
        pre = (slice(None),) * ax
        if squeeze_axis:
            return tuple(x[pre + (a,)] for a, _ in spans)
        return tuple(x[pre + (slice(a, max(a, b)),)] for a, b in spans)

    return forward


def _split_vjp(c, g):
    gs = g if isinstance(g, tuple) else (g,)
    shape = c.in_shapes[0]
    ax, spans = _pieces(c.node.op.name, shape, strict=False, **c.attrs)
    if c.attrs["squeeze_axis"]:
        return (F.stack(*gs, axis=ax),)
    ends = [0] + [max(a, b) for a, b in spans]
    if all(a == e for (a, _), e in zip(spans, ends)) and ends[-1] == shape[ax]:
        return (F.concatenate(*gs, axis=ax),)
    # indices out of order or past the end: pieces overlap or leave gaps
    pre = (slice(None),) * ax
    gx = None
    for gi, (a, b) in zip(gs, spans):
        part = F._scatter_add(gi, key=pre + (slice(a, max(a, b)),), shape=shape)
        gx = part if gx is None else gx + part
    return (gx,)


_SPLIT_ATTRS = {"indices_or_sections": None, "axis": 1, "squeeze_axis": False,
                "num_outputs": None}
defop("split", infer=_split_avals("split", True), attrs=_SPLIT_ATTRS, save=False,
      vjp=_split_vjp, nd=("split", "SliceChannel"), np=(("split", {"axis": 0}),),
      doc="Split into equal sections or at indices along ``axis`` (a tuple of arrays).")(
    _split_fwd("split", True))
defop("array_split", infer=_split_avals("array_split", False), attrs=_SPLIT_ATTRS, save=False,
      vjp=_split_vjp, np=(("array_split", {"axis": 0}),),
      doc="Split into sections that may differ in size by one, or at indices.")(
    _split_fwd("array_split", False))
