"""An opt-in ``mxnet`` alias: after ``install()``, ``import mxnet`` gives kbackend's modules.

``install()`` puts a module named ``mxnet`` into ``sys.modules`` and a finder at the front
of ``sys.meta_path`` that resolves ``mxnet.<name>[.<sub>...]`` to the kbackend module that
plays its part (``mxnet.np`` is ``core.np``, ``mxnet.gluon.nn`` is ``gluon.nn``, ...; the
table is ``ALIASES``). Nothing is written to disk and nothing outlives the process;
``uninstall()`` removes the alias again. ``import mxnet as mx`` then ``mx.np.ones(3)`` and
``from mxnet.gluon import nn`` run unchanged.

A real MXNet is never shadowed by accident: when one is importable (or already
imported), ``install()`` raises ``RuntimeError``. ``install(force=True)`` shadows an
importable but not yet imported MXNet for this process; an already imported MXNet is
never replaced.

Limits: the alias is kbackend under MXNet's names, not MXNet. Modules without a
counterpart (``mxnet.contrib.quantization``, ``mxnet.rtc``, ...)
raise ``ModuleNotFoundError`` naming the alias; ``mxnet.__version__`` is ``"2.0.0"``, the
API level emulated, and ``mxnet.__kbackend_alias__`` is True.

Example:
    >>> from gluon.compat import mxnet as alias
    >>> was_installed = alias.is_installed()
    >>> alias.install()
    >>> import mxnet as mx
    >>> from mxnet.gluon import nn
    >>> nn.Dense(2).__class__.__module__
    'gluon.nn.basic_layers'
    >>> mx.np.ones((2,)).asnumpy().tolist()
    [1.0, 1.0]
    >>> if not was_installed:
    ...     alias.uninstall()
"""
from __future__ import annotations

import importlib
import importlib.abc
import importlib.machinery
import importlib.util
import sys
import types

from core.ops import dispatch as _dispatch

__all__ = ["ALIASES", "install", "is_installed", "uninstall"]

#: ``mxnet.<name>`` -> the kbackend module that stands in for it. Submodules follow:
#: ``mxnet.gluon.data.vision`` is ``gluon.data.vision``.
ALIASES: dict[str, str] = {
    "np": "core.np",
    "numpy": "core.np",
    "npx": "core.npx",
    "numpy_extension": "core.npx",
    "nd": "core.nd",
    "ndarray": "core.nd",
    "autograd": "core.autograd",
    "context": "core.context",
    "device": "gluon.compat.device",
    "gluon": "gluon",
    "init": "gluon.init",
    "initializer": "gluon.init",
    "optimizer": "core.optimizer",
    "lr_scheduler": "core.lr_scheduler",
    "metric": "core.metric",
    "kvstore": "core.kvstore",
    "kv": "core.kvstore",
    "profiler": "core.profiler",
    "random": "core.random",
    "sym": "core.sym",
    "symbol": "core.sym",
    "test_utils": "core.test_utils",
    "visualization": "core.viz",
    "viz": "core.viz",
    "image": "gluon.compat.image",
    "engine": "core.engine",
    "runtime": "gluon.compat.runtime",
    "io": "core.io",
    "mod": "core.module",
    "module": "core.module",
    "model": "core.model",
    "callback": "core.callback",
    "monitor": "core.monitor",
    "mon": "core.monitor",
    "util": "gluon.compat.util",
    "base": "gluon.compat.util",
    "recordio": "core.recordio",
    "name": "core.name",
    "rnn": "core.rnn",
    "contrib": "core.contrib",
    "amp": "core.amp",
    "onnx": "core.onnx",
    # a dotted key aliases a submodule whose parent is aliased elsewhere: MXNet's ONNX
    # import builds a Gluon SymbolBlock, which core (mx.contrib's home) cannot import
    "contrib.onnx": "gluon.compat.onnx",
}

_ROOT = "mxnet"


# MXNet's ``mxnet.base.MXNetError`` is core's: what an operator raises when it fails for a
# reason other than bad input, and what ``nd.load`` raises for a malformed file.
MXNetError = _dispatch.MXNetError


class _Finder(importlib.abc.MetaPathFinder):
    """Resolves ``mxnet.<name>...`` to the module named by ``ALIASES``."""

    def find_spec(self, fullname, path=None, target=None):
        if not fullname.startswith(_ROOT + "."):
            return None
        rest = fullname[len(_ROOT) + 1:]
        # the longest aliased dotted prefix of the name ("contrib.onnx" before "contrib")
        parts = rest.split(".")
        for cut in range(len(parts), 0, -1):
            head = ".".join(parts[:cut])
            if head in ALIASES:
                tail = ".".join(parts[cut:])
                break
        else:
            head, tail = parts[0], ""
        if head not in ALIASES:
            raise ModuleNotFoundError(
                f"{fullname!r} has no counterpart in kbackend's mxnet alias "
                f"(gluon.compat.mxnet); aliased modules: mxnet.{', mxnet.'.join(sorted(ALIASES))}",
                name=fullname)
        target_name = ALIASES[head] + ("." + tail if tail else "")
        if importlib.util.find_spec(target_name) is None:
            raise ModuleNotFoundError(
                f"{fullname!r} has no counterpart in kbackend's mxnet alias: it would be "
                f"kbackend's {target_name!r}, which does not exist",
                name=fullname)
        return importlib.machinery.ModuleSpec(fullname, _Loader(target_name))


class _Loader(importlib.abc.Loader):
    """Loads an alias by importing its target and putting the target in ``sys.modules``.

    The import system returns whatever ``sys.modules[name]`` holds after ``exec_module``,
    so the alias is the very same module object as the target (one ``gluon.nn``, not a
    copy), and the target's own ``__name__``/``__spec__`` stay untouched.
    """

    def __init__(self, target: str):
        self.target = target

    def create_module(self, spec):
        return None

    def exec_module(self, module):
        target = importlib.import_module(self.target)
        sys.modules[module.__name__] = target
        # a dotted key under this one ("contrib.onnx" under "contrib") becomes an attribute
        # of the target while the alias is installed: ``from mxnet.contrib import onnx``
        # looks there (and then imports "core.contrib.onnx", which does not exist)
        key = module.__name__[len(_ROOT) + 1:]
        for dotted, child_target in ALIASES.items():
            parent, _, child = dotted.rpartition(".")
            if parent == key and not hasattr(target, child):
                setattr(target, child, importlib.import_module(child_target))
                _ATTACHED.append((target, child))


# (module, attribute) pairs the loader set for dotted keys; uninstall() removes them
_ATTACHED: list = []


_finder: _Finder | None = None

# mxnet.util's NumPy-mode switches that MXNet also exports at its root
_UTIL_AT_ROOT = ("np_shape", "np_array", "is_np_shape", "is_np_array", "use_np_shape",
                 "use_np_array", "use_np", "set_np", "reset_np")


def _root_module() -> types.ModuleType:
    from core import context

    root = types.ModuleType(_ROOT, "kbackend's MXNet alias (gluon.compat.mxnet.install()).")
    root.__path__ = []  # a package: ``mxnet.<name>`` imports go to the finder
    root.__spec__ = importlib.machinery.ModuleSpec(_ROOT, None, is_package=True)
    root.__version__ = "2.0.0"
    root.__kbackend_alias__ = True
    root.MXNetError = MXNetError
    root.Context = root.Device = context.Context
    root.cpu, root.gpu, root.cpu_pinned = context.cpu, context.gpu, context.cpu_pinned
    root.num_gpus = context.num_gpus
    root.current_context = root.current_device = context.current_context

    def __getattr__(name):
        if name in ALIASES:
            return importlib.import_module(f"{_ROOT}.{name}")
        if name == "AttrScope":  # mx.AttrScope, imported on first use (core.sym is large)
            from core.sym import AttrScope

            return AttrScope
        if name in _UTIL_AT_ROOT:  # mx.np_shape, mx.is_np_array, ... (mxnet.util's)
            return getattr(importlib.import_module(ALIASES["util"]), name)
        raise AttributeError(f"module 'mxnet' (kbackend's alias) has no attribute {name!r}")

    root.__getattr__ = __getattr__
    return root


def _real_mxnet_importable() -> bool:
    return importlib.machinery.PathFinder.find_spec(_ROOT) is not None


def is_installed() -> bool:
    """Whether ``import mxnet`` currently resolves to kbackend's alias.

    Returns:
        True after ``install()`` and before ``uninstall()``.

    Example:
        >>> from gluon.compat import mxnet as alias
        >>> isinstance(alias.is_installed(), bool)
        True
    """
    return _finder is not None


def install(force: bool = False) -> None:
    """Make ``import mxnet`` (and ``mxnet.<submodule>``) resolve to kbackend, in this process.

    Idempotent. Nothing is written outside the running interpreter.

    Args:
        force: shadow a real MXNet that is installed but not imported yet. Without it a
            real MXNet makes ``install()`` fail.

    Raises:
        RuntimeError: a real MXNet is importable (and ``force`` is False), or a real
            MXNet is already imported (always: a loaded module is never replaced).

    Example:
        >>> from gluon.compat import mxnet as alias
        >>> was_installed = alias.is_installed()
        >>> alias.install()
        >>> import mxnet
        >>> mxnet.__kbackend_alias__
        True
        >>> if not was_installed:
        ...     alias.uninstall()
    """
    global _finder
    if _finder is not None:
        return
    loaded = sys.modules.get(_ROOT)
    if loaded is not None and not getattr(loaded, "__kbackend_alias__", False):
        raise RuntimeError(
            f"gluon.compat.mxnet.install(): a real MXNet is already imported "
            f"({getattr(loaded, '__file__', loaded)!r}); the alias never replaces it. "
            f"Install the alias before anything imports mxnet, or use the real one.")
    if not force and _real_mxnet_importable():
        spec = importlib.machinery.PathFinder.find_spec(_ROOT)
        raise RuntimeError(
            f"gluon.compat.mxnet.install(): a real MXNet is importable from "
            f"{spec.origin or spec.submodule_search_locations!r}; the alias would shadow it. "
            f"Use the real MXNet, or call install(force=True) to shadow it in this process.")
    _finder = _Finder()
    sys.meta_path.insert(0, _finder)
    sys.modules[_ROOT] = _root_module()


def uninstall() -> None:
    """Remove the alias: ``import mxnet`` no longer resolves to kbackend.

    The kbackend modules themselves stay imported under their own names; only the
    ``mxnet`` and ``mxnet.*`` entries go. Modules that already did ``import mxnet`` keep
    the objects they hold. A no-op when the alias is not installed.

    Example:
        >>> from gluon.compat import mxnet as alias
        >>> was_installed = alias.is_installed()
        >>> alias.install(); alias.uninstall()
        >>> alias.is_installed()
        False
        >>> if was_installed:
        ...     alias.install()
    """
    global _finder
    if _finder is None:
        return
    if _finder in sys.meta_path:
        sys.meta_path.remove(_finder)
    _finder = None
    for name in [n for n in sys.modules if n == _ROOT or n.startswith(_ROOT + ".")]:
        del sys.modules[name]
    while _ATTACHED:
        target, child = _ATTACHED.pop()
        if hasattr(target, child):
            delattr(target, child)
