"""Keras backend ``numpy``: the functions behind ``keras.ops.numpy``, on ``core.np``.

Result dtypes follow Keras' rules (``keras.src.backend.common.dtypes.result_type``,
where Python scalars are weakly typed); the computation itself is core's.
Functions of Keras' interface that are not implemented yet are listed in
``_NOT_YET`` and raise NotImplementedError naming themselves when called.
"""
from __future__ import annotations

from keras.src.backend import config
from keras.src.backend.common import dtypes, standardize_dtype

from core import np as cnp
from kbackend._missing import add_stubs
from kbackend.core import cast, convert_to_tensor

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
        x = convert_to_tensor(x)
        dtype = standardize_dtype(x.dtype)
        if "int" in dtype or dtype == "bool":
            x = cast(x, config.floatx())
        return op(x)

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
logaddexp = _arith("logaddexp")
arctan2 = _arith("arctan2")
hypot = _arith("hypot")

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
square = _same_unary("square")
absolute = _same_unary("absolute")
abs = _same_unary("abs")
sign = _same_unary("sign")
floor = _same_unary("floor")
ceil = _same_unary("ceil")
trunc = _same_unary("trunc")
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
    if dtype is None:
        dtype = getattr(fill_value, "dtype", None) or (
            config.floatx() if isinstance(fill_value, float) else None)
    fill_value = convert_to_tensor(fill_value, dtype)
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
    return cnp.mean(cast(x, dtype), axis=axis, keepdims=keepdims)


def sum(x, axis=None, keepdims=False):
    x = convert_to_tensor(x)
    dtype = standardize_dtype(x.dtype)
    # Keras sums uint8 into uint32, which core lacks: int32 until it has one.
    dtype = {"bool": "int32", "int8": "int32", "int16": "int32", "uint8": "int32"}.get(
        dtype, dtype)
    return cnp.sum(cast(x, dtype), axis=axis, keepdims=keepdims)


def prod(x, axis=None, keepdims=False, dtype=None):
    x = convert_to_tensor(x)
    out = cnp.prod(x, axis=axis, keepdims=keepdims)
    return cast(out, dtype) if dtype is not None else out


def max(x, axis=None, keepdims=False, initial=None):
    x = convert_to_tensor(x)
    out = cnp.max(x, axis=axis, keepdims=keepdims)
    return out if initial is None else maximum(out, initial)


def min(x, axis=None, keepdims=False, initial=None):
    x = convert_to_tensor(x)
    out = cnp.min(x, axis=axis, keepdims=keepdims)
    return out if initial is None else minimum(out, initial)


amax = max
amin = min


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
    return cast(cnp.argsort(convert_to_tensor(x), axis=axis), "int32")


def sort(x, axis=-1):
    return cnp.sort(convert_to_tensor(x), axis=axis)


def cumsum(x, axis=None, dtype=None):
    x = convert_to_tensor(x)
    out = cnp.cumsum(x, axis=axis)
    return cast(out, dtype) if dtype is not None else out


def cumprod(x, axis=None, dtype=None):
    x = convert_to_tensor(x)
    out = cnp.cumprod(x, axis=axis)
    return cast(out, dtype) if dtype is not None else out


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
        raise NotImplementedError(
            "kbackend: numpy.where(condition) with one argument (nonzero) is not "
            "implemented yet in the kbackend Keras backend")
    x1, x2 = _binary(x1, x2)
    return cnp.where(convert_to_tensor(condition, "bool"), x1, x2)


def clip(x, x_min, x_max):
    x = convert_to_tensor(x)
    if standardize_dtype(x.dtype) == "bool":
        x = cast(x, "int32")
    return cnp.clip(x, x_min, x_max)


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
    return cnp.split(convert_to_tensor(x), indices_or_sections, axis=axis)


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
    return cnp.einsum(subscripts, *_same_dtype(operands), **kwargs)


def size(x):
    return convert_to_tensor(x).size


def ndim(x):
    return convert_to_tensor(x).ndim


def array(x, dtype=None):
    return convert_to_tensor(x, dtype=dtype)


# The rest of Keras' numpy interface: not implemented yet.
_NOT_YET = [
    "rot90", "allclose", "angle", "append", "view", "average", "bartlett", "hamming",
    "hanning", "heaviside", "kaiser", "bincount", "bitwise_and", "bitwise_invert",
    "bitwise_not", "bitwise_or", "bitwise_xor", "bitwise_left_shift", "left_shift",
    "bitwise_right_shift", "right_shift", "blackman", "conjugate", "conj",
    "count_nonzero", "cross", "deg2rad", "rad2deg", "diag", "diagflat", "diagonal",
    "diff", "digitize", "dstack", "empty", "empty_like", "exp2", "fabs", "fliplr",
    "flipud", "gcd", "geomspace", "hstack", "hsplit", "imag", "i0", "isclose", "isin",
    "isneginf", "isposinf", "isreal", "kron", "lcm", "ldexp", "linspace", "logaddexp2",
    "logspace", "fmax", "median", "meshgrid", "fmin", "fmod", "nanargmax", "nanargmin",
    "nancumsum", "nancumprod", "nanmax", "nanmean", "nanmedian", "nanmin",
    "nanpercentile", "nanprod", "nanquantile", "nanstd", "nansum", "nanvar",
    "nan_to_num", "nonzero", "pad", "percentile", "ptp", "quantile", "unravel_index",
    "real", "roll", "searchsorted", "signbit", "sinc", "array_split",
    "take_along_axis", "trace", "tri", "vdot", "inner", "vstack", "vsplit",
    "vectorize", "divide_no_nan", "nextafter", "trapezoid", "vander", "corrcoef",
    "correlate", "select", "slogdet", "argpartition", "histogram", "unique", "dsplit",
]
add_stubs(globals(), "numpy", _NOT_YET)
