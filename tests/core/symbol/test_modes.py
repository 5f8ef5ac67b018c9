"""Mode-dependent operators in graphs: one traced graph serves training and inference.

BatchNorm, Dropout, the fused RNN's dropout and rrelu are traced with ``training=TRAIN``
and evaluated with ``is_train=True``/``False``; every result is compared with the
imperative call under ``autograd.train_mode()``/``predict_mode()`` (bitwise where the
same kernels run), moving statistics and gradients included.
"""
from __future__ import annotations

import numpy as np
import pytest

import core
from core import autograd, nd
from core.ops import REGISTRY
from core.ops.nn.rnn import param_size
from core.ops.registry import Aval, F
from core.symbol import TRAIN, Tracer
from core.symbol.graph import evaluate

BN_OP = REGISTRY["BatchNorm"]


def _arr(rng, shape, dtype="float32", low=None, high=None):
    a = rng.uniform(low, high, size=shape) if low is not None else rng.normal(size=shape)
    return nd.array(a.astype(dtype), dtype=dtype)


def _mode(is_train):
    return autograd.train_mode() if is_train else autograd.predict_mode()


def _eq(a, b):
    np.testing.assert_array_equal(a.asnumpy(), b.asnumpy())


def _op_nodes(graph, name):
    return [n for n in graph.op_nodes() if n.op_name == name]


# --------------------------------------------------------------------------- BatchNorm
def _bn_setup(rng, shape=(4, 3, 5), axis=1, dtype="float32"):
    c = shape[axis]
    pdt = "float32" if dtype == "float16" else dtype
    return {"x": _arr(rng, shape, dtype), "gamma": _arr(rng, (c,), pdt),
            "beta": _arr(rng, (c,), pdt), "mm": _arr(rng, (c,), pdt),
            "mv": _arr(rng, (c,), pdt, 0.5, 2.0)}


def _trace_bn(v, **kw):
    """Trace nd.BatchNorm on a variable x with the parameters bound; returns the graph and
    the bound arrays' values after the trace (which must be untouched)."""
    with Tracer() as t:
        x = t.variable("x", v["x"].shape, v["x"].dtype)
        for name in ("gamma", "beta", "mm", "mv"):
            t.bind(v[name], name)
        y = nd.BatchNorm(x, v["gamma"], v["beta"], v["mm"], v["mv"], **kw)
    return t.graph(list(y) if isinstance(y, tuple) else [y])


@pytest.mark.parametrize("is_train", [True, False])
@pytest.mark.parametrize("case", [
    {"fix_gamma": False},
    {"fix_gamma": True, "axis": -1, "shape": (2, 3, 4)},
    {"fix_gamma": False, "output_mean_var": True},
    {"fix_gamma": False, "use_global_stats": True, "output_mean_var": True},
    {"fix_gamma": False, "dtype": "float64", "momentum": 0.6},
    {"fix_gamma": False, "dtype": "float16", "shape": (3, 2, 2, 2)},
])
def test_batchnorm_graph_matches_imperative(case, is_train):
    case = dict(case)
    rng = np.random.default_rng(0)
    shape, dtype = case.pop("shape", (4, 3, 5)), case.pop("dtype", "float32")
    axis = case.get("axis", 1)
    v = _bn_setup(rng, shape, axis, dtype)
    before = {k: a.asnumpy().copy() for k, a in v.items()}
    g = _trace_bn(v, **case)
    for k, a in v.items():  # tracing leaves the bound arrays as they were
        np.testing.assert_array_equal(a.asnumpy(), before[k])
    (node,) = _op_nodes(g, "BatchNorm")
    assert node.attrs["training"] is (False if case.get("use_global_stats") else TRAIN)
    assert {var.name for var in g.updates} == {"mm", "mv"}
    assert len(g.outputs) == (3 if case.get("output_mean_var") else 1)

    outs, ups = evaluate(g, dict(v), is_train=is_train)
    ref_mm, ref_mv = v["mm"].copy(), v["mv"].copy()
    with _mode(is_train):
        ref = nd.BatchNorm(v["x"], v["gamma"], v["beta"], ref_mm, ref_mv, **case)
    ref = list(ref) if isinstance(ref, tuple) else [ref]
    assert len(outs) == len(ref)
    for o, r in zip(outs, ref):
        assert o.dtype == r.dtype and o.shape == r.shape
        _eq(o, r)
    _eq(ups["mm"], ref_mm)
    _eq(ups["mv"], ref_mv)
    if not is_train or case.get("use_global_stats"):
        _eq(ups["mm"], v["mm"])
        _eq(ups["mv"], v["mv"])
    for k, a in v.items():  # evaluate returns new arrays: its inputs are untouched
        np.testing.assert_array_equal(a.asnumpy(), before[k])


def test_batchnorm_graph_runs_repeatedly_with_updates_fed_back():
    rng = np.random.default_rng(1)
    v = _bn_setup(rng)
    before = v["mm"].asnumpy().copy()
    with autograd.record():  # the mode while tracing does not matter
        g = _trace_bn(v, fix_gamma=False, momentum=0.5)
    np.testing.assert_array_equal(v["mm"].asnumpy(), before)
    vals, mm, mv = dict(v), v["mm"].copy(), v["mv"].copy()
    for step in range(3):
        x = _arr(rng, (4, 3, 5))
        vals["x"] = x
        outs, ups = evaluate(g, vals, is_train=True)
        vals.update(mm=ups["mm"], mv=ups["mv"])
        with autograd.train_mode():
            ref = nd.BatchNorm(x, v["gamma"], v["beta"], mm, mv, fix_gamma=False, momentum=0.5)
        _eq(outs[0], ref)
        _eq(ups["mm"], mm)
        _eq(ups["mv"], mv)
    outs, _ = evaluate(g, vals, is_train=False)
    _eq(outs[0], nd.BatchNorm(x, v["gamma"], v["beta"], mm, mv, fix_gamma=False))


def test_batchnorm_op_infer_is_mode_independent():
    a = [Aval((2, 3, 4), "float16"), Aval((3,), "float32"), Aval((3,), "float32"),
         Aval((3,), "float32"), Aval((3,), "float32")]
    avals = [BN_OP.infer(*a, training=t) for t in (True, False, TRAIN)]
    assert avals[0] == avals[1] == avals[2]
    assert [x.shape for x in avals[0]] == [(2, 3, 4), (3,), (3,), (3,), (3,)]
    assert BN_OP.updates == {3: 3, 4: 4}
    assert BN_OP.visible_outputs({"output_mean_var": True}) == 3
    assert BN_OP.visible_outputs({}) == 1
    assert BN_OP.nd == () and BN_OP.np == () and not hasattr(nd.BatchNorm, "op")
    with pytest.raises(ValueError, match="BatchNorm"):
        BN_OP.infer(Aval((2, 3), "float32"), *[Aval((4,), "float32")] * 4)


@pytest.mark.parametrize("is_train", [True, False])
def test_batchnorm_op_leaves_its_inputs_alone(is_train):
    v = _bn_setup(np.random.default_rng(2))
    mm, mv = v["mm"].asnumpy().copy(), v["mv"].asnumpy().copy()
    res = F.BatchNorm(v["x"], v["gamma"], v["beta"], v["mm"], v["mv"], training=is_train)
    assert len(res) == 5
    np.testing.assert_array_equal(v["mm"].asnumpy(), mm)
    np.testing.assert_array_equal(v["mv"].asnumpy(), mv)
    assert not np.shares_memory(res[3].asnumpy(), v["mm"].asnumpy())


@pytest.mark.parametrize("is_train", [True, False])
@pytest.mark.parametrize("output_mean_var", [False, True])
def test_batchnorm_graph_gradients_match_imperative(is_train, output_mean_var):
    rng = np.random.default_rng(3)
    v = _bn_setup(rng, dtype="float64")
    g = _trace_bn(v, fix_gamma=False, output_mean_var=output_mean_var)
    w = [_arr(rng, (4, 3, 5), "float64"), _arr(rng, (3,), "float64"), _arr(rng, (3,), "float64")]

    def loss(outs):
        return sum((o * wi).sum() for o, wi in zip(outs, w))

    def grads(run):
        xs = [v[k].copy() for k in ("x", "gamma", "beta")]
        for a in xs:
            a.attach_grad()
        with autograd.record(train_mode=is_train):
            out = loss(run(*xs))
        out.backward()
        return [a.grad.asnumpy() for a in xs]

    def graph_run(x, gamma, beta):
        vals = dict(v, x=x, gamma=gamma, beta=beta, mm=v["mm"].copy(), mv=v["mv"].copy())
        return evaluate(g, vals, is_train=is_train)[0]

    def imperative_run(x, gamma, beta):
        out = nd.BatchNorm(x, gamma, beta, v["mm"].copy(), v["mv"].copy(), fix_gamma=False,
                           output_mean_var=output_mean_var)
        return list(out) if isinstance(out, tuple) else [out]

    got, want = grads(graph_run), grads(imperative_run)
    for a, b in zip(got, want):
        if output_mean_var and is_train:  # d inv_std: a different (equivalent) formula
            np.testing.assert_allclose(a, b, rtol=1e-10, atol=1e-12)
        else:
            np.testing.assert_array_equal(a, b)


def test_batchnorm_second_order_gradient_through_graph_op():
    rng = np.random.default_rng(4)
    v = _bn_setup(rng, (3, 2, 2), dtype="float64")
    for op_run in (True, False):
        x = v["x"].copy()
        x.attach_grad()
        with autograd.record():
            if op_run:
                out, mean, inv_std = F.BatchNorm(x, v["gamma"], v["beta"], v["mm"], v["mv"],
                                                 fix_gamma=False)[:3]
            else:
                out, mean, inv_std = nd.BatchNorm(x, v["gamma"], v["beta"], v["mm"].copy(),
                                                  v["mv"].copy(), fix_gamma=False,
                                                  output_mean_var=True)
            (gx,) = autograd.grad((out * out).sum() + (inv_std * mean).sum(), [x],
                                  create_graph=True)
            z = (gx * gx).sum()
        z.backward()
        if op_run:
            got = x.grad.asnumpy()
        else:
            want = x.grad.asnumpy()
    np.testing.assert_allclose(got, want, rtol=1e-8, atol=1e-10)


def test_batchnorm_with_unbound_moving_stats_traces_them_as_constants():
    v = _bn_setup(np.random.default_rng(5))
    mm = v["mm"].asnumpy().copy()
    with Tracer() as t:
        x = t.variable("x", (4, 3, 5), "float32")
        y = nd.BatchNorm(x, v["gamma"], v["beta"], v["mm"], v["mv"])
    g = t.graph([y])
    assert not g.updates
    np.testing.assert_array_equal(v["mm"].asnumpy(), mm)
    outs, _ = evaluate(g, {"x": v["x"]}, is_train=False)
    _eq(outs[0], nd.BatchNorm(v["x"], v["gamma"], v["beta"], v["mm"], v["mv"]))


# --------------------------------------------------------------------------- Dropout
@pytest.mark.parametrize("axes", [(), (1,)])
def test_dropout_graph_in_both_modes(axes):
    x0 = _arr(np.random.default_rng(6), (4, 6, 3))
    for trace_mode in (False, True):  # the mode while tracing does not matter
        with _mode(trace_mode), Tracer() as t:
            x = t.variable("x", x0.shape, x0.dtype)
            y = nd.Dropout(x, p=0.4, axes=axes) * 2
        g = t.graph([y])
        (node,) = _op_nodes(g, "Dropout")
        assert node.attrs["training"] is TRAIN
        core.random.seed(11)
        got = evaluate(g, {"x": x0}, is_train=True)[0][0]
        core.random.seed(11)
        with autograd.train_mode():
            want = nd.Dropout(x0, p=0.4, axes=axes) * 2
        _eq(got, want)
        assert (got.asnumpy() == 0).any()
        core.random.seed(12)
        state = core.random.get_generator().random()
        core.random.seed(12)
        _eq(evaluate(g, {"x": x0}, is_train=False)[0][0], x0 * 2)
        assert core.random.get_generator().random() == state  # inference draws nothing


def test_dropout_p0_and_always_mode_in_graphs():
    x0 = _arr(np.random.default_rng(7), (3, 4))
    with Tracer() as t:
        x = t.variable("x", x0.shape, x0.dtype)
        a = nd.Dropout(x, p=0.0)
        b = nd.Dropout(x, p=0.5, mode="always")
    g = t.graph([a, b])
    (node,) = _op_nodes(g, "Dropout")  # p == 0 is the identity: nothing emitted
    assert node.attrs["training"] is True
    core.random.seed(3)
    outs = evaluate(g, {"x": x0}, is_train=False)[0]
    core.random.seed(3)
    _eq(outs[0], x0)
    _eq(outs[1], nd.Dropout(x0, p=0.5, mode="always"))


def test_dropout_graph_gradient_reuses_the_mask():
    x0 = _arr(np.random.default_rng(8), (5, 4))
    with Tracer() as t:
        x = t.variable("x", x0.shape, x0.dtype)
        y = nd.Dropout(x, p=0.5)
    g = t.graph([y])
    for is_train in (True, False):
        x1 = x0.copy()
        x1.attach_grad()
        with autograd.record(train_mode=is_train):
            out = evaluate(g, {"x": x1}, is_train=is_train)[0][0]
        out.backward()
        scale = out.asnumpy() / np.where(x0.asnumpy() == 0, 1, x0.asnumpy())
        np.testing.assert_allclose(x1.grad.asnumpy(), scale, rtol=1e-6)


# --------------------------------------------------------------------------- RNN
def _rnn_values(rng, mode="lstm", L=2, T=4, N=3, I=5, H=4):
    n = param_size(mode, L, 1, I, H)
    v = {"data": _arr(rng, (T, N, I)), "params": _arr(rng, (n,)) * 0.3,
         "h0": _arr(rng, (L, N, H))}
    if mode == "lstm":
        v["c0"] = _arr(rng, (L, N, H))
    return v


def _call_rnn(v, mode, L, H, p):
    return nd.RNN(v["data"], v["params"], v["h0"], v.get("c0"), state_size=H, num_layers=L,
                  mode=mode, p=p, state_outputs=True)


@pytest.mark.parametrize("mode", ["lstm", "gru"])
def test_rnn_dropout_between_layers_in_both_modes(mode):
    rng = np.random.default_rng(9)
    v = _rnn_values(rng, mode)
    with Tracer() as t:
        tv = {k: t.variable(k, a.shape, a.dtype) for k, a in v.items()}
        outs = _call_rnn(tv, mode, 2, 4, 0.5)
    g = t.graph(list(outs))
    (node,) = _op_nodes(g, "RNN")
    assert node.attrs["training"] is TRAIN
    assert node.op.visible_outputs(node.attrs) == len(outs)
    for is_train in (True, False):
        core.random.seed(21)
        got = evaluate(g, dict(v), is_train=is_train)[0]
        core.random.seed(21)
        with _mode(is_train):
            want = _call_rnn(v, mode, 2, 4, 0.5)
        for a, b in zip(got, want):
            _eq(a, b)
    core.random.seed(21)
    train = evaluate(g, dict(v), is_train=True)[0][0]
    test = evaluate(g, dict(v), is_train=False)[0][0]
    assert not np.allclose(train.asnumpy(), test.asnumpy())


def test_rnn_reserve_shape_does_not_depend_on_the_mode():
    v = _rnn_values(np.random.default_rng(10), "gru")
    args = [v["data"], v["params"], v["h0"], None, None]
    kw = {"state_size": 4, "num_layers": 2, "mode": "gru", "p": 0.3}
    shapes = {t: REGISTRY["RNN"].infer(*[None if a is None else Aval(a.shape, a.dtype)
                                         for a in args], **kw, training=t)[-1].shape
              for t in (True, False, TRAIN)}
    assert len(set(shapes.values())) == 1
    for t in (True, False):
        res = F.RNN(*args, **kw, training=t)
        assert res[-1].shape == shapes[t]


def test_rnn_graph_gradients_match_imperative():
    rng = np.random.default_rng(11)
    v = _rnn_values(rng, "lstm", T=3, N=2, I=3, H=3)
    with Tracer() as t:
        tv = {k: t.variable(k, a.shape, a.dtype) for k, a in v.items()}
        out = _call_rnn(tv, "lstm", 2, 3, 0.4)[0]
    g = t.graph([out])
    for is_train in (True, False):
        res = []
        for graph_run in (True, False):
            xs = {k: a.copy() for k, a in v.items()}
            for a in xs.values():
                a.attach_grad()
            core.random.seed(5)
            with autograd.record(train_mode=is_train):
                o = (evaluate(g, xs, is_train=is_train)[0][0] if graph_run
                     else _call_rnn(xs, "lstm", 2, 3, 0.4)[0])
            o.backward()
            res.append([xs[k].grad.asnumpy() for k in sorted(xs)])
        for a, b in zip(*res):
            np.testing.assert_array_equal(a, b)


# --------------------------------------------------------------------------- rrelu
def test_rrelu_graph_in_both_modes():
    x0 = _arr(np.random.default_rng(12), (6, 5))
    kw = {"act_type": "rrelu", "lower_bound": 0.1, "upper_bound": 0.3}
    with Tracer() as t:
        x = t.variable("x", x0.shape, x0.dtype)
        y = nd.LeakyReLU(x, **kw)
    g = t.graph([y])
    (node,) = _op_nodes(g, "_rrelu")
    assert node.attrs["training"] is TRAIN
    for is_train in (True, False):
        core.random.seed(31)
        got = evaluate(g, {"x": x0}, is_train=is_train)[0][0]
        after = core.random.get_generator().random()
        core.random.seed(31)
        with _mode(is_train):
            want = nd.LeakyReLU(x0, **kw)
        assert core.random.get_generator().random() == after  # the same draws (none in inference)
        _eq(got, want)
    # gradients in both modes
    for is_train in (True, False):
        res = []
        for graph_run in (True, False):
            x1 = x0.copy()
            x1.attach_grad()
            core.random.seed(32)
            with autograd.record(train_mode=is_train):
                o = (evaluate(g, {"x": x1}, is_train=is_train)[0][0] if graph_run
                     else nd.LeakyReLU(x1, **kw))
                loss = (o * o).sum()
            loss.backward()
            res.append(x1.grad.asnumpy())
        np.testing.assert_array_equal(*res)


def test_rrelu_op_inference_form_is_leakyrelu():
    x0 = _arr(np.random.default_rng(13), (3, 4), "float64")
    out, slopes = F._rrelu(x0, lower_bound=0.2, upper_bound=0.4, training=False)
    _eq(out, F.LeakyReLU(x0, act_type="rrelu", lower_bound=0.2, upper_bound=0.4))
    np.testing.assert_array_equal(slopes.asnumpy(), np.full((3, 4), (0.2 + 0.4) / 2))
    out, slopes = F._rrelu(x0, lower_bound=0.2, upper_bound=0.4)  # default: training
    s = slopes.asnumpy()
    assert ((s >= 0.2) & (s <= 0.4)).all() and len(np.unique(s)) > 1


# --------------------------------------------------------------------------- imperative paths
def test_imperative_calls_are_unchanged_outside_tracing():
    x0 = _arr(np.random.default_rng(14), (2, 3))
    assert nd.Dropout(x0, p=0.5) is x0
    _eq(nd.LeakyReLU(x0, act_type="rrelu"), F.LeakyReLU(x0, act_type="rrelu"))
    # concrete arrays while tracing: no traced input, BatchNorm runs as usual
    v = _bn_setup(np.random.default_rng(15))
    mm = v["mm"].copy()
    with Tracer(), autograd.train_mode():
        nd.BatchNorm(v["x"], v["gamma"], v["beta"], v["mm"], v["mv"])
    assert not np.array_equal(v["mm"].asnumpy(), mm.asnumpy())


# --------------------------------------------------------------------------- gluon layers
def test_gluon_layers_trace_into_one_graph_for_both_modes():
    from gluon import nn

    net = nn.HybridSequential()
    net.add(nn.Dense(6, in_units=4), nn.BatchNorm(in_channels=6), nn.Dropout(0.5),
            nn.Dense(2, in_units=6))
    net.initialize()
    params = net.collect_params()
    x0 = _arr(np.random.default_rng(16), (8, 4))
    with Tracer() as t:
        x = t.variable("data", x0.shape, x0.dtype)
        for name, p in params.items():
            t.bind(p.data(), name)
        y = net(x)
    g = t.graph([y])
    assert {n.name for n in g.updates} == {n for n in params if "running" in n}
    for is_train in (True, False):
        vals = {name: p.data().copy() for name, p in params.items()}
        vals["data"] = x0
        core.random.seed(41)
        outs, ups = evaluate(g, vals, is_train=is_train)
        core.random.seed(41)
        with _mode(is_train):
            want = net(x0)
        _eq(outs[0], want)
        for name, new in ups.items():  # the imperative call updated the layer in place
            _eq(new, params[name].data())
