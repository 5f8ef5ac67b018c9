"""Rows for broadcasting, casting, copying and creation operators."""
import numpy as np

import core
from core import nd
from core import np as knp

from .op_db import OpSpec, Sample, np_dtype, rand

_F = ("float32", "float64", "float16", "bfloat16", "int32")


def _creation(name, call, ref, kwargs_list):
    def samples(rng, d):
        return [Sample(**dict(k, dtype=d)) for k in kwargs_list]

    return OpSpec(name, call, lambda **k: ref(**dict(k, dtype=np_dtype(k["dtype"]))), samples,
                  dtypes=("float32", "float64", "int32", "float16"), grad=False)


def _assigned(fn):
    """``fn`` with an ``out=`` it does not take (NumPy's ``identity``): the result is
    assigned into ``out``, as ``x[...] = np.identity(n)`` would."""
    def call(*args, out=None, **kwargs):
        res = fn(*args, **kwargs)
        if out is None:
            return res
        out[...] = res
        return out

    return call


def _copyto_check(spec, rng, arr):
    x = rand(rng, (3, 4), "float64")
    a = arr(x, ctx=core.cpu(0), dtype="float64")
    b = a.copyto(core.cpu(1))
    assert b.context == core.cpu(1) and np.array_equal(b.asnumpy(), x)
    a.attach_grad()
    with core.autograd.record():
        y = (a.as_in_context(core.cpu(1)) * 3).sum()
    y.backward()
    assert a.grad.context == core.cpu(0)
    np.testing.assert_allclose(a.grad.asnumpy(), np.full((3, 4), 3.0))


def _empty_check(spec, rng, arr):
    _shape_dtype(nd.empty((2, 3), dtype="int32"), (2, 3), "int32")
    out = arr(np.full((2, 3), 5), dtype="int32")
    assert nd.empty((2, 3), dtype="int32", out=out) is out
    _shape_dtype(out, (2, 3), "int32")


def _empty_like_check(spec, rng, arr):
    x = arr(np.zeros((2, 5)), dtype="int32")
    _shape_dtype(knp.empty_like(x), (2, 5), "int32")
    _shape_dtype(knp.empty_like(x, dtype="float64"), (2, 5), "float64")


SPECS = [
    OpSpec("broadcast_to", lambda x, **k: nd.broadcast_to(x, **k),
           lambda x, shape: np.broadcast_to(x, shape),
           lambda rng, d: [Sample(rand(rng, (3, 1), d), shape=(2, 3, 4)),
                           Sample(rand(rng, (4,), d), shape=(3, 4)),
                           Sample(rand(rng, (), d), shape=(2, 2))], dtypes=_F),
    OpSpec("broadcast_like", nd.broadcast_like, lambda x, y: np.broadcast_to(x, y.shape),
           lambda rng, d: [Sample(rand(rng, (3, 1), d), rand(rng, (3, 5), d), diff=[0]),
                           Sample(rand(rng, (1, 4), d), rand(rng, (2, 3, 4), d), diff=[0])]),
    OpSpec("sum_to", lambda x, **k: core.ops.F.sum_to(x, **k),
           lambda x, shape: x.sum(axis=tuple(range(x.ndim - len(shape))) + tuple(
               x.ndim - len(shape) + i for i, s in enumerate(shape) if s == 1),
               keepdims=True).reshape(shape),
           lambda rng, d: [Sample(rand(rng, (2, 3, 4), d), shape=(3, 1)),
                           Sample(rand(rng, (3, 4), d), shape=(4,)),
                           Sample(rand(rng, (3, 4), d), shape=())], rtol=1e-4),
    OpSpec("cast", lambda x, **k: nd.cast(x, **k), lambda x, dtype: x.astype(np_dtype(dtype)),
           lambda rng, d: [Sample(rand(rng, (3, 4), d), dtype="float64"),
                           Sample(rand(rng, (5,), d), dtype="float32"),
                           Sample(rand(rng, (2, 2), d), dtype="int32"),
                           Sample(rand(rng, (2, 2), d), dtype="bfloat16")],
           dtypes=("float32", "float64", "float16", "bfloat16"), grad=False),
    OpSpec("copy", nd.copy, np.copy, lambda rng, d: [Sample(rand(rng, (3, 4), d))], dtypes=_F,
           covers=()),
    OpSpec("BlockGrad", nd.BlockGrad, lambda x: x, lambda rng, d: [Sample(rand(rng, (3, 4), d))],
           dtypes=_F, grad=False),
    OpSpec("_copyto", None, None, None, check=_copyto_check),
    _creation("zeros", nd.zeros, np.zeros, [{"shape": (2, 3)}, {"shape": 4}, {"shape": ()}]),
    _creation("ones", nd.ones, np.ones, [{"shape": (2, 3)}, {"shape": (0, 2)}]),
    _creation("full", nd.full, np.full, [{"shape": (2, 3), "fill_value": 7}]),
    OpSpec("empty", lambda **k: nd.empty(**k).shape, lambda **k: np.empty(**k).shape,
           lambda rng, d: [Sample(shape=(2, 3))], dtypes=("float32",), grad=False,
           check_dtype=False, check=_empty_check),
    _creation("arange", nd.arange, lambda start, stop=None, **k: np.arange(
        *((start,) if stop is None else (start, stop)), **k),
              [{"start": 5}, {"start": 1, "stop": 7, "step": 2}, {"start": 3, "stop": 0,
                                                                  "step": -1}]),
    _creation("linspace", nd.linspace, np.linspace,
              [{"start": 0, "stop": 1, "num": 5}, {"start": -1, "stop": 1, "num": 4,
                                                   "endpoint": False}]),
    _creation("eye", nd.eye, np.eye, [{"N": 3}, {"N": 2, "M": 4, "k": 1}]),
    _creation("identity", _assigned(knp.identity), np.identity, [{"n": 3}]),
    OpSpec("zeros_like", nd.zeros_like, np.zeros_like,
           lambda rng, d: [Sample(rand(rng, (3, 4), d))], dtypes=_F, grad=False),
    OpSpec("ones_like", nd.ones_like, np.ones_like,
           lambda rng, d: [Sample(rand(rng, (3, 4), d))], dtypes=_F, grad=False),
    OpSpec("full_like", lambda x, **k: nd.full_like(x, **k), lambda x, **k: np.full_like(x, **k),
           lambda rng, d: [Sample(rand(rng, (3, 4), d), fill_value=2)], dtypes=_F, grad=False),
    OpSpec("empty_like", knp.empty_like, None, None, check=_empty_like_check),
]


def _shape_dtype(x, shape, dtype):
    assert x.shape == shape and x.dtype == np.dtype(dtype), (x.shape, x.dtype)
