"""Keras backend ``numpy``: the functions behind ``keras.ops.numpy``, on ``core.np``.

Result dtypes follow Keras' rules (``keras.src.backend.common.dtypes.result_type``,
where Python scalars are weakly typed); the computation itself is core's. Every
function of Keras' interface is here.
"""
from __future__ import annotations

import builtins as _builtins
import itertools

import numpy as _np
from keras.src.backend import config
from keras.src.backend.common import dtypes, standardize_dtype

from core import nd as _nd
from core import np as cnp
from kbackend.core import _float, _numpy_dtype, cast, convert_to_tensor
from kbackend.core import convert_to_numpy as _to_numpy

_WEAK = (bool, int, float)


def _dtype_of(x):
    return type(x) if isinstance(x, _WEAK) else x.dtype


def _binary(x1, x2):
    """Both operands as tensors of Keras' result dtype."""
    if not isinstance(x1, _WEAK):
        x1 = convert_to_tensor(x1)
    if not isinstance(x2, _WEAK):
        x2 = convert_to_tensor(x2)
    dtype = dtypes.result_type(_dtype_of(x1), _dtype_of(x2))
    return convert_to_tensor(x1, dtype), convert_to_tensor(x2, dtype)


def _arith(name):
    op = getattr(cnp, name)

    def fn(x1, x2):
        x1, x2 = _binary(x1, x2)
        return op(x1, x2)

    fn.__name__ = name
    return fn


def _compare(name):
    op = getattr(cnp, name)

    def fn(x1, x2):
        x1, x2 = _binary(x1, x2)
        return op(x1, x2)

    fn.__name__ = name
    return fn


def _float_unary(name, np_name=None):
    """Unary functions whose result is floating point (ints become floatx)."""
    op = getattr(cnp, np_name or name)

    def fn(x):
        return op(_float(x))

    fn.__name__ = name
    return fn


def _same_unary(name, np_name=None):
    """Unary functions that keep the input's dtype."""
    op = getattr(cnp, np_name or name)

    def fn(x):
        return op(convert_to_tensor(x))

    fn.__name__ = name
    return fn


add = _arith("add")
subtract = _arith("subtract")
multiply = _arith("multiply")
maximum = _arith("maximum")
minimum = _arith("minimum")
mod = _arith("mod")
floor_divide = _arith("floor_divide")


def _float_binary(name):
    """Binary functions computed in floating point: ``result_type(x1, x2, float)``."""
    op = getattr(cnp, name)

    def fn(x1, x2):
        x1 = convert_to_tensor(x1)
        x2 = convert_to_tensor(x2)
        dtype = dtypes.result_type(x1.dtype, x2.dtype, float)
        return op(cast(x1, dtype), cast(x2, dtype))

    fn.__name__ = name
    return fn


logaddexp = _float_binary("logaddexp")
arctan2 = _float_binary("arctan2")


def hypot(x1, x2):
    x1 = convert_to_tensor(x1)
    x2 = convert_to_tensor(x2)
    dtype = dtypes.result_type(x1.dtype, x2.dtype)
    if dtype == "int64":
        dtype = "float64"
    elif "int" in dtype or dtype == "bool":
        dtype = config.floatx()
    return cnp.hypot(cast(x1, dtype), cast(x2, dtype))

equal = _compare("equal")
not_equal = _compare("not_equal")
less = _compare("less")
less_equal = _compare("less_equal")
greater = _compare("greater")
greater_equal = _compare("greater_equal")

exp = _float_unary("exp")
expm1 = _float_unary("expm1")
log = _float_unary("log")
log1p = _float_unary("log1p")
log2 = _float_unary("log2")
log10 = _float_unary("log10")
sqrt = _float_unary("sqrt")
sin = _float_unary("sin")
cos = _float_unary("cos")
tan = _float_unary("tan")
sinh = _float_unary("sinh")
cosh = _float_unary("cosh")
tanh = _float_unary("tanh")
arcsin = _float_unary("arcsin")
arccos = _float_unary("arccos")
arctan = _float_unary("arctan")
arcsinh = _float_unary("arcsinh")
arccosh = _float_unary("arccosh")
arctanh = _float_unary("arctanh")
reciprocal = _float_unary("reciprocal")
cbrt = _float_unary("cbrt")

negative = _same_unary("negative")


def square(x):
    x = convert_to_tensor(x)
    if standardize_dtype(x.dtype) == "bool":
        x = cast(x, "int32")
    return cnp.square(x)

absolute = _same_unary("absolute")
abs = _same_unary("abs")
sign = _same_unary("sign")


def _rounding(name):
    """floor/ceil: integers and bools become floating point (int64: floatx)."""
    op = getattr(cnp, name)

    def fn(x):
        x = convert_to_tensor(x)
        if standardize_dtype(x.dtype) == "int64":
            dtype = config.floatx()
        else:
            dtype = dtypes.result_type(x.dtype, float)
        return op(cast(x, dtype))

    fn.__name__ = name
    return fn


floor = _rounding("floor")
ceil = _rounding("ceil")


def trunc(x):
    x = convert_to_tensor(x)
    dtype = standardize_dtype(x.dtype)
    if "int" in dtype or dtype == "bool":
        return x
    return cnp.trunc(x)

copy = _same_unary("copy")
ravel = _same_unary("ravel")
isnan = _same_unary("isnan")
isinf = _same_unary("isinf")
isfinite = _same_unary("isfinite")
logical_not = _same_unary("logical_not")


def _logical(name):
    op = getattr(cnp, name)

    def fn(x1, x2):
        return op(convert_to_tensor(x1, "bool"), convert_to_tensor(x2, "bool"))

    fn.__name__ = name
    return fn


logical_and = _logical("logical_and")
logical_or = _logical("logical_or")
logical_xor = _logical("logical_xor")


def divide(x1, x2):
    if not isinstance(x1, _WEAK):
        x1 = convert_to_tensor(x1)
    if not isinstance(x2, _WEAK):
        x2 = convert_to_tensor(x2)
    dtype = dtypes.result_type(_dtype_of(x1), _dtype_of(x2), float)
    return cnp.true_divide(convert_to_tensor(x1, dtype), convert_to_tensor(x2, dtype))


true_divide = divide


def power(x1, x2):
    x1, x2 = _binary(x1, x2)
    return cnp.power(x1, x2)


def matmul(x1, x2):
    x1 = convert_to_tensor(x1)
    x2 = convert_to_tensor(x2)
    if standardize_dtype(x1.dtype) == "int8" and standardize_dtype(x2.dtype) == "int8":
        # int8 x int8 accumulates into int32 (as JAX does).
        return cnp.matmul(cast(x1, "int32"), cast(x2, "int32"))
    x1, x2 = _binary(x1, x2)
    return cnp.matmul(x1, x2)


def dot(x1, x2):
    x1, x2 = _binary(x1, x2)
    return cnp.dot(x1, x2)


def _creation_dtype(dtype):
    return standardize_dtype(dtype or config.floatx())


def zeros(shape, dtype=None):
    return convert_to_tensor(cnp.zeros(shape), _creation_dtype(dtype))


def ones(shape, dtype=None):
    return convert_to_tensor(cnp.ones(shape), _creation_dtype(dtype))


def full(shape, fill_value, dtype=None):
    # As Keras' other backends: floatx unless a dtype is given.
    fill_value = convert_to_tensor(fill_value, _creation_dtype(dtype))
    return cnp.broadcast_to(fill_value, tuple(shape)).copy()


def zeros_like(x, dtype=None):
    x = convert_to_tensor(x)
    return zeros(x.shape, dtype or x.dtype)


def ones_like(x, dtype=None):
    x = convert_to_tensor(x)
    return ones(x.shape, dtype or x.dtype)


def full_like(x, fill_value, dtype=None):
    x = convert_to_tensor(x)
    return full(x.shape, fill_value, dtype or x.dtype)


def eye(N, M=None, k=0, dtype=None):
    return convert_to_tensor(cnp.eye(N, M, k), _creation_dtype(dtype))


def identity(n, dtype=None):
    return eye(n, dtype=dtype)


def arange(start, stop=None, step=None, dtype=None):
    if dtype is None:
        values = [v for v in (start, stop, step) if v is not None]
        dtype = dtypes.result_type(*[_dtype_of(v) for v in values])
    if stop is None:
        start, stop = 0, start
    return convert_to_tensor(cnp.arange(start, stop, 1 if step is None else step),
                             standardize_dtype(dtype))


def _reduce_float_dtype(x):
    dtype = standardize_dtype(x.dtype)
    if "int" in dtype or dtype == "bool":
        return dtypes.result_type(x.dtype, "float32")
    return dtype


def mean(x, axis=None, keepdims=False):
    x = convert_to_tensor(x)
    dtype = _reduce_float_dtype(x)
    x = cast(x, dtype)
    if dtype in ("float16", "bfloat16"):
        # Accumulate in float32 (as NumPy does) so large half values do not overflow.
        out = cnp.mean(cast(x, "float32"), axis=_axis(axis), keepdims=keepdims)
        return cast(out, dtype)
    return cnp.mean(x, axis=_axis(axis), keepdims=keepdims)


# Keras' (JAX's) accumulation dtypes for sum and prod: small integers widen to 32 bits.
_ACC_DTYPE = {"bool": "int32", "int8": "int32", "int16": "int32", "uint8": "uint32",
              "uint16": "uint32"}


def sum(x, axis=None, keepdims=False):
    x = convert_to_tensor(x)
    dtype = standardize_dtype(x.dtype)
    dtype = _ACC_DTYPE.get(dtype, dtype)
    return cnp.sum(cast(x, dtype), axis=_axis(axis), keepdims=keepdims,
                   dtype=_numpy_dtype(dtype))


def prod(x, axis=None, keepdims=False, dtype=None):
    x = convert_to_tensor(x)
    if dtype is None:
        dtype = standardize_dtype(x.dtype)
        dtype = _ACC_DTYPE.get(dtype, dtype)
    else:
        dtype = standardize_dtype(dtype)
    return cnp.prod(cast(x, dtype), axis=_axis(axis), keepdims=keepdims,
                    dtype=_numpy_dtype(dtype))


def _extreme(x, axis, keepdims, initial, reduce_fn, combine_fn):
    """max/min with NumPy's ``initial`` (which also defines the result of empty axes)."""
    x = convert_to_tensor(x)
    axis = _axis(axis)
    if initial is not None:
        axes = range(x.ndim) if axis is None else (
            axis if isinstance(axis, tuple) else (axis,))
        if _builtins.any(x.shape[a] == 0 for a in axes):
            shape = tuple(1 if a % x.ndim in [b % x.ndim for b in axes] else d
                          for a, d in enumerate(x.shape))
            if not keepdims:
                shape = tuple(d for a, d in enumerate(x.shape)
                              if a % x.ndim not in [b % x.ndim for b in axes])
            return full(shape, initial, standardize_dtype(x.dtype))
    out = reduce_fn(x, axis=axis, keepdims=keepdims)
    if initial is None:
        return out
    # The result keeps x's dtype (``initial`` is cast to it), as in NumPy and JAX.
    return combine_fn(out, convert_to_tensor(initial, standardize_dtype(x.dtype)))


def max(x, axis=None, keepdims=False, initial=None):
    return _extreme(x, axis, keepdims, initial, cnp.max, cnp.maximum)


def min(x, axis=None, keepdims=False, initial=None):
    return _extreme(x, axis, keepdims, initial, cnp.min, cnp.minimum)


def amax(x, axis=None, keepdims=False):
    return max(x, axis=axis, keepdims=keepdims)


def amin(x, axis=None, keepdims=False):
    return min(x, axis=axis, keepdims=keepdims)


def var(x, axis=None, keepdims=False):
    x = convert_to_tensor(x)
    return cnp.var(cast(x, _reduce_float_dtype(x)), axis=axis, keepdims=keepdims)


def std(x, axis=None, keepdims=False):
    x = convert_to_tensor(x)
    return cnp.std(cast(x, _reduce_float_dtype(x)), axis=axis, keepdims=keepdims)


def all(x, axis=None, keepdims=False):
    return cnp.all(convert_to_tensor(x, "bool"), axis=axis, keepdims=keepdims)


def any(x, axis=None, keepdims=False):
    return cnp.any(convert_to_tensor(x, "bool"), axis=axis, keepdims=keepdims)


def argmax(x, axis=None, keepdims=False):
    out = cnp.argmax(convert_to_tensor(x), axis=axis, keepdims=keepdims)
    return cast(out, "int32")


def argmin(x, axis=None, keepdims=False):
    out = cnp.argmin(convert_to_tensor(x), axis=axis, keepdims=keepdims)
    return cast(out, "int32")


def argsort(x, axis=-1):
    x = convert_to_tensor(x)
    if x.ndim == 0:
        return convert_to_tensor(0, "int32")
    return cast(cnp.argsort(x, axis=axis), "int32")


def sort(x, axis=-1):
    return cnp.sort(convert_to_tensor(x), axis=axis)


def _cum_dtype(x, dtype):
    """Keras' cumsum/cumprod dtype: the requested one or the input's (bool: int32)."""
    dtype = standardize_dtype(dtype or x.dtype)
    return "int32" if dtype == "bool" else dtype


def cumsum(x, axis=None, dtype=None):
    x = convert_to_tensor(x)
    return cnp.cumsum(x, axis=axis, dtype=_numpy_dtype(_cum_dtype(x, dtype)))


def cumprod(x, axis=None, dtype=None):
    x = convert_to_tensor(x)
    return cnp.cumprod(x, axis=axis, dtype=_numpy_dtype(_cum_dtype(x, dtype)))


def reshape(x, newshape):
    return cnp.reshape(convert_to_tensor(x), newshape)


def transpose(x, axes=None):
    return cnp.transpose(convert_to_tensor(x), axes)


def expand_dims(x, axis):
    x = convert_to_tensor(x)
    if isinstance(axis, (list, tuple)):
        for a in sorted(a % (x.ndim + len(axis)) for a in axis):
            x = cnp.expand_dims(x, a)
        return x
    return cnp.expand_dims(x, axis)


def squeeze(x, axis=None):
    return cnp.squeeze(convert_to_tensor(x), axis=axis)


def moveaxis(x, source, destination):
    return cnp.moveaxis(convert_to_tensor(x), source, destination)


def swapaxes(x, axis1, axis2):
    return cnp.swapaxes(convert_to_tensor(x), axis1, axis2)


def broadcast_to(x, shape):
    return cnp.broadcast_to(convert_to_tensor(x), tuple(shape))


def _same_dtype(xs):
    xs = [convert_to_tensor(x) for x in xs]
    dtype = dtypes.result_type(*[x.dtype for x in xs])
    return [cast(x, dtype) for x in xs]


def concatenate(xs, axis=0):
    return cnp.concatenate(_same_dtype(xs), axis=axis)


def stack(x, axis=0):
    return cnp.stack(_same_dtype(x), axis=axis)


def where(condition, x1=None, x2=None):
    if x1 is None and x2 is None:
        return nonzero(condition)
    if x1 is None or x2 is None:
        raise ValueError("`x1` and `x2` either both should be `None` or both should "
                         f"have non-None value. Received: x1={x1}, x2={x2}")
    x1, x2 = _binary(x1, x2)
    return cnp.where(convert_to_tensor(condition, "bool"), x1, x2)


def clip(x, x_min, x_max):
    x = convert_to_tensor(x)
    if standardize_dtype(x.dtype) == "bool":
        x = cast(x, "int32")
    if _is_scalar_bound(x_min) and _is_scalar_bound(x_max):
        return cnp.clip(x, x_min, x_max)
    # Tensor bounds (Keras' relu max_value, the quantizers): broadcast, in x's dtype.
    dt = standardize_dtype(x.dtype)
    if x_min is not None:
        x = cnp.maximum(x, cast(convert_to_tensor(x_min), dt))
    if x_max is not None:
        x = cnp.minimum(x, cast(convert_to_tensor(x_max), dt))
    return x


def _is_scalar_bound(b) -> bool:
    return b is None or isinstance(b, (bool, int, float, _np.generic))


def take(x, indices, axis=None):
    return cnp.take(convert_to_tensor(x), convert_to_tensor(indices), axis=axis)


def repeat(x, repeats, axis=None):
    return cnp.repeat(convert_to_tensor(x), repeats, axis=axis)


def tile(x, repeats):
    return cnp.tile(convert_to_tensor(x), repeats)


def flip(x, axis=None):
    return cnp.flip(convert_to_tensor(x), axis=axis)


def round(x, decimals=0):
    return cnp.round(convert_to_tensor(x), decimals)


def split(x, indices_or_sections, axis=0):
    return list(cnp.split(convert_to_tensor(x), indices_or_sections, axis=axis))


def tril(x, k=0):
    return cnp.tril(convert_to_tensor(x), k)


def triu(x, k=0):
    return cnp.triu(convert_to_tensor(x), k)


def outer(x1, x2):
    x1, x2 = _binary(x1, x2)
    return cnp.outer(x1, x2)


def tensordot(x1, x2, axes=2):
    x1, x2 = _binary(x1, x2)
    return cnp.tensordot(x1, x2, axes=axes)


def einsum(subscripts, *operands, **kwargs):
    operands = [convert_to_tensor(x) for x in operands]
    if {standardize_dtype(x.dtype) for x in operands} == {"int8"}:
        # Only-int8 operands accumulate into int32 (as JAX does).
        operands = [cast(x, "int32") for x in operands]
    operands = _same_dtype(operands)
    return cnp.einsum(subscripts, *operands, **kwargs)


def size(x):
    return convert_to_tensor(x).size


def ndim(x):
    return convert_to_tensor(x).ndim


def array(x, dtype=None):
    return convert_to_tensor(x, dtype=dtype)


# ---------------------------------------------------------------- more of keras.ops.numpy


def _axis(axis):
    return tuple(axis) if isinstance(axis, list) else axis


def pad(x, pad_width, mode="constant", constant_values=None):
    x = convert_to_tensor(x)
    width = _np.broadcast_to(_np.asarray(pad_width, dtype="int64"), (x.ndim, 2))
    width = tuple((int(a), int(b)) for a, b in width)
    if constant_values is not None:
        if mode != "constant":
            raise ValueError("Argument `constant_values` can only be provided when "
                             f"`mode == 'constant'`. Received: mode={mode}")
        return cnp.pad(x, width, mode="constant", constant_values=constant_values)
    return cnp.pad(x, width, mode=mode)


def linspace(start, stop, num=50, endpoint=True, retstep=False, dtype=None, axis=0):
    out_dtype = standardize_dtype(dtype) if dtype is not None else dtypes.result_type(
        _dtype_of(start) if not isinstance(start, _WEAK) else type(start),
        _dtype_of(stop) if not isinstance(stop, _WEAK) else type(stop), float)
    start = convert_to_tensor(start, "float64")
    stop = convert_to_tensor(stop, "float64")
    num = int(num)
    div = (num - 1) if endpoint else num
    step = (stop - start) / float(div if div > 0 else 1)
    ramp = convert_to_tensor(_np.arange(num, dtype="float64"))
    shape = (num,) + (1,) * start.ndim
    out = cnp.reshape(ramp, shape) * step + start
    if endpoint and num > 1:
        out = cnp.concatenate([out[:-1], cnp.expand_dims(stop + out[0] * 0, 0)], axis=0)
    if axis != 0:
        out = cnp.moveaxis(out, 0, axis)
    if "int" in out_dtype:
        out = cnp.floor(out)
    out = cast(out, out_dtype)
    if retstep:
        return out, cast(step, out_dtype)
    return out


def logspace(start, stop, num=50, endpoint=True, base=10, dtype=None, axis=0):
    dtype = standardize_dtype(dtype) if dtype is not None else dtypes.result_type(
        type(start) if isinstance(start, _WEAK) else convert_to_tensor(start).dtype,
        type(stop) if isinstance(stop, _WEAK) else convert_to_tensor(stop).dtype, float)
    exps = linspace(start, stop, num, endpoint=endpoint, dtype="float64", axis=axis)
    return cast(cnp.power(convert_to_tensor(float(base), "float64"), exps), dtype)


def geomspace(start, stop, num=50, endpoint=True, dtype=None, axis=0):
    dtype = standardize_dtype(dtype) if dtype is not None else dtypes.result_type(
        type(start) if isinstance(start, _WEAK) else convert_to_tensor(start).dtype,
        type(stop) if isinstance(stop, _WEAK) else convert_to_tensor(stop).dtype, float)
    s = _np.asarray(_to_numpy(convert_to_tensor(start)), "float64")
    e = _np.asarray(_to_numpy(convert_to_tensor(stop)), "float64")
    return convert_to_tensor(_np.geomspace(s, e, num, endpoint=endpoint, axis=axis), dtype)


def diag(x, k=0):
    x = convert_to_tensor(x)
    if x.ndim not in (1, 2):
        raise ValueError(f"diag: input must be 1-D or 2-D, got shape {x.shape}")
    return cnp.diag(x, k=k)


def diagflat(x, k=0):
    return diag(ravel(x), k=k)


def diagonal(x, offset=0, axis1=0, axis2=1):
    x = convert_to_tensor(x)
    return cnp.diag(x, k=offset, axis1=axis1, axis2=axis2)


def trace(x, offset=0, axis1=0, axis2=1):
    x = convert_to_tensor(x)
    dtype = standardize_dtype(x.dtype)
    if dtype == "bool" or dtype in ("int8", "int16"):
        x = cast(x, "int32")
    elif dtype in ("uint8", "uint16"):
        x = cast(x, "uint32")
    d = diagonal(x, offset, axis1, axis2)
    return cnp.sum(d, axis=-1, dtype=d.dtype)


def roll(x, shift, axis=None):
    x = convert_to_tensor(x)
    return cnp.roll(x, shift=shift, axis=_axis(axis))


def nonzero(x):
    x = convert_to_tensor(x)
    return tuple(convert_to_tensor(i, "int32") for i in _np.nonzero(_to_numpy(x)))


def take_along_axis(x, indices, axis=None):
    x = convert_to_tensor(x)
    idx = _np.asarray(_to_numpy(convert_to_tensor(indices))).astype("int64")
    if axis is None:
        x = cnp.reshape(x, (-1,))
        idx = idx.reshape(-1)
        axis = 0
    axis = axis % x.ndim
    xshape = list(x.shape)
    # Broadcast all but ``axis`` (as Keras' other backends do).
    ishape = list(idx.shape)
    bshape = list(_np.broadcast_shapes(
        tuple(xshape[:axis] + [1] + xshape[axis + 1:]),
        tuple(ishape[:axis] + [1] + ishape[axis + 1:])))
    xb = bshape.copy(); xb[axis] = xshape[axis]
    ib = bshape.copy(); ib[axis] = ishape[axis]
    if tuple(xb) != tuple(xshape):
        x = cnp.broadcast_to(x, tuple(xb))
    idx = _np.broadcast_to(idx, tuple(ib))
    idx = _np.where(idx < 0, idx + xshape[axis], idx)
    grids = list(_np.indices(idx.shape, sparse=False))
    grids[axis] = idx
    full = convert_to_tensor(_np.stack(grids).astype("int32"))
    return _nd.gather_nd(x, full)


def _bitwise(name, op):
    def fn(x, y):
        x, y = _binary(x, y)
        return op(x, y)

    fn.__name__ = name
    return fn


bitwise_and = _bitwise("bitwise_and", cnp.bitwise_and)
bitwise_or = _bitwise("bitwise_or", cnp.bitwise_or)
bitwise_xor = _bitwise("bitwise_xor", cnp.bitwise_xor)


def bitwise_invert(x):
    return cnp.bitwise_not(convert_to_tensor(x))


bitwise_not = bitwise_invert


def _shift(np_op):
    def fn(x, y):
        x, y = _binary(x, y)
        dtype = standardize_dtype(x.dtype)
        return convert_to_tensor(np_op(_to_numpy(x), _to_numpy(y)), dtype)

    return fn


bitwise_left_shift = left_shift = _shift(_np.left_shift)
bitwise_right_shift = right_shift = _shift(_np.right_shift)


def _stack_like(xs, fn):
    xs = [convert_to_tensor(x) for x in xs]
    dtype = dtypes.result_type(*[x.dtype for x in xs])
    return fn([cast(x, dtype) for x in xs])


def hstack(xs):
    return _stack_like(xs, lambda xs: cnp.concatenate(
        xs, axis=0 if xs[0].ndim == 1 else 1))


def vstack(xs):
    return _stack_like(xs, lambda xs: cnp.concatenate(
        [cnp.reshape(x, (1, -1)) if x.ndim < 2 else x for x in xs], axis=0))


def dstack(xs):
    def fix(x):
        if x.ndim == 0:
            return cnp.reshape(x, (1, 1, 1))
        if x.ndim == 1:
            return cnp.reshape(x, (1, -1, 1))
        if x.ndim == 2:
            return cnp.expand_dims(x, -1)
        return x
    return _stack_like(xs, lambda xs: cnp.concatenate([fix(x) for x in xs], axis=2))


def append(x1, x2, axis=None):
    x1, x2 = _binary(x1, x2)
    if axis is None:
        return cnp.concatenate([cnp.reshape(x1, (-1,)), cnp.reshape(x2, (-1,))], axis=0)
    return cnp.concatenate([x1, x2], axis=axis)


def array_split(x, indices_or_sections, axis=0):
    x = convert_to_tensor(x)
    if isinstance(indices_or_sections, int):
        n, total = indices_or_sections, x.shape[axis]
        q, r = divmod(total, n)
        sizes = [q + 1] * r + [q] * (n - r)
        bounds = list(_np.cumsum(sizes)[:-1])
    else:
        bounds = list(indices_or_sections)
    edges = [0] + [int(b) for b in bounds] + [x.shape[axis]]
    axis = axis % x.ndim
    out = []
    for a, b in itertools.pairwise(edges):
        index = [slice(None)] * x.ndim
        index[axis] = slice(a, b)
        out.append(x[tuple(index)])
    return out


def hsplit(x, indices_or_sections):
    x = convert_to_tensor(x)
    return split(x, indices_or_sections, axis=0 if x.ndim == 1 else 1)


def vsplit(x, indices_or_sections):
    return split(x, indices_or_sections, axis=0)


def dsplit(x, indices_or_sections):
    return split(x, indices_or_sections, axis=2)


def fliplr(x):
    return cnp.flip(convert_to_tensor(x), axis=1)


def flipud(x):
    return cnp.flip(convert_to_tensor(x), axis=0)


def rot90(array, k=1, axes=(0, 1)):
    x = convert_to_tensor(array)
    if x.ndim < 2:
        raise ValueError("rot90: the input must have at least 2 dimensions. "
                         f"Received: array.ndim={x.ndim}")
    if len(axes) != 2 or axes[0] % x.ndim == axes[1] % x.ndim:
        raise ValueError(f"rot90: invalid axes {axes}; axes must be a tuple of two "
                         "different dimensions.")
    a0, a1 = axes
    k = k % 4
    if k == 0:
        return x
    if k == 2:
        return cnp.flip(cnp.flip(x, axis=a0), axis=a1)
    perm = list(range(x.ndim))
    perm[a0], perm[a1] = perm[a1], perm[a0]
    if k == 1:
        return cnp.transpose(cnp.flip(x, axis=a1), tuple(perm))
    return cnp.flip(cnp.transpose(x, tuple(perm)), axis=a1)




def _angle_unary(name):
    """deg2rad/rad2deg: half floats are kept, 64-bit inputs give float64, else floatx."""
    op = getattr(cnp, name)

    def fn(x):
        x = convert_to_tensor(x)
        dtype = standardize_dtype(x.dtype)
        if dtype in ("int64", "float64"):
            dtype = "float64"
        elif dtype not in ("bfloat16", "float16"):
            dtype = config.floatx()
        # Keep the dtype: NumPy computes half floats of ml_dtypes in float32.
        return cast(op(cast(x, dtype)), dtype)

    fn.__name__ = name
    return fn


deg2rad = _angle_unary("deg2rad")
rad2deg = _angle_unary("rad2deg")


def exp2(x):
    x = _float(x)
    return cnp.power(convert_to_tensor(2.0, standardize_dtype(x.dtype)), x)


def fabs(x):
    return cnp.abs(_float(x))


def signbit(x):
    x = convert_to_tensor(x)
    if standardize_dtype(x.dtype) == "bool":
        return cnp.zeros_like(x)
    return convert_to_tensor(_np.signbit(_to_numpy(x)))


def real(x):
    return convert_to_tensor(x)


def imag(x):
    return cnp.zeros_like(convert_to_tensor(x))


def conjugate(x):
    return convert_to_tensor(x)


conj = conjugate


def isreal(x):
    return cnp.ones_like(convert_to_tensor(x), dtype="bool")


def angle(x):
    x = _float(x)
    return cnp.where(x < convert_to_tensor(0, standardize_dtype(x.dtype)),
                     cnp.full_like(x, _np.pi), cnp.zeros_like(x))


def count_nonzero(x, axis=None):
    x = convert_to_tensor(x)
    return cast(cnp.sum(cast(cnp.not_equal(x, convert_to_tensor(0, x.dtype)), "int32"),
                        axis=_axis(axis)), "int32")


def diff(a, n=1, axis=-1):
    x = convert_to_tensor(a)
    for _ in range(n):
        hi = [slice(None)] * x.ndim
        lo = [slice(None)] * x.ndim
        hi[axis] = slice(1, None)
        lo[axis] = slice(None, -1)
        if standardize_dtype(x.dtype) == "bool":
            x = cnp.not_equal(x[tuple(hi)], x[tuple(lo)])
        else:
            x = x[tuple(hi)] - x[tuple(lo)]
    return x


def tri(N, M=None, k=0, dtype=None):
    return convert_to_tensor(_np.tri(N, M, k), _creation_dtype(dtype))


def empty(shape, dtype=None):
    return zeros(shape, dtype)


def empty_like(x, dtype=None):
    return zeros_like(x, dtype)


def isclose(x1, x2, rtol=1e-5, atol=1e-8, equal_nan=False):
    x1, x2 = _binary(x1, x2)
    out = cnp.abs(x1 - x2) <= (atol + rtol * cnp.abs(x2))
    out = cnp.logical_or(out, cnp.equal(x1, x2))
    if equal_nan:
        out = cnp.logical_or(out, cnp.logical_and(cnp.isnan(x1), cnp.isnan(x2)))
    return out


def allclose(x1, x2, rtol=1e-5, atol=1e-8, equal_nan=False):
    return cnp.all(isclose(x1, x2, rtol, atol, equal_nan))


def isneginf(x):
    x = convert_to_tensor(x)
    return cnp.logical_and(cnp.isinf(x), x < 0)


def isposinf(x):
    x = convert_to_tensor(x)
    return cnp.logical_and(cnp.isinf(x), x > 0)


def isin(x1, x2, assume_unique=False, invert=False):
    x1 = convert_to_tensor(x1)
    x2 = convert_to_tensor(x2)
    out = _np.isin(_to_numpy(x1), _to_numpy(x2), invert=invert)
    return convert_to_tensor(out, "bool")


def nan_to_num(x, nan=0.0, posinf=None, neginf=None):
    x = convert_to_tensor(x)
    dtype = standardize_dtype(x.dtype)
    if "float" not in dtype:
        return x
    info = _np.finfo(dtype if dtype != "bfloat16" else "float32")
    posinf = float(info.max) if posinf is None else posinf
    neginf = float(info.min) if neginf is None else neginf
    x = cnp.where(cnp.isnan(x), convert_to_tensor(nan, dtype), x)
    x = cnp.where(isposinf(x), convert_to_tensor(posinf, dtype), x)
    return cnp.where(isneginf(x), convert_to_tensor(neginf, dtype), x)


def divide_no_nan(x1, x2):
    x1, x2 = _binary(x1, x2)
    dtype = dtypes.result_type(x1.dtype, x2.dtype, float)
    x1, x2 = cast(x1, dtype), cast(x2, dtype)
    zero = convert_to_tensor(0, dtype)
    safe = cnp.where(cnp.equal(x2, zero), convert_to_tensor(1, dtype), x2)
    return cnp.where(cnp.equal(x2, zero), zero, x1 / safe)


def _nan_fill(x, fill):
    x = convert_to_tensor(x)
    dtype = standardize_dtype(x.dtype)
    if "float" not in dtype:
        return x, False
    return cnp.where(cnp.isnan(x), convert_to_tensor(fill, dtype), x), True


def nansum(x, axis=None, keepdims=False):
    x, _ = _nan_fill(x, 0)
    return sum(x, axis=axis, keepdims=keepdims)


def nanprod(x, axis=None, keepdims=False):
    x, _ = _nan_fill(x, 1)
    return prod(x, axis=axis, keepdims=keepdims)


def nanmean(x, axis=None, keepdims=False):
    x = _float(x)
    mask = cast(cnp.logical_not(cnp.isnan(x)), standardize_dtype(x.dtype))
    filled, _ = _nan_fill(x, 0)
    return (cnp.sum(filled, axis=_axis(axis), keepdims=keepdims)
            / cnp.sum(mask, axis=_axis(axis), keepdims=keepdims))


def nanvar(x, axis=None, keepdims=False):
    x = _float(x)
    dtype = standardize_dtype(x.dtype)
    isnan_ = cnp.isnan(x)
    count = cnp.sum(cast(cnp.logical_not(isnan_), dtype), axis=_axis(axis), keepdims=True)
    filled = cnp.where(isnan_, convert_to_tensor(0, dtype), x)
    m = cnp.sum(filled, axis=_axis(axis), keepdims=True) / count
    sq = cnp.where(isnan_, convert_to_tensor(0, dtype), (x - m) * (x - m))
    out = cnp.sum(sq, axis=_axis(axis), keepdims=True) / count
    return out if keepdims else cnp.squeeze(out, axis=_axis(axis))


def nanstd(x, axis=None, keepdims=False):
    return cnp.sqrt(nanvar(x, axis=axis, keepdims=keepdims))


def _nan_extreme(x, axis, keepdims, fn, fill):
    x = convert_to_tensor(x)
    dtype = standardize_dtype(x.dtype)
    if "float" not in dtype:
        return fn(x, axis=_axis(axis), keepdims=keepdims)
    nan = cnp.isnan(x)
    allnan = cnp.all(nan, axis=_axis(axis), keepdims=keepdims)
    out = fn(cnp.where(nan, convert_to_tensor(fill, dtype), x), axis=_axis(axis),
             keepdims=keepdims)
    return cnp.where(allnan, convert_to_tensor(float("nan"), dtype), out)


def nanmax(x, axis=None, keepdims=False):
    return _nan_extreme(x, axis, keepdims, cnp.max, float("-inf"))


def nanmin(x, axis=None, keepdims=False):
    return _nan_extreme(x, axis, keepdims, cnp.min, float("inf"))


def _nan_arg(x, axis, keepdims, arg_fn, fill):
    """nanargmax/nanargmin: NaNs ignored; -1 where a line is all NaN."""
    x = convert_to_tensor(x)
    filled, is_float = _nan_fill(x, fill)
    out = arg_fn(filled, axis=axis, keepdims=keepdims)
    if not is_float:
        return out
    allnan = cnp.all(cnp.isnan(x), axis=axis, keepdims=keepdims)
    return cnp.where(allnan, convert_to_tensor(-1, "int32"), out)


def nanargmax(x, axis=None, keepdims=False):
    return _nan_arg(x, axis, keepdims, argmax, float("-inf"))


def nanargmin(x, axis=None, keepdims=False):
    return _nan_arg(x, axis, keepdims, argmin, float("inf"))


def nancumsum(x, axis=None, dtype=None):
    x, _ = _nan_fill(x, 0)
    return cumsum(x, axis=axis, dtype=dtype)


def nancumprod(x, axis=None, dtype=None):
    x, _ = _nan_fill(x, 1)
    return cumprod(x, axis=axis, dtype=dtype)


def _quantile_impl(x, q, axis, method, keepdims, nan_aware):
    x = _float(x)
    q = convert_to_tensor(q)
    dtype = standardize_dtype(x.dtype)
    if dtype in ("float16", "bfloat16"):
        x = cast(x, "float32")
    if method != "linear":
        if nan_aware:
            fn = _np.nanquantile
        else:
            fn = _np.quantile
        out = fn(_to_numpy(x), _to_numpy(q), axis=_axis(axis), method=method,
                 keepdims=keepdims)
        return convert_to_tensor(out, dtype)
    axes = tuple(range(x.ndim)) if axis is None else (
        tuple(a % x.ndim for a in axis) if isinstance(axis, (tuple, list))
        else (axis % x.ndim,))
    rest = [a for a in range(x.ndim) if a not in axes]
    moved = cnp.transpose(x, tuple(rest) + axes)
    moved = cnp.reshape(moved, tuple(x.shape[a] for a in rest) + (-1,))
    srt = cnp.sort(moved, axis=-1)  # NaNs sort last
    n = srt.shape[-1]
    if nan_aware:
        count = cnp.sum(cast(cnp.logical_not(cnp.isnan(srt)), "float64"), axis=-1,
                        keepdims=True)
    else:
        count = convert_to_tensor(float(n), "float64")
    qs = cast(cnp.reshape(q, (-1,)), "float64")
    outs = []
    for i in range(qs.shape[0]):
        pos = qs[i] * (count - 1.0)
        pos = cnp.maximum(pos, convert_to_tensor(0.0, "float64"))
        lo = cnp.floor(pos)
        hi = cnp.minimum(lo + 1.0, cnp.maximum(count - 1.0, convert_to_tensor(0.0, "float64")))
        frac = cast(pos - lo, srt.dtype)
        lo_i = cnp.broadcast_to(cast(lo, "int32"), tuple(srt.shape[:-1]) + (1,))
        hi_i = cnp.broadcast_to(cast(hi, "int32"), tuple(srt.shape[:-1]) + (1,))
        a = take_along_axis(srt, lo_i, axis=-1)
        b = take_along_axis(srt, hi_i, axis=-1)
        # a == b (also both infinite): no interpolation, which would give inf - inf.
        val = cnp.where(cnp.equal(a, b), a, a + (b - a) * frac)
        if not nan_aware:
            val = cnp.where(cnp.any(cnp.isnan(moved), axis=-1, keepdims=True),
                            convert_to_tensor(float("nan"), standardize_dtype(val.dtype)),
                            val)
        val = cnp.squeeze(val, axis=-1)
        if keepdims:
            shape = [1 if a in axes else x.shape[a] for a in range(x.ndim)]
            val = cnp.reshape(val, tuple(shape))
        outs.append(val)
    out = outs[0] if q.ndim == 0 else cnp.stack(outs, axis=0)
    return cast(out, dtype)


def quantile(x, q, axis=None, method="linear", keepdims=False):
    return _quantile_impl(x, q, axis, method, keepdims, False)


def nanquantile(x, q, axis=None, method="linear", keepdims=False):
    return _quantile_impl(x, q, axis, method, keepdims, True)


def percentile(x, q, axis=None, method="linear", keepdims=False):
    return quantile(x, divide(q, 100.0), axis, method, keepdims)


def nanpercentile(x, q, axis=None, method="linear", keepdims=False):
    return nanquantile(x, divide(q, 100.0), axis, method, keepdims)


def median(x, axis=None, keepdims=False):
    return quantile(x, 0.5, axis=axis, keepdims=keepdims)


def nanmedian(x, axis=None, keepdims=False):
    return nanquantile(x, 0.5, axis=axis, keepdims=keepdims)


def ptp(x, axis=None, keepdims=False):
    return max(x, axis=axis, keepdims=keepdims) - min(x, axis=axis, keepdims=keepdims)


def average(x, axis=None, weights=None):
    x = convert_to_tensor(x)
    if weights is None:
        return mean(x, axis=axis)
    weights = convert_to_tensor(weights)
    dtype = dtypes.result_type(x.dtype, weights.dtype, float)
    x, weights = cast(x, dtype), cast(weights, dtype)
    if axis is not None and weights.ndim == 1 and x.ndim > 1:
        shape = [1] * x.ndim
        shape[axis] = weights.shape[0]
        weights = cnp.reshape(weights, tuple(shape))
    weights = cnp.broadcast_to(weights, tuple(x.shape))
    return cnp.sum(x * weights, axis=axis) / cnp.sum(weights, axis=axis)


def meshgrid(*x, indexing="xy"):
    xs = [cnp.reshape(convert_to_tensor(v), (-1,)) for v in x]
    n = len(xs)
    shape = [v.shape[0] for v in xs]
    if indexing == "xy" and n >= 2:
        shape[0], shape[1] = shape[1], shape[0]
    out = []
    for i, v in enumerate(xs):
        s = [1] * n
        pos = i
        if indexing == "xy" and n >= 2 and i < 2:
            pos = 1 - i
        s[pos] = v.shape[0]
        out.append(cnp.broadcast_to(cnp.reshape(v, tuple(s)), tuple(shape)))
    return out


def select(condlist, choicelist, default=0):
    if len(condlist) != len(choicelist):
        raise ValueError("select: condlist and choicelist must have the same length")
    choices = [convert_to_tensor(c) for c in choicelist]
    dtype = dtypes.result_type(*[c.dtype for c in choices])
    out = convert_to_tensor(default, dtype)
    for cond, choice in reversed(list(zip(condlist, choices))):
        out = cnp.where(convert_to_tensor(cond, "bool"), cast(choice, dtype), out)
    return out


def heaviside(x1, x2):
    x1, x2 = _binary(x1, x2)
    dtype = standardize_dtype(x1.dtype)
    if "int" in dtype or dtype == "bool":
        x1, x2 = cast(x1, config.floatx()), cast(x2, config.floatx())
        dtype = config.floatx()
    zero = convert_to_tensor(0, dtype)
    return cnp.where(x1 < zero, zero,
                     cnp.where(x1 > zero, convert_to_tensor(1, dtype), x2))


def fmax(x1, x2):
    x1, x2 = _binary(x1, x2)
    return cnp.where(cnp.isnan(x2), x1, cnp.where(cnp.isnan(x1), x2, cnp.maximum(x1, x2)))


def fmin(x1, x2):
    x1, x2 = _binary(x1, x2)
    return cnp.where(cnp.isnan(x2), x1, cnp.where(cnp.isnan(x1), x2, cnp.minimum(x1, x2)))


def fmod(x1, x2):
    x1, x2 = _binary(x1, x2)
    return x1 - cnp.trunc(x1 / x2) * x2 if "float" in standardize_dtype(x1.dtype) \
        else convert_to_tensor(_np.fmod(_to_numpy(x1), _to_numpy(x2)), x1.dtype)


def logaddexp2(x1, x2):
    x1, x2 = _binary(x1, x2)
    dtype = dtypes.result_type(x1.dtype, float)
    x1, x2 = cast(x1, dtype), cast(x2, dtype)
    ln2 = convert_to_tensor(_np.log(2.0), dtype)
    return cnp.logaddexp(x1 * ln2, x2 * ln2) / ln2


def ldexp(x1, x2):
    x1 = convert_to_tensor(x1)
    x2 = convert_to_tensor(x2)
    dtype = dtypes.result_type(x1.dtype, x2.dtype, float)
    return cast(x1, dtype) * cnp.power(convert_to_tensor(2.0, dtype), cast(x2, dtype))


def gcd(x1, x2):
    x1, x2 = _binary(x1, x2)
    return convert_to_tensor(_np.gcd(_to_numpy(x1), _to_numpy(x2)), x1.dtype)


def lcm(x1, x2):
    x1, x2 = _binary(x1, x2)
    return convert_to_tensor(_np.lcm(_to_numpy(x1), _to_numpy(x2)), x1.dtype)


def sinc(x):
    x = _float(x)
    dtype = standardize_dtype(x.dtype)
    zero = convert_to_tensor(0, dtype)
    px = x * convert_to_tensor(_np.pi, dtype)
    safe = cnp.where(cnp.equal(px, zero), convert_to_tensor(1, dtype), px)
    return cnp.where(cnp.equal(px, zero), convert_to_tensor(1, dtype), cnp.sin(safe) / safe)


def vdot(x1, x2):
    x1, x2 = _binary(x1, x2)
    return cnp.sum(cnp.reshape(x1, (-1,)) * cnp.reshape(x2, (-1,)), dtype=x1.dtype)


def inner(x1, x2):
    x1, x2 = _binary(x1, x2)
    if x1.ndim == 0 or x2.ndim == 0:
        return x1 * x2
    return cnp.tensordot(x1, x2, axes=([x1.ndim - 1], [x2.ndim - 1]))


def kron(x1, x2):
    x1, x2 = _binary(x1, x2)
    nd_ = _builtins.max(x1.ndim, x2.ndim)
    a = cnp.reshape(x1, (1,) * (nd_ - x1.ndim) + tuple(x1.shape))
    b = cnp.reshape(x2, (1,) * (nd_ - x2.ndim) + tuple(x2.shape))
    ia = []
    ib = []
    for i in range(nd_):
        ia += [a.shape[i], 1]
        ib += [1, b.shape[i]]
    out = cnp.reshape(a, tuple(ia)) * cnp.reshape(b, tuple(ib))
    return cnp.reshape(out, tuple(a.shape[i] * b.shape[i] for i in range(nd_)))


def cross(x1, x2, axisa=-1, axisb=-1, axisc=-1, axis=None):
    x1, x2 = _binary(x1, x2)
    if axis is not None:
        axisa = axisb = axisc = axis
    a = cnp.moveaxis(x1, axisa, -1)
    b = cnp.moveaxis(x2, axisb, -1)
    if a.shape[-1] == 2:
        a = cnp.concatenate([a, cnp.zeros_like(a[..., :1])], axis=-1)
    if b.shape[-1] == 2:
        b = cnp.concatenate([b, cnp.zeros_like(b[..., :1])], axis=-1)
    two_d = x1.shape[axisa] == 2 and x2.shape[axisb] == 2
    c0 = a[..., 1] * b[..., 2] - a[..., 2] * b[..., 1]
    c1 = a[..., 2] * b[..., 0] - a[..., 0] * b[..., 2]
    c2 = a[..., 0] * b[..., 1] - a[..., 1] * b[..., 0]
    if two_d:
        return c2
    return cnp.moveaxis(cnp.stack([c0, c1, c2], axis=-1), -1, axisc)


def trapezoid(y, x=None, dx=1.0, axis=-1):
    y = _float(y)
    n = y.shape[axis]
    hi = [slice(None)] * y.ndim
    lo = [slice(None)] * y.ndim
    hi[axis] = slice(1, n)
    lo[axis] = slice(0, n - 1)
    avg = (y[tuple(hi)] + y[tuple(lo)]) / convert_to_tensor(2.0, standardize_dtype(y.dtype))
    if x is None:
        return cnp.sum(avg, axis=axis) * convert_to_tensor(dx, standardize_dtype(y.dtype))
    x = cast(convert_to_tensor(x), standardize_dtype(y.dtype))
    d = diff(x, axis=axis if x.ndim > 1 else -1)
    if x.ndim == 1 and y.ndim > 1:
        shape = [1] * y.ndim
        shape[axis] = d.shape[0]
        d = cnp.reshape(d, tuple(shape))
    return cnp.sum(avg * d, axis=axis)


def vander(x, N=None, increasing=False):
    x = convert_to_tensor(x)
    n = x.shape[0] if N is None else int(N)
    powers = _np.arange(n)
    if not increasing:
        powers = powers[::-1]
    p = convert_to_tensor(powers.astype("int32"), standardize_dtype(x.dtype))
    return cnp.power(cnp.expand_dims(x, -1), p)


def corrcoef(x):
    x = _float(x)
    if x.ndim == 1:
        x = cnp.reshape(x, (1, -1))
    xm = x - cnp.mean(x, axis=1, keepdims=True)
    c = cnp.matmul(xm, cnp.transpose(xm))
    d = cnp.sqrt(cnp.diag(c, k=0))
    return c / cnp.expand_dims(d, 0) / cnp.expand_dims(d, 1)


def correlate(x1, x2, mode="valid"):
    x1, x2 = _binary(x1, x2)
    dtype = dtypes.result_type(x1.dtype, x2.dtype, float) if "int" in standardize_dtype(
        x1.dtype) else standardize_dtype(x1.dtype)
    return convert_to_tensor(_np.correlate(_to_numpy(x1), _to_numpy(x2), mode=mode),
                             dtype)


def searchsorted(sorted_sequence, values, side="left"):
    s = _to_numpy(convert_to_tensor(sorted_sequence))
    v = _to_numpy(convert_to_tensor(values))
    if s.ndim != 1:
        raise ValueError("`searchsorted` only supports 1-D sorted sequences. "
                         f"Received: sorted_sequence.shape={s.shape}")
    return convert_to_tensor(_np.searchsorted(s, v, side=side), "int32")


def digitize(x, bins):
    x = _to_numpy(convert_to_tensor(x))
    bins = _to_numpy(convert_to_tensor(bins))
    return convert_to_tensor(_np.digitize(x, bins), "int32")


def bincount(x, weights=None, minlength=0, sparse=False):
    if sparse:
        raise ValueError("kbackend: bincount does not support sparse=True")
    x = _to_numpy(convert_to_tensor(x))
    if weights is not None:
        weights = convert_to_tensor(weights)
        wdt = standardize_dtype(weights.dtype)
        w = _to_numpy(weights)
        dtype = dtypes.result_type(wdt, "int32") if "int" not in wdt else wdt
    else:
        w = None
        dtype = "int32"
    if x.ndim == 1:
        out = _np.bincount(x, w, minlength=minlength)
    else:
        length = _builtins.max(int(x.max()) + 1 if x.size else 0, minlength)
        out = _np.stack([_np.bincount(r, None if w is None else wr, minlength=length)
                         for r, wr in zip(x, w if w is not None else [None] * len(x))])
    return convert_to_tensor(out.astype(dtype), dtype)


def unravel_index(indices, shape):
    idx = _to_numpy(convert_to_tensor(indices))
    dtype = standardize_dtype(convert_to_tensor(indices).dtype)
    return tuple(convert_to_tensor(i.astype(dtype), dtype)
                 for i in _np.unravel_index(idx, shape))


def argpartition(x, kth, axis=-1):
    return convert_to_tensor(
        _np.argpartition(_to_numpy(convert_to_tensor(x)), kth, axis=axis), "int32")


def histogram(x, bins=10, range=None):
    x = convert_to_tensor(x)
    if x.ndim != 1:
        raise ValueError("Input tensor must be 1-dimensional. "
                         f"Received: input.shape={x.shape}")
    counts, edges = _np.histogram(_to_numpy(x), bins=bins, range=range)
    return (convert_to_tensor(counts.astype("int32"), "int32"),
            convert_to_tensor(edges, standardize_dtype(x.dtype)))


def unique(x, sorted=True, return_index=False, return_inverse=False, return_counts=False,
           axis=None, size=None, fill_value=None):
    x = convert_to_tensor(x)
    dtype = standardize_dtype(x.dtype)
    res = _np.unique(_to_numpy(x), return_index=return_index,
                     return_inverse=return_inverse, return_counts=return_counts,
                     axis=axis, equal_nan=False)
    if not isinstance(res, tuple):
        res = (res,)
    res = list(res)
    vals = res[0]
    if size is not None:
        dim = 0 if axis is None else axis % x.ndim
        n = vals.shape[dim]
        # The index and count outputs are per unique value (the inverse is per input).
        per_value = [1] if return_index else []
        if return_counts:
            per_value.append(len(res) - 1)
        if n < size:
            fill = fill_value if fill_value is not None else (
                vals.min() if vals.size else 0)
            padw = [(0, 0)] * vals.ndim
            padw[dim] = (0, size - n)
            vals = _np.pad(vals, padw, constant_values=fill)
            for i in per_value:
                res[i] = _np.pad(res[i], (0, size - n),
                                 constant_values=0 if i == len(res) - 1 and return_counts
                                 else 1)
        else:
            vals = _np.take(vals, _np.arange(size), axis=dim)
            for i in per_value:
                res[i] = res[i][:size]
    out = [convert_to_tensor(vals, dtype)]
    out += [convert_to_tensor(_np.asarray(r).astype("int32"), "int32") for r in res[1:]]
    return out[0] if len(out) == 1 else tuple(out)


def slogdet(x):
    x = _float(x)
    return tuple(cnp.linalg.slogdet(x))


def _window(fn, x, *args):
    n = int(_to_numpy(convert_to_tensor(x)))
    return convert_to_tensor(fn(n, *args).astype(config.floatx()), config.floatx())


def bartlett(x):
    return _window(_np.bartlett, x)


def blackman(x):
    return _window(_np.blackman, x)


def hamming(x):
    return _window(_np.hamming, x)


def hanning(x):
    return _window(_np.hanning, x)


def kaiser(x, beta):
    return _window(_np.kaiser, x, beta)


def i0(x):
    x = _float(x)
    return convert_to_tensor(_np.i0(_to_numpy(x)), standardize_dtype(x.dtype))


def nextafter(x1, x2):
    x1, x2 = _binary(x1, x2)
    dtype = dtypes.result_type(x1.dtype, float)
    return convert_to_tensor(_np.nextafter(_to_numpy(cast(x1, dtype)),
                                           _to_numpy(cast(x2, dtype))), dtype)


def view(x, dtype=None):
    x = convert_to_tensor(x)
    if dtype is None:
        return x
    dtype = standardize_dtype(dtype)
    return convert_to_tensor(_to_numpy(x).view(dtype), dtype)



def _vmap(fn, in_axes=0):
    """Map ``fn`` over axis 0 of the arguments whose ``in_axes`` entry is 0 (None:
    passed whole), stacking the results (as torch.vmap / jax.vmap)."""
    from keras.src import tree

    def mapped(*args):
        axes = in_axes if isinstance(in_axes, (tuple, list)) else (in_axes,) * len(args)
        args = [convert_to_tensor(a) if ax == 0 else a for a, ax in zip(args, axes)]
        n = next(a.shape[0] for a, ax in zip(args, axes) if ax == 0)
        outs = [fn(*[a[i] if ax == 0 else a for a, ax in zip(args, axes)])
                for i in range(n)]
        return tree.map_structure(lambda *xs: cnp.stack(
            [convert_to_tensor(v) for v in xs], axis=0), *outs)

    return mapped


def vectorize(pyfunc, *, excluded=None, signature=None):
    from keras.src.backend.common.backend_utils import vectorize_impl

    return vectorize_impl(pyfunc, _vmap, excluded=excluded, signature=signature)
