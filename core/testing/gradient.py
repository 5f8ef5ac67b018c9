"""kbackend's operator-test helpers: directional finite differences, non-contiguous views.

Part of ``core.test_utils`` (MXNet's ``mx.test_utils``); import from there.
"""
from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy

from .. import autograd
from ..context import as_context
from ..dtypes import is_float
from ..ndarray import NDArray
from ..ops import F

__all__ = ["LAYOUTS", "check_function_gradient", "view_of"]


def check_function_gradient(fn: Callable, inputs: Sequence, diff: Sequence[int] | None = None,
                            eps: float = 1e-6, rtol: float = 1e-4, atol: float = 1e-6,
                            directions: int = 2, seed: int = 0, ctx=None,
                            as_nd: Callable | None = None) -> None:
    """Check ``fn``'s autograd gradients against central finite differences.

    ``fn`` maps NDArrays (and other values) to an NDArray or a tuple of them. The check
    uses a random projection of the outputs, and per input ``directions`` random
    directional derivatives: <grad, d> against (L(x + eps d) - L(x - eps d)) / (2 eps),
    all in float64. (``check_numeric_gradient(fn, inputs, ...)`` calls this.)

    Args:
        fn: the function under test.
        inputs: NumPy arrays (converted to float64 NDArrays) or other values passed as is.
        diff: indices of the inputs to differentiate (default: every float array).
        eps: the finite-difference step.
        rtol, atol: tolerances on the directional derivatives.
        directions: random directions per input.
        seed: seed of the projection and the directions.
        ctx: the context.
        as_nd: ``as_nd(values) -> NDArray`` makes the NDArray of each NumPy input (e.g.
            ``view_of`` for non-contiguous inputs); default ``NDArray(values, ctx=ctx)``.

    Example:
        >>> check_function_gradient(lambda x: x * x, [numpy.array([1.0, 2.0])])
    """
    ctx = as_context(ctx)
    rng = numpy.random.default_rng(seed)
    arrays = [numpy.asarray(x, numpy.float64) if _is_float_array(x) else x for x in inputs]
    if diff is None:
        diff = [i for i, x in enumerate(arrays) if _is_float_array(x)]

    make = as_nd if as_nd is not None else (lambda v: NDArray(v, ctx=ctx))

    def to_nd(vals):
        return [make(v) if isinstance(v, numpy.ndarray) else v for v in vals]

    def outputs(vals):
        with autograd.pause():
            out = fn(*to_nd(vals))
        return list(out if isinstance(out, (tuple, list)) else (out,))

    outs0 = outputs(arrays)
    weights = [rng.standard_normal(o.shape) if is_float(o.dtype) else None for o in outs0]

    def loss(vals):
        return sum(float(numpy.sum(o.asnumpy() * w)) for o, w in zip(outputs(vals), weights)
                   if w is not None)

    xs = to_nd(arrays)
    for i in diff:
        xs[i].attach_grad()
    with autograd.record():
        out = fn(*xs)
        outs = out if isinstance(out, (tuple, list)) else (out,)
        terms = [F.sum_to(o * NDArray(w, ctx=ctx), shape=()) for o, w in zip(outs, weights)
                 if w is not None]
        total = terms[0]
        for t in terms[1:]:
            total = total + t
    total.backward()
    for i in diff:
        g = xs[i].grad.asnumpy()
        for _ in range(directions):
            d = rng.standard_normal(numpy.shape(arrays[i]))
            plus = list(arrays)
            minus = list(arrays)
            plus[i] = numpy.asarray(arrays[i] + eps * d)
            minus[i] = numpy.asarray(arrays[i] - eps * d)
            numeric = (loss(plus) - loss(minus)) / (2 * eps)
            analytic = float(numpy.sum(g * d))
            if not abs(numeric - analytic) <= atol + rtol * max(abs(numeric), abs(analytic)):
                raise AssertionError(
                    f"gradient of input {i} (shape {numpy.shape(arrays[i])}): directional "
                    f"derivative {analytic!r} by autograd, {numeric!r} by finite differences")


def _is_float_array(x) -> bool:
    return isinstance(x, numpy.ndarray) and is_float(x.dtype)


LAYOUTS = ("strided", "reversed", "fortran")


def view_of(a: numpy.ndarray, ctx=None, layout: str = "strided") -> NDArray:
    """An NDArray wrapping a non-contiguous view with the values of ``a``.

    Args:
        a: the values.
        ctx: the context (default: the current one).
        layout: how the view is laid out in its buffer: ``"strided"`` (every other
            element of the last axis), ``"reversed"`` (negative strides on every axis),
            ``"fortran"`` (column-major; 1-d arrays, where that is C order, are strided
            instead) or ``"offset"`` (C-contiguous, but starting one element into a
            bigger buffer, as parameters packed into one buffer are).
            Arrays of 0 or 1 element are plain copies (no strides to vary).

    Returns:
        An NDArray whose raw array is a view of a bigger or differently ordered buffer.

    Example:
        >>> import numpy
        >>> v = view_of(numpy.arange(6.0).reshape(2, 3), layout="reversed")
        >>> v.asnumpy().tolist()
        [[0.0, 1.0, 2.0], [3.0, 4.0, 5.0]]
    """
    if layout not in LAYOUTS + ("offset",):
        raise ValueError(f"view_of: layout must be one of {LAYOUTS + ('offset',)}, "
                         f"got {layout!r}")
    ctx = as_context(ctx)
    a = numpy.asarray(a)
    if a.ndim == 0 or a.size <= 1:
        return NDArray._make(ctx.xp.array(a), ctx, None)
    if layout == "fortran" and a.ndim == 1:
        layout = "strided"
    if layout == "reversed":
        flip = (slice(None, None, -1),) * a.ndim
        data = ctx.xp.asarray(numpy.ascontiguousarray(a[flip]))[flip]
    elif layout == "fortran":
        data = ctx.xp.asfortranarray(ctx.xp.asarray(a))
    elif layout == "offset":
        big = numpy.zeros(a.size + 1, a.dtype)
        big[1:] = a.ravel()
        data = ctx.xp.asarray(big)[1:].reshape(a.shape)
    else:
        big = numpy.zeros(a.shape[:-1] + (a.shape[-1] * 2,), a.dtype)
        big[..., ::2] = a
        data = ctx.xp.asarray(big)[..., ::2]
    return NDArray._make(data, ctx, None)
