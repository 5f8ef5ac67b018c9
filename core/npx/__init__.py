"""MXNet 2.0's ``npx``: the operators NumPy does not have, over the same registry.

``core.npx`` holds the neural-network and array functions MXNet keeps outside
``numpy`` (``softmax``, ``fully_connected``, ``convolution``, ``pick``, ``topk``,
``reshape`` with MXNet's special codes, ...), the NumPy-mode switches (``set_np``,
``reset_np``, ``is_np_array``, ``use_np``) and the device helpers (``cpu``, ``gpu``,
``num_gpus``, ``current_device``, ``waitall``, ``seed``, ``gpu_memory_info``). Every
function takes and returns the one array type, :class:`core.ndarray.NDArray`, so
``core.nd``, ``core.np`` and ``core.npx`` mix freely; all are differentiable under
``autograd`` and traceable by ``hybridize``, because each is bound onto registry
operators.

Example:
    >>> from core import np, npx
    >>> npx.set_np()
    >>> x = np.array([[1.0, 2.0, 3.0]])
    >>> npx.pick(npx.softmax(x), np.array([2])).shape
    (1,)
    >>> npx.reset_np()
"""
from __future__ import annotations

from .. import context as _context
from .. import random as _random
from .. import serialization as _serialization
from ..context import Context, cpu, cpu_pinned, gpu, num_gpus  # noqa: F401
from ..np._mode import (  # noqa: F401
    is_np_array,
    is_np_default_dtype,
    is_np_shape,
    reset_np,
    set_np,
    set_np_default_dtype,
    use_np,
)
from . import random  # noqa: F401 - npx.random: bernoulli, uniform_n, normal_n
from ._array import (  # noqa: F401
    arange_like,
    batch_dot,
    batch_flatten,
    broadcast_like,
    gamma,
    gammaln,
    nonzero,
    one_hot,
    pick,
    sequence_last,
    sequence_mask,
    sequence_reverse,
    slice,
    smooth_l1,
    stop_gradient,
    topk,
)
from ._nn import (  # noqa: F401
    activation,
    batch_norm,
    convolution,
    deconvolution,
    dropout,
    embedding,
    fully_connected,
    group_norm,
    layer_norm,
    leaky_relu,
    log_softmax,
    masked_log_softmax,
    masked_softmax,
    pooling,
    relu,
    rnn,
    sigmoid,
    softmax,
)
from ._reshape import reshape  # noqa: F401

Device = Context


def current_device() -> Context:
    """The device new arrays go to: the innermost ``with device:``, else ``cpu(0)``.

    Example:
        >>> from core import npx
        >>> npx.current_device()
        cpu(0)
    """
    return _context.current_context()


current_context = current_device


def waitall() -> None:
    """Wait until all pending work on every device is done.

    Example:
        >>> from core import npx
        >>> npx.waitall()
    """
    from .. import nd

    nd.waitall()


def seed(seed, device="all") -> None:
    """Seed the random generators of ``device`` (``'all'``: every device), as MXNet does.

    Example:
        >>> from core import np, npx
        >>> npx.seed(1); a = np.random.uniform(size=3)
        >>> npx.seed(1); b = np.random.uniform(size=3)
        >>> bool((a == b).all())
        True
    """
    _random.seed(seed, ctx=device)


def gpu_memory_info(device_id: int = 0) -> tuple[int, int]:
    """``(free, total)`` bytes of GPU ``device_id``.

    Raises:
        ValueError: no GPU ``device_id`` is visible (CPU-only machine, no CuPy, or an
            id past the GPU count).

    Example:
        >>> from core import npx
        >>> if npx.num_gpus() == 0:
        ...     try:
        ...         npx.gpu_memory_info(0)
        ...     except ValueError as e:
        ...         print(str(e).split(":")[0])
        ... else:
        ...     print("npx.gpu_memory_info")
        npx.gpu_memory_info
    """
    n = num_gpus()
    if not 0 <= int(device_id) < n:
        raise ValueError(f"npx.gpu_memory_info: no GPU {device_id} on this machine "
                         f"({n} GPU(s) visible through CuPy); memory info needs a GPU")
    from ..cuda import get_cupy

    cp = get_cupy()
    with cp.cuda.Device(int(device_id)):
        free, total = cp.cuda.runtime.memGetInfo()
    return int(free), int(total)


def save(file, arr) -> None:
    """Save an array, a list of arrays or a dict of named arrays (``npx.save``): MXNet's
    binary format with NumPy-shape (V3) arrays, as ``mx.npx.save`` writes (real MXNet
    loads the file with ``npx.load`` under ``npx.set_np()``), or ``.npz``/HDF5 by name;
    loads never unpickle (see ``core.serialization``)."""
    _serialization.save(file, arr, np_shape=True)


def load(file):
    """Load what :func:`save` wrote: a list or a dict of arrays (``npx.load``)."""
    return _serialization.load(file)
