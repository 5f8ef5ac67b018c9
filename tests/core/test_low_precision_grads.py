"""Gradients through bfloat16, float16 and float8 computations (mixed precision).

ml_dtypes' bfloat16 and float8 have dtype kind ``"V"``, not ``"f"``: every VJP must ask
``core.dtypes.is_float`` whether an input is differentiable, else the gradient is
silently zero or dropped. Each case computes ``sum(f(*masters.astype(dtype)) * head)``
from float32 master arrays whose values are exact in ``dtype``, and compares the
masters' gradients with the float32 computation on the same values: within a tolerance
for the dtype, and nonzero wherever the float32 gradient is.
"""
from __future__ import annotations

import ml_dtypes
import numpy as np
import pytest

from core import autograd, nd
from core import np as knp
from core.dtypes import FLOATS, SUPPORTED, is_float, is_integer
from core.ops import F

# float16 is the control: its kind is "f", so it always worked.
LOW = ("bfloat16", "float16")
# float8 arithmetic runs (ml_dtypes has loops for it): for the elementwise and
# data-movement cases, where its 3 mantissa bits still give a meaningful comparison.
LOW8 = LOW + ("float8_e4m3fn",)
# Relative to the largest float32 gradient of the case.
TOL = {"bfloat16": 2e-2, "float16": 2e-3, "float8_e4m3fn": 0.15}


def _np_dtype(dtype):
    return np.dtype(getattr(ml_dtypes, dtype)) if hasattr(ml_dtypes, dtype) else np.dtype(dtype)


def _values(rng, shape, dtype, low=-2.0, high=2.0):
    """float32 values that ``dtype`` holds exactly."""
    return rng.uniform(low, high, shape).astype(_np_dtype(dtype)).astype(np.float32)


def _grads(fn, values, dtype):
    """(gradients of the float32 masters, the output's dtype) for the computation in
    ``dtype`` of ``sum(fn(*xs) * head)`` (``head`` random, exact in ``dtype``)."""
    masters = [nd.array(v, dtype="float32") for v in values]
    for m in masters:
        m.attach_grad()
    with autograd.record():
        out = fn(*[m.astype(dtype) for m in masters])
        head = nd.array(_values(np.random.default_rng(99), out.shape, dtype))
        loss = (out.astype("float32") * head).sum()
    loss.backward()
    return [m.grad.asnumpy() for m in masters], out.dtype


def check(fn, values, dtype, out_dtype=None, tol=None):
    """``fn``'s gradients in ``dtype`` against float32's on the same values: close, and
    nonzero wherever float32's is well above zero.

    Args:
        out_dtype: the dtype ``fn`` must give in ``dtype`` (default: ``dtype``, i.e. the
            computation really ran in low precision).
        tol: relative to the largest float32 gradient (default: ``TOL[dtype]``).
    """
    values = [np.asarray(v).astype(_np_dtype(dtype)).astype(np.float32) for v in values]
    ref, _ = _grads(fn, values, "float32")
    low, got = _grads(fn, values, dtype)
    assert got == _np_dtype(out_dtype or dtype), f"computed in {got}, expected {out_dtype or dtype}"
    tol = TOL[dtype] if tol is None else tol
    for i, (r, g) in enumerate(zip(ref, low)):
        assert g.dtype == np.float32 and g.shape == r.shape
        scale = float(np.abs(r).max())
        assert scale > 0, f"input {i}: the float32 gradient is zero; the case tests nothing"
        np.testing.assert_allclose(g, r, rtol=tol, atol=tol * scale,
                                   err_msg=f"input {i}: {dtype} gradient vs float32")
        big = np.abs(r) > 0.1 * scale
        assert (g[big] != 0).all(), f"input {i}: {dtype} gradient is zero where float32's is not"


@pytest.fixture
def rng():
    return np.random.default_rng(0)


# --------------------------------------------------------------- the helper
def test_is_float_knows_the_ml_dtypes_floats():
    for d in FLOATS:
        assert is_float(d) and is_float(d.name), d
        assert d.kind in "fV"
    for d in SUPPORTED:
        if d not in FLOATS:
            assert not is_float(d) and not is_float(d.name), d
    assert is_float(ml_dtypes.bfloat16) and is_float(np.float32)
    # None is what a VJP sees for a Python scalar input: not differentiable (NumPy's
    # dtype(None) is float64, so a bare ``in FLOATS`` said True).
    assert not is_float(None) and not is_float("nonsense") and not is_float(3.0)
    assert is_integer("uint8") and not is_integer("bfloat16")


# --------------------------------------------------------------- elementwise
_SHAPES = [((3, 4), (3, 4)), ((3, 4), (4,)), ((2, 1, 4), (3, 1))]
_BINARY = {
    "add": lambda a, b: a + b,
    "subtract": lambda a, b: a - b,
    "multiply": lambda a, b: a * b,
    "divide": lambda a, b: a / b,
}


@pytest.mark.parametrize("dtype", LOW8)
@pytest.mark.parametrize("shapes", _SHAPES, ids=str)
@pytest.mark.parametrize("op", sorted(_BINARY))
def test_binary_broadcasting(op, shapes, dtype, rng):
    a = _values(rng, shapes[0], dtype)
    b = _values(rng, shapes[1], dtype, 0.5, 2.0) * rng.choice([-1, 1], shapes[1])
    check(_BINARY[op], [a, b], dtype)


@pytest.mark.parametrize("dtype", LOW8)
def test_binary_with_python_scalars(dtype, rng):
    check(lambda x: (x * 3 + 1) / 2 - x / 4, [_values(rng, (5,), dtype)], dtype)


@pytest.mark.parametrize("dtype", LOW)
def test_mixed_dtype_binary_reaches_the_low_precision_input(dtype, rng):
    w = nd.array(_values(rng, (4,), dtype))
    check(lambda x: x * w, [_values(rng, (3, 4), dtype)], dtype, out_dtype="float32")


# --------------------------------------------------------------- casts
@pytest.mark.parametrize("dtype", LOW8)
def test_cast_back_and_forth(dtype, rng):
    def fn(x):
        y = nd.cast(x * x, dtype="float32") * 0.5
        return nd.cast(y.astype(dtype) + x, dtype=dtype)

    check(fn, [_values(rng, (3, 4), dtype)], dtype)


@pytest.mark.parametrize("dtype", LOW8)
def test_low_precision_leaf_gets_its_gradient(dtype, rng):
    x = nd.array(_values(rng, (2, 3), dtype, 0.5, 2.0), dtype=dtype)
    x.attach_grad()
    with autograd.record():
        loss = (x.astype("float32") * 3.0).sum() + (x * x).astype("float32").sum()
    loss.backward()
    assert x.grad.dtype == _np_dtype(dtype)
    want = 3.0 + 2 * x.asnumpy().astype(np.float32)
    np.testing.assert_allclose(x.grad.asnumpy().astype(np.float32), want, rtol=TOL[dtype] * 2)


@pytest.mark.parametrize("dtype", LOW8)
def test_sum_over_a_chain(dtype, rng):
    b = _values(rng, (4,), dtype)

    def fn(x, w):
        h = x * w + nd.array(b).astype(dtype)
        return (h * h).sum(axis=1) + h.mean(axis=1)

    check(fn, [_values(rng, (3, 4), dtype), _values(rng, (4,), dtype)], dtype)


# --------------------------------------------------------------- products
@pytest.mark.parametrize("dtype", LOW)
def test_dot(dtype, rng):
    check(nd.dot, [_values(rng, (3, 8), dtype), _values(rng, (8, 5), dtype)], dtype)
    check(lambda a, b: nd.dot(a, b, transpose_b=True),
          [_values(rng, (3, 8), dtype), _values(rng, (5, 8), dtype)], dtype)


@pytest.mark.parametrize("dtype", LOW)
def test_matmul_and_batch_dot(dtype, rng):
    check(knp.matmul, [_values(rng, (2, 3, 8), dtype), _values(rng, (8, 4), dtype)], dtype)
    check(nd.batch_dot, [_values(rng, (2, 3, 8), dtype), _values(rng, (2, 8, 4), dtype)],
          dtype)


@pytest.mark.parametrize("dtype", LOW)
def test_fully_connected(dtype, rng):
    def fn(x, w, b):
        return nd.FullyConnected(x, w, b, num_hidden=5)

    check(fn, [_values(rng, (3, 8), dtype), _values(rng, (5, 8), dtype),
               _values(rng, (5,), dtype)], dtype)
    check(lambda x, w: nd.FullyConnected(x, w, no_bias=True, num_hidden=5, flatten=False),
          [_values(rng, (2, 3, 8), dtype), _values(rng, (5, 8), dtype)], dtype)


# --------------------------------------------------------------- indexing and joins
@pytest.mark.parametrize("dtype", LOW8)
def test_indexing_and_slicing(dtype, rng):
    x = [_values(rng, (4, 5), dtype)]
    check(lambda a: a[1:, ::2], x, dtype)
    check(lambda a: a[nd.array([0, 2, 2])], x, dtype)
    check(lambda a: a[:, 3], x, dtype)
    check(lambda a: nd.slice_axis(a, axis=1, begin=1, end=4), x, dtype)
    check(lambda a: nd.slice(a, begin=(1, 0), end=(3, 5)), x, dtype)


@pytest.mark.parametrize("dtype", LOW)
def test_index_update_reaches_both_inputs(dtype, rng):
    def fn(a, v):
        a = a * 1
        a[1:3] = v * 2
        return a

    check(fn, [_values(rng, (4, 5), dtype), _values(rng, (5,), dtype)], dtype)


@pytest.mark.parametrize("dtype", LOW8)
def test_take_pick_gather_nd(dtype, rng):
    x = [_values(rng, (4, 5), dtype)]
    idx = nd.array([3, 0, 3, 1])
    check(lambda a: nd.take(a, idx), x, dtype)
    check(lambda a: nd.take(a, idx, axis=1), x, dtype)
    check(lambda a: nd.pick(a, nd.array([4, 0, 2, 2]), axis=1), x, dtype)
    check(lambda a: nd.gather_nd(a, nd.array([[0, 3, 3], [1, 4, 4]])), x, dtype)


@pytest.mark.parametrize("dtype", LOW8)
def test_concat_stack_split(dtype, rng):
    ab = [_values(rng, (3, 4), dtype), _values(rng, (3, 2), dtype)]
    check(lambda a, b: nd.concat(a, b, dim=1), ab, dtype)
    check(lambda a, b: knp.concatenate([a, b], axis=None), ab, dtype)
    same = [_values(rng, (3, 4), dtype), _values(rng, (3, 4), dtype)]
    check(lambda a, b: nd.stack(a, b, axis=1), same, dtype)

    def split(a):
        p, q = nd.split(a, num_outputs=2, axis=1)
        return p * 2 - q

    check(split, [_values(rng, (3, 4), dtype)], dtype)


# --------------------------------------------------------------- nn
@pytest.mark.parametrize("dtype", LOW)
def test_softmax_and_log_softmax(dtype, rng):
    x = [_values(rng, (3, 6), dtype, -3, 3)]
    check(lambda a: nd.softmax(a, axis=-1), x, dtype)
    check(lambda a: nd.softmax(a, axis=0, temperature=2.0), x, dtype)
    check(lambda a: nd.log_softmax(a, axis=-1), x, dtype)
    check(lambda a: nd.softmax(a, dtype="float32"), x, dtype, out_dtype="float32")


@pytest.mark.parametrize("dtype", LOW)
def test_softmax_cross_entropy(dtype, rng):
    data = [_values(rng, (4, 5), dtype, -3, 3)]
    label = nd.array([1, 0, 4, 2])
    check(lambda x: nd.softmax_cross_entropy(x, label), data, dtype)
    check(lambda x: nd.softmax_cross_entropy_with_logits(x, label), data, dtype)
    check(lambda x: nd.softmax_cross_entropy_with_logits(x, label, ignore_label=0), data,
          dtype)


@pytest.mark.parametrize("dtype", LOW)
def test_softmax_cross_entropy_label_gradient(dtype, rng):
    """With sparse=False the labels are distributions and get a gradient too."""
    logits = _values(rng, (4, 5), dtype, -3, 3)
    z = rng.uniform(0.1, 1.0, (4, 5))
    z = z / z.sum(axis=1, keepdims=True)

    def ce(x, lab):
        return nd.softmax_cross_entropy_with_logits(x, lab, sparse=False)

    check(ce, [logits, z], dtype)

    def ce_grad(x, lab):  # the label path of the gradient's own VJP (second order)
        g = nd.ones((4,)).astype(dtype)
        return F._softmax_ce_grad(x, lab, g, sparse=False) * 3

    check(ce_grad, [logits, z], dtype, tol=max(TOL[dtype], 3e-2))


@pytest.mark.parametrize("dtype", LOW)
def test_sigmoid_binary_cross_entropy(dtype, rng):
    x, z = _values(rng, (3, 4), dtype), rng.integers(0, 2, (3, 4))
    check(lambda a, b: nd.sigmoid_binary_cross_entropy(a, b), [x, z], dtype)


@pytest.mark.parametrize("dtype", LOW)
def test_embedding(dtype, rng):
    ids = nd.array([[0, 3, 3], [5, 1, 0]])
    check(lambda w: nd.Embedding(ids, w, input_dim=6, output_dim=4),
          [_values(rng, (6, 4), dtype)], dtype)


@pytest.mark.parametrize("dtype", LOW)
@pytest.mark.parametrize("call", ["gelu", "LeakyReLU-gelu", "LeakyReLU-gelu_tanh"])
def test_gelu(call, dtype, rng):
    fn = {"gelu": lambda a: nd.gelu(a),
          "LeakyReLU-gelu": lambda a: nd.LeakyReLU(a, act_type="gelu"),
          "LeakyReLU-gelu_tanh": lambda a: nd.LeakyReLU(a, act_type="gelu_tanh")}[call]
    check(fn, [_values(rng, (3, 5), dtype, -3, 3)], dtype)


@pytest.mark.parametrize("dtype", LOW)
def test_gelu_second_order(dtype, rng):
    x = nd.array(_values(rng, (6,), dtype, -2, 2))
    x.attach_grad()
    with autograd.record():
        y = nd.gelu(x.astype(dtype))
        (gx,) = autograd.grad(y.astype("float32").sum(), [x], create_graph=True)
        loss = (gx * gx).sum()
    loss.backward()
    assert np.abs(x.grad.asnumpy()).min() > 0


# --------------------------------------------------------------- traced and abstract
@pytest.mark.parametrize("dtype", LOW)
def test_hybridized_gradients(dtype, rng):
    """The same gradients through a traced graph run by CachedOp."""
    from core.symbol import CachedOp, Tracer

    def fn(x, w, b):
        h = nd.gelu(nd.FullyConnected(x, w, b, num_hidden=4))
        h = nd.concat(h, nd.take(h, nd.array([0, 2])), dim=0)
        return nd.log_softmax(h * x.sum(axis=1).mean())

    values = [_values(rng, (3, 5), dtype), _values(rng, (4, 5), dtype), _values(rng, (4,), dtype)]
    with Tracer() as t:
        xs = [t.variable(f"x{i}", v.shape, "float32") for i, v in enumerate(values)]
        graph = t.graph([fn(*[x.astype(dtype) for x in xs])])
    op = CachedOp(graph, None)

    ref, _ = _grads(fn, values, dtype)
    masters = [nd.array(v) for v in values]
    for m in masters:
        m.attach_grad()
    with autograd.record():
        out = op({f"x{i}": m for i, m in enumerate(masters)})
        out = out[0] if isinstance(out, (list, tuple)) else out
        assert out.dtype == _np_dtype(dtype)
        head = nd.array(_values(np.random.default_rng(99), out.shape, dtype))
        loss = (out.astype("float32") * head).sum()
    loss.backward()
    for m, r in zip(masters, ref):
        np.testing.assert_allclose(m.grad.asnumpy(), r, rtol=1e-6, atol=1e-6)
        assert np.abs(r).max() > 0


def test_gradient_operators_infer_low_precision():
    """The infer rules of the operators a bfloat16 backward runs (abstract evaluation,
    kbackend's compute_output_spec, tracing) accept bfloat16 and float8."""
    from core.ops.abstract import abstract_eval, placeholder

    for dtype in ("bfloat16", "float8_e4m3fn"):
        with abstract_eval():
            x, w = placeholder((3, 5), dtype), placeholder((4, 5), dtype)
            assert F._gelu_grad(x, x).dtype == _np_dtype(dtype)
            assert F.FullyConnected(x, w, no_bias=True, num_hidden=4).dtype == _np_dtype(dtype)
            assert F.sigmoid_binary_cross_entropy(x, x).dtype == _np_dtype(dtype)
            assert F._softmax_ce_grad(x, x, placeholder((3,), dtype),
                                      sparse=False).dtype == _np_dtype(dtype)
            assert F.Embedding(placeholder((2,), dtype), w).shape == (2, 5)


# --------------------------------------------------------------- accumulation
@pytest.mark.parametrize("dtype", ("bfloat16", "float8_e4m3fn"))
def test_broadcast_gradients_accumulate_in_float32(dtype):
    """A bias gradient sums the batch: in bfloat16 itself 10,000 x 0.01 sums to 4."""
    n = 10000
    b = nd.zeros((3,))
    b.attach_grad()
    x = nd.zeros((n, 3)).astype(dtype)
    with autograd.record():
        y = x + b.astype(dtype)
    y.backward(nd.full((n, 3), 0.01).astype(dtype))
    want = n * float(np.asarray(0.01, np.float32).astype(_np_dtype(dtype)).astype(np.float32))
    np.testing.assert_allclose(b.grad.asnumpy(), want, rtol=TOL[dtype] / 2)


@pytest.mark.parametrize("dtype", ("bfloat16", "float8_e4m3fn"))
def test_repeated_ids_accumulate_in_float32(dtype):
    n = 4096
    w = nd.zeros((3, 2))
    w.attach_grad()
    ids = nd.array(np.zeros(n))
    with autograd.record():
        rows = nd.Embedding(ids, w.astype(dtype), input_dim=3, output_dim=2)
        taken = nd.take(w.astype(dtype), ids)
        s = rows + taken
    s.backward(nd.full((n, 2), 0.01).astype(dtype))
    one = float(np.asarray(0.01, np.float32).astype(_np_dtype(dtype)).astype(np.float32))
    np.testing.assert_allclose(w.grad.asnumpy()[0], 2 * n * one, rtol=TOL[dtype] / 2)
    assert (w.grad.asnumpy()[1:] == 0).all()


@pytest.mark.parametrize("dtype", ("bfloat16", "float8_e4m3fn", "float8_e5m2"))
def test_arrays_from_numpy_keep_low_precision_dtypes(dtype):
    x = nd.array(np.array([1.0, -2.0], dtype=_np_dtype(dtype)))
    assert x.dtype == _np_dtype(dtype)
    assert x[nd.array([1]).astype(dtype)].asnumpy().astype(np.float32).tolist() == [-2.0]


# --------------------------------------------------------------- end to end
def _mlp_losses(dtype, steps=30, lr=0.5):
    """Two-layer MLP on a fixed regression task: float32 master weights, the forward and
    backward in ``dtype`` (cast inside autograd.record()), SGD on the masters."""
    rng = np.random.default_rng(0)
    x = nd.array(rng.standard_normal((32, 8)))
    y = nd.array(np.tanh(x.asnumpy() @ rng.standard_normal((8, 1))))
    params = [nd.array(rng.standard_normal((16, 8)) * 0.3), nd.zeros((16,)),
              nd.array(rng.standard_normal((1, 16)) * 0.3), nd.zeros((1,))]
    for p in params:
        p.attach_grad()
    losses = []
    for _ in range(steps):
        with autograd.record():
            w1, b1, w2, b2 = [p.astype(dtype) for p in params]
            h = nd.relu(nd.FullyConnected(x.astype(dtype), w1, b1, num_hidden=16))
            out = nd.FullyConnected(h, w2, b2, num_hidden=1)
            assert out.dtype == _np_dtype(dtype)
            loss = ((out.astype("float32") - y) ** 2).mean()
        loss.backward()
        for p in params:
            assert np.abs(p.grad.asnumpy()).max() > 0 or p.shape == (1,)
            p[:] = p - lr * p.grad
        losses.append(float(loss.asscalar()))
    return losses


@pytest.mark.parametrize("dtype", ("bfloat16", "float16", "float32"))
def test_mlp_trains_in_low_precision_with_float32_masters(dtype):
    losses = _mlp_losses(dtype)
    assert losses[-1] < 0.5 * losses[0], losses
    if dtype != "float32":
        ref = _mlp_losses("float32")
        assert abs(losses[-1] - ref[-1]) < 0.1 * ref[0], (losses[-1], ref[-1])
