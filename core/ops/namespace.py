"""The generated functions: argument binding, ``core.nd``/``core.np`` namespaces, ``F``.

:func:`_call_generic` binds a call's positional and keyword arguments to an operator's
inputs and attributes (MXNet's and NumPy's spellings both) and dispatches it;
:func:`make_function` wraps it as a public function and :func:`namespace` collects the
functions of one namespace (``core.nd``, ``core.np`` and their sub-namespaces). ``F``
calls operators by registry name inside VJP rules.
"""
from __future__ import annotations

import sys
from collections.abc import Callable

from ..context import Context
from ..ndarray import NDArray
from .dispatch import _SCALARS, invoke
from .registry import REGISTRY, OpDef

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


def _call_generic(op: OpDef, args, kwargs, lenient: bool = False):
    """Bind positional/keyword arguments to the operator's inputs and attributes.

    ``lenient`` (``core.nd``'s functions of operators that declare no attributes): other
    keyword arguments are ignored, as MXNet's operators without parameters ignore them
    (``nd.broadcast_maximum(a, b, axis=1)``)."""
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
            if lenient:
                continue
            raise TypeError(f"{op.name}: unexpected keyword argument {k!r}; "
                            f"accepted: {', '.join(list(op.inputs) + attr_names)}")
        attrs[k] = v
    res = invoke(op, inputs, attrs, ctx)
    if out is not None:
        return write_out(op.name, out, res)
    return res


def _optional_input(op, name):
    return name.endswith("?")


def write_out(name: str, out, res):
    """Write the result ``res`` into the ``out=`` NDArray of function ``name`` (checked:
    an NDArray of the result's shape) and return ``out``."""
    if not isinstance(out, NDArray):
        raise TypeError(f"{name}: out= must be an NDArray, got {type(out).__name__}")
    if tuple(out.shape) != tuple(res.shape):
        raise ValueError(f"{name}: out= has shape {tuple(out.shape)} but the result "
                         f"has shape {tuple(res.shape)}")
    out[...] = res
    return out


def with_out(name: str, res, out):
    """``res`` written into ``out=``, as the generated functions do (the results are
    computed before the write, so ``out`` may be an input: ``out=data``).

    Args:
        name: the function's name, for errors.
        res: the result, an NDArray or a tuple of them.
        out: None, an NDArray for the first result, or a sequence with one per result.

    Returns:
        ``res`` with the written ``out`` arrays in place of their results.
    """
    if out is None:
        return res
    many = isinstance(res, tuple)
    results = res if many else (res,)
    outs = tuple(out) if isinstance(out, (tuple, list)) else (out,)
    if len(outs) > len(results):
        raise ValueError(f"{name}: out= has {len(outs)} arrays for {len(results)} results")
    for o, r in zip(outs, results):
        write_out(name, o, r)
    written = outs + results[len(outs):]
    return written if many else written[0]


def make_function(op: OpDef, public_name: str, defaults: dict | None = None,
                  lenient: bool = False) -> Callable:
    """A generated public function for ``op`` (used by ``core.nd`` and ``core.np``).

    ``defaults`` overrides attribute defaults for this name only (e.g. MXNet's
    ``argmax`` returns float32 indices where NumPy's returns int64). ``lenient``: see
    :func:`_call_generic`.
    """
    if defaults:
        def f(*args, **kwargs):
            for k, v in defaults.items():
                kwargs.setdefault(k, v)
            return _call_generic(op, args, kwargs, lenient)
    else:
        def f(*args, **kwargs):
            return _call_generic(op, args, kwargs, lenient)

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
    before calling a pure operator); those replace the generated ones. In ``'nd'``, an
    operator without attributes ignores unknown keyword arguments, as in MXNet.
    """
    out = {}
    for op in REGISTRY.values():
        for entry in getattr(op, kind):
            full, defaults = (entry, None) if isinstance(entry, str) else entry
            head, _, tail = full.rpartition(".")
            if head == prefix:
                out[tail] = make_function(op, full, defaults, lenient=kind == "nd"
                                          and not op.attrs)
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
