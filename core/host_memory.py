"""How host (CPU) memory is allocated: glibc's malloc tuned so array memory is reused.

NumPy allocates each array with ``malloc``. glibc serves blocks of 128 KiB and more with
a fresh ``mmap`` (its threshold then grows with the blocks freed, up to 32 MiB) and
returns the top of its heap to the system once 128 KiB of it are free. A training step
allocates and frees the same large activations and gradients every time, so by default
every step faults each of their pages in again and the kernel zeroes them: on a
hybridized LeNet step that was 30% of the time (26 ms -> 18 ms single-threaded with the
tuning below). PyTorch avoids it with its caching allocator, MXNet with its storage pool.

:func:`tune` sets, once, the two options that keep freed memory for reuse: blocks up to
32 MiB come from the heap (``M_MMAP_THRESHOLD``, fixed so it no longer adapts), and the
heap keeps up to 1 GiB of free memory instead of trimming it (``M_TRIM_THRESHOLD``). The
cost is that the process keeps what it freed (its resident size stays near its peak), as
with any caching allocator. ``import core`` calls it; ``KBACKEND_MALLOC_TUNING=0`` (set
before the import) leaves malloc as it is. It does nothing outside glibc (macOS, Windows,
musl) and where the variables glibc reads itself (``MALLOC_MMAP_THRESHOLD_``,
``MALLOC_TRIM_THRESHOLD_``) are set: the user's choice wins.

Example:
    >>> from core import host_memory
    >>> host_memory.tuned() in (True, False)
    True
"""
from __future__ import annotations

import os
import sys

_M_TRIM_THRESHOLD = -1
_M_MMAP_THRESHOLD = -3
MMAP_THRESHOLD = 32 << 20  # glibc's upper limit for this option on 64-bit systems
TRIM_THRESHOLD = 1 << 30

_state = {"tuned": False}


def tuned() -> bool:
    """Whether :func:`tune` changed malloc's options in this process."""
    return _state["tuned"]


def tune() -> bool:
    """Tune glibc's malloc for reusing array memory (see the module docstring).

    Returns:
        True when the options were set (now or before), False when left alone.
    """
    if _state["tuned"]:
        return True
    if os.environ.get("KBACKEND_MALLOC_TUNING", "1").strip().lower() in ("0", "false", "off"):
        return False
    if not sys.platform.startswith("linux"):
        return False
    if any(k in os.environ for k in ("MALLOC_MMAP_THRESHOLD_", "MALLOC_TRIM_THRESHOLD_",
                                     "GLIBC_TUNABLES")):
        return False
    try:
        import ctypes

        libc = ctypes.CDLL(None)
        if not hasattr(libc, "gnu_get_libc_version") or not hasattr(libc, "mallopt"):
            return False  # musl and others: different allocators, other options
        ok = (libc.mallopt(_M_MMAP_THRESHOLD, MMAP_THRESHOLD) == 1
              and libc.mallopt(_M_TRIM_THRESHOLD, TRIM_THRESHOLD) == 1)
    except (OSError, AttributeError):
        return False
    _state["tuned"] = ok
    return ok
