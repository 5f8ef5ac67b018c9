"""ONNX files written by PyTorch's exporter (an outside producer, with its shape
arithmetic, Constant nodes and its LSTM/GRU layout) import and give PyTorch's outputs."""
from __future__ import annotations

import io
import warnings

import numpy as np
import pytest

onnx = pytest.importorskip("onnx")
torch = pytest.importorskip("torch")

from tests.core.onnx.test_import_ops import run_ours


class Recurrent(torch.nn.Module):
    """Embedding -> bidirectional batch-first LSTM -> GRU -> LayerNorm -> Linear -> softmax."""

    def __init__(self):
        super().__init__()
        self.emb = torch.nn.Embedding(20, 8)
        self.lstm = torch.nn.LSTM(8, 6, batch_first=True, bidirectional=True)
        self.gru = torch.nn.GRU(12, 5)
        self.ln = torch.nn.LayerNorm(5)
        self.fc = torch.nn.Linear(5, 3)

    def forward(self, tok):
        h, _ = self.lstm(self.emb(tok))
        g, _ = self.gru(h.transpose(0, 1))
        return self.fc(self.ln(g)).softmax(-1)


class Conv(torch.nn.Module):
    """Conv/BN/ReLU, ceil-mode and padded pooling, a grouped and a transposed convolution."""

    def __init__(self):
        super().__init__()
        self.body = torch.nn.Sequential(
            torch.nn.Conv2d(3, 8, 3, padding=1), torch.nn.BatchNorm2d(8), torch.nn.ReLU6(),
            torch.nn.MaxPool2d(2, ceil_mode=True), torch.nn.Conv2d(8, 8, 3, groups=4),
            torch.nn.AvgPool2d(3, stride=2, padding=1, count_include_pad=False),
            torch.nn.ConvTranspose2d(8, 4, 3, stride=2, padding=1, output_padding=1),
            torch.nn.Hardswish(), torch.nn.AdaptiveAvgPool2d(1), torch.nn.Flatten(),
            torch.nn.Linear(4, 5))

    def forward(self, x):
        return self.body(x)


class Attention(torch.nn.Module):
    """A transformer encoder layer (multi-head attention, GELU feed-forward)."""

    def __init__(self):
        super().__init__()
        self.layer = torch.nn.TransformerEncoderLayer(16, 4, 32, dropout=0.0,
                                                      activation="gelu", batch_first=True)

    def forward(self, x):
        return self.layer(x)


def _export(net, args, names, opset):
    f = io.BytesIO()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        torch.onnx.export(net, args, f, opset_version=opset, dynamo=False, input_names=names)
    return onnx.load_from_string(f.getvalue())


MODELS = {
    "recurrent": (Recurrent, lambda: (torch.randint(0, 20, (2, 7)),), ["tok"]),
    "conv": (Conv, lambda: (torch.randn(2, 3, 11, 11),), ["x"]),
    "attention": (Attention, lambda: (torch.randn(2, 5, 16),), ["x"]),
}
# PyTorch exports attention from opset 14 only
CASES = [(m, o) for m in ("recurrent", "conv") for o in (11, 13, 17)] + \
    [("attention", 14), ("attention", 17)]


@pytest.mark.parametrize("name,opset", CASES, ids=[f"{m}-{o}" for m, o in CASES])
def test_torch_export_imports(name, opset):
    build, make_args, names = MODELS[name]
    torch.manual_seed(0)
    net = build().eval()
    for m in net.modules():
        if isinstance(m, torch.nn.BatchNorm2d):
            m.running_mean.uniform_(-0.5, 0.5)
            m.running_var.uniform_(0.5, 1.5)
    args = make_args()
    with torch.no_grad():
        want = net(*args).numpy()
    model = _export(net, args, names, opset)
    got = run_ours(model, {n: a.numpy() for n, a in zip(names, args)})[0]
    np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-5)


@pytest.mark.parametrize("name", ["conv", "recurrent"])
def test_dynamic_batch(name):
    """Exported with a dynamic batch axis: Shape values carry it to Reshape's 0 and to
    ConstantOfShape (the LSTM's zero states); one import runs at several batch sizes."""
    build, make_args, names = MODELS[name]
    torch.manual_seed(0)
    net = build().eval()
    args = make_args()
    f = io.BytesIO()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        torch.onnx.export(net, args, f, opset_version=17, dynamo=False, input_names=names,
                          dynamic_axes={names[0]: {0: "batch"}})
    model = onnx.load_from_string(f.getvalue())
    from core import nd
    from core.onnx import import_graph

    sym, params, aux = import_graph(model)
    for reps in (1, 3):
        x = torch.cat([args[0]] * reps)
        with torch.no_grad():
            want = net(x).numpy()
        exe = sym.bind(None, args={names[0]: nd.array(x.numpy(), dtype=x.numpy().dtype),
                                   **params}, aux_states=aux, grad_req="null")
        got = exe.forward(is_train=False)[0].asnumpy()
        np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-5)


def test_dynamic_shape_arithmetic_is_explained():
    build, make_args, names = MODELS["attention"]
    net, args = build().eval(), make_args()
    f = io.BytesIO()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        torch.onnx.export(net, args, f, opset_version=17, dynamo=False, input_names=names,
                          dynamic_axes={names[0]: {0: "batch"}})
    from core.onnx import import_graph

    with pytest.raises(ValueError, match=r"computes with dimension \d of .*unknown when the "
                                         r"model is imported"):
        import_graph(onnx.load_from_string(f.getvalue()))
