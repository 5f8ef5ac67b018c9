"""kbackend's distribution_lib (devices for keras.distribution) and export errors."""
from __future__ import annotations

import keras
import numpy as np
import pytest
from keras.distribution import DeviceMesh, TensorLayout
from keras.src import backend

from core.context import num_gpus
from kbackend import distribution_lib as d

# distribution_lib reads it at each call
NUM_CPU_ENV = "KBACKEND_NUM_CPU_DEVICES"


def test_list_devices_cpu_and_gpu(monkeypatch):
    monkeypatch.delenv(NUM_CPU_ENV, raising=False)
    ngpu = num_gpus()
    gpus = [f"gpu:{i}" for i in range(ngpu)]
    assert d.list_devices("cpu") == ["cpu:0"] and d.get_device_count("cpu") == 1
    assert d.list_devices("GPU") == gpus
    assert d.list_devices() == (gpus if ngpu else ["cpu:0"])

    monkeypatch.setenv(NUM_CPU_ENV, "3")
    assert d.list_devices("cpu") == ["cpu:0", "cpu:1", "cpu:2"]
    assert d.get_device_count("cpu") == 3
    for value in ("0", "two"):
        monkeypatch.setenv(NUM_CPU_ENV, value)
        with pytest.raises(ValueError, match=NUM_CPU_ENV):
            d.list_devices("cpu")
    monkeypatch.delenv(NUM_CPU_ENV)
    with pytest.raises(ValueError, match="'tpu'") as info:
        d.list_devices("tpu")
    assert info.type is ValueError
    with pytest.raises(TypeError) as info:
        d.list_devices(3)
    assert info.type is TypeError


def test_keras_distribution_uses_kbackend_devices(monkeypatch):
    assert backend.distribution_lib is d
    monkeypatch.setenv(NUM_CPU_ENV, "2")
    assert keras.distribution.list_devices("cpu") == ["cpu:0", "cpu:1"]
    assert keras.distribution.get_device_count("cpu") == 2


def test_layouts_processes_and_placement():
    x = keras.ops.arange(6.0)
    one = DeviceMesh((1,), ["batch"], ["cpu:1"])
    y = d.distribute_tensor(x, TensorLayout(["batch"], one))
    assert str(y.context) == "cpu(1)"
    assert np.asarray(keras.ops.convert_to_numpy(y)).tolist() == [0.0, 1.0, 2.0, 3.0, 4.0,
                                                                  5.0]
    two = DeviceMesh((2,), ["batch"], ["cpu:0", "cpu:1"])
    assert d.distribute_variable(x, TensorLayout([None], two)) is x
    # DataParallel's batch layout: the trainer splits the batch (kbackend.data_parallel)
    assert d.distribute_data_input(x, TensorLayout(["batch"], two), "batch") is x
    with pytest.raises(NotImplementedError, match="cannot shard") as info:
        d.distribute_tensor(x, TensorLayout(["batch"], two))
    assert "'batch': 2" in str(info.value)
    with pytest.raises(ValueError, match="device mesh is not set"):
        d._to_backend_layout(TensorLayout(["batch"]))
    assert str(d._to_backend_mesh(two).tolist()) == "[cpu(0), cpu(1)]"
    assert (d.num_processes(), d.process_id()) == (1, 0)
    d.initialize(None, None, None)
    with pytest.raises(ValueError, match="single process") as info:
        d.initialize("a:1,b:2", 2, 0)
    assert "num_processes=2" in str(info.value)


@pytest.mark.parametrize("make", [lambda model: model.export("/nonexistent/m"),
                                  lambda model: keras.export.ExportArchive()],
                         ids=["model.export", "ExportArchive"])
def test_export_saved_model_names_the_format(make):
    model = keras.Sequential([keras.Input((3,)), keras.layers.Dense(2)])
    model(np.zeros((1, 3), "float32"))
    with pytest.raises(NotImplementedError) as info:
        make(model)
    assert isinstance(info.value, ValueError)
    err = str(info.value)
    assert err.startswith("`export_saved_model` only currently supports the "
                          "tensorflow, jax and torch backends.")  # Keras' tests
    assert "'tf_saved_model'" in err and "kbackend" in err
    assert "model.save('model.keras')" in err
