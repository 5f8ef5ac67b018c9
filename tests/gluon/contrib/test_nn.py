"""gluon.contrib.nn: Concurrent, HybridConcurrent, Identity, PixelShuffle, SparseEmbedding."""
import numpy as np
import pytest

from core import nd, sym
from gluon import nn
from gluon.contrib import nn as cnn


def _dense_pair(block):
    block.add(nn.Dense(4, in_units=3), nn.Dense(2, in_units=3), cnn.Identity())
    block.initialize()
    return block


@pytest.mark.parametrize("hybridize", [False, True])
def test_hybrid_concurrent_concatenates_children_on_axis(hybridize):
    net = _dense_pair(cnn.HybridConcurrent(axis=1))
    if hybridize:
        net.hybridize()
    x = nd.array(np.random.RandomState(0).randn(5, 3).astype("float32"))
    want = np.concatenate([c(x).asnumpy() for c in net._children.values()], axis=1)
    np.testing.assert_allclose(net(x).asnumpy(), want, rtol=1e-6)
    assert net(x).shape == (5, 9)


def test_concurrent_and_symbolic_arguments():
    net = _dense_pair(cnn.Concurrent(axis=-1))
    assert net(nd.zeros((2, 3))).shape == (2, 9)
    hyb = cnn.HybridConcurrent(axis=1)
    hyb.add(nn.Dense(4, in_units=3), nn.Dense(2, in_units=3))
    assert len(hyb(sym.var("data")).list_arguments()) == 5


def _pixel_shuffle_ref(x, factors):
    n, c = x.shape[:2]
    spatial = x.shape[2:]
    k = len(factors)
    oc = c // int(np.prod(factors))
    y = x.reshape((n, oc) + tuple(factors) + spatial)
    # (N, C, f1..fk, d1..dk) -> (N, C, d1, f1, d2, f2, ...)
    order = [0, 1] + [a for i in range(k) for a in (2 + k + i, 2 + i)]
    return y.transpose(order).reshape((n, oc) + tuple(d * f for d, f in zip(spatial, factors)))


@pytest.mark.parametrize("cls,factors,shape", [
    (cnn.PixelShuffle1D, (2,), (1, 4, 3)),
    (cnn.PixelShuffle2D, (2, 3), (2, 12, 2, 3)),
    (cnn.PixelShuffle3D, (2, 1, 2), (1, 8, 2, 3, 4)),
])
def test_pixel_shuffle_matches_numpy(cls, factors, shape):
    x = np.arange(np.prod(shape), dtype="float32").reshape(shape)
    layer = cls(factors if len(factors) > 1 else factors[0])
    np.testing.assert_array_equal(layer(nd.array(x)).asnumpy(), _pixel_shuffle_ref(x, factors))
    layer.hybridize()
    np.testing.assert_array_equal(layer(nd.array(x)).asnumpy(), _pixel_shuffle_ref(x, factors))


def test_pixel_shuffle_mxnet_values_and_errors():
    y = cnn.PixelShuffle1D(2)(nd.arange(12).reshape((1, 4, 3)))
    assert y.asnumpy().tolist() == [[[0, 3, 1, 4, 2, 5], [6, 9, 7, 10, 8, 11]]]
    with pytest.raises(ValueError, match=r"PixelShuffle2D: the channel axis \(5"):
        cnn.PixelShuffle2D(2)(nd.zeros((1, 5, 2, 2)))
    with pytest.raises(ValueError, match="3-tuple"):
        cnn.PixelShuffle3D((2, 2))
    assert repr(cnn.PixelShuffle2D(2)) == "PixelShuffle2D((2, 2))"


def test_sync_batchnorm_and_identity_are_gluon_nn_classes():
    assert issubclass(cnn.SyncBatchNorm, nn.SyncBatchNorm)
    assert issubclass(cnn.SyncBatchNorm, nn.BatchNorm)
    assert cnn.Identity is nn.Identity


def test_sparse_embedding_declares_row_sparse_weight():
    emb = cnn.SparseEmbedding(10, 3, weight_initializer="ones")
    assert emb.weight.shape == (10, 3)
    assert emb.weight.stype == "row_sparse" and emb.weight.grad_stype == "row_sparse"
    assert repr(emb) == "SparseEmbedding(10 -> 3, float32)"
