"""Rows for the fused elementwise operator (made by core.symbol.passes.fusion)."""
import numpy as np

from core.ops import F

from .op_db import OpSpec, Sample, rand

# relu(a * b + 1.0) and, as a second output, exp(a * b + 1.0) > 2.0
_PROG = (("multiply", (("in", 0), ("in", 1))), ("add", (("step", 0), 1.0)),
         ("relu", (("step", 1),)), ("exp", (("step", 1),)), ("greater", (("step", 3), 2.0)))


def _ref(a, b, program, outputs):
    t = a * b + 1.0
    vals = (np.maximum(t, 0), np.exp(t) > 2.0)
    return vals[0] if outputs == 2 else vals


def _samples(rng, d):
    return [Sample(rand(rng, (3, 4), d), rand(rng, (4,), d), program=_PROG, outputs=2),
            Sample(rand(rng, (2, 1, 3), d), rand(rng, (5, 1), d), program=_PROG,
                   outputs=(2, 4)),
            Sample(rand(rng, (), d), rand(rng, (3,), d), program=_PROG, outputs=2)]


SPECS = [
    OpSpec("_fused_elemwise", lambda *xs, **k: F._fused_elemwise(*xs, **k), _ref, _samples,
           dtypes=("float32", "float64", "float16", "int32"), grad=False),
]
