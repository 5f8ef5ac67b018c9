"""MXNet 1.x ``nd.contrib`` names."""
from ..ops.registry import namespace as _namespace
from .. import ops as _ops  # noqa: F401

globals().update(_namespace("nd", "contrib"))
