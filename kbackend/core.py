"""Keras backend ``core``: tensors, variables, control flow and shape inference.

Tensors are ``core`` NDArrays; every function starts with ``convert_to_tensor``.
The public names mirror ``keras/src/backend/numpy/core.py``.
"""
from __future__ import annotations

import builtins
import contextlib
import functools
import inspect
import os

import numpy
from keras.src import tree
from keras.src.backend import config
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
from core.ops import abstract as _abstract
from core.ops.infer import UNKNOWN_DIM_PROBES, agreed_dims, fill_unknown
from core.ops.registry import F as _F

SUPPORTS_SPARSE_TENSORS = False
SUPPORTS_RAGGED_TENSORS = False
SUPPORTS_COMPLEX_DTYPES = False
IS_THREAD_SAFE = True

# The dtypes core stores (not complex or strings); Keras' names.
_SUPPORTED = {standardize_dtype(d.name) for d in _core_dtypes.SUPPORTED}


_STANDARD: dict = {}


def _standard(dtype) -> str:
    """Keras' ``standardize_dtype``, memoised (it costs microseconds per call)."""
    try:
        return _STANDARD[dtype]
    except (KeyError, TypeError):
        pass
    name = standardize_dtype(dtype)
    if dtype is not None:  # None means floatx, which can change
        try:
            _STANDARD[dtype] = name
        except TypeError:
            pass
    return name


def _numpy_dtype(dtype: str):
    if dtype == "bfloat16" or dtype.startswith("float8"):
        import ml_dtypes

        return getattr(ml_dtypes, dtype)
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
        elif _autograd.is_recording() and (self._value._node is not None
                                           or value._node is not None):
            # Assigned inside a recorded step (SpectralNormalization does): not
            # differentiable, as in TF and JAX. The variable takes a new array, so the
            # one the tape (and the trainer's gradient list) holds keeps its values.
            self._value = value.detach().copy()
        else:
            # In place: whoever holds self._value (an optimizer slot, a layer) sees it.
            self._value[...] = value

    def _convert_to_tensor(self, value, dtype=None):
        return convert_to_tensor(value, dtype=dtype)

    def __core_ndarray__(self):
        # core operators given a Variable (``ndarray * variable``) use its value, so the
        # result stays on the autograd tape as with ``variable * ndarray``.
        return self.value

    def __array__(self, dtype=None, copy=None):
        # asnumpy() is already a copy, so any `copy` request is met.
        out = self.value.asnumpy()
        return out if dtype is None else out.astype(dtype, copy=False)


def convert_to_tensor(x, dtype=None, sparse=None, ragged=None):
    """``x`` as a core NDArray (of ``dtype`` when given, else Keras' inferred dtype)."""
    if sparse:
        raise ValueError("`sparse=True` is not supported with the kbackend backend")
    if ragged:
        raise ValueError("`ragged=True` is not supported with the kbackend backend")
    if type(x) is NDArray and dtype is None:
        return x
    explicit = dtype is not None
    if explicit:
        dtype = _standard(dtype)
        _check_dtype(dtype)
    if isinstance(x, Variable):
        x = x.value
    if isinstance(x, NDArray):
        if dtype is not None and _standard(x.dtype) != dtype:
            return x.astype(_numpy_dtype(dtype))
        return x
    if isinstance(x, KerasTensor):
        raise TypeError(
            f"convert_to_tensor: a symbolic KerasTensor {x} cannot be converted to a "
            f"concrete tensor; it only exists while a functional model is being built")
    if dtype is None:
        if isinstance(x, (numpy.ndarray, numpy.generic)):
            if x.dtype.kind in "USO":
                raise TypeError(
                    f"convert_to_tensor: arrays of dtype {x.dtype} (strings or Python "
                    f"objects) are not supported by the kbackend backend")
            dtype = _standard(x.dtype)
        else:
            leaves = tree.flatten(x)
            if any(isinstance(item, (str, bytes)) for item in leaves):
                raise TypeError("convert_to_tensor: string tensors are not supported by "
                                "the kbackend backend")
            dtype = result_type(*[getattr(item, "dtype", type(item)) for item in leaves])
        _check_dtype(dtype)
    if isinstance(x, (list, tuple)) and any(
            isinstance(v, (NDArray, Variable)) for v in tree.flatten(x)):
        # Stacked with core ops, so the result stays on the autograd tape (Keras
        # sums a list of loss tensors this way).
        return _stack_nested(x, dtype)
    from_python = not isinstance(x, (numpy.ndarray, numpy.generic))
    x = numpy.asarray(x)
    target = numpy.dtype(_numpy_dtype(dtype))
    if from_python and x.size and x.dtype.kind in "iu" and target.kind in "iu":
        # Python ints that do not fit an inferred int32 widen to int64 (as on torch);
        # ones that do not fit a requested dtype fail instead of wrapping around.
        info = numpy.iinfo(target)
        if x.min() < info.min or x.max() > info.max:
            if not explicit and target == numpy.int32 and x.dtype == numpy.int64:
                return cnp.array(x)
            raise OverflowError(
                f"convert_to_tensor: the value {x.min() if x.min() < info.min else x.max()} "
                f"does not fit in {dtype} (range {info.min}..{info.max}); pass a wider dtype")
    return cnp.array(x.astype(target, copy=False))


def _stack_nested(x, dtype: str):
    if isinstance(x, (list, tuple)):
        return cnp.stack([_stack_nested(v, dtype) for v in x])
    return convert_to_tensor(x, dtype=dtype)


def convert_to_numpy(x):
    """A NumPy copy of ``x`` (syncs with the device)."""
    if isinstance(x, Variable):
        x = x.value
    if isinstance(x, NDArray):
        return x.asnumpy()
    return numpy.array(x)


def is_tensor(x):
    """Whether ``x`` is a kbackend tensor (a core NDArray)."""
    return isinstance(x, NDArray)


def shape(x):
    """The shape of ``x`` (a tensor, Variable or array-like) as a tuple of ints."""
    if not hasattr(x, "shape"):
        x = convert_to_tensor(x)
    return tuple(x.shape)


def cast(x, dtype):
    """``x`` as a tensor of ``dtype`` (``x`` itself when it already has it)."""
    return convert_to_tensor(x, dtype=dtype)


def _float(x):
    """``x`` as a tensor, cast to ``floatx()`` when it is integer or boolean.

    The input conversion of the ops whose result is floating point (``sqrt``,
    ``sigmoid``, ``inv``, ...): float dtypes, bfloat16 included, are kept.
    """
    x = convert_to_tensor(x)
    dtype = _standard(x.dtype)
    if "int" in dtype or dtype == "bool":
        x = cast(x, config.floatx())
    return x


def cond(pred, true_fn, false_fn):
    """``true_fn()`` if ``pred`` (a bool or a one-element tensor) holds, else ``false_fn()``."""
    if _as_python_bool(pred):
        return true_fn()
    return false_fn()


def _as_python_bool(pred) -> bool:
    if isinstance(pred, (NDArray, Variable)):
        return bool(convert_to_numpy(pred))
    return bool(pred)


def _stack_structures(items):
    """Stack a list of equally structured results along a new first axis."""
    if not tree.is_nested(items[0]):
        return cnp.stack([convert_to_tensor(v) for v in items])
    return tree.map_structure(
        lambda *vs: None if vs[0] is None else cnp.stack([convert_to_tensor(v) for v in vs]),
        *items)


def vectorized_map(function, elements):
    """``function`` applied to each slice along the first axis, results stacked.

    ``elements`` may be a tensor or a nested structure of tensors of the same
    length (a list or tuple is passed to ``function`` as a list); ``function``
    may return a nested structure. It runs once per slice (no vectorization yet).
    """
    flat = [convert_to_tensor(x) for x in tree.flatten(elements)]
    if not flat or any(x.ndim == 0 or x.shape[0] != flat[0].shape[0] for x in flat):
        raise ValueError(
            f"vectorized_map: `elements` must hold tensors with the same first dimension; "
            f"got shapes {[tuple(x.shape) for x in flat]}")
    if isinstance(elements, (list, tuple)) and not any(tree.is_nested(e) for e in elements):
        def pack(i):
            return [x[i] for x in flat]
    else:
        def pack(i):
            return tree.pack_sequence_as(elements, [x[i] for x in flat])
    return _stack_structures([function(pack(i)) for i in range(flat[0].shape[0])])


def compute_output_spec(fn, *args, **kwargs):
    """The KerasTensor(s) ``fn`` returns for the given (symbolic) arguments.

    First ``fn`` runs in core's abstract mode (``core.ops.abstract.abstract_eval``):
    each KerasTensor becomes a data-less placeholder array and every operator call on
    placeholders is answered by the operator's ``infer`` rule, so no kernel runs and
    no activation memory is allocated. When some input dimension is unknown, ``fn``
    runs twice, with sizes 83 and 89 (``core.ops.infer.UNKNOWN_DIM_PROBES``, Keras'
    numpy backend's) for the unknown dimensions; output dimensions that differ are
    unknown.

    Whenever the abstract run raises (``fn`` reads values through ``asnumpy``,
    ``convert_to_numpy`` or ``int(x)``, calls an operator without an ``infer`` rule
    or one whose output shape depends on values, writes into a tensor, ...), ``fn``
    runs again concretely, as Keras' numpy backend does: on zeros, and when that
    fails (a singular matrix, say) on identity-like inputs (ones on the diagonal of
    the last two axes), before the first error is raised. Set
    ``KBACKEND_OUTPUT_SPEC_DEBUG=1`` to print each fallback and its reason to
    stderr, ``KBACKEND_ABSTRACT_OUTPUT_SPEC=0`` to always run concretely.
    """
    none_in_shape = any(isinstance(x, KerasTensor) and None in x.shape
                        for x in tree.flatten((args, kwargs)))
    # Each attempt has its own StatelessScope: variable assignments recorded by a failed
    # abstract run (placeholders) must not be read back by the concrete run.
    with SymbolicScope(), _autograd.pause(), numpy.errstate(all="ignore"):
        outputs = None
        if _ABSTRACT_SPEC:
            try:
                with StatelessScope(), _abstract.abstract_eval():
                    outputs = _spec_run(fn, args, kwargs, none_in_shape, "abstract")
            except Exception as e:  # noqa: BLE001 - any failure: run concretely instead
                if _SPEC_DEBUG:
                    import sys

                    print(f"kbackend compute_output_spec: concrete fallback for "
                          f"{getattr(fn, '__qualname__', fn)!r}: {type(e).__name__}: {e}",
                          file=sys.stderr)
                outputs = None
        if outputs is None:
            with StatelessScope():
                outputs = _spec_run(fn, args, kwargs, none_in_shape, "zeros")
    return outputs


_ABSTRACT_SPEC = os.environ.get("KBACKEND_ABSTRACT_OUTPUT_SPEC", "1") != "0"
_SPEC_DEBUG = os.environ.get("KBACKEND_OUTPUT_SPEC_DEBUG", "0") not in ("", "0")


def _spec_input(x, size, kind):
    """A core array standing for KerasTensor ``x`` (unknown dimensions of ``size``)."""
    if not isinstance(x, KerasTensor):
        return x
    dims = fill_unknown(x.shape, size)
    dtype = _numpy_dtype(x.dtype)
    if kind == "abstract":
        return _abstract.placeholder(dims, dtype)
    a = numpy.zeros(dims, dtype=dtype)
    if kind == "eye" and a.size:
        if a.ndim < 2:
            a[...] = 1
        else:
            k = numpy.arange(builtins.min(a.shape[-2:]))
            a[..., k, k] = 1
    return cnp.array(a)


def _spec_run(fn, args, kwargs, none_in_shape, kind):
    """``fn``'s output specs from runs on inputs of ``kind`` ('abstract' or 'zeros')."""

    def run(size, kind):
        args_c, kwargs_c = tree.map_structure(lambda x: _spec_input(x, size, kind),
                                              (args, kwargs))
        return fn(*args_c, **kwargs_c)

    def run_any(size):
        if kind == "abstract":
            return run(size, "abstract")
        try:
            return run(size, "zeros")
        except Exception as first:  # noqa: BLE001 - value-dependent failure: try other values
            try:
                return run(size, "eye")
            except Exception:  # noqa: BLE001
                raise first from None

    outputs = run_any(UNKNOWN_DIM_PROBES[0])
    if none_in_shape:
        outputs_2 = run_any(UNKNOWN_DIM_PROBES[1])

        def merge(x1, x2):
            if not is_tensor(x1):
                return x1
            return KerasTensor(agreed_dims(x1.shape, x2.shape), standardize_dtype(x1.dtype))

        outputs = tree.map_structure(merge, outputs, outputs_2)

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
        raise TypeError(f"scan: `f` should be a callable. Received: f={f!r}")
    if not isinstance(unroll, bool) and not (isinstance(unroll, int) and unroll >= 1):
        raise ValueError(
            f"scan: `unroll` must be an positive integer or boolean. Received: "
            f"unroll={unroll!r}")
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
        return carry, _empty_scan_outputs(f, init, xs, xs_flat)
    if tree.is_nested(ys[0]) or isinstance(ys[0], (list, tuple, dict)):
        if not tree.flatten(ys[0]):
            return carry, ys[0]
        stacked = tree.map_structure(stack, *ys)
    else:
        stacked = stack(*ys)
    return carry, stacked


def _empty_scan_outputs(f, init, xs, xs_flat):
    """The stacked outputs of a scan of length 0: empty arrays of ``f``'s output specs."""
    x = None
    if xs is not None:
        x = tree.pack_sequence_as(xs, [KerasTensor(a.shape[1:], standardize_dtype(a.dtype))
                                       for a in xs_flat])
    _, y = compute_output_spec(f, init, x)

    def empty(spec):
        if spec is None:
            return None
        if not isinstance(spec, KerasTensor):  # a constant output
            spec = convert_to_tensor(spec)
        return cnp.array(numpy.zeros((0, *spec.shape),
                                     dtype=_numpy_dtype(standardize_dtype(spec.dtype))))

    return tree.map_structure(empty, y)


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


# ------------------------------------------------------------------ associative_scan
def associative_scan(f, elems, reverse=False, axis=0):
    """Inclusive scan of ``elems`` along ``axis`` with an associative ``f``.

    ``f(a, b)`` combines two (nested structures of) slices of ``elems`` that keep
    the scanned axis; it must work elementwise along that axis. The scan is the
    recursive odd/even one, so ``f`` is called O(log n) times on whole slices, and
    gradients flow through ``f``'s core operators.

    Args:
        f: the associative binary function.
        elems: a tensor or a nested structure of tensors, all of the same length
            along ``axis``.
        reverse: scan from the end.
        axis: the scanned axis.

    Returns:
        The scanned values, in the structure of ``elems``.
    """
    if not callable(f):
        raise TypeError(f"associative_scan: `f` should be a callable. Received: f={f!r}")
    flat = [convert_to_tensor(x) for x in tree.flatten(elems)]
    if not flat:
        raise ValueError("associative_scan: `elems` holds no tensors")
    ndim = flat[0].ndim
    if not -ndim <= axis < ndim:
        raise ValueError(f"associative_scan: axis {axis} is out of range for elems of shape "
                         f"{tuple(flat[0].shape)}")
    axis = axis % ndim
    n = flat[0].shape[axis]
    if any(x.ndim <= axis or x.shape[axis] != n for x in flat):
        raise ValueError(
            f"associative_scan: array inputs must have the same first dimension along the "
            f"scanned axis {axis}; got shapes {[tuple(x.shape) for x in flat]}")
    if reverse:
        flat = [cnp.flip(x, axis) for x in flat]

    def take(x, start, stop=None, step=None):
        return x[(builtins.slice(None),) * axis + (builtins.slice(start, stop, step),)]

    def combine(a, b):
        out = f(tree.pack_sequence_as(elems, a), tree.pack_sequence_as(elems, b))
        return [convert_to_tensor(x) for x in tree.flatten(out)]

    def interleave(a, b):
        # a[0], b[0], a[1], b[1], ...; ``a`` may be one longer than ``b``.
        extra = a.shape[axis] - b.shape[axis]
        head = take(a, 0, b.shape[axis]) if extra else a
        merged = cnp.stack([head, b], axis=axis + 1)
        shape = a.shape[:axis] + (2 * b.shape[axis],) + a.shape[axis + 1:]
        merged = cnp.reshape(merged, shape)
        return cnp.concatenate([merged, take(a, -1)], axis=axis) if extra else merged

    def scan(xs):
        length = xs[0].shape[axis]
        if length < 2:
            return xs
        # odd[k]: the prefix ending at 2k+1; even[k]: the prefix ending at 2k.
        odd = scan(combine([take(x, 0, -1, 2) for x in xs], [take(x, 1, None, 2) for x in xs]))
        if length % 2 == 0:
            even = combine([take(o, 0, -1) for o in odd], [take(x, 2, None, 2) for x in xs])
        else:
            even = combine(odd, [take(x, 2, None, 2) for x in xs])
        even = [cnp.concatenate([take(x, 0, 1), e], axis=axis) for x, e in zip(xs, even)]
        return [interleave(e, o) for e, o in zip(even, odd)]

    out = scan(flat)
    if reverse:
        out = [cnp.flip(x, axis) for x in out]
    return tree.pack_sequence_as(elems, out)


# ------------------------------------------------------------------ scatter and slices
def _int_vector(values, what: str, name: str) -> list:
    """A list of Python ints from a list, array or tensor of integers."""
    arr = numpy.asarray(convert_to_numpy(values) if isinstance(values, (NDArray, Variable))
                        else values)
    if arr.ndim > 1 or (arr.size and arr.dtype.kind not in "iub"):
        raise TypeError(f"{what}: `{name}` must be a 1-D sequence of integers. Received: "
                        f"{name}={values!r}")
    return [int(v) for v in arr.reshape(-1)]


def _index_matrix(indices, shape, what: str) -> numpy.ndarray:
    """Integer ``indices`` of shape (..., M) as a checked (N, M) NumPy array."""
    idx = numpy.asarray(convert_to_numpy(indices) if isinstance(indices, (NDArray, Variable))
                        else indices)
    if idx.size and idx.dtype.kind not in "iu":
        raise TypeError(f"{what}: `indices` must be integers. Received indices of dtype "
                        f"{idx.dtype}")
    if idx.ndim == 0 or idx.shape[-1] > len(shape):
        raise ValueError(
            f"{what}: `indices` must have shape (..., M) with M <= {len(shape)}, the rank of "
            f"the target of shape {tuple(shape)}. Received indices of shape {idx.shape}")
    m = idx.shape[-1]
    idx = idx.reshape(-1, m).astype(numpy.int64)
    for d in range(m):
        col, size = idx[:, d], shape[d]
        bad = col[(col < -size) | (col >= size)]
        if bad.size:
            raise IndexError(f"{what}: index {int(bad[0])} is out of bounds for axis {d} with "
                             f"size {size} (target shape {tuple(shape)})")
    return idx


def _rows(values, idx_shape, shape, m, what):
    """``values`` reshaped to (N,) + shape[M:] (broadcast when it has fewer elements)."""
    want = tuple(idx_shape[:-1]) + tuple(shape[m:])
    if tuple(values.shape) != want:
        try:
            values = cnp.broadcast_to(values, want)
        except (ValueError, TypeError) as e:
            raise ValueError(
                f"{what}: values of shape {tuple(values.shape)} do not match indices of shape "
                f"{tuple(idx_shape)} into shape {tuple(shape)}; expected values of shape "
                f"{want}") from e
    return cnp.reshape(values, (-1,) + tuple(shape[m:]))


def scatter(indices, values, shape):
    """Zeros of ``shape`` with ``values`` added at ``indices`` (repeats add up).

    Args:
        indices: integers of shape (..., M), each row indexing the first M axes.
        values: of shape ``indices.shape[:-1] + shape[M:]``.
        shape: the output shape.

    Returns:
        A tensor of ``shape`` and ``values``' dtype; differentiable in ``values``.
    """
    values = convert_to_tensor(values)
    shape = tuple(_int_vector(shape, "scatter", "shape"))
    raw = numpy.asarray(convert_to_numpy(indices) if isinstance(indices, (NDArray, Variable))
                        else indices)
    idx = _index_matrix(raw, shape, "scatter")
    m = idx.shape[1]
    rows = _rows(values, raw.shape, shape, m, "scatter")
    return _F._scatter_add(rows, key=tuple(idx.T), shape=shape)


_REDUCTIONS = {"max": cnp.maximum, "min": cnp.minimum, "mul": cnp.multiply}


def scatter_update(inputs, indices, updates, reduction=None):
    """A copy of ``inputs`` with ``updates`` written at ``indices``.

    Args:
        inputs: the tensor to update (it is not changed).
        indices: integers of shape (..., M), each row indexing the first M axes.
        updates: of shape ``indices.shape[:-1] + inputs.shape[M:]``, cast to
            ``inputs``' dtype.
        reduction: None (write; the last of repeated indices wins), ``"add"``,
            ``"max"``, ``"min"`` or ``"mul"`` (combine with what is there, repeated
            indices one after another).

    Returns:
        The updated tensor; differentiable in ``inputs`` and ``updates``.
    """
    if reduction not in (None, "add", "max", "min", "mul"):
        raise ValueError(f"scatter_update: unsupported reduction {reduction!r}; expected None, "
                         f"'add', 'max', 'min' or 'mul'")
    inputs = convert_to_tensor(inputs)
    updates = cast(updates, standardize_dtype(inputs.dtype))
    shape = tuple(inputs.shape)
    raw = numpy.asarray(convert_to_numpy(indices) if isinstance(indices, (NDArray, Variable))
                        else indices)
    idx = _index_matrix(raw, shape, "scatter_update")
    m = idx.shape[1]
    rows = _rows(updates, raw.shape, shape, m, "scatter_update")
    if reduction == "add":
        return inputs + _F._scatter_add(rows, key=tuple(idx.T), shape=shape)
    # Rows are applied in rounds in which no index repeats: round r takes each index's
    # r-th occurrence, so repeats combine (or overwrite) in order, through core ops.
    flat = numpy.ravel_multi_index(tuple((idx % numpy.array(shape[:m])).T), shape[:m])
    order = numpy.argsort(flat, kind="stable")
    sorted_keys = flat[order]
    first = numpy.searchsorted(sorted_keys, sorted_keys, side="left")
    occurrence = numpy.empty_like(order)
    occurrence[order] = numpy.arange(order.size) - first
    out = inputs
    for r in range(int(occurrence.max()) + 1 if occurrence.size else 0):
        sel = numpy.nonzero(occurrence == r)[0]
        key = tuple(idx[sel].T)
        value = rows if sel.size == idx.shape[0] else rows[sel]
        if reduction is not None:
            value = _REDUCTIONS[reduction](out[key], value)
        out = _F._index_update(out, value, key=key)
    return out


def _slice_starts(what, shape, start_indices, sizes):
    """Start indices clamped so each slice fits (as ``jax.lax.dynamic_slice`` does)."""
    starts = _int_vector(start_indices, what, "start_indices")
    if len(starts) != len(sizes) or len(starts) > len(shape):
        raise ValueError(
            f"{what}: `start_indices` ({len(starts)} values) must give one start per sliced "
            f"axis ({len(sizes)}) and at most one per axis of the input of shape "
            f"{tuple(shape)}. Received start_indices={starts}")
    for d, (dim, size) in enumerate(zip(shape, sizes)):
        if not 0 <= size <= dim:
            raise ValueError(f"{what}: slice size {size} along axis {d} does not fit the "
                             f"input of shape {tuple(shape)} (sizes {list(sizes)})")
    return [builtins.min(builtins.max(s, 0), dim - size)
            for s, dim, size in zip(starts, shape, sizes)]


def slice(inputs, start_indices, shape):
    """``inputs[s0:s0 + n0, s1:s1 + n1, ...]`` with starts that may be tensors.

    Starts are clamped so the slice lies inside ``inputs`` (JAX's rule); a size of
    -1 takes the rest of that axis.

    Args:
        inputs: the tensor to slice.
        start_indices: one start per sliced (leading) axis.
        shape: the size of each sliced axis.

    Returns:
        The slice; differentiable in ``inputs``.
    """
    inputs = convert_to_tensor(inputs)
    sizes = _int_vector(shape, "slice", "shape")
    starts = _int_vector(start_indices, "slice", "start_indices")
    sizes = [dim - s if n == -1 else n for n, s, dim in zip(sizes, starts, inputs.shape)]
    starts = _slice_starts("slice", inputs.shape, starts, sizes)
    return inputs[tuple(builtins.slice(s, s + n) for s, n in zip(starts, sizes))]


def slice_update(inputs, start_indices, updates):
    """A copy of ``inputs`` with ``updates`` written at ``start_indices``.

    Starts are clamped so ``updates`` lies inside ``inputs`` (JAX's rule).

    Args:
        inputs: the tensor to update (it is not changed).
        start_indices: one start per axis.
        updates: a tensor of the same rank, cast to ``inputs``' dtype.

    Returns:
        The updated tensor; differentiable in ``inputs`` and ``updates``.
    """
    inputs = convert_to_tensor(inputs)
    updates = cast(updates, standardize_dtype(inputs.dtype))
    if updates.ndim != inputs.ndim:
        raise ValueError(f"slice_update: `updates` of shape {tuple(updates.shape)} must have "
                         f"the rank of `inputs` of shape {tuple(inputs.shape)}")
    starts = _slice_starts("slice_update", inputs.shape, start_indices, updates.shape)
    key = tuple(builtins.slice(s, s + n) for s, n in zip(starts, updates.shape))
    return _F._index_update(inputs, updates, key=key)


# ------------------------------------------------------------------ gradients
def remat(f):
    """``f`` for rematerialization (``keras.RematScope``); it runs ``f`` as it is.

    Nothing is recomputed yet: the tape keeps ``f``'s intermediate values as for
    any function, so results and gradients are right but no memory is saved.
    Recomputing would need the tape to replay ``f`` with every variable it reads,
    which core's ``autograd.Function`` (explicit inputs only) cannot see.
    """

    @functools.wraps(f)
    def wrapped(*args, **kwargs):
        return f(*args, **kwargs)

    return wrapped


class _CustomGradient(_autograd.Function):
    """One call of a ``custom_gradient`` function, as a core autograd Function."""

    def __init__(self, fun, args, kwargs, flat, positions):
        super().__init__()
        self.fun, self.args, self.kwargs = fun, args, kwargs
        self.flat, self.positions = flat, positions
        self.grad_fn = self.structure = self.call_args = None

    def forward(self, *inputs):
        flat = list(self.flat)
        for i, x in zip(self.positions, inputs):
            flat[i] = x
        self.call_args = tree.pack_sequence_as(self.args, flat)
        res = self.fun(*self.call_args, **self.kwargs)
        if not (isinstance(res, (tuple, list)) and len(res) == 2 and callable(res[1])):
            raise TypeError(
                f"custom_gradient: {getattr(self.fun, '__name__', self.fun)} must return a "
                f"tuple (output, grad_fn). Received: {type(res).__name__}")
        output, self.grad_fn = res
        self.structure = output
        return tuple(convert_to_tensor(x) for x in tree.flatten(output))

    def backward(self, *grads):
        upstream = tree.pack_sequence_as(self.structure, list(grads))
        # Keras' torch convention, grad_fn(*args, upstream=...), when grad_fn takes
        # `upstream` by keyword after *args; otherwise TF/JAX's grad_fn(upstream).
        try:
            params = inspect.signature(self.grad_fn).parameters
        except (TypeError, ValueError):
            params = {}
        up = params.get("upstream")
        if up is not None and up.kind is inspect.Parameter.KEYWORD_ONLY:
            res = self.grad_fn(*self.call_args, upstream=upstream)
        else:
            res = self.grad_fn(*grads)
        res = tree.flatten(res) if isinstance(res, (tuple, list)) else [res]
        if len(res) == len(self.flat) != len(self.positions):
            res = [res[i] for i in self.positions]
        if len(res) != len(self.positions):
            raise ValueError(
                f"custom_gradient: grad_fn of {getattr(self.fun, '__name__', self.fun)} "
                f"returned {len(res)} gradients for {len(self.positions)} tensor arguments")
        out = []
        for g, i in zip(res, self.positions):
            x = self.flat[i]
            if g is None:
                out.append(None)
                continue
            g = cast(g, standardize_dtype(x.dtype))
            if tuple(g.shape) != tuple(x.shape):
                if g.size != builtins.max(x.size, 1) and x.size:
                    g = _F.sum_to(cnp.broadcast_to(g, numpy.broadcast_shapes(
                        tuple(g.shape), tuple(x.shape))), shape=tuple(x.shape))
                else:
                    g = cnp.reshape(g, tuple(x.shape))
            out.append(g)
        return tuple(out)


def custom_gradient(fun):
    """Decorate ``fun`` so that core.autograd uses the gradient it supplies.

    ``fun(*args, **kwargs)`` returns ``(output, grad_fn)``. The decorated function
    returns ``output``; when recorded, the gradients of its tensor (and Variable)
    arguments are what ``grad_fn`` returns for the output's gradient ``upstream``.
    ``grad_fn`` is called as ``grad_fn(*args, upstream=upstream)`` when it has a
    keyword-only ``upstream`` parameter (Keras' torch convention, ``def grad(*args,
    upstream=None)``), else as ``grad_fn(*upstream)`` (TF/JAX's). It returns one gradient (or None) per tensor argument, or per
    flattened argument. Tensors in ``kwargs`` get no gradient. ``grad_fn`` runs
    outside the tape, so the custom gradient is not itself differentiable.

    Example:
        >>> @custom_gradient
        ... def log1pexp(x):
        ...     e = ops.exp(x)
        ...     def grad(upstream):
        ...         return upstream * (1.0 - 1.0 / (1 + e))
        ...     return ops.log(1 + e), grad
    """

    @functools.wraps(fun)
    def decorated(*args, **kwargs):
        flat = tree.flatten(args)
        positions = [i for i, x in enumerate(flat) if isinstance(x, (NDArray, Variable))]
        flat = [convert_to_tensor(x) if i in positions else x for i, x in enumerate(flat)]
        fn = _CustomGradient(fun, args, kwargs, flat, positions)
        outs = fn(*[flat[i] for i in positions])
        outs = outs if isinstance(outs, tuple) else (outs,)
        return tree.pack_sequence_as(fn.structure, list(outs))

    return decorated
