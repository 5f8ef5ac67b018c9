"""kbackend/optimizer.py: Keras' built-in optimizers on core's fused rules.

The fused path is compared with Keras' own generic code, which a trivial subclass of
the same Keras class keeps (the fused class is only swapped in for Keras' exact
built-in classes), and with NumPy references.
"""
from __future__ import annotations

import keras
import numpy as np
import pytest
from keras import ops

import core
import kbackend.optimizer as kopt

O = keras.optimizers  # noqa: E741


def generic(cls):
    # A user subclass: KBackendOptimizer.__new__ keeps Keras' generic update_step.
    return type("Generic" + cls.__name__, (cls,), {})


def run(opt, steps=5, shapes=((40000,), (3, 4), ()), seed=0):
    # 40000 elements: more than one CPU chunk of the fused rules.
    rng = np.random.default_rng(seed)
    vs = [keras.Variable(rng.standard_normal(s).astype("float32"), name=f"v{i}")
          for i, s in enumerate(shapes)]
    for _ in range(steps):
        grads = [ops.convert_to_tensor(rng.standard_normal(s).astype("float32"))
                 for s in shapes]
        opt.apply(grads, vs)
    return [ops.convert_to_numpy(v) for v in vs], [ops.convert_to_numpy(v)
                                                     for v in opt.variables]


@pytest.mark.parametrize("name", ["SGD", "Adam", "AdamW", "RMSprop", "Adagrad"])
def test_builtin_classes_are_fused_and_serialize_as_keras(name):
    cls = getattr(keras.optimizers, name)
    opt = cls()
    assert type(opt) is getattr(kopt, name), type(opt)
    assert isinstance(opt, cls) and isinstance(opt, keras.Optimizer)
    conf = keras.optimizers.serialize(opt)
    assert conf["module"] == "keras.optimizers" and conf["class_name"] == name, conf
    again = keras.optimizers.deserialize(conf)
    assert type(again) is type(opt) and again.get_config() == opt.get_config()


def test_subclasses_and_other_optimizers_keep_keras_generic_code():
    assert type(generic(keras.optimizers.Adam)()).__name__ == "GenericAdam"
    assert type(keras.optimizers.Nadam()).__module__.startswith("keras.")


_SCHED = O.schedules.ExponentialDecay(0.05, decay_steps=2, decay_rate=0.5)
_CASES = [
    (O.SGD, dict(learning_rate=0.1)),
    (O.SGD, dict(learning_rate=0.1, momentum=0.9)),
    (O.SGD, dict(learning_rate=0.1, momentum=0.9, nesterov=True)),
    (O.SGD, dict(learning_rate=_SCHED, momentum=0.5, clipvalue=0.3)),
    (O.Adam, dict(learning_rate=0.01)),
    (O.Adam, dict(learning_rate=0.01, weight_decay=0.1, clipnorm=1.0)),
    (O.Adam, dict(learning_rate=0.01, global_clipnorm=2.0, use_ema=True,
                  ema_overwrite_frequency=3)),
    (O.Adam, dict(learning_rate=0.01, gradient_accumulation_steps=2)),
    (O.Adam, dict(learning_rate=0.01, loss_scale_factor=8.0)),
    (O.Adam, dict(learning_rate=_SCHED, amsgrad=True)),
    (O.AdamW, dict(learning_rate=0.01)),
    (O.AdamW, dict(learning_rate=_SCHED, weight_decay=0.05)),
    (O.RMSprop, dict(learning_rate=0.01)),
    (O.RMSprop, dict(learning_rate=0.01, momentum=0.9)),
    (O.RMSprop, dict(learning_rate=0.01, centered=True)),
    (O.RMSprop, dict(learning_rate=0.01, centered=True, momentum=0.8)),
    (O.Adagrad, dict(learning_rate=0.05)),
]
assert len(_CASES) == 17


def _case_id(case):
    cls, kw = case
    return cls.__name__ + "-" + ",".join(
        f"{k}={'sched' if v is _SCHED else v}" for k, v in kw.items())


@pytest.mark.parametrize("cls, kw", _CASES, ids=[_case_id(c) for c in _CASES])
def test_fused_matches_keras_generic_path(cls, kw):
    fused = cls(**kw)
    assert type(fused).__module__ == "kbackend.optimizer"
    w1, s1 = run(fused)
    w2, s2 = run(generic(cls)(**kw))
    for a, b in zip(w1 + s1, w2 + s2):
        np.testing.assert_allclose(a, b, rtol=2e-5, atol=2e-6,
                                   err_msg=f"{cls.__name__} {kw}")


def test_adam_and_sgd_match_numpy_reference():
    rng = np.random.default_rng(1)
    w0 = rng.standard_normal(50000).astype("float32")
    gs = [rng.standard_normal(50000).astype("float32") for _ in range(4)]
    lr, b1, b2, eps = 0.01, 0.9, 0.999, 1e-7

    v = keras.Variable(w0)
    opt = keras.optimizers.Adam(lr, beta_1=b1, beta_2=b2, epsilon=eps)
    w, m, u = w0.astype("float64"), np.zeros(50000), np.zeros(50000)
    for t, g in enumerate(gs, 1):
        opt.apply([ops.convert_to_tensor(g)], [v])
        m = b1 * m + (1 - b1) * g
        u = b2 * u + (1 - b2) * g.astype("float64") ** 2
        w = w - lr * np.sqrt(1 - b2 ** t) / (1 - b1 ** t) * m / (np.sqrt(u) + eps)
    np.testing.assert_allclose(ops.convert_to_numpy(v), w, rtol=1e-5, atol=1e-6)
    assert int(ops.convert_to_numpy(opt.iterations)) == 4

    v = keras.Variable(w0)
    opt = keras.optimizers.SGD(0.1, momentum=0.9, nesterov=True)
    w, mom = w0.astype("float64"), np.zeros(50000)
    for g in gs:
        opt.apply([ops.convert_to_tensor(g)], [v])
        mom = 0.9 * mom - 0.1 * g
        w = w + 0.9 * mom - 0.1 * g
    np.testing.assert_allclose(ops.convert_to_numpy(v), w, rtol=1e-5, atol=1e-6)


def test_in_place_stateless_and_errors():
    v = keras.Variable(np.ones((4, 3), "float32"))
    array = v.value
    opt = keras.optimizers.Adam(0.1)
    opt.apply([ops.ones((4, 3))], [v])
    assert v.value is array and isinstance(array, core.NDArray)  # written in place
    assert not np.allclose(ops.convert_to_numpy(v), 1.0)

    # stateless_apply falls back to Keras' generic code and changes nothing in place;
    # its result is what the next in-place step gives.
    before = ops.convert_to_numpy(v).copy()
    state = [ops.convert_to_numpy(x).copy() for x in opt.variables]
    new_w, new_opt = opt.stateless_apply(
        [x.value for x in opt.variables], [ops.ones((4, 3))], [v.value])
    np.testing.assert_array_equal(ops.convert_to_numpy(v), before)
    for x, s in zip(opt.variables, state):
        np.testing.assert_array_equal(ops.convert_to_numpy(x), s)
    opt.apply([ops.ones((4, 3))], [v])
    np.testing.assert_allclose(ops.convert_to_numpy(new_w[0]), ops.convert_to_numpy(v),
                               rtol=1e-5)
    for x, s in zip(opt.variables, new_opt):
        np.testing.assert_allclose(ops.convert_to_numpy(x), ops.convert_to_numpy(s),
                                   rtol=1e-5)

    # A gradient of the wrong shape names the optimizer, the variable and the shapes.
    with pytest.raises(ValueError, match=r"Adam\.apply") as info:
        opt.apply([ops.ones((3, 4))], [v])
    msg = str(info.value)
    assert "(3, 4)" in msg and "(4, 3)" in msg, msg


def test_fit_with_fused_adam_equals_generic_adam():
    rng = np.random.default_rng(0)
    x = rng.standard_normal((96, 8)).astype("float32")
    y = rng.integers(0, 3, 96)

    def train(opt):
        keras.utils.set_random_seed(0)
        model = keras.Sequential([keras.Input((8,)),
                                  keras.layers.Dense(16, activation="relu"),
                                  keras.layers.Dense(3, activation="softmax")])
        model.compile(optimizer=opt, loss="sparse_categorical_crossentropy",
                      metrics=["accuracy"])
        h = model.fit(x, y, batch_size=32, epochs=2, verbose=0, shuffle=False)
        return model.get_weights(), h.history["loss"]

    w1, l1 = train(keras.optimizers.Adam(0.01, weight_decay=0.01))
    w2, l2 = train(generic(keras.optimizers.Adam)(0.01, weight_decay=0.01))
    for a, b in zip(w1, w2):
        np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(l1, l2, rtol=1e-5)
