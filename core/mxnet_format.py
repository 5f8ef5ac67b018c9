"""MXNet 1.x's binary NDArray file format (``mx.nd.save`` / ``.params`` files), read
and written with ``struct`` and NumPy from the format's layout.

A file is, all integers little-endian::

    uint64 0x112 (the list magic)   uint64 reserved (0)
    uint64 count    then count arrays
    uint64 count    then count names: uint64 length + UTF-8 bytes (0 names: a list)

and one array is::

    uint32 magic       0xF993FAC9 (V2) or 0xF993FACA (V3: NumPy shape semantics)
    int32  stype       0 dense, 1 row_sparse, 2 csr
    [shape storage_shape]            sparse only
    shape              int32 ndim + ndim int64 dims
    int32 dev_type, int32 dev_id     (the context; absent for an unallocated array)
    int32 type_flag    (0 float32, 1 float64, 2 float16, 3 uint8, 4 int32, 5 int8,
                        6 int64, 7 bool, 8 int16, 9 uint16, 10 uint32, 11 uint64,
                        12 bfloat16)
    [int32 aux_type_flag, shape aux_shape] per aux array, sparse only
    raw data           (the storage shape's elements for sparse arrays)
    [raw aux data]     sparse only

Older arrays, which MXNet 1.x still reads: V1 (magic 0xF993FAC8, no stype) and V0,
whose first uint32 is the number of dimensions, followed by uint32 dims. In V2 and
older, ndim 0 marks an unallocated array; in V3, ndim -1 or a dim of -1 does, and
ndim 0 is a scalar.

What we write: V2 arrays (what ``mx.nd.save`` and Gluon's ``save_parameters`` write),
or V3 arrays for the whole file when asked (``np_shape=True``: what ``mx.npx.save``
writes, and ``mx.nd.save`` under NumPy shape semantics) or when any array is 0-d (V2
cannot hold a scalar); MXNet loads V3 files only under ``mx.npx.set_np()`` (or
``mx.util.np_shape(True)``) and V2 files only outside it. We read both in any mode. Arrays are
written with a cpu(0) context, and only in the dtypes MXNet 1.9 loads (:data:`WRITABLE`;
every flag above is read). Unallocated arrays are refused.

Sparse arrays (row_sparse, csr) are read as dense (scattered into zeros) by default, or,
with ``loads(..., sparse=True)``, as :class:`SparseArray` records (the values and the
int64 aux arrays, checked); :func:`write` writes :class:`SparseArray` entries in MXNet's
sparse layout (always V2 records: V3 holds dense arrays only), which MXNet loads as
``RowSparseNDArray``/``CSRNDArray``.

:func:`loads_array`/:func:`dumps_array` read and write one array record alone (MXNet's
raw-bytes form, the ``{'handle': ...}`` state of a pickled NDArray).

:func:`loads` raises :class:`FormatError` (the offset and what was expected);
``core.serialization`` adds the file's name. :func:`write` raises ``TypeError`` for a
dtype it does not write.

Example:
    >>> import numpy
    >>> from core import mxnet_format
    >>> blob = mxnet_format.dumps("dict", [("w", numpy.ones((2, 3), numpy.float32))])
    >>> blob[:8] == mxnet_format.MAGIC_BYTES
    True
    >>> kind, [(name, w)] = mxnet_format.loads(blob)
    >>> kind, name, w.shape, w.dtype.name
    ('dict', 'w', (2, 3), 'float32')
"""
from __future__ import annotations

import io
import math
import struct
import sys

import numpy

from .dtypes import bfloat16

__all__ = [
    "MAGIC_BYTES",
    "TYPE_FLAGS",
    "WRITABLE",
    "FormatError",
    "SparseArray",
    "check_dtype",
    "dumps",
    "dumps_array",
    "is_mxnet",
    "loads",
    "loads_array",
    "write",
]

LIST_MAGIC = 0x112
V1_MAGIC = 0xF993FAC8
V2_MAGIC = 0xF993FAC9
V3_MAGIC = 0xF993FACA
MAGIC_BYTES = struct.pack("<Q", LIST_MAGIC)
"""The first 8 bytes of every MXNet NDArray file."""

TYPE_FLAGS = {
    0: numpy.dtype("float32"), 1: numpy.dtype("float64"), 2: numpy.dtype("float16"),
    3: numpy.dtype("uint8"), 4: numpy.dtype("int32"), 5: numpy.dtype("int8"),
    6: numpy.dtype("int64"), 7: numpy.dtype("bool"), 8: numpy.dtype("int16"),
    9: numpy.dtype("uint16"), 10: numpy.dtype("uint32"), 11: numpy.dtype("uint64"),
    12: bfloat16,
}
"""MXNet's (mshadow's) type flags and the dtypes they stand for."""
WRITABLE = tuple(TYPE_FLAGS[f] for f in (0, 1, 2, 3, 4, 5, 6, 7, 12))
"""The dtypes :func:`write` writes: those MXNet 1.9 loads (its loader refuses flags 8-11,
int16 and the unsigned types but uint8, though it defines them)."""
_FLAG_OF = {dt: flag for flag, dt in TYPE_FLAGS.items() if dt in WRITABLE}
_DEV_TYPES = {1: "cpu", 2: "gpu", 3: "cpu_pinned", 5: "cpu_shared"}
_STYPES = {0: "default", 1: "row_sparse", 2: "csr"}
_NUM_AUX = {0: 0, 1: 1, 2: 2}
_MAX_NDIM = 64


class SparseArray:
    """A sparse array record: ``stype`` (``'row_sparse'`` or ``'csr'``), the dense
    ``shape``, the stored values ``data`` and the ``aux`` index arrays in MXNet's order
    (row_sparse: ``[indices]``; csr: ``[indptr, indices]``), all NumPy.

    Example:
        >>> import numpy
        >>> from core import mxnet_format
        >>> rec = mxnet_format.SparseArray("row_sparse", (3, 2), numpy.ones((1, 2), "f4"),
        ...                                [numpy.array([2])])
        >>> _, [(_, back)] = mxnet_format.loads(mxnet_format.dumps("list", [("0", rec)]),
        ...                                      sparse=True)
        >>> back.stype, back.aux[0].tolist(), back.dense()[2].tolist()
        ('row_sparse', [2], [1.0, 1.0])
    """

    __slots__ = ("aux", "data", "shape", "stype")

    def __init__(self, stype: str, shape, data, aux):
        if stype not in ("row_sparse", "csr"):
            raise ValueError(f"SparseArray: stype must be 'row_sparse' or 'csr', got {stype!r}")
        self.stype = stype
        self.shape = tuple(int(d) for d in shape)
        self.data = numpy.asarray(data)
        self.aux = [numpy.asarray(a, numpy.int64) for a in aux]

    @property
    def dtype(self) -> numpy.dtype:
        return self.data.dtype

    @property
    def ndim(self) -> int:
        return len(self.shape)

    def dense(self) -> numpy.ndarray:
        """The dense array."""
        return _densify(0, 1 if self.stype == "row_sparse" else 2, self.shape, self.data,
                        self.aux, "the array")


class FormatError(ValueError):
    """Malformed MXNet NDArray data: ``offset`` is the byte where ``expected`` failed."""

    def __init__(self, offset: int, expected: str):
        super().__init__(f"at byte {offset}: {expected}")
        self.offset = offset
        self.expected = expected


def is_mxnet(head: bytes) -> bool:
    """Whether ``head`` (a file's first bytes) starts an MXNet NDArray file.

    Args:
        head: at least the first 8 bytes.

    Returns:
        True for MXNet's list magic.
    """
    return bytes(head[:8]) == MAGIC_BYTES


# --------------------------------------------------------------------------- reading

class _Reader:
    """A cursor over the bytes of a file, every read checked against its end."""

    def __init__(self, buf):
        self.buf = memoryview(buf).cast("B")
        self.pos = 0

    def take(self, n: int, what: str) -> memoryview:
        if n < 0 or self.pos + n > len(self.buf):
            raise FormatError(self.pos, f"expected {what} ({n} bytes), but the data ends "
                                        f"after {len(self.buf)} bytes")
        out = self.buf[self.pos:self.pos + n]
        self.pos += n
        return out

    def unpack(self, fmt: str, what: str):
        return struct.unpack("<" + fmt, self.take(struct.calcsize(fmt), what))[0]

    def shape(self, what: str, legacy_ndim=None) -> tuple[int, ...] | None:
        """A TShape (int32 ndim + int64 dims), or V0's uint32 dims after ``legacy_ndim``.
        None for an unknown shape (ndim -1)."""
        at = self.pos
        if legacy_ndim is None:
            ndim = self.unpack("i", f"the number of dimensions of {what}")
            fmt, size = "q", 8
        else:
            ndim, fmt, size = legacy_ndim, "I", 4
        if ndim == -1:
            return None
        if not 0 <= ndim <= _MAX_NDIM:
            raise FormatError(at, f"the number of dimensions of {what} between 0 and "
                                  f"{_MAX_NDIM}, got {ndim}")
        raw = self.take(size * ndim, f"the {ndim} dimensions of {what}")
        return tuple(struct.unpack(f"<{ndim}{fmt}", raw))

    def data(self, shape, dtype: numpy.dtype, what: str) -> numpy.ndarray:
        count = math.prod(shape)
        raw = self.take(count * dtype.itemsize, f"the {count} {dtype.name} values of {what}")
        if dtype.kind == "b":  # any non-zero byte is true, as in C++
            return (numpy.frombuffer(raw, dtype=numpy.uint8) != 0).reshape(shape)
        arr = numpy.frombuffer(raw, dtype=dtype).copy()
        if sys.byteorder == "big":
            arr = arr.byteswap()
        return arr.reshape(shape)

    def flag(self, what: str) -> numpy.dtype:
        at = self.pos
        flag = self.unpack("i", f"the type flag of {what}")
        if flag not in TYPE_FLAGS:
            raise FormatError(at, f"a type flag of {what} (one of "
                                  f"{', '.join(f'{k} {v.name}' for k, v in TYPE_FLAGS.items())}"
                                  f"), got {flag}")
        return TYPE_FLAGS[flag]


def _check_dims(at: int, shape, what: str, allow_unknown: bool) -> bool:
    """Whether ``shape`` is known; negative dims other than V3's -1 are refused."""
    for d in shape:
        if d == -1 and allow_unknown:
            return False
        if d < 0:
            raise FormatError(at, f"non-negative dimensions for {what}, got {shape}")
    return True


def _read_context(r: _Reader, what: str) -> None:
    at = r.pos
    dev_type = r.unpack("i", f"the device type of {what}")
    r.unpack("i", f"the device id of {what}")
    if dev_type not in _DEV_TYPES:
        raise FormatError(at, f"a device type of {what} (one of "
                              f"{', '.join(f'{k} {v}' for k, v in _DEV_TYPES.items())}), got "
                              f"{dev_type}")


def _unallocated(at: int, what: str) -> FormatError:
    return FormatError(at, f"{what} holds no data (an NDArray that was never allocated, "
                           "which kbackend cannot represent)")


def _read_legacy(r: _Reader, at: int, magic: int, what: str) -> numpy.ndarray:
    if magic == V1_MAGIC:
        shape = r.shape(what)
    elif magic <= _MAX_NDIM:
        shape = r.shape(what, legacy_ndim=magic)
    else:
        raise FormatError(at, f"an array header for {what} (magic 0x{V2_MAGIC:08X} or "
                              f"0x{V3_MAGIC:08X}, legacy 0x{V1_MAGIC:08X} or a dimension "
                              f"count up to {_MAX_NDIM}), got 0x{magic:08X}")
    if not shape:
        raise _unallocated(at, what)
    _check_dims(at, shape, what, allow_unknown=False)
    _read_context(r, what)
    dtype = r.flag(what)
    return r.data(shape, dtype, what)


def _densify(at: int, stype: int, shape, data, aux, what: str,
             sparse: bool = False) -> numpy.ndarray:
    """Scatter a row_sparse or csr array's values into a dense array (checked), or, with
    ``sparse``, return the checked :class:`SparseArray`."""
    if stype == 1:  # row_sparse: aux 0 holds the row indices of data's rows
        idx = aux[0].astype(numpy.int64)
        if idx.ndim != 1 or data.shape != (idx.size, *shape[1:]) or \
                (idx.size and (idx.min() < 0 or idx.max() >= shape[0])):
            raise FormatError(at, f"row_sparse {what}: {idx.size} row indices within "
                                  f"[0, {shape[0]}) and values of shape "
                                  f"{(idx.size, *shape[1:])}, got indices {idx.tolist()[:8]} "
                                  f"and values of shape {data.shape}")
        if sparse:
            return SparseArray("row_sparse", shape, data, [idx])
        out = numpy.zeros(shape, dtype=data.dtype)
        out[idx] = data
        return out
    indptr, indices = aux[0].astype(numpy.int64), aux[1].astype(numpy.int64)
    rows, cols = shape
    ok = (indptr.shape == (rows + 1,) and indices.shape == data.shape == (data.size,)
          and indptr[0] == 0 and indptr[-1] == data.size
          and bool(numpy.all(numpy.diff(indptr) >= 0))
          and (not indices.size or (indices.min() >= 0 and indices.max() < cols)))
    if not ok:
        raise FormatError(at, f"csr {what} of shape {shape}: an indptr of {rows + 1} "
                              f"non-decreasing offsets from 0 to {data.size} and column "
                              f"indices within [0, {cols}), got indptr of shape "
                              f"{indptr.shape} and indices of shape {indices.shape}")
    if sparse:
        return SparseArray("csr", shape, data, [indptr, indices])
    out = numpy.zeros(shape, dtype=data.dtype)
    numpy.add.at(out, (numpy.repeat(numpy.arange(rows), numpy.diff(indptr)), indices), data)
    return out


def _read_array(r: _Reader, what: str, sparse: bool = False):
    at = r.pos
    magic = r.unpack("I", f"the magic number of {what}")
    if magic not in (V2_MAGIC, V3_MAGIC):
        return _read_legacy(r, at, magic, what)
    v3 = magic == V3_MAGIC
    st_at = r.pos
    stype = r.unpack("i", f"the storage type of {what}")
    if stype not in _STYPES or (v3 and stype != 0):
        allowed = "0 (default)" if v3 else "0 default, 1 row_sparse or 2 csr"
        raise FormatError(st_at, f"the storage type of {what}: {allowed}, got {stype}")
    nad = _NUM_AUX[stype]
    sshape = r.shape(f"the storage shape of {what}") if nad else None
    sh_at = r.pos
    shape = r.shape(what)
    if shape is None or (not v3 and not shape):
        raise _unallocated(at, what)
    if not _check_dims(sh_at, shape, what, allow_unknown=v3):
        raise _unallocated(at, what)
    if stype == 2 and len(shape) != 2:
        raise FormatError(sh_at, f"a 2-d shape for csr {what}, got {shape}")
    _read_context(r, what)
    dtype = r.flag(what)
    if not nad:
        return r.data(shape, dtype, what)
    aux_meta = []
    for i in range(nad):
        aux_dtype = r.flag(f"aux array {i} of {what}")
        aux_shape = r.shape(f"aux array {i} of {what}")
        if aux_dtype.kind not in "iu" or aux_shape is None or len(aux_shape) != 1:
            raise FormatError(r.pos, f"aux array {i} of {what}: a 1-d integer index array, "
                                     f"got {aux_dtype.name} of shape {aux_shape}")
        aux_meta.append((aux_dtype, aux_shape))
    if sshape is None:
        raise FormatError(sh_at, f"a known storage shape for {_STYPES[stype]} {what}")
    _check_dims(sh_at, sshape, f"the storage shape of {what}", allow_unknown=False)
    data = r.data(sshape, dtype, what)
    aux = [r.data(s, d, f"aux array {i} of {what}") for i, (d, s) in enumerate(aux_meta)]
    return _densify(at, stype, shape, data, aux, what, sparse)


def loads(buf, sparse: bool = False) -> tuple[str, list[tuple[str, numpy.ndarray]]]:
    """Parse the bytes of an MXNet NDArray file.

    Args:
        buf: the file's bytes (``bytes``, ``bytearray`` or a buffer).
        sparse: return sparse arrays as :class:`SparseArray` records (default: dense).

    Returns:
        ``(kind, [(name, array)])``: kind ``'dict'`` when the file names its arrays,
        else ``'list'`` (names ``'0'``, ``'1'``, ...). Arrays are NumPy arrays that own
        their memory; sparse ones come back dense unless ``sparse``.

    Raises:
        FormatError: a magic number, length, dtype or shape is not what the format
            allows, or the data ends early or has bytes after its end.

    Example:
        >>> from core import mxnet_format
        >>> mxnet_format.loads(b"\\x12\\x01" + bytes(6))
        Traceback (most recent call last):
        ...
        core.mxnet_format.FormatError: at byte 8: expected the reserved word (8 bytes), \
but the data ends after 8 bytes
    """
    r = _Reader(buf)
    head = r.unpack("Q", "the list magic 0x112")
    if head != LIST_MAGIC:
        raise FormatError(0, f"the list magic 0x{LIST_MAGIC:X}, got 0x{head:X}")
    r.unpack("Q", "the reserved word")
    at = r.pos
    count = r.unpack("Q", "the number of arrays")
    if count > (len(r.buf) - r.pos) // 4:
        raise FormatError(at, f"a number of arrays that fits in the remaining "
                              f"{len(r.buf) - r.pos} bytes, got {count}")
    arrays = [_read_array(r, f"array {i}", sparse) for i in range(count)]
    at = r.pos
    nnames = r.unpack("Q", "the number of names")
    if nnames not in (0, count):
        raise FormatError(at, f"0 names or one per array ({count}), got {nnames}")
    names = []
    for i in range(nnames):
        n_at = r.pos
        length = r.unpack("Q", f"the length of name {i}")
        raw = r.take(length, f"name {i}")
        try:
            names.append(bytes(raw).decode("utf-8"))
        except UnicodeDecodeError:
            raise FormatError(n_at + 8, f"name {i} in UTF-8") from None
    if r.pos != len(r.buf):
        raise FormatError(r.pos, f"the end of the data, got {len(r.buf) - r.pos} more bytes")
    if nnames:
        return "dict", list(zip(names, arrays))
    return "list", [(str(i), a) for i, a in enumerate(arrays)]


def loads_array(buf) -> numpy.ndarray:
    """Parse one array record with nothing around it: what MXNet's
    ``MXNDArraySaveRawBytes`` writes (an NDArray's pickled ``{'handle': bytes}`` state).

    Args:
        buf: the record's bytes.

    Returns:
        The array (dense; a NumPy array that owns its memory).

    Raises:
        FormatError: as :func:`loads`.

    Example:
        >>> import numpy
        >>> from core import mxnet_format
        >>> raw = mxnet_format.dumps_array(numpy.arange(3, dtype=numpy.int32))
        >>> mxnet_format.loads_array(raw).tolist()
        [0, 1, 2]
    """
    r = _Reader(buf)
    arr = _read_array(r, "the array")
    if r.pos != len(r.buf):
        raise FormatError(r.pos, f"the end of the data, got {len(r.buf) - r.pos} more bytes")
    return arr


# --------------------------------------------------------------------------- writing

def _shape_bytes(shape) -> bytes:
    return struct.pack(f"<i{len(shape)}q", len(shape), *shape)


def check_dtype(name: str, arr: numpy.ndarray) -> int:
    """MXNet's type flag of ``arr``'s dtype.

    Args:
        name: the array's name, for the error message.
        arr: the array.

    Returns:
        The type flag.

    Raises:
        TypeError: MXNet has no type flag for the dtype; the message names the formats
            that hold it.
    """
    flag = _FLAG_OF.get(arr.dtype)
    if flag is None:
        raise TypeError(
            f"save: {name!r} has dtype {arr.dtype}, which MXNet's binary .params format "
            f"cannot hold (MXNet 1.9 loads {', '.join(d.name for d in WRITABLE)}); save "
            "it as .npz or HDF5 instead (a name ending in .npz/.h5, or format='npz'/'hdf5')")
    return flag


def _raw_bytes(arr) -> memoryview:
    data = numpy.ascontiguousarray(arr).reshape(-1)
    if data.dtype.byteorder == ">" or (data.dtype.byteorder == "=" and sys.byteorder == "big"):
        data = data.byteswap()
    return data.view(numpy.uint8).data


def _write_array(f, arr, flag: int, magic: int) -> None:
    if isinstance(arr, SparseArray):
        _write_sparse(f, arr, flag)
        return
    f.write(struct.pack("<Ii", magic, 0))
    f.write(_shape_bytes(arr.shape))
    f.write(struct.pack("<iii", 1, 0, flag))
    f.write(_raw_bytes(arr))


def _write_sparse(f, arr: SparseArray, flag: int) -> None:
    """A V2 sparse record: storage type, storage shape, shape, context, type flag, the
    aux arrays' flags and shapes, the values, then the aux arrays (MXNet's layout)."""
    f.write(struct.pack("<Ii", V2_MAGIC, 1 if arr.stype == "row_sparse" else 2))
    f.write(_shape_bytes(arr.data.shape))
    f.write(_shape_bytes(arr.shape))
    f.write(struct.pack("<iii", 1, 0, flag))
    aux = [numpy.asarray(a, numpy.int64) for a in arr.aux]
    for a in aux:
        f.write(struct.pack("<i", _FLAG_OF[a.dtype]))
        f.write(_shape_bytes(a.shape))
    f.write(_raw_bytes(arr.data))
    for a in aux:
        f.write(_raw_bytes(a))


def dumps_array(arr: numpy.ndarray, np_shape: bool = False) -> bytes:
    """One array record with nothing around it (MXNet's ``MXNDArraySaveRawBytes``).

    Args:
        arr: the array.
        np_shape: a V3 record (else V2, unless ``arr`` is 0-d).

    Returns:
        The record's bytes (:func:`loads_array` reads them).

    Raises:
        TypeError: for a dtype MXNet 1.9 cannot load (see :func:`check_dtype`).
    """
    flag = check_dtype("the array", arr)
    buf = io.BytesIO()
    _write_array(buf, arr, flag, V3_MAGIC if np_shape or arr.ndim == 0 else V2_MAGIC)
    return buf.getvalue()


def write(f, kind: str, entries, np_shape: bool = False) -> None:
    """Write arrays to the binary file object ``f`` in MXNet's format.

    Args:
        f: a binary file object open for writing.
        kind: ``'dict'`` (names are written) or ``'list'``.
        entries: ``[(name, numpy array or SparseArray)]``.
        np_shape: write V3 arrays (NumPy shape semantics: what ``mx.npx.save`` writes,
            loaded by MXNet under ``npx.set_np()``); otherwise V2 arrays (what
            ``mx.nd.save`` writes), unless an array is 0-d, which only V3 holds.

    Raises:
        TypeError: for a dtype MXNet cannot hold (see :func:`check_dtype`).
    """
    flags = [check_dtype(name, arr) for name, arr in entries]
    magic = V3_MAGIC if np_shape or any(arr.ndim == 0 for _, arr in entries) else V2_MAGIC
    # (sparse entries are V2 records in any case: V3 holds dense arrays only)
    f.write(struct.pack("<QQQ", LIST_MAGIC, 0, len(entries)))
    for (_, arr), flag in zip(entries, flags):
        _write_array(f, arr, flag, magic)
    names = [name.encode("utf-8") for name, _ in entries] if kind == "dict" else []
    f.write(struct.pack("<Q", len(names)))
    for raw in names:
        f.write(struct.pack("<Q", len(raw)))
        f.write(raw)


def dumps(kind: str, entries, np_shape: bool = False) -> bytes:
    """The bytes :func:`write` would write (arguments as for :func:`write`).

    Returns:
        The file's content.
    """
    buf = io.BytesIO()
    write(buf, kind, entries, np_shape)
    return buf.getvalue()
