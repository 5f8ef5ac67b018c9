"""core.recordio: dmlc's RecordIO layout byte for byte, checked against real MXNet 1.9.1
both ways; image records; damaged files named by path and offset."""
import io
import json
import os
import pathlib
import pickle
import struct

import numpy
import pytest

from core import recordio
from tests.mxnet_ref import requires_mxnet, run_mxnet

MAGIC = struct.pack("<I", 0xCED7230A)
# Records that exercise the multi-part split: the magic at aligned and unaligned offsets,
# at the start, the end, back to back, and lengths that need 0-3 padding bytes.
RECORDS = [b"", b"a", b"abcd", MAGIC, b"abcd" + MAGIC + b"xy" + MAGIC + MAGIC + b"q",
           b"x" + MAGIC + b"yyy", MAGIC * 3, b"12" + MAGIC, bytes(range(256)) * 3]


def _write(path, records, idx=None):
    w = (recordio.MXIndexedRecordIO(idx, path, "w") if idx else recordio.MXRecordIO(path, "w"))
    for i, r in enumerate(records):
        w.write_idx(i, r) if idx else w.write(r)
    w.close()


def test_round_trip_sequential(tmp_path):
    path = str(tmp_path / "a.rec")
    _write(path, RECORDS)
    r = recordio.MXRecordIO(path, "r")
    assert [r.read() for _ in RECORDS] == RECORDS
    assert r.read() is None
    r.reset()
    assert r.read() == RECORDS[0]
    r.close()


def test_layout_of_a_plain_and_a_split_record(tmp_path):
    path = str(tmp_path / "a.rec")
    _write(path, [b"abcde", b"wxyz" + MAGIC + b"k"])
    raw = pathlib.Path(path).read_bytes()
    # magic, lrec = length 5 (flag 0), 5 bytes, 3 padding bytes
    assert raw[:16] == MAGIC + struct.pack("<I", 5) + b"abcde\0\0\0"
    # split at the aligned magic: part 1 (flag 1, 4 bytes), part 3 (flag 3, 1 byte + pad)
    assert raw[16:] == (MAGIC + struct.pack("<I", (1 << 29) | 4) + b"wxyz"
                        + MAGIC + struct.pack("<I", (3 << 29) | 1) + b"k\0\0\0")


def test_indexed_keys_offsets_and_random_access(tmp_path):
    rec, idx = str(tmp_path / "a.rec"), str(tmp_path / "a.idx")
    _write(rec, RECORDS, idx)
    lines = pathlib.Path(idx).read_text().splitlines()
    assert lines[0] == "0\t0" and len(lines) == len(RECORDS)
    r = recordio.MXIndexedRecordIO(idx, rec, "r")
    assert r.keys == list(range(len(RECORDS)))
    for k in reversed(r.keys):
        assert r.read_idx(k) == RECORDS[k]
    with pytest.raises(KeyError, match="a.idx"):
        r.read_idx(99)
    # a copy for another process reopens the files by name (no handle travels)
    r2 = pickle.loads(pickle.dumps(r))
    assert r2.read_idx(4) == RECORDS[4]
    r.close()
    r2.close()


def test_tell_matches_the_index(tmp_path):
    w = recordio.MXIndexedRecordIO(str(tmp_path / "a.idx"), str(tmp_path / "a.rec"), "w")
    assert w.tell() == 0
    for i in range(3):
        w.write_idx(i, b"record_%d" % i)
    assert w.tell() == 48 and list(w.idx.values()) == [0, 16, 32]
    w.close()


def test_writes_land_on_close_only(tmp_path):
    path = str(tmp_path / "a.rec")
    w = recordio.MXRecordIO(path, "w")
    w.write(b"x")
    assert not os.path.exists(path)
    w.close()
    assert os.path.getsize(path) == 12


def test_header_pack_unpack():
    s = recordio.pack(recordio.IRHeader(0, 3.5, 12, 7), b"payload")
    assert len(s) == 24 + 7
    h, p = recordio.unpack(s)
    assert (h.flag, h.label, h.id, h.id2, p) == (0, 3.5, 12, 7, b"payload")
    h, p = recordio.unpack(recordio.pack(recordio.IRHeader(9, numpy.arange(3), 1, 0), b"z"))
    assert h.flag == 3 and h.label.dtype == numpy.float32 and h.label.tolist() == [0, 1, 2]
    assert p == b"z"
    with pytest.raises(ValueError, match="24-byte header"):
        recordio.unpack(b"short")
    with pytest.raises(ValueError, match="announces 5 labels"):
        recordio.unpack(struct.pack("<IfQQ", 5, 0, 0, 0) + b"1234")


def test_damaged_files_name_the_file_and_offset(tmp_path):
    path = str(tmp_path / "a.rec")
    _write(path, [b"abcdefgh", b"ijkl"])
    raw = pathlib.Path(path).read_bytes()
    cut = str(tmp_path / "cut.rec")
    pathlib.Path(cut).write_bytes(raw[:-2])
    r = recordio.MXRecordIO(cut, "r")
    assert r.read() == b"abcdefgh"
    with pytest.raises(ValueError, match=r"cut\.rec.*offset 16.*announces 4 bytes"):
        r.read()
    bad = str(tmp_path / "bad.rec")
    pathlib.Path(bad).write_bytes(raw[:16] + b"\x01\x02\x03\x04" + raw[20:])
    r = recordio.MXRecordIO(bad, "r")
    r.read()
    with pytest.raises(ValueError, match=r"bad\.rec.*offset 16.*magic number 0x04030201"):
        r.read()
    head = str(tmp_path / "head.rec")
    pathlib.Path(head).write_bytes(raw[:5])
    with pytest.raises(ValueError, match="header needs 8 bytes"):
        recordio.MXRecordIO(head, "r").read()
    flag = str(tmp_path / "flag.rec")
    pathlib.Path(flag).write_bytes(MAGIC + struct.pack("<I", (2 << 29) | 0))
    with pytest.raises(ValueError, match="continuation flag 2 at the start"):
        recordio.MXRecordIO(flag, "r").read()


def test_missing_and_malformed_files(tmp_path):
    with pytest.raises(FileNotFoundError, match="no record file"):
        recordio.MXRecordIO(str(tmp_path / "none.rec"), "r")
    rec = str(tmp_path / "a.rec")
    _write(rec, [b"x"])
    with pytest.raises(FileNotFoundError, match="no index file"):
        recordio.MXIndexedRecordIO(str(tmp_path / "none.idx"), rec, "r")
    idx = str(tmp_path / "a.idx")
    pathlib.Path(idx).write_text("0\t0\nzero\tone\n")
    with pytest.raises(ValueError, match=r"a\.idx.* line 2"):
        recordio.MXIndexedRecordIO(idx, rec, "r")
    pathlib.Path(idx).write_text("0\t400\n")
    with pytest.raises(ValueError, match="offset 400 is outside"):
        recordio.MXIndexedRecordIO(idx, rec, "r")
    with pytest.raises(ValueError, match="flag must be 'r' or 'w'"):
        recordio.MXRecordIO(rec, "a")
    r = recordio.MXRecordIO(rec, "r")
    with pytest.raises(ValueError, match="not open for writing"):
        r.write(b"x")


def test_pack_img_round_trip():
    pytest.importorskip("PIL")
    rng = numpy.random.default_rng(0)
    bgr = rng.integers(0, 256, (6, 7, 3), dtype=numpy.uint8)
    h, out = recordio.unpack_img(recordio.pack_img(recordio.IRHeader(0, 1.0, 3, 0), bgr,
                                                   img_fmt=".png"))
    numpy.testing.assert_array_equal(out, bgr)
    assert h.id == 3
    gray = rng.integers(0, 256, (5, 4), dtype=numpy.uint8)
    _, out = recordio.unpack_img(recordio.pack_img(recordio.IRHeader(0, 0, 0, 0), gray,
                                                   img_fmt=".png"))
    numpy.testing.assert_array_equal(out, gray)
    smooth = numpy.tile(numpy.linspace(0, 250, 16, dtype=numpy.uint8)[None, :, None], (16, 1, 3))
    _, out = recordio.unpack_img(recordio.pack_img(recordio.IRHeader(0, 0, 0, 0), smooth,
                                                   quality=95), iscolor=1)
    assert out.shape == (16, 16, 3) and numpy.abs(out.astype(int) - smooth).max() <= 4
    with pytest.raises(ValueError, match="img_fmt"):
        recordio.pack_img(recordio.IRHeader(0, 0, 0, 0), bgr, img_fmt=".bmp")
    with pytest.raises(ValueError, match="cannot decode"):
        recordio.unpack_img(recordio.pack(recordio.IRHeader(0, 0, 0, 0), b"not an image"))


# ------------------------------------------------------------------ real MXNet, both ways
@requires_mxnet
def test_mxnet_writes_we_read_byte_identical(tmp_path):
    hexes = json.dumps([r.hex() for r in RECORDS])
    run_mxnet(f"""
import mxnet as mx, json, numpy as np
recs = [bytes.fromhex(h) for h in json.loads({hexes!r})]
w = mx.recordio.MXIndexedRecordIO('m.idx', 'm.rec', 'w')
for i, r in enumerate(recs):
    w.write_idx(i, r)
w.close()
w = mx.recordio.MXRecordIO('h.rec', 'w')
w.write(mx.recordio.pack(mx.recordio.IRHeader(0, 2.5, 17, 3), b'abc'))
w.write(mx.recordio.pack(mx.recordio.IRHeader(0, np.array([1, 2, 3], 'f'), 18, 0), b'de'))
w.close()
""", cwd=str(tmp_path))
    ours = str(tmp_path / "o.rec")
    _write(ours, RECORDS, str(tmp_path / "o.idx"))
    assert pathlib.Path(ours).read_bytes() == pathlib.Path(tmp_path / "m.rec").read_bytes()
    assert (tmp_path / "o.idx").read_text() == (tmp_path / "m.idx").read_text()
    r = recordio.MXIndexedRecordIO(str(tmp_path / "m.idx"), str(tmp_path / "m.rec"), "r")
    assert [r.read_idx(k) for k in r.keys] == RECORDS
    r = recordio.MXRecordIO(str(tmp_path / "h.rec"), "r")
    h, s = recordio.unpack(r.read())
    assert (h.flag, h.label, h.id, h.id2, s) == (0, 2.5, 17, 3, b"abc")
    h, s = recordio.unpack(r.read())
    assert h.flag == 3 and h.label.tolist() == [1, 2, 3] and s == b"de"


@requires_mxnet
def test_we_write_mxnet_reads(tmp_path):
    pytest.importorskip("PIL")
    from PIL import Image
    rec, idx = str(tmp_path / "o.rec"), str(tmp_path / "o.idx")
    w = recordio.MXIndexedRecordIO(idx, rec, "w")
    for i, r in enumerate(RECORDS):
        w.write_idx(i, r)
    w.close()
    img = numpy.zeros((4, 6, 3), numpy.uint8)
    img[..., 0], img[..., 2] = 10, 240  # RGB: red
    buf = io.BytesIO()
    Image.fromarray(img).save(buf, "PNG")
    w = recordio.MXRecordIO(str(tmp_path / "h.rec"), "w")
    w.write(recordio.pack(recordio.IRHeader(0, [4, 5], 9, 0), buf.getvalue()))
    w.write(recordio.pack_img(recordio.IRHeader(0, 1.5, 10, 0), img[..., ::-1], img_fmt=".png"))
    w.close()
    out = run_mxnet("""
import mxnet as mx, json
r = mx.recordio.MXIndexedRecordIO('o.idx', 'o.rec', 'r')
print(json.dumps([r.read_idx(k).hex() for k in r.keys]))
r = mx.recordio.MXRecordIO('h.rec', 'r')
for _ in range(2):
    h, s = mx.recordio.unpack(r.read())
    im = mx.image.imdecode(s).asnumpy()
    print(json.dumps([int(h.flag), [float(v) for v in (h.label if h.flag else [h.label])],
                      int(h.id), list(im.shape), im[0, 0].tolist()]))
""", cwd=str(tmp_path)).splitlines()
    assert [bytes.fromhex(h) for h in json.loads(out[0])] == RECORDS
    assert json.loads(out[1]) == [2, [4.0, 5.0], 9, [4, 6, 3], [10, 0, 240]]
    assert json.loads(out[2]) == [0, [1.5], 10, [4, 6, 3], [10, 0, 240]]
