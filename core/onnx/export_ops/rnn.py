"""The fused RNN (MXNet's ``RNN``) as one ONNX LSTM/GRU/RNN node per layer.

MXNet's flat parameter vector (every layer's and direction's i2h and h2h weights, then
their biases; see :mod:`core.ops.nn.rnn`) must be a constant; it is unpacked into ONNX's
``W``/``R``/``B`` with the gates reordered: LSTM i, f, g, o -> ONNX i, o, f, c; GRU r, z,
n -> ONNX z, r, h (``linear_before_reset=1``, MXNet's GRU)."""
from __future__ import annotations

import numpy

from ..export_emit import ExportError

_GATES = {"lstm": 4, "gru": 3, "rnn_tanh": 1, "rnn_relu": 1}
_ORDER = {"lstm": [0, 3, 1, 2], "gru": [1, 0, 2], "rnn_tanh": [0], "rnn_relu": [0]}
_ONNX_OP = {"lstm": "LSTM", "gru": "GRU", "rnn_tanh": "RNN", "rnn_relu": "RNN"}


def _unpack(flat, mode, layers, dirs, in_size, h):
    """``[(W, R, B) per layer]`` with ONNX shapes and gate order."""
    g = _GATES[mode]
    gh = g * h
    order = _ORDER[mode]
    pos = 0
    weights = []
    for layer in range(layers):
        c = in_size if layer == 0 else dirs * h
        per = []
        for _ in range(dirs):
            wi = flat[pos:pos + gh * c].reshape(gh, c)
            pos += gh * c
            wh = flat[pos:pos + gh * h].reshape(gh, h)
            pos += gh * h
            per.append((wi, wh))
        weights.append(per)
    biases = []
    for layer in range(layers):
        per = []
        for _ in range(dirs):
            bi = flat[pos:pos + gh]
            pos += gh
            bh = flat[pos:pos + gh]
            pos += gh
            per.append((bi, bh))
        biases.append(per)
    if pos != flat.size:
        raise ExportError(f"RNN: the parameter vector has {flat.size} values, the "
                          f"configuration needs {pos}")

    def reorder(a):
        blocks = a.reshape((g, h) + a.shape[1:])
        return blocks[order].reshape(a.shape)

    out = []
    for layer in range(layers):
        W = numpy.stack([reorder(wi) for wi, _ in weights[layer]])
        R = numpy.stack([reorder(wh) for _, wh in weights[layer]])
        B = numpy.stack([numpy.concatenate([reorder(bi), reorder(bh)])
                         for bi, bh in biases[layer]])
        out.append((W, R, B))
    return out


def _rnn(b, n, ins, attrs):
    mode = attrs.get("mode")
    if mode not in _GATES:
        raise ExportError(f"RNN: mode {mode!r}")
    for k in ("projection_size", "lstm_state_clip_min", "lstm_state_clip_max"):
        if attrs.get(k) is not None:
            raise ExportError(f"RNN: {k}={attrs[k]!r} has no ONNX form")
    if attrs.get("use_sequence_length"):
        raise ExportError("RNN: use_sequence_length=True")
    if attrs.get("training") is True and attrs.get("p"):
        raise ExportError("RNN with dropout and training fixed to True")
    flat = b.value(ins[1])
    if flat is None:
        raise ExportError("RNN: the parameter vector must be known at export (a parameter "
                          "or computed from parameters), not a graph input")
    layers, h = int(attrs.get("num_layers", 1)), int(attrs["state_size"])
    dirs = 2 if attrs.get("bidirectional") else 1
    ntc = attrs.get("layout", "TNC") == "NTC"
    x = ins[0]
    if ntc:
        x = b.transpose(x, [1, 0, 2])
    in_size = b.in_shape(0)[2]
    dt = b.dtype(ins[0])
    params = _unpack(numpy.asarray(flat).reshape(-1).astype(dt), mode, layers, dirs, in_size, h)
    state = ins[2] if len(ins) > 2 and isinstance(ins[2], str) else None
    cell = ins[3] if len(ins) > 3 and isinstance(ins[3], str) else None
    hs, cs = [], []
    direction = "bidirectional" if dirs == 2 else "forward"
    extra = {}
    if mode == "gru":
        extra["linear_before_reset"] = 1
    if mode in ("rnn_tanh", "rnn_relu"):
        extra["activations"] = ["Tanh" if mode == "rnn_tanh" else "Relu"] * dirs
    for layer, (W, R, B) in enumerate(params):
        tag = f"l{layer}"
        inputs = [x, b.const(W, f"{tag}_W"), b.const(R, f"{tag}_R"), b.const(B, f"{tag}_B"), ""]
        sl = [layer * dirs, (layer + 1) * dirs]
        h0 = _layer_state(b, state, sl) if state else ""
        inputs.append(h0)
        if mode == "lstm":
            inputs.append(_layer_state(b, cell, sl) if cell else "")
        while inputs and inputs[-1] == "":
            inputs.pop()
        n_out = 3 if mode == "lstm" else 2
        outs = b.op(_ONNX_OP[mode], inputs, n_out=n_out, hidden_size=h, direction=direction,
                    dtype=dt, **extra)
        y = outs[0]  # (T, dirs, N, H) -> (T, N, dirs * H)
        y = b.op("Transpose", [y], perm=[0, 2, 1, 3], dtype=dt)
        x = b.reshape(y, [0, 0, -1])
        hs.append(outs[1])
        if mode == "lstm":
            cs.append(outs[2])
    out = b.transpose(x, [1, 0, 2]) if ntc else x
    results = [out]
    if n.num_outputs > 1:
        results.append(hs[0] if len(hs) == 1 else b.op("Concat", hs, axis=0, dtype=dt))
    if mode == "lstm" and n.num_outputs > 2:
        results.append(cs[0] if len(cs) == 1 else b.op("Concat", cs, axis=0, dtype=dt))
    results += [None] * (n.num_outputs - len(results))
    return results


def _layer_state(b, state, sl):
    return b.op("Slice", [state, b.ints([sl[0]], "starts"), b.ints([sl[1]], "ends"),
                          b.ints([0], "axes")], dtype=b.dtype(state))


RULES = {"RNN": _rnn}
