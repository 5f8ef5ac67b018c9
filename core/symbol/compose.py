"""Binding ``core.sym`` calls to graph nodes: the generated functions and the overrides.

Every registered operator is callable on Symbols under its ``core.nd`` names. A call
binds its arguments as ``core.nd`` does (positional inputs, then attributes; inputs by
name or by MXNet's aliases ``data``/``lhs``/``rhs``), and adds one node:

- an input left out becomes a new variable ``"<node>_<input>"`` (``fc1_weight``), as
  MXNet creates parameters; an optional input (``bias?``) only when the attributes
  need it (``no_bias=False``, ``act_type='prelu'``, ``use_length=True``...: the rules
  each operator declares, ``defop``'s ``optional_inputs=``);
- ``name=`` names the node (default ``"<operator><k>"``), ``attr=`` gives it string
  attributes;
- an operator with a ``training`` attribute gets :data:`~core.symbol.graph.TRAIN`
  (the executor's mode) unless the call sets it.

The functions ``core.nd`` defines by hand (``NAMESPACE_OVERRIDES``) have symbolic
counterparts here: ``Dropout``, ``BatchNorm``, ``RNN`` and ``LeakyReLU`` are their
operators with ``training=TRAIN``; the normalizations are their operators with one
visible output; ``softmin`` and ``SoftmaxActivation`` are composed. Any other override
runs its ``core.nd`` function with the operator calls recorded as nodes.
"""
from __future__ import annotations

import sys

from ..ndarray import NDArray
from ..ops import abstract as _abstract
from ..ops import namespace as _namespace
from ..ops.namespace import pop_context
from ..ops.registry import REGISTRY, OpDef
from .constructors import HIDDEN_KEYS, NameManager, compose, var
from .graph import TRAIN
from .symbol import Symbol

_MISSING = object()


def _is_input_value(x) -> bool:
    return isinstance(x, (Symbol, NDArray)) or hasattr(x, "__array__") and \
        not isinstance(x, (int, float, bool, complex))


def bind_call(op: OpDef, args, kwargs, hint: str | None = None, visible: int | None = None,
              defaults: dict | None = None) -> Symbol:
    """Bind a ``core.sym`` call of ``op`` and add its node (see the module doc)."""
    kwargs = dict(kwargs)
    name = kwargs.pop("name", None) if "name" not in op.attrs else None
    user_attrs = kwargs.pop("attr", None)
    hidden = {k: str(kwargs.pop(k)) for k in HIDDEN_KEYS if k in kwargs and k not in op.attrs}
    # MXNet: any ``__key__=`` keyword (``__layout__``, ``__shape__``) is a node attribute
    hidden.update({k: str(kwargs.pop(k)) for k in list(kwargs)
                   if len(k) > 4 and k.startswith("__") and k.endswith("__")})
    if hidden:  # MXNet: ``lr_mult=`` and the other hidden keys are node attributes
        user_attrs = dict(user_attrs or {}, **hidden)
    if kwargs.pop("out", None) is not None:
        raise TypeError(f"{op.name}: out= is not supported on symbols")
    ctx = pop_context(kwargs)
    if op.random and all(k.endswith("?") for k in op.inputs):
        # MXNet's random creation operators take no inputs, and its compose ignores a
        # Symbol passed by a keyword they do not have (sym.random.randn(data=x) in its tests)
        for k in [k for k, v in kwargs.items() if isinstance(v, Symbol)
                  and k not in {i.rstrip("?") for i in op.inputs}]:
            del kwargs[k]
    for k, v in (defaults or {}).items():
        kwargs.setdefault(k, v)
    stem = hint if hint is not None else op.name.lower().lstrip("_")
    node_name = NameManager.current().get(name, stem)
    input_names = [k.rstrip("?") for k in op.inputs]
    if op.variadic:
        if args and isinstance(args[0], (list, tuple)):
            inputs, rest = list(args[0]), tuple(args[1:])
        else:
            n = 0
            while n < len(args) and _is_input_value(args[n]):
                n += 1
            inputs, rest = list(args[:n]), tuple(args[n:])
        for k in input_names + ["data"]:
            if k in kwargs and k not in op.attrs:
                v = kwargs.pop(k)
                inputs = list(v) if isinstance(v, (list, tuple)) else [v]
        if not inputs:
            raise TypeError(f"{op.name}: needs at least one input symbol")
    else:
        n_in = len(op.inputs)
        slots = list(args[:n_in]) + [_MISSING] * max(0, n_in - len(args))
        rest = tuple(args[n_in:])
        for i, k in enumerate(input_names):
            if slots[i] is not _MISSING:
                continue
            if k in kwargs:
                slots[i] = kwargs.pop(k)
                continue
            alias = next((a for a in _namespace._INPUT_ALIASES if a in kwargs and a not in op.attrs
                          and a not in input_names), None)
            if alias is not None:
                slots[i] = kwargs.pop(alias)
        inputs = slots
    attrs = _bind_attrs(op, rest, kwargs)
    if not op.variadic:
        for i, (k, raw) in enumerate(zip(input_names, op.inputs)):
            if inputs[i] is not _MISSING:
                continue
            va = user_attrs
            init = _INPUT_VAR_INIT.get((op.name, k))
            if init is not None and "__init__" not in (user_attrs or {}):
                va = dict(user_attrs or {}, __init__=init)
            if raw.endswith("?"):
                rule = (op.optional_inputs or {}).get(k)
                inputs[i] = var(f"{node_name}_{k}", attr=va) \
                    if rule is not None and rule(attrs) else None
            else:
                inputs[i] = var(f"{node_name}_{k}", attr=va)
    return compose(op, inputs, attrs, name=node_name, user_attrs=user_attrs, ctx=ctx,
                   visible=visible, final_name=True)


# The initializers MXNet's operators give the input variables a Symbol call creates
# (their FSetInputVarAttrOnCompose): (operator, input) -> the variable's __init__.
_INPUT_VAR_INIT = {("LeakyReLU", "gamma"): '["Constant", {"value": 0.25}]'}


def _bind_attrs(op: OpDef, rest, kwargs) -> dict:
    names = list(op.attrs)
    if len(rest) > len(names):
        raise TypeError(f"{op.name}: got {len(rest)} positional arguments after the inputs, "
                        f"but only {len(names)} attributes exist ({', '.join(names) or 'none'})")
    attrs = dict(op.attrs)
    set_keys = set()
    for k, v in zip(names, rest):
        attrs[k] = v
        set_keys.add(k)
    for k, v in kwargs.items():
        if k not in attrs:
            if not names:  # MXNet's operators without parameters ignore other keywords
                continue
            accepted = [i.rstrip("?") for i in op.inputs] + names
            raise TypeError(f"{op.name}: unexpected keyword argument {k!r}; accepted: "
                            f"{', '.join(accepted)}, name, attr")
        attrs[k] = v
        set_keys.add(k)
    if "training" in attrs and "training" not in set_keys:
        attrs["training"] = TRAIN
    return attrs


def make_function(op: OpDef, public_name: str, defaults: dict | None = None, hint=None,
                  visible=None):
    """The ``core.sym`` function ``public_name`` for operator ``op``."""

    def f(*args, **kwargs):
        return bind_call(op, args, kwargs, hint=hint, visible=visible, defaults=defaults)

    f.__name__ = public_name.rsplit(".", 1)[-1]
    f.__qualname__ = f.__name__
    attrs = dict(op.attrs, **(defaults or {}))
    sig = ", ".join([i.rstrip("?") for i in op.inputs] + [f"{k}={v!r}" for k, v in attrs.items()])
    f.__doc__ = (f"{f.__name__}({sig}, name=None, attr=None)\n\n{op.doc}\n\nOperator "
                 f"``{op.name}`` of the registry, on Symbols; inputs left out become "
                 "variables ``<name>_<input>``.")
    f.op = op
    return f


# --------------------------------------------------------------------------- overrides
def _split_name(kwargs):
    return kwargs.pop("name", None), kwargs.pop("attr", None)


def BatchNorm(data=None, gamma=None, beta=None, moving_mean=None, moving_var=None, **kwargs):
    """MXNet's ``BatchNorm`` on Symbols: the ``BatchNorm`` operator in the executor's mode;
    ``moving_mean``/``moving_var`` are auxiliary states (updated by training runs).

    Example:
        >>> from core import sym
        >>> bn = sym.BatchNorm(sym.var("x"), name="bn")
        >>> bn.list_arguments(), bn.list_auxiliary_states()
        (['x', 'bn_gamma', 'bn_beta'], ['bn_moving_mean', 'bn_moving_var'])
    """
    op = REGISTRY.get("BatchNorm")
    ins = {"data": data, "gamma": gamma, "beta": beta, "moving_mean": moving_mean,
           "moving_var": moving_var}
    if op is None:  # before the mode-dependent BatchNorm operator exists: inference only
        op = REGISTRY["_batch_norm_infer"]
        for k in ("momentum", "use_global_stats", "output_mean_var", "cudnn_off",
                  "min_calib_range", "max_calib_range"):
            kwargs.pop(k, None)
    else:
        for k in ("cudnn_off", "min_calib_range", "max_calib_range"):
            if k not in op.attrs:
                kwargs.pop(k, None)
    kwargs.update({k: v for k, v in ins.items() if v is not None})
    return bind_call(op, (), kwargs, hint="batchnorm")


def RNN(data=None, parameters=None, state=None, state_cell=None, sequence_length=None,
        **kwargs):
    """MXNet's fused ``RNN`` on Symbols (dropout between layers in training runs only);
    ``parameters``, ``state`` (and ``state_cell`` for LSTM) left out become variables."""
    mode = kwargs.get("mode")
    if (mode != "lstm" and kwargs.get("use_sequence_length") and sequence_length is None
            and state_cell is not None):
        state_cell, sequence_length = None, state_cell  # MXNet's order without a cell
    ins = {"data": data, "parameters": parameters, "state": state, "state_cell": state_cell,
           "sequence_length": sequence_length}
    kwargs.update({k: v for k, v in ins.items() if v is not None})
    return bind_call(REGISTRY["RNN"], (), kwargs, hint="rnn")


def LeakyReLU(data=None, gamma=None, act_type="leaky", slope=0.25, lower_bound=0.125,
              upper_bound=0.334, **kwargs):
    """MXNet's ``LeakyReLU`` on Symbols; ``prelu`` creates ``<name>_gamma``; ``rrelu``
    draws slopes in training runs only."""
    if act_type == "rrelu":
        kw = dict(kwargs, lower_bound=lower_bound, upper_bound=upper_bound)
        if data is not None:
            kw["x"] = data
        return bind_call(REGISTRY["_rrelu"], (), kw, hint="leakyrelu")
    kw = dict(kwargs, act_type=act_type, slope=slope, lower_bound=lower_bound,
              upper_bound=upper_bound)
    if data is not None:
        kw["data"] = data
    if gamma is not None:
        kw["gamma"] = gamma
    return bind_call(REGISTRY["LeakyReLU"], (), kw, hint="leakyrelu")


def _norm(opname, hint, data, gamma, beta, output_mean_var, kwargs):
    kw = dict(kwargs)
    for k, v in (("data", data), ("gamma", gamma), ("beta", beta)):
        if v is not None:
            kw[k] = v
    return bind_call(REGISTRY[opname], (), kw, hint=hint, visible=3 if output_mean_var else 1)


def LayerNorm(data=None, gamma=None, beta=None, axis=-1, eps=1e-5, output_mean_var=False,
              **kwargs):
    """MXNet's ``LayerNorm`` on Symbols (``out``, or ``out, mean, std``)."""
    return _norm("_layer_norm", "layernorm", data, gamma, beta, output_mean_var,
                 dict(kwargs, axis=axis, eps=eps))


def InstanceNorm(data=None, gamma=None, beta=None, eps=1e-3, **kwargs):
    """MXNet's ``InstanceNorm`` on Symbols."""
    return _norm("_instance_norm", "instancenorm", data, gamma, beta, False,
                 dict(kwargs, eps=eps))


def GroupNorm(data=None, gamma=None, beta=None, num_groups=1, eps=1e-5, output_mean_var=False,
              **kwargs):
    """MXNet's ``GroupNorm`` on Symbols (``out``, or ``out, mean, std``)."""
    return _norm("_group_norm", "groupnorm", data, gamma, beta, output_mean_var,
                 dict(kwargs, num_groups=num_groups, eps=eps))


def softmin(data=None, length=None, axis=-1, temperature=None, dtype=None, use_length=False,
            **kwargs):
    """MXNet's ``softmin`` on Symbols: ``softmax(-data)``."""
    name, attr = _split_name(kwargs)
    if kwargs:
        raise TypeError(f"softmin: unexpected keyword argument(s) {sorted(kwargs)}")
    if data is None:
        data = var(f"{NameManager.current().get(name, 'softmin')}_data")
        name = data.name[: -len("_data")]
    kw = {"axis": axis, "temperature": temperature, "dtype": dtype, "use_length": use_length,
          "name": name, "attr": attr}
    if length is not None:
        kw["length"] = length
    return bind_call(REGISTRY["softmax"], (-data,), kw, hint="softmin")


def SoftmaxActivation(data=None, mode="instance", **kwargs):
    """MXNet's ``SoftmaxActivation`` on Symbols: softmax over every axis but the first
    (``mode='instance'``) or over axis 1 (``mode='channel'``)."""
    name, attr = _split_name(kwargs)
    if kwargs:
        raise TypeError(f"SoftmaxActivation: unexpected keyword argument(s) {sorted(kwargs)}")
    if mode not in ("instance", "channel"):
        raise ValueError(f"SoftmaxActivation: mode must be 'instance' or 'channel', got {mode!r}")
    if data is None:
        data = var(f"{NameManager.current().get(name, 'softmaxactivation')}_data")
    if mode == "channel":
        return bind_call(REGISTRY["softmax"], (data,), {"axis": 1, "name": name, "attr": attr},
                         hint="softmaxactivation")
    red = {"axis": 0, "exclude": True, "keepdims": True}
    m = bind_call(REGISTRY["max"], (data,), dict(red))
    e = bind_call(REGISTRY["exp"], (data - m,), {})
    s = bind_call(REGISTRY["sum"], (e,), dict(red))
    return bind_call(REGISTRY["divide"], (e, s), {"name": name, "attr": attr},
                     hint="softmaxactivation")


def concat(*data, dim: int = 1, num_args=None, **kwargs):
    """MXNet's ``concat``/``Concat``: join symbols along ``dim`` (default 1)."""
    if len(data) == 1 and isinstance(data[0], (list, tuple)):
        data = tuple(data[0])
    return bind_call(REGISTRY["concatenate"], (list(data),), dict(kwargs, axis=dim),
                     hint="concat")


def stack(*data, axis: int = 0, num_args=None, **kwargs):
    """MXNet's ``stack``: join symbols along a new axis."""
    if len(data) == 1 and isinstance(data[0], (list, tuple)):
        data = tuple(data[0])
    return bind_call(REGISTRY["stack"], (list(data),), dict(kwargs, axis=axis), hint="stack")


def BlockGrad(data=None, **kwargs):
    """Identity in the forward pass that stops the gradient (MXNet's ``BlockGrad``)."""
    op = REGISTRY["BlockGrad"]
    if data is not None:
        kwargs[op.inputs[0].rstrip("?")] = data
    return bind_call(op, (), kwargs, hint="blockgrad")


EXPLICIT = {"BatchNorm": BatchNorm, "batch_norm": BatchNorm, "RNN": RNN,
            "LeakyReLU": LeakyReLU, "LayerNorm": LayerNorm, "layer_norm": LayerNorm,
            "InstanceNorm": InstanceNorm, "GroupNorm": GroupNorm, "softmin": softmin,
            "SoftmaxActivation": SoftmaxActivation,
            "Dropout": lambda *a, **k: bind_call(REGISTRY["Dropout"], a, k, hint="dropout")}
EXPLICIT["Dropout"].__name__ = "Dropout"
EXPLICIT["Dropout"].__doc__ = ("MXNet's ``Dropout`` on Symbols: drops units in training runs "
                               "(``training=TRAIN``), passes data through otherwise.")


# --------------------------------------------------------------------------- recording
class _Recorder:
    """Turns operator calls on Symbols into nodes while an ``nd`` override runs."""

    def record(self, op, inputs, attrs, ctx):
        # random operators are nodes even without Symbol inputs (each run draws anew)
        if not op.random and not any(isinstance(x, Symbol) for x in inputs):
            return None
        s = compose(op, list(inputs), dict(attrs), ctx=ctx, visible=None)
        node = s.outputs[0].node
        outs = tuple(Symbol([e], s._updates) for e in node.entries())
        return outs if len(outs) > 1 else outs[0]

    def made_here(self, outs) -> None:
        """Values computed concretely while recording need no bookkeeping here."""


def _give_back_name(auto: str) -> None:
    """An explicitly named node does not use up its automatic name (MXNet's NameManager
    counts only nodes it names): undo the count if ``auto`` was the last one given."""
    from ..name import NameManager

    counter = getattr(NameManager.current(), "_counter", None)
    for stem, n in (counter or {}).items():
        if n > 0 and auto == f"{stem}{n - 1}":
            counter[stem] = n - 1
            return


def traced(fn, public_name: str):
    """``fn`` (a ``core.nd`` function) on Symbols: its operator calls become nodes."""

    def f(*args, **kwargs):
        name, attr = _split_name(kwargs)
        prev = _abstract._enter_tracer(_Recorder())
        try:
            out = fn(*args, **kwargs)
        finally:
            _abstract._exit_tracer(prev)
        if isinstance(out, Symbol) and len(out) == 1 and out.outputs[0].node.op is not None:
            node = out.outputs[0].node
            # named as MXNet names its operator: the given name, else the function's own
            # stem (argmax_channel0, not the argmax0 its composite ends with)
            _give_back_name(node.name)
            from ..name import NameManager

            node.name = NameManager.current().get(name, public_name.rsplit(".", 1)[-1].lower())
            if attr:
                node.user_attrs.update(attr)
        return out

    f.__name__ = public_name.rsplit(".", 1)[-1]
    f.__doc__ = fn.__doc__
    return f


def namespace(prefix: str = "") -> dict:
    """The ``core.sym`` functions under ``prefix`` (``''``, ``'random'``, ``'linalg'``...)."""
    out = {}
    for op in REGISTRY.values():
        for entry in op.nd:
            full, defaults = (entry, None) if isinstance(entry, str) else entry
            head, _, tail = full.rpartition(".")
            if head == prefix:
                out[tail] = make_function(op, full, defaults)
    for modname, mod in list(sys.modules.items()):
        if not modname.startswith("core.ops.") or mod is None:
            continue
        for full, fn in getattr(mod, "NAMESPACE_OVERRIDES", {}).get("nd", {}).items():
            head, _, tail = full.rpartition(".")
            if head != prefix:
                continue
            out[tail] = EXPLICIT[tail] if not head and tail in EXPLICIT else traced(fn, full)
    return out
