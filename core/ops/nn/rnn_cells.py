"""The numeric kernels of the fused RNN operator (``core/ops/nn/rnn.py``), written on ``xp``.

One layer and direction at a time, each mode has a forward over the whole sequence
and a backward through time:

* forward: the input projection of every time step is one matrix product
  ``(T*N, C) @ (C, G*H)`` written straight into the reserve, then a Python loop
  over time does one ``(N, H) @ (H, G*H)`` product and a handful of in-place
  elementwise calls per step;
* backward: a Python loop over time (in reverse) computes each step's gate
  derivatives from the stored activations with a few elementwise calls (per step,
  while the step's rows are in cache: faster than whole-sequence passes) and does
  one ``(N, G*H) @ (G*H, H)`` product; the weight gradients are then single large
  products over all steps (done by the caller).

Conventions. Sigmoids are computed as ``sigmoid(z) = (1 + tanh(z / 2)) / 2``, with
the sigmoid gates' weights and biases halved up front (exact). LSTM gates are
activated with whole-row operations, which NumPy runs much faster than the same
operations on column slices: one ``tanh`` over all four gates of a step, then
``* scale + shift`` on the whole row turns the sigmoid gates' values into sigmoids. Gates stay in MXNet's order (LSTM i, f, g, o; GRU
r, z, n). The GRU backward buffer holds (n, r, z, Mnh) so that the input-side
gradient (n, r, z) and the hidden-side gradient (r, z, Mnh) are both contiguous
column ranges; ``order`` tuples give, for each block of such a buffer, MXNet's block
index.

On NumPy in float32/float64, the elementwise work of a step runs as numba kernels
(``rnn_cell_kernels.py``, same operations in the same order); the ``xp`` code here is
their twin and the path for CuPy and ``KBACKEND_NUMBA=0``.

Sequence lengths enter as ``mask``, a float ``(T, N, 1)`` array (1 at valid steps):
at a masked step the states are carried over unchanged and the output is 0, so
the reverse direction of a bidirectional layer effectively starts at each
sequence's last valid step.
"""
from __future__ import annotations

from . import rnn_cell_kernels as _k

GATES = {"rnn_relu": 1, "rnn_tanh": 1, "lstm": 4, "gru": 3}
GRU_X_ORDER = (2, 0, 1)  # backward input-side buffer (n, r, z)
IDENTITY = {1: (0,), 3: (0, 1, 2), 4: (0, 1, 2, 3)}
# reserve floats per (layer, direction) per T*N*H: LSTM gates (4) + c (1) + tanh(c) (1);
# GRU gates r, z, n and Mnh = W_hn h + b_hn (4); plain RNNs need only their outputs.
CELL_FLOATS = {"lstm": 6, "gru": 4, "rnn_relu": 0, "rnn_tanh": 0}


def rows(xp, w, order, hidden):
    """``w`` (``(G*H, ...)`` or ``(G*H,)``) with its gate blocks in ``order`` (a copy)."""
    return xp.concatenate([w[k * hidden:(k + 1) * hidden] for k in order])


def put_rows(dst, src, order, hidden):
    """``dst`` (MXNet block order) = ``src`` (blocks in ``order``)."""
    for j, k in enumerate(order):
        dst[k * hidden:(k + 1) * hidden] = src[j * hidden:(j + 1) * hidden]


def _sigmoid_rows(xp, w, hidden, sigmoid_blocks):
    """A copy of ``w`` with the rows of the sigmoid gates halved (``tanh(z / 2)``)."""
    w = w.copy()
    for k in sigmoid_blocks:
        w[k * hidden:(k + 1) * hidden] *= 0.5
    return w


def _affine(xp, hidden, gates, sigmoid_blocks, dtype):
    """``scale``, ``shift`` rows mapping ``tanh(z / 2)`` to ``sigmoid(z)`` on the sigmoid
    gates and leaving the others alone."""
    scale = xp.ones((gates * hidden,), dtype)
    shift = xp.zeros((gates * hidden,), dtype)
    for k in sigmoid_blocks:
        scale[k * hidden:(k + 1) * hidden] = 0.5
        shift[k * hidden:(k + 1) * hidden] = 0.5
    return scale, shift


def _steps(T, rev):
    return range(T - 1, -1, -1) if rev else range(T)


def shifted(xp, seq, first, rev):
    """``prev[t] = seq[t - 1]`` (``seq[t + 1]`` when ``rev``), ``first`` where none exists."""
    out = xp.empty(seq.shape, seq.dtype)
    if rev:
        out[:-1] = seq[1:]
        out[-1] = first
    else:
        out[1:] = seq[:-1]
        out[0] = first
    return out


def prev_hidden(xp, y, h0, mask, rev):
    """The hidden state entering each step: the previous output, ``h0`` at the start
    and, with sequence lengths, ``h0`` wherever the previous step was masked."""
    hp = shifted(xp, y, h0, rev)
    if mask is not None:
        mp = shifted(xp, mask, 0, rev)
        hp -= h0
        hp *= mp
        hp += h0
    return hp


# --------------------------------------------------------------------------- LSTM
def lstm_forward(xp, x, h0, c0, w, rev, mask, store, y):
    """One LSTM layer/direction over ``x`` ``(T, N, C)``; writes ``y`` ``(T, N, H)``.

    ``store`` holds the reserve views ``gates`` ``(T, N, 4H)`` (activated), ``c`` (the
    carried cell state) and ``tc`` (tanh of the step's new cell). Returns the final
    (h, c).
    """
    wx, wh, bx, bh = w
    T, N, C = x.shape
    H = h0.shape[-1]
    gates, cs, tcs = store["gates"], store["c"], store["tc"]
    sig = (0, 1, 3)  # i, f, o
    wxs = _sigmoid_rows(xp, wx, H, sig)
    whT = xp.ascontiguousarray(_sigmoid_rows(xp, wh, H, sig).T)
    b = _sigmoid_rows(xp, bx + bh, H, sig)
    g2 = gates.reshape(T * N, 4 * H)
    xp.dot(x.reshape(T * N, C), wxs.T, out=g2)
    g2 += b
    scale, shift = _affine(xp, H, 4, sig, x.dtype)
    hw = xp.empty((N, 4 * H), x.dtype)
    tmp = xp.empty((N, H), x.dtype)
    if mask is not None:
        cc = xp.empty((N, H), x.dtype)
        hc = xp.empty((N, H), x.dtype)
        hbuf = (xp.empty((N, H), x.dtype), xp.empty((N, H), x.dtype))
    h, c = h0, c0
    fast = _k.on(xp, x.dtype)
    if fast:
        _, half = _k.consts(x.dtype)
        m1 = xp.ones((N,), x.dtype) if mask is None else None
        if mask is None:  # unused by the kernels then, but typed
            cc, hbuf = tmp, (tmp, tmp)
    for k, t in enumerate(_steps(T, rev)):
        g = gates[t]
        xp.dot(h, whT, out=hw)
        g += hw
        xp.tanh(g, out=g)
        if fast:
            masked = mask is not None
            cn = cc if masked else cs[t]
            _k.lstm_fwd_cell(g, c, cn, half)
            xp.tanh(cn, out=tcs[t])
            hn = hbuf[k % 2]
            _k.lstm_fwd_out(g, tcs[t], h, c, cn, mask[t, :, 0] if masked else m1, masked,
                            y[t], cs[t], hn)
            h, c = (hn if masked else y[t]), cs[t]
            continue
        g *= scale
        g += shift
        i, f, gg, o = g[:, :H], g[:, H:2 * H], g[:, 2 * H:3 * H], g[:, 3 * H:]
        if mask is None:
            cn = cs[t]
            xp.multiply(f, c, out=cn)
            xp.multiply(i, gg, out=tmp)
            cn += tmp
            xp.tanh(cn, out=tcs[t])
            xp.multiply(o, tcs[t], out=y[t])
            h, c = y[t], cn
            continue
        m = mask[t]
        xp.multiply(f, c, out=cc)
        xp.multiply(i, gg, out=tmp)
        cc += tmp
        xp.tanh(cc, out=tcs[t])
        xp.multiply(o, tcs[t], out=hc)
        xp.subtract(cc, c, out=tmp)  # carried c = c + m (cc - c)
        tmp *= m
        xp.add(c, tmp, out=cs[t])
        xp.multiply(hc, m, out=y[t])
        xp.subtract(hc, h, out=tmp)
        tmp *= m
        hn = hbuf[k % 2]
        xp.add(h, tmp, out=hn)
        h, c = hn, cs[t]
    return h, c


def lstm_backward(xp, x, h0, c0, w, rev, mask, store, y, dy, dh, dc):
    """Backward through time of :func:`lstm_forward`.

    ``dy`` ``(T, N, H)`` is the gradient of ``y``; ``dh``/``dc`` ``(N, H)`` those of the
    final states (fresh arrays, updated in place). Returns ``(gx, x_order, gh, h_order,
    h_prev, dh0, dc0)``: the gradients of the input-side and hidden-side
    pre-activations ``(T, N, 4H)`` (blocks in the given orders), the hidden state that
    entered each step, and the gradients of the initial states.
    """
    wh = w[1]
    T, N, _ = x.shape
    H = h0.shape[-1]
    gates, cs, tcs = store["gates"], store["c"], store["tc"]
    gd = xp.empty((T, N, 4 * H), x.dtype)
    gd4 = gd.reshape(T, N, 4, H)
    # per step, the factors of the gate derivatives (computed in the loop, where the
    # step's rows are in cache, which beats whole-sequence passes):
    # (di, df, dg) = dc (K_i, K_f, K_g), do = dh K_o, and dc += dh B
    k = xp.empty((N, 4 * H), x.dtype)
    k4 = k.reshape(N, 4, H)
    bc = xp.empty((N, H), x.dtype)
    tmp = xp.empty((N, H), x.dtype)
    if mask is not None:
        dy = dy * mask
        dhc = xp.empty((N, H), x.dtype)
        keep = 1 - mask
    first = T - 1 if rev else 0
    fast = _k.on(xp, x.dtype)
    if fast:
        one, _ = _k.consts(x.dtype)
        m1 = xp.ones((N,), x.dtype)
    for t in _steps(T, not rev):
        g = gates[t]
        if fast:
            cp = c0 if t == first else cs[t + 1 if rev else t - 1]
            if mask is None:
                _k.lstm_bwd_cell(g, cp, tcs[t], dy[t], m1, False, dh, dc, gd[t], one)
                xp.dot(gd[t], wh, out=dh)
            else:  # dy is already masked: the kernel's dy m is exact
                _k.lstm_bwd_cell(g, cp, tcs[t], dy[t], mask[t, :, 0], True, dh, dc, gd[t],
                                 one)
                xp.dot(gd[t], wh, out=tmp)
                dh += tmp
            continue
        i, f, gg, o = (g[:, j * H:(j + 1) * H] for j in range(4))
        xp.multiply(g, g, out=k)
        xp.subtract(g, k, out=k)  # s (1 - s): right for i, f and o
        k4[:, 0] *= gg
        k4[:, 1] *= c0 if t == first else cs[t + 1 if rev else t - 1]  # c_prev
        xp.multiply(gg, gg, out=k4[:, 2])
        xp.subtract(1, k4[:, 2], out=k4[:, 2])
        k4[:, 2] *= i
        k4[:, 3] *= tcs[t]
        xp.multiply(tcs[t], tcs[t], out=bc)
        xp.subtract(1, bc, out=bc)
        bc *= o
        dh += dy[t]
        if mask is None:
            xp.multiply(dh, bc, out=tmp)
            dc += tmp
            xp.multiply(dc[:, None, :], k4, out=gd4[t])  # whole rows, then fix o
            xp.multiply(dh, k4[:, 3], out=gd4[t, :, 3])
            xp.dot(gd[t], wh, out=dh)
            dc *= f
            continue
        m = mask[t]
        xp.multiply(dh, m, out=dhc)
        dcp = dc * keep[t]  # the part of dc that passes a masked step unchanged
        dc *= m
        xp.multiply(dhc, bc, out=tmp)
        dc += tmp
        xp.multiply(dc[:, None, :], k4, out=gd4[t])
        xp.multiply(dhc, k4[:, 3], out=gd4[t, :, 3])
        dh *= keep[t]
        dh += xp.dot(gd[t], wh)
        dc *= f
        dc += dcp
    hp = prev_hidden(xp, y, h0, mask, rev)
    return gd, IDENTITY[4], gd, IDENTITY[4], hp, dh, dc


# --------------------------------------------------------------------------- GRU
def gru_forward(xp, x, h0, c0, w, rev, mask, store, y):
    """One GRU layer/direction (MXNet's/cuDNN's formula):

    ``r = sigmoid(W_ir x + b_ir + W_hr h + b_hr)``, ``z`` likewise,
    ``n = tanh(W_in x + b_in + r * (W_hn h + b_hn))``, ``h' = (1 - z) n + z h``.
    ``store['gates']`` ``(T, N, 4H)`` receives (r, z, n, W_hn h + b_hn).
    """
    wx, wh, bx, bh = w
    T, N, C = x.shape
    H = h0.shape[-1]
    gates = store["gates"]
    wxs = _sigmoid_rows(xp, wx, H, (0, 1))
    whT = xp.ascontiguousarray(_sigmoid_rows(xp, wh, H, (0, 1)).T)
    b = bx.copy()
    b[:2 * H] += bh[:2 * H]
    b[:2 * H] *= 0.5
    bhn = bh[2 * H:]
    xw = xp.dot(x.reshape(T * N, C), wxs.T).reshape(T, N, 3 * H)
    xw += b
    hw = xp.empty((N, 3 * H), x.dtype)
    tmp = xp.empty((N, H), x.dtype)
    if mask is not None:
        hc = xp.empty((N, H), x.dtype)
        hbuf = (xp.empty((N, H), x.dtype), xp.empty((N, H), x.dtype))
    h = h0
    fast = _k.on(xp, x.dtype)
    if fast:
        _, half = _k.consts(x.dtype)
        m1 = xp.ones((N,), x.dtype)
        if mask is None:
            hbuf = (tmp, tmp)
    for k, t in enumerate(_steps(T, rev)):
        g = gates[t]
        xw_t = xw[t]
        xp.dot(h, whT, out=hw)
        if fast:
            masked = mask is not None
            _k.gru_fwd_pre(g, xw_t, hw, bhn)
            xp.tanh(g[:, :2 * H], out=g[:, :2 * H])
            _k.gru_fwd_gates(g, xw_t, half)
            xp.tanh(g[:, 2 * H:3 * H], out=g[:, 2 * H:3 * H])
            hn = hbuf[k % 2]
            _k.gru_fwd_out(g, h, mask[t, :, 0] if masked else m1, masked, y[t], hn)
            h = hn if masked else y[t]
            continue
        mnh = g[:, 3 * H:]
        xp.add(hw[:, 2 * H:], bhn, out=mnh)
        rz = g[:, :2 * H]
        xp.add(xw_t[:, :2 * H], hw[:, :2 * H], out=rz)
        xp.tanh(rz, out=rz)
        rz *= 0.5
        rz += 0.5
        n = g[:, 2 * H:3 * H]
        xp.multiply(g[:, :H], mnh, out=n)
        n += xw_t[:, 2 * H:]
        xp.tanh(n, out=n)
        xp.subtract(h, n, out=tmp)
        tmp *= g[:, H:2 * H]
        if mask is None:
            xp.add(n, tmp, out=y[t])
            h = y[t]
            continue
        m = mask[t]
        xp.add(n, tmp, out=hc)
        xp.multiply(hc, m, out=y[t])
        xp.subtract(hc, h, out=tmp)
        tmp *= m
        hn = hbuf[k % 2]
        xp.add(h, tmp, out=hn)
        h = hn
    return h, None


def gru_backward(xp, x, h0, c0, w, rev, mask, store, y, dy, dh, dc):
    """Backward through time of :func:`gru_forward` (returns as :func:`lstm_backward`)."""
    wh = w[1]
    T, N, _ = x.shape
    H = h0.shape[-1]
    gates = store["gates"]
    hp = prev_hidden(xp, y, h0, mask, rev)
    bd = xp.empty((T, N, 4 * H), x.dtype)  # (n, r, z, Mnh)
    b4 = bd.reshape(T, N, 4, H)
    sd = xp.empty((N, 2 * H), x.dtype)  # r (1 - r), z (1 - z)
    a_n = xp.empty((N, H), x.dtype)
    a_z = xp.empty((N, H), x.dtype)
    tmp = xp.empty((N, H), x.dtype)
    if mask is not None:
        dy = dy * mask
        dhc = xp.empty((N, H), x.dtype)
        keep = 1 - mask
    fast = _k.on(xp, x.dtype)
    if fast:
        one, _ = _k.consts(x.dtype)
        m1 = xp.ones((N,), x.dtype)
    for t in _steps(T, not rev):
        g = gates[t]
        if fast:  # dy is already masked: the kernel's dy m is exact
            masked = mask is not None
            _k.gru_bwd_cell(g, hp[t], dy[t], mask[t, :, 0] if masked else m1, masked, dh,
                            bd[t], one)
            dh += xp.dot(bd[t, :, H:], wh)
            continue
        r, z, n, mnh = (g[:, j * H:(j + 1) * H] for j in range(4))
        rz = g[:, :2 * H]
        xp.multiply(rz, rz, out=sd)
        xp.subtract(rz, sd, out=sd)
        xp.multiply(n, n, out=a_n)  # d pre-activation of n / dh' = (1 - z) (1 - n^2)
        xp.subtract(1, a_n, out=a_n)
        xp.subtract(1, z, out=tmp)
        a_n *= tmp
        xp.subtract(hp[t], n, out=a_z)  # d pre-activation of z / dh' = (h - n) z (1 - z)
        a_z *= sd[:, H:]
        dh += dy[t]
        if mask is None:
            d = dh
        else:
            d = dhc
            xp.multiply(dh, mask[t], out=dhc)
            dh *= keep[t]
        bn = b4[t, :, 0]
        xp.multiply(d, a_n, out=bn)
        xp.multiply(d, a_z, out=b4[t, :, 2])
        xp.multiply(bn, mnh, out=b4[t, :, 1])  # d pre-activation of r: bn Mnh r (1 - r)
        b4[t, :, 1] *= sd[:, :H]
        xp.multiply(bn, r, out=b4[t, :, 3])
        back = xp.dot(bd[t, :, H:], wh)
        if mask is None:
            dh *= z
        else:
            dh += d * z
        dh += back
    return bd[:, :, :3 * H], GRU_X_ORDER, bd[:, :, H:], IDENTITY[3], hp, dh, None


# --------------------------------------------------------------------------- RNN
def _act(xp, a, mode):
    if mode == "rnn_tanh":
        xp.tanh(a, out=a)
    else:
        xp.maximum(a, 0, out=a)


def rnn_forward(xp, x, h0, c0, w, rev, mask, store, y, mode="rnn_tanh"):
    """One plain RNN layer/direction: ``h' = act(W_i x + b_i + W_h h + b_h)``."""
    wx, wh, bx, bh = w
    T, N, C = x.shape
    H = h0.shape[-1]
    whT = xp.ascontiguousarray(wh.T)
    xw = xp.dot(x.reshape(T * N, C), wx.T).reshape(T, N, H)
    xw += bx + bh
    hw = xp.empty((N, H), x.dtype)
    if mask is not None:
        hc = xp.empty((N, H), x.dtype)
        tmp = xp.empty((N, H), x.dtype)
        hbuf = (xp.empty((N, H), x.dtype), xp.empty((N, H), x.dtype))
    h = h0
    for k, t in enumerate(_steps(T, rev)):
        xp.dot(h, whT, out=hw)
        a = y[t] if mask is None else hc
        xp.add(xw[t], hw, out=a)
        _act(xp, a, mode)
        if mask is None:
            h = a
            continue
        m = mask[t]
        xp.multiply(hc, m, out=y[t])
        xp.subtract(hc, h, out=tmp)
        tmp *= m
        hn = hbuf[k % 2]
        xp.add(h, tmp, out=hn)
        h = hn
    return h, None


def rnn_backward(xp, x, h0, c0, w, rev, mask, store, y, dy, dh, dc, mode="rnn_tanh"):
    """Backward through time of :func:`rnn_forward` (returns as :func:`lstm_backward`)."""
    wh = w[1]
    T, N, _ = x.shape
    # the activation's derivative from its output: 1 - h^2 (tanh), h > 0 (relu)
    da = 1 - y * y if mode == "rnn_tanh" else (y > 0).astype(x.dtype)
    gd = xp.empty((T, N, wh.shape[0]), x.dtype)
    if mask is not None:
        dy = dy * mask
        keep = 1 - mask
    for t in _steps(T, not rev):
        dh += dy[t]
        if mask is None:
            xp.multiply(dh, da[t], out=gd[t])
            xp.dot(gd[t], wh, out=dh)
            continue
        xp.multiply(dh, mask[t], out=gd[t])
        gd[t] *= da[t]
        dh *= keep[t]
        dh += xp.dot(gd[t], wh)
    hp = prev_hidden(xp, y, h0, mask, rev)
    return gd, IDENTITY[1], gd, IDENTITY[1], hp, dh, None


def _plain(fn, mode):
    def run(*args):
        return fn(*args, mode=mode)

    return run


FORWARD = {"lstm": lstm_forward, "gru": gru_forward,
           "rnn_tanh": _plain(rnn_forward, "rnn_tanh"), "rnn_relu": _plain(rnn_forward, "rnn_relu")}
BACKWARD = {"lstm": lstm_backward, "gru": gru_backward,
            "rnn_tanh": _plain(rnn_backward, "rnn_tanh"),
            "rnn_relu": _plain(rnn_backward, "rnn_relu")}
