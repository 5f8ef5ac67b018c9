"""RecordIO files (MXNet 1.x's ``mxnet.recordio``): sequential and indexed record files,
and the image-record header that ``im2rec`` writes.

The on-disk layout is dmlc-core's, byte for byte, so files written by real MXNet read
here and ours read in MXNet:

* a record is ``magic`` (uint32 ``0xced7230a``), ``lrec`` (uint32: the continuation
  flag in the top 3 bits, the payload length in the low 29), the payload, then zero
  bytes up to a multiple of 4;
* a payload that holds the magic number at a 4-byte-aligned offset is written in parts,
  split there with the magic dropped (flags 1 start, 2 middle, 3 end; 0 a whole record);
  the reader joins the parts and puts the magic back;
* an ``.idx`` file has one ``key<TAB>byte offset`` line per record;
* an image record's payload is :class:`IRHeader` packed as ``struct`` ``'IfQQ'`` (flag,
  label, id, id2; 24 bytes), then ``flag`` float32 labels when ``flag > 0``, then the
  encoded image.

Nothing is unpickled or evaluated: a read checks every magic number and length and a
damaged file raises ``ValueError`` naming the file and the byte offset. Writes go to a
temporary file renamed over the target on ``close()`` (a crash never leaves half a file
under the real name). Images are encoded and decoded with Pillow, in OpenCV's BGR
channel order as MXNet's ``pack_img``/``unpack_img`` (which call OpenCV) use.

Example:
    >>> import os, tempfile
    >>> from core import recordio
    >>> d = tempfile.mkdtemp()
    >>> w = recordio.MXIndexedRecordIO(os.path.join(d, 'a.idx'), os.path.join(d, 'a.rec'), 'w')
    >>> for i in range(3):
    ...     w.write_idx(i, recordio.pack(recordio.IRHeader(0, float(i), i, 0), b'img%d' % i))
    >>> w.close()
    >>> r = recordio.MXIndexedRecordIO(os.path.join(d, 'a.idx'), os.path.join(d, 'a.rec'), 'r')
    >>> header, payload = recordio.unpack(r.read_idx(2))
    >>> header.label, header.id, payload
    (2.0, 2, b'img2')
    >>> r.close()
"""
from __future__ import annotations

import io
import numbers
import os
import struct
import tempfile
import threading
from collections import namedtuple

import numpy

__all__ = ["IRHeader", "MXIndexedRecordIO", "MXRecordIO", "pack", "pack_img", "unpack",
           "unpack_img"]

_MAGIC = 0xCED7230A
_MAGIC_BYTES = struct.pack("<I", _MAGIC)
_LEN_MASK = (1 << 29) - 1
_HEAD = struct.Struct("<II")


def _lrec(cflag: int, length: int) -> bytes:
    return _HEAD.pack(_MAGIC, (cflag << 29) | length)


def _encode_record(buf: bytes) -> bytes:
    """The bytes of one record as dmlc's ``RecordIOWriter::WriteRecord`` lays them out."""
    n = len(buf)
    if n >= 1 << 29:
        raise ValueError(f"MXRecordIO.write: a record holds at most 2**29 - 1 bytes, got {n}")
    parts, start, pos = [], 0, buf.find(_MAGIC_BYTES)
    while pos != -1 and pos + 4 <= (n // 4) * 4:
        if pos % 4 == 0:
            parts.append(_lrec(1 if start == 0 else 2, pos - start))
            parts.append(buf[start:pos])
            start = pos + 4
            pos = buf.find(_MAGIC_BYTES, start)
        else:
            pos = buf.find(_MAGIC_BYTES, pos + 1)
    parts.append(_lrec(3 if start else 0, n - start))
    parts.append(buf[start:])
    parts.append(b"\0" * (-n % 4))
    return b"".join(parts)


class MXRecordIO:
    """A RecordIO file read or written sequentially.

    Args:
        uri: the path of the ``.rec`` file.
        flag: ``'r'`` to read, ``'w'`` to write (the file is replaced on ``close()``).

    Raises:
        ValueError: ``flag`` is neither 'r' nor 'w'.
        FileNotFoundError: reading a file that does not exist.

    Example:
        >>> import os, tempfile
        >>> from core.recordio import MXRecordIO
        >>> path = os.path.join(tempfile.mkdtemp(), 'x.rec')
        >>> w = MXRecordIO(path, 'w')
        >>> w.write(b'record_0'); w.write(b'record_1'); w.close()
        >>> r = MXRecordIO(path, 'r')
        >>> r.read(), r.read(), r.read()
        (b'record_0', b'record_1', None)
    """

    def __init__(self, uri, flag: str):
        self.uri = os.fspath(uri)
        self.flag = flag
        self.is_open = False
        self.writable = False
        self.pid = None
        self._file = None
        self._tmp = None
        self._pos = 0
        self._lock = threading.Lock()
        self.open()

    # -------------------------------------------------------------- life cycle
    def open(self) -> None:
        """Open the file (``'w'``: a new temporary file beside it; ``'r'``: at record 0)."""
        if self.flag == "w":
            directory = os.path.dirname(os.path.abspath(self.uri))
            if not os.path.isdir(directory):
                raise FileNotFoundError(f"MXRecordIO: the directory of {self.uri!r} does not "
                                        f"exist")
            fd, self._tmp = tempfile.mkstemp(dir=directory, suffix=".tmp",
                                             prefix="." + os.path.basename(self.uri) + ".")
            self._file = os.fdopen(fd, "wb")
            self.writable = True
        elif self.flag == "r":
            if not os.path.isfile(self.uri):
                raise FileNotFoundError(f"MXRecordIO: no record file {self.uri!r}")
            self._file = open(self.uri, "rb")  # noqa: SIM115 - closed by close()
            self.writable = False
        else:
            raise ValueError(f"MXRecordIO: flag must be 'r' or 'w', got {self.flag!r}")
        self._pos = 0
        self.pid = os.getpid()
        self.is_open = True

    def close(self) -> None:
        """Close the file; a written file is flushed, synced and renamed into place."""
        if not self.is_open:
            return
        self.is_open = False
        self.pid = None
        f, self._file = self._file, None
        if not self.writable:
            f.close()
            return
        try:
            f.flush()
            os.fsync(f.fileno())
            f.close()
            os.replace(self._tmp, self.uri)
        except BaseException:
            f.close()
            if os.path.exists(self._tmp):
                os.unlink(self._tmp)
            raise
        self._tmp = None

    def _abort(self) -> None:
        """Close a writer without replacing the target (its temporary file is removed)."""
        if self.is_open and self.writable:
            self._file.close()
            if os.path.exists(self._tmp):
                os.unlink(self._tmp)
            self.is_open = False
        self.close()

    def __del__(self):
        try:
            self.close()
        except Exception:  # noqa: BLE001, S110 - never raise from a finalizer
            pass

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def reset(self) -> None:
        """Go back to the first record (``'w'``: start the file again, empty)."""
        self._abort()
        self.open()

    def __getstate__(self) -> dict:
        # A handle does not travel between processes: the copy reopens the file by name.
        if self.writable and self.is_open:
            raise TypeError(f"MXRecordIO: a record file open for writing ({self.uri!r}) "
                            f"cannot be copied to another process")
        state = {k: v for k, v in self.__dict__.items() if k not in ("_file", "_lock")}
        state["is_open"] = self.is_open
        return state

    def __setstate__(self, state: dict) -> None:
        self.__dict__.update(state)
        self._file, self._lock = None, threading.Lock()
        if state["is_open"]:
            self.is_open = False
            self.open()

    def _check_pid(self, allow_reset: bool) -> None:
        if self.pid != os.getpid():
            if not allow_reset:
                raise RuntimeError(f"MXRecordIO: {self.uri!r} was opened in another process; "
                                   f"call reset() in this one first")
            self._lock = threading.Lock()  # a forked copy of a lock may be held
            self.reset()

    # -------------------------------------------------------------- reading / writing
    def tell(self) -> int:
        """The byte offset of the next record (where ``write`` or ``read`` goes next)."""
        return self._pos

    def write(self, buf) -> None:
        """Append one record.

        Args:
            buf: the record's bytes (``bytes``, ``bytearray`` or a buffer).

        Raises:
            ValueError: the file is open for reading.
        """
        if not self.is_open or not self.writable:
            raise ValueError(f"MXRecordIO.write: {self.uri!r} is not open for writing")
        self._check_pid(allow_reset=False)
        if isinstance(buf, str):
            buf = buf.encode("utf-8")
        data = _encode_record(bytes(buf))
        self._file.write(data)
        self._pos += len(data)

    def read(self) -> bytes | None:
        """The next record's bytes, or None at the end of the file.

        Raises:
            ValueError: a damaged record (bad magic number, truncated payload, broken
                multi-part sequence); the message names the file and the byte offset.
        """
        if not self.is_open or self.writable:
            raise ValueError(f"MXRecordIO.read: {self.uri!r} is not open for reading")
        self._check_pid(allow_reset=False)
        with self._lock:
            return self._read_locked()

    def _fail(self, offset: int, what: str) -> ValueError:
        return ValueError(f"MXRecordIO: {self.uri!r} is damaged at byte offset {offset}: {what}")

    def _read_locked(self) -> bytes | None:
        chunks, first = [], True
        while True:
            offset = self._pos
            head = self._file.read(8)
            if not head and first:
                return None
            if len(head) < 8:
                raise self._fail(offset, f"a record header needs 8 bytes, the file ends "
                                         f"after {len(head)}")
            magic, lrec = _HEAD.unpack(head)
            if magic != _MAGIC:
                raise self._fail(offset, f"magic number 0x{magic:08x}, expected 0x{_MAGIC:08x}"
                                         f" (not a RecordIO file, or a wrong .idx offset)")
            cflag, length = lrec >> 29, lrec & _LEN_MASK
            if cflag > 3 or (first and cflag not in (0, 1)) or (not first and cflag in (0, 1)):
                raise self._fail(offset, f"continuation flag {cflag} "
                                         f"{'at the start of' if first else 'inside'} a record")
            padded = length + (-length % 4)
            payload = self._file.read(padded)
            if len(payload) < padded:
                raise self._fail(offset, f"the record announces {length} bytes, the file ends "
                                         f"after {len(payload)}")
            self._pos = offset + 8 + padded
            chunks.append(payload[:length])
            if cflag in (0, 3):
                return _MAGIC_BYTES.join(chunks)
            first = False

    def _scan_offsets(self) -> list:
        """The byte offset of every record, from the headers alone (payloads are skipped)."""
        with self._lock:
            offsets, pos = [], 0
            size = os.fstat(self._file.fileno()).st_size
            self._seek(0)
            while True:
                start = pos
                first = True
                while True:
                    head = self._file.read(8)
                    if not head and first:
                        self._seek(0)
                        return offsets
                    if len(head) < 8:
                        raise self._fail(pos, "a record header needs 8 bytes, the file ends "
                                              f"after {len(head)}")
                    magic, lrec = _HEAD.unpack(head)
                    if magic != _MAGIC:
                        raise self._fail(pos, f"magic number 0x{magic:08x}, expected "
                                              f"0x{_MAGIC:08x}")
                    length = lrec & _LEN_MASK
                    if pos + 8 + length + (-length % 4) > size:
                        raise self._fail(pos, f"the record announces {length} bytes, the file "
                                              f"ends after {size - pos - 8}")
                    pos += 8 + length + (-length % 4)
                    self._file.seek(pos)
                    first = False
                    if lrec >> 29 in (0, 3):
                        break
                offsets.append(start)

    def _read_at(self, pos: int) -> bytes:
        """The record that starts at byte offset ``pos``."""
        with self._lock:
            self._seek(pos)
            out = self._read_locked()
        if out is None:
            raise self._fail(pos, "no record starts at the end of the file")
        return out

    def _seek(self, pos: int) -> None:
        self._file.seek(pos)
        self._pos = pos


class MXIndexedRecordIO(MXRecordIO):
    """A RecordIO file with an ``.idx`` index, for reading records by key.

    Args:
        idx_path: the path of the ``.idx`` file (``key<TAB>offset`` lines).
        uri: the path of the ``.rec`` file.
        flag: ``'r'`` or ``'w'``.
        key_type: the type keys are converted to (``int`` by default).

    Raises:
        FileNotFoundError: reading, and the ``.idx`` or ``.rec`` file does not exist.
        ValueError: a malformed ``.idx`` line (the message names the file and line).

    Example:
        >>> import os, tempfile
        >>> from core.recordio import MXIndexedRecordIO
        >>> d = tempfile.mkdtemp()
        >>> idx, rec = os.path.join(d, 'x.idx'), os.path.join(d, 'x.rec')
        >>> w = MXIndexedRecordIO(idx, rec, 'w')
        >>> for i in range(5):
        ...     w.write_idx(i, b'record_%d' % i)
        >>> w.close()
        >>> r = MXIndexedRecordIO(idx, rec, 'r')
        >>> r.keys, r.read_idx(3)
        ([0, 1, 2, 3, 4], b'record_3')
    """

    def __init__(self, idx_path, uri, flag: str, key_type=int):
        self.idx_path = os.fspath(idx_path)
        self.key_type = key_type
        self.idx: dict = {}
        self.keys: list = []
        self._lines: list = []
        super().__init__(uri, flag)

    def open(self) -> None:
        super().open()
        self.idx, self.keys, self._lines = {}, [], []
        if self.writable:
            return
        if not os.path.isfile(self.idx_path):
            self.close()
            raise FileNotFoundError(f"MXIndexedRecordIO: no index file {self.idx_path!r} "
                                    f"(for {self.uri!r})")
        size = os.path.getsize(self.uri)
        with open(self.idx_path, encoding="utf-8") as f:
            for n, line in enumerate(f, 1):
                fields = line.strip().split("\t")
                if fields == [""]:
                    continue
                try:
                    key, pos = self.key_type(fields[0]), int(fields[1])
                except (ValueError, IndexError):
                    raise ValueError(f"MXIndexedRecordIO: {self.idx_path!r} line {n}: expected "
                                     f"'key<TAB>offset', got {line.rstrip()!r}") from None
                if not 0 <= pos < size:
                    raise ValueError(f"MXIndexedRecordIO: {self.idx_path!r} line {n}: offset "
                                     f"{pos} is outside {self.uri!r} ({size} bytes)")
                self.idx[key] = pos
                self.keys.append(key)

    def close(self) -> None:
        was_writing = self.is_open and self.writable
        super().close()
        if was_writing:
            from core.serialization import atomic_write
            text = "".join(self._lines).encode("utf-8")
            atomic_write(self.idx_path, lambda f: f.write(text))

    def reset(self) -> None:
        if self.is_open and self.writable:
            self._lines = []
        super().reset()

    def seek(self, idx) -> None:
        """Move the read position to the record with key ``idx``.

        Raises:
            KeyError: no record has that key (the message names the index file).
        """
        if self.writable:
            raise ValueError(f"MXIndexedRecordIO.seek: {self.uri!r} is open for writing")
        self._check_pid(allow_reset=True)
        if idx not in self.idx:
            raise KeyError(f"MXIndexedRecordIO: key {idx!r} is not in {self.idx_path!r} "
                           f"({len(self.keys)} keys)")
        self._seek(self.idx[idx])

    def read_idx(self, idx) -> bytes:
        """The record with key ``idx`` (thread-safe: the seek and the read are one step).

        Raises:
            KeyError: no record has that key.
            ValueError: the record is damaged.
        """
        if self.writable:
            raise ValueError(f"MXIndexedRecordIO.read_idx: {self.uri!r} is open for writing")
        self._check_pid(allow_reset=True)
        if idx not in self.idx:
            raise KeyError(f"MXIndexedRecordIO: key {idx!r} is not in {self.idx_path!r} "
                           f"({len(self.keys)} keys)")
        with self._lock:
            self._seek(self.idx[idx])
            out = self._read_locked()
        if out is None:
            raise self._fail(self.idx[idx], f"key {idx!r} points at the end of the file")
        return out

    def write_idx(self, idx, buf) -> None:
        """Append a record and index it under ``idx``.

        Args:
            idx: the key (converted with ``key_type``).
            buf: the record's bytes.
        """
        key = self.key_type(idx)
        pos = self.tell()
        self.write(buf)
        self._lines.append(f"{key}\t{pos}\n")
        self.idx[key] = pos
        self.keys.append(key)


# ------------------------------------------------------------------ image records
IRHeader = namedtuple("HEADER", ["flag", "label", "id", "id2"])
"""An image record's header: ``flag`` (the number of float32 labels that follow, or 0),
``label`` (a float, or an array of floats), ``id`` and ``id2`` (uint64 ids)."""

_IR = struct.Struct("<IfQQ")


def pack(header, s: bytes) -> bytes:
    """An image record: the header (and its label array, if any) followed by ``s``.

    Args:
        header: an :class:`IRHeader`; a number ``label`` is stored in the header (flag 0),
            an array label after it (flag = its size).
        s: the payload (usually the encoded image).

    Returns:
        The record's bytes.

    Example:
        >>> from core.recordio import IRHeader, pack, unpack
        >>> h, s = unpack(pack(IRHeader(0, [1, 2], 7, 0), b'xy'))
        >>> h.flag, h.label.tolist(), h.id, s
        (2, [1.0, 2.0], 7, b'xy')
    """
    header = IRHeader(*header)
    if isinstance(header.label, numbers.Number):
        header = header._replace(flag=0)
        extra = b""
    else:
        label = numpy.asarray(header.label, dtype=numpy.float32).ravel()
        header = header._replace(flag=label.size, label=0)
        extra = label.tobytes()
    return _IR.pack(*header) + extra + bytes(s)


def unpack(s: bytes):
    """Split an image record into its header and payload.

    Args:
        s: a record's bytes (from ``MXRecordIO.read``).

    Returns:
        ``(header, payload)``: the label is a float32 array when the header's flag is > 0.

    Raises:
        ValueError: the record is shorter than its header and labels.
    """
    if len(s) < _IR.size:
        raise ValueError(f"recordio.unpack: an image record needs a {_IR.size}-byte header, "
                         f"got {len(s)} bytes")
    header = IRHeader(*_IR.unpack_from(s))
    s = s[_IR.size:]
    if header.flag > 0:
        if len(s) < 4 * header.flag:
            raise ValueError(f"recordio.unpack: the header announces {header.flag} labels "
                             f"({4 * header.flag} bytes), the record has {len(s)} bytes left")
        header = header._replace(label=numpy.frombuffer(s, numpy.float32, header.flag))
        s = s[4 * header.flag:]
    return header, s


def _pil():
    try:
        from PIL import Image
    except ImportError as e:
        raise ImportError("recordio: encoding and decoding images needs Pillow "
                          "(pip install pillow)") from e
    return Image


def decode_image(buf, flag: int = 1, to_rgb: bool = True, where: str = "imdecode"):
    """Decode encoded image bytes to a NumPy uint8 ``(H, W, C)`` array with Pillow.

    Args:
        buf: the encoded bytes.
        flag: 1 three colour channels, 0 one gray channel, -1 as stored (gray stays one
            channel, an alpha channel is kept).
        to_rgb: RGB order (True) or OpenCV's BGR (False).
        where: the caller's name, for the error message.

    Returns:
        The ``(H, W, C)`` array (C = 1, 3 or 4).

    Raises:
        ValueError: the bytes are not an image Pillow can decode.
    """
    Image = _pil()
    try:
        with Image.open(io.BytesIO(bytes(buf))) as im:
            if flag == 0 and im.format == "JPEG":
                im.draft("L", im.size)  # libjpeg's own gray output (the Y channel), as OpenCV
            if flag == 0 and im.mode not in ("L", "1"):
                # libpng's fixed-point RGB-to-gray, which OpenCV's PNG decoder asks for
                # (0.299/0.587/0.114 in 1/32768ths, rounded down), not Pillow's conversion.
                rgb = numpy.asarray(im.convert("RGB"), numpy.int64)
                x = (rgb @ numpy.array([9797, 19234, 3737], numpy.int64)) >> 15
                im = Image.fromarray(x.astype(numpy.uint8))
            if flag == 0:
                im = im.convert("L")
            elif flag > 0:
                im = im.convert("RGB")
            elif im.mode not in ("L", "RGB", "RGBA"):
                im = im.convert("RGBA" if "A" in im.mode else "RGB")
            x = numpy.asarray(im)
    except (OSError, SyntaxError, ValueError) as e:
        raise ValueError(f"{where}: cannot decode the image ({len(buf)} bytes): {e}") from None
    if x.ndim == 2:
        x = x[..., None]
    elif not to_rgb:
        x = x[..., [2, 1, 0] + ([3] if x.shape[2] == 4 else [])]
    return numpy.ascontiguousarray(x, dtype=numpy.uint8)


def encode_image(img, quality: int = 95, img_fmt: str = ".jpg", bgr: bool = True) -> bytes:
    """Encode a uint8 ``(H, W)``/``(H, W, 1|3|4)`` array as JPEG or PNG with Pillow.

    Args:
        img: the image (BGR channel order if ``bgr``, as OpenCV's ``imencode`` takes).
        quality: JPEG quality 1-100, or PNG compression level 0-9.
        img_fmt: ``'.jpg'``/``'.jpeg'`` or ``'.png'``.
        bgr: the channels are in BGR(A) order.

    Returns:
        The encoded bytes.

    Raises:
        ValueError: an unknown format or an image of an unsupported shape.
    """
    Image = _pil()
    x = numpy.asarray(img)
    if x.ndim == 3 and x.shape[2] == 1:
        x = x[..., 0]
    if x.ndim not in (2, 3) or (x.ndim == 3 and x.shape[2] not in (3, 4)):
        raise ValueError(f"recordio.pack_img: expected an image (H, W), (H, W, 1), (H, W, 3) or "
                         f"(H, W, 4), got shape {x.shape}")
    x = numpy.ascontiguousarray(x.astype(numpy.uint8, copy=False))
    if x.ndim == 3 and bgr:
        x = numpy.ascontiguousarray(x[..., [2, 1, 0] + ([3] if x.shape[2] == 4 else [])])
    fmt = img_fmt.lower()
    out = io.BytesIO()
    im = Image.fromarray(x)
    if fmt in (".jpg", ".jpeg"):
        if im.mode == "RGBA":
            im = im.convert("RGB")
        im.save(out, "JPEG", quality=int(quality))
    elif fmt == ".png":
        im.save(out, "PNG", compress_level=min(max(int(quality), 0), 9))
    else:
        raise ValueError(f"recordio.pack_img: img_fmt must be '.jpg' or '.png', got {img_fmt!r}")
    return out.getvalue()


def pack_img(header, img, quality: int = 95, img_fmt: str = ".jpg") -> bytes:
    """Encode an image and pack it with ``header`` (MXNet's ``pack_img``).

    Args:
        header: an :class:`IRHeader`.
        img: a uint8 NumPy image in OpenCV's BGR order, ``(H, W, 3)`` or gray ``(H, W)``.
        quality: JPEG quality 1-100 (or PNG compression 0-9).
        img_fmt: ``'.jpg'`` or ``'.png'``.

    Returns:
        The record's bytes.

    Example:
        >>> import numpy, pytest
        >>> _ = pytest.importorskip("PIL")   # the codec is Pillow
        >>> from core.recordio import IRHeader, pack_img, unpack_img
        >>> img = numpy.zeros((4, 5, 3), numpy.uint8); img[..., 0] = 200   # blue, in BGR
        >>> h, out = unpack_img(pack_img(IRHeader(0, 3.0, 1, 0), img, img_fmt='.png'))
        >>> h.label, out.shape, out[0, 0].tolist()
        (3.0, (4, 5, 3), [200, 0, 0])
    """
    return pack(header, encode_image(img, quality, img_fmt))


def unpack_img(s: bytes, iscolor: int = -1):
    """Unpack an image record and decode its image (MXNet's ``unpack_img``).

    Args:
        s: the record's bytes.
        iscolor: OpenCV's ``imdecode`` flag: -1 as stored, 0 gray, 1 colour.

    Returns:
        ``(header, image)``: a uint8 NumPy array, BGR ``(H, W, 3)`` or gray ``(H, W)``,
        as OpenCV returns.
    """
    header, s = unpack(s)
    img = decode_image(s, iscolor, to_rgb=False, where="recordio.unpack_img")
    return header, img[..., 0] if img.shape[2] == 1 else img
