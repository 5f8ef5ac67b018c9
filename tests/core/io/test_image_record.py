"""core.io.ImageRecordIter / ImageRecordUInt8Iter / ImageDetRecordIter: batching, labels,
parts, augmentation and normalization, compared with real MXNet 1.9.1's C++ iterator on
PNG records (which decode identically in both)."""
import json
import pathlib

import numpy
import pytest

from core import recordio
from tests.mxnet_ref import requires_mxnet, run_mxnet

pytest.importorskip("PIL")
from core.io import ImageDetRecordIter, ImageRecordIter, ImageRecordUInt8Iter


def _images(n, shape=(10, 12, 3), seed=0):
    rng = numpy.random.default_rng(seed)
    return [rng.integers(0, 256, shape, dtype=numpy.uint8) for _ in range(n)]


def _make_rec(tmp_path, imgs, labels=None, name="a", idx=True):
    """imgs are RGB; pack_img takes BGR (OpenCV's order)."""
    rec, idxf = str(tmp_path / f"{name}.rec"), str(tmp_path / f"{name}.idx")
    w = recordio.MXIndexedRecordIO(idxf, rec, "w") if idx else recordio.MXRecordIO(rec, "w")
    for i, img in enumerate(imgs):
        label = float(i) if labels is None else labels[i]
        s = recordio.pack_img(recordio.IRHeader(0, label, i, 0), img[..., ::-1], img_fmt=".png")
        w.write_idx(i, s) if idx else w.write(s)
    w.close()
    return rec, idxf


def _epoch(it):
    return [(b.label[0].asnumpy().tolist(), b.pad) for b in it]


def test_center_crop_values_and_shapes(tmp_path):
    imgs = _images(3)
    rec, _ = _make_rec(tmp_path, imgs, idx=False)
    it = ImageRecordIter(path_imgrec=rec, data_shape=(3, 6, 8), batch_size=3)
    assert it.provide_data[0].shape == (3, 3, 6, 8) and it.provide_label[0].shape == (3,)
    b = it.next()
    numpy.testing.assert_array_equal(b.data[0].asnumpy()[1],
                                     imgs[1][2:8, 2:10].transpose(2, 0, 1).astype("f"))
    assert b.data[0].dtype == numpy.float32 and b.index.tolist() == [0, 1, 2]


def test_round_batch_epochs_match_mxnet_rules(tmp_path):
    rec, _ = _make_rec(tmp_path, _images(5), idx=False)
    it = ImageRecordIter(path_imgrec=rec, data_shape=(3, 8, 8), batch_size=2)
    epochs = []
    for _ in range(3):
        epochs.append(_epoch(it))
        it.reset()
    # (what real MXNet 1.9.1 gives for 5 records and batch 2)
    assert epochs[0] == [([0, 1], 0), ([2, 3], 0), ([4, 0], 1)]
    assert epochs[1] == [([1, 2], 0), ([3, 4], 0)]
    assert epochs[2] == epochs[0]
    it = ImageRecordIter(path_imgrec=rec, data_shape=(3, 8, 8), batch_size=2, round_batch=False)
    first = _epoch(it)
    it.reset()
    assert first == _epoch(it) == [([0, 1], 0), ([2, 3], 0), ([4, 0], 1)]


def test_parts_shuffle_and_seed(tmp_path):
    rec, idx = _make_rec(tmp_path, _images(5))
    parts = [_epoch(ImageRecordIter(path_imgrec=rec, path_imgidx=idx, data_shape=(3, 8, 8),
                                    batch_size=2, num_parts=2, part_index=i)) for i in (0, 1)]
    assert parts == [[([0, 1], 0), ([2, 0], 1)], [([3, 4], 0)]]
    a = ImageRecordIter(path_imgrec=rec, path_imgidx=idx, data_shape=(3, 8, 8), batch_size=5,
                        shuffle=True, seed=3)
    e1 = a.next().label[0].asnumpy().tolist()
    a.reset()
    e2 = a.next().label[0].asnumpy().tolist()
    assert sorted(e1) == sorted(e2) == [0, 1, 2, 3, 4] and e1 != e2
    b = ImageRecordIter(path_imgrec=rec, path_imgidx=idx, data_shape=(3, 8, 8), batch_size=5,
                        shuffle=True, seed=3, preprocess_threads=1)
    assert b.next().label[0].asnumpy().tolist() == e1


def test_random_augmentation_is_seeded_and_thread_independent(tmp_path):
    rec, _ = _make_rec(tmp_path, _images(4, (16, 20, 3)))
    kw = {"path_imgrec": rec, "data_shape": (3, 8, 8), "batch_size": 4, "rand_crop": True,
              "rand_mirror": True, "brightness": 0.3, "contrast": 0.3, "saturation": 0.3, "pca_noise": 0.1,
              "resize": 12, "seed": 7, "max_rotate_angle": 20, "max_shear_ratio": 0.1,
              "min_random_scale": 0.9, "max_random_scale": 1.2, "max_aspect_ratio": 0.2,
              "random_h": 20, "random_s": 30, "random_l": 30}
    x1 = ImageRecordIter(preprocess_threads=1, **kw).next().data[0].asnumpy()
    x4 = ImageRecordIter(preprocess_threads=4, **kw).next().data[0].asnumpy()
    numpy.testing.assert_array_equal(x1, x4)
    assert x1.min() >= 0 and x1.max() <= 255
    rr = ImageRecordIter(path_imgrec=rec, data_shape=(3, 8, 8), batch_size=4,
                         random_resized_crop=True, min_random_area=0.3, max_aspect_ratio=1.3,
                         min_aspect_ratio=0.75, seed_aug=1)
    a = rr.next().data[0].asnumpy()
    rr.reset()
    numpy.testing.assert_array_equal(a, rr.next().data[0].asnumpy())  # seed_aug: per image


def test_normalization_and_dtypes(tmp_path):
    imgs = _images(2, (8, 8, 3))
    rec, _ = _make_rec(tmp_path, imgs)
    it = ImageRecordIter(path_imgrec=rec, data_shape=(3, 8, 8), batch_size=2, mean_r=10,
                         mean_g=20, mean_b=30, std_r=2, std_g=4, std_b=8, scale=0.5, mirror=True)
    x = it.next().data[0].asnumpy()[0]
    ref = imgs[0][:, ::-1].astype("f").transpose(2, 0, 1)
    ref = (ref - numpy.array([10, 20, 30], "f")[:, None, None]) * 0.5 / \
        numpy.array([2, 4, 8], "f")[:, None, None]
    numpy.testing.assert_allclose(x, ref, rtol=1e-6)
    u8 = ImageRecordUInt8Iter(path_imgrec=rec, data_shape=(3, 8, 8), batch_size=2, mean_r=10)
    b = u8.next()
    assert b.data[0].dtype == numpy.uint8
    numpy.testing.assert_array_equal(b.data[0].asnumpy()[1], imgs[1].transpose(2, 0, 1))
    i8 = ImageRecordIter(path_imgrec=rec, data_shape=(3, 8, 8), batch_size=2, dtype="int8",
                         mean_r=128, mean_g=128, mean_b=128)
    assert i8.next().data[0].dtype == numpy.int8
    g = ImageRecordIter(path_imgrec=rec, data_shape=(1, 8, 8), batch_size=2)
    assert g.next().data[0].shape == (2, 1, 8, 8)


def test_multi_labels_and_imglist(tmp_path):
    rec, _ = _make_rec(tmp_path, _images(2), labels=[[1, 2, 3], [4, 5, 6]])
    it = ImageRecordIter(path_imgrec=rec, data_shape=(3, 8, 8), batch_size=2, label_width=3)
    assert it.provide_label[0].shape == (2, 3)
    assert it.next().label[0].asnumpy().tolist() == [[1, 2, 3], [4, 5, 6]]
    with pytest.raises(ValueError, match=r"a\.rec.*record 0.*3 labels but label_width=2"):
        ImageRecordIter(path_imgrec=rec, data_shape=(3, 8, 8), batch_size=2,
                        label_width=2).next()
    rec1, _ = _make_rec(tmp_path, _images(2), name="b")
    with pytest.raises(ValueError, match="one label but label_width=2"):
        ImageRecordIter(path_imgrec=rec1, data_shape=(3, 8, 8), batch_size=2,
                        label_width=2).next()
    lst = tmp_path / "b.lst"
    lst.write_text("0\t7.0\t8.0\tx.png\n1\t9.0\t10.0\ty.png\n")
    it = ImageRecordIter(path_imgrec=rec1, data_shape=(3, 8, 8), batch_size=2, label_width=2,
                         path_imglist=str(lst))
    assert it.next().label[0].asnumpy().tolist() == [[7, 8], [9, 10]]


def test_clear_errors(tmp_path):
    rec, _ = _make_rec(tmp_path, _images(2))
    with pytest.raises(FileNotFoundError, match="path_imgrec='nope.rec'"):
        ImageRecordIter(path_imgrec="nope.rec", data_shape=(3, 8, 8), batch_size=2)
    with pytest.raises(FileNotFoundError, match="path_imgidx"):
        ImageRecordIter(path_imgrec=rec, path_imgidx="nope.idx", data_shape=(3, 8, 8),
                        batch_size=2)
    with pytest.raises(ValueError, match=r"data_shape must be \(channels, height, width\)"):
        ImageRecordIter(path_imgrec=rec, data_shape=(8, 8), batch_size=2)
    with pytest.raises(ValueError, match="channels.*must be 1, 3 or 4"):
        ImageRecordIter(path_imgrec=rec, data_shape=(2, 8, 8), batch_size=2)
    with pytest.raises(TypeError, match="unknown argument.*bogus"):
        ImageRecordIter(path_imgrec=rec, data_shape=(3, 8, 8), batch_size=2, bogus=1)
    with pytest.raises(NotImplementedError, match="ImageDetRecordIter: max_rotate_angle"):
        ImageDetRecordIter(path_imgrec=rec, data_shape=(3, 8, 8), batch_size=2,
                           max_rotate_angle=9)
    with pytest.raises(ValueError, match="has 3 channel.*asks for 4"):
        ImageRecordIter(path_imgrec=rec, data_shape=(4, 8, 8), batch_size=2).next()
    with pytest.raises(ValueError, match="max_crop_size"):
        ImageRecordIter(path_imgrec=rec, data_shape=(3, 8, 8), batch_size=2,
                        max_crop_size=50, min_crop_size=40).next()
    bad = tmp_path / "bad.rec"
    bad.write_bytes(pathlib.Path(rec).read_bytes()[:-30])
    with pytest.raises(ValueError, match=r"bad\.rec.*offset"):
        ImageRecordIter(path_imgrec=str(bad), data_shape=(3, 8, 8), batch_size=2)


def test_detection_labels_padded_and_mirrored(tmp_path):
    labels = [[2, 5, 0, 0.1, 0.2, 0.5, 0.6], [2, 5, 1, 0.0, 0.0, 0.4, 0.4, 2, 0.5, 0.5, 1, 1]]
    rec, _ = _make_rec(tmp_path, _images(2), labels=labels)
    it = ImageDetRecordIter(path_imgrec=rec, data_shape=(3, 8, 8), batch_size=2, mirror=True)
    assert it.provide_label[0].shape == (2, 16)
    b = it.next()
    lab = b.label[0].asnumpy()
    numpy.testing.assert_allclose(lab[0], [3, 8, 8, 7, 2, 5, 0, 0.5, 0.2, 0.9, 0.6] + [-1] * 5,
                                  atol=1e-6)
    numpy.testing.assert_allclose(lab[1, 11:], [2, 0, 0.5, 0.5, 1], atol=1e-6)
    assert b.data[0].shape == (2, 3, 8, 8)
    with pytest.raises(ValueError, match="more than label_pad_width=8"):
        ImageDetRecordIter(path_imgrec=rec, data_shape=(3, 8, 8), batch_size=2,
                           label_pad_width=8)


@requires_mxnet
def test_detection_batches_match_real_mxnet(tmp_path):
    labels = [[2, 5, 0, 0.1, 0.2, 0.5, 0.6], [2, 5, 1, 0.0, 0.0, 0.4, 0.4, 2, 0.5, 0.5, 1, 1],
              [3, 5, 9, 1, 0.2, 0.2, 0.3, 0.3]]
    rec, _ = _make_rec(tmp_path, _images(3, (8, 8, 3)), labels=labels)
    out = run_mxnet(f"""
import mxnet as mx, json
res = []
for kw in ({{}}, {{'label_pad_width': 20, 'mean_r': 10, 'std_g': 2}}):
    it = mx.io.ImageDetRecordIter(path_imgrec={rec!r}, data_shape=(3, 8, 8), batch_size=2,
                                  preprocess_threads=1, **kw)
    b = it.next()
    res.append([list(it.provide_label[0].shape), b.data[0].asnumpy().tolist(),
                b.label[0].asnumpy().tolist()])
print(json.dumps(res))
""")
    for kw, (shape, data, label) in zip(({}, {"label_pad_width": 20, "mean_r": 10, "std_g": 2}),
                                         json.loads(out)):
        it = ImageDetRecordIter(path_imgrec=rec, data_shape=(3, 8, 8), batch_size=2, **kw)
        b = it.next()
        assert list(it.provide_label[0].shape) == shape
        numpy.testing.assert_allclose(b.data[0].asnumpy(), numpy.asarray(data, "f"), atol=1e-4)
        numpy.testing.assert_allclose(b.label[0].asnumpy(), numpy.asarray(label, "f"),
                                      atol=1e-6)


@requires_mxnet
def test_matches_real_mxnet(tmp_path):
    imgs = _images(5, (14, 18, 3), seed=1)
    rec, idx = _make_rec(tmp_path, imgs, labels=[[i, 2 * i] for i in range(5)])
    cases = {
        "plain": {"data_shape": (3, 10, 12), "batch_size": 2, "label_width": 2},
        "norm": {"data_shape": (3, 14, 18), "batch_size": 3, "label_width": 2, "mean_r": 120,
                     "mean_g": 110, "mean_b": 100, "std_r": 60, "std_g": 50, "std_b": 40, "scale": 0.5,
                     "mirror": True},
        "resize": {"data_shape": (3, 9, 9), "batch_size": 2, "label_width": 2, "resize": 9},
        "up": {"data_shape": (3, 20, 20), "batch_size": 2, "label_width": 2},
        "gray": {"data_shape": (1, 14, 18), "batch_size": 5, "label_width": 2},
        "parts": {"data_shape": (3, 8, 8), "batch_size": 2, "label_width": 2, "num_parts": 2,
                      "part_index": 1, "path_imgidx": idx},
        "nr": {"data_shape": (3, 8, 8), "batch_size": 2, "label_width": 2, "round_batch": False},
        # the random draws of these are fixed: a set angle, offsets int(u * 2 - 1) == 0
        "rot90": {"data_shape": (3, 14, 14), "batch_size": 2, "label_width": 2, "rotate": 90},
        "rot30": {"data_shape": (3, 12, 12), "batch_size": 2, "label_width": 2, "rotate": 30,
                      "fill_value": 7},
        "cap": {"data_shape": (3, 10, 10), "batch_size": 2, "label_width": 2, "max_img_size": 10},
        "hls": {"data_shape": (3, 14, 18), "batch_size": 2, "label_width": 2, "random_h": 1,
                    "random_s": 1, "random_l": 1},
    }
    out = run_mxnet(f"""
import mxnet as mx, json, numpy as np
res = {{}}
for name, kw in json.loads({json.dumps(json.dumps(cases))}).items():
    kw['data_shape'] = tuple(kw['data_shape'])
    it = mx.io.ImageRecordIter(path_imgrec={rec!r}, preprocess_threads=1, **kw)
    ep = []
    for _ in range(2):
        for b in it:
            ep.append([b.data[0].asnumpy().tolist(), b.label[0].asnumpy().tolist(), b.pad])
        it.reset()
    res[name] = [ep, it.provide_label[0].shape]
print(json.dumps(res))
""")
    ref = json.loads(out)
    for name, kw in cases.items():
        it = ImageRecordIter(path_imgrec=rec, **kw)
        ours = []
        for _ in range(2):
            for b in it:
                ours.append([b.data[0].asnumpy(), b.label[0].asnumpy().tolist(), b.pad])
            it.reset()
        ref_ep, ref_label_shape = ref[name]
        assert list(it.provide_label[0].shape) == ref_label_shape, name
        assert len(ours) == len(ref_ep), name
        for (d, lab, pad), (rd, rlab, rpad) in zip(ours, ref_ep):
            if name == "nr" and pad:  # MXNet leaves stale rows and reports pad 0 there
                d, lab, rd, rlab = d[:-pad], lab[:-pad], numpy.asarray(rd)[:-pad], rlab[:-pad]
            else:
                assert pad == rpad, name
            assert lab == rlab, name
            # OpenCV's fixed-point resize and warp
            tol = 1.01 if name in ("resize", "up", "rot30") else 1e-4
            numpy.testing.assert_allclose(d, numpy.asarray(rd, "f"), atol=tol, err_msg=name)


def test_mean_img_computed_saved_and_reused(tmp_path):
    imgs = [numpy.full((8, 8, 3), v, numpy.uint8) for v in (0, 40, 80, 120, 160)]
    rec, _ = _make_rec(tmp_path, imgs)
    mean_path = str(tmp_path / "mean.bin")
    it = ImageRecordIter(path_imgrec=rec, data_shape=(3, 8, 8), batch_size=2,
                         mean_img=mean_path)
    assert it.next().data[0].asnumpy()[:, :, 0, 0].tolist() == [[-80] * 3, [-40] * 3]
    from core import serialization
    saved = serialization.load(mean_path)
    assert list(saved) == ["mean_img"] and saved["mean_img"].shape == (3, 8, 8)
    serialization.save(mean_path, {"mean_img": saved["mean_img"] * 0 + 10})
    it = ImageRecordIter(path_imgrec=rec, data_shape=(3, 8, 8), batch_size=2,
                         mean_img=mean_path, scale=0.5)
    assert it.next().data[0].asnumpy()[1, :, 0, 0].tolist() == [15.0] * 3
    with pytest.raises(ValueError, match=r"mean\.bin.*shape \(3, 8, 8\).*\(3, 4, 4\)"):
        ImageRecordIter(path_imgrec=rec, data_shape=(3, 4, 4), batch_size=2,
                        mean_img=mean_path)


@requires_mxnet
def test_mean_img_files_travel_both_ways(tmp_path):
    imgs = _images(4, (8, 8, 3), seed=2)
    rec, _ = _make_rec(tmp_path, imgs)
    theirs, ours_path = str(tmp_path / "theirs.bin"), str(tmp_path / "ours.bin")
    ImageRecordIter(path_imgrec=rec, data_shape=(3, 8, 8), batch_size=2, mean_img=ours_path)
    out = run_mxnet(f"""
import mxnet as mx, json
it = mx.io.ImageRecordIter(path_imgrec={rec!r}, data_shape=(3, 8, 8), batch_size=2,
                           mean_img={theirs!r}, preprocess_threads=1)
it2 = mx.io.ImageRecordIter(path_imgrec={rec!r}, data_shape=(3, 8, 8), batch_size=2,
                            mean_img={ours_path!r}, preprocess_threads=1)
print(json.dumps([it.next().data[0].asnumpy().tolist(), it2.next().data[0].asnumpy().tolist()]))
""")
    ref, ref2 = (numpy.asarray(a, "f") for a in json.loads(out))
    mine = ImageRecordIter(path_imgrec=rec, data_shape=(3, 8, 8), batch_size=2,
                           mean_img=theirs).next().data[0].asnumpy()
    numpy.testing.assert_allclose(mine, ref, atol=1e-4)
    numpy.testing.assert_allclose(ref2, ref, atol=1e-4)
