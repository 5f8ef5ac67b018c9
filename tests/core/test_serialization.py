"""core.serialization: formats, round trips, atomic writes, refusing unsafe files.
(MXNet's binary format in detail, with real MXNet's files: tests/core/test_mxnet_format.py.)"""
import os
import pickle
import zipfile

import h5py
import numpy
import pytest

from core import cpu, mxnet_format, nd, serialization
from core.dtypes import SUPPORTED, bfloat16


def _sample(dtype, shape=(2, 3)):
    rng = numpy.random.default_rng(0)
    a = rng.standard_normal(shape) * 10
    if numpy.dtype(dtype).kind == "b":
        return nd.array(a > 0, dtype=dtype)
    return nd.array(a.astype(numpy.float64), dtype=dtype)


@pytest.mark.parametrize("ext", [".params", ".npz", ".h5", ".hdf5"])
@pytest.mark.parametrize("dtype", [d.name for d in SUPPORTED])
def test_round_trip_every_dtype(tmp_path, ext, dtype):
    f = str(tmp_path / ("a" + ext))
    data = {"x": _sample(dtype), "scalar": _sample(dtype, ()), "empty": _sample(dtype, (0, 4))}
    if ext == ".params" and numpy.dtype(dtype) not in mxnet_format.WRITABLE:
        # MXNet's format has no float8; MXNet 1.9 cannot load int16, uint16/32/64
        with pytest.raises(TypeError, match=rf"'x' has dtype {dtype}.*MXNet's binary .params "
                                            r"format cannot hold.*\.npz or HDF5"):
            serialization.save(f, data)
        assert not os.path.exists(f)
        serialization.save(f, data, format="npz")
    else:
        serialization.save(f, data)
    out = serialization.load(f)
    assert list(out) == ["x", "scalar", "empty"]
    for k, v in data.items():
        assert out[k].dtype == v.dtype and out[k].shape == v.shape
        numpy.testing.assert_array_equal(out[k].asnumpy(), v.asnumpy())


@pytest.mark.parametrize("ext", [".params", ".h5"])
def test_lists_single_arrays_and_odd_names(tmp_path, ext):
    f = str(tmp_path / ("b" + ext))
    serialization.save(f, [nd.ones((2,)), nd.zeros((3,), dtype="int32")])
    out = serialization.load(f)
    assert isinstance(out, list) and [a.shape for a in out] == [(2,), (3,)]
    assert out[1].dtype == numpy.int32
    serialization.save(f, nd.arange(3))
    out = serialization.load(f)
    assert isinstance(out, list) and out[0].asnumpy().tolist() == [0.0, 1.0, 2.0]
    names = ["features.0.weight", "arg:fc/weight", "", "__kbackend__", "ünïcode", "a" * 300]
    serialization.save(f, {n: nd.full((1,), i) for i, n in enumerate(names)})
    out = serialization.load(f)
    assert list(out) == names
    assert [out[n].item() for n in names] == list(range(len(names)))
    serialization.save(f, {})
    assert serialization.load(f) == {}


@pytest.mark.multi_device
def test_load_on_a_context(tmp_path):
    f = str(tmp_path / "c.params")
    serialization.save(f, {"w": nd.ones((2,), ctx=cpu(1))})
    assert serialization.load(f)["w"].context == cpu(0)
    assert serialization.load(f, ctx=cpu(2))["w"].context == cpu(2)
    with cpu(3):
        assert serialization.load(f)["w"].context == cpu(3)


def test_format_follows_the_name_on_save_and_the_bytes_on_load(tmp_path):
    f = tmp_path / "net.params"
    serialization.save(str(f), {"w": nd.ones((2,))})  # MXNet's format by default
    assert f.read_bytes()[:8] == mxnet_format.MAGIC_BYTES
    for name in ("x.nd", "noext"):
        serialization.save(str(tmp_path / name), [nd.ones((1,))])
        assert (tmp_path / name).read_bytes()[:8] == mxnet_format.MAGIC_BYTES
    z = tmp_path / "net.NPZ"
    serialization.save(str(z), {"w": nd.ones((2,))})
    assert z.read_bytes()[:4] == b"PK\x03\x04" and zipfile.is_zipfile(z)
    serialization.save(str(f), {"w": nd.ones((2,))}, format="npz")
    assert zipfile.is_zipfile(f)
    serialization.save(str(f), {"w": nd.ones((2,))}, format="hdf5")
    assert h5py.is_hdf5(str(f)) and serialization.load(str(f))["w"].shape == (2,)
    serialization.save(str(z), {"w": nd.ones((2,))}, format="mxnet")
    assert z.read_bytes()[:8] == mxnet_format.MAGIC_BYTES
    assert serialization.load(str(z))["w"].shape == (2,)
    with pytest.raises(ValueError, match="format='json' is not one of mxnet, npz, hdf5"):
        serialization.save(str(f), [nd.ones(1)], format="json")
    h = tmp_path / "net.H5"
    serialization.save(str(h), {"w": nd.ones((2,))})
    assert h5py.is_hdf5(str(h))
    renamed = tmp_path / "renamed.npz"
    os.replace(h, renamed)  # HDF5 data under an .npz name still loads
    assert serialization.load(str(renamed))["w"].shape == (2,)


def test_bfloat16_is_stored_as_uint16_bits(tmp_path):
    f = str(tmp_path / "bf.npz")
    x = nd.array([1.5, -2.25, 3.0e38], dtype="bfloat16")
    serialization.save(f, {"x": x})
    with numpy.load(f, allow_pickle=False) as raw:
        assert raw["x"].dtype == numpy.uint16
        numpy.testing.assert_array_equal(raw["x"], x.asnumpy().view(numpy.uint16))
    y = serialization.load(f)["x"]
    assert y.dtype == bfloat16
    numpy.testing.assert_array_equal(y.asnumpy().view(numpy.uint16),
                                     x.asnumpy().view(numpy.uint16))
    h = str(tmp_path / "bf.h5")
    serialization.save(h, [x])
    with h5py.File(h, "r") as raw:
        assert raw["a0"].dtype == numpy.uint16
    assert serialization.load(h)[0].dtype == bfloat16


def test_plain_npz_and_hdf5_load_as_dicts(tmp_path):
    f = str(tmp_path / "plain.npz")
    numpy.savez(f, a=numpy.arange(3, dtype=numpy.int64), b=numpy.ones((2, 2), numpy.float32))
    out = serialization.load(f)
    assert sorted(out) == ["a", "b"] and out["a"].dtype == numpy.int64
    h = str(tmp_path / "plain.h5")
    with h5py.File(h, "w") as g:
        g.create_dataset("grp/w", data=numpy.ones(3))
    assert serialization.load(h)["grp/w"].shape == (3,)


@pytest.mark.parametrize("ext", [".params", ".npz", ".h5"])
def test_failed_write_leaves_the_old_file_intact(tmp_path, monkeypatch, ext):
    f = str(tmp_path / ("model" + ext))
    serialization.save(f, {"w": nd.ones((3,))})
    with open(f, "rb") as fh:
        before = fh.read()
    calls = []
    if ext == ".params":
        real = mxnet_format.write

        def failing(fp, kind, entries, np_shape=False):
            real(fp, kind, entries[:1], np_shape)  # part of the data, then the disk fills up
            raise OSError("disk full")

        monkeypatch.setattr(mxnet_format, "write", failing)
    elif ext == ".npz":
        real = numpy.lib.format.write_array

        def failing(fp, array, *args, **kwargs):
            calls.append(1)
            if len(calls) == 2:  # after the description, in the middle of the arrays
                raise OSError("disk full")
            return real(fp, array, *args, **kwargs)

        monkeypatch.setattr(numpy.lib.format, "write_array", failing)
    else:
        real = h5py.Group.create_dataset

        def failing(self, *args, **kwargs):
            calls.append(1)
            if len(calls) == 2:
                raise OSError("disk full")
            return real(self, *args, **kwargs)

        monkeypatch.setattr(h5py.Group, "create_dataset", failing)
    with pytest.raises(OSError, match="disk full"):
        serialization.save(f, {"w": nd.zeros((5,)), "b": nd.zeros((5,))})
    with open(f, "rb") as fh:
        assert fh.read() == before
    assert serialization.load(f)["w"].asnumpy().tolist() == [1.0, 1.0, 1.0]
    assert os.listdir(tmp_path) == [os.path.basename(f)]  # no temporary file left


def test_write_is_synced_then_renamed(tmp_path, monkeypatch):
    synced, replaced = [], []
    real_fsync, real_replace = os.fsync, os.replace
    monkeypatch.setattr(os, "fsync", lambda fd: (synced.append(fd), real_fsync(fd))[1])
    monkeypatch.setattr(os, "replace", lambda a, b: (replaced.append((a, b)),
                                                     real_replace(a, b))[1])
    f = str(tmp_path / "m.params")
    serialization.save(f, {"w": nd.ones((2,))})
    assert synced and len(replaced) == 1
    tmp, target = replaced[0]
    assert target == f and os.path.dirname(tmp) == str(tmp_path)
    mask = os.umask(0)
    os.umask(mask)
    assert os.stat(f).st_mode & 0o777 == 0o666 & ~mask


def test_pickled_data_is_refused_without_unpickling(tmp_path, monkeypatch):
    def no_pickle(*args, **kwargs):
        raise AssertionError("pickle was used")

    monkeypatch.setattr(pickle, "load", no_pickle)
    monkeypatch.setattr(pickle, "loads", no_pickle)
    npy = str(tmp_path / "obj.npy")
    numpy.save(npy, numpy.array([{"evil": 1}], dtype=object), allow_pickle=True)
    with pytest.raises(ValueError, match="obj.npy.*single .npy array"):
        serialization.load(npy)
    npz = str(tmp_path / "obj.params")
    with open(npz, "wb") as fh:
        numpy.savez(fh, w=numpy.ones(2), evil=numpy.array([object()], dtype=object))
    with pytest.raises(ValueError, match=r"obj\.params.*pickle.*refused"):
        serialization.load(npz)
    raw = str(tmp_path / "raw.pkl")
    with open(raw, "wb") as fh:
        fh.write(b"\x80\x04\x95" + bytes(20))
    with pytest.raises(ValueError, match="raw.pkl.*not a kbackend array file"):
        serialization.load(raw)


@pytest.mark.parametrize("content", [b"", b"hello world", b"PK\x03\x04garbage" * 3,
                                     b"\x89HDF\r\n\x1a\nbroken"])
def test_corrupted_files_give_clear_errors(tmp_path, content):
    f = tmp_path / "bad.params"
    f.write_bytes(content)
    with pytest.raises(ValueError, match="bad.params"):
        serialization.load(str(f))


def test_truncated_file_and_tampered_description(tmp_path):
    f = tmp_path / "t.params"
    serialization.save(str(f), {"w": nd.ones((100,))})
    data = f.read_bytes()
    f.write_bytes(data[: len(data) // 2])
    with pytest.raises(ValueError, match="t.params"):
        serialization.load(str(f))
    g = tmp_path / "fake.npz"
    with zipfile.ZipFile(g, "w") as zf, zf.open("__kbackend__.npy", "w") as m:
        numpy.lib.format.write_array(m, numpy.frombuffer(b'{"format": "x"}', numpy.uint8))
    with pytest.raises(ValueError, match="fake.npz.*description"):
        serialization.load(str(g))
    h = tmp_path / "text.npz"
    with zipfile.ZipFile(h, "w") as zf:
        zf.writestr("notes.txt", "hello")
    with pytest.raises(ValueError, match="text.npz"):
        serialization.load(str(h))


def test_save_argument_errors(tmp_path):
    f = str(tmp_path / "x.params")
    with pytest.raises(TypeError, match="must be an NDArray"):
        serialization.save(f, {"w": [1, 2]})
    with pytest.raises(TypeError, match="keys must be strings"):
        serialization.save(f, {1: nd.ones(1)})
    with pytest.raises(TypeError, match="cannot be saved"):
        serialization.save(f, {"w": numpy.array(["a"])})
    with pytest.raises(TypeError, match=r"complex128, which cannot be saved in any kbackend "
                                        r"format: MXNet's .params format holds float32.*"
                                        r"\.npz and HDF5 hold those and int16.*float8_e4m3fn"):
        serialization.save(f, {"w": numpy.ones(2, numpy.complex128)})
    with pytest.raises(TypeError, match="data must be"):
        serialization.save(f, 3)
    with pytest.raises(FileNotFoundError, match="does not exist"):
        serialization.save(str(tmp_path / "missing" / "x.params"), [nd.ones(1)])
    with pytest.raises(FileNotFoundError):
        serialization.load(str(tmp_path / "nothing.params"))
    assert not os.path.exists(f)
