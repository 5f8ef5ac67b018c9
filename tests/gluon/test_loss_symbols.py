"""gluon.loss on Symbols of unknown shape (MXNet 1.x's ``loss(sym.var('pred'),
sym.var('label'))``): every loss composes with ``F = core.sym`` operators only, the
Symbol's shapes are inferred when it is bound, and its values and gradients equal the
imperative loss'."""
import numpy
import pytest

from core import autograd, nd, sym
from core.context import cpu
from core.symbol.json_io import graph_to_json
from gluon import loss as gloss

RNG = numpy.random.default_rng(3)


def _f(shape, low=-1.0, high=1.0):
    return RNG.uniform(low, high, shape).astype("float32")


def _cases():
    """(loss, [input arrays]) pairs covering every loss and its options."""
    p, lab = _f((4, 5)), _f((4, 5))
    sparse = RNG.integers(0, 5, (4,)).astype("float32")
    sw = _f((4, 1), 0.1, 1.0)
    prob = _f((4, 5), 0.05, 0.95)
    signs = numpy.sign(_f((4, 5)))
    signs[signs == 0] = 1
    return [
        (gloss.L2Loss(), [p, lab]),
        (gloss.L2Loss(weight=0.5), [p, lab.reshape(20), sw]),
        (gloss.L1Loss(batch_axis=1), [p, lab]),
        (gloss.HuberLoss(rho=0.3), [p, lab, sw]),
        (gloss.HingeLoss(), [p, signs]),
        (gloss.SquaredHingeLoss(margin=0.5), [p, signs, sw]),
        (gloss.LogisticLoss(), [p, signs]),
        (gloss.LogisticLoss(label_format="binary"), [p, (signs > 0).astype("float32")]),
        (gloss.SigmoidBCELoss(), [p, prob]),
        (gloss.SigmoidBCELoss(), [p, prob, sw, _f((1, 5), 0.5, 2.0)]),
        (gloss.SigmoidBCELoss(from_sigmoid=True), [prob, prob[::-1].copy()]),
        (gloss.SigmoidBCELoss(from_sigmoid=True), [prob, prob, None, _f((1, 5), 0.5, 2.0)]),
        (gloss.SoftmaxCELoss(), [p, sparse]),
        (gloss.SoftmaxCELoss(), [p, sparse, sw]),
        (gloss.SoftmaxCELoss(sparse_label=False, weight=2.0), [p, prob]),
        (gloss.SoftmaxCELoss(axis=0, batch_axis=1), [p, RNG.integers(0, 4, (5,))
                                                      .astype("float32")]),
        (gloss.SoftmaxCELoss(from_logits=True), [p, sparse]),
        (gloss.KLDivLoss(from_logits=False), [p, prob]),
        (gloss.TripletLoss(), [p, lab, _f((4, 5))]),
        (gloss.PoissonNLLLoss(), [p, prob]),
        (gloss.PoissonNLLLoss(from_logits=False, compute_full=True),
         [prob, _f((4, 5), 0.0, 3.0)]),
        (gloss.CosineEmbeddingLoss(margin=0.1), [p, lab, numpy.array([1, -1, 1, -1],
                                                                     "float32")]),
        (gloss.CTCLoss(), [_f((2, 6, 4)), numpy.array([[1, 0, -1], [2, 1, 1]], "float32")]),
        (gloss.CTCLoss(layout="TNC", label_layout="TN"),
         [_f((6, 2, 4)), numpy.array([[1, 2], [0, 1], [-1, 1]], "float32")]),
    ]


def _compose(loss, values):
    names = [f"in{i}" for i in range(len(values))]
    variables = [sym.var(n) if v is not None else None for n, v in zip(names, values)]
    out = loss(*variables)
    feed = {n: nd.array(v) for n, v in zip(names, values) if v is not None}
    return out, feed


@pytest.mark.parametrize("loss,values", _cases(), ids=lambda c: getattr(c, "name", ""))
def test_loss_on_shapeless_symbols_equals_the_imperative_loss(loss, values):
    out, feed = _compose(loss, values)
    want = loss(*[nd.array(v) if v is not None else None for v in values]).asnumpy()
    got = out.eval(**feed)[0].asnumpy()
    numpy.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6)
    _, out_shapes, _ = out.infer_shape(**{k: v.shape for k, v in feed.items()})
    assert tuple(out_shapes[0]) == want.shape


@pytest.mark.parametrize("loss,values", [c for c in _cases()
                                         if not isinstance(c[0], gloss.CTCLoss)][:14],
                         ids=lambda c: getattr(c, "name", ""))
def test_gradient_through_the_bound_symbol_equals_autograd(loss, values):
    out, feed = _compose(loss, values)
    ex = out.simple_bind(cpu(), grad_req={k: "write" if k == "in0" else "null" for k in feed},
                         **{k: v.shape for k, v in feed.items()})
    ex.forward(is_train=True, **feed)
    head = nd.ones(ex.outputs[0].shape)
    ex.backward(head)
    x = nd.array(values[0])
    x.attach_grad()
    with autograd.record():
        y = loss(x, *[nd.array(v) if v is not None else None for v in values[1:]])
    y.backward(head)
    numpy.testing.assert_allclose(ex.grad_dict["in0"].asnumpy(), x.grad.asnumpy(),
                                  rtol=1e-4, atol=1e-6)


def test_symbol_graphs_use_mxnet_operators_only():
    """The composed graphs export in MXNet 1.9's spelling (strict lowering)."""
    for loss, values in _cases():
        out, _ = _compose(loss, values)
        graph_to_json(out.graph, strict=True)


def test_size_mismatch_is_reported_when_the_symbol_is_bound():
    out = gloss.L2Loss()(sym.var("pred"), sym.var("label"))
    with pytest.raises(ValueError, match="reshape_like"):
        out.infer_shape(pred=(4, 5), label=(3,))


def test_loss_composes_with_a_network_and_a_module():
    """MXNet's test_loss.py pattern: a loss on a network's output, under make_loss."""
    from core import module

    data = sym.var("data")
    net = sym.FullyConnected(data, num_hidden=3, name="fc")
    out = sym.make_loss(gloss.SoftmaxCrossEntropyLoss()(net, sym.var("label")))
    assert out.list_arguments() == ["data", "fc_weight", "fc_bias", "label"]
    mod = module.Module(out, data_names=("data",), label_names=("label",))
    mod.bind(data_shapes=[("data", (4, 2))], label_shapes=[("label", (4,))])
    mod.init_params()
    arg, _, _ = out.infer_shape(data=(4, 2), label=(4,))
    assert arg[1] == (3, 2)
