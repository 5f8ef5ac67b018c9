"""Registering kbackend with Keras: the .pth hook, ``import kbackend``, the version check.

Each case runs in a fresh interpreter (conftest.run_python): Keras reads
KERAS_BACKEND once, and the hook acts at interpreter start.
"""
from __future__ import annotations

import pytest

import kbackend_hook

from .conftest import check, run_python

_OUR_FINDER = "[f for f in sys.meta_path if type(f).__name__ == 'KerasBackendFinder']"


def test_env_var_alone_selects_kbackend(hook_installed):
    out = check(run_python(f"""
        import sys
        assert {_OUR_FINDER}, "the .pth hook installed no finder"
        assert "core" not in sys.modules and "kbackend" not in sys.modules
        import numpy as np
        import keras
        assert keras.config.backend() == "kbackend", keras.config.backend()
        a = np.arange(6, dtype="float32").reshape(2, 3)
        b = np.linspace(-1, 1, 6, dtype="float32").reshape(3, 2)
        got = keras.ops.matmul(keras.ops.add(a, 1.0), b)
        assert type(got).__module__ == "core.ndarray", type(got)
        np.testing.assert_allclose(keras.ops.convert_to_numpy(got), (a + 1) @ b, rtol=1e-6)
        print("ok")
    """, keras_backend="kbackend"))
    assert out.strip() == "ok"


def test_import_kbackend_before_keras(hook_installed):
    out = check(run_python(f"""
        import os, sys
        assert not {_OUR_FINDER}, "no KERAS_BACKEND: the .pth hook must do nothing"
        import kbackend
        assert "core" not in sys.modules, "import kbackend must not import core"
        assert os.environ["KERAS_BACKEND"] == "kbackend"
        import numpy as np
        import keras
        assert keras.config.backend() == "kbackend"
        x = np.array([[-1.0, 2.0], [3.0, -4.0]], dtype="float32")
        np.testing.assert_allclose(keras.ops.convert_to_numpy(keras.ops.relu(x)),
                                   np.maximum(x, 0))
        print("ok")
    """, keras_backend=None))
    assert out.strip() == "ok"


@pytest.mark.parametrize("backend", ["numpy", None])
def test_other_backend_hook_does_nothing(hook_installed, backend):
    # Keras' numpy backend needs jax and its default (tensorflow) needs tensorflow:
    # where they are missing, import keras fails for that reason, which is fine here;
    # what matters is that nothing of kbackend took part.
    out = check(run_python(f"""
        import sys
        try:
            import keras
            from keras.src.backend.config import backend
            print("imported", backend())
        except ImportError as e:
            assert e.name in ("jax", "tensorflow"), repr(e)
            print("imported no", e.name)
        assert not {_OUR_FINDER}, "the hook installed a finder"
        for name in ("core", "kbackend", "kbackend_hook"):
            assert name not in sys.modules, name + " was imported"
        for name in ("keras.src.backend", "keras.src.layers.layer"):
            if name in sys.modules:
                loader = type(sys.modules[name].__spec__.loader).__name__
                assert loader != "PatchingLoader", (name, loader)
        print("ok")
    """, keras_backend=backend))
    assert out.strip().endswith("ok")
    if "imported no" not in out and backend is not None:
        assert f"imported {backend}" in out


def test_unsupported_keras_version_fails_clearly(hook_installed):
    proc = run_python("""
        import importlib.metadata as md
        real = md.version
        md.version = lambda name: "3.16.0" if name == "keras" else real(name)
        import keras
    """, keras_backend="kbackend")
    assert proc.returncode != 0
    assert "ImportError" in proc.stderr
    assert "keras 3.16.0 is installed" in proc.stderr
    assert "kbackend supports keras >=3.15,<3.16" in proc.stderr


def test_unsupported_keras_version_with_import_kbackend(hook_installed):
    proc = run_python("""
        import importlib.metadata as md
        real = md.version
        md.version = lambda name: "3.14.2" if name == "keras" else real(name)
        import kbackend
        import keras
    """, keras_backend=None)
    assert proc.returncode != 0
    assert "keras 3.14.2 is installed" in proc.stderr
    assert ">=3.15,<3.16" in proc.stderr


@pytest.mark.parametrize("version, ok", [
    ("3.15.0", True), ("3.15.1", True), ("3.15.2rc1", True), ("3.14.9", False),
    ("3.16.0", False), ("4.0.0", False), ("2.15.0", False), ("nightly", False),
])
def test_version_check(version, ok):
    if ok:
        kbackend_hook.check_keras_version(version)
    else:
        with pytest.raises(ImportError, match=r"supports keras >=3\.15,<3\.16"):
            kbackend_hook.check_keras_version(version)


def test_patched_modules_keep_keras_line_numbers(hook_installed):
    # The branch goes into the syntax tree, so tracebacks show Keras' own lines.
    out = check(run_python("""
        import inspect
        import keras
        from keras.src import backend
        from keras.src.layers import layer
        for fn in (backend.device, layer.Layer.__init__):
            assert inspect.getsourcelines(fn)[1] == fn.__code__.co_firstlineno, fn
        assert type(backend.__spec__.loader).__name__ == "PatchingLoader"
        print("ok")
    """, keras_backend="kbackend"))
    assert out.strip() == "ok"


def test_import_kbackend_with_other_backend_warns(hook_installed):
    out = check(run_python("""
        import os, sys, warnings
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            import kbackend
        assert os.environ["KERAS_BACKEND"] == "numpy"
        assert not [f for f in sys.meta_path if type(f).__name__ == "KerasBackendFinder"]
        assert any("KERAS_BACKEND='numpy'" in str(w.message) for w in caught), caught
        print("ok")
    """, keras_backend="numpy"))
    assert out.strip() == "ok"
