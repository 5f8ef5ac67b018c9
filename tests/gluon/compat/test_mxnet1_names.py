"""MXNet 1.x module names under the alias that MXNet's own tests import: mxnet.runtime,
mxnet.ndarray.ndarray, mxnet.ndarray.sparse, mxnet.base's type tuples, the NumPy-mode
switches at the root, gluon.nn.SymbolBlock and nd.reset_arrays."""
from __future__ import annotations

import numpy as np
import pytest

from gluon.compat import mxnet as alias


@pytest.fixture
def mx():
    was = alias.is_installed()
    alias.install()
    import mxnet

    yield mxnet
    if not was:
        alias.uninstall()


def test_runtime_features(mx):
    from mxnet import runtime

    feats = runtime.Features()
    assert feats.is_enabled("int64_tensor_size") and not feats.is_enabled("MKLDNN")
    assert feats.is_enabled("CUDA") == (mx.num_gpus() > 0)
    assert [f.name for f in runtime.feature_list()][:2] == ["CUDA", "CUDNN"]
    with pytest.raises(RuntimeError, match="Feature 'NOPE' is unknown"):
        feats.is_enabled("NOPE")


def test_ndarray_module_and_base_names(mx):
    from mxnet.base import integer_types, numeric_types, string_types
    from mxnet.ndarray.ndarray import _STORAGE_TYPE_STR_TO_ID, NDArray, py_slice

    assert _STORAGE_TYPE_STR_TO_ID == {"undefined": -1, "default": 0, "row_sparse": 1, "csr": 2}
    assert isinstance(mx.nd.ones(2), NDArray) and py_slice is slice
    assert isinstance(np.int64(3), integer_types) and isinstance(2.5, numeric_types)
    assert isinstance("a", string_types)


def test_sparse_module_builds_sparse_arrays(mx):
    import mxnet.ndarray.sparse as mxsps

    assert mxsps.zeros("default", (2, 3)).shape == (2, 3)
    a = mxsps.csr_matrix(([1.0], [0], [0, 1]), shape=(1, 1))
    assert isinstance(a, mxsps.CSRNDArray) and a.asnumpy().tolist() == [[1.0]]
    assert isinstance(mxsps.zeros("row_sparse", (2, 3)), mxsps.RowSparseNDArray)
    assert not isinstance(mx.nd.ones(2), mxsps.CSRNDArray)


def test_np_shape_switches_at_the_root(mx):
    assert not mx.is_np_shape()
    with mx.np_shape(True):
        assert mx.is_np_shape()
    assert not mx.is_np_shape()


def test_nn_symbolblock_and_reset_arrays(mx):
    from mxnet.gluon import SymbolBlock, nn

    assert nn.SymbolBlock is SymbolBlock
    a, b = mx.nd.ones((2, 2)), mx.nd.ones(3)
    mx.nd.reset_arrays(a, b, num_arrays=2)
    assert a.asnumpy().sum() == 0 and b.asnumpy().sum() == 0
    with pytest.raises(ValueError, match="reset_arrays: num_arrays=3 but 2 arrays"):
        mx.nd.reset_arrays(a, b, num_arrays=3)
