"""core.monitor.Monitor: statistics of internals, arguments and aux states."""
from __future__ import annotations

import logging
import math

import numpy as np
import pytest

from core import io, nd, sym
from core.module import Module
from core.monitor import Monitor
from tests.core.module._nets import data, mlp
from tests.mxnet_ref import requires_mxnet, run_mxnet


def test_monitor_records_on_its_interval():
    net = sym.Activation(sym.FullyConnected(sym.var("data"), num_hidden=2, name="fc"),
                         act_type="relu", name="relu")
    ex = net.simple_bind(None, data=(3, 4))
    ex.arg_dict["data"][:] = np.arange(12).reshape(3, 4)
    ex.arg_dict["fc_weight"][:] = 0.1
    mon = Monitor(2, pattern=".*", sort=True)
    mon.install(ex)
    steps = []
    for _ in range(4):
        mon.tic()
        ex.forward()
        steps.append(mon.toc())
    assert steps[1] == [] and steps[3] == []
    names = [k for _, k, _ in steps[0]]
    assert names == sorted(names) and "fc_output" in names and "fc_weight" in names
    fc_out = ex.outputs[0].asnumpy()  # relu_output; fc's output is positive here
    got = {k: float(v) for _, k, v in steps[0]}
    assert got["relu_output"] == pytest.approx(np.linalg.norm(fc_out) / math.sqrt(6), rel=1e-5)
    assert steps[0][0][0] == 1 and steps[2][0][0] == 3


def test_monitor_in_fit_with_custom_stat(caplog):
    x, y = data()
    it = io.NDArrayIter(x, y, batch_size=20)
    mon = Monitor(1, stat_func=lambda a: nd.array([a.shape[0]]), pattern="fc1.*")
    m = Module(mlp(batchnorm=True))
    with caplog.at_level(logging.INFO):
        m.fit(it, num_epoch=1, monitor=mon)
    lines = [r.getMessage() for r in caplog.records if r.getMessage().startswith("Batch:")]
    assert any("fc1_output" in line and "20.0" in line for line in lines)
    assert any("fc1_weight" in line and "16.0" in line for line in lines)
    assert not any("fc2" in line for line in lines)
    # the monitor's extra run did not touch the moving statistics twice
    m2 = Module(mlp(batchnorm=True))
    m2.bind(it.provide_data, it.provide_label)
    m2.init_params()


def test_monitor_rejects_bad_interval():
    with pytest.raises(ValueError, match="interval"):
        Monitor(0)


MXNET_MONITOR_SCRIPT = """
from functools import reduce
data = mx.nd.array([[0.05, .10]]); label = mx.nd.array([[.01, 0.99]])
train_data = mx.io.NDArrayIter(data, label, batch_size=1)
x = mx.symbol.Variable('data')
x = mx.symbol.FullyConnected(name='fc_0', data=x, num_hidden=2)
x = mx.symbol.Activation(name="act_0", data=x, act_type='sigmoid')
x = mx.symbol.FullyConnected(name='fc_1', data=x, num_hidden=2)
x = mx.symbol.Activation(name="act_1", data=x, act_type='sigmoid')
x = mx.symbol.LinearRegressionOutput(data=x, name='softmax', grad_scale=2)
def mean_abs(x):
    return mx.nd.sum(mx.nd.abs(x)) / reduce(lambda a, b: a * b, x.shape)
mon = mx.mon.Monitor(1, stat_func=mean_abs, pattern='.*', sort=True)
mod = mx.mod.Module(x, context=[mx.cpu()])
mod.bind(train_data.provide_data, label_shapes=train_data.provide_label, for_training=True)
mod.install_monitor(mon)
mod.init_params(arg_params={'fc_0_weight': mx.nd.array([[.15, .20], [.25, .30]]),
                            'fc_0_bias': mx.nd.array([.35, .35]),
                            'fc_1_weight': mx.nd.array([[.40, .45], [.50, .55]]),
                            'fc_1_bias': mx.nd.array([.60, .60])})
mon.tic()
mod.forward_backward(next(iter(train_data)))
res = [(n, k, float(v.split()[0])) for n, k, v in mon.toc()]
"""


@requires_mxnet
def test_forward_and_backward_entries_match_real_mxnet():
    import json

    from gluon.compat import mxnet as alias
    ref = json.loads(run_mxnet("import mxnet as mx, json\n" + MXNET_MONITOR_SCRIPT
                               + "print(json.dumps(res))"))
    was_installed = alias.is_installed()
    if not was_installed:
        alias.install(force=True)
    try:
        import mxnet as mx
        scope = {"mx": mx}
        exec(MXNET_MONITOR_SCRIPT, scope)  # noqa: S102 - our own test script
        ours = scope["res"]
    finally:
        if not was_installed:
            alias.uninstall()
    assert [k for _, k, _ in ours] == [k for _, k, _ in ref]
    assert len(ours) == 21
    # gradients MXNet does not need (of data and label) hold whatever its buffer held
    skip = {"fc_0_backward_output0", "softmax_backward_output1"}
    for (n, k, v), (rn, rk, rv) in zip(ours, ref):
        assert n == rn
        if k not in skip:
            assert v == pytest.approx(rv, rel=1e-5), k
