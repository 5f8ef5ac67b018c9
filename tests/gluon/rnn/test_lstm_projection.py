"""gluon.rnn.LSTM(projection_size=P): MXNet's LSTMP on CPU, checked against stacked LSTMPCells."""
from __future__ import annotations

import json
import os

import numpy as np
import pytest

from core import autograd, nd
from gluon import SymbolBlock, rnn
from gluon.contrib.rnn import LSTMPCell
from tests.mxnet_ref import requires_mxnet, run_mxnet

H, P, C, T, N = 6, 3, 4, 5, 2


def _pair(num_layers, bidirectional):
    fused = rnn.LSTM(H, projection_size=P, num_layers=num_layers, bidirectional=bidirectional,
                     input_size=C, prefix="lstm0_")
    stack = rnn.HybridSequentialRNNCell(prefix="lstm0_")
    with stack.name_scope():
        for i in range(num_layers):
            if bidirectional:
                stack.add(rnn.BidirectionalCell(LSTMPCell(H, P, prefix=f"l{i}_"),
                                                LSTMPCell(H, P, prefix=f"r{i}_")))
            else:
                stack.add(LSTMPCell(H, P, prefix=f"l{i}_"))
    fused.initialize()
    stack.initialize()
    x = nd.array(np.random.RandomState(1).uniform(-1, 1, (T, N, C)).astype("float32"))
    stack.unroll(T, x, layout="TNC", merge_outputs=True)  # infer the cells' shapes
    fp, sp = fused.collect_params(), stack.collect_params()
    assert sorted(fp) == sorted(sp)
    rs = np.random.RandomState(2)
    for name, p in fp.items():
        w = nd.array(rs.uniform(-0.5, 0.5, p.shape).astype("float32"))
        p.set_data(w)
        sp[name].set_data(w.copy())
    return fused, stack, x


def _stack_states(states, num_layers, d):
    hs = np.stack([s.asnumpy() for s in states[0::2]])
    cs = np.stack([s.asnumpy() for s in states[1::2]])
    assert hs.shape[0] == num_layers * d
    return hs, cs


@pytest.mark.parametrize("num_layers", [1, 2])
@pytest.mark.parametrize("bidirectional", [False, True])
def test_fused_lstmp_equals_stacked_lstmp_cells(num_layers, bidirectional):
    fused, stack, x = _pair(num_layers, bidirectional)
    d = 2 if bidirectional else 1
    assert fused.l0_h2r_weight.shape == (P, H) and fused.l0_h2h_weight.shape == (4 * H, P)
    if num_layers > 1:
        assert fused.l1_i2h_weight.shape == (4 * H, P * d)
    out, (h, c) = fused(x, fused.begin_state(N))
    want, states = stack.unroll(T, x, layout="TNC", merge_outputs=True)
    assert out.shape == (T, N, P * d) and h.shape == (num_layers * d, N, P)
    np.testing.assert_allclose(out.asnumpy(), want.asnumpy(), rtol=1e-5, atol=1e-6)
    hs, cs = _stack_states(states, num_layers, d)
    np.testing.assert_allclose(h.asnumpy(), hs, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(c.asnumpy(), cs, rtol=1e-5, atol=1e-6)


def test_lstmp_gradients_match_the_cells_and_hybridize():
    fused, stack, x = _pair(2, True)
    with autograd.record():
        loss = (fused(x) ** 2).sum()
    loss.backward()
    with autograd.record():
        out, _ = stack.unroll(T, x, layout="TNC", merge_outputs=True)
        loss2 = (out ** 2).sum()
    loss2.backward()
    sp = stack.collect_params()
    for name, p in fused.collect_params().items():
        np.testing.assert_allclose(p.grad().asnumpy(), sp[name].grad().asnumpy(), rtol=1e-4,
                                   atol=1e-5, err_msg=name)
    y = fused(x).asnumpy()
    fused.hybridize()
    np.testing.assert_allclose(fused(x).asnumpy(), y, rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("bidirectional", [False, True])
def test_lstmp_sequence_length(bidirectional):
    layer = rnn.LSTM(H, projection_size=P, bidirectional=bidirectional, input_size=C,
                     use_sequence_length=True, prefix="lstm0_")
    layer.initialize("uniform")
    stack = rnn.HybridSequentialRNNCell(prefix="lstm0_")
    with stack.name_scope():
        stack.add(rnn.BidirectionalCell(LSTMPCell(H, P, prefix="l0_"),
                                        LSTMPCell(H, P, prefix="r0_"))
                  if bidirectional else LSTMPCell(H, P, prefix="l0_"))
    stack.initialize()
    x = nd.array(np.random.RandomState(3).uniform(-1, 1, (T, N, C)).astype("float32"))
    stack.unroll(T, x, layout="TNC", merge_outputs=True)
    for name, p in layer.collect_params().items():
        stack.collect_params()[name].set_data(p.data())
    lengths = nd.array([3, 5])
    out, (h, c) = layer(x, layer.begin_state(N), lengths)
    want, states = stack.unroll(T, x, layout="TNC", merge_outputs=True, valid_length=lengths)
    np.testing.assert_allclose(out.asnumpy(), want.asnumpy(), rtol=1e-5, atol=1e-6)
    hs, cs = _stack_states(states, 1, 2 if bidirectional else 1)
    np.testing.assert_allclose(h.asnumpy(), hs, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(c.asnumpy(), cs, rtol=1e-5, atol=1e-6)
    assert not out.asnumpy()[3:, 0].any()


def test_lstmp_errors():
    with pytest.raises(ValueError, match="positive integer"):
        rnn.LSTM(4, projection_size=-1)
    layer = rnn.LSTM(4, projection_size=2, input_size=3)
    layer.initialize()
    with pytest.raises(ValueError, match="Invalid recurrent state shape"):
        layer(nd.ones((2, 1, 3)), [nd.zeros((1, 1, 4)), nd.zeros((1, 1, 4))])
    with pytest.raises(ValueError, match="LSTMPCell"):
        layer._unfuse()
    from core import sym

    with pytest.raises(ValueError, match="not on Symbols"):
        layer(sym.var("data"))


def test_lstmp_parameter_file_names(tmp_path):
    layer = rnn.LSTM(H, projection_size=P, bidirectional=True, input_size=C)
    layer.initialize()
    f = os.fspath(tmp_path / "p.params")
    layer.save_parameters(f)
    names = sorted(nd.load(f))
    assert "_unfused.0.l_cell.h2r_weight" in names and "_unfused.0.r_cell.h2h_weight" in names
    other = rnn.LSTM(H, projection_size=P, bidirectional=True, input_size=C)
    other.load_parameters(f)
    np.testing.assert_array_equal(other.r0_h2r_weight.data().asnumpy(),
                                  layer.r0_h2r_weight.data().asnumpy())


_MX_LOAD = """
import mxnet as mx
layer = mx.gluon.rnn.LSTM({H}, projection_size={P}, bidirectional=True, input_size={C})
layer.load_parameters({f!r})
print(sorted((k, tuple(v.shape), round(float(v.data().sum().asscalar()), 4))
             for k, v in layer._reg_params.items()))
"""


@requires_mxnet
def test_real_mxnet_loads_our_lstmp_parameters(tmp_path):
    layer = rnn.LSTM(H, projection_size=P, bidirectional=True, input_size=C)
    layer.initialize("uniform")
    f = os.fspath(tmp_path / "p.params")
    layer.save_parameters(f)
    ours = sorted((k, tuple(v.shape), round(float(v.data().sum().asscalar()), 4))
                  for k, v in layer._reg_params.items())
    assert run_mxnet(_MX_LOAD.format(H=H, P=P, C=C, f=f)).strip().splitlines()[-1] == str(ours)


_NAMES = ["data0", "data1", "data2"]  # the input and the two states, as MXNet names them
_MX_RUN = """
import numpy as np, mxnet as mx
blk = mx.gluon.SymbolBlock.imports({sym!r}, {names!r}, {params!r})
z = np.load({x!r})
out = blk(*[mx.nd.array(z[n]) for n in {names!r}])[0]
print(np.array2string(out.asnumpy().ravel(), precision=6, separator=",",
                      max_line_width=10**6, floatmode="fixed"))
"""


def _exported(tmp_path):
    layer = rnn.LSTM(H, projection_size=P, num_layers=2, bidirectional=True, input_size=C,
                     layout="NTC")
    layer.initialize("uniform")
    layer.hybridize()
    x = nd.array(np.random.RandomState(4).uniform(-1, 1, (N, T, C)).astype("float32"))
    states = [nd.array(np.random.RandomState(5).uniform(-1, 1, s.shape).astype("float32"))
              for s in layer.begin_state(N)]
    y, _ = layer(x, states)
    sym_file, param_file = layer.export(os.fspath(tmp_path / "lstmp"))
    return [x] + states, y, sym_file, param_file


def test_lstmp_exports_and_imports_back(tmp_path):
    x, y, sym_file, param_file = _exported(tmp_path)
    with open(sym_file) as f:
        assert "RNN" not in {n["op"] for n in json.load(f)["nodes"]}
    back = SymbolBlock.imports(sym_file, _NAMES, param_file)
    np.testing.assert_allclose(back(*x)[0].asnumpy(), y.asnumpy(), rtol=1e-5, atol=1e-6)


@requires_mxnet
def test_real_mxnet_runs_the_exported_lstmp(tmp_path):
    x, y, sym_file, param_file = _exported(tmp_path)
    np.savez(tmp_path / "x.npz", **{n: a.asnumpy() for n, a in zip(_NAMES, x)})
    out = run_mxnet(_MX_RUN.format(sym=sym_file, params=param_file, names=_NAMES,
                                   x=os.fspath(tmp_path / "x.npz")))
    np.testing.assert_allclose(np.array(json.loads(out.strip().splitlines()[-1])),
                               y.asnumpy().ravel(), rtol=1e-4, atol=1e-5)
