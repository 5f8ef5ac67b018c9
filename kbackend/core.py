"""Keras backend ``core``: tensors, variables, control flow and shape inference.

Tensors are ``core`` NDArrays; every function starts with ``convert_to_tensor``.
The public names mirror ``keras/src/backend/numpy/core.py``.
"""
from __future__ import annotations

import builtins
import contextlib

import numpy
from keras.src import tree
from keras.src.backend.common import KerasVariable, standardize_dtype
from keras.src.backend.common.dtypes import result_type
from keras.src.backend.common.keras_tensor import KerasTensor
from keras.src.backend.common.stateless_scope import StatelessScope
from keras.src.backend.common.symbolic_scope import SymbolicScope

import core as _core
from core import autograd as _autograd
from core import dtypes as _core_dtypes
from core import np as cnp
from core.ndarray import NDArray
from kbackend._missing import add_stubs

SUPPORTS_SPARSE_TENSORS = False
SUPPORTS_RAGGED_TENSORS = False
SUPPORTS_COMPLEX_DTYPES = False
IS_THREAD_SAFE = True

# The dtypes core stores (not uint16/32/64, complex or strings); Keras' names.
_SUPPORTED = {standardize_dtype(d.name) for d in _core_dtypes.SUPPORTED}


def _numpy_dtype(dtype: str):
    if dtype == "bfloat16":
        import ml_dtypes

        return ml_dtypes.bfloat16
    return numpy.dtype(dtype)


def _check_dtype(dtype: str, what: str = "convert_to_tensor") -> None:
    if dtype not in _SUPPORTED:
        raise TypeError(
            f"{what}: dtype {dtype!r} is not supported by the kbackend backend; "
            f"supported dtypes: {', '.join(sorted(_SUPPORTED))}")


class Variable(KerasVariable):
    """A Keras variable holding a core NDArray; assignments write into it in place."""

    def _initialize(self, value):
        self._value = convert_to_tensor(value, dtype=self._dtype)

    def _direct_assign(self, value):
        value = convert_to_tensor(value, dtype=self._dtype)
        if self._value is None or self._value.shape != value.shape:
            self._value = value.copy()
        else:
            # In place: whoever holds self._value (an optimizer slot, a layer) sees it.
            self._value[...] = value

    def _convert_to_tensor(self, value, dtype=None):
        return convert_to_tensor(value, dtype=dtype)

    def __array__(self, dtype=None):
        out = self.value.asnumpy()
        return out if dtype is None else out.astype(dtype)


def convert_to_tensor(x, dtype=None, sparse=None, ragged=None):
    """``x`` as a core NDArray (of ``dtype`` when given, else Keras' inferred dtype)."""
    if sparse:
        raise ValueError("`sparse=True` is not supported with the kbackend backend")
    if ragged:
        raise ValueError("`ragged=True` is not supported with the kbackend backend")
    if dtype is not None:
        dtype = standardize_dtype(dtype)
        _check_dtype(dtype)
    if isinstance(x, Variable):
        x = x.value
    if isinstance(x, NDArray):
        if dtype is not None and standardize_dtype(x.dtype) != dtype:
            return x.astype(_numpy_dtype(dtype))
        return x
    if isinstance(x, KerasTensor):
        raise TypeError(
            f"convert_to_tensor: a symbolic KerasTensor {x} cannot be converted to a "
            f"concrete tensor; it only exists while a functional model is being built")
    if dtype is None:
        if isinstance(x, (numpy.ndarray, numpy.generic)):
            dtype = standardize_dtype(x.dtype)
        else:
            dtype = result_type(
                *[getattr(item, "dtype", type(item)) for item in tree.flatten(x)])
        _check_dtype(dtype)
    if isinstance(x, (list, tuple)):
        x = [convert_to_numpy(v) if isinstance(v, (NDArray, Variable)) else v for v in x]
    return cnp.array(numpy.asarray(x).astype(_numpy_dtype(dtype), copy=False))


def convert_to_numpy(x):
    """A NumPy copy of ``x`` (syncs with the device)."""
    if isinstance(x, Variable):
        x = x.value
    if isinstance(x, NDArray):
        return x.asnumpy()
    return numpy.array(x)


def is_tensor(x):
    return isinstance(x, NDArray)


def shape(x):
    return tuple(x.shape)


def cast(x, dtype):
    return convert_to_tensor(x, dtype=dtype)


def cond(pred, true_fn, false_fn):
    if _as_python_bool(pred):
        return true_fn()
    return false_fn()


def _as_python_bool(pred) -> bool:
    if isinstance(pred, (NDArray, Variable)):
        return bool(convert_to_numpy(pred))
    return bool(pred)


def vectorized_map(function, elements):
    if not isinstance(elements, (list, tuple)):
        elements = convert_to_tensor(elements)
        return cnp.stack([function(elements[i]) for i in range(elements.shape[0])])
    batch_size = shape(convert_to_tensor(elements[0]))[0]
    return cnp.stack([function([x[i] for x in elements]) for i in range(batch_size)])


def compute_output_spec(fn, *args, **kwargs):
    """The KerasTensor(s) ``fn`` returns for the given (symbolic) arguments.

    For now this runs ``fn`` on zero-filled core arrays (twice, with different
    sizes for unknown dimensions, to tell which output dimensions are unknown), as
    Keras' numpy backend does. It is to answer from core's registry shape and dtype
    rules instead, without running anything, once core can trace ops abstractly.
    """
    with StatelessScope(), SymbolicScope():

        def has_none_shape(x):
            return isinstance(x, KerasTensor) and None in x.shape

        none_in_shape = any(builtins.map(has_none_shape, tree.flatten((args, kwargs))))

        def concrete(x, fill_value):
            if isinstance(x, KerasTensor):
                dims = [fill_value if d is None else d for d in x.shape]
                return cnp.array(numpy.zeros(dims, dtype=_numpy_dtype(x.dtype)))
            return x

        with _autograd.pause():
            args_1, kwargs_1 = tree.map_structure(lambda x: concrete(x, 83), (args, kwargs))
            outputs = fn(*args_1, **kwargs_1)
            if none_in_shape:
                args_2, kwargs_2 = tree.map_structure(lambda x: concrete(x, 89),
                                                      (args, kwargs))
                outputs_2 = fn(*args_2, **kwargs_2)
                flat = []
                for x1, x2 in zip(tree.flatten(outputs), tree.flatten(outputs_2)):
                    dims = [d1 if d1 == d2 else None for d1, d2 in zip(x1.shape, x2.shape)]
                    flat.append(KerasTensor(dims, standardize_dtype(x1.dtype)))
                outputs = tree.pack_sequence_as(outputs, flat)

        def to_spec(x):
            if is_tensor(x):
                return KerasTensor(x.shape, standardize_dtype(x.dtype))
            return x

        return tree.map_structure(to_spec, outputs)


def map(f, xs):
    def g(_, x):
        return (), f(x)

    _, ys = scan(g, (), xs)
    return ys


def scan(f, init, xs=None, length=None, reverse=False, unroll=1):
    if not callable(f):
        raise TypeError(f"scan: `f` must be callable. Received: f={f}")
    if not isinstance(unroll, bool) and not (isinstance(unroll, int) and unroll >= 1):
        raise ValueError(
            f"scan: `unroll` must be a positive integer or a boolean. Received: "
            f"unroll={unroll}")
    if xs is None and length is None:
        raise ValueError("scan: got no `xs` to scan over and `length` not provided.")
    xs_flat = [convert_to_tensor(x) for x in tree.flatten(xs)] if xs is not None else []
    if length is None:
        length = int(xs_flat[0].shape[0])
    steps = range(length - 1, -1, -1) if reverse else range(length)
    carry = init
    ys = []
    for i in steps:
        x = tree.pack_sequence_as(xs, [a[i] for a in xs_flat]) if xs is not None else None
        carry, y = f(carry, x)
        ys.append(y)
    if reverse:
        ys.reverse()

    def stack(*items):
        if items and items[0] is None:
            return None
        return cnp.stack([convert_to_tensor(v) for v in items])

    if not ys:
        return carry, None
    if tree.is_nested(ys[0]) or isinstance(ys[0], (list, tuple, dict)):
        if not tree.flatten(ys[0]):
            return carry, ys[0]
        stacked = tree.map_structure(stack, *ys)
    else:
        stacked = stack(*ys)
    return carry, stacked


def switch(index, branches, *operands):
    index = int(convert_to_numpy(convert_to_tensor(index, "int32")))
    index = builtins.min(builtins.max(index, 0), len(branches) - 1)
    return branches[index](*operands)


def while_loop(cond, body, loop_vars, maximum_iterations=None):
    current_iter = 0
    is_tuple = isinstance(loop_vars, (tuple, list))
    loop_vars = tuple(loop_vars) if is_tuple else (loop_vars,)
    loop_vars = tree.map_structure(convert_to_tensor, loop_vars)
    while (maximum_iterations is None or current_iter < maximum_iterations) and \
            _as_python_bool(cond(*loop_vars)):
        loop_vars = body(*loop_vars)
        if not isinstance(loop_vars, (list, tuple)):
            loop_vars = (loop_vars,)
        loop_vars = tuple(loop_vars)
        current_iter += 1
    return loop_vars if is_tuple else loop_vars[0]


def fori_loop(lower, upper, body_fun, init_val):
    val = init_val
    for i in range(int(convert_to_numpy(lower)), int(convert_to_numpy(upper))):
        val = body_fun(i, val)
    return val


def stop_gradient(variable):
    x = convert_to_tensor(variable)
    return x.detach()


def unstack(x, num=None, axis=0):
    x = convert_to_tensor(x)
    x = cnp.moveaxis(x, axis, 0)
    return [x[i] for i in range(x.shape[0])]


def random_seed_dtype():
    # Keras' seeds are uint32 values; core has no uint32, so they are stored as int32
    # (Keras' draw_seed reinterprets the bits), as on Keras' torch backend.
    return "int32"


def _context_of(device_name):
    if isinstance(device_name, _core.Context):
        return device_name
    if not isinstance(device_name, str):
        raise TypeError(
            f"device_scope: expected a device name such as 'cpu:0' or 'gpu:0', or a "
            f"core Context. Received: {device_name!r}")
    kind, _, index = device_name.lower().partition(":")
    kind = {"cuda": "gpu"}.get(kind, kind)
    if kind not in ("cpu", "gpu") or (index and not index.isdigit()):
        raise ValueError(
            f"device_scope: invalid device name {device_name!r}; expected "
            f"'cpu', 'cpu:<i>', 'gpu' or 'gpu:<i>'")
    return _core.cpu(int(index or 0)) if kind == "cpu" else _core.gpu(int(index or 0))


@contextlib.contextmanager
def device_scope(device_name):
    """New tensors are created on ``device_name`` ('cpu:1', 'gpu:0', ...) inside."""
    with _context_of(device_name):
        yield


# Not implemented yet: each raises NotImplementedError naming itself when called.
add_stubs(globals(), "core", ["associative_scan", "scatter", "scatter_update", "slice",
                              "slice_update", "remat"])


class custom_gradient:
    """Not implemented yet: raises NotImplementedError when created."""

    def __init__(self, fun):
        raise NotImplementedError(
            "kbackend: core.custom_gradient is not implemented yet in the kbackend "
            "Keras backend")
