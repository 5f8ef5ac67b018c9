"""gluon.loss: every loss against a plain NumPy reference (shapes, weight, sample_weight,
batch_axis), gradients against finite differences, the fused softmax cross-entropy path,
CTCLoss against the operator, hybridize, and errors naming the loss and the shapes."""
import inspect

import numpy
import pytest

import gluon
from core import autograd, nd
from core.test_utils import assert_almost_equal, check_numeric_gradient
from gluon import loss as gloss

RNG = numpy.random.default_rng(0)


def arr(a, dtype="float32"):
    return nd.array(numpy.asarray(a, dtype=dtype), dtype=dtype)


def batch_mean(loss, batch_axis=0):
    axes = tuple(i for i in range(loss.ndim) if i != batch_axis)
    return loss.mean(axis=axes) if axes else loss


def weighted(loss, weight=None, sample_weight=None):
    if sample_weight is not None:
        loss = loss * sample_weight
    if weight is not None:
        loss = loss * weight
    return loss


def log_softmax(x, axis):
    m = x.max(axis=axis, keepdims=True)
    return x - m - numpy.log(numpy.exp(x - m).sum(axis=axis, keepdims=True))


def softplus(x):
    return numpy.log1p(numpy.exp(-numpy.abs(x))) + numpy.maximum(x, 0)


# ------------------------------------------------------------ elementwise losses
def _pm1(shape):
    return numpy.where(RNG.random(shape) < 0.5, -1.0, 1.0)


# name: (class, kwargs, reference(pred, label) -> elementwise loss, label maker)
ELEMENTWISE = {
    "l2": (gloss.L2Loss, {}, lambda p, z: 0.5 * (z - p) ** 2, RNG.standard_normal),
    "l1": (gloss.L1Loss, {}, lambda p, z: numpy.abs(z - p), RNG.standard_normal),
    "huber": (gloss.HuberLoss, {}, lambda p, z: numpy.where(
        numpy.abs(z - p) > 1, numpy.abs(z - p) - 0.5, 0.5 * (z - p) ** 2),
        lambda s: 2 * RNG.standard_normal(s)),
    "huber_rho": (gloss.HuberLoss, {"rho": 0.5}, lambda p, z: numpy.where(
        numpy.abs(z - p) > 0.5, numpy.abs(z - p) - 0.25, (z - p) ** 2),
        RNG.standard_normal),
    "hinge": (gloss.HingeLoss, {}, lambda p, z: numpy.maximum(0, 1 - p * z), _pm1),
    "hinge_margin": (gloss.HingeLoss, {"margin": 2.0},
                     lambda p, z: numpy.maximum(0, 2 - p * z), _pm1),
    "sq_hinge": (gloss.SquaredHingeLoss, {}, lambda p, z: numpy.maximum(0, 1 - p * z) ** 2,
                 _pm1),
    "logistic": (gloss.LogisticLoss, {}, lambda p, z: numpy.log1p(numpy.exp(-p * z)), _pm1),
    "logistic_bin": (gloss.LogisticLoss, {"label_format": "binary"},
                     lambda p, z: numpy.log1p(numpy.exp(-p * (2 * z - 1))),
                     lambda s: (RNG.random(s) < 0.5).astype(float)),
    "bce": (gloss.SigmoidBinaryCrossEntropyLoss, {},
            lambda p, z: -(z * numpy.log(1 / (1 + numpy.exp(-p)))
                           + (1 - z) * numpy.log(1 - 1 / (1 + numpy.exp(-p)))),
            RNG.random),
    "kl_logits": (gloss.KLDivLoss, {}, lambda p, z: z * (numpy.log(z + 1e-12) - p),
                  RNG.random),
}


@pytest.mark.parametrize("name", sorted(ELEMENTWISE))
@pytest.mark.parametrize("shape", [(5,), (3, 4), (2, 3, 4)])
@pytest.mark.parametrize("weighting", ["none", "weight", "sample", "both"])
def test_elementwise_losses_match_numpy(name, shape, weighting):
    cls, kwargs, ref, make_label = ELEMENTWISE[name]
    pred = RNG.standard_normal(shape)
    label = make_label(shape)
    kwargs = dict(kwargs)
    weight = None
    if weighting in ("weight", "both"):
        kwargs["weight"] = weight = 0.7
    sw = RNG.random(shape[:1] + (1,) * (len(shape) - 1)) if weighting in ("sample", "both") \
        else None
    loss = cls(**kwargs)
    out = loss(arr(pred), arr(label), None if sw is None else arr(sw))
    want = weighted(ref(pred, label), weight, sw)
    reduce = numpy.sum if cls is gloss.KLDivLoss else numpy.mean
    want = reduce(want.reshape(shape[0], -1), axis=1)
    assert out.shape == (shape[0],)
    assert_almost_equal(out, want, rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("name", sorted(set(ELEMENTWISE) - {"kl_logits"}))  # KL: no reshape
def test_elementwise_losses_label_reshaped_and_batch_axis(name):
    cls, kwargs, ref, make_label = ELEMENTWISE[name]
    pred = RNG.standard_normal((3, 4, 2))
    label = make_label((3, 4, 2))
    # the label only needs pred's number of elements; batch_axis=1 keeps axis 1
    out = cls(batch_axis=1, **kwargs)(arr(pred), arr(label.reshape(12, 2)))
    el = ref(pred, label)
    assert out.shape == (4,)
    assert_almost_equal(out, el.mean(axis=(0, 2)), rtol=1e-5, atol=1e-6)


def test_full_shape_sample_weight_and_weight_none():
    pred, label = RNG.standard_normal((4, 3)), RNG.standard_normal((4, 3))
    sw = RNG.random((4, 3))
    out = gloss.L1Loss()(arr(pred), arr(label), sample_weight=arr(sw))
    assert_almost_equal(out, (numpy.abs(label - pred) * sw).mean(axis=1), rtol=1e-5)
    # MXNet crashes on L2Loss(weight=None); here it counts as 1
    out = gloss.L2Loss(weight=None)(arr(pred), arr(label))
    assert_almost_equal(out, (0.5 * (label - pred) ** 2).mean(axis=1), rtol=1e-5)


# ------------------------------------------------------------ sigmoid BCE
@pytest.mark.parametrize("from_sigmoid", [False, True])
@pytest.mark.parametrize("with_pos_weight", [False, True])
def test_sigmoid_bce(from_sigmoid, with_pos_weight):
    logits = RNG.standard_normal((6, 4)) * 3
    z = (RNG.random((6, 4)) < 0.5).astype(float)
    pw = RNG.random((1, 4)) * 3 if with_pos_weight else None
    p = 1 / (1 + numpy.exp(-logits))
    eps = 1e-12
    w = 1 if pw is None else pw
    if from_sigmoid:
        want = -(numpy.log(p + eps) * z * w + numpy.log(1 - p + eps) * (1 - z))
    else:
        want = -(numpy.log(p) * z * w + numpy.log(1 - p) * (1 - z))
    sw = RNG.random((6, 1))
    loss = gloss.SigmoidBCELoss(from_sigmoid=from_sigmoid, weight=0.5)
    x = p if from_sigmoid else logits
    out = loss(arr(x, "float64"), arr(z, "float64"), arr(sw, "float64"),
               None if pw is None else arr(pw, "float64"))
    assert_almost_equal(out, (want * sw * 0.5).mean(axis=1), rtol=1e-9, atol=1e-12)


def test_sigmoid_bce_large_logits_are_finite():
    out = gloss.SigmoidBCELoss()(arr([[1000.0, -1000.0]]), arr([[0.0, 1.0]]))
    assert_almost_equal(out, [1000.0])


# ------------------------------------------------------------ softmax cross-entropy
@pytest.mark.parametrize("shape,axis", [((5, 4), -1), ((5, 4), 1), ((3, 4, 2), 1),
                                        ((3, 2, 4), -1), ((2, 3, 4, 5), 2)])
@pytest.mark.parametrize("sparse_label", [True, False])
@pytest.mark.parametrize("from_logits", [False, True])
def test_softmax_ce_matches_numpy(shape, axis, sparse_label, from_logits):
    ax = axis % len(shape)
    classes = shape[ax]
    x = RNG.standard_normal(shape) * 2
    if from_logits:
        x = log_softmax(x, ax)
    logp = x if from_logits else log_softmax(x, ax)
    if sparse_label:
        label = RNG.integers(0, classes, shape[:ax] + shape[ax + 1:])
        el = -numpy.take_along_axis(logp, numpy.expand_dims(label, ax), axis=ax)
    else:
        label = RNG.random(shape)
        label /= label.sum(axis=ax, keepdims=True)
        el = -(logp * label).sum(axis=ax, keepdims=True)
    sw_shape = list(el.shape)
    sw_shape[1:] = [1] * (len(sw_shape) - 1)
    sw = RNG.random(sw_shape)
    loss = gloss.SoftmaxCrossEntropyLoss(axis=axis, sparse_label=sparse_label,
                                         from_logits=from_logits, weight=2.0)
    out = loss(arr(x), arr(label), arr(sw))
    want = (el * sw * 2.0).reshape(shape[0], -1).mean(axis=1)
    assert out.shape == (shape[0],)
    assert_almost_equal(out, want, rtol=1e-5, atol=1e-6)


def test_softmax_ce_sparse_uses_fused_operator(monkeypatch):
    calls = []
    fused = nd.softmax_cross_entropy_with_logits

    def spy(*args, **kwargs):
        calls.append(kwargs)
        return fused(*args, **kwargs)

    monkeypatch.setattr(nd, "softmax_cross_entropy_with_logits", spy)
    gloss.SoftmaxCrossEntropyLoss()(nd.zeros((2, 3)), nd.array([0, 2]))
    assert calls and calls[0]["sparse"] is True


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_softmax_ce_fused_is_identical_to_log_softmax_pick(dtype):
    x = arr(RNG.standard_normal((16, 10)) * 4, dtype)
    label = nd.array(RNG.integers(0, 10, (16,)))
    fused = gloss.SoftmaxCrossEntropyLoss()(x, label)
    composite = -nd.pick(nd.log_softmax(x, axis=-1), label, axis=-1)
    tol = 1e-6 if dtype == "float32" else 1e-13
    assert_almost_equal(fused, composite, rtol=tol, atol=tol)
    # and the gradients
    grads = []
    for fn in (lambda v: gloss.SoftmaxCrossEntropyLoss()(v, label),
               lambda v: -nd.pick(nd.log_softmax(v, axis=-1), label, axis=-1)):
        x.attach_grad()
        with autograd.record():
            y = fn(x)
        y.backward()
        grads.append(x.grad.asnumpy().copy())
    assert_almost_equal(grads[0], grads[1], rtol=tol, atol=tol)


@pytest.mark.parametrize("sparse_label", [True, False])
def test_softmax_ce_without_sample_weight_equals_unit_sample_weight(sparse_label):
    x = arr(RNG.standard_normal((5, 4)))
    label = nd.array([0, 3, 1, 2, 2]) if sparse_label else arr(RNG.random((5, 4)))
    for axis, batch_axis in ((-1, 0), (0, 1)):
        if sparse_label and axis == 0:
            label = nd.array([0, 3, 1, 2])
        loss = gloss.SoftmaxCELoss(axis=axis, sparse_label=sparse_label, weight=2.0,
                                   batch_axis=batch_axis)
        shape = (5, 1) if axis == -1 else (1, 4)
        numpy.testing.assert_array_equal(loss(x, label).asnumpy(),
                                         loss(x, label, nd.ones(shape)).asnumpy())


def test_softmax_ce_label_with_kept_axis_and_float_labels():
    x = RNG.standard_normal((4, 3))
    label = numpy.array([0, 2, 1, 1])
    want = gloss.SoftmaxCELoss()(arr(x), nd.array(label.astype("int64"), dtype="int64"))
    for lab in (arr(label.reshape(4, 1)), arr(label)):
        assert_almost_equal(gloss.SoftmaxCELoss()(arr(x), lab), want)
        assert_almost_equal(gloss.SoftmaxCELoss(from_logits=True)(
            arr(log_softmax(x, 1)), lab), want, rtol=1e-5)


# ------------------------------------------------------------ KL, Poisson, triplet, cosine
def test_kl_div_not_from_logits():
    x, z = RNG.standard_normal((3, 5)), RNG.random((3, 5))
    z /= z.sum(axis=1, keepdims=True)
    out = gloss.KLDivLoss(from_logits=False)(arr(x), arr(z))
    want = (z * (numpy.log(z + 1e-12) - log_softmax(x, 1))).sum(axis=1)
    assert_almost_equal(out, want, rtol=1e-5, atol=1e-6)
    out = gloss.KLDivLoss(from_logits=False, axis=0)(arr(x), arr(z))
    want = (z * (numpy.log(z + 1e-12) - log_softmax(x, 0))).sum(axis=1)
    assert_almost_equal(out, want, rtol=1e-5, atol=1e-6)
    out = gloss.KLDivLoss(from_logits=False, axis=0, batch_axis=1)(arr(x), arr(z))
    assert_almost_equal(out, (z * (numpy.log(z + 1e-12) - log_softmax(x, 0))).sum(axis=0),
                        rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("from_logits", [True, False])
@pytest.mark.parametrize("compute_full", [False, True])
def test_poisson_nll(from_logits, compute_full):
    pred = RNG.random((4, 3)) * 3 + 0.1
    target = RNG.integers(0, 6, (4, 3)).astype(float)
    target[0, :3] = [0.0, 1.0, 2.0]
    sw = RNG.random((4, 1))
    if from_logits:
        el = numpy.exp(pred) - target * pred
    else:
        el = pred - target * numpy.log(pred + 1e-8)
    if compute_full:
        t = numpy.where(target > 1, target, 1.0)
        el = el + (t * numpy.log(t) - t + 0.5 * numpy.log(2 * t * numpy.pi)) * (target > 1)
    loss = gloss.PoissonNLLLoss(from_logits=from_logits, compute_full=compute_full,
                                weight=1.5)
    out = loss(arr(pred), arr(target.reshape(12)), arr(sw))
    assert out.shape == ()
    assert numpy.isfinite(out.asscalar())
    assert_almost_equal(out, numpy.array((el * sw * 1.5).mean()), rtol=1e-5)
    # no nan in the gradient w.r.t. the target either (target 0 with compute_full)
    t = arr(target)
    t.attach_grad()
    with autograd.record():
        y = loss(arr(pred), t)
    y.backward()
    assert numpy.isfinite(t.grad.asnumpy()).all()


@pytest.mark.parametrize("shape", [(4, 3), (3, 2, 5)])
@pytest.mark.parametrize("margin", [1, 0.3])
def test_triplet(shape, margin):
    pred, pos, neg = (RNG.standard_normal(shape) for _ in range(3))
    d = ((pos - pred) ** 2 - (neg - pred) ** 2).reshape(shape[0], -1).sum(axis=1)
    want = numpy.maximum(d + margin, 0)
    out = gloss.TripletLoss(margin=margin)(arr(pred), arr(pos), arr(neg))
    assert_almost_equal(out, want, rtol=1e-5, atol=1e-5)
    sw = RNG.random(shape[0])
    out = gloss.TripletLoss(margin=margin, weight=2.0)(arr(pred), arr(pos), arr(neg),
                                                      arr(sw))
    assert_almost_equal(out, want * sw * 2, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("margin", [0, 0.2])
def test_cosine_embedding(margin):
    x1, x2 = RNG.standard_normal((6, 4)), RNG.standard_normal((6, 4))
    label = numpy.array([1, -1, 1, -1, -1, 1.0])
    cos = (x1 * x2).sum(1) / numpy.maximum(
        numpy.linalg.norm(x1, axis=1) * numpy.linalg.norm(x2, axis=1), 1e-12)
    want = numpy.where(label == 1, 1 - cos, numpy.maximum(0, cos - margin))[:, None]
    sw = RNG.random((6, 1))
    out = gloss.CosineEmbeddingLoss(margin=margin, weight=0.5)(arr(x1), arr(x2), arr(label),
                                                               arr(sw))
    assert out.shape == (6, 1)
    assert_almost_equal(out, want * sw * 0.5, rtol=1e-5, atol=1e-6)


def test_sdml():
    x1, x2 = RNG.standard_normal((4, 3)), RNG.standard_normal((4, 3))
    dist = ((x1[:, None, :] - x2[None, :, :]) ** 2).sum(2)
    s = 0.3
    labels = numpy.eye(4) * (1 - s) + (1 - numpy.eye(4)) * s / 3
    want = (labels * (numpy.log(labels + 1e-12) - log_softmax(-dist, 1))).sum(1)
    assert_almost_equal(gloss.SDMLLoss()(arr(x1), arr(x2)), want, rtol=1e-5, atol=1e-6)
    assert_almost_equal(gloss.SDMLLoss(weight=2.0)(arr(x1), arr(x2)), 2 * want, rtol=1e-5,
                        atol=1e-6)
    with pytest.raises(ValueError, match=r"SDMLLoss.*at least 2"):
        gloss.SDMLLoss()(nd.ones((1, 3)), nd.ones((1, 3)))


# ------------------------------------------------------------ CTC
def _ctc_inputs(n=3, t=6, c=5, seed=1):
    rng = numpy.random.default_rng(seed)
    pred = rng.standard_normal((n, t, c))
    label = numpy.array([[1, 0, -1], [2, 2, 3], [3, -1, -1]], dtype=float)[:n]
    return pred, label


@pytest.mark.parametrize("layout", ["NTC", "TNC"])
@pytest.mark.parametrize("label_layout", ["NT", "TN"])
def test_ctc_matches_operator(layout, label_layout):
    pred, label = _ctc_inputs()
    want = nd.CTCLoss(arr(pred.transpose(1, 0, 2)), arr(label), blank_label="last")
    p = pred if layout == "NTC" else pred.transpose(1, 0, 2)
    lab = label if label_layout == "NT" else label.T
    loss = gloss.CTCLoss(layout=layout, label_layout=label_layout)
    assert loss._batch_axis == label_layout.find("N")
    assert_almost_equal(loss(arr(p), arr(lab)), want, rtol=1e-5)


def test_ctc_lengths_and_weights():
    pred, label = _ctc_inputs()
    plen, llen = numpy.array([6, 4, 5.0]), numpy.array([2, 1, 1.0])
    want = nd.CTCLoss(arr(pred.transpose(1, 0, 2)), arr(label), arr(plen), arr(llen),
                      use_data_lengths=True, use_label_lengths=True, blank_label="last")
    sw = numpy.array([1.0, 0.5, 2.0])
    out = gloss.CTCLoss(weight=3.0)(arr(pred), arr(label), arr(plen), arr(llen),
                                    sample_weight=arr(sw))
    assert_almost_equal(out, want.asnumpy() * sw * 3.0, rtol=1e-5)


def test_ctc_gradient():
    pred, label = _ctc_inputs(t=4)
    check_numeric_gradient(lambda p: gloss.CTCLoss()(p, arr(label, "float64")), [pred],
                           rtol=1e-4, atol=1e-6)


# ------------------------------------------------------------ gradients
def _grad_cases():
    p = RNG.standard_normal((3, 4))
    # keep away from the kinks: |label - pred| far from 0 and rho, pred * label from margin
    d = RNG.uniform(0.2, 0.8, (3, 4)) * _pm1((3, 4))
    far = RNG.uniform(1.3, 2.0, (3, 4)) * _pm1((3, 4))
    mix = numpy.where(RNG.random((3, 4)) < 0.5, d, far)
    signs = _pm1((3, 4))
    hinge_p = signs * numpy.where(RNG.random((3, 4)) < 0.5, 0.4, 1.6) + 0.05 * p
    sw = RNG.random((3, 1))
    probs = RNG.random((3, 4))
    probs /= probs.sum(1, keepdims=True)
    return [
        (gloss.L2Loss(weight=2.0), p, p + mix, sw),
        (gloss.L1Loss(), p, p + mix, sw),
        (gloss.HuberLoss(rho=1), p, p + mix, sw),
        (gloss.HingeLoss(), hinge_p, signs, sw),
        (gloss.SquaredHingeLoss(), hinge_p, signs, sw),
        (gloss.LogisticLoss(), p, signs, sw),
        (gloss.SigmoidBCELoss(), p * 3, (signs + 1) / 2, sw),
        (gloss.SigmoidBCELoss(from_sigmoid=True), 1 / (1 + numpy.exp(-p)), probs, sw),
        (gloss.SoftmaxCELoss(), p, nd.array([0, 3, 1]), sw),
        (gloss.SoftmaxCELoss(axis=0), p, nd.array([0, 2, 1, 1]), None),
        (gloss.SoftmaxCELoss(sparse_label=False), p, probs, sw),
        (gloss.SoftmaxCELoss(from_logits=True), p, nd.array([0, 3, 1]), sw),
        (gloss.KLDivLoss(from_logits=False), p, probs, sw),
        (gloss.KLDivLoss(), p, probs, None),
        (gloss.PoissonNLLLoss(), p, numpy.abs(p) * 2, sw),
        (gloss.PoissonNLLLoss(from_logits=False, compute_full=True), numpy.abs(p) + 0.5,
         numpy.round(numpy.abs(p) * 3), None),
    ]


@pytest.mark.parametrize("case", range(16))
def test_gradients_match_finite_differences(case):
    loss, pred, label, sw = _grad_cases()[case]

    def fn(p):
        lab = label if isinstance(label, nd.NDArray) else arr(label, "float64")
        return loss(p, lab, None if sw is None else arr(sw, "float64"))

    check_numeric_gradient(fn, [numpy.asarray(pred, dtype="float64")], rtol=1e-5, atol=1e-7)


def test_gradients_of_multi_input_losses():
    x1, x2, x3 = (RNG.standard_normal((3, 4)) for _ in range(3))
    check_numeric_gradient(lambda a, b, c: gloss.TripletLoss(margin=10)(a, b, c),
                           [x1, x2, x3], rtol=1e-5, atol=1e-7)
    label = arr([1, -1, -1], "float64")
    check_numeric_gradient(lambda a, b: gloss.CosineEmbeddingLoss(margin=-2)(a, b, label),
                           [x1, x2], rtol=1e-5, atol=1e-7)
    check_numeric_gradient(lambda a, b: gloss.SDMLLoss()(a, b), [x1, x2], rtol=1e-5,
                           atol=1e-7)


def test_dense_softmax_ce_gradient_wrt_label():
    p, z = RNG.standard_normal((3, 4)), RNG.random((3, 4))
    check_numeric_gradient(lambda a, b: gloss.SoftmaxCELoss(sparse_label=False)(a, b),
                           [p, z], rtol=1e-5, atol=1e-7)


# ------------------------------------------------------------ hybridize
@pytest.mark.parametrize("case", range(16))
def test_hybridize_gives_identical_results(case):
    loss, pred, label, sw = _grad_cases()[case]
    lab = label if isinstance(label, nd.NDArray) else arr(label)
    args = (arr(pred), lab, None if sw is None else arr(sw))
    eager = loss(*args).asnumpy()
    loss.hybridize()
    numpy.testing.assert_array_equal(loss(*args).asnumpy(), eager)
    loss.hybridize(active=False)


def test_hybridize_ctc_and_triplet():
    pred, label = _ctc_inputs()
    ctc = gloss.CTCLoss()
    eager = ctc(arr(pred), arr(label)).asnumpy()
    ctc.hybridize()
    numpy.testing.assert_array_equal(ctc(arr(pred), arr(label)).asnumpy(), eager)
    x = [arr(RNG.standard_normal((3, 4))) for _ in range(3)]
    trip = gloss.TripletLoss()
    eager = trip(*x).asnumpy()
    trip.hybridize()
    numpy.testing.assert_array_equal(trip(*x).asnumpy(), eager)


# ------------------------------------------------------------ errors and API
@pytest.mark.parametrize("cls", [gloss.L2Loss, gloss.L1Loss, gloss.HuberLoss, gloss.HingeLoss,
                                 gloss.SquaredHingeLoss, gloss.LogisticLoss,
                                 gloss.SigmoidBCELoss, gloss.PoissonNLLLoss])
def test_mismatched_label_names_loss_and_shapes(cls):
    with pytest.raises(ValueError, match=rf"{cls.__name__}: .*\(4, 5\).*\(4, 3\)") as e:
        cls()(nd.ones((4, 3)), nd.ones((4, 5)))
    assert "pred (4, 3) float32" in str(e.value) and "(4, 5) float32" in str(e.value)


def test_softmax_ce_errors():
    with pytest.raises(ValueError, match=r"SoftmaxCrossEntropyLoss: .*label must have shape "
                                         r"\(4,\).*got \(3,\)"):
        gloss.SoftmaxCrossEntropyLoss()(nd.ones((4, 3)), nd.ones((3,)))
    with pytest.raises(ValueError, match=r"SoftmaxCrossEntropyLoss: .*\(4, 2\).*\(4, 3\)"):
        gloss.SoftmaxCrossEntropyLoss(sparse_label=False)(nd.ones((4, 3)), nd.ones((4, 2)))
    with pytest.raises(ValueError, match=r"SoftmaxCrossEntropyLoss: axis 2 is out of range"):
        gloss.SoftmaxCrossEntropyLoss(axis=2)(nd.ones((4, 3)), nd.ones((4,)))
    with pytest.raises(ValueError, match=r"SoftmaxCrossEntropyLoss: .*label 3 is out of range"):
        gloss.SoftmaxCrossEntropyLoss()(nd.ones((2, 3)), nd.array([0, 3]))


def test_other_errors():
    with pytest.raises(ValueError, match=r"L2Loss: .*\(4, 3\).*\(3, 1\).*sample_weight"):
        gloss.L2Loss()(nd.ones((4, 3)), nd.ones((4, 3)), nd.ones((3, 1)))
    with pytest.raises(ValueError, match=r"CTCLoss: .*label.*pred \(2, 5, 4\)"):
        gloss.CTCLoss()(nd.zeros((2, 5, 4)), nd.zeros((3, 2)))
    with pytest.raises(ValueError, match="layout"):
        gloss.CTCLoss(layout="NCT")
    with pytest.raises(ValueError, match="label_layout|label"):
        gloss.CTCLoss(label_layout="NN")
    with pytest.raises(ValueError, match="label_format"):
        gloss.LogisticLoss(label_format="pm1")
    with pytest.raises(TypeError, match="weight must be a number"):
        gloss.L1Loss(weight=nd.ones((1,)))
    with pytest.raises(ValueError, match=r"TripletLoss: negative has shape \(4, 2\)"):
        gloss.TripletLoss()(nd.ones((4, 3)), nd.ones((4, 3)), nd.ones((4, 2)))


def test_signatures_match_mxnet():
    def defaults(cls):
        return {k: v.default for k, v in inspect.signature(cls.__init__).parameters.items()
                if v.default is not inspect.Parameter.empty}

    assert defaults(gloss.L2Loss) == {"weight": 1.0, "batch_axis": 0}
    assert defaults(gloss.SoftmaxCrossEntropyLoss) == {
        "axis": -1, "sparse_label": True, "from_logits": False, "weight": None,
        "batch_axis": 0}
    assert defaults(gloss.KLDivLoss) == {"from_logits": True, "axis": -1, "weight": None,
                                         "batch_axis": 0}
    assert defaults(gloss.CTCLoss) == {"layout": "NTC", "label_layout": "NT", "weight": None}
    assert defaults(gloss.PoissonNLLLoss) == {"weight": None, "from_logits": True,
                                              "batch_axis": 0, "compute_full": False}
    assert list(inspect.signature(gloss.LogisticLoss.__init__).parameters)[1:4] == [
        "weight", "batch_axis", "label_format"]
    assert gloss.SigmoidBCELoss is gloss.SigmoidBinaryCrossEntropyLoss
    assert gloss.SoftmaxCELoss is gloss.SoftmaxCrossEntropyLoss
    assert set(gloss.__all__) >= {"Loss", "CTCLoss", "SDMLLoss", "CosineEmbeddingLoss"}


def test_block_behaviour():
    assert gluon.loss.L2Loss is gloss.L2Loss
    loss = gloss.SoftmaxCrossEntropyLoss(weight=0.5)
    assert isinstance(loss, gluon.HybridBlock)
    assert repr(loss) == "SoftmaxCrossEntropyLoss(batch_axis=0, w=0.5)"
    assert len(loss.collect_params()) == 0
    sdml = gloss.SDMLLoss()
    assert isinstance(sdml.kl_loss, gloss.KLDivLoss)
    with pytest.raises(NotImplementedError):
        gloss.Loss(None, 0)(nd.ones((1,)))


def test_backward_through_weighted_loss():
    pred = arr(RNG.standard_normal((4, 3)))
    label = arr(RNG.standard_normal((4, 3)))
    sw = arr(RNG.random((4, 1)))
    pred.attach_grad()
    with autograd.record():
        out = gloss.L2Loss()(pred, label, sw)
    out.backward()
    want = (pred.asnumpy() - label.asnumpy()) * sw.asnumpy() / 3
    assert_almost_equal(pred.grad, want, rtol=1e-5, atol=1e-6)
