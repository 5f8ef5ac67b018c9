"""Hybridized blocks and Executors on a GPU context against the imperative run there.

Skipped without CuPy and a GPU.
"""
import numpy as np
import pytest

import core
from core import autograd, nd
from gluon import nn

pytestmark = [pytest.mark.gpu,
              pytest.mark.skipif(core.num_gpus() == 0, reason="needs CuPy and a GPU")]


def _net(ctx):
    core.random.seed(0)
    net = nn.HybridSequential()
    net.add(nn.Conv2D(4, 3, padding=1), nn.BatchNorm(), nn.Activation("relu"),
            nn.MaxPool2D(2), nn.Flatten(), nn.Dropout(0.3), nn.Dense(5, activation="tanh"),
            nn.Dense(3))
    net.initialize(ctx=ctx)
    return net


def _step(net, x):
    core.random.seed(1)
    with autograd.record():
        out = net(x)
        (out * out).sum().backward()
    return out.asnumpy(), [p.grad().asnumpy() for p in net.collect_params().values()
                           if p.grad_req != "null"]


def test_hybridized_training_step_on_gpu_matches_imperative():
    ctx = core.gpu(0)
    x = nd.random.normal(shape=(4, 3, 8, 8), ctx=ctx)
    net = _net(ctx)
    net(x)
    ref_out, ref_grads = _step(net, x)
    net.hybridize()
    for _ in range(2):
        out, grads = _step(net, x)
        np.testing.assert_allclose(out, ref_out, rtol=1e-5, atol=1e-6)
        for g, r in zip(grads, ref_grads):
            np.testing.assert_allclose(g, r, rtol=1e-4, atol=1e-5)


def test_symbol_executor_on_gpu():
    from core import sym

    ctx = core.gpu(0)
    data = sym.var("data")
    out = sym.FullyConnected(sym.Activation(data, act_type="relu"), num_hidden=4, name="fc")
    ex = out.simple_bind(ctx, data=(2, 3))
    for name, arr in ex.arg_dict.items():
        arr[:] = nd.array(np.random.default_rng(0).standard_normal(arr.shape), ctx=ctx)
    ex.forward(is_train=True)
    ex.backward(nd.ones((2, 4), ctx=ctx))
    x = ex.arg_dict["data"].asnumpy()
    w = ex.arg_dict["fc_weight"].asnumpy()
    np.testing.assert_allclose(ex.outputs[0].asnumpy(),
                               np.maximum(x, 0) @ w.T + ex.arg_dict["fc_bias"].asnumpy(),
                               rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(ex.grad_dict["fc_bias"].asnumpy(), [2.0] * 4)
