"""NumPy's ``linalg`` names over the registry."""
from .. import ops as _ops  # noqa: F401
from ..ops.namespace import namespace as _namespace

globals().update(_namespace("np", "linalg"))
