"""How an elementwise operator runs inside a fused program: ``defop``'s ``fusion=`` slot.

An operator that may be a step of ``_fused_elemwise`` (``core.ops.fused``, made by the
fusion pass) declares, in its own ``defop`` block, a :class:`Fusion`: the NumPy ufunc its
forward is (or an in-place recipe), and the C expression of the generated GPU kernel.
An operator whose fused form depends on one attribute (``Activation``'s ``act_type``)
declares a :class:`FusionByAttr` instead.

Example:
    >>> from core.ops.registry import REGISTRY
    >>> form = REGISTRY["exp"].fusion
    >>> form.ufunc, form.c(["x"], "float", "f")
    ('exp', 'exp(x)')
"""
from __future__ import annotations

from collections.abc import Callable
from typing import Any, NamedTuple


class Fusion(NamedTuple):
    """How one operator runs inside a fused program.

    Attributes:
        c: ``c(args, T, kind) -> str``, the C expression over the operand expressions
            ``args``, computed in C type ``T``; ``kind`` is the dtype kind of the ufunc
            loop's first input (``f``, ``i``, ``u``, ``b``).
        kinds: the dtype kinds of the ufunc loop's inputs that ``c`` handles.
        ufunc: the operator's forward is exactly ``ufunc(*args, *extra)`` (NumPy name).
        extra: constant trailing arguments of ``ufunc`` (``relu`` is ``maximum(x, 0)``).
        recipe: otherwise ``recipe(xp, out, x)``: the forward as in-place ufunc calls
            writing into ``out`` (float inputs only, unless ``casts``), equal to the
            forward bit for bit (``sigmoid``'s and ``softsign``'s forwards run theirs).
        reads_late: the recipe reads ``x`` after writing ``out`` (so ``out`` must not be
            ``x``'s buffer).
        casts: the operator is a cast: any input and output dtype, and its ``dtype``
            attribute may take any value (the step's output dtype carries it).
    """

    c: Callable
    kinds: str
    ufunc: str | None = None
    extra: tuple = ()
    recipe: Callable | None = None
    reads_late: bool = False
    casts: bool = False


class FusionByAttr(NamedTuple):
    """The fused form of an operator chosen by one attribute's value (other attributes
    at their defaults); values missing from ``forms`` are not fusable."""

    attr: str
    forms: dict[Any, Fusion]


def c_expr(template: str) -> Callable:
    """A C expression from a template over ``{a}``, ``{b}`` and the compute type ``{T}``."""
    return lambda args, T, kind: template.format(a=args[0], b=args[-1], T=T)


def c_by_kind(**templates: str) -> Callable:
    """Per loop-kind templates: keys ``f`` (float), ``i`` (int and uint), ``b`` (bool)."""
    def expr(args, T, kind):
        k = "i" if kind == "u" else kind
        return templates[k].format(a=args[0], b=args[-1], T=T)

    return expr


def ufunc_fusion(ufunc: str, c: str | Callable, kinds: str = "f") -> Fusion:
    """The fused form of an operator whose forward is NumPy's ``ufunc`` on its inputs."""
    return Fusion(c_expr(c) if isinstance(c, str) else c, kinds, ufunc)
