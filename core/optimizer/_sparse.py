"""Sparse weights and gradients in the optimizers: MXNet 1.9.1's lazy updates and its
storage fallback.

A ``row_sparse`` gradient holds only some rows. Optimizers whose MXNet kernels update
lazily (SGD and Adam with ``lazy_update=True``, FTRL, AdaGrad: the class attribute or
property ``_sparse_lazy``) update only those rows of the weight and of its states: the
rows are gathered, the optimizer's dense rule runs on them, and they are scattered back,
so the formulas are the dense ones. Everything else (``lazy_update=False``, the other
optimizers, ``csr`` gradients) falls back as MXNet does: the gradient is made dense (the
missing rows are zeros) and every row is updated, weight decay included.

A sparse *weight* (``row_sparse`` or ``csr``) is updated through a dense copy that is
written back into it in its own storage type; its states are dense arrays (MXNet's
``row_sparse`` states with every row, as its kernels keep them, hold the same values).

Example:
    >>> from core import nd, optimizer
    >>> from core.nd import sparse
    >>> opt = optimizer.SGD(learning_rate=1.0, wd=0.5)
    >>> w = nd.ones((3, 1))
    >>> g = sparse.row_sparse_array(([[1.0]], [1]), shape=(3, 1))
    >>> opt.update(0, w, g, opt.create_state(0, w))
    >>> w.asnumpy().ravel().tolist()  # only row 1 changes: (1 - 0.5) * 1 - 1
    [1.0, -0.5, 1.0]
"""
from __future__ import annotations

from .. import engine
from ..ndarray import NDArray

__all__ = ["assign", "dense", "is_sparse", "lazy_rows", "stype"]


def stype(a) -> str:
    """The storage type of ``a`` (``'default'`` for anything without one)."""
    return getattr(a, "stype", "default")


def is_sparse(a) -> bool:
    """Whether ``a`` is a sparse (``row_sparse`` or ``csr``) array."""
    return getattr(a, "_is_sparse", False)


def dense(a: NDArray) -> NDArray:
    """``a`` itself when dense, else a dense copy (``tostype('default')``)."""
    return a.tostype("default") if is_sparse(a) else a


def assign(target: NDArray, value: NDArray) -> None:
    """Write the dense ``value`` into ``target`` (dense, or sparse in its own storage)."""
    if not is_sparse(target):
        with target.context.device_guard():
            target._data[...] = value._data.astype(target.dtype, copy=False)
        target._version += 1
        return
    # a sparse array stores what is assigned to it in its own layout (core.sparse)
    target[:] = value.astype(target.dtype, copy=False)


def lazy_rows(grad: NDArray):
    """The raw row ids and raw row values of a ``row_sparse`` gradient."""
    return grad.indices._data, grad.data._data


def _take(state, rows):
    """The rows of every raw array in ``state`` (None, an array, or nested tuples)."""
    if state is None:
        return None
    if isinstance(state, tuple):
        return tuple(_take(s, rows) for s in state)
    return state[rows]


def _put(state, rows, sub) -> None:
    """Scatter ``sub`` (from :func:`_take`) back into ``state``'s rows."""
    if state is None:
        return
    if isinstance(state, tuple):
        for s, t in zip(state, sub):
            _put(s, rows, t)
        return
    state[rows] = sub


def sparse_step(opt, index, weight: NDArray, grad: NDArray, state_raw, lr, wd) -> None:
    """One update of ``opt`` (a ``FusedOptimizer``) where the weight or the gradient is
    sparse: lazily on a ``row_sparse`` gradient's rows when ``opt._sparse_lazy``, else
    on dense copies (see the module doc). ``state_raw`` holds the raw (dense) states."""
    w_nd = dense(weight)
    lazy = stype(grad) == "row_sparse" and bool(getattr(opt, "_sparse_lazy", False))
    g_nd = grad if lazy else dense(grad)
    if lazy and wd and not getattr(opt, "_sparse_takes_wd", True):
        raise ValueError(f"{type(opt).__name__}.update: the sparse (row_sparse gradient) "
                         f"update does not support weight decay, got wd={wd}; set wd=0 "
                         "(MXNet's sparse kernel refuses it too)")
    if g_nd.shape != w_nd.shape:
        raise ValueError(f"{type(opt).__name__}.update: gradient shape {grad.shape} does not "
                         f"match weight shape {weight.shape}")
    if g_nd.context != w_nd.context:
        raise ValueError(f"{type(opt).__name__}.update: the gradient is on {grad.context} but "
                         f"the weight is on {weight.context}; move it with "
                         f"grad.as_in_context({weight.context})")
    if weight._var is not None or grad._var is not None:
        engine.wait_to_write(weight)  # pending engine work (an all-reduce) first
        engine.wait_to_read(grad)
    with weight.context.device_guard():
        if lazy:
            w = w_nd._data
            rows, values = lazy_rows(grad)
            if rows.shape[0]:
                xp = weight.context.xp
                rows = xp.asarray(rows, dtype="int64")
                sub_w, sub_state = w[rows], _take(state_raw, rows)
                opt._step(index, weight.context, sub_w, xp.ascontiguousarray(values),
                          sub_state, lr, wd)
                w[rows] = sub_w
                _put(state_raw, rows, sub_state)
        else:
            opt._step(index, weight.context, w_nd._data, g_nd._data, state_raw, lr, wd)
    if w_nd is weight:
        weight._version += 1
    else:
        assign(weight, w_nd)
