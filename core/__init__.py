"""core: the tensor and autograd engine of kbackend.

Example:
    >>> import core
    >>> from core import nd, autograd
    >>> x = nd.array([1.0, 2.0, 3.0]); x.attach_grad()
    >>> with autograd.record():
    ...     y = (x ** 2).sum()
    >>> y.backward()
    >>> x.grad.asnumpy().tolist()
    [2.0, 4.0, 6.0]
"""
from . import host_memory

host_memory.tune()  # before the first large arrays: freed array memory is reused

from . import (  # noqa: E402
    autograd,
    context,
    cpu_kernels,
    dtypes,
    engine,
    host_memory,
    initializer,
    kvstore,
    lr_scheduler,
    metric,
    nd,
    np,
    ops,
    optimizer,
    parallel,
    profiler,
    random,
    serialization,
    sym,
    symbol,
    viz,
)
from .context import Context, cpu, cpu_pinned, current_context, gpu, num_gpus  # noqa: E402
from .engine import wait_all as waitall  # noqa: E402
from .ndarray import NDArray, array, from_dlpack  # noqa: E402

cpu_kernels.apply_thread_setting()

__version__ = "0.1.0"
init = initializer  # MXNet's mx.init

__all__ = ["Context", "NDArray", "__version__", "array", "autograd", "context", "cpu",
           "cpu_pinned", "current_context", "dtypes", "engine", "from_dlpack", "host_memory", "gpu", "init", "initializer", "kvstore", "lr_scheduler",
           "metric", "nd", "np", "num_gpus", "ops", "optimizer", "parallel", "profiler", "random", "serialization", "sym", "symbol", "viz", "waitall"]
