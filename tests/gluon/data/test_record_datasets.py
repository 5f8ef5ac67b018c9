"""gluon.data.RecordFileDataset, vision.ImageRecordDataset and vision.ImageFolderDataset."""
import os
import pickle

import numpy
import pytest

from core import recordio
from gluon.data import DataLoader, RecordFileDataset
from gluon.data.vision import ImageFolderDataset, ImageRecordDataset
from tests.mxnet_ref import requires_mxnet, run_mxnet

Image = pytest.importorskip("PIL.Image")


def _rec(tmp_path, imgs, labels):
    rec, idx = str(tmp_path / "d.rec"), str(tmp_path / "d.idx")
    w = recordio.MXIndexedRecordIO(idx, rec, "w")
    for i, (img, lab) in enumerate(zip(imgs, labels)):
        w.write_idx(i, recordio.pack_img(recordio.IRHeader(0, lab, i, 0), img[..., ::-1],
                                         img_fmt=".png"))
    w.close()
    return rec


def _imgs(n, seed=0):
    rng = numpy.random.default_rng(seed)
    return [rng.integers(0, 256, (5 + i, 6, 3), dtype=numpy.uint8) for i in range(n)]


def test_record_file_dataset(tmp_path):
    rec, idx = str(tmp_path / "a.rec"), str(tmp_path / "a.idx")
    w = recordio.MXIndexedRecordIO(idx, rec, "w")
    for k in (5, 3, 9):
        w.write_idx(k, b"key%d" % k)
    w.close()
    ds = RecordFileDataset(rec)
    assert len(ds) == 3 and [ds[i] for i in range(3)] == [b"key5", b"key3", b"key9"]
    assert pickle.loads(pickle.dumps(ds))[2] == b"key9"
    os.remove(idx)
    with pytest.raises(FileNotFoundError, match=r"a\.idx"):
        RecordFileDataset(rec)


def test_image_record_dataset(tmp_path):
    imgs = _imgs(3)
    rec = _rec(tmp_path, imgs, [0.0, [1, 2], 2.0])
    ds = ImageRecordDataset(rec)
    img, lab = ds[0]
    assert img.dtype == numpy.uint8 and lab == 0.0
    numpy.testing.assert_array_equal(img.asnumpy(), imgs[0])
    assert ds[1][1].tolist() == [1, 2]
    gray = ImageRecordDataset(rec, flag=0)[2][0]
    assert gray.shape == (7, 6, 1)
    t = ImageRecordDataset(rec, transform=lambda x, y: (x.astype("float32") / 255, y + 1))
    assert t[2][1] == 3.0 and t[2][0].dtype == numpy.float32
    (tmp_path / "u").mkdir()
    rec2 = _rec(tmp_path / "u", imgs, [0.0, 1.0, 2.0])
    loader = DataLoader(ImageRecordDataset(rec2).transform_first(lambda x: x[:5]), batch_size=3)
    data, label = next(iter(loader))
    assert data.shape == (3, 5, 6, 3) and label.asnumpy().tolist() == [0, 1, 2]


def test_image_record_dataset_names_a_broken_record(tmp_path):
    rec, idx = str(tmp_path / "b.rec"), str(tmp_path / "b.idx")
    w = recordio.MXIndexedRecordIO(idx, rec, "w")
    w.write_idx(4, recordio.pack(recordio.IRHeader(0, 1.0, 4, 0), b"not an image"))
    w.close()
    with pytest.raises(ValueError, match=r"b\.rec' record 4.*cannot decode"):
        ImageRecordDataset(rec)[0]


def test_image_folder_dataset(tmp_path):
    imgs = _imgs(3)
    for cls, i in (("b_dog", 0), ("a_cat", 1), ("a_cat", 2)):
        (tmp_path / cls).mkdir(exist_ok=True)
        Image.fromarray(imgs[i]).save(tmp_path / cls / f"{i}.png")
    (tmp_path / "a_cat" / "notes.txt").write_text("x")
    (tmp_path / "stray.jpg").write_bytes(b"")
    with pytest.warns(UserWarning, match="ignoring"):
        ds = ImageFolderDataset(str(tmp_path))
    assert ds.synsets == ["a_cat", "b_dog"]
    assert [(os.path.basename(p), lab) for p, lab in ds.items] == [("1.png", 0), ("2.png", 0),
                                                                    ("0.png", 1)]
    img, lab = ds[2]
    numpy.testing.assert_array_equal(img.asnumpy(), imgs[0])
    with pytest.warns(UserWarning):
        assert lab == 1 and ImageFolderDataset(str(tmp_path), flag=0)[0][0].shape[-1] == 1
    with pytest.raises(FileNotFoundError, match="not a folder"):
        ImageFolderDataset(str(tmp_path / "none"))


@requires_mxnet
def test_mxnet_reads_what_the_datasets_read(tmp_path):
    imgs = _imgs(2, seed=3)
    rec = _rec(tmp_path, imgs, [1.0, 2.0])
    out = run_mxnet(f"""
import mxnet as mx, json
ds = mx.gluon.data.vision.ImageRecordDataset({rec!r})
print(json.dumps([[ds[i][0].asnumpy().tolist(), float(ds[i][1])] for i in range(len(ds))]))
""")
    import json
    ref = json.loads(out)
    ours = ImageRecordDataset(rec)
    for i, (img, lab) in enumerate(ref):
        numpy.testing.assert_array_equal(ours[i][0].asnumpy(), numpy.asarray(img))
        assert ours[i][1] == lab


@pytest.mark.parametrize("thread_pool", [False, True])
def test_data_loader_workers_read_records(tmp_path, thread_pool):
    imgs = [numpy.full((4, 4, 3), i, numpy.uint8) for i in range(6)]
    rec = _rec(tmp_path, imgs, [float(i) for i in range(6)])
    ds = ImageRecordDataset(rec)
    ds[0]  # opened in this process first: workers reopen their own handle
    loader = DataLoader(ds, batch_size=2, num_workers=2, thread_pool=thread_pool)
    labels = [lab.asnumpy().tolist() for _, lab in loader]
    assert labels == [[0, 1], [2, 3], [4, 5]]
