"""``im2rec``: MXNet's ``tools/im2rec.py`` as a command — make an image list (``.lst``)
from a folder, and pack a list's images into a RecordIO file (``.rec`` + ``.idx``).

Run it as ``python -m gluon.data.im2rec`` or, once installed, ``im2rec``; the arguments
are MXNet's::

    im2rec PREFIX ROOT --list --recursive   # ROOT/<class>/*.jpg -> PREFIX.lst
    im2rec PREFIX ROOT --resize 256         # PREFIX*.lst -> PREFIX*.rec, PREFIX*.idx

A ``.lst`` line is ``index<TAB>label(s)<TAB>relative path``. Each record is an
``IRHeader`` (label, id = the list index) and the image: re-encoded (``--encoding``
``.jpg``/``.png``, ``--quality``, after ``--center-crop`` and ``--resize`` of the
shorter edge, bilinear as OpenCV's default) or the file's bytes as they are
(``--pass-through``). ``--pack-label`` stores all of a line's labels.

Differences from MXNet's script: images are read and encoded with Pillow (not
OpenCV), ``--num-thread`` encodes with threads and keeps the list's order (MXNet's
processes may reorder records), files are written atomically, and a missing root or
list file ends with an error (exit status 1) instead of a message.

Example:
    >>> import os, tempfile, numpy, pytest
    >>> Image = pytest.importorskip("PIL.Image")
    >>> from gluon.data import im2rec
    >>> root = tempfile.mkdtemp()
    >>> os.mkdir(os.path.join(root, 'cat'))
    >>> Image.fromarray(numpy.zeros((4, 4, 3), 'uint8')).save(os.path.join(root, 'cat', 'a.png'))
    >>> prefix = os.path.join(tempfile.mkdtemp(), 'data')
    >>> im2rec.main([prefix, root, '--list', '--recursive', '--no-shuffle'])
    cat 0
    0
    >>> im2rec.main([prefix, root, '--quiet'])
    0
    >>> sorted(os.listdir(os.path.dirname(prefix)))
    ['data.idx', 'data.lst', 'data.rec']
"""
from __future__ import annotations

import argparse
import os
import random
import sys
from concurrent.futures import ThreadPoolExecutor

import numpy

from core import recordio
from core.serialization import atomic_write

__all__ = ["image_encode", "list_image", "main", "make_list", "parse_args", "read_list",
           "write_list"]


def list_image(root: str, recursive: bool, exts):
    """Yield ``(index, relative path, label)`` for the images under ``root``.

    Args:
        root: the folder.
        recursive: walk sub-folders, one label per folder (in walk order); else only
            ``root``'s own files, label 0.
        exts: the accepted extensions (lower case, with the dot).

    Yields:
        ``(i, path relative to root, label)``.
    """
    i = 0
    if recursive:
        cat: dict = {}
        for path, dirs, files in os.walk(root, followlinks=True):
            dirs.sort()
            files.sort()
            for fname in files:
                fpath = os.path.join(path, fname)
                if os.path.isfile(fpath) and os.path.splitext(fname)[1].lower() in exts:
                    if path not in cat:
                        cat[path] = len(cat)
                    yield i, os.path.relpath(fpath, root), cat[path]
                    i += 1
        for k, v in sorted(cat.items(), key=lambda x: x[1]):
            print(os.path.relpath(k, root), v)
    else:
        for fname in sorted(os.listdir(root)):
            fpath = os.path.join(root, fname)
            if os.path.isfile(fpath) and os.path.splitext(fname)[1].lower() in exts:
                yield i, os.path.relpath(fpath, root), 0
                i += 1


def write_list(path_out: str, image_list) -> None:
    """Write ``[(index, path, label, ...), ...]`` as a ``.lst`` file (atomically).

    Args:
        path_out: the ``.lst`` path.
        image_list: items ``(index, relative path, label, [more labels])``.
    """
    lines = []
    for item in image_list:
        labels = "".join(f"{float(j):f}\t" for j in item[2:])
        lines.append(f"{int(item[0])}\t{labels}{item[1]}\n")
    data = "".join(lines).encode("utf-8")
    atomic_write(path_out, lambda f: f.write(data))


def make_list(args) -> None:
    """Write the ``.lst`` file(s) for ``args`` (chunks, train/val/test split, shuffle)."""
    image_list = list(list_image(args.root, args.recursive, args.exts))
    if args.shuffle:
        random.seed(100)
        random.shuffle(image_list)
    n = len(image_list)
    chunk_size = (n + args.chunks - 1) // args.chunks
    for i in range(args.chunks):
        chunk = image_list[i * chunk_size:(i + 1) * chunk_size]
        str_chunk = f"_{i}" if args.chunks > 1 else ""
        sep = int(chunk_size * args.train_ratio)
        sep_test = int(chunk_size * args.test_ratio)
        if args.train_ratio == 1.0:
            write_list(args.prefix + str_chunk + ".lst", chunk)
        else:
            if args.test_ratio:
                write_list(args.prefix + str_chunk + "_test.lst", chunk[:sep_test])
            if args.train_ratio + args.test_ratio < 1.0:
                write_list(args.prefix + str_chunk + "_val.lst", chunk[sep_test + sep:])
            write_list(args.prefix + str_chunk + "_train.lst", chunk[sep_test:sep_test + sep])


def read_list(path_in: str):
    """Yield ``[index, path, label, ...]`` for each valid line of a ``.lst`` file.

    Lines with fewer than three fields or unparsable numbers are reported and skipped,
    as MXNet's script does.
    """
    with open(path_in, encoding="utf-8") as fin:
        for n, line in enumerate(fin, 1):
            fields = [f.strip() for f in line.strip().split("\t")]
            if len(fields) < 3:
                print(f"im2rec: {path_in} line {n}: a list line needs index, label(s) and "
                      f"path separated by tabs, got {len(fields)} field(s); skipped",
                      file=sys.stderr)
                continue
            try:
                yield [int(fields[0]), fields[-1]] + [float(v) for v in fields[1:-1]]
            except ValueError as e:
                print(f"im2rec: {path_in} line {n}: {e}; skipped", file=sys.stderr)


def _load(path: str, color: int) -> numpy.ndarray:
    from PIL import Image
    with Image.open(path) as im:
        if color == 1:
            im = im.convert("RGB")
        elif color == 0:
            im = im.convert("L")
        elif im.mode not in ("L", "RGB", "RGBA"):
            im = im.convert("RGBA" if "A" in im.mode else "RGB")
        x = numpy.asarray(im)
    return x[..., None] if x.ndim == 2 else x


def image_encode(args, item) -> bytes | None:
    """The record of one list item, or None (with a message) if its image cannot be read.

    Args:
        args: the parsed arguments (root, pass_through, color, center_crop, resize,
            quality, encoding, pack_label).
        item: ``[index, relative path, label, ...]``.

    Returns:
        The packed record's bytes, or None.
    """
    from gluon.data.vision._image import resize

    fullpath = os.path.join(args.root, item[1])
    label = item[2:] if len(item) > 3 and args.pack_label else item[2]
    header = recordio.IRHeader(0, label, item[0], 0)
    try:
        if args.pass_through:
            with open(fullpath, "rb") as fin:
                return recordio.pack(header, fin.read())
        img = _load(fullpath, args.color)
    except OSError as e:
        print(f"im2rec: cannot read image {fullpath}: {e}; skipped", file=sys.stderr)
        return None
    if args.center_crop:
        h, w = img.shape[:2]
        if h > w:
            margin = (h - w) // 2
            img = img[margin:margin + w]
        else:
            margin = (w - h) // 2
            img = img[:, margin:margin + h]
    if args.resize:
        h, w = img.shape[:2]
        new_w, new_h = ((args.resize, h * args.resize // w) if h > w
                        else (w * args.resize // h, args.resize))
        img = resize(numpy.ascontiguousarray(img), new_w, new_h, 1)
    return recordio.pack(header, recordio.encode_image(img, args.quality, args.encoding,
                                                       bgr=False))


def _write_record(args, lst: str, working_dir: str) -> int:
    base = os.path.splitext(os.path.basename(lst))[0]
    record = recordio.MXIndexedRecordIO(os.path.join(working_dir, base + ".idx"),
                                        os.path.join(working_dir, base + ".rec"), "w")
    items = list(read_list(lst))
    count = 0
    try:
        with ThreadPoolExecutor(max(1, args.num_thread)) as pool:
            for item, s in zip(items, pool.map(lambda it: image_encode(args, it), items)):
                if s is None:
                    continue
                record.write_idx(item[0], s)
                if count % 1000 == 0 and not args.quiet:
                    print("count:", count)
                count += 1
    except BaseException:
        record._abort()  # drop the half-written temporary files
        raise
    record.close()
    return count


def parse_args(argv=None) -> argparse.Namespace:
    """MXNet's im2rec arguments (``--help`` lists them)."""
    parser = argparse.ArgumentParser(
        prog="im2rec", formatter_class=argparse.ArgumentDefaultsHelpFormatter,
        description="Create an image list or make a record database by reading from an "
                    "image list")
    parser.add_argument("prefix", help="prefix of input/output lst and rec files.")
    parser.add_argument("root", help="path to folder containing images.")
    cgroup = parser.add_argument_group("Options for creating image lists")
    cgroup.add_argument("--list", action="store_true",
                        help="create image list(s) <prefix>.lst by traversing root; otherwise "
                             "read <prefix>*.lst and create <prefix>*.rec")
    cgroup.add_argument("--exts", nargs="+", default=[".jpeg", ".jpg", ".png"],
                        help="list of acceptable image extensions.")
    cgroup.add_argument("--chunks", type=int, default=1, help="number of chunks.")
    cgroup.add_argument("--train-ratio", type=float, default=1.0,
                        help="Ratio of images to use for training.")
    cgroup.add_argument("--test-ratio", type=float, default=0,
                        help="Ratio of images to use for testing.")
    cgroup.add_argument("--recursive", action="store_true",
                        help="walk sub-folders and give each folder its own label; otherwise "
                             "only root's images, label 0.")
    cgroup.add_argument("--no-shuffle", dest="shuffle", action="store_false",
                        help="keep the image order in <prefix>.lst")
    rgroup = parser.add_argument_group("Options for creating database")
    rgroup.add_argument("--pass-through", action="store_true",
                        help="skip transformation and save image as is")
    rgroup.add_argument("--resize", type=int, default=0,
                        help="resize the shorter edge of image to the newsize")
    rgroup.add_argument("--center-crop", action="store_true",
                        help="crop the center of the image to make it square.")
    rgroup.add_argument("--quality", type=int, default=95,
                        help="JPEG quality for encoding, 1-100; or PNG compression, 1-9")
    rgroup.add_argument("--num-thread", type=int, default=1,
                        help="number of threads to use for encoding.")
    rgroup.add_argument("--color", type=int, default=1, choices=[-1, 0, 1],
                        help="1: colour (no alpha), 0: grayscale, -1: as stored incl. alpha.")
    rgroup.add_argument("--encoding", type=str, default=".jpg", choices=[".jpg", ".png"],
                        help="specify the encoding of the images.")
    rgroup.add_argument("--pack-label", action="store_true",
                        help="Whether to also pack multi dimensional label in the record file")
    parser.add_argument("--quiet", action="store_true", help="print no progress lines.")
    args = parser.parse_args(argv)
    args.prefix = os.path.abspath(args.prefix)
    args.root = os.path.abspath(args.root)
    return args


def main(argv=None) -> int:
    """Run im2rec with ``argv`` (default: the command line); returns the exit status.

    Args:
        argv: the arguments, as on the command line.

    Returns:
        0 on success, 1 when the root folder or the list files are missing.
    """
    args = parse_args(argv)
    if args.list:
        if not os.path.isdir(args.root):
            print(f"im2rec: the image folder {args.root} does not exist", file=sys.stderr)
            return 1
        make_list(args)
        return 0
    working_dir = args.prefix if os.path.isdir(args.prefix) else os.path.dirname(args.prefix)
    if not os.path.isdir(working_dir):
        print(f"im2rec: the folder {working_dir} of the prefix does not exist", file=sys.stderr)
        return 1
    lists = sorted(os.path.join(working_dir, f) for f in os.listdir(working_dir)
                   if os.path.isfile(os.path.join(working_dir, f)))
    lists = [f for f in lists if f.startswith(args.prefix) and f.endswith(".lst")]
    if not lists:
        print(f"im2rec: no list file {args.prefix}*.lst (make one with --list)",
              file=sys.stderr)
        return 1
    if not args.pass_through and not os.path.isdir(args.root):
        print(f"im2rec: the image folder {args.root} does not exist", file=sys.stderr)
        return 1
    for lst in lists:
        if not args.quiet:
            print("Creating .rec file from", lst, "in", working_dir)
        _write_record(args, lst, working_dir)
    return 0


if __name__ == "__main__":
    sys.exit(main())
