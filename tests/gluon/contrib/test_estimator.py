"""gluon.contrib.estimator: Estimator.fit/evaluate and the event handlers (MXNet 1.9's)."""
import os
import warnings

import numpy as np
import pytest

from core import cpu, gpu, metric
from gluon import Trainer, loss, nn
from gluon.contrib.estimator import (
    BatchEnd,
    CheckpointHandler,
    EarlyStoppingHandler,
    EpochEnd,
    Estimator,
    LoggingHandler,
    TrainBegin,
)
from gluon.contrib.estimator.estimator import ContextUnavailableError
from gluon.data import ArrayDataset, DataLoader


def _data(n=32, batch=8):
    rs = np.random.RandomState(0)
    x = rs.randn(n, 4).astype("float32")
    y = (x @ np.array([1.0, -2.0, 0.5, 3.0], "float32"))[:, None]
    return DataLoader(ArrayDataset(x, y), batch_size=batch)


def _est(net=None, **kw):
    net = net or nn.Dense(1, in_units=4)
    net.initialize()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        est = Estimator(net, loss.L2Loss(), trainer=Trainer(net.collect_params(), "sgd",
                                                            {"learning_rate": 0.1}), **kw)
    est.logger.disabled = True
    return est


class _Recorder(TrainBegin, BatchEnd, EpochEnd):
    def __init__(self):
        self.events = []

    def train_begin(self, estimator, *args, **kwargs):
        self.events.append("train_begin")

    def batch_end(self, estimator, *args, **kwargs):
        self.events.append("batch")

    def epoch_end(self, estimator, *args, **kwargs):
        self.events.append("epoch")


def test_fit_trains_and_counts_epochs_and_batches():
    est = _est(train_metrics=metric.MSE())
    rec = _Recorder()
    est.fit(_data(), epochs=3, event_handlers=[rec])
    assert rec.events.count("batch") == 12 and rec.events.count("epoch") == 3
    assert est.train_metrics[0].name == "training mse"
    first = est.train_metrics[0].get()[1]
    est.fit(_data(), epochs=20)
    assert est.train_metrics[0].get()[1] < first / 10  # the regression converges
    rec = _Recorder()
    est.fit(_data(), batches=6, event_handlers=[rec])
    assert rec.events.count("batch") == 6 and rec.events.count("epoch") == 2


def test_default_metrics_and_evaluate():
    net = nn.Dense(3, in_units=4)
    net.initialize()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        est = Estimator(net, loss.SoftmaxCrossEntropyLoss())
    assert [m.name for m in est.train_metrics] == ["training accuracy",
                                                   "training softmaxcrossentropyloss"]
    assert [m.name for m in est.val_metrics] == ["validation accuracy",
                                                 "validation softmaxcrossentropyloss"]
    est.logger.disabled = True
    x = np.random.RandomState(1).randn(12, 4).astype("float32")
    est.evaluate(DataLoader(ArrayDataset(x, np.arange(12) % 3), batch_size=4))
    assert 0 <= est.val_metrics[0].get()[1] <= 1
    assert est.trainer.learning_rate == 0.001


def test_validation_runs_each_epoch_and_logging_writes(capsys):
    est = _est(train_metrics=metric.MSE())
    est.logger.disabled = False
    est.fit(_data(), val_data=_data(16), epochs=2,
            event_handlers=[LoggingHandler(log_interval=2, metrics=est.train_metrics)])
    out = capsys.readouterr().out
    assert "Training begin: using optimizer SGD" in out and "[Epoch 1][Batch 2]" in out
    assert not np.isnan(est.val_metrics[0].get()[1])


def test_early_stopping_stops_when_the_monitor_stops_improving():
    est = _est(train_metrics=metric.MSE())
    stop = EarlyStoppingHandler(monitor=est.train_metrics[0], mode="max", patience=1)
    est.fit(_data(), epochs=50, event_handlers=[stop])
    assert stop.stop_training and stop.current_epoch == 2  # MSE falls: never "improves"


def test_checkpoints_keep_the_last_and_resume(tmp_path):
    net = nn.HybridSequential()
    net.add(nn.Dense(1, in_units=4))
    net.hybridize()
    est = _est(net, train_metrics=metric.MSE())
    ck = CheckpointHandler(str(tmp_path), model_prefix="m", epoch_period=None, batch_period=2,
                           max_checkpoints=2)
    est.fit(_data(), batches=9, event_handlers=[ck])
    names = sorted(os.listdir(tmp_path))
    assert names == ["m-epoch1batch5.params", "m-epoch1batch5.states",
                     "m-epoch1batch7.params", "m-epoch1batch7.states", "m-symbol.json"]
    resume = CheckpointHandler(str(tmp_path), model_prefix="m", epoch_period=None,
                               batch_period=2, resume_from_checkpoint=True)
    rec = _Recorder()
    est.fit(_data(), batches=12, event_handlers=[resume, rec])
    assert rec.events.count("batch") == 12 - 7 - 1


def test_errors_name_what_is_wrong():
    est = _est()
    with pytest.raises(ValueError, match="Gluon DataLoader"):
        est.fit([1, 2], epochs=1)
    with pytest.raises(ValueError, match="exactly one type of iteration"):
        est.fit(_data(), epochs=1, batches=2)
    with pytest.raises(ValueError, match="loss must be a Loss"):
        Estimator(nn.Dense(1), "l2")
    with pytest.raises(ValueError, match="context must be a Context"):
        _est(context="cpu")
    with pytest.raises(ContextUnavailableError, match=r"gpu\(100\) is not available"):
        _est(context=[cpu(0), gpu(100)])
    with pytest.raises(ValueError, match="handlers must be an EventHandler"):
        est.fit(_data(), epochs=1, event_handlers=[object()])
    with pytest.raises(ValueError, match="outside of the known training"):
        est.fit(_data(), epochs=1, event_handlers=[LoggingHandler(metrics=[metric.MAE()])])
