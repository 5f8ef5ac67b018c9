"""The operators, one module per family; importing this package fills the registry."""
from .. import ndarray as _ndarray
from . import (  # noqa: F401 - each import registers a family
    binary,
    broadcast,
    cast,
    creation,
    elemwise,
    fused,
    gather,
    index,
    join,
    linalg,
    matmul,
    nn,
    random,
    reduce,
    registry,
    seeded,
    shape,
    sort,
)
from .registry import REGISTRY, F, OpDef, defop, invoke

_ndarray._bind_methods(REGISTRY, invoke)

__all__ = ["REGISTRY", "F", "OpDef", "defop", "invoke", "registry"]
