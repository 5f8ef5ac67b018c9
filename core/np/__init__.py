"""NumPy names and semantics over the operator registry (``mxnet.np``).

Broadcasting, type promotion, ``axis``, ``keepdims`` and ``out=`` follow NumPy; where
MXNet 2.0's NumPy interface differs, it is followed: arrays live on a device
(``ctx=``/``device=``), creation functions default to float32 for floating-point data
(``_creation.py``; ``npx.set_np(dtype=True)`` switches to float64, ``_mode.py``).
Most functions are generated from the registry; NumPy functions without an operator of
their own are composed of registry operators (``_shaping.py``, ``_math.py``,
``_extra.py``) and stay differentiable; those whose output shape depends on values are
computed on the host (``_values.py``).

Example:
    >>> from core import np
    >>> np.sum(np.ones((2, 3)), axis=0).asnumpy().tolist()
    [2.0, 2.0, 2.0]
"""
import numpy as _numpy

from .. import ops as _ops
from ..ndarray import NDArray, from_dlpack  # noqa: F401 - np.from_dlpack
from ..ndarray import array as _nd_array
from ..ops.namespace import namespace as _namespace
from . import linalg, random  # noqa: F401

globals().update(_namespace("np"))

from ._creation import (  # noqa: F401 - MXNet's signatures and float default
    arange,
    empty,
    eye,
    full,
    identity,
    linspace,
    logspace,
    ones,
    tri,
    zeros,
)
from ._extra import (  # noqa: F401 - NumPy names beyond MXNet's list
    asanyarray,
    ascontiguousarray,
    broadcast_arrays,
    can_cast,
    corrcoef,
    cov,
    exp2,
    float_power,
    heaviside,
    isscalar,
    nanmax,
    nanmin,
    ndim,
    promote_types,
    ptp,
    result_type,
    signbit,
    size,
)
from ._math import (  # noqa: F401
    allclose,
    array_equal,
    average,
    bitwise_left_shift,
    bitwise_right_shift,
    blackman,
    cross,
    diff,
    ediff1d,
    fmax,
    fmin,
    fmod,
    gcd,
    hamming,
    hanning,
    interp,
    isclose,
    isneginf,
    isposinf,
    kron,
    lcm,
    ldexp,
    median,
    nan_to_num,
    percentile,
    polyval,
    positive,
    quantile,
    trace,
    vdot,
)
from ._mode import default_float as _default_float
from ._shaping import (  # noqa: F401
    append,
    atleast_1d,
    atleast_2d,
    atleast_3d,
    column_stack,
    delete,
    diagflat,
    diagonal,
    dsplit,
    dstack,
    fill_diagonal,
    fliplr,
    flipud,
    hsplit,
    hstack,
    insert,
    meshgrid,
    resize,
    rollaxis,
    rot90,
    row_stack,
    vsplit,
    vstack,
)
from ._values import (  # noqa: F401 - value-dependent shapes: computed on the host
    argwhere,
    bincount,
    count_nonzero,
    diag_indices_from,
    flatnonzero,
    genfromtxt,
    histogram,
    indices,
    may_share_memory,
    nonzero,
    shape,
    shares_memory,
    tril_indices,
    tril_indices_from,
    triu_indices,
    triu_indices_from,
    unique,
    unravel_index,
)

ndarray = NDArray
pi = _numpy.pi
e = _numpy.e
inf = _numpy.inf
nan = _numpy.nan
newaxis = None
float16, float32, float64 = _numpy.float16, _numpy.float32, _numpy.float64
int8, int16, int32, int64, uint8 = _numpy.int8, _numpy.int16, _numpy.int32, _numpy.int64, \
    _numpy.uint8
bool_ = _numpy.bool_
float_ = double = _numpy.float64
int_ = _numpy.int64
dtype = _numpy.dtype
finfo, iinfo = _numpy.finfo, _numpy.iinfo
round_ = round
concat = concatenate  # noqa: F821 - NumPy 2's name, generated from the registry above


def array(object, dtype=None, ctx=None, device=None, copy: bool = True) -> NDArray:
    """An array on ``device``/``ctx`` from any array-like.

    NumPy arrays and NDArrays keep their dtype; Python floats become float32 (MXNet's
    NumPy default; float64 after ``npx.set_np(dtype=True)``); Python ints become int64
    and bools bool.

    Example:
        >>> from core import np
        >>> np.array([1.0, 2.0]).dtype, np.array([1, 2]).dtype
        (dtype('float32'), dtype('int64'))
    """
    if dtype is None:
        if isinstance(object, NDArray):
            dtype = object.dtype
        else:
            src = _numpy.asarray(object)
            dtype = _default_float() if (src.dtype == _numpy.float64 and not isinstance(
                object, _numpy.ndarray)) else src.dtype
    return _nd_array(object, ctx=ctx if ctx is not None else device, dtype=dtype)


asarray = array


_generic_clip = clip  # noqa: F821 - generated from the registry above


def clip(a, a_min=None, a_max=None, out=None, *, min=None, max=None):
    """Values of ``a`` limited to ``[a_min, a_max]`` (NumPy 2's ``min=``/``max=`` too).

    Example:
        >>> from core import np
        >>> np.clip(np.array([-1.0, 0.5, 2.0]), min=0, max=1).tolist()
        [0.0, 0.5, 1.0]
    """
    lo = a_min if min is None else min
    hi = a_max if max is None else max
    return _generic_clip(a, a_min=lo, a_max=hi, out=out)


_generic_einsum = einsum  # noqa: F821 - generated from the registry above


def einsum(*args, out=None, optimize=False, **kwargs):
    """NumPy's ``einsum(subscripts, *operands)``, differentiable in every operand.

    ``einsum(operands, subscripts)`` and ``einsum(*operands, subscripts=...)`` work too.
    """
    if args and isinstance(args[0], str):
        res = _ops.F.einsum(*args[1:], subscripts=args[0], optimize=optimize)
    else:
        res = _generic_einsum(*args, optimize=optimize, **kwargs)
    if out is not None:
        out[...] = res
        return out
    return res
