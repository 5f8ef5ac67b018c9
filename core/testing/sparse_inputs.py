"""Random sparse arrays with MXNet 1.9.1's ``test_utils`` signatures
(``rand_sparse_ndarray``, ``create_sparse_array``, ``create_sparse_array_zd``,
``shuffle_csr_column_indices``), drawn from NumPy's global generator as MXNet's are.

Part of ``core.test_utils`` (MXNet's ``mx.test_utils``); import from there.

Example:
    >>> import numpy as np
    >>> from core.testing.sparse_inputs import rand_sparse_ndarray
    >>> np.random.seed(0)
    >>> arr, (values, indices) = rand_sparse_ndarray((5, 3), 'row_sparse', density=0.5)
    >>> arr.stype, arr.shape, values.shape[0] == indices.shape[0]
    ('row_sparse', (5, 3), True)
"""
from __future__ import annotations

import numpy as np

from ..context import as_context
from .tolerance import default_context, default_dtype

__all__ = ["create_sparse_array", "create_sparse_array_zd", "rand_sparse_ndarray",
           "shuffle_csr_column_indices"]


def _validate_csr(num_rows: int, num_cols: int, density: float, distribution: str) -> None:
    if density < 0 or density > 1:
        raise ValueError(f"rand_sparse_ndarray: density has to be between 0 and 1, got "
                         f"{density}")
    if num_rows <= 0 or num_cols <= 0:
        raise ValueError(f"rand_sparse_ndarray: num_rows and num_cols must be > 0, got "
                         f"({num_rows}, {num_cols})")
    if distribution == "powerlaw" and int(num_rows * num_cols * density) < 2 * num_rows:
        raise ValueError(f"rand_sparse_ndarray: density {density} is not supported for shape "
                         f"({num_rows}, {num_cols}) with 'powerlaw': keep "
                         "num_rows * num_cols * density >= 2 * num_rows")


def shuffle_csr_column_indices(csr) -> None:
    """Shuffle the column indices of each row of a scipy csr matrix, in place."""
    for i in range(len(csr.indptr) - 1):
        lo, hi = csr.indptr[i], csr.indptr[i + 1]
        sub = np.array(csr.indices[lo:hi])
        np.random.shuffle(sub)
        csr.indices[lo:hi] = sub


def _uniform_csr(num_rows, num_cols, density, dtype, data_init, shuffle):
    import scipy.sparse as spsp

    from ..sparse import csr_matrix

    _validate_csr(num_rows, num_cols, density, "uniform")
    csr = spsp.rand(num_rows, num_cols, density, dtype=dtype, format="csr")
    if data_init is not None:
        csr.data.fill(data_init)
    if shuffle:
        shuffle_csr_column_indices(csr)
    return csr_matrix((csr.data, csr.indices, csr.indptr), shape=(num_rows, num_cols),
                      dtype=dtype)


def _powerlaw_csr(num_rows, num_cols, density, dtype):
    from ..ndarray import array

    _validate_csr(num_rows, num_cols, density, "powerlaw")
    unused = int(num_rows * num_cols * density)
    out = np.zeros((num_rows, num_cols), dtype=dtype)

    def done():
        return array(out, dtype=dtype).tostype("csr")

    for row in range(num_rows):  # one value at the start of every row first
        out[row][0] = 1 + np.random.uniform(0.001, 2)
        unused -= 1
        if unused <= 0:
            return done()
    col_max = 2
    for row in range(num_rows):  # then 2**i values in row i
        limit = min(num_cols, col_max)
        if limit == num_cols and unused > limit:
            out[row] = 1 + np.random.uniform(0.001, 2)
            unused = unused - limit + 1
            if unused <= 0:
                return done()
            continue
        for col in range(1, limit):
            out[row][col] = 1 + np.random.uniform(0.001, 2)
            unused -= 1
            if unused <= 0:
                return done()
        col_max *= 2
    if unused > 0:
        raise ValueError(f"rand_sparse_ndarray: density {density} is not supported for shape "
                         f"({num_rows}, {num_cols}) with 'powerlaw'")
    return done()


def rand_sparse_ndarray(shape, stype: str, density=None, dtype=None, distribution=None,
                        data_init=None, rsp_indices=None, modifier_func=None,
                        shuffle_csr_indices: bool = False, ctx=None):
    """A random sparse array and its parts (MXNet's ``rand_sparse_ndarray``).

    Args:
        shape: the shape (csr: 2-D).
        stype: ``'row_sparse'`` or ``'csr'``.
        density: the fraction of rows (row_sparse) or entries (csr) stored; random when
            left out.
        dtype: the dtype (default float32).
        distribution: ``'uniform'`` (default) or, for csr, ``'powerlaw'``.
        data_init: a value every stored entry takes.
        rsp_indices: the row ids of a row_sparse array.
        modifier_func: a function applied to each stored value.
        shuffle_csr_indices: leave the column ids of each csr row unsorted.
        ctx: the context (default: ``default_context()``).

    Returns:
        ``(array, (values, indices))`` for row_sparse (NumPy arrays), ``(array, (indptr,
        indices, data))`` for csr (NDArrays).
    """
    from ..sparse import row_sparse_array, zeros
    from .inputs import assign_each

    ctx = as_context(ctx) if ctx is not None else default_context()
    density = np.random.rand() if density is None else density
    dtype = default_dtype() if dtype is None else dtype
    distribution = "uniform" if distribution is None else distribution
    if stype == "row_sparse":
        if distribution != "uniform":
            raise ValueError(f"rand_sparse_ndarray: distribution {distribution!r} is not "
                             "supported for row_sparse")
        if rsp_indices is not None:
            indices = np.asarray(rsp_indices)
            if len(indices) > shape[0]:
                raise ValueError(f"rand_sparse_ndarray: {len(indices)} rsp_indices for "
                                 f"{shape[0]} rows")
        else:
            indices = np.argwhere(np.random.rand(shape[0]) < density).flatten()
        if indices.shape[0] == 0:
            return (zeros("row_sparse", shape, ctx=ctx, dtype=dtype),
                    (np.array([], dtype=dtype), np.array([])))
        val = np.random.rand(indices.shape[0], *shape[1:]).astype(dtype)
        if data_init is not None:
            val.fill(data_init)
        if modifier_func is not None:
            val = assign_each(val, modifier_func)
        arr = row_sparse_array((val, indices), shape=shape, dtype=dtype, ctx=ctx)
        return arr, (val, indices)
    if stype == "csr":
        if len(shape) != 2:
            raise ValueError(f"rand_sparse_ndarray: csr arrays are 2-D, got shape {shape}")
        if distribution == "uniform":
            csr = _uniform_csr(shape[0], shape[1], density, dtype, data_init,
                               shuffle_csr_indices)
        elif distribution == "powerlaw":
            csr = _powerlaw_csr(shape[0], shape[1], density, dtype)
        else:
            raise ValueError(f"rand_sparse_ndarray: unknown distribution {distribution!r}")
        csr = csr.as_in_context(ctx)
        return csr, (csr.indptr, csr.indices, csr.data)
    raise ValueError(f"rand_sparse_ndarray: unknown storage type {stype!r} (expected "
                     "'row_sparse' or 'csr')")


def create_sparse_array(shape, stype: str, data_init=None, rsp_indices=None, dtype=None,
                        modifier_func=None, density=0.5, shuffle_csr_indices: bool = False):
    """A random sparse array (MXNet's ``create_sparse_array``; row ids sorted)."""
    if stype == "row_sparse":
        idx = None if rsp_indices is None else np.sort(np.asarray(rsp_indices))
        return rand_sparse_ndarray(shape, stype, density=density, data_init=data_init,
                                   rsp_indices=idx, dtype=dtype,
                                   modifier_func=modifier_func)[0]
    if stype == "csr":
        return rand_sparse_ndarray(shape, stype, density=density, data_init=data_init,
                                   dtype=dtype, modifier_func=modifier_func,
                                   shuffle_csr_indices=shuffle_csr_indices)[0]
    raise AssertionError(f"Unknown storage type: {stype}")


def create_sparse_array_zd(shape, stype: str, density, data_init=None, rsp_indices=None,
                           dtype=None, modifier_func=None, shuffle_csr_indices: bool = False):
    """As :func:`create_sparse_array`; for row_sparse only ``rsp_indices`` set the rows."""
    if stype == "row_sparse":
        density = 0.0
        if rsp_indices is not None and len(rsp_indices) > shape[0]:
            raise ValueError(f"create_sparse_array_zd: {len(rsp_indices)} rsp_indices for "
                             f"{shape[0]} rows")
    return create_sparse_array(shape, stype, data_init=data_init, rsp_indices=rsp_indices,
                               dtype=dtype, modifier_func=modifier_func, density=density,
                               shuffle_csr_indices=shuffle_csr_indices)
