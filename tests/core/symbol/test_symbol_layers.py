"""Every Gluon layer's operator composed on Symbols: inferred shapes and dtypes (including
the parameters filled in backward) agree with what running the graph produces."""
import numpy
import pytest

from core import nd, sym
from core.sym import NameManager

INDEX_INPUTS = ("label", "sequence_length", "idx")

# name: (builder(data symbol) -> Symbol, data shape, extra given shapes)
CASES = {
    "dense": (lambda x: sym.FullyConnected(x, num_hidden=5), (2, 3, 4), {}),
    "dense_noflatten": (lambda x: sym.FullyConnected(x, num_hidden=5, flatten=False,
                                                     no_bias=True), (2, 3, 4), {}),
    "conv1d": (lambda x: sym.Convolution(x, kernel=(3,), num_filter=4, stride=(2,)),
               (2, 3, 9), {}),
    "conv2d_groups": (lambda x: sym.Convolution(x, kernel=(3, 3), num_filter=4, num_group=2,
                                                pad=(1, 1), dilate=(2, 2)), (2, 4, 7, 7), {}),
    "conv2d_nhwc": (lambda x: sym.Convolution(x, kernel=(3, 3), num_filter=4, layout="NHWC"),
                    (2, 7, 7, 3), {}),
    "conv3d": (lambda x: sym.Convolution(x, kernel=(2, 2, 2), num_filter=2), (1, 2, 4, 4, 4),
               {}),
    "deconv2d": (lambda x: sym.Deconvolution(x, kernel=(3, 3), stride=(2, 2), num_filter=3,
                                             no_bias=False), (2, 4, 5, 5), {}),
    "maxpool2d": (lambda x: sym.Pooling(x, kernel=(2, 2), stride=(2, 2), pool_type="max"),
                  (2, 3, 7, 7), {}),
    "avgpool_full": (lambda x: sym.Pooling(x, kernel=(3, 3), stride=(2, 2), pool_type="avg",
                                           pooling_convention="full"), (2, 3, 8, 8), {}),
    "globalpool1d": (lambda x: sym.Pooling(x, kernel=(1,), global_pool=True), (2, 3, 8), {}),
    "batchnorm": (lambda x: sym.BatchNorm(x, fix_gamma=False), (4, 3, 5), {}),
    "batchnorm_last": (lambda x: sym.BatchNorm(x, axis=-1), (4, 5, 3), {}),
    "instancenorm": (lambda x: sym.InstanceNorm(x), (2, 3, 5), {}),
    "layernorm": (lambda x: sym.LayerNorm(x), (2, 3, 5), {}),
    "groupnorm": (lambda x: sym.GroupNorm(x, num_groups=2), (2, 4, 5), {}),
    "l2norm": (lambda x: sym.L2Normalization(x, mode="channel"), (2, 3, 5), {}),
    "lrn": (lambda x: sym.LRN(x, nsize=3), (2, 4, 3, 3), {}),
    "embedding": (lambda x: sym.Embedding(x, input_dim=10, output_dim=4), (2, 6), {}),
    "dropout": (lambda x: sym.Dropout(x, p=0.5), (2, 3), {}),
    "flatten": (lambda x: sym.Flatten(x), (2, 3, 4), {}),
    "activations": (lambda x: sym.Activation(x, act_type="softrelu")
                    + sym.Activation(x, act_type="tanh") + sym.sigmoid(x) + sym.relu(x),
                    (2, 3), {}),
    "leaky_variants": (lambda x: sym.LeakyReLU(x, act_type="elu")
                       + sym.LeakyReLU(x, act_type="selu") + sym.LeakyReLU(x, act_type="gelu")
                       + sym.LeakyReLU(x, act_type="prelu"), (2, 3, 4), {}),
    "swish": (lambda x: x * sym.sigmoid(x * 1.5), (2, 3), {}),
    "softmax_output": (lambda x: sym.SoftmaxOutput(sym.log_softmax(x, axis=-1), name="sm"),
                       (4, 5), {}),
    "lstm": (lambda x: sym.RNN(x, state_size=4, num_layers=2, mode="lstm", bidirectional=True,
                               state_outputs=True), (5, 2, 3), {}),
    "gru_ntc": (lambda x: sym.RNN(x, state_size=3, mode="gru", layout="NTC"), (2, 5, 3), {}),
    "rnn_tanh": (lambda x: sym.RNN(x, state_size=3, mode="rnn_tanh", num_layers=2),
                 (5, 2, 3), {}),
    "reflection_pad": (lambda x: sym.pad(x, mode="reflect",
                                         pad_width=(0, 0, 0, 0, 1, 1, 2, 2)), (1, 2, 4, 5), {}),
    "upsampling": (lambda x: sym.UpSampling(x, scale=2, sample_type="nearest"), (1, 2, 3, 3),
                   {}),
    "bilinear_resize": (lambda x: sym.BilinearResize2D(x, height=6, width=5), (1, 2, 3, 3), {}),
    "sequence_ops": (lambda x: sym.SequenceMask(x, use_sequence_length=True, name="m")
                     + sym.SequenceReverse(x), (5, 2, 3), {}),
    "sequence_last": (lambda x: sym.SequenceLast(x), (5, 2, 3), {}),
    "split_concat": (lambda x: sym.concat(*sym.split(x, num_outputs=2, axis=1), dim=2),
                     (2, 4, 3), {}),
    "stack_swap": (lambda x: sym.swapaxes(sym.stack(x, x, axis=0), dim1=0, dim2=2), (2, 3),
                   {}),
    "ctc": (lambda x: sym.CTCLoss(x, name="ctc"), (6, 2, 5), {"ctc_label": (2, 3)}),
    "dot_broadcast": (lambda x: sym.broadcast_add(sym.dot(x, sym.var("w")), sym.var("b")),
                      (2, 3), {"w": (3, 4), "b": (1, 4)}),
}


def _value(name, shape, dtype, seed):
    rng = numpy.random.default_rng(seed)
    if name.endswith(INDEX_INPUTS) or name == "data" and dtype.kind in "iu":
        hi = shape[0] if name.endswith("sequence_length") else 3
        if name.endswith("sequence_length"):
            return nd.array(rng.integers(1, 5, size=shape).astype(dtype))
        return nd.array(rng.integers(1, hi, size=shape).astype(dtype))
    return nd.array(rng.uniform(0.5, 1.5, size=shape).astype(dtype))


@pytest.mark.parametrize("case", sorted(CASES))
def test_inferred_shapes_and_dtypes_match_a_run(case):
    build, dshape, extra = CASES[case]
    with NameManager():
        net = build(sym.var("data"))
    shapes = dict(extra, data=dshape)
    arg_shapes, out_shapes, aux_shapes = net.infer_shape(**shapes)
    assert arg_shapes is not None, f"{case}: shapes not inferred"
    arg_types, out_types, aux_types = net.infer_type(data="float32")
    values = {}
    names = net.list_arguments() + net.list_auxiliary_states()
    for i, (n, s, t) in enumerate(zip(names, arg_shapes + aux_shapes, arg_types + aux_types)):
        values[n] = _value(n, s, numpy.dtype(t), i)
    if case == "embedding":
        values["data"] = nd.array(numpy.arange(12).reshape(2, 6) % 10, dtype="float32")
    outs = net.eval(**values)
    assert [tuple(o.shape) for o in outs] == out_shapes, case
    assert [o.dtype for o in outs] == [numpy.dtype(t) for t in out_types], case
    # the first dimension unknown: the others are still inferred
    pshape = (0,) + tuple(dshape[1:])
    p_args, p_outs, _ = net.infer_shape_partial(**dict(extra, data=pshape))
    for got, want in zip(p_args + p_outs, arg_shapes + out_shapes):
        assert len(got) in (0, len(want)), (case, got, want)
        assert all(g in (0, w) for g, w in zip(got, want)), (case, got, want)


def test_layer_results_match_nd():
    x = nd.array(numpy.random.default_rng(0).standard_normal((2, 3, 6, 6)).astype("float32"))
    w = nd.array(numpy.random.default_rng(1).standard_normal((4, 3, 3, 3)).astype("float32"))
    s = sym.Pooling(sym.Convolution(sym.var("x"), sym.var("w"), kernel=(3, 3), num_filter=4,
                                    no_bias=True), kernel=(2, 2), stride=(2, 2))
    want = nd.Pooling(nd.Convolution(x, w, kernel=(3, 3), num_filter=4, no_bias=True),
                      kernel=(2, 2), stride=(2, 2))
    numpy.testing.assert_allclose(s.eval(x=x, w=w)[0].asnumpy(), want.asnumpy(), rtol=1e-5)
