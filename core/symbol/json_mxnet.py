"""MXNet 1.x names for the graph JSON reader: operator aliases and dtype codes.

Files written by MXNet 1.x name operators by MXNet's internal spellings (``Flatten``,
``elemwise_add``, ``_plus_scalar``, ``_random_uniform``) and give variables' ``__dtype__``
as MXNet's numeric codes. :func:`_resolve_op` maps an operator name of a file to one of
the registry's operators (with the attribute defaults ``core.nd`` gives it and, for the
``*_scalar`` operators, the input position of the scalar); ``MX_DTYPE_CODES``/``MX_DTYPE_NAMES`` map
the dtype codes. Only names that are exactly one of our operators are accepted.
:mod:`core.symbol.json_io` is the user of both.
"""
from __future__ import annotations

from ..ops.registry import REGISTRY

# MXNet's numeric dtype codes (``__dtype__`` of its variables), both ways.
MX_DTYPE_CODES = {"float32": 0, "float64": 1, "float16": 2, "uint8": 3, "int32": 4, "int8": 5,
                  "int64": 6, "bool": 7, "int16": 8, "uint16": 9, "uint32": 10, "uint64": 11,
                  "bfloat16": 12}
MX_DTYPE_NAMES = {code: name for name, code in MX_DTYPE_CODES.items()}


def _mxnet_aliases() -> dict:
    """``{MXNet 1.x JSON op name: (our op, attr defaults, scalar position)}``.

    Built from the ``core.nd`` names of the registry (MXNet's own API names) plus
    MXNet's internal operator names that are exactly one of ours.
    """
    table = {}

    def add(mx_name, op_name, defaults=None, scalar=None, ignore=()):
        op = REGISTRY.get(op_name)
        # A registry name stands for its own operator, except where core.nd gives it
        # MXNet's defaults (``sum`` with MXNet's axis rules, ``argmax`` -> float32).
        # (``identity`` is MXNet's copy, and NumPy's identity matrix in the registry.)
        own = REGISTRY.get(mx_name)
        if op is None or mx_name in table or (own is op and not defaults and not ignore):
            return
        table[mx_name] = (op, dict(defaults or {}), scalar, frozenset(ignore))

    for op in list(REGISTRY.values()):
        for entry in op.nd:
            full, defaults = (entry, None) if isinstance(entry, str) else entry
            head, _, tail = full.rpartition(".")
            if head == "":
                add(tail, op.name, defaults)
                if tail.startswith("sample_"):
                    add("_" + tail, op.name, defaults)
            elif head in ("contrib", "linalg", "random"):
                add(f"_{head}_{tail}", op.name, defaults)
    for names, ours in (
            (("_plus", "_Plus", "_add"), "add"), (("_minus", "_Minus", "_sub"), "subtract"),
            (("_mul", "_Mul"), "multiply"), (("_div", "_Div"), "divide"),
            (("_mod", "_Mod"), "mod"), (("_power", "_Power"), "power"),
            (("_maximum", "_Maximum"), "maximum"), (("_minimum", "_Minimum"), "minimum"),
            (("_hypot",), "hypot"), (("_zeros",), "zeros"), (("_ones",), "ones")):
        for name in names:
            add(name, ours)
    for mx, ours in (("plus", "add"), ("minus", "subtract"), ("mul", "multiply"),
                     ("div", "divide"), ("mod", "mod"), ("power", "power"),
                     ("maximum", "maximum"), ("minimum", "minimum"), ("hypot", "hypot"),
                     ("equal", "equal"), ("not_equal", "not_equal"), ("greater", "greater"),
                     ("greater_equal", "greater_equal"), ("lesser", "less"),
                     ("lesser_equal", "less_equal"), ("logical_and", "logical_and"),
                     ("logical_or", "logical_or"), ("logical_xor", "logical_xor")):
        add(f"_{mx}_scalar", ours, scalar=1)
        if mx in ("minus", "div", "mod", "power"):
            add(f"_r{mx}_scalar", ours, scalar=0)
    # MXNet operators that are one of ours under another name; MXNet's attributes that
    # only choose visible outputs are accepted and ignored (ours shows them all).
    add("LayerNorm", "_layer_norm", ignore=("output_mean_var",))
    add("InstanceNorm", "_instance_norm")
    add("GroupNorm", "_group_norm", ignore=("output_mean_var",))
    add("stack", "stack", ignore=("num_args",))
    for name in ("add_n", "ElementWiseSum", "elemwise_sum"):  # MXNet writes num_args
        add(name, "add_n", ignore=("num_args",))
    add("_rnn_param_concat", "concatenate", {"axis": 1})  # Gluon RNN layers' parameters
    return table


_ALIASES: dict | None = None


def _resolve_op(name: str, ours: bool):
    """``(op, attribute defaults, scalar input position, MXNet attributes to ignore)``
    for an op name of a file."""
    global _ALIASES
    op = REGISTRY.get(name)
    if ours:
        return op, {}, None, frozenset()
    if _ALIASES is None:
        _ALIASES = _mxnet_aliases()
    return _ALIASES.get(name, (op, {}, None, frozenset()))


# MXNet's hidden attribute keys: a legacy file (before 1.9.1) may spell them without
# the underscores, on the node or prefixed by an input's name (``weight_lr_mult``).
HIDDEN_KEYS = ("ctx_group", "lr_mult", "wd_mult", "force_mirroring", "mirror_stage")


def _softmax_activation(name: str, attrs: dict, data):
    """MXNet's ``SoftmaxActivation`` as our softmax: over axis 1 (``channel``), or over the
    last axis (``instance``: MXNet flattens all axes but the last one into instances)."""
    from .graph import Node

    mode = attrs.pop("mode", "instance").strip().strip("'\"")
    if attrs:
        raise ValueError(f"unknown attribute(s) {sorted(attrs)} (SoftmaxActivation "
                         "accepts: mode)")
    if mode not in ("instance", "channel"):
        raise ValueError(f"SoftmaxActivation: mode must be 'instance' or 'channel', got "
                         f"{mode!r}")
    op = REGISTRY["softmax"]
    return Node(op, name, [data, None], dict(op.attrs, axis=1 if mode == "channel" else -1))


# MXNet operators we have no registry entry for, read as our nodes:
# ``f(name, attrs as text, data entry) -> Node``.
EXPANSIONS = {"SoftmaxActivation": _softmax_activation}
