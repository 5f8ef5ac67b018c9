"""Testing helpers with MXNet 1.x's names, signatures and default tolerances.

``mx.test_utils`` under the ``mxnet`` alias. Comparisons (``same``, ``almost_equal``,
``assert_almost_equal`` with MXNet's per-dtype default tolerances), random inputs
(``rand_ndarray``, ``rand_shape_nd``, ``random_arrays``; drawn from NumPy's global
generator, so ``np.random.seed`` makes them reproducible as in MXNet), symbolic checks
(``check_symbolic_forward``/``backward``, ``check_numeric_gradient``,
``check_consistency``, ``check_speed``), statistical checks of random generators
(``verify_generator``), and environment helpers (``environment``, ``discard_stderr``).
Written here for kbackend's arrays; nothing downloads (``download``, ``get_mnist``, ...
use the files MXNet would have downloaded when they are on disk, and raise
:class:`NoNetworkError` naming the path otherwise). Only dense storage:
``stype='default'``. See docs/testing_with_mxnet_names.md.

kbackend's own helpers live here too: :func:`view_of` (non-contiguous inputs),
:func:`tolerances`, and :func:`check_numeric_gradient` also takes a Python function of
NDArrays instead of a Symbol.

Example:
    >>> import numpy as np
    >>> from core import nd
    >>> from core.test_utils import assert_almost_equal, get_rtol, same
    >>> assert_almost_equal(nd.array([1.0, 2.0]), np.array([1.0, 2.00001]))
    >>> get_rtol(dtype=np.dtype(np.float32))
    0.0001
    >>> same(np.arange(3), nd.arange(3).asnumpy())
    True
"""
from __future__ import annotations

# The modules MXNet's test_utils imports: ``from mxnet.test_utils import *`` gives them, and
# MXNet's tests use them (``sys``, ``np``, ``rnd``, ...).
import bz2  # noqa: F401
import errno  # noqa: F401
import gzip  # noqa: F401
import json  # noqa: F401
import logging  # noqa: F401
import numbers  # noqa: F401
import os
import platform  # noqa: F401
import struct  # noqa: F401
import sys
import time  # noqa: F401
import traceback  # noqa: F401
import zipfile  # noqa: F401
from collections import OrderedDict  # noqa: F401
from contextlib import contextmanager  # noqa: F401

import numpy as np  # noqa: F401
import numpy.random as rnd  # noqa: F401
import numpy.testing as npt  # noqa: F401

from .context import Context, current_context  # noqa: F401
from .ndarray import NDArray
from .np._mode import use_np  # noqa: F401 - mx.test_utils.use_np, as in MXNet
from .testing.compare import *
from .testing.compare import _find_max_violation  # noqa: F401
from .testing.data import *
from .testing.env import *
from .testing.generators import *
from .testing.gradient import *
from .testing.inputs import *
from .testing.symbolic import *
from .testing.symbolic import _parse_aux_states, _parse_location  # noqa: F401
from .testing.tolerance import *


def array(source_array, ctx=None, dtype=None) -> NDArray:
    """``nd.array``: an NDArray from array-like values (MXNet's test_utils imports it)."""
    from . import nd

    return nd.array(source_array, ctx=ctx, dtype=dtype)


def getenv(name: str):
    """The value of environment variable ``name``, or None."""
    return os.environ.get(name)


def setenv(name: str, value) -> None:
    """Set (a str) or unset (None) environment variable ``name``."""
    if value is None:
        os.environ.pop(name, None)
    else:
        os.environ[name] = str(value)


def __getattr__(name: str):
    # Made on first use, so that core.io, core.symbol and scipy load only then: DummyIter
    # subclasses mx.io.DataIter; ``ss`` is scipy.stats (None without scipy), as in MXNet;
    # ``mx`` is whatever ``mxnet`` is imported (the alias), looked up each time.
    if name == "DummyIter":
        value = _make_dummy_iter()
    elif name == "Symbol":
        from .symbol import Symbol as value
    elif name == "__all__":  # computed: ``mx`` is exported only while ``mxnet`` is imported
        return _ALL + (["mx"] if "mxnet" in sys.modules else [])
    elif name == "mx":  # MXNet's test_utils does ``import mxnet as mx``; tests use it
        value = sys.modules.get("mxnet")
        if value is None:
            raise AttributeError("core.test_utils.mx: no 'mxnet' module is imported "
                                 "(gluon.compat.mxnet.install() provides one)")
        return value
    elif name == "ss":
        try:
            import scipy.stats as value
        except ImportError:
            value = None
    else:
        raise AttributeError(f"module 'core.test_utils' has no attribute {name!r}")
    globals()[name] = value
    return value


def _make_dummy_iter():
    from .io import DataIter

    class DummyIter(DataIter):
        """An iterator that returns the first batch of ``real_iter`` forever (for timing).

        Args:
            real_iter: a DataIter; its first batch is taken at construction.
        """

        def __init__(self, real_iter):
            super().__init__(getattr(real_iter, "batch_size", 0))
            self.real_iter = real_iter
            self.provide_data = real_iter.provide_data
            self.provide_label = real_iter.provide_label
            self.batch_size = real_iter.batch_size
            self.the_batch = next(real_iter)

        def __iter__(self):
            return self

        def reset(self):
            pass

        def next(self):
            return self.the_batch

        __next__ = next

    DummyIter.__module__ = __name__
    return DummyIter


# ``from mxnet.test_utils import *`` gives, in MXNet, every public name of the module,
# the modules it imports included (MXNet's tests use ``sys``, ``np``, ``rnd``, ... from it).
_PRIVATE = {"annotations"}
_ALL = sorted(n for n in list(globals()) if not n.startswith("_") and n not in _PRIVATE) \
    + ["DummyIter", "Symbol", "ss"]
