"""The fused RNN's backward skips the data's gradient when nothing needs it."""
from __future__ import annotations

import numpy as np
import pytest

from core import autograd, nd
from core.ops import dispatch
from core.ops.nn.rnn import param_size


def _grads(mode, layers, bidirectional, want_data):
    rng = np.random.default_rng(0)
    T, N, C, H = 5, 3, 4, 6
    D = 2 if bidirectional else 1
    x = nd.array(rng.standard_normal((T, N, C)))
    p = nd.array(rng.standard_normal(param_size(mode, layers, D, C, H)) * 0.3)
    h0 = nd.array(rng.standard_normal((layers * D, N, H)))
    args = [x, p, h0]
    if mode == "lstm":
        args.append(nd.array(rng.standard_normal((layers * D, N, H))))
    p.attach_grad()
    if want_data:
        x.attach_grad()
    seen = []

    def spy(op, inputs, attrs, outs):
        if op.name == "_rnn_backward":
            seen.append(attrs["data_grad"])

    dispatch._hooks.append(spy)
    try:
        with autograd.record():
            y = nd.RNN(*args, state_size=H, num_layers=layers, bidirectional=bidirectional,
                       mode=mode)
        y.backward(nd.array(rng.standard_normal(y.shape)))
    finally:
        dispatch._hooks.remove(spy)
    return p.grad.asnumpy(), (x.grad.asnumpy() if want_data else None), seen


@pytest.mark.parametrize("mode", ["lstm", "gru", "rnn_tanh"])
@pytest.mark.parametrize(("layers", "bidirectional"), [(1, False), (2, True)])
def test_parameter_gradients_do_not_depend_on_the_data_gradient(mode, layers, bidirectional):
    gp_with, gx, seen_with = _grads(mode, layers, bidirectional, True)
    gp_without, _, seen_without = _grads(mode, layers, bidirectional, False)
    assert seen_with == [True] and seen_without == [False]
    np.testing.assert_allclose(gp_without, gp_with, rtol=1e-12, atol=1e-12)
    assert gx is not None and np.abs(gx).sum() > 0


def test_hybridized_lstm_without_input_gradient_trains_the_same():
    from gluon import rnn

    def run(hybrid):
        layer = rnn.LSTM(6, input_size=4, num_layers=2)
        layer.initialize()
        for q in layer.collect_params().values():
            q.set_data(nd.array(np.random.default_rng(q.shape[0]).standard_normal(q.shape) * 0.2))
        if hybrid:
            layer.hybridize()
        x = nd.array(np.random.default_rng(1).standard_normal((5, 3, 4)))
        with autograd.record():
            loss = (layer(x) ** 2).sum()
        loss.backward()
        return [q.grad().asnumpy() for q in layer.collect_params().values()]

    for a, b in zip(run(False), run(True)):
        np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-7)
