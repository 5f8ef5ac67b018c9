"""Attribute values as MXNet-style strings and back, for the graph JSON files.

MXNet writes every operator attribute as a string: ``"128"``, ``"(3, 3)"``, ``"True"``,
``"None"``, ``"relu"``, ``"0.9"``. :func:`format_value` writes values that way and
:func:`parse_value` reads them back with a small strict recursive-descent parser -- never
``eval``, ``ast.literal_eval`` or pickle, so a file cannot run code. It accepts ints, floats
(``inf``, ``nan``), bools, None, quoted strings, tuples and lists (nested),
``slice(a, b, c)``, ``Ellipsis``, integer index arrays ``array([0, 2], 'int64')`` and
``"__is_train__"`` for :data:`~core.symbol.graph.TRAIN`; other text is a plain string.
:func:`coerce` applies MXNet-file conventions (a value converted to the type of the
attribute's default). :mod:`core.symbol.json_io` uses these and re-exports
:func:`parse_value`, :func:`format_value` and :class:`ParseError`.

Example:
    >>> from core.symbol.json_values import format_value, parse_value
    >>> parse_value(format_value((3, 3))), parse_value("relu")
    ((3, 3), 'relu')
"""
from __future__ import annotations

import re

import numpy

from .graph import TRAIN

__all__ = ["ParseError", "coerce", "format_value", "parse_value"]


class ParseError(ValueError):
    """An attribute value that does not parse."""


_TRAIN_TEXT = "__is_train__"
_NUMBER = re.compile(r"[+-]?(?:(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][+-]?\d+)?|inf(?:inity)?|nan)",
                     re.IGNORECASE)
_WORD = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_CALL = re.compile(r"(slice|array)\s*\(")  # constructor forms: must parse completely
_WORDS = {"True": True, "False": False, "true": True, "false": False, "None": None,
          "Ellipsis": Ellipsis}
_ESCAPES = {"\\": "\\", "'": "'", '"': '"', "n": "\n", "r": "\r", "t": "\t", "0": "\0"}


def format_value(v) -> str:
    """An attribute value as MXNet writes it: ``"128"``, ``"(3, 3)"``, ``"relu"``.

    Strings that would read back as something else are quoted (``"'1'"``).

    Raises:
        TypeError: for values that have no text form (arrays, contexts, ...).

    Example:
        >>> from core.symbol.json_values import format_value
        >>> format_value((3, 3)), format_value("relu"), format_value("1"), format_value(None)
        ('(3, 3)', 'relu', "'1'", 'None')
    """
    if v is TRAIN:
        return _TRAIN_TEXT
    if isinstance(v, numpy.dtype) or (isinstance(v, type) and issubclass(v, numpy.generic)):
        v = numpy.dtype(v).name
    if isinstance(v, str):
        return v if _is_plain(v) else repr(v)
    return _fmt(v)


def _fmt(v) -> str:
    if v is None or v is Ellipsis or isinstance(v, bool):
        return repr(v)
    if isinstance(v, numpy.generic) and v.dtype.kind in "biu":
        return _fmt(v.item())
    if isinstance(v, numpy.generic) and v.dtype.kind in "fV":  # bfloat16 and float8: "V"
        return _fmt(float(v))
    if isinstance(v, int):
        return str(int(v))
    if isinstance(v, float):
        return repr(float(v))
    if isinstance(v, str):
        return repr(v)
    if isinstance(v, tuple):
        return "(" + ", ".join(_fmt(x) for x in v) + ("," if len(v) == 1 else "") + ")"
    if isinstance(v, list):
        return "[" + ", ".join(_fmt(x) for x in v) + "]"
    if isinstance(v, slice):
        return f"slice({_fmt(v.start)}, {_fmt(v.stop)}, {_fmt(v.step)})"
    if isinstance(v, numpy.dtype) or (isinstance(v, type) and issubclass(v, numpy.generic)):
        return repr(numpy.dtype(v).name)
    if hasattr(v, "shape") and hasattr(v, "dtype") and hasattr(v, "tolist"):
        arr = v.get() if hasattr(v, "get") and not isinstance(v, numpy.ndarray) else v
        if arr.dtype.kind in "biu":  # index arrays inside keys (``x[[0, 2]]``)
            return f"array({_fmt(arr.tolist())}, {arr.dtype.name!r})"
    raise TypeError(f"a {type(v).__name__} has no text form")


def _is_plain(s: str) -> bool:
    """Whether ``s`` reads back as itself without quotes."""
    t = s.strip()
    if not t:
        return True
    if t[0] in "([\'\"" or _CALL.match(t):
        return False
    p = _Parser(t)
    try:
        p.value(top=True)
        p.end()
    except ParseError:
        return True
    return False


def parse_value(text: str):
    """Parse an attribute value written by :func:`format_value` or by MXNet.

    Text that starts with a bracket, a quote, ``slice(`` or ``array(`` must parse
    completely; other text that is not a number or a keyword is returned as the string
    it is.

    Raises:
        ParseError: a ValueError saying where the text stops making sense.

    Example:
        >>> from core.symbol.json_values import parse_value
        >>> parse_value("(3, 3)"), parse_value("relu"), parse_value("[1e-3, inf, None]")
        ((3, 3), 'relu', [0.001, inf, None])
    """
    t = text.strip()
    if not t:
        return text
    p = _Parser(t)
    if t[0] in "([\'\"" or _CALL.match(t):
        v = p.value(top=True)
        p.end()
        return v
    try:
        v = p.value(top=True)
        p.end()
    except ParseError:
        return text
    return v


class _Parser:
    def __init__(self, s: str):
        self.s = s
        self.i = 0

    def fail(self, msg):
        raise ParseError(f"{msg} at position {self.i} of {self.s!r}")

    def ws(self):
        while self.i < len(self.s) and self.s[self.i].isspace():
            self.i += 1

    def peek(self) -> str:
        self.ws()
        return self.s[self.i] if self.i < len(self.s) else ""

    def end(self):
        if self.peek():
            self.fail("unexpected text")

    def value(self, top=False):
        c = self.peek()
        if c in ("(", "["):
            return self.seq()
        if c in ("'", '"'):
            return self.string()
        m = _NUMBER.match(self.s, self.i)
        if m and not re.match(r"[\w.]", self.s[m.end():m.end() + 1]):
            self.i = m.end()
            g = m.group()
            return int(g) if re.fullmatch(r"[+-]?\d+", g) else float(g)
        m = _WORD.match(self.s, self.i)
        if not m:
            self.fail("expected a value")
        self.i = m.end()
        w = m.group()
        if w in _WORDS:
            return _WORDS[w]
        if w == _TRAIN_TEXT and top:
            return TRAIN
        if w == "array" and self.peek() == "(":
            args = self.seq()
            if not (len(args) == 2 and isinstance(args[0], (list, int, bool))
                    and args[1] in ("bool", "int8", "int16", "int32", "int64", "uint8",
                                    "uint16", "uint32", "uint64")):
                self.fail("array() takes a nested list and an integer or bool dtype")
            try:
                return numpy.array(args[0], dtype=args[1])
            except (ValueError, TypeError, OverflowError) as e:
                self.fail(f"bad array: {e}")
        if w == "slice" and self.peek() == "(":
            args = self.seq()
            if not (1 <= len(args) <= 3 and all(a is None or type(a) is int for a in args)):
                self.fail("slice() takes one to three ints or None")
            return slice(*args)
        self.i = m.start()
        self.fail(f"unexpected word {w!r}")

    def seq(self):
        close = ")" if self.s[self.i] == "(" else "]"
        self.i += 1
        items = []
        while True:
            if self.peek() == close:
                self.i += 1
                break
            items.append(self.value())
            c = self.peek()
            if c == ",":
                self.i += 1
            elif c == close:
                self.i += 1
                break
            else:
                self.fail(f"expected ',' or {close!r}")
        return tuple(items) if close == ")" else items

    def string(self) -> str:
        q = self.s[self.i]
        self.i += 1
        out = []
        while self.i < len(self.s):
            c = self.s[self.i]
            self.i += 1
            if c == q:
                return "".join(out)
            if c != "\\":
                out.append(c)
                continue
            e = self.s[self.i:self.i + 1]
            self.i += 1
            if e in _ESCAPES:
                out.append(_ESCAPES[e])
            elif e in ("x", "u", "U"):
                n = {"x": 2, "u": 4, "U": 8}[e]
                digits = self.s[self.i:self.i + n]
                if len(digits) != n or not re.fullmatch(r"[0-9a-fA-F]+", digits):
                    self.fail(f"bad \\{e} escape")
                out.append(chr(int(digits, 16)))
                self.i += n
            else:
                self.fail(f"unknown escape \\{e}")
        self.fail("unterminated string")


def coerce(v, default):
    """MXNet-file conventions: ``v`` converted to the type of the attribute's default
    where that is unambiguous.

    Args:
        v: a parsed attribute value (from :func:`parse_value`).
        default: the operator's default for the attribute.

    Returns:
        ``v``, as a bool, float, tuple or list where the default is one.

    Raises:
        TypeError: for text where a number, bool or tuple is due.

    Example:
        >>> from core.symbol.json_values import coerce
        >>> coerce([3, 3], (1, 1)), coerce(1, 0.5), coerce(1, False)
        ((3, 3), 1.0, True)
    """
    if v is None or v is TRAIN or default is None:
        return v
    if isinstance(default, bool):
        if type(v) is int and v in (0, 1):
            return bool(v)
        if not isinstance(v, bool):
            raise TypeError(f"expected a bool, got {v!r}")
        return v
    if isinstance(default, (int, float)):
        if isinstance(v, str):
            raise TypeError(f"expected a number, got {v!r}")
        if isinstance(default, float) and type(v) is int:
            return float(v)
        return v
    if isinstance(default, (tuple, list)):
        if isinstance(v, (int, str)) and not isinstance(v, bool):
            if isinstance(v, str):
                raise TypeError(f"expected a tuple, got {v!r}")
            return v
        return type(default)(v) if isinstance(v, (tuple, list)) else v
    return v
