"""The layers of MXNet 1.9's ``gluon.contrib.nn.basic_layers``.

``Concurrent``/``HybridConcurrent`` run every child on the same input and concatenate
the outputs (MXNet 2.0's ``nn.Concatenate``/``nn.HybridConcatenate``); ``Identity`` is
``nn.Identity``; ``SyncBatchNorm`` (:mod:`.sync_batch_norm`) normalizes with the
statistics of the whole batch over all the devices; ``SparseEmbedding`` is an embedding whose weight and gradient
are row-sparse; ``PixelShuffle1D/2D/3D`` move channel groups into the spatial axes.
"""
from __future__ import annotations

from core import nd

from ...block import Block, HybridBlock
from ...nn import Concatenate, HybridConcatenate, Identity
from .sync_batch_norm import SyncBatchNorm

__all__ = ["Concurrent", "HybridConcurrent", "Identity", "PixelShuffle1D", "PixelShuffle2D",
           "PixelShuffle3D", "SparseEmbedding", "SyncBatchNorm"]


class Concurrent(Concatenate):
    """Feeds the input to every child and concatenates their outputs along ``axis``.

    Args:
        axis: the axis of concatenation (default -1).
        prefix, params: see :class:`gluon.Block`.

    Example:
        >>> from core import nd
        >>> from gluon import nn
        >>> net = Concurrent(axis=1)
        >>> net.add(nn.Dense(2), Identity())
        >>> net.initialize()
        >>> net(nd.ones((3, 4))).shape
        (3, 6)
    """


class HybridConcurrent(HybridConcatenate):
    """Feeds the input to every (hybrid) child and concatenates the outputs along ``axis``.

    Args:
        axis: the axis of concatenation (default -1).
        prefix, params: see :class:`gluon.Block`.

    Example:
        >>> from core import nd, sym
        >>> from gluon import nn
        >>> net = HybridConcurrent(axis=1)
        >>> net.add(nn.Dense(2, in_units=4), nn.Dense(3, in_units=4))
        >>> len(net(sym.var("data")).list_arguments())
        5
    """


class SparseEmbedding(Block):
    """An embedding whose weight and gradient are row-sparse (MXNet's ``SparseEmbedding``).

    The weight is a ``'row_sparse'`` parameter: a forward pulls the rows it needs
    (``Parameter.row_sparse_data``), which needs a ``gluon.Trainer`` created with it.

    Args:
        input_dim: the vocabulary size (largest index + 1).
        output_dim: the embedding size.
        dtype: the output type (default ``'float32'``).
        weight_initializer: the initializer of the ``(input_dim, output_dim)`` weight.
        **kwargs: ``prefix``, ``params`` (see :class:`gluon.Block`).

    Example:
        >>> emb = SparseEmbedding(10, 4)
        >>> emb, emb.weight.stype, emb.weight.grad_stype
        (SparseEmbedding(10 -> 4, float32), 'row_sparse', 'row_sparse')
    """

    def __init__(self, input_dim: int, output_dim: int, dtype="float32",
                 weight_initializer=None, **kwargs):
        super().__init__(**kwargs)
        self._kwargs = {"input_dim": input_dim, "output_dim": output_dim, "dtype": dtype,
                        "sparse_grad": True}
        self.weight = self.params.get("weight", shape=(input_dim, output_dim),
                                      init=weight_initializer, dtype=dtype,
                                      grad_stype="row_sparse", stype="row_sparse")

    def forward(self, x):
        weight = self.weight.row_sparse_data(x)
        return nd.Embedding(x, weight, **self._kwargs)

    def __repr__(self) -> str:
        k = self._kwargs
        return f"{type(self).__name__}({k['input_dim']} -> {k['output_dim']}, {k['dtype']})"


def _factors(name: str, factor, n: int) -> tuple:
    try:
        fs = (int(factor),) * n
    except TypeError:
        fs = tuple(int(f) for f in factor)
    if len(fs) != n or any(f < 1 for f in fs):
        raise ValueError(f"{name}: factor must be a positive int or a {n}-tuple of them, got "
                         f"{factor!r}")
    return fs


def _check_channels(name: str, x, group: int) -> None:
    shape = getattr(x, "shape", None)
    if shape and shape[1] and shape[1] % group:
        raise ValueError(f"{name}: the channel axis ({shape[1]}, input shape {tuple(shape)}) "
                         f"must be a multiple of the product of the factors ({group})")


class PixelShuffle1D(HybridBlock):
    """Moves channel groups into the width: ``(N, f*C, W)`` -> ``(N, C, W*f)``.

    Args:
        factor: the upsampling factor ``f`` (an int or a 1-tuple).

    Example:
        >>> from core import nd
        >>> PixelShuffle1D(2)(nd.arange(12).reshape((1, 4, 3)))[0, 0].asnumpy().tolist()
        [0.0, 3.0, 1.0, 4.0, 2.0, 5.0]
    """

    def __init__(self, factor):
        super().__init__()
        (self._factor,) = _factors("PixelShuffle1D", factor, 1)

    def hybrid_forward(self, F, x):
        f = self._factor
        _check_channels("PixelShuffle1D", x, f)
        x = F.reshape(x, (0, -4, -1, f, 0))          # (N, C, f, W)
        x = F.transpose(x, (0, 1, 3, 2))             # (N, C, W, f)
        return F.reshape(x, (0, 0, -3))              # (N, C, W*f)

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self._factor})"


class PixelShuffle2D(HybridBlock):
    """Moves channel groups into height and width: ``(N, f1*f2*C, H, W)`` ->
    ``(N, C, H*f1, W*f2)``.

    Args:
        factor: the factors ``(f1, f2)`` (an int for both).

    Example:
        >>> from core import nd
        >>> PixelShuffle2D(2)(nd.zeros((1, 8, 3, 3))).shape
        (1, 2, 6, 6)
    """

    def __init__(self, factor):
        super().__init__()
        self._factors = _factors("PixelShuffle2D", factor, 2)

    def hybrid_forward(self, F, x):
        f1, f2 = self._factors
        _check_channels("PixelShuffle2D", x, f1 * f2)
        x = F.reshape(x, (0, -4, -1, f1 * f2, 0, 0))  # (N, C, f1*f2, H, W)
        x = F.reshape(x, (0, 0, -4, f1, f2, 0, 0))    # (N, C, f1, f2, H, W)
        x = F.transpose(x, (0, 1, 4, 2, 5, 3))        # (N, C, H, f1, W, f2)
        return F.reshape(x, (0, 0, -3, -3))           # (N, C, H*f1, W*f2)

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self._factors})"


class PixelShuffle3D(HybridBlock):
    """Moves channel groups into depth, height and width: ``(N, f1*f2*f3*C, D, H, W)``
    -> ``(N, C, D*f1, H*f2, W*f3)``.

    Args:
        factor: the factors ``(f1, f2, f3)`` (an int for all three).

    Example:
        >>> from core import nd
        >>> PixelShuffle3D((2, 1, 2))(nd.zeros((1, 4, 2, 3, 4))).shape
        (1, 1, 4, 3, 8)
    """

    def __init__(self, factor):
        super().__init__()
        self._factors = _factors("PixelShuffle3D", factor, 3)

    def hybrid_forward(self, F, x):
        f1, f2, f3 = self._factors
        _check_channels("PixelShuffle3D", x, f1 * f2 * f3)
        x = F.reshape(x, (0, -4, -1, f1 * f2 * f3, 0, 0, 0))  # (N, C, f1*f2*f3, D, H, W)
        x = F.swapaxes(x, 2, 3)                               # (N, C, D, f1*f2*f3, H, W)
        x = F.reshape(x, (0, 0, 0, -4, f1, f2 * f3, 0, 0))    # (N, C, D, f1, f2*f3, H, W)
        x = F.reshape(x, (0, 0, -3, 0, 0, 0))                 # (N, C, D*f1, f2*f3, H, W)
        x = F.swapaxes(x, 3, 4)                               # (N, C, D*f1, H, f2*f3, W)
        x = F.reshape(x, (0, 0, 0, 0, -4, f2, f3, 0))         # (N, C, D*f1, H, f2, f3, W)
        x = F.reshape(x, (0, 0, 0, -3, 0, 0))                 # (N, C, D*f1, H*f2, f3, W)
        x = F.swapaxes(x, 4, 5)                               # (N, C, D*f1, H*f2, W, f3)
        return F.reshape(x, (0, 0, 0, 0, -3))                 # (N, C, D*f1, H*f2, W*f3)

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self._factors})"
