"""ONNX import of whole models (a CNN, an embedding model, a PyTorch-style graph with
shape arithmetic), MXNet's (sym, arg_params, aux_params) split, metadata and errors."""
from __future__ import annotations

import numpy as np
import pytest

onnx = pytest.importorskip("onnx")
pytest.importorskip("onnxruntime")

from onnx import TensorProto, helper, numpy_helper

from core.onnx import get_model_metadata, import_graph, import_model
from tests.core.onnx.test_import_ops import check, make_model, rand, run_ort, run_ours

I64 = np.int64


def cnn_model(opset=13):
    """Conv+BN+Relu+MaxPool+Flatten+Gemm+Softmax with named initializers."""
    inits = {"conv1.weight": rand(4, 3, 3, 3), "conv1.bias": rand(4),
             "bn1.weight": rand(4, low=0.5), "bn1.bias": rand(4),
             "bn1.running_mean": rand(4), "bn1.running_var": rand(4, low=0.5, high=1.5),
             "fc.weight": rand(10, 4 * 4 * 4), "fc.bias": rand(10)}
    nodes = [
        helper.make_node("Conv", ["data", "conv1.weight", "conv1.bias"], ["c1"], name="conv1",
                         kernel_shape=[3, 3], pads=[1, 1, 1, 1]),
        helper.make_node("BatchNormalization", ["c1", "bn1.weight", "bn1.bias",
                                                "bn1.running_mean", "bn1.running_var"],
                         ["b1"], name="bn1", epsilon=1e-5),
        helper.make_node("Relu", ["b1"], ["r1"], name="relu1"),
        helper.make_node("MaxPool", ["r1"], ["p1"], name="pool1", kernel_shape=[2, 2],
                         strides=[2, 2]),
        helper.make_node("Flatten", ["p1"], ["f1"], name="flatten1"),
        helper.make_node("Gemm", ["f1", "fc.weight", "fc.bias"], ["fc1"], name="fc", transB=1),
        helper.make_node("Softmax", ["fc1"], ["prob"], name="softmax"),
    ]
    x = rand(2, 3, 8, 8)
    return make_model(nodes, {"data": x}, ["prob"], inits, opset), {"data": x}


@pytest.mark.parametrize("opset", [9, 13, 17])
def test_cnn_against_onnxruntime(opset):
    model, feeds = cnn_model(opset)
    check(model, feeds, rtol=1e-4)


def test_cnn_params_split_as_mxnet(tmp_path):
    model, feeds = cnn_model()
    path = tmp_path / "cnn.onnx"
    onnx.save(model, str(path))
    sym, args, aux = import_model(str(path))
    assert sorted(aux) == ["bn1.running_mean", "bn1.running_var"]
    assert sorted(args) == ["bn1.bias", "bn1.weight", "conv1.bias", "conv1.weight",
                            "fc.bias", "fc.weight"]
    assert sym.list_arguments()[0] == "data"
    assert set(sym.list_arguments()) == {"data", *args}
    assert args["fc.weight"].shape == (10, 64)
    # simple_bind from the input shape, parameters copied in, as an MXNet user does
    exe = sym.simple_bind(None, data=feeds["data"].shape, grad_req="null")
    for k, v in args.items():
        exe.arg_dict[k][:] = v
    for k, v in aux.items():
        exe.aux_dict[k][:] = v
    exe.arg_dict["data"][:] = feeds["data"]
    out = exe.forward(is_train=False)[0].asnumpy()
    np.testing.assert_allclose(out, run_ort(model, feeds)[0], rtol=1e-4, atol=1e-6)


def test_metadata(tmp_path):
    model, _ = cnn_model()
    path = tmp_path / "cnn.onnx"
    onnx.save(model, str(path))
    meta = get_model_metadata(str(path))
    assert meta == {"input_tensor_data": [("data", (2, 3, 8, 8), TensorProto.FLOAT)],
                    "output_tensor_data": [("prob", ())]}
    assert get_model_metadata(model) == meta


def test_embedding_model():
    """Gather on a weight (an embedding), mean over the sequence, a dense head."""
    inits = {"emb": rand(20, 8), "w": rand(8, 3), "b": rand(3)}
    nodes = [helper.make_node("Gather", ["emb", "tokens"], ["e"], name="embedding"),
             helper.make_node("ReduceMean", ["e"], ["m"], axes=[1], keepdims=0),
             helper.make_node("MatMul", ["m", "w"], ["h"]),
             helper.make_node("Add", ["h", "b"], ["y"])]
    tokens = np.array([[1, 5, 19, 0], [3, 3, 7, 2]], I64)
    model = make_model(nodes, {"tokens": tokens}, ["y"], inits, 13)
    check(model, {"tokens": tokens})
    _, args, _ = import_graph(model)
    assert sorted(args) == ["b", "emb", "w"]


def test_shape_arithmetic_folds():
    """PyTorch's flatten: Shape -> Gather -> Unsqueeze -> Concat -> Reshape, plus Constant
    nodes; all folded at import, so nothing of it reaches the parameters."""
    nodes = [
        helper.make_node("Shape", ["x"], ["s"]),
        helper.make_node("Constant", [], ["zero"], value=numpy_helper.from_array(
            np.array(0, I64))),
        helper.make_node("Gather", ["s", "zero"], ["n"], axis=0),
        helper.make_node("Unsqueeze", ["n", "ax"], ["n1"]),
        helper.make_node("Constant", [], ["minus1"], value_ints=[-1]),
        helper.make_node("Concat", ["n1", "minus1"], ["shape"], axis=0),
        helper.make_node("Reshape", ["x", "shape"], ["flat"]),
        helper.make_node("Constant", [], ["two"], value_float=2.0),
        helper.make_node("Mul", ["flat", "two"], ["y"]),
    ]
    x = rand(3, 2, 4)
    model = make_model(nodes, {"x": x}, ["y"], {"ax": np.array([0], I64)}, 13)
    check(model, {"x": x})
    sym, args, aux = import_graph(model)
    assert args == {} and aux == {} and sym.list_arguments() == ["x"]


def test_constant_as_tensor_is_a_parameter():
    c = rand(2, 3)
    nodes = [helper.make_node("Constant", [], ["c"], value=numpy_helper.from_array(c)),
             helper.make_node("Add", ["x", "c"], ["y"])]
    x = rand(2, 3)
    model = make_model(nodes, {"x": x}, ["y"], {}, 13)
    check(model, {"x": x})
    _, args, _ = import_graph(model)
    np.testing.assert_array_equal(args["c"].asnumpy(), c)


def test_several_outputs():
    nodes = [helper.make_node("Relu", ["x"], ["a"]), helper.make_node("Neg", ["x"], ["b"])]
    x = rand(2, 3)
    model = make_model(nodes, {"x": x}, ["a", "b"], {}, 13)
    check(model, {"x": x})
    assert len(import_graph(model)[0].list_outputs()) == 2


def test_unsupported_op_names_node():
    nodes = [helper.make_node("NonMaxSuppression", ["x", "s"], ["y"], name="nms_1")]
    model = make_model(nodes, {"x": rand(1, 2, 4), "s": rand(1, 1, 2)}, ["y"], {}, 13)
    with pytest.raises(ValueError) as e:
        import_graph(model)
    msg = str(e.value)
    for part in ("'nms_1'", "'NonMaxSuppression'", "'ai.onnx'", "opset 13", "not supported"):
        assert part in msg


def test_other_domain_refused():
    node = helper.make_node("FusedConv", ["x"], ["y"], name="f", domain="com.microsoft")
    g = helper.make_graph([node], "g", [helper.make_tensor_value_info("x", 1, [1])],
                          [helper.make_tensor_value_info("y", 1, [1])])
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 13),
                                            helper.make_opsetid("com.microsoft", 1)])
    with pytest.raises(ValueError, match=r"'f'.*FusedConv.*com\.microsoft"):
        import_graph(m)


def test_non_constant_shape_input_is_explained():
    nodes = [helper.make_node("Reshape", ["x", "s"], ["y"], name="reshape_dyn")]
    model = make_model(nodes, {"x": rand(2, 3), "s": np.array([3, 2], I64)}, ["y"], {}, 13)
    with pytest.raises(ValueError, match=r"reshape_dyn.*input 1 \(shape.*must be a constant"):
        import_graph(model)


def test_missing_file():
    with pytest.raises(FileNotFoundError, match="nope.onnx"):
        import_model("nope.onnx")


def test_bytes_and_proto_inputs():
    model, feeds = cnn_model()
    a = run_ours(model, feeds)[0]
    b = run_ours(onnx.load_from_string(model.SerializeToString()), feeds)[0]
    np.testing.assert_array_equal(a, b)


def _dynamic_flatten(extra=()):
    """x (N, 3, 4) with N a dim_param, flattened through Shape arithmetic."""
    nodes = [helper.make_node("Shape", ["x"], ["s"]),
             helper.make_node("Gather", ["s", "zero"], ["n"], axis=0),
             helper.make_node("Unsqueeze", ["n", "ax"], ["n1"]),
             helper.make_node("Concat", ["n1", "minus1"], ["shape"], axis=0),
             *extra,
             helper.make_node("Reshape", ["x", "shape"], ["y"])]
    inits = {"zero": np.array(0, I64), "ax": np.array([0], I64), "minus1": np.array([-1], I64)}
    g = helper.make_graph(nodes, "dyn", [helper.make_tensor_value_info("x", 1, ["N", 3, 4])],
                          [helper.make_tensor_value_info("y", 1, None)],
                          [numpy_helper.from_array(v, k) for k, v in inits.items()])
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)])
    m.ir_version = 8
    return m


def test_dynamic_batch_reshape():
    model = _dynamic_flatten()
    for n in (1, 5):
        x = rand(n, 3, 4)
        check(model, {"x": x})
    assert get_model_metadata(model)["input_tensor_data"][0][1] == (0, 3, 4)


def test_dynamic_dimension_as_float_is_refused():
    cast = helper.make_node("Cast", ["n1"], ["nf"], name="to_float", to=TensorProto.FLOAT)
    with pytest.raises(ValueError, match=r"'to_float'.*dimension 0 of 'x'"):
        import_graph(_dynamic_flatten([cast]))


def test_node_names_that_repeat_stay_apart():
    """A node named like a graph input, and two nodes with one name (onnxruntime refuses
    those; onnx's checker lets them through), import and run."""
    nodes = [helper.make_node("Relu", ["x"], ["a"], name="x"),
             helper.make_node("Neg", ["a"], ["b"], name="same"),
             helper.make_node("Add", ["b", "w"], ["y"], name="same")]
    x, w = rand(2, 3), rand(3)
    model = make_model(nodes, {"x": x}, ["y"], {"w": w}, 13)
    np.testing.assert_allclose(run_ours(model, {"x": x})[0], -np.maximum(x, 0) + w,
                               rtol=1e-6)
    sym, args, _ = import_graph(model)
    assert sym.list_arguments() == ["x", "w"] and list(args) == ["w"]
