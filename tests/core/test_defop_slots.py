"""defop's slots: each operator's rules live on its OpDef (kernels, fusion, parameter
shapes, recomputation), and nothing keeps name-keyed tables of them elsewhere."""
import importlib

import numpy as np
import pytest

from core import cpu_kernels, nd
from core.ops import REGISTRY
from core.ops.fusible import Fusion, FusionByAttr
from core.ops.param_shapes import ParamShapes
from core.ops.registry import Aval, defop


def _toy(name, **slots):
    calls = []

    def cpu(xp, x, scale=1.0):
        calls.append("cpu")
        return None if x.dtype == np.float64 else x * scale + 100

    op = defop(name, infer=lambda x, scale=1.0: Aval(x.shape, x.dtype), attrs={"scale": 1.0},
               cpu=cpu, **slots)(lambda xp, x, scale=1.0: x * scale)
    return op, calls


def test_cpu_kernel_runs_falls_back_and_switches_off():
    op, calls = _toy("_test_slots_cpu")
    try:
        x = nd.array([1.0, 2.0])
        if cpu_kernels.enabled():
            assert op(x, scale=2.0).asnumpy().tolist() == [102.0, 104.0]
            assert calls == ["cpu"]
        # None from the kernel: the portable forward runs
        assert op(nd.array([1.0], dtype="float64"), scale=2.0).asnumpy().tolist() == [2.0]
        with cpu_kernels.disabled():
            n = len(calls)
            assert op(x, scale=2.0).asnumpy().tolist() == [2.0, 4.0]
            assert len(calls) == n  # not even asked
        assert op.forward.__wrapped__(np, np.ones(2, np.float32), scale=3.0).tolist() == [3.0, 3.0]
        assert op.cpu is not None and op.gpu is None
    finally:
        del REGISTRY["_test_slots_cpu"]


def test_operators_without_kernels_keep_their_forward():
    def fwd(xp, x):
        return x

    op = defop("_test_slots_plain", infer=lambda x: x)(fwd)
    try:
        assert op.forward is fwd
    finally:
        del REGISTRY["_test_slots_plain"]


def test_rules_live_on_the_operators():
    assert isinstance(REGISTRY["FullyConnected"].param_shapes, ParamShapes)
    assert REGISTRY["Convolution"].param_shapes.params == (1, 2)
    assert REGISTRY["add"].param_shapes.operands
    assert REGISTRY["BatchNorm"].param_shapes.dtype(np.dtype("float16"), {}) == np.float32
    assert isinstance(REGISTRY["exp"].fusion, Fusion)
    assert isinstance(REGISTRY["Activation"].fusion, FusionByAttr)
    # one sigmoid: the standalone operator's function is its fused step and Activation's
    assert REGISTRY["Activation"].fusion.forms["sigmoid"] is REGISTRY["sigmoid"].fusion
    assert REGISTRY["Dropout"].cpu is not None
    cheap = {n for n, op in REGISTRY.items() if op.recompute}
    assert {"relu", "Activation", "add", "BatchNorm", "_fused_elemwise"} <= cheap
    assert not any(op.random for op in map(REGISTRY.get, cheap))
    assert not hasattr(REGISTRY["add"], "kind")
    fc = REGISTRY["FullyConnected"].optional_inputs["bias"]
    assert fc({"no_bias": False}) and not fc({"no_bias": True})
    assert REGISTRY["RNN"].optional_inputs["state_cell"]({"mode": "lstm"})


@pytest.mark.parametrize("module", ["core.symbol.shape_rules"])
def test_side_tables_are_gone(module):
    with pytest.raises(ImportError):
        importlib.import_module(module)
    from core.symbol import mirror

    assert not hasattr(mirror, "MIRROR_OPS")
    from core.sym import _compose

    assert not hasattr(_compose, "OPTIONAL_INPUTS")
