"""gluon.contrib.rnn: LSTMPCell, convolutional cells, VariationalDropoutCell, dynamic_unroll."""
import numpy as np
import pytest

from core import autograd, nd, sym
from gluon import rnn
from gluon.contrib import rnn as crnn

_RS = np.random.RandomState(0)


def _r(*shape):
    return _RS.uniform(-1, 1, shape).astype("float32")


def _sigmoid(v):
    return 1 / (1 + np.exp(-v))


def _lstmp_step(x, r, c, p):
    g = x @ p["i2h_weight"].T + p["i2h_bias"] + r @ p["h2h_weight"].T + p["h2h_bias"]
    i, f, gg, o = np.split(g, 4, axis=1)
    c = _sigmoid(f) * c + _sigmoid(i) * np.tanh(gg)
    h = _sigmoid(o) * np.tanh(c)
    return h @ p["h2r_weight"].T, c


def test_lstmp_cell_matches_numpy_and_names_mxnet_params():
    cell = crnn.LSTMPCell(6, 3, input_size=4, prefix="rnn_")
    cell.initialize("uniform")
    assert sorted(cell.collect_params()) == ["rnn_h2h_bias", "rnn_h2h_weight", "rnn_h2r_weight",
                                             "rnn_i2h_bias", "rnn_i2h_weight"]
    p = {k[len("rnn_"):]: v.data().asnumpy() for k, v in cell.collect_params().items()}
    x = _r(2, 5, 4)
    out, (_, c) = cell.unroll(5, nd.array(x), merge_outputs=True)
    rr, cc = np.zeros((2, 3), "float32"), np.zeros((2, 6), "float32")
    want = []
    for t in range(5):
        rr, cc = _lstmp_step(x[:, t], rr, cc, p)
        want.append(rr)
    np.testing.assert_allclose(out.asnumpy(), np.stack(want, 1), rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(c.asnumpy(), cc, rtol=1e-5, atol=1e-6)


def test_lstmp_cell_symbolic_unroll_shapes():
    cell = crnn.LSTMPCell(10, 4, prefix="rnn_")
    outs, _ = cell.unroll(3, [sym.var(f"rnn_t{i}_data") for i in range(3)])
    g = sym.Group(outs)
    assert g.list_outputs() == ["rnn_t0_out_output", "rnn_t1_out_output", "rnn_t2_out_output"]
    _, shapes, _ = g.infer_shape(rnn_t0_data=(2, 5), rnn_t1_data=(2, 5), rnn_t2_data=(2, 5))
    assert shapes == [(2, 4)] * 3


@pytest.mark.parametrize("name,in_shape,out_shape", [
    ("Conv1DRNNCell", (3, 8), (2, 4, 6)),
    ("Conv2DLSTMCell", (3, 6, 7), (2, 4, 4, 5)),
    ("Conv3DGRUCell", (2, 5, 5, 5), (2, 4, 3, 3, 3)),
])
def test_conv_cells_shapes(name, in_shape, out_shape):
    cell = getattr(crnn, name)(in_shape, 4, 3, 3)
    cell.initialize()
    out, states = cell.unroll(2, nd.ones((2, 2) + in_shape), merge_outputs=False)
    assert out[0].shape == out_shape
    assert all(s.shape == out_shape for s in states)


def test_conv_rnn_cell_is_tanh_of_two_convolutions():
    cell = crnn.Conv2DRNNCell((2, 5, 5), 3, 3, 3, i2h_pad=1, prefix="c_")
    cell.initialize("uniform")
    x, h = nd.array(_r(1, 2, 5, 5)), nd.array(_r(1, 3, 5, 5))
    out, _ = cell(x, [h])
    p = {k.split("_", 1)[1]: v.data() for k, v in cell.collect_params().items()}
    want = nd.tanh(nd.Convolution(x, p["i2h_weight"], p["i2h_bias"], kernel=(3, 3), pad=(1, 1),
                                  num_filter=3)
                   + nd.Convolution(h, p["h2h_weight"], p["h2h_bias"], kernel=(3, 3),
                                    pad=(1, 1), num_filter=3))
    np.testing.assert_allclose(out.asnumpy(), want.asnumpy(), rtol=1e-5, atol=1e-6)


def test_conv_cell_infers_channels_and_checks_arguments():
    cell = crnn.Conv1DLSTMCell((0, 7), 10, (3,), (3,))
    cell.initialize()
    cell(nd.ones((2, 5, 7)), cell.begin_state(2))
    assert cell.i2h_weight.shape == (40, 5, 3)
    with pytest.raises(ValueError, match="odd h2h_kernel"):
        crnn.Conv2DRNNCell((3, 4, 4), 2, 3, 2)
    with pytest.raises(ValueError, match="conv_layout"):
        crnn.Conv2DRNNCell((3, 4, 4), 2, 3, 3, conv_layout="NCW")


def test_variational_dropout_keeps_one_mask_per_sequence():
    cell = crnn.VariationalDropoutCell(rnn.RNNCell(8), drop_inputs=0.5, drop_states=0.5,
                                       drop_outputs=0.5)
    cell.initialize()
    x = nd.ones((4, 6, 3))
    with autograd.train_mode():
        out, _ = cell.unroll(6, x, merge_outputs=True)
    zero = out.asnumpy() == 0
    assert zero.any()
    assert (zero == zero[:, :1]).all()
    out_a, _ = cell.unroll(6, x, merge_outputs=True)  # inference: no dropout
    base = cell.base_cell
    base._modified = False
    out_b, _ = base.unroll(6, x, merge_outputs=True)
    np.testing.assert_allclose(out_a.asnumpy(), out_b.asnumpy(), rtol=1e-6)
    with pytest.raises(ValueError, match="variational state dropout"):
        crnn.VariationalDropoutCell(rnn.BidirectionalCell(rnn.RNNCell(2), rnn.RNNCell(2)),
                                    drop_states=0.5)


@pytest.mark.parametrize("layout", ["TNC", "NTC"])
def test_dynamic_unroll_equals_unroll_with_valid_length(layout):
    cell = rnn.LSTMCell(5, prefix="rnn_")
    cell.initialize()
    shape = (4, 3, 2) if layout == "TNC" else (3, 4, 2)
    x = nd.array(_r(*shape))
    states = [nd.array(_r(3, 5)), nd.array(_r(3, 5))]
    valid = nd.array([2, 4, 1])
    want, want_states = cell.unroll(4, x, states, layout=layout, merge_outputs=True,
                                    valid_length=valid)
    got, got_states = crnn.dynamic_unroll(cell, x, states, layout=layout, valid_length=valid)
    np.testing.assert_allclose(got.asnumpy(), want.asnumpy(), rtol=1e-5, atol=1e-6)
    for a, b in zip(got_states, want_states):
        np.testing.assert_allclose(a.asnumpy(), b.asnumpy(), rtol=1e-5, atol=1e-6)
    plain, _ = crnn.dynamic_unroll(cell, x, states, layout=layout)
    full, _ = cell.unroll(4, x, states, layout=layout, merge_outputs=True)
    np.testing.assert_allclose(plain.asnumpy(), full.asnumpy(), rtol=1e-5, atol=1e-6)
