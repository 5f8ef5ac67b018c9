"""The operator registry: what an operator is (:class:`OpDef`) and how it is declared.

Every operator is declared once with :func:`defop`: a ``forward`` written against
the array module ``xp``, a pure ``infer`` rule for shapes and dtypes, a VJP rule
written with core operators (so gradients are themselves differentiable), and its
public names in ``core.nd`` (MXNet 1.x) and ``core.np`` (NumPy); and, in the same
block, whatever else graph mode and the kernels need of it: its fused form
(``fusion=``), parameter-shape rule (``param_shapes=``), optional inputs a Symbol call
creates (``optional_inputs=``), whether it may be recomputed (``recompute=``), and its
CPU/GPU kernels (``cpu=``/``gpu=``).

The registry is split by job:

- this module: :class:`Aval`, :class:`OpDef`, :func:`defop`, ``REGISTRY``, :func:`get`;
- ``core.ops.dispatch``: :func:`~core.ops.dispatch.invoke`, the one dispatch point every
  call goes through (from any front end), and the errors that name the operator;
- ``core.ops.abstract``: abstract evaluation (placeholders) and the tracer hooks of
  ``core.symbol``;
- ``core.ops.namespace``: argument binding and the generated ``core.nd``/``core.np``
  functions, and ``F`` (operators by name, for VJP rules).

``F`` is re-exported here, so an operator module takes what it declares operators
with from one import (``from .registry import Aval, F, defop``).
"""
from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING

import numpy

from .. import cpu_kernels

if TYPE_CHECKING:
    from .fusible import Fusion, FusionByAttr
    from .param_shapes import ParamShapes

REGISTRY: dict[str, OpDef] = {}


class Aval:
    """An abstract value: what ``infer`` rules see of an array (shape and dtype)."""

    __slots__ = ("dtype", "shape")

    def __init__(self, shape, dtype):
        self.shape = tuple(shape)
        self.dtype = numpy.dtype(dtype)

    @property
    def ndim(self) -> int:
        return len(self.shape)

    def __eq__(self, other):
        return isinstance(other, Aval) and (self.shape, self.dtype) == (other.shape, other.dtype)

    def __repr__(self) -> str:
        return f"Aval({self.shape}, {self.dtype})"


class OpDef:
    """One registered operator. Built by :func:`defop`; see its arguments."""

    __slots__ = (
        "attrs",
        "cpu",
        "differentiable",
        "doc",
        "forward",
        "fusion",
        "gpu",
        "infer",
        "inputs",
        "name",
        "nd",
        "needs_ctx",
        "np",
        "optional_inputs",
        "param_shapes",
        "place",
        "random",
        "recompute",
        "save",
        "updates",
        "variadic",
        "visible_outputs",
        "vjp",
    )

    def __init__(self, **kw):
        for k in self.__slots__:
            setattr(self, k, kw.get(k))

    def __call__(self, *args, **kwargs):
        return _call_generic(self, args, kwargs)

    def __repr__(self) -> str:
        return f"<op {self.name}>"


def defop(name: str, *, infer: Callable, vjp: Callable | None = None,
          inputs: Sequence[str] = ("x",), attrs: dict | None = None,
          nd: Sequence[str] = (), np: Sequence[str] = (), variadic: bool = False,
          needs_ctx: bool = False, differentiable: bool = True,
          save: bool | str = True, place: Callable | None = None, random: bool = False,
          updates: dict | None = None, visible_outputs: Callable | int | None = None,
          fusion: Fusion | FusionByAttr | None = None, param_shapes: ParamShapes | None = None,
          recompute: bool = False, cpu: Callable | None = None, gpu: Callable | None = None,
          optional_inputs: dict[str, Callable] | None = None, doc: str = ""):
    """Register an operator; used as a decorator on its ``forward(xp, *arrays, **attrs)``.

    Args:
        name: the registry name (unique).
        infer: ``infer(*avals, **attrs) -> Aval | tuple[Aval]``; pure, never touches
            data. Non-array inputs (Python scalars, None) are passed through as they are.
            Raises ValueError/TypeError naming the operator on bad input.
        vjp: ``vjp(ctx, g) -> tuple`` of one gradient (NDArray or None) per input, written
            with core operators; ``ctx`` has ``inputs``, ``outputs``, ``attrs``,
            ``in_shapes``, ``in_dtypes``; ``g`` is one NDArray, or a tuple for
            multi-output operators. None for operators without a gradient.
        inputs: names of the array inputs, in order (used by the generated namespaces).
        attrs: the keyword attributes and their defaults, in positional order.
        nd: public names in ``core.nd`` (dotted for sub-namespaces: ``"linalg.inverse"``).
            An entry may be ``(name, {attr: default})`` to change attribute defaults
            for that name only.
        np: public names in ``core.np`` (``"linalg.inv"``), entries as for ``nd``.
        variadic: the operator takes any number of arrays (first argument a sequence).
        needs_ctx: ``forward`` receives ``ctx=`` (creation and random operators).
        differentiable: False for operators whose outputs carry no gradient.
        save: what the VJP needs kept: True (inputs and outputs), ``"inputs"`` (inputs
            only, so outputs are not kept alive by the tape), or False (only shapes and
            dtypes, which saves the most memory).
        place: ``place(attrs, in_ctx) -> Context`` for operators whose output lives on
            another context than their inputs (the copy between contexts); ``forward``
            then also receives ``_from=`` (the input context).
        random: the operator draws from the context's random generator, so a graph
            must run it anew each time (never constant-folded nor merged).
        updates: ``{input position: output position}`` for operators with auxiliary
            states (MXNet's BatchNorm moving statistics): in a graph, the variable in
            that input position takes the value of that output after each forward run
            (``core.symbol`` lists such variables as auxiliary states).
        visible_outputs: how many leading outputs a Symbol of this operator shows
            (an int, or ``f(attrs) -> int``); default all.
        fusion: how the operator runs as a step of a fused elementwise program (a
            :class:`~core.ops.fusible.Fusion`, or a
            :class:`~core.ops.fusible.FusionByAttr`); None: never fused.
        param_shapes: how a graph's shape inference fills the shapes and dtypes of the
            operator's parameter inputs from its data input (a
            :class:`~core.ops.param_shapes.ParamShapes`: ``FullyConnected``'s weight from
            ``num_hidden`` and the data's shape).
        recompute: cheap enough to run twice: a training graph may recompute the
            operator's outputs in the backward phase instead of keeping them
            (``core.symbol.mirror``). Random operators never are.
        cpu: a kernel ``cpu(xp, *arrays, **attrs)`` with ``forward``'s signature, run
            instead of it on CPU while ``core.cpu_kernels.enabled()``; it returns None
            where it does not apply (dtypes, layouts), and ``forward`` (the NumPy twin
            the tests compare it to) runs. Declared in the operator's own block.
        gpu: the same for GPU contexts (a CuPy kernel in place of ``forward``).
        optional_inputs: ``{input name: needed(attrs) -> bool}`` for optional inputs
            (``"bias?"``) that a ``core.sym`` call left without them creates as variables
            when the attributes need them (``FullyConnected``'s bias unless ``no_bias``).
        doc: a one-line description (the generated functions' docstring).
    """

    def register(forward: Callable) -> OpDef:
        if name in REGISTRY:
            raise ValueError(f"defop: operator {name!r} is already registered")
        op = OpDef(name=name, forward=_with_kernels(forward, cpu, gpu), infer=infer, vjp=vjp,
                   inputs=tuple(inputs), attrs=dict(attrs or {}), nd=tuple(nd), np=tuple(np),
                   variadic=variadic, needs_ctx=needs_ctx,
                   differentiable=differentiable and vjp is not None, save=save, place=place,
                   random=random, updates=dict(updates or {}),
                   visible_outputs=visible_outputs, fusion=fusion,
                   param_shapes=param_shapes, recompute=recompute, cpu=cpu, gpu=gpu,
                   optional_inputs=dict(optional_inputs or {}),
                   doc=doc or (forward.__doc__ or "").strip())
        REGISTRY[name] = op
        return op

    return register


def _with_kernels(forward: Callable, cpu: Callable | None, gpu: Callable | None) -> Callable:
    """``forward`` preceded by the operator's kernels (``defop``'s ``cpu=``/``gpu=``).

    The dispatcher calls ``op.forward`` only, so the kernel slots cost nothing to the
    operators without kernels; with one, the choice is made here, once per call.
    """
    if cpu is None and gpu is None:
        return forward

    def run(xp, *arrays, **attrs):
        if xp is numpy:
            kernel = cpu if cpu is not None and cpu_kernels.enabled() else None
        else:
            kernel = gpu
        if kernel is not None:
            out = kernel(xp, *arrays, **attrs)
            if out is not None:
                return out
        return forward(xp, *arrays, **attrs)

    run.__name__ = getattr(forward, "__name__", "forward")
    run.__doc__ = forward.__doc__
    run.__wrapped__ = forward  # the portable forward (the kernels' twin)
    return run


def get(name: str) -> OpDef:
    """The operator registered as ``name`` (ValueError naming it when there is none)."""
    try:
        return REGISTRY[name]
    except KeyError:
        raise ValueError(f"unknown operator {name!r}") from None


# Calling an OpDef binds its arguments the way the generated functions do. The namespace
# module needs this module's definitions, so it is imported last (core.ops imports this
# module before any other, so it is always the first of the two to load).
from .namespace import F, _call_generic  # noqa: E402

__all__ = ["REGISTRY", "Aval", "F", "OpDef", "defop", "get"]
