"""Cells that change other cells or their data: ``DropoutCell``, ``ModifierCell`` and
its ``ZoneoutCell`` and ``ResidualCell``."""
from __future__ import annotations

import numbers

from .. import sym as symbol
from .base import _MODIFIED, BaseRNNCell
from .params import RNNParams
from .sequence import normalize_sequence

__all__ = ["DropoutCell", "ModifierCell", "ResidualCell", "ZoneoutCell"]


class DropoutCell(BaseRNNCell):
    """Dropout on the data passing through (no state, no weights); training runs only.

    Args:
        dropout: the fraction of elements dropped.
        prefix: prefix of names (default ``'dropout_'``).
        params: an ``RNNParams`` (unused: the cell has no weights).

    Example:
        >>> from core import rnn, sym
        >>> out, states = rnn.DropoutCell(0.5)(sym.var("x"), [])
        >>> out.list_arguments(), states
        (['x'], [])
    """

    def __init__(self, dropout: float, prefix: str = "dropout_", params: RNNParams | None = None):
        super().__init__(prefix, params)
        if isinstance(dropout, bool) or not isinstance(dropout, numbers.Real):
            raise TypeError(f"DropoutCell: dropout probability must be a number, got "
                            f"{dropout!r}")
        self.dropout = dropout

    @property
    def state_info(self) -> list:
        return []

    def __call__(self, inputs, states):
        if self.dropout > 0:
            inputs = symbol.Dropout(data=inputs, p=self.dropout)
        return inputs, states

    def unroll(self, length, inputs, begin_state=None, layout="NTC", merge_outputs=None):
        self.reset()
        inputs, _ = normalize_sequence(length, inputs, layout, merge_outputs)
        if isinstance(inputs, symbol.Symbol):
            return self(inputs, [])
        return super().unroll(length, inputs, begin_state=begin_state, layout=layout,
                              merge_outputs=merge_outputs)


class ModifierCell(BaseRNNCell):
    """Base class of cells that wrap a cell and modify it (zoneout, residual).

    The wrapped cell is then used through the modifier only: its own ``begin_state``
    refuses to run.

    Args:
        base_cell: the cell to modify.
    """

    def __init__(self, base_cell: BaseRNNCell):
        super().__init__()
        base_cell._modified = True
        self.base_cell = base_cell

    @property
    def params(self) -> RNNParams:
        self._own_params = False
        return self.base_cell.params

    @property
    def state_info(self) -> list:
        return self.base_cell.state_info

    def begin_state(self, init_sym=symbol.zeros, **kwargs) -> list:
        """The base cell's begin states (see :meth:`BaseRNNCell.begin_state`)."""
        if self._modified:
            raise RuntimeError(f"{type(self).__name__}.begin_state: {_MODIFIED}")
        self.base_cell._modified = False
        try:
            return self.base_cell.begin_state(func=init_sym, **kwargs)
        finally:
            self.base_cell._modified = True

    def unpack_weights(self, args: dict) -> dict:
        return self.base_cell.unpack_weights(args)

    def pack_weights(self, args: dict) -> dict:
        return self.base_cell.pack_weights(args)

    def __call__(self, inputs, states):
        raise NotImplementedError(f"{type(self).__name__}: a modifier cell defines __call__")


class ZoneoutCell(ModifierCell):
    """Zoneout on a cell's outputs and states: in training, each element keeps its
    previous value with probability ``zoneout_*`` (inference: the new values).

    Args:
        base_cell: the cell (not fused, not bidirectional).
        zoneout_outputs: the probability of keeping an output element's previous value.
        zoneout_states: likewise for the states.

    Example:
        >>> from core import rnn, sym
        >>> cell = rnn.ZoneoutCell(rnn.RNNCell(3, prefix="z_"), zoneout_states=0.5)
        >>> outs, _ = cell.unroll(2, [sym.var("a"), sym.var("b")])
        >>> outs[1].infer_shape(a=(4, 2), b=(4, 2))[1]
        [(4, 3)]
    """

    def __init__(self, base_cell: BaseRNNCell, zoneout_outputs: float = 0.,
                 zoneout_states: float = 0.):
        from .containers import BidirectionalCell, SequentialRNNCell
        from .fused import FusedRNNCell

        if isinstance(base_cell, FusedRNNCell):
            raise TypeError("ZoneoutCell: FusedRNNCell doesn't support zoneout. Please "
                            "unfuse first.")
        if isinstance(base_cell, BidirectionalCell):
            raise TypeError("ZoneoutCell: BidirectionalCell doesn't support zoneout since it "
                            "doesn't support step. Please add ZoneoutCell to the cells "
                            "underneath instead.")
        if isinstance(base_cell, SequentialRNNCell) and getattr(base_cell, "_bidirectional",
                                                                False):
            raise TypeError("ZoneoutCell: bidirectional SequentialRNNCell doesn't support "
                            "zoneout. Please add ZoneoutCell to the cells underneath instead.")
        super().__init__(base_cell)
        self.zoneout_outputs = zoneout_outputs
        self.zoneout_states = zoneout_states
        self.prev_output = None

    def reset(self) -> None:
        super().reset()
        self.prev_output = None

    def __call__(self, inputs, states):
        p_outputs, p_states = self.zoneout_outputs, self.zoneout_states
        next_output, next_states = self.base_cell(inputs, states)

        def mask(p, like):
            return symbol.Dropout(symbol.ones_like(like), p=p)

        # before the first step the previous output is zeros shaped like the output
        # (MXNet writes sym.zeros((0, 0)) and lets shape inference fill it)
        prev_output = self.prev_output if self.prev_output is not None else \
            symbol.zeros_like(next_output)
        output = (symbol.where(mask(p_outputs, next_output), next_output, prev_output)
                  if p_outputs != 0. else next_output)
        states = ([symbol.where(mask(p_states, new_s), new_s, old_s)
                   for new_s, old_s in zip(next_states, states)]
                  if p_states != 0. else next_states)
        self.prev_output = output
        return output, states


class ResidualCell(ModifierCell):
    """Adds the input to the base cell's output (Wu et al., 2016): the output is
    ``base_output + input``, named ``<output name>_plus_residual``.

    Args:
        base_cell: the cell.

    Example:
        >>> from core import rnn, sym
        >>> cell = rnn.ResidualCell(rnn.GRUCell(5, prefix="g_"))
        >>> out, _ = cell(sym.var("x"), cell.begin_state())
        >>> out.name
        'g_t0_out_plus_residual'
    """

    def __call__(self, inputs, states):
        output, states = self.base_cell(inputs, states)
        output = symbol.elemwise_add(output, inputs, name=f"{output.name}_plus_residual")
        return output, states

    def unroll(self, length, inputs, begin_state=None, layout="NTC", merge_outputs=None):
        self.reset()
        self.base_cell._modified = False
        try:
            outputs, states = self.base_cell.unroll(length, inputs=inputs,
                                                    begin_state=begin_state, layout=layout,
                                                    merge_outputs=merge_outputs)
        finally:
            self.base_cell._modified = True
        if merge_outputs is None:
            merge_outputs = isinstance(outputs, symbol.Symbol)
        inputs, _ = normalize_sequence(length, inputs, layout, merge_outputs)
        if merge_outputs:
            outputs = symbol.elemwise_add(outputs, inputs, name=f"{outputs.name}_plus_residual")
        else:
            outputs = [symbol.elemwise_add(o, i, name=f"{o.name}_plus_residual")
                       for o, i in zip(outputs, inputs)]
        return outputs, states
