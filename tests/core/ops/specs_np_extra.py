"""Rows for ``core.np``'s NumPy functions composed of registry operators
(core/np/_shaping.py, core/np/_math.py): values against NumPy itself, finite-difference
gradients, non-contiguous and hybridized runs. The rows name the registry operator each
function mostly rests on; their ids start "np."."""
import numpy as np

from core import np as knp

from .op_db import OpSpec, Sample, away_from, rand

FLOATS = ("float32", "float64")


def _row(name, fn_name, ref, samples, call=None, **kw):
    call = call if call is not None else getattr(knp, fn_name)
    extra = {"id": f"np.{fn_name}"}
    if "hybrid_skip" in kw:
        extra["hybrid_skip"] = kw.pop("hybrid_skip")
    return OpSpec(name, call, ref, samples, dtypes=kw.pop("dtypes", FLOATS), extra=extra, **kw)


_HOST = ("the quantiles / sample points given as an array are read on the host (they pick "
         "the sorted positions), so a traced array there cannot be; Python values trace")


def _seq_call(fn):
    return lambda *arrays, **k: fn(list(arrays), **k)


def _seq_ref(fn):
    return lambda *arrays, **k: fn(list(arrays), **k)


def _pairs(*shapes):
    def samples(rng, d):
        return [Sample(*[rand(rng, s, d) for s in group]) for group in shapes]

    return samples


def _one(*cases):
    """Samples from ``(shape, kwargs)`` cases with one array argument."""
    def samples(rng, d):
        return [Sample(rand(rng, s, d), **k) for s, k in cases]

    return samples


def _distinct(rng, shape, d):
    """Values far apart (sort-based functions: no ties for finite differences)."""
    n = int(np.prod(shape))
    return (rng.permutation(n).reshape(shape) * 0.37 + rng.uniform(-0.05, 0.05, shape)).astype(d)


def _same(fn):
    """NumPy's result in the first input's dtype: MXNet keeps the data's dtype where NumPy
    promotes to float64 for float64 parameters (quantiles, edges, sample points)."""
    return lambda a, *r, **k: np.asarray(fn(a, *r, **k)).astype(a.dtype)


def _quant_samples(rng, d):
    return [Sample(_distinct(rng, (7,), d), 0.3),
            Sample(_distinct(rng, (3, 5), d), np.array([0.1, 0.5, 0.9]), axis=1, diff=[0]),
            Sample(_distinct(rng, (4, 3), d), 0.25, axis=0, keepdims=True)]


def _median_samples(rng, d):
    return [Sample(_distinct(rng, (6,), d)), Sample(_distinct(rng, (3, 5), d), axis=1)]


def _insert_samples(rng, d):
    return [Sample(rand(rng, (4,), d), 1, rand(rng, (), d)),
            Sample(rand(rng, (2, 3), d), 3, rand(rng, (2,), d), axis=1),
            Sample(rand(rng, (2, 3), d), 0, rand(rng, (1, 3), d), axis=0)]


def _interp_samples(rng, d):
    xp = np.array([0.0, 1.0, 2.5, 4.0])
    return [Sample(np.array([-1.0, 0.3, 1.7, 3.9, 5.0]), xp, rand(rng, (4,), d), diff=[2]),
            Sample(np.array([[0.5, 2.0]]), xp, rand(rng, (4,), d), diff=[2], left=-9.0,
                   right=9.0)]


def _meshgrid_samples(rng, d):
    return [Sample(rand(rng, (3,), d), rand(rng, (2,), d)),
            Sample(rand(rng, (3,), d), rand(rng, (2,), d), rand(rng, (4,), d), indexing="ij"),
            Sample(rand(rng, (3,), d), rand(rng, (2,), d), sparse=True)]


SPECS = [
    _row("concatenate", "vstack", _seq_ref(np.vstack), _pairs([(3,), (3,)], [(2, 3), (1, 3)]),
         call=_seq_call(knp.vstack)),
    _row("concatenate", "hstack", _seq_ref(np.hstack), _pairs([(3,), (2,)], [(2, 3), (2, 1)]),
         call=_seq_call(knp.hstack)),
    _row("concatenate", "dstack", _seq_ref(np.dstack), _pairs([(3,), (3,)], [(2, 2), (2, 2)]),
         call=_seq_call(knp.dstack)),
    _row("concatenate", "column_stack", _seq_ref(np.column_stack),
         _pairs([(3,), (3,)], [(3, 2), (3,)]), call=_seq_call(knp.column_stack)),
    _row("concatenate", "append", np.append,
         lambda rng, d: [Sample(rand(rng, (2, 2), d), rand(rng, (3,), d)),
                         Sample(rand(rng, (2, 2), d), rand(rng, (1, 2), d), axis=0)]),
    _row("reshape", "atleast_3d", np.atleast_3d, _one(((), {}), ((3,), {}), ((2, 3), {}))),
    _row("broadcast_to", "meshgrid", lambda *xs, **k: np.meshgrid(*xs, **k), _meshgrid_samples),
    _row("diag", "trace", np.trace, _one(((3, 3), {}), ((3, 4), {"offset": 1}),
                                         ((2, 3, 3), {"axis1": 1, "axis2": 2}))),
    _row("diag", "diagonal", np.diagonal, _one(((3, 4), {}), ((3, 4), {"offset": -1}))),
    _row("diag", "diagflat", np.diagflat, _one(((2, 2), {}), ((3,), {"k": 1}))),
    _row("multiply", "vdot", np.vdot, _pairs([(2, 3), (2, 3)], [(4,), (4,)]), rtol=1e-5,
         atol=1e-5),
    _row("stack", "cross", np.cross, _pairs([(3,), (3,)], [(4, 3), (4, 3)], [(2, 2), (2, 3)])),
    _row("multiply", "kron", np.kron, _pairs([(2, 2), (2, 3)], [(3,), (2,)])),
    _row("subtract", "diff", _same(np.diff),
         lambda rng, d: [Sample(rand(rng, (5,), d)), Sample(rand(rng, (3, 4), d), n=2, axis=0),
                         Sample(rand(rng, (3, 4), d), prepend=0.5, append=rand(rng, (3, 1), d),
                                diff=[0])]),
    _row("subtract", "ediff1d", np.ediff1d,
         lambda rng, d: [Sample(rand(rng, (2, 3), d)), Sample(rand(rng, (4,), d), to_begin=0.0,
                                                              to_end=np.array([1.0, 2.0], d))]),
    _row("sum", "average", np.average,
         lambda rng, d: [Sample(rand(rng, (3, 4), d), axis=1),
                         Sample(rand(rng, (3, 4), d), weights=rand(rng, (3, 4), d, 0.5, 2.0)),
                         Sample(rand(rng, (3, 4), d), axis=0,
                                weights=rand(rng, (3,), d, 0.5, 2.0))], rtol=1e-5, atol=1e-5),
    _row("sort", "quantile", _same(np.quantile), _quant_samples, rtol=1e-5, atol=1e-5,
         hybrid_skip=_HOST),
    _row("sort", "percentile", _same(lambda a, q, **k: np.percentile(a, np.asarray(q) * 100, **k)),
         _quant_samples, call=lambda a, q, **k: knp.percentile(a, np.asarray(q) * 100, **k),
         rtol=1e-5, atol=1e-5, hybrid_skip=_HOST),
    _row("sort", "median", np.median, _median_samples),
    _row("multiply", "polyval", np.polyval, _pairs([(3,), (4,)], [(1,), (2, 2)])),
    _row("where", "nan_to_num", np.nan_to_num,
         lambda rng, d: [Sample(np.array([np.nan, 1.0, np.inf, -np.inf, -2.0], d)),
                         Sample(np.array([np.nan, 1.5, np.inf], d), nan=-1.0, posinf=9.0)],
         grad=False),
    _row("trunc", "fmod", np.fmod,
         lambda rng, d: [Sample(away_from(rng, (3, 4), d, points=(-1.5, 0.0, 1.5)),
                                np.array(1.5, d))]),
    _row("maximum", "fmax", np.fmax,
         lambda rng, d: [Sample(away_from(rng, (5,), d), np.array([np.nan, 0.5, -3.0, np.nan,
                                                                     2.5], d), diff=[0])]),
    _row("minimum", "fmin", np.fmin,
         lambda rng, d: [Sample(away_from(rng, (5,), d), np.array([np.nan, 0.5, -3.0, np.nan,
                                                                     2.5], d), diff=[0])]),
    _row("power", "ldexp", lambda a, b: (a * 2.0 ** b).astype(a.dtype),
         _pairs([(3,), (3,)])),
    _row("less_equal", "isclose", np.isclose,
         lambda rng, d: [Sample(np.array([1.0, 2.0, np.inf, np.nan], d),
                                np.array([1.0 + 1e-7, 2.5, np.inf, np.nan], d)),
                         Sample(np.array([np.nan], d), np.array([np.nan], d), equal_nan=True)],
         grad=False),
    _row("flip", "rot90", np.rot90, _one(((2, 3), {}), ((2, 3), {"k": 2}),
                                         ((2, 3, 4), {"k": 3, "axes": (1, 2)}))),
    _row("flip", "flipud", np.flipud, _one(((3, 2), {}))),
    _row("flip", "fliplr", np.fliplr, _one(((3, 2), {}))),
    _row("moveaxis", "rollaxis", np.rollaxis, _one(((2, 3, 4), {"axis": 2}),
                                                   ((2, 3, 4), {"axis": 0, "start": 2}))),
    _row("tile", "resize", np.resize, _one(((2, 3), {"new_shape": (4, 2)}),
                                           ((3,), {"new_shape": 7}))),
    _row("take", "delete", np.delete, _one(((5,), {"obj": 1}), ((3, 4), {"obj": [0, 2],
                                                                          "axis": 1}))),
    _row("concatenate", "insert", np.insert, _insert_samples),
    _row("take", "interp", lambda x, xp, fp, **k: np.interp(x, xp, fp, **k).astype(fp.dtype),
         _interp_samples, hybrid_skip=_HOST),
    _row("max", "nanmax", np.nanmax,
         lambda rng, d: [Sample(_with_nans(rng, (3, 4), d), axis=1),
                         Sample(_with_nans(rng, (5,), d))]),
    _row("min", "nanmin", np.nanmin,
         lambda rng, d: [Sample(_with_nans(rng, (3, 4), d), axis=0, keepdims=True)]),
    _row("max", "ptp", np.ptp, lambda rng, d: [Sample(_distinct(rng, (3, 4), d), axis=1),
                                                Sample(_distinct(rng, (5,), d))]),
    _row("matmul", "cov", _same(np.cov),
         lambda rng, d: [Sample(rand(rng, (3, 6), d)), Sample(rand(rng, (5, 2), d),
                                                              rowvar=False, ddof=0),
                         Sample(rand(rng, (4,), d), rand(rng, (4,), d))],
         rtol=1e-5, atol=1e-5),
    _row("matmul", "corrcoef", _same(np.corrcoef),
         lambda rng, d: [Sample(rand(rng, (3, 6), d))], rtol=1e-4, atol=1e-5),
    _row("power", "exp2", np.exp2, _one(((3, 4), {}))),
    _row("where", "heaviside", lambda a, b: np.heaviside(a, b).astype(a.dtype),
         lambda rng, d: [Sample(np.array([-1.5, 0.0, 2.0, 0.0], d), np.array(0.25, d),
                                diff=[1])]),
    _row("copysign", "signbit", np.signbit,
         lambda rng, d: [Sample(np.array([-1.0, 0.0, -0.0, 2.0], d))], grad=False),
    _row("broadcast_to", "broadcast_arrays", lambda *a: np.broadcast_arrays(*a),
         _pairs([(2, 1), (3,)], [(4,), (4,)])),
]


def _with_nans(rng, shape, d):
    a = _distinct(rng, shape, d)
    a.reshape(-1)[::3] = np.nan
    return a
