"""The building blocks of ``core.symbol`` (``core.sym``): node names, operator output
counts, adding a node (:func:`compose`), variables and groups.

Example:
    >>> from core.symbol.constructors import NameManager, var, compose
    >>> from core.ops.registry import REGISTRY
    >>> with NameManager():
    ...     y = compose(REGISTRY["relu"], [var("x")], {})
    >>> y.list_outputs()
    ['relu0_output']
"""
from __future__ import annotations

import numbers
import threading
from collections.abc import Iterable, Sequence

import numpy

from ..name import NameManager, Prefix  # noqa: F401 - core.sym's names (MXNet's mx.name)
from ..ndarray import NDArray
from ..ops.registry import Aval, OpDef
from .graph import Entry, Node
from .shape_infer import dtype_code, parse_dtype
from .symbol import HIDDEN_KEYS, Symbol, _lstm, _plain, op_visible_outputs


# --------------------------------------------------------------------------- names
class AttrScope:
    """String attributes given to every node and variable created inside the block
    (MXNet's ``mx.AttrScope``); explicit ``attr=`` values win.

    Example:
        >>> with AttrScope(ctx_group="dev1"):
        ...     x = var("x")
        >>> x.attr("ctx_group")
        'dev1'
    """

    _tls = threading.local()

    def __init__(self, **kwargs):
        for k, v in kwargs.items():
            if not isinstance(v, str):
                raise TypeError(f"AttrScope: attribute values must be strings, got {k}={v!r}")
        self._attr = kwargs
        self._old = None

    def get(self, attr: dict | None) -> dict:
        """``attr`` over this scope's attributes (and the enclosing scopes')."""
        return dict(self._attr, **(attr or {}))

    def __enter__(self):
        self._old = AttrScope.current()
        merged = AttrScope(**self._old.get(self._attr)) if self._old is not None else self
        AttrScope._tls.current = merged
        return self

    def __exit__(self, *exc):
        AttrScope._tls.current = self._old

    @staticmethod
    def current() -> AttrScope | None:
        return getattr(AttrScope._tls, "current", None)


def _scoped(attr):
    scope = AttrScope.current()
    return scope.get(attr) if scope is not None else attr


# --------------------------------------------------------------------------- op facts
def _split_count(a):
    if a.get("num_outputs"):
        return int(a["num_outputs"])
    ios = a.get("indices_or_sections")
    if isinstance(ios, numbers.Integral):
        return int(ios)
    if isinstance(ios, (list, tuple)):
        return len(ios) + 1
    return None


# Output counts of the multi-output operators (when the input shapes are unknown).
_NUM_OUTPUTS = {
    "linalg_slogdet": 2, "linalg_qr": 2, "linalg_svd": 3, "linalg_eigh": 2, "linalg_syevd": 2,
    "_rrelu": 2, "_norm_grad": 3, "_layer_norm": 3, "_instance_norm": 3, "_group_norm": 3,
    "_batch_norm_train": 3, "Dropout": 2, "split": _split_count, "array_split": _split_count,
    "topk": lambda a: 2 if a.get("ret_typ") == "both" else 1,
    "RNN": lambda a: 4 if _lstm(a) else 3,
    "_rnn_backward": lambda a: 4 if _lstm(a) else 3,
    "random_multinomial": lambda a: 2 if a.get("get_prob") else 1,
}
_PROBE_SHAPES = ((2, 3, 4, 5), (2, 3), (2, 3, 4), (6,))


def op_num_outputs(op: OpDef, attrs: dict, in_avals: Sequence | None = None) -> int:
    """How many outputs ``op`` has with ``attrs``.

    From the operator's ``infer`` rule when ``in_avals`` (one Aval or literal per input)
    are all known, else from a table of the multi-output operators, else by running
    ``infer`` on stand-in shapes; 1 when nothing answers.
    """
    attrs = _plain(attrs)
    if in_avals is not None and op.infer is not None:
        try:
            out = op.infer(*in_avals, **attrs)
            return len(out) if isinstance(out, (tuple, list)) else 1
        except Exception:  # noqa: BLE001, S110 - fall back to the table
            pass
    rule = _NUM_OUTPUTS.get(op.name)
    if rule is not None:
        n = rule(attrs) if callable(rule) else rule
        if n:
            return n
    if op.infer is None:
        return 1
    for shape in _PROBE_SHAPES:
        avals = []
        for i, name in enumerate(op.inputs):
            if name.endswith("?"):
                avals.append(None)
            else:
                avals.append(Aval(shape if i == 0 else (shape[1 if len(shape) > 1 else 0],),
                                  "float32"))
        try:
            out = op.infer(*avals, **attrs)
        except Exception:  # noqa: BLE001, S112 - try the next stand-in
            continue
        return len(out) if isinstance(out, (tuple, list)) else 1
    return 1


# --------------------------------------------------------------------------- building
def _constant(value, name=None) -> Entry:
    data = value._data if isinstance(value, NDArray) else numpy.asarray(value)
    ctx = value.context if isinstance(value, NDArray) else None
    nm = NameManager.current().get(name, "_const")
    node = Node(None, nm, avals=[Aval(data.shape, data.dtype)], value=data, ctx=ctx)
    return Entry(node, 0)


def compose(op: OpDef, inputs: Sequence, attrs: dict, name: str | None = None,
            user_attrs: dict | None = None, ctx=None, visible: int | None = None,
            hint: str | None = None, final_name: bool = False) -> Symbol:
    """Add one node calling ``op`` on ``inputs`` and return the Symbol of its outputs.

    Args:
        op: the operator.
        inputs: one per input slot: a one-output Symbol, an NDArray/NumPy array (a
            constant node), or a literal (a Python scalar or None).
        attrs: the operator's attributes (complete; :data:`TRAIN` allowed).
        name: the node's name (default: the current NameManager's ``"<hint><k>"``).
        user_attrs: string attributes of the node (MXNet's ``attr=``).
        ctx: the node's context (operators without array inputs).
        visible: how many outputs the Symbol shows (default: the operator's rule).
        hint: the automatic name's stem (default: the operator's name in lower case).
        final_name: ``name`` was given by the NameManager already (use it as it is).

    Returns:
        The Symbol; its updates are its inputs' plus the operator's own (``op.updates``:
        the variable in an updated input slot takes that output's value).
    """
    slots = []
    updates: dict = {}
    avals = []
    for pos, x in enumerate(inputs):
        if isinstance(x, Symbol):
            if len(x._outputs) != 1:
                raise TypeError(
                    f"{op.name}: input {_slot_name(op, pos)!r} is a symbol with "
                    f"{len(x._outputs)} outputs ({', '.join(x.list_outputs())}); pass one "
                    "output (sym[i])")
            e = x._outputs[0]
            slots.append(e)
            updates.update(x._updates)
            avals.append(e.node.avals[e.index] if e.node.avals else None)
        elif isinstance(x, (NDArray, numpy.ndarray)):
            e = _constant(x)
            slots.append(e)
            avals.append(e.node.avals[0])
        elif x is None or isinstance(x, (numbers.Number, str, numpy.generic)):
            slots.append(x)
            avals.append(x)
        elif isinstance(x, (list, tuple)):
            e = _constant(numpy.asarray(x))
            slots.append(e)
            avals.append(e.node.avals[0])
        else:
            raise TypeError(f"{op.name}: input {_slot_name(op, pos)!r} must be a Symbol, an "
                            f"array or a scalar, got {type(x).__name__}")
    known = all(a is not None for a, s in zip(avals, slots) if isinstance(s, Entry))
    nout = op_num_outputs(op, attrs, avals if known else None)
    stem = hint if hint is not None else op.name.lower().lstrip("_")
    node_name = name if final_name and name else NameManager.current().get(name, stem)
    node = Node(op, node_name, slots, attrs, nout,
                user_attrs=_check_user_attrs(op.name, _scoped(user_attrs)), ctx=ctx)
    for pos, out_pos in (op.updates or {}).items():
        e = slots[pos] if pos < len(slots) else None
        if isinstance(e, Entry) and e.node.is_variable:
            updates[e.node] = Entry(node, out_pos)
    nvis = visible if visible is not None else op_visible_outputs(op, attrs, nout)
    return Symbol([Entry(node, i) for i in range(nvis)], updates)


def _slot_name(op, pos):
    if op.variadic or pos >= len(op.inputs):
        return f"{op.inputs[0] if op.inputs else 'input'}[{pos}]"
    return op.inputs[pos].rstrip("?")


def _check_user_attrs(opname, attrs) -> dict:
    if not attrs:
        return {}
    if not isinstance(attrs, dict):
        raise TypeError(f"{opname}: attr= must be a dict of strings, got {type(attrs).__name__}")
    for k, v in attrs.items():
        if not isinstance(v, str):
            raise TypeError(f"{opname}: attr values must be strings, got {k}={v!r}")
    return {f"__{k}__" if k in HIDDEN_KEYS else k: v for k, v in attrs.items()}


def var(name: str, attr: dict | None = None, shape=None, lr_mult=None, wd_mult=None,
        dtype=None, init=None, stype=None, **kwargs) -> Symbol:
    """A variable: a named input of the graph (MXNet's ``sym.var``/``sym.Variable``).

    Args:
        name: its name.
        attr: extra string attributes.
        shape: its shape (0 for unknown dimensions), stored as ``__shape__``.
        lr_mult, wd_mult: learning-rate and weight-decay multipliers
            (``__lr_mult__``, ``__wd_mult__``).
        dtype: its dtype, stored as MXNet's type code in ``__dtype__``.
        init: an initializer (``core.initializer``) or its JSON string (``__init__``).
        stype: the storage type (``'default'``, ``'row_sparse'``, ``'csr'``), stored as
            MXNet's code in ``__storage_type__``; a graph computes on dense values
            (sparse arrays fed to it are read densely), and Module creates sparse
            parameters of that storage type.
        **kwargs: more attributes (``__key__`` style names are kept as they are).

    Returns:
        A one-output Symbol.

    Example:
        >>> x = var("x", shape=(2, 3), dtype="float32", lr_mult=2.0)
        >>> sorted(x.list_attr().items())
        [('__dtype__', '0'), ('__lr_mult__', '2.0'), ('__shape__', '(2, 3)'), ('lr_mult', '2.0')]
    """
    if not isinstance(name, str) or not name:
        raise TypeError(f"var: name must be a non-empty string, got {name!r}")
    ua = dict(_check_user_attrs("var", _scoped(attr)))
    if shape is not None:
        if isinstance(shape, numbers.Integral):
            shape = (shape,)
        ua["__shape__"] = str(tuple(int(d) for d in shape))
    if lr_mult is not None:
        ua["__lr_mult__"] = str(lr_mult)
    if wd_mult is not None:
        ua["__wd_mult__"] = str(wd_mult)
    if dtype is not None:
        ua["__dtype__"] = dtype_code(dtype)
    if init is not None:
        ua["__init__"] = init if isinstance(init, str) else _init_string(init)
    if stype is not None:
        codes = {"default": 0, "row_sparse": 1, "csr": 2}  # MXNet's storage-type codes
        if stype not in codes:
            raise ValueError(f"var: stype must be one of {sorted(codes)}, got {stype!r}")
        ua["__storage_type__"] = str(codes[stype])
    for k, v in kwargs.items():
        if k.startswith("__") and k.endswith("__"):
            ua[k] = str(v)
        else:
            raise TypeError(f"var: unexpected keyword argument {k!r}")
    avals = None
    if shape is not None and dtype is not None and all(int(d) > 0 for d in shape):
        avals = [Aval(tuple(int(d) for d in shape), parse_dtype(dtype))]
    return Symbol([Entry(Node(None, name, avals=avals, user_attrs=ua), 0)])


Variable = var


def _init_string(init) -> str:
    dumps = getattr(init, "dumps", None)
    if callable(dumps):
        return dumps()
    return str(init)


def Group(symbols: Iterable[Symbol]) -> Symbol:
    """One symbol with the outputs of all ``symbols``, in order.

    Example:
        >>> a, b = var("a"), var("b")
        >>> with NameManager():
        ...     g = Group([a + b, a * b])
        >>> g.list_outputs()
        ['add0_output', 'multiply0_output']
    """
    outs, updates = [], {}
    for s in symbols:
        if not isinstance(s, Symbol):
            raise TypeError(f"Group: expects Symbols, got {type(s).__name__}")
        outs.extend(s._outputs)
        updates.update(s._updates)
    if not outs:
        raise ValueError("Group: needs at least one symbol")
    return Symbol(outs, updates)


def load_json(json_str: str) -> Symbol:
    """The symbol stored in MXNet's JSON layout (``core.symbol.json_io``)."""
    from .json_io import graph_from_json

    return Symbol.from_graph(graph_from_json(json_str))


def load(fname: str) -> Symbol:
    """The symbol saved in file ``fname`` by :meth:`Symbol.save`."""
    with open(fname, encoding="utf-8") as f:
        return load_json(f.read())
