"""Sparse values in the one-process stores (MXNet 1.x's ``kvstore_local`` rules).

- Keys: a store takes int keys or str keys, never both (:class:`KeyTypes`); the first
  call fixes the kind, later calls with the other kind raise ``MXNetError``.
- ``pull`` with ``ignore_sparse=True`` (the default) skips sparse outputs, as MXNet
  does; with ``ignore_sparse=False`` they receive the whole value.
- ``row_sparse_pull(key, out, row_ids)``: each ``row_sparse`` output receives the rows
  ``row_ids`` (any order, repeats allowed) of the stored value; a dense output raises
  ``MXNetError``.

Example:
    >>> from core import nd, kvstore
    >>> kv = kvstore.create('local')
    >>> kv.init('w', nd.ones((3, 2)).tostype('row_sparse'))
    >>> out = nd.sparse.zeros('row_sparse', (3, 2))
    >>> kv.row_sparse_pull('w', out=out, row_ids=nd.array([2, 0, 2]))
    >>> out.indices.asnumpy().tolist()
    [0, 2]
"""
from __future__ import annotations

from .. import autograd
from ..ndarray import NDArray
from ..ops.dispatch import MXNetError

__all__ = ["KeyTypes", "pull_outputs", "row_sparse_pull_into", "store_like"]


class KeyTypes:
    """The kind of key (int or str) a store took first; mixing kinds raises MXNetError."""

    __slots__ = ("kind",)

    def __init__(self):
        self.kind = None

    def check(self, key, what: str) -> None:
        keys = key if isinstance(key, (list, tuple)) else [key]
        for k in keys:
            kind = "str" if isinstance(k, str) else "int" if isinstance(k, int) else None
            if kind is None:
                continue  # the key parser names the bad type
            if self.kind is None:
                self.kind = kind
            elif kind != self.kind:
                raise MXNetError(f"kvstore.{what}: key {k!r} is a {kind} but this store "
                                 f"uses {self.kind} keys; mixed key types are not allowed")


def store_like(merged: NDArray, stored: NDArray | None) -> NDArray:
    """``merged`` in the storage type of the value it replaces (dense stays dense)."""
    if stored is None or merged.stype == stored.stype or stored.stype == "csr":
        return merged
    with autograd.pause():
        return merged.tostype(stored.stype)


def pull_outputs(outs, ignore_sparse: bool) -> list:
    """The outputs a pull writes: sparse ones are skipped with ``ignore_sparse``."""
    return [o for o in outs if not (ignore_sparse and o.stype != "default")]


def _row_ids(ids, what: str):
    import numpy

    if isinstance(ids, NDArray):
        ids = ids.asnumpy()
    a = numpy.asarray(ids).reshape(-1)
    if a.dtype.kind == "f":
        if not numpy.all(a == numpy.round(a)):
            raise ValueError(f"{what}: row_ids must hold whole numbers")
        a = a.astype(numpy.int64)
    return a


def row_sparse_pull_into(value: NDArray, outs, row_ids, key) -> None:
    """Write the rows ``row_ids`` of ``value`` into each row_sparse array of ``outs``
    (``row_ids``: one array for all outputs, or one per output)."""
    from ..sparse import retain

    what = "kvstore.row_sparse_pull"
    if isinstance(row_ids, NDArray) or not isinstance(row_ids, (list, tuple)):
        row_ids = [row_ids]
    if len(row_ids) == 1 and len(outs) > 1:
        row_ids = list(row_ids) * len(outs)
    if len(row_ids) != len(outs):
        raise ValueError(f"{what}: key {key!r}: {len(row_ids)} row_ids for {len(outs)} "
                         "outputs (give one, or one per output)")
    for o in outs:
        if o.stype != "row_sparse":
            raise MXNetError(f"{what}: key {key!r}: the outputs must be row_sparse arrays, "
                             f"got {o.stype} storage (shape {tuple(o.shape)}); use pull for "
                             "dense outputs")
        if tuple(o.shape) != tuple(value.shape):
            raise ValueError(f"{what}: key {key!r} holds shape {tuple(value.shape)}, the "
                             f"output has shape {tuple(o.shape)}")
    with autograd.pause():
        src = value if value.stype == "row_sparse" else value.tostype("row_sparse")
        for o, ids in zip(outs, row_ids):
            rows = _row_ids(ids, what)
            if rows.size and (rows.min() < 0 or rows.max() >= value.shape[0]):
                raise ValueError(f"{what}: key {key!r}: row_ids must lie in "
                                 f"[0, {value.shape[0]}), got {rows.min()}..{rows.max()}")
            part = retain(src.as_in_context(o.context), rows)
            part.copyto(o)
