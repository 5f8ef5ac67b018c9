"""MXNet 1.x's ``Symbol``: a handle on graph outputs, composed with ``core.sym``.

A :class:`Symbol` holds a list of output entries of the graph IR
(:mod:`core.symbol.graph`) and the auxiliary-state updates those outputs imply (the
moving statistics of a ``BatchNorm``). ``symbol.graph`` is the :class:`Graph` of both;
``Symbol.from_graph(g)`` goes back. Everything else (JSON, executors, the Gluon
integration) works on that graph.

Names follow MXNet: an operator's output is ``"<node>_output"`` (``"<node>_output<i>"``
when the operator shows several), a variable's is its name; parameters created by
composition are ``"<node>_<input>"`` (``fc1_weight``); nodes without a ``name=`` get
``"<operator><k>"`` from the current ``core.sym.NameManager``. Variables, groups and
new nodes are made by :mod:`core.sym` (``sym.var``, ``sym.Group``, ``sym.load_json``;
also reachable here by those names).

Example:
    >>> from core import sym
    >>> x = sym.var("data")
    >>> fc = sym.FullyConnected(x, num_hidden=4, name="fc1")
    >>> fc.list_arguments(), fc.list_outputs()
    (['data', 'fc1_weight', 'fc1_bias'], ['fc1_output'])
    >>> fc.infer_shape(data=(2, 3))
    ([(2, 3), (4, 3), (4,)], [(2, 4)], [])
"""
from __future__ import annotations

import numbers
from collections.abc import Iterable

import numpy

from ..ndarray import NDArray
from ..ops.dispatch import MXNetError
from ..ops.registry import REGISTRY, OpDef
from .graph import TRAIN, Entry, Graph, Node, map_graph, reachable
from .shape_infer import close_creation_shapes, infer_graph


# --------------------------------------------------------------------------- op facts
def _lstm(a):
    return a.get("mode") == "lstm"


# Visible outputs of operators that do not declare ``visible_outputs``.
_VISIBLE = {"Dropout": 1, "_rrelu": 1, "_layer_norm": 1, "_instance_norm": 1,
            "_group_norm": 1, "_batch_norm_train": 1,
            "RNN": lambda a: ((3 if _lstm(a) else 2) if a.get("state_outputs") else 1)}


def _plain(attrs):
    return {k: (False if v is TRAIN else v) for k, v in attrs.items()}


def op_visible_outputs(op: OpDef, attrs: dict, num_outputs: int) -> int:
    """How many leading outputs a Symbol of ``op`` shows (MXNet's NumVisibleOutputs)."""
    v = getattr(op, "visible_outputs", None)
    if v is None:
        v = _VISIBLE.get(op.name)
    if v is None:
        return num_outputs
    n = v(_plain(attrs)) if callable(v) else v
    return max(1, min(int(n), num_outputs))


def visible_count(node: Node) -> int:
    if node.op is None:
        return 1
    return op_visible_outputs(node.op, node.attrs, node.num_outputs)


# Operators whose outputs MXNet names (its FListOutputNames): ``<node>_<name>``.
_OUTPUT_NAMES = {"RNN": ("output", "state_output", "statecell_output"),
                 "BatchNorm": ("output", "mean", "var")}


def entry_name(e: Entry) -> str:
    """MXNet's output name of ``e``: the variable's name, ``"<node>_<output name>"`` for
    operators that name their outputs (``rnn_state_output``, ``bn_mean``), else
    ``"<node>_output[<i>]"``."""
    n = e.node
    if n.op is None:
        return n.name
    named = _OUTPUT_NAMES.get(n.op.name)
    if named is not None and e.index < len(named):
        return f"{n.name}_{named[e.index]}"
    if visible_count(n) > 1 or e.index > 0:
        return f"{n.name}_output{e.index}"
    return f"{n.name}_output"


# --------------------------------------------------------------------------- Symbol
class NotImplementedForSymbol(MXNetError, NotImplementedError):
    """A Python operation that needs values (``bool(symbol)``, ``if symbol:``) on a
    Symbol, which has none (MXNet's ``mxnet.base.NotImplementedForSymbol``).

    Args:
        function: the function called.
        alias: the name the user wrote (``'bool'``), or None.
    """

    def __init__(self, function, alias=None, *args):
        name = alias or getattr(function, "__name__", str(function))
        super().__init__(f"Function {name} (namely operator \"{name}\") is not implemented "
                         "for Symbol and only available in NDArray.", *args)
        self.function, self.alias = function, alias


def _reachable(outputs) -> set[int]:
    return reachable(e.node for e in outputs)


def _keep_updates(outputs, updates) -> dict:
    if not updates:
        return {}
    seen = _reachable(outputs)
    return {v: e for v, e in updates.items() if e.node.id in seen}


class Symbol:
    """Outputs of a symbolic graph (MXNet 1.x ``mx.sym.Symbol``); see the module doc.

    Args:
        outputs: the output entries.
        updates: ``{variable node: entry}``, auxiliary states and their new values.
    """

    __slots__ = ("_outputs", "_updates")
    __hash__ = object.__hash__
    __array_ufunc__ = None  # ``numpy_array + symbol`` defers to Symbol.__radd__

    def __init__(self, outputs: Iterable[Entry], updates: dict | None = None):
        self._outputs = list(outputs)
        self._updates = dict(updates or {})

    # ------------------------------------------------------------ graph
    @property
    def graph(self) -> Graph:
        """The :class:`Graph` of this symbol's outputs and auxiliary-state updates."""
        return Graph(self._outputs, self._updates)

    @classmethod
    def from_graph(cls, graph: Graph) -> Symbol:
        """The symbol whose outputs are ``graph.outputs`` (with its updates)."""
        return cls(graph.outputs, graph.updates)

    @property
    def outputs(self) -> list[Entry]:
        return list(self._outputs)

    def _topo(self) -> list[Node]:
        return self.graph.topo()

    # ------------------------------------------------------------ naming and listing
    @property
    def name(self) -> str | None:
        """The name of the single output's node (None for a group)."""
        if len(self._outputs) != 1:
            return None
        return self._outputs[0].node.name

    def list_outputs(self) -> list[str]:
        return [entry_name(e) for e in self._outputs]

    def list_inputs(self) -> list[str]:
        """Every variable (arguments and auxiliary states), in graph order."""
        return [n.name for n in self._topo() if n.is_variable]

    def list_arguments(self) -> list[str]:
        """The variables that are not auxiliary states, in graph order."""
        aux = {v.id for v in self._updates}
        return [n.name for n in self._topo() if n.is_variable and n.id not in aux]

    def list_auxiliary_states(self) -> list[str]:
        """The variables updated by the graph (e.g. BatchNorm's moving statistics)."""
        aux = {v.id for v in self._updates}
        return [n.name for n in self._topo() if n.is_variable and n.id in aux]

    def _arg_nodes(self):
        aux = {v.id for v in self._updates}
        nodes = [n for n in self._topo() if n.is_variable]
        return [n for n in nodes if n.id not in aux], [n for n in nodes if n.id in aux]

    def get_internals(self) -> Symbol:
        """A group of every visible output of every node (variables included)."""
        entries = []
        for n in self._topo():
            if n.is_constant:
                continue
            entries.extend(Entry(n, i) for i in range(visible_count(n)))
        return Symbol(entries, self._updates)

    def get_children(self) -> Symbol | None:
        """The inputs of the output nodes, in order, as one group (for a group: each
        output's node's inputs in turn); None when there are none (variables)."""
        seen: set[int] = set()
        ins = []
        for out in self._outputs:
            if out.node.id not in seen:
                seen.add(out.node.id)
                ins.extend(out.node.input_entries())
        if not ins:
            return None
        return Symbol(ins, _keep_updates(ins, self._updates))

    def _gen_atomic_symbol(self) -> Symbol:
        """A new node of the output node's operator and attributes on fresh variables
        (MXNet's atomic symbol of this operator, composable again)."""
        if len({e.node.id for e in self._outputs}) != 1:
            raise ValueError("_gen_atomic_symbol: only for the outputs of one node, this "
                             f"symbol has {', '.join(self.list_outputs())}")
        n = self._outputs[0].node
        if n.op is None:
            raise ValueError(f"_gen_atomic_symbol: {n.name!r} is a variable, not an operator")
        from .compose import bind_call

        attrs = {k: v for k, v in n.attrs.items() if k in n.op.attrs}
        return bind_call(n.op, (), dict(attrs, name=n.name))

    def __len__(self) -> int:
        return len(self._outputs)

    def __iter__(self):
        return (self[i] for i in range(len(self._outputs)))

    def __getitem__(self, index) -> Symbol:
        if isinstance(index, str):
            names = self.list_outputs()
            if index in names:
                if names.count(index) > 1:
                    raise ValueError(f"Symbol: more than one output is named {index!r}")
                return self[names.index(index)]
            internals = self.get_internals()
            names = internals.list_outputs()
            if index in names:
                return internals[names.index(index)]
            raise ValueError(f"Symbol: no output named {index!r}; outputs: "
                             f"{', '.join(self.list_outputs())}")
        if isinstance(index, slice):
            outs = self._outputs[index]
            return Symbol(outs, _keep_updates(outs, self._updates))
        if not isinstance(index, numbers.Integral):
            raise TypeError(f"Symbol: index must be an int, a str or a slice, got "
                            f"{type(index).__name__}")
        n = len(self._outputs)
        if not -n <= index < n:
            raise IndexError(f"Symbol: output index {index} out of range for {n} output(s)")
        outs = [self._outputs[index]]
        return Symbol(outs, _keep_updates(outs, self._updates))

    # ------------------------------------------------------------ attributes
    def _single_node(self, what: str) -> Node:
        if len(self._outputs) != 1:
            raise ValueError(f"{what}: only for a symbol with one output, this one has "
                             f"{len(self._outputs)}")
        return self._outputs[0].node

    @staticmethod
    def _node_attrs(n: Node) -> dict[str, str]:
        out = {}
        if n.op is not None:
            for k, v in n.attrs.items():
                if v is TRAIN or (k in n.op.attrs and n.op.attrs[k] is not TRAIN
                                  and _same(n.op.attrs[k], v)):
                    continue
                out[k] = str(v)
        for k, v in n.user_attrs.items():
            out[k] = str(v)
            plain = k[2:-2] if k.startswith("__") and k.endswith("__") else None
            if plain in HIDDEN_KEYS:  # MXNet shows a hidden key under both names
                out[plain] = str(v)
        return out

    def attr(self, key: str) -> str | None:
        """The string attribute ``key`` of the output node (None when absent)."""
        n = self._single_node("attr")
        if key in HIDDEN_KEYS:
            key = f"__{key}__"
        if key in n.user_attrs:
            return str(n.user_attrs[key])
        if n.op is not None and key in n.attrs:
            return str(n.attrs[key])
        return None

    def list_attr(self, recursive: bool = False) -> dict[str, str]:
        """The output node's attributes: user attributes and operator attributes set to
        a non-default value, as strings."""
        if recursive:
            return {f"{n}${k}": v for n, d in self.attr_dict().items() for k, v in d.items()}
        return self._node_attrs(self._single_node("list_attr"))

    def attr_dict(self) -> dict[str, dict[str, str]]:
        """``{node name: {attribute: value}}`` over the whole graph (nodes with any)."""
        out = {}
        for n in self._topo():
            a = self._node_attrs(n)
            if a:
                out[n.name] = a
        return out

    def _set_attr(self, **kwargs) -> None:
        """Set string attributes on the output node(s)."""
        for k, v in kwargs.items():
            if not isinstance(v, str):
                raise TypeError(f"_set_attr: attribute values must be strings, got {k}={v!r}")
        kwargs = {f"__{k}__" if k in HIDDEN_KEYS else k: v for k, v in kwargs.items()}
        for e in self._outputs:
            e.node.user_attrs.update(kwargs)

    # ------------------------------------------------------------ inference
    def _given(self, what, args, kwargs):
        arg_names = self.list_arguments()
        if len(args) > len(arg_names):
            raise ValueError(f"{what}: {len(args)} positional values for {len(arg_names)} "
                             f"arguments ({', '.join(arg_names)})")
        given = {k: v for k, v in zip(arg_names, args) if v is not None}
        inputs = set(self.list_inputs())
        for k, v in kwargs.items():
            if k not in inputs:
                raise ValueError(f"{what}: {k!r} is not an input of this symbol; inputs: "
                                 f"{', '.join(sorted(inputs))}")
            if v is not None:
                given[k] = v
        return given

    def _infer(self, shapes, dtypes, partial, default_float32=True):
        r = infer_graph(self.graph, shapes, dtypes, partial, default_float32)
        args, aux = self._arg_nodes()
        return r, [Entry(n, 0) for n in args], self._outputs, [Entry(n, 0) for n in aux]

    def infer_shape(self, *args, **kwargs):
        """Infer the shapes of the arguments, outputs and auxiliary states.

        Args:
            *args: shapes in :meth:`list_arguments` order (None to skip one).
            **kwargs: shapes by variable name.

        Returns:
            ``(arg_shapes, out_shapes, aux_shapes)``, lists of tuples; ``(None, None,
            None)`` when the given shapes do not determine them all.
        """
        r, a, o, x = self._infer(self._given("infer_shape", args, kwargs), None, False)
        groups = [[r.shape(e) for e in es] for es in (a, o, x)]
        if any(s is None or None in s for g in groups for s in g):
            return None, None, None
        return tuple(groups)

    def infer_shape_partial(self, *args, **kwargs):
        """Like :meth:`infer_shape`, but unknown dimensions come out as 0 (an unknown
        shape as ``()``) instead of giving up."""
        r, a, o, x = self._infer(self._given("infer_shape_partial", args, kwargs), None, True)

        def show(s):
            return () if s is None else tuple(0 if d is None else d for d in s)

        return tuple([show(r.shape(e)) for e in es] for es in (a, o, x))

    def infer_type(self, *args, **kwargs):
        """Infer the dtypes of the arguments, outputs and auxiliary states.

        Returns:
            ``(arg_types, out_types, aux_types)`` (numpy scalar types such as
            ``numpy.float32``); ``(None, None, None)`` when some stay unknown.
        """
        r, a, o, x = self._infer(None, self._given("infer_type", args, kwargs), True)
        groups = [[r.dtype(e) for e in es] for es in (a, o, x)]
        if any(d is None for g in groups for d in g):
            return None, None, None
        return tuple([d.type for d in g] for g in groups)

    def infer_type_partial(self, *args, **kwargs):
        """Like :meth:`infer_type`, with None for the dtypes that stay unknown (variables
        are not defaulted to float32)."""
        r, a, o, x = self._infer(None, self._given("infer_type", args, kwargs), True, False)
        return tuple([None if r.dtype(e) is None else r.dtype(e).type for e in es]
                     for es in (a, o, x))

    # ------------------------------------------------------------ serialization
    def tojson(self, remove_amp_cast: bool = True) -> str:
        """The graph in MXNet's JSON layout (``core.symbol.json_io``); ``remove_amp_cast``
        is accepted for MXNet compatibility."""
        from .json_io import graph_to_json

        return graph_to_json(self.graph)

    def save(self, fname: str, remove_amp_cast: bool = True) -> None:
        """Write :meth:`tojson` to ``fname``."""
        text = self.tojson()
        with open(fname, "w", encoding="utf-8") as f:
            f.write(text)

    # ------------------------------------------------------------ running
    def eval(self, ctx=None, **kwargs) -> list[NDArray]:
        """Run the graph once (inference mode) on ``kwargs`` (``{name: NDArray}``)."""
        from .graph import evaluate

        values = {k: _as_ndarray(v, ctx) for k, v in kwargs.items()}
        missing = [n for n in self.list_inputs() if n not in values]
        if missing:
            raise ValueError(f"eval: no value given for {', '.join(missing)}")
        graph = close_creation_shapes(self.graph, {k: v.shape for k, v in values.items()},
                                      {k: v.dtype for k, v in values.items()}, "eval")
        return evaluate(graph, values, ctx, is_train=False)[0]

    def bind(self, ctx, args, args_grad=None, grad_req="write", aux_states=None,
             group2ctx=None, shared_exec=None):
        """An executor of this symbol on ``ctx`` with the given argument arrays.

        Args:
            ctx: the context.
            args: NDArrays in :meth:`list_arguments` order, or ``{name: NDArray}``.
            args_grad: arrays receiving the gradients (list or dict), or None.
            grad_req: ``'write'``, ``'add'``, ``'null'``, a list or a dict per argument.
            aux_states: auxiliary-state arrays (list or dict).
            group2ctx, shared_exec: accepted for MXNet compatibility; ignored.

        Returns:
            A ``core.symbol.executor.Executor``.
        """
        from .executor import Executor

        arg_names = self.list_arguments()
        args = _named("bind: args", args, arg_names)
        missing = [n for n in arg_names if n not in args]
        if missing:
            raise ValueError(f"bind: no array given for argument(s) {', '.join(missing)}")
        if args_grad is not None:
            args_grad = {k: v for k, v in _named("bind: args_grad", args_grad,
                                                  arg_names).items() if v is not None}
        if isinstance(grad_req, (list, tuple)):
            grad_req = dict(zip(arg_names, grad_req))
        aux = _named("bind: aux_states", aux_states or {}, self.list_auxiliary_states())
        return Executor(self.graph, ctx, args=args, args_grad=args_grad, grad_req=grad_req,
                        aux_states=aux)

    def simple_bind(self, ctx, grad_req="write", type_dict=None, stype_dict=None,
                    group2ctx=None, shared_arg_names=None, shared_exec=None,
                    shared_buffer=None, **kwargs):
        """Allocate the arguments (zeros), their gradients and the auxiliary states from
        the shapes in ``kwargs`` (and dtypes in ``type_dict``), then :meth:`bind`."""
        from .. import nd

        arg_names = self.list_arguments()
        aux_names = self.list_auxiliary_states()
        shapes = self._given("simple_bind", (), kwargs)
        r, a, _o, x = self._infer(shapes, dict(type_dict or {}), False)
        bad = [n.node.name for n in a + x if r.shape(n) is None or None in r.shape(n)]
        if bad:
            raise ValueError(f"simple_bind: cannot infer the shapes of {', '.join(bad)}; "
                             "give more input shapes")

        def alloc(e, stype=None):
            return nd.zeros(r.shape(e), ctx=ctx, dtype=r.dtype(e) or numpy.float32,
                            stype=stype)

        stypes = dict(stype_dict or {})  # MXNet's storage types of the arguments
        args = {n: alloc(e, stypes.get(n)) for n, e in zip(arg_names, a)}
        reqs = grad_req if isinstance(grad_req, dict) else \
            dict(zip(arg_names, grad_req)) if isinstance(grad_req, (list, tuple)) else \
            {n: grad_req for n in arg_names}
        grads = {n: alloc(e) for n, e in zip(arg_names, a) if reqs.get(n, "null") != "null"}
        aux = {n: alloc(e) for n, e in zip(aux_names, x)}
        return self.bind(ctx, args, grads or None, grad_req, aux)

    # ------------------------------------------------------------ composition
    def __call__(self, *args, **kwargs) -> Symbol:
        """A copy with variables replaced by symbols (MXNet's composition):
        ``net(data=other)``; positional symbols replace :meth:`list_arguments` in order."""
        name = kwargs.pop("name", None)
        repl = {}
        for k, v in zip(self.list_arguments(), args):
            repl[k] = v
        repl.update(kwargs)
        for k, v in repl.items():
            if not isinstance(v, Symbol) or len(v) != 1:
                raise TypeError(f"Symbol composition: {k}= must be a one-output Symbol, got "
                                f"{type(v).__name__}")
        updates = dict(self._updates)
        for v in repl.values():
            updates.update(v._updates)

        def rebuild(n, inputs):
            if n.is_variable and n.name in repl:
                return repl[n.name]._outputs[0]
            c = Node(n.op, n.name, inputs, n.attrs, n.num_outputs, n.avals, n.user_attrs,
                     n.value, n.ctx)
            return c

        g = map_graph(Graph(self._outputs, updates), rebuild)
        out = Symbol.from_graph(g)
        if name is not None and len(out) == 1 and out._outputs[0].node.op is not None:
            out._outputs[0].node.name = name
        return out

    def __copy__(self) -> Symbol:
        return Symbol(self._outputs, self._updates)

    def __deepcopy__(self, memo) -> Symbol:
        return Symbol.from_graph(self.graph.copy())

    def __repr__(self) -> str:
        if len(self._outputs) == 1:
            return f"<Symbol {self.name}>"
        return f"<Symbol group [{', '.join(self.list_outputs())}]>"

    def __bool__(self):
        raise NotImplementedForSymbol(self.__bool__, "bool")

    # Pickling goes through the JSON text only, as MXNet's does: no Python object of
    # the graph is pickled, and loading parses the JSON (strict, no eval).
    def __getstate__(self):
        return {"handle": self.tojson()}

    def __setstate__(self, state):
        if not isinstance(state, dict) or not isinstance(state.get("handle"), str):
            raise TypeError("Symbol: unpickling expects the state {'handle': <JSON text>}, "
                            f"got {type(state).__name__}")
        from .json_io import graph_from_json

        g = graph_from_json(state["handle"])
        self._outputs = list(g.outputs)
        self._updates = dict(g.updates)

    # ------------------------------------------------------------ operators
    def _bin(self, opname, other, reflect=False):
        a, b = (other, self) if reflect else (self, other)
        return _compose(opname, a, b)

    def __add__(self, o): return self._bin("add", o)
    def __radd__(self, o): return self._bin("add", o, True)
    def __sub__(self, o): return self._bin("subtract", o)
    def __rsub__(self, o): return self._bin("subtract", o, True)
    def __mul__(self, o): return self._bin("multiply", o)
    def __rmul__(self, o): return self._bin("multiply", o, True)
    def __truediv__(self, o): return self._bin("divide", o)
    def __rtruediv__(self, o): return self._bin("divide", o, True)
    __div__, __rdiv__ = __truediv__, __rtruediv__
    def __floordiv__(self, o): return self._bin("floor_divide", o)
    def __rfloordiv__(self, o): return self._bin("floor_divide", o, True)
    def __mod__(self, o): return self._bin("mod", o)
    def __rmod__(self, o): return self._bin("mod", o, True)
    def __pow__(self, o): return self._bin("power", o)
    def __rpow__(self, o): return self._bin("power", o, True)
    def __eq__(self, o): return self._bin("equal", o)  # noqa: E704
    def __ne__(self, o): return self._bin("not_equal", o)
    def __lt__(self, o): return self._bin("less", o)
    def __le__(self, o): return self._bin("less_equal", o)
    def __gt__(self, o): return self._bin("greater", o)
    def __ge__(self, o): return self._bin("greater_equal", o)
    def __neg__(self): return _compose("negative", self)
    def __abs__(self): return _compose("abs", self)
    def __pos__(self): return self

    # ------------------------------------------------------------ fluent methods
    def astype(self, dtype, **kwargs) -> Symbol:
        """``sym.cast(self, dtype=dtype)``."""
        from .. import sym

        return sym.cast(self, dtype=dtype, **kwargs)

    def __getattr__(self, name: str):
        from .. import sym

        fn = getattr(sym, name, None) if name in FLUENT_METHODS else None
        if fn is None:
            raise AttributeError(f"'Symbol' object has no attribute {name!r}")

        def method(*args, **kwargs):
            return fn(self, *args, **kwargs)

        method.__name__ = name
        method.__doc__ = fn.__doc__
        return method

    def __dir__(self):
        from .. import sym

        return sorted(set(super().__dir__()) | {m for m in FLUENT_METHODS if hasattr(sym, m)})


# MXNet's fluent Symbol methods (each ``x.f(*a, **k)`` is ``sym.f(x, *a, **k)``).
FLUENT_METHODS = frozenset(["reshape", "reshape_like", "zeros_like", "ones_like", "broadcast_to", "broadcast_like", "repeat", "pad", "swapaxes", "split", "slice", "slice_axis", "slice_like", "take", "one_hot", "pick", "sort", "topk", "argsort", "argmax", "argmin", "clip", "abs", "sign", "flatten", "expand_dims", "tile", "transpose", "flip", "sum", "nansum", "prod", "mean", "max", "min", "norm", "round", "rint", "fix", "floor", "ceil", "trunc", "sin", "cos", "tan", "arcsin", "arccos", "arctan", "degrees", "radians", "sinh", "cosh", "tanh", "arcsinh", "arccosh", "arctanh", "exp", "expm1", "log", "log10", "log2", "log1p", "sqrt", "rsqrt", "cbrt", "square", "reciprocal", "relu", "sigmoid", "softmax", "log_softmax", "softmin", "squeeze", "diag", "moveaxis", "logsumexp",
                            "argmax_channel", "shape_array", "size_array", "rcbrt",
                            "broadcast_axes", "nanprod"])


# MXNet's "hidden" attribute keys: stored as ``__key__``, readable under both names.
HIDDEN_KEYS = frozenset(("ctx_group", "lr_mult", "wd_mult", "force_mirroring", "mirror_stage",
                          "profiler_scope"))


def _same(a, b) -> bool:
    try:
        return bool(a == b)
    except Exception:  # noqa: BLE001 - arrays and odd values: treat as different
        return False


def _compose(opname, *inputs) -> Symbol:
    from .constructors import compose

    return compose(REGISTRY[opname], list(inputs), {})


def _as_ndarray(v, ctx=None):
    if isinstance(v, NDArray):
        return v
    from ..ndarray import array

    return array(v, ctx=ctx)


def _named(what, values, names) -> dict:
    if values is None:
        return {}
    if isinstance(values, dict):
        unknown = [k for k in values if k not in names]
        if unknown:
            raise ValueError(f"{what}: unknown name(s) {', '.join(map(repr, unknown))}; "
                             f"expected some of {', '.join(names)}")
        return dict(values)
    values = list(values)
    if len(values) != len(names):
        raise ValueError(f"{what}: {len(values)} arrays for {len(names)} names "
                         f"({', '.join(names)})")
    return dict(zip(names, values))


_LAZY = ("Group", "NameManager", "Prefix", "Variable", "compose", "load", "load_json", "var")


def __getattr__(name: str):
    """``var``, ``Group``, ``load``, ... live in ``core.symbol.constructors`` (which
    imports this module); they are reachable here too."""
    if name in _LAZY:
        from . import constructors

        return getattr(constructors, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")

