"""core.rnn's convolutional cells."""
from __future__ import annotations

import numpy
import pytest

from core import nd, rnn, sym


@pytest.mark.parametrize("cls, gates", [(rnn.ConvRNNCell, 1), (rnn.ConvLSTMCell, 4),
                                        (rnn.ConvGRUCell, 3)])
def test_unrolled_shapes_names_and_weights(cls, gates):
    cell = cls(input_shape=(1, 3, 16, 10), num_hidden=10, prefix="rnn_")
    outputs, _ = cell.unroll(3, [sym.var(f"rnn_t{i}_data") for i in range(3)])
    group = sym.Group(outputs)
    assert sorted(cell.params._params) == ["rnn_h2h_bias", "rnn_h2h_weight", "rnn_i2h_bias",
                                           "rnn_i2h_weight"]
    assert group.list_outputs() == [f"rnn_t{i}_out_output" for i in range(3)]
    args, outs, _ = group.infer_shape(**{f"rnn_t{i}_data": (1, 3, 16, 10) for i in range(3)})
    assert outs == [(1, 10, 16, 10)] * 3
    shapes = dict(zip(group.list_arguments(), args))
    assert shapes["rnn_i2h_weight"] == (gates * 10, 3, 3, 3)
    assert shapes["rnn_h2h_weight"] == (gates * 10, 10, 3, 3)


def test_strided_input_convolution_sets_the_state_shape():
    cell = rnn.ConvGRUCell((2, 3, 8, 8), num_hidden=4, i2h_kernel=(3, 3), i2h_stride=(2, 2),
                           i2h_pad=(1, 1), h2h_kernel=(5, 5), prefix="c_")
    assert cell.state_shape == [(0, 4, 4, 4)]
    out, _ = cell(sym.var("x"), cell.begin_state())
    assert out.infer_shape(x=(2, 3, 8, 8))[1] == [(2, 4, 4, 4)]


def test_conv_rnn_step_values():
    cell = rnn.ConvRNNCell((1, 1, 3, 3), num_hidden=1, i2h_kernel=(1, 1), i2h_pad=(0, 0),
                           activation="relu", prefix="c_")
    out, _ = cell(sym.var("x"), cell.begin_state())
    x = numpy.arange(9, dtype="float32").reshape(1, 1, 3, 3) - 4
    got = out.eval(x=nd.array(x), c_i2h_weight=nd.ones((1, 1, 1, 1)) * 2,
                   c_i2h_bias=nd.zeros((1,)), c_h2h_weight=nd.ones((1, 1, 3, 3)),
                   c_h2h_bias=nd.ones((1,)))[0]
    numpy.testing.assert_allclose(got.asnumpy(), numpy.maximum(2 * x + 1, 0))


def test_even_state_kernels_are_refused():
    with pytest.raises(ValueError, match="only odd h2h_kernel sizes"):
        rnn.ConvLSTMCell((1, 3, 8, 8), num_hidden=2, h2h_kernel=(2, 3))
