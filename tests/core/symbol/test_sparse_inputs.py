"""Symbols with sparse inputs: sym.var(stype=), sym.sparse / sym._internal names, an
executor fed sparse arrays (read densely), and Module's sparse parameters."""
import numpy as np
import pytest

from core import initializer as init
from core import io, nd, sym
from core import module as mod


def test_var_stype_attribute():
    assert sym.var("x", stype="csr").list_attr()["__storage_type__"] == "2"
    assert sym.var("w", stype="row_sparse").list_attr()["__storage_type__"] == "1"
    assert sym.var("d", stype="default").list_attr()["__storage_type__"] == "0"
    with pytest.raises(ValueError, match="stype must be one of"):
        sym.var("x", stype="coo")


def test_executor_reads_sparse_inputs_densely():
    rng = np.random.default_rng(0)
    x = rng.standard_normal((4, 6)).astype(np.float32)
    x[rng.random((4, 6)) > 0.5] = 0
    w = rng.standard_normal((6, 2)).astype(np.float32)
    y = sym.sparse.dot(sym.var("x", stype="csr"), sym.var("w", stype="row_sparse"))
    ex = y.bind(None, {"x": nd.array(x).tostype("csr"), "w": nd.array(w).tostype("row_sparse")})
    np.testing.assert_allclose(ex.forward()[0].asnumpy(), x @ w, rtol=1e-5, atol=1e-6)
    s = sym._internal._square_sum(sym.var("v"), axis=1, keepdims=True)
    out = s.bind(None, {"v": nd.array(w)}).forward()[0]
    np.testing.assert_allclose(out.asnumpy(), (w * w).sum(1, keepdims=True), rtol=1e-5)


def test_module_creates_sparse_parameters():
    x = sym.var("data", stype="csr")
    v = sym.var("v", shape=(5, 1), init=init.Constant(2.0), stype="row_sparse")
    net = sym.LinearRegressionOutput(sym.dot(x, v), sym.var("label"), name="out")
    data = nd.array(np.eye(8, 5, dtype=np.float32)).tostype("csr")
    it = io.NDArrayIter(data, {"label": nd.ones((8, 1))}, 4, last_batch_handle="discard")
    m = mod.Module(net, data_names=["data"], label_names=["label"])
    m.bind(data_shapes=it.provide_data, label_shapes=it.provide_label)
    m.init_params()
    p = m.get_params()[0]["v"]
    assert p.stype == "row_sparse" and (p.asnumpy() == 2).all()
    m.init_optimizer(optimizer_params={"learning_rate": 0.1})
    for b in it:
        m.forward(b, is_train=True)
        m.backward()
        m.update()
    assert np.isfinite(m.get_params()[0]["v"].asnumpy()).all()


def test_executor_outputs_take_mxnets_storage_types():
    from core.sparse.graph_storage import output_stypes

    w, x = sym.var("w"), sym.var("x")
    net = sym.Group([sym.elemwise_add(w, w), sym.dot(x, w), sym.abs(w) * 2, w + 1,
                     sym.dot(x, w, transpose_a=True)])
    got = output_stypes(net.graph, {"w": "row_sparse", "x": "csr"})
    assert got == ["row_sparse", "default", "row_sparse", "default", "row_sparse"]
    a = nd.array([[0, 1], [0, 0], [2, 3]]).tostype("row_sparse")
    ex = sym.elemwise_add(w, w).bind(None, {"w": a})
    out = ex.forward()[0]
    assert out.stype == "row_sparse"
    np.testing.assert_array_equal(out.asnumpy(), 2 * a.asnumpy())
    dense = sym.elemwise_add(w, w).bind(None, {"w": nd.ones((2, 2))}).forward()[0]
    assert dense.stype == "default"


def test_simple_bind_stype_dict_and_outputs_from_bind():
    w = sym.var("w")
    ex = sym.elemwise_add(w, w).simple_bind(None, w=(3, 2), stype_dict={"w": "row_sparse"})
    assert ex.arg_dict["w"].stype == "row_sparse"
    assert len(ex.outputs) == 1 and ex.outputs[0].shape == (3, 2)
    assert ex.outputs[0].stype == "row_sparse"
    ex.arg_dict["w"][:] = nd.ones((3, 2))
    np.testing.assert_array_equal(ex.forward()[0].asnumpy(), np.full((3, 2), 2))


def test_sparse_gradient_arrays_of_an_executor_keep_their_layout():
    w = sym.var("w")
    a = nd.array([[0, 1], [0, 0], [2, 3]])
    g = nd.sparse.zeros("row_sparse", (3, 2))
    ex = (w * 3).bind(None, {"w": a}, args_grad={"w": g})
    ex.forward(is_train=True)
    ex.backward([nd.array([[1, 1], [0, 0], [1, 0]])])
    assert ex.grad_dict["w"].stype == "row_sparse"
    assert ex.grad_dict["w"].indices.asnumpy().tolist() == [0, 2]
    np.testing.assert_array_equal(ex.grad_dict["w"].data.asnumpy(), [[3, 3], [3, 0]])
