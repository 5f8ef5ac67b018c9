"""Whole Caffe nets through the converter: a LeNet, a ResNet block with BatchNorm + Scale
(eps 1e-6, the cuDNN compensation), the Module and SymbolBlock paths, old (V1) files,
TEST-phase filtering, the command line, and real MXNet 1.9.1 loading a converted model."""
from __future__ import annotations

import json
import os
import subprocess
import sys

import numpy as np
import pytest

pytest.importorskip("google.protobuf")

from core import io, model, nd
from core.module import Module
from gluon.compat.caffe import convert_model, convert_symbol
from tests.gluon.compat import caffe_ref
from tests.gluon.compat.caffe_nets import header, write_model
from tests.gluon.compat.test_caffe_layers import run_converted
from tests.mxnet_ref import requires_mxnet, run_mxnet

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(
    os.path.abspath(__file__)))))

LENET = '''
layer { name: "conv1" type: "Convolution" bottom: "data" top: "conv1"
  param { lr_mult: 1 } param { lr_mult: 2 }
  convolution_param { num_output: 4 kernel_size: 5 stride: 1
    weight_filler { type: "xavier" } bias_filler { type: "constant" } } }
layer { name: "pool1" type: "Pooling" bottom: "conv1" top: "pool1"
  pooling_param { pool: MAX kernel_size: 2 stride: 2 } }
layer { name: "conv2" type: "Convolution" bottom: "pool1" top: "conv2"
  convolution_param { num_output: 6 kernel_size: 3 } }
layer { name: "pool2" type: "Pooling" bottom: "conv2" top: "pool2"
  pooling_param { pool: AVE kernel_size: 3 stride: 2 } }
layer { name: "ip1" type: "InnerProduct" bottom: "pool2" top: "ip1"
  inner_product_param { num_output: 10 } }
layer { name: "relu1" type: "ReLU" bottom: "ip1" top: "ip1" }
layer { name: "drop1" type: "Dropout" bottom: "ip1" top: "ip1" }
layer { name: "ip2" type: "InnerProduct" bottom: "ip1" top: "ip2"
  inner_product_param { num_output: 3 } }
layer { name: "prob" type: "Softmax" bottom: "ip2" top: "prob" }
'''
# 15x15 -> conv 11x11 -> pool (ceil) 6x6 -> conv 4x4 -> ave pool (ceil) 2x2
LENET_SHAPE = (2, 1, 15, 15)
LENET_W = {"conv1": [(4, 1, 5, 5), (4,)], "conv2": [(6, 4, 3, 3), (6,)],
           "ip1": [(10, 24), (10,)], "ip2": [(3, 10), (3,)]}


def _bn(c, seed):
    rng = np.random.default_rng(seed)
    factor = 3.0
    return [rng.standard_normal(c) * factor, rng.uniform(1e-7, 0.5, c) * factor,
            np.array([factor])]


def _resblock(eps="1e-6"):
    bn = f"batch_norm_param {{ use_global_stats: true eps: {eps} }}"
    return f'''
layer {{ name: "conv1" type: "Convolution" bottom: "data" top: "conv1"
  convolution_param {{ num_output: 4 kernel_size: 3 pad: 1 bias_term: false }} }}
layer {{ name: "bn1" type: "BatchNorm" bottom: "conv1" top: "conv1" {bn} }}
layer {{ name: "scale1" type: "Scale" bottom: "conv1" top: "conv1"
  scale_param {{ bias_term: true }} }}
layer {{ name: "relu1" type: "ReLU" bottom: "conv1" top: "conv1" }}
layer {{ name: "conv2" type: "Convolution" bottom: "conv1" top: "conv2"
  convolution_param {{ num_output: 4 kernel_size: 3 pad: 1 bias_term: false }} }}
layer {{ name: "bn2" type: "BatchNorm" bottom: "conv2" top: "bn2" {bn} }}
layer {{ name: "scale2" type: "Scale" bottom: "bn2" top: "scale2"
  scale_param {{ bias_term: false }} }}
layer {{ name: "sum" type: "Eltwise" bottom: "data" bottom: "scale2" top: "sum" }}
layer {{ name: "relu2" type: "ReLU" bottom: "sum" top: "sum" }}
layer {{ name: "pool" type: "Pooling" bottom: "sum" top: "pool"
  pooling_param {{ pool: AVE global_pooling: true }} }}
'''


RES_SHAPE = (2, 4, 6, 6)
RES_W = {"conv1": [(4, 4, 3, 3)], "bn1": _bn(4, 1), "scale1": [(4,), (4,)],
         "conv2": [(4, 4, 3, 3)], "bn2": _bn(4, 2), "scale2": [(4,)]}


def _x(shape, seed=3):
    return np.random.default_rng(seed).standard_normal(shape).astype("float32")


def test_lenet_matches_caffe_through_symbolblock(tmp_path):
    proto, cm, net, weights = write_model(tmp_path, header(LENET_SHAPE) + LENET, LENET_W)
    prefix = str(tmp_path / "lenet")
    sym, args, aux, dim = convert_model(proto, cm, prefix)
    assert dim == list(LENET_SHAPE)
    assert sym.list_outputs() == ["prob_output"]
    assert sorted(args) == sorted(f"{n}_{p}" for n in LENET_W for p in ("weight", "bias"))
    assert aux == {}
    x = _x(LENET_SHAPE)
    want = caffe_ref.forward(net, weights, {"data": x})["prob"]
    np.testing.assert_allclose(run_converted(prefix, x), want, rtol=1e-5, atol=1e-6)


def test_resblock_folds_batchnorm_scale_with_eps_compensation(tmp_path):
    proto, cm, net, weights = write_model(tmp_path, header(RES_SHAPE) + _resblock(), RES_W)
    prefix = str(tmp_path / "res")
    sym, args, aux, _ = convert_model(proto, cm, prefix)
    graph = json.loads(sym.tojson())
    ops = [n["op"] for n in graph["nodes"] if n["op"] != "null"]
    assert ops.count("BatchNorm") == 2 and "broadcast_mul" not in ops  # both Scales folded
    bns = [n for n in graph["nodes"] if n["op"] == "BatchNorm"]
    assert [float(n["attrs"]["eps"]) for n in bns] == [1e-5, 1e-5]
    assert {n["attrs"]["fix_gamma"] for n in bns} == {"False"}
    # var' + eps' == var / factor + eps (eps is Caffe's float32 1e-6)
    mean, var, factor = weights["bn1"]
    np.testing.assert_allclose(aux["bn1_moving_var"].asnumpy() + 1e-5,
                               var / factor + np.float32(1e-6), rtol=1e-6)
    np.testing.assert_allclose(aux["bn1_moving_mean"].asnumpy(), mean / factor, rtol=1e-6)
    np.testing.assert_allclose(args["bn1_gamma"].asnumpy(), weights["scale1"][0])
    np.testing.assert_allclose(args["bn2_beta"].asnumpy(), 0.0)
    x = _x(RES_SHAPE)
    want = caffe_ref.forward(net, weights, {"data": x})["pool"]
    np.testing.assert_allclose(run_converted(prefix, x), want, rtol=1e-5, atol=1e-5)


def test_module_runs_the_checkpoint(tmp_path):
    proto, cm, net, weights = write_model(tmp_path, header(RES_SHAPE) + _resblock(), RES_W)
    prefix = str(tmp_path / "res")
    convert_model(proto, cm, prefix)
    sym, args, aux = model.load_checkpoint(prefix, 0)
    mod = Module(sym, data_names=["data"], label_names=None)
    mod.bind([("data", RES_SHAPE)], for_training=False)
    mod.set_params(args, aux)
    x = _x(RES_SHAPE)
    mod.forward(io.DataBatch([nd.array(x)]), is_train=False)
    want = caffe_ref.forward(net, weights, {"data": x})["pool"]
    np.testing.assert_allclose(mod.get_outputs()[0].asnumpy(), want, rtol=1e-5, atol=1e-5)


def test_scale_read_twice_is_not_folded(tmp_path):
    body = '''
layer { name: "bn" type: "BatchNorm" bottom: "data" top: "bn" }
layer { name: "sc" type: "Scale" bottom: "bn" top: "sc" scale_param { bias_term: true } }
layer { name: "sum" type: "Eltwise" bottom: "bn" bottom: "sc" top: "sum" }
'''
    proto, cm, net, weights = write_model(tmp_path, header((2, 3, 2, 2)) + body,
                                          {"bn": _bn(3, 4), "sc": [(3,), (3,)]})
    prefix = str(tmp_path / "o")
    sym, *_ = convert_model(proto, cm, prefix)
    assert "broadcast_mul" in sym.tojson()
    x = _x((2, 3, 2, 2))
    want = caffe_ref.forward(net, weights, {"data": x})["sum"]
    np.testing.assert_allclose(run_converted(prefix, x), want, rtol=1e-5, atol=1e-5)


def test_v1_files_and_legacy_blob_shapes(tmp_path):
    text = header(LENET_SHAPE) + LENET
    proto, cm, net, weights = write_model(tmp_path, text, LENET_W, v1=True,
                                          legacy_shape=True)
    # the prototxt in the old form too: 'layers' with enum types
    v1 = (header(LENET_SHAPE) + LENET).replace("layer {", "layers {")
    for new, old in (("Convolution", "CONVOLUTION"), ("Pooling", "POOLING"),
                     ("InnerProduct", "INNER_PRODUCT"), ("ReLU", "RELU"),
                     ("Dropout", "DROPOUT"), ("Softmax", "SOFTMAX")):
        v1 = v1.replace(f'type: "{new}"', f"type: {old}")
    v1 = "\n".join(line for line in v1.splitlines() if "param { lr_mult" not in line)
    assert "layer {" not in v1 and 'type: "Convolution"' not in v1
    with open(proto, "w") as f:
        f.write(v1)
    prefix = str(tmp_path / "v1")
    convert_model(proto, cm, prefix)
    x = _x(LENET_SHAPE)
    want = caffe_ref.forward(net, weights, {"data": x})["prob"]
    np.testing.assert_allclose(run_converted(prefix, x), want, rtol=1e-5, atol=1e-6)


def test_train_prototxt_test_phase_and_input_layer(tmp_path):
    body = '''
layer { name: "mnist" type: "Data" top: "label" include { phase: TRAIN }
  data_param { source: "train_lmdb" batch_size: 64 backend: LMDB } }
layer { name: "in" type: "Input" top: "data" input_param { shape { dim: 2 dim: 3 } } }
layer { name: "ip" type: "InnerProduct" bottom: "data" top: "ip"
  inner_product_param { num_output: 2 } }
layer { name: "drop" type: "Dropout" bottom: "ip" top: "ip" include { phase: TRAIN } }
layer { name: "sig" type: "Sigmoid" bottom: "ip" top: "sig" exclude { phase: TRAIN } }
'''
    proto, cm, _, weights = write_model(tmp_path, 'name: "t"\n' + body,
                                        {"ip": [(2, 3), (2,)]})
    sym, args, aux, dim = convert_model(proto, cm)
    assert dim == [2, 3] and sym.list_outputs() == ["sig_output"]
    assert "Dropout" not in sym.tojson()
    x = _x((2, 3))
    want = 1 / (1 + np.exp(-(x @ weights["ip"][0].T + weights["ip"][1])))
    from gluon import SymbolBlock
    block = SymbolBlock(sym, [__import__("core").sym.var("data")])
    block.collect_params().load_dict({**args, **aux})
    np.testing.assert_allclose(block(nd.array(x)).asnumpy(), want, rtol=1e-5, atol=1e-6)


def test_two_outputs_and_input_dim(tmp_path):
    text = ('input: "data" input_dim: 2 input_dim: 3 input_dim: 4 input_dim: 4\n'
            'layer { name: "a" type: "ReLU" bottom: "data" top: "a" }\n'
            'layer { name: "b" type: "TanH" bottom: "data" top: "b" }\n')
    proto, *_ = write_model(tmp_path, text, {})
    sym, dim = convert_symbol(proto)
    assert dim == [2, 3, 4, 4] and sym.list_outputs() == ["a_output", "b_output"]


def test_caffe_names_with_slashes_become_symbol_names(tmp_path):
    body = ('layer { name: "inception_3a/1x1-a" type: "Convolution" bottom: "data" '
            'top: "inception_3a/1x1" convolution_param { num_output: 2 kernel_size: 1 } }\n'
            'layer { name: "inception_3a/relu" type: "ReLU" bottom: "inception_3a/1x1" '
            'top: "inception_3a/1x1" }\n')
    proto, cm, net, weights = write_model(tmp_path, header((1, 3, 2, 2)) + body,
                                          {"inception_3a/1x1-a": [(2, 3, 1, 1), (2,)]})
    prefix = str(tmp_path / "g")
    sym, args, _, _ = convert_model(proto, cm, prefix)
    assert sorted(args) == ["inception_3a_1x1_a_bias", "inception_3a_1x1_a_weight"]
    assert sym.list_outputs() == ["inception_3a_relu_output"]
    x = _x((1, 3, 2, 2))
    want = caffe_ref.forward(net, weights, {"data": x})["inception_3a/1x1"]
    np.testing.assert_allclose(run_converted(prefix, x), want, rtol=1e-5, atol=1e-6)


def test_convert_symbol_alone_carries_the_parameter_shapes(tmp_path):
    proto, cm, *_ = write_model(tmp_path, header(RES_SHAPE) + _resblock(), RES_W)
    sym, dim = convert_symbol(proto)
    full, _, aux, _ = convert_model(proto, cm)
    assert dim == list(RES_SHAPE)
    assert sym.list_arguments() == full.list_arguments()
    assert sym.list_auxiliary_states() == sorted(aux, key=full.list_auxiliary_states().index)
    arg_shapes, out_shapes, _ = sym.infer_shape(data=(5,) + RES_SHAPE[1:])
    assert out_shapes == [(5, 4, 1, 1)]
    assert dict(zip(sym.list_arguments(), arg_shapes))["bn1_gamma"] == (4,)


def _cli(*args):
    env = {**os.environ, "PYTHONPATH": ROOT}
    return subprocess.run([sys.executable, "-m", "gluon.compat.caffe", *args],
                          capture_output=True, text=True, cwd=ROOT, env=env, timeout=120,
                          check=False)


def test_cli_writes_the_checkpoint_and_reports_errors(tmp_path):
    proto, cm, net, weights = write_model(tmp_path, header(LENET_SHAPE) + LENET, LENET_W)
    prefix = str(tmp_path / "cli")
    out = _cli(proto, cm, prefix)
    assert out.returncode == 0, out.stderr
    assert f"wrote {prefix}-symbol.json" in out.stdout
    assert f"wrote {prefix}-0000.params" in out.stdout
    x = _x(LENET_SHAPE)
    want = caffe_ref.forward(net, weights, {"data": x})["prob"]
    np.testing.assert_allclose(run_converted(prefix, x), want, rtol=1e-5, atol=1e-6)
    missing = _cli(str(tmp_path / "nope.prototxt"), cm, prefix)
    assert missing.returncode == 1 and "nope.prototxt" in missing.stderr
    assert "Traceback" not in missing.stderr
    bad = _cli(proto, proto, prefix)  # a text file where the binary model goes
    assert bad.returncode == 1 and "caffemodel" in bad.stderr


@requires_mxnet
def test_real_mxnet_runs_every_converted_model(tmp_path):
    """Each layer case, the LeNet and the ResNet block, converted, then run by real MXNet
    1.9.1's Module: the outputs equal the NumPy Caffe reference's."""
    from tests.gluon.compat.test_caffe_layers import CASES
    cases = [(c[0], c[1], header(c[1]) + c[2], c[3]) for c in CASES]
    cases += [("lenet", LENET_SHAPE, header(LENET_SHAPE) + LENET, LENET_W),
              ("resblock", RES_SHAPE, header(RES_SHAPE) + _resblock(), RES_W)]
    jobs = []
    for case_id, shape, text, shapes in cases:
        d = tmp_path / case_id
        d.mkdir()
        proto, cm, net, weights = write_model(d, text, shapes)
        prefix = str(d / "m")
        convert_model(proto, cm, prefix)
        x = _x(shape)
        blobs = caffe_ref.forward(net, weights, {"data": x})
        np.savez(d / "io.npz", x=x, want=blobs[net.layer[-1].top[0]])
        jobs.append((case_id, prefix, shape))
    code = f"""
import numpy as np, mxnet as mx
for case_id, prefix, shape in {jobs!r}:
    f = np.load(prefix[:-2] + '/io.npz')
    sym, args, aux = mx.model.load_checkpoint(prefix, 0)
    mod = mx.mod.Module(sym, data_names=['data'], label_names=None, context=mx.cpu())
    mod.bind([('data', shape)], for_training=False)
    mod.set_params(args, aux)
    mod.forward(mx.io.DataBatch([mx.nd.array(f['x'])]), is_train=False)
    got = mod.get_outputs()[0].asnumpy()
    ok = got.shape == f['want'].shape and np.allclose(got, f['want'], rtol=1e-4, atol=1e-5)
    print(case_id, 'ok' if ok else 'MISMATCH %s %s' % (got.shape, f['want'].shape))
"""
    lines = run_mxnet(code).strip().splitlines()
    bad = [line for line in lines if not line.endswith(" ok")]
    assert not bad and len(lines) == len(jobs), lines
