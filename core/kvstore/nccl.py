"""NCCL all-reduce for the ``device``/``nccl`` stores and ``dist_sync`` between GPU processes.

On several GPUs of one process, :class:`DeviceCliques` holds one set of NCCL
communicators per device set (``NcclCommunicator.initAll``, created once and reused),
and :meth:`DeviceCliques.allreduce` sums one buffer per device into one buffer per
device inside one ``groupStart``/``groupEnd``. Between processes (``dist_sync`` with
GPU arrays), :class:`ProcessGroup` bootstraps one communicator per process: rank 0
draws the NCCL unique id, the store's MPI communicator broadcasts it, and every rank
creates ``NcclCommunicator(size, uid, rank)`` on its device.

Nothing here imports CuPy until a GPU buffer is summed. :func:`set_module` replaces
``cupy.cuda.nccl`` (tests inject a fake whose communicators sum NumPy buffers, so
the real call sequence runs on a CPU). On CPU contexts the stores keep their paths:
:func:`devices_of` returns None there.

Example:
    >>> from core import cpu, gpu
    >>> from core.kvstore import nccl
    >>> nccl.devices_of([cpu(0), cpu(1)]) is None   # CPU contexts: today's path
    True
    >>> nccl.dtype_code_name('float32')
    'NCCL_FLOAT32'
"""
from __future__ import annotations

import contextlib
import threading

import numpy

__all__ = ["DTYPES", "DeviceCliques", "NcclError", "ProcessGroup", "available",
           "devices_of", "dist_device", "dtype_code_name", "module", "process_cliques",
           "set_module", "sum_arrays"]

DTYPES = {"float16": "NCCL_FLOAT16", "float32": "NCCL_FLOAT32", "float64": "NCCL_FLOAT64",
           "int8": "NCCL_INT8", "uint8": "NCCL_UINT8", "int32": "NCCL_INT32",
           "uint32": "NCCL_UINT32", "int64": "NCCL_INT64", "uint64": "NCCL_UINT64",
           "bfloat16": "NCCL_BFLOAT16"}

_override: list = []  # [module] while a replacement is set
_LOCK = threading.Lock()


class NcclError(RuntimeError):
    """NCCL cannot sum these buffers (a dtype NCCL lacks, mismatched buffers)."""


def set_module(mod) -> None:
    """Use ``mod`` in place of ``cupy.cuda.nccl`` (None: back to the real one).

    Args:
        mod: a module (or object) with ``NcclCommunicator``, ``groupStart``,
            ``groupEnd``, ``get_unique_id`` and the ``NCCL_*`` constants.
    """
    _override.clear()
    if mod is not None:
        _override.append(mod)


def module():
    """The NCCL module: the one set with :func:`set_module`, else ``cupy.cuda.nccl``.

    Raises:
        RuntimeError: CuPy or its NCCL binding is missing (the message says what to install).
    """
    if _override:
        return _override[0]
    try:
        from cupy.cuda import nccl as mod
    except Exception as e:
        raise RuntimeError(f"kvstore nccl: cupy.cuda.nccl could not be imported ({e}); "
                           "install CuPy with NCCL (pip install cupy-cuda12x nvidia-nccl-cu12)"
                           ) from e
    if not getattr(mod, "available", True):
        raise RuntimeError("kvstore nccl: this CuPy was built without NCCL")
    return mod


def available() -> bool:
    """Whether an NCCL module can be used (never raises)."""
    try:
        module()
    except RuntimeError:
        return False
    return True


def devices_of(contexts) -> tuple | None:
    """The GPU ids to all-reduce over with NCCL, or None for the store's own path.

    NCCL applies to two or more arrays on distinct GPUs of this process, with an NCCL
    module available; CPU contexts, one device, or a device given twice keep the
    copy-and-add path (``core.kvstore.comm``).

    Args:
        contexts: the contexts of one key's pushed arrays, in push order.

    Returns:
        A tuple of device ids in push order, or None.
    """
    contexts = list(contexts)
    if len(contexts) < 2 or any(c.device_type != "gpu" for c in contexts):
        return None
    ids = tuple(c.device_id for c in contexts)
    if len(set(ids)) != len(ids) or not available():
        return None
    return ids


def dist_device(contexts) -> int | None:
    """The GPU id for a ``dist_sync`` NCCL all-reduce of values on ``contexts``, or None.

    NCCL applies when every value is on the same GPU (one communicator per process)
    and an NCCL module is available; otherwise the values travel through the host.

    Example:
        >>> from core import cpu
        >>> from core.kvstore import nccl
        >>> nccl.dist_device([cpu(0)]) is None
        True
    """
    contexts = list(contexts)
    if not contexts or any(c.device_type != "gpu" for c in contexts):
        return None
    ids = {c.device_id for c in contexts}
    if len(ids) != 1 or not available():
        return None
    return ids.pop()


def dtype_code_name(dtype) -> str:
    """The name of NCCL's datatype constant for a NumPy dtype.

    Raises:
        NcclError: NCCL has no such datatype.
    """
    name = numpy.dtype(dtype).name if not isinstance(dtype, str) else dtype
    if name not in DTYPES:
        raise NcclError(f"kvstore nccl: NCCL cannot sum dtype {name}; it sums "
                        f"{sorted(DTYPES)}")
    return DTYPES[name]


def _ptr(buf) -> int:
    """The device (CuPy) or host (NumPy) address of a contiguous buffer."""
    data = getattr(buf, "data", None)
    if hasattr(data, "ptr"):
        return int(data.ptr)
    return int(buf.ctypes.data)


def _dtype_name(buf) -> str:
    return buf.dtype.name if hasattr(buf.dtype, "name") else str(buf.dtype)


def _cuda_device(dev):
    from ..cuda import get_cupy

    return get_cupy().cuda.Device(dev)


def _cuda_stream(dev) -> int:
    from ..cuda import get_cupy

    return int(get_cupy().cuda.get_current_stream().ptr)


class _Runtime:
    """How to enter a device and find its stream (CuPy's; tests give CPU stand-ins)."""

    def __init__(self, device=None, stream=None):
        self.device = device or _cuda_device
        self.stream = stream or _cuda_stream


def _check_buffers(sends, recvs, what: str):
    if len(sends) != len(recvs):
        raise NcclError(f"{what}: {len(sends)} send buffers but {len(recvs)} receive buffers")
    for i, (s, r) in enumerate(zip(sends, recvs)):
        if s.shape != sends[0].shape or _dtype_name(s) != _dtype_name(sends[0]):
            raise NcclError(f"{what}: buffer {i} has shape {s.shape} and dtype "
                            f"{_dtype_name(s)}, buffer 0 shape {sends[0].shape} and dtype "
                            f"{_dtype_name(sends[0])}")
        if r.shape != s.shape or _dtype_name(r) != _dtype_name(s):
            raise NcclError(f"{what}: receive buffer {i} has shape {r.shape} "
                            f"{_dtype_name(r)}, its send buffer {s.shape} {_dtype_name(s)}")


class DeviceCliques:
    """NCCL communicators of this process, one set per device set, created once.

    Args:
        device: a callable ``device(id)`` giving a context manager that makes GPU
            ``id`` current (default ``cupy.cuda.Device``).
        stream: a callable ``stream(id)`` giving the stream handle to enqueue on
            (default: CuPy's current stream).

    Example (with the fake NCCL of ``tests/core/kvstore/test_nccl_plan.py``)::

        cliques = DeviceCliques()
        cliques.allreduce((0, 1), [a0, a1], [out0, out1])   # out_i = a0 + a1
        cliques.created                                      # [(0, 1)]
    """

    def __init__(self, device=None, stream=None):
        self._rt = _Runtime(device, stream)
        self._comms: dict = {}
        self.created: list = []  # device sets, in the order their communicators were made

    def communicators(self, devices) -> list:
        """The communicators of device set ``devices`` (made at the first call).

        Args:
            devices: a tuple of distinct GPU ids; its order is the ranks' order.
        """
        devices = tuple(int(d) for d in devices)
        with _LOCK:
            comms = self._comms.get(devices)
            if comms is None:
                comms = list(module().NcclCommunicator.initAll(list(devices)))
                self._comms[devices] = comms
                self.created.append(devices)
        return comms

    def allreduce(self, devices, sends, recvs) -> None:
        """Sum ``sends`` (one contiguous buffer per device) into every buffer of ``recvs``.

        Args:
            devices: the GPU id of each buffer, distinct.
            sends: one buffer per device, of one shape and dtype (may be ``recvs``:
                in place).
            recvs: one buffer per device of the same shape and dtype.

        Raises:
            NcclError: buffers that differ, or a dtype NCCL lacks.
        """
        devices = tuple(int(d) for d in devices)
        if len(devices) != len(sends):
            raise NcclError(f"kvstore nccl allreduce: {len(devices)} devices but "
                            f"{len(sends)} buffers")
        _check_buffers(sends, recvs, "kvstore nccl allreduce")
        nc = module()
        code = getattr(nc, dtype_code_name(_dtype_name(sends[0])))
        comms = self.communicators(devices)
        count = int(sends[0].size)
        nc.groupStart()
        try:
            for comm, dev, s, r in zip(comms, devices, sends, recvs):
                with self._rt.device(dev):
                    comm.allReduce(_ptr(s), _ptr(r), count, code, nc.NCCL_SUM,
                                   self._rt.stream(dev))
        finally:
            nc.groupEnd()


class ProcessGroup:
    """One NCCL communicator per process of an MPI job (``dist_sync`` with GPU arrays).

    Creating it is a collective over ``mpi_comm``: rank 0 draws the unique id, it is
    broadcast over MPI, and every rank joins with its own GPU.

    Args:
        mpi_comm: the store's :class:`core.kvstore.mpi.MPIComm` (or anything with
            ``rank``, ``size`` and ``bcast(array, what, root=0)``).
        device: this process' GPU id.
        runtime_device, runtime_stream: as :class:`DeviceCliques`' ``device``/``stream``.
    """

    def __init__(self, mpi_comm, device: int, runtime_device=None, runtime_stream=None):
        self._rt = _Runtime(runtime_device, runtime_stream)
        nc = module()
        self.rank, self.size, self.device = int(mpi_comm.rank), int(mpi_comm.size), int(device)
        uid = nc.get_unique_id() if self.rank == 0 else None
        mine = numpy.zeros(128, dtype=numpy.int64) if uid is None else \
            numpy.asarray(uid, dtype=numpy.int64)
        got = mpi_comm.bcast(mine, "the NCCL unique id", root=0)
        self.unique_id = tuple(int(v) for v in numpy.asarray(got).reshape(-1))
        with self._rt.device(self.device):
            self._comm = nc.NcclCommunicator(self.size, self.unique_id, self.rank)

    def allreduce_sum(self, sends, recvs=None) -> list:
        """Sum each buffer of ``sends`` over the processes, in one NCCL group.

        Args:
            sends: this process' contiguous buffers (on its GPU).
            recvs: where the sums go (default: in place into ``sends``).

        Returns:
            ``recvs``.

        Raises:
            NcclError: a dtype NCCL lacks, or receive buffers that do not match.
        """
        recvs = list(sends) if recvs is None else list(recvs)
        if len(recvs) != len(sends):
            raise NcclError(f"kvstore dist_sync nccl: {len(sends)} send buffers but "
                            f"{len(recvs)} receive buffers")
        nc = module()
        codes = [getattr(nc, dtype_code_name(_dtype_name(s))) for s in sends]
        for i, (s, r) in enumerate(zip(sends, recvs)):
            if r.shape != s.shape:
                raise NcclError(f"kvstore dist_sync nccl: receive buffer {i} has shape "
                                f"{r.shape}, its send buffer {s.shape}")
        with self._rt.device(self.device):
            nc.groupStart()
            try:
                for s, r, code in zip(sends, recvs, codes):
                    self._comm.allReduce(_ptr(s), _ptr(r), int(s.size), code, nc.NCCL_SUM,
                                         self._rt.stream(self.device))
            finally:
                nc.groupEnd()
        return recvs


_PROCESS: list = []  # the process' DeviceCliques for core.parallel (made at first use)


def process_cliques() -> DeviceCliques:
    """The communicators :mod:`core.parallel` sums gradients with (one per process)."""
    with _LOCK:
        if not _PROCESS:
            _PROCESS.append(DeviceCliques())
        return _PROCESS[0]


def sum_arrays(cliques: DeviceCliques, devices, arrays) -> list:
    """New NDArrays, one per array of ``arrays`` (on its context), each the sum of all.

    Args:
        cliques: the communicators to use.
        devices: the GPU id of each array (:func:`devices_of`).
        arrays: dense NDArrays of one shape and dtype, one per device.

    Returns:
        A list of new NDArrays, outside autograd.
    """
    from .. import autograd

    with autograd.pause():
        bufs = [a.copyto(a.context).detach() for a in arrays]  # contiguous, new
        for b in bufs:
            b.wait_to_read()
        cliques.allreduce(devices, [b._data for b in bufs], [b._data for b in bufs])
    return bufs


def null_device(dev):
    """A stand-in for ``cupy.cuda.Device`` that does nothing (CPU tests)."""
    return contextlib.nullcontext()
