"""Random inputs and small tensors (drawn from NumPy's global generator, as MXNet's are).

Part of ``core.test_utils`` (MXNet's ``mx.test_utils``); import from there.
"""
from __future__ import annotations

import numpy as np

from ..context import as_context
from ..ndarray import NDArray
from .sparse_inputs import create_sparse_array, create_sparse_array_zd, rand_sparse_ndarray
from .tolerance import default_context, default_dtype

__all__ = [
    "assign_each",
    "assign_each2",
    "collapse_sum_like",
    "create_2d_tensor",
    "create_sparse_array",
    "create_sparse_array_zd",
    "create_vector",
    "get_identity_mat",
    "get_identity_mat_batch",
    "new_matrix_with_real_eigvals_2d",
    "new_matrix_with_real_eigvals_nd",
    "new_orthonormal_matrix_2d",
    "new_sym_matrix_with_real_eigvals_2d",
    "new_sym_matrix_with_real_eigvals_nd",
    "np_reduce",
    "rand_coord_2d",
    "rand_ndarray",
    "rand_shape_2d",
    "rand_shape_3d",
    "rand_shape_nd",
    "rand_sparse_ndarray",
    "random_arrays",
    "random_sample",
    "random_uniform_arrays",
]


def random_arrays(*shapes):
    """Standard-normal NumPy arrays (float32) of the given shapes; one array for one shape.

    Example:
        >>> a, b = random_arrays((2, 3), ())
        >>> a.shape, b.shape, a.dtype.name
        ((2, 3), (), 'float32')
    """
    arrays = [np.array(np.random.randn(), dtype=default_dtype()) if len(s) == 0
              else np.random.randn(*s).astype(default_dtype()) for s in shapes]
    return arrays[0] if len(arrays) == 1 else arrays


def random_uniform_arrays(*shapes, low=0.0, high=1.0, dtype=None):
    """Uniform random NumPy arrays in ``[low, high)`` (a list, one per shape)."""
    dtype = default_dtype() if dtype is None else dtype
    return [np.random.uniform(low, high, size=s).astype(dtype) for s in shapes]


def random_sample(population, k: int) -> list:
    """``k`` elements of ``population`` in random order (without replacement)."""
    if not 0 <= k <= len(population):
        raise ValueError(f"random_sample: k={k} is not in [0, {len(population)}]")
    pool = list(population)
    np.random.shuffle(pool)
    return pool[:k]


def rand_shape_2d(dim0: int = 10, dim1: int = 10, allow_zero_size: bool = False) -> tuple:
    """A random 2-d shape, each size in ``[1, dim]`` (``[0, dim]`` with allow_zero_size)."""
    low = 0 if allow_zero_size else 1
    return np.random.randint(low, dim0 + 1), np.random.randint(low, dim1 + 1)


def rand_shape_3d(dim0: int = 10, dim1: int = 10, dim2: int = 10,
                  allow_zero_size: bool = False) -> tuple:
    """A random 3-d shape, each size in ``[1, dim]`` (``[0, dim]`` with allow_zero_size)."""
    low = 0 if allow_zero_size else 1
    return (np.random.randint(low, dim0 + 1), np.random.randint(low, dim1 + 1),
            np.random.randint(low, dim2 + 1))


def rand_shape_nd(num_dim: int, dim: int = 10, allow_zero_size: bool = False) -> tuple:
    """A random ``num_dim``-d shape, each size in ``[1, dim]``.

    Example:
        >>> s = rand_shape_nd(4, dim=3)
        >>> len(s), all(1 <= d <= 3 for d in s)
        (4, True)
    """
    low = 0 if allow_zero_size else 1
    return tuple(int(d) for d in np.random.randint(low, dim + 1, size=num_dim))


def rand_coord_2d(x_low: int, x_high: int, y_low: int, y_high: int) -> tuple:
    """A random integer point with ``x_low <= x < x_high`` and ``y_low <= y < y_high``."""
    return (np.random.randint(x_low, x_high, dtype=np.int64),
            np.random.randint(y_low, y_high, dtype=np.int64))


def _dense_only(where: str, stype) -> None:
    """Refuse a sparse ``stype`` where a helper computes on dense storage only."""
    if stype not in (None, "default"):
        raise NotImplementedError(
            f"{where}: stype={stype!r}: this helper checks dense storage only "
            "(stype='default')")


def rand_ndarray(shape, stype: str = "default", density=None, dtype=None, modifier_func=None,
                 shuffle_csr_indices: bool = False, distribution=None, ctx=None) -> NDArray:
    """A random NDArray (MXNet's ``rand_ndarray``): standard-normal values for dense
    storage, a random sparse array (``rand_sparse_ndarray``) for ``'row_sparse'``/``'csr'``.

    Args:
        shape: the shape.
        stype: ``'default'``, ``'row_sparse'`` or ``'csr'``.
        density, modifier_func, shuffle_csr_indices, distribution: for sparse arrays
            (see :func:`~core.testing.sparse_inputs.rand_sparse_ndarray`).
        dtype: the dtype (default float32).
        ctx: the context (default: :func:`default_context`).

    Returns:
        An NDArray (a RowSparseNDArray or CSRNDArray for sparse storage).

    Example:
        >>> rand_ndarray((2, 3)).shape
        (2, 3)
        >>> rand_ndarray((4, 5), 'csr', density=0.5).stype
        'csr'
    """
    ctx = as_context(ctx) if ctx is not None else default_context()
    if stype in (None, "default"):
        values = random_arrays(tuple(shape))
        return NDArray(values.astype(dtype if dtype is not None else default_dtype()),
                       ctx=ctx)
    return rand_sparse_ndarray(shape, stype, density=density, modifier_func=modifier_func,
                               dtype=dtype, shuffle_csr_indices=shuffle_csr_indices,
                               distribution=distribution, ctx=ctx)[0]


def create_2d_tensor(rows: int, columns: int, dtype=np.int64) -> NDArray:
    """A (rows, columns) NDArray whose row ``i`` is all ``i`` (large-tensor tests)."""
    from .. import nd

    return nd.broadcast_to(nd.arange(0, rows, dtype=dtype).reshape((rows, 1)),
                           shape=(rows, columns))


def create_vector(size: int, dtype=np.int64) -> NDArray:
    """``arange(size)`` as an NDArray (large-vector tests)."""
    from .. import nd

    return nd.arange(0, size, dtype=dtype)


def get_identity_mat(size: int) -> NDArray:
    """The (size, size) identity as a float32 NDArray."""
    return NDArray(np.eye(size, dtype=np.float32), ctx=default_context())


def get_identity_mat_batch(size: int) -> NDArray:
    """Two (size, size) identities stacked: shape (2, size, size)."""
    eye = np.eye(size, dtype=np.float32)
    return NDArray(np.stack([eye, eye]), ctx=default_context())


def assign_each(the_input, function):
    """``function`` applied to every element of a NumPy array: a new float64 array, as
    MXNet's (a copy when ``function`` is None)."""
    if function is None:
        return np.array(the_input)
    out = np.zeros(np.shape(the_input))
    for i, v in np.ndenumerate(the_input):
        out[i] = function(v)
    return out


def assign_each2(input1, input2, function):
    """``function(a, b)`` applied to every pair of elements of two same-shape arrays."""
    if function is None:
        return np.array(input1)
    if np.shape(input1) != np.shape(input2):
        raise ValueError(f"assign_each2: shapes {np.shape(input1)} and {np.shape(input2)} "
                         "differ")
    out = np.zeros(np.shape(input1))
    for i, v in np.ndenumerate(input1):
        out[i] = function(v, input2[i])
    return out


def np_reduce(dat, axis, keepdims: bool, numpy_reduce_func):
    """Reduce ``dat`` over ``axis`` (None, an int or several) one axis at a time.

    Example:
        >>> np_reduce(np.ones((2, 3, 4)), (0, 2), True, np.sum).shape
        (1, 3, 1)
    """
    axes = [axis] if isinstance(axis, int) else \
        list(range(dat.ndim)) if axis is None else list(axis)
    axes = [a % dat.ndim for a in axes] if dat.ndim else axes
    ret = dat
    for i in sorted(axes, reverse=True):
        ret = numpy_reduce_func(ret, axis=i)
    if keepdims:
        shape = list(dat.shape)
        for i in axes:
            shape[i] = 1
        ret = np.asarray(ret).reshape(tuple(shape))
    return ret


def collapse_sum_like(a, shape):
    """Sum NumPy array ``a`` over the axes that broadcasting ``shape`` to ``a.shape`` adds.

    Example:
        >>> collapse_sum_like(np.ones((2, 3, 4)), (3, 1)).tolist()
        [[8.0], [8.0], [8.0]]
    """
    shape = tuple(shape)
    if len(a.shape) < len(shape):
        raise ValueError(f"collapse_sum_like: shape {shape} has more axes than {a.shape}")
    if int(np.prod(shape)) == 0 or a.size == 0:
        return np.zeros(shape, dtype=a.dtype)
    lead = len(a.shape) - len(shape)
    axes = list(range(lead))
    for i, s in enumerate(shape):
        if s != a.shape[lead + i]:
            if s != 1:
                raise ValueError(f"collapse_sum_like: {shape} does not broadcast to {a.shape}")
            axes.append(lead + i)
    return np.sum(a, axis=tuple(axes)).reshape(shape)


def new_matrix_with_real_eigvals_2d(n: int):
    """A random (n, n) matrix with real eigenvalues (a random similarity transform of a
    diagonal matrix)."""
    shape = (n, n)
    q = np.random.uniform(-1.0, 1.0, shape)
    while np.abs(np.linalg.det(q)) < 1e-3:
        q = np.random.uniform(-1.0, 1.0, shape)
    d = np.diag(np.random.uniform(-1.0, 1.0, n))
    return q @ d @ np.linalg.inv(q)


def new_matrix_with_real_eigvals_nd(shape):
    """A batch of matrices with real eigenvalues: ``shape[:-2]`` of (n, n)."""
    n = int(np.prod(shape[:-2]))
    return np.array([new_matrix_with_real_eigvals_2d(shape[-1]) for _ in range(n)]) \
        .reshape(shape)


def new_orthonormal_matrix_2d(n: int):
    """A random (n, n) orthonormal matrix."""
    q, _ = np.linalg.qr(np.random.uniform(-1.0, 1.0, (n, n)))
    return q


def new_sym_matrix_with_real_eigvals_2d(n: int):
    """A random symmetric (n, n) matrix."""
    q = new_orthonormal_matrix_2d(n)
    return q @ np.diag(np.random.uniform(-1.0, 1.0, n)) @ q.T


def new_sym_matrix_with_real_eigvals_nd(shape):
    """A batch of random symmetric matrices."""
    n = int(np.prod(shape[:-2]))
    return np.array([new_sym_matrix_with_real_eigvals_2d(shape[-1]) for _ in range(n)]) \
        .reshape(shape)
