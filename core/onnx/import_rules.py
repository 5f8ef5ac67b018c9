"""The ONNX import rule table: op_type -> rule, merged from the family modules.

A rule is ``rule(ctx, node, attrs)`` (``ctx`` a :class:`core.onnx.importer.GraphImporter`)
and returns a Symbol per ONNX output (or a NumPy array for a value it computes at import).
"""
from __future__ import annotations

from . import import_math, import_nn, import_rnn, import_shape

RULES: dict = {**import_math.RULES, **import_shape.RULES, **import_nn.RULES,
               **import_rnn.RULES}
"""Every ONNX operator (default domain) the importer translates."""
