"""The same legacy cells, with the same weights, give the same outputs as real MXNet
1.9.1 (tests/mxnet_ref.py: skipped where MXNet is not installed)."""
from __future__ import annotations

import inspect
import json
import os

import numpy
import pytest

from core import nd, rnn, sym
from core.name import NameManager
from tests.mxnet_ref import requires_mxnet, run_mxnet

# Each case builds its Symbols from ``rnn`` and ``sym``: the function's source runs
# unchanged in the real-MXNet script (with mx.rnn, mx.sym); the input shapes follow.


def lstm_gru_stack(rnn, sym):
    stack = rnn.SequentialRNNCell()
    stack.add(rnn.LSTMCell(6, prefix="l0_", forget_bias=0.5))
    stack.add(rnn.GRUCell(5, prefix="l1_"))
    outputs, states = stack.unroll(4, sym.var("data"), merge_outputs=True)
    return [outputs] + states


def bidirectional_relu_tnc(rnn, sym):
    cell = rnn.BidirectionalCell(rnn.RNNCell(4, activation="relu", prefix="l_"),
                                 rnn.RNNCell(4, prefix="r_"), output_prefix="bi_")
    outputs, _ = cell.unroll(3, sym.var("data"), layout="TNC", merge_outputs=True)
    return [outputs]


def residual_zoneout_steps(rnn, sym):
    cell = rnn.SequentialRNNCell()
    cell.add(rnn.ResidualCell(rnn.GRUCell(5, prefix="g_")))
    cell.add(rnn.ZoneoutCell(rnn.LSTMCell(3, prefix="z_"), zoneout_outputs=0.3,
                             zoneout_states=0.2))
    cell.add(rnn.DropoutCell(0.5))
    outputs, states = cell.unroll(3, [sym.var("x" + str(i)) for i in range(3)])
    return list(outputs) + list(states)


def fused_lstm_bidirectional(rnn, sym):
    cell = rnn.FusedRNNCell(4, num_layers=2, mode="lstm", bidirectional=True, prefix="f_",
                            get_next_state=True)
    outputs, states = cell.unroll(3, sym.var("data"), layout="TNC", merge_outputs=True)
    return [outputs] + states


def unfused_gru(rnn, sym):
    cell = rnn.FusedRNNCell(4, num_layers=2, mode="gru", prefix="f_").unfuse()
    outputs, states = cell.unroll(3, sym.var("data"), merge_outputs=True)
    return [outputs] + states


def conv_lstm(rnn, sym):
    cell = rnn.ConvLSTMCell((2, 3, 5, 4), num_hidden=2, prefix="c_")
    outputs, states = cell.unroll(2, [sym.var("x0"), sym.var("x1")])
    return list(outputs) + states


CASES = {
    "lstm_gru_stack": (lstm_gru_stack, {"data": (3, 4, 7)}),
    "bidirectional_relu_tnc": (bidirectional_relu_tnc, {"data": (3, 2, 5)}),
    "residual_zoneout_steps": (residual_zoneout_steps,
                               {"x0": (2, 5), "x1": (2, 5), "x2": (2, 5)}),
    "fused_lstm_bidirectional": (fused_lstm_bidirectional, {"data": (3, 2, 5)}),
    "unfused_gru": (unfused_gru, {"data": (2, 3, 5)}),
    "conv_lstm": (conv_lstm, {"x0": (2, 3, 5, 4), "x1": (2, 3, 5, 4)}),
}

_MXNET_SCRIPT = """
import json
import numpy
import mxnet as mx

{source}

g = mx.sym.Group({name}(mx.rnn, mx.sym))
vals = dict(numpy.load({values!r}))
outs = g.eval(ctx=mx.cpu(), **{{k: mx.nd.array(v, dtype=v.dtype) for k, v in vals.items()}})
numpy.savez({result!r}, **{{'out%d' % i: o.asnumpy() for i, o in enumerate(outs)}})
print(json.dumps(g.list_outputs()))
"""


def _ours(build):
    with NameManager():  # automatic names counted from 0, as in the fresh MXNet process
        return sym.Group(build(rnn, sym))


@requires_mxnet
@pytest.mark.parametrize("case", sorted(CASES))
def test_outputs_match_real_mxnet(case, tmp_path):
    build, shapes = CASES[case]
    g = _ours(build)
    arg_shapes, _, _ = g.infer_shape(**shapes)
    assert arg_shapes is not None, case
    rng = numpy.random.default_rng(7)
    vals = {n: rng.uniform(-0.5, 0.5, size=s).astype("float32")
            for n, s in zip(g.list_arguments(), arg_shapes)}
    values, result = os.path.join(tmp_path, "values.npz"), os.path.join(tmp_path, "result.npz")
    numpy.savez(values, **vals)
    script = _MXNET_SCRIPT.format(source=inspect.getsource(build), name=build.__name__,
                                  values=values, result=result)
    names = json.loads(run_mxnet(script).strip().splitlines()[-1])
    assert g.list_outputs() == names
    ours = g.eval(**{k: nd.array(v) for k, v in vals.items()})
    theirs = numpy.load(result)
    assert len(ours) == len(theirs.files)
    for i, o in enumerate(ours):
        numpy.testing.assert_allclose(o.asnumpy(), theirs[f"out{i}"], rtol=1e-4, atol=1e-5,
                                      err_msg=f"{case}: output {i} ({names[i]})")


_WEIGHTS_SCRIPT = """
import json
import numpy
import mxnet as mx
cell = mx.rnn.FusedRNNCell(3, num_layers=2, mode={mode!r}, bidirectional=True, prefix='f_',
                           forget_bias=2.0)
arr = mx.nd.zeros(({size},))
mx.init.One()(mx.init.InitDesc('f_parameters', {{'__init__': cell._parameter.attr('__init__')}}),
              arr)
flat = numpy.arange({size}, dtype='float32')
un = cell.unpack_weights({{'f_parameters': mx.nd.array(flat)}})
print(json.dumps({{'init': arr.asnumpy().tolist(),
                  'unpacked': {{k: v.asnumpy().ravel().tolist() for k, v in un.items()}},
                  'shapes': {{k: list(v.shape) for k, v in un.items()}}}}))
"""


@requires_mxnet
@pytest.mark.parametrize("mode", ["lstm", "gru"])
def test_fused_weights_and_initializer_match_real_mxnet(mode):
    cell = rnn.FusedRNNCell(3, num_layers=2, mode=mode, bidirectional=True, prefix="f_",
                            forget_bias=2.0)
    out, _ = cell.unroll(2, sym.var("data"), layout="TNC", merge_outputs=True)
    size = dict(zip(out.list_arguments(), out.infer_shape(data=(2, 1, 4))[0]))["f_parameters"][0]
    want = json.loads(run_mxnet(_WEIGHTS_SCRIPT.format(mode=mode, size=size)).strip()
                      .splitlines()[-1])
    from core import initializer

    arr = nd.zeros((size,))
    attr = cell._parameter.attr("__init__")
    initializer.One()(initializer.InitDesc("f_parameters", {"__init__": attr}), arr)
    assert arr.asnumpy().tolist() == want["init"]
    un = cell.unpack_weights({"f_parameters": nd.array(numpy.arange(size, dtype="float32"))})
    assert sorted(un) == sorted(want["unpacked"])
    for k, v in un.items():
        assert list(v.shape) == want["shapes"][k], k
        assert v.asnumpy().ravel().tolist() == want["unpacked"][k], k
