"""kbackend's Fourier transforms, eig/lu_factor/jvp and the further random draws,
against NumPy/SciPy references, with gradients checked by central differences in
float64 (one subprocess per test)."""
from __future__ import annotations

from .conftest import check, run_python

PRELUDE = r'''
import numpy as np, keras
from keras import ops
from core import autograd
n = ops.convert_to_numpy
T = ops.convert_to_tensor
rng = np.random.default_rng(0)

def close(got, want, tol=1e-6):
    np.testing.assert_allclose(n(got), want, rtol=tol, atol=tol)

def grad_check(f, *shapes, tol=1e-6):
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
            up = [v.copy() for v in xs]; up[i][idx] += 1e-6
            dn = [v.copy() for v in xs]; dn[i][idx] -= 1e-6
            num[idx] = (value(up) - value(dn)) / 2e-6
        np.testing.assert_allclose(n(grads[i]), num, rtol=tol, atol=tol)

def raises(exc, text, f):
    try:
        f()
    except exc as e:
        assert text in str(e), (text, str(e))
    else:
        raise AssertionError(f"no {exc.__name__} raised")
'''

FFT = PRELUDE + r'''
from kbackend import math as km
re, im = rng.standard_normal((2, 4, 6)), rng.standard_normal((2, 4, 6))
c = re + 1j * im
for got, want in [(ops.fft((re, im)), np.fft.fft(c)), (ops.fft2((re, im)), np.fft.fft2(c)),
                  (ops.ifft2((re, im)), np.fft.ifft2(c)), (km.ifft((re, im)), np.fft.ifft(c))]:
    close(got[0], want.real); close(got[1], want.imag)
    assert n(got[0]).dtype == np.float64
r32 = ops.fft((re.astype("float32"), im.astype("float32")))
assert n(r32[0]).dtype == np.float32 and n(r32[1]).dtype == np.float32
x = rng.standard_normal((3, 10))
for length in (None, 3, 10, 15):
    got = ops.rfft(x, fft_length=length)
    close(got[0], np.fft.rfft(x, n=length).real); close(got[1], np.fft.rfft(x, n=length).imag)
    close(ops.irfft((re, im), fft_length=length), np.fft.irfft(c, n=length))
half = ops.rfft(x.astype("float16"))
assert n(half[0]).dtype == np.float16
# Gradients (the VJPs are the adjoint transforms) and a second-order gradient.
grad_check(lambda a, b: ops.fft((a, b)), (2, 5), (2, 5))
grad_check(lambda a, b: ops.ifft2((a, b)), (3, 4), (3, 4))
grad_check(lambda a, b: ops.fft2((a, b)), (2, 3, 4), (2, 3, 4))
for length in (3, 5, 8):
    grad_check(lambda a: ops.rfft(a, length), (2, 5))
for length in (None, 7, 8, 12):
    grad_check(lambda a, b: ops.irfft((a, b), length), (2, 5), (2, 5))
v = T(rng.standard_normal(6)); v.attach_grad()
with autograd.record():
    r, i = ops.rfft(v * v, 6)
    g = autograd.grad((r * r + i * i).sum(), v, create_graph=True)
    z = (g * g).sum()
gg = n(autograd.grad(z, v))
def energy_grad(a):  # d/da sum_k |rfft(a^2)_k|^2 = 2a * 2n Re(sum_k e_k w^jk)
    e = np.fft.rfft(a * a)
    w = np.full(e.shape, 0.5); w[0] = 1; w[-1] = 1
    return 2 * a * 2 * 6 * np.fft.irfft(w * e, 6)
vv = n(v)
num = np.array([((energy_grad(vv + 1e-6 * np.eye(6)[k]) ** 2).sum()
                 - (energy_grad(vv - 1e-6 * np.eye(6)[k]) ** 2).sum()) / 2e-6 for k in range(6)])
np.testing.assert_allclose(n(g), energy_grad(vv), rtol=1e-8, atol=1e-8)
np.testing.assert_allclose(gg, num, rtol=1e-5, atol=1e-5)
# Bad input names the op.
raises(ValueError, "fft", lambda: ops.fft((np.ones(3), np.ones(4))))
raises(ValueError, "not of type float", lambda: km.fft((np.ones(3, "int32"), np.ones(3, "int32"))))
raises(ValueError, "fft2", lambda: km.fft2((np.ones(3), np.ones(3))))
raises(ValueError, "real and imaginary", lambda: km.irfft(np.ones(3)))
print("fft ok")
'''

STFT = PRELUDE + r'''
import scipy.signal
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
for seq, stride, nfft, window, center in [(32, 8, 32, "hann", True), (4, 4, 7, "hann", True),
                                          (16, 5, 20, "hamming", False),
                                          (8, 4, 8, None, True), (8, 2, 8, np.arange(8.0), True)]:
    x = rng.standard_normal((2, 3, 64))
    got = ops.stft(x, seq, stride, nfft, window, center)
    want = ref_stft(x, seq, stride, nfft, window, center)
    close(got[0], want[0]); close(got[1], want[1])
    assert n(got[0]).dtype == np.float64
# istft inverts stft away from the ends (the steady-state window normalisation of
# Keras' reference does not hold within one frame of the ends).
x = rng.standard_normal((2, 128))
for seq, stride, nfft, center in [(32, 8, 32, True), (16, 4, 24, True)]:
    spec = ops.stft(x, seq, stride, nfft, "hann", center)
    back = ops.istft(spec, seq, stride, nfft, length=128, window="hann", center=center)
    close(n(back)[..., nfft:-nfft], x[..., nfft:-nfft], 1e-6)
    assert tuple(back.shape) == (2, 128)
grad_check(lambda a: ops.stft(a, 8, 3, 10, "hann", True), (2, 20))
grad_check(lambda a: ops.stft(a, 6, 2, 6, None, False), (14,))
grad_check(lambda a, b: ops.istft((a, b), 8, 4, 8, window="hann"), (5, 5), (5, 5))
grad_check(lambda a, b: ops.istft((a, b), 8, 2, 10, window=None, center=False), (4, 6), (4, 6))
raises(TypeError, "`float32` or `float64`", lambda: ops.stft(np.arange(8), 4, 2, 4))
raises(ValueError, "`fft_length` must equal or", lambda: ops.stft(np.ones(8), 4, 2, 2))
raises(ValueError, "If a string is passed", lambda: ops.stft(np.ones(8), 4, 2, 4, "kaiser"))
raises(ValueError, "The shape of `window`", lambda: ops.stft(np.ones(8), 4, 2, 4, np.ones(3)))
raises(ValueError, "fewer than fft_length", lambda: ops.stft(np.ones(4), 8, 2, 8, center=False))
print("stft ok")
'''

LINALG = PRELUDE + r'''
import scipy.linalg
from kbackend import linalg as kl
a = rng.standard_normal((2, 4, 4)) * 0.3 + np.diag([0.0, 2.0, 4.0, 6.0])
w, v = ops.linalg.eig(a)
close(a @ n(v), n(v) * n(w)[:, None, :], 1e-9)
close(np.sort(n(w), -1), np.sort(np.linalg.eigvals(a).real, -1), 1e-9)
close(np.linalg.norm(n(v), axis=-2), 1.0, 1e-12)
grad_check(lambda m: ops.linalg.eig(m * 0.3 + T(np.diag([0.0, 3.0, 6.0]))), (2, 3, 3))
raises(ValueError, "complex eigenvalues", lambda: ops.linalg.eig(np.array([[0.0, 1.0], [-1.0, 0.0]])))
raises(ValueError, "square", lambda: kl.eig(np.ones((2, 3))))
for shape in [(4, 4), (4, 3), (3, 4), (2, 3, 5)]:
    m = rng.standard_normal(shape)
    lu, piv = ops.linalg.lu_factor(m)
    assert n(piv).dtype == np.int32 and n(piv).shape == shape[:-2] + (min(shape[-2:]),)
    close(lu, np.stack([scipy.linalg.lu_factor(b)[0] for b in m.reshape((-1,) + shape[-2:])]).reshape(shape), 1e-12)
    np.testing.assert_array_equal(n(piv).reshape(-1, min(shape[-2:])),
                                  [scipy.linalg.lu_factor(b)[1] for b in m.reshape((-1,) + shape[-2:])])
grad_check(lambda m: ops.linalg.lu_factor(m)[0], (4, 4))
grad_check(lambda m: ops.linalg.lu_factor(m)[0], (2, 3, 3))
# jvp: exact, against hand-written derivatives.
x, t = rng.standard_normal((3, 4)), rng.standard_normal((3, 4))
y, s = rng.standard_normal(4), rng.standard_normal(4)
f = lambda p, q: (ops.tanh(ops.sum(p * q, axis=-1)) * ops.exp(p[:, 0]), ops.sum(p * p))
(o1, o2), (t1, t2) = ops.jvp(f, (T(x), T(y)), (T(t), T(s)))
h = x @ y
close(o1, np.tanh(h) * np.exp(x[:, 0]), 1e-12)
want = (1 - np.tanh(h) ** 2) * (t @ y + x @ s) * np.exp(x[:, 0]) + np.tanh(h) * np.exp(x[:, 0]) * t[:, 0]
close(t1, want, 1e-12); close(t2, 2 * (x * t).sum(), 1e-12)
p, tp, aux = ops.jvp(lambda u: (ops.sin(u), u ** 2), (T(0.1),), (T(0.2),), has_aux=True)
close(p, np.sin(0.1), 1e-7); close(tp, 0.2 * np.cos(0.1), 1e-7); close(aux, 0.01, 1e-7)
p, tp = ops.jvp(lambda u: {"id": u, "const": T(np.ones(2))}, (T(x),), (T(t),))
close(tp["id"], t, 0); close(tp["const"], np.zeros(2), 0)
p, tp = ops.jvp(lambda u: ops.rfft(u * u, 8), (T(x),), (T(t),))
want = np.fft.rfft(2 * x * t, 8)
close(tp[0], want.real, 1e-12); close(tp[1], want.imag, 1e-12)
raises(ValueError, "does not match", lambda: ops.jvp(ops.sin, (T(x),), (T(y),)))
print("linalg ok")
'''

RANDOM = PRELUDE + r'''
from keras import random
sg = random.SeedGenerator(3)
for dtype in ("int8", "int16", "int32", "int64", "uint8"):
    r = random.categorical(np.eye(4) * 1e5 + 1e6, 10, dtype=dtype, seed=1)
    assert n(r).dtype == np.dtype(dtype)
    np.testing.assert_array_equal(n(r), np.tile(np.arange(4)[:, None], (1, 10)))
logits = np.log(np.array([[0.2, 0.3, 0.5], [0.7, 0.2, 0.1]]))
draws = n(random.categorical(logits, 20000, seed=7))
freq = np.stack([(draws == k).mean(-1) for k in range(3)], -1)
close(freq, np.exp(logits), 0.02)
np.testing.assert_array_equal(n(random.categorical(logits, 5, seed=3)),
                              n(random.categorical(logits, 5, seed=3)))
assert not np.array_equal(n(random.categorical(logits, 50, seed=sg)),
                          n(random.categorical(logits, 50, seed=sg)))
for dtype in ("float16", "bfloat16", "float32", "float64"):
    for draw in (lambda d: random.gamma((4,), 2.0, dtype=d, seed=1),
                 lambda d: random.binomial((4,), 10, 0.5, dtype=d, seed=1),
                 lambda d: random.beta((4,), 2.0, 3.0, dtype=d, seed=1)):
        assert keras.backend.standardize_dtype(draw(dtype).dtype) == dtype
g = n(random.gamma((20000,), 3.0, seed=2))
assert g.min() > 0 and abs(g.mean() - 3.0) < 0.1 and abs(g.var() - 3.0) < 0.2
g = n(random.gamma((20000, 2), np.array([0.5, 4.0]), seed=2))
close(g.mean(0), [0.5, 4.0], 0.1)
b = n(random.binomial((2, 3), np.array([[1e5, 2e5, 3e5]] * 2), np.array([[0.1], [0.6]]), seed=4))
close(b / np.array([[1e5, 2e5, 3e5]] * 2), np.array([[0.1] * 3, [0.6] * 3]), 0.005)
be = n(random.beta((20000, 2), np.array([7.0, 0.5]), np.array([15.0, 0.9]), seed=5))
assert be.min() >= 0 and be.max() <= 1
close(be.mean(0), [7 / 22, 0.5 / 1.4], 0.01)
np.testing.assert_array_equal(n(random.beta((5,), 2.0, 3.0, seed=9)), n(random.beta((5,), 2.0, 3.0, seed=9)))
raises(ValueError, "2-D", lambda: random.categorical(np.ones(3), 2))
raises(ValueError, "floating point", lambda: random.gamma((2,), 1.0, dtype="int32"))
print("random ok")
'''


def test_fft_family(hook_installed):
    assert "fft ok" in check(run_python(FFT, "kbackend", timeout=300))


def test_stft_istft(hook_installed):
    assert "stft ok" in check(run_python(STFT, "kbackend", timeout=300))


def test_eig_lu_jvp(hook_installed):
    assert "linalg ok" in check(run_python(LINALG, "kbackend", timeout=300))


def test_random_distributions(hook_installed):
    assert "random ok" in check(run_python(RANDOM, "kbackend", timeout=300))
