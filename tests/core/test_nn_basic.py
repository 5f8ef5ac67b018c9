"""Behaviour of the dense layer, activations, softmax family, losses, dropout, embedding and
CTC beyond the op table: training-mode semantics, loss-layer gradients, label errors,
gradient accumulation, CTC against brute force, second-order gradients."""
import itertools
import math

import numpy as np
import pytest

import core
from core import autograd, nd
from core.ops import F

from .ops.specs_nn_loss import ctc_brute

RNG = np.random.default_rng(0)


def _nd(x, dtype="float64"):
    return nd.array(np.asarray(x), dtype=dtype)


def _softmax(x, axis=-1):
    e = np.exp(x - x.max(axis=axis, keepdims=True))
    return e / e.sum(axis=axis, keepdims=True)


def _grad(fn, *xs, head=None):
    """Gradients of fn(*xs) (weighted by ``head``, default ones) with respect to every x."""
    arrs = [_nd(x) for x in xs]
    for a in arrs:
        a.attach_grad()
    with autograd.record():
        y = fn(*arrs)
    y.backward(_nd(np.ones(y.shape) if head is None else head))
    return [a.grad.asnumpy() for a in arrs]


def _second_order(fn, x, rng, eps=1e-5, tol=1e-5):
    """d/dx <grad fn(x), v> by autograd (create_graph) against finite differences."""
    v = rng.standard_normal(x.shape)
    d = rng.standard_normal(x.shape)

    def first(xv):
        a = _nd(xv)
        a.attach_grad()
        with autograd.record():
            y = fn(a)
        (g,) = autograd.grad(y, [a], head_grads=_nd(np.ones(y.shape)), create_graph=True,
                             retain_graph=True)
        return a, g

    a, g = first(x)
    with autograd.record():
        s = (g * _nd(v)).sum()
    s.backward()
    analytic = float((a.grad.asnumpy() * d).sum())
    plus = float((first(x + eps * d)[1].asnumpy() * v).sum())
    minus = float((first(x - eps * d)[1].asnumpy() * v).sum())
    numeric = (plus - minus) / (2 * eps)
    assert abs(analytic - numeric) <= tol * max(1.0, abs(numeric)), (analytic, numeric)


# ----------------------------------------------------------------- Dropout
def test_dropout_is_identity_outside_training():
    x = nd.ones((3, 4))
    assert nd.Dropout(x, p=0.9) is x
    with autograd.record(train_mode=False):
        assert nd.Dropout(x, p=0.9) is x
    with autograd.predict_mode():
        assert nd.Dropout(x, p=0.9) is x


def test_dropout_statistics_in_training():
    core.random.seed(5)
    x = nd.ones((500, 400))
    for p in (0.1, 0.5, 0.8):
        with autograd.record():
            y = nd.Dropout(x, p=p).asnumpy()
        keep = y != 0
        n = keep.size
        assert abs(keep.mean() - (1 - p)) < 5 * math.sqrt(p * (1 - p) / n)
        np.testing.assert_allclose(y[keep], 1 / (1 - p), rtol=1e-6)
        assert abs(y.mean() - 1.0) < 0.02  # the expectation is preserved
    with autograd.record():
        assert not nd.Dropout(x, p=1.0).asnumpy().any()


def test_dropout_gradient_reuses_the_mask():
    core.random.seed(9)
    x = nd.array(RNG.uniform(1, 2, size=(50, 40)))
    x.attach_grad()
    with autograd.record():
        y = nd.Dropout(x, p=0.5)
        loss = (y * y).sum()
    loss.backward()
    yv, xv = y.asnumpy(), x.asnumpy()
    scale = yv / xv  # the mask: 0 or 2
    assert set(np.unique(scale.round(5))) <= {0.0, 2.0}
    np.testing.assert_allclose(x.grad.asnumpy(), 2 * yv * scale, rtol=1e-5)


def test_dropout_seeded_masks_repeat_and_differ_per_call():
    x = nd.ones((20, 30))
    core.random.seed(1)
    with autograd.train_mode():
        a, b = nd.Dropout(x).asnumpy(), nd.Dropout(x).asnumpy()
    core.random.seed(1)
    with autograd.train_mode():
        c = nd.Dropout(x).asnumpy()
    assert not np.array_equal(a, b)
    np.testing.assert_array_equal(a, c)


def test_spatial_dropout_shares_the_mask_along_axes():
    core.random.seed(2)
    with autograd.train_mode():
        y = nd.Dropout(nd.ones((6, 8, 4, 4)), p=0.5, axes=(2, 3)).asnumpy()
    flat = y.reshape(6, 8, 16)
    assert (flat == flat[:, :, :1]).all()
    assert 0 < (flat[:, :, 0] == 0).mean() < 1


# ----------------------------------------------------------------- SoftmaxOutput
def test_softmax_output_gradient_ignores_the_head_gradient():
    x = RNG.standard_normal((4, 5))
    label = np.array([0, 3, 4, 1])
    want = _softmax(x) - np.eye(5)[label]
    for head in (None, RNG.standard_normal((4, 5)) * 10):
        (gx, _) = _grad(lambda d, lab: nd.SoftmaxOutput(d, lab), x, label, head=head)
        np.testing.assert_allclose(gx, want, rtol=1e-10)
    # and it is the gradient of the summed cross-entropy
    (gce, _) = _grad(lambda d, lab: nd.softmax_cross_entropy(d, lab), x, label)
    np.testing.assert_allclose(gce, want, rtol=1e-10)


def test_softmax_output_normalization_and_ignore_label():
    x = RNG.standard_normal((4, 3))
    label = np.array([2, -1, 0, -1])
    p = _softmax(x)
    onehot = np.zeros((4, 3))
    onehot[[0, 2], [2, 0]] = 1
    base = p - onehot
    cases = [({"use_ignore": True}, base * [[1], [0], [1], [0]]),
             ({"use_ignore": True, "normalization": "valid"}, base * [[1], [0], [1], [0]] / 2),
             ({"use_ignore": True, "normalization": "batch", "grad_scale": 3.0},
              base * [[1], [0], [1], [0]] * 3 / 4)]
    for attrs, want in cases:
        (gx, _) = _grad(lambda d, lab, at=attrs: nd.SoftmaxOutput(d, lab, **at), x, label)
        np.testing.assert_allclose(gx, want, rtol=1e-10, err_msg=str(attrs))
    # out_grad=True multiplies by the head gradient
    head = RNG.standard_normal((4, 3))
    lab2 = np.array([2, 1, 0, 1])
    (gx, _) = _grad(lambda d, lab: nd.SoftmaxOutput(d, lab, out_grad=True), x, lab2, head=head)
    np.testing.assert_allclose(gx, (p - np.eye(3)[lab2]) * head, rtol=1e-10)


def test_softmax_output_has_no_second_order_gradient():
    x = _nd(RNG.standard_normal((2, 3)))
    x.attach_grad()
    with autograd.record():
        y = nd.SoftmaxOutput(x, _nd([0, 1]))
    (g,) = autograd.grad(y, [x], head_grads=_nd(np.ones((2, 3))), create_graph=True)
    with pytest.raises(NotImplementedError, match="SoftmaxOutput"):
        with autograd.record():
            s = (g * g).sum()
        s.backward()


# ----------------------------------------------------------------- fused cross-entropy
def test_softmax_ce_gradient_and_ignore_label():
    x = RNG.standard_normal((5, 4))
    label = np.array([1, -1, 3, 0, -1])
    head = RNG.standard_normal(5)
    (gx, _) = _grad(lambda d, lab: nd.softmax_cross_entropy_with_logits(d, lab, ignore_label=-1),
                    x, label, head=head)
    keep = label != -1
    want = (_softmax(x) - np.eye(4)[np.where(keep, label, 0)]) * (head * keep)[:, None]
    np.testing.assert_allclose(gx, want, rtol=1e-10)


def test_softmax_ce_is_stable_for_huge_logits():
    x = _nd([[1000.0, 0.0, -1000.0]], "float32")
    loss = nd.softmax_cross_entropy_with_logits(x, _nd([2], "int64"))
    np.testing.assert_allclose(loss.asnumpy(), [2000.0])
    assert np.isfinite(nd.log_softmax(x).asnumpy()).all()


def test_labels_out_of_range_raise_value_error_naming_the_op():
    x = nd.ones((3, 4))
    with pytest.raises(ValueError, match=r"softmax_cross_entropy_with_logits: label 4 is out "
                                         r"of range for 4 classes"):
        nd.softmax_cross_entropy_with_logits(x, nd.array([0, 4, 1]))
    with pytest.raises(ValueError, match=r"softmax_cross_entropy_with_logits: label -2 .*4 "
                                         r"classes"):
        nd.softmax_cross_entropy_with_logits(x, nd.array([0, -2, -1]), ignore_label=-1)
    # the ignored label itself is fine
    nd.softmax_cross_entropy_with_logits(x, nd.array([0, -1, 3]), ignore_label=-1)
    with pytest.raises(ValueError, match=r"softmax_cross_entropy: label 7 .*4 classes"):
        nd.softmax_cross_entropy(x, nd.array([0, 7, 1]))
    with pytest.raises(ValueError, match=r"SoftmaxOutput: label 5 .*4 classes"):
        nd.SoftmaxOutput(x, nd.array([0, 5, 1]))
    with pytest.raises(ValueError, match=r"SoftmaxOutput: label -1"):
        nd.SoftmaxOutput(x, nd.array([0, -1, 1]))
    nd.SoftmaxOutput(x, nd.array([0, -1, 1]), use_ignore=True)
    with pytest.raises(ValueError, match=r"CTCLoss: label 5 of sequence 1 .*4 classes"):
        nd.CTCLoss(nd.ones((3, 2, 4)), nd.array([[1, 2], [5, 0]]))
    with pytest.raises(ValueError, match=r"CTCLoss: label 4 .*blank"):
        nd.CTCLoss(nd.ones((3, 1, 4)), nd.array([[4, 1]]), blank_label="last")
    with pytest.raises(IndexError, match=r"Embedding: id 6 is out of range .*5 rows"):
        nd.Embedding(nd.array([1, 6]), nd.ones((5, 2)), input_dim=5, output_dim=2)


def test_shape_errors_name_the_operator_and_shapes():
    with pytest.raises(ValueError, match=r"FullyConnected: weight must have shape "
                                         r"\(num_hidden, 12\).*got \(4, 5\)"):
        nd.FullyConnected(nd.ones((2, 3, 4)), nd.ones((4, 5)), nd.ones((4,)), num_hidden=4)
    with pytest.raises(ValueError, match=r"FullyConnected: weight has 4 rows but num_hidden=3"):
        nd.FullyConnected(nd.ones((2, 5)), nd.ones((4, 5)), nd.ones((4,)), num_hidden=3)
    with pytest.raises(ValueError, match=r"softmax_cross_entropy_with_logits: sparse labels "
                                         r"must have shape \(3,\)"):
        nd.softmax_cross_entropy_with_logits(nd.ones((3, 4)), nd.ones((4,)))
    with pytest.raises(ValueError, match=r"softmax: length must have shape \(3,\)"):
        nd.softmax(nd.ones((3, 4)), nd.ones((4,)), use_length=True)
    with pytest.raises(ValueError, match=r"Activation: act_type must be one of"):
        nd.Activation(nd.ones((2,)), act_type="swish")
    with pytest.raises(ValueError, match=r"LeakyReLU: act_type='prelu' needs the gamma"):
        nd.LeakyReLU(nd.ones((2, 3)), act_type="prelu")
    with pytest.raises(TypeError, match=r"FullyConnected: expects floating-point"):
        nd.FullyConnected(nd.ones((2, 3), dtype="int32"), nd.ones((4, 3), dtype="int32"),
                          no_bias=True)


# ----------------------------------------------------------------- Embedding
def test_embedding_gradient_accumulates_repeated_ids():
    ids = np.array([[1, 3, 1], [1, 0, 3]])
    w = RNG.standard_normal((5, 2))
    head = RNG.standard_normal((2, 3, 2))
    (_, gw) = _grad(lambda i, ww: nd.Embedding(i, ww, input_dim=5, output_dim=2),
                    ids, w, head=head)
    want = np.zeros((5, 2))
    for (i, j), k in np.ndenumerate(ids):
        want[k] += head[i, j]
    np.testing.assert_allclose(gw, want, rtol=1e-12)
    assert not gw[[2, 4]].any()


def test_embedding_grad_paths_agree():
    # the CSC product (large) and add.at (small) give the same sums
    ids = RNG.integers(0, 30, size=(300,))
    g = RNG.standard_normal((300, 20)).astype("float32")
    big = F._embedding_grad(nd.array(ids, dtype="int64"), nd.array(g), input_dim=30).asnumpy()
    want = np.zeros((30, 20))
    np.add.at(want, ids, g.astype(np.float64))
    np.testing.assert_allclose(big, want, rtol=1e-5, atol=1e-5)
    assert big.dtype == np.float32
    small = F._embedding_grad(nd.array(ids[:5], dtype="int64"), nd.array(g[:5]), input_dim=30)
    want = np.zeros((30, 20), np.float32)
    np.add.at(want, ids[:5], g[:5])
    np.testing.assert_allclose(small.asnumpy(), want, rtol=1e-6)


# ----------------------------------------------------------------- CTC
def _random_ctc_case(rng, t, n, c, max_len, blank_label):
    labels = []
    lens = rng.integers(0, max_len + 1, size=n)
    real = np.arange(1, c) if blank_label == "first" else np.arange(0, c - 1)
    pad = 0 if blank_label == "first" else -1
    for k in lens:
        row = list(rng.choice(real, size=k)) + [pad] * (max_len - k)
        labels.append(row)
    return rng.standard_normal((t, n, c)), np.array(labels)


@pytest.mark.parametrize("blank_label", ["first", "last"])
def test_ctc_matches_brute_force(blank_label):
    rng = np.random.default_rng(7)
    for t, c in ((3, 2), (4, 3), (5, 3)):
        x, labels = _random_ctc_case(rng, t, 6, c, 3, blank_label)
        ours = nd.CTCLoss(_nd(x), _nd(labels, "int64"), blank_label=blank_label).asnumpy()
        np.testing.assert_allclose(ours, ctc_brute(x, labels, blank_label=blank_label),
                                   rtol=1e-10)


@pytest.mark.parametrize("blank_label,labels,want", [
    # MXNet 1.9.1's values for these inputs (label_lengths reach labels equal to the blank)
    ("last", [[4, 1, 2, 4], [3, 4, 4, 1], [0, 0, 4, 2]], [14.240591, 11.930523, 14.186543]),
    ("first", [[0, 1, 0, 2], [3, 0, 0, 1], [1, 0, 1, 0]], [11.430108, 18.474401, 13.737149]),
])
def test_ctc_label_equal_to_the_blank_is_accepted_as_mxnet_does(blank_label, labels, want):
    x = np.random.RandomState(0).randn(12, 3, 5).astype("float32")
    got = nd.CTCLoss(_nd(x), _nd(labels), None, _nd([3, 4, 2]), use_label_lengths=True,
                     blank_label=blank_label)
    np.testing.assert_allclose(got.asnumpy(), want, rtol=1e-5)


def test_ctc_repeated_labels_need_a_blank_between():
    # "1 1" needs at least 3 steps (1, blank, 1): impossible in 2, so the loss is inf
    x = np.zeros((2, 1, 3))
    loss = nd.CTCLoss(_nd(x), _nd([[1, 1]], "int64")).asnumpy()
    assert np.isinf(loss).all()
    (gx, _) = _grad(lambda d, lab: nd.CTCLoss(d, lab), x, np.array([[1, 1]]))
    assert not gx.any()  # sequences without an alignment get no gradient
    x = np.zeros((3, 1, 3))
    np.testing.assert_allclose(nd.CTCLoss(_nd(x), _nd([[1, 1]], "int64")).asnumpy(),
                               [3 * math.log(3)])


def test_ctc_gradient_matches_brute_force_finite_differences():
    rng = np.random.default_rng(3)
    x = rng.standard_normal((4, 3, 3))
    labels = np.array([[1, 2], [2, 1], [1, 1]])
    data_len, label_len = np.array([4, 3, 2]), np.array([2, 1, 1])
    head = rng.standard_normal(3)

    def ours(d, lab, dl, ll):
        return nd.CTCLoss(d, lab, dl, ll, use_data_lengths=True, use_label_lengths=True)

    (gx, *_) = _grad(ours, x, labels, data_len, label_len, head=head)
    eps, num = 1e-6, np.zeros_like(x)
    for idx in np.ndindex(x.shape):
        xp, xm = x.copy(), x.copy()
        xp[idx] += eps
        xm[idx] -= eps
        lp = ctc_brute(xp, labels, data_len, label_len, True, True)
        lm = ctc_brute(xm, labels, data_len, label_len, True, True)
        num[idx] = ((lp - lm) * head).sum() / (2 * eps)
    np.testing.assert_allclose(gx, num, atol=1e-7)
    assert not gx[2:, 2].any()  # steps past a sequence's length get no gradient


def test_ctc_names():
    x, lab = _nd(np.zeros((2, 1, 3))), _nd([[1]], "int64")
    want = nd.CTCLoss(x, lab).asnumpy()
    np.testing.assert_allclose(nd.ctc_loss(x, lab).asnumpy(), want)
    np.testing.assert_allclose(nd.contrib.CTCLoss(x, lab).asnumpy(), want)
    np.testing.assert_allclose(nd.contrib.ctc_loss(x, lab).asnumpy(), want)


# ----------------------------------------------------------------- second-order gradients
@pytest.mark.parametrize("name,fn", [
    ("softmax", lambda a: nd.softmax(a, axis=1) * nd.array(np.arange(12.).reshape(3, 4))),
    ("log_softmax", lambda a: nd.log_softmax(a, axis=0, temperature=2.0) ** 2),
    ("gelu", lambda a: nd.gelu(a)),
    ("gelu_tanh", lambda a: nd.gelu(a, approximate=True)),
    ("mish", lambda a: nd.mish(a)),
    ("elu", lambda a: nd.LeakyReLU(a, act_type="elu", slope=0.5)),
    ("softplus", lambda a: nd.softplus(a)),
    ("ce", lambda a: nd.softmax_cross_entropy_with_logits(a, nd.array([0, 3, 1]))),
    ("ce_dense", lambda a: nd.softmax_cross_entropy_with_logits(
        a, nd.array(np.full((3, 4), 0.25)), sparse=False)),
    ("fc", lambda a: nd.FullyConnected(a * a, nd.array(np.ones((2, 4)) / 3), num_hidden=2,
                                       no_bias=True)),
    ("bce", lambda a: nd.sigmoid_binary_cross_entropy(a, nd.array(np.eye(3, 4)))),
])
def test_second_order_gradients(name, fn):
    _second_order(fn, RNG.uniform(-1.5, 1.5, size=(3, 4)), np.random.default_rng(1))


def test_embedding_second_order():
    ids = nd.array([0, 2, 2], dtype="int64")
    _second_order(lambda w: nd.Embedding(ids, w) ** 3, RNG.standard_normal((3, 2)),
                  np.random.default_rng(2))


# ----------------------------------------------------------------- wrappers and small things
def test_softmin_and_softmax_activation():
    x = RNG.standard_normal((2, 3, 4))
    np.testing.assert_allclose(nd.softmin(_nd(x), axis=1).asnumpy(), _softmax(-x, axis=1))
    np.testing.assert_allclose(nd.SoftmaxActivation(_nd(x), mode="channel").asnumpy(),
                               _softmax(x, axis=1))
    np.testing.assert_allclose(nd.SoftmaxActivation(_nd(x)).asnumpy(),
                               _softmax(x.reshape(2, -1)).reshape(x.shape))


def test_low_precision_softmax_and_gelu_compute_in_float32():
    x = RNG.uniform(-8, 8, size=(4, 50))
    for dt in ("float16", "bfloat16"):
        y = nd.softmax(nd.array(x, dtype=dt)).astype("float32").asnumpy()
        np.testing.assert_allclose(y, _softmax(x), atol=2e-2)
        assert nd.gelu(nd.array(x, dtype=dt)).dtype.name == dt


def test_fully_connected_mixed_and_first_layer_gradients():
    # the data of a first layer wants no gradient: only weight and bias get one
    x = nd.array(RNG.standard_normal((3, 4)))
    w, b = nd.array(RNG.standard_normal((2, 4))), nd.zeros((2,))
    w.attach_grad()
    b.attach_grad()
    with autograd.record():
        y = nd.FullyConnected(x, w, b, num_hidden=2)
    y.backward(nd.ones((3, 2)))
    np.testing.assert_allclose(w.grad.asnumpy(), np.ones((2, 3)) @ x.asnumpy(), rtol=1e-5)
    np.testing.assert_allclose(b.grad.asnumpy(), [3.0, 3.0])


def test_mlp_trains():
    rng = np.random.default_rng(0)
    x = rng.standard_normal((64, 10)).astype("float32")
    y = (x[:, 0] > 0).astype("int64") + (x[:, 1] > 0)
    params = [nd.array(rng.standard_normal((16, 10)) * 0.3), nd.zeros((16,)),
              nd.array(rng.standard_normal((3, 16)) * 0.3), nd.zeros((3,))]
    for p in params:
        p.attach_grad()
    xd, yd = nd.array(x), nd.array(y, dtype="int64")
    losses = []
    for _ in range(60):
        with autograd.record():
            h = nd.relu(nd.FullyConnected(xd, params[0], params[1], num_hidden=16))
            h = nd.Dropout(h, p=0.1)
            out = nd.FullyConnected(h, params[2], params[3], num_hidden=3)
            loss = nd.softmax_cross_entropy_with_logits(out, yd).mean()
        loss.backward()
        for p in params:
            p -= 0.5 * p.grad
        losses.append(float(loss.asscalar()))
    assert losses[-1] < 0.5 * losses[0]


def test_all_ctc_label_paths_counted_once():
    # a uniform distribution: p(label) = (number of alignments) / C**T
    t, c = 4, 3
    paths = itertools.product(range(c), repeat=t)
    count = 0
    for p in paths:
        merged = [k for j, k in enumerate(p) if j == 0 or k != p[j - 1]]
        count += [k for k in merged if k != 0] == [1, 2]
    loss = nd.CTCLoss(_nd(np.zeros((t, 1, c))), _nd([[1, 2]], "int64")).asnumpy()
    np.testing.assert_allclose(loss, [-math.log(count / c ** t)])


def test_public_wrappers_take_out_and_reject_unknown_keywords():
    o = nd.zeros((2, 2))
    r = nd.LeakyReLU(nd.array([[-1.0, 2.0], [3.0, -4.0]]), slope=0.5, out=o)
    assert r is o
    np.testing.assert_allclose(o.asnumpy(), [[-0.5, 2.0], [3.0, -2.0]])
    o = nd.zeros((2, 2))
    assert nd.Dropout(nd.ones((2, 2)), p=0.5, out=o) is o
    np.testing.assert_allclose(o.asnumpy(), np.ones((2, 2)))
    with pytest.raises(TypeError, match="Dropout: unexpected keyword"):
        nd.Dropout(nd.ones((2,)), rate=0.5)
    with pytest.raises(TypeError, match="LeakyReLU: unexpected keyword"):
        nd.LeakyReLU(nd.ones((2,)), alpha=0.5)
