"""CSVIter, LibSVMIter and MNISTIter (core.io): batching as MXNet's C++ iterators, errors."""
from __future__ import annotations

import gzip
import json
import struct

import numpy as np
import pytest

from core.io import CSVIter, LibSVMIter, MNISTIter
from tests.mxnet_ref import requires_mxnet, run_mxnet


def _write_csv(path, rows):
    path.write_text("".join(",".join(str(v) for v in r) + "\n" for r in rows))
    return str(path)


def _mnist(tmp_path, n=7, rows=4, cols=4, gz=False):
    imgs = (np.arange(n * rows * cols) % 256).astype(np.uint8)
    img = struct.pack(">iiii", 2051, n, rows, cols) + imgs.tobytes()
    lab = struct.pack(">ii", 2049, n) + np.arange(n).astype(np.uint8).tobytes()
    opener = gzip.open if gz else open
    with opener(tmp_path / "img", "wb") as f:
        f.write(img)
    with opener(tmp_path / "lab", "wb") as f:
        f.write(lab)
    return str(tmp_path / "img"), str(tmp_path / "lab")


def _epochs(it, n=3):
    out = []
    for _ in range(n):
        out.append([[b.data[0].asnumpy().tolist(), b.label[0].asnumpy().tolist(), b.pad,
                     [int(i) for i in b.index]] for b in it])
        it.reset()
    return out


def test_csv_round_batch_continues_after_the_overflow(tmp_path):
    d = _write_csv(tmp_path / "d.csv", [[i * 10 + j for j in range(4)] for i in range(5)])
    lab = _write_csv(tmp_path / "l.csv", [[i] for i in range(5)])
    it = CSVIter(data_csv=d, data_shape=(4,), label_csv=lab, batch_size=3)
    assert it.provide_label[0].shape == (3,) and it.provide_data[0].shape == (3, 4)
    ep = _epochs(it)
    assert [[b[3] for b in e] for e in ep] == [[[0, 1, 2], [3, 4, 0]], [[1, 2, 3], [4, 0, 1]],
                                               [[2, 3, 4]]]
    assert [b[2] for b in ep[1]] == [0, 2]
    assert it.iter_next() and it.getdata().shape == (3, 4)  # one NDArray, as MXDataIter


def test_csv_no_round_batch_and_shapes(tmp_path):
    d = _write_csv(tmp_path / "d.csv", [[i] * 4 for i in range(5)])
    it = CSVIter(data_csv=d, data_shape=(2, 2), batch_size=2, round_batch=False)
    batches = list(it)
    assert [b.pad for b in batches] == [0, 0, 1] and batches[0].data[0].shape == (2, 2, 2)
    assert batches[0].label[0].asnumpy().tolist() == [0, 0]
    it.reset()
    assert it.next().data[0].asnumpy()[0, 0, 0] == 0


@pytest.mark.parametrize("dtype,value", [("int32", 200000001), ("int64", 2147483648),
                                         ("float32", 1)])
def test_csv_dtypes(tmp_path, dtype, value):
    d = _write_csv(tmp_path / "d.csv", [[value] * 4] * 4)
    b = CSVIter(data_csv=d, data_shape=(2, 2), batch_size=2, dtype=dtype).next()
    assert b.data[0].dtype == np.dtype(dtype) and b.data[0].asnumpy()[0, 0, 0] == value


def test_csv_directory_reads_every_file(tmp_path):
    (tmp_path / "dir").mkdir()
    _write_csv(tmp_path / "dir" / "a.csv", [[1, 1]])
    _write_csv(tmp_path / "dir" / "b.csv", [[2, 2]])
    b = CSVIter(data_csv=str(tmp_path / "dir"), data_shape=(2,), batch_size=2).next()
    assert b.data[0].asnumpy().tolist() == [[1, 1], [2, 2]]


def test_csv_errors_name_file_and_field(tmp_path):
    d = _write_csv(tmp_path / "d.csv", [[1, 2, 3], [4, 5, 6]])
    with pytest.raises(FileNotFoundError, match="data_csv='nope.csv'"):
        CSVIter(data_csv="nope.csv", data_shape=(3,))
    with pytest.raises(ValueError, match=r"d.csv:1: data_csv row has 3 values .* \(2,\)"):
        CSVIter(data_csv=d, data_shape=(2,))
    lab = _write_csv(tmp_path / "l.csv", [[1]])
    with pytest.raises(ValueError, match="has 2 rows but label_csv=.* has 1"):
        CSVIter(data_csv=d, data_shape=(3,), label_csv=lab)
    with pytest.raises(ValueError, match="l.csv:1: label_csv row has 1 values"):
        CSVIter(data_csv=d, data_shape=(3,), label_csv=lab, label_shape=(2,))
    bad = tmp_path / "x.csv"
    bad.write_text("1,a\n")
    with pytest.raises(ValueError, match="x.csv:1: .*not a number"):
        CSVIter(data_csv=str(bad), data_shape=(2,))


SVM = "1.0 0:0.5 2:1.2\n-2.0\n-3.0 0:0.6 1:2.4 2:1.2\n4 2:-1.2\n"
SVM_LABEL = "1.0\n-2.0 0:0.125\n-3.0 2:1.2\n4 1:1.0 2:-1.2\n"


def test_libsvm_matches_mxnet_unit_test(tmp_path):
    (tmp_path / "d.t").write_text(SVM)
    (tmp_path / "l.t").write_text(SVM_LABEL)
    it = LibSVMIter(data_libsvm=str(tmp_path / "d.t"), label_libsvm=str(tmp_path / "l.t"),
                    data_shape=(3,), label_shape=(3,), batch_size=3)
    first = [[0.5, 0., 1.2], [0., 0., 0.], [0.6, 2.4, 1.2]]
    second = [[0., 0., -1.2], [0.5, 0., 1.2], [0., 0., 0.]]
    batches = list(it)
    np.testing.assert_allclose(batches[0].data[0].asnumpy(), first, rtol=1e-6)
    np.testing.assert_allclose(batches[1].data[0].asnumpy(), second, rtol=1e-6)
    assert batches[1].pad == 2 and batches[0].label[0].shape == (3, 3)
    np.testing.assert_allclose(batches[0].label[0].asnumpy()[1], [0.125, 0, 0])
    plain = LibSVMIter(data_libsvm=str(tmp_path / "d.t"), data_shape=(3,), batch_size=3)
    assert plain.next().label[0].asnumpy().tolist() == [1, -2, -3]


def test_libsvm_errors(tmp_path):
    (tmp_path / "d.t").write_text("1.0 0:0.5\n-3.0 -1:0.6 1:2.4\n")
    with pytest.raises(ValueError, match=r"d.t:2: data_libsvm feature index -1 is outside"):
        LibSVMIter(data_libsvm=str(tmp_path / "d.t"), data_shape=(3,), batch_size=1)
    (tmp_path / "e.t").write_text("1.0 0=0.5\n")
    with pytest.raises(ValueError, match="e.t:1: data_libsvm line is not"):
        LibSVMIter(data_libsvm=str(tmp_path / "e.t"), data_shape=(3,), batch_size=1)
    with pytest.raises(FileNotFoundError, match="label_libsvm"):
        (tmp_path / "ok.t").write_text("1 0:1\n")
        LibSVMIter(data_libsvm=str(tmp_path / "ok.t"), label_libsvm=str(tmp_path / "no"),
                   data_shape=(3,), batch_size=1)


def test_libsvm_parts(tmp_path):
    (tmp_path / "d.t").write_text("".join(f"{i} 0:{i}\n" for i in range(6)))
    it = LibSVMIter(data_libsvm=str(tmp_path / "d.t"), data_shape=(1,), batch_size=3,
                    num_parts=2, part_index=1)
    assert it.next().label[0].asnumpy().tolist() == [3, 4, 5]


@pytest.mark.parametrize("gz", [False, True])
def test_mnist_layouts_and_drop_last(tmp_path, gz):
    img, lab = _mnist(tmp_path, gz=gz)
    it = MNISTIter(image=img, label=lab, batch_size=3, shuffle=False, silent=True)
    batches = list(it)
    assert len(batches) == 2 and batches[0].data[0].shape == (3, 1, 4, 4)
    assert batches[1].label[0].asnumpy().tolist() == [3, 4, 5]
    np.testing.assert_allclose(batches[0].data[0].asnumpy().ravel()[:3], [0, 1 / 256, 2 / 256])
    flat = MNISTIter(image=img, label=lab, batch_size=3, shuffle=True, flat=True, seed=1,
                     silent=True)
    b = flat.next()
    assert b.data[0].shape == (3, 16)
    # shuffling keeps every image with its label (image i starts with pixel 16*i % 256)
    np.testing.assert_allclose(b.data[0].asnumpy()[:, 0] * 256, b.label[0].asnumpy() * 16)
    flat.reset()
    np.testing.assert_array_equal(flat.next().label[0].asnumpy(), b.label[0].asnumpy())


def test_mnist_errors(tmp_path):
    img, lab = _mnist(tmp_path)
    with pytest.raises(ValueError, match="magic number 2049 at offset 0, expected 2051"):
        MNISTIter(image=lab, label=lab, silent=True)
    with open(tmp_path / "short", "wb") as f:
        f.write(struct.pack(">iiii", 2051, 9, 4, 4) + b"\0" * 10)
    with pytest.raises(ValueError, match=r"truncated: .*144 bytes of \(9, 4, 4\)"):
        MNISTIter(image=str(tmp_path / "short"), label=lab, silent=True)
    with pytest.raises(FileNotFoundError, match="label="):
        MNISTIter(image=img, label=str(tmp_path / "none"), silent=True)
    with open(tmp_path / "lab5", "wb") as f:
        f.write(struct.pack(">ii", 2049, 5) + bytes(5))
    with pytest.raises(ValueError, match="holds 7 images but label=.* holds 5 labels"):
        MNISTIter(image=img, label=str(tmp_path / "lab5"), silent=True)


@requires_mxnet
def test_csv_and_mnist_match_real_mxnet(tmp_path):
    d = _write_csv(tmp_path / "d.csv", [[i * 10 + j for j in range(4)] for i in range(5)])
    lab = _write_csv(tmp_path / "l.csv", [[i] for i in range(5)])
    img, mlab = _mnist(tmp_path)
    code = f"""
import json, mxnet as mx
it = mx.io.CSVIter(data_csv={d!r}, data_shape=(4,), label_csv={lab!r}, batch_size=3)
out = []
for ep in range(3):
    out.append([[b.data[0].asnumpy().tolist(), b.label[0].asnumpy().tolist(), b.pad,
                 [int(i) for i in b.index]] for b in it])
    it.reset()
m = mx.io.MNISTIter(image={img!r}, label={mlab!r}, batch_size=3, shuffle=False, flat=True)
mb = [[b.data[0].asnumpy().tolist(), b.label[0].asnumpy().tolist()] for b in m]
print(json.dumps([out, str(it.provide_data), str(it.provide_label), mb, str(m.provide_data)]))
"""
    ref = json.loads(run_mxnet(code))
    it = CSVIter(data_csv=d, data_shape=(4,), label_csv=lab, batch_size=3)
    assert _epochs(it) == ref[0]
    assert [str(it.provide_data), str(it.provide_label)] == ref[1:3]
    m = MNISTIter(image=img, label=mlab, batch_size=3, shuffle=False, flat=True, silent=True)
    assert [[b.data[0].asnumpy().tolist(), b.label[0].asnumpy().tolist()] for b in m] == ref[3]
    assert str(m.provide_data) == ref[4]
