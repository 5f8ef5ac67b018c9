"""gluon.compat.mxnet: the opt-in ``import mxnet`` alias, its refusal to shadow a real
MXNet, and uninstall()."""
import importlib
import subprocess
import sys
import textwrap

import numpy
import pytest

from gluon.compat import mxnet as alias


@pytest.fixture
def installed():
    was = alias.is_installed()
    alias.install()
    yield
    if not was:
        alias.uninstall()


def test_submodules_are_the_kbackend_modules(installed):
    import mxnet as mx
    from mxnet import autograd, init, nd, np, npx
    from mxnet import gluon as mx_gluon
    from mxnet.gluon import loss, model_zoo, nn, rnn, utils
    from mxnet.gluon.data.vision import transforms

    import core
    import gluon

    assert np is core.np and npx is core.npx and nd is core.nd
    assert autograd is core.autograd and mx_gluon is gluon
    assert nn is gluon.nn and rnn is gluon.rnn and loss is gluon.loss
    assert utils is gluon.utils and model_zoo is gluon.model_zoo
    assert transforms is gluon.data.vision.transforms
    assert init is gluon.init and mx.initializer is gluon.init
    assert importlib.import_module("mxnet.gluon.model_zoo.vision") is gluon.model_zoo.vision
    assert mx.cpu(1) == core.cpu(1) and mx.gpu(0) == core.gpu(0)
    assert mx.context.num_gpus() == core.num_gpus()
    assert mx.device.current_device() == core.current_context()
    assert mx.Device is core.Context
    assert mx.profiler is core.profiler and mx.kvstore is core.kvstore
    assert mx.__kbackend_alias__ is True
    # the real modules keep their own names and specs
    assert core.np.__name__ == "core.np" and core.np.__spec__.name == "core.np"
    assert sys.modules["mxnet.np"] is core.np


def test_every_alias_imports(installed):
    for name, target in alias.ALIASES.items():
        assert importlib.import_module(f"mxnet.{name}") is importlib.import_module(target)


def test_mxnet_code_runs_unchanged(installed):
    import mxnet as mx
    from mxnet import autograd, gluon, np, npx
    from mxnet.gluon import nn

    npx.set_np()
    try:
        net = nn.Sequential()
        net.add(nn.Dense(4, activation="relu"), nn.Dense(1))
        net.initialize(mx.init.Xavier())
        trainer = gluon.Trainer(net.collect_params(), "sgd", {"learning_rate": 0.1})
        X = np.random.normal(size=(16, 3))
        y = X.sum(axis=1, keepdims=True)
        losses = []
        for _ in range(20):
            with autograd.record():
                loss = ((net(X) - y) ** 2).mean()
            loss.backward()
            trainer.step(1)
            losses.append(float(loss))
        assert losses[-1] < losses[0] / 2
        assert isinstance(net[0].weight.data(), mx.np.ndarray)
    finally:
        npx.reset_np()


def test_unknown_submodule_names_the_alias(installed):
    with pytest.raises(ModuleNotFoundError, match="no counterpart in kbackend's mxnet alias"):
        import mxnet.contrib.quantization
    with pytest.raises(ModuleNotFoundError, match="gluon.not_a_module"):
        import mxnet.gluon.not_a_module
    import mxnet

    with pytest.raises(AttributeError, match="has no attribute 'rtc'"):
        mxnet.rtc  # noqa: B018


def test_install_is_idempotent_and_uninstall_removes_it():
    was = alias.is_installed()
    try:
        alias.install()
        alias.install()
        assert sum(isinstance(f, alias._Finder) for f in sys.meta_path) == 1
        import mxnet.gluon.nn

        alias.uninstall()
        assert not alias.is_installed()
        assert not any(n == "mxnet" or n.startswith("mxnet.") for n in sys.modules)
        assert not any(isinstance(f, alias._Finder) for f in sys.meta_path)
        assert "gluon.nn" in sys.modules  # the kbackend modules stay
        with pytest.raises(ModuleNotFoundError):
            import mxnet  # noqa: F401
    finally:
        if was:
            alias.install()


def _run(code: str, tmp_path, with_fake_mxnet: bool) -> subprocess.CompletedProcess:
    """Run ``code`` in a fresh interpreter, optionally with a fake 'real' MXNet importable."""
    env_path = [str(tmp_path)] if with_fake_mxnet else []
    if with_fake_mxnet:
        pkg = tmp_path / "mxnet"
        pkg.mkdir(parents=True)
        (pkg / "__init__.py").write_text("REAL = True\n")
    prelude = f"import sys; sys.path[:0] = {env_path!r}\n"
    return subprocess.run([sys.executable, "-c", prelude + textwrap.dedent(code)],
                          check=False, capture_output=True, text=True, timeout=120)


def test_real_mxnet_is_never_shadowed_by_accident(tmp_path):
    out = _run("""
        from gluon.compat import mxnet as alias
        try:
            alias.install()
        except RuntimeError as e:
            print("refused:", e)
        import mxnet
        print("real:", getattr(mxnet, "REAL", False))
        """, tmp_path, with_fake_mxnet=True)
    assert out.returncode == 0, out.stderr
    assert "refused:" in out.stdout and "install(force=True)" in out.stdout
    assert "real: True" in out.stdout


def test_force_shadows_an_importable_mxnet_but_never_an_imported_one(tmp_path):
    out = _run("""
        from gluon.compat import mxnet as alias
        alias.install(force=True)
        import mxnet
        print("alias:", mxnet.__kbackend_alias__)
        """, tmp_path / "a", with_fake_mxnet=True)
    assert out.returncode == 0, out.stderr
    assert "alias: True" in out.stdout
    out = _run("""
        import mxnet
        from gluon.compat import mxnet as alias
        try:
            alias.install(force=True)
        except RuntimeError as e:
            print("refused:", e)
        """, tmp_path / "b", with_fake_mxnet=True)
    assert out.returncode == 0, out.stderr
    assert "refused:" in out.stdout and "already imported" in out.stdout


def test_alias_lives_in_this_process_only(installed, tmp_path):
    out = _run("import mxnet", tmp_path, with_fake_mxnet=False)
    assert out.returncode != 0 and "No module named 'mxnet'" in out.stderr


def test_mxnet2_training_script_runs_unchanged(installed, tmp_path):
    import mxnet as mx
    from mxnet import autograd, gluon, np, npx
    from mxnet.gluon import nn
    from mxnet.gluon.data.vision import transforms
    from mxnet.gluon.model_zoo import vision

    npx.set_np()
    try:
        mx.random.seed(42)
        device = mx.cpu()
        X = np.random.uniform(size=(64, 1, 8, 8))
        y = (X.reshape(64, -1).mean(axis=1) > 0.5).astype("int32")
        loader = gluon.data.DataLoader(gluon.data.ArrayDataset(X, y), batch_size=16,
                                       shuffle=True, last_batch="rollover")
        net = nn.HybridSequential()
        net.add(nn.Conv2D(8, 3, activation="relu"), nn.MaxPool2D(), nn.Flatten(), nn.Dense(2))
        net.initialize(mx.init.Xavier(), ctx=device)
        net.hybridize()
        trainer = gluon.Trainer(net.collect_params(), "adam", {"learning_rate": 1e-2})
        loss_fn = gluon.loss.SoftmaxCrossEntropyLoss()
        metric = gluon.metric.Accuracy()
        losses = []
        for _ in range(4):
            metric.reset()
            for data, label in loader:
                data, label = data.to_device(device), label.to_device(device)
                with autograd.record():
                    loss = loss_fn(net(data), label)
                loss.backward()
                trainer.step(data.shape[0])
                metric.update(label, net(data))
                losses.append(float(loss.mean()))
        npx.waitall()
        assert sum(losses[-4:]) < sum(losses[:4])
        net.export(str(tmp_path / "net"), epoch=0)
        back = gluon.SymbolBlock.imports(str(tmp_path / "net-symbol.json"), ["data"],
                                         str(tmp_path / "net-0000.params"), ctx=device)
        mx.test_utils.assert_almost_equal(back(X[:4]), net(X[:4]), rtol=1e-5, atol=1e-6)
        resnet = vision.resnet18_v1(classes=10)
        resnet.initialize()
        assert resnet(np.ones((1, 3, 32, 32))).shape == (1, 10)
        assert transforms.ToTensor()(np.ones((4, 4, 3), dtype="uint8")).dtype == numpy.float32
    finally:
        npx.reset_np()


def test_d2l_builders_guide_code_runs(installed, tmp_path):
    """The notebook code of d2l's MXNet "Builders' Guide" (parameters, custom layers,
    file I/O, lazy initialization, hybridize and export), unchanged."""
    from mxnet import gluon, init, np, npx
    from mxnet.gluon import nn

    npx.set_np()
    try:
        net = nn.Sequential()
        net.add(nn.Dense(8, activation="relu"))
        net.add(nn.Dense(1))
        assert all(p.shape[-1] == 0 for p in net.collect_params().values()
                   if p.name.endswith("weight"))  # lazy: input size unknown
        net.initialize()
        X = np.random.uniform(size=(2, 4))
        assert net(X).shape == (2, 1)
        assert float(net[1].bias.data()[0]) == 0
        assert len(net.collect_params(".*weight")) == 2
        net.initialize(init=init.Normal(sigma=0.01), force_reinit=True)
        assert float(np.abs(net[0].weight.data()).max()) < 0.1
        seen = []

        class MyInit(init.Initializer):
            def _init_weight(self, name, data):
                seen.append((name, data.shape))
                data[:] = np.random.uniform(-10, 10, data.shape)
                data *= np.abs(data) >= 5

        net.initialize(MyInit(), force_reinit=True)
        assert [s for _, s in seen] == [(8, 4), (1, 8)]
        w = net[0].weight.data()
        assert bool(((np.abs(w) >= 5) | (w == 0)).all())
        net[0].weight.data()[:] += 1
        net[0].weight.data()[0, 0] = 42
        assert float(net[0].weight.data()[0, 0]) == 42

        shared = nn.Dense(8, activation="relu")
        net = nn.Sequential()
        net.add(nn.Dense(8, activation="relu"), shared, shared, nn.Dense(10))
        net.initialize()
        net(X)
        net[1].weight.data()[0, 0] = 100
        assert float(net[2].weight.data()[0, 0]) == 100

        class CenteredLayer(nn.Block):
            def forward(self, X):
                return X - X.mean()

        assert CenteredLayer()(np.array([1.0, 2, 3, 4, 5])).asnumpy().tolist() == [
            -2, -1, 0, 1, 2]

        class MyDense(nn.Block):
            def __init__(self, units, in_units, **kwargs):
                super().__init__(**kwargs)
                self.weight = self.params.get("weight", shape=(in_units, units))
                self.bias = self.params.get("bias", shape=(units,))

            def forward(self, x):
                linear = np.dot(x, self.weight.data(ctx=x.ctx)) + self.bias.data(ctx=x.ctx)
                return npx.relu(linear)

        dense = MyDense(units=3, in_units=5)
        dense.initialize()
        assert dense(np.random.uniform(size=(2, 5))).shape == (2, 3)

        x, y = np.arange(4), np.zeros(4)
        npx.save(str(tmp_path / "x-file"), x)
        assert npx.load(str(tmp_path / "x-file"))[0].asnumpy().tolist() == [0, 1, 2, 3]
        npx.save(str(tmp_path / "mydict"), {"x": x, "y": y})
        assert sorted(npx.load(str(tmp_path / "mydict"))) == ["x", "y"]
        net.save_parameters(str(tmp_path / "mlp.params"))
        clone = nn.Sequential()
        clone.add(nn.Dense(8, activation="relu"), nn.Dense(8, activation="relu"),
                  nn.Dense(8, activation="relu"), nn.Dense(10))
        clone.load_parameters(str(tmp_path / "mlp.params"))
        assert bool((clone(X) == net(X)).all())

        net = nn.HybridSequential()
        net.add(nn.Dense(16, activation="relu"), nn.Dense(2))
        net.initialize()
        x = np.random.normal(size=(1, 8))
        eager = net(x)
        net.hybridize()
        assert bool((np.abs(net(x) - eager) < 1e-6).all())
        net.export(str(tmp_path / "my_mlp"))
        assert (tmp_path / "my_mlp-symbol.json").is_file()
        assert isinstance(gluon.SymbolBlock.imports(str(tmp_path / "my_mlp-symbol.json"),
                                                    ["data"]), gluon.SymbolBlock)
    finally:
        npx.reset_np()


def test_util_and_base(installed):
    from mxnet import npx
    from mxnet.base import MXNetError
    from mxnet.util import np_array, np_shape, use_np

    assert issubclass(MXNetError, RuntimeError)
    npx.reset_np()
    npx.set_np(dtype=True)
    try:
        with np_array(False):
            assert not npx.is_np_array() and npx.is_np_shape()
        assert npx.is_np_array() and npx.is_np_default_dtype()
        with np_shape(False):
            assert not npx.is_np_shape() and not npx.is_np_array()
        assert npx.is_np_shape() and npx.is_np_array() and npx.is_np_default_dtype()
    finally:
        npx.reset_np()

    @use_np
    def f():
        return npx.is_np_array()

    assert f() is True
