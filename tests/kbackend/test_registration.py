"""Choosing kbackend the ways Keras documents: the .pth watcher, the finder, the checks.

Each way runs in a fresh interpreter (conftest.run_python): Keras chooses its backend
once, when it is first imported, so these are the tests that must start one. The
patching and its bytecode cache are also tested in this process, on copies of
Keras' files.
"""
from __future__ import annotations

import json
import shutil
import sys
import textwrap
from importlib.machinery import SourceFileLoader
from pathlib import Path

import keras
import pytest

import kbackend_hook

from .conftest import check, run_python

_FINDERS = "[type(f).__name__ for f in sys.meta_path if 'Keras' in type(f).__name__]"
# After `import keras` chose another backend: no finder of ours is left and nothing of
# kbackend was imported (kbackend_hook, which decided, is the one module of ours).
_NOTHING_OF_OURS = """
    import sys
    assert {finders} == [], {finders}
    for name in ("core", "kbackend"):
        assert name not in sys.modules, name + " was imported"
    for name in ("keras.src.backend", "keras.src.layers.layer", "keras.src.models.model"):
        if name in sys.modules:
            loader = type(sys.modules[name].__spec__.loader).__name__
            assert loader == "SourceFileLoader", (name, loader)
""".format(finders=_FINDERS)
_WORKS = """
    import numpy as np
    import keras
    assert keras.config.backend() == "kbackend", keras.config.backend()
    a = np.arange(6, dtype="float32").reshape(2, 3)
    b = np.linspace(-1, 1, 6, dtype="float32").reshape(3, 2)
    got = keras.ops.matmul(keras.ops.add(a, 1.0), b)
    assert type(got).__module__ == "core.ndarray", type(got)
    np.testing.assert_allclose(keras.ops.convert_to_numpy(got), (a + 1) @ b, rtol=1e-6)
    print("ok")
"""


def _program(*parts: str) -> str:
    return "\n".join(textwrap.dedent(part) for part in parts)


def _keras_json(folder: Path, backend: str) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "keras.json").write_text(json.dumps({
        "floatx": "float32", "epsilon": 1e-07, "backend": backend,
        "image_data_format": "channels_last"}))
    return folder


def test_start_up_imports_nothing(hook_installed):
    out = check(run_python(f"""
        import sys
        assert {_FINDERS} == ["KerasImportWatcher"], {_FINDERS}
        for name in ("core", "kbackend", "kbackend_hook", "json"):
            assert name not in sys.modules, name
        print("ok")
    """, keras_backend="kbackend"))
    assert out.strip() == "ok"


def test_shell_variable(hook_installed):
    out = check(run_python(_program("""
        import sys
        assert "core" not in sys.modules and "kbackend" not in sys.modules
    """, _WORKS, f"""
        assert {_FINDERS} == ["KerasBackendFinder"], {_FINDERS}
    """), keras_backend="kbackend"))
    assert out.strip() == "ok"


def test_os_environ_in_the_script(hook_installed):
    out = check(run_python(_program("""
        import os
        os.environ["KERAS_BACKEND"] = "kbackend"
    """, _WORKS), keras_backend=None))
    assert out.strip() == "ok"


def test_keras_json_in_home(hook_installed, tmp_path):
    _keras_json(tmp_path / ".keras", "kbackend")
    out = check(run_python(_WORKS, keras_backend=None,
                           env={"HOME": str(tmp_path), "KERAS_HOME": None}))
    assert out.strip() == "ok"


def test_keras_json_in_keras_home(hook_installed, tmp_path):
    home = _keras_json(tmp_path / "elsewhere", "kbackend")
    out = check(run_python(_WORKS, keras_backend=None, env={"KERAS_HOME": str(home)}))
    assert out.strip() == "ok"


def test_empty_variable_falls_back_to_keras_json(hook_installed, tmp_path):
    # Keras ignores an empty KERAS_BACKEND; so does the finder.
    home = _keras_json(tmp_path / "k", "kbackend")
    out = check(run_python(_WORKS, keras_backend="", env={"KERAS_HOME": str(home)}))
    assert out.strip() == "ok"


def test_variable_wins_over_keras_json(hook_installed, tmp_path):
    home = _keras_json(tmp_path / "k", "kbackend")
    out = check(run_python(_program("""
        try:
            import keras
        except ValueError as e:
            print("error:", e)
    """, _NOTHING_OF_OURS), keras_backend="no_such_backend", env={"KERAS_HOME": str(home)}))
    # Keras' own error, untouched.
    assert out.strip() == "error: Unable to import backend : no_such_backend"


@pytest.mark.parametrize("backend", ["numpy", "jax", None])
def test_other_backend_keras_unchanged(hook_installed, tmp_path, backend):
    # None: no variable and a keras.json naming jax. Keras' numpy and jax backends
    # need jax, its default (tensorflow) needs tensorflow: where one is missing, import
    # keras fails for that reason, which is fine here; nothing of kbackend takes part.
    home = _keras_json(tmp_path / "k", "jax")
    out = check(run_python(_program("""
        try:
            import keras
            from keras.src.backend.config import backend
            print("imported", backend())
        except ImportError as e:
            assert e.name in ("jax", "tensorflow"), repr(e)
            print("imported no", e.name)
    """, _NOTHING_OF_OURS, """
        print("ok")
    """), keras_backend=backend, env={"KERAS_HOME": str(home)}))
    assert out.strip().endswith("ok")
    if "imported no" not in out:
        assert f"imported {backend or 'jax'}" in out


def test_import_kbackend_before_keras(hook_installed):
    out = check(run_python(_program("""
        import os, sys
        import kbackend
        assert "core" not in sys.modules, "import kbackend must not import core"
        assert os.environ["KERAS_BACKEND"] == "kbackend"
    """, _WORKS), keras_backend=None))
    assert out.strip() == "ok"


def test_import_kbackend_without_the_pth():
    # python -S runs no .pth file; the paths are this interpreter's, given by hand.
    paths = [p for p in sys.path if p]
    out = check(run_python(_program(f"""
        import sys
        sys.path[:0] = {paths!r}
        assert {_FINDERS} == [], {_FINDERS}
        import kbackend
    """, _WORKS), keras_backend=None, flags=("-S",)))
    assert out.strip() == "ok"


def test_import_kbackend_with_other_backend_warns(hook_installed):
    out = check(run_python(f"""
        import os, sys, warnings
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            import kbackend
        assert os.environ["KERAS_BACKEND"] == "numpy"
        assert "KerasBackendFinder" not in {_FINDERS}, {_FINDERS}
        assert any("KERAS_BACKEND='numpy'" in str(w.message) for w in caught), caught
        print("ok")
    """, keras_backend="numpy"))
    assert out.strip() == "ok"


def test_import_kbackend_after_keras_warns(hook_installed, tmp_path):
    home = _keras_json(tmp_path / "k", "jax")
    out = check(run_python("""
        import os, warnings
        try:
            import keras
        except ImportError:  # jax, the backend keras.json names, may be missing
            pass
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            import kbackend
        assert any("imported after keras" in str(w.message) for w in caught), caught
        assert "KERAS_BACKEND" not in os.environ
        print("ok")
    """, keras_backend=None, env={"KERAS_HOME": str(home)}))
    assert out.strip() == "ok"


@pytest.mark.parametrize("way", ["variable", "keras.json", "import kbackend"])
def test_unsupported_keras_version_fails_clearly(hook_installed, tmp_path, way):
    home = _keras_json(tmp_path / "k", "kbackend")
    env = {"KERAS_HOME": str(home)} if way == "keras.json" else {}
    proc = run_python(f"""
        import importlib.metadata as md
        real = md.version
        md.version = lambda name: "3.16.0" if name == "keras" else real(name)
        {"import kbackend" if way == "import kbackend" else ""}
        import keras
    """, keras_backend="kbackend" if way == "variable" else None, env=env)
    assert proc.returncode != 0
    assert ("ImportError: kbackend supports keras >=3.15,<3.16, but keras 3.16.0 is "
            "installed") in proc.stderr, proc.stderr


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


def test_patched_modules_keep_keras_line_numbers():
    # The branch goes into the syntax tree, so tracebacks show Keras' own lines.
    import inspect

    from keras.src import backend
    from keras.src.layers import layer

    for fn in (backend.device, layer.Layer.__init__):
        assert inspect.getsourcelines(fn)[1] == fn.__code__.co_firstlineno, fn
    assert type(backend.__spec__.loader).__name__ == "PatchingLoader"


def _keras_copy(tmp_path: Path) -> Path:
    """A copy of the installed Keras' sources (no bytecode) under ``tmp_path``."""
    src = Path(keras.__file__).parent
    shutil.copytree(src, tmp_path / "keras", ignore=shutil.ignore_patterns("__pycache__"))
    return tmp_path


def test_zipped_keras_is_patched_through_its_loader(hook_installed, tmp_path):
    archive = shutil.make_archive(str(tmp_path / "keras"), "zip", _keras_copy(tmp_path),
                                  "keras")
    out = check(run_python(_program(f"""
        import keras
        assert keras.__file__.startswith({archive!r}), keras.__file__
        from keras.src import backend
        assert type(backend.__spec__.loader.loader).__name__ == "zipimporter"
    """, _WORKS), keras_backend="kbackend", env={"PYTHONPATH": archive}))
    assert out.strip() == "ok"


def test_sourceless_keras_fails_naming_the_file(hook_installed, tmp_path):
    # A Keras installed as bytecode only (compileall -b, then the .py removed).
    import py_compile

    root = _keras_copy(tmp_path)
    source = root / "keras" / "src" / "layers" / "layer.py"
    py_compile.compile(str(source), cfile=str(source.with_suffix(".pyc")), doraise=True)
    source.unlink()
    proc = run_python("import keras", keras_backend="kbackend",
                      env={"PYTHONPATH": str(root)})
    assert proc.returncode != 0
    message = proc.stderr.strip().splitlines()[-1]
    assert message.startswith("ImportError: kbackend cannot register with Keras"), message
    assert "keras.src.layers.layer" in message and str(source.with_suffix(".pyc")) in message
    assert f"keras {kbackend_hook.keras_version()}" in message
    assert "pip install --force-reinstall" in message


# The patched bytecode cache, in this process on a copy of one of Keras' modules.
_CACHED = "keras.src.optimizers.optimizer"


@pytest.fixture
def module_copy(tmp_path, monkeypatch):
    import importlib.util

    monkeypatch.setattr(sys, "dont_write_bytecode", False)
    source = Path(importlib.util.find_spec(_CACHED).origin)
    path = tmp_path / "optimizer.py"
    shutil.copy(source, path)
    return path


def _loader(path: Path):
    return kbackend_hook.PatchingLoader(SourceFileLoader(_CACHED, str(path)), _CACHED,
                                        str(path))


def test_patched_code_is_cached_and_reused(module_copy, monkeypatch):
    cache = Path(kbackend_hook.patched_cache_path(str(module_copy)))
    assert cache.name.endswith(".opt-kbackend.pyc"), cache
    first = _loader(module_copy).get_code(_CACHED)
    assert cache.is_file()
    assert "KBackendOptimizer" in first.co_names

    def no_patching(*args):
        raise AssertionError("patched again although the cache is current")

    monkeypatch.setattr(kbackend_hook, "patch_code", no_patching)
    second = _loader(module_copy).get_code(_CACHED)
    assert second == first and second.co_filename == str(module_copy)


def test_changed_source_or_patch_is_patched_again(module_copy, monkeypatch):
    _loader(module_copy).get_code(_CACHED)
    calls = []
    real = kbackend_hook.patch_code

    def counting(*args):
        calls.append(args[0])
        return real(*args)

    monkeypatch.setattr(kbackend_hook, "patch_code", counting)
    with open(module_copy, "a") as f:
        f.write("\n# edited\n")
    _loader(module_copy).get_code(_CACHED)
    assert calls == [_CACHED]
    anchor, branch = kbackend_hook.PATCHES[_CACHED]
    monkeypatch.setitem(kbackend_hook.PATCHES, _CACHED, (anchor, branch + "    pass\n"))
    _loader(module_copy).get_code(_CACHED)
    assert calls == [_CACHED, _CACHED]


def test_corrupt_or_unwritable_cache_is_ignored(module_copy, monkeypatch):
    cache = Path(kbackend_hook.patched_cache_path(str(module_copy)))
    _loader(module_copy).get_code(_CACHED)
    data = cache.read_bytes()
    cache.write_bytes(data[:40])  # header intact, code cut short
    assert _loader(module_copy).get_code(_CACHED).co_filename == str(module_copy)
    cache.unlink()
    monkeypatch.setattr(sys, "dont_write_bytecode", True)
    _loader(module_copy).get_code(_CACHED)
    assert not cache.exists()


def test_requested_backend_reads_keras_json(tmp_path, monkeypatch):
    monkeypatch.delenv("KERAS_BACKEND")
    monkeypatch.setenv("KERAS_HOME", str(_keras_json(tmp_path / "k", "kbackend")))
    assert kbackend_hook.requested_backend() == "kbackend"
    monkeypatch.setenv("KERAS_BACKEND", "jax")
    assert kbackend_hook.requested_backend() == "jax"
    monkeypatch.setenv("KERAS_BACKEND", "")
    assert kbackend_hook.requested_backend() == "kbackend"
    (tmp_path / "k" / "keras.json").write_text("{not json")
    assert kbackend_hook.requested_backend() == "tensorflow"
    monkeypatch.setenv("KERAS_HOME", str(tmp_path / "missing"))
    assert kbackend_hook.requested_backend() == "tensorflow"
