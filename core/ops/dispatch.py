"""The one dispatch point: :func:`invoke` runs every operator call, from any front end.

Eager calls run ``forward`` first and consult ``infer`` only when ``forward`` fails, so
the fast path pays nothing for checking while every failure still comes out as an error
naming the operator and its inputs (:func:`describe`). The per-op test table checks
that ``infer`` agrees with ``forward`` for every operator.

:func:`invoke` is the hottest path of the framework: the switches it reads are plain
globals of this module, set from outside (``_profiling`` by ``core.profiler``,
``_abstract_depth`` and ``_abstract_invoke`` by ``core.ops.abstract``, ``_hooks`` by
tests), so a call that uses none of them costs one global lookup each.
"""
from __future__ import annotations

import numbers
from collections.abc import Sequence
from time import perf_counter as _perf_counter
from typing import TYPE_CHECKING, Any

import numpy

from .. import engine as _engine
from .. import profiler as _profiler
from ..context import Context, current_context
from ..ndarray import NDArray
from ..tape import _state as _tape_state
from ..tape import record_op as _record_op
from .registry import Aval

if TYPE_CHECKING:
    from .registry import OpDef

# Callables ``hook(op, inputs, attrs, outputs)`` run after every operator call (tests use
# this to check every call's inferred shape and dtype against the real result).
_hooks: list = []
# Set by core.profiler.set_state: while True, every forward is timed into the trace.
_profiling = False
# Threads evaluating abstractly or tracing (``core.ops.abstract`` counts them): while 0,
# invoke's only cost for those modes is reading this global. ``_abstract_invoke(op,
# inputs, attrs, ctx)`` (installed by ``core.ops.abstract``) then handles the call, or
# returns None for a concrete run.
_abstract_depth = 0
_abstract_invoke = None

_SCALARS = (bool, int, float, numbers.Number)


def describe(inputs, attrs=None) -> str:
    """A short description of operator inputs for error messages."""
    parts = []
    for x in inputs:
        if isinstance(x, NDArray):
            parts.append(f"{tuple(x.shape)} {x.dtype.name} @{x.context}")
        elif hasattr(x, "shape") and hasattr(x, "dtype"):
            parts.append(f"{tuple(x.shape)} {x.dtype}")
        else:
            parts.append(repr(x) if not isinstance(x, (list, tuple)) else type(x).__name__)
    s = "inputs: " + ", ".join(parts)
    if attrs:
        shown = {k: v for k, v in attrs.items() if k != "ctx" and not k.startswith("_")}
        if shown:
            s += "; attrs: " + ", ".join(f"{k}={_short(v)}" for k, v in shown.items())
    return s


def _short(v):
    r = repr(v)
    return r if len(r) < 60 else r[:57] + "..."


def aval_of(x):
    if isinstance(x, NDArray):
        d = x._data
        return Aval(d.shape, d.dtype)
    if hasattr(x, "shape") and hasattr(x, "dtype"):
        return Aval(x.shape, x.dtype)
    return x


def infer_avals(op: OpDef, inputs, attrs):
    """Run ``op.infer`` on the abstract values of ``inputs``."""
    avals = [aval_of(x) for x in inputs]
    return op.infer(*avals, **attrs)


class MXNetError(RuntimeError):
    """An operator failed for a reason other than bad input."""


def _error(op: OpDef, e: Exception, inputs, attrs) -> Exception:
    """Turn a failure inside ``forward`` into an error that names the operator."""
    # The inference rule knows the operator's contract: let it explain first.
    try:
        infer_avals(op, inputs, {k: v for k, v in attrs.items() if k != "ctx"})
    except (ValueError, TypeError, IndexError) as clear:
        return clear
    except Exception:  # noqa: BLE001, S110 - a broken rule must not hide the real error
        pass
    msg = f"{op.name}: {e} ({describe(inputs, attrs)})"
    if isinstance(e, TypeError):
        return TypeError(msg)
    if isinstance(e, IndexError) and not isinstance(e, ValueError):
        return IndexError(msg)
    if isinstance(e, (ValueError, ArithmeticError)):
        return ValueError(msg)
    if isinstance(e, numpy.linalg.LinAlgError):
        return ValueError(msg)
    return MXNetError(msg)


def _context_error(op, inputs):
    ctxs = sorted({str(x.context) for x in inputs if isinstance(x, NDArray)})
    return ValueError(
        f"{op.name}: all inputs must be on one context, got {', '.join(ctxs)} "
        f"({describe(inputs)}); move them with x.as_in_context(ctx) or x.copyto(ctx)"
    )


def invoke(op: OpDef, inputs: Sequence[Any], attrs: dict, ctx: Context | None = None):
    """Run ``op`` on ``inputs``: check contexts, run forward, record for autograd.

    Args:
        op: the operator.
        inputs: NDArrays, Python scalars, None, or array-likes (converted to arrays on
            the operator's context).
        attrs: the operator's keyword attributes.
        ctx: the context for operators without array inputs (default: current).

    Returns:
        An NDArray, or a tuple of NDArrays for multi-output operators.
    """
    if _abstract_depth:
        out = _abstract_invoke(op, inputs, attrs, ctx)
        if out is not None:
            return out
    raw = []
    in_ctx = None
    convert = False
    for x in inputs:
        if isinstance(x, NDArray):
            c = x._ctx
            if in_ctx is None:
                in_ctx = c
            elif c is not in_ctx:
                raise _context_error(op, inputs)
            if x._var is not None:  # pushed engine work named it: wait for its writes
                _engine._wait_read(x, op.name)
            raw.append(x._data)
        else:
            if x is not None and not isinstance(x, _SCALARS):
                if hasattr(type(x), "__core_ndarray__"):  # a wrapper (a Keras Variable)
                    return invoke(op, [_unwrap(v) for v in inputs], attrs, ctx)
                convert = True
            raw.append(x)
    if in_ctx is None:
        in_ctx = ctx if ctx is not None else current_context()
    xp = in_ctx.xp
    if convert:
        raw = [r if (r is None or isinstance(r, (*_SCALARS, xp.ndarray)))
               else _to_array(op, xp, r) for r in raw]
    if op.needs_ctx:
        attrs = dict(attrs, ctx=in_ctx)
    out_ctx = in_ctx
    if op.place is not None:
        out_ctx = op.place(attrs, in_ctx)
        attrs = dict(attrs, _from=in_ctx)
    try:
        if _profiling:
            out = _profiled_forward(op, xp, raw, attrs, in_ctx)
        elif in_ctx.device_type == "cpu":
            out = op.forward(xp, *raw, **attrs)
        else:
            with in_ctx.device_guard():
                out = op.forward(xp, *raw, **attrs)
    except Exception as e:
        raise _error(op, e, inputs, attrs) from e
    if type(out) is tuple:
        outs = tuple(_wrap(o, out_ctx, out_ctx.xp) for o in out)
    else:
        outs = _wrap(out, out_ctx, out_ctx.xp)
    if _hooks:
        for h in _hooks:
            h(op, inputs, attrs, outs)
    if _tape_state.recording and op.differentiable:
        for x in inputs:
            if isinstance(x, NDArray) and x._node is not None:
                _record_op(op, inputs, raw, attrs, outs)
                break
    return outs


def _wrap(o, ctx, xp):
    if type(o) is not xp.ndarray:
        o = xp.asarray(o)
    a = NDArray.__new__(NDArray)
    a._data = o
    a._ctx = ctx
    a._node = None
    a._grad = None
    a._version = 0
    a._var = None
    return a


def _profiled_forward(op, xp, raw, attrs, ctx):
    t0 = _perf_counter()
    try:
        if ctx.device_type == "cpu":
            return op.forward(xp, *raw, **attrs)
        with ctx.device_guard():
            return op.forward(xp, *raw, **attrs)
    finally:
        _profiler.record_operator(op.name, ctx, t0)


def _unwrap(x):
    """``x.__core_ndarray__()`` for objects that wrap an NDArray (the protocol that lets a
    wrapper, such as kbackend's Keras Variable, take part in autograd as its array)."""
    conv = getattr(type(x), "__core_ndarray__", None)
    return x if conv is None else conv(x)


def _to_array(op, xp, r):
    try:
        return xp.asarray(r.asnumpy() if isinstance(r, NDArray) else r)
    except Exception as e:  # noqa: BLE001 - any failure means "not array-like"
        raise TypeError(f"{op.name}: cannot convert input of type {type(r).__name__} "
                        f"to an array ({e})") from None
