"""``Updater``: an optimizer with the per-weight states it creates lazily.

``get_states`` returns bytes in a safe format: an in-memory ``.npz`` archive (NumPy's
zip of ``.npy`` files) holding every state array, plus one ``__header__`` entry with a
JSON document that describes how the arrays nest into states and, with
``dump_optimizer=True``, the optimizer's hyper-parameters, update counts and learning-rate
scheduler. ``set_states`` reads it back with ``allow_pickle=False`` and never imports or
evaluates anything named in the data: optimizer classes come from the optimizer registry,
schedulers from ``core.optimizer.lr_scheduler``.
"""
from __future__ import annotations

import io
import json
import warnings
import zipfile

import numpy

from ..context import Context, num_gpus
from ..dtypes import bfloat16
from ..ndarray import NDArray
from .optimizer import _settle

__all__ = ["Updater", "get_updater"]

_FORMAT = "kbackend.optimizer.states"
_VERSION = 1
# Optimizer attributes that are not saved: set again by the Trainer, or rebuilt.
_SKIP_ATTRS = ("param_dict", "lr_scheduler", "_index_update_count")


class Updater:
    """Applies an optimizer to weights by index, creating their states on first use.

    Calling it with ``(index, grad, weight)`` (or lists of each) updates the weights in
    place. One Updater serves one device; states created on one context are moved to the
    weight's context after ``set_states``.

    Args:
        optimizer: the optimizer.

    Example:
        >>> from core import nd, optimizer
        >>> updater = optimizer.get_updater(optimizer.SGD(learning_rate=0.1, momentum=0.9))
        >>> w = nd.array([1.0])
        >>> updater(0, nd.array([1.0]), w)
        >>> updater(0, nd.array([1.0]), w)
        >>> round(w.item(), 4)
        0.71
        >>> restored = optimizer.get_updater(optimizer.SGD(learning_rate=0.1, momentum=0.9))
        >>> restored.set_states(updater.get_states())
        >>> restored.states[0].asnumpy().tolist()
        [-0.19...]
    """

    def __init__(self, optimizer):
        self.optimizer = optimizer
        self.states: dict = {}
        self.states_synced: dict = {}
        self.aggregate_updates = optimizer.aggregate_num > 0

    def __call__(self, index, grad, weight) -> None:
        """Update ``weight`` (or each of a list of weights) with its gradient."""
        if not isinstance(index, (list, tuple)):
            indices, grads, weights = [index], [grad], [weight]
        else:
            indices, grads, weights = list(index), list(grad), list(weight)
        if not (len(indices) == len(grads) == len(weights)):
            raise ValueError(f"Updater: got {len(indices)} indices, {len(grads)} gradients "
                             f"and {len(weights)} weights; they must match")
        if weights:
            self.optimizer._set_current_context(weights[0].context.device_id)
        opt = self.optimizer
        for i, idx in enumerate(indices):
            if isinstance(idx, bytes):
                idx = indices[i] = idx.decode()
            if idx not in self.states:
                _settle(weights[i], grads[i])  # the new state may copy the weight's buffer
                self.states[idx] = opt.create_state_multi_precision(idx, weights[i])
                self.states_synced[idx] = True
            elif not self.states_synced[idx]:
                self.states[idx] = self.sync_state_context(self.states[idx], weights[i].context)
                self.states_synced[idx] = True
        takes_lists = getattr(opt, "_takes_lists", None)
        if takes_lists is not None and takes_lists():  # one multi-tensor update of them all
            opt.update_multi_precision(indices, weights, grads,
                                       [self.states[i] for i in indices])
            return
        for idx, w, g in zip(indices, weights, grads):
            opt.update_multi_precision(idx, w, g, self.states[idx])

    def sync_state_context(self, state, context):
        """``state`` (an NDArray, or tuples/lists of them) moved to ``context``."""
        if isinstance(state, NDArray):
            return state.as_in_context(context)
        if isinstance(state, (tuple, list)):
            synced = [self.sync_state_context(s, context) for s in state]
            return tuple(synced) if isinstance(state, tuple) else synced
        return state

    def get_states(self, dump_optimizer: bool = False) -> bytes:
        """The states (and, with ``dump_optimizer``, the optimizer) as bytes.

        Args:
            dump_optimizer: also save the optimizer's hyper-parameters, update counts and
                learning-rate scheduler.

        Returns:
            The bytes of an ``.npz`` archive (no pickle); :meth:`set_states` reads them.
        """
        arrays: dict = {}
        header = {
            "format": _FORMAT,
            "version": _VERSION,
            "states": [[_encode(k, arrays), _encode(s, arrays)] for k, s in self.states.items()],
        }
        if dump_optimizer:
            header["optimizer"] = _dump_optimizer(self.optimizer, arrays)
        blob = numpy.frombuffer(json.dumps(header).encode("utf-8"), dtype=numpy.uint8)
        buf = io.BytesIO()
        numpy.savez(buf, __header__=blob, **arrays)
        return buf.getvalue()

    def set_states(self, states: bytes) -> None:
        """Restore what :meth:`get_states` returned.

        States are moved to their weights' contexts on the next update. If the bytes hold
        an optimizer, its hyper-parameters, update counts and scheduler are restored into
        this Updater's optimizer (same class), or into a new optimizer of the saved class
        (whose ``param_dict`` is empty, as after unpickling in MXNet).

        Raises:
            ValueError: for bytes that are not optimizer states of this format (MXNet's
                pickled states are refused: unpickling can run arbitrary code).
        """
        header, arrays = _read(states)
        self.states = {_decode(k, arrays): _decode(s, arrays) for k, s in header["states"]}
        self.states_synced = dict.fromkeys(self.states, False)
        if "optimizer" in header:
            self.optimizer = _load_optimizer(header["optimizer"], arrays, self.optimizer)


def get_updater(optimizer) -> Updater:
    """An :class:`Updater` for ``optimizer`` (MXNet's ``mx.optimizer.get_updater``)."""
    return Updater(optimizer)


# ---------------------------------------------------------------------- encoding

def _encode(value, arrays: dict):
    """A JSON-able description of ``value``; arrays go into ``arrays`` by name."""
    if value is None or isinstance(value, (bool, str)):
        return value
    if isinstance(value, (int, float)):
        return value
    if isinstance(value, numpy.generic):
        return value.item()
    if isinstance(value, NDArray):
        return _encode_array(value.asnumpy(), arrays,
                             {"t": "nd", "ctx": [value.context.device_type,
                                                 value.context.device_id]})
    if isinstance(value, numpy.ndarray):
        return _encode_array(value, arrays, {"t": "np"})
    if isinstance(value, tuple):
        return {"t": "tuple", "v": [_encode(v, arrays) for v in value]}
    if isinstance(value, list):
        return [_encode(v, arrays) for v in value]
    if isinstance(value, dict):
        return {"t": "dict", "v": [[_encode(k, arrays), _encode(v, arrays)]
                                   for k, v in value.items()]}
    if isinstance(value, Context):
        return {"t": "ctx", "v": [value.device_type, value.device_id]}
    raise TypeError(f"get_states: cannot save a value of type {type(value).__name__}; "
                    "states may hold None, numbers, strings, NDArrays, NumPy arrays, and "
                    "tuples, lists or dicts of these")


def _encode_array(a: numpy.ndarray, arrays: dict, tag: dict) -> dict:
    name = f"a{len(arrays)}"
    tag = dict(tag, k=name, dtype=a.dtype.name)
    if a.dtype == bfloat16:  # .npy has no bfloat16: keep the bits
        a = a.view(numpy.uint16)
    arrays[name] = a
    return tag


def _decode(obj, arrays):
    if isinstance(obj, list):
        return [_decode(v, arrays) for v in obj]
    if not isinstance(obj, dict):
        return obj
    kind = obj.get("t")
    if kind == "tuple":
        return tuple(_decode(v, arrays) for v in obj["v"])
    if kind == "dict":
        return {_hashable(_decode(k, arrays)): _decode(v, arrays) for k, v in obj["v"]}
    if kind == "ctx":
        return Context(obj["v"][0], int(obj["v"][1]))
    if kind in ("nd", "np"):
        a = arrays[obj["k"]]
        if obj["dtype"] == "bfloat16":
            a = a.view(bfloat16)
        elif a.dtype.name != obj["dtype"]:
            raise ValueError(f"set_states: array {obj['k']} has dtype {a.dtype.name}, the "
                             f"header says {obj['dtype']}")
        if kind == "np":
            return a
        return NDArray(a, ctx=_restore_context(obj["ctx"]))
    raise ValueError(f"set_states: unknown entry {kind!r} in the header")


def _hashable(k):
    return tuple(_hashable(x) for x in k) if isinstance(k, list) else k


def _restore_context(ctx) -> Context:
    """The saved context, or cpu(0) when it is a GPU this machine does not have."""
    device_type, device_id = ctx[0], int(ctx[1])
    if device_type == "gpu" and device_id >= num_gpus():
        return Context("cpu", 0)
    return Context(device_type, device_id)


def _read(data):
    if isinstance(data, (bytearray, memoryview)):
        data = bytes(data)
    if not isinstance(data, bytes):
        raise TypeError(f"set_states: expected the bytes get_states returned, got "
                        f"{type(data).__name__}")
    try:
        npz = numpy.load(io.BytesIO(data), allow_pickle=False)
        if not isinstance(npz, numpy.lib.npyio.NpzFile) or "__header__" not in npz.files:
            raise ValueError("no header")
        with npz:
            header = json.loads(npz["__header__"].tobytes().decode("utf-8"))
            arrays = {name: npz[name] for name in npz.files if name != "__header__"}
    except (ValueError, OSError, zipfile.BadZipFile, UnicodeDecodeError) as e:
        raise ValueError("set_states: the data are not optimizer states written by "
                         "Updater.get_states (MXNet's pickled states are not read: "
                         f"unpickling can run arbitrary code) ({e})") from None
    if header.get("format") != _FORMAT:
        raise ValueError(f"set_states: unknown format {header.get('format')!r}")
    if header.get("version", 0) > _VERSION:
        raise ValueError(f"set_states: format version {header['version']} is newer than "
                         f"this reader ({_VERSION})")
    return header, arrays


# ---------------------------------------------------------------------- optimizer dump

def _plain_attrs(obj, arrays, skip=()) -> dict:
    out = {}
    for k, v in vars(obj).items():
        if k in skip or callable(v):
            continue
        try:
            out[k] = _encode(v, arrays)
        except TypeError:
            warnings.warn(f"get_states: attribute {k!r} of {type(obj).__name__} "
                          f"({type(v).__name__}) is not saved", stacklevel=4)
    return out


def _dump_optimizer(opt, arrays) -> dict:
    out = {"class": type(opt).__name__.lower(), "attrs": _plain_attrs(opt, arrays, _SKIP_ATTRS)}
    sched = opt.lr_scheduler
    if sched is not None:
        out["lr_scheduler"] = {"class": type(sched).__name__,
                               "attrs": _plain_attrs(sched, arrays)}
    return out


def _load_optimizer(info, arrays, current):
    from . import lr_scheduler as _lrs
    from .optimizer import Optimizer

    name = info["class"]
    if type(current).__name__.lower() == name:
        opt = current
    else:
        cls = Optimizer.opt_registry.get(name)
        if cls is None:
            raise ValueError(f"set_states: the states were saved with optimizer {name!r}, "
                             "which is not registered")
        opt = cls.__new__(cls)
        opt.param_dict = {}
        opt.lr_scheduler = None
    for k, v in info["attrs"].items():
        setattr(opt, k, _decode(v, arrays))
    counts = opt.__dict__.setdefault("_all_index_update_counts", {0: {}})
    opt._index_update_count = counts.setdefault(getattr(opt, "_current_device_id", 0), {})
    sched_info = info.get("lr_scheduler")
    if sched_info is None:
        opt.lr_scheduler = None
    else:
        sched = opt.lr_scheduler
        if type(sched).__name__ != sched_info["class"]:
            # Only the schedulers of core.optimizer.lr_scheduler are built from a name.
            cls = getattr(_lrs, sched_info["class"], None)
            if isinstance(cls, type) and issubclass(cls, _lrs.LRScheduler):
                sched = cls.__new__(cls)
            else:
                warnings.warn(f"set_states: unknown learning-rate scheduler "
                              f"{sched_info['class']!r}; the optimizer keeps its own",
                              stacklevel=3)
                sched = None
        if sched is not None:
            for k, v in sched_info["attrs"].items():
                setattr(sched, k, _decode(v, arrays))
            opt.lr_scheduler = sched
    return opt
