"""AMP (automatic mixed precision), MXNet 1.9's ``mx.amp`` / ``mxnet.contrib.amp`` API.

:func:`init` makes the ``core.nd`` and ``core.sym`` functions of the op lists
(:mod:`core.amp.lists`) cast their inputs: fully-connected layers and convolutions run in
float16 or bfloat16, what needs range or accuracy runs in float32, the rest as given.
Parameters stay float32 (the master weights): a cast's gradient is cast back, so every
parameter gets a float32 gradient. Gluon layers call ``F.FullyConnected`` and the like
with ``F = core.nd``, imperatively and while hybridize traces them, so both run mixed.

:func:`init_trainer` gives a ``gluon.Trainer`` a dynamic :class:`LossScaler`;
:func:`scale_loss` multiplies the loss by the scale for ``backward`` and makes the
trainer's step divide it out; a step whose gradients hold an inf or a NaN is skipped
(no parameter changes) and the scale halves; after ``scale_window`` clean steps it
doubles. :func:`unscale` divides the gradients by the scale early (to clip them).

The same on every context: CPU contexts run float16 and bfloat16 (ml_dtypes) as GPUs
do (MXNet's CPU AMP is bfloat16 only).

Example:
    >>> from core import amp, autograd, nd
    >>> from gluon import nn, Trainer
    >>> amp.init("float16")
    >>> net = nn.Dense(2, in_units=3); net.initialize()
    >>> trainer = Trainer(net.collect_params(), "sgd", {"learning_rate": 0.1})
    >>> amp.init_trainer(trainer)
    >>> with autograd.record():
    ...     out = net(nd.ones((4, 3)))
    ...     loss = (out.astype("float32") ** 2).sum()
    ...     with amp.scale_loss(loss, trainer) as scaled:
    ...         autograd.backward(scaled)
    >>> trainer.step(4)
    >>> out.dtype, net.weight.data().dtype
    (dtype('float16'), dtype('float32'))
    >>> amp.amp._uninit()  # undo init (for tests; MXNet has no way back)
"""
from __future__ import annotations

import contextlib
import functools
import logging

import numpy

from .. import nd as _nd
from .. import sym as _sym
from ..dtypes import bfloat16
from ..ndarray import NDArray
from ..ops import registry as _registry
from ..symbol.symbol import Symbol
from . import lists
from .convert import convert_hybrid_block, convert_model, convert_symbol
from .loss_scaler import LossScaler

__all__ = ["LossScaler", "convert_hybrid_block", "convert_model", "convert_symbol", "init",
           "init_trainer", "is_initialized", "list_conditional_fp32_ops", "list_fp32_ops",
           "list_loss_output_functions", "list_lp16_fp32_ops", "list_lp16_ops",
           "list_lp16_use_fp32_params", "list_widest_type_cast", "scale_loss", "target_dtype",
           "unscale"]

_log = logging.getLogger(__name__)

_float16 = numpy.dtype(numpy.float16)
_float32 = numpy.dtype(numpy.float32)
_LOW = (_float16, bfloat16)
_CASTABLE = (_float16, _float32, bfloat16)

_state = {"dtype": None, "scaler": None, "scaler_taken": False}
_originals: list = []  # (module, name, function) replaced by init, for _uninit
_cast_nd = _nd.cast
_cast_sym = _sym.amp_cast


# ------------------------------------------------------------------ op lists
def _lp16(target_dtype, what: str):
    """The list module for ``target_dtype`` (ValueError naming ``what`` otherwise)."""
    dt = _as_target(target_dtype, what)
    return lists.symbol_fp16 if dt == _float16 else lists.symbol_bf16


def _as_target(target_dtype, what: str) -> numpy.dtype:
    try:
        dt = numpy.dtype(target_dtype)
    except TypeError:
        dt = None
    if dt not in _LOW:
        raise ValueError(f"amp.{what}: target_dtype must be 'float16' or 'bfloat16', "
                         f"got {target_dtype!r}")
    return dt


def list_lp16_ops(target_dtype) -> list:
    """The ops AMP runs in ``target_dtype`` (``'float16'`` or ``'bfloat16'``).

    Example:
        >>> from core import amp
        >>> "Convolution" in amp.list_lp16_ops("bfloat16")
        True
    """
    m = _lp16(target_dtype, "list_lp16_ops")
    return list(m.FP16_FUNCS if m is lists.symbol_fp16 else m.BF16_FUNCS)


def list_fp32_ops(target_dtype) -> list:
    """The ops AMP always runs in float32.

    Example:
        >>> from core import amp
        >>> "softmax" in amp.list_fp32_ops("float16")
        True
    """
    return list(_lp16(target_dtype, "list_fp32_ops").FP32_FUNCS)


def list_lp16_fp32_ops(target_dtype) -> list:
    """The ops that run in whatever dtype they are given (AMP casts nothing).

    Example:
        >>> from core import amp
        >>> "relu" in amp.list_lp16_fp32_ops("float16")
        True
    """
    m = _lp16(target_dtype, "list_lp16_fp32_ops")
    return list(m.FP16_FP32_FUNCS if m is lists.symbol_fp16 else m.BF16_FP32_FUNCS)


def list_conditional_fp32_ops(target_dtype) -> list:
    """``(op, attribute, values)``: float32 when the attribute has one of the values.

    Example:
        >>> from core import amp
        >>> amp.list_conditional_fp32_ops("float16")[0]
        ('Activation', 'act_type', ['softrelu'])
    """
    return list(_lp16(target_dtype, "list_conditional_fp32_ops").CONDITIONAL_FP32_FUNCS)


def list_widest_type_cast(target_dtype) -> list:
    """The ops with several inputs that run in the widest dtype among them.

    Example:
        >>> from core import amp
        >>> "broadcast_add" in amp.list_widest_type_cast("float16")
        True
    """
    return list(_lp16(target_dtype, "list_widest_type_cast").WIDEST_TYPE_CASTS)


def list_loss_output_functions(target_dtype) -> list:
    """The output ops whose ``grad_scale`` AMP multiplies by the loss scale.

    Example:
        >>> from core import amp
        >>> "SoftmaxOutput" in amp.list_loss_output_functions("float16")
        True
    """
    return list(_lp16(target_dtype, "list_loss_output_functions").LOSS_OUTPUT_FUNCTIONS)


def list_lp16_use_fp32_params(target_dtype) -> dict | None:
    """``{op: [per input, its name if it stays float32, else '']}`` for low-precision
    ops with float32 parameters (bfloat16's BatchNorm), None for float16 (MXNet's
    answer).

    Example:
        >>> from core import amp
        >>> amp.list_lp16_use_fp32_params("float16") is None
        True
    """
    m = _lp16(target_dtype, "list_lp16_use_fp32_params")
    return None if m is lists.symbol_fp16 else dict(m.BF16_USE_FP32_PARAMS)


# ------------------------------------------------------------------ casting wrappers
def _cast(x, dtype: numpy.dtype):
    """``x`` cast to ``dtype`` when it is a float16/bfloat16/float32 NDArray of another
    dtype (or a Symbol: an ``amp_cast`` node); anything else as it is."""
    if isinstance(x, NDArray):
        if x.dtype != dtype and x.dtype in _CASTABLE:
            return _cast_nd(x, dtype=dtype.name)
        return x
    if isinstance(x, Symbol):
        return _cast_sym(x, dtype=dtype.name)
    if isinstance(x, (list, tuple)):
        return type(x)(_cast(v, dtype) for v in x)
    return x


def _input_names(name: str) -> tuple:
    for op in _registry.REGISTRY.values():
        if name in (e if isinstance(e, str) else e[0] for e in op.nd):
            return op.inputs
    return ()


def _casting(f, name: str, dtype: numpy.dtype, keep=None, cond=None):
    """``f`` with its array arguments cast to ``dtype``; ``keep``: per input position,
    True for inputs left alone; ``cond``: ``(attribute, values)`` that must match."""
    keep_names = set()
    if keep:  # MXNet's format: per input, its name if it stays float32, else ''
        names = [n.rstrip("?") for n in _input_names(name)]
        keep_names = {n for n, k in zip(names, keep) if k} | {k for k in keep
                                                              if isinstance(k, str) and k}

    @functools.wraps(f)
    def amp_fn(*args, **kwargs):
        if cond is not None and kwargs.get(cond[0]) not in cond[1]:
            return f(*args, **kwargs)
        if keep:
            args = [a if i < len(keep) and keep[i] else _cast(a, dtype)
                    for i, a in enumerate(args)]
            kwargs = {k: v if k in keep_names else _cast(v, dtype) for k, v in kwargs.items()}
        else:
            args = [_cast(a, dtype) for a in args]
            kwargs = {k: _cast(v, dtype) for k, v in kwargs.items()}
        return f(*args, **kwargs)

    amp_fn.__amp_original__ = f
    return amp_fn


def _flat_arrays(values):
    for v in values:
        if isinstance(v, NDArray):
            yield v
        elif isinstance(v, (list, tuple)):
            yield from _flat_arrays(v)


def _widest(f):
    """``f`` with its float16/bfloat16 inputs cast to float32 when another is float32
    (or when both low-precision dtypes are there)."""

    @functools.wraps(f)
    def amp_fn(*args, **kwargs):
        dts = {a.dtype for a in _flat_arrays((*args, *kwargs.values())) if a.dtype in _CASTABLE}
        if len(dts) > 1:
            args = [_cast(a, _float32) for a in args]
            kwargs = {k: _cast(v, _float32) for k, v in kwargs.items()}
        return f(*args, **kwargs)

    amp_fn.__amp_original__ = f
    return amp_fn


def _grad_scaling(f, scaler: LossScaler):
    """``f`` with its ``grad_scale`` multiplied by the current loss scale."""

    @functools.wraps(f)
    def amp_fn(*args, **kwargs):
        kwargs["grad_scale"] = kwargs.get("grad_scale", 1.0) * scaler.loss_scale
        return f(*args, **kwargs)

    amp_fn.__amp_original__ = f
    return amp_fn


def _replace(module, name: str, make) -> None:
    f = getattr(module, name, None)
    if f is None and module is _sym:  # imperative-only functions (core.nd is the authority)
        return
    if f is None:
        raise ValueError(f"amp.init: {module.__name__} has no function {name!r} (op lists "
                         "name core.nd functions)")
    _originals.append((module, name, f))
    setattr(module, name, make(f))


def _check_lists(dt, lp16, fp32, cond) -> None:
    names = [c[0] for c in cond]
    for a, b, what in ((lp16, fp32, "target_precision_ops and fp32_ops"),
                       (lp16, names, "target_precision_ops and conditional_fp32_ops"),
                       (fp32, names, "fp32_ops and conditional_fp32_ops")):
        common = sorted(set(a) & set(b))
        if common:
            raise ValueError(f"amp.init: ops cannot be in two lists; {what} share {common}")
    for c in cond:
        if not (isinstance(c, (tuple, list)) and len(c) == 3 and isinstance(c[0], str)
                and isinstance(c[1], str) and isinstance(c[2], (list, tuple))):
            raise ValueError("amp.init: conditional_fp32_ops entries are (op name, "
                             f"attribute name, [values]), got {c!r}")


# ------------------------------------------------------------------ the API
def init(target_dtype="float16", target_precision_ops=None, conditional_fp32_ops=None,
         fp32_ops=None) -> None:
    """Turn AMP on for this process (before building the model, as in MXNet).

    A second call does nothing (MXNet's behaviour).

    Args:
        target_dtype: ``'float16'`` or ``'bfloat16'`` (or their dtypes).
        target_precision_ops: replaces the list of ops run in ``target_dtype``.
        conditional_fp32_ops: replaces the ``(op, attribute, values)`` list.
        fp32_ops: replaces the list of ops run in float32.

    Raises:
        ValueError: another target dtype, an op in two lists, or a name that is no
            ``core.nd`` function.
    """
    dt = _as_target(target_dtype, "init")
    if _state["dtype"] is not None:
        return
    lp16 = list(target_precision_ops) if target_precision_ops is not None \
        else list_lp16_ops(dt)
    fp32 = list(fp32_ops) if fp32_ops is not None else list_fp32_ops(dt)
    cond = list(conditional_fp32_ops) if conditional_fp32_ops is not None \
        else list_conditional_fp32_ops(dt)
    _check_lists(dt, lp16, fp32, cond)
    keep = list_lp16_use_fp32_params(dt) or {}
    scaler = LossScaler()
    try:
        for module in (_nd, _sym):
            for name in lp16:
                _replace(module, name, lambda f, n=name: _casting(f, n, dt, keep.get(n)))
            for name in fp32:
                _replace(module, name, lambda f, n=name: _casting(f, n, _float32))
            for name, attr, values in cond:
                _replace(module, name, lambda f, n=name, a=attr, v=tuple(values):
                         _casting(f, n, _float32, cond=(a, v)))
            if module is _nd:
                for name in list_widest_type_cast(dt):
                    _replace(module, name, _widest)
                for name in list_loss_output_functions(dt):
                    _replace(module, name, lambda f: _grad_scaling(f, scaler))
    except Exception:
        _uninit()
        raise
    _state.update(dtype=dt, scaler=scaler, scaler_taken=False)
    _log.info("Using AMP (%s)", dt.name)


def _uninit() -> None:
    """Undo :func:`init` (restore the original functions; for tests)."""
    while _originals:
        module, name, f = _originals.pop()
        setattr(module, name, f)
    _state.update(dtype=None, scaler=None, scaler_taken=False)


def is_initialized() -> bool:
    """Whether :func:`init` ran in this process.

    Example:
        >>> from core import amp
        >>> isinstance(amp.is_initialized(), bool)
        True
    """
    return _state["dtype"] is not None


def target_dtype() -> numpy.dtype | None:
    """The dtype :func:`init` was given (None before it).

    Example:
        >>> from core import amp
        >>> amp.target_dtype() in (None, "float16", "bfloat16")
        True
    """
    return _state["dtype"]


def _check_trainer(trainer, what: str) -> None:
    from ..optimizer import Optimizer

    if isinstance(trainer, Optimizer):
        raise TypeError(f"amp.{what}: AMP is currently only compatible with Gluon Trainer "
                        "(got an Optimizer)")
    if not all(hasattr(trainer, a) for a in ("_scale", "_params", "_update")):
        raise TypeError(f"amp.{what}: optimizer_or_trainer should be a Gluon Trainer, "
                        f"got {type(trainer).__name__}")


def init_trainer(optimizer_or_trainer, loss_scaler: LossScaler | None = None) -> None:
    """Give a ``gluon.Trainer`` dynamic loss scaling: its steps skip on overflow.

    Args:
        optimizer_or_trainer: the Trainer.
        loss_scaler: the scaler to use (default: the one :func:`init` made for the first
            trainer, a new one for each other, as in MXNet).

    Raises:
        RuntimeError: :func:`init` was not called.
        TypeError: an Optimizer or anything but a Trainer.
    """
    if _state["dtype"] is None:
        raise RuntimeError("amp.init_trainer: AMP not initialized, did you forget to call "
                           "amp.init()?")
    trainer = optimizer_or_trainer
    _check_trainer(trainer, "init_trainer")
    if loss_scaler is None:
        if not _state["scaler_taken"]:
            _state["scaler_taken"] = True
            loss_scaler = _state["scaler"]
        else:
            loss_scaler = LossScaler()
    if getattr(trainer, "_amp_loss_scaler", None) is None:
        for attr in ("_update", "_update_on_store"):
            if hasattr(trainer, attr):
                setattr(trainer, attr, _skipping(trainer, getattr(trainer, attr)))
    trainer._amp_loss_scaler = loss_scaler
    trainer._amp_original_scale = trainer._scale


def _skipping(trainer, update):
    """The trainer's update, skipped (gradients consumed, weights untouched) when a
    fresh gradient overflowed; the scaler adapts either way."""

    def amp_update(fresh):
        params = [p for p, f in zip(trainer._params, fresh) if f is not None and any(f)]
        if trainer._amp_loss_scaler.has_overflow(params):
            for p in params:
                p._mark_stale()
            return None
        return update(fresh)

    amp_update.__amp_original__ = update
    return amp_update


@contextlib.contextmanager
def scale_loss(loss, optimizer_or_trainer):
    """Yield the loss (or list of losses) times the loss scale, for ``backward``; the
    trainer's next step divides the gradients by the scale again.

    Args:
        loss: an NDArray or a list/tuple of them.
        optimizer_or_trainer: a Trainer passed to :func:`init_trainer`.

    Raises:
        RuntimeError: the trainer has no loss scaler (:func:`init_trainer`).
    """
    scaler = getattr(optimizer_or_trainer, "_amp_loss_scaler", None)
    if scaler is None:
        raise RuntimeError("amp.scale_loss: loss scaler is not initialized, did you forget "
                           "to call amp.init_trainer()?")
    scale = scaler.loss_scale
    optimizer_or_trainer._scale = optimizer_or_trainer._amp_original_scale / scale
    if isinstance(loss, (list, tuple)):
        yield [l * scale for l in loss]
    else:
        yield loss * scale


def unscale(optimizer_or_trainer) -> None:
    """Divide the gradients by the loss scale now (e.g. before clipping them); the
    step then applies them as they are.

    Args:
        optimizer_or_trainer: a Trainer passed to :func:`init_trainer`.

    Raises:
        TypeError: an Optimizer or anything but a Trainer.
    """
    trainer = optimizer_or_trainer
    _check_trainer(trainer, "unscale")
    for p in trainer._params:
        if p.grad_req == "null":
            continue
        try:
            grads = p.list_grad()
        except RuntimeError:
            continue
        for g in grads:
            g[:] = g * trainer._scale
    trainer._scale = 1.0
