"""MXNet 1.x's optimizer update operators (``nd.sgd_update``, ``nd.adam_update``, ...).

MXNet's Module, its ``mx.optimizer`` classes and users' own training loops call these
with MXNet's signatures: the arrays first (``weight, grad`` and the states), then the
hyper-parameters (``lr``, ``wd``, ``rescale_grad``, ``clip_gradient``, ...; ``lr`` is
required), and ``out=weight`` to update the weight in place. The states (momentum,
moving averages, the float32 master weight of the ``mp_`` operators) are updated in
place, as MXNet's mutable inputs are, whether ``out=`` is given or not::

    nd.sgd_mom_update(weight, grad, mom, out=weight, lr=0.1, momentum=0.9, wd=1e-4)

Each is one registry operator whose forward is pure: it returns the new weight and the
new states (so a graph could carry them as updates, ``defop``'s ``updates=``); the
public function in ``core.nd`` writes the new states into the state arrays and the
new weight into ``out=``. The formulas are MXNet 1.9.1's kernels
(``src/operator/optimizer_op-inl.h``; ``clip_gradient < 0`` turns clipping off, 0 clips
to 0), computed in float32 (float64 for float64 weights) by the update rules of
``core.optimizer`` where they are the same rules (SGD, momentum SGD, Adam, RMSProp,
centered RMSProp, FTRL, FTML, signSGD, Signum), and here where MXNet 1.9 differs from
them (``nag_mom_update`` reads the weight as 1.9 did, ``adamw_update`` scales by ``lr``
and ``eta``, the LAMB phases).

Sparse arrays, as MXNet: with a ``row_sparse`` gradient, ``sgd_update``,
``sgd_mom_update``, ``mp_sgd_update``, ``mp_sgd_mom_update`` and ``adam_update`` with
``lazy_update=True`` (the default) and ``ftrl_update`` update only the gradient's rows
of the weight and of the states (the operator runs on those rows; the other rows, of
``out=`` too, keep their values). Otherwise a sparse input is read densely (storage
fallback) and every row is updated; a sparse ``out=`` or state keeps its storage type.

The multi-tensor forms (``multi_sgd_update``, ``multi_mp_sgd_mom_update``,
``preloaded_multi_sgd_update``, ...) take MXNet's flat lists of arrays and run the
one-tensor operator per weight.
"""
from __future__ import annotations

import math

import numpy

from .. import tape as _tape
from ..dtypes import is_float
from ..ndarray import NDArray
from .dispatch import invoke
from .infer import fmt
from .namespace import write_out
from .registry import Aval, defop

_CLIP = {"wd": 0.0, "rescale_grad": 1.0, "clip_gradient": -1.0}
PUBLIC: dict = {}  # name -> public function (core.nd), filled by _update_op


def _ct(dtype) -> numpy.dtype:
    """The dtype the rules compute in: float64 for float64 weights, else float32."""
    return numpy.dtype(numpy.float64) if dtype == numpy.float64 else numpy.dtype(numpy.float32)


def _rules(name):
    """``core.optimizer``'s update rule ``name`` (imported on first use: core.optimizer
    imports core.ndarray, which this package's import is part of)."""
    from ..optimizer import adagrad, adam, ftrl, sgd

    for mod in (sgd, adam, adagrad, ftrl):
        if hasattr(mod, name):
            return getattr(mod, name)
    raise AttributeError(name)


def _grad32(xp, g, rescale, clip, ct):
    """``clip(rescale * g)`` in ``ct`` (MXNet: ``clip_gradient >= 0`` clips)."""
    t = xp.multiply(g, ct.type(rescale), dtype=ct)
    if clip >= 0:
        xp.clip(t, -clip, clip, out=t)
    return t


def _work(xp, a, ct):
    """A fresh C-contiguous copy of ``a`` in ``ct`` for a rule to update in place."""
    return xp.array(a, dtype=ct, order="C", copy=True)


# ------------------------------------------------------------------ declaring the ops
def _update_op(name, inputs, states, attrs, rule, *, result_dtype=None, same=None,
               nd_names=None, doc=""):
    """Register update operator ``name`` and its public ``core.nd`` function.

    Args:
        name: MXNet's operator name.
        inputs: the array inputs, in MXNet's order.
        states: the positions of the inputs updated in place (outputs 1, 2, ...).
        attrs: the hyper-parameters and their defaults (None: required).
        rule: ``rule(xp, *arrays, **attrs) -> (result, *new states)``, pure.
        result_dtype: ``f(avals) -> dtype`` of the result (default: the weight's).
        same: the input positions that must have the weight's shape (default: all).
        nd_names: the public names (default: ``(name,)``).
        doc: the public function's docstring.
    """
    same = tuple(range(len(inputs))) if same is None else same
    required = [k for k, v in attrs.items() if v is None]

    def infer(*avals, **at):
        for k in required:
            if at.get(k) is None:
                raise TypeError(f"{name}: the hyper-parameter {k!r} is required")
        for a in avals:
            if not is_float(a.dtype):
                raise TypeError(f"{name}: expects floating-point arrays ({', '.join(inputs)}), "
                                f"got {fmt(list(avals))}")
        w = avals[0]
        for i in same:
            if avals[i].shape != w.shape:
                raise ValueError(f"{name}: {inputs[i]} must have the weight's shape {w.shape}, "
                                 f"got {fmt(list(avals))} ({', '.join(inputs)})")
        dt = result_dtype(avals) if result_dtype is not None else w.dtype
        return (Aval(w.shape, dt),) + tuple(Aval(avals[p].shape, avals[p].dtype)
                                            for p in states)

    def forward(xp, *arrays, **at):
        for k in required:
            if at.get(k) is None:
                raise TypeError("required")  # infer explains
        w = arrays[0]
        if any(arrays[i].shape != w.shape for i in same):
            raise ValueError("shape")  # infer explains
        out = rule(xp, *arrays, **at)
        dts = [result_dtype([a for a in arrays]) if result_dtype is not None else w.dtype]
        dts += [arrays[p].dtype for p in states]
        return tuple(o.astype(d, copy=False) for o, d in zip(out, dts))

    forward.__name__ = name
    forward.__doc__ = doc
    op = defop(name, infer=infer, inputs=inputs, attrs=attrs, differentiable=False,
               save=False, updates={p: k + 1 for k, p in enumerate(states)},
               visible_outputs=1, doc=doc.split("\n")[0])(forward)
    for public in nd_names or (name,):
        PUBLIC[public] = _public(op, states, public, doc, same)
    return op


# MXNet's operators that update only a row_sparse gradient's rows (with lazy_update=True
# where they take it).
_LAZY = {"sgd_update", "sgd_mom_update", "mp_sgd_update", "mp_sgd_mom_update", "adam_update",
         "ftrl_update"}


def _is_lazy(op, arrays, attrs) -> bool:
    """Whether this call updates only the rows of its row_sparse gradient."""
    return op.name in _LAZY and getattr(arrays[1], "stype", "default") == "row_sparse" \
        and bool(attrs.get("lazy_update", True))


def _dense(a: NDArray) -> NDArray:
    return a.tostype("default") if a.stype != "default" else a


def _scatter_rows(target: NDArray, rows: NDArray, value: NDArray) -> None:
    """``target[rows] = value``, keeping a sparse target's storage type."""
    if target.stype == "default":
        target[rows] = value.astype(target.dtype, copy=False)
        return
    full = target.tostype("default")
    full[rows] = value.astype(target.dtype, copy=False)
    target[:] = full


def _lazy_call(op, states, public, same, arrays, attrs, out):
    """Run ``op`` on the rows of the row_sparse gradient ``arrays[1]`` only: the
    weight-shaped inputs are gathered, the results scattered back (MXNet's lazy update)."""
    from .. import nd

    grad = arrays[1]
    rows = grad.indices
    sub = [grad.data if i == 1 else
           nd.take(_dense(a), rows, axis=0) if i in same and isinstance(a, NDArray) else a
           for i, a in enumerate(arrays)]
    res = invoke(op, sub, attrs)
    for p, new in zip(states, res[1:]):
        _scatter_rows(arrays[p], rows, new)
    weight = arrays[0]
    if out is None:
        target = _dense(weight).copy()
    else:
        if out is not weight:
            write_out(public, out, _dense(weight).astype(out.dtype, copy=False))
        target = out
    _scatter_rows(target, rows, res[0])
    return target


def _public(op, states, public, doc, same):
    n_in = len(op.inputs)

    def f(*args, out=None, name=None, **kwargs):
        if len(args) > n_in:
            raise TypeError(f"{public}: takes {n_in} arrays ({', '.join(op.inputs)}) and "
                            f"keyword hyper-parameters, got {len(args)} positional arguments")
        arrays = list(args) + [kwargs.pop(k, None) for k in op.inputs[len(args):]]
        missing = [k for k, a in zip(op.inputs, arrays) if a is None]
        if missing:
            raise TypeError(f"{public}: missing array argument(s) {missing}")
        unknown = sorted(set(kwargs) - set(op.attrs))
        if unknown:
            raise TypeError(f"{public}: unexpected argument(s) {unknown}; it takes "
                            f"{sorted(op.attrs)}")
        if any(type(a).__name__ == "Symbol" for a in arrays):
            # core.sym records the call as one node; the states become graph updates
            # (auxiliary states, as MXNet's mutable inputs), the weight its output
            res = invoke(op, arrays, dict(op.attrs, **kwargs))
            return res[0] if isinstance(res, tuple) else res
        for p in states:
            if not isinstance(arrays[p], NDArray):
                raise TypeError(f"{public}: {op.inputs[p]} must be an NDArray (it is updated "
                                f"in place), got {type(arrays[p]).__name__}")
        if "_out_is_weight" in op.attrs:
            kwargs["_out_is_weight"] = out is not None and out is arrays[0]
        attrs = dict(op.attrs, **kwargs)
        with _tape.pause():
            if _is_lazy(op, arrays, attrs):
                return _lazy_call(op, states, public, same, arrays, attrs, out)
            res = invoke(op, arrays, attrs)
            for p, new in zip(states, res[1:]):
                arrays[p][...] = new
            if out is None:
                return res[0]
            return write_out(public, out, res[0])

    f.__name__ = public.rsplit(".", 1)[-1]
    f.__qualname__ = f.__name__
    sig = ", ".join(list(op.inputs) + [f"{k}={v!r}" for k, v in op.attrs.items()])
    f.__doc__ = f"{f.__name__}({sig}, out=None)\n\n{doc}\n\nOperator ``{op.name}``."
    f.op = op
    return f


def _mp_dtype(avals):
    return avals[0].dtype


# ------------------------------------------------------------------ SGD and momentum
def _sgd(xp, weight, grad, lr=None, wd=0.0, rescale_grad=1.0, clip_gradient=-1.0,
         lazy_update=True):
    w = _work(xp, weight, _ct(weight.dtype))
    _rules("sgd_update")(w, grad, lr, wd, rescale_grad, clip_gradient)
    return (w,)


def _sgd_mom(xp, weight, grad, mom, lr=None, momentum=0.0, wd=0.0, rescale_grad=1.0,
             clip_gradient=-1.0, lazy_update=True):
    ct = _ct(weight.dtype)
    w, m = _work(xp, weight, ct), _work(xp, mom, ct)
    _rules("sgd_mom_update")(w, grad, m, lr, wd, momentum, rescale_grad, clip_gradient)
    return w, m


def _mp_sgd(xp, weight, grad, weight32, lr=None, wd=0.0, rescale_grad=1.0,
            clip_gradient=-1.0, lazy_update=True):
    w32 = _work(xp, weight32, numpy.dtype(numpy.float32))
    _rules("sgd_update")(w32, grad, lr, wd, rescale_grad, clip_gradient)
    return w32, w32


def _mp_sgd_mom(xp, weight, grad, mom, weight32, lr=None, momentum=0.0, wd=0.0,
                rescale_grad=1.0, clip_gradient=-1.0, lazy_update=True):
    f32 = numpy.dtype(numpy.float32)
    w32, m = _work(xp, weight32, f32), _work(xp, mom, f32)
    _rules("sgd_mom_update")(w32, grad, m, lr, wd, momentum, rescale_grad, clip_gradient)
    return w32, m, w32


def _nag_rule(xp, w, grad, mom, lr, momentum, wd, rescale_grad, clip_gradient, ct,
              new_weight_decay):
    """MXNet 1.9's NAG kernels: ``m = momentum * mom; d = clip(rescale * g) + wd * w;
    w' = w - m + (momentum + 1) * (m - lr * d); mom' = m - lr * (clip(rescale * g) +
    wd * w)``, where the last ``w`` is the new weight when ``new_weight_decay`` (1.9's
    ``nag_mom_update`` with ``out=weight`` read the weight it had just written, and
    ``mp_nag_mom_update`` always does)."""
    w = xp.asarray(w, dtype=ct)
    m = xp.multiply(mom, ct.type(momentum), dtype=ct)
    gr = _grad32(xp, grad, rescale_grad, clip_gradient, ct)
    step = m - ct.type(lr) * (gr + ct.type(wd) * w)
    new_w = w - m + ct.type(momentum + 1) * step
    if new_weight_decay and wd:
        step = m - ct.type(lr) * (gr + ct.type(wd) * new_w)
    return new_w, step


def _nag_mom(xp, weight, grad, mom, lr=None, momentum=0.0, wd=0.0, rescale_grad=1.0,
             clip_gradient=-1.0, _out_is_weight=False):
    return _nag_rule(xp, weight, grad, mom, lr, momentum, wd, rescale_grad, clip_gradient,
                     _ct(weight.dtype), _out_is_weight)


def _mp_nag_mom(xp, weight, grad, mom, weight32, lr=None, momentum=0.0, wd=0.0,
                rescale_grad=1.0, clip_gradient=-1.0):
    w32, m = _nag_rule(xp, weight32, grad, mom, lr, momentum, wd, rescale_grad, clip_gradient,
                       numpy.dtype(numpy.float32), True)
    return w32, m, w32


_SGD_ATTRS = {"lr": None, **_CLIP, "lazy_update": True}
_MOM_ATTRS = {"lr": None, "momentum": 0.0, **_CLIP, "lazy_update": True}
_NAG_ATTRS = {"lr": None, "momentum": 0.0, **_CLIP}

_update_op("sgd_update", ("weight", "grad"), (), _SGD_ATTRS, _sgd,
           doc="SGD: ``weight = (1 - lr * wd) * weight - lr * clip(rescale_grad * grad)``.")
_update_op("sgd_mom_update", ("weight", "grad", "mom"), (2,), _MOM_ATTRS, _sgd_mom,
           doc="Momentum SGD: ``mom = momentum * mom - lr * wd * weight - lr * "
               "clip(rescale_grad * grad); weight += mom``.")
_update_op("mp_sgd_update", ("weight", "grad", "weight32"), (2,), _SGD_ATTRS, _mp_sgd,
           doc="SGD on the float32 master ``weight32``; the result is it cast to the weight's "
               "dtype.")
_update_op("mp_sgd_mom_update", ("weight", "grad", "mom", "weight32"), (2, 3), _MOM_ATTRS,
           _mp_sgd_mom,
           doc="Momentum SGD on the float32 master ``weight32`` (float32 ``mom``); the result "
               "is it cast to the weight's dtype.")
_update_op("nag_mom_update", ("weight", "grad", "mom"), (2,),
           dict(_NAG_ATTRS, _out_is_weight=False), _nag_mom,
           doc="Nesterov momentum (MXNet 1.9's kernel): ``m = momentum * mom; "
               "d = clip(rescale_grad * grad) + wd * weight; weight += (momentum + 1) * "
               "(m - lr * d) - m; mom = m - lr * d`` (with ``out=weight``, ``d``'s ``wd`` term "
               "of ``mom`` reads the new weight, as 1.9 did).")
_update_op("mp_nag_mom_update", ("weight", "grad", "mom", "weight32"), (2, 3), _NAG_ATTRS,
           _mp_nag_mom, doc="Nesterov momentum on the float32 master ``weight32``.")


# ------------------------------------------------------------------ sign methods
def _signsgd(xp, weight, grad, lr=None, wd=0.0, rescale_grad=1.0, clip_gradient=-1.0):
    w = _work(xp, weight, _ct(weight.dtype))
    _rules("signsgd_update")(w, grad, lr, wd)
    return (w,)


def _signum(xp, weight, grad, mom, lr=None, momentum=0.0, wd=0.0, rescale_grad=1.0,
            clip_gradient=-1.0, wd_lh=0.0):
    ct = _ct(weight.dtype)
    w, m = _work(xp, weight, ct), _work(xp, mom, ct)
    _rules("signum_update")(w, grad, m, lr, wd, momentum, rescale_grad, clip_gradient, wd_lh)
    return w, m


_update_op("signsgd_update", ("weight", "grad"), (), {"lr": None, **_CLIP}, _signsgd,
           doc="signSGD: ``weight = (1 - lr * wd) * weight - lr * sign(grad)`` (no rescaling "
               "or clipping, as MXNet's kernel).")
_update_op("signum_update", ("weight", "grad", "mom"), (2,),
           {"lr": None, "momentum": 0.0, **_CLIP, "wd_lh": 0.0}, _signum,
           doc="Signum: ``mom = momentum * mom - (1 - momentum) * (wd * weight + "
               "clip(rescale_grad * grad)); weight = (1 - lr * wd_lh) * weight + lr * "
               "sign(mom)``.")


# ------------------------------------------------------------------ Adam family
def _adam(xp, weight, grad, mean, var, lr=None, beta1=0.9, beta2=0.999, epsilon=1e-8, wd=0.0,
          rescale_grad=1.0, clip_gradient=-1.0, lazy_update=True):
    ct = _ct(weight.dtype)
    w, m, v = _work(xp, weight, ct), _work(xp, mean, ct), _work(xp, var, ct)
    _rules("adam_update")(w, grad, m, v, lr, wd, beta1, beta2, epsilon, rescale_grad,
                          clip_gradient)
    return w, m, v


def _adamw_rule(xp, w, grad, mean, var, scale, lr, eta, beta1, beta2, epsilon, wd,
                clip_gradient, ct):
    """MXNet 1.9's AdamW (contrib): ``g = clip(rescale_grad * grad)``; moments of ``g``;
    ``w -= eta * (lr * mean / (sqrt(var) + epsilon) + wd * w)``; skipped (nothing
    changes) when ``rescale_grad`` is 0 or not finite."""
    s = float(numpy.asarray(scale).reshape(-1)[0]) if numpy.size(scale) else 0.0
    w = _work(xp, w, ct)
    if not math.isfinite(s) or s == 0:
        return w, _work(xp, mean, ct), _work(xp, var, ct), _work(xp, grad, ct)
    g = _grad32(xp, grad, s, clip_gradient, ct)
    m = ct.type(beta1) * xp.asarray(mean, dtype=ct) + ct.type(1 - beta1) * g
    v = ct.type(beta2) * xp.asarray(var, dtype=ct) + ct.type(1 - beta2) * g * g
    new_w = w - ct.type(eta) * (ct.type(lr) * m / (xp.sqrt(v) + ct.type(epsilon))
                                + ct.type(wd) * w)
    return new_w, m, v, g


def _adamw(xp, weight, grad, mean, var, rescale_grad, lr=None, eta=None, beta1=0.9,
           beta2=0.999, epsilon=1e-8, wd=0.0, clip_gradient=-1.0):
    new_w, m, v, g = _adamw_rule(xp, weight, grad, mean, var, xp.asnumpy(rescale_grad)
                                 if hasattr(xp, "asnumpy") else rescale_grad, lr, eta, beta1,
                                 beta2, epsilon, wd, clip_gradient, _ct(weight.dtype))
    return new_w, g, m, v  # 1.9's AdamW overwrote grad with clip(rescale_grad * grad)


def _mp_adamw(xp, weight, grad, mean, var, weight32, rescale_grad, lr=None, eta=None,
              beta1=0.9, beta2=0.999, epsilon=1e-8, wd=0.0, clip_gradient=-1.0):
    w32, m, v, _ = _adamw_rule(xp, weight32, grad, mean, var, xp.asnumpy(rescale_grad)
                               if hasattr(xp, "asnumpy") else rescale_grad, lr, eta, beta1,
                               beta2, epsilon, wd, clip_gradient, numpy.dtype(numpy.float32))
    return w32, m, v, w32


_ADAMW_ATTRS = {"lr": None, "eta": None, "beta1": 0.9, "beta2": 0.999, "epsilon": 1e-8,
                "wd": 0.0, "clip_gradient": -1.0}

_update_op("adam_update", ("weight", "grad", "mean", "var"), (2, 3),
           {"lr": None, "beta1": 0.9, "beta2": 0.999, "epsilon": 1e-8, **_CLIP,
            "lazy_update": True}, _adam,
           doc="Adam: ``g = clip(rescale_grad * grad + wd * weight)``; ``mean``, ``var`` its "
               "moments; ``weight -= lr * mean / (sqrt(var) + epsilon)`` (no bias correction: "
               "the caller folds it into ``lr``).")
_update_op("_adamw_update", ("weight", "grad", "mean", "var", "rescale_grad"), (1, 2, 3),
           _ADAMW_ATTRS, _adamw, same=(0, 1, 2, 3),
           nd_names=("_adamw_update", "contrib.adamw_update"),
           doc="AdamW (MXNet's contrib ``adamw_update``; ``rescale_grad`` an NDArray): "
               "``weight -= eta * (lr * mean / (sqrt(var) + epsilon) + wd * weight)``; as in 1.9, "
               "``grad`` is overwritten with ``clip(rescale_grad * grad)``; no update where "
               "``rescale_grad`` is 0 or not finite.")
_update_op("_mp_adamw_update", ("weight", "grad", "mean", "var", "weight32", "rescale_grad"),
           (2, 3, 4), _ADAMW_ATTRS, _mp_adamw, same=(0, 1, 2, 3, 4),
           nd_names=("_mp_adamw_update", "contrib.mp_adamw_update"),
           doc="AdamW on the float32 master ``weight32``.")


# ------------------------------------------------------------------ RMSProp, FTRL, FTML
def _rmsprop(xp, weight, grad, n, lr=None, gamma1=0.95, epsilon=1e-8, wd=0.0, rescale_grad=1.0,
             clip_gradient=-1.0, clip_weights=-1.0):
    ct = _ct(weight.dtype)
    w, sq = _work(xp, weight, ct), _work(xp, n, ct)
    _rules("rmsprop_update")(w, grad, sq, lr, wd, gamma1, epsilon, rescale_grad, clip_gradient,
                             clip_weights)
    return w, sq


def _rmspropalex(xp, weight, grad, n, g, delta, lr=None, gamma1=0.95, gamma2=0.9,
                 epsilon=1e-8, wd=0.0, rescale_grad=1.0, clip_gradient=-1.0, clip_weights=-1.0):
    ct = _ct(weight.dtype)
    w, sq, gbar, dl = (_work(xp, a, ct) for a in (weight, n, g, delta))
    _rules("rmspropalex_update")(w, grad, sq, gbar, dl, lr, wd, gamma1, gamma2, epsilon,
                                 rescale_grad, clip_gradient, clip_weights)
    return w, sq, gbar, dl


def _ftrl(xp, weight, grad, z, n, lr=None, lamda1=0.01, beta=1.0, wd=0.0, rescale_grad=1.0,
          clip_gradient=-1.0):
    ct = _ct(weight.dtype)
    w, zz, nn = (_work(xp, a, ct) for a in (weight, z, n))
    _rules("ftrl_update")(w, grad, zz, nn, lr, wd, lamda1, beta, rescale_grad, clip_gradient)
    return w, zz, nn


def _ftml(xp, weight, grad, d, v, z, lr=None, beta1=0.6, beta2=0.999, epsilon=1e-8, t=None,
          wd=0.0, rescale_grad=1.0, clip_grad=-1.0):
    ct = _ct(weight.dtype)
    w, dd, vv, zz = (_work(xp, a, ct) for a in (weight, d, v, z))
    c1 = (1 - beta1 ** t) / lr
    c2 = 1 / (1 - beta2 ** t)
    _rules("ftml_update")(w, grad, dd, vv, zz, wd, beta1, beta2, epsilon, c1, c2, rescale_grad,
                          clip_grad)
    return w, dd, vv, zz


_RMS_ATTRS = {"lr": None, "gamma1": 0.95, "epsilon": 1e-8, **_CLIP, "clip_weights": -1.0}
_update_op("rmsprop_update", ("weight", "grad", "n"), (2,), _RMS_ATTRS, _rmsprop,
           doc="RMSProp: ``g = clip(rescale_grad * grad + wd * weight); n = (1 - gamma1) * g * g "
               "+ gamma1 * n; weight = clip_w(weight - lr * g / sqrt(n + epsilon))``.")
_update_op("rmspropalex_update", ("weight", "grad", "n", "g", "delta"), (2, 3, 4),
           {"lr": None, "gamma1": 0.95, "gamma2": 0.9, "epsilon": 1e-8, **_CLIP,
            "clip_weights": -1.0}, _rmspropalex,
           doc="Centered RMSProp (Graves): ``n``, ``g`` the moving moments of ``clip(rescale_"
               "grad * grad + wd * weight)``; ``delta = gamma2 * delta - lr * g / sqrt(n - g * "
               "g + epsilon); weight = clip_w(weight + delta)``.")
_update_op("ftrl_update", ("weight", "grad", "z", "n"), (2, 3),
           {"lr": None, "lamda1": 0.01, "beta": 1.0, **_CLIP}, _ftrl,
           doc="FTRL-proximal: ``z += g - (sqrt(n + g * g) - sqrt(n)) * weight / lr; n += g * g; "
               "weight = (sign(z) * lamda1 - z) / ((beta + sqrt(n)) / lr + wd) * (|z| > "
               "lamda1)``.")
_update_op("ftml_update", ("weight", "grad", "d", "v", "z"), (2, 3, 4),
           {"lr": None, "beta1": 0.6, "beta2": 0.999, "epsilon": 1e-8, "t": None, "wd": 0.0,
            "rescale_grad": 1.0, "clip_grad": -1.0}, _ftml,
           doc="FTML (Zheng and Kwok, 2017) at step ``t``: ``g = clip(rescale_grad * grad + wd * "
               "weight)``; ``v``, ``d``, ``z`` as MXNet's kernel; ``weight = -z / d``.")


# ------------------------------------------------------------------ LAMB
def _lamb1_rule(xp, w, grad, mean, var, beta1, beta2, epsilon, t, bias_correction, wd,
                rescale_grad, clip_gradient, ct):
    g = _grad32(xp, grad, rescale_grad, clip_gradient, ct)
    m = ct.type(beta1) * xp.asarray(mean, dtype=ct) + ct.type(1 - beta1) * g
    v = ct.type(beta2) * xp.asarray(var, dtype=ct) + ct.type(1 - beta2) * g * g
    mh, vh = m, v
    if bias_correction:
        mh = m / ct.type(1 - beta1 ** t)
        vh = v / ct.type(1 - beta2 ** t)
    upd = mh / (xp.sqrt(vh) + ct.type(epsilon)) + ct.type(wd) * xp.asarray(w, dtype=ct)
    return upd, m, v


def _lamb1(xp, weight, grad, mean, var, beta1=0.9, beta2=0.999, epsilon=1e-6, t=None,
           bias_correction=True, wd=None, rescale_grad=1.0, clip_gradient=-1.0):
    return _lamb1_rule(xp, weight, grad, mean, var, beta1, beta2, epsilon, t, bias_correction,
                       wd, rescale_grad, clip_gradient, _ct(weight.dtype))


def _mp_lamb1(xp, weight, grad, mean, var, weight32, beta1=0.9, beta2=0.999, epsilon=1e-6,
              t=None, bias_correction=True, wd=None, rescale_grad=1.0, clip_gradient=-1.0):
    return _lamb1_rule(xp, weight32, grad, mean, var, beta1, beta2, epsilon, t,
                       bias_correction, wd, rescale_grad, clip_gradient,
                       numpy.dtype(numpy.float32))


def _lamb_ratio(xp, r1, r2, lower_bound, upper_bound):
    a = float(xp.asarray(r1).reshape(-1)[0])
    b = float(xp.asarray(r2).reshape(-1)[0])
    if lower_bound >= 0:
        a = max(a, lower_bound)
    if upper_bound >= 0:
        a = min(a, upper_bound)
    return 1.0 if a == 0.0 or b == 0.0 else a / b


def _lamb2(xp, weight, g, r1, r2, lr=None, lower_bound=-1.0, upper_bound=-1.0):
    ct = _ct(weight.dtype)
    step = ct.type(lr * _lamb_ratio(xp, r1, r2, lower_bound, upper_bound))
    return (xp.asarray(weight, dtype=ct) - step * xp.asarray(g, dtype=ct),)


def _mp_lamb2(xp, weight, g, r1, r2, weight32, lr=None, lower_bound=-1.0, upper_bound=-1.0):
    f32 = numpy.dtype(numpy.float32)
    step = f32.type(lr * _lamb_ratio(xp, r1, r2, lower_bound, upper_bound))
    return (xp.asarray(weight32, dtype=f32) - step * xp.asarray(g, dtype=f32),)


_LAMB1_ATTRS = {"beta1": 0.9, "beta2": 0.999, "epsilon": 1e-6, "t": None,
                "bias_correction": True, "wd": None, "rescale_grad": 1.0, "clip_gradient": -1.0}
_LAMB2_ATTRS = {"lr": None, "lower_bound": -1.0, "upper_bound": -1.0}


_update_op("lamb_update_phase1", ("weight", "grad", "mean", "var"), (2, 3), _LAMB1_ATTRS,
           _lamb1,
           doc="LAMB's first phase: the update direction ``g = mean_hat / (sqrt(var_hat) + "
               "epsilon) + wd * weight`` (``mean``, ``var`` updated; bias-corrected at step "
               "``t`` with ``bias_correction``).")
_update_op("mp_lamb_update_phase1", ("weight", "grad", "mean", "var", "weight32"), (2, 3),
           _LAMB1_ATTRS, _mp_lamb1, result_dtype=lambda avals: numpy.dtype(numpy.float32),
           doc="LAMB's first phase on the float32 master ``weight32`` (a float32 result).")
_update_op("lamb_update_phase2", ("weight", "g", "r1", "r2"), (), _LAMB2_ATTRS, _lamb2,
           same=(0, 1),
           doc="LAMB's second phase: ``weight - lr * r1 / r2 * g`` (``r1`` clipped to "
               "``[lower_bound, upper_bound]`` where they are >= 0; ratio 1 where either is 0).")
_update_op("mp_lamb_update_phase2", ("weight", "g", "r1", "r2", "weight32"), (), _LAMB2_ATTRS,
           _mp_lamb2, same=(0, 1, 4),
           doc="LAMB's second phase from the float32 master ``weight32``, cast to the "
               "weight's dtype.")


# ------------------------------------------------------------------ multi-tensor forms
def _groups(name, data, per, num_weights, extra=0):
    data = list(data[0]) if len(data) == 1 and isinstance(data[0], (list, tuple)) else list(data)
    body = data[:len(data) - extra] if extra else data
    if num_weights is None:
        num_weights = len(body) // per
    if len(body) != per * num_weights:
        raise ValueError(f"{name}: expects {per} arrays per weight for num_weights="
                         f"{num_weights} ({per * num_weights}"
                         f"{f' + {extra}' if extra else ''} arrays), got {len(data)}")
    return [body[i * per:(i + 1) * per] for i in range(num_weights)], data[len(body):]


def _outs(name, out, n):
    if out is None:
        return [None] * n
    outs = list(out) if isinstance(out, (list, tuple)) else [out]
    if len(outs) != n:
        raise ValueError(f"{name}: out= has {len(outs)} arrays for {n} weights")
    return outs


def _floats(name, what, values, n):
    if isinstance(values, NDArray):
        values = values.asnumpy().tolist()
    values = [float(v) for v in (values if isinstance(values, (list, tuple)) else [values])]
    if len(values) != n:
        raise ValueError(f"{name}: {what} has {len(values)} values for {n} weights")
    return values


def _multi(name, single, per, preloaded=False):
    def f(*data, lrs=None, wds=None, num_weights=None, out=None, name=None, **kwargs):
        groups, tail = _groups(name_, data, per, num_weights, 2 if preloaded else 0)
        n = len(groups)
        if preloaded:
            lrs, wds = tail
        lr_list = _floats(name_, "lrs", lrs, n)
        wd_list = _floats(name_, "wds", wds, n)
        results = []
        for arrays, lr, wd, o in zip(groups, lr_list, wd_list, _outs(name_, out, n)):
            results.append(PUBLIC[single](*arrays, lr=lr, wd=wd, out=o, **kwargs))
        return results

    name_ = name
    f.__name__ = name
    more = ", then ``lrs`` and ``wds`` as NDArrays" if preloaded else ""
    f.__doc__ = (f"{name}(*data, lrs, wds, num_weights, out=None, **hyper-parameters)\n\n"
                 f"MXNet's multi-tensor ``{single}``: ``data`` holds {per} arrays per weight "
                 f"(as ``{single}`` takes them){more}; ``out`` one array per weight. Returns "
                 "the list of new weights.")
    PUBLIC[name] = f
    return f


_multi("multi_sgd_update", "sgd_update", 2)
_multi("multi_sgd_mom_update", "sgd_mom_update", 3)
_multi("multi_mp_sgd_update", "mp_sgd_update", 3)
_multi("multi_mp_sgd_mom_update", "mp_sgd_mom_update", 4)
_multi("preloaded_multi_sgd_update", "sgd_update", 2, preloaded=True)
_multi("preloaded_multi_sgd_mom_update", "sgd_mom_update", 3, preloaded=True)
_multi("preloaded_multi_mp_sgd_update", "mp_sgd_update", 3, preloaded=True)
_multi("preloaded_multi_mp_sgd_mom_update", "mp_sgd_mom_update", 4, preloaded=True)

NAMESPACE_OVERRIDES = {"nd": dict(PUBLIC), "np": {}}
