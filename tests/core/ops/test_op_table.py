"""Runs every row of the per-operator table (see op_db.py)."""
from __future__ import annotations

import numpy as np
import pytest

import core
from core.ndarray import NDArray
from core.ops import REGISTRY, registry
from core.test_utils import assert_almost_equal, check_numeric_gradient, tolerances, view_of

from . import hybrid_check
from .op_db import all_specs, np_dtype

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


def _to_nd(args, noncontig=False):
    out = []
    for a in args:
        if isinstance(a, np.ndarray):
            out.append(view_of(a) if noncontig else core.nd.array(a, dtype=a.dtype))
        else:
            out.append(a)
    return out


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
            inferred = _as_tuple(registry.infer_avals(op, inputs, attrs))
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
                                   f"{act.shape} {act.dtype} ({registry.describe(inputs)})")


@pytest.fixture
def infer_checker():
    chk = _InferChecker()
    registry._hooks.append(chk)
    yield chk
    registry._hooks.remove(chk)


@pytest.mark.parametrize("spec_id", _ids())
def test_values(spec_id, infer_checker):
    spec = BY_ID[spec_id]
    rng = np.random.default_rng(0)
    if spec.check is not None:
        spec.check(spec, rng)
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
    spec = BY_ID[spec_id]
    if spec.check is not None or not spec.noncontig:
        pytest.skip("row has no value check on non-contiguous inputs")
    rng = np.random.default_rng(1)
    dtype = "float64" if "float64" in spec.dtypes else spec.dtypes[0]
    for sample in spec.samples(rng, dtype):
        ours = _as_tuple(spec.call(*_to_nd(sample.args, noncontig=True), **sample.kwargs))
        ref = _as_tuple(spec.ref(*sample.args, **sample.kwargs))
        rtol, atol = tolerances(np_dtype(dtype), spec.rtol, spec.atol)
        for o, r in zip(ours, ref):
            assert_almost_equal(o, np.asarray(r), rtol=rtol, atol=atol, names=("core", "numpy"))


@pytest.mark.parametrize("spec_id", _ids())
def test_gradients(spec_id):
    spec = BY_ID[spec_id]
    if not spec.grad or spec.check is not None:
        pytest.skip("operator has no gradient")
    rng = np.random.default_rng(2)
    for sample in spec.samples(rng, "float64"):
        if not any(isinstance(a, np.ndarray) and a.dtype.kind == "f" for a in sample.args):
            continue
        check_numeric_gradient(lambda *xs, kw=sample.kwargs: spec.call(*xs, **kw), sample.args,
                               diff=sample.diff, eps=spec.grad_eps, rtol=spec.grad_rtol,
                               atol=spec.grad_atol)


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
