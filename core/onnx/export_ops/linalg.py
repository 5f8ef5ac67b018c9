"""Matrix products: FullyConnected is in :mod:`.nn`; here ``dot`` (MXNet's tensordot of
the last and first axes), ``batch_dot``, ``matmul`` and the ``linalg_gemm`` forms."""
from __future__ import annotations

from ..export_emit import ExportError
from .shape import target_shape


def _swap_last(b, t: str, nd: int) -> str:
    perm = list(range(nd))
    perm[-1], perm[-2] = perm[-2], perm[-1]
    return b.transpose(t, perm)


def _matmul(b, n, ins, attrs):
    a, c = ins[0], ins[1]
    na, nc = len(b.in_shape(0)), len(b.in_shape(1))
    if attrs.get("transpose_a") and na >= 2:
        a = _swap_last(b, a, na)
    if attrs.get("transpose_b") and nc >= 2:
        c = _swap_last(b, c, nc)
    dt = b.out_dtype()
    return [b.op("MatMul", [b.cast(a, dt), b.cast(c, dt)])]


def _dot(b, n, ins, attrs):
    a, c = ins[0], ins[1]
    sa, sc = b.in_shape(0), b.in_shape(1)
    ta, tb = bool(attrs.get("transpose_a")), bool(attrs.get("transpose_b"))
    if ta and len(sa) > 2 or tb and len(sc) > 2:
        raise ExportError(f"dot: transposes of operands with more than 2 dimensions "
                          f"(shapes {sa} and {sc})")
    if ta and len(sa) == 2:
        a = b.transpose(a, [1, 0])
    if tb and len(sc) == 2:
        c = b.transpose(c, [1, 0])
    dt = b.out_dtype()
    a, c = b.cast(a, dt), b.cast(c, dt)
    if len(sc) > 2:  # tensordot over a's last and c's first axis
        c = b.reshape(c, [sc[0], -1])
    y = b.op("MatMul", [a, c])
    expect = len(b.out_shape())
    got = max(len(sa), 1) - 1 + (len(sc) - 1 if len(sc) > 2 else (1 if len(sc) == 2 else 0))
    if got != expect or len(sc) > 2:
        y = b.reshape(y, target_shape(b))
    return [y]


def _batch_dot(b, n, ins, attrs):
    return _matmul(b, n, ins, attrs)


def _gemm2(b, n, ins, attrs):
    y = _matmul(b, n, ins[:2], attrs)[0]
    alpha = float(attrs.get("alpha", 1.0))
    if alpha != 1.0:
        y = b.op("Mul", [y, b.const(_np(alpha, b.out_dtype()), "alpha")])
    return [y]


def _gemm(b, n, ins, attrs):
    y = _gemm2(b, n, ins[:2], attrs)[0]
    beta = float(attrs.get("beta", 1.0))
    cterm = b.cast(ins[2], b.out_dtype())
    if beta != 1.0:
        cterm = b.op("Mul", [cterm, b.const(_np(beta, b.out_dtype()), "beta")])
    return [b.op("Add", [y, cterm])]


def _einsum(b, n, ins, attrs):
    eq = attrs.get("subscripts")
    if not isinstance(eq, str):
        raise ExportError(f"einsum: subscripts {eq!r}")
    dt = b.out_dtype()
    return [b.op("Einsum", [b.cast(t, dt) for t in ins if isinstance(t, str)],
                 equation=eq.replace(" ", ""))]


def _np(v, dt):
    import numpy

    return numpy.asarray(v, dtype=dt)


RULES = {"matmul": _matmul, "dot": _dot, "batch_dot": _batch_dot, "linalg_gemm2": _gemm2,
         "linalg_gemm": _gemm, "einsum": _einsum}
