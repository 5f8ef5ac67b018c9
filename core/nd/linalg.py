"""MXNet 1.x ``nd.linalg`` names."""
from .. import ops as _ops  # noqa: F401
from ..ops.namespace import namespace as _namespace

globals().update(_namespace("nd", "linalg"))
