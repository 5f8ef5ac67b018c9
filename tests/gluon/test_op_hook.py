"""HybridBlock.register_op_hook (gluon/hybrid.py monitored_call): MXNet 1.9's node and
input names, the same results and gradients as the compiled call, deferred init."""
import numpy as np

from core import autograd, nd
from gluon import nn


def _model():
    model = nn.HybridSequential(prefix="dense_")
    with model.name_scope():
        model.add(nn.Dense(2))
        model.add(nn.Activation("relu"))
    model.initialize()
    return model


def _record(model, x, monitor_all):
    seen = []
    model.register_op_hook(lambda name, op, arr: seen.append((name.decode(), op.decode(),
                                                                arr.shape)), monitor_all)
    out = model(x)
    return seen, out


def test_names_are_mxnets_and_inputs_come_first_with_monitor_all():
    model = _model()
    model.hybridize()
    x = nd.ones((2, 3, 4))
    seen, _ = _record(model, x, True)
    assert [s[0] for s in seen] == [
        "dense_dense0_fwd_data", "dense_dense0_fwd_weight", "dense_dense0_fwd_bias",
        "dense_dense0_fwd_output", "dense_relu0_fwd_input0", "dense_relu0_fwd_output"]
    assert seen[3][1:] == ("FullyConnected", (2, 2)) and seen[5][1] == "Activation"
    seen, _ = _record(model, x, False)
    assert [s[0] for s in seen] == ["dense_dense0_fwd_output", "dense_relu0_fwd_output"]


def test_hooked_call_equals_the_compiled_call_and_trains():
    model = _model()
    model.hybridize()
    x = nd.array(np.random.default_rng(0).normal(size=(3, 5)).astype("float32"))
    want = model(x).asnumpy()  # compiled, deferred init done here
    w = model[0].weight
    with autograd.record():
        model(x).sum().backward()
    want_grad = w.grad().asnumpy().copy()
    _, got = _record(model, x, False)
    np.testing.assert_allclose(got.asnumpy(), want, rtol=1e-6)
    with autograd.record():
        model(x).sum().backward()
    np.testing.assert_allclose(w.grad().asnumpy(), want_grad, rtol=1e-6)


def test_hook_before_the_first_call_completes_deferred_initialization():
    model = _model()
    model.hybridize()
    seen, out = _record(model, nd.ones((4, 7)), False)
    assert model[0].weight.shape == (2, 7) and out.shape == (4, 2) and len(seen) == 2


def test_not_hybridized_runs_without_the_hook():
    model = _model()
    seen, out = _record(model, nd.ones((4, 7)), True)
    assert seen == [] and out.shape == (4, 2)
