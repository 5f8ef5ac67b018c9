"""Block, HybridBlock and the containers: naming, parameters, deferred initialization,
forward styles, hybridize, contexts, saving and loading, hooks, summary."""
import doctest
import re

import numpy
import pytest

import core
import gluon
from core import autograd, cpu, initializer, nd, serialization
from gluon import Block, HybridBlock, HybridLambda, HybridSequential, Lambda, Parameter, Sequential
from gluon.block import NameManager


class Dense(HybridBlock):
    """A Dense-like layer in MXNet 1.x style (hybrid_forward, deferred in_units)."""

    def __init__(self, units, in_units=0, use_bias=True, **kwargs):
        super().__init__(**kwargs)
        self._units = units
        with self.name_scope():
            self.weight = self.params.get("weight", shape=(units, in_units),
                                          allow_deferred_init=True)
            self.bias = self.params.get("bias", shape=(units,), init="zeros") \
                if use_bias else None

    def infer_shape(self, x, *args):
        self.weight.shape = (self._units, int(numpy.prod(x.shape[1:])))

    def hybrid_forward(self, F, x, weight, bias=None):
        return F.FullyConnected(x, weight, bias, num_hidden=self._units, no_bias=bias is None)


class DenseFwd(HybridBlock):
    """The same layer in forward style (MXNet 2.0)."""

    def __init__(self, units, in_units=0, **kwargs):
        super().__init__(**kwargs)
        self._units = units
        with self.name_scope():
            self.weight = self.params.get("weight", shape=(units, in_units),
                                          allow_deferred_init=True)
            self.bias = self.params.get("bias", shape=(units,), init="zeros")

    def infer_shape(self, x, *args):
        self.weight.shape = (self._units, x.shape[1])

    def forward(self, x):
        return nd.FullyConnected(x, self.weight.data(), self.bias.data(),
                                 num_hidden=self._units)


class MLP(HybridBlock):
    def __init__(self, layer=Dense, **kwargs):
        super().__init__(**kwargs)
        with self.name_scope():
            self.features = HybridSequential()
            with self.features.name_scope():
                self.features.add(layer(8), layer(6))
            self.out = layer(3)

    def hybrid_forward(self, F, x):
        return self.out(F.relu(self.features(x)))


def _x(shape=(4, 5), seed=0):
    return nd.array(numpy.random.default_rng(seed).standard_normal(shape))


# --------------------------------------------------------------------------- naming

def test_mxnet_1x_naming():
    with NameManager():
        a, b = Dense(3), Dense(3)
        net = MLP()
        lam = HybridLambda("relu")
    assert (a.name, b.name, a.prefix) == ("dense0", "dense1", "dense0_")
    assert net.prefix == "mlp0_" and lam.name == "hybridlambda0"
    assert net.features.prefix == "mlp0_hybridsequential0_"
    assert [c.prefix for c in net.features] == ["mlp0_hybridsequential0_dense0_",
                                                "mlp0_hybridsequential0_dense1_"]
    assert net.out.prefix == "mlp0_dense0_"  # counters are per enclosing scope
    assert net.out.weight.name == "mlp0_dense0_weight"
    assert list(net.collect_params().keys()) == [
        "mlp0_hybridsequential0_dense0_weight", "mlp0_hybridsequential0_dense0_bias",
        "mlp0_hybridsequential0_dense1_weight", "mlp0_hybridsequential0_dense1_bias",
        "mlp0_dense0_weight", "mlp0_dense0_bias"]


def test_name_manager_restarts_counts():
    with NameManager():
        first = [p for p in MLP().collect_params()]
    with NameManager():
        second = [p for p in MLP().collect_params()]
    assert first == second


def test_explicit_and_empty_prefix():
    net = Dense(2, prefix="fc_")
    assert net.name == "fc" and net.weight.name == "fc_weight"
    assert net.params.prefix == "fc_"
    outer = HybridSequential(prefix="")
    with outer.name_scope():  # an empty prefix gives no scope: global names
        inner = Dense(2)
    assert outer.name == "" and re.fullmatch(r"dense\d+_", inner.prefix)


def test_collect_params_select():
    net = MLP(prefix="m_")
    assert list(net.collect_params(".*weight").keys()) == [
        "m_hybridsequential0_dense0_weight", "m_hybridsequential0_dense1_weight",
        "m_dense0_weight"]
    assert list(net.collect_params("m_dense0_.*|.*dense1_bias").keys()) == [
        "m_hybridsequential0_dense1_bias", "m_dense0_weight", "m_dense0_bias"]
    assert list(net.out.collect_params().keys()) == ["m_dense0_weight", "m_dense0_bias"]
    assert list(net.params.keys()) == []  # own parameters only


def test_setattr_registration_and_errors():
    class Net(Block):
        def __init__(self):
            super().__init__(prefix="net_")
            self.child = Dense(2)
            self.scale = Parameter("scale", shape=(1,))

    net = Net()
    assert list(net._children) == ["child"] and net._reg_params == {"scale": net.scale}
    assert "scale" in net.collect_params()  # a directly assigned Parameter is collected
    with pytest.raises(TypeError, match="Changing attribute type for child"):
        net.child = 3
    with pytest.raises(ValueError, match="Overriding Parameter attribute scale"):
        net.scale = Parameter("other", shape=(1,))

    class Early(Block):
        def __init__(self):
            self.child = Dense(2)
            super().__init__()

    with pytest.raises(RuntimeError, match="super\\(\\).__init__\\(\\)"):
        Early()


def test_unregistered_container_warns():
    class Net(Block):
        def __init__(self):
            super().__init__()
            self.layers = [Dense(2), Dense(2)]

    with pytest.warns(UserWarning, match="Net.layers.*unregistered container"):
        Net().collect_params()


def test_hybrid_block_rejects_plain_children():
    net = HybridSequential()
    with pytest.raises(ValueError, match="Children of HybridBlock must also be HybridBlock"):
        net.add(Lambda("relu"))


def test_repr_nests_children():
    net = HybridSequential(prefix="s_")
    with net.name_scope():
        inner = HybridSequential()
        inner.add(HybridLambda("relu"))
        net.add(inner, HybridLambda("tanh"))
    assert repr(net) == ("HybridSequential(\n"
                         "  (0): HybridSequential(\n"
                         "    (0): HybridLambda(relu)\n"
                         "  )\n"
                         "  (1): HybridLambda(tanh)\n"
                         ")")


# --------------------------------------------------------------------------- deferred init

def test_deferred_init_completes_on_first_forward():
    net = Dense(4, prefix="fc_")
    net.initialize(initializer.One())
    assert net.weight.shape == (4, 0)
    with pytest.raises(gluon.DeferredInitializationError, match="fc_weight"):
        net.weight.data()
    out = net(nd.ones((2, 3)))
    assert net.weight.shape == (4, 3)
    assert out.asnumpy().tolist() == [[3.0] * 4] * 2
    assert net.bias.data().asnumpy().tolist() == [0.0] * 4  # own init wins


def test_deferred_init_error_names_block_parameter_and_shape():
    class NoInfer(HybridBlock):
        def __init__(self, **kwargs):
            super().__init__(**kwargs)
            self.w = self.params.get("w", shape=(3, 0), allow_deferred_init=True)

        def hybrid_forward(self, F, x, w):
            return F.dot(x, w, transpose_b=True)

    net = NoInfer(prefix="noinfer_")
    net.initialize()
    with pytest.raises(ValueError) as err:
        net(nd.ones((2, 5)))
    msg = str(err.value)
    assert "Deferred initialization failed" in msg
    for part in ("NoInfer", "'noinfer'", "'noinfer_w'", "(3, 0)", "in_units", "in_channels",
                 "infer_shape"):
        assert part in msg


def test_deferred_init_error_when_infer_shape_leaves_unknown():
    class Lazy(Dense):
        def infer_shape(self, x, *args):
            pass

    net = Lazy(2, prefix="lazy_")
    net.initialize()
    with pytest.raises(ValueError, match=r"'lazy'.*'lazy_weight' \(shape \(2, 0\)\).*in_units"):
        net(nd.ones((1, 4)))


def test_uninitialized_block_error():
    net = Dense(2, in_units=3, prefix="fc_")
    with pytest.raises(RuntimeError, match="'fc_weight' has not been initialized.*initialize"):
        net(nd.ones((1, 3)))


# --------------------------------------------------------------------------- forward styles

def test_forward_styles_and_hybridize_give_identical_results():
    x = _x()
    results = []
    for layer in (Dense, DenseFwd):
        for hybridize in (False, True):
            core.random.seed(1)
            net = MLP(layer=layer)
            net.initialize(initializer.Xavier())
            if hybridize:
                net.hybridize(static_alloc=True, static_shape=True)
            with autograd.record():
                y = net(x)
            y.backward(nd.ones_like(y))
            grads = [p.grad().asnumpy() for p in net.collect_params().values()]
            results.append((y.asnumpy(), grads))
    ref_y, ref_g = results[0]
    for y, g in results[1:]:
        numpy.testing.assert_array_equal(y, ref_y)
        for a, b in zip(g, ref_g):
            numpy.testing.assert_array_equal(a, b)


def test_hybridize_is_recorded_on_the_tree():
    net = MLP()
    net.hybridize(static_alloc=True, backend=None)
    blocks = []
    net.apply(blocks.append)
    assert all(b._active for b in blocks)
    assert ("static_alloc", True) in net.features[0]._flags
    net.hybridize(False)
    assert not any(b._active for b in blocks)
    with pytest.raises(RuntimeError, match="hybridize.*forward"):
        net.export("model")


def test_hybrid_forward_needs_an_ndarray():
    with pytest.raises(ValueError, match="one NDArray"):
        HybridLambda("relu")(numpy.ones(3))


def test_block_forward_must_be_defined():
    with pytest.raises(NotImplementedError, match="Block must define forward"):
        Block()(nd.ones(1))
    with pytest.raises(NotImplementedError, match="hybrid_forward"):
        HybridBlock()(nd.ones(1))


# --------------------------------------------------------------------------- contexts

@pytest.mark.multi_device
def test_multi_context_initialize_and_forward():
    net = MLP()
    net.initialize(initializer.Xavier(), ctx=[cpu(0), cpu(1)])
    x = _x()
    y0 = net(x)
    for p in net.collect_params().values():
        a, b = (d.asnumpy() for d in p.list_data())
        numpy.testing.assert_array_equal(a, b)
    y1 = net(x.as_in_context(cpu(1)))
    assert y1.context == cpu(1)
    numpy.testing.assert_array_equal(y0.asnumpy(), y1.asnumpy())
    fwd = MLP(layer=DenseFwd)
    fwd.initialize(ctx=[cpu(0), cpu(1)])
    assert fwd(x.as_in_context(cpu(1))).context == cpu(1)  # data() picks the input's ctx


@pytest.mark.multi_device
def test_wrong_context_error_names_parameter_and_contexts():
    net = Dense(2, prefix="fc_")
    net.initialize(ctx=cpu(0))
    net(nd.ones((1, 3)))
    with pytest.raises(RuntimeError,
                       match=r"'fc_weight' was not initialized on context cpu\(1\).*"
                             r"only initialized on \[cpu\(0\)\]"):
        net(nd.ones((1, 3), ctx=cpu(1)))
    net.reset_ctx([cpu(1)])
    assert net(nd.ones((1, 3), ctx=cpu(1))).context == cpu(1)


# --------------------------------------------------------------------------- save / load

def _trained_mlp():
    net = MLP()
    net.initialize(initializer.Xavier())
    net(_x())
    return net


def test_save_load_parameters_round_trip(tmp_path):
    net = _trained_mlp()
    f = str(tmp_path / "mlp.params")
    net.save_parameters(f)
    assert sorted(serialization.load(f)) == sorted([
        "features.0.weight", "features.0.bias", "features.1.weight", "features.1.bias",
        "out.weight", "out.bias"])
    other = MLP()  # other prefixes: structural names still match
    other.load_parameters(f)
    x = _x(seed=5)
    numpy.testing.assert_array_equal(net(x).asnumpy(), other(x).asnumpy())
    other.load_parameters(f)  # into initialized parameters
    numpy.testing.assert_array_equal(net(x).asnumpy(), other(x).asnumpy())


@pytest.mark.multi_device
def test_load_parameters_on_contexts(tmp_path):
    net = _trained_mlp()
    f = str(tmp_path / "mlp.params")
    net.save_parameters(f)
    other = MLP()
    other.load_parameters(f, ctx=[cpu(0), cpu(1)])
    assert other.out.weight.list_ctx() == [cpu(0), cpu(1)]


def test_load_parameters_missing_and_extra(tmp_path):
    net = _trained_mlp()
    f = str(tmp_path / "mlp.params")
    net.save_parameters(f)

    class Bigger(MLP):
        def __init__(self, **kwargs):
            super().__init__(**kwargs)
            with self.name_scope():
                self.head = Dense(2, in_units=3)

    big = Bigger()
    with pytest.raises(ValueError, match=r"'head\.weight' is missing in file.*allow_missing"):
        big.load_parameters(f)
    big.load_parameters(f, allow_missing=True)
    numpy.testing.assert_array_equal(big.out.weight.data().asnumpy(),
                                     net.out.weight.data().asnumpy())

    class Smaller(HybridBlock):
        def __init__(self, **kwargs):
            super().__init__(**kwargs)
            with self.name_scope():
                self.out = Dense(3)

    small = Smaller()
    with pytest.raises(ValueError, match=r"'features\.0\.weight'.*not present.*ignore_extra"):
        small.load_parameters(f)
    small.load_parameters(f, ignore_extra=True)
    assert small.out.weight.shape == (3, 6)


def test_load_parameters_shape_mismatch_names_both_shapes(tmp_path):
    net = _trained_mlp()
    f = str(tmp_path / "mlp.params")
    net.save_parameters(f)
    wrong = MLP()
    wrong.out = Dense(3, in_units=7)
    with pytest.raises(ValueError, match=r"'out\.weight'.*expected \(3, 7\) vs saved \(3, 6\)"):
        wrong.load_parameters(f)


def test_load_parameters_dtype(tmp_path):
    net = _trained_mlp()
    f = str(tmp_path / "mlp.params")
    net.save_parameters(f)
    half = MLP()
    half.cast("float16")
    with pytest.raises(ValueError, match="dtype incompatible.*cast_dtype=True"):
        half.load_parameters(f)
    half.load_parameters(f, cast_dtype=True)
    assert half.out.weight.dtype == numpy.float16
    saved = MLP()
    saved.cast("float16")
    saved.load_parameters(f, cast_dtype=True, dtype_source="saved")
    assert saved.out.weight.dtype == numpy.float32


def test_save_parameters_deduplicate_and_shared_params(tmp_path):
    class Tied(HybridBlock):
        def __init__(self, **kwargs):
            super().__init__(**kwargs)
            with self.name_scope():
                self.a = Dense(4, in_units=4)
                self.b = Dense(4, in_units=4, params=self.a.collect_params())

        def hybrid_forward(self, F, x):
            return self.b(self.a(x))

    net = Tied()
    assert net.b.weight is net.a.weight
    net.initialize()
    f = str(tmp_path / "tied.params")
    net.save_parameters(f, deduplicate=True)
    assert sorted(serialization.load(f)) == ["a.bias", "a.weight"]
    other = Tied()
    other.load_parameters(f)  # the shared parameter is found under one of its names
    numpy.testing.assert_array_equal(other.b.weight.data().asnumpy(),
                                     net.a.weight.data().asnumpy())
    net.save_parameters(f)
    assert sorted(serialization.load(f)) == ["a.bias", "a.weight", "b.bias", "b.weight"]


def test_load_parameters_legacy_names(tmp_path):
    net = Dense(3, in_units=2, prefix="fc_")
    net.initialize()
    f = str(tmp_path / "legacy.params")
    net.collect_params().save(f, strip_prefix="fc_")  # names without structure
    other = Dense(3, in_units=2, prefix="other_")
    other.load_parameters(f)
    numpy.testing.assert_array_equal(other.weight.data().asnumpy(),
                                     net.weight.data().asnumpy())


def test_single_block_with_a_direct_parameter_round_trips(tmp_path):
    class Scale(HybridBlock):
        def __init__(self, **kwargs):
            super().__init__(**kwargs)
            self.alpha = Parameter("alpha", shape=(2,), init="ones")

        def hybrid_forward(self, F, x, alpha):
            return x * alpha

    a = Scale(prefix="a_")
    a.initialize()
    a.alpha.set_data(nd.array([2.0, 3.0]))
    f = str(tmp_path / "scale.params")
    a.save_parameters(f)
    assert list(serialization.load(f)) == ["alpha"]
    b = Scale(prefix="b_")
    b.load_parameters(f)
    assert b(nd.ones((2,))).asnumpy().tolist() == [2.0, 3.0]


def test_save_parameters_of_uninitialized_block_fails(tmp_path):
    with pytest.raises(RuntimeError, match="has not been initialized"):
        Dense(2, in_units=2).save_parameters(str(tmp_path / "x.params"))


def test_share_parameters():
    src = _trained_mlp()
    dst = MLP()
    dst.share_parameters(src._collect_params_with_prefix())
    assert dst.out.weight is src.out.weight
    assert dst.out.weight in dst.collect_params().values()
    x = _x()
    numpy.testing.assert_array_equal(src(x).asnumpy(), dst(x).asnumpy())
    with pytest.warns(UserWarning, match="nothing.weight"):
        dst.share_parameters({"nothing.weight": src.out.weight})


# --------------------------------------------------------------------------- other Block API

def test_hooks_and_detach():
    net = Dense(2, in_units=3)
    net.initialize()
    calls = []
    pre = net.register_forward_pre_hook(lambda b, inputs: calls.append(("pre", len(inputs))))
    post = net.register_forward_hook(lambda b, inputs, out: calls.append(("post", out.shape)))
    net(nd.ones((4, 3)))
    assert calls == [("pre", 1), ("post", (4, 2))]
    pre.detach()
    net(nd.ones((1, 3)))
    assert calls[-1] == ("post", (1, 2)) and len(calls) == 3
    with post:
        pass
    net(nd.ones((1, 3)))
    assert len(calls) == 3
    post.detach()  # twice is fine


def test_summary_prints_layers_and_totals(capsys):
    net = MLP()
    net.initialize()
    net.out.weight.grad_req = "null"
    net.summary(nd.ones((2, 5)))
    out = capsys.readouterr().out
    assert "Layer (type)" in out and "Output Shape" in out and "Param #" in out
    assert re.search(r"Input\s+\(2, 5\)\s+0", out)
    assert re.search(r"Dense-1\s+\(2, 8\)\s+48", out)
    assert re.search(r"Dense-3\s+\(2, 3\)\s+21", out)
    assert "HybridSequential" not in out.split("=" * 80)[1]
    total = 48 + 54 + 21
    assert f"Total params: {total}" in out
    assert f"Trainable params: {total - 18}" in out
    assert "Non-trainable params: 18" in out
    assert not net.out._forward_hooks  # the summary's hooks are gone


def test_apply_cast_zero_grad_initialize_verbose(caplog):
    net = MLP()
    names = []
    net.apply(lambda b: names.append(type(b).__name__))
    assert names == ["Dense", "Dense", "HybridSequential", "Dense", "MLP"]
    with caplog.at_level("INFO"):
        net.initialize("xavier", verbose=True)
        net(nd.ones((2, 5)))
    assert any("Initialized" in r.message for r in caplog.records)
    with autograd.record():
        y = net(nd.ones((2, 5)))
    y.backward(nd.ones_like(y))
    net.zero_grad()
    assert all(float(abs(p.grad()).sum().item()) == 0 for p in net.collect_params().values())
    net.cast("float64")
    assert net(nd.ones((2, 5), dtype="float64")).dtype == numpy.float64


def test_plain_block_with_parameters_and_children():
    class Affine(Block):
        def __init__(self, **kwargs):
            super().__init__(**kwargs)
            with self.name_scope():
                self.scale = self.params.get("scale", shape=(1,), init="ones")
                self.act = Lambda("relu")

        def forward(self, x):
            return self.act(x) * self.scale.data(x.context)

    net = Affine(prefix="affine_")
    net.initialize()
    assert list(net.collect_params()) == ["affine_scale"]
    assert net(nd.array([-1.0, 2.0])).asnumpy().tolist() == [0.0, 2.0]


# --------------------------------------------------------------------------- containers

def test_sequential_getitem_len_and_tuples():
    net = Sequential(prefix="seq_")
    with net.name_scope():
        net.add(Lambda(lambda x: (x, x * 2)), Lambda(lambda a, b: a + b), Lambda("relu"))
    assert len(net) == 3 and isinstance(net[1], Lambda)
    head = net[:2]
    assert type(head) is Sequential and len(head) == 2 and head.prefix == "seq_"
    assert head[0] is net[0]
    assert net(nd.array([-1.0, 1.0])).asnumpy().tolist() == [0.0, 3.0]
    pair = net[:1](nd.array([1.0]))
    assert isinstance(pair, tuple) and pair[1].asnumpy().tolist() == [2.0]


def test_hybrid_sequential_and_warning_for_sequential_of_hybrid_blocks():
    hs = HybridSequential()
    hs.add(Dense(3), Dense(2))
    hs.initialize()
    assert hs(nd.ones((1, 4))).shape == (1, 2)
    assert type(hs[1:]) is HybridSequential
    seq = Sequential()
    seq.add(Dense(3))
    with pytest.warns(UserWarning, match="Consider using HybridSequential"):
        seq.hybridize()


def test_lambdas():
    assert repr(Lambda("tanh")) == "Lambda(tanh)"
    assert repr(HybridLambda(lambda F, x: x)) == "HybridLambda(<lambda>)"
    with pytest.raises(ValueError, match="not_an_op"):
        Lambda("not_an_op")
    with pytest.raises(ValueError, match="not_an_op"):
        HybridLambda("not_an_op")
    with pytest.raises(ValueError, match="Unrecognized function"):
        Lambda(3)
    x = nd.array([[-1.0, 2.0]])
    assert HybridLambda("softmax")(x).shape == (1, 2)
    assert HybridLambda(lambda F, a, b: F.broadcast_add(a, b))(x, x).asnumpy().tolist() == \
        [[-2.0, 4.0]]


def test_lazy_submodules():
    assert gluon.init.Xavier is initializer.Xavier
    assert gluon.utils.split_and_load is not None
    with pytest.raises(AttributeError, match="no attribute 'nothing'"):
        gluon.nothing  # noqa: B018


@pytest.mark.parametrize("module", ["gluon", "gluon.block", "gluon.parameter",
                                    "gluon.containers", "gluon.utils", "gluon.init"])
def test_docstring_examples(module):
    import importlib

    flags = doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE
    res = doctest.testmod(importlib.import_module(module), optionflags=flags)
    assert res.failed == 0
