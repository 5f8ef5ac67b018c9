"""Keras backend ``linalg``: not implemented yet (each function raises NotImplementedError)."""
from kbackend._missing import add_stubs

_NOT_YET = [
    "cholesky", "cholesky_inverse", "det", "eig", "eigh", "inv", "lu_factor", "norm",
    "qr", "solve", "solve_triangular", "svd", "lstsq", "matrix_rank", "pinv", "jvp",
]
add_stubs(globals(), "linalg", _NOT_YET)
