"""The Open Inference Protocol's tensor datatypes and their NumPy dtypes.

The protocol (KServe v2) names element types with strings: ``"FP32"``, ``"INT64"``,
``"BOOL"``, ``"BYTES"``, ... This module maps them to NumPy dtypes and back, and
turns the binary tensor extension's raw bytes into arrays and back (fixed-size types
little-endian and row-major; ``BYTES`` elements each with a 4-byte little-endian
length in front).

Example:
    >>> import numpy
    >>> from core.serving.datatypes import to_datatype, to_dtype
    >>> to_datatype(numpy.float32), to_dtype("INT64")
    ('FP32', dtype('int64'))
    >>> from core.serving.datatypes import bytes_to_array, array_to_bytes
    >>> raw = array_to_bytes(numpy.array([b"ab", b"c"], dtype=object), "BYTES")
    >>> raw, bytes_to_array(raw, "BYTES", [2]).tolist()
    (b'\\x02\\x00\\x00\\x00ab\\x01\\x00\\x00\\x00c', [b'ab', b'c'])
"""
from __future__ import annotations

import struct

import ml_dtypes
import numpy

__all__ = ["DATATYPES", "array_to_bytes", "bytes_to_array", "to_datatype", "to_dtype"]

# Fixed-size types; "BYTES" (variable-length byte strings) is handled apart.
DATATYPES: dict[str, numpy.dtype] = {
    "BOOL": numpy.dtype(numpy.bool_),
    "UINT8": numpy.dtype(numpy.uint8),
    "UINT16": numpy.dtype(numpy.uint16),
    "UINT32": numpy.dtype(numpy.uint32),
    "UINT64": numpy.dtype(numpy.uint64),
    "INT8": numpy.dtype(numpy.int8),
    "INT16": numpy.dtype(numpy.int16),
    "INT32": numpy.dtype(numpy.int32),
    "INT64": numpy.dtype(numpy.int64),
    "FP16": numpy.dtype(numpy.float16),
    "FP32": numpy.dtype(numpy.float32),
    "FP64": numpy.dtype(numpy.float64),
    "BF16": numpy.dtype(ml_dtypes.bfloat16),
}
_BY_DTYPE = {v: k for k, v in DATATYPES.items()}


def to_dtype(datatype: str) -> numpy.dtype:
    """The NumPy dtype of a protocol datatype (``object`` for ``"BYTES"``).

    Raises:
        ValueError: an unknown datatype (the message lists the known ones).
    """
    if datatype == "BYTES":
        return numpy.dtype(object)
    try:
        return DATATYPES[datatype]
    except (KeyError, TypeError):
        raise ValueError(f"unknown datatype {datatype!r}; the protocol's datatypes are "
                         f"{', '.join([*DATATYPES, 'BYTES'])}") from None


def to_datatype(dtype) -> str:
    """The protocol datatype of a NumPy dtype (``"BYTES"`` for object/bytes/str arrays)."""
    d = numpy.dtype(dtype)
    if d.kind in "OSU":
        return "BYTES"
    try:
        return _BY_DTYPE[d]
    except KeyError:
        raise ValueError(f"dtype {d} has no Open Inference Protocol datatype") from None


def bytes_to_array(raw: bytes, datatype: str, shape) -> numpy.ndarray:
    """An array of ``shape`` from the binary tensor extension's bytes.

    Raises:
        ValueError: the byte count does not fit ``shape`` and ``datatype``.
    """
    count = int(numpy.prod(shape, dtype=numpy.int64))
    if datatype == "BYTES":
        items, pos = [], 0
        while pos < len(raw):
            if pos + 4 > len(raw):
                raise ValueError(f"BYTES tensor: {len(raw) - pos} stray byte(s) where a "
                                 "4-byte length was expected")
            (n,) = struct.unpack_from("<I", raw, pos)
            pos += 4
            if pos + n > len(raw):
                raise ValueError(f"BYTES tensor: element {len(items)} says {n} bytes, "
                                 f"{len(raw) - pos} remain")
            items.append(bytes(raw[pos:pos + n]))
            pos += n
        if len(items) != count:
            raise ValueError(f"BYTES tensor: {len(items)} element(s) for shape "
                             f"{list(shape)} ({count} elements)")
        out = numpy.empty(count, dtype=object)
        out[:] = items
        return out.reshape(shape)
    dtype = to_dtype(datatype)
    if len(raw) != count * dtype.itemsize:
        raise ValueError(f"{len(raw)} byte(s) for a {datatype} tensor of shape {list(shape)} "
                         f"(expected {count * dtype.itemsize})")
    return numpy.frombuffer(raw, dtype=dtype.newbyteorder("<")).astype(dtype).reshape(shape)


def array_to_bytes(array: numpy.ndarray, datatype: str) -> bytes:
    """The binary tensor extension's bytes of ``array`` (row-major, little-endian)."""
    if datatype == "BYTES":
        parts = []
        for item in numpy.asarray(array, dtype=object).reshape(-1):
            b = item if isinstance(item, bytes) else str(item).encode("utf-8")
            parts.append(struct.pack("<I", len(b)))
            parts.append(b)
        return b"".join(parts)
    dtype = to_dtype(datatype)
    return numpy.ascontiguousarray(array, dtype=dtype.newbyteorder("<")).tobytes()
