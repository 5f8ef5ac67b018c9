"""core.module.Module: bind, params, optimizer, fit/score/predict, checkpoints, contexts."""
from __future__ import annotations

import json
import logging

import numpy as np
import pytest

from core import context, io, metric, nd, optimizer, sym
from core.module import Module
from tests.core.module._nets import as_nd, data, init_params, mlp
from tests.mxnet_ref import requires_mxnet, run_mxnet


def _bound(net=None, batch_size=10, ctx=None, **bind):
    x, y = data()
    it = io.NDArrayIter(x, y, batch_size=batch_size)
    m = Module(net if net is not None else mlp(), context=ctx)
    m.bind(it.provide_data, it.provide_label, **bind)
    return m, it


def _start(m, seed=1):
    _arg, _aux = m.get_params() if m.params_initialized else (None, None)
    shapes = {k: v.shape for k, v in m._arg_params.items()}
    m.init_params(arg_params=as_nd(init_params(shapes, seed)), aux_params=None,
                  allow_missing=True, force_init=True)


def test_fit_learns_and_score_predict():
    from core.initializer import Xavier
    x, y = data()
    it = io.NDArrayIter(x, y, batch_size=10, shuffle=True)
    m = Module(mlp())
    m.fit(it, num_epoch=40, initializer=Xavier(),
          optimizer_params={"learning_rate": 0.1, "momentum": 0.9})
    (name, acc), = m.score(it, "acc")
    assert name == "accuracy" and acc > 0.8
    x, y = data()
    out = m.predict(io.NDArrayIter(x, y, batch_size=7))  # 60 = 8*7 + 4: last batch padded
    assert out.shape == (60, 3)
    np.testing.assert_allclose(out.asnumpy().sum(axis=1), 1, rtol=1e-5)
    direct = m.predict(nd.array(x[:10]))
    np.testing.assert_allclose(direct.asnumpy(), out.asnumpy()[:10], rtol=1e-5, atol=1e-6)
    batches = list(m.iter_predict(io.NDArrayIter(x, y, batch_size=7)))
    assert [o[0].shape[0] for o, _, _ in batches][-2:] == [7, 4]
    unmerged = m.predict(io.NDArrayIter(x, y, batch_size=20), merge_batches=False)
    assert len(unmerged) == 3 and unmerged[0][0].shape == (20, 3)


def test_forward_backward_update_by_hand_matches_sgd():
    m, it = _bound()
    _start(m)
    m.init_optimizer(optimizer="sgd", optimizer_params={"learning_rate": 0.1})
    before = {k: v.asnumpy().copy() for k, v in m.get_params()[0].items()}
    batch = next(it)
    m.forward(batch, is_train=True)
    m.backward()
    grads = {n: g[0].asnumpy().copy() for n, g in
             zip(m._exec_group.param_names, m._exec_group.grad_arrays)}
    m.update()
    after = m.get_params()[0]
    for k, w0 in before.items():  # rescale_grad = 1/batch_size
        np.testing.assert_allclose(after[k].asnumpy(), w0 - 0.1 * grads[k] / 10,
                                   rtol=1e-5, atol=1e-6)
    assert m.output_shapes == [("softmax_output", (10, 3))]
    assert m.data_shapes[0].shape == (10, 6) and m.label_shapes[0].name == "softmax_label"


def test_input_grads_fixed_params_and_grad_req_add():
    m, it = _bound(inputs_need_grad=True)
    m2 = Module(mlp(), fixed_param_names=["fc1_weight"])
    m2.bind(it.provide_data, it.provide_label)
    for mod in (m, m2):
        _start(mod)
        mod.init_optimizer(optimizer_params={"learning_rate": 1.0})
    batch = next(it)
    m.forward_backward(batch)
    g = m.get_input_grads()[0]
    assert g.shape == (10, 6) and float(np.abs(g.asnumpy()).sum()) > 0
    w0 = m2.get_params()[0]["fc1_weight"].asnumpy().copy()
    m2.forward_backward(batch)
    m2.update()
    np.testing.assert_array_equal(m2.get_params()[0]["fc1_weight"].asnumpy(), w0)
    m3, _ = _bound(grad_req="add")
    _start(m3)
    m3.forward_backward(batch)
    g1 = m3._exec_group.grad_arrays[0][0].asnumpy().copy()
    m3.forward_backward(batch)
    np.testing.assert_allclose(m3._exec_group.grad_arrays[0][0].asnumpy(), 2 * g1, rtol=1e-5)


def test_reshape_on_a_smaller_batch_keeps_params():
    m, _ = _bound()
    _start(m)
    w = m._exec_group.param_arrays[0][0]
    x, _ = data()
    m.forward(io.DataBatch([nd.array(x[:4])]), is_train=False)
    assert m.get_outputs()[0].shape == (4, 3)
    assert m._exec_group.param_arrays[0][0] is w


@pytest.mark.parametrize("kvstore,env", [("local", "1"), ("local", "0"), ("device", "1")])
def test_two_contexts_train_like_one(monkeypatch, kvstore, env):
    monkeypatch.setenv("MXNET_UPDATE_ON_KVSTORE", env)
    results = []
    for ctx in (context.cpu(0), [context.cpu(0), context.cpu(1)]):
        m, it = _bound(ctx=ctx)
        _start(m)
        m.fit(it, num_epoch=3, kvstore=kvstore,
              optimizer_params={"learning_rate": 0.3, "momentum": 0.9, "wd": 1e-3})
        results.append(({k: v.asnumpy() for k, v in m.get_params()[0].items()},
                        m.predict(it).asnumpy()))
    (p1, o1), (p2, o2) = results
    for k in p1:
        np.testing.assert_allclose(p1[k], p2[k], rtol=1e-4, atol=1e-5, err_msg=k)
    np.testing.assert_allclose(o1, o2, rtol=1e-4, atol=1e-5)


def test_uneven_work_load_splits_the_batch():
    _m, it = _bound(ctx=[context.cpu(0), context.cpu(1)])
    m2 = Module(mlp(), context=[context.cpu(0), context.cpu(1)], work_load_list=[1, 4])
    m2.bind(it.provide_data, it.provide_label)
    assert [s.stop - s.start for s in m2._exec_group.slices] == [2, 8]
    assert m2._exec_group.execs[1].arg_dict["data"].context == context.cpu(1)


def test_checkpoint_with_optimizer_states_resumes_exactly(tmp_path):
    prefix = str(tmp_path / "mlp")
    opt_params = {"learning_rate": 0.1, "momentum": 0.9}
    m, it = _bound()
    _start(m)
    m.fit(it, num_epoch=2, optimizer_params=opt_params)
    m.save_checkpoint(prefix, 2, save_optimizer_states=True)
    for suffix in ("-symbol.json", "-0002.params", "-0002.states"):
        assert (tmp_path / f"mlp{suffix}").is_file()
    m.fit(it, num_epoch=3, begin_epoch=2, optimizer_params=opt_params)
    resumed = Module.load(prefix, 2, load_optimizer_states=True)
    resumed.fit(it, num_epoch=3, begin_epoch=2, optimizer_params=opt_params)
    a, b = m.get_params()[0], resumed.get_params()[0]
    for k in a:
        np.testing.assert_allclose(a[k].asnumpy(), b[k].asnumpy(), rtol=1e-5, atol=1e-6)
    fresh = Module.load(prefix, 2)  # without the states momentum restarts: different
    fresh.fit(it, num_epoch=3, begin_epoch=2, optimizer_params=opt_params)
    assert not np.allclose(a["fc1_weight"].asnumpy(), fresh.get_params()[0]["fc1_weight"]
                           .asnumpy())


def test_save_and_load_params(tmp_path):
    m, it = _bound(net=mlp(batchnorm=True))
    _start(m)
    m.fit(it, num_epoch=1)
    m.save_params(str(tmp_path / "p.params"))
    m2, _ = _bound(net=mlp(batchnorm=True))
    m2.load_params(str(tmp_path / "p.params"))
    a1, x1 = m.get_params()
    a2, x2 = m2.get_params()
    for k in list(a1):
        np.testing.assert_array_equal(a1[k].asnumpy(), a2[k].asnumpy())
    for k in x1:
        np.testing.assert_array_equal(x1[k].asnumpy(), x2[k].asnumpy())


def test_fit_callbacks_and_validation(caplog):
    m, it = _bound()
    _start(m)
    epochs, batches, evals = [], [], []
    with caplog.at_level(logging.INFO):
        m.fit(it, eval_data=it, num_epoch=2, eval_metric=["acc", "ce"],
              validation_metric="acc",
              epoch_end_callback=lambda e, s, a, x: epochs.append((e, sorted(a))),
              batch_end_callback=[lambda p: batches.append((p.epoch, p.nbatch))],
              eval_end_callback=lambda p: evals.append(p.eval_metric.get()))
    assert [e for e, _ in epochs] == [0, 1] and "fc1_weight" in epochs[0][1]
    assert batches[:7] == [(0, i) for i in range(6)] + [(1, 0)]
    assert evals[0][0] == "accuracy"
    assert "Epoch[1] Validation-accuracy=" in caplog.text
    assert "Epoch[0] Train-cross-entropy=" in caplog.text


def test_custom_optimizer_object_and_metric_object():
    m, it = _bound()
    _start(m)
    opt = optimizer.Adam(learning_rate=0.01, rescale_grad=0.1)
    acc = metric.Accuracy()
    m.fit(it, num_epoch=1, optimizer=opt, eval_metric=acc)
    assert m._optimizer is opt and acc.num_inst > 0


@pytest.mark.parametrize("call,match", [
    (lambda: Module(mlp(), data_names=["x"]), "input with name 'x' is not found"),
    (lambda: Module(mlp(), fixed_param_names=["nope"]), "'nope' is not found"),
    (lambda: Module(mlp()).forward(io.DataBatch([nd.ones((2, 6))])), "call bind"),
    (lambda: Module(mlp()).bind([("data", (4, 6))], for_training=False,
                                inputs_need_grad=True), "inputs_need_grad"),
    (lambda: Module(mlp()).bind([("x", (4, 6))]), "do not match data_names"),
])
def test_errors_are_clear(call, match):
    with pytest.raises((ValueError, RuntimeError), match=match):
        call()


def test_missing_params_need_allow_missing():
    m, _ = _bound()
    with pytest.raises(RuntimeError, match="'fc1_bias' is not presented"):
        m.init_params(arg_params={"fc1_weight": nd.zeros((16, 6))})
    with pytest.raises(ValueError, match=r"bound shape is \(16, 6\)"):
        m.init_params(arg_params={"fc1_weight": nd.zeros((3, 3))}, allow_missing=True)
    m.init_params(arg_params={"fc1_weight": nd.ones((16, 6))}, allow_missing=True)
    assert m.get_params()[0]["fc1_weight"].asnumpy().min() == 1
    with pytest.raises(RuntimeError, match="init_optimizer"):
        m.update()


@requires_mxnet
@pytest.mark.parametrize("batchnorm", [False, True])
def test_training_matches_real_mxnet(tmp_path, batchnorm):
    x, y = data()
    shapes = {"fc1_weight": (16, 6), "fc1_bias": (16,), "fc2_weight": (3, 16),
              "fc2_bias": (3,)}
    params = init_params(shapes)
    if batchnorm:
        params.update(bn_gamma=np.ones(16, "float32"), bn_beta=np.zeros(16, "float32"))
    np.savez(tmp_path / "in.npz", x=x, y=y, **params)
    code = f"""
import numpy as np, mxnet as mx, json
f = np.load({str(tmp_path / 'in.npz')!r})
h = mx.sym.Activation(mx.sym.FullyConnected(mx.sym.var('data'), num_hidden=16, name='fc1'),
                      act_type='relu', name='relu1')
if {batchnorm}:
    h = mx.sym.BatchNorm(h, fix_gamma=False, name='bn')
net = mx.sym.SoftmaxOutput(mx.sym.FullyConnected(h, num_hidden=3, name='fc2'), name='softmax')
it = mx.io.NDArrayIter(f['x'], f['y'], batch_size=10)
m = mx.mod.Module(net)
args = {{k: mx.nd.array(f[k]) for k in f.files if k not in ('x', 'y')}}
m.fit(it, num_epoch=3, arg_params=args, allow_missing=True, initializer=mx.init.Zero(),
      optimizer_params={{'learning_rate': 0.3, 'momentum': 0.9, 'wd': 1e-3}})
a, x = m.get_params()
out = m.predict(mx.io.NDArrayIter(f['x'], f['y'], batch_size=7)).asnumpy()
np.savez({str(tmp_path / 'out.npz')!r}, out=out, **{{'arg_' + k: v.asnumpy() for k, v in a.items()}},
         **{{'aux_' + k: v.asnumpy() for k, v in x.items()}})
print(json.dumps(m.score(it, 'acc')))
"""
    ref_score = json.loads(run_mxnet(code))
    ref = np.load(tmp_path / "out.npz")
    from core.initializer import Zero
    m = Module(mlp(batchnorm=batchnorm))
    it = io.NDArrayIter(x, y, batch_size=10)
    m.fit(it, num_epoch=3, arg_params=as_nd(params), allow_missing=True, initializer=Zero(),
          optimizer_params={"learning_rate": 0.3, "momentum": 0.9, "wd": 1e-3})
    a, aux = m.get_params()
    for k in a:
        np.testing.assert_allclose(a[k].asnumpy(), ref["arg_" + k], rtol=1e-4, atol=1e-5,
                                   err_msg=k)
    for k in aux:
        np.testing.assert_allclose(aux[k].asnumpy(), ref["aux_" + k], rtol=1e-4, atol=1e-5,
                                   err_msg=k)
    out = m.predict(io.NDArrayIter(x, y, batch_size=7)).asnumpy()
    np.testing.assert_allclose(out, ref["out"], rtol=1e-4, atol=1e-5)
    assert [list(p) for p in m.score(it, "acc")] == [[n, pytest.approx(v)]
                                                       for n, v in ref_score]


def test_network_without_parameters_updates_as_a_no_op():
    out = sym.Dropout(sym.var("data"), p=0.5)
    m = Module(out, label_names=None)
    m.bind(data_shapes=[("data", (10, 10))])
    m.init_params()
    m.init_optimizer()
    m.forward_backward(io.DataBatch([nd.ones((10, 10))]))
    m.update()
    assert m.get_outputs()[0].shape == (10, 10)


def test_pre_sliced_batches_one_per_context():
    x, y = data()
    ctxs = [context.cpu(0), context.cpu(1)]
    m, it = _bound(ctx=ctxs)
    _start(m)
    batch = next(it)
    m.forward(batch, is_train=False)
    whole = m.get_outputs()[0].asnumpy()
    halves = [io.DataBatch([nd.array(x[:5])], [nd.array(y[:5])]),
              io.DataBatch([nd.array(x[5:10])], [nd.array(y[5:10])])]
    m.forward(halves, is_train=False)
    np.testing.assert_allclose(m.get_outputs()[0].asnumpy(), whole, rtol=1e-6)
    acc = metric.Accuracy()
    m.update_metric(acc, [b.label for b in halves], pre_sliced=True)
    assert acc.num_inst == 10
    with pytest.raises(ValueError, match="3 pre-sliced batches for 2 contexts"):
        m._exec_group.forward(halves + halves[:1])


def test_group2ctxs_places_a_ctx_groups_arrays():
    from core.sym import AttrScope
    with AttrScope(ctx_group="dev1"):
        a = sym.var("a") * 2
    with AttrScope(ctx_group="dev2"):
        c = a + sym.var("b")
    shape = (2, 5)
    batch = io.DataBatch(data=[nd.ones(shape), nd.ones(shape)])
    grads = []
    for g2c in ({"dev1": context.cpu(1), "dev2": context.cpu(2)}, None):
        m = Module(c, data_names=["a", "b"], label_names=None, group2ctxs=g2c)
        m.bind(data_shapes=[("a", shape), ("b", shape)], inputs_need_grad=True)
        m.init_params()
        m.forward(batch, is_train=True)
        m.backward([nd.ones(shape)])
        grads.append(m.get_input_grads())
    assert [g.context for g in grads[0]] == [context.cpu(1), context.cpu(2)]
    for g, ref in zip(*grads):
        np.testing.assert_array_equal(g.asnumpy(), ref.asnumpy())
    with pytest.raises(ValueError, match="group2ctxs\\['dev1'\\] has 3 contexts"):
        Module(c, data_names=["a", "b"], label_names=None, context=[context.cpu(0)] * 2,
               group2ctxs={"dev1": [context.cpu(1)] * 3}).bind([("a", shape), ("b", shape)])


def test_bind_refuses_an_array_as_a_shape_and_stays_unbound():
    net = sym.Activation(data=sym.Variable("data"), act_type="relu")
    mod = Module(net, ("data",), None, context=[context.cpu(0), context.cpu(1)])
    with pytest.raises(TypeError, match="shape of 'data' must be a tuple of ints"):
        mod.bind(data_shapes=[("data", nd.array([10, 10]))])
    assert not mod.binded
    mod.bind(data_shapes=[("data", (10, 10))])
    assert mod.binded


def test_outputs_split_and_merge_along_their_layouts_batch_axis():
    # MXNet reads each output's batch axis from its node's __layout__ ('TNC': axis 1)
    net = sym.Activation(data=sym.Variable("data"), act_type="relu", __layout__="TNC")
    mod = Module(net, ("data",), None, context=[context.cpu(0), context.cpu(1)])
    mod.bind(data_shapes=[io.DataDesc("data", (3, 8, 7), layout="TNC")])
    mod.init_params()
    x = nd.array(np.arange(3 * 8 * 7, dtype=np.float32).reshape(3, 8, 7) - 80)
    mod.forward(io.DataBatch(data=[x], label=None))
    mod.backward([nd.ones((3, 8, 7))])
    assert [o.shape for o in mod.get_outputs(merge_multi_context=False)[0]] == [(3, 4, 7)] * 2
    np.testing.assert_array_equal(mod.get_outputs()[0].asnumpy(), np.maximum(x.asnumpy(), 0))
