"""``RNNParams``: the named weight variables a legacy RNN cell creates (and shares)."""
from __future__ import annotations

from .. import sym as symbol

__all__ = ["RNNParams"]


class RNNParams:
    """A container of weight variables, shared between cells (MXNet 1.x's ``RNNParams``).

    Args:
        prefix: prepended to the name of every variable this container creates.

    Example:
        >>> from core.rnn import RNNParams
        >>> params = RNNParams("lstm_")
        >>> w = params.get("i2h_weight")
        >>> w.name, params.get("i2h_weight") is w
        ('lstm_i2h_weight', True)
    """

    def __init__(self, prefix: str = ""):
        self._prefix = prefix
        self._params: dict = {}

    def get(self, name: str, **kwargs) -> symbol.Symbol:
        """The variable ``prefix + name``, created on first use.

        Args:
            name: the name after the prefix.
            **kwargs: passed to ``sym.Variable`` when the variable is created
                (``init``, ``shape``, ``lr_mult``, ...).

        Returns:
            The variable (a one-output Symbol).
        """
        name = self._prefix + name
        if name not in self._params:
            self._params[name] = symbol.var(name, **kwargs)
        return self._params[name]
