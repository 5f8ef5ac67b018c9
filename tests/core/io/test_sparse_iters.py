"""NDArrayIter over csr data and LibSVMIter's csr batches (MXNet 1.9.1's rules)."""
import numpy as np
import pytest
import scipy.sparse as spsp

from core import nd
from core.io import LibSVMIter, NDArrayIter
from core.io.libsvm_iter import LibSVMFormatError
from core.ops.dispatch import MXNetError


def _csr(rng, shape):
    x = rng.standard_normal(shape).astype(np.float32)
    x[rng.random(shape) > 0.4] = 0
    return x


@pytest.mark.parametrize("kind", ["csrndarray", "scipy"])
def test_ndarrayiter_csr_batches(kind):
    x = _csr(np.random.default_rng(0), (7, 5))
    src = nd.array(x).tostype("csr") if kind == "csrndarray" else spsp.csr_matrix(x)
    with pytest.raises(NotImplementedError, match="discard"):
        NDArrayIter(src, x, 2)
    it = NDArrayIter({"csr": src, "dns": x}, np.arange(7), 3, last_batch_handle="discard")
    batches = list(it)
    assert len(batches) == 2
    for i, b in enumerate(batches):
        assert b.data[0].stype == "csr" and b.data[1].stype == "default"
        np.testing.assert_array_equal(b.data[0].asnumpy(), x[3 * i:3 * i + 3])
        b.data[0].check_format()
    with pytest.raises(StopIteration):
        it.next()


def test_ndarrayiter_csr_shuffle_keeps_rows_together():
    x = _csr(np.random.default_rng(1), (8, 4))
    x[:, 0] = np.arange(8)  # row ids in column 0
    np.random.seed(3)
    it = NDArrayIter({"a": nd.array(x).tostype("csr"), "b": x}, None, 4, shuffle=True,
                     last_batch_handle="discard")
    for b in it:
        np.testing.assert_array_equal(b.data[0].asnumpy(), b.data[1].asnumpy())
        assert not b.label


def test_libsvm_batches_are_csr(tmp_path):
    data = tmp_path / "data.t"
    data.write_text("1.0 0:0.5 2:1.2\n-2.0\n-3.0 2:1.2 0:0.6 1:2.4\n4 2:-1.2\n")
    label = tmp_path / "label.t"
    label.write_text("1.0\n-2.0 0:0.125\n-3.0 2:1.2\n4 1:1.0 2:-1.2\n")
    it = LibSVMIter(data_libsvm=str(data), label_libsvm=str(label), data_shape=(3,),
                    label_shape=(3,), batch_size=3)
    first = [[0.5, 0, 1.2], [0, 0, 0], [0.6, 2.4, 1.2]]
    second = [[0, 0, -1.2], [0.5, 0, 1.2], [0, 0, 0]]
    got = []
    for b in it:
        d = it.getdata()
        assert d.stype == "csr" and b.label[0].stype == "csr"
        d.check_format(True)  # unsorted columns in the file are sorted
        got.append(d.asnumpy())
    np.testing.assert_allclose(got[0], first, rtol=1e-6)
    np.testing.assert_allclose(got[1], second, rtol=1e-6)
    plain = LibSVMIter(data_libsvm=str(data), data_shape=(3,), batch_size=2)
    b = next(plain)
    assert b.label[0].stype == "default" and b.label[0].asnumpy().tolist() == [1.0, -2.0]


def test_libsvm_bad_index_is_mxnet_error(tmp_path):
    data = tmp_path / "bad.t"
    data.write_text("1.0 0:0.5\n-3.0 -1:0.6 1:2.4\n")
    with pytest.raises(MXNetError, match=r"bad.t:2: data_libsvm feature index -1"):
        LibSVMIter(data_libsvm=str(data), data_shape=(3,), batch_size=1)
    with pytest.raises(LibSVMFormatError):
        LibSVMIter(data_libsvm=str(data), data_shape=(3,), batch_size=1)
