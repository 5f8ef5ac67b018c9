"""MXNet 1.x's hand-written ``mxnet.nd`` functions (``python/mxnet/ndarray/``).

The creation functions take MXNet's positional order ``(shape, ctx, dtype)`` and its
``stype`` (only ``'default'``: every array here is dense); ``concatenate``,
``onehot_encode``, ``from_numpy``, the top-level ``uniform``/``normal`` draws and
``CachedOp`` (a Symbol run as one operator on NDArrays, with autograd) are MXNet's.
``core.nd`` imports them over the generated functions of the same names, so they exist
in ``core.nd`` only (``core.sym`` keeps its operators).
"""
from __future__ import annotations

import math
import weakref

import numpy

from ..context import as_context, current_context
from ..ndarray import NDArray, array
from ..ops import F as _F
from ..ops.namespace import namespace as _namespace
from ..ops.namespace import write_out

_GEN = _namespace("nd")  # the generated functions these wrap
# id -> weak reference of the NumPy arrays from_numpy made read-only (a second from_numpy
# of the same array shares its memory too, as in MXNet)
_SHARED: dict = {}

__all__ = ["CachedOp", "SliceChannel", "argmax_channel", "broadcast_axes", "broadcast_axis",
           "concatenate", "empty", "from_numpy", "full", "imdecode", "nanprod", "normal",
           "onehot_encode", "ones", "rcbrt", "reset_arrays", "shape_array", "size_array",
           "split", "split_v2", "to_dlpack_for_read", "to_dlpack_for_write", "uniform",
           "zeros"]


def check_stype(name: str, stype) -> None:
    """Check MXNet's ``stype`` argument: only dense storage (``'default'``) exists here.

    Raises:
        ValueError: naming ``name`` and the storage type, for ``'row_sparse'``, ``'csr'``
            or anything else but ``None``/``'default'``.
    """
    if stype not in (None, "default"):
        raise ValueError(f"{name}: stype={stype!r} is not supported; only dense arrays "
                         "(stype='default') exist here: use dense arrays (MXNet's sparse "
                         "storage has no counterpart)")


def _creation(name):
    gen = _GEN[name]

    def f(shape, ctx=None, dtype=None, stype=None, **kwargs):
        if stype in ("row_sparse", "csr") and name in ("zeros", "empty"):
            from ..sparse import create  # MXNet's nd.zeros/empty make sparse arrays too

            return create.zeros(stype, shape, ctx=ctx, dtype=dtype, **kwargs)
        check_stype(f"nd.{name}", stype)
        return gen(shape=shape, dtype=dtype, ctx=ctx, **kwargs)

    f.__name__ = f.__qualname__ = name
    f.__doc__ = (f"MXNet's ``nd.{name}(shape, ctx=None, dtype=None, stype=None, **kwargs)``: "
                 f"a new array of ``shape`` ({name}), float32 by default.\n\n"
                 "Args:\n    shape: an int or a tuple.\n    ctx: the context (default: "
                 "the current one).\n    dtype: the dtype.\n    stype: 'default' (or None); "
                 "zeros/empty also take 'row_sparse' and 'csr' (core.sparse), other "
                 "functions refuse them.\n    **kwargs: ``out=``.\n")
    return f


zeros = _creation("zeros")
ones = _creation("ones")
empty = _creation("empty")


def full(shape, val=None, ctx=None, dtype=numpy.float32, out=None, **kwargs) -> NDArray:
    """MXNet's ``nd.full``: an array of ``shape`` filled with ``val`` (float32 by default).

    Args:
        shape: an int or a tuple.
        val: the fill value (or ``fill_value=``, the NumPy name).
        ctx: the context (default: the current one).
        dtype: the dtype (MXNet's default float32, whatever ``val`` is).
        out: an array to fill instead.

    Example:
        >>> from core import nd
        >>> nd.full((2,), 3, None, "int32").asnumpy().tolist()
        [3, 3]
    """
    check_stype("nd.full", kwargs.pop("stype", None))
    if "fill_value" in kwargs:
        val = kwargs.pop("fill_value")
    if val is None:
        raise TypeError("nd.full: the fill value (val) is required")
    return _GEN["full"](shape=shape, fill_value=val, dtype=dtype, ctx=ctx, out=out, **kwargs)


def uniform(low=0.0, high=1.0, shape=None, dtype=None, ctx=None, out=None, **kwargs):
    """MXNet's top-level ``nd.uniform`` (``nd.random_uniform``): draws from
    ``[low, high)``."""
    return _GEN["random_uniform"](low, high, shape=shape, dtype=dtype, ctx=ctx, out=out,
                                  **kwargs)


def normal(loc=0.0, scale=1.0, shape=None, dtype=None, ctx=None, out=None, **kwargs):
    """MXNet's top-level ``nd.normal`` (``nd.random_normal``): Gaussian draws."""
    return _GEN["random_normal"](loc, scale, shape=shape, dtype=dtype, ctx=ctx, out=out,
                                 **kwargs)


def concatenate(arrays, axis: int = 0, always_copy: bool = True) -> NDArray:
    """MXNet's ``nd.concatenate``: join a list of arrays along ``axis``.

    Args:
        arrays: the arrays (same shape but along ``axis``).
        axis: the axis.
        always_copy: with False, a single array is returned as it is.

    Example:
        >>> from core import nd
        >>> nd.concatenate([nd.ones((1, 2)), nd.zeros((2, 2))]).shape
        (3, 2)
    """
    arrays = list(arrays)
    if not arrays:
        raise ValueError("concatenate: needs at least one array")
    if not all(isinstance(a, NDArray) for a in arrays):
        raise TypeError("concatenate: expects a list of NDArrays, got "
                        f"{[type(a).__name__ for a in arrays]}")
    if len(arrays) == 1 and not always_copy:
        return arrays[0]
    return _F.concatenate(*arrays, axis=axis)


def onehot_encode(indices: NDArray, out: NDArray) -> NDArray:
    """MXNet's ``nd.onehot_encode``: write the one-hot rows of ``indices`` into ``out``
    (shape ``(len(indices), classes)``) and return it.

    Example:
        >>> from core import nd
        >>> out = nd.zeros((2, 3))
        >>> nd.onehot_encode(nd.array([2, 0]), out).asnumpy().tolist()
        [[0.0, 0.0, 1.0], [1.0, 0.0, 0.0]]
    """
    if not isinstance(out, NDArray) or out.ndim != 2:
        raise ValueError(f"onehot_encode: out must be a 2-D NDArray (rows, classes), got "
                         f"{getattr(out, 'shape', type(out).__name__)}")
    if tuple(indices.shape) != (out.shape[0],):
        raise ValueError(f"onehot_encode: indices must have shape ({out.shape[0]},) for out of "
                         f"shape {tuple(out.shape)}, got {tuple(indices.shape)}")
    idx = indices.asnumpy()
    if idx.size and (idx.min() < 0 or idx.max() >= out.shape[1]):
        raise ValueError(f"onehot_encode: indices must be in [0, {out.shape[1]}), got "
                         f"min {idx.min()}, max {idx.max()}")
    return write_out("onehot_encode", out,
                     _F.one_hot(indices, depth=out.shape[1], dtype=out.dtype))


def from_numpy(ndarray: numpy.ndarray, zero_copy: bool = True) -> NDArray:
    """MXNet's ``nd.from_numpy``: an NDArray of a NumPy array (on the CPU).

    With ``zero_copy`` (the default) the NDArray shares the array's memory and, as in
    MXNet, the NumPy array becomes read-only (writes go through the NDArray); the array
    must then be C-contiguous. Without it the data is copied. The dtype is kept.

    Raises:
        ValueError: ``zero_copy`` with an array that is not C-contiguous, or read-only
            (other than by an earlier ``from_numpy``).

    Example:
        >>> import numpy
        >>> from core import nd
        >>> a = numpy.arange(3.0)
        >>> x = nd.from_numpy(a); x[1] = 7
        >>> a.tolist(), a.flags.writeable
        ([0.0, 7.0, 2.0], False)
    """
    if not isinstance(ndarray, numpy.ndarray):
        raise TypeError(f"from_numpy: expects a numpy.ndarray, got {type(ndarray).__name__}")
    if not zero_copy:
        return array(ndarray, ctx=as_context("cpu"), dtype=ndarray.dtype)
    if not ndarray.flags["C_CONTIGUOUS"]:
        raise ValueError(f"from_numpy: zero_copy needs a C-contiguous array (shape "
                         f"{ndarray.shape}, strides {ndarray.strides}); pass zero_copy=False "
                         "or numpy.ascontiguousarray(...)")
    ref = _SHARED.get(id(ndarray))
    ours = ref is not None and ref() is ndarray  # made read-only by an earlier from_numpy
    if not ndarray.flags.writeable and not ours:
        raise ValueError("from_numpy: zero_copy of a read-only NumPy array (shape "
                         f"{ndarray.shape}); pass zero_copy=False to copy it")
    ndarray.flags.writeable = True
    handle = ndarray.view()  # stays writable: the NDArray's handle on the memory
    ndarray.flags.writeable = False
    if not ours:
        key = id(ndarray)
        _SHARED[key] = weakref.ref(ndarray, lambda _r, k=key: _SHARED.pop(k, None))
    return NDArray._make(handle, as_context("cpu"), None)


def imdecode(str_img, clip_rect=(0, 0, 0, 0), out=None, index: int = 0, channels: int = 3,
             mean=None) -> NDArray:
    """MXNet's deprecated ``nd.imdecode``: decode an encoded image (bytes) into a float32
    ``(channels, height, width)`` array, channels in OpenCV's order (BGR; one grey channel
    with ``channels=1``), as MXNet 1.9's source does (its own ``nd.imdecode`` fails on
    every call: "Shape is unknown"). Decoded with Pillow; ``mx.image.imdecode`` is the
    maintained API (HWC, RGB).

    Args:
        str_img: the encoded image (``bytes``).
        clip_rect: ``(x0, y0, x1, y1)`` to crop to; all zeros keeps the whole image.
        out: a ``(c, h, w)`` array, or ``(n, c, h, w)`` written at ``index``, to fill.
        index: the slot of a 4-D ``out``.
        channels: 3 (BGR, or the first three of BGRA) or 1 (grey).
        mean: a ``(c, h, w)`` array subtracted from the result.

    Raises:
        ValueError: naming the problem (undecodable data, a crop outside the image, an
            ``out`` or ``mean`` of the wrong shape).
    """
    import io

    try:
        from PIL import Image
    except ImportError as e:  # pragma: no cover - Pillow is a dependency
        raise ImportError("imdecode: needs Pillow (pip install pillow)") from e
    if not isinstance(str_img, (bytes, bytearray, memoryview)):
        raise TypeError(f"imdecode: expects the encoded image as bytes, got "
                        f"{type(str_img).__name__}")
    try:
        img = Image.open(io.BytesIO(bytes(str_img)))
        img.load()
    except (OSError, ValueError, SyntaxError) as e:  # what Pillow raises for bad data
        raise ValueError(f"imdecode: cannot decode the image ({len(str_img)} bytes): {e}") \
            from None
    if channels == 1:
        pix = numpy.asarray(img.convert("L"))[:, :, None]
    elif channels == 3:
        mode = "RGBA" if img.mode in ("RGBA", "LA", "PA") else "RGB"
        if img.mode in ("L", "1", "I", "F", "I;16") and channels > 1:
            raise ValueError(f"imdecode: the image has 1 channel, {channels} requested")
        pix = numpy.asarray(img.convert(mode))
        pix = pix[:, :, [2, 1, 0]]  # OpenCV's BGR order
    else:
        raise ValueError(f"imdecode: channels must be 1 or 3, got {channels}")
    x0, y0, x1, y1 = (int(v) for v in clip_rect)
    if y1 - y0 == 0:
        x0, y0, x1, y1 = 0, 0, pix.shape[1], pix.shape[0]
    if not (0 <= x0 < x1 <= pix.shape[1] and 0 <= y0 < y1 <= pix.shape[0]):
        raise ValueError(f"imdecode: clip_rect {tuple(clip_rect)} is outside the image of "
                         f"{pix.shape[1]}x{pix.shape[0]} pixels")
    chw = numpy.ascontiguousarray(pix[y0:y1, x0:x1].transpose(2, 0, 1))
    dtype = numpy.float32 if mean is None else mean.dtype
    res = chw.astype(dtype)
    if mean is not None:
        if tuple(mean.shape) != res.shape:
            raise ValueError(f"imdecode: mean must have shape {res.shape}, got "
                             f"{tuple(mean.shape)}")
        res = res - mean.asnumpy()
    if out is None:
        return array(res, ctx=as_context("cpu"), dtype=res.dtype)
    if out.ndim == 3:
        return write_out("imdecode", out, array(res, ctx=out.context, dtype=out.dtype))
    if out.ndim != 4 or tuple(out.shape[1:]) != res.shape:
        raise ValueError(f"imdecode: out must have shape {res.shape} or (n,) + that, got "
                         f"{tuple(out.shape)}")
    out[index] = array(res, ctx=out.context, dtype=out.dtype)
    return out


# ------------------------------------------------------------------ small legacy operators
def reset_arrays(*data: NDArray, num_arrays: int | None = None) -> None:
    """Set every array to zero in place (MXNet's ``reset_arrays``, which ``zero_grad`` uses).

    Args:
        *data: the arrays.
        num_arrays: how many there are (MXNet's argument; checked when given).

    Example:
        >>> from core import nd
        >>> a, b = nd.ones(2), nd.ones((1, 2))
        >>> nd.reset_arrays(a, b, num_arrays=2)
        >>> a.asnumpy().tolist(), b.asnumpy().tolist()
        ([0.0, 0.0], [[0.0, 0.0]])
    """
    if num_arrays is not None and num_arrays != len(data):
        raise ValueError(f"reset_arrays: num_arrays={num_arrays} but {len(data)} arrays given")
    for a in data:
        if not isinstance(a, NDArray):
            raise TypeError(f"reset_arrays: expects NDArrays, got {type(a).__name__}")
        a[...] = 0


def argmax_channel(data, out=None) -> NDArray:
    """MXNet's ``argmax_channel``: the float32 argmax along axis 1.

    Example:
        >>> from core import nd
        >>> nd.argmax_channel(nd.array([[0, 1, 2], [5, 4, 3]])).asnumpy().tolist()
        [2.0, 0.0]
    """
    return _GEN["argmax"](data, axis=1, out=out)


def shape_array(data) -> NDArray:
    """MXNet's ``shape_array``: the shape as an int64 array."""
    return array(numpy.array(data.shape, dtype=numpy.int64), ctx=data.context,
                 dtype=numpy.int64)


def size_array(data) -> NDArray:
    """MXNet's ``size_array``: the number of elements as an int64 array of one element."""
    return array(numpy.array([data.size], dtype=numpy.int64), ctx=data.context,
                 dtype=numpy.int64)


def split(data, *args, **kwargs):
    """MXNet's ``split`` (``SliceChannel``): a list of arrays (the array itself for one
    output).

    Example:
        >>> from core import nd
        >>> [a.shape for a in nd.split(nd.ones((2, 6)), num_outputs=3)]
        [(2, 2), (2, 2), (2, 2)]
    """
    out = _GEN["split"](data, *args, **kwargs)
    if isinstance(out, tuple):
        return out[0] if len(out) == 1 else list(out)
    return out


SliceChannel = split


def split_v2(ary, indices_or_sections, axis: int = 0, squeeze_axis: bool = False):
    """MXNet's ``split_v2``: NumPy's ``split`` (equal sections, or the split indices);
    a list of arrays."""
    out = _GEN["split"](ary, indices_or_sections=indices_or_sections, axis=axis,
                        squeeze_axis=squeeze_axis)
    return list(out) if isinstance(out, (list, tuple)) else [out]


def broadcast_axis(data, axis=(), size=(), out=None) -> NDArray:
    """MXNet's ``broadcast_axis``/``broadcast_axes``: broadcast the length-1 axes ``axis``
    to ``size``.

    Example:
        >>> from core import nd
        >>> nd.broadcast_axis(nd.ones((2, 1)), axis=1, size=3).shape
        (2, 3)
    """
    axes = (axis,) if isinstance(axis, int) else tuple(axis)
    sizes = (size,) if isinstance(size, int) else tuple(size)
    if len(axes) != len(sizes):
        raise ValueError(f"broadcast_axis: {len(axes)} axes but {len(sizes)} sizes "
                         f"(axis={axis}, size={size})")
    shape = list(data.shape)
    for a, n in zip(axes, sizes):
        if not -len(shape) <= a < len(shape) or shape[a] != 1:
            raise ValueError(f"broadcast_axis: axis {a} of shape {tuple(data.shape)} must "
                             "exist and have length 1")
        shape[a] = int(n)
    res = _GEN["broadcast_to"](data, shape=tuple(shape))
    return res if out is None else write_out("broadcast_axis", out, res)


broadcast_axes = broadcast_axis


def nanprod(data, axis=None, keepdims: bool = False, exclude: bool = False, out=None):
    """MXNet's ``nanprod``: the product with NaNs counted as 1."""
    clean = _GEN["where"](_GEN["isnan"](data), _GEN["ones_like"](data), data)
    return _GEN["prod"](clean, axis=axis, keepdims=keepdims, exclude=exclude, out=out)


def rcbrt(data, out=None) -> NDArray:
    """MXNet's ``rcbrt``: ``1 / cbrt(data)``."""
    res = _GEN["reciprocal"](_GEN["cbrt"](data))
    return res if out is None else write_out("rcbrt", out, res)


def to_dlpack_for_read(data: NDArray):
    """MXNet's ``nd.to_dlpack_for_read(x)`` (``x.to_dlpack_for_read()``)."""
    return data.to_dlpack_for_read()


def to_dlpack_for_write(data: NDArray):
    """MXNet's ``nd.to_dlpack_for_write(x)`` (``x.to_dlpack_for_write()``)."""
    return data.to_dlpack_for_write()


# MXNet's fluent methods (``x.degrees()`` is ``nd.degrees(x)``) that NDArray lacks
_FLUENT = ("argmax_channel", "broadcast_axes", "degrees", "nanprod", "pad", "radians",
           "rcbrt", "reshape_like", "shape_array", "size_array", "slice_like", "softmin",
           "split_v2")


def _fluent_method(name):
    def method(self, *args, **kwargs):
        from .. import nd as _nd

        return getattr(_nd, name)(self, *args, **kwargs)

    method.__name__ = name
    method.__doc__ = f"Same as ``nd.{name}`` with this array as its first argument."
    return method


for _name in _FLUENT:
    if not hasattr(NDArray, _name):
        setattr(NDArray, _name, _fluent_method(_name))
NDArray.split = _fluent_method("split")  # a list, as MXNet's (the operator gives a tuple)


class CachedOp:
    """MXNet's ``nd.CachedOp(sym, flags=())``: a Symbol run as one operator on NDArrays.

    Call it with one NDArray per ``sym.list_inputs()`` (arguments, then auxiliary
    states, in that order); it returns the output, or the list of outputs, and writes
    auxiliary-state updates (BatchNorm's moving statistics) in place. It is traced once
    per input shapes, dtypes, context and training mode into a
    ``core.symbol.cached_op.CachedOp``, so under ``autograd.record()`` it is one node
    of the tape and gradients flow to its inputs. ``flags`` (MXNet's
    ``static_alloc``, ...) are accepted and kept.

    Example:
        >>> from core import nd, sym
        >>> op = nd.CachedOp(sym.var("x") * 2 + 1)
        >>> op(nd.array([1.0, 2.0])).asnumpy().tolist()
        [3.0, 5.0]
    """

    def __init__(self, sym, flags=()):
        self.sym = sym
        self.flags = dict(flags) if flags else {}
        self._inputs = sym.list_inputs()
        self._ops: dict = {}

    def _compiled(self, arrays, ctx, training):
        from ..symbol import Tracer
        from ..symbol.cached_op import CachedOp as _Cached
        from ..symbol.graph import evaluate

        key = (tuple((tuple(a.shape), a.dtype) for a in arrays), ctx, training)
        op = self._ops.get(key)
        if op is None:
            aux = set(self.sym.list_auxiliary_states())
            with Tracer() as t:
                values = {}
                bound = {}
                for name, a in zip(self._inputs, arrays):
                    if name in aux:
                        t.bind(a, name)
                        bound[name] = a
                        values[name] = a
                    else:
                        values[name] = t.variable(name, a.shape, a.dtype, ctx)
                outs, updates = evaluate(self.sym.graph, values, ctx, is_train=training)
                for name, new in updates.items():
                    if name in bound:
                        bound[name][...] = new
                graph = t.graph(outs)
            op = self._ops[key] = _Cached(graph, ctx)
        return op

    def __call__(self, *args, out=None, **kwargs):
        from .. import autograd

        kwargs.pop("default_ctx", None)
        if kwargs:
            raise TypeError(f"CachedOp: unexpected keyword arguments {sorted(kwargs)}")
        if len(args) != len(self._inputs):
            raise ValueError(f"CachedOp: expects {len(self._inputs)} NDArrays "
                             f"({', '.join(self._inputs)}), got {len(args)}")
        for name, a in zip(self._inputs, args):
            if not isinstance(a, NDArray):
                raise TypeError(f"CachedOp: input {name!r} must be an NDArray, got "
                                f"{type(a).__name__}")
        ctx = args[0].context if args else current_context()
        op = self._compiled(args, ctx, autograd.is_training())
        res = op(dict(zip(self._inputs, args)))
        if out is not None:
            outs = list(out) if isinstance(out, (list, tuple)) else [out]
            if len(outs) != len(res):
                raise ValueError(f"CachedOp: out= has {len(outs)} arrays for {len(res)} "
                                 "outputs")
            res = [write_out("CachedOp", o, r) for o, r in zip(outs, res)]
        return res[0] if len(res) == 1 else res
