"""Casting and copying: ``cast``/``astype``, ``copy`` and moving between contexts."""
from __future__ import annotations

from ..context import Context
from ..dtypes import as_dtype, is_float
from .fusible import Fusion, c_expr
from .registry import Aval, F, defop


def _cast_vjp(c, g):
    src = c.in_dtypes[0]
    if not is_float(src):
        return (None,)
    return (F.cast(g, dtype=src),)


def _cast_into(xp, out, x):
    """``x.astype(out.dtype)`` written into ``out``: NumPy's copyto casts with the same
    loops, bit for bit (the fused step; on GPU, C's conversion: NaN or out-of-range floats
    to integers give other values than NumPy's)."""
    xp.copyto(out, x, casting="unsafe")
    return out


@defop("cast", infer=lambda x, dtype="float32": Aval(x.shape, as_dtype(dtype, "cast")),
       attrs={"dtype": "float32"}, nd=("cast", "Cast", "amp_cast"), np=("astype",),
       save=False, vjp=_cast_vjp,
       fusion=Fusion(c_expr("{a}"), "fiub", recipe=_cast_into, casts=True))
def _cast(xp, x, dtype="float32"):
    """Cast to ``dtype``; the gradient is cast back to the input's dtype."""
    return x.astype(as_dtype(dtype, "cast"))


@defop("copy", infer=lambda x: Aval(x.shape, x.dtype), nd=("copy", "identity", "_copy"),
       np=("copy",), save=False, vjp=lambda c, g: (g,))
def _copy(xp, x):
    """A copy of the array."""
    return x.copy()


@defop("BlockGrad", infer=lambda x: Aval(x.shape, x.dtype), nd=("BlockGrad", "stop_gradient"),
       np=("stop_gradient",), differentiable=False, save=False)
def _block_grad(xp, x):
    """Identity in the forward pass that stops the gradient (no copy: the same data)."""
    return x


def _copyto_infer(x, to=None):
    if not isinstance(to, Context):
        raise TypeError(f"_copyto: the target must be a Context, got {to!r}")
    return Aval(x.shape, x.dtype)


@defop("_copyto", infer=_copyto_infer, attrs={"to": None}, save=False,
       place=lambda attrs, ctx: attrs["to"],
       vjp=lambda c, g: (F._copyto(g, to=c.attrs["_from"]),))
def _copyto(xp, x, to=None, _from=None):
    """Copy to the context ``to`` (differentiable: the gradient goes back)."""
    dst = to.xp
    if dst is xp and to.device_type == "cpu":
        return x.copy()
    if to.device_type == "cpu":
        return x.get()
    with to.device_guard():  # GPU to GPU copies peer to peer onto the target device
        return dst.array(x, copy=True)
