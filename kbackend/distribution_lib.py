"""Keras backend ``distribution_lib``: the devices and processes of ``keras.distribution``.

``keras.distribution.list_devices()`` and ``get_device_count()`` list core's devices:
``'gpu:0'``, ``'gpu:1'``, ... when CuPy sees GPUs (the default type then), and the
logical CPU devices ``'cpu:0'``, ``'cpu:1'``, ... Core's CPU contexts are logical
devices sharing host memory, so their number is a choice: ``KBACKEND_NUM_CPU_DEVICES``
(default 1), the counterpart of JAX's ``JAX_NUM_CPU_DEVICES`` / XLA's
``--xla_force_host_platform_device_count``.

kbackend runs ``keras.distribution`` in one process. Layouts are accepted when they
place a tensor whole on the devices (one device, or replicated over all); sharding a
tensor across several devices needs the data-parallel engine (``core.parallel``) and
is refused with an error naming the layout.

Example:
    >>> import os
    >>> os.environ.get("KBACKEND_NUM_CPU_DEVICES", "1")
    '1'
"""
from __future__ import annotations

import math
import os

import numpy

from core import context as _context

NUM_CPU_ENV = "KBACKEND_NUM_CPU_DEVICES"
_TYPES = ("cpu", "gpu")


def _num_cpu_devices() -> int:
    raw = os.environ.get(NUM_CPU_ENV, "1").strip() or "1"
    try:
        n = int(raw)
    except ValueError:
        n = 0
    if n < 1:
        raise ValueError(
            f"{NUM_CPU_ENV} must be a positive integer (the number of logical CPU "
            f"devices keras.distribution sees); got {raw!r}")
    return n


def _device_type(device_type: str | None) -> str:
    if device_type is None:
        return "gpu" if _context.num_gpus() > 0 else "cpu"
    if not isinstance(device_type, str):
        raise TypeError(f"list_devices: device_type must be a string such as 'cpu' or "
                        f"'gpu'; got {device_type!r}")
    kind = {"cuda": "gpu"}.get(device_type.lower(), device_type.lower())
    if kind not in _TYPES:
        raise ValueError(f"list_devices: the kbackend backend has no {device_type!r} "
                         f"devices; device_type must be one of {_TYPES} or None")
    return kind


def list_devices(device_type: str | None = None) -> list:
    """The devices of one type, as ``'type:id'`` strings.

    Args:
        device_type: ``'cpu'``, ``'gpu'`` or None (GPUs when CuPy sees any, else
            CPUs); never a mix of types.

    Returns:
        list of str, e.g. ``['cpu:0']`` or ``['gpu:0', 'gpu:1']``; empty for
        ``'gpu'`` when there is no GPU.

    Raises:
        ValueError: an unknown device type, or a bad ``KBACKEND_NUM_CPU_DEVICES``.
    """
    kind = _device_type(device_type)
    count = _context.num_gpus() if kind == "gpu" else _num_cpu_devices()
    return [f"{kind}:{i}" for i in range(count)]


def get_device_count(device_type: str | None = None) -> int:
    """How many devices :func:`list_devices` lists for ``device_type``."""
    return len(list_devices(device_type))


def initialize(job_addresses=None, num_processes=None, process_id=None) -> None:
    """Set up multi-process distribution: kbackend runs one process.

    Args:
        job_addresses: ignored when ``num_processes`` is None or 1.
        num_processes: None or 1.
        process_id: None or 0.

    Raises:
        ValueError: more than one process was asked for.
    """
    if num_processes not in (None, 1) or process_id not in (None, 0):
        raise ValueError(
            f"keras.distribution.initialize: the kbackend backend runs in a single "
            f"process (got num_processes={num_processes!r}, process_id={process_id!r}, "
            f"job_addresses={job_addresses!r}); multi-process training goes through "
            f"core's 'dist_sync' kvstore (mpirun), not keras.distribution")


def num_processes() -> int:
    """The number of processes taking part: always 1 on kbackend."""
    return 1


def process_id() -> int:
    """This process' index: always 0 on kbackend."""
    return 0


def _to_backend_device(device_name):
    """A device name (``'cpu:1'``, ``'gpu:0'``) or core Context as a core Context."""
    if isinstance(device_name, _context.Context):
        return device_name
    try:
        return _context.Context(str(device_name).lower())
    except ValueError as exc:
        raise ValueError(f"kbackend distribution: invalid device {device_name!r}; "
                         f"expected 'cpu:<i>' or 'gpu:<i>'") from exc


def _to_backend_mesh(device_mesh):
    """A ``keras.distribution.DeviceMesh`` as an array of core Contexts, mesh-shaped."""
    devices = numpy.asarray(device_mesh.devices, dtype=object).reshape(-1)
    contexts = numpy.empty(devices.shape, dtype=object)
    for i, name in enumerate(devices):
        contexts[i] = _to_backend_device(name)
    return contexts.reshape(tuple(device_mesh.shape))


def _to_backend_layout(tensor_layout):
    """A ``TensorLayout``, checked: its mesh is set and its axes name mesh axes."""
    mesh = tensor_layout.device_mesh
    if mesh is None:
        raise ValueError("Cannot create sharding when device mesh is not set for "
                         "TensorLayout.")
    unknown = [a for a in tensor_layout.axes if a is not None and a not in mesh.axis_names]
    if unknown:
        raise ValueError(f"TensorLayout axes {tuple(tensor_layout.axes)} name {unknown}, "
                         f"which are not axes of the device mesh {tuple(mesh.axis_names)}")
    return tensor_layout


def _placement(layout, what: str):
    """The single core Context a layout puts a whole tensor on, or None (replicated)."""
    from keras.src.distribution import TensorLayout

    if not isinstance(layout, TensorLayout):
        raise TypeError(f"{what}: expected a keras.distribution.TensorLayout, got "
                        f"{type(layout).__name__}")
    _to_backend_layout(layout)
    mesh = layout.device_mesh
    sizes = dict(zip(mesh.axis_names, mesh.shape))
    shards = math.prod(sizes[a] for a in layout.axes if a is not None)
    if shards > 1:
        raise NotImplementedError(
            f"{what}: the kbackend backend cannot shard a tensor across devices yet "
            f"(layout axes {tuple(layout.axes)} over mesh {dict(sizes)} = {shards} "
            f"shards); use a layout that replicates it (axes all None) or a one-device "
            f"mesh")
    devices = numpy.asarray(mesh.devices, dtype=object).reshape(-1)
    return _to_backend_device(devices[0]) if devices.size == 1 else None


def _place(value, layout, what: str):
    ctx = _placement(layout, what)
    if ctx is None or not hasattr(value, "as_in_context"):
        return value
    return value if value.context == ctx else value.as_in_context(ctx)


def distribute_tensor(tensor, layout):
    """``tensor`` laid out by ``layout`` (kept whole: one device or replicated).

    Args:
        tensor: a backend tensor.
        layout: a ``keras.distribution.TensorLayout``.

    Returns:
        the tensor, moved to the mesh's device when the mesh has one device.

    Raises:
        NotImplementedError: the layout shards the tensor across several devices.
    """
    return _place(tensor, layout, "distribute_tensor")


def distribute_variable(value, layout):
    """Like :func:`distribute_tensor`, for a variable's initial value."""
    return _place(value, layout, "distribute_variable")


def distribute_data_input(per_process_batch, layout, batch_dim_name):
    """A batch of input data laid out by ``layout`` (see :func:`distribute_tensor`)."""
    return _place(per_process_batch, layout, "distribute_data_input")
