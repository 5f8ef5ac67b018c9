"""Communication between the contexts of one process: sum arrays, copy one to many.

These are the two collectives the local store (and ``core.parallel`` without a store)
is built from, as MXNet's ``comm.h``: :func:`reduce_sum` copies every array to one
context and adds them there, in list order; :func:`copy_to_all` writes one array into
arrays on any contexts. Summing once and copying the one result makes every replica
bitwise identical. Everything runs outside autograd. (The dependency engine will run
these asynchronously, per device; their signatures stay.)

Example:
    >>> from core import nd, cpu
    >>> from core.kvstore.comm import reduce_sum, copy_to_all
    >>> a, b = nd.ones((2,), ctx=cpu(0)), nd.ones((2,), ctx=cpu(1)) * 2
    >>> total = reduce_sum([a, b])
    >>> total.asnumpy().tolist(), total.context
    ([3.0, 3.0], cpu(0))
    >>> copy_to_all(total, [a, b])
    >>> b.asnumpy().tolist()
    [3.0, 3.0]
"""
from __future__ import annotations

from .. import autograd
from ..context import as_context
from ..ndarray import NDArray

__all__ = ["copy_to_all", "reduce_sum"]


def _check_same(arrays, what: str):
    shape, dtype = arrays[0].shape, arrays[0].dtype
    for i, a in enumerate(arrays[1:], 1):
        if a.shape != shape or a.dtype != dtype:
            raise ValueError(f"{what}: array {i} has shape {a.shape} and dtype {a.dtype.name}, "
                             f"but array 0 has shape {shape} and dtype {dtype.name}; the "
                             "arrays of one key must agree")


def reduce_sum(arrays, ctx=None) -> NDArray:
    """The sum of ``arrays`` (on any contexts), as a new array on ``ctx``.

    Args:
        arrays: a non-empty list of NDArrays of one shape and dtype.
        ctx: the context to sum on (default: the first array's).

    Returns:
        A new NDArray (never one of ``arrays``), outside autograd.

    Raises:
        ValueError: no arrays, or shapes/dtypes that differ.
    """
    arrays = list(arrays)
    if not arrays:
        raise ValueError("reduce_sum: no arrays to sum")
    _check_same(arrays, "reduce_sum")
    ctx = arrays[0].context if ctx is None else as_context(ctx)
    with autograd.pause():
        total = arrays[0].copyto(ctx).detach()  # always a new array
        for a in arrays[1:]:
            total += a.as_in_context(ctx)
    return total


def copy_to_all(src: NDArray, outs) -> None:
    """Write ``src`` into every array of ``outs`` (on any contexts), in place.

    Args:
        src: the value.
        outs: a list of NDArrays of ``src``'s shape.

    Raises:
        ValueError: an output's shape differs from ``src``'s.
    """
    with autograd.pause():
        for o in outs:
            if o is src:
                continue
            if o.shape != src.shape:
                raise ValueError(f"copy_to_all: cannot write a value of shape {src.shape} "
                                 f"into an array of shape {o.shape}")
            v = src.as_in_context(o.context)
            o[...] = v if v.dtype == o.dtype else v.astype(o.dtype)
