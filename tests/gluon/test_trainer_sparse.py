"""gluon.Parameter with sparse storage and gluon.Trainer with sparse weights and gradients:
MXNet 1.9.1's row_sparse_data through the kvstore, its kvstore choice, lazy updates."""
import json

import numpy as np
import pytest

import gluon
from core import autograd, cpu, nd
from gluon import Parameter, ParameterDict, Trainer, nn
from tests.mxnet_ref import requires_mxnet, run_mxnet

CTX2 = [cpu(0), cpu(1)]


def _rsp_param(name="w", shape=(6, 2), ctx=None, init="zeros", **kwargs):
    p = Parameter(name, shape=shape, stype="row_sparse", grad_stype="row_sparse", **kwargs)
    p.initialize(init=init, ctx=ctx or [cpu(0)])
    return p


def test_sparse_parameter_storage_and_grad_stype():
    p = _rsp_param(ctx=CTX2, init="ones")
    assert p._data[0].stype == "row_sparse"
    assert all(g.stype == "row_sparse" for g in p.list_grad())
    q = Parameter("q", shape=(3, 2), grad_stype="row_sparse")
    q.initialize(ctx=CTX2)
    assert q.data(cpu(1)).stype == "default" and q.grad(cpu(1)).stype == "row_sparse"


def test_row_sparse_data_needs_a_trainer_and_pulls_rows():
    p = _rsp_param(ctx=CTX2, init="ones")
    rows = nd.array([1, 4], ctx=cpu(1))
    with pytest.raises(RuntimeError, match="no Trainer"):
        p.row_sparse_data(rows)
    Trainer([p], "sgd")
    got = p.row_sparse_data(rows)
    assert got.context == cpu(1) and got.stype == "row_sparse" and got.shape == (6, 2)
    want = np.zeros((6, 2), np.float32)
    want[[1, 4]] = 1
    np.testing.assert_array_equal(got.asnumpy(), want)
    assert [a.context for a in p.list_row_sparse_data(nd.arange(0, 6))] == CTX2


def test_multiple_trainers_for_a_sparse_parameter_refused():
    p = _rsp_param()
    Trainer([p], "sgd")
    with pytest.raises(RuntimeError, match="More than one trainer"):
        Trainer([p], "sgd")


@pytest.mark.multi_device
def test_sparse_weight_step_updates_the_store_lazily():
    p = _rsp_param(ctx=CTX2, init="ones")
    trainer = Trainer([p], "sgd", {"learning_rate": 0.5, "wd": 0.1})
    rows = nd.array([0, 2, 3])
    with autograd.record():
        for i, w in enumerate(p.list_row_sparse_data(rows)):
            # the embedding's sparse gradient holds the rows it looked up
            emb = nd.Embedding(rows.as_in_context(w.context), w, input_dim=6, output_dim=2,
                               sparse_grad=True)
            (emb * (i + 1)).sum().backward()
    trainer.step(1)
    assert trainer._update_on_kvstore is True and trainer._kvstore is not None
    got = p.row_sparse_data(nd.arange(0, 6)).asnumpy()
    want = np.ones((6, 2), np.float32)
    # the pulled rows had gradient 1 + 2 (two contexts); the others are untouched (lazy)
    want[[0, 2, 3]] = (1 - 0.5 * 0.1) * 1 - 0.5 * 3
    np.testing.assert_allclose(got, want, rtol=1e-6)


def test_sparse_weight_on_one_context_still_uses_a_store():
    p = _rsp_param()
    trainer = Trainer([p], "sgd", update_on_kvstore=None)
    trainer._init_kvstore()
    assert trainer._kvstore is not None and trainer._update_on_kvstore is True
    t2 = Trainer([_rsp_param("v")], "sgd", update_on_kvstore=False)
    with pytest.raises(ValueError, match="update_on_kvstore=False when sparse weights"):
        t2._init_kvstore()


@pytest.mark.multi_device
def test_dense_weight_sparse_grad_updates_on_replicas():
    x = Parameter("x", shape=(4, 1), grad_stype="row_sparse")
    x.initialize(ctx=CTX2, init="zeros")
    trainer = Trainer([x], "sgd", {"learning_rate": 0.1})
    with autograd.record():
        for w in x.list_data():
            (w + 1).sum().backward()
    trainer.step(1)
    assert trainer._update_on_kvstore is False
    for c in CTX2:
        np.testing.assert_allclose(x.data(c).asnumpy(), -0.2 * np.ones((4, 1)), rtol=1e-6)


def test_save_load_sparse_parameter_into_dense_and_back(tmp_path):
    params = ParameterDict("net_")
    params.get("w0", shape=(4, 3))
    params.get("w1", shape=(4, 3), stype="row_sparse")
    params.initialize(ctx=cpu(0))
    Trainer(params, "sgd")
    before = params.get("w1").row_sparse_data(nd.arange(0, 4)).asnumpy()
    path = str(tmp_path / "p.params")
    params.save(path)
    dense = ParameterDict("net_")
    dense.get("w0", shape=(4, 3))
    dense.get("w1", shape=(4, 3))
    dense.load(path, cpu(0))
    np.testing.assert_array_equal(dense.get("w1").data().asnumpy(), before)
    sparse = ParameterDict("net_")
    sparse.get("w0", shape=(4, 3))
    sparse.get("w1", shape=(4, 3), stype="row_sparse")
    sparse.load(path, cpu(0))
    Trainer(sparse, "sgd")
    np.testing.assert_array_equal(
        sparse.get("w1").row_sparse_data(nd.arange(0, 4)).asnumpy(), before)


def test_embedding_sparse_grad_is_row_sparse():
    layer = nn.Embedding(10, 4, sparse_grad=True)
    layer.initialize()
    with autograd.record():
        y = layer(nd.array([3, 4, 3, 0]))
    y.backward()
    g = layer.weight.grad()
    assert g.stype == "row_sparse"
    assert sorted(g.indices.asnumpy().tolist()) == [0, 3, 4]
    want = np.zeros((10, 4), np.float32)
    want[3], want[4], want[0] = 2, 1, 1
    np.testing.assert_array_equal(g.asnumpy(), want)
    assert g.data.sum().asscalar() == 16


def test_clip_global_norm_of_sparse_arrays():
    from gluon.utils import clip_global_norm
    a = nd.ones((3, 3)).tostype("row_sparse")
    b = nd.ones((4, 4)).tostype("row_sparse")
    assert clip_global_norm([a, b], 1.0) == pytest.approx(5.0)
    np.testing.assert_allclose(a.asnumpy(), np.ones((3, 3)) / 5, rtol=1e-6)
    assert a.stype == "row_sparse"


class _EmbedDense(gluon.Block):
    """MXNet's test_trainer_multi_layer_init model: a row_sparse embedding weight read
    with row_sparse_data in forward, then a deferred-initialized Dense layer."""

    def __init__(self, **kwargs):
        super().__init__(**kwargs)
        with self.name_scope():
            self.embed_weight = self.params.get("embed_weight", stype="row_sparse",
                                                shape=(4, 3), grad_stype="row_sparse")
            self.dense0 = nn.Dense(2)

    def forward(self, x):
        w = self.embed_weight.row_sparse_data(x)
        return self.dense0(nd.Embedding(x, w, input_dim=4, output_dim=3, sparse_grad=True))


@pytest.mark.multi_device
@pytest.mark.parametrize("ctxs", [[cpu(1), cpu(2)], [cpu(1)]])
def test_row_sparse_pull_in_forward_with_deferred_dense_layer(ctxs):
    from core import initializer
    from gluon.utils import split_and_load
    net = _EmbedDense(prefix="net_")
    net.initialize(initializer.One(), ctx=ctxs)
    trainer = Trainer(net.collect_params(), "sgd", {"learning_rate": 1})
    xs = split_and_load(nd.array([[0, 2], [1, 2]]), ctxs)
    with autograd.record():
        ys = [net(x) for x in xs]
    for y in ys:
        y.backward()
    trainer.step(1)
    assert not trainer._params_to_init
    weight = net.embed_weight.row_sparse_data(nd.arange(0, 4, ctx=cpu(1))).asnumpy()
    np.testing.assert_array_equal(weight[:, 0], [-1, -1, -3, 1])


def test_symbol_block_refuses_a_row_sparse_variable():
    from core import sym
    from gluon import SymbolBlock
    data = sym.var("data")
    out = sym.broadcast_add(sym.dot(data, sym.var("weight", stype="row_sparse")),
                            sym.var("bias"))
    with pytest.raises(AssertionError, match="Parameter 'weight' because its storage type is "
                                             "'row_sparse'"):
        SymbolBlock(out, data)
    dense = sym.dot(data, sym.var("weight", stype="csr"))  # csr weights are accepted
    assert "weight" in list(SymbolBlock(dense, data).collect_params().keys())


@requires_mxnet
def test_real_mxnet_loads_a_saved_row_sparse_parameter(tmp_path):
    params = ParameterDict("net_")
    params.get("w", shape=(5, 2), stype="row_sparse")
    params.initialize(ctx=cpu(0))
    Trainer(params, "sgd")
    want = params.get("w").row_sparse_data(nd.arange(0, 5)).asnumpy()
    path = str(tmp_path / "p.params")
    params.save(path)
    out = run_mxnet("import json, mxnet as mx\n"
                    f"d = mx.nd.load({path!r})['net_w']\n"
                    "print(json.dumps([d.stype, d.asnumpy().tolist()]))\n")
    stype, values = json.loads(out.strip().splitlines()[-1])
    assert stype == "row_sparse"
    np.testing.assert_allclose(values, want, rtol=1e-7)


def test_reset_kvstore_keeps_the_trained_row_sparse_weight():
    w = _rsp_param("w", shape=(3, 2), init="ones")
    b = Parameter("b", shape=(2,), init="zeros")
    b.initialize()
    trainer = Trainer([w, b], "sgd", {"learning_rate": 1.0})
    rows = nd.array([1])
    with autograd.record():
        emb = nd.Embedding(rows, w.row_sparse_data(rows), input_dim=3, output_dim=2,
                           sparse_grad=True)
        ((emb + b.data()).sum()).backward()
    trainer.step(1)
    trained = w.row_sparse_data(nd.arange(0, 3)).asnumpy()
    np.testing.assert_array_equal(trained[:, 0], [1, 0, 1])
    w.row_sparse_data(nd.array([0]))  # the replica now holds row 0 only
    b.set_data(nd.array([5.0, 5.0]))  # drops the store (MXNet's _reset_kvstore)
    assert trainer._kvstore is None
    np.testing.assert_array_equal(w.row_sparse_data(nd.arange(0, 3)).asnumpy(), trained)
