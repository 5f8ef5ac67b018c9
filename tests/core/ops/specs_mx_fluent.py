"""Rows for MXNet 1.x's shape_array, size_array, broadcast_axis and batch_take
(``core/ops/mx_fluent.py``), which ``core.sym`` composes."""
import numpy as np
import pytest

from core import autograd, cpu, nd, sym
from core.ops.dispatch import MXNetError

from .op_db import OpSpec, Sample, rand


def _check_shape_size(spec, rng, arr):
    x = arr(rand(rng, (2, 3, 4), "float32"))
    s = nd.shape_array(x)
    assert s.dtype == np.int64 and s.asnumpy().tolist() == [2, 3, 4]
    n = nd.size_array(x)
    assert n.dtype == np.int64 and n.asnumpy().tolist() == [24]
    v = sym.var("x")
    exe = sym.Group([sym.shape_array(v), v.size_array()]).bind(cpu(), {"x": x})
    a, b = exe.forward()
    assert a.asnumpy().tolist() == [2, 3, 4] and b.asnumpy().tolist() == [24]


def _check_batch_take(spec, rng, arr):
    a = rand(rng, (4, 3), "float32")
    idx = np.array([0, 2, 1, 5], dtype="int32")  # 5 is clipped to the last column
    got = nd.batch_take(arr(a), arr(idx, dtype="int32"))
    np.testing.assert_array_equal(got.asnumpy(), a[np.arange(4), [0, 2, 1, 2]])
    with pytest.raises(ValueError, match="batch_take"):
        nd.batch_take(arr(a), arr(np.zeros(3), dtype="int32"))
    # MXNet registers no gradient: eager backward and a bind that needs it both raise
    x = arr(a)
    x.attach_grad()
    with autograd.record():
        y = nd.batch_take(x, arr(idx, dtype="int32"))
    with pytest.raises(MXNetError, match="batch_take: the operator has no gradient"):
        y.backward()
    xs, ids = sym.var("x"), sym.var("idx")
    with pytest.raises(MXNetError, match="batch_take"):
        sym.batch_take(xs, ids).simple_bind(cpu(), x=(4, 3), idx=(4,),
                                            type_dict={"x": "float32", "idx": "int32"})
    exe = sym.stop_gradient(sym.batch_take(xs, ids)).simple_bind(
        cpu(), x=(4, 3), idx=(4,), type_dict={"x": "float32", "idx": "int32"})
    exe.forward(is_train=True)
    exe.backward()
    assert not exe.grad_dict["x"].asnumpy().any()


SPECS = [
    OpSpec("shape_array", None, None, None, check=_check_shape_size, covers=("size_array",)),
    OpSpec("broadcast_axis", lambda x, **k: nd.broadcast_axis(x, **k),
           lambda x, axis, size: np.broadcast_to(
               x, tuple(size[list(axis).index(i)] if i in axis else n
                        for i, n in enumerate(x.shape))),
           lambda rng, d: [Sample(rand(rng, (3, 1, 1), d), axis=(1, 2), size=(4, 2)),
                           Sample(rand(rng, (1, 5), d), axis=(0,), size=(3,))]),
    OpSpec("batch_take", None, None, None, check=_check_batch_take),
]
