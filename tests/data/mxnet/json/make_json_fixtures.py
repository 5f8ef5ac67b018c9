"""Write the symbol-JSON fixtures with real MXNet 1.9.1 (run once; the files are committed).

Run with real MXNet's own Python (``bash tests/mxnet_venv.sh`` builds it)::

    ~/.cache/kbackend/mxnet-1.9.1/bin/python tests/data/mxnet/json/make_json_fixtures.py

It writes, next to itself:

- ``composed-symbol.json``: a graph composed with ``mx.sym`` (three heads; variables with
  ``__shape__``, ``__dtype__``, ``__lr_mult__``, ``__wd_mult__``, ``__init__``,
  ``__layout__`` and an ``AttrScope`` ``ctx_group``), ``composed-0000.params`` (its
  arguments and auxiliary states, ``arg:``/``aux:``), ``composed-input.npy`` and
  ``composed-output{0,1,2}.npy`` (MXNet's inference outputs);
- ``gluon-symbol.json``/``gluon-0000.params``: a Gluon ``export`` of a small conv net,
  ``gluon-input.npy``/``gluon-output.npy``;
- ``gluon_rnn-*``: a Gluon export of LSTM and NTC GRU layers called without states
  (``_rnn_param_concat``, begin states as ``_zeros`` of batch size 0), and ``gluon_misc-*``
  (``SoftmaxActivation`` in both modes, ``split``, ``where``, ``norm``), with their
  ``-input0.npy`` and ``-output{i}.npy``;
- ``save_000800.json``: MXNet's own legacy (0.8.0) file from its unit tests, and
  ``save_000800-expected.json``: what MXNet 1.9.1 makes of it (arguments, auxiliary
  states, outputs, hidden attributes) beside the symbol that file was saved from
  (``test_load_000800``), with ``save_000800-{input,output}.npy`` and its parameters
  ``save_000800-0000.params``.
"""
import json
import os
import shutil

import mxnet as mx
import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
MXNET_SRC = os.environ.get("MXNET_SRC", "/work/mxnet_src")


def _params(sym, shapes, seed):
    rs = np.random.RandomState(seed)
    arg_shapes, _, aux_shapes = sym.infer_shape(**shapes)
    args = {n: mx.nd.array(rs.uniform(-1, 1, s).astype("float32"))
            for n, s in zip(sym.list_arguments(), arg_shapes) if n not in shapes}
    aux = {n: mx.nd.array(rs.uniform(0.5, 1.5, s).astype("float32"))
           for n, s in zip(sym.list_auxiliary_states(), aux_shapes)}
    return args, aux


def _run(sym, args, aux, inputs):
    exe = sym.bind(mx.cpu(), {**args, **inputs}, aux_states=aux, grad_req="null")
    return [o.asnumpy() for o in exe.forward(is_train=False)]


def _save_params(path, args, aux):
    mx.nd.save(path, {**{"arg:" + k: v for k, v in args.items()},
                      **{"aux:" + k: v for k, v in aux.items()}})


def composed():
    data = mx.sym.var("data", shape=(2, 3, 6, 6), dtype="float32", lr_mult=0.5,
                      __layout__="NCHW")
    with mx.AttrScope(ctx_group="dev1"):
        w = mx.sym.var("conv_weight", init=mx.init.Xavier(), wd_mult=0.1)
        conv = mx.sym.Convolution(data, weight=w, kernel=(3, 3), num_filter=4, pad=(1, 1),
                                  name="conv")
        bn = mx.sym.BatchNorm(conv, fix_gamma=False, name="bn")
        act = mx.sym.Activation(bn, act_type="relu", name="relu")
    pool = mx.sym.Pooling(act, kernel=(2, 2), stride=(2, 2), pool_type="avg", name="pool")
    flat = mx.sym.Flatten(pool, name="flat")
    fc = mx.sym.FullyConnected(flat, num_hidden=5, name="fc")
    ln = mx.sym.LayerNorm(fc, name="ln")
    scaled = (ln * 2.0 + 1) / 3.0 - 0.5
    both = mx.sym.Concat(scaled, mx.sym.exp(-mx.sym.abs(fc)), dim=1, name="cat")
    r = mx.sym.Reshape(both, shape=(0, 2, -1), name="resh")
    t = mx.sym.transpose(r, axes=(0, 2, 1), name="tr")
    sw = mx.sym.SwapAxis(t, dim1=1, dim2=2, name="swap")
    s = mx.sym.sum(sw, axis=1, name="s")
    m = mx.sym.mean(mx.sym.elemwise_add(fc, fc), axis=1, keepdims=True, name="m")
    out = mx.sym.Group([mx.sym.softmax(s, axis=-1, name="sm"), m,
                        mx.sym.broadcast_maximum(s, mx.sym.ones_like(s) * 0.2, name="mx")])
    shapes = {"data": (2, 3, 6, 6)}
    args, aux = _params(out, shapes, 1)
    x = np.random.RandomState(2).randn(*shapes["data"]).astype("float32")
    outs = _run(out, args, aux, {"data": mx.nd.array(x)})
    out.save(os.path.join(HERE, "composed-symbol.json"))
    _save_params(os.path.join(HERE, "composed-0000.params"), args, aux)
    np.save(os.path.join(HERE, "composed-input.npy"), x)
    for i, o in enumerate(outs):
        np.save(os.path.join(HERE, f"composed-output{i}.npy"), o)


def gluon():
    net = mx.gluon.nn.HybridSequential(prefix="net_")
    with net.name_scope():
        net.add(mx.gluon.nn.Conv2D(4, 3, in_channels=2), mx.gluon.nn.BatchNorm(),
                mx.gluon.nn.LeakyReLU(0.1), mx.gluon.nn.MaxPool2D(),
                mx.gluon.nn.Dropout(0.3), mx.gluon.nn.Dense(6), mx.gluon.nn.LayerNorm(),
                mx.gluon.nn.Dense(3, activation="tanh"))
    mx.random.seed(3)
    net.initialize(mx.init.Xavier())
    x = mx.nd.array(np.random.RandomState(4).randn(2, 2, 8, 8).astype("float32"))
    with mx.autograd.record():  # move the BatchNorm statistics away from 0/1
        net(x)
    net.hybridize()
    y = net(x)
    net.export(os.path.join(HERE, "gluon"))
    np.save(os.path.join(HERE, "gluon-input.npy"), x.asnumpy())
    np.save(os.path.join(HERE, "gluon-output.npy"), y.asnumpy())


def _export(name, net, *xs):
    net.initialize(mx.init.Xavier())
    net.hybridize()
    xs = [mx.nd.array(x) for x in xs]
    ys = net(*xs)
    ys = ys if isinstance(ys, (list, tuple)) else [ys]
    net.export(os.path.join(HERE, name))
    for i, x in enumerate(xs):
        np.save(os.path.join(HERE, f"{name}-input{i}.npy"), x.asnumpy())
    for i, y in enumerate(ys):
        np.save(os.path.join(HERE, f"{name}-output{i}.npy"), y.asnumpy())


class _Seq(mx.gluon.HybridBlock):
    """LSTM (bidirectional, two layers) then an NTC GRU: _rnn_param_concat and the
    begin states as _zeros of shape (layers * directions, 0, hidden)."""

    def __init__(self, **kw):
        super().__init__(**kw)
        with self.name_scope():
            self.lstm = mx.gluon.rnn.LSTM(5, 2, input_size=3, bidirectional=True)
            self.gru = mx.gluon.rnn.GRU(4, layout="NTC", input_size=10)
            self.dense = mx.gluon.nn.Dense(2, flatten=False)

    def hybrid_forward(self, F, x):
        return self.dense(self.gru(F.swapaxes(self.lstm(x), 0, 1)))


class _Misc(mx.gluon.HybridBlock):
    def hybrid_forward(self, F, x):
        halves = F.split(x, num_outputs=2, axis=1)
        return (F.SoftmaxActivation(x, mode="channel"), F.SoftmaxActivation(x),
                halves[0] * halves[1], F.where(x > 0, x, -x), F.norm(x, axis=1))


def gluon_more():
    rs = np.random.RandomState(7)
    mx.random.seed(8)
    _export("gluon_rnn", _Seq(prefix="seq_"), rs.randn(6, 2, 3).astype("float32"))
    _export("gluon_misc", _Misc(prefix="misc_"), rs.randn(2, 4, 3).astype("float32"))


def legacy_000800():
    src = os.path.join(MXNET_SRC, "tests", "python", "unittest", "save_000800.json")
    dst = os.path.join(HERE, "save_000800.json")
    if os.path.exists(src):
        shutil.copyfile(src, dst)
    # The symbol that file was saved from (MXNet's test_load_000800).
    with mx.AttrScope(ctx_group="stage1"):
        data = mx.symbol.Variable("data", lr_mult=0.2)
        weight = mx.sym.Variable(name="fc1_weight", lr_mult=1.2)
        fc1 = mx.symbol.FullyConnected(data=data, weight=weight, name="fc1", num_hidden=128,
                                       wd_mult=0.3)
        act1 = mx.symbol.Activation(data=fc1, name="relu1", act_type="relu")
    with mx.AttrScope(ctx_group="stage2"):
        fc2 = mx.symbol.FullyConnected(data=act1, name="fc2", num_hidden=64, lr_mult=0.01)
        act2 = mx.symbol.Activation(data=fc2, name="relu2", act_type="relu")
        fc3 = mx.symbol.FullyConnected(data=act2, name="fc3", num_hidden=10)
        fc3 = mx.symbol.BatchNorm(fc3, name="batchnorm0")
        sym1 = mx.symbol.SoftmaxOutput(data=fc3, name="softmax")
    sym2 = mx.sym.load(dst)
    expected = {}
    for key, sym in (("original", sym1), ("loaded", sym2)):
        expected[key] = {"arguments": sym.list_arguments(),
                         "auxiliary_states": sym.list_auxiliary_states(),
                         "outputs": sym.list_outputs(), "attr_dict": sym.attr_dict()}
    shapes = {"data": (1, 200), "softmax_label": (1,)}
    args, aux = _params(sym2, shapes, 5)
    x = np.random.RandomState(6).randn(1, 200).astype("float32")
    out = _run(sym2, args, aux, {"data": mx.nd.array(x), "softmax_label": mx.nd.zeros((1,))})
    with open(os.path.join(HERE, "save_000800-expected.json"), "w") as f:
        json.dump(expected, f, indent=1, sort_keys=True)
    _save_params(os.path.join(HERE, "save_000800-0000.params"), args, aux)
    np.save(os.path.join(HERE, "save_000800-input.npy"), x)
    np.save(os.path.join(HERE, "save_000800-output.npy"), out[0])


if __name__ == "__main__":
    composed()
    gluon()
    gluon_more()
    legacy_000800()
    print("written to", HERE)
