"""The operators, one module per family; importing this package fills the registry."""
from .. import ndarray as _ndarray
from . import registry  # first: core.ops.namespace needs its definitions (see there)
from . import (  # noqa: F401 - each import registers a family
    abstract,
    act_grad,
    binary,
    broadcast,
    cast,
    creation,
    elemwise,
    fused,
    gather,
    index,
    join,
    legacy_ops,
    linalg,
    matmul,
    mx_fluent,
    nn,
    optimizer_ops,
    random,
    reduce,
    seeded,
    shape,
    sort,
    storage,
)
from .dispatch import invoke
from .registry import REGISTRY, F, OpDef, defop

_ndarray._bind_methods(REGISTRY, invoke)

__all__ = ["REGISTRY", "F", "OpDef", "abstract", "defop", "dispatch", "invoke", "namespace", "registry"]
