"""The per-operator table on a GPU context (skipped without CuPy and a GPU).

The bodies are the CPU tests', run with ``gpu(0)`` as the current context, so every
array the rows create lives on the GPU and every operator runs through CuPy.
"""
import numpy as np
import pytest

import core
from tests.core.ops import test_op_table as table

pytestmark = [pytest.mark.gpu,
              pytest.mark.skipif(core.num_gpus() == 0, reason="needs CuPy and a GPU")]


@pytest.mark.parametrize("spec_id", table._ids())
def test_values_on_gpu(spec_id):
    chk = table._InferChecker()
    core.ops.dispatch._hooks.append(chk)
    try:
        with core.gpu(0):
            table.test_values.__wrapped__(spec_id, chk) if hasattr(
                table.test_values, "__wrapped__") else table.test_values(spec_id, chk)
    finally:
        core.ops.dispatch._hooks.remove(chk)


@pytest.mark.parametrize("spec_id", table._ids())
def test_gradients_on_gpu(spec_id):
    with core.gpu(0):
        table.test_gradients(spec_id)


def test_gpu_and_cpu_agree_and_move():
    x = np.random.default_rng(0).standard_normal((8, 8)).astype(np.float32)
    a = core.nd.array(x, ctx=core.gpu(0))
    assert a.context == core.gpu(0)
    b = a.as_in_context(core.cpu(0))
    np.testing.assert_array_equal(b.asnumpy(), x)
    np.testing.assert_allclose(core.nd.exp(a).asnumpy(), np.exp(x), rtol=1e-6)
