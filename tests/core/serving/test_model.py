"""Loading exported models: inputs, signatures, shapes, labels, checks, run."""
from __future__ import annotations

import json
from pathlib import Path

import numpy
import pytest

from core import model as ckpt
from core import nd, sym
from core.serving import load_model, parse_model_spec, read_signature, write_signature
from core.serving.errors import InferenceError
from core.serving.signature import infer_sample_shapes, parse_shape

from .helpers import LABELS, export_conv, export_mlp, mlp_forward


def test_mlp_signature_from_the_weights_and_labels(tmp_path):
    params = export_mlp(str(tmp_path / "mlp"))
    m = load_model("mlp", str(tmp_path / "mlp"))
    assert m.metadata()["inputs"] == [{"name": "data", "datatype": "FP32", "shape": [-1, 4]}]
    assert m.labels == LABELS and m.batchable
    x = numpy.random.default_rng(0).standard_normal((3, 4)).astype("float32")
    numpy.testing.assert_allclose(m.run({"data": x})["prob_output"], mlp_forward(params, x),
                                  rtol=1e-5, atol=1e-6)
    assert m.warmup()


def test_synset_txt_in_the_folder(tmp_path):
    export_mlp(str(tmp_path / "mlp"), labels=False)
    assert load_model("mlp", str(tmp_path / "mlp")).labels is None
    (tmp_path / "synset.txt").write_text("n01 cat\n\nn02 dog\n", encoding="utf-8")
    assert load_model("mlp", str(tmp_path / "mlp")).labels == ["n01 cat", "n02 dog"]


def test_latest_epoch_is_the_default(tmp_path):
    export_mlp(str(tmp_path / "mlp"), epoch=2)
    _, args, aux = ckpt.load_checkpoint(str(tmp_path / "mlp"), 2)
    ckpt.save_checkpoint(str(tmp_path / "mlp"), 11,
                         None, {k: v * 0 for k, v in args.items()}, aux)
    m = load_model("mlp", str(tmp_path / "mlp"))
    assert float(m.arg_params["fc1_weight"].asnumpy().sum()) == 0.0
    m2 = load_model("mlp", str(tmp_path / "mlp"), epoch=2)
    assert float(m2.arg_params["fc1_weight"].asnumpy().sum()) != 0.0


def test_conv_free_dims_and_graph_check(tmp_path):
    export_conv(str(tmp_path / "conv"))
    m = load_model("conv", str(tmp_path / "conv"))
    assert m.inputs[0].shape == (-1, 2, -1, -1) and m.outputs[0].shape == (-1, 3, -1, -1)
    assert m.check_inputs({"data": ("FP32", numpy.zeros((2, 2, 5, 7), "float32"))}) == 2
    with pytest.raises(InferenceError, match=r"\[1, 2, 2, 2\] do not fit the network"):
        m.check_inputs({"data": ("FP32", numpy.zeros((1, 2, 2, 2), "float32"))})


def test_signature_file_wins_over_the_weights_and_flag_wins_over_both(tmp_path):
    prefix = str(tmp_path / "mlp")
    export_mlp(prefix)
    path = write_signature(prefix, {"data": (2, 2)})
    assert json.loads(Path(path).read_text(encoding="utf-8")) == \
        {"inputs": [{"name": "data", "datatype": "FP32", "shape": [-1, 2, 2]}]}
    assert load_model("mlp", prefix).inputs[0].shape == (-1, 2, 2)
    assert load_model("mlp", prefix, input_shapes={"data": (4,)}).inputs[0].shape == (-1, 4)
    with pytest.raises(ValueError, match=r"do not fit the network"):
        load_model("mlp", prefix, input_shapes={"data": (5,)})


@pytest.mark.parametrize("doc, words", [
    ("not json", ["not JSON"]),
    ({"inputs": []}, ["expected"]),
    ({"inputs": [{"name": "data", "shape": [1, 4]}]}, ["batch", "-1"]),
    ({"inputs": [{"name": "data", "shape": [-1, 0]}]}, ["\"shape\""]),
    ({"inputs": [{"name": "data", "shape": [-1, 4], "datatype": "F32"}]}, ["F32"]),
])
def test_bad_signature_files(tmp_path, doc, words):
    prefix = str(tmp_path / "mlp")
    export_mlp(prefix)
    (tmp_path / "mlp-signature.json").write_text(
        doc if isinstance(doc, str) else json.dumps(doc), encoding="utf-8")
    with pytest.raises(ValueError) as e:
        read_signature(prefix)
    for w in words:
        assert w in str(e.value), (w, str(e.value))


def test_input_dtype_from_the_signature(tmp_path):
    prefix = str(tmp_path / "emb")
    net = sym.Embedding(sym.var("tokens"), input_dim=5, output_dim=2, name="emb")
    ckpt.save_checkpoint(prefix, 0, net, {"emb_weight": nd.array(numpy.eye(5, 2))}, {})
    with pytest.raises(ValueError, match="per-sample shape of input 'tokens'"):
        load_model("emb", prefix)
    write_signature(prefix, {"tokens": (3,)}, "INT32")
    m = load_model("emb", prefix)
    assert m.metadata()["inputs"] == [{"name": "tokens", "datatype": "INT32",
                                       "shape": [-1, 3]}]
    assert m.outputs[0].shape == (-1, 3, 2)
    out = m.run({"tokens": numpy.array([[0, 1, 4]], "int32")})
    assert out[m.outputs[0].name].tolist() == [[[1, 0], [0, 1], [0, 0]]]
    with pytest.raises(InferenceError, match="expected datatype INT32, got FP32"):
        m.check_inputs({"tokens": ("FP32", numpy.zeros((1, 3), "float32"))})


def test_request_checks(tmp_path):
    export_mlp(str(tmp_path / "mlp"))
    m = load_model("mlp", str(tmp_path / "mlp"))
    x = numpy.zeros((2, 4), "float32")
    assert m.check_inputs({"data": ("FP32", x)}) == 2
    with pytest.raises(InferenceError, match="input 'data' is missing"):
        m.check_inputs({})
    with pytest.raises(InferenceError, match=r"expected shape \[-1, 4\] \(batch first\), got "
                                             r"\[4\]"):
        m.check_inputs({"data": ("FP32", numpy.zeros(4, "float32"))})
    with pytest.raises(InferenceError, match="no output 'logits'"):
        m.output_spec("logits")


def test_two_inputs_share_the_batch(tmp_path):
    prefix = str(tmp_path / "two")
    net = sym.FullyConnected(sym.var("a"), num_hidden=2, name="fa") + \
        sym.FullyConnected(sym.var("b"), num_hidden=2, name="fb")
    ckpt.save_checkpoint(prefix, 0, net, {"fa_weight": nd.ones((2, 3)),
                                          "fa_bias": nd.zeros((2,)),
                                          "fb_weight": nd.ones((2, 5)),
                                          "fb_bias": nd.zeros((2,))}, {})
    m = load_model("two", prefix)
    assert [t.shape for t in m.inputs] == [(-1, 3), (-1, 5)]
    with pytest.raises(InferenceError, match="batch sizes differ"):
        m.check_inputs({"a": ("FP32", numpy.zeros((2, 3), "f4")),
                        "b": ("FP32", numpy.zeros((3, 5), "f4"))})
    out = m.run({"a": numpy.ones((1, 3), "f4"), "b": numpy.ones((1, 5), "f4")})
    assert next(iter(out.values())).tolist() == [[8.0, 8.0]]


def test_batchnorm_model_uses_its_moving_statistics(tmp_path):
    prefix = str(tmp_path / "bn")
    net = sym.BatchNorm(sym.FullyConnected(sym.var("data"), num_hidden=2, name="fc"),
                        name="bn", fix_gamma=False)
    ckpt.save_checkpoint(prefix, 0, net,
                         {"fc_weight": nd.ones((2, 2)), "fc_bias": nd.zeros((2,)),
                          "bn_gamma": nd.ones((2,)), "bn_beta": nd.zeros((2,))},
                         {"bn_moving_mean": nd.array([1.0, 2.0]),
                          "bn_moving_var": nd.array([4.0, 4.0])})
    m = load_model("bn", prefix)
    out = next(iter(m.run({"data": numpy.array([[1.0, 2.0]], "f4")}).values()))
    numpy.testing.assert_allclose(out, [[(3 - 1) / numpy.sqrt(4 + 1e-3),
                                         (3 - 2) / numpy.sqrt(4 + 1e-3)]], rtol=1e-5)
    for _ in range(2):  # inference leaves the moving statistics alone
        m.run({"data": numpy.array([[1.0, 2.0]], "f4")})
    assert m.aux_params["bn_moving_mean"].asnumpy().tolist() == [1.0, 2.0]


def test_load_errors(tmp_path):
    prefix = str(tmp_path / "mlp")
    with pytest.raises(FileNotFoundError, match="model 'x'.*mlp-symbol.json"):
        load_model("x", prefix)
    export_mlp(prefix)
    with pytest.raises(FileNotFoundError, match="mlp-0003.params"):
        load_model("x", prefix, epoch=3)
    bn = sym.BatchNorm(sym.var("data"), name="bn")
    ckpt.save_checkpoint(str(tmp_path / "bn"), 0, bn, {"bn_gamma": nd.ones((2,)),
                                                       "bn_beta": nd.zeros((2,))}, {})
    with pytest.raises(ValueError, match="lacks the auxiliary state"):
        load_model("bn", str(tmp_path / "bn"))
    ckpt.save_checkpoint(str(tmp_path / "part"), 0,
                         sym.FullyConnected(sym.var("data"), num_hidden=2, name="fc"),
                         {"fc_bias": nd.zeros((2,))}, {})
    with pytest.raises(ValueError, match="'fc_weight'.*parameter file complete"):
        load_model("part", str(tmp_path / "part"), input_shapes={"data": (3,)})


def test_parse_model_spec_and_shapes():
    assert parse_model_spec("a=b:c") == ("a", "b:c", None)
    assert parse_model_spec("a=C:/m/net:12") == ("a", "C:/m/net", 12)
    with pytest.raises(ValueError, match="NAME=PREFIX"):
        parse_model_spec("=x")
    assert parse_shape("1,-1,8", "x") == (1, -1, 8)
    for bad in ("", "1,,2", "0", "-2", "a"):
        with pytest.raises(ValueError, match="not a shape"):
            parse_shape(bad, "x")


def test_infer_sample_shapes_reads_conv_layout_and_groups():
    x = sym.var("data")
    net = sym.Convolution(sym.relu(x), kernel=(3,), num_filter=4, num_group=2,
                          layout="NWC", name="c")
    assert infer_sample_shapes(net, ["data"], {"c_weight": (4, 3, 3)}) == {"data": (-1, 6)}
    fc = sym.FullyConnected(x, num_hidden=2, flatten=False, name="f")
    assert infer_sample_shapes(fc, ["data"], {"f_weight": (2, 3)}) == {"data": None}
