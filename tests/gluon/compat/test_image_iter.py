"""gluon.compat.image (mx.image): the augmenters, CreateAugmenter and ImageIter, compared
with real MXNet 1.9.1 (same Python `random` draws, PNG records that decode identically)."""
import json
import random

import numpy
import pytest

from core import nd, recordio
from gluon.compat import image
from tests.mxnet_ref import requires_mxnet, run_mxnet

Image = pytest.importorskip("PIL.Image")


def _images(n, shape=(12, 14, 3), seed=0):
    rng = numpy.random.default_rng(seed)
    return [rng.integers(0, 256, shape, dtype=numpy.uint8) for _ in range(n)]


@pytest.fixture
def rec(tmp_path):
    imgs = _images(5)
    rec, idx = str(tmp_path / "a.rec"), str(tmp_path / "a.idx")
    w = recordio.MXIndexedRecordIO(idx, rec, "w")
    for i, img in enumerate(imgs):
        w.write_idx(i, recordio.pack_img(recordio.IRHeader(0, [i, 10 + i], i, 0), img[..., ::-1],
                                         img_fmt=".png"))
    w.close()
    for i, img in enumerate(imgs):
        Image.fromarray(img).save(tmp_path / f"{i}.png")
    lst = tmp_path / "a.lst"
    lst.write_text("".join(f"{i}\t{i}.0\t{10 + i}.0\t{i}.png\n" for i in range(5)))
    return rec, idx, str(lst), str(tmp_path), imgs


def _labels(it, epochs=1):
    out = []
    for _ in range(epochs):
        out.append([(b.label[0].asnumpy().tolist(), b.pad) for b in it])
        it.reset()
    return out


def test_sources_agree_and_center_crop(rec):
    path, idx, lst, root, imgs = rec
    iters = [image.ImageIter(2, (3, 8, 10), label_width=2, path_imgrec=path),
             image.ImageIter(2, (3, 8, 10), label_width=2, path_imgrec=path, path_imgidx=idx),
             image.ImageIter(2, (3, 8, 10), label_width=2, path_imglist=lst, path_root=root)]
    batches = [it.next() for it in iters]
    for b in batches:
        assert b.data[0].shape == (2, 3, 8, 10) and b.label[0].shape == (2, 2)
        numpy.testing.assert_array_equal(b.data[0].asnumpy()[1],
                                         imgs[1][2:10, 2:12].transpose(2, 0, 1))
        assert b.label[0].asnumpy().tolist() == [[0, 10], [1, 11]]
    it = image.ImageIter(3, (3, 12, 14), imglist=[[7, "3.png"], [8.0, "4.png"]],
                         path_root=root, label_width=1, last_batch_handle="discard")
    assert _labels(it) == [[]]  # 2 images < batch 3: discarded


def test_last_batch_handles(rec):
    _, _, lst, root, _ = rec
    kw = {"batch_size": 2, "data_shape": (3, 8, 8), "path_imglist": lst, "path_root": root,
          "aug_list": [image.CenterCropAug((8, 8))], "label_width": 2}
    first = lambda e: [lab[0][0] for lab, _ in e]
    pad = _labels(image.ImageIter(last_batch_handle="pad", **kw), 2)
    assert [first(e) for e in pad] == [[0, 2, 4]] * 2 and pad[0][-1][1] == 1
    assert pad[0][-1][0] == [[4, 14], [0, 10]]
    dis = _labels(image.ImageIter(last_batch_handle="discard", **kw), 2)
    assert [first(e) for e in dis] == [[0, 2]] * 2
    roll = _labels(image.ImageIter(last_batch_handle="roll_over", **kw), 3)
    assert [[lab for lab, _ in e] for e in roll] == [
        [[[0, 10], [1, 11]], [[2, 12], [3, 13]]],               # [4] rolls over
        [[[4, 14], [0, 10]], [[1, 11], [2, 12]], [[3, 13], [4, 14]]],
        [[[0, 10], [1, 11]], [[2, 12], [3, 13]]]]


def test_parts_shuffle_and_errors(rec):
    path, idx, _, _, _ = rec
    parts = [_labels(image.ImageIter(2, (3, 8, 8), label_width=2, path_imgrec=path,
                                     path_imgidx=idx, num_parts=2, part_index=i))[0]
             for i in (0, 1)]
    assert [[lab for lab, _ in p] for p in parts] == [[[[0, 10], [1, 11]]],
                                                      [[[2, 12], [3, 13]]]]
    random.seed(1)
    it = image.ImageIter(5, (3, 8, 8), label_width=2, path_imgrec=path, path_imgidx=idx,
                         shuffle=True)
    got = it.next().label[0].asnumpy()[:, 0].tolist()
    assert sorted(got) == [0, 1, 2, 3, 4]
    with pytest.raises(ValueError, match="need path_imgidx"):
        image.ImageIter(2, (3, 8, 8), path_imgrec=path, shuffle=True)
    with pytest.raises(ValueError, match="expects 3 channels"):
        image.ImageIter(2, (1, 8, 8), path_imgrec=path)
    with pytest.raises(FileNotFoundError, match="path_imgrec='none.rec'"):
        image.ImageIter(2, (3, 8, 8), path_imgrec="none.rec")
    with pytest.raises(ValueError, match="2 label.*label_width=1"):
        image.ImageIter(2, (3, 8, 8), path_imgrec=path).next()
    with pytest.raises(ValueError, match=r"augmented image has shape \(3, 12, 14\)"):
        image.ImageIter(2, (3, 8, 8), label_width=2, path_imgrec=path, aug_list=[]).next()
    with pytest.raises(ValueError, match="rand_resize=True needs rand_crop"):
        image.CreateAugmenter((3, 8, 8), rand_resize=True)


def test_augmenters_shapes_and_values():
    x = nd.array(numpy.arange(2 * 4 * 3, dtype="float32").reshape(2, 4, 3))
    assert image.HorizontalFlipAug(1)(x).asnumpy()[0, 0].tolist() == [9, 10, 11]
    assert image.HorizontalFlipAug(0)(x).asnumpy()[0, 0].tolist() == [0, 1, 2]
    out = image.ColorNormalizeAug(nd.array([1, 2, 3]), nd.array([2, 2, 2]))(x).asnumpy()
    numpy.testing.assert_allclose(out[0, 0], [-0.5, -0.5, -0.5])
    gray = image.RandomGrayAug(1)(x).asnumpy()
    assert numpy.allclose(gray[..., 0], gray[..., 2])
    with pytest.raises(TypeError, match="put CastAug before it"):
        image.BrightnessJitterAug(0.1)(nd.array(numpy.ones((2, 2, 3)), dtype="uint8"))
    augs = image.CreateAugmenter((3, 6, 6), resize=8, rand_crop=True, rand_resize=True,
                                 rand_mirror=True, mean=True, std=True, brightness=0.1,
                                 contrast=0.1, saturation=0.1, hue=0.1, pca_noise=0.1,
                                 rand_gray=0.2)
    names = [type(a).__name__ for a in augs]
    assert names == ["ResizeAug", "RandomSizedCropAug", "HorizontalFlipAug", "CastAug",
                     "ColorJitterAug", "HueJitterAug", "LightingAug", "RandomGrayAug",
                     "ColorNormalizeAug"]
    y = nd.array(numpy.random.default_rng(0).integers(0, 256, (10, 12, 3)), dtype="uint8")
    for a in augs:
        y = a(y)
    assert y.shape == (6, 6, 3) and y.dtype == numpy.float32
    assert json.loads(augs[0].dumps()) == ["resizeaug", {"size": 8, "interp": 2}]


@requires_mxnet
def test_matches_real_mxnet_with_the_same_random_draws(rec):
    path, idx, _, _, _ = rec
    script = f"""
import mxnet as mx, json, random, numpy as np
res = {{}}
def run(name, seed, **kw):
    random.seed(seed)
    np.random.seed(seed)
    it = mx.image.ImageIter(path_imgrec={path!r}, label_width=2, **kw)
    out = []
    for _ in range(2):
        for b in it:
            out.append([b.data[0].asnumpy().tolist(), b.label[0].asnumpy().tolist(), b.pad])
        it.reset()
    res[name] = out
run('crop', 0, batch_size=2, data_shape=(3, 8, 8), path_imgidx={idx!r},
    aug_list=[mx.image.RandomCropAug((8, 8)), mx.image.HorizontalFlipAug(0.5),
              mx.image.CastAug(), mx.image.BrightnessJitterAug(0.3)])
run('roll', 0, batch_size=2, data_shape=(3, 10, 10), last_batch_handle='roll_over')
run('color', 3, batch_size=5, data_shape=(3, 8, 8),
    aug_list=[mx.image.CenterCropAug((8, 8)), mx.image.CastAug(),
              mx.image.ColorJitterAug(0.2, 0.2, 0.2), mx.image.HueJitterAug(0.2),
              mx.image.RandomGrayAug(0.5),
              mx.image.ColorNormalizeAug(mx.nd.array([120, 110, 100]), mx.nd.array([60, 50, 40]))])
print(json.dumps(res))
"""
    ref = json.loads(run_mxnet(script))

    def run(name, seed, **kw):
        random.seed(seed)
        numpy.random.seed(seed)
        it = image.ImageIter(path_imgrec=path, label_width=2, **kw)
        out = []
        for _ in range(2):
            for b in it:
                out.append([b.data[0].asnumpy(), b.label[0].asnumpy().tolist(), b.pad])
            it.reset()
        return out

    ours = {
        "crop": run("crop", 0, batch_size=2, data_shape=(3, 8, 8), path_imgidx=idx,
                    aug_list=[image.RandomCropAug((8, 8)), image.HorizontalFlipAug(0.5),
                              image.CastAug(), image.BrightnessJitterAug(0.3)]),
        "roll": run("roll", 0, batch_size=2, data_shape=(3, 10, 10),
                    last_batch_handle="roll_over"),
        "color": run("color", 3, batch_size=5, data_shape=(3, 8, 8),
                     aug_list=[image.CenterCropAug((8, 8)), image.CastAug(),
                               image.ColorJitterAug(0.2, 0.2, 0.2), image.HueJitterAug(0.2),
                               image.RandomGrayAug(0.5),
                               image.ColorNormalizeAug(nd.array([120, 110, 100]),
                                                       nd.array([60, 50, 40]))]),
    }
    for name, batches in ours.items():
        assert len(batches) == len(ref[name]), name
        for (d, lab, pad), (rd, rlab, rpad) in zip(batches, ref[name]):
            assert (lab, pad) == (rlab, rpad), name
            numpy.testing.assert_allclose(d, numpy.asarray(rd, "f"), rtol=1e-4, atol=1e-3,
                                          err_msg=name)
