"""MXNet 1.x's ``mx.contrib.tensorboard``: ``LogMetricsCallback`` writes metrics as
TensorBoard scalars.

The event files are written by the first of ``mxboard``, ``tensorboardX`` and
``torch.utils.tensorboard`` that imports (MXNet uses ``mxboard``); none of them is a
dependency of kbackend.
"""
from __future__ import annotations

import importlib

__all__ = ["LogMetricsCallback"]

_WRITERS = ("mxboard", "tensorboardX", "torch.utils.tensorboard")


def _summary_writer(logging_dir: str):
    for name in _WRITERS:
        try:
            module = importlib.import_module(name)
        except ImportError:
            continue
        return module.SummaryWriter(logging_dir)
    raise ImportError("LogMetricsCallback: writing TensorBoard event files needs one of "
                      f"{', '.join(_WRITERS)} (e.g. `pip install mxboard` or `pip install "
                      "tensorboardX`)")


class LogMetricsCallback:
    """A batch-end or eval-end callback that logs ``param.eval_metric``'s values as
    scalars, at step ``param.epoch`` (MXNet's ``contrib.tensorboard.LogMetricsCallback``).

    Args:
        logging_dir: the folder of the TensorBoard event files.
        prefix: prepended to each metric's name (``'<prefix>-<name>'``).

    Raises:
        ImportError: no TensorBoard writer package is installed.

    Example:
        >>> import sys, types
        >>> logged = []
        >>> class Writer:
        ...     def __init__(self, logdir): pass
        ...     def add_scalar(self, name, value, global_step): logged.append((name, value))
        >>> sys.modules["mxboard"] = types.SimpleNamespace(SummaryWriter=Writer)
        >>> from core import metric, nd
        >>> acc = metric.Accuracy()
        >>> acc.update([nd.array([1, 0])], [nd.array([[0.1, 0.9], [0.8, 0.2]])])
        >>> LogMetricsCallback("logs", prefix="train")(types.SimpleNamespace(eval_metric=acc,
        ...                                                                  epoch=0))
        >>> del sys.modules["mxboard"]
        >>> logged
        [('train-accuracy', 1.0)]
    """

    def __init__(self, logging_dir: str, prefix: str | None = None):
        self.prefix = prefix
        self.summary_writer = _summary_writer(logging_dir)

    def __call__(self, param) -> None:
        if param.eval_metric is None:
            return
        for name, value in param.eval_metric.get_name_value():
            if self.prefix is not None:
                name = f"{self.prefix}-{name}"
            self.summary_writer.add_scalar(name, value, global_step=param.epoch)
