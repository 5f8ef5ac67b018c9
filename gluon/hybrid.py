"""Hybridization: tracing a HybridBlock into a graph and running it as a CachedOp.

``HybridBlock.hybridize()`` switches a block to this path. Its first call with a
given signature (input shapes, dtypes and context, training mode, non-array
arguments) traces ``forward`` (or ``hybrid_forward(F, ...)`` with ``F = core.nd``)
through the operator registry: the parameters' arrays stand in as graph variables
(named by the parameters' names), the inputs as ``data`` (or ``data0``, ``data1``, ...),
and children run inline. The graph is optimized and compiled
(:class:`core.symbol.cached_op.CachedOp`); later calls with the same signature run
the compiled program, forward and backward, with results identical to the imperative
run.

Code whose control flow depends on array values (``if x.sum() > 0:``,
``x.asnumpy()``) cannot be captured in a graph: tracing raises
:class:`HybridizationError` naming the block whose ``forward`` did it.
"""
from __future__ import annotations

import contextlib
import weakref

from core import autograd
from core.ndarray import AbstractValueError, NDArray
from core.ops.abstract import is_tracing
from core.symbol.cached_op import CachedOp
from core.symbol.trace import Tracer

NOT_CACHED = object()


class HybridizationError(RuntimeError):
    """A block's ``forward`` cannot be traced into a graph."""


def _flatten(obj, arrays: list):
    """The structure of ``obj`` with arrays replaced by their index in ``arrays``."""
    if isinstance(obj, NDArray):
        arrays.append(obj)
        return ("a", len(arrays) - 1)
    if isinstance(obj, (list, tuple)):
        return ("l" if isinstance(obj, list) else "t",
                tuple(_flatten(o, arrays) for o in obj))
    return ("v", obj)


def _unflatten(struct, arrays):
    kind, v = struct
    if kind == "a":
        return arrays[v]
    if kind in ("l", "t"):
        items = [_unflatten(s, arrays) for s in v]
        return items if kind == "l" else tuple(items)
    return v


def _key_of(struct):
    kind, v = struct
    if kind in ("l", "t"):
        return (kind, tuple(_key_of(s) for s in v))
    if kind == "v":
        try:
            hash(v)
            return ("v", v)
        except TypeError:
            return ("v", repr(v))
    return struct


class _Cached:
    __slots__ = ("in_names", "op", "out_struct", "params")

    def __init__(self, op, in_names, params, out_struct):
        self.op, self.in_names, self.params, self.out_struct = op, in_names, params, out_struct


def call_cached(block, args, kwargs):
    """Run ``block`` hybridized; ``NOT_CACHED`` when it must run imperatively this time
    (parameters still waiting for deferred initialization)."""
    cache = block._cached_graphs
    if not cache and any(p._data is None for p in block.collect_params().values()):
        return NOT_CACHED  # deferred initialization completes on an imperative call
    found = _entry(block, args, kwargs)
    if found is None:
        return NOT_CACHED
    entry, arrays = found
    ctx = arrays[0].context
    values = dict(zip(entry.in_names, arrays))
    for name, p in entry.params.items():
        values[name] = p.data(ctx)
    for hook in list(block._forward_pre_hooks.values()):
        hook(block, args)
    outs = entry.op(values)
    out = _unflatten(entry.out_struct, outs)
    for hook in list(block._forward_hooks.values()):
        hook(block, args, out)
    return out


def _format(struct):
    """MXNet's input format of a flattened call: 0 for an array, -1 for None, lists for
    lists and tuples; a ValueError (MXNet's) for any other value."""
    kind, v = struct
    if kind == "a":
        return 0
    if kind in ("l", "t"):
        return tuple(_format(s) for s in v)
    if v is None:
        return -1
    raise ValueError(f"When hybridized, the input of HybridBlock must be (nested) list of "
                     f"Symbol or NDArray, but got {v!r} of type {type(v).__name__}")


def _same_format(stored, fmt) -> bool:
    """Equal formats, or equal but for trailing None arguments on either side (left to
    their defaults), as MXNet allows."""
    if stored == fmt:
        return True
    short, long_ = sorted((stored, fmt), key=len)
    return len(short) < len(long_) and long_[:len(short)] == short and \
        all(f == -1 for f in long_[len(short):])


def _check_format(block, struct, arrays) -> None:
    """MXNet's rules for a hybridized call: arrays, None and (nested) lists only; one
    context; the argument structure of the first call (where None stands) until the
    cache is cleared (``hybridize()``)."""
    fmt = _format(struct)
    ctxs = {a.context for a in arrays}
    if len(ctxs) > 1:
        raise ValueError(f"{type(block).__name__} '{block.name}': find multiple contexts in "
                         f"the input ({', '.join(sorted(map(str, ctxs)))}); after hybridize() "
                         "a HybridBlock supports one input context only")
    if block._in_format is None:
        block._in_format = fmt
    elif not _same_format(block._in_format, fmt):
        raise ValueError(f"{type(block).__name__} '{block.name}': the argument structure of "
                         "HybridBlock does not match the cached version. Stored format = "
                         f"{block._in_format}, input format = {fmt} (0: an array, -1: None); "
                         "call hybridize() again to accept a new structure")


def _entry(block, args, kwargs):
    """``(cached graph, input arrays)`` for this call's signature, the graph traced now
    if new; None when the call cannot be cached (no array input, or array keyword
    arguments)."""
    if any(isinstance(v, NDArray) for v in kwargs.values()):
        return None  # array keyword arguments are not graph inputs: run imperatively
    arrays: list[NDArray] = []
    struct = _flatten(args, arrays)
    if not arrays:
        return None
    _check_format(block, struct, arrays)
    ctx = arrays[0].context
    key = (ctx, autograd.is_training(), _key_of(struct), tuple(sorted(kwargs)) if kwargs else (),
           tuple((a.shape, a.dtype) for a in arrays))
    cache = block._cached_graphs
    entry = cache.get(key)
    if entry is None:
        entry = _trace(block, struct, arrays, kwargs, ctx)
        cache[key] = entry
        block._last_cached = entry
    return entry, arrays


def trace_after_init(block, args, kwargs) -> None:
    """After the imperative call that completed deferred initialization, trace the
    block for this signature (so ``export`` works after one call, as in MXNet)."""
    if not block._cached_graphs and not is_tracing():
        _entry(block, args, kwargs)


def _trace(block, struct, arrays, kwargs, ctx) -> _Cached:
    params = {name: p for name, p in block.collect_params().items()}
    in_names = ["data"] if len(arrays) == 1 else [f"data{i}" for i in range(len(arrays))]
    with Tracer() as t:
        for name, p in params.items():
            t.bind(p.data(ctx), name)
        stand = [t.variable(n, a.shape, a.dtype, ctx) for n, a in zip(in_names, arrays)]
        args = _unflatten(struct, stand)
        try:
            with ctx:
                out = block.forward(*args, **kwargs)
            outs: list[NDArray] = []
            out_struct = _flatten(out, outs)
            graph = t.graph(outs)
        except HybridizationError:
            raise
        except AbstractValueError as e:
            raise _error(block, e) from e
    used = {v.name for v in graph.variables()} | {v.name for v in graph.updates}
    params = {n: p for n, p in params.items() if n in used}
    return _Cached(CachedOp(graph, ctx), in_names, params, out_struct)


def _error(block, e) -> HybridizationError:
    return HybridizationError(
        f"{type(block).__name__} '{block.name}' cannot be hybridized: its forward reads the "
        f"values of an array while being traced ({e}). Control flow that depends on data "
        "(if/while on array values, asnumpy(), item(), float(x)) cannot be captured in a "
        "graph: compute it with operators (e.g. nd.where), or run the model "
        "imperatively: call hybridize(False) on the block you hybridized (its children "
        "are traced with it).")


def traced_call(block, args, kwargs):
    """A child block's call inside a parent's trace: name the block on failure."""
    try:
        return NOT_CACHED if not is_tracing() else _call_inline(block, args, kwargs)
    except HybridizationError:
        raise
    except AbstractValueError as e:
        raise _error(block, e) from e


def _call_inline(block, args, kwargs):
    from .block import Block

    return Block.__call__(block, *args, **kwargs)


# --------------------------------------------------------------------------- op hooks
# Input names of operators whose registry names are generic (``x``, ``x1``, ...) are
# MXNet's default for operators without FListInputNames: ``input0``, ``input1``, ...
_GENERIC_INPUTS = frozenset(("x", "y", "a", "b", "x1", "x2", "arr", "array"))


def _input_name(op, k: int) -> str:
    if op.variadic or k >= len(op.inputs):
        return f"input{k}"
    name = op.inputs[k].rstrip("?")
    return f"input{k}" if name in _GENERIC_INPUTS else name


def _monitor_symbol(block, names, arrays):
    """The Symbol of ``block`` composed on variables ``names`` (MXNet's node names:
    ``dense0_fwd``), cached on the block until its cache is cleared."""
    from core import sym

    key = tuple((n, a.shape, str(a.dtype)) for n, a in zip(names, arrays))
    cached = getattr(block, "_monitor_graph", None)
    if cached is not None and cached[0] == key:
        return cached[1]
    ins = [sym.var(n, shape=a.shape, dtype=a.dtype) for n, a in zip(names, arrays)]
    if composes_symbolically(block):
        out = compose_symbol(block, ins, {})
    else:
        out = symbolic_call(block, ins)
    if isinstance(out, (list, tuple)):
        out = sym.Group(list(out))
    block._monitor_graph = (key, out)
    return out


def _finish_from_symbol(out_sym, params, shapes) -> None:
    """Complete the deferred initialization of ``params`` from the Symbol's shape
    inference on the input ``shapes`` (MXNet's deferred initialization)."""
    pending = [p for p in params.values() if p._data is None and p._deferred_init]
    if not pending:
        return
    arg, _, aux = out_sym.infer_shape_partial(**shapes)
    found = dict(zip(out_sym.list_arguments(), arg))
    found.update(zip(out_sym.list_auxiliary_states(), aux))
    for p in pending:
        shape = found.get(p.name)
        if shape and all(d > 0 for d in shape):
            p.shape = tuple(shape)
        p._finish_deferred_init()


def monitored_call(block, args):
    """A hybridized call with an op hook (:meth:`HybridBlock.register_op_hook`): the
    block's graph runs node by node and ``block._callback(name, op_name, array)`` sees
    each node's output as ``b'<node>_output'`` (``_output<i>`` for several) and, with
    ``monitor_all``, first each input as ``b'<node>_<input name>'`` (names and
    operator names as bytes, as MXNet's C callback passes them)."""
    from core.symbol.graph import evaluate

    arrays: list = []
    struct = _flatten(args, arrays)
    _check_format(block, struct, arrays)
    ctx = arrays[0].context
    names = ["data"] if len(arrays) == 1 else [f"data{i}" for i in range(len(arrays))]
    out_sym = _monitor_symbol(block, names, arrays)
    params = block.collect_params()
    _finish_from_symbol(out_sym, params, {n: a.shape for n, a in zip(names, arrays)})
    callback, monitor_all = block._callback, block._monitor_all

    def hook(node, ins, outs):
        op_name = node.op.name.encode()
        if monitor_all:
            for k, x in enumerate(ins):
                if isinstance(x, NDArray):
                    callback(f"{node.name}_{_input_name(node.op, k)}".encode(), op_name, x)
        for i, o in enumerate(outs):
            suffix = "output" if len(outs) == 1 else f"output{i}"
            callback(f"{node.name}_{suffix}".encode(), op_name, o)

    values = dict(zip(names, arrays))
    for p in params.values():
        values[p.name] = p.data(ctx)
    for h in list(block._forward_pre_hooks.values()):
        h(block, args)
    with ctx:
        outs, updates = evaluate(out_sym.graph, values, ctx, autograd.is_training(), hook)
    for name, new in updates.items():
        with autograd.pause(autograd.is_training()):
            values[name][...] = new
    out = outs[0] if len(outs) == 1 else outs
    for h in list(block._forward_hooks.values()):
        h(block, args, out)
    return out


# --------------------------------------------------------------------------- on Symbols
def _is_symbol(x) -> bool:
    return type(x).__name__ == "Symbol" and type(x).__module__ == "core.symbol.symbol"


def has_symbol(args) -> bool:
    """Whether ``args`` (nested lists and tuples included) hold a Symbol."""
    for a in args:
        if _is_symbol(a) or (isinstance(a, (list, tuple)) and has_symbol(a)):
            return True
    return False


def _defining_class(cls, attr: str):
    return next(c for c in cls.__mro__ if attr in c.__dict__)


def composes_symbolically(block) -> bool:
    """Whether ``block`` composes a Symbol the MXNet 1.x way, through its own
    ``hybrid_forward(F=core.sym, ...)``: a ``hybrid_forward`` that a ``forward`` defined
    further down the class tree does not replace (a block with only a plain ``forward``
    is traced instead, which needs its inputs' full shapes: :func:`symbolic_call`)."""
    from .block import HybridBlock

    cls = type(block)
    if cls.hybrid_forward is HybridBlock.hybrid_forward:
        return False
    mro = cls.__mro__
    return mro.index(_defining_class(cls, "hybrid_forward")) < \
        mro.index(_defining_class(cls, "forward")) or cls.forward is HybridBlock.forward


# The variable of each parameter, reused while the parameter's description (name,
# shape, dtype, multipliers) stays the same, so a parameter used twice in one graph
# (an unrolled cell, tied weights) is one variable, as MXNet's ``Parameter.var()`` is.
_VARS: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()


def parameter_variable(param):
    """``param.var()``, the same Symbol for as long as the parameter is unchanged."""
    key = (param.name, None if param.shape is None else tuple(param.shape), str(param.dtype),
           param.lr_mult, param.wd_mult, repr(param.init))
    cached = _VARS.get(param)
    if cached is not None and cached[0] == key:
        return cached[1]
    v = param.var()
    _VARS[param] = (key, v)
    return v


def compose_symbol(block, args, kwargs):
    """``hybrid_forward(core.sym, *args, **params, **kwargs)`` (MXNet 1.x's
    ``HybridBlock.forward`` on Symbols): the parameters are variables of the shapes
    known so far (unknown dimensions 0), inferred when the Symbol is bound or its
    ``infer_shape`` is given the data shapes; nodes are named under the block's prefix.
    """
    from core import sym

    arrays: list = []
    _flatten(args, arrays)
    if arrays:  # ValueError as in MXNet
        raise ValueError(f"{type(block).__name__} '{block.name}': inputs must be all Symbols "
                         f"or all NDArrays (MXNet does not support mixed NDArrays and Symbols "
                         f"as inputs), got {len(arrays)} NDArray(s) among Symbols")
    params = {k: parameter_variable(p) for k, p in block._reg_params.items()}
    # A block with an empty prefix names its nodes in its parent's scope, continuing its
    # counters (MXNet's model-zoo stages: "stage1_activation0", "stage1_activation1").
    names = contextlib.nullcontext() if block._empty_prefix else sym.Prefix(block.prefix)
    try:
        with block.name_scope(), names:
            return block.hybrid_forward(sym, *args, **params, **kwargs)
    except AttributeError as e:
        # hybrid_forward read an array property (x.shape, x.ndim) a Symbol lacks: trace
        # it instead when the inputs are variables of known shape.
        if not kwargs and all(_full_variable(a) for a in args):
            return symbolic_call(block, args)
        raise TypeError(f"{type(block).__name__} '{block.name}': hybrid_forward cannot run on "
                        f"Symbols ({e}); call the block on sym.var(..., shape=...) variables "
                        "of known shape, or use F operators only in hybrid_forward") from e


def _full_variable(a) -> bool:
    if not _is_symbol(a) or len(a) != 1 or a.list_outputs()[0] not in a.list_inputs():
        return False
    from core.symbol.shape_infer import parse_shape

    shape = parse_shape(a.attr("__shape__")) if a.attr("__shape__") else None
    return bool(shape) and None not in shape


def _compose_symbol_block(block, args):
    """A SymbolBlock on Symbols: its symbol with the inputs replaced (MXNet's
    ``SymbolBlock.forward`` on Symbols)."""
    if len(args) != len(block._input_names):
        raise TypeError(f"SymbolBlock: called with {len(args)} Symbol(s) for "
                        f"{len(block._input_names)} input(s) ({', '.join(block._input_names)})")
    out = block._symbol(**dict(zip(block._input_names, args)))
    return out if len(out) == 1 else list(out)


def symbolic_call(block, args):
    """``block(sym.var("data", shape=...))`` for a block without ``hybrid_forward``: trace
    ``block`` on the variables' shapes and return the Symbol of its outputs (parameters
    become variables named as they are)."""
    from core import nd
    from core.symbol.json_io import parse_value
    from core.symbol.shape_infer import parse_dtype
    from core.symbol.symbol import Symbol

    if hasattr(block, "_symbol") and hasattr(block, "_input_names"):
        return _compose_symbol_block(block, args)
    arrays = []
    specs = []
    for a in args:
        if not isinstance(a, Symbol):
            error = ValueError if isinstance(a, NDArray) else TypeError  # MXNet's for mixing
            raise error(f"{type(block).__name__} '{block.name}': when called on Symbols, every "
                        f"input must be a Symbol, got {type(a).__name__}")
        names = a.list_outputs()
        if len(names) != 1 or names[0] not in a.list_inputs():
            raise TypeError(f"{type(block).__name__} '{block.name}': a block can be called "
                            "on variable Symbols (sym.var) only")
        shape_text = a.attr("__shape__")
        shape = parse_value(shape_text) if shape_text else None
        if not shape or any(int(d) <= 0 for d in shape):
            raise ValueError(
                f"{type(block).__name__} '{block.name}' was called on Symbol '{a.name}' "
                f"without a full shape (got {shape_text}): a block with a plain forward() "
                f"is traced on concrete shapes; use sym.var('{a.name}', shape=(...)) with "
                "every dimension known, or define hybrid_forward(self, F, ...), which "
                "composes Symbols of any shape")
        dtype = a.attr("__dtype__") or "float32"
        specs.append((a.name, tuple(int(d) for d in shape), dtype))
    ctx = None
    if any(p._data is None for p in block.collect_params().values()):
        block(*[nd.zeros(s, dtype=parse_dtype(d)) for _, s, d in specs])  # deferred init
    params = dict(block.collect_params().items())
    for p in params.values():
        ctx = p.list_ctx()[0]
        break
    from core.context import current_context

    ctx = ctx or current_context()
    with Tracer() as t:
        for name, p in params.items():
            t.bind(p.data(ctx), name)
        for name, shape, dtype in specs:
            arrays.append(t.variable(name, shape, parse_dtype(dtype), ctx))
        try:
            with ctx:
                out = block(*arrays)  # its own __call__ (an RNN layer adds its states)
        except HybridizationError:
            raise
        except AbstractValueError as e:
            raise _error(block, e) from e
        outs: list[NDArray] = []
        _flatten(out, outs)
        graph = t.graph(outs)
    return Symbol.from_graph(graph)
