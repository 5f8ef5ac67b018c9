"""``mxnet.contrib.amp.amp``: :mod:`core.amp.amp`'s functions under MXNet's module path
(one state, core.amp.amp's), with ``bfloat16`` (ml_dtypes' dtype, where MXNet has a
NumPy stand-in).

Example:
    >>> from core.contrib.amp.amp import bfloat16, init
    >>> import core.amp
    >>> init is core.amp.init, str(bfloat16)
    (True, 'bfloat16')
"""
from __future__ import annotations

from core.amp.amp import *
from core.amp.amp import __all__, bfloat16  # noqa: F401
