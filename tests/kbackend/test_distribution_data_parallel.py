"""``keras.distribution.DataParallel`` on kbackend (kbackend.data_parallel), one process.

The tests see three logical CPU devices (``KBACKEND_NUM_CPU_DEVICES=3``, which
kbackend.distribution_lib reads at each call).
"""
from __future__ import annotations

import contextlib
import json
import threading

import keras
import numpy as np
import pytest

from core import engine, profiler
from kbackend import data_parallel as dp_mod
from kbackend import distribution_lib as d

pytestmark = pytest.mark.multi_device

_rng = np.random.default_rng(0)
X = _rng.normal(size=(50, 5)).astype("float32")
Y = _rng.integers(0, 3, 50)
DEVICES = ["cpu:0", "cpu:1", "cpu:2"]


@pytest.fixture(autouse=True)
def three_cpu_devices(monkeypatch):
    monkeypatch.setenv(d.NUM_CPU_ENV, "3")


def sparse_ce():
    return keras.losses.SparseCategoricalCrossentropy(from_logits=True)


def wdiff(a, b):
    return max(float(np.abs(np.asarray(u) - np.asarray(v)).max())
               for u, v in zip(a.get_weights(), b.get_weights()))


def maxdiff(a, b):
    return float(np.abs(np.subtract(a, b)).max())


class Spy(keras.layers.Layer):
    """An identity layer calling ``record(inputs)`` in training calls (not in the
    symbolic build's)."""

    def __init__(self, record, **kwargs):
        super().__init__(**kwargs)
        self.record = record

    def call(self, inputs, training=None):
        if training:
            self.record(inputs)
        return inputs


def _dense_model(opt, jit, spy=None):
    keras.utils.set_random_seed(1)
    layers = [keras.Input((5,)), keras.layers.Dense(8, activation="relu")]
    layers += [Spy(spy)] if spy else []
    m = keras.Sequential(layers + [keras.layers.Dense(3)])
    m.compile(opt, sparse_ce(), metrics=["accuracy"], jit_compile=jit)
    return m


@pytest.mark.parametrize("opt, jit", [("sgd", False), ("adam", True)])
def test_fit_equals_single_device_training_on_the_whole_batch(opt, jit):
    # 50 samples in batches of 16 over 3 devices: slices of 6/5/5 and a last batch of 2
    # (two replicas), so uneven slices are weighted by their share of the batch. Under
    # jit_compile the first batch runs eagerly, the second is traced, the third runs the
    # compiled programs.
    one = _dense_model(opt, jit)
    h1 = one.fit(X, Y, batch_size=16, epochs=1, shuffle=False, verbose=0)
    dist = keras.distribution.DataParallel(devices=DEVICES)
    with dist.scope():
        dp = _dense_model(opt, jit)
        h2 = dp.fit(X, Y, batch_size=16, epochs=1, shuffle=False, verbose=0)
        ev = dp.evaluate(X, Y, verbose=0)
        pr = dp.predict(X, batch_size=16, verbose=0)
    compiled = {str(c): [type(e).__name__ for e in s.cache.values()]
                for c, s in dp._kbackend_replicated.compiled.items()}
    assert wdiff(one, dp) < 1e-6
    assert maxdiff(h1.history["loss"], h2.history["loss"]) < 1e-5
    assert maxdiff(one.evaluate(X, Y, verbose=0), ev) < 1e-5
    assert float(np.abs(one.predict(X, batch_size=16, verbose=0) - pr).max()) < 1e-5
    assert h1.history["accuracy"] == h2.history["accuracy"]
    if jit:
        # jit_compile: each device runs its own compiled step programs (CachedOp tuples).
        assert sorted(compiled) == ["cpu(0)", "cpu(1)", "cpu(2)"]
        assert all("tuple" in kinds for kinds in compiled.values()), compiled
    else:
        assert compiled == {}


def test_replicas_run_on_the_mesh_devices_and_the_variables_stay_home():
    seen = []
    dist = keras.distribution.DataParallel(devices=["cpu:1", "cpu:2"])
    with dist.scope():
        spy = _dense_model("sgd", False, spy=lambda inputs: seen.append(str(inputs.context)))
        spy.fit(X[:8], Y[:8], batch_size=8, epochs=1, verbose=0)
    assert sorted(set(seen)) == ["cpu(1)", "cpu(2)"]
    assert str(spy.layers[0].kernel.value.context) == "cpu(0)"


def _two_layer_model(jit, dropout=False):
    keras.utils.set_random_seed(3)
    inner = [keras.layers.Dropout(0.5, seed=5)] if dropout else [
        keras.layers.BatchNormalization(momentum=0.5)]
    m = keras.Sequential([keras.Input((5,)), keras.layers.Dense(8)] + inner
                         + [keras.layers.Dense(3)])
    m.compile("sgd", sparse_ce(), jit_compile=jit)
    return m


def test_batchnorm_moving_statistics():
    dist = keras.distribution.DataParallel(devices=DEVICES[:2])
    one = _two_layer_model(False)
    one.train_on_batch(X[:8], Y[:8])
    with dist.scope():
        dp = _two_layer_model(False)
        dp.train_on_batch(X[:8], Y[:8])
    bn1, bn2 = one.layers[1], dp.layers[1]
    # BatchNormalization normalizes each slice with its own statistics: the moving mean
    # (the mean of the slices' means) is the batch mean; the moving variance is the
    # mean of the slices' variances, which misses the spread between the slices' means.
    assert maxdiff(np.asarray(bn1.moving_mean), np.asarray(bn2.moving_mean)) < 1e-6
    assert maxdiff(np.asarray(bn1.moving_variance), np.asarray(bn2.moving_variance)) > 1e-4


def test_dropout_masks_differ_per_replica_and_the_seed_advances_as_on_one_device():
    # The same rows on both replicas get different masks; the seed generator advances
    # as on one device.
    dist = keras.distribution.DataParallel(devices=DEVICES[:2])
    one = _two_layer_model(False, dropout=True)
    xx = np.concatenate([X[:4], X[:4]])
    with dist.scope():
        dp = _two_layer_model(False, dropout=True)
        dp.train_on_batch(xx, Y[:8])
        y_pred, _ = dp._kbackend_replicated.run("train", (xx, Y[:8]))
    y_pred = np.asarray(keras.ops.convert_to_numpy(y_pred))
    assert np.abs(y_pred[:4] - y_pred[4:]).max() > 1e-6
    for _ in range(2):
        one.train_on_batch(xx, Y[:8])
    seed = [np.asarray(m.layers[1].seed_generator.state).tolist() for m in (one, dp)]
    assert seed[0] == seed[1], seed


# The 6 validation samples are one batch: steps_per_execution=2 runs out of data there.
@pytest.mark.filterwarnings("ignore:Your input ran out of data:UserWarning")
def test_two_inputs_and_outputs_sample_weights_validation_steps_per_execution():
    # Two inputs and outputs (dicts), per-output loss metrics (updated inside the
    # replicas' loss), sample weights, validation and steps_per_execution.
    dist = keras.distribution.DataParallel(devices=DEVICES[:2])
    a, b, y1 = X[:30, :3], X[:30, 3:], X[:30, :1] * 2.0

    def two_headed():
        keras.utils.set_random_seed(0)
        ia, ib = keras.Input((3,), name="a"), keras.Input((2,), name="b")
        h = keras.layers.Dense(4, activation="relu")(keras.layers.Concatenate()([ia, ib]))
        m = keras.Model({"a": ia, "b": ib},
                        {"reg": keras.layers.Dense(1, name="reg")(h),
                         "cls": keras.layers.Dense(3, name="cls")(h)})
        m.compile("adam", {"reg": "mse", "cls": sparse_ce()},
                  metrics={"reg": ["mae"], "cls": ["accuracy"]}, steps_per_execution=2)
        return m

    hist = []
    for scope in (None, dist):
        with scope.scope() if scope else contextlib.nullcontext():
            m = two_headed()
            hist.append(m.fit({"a": a, "b": b}, {"reg": y1, "cls": Y[:30]},
                              sample_weight=np.linspace(0.5, 1.5, 30), batch_size=7,
                              validation_split=0.2, shuffle=False, verbose=0).history)
    history = {k: maxdiff(hist[0][k], hist[1][k]) for k in hist[0]}
    assert len(history) == 10 and max(history.values()) < 1e-5, history


def test_model_parallel_is_refused_naming_data_parallel():
    mesh = keras.distribution.DeviceMesh((3,), ["model"], DEVICES)
    layout_map = keras.distribution.LayoutMap(mesh)
    mp = keras.distribution.ModelParallel(layout_map=layout_map, batch_dim_name="model")
    with mp.scope():
        m = _two_layer_model(False)
        with pytest.raises(ValueError, match="DataParallel") as info:
            m.fit(X, Y, verbose=0)
    assert "ModelParallel" in str(info.value)


def test_global_device_names_of_two_processes(monkeypatch):
    # Two processes as distribution_lib sees them (a stand-in for the dist store):
    # global device names, this process (rank 1) owns cpu:2 and cpu:3.
    class Store:
        rank, num_workers = 1, 2

    monkeypatch.setitem(d._STATE, "store", Store())
    monkeypatch.setenv(d.NUM_CPU_ENV, "2")
    assert [d.list_devices("cpu"), d.num_processes(), d.process_id()] == [
        ["cpu:0", "cpu:1", "cpu:2", "cpu:3"], 2, 1]
    assert [str(d.device_owner("cpu:3")), str(d._to_backend_device("cpu:2"))] == [
        "(1, cpu(1))", "cpu(0)"]
    assert [str(c) for c in d.local_contexts(d.list_devices("cpu"))] == ["cpu(0)", "cpu(1)"]
    mesh = keras.distribution.DeviceMesh((4,), ["batch"], d.list_devices("cpu"))
    assert [str(c) for c in d._to_backend_mesh(mesh)] == ["None", "None", "cpu(0)", "cpu(1)"]
    with pytest.raises(ValueError, match="belongs to process 0"):
        d._to_backend_device("cpu:1")


@pytest.fixture
def recorded_paths(monkeypatch):
    """The path (``'engine'`` or a reason to run in turn) of each replicated step."""
    paths = []
    original = dp_mod.ReplicatedSteps._path

    def path(self, *args):
        paths.append(original(self, *args))
        return paths[-1]

    monkeypatch.setattr(dp_mod.ReplicatedSteps, "_path", path)
    return paths


@contextlib.contextmanager
def profiling():
    """Record core's profiler trace for the block; the trace events, parsed, after it."""
    previous = profiler.state()
    profiler.dumps(reset=True)  # nothing recorded before the block
    trace = []
    profiler.set_state("run")
    try:
        yield trace
    finally:
        profiler.set_state("stop")
        trace.extend(json.loads(profiler.dumps(reset=True))["traceEvents"])
        profiler.set_state(previous)


@pytest.mark.parametrize("jit", [False, True])
def test_replicas_run_on_the_engine_workers_and_equal_the_sequential_paths(
        jit, recorded_paths):
    # After the first step (and, under jit_compile, the warm-up and trace steps), each
    # training step runs the replicas on the engine's device workers (core.parallel.
    # forward_backward) with the Variables' all-reduces on its communication worker;
    # the weights (BatchNormalization's moving statistics, Dropout's seed state too)
    # equal those of the NaiveEngine (all in the calling thread) and of the replicas
    # run in turn (ReplicatedSteps.sequential_reason set), bitwise.
    threads = set()

    def train(mode=None):
        keras.utils.set_random_seed(1)
        with keras.distribution.DataParallel(devices=DEVICES).scope():
            m = keras.Sequential([
                keras.Input((5,)), keras.layers.Dense(8, activation="relu"),
                Spy(lambda inputs: threads.add(threading.current_thread().name)),
                keras.layers.BatchNormalization(momentum=0.5),
                keras.layers.Dropout(0.3, seed=2), keras.layers.Dense(3)])
            m.compile("adam", sparse_ce(), metrics=["accuracy"], jit_compile=jit)
            m.train_on_batch(X[:16], Y[:16])
            if mode == "in turn":
                m._kbackend_replicated.sequential_reason = "the test asks for it"
            with engine.naive() if mode == "naive" else contextlib.nullcontext():
                h = m.fit(X[:48], Y[:48], batch_size=12, epochs=2, shuffle=False,
                          verbose=0)
        return m, h.history["loss"]

    with profiling() as trace:
        m, losses = train()
    run_paths, run_threads = recorded_paths[:], sorted(threads)
    names = {e["tid"]: e["args"]["name"] for e in trace
             if e["ph"] == "M" and e["name"] == "thread_name"}
    tracks = {}
    for e in trace:
        if e["ph"] == "X" and e["name"].split()[0] in ("forward_backward", "allreduce"):
            tracks.setdefault(e["name"].split()[0], set()).add(names[e["tid"]])
    naive, naive_loss = train("naive")
    in_turn, turn_loss = train("in turn")

    workers = ["engine:cpu(0)", "engine:cpu(1)", "engine:cpu(2)"]
    # fit's 8 steps: the engine path, but for the jit warm-up and trace steps
    assert run_paths.count("engine") == (6 if jit else 8), run_paths
    assert sorted(tracks["forward_backward"]) == workers, tracks
    assert sorted(tracks["allreduce"]) == ["engine:comm"], tracks
    # weights and BatchNormalization's moving statistics
    assert wdiff(m, naive) == 0.0 and wdiff(m, in_turn) == 0.0
    assert losses == naive_loss and losses == turn_loss
    seed = [np.asarray(k.layers[3].seed_generator.state).tolist()
            for k in (m, naive, in_turn)]
    assert seed[0] == seed[1] == seed[2], seed
    if not jit:
        # Eager layers ran on the device workers (and, in the first step, in the caller).
        assert run_threads == ["MainThread", *workers], run_threads
