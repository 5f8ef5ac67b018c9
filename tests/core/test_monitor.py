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
