"""The dtypes core supports, with bfloat16 from ml_dtypes."""
from __future__ import annotations

import ml_dtypes
import numpy

bfloat16 = numpy.dtype(ml_dtypes.bfloat16)
float16 = numpy.dtype("float16")
float32 = numpy.dtype("float32")
float64 = numpy.dtype("float64")
int8 = numpy.dtype("int8")
int16 = numpy.dtype("int16")
int32 = numpy.dtype("int32")
int64 = numpy.dtype("int64")
uint8 = numpy.dtype("uint8")
uint16 = numpy.dtype("uint16")
uint32 = numpy.dtype("uint32")
uint64 = numpy.dtype("uint64")
bool_ = numpy.dtype("bool")
# 8-bit floats (ml_dtypes) for storage and casts: Keras' float8 quantization keeps
# weights in them; arithmetic runs after a cast to a wider float.
float8_e4m3fn = numpy.dtype(ml_dtypes.float8_e4m3fn)
float8_e5m2 = numpy.dtype(ml_dtypes.float8_e5m2)

SUPPORTED = (float16, float32, float64, bfloat16, int8, int16, int32, int64, uint8, uint16,
             uint32, uint64, bool_, float8_e4m3fn, float8_e5m2)
FLOATS = (float16, float32, float64, bfloat16, float8_e4m3fn, float8_e5m2)
# The floats NumPy knows only through ml_dtypes (dtype kind "V"): their ufunc loops run
# element by element, so a sum accumulates in the dtype itself (10,000 bfloat16 0.01s
# sum to 4.0). Reductions, gradients summed over broadcast axes and scatter-adds
# accumulate them in float32.
ML_FLOATS = (bfloat16, float8_e4m3fn, float8_e5m2)
_BY_NAME = {d.name: d for d in SUPPORTED}
_BY_NAME.update({"bool_": bool_, "float": float64, "int": int64, "half": float16,
                 "double": float64})


def as_dtype(dtype, what: str = "dtype") -> numpy.dtype:
    """Normalize a dtype given as a string, a NumPy type or a dtype.

    Raises:
        TypeError: naming ``what`` when the dtype is not one core supports.
    """
    if dtype is None:
        raise TypeError(f"{what}: a dtype is required, got None")
    if isinstance(dtype, numpy.dtype) and dtype in SUPPORTED:
        return dtype
    if isinstance(dtype, str):
        d = _BY_NAME.get(dtype)
        if d is not None:
            return d
    try:
        d = numpy.dtype(dtype)
    except TypeError:
        d = None
    if d is None or d not in SUPPORTED:
        names = ", ".join(x.name for x in SUPPORTED)
        raise TypeError(f"{what}: unsupported dtype {dtype!r}; supported: {names}")
    return d


def is_float(dtype) -> bool:
    """Whether ``dtype`` is one of core's floating-point dtypes (``FLOATS``).

    The test for "floating point" everywhere in core, e.g. whether an input gets a
    gradient: ``dtype.kind == "f"`` is wrong for ml_dtypes' bfloat16 and float8
    (their kind is ``"V"``). Core has no complex dtype, so this is also the test for
    "inexact". ``dtype`` may be a dtype, a name or a NumPy type; None (the dtype
    a VJP sees for a Python scalar) and non-dtypes are False.

    Example:
        >>> is_float(bfloat16), is_float("float8_e5m2"), is_float("int32"), is_float(None)
        (True, True, False, False)
    """
    if dtype is None:
        return False
    if not isinstance(dtype, numpy.dtype):
        try:
            dtype = _BY_NAME.get(dtype) or numpy.dtype(dtype)
        except TypeError:
            return False
    return dtype in FLOATS


def is_integer(dtype) -> bool:
    return numpy.dtype(dtype).kind in "iu"
