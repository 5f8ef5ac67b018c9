"""The fused elementwise operator's generated CuPy kernel against the NumPy path.

Skipped without CuPy and a GPU. The CPU path equals the unfused operators bit for bit
(tests/core/symbol/passes/test_fusion.py); here each generated kernel is compared with
it, within a few ulps (CUDA's math library and NumPy's differ in the last bits).
"""
import numpy as np
import pytest

import core
from core import nd
from core.ops import F
from core.ops import fused as fz
from core.ops.fusible import FusionByAttr
from core.ops.registry import REGISTRY, Aval
from core.symbol.graph import evaluate
from core.symbol.passes import fusion
from core.symbol.trace import Tracer

pytestmark = [pytest.mark.gpu,
              pytest.mark.skipif(core.num_gpus() == 0, reason="needs CuPy and a GPU")]

_DTYPES = ("bool", "int8", "uint8", "int32", "int64", "float16", "float32", "float64")


def _data(rng, shape, dtype):
    dtype = np.dtype(dtype)
    if dtype.kind == "f":
        x = (rng.standard_normal(shape) * 3).astype(dtype)
        x.flat[:7] = [np.nan, -0.0, 0.0, np.inf, 1.0, -1.0, 0.5]
        return x
    if dtype.kind == "b":
        return rng.integers(0, 2, shape).astype(bool)
    if dtype.kind == "u":
        return rng.integers(0, 100, shape).astype(dtype)
    return rng.integers(-50, 50, shape).astype(dtype)


def _close(got, ref):
    assert got.shape == ref.shape and got.dtype == ref.dtype, (got.dtype, ref.dtype)
    if ref.dtype.kind != "f":
        np.testing.assert_array_equal(got, ref)
        return
    tol = {2: 2e-3, 4: 2e-6, 8: 1e-13}[ref.dtype.itemsize]
    np.testing.assert_array_equal(np.isnan(got), np.isnan(ref))
    np.testing.assert_allclose(got, ref, rtol=tol, atol=tol, equal_nan=True)


def _run_both(program, arrays, outputs=-1):
    cpu = [nd.array(a, dtype=a.dtype) for a in arrays]
    gpu = [nd.array(a, dtype=a.dtype, ctx=core.gpu(0)) for a in arrays]
    with np.errstate(all="ignore"):
        ref = F._fused_elemwise(*cpu, program=program, outputs=outputs)
    got = F._fused_elemwise(*gpu, program=program, outputs=outputs)
    refs = ref if isinstance(ref, tuple) else (ref,)
    gots = got if isinstance(got, tuple) else (got,)
    for g, r in zip(gots, refs):
        assert g.context == core.gpu(0)
        _close(g.asnumpy(), r.asnumpy())


def _fusable_calls():
    """``(key, operator name, attrs or None)`` for every fused form an operator declares."""
    for op in REGISTRY.values():
        form = op.fusion
        if isinstance(form, FusionByAttr):
            for v in form.forms:
                yield f"{op.name}:{v}", op.name, ((form.attr, v),)
        elif form is not None:
            yield op.name, op.name, None


def _table_cases():
    """One single-step program per fused form and input dtype it fuses."""
    cases = []
    for key, name, attrs in _fusable_calls():
        nin = len(REGISTRY[name].inputs)
        for d in _DTYPES:
            args = (("in", 0),) if nin == 1 else (("in", 0), ("in", 1))
            avals = [Aval((), d)] * nin
            if not fz.can_fuse(name, avals, dict(attrs or ())):
                continue
            step = (name, args) if attrs is None else (name, args, attrs)
            cases.append(pytest.param((step,), (d,) * nin, id=f"{key}-{d}"))
    return cases


@pytest.mark.parametrize("program,dtypes", _table_cases())
def test_every_row_against_numpy(program, dtypes):
    rng = np.random.default_rng(0)
    shapes = [(64, 33), (33,)][:len(dtypes)]
    arrays = [_data(rng, s, d) for s, d in zip(shapes, dtypes)]
    if program[0][0] == "power":  # CUDA's pow(-inf, 0.5) is inf (C99), NumPy's nan
        arrays = [np.where(np.isneginf(a), 1, a).astype(a.dtype) for a in arrays]
    _run_both(program, arrays)


@pytest.mark.parametrize("dtype", ["float16", "float32", "float64"])
def test_chain_broadcast_literals_and_two_outputs(dtype):
    prog = (("multiply", (("in", 0), ("in", 1))), ("add", (("step", 0), ("in", 2))),
            ("relu", (("step", 1),)), ("sigmoid", (("step", 2),)),
            ("multiply", (("step", 3), 0.25)), ("exp", (("step", 4),)),
            ("greater", (("step", 5), 1.1)))
    rng = np.random.default_rng(1)
    arrays = [_data(rng, (8, 1, 5), dtype), _data(rng, (3, 5), dtype), _data(rng, (5,), dtype)]
    _run_both(prog, arrays, outputs=(5, 6))


def test_int_input_float_literal():
    prog = (("multiply", (("in", 0), 1.5)), ("subtract", (("step", 0), ("in", 1))),
            ("tanh", (("step", 1),)))
    rng = np.random.default_rng(2)
    _run_both(prog, [_data(rng, (16, 4), "int32"), _data(rng, (4,), "uint8")])


def test_fused_graph_on_gpu_matches_cpu():
    with Tracer() as t:
        x = t.variable("x", (256, 64), "float32", ctx=core.gpu(0))
        w = t.variable("w", (64,), "float32", ctx=core.gpu(0))
        y = nd.Activation(x * w + 0.5, act_type="softrelu") - nd.sigmoid(x)
    g = t.graph([y])
    g2 = fusion.run(g)
    assert g2.pass_stats == {"fusion_groups": 1, "fusion_ops": 5}
    rng = np.random.default_rng(3)
    xs = {"x": _data(rng, (256, 64), "float32"), "w": _data(rng, (64,), "float32")}
    gpu = {k: nd.array(v, ctx=core.gpu(0)) for k, v in xs.items()}
    (got,), _ = evaluate(g2, gpu)
    (ref,), _ = evaluate(g, {k: nd.array(v) for k, v in xs.items()})
    assert got.context == core.gpu(0)
    _close(got.asnumpy(), ref.asnumpy())


def test_kernel_is_memoized():
    prog = (("exp", (("in", 0),)), ("negative", (("step", 0),)))
    src = fz.kernel_source(prog, (np.dtype("float32"),))
    k1 = core.cuda.elementwise(*src, fz.kernel_name(*src))
    _run_both(prog, [np.ones((4,), np.float32)])
    assert core.cuda.elementwise(*src, fz.kernel_name(*src)) is k1


@pytest.mark.parametrize("src,dst", [("float16", "float32"), ("float64", "float16"),
                                     ("int32", "float32"), ("float32", "int8"),
                                     ("bool", "float16"), ("float32", "bool")])
def test_casts(src, dst):
    prog = (("cast", (("in", 0),), (("dtype", dst),)), ("add", (("step", 0), 1)))
    rng = np.random.default_rng(4)
    x = _data(rng, (32, 8), src)
    if np.dtype(dst).kind in "iu" and x.dtype.kind == "f":  # C and NumPy differ on NaN/inf
        x = np.clip(np.nan_to_num(x), -100, 100).astype(x.dtype)
    if dst == "bool":
        prog = prog[:1]
    _run_both(prog, [x])
