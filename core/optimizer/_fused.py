"""What the fused update rules share: their optimizers' base class and the kernel dispatch.

An update rule is a function over raw ``xp`` arrays that writes the weight and its state
in place, computing in float32 (float64 for float64 weights). Its fused CuPy kernel is
declared right above it, and ``@fused(KERNEL)`` runs that kernel instead of the ``xp``
code on CuPy arrays. :class:`FusedOptimizer` is the base of the optimizers built on such
rules: its ``update`` does the plumbing around the rule, and a subclass only says which
rule runs with which hyper-parameters (:meth:`FusedOptimizer._step`).

Example:
    >>> import numpy
    >>> from core.optimizer._fused import fused
    >>> _HALF_KERNEL = ("G g, T lr", "P w", "w = (P)((T)w - lr * (T)g);", "kb_half")
    >>> @fused(_HALF_KERNEL)
    ... def half_update(w, g, lr):
    ...     w -= lr * g
    >>> w = numpy.ones(2, numpy.float32)
    >>> half_update(w, numpy.ones(2, numpy.float32), 0.5)
    >>> w.tolist()
    [0.5, 0.5]
"""
from __future__ import annotations

import functools
import inspect

import numpy

from .. import cuda
from ..ndarray import NDArray
from . import _cpu, _sparse
from .optimizer import Optimizer, compute_dtype, raw, use_kernel

__all__ = ["CLIP_GRAD", "FusedOptimizer", "fused", "launch", "launch_spec", "scaled_grad"]

# A clip in CUDA that works for float and double (no overload questions).
CLIP_GRAD = "if (clip >= 0) { gr = gr > clip ? clip : (gr < -clip ? -clip : gr); }"


def scaled_grad(xp, g, rescale, clip, ct, w=None, wd=0.0, wd_first=True):
    """A new array: ``clip(rescale * g + wd * w)`` (``wd_first``) or
    ``clip(rescale * g) + wd * w``, in dtype ``ct``; ``clip < 0`` means no clipping.

    The kernels' twin is ``"T gr = rescale * (T)g[ + wd * (T)w]; " + CLIP_GRAD``.
    """
    t = xp.multiply(g, ct.type(rescale), dtype=ct)
    add_wd = bool(wd) and w is not None
    if add_wd and wd_first:
        t += xp.multiply(w, ct.type(wd), dtype=ct)
    if clip >= 0:
        xp.clip(t, -clip, clip, out=t)
    if add_wd and not wd_first:
        t += xp.multiply(w, ct.type(wd), dtype=ct)
    return t


_C_TYPES = {"float32": "float", "float64": "double"}


def launch_spec(spec: tuple, compute) -> tuple:
    """The kernel CuPy is given for compute dtype ``compute``: ``spec`` with its ``T``
    written out, and a preamble that defines ``T`` for the body.

    CuPy decides a type placeholder from array arguments only; ``T`` (the compute type)
    is the scalars' type in most kernels, so it must be concrete before launch.

    Args:
        spec: ``(in_params, out_params, body, name)``.
        compute: float32 or float64 (:func:`core.optimizer.optimizer.compute_dtype`).

    Returns:
        ``(in_params, out_params, body, name, preamble)``.

    Example:
        >>> spec = ("G g, T lr", "P w", "w = (P)((T)w - lr * (T)g);", "kb_half")
        >>> launch_spec(spec, "float32")[:2]
        ('G g, float32 lr', 'P w')
        >>> launch_spec(spec, "float64")[4].strip()
        'typedef double T;'
    """
    name = numpy.dtype(compute).name

    def concrete(params: str) -> str:
        return ", ".join(" ".join(name if tok == "T" else tok for tok in p.split())
                         for p in params.split(","))

    return (concrete(spec[0]), concrete(spec[1]), spec[2], spec[3],
            f"typedef {_C_TYPES[name]} T;\n")


def launch(spec: tuple, w, inputs: tuple, scalars: tuple, outputs: tuple) -> None:
    """Run the fused kernel ``spec`` = (in_params, out_params, body, name).

    ``T`` is the weight's compute dtype (:func:`launch_spec` writes it out, since CuPy
    binds placeholders from arrays only), and scalars are passed as NumPy scalars of it;
    ``G`` is the gradient's dtype and ``P`` the weight's.
    """
    ct = compute_dtype(w.dtype)
    cuda.elementwise(*launch_spec(spec, ct))(*inputs, *(ct.type(s) for s in scalars),
                                             *outputs)


def _param_names(params: str) -> list:
    return [p.split()[-1] for p in params.split(",")]


def fused(spec: tuple, cpu=None):
    """Run the fused kernel ``spec`` instead of the decorated ``xp`` rule on CuPy arrays,
    and the compiled CPU kernel ``cpu`` on the NumPy arrays it takes.

    The rule's arguments are the kernel's parameters in this order: the weight (its first
    output), the gradient (its first input), the state arrays it writes (its other
    outputs), then its scalars (its other inputs); checked when the rule is decorated, so
    that a rule and its kernel cannot drift apart on CPU-only machines.

    Args:
        spec: ``(in_params, out_params, body, name)``, as :func:`launch` takes.
        cpu: a ``core.optimizer._cpu.CpuRule`` taking the same arguments (the states as
            a tuple, the scalars as a tuple); the decorated rule is its NumPy twin, which
            runs where ``_cpu.takes`` says no (other dtypes or layouts, kernels off).

    Raises:
        TypeError: when the rule's parameters are not the kernel's, in that order.
    """
    ins, outs = _param_names(spec[0]), _param_names(spec[1])
    n_states = len(outs) - 1

    def decorate(rule):
        expected = [outs[0], ins[0], *outs[1:], *ins[1:]]
        got = list(inspect.signature(rule).parameters)
        if got != expected:
            raise TypeError(f"fused: {rule.__name__} takes {got}, but its kernel "
                            f"{spec[3]} needs {expected}")

        @functools.wraps(rule)
        def run(w, g, *args):
            if use_kernel(w):
                launch(spec, w, (g,), args[n_states:], (w, *args[:n_states]))
            elif cpu is not None and _cpu.takes(w, g, args[:n_states]):
                cpu(w, g, args[:n_states], args[n_states:])
            else:
                rule(w, g, *args)

        return run

    return decorate


def _raw_state(state):
    """The raw arrays of a state: None, an array, or a tuple (of arrays or None)."""
    if isinstance(state, NDArray):
        return state._data
    if isinstance(state, tuple):
        return tuple(_raw_state(s) for s in state)
    return state


class FusedOptimizer(Optimizer):
    """The base of the optimizers whose update is one rule over the raw arrays.

    ``update`` counts the update of ``index``, takes the weight's learning rate and
    weight decay (multipliers applied), checks the gradient against the weight and runs
    :meth:`_step` under the weight's device; then the weight's ``_version`` goes up, so
    that autograd sees the change.

    Lists of indices, weights, gradients and states make one multi-tensor update (what
    the Updater, and so ``gluon.Trainer``, passes for all the parameters of a step): the
    counts, learning rates and weight decays of all of them are taken first, as MXNet's
    aggregated updates do, then each weight's rule runs (a compiled kernel per tensor
    on the CPU, ``core.optimizer._cpu``).

    A sparse weight or gradient goes through ``core.optimizer._sparse``: lazily, on a
    ``row_sparse`` gradient's rows only, where ``_sparse_lazy`` is true (MXNet's lazy
    kernels), else densely (MXNet's storage fallback).
    """

    # False for rules without a learning rate: the scheduler is not consulted (MXNet).
    _uses_lr = True
    # True where MXNet's kernel updates only a row_sparse gradient's rows.
    _sparse_lazy = False

    def _takes_lists(self) -> bool:
        """Whole steps go to ``update`` as lists, unless a subclass overrides it (or
        ``update_multi_precision``) with a one-weight version."""
        cls = type(self)
        return cls.update is FusedOptimizer.update \
            and cls.update_multi_precision is Optimizer.update_multi_precision

    def update(self, index, weight, grad, state):
        if not isinstance(index, (list, tuple)):
            index, weight, grad, state = [index], [weight], [grad], [state]
        self._update_count(index)
        n = len(index)
        if not self._uses_lr:
            lrs = [None] * n
        elif type(self)._get_lrs is Optimizer._get_lrs:
            lrs = self._get_lrs(index)
        else:  # an override (LARS) keeps its per-weight calls
            lrs = [self._get_lr(i) for i in index]
        wds = self._get_wds(index)
        for idx, wt, gr, st, lr, wd in zip(index, weight, grad, state, lrs, wds):
            if _sparse.is_sparse(wt) or _sparse.is_sparse(gr):
                _sparse.sparse_step(self, idx, wt, gr, _raw_state(st), lr, wd)
                continue
            w, g = raw(self, wt, gr)
            with wt.context.device_guard():
                self._step(idx, wt.context, w, g, _raw_state(st), lr, wd)
            wt._version += 1

    def _step(self, index, ctx, w, g, state, lr, wd) -> None:
        """Update the raw weight ``w`` and ``state`` in place.

        Args:
            index: the weight's index (its update count is
                ``self._index_update_count[index]``).
            ctx: the weight's context.
            w: the raw weight.
            g: the raw gradient (same shape and device).
            state: what :meth:`create_state` returned, with raw arrays for NDArrays.
            lr: the weight's learning rate (None when ``_uses_lr`` is False).
            wd: the weight's weight decay.
        """
        raise NotImplementedError(f"{type(self).__name__}._step is not implemented")
