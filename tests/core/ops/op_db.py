"""The per-operator test table (OpInfo-lite, STYLE.md point 15).

Each family has a module ``specs_<family>.py`` with a list ``SPECS`` of :class:`OpSpec`
rows. ``test_op_table.py`` runs every row through the same checks: values against a
NumPy reference for each dtype, gradients against central finite differences in
float64, every operator call's inferred shape/dtype against the real result, and
non-contiguous inputs. It also fails when a registered operator has no row.

Every row runs on non-contiguous inputs: a row with ``ref`` gets its array arguments as
strided, reversed (negative strides) and column-major views (``core.test_utils.view_of``),
and a sample without array arguments writes into a strided ``out=``; a row with a
``check`` makes its NDArrays through the maker it is given (``check(spec, rng, arr)``),
contiguous in ``test_values`` and views in ``test_noncontiguous``, which fails when the
check made no view.
"""
from __future__ import annotations

import importlib
import pkgutil
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

import numpy as np


class Sample:
    """One call: positional args (NumPy arrays become NDArrays) and keyword attrs."""

    def __init__(self, *args, diff: Sequence[int] | None = None, name: str = "", **kwargs):
        self.args = list(args)
        self.kwargs = kwargs
        self.diff = diff  # indices of args to differentiate (default: all float arrays)
        self.name = name

    def __repr__(self) -> str:
        parts = [f"{a.shape}" if isinstance(a, np.ndarray) else repr(a) for a in self.args]
        return f"Sample({', '.join(parts)}, {self.kwargs}){' ' + self.name if self.name else ''}"


@dataclass
class OpSpec:
    """A row of the table.

    Attributes:
        name: the registry name of the operator the row covers.
        call: ``call(*args, **kwargs)`` with NDArrays, through the public API.
        ref: ``ref(*args, **kwargs)`` with NumPy arrays: the expected result (NumPy array,
            or tuple of them). None only when ``check`` replaces value checks.
        samples: ``samples(rng, dtype) -> list[Sample]``.
        dtypes: dtypes the value check runs over.
        grad: check gradients with finite differences (float64).
        rtol, atol: float32 tolerances (other dtypes scale from them).
        check_dtype: compare the result dtype with the reference's.
        check: ``check(spec, rng, arr)`` replaces value checks (e.g. random operators);
            ``arr(values, dtype=None, ctx=None)`` makes its NDArrays as ``nd.array``
            does, contiguous (:class:`Contiguous`) or as non-contiguous views
            (:class:`Views`, in ``test_noncontiguous``).
        covers: other registry names this row also covers.
        grad_eps: finite-difference step.
    """

    name: str
    call: Callable
    ref: Callable | None
    samples: Callable
    dtypes: Sequence[str] = ("float32", "float64")
    grad: bool = True
    rtol: float = 1e-5
    atol: float = 1e-6
    check_dtype: bool = True
    check: Callable | None = None
    covers: Sequence[str] = ()
    grad_eps: float = 1e-6
    grad_rtol: float = 1e-4
    grad_atol: float = 1e-6
    extra: dict = field(default_factory=dict)

    @property
    def id(self) -> str:
        return self.extra.get("id", self.name)


def all_specs() -> list[OpSpec]:
    """Every row of every ``specs_*.py`` module next to this file."""
    from . import __path__ as here

    out = []
    for mod in sorted(m.name for m in pkgutil.iter_modules(here)):
        if mod.startswith("specs_"):
            out.extend(importlib.import_module(f"{__package__}.{mod}").SPECS)
    return out


# ------------------------------------------------------------------ array makers
class Contiguous:
    """``arr`` of ``test_values``: ``nd.array(values, dtype, ctx)``."""

    def __call__(self, values, dtype=None, ctx=None):
        import core

        return core.nd.array(values, dtype=dtype, ctx=ctx)


class Views:
    """``arr`` of ``test_noncontiguous``: the NDArray ``nd.array`` would make, as a view
    (the layouts of ``core.test_utils.LAYOUTS`` in turn, one per call), counting the
    views that are not C-contiguous (arrays of one element cannot be)."""

    def __init__(self):
        self.calls = 0
        self.strided = 0

    def layout(self) -> str:
        from core.test_utils import LAYOUTS

        out = LAYOUTS[self.calls % len(LAYOUTS)]
        self.calls += 1
        return out

    def view(self, a: np.ndarray, ctx=None):
        """A view with the values of NumPy array ``a`` (its dtype)."""
        from core.test_utils import view_of

        v = view_of(a, ctx, self.layout())
        self.strided += not _c_contiguous(v)
        return v

    def __call__(self, values, dtype=None, ctx=None):
        import core

        return self.view(core.nd.array(values, dtype=dtype, ctx=ctx).asnumpy(), ctx)


def _c_contiguous(x) -> bool:
    return bool(x._data.flags.c_contiguous)  # NumPy's and CuPy's flags


CONTIGUOUS = Contiguous()


# ----------------------------------------------------------------- sample helpers
def rand(rng, shape, dtype, low=-2.0, high=2.0) -> np.ndarray:
    """Uniform values in [low, high) of ``dtype`` (integers: rounded; bool: random)."""
    dt = np.dtype(dtype) if dtype != "bfloat16" else None
    if dtype == "bool":
        return rng.random(shape) > 0.5
    a = rng.uniform(low, high, size=shape)
    if dt is not None and dt.kind in "iu":
        return np.round(a).astype(dt)
    return a.astype(_np_dtype(dtype))


def positive(rng, shape, dtype, low=0.5, high=2.0) -> np.ndarray:
    return rand(rng, shape, dtype, low, high)


def away_from(rng, shape, dtype, points=(0.0,), gap=0.1, low=-2.0, high=2.0) -> np.ndarray:
    """Random values at least ``gap`` from each of ``points`` (kinks, ties)."""
    a = rng.uniform(low, high, size=shape)
    for p in points:
        close = np.abs(a - p) < gap
        a[close] = p + np.where(a[close] >= p, gap, -gap) * 2
    return a.astype(_np_dtype(dtype))


def _np_dtype(dtype):
    if dtype == "bfloat16":
        import ml_dtypes

        return np.dtype(ml_dtypes.bfloat16)
    return np.dtype(dtype)


def np_dtype(dtype):
    return _np_dtype(dtype)


UNARY_SHAPES = [(), (5,), (3, 4), (2, 3, 4)]
BINARY_SHAPES = [((3, 4), (3, 4)), ((3, 4), (4,)), ((2, 1, 4), (3, 1)), ((5,), ()),
                 ((1, 3), (2, 1))]


def unary_samples(gen=rand, shapes=UNARY_SHAPES, **kw):
    def samples(rng, dtype):
        return [Sample(gen(rng, s, dtype), **kw) for s in shapes]

    return samples


def binary_samples(gen_a=rand, gen_b=rand, shapes=BINARY_SHAPES, scalars=(), **kw):
    def samples(rng, dtype):
        out = [Sample(gen_a(rng, a, dtype), gen_b(rng, b, dtype), **kw) for a, b in shapes]
        for s in scalars:
            out.append(Sample(gen_a(rng, (3, 2), dtype), s, **kw))
            out.append(Sample(s, gen_b(rng, (3, 2), dtype), **kw))
        return out

    return samples


