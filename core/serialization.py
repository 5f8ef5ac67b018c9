"""Saving and loading named arrays, safely (MXNet's ``nd.save`` / ``nd.load``).

Two formats, chosen by the file name on save and by the file's first bytes on load:

- ``.npz`` (the default, whatever the extension: ``net.params`` is an ``.npz`` file):
  a zip of ``.npy`` members, read back with ``allow_pickle=False``;
- HDF5 through h5py when the name ends in ``.h5`` or ``.hdf5``.

Loading never unpickles and never evaluates anything from the file: object arrays
are refused, and the file's description of itself is JSON. Writes are atomic: the
data goes to a temporary file in the target's directory, which is flushed, synced
to disk and then renamed over the target, so a failed or interrupted save leaves
the old file as it was. bfloat16 and float8 arrays are stored as their uint16/uint8
bits with a dtype marker and come back as themselves.

A file records whether a list or a dict was saved; :func:`load` returns the same
kind. Plain ``.npz`` and HDF5 files with numeric arrays and no kbackend description
load as a dict of their arrays.

Example:
    >>> import os, tempfile
    >>> from core import nd, serialization
    >>> path = os.path.join(tempfile.mkdtemp(), "arrays.params")
    >>> serialization.save(path, {"w": nd.ones((2, 3)), "b": nd.zeros((3,))})
    >>> loaded = serialization.load(path)
    >>> sorted(loaded), loaded["w"].shape
    (['b', 'w'], (2, 3))
"""
from __future__ import annotations

import contextlib
import json
import os
import re
import tempfile
import zipfile
from collections.abc import Mapping

import numpy

from .context import as_context
from .dtypes import SUPPORTED, as_dtype, bfloat16, float8_e4m3fn, float8_e5m2
from .ndarray import NDArray

__all__ = ["load", "save"]

_META_KEY = "__kbackend__"
_FORMAT = "kbackend.arrays"
_VERSION = 1
_ZIP_MAGIC = b"PK\x03\x04"
_EMPTY_ZIP_MAGIC = b"PK\x05\x06"
_HDF5_MAGIC = b"\x89HDF\r\n\x1a\n"
_SAFE_KEY = re.compile(r"[A-Za-z0-9_.:\-]{1,200}")
_HDF5_EXT = (".h5", ".hdf5")


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


_UMASK = _umask()


class SerializationError(ValueError):
    """A file could not be read as saved arrays (corrupted, unsafe or foreign)."""


# --------------------------------------------------------------------------- saving

def _to_numpy(name: str, value) -> numpy.ndarray:
    if isinstance(value, NDArray):
        return value.asnumpy()
    if isinstance(value, numpy.ndarray):
        arr = value
    else:
        raise TypeError(f"save: {name!r} must be an NDArray (or a NumPy array), got "
                        f"{type(value).__name__}")
    if arr.dtype not in SUPPORTED:
        raise TypeError(f"save: {name!r} has dtype {arr.dtype}, which cannot be saved; "
                        f"supported: {', '.join(d.name for d in SUPPORTED)}")
    return arr


def _entries(data):
    """(kind, [(name, numpy array)]) from an NDArray, a list or a dict."""
    if isinstance(data, (NDArray, numpy.ndarray)):
        return "list", [("0", _to_numpy("0", data))]
    if isinstance(data, Mapping):
        out = []
        for k, v in data.items():
            if not isinstance(k, str):
                raise TypeError(f"save: dict keys must be strings, got {type(k).__name__} "
                                f"{k!r}")
            out.append((k, _to_numpy(k, v)))
        return "dict", out
    if isinstance(data, (list, tuple)):
        return "list", [(str(i), _to_numpy(f"[{i}]", v)) for i, v in enumerate(data)]
    raise TypeError(f"save: data must be an NDArray, a list of NDArrays or a dict of str to "
                    f"NDArray, got {type(data).__name__}")


# ml_dtypes' types, stored as their bits (NumPy's formats only know its own dtypes).
_BITS = {bfloat16: numpy.dtype(numpy.uint16), float8_e4m3fn: numpy.dtype(numpy.uint8),
         float8_e5m2: numpy.dtype(numpy.uint8)}


def _describe(kind, entries):
    """The JSON description and the arrays as stored (ml_dtypes' types as their bits)."""
    arrays, items = [], []
    for i, (name, arr) in enumerate(entries):
        stored = arr
        if arr.dtype in _BITS:
            stored = arr.view(_BITS[arr.dtype])
        key = name if kind == "dict" and _SAFE_KEY.fullmatch(name) and \
            not name.startswith("__") else f"__array{i}"
        items.append({"name": name, "key": key, "dtype": arr.dtype.name})
        arrays.append((key, stored if stored.flags.c_contiguous else stored.copy()))
    meta = {"format": _FORMAT, "version": _VERSION, "kind": kind, "arrays": items}
    return meta, arrays


def _write_npz(f, meta, arrays) -> None:
    with zipfile.ZipFile(f, mode="w", compression=zipfile.ZIP_STORED, allowZip64=True) as zf:
        blob = numpy.frombuffer(json.dumps(meta).encode("utf-8"), dtype=numpy.uint8)
        for key, arr in [(_META_KEY, blob), *arrays]:
            with zf.open(key + ".npy", mode="w", force_zip64=True) as member:
                numpy.lib.format.write_array(member, arr, allow_pickle=False)


def _write_hdf5(f, meta, arrays) -> None:
    import h5py

    with h5py.File(f, "w") as h5:
        h5.attrs[_META_KEY] = json.dumps(meta)
        for i, (_, arr) in enumerate(arrays):
            h5.create_dataset(f"a{i}", data=arr)


def atomic_write(filename: str, writer) -> None:
    """Write through ``writer(fileobj)`` into a temporary file, then rename it."""
    path = os.fspath(filename)
    directory = os.path.dirname(os.path.abspath(path))
    if not os.path.isdir(directory):
        raise FileNotFoundError(f"save: the directory of {path!r} does not exist")
    fd, tmp = tempfile.mkstemp(dir=directory, prefix="." + os.path.basename(path) + ".",
                               suffix=".tmp")
    try:
        with os.fdopen(fd, "w+b") as f:
            writer(f)
            f.flush()
            os.fsync(f.fileno())
        try:
            mode = os.stat(path).st_mode & 0o777
        except FileNotFoundError:
            mode = 0o666 & ~_UMASK
        os.chmod(tmp, mode)
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise
    # Make the rename itself durable.
    with contextlib.suppress(OSError):
        dfd = os.open(directory, os.O_RDONLY)
        try:
            os.fsync(dfd)
        finally:
            os.close(dfd)


def save(fname: str, data) -> None:
    """Save an NDArray, a list of NDArrays or a dict of str to NDArray.

    The file is ``.npz`` (whatever its extension) unless the name ends in ``.h5`` or
    ``.hdf5`` (HDF5). The write is atomic: the target is replaced only once the new
    file is complete and synced to disk.

    Args:
        fname: the file name.
        data: an NDArray, a list/tuple of NDArrays, or a dict mapping names to NDArrays
            (NumPy arrays are accepted too).

    Returns:
        None.

    Raises:
        TypeError: for data of another kind, or an unsupported dtype.

    Example:
        >>> import os, tempfile
        >>> from core import nd, serialization
        >>> path = os.path.join(tempfile.mkdtemp(), "x.npz")
        >>> serialization.save(path, [nd.ones((2,)), nd.zeros((1,))])
        >>> [a.asnumpy().tolist() for a in serialization.load(path)]
        [[1.0, 1.0], [0.0]]
    """
    kind, entries = _entries(data)
    meta, arrays = _describe(kind, entries)
    if os.fspath(fname).lower().endswith(_HDF5_EXT):
        atomic_write(fname, lambda f: _write_hdf5(f, meta, arrays))
    else:
        atomic_write(fname, lambda f: _write_npz(f, meta, arrays))


# --------------------------------------------------------------------------- loading

def _bad(fname, why) -> SerializationError:
    return SerializationError(f"load: cannot read {os.fspath(fname)!r}: {why}")


def _check_meta(fname, meta):
    if not isinstance(meta, dict) or meta.get("format") != _FORMAT:
        raise _bad(fname, "its description is not a kbackend array file's")
    if meta.get("version") != _VERSION:
        raise _bad(fname, f"format version {meta.get('version')!r} is not supported "
                          f"(this kbackend reads version {_VERSION})")
    if meta.get("kind") not in ("list", "dict") or not isinstance(meta.get("arrays"), list):
        raise _bad(fname, "its description is malformed")
    for item in meta["arrays"]:
        if not (isinstance(item, dict) and isinstance(item.get("name"), str)
                and isinstance(item.get("key"), str) and isinstance(item.get("dtype"), str)):
            raise _bad(fname, "its description is malformed")
    return meta


def _restore(fname, item, arr) -> numpy.ndarray:
    try:
        dtype = as_dtype(item["dtype"])
    except TypeError:
        raise _bad(fname, f"array {item['name']!r} has unsupported dtype "
                          f"{item['dtype']!r}") from None
    if dtype in _BITS:
        if arr.dtype != _BITS[dtype]:
            raise _bad(fname, f"{dtype.name} array {item['name']!r} is stored as {arr.dtype}")
        return arr.view(dtype)
    if arr.dtype != dtype:
        raise _bad(fname, f"array {item['name']!r} is stored as {arr.dtype} but described "
                          f"as {dtype.name}")
    return arr


def _check_plain(fname, name, arr) -> numpy.ndarray:
    if arr.dtype not in SUPPORTED:
        raise _bad(fname, f"array {name!r} has unsupported dtype {arr.dtype}")
    return arr


def _read_npz(fname, f):
    try:
        with numpy.load(f, allow_pickle=False) as npz:
            raw = {}
            for key in npz.files:
                try:
                    value = npz[key]
                except ValueError as e:
                    if "pickle" in str(e).lower():
                        raise _bad(fname, f"member {key!r} holds Python objects, which would "
                                          "need pickle to load; kbackend never unpickles "
                                          "(refused)") from None
                    raise
                if not isinstance(value, numpy.ndarray):
                    raise _bad(fname, f"member {key!r} is not a .npy array")
                raw[key] = value
    except SerializationError:
        raise
    except (zipfile.BadZipFile, ValueError, OSError, EOFError, KeyError) as e:
        raise _bad(fname, f"the .npz data is corrupted ({type(e).__name__}: {e})") from None
    if _META_KEY not in raw:
        return "dict", [(k, _check_plain(fname, k, v)) for k, v in raw.items()]
    blob = raw.pop(_META_KEY)
    try:
        meta = json.loads(blob.tobytes().decode("utf-8"))
    except (ValueError, UnicodeDecodeError):
        raise _bad(fname, "its description is not valid JSON") from None
    meta = _check_meta(fname, meta)
    out = []
    for item in meta["arrays"]:
        if item["key"] not in raw:
            raise _bad(fname, f"array {item['name']!r} is missing from the file")
        out.append((item["name"], _restore(fname, item, raw[item["key"]])))
    return meta["kind"], out


def _read_hdf5(fname, f):
    import h5py

    try:
        with h5py.File(f, "r") as h5:
            text = h5.attrs.get(_META_KEY)
            if text is None:
                out = []

                def visit(name, obj):
                    if isinstance(obj, h5py.Dataset):
                        out.append((name, _check_plain(fname, name, obj[()])))

                h5.visititems(visit)
                return "dict", out
            if isinstance(text, bytes):
                text = text.decode("utf-8")
            try:
                meta = json.loads(str(text))
            except ValueError:
                raise _bad(fname, "its description is not valid JSON") from None
            meta = _check_meta(fname, meta)
            out = []
            for i, item in enumerate(meta["arrays"]):
                ds = h5.get(f"a{i}")
                if not isinstance(ds, h5py.Dataset):
                    raise _bad(fname, f"array {item['name']!r} is missing from the file")
                if ds.dtype.kind not in "biuf":
                    raise _bad(fname, f"array {item['name']!r} has non-numeric dtype "
                                      f"{ds.dtype}")
                out.append((item["name"], _restore(fname, item, numpy.asarray(ds[()]))))
            return meta["kind"], out
    except SerializationError:
        raise
    except (OSError, ValueError, KeyError, TypeError) as e:
        raise _bad(fname, f"the HDF5 data is corrupted ({type(e).__name__}: {e})") from None


def load(fname: str, ctx=None):
    """Load arrays saved by :func:`save` (or by ``Block.save_parameters``).

    Args:
        fname: the file name. The format (``.npz`` or HDF5) is recognized from the
            file's first bytes, not its name.
        ctx: the context to put the arrays on (default: the current context).

    Returns:
        A list of NDArrays if a list (or a single NDArray) was saved, else a dict of
        name to NDArray.

    Raises:
        FileNotFoundError: the file does not exist.
        ValueError: (``SerializationError``) naming the file, when it is corrupted,
            holds pickled objects, or is not an array file.

    Example:
        >>> import os, tempfile
        >>> from core import nd, serialization, cpu
        >>> path = os.path.join(tempfile.mkdtemp(), "w.h5")
        >>> serialization.save(path, {"w": nd.ones((2,), dtype="bfloat16")})
        >>> w = serialization.load(path, ctx=cpu(1))["w"]
        >>> w.dtype.name, w.context
        ('bfloat16', cpu(1))
    """
    path = os.fspath(fname)
    ctx = as_context(ctx)
    with open(path, "rb") as f:
        head = f.read(8)
        f.seek(0)
        if head[:4] in (_ZIP_MAGIC, _EMPTY_ZIP_MAGIC):
            kind, entries = _read_npz(path, f)
        elif head == _HDF5_MAGIC:
            kind, entries = _read_hdf5(path, f)
        elif head[:6] == b"\x93NUMPY":
            raise _bad(path, "it is a single .npy array, not a kbackend array file (.npz or "
                             "HDF5); load it with numpy.load(..., allow_pickle=False)")
        else:
            raise _bad(path, "it is not a kbackend array file (expected .npz or HDF5 data; "
                             "MXNet's binary .params format is not supported)")
    arrays = [(name, NDArray(arr, ctx=ctx)) for name, arr in entries]
    if kind == "list":
        return [a for _, a in arrays]
    return dict(arrays)
