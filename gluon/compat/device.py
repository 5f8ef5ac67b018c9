"""``mxnet.device`` (MXNet 2.0's name for ``mxnet.context``) over ``core.context``.

``Device`` is ``core.context.Context``; ``current_device`` is ``current_context``.

Example:
    >>> from gluon.compat import device
    >>> device.current_device()
    cpu(0)
    >>> device.Device('cpu', 1)
    cpu(1)
"""
from core.context import Context, cpu, cpu_pinned, current_context, gpu, num_gpus
from core.npx import gpu_memory_info

Device = Context
current_device = current_context

__all__ = ["Context", "Device", "cpu", "cpu_pinned", "current_context", "current_device", "gpu",
           "gpu_memory_info", "num_gpus"]
