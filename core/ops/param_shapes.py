"""Parameter shapes inferred backwards: ``defop``'s ``param_shapes=`` slot.

MXNet's operators infer their parameters' shapes "backwards": ``FullyConnected``'s
weight is ``(num_hidden, in_units)`` once the data's shape is known. An operator with
such parameters declares, in its own ``defop`` block, a :class:`ParamShapes`; a graph's
shape and dtype inference (``core.symbol.shape_infer``) applies it.

Example:
    >>> from core.ops.registry import REGISTRY
    >>> ps = REGISTRY["FullyConnected"].param_shapes
    >>> ps.rule((2, 3), {"num_hidden": 4}, 3), ps.params
    ({1: (4, 3), 2: (4,)}, (1, 2))
"""
from __future__ import annotations

import numbers
from collections.abc import Callable
from typing import NamedTuple


class ParamShapes(NamedTuple):
    """How a graph's inference fills an operator's inputs from its data input.

    Attributes:
        rule: ``rule(shape, attrs, n_in) -> {input position: shape}``: ``shape`` is the
            data's (input 0) shape as known so far (None dims unknown; None for an
            unknown rank), ``attrs`` the operator's default attributes updated with the
            node's, ``n_in`` the number of inputs; the shapes may hold None dims, and
            ``{}`` means it cannot tell. Only unknown dimensions are filled with it, so
            a rule that disagrees with known shapes is ignored (``infer`` decides).
        params: the input positions that are parameters: variables there take the
            data's dtype when theirs is unknown.
        dtype: ``dtype(data_dtype, attrs) -> dtype`` of the parameters, when it is not
            the data's (``Embedding``'s ``dtype`` attribute, BatchNorm's float32 scales).
        operands: an elementwise binary operator: an unknown operand takes the other's
            shape (and a variable operand the other's dtype).
    """

    rule: Callable | None = None
    params: tuple = ()
    dtype: Callable | None = None
    operands: bool = False


# The elementwise binary operators' form (an unknown operand takes the other's shape).
OPERANDS = ParamShapes(operands=True)


def axis_position(shape: tuple, axis) -> int | None:
    """``axis`` of ``shape`` as a non-negative position; None when out of range."""
    nd = len(shape)
    if not isinstance(axis, numbers.Integral) or not -nd <= axis < nd:
        return None
    return axis % nd
