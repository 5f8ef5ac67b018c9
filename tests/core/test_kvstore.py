"""core.kvstore (the registry and the local store) and core.parallel."""
import numpy as np
import pytest

from core import autograd, cpu, kvstore, nd, optimizer, parallel
from core.kvstore import DeviceKVStore, KVStoreBase, LocalKVStore

CTXS = [cpu(0), cpu(1), cpu(2)]


def _on_all(values, dtype="float32"):
    return [nd.array(v, ctx=c, dtype=dtype) for v, c in zip(values, CTXS)]


# ---------------------------------------------------------------------- registry

def test_create_local_and_properties():
    kv = kvstore.create("local")
    assert isinstance(kv, LocalKVStore)
    assert (kv.type, kv.rank, kv.num_workers) == ("local", 0, 1)
    assert kv.is_capable(KVStoreBase.OPTIMIZER) and kv.is_capable("OPTIMIZER")
    with pytest.raises(ValueError, match="unknown capability"):
        kv.is_capable("sparse")
    assert kvstore.create("LOCAL").type == "local"
    assert "local" in repr(kv)
    for name in ("device", "nccl"):
        dev = kvstore.create(name)
        assert isinstance(dev, DeviceKVStore) and isinstance(dev, LocalKVStore)
        assert (dev.type, dev.rank, dev.num_workers) == (name, 0, 1)  # the name given


def test_create_unknown_lists_registered():
    with pytest.raises(ValueError, match=r"unknown kvstore type 'nope'; registered types: "
                                         r"'device', 'dist_device_sync', 'dist_sync', "
                                         r"'local', 'local_allreduce_cpu', "
                                         r"'local_allreduce_device', 'local_update_cpu', "
                                         r"'nccl', 'teststore'$"):
        kvstore.create("nope")
    with pytest.raises(TypeError, match="must be a string"):
        kvstore.create(3)


def test_register_decorator():
    @KVStoreBase.register
    class MyStore(KVStoreBase):
        pass

    try:
        assert type(kvstore.create("mystore")) is MyStore
        with pytest.raises(NotImplementedError, match="MyStore.pushpull"):
            kvstore.create("mystore").pushpull(0, nd.ones((1,)))
        with pytest.warns(UserWarning, match="overriding"):
            KVStoreBase.register(type("MyStore", (KVStoreBase,), {}))
    finally:
        del KVStoreBase.kv_registry["mystore"]
    with pytest.raises(TypeError, match="subclass of KVStoreBase"):
        KVStoreBase.register(int)


# ---------------------------------------------------------------------- local store

@pytest.mark.multi_device
def test_push_pull_sums_over_contexts():
    kv = kvstore.create("local")
    kv.init(3, nd.zeros((2, 2), ctx=cpu(1)))
    vals = _on_all([np.full((2, 2), i + 1.0) for i in range(3)])
    kv.push(3, vals)
    outs = [nd.zeros((2, 2), ctx=c) for c in CTXS]
    kv.pull(3, out=outs)
    for o, c in zip(outs, CTXS):
        assert o.context == c
        np.testing.assert_array_equal(o.asnumpy(), np.full((2, 2), 6.0))
    # without an optimizer, a push replaces the value
    kv.push(3, nd.ones((2, 2), ctx=cpu(2)))
    kv.pull(3, out=outs[0])
    np.testing.assert_array_equal(outs[0].asnumpy(), np.ones((2, 2)))
    # the pushed arrays are left alone
    np.testing.assert_array_equal(vals[0].asnumpy(), np.ones((2, 2)))


@pytest.mark.multi_device
def test_list_of_keys_and_string_keys():
    kv = kvstore.create("local")
    kv.init(["a", "b"], [nd.zeros((2,)), nd.zeros((3,))])
    kv.push(["a", "b"], [[nd.ones((2,), ctx=cpu(0)), nd.ones((2,), ctx=cpu(1))],
                         nd.ones((3,)) * 5])
    oa, ob = nd.zeros((2,), ctx=cpu(1)), nd.zeros((3,))
    kv.pull(["a", "b"], out=[oa, ob])
    assert oa.asnumpy().tolist() == [2.0, 2.0] and ob.asnumpy().tolist() == [5.0] * 3
    with pytest.raises(ValueError, match="2 keys need 2"):
        kv.push(["a", "b"], [nd.ones((2,))])


def test_errors():
    kv = kvstore.create("local")
    kv.init(0, nd.zeros((2,)))
    with pytest.raises(ValueError, match="initialized already"):
        kv.init(0, nd.zeros((2,)))
    with pytest.raises(KeyError, match="has not been initialized"):
        kv.pull(1, out=nd.zeros((2,)))
    with pytest.raises(ValueError, match="out="):
        kv.pull(0)
    with pytest.raises(ValueError, match="shape"):
        kv.push(0, nd.zeros((3,)))
    with pytest.raises(ValueError, match="must agree"):
        kv.push(0, [nd.zeros((2,)), nd.zeros((2,), dtype="float64")])
    with pytest.raises(TypeError, match="int or a str"):
        kv.push(1.5, nd.zeros((2,)))
    with pytest.raises(TypeError, match="NDArray"):
        kv.push(0, np.zeros(2))
    kv.set_optimizer(optimizer.SGD())
    with pytest.raises(KeyError, match="init"):
        kv.push(7, nd.zeros((2,)))
    with pytest.raises(TypeError, match="Optimizer"):
        kv.set_optimizer("sgd")


@pytest.mark.multi_device
def test_pushpull_is_allreduce():
    kv = kvstore.create("local")
    rng = np.random.default_rng(0)
    raw = [rng.standard_normal((3, 4)) for _ in CTXS]
    vals = _on_all(raw, "float64")
    kv.pushpull("g", vals)  # in place, no init needed without an optimizer
    expect = raw[0] + raw[1] + raw[2]
    for v, c in zip(vals, CTXS):
        assert v.context == c and v.dtype == np.float64
        np.testing.assert_array_equal(v.asnumpy(), vals[0].asnumpy())
    np.testing.assert_allclose(vals[0].asnumpy(), expect, rtol=1e-15)
    # value and out of different lengths: two pushed, three receive
    outs = [nd.zeros((3, 4), ctx=c, dtype="float64") for c in CTXS]
    kv.pushpull("g", vals[:2], out=outs)
    for o in outs:
        np.testing.assert_allclose(o.asnumpy(), 2 * expect, rtol=1e-15)


@pytest.mark.multi_device
def test_broadcast():
    kv = kvstore.create("local")
    src = nd.array([1.0, 2.0], ctx=cpu(1))
    outs = [nd.zeros((2,), ctx=c) for c in CTXS]
    kv.broadcast("w", src, out=outs)
    for o in outs:
        assert o.asnumpy().tolist() == [1.0, 2.0]
    kv.broadcast("w", nd.array([5.0, 6.0]), out=outs[2])  # replaces the value
    assert outs[2].asnumpy().tolist() == [5.0, 6.0]
    pulled = nd.zeros((2,))
    kv.pull("w", out=pulled)
    assert pulled.asnumpy().tolist() == [5.0, 6.0]


@pytest.mark.multi_device
def test_set_optimizer_updates_on_the_store():
    kv = kvstore.create("local")
    w0 = np.array([1.0, -2.0, 3.0])
    kv.init(0, nd.array(w0, dtype="float64"))
    opt = optimizer.SGD(learning_rate=0.1, momentum=0.9, wd=0.01, rescale_grad=0.5)
    kv.set_optimizer(opt)
    grads = [np.array([1.0, 2.0, 3.0]), np.array([0.5, 0.5, -1.0])]
    w, mom = w0.copy(), np.zeros(3)
    outs = [nd.zeros((3,), ctx=c, dtype="float64") for c in CTXS[:2]]
    for _ in range(2):
        kv.pushpull(0, _on_all(grads, "float64"), out=outs)
        g = 0.5 * (grads[0] + grads[1])
        mom = 0.9 * mom - 0.1 * (g + 0.01 * w)
        w = w + mom
        for o in outs:
            np.testing.assert_allclose(o.asnumpy(), w, rtol=1e-14)


def test_optimizer_states_round_trip(tmp_path):
    def make():
        kv = kvstore.create("local")
        kv.init(0, nd.array([1.0, 2.0], dtype="float64"))
        kv.set_optimizer(optimizer.Adam(learning_rate=0.1))
        return kv

    kv = make()
    kv.push(0, nd.array([0.3, -0.7], dtype="float64"))
    fname = str(tmp_path / "kv.states")
    kv.save_optimizer_states(fname, dump_optimizer=True)
    with open(fname, "rb") as f:
        assert f.read(4) == b"PK\x03\x04"  # an .npz archive, not a pickle
    kv2 = make()
    w = nd.zeros((2,), dtype="float64")
    kv.pull(0, out=w)
    kv2.broadcast(0, w, out=nd.zeros((2,), dtype="float64"))
    kv2.load_optimizer_states(fname)
    g = nd.array([0.1, 0.2], dtype="float64")
    kv.push(0, g)
    kv2.push(0, g)
    a, b = nd.zeros((2,), dtype="float64"), nd.zeros((2,), dtype="float64")
    kv.pull(0, out=a)
    kv2.pull(0, out=b)
    np.testing.assert_array_equal(a.asnumpy(), b.asnumpy())

    bad = tmp_path / "bad.states"
    bad.write_bytes(b"\x80\x04not a states file")
    with pytest.raises(ValueError, match="not optimizer states"):
        kv2.load_optimizer_states(str(bad))
    with pytest.raises(RuntimeError, match="set_optimizer"):
        kvstore.create("local").save_optimizer_states(fname)


def test_gradient_compression():
    kv = kvstore.create("local")
    kv.set_gradient_compression({"type": "none"})
    with pytest.raises(NotImplementedError, match="2bit gradient compression is not"):
        kv.set_gradient_compression({"type": "2bit", "threshold": 0.5})
    with pytest.raises(ValueError, match="unknown compression type"):
        kv.set_gradient_compression({"type": "fp8"})
    with pytest.raises(ValueError, match="'type'"):
        kv.set_gradient_compression({})


def test_kvstore_ops_do_not_record():
    kv = kvstore.create("local")
    x = nd.ones((2,))
    x.attach_grad()
    out = nd.zeros((2,))
    with autograd.record():
        y = x * 2
        kv.pushpull("k", [y], out=out)  # no gradient flows through the store
        z = (y * out).sum()
    z.backward()
    assert out.asnumpy().tolist() == [2.0, 2.0]
    assert x.grad.asnumpy().tolist() == [4.0, 4.0]


# ---------------------------------------------------------------------- core.parallel

@pytest.mark.multi_device
def test_split_batch():
    data = nd.arange(12).reshape(6, 2)
    parts = parallel.split_batch(data, CTXS)
    assert [p.context for p in parts] == CTXS
    np.testing.assert_array_equal(np.concatenate([p.asnumpy() for p in parts]),
                                  data.asnumpy())
    parts = parallel.split_batch(np.zeros((2, 5)), CTXS[:2], batch_axis=1, even_split=False)
    assert [p.shape for p in parts] == [(2, 3), (2, 2)]
    with pytest.raises(ValueError, match="evenly"):
        parallel.split_batch(data, [cpu(0), cpu(1), cpu(2), cpu(3)])
    with pytest.raises(ValueError, match="empty"):
        parallel.split_batch(data, [])
    assert parallel.split_batch(data, cpu(1))[0].context == cpu(1)


@pytest.mark.multi_device
@pytest.mark.parametrize("store", [None, "local", "device"])
def test_allreduce_grads(store):
    kv = kvstore.create(store) if store else None
    grads = [_on_all([np.full(3, 1.0), np.full(3, 2.0), np.full(3, 4.0)]),
             _on_all([np.full((2,), 1.0), np.full((2,), -1.0), np.full((2,), 0.5)])]
    parallel.allreduce_grads(kv, grads)
    for g in grads[0]:
        assert g.asnumpy().tolist() == [7.0] * 3
    for g in grads[1]:
        assert g.asnumpy().tolist() == [0.5, 0.5]
    # a replica left out of the sum still receives it; an empty entry is skipped
    g = _on_all([np.ones(2), np.full(2, 10.0), np.full(2, 100.0)])
    parallel.allreduce_grads(kv, [g[:2], []], out=[g, []], keys=["x", "y"])
    assert [a.asnumpy().tolist() for a in g] == [[11.0, 11.0]] * 3


@pytest.mark.multi_device
def test_broadcast_params_and_create_kvstore():
    ws = _on_all([np.ones(2), np.zeros(2), np.zeros(2)])
    parallel.broadcast_params(None, [ws])
    assert all(w.asnumpy().tolist() == [1.0, 1.0] for w in ws)
    assert parallel.create_kvstore("local", 1) == (None, False)
    assert parallel.create_kvstore(None, 4) == (None, False)
    kv, on_kv = parallel.create_kvstore("device", 2, update_on_kvstore=True)
    assert kv.type == "device" and on_kv is True
    mine = kvstore.create("local")
    assert parallel.create_kvstore(mine, 1)[0] is mine
    with pytest.raises(TypeError, match="store name"):
        parallel.create_kvstore(3, 2)


# ---------------------------------------------------------------------- device store

@pytest.mark.multi_device
def test_device_store_spreads_keys_over_the_devices():
    kv = kvstore.create("device")
    sizes = {"a": (64,), "b": (16,), "c": (16,), "d": (8,)}
    for k, shape in sizes.items():
        kv.pushpull(k, [nd.ones(shape, ctx=c) for c in CTXS[:2]])
    # greedy by bytes already assigned: a -> cpu(0); b, c -> cpu(1); d -> cpu(1) (32 < 64)
    assert [kv.merge_context(k) for k in sizes] == [cpu(0), cpu(1), cpu(1), cpu(1)]
    # a key pushed from one context only is summed there
    kv.push("e", nd.ones((3,), ctx=cpu(2)))
    assert kv.merge_context("e") == cpu(2)
    with pytest.raises(KeyError, match="has not been pushed"):
        kv.merge_context("zzz")


@pytest.mark.multi_device
@pytest.mark.parametrize("with_optimizer", [False, True])
def test_device_store_matches_local_bitwise(with_optimizer):
    rng = np.random.default_rng(0)
    grads = [[rng.normal(size=(5, 3)).astype(np.float32) for _ in CTXS] for _ in range(3)]
    results = {}
    for name in ("local", "device"):
        kv = kvstore.create(name)
        if with_optimizer:
            kv.set_optimizer(optimizer.Adam(learning_rate=0.1))
        kv.init(["w", "v"], [nd.ones((5, 3), ctx=cpu(0)), nd.zeros((5, 3), ctx=cpu(2))])
        outs = []
        for step in grads:
            for key in ("w", "v"):
                vals = _on_all(step)
                out = [nd.zeros((5, 3), ctx=c) for c in CTXS]
                kv.pushpull(key, vals, out=out)
                outs.append([o.asnumpy() for o in out])
        results[name] = outs
        if name == "device":
            # "v" was initialized on cpu(2); it moved to the device it is summed on
            assert kv._store["v"].context == kv.merge_context("v")
    for a, b in zip(results["local"], results["device"]):
        for x, y in zip(a, b):
            np.testing.assert_array_equal(x, y)


@pytest.mark.parametrize("name, klass", [("local_update_cpu", LocalKVStore),
                                         ("local_allreduce_cpu", LocalKVStore),
                                         ("LOCAL_ALLREDUCE_CPU", LocalKVStore),
                                         ("local_allreduce_device", kvstore.DeviceKVStore),
                                         ("nccl", kvstore.DeviceKVStore),
                                         ("device", kvstore.DeviceKVStore)])
def test_mxnet1_store_names(name, klass):
    kv = kvstore.create(name)
    assert type(kv) is klass and kv.type == name.lower()
    kv.init(3, nd.zeros((2,)))
    kv.push(3, [nd.ones((2,), ctx=cpu(0)), nd.ones((2,), ctx=cpu(1))])
    out = nd.zeros((2,), ctx=cpu(1))
    kv.pull(3, out=out)
    assert out.asnumpy().tolist() == [2.0, 2.0]
    assert kvstore.create("local").type == "local"


def test_teststore_broadcast_and_pushpull():
    kv = kvstore.create("teststore")
    assert isinstance(kv, kvstore.TestStore) and kv.type == "teststore"
    out = nd.zeros((1,))
    kv.broadcast(1, nd.ones((1,)), out=out)
    assert out.asnumpy().tolist() == [1.0]
    outs = [nd.zeros((1,), ctx=cpu(0)), nd.zeros((1,), ctx=cpu(1))]
    kv.pushpull(1, [nd.ones((1,), ctx=cpu(0)), nd.ones((1,), ctx=cpu(1))], out=outs)
    assert [o.asnumpy().tolist() for o in outs] == [[2.0], [2.0]]
    kv.pushpull(1, outs)  # in place
    assert [o.asnumpy().tolist() for o in outs] == [[4.0], [4.0]]
    assert type(kv).is_capable("optimizer") is False
    with pytest.raises(ValueError, match="unknown capability"):
        kv.is_capable("sparse")
    with pytest.raises(NotImplementedError):
        kv.set_optimizer(None)
    with pytest.raises(NotImplementedError):
        kv.save_optimizer_states("x")


def test_custom_store_registered_and_created_by_name():
    @KVStoreBase.register
    class MyStore(KVStoreBase):
        def broadcast(self, key, value, out, priority=0):
            out[:] = value * 10

        @property
        def type(self):
            return "mystore"

    try:
        kv = kvstore.create("MyStore")
        assert isinstance(kv, MyStore) and kv.type == "mystore"
        out = nd.zeros((2,))
        kv.broadcast("k", nd.ones((2,)), out)
        assert out.asnumpy().tolist() == [10.0, 10.0]
    finally:
        del KVStoreBase.kv_registry["mystore"]
    with pytest.raises(ValueError, match="unknown kvstore type 'mystore'"):
        kvstore.create("mystore")


@pytest.mark.parametrize("name", ["local", "device", "teststore"])
def test_pushpull_list_of_keys_sharing_arrays_reads_before_writing(name):
    # MXNet's test_kvstore_custom.py: [[...]] * 3 gives the three keys the same arrays;
    # every key's sum is taken before any result is written back (in place)
    kv = kvstore.create(name)
    keys = [5, 7, 11]
    kv.broadcast(keys, [nd.zeros((2,))] * 3, out=[nd.zeros((2,))] * 3)
    vals = [[nd.ones((2,), ctx=c) * 2.0 for c in CTXS]] * 3
    kv.pushpull(keys, vals)
    for v in vals[0]:
        assert v.asnumpy().tolist() == [6.0, 6.0]
