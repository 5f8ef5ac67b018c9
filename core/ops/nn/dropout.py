"""Dropout (MXNet's ``Dropout``), with spatial dropout through ``axes``.

Design. The operator ``Dropout`` is a pure function of its inputs and attributes plus
the context's random generator (``core.random.get_generator(ctx)``, so
``core.random.seed`` makes masks reproducible): it always drops, keeping each unit with
probability ``1 - p`` and scaling kept units by ``1 / (1 - p)``. Like MXNet's it has two
outputs, ``(out, mask)``: ``mask`` holds the scale applied to each unit (0 or
``1 / (1 - p)``; size 1 along ``axes``, where it is shared), and the VJP multiplies the
head gradient by that same mask, so backward reuses exactly the forward's draw.

The training flag is not read inside the operator. The public function ``nd.Dropout``
(registered through ``NAMESPACE_OVERRIDES``) reads ``autograd.is_training()`` at call
time: with ``mode='training'`` outside training (or ``p == 0``) it returns ``data``
itself, as torch does, with no copy and no draw; otherwise it calls the operator with
``training=True`` and returns the first output. The operator's ``training`` attribute
(default True) lets a traced graph carry the flag explicitly: with ``training=False`` and
``mode='training'`` it returns a copy of ``data`` and a mask of ones (drawing nothing).

While tracing (``core.symbol``), ``nd.Dropout`` with ``mode='training'`` emits the
operator with ``training=TRAIN`` whatever the current mode, so one graph drops in
training runs and passes ``data`` through in inference runs (``p == 0`` stays the
identity and emits nothing).

On CPU, for float32/float64 data with a full-size mask (no ``axes``), the compiled kernel
``_dropout_apply`` (``core.cpu_kernels``) turns the uniform draw into the mask and applies
it in one pass; the draw itself is the same ``gen.random`` call, so the random stream and
the masks are exactly those of the NumPy twin.
"""
from __future__ import annotations

import numpy

from ... import cpu_kernels, tape
from ... import random as _random
from ...cpu_kernels import prange
from ..abstract import is_tracing
from ..dispatch import invoke
from ..infer import fmt, norm_axes, require_float
from ..registry import Aval, defop

_ATTRS = {"p": 0.5, "mode": "training", "axes": (), "cudnn_off": False, "training": True}


def _axes(axes):
    if axes is None:
        return ()
    if isinstance(axes, int):
        return (axes,)
    return tuple(axes)


def _mask_shape(shape, axes):
    ax = norm_axes("Dropout", _axes(axes), len(shape)) if _axes(axes) else ()
    return tuple(1 if i in ax else s for i, s in enumerate(shape))


def _dropout_infer(data, p=0.5, mode="training", axes=(), cudnn_off=False, training=True):
    require_float("Dropout", data, what="input")
    if not 0 <= p <= 1:
        raise ValueError(f"Dropout: p must be in [0, 1], got {p} (data: {fmt([data])})")
    if mode not in ("training", "always"):
        raise ValueError(f"Dropout: mode must be 'training' or 'always', got {mode!r}")
    mshape = _mask_shape(data.shape, axes)
    return Aval(data.shape, data.dtype), Aval(mshape, data.dtype)


def _dropout_vjp(c, g):
    return (g[0] * c.outputs[1],)


def _draw(ctx, shape, dtype):
    """The uniform draw a mask is made of (float64 for float64 data, else float32)."""
    return _random.get_generator(ctx).random(
        shape, dtype=numpy.float64 if dtype == numpy.float64 else numpy.float32)


def _dropout_kernel(xp, data, p=0.5, mode="training", axes=(), cudnn_off=False,
                    training=True, ctx=None):
    """The compiled CPU path (``cpu=``): mask and product from the same draw in one pass;
    None (before drawing) where the twin runs: no drop, a mask shared along ``axes``,
    other dtypes, or bad attributes."""
    if (not (training or mode == "always") or not 0 < p < 1 or mode not in ("training", "always")
            or data.dtype not in (numpy.float32, numpy.float64)
            or _mask_shape(data.shape, axes) != tuple(data.shape)):
        return None
    return _dropout_cpu(data, _draw(ctx, data.shape, data.dtype), p)


@defop("Dropout", infer=_dropout_infer, vjp=_dropout_vjp, inputs=("data",), attrs=_ATTRS,
       needs_ctx=True, random=True, visible_outputs=1, cpu=_dropout_kernel)
def _dropout(xp, data, p=0.5, mode="training", axes=(), cudnn_off=False, training=True,
             ctx=None):
    """Drop units with probability ``p`` and scale the rest by ``1 / (1 - p)``.

    Returns ``(out, mask)``; ``mask`` is the per-unit scale (shared along ``axes``).
    """
    if mode not in ("training", "always") or not 0 <= p <= 1:
        raise ValueError("attributes")  # infer explains
    mshape = _mask_shape(data.shape, axes)
    if not (training or mode == "always") or p == 0:
        return data.copy(), xp.ones(mshape, data.dtype)
    if p == 1:
        mask = xp.zeros(mshape, data.dtype)
    else:
        mask = (_draw(ctx, mshape, data.dtype) >= p).astype(data.dtype)
        mask *= 1.0 / (1.0 - p)
    return data * mask, mask


@cpu_kernels.kernel(parallel=True)
def _dropout_apply(x, u, p, scale, zero, out, mask):
    """``mask = scale if u >= p else zero``, ``out = x * mask`` (flat arrays of one size)."""
    for i in prange(x.shape[0]):
        m = scale if u[i] >= p else zero
        mask[i] = m
        out[i] = x[i] * m


def _dropout_cpu(data, u, p):
    """The kernel path of :func:`_dropout`: (out, mask) for a full-size draw ``u``."""
    dt = data.dtype.type
    out = numpy.empty(data.shape, data.dtype)
    mask = numpy.empty(data.shape, data.dtype)
    # p in u's dtype and the scale in data's, as the twin's NumPy scalar promotion does
    _dropout_apply(numpy.ascontiguousarray(data).reshape(-1), u.reshape(-1), u.dtype.type(p),
                   dt(1.0) * dt(1.0 / (1.0 - p)), dt(0.0), out.reshape(-1), mask.reshape(-1))
    return out, mask


def Dropout(data, p=0.5, mode="training", axes=(), cudnn_off=False, **kwargs):
    """MXNet's ``Dropout``: in training, zero each unit with probability ``p`` and scale the
    others by ``1 / (1 - p)``; outside training (``mode='training'``) return ``data``.

    Args:
        data: the input.
        p: the probability of dropping a unit.
        mode: ``'training'`` (drop only while ``autograd.is_training()``) or ``'always'``.
        axes: axes along which one mask value is shared (spatial/variational dropout:
            ``axes=(2, 3)`` drops whole feature maps of NCHW data).
        cudnn_off: accepted for MXNet compatibility.

    While tracing a graph (``core.symbol``), ``mode='training'`` emits the operator with
    ``training=TRAIN``: the graph drops units when run with ``is_train=True`` only.

    Example:
        >>> from core import nd, autograd
        >>> x = nd.ones((2, 3))
        >>> nd.Dropout(x, p=0.5).asnumpy().tolist()  # not training: the input itself
        [[1.0, 1.0, 1.0], [1.0, 1.0, 1.0]]
        >>> with autograd.train_mode():
        ...     y = nd.Dropout(x, p=0.5)
        >>> sorted(set(y.asnumpy().ravel().tolist())) in ([0.0], [2.0], [0.0, 2.0])
        True
    """
    kwargs.pop("name", None)
    out = kwargs.pop("out", None)
    if kwargs:
        raise TypeError(f"Dropout: unexpected keyword argument(s) {sorted(kwargs)}; "
                        "accepted: data, p, mode, axes, cudnn_off, out")
    attrs = {"p": p, "mode": mode, "axes": axes, "cudnn_off": cudnn_off, "training": True}
    if mode == "training" and p != 0 and is_tracing():
        from ...symbol.graph import TRAIN

        attrs["training"] = TRAIN
        res = invoke(_dropout, [data], attrs)[0]
    elif mode == "training" and not tape.is_training() or p == 0:
        if mode not in ("training", "always") or not 0 <= p <= 1:
            _dropout_infer(Aval(data.shape, data.dtype), **attrs)  # the same errors as the op
        res = data
    else:
        res = invoke(_dropout, [data], attrs)[0]
    if out is not None:
        out[...] = res
        return out
    return res


NAMESPACE_OVERRIDES = {"nd": {"Dropout": Dropout}}
