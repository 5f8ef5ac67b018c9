"""AMP's graph conversion: :func:`convert_symbol`, :func:`convert_model`,
:func:`convert_hybrid_block` (MXNet 1.9's ``amp.convert_*``, for inference).

The graph (MXNet's JSON layout) is rewritten with ``amp_cast`` nodes: inputs of the
low-precision ops are cast to the target dtype, inputs of the float32 ops to float32,
inputs of the widest-type ops to float32 when their dtypes differ; the other ops run in
the dtype they are given. Data inputs are float32 (an FP32 model); parameters are
float32 unless ``cast_optional_params`` stores those read only by low-precision ops in
the target dtype (their ``__dtype__`` attribute, and the arrays cast to match). One cast
node per (value, dtype), shared by its readers; ``excluded_sym_names`` names nodes left
as they are. As MXNet 1.9's pass does, every output of the graph that is not float32
is cast back to float32 (the low precision stays inside the graph), and the casts are
named as MXNet names them (``data_amp_cast_float16``, ``fc1_output_amp_cast_float32``,
``relu0_0_amp_cast_float32``).
"""
from __future__ import annotations

import functools
import itertools
import json
import os
import sys
import tempfile

import numpy

from ..dtypes import bfloat16
from ..symbol.symbol import Symbol

__all__ = ["convert_hybrid_block", "convert_model", "convert_symbol"]

_F16, _F32 = numpy.dtype(numpy.float16), numpy.dtype(numpy.float32)

# MXNet's output names (FListOutputNames) of its legacy operators, which its cast nodes'
# names use; other operators' outputs are named by their index
_OUTPUT_NAMES = {
    "Activation": ("output",), "BatchNorm": ("output", "mean", "var"),
    "Concat": ("output",), "Convolution": ("output",), "Deconvolution": ("output",),
    "Dropout": ("output", "mask"), "FullyConnected": ("output",),
    "LeakyReLU": ("output",), "Pooling": ("output",), "SoftmaxOutput": ("output",),
}


def _lists(target_dtype, what):
    from . import amp

    dt = amp._as_target(target_dtype, what)
    return dt, amp.list_lp16_ops(dt), amp.list_fp32_ops(dt), \
        amp.list_conditional_fp32_ops(dt), amp.list_widest_type_cast(dt), \
        amp.list_lp16_use_fp32_params(dt) or {}, amp.list_lp16_fp32_ops(dt)


def _output_dtype(dts):
    """An op's output dtype from its inputs' (MXNet's pass: the first input's when it is
    a float; BatchNorm's float16 data and float32 parameters give float16)."""
    if dts and dts[0] in (_F16, _F32, bfloat16):
        return dts[0]
    fl = [d for d in dts if d in (_F16, _F32, bfloat16)]
    if not fl:
        return dts[0] if dts else _F32
    return fl[0] if len(set(fl)) == 1 else _F32


@functools.cache
def _aliases(op: str) -> tuple:
    """The names of the operator that a graph JSON calls ``op``: its registry name and
    its ``core.nd`` names (the lists use the latter; JSON may hold either)."""
    from ..ops.registry import REGISTRY

    for o in REGISTRY.values():
        names = [o.name, *(e if isinstance(e, str) else e[0] for e in o.nd)]
        if op in names:
            return tuple(dict.fromkeys([op, *names]))
    return (op,)


def convert_symbol(sym: Symbol, target_dtype="float16", target_dtype_ops=None,
                   fp32_ops=None, conditional_fp32_ops=None, excluded_sym_names=None,
                   data_names=None, cast_optional_params: bool = False) -> Symbol:
    """An FP32 graph with AMP's casts added (see the module doc).

    Args:
        sym: the FP32 graph.
        target_dtype: ``'float16'`` or ``'bfloat16'``.
        target_dtype_ops, fp32_ops, conditional_fp32_ops: replace the default lists
            (names from ``amp.list_lp16_ops``, ``list_fp32_ops``, ``list_lp16_fp32_ops``
            or ``list_conditional_fp32_ops`` only).
        excluded_sym_names: node names left unconverted.
        data_names: the data inputs (default: the inputs without a ``__dtype__``).
        cast_optional_params: store parameters that only low-precision ops read in the
            target dtype (their ``__dtype__``), instead of casting them in the graph.

    Returns:
        The converted Symbol.

    Raises:
        TypeError: ``sym`` is not a Symbol.
        ValueError: an unsupported target dtype, an op in two lists or in none.

    Example:
        >>> from core import sym, amp, nd
        >>> net = sym.FullyConnected(sym.var("data"), num_hidden=2, name="fc")
        >>> conv = amp.convert_symbol(net, "float16")
        >>> out = conv.eval(data=nd.ones((1, 3)), fc_weight=nd.ones((2, 3)),
        ...                 fc_bias=nd.zeros((2,)))[0]
        >>> out.dtype  # the FullyConnected ran in float16; outputs are cast back
        dtype('float32')
        >>> [n for n in conv.get_internals().list_outputs() if "amp_cast" in n]
        ['data_amp_cast_float16_output', 'fc_weight_amp_cast_float16_output', 'fc_bias_amp_cast_float16_output', 'fc_output_amp_cast_float32_output']
    """
    if not isinstance(sym, Symbol):
        raise TypeError(f"amp.convert_symbol: first argument should be a Symbol, got "
                        f"{type(sym).__name__}")
    dt, lp16, fp32, cond, widest, keep, lp16_fp32 = _lists(target_dtype, "convert_symbol")
    default_cond = [c[0] for c in cond]
    allowed = set(lp16) | set(fp32) | set(lp16_fp32) | set(default_cond)
    lp16 = list(target_dtype_ops) if target_dtype_ops is not None else lp16
    fp32 = list(fp32_ops) if fp32_ops is not None else fp32
    cond = list(conditional_fp32_ops) if conditional_fp32_ops is not None else cond
    from .amp import _check_lists

    _check_lists(dt, lp16, fp32, cond)
    illegal = sorted((set(lp16) | set(fp32) | {c[0] for c in cond}) - allowed)
    if illegal:
        raise ValueError(f"amp.convert_symbol: ops {illegal} are in none of "
                         "amp.list_lp16_ops, list_fp32_ops, list_lp16_fp32_ops and "
                         "list_conditional_fp32_ops")
    excluded = set(excluded_sym_names or [])
    doc = json.loads(sym.tojson(remove_amp_cast=False))
    doc = _rewrite(doc, dt, set(lp16), set(fp32), {c[0]: (c[1], set(c[2])) for c in cond},
                   set(widest), keep, excluded, data_names, cast_optional_params)
    from .. import sym as _sym

    return _sym.load_json(json.dumps(doc))


def _rewrite(doc, dt, lp16, fp32, cond, widest, keep, excluded, data_names, cast_optional):
    nodes = doc["nodes"]
    row = doc.get("node_row_ptr")
    counts = [b - a for a, b in itertools.pairwise(row)] if row else [1] * len(nodes)
    consumers = {}
    for i, n in enumerate(nodes):
        for pos, (src, _idx, *_r) in enumerate(n.get("inputs", [])):
            consumers.setdefault(src, []).append((i, pos))
    if data_names is None:
        data_names = [n["name"] for n in nodes if n["op"] == "null"
                      and "__dtype__" not in (n.get("attrs") or {})]
    data_names = set(data_names)

    def member(op, names):
        """Whether JSON op name ``op`` (or another name of the same operator) is listed."""
        return any(a in names for a in _aliases(op))

    def pick(op, table):
        for a in _aliases(op):
            if a in table:
                return table[a]
        return None

    def runs_in(n):
        op, name = n["op"], n["name"]
        if name in excluded:
            return None
        if member(op, lp16):
            return dt
        if member(op, fp32):
            return _F32
        c = pick(op, cond)
        if c is not None and str((n.get("attrs") or {}).get(c[0])) in c[1]:
            return _F32
        return None

    def kept(n, pos):
        k = pick(n["op"], keep)
        return bool(k and pos < len(k) and k[pos])

    out_nodes, new_index, dtypes, casts = [], {}, {}, {}

    def emit(n, count, dtype):
        out_nodes.append(n)
        dtypes[len(out_nodes) - 1] = dtype
        counts_out.append(count)
        return len(out_nodes) - 1

    counts_out = []

    def cast_of(r, want):
        """The node casting entry ``r`` (new index, output) to ``want`` (made once)."""
        key = (r[0], r[1], want.name)
        if key not in casts:
            src = out_nodes[r[0]]
            suffix = ""
            if src["op"] != "null":
                names = _OUTPUT_NAMES.get(src["op"], ())
                if src["op"] == "SliceChannel":
                    suffix = f"_output{r[1]}"
                else:
                    suffix = "_" + (names[r[1]] if r[1] < len(names) else str(r[1]))
            cast = {"op": "amp_cast", "name": f"{src['name']}{suffix}_amp_cast_{want.name}",
                    "attrs": {"dtype": want.name}, "inputs": [[r[0], r[1], 0]]}
            casts[key] = emit(cast, 1, want)
        return casts[key]

    for i, n in enumerate(nodes):
        if n["op"] == "null":
            attrs = dict(n.get("attrs") or {})
            dtype = _F32
            if "__dtype__" in attrs and attrs["__dtype__"] not in ("-1", "0"):
                from ..symbol.json_mxnet import MX_DTYPE_NAMES

                code = attrs["__dtype__"]
                dtype = numpy.dtype(MX_DTYPE_NAMES.get(int(code), "float32")
                                    if code.lstrip("-").isdigit() else code)
            if cast_optional and n["name"] not in data_names and i in consumers and all(
                    runs_in(nodes[c]) == dt and not kept(nodes[c], p)
                    for c, p in consumers[i]):
                dtype = dt
                attrs["__dtype__"] = dt.name
                n = dict(n, attrs=attrs)
            new_index[i] = emit(n, counts[i], dtype)
            continue
        want = runs_in(n)
        refs = [(new_index[src], idx, *rest) for src, idx, *rest in n.get("inputs", [])]
        in_dts = [dtypes[r[0]] for r in refs]
        if want is None and member(n["op"], widest) and n["name"] not in excluded \
                and len({d for d in in_dts if d in (_F16, _F32, bfloat16)}) > 1:
            want = _F32
        if want is not None:
            for pos, r in enumerate(refs):
                if kept(n, pos) or in_dts[pos] not in (_F16, _F32, bfloat16) \
                        or in_dts[pos] == want:
                    continue
                refs[pos] = [cast_of(r, want), 0, 0]
                in_dts[pos] = want
            out_dt = want
        else:
            out_dt = _output_dtype(in_dts)
        new_index[i] = emit(dict(n, inputs=[list(r) for r in refs]), counts[i], out_dt)
    heads = []
    for h in doc["heads"]:
        r = [new_index[h[0]], *h[1:]]
        if dtypes[r[0]] in (_F16, bfloat16):  # MXNet: the graph's outputs are float32
            r = [cast_of(r, _F32), 0, 0]
        heads.append(r)
    out = dict(doc)
    out["nodes"] = out_nodes
    out["arg_nodes"] = [i for i, n in enumerate(out_nodes) if n["op"] == "null"]
    out["node_row_ptr"] = [0]
    for c in counts_out:
        out["node_row_ptr"].append(out["node_row_ptr"][-1] + c)
    out["heads"] = heads
    return out


def _param_dtypes(sym: Symbol) -> dict:
    attrs = sym.attr_dict()
    found = {}
    for name, a in attrs.items():
        code = a.get("__dtype__")
        if code is None:
            continue
        try:
            from ..symbol.json_mxnet import MX_DTYPE_NAMES

            found[name] = numpy.dtype(MX_DTYPE_NAMES[int(code)] if code.lstrip("-").isdigit()
                                      else code)
        except (KeyError, ValueError, TypeError):
            continue
    return found


def convert_model(sym: Symbol, arg_params: dict, aux_params: dict, target_dtype="float16",
                  target_dtype_ops=None, fp32_ops=None, conditional_fp32_ops=None,
                  excluded_sym_names=None, cast_optional_params: bool = False):
    """Convert an FP32 model (graph and parameters) to mixed precision, for inference.

    Args:
        sym: the FP32 graph.
        arg_params: ``{name: NDArray}`` of its arguments.
        aux_params: ``{name: NDArray}`` of its auxiliary states.
        target_dtype, target_dtype_ops, fp32_ops, conditional_fp32_ops,
        excluded_sym_names, cast_optional_params: as :func:`convert_symbol`.

    Returns:
        ``(symbol, arg_params, aux_params)``, the parameters cast to the dtypes the
        converted graph gives them (new dicts).

    Example:
        >>> from core import sym, amp, nd
        >>> net = sym.FullyConnected(sym.var("data"), num_hidden=2, name="fc")
        >>> args = {"fc_weight": nd.ones((2, 3)), "fc_bias": nd.zeros((2,))}
        >>> s, a, _ = amp.convert_model(net, args, {}, "bfloat16", cast_optional_params=True)
        >>> str(a["fc_weight"].dtype)
        'bfloat16'
    """
    if not isinstance(sym, Symbol):
        raise TypeError(f"amp.convert_model: first argument should be a Symbol, got "
                        f"{type(sym).__name__}")
    for what, d in (("arg_params", arg_params), ("aux_params", aux_params)):
        if not isinstance(d, dict):
            raise TypeError(f"amp.convert_model: {what} should be a dict of name to "
                            f"NDArray, got {type(d).__name__}")
    if excluded_sym_names is not None and not isinstance(excluded_sym_names, list):
        raise ValueError("amp.convert_model: excluded_sym_names must be a list of strings, "
                         f"got {type(excluded_sym_names).__name__}")
    params = set(arg_params) | set(aux_params)
    data_names = [n for n in sym.list_inputs() if n not in params]
    conv = convert_symbol(sym, target_dtype, target_dtype_ops, fp32_ops,
                          conditional_fp32_ops, excluded_sym_names, data_names,
                          cast_optional_params)
    dts = _param_dtypes(conv)

    def cast(d):
        return {k: v.astype(dts[k]) if k in dts and v.dtype != dts[k] else v
                for k, v in d.items()}

    return conv, cast(arg_params), cast(aux_params)


def convert_hybrid_block(block, target_dtype="float16", target_dtype_ops=None,
                         fp32_ops=None, conditional_fp32_ops=None, excluded_sym_names=None,
                         ctx=None, cast_optional_params: bool = False):
    """A ``SymbolBlock`` running ``block``'s graph in mixed precision (for inference).

    Args:
        block: a hybridized ``HybridBlock`` that has run forward once.
        target_dtype, target_dtype_ops, fp32_ops, conditional_fp32_ops,
        excluded_sym_names, cast_optional_params: as :func:`convert_symbol`.
        ctx: the context(s) for the parameters (default: the block's first context;
            MXNet's default is ``gpu(0)``).

    Returns:
        A ``gluon.SymbolBlock``; its outputs have the dtype their last op runs in
        (``target_dtype`` after a ``Dense``).

    Raises:
        TypeError: ``block`` is not a HybridBlock.
        RuntimeError: it was not hybridized and run.
    """
    gluon = sys.modules.get("gluon")  # a Block given means gluon is loaded: core
    if gluon is None or not isinstance(block, gluon.HybridBlock):  # imports no gluon
        raise TypeError(f"amp.convert_hybrid_block: block input should be a HybridBlock, "
                        f"got {type(block).__name__}")
    if not block._active or getattr(block, "_last_cached", None) is None:
        raise RuntimeError(
            f"amp.convert_hybrid_block: {type(block).__name__} '{block.name}': please first "
            "call block.hybridize() and then run forward with this block at least once "
            "before converting it")
    from .. import serialization
    from .. import sym as _sym

    with tempfile.TemporaryDirectory(prefix="kbackend-amp-") as d:
        sym_file, param_file = block.export(os.path.join(d, "model"),
                                            mxnet_compatible=False)
        graph = _sym.load(sym_file)
        arrays = serialization.load(param_file)
    arg = {k[4:]: v for k, v in arrays.items() if k.startswith("arg:")}
    aux = {k[4:]: v for k, v in arrays.items() if k.startswith("aux:")}
    data_names = [n for n in graph.list_inputs() if n not in arg and n not in aux]
    conv, arg, aux = convert_model(graph, arg, aux, target_dtype, target_dtype_ops,
                                   fp32_ops, conditional_fp32_ops, excluded_sym_names,
                                   cast_optional_params)
    if ctx is None:
        first = next(iter(block.collect_params().values()), None)
        ctx = first.list_ctx()[0] if first is not None else None
    ret = gluon.SymbolBlock(conv, [_sym.var(n) for n in data_names])
    values = {**arg, **aux}
    for name, p in ret.collect_params().items():
        v = values.get(name)
        if v is not None and numpy.dtype(p.dtype) != v.dtype:
            p.cast(v.dtype)
    ret.collect_params().load_dict(values, ctx=ctx)
    return ret
