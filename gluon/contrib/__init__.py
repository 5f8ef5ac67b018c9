"""MXNet 1.9's ``gluon.contrib``: layers, cells and tools kept for MXNet 1.x code.

* :mod:`gluon.contrib.nn`: ``Concurrent``, ``HybridConcurrent``, ``Identity``,
  ``SparseEmbedding``, ``SyncBatchNorm``, ``PixelShuffle1D/2D/3D``.
* :mod:`gluon.contrib.rnn`: ``Conv1D/2D/3DRNNCell``, ``Conv*LSTMCell``,
  ``Conv*GRUCell``, ``VariationalDropoutCell``, ``LSTMPCell``, ``dynamic_unroll``.
* :mod:`gluon.contrib.cnn`: ``DeformableConvolution``, ``ModulatedDeformableConvolution``.
* :mod:`gluon.contrib.data`: ``IntervalSampler``, ``text.WikiText2``/``WikiText103``
  (from local files).
* :mod:`gluon.contrib.estimator`: ``Estimator`` with ``fit``/``evaluate`` and event
  handlers.

Example:
    >>> from core import nd
    >>> from gluon import contrib, nn
    >>> net = contrib.nn.HybridConcurrent(axis=1)
    >>> net.add(nn.Dense(3), contrib.nn.Identity())
    >>> net.initialize()
    >>> net(nd.ones((2, 4))).shape
    (2, 7)
"""
from . import cnn, data, nn, rnn

__all__ = ["cnn", "data", "estimator", "nn", "rnn"]


def __getattr__(name: str):
    if name == "estimator":  # imported on first use (it pulls in the metrics and the Trainer)
        import importlib

        return importlib.import_module(f"{__name__}.estimator")
    raise AttributeError(f"module 'gluon.contrib' has no attribute {name!r}")
