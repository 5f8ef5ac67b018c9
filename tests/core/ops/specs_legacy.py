"""Rows for MXNet 1.x's legacy operators: the loss heads (core/ops/nn/loss_heads.py) and
the optimizer update operators (core/ops/optimizer_ops.py).

The loss heads' gradients are rules, not the VJP of their forward, so their forward rows
run without the finite-difference check (``grad=False``); the gradient rules are checked
as values through their own operators' rows, and end to end through autograd and
``core.sym`` graphs (with a head gradient the heads must ignore) in
``tests/core/nd/test_loss_heads.py``.

The update operators' rows check the returned weight against NumPy versions of MXNet
1.9.1's kernels; their in-place states are compared with real MXNet in
``tests/core/nd/test_optimizer_ops.py``.
"""
import numpy as np

from core import nd
from core.ops import F

from .op_db import OpSpec, Sample, rand

FLOATS = ("float32", "float64", "float16", "bfloat16")


def _f64(x):
    return np.asarray(x, np.float64)


def _sigmoid(x):
    return 1.0 / (1.0 + np.exp(-x))


def reg_forward_ref(kind):
    def ref(data, label, grad_scale=1.0):
        x = _f64(data)
        return (_sigmoid(x) if kind == "logistic" else x).astype(data.dtype)

    return ref


def reg_grad_ref(out, label, kind="linear", grad_scale=1.0):
    diff = _f64(out) - _f64(label).reshape(out.shape)
    if kind == "mae":
        diff = np.where(diff > 0, 1.0, -1.0)
    num_output = label.size // label.shape[0]
    return (diff * float(np.float32(grad_scale) / np.float32(num_output))).astype(out.dtype)


def make_loss_grad_ref(data, grad_scale=1.0, valid_thresh=0.0, normalization="null"):
    if normalization == "batch":
        scale = grad_scale / data.shape[0]
    elif normalization == "valid":
        scale = grad_scale / max(1, int((_f64(data) > valid_thresh).sum()))
    else:
        scale = grad_scale
    return np.full(data.shape, scale).astype(data.dtype)


def _reg_samples(rng, d):
    return [Sample(rand(rng, (4, 3), d), rand(rng, (4, 3), d)),
            Sample(rand(rng, (5, 1), d), rand(rng, (5,), d), grad_scale=2.0),
            Sample(rand(rng, (2, 3, 2), d), rand(rng, (2, 6), d), grad_scale=0.5)]


def _reg_grad_samples(rng, d):
    out = []
    for kind in ("linear", "logistic", "mae"):
        for s in _reg_samples(rng, d):
            out.append(Sample(*s.args, kind=kind, **s.kwargs))
    tie = rand(rng, (3, 2), d)
    out.append(Sample(tie, tie.copy(), kind="mae", name="ties give -1"))
    return out


def _ml_samples(rng, d):
    return [Sample(rand(rng, (4, 3), d)),
            Sample(rand(rng, (4, 3), d), grad_scale=3.0, normalization="batch"),
            Sample(rand(rng, (2, 5), d), normalization="valid", valid_thresh=0.5),
            Sample(rand(rng, (2, 5), d, -2, -1), normalization="valid", name="none valid")]


SPECS = [
    OpSpec("LinearRegressionOutput", lambda *a, **k: nd.LinearRegressionOutput(*a, **k),
           reg_forward_ref("linear"), _reg_samples, dtypes=FLOATS, grad=False),
    OpSpec("LogisticRegressionOutput", lambda *a, **k: nd.LogisticRegressionOutput(*a, **k),
           reg_forward_ref("logistic"), _reg_samples, dtypes=FLOATS, grad=False),
    OpSpec("MAERegressionOutput", lambda *a, **k: nd.MAERegressionOutput(*a, **k),
           reg_forward_ref("mae"), _reg_samples, dtypes=FLOATS, grad=False),
    OpSpec("_regression_output_grad", lambda *a, **k: F._regression_output_grad(*a, **k),
           reg_grad_ref, _reg_grad_samples, dtypes=FLOATS, grad=False),
    OpSpec("MakeLoss", lambda x, **k: nd.MakeLoss(x, **k), lambda x, **k: x, _ml_samples,
           dtypes=FLOATS, grad=False),
    OpSpec("_make_loss_grad", lambda x, **k: F._make_loss_grad(x, **k), make_loss_grad_ref,
           _ml_samples, dtypes=FLOATS, grad=False),
]


# ----------------------------------------------------------------- optimizer update operators
def _clip(g, rescale, clip):
    g = _f64(g) * rescale
    return np.clip(g, -clip, clip) if clip >= 0 else g


def _opt_ref(kind):
    """NumPy references of the update operators' results (MXNet 1.9.1's kernels)."""

    def ref(*a, **k):
        lr, wd = k.get("lr"), k.get("wd", 0.0)
        rs, cl = k.get("rescale_grad", 1.0), k.get("clip_gradient", -1.0)
        w = _f64(a[0])
        if kind in ("mp_sgd", "mp_sgd_mom", "mp_nag", "mp_adamw"):
            w = _f64(a[-1] if kind != "mp_adamw" else a[4])
        g = _clip(a[1], rs, cl)
        mom = k.get("momentum", 0.0)
        if kind in ("sgd", "mp_sgd"):
            out = (1 - lr * wd) * w - lr * g
        elif kind in ("sgd_mom", "mp_sgd_mom"):
            out = w + mom * _f64(a[2]) - lr * wd * w - lr * g
        elif kind in ("nag", "mp_nag"):
            m = mom * _f64(a[2])
            out = w - m + (mom + 1) * (m - lr * (g + wd * w))
        elif kind == "signsgd":
            out = (1 - lr * wd) * w - lr * np.sign(_f64(a[1]))
        elif kind == "signum":
            m = mom * _f64(a[2]) - (1 - mom) * (wd * w + g)
            out = (1 - lr * k.get("wd_lh", 0.0)) * w + lr * np.sign(m)
        elif kind == "adam":
            gg = np.clip(_f64(a[1]) * rs + wd * w, -cl, cl) if cl >= 0 else _f64(a[1]) * rs + wd * w
            b1, b2 = k.get("beta1", 0.9), k.get("beta2", 0.999)
            m = b1 * _f64(a[2]) + (1 - b1) * gg
            v = b2 * _f64(a[3]) + (1 - b2) * gg * gg
            out = w - lr * m / (np.sqrt(v) + k.get("epsilon", 1e-8))
        elif kind in ("adamw", "mp_adamw"):
            s = float(_f64(a[-1]).ravel()[0])
            gg = _clip(a[1], s, cl)
            b1, b2 = k.get("beta1", 0.9), k.get("beta2", 0.999)
            m = b1 * _f64(a[2]) + (1 - b1) * gg
            v = b2 * _f64(a[3]) + (1 - b2) * gg * gg
            out = w - k["eta"] * (lr * m / (np.sqrt(v) + k.get("epsilon", 1e-8)) + wd * w)
        elif kind == "rmsprop":
            gg = _clip(_f64(a[1]) + wd * w / rs, rs, cl)
            g1 = k.get("gamma1", 0.95)
            n = (1 - g1) * gg * gg + g1 * _f64(a[2])
            out = w - lr * gg / np.sqrt(n + k.get("epsilon", 1e-8))
        elif kind == "rmspropalex":
            gg = _clip(_f64(a[1]) + wd * w / rs, rs, cl)
            g1, g2 = k.get("gamma1", 0.95), k.get("gamma2", 0.9)
            n = (1 - g1) * gg * gg + g1 * _f64(a[2])
            gb = (1 - g1) * gg + g1 * _f64(a[3])
            delta = g2 * _f64(a[4]) - lr * gg / np.sqrt(n - gb * gb + k.get("epsilon", 1e-8))
            out = w + delta
        elif kind == "ftml":
            b1, b2, t, eps = k.get("beta1", 0.6), k.get("beta2", 0.999), k["t"], k["epsilon"]
            gi = _clip(_f64(a[1]) + wd * w / rs, rs, k.get("clip_grad", -1.0))
            v = b2 * _f64(a[3]) + (1 - b2) * gi * gi
            d_t = (1 - b1 ** t) / lr * (np.sqrt(v / (1 - b2 ** t)) + eps)
            z = b1 * _f64(a[4]) + (1 - b1) * gi - (d_t - b1 * _f64(a[2])) * w
            out = -z / d_t
        elif kind == "ftrl":
            z, n = _f64(a[2]), _f64(a[3])
            z = z + g - (np.sqrt(n + g * g) - np.sqrt(n)) * w / lr
            n = n + g * g
            l1 = k.get("lamda1", 0.01)
            out = (np.sign(z) * l1 - z) / ((k.get("beta", 1.0) + np.sqrt(n)) / lr + wd) * \
                (np.abs(z) > l1)
        elif kind in ("lamb1", "mp_lamb1"):
            w = _f64(a[-1]) if kind == "mp_lamb1" else w
            b1, b2, t = k.get("beta1", 0.9), k.get("beta2", 0.999), k["t"]
            m = b1 * _f64(a[2]) + (1 - b1) * g
            v = b2 * _f64(a[3]) + (1 - b2) * g * g
            m, v = m / (1 - b1 ** t), v / (1 - b2 ** t)
            out = m / (np.sqrt(v) + k.get("epsilon", 1e-6)) + wd * w
            return out.astype(np.float32 if kind == "mp_lamb1" else a[0].dtype)
        elif kind in ("lamb2", "mp_lamb2"):
            w = _f64(a[4]) if kind == "mp_lamb2" else w
            r1, r2 = float(_f64(a[2]).ravel()[0]), float(_f64(a[3]).ravel()[0])
            out = w - lr * (r1 / r2 if r1 and r2 else 1.0) * _f64(a[1])
        return out.astype(a[0].dtype)

    return ref


def _opt_samples(spec, **kw):
    """Samples from ``spec`` = [(dtype or None for the row's, kind)], kinds as
    ``tests/core/nd/test_optimizer_ops.py``'s; two shapes, clipping on and off."""

    def samples(rng, d):
        out = []
        for shape, extra in (((3, 4), {}), ((5,), {"rescale_grad": 0.5, "clip_gradient": 0.3})):
            arrays = []
            for dt, kind in spec:
                dt = dt or d
                if kind == "pos":
                    arrays.append(rand(rng, shape, dt, 0.1, 1.0))
                elif kind == "one":
                    arrays.append(rand(rng, (1,), dt, 0.5, 2.0))
                elif kind == "small":  # a centered second moment stays positive
                    arrays.append(rand(rng, shape, dt, -0.1, 0.1))
                else:
                    arrays.append(rand(rng, shape, dt, -1.0, 1.0))
            extra = {} if "no_clip" in kw.get("flags", ()) else extra
            attrs = {k: v for k, v in kw.items() if k != "flags"}
            out.append(Sample(*arrays, **attrs, **extra))
        return out

    return samples


def _opt_row(name, kind, spec, dtypes=("float32", "float64"), rtol=1e-5, atol=1e-6, **kw):
    fn = name.split(".")
    return OpSpec(kw.pop("op", name), lambda *a, **k: _call_path(fn, *a, **k), _opt_ref(kind),
                  _opt_samples(spec, **kw), dtypes=dtypes, grad=False, rtol=rtol, atol=atol,
                  extra={"id": f"{name}:{kind}"})


def _call_path(fn, *a, **k):
    f = nd
    for part in fn:
        f = getattr(f, part)
    return f(*a, **k)


_W = [(None, "w"), (None, "w")]
_MP = [("float16", "w"), ("float16", "w")]
_F32 = "float32"

SPECS += [
    _opt_row("sgd_update", "sgd", _W, lr=0.1, wd=0.01),
    _opt_row("sgd_mom_update", "sgd_mom", _W + [(None, "w")], lr=0.1, momentum=0.9, wd=0.01),
    _opt_row("mp_sgd_update", "mp_sgd", _MP + [(_F32, "w")], dtypes=(_F32,), lr=0.1, wd=0.01),
    _opt_row("mp_sgd_mom_update", "mp_sgd_mom", _MP + [(_F32, "w"), (_F32, "w")],
             dtypes=(_F32,), lr=0.1, momentum=0.9, wd=0.01),
    _opt_row("nag_mom_update", "nag", _W + [(None, "w")], lr=0.1, momentum=0.9, wd=0.01),
    _opt_row("mp_nag_mom_update", "mp_nag", _MP + [(_F32, "w"), (_F32, "w")],
             dtypes=(_F32,), lr=0.1, momentum=0.9, wd=0.01),
    _opt_row("signsgd_update", "signsgd", _W, lr=0.1, wd=0.01, flags=("no_clip",)),
    _opt_row("signum_update", "signum", _W + [(None, "w")], lr=0.1, momentum=0.9, wd=0.01,
             wd_lh=0.02),
    _opt_row("adam_update", "adam", _W + [(None, "w"), (None, "pos")], lr=0.01, wd=0.01),
    _opt_row("contrib.adamw_update", "adamw", _W + [(None, "w"), (None, "pos"), (None, "one")],
             op="_adamw_update", lr=0.01, eta=0.5, wd=0.01, flags=("no_clip",)),
    _opt_row("contrib.mp_adamw_update", "mp_adamw",
             _MP + [(_F32, "w"), (_F32, "pos"), (_F32, "w"), (_F32, "one")], dtypes=(_F32,),
             op="_mp_adamw_update", lr=0.01, eta=0.5, wd=0.01, flags=("no_clip",)),
    _opt_row("rmsprop_update", "rmsprop", _W + [(None, "pos")], lr=0.01, gamma1=0.9, wd=0.01),
    _opt_row("rmspropalex_update", "rmspropalex",
             _W + [(None, "pos"), (None, "small"), (None, "w")], lr=0.01, gamma1=0.9,
             gamma2=0.8, wd=0.01),
    _opt_row("ftml_update", "ftml", _W + [(None, "pos"), (None, "pos"), (None, "w")], lr=0.1,
             t=3, epsilon=1e-6, wd=0.01, rescale_grad=0.5, clip_grad=0.3, flags=("no_clip",)),
    _opt_row("ftrl_update", "ftrl", _W + [(None, "w"), (None, "pos")], lr=0.1, lamda1=0.2,
             wd=0.01),
    _opt_row("lamb_update_phase1", "lamb1", _W + [(None, "w"), (None, "pos")], t=2, wd=0.01),
    _opt_row("mp_lamb_update_phase1", "mp_lamb1", _MP + [(_F32, "w"), (_F32, "pos"), (_F32, "w")],
             dtypes=(_F32,), t=2, wd=0.01),
    _opt_row("lamb_update_phase2", "lamb2", [(None, "w"), (None, "w"), (None, "one"),
                                             (None, "one")], lr=0.1, flags=("no_clip",)),
    _opt_row("mp_lamb_update_phase2", "mp_lamb2",
             [("float16", "w"), (_F32, "w"), (_F32, "one"), (_F32, "one"), (_F32, "w")],
             dtypes=(_F32,), lr=0.1, flags=("no_clip",)),
]


# ----------------------------------------------------------------- legacy NDArray operators
def _rows_idx(rng, n, c):
    return rng.integers(0, c, size=(n,)).astype(np.float32)


def _choose_ref(lhs, rhs):
    return lhs[np.arange(lhs.shape[0]), rhs.astype(np.int64)]


def _fill_ref(lhs, mhs, rhs):
    out = lhs.copy()
    out[np.arange(lhs.shape[0]), rhs.astype(np.int64)] = mhs
    return out


SPECS += [
    OpSpec("add_n", lambda *a: nd.add_n(*a), lambda *a: np.sum(np.stack(a), axis=0),
           lambda rng, d: [Sample(rand(rng, (3, 4), d), rand(rng, (3, 4), d),
                                  rand(rng, (3, 4), d)),
                           Sample(rand(rng, (5,), d))], dtypes=FLOATS),
    OpSpec("choose_element_0index", nd.choose_element_0index, _choose_ref,
           lambda rng, d: [Sample(rand(rng, (4, 3), d), _rows_idx(rng, 4, 3), diff=[0]),
                           Sample(rand(rng, (2, 5), d), np.array([4, 0]), diff=[0])],
           dtypes=FLOATS),
    OpSpec("fill_element_0index", nd.fill_element_0index, _fill_ref,
           lambda rng, d: [Sample(rand(rng, (4, 3), d), rand(rng, (4,), d),
                                  _rows_idx(rng, 4, 3), diff=[0, 1])],
           dtypes=FLOATS),
]
