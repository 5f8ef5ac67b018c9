"""Rows for the normalization operators (core/ops/nn/norm.py, core/ops/nn/batchnorm.py).

The references are plain NumPy in float64. BatchNorm rows call the public function in
training mode (batch statistics), in inference mode and with ``use_global_stats``; the
running-statistics updates are tested in tests/core/test_norm.py.
"""
import numpy as np

from core import autograd, nd
from core.ops import F

from .op_db import OpSpec, Sample, np_dtype, positive, rand


# ----------------------------------------------------------------- references
def _bshape(ndim, axis, n):
    s = [1] * ndim
    s[axis] = n
    return s


def _bn_ref(x, gamma, beta, mm, mv, eps=1e-3, fix_gamma=True, axis=1, output_mean_var=False,
            use_global_stats=False, train=True, momentum=0.9):
    xa = x.astype(np.float64)
    a = axis % x.ndim
    axes = tuple(i for i in range(x.ndim) if i != a)
    if train and not use_global_stats:
        mean, var = xa.mean(axis=axes), xa.var(axis=axes)  # the biased variance
    else:
        mean, var = mm.astype(np.float64), mv.astype(np.float64)
    b = _bshape(x.ndim, a, x.shape[a])
    g = np.ones_like(gamma) if fix_gamma else gamma
    out = (xa - mean.reshape(b)) / np.sqrt(var.reshape(b) + eps) * g.reshape(b) + beta.reshape(b)
    out = out.astype(x.dtype)
    if not output_mean_var:
        return out
    return out, mean.astype(mm.dtype), (1.0 / np.sqrt(var + eps)).astype(mv.dtype)


def _bn_infer_ref(*args, **k):
    return _bn_ref(*args, train=False, **k)


def _bn_op_ref(x, gamma, beta, eps=1e-3, fix_gamma=True, axis=1):
    a = axis % x.ndim
    axes = tuple(i for i in range(x.ndim) if i != a)
    c = x.shape[a]
    out = _bn_ref(x, gamma, beta, np.zeros(c), np.ones(c), eps, fix_gamma, axis)
    xa = x.astype(np.float64)
    return out, xa.mean(axis=axes).astype(x.dtype), xa.var(axis=axes).astype(x.dtype)


def _ln_ref(x, gamma, beta, axis=-1, eps=1e-5, output_mean_var=False):
    xa = x.astype(np.float64)
    mean = xa.mean(axis=axis, keepdims=True)
    std = np.sqrt(xa.var(axis=axis, keepdims=True) + eps)
    b = _bshape(x.ndim, axis % x.ndim, x.shape[axis])
    out = ((xa - mean) / std * gamma.reshape(b) + beta.reshape(b)).astype(x.dtype)
    if not output_mean_var:
        return out
    return out, mean.astype(x.dtype), std.astype(x.dtype)


def _in_ref(x, gamma, beta, eps=1e-3, stats=False):
    xa = x.astype(np.float64)
    axes = tuple(range(2, x.ndim))
    mean = xa.mean(axis=axes, keepdims=True)
    var = xa.var(axis=axes, keepdims=True)
    b = _bshape(x.ndim, 1, x.shape[1])
    out = ((xa - mean) / np.sqrt(var + eps) * gamma.reshape(b) + beta.reshape(b)).astype(x.dtype)
    if not stats:
        return out
    n, c = x.shape[:2]
    return out, mean.reshape(n, c).astype(x.dtype), var.reshape(n, c).astype(x.dtype)


def _gn_ref(x, gamma, beta, num_groups=1, eps=1e-5, output_mean_var=False):
    n, c = x.shape[:2]
    xg = x.astype(np.float64).reshape(n, num_groups, -1)
    mean = xg.mean(axis=2, keepdims=True)
    std = np.sqrt(xg.var(axis=2, keepdims=True) + eps)
    xhat = ((xg - mean) / std).reshape(x.shape)
    if gamma.shape[0] != c:  # MXNet 1.x: one value per group
        gamma, beta = np.repeat(gamma, c // num_groups), np.repeat(beta, c // num_groups)
    b = _bshape(x.ndim, 1, c)
    out = (xhat * gamma.reshape(b) + beta.reshape(b)).astype(x.dtype)
    if not output_mean_var:
        return out
    return out, mean.reshape(n, num_groups).astype(x.dtype), std.reshape(n, num_groups).astype(
        x.dtype)


def _l2_ref(x, eps=1e-10, mode="instance"):
    xa = x.astype(np.float64)
    if mode == "instance":
        axes = tuple(range(1, x.ndim)) if x.ndim > 1 else (0,)
    else:
        axes = (1,) if mode == "channel" else tuple(range(2, x.ndim))
    return (xa / np.sqrt((xa * xa).sum(axis=axes, keepdims=True) + eps)).astype(x.dtype)


def _window_ref(x, nsize=1):
    out = np.zeros_like(x)
    c = x.shape[1]
    for i in range(c):
        lo, hi = max(0, i - nsize // 2), min(c, i + nsize // 2 + 1)
        out[:, i] = x[:, lo:hi].sum(axis=1)
    return out


def _lrn_ref(x, alpha=1e-4, beta=0.75, knorm=2.0, nsize=None):
    xa = x.astype(np.float64)
    s = knorm + alpha / nsize * _window_ref(xa * xa, nsize)
    return (xa * s ** -beta).astype(x.dtype)


# ----------------------------------------------------------------- samples
def _gamma(rng, c, dtype):
    """Scales of either sign, away from 0."""
    return (positive(rng, (c,), "float64") * rng.choice([-1.0, 1.0], size=c)).astype(
        np_dtype(dtype))


def _bn_samples(rng, dtype):
    out = []
    cases = [((6, 4), {"fix_gamma": False}),
             ((3, 4, 3, 3), {"fix_gamma": False, "eps": 1e-5}),             # NCHW
             ((3, 3, 3, 4), {"fix_gamma": False, "axis": -1}),              # NHWC
             ((1, 3, 3, 3), {}),                                            # batch of 1
             ((2, 3, 5), {"fix_gamma": False, "axis": 2, "eps": 0.1}),
             ((5, 3), {"momentum": 0.5})]
    for shape, kw in cases:
        c = shape[kw.get("axis", 1)]
        out.append(Sample(rand(rng, shape, dtype), _gamma(rng, c, dtype), rand(rng, (c,), dtype),
                          rand(rng, (c,), dtype), positive(rng, (c,), dtype), diff=[0, 1, 2],
                          **kw))
    return out


def _with_stats(samples):
    def gen(rng, dtype):
        out = samples(rng, dtype)
        for s in out[:3]:
            s.kwargs["output_mean_var"] = True
        return out

    return gen


def _train(fn):
    def call(*args, **kw):
        with autograd.train_mode():
            return fn(*args, **kw)

    return call


def _predict(fn):
    def call(*args, **kw):
        with autograd.predict_mode():
            return fn(*args, **kw)

    return call


def _ln_samples(rng, dtype):
    cases = [((4, 6), {}), ((2, 3, 5), {}), ((2, 3, 5), {"axis": 1}),
             ((2, 3, 2, 2), {"axis": 1, "eps": 1e-3}), ((1, 5), {}),
             ((3, 4), {"axis": 0, "output_mean_var": True}),
             ((2, 3, 4), {"output_mean_var": True})]
    return [Sample(rand(rng, s, dtype), _gamma(rng, s[k.get("axis", -1)], dtype),
                   rand(rng, (s[k.get("axis", -1)],), dtype), **k) for s, k in cases]


def _in_samples(rng, dtype):
    cases = [((2, 3, 5), {}), ((2, 3, 3, 3), {"eps": 1e-5}), ((1, 2, 3, 3), {}),
             ((2, 2, 2, 2, 2), {})]
    return [Sample(rand(rng, s, dtype), _gamma(rng, s[1], dtype), rand(rng, (s[1],), dtype), **k)
            for s, k in cases]


def _gn_samples(rng, dtype):
    cases = [((2, 6, 3, 3), 3, 6, {}), ((2, 4, 5), 2, 2, {}),        # gamma per group (1.x)
             ((3, 4), 2, 4, {}), ((1, 4, 5), 1, 4, {"eps": 1e-3}),
             ((2, 4, 3), 4, 4, {}), ((2, 6, 2, 2), 2, 6, {"output_mean_var": True}),
             ((2, 4, 3), 2, 2, {"output_mean_var": True})]
    return [Sample(rand(rng, s, dtype), _gamma(rng, p, dtype), rand(rng, (p,), dtype),
                   num_groups=g, **k) for s, g, p, k in cases]


def _l2_samples(rng, dtype):
    cases = [((5,), "instance"), ((3, 4), "instance"), ((2, 3, 4), "instance"),
             ((2, 3, 4), "channel"), ((2, 3), "channel"), ((2, 3, 2, 3), "spatial"),
             ((2, 3, 4), "spatial")]
    return [Sample(rand(rng, s, dtype), mode=m) for s, m in cases] + [
        Sample(rand(rng, (2, 3), dtype), mode="instance", eps=0.5)]


def _lrn_samples(rng, dtype):
    return [Sample(rand(rng, (2, 5, 3, 3), dtype), nsize=3, alpha=0.5, knorm=1.0),
            Sample(rand(rng, (2, 4, 3), dtype), nsize=5, alpha=1.0, beta=0.5),
            Sample(rand(rng, (2, 3, 2, 2), dtype), nsize=1, alpha=0.3),
            Sample(rand(rng, (1, 6, 2, 2), dtype), nsize=7),
            Sample(rand(rng, (2, 4, 2, 2), dtype), nsize=3)]


def _window_samples(rng, dtype):
    return [Sample(rand(rng, (2, 5, 3), dtype), nsize=3), Sample(rand(rng, (2, 4), dtype),
                                                                 nsize=5),
            Sample(rand(rng, (1, 3, 2, 2), dtype), nsize=1), Sample(rand(rng, (2, 2), dtype),
                                                                    nsize=9)]


# ----------------------------------------------------------------- checks
_TOL = {"rtol": 1e-4, "atol": 1e-5}


def _grad_cases(rng):
    """(name, fn(x, gamma, beta) -> NDArray or tuple, x, gamma, beta) in float64."""
    def arrs(shape, c):
        return rand(rng, shape, "float64"), _gamma(rng, c, "float64"), rand(rng, (c,), "float64")

    mm, mv = nd.array(rand(rng, (3,), "float64"), dtype="float64"), nd.array(
        positive(rng, (3,), "float64"), dtype="float64")
    return [
        ("batch", _train(lambda x, g, b: nd.BatchNorm(x, g, b, mm.copy(), mv.copy(),
                                                      fix_gamma=False, output_mean_var=True)),
         *arrs((3, 3, 2, 2), 3)),
        ("batch_nhwc", lambda x, g, b: F._batch_norm_train(x, g, b, fix_gamma=False, axis=-1),
         *arrs((3, 2, 2, 3), 3)),
        ("batch_fix", lambda x, g, b: F._batch_norm_train(x, g, b), *arrs((4, 3), 3)),
        ("batch_infer", _predict(lambda x, g, b: nd.BatchNorm(x, g, b, mm, mv, fix_gamma=False)),
         *arrs((2, 3, 2), 3)),
        ("layer", lambda x, g, b: F._layer_norm(x, g, b), *arrs((3, 4), 4)),
        ("layer_axis1", lambda x, g, b: F._layer_norm(x, g, b, axis=1), *arrs((2, 3, 2), 3)),
        ("instance", lambda x, g, b: F._instance_norm(x, g, b), *arrs((2, 3, 4), 3)),
        ("group", lambda x, g, b: F._group_norm(x, g, b, num_groups=2), *arrs((2, 4, 3), 4)),
        ("group_1x", lambda x, g, b: F._group_norm(x, g, b, num_groups=2), *arrs((2, 4, 3), 2)),
    ]


def _scalar(out, ws):
    outs = out if isinstance(out, tuple) else (out,)
    total = None
    for o, w in zip(outs, ws):
        t = (o * nd.array(w, dtype="float64")).sum()
        total = t if total is None else total + t
    return total


def _weights(fn, args, rng):
    with autograd.pause():
        out = fn(*[nd.array(a, dtype="float64") for a in args])
    outs = out if isinstance(out, tuple) else (out,)
    return [rng.standard_normal(o.shape) for o in outs]


def _check_fused_vs_graph(spec, rng, arr):
    """The fused first-order VJP (_norm_grad) equals the recorded one used for create_graph."""
    for name, fn, *args in _grad_cases(rng):
        ws = _weights(fn, args, rng)
        res = []
        for create in (False, True):
            xs = [arr(a, dtype="float64") for a in args]
            for x in xs:
                x.attach_grad()
            with autograd.record():
                y = _scalar(fn(*xs), ws)
            res.append([g.asnumpy() for g in autograd.grad(y, xs, create_graph=create)])
        for a, b in zip(*res):
            np.testing.assert_allclose(a, b, rtol=1e-10, atol=1e-12, err_msg=name)


def _check_second_order(spec, rng, arr):
    """Hessian-vector products by autograd against differences of first-order gradients."""
    composites = [
        ("l2", lambda x: nd.L2Normalization(x, mode="channel"), rand(rng, (2, 3, 2), "float64")),
        ("lrn", lambda x: nd.LRN(x, nsize=3, alpha=0.5, knorm=1.0),
         rand(rng, (2, 4, 2), "float64")),
    ]
    for name, fn, *args in _grad_cases(rng) + composites:
        ws = _weights(fn, args, rng)
        vs = [rng.standard_normal(np.shape(a)) for a in args]

        def grads(vals, create, fn=fn, ws=ws):
            xs = [arr(v, dtype="float64") for v in vals]
            for x in xs:
                x.attach_grad()
            with autograd.record():
                y = _scalar(fn(*xs), ws)
            return xs, autograd.grad(y, xs, create_graph=create)

        xs, gs = grads(args, True)
        with autograd.record():
            z = None
            for g, v in zip(gs, vs):
                t = (g * nd.array(v, dtype="float64")).sum()
                z = t if z is None else z + t
        z.backward()
        d = [rng.standard_normal(np.shape(a)) for a in args]
        eps = 1e-5
        plus = grads([a + eps * e for a, e in zip(args, d)], False)[1]
        minus = grads([a - eps * e for a, e in zip(args, d)], False)[1]
        numeric = sum(np.sum((p.asnumpy() - m.asnumpy()) * v) for p, m, v in zip(plus, minus, vs)
                      ) / (2 * eps)
        analytic = sum(np.sum(x.grad.asnumpy() * e) for x, e in zip(xs, d))
        assert abs(numeric - analytic) <= 1e-5 + 1e-4 * abs(numeric), (name, numeric, analytic)



SPECS = [
    OpSpec("_batch_norm_train", _train(nd.BatchNorm), _bn_ref, _bn_samples,
           extra={"id": "BatchNorm_train"}, **_TOL),
    OpSpec("_batch_norm_train", _train(nd.BatchNorm), _bn_ref, _with_stats(_bn_samples),
           extra={"id": "BatchNorm_train_stats"}, **_TOL),
    OpSpec("_batch_norm_train", lambda x, g, b, **k: F._batch_norm_train(x, g, b, **k),
           _bn_op_ref,
           lambda rng, d: [Sample(*s.args[:3], **{k: v for k, v in s.kwargs.items()
                                                  if k != "momentum"})
                           for s in _bn_samples(rng, d)], **_TOL),
    OpSpec("_batch_norm_infer", _predict(nd.BatchNorm), _bn_infer_ref, _with_stats(_bn_samples),
           extra={"id": "BatchNorm_infer"}, **_TOL),
    OpSpec("_batch_norm_infer", _train(lambda *a, **k: nd.BatchNorm(*a, use_global_stats=True,
                                                                     **k)),
           _bn_infer_ref, _bn_samples, extra={"id": "BatchNorm_global_stats"}, **_TOL),
    OpSpec("_layer_norm", nd.LayerNorm, _ln_ref, _ln_samples, extra={"id": "LayerNorm"}, **_TOL),
    OpSpec("_layer_norm", nd.layer_norm, _ln_ref,
           lambda rng, d: _ln_samples(rng, d)[:2], extra={"id": "layer_norm"}, **_TOL),
    OpSpec("_instance_norm", nd.InstanceNorm, _in_ref, _in_samples, extra={"id": "InstanceNorm"},
           **_TOL),
    OpSpec("_instance_norm", lambda x, g, b, **k: F._instance_norm(x, g, b, **k),
           lambda *a, **k: _in_ref(*a, stats=True, **k), _in_samples, **_TOL),
    OpSpec("_group_norm", nd.GroupNorm, _gn_ref, _gn_samples, extra={"id": "GroupNorm"}, **_TOL),
    OpSpec("L2Normalization", nd.L2Normalization, _l2_ref, _l2_samples, **_TOL),
    OpSpec("LRN", nd.LRN, _lrn_ref, _lrn_samples, **_TOL),
    OpSpec("_lrn_window", lambda x, **k: F._lrn_window(x, **k), _window_ref, _window_samples),
    OpSpec("_norm_grad", None, None, None, check=_check_fused_vs_graph,
           extra={"id": "_norm_grad_fused_vs_graph"}),
    OpSpec("_norm_grad", None, None, None, check=_check_second_order,
           extra={"id": "norm_second_order"}),
]


# ----------------------------------------------------------------- the graph operator BatchNorm
def _bn_graph_ref(x, gamma, beta, mm, mv, eps=1e-3, momentum=0.9, fix_gamma=True,
                  use_global_stats=False, axis=1, training=True):
    """The registry operator: (out, mean, inv_std, new_moving_mean, new_moving_var)."""
    out, mean, inv_std = _bn_ref(x, gamma, beta, mm, mv, eps, fix_gamma, axis, True,
                                 use_global_stats, training)
    if training and not use_global_stats:
        a = axis % x.ndim
        axes = tuple(i for i in range(x.ndim) if i != a)
        xa = x.astype(np.float64)
        mm = mm * momentum + xa.mean(axis=axes) * (1 - momentum)
        mv = mv * momentum + xa.var(axis=axes) * (1 - momentum)
    return out, mean, inv_std, mm.astype(x.dtype), mv.astype(x.dtype)


def _bn_graph_samples(training):
    def gen(rng, dtype):
        out = _bn_samples(rng, dtype)
        for s in out:
            s.kwargs["training"] = training
        out[-1].kwargs["use_global_stats"] = True
        return out

    return gen


def _bn_graph_call(*args, **kw):
    return F.BatchNorm(*args, **kw)


def _bn_graph_grad_call(*args, **kw):  # the moving-statistics outputs carry no gradient
    return F.BatchNorm(*args, **kw)[:3]


SPECS += [
    OpSpec("BatchNorm", _bn_graph_call, _bn_graph_ref, _bn_graph_samples(True), grad=False,
           extra={"id": "BatchNorm_op_train"}, **_TOL),
    OpSpec("BatchNorm", _bn_graph_call, _bn_graph_ref, _bn_graph_samples(False), grad=False,
           extra={"id": "BatchNorm_op_infer"}, **_TOL),
    OpSpec("BatchNorm", _bn_graph_grad_call, lambda *a, **k: _bn_graph_ref(*a, **k)[:3],
           _bn_graph_samples(True), extra={"id": "BatchNorm_op_grad_train"}, **_TOL),
    OpSpec("BatchNorm", _bn_graph_grad_call, lambda *a, **k: _bn_graph_ref(*a, **k)[:3],
           _bn_graph_samples(False), extra={"id": "BatchNorm_op_grad_infer"}, **_TOL),
]
