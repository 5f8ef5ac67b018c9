"""The export rules: our operator name -> a function writing its ONNX nodes.

A rule is ``rule(b, n, ins, attrs) -> list`` with ``b`` the
:class:`~core.onnx.export_emit.Emitter`, ``n`` the graph node (its shapes through
``b.in_shape``/``b.out_shape``), ``ins`` its input slots (tensor names as ``str``,
literals as they are, None for an empty optional input) and ``attrs`` its attributes with
the training flag resolved to inference. It returns one tensor name per output of ``n``
(None where ONNX has no such output). One module per operator family; each has a
``RULES`` dict.
"""
from __future__ import annotations

from . import elemwise, linalg, misc, nn, norm, reduce, rnn, shape

RULES: dict = {}
for _family in (elemwise, reduce, shape, linalg, nn, norm, rnn, misc):
    RULES.update(_family.RULES)

__all__ = ["RULES"]
