"""``keras.distribution.DataParallel`` on kbackend (kbackend.data_parallel), one process.

Each case runs Keras in a fresh subprocess (see conftest.run_python) with three
logical CPU devices (``KBACKEND_NUM_CPU_DEVICES=3``).
"""
from __future__ import annotations

import json
import textwrap

import pytest

from .conftest import check, run_python

pytestmark = pytest.mark.multi_device

_PRELUDE = """
import contextlib, json, os
os.environ["KBACKEND_NUM_CPU_DEVICES"] = "3"
import numpy as np
import keras

rng = np.random.default_rng(0)
x = rng.normal(size=(50, 5)).astype("float32")
y = rng.integers(0, 3, 50)
loss = keras.losses.SparseCategoricalCrossentropy(from_logits=True)
devices = ["cpu:0", "cpu:1", "cpu:2"]

def wdiff(a, b):
    return max(float(np.abs(np.asarray(u) - np.asarray(v)).max())
               for u, v in zip(a.get_weights(), b.get_weights()))
"""


def _run(code: str) -> dict:
    out = check(run_python(_PRELUDE + textwrap.dedent(code), "kbackend", timeout=240))
    return json.loads(out.strip().splitlines()[-1])


def test_fit_equals_single_device_training_on_the_whole_batch():
    # 50 samples in batches of 16 over 3 devices: slices of 6/5/5 and a last batch of 2
    # (two replicas), so uneven slices are weighted by their share of the batch. Under
    # jit_compile the first batch runs eagerly, the second is traced, the third runs the
    # compiled programs.
    res = _run("""
        seen = []

        class Spy(keras.layers.Layer):
            def call(self, inputs, training=None):
                if training:  # not the symbolic build's call
                    seen.append(str(inputs.context))
                return inputs

        def make(opt, jit, spy=False):
            keras.utils.set_random_seed(1)
            layers = [keras.Input((5,)), keras.layers.Dense(8, activation="relu")]
            layers += [Spy()] if spy else []
            m = keras.Sequential(layers + [keras.layers.Dense(3)])
            m.compile(opt, loss, metrics=["accuracy"], jit_compile=jit)
            return m

        res = {}
        for opt, jit in (("sgd", False), ("adam", True)):
            one = make(opt, jit)
            h1 = one.fit(x, y, batch_size=16, epochs=1, shuffle=False, verbose=0)
            dist = keras.distribution.DataParallel(devices=devices)
            with dist.scope():
                dp = make(opt, jit)
                h2 = dp.fit(x, y, batch_size=16, epochs=1, shuffle=False, verbose=0)
                ev = dp.evaluate(x, y, verbose=0)
                pr = dp.predict(x, batch_size=16, verbose=0)
            compiled = {str(c): [type(e).__name__ for e in s.cache.values()]
                        for c, s in dp._kbackend_replicated.compiled.items()}
            res[f"{opt}-{jit}"] = {
                "w": wdiff(one, dp),
                "loss": float(np.abs(np.subtract(h1.history["loss"],
                                                 h2.history["loss"])).max()),
                "acc": [h1.history["accuracy"], h2.history["accuracy"]],
                "eval": float(np.abs(np.subtract(one.evaluate(x, y, verbose=0),
                                                 ev)).max()),
                "pred": float(np.abs(one.predict(x, batch_size=16, verbose=0)
                                     - pr).max()),
                "compiled": compiled}
        dist = keras.distribution.DataParallel(devices=["cpu:1", "cpu:2"])
        with dist.scope():
            spy = make("sgd", False, spy=True)
            spy.fit(x[:8], y[:8], batch_size=8, epochs=1, verbose=0)
        res["seen"] = sorted(set(seen))
        res["home"] = str(spy.layers[0].kernel.value.context)
        print(json.dumps(res))
    """)
    for name in ("sgd-False", "adam-True"):
        r = res[name]
        assert r["w"] < 1e-6, (name, r)
        assert r["loss"] < 1e-5 and r["eval"] < 1e-5 and r["pred"] < 1e-5, (name, r)
        assert r["acc"][0] == r["acc"][1], (name, r)
    # jit_compile: each device runs its own compiled step programs (CachedOp tuples).
    assert sorted(res["adam-True"]["compiled"]) == ["cpu(0)", "cpu(1)", "cpu(2)"]
    assert all("tuple" in kinds for kinds in res["adam-True"]["compiled"].values())
    assert res["sgd-False"]["compiled"] == {}
    # The replicas run on the mesh's devices; the Variables stay where they were made.
    assert res["seen"] == ["cpu(1)", "cpu(2)"]
    assert res["home"] == "cpu(0)"


def test_batchnorm_dropout_two_heads_and_errors():
    res = _run("""
        def make(jit, dropout=False):
            keras.utils.set_random_seed(3)
            inner = [keras.layers.Dropout(0.5, seed=5)] if dropout else [
                keras.layers.BatchNormalization(momentum=0.5)]
            m = keras.Sequential([keras.Input((5,)), keras.layers.Dense(8)] + inner
                                 + [keras.layers.Dense(3)])
            m.compile("sgd", loss, jit_compile=jit)
            return m

        dist = keras.distribution.DataParallel(devices=devices[:2])
        res = {}
        one = make(False)
        one.train_on_batch(x[:8], y[:8])
        with dist.scope():
            dp = make(False)
            dp.train_on_batch(x[:8], y[:8])
        bn1, bn2 = one.layers[1], dp.layers[1]
        res["moving_mean"] = float(np.abs(np.asarray(bn1.moving_mean)
                                          - np.asarray(bn2.moving_mean)).max())
        res["moving_var"] = float(np.abs(np.asarray(bn1.moving_variance)
                                         - np.asarray(bn2.moving_variance)).max())
        # Dropout: the same rows on both replicas get different masks; the seed
        # generator advances as on one device.
        one = make(False, dropout=True)
        xx = np.concatenate([x[:4], x[:4]])
        with dist.scope():
            dp = make(False, dropout=True)
            dp.train_on_batch(xx, y[:8])
            y_pred, _ = dp._kbackend_replicated.run("train", (xx, y[:8]))
        y_pred = np.asarray(keras.ops.convert_to_numpy(y_pred))
        res["halves_differ"] = bool(np.abs(y_pred[:4] - y_pred[4:]).max() > 1e-6)
        for _ in range(2):
            one.train_on_batch(xx, y[:8])
        seed = [np.asarray(m.layers[1].seed_generator.state).tolist() for m in (one, dp)]
        res["seed"] = seed
        # Two inputs and outputs (dicts), per-output loss metrics (updated inside the
        # replicas' loss), sample weights, validation and steps_per_execution.
        a, b, y1 = x[:30, :3], x[:30, 3:], x[:30, :1] * 2.0

        def two_headed():
            keras.utils.set_random_seed(0)
            ia, ib = keras.Input((3,), name="a"), keras.Input((2,), name="b")
            h = keras.layers.Dense(4, activation="relu")(
                keras.layers.Concatenate()([ia, ib]))
            m = keras.Model({"a": ia, "b": ib},
                            {"reg": keras.layers.Dense(1, name="reg")(h),
                             "cls": keras.layers.Dense(3, name="cls")(h)})
            m.compile("adam", {"reg": "mse", "cls": loss},
                      metrics={"reg": ["mae"], "cls": ["accuracy"]}, steps_per_execution=2)
            return m

        hist = []
        for scope in (None, dist):
            with scope.scope() if scope else contextlib.nullcontext():
                m = two_headed()
                hist.append(m.fit({"a": a, "b": b}, {"reg": y1, "cls": y[:30]},
                                  sample_weight=np.linspace(0.5, 1.5, 30), batch_size=7,
                                  validation_split=0.2, shuffle=False, verbose=0).history)
        res["history"] = {k: float(np.abs(np.subtract(hist[0][k], hist[1][k])).max())
                          for k in hist[0]}
        errors = []
        mesh = keras.distribution.DeviceMesh((3,), ["model"], devices)
        layout_map = keras.distribution.LayoutMap(mesh)
        mp = keras.distribution.ModelParallel(layout_map=layout_map, batch_dim_name="model")
        with mp.scope():
            m = make(False)
            try:
                m.fit(x, y, verbose=0)
            except ValueError as exc:
                errors.append(str(exc))
        # Two processes as distribution_lib sees them (a stand-in for the dist store):
        # global device names, this process (rank 1) owns cpu:2 and cpu:3.
        from kbackend import distribution_lib as d

        class Store:
            rank, num_workers = 1, 2
        d._STATE["store"] = Store()
        os.environ["KBACKEND_NUM_CPU_DEVICES"] = "2"
        try:
            res["global"] = [d.list_devices("cpu"), d.num_processes(), d.process_id()]
            res["owner"] = [str(d.device_owner("cpu:3")), str(d._to_backend_device("cpu:2"))]
            res["local"] = [str(c) for c in d.local_contexts(d.list_devices("cpu"))]
            mesh = keras.distribution.DeviceMesh((4,), ["batch"], d.list_devices("cpu"))
            res["mesh"] = [str(c) for c in d._to_backend_mesh(mesh)]
            try:
                d._to_backend_device("cpu:1")
            except ValueError as exc:
                errors.append(str(exc))
        finally:
            d._STATE["store"] = None
        print(json.dumps({**res, "errors": errors}))
    """)
    # BatchNormalization normalizes each slice with its own statistics: the moving mean
    # (the mean of the slices' means) is the batch mean; the moving variance is the
    # mean of the slices' variances, which misses the spread between the slices' means.
    assert res["moving_mean"] < 1e-6, res
    assert res["moving_var"] > 1e-4, res
    assert res["halves_differ"], res
    assert len(res["history"]) == 10 and max(res["history"].values()) < 1e-5, res
    assert res["seed"][0] == res["seed"][1], res
    assert len(res["errors"]) == 2 and "DataParallel" in res["errors"][0]
    assert "ModelParallel" in res["errors"][0]
    assert res["global"] == [["cpu:0", "cpu:1", "cpu:2", "cpu:3"], 2, 1]
    assert res["owner"] == ["(1, cpu(1))", "cpu(0)"]
    assert res["local"] == ["cpu(0)", "cpu(1)"]
    assert res["mesh"] == ["None", "None", "cpu(0)", "cpu(1)"]
    assert "belongs to process 0" in res["errors"][1]


def test_replicas_run_on_the_engine_workers_and_equal_the_sequential_paths():
    # After the first step (and, under jit_compile, the warm-up and trace steps), each
    # training step runs the replicas on the engine's device workers (core.parallel.
    # forward_backward) with the Variables' all-reduces on its communication worker;
    # the weights (BatchNormalization's moving statistics, Dropout's seed state too)
    # equal those of the NaiveEngine (all in the calling thread) and of the replicas
    # run in turn (ReplicatedSteps.sequential_reason set), bitwise.
    res = _run("""
        import threading
        from core import engine, profiler
        from kbackend import data_parallel as dp_mod

        threads, paths = set(), []

        class Spy(keras.layers.Layer):
            def call(self, inputs, training=None):
                if training:
                    threads.add(threading.current_thread().name)
                return inputs

        original = dp_mod.ReplicatedSteps._path

        def path(self, *args):
            paths.append(original(self, *args))
            return paths[-1]

        dp_mod.ReplicatedSteps._path = path

        def train(jit, mode=None):
            keras.utils.set_random_seed(1)
            with keras.distribution.DataParallel(devices=devices).scope():
                m = keras.Sequential([keras.Input((5,)),
                                      keras.layers.Dense(8, activation="relu"), Spy(),
                                      keras.layers.BatchNormalization(momentum=0.5),
                                      keras.layers.Dropout(0.3, seed=2),
                                      keras.layers.Dense(3)])
                m.compile("adam", loss, metrics=["accuracy"], jit_compile=jit)
                m.train_on_batch(x[:16], y[:16])
                if mode == "in turn":
                    m._kbackend_replicated.sequential_reason = "the test asks for it"
                with engine.naive() if mode == "naive" else contextlib.nullcontext():
                    h = m.fit(x[:48], y[:48], batch_size=12, epochs=2, shuffle=False,
                              verbose=0)
            return m, h.history["loss"]

        res = {}
        for jit in (False, True):
            threads.clear()
            paths.clear()
            profiler.set_state("run")
            m, losses = train(jit)
            profiler.set_state("stop")
            run_paths, run_threads = paths[:], sorted(threads)
            trace = json.loads(profiler.dumps(reset=True))["traceEvents"]
            names = {e["tid"]: e["args"]["name"] for e in trace
                     if e["ph"] == "M" and e["name"] == "thread_name"}
            tracks = {}
            for e in trace:
                if e["ph"] == "X" and e["name"].split()[0] in ("forward_backward",
                                                               "allreduce"):
                    tracks.setdefault(e["name"].split()[0], set()).add(names[e["tid"]])
            naive, naive_loss = train(jit, "naive")
            in_turn, turn_loss = train(jit, "in turn")
            res[str(jit)] = {
                "threads": run_threads, "paths": run_paths,
                "tracks": {k: sorted(v) for k, v in tracks.items()},
                # weights and BatchNormalization's moving statistics
                "naive": wdiff(m, naive), "in_turn": wdiff(m, in_turn),
                "seed": [np.asarray(k.layers[3].seed_generator.state).tolist()
                         for k in (m, naive, in_turn)],
                "loss": [losses == naive_loss, losses == turn_loss]}
        print(json.dumps(res))
    """)
    workers = ["engine:cpu(0)", "engine:cpu(1)", "engine:cpu(2)"]
    for jit in ("False", "True"):
        r = res[jit]
        # fit's 8 steps: the engine path, but for the jit warm-up and trace steps
        assert r["paths"].count("engine") == (8 if jit == "False" else 6), r
        assert r["tracks"]["forward_backward"] == workers, r
        assert r["tracks"]["allreduce"] == ["engine:comm"], r
        assert r["naive"] == 0.0 and r["in_turn"] == 0.0 and r["loss"] == [True, True], r
        assert r["seed"][0] == r["seed"][1] == r["seed"][2], r
    # Eager layers ran on the device workers (and, in the first step, in the caller).
    assert res["False"]["threads"] == ["MainThread", *workers], res
