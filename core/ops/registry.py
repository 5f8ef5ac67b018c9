"""The operator registry and the one dispatch point.

Every operator is declared once with :func:`defop`: a ``forward`` written against
the array module ``xp``, a pure ``infer`` rule for shapes and dtypes, a VJP rule
written with core operators (so gradients are themselves differentiable), and its
public names in ``core.nd`` (MXNet 1.x) and ``core.np`` (NumPy). Every call, from
any front end, goes through :func:`invoke`.

Eager calls run ``forward`` first and consult ``infer`` only when ``forward``
fails, so the fast path pays nothing for checking while every failure still comes
out as an error naming the operator and its inputs. The per-op test table checks
that ``infer`` agrees with ``forward`` for every operator.
"""
from __future__ import annotations

import contextlib
import numbers
import threading
from collections.abc import Callable, Sequence
from time import perf_counter as _perf_counter
from typing import Any

import numpy

from .. import autograd as _ag
from .. import engine as _engine
from .. import profiler as _profiler
from ..context import Context, current_context
from ..ndarray import AbstractValueError, NDArray, Placeholder

REGISTRY: dict[str, OpDef] = {}
# Callables ``hook(op, inputs, attrs, outputs)`` run after every operator call (tests use
# this to check every call's inferred shape and dtype against the real result).
_hooks: list = []


class Aval:
    """An abstract value: what ``infer`` rules see of an array (shape and dtype)."""

    __slots__ = ("dtype", "shape")

    def __init__(self, shape, dtype):
        self.shape = tuple(shape)
        self.dtype = numpy.dtype(dtype)

    @property
    def ndim(self) -> int:
        return len(self.shape)

    def __eq__(self, other):
        return isinstance(other, Aval) and (self.shape, self.dtype) == (other.shape, other.dtype)

    def __repr__(self) -> str:
        return f"Aval({self.shape}, {self.dtype})"


class OpDef:
    """One registered operator. Built by :func:`defop`; see its arguments."""

    __slots__ = (
        "attrs",
        "differentiable",
        "doc",
        "forward",
        "infer",
        "inputs",
        "kind",
        "name",
        "nd",
        "needs_ctx",
        "np",
        "place",
        "random",
        "save",
        "updates",
        "variadic",
        "visible_outputs",
        "vjp",
    )

    def __init__(self, **kw):
        for k in self.__slots__:
            setattr(self, k, kw.get(k))

    def __call__(self, *args, **kwargs):
        return _call_generic(self, args, kwargs)

    def __repr__(self) -> str:
        return f"<op {self.name}>"


def defop(name: str, *, infer: Callable, vjp: Callable | None = None,
          inputs: Sequence[str] = ("x",), attrs: dict | None = None,
          nd: Sequence[str] = (), np: Sequence[str] = (), kind: str = "primitive",
          variadic: bool = False, needs_ctx: bool = False, differentiable: bool = True,
          save: bool | str = True, place: Callable | None = None, random: bool = False,
          updates: dict | None = None, visible_outputs: Callable | int | None = None,
          doc: str = ""):
    """Register an operator; used as a decorator on its ``forward(xp, *arrays, **attrs)``.

    Args:
        name: the registry name (unique).
        infer: ``infer(*avals, **attrs) -> Aval | tuple[Aval]``; pure, never touches
            data. Non-array inputs (Python scalars, None) are passed through as they are.
            Raises ValueError/TypeError naming the operator on bad input.
        vjp: ``vjp(ctx, g) -> tuple`` of one gradient (NDArray or None) per input, written
            with core operators; ``ctx`` has ``inputs``, ``outputs``, ``attrs``,
            ``in_shapes``, ``in_dtypes``; ``g`` is one NDArray, or a tuple for
            multi-output operators. None for operators without a gradient.
        inputs: names of the array inputs, in order (used by the generated namespaces).
        attrs: the keyword attributes and their defaults, in positional order.
        nd: public names in ``core.nd`` (dotted for sub-namespaces: ``"linalg.inverse"``).
            An entry may be ``(name, {attr: default})`` to change attribute defaults
            for that name only.
        np: public names in ``core.np`` (``"linalg.inv"``), entries as for ``nd``.
        kind: ``"primitive"`` or ``"composite"``.
        variadic: the operator takes any number of arrays (first argument a sequence).
        needs_ctx: ``forward`` receives ``ctx=`` (creation and random operators).
        differentiable: False for operators whose outputs carry no gradient.
        save: what the VJP needs kept: True (inputs and outputs), ``"inputs"`` (inputs
            only, so outputs are not kept alive by the tape), or False (only shapes and
            dtypes, which saves the most memory).
        place: ``place(attrs, in_ctx) -> Context`` for operators whose output lives on
            another context than their inputs (the copy between contexts); ``forward``
            then also receives ``_from=`` (the input context).
        random: the operator draws from the context's random generator, so a graph
            must run it anew each time (never constant-folded nor merged).
        updates: ``{input position: output position}`` for operators with auxiliary
            states (MXNet's BatchNorm moving statistics): in a graph, the variable in
            that input position takes the value of that output after each forward run
            (``core.symbol`` lists such variables as auxiliary states).
        visible_outputs: how many leading outputs a Symbol of this operator shows
            (an int, or ``f(attrs) -> int``); default all.
        doc: a one-line description (the generated functions' docstring).
    """

    def register(forward: Callable) -> OpDef:
        if name in REGISTRY:
            raise ValueError(f"defop: operator {name!r} is already registered")
        op = OpDef(name=name, forward=forward, infer=infer, vjp=vjp, inputs=tuple(inputs),
                   attrs=dict(attrs or {}), nd=tuple(nd), np=tuple(np), kind=kind,
                   variadic=variadic, needs_ctx=needs_ctx,
                   differentiable=differentiable and vjp is not None, save=save, place=place,
                   random=random, updates=dict(updates or {}),
                   visible_outputs=visible_outputs, doc=doc or (forward.__doc__ or "").strip())
        REGISTRY[name] = op
        return op

    return register


def get(name: str) -> OpDef:
    try:
        return REGISTRY[name]
    except KeyError:
        raise ValueError(f"unknown operator {name!r}") from None


# --------------------------------------------------------------------------- dispatch

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
        if any(hasattr(type(v), "__core_ndarray__") for v in inputs):
            inputs = [_unwrap(v) for v in inputs]
        tracer = getattr(_abstract_tls, "tracer", None)
        if tracer is not None:
            out = tracer.record(op, inputs, attrs, ctx)
            if out is not None:
                return out
            return _concrete_in_trace(tracer, op, inputs, attrs, ctx)
        if getattr(_abstract_tls, "on", False):
            out = _invoke_abstract(op, inputs, attrs, ctx)
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
    if _ag._state.recording and op.differentiable:
        for x in inputs:
            if isinstance(x, NDArray) and x._node is not None:
                _ag.record_op(op, inputs, raw, attrs, outs)
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


# Set by core.profiler.set_state: while True, every forward is timed into the trace.
_profiling = False


def _profiled_forward(op, xp, raw, attrs, ctx):
    t0 = _perf_counter()
    try:
        if ctx.device_type == "cpu":
            return op.forward(xp, *raw, **attrs)
        with ctx.device_guard():
            return op.forward(xp, *raw, **attrs)
    finally:
        _profiler.record_operator(op.name, ctx, t0)


# --------------------------------------------------------------------------- abstract mode

# Threads inside ``abstract_eval()``; the dispatch path reads only this counter, so
# it costs one global lookup when no thread evaluates abstractly.
_abstract_depth = 0
_abstract_tls = threading.local()
_abstract_lock = threading.Lock()


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
    global _abstract_depth
    prev = getattr(_abstract_tls, "on", False)
    _abstract_tls.on = True
    with _abstract_lock:
        _abstract_depth += 1
    try:
        yield
    finally:
        with _abstract_lock:
            _abstract_depth -= 1
        _abstract_tls.on = prev


def _enter_tracer(tracer):
    """Make ``tracer`` (``core.symbol.trace.Tracer``) this thread's; returns the previous."""
    global _abstract_depth
    prev = getattr(_abstract_tls, "tracer", None)
    _abstract_tls.tracer = tracer
    with _abstract_lock:
        _abstract_depth += 1
    return prev


def _exit_tracer(prev) -> None:
    global _abstract_depth
    _abstract_tls.tracer = prev
    with _abstract_lock:
        _abstract_depth -= 1


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
    return bool(_abstract_depth and getattr(_abstract_tls, "tracer", None) is not None)


def is_abstract() -> bool:
    """Whether this thread is inside :func:`abstract_eval`."""
    return bool(_abstract_depth and getattr(_abstract_tls, "on", False))


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


# --------------------------------------------------------------------------- namespaces

_CTX_KEYS = ("ctx", "device")
# MXNet and NumPy spell input arguments differently (data/lhs/rhs vs x/x1/x2/a/b);
# a keyword input that is not the operator's own name fills the next missing input.
# MXNet's symbol-era ``name=`` and NumPy's ``order=`` are accepted and have no effect.
_IGNORED = ("name", "order")
_INPUT_ALIASES = ("data", "lhs", "rhs", "x", "y", "a", "b", "x1", "x2", "arr", "array",
                  "A", "B", "C")


def pop_context(kwargs: dict) -> Context | None:
    """Remove ``ctx=``/``device=`` from ``kwargs``; the Context it names, or None."""
    ctx = None
    for k in _CTX_KEYS:
        if k in kwargs:
            c = kwargs.pop(k)
            if c is not None:
                ctx = c if isinstance(c, Context) else Context(c)
    return ctx


def _call_generic(op: OpDef, args, kwargs):
    """Bind positional/keyword arguments to the operator's inputs and attributes."""
    out = kwargs.pop("out", None)
    for k in _IGNORED:
        if k in kwargs and k not in op.attrs:
            v = kwargs.pop(k)
            if k == "order" and v not in ("C", "K", "A", None):
                raise ValueError(f"{op.name}: only order='C' is supported, got {v!r}")
    ctx = pop_context(kwargs) if kwargs else None
    if op.variadic:
        if args and isinstance(args[0], (list, tuple)):
            inputs, rest = list(args[0]), args[1:]
        else:
            n = 0
            while n < len(args) and not isinstance(args[n], _SCALARS + (str, type(None))):
                n += 1
            inputs, rest = list(args[:n]), args[n:]
        for k in op.inputs:
            if k in kwargs:
                v = kwargs.pop(k)
                inputs = list(v)
    else:
        n_in = len(op.inputs)
        inputs = list(args[:n_in])
        rest = args[n_in:]
        for k in op.inputs[len(inputs):]:
            k = k.rstrip("?")
            if k in kwargs:
                inputs.append(kwargs.pop(k))
                continue
            alias = next((a for a in _INPUT_ALIASES if a in kwargs and a not in op.attrs), None)
            if alias is None:
                break
            inputs.append(kwargs.pop(alias))
        if len(inputs) < n_in:
            missing = op.inputs[len(inputs):]
            if not all(_optional_input(op, m) for m in missing):
                raise TypeError(f"{op.name}: missing input(s) {', '.join(missing)}")
            inputs += [None] * len(missing)
    attr_names = list(op.attrs)
    if len(rest) > len(attr_names):
        raise TypeError(f"{op.name}: got {len(rest)} positional arguments after the array "
                        f"inputs, but only {len(attr_names)} attributes exist "
                        f"({', '.join(attr_names) or 'none'})")
    attrs = dict(op.attrs)
    for k, v in zip(attr_names, rest):
        attrs[k] = v
    for k, v in kwargs.items():
        if k not in attrs:
            raise TypeError(f"{op.name}: unexpected keyword argument {k!r}; "
                            f"accepted: {', '.join(list(op.inputs) + attr_names)}")
        attrs[k] = v
    res = invoke(op, inputs, attrs, ctx)
    if out is not None:
        return _write_out(op, out, res)
    return res


def _optional_input(op, name):
    return name.endswith("?")


def _write_out(op, out, res):
    if not isinstance(out, NDArray):
        raise TypeError(f"{op.name}: out= must be an NDArray, got {type(out).__name__}")
    if tuple(out.shape) != tuple(res.shape):
        raise ValueError(f"{op.name}: out= has shape {tuple(out.shape)} but the result "
                         f"has shape {tuple(res.shape)}")
    out[...] = res
    return out


def make_function(op: OpDef, public_name: str, defaults: dict | None = None) -> Callable:
    """A generated public function for ``op`` (used by ``core.nd`` and ``core.np``).

    ``defaults`` overrides attribute defaults for this name only (e.g. MXNet's
    ``argmax`` returns float32 indices where NumPy's returns int64).
    """
    if defaults:
        def f(*args, **kwargs):
            for k, v in defaults.items():
                kwargs.setdefault(k, v)
            return _call_generic(op, args, kwargs)
    else:
        def f(*args, **kwargs):
            return _call_generic(op, args, kwargs)

    f.__name__ = public_name.rsplit(".", 1)[-1]
    f.__qualname__ = f.__name__
    attrs = dict(op.attrs, **(defaults or {}))
    sig = ", ".join(list(op.inputs) + [f"{k}={v!r}" for k, v in attrs.items()])
    f.__doc__ = f"{f.__name__}({sig})\n\n{op.doc}\n\nOperator ``{op.name}`` of the registry."
    f.op = op
    return f


def namespace(kind: str, prefix: str = "") -> dict:
    """Public functions for namespace ``kind`` (``'nd'`` or ``'np'``) under ``prefix``.

    Besides the generated functions, an operator module may define
    ``NAMESPACE_OVERRIDES = {"nd": {name: function}, "np": {...}}`` for public
    functions that need more than argument binding (e.g. reading the training flag
    before calling a pure operator); those replace the generated ones.
    """
    import sys

    out = {}
    for op in REGISTRY.values():
        for entry in getattr(op, kind):
            full, defaults = (entry, None) if isinstance(entry, str) else entry
            head, _, tail = full.rpartition(".")
            if head == prefix:
                out[tail] = make_function(op, full, defaults)
    for modname, mod in list(sys.modules.items()):
        if not modname.startswith(__package__ + ".") or mod is None:
            continue
        for full, fn in getattr(mod, "NAMESPACE_OVERRIDES", {}).get(kind, {}).items():
            head, _, tail = full.rpartition(".")
            if head == prefix:
                out[tail] = fn
    return out


class _Functions:
    """``F.name(*inputs, **attrs)`` calls operator ``name``; used inside VJP rules."""

    def __getattr__(self, name: str):
        op = REGISTRY.get(name)
        if op is None:
            raise AttributeError(f"no operator named {name!r}")
        defaults = op.attrs

        def f(*inputs, **attrs):
            return invoke(op, inputs, dict(defaults, **attrs) if attrs else defaults)

        f.__name__ = name
        setattr(self, name, f)
        return f


F = _Functions()
