"""MXNet 1.x names over the operator registry (``mxnet.nd``).

Example:
    >>> from core import nd
    >>> nd.broadcast_add(nd.ones((2, 3)), nd.arange(3)).asnumpy().tolist()
    [[1.0, 2.0, 3.0], [1.0, 2.0, 3.0]]
"""
from .. import ops as _ops
from ..context import Context, cpu, current_context, gpu  # noqa: F401 - as in mxnet.nd
from ..ndarray import NDArray, array, from_dlpack  # noqa: F401
from ..ops.namespace import namespace as _namespace
from ..serialization import load, load_frombuffer, save  # noqa: F401 - MXNet's nd.save/load
from . import _internal, contrib, linalg, random, sparse  # noqa: F401

globals().update(_namespace("nd"))
from .legacy import *  # MXNet's hand-written nd functions, over the generated ones
from ..ops.storage import nd_overrides as _nd_overrides

globals().update(_nd_overrides(""))  # dot, elemwise_add, ... on sparse arrays (core.sparse)


def waitall() -> None:
    """Wait for all pending work: pushed engine work (``core.engine.wait_all``) and GPUs.

    Raises:
        core.engine.EngineError: pushed work failed and no sync reported it yet.
    """
    from ..engine import wait_all

    wait_all()


def concat(*data, dim: int = 1, num_args=None):
    """MXNet's ``concat``: join arrays along ``dim`` (default 1)."""
    return _ops.F.concatenate(*data, axis=dim)


def stack(*data, axis: int = 0, num_args=None):
    """MXNet's ``stack``: join arrays along a new axis."""
    return _ops.F.stack(*data, axis=axis)


