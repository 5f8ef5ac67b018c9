"""MXNet 1.9.1's ``gluon.utils``: splitting a batch over contexts, clipping gradients
by their global norm, the forward-hook handle, and the file helpers (``check_sha1``,
``replace_file``, ``download``).

``download`` never uses the network (kbackend has none at run time): it returns the path
MXNet would have downloaded to when that file is already there (and its SHA-1 matches,
when one is given), and otherwise raises :class:`NoNetworkError` naming where to put it.

Example:
    >>> import numpy
    >>> from core import cpu
    >>> from gluon.utils import split_and_load
    >>> parts = split_and_load(numpy.zeros((4, 3)), [cpu(0), cpu(1)])
    >>> [(p.shape, p.context) for p in parts]
    [((2, 3), cpu(0)), ((2, 3), cpu(1))]
"""
from __future__ import annotations

import hashlib
import itertools
import math
import os
import warnings
import weakref
from collections.abc import Sequence

import numpy

from core import autograd, nd, parallel
from core.context import Context
from core.ndarray import NDArray
from core.parallel import split_data
from core.testing.data import NoNetworkError

__all__ = ["HookHandle", "NoNetworkError", "check_sha1", "clip_global_norm", "download",
           "replace_file", "shape_is_known", "split_and_load", "split_data"]


def split_and_load(data, ctx_list: Sequence[Context] | Context | None = None,
                   batch_axis: int = 0, even_split: bool = True, *,
                   device: Sequence[Context] | Context | None = None,
                   device_list: Sequence[Context] | None = None) -> list:
    """Split ``data`` along ``batch_axis`` and put slice ``i`` on ``ctx_list[i]``.

    The devices are given once: positionally, or as ``ctx_list=`` (MXNet 1.x),
    ``device_list=`` or ``device=`` (MXNet 2.0 names; ``device`` may be a single device).

    Args:
        data: an NDArray (a CSRNDArray splits into CSRNDArrays along axis 0, as in
            MXNet), or anything ``nd.array`` takes (a NumPy array becomes float32, as in
            MXNet).
        ctx_list: the contexts (devices), one per slice; one context gives one slice.
        batch_axis: the axis to split along.
        even_split: require the axis length to be a multiple of ``len(ctx_list)``.
        device: MXNet 2.0's name for ``ctx_list``.
        device_list: likewise.

    Returns:
        A list of NDArrays, slice ``i`` on ``ctx_list[i]``.

    Raises:
        TypeError: the devices are given twice, or not at all.

    Example:
        >>> from core import nd, cpu
        >>> from gluon.utils import split_and_load
        >>> parts = split_and_load(nd.arange(6).reshape(3, 2), [cpu(0), cpu(1)],
        ...                        even_split=False)
        >>> [p.asnumpy().tolist() for p in parts]
        [[[0.0, 1.0], [2.0, 3.0]], [[4.0, 5.0]]]
        >>> [p.context for p in split_and_load(nd.ones((2, 1)), device=[cpu(0), cpu(1)])]
        [cpu(0), cpu(1)]
    """
    given = {k: v for k, v in (("ctx_list", ctx_list), ("device", device),
                               ("device_list", device_list)) if v is not None}
    if len(given) != 1:
        raise TypeError(f"split_and_load: give the devices once, as ctx_list (or "
                        f"positionally), device or device_list; got "
                        f"{', '.join(given) or 'none'}")
    ctxs = next(iter(given.values()))
    if isinstance(data, NDArray) and data.stype != "default":
        return _split_sparse(data, [ctxs] if isinstance(ctxs, (Context, str)) else ctxs,
                             batch_axis, even_split)
    return parallel.split_batch(data, ctxs, batch_axis, even_split)


def _split_sparse(data: NDArray, ctx_list, batch_axis: int, even_split: bool) -> list:
    """MXNet's split of a sparse batch: row slices ``data[a:b]`` (their storage type kept)."""
    ctx_list = list(ctx_list)
    if len(ctx_list) == 1:
        return [data.as_in_context(ctx_list[0])]
    if batch_axis != 0:
        raise ValueError(f"split_and_load: a {data.stype} array splits along axis 0 only, "
                         f"got batch_axis={batch_axis} (shape {tuple(data.shape)})")
    n, size = len(ctx_list), data.shape[0]
    if even_split and size % n:
        raise ValueError(f"data with shape {tuple(data.shape)} cannot be evenly split into "
                         f"{n} slices along axis 0. Use a batch size that's multiple of {n} "
                         "or set even_split=False to allow uneven partitioning of data.")
    if size < n:
        raise ValueError(f"Too many slices for data with shape {tuple(data.shape)}. "
                         f"Arguments are num_slice={n} and batch_axis=0.")
    step, extras = divmod(size, n)
    bounds = [0, *itertools.accumulate([step + 1] * extras + [step] * (n - extras))]
    return [data[bounds[i]:bounds[i + 1]].as_in_context(c) for i, c in enumerate(ctx_list)]


def clip_global_norm(arrays: Sequence[NDArray], max_norm: float,
                     check_isfinite: bool = True):
    """Rescale ``arrays`` in place so that their joint L2 norm is at most ``max_norm``.

    Args:
        arrays: NDArrays (typically gradients; dense or sparse), on any contexts.
        max_norm: the largest allowed global norm.
        check_isfinite: warn when the norm is NaN or infinite; the norm is then
            returned as a Python float. With False, nothing synchronizes and the norm
            is returned as a 1-element NDArray (as MXNet does).

    Returns:
        The global norm before clipping (float, or NDArray when ``check_isfinite`` is
        False).

    Example:
        >>> from core import nd
        >>> from gluon.utils import clip_global_norm
        >>> a, b = nd.array([3.0, 0.0]), nd.array([4.0])
        >>> clip_global_norm([a, b], 1.0)
        5.0
        >>> a.asnumpy().tolist(), b.asnumpy().tolist()
        ([0.6000000238418579, 0.0], [0.800000011920929])
    """
    arrays = list(arrays)
    if not arrays:
        raise ValueError("clip_global_norm: arrays is empty")
    for i, a in enumerate(arrays):
        if not isinstance(a, NDArray):
            raise TypeError(f"clip_global_norm: arrays[{i}] must be an NDArray, got "
                            f"{type(a).__name__}")
    ctx = arrays[0].context
    with autograd.pause():
        total = None
        for a in arrays:
            # Sum squares in float32 at least (float16 would overflow), float64 if given;
            # a sparse array's stored values hold all its nonzeros.
            x = (a.data if a.stype != "default" else a).reshape((-1,)).astype("float64" if a.dtype == numpy.float64 else "float32",
                                        copy=False)
            sq = nd.sum(x * x).as_in_context(ctx)
            total = sq if total is None else total + sq
        total_norm = nd.sqrt(total).reshape((1,))
        if check_isfinite:
            value = float(total_norm.asscalar())
            if not math.isfinite(value):
                warnings.warn(UserWarning("nan or inf is detected. Clipping results will be "
                                          "undefined."), stacklevel=2)
        scale = nd.minimum(max_norm / (total_norm + 1e-8), 1.0)
        for a in arrays:
            a *= scale.as_in_context(a.context).astype(a.dtype, copy=False)
    return value if check_isfinite else total_norm


def shape_is_known(shape) -> bool:
    """Whether every dimension of ``shape`` is known (None, 0 and -1 mark unknown ones).

    Example:
        >>> from gluon.utils import shape_is_known
        >>> shape_is_known((3, 4)), shape_is_known((3, 0)), shape_is_known(None)
        (True, False, False)
    """
    if shape is None:
        return False
    return all(isinstance(d, (int, numpy.integer)) and d > 0 for d in shape)


def check_sha1(filename: str, sha1_hash: str) -> bool:
    """Whether the SHA-1 of the file's content is ``sha1_hash`` (hexadecimal digits).

    Args:
        filename: the file.
        sha1_hash: the expected hash, in hexadecimal digits (any case).

    Returns:
        True when they match.

    Example:
        >>> import os, tempfile
        >>> from gluon.utils import check_sha1
        >>> path = os.path.join(tempfile.mkdtemp(), "a.txt")
        >>> with open(path, "wb") as f:
        ...     _ = f.write(b"abc")
        >>> check_sha1(path, "a9993e364706816aba3e25717850c26c9cd0d89d")
        True
    """
    sha1 = hashlib.sha1()
    with open(filename, "rb") as f:
        for chunk in iter(lambda: f.read(1 << 20), b""):
            sha1.update(chunk)
    return sha1.hexdigest() == str(sha1_hash).lower()


def replace_file(src: str, dst: str) -> None:
    """Move ``src`` to ``dst`` atomically, replacing ``dst`` (``os.replace``).

    On failure ``src`` is removed and an ``OSError`` naming both paths is raised, as
    in MXNet.

    Args:
        src: the file to move (typically a temporary file next to ``dst``).
        dst: the destination path.

    Example:
        >>> import os, tempfile
        >>> from gluon.utils import replace_file
        >>> d = tempfile.mkdtemp()
        >>> src, dst = os.path.join(d, "new.tmp"), os.path.join(d, "file")
        >>> open(src, "w").close(); replace_file(src, dst)
        >>> os.path.exists(src), os.path.exists(dst)
        (False, True)
    """
    try:
        os.replace(src, dst)
    except OSError as e:
        try:
            os.remove(src)
        except OSError:
            pass
        raise OSError(f"replace_file: moving {src!r} to {dst!r} failed ({e})") from e


def _download_target(url: str, path) -> str:
    """The file name MXNet's ``download`` writes ``url`` to."""
    base = url.split("/")[-1]
    if path is None:
        if not base:
            raise ValueError(f"download: cannot construct a file name from the URL {url!r}; "
                             "give path= explicitly")
        return base
    path = os.path.expanduser(os.fspath(path))
    if os.path.isdir(path):
        if not base:
            raise ValueError(f"download: cannot construct a file name from the URL {url!r} "
                             f"inside the folder {path!r}; give the file's path as path=")
        return os.path.join(path, base)
    return path


def download(url: str, path: str | None = None, overwrite: bool = False,
             sha1_hash: str | None = None, retries: int = 5, verify_ssl: bool = True) -> str:
    """The local file MXNet's ``download(url, path)`` would write, when it is there.

    kbackend never uses the network: the file must be put in place beforehand (copied
    from a machine that has it, e.g. an MXNet installation's ``~/.mxnet``). The file
    name follows MXNet's rules: ``path`` itself, or ``path/<last part of url>`` when
    ``path`` is a folder, or ``<last part of url>`` in the current folder when ``path``
    is None.

    Args:
        url: the URL MXNet would download.
        path: the destination file or folder (``~`` is expanded).
        overwrite: MXNet downloads again; here that is an error (nothing downloads).
        sha1_hash: the expected SHA-1 (hex); a file with another hash is an error.
        retries: MXNet's number of download attempts; must be >= 0 (unused).
        verify_ssl: MXNet's certificate check (unused: no request is made).

    Returns:
        The path of the file.

    Raises:
        NoNetworkError: the file is missing, its hash differs, or ``overwrite`` was
            asked; the message names the path to put the file at.
        ValueError: no file name can be made from ``url``, or ``retries < 0``.

    Example:
        >>> import os, tempfile
        >>> from gluon.utils import download, NoNetworkError
        >>> d = tempfile.mkdtemp()
        >>> try:
        ...     download("https://example.com/data/train.rec", path=d)
        ... except NoNetworkError as e:
        ...     print("put the file at" in str(e))
        True
        >>> open(os.path.join(d, "train.rec"), "w").close()
        >>> download("https://example.com/data/train.rec", path=d) == os.path.join(d, "train.rec")
        True
    """
    fname = _download_target(url, path)
    if not isinstance(retries, (int, numpy.integer)) or retries < 0:
        raise ValueError(f"download: retries must be an int >= 0, got {retries!r}")
    where = f"put the file at {os.path.abspath(fname)}"
    if sha1_hash:
        where += f" (its SHA-1 must be {sha1_hash})"
    if overwrite:
        raise NoNetworkError(f"download({url!r}, overwrite=True): kbackend does not download "
                             f"anything (no network at run time); {where} and call download "
                             "without overwrite=True")
    if os.path.isfile(fname):
        if not sha1_hash or check_sha1(fname, sha1_hash):
            return fname
        raise NoNetworkError(f"download({url!r}): {fname} exists but its SHA-1 is not "
                             f"{sha1_hash} (truncated or a different file), and kbackend "
                             f"does not download a fresh copy; {where}")
    raise NoNetworkError(f"download({url!r}): kbackend does not download anything (no "
                         f"network at run time); {where}")


def _get_repo_url() -> str:
    """The base URL of MXNet's Gluon data and model repository (``MXNET_GLUON_REPO``)."""
    repo_url = os.environ.get("MXNET_GLUON_REPO",
                              "https://apache-mxnet.s3-accelerate.dualstack.amazonaws.com/")
    return repo_url if repo_url.endswith("/") else repo_url + "/"


def _get_repo_file_url(namespace: str, filename: str) -> str:
    """The URL of ``filename`` in ``namespace`` of MXNet's Gluon repository."""
    return f"{_get_repo_url()}{namespace}/{filename}"


def _indent(s: str, num_spaces: int) -> str:
    """Indent every line of ``s`` but the first by ``num_spaces`` spaces."""
    lines = s.split("\n")
    if len(lines) == 1:
        return s
    return lines[0] + "\n" + "\n".join(" " * num_spaces + line for line in lines[1:])


def _brief_print_list(lst, limit: int = 7) -> str:
    """``'a', 'b', ..., 'z'``: a list shown with at most ``limit`` items."""
    lst = list(lst)
    if len(lst) > limit:
        return _brief_print_list(lst[:limit // 2], limit) + ", ..., " + \
            _brief_print_list(lst[-limit // 2:], limit)
    return ", ".join(f"'{x}'" for x in lst)


class HookHandle:
    """The handle returned when registering a hook; ``detach()`` removes the hook.

    Also a context manager that detaches on exit.
    """

    _ids = itertools.count()

    def __init__(self):
        self._hooks_dict_ref = None
        self._id = None

    def attach(self, hooks_dict: dict, hook) -> None:
        if self._hooks_dict_ref is not None:
            raise RuntimeError("HookHandle: the handle is already attached to a hook")
        self._id = next(HookHandle._ids)
        hooks_dict[self._id] = hook
        self._hooks_dict_ref = weakref.ref(hooks_dict)

    def detach(self) -> None:
        """Remove the hook (no effect if it was removed already)."""
        hooks = self._hooks_dict_ref() if self._hooks_dict_ref is not None else None
        if hooks is not None and self._id in hooks:
            del hooks[self._id]

    def __enter__(self):
        return self

    def __exit__(self, *exc) -> None:
        self.detach()
