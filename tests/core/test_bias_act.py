"""The one-pass bias + activation (``core/ops/nn/bias_act.py``) and activation gradient
(``core/ops/act_grad.py``): kernels against their NumPy twins bit for bit (NaN, infinities,
signed zeros, non-contiguous inputs, every bias axis), second derivatives, the VJPs of the
activations that use them, and Gluon's layers (fused imperatively, MXNet's operators in
traced graphs)."""
from __future__ import annotations

import json

import numpy as np
import pytest

from core import autograd, cpu_kernels, nd
from core.ops import F
from core.ops import act_grad as act_grad_mod
from core.ops.nn import bias_act as bias_act_mod
from gluon import nn

from .kernel_checks import both as _both
from .kernel_checks import calls as _calls

kernels = pytest.mark.skipif(not cpu_kernels.enabled(),
                             reason="kernels are switched off (KBACKEND_NUMBA=0)")
SPECIAL = np.array([np.nan, np.inf, -np.inf, 0.0, -0.0, 1e-30, -1e-30, 3.0, -3.0])


@pytest.fixture(autouse=True)
def _quiet_nan():
    with np.errstate(invalid="ignore"):
        yield


def _same_bits(a, b):
    a, b = np.ascontiguousarray(a), np.ascontiguousarray(b)
    assert a.dtype == b.dtype and a.shape == b.shape
    np.testing.assert_array_equal(a.view(np.uint8), b.view(np.uint8))


def _values(rng, shape, dtype, special=True):
    a = rng.standard_normal(shape) * 2
    if special:
        flat = a.reshape(-1)
        flat[:SPECIAL.size] = SPECIAL[:flat.size]
        rng.shuffle(flat)
    return a.astype(dtype)


# --------------------------------------------------------------------- _act_grad kernels
@kernels
@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("act", ["relu", "sigmoid", "tanh"])
@pytest.mark.parametrize("shape", [(7,), (33, 65), (4, 5, 6)])
def test_act_grad_kernel_equals_twin(monkeypatch, act, dtype, shape):
    rng = np.random.default_rng(0)
    g, y = nd.array(_values(rng, shape, dtype)), nd.array(_values(rng, shape, dtype))
    seen = _calls(monkeypatch, act_grad_mod, f"_{act}_grad")
    on, off = _both(lambda: F._act_grad(g, y, act_type=act).asnumpy())
    assert seen, "the kernel did not run"
    _same_bits(on, off)


@kernels
@pytest.mark.parametrize("act", ["relu", "sigmoid", "tanh"])
def test_act_grad_kernel_on_views(act):
    rng = np.random.default_rng(1)
    g = nd.array(_values(rng, (6, 10), "float32")).T  # non-contiguous
    y = nd.array(_values(rng, (10, 12), "float32"))[:, ::2]
    on, off = _both(lambda: F._act_grad(g, y, act_type=act).asnumpy())
    _same_bits(on, off)
    want = {"relu": g.asnumpy() * (y.asnumpy() > 0),
            "sigmoid": g.asnumpy() * y.asnumpy() * (1 - y.asnumpy()),
            "tanh": g.asnumpy() * (1 - y.asnumpy() * y.asnumpy())}[act]
    _same_bits(on, want)


def test_act_grad_mixed_and_low_precision_run_the_twin():
    g = nd.array(np.linspace(-1, 1, 12).reshape(3, 4), dtype="float16")
    y = nd.array(np.linspace(-0.5, 0.5, 12).reshape(3, 4), dtype="float32")
    out = F._act_grad(g, y, act_type="tanh")
    assert out.dtype == np.float32
    np.testing.assert_allclose(out.asnumpy(), g.asnumpy() * (1 - y.asnumpy() ** 2), rtol=1e-6)


# --------------------------------------------------------------------- _bias_act kernels
@kernels
@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("shape,axis", [((5, 7), -1), ((5, 7), 1), ((3, 4, 5, 5), 1),
                                        ((3, 5, 5, 4), -1), ((6,), 0), ((2, 3, 4), 0)])
def test_bias_relu_kernel_equals_twin(monkeypatch, shape, axis, dtype):
    rng = np.random.default_rng(2)
    x = nd.array(_values(rng, shape, dtype))
    b = nd.array(_values(rng, (shape[axis],), dtype, special=False))
    seen = _calls(monkeypatch, bias_act_mod, "_bias_relu_acb")
    on, off = _both(lambda: F._bias_act(x, b, act_type="relu", axis=axis).asnumpy())
    assert seen, "the kernel did not run"
    _same_bits(on, off)
    # the unfused layer: the bias added in place, then relu
    bshape = tuple(-1 if i == axis % len(shape) else 1 for i in range(len(shape)))
    z = x.asnumpy() + b.asnumpy().reshape(bshape)
    _same_bits(on, np.maximum(z, 0))


@kernels
def test_bias_relu_kernel_on_a_view_and_special_bias():
    x = nd.array(np.arange(-12, 12, dtype=np.float32).reshape(4, 6)).T  # (6, 4) view
    b = nd.array([np.nan, -np.inf, 0.0, -0.0])
    on, off = _both(lambda: F._bias_act(x, b).asnumpy())
    _same_bits(on, off)


@pytest.mark.parametrize("act", ["sigmoid", "tanh"])
def test_bias_sigmoid_tanh_equal_the_unfused_ops(act):
    rng = np.random.default_rng(3)
    x = nd.array(rng.standard_normal((3, 4, 2, 2)).astype("float32"))
    b = nd.array(rng.standard_normal(4).astype("float32"))
    got = F._bias_act(x, b, act_type=act, axis=1).asnumpy()
    want = nd.Activation(nd.broadcast_add(x, b.reshape((1, 4, 1, 1))), act_type=act).asnumpy()
    _same_bits(got, want)


def test_bias_act_gradients_equal_the_unfused_ops():
    rng = np.random.default_rng(4)
    for act in ("relu", "sigmoid", "tanh"):
        xs = rng.standard_normal((2, 3, 4, 4))
        bs = rng.standard_normal(3)
        head = rng.standard_normal((2, 3, 4, 4))
        grads = []
        for fused in (True, False):
            x, b = nd.array(xs, dtype="float64"), nd.array(bs, dtype="float64")
            x.attach_grad()
            b.attach_grad()
            with autograd.record():
                if fused:
                    y = F._bias_act(x, b, act_type=act, axis=1)
                else:
                    y = nd.Activation(x + b.reshape((1, 3, 1, 1)), act_type=act)
            y.backward(nd.array(head, dtype="float64"))
            grads.append((x.grad.asnumpy(), b.grad.asnumpy()))
        np.testing.assert_allclose(grads[0][0], grads[1][0], rtol=1e-12, atol=1e-12)
        np.testing.assert_allclose(grads[0][1], grads[1][1], rtol=1e-12, atol=1e-12)


def test_bias_act_errors_name_the_operator():
    x = nd.ones((2, 3))
    with pytest.raises(ValueError, match=r"_bias_act: bias must have shape \(3,\)"):
        F._bias_act(x, nd.ones(4))
    with pytest.raises(ValueError, match="_bias_act: act_type must be one of"):
        F._bias_act(x, nd.ones(3), act_type="softsign")
    with pytest.raises(ValueError, match="_bias_act: axis 2 is out of range"):
        F._bias_act(x, nd.ones(3), axis=2)
    with pytest.raises(TypeError, match="_bias_act: expects floating-point"):
        F._bias_act(nd.ones((2, 3), dtype="int32"), nd.ones(3, dtype="int32"))
    with pytest.raises(ValueError, match="_act_grad: g and y must be"):
        F._act_grad(nd.ones((2, 3)), nd.ones((3, 2)))


# --------------------------------------------------------------------- second derivatives
@pytest.mark.parametrize("act,d2", [
    ("sigmoid", lambda x: (s := 1 / (1 + np.exp(-x))) * (1 - s) * (1 - 2 * s)),
    ("tanh", lambda x: -2 * np.tanh(x) * (1 - np.tanh(x) ** 2)),
    ("relu", lambda x: np.zeros_like(x)),
])
@pytest.mark.parametrize("kind", ["standalone", "Activation", "bias_act"])
def test_second_derivative(act, d2, kind):
    xs = np.array([-1.7, -0.3, 0.4, 1.1, 2.5])
    x = nd.array(xs, dtype="float64")
    x.attach_grad()
    with autograd.record():
        if kind == "standalone":
            y = getattr(nd, act)(x)
        elif kind == "Activation":
            y = nd.Activation(x, act_type=act)
        else:
            y = F._bias_act(x, nd.zeros(5, dtype="float64"), act_type=act, axis=0)
        (g,) = autograd.grad(y, [x], head_grads=nd.ones(5, dtype="float64"), create_graph=True)
        z = g.sum()
    z.backward()
    np.testing.assert_allclose(x.grad.asnumpy(), d2(xs), rtol=1e-10, atol=1e-12)


# --------------------------------------------------------------------- Gluon's layers
def _layers():
    return [(lambda a: nn.Dense(5, activation=a), (4, 6)),
            (lambda a: nn.Dense(5, activation=a, flatten=False), (2, 3, 6)),
            (lambda a: nn.Conv2D(3, 3, activation=a), (2, 2, 6, 6)),
            (lambda a: nn.Conv2D(3, 3, activation=a, layout="NHWC"), (2, 6, 6, 2)),
            (lambda a: nn.Conv1D(3, 2, activation=a), (2, 2, 7))]


@pytest.mark.parametrize("act", ["relu", "sigmoid", "tanh"])
def test_gluon_layers_fuse_imperatively_and_match_hybridized(monkeypatch, act):
    rng = np.random.default_rng(5)
    calls = []
    real = F._bias_act
    monkeypatch.setattr(F, "_bias_act", lambda *a, **k: calls.append(1) or real(*a, **k),
                        raising=False)
    for make, shape in _layers():
        layer = make(act)
        layer.initialize()
        x = nd.array(rng.standard_normal(shape).astype("float32"))
        results = []
        for hybrid in (False, True):
            if hybrid:
                layer.hybridize()
            x.attach_grad()
            n_before = len(calls)
            with autograd.record():
                y = layer(x)
                loss = (y * y).sum()
            loss.backward()
            assert (len(calls) > n_before) == (not hybrid)
            results.append((y.asnumpy(), x.grad.asnumpy(), layer.bias.grad().asnumpy()))
        for a, b in zip(*results):
            np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-5)


def test_gluon_export_keeps_mxnet_operators(tmp_path):
    net = nn.HybridSequential()
    net.add(nn.Conv2D(4, 3, activation="relu"), nn.Dense(3, activation="tanh"))
    net.initialize()
    net.hybridize()
    net(nd.ones((1, 2, 5, 5)))
    net.export(str(tmp_path / "net"))
    ops = {n["op"] for n in json.loads((tmp_path / "net-symbol.json").read_text())["nodes"]}
    assert {"Convolution", "FullyConnected", "Activation"} <= ops
    assert not any(o.startswith("_bias_act") or o == "_act_grad" for o in ops)


def test_gluon_activation_hooks_disable_the_fusion(monkeypatch):
    layer = nn.Dense(4, activation="relu")
    layer.initialize()
    seen = []
    layer.act.register_forward_hook(lambda blk, inp, out: seen.append(out.shape))
    calls = []
    real = F._bias_act
    monkeypatch.setattr(F, "_bias_act", lambda *a, **k: calls.append(1) or real(*a, **k),
                        raising=False)
    layer(nd.ones((2, 3)))
    assert seen == [(2, 4)] and not calls


def test_relu_gradient_propagates_nan_as_mxnet():
    # MXNet's relu_grad: NaN where the input is NaN (its test_ndarray_nan_comparison)
    from core import autograd, nd
    from core.ops import act_grad

    x = nd.array([np.nan, 1.0, -1.0, np.inf, 0.0])
    x.attach_grad()
    with autograd.record():
        y = nd.relu(x)
    y.backward()
    np.testing.assert_array_equal(x.grad.asnumpy(), [np.nan, 1.0, 0.0, 1.0, 0.0])
    g = np.ones(5, np.float32)
    yv = np.array([np.nan, 1.0, 0.0, -0.0, np.inf], np.float32)
    out = np.empty(5, np.float32)
    act_grad._relu_grad(g, yv, np.float32(0), np.float32(1), out)  # the compiled kernel
    np.testing.assert_array_equal(out, act_grad.FORMULAS["relu"](g, yv))  # and its twin
    np.testing.assert_array_equal(out, [np.nan, 1.0, 0.0, 0.0, 1.0])
