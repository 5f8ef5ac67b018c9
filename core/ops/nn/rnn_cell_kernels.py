"""numba kernels for the per-step gate math of the fused LSTM and GRU (``rnn_cells.py``).

Each kernel fuses, for one time step, the elementwise NumPy passes of its twin in
``rnn_cells.py`` (the ``xp`` code, which runs when :func:`on` is False: CuPy arrays,
``KBACKEND_NUMBA=0``, dtypes other than float32/float64). The kernels do the same
operations in the same order in the arrays' dtype (the constants ``one`` and ``half``
come typed from the caller, so float32 stays float32), so they agree with the twin to
float rounding. What stays outside them: the step's ``(N, H) @ (H, G*H)`` product (BLAS)
and the forward's ``tanh`` calls (NumPy's SIMD ``tanh`` is an order of magnitude faster
than the scalar libm ``tanh`` a numba loop calls), so a forward step is
``dot, add, tanh, kernel, tanh, kernel`` instead of a dozen NumPy calls.

The kernels are serial: at the sizes of a step (``N * H`` of a few thousand to tens of
thousands) starting threads costs more than it saves. All index their arrays
generally, so strided views (a direction's columns of the output) need no copy.
``masked`` selects the sequence-length variant; ``m`` is then the step's ``(N,)``
validity mask (1 at valid steps) and otherwise unused.
"""
from __future__ import annotations

import numpy

from ... import cpu_kernels

_KERNEL_DTYPES = (numpy.dtype("float32"), numpy.dtype("float64"))


def on(xp, dtype) -> bool:
    """Whether the kernels run for arrays of module ``xp`` and ``dtype``."""
    return xp is numpy and numpy.dtype(dtype) in _KERNEL_DTYPES and cpu_kernels.enabled()


def consts(dtype):
    """The typed constants ``(one, half)`` the kernels take."""
    t = numpy.dtype(dtype).type
    return t(1.0), t(0.5)


# --------------------------------------------------------------------------- LSTM
@cpu_kernels.kernel()
def lstm_fwd_cell(g, c, cn, half):
    """``g`` ``(N, 4H)``: tanh of the (halved) pre-activations, in place to the gates'
    values (sigmoid of i, f, o; g stays); ``cn = f c + i g``."""
    N, H = c.shape
    for n in range(N):
        for j in range(H):
            i = g[n, j] * half + half
            f = g[n, H + j] * half + half
            g[n, j] = i
            g[n, H + j] = f
            g[n, 3 * H + j] = g[n, 3 * H + j] * half + half
            cn[n, j] = f * c[n, j] + i * g[n, 2 * H + j]


@cpu_kernels.kernel()
def lstm_fwd_out(g, tc, h, c, cc, m, masked, y, cs, hn):
    """``y = o tanh(c')``; with ``masked``, also the carried states ``cs = c + m (cc - c)``
    and ``hn = h + m (o tc - h)``, and ``y`` is zeroed at masked steps."""
    N, H = tc.shape
    for n in range(N):
        for j in range(H):
            hc = g[n, 3 * H + j] * tc[n, j]
            if not masked:
                y[n, j] = hc
                continue
            mn = m[n]
            cs[n, j] = c[n, j] + (cc[n, j] - c[n, j]) * mn
            y[n, j] = hc * mn
            hn[n, j] = h[n, j] + (hc - h[n, j]) * mn


@cpu_kernels.kernel()
def lstm_bwd_cell(g, cp, tc, dyt, m, masked, dh, dc, gd, one):
    """The gate gradients ``gd`` ``(N, 4H)`` of one step from the gates ``g``, the cell
    state that entered it ``cp`` and ``tanh`` of its new cell ``tc``; updates ``dc`` to
    the gradient of ``cp`` and (``masked``) ``dh`` to the part that passes a masked step
    (the caller adds ``gd @ W_hh``; unmasked, it overwrites ``dh`` with that)."""
    N, H = tc.shape
    for n in range(N):
        mn = m[n] if masked else one
        for j in range(H):
            i = g[n, j]
            f = g[n, H + j]
            gg = g[n, 2 * H + j]
            o = g[n, 3 * H + j]
            t = tc[n, j]
            bc = (one - t * t) * o
            if masked:
                d = dh[n, j] + dyt[n, j] * mn
                dhc = d * mn
                dcp = dc[n, j] * (one - mn)
                dcn = dc[n, j] * mn + dhc * bc
                dh[n, j] = d * (one - mn)
            else:
                dhc = dh[n, j] + dyt[n, j]
                dcn = dc[n, j] + dhc * bc
                dcp = dcn  # unused
            gd[n, j] = dcn * ((i - i * i) * gg)
            gd[n, H + j] = dcn * ((f - f * f) * cp[n, j])
            gd[n, 2 * H + j] = dcn * ((one - gg * gg) * i)
            gd[n, 3 * H + j] = dhc * ((o - o * o) * t)
            if masked:
                dc[n, j] = dcn * f + dcp
            else:
                dc[n, j] = dcn * f


# --------------------------------------------------------------------------- GRU
@cpu_kernels.kernel()
def gru_fwd_pre(g, xw, hw, bhn):
    """``g`` ``(N, 4H)`` = (``xw + hw`` on r, z; -; ``Mnh = hw_n + b_hn``): what the r, z
    tanh and the n pre-activation need."""
    N = g.shape[0]
    H = bhn.shape[0]
    for n in range(N):
        for j in range(2 * H):
            g[n, j] = xw[n, j] + hw[n, j]
        for j in range(H):
            g[n, 3 * H + j] = hw[n, 2 * H + j] + bhn[j]


@cpu_kernels.kernel()
def gru_fwd_gates(g, xw, half):
    """r, z from their tanh to sigmoids, in place; the n block gets its pre-activation
    ``r Mnh + xw_n``."""
    N = g.shape[0]
    H = g.shape[1] // 4
    for n in range(N):
        for j in range(H):
            r = g[n, j] * half + half
            g[n, j] = r
            g[n, H + j] = g[n, H + j] * half + half
            g[n, 2 * H + j] = r * g[n, 3 * H + j] + xw[n, 2 * H + j]


@cpu_kernels.kernel()
def gru_fwd_out(g, h, m, masked, y, hn):
    """``h' = n + z (h - n)`` into ``y``; with ``masked``, ``y`` zeroed at masked steps and
    the carried ``hn = h + m (h' - h)``."""
    N, H = h.shape
    for n in range(N):
        for j in range(H):
            nn = g[n, 2 * H + j]
            hc = nn + (h[n, j] - nn) * g[n, H + j]
            if not masked:
                y[n, j] = hc
                continue
            mn = m[n]
            y[n, j] = hc * mn
            hn[n, j] = h[n, j] + (hc - h[n, j]) * mn


@cpu_kernels.kernel()
def gru_bwd_cell(g, hp, dyt, m, masked, dh, bd, one):
    """One step's gradient buffer ``bd`` ``(N, 4H)`` = (n, r, z, Mnh) from the gates ``g``
    and the entering hidden state ``hp``; ``dh`` becomes the part of the gradient of
    ``hp`` that does not go through ``W_hh`` (the caller adds ``bd[:, H:] @ W_hh``)."""
    N, H = hp.shape
    for n in range(N):
        mn = m[n] if masked else one
        for j in range(H):
            r = g[n, j]
            z = g[n, H + j]
            nn = g[n, 2 * H + j]
            mnh = g[n, 3 * H + j]
            a_n = (one - nn * nn) * (one - z)
            a_z = (hp[n, j] - nn) * (z - z * z)
            if masked:
                d0 = dh[n, j] + dyt[n, j] * mn
                d = d0 * mn
                keep = d0 * (one - mn)
            else:
                d = dh[n, j] + dyt[n, j]
                keep = d  # unused
            bn = d * a_n
            bd[n, j] = bn
            bd[n, H + j] = (bn * mnh) * (r - r * r)
            bd[n, 2 * H + j] = d * a_z
            bd[n, 3 * H + j] = bn * r
            if masked:
                dh[n, j] = keep + d * z
            else:
                dh[n, j] = d * z
