"""Products: matmul, dot (MXNet and NumPy), batch_dot, tensordot, einsum, inner, outer.

The matrix products that dominate training (``matmul``, ``dot``, ``batch_dot``) run
one ``xp.matmul``/``xp.dot`` call forward and differentiate with transposed products
of themselves (``transpose_a``/``transpose_b``), never einsum, in the 2-D case.
Everything else differentiates through ``einsum``, whose own VJP is einsum again, so
gradients of every order work without the shape family's operators.
"""
from __future__ import annotations

import string

import numpy

from ..dtypes import is_float
from ..ndarray import NDArray
from .broadcast import sum_to
from .infer import is_aval, shape_of
from .registry import Aval, F, defop

_LETTERS = string.ascii_letters


# --------------------------------------------------------------- helpers shared with linalg
def _dtype_name(a) -> str:
    return a.dtype.name if is_aval(a) else type(a).__name__


def desc(names, avals) -> str:
    """``a: (2, 3) float32, b: (4, 5) float32`` for error messages."""
    return ", ".join(f"{n}: {shape_of(a)} {_dtype_name(a)}" for n, a in zip(names, avals))


def result_dtype(name, names, *avals):
    try:
        return numpy.result_type(*[a.dtype if is_aval(a) else a for a in avals])
    except TypeError as e:
        raise TypeError(f"{name}: no common dtype ({desc(names, avals)}): {e}") from None


def _dt(x):
    """The dtype of an array, or a Python scalar as it is (weakly typed)."""
    return x.dtype if hasattr(x, "dtype") else x


def wanted(c):
    """Input dtypes for a VJP, None where no gradient is wanted (integers, constants)."""
    return tuple(d if p is not None and is_float(d) else None
                 for d, p in zip(c.in_dtypes, c.node.parents))


def shapes_of(c):
    """The input shapes of a VJP context, () for Python scalars."""
    return tuple(() if s is None else s for s in c.in_shapes)


def _fix(out, dtype):
    """``out`` in ``dtype``: NumPy computes bfloat16 products in float32."""
    return out if out.dtype == dtype else out.astype(dtype)


def const(like: NDArray, data) -> NDArray:
    """A constant (no gradient) NDArray on ``like``'s context."""
    return NDArray._make(like._ctx.xp.asarray(data), like._ctx, None)


def eye(like: NDArray, n: int, dtype=None) -> NDArray:
    """The identity matrix on ``like``'s context (a constant)."""
    return NDArray._make(like._ctx.xp.eye(n, dtype=dtype or like.dtype), like._ctx, None)


def ones(like: NDArray, shape, dtype=None) -> NDArray:
    return NDArray._make(like._ctx.xp.ones(shape, dtype=dtype or like.dtype), like._ctx, None)


def mT(x):
    """The last two axes of ``x`` swapped (differentiable)."""
    return F.einsum(x, subscripts="...ij->...ji")


def mm_grads(mm, a, b, g, ta, tb, need_a=True, need_b=True):
    """Gradients of ``mm(a, b, ta, tb) = op(a) @ op(b)``, written with ``mm`` itself."""
    ga = gb = None
    if need_a:
        ga = mm(g, b, False, not tb) if not ta else mm(b, g, tb, True)
    if need_b:
        gb = mm(a, g, not ta, False) if not tb else mm(g, a, True, ta)
    return ga, gb


def via(opname, *keys):
    """``attrs -> mm(x, y, ta, tb)`` calling ``opname`` with the forward's ``keys`` attrs."""
    def of(at):
        fn, extra = getattr(F, opname), {k: at[k] for k in keys}
        return lambda x, y, ta, tb: fn(x, y, transpose_a=ta, transpose_b=tb, **extra)

    return of


def _sizes(subs, shapes):
    sizes: dict = {}
    for sub, shp in zip(subs, shapes):
        for ch, d in zip(sub, shp):
            sizes[ch] = max(sizes.get(ch, 1), d)  # batch dimensions broadcast
    return sizes


def product_vjp(subs_fn, mm_of=None, fast=lambda shapes: False):
    """VJP of a product of two arrays: transposed products ``mm_of(attrs)`` of the operator
    itself where ``fast(shapes)`` (2-D operands: the training hot path), else einsums over
    the explicit subscripts ``subs_fn(shapes, attrs) -> (subs, out)``."""
    def vjp(c, g):
        shapes, dts, at = shapes_of(c), wanted(c), c.attrs
        if mm_of is not None and fast(shapes):
            # ``a @ b`` calls matmul with no attributes
            grads = mm_grads(mm_of(at), c.inputs[0], c.inputs[1], g,
                             at.get("transpose_a", False), at.get("transpose_b", False),
                             dts[0] is not None, dts[1] is not None)
            return tuple(None if x is None else sum_to(x, s, d)
                         for x, s, d in zip(grads, shapes, dts))
        subs, out = subs_fn(shapes, at)
        return tuple(einsum_grads(subs, out, c.inputs, g, shapes, dts, _sizes(subs, shapes)))

    return vjp


def matmul_raw(xp, a, b, ta, tb):
    """op(a) @ op(b) on raw arrays (the forward of the batched products)."""
    if a.ndim == 2 and b.ndim == 2:  # NumPy's dot takes transposed views without a copy
        out = xp.dot(a.T if ta else a, b.T if tb else b)
    else:
        if ta and a.ndim >= 2:
            a = xp.swapaxes(a, -1, -2)
        if tb and b.ndim >= 2:
            b = xp.swapaxes(b, -1, -2)
        out = xp.matmul(a, b)
    if out.dtype is not a.dtype:
        out = _fix(out, numpy.result_type(a.dtype, b.dtype))
    return out


# --------------------------------------------------------------- einsum subscripts
def parse_einsum(name, subscripts, shapes):
    """Explicit subscripts (no ellipsis), the output's, and each letter's size.

    Follows NumPy: ``...`` broadcasts (aligned from the right), an implicit output is
    the ellipsis followed by the letters used once in alphabetical order, and a
    dimension of size 1 broadcasts against the same letter elsewhere.
    """
    if not isinstance(subscripts, str):
        raise TypeError(f"{name}: subscripts must be a string such as 'ij,jk->ik', "
                        f"got {subscripts!r}")
    s = subscripts.replace(" ", "")
    lhs, arrow, out = s.partition("->")
    if "->" in out or (arrow and "-" in out) or "-" in lhs or ">" in lhs:
        raise ValueError(f"{name}: subscripts {subscripts!r} may contain '->' once")
    ins = lhs.split(",")
    if len(ins) != len(shapes):
        raise ValueError(f"{name}: subscripts {subscripts!r} name {len(ins)} operand(s) but "
                         f"{len(shapes)} were given (shapes: {', '.join(map(str, shapes))})")
    free = [c for c in _LETTERS if c not in s]
    n_ell = []
    for k, (sub, shp) in enumerate(zip(ins, shapes)):
        body = sub.replace("...", "", 1)
        if any(c not in _LETTERS for c in body):
            raise ValueError(f"{name}: invalid subscript {sub!r} for operand {k}; use letters "
                             "a-z, A-Z and at most one '...'")
        if "..." in sub:
            n = len(shp) - len(body)
        else:
            n = 0
            if len(sub) != len(shp):
                raise ValueError(f"{name}: operand {k} has {len(shp)} dimension(s) (shape "
                                 f"{shp}) but its subscripts {sub!r} name {len(sub)}")
        if n < 0:
            raise ValueError(f"{name}: operand {k} has {len(shp)} dimension(s) (shape {shp}), "
                             f"fewer than its subscripts {sub!r} name")
        n_ell.append(n)
    n_max = max(n_ell, default=0)
    ell = "".join(free[:n_max])
    explicit = [sub.replace("...", ell[n_max - n:]) for sub, n in zip(ins, n_ell)]
    if arrow:
        if "..." in out:
            out = out.replace("...", ell, 1)
        elif n_max:
            raise ValueError(f"{name}: subscripts {subscripts!r}: the output needs '...' "
                             "because the operands have broadcast ('...') dimensions")
        if any(c not in _LETTERS for c in out) or len(set(out)) != len(out):
            raise ValueError(f"{name}: invalid output subscripts in {subscripts!r}")
        for c in out:
            if c not in lhs and c not in ell:
                raise ValueError(f"{name}: output subscript {c!r} in {subscripts!r} does not "
                                 "appear in the inputs")
    else:
        body = lhs.replace("...", "").replace(",", "")
        out = ell + "".join(sorted(c for c in set(body) if body.count(c) == 1))
    sizes: dict = {}
    for k, (sub, shp) in enumerate(zip(explicit, shapes)):
        own: dict = {}
        for c, d in zip(sub, shp):
            if c in own and own[c] != d:
                raise ValueError(f"{name}: operand {k} repeats subscript {c!r} over dimensions "
                                 f"of different sizes {own[c]} and {d} (shape {shp})")
            own[c] = d
        for c, d in own.items():
            prev = sizes.get(c)
            if prev is None or prev == 1:
                sizes[c] = d
            elif d != prev and d != 1:
                raise ValueError(f"{name}: subscript {c!r} has size {prev} in one operand and "
                                 f"{d} in operand {k} (shapes: {', '.join(map(str, shapes))})")
    return explicit, out, sizes


def einsum_grads(subs, out, inputs, g, shapes, dtypes, sizes):
    """Gradient of ``einsum(subs -> out)`` for each input, as einsums (None: no gradient)."""
    grads = []
    used = set("".join(subs) + out)
    spare = [c for c in _LETTERS if c not in used]
    for i, s in enumerate(subs):
        if not is_float(dtypes[i]):
            grads.append(None)
            continue
        ops = [g] + [x for j, x in enumerate(inputs) if j != i]
        osubs = [out] + [t for j, t in enumerate(subs) if j != i]
        target, seen, fresh = [], set(), iter(spare)
        for ch in s:
            if ch in seen:  # a diagonal: the gradient lives on it (times the identity)
                nc = next(fresh)
                ops.append(eye(g, sizes[ch]))
                osubs.append(ch + nc)
                target.append(nc)
            else:
                seen.add(ch)
                target.append(ch)
        avail = set("".join(osubs))
        for ch in target:
            if ch not in avail:  # summed within this operand only: broadcast back
                ops.append(ones(g, (sizes[ch],)))
                osubs.append(ch)
        gx = F.einsum(*ops, subscripts=",".join(osubs) + "->" + "".join(target),
                      optimize=len(ops) > 1)
        grads.append(sum_to(gx, shapes[i], dtypes[i]))
    return grads


# --------------------------------------------------------------- einsum
def _einsum_infer(*operands, subscripts=None, optimize=False):
    shapes = [shape_of(a) for a in operands]
    if not operands:
        raise ValueError("einsum: needs at least one operand")
    _, out, sizes = parse_einsum("einsum", subscripts, shapes)
    dt = result_dtype("einsum", [f"operand {i}" for i in range(len(operands))], *operands)
    return Aval(tuple(sizes[c] for c in out), dt)


def _einsum_vjp(c, g):
    shapes = shapes_of(c)
    subs, out, sizes = parse_einsum("einsum", c.attrs["subscripts"], shapes)
    return tuple(einsum_grads(subs, out, c.inputs, g, shapes, wanted(c), sizes))


@defop("einsum", infer=_einsum_infer, vjp=_einsum_vjp, inputs=("operands",), variadic=True,
       attrs={"subscripts": None, "optimize": False}, np=("einsum",))
def _einsum(xp, *operands, subscripts=None, optimize=False):
    """Einstein summation over ``operands`` as ``subscripts`` say ('ij,jk->ik')."""
    dt = numpy.result_type(*[_dt(o) for o in operands])
    if dt.kind not in "biufc":  # bfloat16: NumPy's einsum has no loop for it
        operands = [o.astype(numpy.float32) if hasattr(o, "dtype") else o for o in operands]
    return _fix(xp.asarray(xp.einsum(subscripts, *operands, optimize=optimize)), dt)


# --------------------------------------------------------------- matmul
def mat_shapes(name, names, a, b, ta, tb, batch_broadcast=True):
    """(batch, out shape) of op(a) @ op(b) with NumPy's 1-D promotion, or a clear error."""
    for n, x in zip(names, (a, b)):
        if not is_aval(x):
            raise TypeError(f"{name}: {n} must be an array, got {x!r}; use multiply for scalars")
        if x.ndim == 0:
            raise ValueError(f"{name}: {n} must have at least 1 dimension, got a scalar "
                             f"({desc(names, (a, b))}); use multiply for scalars")
    ash, bsh = list(a.shape), list(b.shape)
    ia = -2 if (ta and a.ndim >= 2) else -1
    ib = (-1 if tb else -2) if b.ndim >= 2 else 0
    if ash[ia] != bsh[ib]:
        hint = "; ".join(f"{k}=True" for k, v in (("transpose_a", ta), ("transpose_b", tb)) if v)
        raise ValueError(f"{name}: {names[0]}.shape[{ia}]={ash[ia]} must equal "
                         f"{names[1]}.shape[{ib}]={bsh[ib]} ({desc(names, (a, b))}"
                         f"{'; ' + hint if hint else ''})")
    n = [ash[-1 if ia == -2 else -2]] if a.ndim >= 2 else []
    m = [bsh[-2 if ib == -1 else -1]] if b.ndim >= 2 else []
    ba, bb = tuple(ash[:-2]), tuple(bsh[:-2])
    if batch_broadcast:
        try:
            batch = numpy.broadcast_shapes(ba, bb)
        except ValueError:
            raise ValueError(f"{name}: batch dimensions {ba} and {bb} cannot be broadcast "
                             f"together ({desc(names, (a, b))})") from None
    else:
        if a.ndim != b.ndim or ba != bb:
            raise ValueError(f"{name}: {names[0]} and {names[1]} must have the same batch "
                             f"dimensions, got {ba} and {bb} ({desc(names, (a, b))})")
        batch = ba
    return batch, tuple(batch) + tuple(n) + tuple(m)


def _matmul_infer(a, b, transpose_a=False, transpose_b=False):
    _, shape = mat_shapes("matmul", ("a", "b"), a, b, transpose_a, transpose_b)
    return Aval(shape, result_dtype("matmul", ("a", "b"), a, b))


def _matvec_subs(ash, bsh, ta, tb):
    """Explicit einsum subscripts of matmul when an operand is 1-D (right-aligned batch)."""
    batch = _LETTERS[26:26 + max(len(ash) - 2, len(bsh) - 2, 0)]

    def side(shape, pair):
        return "z" if len(shape) == 1 else batch[len(batch) - (len(shape) - 2):] + pair

    out = batch + ("n" if len(ash) >= 2 else "") + ("m" if len(bsh) >= 2 else "")
    return [side(ash, "zn" if ta else "nz"), side(bsh, "mz" if tb else "zm")], out


@defop("matmul", save="inputs", infer=_matmul_infer, inputs=("a", "b"),
       vjp=product_vjp(lambda s, at: _matvec_subs(*s, at.get("transpose_a", False),
                                                  at.get("transpose_b", False)),
                       via("matmul"), lambda s: len(s[0]) >= 2 and len(s[1]) >= 2),
       attrs={"transpose_a": False, "transpose_b": False}, np=("matmul",))
def _matmul(xp, a, b, transpose_a=False, transpose_b=False):
    """Matrix product with broadcast batch dimensions (``a @ b``); optionally transposed."""
    return matmul_raw(xp, a, b, transpose_a, transpose_b)


# --------------------------------------------------------------- batch_dot (MXNet)
def _batch_dot_infer(lhs, rhs, transpose_a=False, transpose_b=False, forward_stype=None):
    names = ("lhs", "rhs")
    for n, x in zip(names, (lhs, rhs)):
        if not is_aval(x) or x.ndim < 3:
            raise ValueError(f"batch_dot: {n} must have at least 3 dimensions (batch, rows, "
                             f"columns), got {desc(names, (lhs, rhs))}")
    _, shape = mat_shapes("batch_dot", names, lhs, rhs, transpose_a, transpose_b, False)
    return Aval(shape, result_dtype("batch_dot", names, lhs, rhs))


@defop("batch_dot", save="inputs", infer=_batch_dot_infer, inputs=("lhs", "rhs"),
       vjp=product_vjp(None, via("batch_dot"), lambda s: True),
       attrs={"transpose_a": False, "transpose_b": False, "forward_stype": None},
       nd=("batch_dot",))
def _batch_dot(xp, lhs, rhs, transpose_a=False, transpose_b=False, forward_stype=None):
    """Batched matrix product of (B..., N, M) and (B..., M, K) arrays (MXNet's batch_dot)."""
    if lhs.ndim < 3 or lhs.shape[:-2] != rhs.shape[:-2]:
        raise ValueError("batch_dot: needs equal batch dimensions")  # infer explains
    return matmul_raw(xp, lhs, rhs, transpose_a, transpose_b)


# --------------------------------------------------------------- dot (MXNet 1.x)
def _mx_dot_parts(lhs, rhs, ta, tb):
    """(lhs free dims, contracted size of lhs, of rhs, rhs free dims) as MXNet views them."""
    ls, rs = lhs.shape, rhs.shape
    if ta:
        l_free, l_k = ls[1:], ls[0]
    else:
        l_free, l_k = ls[:-1], ls[-1]
    if tb:
        r_free, r_k = rs[:-1], rs[-1]
    else:
        r_free, r_k = rs[1:], rs[0]
    return (l_free if len(ls) > 1 else ()), l_k, r_k, (r_free if len(rs) > 1 else ())


def _dot_infer(lhs, rhs, transpose_a=False, transpose_b=False, forward_stype=None):
    names = ("lhs", "rhs")
    for n, x in zip(names, (lhs, rhs)):
        if not is_aval(x) or x.ndim == 0:
            raise ValueError(f"dot: {n} must have at least 1 dimension "
                             f"({desc(names, (lhs, rhs))}); use multiply for scalars")
    if lhs.ndim == 1 and rhs.ndim == 1 and (transpose_a or transpose_b):
        raise ValueError(f"dot: cannot transpose vectors ({desc(names, (lhs, rhs))})")
    l_free, l_k, r_k, r_free = _mx_dot_parts(lhs, rhs, transpose_a, transpose_b)
    if l_k != r_k:
        ia = "0" if transpose_a else "-1"
        ib = "-1" if transpose_b else "0"
        raise ValueError(f"dot: lhs.shape[{ia}]={l_k} must equal rhs.shape[{ib}]={r_k} "
                         f"({desc(names, (lhs, rhs))}; transpose_a={transpose_a}, "
                         f"transpose_b={transpose_b})")
    shape = (1,) if lhs.ndim == 1 and rhs.ndim == 1 else tuple(l_free) + tuple(r_free)
    return Aval(shape, result_dtype("dot", names, lhs, rhs))


def _mx_dot_subs(shapes, at):
    (ls, rs), ta, tb = shapes, at["transpose_a"], at["transpose_b"]
    if len(ls) == 1 and len(rs) == 1:  # the (1,)-shaped vector product
        return ["z", "z"], "w"
    lf, rf = _LETTERS[:len(ls) - 1], _LETTERS[26:26 + len(rs) - 1]
    return [("z" + lf if ta else lf + "z"), (rf + "z" if tb else "z" + rf)], lf + rf


@defop("dot", save="inputs", infer=_dot_infer, inputs=("lhs", "rhs"),
       vjp=product_vjp(_mx_dot_subs, via("dot"), lambda s: len(s[0]) == len(s[1]) == 2),
       attrs={"transpose_a": False, "transpose_b": False, "forward_stype": None},
       nd=("dot",))
def _dot(xp, lhs, rhs, transpose_a=False, transpose_b=False, forward_stype=None):
    """MXNet's dot: contracts the last axis of lhs with the first axis of rhs."""
    if lhs.ndim <= 2 and rhs.ndim <= 2:
        if lhs.ndim == 0 or rhs.ndim == 0:
            raise ValueError("dot: scalar input")  # infer explains
        if lhs.ndim == 1 and rhs.ndim == 1:
            if transpose_a or transpose_b:
                raise ValueError("dot: cannot transpose vectors")
            out = xp.dot(lhs, rhs).reshape(1)  # MXNet's vector product has shape (1,)
        else:
            out = xp.dot(lhs.T if transpose_a else lhs, rhs.T if transpose_b else rhs)
    else:
        l_free, l_k, r_k, r_free = _mx_dot_parts(lhs, rhs, transpose_a, transpose_b)
        a2 = lhs.reshape(l_k, -1).T if transpose_a else lhs.reshape(-1, l_k)
        b2 = rhs.reshape(-1, r_k).T if transpose_b else rhs.reshape(r_k, -1)
        out = xp.dot(a2, b2).reshape(tuple(l_free) + tuple(r_free))
    if out.dtype is not lhs.dtype:
        out = _fix(out, numpy.result_type(lhs.dtype, rhs.dtype))
    return out


# --------------------------------------------------------------- dot (NumPy)
def _np_dot_subs(ash, bsh):
    if not ash or not bsh:
        sa, sb = _LETTERS[:len(ash)], _LETTERS[26:26 + len(bsh)]
        return [sa, sb], sa + sb
    af = _LETTERS[:len(ash) - 1]
    if len(bsh) == 1:
        return [af + "z", "z"], af
    bf = _LETTERS[26:26 + len(bsh) - 2]
    return [af + "z", bf + "z" + "y"], af + bf + "y"


def _np_dot_infer(a, b):
    names = ("a", "b")
    ash, bsh = shape_of(a), shape_of(b)
    dt = result_dtype("dot", names, a, b)
    if ash and bsh:
        ib = -2 if len(bsh) >= 2 else -1
        if ash[-1] != bsh[ib]:
            raise ValueError(f"dot: a.shape[-1]={ash[-1]} must equal b.shape[{ib}]={bsh[ib]} "
                             f"({desc(names, (a, b))})")
    subs, out = _np_dot_subs(ash, bsh)
    sizes = dict(zip(subs[1], bsh))
    sizes.update(zip(subs[0], ash))
    return Aval(tuple(sizes[ch] for ch in out), dt)


@defop("np_dot", save="inputs", infer=_np_dot_infer, inputs=("a", "b"), np=("dot",),
       vjp=product_vjp(lambda s, at: _np_dot_subs(*s), via("matmul"),
                       lambda s: len(s[0]) == len(s[1]) == 2))
def _np_dot(xp, a, b):
    """NumPy's dot: contracts the last axis of a with the second-to-last of b."""
    return _fix(xp.asarray(xp.dot(a, b)), numpy.result_type(_dt(a), _dt(b)))


# --------------------------------------------------------------- tensordot, inner, outer
def _tensordot_axes(name, axes, ash, bsh):
    if isinstance(axes, (int, numpy.integer)) and not isinstance(axes, bool):
        n = int(axes)
        if n < 0 or n > len(ash) or n > len(bsh):
            raise ValueError(f"{name}: axes={n} must be between 0 and the smaller number of "
                             f"dimensions of a {ash} and b {bsh}")
        xa, xb = list(range(len(ash) - n, len(ash))), list(range(n))
    else:
        try:
            xa, xb = axes
        except (TypeError, ValueError):
            raise TypeError(f"{name}: axes must be an int or a pair of axis lists, got "
                            f"{axes!r}") from None
        xa = [xa] if isinstance(xa, (int, numpy.integer)) else list(xa)
        xb = [xb] if isinstance(xb, (int, numpy.integer)) else list(xb)
        if len(xa) != len(xb):
            raise ValueError(f"{name}: axes {axes!r} name {len(xa)} axes of a but "
                             f"{len(xb)} of b")
        for lst, shp, nm in ((xa, ash, "a"), (xb, bsh, "b")):
            for k, ax in enumerate(lst):
                if not -len(shp) <= ax < len(shp):
                    raise ValueError(f"{name}: axis {ax} is out of range for {nm} of shape "
                                     f"{shp}")
                lst[k] = ax % len(shp)
            if len(set(lst)) != len(lst):
                raise ValueError(f"{name}: repeated axis in {axes!r}")
    for i, j in zip(xa, xb):
        if ash[i] != bsh[j]:
            raise ValueError(f"{name}: a.shape[{i}]={ash[i]} must equal b.shape[{j}]={bsh[j]} "
                             f"(a: {ash}, b: {bsh}, axes={axes!r})")
    return xa, xb


def _tensordot_subs(ash, bsh, axes):
    xa, xb = _tensordot_axes("tensordot", axes, ash, bsh)
    sa = list(_LETTERS[:len(ash)])
    sb = list(_LETTERS[26:26 + len(bsh)])
    for i, j in zip(xa, xb):
        sb[j] = sa[i]
    out = [s for k, s in enumerate(sa) if k not in xa] + [s for k, s in enumerate(sb)
                                                          if k not in xb]
    return ["".join(sa), "".join(sb)], "".join(out)


def _tensordot_infer(a, b, axes=2):
    names = ("a", "b")
    subs, out = _tensordot_subs(shape_of(a), shape_of(b), axes)
    sizes = dict(zip(subs[0], shape_of(a)))
    sizes.update(zip(subs[1], shape_of(b)))
    return Aval(tuple(sizes[ch] for ch in out), result_dtype("tensordot", names, a, b))


@defop("tensordot", save="inputs", infer=_tensordot_infer, inputs=("a", "b"), attrs={"axes": 2},
       np=("tensordot",),
       vjp=product_vjp(lambda s, at: _tensordot_subs(*s, at["axes"])))
def _tensordot(xp, a, b, axes=2):
    """Sum of products over the given axes of a and b (NumPy's tensordot)."""
    if not isinstance(axes, (int, numpy.integer)):
        axes = tuple(tuple(x) if isinstance(x, (list, tuple)) else x for x in axes)
    return _fix(xp.asarray(xp.tensordot(a, b, axes)), numpy.result_type(_dt(a), _dt(b)))


def _inner_subs(ash, bsh):
    if not ash or not bsh:
        sa, sb = _LETTERS[:len(ash)], _LETTERS[26:26 + len(bsh)]
        return [sa, sb], sa + sb
    af, bf = _LETTERS[:len(ash) - 1], _LETTERS[26:26 + len(bsh) - 1]
    return [af + "z", bf + "z"], af + bf


def _inner_infer(a, b):
    ash, bsh = shape_of(a), shape_of(b)
    if ash and bsh and ash[-1] != bsh[-1]:
        raise ValueError(f"inner: a.shape[-1]={ash[-1]} must equal b.shape[-1]={bsh[-1]} "
                         f"({desc(('a', 'b'), (a, b))})")
    shape = tuple(ash[:-1]) + tuple(bsh[:-1]) if ash and bsh else tuple(ash) + tuple(bsh)
    return Aval(shape, result_dtype("inner", ("a", "b"), a, b))


@defop("inner", save="inputs", infer=_inner_infer, inputs=("a", "b"), np=("inner",),
       vjp=product_vjp(lambda s, at: _inner_subs(*s)))
def _inner(xp, a, b):
    """Sum of products over the last axes of a and b (NumPy's inner)."""
    return _fix(xp.asarray(xp.inner(a, b)), numpy.result_type(_dt(a), _dt(b)))


def _outer_infer(a, b):
    sa, sb = shape_of(a), shape_of(b)
    return Aval((int(numpy.prod(sa)), int(numpy.prod(sb))),
                result_dtype("outer", ("a", "b"), a, b))


def _flat_as(x, shape):
    """A gradient of a flattened input back in the input's shape."""
    if len(shape) == 1:
        return x
    if not shape:
        return F.einsum(x, subscripts="i->")
    return F.reshape(x, shape=shape)  # N-d inputs need the shape family's reshape


def _outer_vjp(c, g):
    a, b = c.inputs
    (ash, bsh), (ad, bd) = shapes_of(c), wanted(c)
    ga = sum_to(_flat_as(F.matmul(g, _flatten(b, g)), ash), ash, ad) if is_float(ad) else None
    gb = sum_to(_flat_as(F.matmul(_flatten(a, g), g), bsh), bsh, bd) if is_float(bd) else None
    return ga, gb


def _flatten(x, like):
    if not isinstance(x, NDArray):
        return const(like, numpy.asarray([x], dtype=like.dtype))
    if x.ndim == 1:
        return x
    if x.ndim == 0:
        return F.einsum(x, ones(x, (1,)), subscripts=",i->i")
    return F.reshape(x, shape=(-1,))


@defop("outer", infer=_outer_infer, vjp=_outer_vjp, inputs=("a", "b"), np=("outer",))
def _outer(xp, a, b):
    """Outer product of the flattened a and b: shape (a.size, b.size)."""
    return _fix(xp.outer(a, b), numpy.result_type(_dt(a), _dt(b)))

