"""Our graph nodes in MXNet 1.9's spelling, so real MXNet loads the JSON we write.

:func:`lower_node` turns one operator node of a graph into the node(s) MXNet 1.9 has
for it: MXNet's operator names (``broadcast_add``, ``_plus_scalar``, ``Concat``,
``Reshape``, ``LayerNorm``, ...), only the attributes MXNet's operator declares, and no
mode attributes (MXNet's executor decides training mode: BatchNorm, Dropout and RNN
with ``training=TRAIN`` drop it; a fixed mode becomes ``use_global_stats``, Dropout's
``mode="always"`` or an identity). Literal inputs become the scalar operators
(``x + 1`` -> ``_plus_scalar``, ``1 - x`` -> ``_rminus_scalar``); optional inputs
left empty are dropped. Some nodes need several MXNet nodes (an ``NTC`` RNN gets
``SwapAxis`` around it).

The rules are a table, ``RULES`` (our operator name -> rule); an operator without a
rule, or a node its rule cannot express, raises :class:`Unsupported`, which
:func:`core.symbol.json_io.graph_to_json` turns into a clear error (strict, as
``export`` is) or into a node in our own spelling that only kbackend reads.

Every rule is checked against real MXNet 1.9.1 in
``tests/core/symbol/test_json_mxnet_compat.py``; reading the lowered nodes back goes
through the MXNet names of :mod:`.json_mxnet`.
"""
from __future__ import annotations

from collections.abc import Callable

from .graph import TRAIN

__all__ = ["RULES", "Unsupported", "lower_node"]


class Unsupported(ValueError):
    """A node that MXNet 1.9 has no spelling for (the message says why)."""


class Emitter:
    """What a rule writes MXNet nodes with (:mod:`.json_io` implements it).

    ``emit(op, name, attrs, inputs, num_outputs) -> node index``: ``attrs`` holds
    Python values (formatted by the caller), ``inputs`` ``[index, output]`` pairs.
    """

    def emit(self, op: str, name: str, attrs: dict, inputs: list, num_outputs: int) -> int:
        raise NotImplementedError


def lower_node(w: Emitter, n, ins: list) -> list:
    """Write node ``n`` as MXNet node(s) through ``w``.

    Args:
        w: the emitter.
        n: the graph node (an operator call).
        ins: its input slots, ``[index, output]`` for arrays, the literal otherwise.

    Returns:
        One ``[index, output]`` (or None where MXNet has no such output) per output of
        ``n``.

    Raises:
        Unsupported: MXNet 1.9 has no operator for the node as it is.
    """
    rule = RULES.get(n.op.name)
    if rule is None:
        why = ("an internal operator" if n.op.name.startswith("_") else
               "an operator MXNet 1.9 does not have")
        raise Unsupported(f"{n.op.name!r} is {why}")
    return rule(w, n, dict(n.attrs), list(ins))


# --------------------------------------------------------------------------- helpers
def _arrays(name, ins, keep=None) -> list:
    """The array inputs; trailing empty optional inputs (None) are dropped."""
    ins = list(ins if keep is None else ins[:keep])
    while ins and ins[-1] is None:
        ins.pop()
    for pos, v in enumerate(ins):
        if not isinstance(v, list):
            raise Unsupported(f"{name}: input {pos} is the literal {v!r}, which MXNet's "
                              "operator cannot take (only arrays)")
    return ins


def _outs(j: int, mx_outputs: int, ours: int) -> list:
    return [[j, i] if i < mx_outputs else None for i in range(ours)]


def same(mx: str | None = None, drop=(), rename=None, outputs=None, fixed=None,
         keep_inputs=None) -> Callable:
    """A rule for an operator MXNet has with the same meaning.

    Args:
        mx: MXNet's name (default: ours).
        drop: our attributes MXNet does not declare; each must hold its default
            (``{name: default}``) or is dropped whatever it holds (a tuple of names).
        rename: ``{our attribute: MXNet's}``.
        outputs: how many outputs MXNet's operator has (default: as many as ours).
        fixed: attributes to add (``{name: value}``).
        keep_inputs: how many leading input slots MXNet's operator takes.
    """
    rename = dict(rename or {})

    def rule(w, n, attrs, ins):
        for k in drop:
            v = attrs.pop(k, None)
            if isinstance(drop, dict) and v != drop[k] and v is not TRAIN:
                raise Unsupported(f"MXNet's {mx or n.op.name!r} has no attribute {k!r} "
                                  f"(the node has {k}={v!r}; only {drop[k]!r} can be written)")
        out = {rename.get(k, k): v for k, v in attrs.items()}
        out.update(fixed or {})
        j = w.emit(mx or n.op.name, n.name, out, _arrays(n.op.name, ins, keep_inputs),
                   outputs or n.num_outputs)
        return _outs(j, outputs or n.num_outputs, n.num_outputs)

    return rule


def _binary(bcast: str, scalar: str | None, rscalar: str | None):
    """``add`` and friends: two arrays, or an array and a literal scalar."""

    def rule(w, n, attrs, ins):
        a, b = ins[:2]
        if isinstance(a, list) and isinstance(b, list):
            return _outs(w.emit(bcast, n.name, {}, [a, b], 1), 1, n.num_outputs)
        first = isinstance(a, list)
        arr, lit, name = (a, b, scalar) if first else (b, a, rscalar)
        if not isinstance(arr, list) or name is None or not _is_number(lit):
            raise Unsupported(f"{n.op.name}: inputs {a!r}, {b!r} have no MXNet spelling")
        if hasattr(lit, "dtype"):
            # A NumPy scalar takes part in dtype promotion; MXNet's scalar does not.
            raise Unsupported(f"{n.op.name}: the {lit.dtype} scalar {lit!r} takes part in "
                              "dtype promotion, which MXNet's scalar operators do not (use a "
                              "Python number)")
        is_int = isinstance(lit, int) or (hasattr(lit, "dtype") and lit.dtype.kind in "iub")
        value = int(lit) if is_int else float(lit)
        j = w.emit(name, n.name, {"scalar": float(value), "is_int": bool(is_int)}, [arr], 1)
        return _outs(j, 1, n.num_outputs)

    return rule


def _is_number(v) -> bool:
    if isinstance(v, bool) or v is None:
        return False
    if isinstance(v, (int, float)):
        return True
    return hasattr(v, "dtype") and getattr(v, "shape", None) == () and v.dtype.kind in "iuf"


def _mode(attrs, name) -> object:
    """Pop ``training``: TRAIN (the executor's), True or False."""
    v = attrs.pop("training", TRAIN)
    if v is not TRAIN and not isinstance(v, bool):
        raise Unsupported(f"{name}: training={v!r}")
    return v


def _batch_norm(w, n, attrs, ins):
    mode = _mode(attrs, "BatchNorm")
    if mode is False:
        attrs["use_global_stats"] = True
    elif mode is True and not attrs.get("use_global_stats"):
        raise Unsupported("BatchNorm with training fixed to True (batch statistics in "
                          "inference too) has no MXNet spelling")
    j = w.emit("BatchNorm", n.name, attrs, _arrays("BatchNorm", ins), 3)
    return _outs(j, 3, n.num_outputs)


def _dropout(w, n, attrs, ins):
    mode = _mode(attrs, "Dropout")
    data = _arrays("Dropout", ins)
    if mode is False:
        return _outs(w.emit("_copy", n.name, {}, data[:1], 1), 1, n.num_outputs)
    if mode is True:
        attrs["mode"] = "always"
    return _outs(w.emit("Dropout", n.name, attrs, data, 2), 2, n.num_outputs)


def _rnn(w, n, attrs, ins):
    mode = _mode(attrs, "RNN")
    if mode is False:
        attrs["p"] = 0.0
    elif mode is True and attrs.get("p"):
        raise Unsupported("RNN with training fixed to True and dropout p > 0 has no "
                          "MXNet spelling")
    layout = attrs.pop("layout", "TNC")
    if layout not in ("TNC", "NTC"):
        raise Unsupported(f"RNN: layout {layout!r}")
    slots = list(ins)
    while len(slots) > 3 and slots[-1] is None:
        slots.pop()
    if len(slots) == 5 and slots[3] is None:  # no state_cell (not LSTM): MXNet skips it
        slots = slots[:3] + slots[4:]
    data = _arrays("RNN", slots)
    if layout == "NTC":
        t = w.emit("SwapAxis", f"{n.name}_swapin", {"dim1": 0, "dim2": 1}, data[:1], 1)
        data = [[t, 0]] + data[1:]
    j = w.emit("RNN", n.name, attrs, data, n.num_outputs)
    outs = _outs(j, n.num_outputs, n.num_outputs)
    if layout == "NTC":
        t = w.emit("SwapAxis", f"{n.name}_swapout", {"dim1": 0, "dim2": 1}, [outs[0]], 1)
        outs[0] = [t, 0]
    return outs


def _concat(w, n, attrs, ins):
    axis = attrs.get("dim") if attrs.get("dim") is not None else attrs.get("axis", 0)
    if attrs.get("dtype") is not None or axis is None:
        raise Unsupported(f"concatenate: axis={axis!r}, dtype={attrs.get('dtype')!r}")
    data = _arrays("concatenate", ins)
    j = w.emit("Concat", n.name, {"dim": axis, "num_args": len(data)}, data, 1)
    return _outs(j, 1, n.num_outputs)


def _add_n(w, n, attrs, ins):
    """``add_n`` with the ``num_args`` MXNet requires of it."""
    data = _arrays("add_n", ins)
    j = w.emit("add_n", n.name, {"num_args": len(data)}, data, 1)
    return _outs(j, 1, n.num_outputs)


def _split(w, n, attrs, ins):
    """Equal sections as MXNet's ``SliceChannel`` (MXNet 1.9 has no ``split`` node)."""
    k = attrs.get("indices_or_sections")
    if k is None:
        k = attrs.get("num_outputs")
    if isinstance(k, bool) or not isinstance(k, int) or k != n.num_outputs:
        raise Unsupported(f"split: indices_or_sections={k!r} (only a number of equal sections "
                          "has an MXNet spelling, SliceChannel)")
    j = w.emit("SliceChannel", n.name, {"num_outputs": k, "axis": attrs.get("axis", 1),
                                        "squeeze_axis": bool(attrs.get("squeeze_axis"))},
               _arrays("split", ins), k)
    return _outs(j, k, n.num_outputs)


def _stack(w, n, attrs, ins):
    if attrs.get("dtype") is not None:
        raise Unsupported(f"stack: dtype={attrs['dtype']!r}")
    data = _arrays("stack", ins)
    j = w.emit("stack", n.name, {"axis": attrs.get("axis", 0), "num_args": len(data)}, data, 1)
    return _outs(j, 1, n.num_outputs)


def _reshape(w, n, attrs, ins):
    shape = attrs.get("shape") if attrs.get("shape") is not None else attrs.get("newshape")
    if isinstance(shape, int):
        shape = (shape,)
    if shape is None or attrs.get("order", "C") != "C":
        raise Unsupported(f"reshape: shape={shape!r}, order={attrs.get('order')!r}")
    if not attrs.get("mx_codes", True) and any(d == 0 or d < -1 for d in shape):
        raise Unsupported(f"reshape: NumPy shape {shape!r} (0 means 'copy' in MXNet)")
    j = w.emit("Reshape", n.name, {"shape": tuple(shape), "reverse": bool(attrs.get("reverse"))},
               _arrays("reshape", ins), 1)
    return _outs(j, 1, n.num_outputs)


def _transpose(w, n, attrs, ins):
    axes = attrs.get("axes")
    j = w.emit("transpose", n.name, {"axes": () if axes is None else tuple(axes)},
               _arrays("transpose", ins), 1)
    return _outs(j, 1, n.num_outputs)


def _reduce(mx):
    def rule(w, n, attrs, ins):
        if not attrs.pop("_mx", False) and attrs.get("exclude"):
            raise Unsupported(f"{n.op.name}: exclude with NumPy semantics")
        if attrs.pop("dtype", None) is not None:
            raise Unsupported(f"{n.op.name}: MXNet's {mx!r} has no dtype")
        axis = attrs.get("axis")
        if isinstance(axis, int):
            attrs["axis"] = (axis,)
        j = w.emit(mx, n.name, attrs, _arrays(n.op.name, ins), 1)
        return _outs(j, 1, n.num_outputs)

    return rule


def _swapaxes(w, n, attrs, ins):
    d1 = attrs.get("dim1") if attrs.get("dim1") is not None else attrs.get("axis1", 0)
    d2 = attrs.get("dim2") if attrs.get("dim2") is not None else attrs.get("axis2", 0)
    j = w.emit("SwapAxis", n.name, {"dim1": d1, "dim2": d2}, _arrays("swapaxes", ins), 1)
    return _outs(j, 1, n.num_outputs)


def _softmax(mx):
    def rule(w, n, attrs, ins):
        if attrs.get("dtype") is None:
            attrs.pop("dtype", None)
        j = w.emit(mx, n.name, attrs, _arrays(n.op.name, ins), 1)
        return _outs(j, 1, n.num_outputs)

    return rule


def _like(mx):
    def rule(w, n, attrs, ins):
        if attrs.pop("dtype", None) is not None:
            raise Unsupported(f"{n.op.name}: MXNet's {mx!r} has no dtype")
        return _outs(w.emit(mx, n.name, {}, _arrays(n.op.name, ins), 1), 1, n.num_outputs)

    return rule


def _clip(w, n, attrs, ins):
    if attrs.get("a_min") is None or attrs.get("a_max") is None:
        raise Unsupported("clip: MXNet's clip needs both a_min and a_max")
    return same()(w, n, attrs, ins)


def _pad(w, n, attrs, ins):
    pw = attrs.get("pad_width")
    flat = []
    for v in (pw if isinstance(pw, (tuple, list)) else ()):
        flat += list(v) if isinstance(v, (tuple, list)) else [v]
    cv = attrs.get("constant_value")
    cv = attrs.get("constant_values", 0) if cv is None else cv
    if (len(flat) not in (8, 10) or any(flat[:4]) or not all(type(v) is int for v in flat)
            or attrs.get("mode") not in ("constant", "edge", "reflect")
            or not _is_number(cv)):
        raise Unsupported(f"pad: MXNet's Pad takes 4-D or 5-D arrays padded on the spatial "
                          f"axes only, mode constant/edge/reflect and one constant (got "
                          f"pad_width={pw!r}, mode={attrs.get('mode')!r}, constant={cv!r})")
    j = w.emit("Pad", n.name, {"mode": attrs["mode"], "pad_width": tuple(flat),
                               "constant_value": float(cv)}, _arrays("pad", ins), 1)
    return _outs(j, 1, n.num_outputs)


def _ndim(n, pos: int = 0):
    e = n.inputs[pos] if pos < len(n.inputs) else None
    avals = getattr(getattr(e, "node", None), "avals", None)
    return len(avals[e.index].shape) if avals and e.index < len(avals) else None


def _getitem(w, n, attrs, ins):
    """Basic indexing (ints, slices, ``...``) as MXNet's ``slice`` (+ ``squeeze``)."""
    key = attrs.get("key")
    key = key if isinstance(key, tuple) else (key,)
    ndim = _ndim(n)
    if not all(k is Ellipsis or type(k) is int or isinstance(k, slice) for k in key):
        raise Unsupported(f"_getitem: key {key!r} (only ints, slices and ... have an MXNet "
                          "spelling)")
    ellipses = [i for i, k in enumerate(key) if k is Ellipsis]
    if ellipses:
        if ndim is None or len(ellipses) > 1:
            raise Unsupported(f"_getitem: key {key!r} (Ellipsis needs the input's rank)")
        k = ellipses[0]
        key = key[:k] + (slice(None),) * (ndim - len(key) + 1) + key[k + 1:]
    begin, end, step, drop = [], [], [], []
    for axis, k in enumerate(key):
        if type(k) is int:
            begin.append(k)
            end.append(k + 1 if k != -1 else None)
            step.append(None)
            drop.append(axis)
        elif isinstance(k, slice) and all(v is None or type(v) is int
                                          for v in (k.start, k.stop, k.step)):
            if k.step is not None and k.step < 0 and (k.start is None or k.stop is None):
                raise Unsupported(f"_getitem: the negative-step slice {k!r}")
            begin.append(k.start)
            end.append(k.stop)
            step.append(k.step)
        else:
            raise Unsupported(f"_getitem: key {key!r} (only ints, slices and ... have an "
                              "MXNet spelling)")
    data = _arrays("_getitem", ins)
    name = f"{n.name}_slice" if drop else n.name
    j = w.emit("slice", name, {"begin": tuple(begin), "end": tuple(end), "step": tuple(step)},
               data, 1)
    if drop:
        j = w.emit("squeeze", n.name, {"axis": tuple(drop)}, [[j, 0]], 1)
    return _outs(j, 1, n.num_outputs)


def _bias_act(w, n, attrs, ins):
    """``act(data + bias)`` with ``bias`` along ``axis``: Reshape, broadcast_add, Activation."""
    ndim, axis = _ndim(n), attrs.get("axis", -1)
    if ndim is None or not -ndim <= axis < ndim:
        raise Unsupported(f"_bias_act: axis {axis} of an input of unknown rank")
    axis %= ndim
    data, bias = _arrays("_bias_act", ins)
    shape = (1,) * axis + (-1,) + (1,) * (ndim - axis - 1)
    r = w.emit("Reshape", f"{n.name}_bias", {"shape": shape}, [bias], 1)
    a = w.emit("broadcast_add", f"{n.name}_add", {}, [data, [r, 0]], 1)
    j = w.emit("Activation", n.name, {"act_type": attrs.get("act_type", "relu")}, [[a, 0]], 1)
    return _outs(j, 1, n.num_outputs)


def _axes(v, ndim: int) -> tuple:
    v = v if isinstance(v, (tuple, list)) else (v,)
    return tuple(int(a) % ndim for a in v)


def _moveaxis(w, n, attrs, ins):
    """``moveaxis`` as MXNet's ``transpose`` with the permutation written out."""
    ndim = _ndim(n)
    if ndim is None:
        raise Unsupported("moveaxis: an input of unknown rank")
    src, dst = _axes(attrs.get("source", 0), ndim), _axes(attrs.get("destination", 0), ndim)
    if len(src) != len(dst):
        raise Unsupported(f"moveaxis: source {src} and destination {dst}")
    order = [a for a in range(ndim) if a not in src]
    for d, s in sorted(zip(dst, src)):
        order.insert(d, s)
    j = w.emit("transpose", n.name, {"axes": tuple(order)}, _arrays("moveaxis", ins), 1)
    return _outs(j, 1, n.num_outputs)


def _shape_of(n, pos: int):
    e = n.inputs[pos] if pos < len(n.inputs) else None
    avals = getattr(getattr(e, "node", None), "avals", None)
    return tuple(avals[e.index].shape) if avals and e.index < len(avals) else None


def _matmul(w, n, attrs, ins):
    """``matmul`` as ``dot`` (a 2-D or 1-D right side, or two matrices), ``batch_dot``
    (two 3-D stacks) or ``linalg_gemm2`` (stacks of equal batch shapes)."""
    a, b = _shape_of(n, 0), _shape_of(n, 1)
    ta, tb = bool(attrs.get("transpose_a")), bool(attrs.get("transpose_b"))
    data = _arrays("matmul", ins)
    if a is None or b is None or (len(a) == 1 and len(b) == 1):
        raise Unsupported(f"matmul: operands of shapes {a} and {b} (MXNet's dot of two "
                          "vectors has shape (1,), not ())")
    flags = {"transpose_a": ta, "transpose_b": tb}
    if len(b) <= 2 and (len(a) <= 2 or not ta) and not (len(b) == 1 and tb):
        op = "dot"
    elif len(a) == len(b) == 3 and a[0] == b[0]:
        op = "batch_dot"
    elif len(a) == len(b) and len(a) > 2 and a[:-2] == b[:-2]:
        op, flags = "linalg_gemm2", {"transpose_a": ta, "transpose_b": tb, "alpha": 1.0}
    else:
        raise Unsupported(f"matmul: operands of shapes {a} and {b} (transpose_a={ta}, "
                          f"transpose_b={tb}) have no MXNet spelling (batch axes must match)")
    return _outs(w.emit(op, n.name, flags, data, 1), 1, n.num_outputs)


def _gelu(w, n, attrs, ins):
    """Exact ``gelu`` as ``LeakyReLU(act_type='gelu')`` (erf); the tanh approximation as
    ``0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3)))``."""
    (x,) = _arrays("gelu", ins)
    if not attrs.get("approximate"):
        return _outs(w.emit("LeakyReLU", n.name, {"act_type": "gelu"}, [x], 1), 1,
                     n.num_outputs)
    name = n.name

    def scalar(op, suffix, arr, value):
        return [w.emit(op, f"{name}_{suffix}", {"scalar": float(value), "is_int": False},
                       [arr], 1), 0]

    cube = scalar("_power_scalar", "cube", x, 3.0)
    inner = [w.emit("broadcast_add", f"{name}_inner", {}, [x, scalar(
        "_mul_scalar", "cubek", cube, 0.044715)], 1), 0]
    t = [w.emit("tanh", f"{name}_tanh", {}, [scalar(
        "_mul_scalar", "scale", inner, 0.7978845608028654)], 1), 0]
    half = scalar("_mul_scalar", "half", scalar("_plus_scalar", "one", t, 1.0), 0.5)
    return _outs(w.emit("broadcast_mul", name, {}, [x, half], 1), 1, n.num_outputs)


def _silu(w, n, attrs, ins):
    """``silu`` (swish) as ``x * sigmoid(beta x)``."""
    (x,) = _arrays("silu", ins)
    beta = attrs.get("beta", 1.0)
    arg = x
    if beta != 1.0:
        arg = [w.emit("_mul_scalar", f"{n.name}_beta", {"scalar": float(beta),
                                                         "is_int": False}, [x], 1), 0]
    s = [w.emit("sigmoid", f"{n.name}_sigmoid", {}, [arg], 1), 0]
    return _outs(w.emit("broadcast_mul", n.name, {}, [x, s], 1), 1, n.num_outputs)


_BINARY = {
    "add": ("broadcast_add", "_plus_scalar", "_plus_scalar"),
    "subtract": ("broadcast_sub", "_minus_scalar", "_rminus_scalar"),
    "multiply": ("broadcast_mul", "_mul_scalar", "_mul_scalar"),
    "divide": ("broadcast_div", "_div_scalar", "_rdiv_scalar"),
    "power": ("broadcast_power", "_power_scalar", "_rpower_scalar"),
    "mod": ("broadcast_mod", "_mod_scalar", "_rmod_scalar"),
    "maximum": ("broadcast_maximum", "_maximum_scalar", "_maximum_scalar"),
    "minimum": ("broadcast_minimum", "_minimum_scalar", "_minimum_scalar"),
    "hypot": ("broadcast_hypot", "_hypot_scalar", "_hypot_scalar"),
    "equal": ("broadcast_equal", "_equal_scalar", "_equal_scalar"),
    "not_equal": ("broadcast_not_equal", "_not_equal_scalar", "_not_equal_scalar"),
    "greater": ("broadcast_greater", "_greater_scalar", "_lesser_scalar"),
    "greater_equal": ("broadcast_greater_equal", "_greater_equal_scalar",
                      "_lesser_equal_scalar"),
    "less": ("broadcast_lesser", "_lesser_scalar", "_greater_scalar"),
    "less_equal": ("broadcast_lesser_equal", "_lesser_equal_scalar", "_greater_equal_scalar"),
    "logical_and": ("broadcast_logical_and", "_logical_and_scalar", "_logical_and_scalar"),
    "logical_or": ("broadcast_logical_or", "_logical_or_scalar", "_logical_or_scalar"),
    "logical_xor": ("broadcast_logical_xor", "_logical_xor_scalar", "_logical_xor_scalar"),
}

# Operators MXNet 1.9 has under our name, with our attributes (checked against its
# argument lists, and each against its outputs in the compat tests).
_SAME = (
    "Activation", "BilinearSampler", "BlockGrad", "CTCLoss", "Convolution", "Deconvolution",
    "Embedding",
    "FullyConnected", "GridGenerator", "L2Normalization", "LRN", "LeakyReLU",
    "LinearRegressionOutput", "LogisticRegressionOutput", "MAERegressionOutput", "MakeLoss",
    "Pooling", "SequenceLast", "SequenceMask", "SequenceReverse", "SoftmaxOutput",
    "UpSampling", "abs", "arccos", "arccosh", "arcsin", "arcsinh", "arctan", "arctanh",
    "batch_dot", "broadcast_like", "broadcast_to", "cbrt", "ceil", "cos", "cosh", "degrees",
    "dot", "erf", "erfinv", "exp", "expand_dims", "expm1", "fix", "flatten", "flip", "floor",
    "gamma", "gammaln", "gather_nd", "hard_sigmoid", "log", "log10", "log1p", "log2",
    "logical_not", "negative", "norm", "one_hot", "pick", "radians", "reciprocal", "relu", "repeat",
    "reshape_like", "rint", "rsqrt", "sigmoid", "sign", "sin", "sinh", "slice", "slice_axis",
    "slice_like", "smooth_l1", "sqrt", "square", "squeeze", "take", "tan", "tanh", "tile",
    "topk", "trunc", "softsign", "linalg_gemm", "linalg_gemm2", "linalg_det",
    "linalg_slogdet",
)

RULES: dict[str, Callable] = {name: same() for name in _SAME}
RULES.update({name: _binary(*spec) for name, spec in _BINARY.items()})
RULES.update({
    "BatchNorm": _batch_norm,
    "Dropout": _dropout,
    "RNN": _rnn,
    "_layer_norm": same("LayerNorm", outputs=3),
    "_instance_norm": same("InstanceNorm", outputs=1),
    "_group_norm": same("GroupNorm", outputs=3),
    "concatenate": _concat,
    "stack": _stack,
    "add_n": _add_n,
    "split": _split,
    "reshape": _reshape,
    "transpose": _transpose,
    "swapaxes": _swapaxes,
    "sum": _reduce("sum"), "mean": _reduce("mean"), "prod": _reduce("prod"),
    "max": _reduce("max"), "min": _reduce("min"), "nansum": _reduce("nansum"),
    "nanprod": _reduce("nanprod"),
    "softmax": _softmax("softmax"), "log_softmax": _softmax("log_softmax"),
    "zeros_like": _like("zeros_like"), "ones_like": _like("ones_like"),
    "copy": same("_copy"),
    "cast": same("Cast"),
    "clip": _clip,
    "round": same(drop={"decimals": 0}),
    "_getitem": _getitem,
    "where": same(drop=("mx_rows",)),  # MXNet's where picks rows with a 1-D condition
    "_bias_act": _bias_act,
    "pad": _pad,
    "argmax": same(drop={"dtype": "float32"}),
    "argmin": same(drop={"dtype": "float32"}),

    # Operators of traced Keras models (kbackend.save_mxnet_model).
    "moveaxis": _moveaxis,
    "matmul": _matmul,
    "gelu": _gelu,
    "silu": _silu,
    "selu": same("LeakyReLU", fixed={"act_type": "selu"}),
    "softplus": same("Activation", fixed={"act_type": "softrelu"}),
})
