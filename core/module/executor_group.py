"""Data parallelism for the Module API (MXNet's ``DataParallelExecutorGroup``).

One executor per context, each bound to its slice of the batch (sizes proportional to
the work load list); parameters are replicated, one copy per executor. ``forward``
copies each input's slice into its executor, ``get_outputs`` joins the executors'
outputs along the batch axis, ``update_metric`` feeds each executor's outputs with
its labels' slice. Executors are re-bound when the batch shapes change, and can share
their parameter and gradient arrays with another group (``BucketingModule``).
"""
from __future__ import annotations

import logging
from collections import OrderedDict

import numpy

from ..io.base import DataDesc, as_data_desc
from ..ndarray import NDArray

__all__ = ["DataParallelExecutorGroup", "merge_outputs", "split_input_slice"]


def split_input_slice(batch_size: int, work_load_list) -> list:
    """Slices of ``range(batch_size)``, one per device, sized by ``work_load_list``.

    As MXNet's ``_split_input_slice``: shares are rounded (half to even), the last
    device takes the remainder.

    Example:
        >>> split_input_slice(10, [1, 1, 2])
        [slice(0, 2, None), slice(2, 4, None), slice(4, 10, None)]
    """
    total = float(sum(work_load_list))
    batch_num_list = [round(w * batch_size / total) for w in work_load_list]
    batch_num_list[-1] += batch_size - sum(batch_num_list)
    slices, end = [], 0
    for num in batch_num_list:
        begin = int(min(end, batch_size))
        end = int(min(begin + num, batch_size))
        if begin >= end:
            raise ValueError(f"split_input_slice: batch_size={batch_size} is too small for "
                             f"{len(work_load_list)} devices (work loads {work_load_list})")
        slices.append(slice(begin, end))
    return slices


def _take(arr: NDArray, sl: slice, axis: int) -> NDArray:
    if sl.start == 0 and sl.stop == arr.shape[axis]:
        return arr
    if axis == 0:
        return arr[sl.start:sl.stop]
    return arr.slice_axis(axis=axis, begin=sl.start, end=sl.stop)


def copy_into(src, dst: NDArray, what: str) -> None:
    """Copy ``src`` (NDArray or array-like) into ``dst`` in place, across contexts."""
    if isinstance(src, NDArray):
        if tuple(src.shape) != tuple(dst.shape):
            raise ValueError(f"{what}: got shape {tuple(src.shape)}, the bound shape is "
                             f"{tuple(dst.shape)}")
        if src.context != dst.context:
            src = src.as_in_context(dst.context)
        if src.dtype != dst.dtype:
            src = src.astype(dst.dtype)
        dst[:] = src
    else:
        arr = numpy.asarray(src)
        if arr.shape != tuple(dst.shape):
            raise ValueError(f"{what}: got shape {arr.shape}, the bound shape is "
                             f"{tuple(dst.shape)}")
        dst[:] = arr.astype(dst.dtype)


def merge_outputs(outputs, major_axis) -> list:
    """Each output's per-device arrays joined along its batch axis (on the first device)."""
    from .. import nd
    rets = []
    for tensors, axis in zip(outputs, major_axis):
        if axis >= 0 and len(tensors) > 1:
            first = tensors[0].context
            rets.append(nd.concat(*[t.as_in_context(first) for t in tensors], dim=axis))
        else:
            rets.append(tensors[0])
    return rets


def prepare_group2ctxs(group2ctxs, n_ctx: int) -> list:
    """Per context ``{ctx_group: context}`` from MXNet's ``group2ctxs`` forms."""
    from ..context import Context
    if group2ctxs is None:
        return [{} for _ in range(n_ctx)]
    if isinstance(group2ctxs, (list, tuple)):
        if len(group2ctxs) != n_ctx:
            raise ValueError(f"Module: group2ctxs has {len(group2ctxs)} entries for {n_ctx} "
                             "contexts")
        return [dict(g) for g in group2ctxs]
    if not isinstance(group2ctxs, dict):
        raise TypeError("Module: group2ctxs must be a dict {group: context or list of "
                        "contexts} or a list of such dicts, got "
                        f"{type(group2ctxs).__name__}")
    out = [{} for _ in range(n_ctx)]
    for group, v in group2ctxs.items():
        if isinstance(v, Context):
            v = [v] * n_ctx
        elif len(v) == 1:
            v = list(v) * n_ctx
        elif len(v) != n_ctx:
            raise ValueError(f"Module: group2ctxs[{group!r}] has {len(v)} contexts; give 1 or "
                             f"{n_ctx}")
        for i in range(n_ctx):
            out[i][group] = v[i]
    return out


class DataParallelExecutorGroup:
    """The executors of one Module, one per context (see the module docstring).

    Args:
        symbol: the network.
        contexts: list of contexts.
        workload: relative batch share of each context.
        data_shapes: ``DataDesc`` list of the data inputs.
        label_shapes: ``DataDesc`` list of the labels (or None).
        param_names: the arguments that are parameters.
        for_training: bind for training (gradients allocated).
        inputs_need_grad: also compute gradients of the data inputs.
        shared_group: a group whose parameter (and gradient) arrays are reused.
        logger: the logger.
        fixed_param_names: parameters that get no gradient.
        grad_req: ``'write'``, ``'add'``, ``'null'``, or a list/dict per argument.
        state_names: arguments that are states (kept, not updated).
        group2ctxs: ``{ctx_group: context}`` (or per-context list of them): the arguments
            of a variable in that ``ctx_group`` (``AttrScope(ctx_group=...)``) and their
            gradients live on that context; the operators run on the executor's context
            (on CPU contexts, which share host memory; other devices are ignored).
    """

    def __init__(self, symbol, contexts, workload, data_shapes, label_shapes, param_names,
                 for_training, inputs_need_grad, shared_group=None, logger=logging,
                 fixed_param_names=None, grad_req="write", state_names=None,
                 group2ctxs=None):
        self.arg_names = symbol.list_arguments()
        self.param_names = [n for n in self.arg_names if n in set(param_names)]
        self.aux_names = symbol.list_auxiliary_states()
        self.symbol = symbol
        self.contexts = list(contexts)
        self.workload = list(workload)
        self.for_training = for_training
        self.inputs_need_grad = inputs_need_grad
        self.logger = logger
        self.fixed_param_names = list(fixed_param_names or [])
        self.state_names = list(state_names or [])
        self.shared_group = shared_group
        self.group2ctxs = prepare_group2ctxs(group2ctxs, len(self.contexts))
        data_shapes = [as_data_desc(x) for x in data_shapes]
        label_shapes = None if label_shapes is None else \
            [as_data_desc(x, "label_shapes") for x in label_shapes]
        self.grad_req = self._grad_reqs(grad_req if for_training else "null",
                                        [d.name for d in data_shapes])
        self.batch_size = None
        self.slices = None
        self.execs: list = []
        self.output_names = symbol.list_outputs()
        self.num_outputs = len(self.output_names)
        # each output's batch axis, from its node's __layout__ attribute (MXNet's rule)
        self.output_layouts = [DataDesc.get_batch_axis(symbol[i].attr("__layout__"))
                               for i in range(self.num_outputs)]
        self.data_shapes = self.label_shapes = None
        # per context, {name: array} of the arguments that are not parameters (data,
        # labels, states, ...): a group bound with shared_group shares the dicts, and an
        # argument of the same name, shape and dtype shares the array (MXNet's buffer)
        self.shared_data_arrays = shared_group.shared_data_arrays if shared_group is not None \
            else [{} for _ in self.contexts]
        self.bind_exec(data_shapes, label_shapes)

    def _grad_reqs(self, grad_req, data_names) -> dict:
        def default(k, req):
            if k in self.param_names:
                return "null" if k in self.fixed_param_names else req
            if k in data_names:
                return req if self.inputs_need_grad else "null"
            return "null"
        if isinstance(grad_req, str):
            return {k: default(k, grad_req) for k in self.arg_names}
        if isinstance(grad_req, (list, tuple)):
            if len(grad_req) != len(self.arg_names):
                raise ValueError(f"Module.bind: grad_req has {len(grad_req)} entries for "
                                 f"{len(self.arg_names)} arguments {self.arg_names}")
            return dict(zip(self.arg_names, grad_req))
        if isinstance(grad_req, dict):
            reqs = {k: default(k, "write") for k in self.arg_names}
            reqs.update(grad_req)
            return reqs
        raise ValueError(f"Module.bind: grad_req must be a str, list, tuple or dict, got "
                         f"{type(grad_req).__name__}")

    # ------------------------------------------------------------------ binding
    def _decide_slices(self, shapes) -> list:
        axes = [DataDesc.get_batch_axis(getattr(d, "layout", None)) for d in shapes]
        for d, axis in zip(shapes, axes):
            if axis == -1:
                continue
            if axis >= len(d.shape):
                raise ValueError(f"Module.bind: {d.name!r} of shape {d.shape} has no batch "
                                 f"axis {axis} (layout {d.layout!r})")
            size = d.shape[axis]
            if self.batch_size is None:
                self.batch_size = size
                self.slices = split_input_slice(size, self.workload)
            elif size != self.batch_size:
                raise ValueError(f"Module.bind: all inputs need the same batch size; "
                                 f"batch_size={self.batch_size}, but {d.name!r} has shape "
                                 f"{d.shape}")
        return axes

    def _sliced(self, shapes, i, axes) -> list:
        out = []
        for d, axis in zip(shapes, axes):
            shape = list(d.shape)
            if axis >= 0:
                shape[axis] = self.slices[i].stop - self.slices[i].start
            out.append(DataDesc(d.name, tuple(shape), d.dtype, d.layout))
        return out

    def _bind_ith(self, i, data_shapes, label_shapes):
        from .. import nd
        ctx = self.contexts[i]
        shapes = {d.name: d.shape for d in data_shapes + label_shapes}
        types = {d.name: d.dtype for d in data_shapes + label_shapes}
        unknown = [n for n in shapes if n not in self.arg_names]
        if unknown:
            raise ValueError(f"Module.bind: input(s) {unknown} are not arguments of the "
                             f"symbol; its arguments are {self.arg_names}")
        try:
            arg_shapes, out_shapes, aux_shapes = self.symbol.infer_shape(**shapes)
            arg_types, _, aux_types = self.symbol.infer_type(**types)
        except Exception as e:
            raise ValueError(f"Module.bind: cannot infer the shapes of the symbol's "
                             f"arguments from {shapes}: {e}") from e
        if arg_shapes is None or any(s is None for s in arg_shapes):
            raise ValueError(f"Module.bind: the shapes {shapes} do not determine every "
                             f"argument's shape ({dict(zip(self.arg_names, arg_shapes or []))})")
        self._out_shapes = out_shapes
        shared = self.shared_group.execs[i] if self.shared_group is not None else None
        prev = self.execs[i] if i < len(self.execs) else None
        args, grads = {}, {}
        attrs = self.symbol.attr_dict()
        for name, shape, dtype in zip(self.arg_names, arg_shapes, arg_types):
            dtype = dtype or numpy.float32
            where = self.group2ctxs[i].get(attrs.get(name, {}).get("__ctx_group__"), ctx)
            if where.xp is not ctx.xp:
                where = ctx  # only host-memory contexts can hold another's arrays
            src = None
            for ex in (prev, shared):
                if ex is not None and name in self.param_names and name in ex.arg_dict \
                        and tuple(ex.arg_dict[name].shape) == tuple(shape):
                    src = ex
                    break
            if src is not None:
                args[name] = src.arg_dict[name]
                if name in src.grad_dict:
                    grads[name] = src.grad_dict[name]
            elif name not in self.param_names:
                args[name] = self._shared_input(i, name, shape, dtype, where)
            else:
                args[name] = nd.zeros(shape, ctx=where, dtype=dtype)
            if self.grad_req.get(name, "null") != "null" and name not in grads:
                grads[name] = nd.zeros(shape, ctx=where, dtype=dtype)
        aux = {}
        for name, shape, dtype in zip(self.aux_names, aux_shapes, aux_types):
            src = None
            for ex in (prev, shared):
                if ex is not None and name in ex.aux_dict and \
                        tuple(ex.aux_dict[name].shape) == tuple(shape):
                    src = ex
                    break
            aux[name] = src.aux_dict[name] if src is not None else \
                nd.zeros(shape, ctx=ctx, dtype=dtype or numpy.float32)
        return self.symbol.bind(ctx, args, args_grad=grads or None, grad_req=self.grad_req,
                                aux_states=aux)

    def _shared_input(self, i, name, shape, dtype, ctx):
        """The array of non-parameter argument ``name`` on context ``i``: the shared
        one when it fits, else a new one that replaces it in ``shared_data_arrays``."""
        from .. import nd
        buf = self.shared_data_arrays[i]
        have = buf.get(name)
        if have is not None and tuple(have.shape) == tuple(shape) and \
                numpy.dtype(have.dtype) == numpy.dtype(dtype) and have.context == ctx:
            return have
        buf[name] = nd.zeros(shape, ctx=ctx, dtype=dtype)
        return buf[name]

    def bind_exec(self, data_shapes, label_shapes, reshape: bool = False) -> None:
        """(Re-)bind one executor per context for these batch shapes."""
        self.batch_size = None
        self.data_layouts = self._decide_slices(data_shapes)
        self.label_layouts = self._decide_slices(label_shapes) if label_shapes else []
        if self.batch_size is None:
            raise ValueError("Module.bind: no input has a batch axis")
        execs = []
        for i in range(len(self.contexts)):
            d_i = self._sliced(data_shapes, i, self.data_layouts)
            l_i = self._sliced(label_shapes, i, self.label_layouts) if label_shapes else []
            execs.append(self._bind_ith(i, d_i, l_i))
        self.execs = execs
        self.data_shapes, self.label_shapes = list(data_shapes), \
            (list(label_shapes) if label_shapes is not None else None)
        self.data_names = [d.name for d in self.data_shapes]
        self.label_names = [d.name for d in self.label_shapes] if self.label_shapes else []
        self._collect_arrays()

    def reshape(self, data_shapes, label_shapes) -> None:
        """Re-bind for new batch shapes, keeping the parameter arrays."""
        if data_shapes == self.data_shapes and label_shapes == self.label_shapes:
            return
        self.bind_exec(data_shapes, label_shapes, reshape=True)

    def _collect_arrays(self) -> None:
        ex = self.execs
        self.data_arrays = [[(self.slices[i], e.arg_dict[d.name]) for i, e in enumerate(ex)]
                            for d in self.data_shapes]
        self.label_arrays = None if not self.label_shapes else \
            [[(self.slices[i], e.arg_dict[d.name]) for i, e in enumerate(ex)]
             for d in self.label_shapes]
        self.state_arrays = [[e.arg_dict[n] for e in ex] for n in self.state_names]
        self.param_arrays = [[e.arg_dict[n] for e in ex] for n in self.arg_names
                             if n in self.param_names]
        self.grad_arrays = [[e.grad_dict.get(n) for e in ex] for n in self.arg_names
                            if n in self.param_names] if self.for_training else None
        self.input_grad_arrays = [[e.grad_dict.get(n) for e in ex] for n in self.data_names
                                  if n in self.arg_names] if self.inputs_need_grad else None
        self.aux_arrays = [[e.aux_dict[n] for e in ex] for n in self.aux_names]

    # ------------------------------------------------------------------ parameters
    def set_params(self, arg_params, aux_params, allow_extra: bool = False) -> None:
        """Copy ``arg_params``/``aux_params`` into every executor."""
        for e in self.execs:
            for params, target, kind in ((arg_params, e.arg_dict, "arg"),
                                         (aux_params or {}, e.aux_dict, "aux")):
                for name, value in params.items():
                    if name in target:
                        copy_into(value, target[name], f"set_params: {kind} {name!r}")
                    elif not allow_extra:
                        raise ValueError(f"set_params: {kind} parameter {name!r} is not in "
                                         f"the symbol (use allow_extra=True to skip it)")

    def get_params(self, arg_params: dict, aux_params: dict) -> None:
        """Write the devices' average of each parameter into ``arg_params``/``aux_params``."""
        for names, blocks, out in ((self.param_names, self.param_arrays, arg_params),
                                   (self.aux_names, self.aux_arrays, aux_params)):
            for name, block in zip(names, blocks):
                if len(block) == 1:
                    copy_into(block[0], out[name], f"get_params: {name!r}")
                    continue
                avg = sum(w.asnumpy().astype(numpy.float64) for w in block) / len(block)
                copy_into(avg, out[name], f"get_params: {name!r}")

    # ------------------------------------------------------------------ running
    def _load(self, arrays, targets, layouts, what) -> None:
        for src, dsts, axis in zip(arrays, targets, layouts):
            for sl, dst in dsts:
                part = _take(src, sl, axis) if (axis >= 0 and isinstance(src, NDArray)) \
                    else src
                if not isinstance(part, NDArray):
                    part = numpy.asarray(part)
                    part = part[(slice(None),) * axis + (sl,)] if axis >= 0 else part
                copy_into(part, dst, f"Module.forward: {what}")

    def _load_presliced(self, batches) -> None:
        if len(batches) != len(self.execs):
            raise ValueError(f"Module.forward: got {len(batches)} pre-sliced batches for "
                             f"{len(self.execs)} contexts")
        for k, b in enumerate(batches):
            for j, dsts in enumerate(self.data_arrays):
                copy_into(b.data[j], dsts[k][1], f"Module.forward: data {self.data_names[j]!r}")
            if self.label_arrays is not None and b.label:
                for j, dsts in enumerate(self.label_arrays):
                    copy_into(b.label[j], dsts[k][1],
                              f"Module.forward: label {self.label_names[j]!r}")

    def forward(self, data_batch, is_train=None) -> None:
        """Load the batch's slices into the executors and run their forward passes.

        ``data_batch`` is a ``DataBatch`` (split over the contexts), or a list of them,
        one per context, already sliced (MXNet's pre-sliced form).
        """
        if is_train is None:
            is_train = self.for_training
        if isinstance(data_batch, list):  # (a namedtuple batch is one batch)
            self._load_presliced(data_batch)
            for e in self.execs:
                e.forward(is_train=is_train)
            return
        if len(data_batch.data) != len(self.data_arrays):
            raise ValueError(f"Module.forward: the batch has {len(data_batch.data)} data "
                             f"arrays, the module was bound with {self.data_names}")
        self._load(data_batch.data, self.data_arrays, self.data_layouts, "data")
        if self.label_arrays is not None and data_batch.label:
            self._load(data_batch.label, self.label_arrays, self.label_layouts, "label")
        for e in self.execs:
            e.forward(is_train=is_train)

    def get_output_shapes(self) -> list:
        """``[(name, shape)]`` of the joined outputs."""
        out = []
        for name, shape, axis in zip(self.output_names, self._out_shapes, self.output_layouts):
            shape = list(shape)
            if axis >= 0 and shape:
                shape[axis] = self.batch_size
            out.append((name, tuple(shape)))
        return out

    def get_outputs(self, merge_multi_context: bool = True, begin: int = 0, end=None) -> list:
        """The outputs, joined over the devices (or per device)."""
        end = self.num_outputs if end is None else end
        if not self.execs[0].outputs:
            raise RuntimeError("Module.get_outputs: call forward() first")
        outputs = [[e.outputs[i] for e in self.execs] for i in range(begin, end)]
        if merge_multi_context:
            outputs = merge_outputs(outputs, self.output_layouts[begin:end])
        return outputs

    def get_input_grads(self, merge_multi_context: bool = True) -> list:
        """The data inputs' gradients (bind with ``inputs_need_grad=True``)."""
        if not self.inputs_need_grad:
            raise RuntimeError("Module.get_input_grads: bind with inputs_need_grad=True")
        if merge_multi_context:
            return merge_outputs(self.input_grad_arrays, self.data_layouts)
        return self.input_grad_arrays

    def get_states(self, merge_multi_context: bool = True) -> list:
        """The state arrays per device (``merge_multi_context`` must be False)."""
        if merge_multi_context:
            raise ValueError("get_states: merge_multi_context=True is not supported")
        return self.state_arrays

    def set_states(self, states=None, value=None) -> None:
        """Set the states from per-device arrays, or all to ``value``."""
        if (states is None) == (value is None):
            raise ValueError("set_states: give exactly one of states and value")
        for i, dsts in enumerate(self.state_arrays):
            for k, dst in enumerate(dsts):
                if states is not None:
                    copy_into(states[i][k], dst, f"set_states: {self.state_names[i]!r}")
                else:
                    dst[:] = value

    def backward(self, out_grads=None) -> None:
        """Run the backward passes (``out_grads`` sliced per device)."""
        if not self.for_training:
            raise RuntimeError("Module.backward: re-bind with for_training=True")
        if isinstance(out_grads, NDArray):
            out_grads = [out_grads]
        if all(r == "null" for r in self.grad_req.values()):
            return  # nothing to differentiate (e.g. a network without parameters)
        for i, (e, sl) in enumerate(zip(self.execs, self.slices)):
            if out_grads is None:
                e.backward()
                continue
            grads = []
            for g, axis in zip(out_grads, self.output_layouts):
                part = _take(g, sl, axis) if axis >= 0 else g
                grads.append(part.as_in_context(self.contexts[i]))
            e.backward(out_grads=grads)

    def update_metric(self, eval_metric, labels, pre_sliced: bool = False) -> None:
        """Update ``eval_metric`` with each device's outputs and its labels' slice."""
        labels = labels or []
        for k, (e, sl) in enumerate(zip(self.execs, self.slices)):
            if pre_sliced:
                part = labels[k]
            else:
                part = [_take(lab, sl, axis) if axis >= 0 else lab
                        for lab, axis in zip(labels, self.label_layouts or [0] * len(labels))]
            names = self.label_names or [f"label{j}" for j in range(len(part))]
            eval_metric.update_dict(OrderedDict(zip(names, part)),
                                    OrderedDict(zip(self.output_names, e.outputs)))

    def install_monitor(self, mon) -> None:
        """Install a :class:`core.monitor.Monitor` on every executor."""
        for e in self.execs:
            mon.install(e)
