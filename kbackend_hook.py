"""The import hook that lets Keras 3 load kbackend as its backend.

Keras 3.15 picks its backend among built-in names only: ``keras.src.backend`` and a
few modules that choose a backend-specific base class (``keras.src.layers.layer``,
``keras.src.models.model``, ``keras.src.optimizers.optimizer``,
``keras.src.export.saved_model``) run an ``if/elif``
chain on ``keras.config.backend()`` that ends in an error for any other name.

``kbackend_hook.pth``, which the package installs next to this module in
site-packages (regular and editable installs), runs at interpreter start. When
``KERAS_BACKEND=kbackend`` is set it imports this module and calls :func:`install`,
which puts :class:`KerasBackendFinder` first on ``sys.meta_path``; with any other
value (or none) it does nothing at all: this module, ``core`` and ``kbackend`` stay
unimported. ``import kbackend`` installs the same finder (see
``kbackend/__init__.py``).

The finder only acts on the modules named in ``PATCHES``: it compiles Keras' own
source for them with one more ``elif`` branch for ``"kbackend"``, inserted into the
syntax tree before the chain's ``openvino`` branch (``jax`` in the optimizer's
chain, which has no ``openvino`` one), that takes the backend's modules
or classes from ``kbackend``. Nothing else of Keras is touched, and Keras' line
numbers are kept. The anchors are exact lines of Keras 3.15; the finder first checks
that the installed Keras is in the tested range (``TESTED_KERAS``) and raises an
ImportError naming both versions otherwise, and a missing anchor is an ImportError
too, never a silently unpatched module.

One method-level chain is fixed after its module runs (``POST_EXEC``): Keras'
``DynamicBackend.__getattr__`` (``keras.src.utils.backend_utils``), through which the
preprocessing layers reach the backend, answers attributes of ``keras.src.backend``
for ``"kbackend"`` instead of falling through to None.
"""
from __future__ import annotations

import sys

BACKEND_NAME = "kbackend"
# The tested Keras range: >=3.15,<3.16.
TESTED_KERAS = ((3, 15), (3, 16))
TESTED_KERAS_TEXT = ">=3.15,<3.16"

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
}


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
            f"\"keras{TESTED_KERAS_TEXT}\" (or unset KERAS_BACKEND=kbackend)"
        )


def patch_code(fullname: str, source: str, path: str):
    """Keras' module ``fullname`` compiled with the kbackend branch inserted."""
    import ast

    anchor, branch = PATCHES[fullname]
    lines = [i for i, line in enumerate(source.splitlines(), 1) if line == anchor]
    tree = ast.parse(source, path)
    parent = None
    if len(lines) == 1:
        for node in tree.body:  # the module-level if/elif chain holding the anchor
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


def _loader_class():
    from importlib.machinery import SourceFileLoader

    class PatchingLoader(SourceFileLoader):
        """Keras' own source file, with the kbackend branch inserted."""

        def get_code(self, fullname):
            return patch_code(fullname, self.get_source(fullname), self.path)

    return PatchingLoader


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


POST_EXEC = {"keras.src.utils.backend_utils": _fix_dynamic_backend}


def _post_exec_loader(loader, fix):
    """Wrap ``loader`` so that ``fix(module)`` runs after the module executes."""

    class PostExecLoader:
        def create_module(self, spec):
            return loader.create_module(spec)

        def exec_module(self, module):
            loader.exec_module(module)
            fix(module)

        def __getattr__(self, name):  # get_source, get_code, is_package, ...
            return getattr(loader, name)

    return PostExecLoader()


class KerasBackendFinder:
    """A meta-path finder that patches the modules in ``PATCHES`` as they load."""

    def __init__(self):
        self._checked = False

    def find_spec(self, fullname, path=None, target=None):
        if fullname == "keras" and not self._checked:
            check_keras_version()
            self._checked = True
            return None
        if fullname in POST_EXEC:
            from importlib.machinery import PathFinder

            spec = PathFinder.find_spec(fullname, path)
            if spec is not None and spec.loader is not None:
                spec.loader = _post_exec_loader(spec.loader, POST_EXEC[fullname])
            return spec
        if fullname not in PATCHES:
            return None
        from importlib.machinery import PathFinder

        spec = PathFinder.find_spec(fullname, path)
        if spec is None or spec.origin is None or not spec.origin.endswith(".py"):
            return spec
        if not self._checked:
            check_keras_version()
            self._checked = True
        loader = _loader_class()(fullname, spec.origin)
        spec.loader = loader
        return spec

    def invalidate_caches(self):
        pass


def install() -> KerasBackendFinder:
    """Put the finder first on ``sys.meta_path`` (once) and return it."""
    for finder in sys.meta_path:
        if isinstance(finder, KerasBackendFinder):
            return finder
    finder = KerasBackendFinder()
    sys.meta_path.insert(0, finder)
    return finder

