"""Random number generators, one per context, and seeding (MXNet's ``mx.random``).

Every context (``cpu(0)``, ``cpu(1)``, ``gpu(0)``, ...) has its own generator, created
on first use: a NumPy ``Generator`` (PCG64) for CPU contexts and a CuPy
``RandomState`` on the device for GPU contexts. A generator starts from OS entropy,
as in NumPy and MXNet; :func:`seed` makes runs reproducible. Seeding with
``ctx='all'`` (the default) gives every context, including ones first used later,
the same seed, so ``cpu(0)`` and ``cpu(1)`` then produce identical streams; seeding
one context leaves the others alone.

The sampling functions of ``core.nd.random`` are also reachable here, as in MXNet
(``mx.random.uniform`` is ``mx.nd.random.uniform``).

Example:
    >>> import core
    >>> core.random.seed(42)
    >>> a = core.nd.random.uniform(shape=(3,)).asnumpy()
    >>> core.random.seed(42)
    >>> b = core.nd.random.uniform(shape=(3,)).asnumpy()
    >>> bool((a == b).all())
    True
"""
from __future__ import annotations

import numbers
import os
import threading

import numpy

from .context import Context

__all__ = ["get_generator", "seed"]

_lock = threading.Lock()


def _reset_lock_in_child() -> None:
    # A fork while another thread holds the lock would leave the child deadlocked.
    global _lock
    _lock = threading.Lock()


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_reset_lock_in_child)
_generators: dict = {}  # Context -> generator
_seeds: dict = {}  # Context -> seed given to that context alone
_seed_all: int | None = None  # the last seed given to every context


class _CupyGenerator:
    """A CuPy ``RandomState`` under the method names of ``numpy.random.Generator``.

    Operators call ``random``, ``standard_normal``, ``standard_exponential``,
    ``standard_gamma``, ``poisson``, ``binomial``, ``integers`` and ``permutation``,
    so one forward serves both array modules.
    """

    __slots__ = ("_rs",)

    def __init__(self, rs):
        self._rs = rs

    def random(self, size=None, dtype=numpy.float64):
        return self._rs.random_sample(size=size, dtype=dtype)

    def integers(self, low, high=None, size=None, dtype=numpy.int64):
        return self._rs.randint(low, high, size=size, dtype=dtype)

    def __getattr__(self, name):
        return getattr(self._rs, name)


def _new_generator(ctx: Context, seed_state):
    if ctx.device_type == "cpu":
        return numpy.random.Generator(numpy.random.PCG64(seed_state))
    xp = ctx.xp  # imports CuPy only now, for a GPU context
    with ctx.device_guard():
        # CuPy casts the seed to uint64 with casting='safe'; a Python int would fail it.
        rs = xp.random.RandomState(None if seed_state is None
                                   else numpy.uint64(seed_state % 2 ** 64))
    return _CupyGenerator(rs)


def get_generator(ctx=None):
    """The random generator of a context, created (and seeded) on first use.

    Operators draw from it; user code normally calls the sampling operators instead.

    Args:
        ctx: a Context, a string such as ``'cpu(1)'``, or None for the current context.

    Returns:
        A ``numpy.random.Generator`` for CPU contexts; for GPU contexts an object with
        the same method names over a ``cupy.random.RandomState``.

    Example:
        >>> import core
        >>> g = core.random.get_generator(core.cpu(0))
        >>> 0.0 <= g.random() < 1.0
        True
    """
    from .context import as_context

    ctx = as_context(ctx)
    gen = _generators.get(ctx)
    if gen is None:
        with _lock:
            gen = _generators.get(ctx)
            if gen is None:
                gen = _new_generator(ctx, _seeds.get(ctx, _seed_all))
                _generators[ctx] = gen
    return gen


def _check_seed(seed_state) -> int:
    if isinstance(seed_state, bool) or not isinstance(seed_state, numbers.Integral):
        raise TypeError(f"random.seed: seed_state must be an int, got "
                        f"{type(seed_state).__name__} {seed_state!r}")
    seed_state = int(seed_state)
    # MXNet passes the seed as a C int: a negative seed is its 32-bit two's complement.
    return seed_state % 2 ** 32 if seed_state < 0 else seed_state


def seed(seed_state, ctx="all") -> None:
    """Seed the random number generators (MXNet's ``mx.random.seed``).

    Args:
        seed_state: an int. A negative seed is read as MXNet reads it (a C ``int``):
            ``-1`` seeds as ``2**32 - 1`` does.
        ctx: ``'all'`` (default) to seed every context's generator with ``seed_state``,
            including contexts first used later, so that ``cpu(0)`` and ``cpu(1)``
            produce identical streams; or one context (a Context or a string such as
            ``'cpu(1)'`` / ``'gpu(0)'``) to seed only its generator.

    Returns:
        None.

    Raises:
        TypeError: ``seed_state`` is not an int.
        ValueError: ``ctx`` is not ``'all'`` or a context.

    Example:
        >>> import core
        >>> from core import nd, cpu
        >>> core.random.seed(7)
        >>> a = nd.random.normal(shape=(2,), ctx=cpu(0)).asnumpy()
        >>> b = nd.random.normal(shape=(2,), ctx=cpu(1)).asnumpy()
        >>> bool((a == b).all())
        True
        >>> core.random.seed(8, ctx=cpu(1))
        >>> c = nd.random.normal(shape=(2,), ctx=cpu(1)).asnumpy()
        >>> bool((a == c).all())
        False
    """
    global _seed_all
    seed_state = _check_seed(seed_state)
    if isinstance(ctx, str) and ctx == "all":
        with _lock:
            _seed_all = seed_state
            _seeds.clear()
            _generators.clear()
        return
    try:
        c = Context(ctx)
    except (ValueError, TypeError) as e:
        raise ValueError(f"random.seed: ctx must be 'all' or a context, got {ctx!r} ({e})") \
            from None
    with _lock:
        _seeds[c] = seed_state
        _generators.pop(c, None)


def __getattr__(name: str):
    # mx.random.uniform and friends are mx.nd.random's functions; imported lazily because
    # this module is imported while the operator registry is being filled.
    if name.startswith("__"):
        raise AttributeError(name)
    from .nd import random as _nd_random

    try:
        return getattr(_nd_random, name)
    except AttributeError:
        raise AttributeError(f"module 'core.random' has no attribute {name!r}") from None


def __dir__():
    from .nd import random as _nd_random

    return sorted(set(globals()) | {n for n in vars(_nd_random) if not n.startswith("_")})
