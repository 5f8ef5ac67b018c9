"""Saving and loading named arrays, safely (MXNet's ``nd.save`` / ``nd.load``).

Three formats, chosen by ``format=`` or the file name on save and by the file's first
bytes on load (whatever its extension):

- MXNet's binary NDArray format (the default: ``net.params``, ``x.nd``, any name not
  below), read and written by :mod:`core.mxnet_format`, so that files real MXNet 1.x
  writes load here and ours load in MXNet. It holds the dtypes MXNet 1.9 loads: float16/
  32/64, bfloat16, int8/32/64, uint8 and bool; files written by MXNet in every version
  1.x reads (V0-V3, sparse arrays read as dense) load;
- ``.npz`` for names ending in ``.npz`` (or ``format='npz'``): a zip of ``.npy`` members,
  read back with ``allow_pickle=False``; it also holds int16, uint16/32/64 and float8;
- HDF5 through h5py for names ending in ``.h5`` or ``.hdf5`` (or ``format='hdf5'``).

None of them holds code: loading never unpickles and never evaluates anything from the
file. Object arrays are refused, the ``.npz``/HDF5 description of itself is JSON, and
every magic number and length of an MXNet file is checked; a malformed file raises
:class:`SerializationError` naming the file (and, for MXNet files, the byte offset and
what was expected there). Writes are atomic: the data goes to a temporary file in the
target's directory, which is flushed, synced to disk and then renamed over the target,
so a failed or interrupted save leaves the old file as it was. In ``.npz``/HDF5,
bfloat16 and float8 arrays are stored as their uint16/uint8 bits with a dtype marker
and come back as themselves.

:func:`load` returns a list if a list (or a single NDArray) was saved, else a dict, as
MXNet's ``nd.load`` does; an MXNet file with no arrays at all loads as an empty dict
(the format cannot tell ``[]`` from ``{}``). Plain ``.npz`` and HDF5 files with numeric
arrays and no kbackend description load as a dict of their arrays.

Example:
    >>> import os, tempfile
    >>> from core import nd, serialization
    >>> path = os.path.join(tempfile.mkdtemp(), "arrays.params")
    >>> serialization.save(path, {"w": nd.ones((2, 3)), "b": nd.zeros((3,))})
    >>> open(path, "rb").read(8) == b"\\x12\\x01" + bytes(6)   # MXNet's magic
    True
    >>> loaded = serialization.load(path)
    >>> sorted(loaded), loaded["w"].shape
    (['b', 'w'], (2, 3))
"""
from __future__ import annotations

import contextlib
import io
import json
import os
import re
import tempfile
import zipfile
from collections.abc import Mapping

import numpy

from . import mxnet_format
from .context import as_context
from .dtypes import SUPPORTED, as_dtype, bfloat16, float8_e4m3fn, float8_e5m2
from .ndarray import NDArray
from .ops.dispatch import MXNetError

__all__ = ["FORMATS", "SerializationError", "load", "load_frombuffer", "save"]

FORMATS = ("mxnet", "npz", "hdf5")
"""The formats :func:`save` writes (``format=``)."""

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


class SerializationError(ValueError, MXNetError):
    """A file could not be read as saved arrays (corrupted, unsafe or foreign).

    A ``ValueError``, and an ``MXNetError`` (``core.ops.dispatch``'s), the class MXNet's
    ``nd.load`` raises for such files."""


# --------------------------------------------------------------------------- saving

def _to_numpy(name: str, value) -> numpy.ndarray:
    if isinstance(value, NDArray):
        if value.stype != "default":  # core.sparse: MXNet's sparse record (dense elsewhere)
            return _sparse_record(value)
        return value.asnumpy()
    if isinstance(value, numpy.ndarray):
        arr = value
    else:
        raise TypeError(f"save: {name!r} must be an NDArray (or a NumPy array), got "
                        f"{type(value).__name__}")
    if arr.dtype not in SUPPORTED:
        mx = [d.name for d in mxnet_format.WRITABLE]
        more = [d.name for d in SUPPORTED if d.name not in mx]
        raise TypeError(f"save: {name!r} has dtype {arr.dtype}, which cannot be saved in "
                        f"any kbackend format: MXNet's .params format holds "
                        f"{', '.join(mx)}; .npz and HDF5 hold those and {', '.join(more)}")
    return arr


def _sparse_record(value) -> mxnet_format.SparseArray:
    aux = [value.indices.asnumpy()] if value.stype == "row_sparse" else \
        [value.indptr.asnumpy(), value.indices.asnumpy()]
    return mxnet_format.SparseArray(value.stype, value.shape, value.data.asnumpy(), aux)


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


def _format_of(fname, format) -> str:
    if format is None:
        name = os.fspath(fname).lower()
        if name.endswith(_HDF5_EXT):
            return "hdf5"
        return "npz" if name.endswith(".npz") else "mxnet"
    key = {"h5": "hdf5", "params": "mxnet"}.get(str(format).lower(), str(format).lower())
    if key not in FORMATS:
        raise ValueError(f"save: format={format!r} is not one of {', '.join(FORMATS)}")
    return key


def save(fname: str, data, format: str | None = None, np_shape: bool | None = None) -> None:
    """Save an NDArray, a list of NDArrays or a dict of str to NDArray.

    The file is in MXNet's binary NDArray format (real MXNet 1.x's ``nd.load`` and
    ``load_parameters`` read it) unless ``format`` says otherwise or the name ends in
    ``.npz`` (``.npz``) or ``.h5``/``.hdf5`` (HDF5). The write is atomic: the target is
    replaced only once the new file is complete and synced to disk.

    Args:
        fname: the file name.
        data: an NDArray, a list/tuple of NDArrays, or a dict mapping names to NDArrays
            (NumPy arrays are accepted too).
        format: ``'mxnet'``, ``'npz'`` or ``'hdf5'``; default from the name as above.
        np_shape: MXNet's format only: write its NumPy-shape (V3) arrays (real MXNet
            loads them under ``npx.set_np()``) or, if False, V2 arrays (loaded outside
            it; a 0-d array still makes the file V3). Default: as MXNet's ``nd.save``
            does, V3 while NumPy shape semantics are on (``npx.set_np()``), else V2.

    Returns:
        None.

    Raises:
        TypeError: for data of another kind, or a dtype the format cannot hold (the
            message names the formats that can: int16, uint16/32/64 and float8 only
            in ``.npz``/HDF5).
        ValueError: for an unknown ``format``.

    Example:
        >>> import os, tempfile
        >>> from core import nd, serialization
        >>> path = os.path.join(tempfile.mkdtemp(), "x.params")
        >>> serialization.save(path, [nd.ones((2,)), nd.zeros((1,))])
        >>> [a.asnumpy().tolist() for a in serialization.load(path)]
        [[1.0, 1.0], [0.0]]
        >>> serialization.save(path, {"x": nd.ones((2,))}, format="npz")
        >>> open(path, "rb").read(2)
        b'PK'
    """
    fmt = _format_of(fname, format)
    kind, entries = _entries(data)
    if fmt == "mxnet":
        if np_shape is None:
            from .np._mode import is_np_shape

            np_shape = is_np_shape()
        for name, arr in entries:
            mxnet_format.check_dtype(name, arr)
        atomic_write(fname, lambda f: mxnet_format.write(f, kind, entries, np_shape))
        return
    entries = [(n, a.dense() if isinstance(a, mxnet_format.SparseArray) else a)
               for n, a in entries]  # .npz/HDF5 hold sparse arrays densely
    meta, arrays = _describe(kind, entries)
    if fmt == "hdf5":
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


def _read_mxnet(source, buf):
    try:
        kind, entries = mxnet_format.loads(buf, sparse=True)
    except mxnet_format.FormatError as e:
        raise _bad(source, f"it is not a valid MXNet NDArray file: {e}") from None
    if not entries:
        return "dict", []
    return kind, entries


def _read(source, f):
    """(kind, [(name, numpy array)]) from the binary file object ``f``."""
    head = f.read(8)
    f.seek(0)
    if mxnet_format.is_mxnet(head):
        return _read_mxnet(source, f.read())
    if head[:4] in (_ZIP_MAGIC, _EMPTY_ZIP_MAGIC):
        return _read_npz(source, f)
    if head == _HDF5_MAGIC:
        return _read_hdf5(source, f)
    if head[:6] == b"\x93NUMPY":
        raise _bad(source, "it is a single .npy array, not a kbackend array file (MXNet "
                           ".params, .npz or HDF5); load it with numpy.load(..., "
                           "allow_pickle=False)")
    raise _bad(source, f"it is not a kbackend array file (expected MXNet's NDArray format "
                       f"(first bytes {mxnet_format.MAGIC_BYTES.hex()}), .npz or HDF5 data; "
                       f"got first bytes {bytes(head).hex() or 'none (empty)'})")


def _arrays(kind, entries, ctx):
    ctx = as_context(ctx)
    arrays = [(name, _sparse_array(arr, ctx) if isinstance(arr, mxnet_format.SparseArray)
               else NDArray(arr, ctx=ctx)) for name, arr in entries]
    if kind == "list":
        return [a for _, a in arrays]
    return dict(arrays)


def _sparse_array(rec, ctx):
    """A RowSparseNDArray/CSRNDArray of an MXNet sparse record (``core.sparse``)."""
    from .sparse import csr_matrix, row_sparse_array

    if rec.stype == "row_sparse":
        return row_sparse_array((rec.data, rec.aux[0]), shape=rec.shape, ctx=ctx,
                                dtype=rec.dtype)
    return csr_matrix((rec.data, rec.aux[1], rec.aux[0]), shape=rec.shape, ctx=ctx,
                      dtype=rec.dtype)


def load(fname: str, ctx=None):
    """Load arrays saved by :func:`save`, ``Block.save_parameters``, or real MXNet.

    Args:
        fname: the file name. The format (MXNet's NDArray format, ``.npz`` or HDF5) is
            recognized from the file's first bytes, not its name.
        ctx: the context to put the arrays on (default: the current context).

    Returns:
        A list of NDArrays if a list (or a single NDArray) was saved, else a dict of
        name to NDArray (an empty dict for an MXNet file with no arrays). Sparse arrays
        of MXNet files load as RowSparseNDArray/CSRNDArray (``core.sparse``).

    Raises:
        FileNotFoundError: the file does not exist.
        ValueError: (``SerializationError``) naming the file, when it is corrupted or
            truncated (for MXNet files: the byte offset and what was expected there),
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
    with open(path, "rb") as f:
        kind, entries = _read(path, f)
    return _arrays(kind, entries, ctx)


def load_frombuffer(buf, ctx=None):
    """Load arrays from the bytes of a file :func:`load` reads (MXNet's
    ``nd.load_frombuffer``).

    Args:
        buf: the file's content (``bytes``, ``bytearray`` or ``memoryview``).
        ctx: the context to put the arrays on (default: the current context).

    Returns:
        A list or a dict of NDArrays, as :func:`load`.

    Raises:
        TypeError: ``buf`` is not bytes-like.
        ValueError: (``SerializationError``) for malformed data, as :func:`load`.

    Example:
        >>> import os, tempfile
        >>> from core import nd, serialization
        >>> path = os.path.join(tempfile.mkdtemp(), "b.params")
        >>> serialization.save(path, {"b": nd.arange(3)})
        >>> with open(path, "rb") as f:
        ...     serialization.load_frombuffer(f.read())["b"].asnumpy().tolist()
        [0.0, 1.0, 2.0]
    """
    if isinstance(buf, str):
        buf = buf.encode("latin-1")
    if not isinstance(buf, (bytes, bytearray, memoryview)):
        raise TypeError(f"load_frombuffer: buf must be bytes, got {type(buf).__name__}")
    kind, entries = _read("<buffer>", io.BytesIO(bytes(buf)))
    return _arrays(kind, entries, ctx)
