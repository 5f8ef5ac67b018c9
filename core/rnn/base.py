"""``BaseRNNCell``: the legacy symbolic RNN cell (MXNet 1.x's ``mx.rnn.BaseRNNCell``).

A cell builds Symbols: ``cell(inputs, states)`` adds one time step to the graph and
returns ``(output, new_states)``; :meth:`BaseRNNCell.unroll` adds ``length`` steps.
Weights are named variables from the cell's :class:`~core.rnn.params.RNNParams`
(``<prefix>i2h_weight``, ...), so cells that share an ``RNNParams`` share weights, and
step ``t``'s nodes are named ``<prefix>t<t>_<part>`` as in MXNet.
"""
from __future__ import annotations

from .. import nd
from .. import sym as symbol
from .params import RNNParams
from .sequence import normalize_sequence

__all__ = ["BaseRNNCell", "cells_begin_state", "cells_pack_weights", "cells_state_info",
           "cells_unpack_weights"]

_MODIFIED = ("After applying modifier cells (e.g. DropoutCell) the base cell cannot be "
             "called directly. Call the modifier cell instead.")


def cells_state_info(cells) -> list:
    """The state descriptions of ``cells``, one after the other."""
    return [info for c in cells for info in c.state_info]


def cells_begin_state(cells, **kwargs) -> list:
    """The begin states of ``cells``, one after the other."""
    return [s for c in cells for s in c.begin_state(**kwargs)]


def cells_unpack_weights(cells, args: dict) -> dict:
    """``args`` with each cell's packed weights split (:meth:`BaseRNNCell.unpack_weights`)."""
    for cell in cells:
        args = cell.unpack_weights(args)
    return args


def cells_pack_weights(cells, args: dict) -> dict:
    """``args`` with each cell's weights packed (:meth:`BaseRNNCell.pack_weights`)."""
    for cell in cells:
        args = cell.pack_weights(args)
    return args


def _pop(args: dict, name: str, what: str):
    if name not in args:
        raise KeyError(f"{what}: no array named {name!r} among the {len(args)} given "
                       f"({', '.join(sorted(args)[:8])}{' ...' if len(args) > 8 else ''})")
    return args.pop(name)


class BaseRNNCell:
    """Abstract base class of the symbolic RNN cells.

    Subclasses define ``__call__(inputs, states)`` (one step), :attr:`state_info` and,
    for packed gate weights, :attr:`_gate_names` and ``_num_hidden``.

    Args:
        prefix: prefix of the cell's node names (and of its weights' names when
            ``params`` is None).
        params: an :class:`~core.rnn.params.RNNParams` to share weights with other
            cells; a new one (with ``prefix``) if None.

    Example:
        >>> from core import rnn, sym
        >>> cell = rnn.RNNCell(4, prefix="rnn_")
        >>> outputs, states = cell.unroll(2, [sym.var("x0"), sym.var("x1")])
        >>> [o.name for o in outputs]
        ['rnn_t0_out', 'rnn_t1_out']
    """

    def __init__(self, prefix: str = "", params: RNNParams | None = None):
        if params is None:
            params = RNNParams(prefix)
            self._own_params = True
        else:
            self._own_params = False
        self._prefix = prefix
        self._params = params
        self._modified = False
        self.reset()

    def reset(self) -> None:
        """Reset the step counters before building another graph with this cell."""
        self._init_counter = -1
        self._counter = -1
        for cell in getattr(self, "_cells", ()):
            cell.reset()

    def __call__(self, inputs, states):
        """Add one time step: ``(output, new_states)`` from ``inputs`` and ``states``."""
        raise NotImplementedError(f"{type(self).__name__}: a cell defines __call__")

    @property
    def params(self) -> RNNParams:
        """The cell's weight variables (its ``RNNParams``)."""
        self._own_params = False
        return self._params

    @property
    def state_info(self) -> list:
        """One ``{'shape': ..., '__layout__': ...}`` per state (0: the batch size)."""
        raise NotImplementedError(f"{type(self).__name__}: a cell defines state_info")

    @property
    def state_shape(self) -> list:
        """The shapes of the states (0 for the batch size)."""
        return [info["shape"] for info in self.state_info]

    @property
    def _gate_names(self):
        return ()

    def begin_state(self, func=symbol.zeros, **kwargs) -> list:
        """The initial states, one Symbol per state.

        Args:
            func: makes one state from ``name=``, the state's ``shape`` and
                ``__layout__`` and ``kwargs``: ``sym.zeros`` (the default),
                ``sym.Variable`` to feed the states as inputs, ``sym.uniform``, ...
            **kwargs: more keyword arguments for ``func`` (``dtype``, ...).

        Returns:
            A list of Symbols named ``<prefix>begin_state_<i>``.
        """
        if self._modified:
            raise RuntimeError(f"{type(self).__name__}.begin_state: {_MODIFIED}")
        states = []
        for info in self.state_info:
            self._init_counter += 1
            if info is not None:
                kwargs.update(info)
            states.append(func(name=f"{self._prefix}begin_state_{self._init_counter}",
                               **kwargs))
        return states

    def unpack_weights(self, args: dict) -> dict:
        """Split this cell's packed gate weights into one array per gate.

        ``<prefix>i2h_weight`` (all gates stacked) becomes ``<prefix>i2h_i_weight``,
        ``<prefix>i2h_f_weight``, ... (the gate names: LSTM ``_i _f _c _o``, GRU
        ``_r _z _o``), likewise the biases and the ``h2h`` ones.

        Args:
            args: ``{name: NDArray}``, e.g. ``Module.get_params()[0]``.

        Returns:
            A new dict with the packed arrays replaced by the per-gate ones.
        """
        args = dict(args)
        if not self._gate_names:
            return args
        h = self._num_hidden
        what = f"{type(self).__name__}.unpack_weights"
        for group in ("i2h", "h2h"):
            weight = _pop(args, f"{self._prefix}{group}_weight", what)
            bias = _pop(args, f"{self._prefix}{group}_bias", what)
            for j, gate in enumerate(self._gate_names):
                args[f"{self._prefix}{group}{gate}_weight"] = weight[j * h:(j + 1) * h].copy()
                args[f"{self._prefix}{group}{gate}_bias"] = bias[j * h:(j + 1) * h].copy()
        return args

    def pack_weights(self, args: dict) -> dict:
        """The reverse of :meth:`unpack_weights`: per-gate arrays stacked into one.

        Args:
            args: ``{name: NDArray}`` with the per-gate arrays.

        Returns:
            A new dict with the packed arrays instead.
        """
        args = dict(args)
        if not self._gate_names:
            return args
        what = f"{type(self).__name__}.pack_weights"
        for group in ("i2h", "h2h"):
            weights, biases = [], []
            for gate in self._gate_names:
                weights.append(_pop(args, f"{self._prefix}{group}{gate}_weight", what))
                biases.append(_pop(args, f"{self._prefix}{group}{gate}_bias", what))
            args[f"{self._prefix}{group}_weight"] = nd.concatenate(weights)
            args[f"{self._prefix}{group}_bias"] = nd.concatenate(biases)
        return args

    def unroll(self, length: int, inputs, begin_state=None, layout: str = "NTC",
               merge_outputs: bool | None = None):
        """Add ``length`` time steps to the graph.

        Args:
            length: the number of steps.
            inputs: one Symbol of shape ``(batch, length, ...)`` for ``'NTC'`` (``(length,
                batch, ...)`` for ``'TNC'``), or a list of ``length`` Symbols ``(batch,
                ...)``.
            begin_state: the initial states (:meth:`begin_state` if None).
            layout: the layout of a merged ``inputs`` and of merged outputs.
            merge_outputs: True: one Symbol with every step; False: a list of steps;
                None: whichever is natural for the cell.

        Returns:
            ``(outputs, states)``: the outputs (as ``merge_outputs`` says) and the last
            states.
        """
        self.reset()
        inputs, _ = normalize_sequence(length, inputs, layout, False)
        states = self.begin_state() if begin_state is None else begin_state
        outputs = []
        for i in range(length):
            output, states = self(inputs[i], states)
            outputs.append(output)
        outputs, _ = normalize_sequence(length, outputs, layout, merge_outputs)
        return outputs, states

    def _get_activation(self, inputs, activation, **kwargs):
        """``activation`` applied to ``inputs``: an ``act_type`` name or a callable."""
        if isinstance(activation, str):
            return symbol.Activation(inputs, act_type=activation, **kwargs)
        return activation(inputs, **kwargs)
