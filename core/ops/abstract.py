"""Abstract evaluation and tracing: operator calls that compute shapes, not values.

Two modes plug into the dispatcher (``core.ops.dispatch.invoke``) through its globals
``_abstract_depth`` (how many threads use a mode; kept here) and ``_abstract_invoke``
(:func:`_invoke_in_mode`, installed when this module loads):

- :func:`abstract_eval`: calls with a :func:`placeholder` among their inputs run the
  operator's ``infer`` rule only and return placeholders (``kbackend``'s
  ``compute_output_spec``);
- a tracer (``core.symbol.trace.Tracer``, entered with :func:`_enter_tracer`): calls on
  traced values become graph nodes.
"""
from __future__ import annotations

import contextlib
import numbers
import threading

import numpy

from ..context import Context, current_context
from ..ndarray import AbstractValueError, NDArray, Placeholder
from . import dispatch as _dispatch
from .dispatch import _SCALARS, _context_error, _unwrap, aval_of, invoke
from .registry import Aval, OpDef

_abstract_tls = threading.local()
_abstract_lock = threading.Lock()


def _count(step: int) -> None:
    """Add ``step`` to the dispatcher's count of threads in an abstract mode."""
    with _abstract_lock:
        _dispatch._abstract_depth += step


def _invoke_in_mode(op: OpDef, inputs, attrs, ctx):
    """``invoke`` while some thread is in a mode: this thread's tracer or abstract
    evaluation handles the call; None when the call runs concretely."""
    if any(hasattr(type(v), "__core_ndarray__") for v in inputs):
        inputs = [_unwrap(v) for v in inputs]
    tracer = getattr(_abstract_tls, "tracer", None)
    if tracer is not None:
        out = tracer.record(op, inputs, attrs, ctx)
        if out is not None:
            return out
        return _concrete_in_trace(tracer, op, inputs, attrs, ctx)
    if getattr(_abstract_tls, "on", False):
        return _invoke_abstract(op, inputs, attrs, ctx)
    return None


@contextlib.contextmanager
def abstract_eval():
    """Evaluate operators abstractly (shapes and dtypes only) in this thread.

    Inside the block, an operator call that has a placeholder among its inputs (see
    :func:`placeholder`) runs no kernel: ``invoke`` asks the operator's ``infer`` rule
    for the outputs' shapes and dtypes and returns placeholders. Calls on concrete
    arrays only (weights, constants, creation operators) run as usual. Whatever needs
    a placeholder's values (``asnumpy``, ``int(x)``, NumPy functions on its data,
    writing into it) raises :class:`AbstractValueError`, as do operators without an
    ``infer`` rule and operators whose output shape depends on values (``infer``
    leaves a dimension None); callers catch it and fall back to a concrete run.
    Nothing is recorded for autograd and no hooks run.
    """
    prev = getattr(_abstract_tls, "on", False)
    _abstract_tls.on = True
    _count(1)
    try:
        yield
    finally:
        _count(-1)
        _abstract_tls.on = prev


def _enter_tracer(tracer):
    """Make ``tracer`` (``core.symbol.trace.Tracer``) this thread's; returns the previous."""
    prev = getattr(_abstract_tls, "tracer", None)
    _abstract_tls.tracer = tracer
    _count(1)
    return prev


def _exit_tracer(prev) -> None:
    """Undo :func:`_enter_tracer`: ``prev`` becomes this thread's tracer again."""
    _abstract_tls.tracer = prev
    _count(-1)


def _concrete_in_trace(tracer, op, inputs, attrs, ctx):
    """A call on concrete arrays inside a trace: run it, and tell the tracer its outputs
    were made during the trace (writing traced values into them is then legitimate)."""
    _abstract_tls.tracer = None
    try:
        out = invoke(op, inputs, attrs, ctx)
    finally:
        _abstract_tls.tracer = tracer
    tracer.made_here(out if type(out) is tuple else (out,))
    return out


def note_traced_write(array) -> None:
    """Called before an in-place write of a traced value rebinds ``array``."""
    tracer = getattr(_abstract_tls, "tracer", None)
    if tracer is not None:
        tracer.note_write(array)


def is_tracing() -> bool:
    """Whether this thread is tracing operator calls into a graph (``core.symbol``)."""
    return bool(_dispatch._abstract_depth
                and getattr(_abstract_tls, "tracer", None) is not None)


def is_abstract() -> bool:
    """Whether this thread is inside :func:`abstract_eval`."""
    return bool(_dispatch._abstract_depth and getattr(_abstract_tls, "on", False))


def placeholder(shape, dtype, ctx: Context | None = None) -> NDArray:
    """A data-less NDArray of ``shape`` and ``dtype`` (one zero broadcast, no memory)."""
    data = numpy.broadcast_to(numpy.zeros((), dtype=dtype), tuple(shape)).view(Placeholder)
    return NDArray._make(data, ctx if ctx is not None else current_context(), None)


def is_placeholder(x) -> bool:
    """Whether ``x`` is an NDArray made by :func:`placeholder` (or abstract evaluation)."""
    return isinstance(x, NDArray) and type(x._data) is Placeholder


def _invoke_abstract(op: OpDef, inputs, attrs, ctx):
    """``invoke`` in abstract mode; None when no input is a placeholder (run concretely)."""
    if not any(isinstance(x, NDArray) and type(x._data) is Placeholder for x in inputs):
        return None
    in_ctx = None
    avals = []
    for x in inputs:
        if isinstance(x, NDArray):
            if in_ctx is None:
                in_ctx = x._ctx
            elif x._ctx is not in_ctx:
                raise _context_error(op, inputs)
            avals.append(Aval(x._data.shape, x._data.dtype))
        elif x is None or isinstance(x, _SCALARS):
            avals.append(x)
        else:  # array-likes: a list holding placeholders raises on conversion
            avals.append(aval_of(numpy.asarray(x)) if not hasattr(x, "dtype") else aval_of(x))
    if op.infer is None:
        raise AbstractValueError(f"{op.name}: no infer rule, cannot evaluate abstractly")
    out = op.infer(*avals, **attrs)
    out_ctx = op.place(attrs, in_ctx) if op.place is not None else in_ctx
    if isinstance(out, (tuple, list)):
        return tuple(_abstract_out(op, o, out_ctx) for o in out)
    return _abstract_out(op, out, out_ctx)


def _abstract_out(op, aval, ctx):
    shape = aval.shape
    if not all(type(d) is int or isinstance(d, numbers.Integral) for d in shape):
        raise AbstractValueError(f"{op.name}: the output shape {shape} depends on values")
    return placeholder(shape, aval.dtype, ctx)


_dispatch._abstract_invoke = _invoke_in_mode
