"""The per-operator test table (OpInfo-lite, STYLE.md point 15).

Each family has a module ``specs_<family>.py`` with a list ``SPECS`` of :class:`OpSpec`
rows. ``test_op_table.py`` runs every row through the same checks: values against a
NumPy reference for each dtype, gradients against central finite differences in
float64, every operator call's inferred shape/dtype against the real result, and
non-contiguous inputs. It also fails when a registered operator has no row.
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
        noncontig: also run with non-contiguous inputs.
        check: ``check(spec, rng)`` replaces value checks (e.g. random operators).
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
    noncontig: bool = True
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


