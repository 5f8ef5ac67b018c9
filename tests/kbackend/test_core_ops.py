"""kbackend core: associative_scan, scatter/scatter_update, slice/slice_update,
custom_gradient and remat through keras.ops, against NumPy references, with
gradients from core.autograd checked against central finite differences."""
from __future__ import annotations

import operator
import re

import keras
import numpy as np
import pytest
from keras import ops
from keras.src.backend import compute_output_spec

from core import autograd

n = ops.convert_to_numpy


@pytest.fixture
def rng():
    return np.random.default_rng(0)


def close(got, want, tol=1e-6):
    np.testing.assert_allclose(n(got), want, rtol=tol, atol=tol)


def grads(fn, *arrays):
    """Gradients of sum(fn(*arrays) * w) for a fixed random w, with core.autograd."""
    xs = [ops.convert_to_tensor(a) for a in arrays]
    for x in xs:
        x.attach_grad()
    with autograd.record():
        out = fn(*xs)
        w = ops.convert_to_tensor(np.linspace(0.5, 1.5, out.size).reshape(out.shape))
        loss = (out * w).sum()
    loss.backward()
    return [n(x.grad) for x in xs], n(w)


def numeric(fn, arrays, w, eps=1e-6):
    out = []
    for i, a in enumerate(arrays):
        g = np.zeros_like(a)
        for j in np.ndindex(a.shape):
            hi = [b.copy() for b in arrays]
            lo = [b.copy() for b in arrays]
            hi[i][j] += eps
            lo[i][j] -= eps
            g[j] = ((n(fn(*hi)) * w).sum() - (n(fn(*lo)) * w).sum()) / (2 * eps)
        out.append(g)
    return out


def check_grads(fn, *arrays):
    got, w = grads(fn, *arrays)
    for g, want in zip(got, numeric(fn, [np.asarray(a, "float64") for a in arrays], w)):
        np.testing.assert_allclose(g, want, rtol=1e-5, atol=1e-6)


# --- scatter / scatter_update

SCATTER_IDX = np.array([[0, 1], [2, 0], [0, 1]])
SCATTER_V = np.array([1.0, 2.0, 3.0])
UPDATE_IDX = np.array([[0, 1], [2, 2], [0, 1], [-1, 0], [0, 1]])


def test_scatter_adds_repeats_takes_slices_and_values_dtype(rng):
    idx, v = SCATTER_IDX, SCATTER_V
    want = np.zeros((3, 2))
    np.add.at(want, tuple(idx.T), v)
    close(ops.scatter(idx, v, (3, 2)), want)
    assert n(ops.scatter(idx, v.astype("int32"), (3, 2))).dtype == np.int32
    rows = rng.standard_normal((2, 3))
    want = np.zeros((4, 3))
    want[[1, 3]] = rows
    close(ops.scatter(np.array([[1], [3]]), rows, (4, 3)), want)
    check_grads(lambda v: ops.scatter(idx, v, (3, 2)), v)


@pytest.mark.parametrize("red, ufunc", [
    ("add", np.add), ("max", np.maximum), ("min", np.minimum), ("mul", np.multiply),
])
def test_scatter_update_reductions_with_repeated_indices(rng, red, ufunc):
    x = rng.standard_normal((4, 3))
    u = rng.standard_normal(5)
    idx = UPDATE_IDX
    want = x.copy()
    ufunc.at(want, tuple(idx.T), u)
    close(ops.scatter_update(x, idx, u, reduction=red), want)
    check_grads(lambda x, u: ops.scatter_update(x, idx, u, reduction=red), x, u)


def test_scatter_update_last_of_repeated_indices_wins(rng):
    x = rng.standard_normal((4, 3))
    u = rng.standard_normal(5)
    idx = UPDATE_IDX
    want = x.copy()
    want[tuple(idx.T)] = u  # NumPy: the last of repeated indices wins
    close(ops.scatter_update(x, idx, u), want)
    check_grads(lambda x, u: ops.scatter_update(x, idx, u), x, u)


def test_scatter_update_rows_cast_and_inputs_unchanged(rng):
    x = rng.standard_normal((4, 3))
    xi = np.ones((3, 2), "int32")
    out = ops.scatter_update(ops.convert_to_tensor(xi), [[1]], np.array([[7.0, 8.0]]))
    assert n(out).dtype == np.int32 and n(out).tolist() == [[1, 1], [7, 8], [1, 1]]
    t = ops.convert_to_tensor(x)
    ops.scatter_update(t, [[0, 0]], [5.0])
    close(t, x)


# --- slice / slice_update

def test_slice_clamps_starts_and_has_gradients(rng):
    x = rng.standard_normal((4, 5, 3))
    close(ops.slice(x, [1, 2, 0], [2, 3, 3]), x[1:3, 2:5, 0:3])
    close(ops.slice(x, ops.convert_to_tensor([1, 2]), [2, -1]), x[1:3, 2:])
    close(ops.slice(x, [3, 4, 0], [2, 2, 1]), x[2:4, 3:5, 0:1])  # starts clamped, as in JAX
    check_grads(lambda x: ops.slice(x, [1, 2, 0], [2, 3, 2]), x)


def test_slice_update_clamps_starts_and_has_gradients(rng):
    x = rng.standard_normal((4, 5, 3))
    u = rng.standard_normal((2, 2, 3))
    want = x.copy()
    want[1:3, 3:5, :] = u
    close(ops.slice_update(x, [1, 3, 0], u), want)
    want = x.copy()
    want[2:4, 3:5, :] = u
    close(ops.slice_update(x, [5, 9, 0], u), want)  # clamped
    check_grads(lambda x, u: ops.slice_update(x, [1, 3, 0], u), x, u)


def test_slice_in_while_loop_with_tensor_start():
    def cond(i, s):
        return i < 4

    def body(i, s):
        return i + 1, s + ops.slice(np.arange(10.0), [i], [2])

    i, s = ops.while_loop(cond, body, (0, np.zeros(2)))
    close(s, [6.0, 10.0])


_X453 = np.random.default_rng(0).standard_normal((4, 5, 3))  # the slices tests' x


@pytest.mark.parametrize("call, msg", [
    (lambda: ops.slice(_X453, [0, 0, 0], [5, 1, 1]), "slice size 5"),
    (lambda: ops.slice(_X453, [0.5, 0, 0], [1, 1, 1]), "integers"),
    (lambda: ops.slice_update(_X453, [0, 0, 0], np.ones((2, 2))), "rank"),
    (lambda: ops.scatter([[4]], [1.0], (4,)), "out of bounds"),
    (lambda: ops.scatter([[1]], [1.0, 2.0], (4,)), "expected values"),
    (lambda: ops.scatter_update(_X453, [[0]], np.ones(3), "sum"), "reduction"),
], ids=["slice_size", "float_start", "update_rank", "scatter_bounds", "scatter_values",
        "reduction"])
def test_slice_and_scatter_errors(call, msg):
    with pytest.raises((ValueError, TypeError, IndexError), match=re.escape(msg)):
        call()


# --- associative_scan

def _recurrence(p, q):
    return q[0] * p[0], q[0] * p[1] + q[1]


@pytest.mark.parametrize("length", range(1, 10))
def test_associative_scan_non_commutative_recurrence(rng, length):
    # non-commutative: the linear recurrence h = a * h + b, forward and reversed
    a = rng.random((length, 3))
    b = rng.standard_normal((length, 3))
    h = np.zeros(3)
    want = []
    for t in range(length):
        h = a[t] * h + b[t]
        want.append(h)
    close(ops.associative_scan(_recurrence, (a, b))[1], np.array(want))
    hr = np.zeros(3)
    want_r = []
    for t in reversed(range(length)):
        hr = a[t] * hr + b[t]
        want_r.append(hr)
    close(ops.associative_scan(_recurrence, (a, b), reverse=True)[1], np.array(want_r[::-1]))


def test_associative_scan_axes_gradients_errors_and_symbolic(rng):
    x = rng.standard_normal((3, 7))
    close(ops.associative_scan(operator.add, x, axis=1), np.cumsum(x, 1))
    close(ops.associative_scan(operator.add, x, axis=-2), np.cumsum(x, 0))
    close(ops.associative_scan(ops.maximum, x, axis=1), np.maximum.accumulate(x, 1))
    check_grads(lambda x: ops.associative_scan(operator.mul, x, axis=1), x)
    with pytest.raises(ValueError, match="first dimension"):
        ops.associative_scan(operator.add, (np.ones(2), np.ones(3)))
    # symbolic, with an unknown dimension
    spec = ops.associative_scan(operator.add, keras.KerasTensor((5, None)), axis=0)
    assert spec.shape == (5, None), spec.shape


# --- custom_gradient and remat

@ops.custom_gradient
def _log1pexp(x):
    e = ops.exp(x)

    def grad(upstream):  # TF/JAX convention
        return upstream * (1.0 - 1.0 / (1 + e))

    return ops.log(1 + e), grad


@ops.custom_gradient
def _scaled(a, b, factor=2.0):  # torch convention; a nested output; a kwarg
    def grad(*args, upstream):
        ua, ub = upstream
        return ua * 10.0, None

    return (a * factor, a + b), grad


@ops.custom_gradient
def _halve_grad(x):
    def grad(upstream):
        return upstream * 0.5

    return x * 1.0, grad


class _Scale(keras.layers.Layer):
    def build(self, _):
        self.w = self.add_weight(shape=(), initializer="ones")

    def call(self, x):
        return x * _halve_grad(self.w)


def test_custom_gradient_tf_convention():
    x = ops.convert_to_tensor(np.array([100.0, 0.0, -3.0], "float32"))
    x.attach_grad()
    with autograd.record():
        y = _log1pexp(x)
    y.backward()
    close(x.grad, 1 / (1 + np.exp(-np.array([100.0, 0.0, -3.0]))), 1e-6)
    close(y[1:], np.log1p(np.exp([0.0, -3.0])), 1e-6)


def test_custom_gradient_torch_convention_nested_output_and_kwarg():
    a = ops.convert_to_tensor(np.ones((2,), "float32"))
    b = ops.convert_to_tensor(np.ones((2,), "float32"))
    a.attach_grad()
    b.attach_grad()
    with autograd.record():
        p, q = _scaled(a, b, factor=3.0)
        loss = (p + q).sum()
    loss.backward()
    close(p, [3.0, 3.0])
    close(a.grad, [10.0, 10.0])
    close(b.grad, [0.0, 0.0])


def test_custom_gradient_of_a_variable_is_used_by_fit():
    model = keras.Sequential([keras.Input((1,)), _Scale()])
    model.compile(optimizer=keras.optimizers.SGD(1.0), loss="mse")
    xs = np.ones((4, 1), "float32")
    model.fit(xs, np.zeros((4, 1), "float32"), epochs=1, batch_size=4, verbose=0)
    # mse gradient at w=1 is 2 * w = 2; halved to 1, so w becomes 0 (not -1)
    close(model.layers[0].w, 0.0)


def test_remat_keeps_values_and_gradients(rng):
    f = keras.remat(lambda x: ops.sin(x) * 2)
    check_grads(f, rng.standard_normal(4))


def test_custom_gradient_without_grad_fn_is_refused():
    with pytest.raises(TypeError, match=re.escape("(output, grad_fn)")):
        ops.custom_gradient(lambda x: x * 2)(ops.convert_to_tensor(1.0))


# --- scan errors

@pytest.mark.parametrize("call, kind, msg", [
    (lambda: ops.scan(123, 0.0, np.ones(3)), TypeError, "should be a callable"),
    (lambda: ops.scan(lambda c, x: (c, x), 0.0, np.ones(3), unroll=0), ValueError,
     "positive integer"),
    (lambda: ops.associative_scan(1, np.ones(3)), TypeError, "callable"),
], ids=["scan_callable", "scan_unroll", "associative_scan_callable"])
def test_scan_errors(call, kind, msg):
    with pytest.raises(kind, match=msg):
        call()


# --- vectorized_map, shape inference, conversion

def test_vectorized_map_nested_elements_and_results():
    out = ops.vectorized_map(lambda d: {"a": d["x"] * 2, "b": ops.sum(d["y"])},
                             {"x": np.ones((3, 2)), "y": np.ones((3, 4))})
    assert n(out["a"]).tolist() == [[2, 2]] * 3 and n(out["b"]).tolist() == [4, 4, 4]
    out = ops.vectorized_map(lambda xs: xs[0] - xs[1], (np.ones((3, 2)), np.zeros((3, 2))))
    assert n(out).shape == (3, 2)


def test_shape_inference_when_zeros_make_the_function_fail():
    # a singular matrix
    x = keras.Input((3, 3))
    y = keras.layers.Lambda(lambda t: ops.linalg.inv(t))(x)
    assert y.shape == (None, 3, 3), y.shape
    spec = compute_output_spec(lambda t: (t[:, :2], None, 3), keras.KerasTensor((None, 5, 4)))
    assert spec[0].shape == (None, 2, 4) and spec[1:] == (None, 3), spec


def test_python_ints_convert_to_int32_unless_they_need_int64():
    # a requested dtype they overflow fails
    assert str(ops.convert_to_tensor(3).dtype) == "int32"
    assert str(ops.convert_to_tensor([1, 2**40]).dtype) == "int64"
    with pytest.raises(OverflowError, match="does not fit in int32"):
        ops.convert_to_tensor(2**33, dtype="int32")
    assert ops.shape([[1, 2, 3]]) == (1, 3)


def test_scan_and_map_of_length_zero_keep_structure_shape_and_dtype():
    # as JAX
    c, ys = ops.scan(lambda c, x: (c + ops.sum(x), {"a": x * 2, "b": c}),
                     np.float32(1), np.zeros((0, 3), "float32"))
    assert float(n(c)) == 1.0 and n(ys["a"]).shape == (0, 3) and n(ys["b"]).shape == (0,)
    assert n(ops.map(lambda x: x[:2], np.zeros((0, 5), "int32"))).dtype == np.int32


def test_variables_convert_to_numpy_with_copy_keyword():
    # NumPy 2's copy keyword
    v = keras.Variable(np.ones(2, "float32"))
    assert np.asarray(v, copy=True).tolist() == [1.0, 1.0]
