"""kbackend rnn: the generic step loop against a NumPy loop, and the fused LSTM/GRU
(core's RNN operator) against the generic loop and NumPy cells, forward and
gradients."""
from __future__ import annotations

import re

import keras
import numpy as np
import pytest
from keras import activations, layers, ops

import kbackend.rnn as krnn
from core import autograd

n = ops.convert_to_numpy
T = ops.convert_to_tensor


def close(got, want, tol=1e-5, what=""):
    np.testing.assert_allclose(n(got), want, rtol=tol, atol=tol, err_msg=what)


def sig(z):
    return 1 / (1 + np.exp(-z))


@pytest.fixture
def fused(monkeypatch):
    """The modes of the fused operator's calls (kbackend.rnn._run), in order."""
    calls = []
    run = krnn._run

    def counting_run(*args, **kwargs):
        calls.append(args[0])
        return run(*args, **kwargs)

    monkeypatch.setattr(krnn, "_run", counting_run)
    return calls


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


def twins(make, shape, rng):
    """The same layer twice (generic loop, fused path) with the same random weights."""
    a, b = make(False), make("auto")
    a.build(shape)
    b.build(shape)
    ws = [rng.standard_normal(v.shape).astype(v.dtype) * 0.5 for v in a.weights]
    a.set_weights(ws)
    b.set_weights(ws)
    return a, b


# --- the generic step loop ------------------------------------------------------------

GN, GT, GC, GH = 3, 5, 4, 2


def generic_data():
    """x, W, U, the constant k, h0 and the nested test's xa, drawn in this order."""
    rng = np.random.default_rng(0)
    x = rng.standard_normal((GN, GT, GC)).astype("float32")
    W = rng.standard_normal((GC, GH)).astype("float32")
    U = rng.standard_normal((GH, GH)).astype("float32")
    k = rng.standard_normal((GH,)).astype("float32")  # a constant
    h0 = rng.standard_normal((GN, GH)).astype("float32")
    xa = rng.standard_normal((GN, GT, 1)).astype("float32")
    return x, W, U, k, h0, xa


def generic_step(W, U):
    def step(inp, states):
        h, const = states[0], states[1]
        out = ops.tanh(ops.matmul(inp, W) + ops.matmul(h, U) + const)
        return out * 2.0, [out]
    return step


def generic_reference(x, W, U, k, h0, mask=None, go_backwards=False, zero_output=False):
    h = h0.copy()
    prev = np.zeros((GN, GH), "float32")
    outs = []
    order = range(GT - 1, -1, -1) if go_backwards else range(GT)
    for t in order:
        new = np.tanh(x[:, t] @ W + h @ U + k)
        out = new * 2
        if mask is not None:
            m = mask[:, t][:, None]
            out = np.where(m, out, 0 * out if zero_output else prev)
            new = np.where(m, new, h)
        h, prev = new, out
        outs.append(out)
    return np.stack(outs, 1), h


GENERIC_MASK = np.ones((GN, GT), bool)
GENERIC_MASK[0, 3:] = False
GENERIC_MASK[1, 1] = False
GENERIC_MASK[2, 0] = False


@pytest.mark.parametrize("unroll", [False, True])
@pytest.mark.parametrize("kw", [
    {}, {"go_backwards": True}, {"mask": GENERIC_MASK},
    {"mask": GENERIC_MASK, "go_backwards": True},
    {"mask": GENERIC_MASK, "zero_output_for_mask": True},
], ids=["plain", "backwards", "mask", "mask-backwards", "mask-zero_output"])
def test_generic_rnn_against_numpy(kw, unroll, fused):
    """Masks (any pattern), go_backwards, zero_output_for_mask, return_all_outputs,
    constants and time_major of the step loop."""
    x, W, U, k, h0, _ = generic_data()
    step = generic_step(W, U)
    want, h_want = generic_reference(x, W, U, k, h0, kw.get("mask"),
                                     kw.get("go_backwards", False),
                                     kw.get("zero_output_for_mask", False))
    args = dict(kw)
    if "mask" in args:
        args["mask"] = T(args["mask"])
    last, outs, states = krnn.rnn(step, T(x), [T(h0)], constants=[T(k)], unroll=unroll,
                                  **args)
    close(outs, want, what=str(kw))
    close(last, want[:, -1], what=str(kw))
    close(states[0], h_want, what=str(kw))
    last, outs, _ = krnn.rnn(step, T(x), [T(h0)], constants=[T(k)],
                             return_all_outputs=False, **args)
    assert tuple(outs.shape) == (GN, 1, GH), outs.shape
    close(outs[:, 0], want[:, -1])
    close(last, want[:, -1])
    # time-major inputs and mask give the same numbers, time first
    if "mask" in args:
        args["mask"] = T(np.swapaxes(kw["mask"], 0, 1))
    last, outs, _ = krnn.rnn(step, T(np.swapaxes(x, 0, 1)), [T(h0)], constants=[T(k)],
                             time_major=True, **args)
    close(outs, np.swapaxes(want, 0, 1), what="time_major " + str(kw))
    assert not fused


def test_generic_rnn_nested_inputs_states_and_gradients(fused):
    """Nested inputs and states, and gradients flowing through the loop."""
    x, W, _, k, h0, xa = generic_data()

    def nested_step(inp, states):
        a, b = inp["a"], inp["b"]
        h, c = states
        c2 = c + a
        h2 = ops.tanh(ops.matmul(b, W) + h * c2[:, :1])
        return h2, [h2, c2]

    def zeros():
        return [T(np.zeros((GN, GH), "float32")), T(np.zeros((GN, 1), "float32"))]

    xb = T(x)
    xb.attach_grad()
    with autograd.record():
        last, outs, (h, c) = krnn.rnn(nested_step, {"a": T(xa), "b": xb}, zeros())
        loss = (outs * outs).sum()
    loss.backward()
    hh = np.zeros((GN, GH), "float32")
    cc = np.zeros((GN, 1), "float32")
    ref = []
    for t in range(GT):
        cc = cc + xa[:, t]
        hh = np.tanh(x[:, t] @ W + hh * cc[:, :1])
        ref.append(hh)
    close(outs, np.stack(ref, 1))
    close(c, cc)
    g = xb.grad.asnumpy()
    eps = 1e-3

    def f(v):
        return float(n((krnn.rnn(nested_step, {"a": T(xa), "b": T(v)}, zeros())[1] ** 2).sum()))

    for idx in [(0, 0, 0), (1, 2, 3), (2, 4, 1)]:
        up, dn = x.copy(), x.copy()
        up[idx] += eps
        dn[idx] -= eps
        np.testing.assert_allclose(g[idx], (f(up) - f(dn)) / (2 * eps), rtol=2e-2, atol=2e-3)
    assert not fused


def test_generic_rnn_refuses_a_mask_of_the_wrong_shape(fused):
    x, W, U, k, h0, _ = generic_data()
    with pytest.raises(ValueError, match="mask") as info:
        krnn.rnn(generic_step(W, U), T(x), [T(h0)], constants=[T(k)],
                 mask=T(np.ones((GN, GT + 1), bool)))
    assert "(3, 5)" in str(info.value)
    assert not fused


# --- the fused LSTM/GRU against the generic loop ----------------------------------------

FN, FT, FC, FH = 4, 6, 5, 3
RIGHT = np.ones((FN, FT), bool)
RIGHT[1, 4:] = False
RIGHT[2, 1:] = False
LEFT = np.ones((FN, FT), bool)
LEFT[0, :2] = False
HOLE = np.ones((FN, FT), bool)
HOLE[0, 2] = False
EMPTY = RIGHT.copy()
EMPTY[3] = False


def fused_data():
    rng = np.random.default_rng(0)
    return rng, rng.standard_normal((FN, FT, FC)).astype("float32")


@pytest.mark.parametrize("cls", [layers.LSTM, layers.GRU], ids=["lstm", "gru"])
@pytest.mark.parametrize("kw, mask", [
    ({}, None), ({"return_sequences": True}, None),
    ({"go_backwards": True, "return_sequences": True}, None), ({"use_bias": False}, None),
    ({"return_state": True}, None), ({"return_state": True, "go_backwards": True}, None),
    ({}, RIGHT), ({"go_backwards": True}, RIGHT), ({"return_state": True}, RIGHT),
    ({"return_sequences": True}, np.ones((FN, FT), bool)),
], ids=["plain", "sequences", "backwards-sequences", "no_bias", "state", "state-backwards",
        "right", "right-backwards", "right-state", "all_true-sequences"])
def test_fused_lstm_gru_match_generic_loop(cls, kw, mask, fused):
    """Forward and gradients of the fused path equal the generic loop's."""
    rng, x = fused_data()
    a, b = twins(lambda u: cls(FH, use_cudnn=u, **kw), x.shape, rng)
    ga = forward_and_grads(a, x, mask)
    assert not fused
    gb = forward_and_grads(b, x, mask)
    assert fused == [cls.__name__.lower()], (cls.__name__, kw, fused)
    assert len(ga) == len(gb)
    for i, (p, q) in enumerate(zip(ga, gb)):
        np.testing.assert_allclose(p, q, rtol=2e-5, atol=2e-6,
                                   err_msg=f"{cls.__name__} {kw} mask={mask is not None} #{i}")


@pytest.mark.parametrize("cls", [layers.LSTM, layers.GRU], ids=["lstm", "gru"])
@pytest.mark.parametrize("kw, mask", [
    ({"activation": "relu"}, None), ({"recurrent_activation": "hard_sigmoid"}, None),
    ({"unroll": True}, None), ({"recurrent_dropout": 0.3}, None),
    ({}, LEFT), ({}, HOLE), ({}, EMPTY), ({"return_sequences": True}, RIGHT),
], ids=["relu", "hard_sigmoid", "unroll", "recurrent_dropout", "left", "hole", "empty",
        "right-sequences"])
def test_fused_falls_back_where_it_cannot_compute(cls, kw, mask, fused):
    """Configurations the fused operator does not compute: the generic loop runs, and
    use_cudnn=True raises."""
    rng, x = fused_data()
    a, b = twins(lambda u: cls(FH, use_cudnn=u, **kw), x.shape, rng)
    ga, gb = forward_and_grads(a, x, mask), forward_and_grads(b, x, mask)
    assert not fused, (cls.__name__, kw)
    for p, q in zip(ga, gb):
        np.testing.assert_allclose(p, q, rtol=1e-6, atol=1e-7)
    with pytest.raises(ValueError, match=re.escape("use_cudnn=True")):
        cls(FH, use_cudnn=True, **kw)(x, mask=None if mask is None else T(mask))


def test_gru_reset_after_false_falls_back(fused):
    rng, x = fused_data()
    a, b = twins(lambda u: layers.GRU(FH, use_cudnn=u, reset_after=False), x.shape, rng)
    for p, q in zip(forward_and_grads(a, x), forward_and_grads(b, x)):
        np.testing.assert_allclose(p, q, rtol=1e-6, atol=1e-7)
    assert not fused


def test_input_dropout_is_served_by_the_fused_path(fused):
    """Input dropout is applied by the layer, so the fused path serves it."""
    _, x = fused_data()
    keras.utils.set_random_seed(3)
    layer = layers.LSTM(FH, dropout=0.5)
    y = layer(x, training=True)
    assert fused == ["lstm"] and tuple(y.shape) == (FN, FH)


def test_cudnn_ok():
    assert krnn.cudnn_ok(activations.tanh, activations.sigmoid, False)
    assert krnn.cudnn_ok(ops.tanh, ops.sigmoid, False, use_bias=False, reset_after=True)
    assert not krnn.cudnn_ok(activations.tanh, activations.sigmoid, True)
    assert not krnn.cudnn_ok(activations.relu, activations.sigmoid, False)
    assert not krnn.cudnn_ok(activations.tanh, activations.sigmoid, False, reset_after=False)


# --- the fused LSTM/GRU (float64) against NumPy cells -----------------------------------

CN, CT, CC, CH = 3, 5, 4, 3


def np_lstm(x, k, rk, b, h, c, lengths=None, backwards=False):
    outs = []
    for t in range(x.shape[1]):
        z = x[:, t] @ k + h @ rk + b
        i, f, g, o = np.split(z, 4, -1)
        c2 = sig(f) * c + sig(i) * np.tanh(g)
        h2 = sig(o) * np.tanh(c2)
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


@pytest.fixture
def cells():
    """float64 layers; x, h0, c0, the LSTM's, the GRU's weights and the gradient test's
    output weights, drawn in this order."""
    keras.config.set_floatx("float64")  # keras_state restores float32
    rng = np.random.default_rng(0)
    d = {"x": rng.standard_normal((CN, CT, CC))}
    d["h0"], d["c0"] = rng.standard_normal((CN, CH)), rng.standard_normal((CN, CH))
    d["lstm"] = [rng.standard_normal(s) * 0.5 for s in [(CC, 4 * CH), (CH, 4 * CH), (4 * CH,)]]
    d["gru"] = [rng.standard_normal(s) * 0.5 for s in [(CC, 3 * CH), (CH, 3 * CH), (2, 3 * CH)]]
    d["wgt"] = rng.standard_normal((CN, CT, CH))
    return d


def test_fused_lstm_with_initial_states_against_numpy(cells, fused):
    x, h0, c0 = cells["x"], cells["h0"], cells["c0"]
    k, rk, b = cells["lstm"]
    lstm = layers.LSTM(CH, return_sequences=True, return_state=True)
    lstm.build(x.shape)
    assert [tuple(w.shape) for w in lstm.weights] == [w.shape for w in (k, rk, b)]
    lstm.set_weights([k, rk, b])
    y, h, c = lstm(x, initial_state=[T(h0), T(c0)])
    assert fused == ["lstm"]
    wy, wh, wc = np_lstm(x, k, rk, b, h0, c0)
    close(y, wy, 1e-12)
    close(h, wh, 1e-12)
    close(c, wc, 1e-12)


@pytest.mark.parametrize("back", [False, True], ids=["forwards", "backwards"])
def test_fused_lstm_right_padded_mask_against_numpy(cells, fused, back):
    """Right-padded mask, forwards and backwards (each sequence reversed within its
    length)."""
    x = cells["x"]
    k, rk, b = cells["lstm"]
    lengths = np.array([5, 2, 4])
    mask = np.arange(CT)[None, :] < lengths[:, None]
    layer = layers.LSTM(CH, return_state=True, go_backwards=back)
    layer.build(x.shape)
    layer.set_weights([k, rk, b])
    last, h, c = layer(x, mask=T(mask))
    assert fused == ["lstm"]
    xs = x.copy()
    if back:
        for i, L in enumerate(lengths):
            xs[i, :L] = x[i, :L][::-1]
    _, wh, wc = np_lstm(xs, k, rk, b, np.zeros((CN, CH)), np.zeros((CN, CH)), lengths)
    close(last, wh, 1e-12)
    close(h, wh, 1e-12)
    close(c, wc, 1e-12)


def test_fused_gru_backwards_against_numpy(cells, fused):
    x, h0 = cells["x"], cells["h0"]
    gk, grk, gb = cells["gru"]
    gru = layers.GRU(CH, return_sequences=True, return_state=True, go_backwards=True)
    gru.build(x.shape)
    assert [tuple(w.shape) for w in gru.weights] == [w.shape for w in (gk, grk, gb)]
    gru.set_weights([gk, grk, gb])
    y, h = gru(x, initial_state=T(h0))
    assert fused == ["gru"]
    wy, wh = np_gru(x[:, ::-1], gk, grk, gb, h0)
    close(y, wy, 1e-12)
    close(h, wh, 1e-12)


def test_fused_lstm_gradients_against_central_differences(cells):
    """Gradients of the fused LSTM against central differences (float64)."""
    x, h0, c0, wgt = cells["x"], cells["h0"], cells["c0"], cells["wgt"]
    k, rk, b = cells["lstm"]

    def loss_of(kv, xv, h0v):
        layer = layers.LSTM(CH, return_sequences=True)
        layer.build(x.shape)
        layer.set_weights([kv, rk, b])
        return layer, layer(T(xv), initial_state=[T(h0v), T(c0)])

    layer = layers.LSTM(CH, return_sequences=True)
    layer.build(x.shape)
    layer.set_weights([k, rk, b])
    xv, hv = T(x), T(h0)
    for t in (xv, hv):
        t.attach_grad()
    for w in layer.trainable_weights:
        w.value.attach_grad()
    with autograd.record():
        s = (layer(xv, initial_state=[hv, T(c0)]) * T(wgt)).sum()
    s.backward()

    def f(kv, xx, hh):
        return float((n(loss_of(kv, xx, hh)[1]) * wgt).sum())

    eps = 1e-6
    for name, arr, grad in [("x", x, xv.grad.asnumpy()), ("h0", h0, hv.grad.asnumpy()),
                            ("kernel", k, layer.trainable_weights[0].value.grad.asnumpy())]:
        for idx in [(0,) * arr.ndim, tuple(s - 1 for s in arr.shape)]:
            up, dn = arr.copy(), arr.copy()
            up[idx] += eps
            dn[idx] -= eps
            args_up = {"x": (k, up, h0), "h0": (k, x, up), "kernel": (up, x, h0)}[name]
            args_dn = {"x": (k, dn, h0), "h0": (k, x, dn), "kernel": (dn, x, h0)}[name]
            num = (f(*args_up) - f(*args_dn)) / (2 * eps)
            np.testing.assert_allclose(grad[idx], num, rtol=1e-6, atol=1e-8, err_msg=name)


# --- Bidirectional ----------------------------------------------------------------------

@pytest.mark.parametrize("cls", [layers.LSTM, layers.GRU], ids=["lstm", "gru"])
@pytest.mark.parametrize("kw", [
    {}, {"return_sequences": True}, {"return_state": True, "merge_mode": "sum"},
    {"return_sequences": True, "return_state": True, "merge_mode": None},
], ids=["concat", "sequences", "state-sum", "sequences-state-none"])
def test_fused_bidirectional_matches_two_layers(cls, kw, fused):
    """bidirectional_lstm/gru (both directions in one fused call) against Keras'
    two-layer path, forward and gradients, for each merge mode and return_state."""
    rng = np.random.default_rng(0)
    x = rng.standard_normal((CN, CT, CC)).astype("float32")
    rs, st = kw.get("return_sequences", False), kw.get("return_state", False)
    mm = kw.get("merge_mode", "concat")
    a, b = twins(lambda u: layers.Bidirectional(
        cls(CH, use_cudnn=u, return_sequences=rs, return_state=st), merge_mode=mm),
        x.shape, rng)
    ga = forward_and_grads(a, x)
    assert not fused
    gb = forward_and_grads(b, x)
    assert fused == [cls.__name__.lower()], fused
    for i, (p, q) in enumerate(zip(ga, gb)):
        np.testing.assert_allclose(p, q, rtol=2e-5, atol=2e-6, err_msg=f"{kw} #{i}")


def test_bidirectional_with_a_mask_runs_one_direction_each():
    """With a mask the layers run one direction each (the fused call raises, Keras falls
    back)."""
    rng = np.random.default_rng(0)
    x = rng.standard_normal((CN, CT, CC)).astype("float32")
    mask = np.ones((CN, CT), bool)
    mask[0, 3:] = False
    a, b = twins(lambda u: layers.Bidirectional(layers.GRU(CH, use_cudnn=u)), x.shape, rng)
    for p, q in zip(forward_and_grads(a, x, mask), forward_and_grads(b, x, mask)):
        np.testing.assert_allclose(p, q, rtol=2e-5, atol=2e-6)


# --- training ---------------------------------------------------------------------------

@pytest.mark.parametrize("make_layer", [
    lambda: layers.LSTM(8), lambda: layers.GRU(8),
    lambda: layers.Bidirectional(layers.LSTM(4)), lambda: layers.SimpleRNN(8),
], ids=["lstm", "gru", "bidirectional_lstm", "simple_rnn"])
def test_training_with_rnn_layers(make_layer):
    """fit() with fused LSTM/GRU/Bidirectional and the generic SimpleRNN lowers the loss."""
    keras.utils.set_random_seed(0)
    rng = np.random.default_rng(0)
    x = rng.standard_normal((64, 8, 3)).astype("float32")
    y = (x[:, :, 0].sum(1, keepdims=True) > 0).astype("float32")
    rnn_layer = make_layer()
    model = keras.Sequential([keras.Input((8, 3)), rnn_layer,
                              layers.Dense(1, activation="sigmoid")])
    model.compile(optimizer=keras.optimizers.Adam(0.02), loss="binary_crossentropy")
    hist = model.fit(x, y, epochs=8, batch_size=16, verbose=0).history["loss"]
    assert hist[-1] < 0.8 * hist[0], (rnn_layer.name, hist)


def test_conv_lstm_runs_the_generic_loop():
    """The generic loop inside a ConvLSTM cell (4-D states, masks broadcast over them)."""
    rng = np.random.default_rng(0)
    conv = layers.ConvLSTM1D(2, 3, padding="same", return_sequences=True)
    out = conv(rng.standard_normal((2, 4, 6, 3)).astype("float32"))
    assert tuple(out.shape) == (2, 4, 6, 2)
