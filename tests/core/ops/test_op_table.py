"""Runs every row of the per-operator table (see op_db.py)."""
from __future__ import annotations

import numpy as np
import pytest

import core
from core.dtypes import is_float
from core.ndarray import NDArray
from core.ops import REGISTRY, dispatch
from core.test_utils import assert_almost_equal, check_numeric_gradient, tolerances

from . import hybrid_check
from .op_db import CONTIGUOUS, Views, all_specs, np_dtype

SPECS = all_specs()
BY_ID = {s.id: s for s in SPECS}


def _ids():
    return [s.id for s in SPECS]


def test_every_registered_operator_has_a_row():
    covered = set()
    for s in SPECS:
        covered.add(s.name)
        covered.update(s.covers)
    missing = sorted(set(REGISTRY) - covered)
    assert not missing, f"operators without a row in the op table: {missing}"
    unknown = sorted(covered - set(REGISTRY))
    assert not unknown, f"rows naming operators that are not registered: {unknown}"


def _to_nd(args):
    return [core.nd.array(a, dtype=a.dtype) if isinstance(a, np.ndarray) else a for a in args]


def _as_tuple(x):
    return tuple(x) if isinstance(x, (tuple, list)) else (x,)


class _InferChecker:
    """Checks every operator call's inferred shape/dtype against its result."""

    def __init__(self):
        self.errors = []

    def __call__(self, op, inputs, attrs, outs):
        if op.infer is None:
            return
        attrs = {k: v for k, v in attrs.items() if k not in ("ctx", "_from")}
        try:
            inferred = _as_tuple(dispatch.infer_avals(op, inputs, attrs))
        except Exception as e:  # noqa: BLE001
            self.errors.append(f"{op.name}: infer raised {type(e).__name__}: {e}")
            return
        actual = _as_tuple(outs)
        if len(inferred) != len(actual):
            self.errors.append(f"{op.name}: infer gave {len(inferred)} outputs, "
                               f"forward {len(actual)}")
            return
        for inf, act in zip(inferred, actual):
            shape_ok = len(inf.shape) == act.ndim and all(
                s is None or s == t for s, t in zip(inf.shape, act.shape))
            if not shape_ok or inf.dtype != act.dtype:
                self.errors.append(f"{op.name}: infer gave {inf.shape} {inf.dtype}, forward "
                                   f"{act.shape} {act.dtype} ({dispatch.describe(inputs)})")


@pytest.fixture
def infer_checker():
    chk = _InferChecker()
    dispatch._hooks.append(chk)
    yield chk
    dispatch._hooks.remove(chk)


@pytest.mark.parametrize("spec_id", _ids())
def test_values(spec_id, infer_checker):
    spec = BY_ID[spec_id]
    rng = np.random.default_rng(0)
    if spec.check is not None:
        spec.check(spec, rng, CONTIGUOUS)
        assert not infer_checker.errors, infer_checker.errors
        return
    for dtype in spec.dtypes:
        for sample in spec.samples(rng, dtype):
            ours = _as_tuple(spec.call(*_to_nd(sample.args), **sample.kwargs))
            ref = _as_tuple(spec.ref(*sample.args, **sample.kwargs))
            assert len(ours) == len(ref), f"{spec.id}: {len(ours)} outputs, expected {len(ref)}"
            rtol, atol = tolerances(np_dtype(dtype), spec.rtol, spec.atol)
            for o, r in zip(ours, ref):
                assert isinstance(o, NDArray), f"{spec.id}: result is {type(o)}"
                r = np.asarray(r)
                if spec.check_dtype:
                    assert o.dtype == r.dtype, f"{spec.id} {sample}: dtype {o.dtype} != {r.dtype}"
                assert_almost_equal(o, r, rtol=rtol, atol=atol, names=("core", "numpy"))
    assert not infer_checker.errors, infer_checker.errors


@pytest.mark.parametrize("spec_id", _ids())
def test_noncontiguous(spec_id):
    """Every row on non-contiguous inputs. Rows with ``ref``: the array arguments as views
    (strided, reversed and column-major in turn, ``op_db.Views``) against the reference,
    and a sample without array arguments writing into a strided ``out=``. Rows with a
    ``check``: the check run with ``Views`` as its array maker. A row that makes no
    non-contiguous array fails."""
    spec = BY_ID[spec_id]
    rng = np.random.default_rng(1)
    views = Views()
    if spec.check is not None:
        spec.check(spec, rng, views)
    else:
        dtype = "float64" if "float64" in spec.dtypes else spec.dtypes[0]
        rtol, atol = tolerances(np_dtype(dtype), spec.rtol, spec.atol)
        for sample in spec.samples(rng, dtype):
            ref = [np.asarray(r) for r in _as_tuple(spec.ref(*sample.args, **sample.kwargs))]
            args = [views.view(a) if isinstance(a, np.ndarray) else a for a in sample.args]
            kwargs = dict(sample.kwargs)
            if not any(isinstance(a, np.ndarray) for a in sample.args):
                kwargs["out"] = views.view(np.zeros(ref[0].shape, ref[0].dtype))
            ours = _as_tuple(spec.call(*args, **kwargs))
            if "out" in kwargs:
                assert ours[0] is kwargs["out"], f"{spec.id}: out= is not the result"
            for o, r in zip(ours, ref):
                assert_almost_equal(o, r, rtol=rtol, atol=atol, names=("core", "numpy"))
    assert views.strided, (f"{spec.id}: no non-contiguous input was made; give the row "
                           "array arguments, or make its check's arrays with its arr")


@pytest.mark.parametrize("spec_id", _ids())
def test_gradients(spec_id):
    spec = BY_ID[spec_id]
    if not spec.grad or spec.check is not None:
        pytest.skip("operator has no gradient")
    rng = np.random.default_rng(2)
    for sample in spec.samples(rng, "float64"):
        if not any(isinstance(a, np.ndarray) and is_float(a.dtype) for a in sample.args):
            continue
        check_numeric_gradient(lambda *xs, kw=sample.kwargs: spec.call(*xs, **kw), sample.args,
                               diff=sample.diff, eps=spec.grad_eps, rtol=spec.grad_rtol,
                               atol=spec.grad_atol)


def _low_precision_cases():
    return [pytest.param(s.id, d, id=f"{s.id}-{d}") for s in SPECS
            if s.grad and s.check is None for d in s.dtypes if d in ("float16", "bfloat16")]


def _autograd_grads(spec, sample, diff, dtype, head_dtype):
    """Input gradients for random head gradients (exact in ``head_dtype``) on the float
    outputs, the float inputs as ``dtype`` (None: as the sample has them)."""
    xs = []
    for a in sample.args:
        if isinstance(a, np.ndarray):
            dt = np_dtype(dtype) if dtype is not None and is_float(a.dtype) else a.dtype
            xs.append(core.nd.array(a.astype(dt), dtype=dt))
        else:
            xs.append(a)
    for i in diff:
        xs[i].attach_grad()
    rng = np.random.default_rng(5)
    with core.autograd.record():
        outs = [o for o in _as_tuple(spec.call(*xs, **sample.kwargs))
                if is_float(o.dtype) and o._node is not None]
    if not outs:
        return None
    heads = [core.nd.array(rng.uniform(-1, 1, o.shape).astype(np_dtype(head_dtype)),
                           dtype=o.dtype) for o in outs]
    core.autograd.backward(outs, heads)
    return [xs[i].grad for i in diff]


@pytest.mark.parametrize(("spec_id", "dtype"), _low_precision_cases())
def test_low_precision_gradients(spec_id, dtype):
    """Gradients computed in float16/bfloat16 against float64 autograd on the same values,
    within the dtype's value tolerances, and nonzero wherever float64's are (bfloat16's
    dtype kind is "V": a VJP asking ``kind == "f"`` would drop its gradient)."""
    spec = BY_ID[spec_id]
    rng = np.random.default_rng(2)
    rtol, atol = tolerances(np_dtype(dtype), spec.grad_rtol, spec.grad_atol)
    for sample in spec.samples(rng, dtype):
        diff = sample.diff if sample.diff is not None else [
            i for i, a in enumerate(sample.args) if isinstance(a, np.ndarray) and is_float(a.dtype)]
        if not diff:
            continue
        low = _autograd_grads(spec, sample, diff, None, dtype)
        if low is None:
            continue
        ref = _autograd_grads(spec, sample, diff, "float64", dtype)
        for i, g, r in zip(diff, low, ref):
            what = f"{spec.id} {sample}: input {i}"
            assert g.dtype == np_dtype(dtype), f"{what}: gradient dtype {g.dtype}"
            g, r = g.asnumpy().astype(np.float64), r.asnumpy()
            assert_almost_equal(g, r, rtol=rtol, atol=atol, names=(dtype, "float64"))
            # nonzero where float64's is, at the dtype's resolution (a softmax saturated in
            # bfloat16 has gradients of 1e-7 that round away)
            big = np.abs(r) > max(0.1 * np.abs(r).max(initial=0), atol)
            assert (g[big] != 0).all(), f"{what}: {dtype} gradient is zero where float64's isn't"


_HYBRID_TABLES = []


def _hybrid_tables():
    if not _HYBRID_TABLES:
        _HYBRID_TABLES.extend(hybrid_check._tables())
    return _HYBRID_TABLES


@pytest.mark.parametrize("spec_id", _ids())
def test_hybridized(spec_id):
    """Eager against hybridized results (STYLE.md point 15): each sample traced into a
    graph and run by a CachedOp gives the eager values bit for bit, and the same input
    gradients under autograd.record() (see hybrid_check.py)."""
    check_rows, known_bugs, close_gradients = _hybrid_tables()
    hybrid_check.run_row(BY_ID[spec_id], check_rows, known_bugs, close_gradients)
