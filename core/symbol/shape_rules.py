"""Backward shape rules: parameter shapes from the data's shape and the attributes.

MXNet's operators infer their parameters' shapes "backwards": ``FullyConnected``'s
weight is ``(num_hidden, in_units)`` once the data's shape is known. This module holds
the per-operator tables :func:`core.symbol.shape_infer.infer_graph` applies:

- ``BACKWARD_RULES``: operator name -> ``rule(shape, attrs, n_in)``, where ``shape`` is
  the data's (input 0) shape as known so far (None dims unknown; None for an unknown
  rank), ``attrs`` the operator's default attributes updated with the node's, and
  ``n_in`` the number of inputs. It returns ``{input position: shape}`` (None dims
  unknown); the inferrer fills only unknown dimensions with it, so a rule that
  disagrees with known shapes is ignored (the operator's own ``infer`` decides).
- ``PARAM_INPUTS``: operator name -> the input positions that are parameters (they take
  the data's dtype when theirs is unknown).
- ``ELEMWISE_BINARY``: operators whose unknown operand takes the other's shape.

A new operator adds its rule by writing a ``_myop(shape, a, n_in)`` function here that
returns ``{}`` when it cannot tell, registering it in ``BACKWARD_RULES`` under the
operator's registry name, and listing its parameter positions in ``PARAM_INPUTS``.

Example:
    >>> from core.symbol.shape_rules import BACKWARD_RULES
    >>> BACKWARD_RULES["FullyConnected"]((2, 3), {"num_hidden": 4}, 3)
    {1: (4, 3), 2: (4,)}
"""
from __future__ import annotations

import math
import numbers

# Elementwise binary operators: an unknown operand takes the other's shape.
ELEMWISE_BINARY = {"add", "subtract", "multiply", "divide", "floor_divide", "mod", "power",
                   "maximum", "minimum", "hypot", "arctan2", "logaddexp", "copysign", "equal",
                   "not_equal", "less", "less_equal", "greater", "greater_equal",
                   "logical_and", "logical_or", "logical_xor", "bitwise_and", "bitwise_or",
                   "bitwise_xor"}

# Inputs that are parameters (they take the data's dtype when theirs is unknown).
PARAM_INPUTS = {"FullyConnected": (1, 2), "Convolution": (1, 2), "Deconvolution": (1, 2),
                "BatchNorm": (1, 2, 3, 4), "_batch_norm_train": (1, 2),
                "_batch_norm_infer": (1, 2, 3, 4), "_layer_norm": (1, 2),
                "_instance_norm": (1, 2), "_group_norm": (1, 2), "LeakyReLU": (1,),
                "RNN": (1, 2, 3), "SoftmaxOutput": (1,), "Embedding": (1,)}


def _known(*dims) -> bool:
    return all(d is not None for d in dims)


def _fc(shape, a, n_in):
    nh = a.get("num_hidden")
    if nh is None or shape == ():
        return {}
    if shape is None:
        units = None
    elif a.get("flatten", True):
        rest = shape[1:]
        units = math.prod(rest) if _known(*rest) else None
    else:
        units = shape[-1]
    out = {1: (int(nh), units)}
    if not a.get("no_bias"):
        out[2] = (int(nh),)
    return out


def _layout_cl(layout, ndim) -> bool:
    return isinstance(layout, str) and layout.endswith("C") and ndim >= 3


def _conv(shape, a, n_in, deconv=False):
    kernel = a.get("kernel") or ()
    if isinstance(kernel, numbers.Integral):
        if shape is None:
            return {}
        kernel = (kernel,) * (len(shape) - 2)
    kernel = tuple(kernel)
    if shape is None:
        shape = (None,) * (len(kernel) + 2)
    nd = len(shape)
    if nd < 3:
        return {}
    nf, g = a.get("num_filter") or 0, a.get("num_group") or 1
    if len(kernel) != nd - 2 or not nf:
        return {}
    cl = _layout_cl(a.get("layout"), nd)
    c = shape[-1] if cl else shape[1]
    if deconv:
        inner = nf // g
        w = (c,) + (kernel + (inner,) if cl else (inner,) + kernel)
    else:
        inner = c // g if c is not None else None
        w = (nf,) + (kernel + (inner,) if cl else (inner,) + kernel)
    out = {1: w}
    if not a.get("no_bias", deconv):
        out[2] = (nf,)
    return out


def _norm_axis(shape, axis):
    nd = len(shape)
    if not isinstance(axis, numbers.Integral) or not -nd <= axis < nd:
        return None
    return axis % nd


def _batchnorm(shape, a, n_in):
    if shape is None:
        return {}
    ax = _norm_axis(shape, a.get("axis", 1))
    if ax is None:
        return {}
    c = (shape[ax],)
    return {i: c for i in range(1, min(n_in, 5))}


def _layernorm(shape, a, n_in):
    if shape is None:
        return {}
    ax = _norm_axis(shape, a.get("axis", -1))
    return {} if ax is None else {1: (shape[ax],), 2: (shape[ax],)}


def _channel1(shape, a, n_in):
    if shape is None or len(shape) < 2:
        return {}
    return {1: (shape[1],), 2: (shape[1],)}


def _embedding(shape, a, n_in):
    i, o = a.get("input_dim"), a.get("output_dim")
    if i is None or o is None:
        return {}
    return {1: (int(i), int(o))}


def _leaky(shape, a, n_in):
    if a.get("act_type") != "prelu" or not shape:  # None or ()
        return {}
    return {1: (shape[1] if len(shape) >= 2 else shape[0],)}


def _rnn(shape, a, n_in):
    from ..ops.nn.rnn import param_size

    if shape is None or len(shape) != 3:
        return {}
    N, I = (shape[1], shape[2]) if a.get("layout", "TNC") == "TNC" else (shape[0], shape[2])
    H, L, mode = a.get("state_size"), a.get("num_layers", 1), a.get("mode")
    if H is None or mode is None:
        return {}
    D = 2 if a.get("bidirectional") else 1
    out = {2: (L * D, N, H)}
    if mode == "lstm":
        out[3] = (L * D, N, H)
    if I is not None:
        try:
            out[1] = (param_size(mode, L, D, I, H),)
        except (KeyError, TypeError, ValueError):
            pass
    if a.get("use_sequence_length"):
        out[4] = (N,)
    return out


def _softmax_output(shape, a, n_in):
    if shape is None or len(shape) < 2:
        return {}
    if a.get("multi_output"):
        return {1: (shape[0],) + tuple(shape[2:])}
    return {1: tuple(shape[:-1])}


def _sequence(shape, a, n_in):
    if shape is None or len(shape) < 2 or not a.get("use_sequence_length"):
        return {}
    return {1: (shape[1] if a.get("axis", 0) == 0 else shape[0],)}


def _ctc(shape, a, n_in):
    if shape is None or len(shape) != 3:
        return {}
    n = shape[0] if a.get("layout") == "NTC" else shape[1]
    return {2: (n,), 3: (n,)}


BACKWARD_RULES = {
    "SequenceMask": _sequence,
    "SequenceLast": _sequence,
    "SequenceReverse": _sequence,
    "CTCLoss": _ctc,
    "SoftmaxOutput": _softmax_output,
    "FullyConnected": _fc,
    "Convolution": _conv,
    "Deconvolution": lambda s, a, n: _conv(s, a, n, deconv=True),
    "BatchNorm": _batchnorm,
    "_batch_norm_train": _batchnorm,
    "_batch_norm_infer": _batchnorm,
    "_layer_norm": _layernorm,
    "_instance_norm": _channel1,
    "_group_norm": _channel1,
    "Embedding": _embedding,
    "LeakyReLU": _leaky,
    "RNN": _rnn,
}
