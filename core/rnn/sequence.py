"""Time sequences for ``unroll``: one Symbol holding every step, or a list of steps."""
from __future__ import annotations

from .. import sym as symbol

__all__ = ["normalize_sequence"]


def _check_layout(layout) -> int:
    if not isinstance(layout, str) or "T" not in layout:
        raise ValueError(f"unroll: layout must name the time axis 'T' (such as 'NTC' or "
                         f"'TNC'), got {layout!r}")
    return layout.find("T")


def normalize_sequence(length: int | None, inputs, layout: str, merge: bool | None,
                       in_layout: str | None = None):
    """``inputs`` as one Symbol (``merge`` True), a list of per-step Symbols (False), or
    as given (None); MXNet 1.x's ``_normalize_sequence``.

    Args:
        length: the number of steps (checked against a list of steps).
        inputs: a Symbol with the time axis of ``layout``, or a list of step Symbols.
        layout: ``'NTC'``, ``'TNC'``, ...: where the time axis is.
        merge: True to merge steps, False to split them, None to keep the form.
        in_layout: the layout of a merged ``inputs`` when it differs from ``layout``.

    Returns:
        ``(inputs, time axis)``.

    Raises:
        ValueError: no inputs, a grouped Symbol to split, or a list of the wrong length.

    Example:
        >>> from core import sym
        >>> steps, axis = normalize_sequence(3, sym.var("x"), "NTC", False)
        >>> len(steps), axis
        (3, 1)
    """
    if inputs is None:
        raise ValueError("unroll(inputs=None) has been deprecated. Please create input "
                         "variables outside unroll.")
    axis = _check_layout(layout)
    in_axis = _check_layout(in_layout) if in_layout is not None else axis
    if isinstance(inputs, symbol.Symbol):
        if merge is False:
            if len(inputs.list_outputs()) != 1:
                raise ValueError("unroll doesn't allow grouped symbol as input. Please convert "
                                 "to list with list(inputs) first or let unroll handle "
                                 "splitting.")
            inputs = list(symbol.SliceChannel(inputs, axis=in_axis, num_outputs=length,
                                              squeeze_axis=True))
    else:
        inputs = list(inputs)
        if length is not None and len(inputs) != length:
            raise ValueError(f"unroll: length={length} but {len(inputs)} input steps given")
        if merge is True:
            steps = [symbol.expand_dims(i, axis=axis) for i in inputs]
            inputs = symbol.concat(*steps, dim=axis)
            in_axis = axis
    if isinstance(inputs, symbol.Symbol) and axis != in_axis:
        inputs = symbol.swapaxes(inputs, dim1=axis, dim2=in_axis)
    return inputs, axis
