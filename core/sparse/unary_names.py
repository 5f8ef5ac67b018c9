"""The unary operators MXNet 1.x computes on sparse storage: those with ``f(0) = 0``
keep a ``row_sparse`` or ``csr`` input's storage type (applied to the stored values)."""

ZERO_PRESERVING = ("abs", "sign", "round", "rint", "ceil", "floor", "trunc", "fix", "square",
                   "sqrt", "expm1", "log1p", "sin", "tan", "arcsin", "arctan", "sinh",
                   "tanh", "arcsinh", "arctanh", "degrees", "radians", "relu", "negative",
                   "copy")
