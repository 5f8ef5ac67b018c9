"""The fused RNN operator (MXNet's ``RNN``): multi-layer, bidirectional rnn_relu,
rnn_tanh, LSTM and GRU over a whole sequence in one call.

Parameters are MXNet's single flat vector, packed as in MXNet's
``src/operator/rnn-inl.h``/``rnn_impl.h`` and ``gluon/rnn/rnn_layer.py``
(``_forward_kernel``): first every weight, for each layer and, within a layer, each
direction (forward, then reverse): the i2h weight ``(G*H, C)`` then the h2h weight
``(G*H, H)``; then every bias in the same layer/direction order: the i2h bias
``(G*H,)`` then the h2h bias ``(G*H,)``. ``C`` is the input size for layer 0 and
``D*H`` above it; ``G`` is 1 (rnn_relu, rnn_tanh), 4 (LSTM gates i, f, g, o) or 3
(GRU gates r, z, n, with ``n = tanh(W_in x + b_in + r * (W_hn h + b_hn))``).

The registered operator ``RNN`` always returns ``(out, h_n, [c_n,] reserve)``:
``reserve`` is a flat hidden output that keeps what backward needs (activated
gates, cell states, the outputs of the lower layers and the dropout masks), so
backward never recomputes the forward. The public function (``nd.RNN``, applied by
``core.nd`` from :data:`NAMESPACE_OVERRIDES`) returns ``out``, or ``(out, h_n[,
c_n])`` with ``state_outputs=True``, as MXNet does, and passes training mode
(dropout between layers) to the pure operator as the attribute ``training``.

Backward is one registered operator, ``_rnn_backward``, that computes the
gradients with respect to data, parameters and initial states with ``xp`` in a
single pass through time (kernels in ``rnn_cells.py``). It is not itself
differentiable: the fused RNN has first derivatives only (asking for a second
derivative raises an error that says so); unroll the cells for higher orders.
"""
from __future__ import annotations

import numpy

from ... import random as _random
from ... import tape as _tape
from ...dtypes import is_float, is_integer
from ..abstract import is_tracing
from ..dispatch import invoke
from ..infer import fmt
from ..param_shapes import ParamShapes
from ..registry import REGISTRY, Aval, F, defop
from . import rnn_cells as _cells

_FLOATS = (numpy.dtype("float16"), numpy.dtype("float32"), numpy.dtype("float64"))
_LAYOUTS = ("TNC", "NTC")
_ATTRS = {"state_size": None, "num_layers": 1, "bidirectional": False, "mode": None,
          "p": 0.0, "state_outputs": False, "projection_size": None,
          "lstm_state_clip_min": None, "lstm_state_clip_max": None,
          "lstm_state_clip_nan": False, "use_sequence_length": False, "layout": "TNC",
          "training": False}
_INPUTS = ("data", "parameters", "state", "state_cell?", "sequence_length?")


def _int(v, what, low=1):
    if isinstance(v, bool) or not isinstance(v, (int, numpy.integer)) or v < low:
        raise ValueError(f"RNN: {what} must be an integer >= {low}, got {v!r}")
    return int(v)


def param_size(mode: str, num_layers: int, directions: int, input_size: int,
               state_size: int) -> int:
    """The length of MXNet's flat parameter vector for this configuration."""
    gh = _cells.GATES[mode] * state_size
    size = 0
    for layer in range(num_layers):
        c = input_size if layer == 0 else state_size * directions
        size += directions * (gh * (c + state_size) + 2 * gh)
    return size


class _Config:
    """Sizes and options of one RNN call, validated (``ValueError``/``TypeError`` naming RNN)."""

    __slots__ = ("D", "G", "H", "I", "L", "N", "T", "cdt", "drop", "dtype", "layout", "masks",
                 "mode", "p", "psize", "use_len")

    def __init__(self, data, parameters, state, state_cell, sequence_length, at):
        avals = [data, parameters, state, state_cell, sequence_length]
        where = f"(inputs: {fmt(avals)})"
        mode = at.get("mode")
        if mode not in _cells.GATES:
            raise ValueError(f"RNN: mode must be one of {', '.join(map(repr, _cells.GATES))}, "
                             f"got {mode!r}")
        layout = at.get("layout", "TNC")
        if layout not in _LAYOUTS:
            raise ValueError(f"RNN: layout must be 'TNC' or 'NTC', got {layout!r}")
        if not isinstance(data, Aval) or data.ndim != 3:
            raise ValueError(f"RNN: data must be a 3-D array {layout} (sequence, batch, features "
                             f"in that order), got {fmt([data])} {where}")
        if data.dtype not in _FLOATS:
            raise TypeError(f"RNN: data must be float16, float32 or float64, got "
                            f"{data.dtype} {where}; the fused RNN has no bfloat16/float8 "
                            f"path: cast data and parameters with .astype('float32')")
        H = _int(at.get("state_size"), "state_size")
        L = _int(at.get("num_layers", 1), "num_layers")
        D = 2 if at.get("bidirectional") else 1
        p = at.get("p", 0.0)
        if not 0.0 <= float(p) < 1.0:
            raise ValueError(f"RNN: dropout p must be in [0, 1), got {p!r}")
        for k in ("projection_size", "lstm_state_clip_min", "lstm_state_clip_max"):
            if at.get(k) is not None:
                raise ValueError(f"RNN: {k} is not supported (MXNet offers it with cuDNN only); "
                                 "leave it None")
        if layout == "TNC":
            T, N, I = data.shape
        else:
            N, T, I = data.shape
        self.T, self.N, self.I, self.H, self.L, self.D = T, N, I, H, L, D
        self.G = _cells.GATES[mode]
        self.mode, self.layout, self.p = mode, layout, float(p)
        self.dtype = data.dtype
        self.cdt = numpy.dtype("float32") if data.dtype == numpy.float16 else data.dtype
        # The reserve has room for dropout masks whenever dropout is configured, in both
        # modes, so its shape does not depend on ``training`` (TRAIN in a graph's infer).
        self.masks = self.p > 0 and L > 1
        training = at.get("training")
        self.drop = bool(self.masks and training is not _train_flag() and training)
        self.psize = param_size(mode, L, D, I, H)
        if not isinstance(parameters, Aval) or parameters.ndim != 1:
            raise ValueError(f"RNN: parameters must be a 1-D array of length {self.psize}, got "
                             f"{fmt([parameters])} {where}")
        if parameters.shape[0] != self.psize:
            raise ValueError(
                f"RNN: the parameter vector has length {parameters.shape[0]}, but mode={mode!r} "
                f"with input size {I}, state_size={H}, num_layers={L}, bidirectional={D == 2} "
                f"needs length {self.psize} (for each layer and direction an i2h weight "
                f"({self.G * H}, C) and an h2h weight ({self.G * H}, {H}), then all i2h and "
                f"h2h biases ({self.G * H},)) {where}")
        self._check_dtype("parameters", parameters, where)
        expected = (L * D, N, H)
        if mode != "lstm" and state_cell is not None:
            raise ValueError(f"RNN: state_cell is only used by mode='lstm', got one for "
                             f"mode={mode!r} {where}")
        for name, s in (("state", state), ("state_cell", state_cell)):
            if s is None:
                continue
            if not isinstance(s, Aval) or s.shape != expected:
                raise ValueError(
                    f"RNN: the initial {name} must have shape {expected} (num_layers * "
                    f"directions, batch, state_size), got {fmt([s])} {where}")
            self._check_dtype(name, s, where)
        self.use_len = bool(at.get("use_sequence_length"))
        if self.use_len:
            if not isinstance(sequence_length, Aval) or sequence_length.shape != (N,):
                raise ValueError(f"RNN: use_sequence_length=True needs sequence_length of shape "
                                 f"({N},) (one length per batch entry), got "
                                 f"{fmt([sequence_length])} {where}")
            if not (is_integer(sequence_length.dtype) or is_float(sequence_length.dtype)):
                raise TypeError(f"RNN: sequence_length must hold integers or floats, got "
                                f"{sequence_length.dtype} {where}")

    def _check_dtype(self, name, a, where):
        if a.dtype != self.dtype:
            raise TypeError(f"RNN: {name} has dtype {a.dtype} but data has {self.dtype}; all "
                            f"must have the same dtype {where}")

    @property
    def lstm(self) -> bool:
        return self.mode == "lstm"

    def out_shape(self):
        T, N, DH = self.T, self.N, self.D * self.H
        return (T, N, DH) if self.layout == "TNC" else (N, T, DH)

    def cell_size(self) -> int:
        return _cells.CELL_FLOATS[self.mode] * self.T * self.N * self.H

    def y_size(self) -> int:
        return self.T * self.N * self.D * self.H

    def reserve_size(self) -> int:
        per_layer = self.y_size() * (2 if self.masks else 1)
        return self.L * self.D * self.cell_size() + (self.L - 1) * per_layer


def _train_flag():
    """core.symbol's TRAIN flag (imported late: core.symbol imports the operators)."""
    from ...symbol.graph import TRAIN

    return TRAIN


def _aval(a):
    return Aval(a.shape, a.dtype) if a is not None else None


def _config(data, parameters, state, state_cell, sequence_length, at) -> _Config:
    return _Config(_aval(data), _aval(parameters), _aval(state), _aval(state_cell),
                   _aval(sequence_length), at)


# --------------------------------------------------------------------------- reserve
def _reserve_views(rs, cfg: _Config):
    """Per (layer, direction) the cell's views; per layer below the top its output and
    (with dropout in training) its scaled dropout mask."""
    T, N, H, D = cfg.T, cfg.N, cfg.H, cfg.D
    cells, ys, masks = [], [], []
    off, n = 0, T * N * H
    for _ in range(cfg.L * D):
        v = {}
        if cfg.mode in ("lstm", "gru"):
            v["gates"] = rs[off:off + 4 * n].reshape(T, N, 4 * H)
        if cfg.lstm:
            v["c"] = rs[off + 4 * n:off + 5 * n].reshape(T, N, H)
            v["tc"] = rs[off + 5 * n:off + 6 * n].reshape(T, N, H)
        cells.append(v)
        off += cfg.cell_size()
    ysz = cfg.y_size()
    for _ in range(cfg.L - 1):
        ys.append(rs[off:off + ysz].reshape(T, N, D * H))
        off += ysz
        if cfg.masks:
            if cfg.drop:
                masks.append(rs[off:off + ysz].reshape(T, N, D * H))
            off += ysz
    return cells, ys, masks


def _unpack(params, cfg: _Config):
    """Views ``(wx, wh, bx, bh)`` per (layer, direction) of a contiguous flat vector."""
    gh, H, D = cfg.G * cfg.H, cfg.H, cfg.D
    weights, off = [], 0
    for layer in range(cfg.L):
        c = cfg.I if layer == 0 else H * D
        for _ in range(D):
            wx = params[off:off + gh * c].reshape(gh, c)
            off += gh * c
            wh = params[off:off + gh * H].reshape(gh, H)
            off += gh * H
            weights.append([wx, wh])
    for w in weights:
        w.append(params[off:off + gh])
        w.append(params[off + gh:off + 2 * gh])
        off += 2 * gh
    return weights


def _prepare(xp, cfg: _Config, data, parameters, state, state_cell, sequence_length):
    """Inputs in the compute dtype and TNC layout, zero states where none were given,
    and the ``(T, N, 1)`` validity mask (None without sequence lengths)."""
    cdt = cfg.cdt
    x = data if cfg.layout == "TNC" else data.swapaxes(0, 1)
    x = xp.ascontiguousarray(x, dtype=cdt)
    params = xp.ascontiguousarray(parameters, dtype=cdt)
    shape = (cfg.L * cfg.D, cfg.N, cfg.H)
    h0 = xp.zeros(shape, cdt) if state is None else xp.ascontiguousarray(state, dtype=cdt)
    c0 = None
    if cfg.lstm:
        c0 = (xp.zeros(shape, cdt) if state_cell is None
              else xp.ascontiguousarray(state_cell, dtype=cdt))
    mask = None
    if cfg.use_len:
        lens = xp.clip(sequence_length.astype(xp.int64), 0, cfg.T)
        mask = (xp.arange(cfg.T)[:, None] < lens[None, :]).astype(cdt)[:, :, None]
    return x, params, h0, c0, mask


# --------------------------------------------------------------------------- forward
def _rnn_infer(data, parameters, state, state_cell=None, sequence_length=None, **at):
    cfg = _Config(data, parameters, state, state_cell, sequence_length, at)
    states = (Aval((cfg.L * cfg.D, cfg.N, cfg.H), cfg.dtype),) * (2 if cfg.lstm else 1)
    return (Aval(cfg.out_shape(), cfg.dtype),) + states + (Aval((cfg.reserve_size(),), cfg.cdt),)


def _rnn_vjp(c, g):
    at = {k: v for k, v in c.attrs.items() if k != "ctx"}
    data, params, h0, c0, _ = c.inputs
    outs = c.outputs
    lstm = at["mode"] == "lstm"
    # no product for the data's gradient when nothing needs it (an input batch)
    need_data = c.node.parents[0] is not None
    grads = F._rnn_backward(data, params, h0, c0, c.inputs[4], outs[0], outs[-1], g[0], g[1],
                            g[2] if lstm else None, data_grad=need_data, **at)
    return (grads[0] if need_data else None, grads[1], grads[2] if h0 is not None else None,
            grads[3] if lstm and c0 is not None else None, None)


def _rnn_params(shape, a, n_in):
    """The flat parameter vector and the states from the data's (T, N, I) shape."""
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


@defop("RNN", infer=_rnn_infer, vjp=_rnn_vjp, inputs=_INPUTS, attrs=dict(_ATTRS),
       needs_ctx=True, random=True, param_shapes=ParamShapes(_rnn_params, (1, 2, 3)),
       optional_inputs={"state_cell": lambda a: a.get("mode") == "lstm",
                        "sequence_length": lambda a: bool(a.get("use_sequence_length"))},
       visible_outputs=lambda at: ((3 if at.get("mode") == "lstm" else 2)
                                   if at.get("state_outputs") else 1))
def _rnn(xp, data, parameters, state, state_cell=None, sequence_length=None, ctx=None, **at):
    """Fused multi-layer RNN/LSTM/GRU; returns (out, h_n, [c_n,] reserve)."""
    cfg = _config(data, parameters, state, state_cell, sequence_length, at)
    x, params, h0, c0, mask = _prepare(xp, cfg, data, parameters, state, state_cell,
                                       sequence_length)
    T, N, H, D, cdt = cfg.T, cfg.N, cfg.H, cfg.D, cfg.cdt
    rs = xp.empty((cfg.reserve_size(),), cdt)
    cells, ys, masks = _reserve_views(rs, cfg)
    out = xp.empty((T, N, D * H), cdt)
    hy = xp.empty((cfg.L * D, N, H), cdt)
    cy = xp.empty((cfg.L * D, N, H), cdt) if cfg.lstm else None
    weights = _unpack(params, cfg)
    forward = _cells.FORWARD[cfg.mode]
    inp = x
    for layer in range(cfg.L):
        y = out if layer == cfg.L - 1 else ys[layer]
        for d in range(D):
            k = layer * D + d
            h, cell = forward(xp, inp, h0[k], None if c0 is None else c0[k], weights[k],
                              d == 1, mask, cells[k], y[:, :, d * H:(d + 1) * H])
            hy[k] = h
            if cy is not None:
                cy[k] = cell
        if layer < cfg.L - 1:
            inp = y
            if cfg.drop:
                m = masks[layer]
                m[...] = _random.get_generator(ctx).random(size=m.shape, dtype=cdt) >= cfg.p
                m *= 1.0 / (1.0 - cfg.p)
                inp = y * m
    if cfg.layout == "NTC":
        out = xp.ascontiguousarray(out.swapaxes(0, 1))
    res = (out, hy) + ((cy,) if cfg.lstm else ())
    if cdt != cfg.dtype:
        res = tuple(a.astype(cfg.dtype) for a in res)
    return res + (rs,)


# --------------------------------------------------------------------------- backward
def _backward_infer(data, parameters, state, state_cell, sequence_length, out, reserve, dout,
                    dhy, dcy=None, data_grad=True, **at):
    cfg = _Config(data, parameters, state, state_cell, sequence_length, at)
    states = (Aval((cfg.L * cfg.D, cfg.N, cfg.H), cfg.dtype),) * (2 if cfg.lstm else 1)
    return (Aval(data.shape, data.dtype), Aval(parameters.shape, parameters.dtype)) + states


def _no_second_order(c, g):
    raise NotImplementedError(
        "RNN: the fused RNN has first derivatives only: its gradient is one backward pass "
        "through time (operator _rnn_backward) that is not itself differentiable, so a "
        "second derivative (autograd.grad(..., create_graph=True) then backward again) is "
        "not supported; unroll the cells (gluon.rnn.LSTMCell, GRUCell, RNNCell) for "
        "higher-order gradients")


def _weight_grads(xp, dw, gx2, xo, gh2, ho, x2, hp2, H):
    """Weight and bias gradients of one layer/direction as single products over all
    steps, written into the views ``dw`` of the parameter gradient (MXNet's order)."""
    dwx, dwh, dbx, dbh = dw
    ident = _cells.IDENTITY[len(xo)]
    if xo == ident:
        xp.dot(gx2.T, x2, out=dwx)
    else:
        _cells.put_rows(dwx, gx2.T @ x2, xo, H)
    if ho == ident:
        xp.dot(gh2.T, hp2, out=dwh)
    else:
        _cells.put_rows(dwh, gh2.T @ hp2, ho, H)
    _cells.put_rows(dbx, gx2.sum(axis=0), xo, H)
    if gh2 is gx2:
        dbh[...] = dbx
    else:
        _cells.put_rows(dbh, gh2.sum(axis=0), ho, H)


@defop("_rnn_backward", infer=_backward_infer, vjp=_no_second_order,
       inputs=_INPUTS + ("out", "reserve", "dout", "dhy", "dcy?"),
       attrs=dict(_ATTRS, data_grad=True))
def _rnn_backward(xp, data, parameters, state, state_cell, sequence_length, out, reserve, dout,
                  dhy, dcy=None, data_grad=True, **at):
    """Gradients of RNN wrt (data, parameters, state[, state_cell]) in one pass
    (``data_grad=False``: the data's gradient is not computed and comes back as zeros, a
    broadcast view)."""
    cfg = _config(data, parameters, state, state_cell, sequence_length, at)
    x, params, h0, c0, mask = _prepare(xp, cfg, data, parameters, state, state_cell,
                                       sequence_length)
    T, N, H, D, G, cdt = cfg.T, cfg.N, cfg.H, cfg.D, cfg.G, cfg.cdt
    cells, ys, masks = _reserve_views(reserve, cfg)
    tnc = (lambda a: a) if cfg.layout == "TNC" else (lambda a: a.swapaxes(0, 1))
    top = tnc(out).astype(cdt, copy=False)
    dy = tnc(dout).astype(cdt, copy=False)
    weights = _unpack(params, cfg)
    dparams = xp.empty((cfg.psize,), cdt)
    dweights = _unpack(dparams, cfg)
    dh0 = xp.empty((cfg.L * D, N, H), cdt)
    dc0 = xp.empty((cfg.L * D, N, H), cdt) if cfg.lstm else None
    backward = _cells.BACKWARD[cfg.mode]
    for layer in range(cfg.L - 1, -1, -1):
        y = top if layer == cfg.L - 1 else ys[layer]
        inp = x if layer == 0 else ys[layer - 1]
        if layer > 0 and cfg.drop:
            inp = inp * masks[layer - 1]
        C = inp.shape[-1]
        x2 = inp.reshape(T * N, C)
        dx = None
        for d in range(D):
            k, cols = layer * D + d, slice(d * H, (d + 1) * H)
            # C order: the cells update them in place, some through dot(..., out=), which
            # takes C arrays only (a column-major head gradient gives a column-major copy)
            dh = dhy[k].astype(cdt, order="C", copy=True)
            dc = dcy[k].astype(cdt, order="C", copy=True) if cfg.lstm else None
            gx, xo, gh, ho, hp, dh, dc = backward(
                xp, inp, h0[k], None if c0 is None else c0[k], weights[k], d == 1, mask,
                cells[k], y[:, :, cols], dy[:, :, cols], dh, dc)
            dh0[k] = dh
            if dc0 is not None:
                dc0[k] = dc
            gx2 = gx.reshape(T * N, G * H)
            gh2 = gx2 if gh is gx else gh.reshape(T * N, G * H)
            _weight_grads(xp, dweights[k], gx2, xo, gh2, ho, x2, hp.reshape(T * N, H), H)
            if layer == 0 and not data_grad:
                continue
            wx = weights[k][0]
            part = gx2 @ (wx if xo == _cells.IDENTITY[G] else _cells.rows(xp, wx, xo, H))
            if dx is None:
                dx = part
            else:
                dx += part
        if dx is None:  # layer 0, data_grad=False
            break
        dx = dx.reshape(T, N, C)
        if layer > 0:
            dy = dx * masks[layer - 1] if cfg.drop else dx
    if dx is None:
        ddata = xp.broadcast_to(xp.zeros((), cdt), tuple(data.shape))
    else:
        ddata = dx if cfg.layout == "TNC" else xp.ascontiguousarray(dx.swapaxes(0, 1))
    res = (ddata, dparams, dh0) + ((dc0,) if cfg.lstm else ())
    if cdt != cfg.dtype:
        res = tuple(a.astype(cfg.dtype) for a in res)
    return res


# --------------------------------------------------------------------------- public API
def RNN(data=None, parameters=None, state=None, state_cell=None, sequence_length=None,
        state_size=None, num_layers=1, bidirectional=False, mode=None, p=0.0,
        state_outputs=False, projection_size=None, lstm_state_clip_min=None,
        lstm_state_clip_max=None, lstm_state_clip_nan=False, use_sequence_length=False,
        layout="TNC", name=None, **kwargs):
    """MXNet's fused recurrent layers: stacked, optionally bidirectional RNN/LSTM/GRU.

    Args:
        data: ``(T, N, C)`` for ``layout='TNC'`` (default), ``(N, T, C)`` for ``'NTC'``.
        parameters: MXNet's flat parameter vector: for each layer, then direction, the
            i2h weight ``(G*H, C)`` and the h2h weight ``(G*H, H)``; then, in the same
            order, the i2h and h2h biases ``(G*H,)``. Gates: LSTM (i, f, g, o), GRU
            (r, z, n).
        state: initial hidden state ``(num_layers * D, N, H)``, D = 2 if bidirectional.
        state_cell: initial LSTM cell state, same shape (LSTM only).
        sequence_length: ``(N,)`` lengths, read when ``use_sequence_length=True``: outputs
            past a sequence's length are 0, final states are those of its last valid
            step, and the reverse direction starts at that step. For modes other than
            LSTM it may also come fourth, in ``state_cell``'s place, as in MXNet.
        state_size: H. num_layers: layers. bidirectional: run a reverse direction too
            (outputs concatenated on the feature axis).
        mode: ``'rnn_relu'``, ``'rnn_tanh'``, ``'lstm'`` or ``'gru'``.
        p: dropout rate on the outputs of every layer but the last, in training mode
            (``autograd.record()`` / ``autograd.train_mode()``) only. While tracing a
            graph (``core.symbol``) the mode is the executor's (``training=TRAIN``).
        state_outputs: also return the final states.
        layout: ``'TNC'`` or ``'NTC'``.

    Returns:
        ``out`` ``(T, N, D*H)`` (``(N, T, D*H)`` for NTC), or with ``state_outputs=True``
        ``(out, h_n)``, and ``c_n`` too for LSTM.

    Gradients flow to data, parameters and the initial states; the fused RNN has first
    derivatives only.

    Example:
        >>> from core import nd
        >>> from core.ops.nn.rnn import RNN, param_size
        >>> n = param_size("lstm", 1, 1, 3, 4)
        >>> out, h, c = RNN(nd.ones((5, 2, 3)), nd.ones((n,)) * 0.1, nd.zeros((1, 2, 4)),
        ...                 nd.zeros((1, 2, 4)), state_size=4, mode="lstm",
        ...                 state_outputs=True)
        >>> out.shape, h.shape, c.shape
        ((5, 2, 4), (1, 2, 4), (1, 2, 4))
    """
    if kwargs.get("out", 0) is None:
        del kwargs["out"]
    if kwargs:
        raise TypeError(f"RNN: unexpected keyword argument(s) {', '.join(map(repr, kwargs))}")
    if (mode != "lstm" and use_sequence_length and sequence_length is None
            and state_cell is not None):
        state_cell, sequence_length = None, state_cell  # MXNet's input order without a cell
    attrs = {"state_size": state_size, "num_layers": num_layers,
             "bidirectional": bidirectional, "mode": mode, "p": p,
             "state_outputs": state_outputs, "projection_size": projection_size,
             "lstm_state_clip_min": lstm_state_clip_min,
             "lstm_state_clip_max": lstm_state_clip_max,
             "lstm_state_clip_nan": lstm_state_clip_nan,
             "use_sequence_length": use_sequence_length, "layout": layout,
             "training": _train_flag() if is_tracing() else _tape.is_training()}
    res = invoke(REGISTRY["RNN"], [data, parameters, state, state_cell, sequence_length], attrs)
    if not state_outputs:
        return res[0]
    return res[:3] if mode == "lstm" else res[:2]


NAMESPACE_OVERRIDES = {"nd": {"RNN": RNN}, "np": {}}
"""Public functions ``core.nd``/``core.np`` take from this module instead of generated ones."""
