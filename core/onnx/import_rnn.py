"""ONNX import rules: LSTM, GRU and RNN as MXNet's fused ``RNN`` operator.

ONNX keeps per-direction ``W (D, G*H, I)``, ``R (D, G*H, H)``, ``B (D, 2*G*H)`` with the
gates in its own order (LSTM ``i, o, f, c``; GRU ``z, r, h``); MXNet's RNN takes one flat
parameter vector (every direction's i2h then h2h weight, then the biases in the same
order) with the gates as ``i, f, g, o`` and ``r, z, n``. The packing is built in the
graph from ``W``, ``R`` and ``B``, so those keep their ONNX names in ``arg_params`` and
fine-tuning reaches them.
"""
from __future__ import annotations

import numpy

from .. import sym

# mode, gate count, the ONNX gate index of each MXNet gate, ONNX's default activations
_CELLS = {"LSTM": ("lstm", 4, (0, 2, 3, 1), ("sigmoid", "tanh", "tanh")),
          "GRU": ("gru", 3, (1, 0, 2), ("sigmoid", "tanh")),
          "RNN": (None, 1, (0,), ("tanh",))}


def _gates(x, gates: int, order) -> sym.Symbol:
    """``x`` (G*H, ...) flattened with its gate blocks in MXNet's order."""
    parts = sym.split(x, num_outputs=gates, axis=0) if gates > 1 else None
    blocks = [parts[g] for g in order] if gates > 1 else [x]
    joined = sym.Concat(*blocks, dim=0, num_args=len(blocks)) if gates > 1 else x
    return sym.reshape(joined, shape=(-1,))


def _direction(x, d: int):
    return sym.reshape(sym.slice_axis(x, axis=0, begin=d, end=d + 1), shape=(-3, -2))


def _mode(ctx, node, a, dirs: int) -> str:
    mode, _, _, default = _CELLS[node.op_type]
    acts = tuple(s.lower() for s in a.get("activations", default * dirs))
    if mode is None:  # plain RNN: tanh or relu, the same in both directions
        if len(set(acts)) == 1 and acts[0] in ("tanh", "relu"):
            return "rnn_" + acts[0]
        raise ctx.error(node, f"has activations={acts}; translated: Tanh or Relu")
    if acts != default * dirs:
        raise ctx.error(node, f"has activations={acts}; MXNet's fused {node.op_type} "
                        f"computes {default * dirs}")
    return mode


def _rnn(ctx, node, a):
    _, gates, order, _ = _CELLS[node.op_type]
    direction = a.get("direction", "forward")
    if direction not in ("forward", "reverse", "bidirectional"):
        raise ctx.error(node, f"has direction={direction!r}; ONNX's are forward, reverse, "
                        "bidirectional")
    dirs = 2 if direction == "bidirectional" else 1
    mode = _mode(ctx, node, a, dirs)
    if "clip" in a:
        raise ctx.error(node, f"has clip={a['clip']}; cell clipping is not translated")
    if a.get("input_forget", 0):
        raise ctx.error(node, "has input_forget=1, which MXNet's LSTM does not compute")
    if node.op_type == "GRU" and not a.get("linear_before_reset", 0):
        raise ctx.error(node, "has linear_before_reset=0; MXNet's GRU computes "
                        "linear_before_reset=1 (r * (W_hn h + b_hn)), so it cannot be "
                        "translated exactly")
    if node.op_type == "LSTM" and ctx.has(node, 7):
        raise ctx.error(node, "has peephole weights P, which MXNet's LSTM does not have")
    hidden = a.get("hidden_size")
    w_shape = ctx.shape(node.input[1])
    if hidden is None and w_shape is not None and w_shape[1] is not None:
        hidden = w_shape[1] // gates
    if hidden is None:
        raise ctx.error(node, "needs hidden_size (or a W of known shape)")
    batch_first = bool(a.get("layout", 0))
    x = ctx.sym(node.input[0])
    if batch_first:
        x = sym.swapaxes(x, dim1=0, dim2=1)
    if direction == "reverse":  # one forward pass over the reversed sequence
        x = sym.reverse(x, axis=0)
    seq = {}
    if ctx.has(node, 4):
        lens = ctx.const(node.input[4])
        xs = ctx.shape(node.input[0])
        steps = None if xs is None else xs[1 if batch_first else 0]
        if lens is None or steps is None or numpy.any(lens != steps):
            if direction == "reverse":
                raise ctx.error(node, "has direction='reverse' with sequence_lens; "
                                "translated: forward or bidirectional with them")
            # MXNet's RNN reads lengths itself: outputs past them are 0, states the last
            seq = {"sequence_length": ctx.sym(node.input[4]), "use_sequence_length": True}
    w, r = ctx.sym(node.input[1]), ctx.sym(node.input[2])
    weights, biases = [], []
    for d in range(dirs):
        weights += [_gates(_direction(w, d), gates, order), _gates(_direction(r, d), gates, order)]
        if ctx.has(node, 3):
            bd = sym.reshape(_direction(ctx.sym(node.input[3]), d), shape=(2, -1))
            biases += [_gates(sym.reshape(sym.slice_axis(bd, axis=0, begin=k, end=k + 1),
                                          shape=(-1,)), gates, order) for k in (0, 1)]
        else:
            biases.append(sym.zeros(shape=(2 * gates * hidden,)))
    parts = weights + biases
    params = sym.Concat(*parts, dim=0, num_args=len(parts))
    states = [_state(ctx, node, i, x, dirs, hidden, batch_first)
              for i in ((5, 6) if mode == "lstm" else (5,))]
    out = sym.RNN(x, params, *states, state_size=hidden, num_layers=1,
                  bidirectional=dirs == 2, mode=mode, state_outputs=True,
                  name=ctx.node_name(node), **seq)
    # (T, N, D*H) -> ONNX's Y (T, D, N, H)
    y = sym.transpose(sym.reshape(out[0], shape=(0, 0, dirs, -1)), axes=(0, 2, 1, 3))
    if direction == "reverse":  # Y in the input's time order
        y = sym.reverse(y, axis=0)
    results = [y, out[1]] + ([out[2]] if mode == "lstm" else [])
    if batch_first:  # Y (N, T, D, H); Y_h, Y_c (N, D, H)
        results = [sym.transpose(results[0], axes=(2, 0, 1, 3))] + \
            [sym.swapaxes(s, dim1=0, dim2=1) for s in results[1:]]
    return results


def _state(ctx, node, i, x, dirs, hidden, batch_first):
    if ctx.has(node, i):
        s = ctx.sym(node.input[i])
        return sym.swapaxes(s, dim1=0, dim2=1) if batch_first else s
    # zeros (D, N, H), N read from the data at run time
    z = sym.zeros_like(sym.slice_axis(sym.slice_axis(x, axis=2, begin=0, end=1), axis=0,
                                      begin=0, end=1))
    return sym.broadcast_axis(z, axis=(0, 2), size=(dirs, hidden))


RULES = {"LSTM": _rnn, "GRU": _rnn, "RNN": _rnn}
