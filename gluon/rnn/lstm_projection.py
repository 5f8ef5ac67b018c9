"""LSTM with a projected recurrent state (MXNet's LSTMP) for ``gluon.rnn.LSTM``.

MXNet 1.9 computes ``LSTM(..., projection_size=P)`` with cuDNN only; here the layer is
built from core operators (one ``FullyConnected`` over the whole sequence for the input
projections, then per step the recurrent product, the gates and the projection), so it
runs everywhere, is differentiable and hybridizes. Per layer and direction::

    gates = W_i2h x_t + b_i2h + W_h2h r_{t-1} + b_h2h     (i, f, g, o)
    c_t = sigmoid(f) * c_{t-1} + sigmoid(i) * tanh(g)
    r_t = W_h2r (sigmoid(o) * tanh(c_t))                  (P features)

The states are ``r`` ``(L*D, N, P)`` and ``c`` ``(L*D, N, H)``; with sequence lengths,
the states stop at each sequence's last valid step and later outputs are 0 (the reverse
direction reads each sequence backward from its last valid step).
"""
from __future__ import annotations

from .rnn_cell import _as_list


def _steps(F, x, T):
    return _as_list(F.split(x, num_outputs=T, axis=0, squeeze_axis=True)) if T > 1 else \
        [F.reshape(x, shape=(-3, -2))]


def _direction(F, seq, r, c, p, H, P, lengths):
    """One direction over the steps ``seq`` (already in the order to run them)."""
    T = len(seq)
    x = F.stack(*seq, axis=0)
    i2h = _steps(F, F.FullyConnected(x, p["i2h_weight"], p["i2h_bias"], num_hidden=4 * H,
                                     flatten=False), T)
    outs = []
    for t in range(T):
        gates = i2h[t] + F.FullyConnected(r, p["h2h_weight"], p["h2h_bias"], num_hidden=4 * H)
        g = F.SliceChannel(gates, num_outputs=4, axis=1)
        c_new = F.sigmoid(g[1]) * c + F.sigmoid(g[0]) * F.tanh(g[2])
        r_new = F.FullyConnected(F.sigmoid(g[3]) * F.tanh(c_new), p["h2r_weight"],
                                 num_hidden=P, no_bias=True)
        if lengths is not None:  # past a sequence's end its states stay
            alive = F.reshape(F.broadcast_greater(lengths, F.ones_like(lengths) * t),
                              shape=(-1, 1))
            c_new = F.where(F.broadcast_like(alive, c_new), c_new, c)
            r_new = F.where(F.broadcast_like(alive, r_new), r_new, r)
        r, c = r_new, c_new
        outs.append(r)
    return outs, r, c


def lstmp_forward(F, layer, inputs, states, sequence_length, params):
    """The LSTMP layer's ``(output, [r_n, c_n])``.

    Args:
        F: the operator namespace (``core.nd``, or the traced one).
        layer: the ``gluon.rnn.LSTM`` (sizes, layout, dropout).
        inputs: ``(T, N, C)`` (``(N, T, C)`` for layout NTC), T known.
        states: ``[r0 (L*D, N, P), c0 (L*D, N, H)]``.
        sequence_length: ``(N,)`` valid lengths, or None.
        params: the layer's parameters by name (``l0_i2h_weight``, ...).

    Returns:
        ``(output, [r_n, c_n])``, the output ``(T, N, D*P)`` in the layer's layout.
    """
    x = F.swapaxes(inputs, 0, 1) if layer._layout == "NTC" else inputs
    T = x.shape[0]
    L, D, H, P = layer._num_layers, layer._dir, layer._hidden_size, layer._projection_size
    r0 = _steps(F, states[0], L * D)
    c0 = _steps(F, states[1], L * D)
    lengths = sequence_length if layer._use_sequence_length else None
    r_n, c_n = [], []
    for lay in range(L):
        dir_outs = []
        for d in range(D):
            p = {k: params[f"{'lr'[d]}{lay}_{k}"]
                 for k in ("i2h_weight", "h2h_weight", "h2r_weight", "i2h_bias", "h2h_bias")}
            idx = lay * D + d
            if d == 0:
                seq = _steps(F, x, T)
            elif lengths is None:
                seq = _steps(F, x, T)[::-1]
            else:
                seq = _steps(F, F.SequenceReverse(x, sequence_length=lengths,
                                                  use_sequence_length=True), T)
            outs, r, c = _direction(F, seq, r0[idx], c0[idx], p, H, P, lengths)
            if d == 1:
                if lengths is None:
                    outs = outs[::-1]
                else:
                    outs = _steps(F, F.SequenceReverse(F.stack(*outs, axis=0),
                                                       sequence_length=lengths,
                                                       use_sequence_length=True), T)
            dir_outs.append(outs)
            r_n.append(r)
            c_n.append(c)
        y = [F.concat(*pair, dim=1) for pair in zip(*dir_outs)] if D == 2 else dir_outs[0]
        x = F.stack(*y, axis=0)
        if lengths is not None:
            x = F.SequenceMask(x, sequence_length=lengths, use_sequence_length=True, axis=0)
        if layer._dropout and lay != L - 1:
            x = F.Dropout(x, p=layer._dropout)
    out = F.swapaxes(x, 0, 1) if layer._layout == "NTC" else x
    return out, [F.stack(*r_n, axis=0), F.stack(*c_n, axis=0)]
