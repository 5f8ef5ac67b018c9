"""ONNX import of convolution, pooling, dense, normalization and recurrent layers, each
compared with onnxruntime (table-driven over attributes and opsets)."""
from __future__ import annotations

import numpy as np
import pytest

pytest.importorskip("onnx")
pytest.importorskip("onnxruntime")

from onnx import helper

from tests.core.onnx.test_import_ops import (
    check,
    make_model,
    one,
    rand,
    run_ort,
    run_reference,
)

X = rand(2, 4, 7, 8)

# (id, graph input, weight shape, bias?, attrs)
CONV = [
    ("plain", X, (6, 4, 3, 3), True, {}),
    ("no_bias_stride", X, (6, 4, 3, 3), False, {"strides": [2, 2]}),
    ("pads_sym", X, (6, 4, 3, 3), True, {"pads": [1, 1, 1, 1]}),
    ("pads_asym", X, (6, 4, 3, 2), True, {"pads": [0, 1, 2, 1], "strides": [2, 1]}),
    ("dilation", X, (6, 4, 3, 3), True, {"dilations": [2, 1], "pads": [2, 1, 2, 1]}),
    ("groups", X, (6, 2, 3, 3), True, {"group": 2}),
    ("depthwise", X, (8, 1, 3, 3), True, {"group": 4, "pads": [1, 1, 1, 1]}),
    ("same_upper", X, (6, 4, 4, 3), True, {"auto_pad": "SAME_UPPER", "strides": [2, 2]}),
    ("same_lower", X, (6, 4, 4, 4), True, {"auto_pad": "SAME_LOWER"}),
    ("valid", X, (6, 4, 3, 3), True, {"auto_pad": "VALID", "strides": [2, 3]}),
    ("conv1d", rand(2, 3, 9), (5, 3, 3), True, {"pads": [1, 2]}),
    ("conv3d", rand(1, 2, 4, 5, 5), (3, 2, 2, 3, 3), True, {"pads": [0, 1, 1, 0, 1, 1]}),
]


@pytest.mark.parametrize("case", CONV, ids=[c[0] for c in CONV])
def test_conv(case):
    _, x, wshape, bias, attrs = case
    inits = {"w": rand(*wshape)}
    if bias:
        inits["b"] = rand(wshape[0])
    check(one("Conv", {"x": x}, inits, 11, **attrs), {"x": x}, rtol=1e-4)


DECONV = [
    ("plain", (4, 3, 3, 3), True, {}),
    ("stride_pad", (4, 3, 3, 3), True, {"strides": [2, 2], "pads": [1, 1, 1, 1]}),
    ("output_padding", (4, 3, 3, 3), True, {"strides": [2, 2], "output_padding": [1, 0]}),
    ("asym_pads", (4, 3, 3, 2), True, {"strides": [2, 1], "pads": [1, 0, 0, 1]}),
    ("out_pad_over_pad", (4, 3, 3, 3), True, {"strides": [3, 2], "pads": [1, 0, 0, 0],
                                              "output_padding": [2, 1]}),
    ("groups_dilation", (4, 2, 2, 2), True, {"group": 2, "dilations": [2, 1]}),
    ("output_shape", (4, 3, 3, 3), True, {"strides": [2, 2], "output_shape": [14, 16]}),
    ("same_upper", (4, 3, 3, 3), False, {"strides": [2, 2], "auto_pad": "SAME_UPPER"}),
]


@pytest.mark.parametrize("case", DECONV, ids=[c[0] for c in DECONV])
def test_conv_transpose(case):
    _, wshape, bias, attrs = case
    x = X
    inits = {"w": rand(*wshape)}
    if bias:
        inits["b"] = rand(wshape[1] * attrs.get("group", 1))
    check(one("ConvTranspose", {"x": x}, inits, 11, **attrs), {"x": x}, rtol=1e-4)


POOL = [
    ("max", "MaxPool", {"kernel_shape": [2, 2]}),
    ("max_stride_pad", "MaxPool", {"kernel_shape": [3, 3], "strides": [2, 2],
                                   "pads": [1, 1, 1, 1]}),
    ("max_asym", "MaxPool", {"kernel_shape": [3, 2], "pads": [0, 1, 2, 0]}),
    ("max_ceil", "MaxPool", {"kernel_shape": [3, 3], "strides": [2, 2], "ceil_mode": 1}),
    ("max_ceil_pad", "MaxPool", {"kernel_shape": [2, 2], "strides": [2, 2], "ceil_mode": 1,
                                 "pads": [1, 1, 1, 1]}),
    ("max_same", "MaxPool", {"kernel_shape": [3, 3], "strides": [2, 2],
                             "auto_pad": "SAME_UPPER"}),
    ("avg", "AveragePool", {"kernel_shape": [2, 3]}),
    ("avg_pad_exclude", "AveragePool", {"kernel_shape": [3, 3], "pads": [1, 1, 1, 1]}),
    ("avg_pad_include", "AveragePool", {"kernel_shape": [3, 3], "pads": [1, 1, 1, 1],
                                        "count_include_pad": 1}),
    ("avg_asym_exclude", "AveragePool", {"kernel_shape": [3, 3], "pads": [0, 1, 2, 1]}),
    ("avg_asym_include", "AveragePool", {"kernel_shape": [3, 3], "pads": [0, 1, 2, 1],
                                         "count_include_pad": 1}),
    ("avg_ceil", "AveragePool", {"kernel_shape": [3, 3], "strides": [2, 2], "ceil_mode": 1}),
    ("avg_ceil_include", "AveragePool", {"kernel_shape": [3, 3], "strides": [2, 2],
                                         "ceil_mode": 1, "pads": [1, 1, 1, 1],
                                         "count_include_pad": 1}),
    ("avg_same_lower", "AveragePool", {"kernel_shape": [2, 2], "auto_pad": "SAME_LOWER"}),
]


@pytest.mark.parametrize("case", POOL, ids=[c[0] for c in POOL])
def test_pool(case):
    _, op, attrs = case
    check(one(op, {"x": X}, {}, 11, **attrs), {"x": X})


@pytest.mark.parametrize("op", ["GlobalAveragePool", "GlobalMaxPool"])
def test_global_pool(op):
    check(one(op, {"x": X}, {}, 13), {"x": X})
    x3 = rand(2, 3, 5)
    check(one(op, {"x": x3}, {}, 13), {"x": x3})


GEMM = [
    ("fc", (3, 5), (4, 5), (4,), {"transB": 1}),
    ("plain", (3, 5), (5, 4), (4,), {}),
    ("transA", (5, 3), (5, 4), (3, 4), {"transA": 1}),
    ("alpha_beta", (3, 5), (4, 5), (1, 4), {"transB": 1, "alpha": 0.5, "beta": 2.0}),
    ("no_c", (3, 5), (4, 5), None, {"transB": 1}),
    ("scalar_c", (3, 5), (5, 4), (), {"beta": 0.3}),
]


@pytest.mark.parametrize("case", GEMM, ids=[c[0] for c in GEMM])
def test_gemm(case):
    _, ashape, bshape, cshape, attrs = case
    a = rand(*ashape)
    inits = {"b": rand(*bshape)}
    if cshape is not None:
        inits["c"] = rand(*cshape)
    check(one("Gemm", {"a": a}, inits, 13, **attrs), {"a": a})


@pytest.mark.parametrize("ashape,bshape", [((3, 4), (4, 5)), ((2, 3, 4), (4, 5)),
                                           ((2, 3, 4), (2, 4, 5)), ((1, 3, 4), (2, 4, 2)),
                                           ((4,), (4, 3)), ((3, 4), (4,))])
def test_matmul(ashape, bshape):
    feeds = {"a": rand(*ashape), "b": rand(*bshape)}
    check(one("MatMul", feeds, {}, 13), feeds)


@pytest.mark.parametrize("opset", [7, 9, 15])
def test_batchnorm(opset):
    c = X.shape[1]
    inits = {"g": rand(c), "b": rand(c), "m": rand(c), "v": rand(c, low=0.5, high=2.0)}
    model = one("BatchNormalization", {"x": X}, inits, opset, epsilon=1e-3)
    check(model, {"x": X}, rtol=1e-4)


@pytest.mark.parametrize("axis,bias", [(-1, True), (2, True), (1, False)])
def test_layernorm(axis, bias):
    shape = X.shape[axis:]
    inits = {"g": rand(*shape), "b": rand(*shape)} if bias else {"g": rand(*shape)}
    check(one("LayerNormalization", {"x": X}, inits, 17, axis=axis, epsilon=1e-4), {"x": X},
          rtol=1e-4, atol=1e-4)


def test_instancenorm_lrn():
    c = X.shape[1]
    check(one("InstanceNormalization", {"x": X}, {"g": rand(c), "b": rand(c)}, 7, epsilon=1e-3),
          {"x": X}, rtol=1e-4, atol=1e-4)
    check(one("LRN", {"x": X}, {}, 13, size=3, alpha=1e-3, beta=0.6, bias=1.5), {"x": X})


# ------------------------------------------------------------------ recurrent layers
def _rnn_model(op, T=5, N=3, I=4, H=6, bidi=False, states=False, bias=True, layout=0,
               opset=14, reverse=False, lens=None, **attrs):
    D = 2 if bidi else 1
    G = {"LSTM": 4, "GRU": 3, "RNN": 1}[op]
    x = rand(N, T, I) if layout else rand(T, N, I)
    inits = {"W": rand(D, G * H, I), "R": rand(D, G * H, H)}
    names = ["x", "W", "R"]
    names.append("B" if bias else "")
    if bias:
        inits["B"] = rand(D, 2 * G * H)
    feeds = {"x": x}
    if lens is not None:
        names.append("lens")
        feeds["lens"] = np.array(lens, np.int32)
    if states:
        if lens is None:
            names.append("")  # sequence_lens
        sshape = (N, D, H) if layout else (D, N, H)
        feeds["h0"] = rand(*sshape)
        names.append("h0")
        if op == "LSTM":
            feeds["c0"] = rand(*sshape)
            names.append("c0")
    outs = ["y", "yh"] + (["yc"] if op == "LSTM" else [])
    if layout:
        attrs["layout"] = 1
    node = helper.make_node(op, names, outs, name=f"{op.lower()}0", hidden_size=H,
                            direction="bidirectional" if bidi else
                            "reverse" if reverse else "forward", **attrs)
    return make_model([node], feeds, outs, inits, opset), feeds


RNNS = [
    ("lstm", "LSTM", {}),
    ("lstm_bidi_states", "LSTM", {"bidi": True, "states": True}),
    ("lstm_no_bias", "LSTM", {"bias": False}),
    ("lstm_batch_first", "LSTM", {"bidi": True, "states": True, "layout": 1}),
    ("lstm_opset7", "LSTM", {"opset": 7}),
    ("lstm_reverse_states", "LSTM", {"reverse": True, "states": True}),
    ("gru_reverse", "GRU", {"reverse": True, "linear_before_reset": 1}),
    ("lstm_lengths", "LSTM", {"bidi": True, "states": True, "lens": [5, 2, 4]}),
    ("gru_lengths", "GRU", {"linear_before_reset": 1, "lens": [3, 5, 1]}),
    ("gru", "GRU", {"linear_before_reset": 1}),
    ("gru_bidi_states", "GRU", {"bidi": True, "states": True, "linear_before_reset": 1}),
    ("rnn_tanh", "RNN", {"bidi": True}),
    ("rnn_relu", "RNN", {"states": True, "activations": ["Relu"]}),
]


@pytest.mark.parametrize("case", RNNS, ids=[c[0] for c in RNNS])
def test_rnn(case):
    _, op, kw = case
    model, feeds = _rnn_model(op, **kw)
    # onnxruntime has no batch-first (layout=1) recurrent layers: onnx's reference there
    check(model, feeds, rtol=1e-4, atol=1e-5,
          reference=run_reference if kw.get("layout") else run_ort)


def test_gru_without_linear_before_reset_is_refused():
    from core.onnx import import_graph

    model, _ = _rnn_model("GRU")
    with pytest.raises(ValueError, match=r"gru0.*GRU.*linear_before_reset=0"):
        import_graph(model)


def test_rnn_names_of_params():
    from core.onnx import import_graph

    model, _ = _rnn_model("LSTM", bidi=True)
    _, args, aux = import_graph(model)
    assert sorted(args) == ["B", "R", "W"] and aux == {}
    assert np.array_equal(args["W"].asnumpy(), next(
        np.frombuffer(t.raw_data, np.float32).reshape(t.dims) for t in model.graph.initializer
        if t.name == "W"))


RESIZE = [
    ("upsample7", 7, {"mode": "nearest", "scales": [1.0, 1.0, 2.0, 3.0]}, None, None),
    ("upsample9", 9, {"mode": "nearest"}, [1, 1, 2, 2], None),
    ("resize10", 10, {"mode": "nearest"}, [1, 1, 3, 2], None),
    ("nearest_torch", 13, {"mode": "nearest", "coordinate_transformation_mode": "asymmetric",
                           "nearest_mode": "floor"}, [1, 1, 2, 2], None),
    ("nearest_half_pixel", 13, {"mode": "nearest"}, None, [2, 4, 14, 24]),
    ("linear_align", 13, {"mode": "linear", "coordinate_transformation_mode": "align_corners"},
     None, [2, 4, 11, 13]),
    ("linear_half_pixel", 13, {"mode": "linear"}, [1, 1, 2, 2], None),
    ("linear_half_pixel_down", 13, {"mode": "linear"}, None, [2, 4, 4, 5]),
    ("linear_pytorch", 13, {"mode": "linear",
                            "coordinate_transformation_mode": "pytorch_half_pixel"},
     None, [2, 4, 5, 12]),
]


@pytest.mark.parametrize("case", RESIZE, ids=[c[0] for c in RESIZE])
def test_resize(case):
    cid, opset, attrs, scales, sizes = case
    op = "Upsample" if cid.startswith("upsample") else "Resize"
    inits, order = {}, ["x"]
    if scales is not None:
        inits["scales"] = np.array(scales, np.float32)
    if opset >= 11:
        inits["roi"] = np.zeros(0, np.float32)
        if sizes is not None:
            inits["sizes"] = np.array(sizes, np.int64)
        order = ["x", "roi", "scales" if scales is not None else "", "sizes" if sizes else ""]
    elif scales is not None:
        order = ["x", "scales"]
    check(one(op, {"x": X}, inits, opset, order=order, **attrs), {"x": X}, rtol=1e-4,
          atol=1e-5)
