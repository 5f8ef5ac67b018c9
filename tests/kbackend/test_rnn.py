"""kbackend rnn: the generic step loop against a NumPy loop, and the fused LSTM/GRU
(core's RNN operator) against the generic loop and NumPy cells, forward and
gradients (one subprocess per test)."""
from __future__ import annotations

from .conftest import check, run_python

PRELUDE = r'''
import numpy as np, keras
from keras import layers, ops
from core import autograd
import kbackend.rnn as krnn
n = ops.convert_to_numpy
T = ops.convert_to_tensor
rng = np.random.default_rng(0)

def close(got, want, tol=1e-5, what=""):
    np.testing.assert_allclose(n(got), want, rtol=tol, atol=tol, err_msg=what)

FUSED = []
_run = krnn._run
def counting_run(*args, **kwargs):
    FUSED.append(args[0])
    return _run(*args, **kwargs)
krnn._run = counting_run

def sig(z):
    return 1 / (1 + np.exp(-z))

def forward_and_grads(layer, x, mask=None):
    """Output and the gradients of sum(output**2) wrt the input and the weights."""
    xv = T(x)
    xv.attach_grad()
    for w in layer.trainable_weights:
        w.value.attach_grad()
    with autograd.record():
        y = layer(xv) if mask is None else layer(xv, mask=T(mask))
        y0 = y[0] if isinstance(y, (list, tuple)) else y
        s = (y0 * y0).sum()
    s.backward()
    ys = [n(v) for v in y] if isinstance(y, (list, tuple)) else [n(y)]
    return ys + [xv.grad.asnumpy()] + [w.value.grad.asnumpy() for w in layer.trainable_weights]

def twins(make, shape):
    """The same layer twice (generic loop, fused path) with the same random weights."""
    a, b = make(False), make("auto")
    a.build(shape); b.build(shape)
    ws = [rng.standard_normal(v.shape).astype(v.dtype) * 0.5 for v in a.weights]
    a.set_weights(ws); b.set_weights(ws)
    return a, b
'''

GENERIC = PRELUDE + r'''
N, Tn, C, H = 3, 5, 4, 2
x = rng.standard_normal((N, Tn, C)).astype("float32")
W = rng.standard_normal((C, H)).astype("float32")
U = rng.standard_normal((H, H)).astype("float32")
k = rng.standard_normal((H,)).astype("float32")   # a constant
h0 = rng.standard_normal((N, H)).astype("float32")

def step(inp, states):
    h, const = states[0], states[1]
    out = ops.tanh(ops.matmul(inp, W) + ops.matmul(h, U) + const)
    return out * 2.0, [out]

def reference(mask=None, go_backwards=False, zero_output=False):
    h = h0.copy(); prev = np.zeros((N, H), "float32"); outs = []
    order = range(Tn - 1, -1, -1) if go_backwards else range(Tn)
    for t in order:
        new = np.tanh(x[:, t] @ W + h @ U + k); out = new * 2
        if mask is not None:
            m = mask[:, t][:, None]
            out = np.where(m, out, 0 * out if zero_output else prev)
            new = np.where(m, new, h)
        h, prev = new, out
        outs.append(out)
    return np.stack(outs, 1), h

mask = np.ones((N, Tn), bool); mask[0, 3:] = False; mask[1, 1] = False; mask[2, 0] = False
for kw in [{}, {"go_backwards": True}, {"mask": mask}, {"mask": mask, "go_backwards": True},
           {"mask": mask, "zero_output_for_mask": True}]:
    for unroll in (False, True):
        want, h_want = reference(kw.get("mask"), kw.get("go_backwards", False),
                                 kw.get("zero_output_for_mask", False))
        args = dict(kw)
        if "mask" in args:
            args["mask"] = T(args["mask"])
        last, outs, states = krnn.rnn(step, T(x), [T(h0)], constants=[T(k)], unroll=unroll,
                                      **args)
        close(outs, want, what=str(kw)); close(last, want[:, -1], what=str(kw))
        close(states[0], h_want, what=str(kw))
        last, outs, _ = krnn.rnn(step, T(x), [T(h0)], constants=[T(k)],
                                 return_all_outputs=False, **args)
        assert tuple(outs.shape) == (N, 1, H), outs.shape
        close(outs[:, 0], want[:, -1]); close(last, want[:, -1])
        # time-major inputs and mask give the same numbers, time first
        if "mask" in args:
            args["mask"] = T(np.swapaxes(kw["mask"], 0, 1))
        last, outs, _ = krnn.rnn(step, T(np.swapaxes(x, 0, 1)), [T(h0)], constants=[T(k)],
                                 time_major=True, **args)
        close(outs, np.swapaxes(want, 0, 1), what="time_major " + str(kw))

# nested inputs and states, and gradients flowing through the loop
def nested_step(inp, states):
    a, b = inp["a"], inp["b"]
    h, c = states
    c2 = c + a
    h2 = ops.tanh(ops.matmul(b, W) + h * c2[:, :1])
    return h2, [h2, c2]
xa = rng.standard_normal((N, Tn, 1)).astype("float32")
xb = T(x); xb.attach_grad()
with autograd.record():
    last, outs, (h, c) = krnn.rnn(nested_step, {"a": T(xa), "b": xb},
                                  [T(np.zeros((N, H), "float32")), T(np.zeros((N, 1), "float32"))])
    loss = (outs * outs).sum()
loss.backward()
hh = np.zeros((N, H), "float32"); cc = np.zeros((N, 1), "float32"); ref = []
for t in range(Tn):
    cc = cc + xa[:, t]; hh = np.tanh(x[:, t] @ W + hh * cc[:, :1]); ref.append(hh)
close(outs, np.stack(ref, 1)); close(c, cc)
g = xb.grad.asnumpy()
eps = 1e-3
for idx in [(0, 0, 0), (1, 2, 3), (2, 4, 1)]:
    up, dn = x.copy(), x.copy(); up[idx] += eps; dn[idx] -= eps
    f = lambda v: float(n((krnn.rnn(nested_step, {"a": T(xa), "b": T(v)},
        [T(np.zeros((N, H), "float32")), T(np.zeros((N, 1), "float32"))])[1] ** 2).sum()))
    np.testing.assert_allclose(g[idx], (f(up) - f(dn)) / (2 * eps), rtol=2e-2, atol=2e-3)
try:
    krnn.rnn(step, T(x), [T(h0)], constants=[T(k)], mask=T(np.ones((N, Tn + 1), bool)))
except ValueError as e:
    assert "mask" in str(e) and "(3, 5)" in str(e), e
else:
    raise AssertionError("a mask of the wrong shape was accepted")
assert not FUSED
print("ok")
'''


def test_generic_rnn_against_numpy():
    """Masks (any pattern), go_backwards, zero_output_for_mask, return_all_outputs,
    constants, time_major, nested inputs/states and gradients of the step loop."""
    assert check(run_python(GENERIC, "kbackend", timeout=300)).strip().endswith("ok")


FUSED_VS_GENERIC = PRELUDE + r'''
N, Tn, C, H = 4, 6, 5, 3
x = rng.standard_normal((N, Tn, C)).astype("float32")
right = np.ones((N, Tn), bool); right[1, 4:] = False; right[2, 1:] = False
cases = [({}, None), ({"return_sequences": True}, None),
         ({"go_backwards": True, "return_sequences": True}, None), ({"use_bias": False}, None),
         ({"return_state": True}, None), ({"return_state": True, "go_backwards": True}, None),
         ({}, right), ({"go_backwards": True}, right), ({"return_state": True}, right),
         ({"return_sequences": True}, np.ones((N, Tn), bool))]
for cls in (layers.LSTM, layers.GRU):
    for kw, mask in cases:
        a, b = twins(lambda u: cls(H, use_cudnn=u, **kw), x.shape)
        FUSED.clear()
        ga = forward_and_grads(a, x, mask)
        assert not FUSED
        gb = forward_and_grads(b, x, mask)
        assert FUSED == [cls.__name__.lower()], (cls.__name__, kw, FUSED)
        assert len(ga) == len(gb)
        for i, (p, q) in enumerate(zip(ga, gb)):
            np.testing.assert_allclose(p, q, rtol=2e-5, atol=2e-6,
                                       err_msg=f"{cls.__name__} {kw} mask={mask is not None} #{i}")

# configurations the fused operator does not compute: the generic loop runs
left = np.ones((N, Tn), bool); left[0, :2] = False
hole = np.ones((N, Tn), bool); hole[0, 2] = False
empty = right.copy(); empty[3] = False
for cls in (layers.LSTM, layers.GRU):
    for kw, mask in [({"activation": "relu"}, None), ({"recurrent_activation": "hard_sigmoid"}, None),
                     ({"unroll": True}, None), ({"recurrent_dropout": 0.3}, None),
                     ({}, left), ({}, hole), ({}, empty), ({"return_sequences": True}, right)]:
        a, b = twins(lambda u: cls(H, use_cudnn=u, **kw), x.shape)
        FUSED.clear()
        ga, gb = forward_and_grads(a, x, mask), forward_and_grads(b, x, mask)
        assert not FUSED, (cls.__name__, kw)
        for p, q in zip(ga, gb):
            np.testing.assert_allclose(p, q, rtol=1e-6, atol=1e-7)
        try:
            cls(H, use_cudnn=True, **kw)(x, mask=None if mask is None else T(mask))
        except ValueError as e:
            assert "use_cudnn=True" in str(e)
        else:
            raise AssertionError(f"use_cudnn=True accepted {kw}")
a, b = twins(lambda u: layers.GRU(H, use_cudnn=u, reset_after=False), x.shape)
FUSED.clear()
for p, q in zip(forward_and_grads(a, x), forward_and_grads(b, x)):
    np.testing.assert_allclose(p, q, rtol=1e-6, atol=1e-7)
assert not FUSED

# input dropout is applied by the layer, so the fused path serves it
keras.utils.set_random_seed(3)
layer = layers.LSTM(H, dropout=0.5)
FUSED.clear()
y = layer(x, training=True)
assert FUSED == ["lstm"] and tuple(y.shape) == (N, H)

from keras import activations
assert krnn.cudnn_ok(activations.tanh, activations.sigmoid, False)
assert krnn.cudnn_ok(ops.tanh, ops.sigmoid, False, use_bias=False, reset_after=True)
assert not krnn.cudnn_ok(activations.tanh, activations.sigmoid, True)
assert not krnn.cudnn_ok(activations.relu, activations.sigmoid, False)
assert not krnn.cudnn_ok(activations.tanh, activations.sigmoid, False, reset_after=False)
print("ok")
'''


def test_fused_lstm_gru_match_generic_loop():
    """Forward and gradients of the fused path equal the generic loop's, and the
    configurations it cannot compute fall back (use_cudnn=True then raises)."""
    assert check(run_python(FUSED_VS_GENERIC, "kbackend", timeout=600)).strip().endswith("ok")


NUMPY_CELLS = PRELUDE + r'''
N, Tn, C, H = 3, 5, 4, 3
x = rng.standard_normal((N, Tn, C))
h0 = rng.standard_normal((N, H)); c0 = rng.standard_normal((N, H))

def np_lstm(x, k, rk, b, h, c, lengths=None, backwards=False):
    outs = []
    for t in range(x.shape[1]):
        z = x[:, t] @ k + h @ rk + b
        i, f, g, o = np.split(z, 4, -1)
        c2 = sig(f) * c + sig(i) * np.tanh(g); h2 = sig(o) * np.tanh(c2)
        if lengths is not None:
            m = (t < lengths)[:, None]
            h2, c2 = np.where(m, h2, h), np.where(m, c2, c)
        h, c = h2, c2
        outs.append(h)
    return np.stack(outs, 1), h, c

def np_gru(x, k, rk, b, h):
    outs = []
    for t in range(x.shape[1]):
        xz, xr, xh = np.split(x[:, t] @ k + b[0], 3, -1)
        hz, hr, hh = np.split(h @ rk + b[1], 3, -1)
        z, r = sig(xz + hz), sig(xr + hr)
        h = z * h + (1 - z) * np.tanh(xh + r * hh)
        outs.append(h)
    return np.stack(outs, 1), h

keras.config.set_floatx("float64")
lstm = layers.LSTM(H, return_sequences=True, return_state=True)
lstm.build(x.shape)
k, rk, b = [rng.standard_normal(w.shape) * 0.5 for w in lstm.weights]
lstm.set_weights([k, rk, b])
FUSED.clear()
y, h, c = lstm(x, initial_state=[T(h0), T(c0)])
assert FUSED == ["lstm"]
wy, wh, wc = np_lstm(x, k, rk, b, h0, c0)
close(y, wy, 1e-12); close(h, wh, 1e-12); close(c, wc, 1e-12)

# right-padded mask, forwards and backwards (each sequence reversed within its length)
lengths = np.array([5, 2, 4])
mask = np.arange(Tn)[None, :] < lengths[:, None]
for back in (False, True):
    layer = layers.LSTM(H, return_state=True, go_backwards=back)
    layer.build(x.shape); layer.set_weights([k, rk, b])
    FUSED.clear()
    last, h, c = layer(x, mask=T(mask))
    assert FUSED == ["lstm"]
    xs = x.copy()
    if back:
        for i, L in enumerate(lengths):
            xs[i, :L] = x[i, :L][::-1]
    _, wh, wc = np_lstm(xs, k, rk, b, np.zeros((N, H)), np.zeros((N, H)), lengths)
    close(last, wh, 1e-12); close(h, wh, 1e-12); close(c, wc, 1e-12)

gru = layers.GRU(H, return_sequences=True, return_state=True, go_backwards=True)
gru.build(x.shape)
gk, grk, gb = [rng.standard_normal(w.shape) * 0.5 for w in gru.weights]
gru.set_weights([gk, grk, gb])
FUSED.clear()
y, h = gru(x, initial_state=T(h0))
assert FUSED == ["gru"]
wy, wh = np_gru(x[:, ::-1], gk, grk, gb, h0)
close(y, wy, 1e-12); close(h, wh, 1e-12)

# gradients of the fused LSTM against central differences (float64)
def loss_of(kv, xv, h0v):
    layer = layers.LSTM(H, return_sequences=True)
    layer.build(x.shape); layer.set_weights([kv, rk, b])
    return layer, layer(T(xv), initial_state=[T(h0v), T(c0)])
layer = layers.LSTM(H, return_sequences=True)
layer.build(x.shape); layer.set_weights([k, rk, b])
wgt = rng.standard_normal((N, Tn, H))
xv, hv = T(x), T(h0)
for t in (xv, hv):
    t.attach_grad()
for w in layer.trainable_weights:
    w.value.attach_grad()
with autograd.record():
    s = (layer(xv, initial_state=[hv, T(c0)]) * T(wgt)).sum()
s.backward()
f = lambda kv, xx, hh: float((n(loss_of(kv, xx, hh)[1]) * wgt).sum())
eps = 1e-6
for name, arr, grad in [("x", x, xv.grad.asnumpy()), ("h0", h0, hv.grad.asnumpy()),
                        ("kernel", k, layer.trainable_weights[0].value.grad.asnumpy())]:
    for idx in [(0,) * arr.ndim, tuple(s - 1 for s in arr.shape)]:
        up, dn = arr.copy(), arr.copy(); up[idx] += eps; dn[idx] -= eps
        args_up = {"x": (k, up, h0), "h0": (k, x, up), "kernel": (up, x, h0)}[name]
        args_dn = {"x": (k, dn, h0), "h0": (k, x, dn), "kernel": (dn, x, h0)}[name]
        num = (f(*args_up) - f(*args_dn)) / (2 * eps)
        np.testing.assert_allclose(grad[idx], num, rtol=1e-6, atol=1e-8, err_msg=name)
print("ok")
'''


def test_fused_against_numpy_cells():
    """The fused LSTM/GRU (float64) against NumPy cells, with initial states,
    right-padded masks forwards and backwards, and central-difference gradients."""
    assert check(run_python(NUMPY_CELLS, "kbackend", timeout=300)).strip().endswith("ok")


BIDIRECTIONAL = PRELUDE + r'''
N, Tn, C, H = 3, 5, 4, 3
x = rng.standard_normal((N, Tn, C)).astype("float32")
for cls in (layers.LSTM, layers.GRU):
    for kw in [{}, {"return_sequences": True}, {"return_state": True, "merge_mode": "sum"},
               {"return_sequences": True, "return_state": True, "merge_mode": None}]:
        rs, st = kw.get("return_sequences", False), kw.get("return_state", False)
        mm = kw.get("merge_mode", "concat")
        a, b = twins(lambda u: layers.Bidirectional(
            cls(H, use_cudnn=u, return_sequences=rs, return_state=st), merge_mode=mm), x.shape)
        FUSED.clear()
        ga = forward_and_grads(a, x)
        assert not FUSED
        gb = forward_and_grads(b, x)
        assert FUSED == [cls.__name__.lower()], FUSED
        for i, (p, q) in enumerate(zip(ga, gb)):
            np.testing.assert_allclose(p, q, rtol=2e-5, atol=2e-6, err_msg=f"{kw} #{i}")
# with a mask the layers run one direction each (the fused call raises, Keras falls back)
mask = np.ones((N, Tn), bool); mask[0, 3:] = False
a, b = twins(lambda u: layers.Bidirectional(cls(H, use_cudnn=u)), x.shape)
for p, q in zip(forward_and_grads(a, x, mask), forward_and_grads(b, x, mask)):
    np.testing.assert_allclose(p, q, rtol=2e-5, atol=2e-6)
print("ok")
'''


def test_fused_bidirectional_matches_two_layers():
    """bidirectional_lstm/gru (both directions in one fused call) against Keras'
    two-layer path, forward and gradients, for each merge mode and return_state."""
    assert check(run_python(BIDIRECTIONAL, "kbackend", timeout=300)).strip().endswith("ok")


TRAINING = PRELUDE + r'''
keras.utils.set_random_seed(0)
x = rng.standard_normal((64, 8, 3)).astype("float32")
y = (x[:, :, 0].sum(1, keepdims=True) > 0).astype("float32")
for rnn_layer in (layers.LSTM(8), layers.GRU(8), layers.Bidirectional(layers.LSTM(4)),
                  layers.SimpleRNN(8)):
    model = keras.Sequential([keras.Input((8, 3)), rnn_layer,
                              layers.Dense(1, activation="sigmoid")])
    model.compile(optimizer=keras.optimizers.Adam(0.02), loss="binary_crossentropy")
    hist = model.fit(x, y, epochs=8, batch_size=16, verbose=0).history["loss"]
    assert hist[-1] < 0.8 * hist[0], (rnn_layer.name, hist)
# the generic loop inside a ConvLSTM cell (4-D states, masks broadcast over them)
conv = layers.ConvLSTM1D(2, 3, padding="same", return_sequences=True)
out = conv(rng.standard_normal((2, 4, 6, 3)).astype("float32"))
assert tuple(out.shape) == (2, 4, 6, 2)
print("ok")
'''


def test_training_with_rnn_layers():
    """fit() with fused LSTM/GRU/Bidirectional and the generic SimpleRNN lowers the loss."""
    assert check(run_python(TRAINING, "kbackend", timeout=300)).strip().endswith("ok")
