"""gluon.data.im2rec: folder -> .lst -> .rec/.idx, read back by ImageRecordIter,
ImageRecordDataset and mx.image.ImageIter here, and by real MXNet 1.9.1."""
import json
import os
import pathlib
import subprocess
import sys

import numpy
import pytest

from core import recordio
from gluon.data import im2rec
from tests.mxnet_ref import requires_mxnet, run_mxnet

Image = pytest.importorskip("PIL.Image")
ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(__file__))))


@pytest.fixture
def folder(tmp_path):
    """root/<class>/<n>.png: 2 classes, 5 tiny images, exact colours."""
    root = tmp_path / "images"
    imgs = {}
    for cls, names in (("cat", ["a", "b", "c"]), ("dog", ["d", "e"])):
        (root / cls).mkdir(parents=True)
        for j, n in enumerate(names):
            img = numpy.zeros((10 + j, 12, 3), numpy.uint8)
            img[..., 0], img[..., 1], img[..., 2] = 20 * j, 100 if cls == "dog" else 0, 200
            Image.fromarray(img).save(root / cls / f"{n}.png")
            imgs[f"{cls}/{n}.png"] = img
    (root / "dog" / "readme.txt").write_text("not an image")
    return root, imgs


def _lst(path):
    return [line.split("\t") for line in pathlib.Path(path).read_text().splitlines()]


def test_list_then_pack_then_read_back(tmp_path, folder, capsys):
    root, imgs = folder
    prefix = str(tmp_path / "data")
    assert im2rec.main([prefix, str(root), "--list", "--recursive"]) == 0
    assert "cat 0" in capsys.readouterr().out
    rows = _lst(prefix + ".lst")
    assert sorted(r[2] for r in rows) == sorted(imgs)
    assert all(float(r[1]) == (r[2].startswith("dog")) for r in rows)
    assert im2rec.main([prefix, str(root), "--encoding", ".png", "--quiet"]) == 0
    r = recordio.MXIndexedRecordIO(prefix + ".idx", prefix + ".rec", "r")
    assert sorted(r.keys) == list(range(5))
    by_path = {row[2]: int(row[0]) for row in rows}
    for path, img in imgs.items():
        header, out = recordio.unpack_img(r.read_idx(by_path[path]))
        assert header.id == by_path[path] and header.label == float(path.startswith("dog"))
        numpy.testing.assert_array_equal(out[..., ::-1], img)

    from core.io import ImageRecordIter
    it = ImageRecordIter(path_imgrec=prefix + ".rec", path_imgidx=prefix + ".idx",
                         data_shape=(3, 10, 12), batch_size=5)
    b = it.next()
    assert sorted(b.label[0].asnumpy().tolist()) == [0, 0, 0, 1, 1]

    from gluon.data.vision import ImageRecordDataset
    ds = ImageRecordDataset(prefix + ".rec")
    k = r.keys.index(by_path["dog/e.png"])
    numpy.testing.assert_array_equal(ds[k][0].asnumpy(), imgs["dog/e.png"])

    from gluon.compat import image
    it = image.ImageIter(batch_size=5, data_shape=(3, 10, 12), path_imgrec=prefix + ".rec",
                         path_imgidx=prefix + ".idx")
    assert sorted(it.next().label[0].asnumpy().tolist()) == [0, 0, 0, 1, 1]


def test_options_resize_crop_labels_threads_chunks(tmp_path, folder):
    root, _ = folder
    prefix = str(tmp_path / "p")
    im2rec.main([prefix, str(root), "--list", "--recursive", "--no-shuffle", "--chunks", "2"])
    assert sorted(os.listdir(tmp_path))[:2] == ["images", "p_0.lst"]
    rows = _lst(prefix + "_0.lst")
    assert [r[2] for r in rows] == ["cat/a.png", "cat/b.png", "cat/c.png"]
    lst = str(tmp_path / "m.lst")
    with open(lst, "w") as f:
        f.write("0\t1.5\t2.5\tcat/b.png\n1\t3\t4\tdog/e.png\nbroken line\n")
    assert im2rec.main([str(tmp_path / "m"), str(root), "--pack-label", "--resize", "6",
                        "--center-crop", "--num-thread", "2", "--quiet"]) == 0
    r = recordio.MXIndexedRecordIO(str(tmp_path / "m.idx"), str(tmp_path / "m.rec"), "r")
    h, img = recordio.unpack_img(r.read_idx(0))
    assert h.label.tolist() == [1.5, 2.5] and img.shape == (6, 6, 3)
    h, img = recordio.unpack_img(r.read_idx(1))
    assert h.label.tolist() == [3, 4]
    im2rec.main([str(tmp_path / "m"), str(root), "--color", "0", "--encoding", ".png",
                 "--quiet"])
    r = recordio.MXIndexedRecordIO(str(tmp_path / "m.idx"), str(tmp_path / "m.rec"), "r")
    assert recordio.unpack_img(r.read_idx(0))[1].shape == (11, 12)  # gray
    Image.fromarray(numpy.full((3, 4, 4), 9, numpy.uint8)).save(root / "cat" / "b.png")  # RGBA
    im2rec.main([str(tmp_path / "m"), str(root), "--color", "-1", "--encoding", ".png",
                 "--quiet"])
    r = recordio.MXIndexedRecordIO(str(tmp_path / "m.idx"), str(tmp_path / "m.rec"), "r")
    assert recordio.unpack_img(r.read_idx(0))[1].shape == (3, 4, 4)
    im2rec.main([str(tmp_path / "m"), str(root), "--pass-through", "--quiet"])
    r = recordio.MXIndexedRecordIO(str(tmp_path / "m.idx"), str(tmp_path / "m.rec"), "r")
    assert recordio.unpack(r.read_idx(0))[1] == pathlib.Path(root / "cat" / "b.png").read_bytes()
    im2rec.main([str(tmp_path / "s"), str(root), "--list", "--recursive", "--train-ratio",
                 "0.6", "--test-ratio", "0.2"])
    sizes = [len(_lst(str(tmp_path / f"s_{s}.lst"))) for s in ("train", "val", "test")]
    assert sizes == [3, 1, 1]


def test_missing_files_are_errors(tmp_path, capsys):
    assert im2rec.main([str(tmp_path / "x"), str(tmp_path / "none"), "--list"]) == 1
    assert "does not exist" in capsys.readouterr().err
    assert im2rec.main([str(tmp_path / "x"), str(tmp_path)]) == 1
    assert "no list file" in capsys.readouterr().err


def test_runs_as_a_module(tmp_path, folder):
    root, _ = folder
    prefix = str(tmp_path / "cli")
    env = dict(os.environ, PYTHONPATH=ROOT)
    for extra in (["--list", "--recursive"], ["--quiet"]):
        out = subprocess.run([sys.executable, "-m", "gluon.data.im2rec", prefix, str(root)]
                             + extra, capture_output=True, text=True, env=env, timeout=120,
                             check=False)
        assert out.returncode == 0, out.stderr
    assert os.path.getsize(prefix + ".rec") > 0 and os.path.exists(prefix + ".idx")


@requires_mxnet
def test_real_mxnet_reads_our_rec(tmp_path, folder):
    root, imgs = folder
    prefix = str(tmp_path / "data")
    im2rec.main([prefix, str(root), "--list", "--recursive", "--no-shuffle"])
    im2rec.main([prefix, str(root), "--encoding", ".png", "--quiet"])
    out = run_mxnet(f"""
import mxnet as mx, json
it = mx.io.ImageRecordIter(path_imgrec={prefix + '.rec'!r}, path_imgidx={prefix + '.idx'!r},
                           data_shape=(3, 10, 12), batch_size=5, preprocess_threads=1)
b = it.next()
ds = mx.gluon.data.vision.ImageRecordDataset({prefix + '.rec'!r})
img, lab = ds[4]
print(json.dumps([b.label[0].asnumpy().tolist(), b.data[0][3].asnumpy().tolist(),
                  img.asnumpy().tolist(), float(lab)]))
""")
    labels, first, img, lab = json.loads(out)
    assert labels == [0, 0, 0, 1, 1] and lab == 1.0
    numpy.testing.assert_array_equal(numpy.asarray(img), imgs["dog/e.png"])
    numpy.testing.assert_array_equal(numpy.asarray(first),
                                     imgs["dog/d.png"].transpose(2, 0, 1).astype("f"))


@requires_mxnet
def test_jpeg_records_decode_alike_here_and_in_mxnet(tmp_path):
    root = tmp_path / "imgs"
    root.mkdir()
    yy, xx = numpy.mgrid[0:24, 0:32]
    img = numpy.stack([xx * 8, yy * 10, (xx + yy) * 4], axis=-1).astype(numpy.uint8)
    Image.fromarray(img).save(root / "g.png")
    prefix = str(tmp_path / "j")
    im2rec.main([prefix, str(root), "--list"])
    im2rec.main([prefix, str(root), "--quality", "90", "--quiet"])  # default .jpg encoding
    out = run_mxnet(f"""
import mxnet as mx, json
it = mx.io.ImageRecordIter(path_imgrec={prefix + '.rec'!r}, data_shape=(3, 24, 32),
                           batch_size=1, preprocess_threads=1)
print(json.dumps(it.next().data[0].asnumpy().tolist()))
""")
    from core.io import ImageRecordIter
    ours = ImageRecordIter(path_imgrec=prefix + ".rec", data_shape=(3, 24, 32),
                           batch_size=1).next().data[0].asnumpy()
    ref = numpy.asarray(json.loads(out), "f")
    # Pillow and MXNet both decode with libjpeg-turbo: identical here (0 levels apart);
    # one level allows for other builds of it.
    assert numpy.abs(ours - ref).max() <= 1
    assert numpy.abs(ours[0].transpose(1, 2, 0) - img).mean() < 3  # and close to the source
