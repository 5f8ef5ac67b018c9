"""core.contrib: the nd/sym aliases, DataLoaderIter and the modules left out."""
import numpy as np
import pytest

from core import contrib, nd
from core.contrib.io import DataLoaderIter


def test_nd_and_sym_are_nd_contrib_and_sym_contrib():
    from core.nd import contrib as nd_contrib
    from core.symbol import contrib as sym_contrib

    assert contrib.nd is contrib.ndarray and contrib.sym is contrib.symbol
    assert contrib.nd.isnan is nd_contrib.isnan
    assert contrib.sym.CTCLoss is sym_contrib.CTCLoss
    with pytest.raises(AttributeError, match="no operator 'nope'"):
        contrib.nd.nope  # noqa: B018


@pytest.mark.parametrize("name", ["quantization", "quant"])
def test_left_out_modules_raise_module_not_found(name):
    with pytest.raises(ModuleNotFoundError, match=f"mx.contrib.{name}"):
        getattr(contrib, name)


def test_alias_resolves_mxnet_contrib():
    from gluon.compat import mxnet as alias

    was = alias.is_installed()
    alias.install(force=True)
    try:
        import mxnet
        import mxnet.contrib.autograd as mca

        assert mca is contrib.autograd
        assert mxnet.contrib is contrib
        with pytest.raises(ModuleNotFoundError, match="core.contrib.quantization"):
            import mxnet.contrib.quantization
    finally:
        if not was:
            alias.uninstall()


def test_dataloader_iter_pads_the_last_batch_and_resets():
    batches = [(nd.ones((3, 2)), nd.array([0, 1, 2])), (nd.ones((2, 2)) * 7, nd.array([3, 4]))]
    it = DataLoaderIter(batches, data_name="x", label_name="y")
    assert it.batch_size == 3
    assert it.provide_data[0].name == "x" and it.provide_data[0].shape == (3, 2)
    assert it.provide_label[0].name == "y" and it.provide_label[0].shape == (3,)
    got = list(it)
    assert [b.pad for b in got] == [0, 1]
    np.testing.assert_allclose(got[1].data[0].asnumpy()[:2], 7.0)
    np.testing.assert_allclose(got[1].label[0].asnumpy()[:2], [3, 4])
    assert got[1].data[0].shape == (3, 2) and got[1].data[0].dtype == np.float32
    it.reset()
    assert len(list(it)) == 2


def test_dataloader_iter_rejects_empty_and_unpaired_loaders():
    with pytest.raises(ValueError, match="yields no batch"):
        DataLoaderIter([])
    with pytest.raises(ValueError, match=r"\(data, label\) pair"):
        DataLoaderIter([(nd.ones((2,)),)])


def test_log_metrics_callback_writes_scalars_and_needs_a_writer(monkeypatch):
    import sys
    import types

    from core import metric
    from core.contrib import tensorboard

    logged = []

    class Writer:
        def __init__(self, logdir):
            self.logdir = logdir

        def add_scalar(self, name, value, global_step):
            logged.append((name, value, global_step))

    monkeypatch.setitem(sys.modules, "mxboard", types.SimpleNamespace(SummaryWriter=Writer))
    mse = metric.MSE()
    mse.update([nd.array([1.0, 2.0])], [nd.array([1.0, 4.0])])
    cb = tensorboard.LogMetricsCallback("logs")
    cb(types.SimpleNamespace(eval_metric=mse, epoch=3))
    cb(types.SimpleNamespace(eval_metric=None, epoch=4))
    assert logged == [("mse", 2.0, 3)] and cb.summary_writer.logdir == "logs"
    for name in tensorboard._WRITERS:
        monkeypatch.setitem(sys.modules, name, None)
    with pytest.raises(ImportError, match="pip install mxboard"):
        tensorboard.LogMetricsCallback("logs")
