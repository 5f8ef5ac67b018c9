"""gluon.contrib.cnn: deformable convolutions, checked against Convolution and real MXNet."""
import json
import os

import numpy as np
import pytest

from core import autograd, nd
from gluon.contrib.cnn import DeformableConvolution, ModulatedDeformableConvolution
from gluon.contrib.cnn.deformable import deformable_convolution
from tests.mxnet_ref import requires_mxnet, run_mxnet

# (kernel, stride, pad, dilate, num_group, num_deformable_group, modulated)
CASES = [((3, 3), 1, 1, 1, 1, 1, False), ((3, 2), 2, 0, 1, 1, 2, False),
         ((3, 3), 1, 2, 2, 2, 1, True), ((1, 1), 1, 0, 1, 1, 1, True),
         ((2, 2), 1, 0, 1, 1, 2, True)]


def _inputs(case, seed=0):
    (kh, kw), s, p, d, g, dg, mod = case
    rs = np.random.RandomState(seed)
    n, c, h, w, o = 2, 4, 7, 6, 6
    ho = (h + 2 * p - d * (kh - 1) - 1) // s + 1
    wo = (w + 2 * p - d * (kw - 1) - 1) // s + 1
    arrays = {"x": rs.randn(n, c, h, w), "off": rs.randn(n, 2 * dg * kh * kw, ho, wo) * 1.5,
              "wt": rs.randn(o, c // g, kh, kw), "b": rs.randn(o)}
    if mod:
        arrays["m"] = rs.uniform(0, 2, (n, dg * kh * kw, ho, wo))
    attrs = {"kernel": (kh, kw), "stride": (s, s), "pad": (p, p), "dilate": (d, d),
             "num_group": g, "num_deformable_group": dg}
    return {k: v.astype("float32") for k, v in arrays.items()}, attrs, o


def _ours(arrays, attrs):
    xs = {k: nd.array(v) for k, v in arrays.items()}
    for v in xs.values():
        v.attach_grad()
    with autograd.record():
        y = deformable_convolution(nd, xs["x"], xs["off"], xs["wt"], xs["b"], xs.get("m"),
                                   **attrs)
        (y * y).sum().backward()
    return y.asnumpy(), {k: v.grad.asnumpy() for k, v in xs.items()}


def test_zero_offsets_are_a_convolution():
    arrays, attrs, o = _inputs(CASES[0])
    arrays["off"][:] = 0
    y, _ = _ours(arrays, attrs)
    want = nd.Convolution(nd.array(arrays["x"]), nd.array(arrays["wt"]), nd.array(arrays["b"]),
                          kernel=attrs["kernel"], pad=attrs["pad"], num_filter=o)
    np.testing.assert_allclose(y, want.asnumpy(), rtol=1e-4, atol=1e-4)


_MX = """
import json, os, numpy as np, mxnet as mx
d = {d!r}
z = dict(np.load(os.path.join(d, "in.npz")))
attrs = json.load(open(os.path.join(d, "attrs.json")))
attrs = {{k: tuple(v) if isinstance(v, list) else v for k, v in attrs.items()}}
xs = {{k: mx.nd.array(v) for k, v in z.items()}}
if "m" in xs:  # MXNet 1.9.1's modulated backward is GPU-only: forward here
    y = mx.nd.contrib.ModulatedDeformableConvolution(xs["x"], xs["off"], xs["m"], xs["wt"],
                                                     xs["b"], **attrs)
    grads = {{}}
else:
    for v in xs.values():
        v.attach_grad()
    with mx.autograd.record():
        y = mx.nd.contrib.DeformableConvolution(xs["x"], xs["off"], xs["wt"], xs["b"], **attrs)
        (y * y).sum().backward()
    grads = {{"g_" + k: v.grad.asnumpy() for k, v in xs.items()}}
np.savez(os.path.join(d, "out.npz"), y=y.asnumpy(), **grads)
print("ok")
"""


@requires_mxnet
@pytest.mark.parametrize("case", CASES)
def test_matches_real_mxnet_forward_and_gradients(case, tmp_path):
    arrays, attrs, o = _inputs(case)
    y, grads = _ours(arrays, attrs)
    np.savez(tmp_path / "in.npz", **arrays)
    (tmp_path / "attrs.json").write_text(json.dumps(dict(attrs, num_filter=o)))
    run_mxnet(_MX.format(d=os.fspath(tmp_path)))
    z = np.load(tmp_path / "out.npz")
    np.testing.assert_allclose(y, z["y"], rtol=1e-4, atol=1e-4)
    if "m" in arrays:
        return
    for k in ("x", "wt", "b"):
        np.testing.assert_allclose(grads[k], z["g_" + k], rtol=1e-3, atol=1e-3, err_msg=k)
    # offsets: equal away from the integer grid lines where the interpolation has kinks
    assert np.median(np.abs(grads["off"] - z["g_off"])) < 1e-3


@pytest.mark.parametrize("cls", [DeformableConvolution, ModulatedDeformableConvolution])
def test_layers_shapes_params_and_hybridize(cls):
    layer = cls(5, kernel_size=(3, 2), strides=1, padding=1, num_deformable_group=2,
                activation="relu", offset_use_bias=False)
    layer.initialize()
    x = nd.array(np.random.RandomState(1).randn(2, 4, 8, 9).astype("float32"))
    y = layer(x)
    assert y.shape == (2, 5, 8, 10) and (y.asnumpy() >= 0).all()
    per_point = 3 if cls is ModulatedDeformableConvolution else 2
    assert layer.offset_weight.shape == (per_point * 6 * 2, 4, 3, 2)
    assert layer.deformable_conv_weight.shape == (5, 4, 3, 2) and layer.offset_bias is None
    layer.hybridize()
    np.testing.assert_allclose(layer(x).asnumpy(), y.asnumpy(), rtol=1e-5, atol=1e-5)


def test_layer_errors():
    with pytest.raises(ValueError, match="only layout 'NCHW'"):
        DeformableConvolution(2, layout="NHWC")
    with pytest.raises(ValueError, match="kernel_size must be"):
        DeformableConvolution(2, kernel_size=(1, 2, 3))
    with pytest.raises(ValueError, match="offset must have shape"):
        deformable_convolution(nd, nd.ones((1, 2, 4, 4)), nd.ones((1, 3, 4, 4)),
                               nd.ones((2, 2, 1, 1)), kernel=(1, 1), stride=(1, 1), pad=(0, 0),
                               dilate=(1, 1))
