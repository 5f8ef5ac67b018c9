"""``Monitor``: statistics of a network's arrays every few batches (MXNet's ``mx.monitor``).

``install(executor)`` (``Module.install_monitor`` / ``fit(monitor=...)`` do it) makes
the monitor watch an executor. On the batches where it is active (every
``interval``-th ``tic()``), it records ``stat_func`` of every internal output whose
name matches ``pattern`` (``fc1_output``, ``relu1_output``, ...; with
``monitor_all=True`` also the operators' inputs) and, at ``toc()``, of the matching
arguments and auxiliary states. ``toc()`` returns ``[(step, name, text)]``;
``toc_print()`` logs them.

MXNet gets the internal outputs from a callback inside its executor; here the
executor's graph is run once more over its internals on the active batches, on the
same argument arrays and with copies of the auxiliary states (so moving statistics are
not updated twice). Random operators (Dropout) draw new numbers in that run.

Example:
    >>> import numpy as np
    >>> from core import nd, sym
    >>> from core.monitor import Monitor
    >>> net = sym.Activation(sym.FullyConnected(sym.var("data"), num_hidden=2, name="fc"),
    ...                      act_type="relu", name="relu")
    >>> ex = net.simple_bind(None, data=(3, 4))
    >>> mon = Monitor(1, pattern=".*output")
    >>> mon.install(ex)
    >>> mon.tic(); _ = ex.forward(); [name for _, name, _ in mon.toc()]
    ['fc_output', 'relu_output']
"""
from __future__ import annotations

import logging
import math
import re

from .ndarray import NDArray

__all__ = ["Monitor"]

_LOG = logging.getLogger(__name__)


def _default_stat(x: NDArray) -> NDArray:
    from . import nd
    return nd.norm(x) / math.sqrt(x.size)


class _Watch:
    """One watched executor: its original forward and the internals' executor."""

    def __init__(self, monitor, exe):
        from .symbol import Symbol
        self.exe = exe
        self.monitor = monitor
        graph = exe._graph
        self.symbol = Symbol.from_graph(graph)
        internals = self.symbol.get_internals()
        var_names = set(exe.arg_dict) | set(exe.aux_dict)
        self.internals = internals
        self.names = [n for n in internals.list_outputs() if n not in var_names]
        self.inner = None
        self.forward = exe.forward
        self.backward = exe.backward
        self.is_train = False

        def forward(is_train=False, **kwargs):
            outs = self.forward(is_train=is_train, **kwargs)
            self.is_train = is_train
            if monitor.activated:
                self.record(is_train)
            return outs

        def backward(out_grads=None, is_train=True):
            self.backward(out_grads=out_grads, is_train=is_train)
            if monitor.activated:
                self.record_backward(out_grads)
        exe.forward = forward
        exe.backward = backward

    def record_backward(self, out_grads) -> None:
        """MXNet's ``<node>_backward_output<i>``: each operator's input gradients."""
        from . import autograd, nd
        from .ops.dispatch import invoke
        from .symbol.graph import Entry, resolve_attrs
        mon, graph, exe = self.monitor, self.exe._graph, self.exe
        values = {}
        for k, v in list(exe.arg_dict.items()) + list(exe.aux_dict.items()):
            c = nd.array(v.asnumpy(), ctx=v.context, dtype=v.dtype)
            c.attach_grad()
            values[k] = c
        env, nodes = {}, []
        with autograd.record(train_mode=self.is_train):
            for n in graph.topo():
                if n.is_variable:
                    env[(n.id, 0)] = values[n.name]
                    continue
                if n.is_constant:
                    env[(n.id, 0)] = n.value if isinstance(n.value, NDArray) else \
                        NDArray(n.value, ctx=n.ctx or exe.ctx)
                    continue
                ins = [env[(e.node.id, e.index)] if isinstance(e, Entry) else e
                       for e in n.inputs]
                out = invoke(n.op, ins, resolve_attrs(n.attrs, self.is_train), n.ctx or exe.ctx)
                for i, o in enumerate(out if isinstance(out, tuple) else (out,)):
                    env[(n.id, i)] = o
                nodes.append(n)
        heads = [env[(e.node.id, e.index)] for e in graph.outputs]
        if out_grads is None:
            head_grads = [nd.ones(h.shape, ctx=h.context, dtype=h.dtype) for h in heads]
        else:
            head_grads = [out_grads] if isinstance(out_grads, NDArray) else list(out_grads)
        keys = []
        for n in nodes:
            keys += [(e.node.id, e.index) for e in n.inputs if isinstance(e, Entry)]
        keys = list(dict.fromkeys(keys))
        try:
            grads = dict(zip(keys, autograd.grad(heads, [env[k] for k in keys],
                                                 head_grads=head_grads,
                                                 train_mode=self.is_train)))
        except Exception:  # noqa: BLE001 - statistics are best effort; training goes on
            return
        for n in nodes:
            entries = [e for e in n.inputs if isinstance(e, Entry)]
            for i, e in enumerate(entries):
                name = f"{n.name}_backward_output" + ("" if len(entries) == 1 else str(i))
                g = grads.get((e.node.id, e.index))
                if g is not None and mon.re_prog.match(name):
                    mon.queue.append((mon.step, name, mon.stat_func(g)))

    def record(self, is_train) -> None:
        from . import nd
        mon = self.monitor
        if self.inner is None:
            aux = {k: nd.array(v.asnumpy(), ctx=v.context, dtype=v.dtype)
                   for k, v in self.exe.aux_dict.items()}
            self.inner = self.internals.bind(self.exe.ctx, dict(self.exe.arg_dict),
                                             grad_req="null", aux_states=aux)
        else:
            for k, v in self.exe.aux_dict.items():
                self.inner.aux_dict[k][:] = v
        outs = self.inner.forward(is_train=is_train)
        for name, arr in zip(self.internals.list_outputs(), outs):
            if name not in self.names and not mon.monitor_all:
                continue
            if mon.re_prog.match(name):
                mon.queue.append((mon.step, name, mon.stat_func(arr)))


class Monitor:
    """Collects ``stat_func`` of matching arrays every ``interval`` batches.

    Args:
        interval: be active on every ``interval``-th batch (``tic()`` call).
        stat_func: ``NDArray -> NDArray`` (or a list of them); default
            ``norm(x) / sqrt(x.size)``.
        pattern: a regular expression the names must match (``re.match``).
        sort: sort the results by name.
        monitor_all: also record the operators' inputs (arguments among them).
    """

    def __init__(self, interval: int, stat_func=None, pattern: str = ".*",
                 sort: bool = False, monitor_all: bool = False):
        self.stat_func = stat_func or _default_stat
        self.interval = int(interval)
        if self.interval < 1:
            raise ValueError(f"Monitor: interval must be at least 1, got {interval}")
        self.activated = False
        self.queue: list = []
        self.step = 0
        self.exes: list = []
        self._watches: list = []
        self.re_prog = re.compile(pattern)
        self.sort = sort
        self.monitor_all = monitor_all

    def install(self, exe) -> None:
        """Watch the executor ``exe``."""
        self._watches.append(_Watch(self, exe))
        self.exes.append(exe)

    def tic(self) -> None:
        """Start a batch; the monitor is active on every ``interval``-th one."""
        if self.step % self.interval == 0:
            for exe in self.exes:
                for array in list(exe.arg_dict.values()) + list(exe.aux_dict.values()):
                    array.wait_to_read()
            self.queue = []
            self.activated = True
        self.step += 1

    def toc(self) -> list:
        """End the batch: ``[(step, name, statistic as text)]`` (empty when inactive)."""
        if not self.activated:
            return []
        for exe in self.exes:
            for name, array in list(exe.arg_dict.items()) + list(exe.aux_dict.items()):
                if self.re_prog.match(name):
                    self.queue.append((self.step, name, self.stat_func(array)))
        self.activated = False
        if self.sort:
            self.queue.sort(key=lambda x: x[1])
        res = []
        for n, k, v_list in self.queue:
            if isinstance(v_list, NDArray):
                v_list = [v_list]
            if not isinstance(v_list, list):
                raise TypeError(f"Monitor: stat_func must return an NDArray or a list of "
                                f"them, got {type(v_list).__name__} for {k!r}")
            text = ""
            for v in v_list:
                if v.size == 1:
                    text += str(v.asnumpy().reshape(-1)[0]) + "\t"
                else:
                    text += str(v.asnumpy()) + "\t"
            res.append((n, k, text))
        self.queue = []
        return res

    def toc_print(self) -> None:
        """:meth:`toc`, logged at INFO level in MXNet's format."""
        for n, k, v in self.toc():
            _LOG.info(f"Batch: {n:7d} {k:30s} {v:s}")
