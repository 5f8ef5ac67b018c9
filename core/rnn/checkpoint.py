"""Checkpoints of models built with legacy RNN cells: the weights saved unpacked (one
array per gate, ``cell.unpack_weights``) and packed again on loading."""
from __future__ import annotations

import warnings

from ..model import load_checkpoint, save_checkpoint
from .base import BaseRNNCell

__all__ = ["do_rnn_checkpoint", "load_rnn_checkpoint", "rnn_unroll", "save_rnn_checkpoint"]


def _as_cells(cells) -> list:
    return [cells] if isinstance(cells, BaseRNNCell) else list(cells)


def rnn_unroll(cell, length, inputs=None, begin_state=None, input_prefix="", layout="NTC"):
    """Deprecated: ``cell.unroll(length, inputs, begin_state, layout)``."""
    warnings.warn("rnn_unroll is deprecated. Please call cell.unroll directly.",
                  DeprecationWarning, stacklevel=2)
    return cell.unroll(length=length, inputs=inputs, begin_state=begin_state, layout=layout)


def save_rnn_checkpoint(cells, prefix: str, epoch: int, symbol, arg_params: dict,
                        aux_params: dict) -> None:
    """``model.save_checkpoint`` with the cells' weights unpacked first.

    Args:
        cells: a cell or a list of cells used by ``symbol``.
        prefix: the path prefix (``prefix-symbol.json``, ``prefix-%04d.params``).
        epoch: the epoch number.
        symbol: the network.
        arg_params: ``{name: NDArray}`` arguments.
        aux_params: ``{name: NDArray}`` auxiliary states.
    """
    for cell in _as_cells(cells):
        arg_params = cell.unpack_weights(arg_params)
    save_checkpoint(prefix, epoch, symbol, arg_params, aux_params)


def load_rnn_checkpoint(cells, prefix: str, epoch: int) -> tuple:
    """``model.load_checkpoint`` with the cells' weights packed again.

    Args:
        cells: a cell or a list of cells used by the saved symbol.
        prefix: the path prefix.
        epoch: the epoch number.

    Returns:
        ``(symbol, arg_params, aux_params)``.
    """
    sym, arg, aux = load_checkpoint(prefix, epoch)
    for cell in _as_cells(cells):
        arg = cell.pack_weights(arg)
    return sym, arg, aux


def do_rnn_checkpoint(cells, prefix: str, period: int = 1):
    """An epoch-end callback saving a :func:`save_rnn_checkpoint` every ``period`` epochs.

    Args:
        cells: a cell or a list of cells used by the symbol.
        prefix: the path prefix.
        period: epochs between checkpoints (at least 1).

    Returns:
        ``callback(iter_no, sym, arg, aux)`` for ``Module.fit(epoch_end_callback=...)``.

    Example:
        >>> from core import rnn
        >>> callback = rnn.do_rnn_checkpoint(rnn.LSTMCell(4), "/tmp/never", period=2)
        >>> callback(0)  # epoch 1 of period 2: nothing saved
    """
    period = int(max(1, period))

    def _callback(iter_no, sym=None, arg=None, aux=None):
        if (iter_no + 1) % period == 0:
            save_rnn_checkpoint(cells, prefix, iter_no + 1, sym, arg, aux)

    return _callback
