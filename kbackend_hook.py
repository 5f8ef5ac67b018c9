"""The import hook that lets Keras 3 load kbackend as its backend.

Keras 3.15 picks its backend among built-in names only: ``keras.src.backend`` and a
few modules that choose a backend-specific base class (``keras.src.layers.layer``,
``keras.src.models.model``, ``keras.src.optimizers.optimizer``,
``keras.src.export.saved_model``) run an ``if/elif`` chain on ``keras.config.backend()``
that ends in an error for any other name, and so does ``export_onnx``
(``keras.src.export.onnx``) inside its body.

``kbackend_hook.pth``, which the package installs in site-packages (regular and
editable installs), runs at interpreter start: it puts a one-method watcher first on
``sys.meta_path`` and imports nothing. When ``keras`` is imported the watcher imports
this module (:func:`keras_imported`), which puts :class:`KerasBackendFinder` in its
place; the finder decides then, the way Keras decides (:func:`requested_backend`):
``KERAS_BACKEND`` from ``os.environ`` at that moment, else the ``backend`` of
``keras.json`` in ``KERAS_HOME`` (default ``~/.keras``). So all of Keras' documented
ways select kbackend: the shell variable, ``os.environ["KERAS_BACKEND"] = "kbackend"``
in the script before ``import keras``, and ``keras.json``. When the answer is another
backend the finder takes itself off ``sys.meta_path`` and Keras runs exactly as
without kbackend (nothing patched, ``core`` and ``kbackend`` never imported). ``import
kbackend`` before Keras installs the same finder (see ``kbackend/__init__.py``).

When kbackend is chosen, the finder first checks that the installed Keras is in the
tested range (``TESTED_KERAS``; otherwise an ImportError naming both versions) and
then loads the modules named in ``PATCHES`` from Keras' own source with one more
``elif`` branch for ``"kbackend"``, inserted into the syntax tree before the chain's
``openvino`` branch (``jax`` in the optimizer's chain, which has no ``openvino``
one; ``torch`` in ``export_onnx``'s, which calls :mod:`kbackend.onnx_export`), that
takes the backend's modules or classes from ``kbackend``. Nothing else of Keras is
touched, and Keras' line numbers are kept. A missing anchor, or a Keras
module without its Python source (a byte-compiled-only install), is an ImportError
naming the file and the Keras version, never a silently unpatched module. The
patched code objects are cached beside Keras' own bytecode
(``__pycache__/<module>.<tag>.opt-kbackend.pyc``, a hash-checked ``.pyc`` keyed on
Keras' source and the patch), so later start-ups skip the parse and compile.

Two methods are fixed after their modules run (``POST_EXEC``): Keras'
``DynamicBackend.__getattr__`` (``keras.src.utils.backend_utils``), through which the
preprocessing layers reach the backend, answers attributes of ``keras.src.backend``
for ``"kbackend"`` instead of falling through to None; and ``BatchNormalization``
accepts ``synchronized=True`` (Keras allows it on TensorFlow only; kbackend computes
the global batch's moments under ``DataParallel``).
"""
import os
import sys

BACKEND_NAME = "kbackend"
# The tested Keras range: >=3.15,<3.16.
TESTED_KERAS = ((3, 15), (3, 16))
TESTED_KERAS_TEXT = ">=3.15,<3.16"
# Bumped whenever patch_code changes what it produces for the same PATCHES text: it is
# part of the cached bytecode's key.
_PATCH_FORMAT = b"kbackend-patch-2"

# module -> (the line of the chain's branch ours goes before, our branch). Our branch
# is inserted into the module's syntax tree with the anchor's line number, so every
# line of Keras keeps its number in tracebacks.
PATCHES = {
    "keras.src.backend": (
        'elif backend() == "openvino":',
        (
            'if backend() == "kbackend":\n'
            "    from kbackend.backend import *  # noqa: F403\n"
            "    from kbackend.core import Variable as BackendVariable\n"
            "\n"
            "    from kbackend import distribution_lib\n"
        ),
    ),
    "keras.src.layers.layer": (
        'elif backend.backend() == "openvino":',
        (
            'if backend.backend() == "kbackend":\n'
            "    from kbackend.layer import KBackendLayer as BackendLayer\n"
        ),
    ),
    "keras.src.models.model": (
        'elif backend.backend() == "openvino":',
        (
            'if backend.backend() == "kbackend":\n'
            "    from kbackend.trainer import KBackendTrainer as Trainer\n"
        ),
    ),
    # keras.Optimizer's base class: the fused built-in optimizers (kbackend/optimizer.py).
    # This chain has no openvino branch; ours goes before the jax one.
    "keras.src.optimizers.optimizer": (
        'elif backend.backend() == "jax":',
        (
            'if backend.backend() == "kbackend":\n'
            "    from kbackend.optimizer import KBackendOptimizer as BackendOptimizer\n"
        ),
    ),
    "keras.src.export.saved_model": (
        'elif backend.backend() == "openvino":',
        (
            'if backend.backend() == "kbackend":\n'
            "    from kbackend.export import (\n"
            "        KBackendExportArchive as BackendSavedModelExportArchive,\n"
            "    )\n"
        ),
    ),
    # The chain inside export_onnx (tensorflow / jax / torch / else raise): ours goes
    # before the torch branch and writes the file through core.onnx.
    "keras.src.export.onnx": (
        '    elif backend.backend() == "torch":',
        (
            'if backend.backend() == "kbackend":\n'
            "    from kbackend.onnx_export import export_onnx as _kbackend_export_onnx\n"
            "\n"
            "    _kbackend_export_onnx(model, filepath, input_signature,\n"
            "                          opset_version=opset_version, verbose=actual_verbose,\n"
            "                          input_names=input_names, **kwargs)\n"
        ),
    ),
}


def keras_dir() -> str:
    """The folder Keras reads ``keras.json`` from, found as Keras 3.15 finds it.

    ``KERAS_HOME`` when set; else ``~/.keras``, or ``/tmp/.keras`` when the home
    folder is not writable (``keras/src/backend/config.py``).
    """
    if "KERAS_HOME" in os.environ:
        return os.environ["KERAS_HOME"]
    base = os.path.expanduser("~")
    if not os.access(base, os.W_OK):
        base = "/tmp"
    return os.path.join(base, ".keras")


def requested_backend() -> str:
    """The backend Keras will choose if it is imported now, decided as Keras does.

    A non-empty ``KERAS_BACKEND`` in ``os.environ`` wins; else the ``backend`` entry of
    ``keras.json`` in :func:`keras_dir`; else Keras' default, ``"tensorflow"``.

    Returns:
        The backend's name.

    Example:
        >>> os.environ["KERAS_BACKEND"] = "kbackend"  # as a script does before `import keras`
        >>> requested_backend()
        'kbackend'
    """
    backend = os.environ.get("KERAS_BACKEND")
    if backend:
        return backend
    import json

    path = os.path.expanduser(os.path.join(keras_dir(), "keras.json"))
    try:
        with open(path) as f:
            config = json.load(f)
    except (OSError, ValueError):  # Keras ignores an unreadable or invalid file too
        return "tensorflow"
    backend = config.get("backend") if isinstance(config, dict) else None
    return backend if isinstance(backend, str) else "tensorflow"


def keras_version() -> str:
    """The installed Keras' version, from its distribution metadata."""
    from importlib import metadata

    return metadata.version("keras")


def check_keras_version(version: str | None = None) -> None:
    """Raise ImportError unless ``version`` (default: the installed one) is tested."""
    version = keras_version() if version is None else version
    try:
        parts = tuple(int(p) for p in version.split(".")[:2])
    except ValueError:
        parts = None
    low, high = TESTED_KERAS
    if parts is None or not low <= parts < high:
        raise ImportError(
            f"kbackend supports keras {TESTED_KERAS_TEXT}, but keras {version} is "
            f"installed; install a tested version with: pip install "
            f"\"keras{TESTED_KERAS_TEXT}\" (or choose another Keras backend)"
        )


def patch_code(fullname: str, source: str, path: str):
    """Keras' module ``fullname`` compiled with the kbackend branch inserted."""
    import ast

    anchor, branch = PATCHES[fullname]
    lines = [i for i, line in enumerate(source.splitlines(), 1) if line == anchor]
    tree = ast.parse(source, path)
    parent = None
    if len(lines) == 1:
        # the if/elif chain holding the anchor: at module level, or in a function body
        for node in ast.walk(tree):
            while isinstance(node, ast.If) and len(node.orelse) == 1:
                nxt = node.orelse[0]
                if isinstance(nxt, ast.If) and nxt.lineno == lines[0]:
                    parent = node
                    break
                node = nxt
            if parent is not None:
                break
    if parent is None:
        raise ImportError(
            f"kbackend cannot register with Keras: {fullname} ({path}) has no "
            f"if/elif branch {anchor!r} (keras {keras_version()}; kbackend supports "
            f"keras {TESTED_KERAS_TEXT})")
    ours = ast.parse(branch).body[0]
    for node in ast.walk(ours):
        if hasattr(node, "lineno"):
            node.lineno = node.end_lineno = lines[0]
            node.col_offset, node.end_col_offset = 0, len(anchor)
    ours.orelse = parent.orelse
    parent.orelse = [ours]
    return compile(tree, path, "exec", dont_inherit=True)


def patched_cache_path(origin: str) -> str:
    """Where the patched bytecode of Keras' source file ``origin`` is cached."""
    from importlib.util import cache_from_source

    return cache_from_source(origin, optimization=BACKEND_NAME)


def _cache_key(fullname: str, source: bytes) -> bytes:
    from importlib.util import source_hash

    anchor, branch = PATCHES[fullname]
    return source_hash(b"\0".join((_PATCH_FORMAT, anchor.encode(), branch.encode(), source)))


def _read_cached(cache: str, key: bytes):
    """The code object cached at ``cache`` for ``key``, or None."""
    import marshal
    from importlib.util import MAGIC_NUMBER

    try:
        with open(cache, "rb") as f:
            data = f.read()
    except OSError:
        return None
    # A hash-checked .pyc (PEP 552): magic, flags 0b11, the 8-byte key, marshalled code.
    if data[:16] != MAGIC_NUMBER + (3).to_bytes(4, "little") + key:
        return None
    try:
        return marshal.loads(data[16:])
    except (EOFError, ValueError, TypeError):
        return None


def _write_cached(cache: str, key: bytes, code) -> None:
    """Write ``code`` to ``cache`` atomically; a folder that is not writable is fine."""
    import marshal
    from importlib.util import MAGIC_NUMBER

    if sys.dont_write_bytecode:
        return
    tmp = f"{cache}.{os.getpid()}.tmp"
    try:
        os.makedirs(os.path.dirname(cache), exist_ok=True)
        with open(tmp, "wb") as f:
            f.write(MAGIC_NUMBER + (3).to_bytes(4, "little") + key + marshal.dumps(code))
        os.replace(tmp, cache)
    except OSError:
        try:
            os.unlink(tmp)
        except OSError:
            pass


class PatchingLoader:
    """Loads a module of ``PATCHES`` from Keras' own source, with the kbackend branch.

    Wraps the loader Python would have used (a source file or a zip archive); other
    attributes (``is_package``, ``get_filename``, resources) are that loader's.
    """

    def __init__(self, loader, fullname: str, origin: str):
        self.loader, self.name, self.path = loader, fullname, origin

    def create_module(self, spec):
        return None

    def exec_module(self, module):
        exec(self.get_code(module.__name__), module.__dict__)

    def get_source(self, fullname):
        return self.loader.get_source(fullname)

    def get_code(self, fullname):
        try:
            source = self.loader.get_source(fullname)
        except ImportError:
            source = None
        if source is None:
            raise ImportError(
                f"kbackend cannot register with Keras: {fullname} ({self.path}) has no "
                f"Python source, only bytecode (keras {keras_version()} was installed "
                f"without its .py files); kbackend adds its branch to Keras' source. "
                f"Reinstall Keras from its wheel: pip install --force-reinstall "
                f"\"keras=={keras_version()}\"", name=fullname, path=self.path)
        from importlib.machinery import SourceFileLoader

        if not isinstance(self.loader, SourceFileLoader):  # a zip archive: no cache
            return patch_code(fullname, source, self.path)
        cache, key = patched_cache_path(self.path), _cache_key(fullname, source.encode())
        code = _read_cached(cache, key)
        if code is None:
            code = patch_code(fullname, source, self.path)
            _write_cached(cache, key, code)
        return code

    def __getattr__(self, name):
        return getattr(self.loader, name)


# Modules fixed after they execute: module -> function(module). Keras'
# DynamicBackend.__getattr__ (keras.src.utils.backend_utils) is a chain of `if`s on the
# backend name with no final else, so it returns None for "kbackend"; every
# preprocessing layer reaches the backend through it (data_layer.py: self.backend).
def _fix_dynamic_backend(module) -> None:
    original = module.DynamicBackend.__getattr__

    def __getattr__(self, name):
        if self._backend == BACKEND_NAME:
            import importlib

            return getattr(importlib.import_module("keras.src.backend"), name)
        return original(self, name)

    module.DynamicBackend.__getattr__ = __getattr__


# Keras' BatchNormalization refuses synchronized=True on any backend but TensorFlow;
# kbackend computes synchronized moments (the global batch's under DataParallel,
# kbackend/sync_moments.py), so the check is skipped and the flag kept.
def _allow_synchronized_batch_norm(module) -> None:
    import inspect

    cls = module.BatchNormalization
    original = cls.__init__

    def __init__(self, *args, synchronized=False, **kwargs):
        original(self, *args, **kwargs)
        self.synchronized = bool(synchronized)

    # Keras' auto-config reads the constructor's signature: keep the original one
    __init__.__signature__ = inspect.signature(original)
    __init__.__doc__ = original.__doc__
    cls.__init__ = __init__


POST_EXEC = {"keras.src.utils.backend_utils": _fix_dynamic_backend,
             "keras.src.layers.normalization.batch_normalization":
                 _allow_synchronized_batch_norm}


class PostExecLoader:
    """Wraps ``loader`` so that ``fix(module)`` runs after the module executes."""

    def __init__(self, loader, fix):
        self.loader, self.fix = loader, fix

    def create_module(self, spec):
        return self.loader.create_module(spec)

    def exec_module(self, module):
        self.loader.exec_module(module)
        self.fix(module)

    def __getattr__(self, name):  # get_source, get_code, is_package, ...
        return getattr(self.loader, name)


class KerasBackendFinder:
    """A meta-path finder that registers kbackend with Keras when Keras chooses it.

    Undecided until ``keras`` is imported; then active (patching the modules of
    ``PATCHES`` and ``POST_EXEC`` as they load) when :func:`requested_backend` is
    ``"kbackend"``, and otherwise removed from ``sys.meta_path``.
    """

    def __init__(self):
        self.active: bool | None = None

    def find_spec(self, fullname, path=None, target=None):
        if self.active is None:
            if fullname != "keras":
                return None
            return self._decide()
        if not self.active or not fullname.startswith("keras."):
            return None
        if fullname not in PATCHES and fullname not in POST_EXEC:
            return None
        from importlib.machinery import PathFinder

        spec = PathFinder.find_spec(fullname, path)
        if spec is None or spec.loader is None:
            return spec
        if fullname in POST_EXEC:
            spec.loader = PostExecLoader(spec.loader, POST_EXEC[fullname])
        else:
            spec.loader = PatchingLoader(spec.loader, fullname, spec.origin)
        return spec

    def _decide(self):
        if requested_backend() != BACKEND_NAME:
            self.active = False
            # A new list, not an in-place removal: the import system is iterating
            # over the current one.
            sys.meta_path = [f for f in sys.meta_path if f is not self]
            return None
        check_keras_version()
        self.active = True
        return None

    def invalidate_caches(self):
        pass


def keras_imported() -> None:
    """Called by the start-up watcher of ``kbackend_hook.pth`` when ``keras`` is imported.

    Replaces the watcher by a :class:`KerasBackendFinder` (the one ``import kbackend``
    installed, if any), which decides at once whether kbackend is Keras' backend.
    """
    # A new list, not in-place changes: see KerasBackendFinder._decide.
    finders = [f for f in sys.meta_path if type(f).__name__ != "KerasImportWatcher"]
    finder = next((f for f in finders if isinstance(f, KerasBackendFinder)), None)
    if finder is None:
        finder = KerasBackendFinder()
        finders.insert(0, finder)
    sys.meta_path = finders
    return finder.find_spec("keras")


def install() -> KerasBackendFinder:
    """Put the finder first on ``sys.meta_path`` (once) and return it."""
    for finder in sys.meta_path:
        if isinstance(finder, KerasBackendFinder):
            return finder
    finder = KerasBackendFinder()
    sys.meta_path.insert(0, finder)
    return finder
