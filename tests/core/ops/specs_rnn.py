"""Rows for the fused RNN operator (core/ops/nn/rnn.py), with a plain NumPy reference.

The reference runs every cell one sample and one step at a time, in float64, on
MXNet's flat parameter vector (weights of every layer/direction, i2h then h2h, then
the biases in the same order). ``tests/core/test_rnn.py`` uses it too.
"""
import numpy as np

from core import nd
from core.ops.nn import rnn as _rnn

from .op_db import OpSpec, Sample, rand

GATES = {"rnn_relu": 1, "rnn_tanh": 1, "lstm": 4, "gru": 3}
MODES = tuple(GATES)


def public_rnn():
    """``nd.RNN`` once core.nd applies the module's overrides; the module's until then."""
    return getattr(nd, "RNN", _rnn.RNN)


# ------------------------------------------------------------------ the NumPy reference
def _sigmoid(z):
    return 1.0 / (1.0 + np.exp(-z))


def np_cell(mode, x, h, c, wx, wh, bx, bh):
    """One step of one sample: returns (h', c')."""
    if mode == "gru":
        ax, ah = wx @ x + bx, wh @ h + bh
        H = h.shape[0]
        r = _sigmoid(ax[:H] + ah[:H])
        z = _sigmoid(ax[H:2 * H] + ah[H:2 * H])
        n = np.tanh(ax[2 * H:] + r * ah[2 * H:])
        return (1 - z) * n + z * h, c
    a = wx @ x + bx + wh @ h + bh
    if mode == "rnn_tanh":
        return np.tanh(a), c
    if mode == "rnn_relu":
        return np.maximum(a, 0), c
    i, f, g, o = np.split(a, 4)
    c = _sigmoid(f) * c + _sigmoid(i) * np.tanh(g)
    return _sigmoid(o) * np.tanh(c), c


def unpack(params, mode, input_size, state_size, num_layers=1, bidirectional=False):
    """[(wx, wh, bx, bh)] per layer and direction, from MXNet's flat vector."""
    G, H, D = GATES[mode], state_size, 2 if bidirectional else 1
    out, off = [], 0
    for layer in range(num_layers):
        c = input_size if layer == 0 else D * H
        for _ in range(D):
            wx = params[off:off + G * H * c].reshape(G * H, c)
            off += G * H * c
            wh = params[off:off + G * H * H].reshape(G * H, H)
            off += G * H * H
            out.append([wx, wh])
    for w in out:
        w += [params[off:off + G * H], params[off + G * H:off + 2 * G * H]]
        off += 2 * G * H
    assert off == params.size, (off, params.size)
    return out


def pack(weights):
    """MXNet's flat vector from [(wx, wh, bx, bh)] per layer and direction."""
    return np.concatenate([np.ravel(a) for w in weights for a in w[:2]]
                          + [np.ravel(a) for w in weights for a in w[2:]])


def np_rnn(data, parameters, state=None, state_cell=None, sequence_length=None, *,
           state_size, mode, num_layers=1, bidirectional=False, p=0.0, state_outputs=False,
           use_sequence_length=False, layout="TNC"):
    """MXNet's RNN, one sample and one step at a time (reference; no dropout)."""
    dt = data.dtype
    x = np.asarray(data, np.float64)
    x = x if layout == "TNC" else x.transpose(1, 0, 2)
    T, N, I = x.shape
    H, L, D = state_size, num_layers, 2 if bidirectional else 1
    ws = unpack(np.asarray(parameters, np.float64), mode, I, H, L, bidirectional)
    zeros = np.zeros((L * D, N, H))
    h0 = zeros if state is None else np.asarray(state, np.float64)
    c0 = zeros if state_cell is None else np.asarray(state_cell, np.float64)
    lens = [T] * N if not use_sequence_length else [int(v) for v in sequence_length]
    inp, hs, cs = x, [], []
    for layer in range(L):
        outs = []
        for d in range(D):
            k = layer * D + d
            y = np.zeros((T, N, H))
            hk, ck = h0[k].copy(), c0[k].copy()
            for n in range(N):
                h, c = hk[n], ck[n]
                steps = range(lens[n]) if d == 0 else range(lens[n] - 1, -1, -1)
                for t in steps:
                    h, c = np_cell(mode, inp[t, n], h, c, *ws[k])
                    y[t, n] = h
                hk[n], ck[n] = h, c
            outs.append(y)
            hs.append(hk)
            cs.append(ck)
        inp = np.concatenate(outs, axis=-1)
    out = inp if layout == "TNC" else inp.transpose(1, 0, 2)
    res = (out, np.stack(hs)) + ((np.stack(cs),) if mode == "lstm" else ())
    res = tuple(a.astype(dt) for a in res)
    return res if state_outputs else res[0]


# ------------------------------------------------------------------ samples
def rnn_inputs(rng, d, mode, T=3, N=2, I=3, H=2, num_layers=1, bidirectional=False,
               layout="TNC", lens=None, scale=0.6):
    """(args, kwargs) for one call: data, parameters, state[, state_cell][, lengths]."""
    D = 2 if bidirectional else 1
    size = _rnn.param_size(mode, num_layers, D, I, H)
    shape = (T, N, I) if layout == "TNC" else (N, T, I)
    args = [rand(rng, shape, d, -1, 1), rand(rng, (size,), d, -scale, scale),
            rand(rng, (num_layers * D, N, H), d, -1, 1)]
    args.append(rand(rng, (num_layers * D, N, H), d, -1, 1) if mode == "lstm" else None)
    kw = {"state_size": H, "num_layers": num_layers, "bidirectional": bidirectional,
          "mode": mode, "layout": layout, "state_outputs": True}
    if lens is not None:
        args.append(np.asarray(lens, np.int32))
        kw["use_sequence_length"] = True
    return args, kw


_CONFIGS = [
    {},
    {"T": 4, "N": 3, "I": 2, "H": 3, "num_layers": 2, "bidirectional": True},
    {"T": 3, "N": 2, "I": 3, "H": 2, "num_layers": 2, "layout": "NTC"},
    {"T": 4, "N": 3, "I": 2, "H": 2, "bidirectional": True, "lens": [4, 2, 1]},
]


def _samples(mode):
    def samples(rng, d):
        out = []
        for cfg in _CONFIGS:
            args, kw = rnn_inputs(rng, d, mode, **cfg)
            out.append(Sample(*args, **kw))
        args, kw = rnn_inputs(rng, d, mode)
        out.append(Sample(*args, **dict(kw, state_outputs=False)))
        return out

    return samples


def _call(*args, **kw):
    return public_rnn()(*args, **kw)


SPECS = [
    OpSpec("RNN", _call, np_rnn, _samples(mode), dtypes=("float32", "float64"), rtol=1e-4,
           atol=1e-5, covers=("_rnn_backward",) if mode == "lstm" else (),
           extra={"id": f"RNN_{mode}"})
    for mode in MODES
] + [
    # float16 runs in float32 inside and returns float16
    OpSpec("RNN", _call, np_rnn, _samples("lstm"), dtypes=("float16",), grad=False,
           extra={"id": "RNN_float16"}),
]
