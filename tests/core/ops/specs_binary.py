"""Rows for the broadcasting binary operators and where (core/ops/binary.py)."""
import numpy as np

from core import nd
from core import np as knp

from .op_db import BINARY_SHAPES, OpSpec, Sample, away_from, binary_samples, positive, rand


def _b(name, ref, gen_a=rand, gen_b=rand, scalars=(2.0,), call=None,
       dtypes=("float32", "float64", "float16", "bfloat16"), **kw):
    fn = call or getattr(nd, name)
    return OpSpec(name, fn, ref, binary_samples(gen_a, gen_b, scalars=scalars), dtypes=dtypes,
                  **kw)


def _nonzero(rng, s, d):
    return away_from(rng, s, d, gap=0.4)


def _distinct(rng, s, d):
    # values on a grid of step 0.25 plus a per-call offset keep ties apart
    return (np.round(rand(rng, s, "float64") * 4) / 4 + rng.uniform(0.01, 0.1)).astype(d)


SPECS = [
    _b("add", np.add, dtypes=("float32", "float64", "float16", "bfloat16", "int32")),
    _b("subtract", np.subtract, dtypes=("float32", "float64", "float16", "bfloat16", "int32")),
    _b("multiply", np.multiply, dtypes=("float32", "float64", "float16", "bfloat16", "int32")),
    _b("divide", np.true_divide, gen_b=_nonzero),
    _b("floor_divide", np.floor_divide, gen_b=_nonzero, dtypes=("float32", "float64", "int32"),
       grad=False),
    _b("mod", np.mod, gen_a=positive, gen_b=lambda r, s, d: positive(r, s, d, 0.7, 0.9),
       scalars=(0.75,), grad_rtol=1e-3),
    _b("power", np.power, gen_a=positive, gen_b=rand),
    _b("maximum", np.maximum, gen_a=_distinct, gen_b=_distinct, scalars=(0.3,)),
    _b("minimum", np.minimum, gen_a=_distinct, gen_b=_distinct, scalars=(0.3,)),
    _b("hypot", np.hypot, gen_a=_nonzero, gen_b=_nonzero),
    _b("arctan2", np.arctan2, gen_a=_nonzero, gen_b=_nonzero),
    _b("logaddexp", np.logaddexp),
    _b("copysign", np.copysign, gen_a=_nonzero, gen_b=_nonzero),
]
for _n, _f in (("equal", np.equal), ("not_equal", np.not_equal), ("less", np.less),
               ("less_equal", np.less_equal), ("greater", np.greater),
               ("greater_equal", np.greater_equal)):
    SPECS.append(_b(_n, _f, gen_a=_distinct, gen_b=_distinct, grad=False, scalars=(0.3,),
                    dtypes=("float32", "float64", "int32")))
for _n, _f in (("logical_and", np.logical_and), ("logical_or", np.logical_or),
               ("logical_xor", np.logical_xor)):
    SPECS.append(_b(_n, _f, grad=False, dtypes=("bool", "float32", "int32"), scalars=(True,)))
for _n, _f in (("bitwise_and", np.bitwise_and), ("bitwise_or", np.bitwise_or),
               ("bitwise_xor", np.bitwise_xor)):
    SPECS.append(_b(_n, _f, grad=False, dtypes=("bool", "int32", "uint8"), scalars=(1,),
                    call=getattr(knp, _n)))


def _where_samples(rng, d):
    out = []
    for a, b in BINARY_SHAPES:
        shape = np.broadcast_shapes(a, b)
        out.append(Sample(rng.random(shape) > 0.5, rand(rng, a, d), rand(rng, b, d)))
    out.append(Sample(rng.random((3, 1)) > 0.5, rand(rng, (3, 4), d), 0.0))
    return out


SPECS.append(OpSpec("where", nd.where, np.where, _where_samples,
                    dtypes=("float32", "float64", "float16", "bfloat16", "int32")))
