"""The operators with compiled CPU kernels on odd memory layouts, kernels on and off.

For LayerNorm, BatchNorm, Dropout, the fused RNN, the optimizers' update rules, softmax,
log_softmax, the softmax cross-entropy, pooling, im2col, convolution, FullyConnected and
the activations: inputs (and head gradients) that are strided, reversed (negative
strides), column-major, offset into a bigger buffer or broadcast (zero strides), and
``out=`` aliasing an input or a strided view. Each case runs with the kernels and with
their NumPy twins (``core.cpu_kernels.disabled()``) and must give the contiguous call's
values: bit for bit where the path copies its operands to C order first (the norm and
dropout kernels, the optimizer rules), to float rounding elsewhere (NumPy's sums follow
the layout); and the kernels' values must equal the twins' to float rounding.
"""
from __future__ import annotations

import contextlib

import numpy as np
import pytest

import core
from core import autograd, cpu_kernels, nd, optimizer
from core.ndarray import NDArray
from core.test_utils import view_of

LAYOUTS = ("strided", "reversed", "fortran", "offset")
_TOL = {np.dtype("float32"): dict(rtol=2e-5, atol=2e-6),
        np.dtype("float64"): dict(rtol=1e-12, atol=1e-13)}


@pytest.fixture(params=["kernels", "twins"])
def kernels(request):
    """Run the test with the compiled kernels, or with their NumPy twins."""
    if request.param == "kernels" and not cpu_kernels.enabled():
        pytest.skip("kernels are switched off (KBACKEND_NUMBA=0)")
    with cpu_kernels.disabled() if request.param == "twins" else contextlib.nullcontext():
        yield request.param == "kernels"


def _raw(a) -> NDArray:
    """An NDArray wrapping raw NumPy array ``a`` as it is (its layout kept)."""
    return NDArray._make(a, core.cpu(), None)


def _broadcast(values: np.ndarray, shape) -> NDArray:
    """``values`` broadcast to ``shape`` without a copy (zero strides, read-only)."""
    return _raw(np.broadcast_to(values, shape))


def _np(x) -> np.ndarray:
    return x.asnumpy() if isinstance(x, NDArray) else np.asarray(x)


def _same(got, want, exact: bool, what: str = "") -> None:
    got, want = _np(got), _np(want)
    assert got.shape == want.shape and got.dtype == want.dtype, (what, got.shape, want.shape)
    if exact:
        np.testing.assert_array_equal(got, want, err_msg=what)
    else:
        np.testing.assert_allclose(got, want, err_msg=what, **_TOL[want.dtype])


def _grads(fn, arrays, head=None, train=True, seed=None):
    """``fn``'s output and the gradients of its array inputs (``arrays``: NDArrays, any
    layout) for the head gradient ``head`` (an NDArray, any layout; default ones)."""
    for a in arrays:
        a.attach_grad()
    if seed is not None:
        core.random.seed(seed)
    with autograd.record(train_mode=train):
        y = fn(*arrays)
    y = y[0] if isinstance(y, (tuple, list)) else y
    y.backward(head if head is not None else nd.ones(y.shape, dtype=y.dtype))
    return [y.asnumpy()] + [a.grad.asnumpy() for a in arrays]


def _layout_cases(fn, values, exact, head_shape=None, seed=None, train=True):
    """``fn`` on each input laid out in each of ``LAYOUTS`` (the others contiguous), and
    with each layout of head gradient, against the all-contiguous call."""
    dt = values[0].dtype
    rng = np.random.default_rng(3)
    head = None if head_shape is None else rng.standard_normal(head_shape).astype(dt)

    def contiguous_head():
        return None if head is None else nd.array(head, dtype=dt)

    want = _grads(fn, [nd.array(v, dtype=v.dtype) for v in values], contiguous_head(), train,
                  seed)
    for layout in LAYOUTS:
        for i in range(len(values)):
            arrays = [view_of(v, layout=layout) if j == i else nd.array(v, dtype=v.dtype)
                      for j, v in enumerate(values)]
            got = _grads(fn, arrays, contiguous_head(), train, seed)
            for k, (g, w) in enumerate(zip(got, want)):
                _same(g, w, exact, f"input {i} {layout}: result {k}")
        if head is not None:
            got = _grads(fn, [nd.array(v, dtype=v.dtype) for v in values],
                         view_of(head, layout=layout), train, seed)
            for k, (g, w) in enumerate(zip(got, want)):
                _same(g, w, exact, f"head gradient {layout}: result {k}")
    return want


def _kernels_match_twins(run):
    """``run()`` (a list of arrays) with kernels on equals it under the twins."""
    if not cpu_kernels.enabled():
        return
    on = run()
    with cpu_kernels.disabled():
        off = run()
    for a, b in zip(on, off):
        _same(a, b, False, "kernels against twins")


def _out_aliasing(fn, x: np.ndarray, seed=None):
    """``fn(x, out=x)``, ``fn(v, out=v)`` on a reversed view, and ``fn(x, out=o)`` with
    ``o`` a strided view of a bigger buffer all give ``fn(x)`` (``fn`` maps x to a result
    of x's shape)."""
    if seed is not None:
        core.random.seed(seed)
    want = fn(nd.array(x, dtype=x.dtype)).asnumpy()
    for a in (nd.array(x, dtype=x.dtype), view_of(x, layout="reversed")):
        if seed is not None:
            core.random.seed(seed)
        assert fn(a, out=a) is a
        _same(a, want, False, "out= the input")
    big = np.full(x.shape[:-1] + (2 * x.shape[-1],), -7, x.dtype)
    if seed is not None:
        core.random.seed(seed)
    assert fn(nd.array(x, dtype=x.dtype), out=_raw(big[..., ::2])) is not None
    _same(big[..., ::2], want, False, "out= a strided view")
    assert (big[..., 1::2] == -7).all(), "out= wrote outside its view"


# ----------------------------------------------------------------------------- LayerNorm
@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("shape", [(6, 5), (2, 3, 4)])
def test_layer_norm_layouts(kernels, dtype, shape):
    rng = np.random.default_rng(0)
    x = rng.standard_normal(shape).astype(dtype)
    g, b = (rng.standard_normal(shape[-1]).astype(dtype) for _ in range(2))
    fn = nd.LayerNorm
    _layout_cases(fn, [x, g, b], exact=kernels, head_shape=shape)
    # gamma and beta broadcast from one value (zero strides) and from a row of a matrix
    one = _grads(fn, [nd.array(x), nd.full((shape[-1],), 1.5, dtype=dtype),
                      nd.full((shape[-1],), -0.5, dtype=dtype)])[0]
    y = fn(nd.array(x), _broadcast(np.asarray(1.5, dtype), (shape[-1],)),
           _broadcast(np.asarray(-0.5, dtype), (shape[-1],)))
    _same(y, one, kernels, "broadcast gamma and beta")
    _kernels_match_twins(lambda: _layout_cases(fn, [x, g, b], False, head_shape=shape))


def test_layer_norm_out_aliasing(kernels):
    x = np.random.default_rng(1).standard_normal((4, 6)).astype("float32")
    gamma, beta = nd.array(np.linspace(0.5, 2, 6)), nd.array(np.linspace(-1, 1, 6))
    _out_aliasing(lambda a, **o: nd.LayerNorm(a, gamma, beta, **o), x)
    a = nd.array(x)
    res = nd.LayerNorm(a, gamma, beta, output_mean_var=True, out=a)
    assert res[0] is a and res[1].shape == (4, 1)
    with pytest.raises(ValueError, match=r"LayerNorm: out= has shape \(6,\)"):
        nd.LayerNorm(nd.array(x), gamma, beta, out=nd.zeros((6,)))


def test_instance_and_group_norm_out_aliasing(kernels):
    x = np.random.default_rng(2).standard_normal((2, 4, 3)).astype("float32")
    gamma, beta = nd.array(np.linspace(0.5, 2, 4)), nd.array(np.linspace(-1, 1, 4))
    _out_aliasing(lambda a, **o: nd.InstanceNorm(a, gamma, beta, **o), x)
    _out_aliasing(lambda a, **o: nd.GroupNorm(a, gamma, beta, num_groups=2, **o), x)


# ----------------------------------------------------------------------------- BatchNorm
@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("axis", [1, -1])
@pytest.mark.parametrize("fix_gamma", [True, False])
@pytest.mark.parametrize("train", [True, False])
def test_batch_norm_layouts(kernels, dtype, axis, fix_gamma, train):
    rng = np.random.default_rng(4)
    x = rng.standard_normal((4, 3, 2, 5)).astype(dtype)
    c = x.shape[axis]
    g, b = (rng.standard_normal(c).astype(dtype) for _ in range(2))

    def fn(x, g, b):
        mm, mv = nd.full((c,), 0.25, dtype=dtype), nd.full((c,), 2.0, dtype=dtype)
        return nd.BatchNorm(x, g, b, mm, mv, fix_gamma=fix_gamma, axis=axis)

    # the kernels run (on C copies: bit for bit) for the batch statistics of training
    _layout_cases(fn, [x, g, b], exact=kernels and train, head_shape=x.shape, train=train)
    with autograd.train_mode() if train else contextlib.nullcontext():
        got = fn(nd.array(x), _broadcast(np.asarray(1.5, dtype), (c,)),
                 _broadcast(np.asarray(-0.5, dtype), (c,)))
        want = fn(nd.array(x), nd.full((c,), 1.5, dtype=dtype), nd.full((c,), -0.5, dtype=dtype))
    _same(got, want, kernels and train, "broadcast gamma and beta")
    _kernels_match_twins(lambda: _layout_cases(fn, [x, g, b], False, head_shape=x.shape,
                                               train=train))


@pytest.mark.parametrize("axis", [1, -1])
def test_batch_norm_moving_statistics_in_views(kernels, axis):
    """Moving statistics that are strided views of bigger buffers (parameters packed in
    one buffer) are updated through the views, as contiguous ones are."""
    rng = np.random.default_rng(5)
    x = rng.standard_normal((4, 3, 2, 3)).astype("float32")
    c = 3
    g, b = nd.array(rng.standard_normal(c)), nd.array(rng.standard_normal(c))
    mm, mv = nd.zeros((c,)), nd.ones((c,))
    buf = np.zeros(4 * c, "float32")
    buf[2 * c:] = 1.0
    vm, vv = _raw(buf[:2 * c:2]), _raw(buf[2 * c:][::-2])
    with autograd.train_mode():
        want = nd.BatchNorm(nd.array(x), g, b, mm, mv, fix_gamma=False, axis=axis)
        got = nd.BatchNorm(view_of(x, layout="fortran"), g, b, vm, vv, fix_gamma=False,
                           axis=axis)
    _same(got, want, kernels)
    _same(buf[:2 * c:2], mm.asnumpy(), kernels, "moving mean")
    _same(buf[2 * c:][::-2], mv.asnumpy(), kernels, "moving var")
    assert (buf[1:2 * c:2] == 0).all() and (buf[2 * c:][-2::-2] == 1).all(), "wrote outside"


def test_batch_norm_out_aliasing(kernels):
    x = np.random.default_rng(6).standard_normal((4, 3, 2)).astype("float32")
    g, b = nd.array([0.5, 1.0, 2.0]), nd.array([-1.0, 0.0, 1.0])
    for train in (False, True):
        with autograd.train_mode() if train else contextlib.nullcontext():
            _out_aliasing(lambda a, **o: nd.BatchNorm(a, g, b, nd.zeros((3,)), nd.ones((3,)),
                                                      fix_gamma=False, **o), x)


# ----------------------------------------------------------------------------- Dropout
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_dropout_layouts(kernels, dtype):
    rng = np.random.default_rng(7)
    x = rng.standard_normal((6, 5)).astype(dtype)
    fn = lambda a: nd.Dropout(a, p=0.4)  # noqa: E731
    _layout_cases(fn, [x], exact=True, head_shape=x.shape, seed=11)
    core.random.seed(11)
    with autograd.train_mode():
        got = fn(_broadcast(np.asarray(2.0, dtype), x.shape))
    core.random.seed(11)
    with autograd.train_mode():
        want = fn(nd.full(x.shape, 2.0, dtype=dtype))
    _same(got, want, True, "a broadcast input")
    _kernels_match_twins(lambda: _layout_cases(fn, [x], True, head_shape=x.shape, seed=11))


def test_dropout_out_aliasing(kernels):
    x = np.random.default_rng(8).standard_normal((5, 4)).astype("float32")
    _out_aliasing(lambda a, **o: nd.Dropout(a, p=0.5, mode="always", **o), x, seed=3)


# ----------------------------------------------------------------------------- RNN
def _rnn_values(mode, dtype, rng, T=3, N=2, I=3, H=4):
    gates = {"lstm": 4, "gru": 3, "rnn_tanh": 1}[mode]
    size = gates * H * (I + H) + 2 * gates * H
    vals = [rng.standard_normal((T, N, I)), rng.standard_normal(size) * 0.3,
            rng.standard_normal((1, N, H))]
    if mode == "lstm":
        vals.append(rng.standard_normal((1, N, H)))
    return [v.astype(dtype) for v in vals], H


@pytest.mark.parametrize("mode", ["lstm", "gru", "rnn_tanh"])
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_rnn_layouts(kernels, mode, dtype):
    vals, H = _rnn_values(mode, dtype, np.random.default_rng(9))

    def out(*a):
        return nd.RNN(*a, state_size=H, num_layers=1, mode=mode)

    def state(*a):  # the final hidden state, whose head gradient feeds the cells' dh
        return nd.RNN(*a, state_size=H, num_layers=1, mode=mode, state_outputs=True)[1]

    _layout_cases(out, vals, exact=False, head_shape=(3, 2, H))
    _layout_cases(state, vals, exact=False, head_shape=(1, 2, H))
    _kernels_match_twins(lambda: _layout_cases(state, vals, False, head_shape=(1, 2, H)))


def test_rnn_column_major_state_head_gradient(kernels):
    """Regression: a column-major head gradient of the final state made a column-major
    ``dh``, which the LSTM/RNN cells' ``dot(..., out=dh)`` rejected ("output array is
    not acceptable")."""
    vals, H = _rnn_values("lstm", "float32", np.random.default_rng(10))
    arrays = [nd.array(v) for v in vals]
    head = np.random.default_rng(11).standard_normal((1, 2, H)).astype("float32")
    got = _grads(lambda *a: nd.RNN(*a, state_size=H, num_layers=1, mode="lstm",
                                   state_outputs=True)[1], arrays, view_of(head, layout="fortran"))
    want = _grads(lambda *a: nd.RNN(*a, state_size=H, num_layers=1, mode="lstm",
                                    state_outputs=True)[1], [nd.array(v) for v in vals],
                  nd.array(head))
    for g, w in zip(got, want):
        _same(g, w, False)


# ----------------------------------------------------------------------------- optimizers
_OPTIMIZERS = [("sgd", {}), ("sgd", {"momentum": 0.9, "wd": 0.01}),
               ("nag", {"momentum": 0.9, "wd": 0.01}), ("adam", {"wd": 0.01}),
               ("adamw", {"wd": 0.01}), ("rmsprop", {}), ("rmsprop", {"centered": True}),
               ("adagrad", {"wd": 0.1}), ("lamb", {"wd": 0.01})]
_SHAPE = (7, 6)


def _weight(layout, w0):
    """(weight NDArray, function returning its values as read from its buffer)."""
    if layout == "contiguous":
        w = nd.array(w0)
        return w, w.asnumpy
    if layout == "offset":  # C-contiguous, inside a packed buffer: the kernels write it
        buf = np.full(w0.size + 5, -7, w0.dtype)
        buf[3:-2] = w0.ravel()
        return _raw(buf[3:-2].reshape(w0.shape)), lambda: _outside(buf, 3, -2)
    if layout == "strided":  # not contiguous: the twin writes through the view
        buf = np.full(w0.shape[:-1] + (2 * w0.shape[-1],), -7, w0.dtype)
        buf[:, ::2] = w0
        return _raw(buf[:, ::2]), lambda: _untouched(buf[:, 1::2], buf[:, ::2])
    return view_of(w0, layout=layout), None


def _outside(buf, lo, hi):
    assert (buf[:lo] == -7).all() and (buf[hi:] == -7).all(), "wrote outside the weight"
    return buf[lo:hi].reshape(_SHAPE)


def _untouched(gaps, values):
    assert (gaps == -7).all(), "wrote outside the weight"
    return values


def _gradient(layout, g, w):
    if layout == "contiguous":
        return nd.array(g)
    if layout == "broadcast":  # one row broadcast to all (zero strides)
        return _broadcast(g[0], g.shape)
    if layout == "weight":  # the gradient is the weight itself
        return w
    return view_of(g, layout=layout)


def _steps(name, kw, w_layout, g_layout):
    rng = np.random.default_rng(12)
    w0 = rng.standard_normal(_SHAPE).astype("float32")
    grads = [rng.standard_normal(_SHAPE).astype("float32") for _ in range(3)]
    opt = optimizer.create(name, learning_rate=0.1, **kw)
    w, read = _weight(w_layout, w0)
    state = opt.create_state_multi_precision(0, w)
    for g in grads:
        opt.update_multi_precision(0, w, _gradient(g_layout, g, w), state)
    if read is not None:
        np.testing.assert_array_equal(read(), w.asnumpy())
    return w.asnumpy()


@pytest.mark.parametrize(("name", "kw"), _OPTIMIZERS, ids=lambda v: v if isinstance(v, str)
                         else "-".join(f"{k}{x}" for k, x in v.items()) or "plain")
@pytest.mark.parametrize("g_layout", ["contiguous", "fortran", "reversed", "strided",
                                      "broadcast", "weight"])
def test_optimizer_updates_on_views(kernels, name, kw, g_layout):
    """Weights inside packed buffers (contiguous views: the kernels; strided ones: the
    twins), column-major or reversed, with gradients in any layout, broadcast, or the
    weight itself: the same steps as on contiguous arrays, and nothing outside the
    weight is written."""
    want = _steps(name, kw, "contiguous", g_layout if g_layout == "weight" else "contiguous")
    if g_layout == "broadcast":
        want = None
    for w_layout in ("offset", "strided", "fortran", "reversed"):
        got = _steps(name, kw, w_layout, g_layout)
        if want is not None:
            _same(got, want, name != "lamb", f"weight {w_layout}")
        else:
            _same(got, _steps(name, kw, "contiguous", "broadcast"), name != "lamb",
                  f"weight {w_layout}")
    if name != "lamb":  # LAMB's kernels sum its norms in float64: equal to rounding only
        _kernels_match_twins(lambda: [_steps(name, kw, w, g_layout)
                                      for w in ("contiguous", "offset", "strided")])


@pytest.mark.parametrize("rule", ["sgd", "sgd_mom", "adam"])
def test_update_rules_write_packed_weights_and_states(kernels, rule):
    """The raw rules (``sgd_update``, ...) on a weight and states that are slices of one
    flat buffer (what a packed-parameter layout hands them) update exactly those slices."""
    from core.optimizer.adam import adam_update
    from core.optimizer.sgd import sgd_mom_update, sgd_update

    fn, n, scalars = {"sgd": (sgd_update, 0, (0.1, 0.01, 1.0, -1.0)),
                      "sgd_mom": (sgd_mom_update, 1, (0.1, 0.01, 0.9, 1.0, -1.0)),
                      "adam": (adam_update, 2, (0.1, 0.01, 0.9, 0.999, 1e-8, 1.0, -1.0))}[rule]
    rng = np.random.default_rng(13)
    size = 40
    w0 = rng.standard_normal(size).astype("float32")
    g = rng.standard_normal(size).astype("float32")
    s0 = [np.abs(rng.standard_normal(size)).astype("float32") for _ in range(n)]
    w, states = w0.copy(), [s.copy() for s in s0]
    fn(w, g, *states, *scalars)
    buf = np.full((n + 1) * (size + 2) + 1, -7, "float32")
    views = [buf[1 + k * (size + 2):1 + k * (size + 2) + size] for k in range(n + 1)]
    for v, a in zip(views, [w0] + s0):
        v[...] = a
    fn(views[0], g, *views[1:], *scalars)
    for v, a in zip(views, [w] + states):
        np.testing.assert_array_equal(v, a)
    assert (buf[[0] + [k * (size + 2) - 1 for k in range(1, n + 2)]] == -7).all()


# ------------------------------------------------------ softmax, pooling, im2col, dense
def _dense_cases():
    rng = np.random.default_rng(14)
    x2 = rng.standard_normal((4, 6))
    x4 = rng.standard_normal((2, 3, 6, 6))
    label = np.array([1.0, 0.0, 5.0, 2.0])
    w4 = rng.standard_normal((5, 3, 3, 3)) * 0.3
    return [
        ("softmax", lambda x: nd.softmax(x), [x2], x2.shape),
        ("softmax-axis0", lambda x: nd.softmax(x, axis=0), [x2], x2.shape),
        ("log_softmax", lambda x: nd.log_softmax(x), [x2], x2.shape),
        ("softmax_cross_entropy", lambda x: nd.softmax_cross_entropy(x, nd.array(label)),
         [x2], (1,)),
        ("SoftmaxOutput", lambda x: nd.SoftmaxOutput(x, nd.array(label)), [x2], None),
        ("Activation-tanh", lambda x: nd.Activation(x, act_type="tanh"), [x2], x2.shape),
        ("gelu", lambda x: nd.LeakyReLU(x, act_type="gelu"), [x2], x2.shape),
        ("FullyConnected", lambda x, w: nd.FullyConnected(x, w, num_hidden=5, no_bias=True),
         [x2, rng.standard_normal((5, 6))], (4, 5)),
        ("Pooling-max", lambda x: nd.Pooling(x, kernel=(3, 3), stride=(2, 2), pad=(1, 1)),
         [x4], (2, 3, 3, 3)),
        ("Pooling-avg", lambda x: nd.Pooling(x, kernel=(2, 2), stride=(2, 2),
                                             pool_type="avg"), [x4], (2, 3, 3, 3)),
        ("Pooling-global", lambda x: nd.Pooling(x, kernel=(1, 1), global_pool=True,
                                                pool_type="max"), [x4], (2, 3, 1, 1)),
        ("im2col", lambda x: nd.im2col(x, kernel=(3, 3), pad=(1, 1)), [x4], (2, 27, 36)),
        ("Convolution", lambda x, w: nd.Convolution(x, w, kernel=(3, 3), num_filter=5,
                                                    pad=(1, 1), no_bias=True),
         [x4, w4], (2, 5, 6, 6)),
    ]


@pytest.mark.parametrize("case", _dense_cases(), ids=lambda c: c[0])
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_dense_ops_layouts(kernels, case, dtype):
    name, fn, values, head_shape = case
    values = [v.astype(dtype) for v in values]
    _layout_cases(fn, values, exact=False, head_shape=head_shape)
    # a broadcast (zero-stride) first input against its contiguous copy
    b = np.broadcast_to(values[0][:1], values[0].shape)
    rest = [nd.array(v, dtype=dtype) for v in values[1:]]
    _same(fn(_raw(b), *rest), fn(nd.array(np.ascontiguousarray(b), dtype=dtype), *rest), False,
          "broadcast")
    _kernels_match_twins(lambda: _layout_cases(fn, values, False, head_shape=head_shape))


@pytest.mark.parametrize("name", ["softmax", "log_softmax", "relu", "Activation", "exp"])
def test_elementwise_out_aliasing(kernels, name):
    fn = {"softmax": lambda a, **o: nd.softmax(a, **o),
          "log_softmax": lambda a, **o: nd.log_softmax(a, **o),
          "relu": lambda a, **o: nd.relu(a, **o),
          "Activation": lambda a, **o: nd.Activation(a, act_type="sigmoid", **o),
          "exp": lambda a, **o: nd.exp(a, **o)}[name]
    _out_aliasing(fn, np.random.default_rng(15).standard_normal((4, 6)).astype("float32"))


@pytest.mark.parametrize("name", ["softmin", "SoftmaxActivation"])
def test_softmax_relatives_take_out(name):
    fn = getattr(nd, name)
    x = nd.array(np.random.default_rng(16).standard_normal((3, 4)))
    want = fn(x).asnumpy()
    assert fn(x, out=x) is x
    np.testing.assert_allclose(x.asnumpy(), want, rtol=1e-6)
