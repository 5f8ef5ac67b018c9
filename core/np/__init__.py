"""NumPy names and semantics over the operator registry (``mxnet.np``).

Broadcasting, type promotion, ``axis``, ``keepdims`` and ``out=`` follow NumPy.
Creation functions default to float32 for floating-point data, as MXNet's NumPy
interface does.

Example:
    >>> from core import np
    >>> np.sum(np.ones((2, 3)), axis=0).asnumpy().tolist()
    [2.0, 2.0, 2.0]
"""
import numpy as _numpy

from .. import ops as _ops
from ..ndarray import NDArray, from_dlpack  # noqa: F401 - np.from_dlpack
from ..ndarray import array as _nd_array
from ..ops.registry import namespace as _namespace
from . import linalg, random  # noqa: F401

globals().update(_namespace("np"))

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


def array(object, dtype=None, ctx=None, device=None):
    """An array from any array-like; NumPy arrays and NDArrays keep their dtype.

    Python floats become float32 (MXNet's NumPy default); Python ints become int64.
    """
    if dtype is None:
        if isinstance(object, NDArray):
            dtype = object.dtype
        else:
            src = _numpy.asarray(object)
            dtype = "float32" if (src.dtype == _numpy.float64 and not isinstance(
                object, _numpy.ndarray)) else src.dtype
    return _nd_array(object, ctx=ctx or device, dtype=dtype)


asarray = array


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
