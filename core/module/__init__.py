"""MXNet 1.x's Module API (``mx.mod``): symbolic networks trained on the Executor.

- :class:`Module`: one Symbol bound to data shapes on one or several contexts;
- :class:`BucketingModule`: one Module per bucket key (e.g. sequence length), all
  sharing one set of parameters;
- :class:`SequentialModule`: modules chained, each one's outputs the next one's data;
- :class:`PythonModule`, :class:`PythonLossModule`: modules written in Python (a loss
  with a Python gradient at the end of a ``SequentialModule``);
- :class:`BaseModule`: the shared ``fit``/``score``/``predict`` loops.

Example:
    >>> import numpy as np
    >>> from core import io, sym
    >>> from core import module as mod
    >>> net = sym.LinearRegressionOutput(
    ...     sym.FullyConnected(sym.var("data"), num_hidden=1, name="fc"), name="lro")
    >>> m = mod.Module(net, label_names=["lro_label"])
    >>> x = np.random.RandomState(0).rand(32, 2).astype("float32")
    >>> it = io.NDArrayIter(x, x.sum(axis=1, keepdims=True), batch_size=8,
    ...                     label_name="lro_label")
    >>> m.fit(it, num_epoch=30, eval_metric="mse", optimizer_params={"learning_rate": 0.5})
    >>> m.score(it, "mse")[0][1] < 0.01
    True
"""
from .base_module import BaseModule
from .bucketing_module import BucketingModule
from .module import Module
from .python_module import PythonLossModule, PythonModule
from .sequential_module import SequentialModule

__all__ = ["BaseModule", "BucketingModule", "Module", "PythonLossModule", "PythonModule",
           "SequentialModule"]
