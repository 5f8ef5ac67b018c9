"""core.mxnet_format through core.serialization / nd.save / nd.load: files written by real
MXNet 1.9.1 (tests/data/mxnet/, made by make_fixtures.py) load with their values; ours
are byte for byte what MXNet writes and load in real MXNet; malformed files are refused
with the file, the offset and what was expected."""
import json
import os
import struct

import numpy
import pytest

from core import cpu, mxnet_format, nd, np, npx, serialization
from core.dtypes import bfloat16
from core.serialization import SerializationError
from tests.mxnet_ref import requires_mxnet, run_mxnet

DATA = os.path.join(os.path.dirname(os.path.dirname(__file__)), "data", "mxnet")


def fixture(name):
    return os.path.join(DATA, name)


def read(name):
    with open(fixture(name), "rb") as f:
        return f.read()


# --------------------------------------------------------------------------- real MXNet files

def test_nd_save_list_file_loads_as_a_list_on_cpu():
    out = nd.load(fixture("list.params"))
    assert isinstance(out, list) and len(out) == 3
    assert all(isinstance(a, nd.NDArray) and a.context == cpu(0) for a in out)
    assert out[0].dtype == numpy.float32 and out[0].asnumpy().tolist() == [[0, 1, 2], [3, 4, 5]]
    assert out[1].dtype == numpy.int32 and out[1].asnumpy().tolist() == [1, -2, 3, 2 ** 30]
    assert out[2].dtype == numpy.float64 and out[2].asnumpy().tolist() == [0.1]


def test_nd_save_dict_file_with_every_dtype():
    out = nd.load(fixture("dtypes.params"))
    assert isinstance(out, dict)
    assert list(out) == ["float16", "float32", "float64", "uint8", "int8", "int32", "int64",
                         "bool", "bfloat16", "empty"]
    for name, a in out.items():
        want = "float32" if name == "empty" else name
        assert a.dtype.name == want, name
    rng = numpy.random.RandomState(0)  # make_fixtures.py's values
    numpy.testing.assert_array_equal(out["float16"].asnumpy(),
                                     rng.randn(2, 3).astype(numpy.float16))
    numpy.testing.assert_array_equal(out["float32"].asnumpy(),
                                     rng.randn(3, 2).astype(numpy.float32))
    numpy.testing.assert_array_equal(out["float64"].asnumpy(), rng.randn(4))
    assert out["uint8"].asnumpy().tolist() == [0, 1, 255]
    assert out["int8"].asnumpy().tolist() == [-128, 0, 127]
    assert out["int32"].asnumpy().tolist() == [-2 ** 31, 0, 2 ** 31 - 1]
    assert out["int64"].asnumpy().tolist() == [-2 ** 40, 0, 2 ** 40]
    assert out["bool"].asnumpy().tolist() == [True, False, True]
    numpy.testing.assert_array_equal(
        out["bfloat16"].asnumpy(),
        numpy.array([1.5, -2.25, 3.0e38, 0.1], numpy.float32).astype(bfloat16))
    assert out["empty"].shape == (0, 3)


def test_numpy_shape_file_with_scalar_and_empty_arrays():
    out = serialization.load(fixture("np_shape.params"))
    assert out["scalar"].shape == () and out["scalar"].item() == 2.5
    assert out["empty"].shape == (2, 0) and out["empty"].dtype == numpy.float32
    assert out["matrix"].dtype == numpy.int64
    assert out["matrix"].asnumpy().tolist() == [[1, 2], [3, 4]]


def test_sparse_arrays_load_dense():
    out = nd.load(fixture("sparse.params"))
    assert out["rsp"].asnumpy().tolist() == [[0, 0], [1, 2], [0, 0], [3, 4]]
    assert out["csr"].asnumpy().tolist() == [[5, 0, 0, 6], [0, 0, 0, 0], [0, 7, 0, 0]]


def test_legacy_v0_file_loads():
    # MXNet's own legacy-format file (its test_ndarray_legacy_load): six arange(128).
    out = nd.load(fixture("legacy_ndarray.v0"))
    assert len(out) == 6
    for a in out:
        assert a.dtype == numpy.float32
        numpy.testing.assert_array_equal(a.asnumpy(), numpy.arange(128, dtype=numpy.float32))


def _legacy_v1(arr):
    return (struct.pack("<IiQ", mxnet_format.V1_MAGIC, 1, arr.size)
            + struct.pack("<iii", 1, 0, 0) + arr.tobytes())


def test_legacy_v1_array_and_gpu_context():
    a = numpy.arange(5, dtype=numpy.float32)
    v2_gpu = (struct.pack("<Iii", mxnet_format.V2_MAGIC, 0, 2) + struct.pack("<2q", 1, 3)
              + struct.pack("<iii", 2, 1, 6) + numpy.arange(3, dtype=numpy.int64).tobytes())
    blob = (mxnet_format.MAGIC_BYTES + bytes(8) + struct.pack("<Q", 2) + _legacy_v1(a)
            + v2_gpu + struct.pack("<Q", 0))
    out = nd.load_frombuffer(blob)
    assert out[0].asnumpy().tolist() == a.tolist()
    assert out[1].shape == (1, 3) and out[1].dtype == numpy.int64
    assert out[1].context == cpu(0)  # saved on gpu(1): loads where we are told


def test_raw_array_records():
    # MXNet's test_load_saved_gpu_array_when_no_gpus_are_present: the pickled state
    # ({'handle': ...}) of mx.nd.arange(1, ctx=mx.gpu()).
    handle = (b"\xc9\xfa\x93\xf9\x00\x00\x00\x00\x01\x00\x00\x00\x01\x00\x00\x00"
              b"\x00\x00\x00\x00\x02\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00"
              b"\x00\x00\x00\x00")
    arr = mxnet_format.loads_array(bytearray(handle))
    assert arr.dtype == numpy.float32 and arr.tolist() == [0.0]
    assert mxnet_format.dumps_array(arr) == handle.replace(b"\x02\x00", b"\x01\x00", 1)
    s = mxnet_format.dumps_array(numpy.array(7, numpy.int64))
    assert s[:4] == struct.pack("<I", mxnet_format.V3_MAGIC)
    assert mxnet_format.loads_array(s).tolist() == 7
    with pytest.raises(mxnet_format.FormatError, match="at byte 36: the end of the data"):
        mxnet_format.loads_array(handle + b"x")


def test_our_files_are_byte_for_byte_mxnets():
    for name in ("list.params", "dtypes.params", "np_shape.params", "gluon_net.params",
                 "gluon_net-0000.params", "module_net-0003.params"):
        raw = read(name)
        kind, entries = mxnet_format.loads(raw)
        assert mxnet_format.dumps(kind, entries) == raw, name


def test_nd_save_round_trip_and_load_frombuffer(tmp_path):
    f = str(tmp_path / "x")
    nd.save(f, nd.arange(3))  # a single NDArray saves as a list of one
    assert [a.asnumpy().tolist() for a in nd.load(f)] == [[0.0, 1.0, 2.0]]
    nd.save(f, {"a": nd.ones((2, 2), dtype="bfloat16"), "b": nd.zeros((0,), dtype="int8")})
    with open(f, "rb") as fh:
        out = nd.load_frombuffer(fh.read())
    assert out["a"].dtype == bfloat16 and out["b"].shape == (0,)
    assert nd.load_frombuffer(bytearray(read("list.params")))[1].dtype == numpy.int32
    serialization.save(f, {"z": nd.ones((2,))}, format="npz")
    with open(f, "rb") as fh:
        assert nd.load_frombuffer(memoryview(fh.read()))["z"].shape == (2,)
    serialization.save(f, {"h": nd.ones((2,), dtype="bfloat16")}, format="hdf5")
    with open(f, "rb") as fh:
        assert nd.load_frombuffer(fh.read())["h"].dtype == bfloat16
    with pytest.raises(TypeError, match="load_frombuffer: buf must be bytes, got int"):
        nd.load_frombuffer(3)
    with pytest.raises(SerializationError, match="<buffer>.*got first bytes none"):
        nd.load_frombuffer(b"")
    nd.save(f, [])
    assert nd.load(f) == {}


# --------------------------------------------------------------------------- malformed files

def _header(count):
    return mxnet_format.MAGIC_BYTES + bytes(8) + struct.pack("<Q", count)


def _array(shape=(2,), flag=0, stype=0, magic=mxnet_format.V2_MAGIC, data=None, dev=1):
    n = max(int(numpy.prod(shape)), 0)
    body = struct.pack("<Ii", magic, stype) + struct.pack(f"<i{len(shape)}q", len(shape), *shape)
    body += struct.pack("<iii", dev, 0, flag)
    return body + (data if data is not None else bytes(4 * n))


NO_NAMES = struct.pack("<Q", 0)


@pytest.mark.parametrize("blob, match", [
    (_header(1 << 40), r"at byte 16: a number of arrays that fits"),
    (_header(1) + struct.pack("<I", 0xDEADBEEF), r"at byte 24: an array header for array 0"),
    (_header(1) + _array(flag=13) + NO_NAMES, r"at byte 52: a type flag of array 0 .*got 13"),
    (_header(1) + _array(stype=3) + NO_NAMES,
     r"at byte 28: the storage type of array 0: 0 default, 1 row_sparse or 2 csr, got 3"),
    (_header(1) + _array(stype=1, magic=mxnet_format.V3_MAGIC) + NO_NAMES,
     r"at byte 28: the storage type of array 0: 0 \(default\), got 1"),
    (_header(1) + _array(dev=7) + NO_NAMES, r"at byte 44: a device type of array 0"),
    (_header(1) + _array((2, -3)) + NO_NAMES,
     r"at byte 32: non-negative dimensions for array 0, got \(2, -3\)"),
    (_header(1) + _array(()) + NO_NAMES,
     r"at byte 24: array 0 holds no data \(an NDArray that was never allocated"),
    (_header(1) + _array((-1,), magic=mxnet_format.V3_MAGIC) + NO_NAMES,
     r"at byte 24: array 0 holds no data"),
    (_header(1) + struct.pack("<Iii", mxnet_format.V2_MAGIC, 0, 65),
     r"at byte 32: the number of dimensions of array 0 between 0 and 64, got 65"),
    (_header(1) + _array() + struct.pack("<Q", 2),
     r"at byte 64: 0 names or one per array \(1\), got 2"),
    (_header(1) + _array() + struct.pack("<QQ", 1, 2) + b"\xff\xfe",
     r"at byte 80: name 0 in UTF-8"),
    (_header(1) + _array() + NO_NAMES + b"x", r"at byte 72: the end of the data, got 1 more"),
])
def test_malformed_files_name_the_file_the_offset_and_the_expectation(tmp_path, blob, match):
    f = tmp_path / "bad.params"
    f.write_bytes(blob)
    with pytest.raises(SerializationError, match=r"bad\.params.*not a valid MXNet NDArray "
                                                 r"file: " + match):
        serialization.load(str(f))


def test_foreign_bytes_are_not_taken_for_mxnet(tmp_path):
    f = tmp_path / "other.params"
    f.write_bytes(b"\x13\x01" + bytes(30))
    with pytest.raises(SerializationError, match=r"other\.params.*not a kbackend array file "
                                                 r"\(expected MXNet's NDArray format \(first "
                                                 r"bytes 1201000000000000\).*got first bytes "
                                                 r"1301000000000000"):
        serialization.load(str(f))


def test_errors_are_mxnet_errors_too():
    from core.ops.dispatch import MXNetError

    with pytest.raises(MXNetError, match="at byte 8"):  # MXNet's nd.load raises MXNetError
        nd.load_frombuffer(read("list.params")[:8])


def test_every_truncation_is_refused(tmp_path):
    raw = read("sparse.params")
    f = tmp_path / "cut.params"
    for n in range(8, len(raw)):
        f.write_bytes(raw[:n])
        with pytest.raises(SerializationError, match=r"cut\.params.*not a valid MXNet "
                                                     r"NDArray file: at byte \d+: "):
            serialization.load(str(f))


def test_sparse_with_bad_indices_is_refused():
    data = numpy.ones((1, 2), numpy.float32)
    body = (struct.pack("<Ii", mxnet_format.V2_MAGIC, 1) + struct.pack("<i2q", 2, 1, 2)
            + struct.pack("<i2q", 2, 4, 2) + struct.pack("<iii", 1, 0, 0)
            + struct.pack("<i", 6) + struct.pack("<iq", 1, 1)
            + data.tobytes() + struct.pack("<q", 9))
    with pytest.raises(SerializationError, match=r"row_sparse array 0: 1 row indices within "
                                                 r"\[0, 4\).*got indices \[9\]"):
        nd.load_frombuffer(_header(1) + body + NO_NAMES)


@pytest.mark.parametrize("dtype", ["float8_e5m2", "int16", "uint16", "uint32", "uint64"])
def test_dtypes_mxnet_cannot_load_are_refused_with_the_formats_that_can(tmp_path, dtype):
    f = str(tmp_path / "f8.params")
    with pytest.raises(TypeError, match=rf"'w' has dtype {dtype}, which MXNet's binary "
                                        r".params format cannot hold \(MXNet 1.9 loads "
                                        r"float32, float64.*\.npz or HDF5"):
        nd.save(f, {"w": nd.ones((2,)), "w2": nd.ones((2,))} | {"w": nd.ones((2,),
                                                                              dtype=dtype)})
    assert not os.path.exists(f)
    nd.save(f + ".npz", {"w": nd.ones((2,), dtype=dtype)})
    assert nd.load(f + ".npz")["w"].dtype.name == dtype


@pytest.mark.parametrize("flag, dtype", [(8, "int16"), (9, "uint16"), (10, "uint32"),
                                         (11, "uint64")])
def test_type_flags_mxnet_defines_but_does_not_write_still_read(flag, dtype):
    a = numpy.array([1, 2, 300], dtype=dtype)
    blob = _header(1) + _array((3,), flag=flag, data=a.tobytes()) + NO_NAMES
    out = nd.load_frombuffer(blob)[0]
    assert out.dtype.name == dtype and out.asnumpy().tolist() == [1, 2, 300]


# --------------------------------------------------------------------------- real MXNet reads ours

_DTYPES = ["float16", "float32", "float64", "uint8", "int8", "int32", "int64", "bool",
           "bfloat16"]

_READ_BACK = """
import json, sys
import numpy as np
import mxnet as mx
from mxnet.contrib.amp.amp import bfloat16
def show(a):
    if a.dtype == bfloat16:
        return {"dtype": "bfloat16", "shape": list(a.shape),
                "v": mx.nd.amp_cast(a, dtype="float32").asnumpy().tolist()}
    return {"dtype": np.dtype(a.dtype).name, "shape": list(a.shape), "v": a.asnumpy().tolist()}
def load(path):
    out = mx.nd.load(path)
    if isinstance(out, dict):
        return {k: show(v) for k, v in out.items()}
    return [show(v) for v in out]
"""


@requires_mxnet
def test_real_mxnet_loads_our_nd_save_files(tmp_path):
    rng = numpy.random.default_rng(1)
    data = {}
    for dt in _DTYPES:
        v = rng.standard_normal((2, 3)) * 50
        data[dt] = nd.array(v > 0 if dt == "bool" else v, dtype=dt)
    data["empty"] = nd.zeros((0, 3))
    nd.save(str(tmp_path / "d.params"), data)
    nd.save(str(tmp_path / "l.params"), [nd.arange(4), nd.ones((1, 2), dtype="int64")])
    code = _READ_BACK + (
        "print(json.dumps({'d': load('d.params'), 'l': load('l.params')}))")
    got = json.loads(run_mxnet(code, cwd=str(tmp_path)).strip().splitlines()[-1])
    assert list(got["d"]) == list(data)
    for name, a in data.items():
        g = got["d"][name]
        assert g["dtype"] == a.dtype.name and tuple(g["shape"]) == a.shape, name
        want = a.asnumpy().astype(numpy.float64 if a.dtype == bfloat16 else a.dtype)
        numpy.testing.assert_array_equal(numpy.array(g["v"], dtype=want.dtype).reshape(a.shape),
                                         want, err_msg=name)
    assert got["l"][0]["v"] == [0.0, 1.0, 2.0, 3.0] and got["l"][1]["dtype"] == "int64"


def test_v3_arrays_for_scalars_and_for_npx_save(tmp_path):
    f = str(tmp_path / "v")
    v2, v3 = struct.pack("<I", mxnet_format.V2_MAGIC), struct.pack("<I", mxnet_format.V3_MAGIC)
    nd.save(f, [nd.ones((2,))])
    with open(f, "rb") as fh:
        assert fh.read()[24:28] == v2
    nd.save(f, [nd.ones((2,)), nd.array(1.0)])  # a 0-d array: the whole file is V3
    with open(f, "rb") as fh:
        raw = fh.read()
    assert raw[24:28] == v3 and raw.count(v3) == 2 and v2 not in raw
    npx.save(f, {"a": np.ones((2, 3))})  # mx.npx.save writes V3
    with open(f, "rb") as fh:
        assert fh.read()[24:28] == v3
    assert npx.load(f)["a"].shape == (2, 3)
    npx.set_np()  # mx.nd.save (and so save_parameters) writes V3 under NumPy semantics
    try:
        nd.save(f, [nd.ones((2,))])
        with open(f, "rb") as fh:
            assert fh.read()[24:28] == v3
        serialization.save(f, [nd.ones((2,))], np_shape=False)
        with open(f, "rb") as fh:
            assert fh.read()[24:28] == v2
    finally:
        npx.reset_np()
    nd.save(f, [nd.ones((2,))], np_shape=True)
    with open(f, "rb") as fh:
        assert fh.read()[24:28] == v3
    assert nd.load(f)[0].shape == (2,)  # we read both versions in either mode


@requires_mxnet
def test_real_mxnet_loads_our_scalar_files_in_numpy_shape_mode(tmp_path):
    nd.save(str(tmp_path / "s.params"), {"s": nd.array(4.5), "m": nd.ones((2, 0))})
    npx.save(str(tmp_path / "n.params"), {"a": np.arange(6).reshape(2, 3)})
    code = _READ_BACK + (
        "with mx.util.np_shape(True):\n"
        "    print(json.dumps(load('s.params')))\n"
        "mx.npx.set_np()\n"
        "print(json.dumps(mx.npx.load('n.params')['a'].tolist()))")
    lines = run_mxnet(code, cwd=str(tmp_path)).strip().splitlines()
    got = json.loads(lines[-2])
    assert got["s"] == {"dtype": "float32", "shape": [], "v": 4.5}
    assert got["m"]["shape"] == [2, 0]
    assert json.loads(lines[-1]) == [[0.0, 1.0, 2.0], [3.0, 4.0, 5.0]]
