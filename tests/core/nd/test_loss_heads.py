"""MXNet 1.x's symbolic loss heads from ``nd`` (autograd) and ``sym`` (simple_bind).

SoftmaxOutput, LinearRegressionOutput, LogisticRegressionOutput, MAERegressionOutput,
MakeLoss and BlockGrad, compared with their gradient rules and with real MXNet 1.9.1.
"""
import json

import numpy as np
import pytest

from core import autograd, nd, sym
from tests.mxnet_ref import requires_mxnet, run_mxnet

RNG = np.random.default_rng(3)
X = RNG.uniform(-2, 2, size=(4, 3))
LAB = RNG.uniform(-2, 2, size=(4, 3))


def _reg_rule(out, label, kind, grad_scale=1.0):
    diff = out - label.reshape(out.shape)
    if kind == "mae":
        diff = np.where(diff > 0, 1.0, -1.0)
    return diff * float(np.float32(grad_scale) / np.float32(label.size // label.shape[0]))


@pytest.mark.parametrize("name,kind", [("LinearRegressionOutput", "linear"),
                                       ("LogisticRegressionOutput", "logistic"),
                                       ("MAERegressionOutput", "mae")])
def test_regression_heads_ignore_the_head_gradient(name, kind):
    x = nd.array(X, dtype="float64")
    x.attach_grad()
    with autograd.record():
        y = getattr(nd, name)(x, nd.array(LAB, dtype="float64"), grad_scale=2.0)
    y.backward(nd.array(RNG.uniform(-3, 3, size=X.shape)))
    np.testing.assert_allclose(x.grad.asnumpy(), _reg_rule(y.asnumpy(), LAB, kind, 2.0),
                               rtol=1e-12)


def test_make_loss_normalizations():
    data = np.array([[1.0, -2.0, 0.5], [3.0, 0.1, -1.0]])
    for kw, want in [({}, 1.0), ({"grad_scale": 3.0, "normalization": "batch"}, 1.5),
                     ({"normalization": "valid", "valid_thresh": 0.2}, 1 / 3)]:
        x = nd.array(data, dtype="float64")
        x.attach_grad()
        with autograd.record():
            y = nd.MakeLoss(x, **kw)
        y.backward(nd.ones_like(x) * 7)
        np.testing.assert_allclose(x.grad.asnumpy(), np.full(data.shape, want), err_msg=kw)
    assert nd.make_loss(nd.ones(2)).asnumpy().tolist() == [1.0, 1.0]


def test_second_order_is_refused():
    x = nd.array(X)
    x.attach_grad()
    with autograd.record():
        y = nd.LinearRegressionOutput(x, nd.array(LAB))
        (g,) = autograd.grad(y, [x], create_graph=True)
    with pytest.raises(NotImplementedError, match="cannot be differentiated again"):
        g.backward()


def test_regression_label_shape_errors_name_the_operator():
    with pytest.raises(ValueError, match=r"LinearRegressionOutput: label must have data's "
                                         r"batch size 4 and size 12"):
        nd.LinearRegressionOutput(nd.ones((4, 3)), nd.ones((4, 2)))
    with pytest.raises(ValueError, match="MakeLoss: normalization must be"):
        nd.MakeLoss(nd.ones(2), normalization="mean")


def _bind_train(out, shapes, values):
    ex = out.simple_bind(ctx=nd.cpu(), **shapes)
    for k, v in values.items():
        ex.arg_dict[k][:] = v
    ex.forward(is_train=True)
    ex.backward()
    return ex


@pytest.mark.parametrize("head", ["LinearRegressionOutput", "LogisticRegressionOutput",
                                  "MAERegressionOutput"])
def test_regression_heads_in_a_symbol_graph(head):
    data = sym.var("data")
    fc = sym.FullyConnected(data, num_hidden=1, name="fc")
    out = getattr(sym, head)(fc, name="reg")
    assert out.list_arguments() == ["data", "fc_weight", "fc_bias", "reg_label"]
    arg_shapes, out_shapes, _ = out.infer_shape(data=(5, 3))
    assert arg_shapes[-1] == (5,) and out_shapes == [(5, 1)]  # MXNet's (N,) label for (N, 1)
    w = RNG.uniform(-1, 1, size=(1, 3))
    x = RNG.uniform(-1, 1, size=(5, 3))
    lab = RNG.uniform(-1, 1, size=(5,))
    ex = _bind_train(out, {"data": (5, 3)}, {"data": x, "fc_weight": w, "fc_bias": 0,
                                              "reg_label": lab})
    kind = {"LinearRegressionOutput": "linear", "LogisticRegressionOutput": "logistic",
            "MAERegressionOutput": "mae"}[head]
    g = _reg_rule(ex.outputs[0].asnumpy().astype(np.float64), lab, kind)
    np.testing.assert_allclose(ex.grad_dict["fc_weight"].asnumpy(), g.T @ x, rtol=1e-5,
                               atol=1e-6)
    assert ex.grad_dict["reg_label"].asnumpy().tolist() == [0.0] * 5


def test_softmax_output_and_block_grad_in_a_symbol_graph():
    data = sym.var("data")
    fc = sym.FullyConnected(data, num_hidden=3, name="fc")
    out = sym.Group([sym.SoftmaxOutput(fc, name="softmax", normalization="batch"),
                     sym.BlockGrad(fc * 2, name="side")])
    x = RNG.uniform(-1, 1, size=(4, 5))
    w = RNG.uniform(-1, 1, size=(3, 5))
    lab = np.array([0, 2, 1, 2])
    ex = _bind_train(out, {"data": (4, 5)}, {"data": x, "fc_weight": w, "fc_bias": 0,
                                              "softmax_label": lab})
    p = ex.outputs[0].asnumpy().astype(np.float64)
    g = (p - np.eye(3)[lab]) / 4
    np.testing.assert_allclose(ex.grad_dict["fc_weight"].asnumpy(), g.T @ x, rtol=1e-5,
                               atol=1e-6)


def test_make_loss_in_a_symbol_graph_and_json():
    data = sym.var("data")
    loss = sym.MakeLoss(sym.square(data), grad_scale=0.5, name="loss")
    ex = _bind_train(loss, {"data": (2, 3)}, {"data": 1.0})
    assert ex.grad_dict["data"].asnumpy().tolist() == [[1.0] * 3] * 2  # 0.5 * 2x
    node = next(n for n in json.loads(loss.tojson())["nodes"] if n["name"] == "loss")
    assert node["op"] == "MakeLoss" and node["attrs"]["grad_scale"] == "0.5"


_MX_HEADS = """
import mxnet as mx, numpy as np, json
x = np.array(json.loads('{x}')); lab = np.array(json.loads('{lab}'))
out = {{}}
for name in ['LinearRegressionOutput', 'LogisticRegressionOutput', 'MAERegressionOutput']:
    d = mx.nd.array(x, dtype='float64'); d.attach_grad()
    with mx.autograd.record():
        y = getattr(mx.nd, name)(d, mx.nd.array(lab, dtype='float64'), grad_scale=2.0)
    y.backward(mx.nd.ones_like(y) * 5)
    out[name] = [y.asnumpy().tolist(), d.grad.asnumpy().tolist()]
for kw in [dict(), dict(normalization='batch', grad_scale=3.0),
           dict(normalization='valid', valid_thresh=0.2)]:
    d = mx.nd.array(x, dtype='float64'); d.attach_grad()
    with mx.autograd.record():
        y = mx.nd.MakeLoss(d, **kw)
    y.backward()
    out['MakeLoss' + json.dumps(kw, sort_keys=True)] = [y.asnumpy().tolist(),
                                                         d.grad.asnumpy().tolist()]
print(json.dumps(out))
"""


@requires_mxnet
def test_loss_heads_match_real_mxnet():
    x = np.round(X, 3)
    lab = np.round(LAB, 3)
    lab[0, 0] = x[0, 0]  # a tie: MAE's gradient is -1 there
    ref = json.loads(run_mxnet(_MX_HEADS.format(x=json.dumps(x.tolist()),
                                                lab=json.dumps(lab.tolist()))))
    for name in ["LinearRegressionOutput", "LogisticRegressionOutput", "MAERegressionOutput"]:
        d = nd.array(x, dtype="float64")
        d.attach_grad()
        with autograd.record():
            y = getattr(nd, name)(d, nd.array(lab, dtype="float64"), grad_scale=2.0)
        y.backward(nd.ones_like(y) * 5)
        np.testing.assert_allclose(y.asnumpy(), ref[name][0], rtol=1e-12, err_msg=name)
        np.testing.assert_allclose(d.grad.asnumpy(), ref[name][1], rtol=1e-12, err_msg=name)
    for kw in [{}, {"normalization": "batch", "grad_scale": 3.0},
               {"normalization": "valid", "valid_thresh": 0.2}]:
        d = nd.array(x, dtype="float64")
        d.attach_grad()
        with autograd.record():
            y = nd.MakeLoss(d, **kw)
        y.backward()
        want = ref["MakeLoss" + json.dumps(kw, sort_keys=True)]
        np.testing.assert_allclose(d.grad.asnumpy(), want[1], rtol=1e-12, err_msg=str(kw))


_MX_SO = """
import mxnet as mx, numpy as np, json
rng = np.random.RandomState(0)
out = {}
for multi in (False, True):
    for preserve in (False, True):
        if multi and preserve:
            continue
        for use_ignore in (False, True):
            for norm in ('null', 'batch', 'valid'):
                shape = (4, 3, 2, 2) if multi else (4, 2, 3) if preserve else (4, 3)
                lshape = (4, 2, 2) if multi else (4, 2) if preserve else (4,)
                x = rng.uniform(-1, 1, shape).astype('float32')
                lab = rng.randint(0, 3, lshape).astype('float32')
                d = mx.nd.array(x); d.attach_grad()
                with mx.autograd.record():
                    y = mx.nd.SoftmaxOutput(d, mx.nd.array(lab), grad_scale=0.5,
                                            normalization=norm, multi_output=multi,
                                            preserve_shape=preserve, use_ignore=use_ignore,
                                            ignore_label=1)
                y.backward()
                key = '%s-%s-%s-%s' % (multi, preserve, use_ignore, norm)
                out[key] = [x.tolist(), lab.tolist(), d.grad.asnumpy().tolist()]
print(json.dumps(out))
"""


@requires_mxnet
def test_softmax_output_normalizations_match_real_mxnet():
    ref = json.loads(run_mxnet(_MX_SO))
    assert len(ref) == 18
    for key, (x, lab, want) in ref.items():
        multi, preserve, use_ignore, norm = key.split("-")
        d = nd.array(x)
        d.attach_grad()
        with autograd.record():
            y = nd.SoftmaxOutput(d, nd.array(lab), grad_scale=0.5, normalization=norm,
                                 multi_output=multi == "True", preserve_shape=preserve == "True",
                                 use_ignore=use_ignore == "True", ignore_label=1)
        y.backward()
        np.testing.assert_allclose(d.grad.asnumpy(), np.array(want), rtol=1e-5, atol=1e-7,
                                   err_msg=key)
