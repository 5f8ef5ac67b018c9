"""kbackend's Fourier transforms, eig/lu_factor/jvp and the further random draws,
against NumPy/SciPy references, with gradients checked by central differences in
float64."""
from __future__ import annotations

import re

import keras
import numpy as np
import pytest
import scipy.linalg
import scipy.signal
from keras import ops, random

from core import autograd
from kbackend import linalg as kl
from kbackend import math as km

n = ops.convert_to_numpy
T = ops.convert_to_tensor


@pytest.fixture
def rng():
    return np.random.default_rng(0)


def close(got, want, tol=1e-6):
    np.testing.assert_allclose(n(got), want, rtol=tol, atol=tol)


def grad_check(rng, f, *shapes, tol=1e-6):
    """Gradient of <f(x), w> against central differences, all in float64."""
    xs = [rng.standard_normal(s) for s in shapes]
    ts = [T(x) for x in xs]
    for t in ts:
        t.attach_grad()
    with autograd.record():
        out = f(*ts)
        outs = out if isinstance(out, tuple) else (out,)
        ws = [rng.standard_normal(tuple(o.shape)) for o in outs]
        loss = sum((o * T(w)).sum() for o, w in zip(outs, ws))
    grads = autograd.grad(loss, ts)

    def value(vals):
        o = f(*[T(v) for v in vals])
        o = o if isinstance(o, tuple) else (o,)
        return sum(float((n(a) * w).sum()) for a, w in zip(o, ws))

    for i, x in enumerate(xs):
        num = np.zeros_like(x)
        for idx in np.ndindex(x.shape):
            up = [v.copy() for v in xs]
            up[i][idx] += 1e-6
            dn = [v.copy() for v in xs]
            dn[i][idx] -= 1e-6
            num[idx] = (value(up) - value(dn)) / 2e-6
        np.testing.assert_allclose(n(grads[i]), num, rtol=tol, atol=tol)


def raises(exc, text, f):
    with pytest.raises(exc, match=re.escape(text)):
        f()


# --- Fourier transforms

@pytest.fixture
def spectrum(rng):
    re_, im = rng.standard_normal((2, 4, 6)), rng.standard_normal((2, 4, 6))
    return re_, im, re_ + 1j * im


@pytest.mark.parametrize("op, ref", [
    (ops.fft, np.fft.fft), (ops.fft2, np.fft.fft2), (ops.ifft2, np.fft.ifft2),
    (km.ifft, np.fft.ifft),
], ids=["fft", "fft2", "ifft2", "ifft"])
def test_complex_transforms_against_numpy(spectrum, op, ref):
    re_, im, c = spectrum
    got, want = op((re_, im)), ref(c)
    close(got[0], want.real)
    close(got[1], want.imag)
    assert n(got[0]).dtype == np.float64


def test_complex_transforms_keep_float32(spectrum):
    re_, im, _ = spectrum
    r32 = ops.fft((re_.astype("float32"), im.astype("float32")))
    assert n(r32[0]).dtype == np.float32 and n(r32[1]).dtype == np.float32


@pytest.mark.parametrize("length", [None, 3, 10, 15])
def test_rfft_irfft_against_numpy(rng, spectrum, length):
    re_, im, c = spectrum
    x = rng.standard_normal((3, 10))
    got = ops.rfft(x, fft_length=length)
    close(got[0], np.fft.rfft(x, n=length).real)
    close(got[1], np.fft.rfft(x, n=length).imag)
    close(ops.irfft((re_, im), fft_length=length), np.fft.irfft(c, n=length))


def test_rfft_keeps_float16(rng):
    half = ops.rfft(rng.standard_normal((3, 10)).astype("float16"))
    assert n(half[0]).dtype == np.float16


# The VJPs are the adjoint transforms.
@pytest.mark.parametrize("f, shapes", [
    (lambda a, b: ops.fft((a, b)), [(2, 5), (2, 5)]),
    (lambda a, b: ops.ifft2((a, b)), [(3, 4), (3, 4)]),
    (lambda a, b: ops.fft2((a, b)), [(2, 3, 4), (2, 3, 4)]),
    *[(lambda a, length=length: ops.rfft(a, length), [(2, 5)]) for length in (3, 5, 8)],
    *[(lambda a, b, length=length: ops.irfft((a, b), length), [(2, 5), (2, 5)])
      for length in (None, 7, 8, 12)],
], ids=["fft", "ifft2", "fft2", "rfft3", "rfft5", "rfft8",
        "irfftNone", "irfft7", "irfft8", "irfft12"])
def test_fourier_gradients(rng, f, shapes):
    grad_check(rng, f, *shapes)


def test_rfft_second_order_gradient(rng):
    v = T(rng.standard_normal(6))
    v.attach_grad()
    with autograd.record():
        r, i = ops.rfft(v * v, 6)
        g = autograd.grad((r * r + i * i).sum(), v, create_graph=True)
        z = (g * g).sum()
    gg = n(autograd.grad(z, v))

    def energy_grad(a):  # d/da sum_k |rfft(a^2)_k|^2 = 2a * 2n Re(sum_k e_k w^jk)
        e = np.fft.rfft(a * a)
        w = np.full(e.shape, 0.5)
        w[0] = 1
        w[-1] = 1
        return 2 * a * 2 * 6 * np.fft.irfft(w * e, 6)

    vv = n(v)
    num = np.array([((energy_grad(vv + 1e-6 * np.eye(6)[k]) ** 2).sum()
                     - (energy_grad(vv - 1e-6 * np.eye(6)[k]) ** 2).sum()) / 2e-6
                    for k in range(6)])
    np.testing.assert_allclose(n(g), energy_grad(vv), rtol=1e-8, atol=1e-8)
    np.testing.assert_allclose(gg, num, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("exc, text, f", [
    (ValueError, "fft", lambda: ops.fft((np.ones(3), np.ones(4)))),
    (ValueError, "not of type float",
     lambda: km.fft((np.ones(3, "int32"), np.ones(3, "int32")))),
    (ValueError, "fft2", lambda: km.fft2((np.ones(3), np.ones(3)))),
    (ValueError, "real and imaginary", lambda: km.irfft(np.ones(3))),
], ids=["shapes", "int", "fft2_rank", "irfft_pair"])
def test_fourier_errors_name_the_op(exc, text, f):
    raises(exc, text, f)


# --- stft / istft

def ref_stft(x, seq, stride, nfft, window, center):
    if center:
        x = np.pad(x, [(0, 0)] * (x.ndim - 1) + [(nfft // 2, nfft // 2)], mode="reflect")
    win = np.ones(seq) if window is None else (
        scipy.signal.get_window(window, seq) if isinstance(window, str) else window)
    left = (nfft - seq) // 2
    win = np.pad(win, (left, nfft - seq - left))
    count = 1 + (x.shape[-1] - nfft) // stride
    frames = np.stack([x[..., k * stride:k * stride + nfft] for k in range(count)], -2)
    out = np.fft.rfft(frames * win, nfft)
    return out.real, out.imag


@pytest.mark.parametrize("seq, stride, nfft, window, center", [
    (32, 8, 32, "hann", True), (4, 4, 7, "hann", True), (16, 5, 20, "hamming", False),
    (8, 4, 8, None, True), (8, 2, 8, np.arange(8.0), True),
], ids=["hann32", "hann4_7", "hamming", "boxcar", "array_window"])
def test_stft_against_reference(rng, seq, stride, nfft, window, center):
    x = rng.standard_normal((2, 3, 64))
    got = ops.stft(x, seq, stride, nfft, window, center)
    want = ref_stft(x, seq, stride, nfft, window, center)
    close(got[0], want[0])
    close(got[1], want[1])
    assert n(got[0]).dtype == np.float64


@pytest.mark.parametrize("seq, stride, nfft, center", [(32, 8, 32, True), (16, 4, 24, True)])
def test_istft_inverts_stft_away_from_the_ends(rng, seq, stride, nfft, center):
    # The steady-state window normalisation of Keras' reference does not hold within one
    # frame of the ends.
    x = rng.standard_normal((2, 128))
    spec = ops.stft(x, seq, stride, nfft, "hann", center)
    back = ops.istft(spec, seq, stride, nfft, length=128, window="hann", center=center)
    close(n(back)[..., nfft:-nfft], x[..., nfft:-nfft], 1e-6)
    assert tuple(back.shape) == (2, 128)


@pytest.mark.parametrize("f, shapes", [
    (lambda a: ops.stft(a, 8, 3, 10, "hann", True), [(2, 20)]),
    (lambda a: ops.stft(a, 6, 2, 6, None, False), [(14,)]),
    (lambda a, b: ops.istft((a, b), 8, 4, 8, window="hann"), [(5, 5), (5, 5)]),
    (lambda a, b: ops.istft((a, b), 8, 2, 10, window=None, center=False), [(4, 6), (4, 6)]),
], ids=["stft_hann", "stft_boxcar", "istft_hann", "istft_boxcar"])
def test_stft_istft_gradients(rng, f, shapes):
    grad_check(rng, f, *shapes)


@pytest.mark.parametrize("exc, text, f", [
    (TypeError, "`float32` or `float64`", lambda: ops.stft(np.arange(8), 4, 2, 4)),
    (ValueError, "`fft_length` must equal or", lambda: ops.stft(np.ones(8), 4, 2, 2)),
    (ValueError, "If a string is passed", lambda: ops.stft(np.ones(8), 4, 2, 4, "kaiser")),
    (ValueError, "The shape of `window`", lambda: ops.stft(np.ones(8), 4, 2, 4, np.ones(3))),
    (ValueError, "fewer than fft_length",
     lambda: ops.stft(np.ones(4), 8, 2, 8, center=False)),
], ids=["int", "fft_length", "window_name", "window_shape", "short"])
def test_stft_errors(exc, text, f):
    raises(exc, text, f)


# --- eig, lu_factor, jvp

def test_eig(rng):
    a = rng.standard_normal((2, 4, 4)) * 0.3 + np.diag([0.0, 2.0, 4.0, 6.0])
    w, v = ops.linalg.eig(a)
    close(a @ n(v), n(v) * n(w)[:, None, :], 1e-9)
    close(np.sort(n(w), -1), np.sort(np.linalg.eigvals(a).real, -1), 1e-9)
    close(np.linalg.norm(n(v), axis=-2), 1.0, 1e-12)
    grad_check(rng, lambda m: ops.linalg.eig(m * 0.3 + T(np.diag([0.0, 3.0, 6.0]))),
               (2, 3, 3))
    raises(ValueError, "complex eigenvalues",
           lambda: ops.linalg.eig(np.array([[0.0, 1.0], [-1.0, 0.0]])))
    raises(ValueError, "square", lambda: kl.eig(np.ones((2, 3))))


@pytest.mark.parametrize("shape", [(4, 4), (4, 3), (3, 4), (2, 3, 5)])
def test_lu_factor_against_scipy(rng, shape):
    m = rng.standard_normal(shape)
    lu, piv = ops.linalg.lu_factor(m)
    mats = m.reshape((-1,) + shape[-2:])
    assert n(piv).dtype == np.int32 and n(piv).shape == shape[:-2] + (min(shape[-2:]),)
    close(lu, np.stack([scipy.linalg.lu_factor(b)[0] for b in mats]).reshape(shape), 1e-12)
    np.testing.assert_array_equal(n(piv).reshape(-1, min(shape[-2:])),
                                  [scipy.linalg.lu_factor(b)[1] for b in mats])


@pytest.mark.parametrize("shape", [(4, 4), (2, 3, 3)])
def test_lu_factor_gradient(rng, shape):
    grad_check(rng, lambda m: ops.linalg.lu_factor(m)[0], shape)


def test_jvp_against_hand_written_derivatives(rng):
    x, t = rng.standard_normal((3, 4)), rng.standard_normal((3, 4))
    y, s = rng.standard_normal(4), rng.standard_normal(4)

    def f(p, q):
        return ops.tanh(ops.sum(p * q, axis=-1)) * ops.exp(p[:, 0]), ops.sum(p * p)

    (o1, o2), (t1, t2) = ops.jvp(f, (T(x), T(y)), (T(t), T(s)))
    h = x @ y
    close(o1, np.tanh(h) * np.exp(x[:, 0]), 1e-12)
    want = ((1 - np.tanh(h) ** 2) * (t @ y + x @ s) * np.exp(x[:, 0])
            + np.tanh(h) * np.exp(x[:, 0]) * t[:, 0])
    close(t1, want, 1e-12)
    close(t2, 2 * (x * t).sum(), 1e-12)
    p, tp, aux = ops.jvp(lambda u: (ops.sin(u), u ** 2), (T(0.1),), (T(0.2),), has_aux=True)
    close(p, np.sin(0.1), 1e-7)
    close(tp, 0.2 * np.cos(0.1), 1e-7)
    close(aux, 0.01, 1e-7)
    p, tp = ops.jvp(lambda u: {"id": u, "const": T(np.ones(2))}, (T(x),), (T(t),))
    close(tp["id"], t, 0)
    close(tp["const"], np.zeros(2), 0)
    p, tp = ops.jvp(lambda u: ops.rfft(u * u, 8), (T(x),), (T(t),))
    want = np.fft.rfft(2 * x * t, 8)
    close(tp[0], want.real, 1e-12)
    close(tp[1], want.imag, 1e-12)
    raises(ValueError, "does not match", lambda: ops.jvp(ops.sin, (T(x),), (T(y),)))


# --- random draws

@pytest.mark.parametrize("dtype", ["int8", "int16", "int32", "int64", "uint8"])
def test_categorical_dtypes(dtype):
    r = random.categorical(np.eye(4) * 1e5 + 1e6, 10, dtype=dtype, seed=1)
    assert n(r).dtype == np.dtype(dtype)
    np.testing.assert_array_equal(n(r), np.tile(np.arange(4)[:, None], (1, 10)))


def test_categorical_frequencies_and_seeds():
    sg = random.SeedGenerator(3)
    logits = np.log(np.array([[0.2, 0.3, 0.5], [0.7, 0.2, 0.1]]))
    draws = n(random.categorical(logits, 20000, seed=7))
    freq = np.stack([(draws == k).mean(-1) for k in range(3)], -1)
    close(freq, np.exp(logits), 0.02)
    np.testing.assert_array_equal(n(random.categorical(logits, 5, seed=3)),
                                  n(random.categorical(logits, 5, seed=3)))
    assert not np.array_equal(n(random.categorical(logits, 50, seed=sg)),
                              n(random.categorical(logits, 50, seed=sg)))


@pytest.mark.parametrize("draw", [
    lambda d: random.gamma((4,), 2.0, dtype=d, seed=1),
    lambda d: random.binomial((4,), 10, 0.5, dtype=d, seed=1),
    lambda d: random.beta((4,), 2.0, 3.0, dtype=d, seed=1),
], ids=["gamma", "binomial", "beta"])
@pytest.mark.parametrize("dtype", ["float16", "bfloat16", "float32", "float64"])
def test_draws_have_the_requested_float_dtype(dtype, draw):
    assert keras.backend.standardize_dtype(draw(dtype).dtype) == dtype


def test_gamma_moments():
    g = n(random.gamma((20000,), 3.0, seed=2))
    assert g.min() > 0 and abs(g.mean() - 3.0) < 0.1 and abs(g.var() - 3.0) < 0.2
    g = n(random.gamma((20000, 2), np.array([0.5, 4.0]), seed=2))
    close(g.mean(0), [0.5, 4.0], 0.1)


def test_binomial_broadcast_means():
    b = n(random.binomial((2, 3), np.array([[1e5, 2e5, 3e5]] * 2), np.array([[0.1], [0.6]]),
                          seed=4))
    close(b / np.array([[1e5, 2e5, 3e5]] * 2), np.array([[0.1] * 3, [0.6] * 3]), 0.005)


def test_beta_range_means_and_seed():
    be = n(random.beta((20000, 2), np.array([7.0, 0.5]), np.array([15.0, 0.9]), seed=5))
    assert be.min() >= 0 and be.max() <= 1
    close(be.mean(0), [7 / 22, 0.5 / 1.4], 0.01)
    np.testing.assert_array_equal(n(random.beta((5,), 2.0, 3.0, seed=9)),
                                  n(random.beta((5,), 2.0, 3.0, seed=9)))


def test_random_errors():
    raises(ValueError, "2-D", lambda: random.categorical(np.ones(3), 2))
    raises(ValueError, "floating point", lambda: random.gamma((2,), 1.0, dtype="int32"))
