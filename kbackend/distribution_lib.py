"""Keras backend ``distribution_lib``: the devices and processes of ``keras.distribution``.

``keras.distribution.list_devices()`` and ``get_device_count()`` list core's devices:
``'gpu:0'``, ``'gpu:1'``, ... when CuPy sees GPUs (the default type then), and the
logical CPU devices ``'cpu:0'``, ``'cpu:1'``, ... Core's CPU contexts are logical
devices sharing host memory, so their number is a choice: ``KBACKEND_NUM_CPU_DEVICES``
(default 1), the counterpart of JAX's ``JAX_NUM_CPU_DEVICES`` / XLA's
``--xla_force_host_platform_device_count``.

``keras.distribution.DataParallel`` trains on these devices: ``model.fit`` splits each
batch over them, keeps the variables replicated, sums the gradients and applies one
update (:mod:`kbackend.data_parallel`). Layouts that place a tensor whole (one device,
or replicated) and data layouts that split the batch axis are accepted; sharding a
variable across devices (``ModelParallel``) is refused with an error naming the layout.

Several processes: launched by ``mpirun -np N``, each process calls
``keras.distribution.initialize()``, which opens core's ``'dist_sync'`` key-value store
(MPI). The devices are then global, as on JAX: with ``L`` devices per process,
``list_devices()`` lists ``N * L`` names and process ``p`` owns ``'cpu:{p*L}'`` to
``'cpu:{p*L+L-1}'`` (its local ``cpu(0)`` ... ``cpu(L-1)``).

Example:
    >>> import os
    >>> os.environ.get("KBACKEND_NUM_CPU_DEVICES", "1")
    '1'
    >>> num_processes(), process_id()
    (1, 0)
"""
from __future__ import annotations

import math
import os

import numpy

from core import context as _context

NUM_CPU_ENV = "KBACKEND_NUM_CPU_DEVICES"
_TYPES = ("cpu", "gpu")
# The world size an MPI launcher (MPICH's hydra, Open MPI) gives each process it starts.
_MPI_SIZE_ENV = ("PMI_SIZE", "OMPI_COMM_WORLD_SIZE", "PMIX_SIZE")
_STATE: dict = {"store": None}


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


def _local_count(kind: str) -> int:
    return _context.num_gpus() if kind == "gpu" else _num_cpu_devices()


def list_devices(device_type: str | None = None) -> list:
    """The devices of one type, as ``'type:id'`` strings (all processes' devices).

    Args:
        device_type: ``'cpu'``, ``'gpu'`` or None (GPUs when CuPy sees any, else
            CPUs); never a mix of types.

    Returns:
        list of str, e.g. ``['cpu:0']`` or ``['gpu:0', 'gpu:1']``; empty for
        ``'gpu'`` when there is no GPU. After :func:`initialize` with ``N``
        processes, ``N`` times this process' devices (see the module docstring).

    Raises:
        ValueError: an unknown device type, or a bad ``KBACKEND_NUM_CPU_DEVICES``.
    """
    kind = _device_type(device_type)
    return [f"{kind}:{i}" for i in range(_local_count(kind) * num_processes())]


def get_device_count(device_type: str | None = None) -> int:
    """How many devices :func:`list_devices` lists for ``device_type``."""
    return len(list_devices(device_type))


def _mpi_world_size() -> int:
    for name in _MPI_SIZE_ENV:
        raw = os.environ.get(name)
        if raw and raw.strip().isdigit():
            return int(raw)
    return 1


def initialize(job_addresses=None, num_processes=None, process_id=None) -> None:
    """Join the processes of a multi-process run (started by ``mpirun -np N``).

    With more than one process (asked for, or the MPI launcher's world size), this
    opens core's ``'dist_sync'`` key-value store: rank and size come from MPI, the
    gradients of ``model.fit`` under ``DataParallel`` are summed across processes, and
    the global random seed (when ``keras.utils.set_random_seed`` was not called) is
    drawn on process 0 and broadcast, so every process builds the same initial
    weights (``fit`` also broadcasts process 0's variables on its first step).

    Args:
        job_addresses: not used: MPI connects the processes (accepted for Keras'
            signature and ``KERAS_DISTRIBUTION_JOB_ADDRESSES``).
        num_processes: None (MPI's world size) or the expected number of processes.
        process_id: None (the MPI rank) or the expected rank of this process.

    Raises:
        ValueError: ``num_processes``/``process_id`` disagree with the MPI launch
            (e.g. two processes asked for in a process not started by ``mpirun``).
        ImportError: more than one process but mpi4py is not installed.
    """
    world = _mpi_world_size()
    if _STATE["store"] is None and world <= 1 and num_processes in (None, 1) \
            and process_id in (None, 0):
        return  # a single process: nothing to join
    if num_processes is not None and int(num_processes) != world:
        raise ValueError(
            f"keras.distribution.initialize: num_processes={num_processes!r}, but this "
            f"process was started as one of {world} MPI process(es) (a single process "
            f"unless launched by mpirun); kbackend's processes are started with "
            f"`mpirun -np {num_processes} python script.py` (job_addresses="
            f"{job_addresses!r} is not used: MPI connects the processes)")
    store = _STATE["store"]
    if store is None:
        from core import kvstore

        store = kvstore.create("dist_sync")
    if process_id is not None and int(process_id) != store.rank:
        raise ValueError(f"keras.distribution.initialize: process_id={process_id!r}, but "
                         f"MPI gave this process rank {store.rank} of {store.num_workers}")
    _STATE["store"] = store
    _initialize_rng(store)


def _initialize_rng(store) -> None:
    """One global seed for all processes: process 0's, broadcast (as JAX's backend)."""
    from keras.src.random import seed_generator
    from keras.src.utils import rng_utils

    if rng_utils.get_random_seed() is not None:
        return
    from core import nd

    seed = nd.array([float(seed_generator.make_default_seed() % (1 << 24))],
                    dtype="float64")
    store.broadcast("__kbackend_seed__", seed, out=[seed])
    rng_utils.set_random_seed(int(seed.asnumpy()[0]))


def dist_store():
    """The ``'dist_sync'`` store :func:`initialize` opened, or None (one process)."""
    return _STATE["store"]


def num_processes() -> int:
    """The number of processes taking part (1 until :func:`initialize` joins more)."""
    store = _STATE["store"]
    return 1 if store is None else int(store.num_workers)


def process_id() -> int:
    """This process' index among :func:`num_processes` (its MPI rank)."""
    store = _STATE["store"]
    return 0 if store is None else int(store.rank)


def _parse_device(device_name) -> tuple:
    name = str(device_name).lower()
    kind, sep, index = name.partition(":")
    kind = {"cuda": "gpu"}.get(kind, kind)
    if kind not in _TYPES or (sep and not index.isdigit()):
        raise ValueError(f"kbackend distribution: invalid device {device_name!r}; "
                         f"expected 'cpu:<i>' or 'gpu:<i>'")
    return kind, int(index) if sep else 0


def device_owner(device_name) -> tuple:
    """``(process, local Context)`` of a global device name such as ``'cpu:3'``.

    With ``L`` local devices per process, global id ``i`` belongs to process
    ``i // L`` as its ``Context(type, i % L)``; in one process, ``(0, Context)``.
    """
    if isinstance(device_name, _context.Context):
        return process_id(), device_name
    kind, index = _parse_device(device_name)
    if num_processes() == 1:
        return 0, _context.Context(kind, index)
    local = _local_count(kind)
    return index // local, _context.Context(kind, index % local)


def _to_backend_device(device_name):
    """A device name (``'cpu:1'``, ``'gpu:0'``) or core Context as this process' Context.

    Raises:
        ValueError: a malformed name, or a device of another process.
    """
    owner, ctx = device_owner(device_name)
    if owner != process_id():
        raise ValueError(f"kbackend distribution: device {device_name!r} belongs to "
                         f"process {owner}, not to this process ({process_id()})")
    return ctx


def local_contexts(devices) -> list:
    """This process' Contexts among ``devices`` (device names, any shape), in order."""
    out = []
    for name in numpy.asarray(devices, dtype=object).reshape(-1):
        owner, ctx = device_owner(name)
        if owner == process_id():
            out.append(ctx)
    return out


def _to_backend_mesh(device_mesh):
    """A ``DeviceMesh`` as an array of core Contexts, mesh-shaped (None for the devices
    of other processes)."""
    devices = numpy.asarray(device_mesh.devices, dtype=object).reshape(-1)
    contexts = numpy.empty(devices.shape, dtype=object)
    for i, name in enumerate(devices):
        owner, ctx = device_owner(name)
        contexts[i] = ctx if owner == process_id() else None
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


def _shards(layout, what: str, batch_ok: bool = False) -> int:
    """How many pieces ``layout`` cuts a tensor into (1: whole), checked.

    Raises:
        NotImplementedError: a layout that shards a non-batch axis (or, unless
            ``batch_ok``, any axis) across devices: model parallelism.
    """
    from keras.src.distribution import TensorLayout

    if not isinstance(layout, TensorLayout):
        raise TypeError(f"{what}: expected a keras.distribution.TensorLayout, got "
                        f"{type(layout).__name__}")
    _to_backend_layout(layout)
    mesh = layout.device_mesh
    sizes = dict(zip(mesh.axis_names, mesh.shape))
    axes = tuple(layout.axes)
    inner = math.prod(sizes[a] for a in axes[1 if batch_ok else 0:] if a is not None)
    if inner > 1:
        raise NotImplementedError(
            f"{what}: the kbackend backend cannot shard a tensor across devices "
            f"(layout axes {axes} over mesh {dict(sizes)} = {inner} shards): only data "
            f"parallelism (keras.distribution.DataParallel) is supported; use a layout "
            f"that replicates it (axes all None) or a one-device mesh")
    return sizes[axes[0]] if batch_ok and axes and axes[0] is not None else 1


def _place(value, layout, what: str):
    _shards(layout, what)
    devices = numpy.asarray(layout.device_mesh.devices, dtype=object).reshape(-1)
    if devices.size != 1 or not hasattr(value, "as_in_context"):
        return value
    ctx = _to_backend_device(devices[0])
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
    """This process' batch for ``layout``.

    A layout that splits the batch axis (``DataParallel``'s) returns the batch whole:
    the trainer splits each batch over the devices when it runs the step
    (:mod:`kbackend.data_parallel`). Other layouts as :func:`distribute_tensor`.

    Raises:
        NotImplementedError: the layout shards another axis across devices.
    """
    if _shards(layout, "distribute_data_input", batch_ok=True) > 1:
        return per_process_batch
    return _place(per_process_batch, layout, "distribute_data_input")
