"""Tests of gluon.nn, and the checks every layer's tests share.

``check_layer_grad`` compares the autograd gradients of a random projection of a layer's
output, with respect to the input and every trainable parameter, with central finite
differences in float64. ``check_hybridize`` and ``check_save_load`` check that
``hybridize()`` and a ``save_parameters``/``load_parameters`` round trip into a fresh
layer leave the results unchanged.
"""
from __future__ import annotations

import numpy

from core import autograd, nd
from core import random as core_random
from core.test_utils import assert_almost_equal


def _forward(layer, x, train, seed):
    if seed is not None:
        core_random.seed(seed)
    with autograd.pause(train_mode=train):
        return layer(x).asnumpy()


def check_layer_grad(layer, x, train=False, wrt_input=True, eps=1e-6, rtol=1e-5, atol=1e-8,
                     directions=2, seed=0, random_seed=None):
    """Check the gradients of ``sum(layer(x) * R)`` (R random) against finite differences.

    Args:
        layer: an initialized layer with float64 parameters (on one context).
        x: the input (converted to a float64 NDArray unless it holds integers).
        train: run the layer in training mode (batch statistics, dropout).
        wrt_input: check the gradient with respect to ``x`` too.
        directions: random directions per array.
        random_seed: reseed ``core.random`` before every forward (layers that draw).
    """
    rng = numpy.random.default_rng(seed)
    x = nd.array(x, dtype="float64") if not isinstance(x, nd.NDArray) else x
    params = [p for p in layer.collect_params().values() if p.grad_req != "null"]
    out0 = _forward(layer, x, train, random_seed)  # completes deferred initialization
    proj = rng.standard_normal(out0.shape)

    def loss():
        return float(numpy.sum(_forward(layer, x, train, random_seed) * proj))

    if wrt_input:
        x.attach_grad()
    if random_seed is not None:
        core_random.seed(random_seed)
    with autograd.record(train_mode=train):
        out = layer(x)
        total = (out * nd.array(proj, dtype=out.dtype, ctx=out.context)).sum()
    total.backward()

    targets = [("input", x, x.grad)] if wrt_input else []
    targets += [(p.name, p.data(), p.grad()) for p in params]
    for name, arr, g in targets:
        g = g.asnumpy().astype(numpy.float64)
        base = arr.asnumpy().copy()
        for _ in range(directions):
            d = rng.standard_normal(base.shape)
            with autograd.pause():
                arr[...] = nd.array(base + eps * d, dtype=arr.dtype, ctx=arr.context)
            plus = loss()
            with autograd.pause():
                arr[...] = nd.array(base - eps * d, dtype=arr.dtype, ctx=arr.context)
            minus = loss()
            with autograd.pause():
                arr[...] = nd.array(base, dtype=arr.dtype, ctx=arr.context)
            numeric = (plus - minus) / (2 * eps)
            analytic = float(numpy.sum(g * d))
            assert abs(numeric - analytic) <= atol + rtol * max(abs(numeric), abs(analytic)), (
                f"{type(layer).__name__}: gradient of {name} (shape {base.shape}): "
                f"directional derivative {analytic!r} by autograd, {numeric!r} by finite "
                "differences")


def check_hybridize(make, x, train=False):
    """The outputs (and input gradients) of one layer before and after ``hybridize()``
    are identical; a layer hybridized before its first call gives the same results."""
    layer = make()
    layer.initialize()
    outs, grads = [], []
    for hybrid in (False, True):
        if hybrid:
            layer.hybridize()
        xi = x.copy()
        xi.attach_grad()
        with autograd.record(train_mode=train):
            y = layer(xi)
        y.backward()
        outs.append(y.asnumpy())
        grads.append(xi.grad.asnumpy())
    numpy.testing.assert_array_equal(outs[0], outs[1])
    numpy.testing.assert_array_equal(grads[0], grads[1])

    fresh = make()
    fresh.hybridize()
    fresh.initialize()
    y = fresh(x)
    assert y.shape == outs[0].shape


def check_save_load(make, x, path):
    """``save_parameters`` then ``load_parameters`` into a fresh layer: same outputs."""
    layer = make()
    layer.initialize()
    y = layer(x)
    fname = str(path / "layer.params")
    layer.save_parameters(fname)
    fresh = make()
    fresh.load_parameters(fname)
    assert_almost_equal(fresh(x), y, rtol=0, atol=0)
    return layer, fresh
