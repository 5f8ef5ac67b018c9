"""gluon.data.vision datasets read tiny synthetic files in the MNIST / CIFAR formats."""
import gzip
import os
import struct
import tarfile

import numpy as np
import pytest

from core import NDArray
from gluon.data import DataLoader
from gluon.data.vision import CIFAR10, CIFAR100, MNIST, FashionMNIST


# ---------------------------------------------------------------------- file writers
def _write_idx(path, array, gz):
    array = np.asarray(array, np.uint8)
    header = struct.pack(">BBBB", 0, 0, 0x08, array.ndim)
    header += struct.pack(f">{array.ndim}I", *array.shape)
    opener = gzip.open if gz else open
    with opener(path, "wb") as f:
        f.write(header + array.tobytes())


def _write_mnist(root, n_train=5, n_test=3, gz=True, dot_names=False, size=(28, 28)):
    rng = np.random.default_rng(0)
    out = {}
    for prefix, n in (("train", n_train), ("t10k", n_test)):
        images = rng.integers(0, 256, (n,) + size, dtype=np.uint8)
        labels = rng.integers(0, 10, n, dtype=np.uint8)
        for kind, arr, dims in (("images", images, 3), ("labels", labels, 1)):
            name = f"{prefix}-{kind}-idx{dims}-ubyte"
            if dot_names:
                name = name.replace("-idx", ".idx")
            _write_idx(os.path.join(root, name + (".gz" if gz else "")), arr, gz)
        out[prefix] = (images, labels)
    return out


def _cifar_records(n, n_labels, seed):
    rng = np.random.default_rng(seed)
    images = rng.integers(0, 256, (n, 3, 32, 32), dtype=np.uint8)  # stored channel-major
    labels = rng.integers(0, 100, (n, n_labels), dtype=np.uint8)
    raw = np.concatenate([labels, images.reshape(n, -1)], axis=1).tobytes()
    return raw, images.transpose(0, 2, 3, 1), labels


# ---------------------------------------------------------------------- MNIST
@pytest.mark.parametrize("gz", [True, False], ids=["gzip", "raw"])
def test_mnist_reads_idx_files(tmp_path, gz):
    ref = _write_mnist(str(tmp_path), gz=gz)
    train = MNIST(root=str(tmp_path))
    assert len(train) == 5
    img, label = train[3]
    assert isinstance(img, NDArray) and img.shape == (28, 28, 1) and img.dtype == np.uint8
    np.testing.assert_array_equal(img.asnumpy()[..., 0], ref["train"][0][3])
    assert isinstance(label, np.int32) and label == ref["train"][1][3]
    test = MNIST(root=str(tmp_path), train=False)
    assert len(test) == 3
    np.testing.assert_array_equal(test[2][0].asnumpy()[..., 0], ref["t10k"][0][2])


def test_mnist_transform_and_other_file_names(tmp_path):
    ref = _write_mnist(str(tmp_path), gz=False, dot_names=True, size=(7, 6))
    ds = MNIST(root=str(tmp_path), transform=lambda x, y: (x.astype("float32") / 255, y + 1))
    x, y = ds[0]
    assert x.shape == (7, 6, 1) and x.dtype == np.float32
    assert y == ref["train"][1][0] + 1


def test_fashion_mnist_same_format(tmp_path):
    _write_mnist(str(tmp_path), n_train=2, n_test=4)
    assert len(FashionMNIST(root=str(tmp_path), train=False)) == 4


def test_mnist_missing_files_say_which_and_where(tmp_path):
    with pytest.raises(FileNotFoundError) as info:
        MNIST(root=str(tmp_path / "nowhere"))
    msg = str(info.value)
    assert "train-images-idx3-ubyte.gz" in msg and str(tmp_path / "nowhere") in msg
    assert "never downloads" in msg
    _write_mnist(str(tmp_path))
    os.remove(tmp_path / "t10k-labels-idx1-ubyte.gz")
    with pytest.raises(FileNotFoundError, match="t10k-labels-idx1-ubyte"):
        FashionMNIST(root=str(tmp_path), train=False)
    assert not (tmp_path / "nowhere").exists()  # nothing is created


def test_mnist_corrupt_files(tmp_path):
    _write_mnist(str(tmp_path))
    with gzip.open(tmp_path / "train-labels-idx1-ubyte.gz", "wb") as f:
        f.write(b"\x12\x34\x56\x78rest")
    with pytest.raises(ValueError, match="not an IDX file"):
        MNIST(root=str(tmp_path))
    _write_idx(str(tmp_path / "train-labels-idx1-ubyte.gz"), np.zeros(4), gz=True)
    with pytest.raises(ValueError, match=r"\(5, 28, 28\) and the label file \(4,\)"):
        MNIST(root=str(tmp_path))
    with gzip.open(tmp_path / "train-labels-idx1-ubyte.gz", "wb") as f:
        f.write(struct.pack(">BBBBI", 0, 0, 8, 1, 5) + b"\x01\x02")  # 2 of 5 bytes
    with pytest.raises(ValueError, match="holds 2 bytes"):
        MNIST(root=str(tmp_path))


def test_mnist_in_a_dataloader_with_workers(tmp_path):
    _write_mnist(str(tmp_path), n_train=7)
    ds = MNIST(root=str(tmp_path))
    ref = list(DataLoader(ds, batch_size=3))
    got = list(DataLoader(ds, batch_size=3, num_workers=2))
    for (x0, y0), (x1, y1) in zip(ref, got):
        assert x1.shape[1:] == (28, 28, 1) and x1.dtype == np.uint8 and y1.dtype == np.int32
        np.testing.assert_array_equal(x0.asnumpy(), x1.asnumpy())
        np.testing.assert_array_equal(y0.asnumpy(), y1.asnumpy())


# ---------------------------------------------------------------------- CIFAR
def _write_cifar10(root, per_file=2):
    images, labels = [], []
    for i, name in enumerate([f"data_batch_{k}.bin" for k in range(1, 6)] + ["test_batch.bin"]):
        raw, img, lab = _cifar_records(per_file, 1, seed=i)
        with open(os.path.join(root, name), "wb") as f:
            f.write(raw)
        images.append(img)
        labels.append(lab[:, 0])
    return images, labels


def test_cifar10_reads_the_binary_batches(tmp_path):
    images, labels = _write_cifar10(str(tmp_path))
    train = CIFAR10(root=str(tmp_path))
    assert len(train) == 10
    img, label = train[3]  # the second record of data_batch_2.bin
    assert isinstance(img, NDArray) and img.shape == (32, 32, 3) and img.dtype == np.uint8
    np.testing.assert_array_equal(img.asnumpy(), images[1][1])  # HWC, from CHW on disk
    assert isinstance(label, np.int32) and label == labels[1][1]
    test = CIFAR10(root=str(tmp_path), train=False)
    assert len(test) == 2
    np.testing.assert_array_equal(test[0][0].asnumpy(), images[5][0])


def test_cifar10_in_the_archive_subdirectory_or_the_archive(tmp_path):
    sub = tmp_path / "a" / "cifar-10-batches-bin"
    sub.mkdir(parents=True)
    images, _ = _write_cifar10(str(sub))
    np.testing.assert_array_equal(CIFAR10(root=str(tmp_path / "a"), train=False)[1][0].asnumpy(),
                                  images[5][1])
    root_b = tmp_path / "b"
    root_b.mkdir()
    with tarfile.open(root_b / "cifar-10-binary.tar.gz", "w:gz") as tar:
        tar.add(str(sub), arcname="cifar-10-batches-bin")
    ds = CIFAR10(root=str(root_b))
    assert len(ds) == 10
    np.testing.assert_array_equal(ds[9][0].asnumpy(), images[4][1])
    assert not (root_b / "cifar-10-batches-bin").exists()  # read, not extracted


def test_cifar100_coarse_and_fine_labels(tmp_path):
    raw, img, lab = _cifar_records(4, 2, seed=7)
    (tmp_path / "train.bin").write_bytes(raw)
    (tmp_path / "test.bin").write_bytes(raw[: len(raw) // 2])
    coarse = CIFAR100(root=str(tmp_path))
    fine = CIFAR100(root=str(tmp_path), fine_label=True)
    assert [int(coarse[i][1]) for i in range(4)] == lab[:, 0].tolist()
    assert [int(fine[i][1]) for i in range(4)] == lab[:, 1].tolist()
    np.testing.assert_array_equal(fine[2][0].asnumpy(), img[2])
    assert len(CIFAR100(root=str(tmp_path), train=False)) == 2


def test_cifar_errors(tmp_path):
    with pytest.raises(FileNotFoundError) as info:
        CIFAR10(root=str(tmp_path))
    msg = str(info.value)
    assert "data_batch_1.bin" in msg and str(tmp_path) in msg and "cifar-10-binary.tar.gz" in msg
    with pytest.raises(FileNotFoundError, match="test.bin"):
        CIFAR100(root=str(tmp_path), train=False)
    (tmp_path / "test.bin").write_bytes(b"\x00" * 3000)
    with pytest.raises(ValueError, match="not a whole number of 3074-byte records"):
        CIFAR100(root=str(tmp_path), train=False)
