"""ONNX import, one operator at a time: each case is a one-node (or few-node) model built
with ``onnx.helper``, run in onnxruntime and, after ``core.onnx.import_graph``, in our
executor; the outputs must agree. The helpers here are shared by the other import tests.
"""
from __future__ import annotations

import numpy as np
import pytest

onnx = pytest.importorskip("onnx")
ort = pytest.importorskip("onnxruntime")

from onnx import TensorProto, helper, numpy_helper

from core import nd
from core.onnx import import_graph

F = TensorProto.FLOAT
RNG = np.random.default_rng(0)


def rand(*shape, low=-1.0, high=1.0):
    return RNG.uniform(low, high, size=shape).astype(np.float32)


def make_model(nodes, inputs, outputs, inits=(), opset=17):
    """A model from nodes; ``inputs``: name -> array (graph inputs), ``outputs``: names;
    ``inits``: name -> array (initializers)."""
    inits = dict(inits)
    g = helper.make_graph(
        nodes, "case",
        [helper.make_tensor_value_info(n, helper.np_dtype_to_tensor_dtype(v.dtype), v.shape)
         for n, v in inputs.items()],
        [helper.make_empty_tensor_value_info(n) for n in outputs],
        [numpy_helper.from_array(v, n) for n, v in inits.items()])
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", opset)])
    m.ir_version = 8 if opset <= 17 else 9 if opset <= 20 else 10
    return m


def run_ort(model, feeds):
    sess = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
    return sess.run(None, feeds)


def run_ours(model, feeds):
    s, args, aux = import_graph(model)
    used = set(s.list_arguments())  # an input only read for its shape is folded away
    bind_args = {k: nd.array(v, dtype=v.dtype) for k, v in feeds.items() if k in used}
    bind_args.update(args)
    exe = s.bind(None, args=bind_args, aux_states=aux)
    return [o.asnumpy() for o in exe.forward(is_train=False)]


def run_reference(model, feeds):
    from onnx.reference import ReferenceEvaluator

    return ReferenceEvaluator(model).run(None, feeds)


def check(model, feeds, rtol=1e-5, atol=1e-5, reference=run_ort):
    """Our outputs equal ``reference``'s (onnxruntime; ``run_reference`` where it lacks
    an operator's form)."""
    want = reference(model, feeds)
    got = run_ours(model, feeds)
    assert len(got) == len(want)
    for g, w in zip(got, want):
        assert g.shape == w.shape, (g.shape, w.shape)
        if w.dtype == np.bool_ or w.dtype.kind in "iu":
            np.testing.assert_array_equal(g.astype(w.dtype), w)
        else:
            np.testing.assert_allclose(g, w, rtol=rtol, atol=atol)


def one(op, inputs, inits=(), opset=17, n_out=1, order=None, **attrs):
    """A one-node model: graph inputs, then initializers, as the node's inputs (or the
    names in ``order``)."""
    names = order or list(inputs) + list(dict(inits))
    outs = [f"y{i}" for i in range(n_out)]
    node = helper.make_node(op, names, outs, name=f"{op.lower()}0", **attrs)
    return make_model([node], inputs, outs, inits, opset)


X23 = rand(2, 3)
X4 = rand(2, 3, 4, 5)
I64 = np.int64

# (id, op, graph inputs, initializers, opset, attrs)
CASES = [
    ("add_bcast", "Add", {"a": X4, "b": rand(4, 5)}, {}, 13, {}),
    ("sub_rank1", "Sub", {"a": X4, "b": rand(5)}, {}, 13, {}),
    ("mul_scalar_init", "Mul", {"a": X23}, {"b": np.array(2.5, np.float32)}, 13, {}),
    ("div", "Div", {"a": X23, "b": rand(2, 1, low=0.5)}, {}, 13, {}),
    ("pow", "Pow", {"a": rand(2, 3, low=0.1)}, {"b": np.array([2.0], np.float32)}, 15, {}),
    ("max3", "Max", {"a": X23, "b": rand(3), "c": rand(2, 1)}, {}, 13, {}),
    ("min2", "Min", {"a": X23, "b": rand(3)}, {}, 13, {}),
    ("sum3", "Sum", {"a": X23, "b": rand(3), "c": rand(2, 3)}, {}, 13, {}),
    ("mean2", "Mean", {"a": X23, "b": rand(2, 3)}, {}, 13, {}),
    ("relu", "Relu", {"x": X4}, {}, 14, {}),
    ("leaky", "LeakyRelu", {"x": X4}, {}, 16, {"alpha": 0.2}),
    ("prelu", "PRelu", {"x": X4}, {"s": rand(3, 1, 1)}, 16, {}),
    ("elu", "Elu", {"x": X4}, {}, 7, {"alpha": 0.7}),
    ("selu", "Selu", {"x": X4}, {}, 7, {}),
    ("selu_attrs", "Selu", {"x": X4}, {}, 7, {"alpha": 1.5, "gamma": 2.0}),
    ("sigmoid", "Sigmoid", {"x": X4}, {}, 13, {}),
    ("tanh", "Tanh", {"x": X4}, {}, 13, {}),
    ("softplus", "Softplus", {"x": X4}, {}, 7, {}),
    ("softsign", "Softsign", {"x": X4}, {}, 7, {}),
    ("hardsigmoid", "HardSigmoid", {"x": X4}, {}, 7, {"alpha": 0.3, "beta": 0.4}),
    ("gelu", "Gelu", {"x": X4}, {}, 20, {}),
    ("gelu_tanh", "Gelu", {"x": X4}, {}, 20, {"approximate": "tanh"}),
    ("hardswish", "HardSwish", {"x": X4 * 4}, {}, 14, {}),
    ("mish", "Mish", {"x": X4 * 3}, {}, 18, {}),
    ("erf", "Erf", {"x": X4}, {}, 13, {}),
    ("exp", "Exp", {"x": X4}, {}, 13, {}),
    ("log", "Log", {"x": rand(3, 4, low=0.1)}, {}, 13, {}),
    ("sqrt", "Sqrt", {"x": rand(3, 4, low=0.1)}, {}, 13, {}),
    ("abs", "Abs", {"x": X4}, {}, 13, {}),
    ("neg", "Neg", {"x": X4}, {}, 13, {}),
    ("reciprocal", "Reciprocal", {"x": rand(3, 4, low=0.5)}, {}, 13, {}),
    ("floor", "Floor", {"x": X4 * 3}, {}, 13, {}),
    ("ceil", "Ceil", {"x": X4 * 3}, {}, 13, {}),
    ("clip_attr", "Clip", {"x": X4}, {}, 7, {"min": -0.3, "max": 0.5}),
    ("clip_input", "Clip", {"x": X4}, {"lo": np.array(-0.2, np.float32),
                                      "hi": np.array(0.4, np.float32)}, 13, {}),
    ("softmax13", "Softmax", {"x": X4}, {}, 13, {"axis": 1}),
    ("softmax11_coerce", "Softmax", {"x": X4}, {}, 11, {"axis": 1}),
    ("softmax11_axis2", "Softmax", {"x": X4}, {}, 11, {"axis": 2}),
    ("logsoftmax11", "LogSoftmax", {"x": X4}, {}, 11, {}),
    ("logsoftmax13", "LogSoftmax", {"x": X4}, {}, 13, {}),
    ("reducesum_attr", "ReduceSum", {"x": X4}, {}, 11, {"axes": [1, 3], "keepdims": 0}),
    ("reducesum_input", "ReduceSum", {"x": X4}, {"ax": np.array([-1], I64)}, 13, {}),
    ("reducesum_all", "ReduceSum", {"x": X4}, {}, 13, {"keepdims": 0}),
    ("reducemean", "ReduceMean", {"x": X4}, {}, 13, {"axes": [2]}),
    ("reducemean18", "ReduceMean", {"x": X4}, {"ax": np.array([1, 2], I64)}, 18, {}),
    ("reducemax", "ReduceMax", {"x": X4}, {}, 13, {"axes": [0], "keepdims": 0}),
    ("reducemin", "ReduceMin", {"x": X4}, {}, 13, {"axes": [3]}),
    ("reduceprod", "ReduceProd", {"x": X4}, {}, 13, {"axes": [1]}),
    ("reducel2", "ReduceL2", {"x": X4}, {}, 13, {"axes": [1, 2]}),
    ("reducelogsumexp", "ReduceLogSumExp", {"x": X4}, {}, 13, {"axes": [3], "keepdims": 0}),
    ("reducel1", "ReduceL1", {"x": X4}, {}, 13, {"axes": [0, 3]}),
    ("reducesumsquare18", "ReduceSumSquare", {"x": X4}, {"ax": np.array([2], I64)}, 18,
     {"keepdims": 0}),
    ("celu", "Celu", {"x": X4 * 3}, {}, 12, {"alpha": 0.7}),
    ("thresholdedrelu", "ThresholdedRelu", {"x": X4 * 3}, {}, 10, {"alpha": 0.5}),
    ("round", "Round", {"x": np.array([0.5, 1.5, -2.5, 2.4], np.float32)}, {}, 11, {}),
    ("sign", "Sign", {"x": X4}, {}, 13, {}),
    ("xor", "Xor", {"a": np.array([True, False, True]), "b": np.array([True, True, False])},
     {}, 7, {}),
    ("isnan", "IsNaN", {"x": np.array([1.0, np.nan], np.float32)}, {}, 13, {}),
    ("argmax", "ArgMax", {"x": X4}, {}, 13, {"axis": 2}),
    ("argmin", "ArgMin", {"x": X4}, {}, 13, {"axis": -1, "keepdims": 0}),
    ("equal", "Equal", {"a": np.array([1, 2, 3], np.float32),
                        "b": np.array([1, 0, 3], np.float32)}, {}, 13, {}),
    ("greater", "Greater", {"a": X23, "b": rand(3)}, {}, 13, {}),
    ("less", "Less", {"a": X23, "b": rand(2, 1)}, {}, 13, {}),
    ("and", "And", {"a": np.array([True, False, True]), "b": np.array([True, True, False])},
     {}, 7, {}),
    ("not", "Not", {"a": np.array([True, False])}, {}, 7, {}),
    ("where", "Where", {"c": np.array([True, False, True]), "a": rand(2, 3), "b": rand(3)},
     {}, 16, {}),
    ("cast", "Cast", {"x": X4 * 4}, {}, 13, {"to": TensorProto.INT32}),
    ("concat", "Concat", {"a": X4, "b": rand(2, 2, 4, 5)}, {}, 13, {"axis": 1}),
    ("concat_neg", "Concat", {"a": X4, "b": rand(2, 3, 4, 1)}, {}, 13, {"axis": -1}),
    ("reshape", "Reshape", {"x": X4}, {"s": np.array([0, -1, 5], I64)}, 13, {}),
    ("reshape_opset7", "Reshape", {"x": X4}, {"s": np.array([2, 12, 5], I64)}, 7, {}),
    ("reshape_allowzero", "Reshape", {"x": np.zeros((0, 3), np.float32)},
     {"s": np.array([3, 0], I64)}, 14, {"allowzero": 1}),
    ("flatten1", "Flatten", {"x": X4}, {}, 13, {}),
    ("flatten0", "Flatten", {"x": X4}, {}, 13, {"axis": 0}),
    ("flatten2", "Flatten", {"x": X4}, {}, 13, {"axis": 2}),
    ("flatten_neg", "Flatten", {"x": X4}, {}, 13, {"axis": -1}),
    ("transpose", "Transpose", {"x": X4}, {}, 13, {"perm": [0, 2, 3, 1]}),
    ("transpose_default", "Transpose", {"x": X4}, {}, 13, {}),
    ("squeeze_attr", "Squeeze", {"x": rand(2, 1, 3, 1)}, {}, 11, {"axes": [1]}),
    ("squeeze_input", "Squeeze", {"x": rand(2, 1, 3, 1)}, {"ax": np.array([-1], I64)}, 13, {}),
    ("squeeze_all", "Squeeze", {"x": rand(2, 1, 3, 1)}, {}, 13, {}),
    ("unsqueeze_attr", "Unsqueeze", {"x": X23}, {}, 11, {"axes": [0, 3]}),
    ("unsqueeze_input", "Unsqueeze", {"x": X23}, {"ax": np.array([1, -1], I64)}, 13, {}),
    ("slice_attr", "Slice", {"x": X4}, {}, 9, {"starts": [1, 0], "ends": [3, 2], "axes": [1, 3]}),
    ("slice_steps", "Slice", {"x": X4}, {"st": np.array([0, -1], I64),
                                         "en": np.array([2**62, -2**62], I64),
                                         "ax": np.array([2, 3], I64),
                                         "sp": np.array([2, -2], I64)}, 13, {}),
    ("slice_neg", "Slice", {"x": X4}, {"st": np.array([-3], I64), "en": np.array([-1], I64)},
     13, {}),
    ("gather_embed", "Gather", {"i": np.array([[0, 3], [2, -1]], I64)}, {"w": rand(5, 4)}, 13,
     {"order": ["w", "i"]}),
    ("gather_axis1", "Gather", {"x": X4, "i": np.array([2, 0], I64)}, {}, 13, {"axis": 1}),
    ("gather_scalar", "Gather", {"x": X4, "i": np.array(1, I64)}, {}, 13, {"axis": 2}),
    ("gather_elements", "GatherElements", {"x": X4, "i": RNG.integers(-3, 3, (2, 3, 2, 5))},
     {}, 13, {"axis": 1}),
    ("cumsum", "CumSum", {"x": X4}, {"ax": np.array(-2, I64)}, 14, {}),
    ("einsum_matmul", "Einsum", {"a": rand(2, 3, 4), "b": rand(2, 4, 5)}, {}, 12,
     {"equation": "bij,bjk->bik"}),
    ("einsum_attention", "Einsum", {"q": rand(2, 5, 4, 8), "k": rand(2, 6, 4, 8)}, {}, 12,
     {"equation": "bqhd, bkhd -> bhqk"}),
    ("mod", "Mod", {"a": np.array([-3, 5, 7], I64), "b": np.array([2, -3, 4], I64)}, {}, 13,
     {}),
    ("depth_to_space_dcr", "DepthToSpace", {"x": rand(2, 8, 3, 4)}, {}, 13, {"blocksize": 2}),
    ("depth_to_space_crd", "DepthToSpace", {"x": rand(2, 8, 3, 4)}, {}, 13,
     {"blocksize": 2, "mode": "CRD"}),
    ("space_to_depth", "SpaceToDepth", {"x": rand(2, 3, 4, 6)}, {}, 13, {"blocksize": 2}),
    ("tile", "Tile", {"x": X23}, {"r": np.array([2, 3], I64)}, 13, {}),
    ("expand", "Expand", {"x": rand(3, 1)}, {"s": np.array([2, 1, 4], I64)}, 13, {}),
    ("pad_const", "Pad", {"x": X4}, {"p": np.array([0, 0, 1, 2, 0, 1, 0, 3], I64),
                                     "v": np.array(1.5, np.float32)}, 13, {}),
    ("pad_reflect", "Pad", {"x": X4}, {"p": np.array([0, 0, 1, 2, 0, 0, 2, 1], I64)}, 13,
     {"mode": "reflect"}),
    ("pad_edge_axes", "Pad", {"x": X4}, {"p": np.array([1, 2, 2, 0], I64),
                                         "v": np.array(0, np.float32),
                                         "ax": np.array([2, -1], I64)}, 18, {"mode": "edge"}),
    ("pad_attr", "Pad", {"x": X4}, {}, 7, {"pads": [0, 0, 1, 1, 0, 0, 1, 1], "value": 2.0}),
    ("size", "Size", {"x": X4}, {}, 13, {}),
    ("shape_start", "Shape", {"x": X4}, {}, 15, {"start": 1, "end": -1}),
    ("identity", "Identity", {"x": X4}, {}, 13, {}),
    ("dropout", "Dropout", {"x": X4}, {}, 13, {}),
    ("dropout7", "Dropout", {"x": X4}, {}, 7, {"ratio": 0.3}),
]


@pytest.mark.parametrize("case", CASES, ids=[c[0] for c in CASES])
def test_op(case):
    _cid, op, inputs, inits, opset, attrs = case
    model = one(op, inputs, inits, opset, **attrs)
    check(model, inputs)


def test_topk_outputs():
    x = rand(3, 7)
    check(one("TopK", {"x": x}, {"k": np.array([3], I64)}, 11, n_out=2, axis=1), {"x": x})
    check(one("TopK", {"x": x}, {"k": np.array([2], I64)}, 11, n_out=2, axis=0, largest=0),
          {"x": x})
    check(one("TopK", {"x": x}, {}, 9, n_out=2, k=4), {"x": x})


def test_split_outputs():
    x = rand(6, 4)
    for opset, inits, attrs, n in [(11, {}, {"axis": 0, "split": [2, 4]}, 2),
                                   (13, {"s": np.array([1, 2, 3], I64)}, {"axis": 0}, 3),
                                   (13, {}, {"axis": 1}, 2),
                                   (18, {}, {"axis": 0, "num_outputs": 4}, 4)]:
        check(one("Split", {"x": x}, inits, opset, n_out=n, **attrs), {"x": x})
