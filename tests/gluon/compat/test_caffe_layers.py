"""Each Caffe layer converted alone, run through gluon.SymbolBlock.imports, against the
NumPy implementation of Caffe's semantics (tests/gluon/compat/caffe_ref.py)."""
from __future__ import annotations

import os

import numpy as np
import pytest

pytest.importorskip("google.protobuf")

from core import nd
from gluon import SymbolBlock
from gluon.compat.caffe import convert_model
from tests.gluon.compat import caffe_ref
from tests.gluon.compat.caffe_nets import header, write_model


def _layer(type_, params="", bottom="data", top="out", name="l"):
    bottoms = " ".join(f'bottom: "{b}"' for b in bottom.split())
    tops = " ".join(f'top: "{t}"' for t in top.split())
    return f'layer {{ name: "{name}" type: "{type_}" {bottoms} {tops} {params} }}\n'


def _bn_stats(c, factor=2.0, seed=1):
    rng = np.random.default_rng(seed)
    return [rng.standard_normal(c) * factor, rng.uniform(0.05, 2.0, c) * factor,
            np.array([factor])]


# (id, input shape, layers text, blob shapes {layer: [shape or array]})
CASES = [
    ("conv", (2, 3, 7, 6), _layer("Convolution", "convolution_param { num_output: 4 "
                                  "kernel_size: 3 pad: 1 stride: 2 }"),
     {"l": [(4, 3, 3, 3), (4,)]}),
    ("conv_hw_group_dilation", (1, 4, 9, 8),
     _layer("Convolution", "convolution_param { num_output: 6 kernel_h: 3 kernel_w: 2 "
            "pad_h: 2 pad_w: 0 stride_h: 1 stride_w: 2 group: 2 dilation: 2 "
            "bias_term: false }"), {"l": [(6, 2, 3, 2)]}),
    ("conv_repeated", (1, 2, 8, 7), _layer("Convolution", "convolution_param { num_output: 3 "
                                           "kernel_size: 3 kernel_size: 2 pad: 1 pad: 0 "
                                           "stride: 2 stride: 1 }"),
     {"l": [(3, 2, 3, 2), (3,)]}),
    ("deconv", (2, 4, 5, 4), _layer("Deconvolution", "convolution_param { num_output: 6 "
                                    "kernel_size: 4 stride: 2 pad: 1 group: 2 }"),
     {"l": [(4, 3, 4, 4), (6,)]}),
    ("deconv_dilation", (1, 2, 4, 4), _layer("Deconvolution", "convolution_param { "
                                             "num_output: 3 kernel_size: 3 stride: 1 "
                                             "dilation: 2 bias_term: false }"),
     {"l": [(2, 3, 3, 3)]}),
    ("ip", (3, 2, 3, 2), _layer("InnerProduct", "inner_product_param { num_output: 5 }"),
     {"l": [(5, 12), (5,)]}),
    ("ip_transpose", (3, 6), _layer("InnerProduct", "inner_product_param { num_output: 4 "
                                    "transpose: true }"), {"l": [(6, 4), (4,)]}),
    ("ip_axis2", (2, 3, 2, 2), _layer("InnerProduct", "inner_product_param { num_output: 5 "
                                      "axis: 2 bias_term: false }"), {"l": [(5, 4)]}),
    ("pool_max_ceil_odd", (2, 3, 7, 7), _layer("Pooling", "pooling_param { pool: MAX "
                                               "kernel_size: 2 stride: 2 }"), {}),
    ("pool_ave_ceil_pad", (1, 2, 6, 5), _layer("Pooling", "pooling_param { pool: AVE "
                                               "kernel_size: 3 stride: 2 pad: 1 }"), {}),
    ("pool_clip", (1, 2, 5, 5), _layer("Pooling", "pooling_param { pool: MAX kernel_size: 2 "
                                       "stride: 2 pad: 1 }"), {}),
    ("pool_ave_clip_hw", (1, 2, 5, 6), _layer("Pooling", "pooling_param { pool: AVE "
                                              "kernel_h: 2 kernel_w: 3 stride_h: 2 "
                                              "stride_w: 3 pad_h: 1 pad_w: 1 }"), {}),
    ("pool_floor", (1, 2, 7, 7), _layer("Pooling", "pooling_param { pool: AVE kernel_size: 3 "
                                        "stride: 2 round_mode: FLOOR }"), {}),
    ("pool_global", (2, 3, 5, 4), _layer("Pooling", "pooling_param { pool: AVE "
                                         "global_pooling: true }"), {}),
    ("relu", (2, 3, 4), _layer("ReLU", bottom="data", top="data"), {}),
    ("leaky_relu", (2, 3, 4), _layer("ReLU", "relu_param { negative_slope: 0.1 }"), {}),
    ("prelu", (2, 3, 4, 4), _layer("PReLU"), {"l": [(3,)]}),
    ("prelu_shared", (2, 3, 4, 4), _layer("PReLU", "prelu_param { channel_shared: true }"),
     {"l": [(1,)]}),
    ("sigmoid", (2, 5), _layer("Sigmoid"), {}),
    ("tanh", (2, 5), _layer("TanH"), {}),
    ("lrn", (2, 7, 3, 3), _layer("LRN", "lrn_param { local_size: 5 alpha: 0.5 beta: 0.75 "
                                 "k: 2 }"), {}),
    ("lrn_within", (2, 2, 5, 4), _layer("LRN", "lrn_param { local_size: 3 alpha: 0.7 "
                                        "beta: 0.6 norm_region: WITHIN_CHANNEL }"), {}),
    ("dropout", (2, 5), _layer("Dropout", "dropout_param { dropout_ratio: 0.3 }"), {}),
    ("flatten", (2, 3, 2, 2), _layer("Flatten"), {}),
    ("flatten_axes", (2, 3, 2, 4), _layer("Flatten", "flatten_param { axis: 1 "
                                          "end_axis: 2 }"), {}),
    ("softmax", (2, 4, 3), _layer("Softmax"), {}),
    ("softmax_axis", (2, 4, 3), _layer("Softmax", "softmax_param { axis: -1 }"), {}),
    ("batchnorm", (2, 3, 4, 4), _layer("BatchNorm", "batch_norm_param { eps: 1e-6 }",
                                       top="data"), {"l": _bn_stats(3)}),
    ("batchnorm_zero_factor", (2, 3, 2), _layer("BatchNorm", top="data"),
     {"l": _bn_stats(3, factor=0.0)}),
    ("scale_bias", (2, 3, 4, 4), _layer("Scale", "scale_param { bias_term: true }"),
     {"l": [(3,), (3,)]}),
    ("scale_axes", (2, 3, 4, 5), _layer("Scale", "scale_param { axis: 2 num_axes: 2 }"),
     {"l": [(4, 5)]}),
]



# nets with two branches from one input: Concat and Eltwise
_BRANCHES = (_layer("Convolution", "convolution_param { num_output: 2 kernel_size: 1 }",
                    top="a", name="ca")
             + _layer("Convolution", "convolution_param { num_output: 2 kernel_size: 1 }",
                      top="b", name="cb"))
_BRANCH_W = {"ca": [(2, 3, 1, 1), (2,)], "cb": [(2, 3, 1, 1), (2,)]}
CASES += [
    ("concat", (2, 3, 3, 3), _BRANCHES + _layer("Concat", bottom="a b data"), _BRANCH_W),
    ("concat_axis", (2, 3, 3, 3), _BRANCHES + _layer("Concat", "concat_param { axis: 3 }",
                                                     bottom="a b"), _BRANCH_W),
    ("eltwise_sum_coeff", (2, 3, 3, 3),
     _BRANCHES + _layer("Eltwise", "eltwise_param { operation: SUM coeff: 0.5 coeff: -2 }",
                        bottom="a b"), _BRANCH_W),
    ("eltwise_prod", (2, 3, 3, 3), _BRANCHES + _layer("Eltwise", "eltwise_param { "
                                                      "operation: PROD }", bottom="a b a"),
     _BRANCH_W),
    ("eltwise_max", (2, 3, 3, 3), _BRANCHES + _layer("Eltwise", "eltwise_param { "
                                                     "operation: MAX }", bottom="a b"),
     _BRANCH_W),
    ("scale_two_bottoms", (2, 3, 3, 3), _BRANCHES + _layer("Scale", "scale_param { axis: 0 "
                                                           "bias_term: true }",
                                                           bottom="a b"),
     {**_BRANCH_W, "l": [(2, 2, 3, 3)]}),
    ("bias_blob", (2, 3, 4, 4), _layer("Bias"), {"l": [(3,)]}),
    ("bias_two_bottoms", (2, 3, 3, 3), _BRANCHES + _layer("Bias", "bias_param { axis: 0 }",
                                                          bottom="a b"), _BRANCH_W),
    ("elu", (2, 3, 4), _layer("ELU", "elu_param { alpha: 0.7 }"), {}),
    ("absval", (2, 5), _layer("AbsVal"), {}),
    ("bnll", (2, 5), _layer("BNLL"), {}),
    ("power", (2, 5), _layer("Power", "power_param { power: 2 scale: 0.5 shift: 3 }"), {}),
    ("power_identity", (2, 5), _layer("Power"), {}),
    ("reshape", (2, 3, 4, 2), _layer("Reshape", "reshape_param { shape { dim: 0 dim: -1 "
                                     "dim: 4 } }"), {}),
    ("reshape_axis", (2, 6, 4), _layer("Reshape", "reshape_param { shape { dim: 2 dim: 3 } "
                                       "axis: 1 num_axes: 1 }"), {}),
    ("reshape_append", (2, 6), _layer("Reshape", "reshape_param { shape { dim: 1 } "
                                      "axis: -1 num_axes: 0 }"), {}),
    ("crop", (2, 3, 7, 6), _layer("Pooling", "pooling_param { pool: MAX kernel_size: 2 "
                                  "stride: 2 }", top="small", name="p")
     + _layer("Crop", "crop_param { axis: 2 offset: 1 offset: 2 }", bottom="data small"), {}),
    ("slice_points", (2, 6, 2), _layer("Slice", "slice_param { axis: 1 slice_point: 1 "
                                       "slice_point: 4 }", top="s1 s2 s3", name="sl")
     + _layer("Concat", "concat_param { axis: 1 }", bottom="s3 s1 s2", name="l"), {}),
    ("slice_equal", (2, 3, 4), _layer("Slice", "slice_param { slice_dim: 2 }",
                                      top="s1 s2", name="sl")
     + _layer("Eltwise", "eltwise_param { operation: PROD }", bottom="s1 s2", name="l"),
     {}),
    ("split", (2, 3), _layer("Split", top="s1 s2", name="sp")
     + _layer("Eltwise", bottom="s1 s2", name="l"), {}),
]


def run_converted(prefix, x, input_name="data"):
    """Load ``prefix``'s files with SymbolBlock.imports and run ``x``."""
    block = SymbolBlock.imports(f"{prefix}-symbol.json", [input_name], f"{prefix}-0000.params")
    out = block(nd.array(x))
    return out.asnumpy() if not isinstance(out, (list, tuple)) else [o.asnumpy() for o in out]


@pytest.mark.parametrize("case_id,shape,body,shapes", CASES, ids=[c[0] for c in CASES])
def test_layer_matches_caffe(tmp_path, case_id, shape, body, shapes):
    proto, model, net, weights = write_model(tmp_path, header(shape) + body, shapes)
    prefix = os.path.join(tmp_path, "out")
    *_, input_dim = convert_model(proto, model, prefix)
    assert input_dim == list(shape)
    x = np.random.default_rng(7).standard_normal(shape).astype("float32")
    want = caffe_ref.forward(net, weights, {"data": x})[net.layer[-1].top[0]]
    got = run_converted(prefix, x)
    assert got.shape == want.shape, (case_id, got.shape, want.shape)
    np.testing.assert_allclose(got, want, rtol=2e-5, atol=2e-5, err_msg=case_id)
