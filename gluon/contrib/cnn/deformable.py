"""Deformable convolution (Dai et al., 2017) and its modulated form (Zhu et al., 2019),
built from core operators, for ``gluon.contrib.cnn``.

Each output position ``p`` and kernel point ``k`` of a deformable group reads the input
at ``p * stride - pad + k * dilate + offset[k](p)`` by bilinear interpolation, optionally
scaled by ``mask[k](p)``. Outside the input, as MXNet 1.9.1 on CPU: the plain form reads
0 unless ``0 <= h < H`` and ``0 <= w < W`` and repeats the last row/column for the
neighbours past it; the modulated form blends with zeros past every edge; the samples are then combined
with the weights as a convolution. The offsets are MXNet's layout: channel
``g * 2K + 2k`` is the row (h) offset of kernel point ``k`` of deformable group ``g``,
channel ``g * 2K + 2k + 1`` its column (w) offset (K = kh * kw, row-major). All
sampling goes through one ``BilinearSampler`` call, so gradients reach the data, the
offsets, the mask and the weights.
"""
from __future__ import annotations

import numpy

from core import nd


def _out_size(n, k, s, p, d) -> int:
    return (n + 2 * p - d * (k - 1) - 1) // s + 1


def deformable_convolution(F, data, offset, weight, bias=None, mask=None, *, kernel, stride,
                           pad, dilate, num_group=1, num_deformable_group=1,
                           where="DeformableConvolution"):
    """MXNet's ``contrib.DeformableConvolution`` (``mask``: the modulated one), NCHW.

    Args:
        F: the operator namespace.
        data: ``(N, C, H, W)``.
        offset: ``(N, 2 * G * kh * kw, Ho, Wo)``.
        weight: ``(O, C / num_group, kh, kw)``.
        bias: ``(O,)`` or None.
        mask: ``(N, G * kh * kw, Ho, Wo)`` or None.
        kernel, stride, pad, dilate: 2-tuples.
        num_group: convolution groups.
        num_deformable_group: G, channel groups with their own offsets.
        where: the name errors start with.

    Returns:
        ``(N, O, Ho, Wo)``.
    """
    try:
        n, c, h, w = (int(v) for v in data.shape)
    except (AttributeError, TypeError, ValueError):
        raise ValueError(f"{where}: runs on arrays of known shape (NDArrays, hybridized or "
                         "not), not on Symbols") from None
    (kh, kw), (sh, sw), (ph, pw), (dh, dw) = kernel, stride, pad, dilate
    K, G = kh * kw, num_deformable_group
    ho, wo = _out_size(h, kh, sh, ph, dh), _out_size(w, kw, sw, pw, dw)
    o = int(weight.shape[0])
    if c % G or c % num_group or o % num_group:
        raise ValueError(f"{where}: {c} input channels must divide into "
                         f"num_deformable_group={G} and num_group={num_group} groups (and "
                         f"{o} filters into num_group)")
    if tuple(offset.shape) != (n, 2 * G * K, ho, wo):
        raise ValueError(f"{where}: offset must have shape {(n, 2 * G * K, ho, wo)} for data "
                         f"{(n, c, h, w)} and kernel {tuple(kernel)}, got "
                         f"{tuple(offset.shape)}")
    if mask is not None and tuple(mask.shape) != (n, G * K, ho, wo):
        raise ValueError(f"{where}: mask must have shape {(n, G * K, ho, wo)}, got "
                         f"{tuple(mask.shape)}")
    if mask is None:
        # MXNet's DeformableConvolution reads only at 0 <= h < H, 0 <= w < W (else 0) and
        # clamps the neighbours past the last row/column to it: sample an edge-padded copy
        data = F.concat(data, F.slice_axis(data, axis=2, begin=h - 1, end=h), dim=2)
        data = F.concat(data, F.slice_axis(data, axis=3, begin=w - 1, end=w), dim=3)
        hh, ww = h + 1, w + 1
    else:
        # the modulated one blends with zeros outside; a size-1 axis cannot be normalized
        # to [-1, 1], so it gets a zero row/column
        if h == 1:
            data = F.concat(data, F.zeros_like(data), dim=2)
        if w == 1:
            data = F.concat(data, F.zeros_like(data), dim=3)
        hh, ww = max(h, 2), max(w, 2)
    # sampling positions without offsets, per kernel point: (K, Ho, Wo)
    ki, kj = numpy.divmod(numpy.arange(K), kw)
    base_h = (numpy.arange(ho)[None, :, None] * sh - ph + ki[:, None, None] * dh)
    base_w = (numpy.arange(wo)[None, None, :] * sw - pw + kj[:, None, None] * dw)
    dt = data.dtype
    ctx = data.context
    base_h = nd.array(numpy.broadcast_to(base_h, (K, ho, wo)), ctx=ctx, dtype=dt)
    base_w = nd.array(numpy.broadcast_to(base_w, (K, ho, wo)), ctx=ctx, dtype=dt)
    # offsets (N, G, K, 2, Ho, Wo) -> (N, K, G, 2, Ho, Wo)
    off = F.transpose(F.reshape(offset, shape=(n, G, K, 2, ho, wo)), axes=(0, 2, 1, 3, 4, 5))
    off_h = F.broadcast_add(F.reshape(F.slice_axis(off, axis=3, begin=0, end=1),
                                      shape=(n, K, G, ho, wo)),
                            F.reshape(base_h, shape=(1, K, 1, ho, wo)))
    off_w = F.broadcast_add(F.reshape(F.slice_axis(off, axis=3, begin=1, end=2),
                                      shape=(n, K, G, ho, wo)),
                            F.reshape(base_w, shape=(1, K, 1, ho, wo)))
    grid = F.stack(off_w * (2.0 / (ww - 1)) - 1, off_h * (2.0 / (hh - 1)) - 1, axis=3)
    grid = F.reshape(grid, shape=(n * K * G, 2, ho, wo))
    cg = c // G
    rep = F.broadcast_to(F.reshape(data, shape=(n, 1, G, cg, hh, ww)),
                         shape=(n, K, G, cg, hh, ww))
    cols = F.BilinearSampler(F.reshape(rep, shape=(n * K * G, cg, hh, ww)), grid)
    cols = F.reshape(cols, shape=(n, K, G, cg, ho, wo))
    if mask is not None:  # (N, G, K, Ho, Wo) -> (N, K, G, 1, Ho, Wo)
        m = F.transpose(F.reshape(mask, shape=(n, G, K, 1, ho, wo)), axes=(0, 2, 1, 3, 4, 5))
        cols = F.broadcast_mul(cols, m)
    else:  # positions outside the input read 0
        inside = ((off_h >= 0) * (off_h < h) * (off_w >= 0) * (off_w < w)).astype(dt)
        cols = F.broadcast_mul(cols, F.reshape(inside, shape=(n, K, G, 1, ho, wo)))
    # (N, K, G, C/G, Ho, Wo) -> (N, Ho*Wo, C, K): channel-major, then kernel point
    cols = F.transpose(cols, axes=(0, 4, 5, 2, 3, 1))
    cols = F.reshape(cols, shape=(n, ho * wo, c, K))
    outs = []
    cgrp, ogrp = c // num_group, o // num_group
    for gi in range(num_group):
        part = F.slice_axis(cols, axis=2, begin=gi * cgrp, end=(gi + 1) * cgrp)
        wgt = F.slice_axis(weight, axis=0, begin=gi * ogrp, end=(gi + 1) * ogrp)
        b = None if bias is None else F.slice_axis(bias, axis=0, begin=gi * ogrp,
                                                   end=(gi + 1) * ogrp)
        fc = F.FullyConnected(F.reshape(part, shape=(n, ho * wo, cgrp * K)),
                              F.reshape(wgt, shape=(ogrp, cgrp * K)), b, num_hidden=ogrp,
                              no_bias=b is None, flatten=False)
        outs.append(fc)
    out = outs[0] if num_group == 1 else F.concat(*outs, dim=2)
    return F.reshape(F.transpose(out, axes=(0, 2, 1)), shape=(n, o, ho, wo))
