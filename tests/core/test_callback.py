"""core.callback: the training callbacks, alone and inside Module.fit."""
from __future__ import annotations

import logging

import numpy as np

from core import callback, io, metric, nd
from core.model import BatchEndParam
from core.module import Module
from tests.core.module._nets import data, mlp


def _param(n, m=None, epoch=0):
    return BatchEndParam(epoch=epoch, nbatch=n, eval_metric=m, locals=None)


def test_speedometer_logs_every_frequent_batches(caplog):
    acc = metric.Accuracy()
    acc.update([nd.array([1, 0])], [nd.array([[0, 1], [1, 0]])])
    speed = callback.Speedometer(batch_size=4, frequent=2)
    with caplog.at_level(logging.INFO):
        for n in range(5):
            speed(_param(n, acc))
    lines = [r.getMessage() for r in caplog.records]
    assert len(lines) == 2
    assert lines[0].startswith("Epoch[0] Batch [0-2]\tSpeed: ") and "accuracy=1.0" in lines[0]
    assert acc.num_inst == 0  # auto_reset cleared the local statistics
    caplog.clear()
    no_reset = callback.Speedometer(batch_size=4, frequent=2, auto_reset=False)
    with caplog.at_level(logging.INFO):
        for n in range(3):
            no_reset(_param(n, None))
    assert caplog.records[0].getMessage().startswith("Iter[0] Batch [2]\tSpeed:")


def test_log_train_metric_progress_bar_validation(caplog):
    acc = metric.Accuracy()
    acc.update([nd.array([1])], [nd.array([[0, 1]])])
    with caplog.at_level(logging.INFO):
        callback.log_train_metric(2)(_param(2, acc))
        callback.log_train_metric(2)(_param(3, acc))
        callback.ProgressBar(total=4, length=8)(_param(2))
        callback.LogValidationMetricsCallback()(_param(0, acc, epoch=3))
    msgs = [r.getMessage() for r in caplog.records]
    assert msgs[0] == "Iter[0] Batch[2] Train-accuracy=1.000000"
    assert msgs[1] == "[====----] 50%\r"
    assert msgs[2] == "Epoch[3] Validation-accuracy=1.000000"


def test_checkpoint_callbacks_in_fit(tmp_path, caplog):
    x, y = data()
    it = io.NDArrayIter(x, y, batch_size=20)
    m = Module(mlp())
    prefix = str(tmp_path / "run")
    with caplog.at_level(logging.INFO):
        m.fit(it, num_epoch=4, epoch_end_callback=[callback.do_checkpoint(prefix, period=2),
                                                   callback.module_checkpoint(
                                                       m, prefix + "m", 3, True)],
              batch_end_callback=callback.Speedometer(20, frequent=1))
    names = sorted(p.name for p in tmp_path.iterdir())
    assert names == ["run-0002.params", "run-0004.params", "run-symbol.json",
                     "runm-0003.params", "runm-0003.states", "runm-symbol.json"]
    assert "Speed:" in caplog.text
    from core.model import load_checkpoint
    _, args, _ = load_checkpoint(prefix, 4)
    np.testing.assert_allclose(args["fc1_weight"].asnumpy(),
                               m.get_params()[0]["fc1_weight"].asnumpy())
