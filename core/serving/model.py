"""One served model: an exported graph, its parameters, its signature and executors.

:func:`load_model` reads ``PREFIX-symbol.json`` and ``PREFIX-EPOCH.params`` (MXNet's
checkpoint layout: ``arg:``/``aux:`` keys, as ``HybridBlock.export`` and
``mx.model.save_checkpoint`` write them), finds the data inputs (the arguments the
parameter file does not hold), their per-sample shapes (:mod:`.signature`) and
dtypes, infers the outputs, and reads labels from ``PREFIX-synset.txt`` or a
``synset.txt`` in the same folder (one label per line) if there is one.

:meth:`ServedModel.run` is thread-safe: each inference thread keeps its own
executors, one per input shape, bound to the shared parameter arrays.

Example:
    >>> import os, tempfile
    >>> import numpy
    >>> from core import nd, sym, model
    >>> from core.serving import load_model
    >>> net = sym.softmax(sym.FullyConnected(sym.var("data"), num_hidden=3, name="fc"),
    ...                   name="prob")
    >>> prefix = os.path.join(tempfile.mkdtemp(), "tiny")
    >>> model.save_checkpoint(prefix, 0, net, {"fc_weight": nd.ones((3, 4)),
    ...                                       "fc_bias": nd.zeros((3,))}, {})
    >>> m = load_model("tiny", prefix)
    >>> [(t.name, t.datatype, t.shape) for t in m.inputs + m.outputs]
    [('data', 'FP32', (-1, 4)), ('prob_output', 'FP32', (-1, 3))]
    >>> m.run({"data": numpy.ones((2, 4), "float32")})["prob_output"].round(3).tolist()
    [[0.333, 0.333, 0.333], [0.333, 0.333, 0.333]]
"""
from __future__ import annotations

import logging
import os
import re
import threading
from collections import OrderedDict
from dataclasses import dataclass

import numpy

from .datatypes import to_datatype, to_dtype
from .errors import InferenceError
from .signature import infer_sample_shapes, read_signature, signature_path

__all__ = ["ServedModel", "TensorSpec", "load_model", "parse_model_spec"]

_LOG = logging.getLogger(__name__)
_EXECUTORS_PER_THREAD = 32  # distinct input shapes kept bound, per inference thread


@dataclass(frozen=True)
class TensorSpec:
    """A tensor of the model's signature: ``shape`` has the batch dimension first as
    -1, and -1 wherever any size fits."""

    name: str
    datatype: str
    shape: tuple

    def metadata(self) -> dict:
        return {"name": self.name, "datatype": self.datatype, "shape": list(self.shape)}


def parse_model_spec(text: str) -> tuple[str, str, int | None]:
    """``"NAME=PREFIX[:EPOCH]"`` -> ``(name, prefix, epoch or None)``.

    Example:
        >>> parse_model_spec("digits=/models/digits:3")
        ('digits', '/models/digits', 3)
        >>> parse_model_spec("digits=models/digits")
        ('digits', 'models/digits', None)
    """
    name, sep, rest = text.partition("=")
    if not sep or not name or not rest:
        raise ValueError(f"--model {text!r}: expected NAME=PREFIX[:EPOCH], e.g. "
                         "digits=/models/digits:0")
    if not re.fullmatch(r"[A-Za-z0-9_.\-]+", name):
        raise ValueError(f"--model {text!r}: the model name {name!r} may hold only letters, "
                         "digits, '_', '.' and '-' (it is part of the URL)")
    prefix, epoch = rest, None
    m = re.fullmatch(r"(.+):(\d+)", rest)
    if m:
        prefix, epoch = m.group(1), int(m.group(2))
    return name, prefix, epoch


def _latest_epoch(prefix: str) -> int:
    folder, base = os.path.split(os.path.abspath(prefix))
    pat = re.compile(re.escape(base) + r"-(\d{4,})\.params$")
    epochs = sorted(int(m.group(1)) for f in (os.listdir(folder) if os.path.isdir(folder)
                                               else []) if (m := pat.match(f)))
    if not epochs:
        raise FileNotFoundError(f"no parameter file {prefix}-NNNN.params (give the epoch "
                                "as NAME=PREFIX:EPOCH)")
    return epochs[-1]


def _read_labels(prefix: str) -> list[str] | None:
    for path in (f"{prefix}-synset.txt", os.path.join(os.path.dirname(prefix), "synset.txt")):
        if os.path.isfile(path):
            with open(path, encoding="utf-8") as f:
                return [line.strip() for line in f if line.strip()]
    return None


def load_model(name: str, prefix: str, epoch: int | None = None,
               input_shapes: dict | None = None, ctx=None) -> ServedModel:
    """Load an exported model for serving.

    Args:
        name: the model's name in URLs (``/v2/models/NAME``).
        prefix: the export prefix (``PREFIX-symbol.json``, ``PREFIX-EPOCH.params``).
        epoch: the parameter file's epoch (default: the highest one present).
        input_shapes: ``{input: per-sample shape}`` overriding the signature file
            and what the parameters tell (see :mod:`.signature`).
        ctx: the context to run on (default: ``cpu()``).

    Returns:
        A :class:`ServedModel`.

    Raises:
        FileNotFoundError: a file is missing. ValueError: the files or shapes do not
        make a servable model (the message names the model and what is missing).
    """
    from .. import serialization, sym
    from ..context import cpu
    from ..model import split_params

    ctx = ctx if ctx is not None else cpu()
    sym_file = f"{prefix}-symbol.json"
    if not os.path.isfile(sym_file):
        raise FileNotFoundError(f"model {name!r}: no symbol file {sym_file!r}")
    symbol = sym.load(sym_file)
    epoch = _latest_epoch(prefix) if epoch is None else int(epoch)
    param_file = f"{prefix}-{epoch:04d}.params"
    if not os.path.isfile(param_file):
        raise FileNotFoundError(f"model {name!r}: no parameter file {param_file!r}")
    saved = serialization.load(param_file, ctx=ctx)
    aux_names = symbol.list_auxiliary_states()
    if isinstance(saved, dict) and saved and all(":" not in k for k in saved):
        aux = {k: v for k, v in saved.items() if k in aux_names}  # Block.save_parameters
        args = {k: v for k, v in saved.items() if k not in aux}
    else:
        args, aux = split_params(saved, param_file)
    missing_aux = [a for a in aux_names if a not in aux]
    if missing_aux:
        raise ValueError(f"model {name!r}: {param_file} lacks the auxiliary state(s) "
                         f"{', '.join(missing_aux)}")
    arg_names = symbol.list_arguments()
    unused = sorted(set(args) - set(arg_names)) + sorted(set(aux) - set(aux_names))
    if unused:
        _LOG.warning("model %r: %s holds %d array(s) the graph does not use: %s", name,
                     param_file, len(unused), ", ".join(unused[:8]))
    args = {k: v for k, v in args.items() if k in arg_names}
    inputs = [a for a in arg_names if a not in args]
    if not inputs:
        raise ValueError(f"model {name!r}: every argument of {sym_file} has a value in "
                         f"{param_file}; there is no data input to serve")
    sig = read_signature(prefix) or {}
    given = dict(input_shapes or {})
    unknown = sorted(set(given) - set(inputs))
    if unknown:
        raise ValueError(f"model {name!r}: --input-shape names {', '.join(unknown)}, but the "
                         f"model's inputs are {', '.join(inputs)}")
    guessed = infer_sample_shapes(symbol, inputs, {k: v.shape for k, v in args.items()})
    shapes, dtypes = {}, {}
    for i in inputs:
        shape = given.get(i) or (sig[i][0] if i in sig else None) or guessed.get(i)
        if shape is None:
            hint = " (is the parameter file complete?)" if re.search(
                r"_(weight|bias|gamma|beta)$", i) else ""
            raise ValueError(f"model {name!r}: cannot tell the per-sample shape of input "
                             f"{i!r}{hint}; give --input-shape {name}/{i}=D1,D2,... or "
                             f"write {signature_path(prefix)} (core.serving.write_signature)")
        shapes[i] = tuple(int(d) for d in shape)
        if i in sig and sig[i][1]:
            dtypes[i] = to_dtype(sig[i][1])
    param_types = {k: v.dtype for k, v in list(args.items()) + list(aux.items())}
    arg_types, _, _ = symbol.infer_type_partial(**param_types, **dtypes)
    for i in inputs:
        t = arg_types[arg_names.index(i)]
        dtypes.setdefault(i, numpy.dtype(t) if t is not None else numpy.dtype(numpy.float32))
    return ServedModel(name, symbol, args, aux, shapes, dtypes, labels=_read_labels(prefix),
                       ctx=ctx)


class ServedModel:
    """A loaded model: metadata, request checks and a thread-safe ``run``.

    Args:
        name: the model's name.
        symbol: the network (``core.sym.Symbol``).
        arg_params, aux_params: ``{name: NDArray}`` of the parameters and auxiliary states.
        sample_shapes: ``{input: per-sample shape}`` (-1 for any size).
        input_dtypes: ``{input: numpy dtype}``.
        labels: class labels (the classification extension), or None.
        ctx: the context it runs on.
        version: the model's one version (``"1"``).
    """

    platform = "kbackend_mxnet_symbol"

    def __init__(self, name: str, symbol, arg_params: dict, aux_params: dict,
                 sample_shapes: dict, input_dtypes: dict, labels=None, ctx=None,
                 version: str = "1"):
        from ..context import cpu

        self.name, self.symbol, self.version = name, symbol, str(version)
        self.ctx = ctx if ctx is not None else cpu()
        self.arg_params, self.aux_params = arg_params, aux_params
        self.labels = labels
        self.inputs = [TensorSpec(n, to_datatype(input_dtypes[n]), (-1, *sample_shapes[n]))
                       for n in sample_shapes]
        self.input_dtypes = {n: numpy.dtype(d) for n, d in input_dtypes.items()}
        self.batchable = True  # cleared if a batched run's outputs do not split by sample
        self.outputs = self._infer_outputs()
        self._local = threading.local()

    def _param_shapes(self) -> dict:
        return {k: v.shape for k, v in list(self.arg_params.items()) +
                list(self.aux_params.items())}

    def _probe(self, batch: int, size: int):
        """Output shapes for inputs of ``batch`` samples with every free dim ``size``."""
        shapes = {t.name: (batch, *(size if d == -1 else d for d in t.shape[1:]))
                  for t in self.inputs}
        try:
            _, outs, _ = self.symbol.infer_shape(**shapes, **self._param_shapes())
        except Exception:  # noqa: BLE001 - this size does not fit; another may
            return None
        return outs

    def _infer_outputs(self) -> list[TensorSpec]:
        """Output specs from shape inference on probe inputs: batch sizes 1 and 2 and,
        for free input dims, several sizes; a dim that differs between probes is -1."""
        free = any(-1 in t.shape[1:] for t in self.inputs)
        sizes = (1, 2, 3, 4, 5, 6, 7, 8, 16, 28, 32, 64, 224) if free else (1,)
        probes, per_sample = [], True
        for b in (1, 2):
            for s in sizes:
                outs = self._probe(b, s)
                if outs is not None:
                    probes.append(outs)
                    per_sample &= all(len(o) > 0 and o[0] == b for o in outs)
        if not probes:
            got = ", ".join(f"{t.name} {list(t.shape)}" for t in self.inputs)
            why = "" if free else f": {self._probe_error()}"
            raise ValueError(f"model {self.name!r}: the inputs {got} do not fit the "
                             f"network{why}")
        types = {t.name: self.input_dtypes[t.name] for t in self.inputs}
        types.update({k: v.dtype for k, v in list(self.arg_params.items()) +
                      list(self.aux_params.items())})
        _, out_types, _ = self.symbol.infer_type(**types)
        specs = []
        for k, (name, dtype) in enumerate(zip(self.symbol.list_outputs(), out_types)):
            shapes = [p[k] for p in probes]
            if len({len(s) for s in shapes}) != 1 or not shapes[0]:
                dims = (-1,)
            else:
                first = shapes[0]
                dims = tuple(d if all(x[i] == d for x in shapes) else -1
                             for i, d in enumerate(first))
            specs.append(TensorSpec(name, to_datatype(dtype), (-1, *dims[1:])))
        self.batchable = per_sample  # outputs with the batch first split back by request
        return specs

    def _probe_error(self) -> str:
        shapes = {t.name: (1, *t.shape[1:]) for t in self.inputs}
        try:
            self.symbol.infer_shape(**shapes, **self._param_shapes())
        except Exception as e:  # noqa: BLE001 - reported as the reason
            return str(e)
        return "shape inference leaves some shapes unknown"

    # ------------------------------------------------------------------ metadata
    def metadata(self) -> dict:
        """The protocol's model metadata: name, versions, platform, inputs, outputs."""
        return {"name": self.name, "versions": [self.version], "platform": self.platform,
                "inputs": [t.metadata() for t in self.inputs],
                "outputs": [t.metadata() for t in self.outputs]}

    def triton_config(self, max_batch_size: int, max_latency_ms: float) -> dict:
        """The model as Triton's model configuration (``GET .../config``, which Triton's
        clients and perf_analyzer read): dims without the batch dimension when the model
        batches, datatypes as ``TYPE_FP32``, ...."""
        batching = self.batchable and max_batch_size > 1

        def dims(t):
            return [int(d) for d in (t.shape[1:] if batching else t.shape)]

        def tensors(specs):
            return [{"name": t.name, "data_type": "TYPE_" + ("STRING" if t.datatype == "BYTES"
                                                             else t.datatype),
                     "dims": dims(t)} for t in specs]

        doc = {"name": self.name, "platform": self.platform, "backend": "kbackend",
               "max_batch_size": int(max_batch_size) if batching else 0,
               "input": tensors(self.inputs), "output": tensors(self.outputs)}
        if batching:
            doc["dynamic_batching"] = {
                "max_queue_delay_microseconds": round(max_latency_ms * 1000)}
        return doc

    def output_spec(self, name: str) -> TensorSpec:
        for t in self.outputs:
            if t.name == name:
                return t
        raise InferenceError(400, f"model {self.name!r} has no output {name!r}; its outputs "
                                  f"are {', '.join(t.name for t in self.outputs)}")

    # ------------------------------------------------------------------ checks
    def check_inputs(self, tensors: dict) -> int:
        """Check request tensors against the signature; returns the batch size.

        Args:
            tensors: ``{input name: (datatype, numpy array)}``.

        Raises:
            InferenceError: 400 naming the model, the input, and the expected and
            received shape or datatype.
        """
        expected = {t.name: t for t in self.inputs}
        extra = sorted(set(tensors) - set(expected))
        if extra:
            raise InferenceError(400, f"model {self.name!r} has no input {extra[0]!r}; its "
                                      f"inputs are {', '.join(expected)}")
        missing = [n for n in expected if n not in tensors]
        if missing:
            raise InferenceError(400, f"model {self.name!r}: input {missing[0]!r} is missing "
                                      f"(expected shape {list(expected[missing[0]].shape)}, "
                                      f"datatype {expected[missing[0]].datatype})")
        batch = None
        for n, spec in expected.items():
            datatype, arr = tensors[n]
            if datatype != spec.datatype:
                raise InferenceError(400, f"model {self.name!r}, input {n!r}: expected "
                                          f"datatype {spec.datatype}, got {datatype}")
            shape = arr.shape
            ok = len(shape) == len(spec.shape) and shape[0] > 0 and all(
                e == -1 or e == s for e, s in zip(spec.shape[1:], shape[1:]))
            if not ok:
                raise InferenceError(400, f"model {self.name!r}, input {n!r}: expected shape "
                                          f"{list(spec.shape)} (batch first), got "
                                          f"{list(shape)}")
            if batch is not None and shape[0] != batch:
                raise InferenceError(400, f"model {self.name!r}: the inputs' batch sizes "
                                          f"differ ({n!r} has {shape[0]}, others {batch})")
            batch = shape[0]
        if any(-1 in t.shape[1:] for t in self.inputs):
            self._check_graph({n: a.shape for n, (_, a) in tensors.items()})
        return int(batch)

    def _check_graph(self, shapes: dict) -> None:
        """Shape inference on inputs whose free dimensions the request chose."""
        try:
            _, outs, _ = self.symbol.infer_shape(**shapes, **self._param_shapes())
        except Exception as e:  # noqa: BLE001 - any operator's inference error
            outs, why = None, f": {e}"
        else:
            why = ""
        if outs is None:
            got = ", ".join(f"{n} {list(s)}" for n, s in shapes.items())
            raise InferenceError(400, f"model {self.name!r}: the input shape(s) {got} do not "
                                      f"fit the network{why}")

    # ------------------------------------------------------------------ running
    def run(self, arrays: dict) -> dict:
        """Run one (batched) forward pass in inference mode.

        Args:
            arrays: ``{input name: numpy array}`` with the batch dimension first.

        Returns:
            ``{output name: numpy array}``.
        """
        key = tuple((n, arrays[n].shape, arrays[n].dtype.str) for n in sorted(arrays))
        cache = getattr(self._local, "executors", None)
        if cache is None:
            cache = self._local.executors = OrderedDict()
        ex = cache.get(key)
        if ex is None:
            ex = self._bind(arrays)
            cache[key] = ex
            while len(cache) > _EXECUTORS_PER_THREAD:
                cache.popitem(last=False)
        else:
            cache.move_to_end(key)
        outs = ex.forward(is_train=False, **arrays)
        return {t.name: numpy.array(o.asnumpy(), copy=True) for t, o in zip(self.outputs, outs)}

    def _bind(self, arrays: dict):
        from .. import nd

        data = {n: nd.array(a, ctx=self.ctx, dtype=a.dtype) for n, a in arrays.items()}
        aux = {k: v.copy() for k, v in self.aux_params.items()}
        return self.symbol.bind(self.ctx, {**self.arg_params, **data}, grad_req="null",
                                aux_states=aux)

    def warmup(self) -> bool:
        """Run one sample of zeros through the model (compiles the kernels) if every
        input's shape is fixed; returns whether it ran."""
        if any(-1 in t.shape[1:] for t in self.inputs):
            return False
        self.run({t.name: numpy.zeros((1, *t.shape[1:]), self.input_dtypes[t.name])
                  for t in self.inputs})
        return True
