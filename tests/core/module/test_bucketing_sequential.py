"""BucketingModule (shared parameters across buckets) and SequentialModule (chains)."""
from __future__ import annotations

import numpy as np
import pytest

from core import io, nd, sym
from core.io import DataBatch, DataDesc
from core.module import BucketingModule, Module, SequentialModule
from tests.core.module._nets import as_nd, data, init_params, mlp


def _sym_gen(seq_len):
    """Sum over time of a shared per-step layer, then a regression head."""
    x = sym.var("data")                                   # (N, T, 4)
    flat = sym.reshape(x, shape=(-1, 4))
    h = sym.FullyConnected(flat, num_hidden=3, name="step")
    h = sym.sum(sym.reshape(h, shape=(-1, seq_len, 3)), axis=1)
    out = sym.LinearRegressionOutput(sym.FullyConnected(h, num_hidden=1, name="head"),
                                     name="lro")
    return out, ("data",), ("lro_label",)


def _bucket_batches(rs, keys, n_per=4):
    out = []
    for key in keys:
        x = rs.rand(n_per, key, 4).astype("float32")
        y = x.sum(axis=(1, 2))[:, None] * 0.1
        out.append(DataBatch([nd.array(x)], [nd.array(y)], pad=0, bucket_key=key,
                             provide_data=[DataDesc("data", x.shape)],
                             provide_label=[DataDesc("lro_label", y.shape)]))
    return out


class _ListIter(io.DataIter):
    def __init__(self, batches, default_key):
        super().__init__(batches[0].data[0].shape[0])
        self.batches, self.i = batches, 0
        self.default_bucket_key = default_key
        self.provide_data = batches[0].provide_data
        self.provide_label = batches[0].provide_label

    def reset(self):
        self.i = 0

    def next(self):
        if self.i >= len(self.batches):
            raise StopIteration
        self.i += 1
        return self.batches[self.i - 1]


def test_buckets_share_parameters_and_train():
    rs = np.random.RandomState(0)
    batches = _bucket_batches(rs, [5, 2, 3, 5, 2, 3] * 3)
    m = BucketingModule(_sym_gen, default_bucket_key=5)
    it = _ListIter([b for b in batches if b.bucket_key == 5][:1] + batches, 5)
    m.fit(it, num_epoch=15, eval_metric="mse",
          optimizer_params={"learning_rate": 0.05, "momentum": 0.9})
    assert sorted(m._buckets) == [2, 3, 5]
    w5 = m._buckets[5]._exec_group.param_arrays[0][0]
    for key in (2, 3):
        assert m._buckets[key]._exec_group.param_arrays[0][0] is w5
    assert m.score(it, "mse")[0][1] < 0.05
    m.forward(batches[1], is_train=False)  # bucket 2
    assert m.get_outputs()[0].shape == (4, 1) and m.symbol is m._buckets[2].symbol


def test_bucketing_checkpoint_round_trip(tmp_path):
    rs = np.random.RandomState(1)
    batches = _bucket_batches(rs, [5, 2])
    m = BucketingModule(_sym_gen, default_bucket_key=5)
    m.bind(batches[0].provide_data, batches[0].provide_label)
    m.init_params()
    m.forward(batches[1], is_train=False)
    prefix = str(tmp_path / "bk")
    m.save_checkpoint(prefix, 1)
    assert (tmp_path / "bk-2-symbol.json").is_file() and (tmp_path / "bk.buckets").is_file()
    m2 = BucketingModule.load(prefix, 1, sym_gen=_sym_gen, default_bucket_key=5)
    m2.bind(batches[0].provide_data, batches[0].provide_label, for_training=False)
    for b in batches:
        m.forward(b, is_train=False)
        m2.forward(b, is_train=False)
        np.testing.assert_allclose(m.get_outputs()[0].asnumpy(), m2.get_outputs()[0].asnumpy(),
                                   rtol=1e-6)


def test_bucketing_needs_default_key_and_provide_data():
    with pytest.raises(ValueError, match="default_bucket_key"):
        BucketingModule(_sym_gen)
    m = BucketingModule(_sym_gen, default_bucket_key=5)
    m.bind([DataDesc("data", (4, 5, 4))], [DataDesc("lro_label", (4, 1))])
    m.init_params()
    with pytest.raises(ValueError, match="needs provide_data"):
        m.forward(DataBatch([nd.ones((4, 2, 4))], bucket_key=2))


def _split_nets():
    h = sym.Activation(sym.FullyConnected(sym.var("data"), num_hidden=16, name="fc1"),
                       act_type="relu", name="relu1")
    head = sym.SoftmaxOutput(sym.FullyConnected(sym.var("hidden"), num_hidden=3, name="fc2"),
                             name="softmax")
    return h, head


def test_sequential_equals_one_module():
    x, y = data()
    shapes = {"fc1_weight": (16, 6), "fc1_bias": (16,), "fc2_weight": (3, 16),
              "fc2_bias": (3,)}
    params = as_nd(init_params(shapes))
    opt = {"learning_rate": 0.2, "momentum": 0.9}
    it = io.NDArrayIter(x, y, batch_size=10)
    whole = Module(mlp())
    whole.fit(it, num_epoch=3, arg_params=params, optimizer_params=opt)
    h, head = _split_nets()
    seq = SequentialModule()
    seq.add(Module(h, label_names=None)).add(Module(head, data_names=["hidden"]),
                                             take_labels=True, auto_wiring=True)
    seq.fit(it, num_epoch=3, arg_params=params, optimizer_params=opt)
    a, b = whole.get_params()[0], seq.get_params()[0]
    assert sorted(a) == sorted(b)
    for k in a:
        np.testing.assert_allclose(a[k].asnumpy(), b[k].asnumpy(), rtol=1e-4, atol=1e-6,
                                   err_msg=k)
    np.testing.assert_allclose(whole.predict(it).asnumpy(), seq.predict(it).asnumpy(),
                               rtol=1e-4, atol=1e-6)
    assert seq.output_shapes == [("softmax_output", (10, 3))]
    assert seq.label_shapes[0].name == "softmax_label"


def test_sequential_errors():
    with pytest.raises(ValueError, match="unknown meta 'take_label'"):
        SequentialModule().add(Module(mlp()), take_label=True)
    with pytest.raises(ValueError, match="empty SequentialModule"):
        SequentialModule().bind([("data", (2, 6))])
    h = sym.FullyConnected(sym.var("data"), num_hidden=4, name="a")
    h2 = sym.FullyConnected(sym.var("data"), num_hidden=4, name="a")
    seq = SequentialModule().add(Module(h, label_names=None)).add(
        Module(h2, label_names=None), auto_wiring=True)
    seq.bind([("data", (2, 4))], None)
    with pytest.raises(ValueError, match="duplicated parameter name 'a_weight'"):
        seq.init_params()


def test_python_loss_module_trains_like_softmax_output():
    from core.module import PythonLossModule

    def softmax_grad(scores, labels):
        p = nd.softmax(scores).asnumpy()
        p[np.arange(len(p)), labels.asnumpy().astype(int)] -= 1
        return p

    x, y = data()
    it = io.NDArrayIter(x, y, batch_size=10)
    fc = sym.FullyConnected(sym.var("data"), num_hidden=3, name="fc")
    params = as_nd(init_params({"fc_weight": (3, 6), "fc_bias": (3,)}))
    opt = {"learning_rate": 0.5}
    whole = Module(sym.SoftmaxOutput(fc, name="softmax"))
    whole.fit(it, num_epoch=2, arg_params=params, optimizer_params=opt)
    seq = SequentialModule().add(Module(fc, label_names=None)).add(
        PythonLossModule(grad_func=softmax_grad), take_labels=True, auto_wiring=True)
    seq.fit(it, num_epoch=2, arg_params=params, optimizer_params=opt)
    for k, v in whole.get_params()[0].items():
        np.testing.assert_allclose(seq.get_params()[0][k].asnumpy(), v.asnumpy(), rtol=1e-5,
                                   atol=1e-6, err_msg=k)
    with pytest.raises(ValueError, match="do not match data_names"):
        PythonLossModule().bind([("x", (2, 3))])
