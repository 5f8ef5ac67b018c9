"""ONNX export of real MXNet 1.9.1 files: the fixtures' outputs (computed by MXNet) are
what onnxruntime must give; with real MXNet present, models built there are exported
from their files and compared with MXNet's forward and MXNet's own exporter's names."""
from __future__ import annotations

import glob
import json
import os

import numpy
import pytest

from core.onnx import export_graph, export_model
from tests.core.onnx.export_util import onnx, run_onnx
from tests.mxnet_ref import requires_mxnet, run_mxnet

HERE = os.path.join(os.path.dirname(__file__), "..", "..", "data", "mxnet", "json")


@pytest.mark.parametrize("name", ["gluon", "gluon_misc", "gluon_rnn", "composed"])
def test_mxnet_fixture_files(name, tmp_path):
    prefix = os.path.join(HERE, name)
    xs = [numpy.load(p) for p in sorted(glob.glob(prefix + "-input*.npy"))]
    wants = [numpy.load(p) for p in sorted(glob.glob(prefix + "-output*.npy"))]
    path = export_model(prefix + "-symbol.json", prefix + "-0000.params",
                        [x.shape for x in xs], [x.dtype for x in xs],
                        str(tmp_path / f"{name}.onnx"))
    model = onnx.load(path)
    onnx.checker.check_model(model)
    got = run_onnx(model, {i.name: x for i, x in zip(model.graph.input, xs)})
    assert len(got) == len(wants)
    for g, w in zip(got, wants):
        numpy.testing.assert_allclose(g, w, rtol=1e-4, atol=1e-5)


_MXNET_MODELS = r'''
import json, os, sys
import numpy as np
import mxnet as mx
from mxnet.gluon import nn, rnn
out = sys.argv[1] if len(sys.argv) > 1 else "."
mx.random.seed(0)
np.random.seed(0)

class Cnn(nn.HybridBlock):
    def __init__(self):
        super().__init__()
        self.c1 = nn.Conv2D(8, 3, padding=2, dilation=2, groups=2, in_channels=4)
        self.bn = nn.BatchNorm(in_channels=8)
        self.p1 = nn.MaxPool2D(3, strides=2, padding=1, ceil_mode=True)
        self.p2 = nn.AvgPool2D(3, strides=2, padding=1, ceil_mode=True)
        self.d = nn.Conv2DTranspose(3, 3, strides=2, padding=1, output_padding=1,
                                    in_channels=8)
        self.fc = nn.Dense(5)
    def hybrid_forward(self, F, x):
        y = self.p2(self.p1(F.relu(self.bn(self.c1(x)))))
        return self.fc(F.LeakyReLU(self.d(y), act_type="elu", slope=0.5))

class Seq(nn.HybridBlock):
    def __init__(self):
        super().__init__()
        self.emb = nn.Embedding(30, 6)
        self.lstm = rnn.LSTM(5, num_layers=2, bidirectional=True, input_size=6)
        self.gru = rnn.GRU(4, num_layers=2, bidirectional=True, input_size=10)
        self.ln = nn.LayerNorm(in_channels=8)
        self.fc = nn.Dense(3, flatten=False)
    def hybrid_forward(self, F, x):
        h = self.emb(x).transpose((1, 0, 2))
        h = self.gru(self.lstm(h))
        return F.softmax(self.fc(self.ln(h)), axis=-1)

class Lstm1(nn.HybridBlock):
    def __init__(self):
        super().__init__()
        self.lstm = rnn.LSTM(5, input_size=3, bidirectional=True)
        self.fc = nn.Dense(2, flatten=False)
    def hybrid_forward(self, F, x):
        return self.fc(self.lstm(x))

for name, net, x in (("cnn", Cnn(), np.random.randn(2, 4, 11, 11).astype("float32")),
                     ("seq", Seq(), np.random.randint(0, 30, (3, 7)).astype("float32")),
                     ("lstm1", Lstm1(), np.random.randn(4, 2, 3).astype("float32"))):
    net.initialize(mx.init.Xavier())
    net.hybridize()
    net(mx.nd.array(x))
    for k, p in net.collect_params().items():
        if k.endswith("running_var"):
            p.set_data(mx.nd.array(np.random.rand(*p.shape) + 0.5))
        elif k.endswith("running_mean"):
            p.set_data(mx.nd.array(np.random.randn(*p.shape) * 0.1))
    y = net(mx.nd.array(x)).asnumpy()
    prefix = os.path.join(out, name)
    net.export(prefix)
    np.save(prefix + "-input.npy", x)
    np.save(prefix + "-output.npy", y)
    try:  # MXNet's own exporter (it has no multi-layer bidirectional LSTM)
        onnx_path = mx.onnx.export_model(prefix + "-symbol.json", prefix + "-0000.params",
                                         [x.shape], [np.float32], prefix + "-mxnet.onnx")
    except NotImplementedError:
        print(json.dumps({"name": name, "inputs": None, "outputs": None}))
        continue
    import onnx
    m = onnx.load(onnx_path)
    print(json.dumps({"name": name, "inputs": [i.name for i in m.graph.input
                                               if i.name not in {t.name for t in
                                                                 m.graph.initializer}],
                      "outputs": [o.name for o in m.graph.output]}))
'''


@requires_mxnet
def test_models_built_by_real_mxnet(tmp_path):
    script = tmp_path / "make.py"
    script.write_text(_MXNET_MODELS)
    printed = run_mxnet(f"import sys; sys.argv = ['x', {str(tmp_path)!r}]; "
                        f"exec(open({str(script)!r}).read())")
    lines = [ln for ln in printed.strip().splitlines() if ln.startswith("{")]
    names = {d["name"]: d for d in map(json.loads, lines)}
    assert names["cnn"]["inputs"] == ["data"]  # MXNet exports these itself
    assert names["lstm1"]["inputs"] is not None
    for name in ("cnn", "seq", "lstm1"):
        prefix = str(tmp_path / name)
        x = numpy.load(prefix + "-input.npy")
        want = numpy.load(prefix + "-output.npy")
        path = export_model(prefix + "-symbol.json", prefix + "-0000.params", [x.shape],
                            numpy.float32, prefix + "-ours.onnx")
        model = onnx.load(path)
        onnx.checker.check_model(model)
        weights = {t.name for t in model.graph.initializer}
        # as MXNet's exporter, the weights are graph inputs too (keep_initializers_as_inputs)
        assert weights and weights <= {i.name for i in model.graph.input}
        if names[name]["inputs"] is not None:  # the names MXNet's exporter gives
            assert [i.name for i in model.graph.input
                    if i.name not in weights] == names[name]["inputs"]
            assert [o.name for o in model.graph.output] == names[name]["outputs"]
        got = run_onnx(model, {"data": x})[0]
        numpy.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-5)


_MXNET_POOLING = r'''
import json
import numpy as np
import mxnet as mx
x = np.random.RandomState(0).randn(1, 2, 7, 8).astype("float32")
out = {"x": x.tolist()}
for pool_type in ("max", "avg", "sum"):
    for conv in ("valid", "full"):
        for include in (True, False):
            y = mx.nd.Pooling(mx.nd.array(x), kernel=(3, 2), stride=(2, 3), pad=(1, 1),
                              pool_type=pool_type, pooling_convention=conv,
                              count_include_pad=include)
            out[f"{pool_type}-{conv}-{include}"] = y.asnumpy().tolist()
print(json.dumps(out))
'''


@requires_mxnet
def test_pooling_matches_real_mxnet():
    """Every pooling type and convention, with and without counting the padding, against
    real MXNet 1.9.1 (windows that hold padding only included)."""
    from core import sym

    res = json.loads(run_mxnet(_MXNET_POOLING).strip().splitlines()[-1])
    x = numpy.asarray(res.pop("x"), numpy.float32)
    for key, want in res.items():
        pool_type, conv, include = key.split("-")
        y = sym.Pooling(sym.var("x"), kernel=(3, 2), stride=(2, 3), pad=(1, 1),
                        pool_type=pool_type, pooling_convention=conv,
                        count_include_pad=include == "True")
        m = export_graph(y, {}, [x.shape])
        got = run_onnx(m, {"x": x})[0]
        numpy.testing.assert_allclose(got, numpy.asarray(want, numpy.float32), rtol=1e-5,
                                      atol=1e-6, err_msg=key)


_MXNET_OPS = r'''
import json
import numpy as np
import mxnet as mx
S = mx.sym
x, y = S.var("x"), S.var("y")
rs = np.random.RandomState(0)
cases = {
    "reshape_codes": (S.reshape(x, shape=(0, -3, -2)), {"x": (2, 3, 4, 5)}),
    "reshape_m4": (S.reshape(x, shape=(-4, 2, -1, -2)), {"x": (6, 4)}),
    "flatten_fc": (S.FullyConnected(S.flatten(x), num_hidden=3, no_bias=True,
                                    weight=S.var("w")), {"x": (2, 3, 4), "w": (3, 12)}),
    "softmax_temp": (S.softmax(x, axis=1, temperature=0.5), {"x": (2, 3, 4)}),
    "log_softmax": (S.log_softmax(x), {"x": (2, 5)}),
    "softmax_act": (S.SoftmaxActivation(x, mode="channel"), {"x": (2, 3, 4)}),
    "leaky": (S.LeakyReLU(x, act_type="leaky", slope=0.2), {"x": (2, 5)}),
    "gelu": (S.LeakyReLU(x, act_type="gelu"), {"x": (2, 5)}),
    "selu": (S.LeakyReLU(x, act_type="selu"), {"x": (2, 5)}),
    "scalar_ops": ((x + 1) * 2 - 3 / (S.abs(x) + 1) + (1 - x) ** 2, {"x": (2, 3)}),
    "broadcast": (S.broadcast_sub(S.broadcast_mul(x, y), y), {"x": (2, 3, 1), "y": (1, 4)}),
    "compare": (S.broadcast_greater(x, y), {"x": (2, 3), "y": (2, 3)}),
    "compare_scalar": (x <= 0.1, {"x": (2, 3)}),
    "slice": (S.slice(x, begin=(None, 1), end=(None, -1)), {"x": (3, 5)}),
    "slice_axis": (S.slice_axis(x, axis=2, begin=1, end=3), {"x": (2, 3, 4)}),
    "concat_split": (S.concat(*S.split(x, num_outputs=2, axis=1), dim=0), {"x": (2, 4)}),
    "transpose_expand": (S.expand_dims(S.transpose(x, axes=(1, 0)), axis=1), {"x": (2, 3)}),
    "sum_mean": (S.sum(x, axis=1) + S.mean(x, axis=(0, 2), exclude=True), {"x": (2, 2, 3)}),
    "max_min_prod": (S.max(x, axis=0) - S.min(x, axis=0) + S.prod(x, axis=0),
                     {"x": (3, 4)}),
    "norm_arg": (S.norm(x, axis=1) + S.argmax(x, axis=1), {"x": (2, 5)}),
    "dot_batch": (S.batch_dot(x, y, transpose_a=True), {"x": (2, 3, 4), "y": (2, 3, 5)}),
    "dot_t": (S.dot(x, y, transpose_b=True), {"x": (2, 3), "y": (4, 3)}),
    "where_clip": (S.where(x > 0, S.clip(x, 0, 0.5), y), {"x": (2, 3), "y": (2, 3)}),
    "layernorm": (S.LayerNorm(x, S.var("g"), S.var("b"), axis=1),
                  {"x": (2, 4, 3), "g": (4,), "b": (4,)}),
    "instnorm": (S.InstanceNorm(x, S.var("g"), S.var("b"), eps=1e-3),
                 {"x": (2, 3, 4, 4), "g": (3,), "b": (3,)}),
    "tile_repeat": (S.repeat(S.tile(x, reps=(1, 2)), repeats=2, axis=0), {"x": (2, 3)}),
    "pad": (S.pad(x, mode="reflect", pad_width=(0, 0, 0, 0, 1, 1, 2, 2)), {"x": (1, 2, 4, 4)}),
    "take": (S.take(S.var("w"), x), {"w": (5, 3), "x": (2, 2)}),
    "squeeze_stack": (S.stack(S.squeeze(x, axis=1), S.squeeze(x, axis=1), axis=2),
                      {"x": (2, 1, 3)}),
    "unary": (S.exp(x) + S.log1p(S.abs(x)) + S.rsqrt(S.abs(x) + 1) + S.erf(x) + S.cbrt(x)
              + S.sign(x) * S.floor(x) + S.round(x) + S.trunc(x), {"x": (2, 6)}),
}
out = {}
for name, (s, shapes) in cases.items():
    vals = {k: (rs.randint(0, 5, v) if name == "take" and k == "x" else rs.randn(*v))
            .astype("float32") for k, v in shapes.items()}
    exe = s.bind(mx.cpu(), {k: mx.nd.array(v) for k, v in vals.items()})
    res = exe.forward(is_train=False)[0].asnumpy()
    out[name] = {"json": s.tojson(), "inputs": {k: v.tolist() for k, v in vals.items()},
                 "output": res.tolist()}
print(json.dumps(out))
'''


@requires_mxnet
def test_operators_match_real_mxnet():
    """Symbols written by real MXNet 1.9.1 (its JSON), exported by us: onnxruntime gives
    MXNet's own outputs."""
    from core import sym

    res = json.loads(run_mxnet(_MXNET_OPS).strip().splitlines()[-1])
    for name, case in res.items():
        s = sym.load_json(case["json"])
        feeds = {k: numpy.asarray(v, numpy.float32) for k, v in case["inputs"].items()}
        m = export_graph(s, {}, {k: v.shape for k, v in feeds.items()})
        got = run_onnx(m, {i.name: feeds[i.name] for i in m.graph.input})[0]
        # (our comparisons give bool where MXNet 1.x gives float32 0/1: compared as values)
        numpy.testing.assert_allclose(got.astype(numpy.float32),
                                      numpy.asarray(case["output"], numpy.float32),
                                      rtol=1e-5, atol=1e-5, err_msg=name)


_MXNET_ZOO = r'''
import os, sys
import numpy as np
import mxnet as mx
from mxnet.gluon.model_zoo import vision
out = sys.argv[1]
for name in ("resnet18_v1", "mobilenetv2_0.25", "mobilenet0.25"):
    net = vision.get_model(name, classes=10)
    net.initialize(mx.init.Xavier())
    net.hybridize()
    x = np.random.RandomState(0).randn(2, 3, 64, 64).astype("float32")
    y = net(mx.nd.array(x)).asnumpy()
    net.export(os.path.join(out, name))
    np.save(os.path.join(out, name + "-input.npy"), x)
    np.save(os.path.join(out, name + "-output.npy"), y)
'''


@requires_mxnet
def test_real_mxnet_model_zoo_files(tmp_path):
    """Real MXNet's Gluon model zoo nets (their -symbol.json and .params) exported with
    a dynamic batch: onnxruntime gives MXNet's outputs, at batch 2 and 1."""
    run_mxnet(f"import sys; sys.argv = ['x', {str(tmp_path)!r}]\n" + _MXNET_ZOO)
    for name in ("resnet18_v1", "mobilenetv2_0.25", "mobilenet0.25"):
        prefix = str(tmp_path / name)
        x = numpy.load(prefix + "-input.npy")
        want = numpy.load(prefix + "-output.npy")
        path = export_model(prefix + "-symbol.json", prefix + "-0000.params", [x.shape],
                            onnx_file_path=prefix + ".onnx", dynamic=True,
                            dynamic_input_shapes=[(None, 3, 64, 64)])
        model = onnx.load(path)
        scale = float(numpy.abs(want).max()) or 1.0
        numpy.testing.assert_allclose(run_onnx(model, {"data": x})[0], want, rtol=1e-4,
                                      atol=1e-5 * scale, err_msg=name)
        numpy.testing.assert_allclose(run_onnx(model, {"data": x[:1]})[0], want[:1],
                                      rtol=1e-4, atol=1e-5 * scale, err_msg=name)


_MXNET_IMPORTS_OURS = """
import numpy as np, mxnet as mx
from mxnet.contrib import onnx as onnx_mxnet
sym, arg, aux = onnx_mxnet.import_model({path!r})
mod = mx.mod.Module(sym, data_names=["data"], label_names=None)
mod.bind(for_training=False, data_shapes=[("data", {shape!r})])
mod.set_params(arg, aux, allow_missing=True)
mod.forward(mx.io.DataBatch([mx.nd.array(np.load({x!r}))]))
np.save({out!r}, mod.get_outputs()[0].asnumpy())
"""


@requires_mxnet
def test_real_mxnet_imports_our_export(tmp_path):
    """Real MXNet 1.9.1's ``mx.contrib.onnx.import_model`` reads what export_model writes
    (it needs the weights among the graph inputs) and computes what our block does."""
    from core import nd
    from gluon import nn

    net = nn.HybridSequential()
    net.add(nn.Conv2D(4, 3, padding=1), nn.BatchNorm(), nn.Activation("relu"),
            nn.MaxPool2D(2), nn.Flatten(), nn.Dense(5))
    net.initialize()
    net.hybridize()
    x = nd.random.uniform(shape=(2, 3, 8, 8))
    want = net(x).asnumpy()
    prefix = str(tmp_path / "cnn")
    net.export(prefix)
    path = export_model(prefix + "-symbol.json", prefix + "-0000.params", [x.shape],
                        numpy.float32, prefix + ".onnx")
    numpy.save(prefix + "-x.npy", x.asnumpy())
    run_mxnet(_MXNET_IMPORTS_OURS.format(path=path, shape=x.shape, x=prefix + "-x.npy",
                                         out=prefix + "-mx.npy"))
    numpy.testing.assert_allclose(numpy.load(prefix + "-mx.npy"), want, rtol=1e-5, atol=1e-6)
    # without the weights among the inputs (the modern form) onnxruntime runs it alike
    lean = export_model(prefix + "-symbol.json", prefix + "-0000.params", [x.shape],
                        numpy.float32, prefix + "-lean.onnx", keep_initializers_as_inputs=False)
    model = onnx.load(lean)
    assert [i.name for i in model.graph.input] == ["data"]
    numpy.testing.assert_allclose(run_onnx(model, {"data": x.asnumpy()})[0], want,
                                  rtol=1e-5, atol=1e-6)
