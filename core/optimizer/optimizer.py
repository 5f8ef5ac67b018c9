"""The optimizer base class, its registry, and the helpers the update rules share.

An optimizer updates a weight in place from its gradient and a per-weight *state*
(momentum, moving averages, ...), with MXNet 1.9's ``mx.optimizer`` API:
``create_state(index, weight)`` once per weight, then ``update(index, weight, grad,
state)`` per step. ``index`` identifies the weight for the per-weight learning-rate and
weight-decay multipliers and for the per-weight update counts (the ``t`` of Adam's bias
correction). ``Updater`` (``get_updater``) pairs an optimizer with the states it
creates lazily; ``gluon.Trainer`` and the kvstores call it.

Update rules run on the raw arrays, outside autograd: each rule is one function over
``xp`` arrays that writes the weight and states in place (with ``out=``), plus, for
CuPy arrays, one fused ``ElementwiseKernel`` declared right above it (``core.cuda``);
``core.optimizer._fused`` holds what they share (the ``FusedOptimizer`` base class and
the kernel dispatch). Set the environment variable ``KBACKEND_FUSED_OPTIMIZER=0`` to run
the ``xp`` version on GPU as well. After a rule writes a weight, its ``_version`` goes
up, so autograd's check for inputs modified after recording stays correct.

Example:
    >>> from core import nd, optimizer
    >>> opt = optimizer.create('sgd', learning_rate=0.1, momentum=0.9)
    >>> w, g = nd.array([1.0, 2.0]), nd.array([0.5, -0.5])
    >>> state = opt.create_state(0, w)
    >>> opt.update(0, w, g, state)
    >>> w.asnumpy().tolist()
    [0.95, 2.05]
"""
from __future__ import annotations

import functools
import os
import warnings
from typing import Any, ClassVar

import numpy

from .. import cuda, engine
from ..dtypes import bfloat16
from ..ndarray import NDArray
from ._sparse import assign, is_sparse

__all__ = ["Optimizer", "Test", "create", "register"]

_LOW_PRECISION = (numpy.dtype("float16"), bfloat16)
_FUSED = os.environ.get("KBACKEND_FUSED_OPTIMIZER", "1") not in ("0", "false", "False")


class Optimizer:
    """The base class of all optimizers (MXNet 1.9's ``mx.optimizer.Optimizer``).

    Args:
        rescale_grad: every gradient is multiplied by this first (often
            ``1 / batch_size``).
        param_idx2name: ``{index: parameter name}``; names not ending in ``_weight`` or
            ``_gamma`` get weight-decay multiplier 0 (see :meth:`set_wd_mult`).
        wd: the weight decay (L2 regularization) coefficient.
        clip_gradient: clip the rescaled gradient to ``[-clip_gradient, clip_gradient]``;
            None (or a value <= 0) turns clipping off.
        learning_rate: the learning rate. None means the scheduler's ``base_lr`` when
            ``lr_scheduler`` is given, else 0.01; given together with a scheduler, it
            replaces the scheduler's ``base_lr``.
        lr_scheduler: an ``LRScheduler`` giving the learning rate per update count.
        sym: a Symbol whose arguments' ``__lr_mult__``/``__wd_mult__`` attributes
            set multipliers by name.
        begin_num_update: the update count to start from.
        multi_precision: for float16 (and bfloat16) weights, keep a float32 master copy
            in the state and update it in float32, then copy it into the weight.
        param_dict: ``{index: gluon.Parameter}``; a parameter's ``lr_mult`` and
            ``wd_mult`` take precedence over the multipliers set here.

    Example:
        >>> from core import optimizer
        >>> opt = optimizer.Optimizer(learning_rate=0.1, wd=1e-4)
        >>> opt.learning_rate, opt.wd
        (0.1, 0.0001)
    """

    opt_registry: ClassVar[dict] = {}
    # Names in ``param_idx2name`` that get weight decay (see :meth:`set_wd_mult`).
    _decayed_suffixes: ClassVar[tuple] = ("_weight", "_gamma")

    def __init__(self, rescale_grad: float = 1.0, param_idx2name: dict | None = None,
                 wd: float = 0.0, clip_gradient: float | None = None,
                 learning_rate: float | None = None, lr_scheduler=None, sym=None,
                 begin_num_update: int = 0, multi_precision: bool = False,
                 param_dict: dict | None = None):
        self.rescale_grad = rescale_grad
        self.lr_scheduler = lr_scheduler
        if lr_scheduler is None and learning_rate is None:
            learning_rate = 0.01
        self.lr = learning_rate
        if lr_scheduler is not None and learning_rate is not None \
                and lr_scheduler.base_lr != learning_rate:
            warnings.warn("learning rate from ``lr_scheduler`` has been overwritten by "
                          "``learning_rate`` in optimizer.", UserWarning, stacklevel=2)
            _set_scheduler_base_lr(lr_scheduler, learning_rate)
        self.wd = wd
        self.lr_mult: dict = {}
        self.wd_mult: dict = {}
        self.begin_num_update = begin_num_update
        self.num_update = begin_num_update
        self._current_device_id = 0
        self._all_index_update_counts: dict = {0: {}}
        self._index_update_count = self._all_index_update_counts[0]
        self.clip_gradient = clip_gradient
        self.multi_precision = multi_precision
        # MXNet aggregates weights into size-limited groups of multi-tensor updates;
        # here the Updater passes all the weights of a call at once to the optimizers
        # whose update takes lists (_takes_lists), so it never aggregates MXNet's way.
        self.aggregate_num = 0
        if param_idx2name is None:
            param_idx2name = {}
        if not isinstance(param_idx2name, dict):
            raise TypeError("Optimizer: param_idx2name should be a dict of param indexes "
                            f"to names, got {type(param_idx2name).__name__}")
        self.idx2name = param_idx2name.copy()
        self.sym_info = (sym.attr_dict(), sym.list_arguments()) if sym is not None else ()
        self.param_dict = param_dict if param_dict else {}
        self.set_lr_mult({})
        self.set_wd_mult({})

    # ------------------------------------------------------------------ registry
    @staticmethod
    def register(klass: type) -> type:
        """Register an optimizer class under its lower-cased class name.

        Example:
            >>> from core import optimizer
            >>> @optimizer.register
            ... class MyOptimizer(optimizer.Optimizer):
            ...     def update(self, index, weight, grad, state):
            ...         weight[:] = weight - self.learning_rate * grad
            >>> type(optimizer.create('myoptimizer')).__name__
            'MyOptimizer'
        """
        if not isinstance(klass, type) or not issubclass(klass, Optimizer):
            raise TypeError(f"register: expected a subclass of Optimizer, got {klass!r}")
        name = klass.__name__.lower()
        old = Optimizer.opt_registry.get(name)
        if old is not None and old is not klass:
            warnings.warn(f"New optimizer {klass.__module__}.{klass.__name__} is overriding "
                          f"existing optimizer {old.__module__}.{old.__name__}", stacklevel=2)
        Optimizer.opt_registry[name] = klass
        return klass

    @staticmethod
    def create_optimizer(name: str, **kwargs) -> Optimizer:
        """An optimizer by registered name (case-insensitive), built with ``kwargs``.

        Example:
            >>> from core import optimizer
            >>> type(optimizer.create('Adam', learning_rate=0.1)).__name__
            'Adam'
        """
        cls = Optimizer.opt_registry.get(str(name).lower())
        if cls is None:
            known = ", ".join(sorted(Optimizer.opt_registry))
            raise ValueError(f"Cannot find optimizer {name!r}; registered: {known}")
        return cls(**kwargs)

    # ------------------------------------------------------------------ learning rate
    @property
    def learning_rate(self) -> float:
        """The current learning rate: the scheduler's value at ``num_update`` if a
        scheduler is set, else the fixed rate. Assigning it (as MXNet 2.0 allows) works
        only without a scheduler."""
        if self.lr_scheduler is not None:
            return self.lr_scheduler(self.num_update)
        return self.lr

    @learning_rate.setter
    def learning_rate(self, lr: float) -> None:
        self.set_learning_rate(lr)

    def set_learning_rate(self, lr: float) -> None:
        """Set a new fixed learning rate.

        Raises:
            UserWarning: (raised, as MXNet does) when a scheduler sets the rate.
        """
        if self.lr_scheduler is not None:
            raise UserWarning("LRScheduler of the optimizer has already been defined. Note "
                              "that set_learning_rate can mutate the value of the learning "
                              "rate of the optimizer only when the LRScheduler of the "
                              "optimizer is undefined.")
        self.lr = lr

    def set_lr_scale(self, args_lrscale) -> None:
        """Deprecated in MXNet; use :meth:`set_lr_mult`."""
        raise DeprecationWarning("set_lr_scale is deprecated; use set_lr_mult")

    def set_lr_mult(self, args_lr_mult: dict) -> None:
        """Set learning-rate multipliers by parameter name or index.

        Multipliers from ``sym``'s ``__lr_mult__`` attributes come first; the entries of
        ``args_lr_mult`` replace them. A parameter in ``param_dict`` uses its own
        ``lr_mult`` instead.

        Args:
            args_lr_mult: ``{name or index: multiplier}``.
        """
        self.lr_mult = self._sym_mults("__lr_mult__")
        self.lr_mult.update(args_lr_mult)

    def set_wd_mult(self, args_wd_mult: dict) -> None:
        """Set weight-decay multipliers by parameter name or index.

        MXNet 1.9's rule: every name in ``param_idx2name`` that ends neither in
        ``_weight`` nor in ``_gamma`` (the class's ``_decayed_suffixes``) gets multiplier
        0 (biases, betas, running statistics, ...); then ``sym``'s ``__wd_mult__``
        attributes, then the entries of ``args_wd_mult``. A parameter in ``param_dict``
        uses its own ``wd_mult`` instead.

        Args:
            args_wd_mult: ``{name or index: multiplier}``.

        Example:
            >>> from core import optimizer
            >>> opt = optimizer.SGD(wd=0.1, param_idx2name={0: 'fc_weight', 1: 'fc_bias'})
            >>> opt._get_wd(0), opt._get_wd(1)
            (0.1, 0.0)
        """
        self.wd_mult = {}
        for n in self.idx2name.values():
            if not n.endswith(self._decayed_suffixes):
                self.wd_mult[n] = 0.0
        self.wd_mult.update(self._sym_mults("__wd_mult__"))
        self.wd_mult.update(args_wd_mult)

    def _sym_mults(self, key: str) -> dict:
        """``{argument name: multiplier}`` from the ``key`` attributes of ``sym``."""
        mults = {}
        if self.sym_info:
            attr, arg_names = self.sym_info
            for name in arg_names:
                if name in attr and key in attr[name]:
                    mults[name] = float(attr[name][key])
        return mults

    # ------------------------------------------------------------------ update counts
    def _set_current_context(self, device_id: int) -> None:
        """Keep separate update counts per device (one Updater per device)."""
        self._current_device_id = device_id
        self._index_update_count = self._all_index_update_counts.setdefault(device_id, {})

    def _update_count(self, index) -> None:
        """Count one more update of ``index`` (an index or a list of them)."""
        if not isinstance(index, (list, tuple)):
            index = [index]
        counts = self._index_update_count
        for idx in index:
            n = counts.get(idx, self.begin_num_update) + 1
            counts[idx] = n
            self.num_update = max(self.num_update, n)

    def _get_lrs(self, indices) -> list:
        return self._times_mult(self.learning_rate, indices, self.lr_mult, "lr_mult")

    def _get_lr(self, index) -> float:
        """The learning rate of weight ``index``: the current rate times its multiplier."""
        return self._get_lrs([index])[0]

    def _get_wds(self, indices) -> list:
        return self._times_mult(self.wd, indices, self.wd_mult, "wd_mult")

    def _get_wd(self, index) -> float:
        """The weight decay of weight ``index``: ``wd`` times its multiplier."""
        return self._get_wds([index])[0]

    def _times_mult(self, value: float, indices, mults: dict, param_attr: str) -> list:
        """``value`` times each index's multiplier: the ``param_attr`` of its parameter in
        ``param_dict``, else ``mults`` by index, else ``mults`` by name (default 1)."""
        out = [value for _ in indices]
        for i, index in enumerate(indices):
            if index in self.param_dict:
                out[i] *= getattr(self.param_dict[index], param_attr)
            elif index in mults:
                out[i] *= mults[index]
            elif index in self.idx2name:
                out[i] *= mults.get(self.idx2name[index], 1.0)
        return out

    def _clip(self) -> float:
        """The clipping bound for the rules, -1 meaning no clipping (as MXNet's kernels)."""
        return bound(self.clip_gradient)

    # ------------------------------------------------------------------ states and updates
    def create_state(self, index, weight: NDArray) -> Any:
        """The state of weight ``index`` (None, an NDArray or a tuple of them).

        Called once per weight, before its first update. The base class keeps no state.
        """
        return None

    def create_state_multi_precision(self, index, weight: NDArray) -> Any:
        """Like :meth:`create_state`, with a float32 master copy for low-precision weights.

        With ``multi_precision=True`` and a float16 (or bfloat16) weight the state is
        ``(master_copy, create_state(index, master_copy))``; SGD, NAG and LARS order it
        ``(state, master_copy)`` as MXNet does.
        """
        if self.multi_precision and weight.dtype in _LOW_PRECISION:
            master = _new_like(weight, numpy.float32, copy=True)
            inner = self.create_state(index, master)
            return (inner, master) if self._state_first else (master, inner)
        if weight.dtype in _LOW_PRECISION:
            warnings.warn("Accumulating with float16 in optimizer can lead to poor accuracy "
                          "or slow convergence. Consider using multi_precision=True option "
                          f"of the {type(self).__name__} optimizer", stacklevel=2)
        return self.create_state(index, weight)

    _state_first = False  # layout of the multi-precision state: (state, master) if True

    def _takes_lists(self) -> bool:
        """Whether :meth:`update` takes a whole step's lists of indices, weights,
        gradients and states in one multi-tensor call (the fused optimizers); the
        Updater then makes one call per step."""
        return False

    def update(self, index, weight: NDArray, grad: NDArray, state) -> None:
        """Update ``weight`` in place from ``grad`` and ``state``.

        Args:
            index: the weight's index (or a list of indices, with lists of weights,
                gradients and states).
            weight: the weight.
            grad: its gradient.
            state: what :meth:`create_state` returned for it.
        """
        raise NotImplementedError(f"{type(self).__name__}.update is not implemented")

    def update_multi_precision(self, index, weight: NDArray, grad: NDArray, state) -> None:
        """:meth:`update`, through the float32 master copy for low-precision weights.

        The gradient is cast to float32, the master copy is updated, and the weight
        receives the master copy cast to its dtype.
        """
        if isinstance(index, (list, tuple)):
            if self._takes_lists():
                self._update_many(index, weight, grad, state)
                return
            for i, w, g, s in zip(index, weight, grad, state):
                self.update_multi_precision(i, w, g, s)
            return
        _settle(weight, grad)  # also for custom update()s that read raw buffers
        if self.multi_precision and weight.dtype in _LOW_PRECISION \
                and _is_mp_state(state, weight, self._state_first):
            inner, master = state if self._state_first else state[::-1]
            self.update(index, master, _grad32(grad), inner)
            _write_master(weight, master)
        else:
            self.update(index, weight, grad, state)

    def _update_many(self, indices, weights, grads, states) -> None:
        """:meth:`update_multi_precision` of lists as one :meth:`update` call of lists
        (for optimizers whose ``update`` takes lists: :meth:`_takes_lists`), the
        float32 master copies of low-precision weights standing in for them."""
        ws, gs, ss, masters = [], [], [], []
        for weight, grad, state in zip(weights, grads, states):
            _settle(weight, grad)
            if self.multi_precision and weight.dtype in _LOW_PRECISION \
                    and _is_mp_state(state, weight, self._state_first):
                inner, master = state if self._state_first else state[::-1]
                ws.append(master)
                gs.append(_grad32(grad))
                ss.append(inner)
                masters.append((weight, master))
            else:
                ws.append(weight)
                gs.append(grad)
                ss.append(state)
        self.update(list(indices), ws, gs, ss)
        for weight, master in masters:
            _write_master(weight, master)

    def __getstate__(self):
        ret = self.__dict__.copy()
        del ret["param_dict"]  # the Trainer sets it again
        return ret

    def __setstate__(self, state):
        self.__dict__ = state
        self.param_dict = {}

    def __repr__(self) -> str:
        return f"{type(self).__name__}(learning_rate={self.lr!r}, wd={self.wd!r})"


def _is_mp_state(state, weight, state_first) -> bool:
    """Whether ``state`` is a multi-precision state (with a float32 master copy)."""
    if not (isinstance(state, tuple) and len(state) == 2):
        return False
    master = state[1] if state_first else state[0]
    return isinstance(master, NDArray) and master.dtype == numpy.float32 \
        and master.shape == weight.shape


def _set_scheduler_base_lr(scheduler, lr) -> None:
    """Point a scheduler at a new base learning rate.

    MXNet sets only ``base_lr``; its Poly and Cosine schedulers then go on decaying from
    their original rate, and warm-up climbs to the old one. Moving those as well makes
    ``learning_rate=`` mean what it says.
    """
    scheduler.base_lr = lr
    if hasattr(scheduler, "base_lr_orig"):
        scheduler.base_lr_orig = lr
    if hasattr(scheduler, "warmup_final_lr"):
        scheduler.warmup_final_lr = lr


register = Optimizer.register
create = Optimizer.create_optimizer


# ---------------------------------------------------------------------- helpers for the rules

def per_index(update):
    """Let an ``update`` method take lists of indices, weights, gradients and states."""

    @functools.wraps(update)
    def wrapper(self, index, weight, grad, state):
        if isinstance(index, (list, tuple)):
            for i, w, g, s in zip(index, weight, grad, state):
                update(self, i, w, g, s)
        else:
            update(self, index, weight, grad, state)

    return wrapper


def raw(opt, weight, grad):
    """The raw arrays of a weight and its gradient, after checking they fit together."""
    if not isinstance(weight, NDArray) or not isinstance(grad, NDArray):
        raise TypeError(f"{type(opt).__name__}.update: weight and grad must be NDArrays, got "
                        f"{type(weight).__name__} and {type(grad).__name__}")
    if grad._ctx is not weight._ctx:
        raise ValueError(f"{type(opt).__name__}.update: the gradient is on {grad._ctx} but "
                         f"the weight is on {weight._ctx}; move it with "
                         f"grad.as_in_context({weight._ctx})")
    if grad.shape != weight.shape:
        raise ValueError(f"{type(opt).__name__}.update: gradient shape {grad.shape} does not "
                         f"match weight shape {weight.shape}")
    _settle(weight, grad)
    return weight._data, grad._data


def _settle(weight: NDArray, grad: NDArray) -> None:
    """Wait for pending engine work (an all-reduce of ``grad``, a read of ``weight``)
    before an update touches their raw buffers."""
    if weight._var is not None or grad._var is not None:
        engine.wait_to_write(weight)
        engine.wait_to_read(grad)


def _grad32(grad: NDArray) -> NDArray:
    """The float32 copy of a gradient for a master-weight update (sparse stays sparse)."""
    if is_sparse(grad):
        return grad.astype(numpy.float32)
    return _new_like(grad, numpy.float32, copy=True)


def _write_master(weight: NDArray, master: NDArray) -> None:
    """Copy the float32 master weight into the low-precision ``weight``."""
    if is_sparse(weight):
        assign(weight, master)
        return
    with weight.context.device_guard():
        weight._data[...] = master._data
    weight._version += 1


def _new_like(a: NDArray, dtype=None, copy: bool = False) -> NDArray:
    """A dense new array on ``a``'s context, outside autograd: zeros, or a (cast) copy
    (of a sparse array's dense value)."""
    if copy and is_sparse(a):
        a = a.tostype("default")
    ctx = a._ctx
    with ctx.device_guard():
        dt = a.dtype if dtype is None else numpy.dtype(dtype)
        data = a._data.astype(dt, copy=True) if copy else ctx.xp.zeros(a.shape, dt)
    return NDArray._make(data, ctx, None)


def zeros_state(weight: NDArray, dtype=None) -> NDArray:
    """A state array of zeros with the weight's shape, dtype and context."""
    return _new_like(weight, dtype)


def compute_dtype(dtype) -> numpy.dtype:
    """The dtype the rules compute in: float64 for float64 weights, else float32."""
    return numpy.dtype(numpy.float64) if dtype == numpy.float64 else numpy.dtype(numpy.float32)


def use_kernel(a) -> bool:
    """True for CuPy arrays (when fused kernels are on): run the fused kernel."""
    return _FUSED and not isinstance(a, numpy.ndarray)


def array_module(a):
    """numpy for NumPy arrays, cupy for CuPy arrays."""
    return numpy if isinstance(a, numpy.ndarray) else cuda.get_cupy()


def bound(value) -> float:
    """A clipping bound for the rules: ``value``, or -1 (no clipping) for None or <= 0."""
    return float(value) if value is not None and value > 0 else -1.0


@register
class Test(Optimizer):
    """MXNet's test optimizer: ``weight += rescale_grad * grad``, and the state (a
    float32 array) receives the new weight."""

    def create_state(self, index, weight):
        return zeros_state(weight, numpy.float32)

    @per_index
    def update(self, index, weight, grad, state):
        w, g = raw(self, weight, grad)
        xp = array_module(w)
        with weight.context.device_guard():
            w += xp.multiply(g, self.rescale_grad, dtype=compute_dtype(w.dtype)) \
                .astype(w.dtype, copy=False)
            state._data[...] = w
        weight._version += 1
        state._version += 1
