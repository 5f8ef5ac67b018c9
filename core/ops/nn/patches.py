"""Raw array kernels of the convolution family (used by ``conv.py``), against ``xp``.

The kernels are GEMM-based: patches of the (padded) input are read through one
strided view (no Python loop over pixels), copied once into a matrix laid out the
way the data's memory order makes cheap, and contracted with the weight in one BLAS
call (batched over groups). The transposed direction (gradient wrt data,
``col2im``, ``Deconvolution``) multiplies first and scatter-adds the patch
gradients back with one strided slice-add per kernel offset. Shapes come from a
:class:`~.conv_geometry.Geom`.
"""
from __future__ import annotations

import itertools
import math
import threading

import numpy

from ... import cpu_parallel
from ...dtypes import FLOATS

# ------------------------------------------------------------------ scratch memory
# The patch matrices are K times the data. Allocating them afresh every call costs
# page faults (glibc returns large freed blocks to the system): on a LeNet layer that
# was 3 ms of a 1.5 ms convolution. Temporaries that die within one kernel call live
# in a per-thread scratch buffer instead (MXNet's ``workspace``). Nothing returned
# from a kernel is ever scratch. CuPy has its own memory pool.
_SCRATCH = threading.local()
_SCRATCH_MAX = 64 << 20  # bytes kept per slot (6 slots) between calls; larger: no reuse


def free_scratch():
    """Drop this thread's scratch buffers (they are kept for the next call otherwise)."""
    _SCRATCH.bufs = {}


def scratch(xp, slot, shape, dtype):
    """An uninitialized array for a temporary of one kernel call (``slot`` names it)."""
    dtype = numpy.dtype(dtype)
    size = math.prod(shape) * dtype.itemsize
    if xp is not numpy or size > _SCRATCH_MAX:
        return xp.empty(shape, dtype)
    bufs = getattr(_SCRATCH, "bufs", None)
    if bufs is None:
        bufs = _SCRATCH.bufs = {}
    b = bufs.get(slot)
    if b is None or b.nbytes < size:
        b = bufs[slot] = numpy.empty(max(size, 1), numpy.uint8)
    return b[:size].view(dtype).reshape(shape)


# ------------------------------------------------------------------ raw kernels
def _sp_axes(geo):
    return range(1, 1 + geo.nsp) if geo.cl else range(2, 2 + geo.nsp)


def prepare(xp, x, geo):
    """``x`` padded (or trimmed) so the windows start at 0 and span exactly ``need``
    (scratch when padded: use it within the call)."""
    if x.dtype in FLOATS and x.dtype.itemsize < 4:  # no fast float16/bfloat16 GEMM
        x = x.astype(numpy.float32)
    lo = [p[0] for p in geo.p]
    if not any(lo) and all(nd <= xi for nd, xi in zip(geo.need, geo.x)):
        if geo.need == geo.x:
            return x
        idx = [slice(None)] * x.ndim
        for ax, nd in zip(_sp_axes(geo), geo.need):
            idx[ax] = slice(0, nd)
        return x[tuple(idx)]
    shape = list(x.shape)
    dst, src = [slice(None)] * x.ndim, [slice(None)] * x.ndim
    for ax, nd, xi, lo_i in zip(_sp_axes(geo), geo.need, geo.x, lo):
        shape[ax] = nd
        m = max(min(xi, nd - lo_i), 0)
        dst[ax], src[ax] = slice(lo_i, lo_i + m), slice(0, m)
    buf = scratch(xp, "pad", shape, x.dtype)
    buf.fill(0)
    buf[tuple(dst)] = x[tuple(src)]
    return buf


def window_view(xp, a, geo, order, where=None):
    """A strided view of the prepared input ``a`` with the axes named in ``order``:
    'n', 'c', 'g', 'cg', 'k<i>' (kernel offset along spatial axis i), 'o<i>' (output).
    ``a`` is in the data's layout, or (c, *spatial, n) for ``where='cxn'``, or (c, n,
    *spatial) for ``'cnx'``."""
    st = a.strides
    if where == "cxn":
        sn, sc, sp = st[-1], st[0], st[1:-1]
    elif where == "cnx":
        sn, sc, sp = st[1], st[0], st[2:]
    else:
        sn, sc, sp = (st[0], st[-1], st[1:-1]) if geo.cl else (st[0], st[1], st[2:])
    table = {"n": (geo.n, sn), "c": (geo.c, sc), "g": (geo.g, sc * geo.cg),
             "cg": (geo.cg, sc)}
    for i in range(geo.nsp):
        table[f"k{i}"] = (geo.k[i], sp[i] * geo.d[i])
        table[f"o{i}"] = (geo.o[i], sp[i] * geo.s[i])
    shape, strides = zip(*(table[ax] for ax in order))
    return xp.lib.stride_tricks.as_strided(a, shape=shape, strides=strides)


def _names(geo):
    return [f"k{i}" for i in range(geo.nsp)], [f"o{i}" for i in range(geo.nsp)]


def cols(xp, a, geo, order, slot=None, where=None):
    """The patches of the prepared input ``a`` copied into a contiguous array (into
    scratch ``slot`` when given)."""
    v = window_view(xp, a, geo, order, where)
    out = xp.empty(v.shape, v.dtype) if slot is None else scratch(xp, slot, v.shape, v.dtype)
    cpu_parallel.copy(out, v)
    return out


def _fdtype(*arrays):
    """(result dtype, compute dtype: float32 for float16/bfloat16); floats only."""
    if any(a.dtype not in FLOATS for a in arrays):
        raise TypeError("convolutions take floating-point arrays")  # infer explains
    dt = numpy.result_type(*[a.dtype for a in arrays])
    return dt, (numpy.dtype(numpy.float32) if dt.itemsize < 4 else dt)


def _cast(a, dt):
    return a if a.dtype == dt else a.astype(dt)


def _mm(xp, a, b, slot):
    """``a @ b`` (batched) into scratch ``slot``."""
    shape = a.shape[:-1] + b.shape[-1:]
    return xp.matmul(a, b, out=scratch(xp, slot, shape, numpy.result_type(a.dtype, b.dtype)))


def _fresh(xp, a):
    """A C-contiguous array that is not scratch (a copy)."""
    out = xp.empty(a.shape, a.dtype)
    cpu_parallel.copy(out, a)
    return out


# How the patch matrix is laid out. Building it (a copy K times the data) costs about
# as much as the GEMM, and a copy is fast only in long runs of contiguous values, so
# the layout follows the runs the data offers (timed on LeNet's layers):
# - "rows": (N * O, K * C), copied in runs of C: channels-last data with enough
#   channels per group; the product (N * O, F) is then already channels-last.
# - "cols": (C * K, N * O), copied in runs of one output row: channels-first data with
#   long rows, or one sample.
# - "copy": as "cols", from a channels-first copy (C, N, *spatial) of channels-last
#   data with few channels per group (an RGB image, depthwise), where copying straight
#   from the data would gather in runs of C values.
# - "minor": (C * K, O * N), batch-minor: the data is first copied into (C, *spatial,
#   N), then the patches in runs of a whole output row of every sample: channels-first
#   data with short rows (8 values at the end of LeNet) and several samples.
# The copies of the data also do the padding.
_ROWS_MIN_CHANNELS = 4
_SHORT_ROW = 16


def _plan(geo):
    if geo.cl:
        return "rows" if geo.cg >= _ROWS_MIN_CHANNELS else "copy"
    return "minor" if _minor(geo) else "cols"


def _minor(geo):
    return geo.n > 1 and geo.o[-1] < _SHORT_ROW


def _prepare_copy(xp, x, geo, minor):
    """``x`` copied (scratch) into (c, *need, n) when ``minor``, else (c, n, *need),
    padded or trimmed as :func:`prepare` does."""
    if x.dtype in FLOATS and x.dtype.itemsize < 4:
        x = x.astype(numpy.float32)
    nsp = geo.nsp
    sp = tuple(range(1, nsp + 1)) if geo.cl else tuple(range(2, nsp + 2))
    ch = nsp + 1 if geo.cl else 1
    if minor:
        xt, shape, first = x.transpose((ch,) + sp + (0,)), (geo.c,) + geo.need + (geo.n,), 1
    else:
        xt, shape, first = x.transpose((ch, 0) + sp), (geo.c, geo.n) + geo.need, 2
    buf = scratch(xp, "pad", shape, x.dtype)
    dst, src = [slice(None)] * buf.ndim, [slice(None)] * buf.ndim
    partial = False
    for i, (nd, xi, (lo, _)) in enumerate(zip(geo.need, geo.x, geo.p)):
        m = max(min(xi, nd - lo), 0)
        partial = partial or lo > 0 or m < nd
        dst[first + i], src[first + i] = slice(lo, lo + m), slice(0, m)
    if partial:
        buf.fill(0)
    cpu_parallel.copy(buf[tuple(dst)], xt[tuple(src)])
    return buf


def _patches(xp, x, geo, plan):
    """The patch matrix of ``x`` (scratch): (g, n*o, k*cg) "rows", (g, cg*k, n*o) "cols"
    and "copy", or (g, cg*k, o*n) "minor"."""
    ks, os_ = _names(geo)
    if plan == "rows":
        a = prepare(xp, x, geo)
        p = cols(xp, a, geo, ["g", "n", *os_, *ks, "cg"], "patches")
        return p.reshape(geo.g, geo.n * geo.op, -1)
    if plan == "minor":
        a = _prepare_copy(xp, x, geo, True)
        p = cols(xp, a, geo, ["g", "cg", *ks, *os_, "n"], "patches", "cxn")
        return p.reshape(geo.g, geo.cg * geo.kp, -1)
    if plan == "copy":
        a, where = _prepare_copy(xp, x, geo, False), "cnx"
    else:
        a, where = prepare(xp, x, geo), None
    p = cols(xp, a, geo, ["g", "cg", *ks, "n", *os_], "patches", where)
    return p.reshape(geo.g, -1, geo.n * geo.op)


def _weight_ck(xp, w, geo):
    """The weight as (g, fg, cg * k) (channel-major rows of the "cols" patches)."""
    if geo.cl:  # (f, *k, cg) -> (f, cg, *k): a copy of the (small) weight
        w = xp.moveaxis(w, -1, 1)
    return w.reshape(geo.g, geo.fg, -1)


def _gy_mat(xp, gy, geo, minor):
    """The output gradient as (g, fg, o*n) when ``minor``, else (g, fg, n*o) (a view
    channels-last, else scratch)."""
    n, g, fg, op = geo.n, geo.g, geo.fg, geo.op
    if minor:
        out = scratch(xp, "gy", (g, fg, op, n), gy.dtype)
        if geo.cl:  # (n, *o, g, fg) -> (g, fg, *o, n)
            cpu_parallel.copy(out, gy.reshape((n, op, g, fg)).transpose(2, 3, 1, 0))
        else:  # (n, g, fg, *o) -> (g, fg, *o, n)
            cpu_parallel.copy(out, gy.reshape((n, g, fg, op)).transpose(1, 2, 3, 0))
        return out.reshape(g, fg, op * n)
    if geo.cl:
        return gy.reshape(n * op, g, fg).transpose(1, 2, 0)
    out = scratch(xp, "gy", (g, fg, n, op), gy.dtype)
    cpu_parallel.copy(out, gy.reshape(n, g, fg, op).transpose(1, 2, 0, 3))
    return out.reshape(g, fg, n * op)


def conv_forward(xp, x, w, geo):
    """Convolution (cross-correlation) of ``x`` with ``w``; shapes as ``geo`` says."""
    dt, ct = _fdtype(x, w)
    x, w = _cast(x, ct), _cast(w, ct)
    plan = _plan(geo)
    p = _patches(xp, x, geo, plan)
    n, f, g, op = geo.n, geo.f, geo.g, geo.op
    if geo.cl:  # (g, n*o, k*cg) @ (g, k*cg, fg): rows of the channels-last output
        if plan == "rows":
            wt = xp.swapaxes(w.reshape(g, geo.fg, -1), 1, 2)
        else:  # the "cols" patches read transposed
            p, wt = xp.swapaxes(p, 1, 2), xp.swapaxes(_weight_ck(xp, w, geo), 1, 2)
        if g == 1:
            return _cast(xp.matmul(p[0], wt[0]).reshape(geo.out_shape), dt)
        out = _mm(xp, p, wt, "out")
        return _cast(_fresh(xp, out.transpose(1, 0, 2)).reshape(geo.out_shape), dt)
    # (g, fg, cg*k) @ (g, cg*k, pix): filters major, then one copy into (n, f, *o)
    out = _mm(xp, _weight_ck(xp, w, geo), p, "out")
    if plan == "minor":
        out = out.reshape(f, op, n).transpose(2, 0, 1)
    else:
        out = out.reshape(f, n, op).transpose(1, 0, 2)
    return _cast(_fresh(xp, out).reshape(geo.out_shape), dt)


def conv_grad_weight(xp, x, gy, geo):
    """The gradient wrt the weight of the convolution ``x -> y``, given ``gy``."""
    dt, ct = _fdtype(x, gy)
    x, gy = _cast(x, ct), _cast(gy, ct)
    plan = _plan(geo)
    p = _patches(xp, x, geo, plan)
    g = _gy_mat(xp, gy, geo, plan == "minor")
    if plan == "rows":  # (g, fg, n*o) @ (g, n*o, k*cg): the channels-last weight
        return _cast(xp.matmul(g, p).reshape(geo.weight_shape), dt)
    # (g, cg*k, pix) @ (g, pix, fg), then the (small) result transposed: OpenBLAS runs
    # this orientation about 20% faster than (g, fg, pix) @ (g, pix, cg*k)
    gw = xp.swapaxes(xp.matmul(p, xp.swapaxes(g, 1, 2)), 1, 2)
    gw = gw.reshape((geo.f, geo.cg) + geo.k)
    return _cast(xp.ascontiguousarray(xp.moveaxis(gw, 1, -1) if geo.cl else gw), dt)


def conv_grad_data(xp, gy, w, geo):
    """The gradient wrt the data of the convolution with ``w``, given ``gy`` (also the
    transposed convolution of ``gy``): one GEMM gives the patch gradients, then one
    strided slice-add per kernel offset scatters them back.

    The slice-adds run in runs of one output row, too short to be fast when the rows
    are short (8 values at the end of LeNet): the patch gradients are then computed
    batch-minor, (g, cg, *k, *o, n), so the runs cover a whole output row of every
    sample (``o_w * n`` values at stride 1, ``n`` otherwise). That costs one copy of
    the output gradient into that order and one of the result back into the layout,
    both the size of the data, not of the patches.
    """
    dt, ct = _fdtype(gy, w)
    gy, w = _cast(gy, ct), _cast(w, ct)
    if _depthwise(geo):
        return _cast(dw_grad_data(xp, gy, w, geo), dt)
    n, g, fg, cg, nsp = geo.n, geo.g, geo.fg, geo.cg, geo.nsp
    minor = _minor(geo)
    gt = _gy_mat(xp, gy, geo, minor)
    inner = geo.o + (n,) if minor else (n,) + geo.o
    wt = xp.swapaxes(w.reshape(g, fg, -1), 1, 2)  # rows (cg, k), channels-last (k, cg)
    gc = _mm(xp, wt, gt, "patches")  # (g, rows, o*n or n*o)
    if geo.cl:
        gc = xp.moveaxis(gc.reshape((g,) + geo.k + (cg,) + inner), 1 + nsp, 1)
    else:
        gc = gc.reshape((g, cg) + geo.k + inner)
    sp = geo.need + (n,) if minor else (n,) + geo.need
    buf = scratch(xp, "buf", (g, cg) + sp, ct)
    lead = (slice(None),) * (2 if minor else 3)
    offsets = list(_offsets(geo))

    def scatter(lo, hi):  # the patch gradients of channels lo:hi added back
        b = buf[:, lo:hi]
        b.fill(0)
        for kk, sl in offsets:
            b[lead + sl] += gc[(slice(None), slice(lo, hi)) + kk]

    cpu_parallel.run_chunks(cg, scatter, elements=buf.size * len(offsets), xp=xp)
    # back to the layout (n first, channels second or last), cropping the padding
    buf = buf.reshape((geo.c,) + sp)
    first = 1 if minor else 2  # the first spatial axis of buf
    spatial = tuple(range(first, first + nsp))
    nax = nsp + 1 if minor else 1
    perm = (nax,) + spatial + (0,) if geo.cl else (nax, 0) + spatial
    return _cast(_uncrop(xp, buf, geo, first, perm), dt)


def _uncrop(xp, buf, geo, first, perm):
    """``buf`` (channels, batch and the prepared spatial axes from axis ``first``)
    cropped to the data's spatial extent, transposed by ``perm`` into the data layout
    (a fresh array)."""
    lo = [p[0] for p in geo.p]
    src = [slice(None)] * buf.ndim
    whole = True
    for i, (nd, xi, lo_i) in enumerate(zip(geo.need, geo.x, lo)):
        m = max(min(xi, nd - lo_i), 0)
        whole = whole and m == xi
        src[first + i] = slice(lo_i, lo_i + m)
    part = buf[tuple(src)].transpose(perm)
    if whole:
        return _fresh(xp, part)
    out = xp.zeros(geo.data_shape, buf.dtype)
    cpu_parallel.copy(out[tuple(slice(0, s) for s in part.shape)], part)
    return out


def _offsets(geo):
    """(kernel offset index, the slices of the prepared input it reads) per offset."""
    for kk in itertools.product(*[range(ki) for ki in geo.k]):
        yield kk, tuple(slice(ki * di, ki * di + si * (oi - 1) + 1, si)
                        for ki, di, si, oi in zip(kk, geo.d, geo.s, geo.o))


# ------------------------------------------------------------------ depthwise
# One input channel per group (depthwise, ``num_group == channels``): the data
# gradient's patch gradients come from GEMMs with one-element inner dimensions, so it
# multiply-accumulates the output gradient into shifted views instead, one pass per
# kernel offset (measured 1.5-2x faster on MobileNet-sized layers; the forward and
# weight gradient stay GEMMs, which measured faster than the elementwise version).
def _depthwise(geo):
    return geo.cg == 1 and geo.g > 1


def dw_grad_data(xp, gy, w, geo):
    """The data gradient of a depthwise convolution (multiplier ``fg``)."""
    m = geo.fg
    if geo.cl:  # (n, *o, c, m) against weights (c, m)
        g5 = gy.reshape((geo.n,) + geo.o + (geo.c, m))
        lead, m_axis = (slice(None),), -1
    else:  # (n, c, m, *o) against weights (c, m, 1, ...)
        g5 = gy.reshape((geo.n, geo.c, m) + geo.o)
        lead, m_axis = (slice(None), slice(None)), 2
    wk = w.reshape(geo.c, m, geo.kp)  # (f, 1, *k) and (f, *k, 1) hold the same order
    shape = list(geo.data_shape)
    for ax, nd in zip(_sp_axes(geo), geo.need):
        shape[ax] = nd
    buf = xp.zeros(shape, gy.dtype)
    tmp = scratch(xp, "dw", g5.shape, gy.dtype)
    for j, (_, sl) in enumerate(_offsets(geo)):
        wj = wk[:, :, j] if geo.cl else wk[:, :, j].reshape((geo.c, m) + (1,) * geo.nsp)
        xp.multiply(g5, wj, out=tmp)
        buf[lead + sl] += tmp.sum(axis=m_axis) if m > 1 else xp.squeeze(tmp, m_axis)
    return crop(xp, buf, geo)


def im2col(xp, x, geo):
    """MXNet's im2col: (n, c, *x) -> (n, c * prod(k), prod(o))."""
    dt = x.dtype
    a = prepare(xp, x, geo)
    ks, os_ = _names(geo)
    p = cols(xp, a, geo, ["n", "c", *ks, *os_]).reshape(geo.n, geo.c * geo.kp, geo.op)
    return _cast(p, dt)


def col2im(xp, col, geo):
    """MXNet's col2im: (n, c * prod(k), prod(o)) -> (n, c, *x), summing overlaps."""
    dt, ct = _fdtype(col)
    gc = _cast(col, ct).reshape((geo.n, geo.c) + geo.k + geo.o)
    buf = xp.zeros((geo.n, geo.c) + geo.need, ct)
    full = (slice(None), slice(None))
    for kk, sl in _offsets(geo):
        buf[full + sl] += gc[full + kk]
    return _cast(crop(xp, buf, geo), dt)


def crop(xp, buf, geo):
    """The data-shaped part of a prepared-input-shaped ``buf`` (undo :func:`prepare`)."""
    lo = [p[0] for p in geo.p]
    if not any(lo) and geo.need == geo.x:
        return buf
    dst, src = [slice(None)] * buf.ndim, [slice(None)] * buf.ndim
    for ax, nd, xi, lo_i in zip(_sp_axes(geo), geo.need, geo.x, lo):
        m = max(min(xi, nd - lo_i), 0)
        dst[ax], src[ax] = slice(0, m), slice(lo_i, lo_i + m)
    out = xp.zeros(geo.data_shape, buf.dtype)
    out[tuple(dst)] = buf[tuple(src)]
    return out
