"""Cells made of cells: ``SequentialRNNCell`` (a stack) and ``BidirectionalCell``."""
from __future__ import annotations

from .. import sym as symbol
from .base import (
    _MODIFIED,
    BaseRNNCell,
    cells_begin_state,
    cells_pack_weights,
    cells_state_info,
    cells_unpack_weights,
)
from .params import RNNParams
from .sequence import normalize_sequence

__all__ = ["BidirectionalCell", "SequentialRNNCell"]


def _share_params(owner: str, parent: BaseRNNCell, cells) -> None:
    """MXNet's rule: a container given ``params`` hands them to its children (which
    then must own theirs); either way the container collects the children's."""
    if parent._override_cell_params:
        for cell in cells:
            if not cell._own_params:
                raise ValueError(f"{owner}: either specify params for {owner} or child "
                                 "cells, not both")
            cell.params._params.update(parent.params._params)
    for cell in cells:
        parent.params._params.update(cell.params._params)


class SequentialRNNCell(BaseRNNCell):
    """Cells stacked: each cell's output is the next one's input.

    Args:
        params: an ``RNNParams`` for all the children (None: each keeps its own).

    Example:
        >>> from core import rnn, sym
        >>> stack = rnn.SequentialRNNCell()
        >>> stack.add(rnn.LSTMCell(10, prefix="l0_"))
        >>> stack.add(rnn.LSTMCell(10, prefix="l1_"))
        >>> out, states = stack.unroll(4, sym.var("data"), merge_outputs=True)
        >>> out.infer_shape(data=(2, 4, 3))[1], len(states)
        ([(2, 4, 10)], 4)
    """

    def __init__(self, params: RNNParams | None = None):
        super().__init__(prefix="", params=params)
        self._override_cell_params = params is not None
        self._cells: list = []

    def add(self, cell: BaseRNNCell) -> None:
        """Append ``cell`` to the stack.

        Args:
            cell: the cell; it takes the previous cell's output (the stack's input for
                the first cell).
        """
        self._cells.append(cell)
        _share_params("SequentialRNNCell", self, [cell])

    @property
    def state_info(self) -> list:
        return cells_state_info(self._cells)

    def begin_state(self, **kwargs) -> list:
        """The children's begin states, one after the other (see
        :meth:`BaseRNNCell.begin_state`)."""
        if self._modified:
            raise RuntimeError(f"SequentialRNNCell.begin_state: {_MODIFIED}")
        return cells_begin_state(self._cells, **kwargs)

    def unpack_weights(self, args: dict) -> dict:
        return cells_unpack_weights(self._cells, args)

    def pack_weights(self, args: dict) -> dict:
        return cells_pack_weights(self._cells, args)

    def __call__(self, inputs, states):
        self._counter += 1
        next_states = []
        p = 0
        for cell in self._cells:
            if isinstance(cell, BidirectionalCell):
                raise NotImplementedError("SequentialRNNCell: a BidirectionalCell cannot be "
                                          "stepped; use unroll")
            n = len(cell.state_info)
            inputs, state = cell(inputs, states[p:p + n])
            p += n
            next_states.extend(state)
        return inputs, next_states

    def unroll(self, length, inputs, begin_state=None, layout="NTC", merge_outputs=None):
        self.reset()
        if begin_state is None:
            begin_state = self.begin_state()
        p = 0
        next_states = []
        last = len(self._cells) - 1
        for i, cell in enumerate(self._cells):
            n = len(cell.state_info)
            states = begin_state[p:p + n]
            p += n
            inputs, states = cell.unroll(length, inputs=inputs, begin_state=states,
                                         layout=layout,
                                         merge_outputs=None if i < last else merge_outputs)
            next_states.extend(states)
        return inputs, next_states


class BidirectionalCell(BaseRNNCell):
    """Two cells over the sequence, one forwards and one backwards, outputs
    concatenated along the feature axis (``<output_prefix>t<i>`` nodes).

    Args:
        l_cell: the forward cell.
        r_cell: the backward cell.
        params: an ``RNNParams`` for both (None: each keeps its own).
        output_prefix: prefix of the concatenated outputs' names (default ``'bi_'``).

    Example:
        >>> from core import rnn, sym
        >>> cell = rnn.BidirectionalCell(rnn.GRUCell(4, prefix="l_"),
        ...                              rnn.GRUCell(4, prefix="r_"), output_prefix="bi_")
        >>> outs, _ = cell.unroll(2, [sym.var("a"), sym.var("b")])
        >>> [o.name for o in outs], outs[0].infer_shape(a=(3, 5), b=(3, 5))[1]
        (['bi_t0', 'bi_t1'], [(3, 8)])
    """

    def __init__(self, l_cell: BaseRNNCell, r_cell: BaseRNNCell,
                 params: RNNParams | None = None, output_prefix: str = "bi_"):
        super().__init__("", params=params)
        self._output_prefix = output_prefix
        self._override_cell_params = params is not None
        _share_params("BidirectionalCell", self, [l_cell, r_cell])
        self._cells = [l_cell, r_cell]

    def unpack_weights(self, args: dict) -> dict:
        return cells_unpack_weights(self._cells, args)

    def pack_weights(self, args: dict) -> dict:
        return cells_pack_weights(self._cells, args)

    def __call__(self, inputs, states):
        raise NotImplementedError("BidirectionalCell cannot be stepped. Please use unroll")

    @property
    def state_info(self) -> list:
        return cells_state_info(self._cells)

    def begin_state(self, **kwargs) -> list:
        """Both cells' begin states, the forward cell's first."""
        if self._modified:
            raise RuntimeError(f"BidirectionalCell.begin_state: {_MODIFIED}")
        return cells_begin_state(self._cells, **kwargs)

    def unroll(self, length, inputs, begin_state=None, layout="NTC", merge_outputs=None):
        self.reset()
        inputs, axis = normalize_sequence(length, inputs, layout, False)
        if begin_state is None:
            begin_state = self.begin_state()
        l_cell, r_cell = self._cells
        n_l = len(l_cell.state_info)
        l_outputs, l_states = l_cell.unroll(length, inputs=inputs,
                                            begin_state=begin_state[:n_l], layout=layout,
                                            merge_outputs=merge_outputs)
        r_outputs, r_states = r_cell.unroll(length, inputs=list(reversed(inputs)),
                                            begin_state=begin_state[n_l:], layout=layout,
                                            merge_outputs=merge_outputs)
        if merge_outputs is None:
            merge_outputs = (isinstance(l_outputs, symbol.Symbol)
                             and isinstance(r_outputs, symbol.Symbol))
            if not merge_outputs:
                if isinstance(l_outputs, symbol.Symbol):
                    l_outputs = list(symbol.SliceChannel(l_outputs, axis=axis,
                                                         num_outputs=length, squeeze_axis=True))
                if isinstance(r_outputs, symbol.Symbol):
                    r_outputs = list(symbol.SliceChannel(r_outputs, axis=axis,
                                                         num_outputs=length, squeeze_axis=True))
        if merge_outputs:
            l_outputs = [l_outputs]
            r_outputs = [symbol.reverse(r_outputs, axis=axis)]
        else:
            r_outputs = list(reversed(r_outputs))
        outputs = [symbol.concat(l_o, r_o, dim=1 + merge_outputs,
                                 name=(f"{self._output_prefix}out" if merge_outputs
                                       else f"{self._output_prefix}t{i}"))
                   for i, (l_o, r_o) in enumerate(zip(l_outputs, r_outputs))]
        if merge_outputs:
            outputs = outputs[0]
        return outputs, [l_states, r_states]
