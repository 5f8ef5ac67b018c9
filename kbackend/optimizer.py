"""Keras backend ``optimizer``: Keras' built-in optimizers on core's fused update rules.

Keras' generic optimizers express one update of one variable as ~20 small tensor
ops (``ops.cast``, ``ops.power``, ``assign_add``, ...), each converted, dtype-checked
and dispatched on its own. For Keras' own :class:`keras.optimizers.SGD`, ``Adam``,
``AdamW``, ``RMSprop`` and ``Adagrad`` this module runs instead one of core's fused
in-place rules per variable (:mod:`core.optimizer.sgd`, ``adam``, ``adagrad``: one
CuPy kernel on GPU, one compiled numba kernel on CPU, ``core.optimizer._cpu``, or
a few in-place NumPy passes where it does not apply) on the variables' core
arrays, which stay the same objects (autograd marked them once).

How Keras gets here: ``keras.src.optimizers.optimizer`` picks the base class of
``keras.Optimizer`` with an ``if/elif`` chain on the backend; ``kbackend_hook``
adds a ``kbackend`` branch that takes :class:`KBackendOptimizer`. Its ``__new__``
swaps Keras' built-in classes for the fused subclasses below, as Keras' torch
backend does; a user's subclass of ``keras.optimizers.Adam`` (or any other class)
keeps Keras' generic code.

Keras' semantics are kept: everything around the update rule is still Keras'
``BaseOptimizer.apply``: learning-rate schedules and callables (read once per
step), loss-scale unscaling, ``clipnorm``/``clipvalue``/``global_clipnorm``, gradient
accumulation, EMA, constraints, ``overwrite_with_gradient`` and the iteration count.
Weight decay, EMA and the gradient accumulators are done in place too. Inside a
``StatelessScope`` (``stateless_apply``) or a ``SymbolicScope`` the fused classes fall
back to Keras' generic code, which records new values instead of writing in place;
so do the variants without a fused rule (Adam with ``amsgrad=True``; RMSprop with
momentum but not centered is done in place here in NumPy/CuPy).

The numbers are Keras' up to float rounding: the rules compute in float32
(float64 for float64 weights), Adam's step size ``lr * sqrt(1 - beta_2**t) /
(1 - beta_1**t)`` is computed in Python floats.
"""
from __future__ import annotations

import math

import numpy
from keras.src.backend.common.stateless_scope import in_stateless_scope
from keras.src.backend.common.symbolic_scope import in_symbolic_scope
from keras.src.optimizers.base_optimizer import BaseOptimizer

from core.ndarray import NDArray
from core.optimizer import _cpu
from core.optimizer.adagrad import adagrad_update, rmsprop_update, rmspropalex_update
from core.optimizer.adam import adam_update
from core.optimizer.optimizer import array_module, compute_dtype
from core.optimizer.sgd import nag_mom_update, sgd_mom_update, sgd_update

__all__ = ["KBackendOptimizer", "fused_classes"]

_NO_CLIP = -1.0  # core's rules: a negative bound means no clipping
# On the CPU a rule runs over flat chunks of this many elements: the ~10 NumPy passes
# of a rule then work in the L2 cache, and the temporaries stay small (no page faults).
CHUNK = 32768


class KBackendOptimizer(BaseOptimizer):
    """The base of ``keras.Optimizer`` on kbackend: picks the fused built-in classes."""

    def __new__(cls, *args, **kwargs):
        fused = fused_classes().get(cls)
        return super().__new__(fused if fused is not None else cls)


def fused_classes() -> dict:
    """``{Keras' built-in optimizer class: its fused kbackend subclass}``."""
    if not _FUSED:
        from keras.src import optimizers

        _FUSED.update({
            optimizers.SGD: _sgd_class(optimizers.SGD),
            optimizers.Adam: _adam_class(optimizers.Adam),
            optimizers.AdamW: _adam_class(optimizers.AdamW),
            optimizers.RMSprop: _rmsprop_class(optimizers.RMSprop),
            optimizers.Adagrad: _adagrad_class(optimizers.Adagrad),
        })
    return _FUSED


_FUSED: dict = {}


def _scalar(value) -> float:
    """A learning rate or step count (a Variable, a tensor or a number) as a float."""
    if hasattr(value, "value") and not isinstance(value, NDArray):  # a Keras Variable
        value = value.value
    if isinstance(value, NDArray):
        return float(value.asscalar())
    return float(value)


def _raw(array: NDArray):
    """The raw ``xp`` array of a core NDArray (what core's rules write in place)."""
    return array._data


class _FusedUpdates(BaseOptimizer):
    """What the fused subclasses share: in-place weight decay, EMA and accumulators,
    and the update loop over :meth:`_fused_step`."""

    # What a subclass sets: False where its configuration has no fused rule.
    def _has_fused_rule(self) -> bool:
        return True

    def _in_place(self) -> bool:
        """True when variables may be written in place (not stateless or symbolic)."""
        return not in_stateless_scope() and not in_symbolic_scope()

    def _weight(self, variable) -> NDArray:
        value = variable._value  # not ``.value``: an autocast scope would give a copy
        if not isinstance(value, NDArray):
            raise TypeError(f"{type(self).__name__}: variable {variable.path!r} holds a "
                            f"{type(value).__name__}, not a kbackend tensor")
        return value

    def _grad(self, grad, weight: NDArray, variable):
        if not isinstance(grad, NDArray):
            from kbackend.core import convert_to_tensor

            grad = convert_to_tensor(grad)
        if grad.shape != weight.shape:
            raise ValueError(
                f"{type(self).__name__}.apply: the gradient of {variable.path!r} has shape "
                f"{grad.shape}, but the variable has shape {weight.shape}")
        return _raw(grad)

    def _slot(self, slots, variable):
        """The raw array of ``variable``'s optimizer variable in ``slots``."""
        return _raw(self._weight(slots[self._get_variable_index(variable)]))

    def _backend_update_step(self, grads, trainable_variables, learning_rate):
        if not (self._has_fused_rule() and self._in_place()):
            return super()._backend_update_step(grads, trainable_variables, learning_rate)
        lr = _scalar(learning_rate)
        self._begin_step()
        for grad, variable in zip(grads, trainable_variables):
            weight = self._weight(variable)
            arrays = (_raw(weight), self._grad(grad, weight, variable),
                      *self._states(variable))
            with weight.context.device_guard():
                if _chunked(arrays):
                    flat = [a.reshape(-1) for a in arrays]
                    for i in range(0, flat[0].size, CHUNK):
                        part = [a[i:i + CHUNK] for a in flat]
                        self._fused_step(part[0], part[1], part[2:], lr)
                else:
                    if arrays[0].ndim == 0:  # the rules' ``out=`` temporaries need arrays
                        arrays = tuple(a.reshape(1) for a in arrays)
                    self._fused_step(arrays[0], arrays[1], arrays[2:], lr)
            weight._bump()
        return None

    def _begin_step(self) -> None:
        """Per-step scalars shared by all variables (Adam's bias correction)."""

    def _states(self, variable) -> tuple:
        """The raw arrays of ``variable``'s optimizer state, in :meth:`_fused_step`'s order."""
        return ()

    def _fused_step(self, w, g, states, lr: float) -> None:
        """Update the raw weight ``w`` and its ``states`` in place from the gradient ``g``."""
        raise NotImplementedError(f"{type(self).__name__}._fused_step")

    def _apply_weight_decay(self, variables):
        if self.weight_decay is None:
            return
        if not self._in_place():
            return super()._apply_weight_decay(variables)
        factor = 1.0 - self.weight_decay * _scalar(self.learning_rate)
        for variable in variables:
            if self._use_weight_decay(variable):
                weight = self._weight(variable)
                with weight.context.device_guard():
                    _raw(weight)[...] *= factor
                weight._bump()

    def _backend_reset_gradient_accumulators(self):
        if not self._in_place():
            return super()._backend_reset_gradient_accumulators()
        for acc in self._accumulated_gradients:
            if acc is not None:
                _raw(self._weight(acc)).fill(0)
                self._weight(acc)._bump()

    def _backend_increment_gradient_accumulators(self, grads, acc_grads):
        if not self._in_place():
            return super()._backend_increment_gradient_accumulators(grads, acc_grads)
        for grad, acc in zip(grads, acc_grads):
            a = self._weight(acc)
            with a.context.device_guard():
                _raw(a)[...] += self._grad(grad, a, acc)
            a._bump()

    def _update_model_variables_moving_average(self, trainable_variables):
        if not self.use_ema:
            return
        if not self._in_place():
            return super()._update_model_variables_moving_average(trainable_variables)
        momentum = self.ema_momentum if _scalar(self.iterations) != 0 else 0.0
        for variable, average in zip(trainable_variables,
                                     self._model_variables_moving_average):
            if average is None:
                continue
            avg, w = self._weight(average), self._weight(variable)
            with avg.context.device_guard():
                a = _raw(avg)
                a *= momentum
                a += (1.0 - momentum) * _raw(w)
            avg._bump()


def _chunked(arrays) -> bool:
    """Whether to run a rule chunk by chunk: large C-contiguous NumPy arrays that core's
    compiled kernels (one pass, parallel over chunks of their own) do not take."""
    w = arrays[0]
    return (w.size > CHUNK and all(isinstance(a, numpy.ndarray) and a.flags.c_contiguous
                                   for a in arrays)
            and not _cpu.takes(w, arrays[1], arrays[2:]))


def _subclass(base, name: str, methods: dict):
    from keras.src import api_export

    cls = type(name, (_FusedUpdates, base), {
        "__module__": __name__,
        "__doc__": f"Keras' {base.__name__} with core's fused update rules (kbackend).",
        **methods,
    })
    # Serialize as Keras' public class (``keras.optimizers.Adam``), so that a saved
    # model loads under any backend; only the class -> name map gets the entry.
    public = api_export.get_name_from_symbol(base)
    if public is not None:
        api_export.REGISTERED_OBJS_TO_NAMES[cls] = public
    return cls


def __getattr__(name: str):
    """``kbackend.optimizer.Adam`` etc.: the fused classes, made on first use."""
    for cls in fused_classes().values():
        if cls.__name__ == name:
            return cls
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def _sgd_class(base):
    def _states(self, variable):
        return (self._slot(self.momentums, variable),) if self.momentum != 0 else ()

    def _fused_step(self, w, g, states, lr):
        if not states:
            sgd_update(w, g, lr, 0.0, 1.0, _NO_CLIP)
            return
        rule = nag_mom_update if self.nesterov else sgd_mom_update
        rule(w, g, states[0], lr, 0.0, float(self.momentum), 1.0, _NO_CLIP)

    return _subclass(base, base.__name__, {"_states": _states, "_fused_step": _fused_step})


def _adam_class(base):
    def _has_fused_rule(self):
        return not self.amsgrad

    def _begin_step(self):
        t = _scalar(self.iterations) + 1.0
        b1, b2 = float(self.beta_1), float(self.beta_2)
        self._kb_alpha_factor = math.sqrt(1.0 - b2 ** t) / (1.0 - b1 ** t)

    def _states(self, variable):
        return (self._slot(self._momentums, variable),
                self._slot(self._velocities, variable))

    def _fused_step(self, w, g, states, lr):
        m, v = states
        adam_update(w, g, m, v, lr * self._kb_alpha_factor, 0.0, float(self.beta_1),
                    float(self.beta_2), float(self.epsilon), 1.0, _NO_CLIP)

    return _subclass(base, base.__name__, {
        "_has_fused_rule": _has_fused_rule, "_begin_step": _begin_step,
        "_states": _states, "_fused_step": _fused_step})


def _rmsprop_class(base):
    def _states(self, variable):
        states = [self._slot(self._velocities, variable)]
        if self.centered:
            states.append(self._slot(self._average_gradients, variable))
        if self.momentum > 0:
            states.append(self._slot(self._momentums, variable))
        return tuple(states)

    def _fused_step(self, w, g, states, lr):
        rho, eps, momentum = float(self.rho), float(self.epsilon), float(self.momentum)
        sq = states[0]
        if self.centered:
            gbar = states[1]
            if momentum > 0:
                # core keeps delta = -momentum (the step added to w); Keras keeps momentum
                mom = states[2]
                mom *= -1
                rmspropalex_update(w, g, sq, gbar, mom, lr, 0.0, rho, momentum, eps, 1.0,
                                   _NO_CLIP, _NO_CLIP)
                mom *= -1
            else:
                delta = array_module(w).zeros_like(w)
                rmspropalex_update(w, g, sq, gbar, delta, lr, 0.0, rho, 0.0, eps, 1.0,
                                   _NO_CLIP, _NO_CLIP)
        elif momentum > 0:
            # no core rule for this variant: Keras' formula, in place
            xp = array_module(w)
            ct = compute_dtype(w.dtype)
            gc = g.astype(ct, copy=True)
            sq *= rho
            sq += (1.0 - rho) * gc * gc
            den = xp.add(sq, ct.type(eps), dtype=ct)
            xp.sqrt(den, out=den)
            gc *= lr
            gc /= den
            mom = states[1]
            mom *= momentum
            mom += gc
            w -= mom
        else:
            rmsprop_update(w, g, sq, lr, 0.0, rho, eps, 1.0, _NO_CLIP, _NO_CLIP)

    return _subclass(base, base.__name__, {"_states": _states, "_fused_step": _fused_step})


def _adagrad_class(base):
    def _states(self, variable):
        return (self._slot(self._accumulators, variable),)

    def _fused_step(self, w, g, states, lr):
        adagrad_update(w, g, states[0], lr, 0.0, float(self.epsilon), 1.0, _NO_CLIP)

    return _subclass(base, base.__name__, {"_states": _states, "_fused_step": _fused_step})
