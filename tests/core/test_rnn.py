"""The fused RNN operator: values against plain NumPy cells, compositions, sequence
lengths, layouts, dropout, errors and gradients."""
import numpy as np
import pytest

import core
from core import autograd, nd
from core.ops.nn import rnn as rnn_mod
from core.test_utils import assert_almost_equal, check_numeric_gradient

from .ops.specs_rnn import MODES, np_cell, np_rnn, pack, public_rnn, rnn_inputs, unpack


def _nd(args):
    return [None if a is None else nd.array(a, dtype=a.dtype) for a in args]


def _run(args, **kw):
    return public_rnn()(*_nd(args), **kw)


def _np(x):
    return [o.asnumpy() for o in x] if isinstance(x, (tuple, list)) else x.asnumpy()


def _close(a, b, rtol=1e-9, atol=1e-10):
    a, b = (a, b) if isinstance(a, (tuple, list)) else ((a,), (b,))
    assert len(a) == len(b)
    for x, y in zip(a, b):
        assert_almost_equal(x, y, rtol=rtol, atol=atol)


@pytest.mark.parametrize("mode", MODES)
def test_equals_a_plain_loop_of_numpy_cells(mode):
    rng = np.random.default_rng(0)
    T, N, I, H = 5, 3, 4, 3
    args, kw = rnn_inputs(rng, "float64", mode, T=T, N=N, I=I, H=H)
    out, *states = _np(_run(args, **kw))
    # the loop written out here, independently of np_rnn
    wx, wh, bx, bh = unpack(args[1], mode, I, H)[0]
    h, c = args[2][0], (args[3][0] if mode == "lstm" else np.zeros((N, H)))
    for t in range(T):
        step = [np_cell(mode, args[0][t, n], h[n], c[n], wx, wh, bx, bh) for n in range(N)]
        h = np.stack([s[0] for s in step])
        c = np.stack([s[1] for s in step])
        assert_almost_equal(out[t], h, rtol=1e-9, atol=1e-10)
    assert_almost_equal(states[0][0], h, rtol=1e-9, atol=1e-10)
    if mode == "lstm":
        assert_almost_equal(states[1][0], c, rtol=1e-9, atol=1e-10)


def test_float32_matches_the_float64_reference():
    rng = np.random.default_rng(1)
    args, kw = rnn_inputs(rng, "float32", "lstm", T=6, N=4, I=5, H=8, num_layers=2,
                          bidirectional=True)
    _close(_np(_run(args, **kw)), np_rnn(*args, **kw), rtol=1e-4, atol=1e-5)


def _split(flat, mode, I, H, L, bidirectional):
    """Per (layer, direction) flat parameter vectors of a 1-direction, 1-layer RNN."""
    D = 2 if bidirectional else 1
    ws = unpack(flat, mode, I, H, L, bidirectional)
    return [[pack([ws[layer * D + d]]) for d in range(D)] for layer in range(L)]


@pytest.mark.parametrize("mode", MODES)
def test_bidirectional_is_forward_plus_reversed(mode):
    rng = np.random.default_rng(2)
    T, N, I, H = 4, 2, 3, 2
    args, kw = rnn_inputs(rng, "float64", mode, T=T, N=N, I=I, H=H, bidirectional=True)
    out, hy, *cy = _np(_run(args, **kw))
    pf, pb = _split(args[1], mode, I, H, 1, True)[0]
    one = dict(kw, bidirectional=False)
    cell = (lambda k: args[3][k:k + 1]) if mode == "lstm" else (lambda k: None)
    of, hf, *cf = _np(_run([args[0], pf, args[2][:1], cell(0)], **one))
    ob, hb, *cb = _np(_run([args[0][::-1].copy(), pb, args[2][1:], cell(1)], **one))
    _close(out, np.concatenate([of, ob[::-1]], axis=-1))
    _close(hy, np.concatenate([hf, hb]))
    if mode == "lstm":
        _close(cy[0], np.concatenate([cf[0], cb[0]]))


@pytest.mark.parametrize("mode", MODES)
def test_two_layers_are_one_layer_on_another(mode):
    rng = np.random.default_rng(3)
    T, N, I, H = 4, 2, 3, 2
    args, kw = rnn_inputs(rng, "float64", mode, T=T, N=N, I=I, H=H, num_layers=2,
                          bidirectional=True)
    out, hy, *cy = _np(_run(args, **kw))
    layers = _split(args[1], mode, I, H, 2, True)
    x, hs, cs = args[0], [], []
    for layer in range(2):
        ws = [unpack(layers[layer][d], mode, x.shape[-1], H)[0] for d in range(2)]
        one = dict(kw, num_layers=1)
        st = args[2][2 * layer:2 * layer + 2]
        sc = args[3][2 * layer:2 * layer + 2] if mode == "lstm" else None
        res = _np(_run([x, pack(ws), st, sc], **one))
        x = res[0]
        hs.append(res[1])
        if mode == "lstm":
            cs.append(res[2])
    _close(out, x)
    _close(hy, np.concatenate(hs))
    if mode == "lstm":
        _close(cy[0], np.concatenate(cs))


@pytest.mark.parametrize("mode", MODES)
def test_sequence_length_semantics(mode):
    rng = np.random.default_rng(4)
    T, N, I, H = 5, 3, 2, 3
    lens = [5, 3, 1]
    args, kw = rnn_inputs(rng, "float64", mode, T=T, N=N, I=I, H=H, bidirectional=True,
                          num_layers=2, lens=lens)
    out, hy, *cy = _np(_run(args, **kw))
    for n, length in enumerate(lens):
        # outputs past the length are 0; everything else is the truncated sequence's run
        assert np.all(out[length:, n] == 0)
        one = [args[0][:length, n:n + 1], args[1], args[2][:, n:n + 1],
               args[3][:, n:n + 1] if mode == "lstm" else None]
        o1, h1, *c1 = _np(_run(one, **dict(kw, use_sequence_length=False)))
        _close(out[:length, n:n + 1], o1)
        _close(hy[:, n:n + 1], h1)
        if mode == "lstm":
            _close(cy[0][:, n:n + 1], c1[0])
    # float lengths (as MXNet passes them) behave the same
    again = _np(_run(args[:4] + [np.asarray(lens, np.float64)], **kw))
    _close(again[0], out)


def test_padding_gets_no_gradient():
    rng = np.random.default_rng(5)
    args, kw = rnn_inputs(rng, "float64", "lstm", T=4, N=2, I=2, H=2, bidirectional=True,
                          lens=[4, 2])
    x = _nd(args)
    x[0].attach_grad()
    with autograd.record():
        out, _, _ = public_rnn()(*x, **kw)
    out.backward(nd.ones(out.shape, dtype="float64"))
    g = x[0].grad.asnumpy()
    assert np.all(g[2:, 1] == 0) and np.all(g[:2, 1] != 0)


def test_gru_takes_sequence_length_fourth_as_in_mxnet():
    rng = np.random.default_rng(6)
    args, kw = rnn_inputs(rng, "float64", "gru", T=4, N=2, lens=[2, 4])
    a = _np(_run(args, **kw))
    b = _np(public_rnn()(*_nd([args[0], args[1], args[2], args[4]]), **kw))
    _close(a, b, rtol=0, atol=0)


@pytest.mark.parametrize("mode", ["lstm", "gru"])
def test_ntc_is_tnc_transposed(mode):
    rng = np.random.default_rng(7)
    args, kw = rnn_inputs(rng, "float64", mode, T=4, N=3, num_layers=2, bidirectional=True)
    tnc = _nd(args)
    ntc = _nd([args[0].transpose(1, 0, 2).copy()] + args[1:])
    grads = []
    for xs, layout in ((tnc, "TNC"), (ntc, "NTC")):
        for a in xs[:3]:
            a.attach_grad()
        with autograd.record():
            res = public_rnn()(*xs, **dict(kw, layout=layout))
            loss = res[0].sum() * 2 + (res[1] * res[1]).sum()
        loss.backward()
        grads.append([a.grad.asnumpy() for a in xs[:3]] + _np(res))
    t, n = grads
    _close(n[0], t[0].transpose(1, 0, 2))  # d data
    _close(n[1:3], t[1:3])  # d parameters, d state
    _close(n[3], t[3].transpose(1, 0, 2))  # out
    _close(n[4:], t[4:])  # final states


def _dropout_args():
    rng = np.random.default_rng(8)
    args, kw = rnn_inputs(rng, "float32", "lstm", T=5, N=4, I=3, H=6, num_layers=3)
    return args, dict(kw, state_outputs=False)


def test_dropout_is_identity_in_inference():
    args, kw = _dropout_args()
    plain = _np(_run(args, **kw))
    _close(_np(_run(args, **dict(kw, p=0.5))), plain, rtol=0, atol=0)
    with autograd.record(train_mode=False):
        _close(_np(_run(args, **dict(kw, p=0.5))), plain, rtol=0, atol=0)


def test_dropout_in_training_differs_and_reproduces_after_seed():
    args, kw = _dropout_args()
    plain = _np(_run(args, **kw))
    with autograd.train_mode():
        core.random.seed(42)
        a = _np(_run(args, **dict(kw, p=0.5)))
        b = _np(_run(args, **dict(kw, p=0.5)))
        core.random.seed(42)
        c = _np(_run(args, **dict(kw, p=0.5)))
        # the last layer has no dropout after it: one layer only is the same either way
        single = _np(_run([args[0], args[1][:rnn_mod.param_size("lstm", 1, 1, 3, 6)],
                           args[2][:1], args[3][:1]], **dict(kw, num_layers=1, p=0.5)))
    assert not np.allclose(a, plain) and not np.allclose(a, b)
    _close(a, c, rtol=0, atol=0)
    _close(single, _np(_run([args[0], args[1][:rnn_mod.param_size("lstm", 1, 1, 3, 6)],
                             args[2][:1], args[3][:1]], **dict(kw, num_layers=1))))


def test_dropout_gradient_matches_finite_differences():
    rng = np.random.default_rng(9)
    args, kw = rnn_inputs(rng, "float64", "gru", T=3, N=2, I=2, H=2, num_layers=2)

    def f(*xs):
        core.random.seed(5)  # the same masks for every evaluation
        with autograd.train_mode():
            return public_rnn()(*xs, **dict(kw, p=0.4))

    check_numeric_gradient(f, args[:3] + [None], diff=[0, 1, 2])


def test_wrong_state_shape_names_rnn_and_both_shapes():
    rng = np.random.default_rng(10)
    args, kw = rnn_inputs(rng, "float32", "lstm", T=3, N=2, I=3, H=4, num_layers=2)
    bad = args[:2] + [np.zeros((2, 3, 4), np.float32), args[3]]
    with pytest.raises(ValueError, match=r"RNN.*\(2, 2, 4\).*\(2, 3, 4\)"):
        _run(bad, **kw)
    bad = args[:3] + [np.zeros((1, 2, 4), np.float32)]
    with pytest.raises(ValueError, match=r"RNN.*state_cell.*\(2, 2, 4\).*\(1, 2, 4\)"):
        _run(bad, **kw)


def test_wrong_parameter_length_names_both_lengths():
    rng = np.random.default_rng(11)
    args, kw = rnn_inputs(rng, "float32", "gru", T=3, N=2, I=3, H=4)
    n = rnn_mod.param_size("gru", 1, 1, 3, 4)
    assert n == args[1].size == 3 * 4 * (3 + 4 + 2)
    with pytest.raises(ValueError, match=rf"RNN.*length {n - 1}.*length {n}"):
        _run([args[0], args[1][:-1], args[2], None], **kw)


def test_other_bad_arguments():
    rng = np.random.default_rng(12)
    args, kw = rnn_inputs(rng, "float32", "rnn_tanh")
    with pytest.raises(ValueError, match="RNN: mode"):
        _run(args, **dict(kw, mode="lstmx"))
    with pytest.raises(ValueError, match="RNN: data must be a 3-D"):
        _run([args[0][0]] + args[1:], **kw)
    with pytest.raises(ValueError, match="sequence_length"):
        _run(args, **dict(kw, use_sequence_length=True))
    with pytest.raises(TypeError, match="RNN: parameters has dtype float64"):
        _run([args[0], args[1].astype(np.float64), args[2], None], **kw)


def test_second_derivative_is_refused_clearly():
    rng = np.random.default_rng(13)
    args, kw = rnn_inputs(rng, "float64", "lstm")
    xs = _nd(args)
    xs[0].attach_grad()
    with autograd.record():
        out = public_rnn()(*xs, **dict(kw, state_outputs=False))
        g = autograd.grad((out * out).sum(), xs[0], create_graph=True)
        s = (g * g).sum()
    with pytest.raises(NotImplementedError, match="first derivatives only"):
        s.backward()


def test_initial_states_default_to_zeros():
    rng = np.random.default_rng(14)
    args, kw = rnn_inputs(rng, "float64", "lstm")
    zeros = np.zeros_like(args[2])
    _close(_np(_run(args[:2] + [None, None], **kw)), _np(_run(args[:2] + [zeros, zeros], **kw)))
