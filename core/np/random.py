"""NumPy's ``random`` names over the registry."""
from ..ops.registry import namespace as _namespace
from .. import ops as _ops  # noqa: F401

globals().update(_namespace("np", "random"))
