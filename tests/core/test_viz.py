"""core.viz: plot_network (DOT source, SVG rendering) and print_summary."""
import shutil
import sys

import graphviz  # a dev dependency (pyproject.toml); rendering also needs the dot program
import pytest

from core import nd
from core.symbol.trace import Tracer
from core.viz import plot_network, print_summary


def _cnn():
    with Tracer() as t:
        x = t.variable("data", (2, 1, 8, 8), "float32")
        cw = t.variable("conv0_weight", (4, 1, 3, 3), "float32")
        cb = t.variable("conv0_bias", (4,), "float32")
        fw = t.variable("dense0.weight", (10, 64), "float32")
        fb = t.variable("dense0.bias", (10,), "float32")
        c = nd.Convolution(x, cw, cb, kernel=(3, 3), pad=(1, 1), num_filter=4)
        a = nd.Activation(c, act_type="relu")
        p = nd.Pooling(a, kernel=(2, 2), stride=(2, 2), pool_type="max")
        f = nd.flatten(p)
        y = nd.FullyConnected(f, fw, fb, num_hidden=10)
        out = nd.softmax(y * 0.5 + nd.ones((10,)))
    return t.graph([out])


def test_dot_source_has_the_nodes():
    dot = plot_network(_cnn(), title="cnn", save_format="svg")
    assert isinstance(dot, graphviz.Digraph)
    src = dot.source
    assert src.startswith("digraph cnn")
    for label in ["Convolution\n3x3/1, 4", "Activation\nrelu", "Pooling\nmax, 2x2/2x2",
                  "FullyConnected\n10", "flatten", "softmax"]:
        assert label in src, label
    assert "data" in src
    assert "conv0_weight" not in src and "dense0.weight" not in src  # hidden
    assert "_const" not in src
    assert "40 params" in src and "650 params" in src  # 4*9+4, 64*10+10
    # output shapes on the edges, without the batch dimension (MXNet)
    assert 'label="4x8x8"' in src and 'label="4x4x4"' in src and "label=64" in src
    assert dot.format == "svg"


def test_dot_with_weights_and_shapes():
    dot = plot_network(_cnn(), shape={"data": (5, 1, 8, 8)}, hide_weights=False,
                       node_attrs={"fixedsize": "false"})
    src = dot.source
    assert '"dense0.weight"' in src and "conv0_weight" in src and "_const" in src
    assert "fixedsize=false" in src
    assert "label=4x8x8" in src.replace('"', "")


def test_plot_errors():
    with pytest.raises(TypeError, match="expects a Symbol or a Graph"):
        plot_network("nope")
    with pytest.raises(ValueError, match="no input named 'x'"):
        plot_network(_cnn(), shape={"x": (1, 2)})


@pytest.mark.skipif(shutil.which("dot") is None, reason="graphviz's dot program is missing")
def test_render_svg(tmp_path):
    dot = plot_network(_cnn(), title="net", save_format="svg", shape={"data": (2, 1, 8, 8)})
    svg = dot.pipe(format="svg").decode("utf-8")
    assert svg.lstrip().startswith("<?xml") or "<svg" in svg
    for name in ["data", "convolution0", "activation0", "pooling0", "flatten0",
                 "fullyconnected0", "softmax0"]:
        assert f"<title>{name}</title>" in svg, name
    path = dot.render(filename="net", directory=str(tmp_path), cleanup=True)
    assert path.endswith(".svg") and (tmp_path / "net.svg").exists()


def test_print_summary(capsys):
    print_summary(_cnn())
    out = capsys.readouterr().out
    lines = out.splitlines()
    assert lines[0] == "_" * 120
    assert lines[1].startswith("Layer (type)") and "Output Shape" in lines[1]
    assert "Param #" in lines[1] and "Previous Layer" in lines[1]
    conv = next(ln for ln in lines if ln.startswith("convolution0(Convolution)"))
    assert conv.split()[1:] == ["4x8x8", "40", "data"]
    fc = next(ln for ln in lines if ln.startswith("fullyconnected0(FullyConnected)"))
    assert fc.split()[1:] == ["10", "650", "flatten0"]
    add = next(ln for ln in lines if ln.startswith("add0(add)"))
    assert add.split()[1:] == ["10", "0", "multiply0"]  # the constant is not a layer
    assert "Total params: 690" in out
    assert lines[-1] == "_" * 120


def test_summary_without_shape_inference_module(capsys, monkeypatch):
    # The forward rules alone (each operator's infer) give the same table for a trace.
    print_summary(_cnn(), shape={"data": (3, 1, 8, 8)})
    expected = capsys.readouterr().out
    monkeypatch.setitem(sys.modules, "core.symbol.shape_infer", None)  # import fails
    print_summary(_cnn(), shape={"data": (3, 1, 8, 8)})
    assert capsys.readouterr().out == expected
    assert "4x8x8" in plot_network(_cnn()).source


def test_inconsistent_shape_is_an_error():
    with pytest.raises(ValueError, match="(?i)convolution|fullyconnected"):
        print_summary(_cnn(), shape={"data": (2, 1, 16, 16)})


def test_print_summary_shape_and_width(capsys):
    print_summary(_cnn(), shape={"data": (7, 1, 8, 8)}, line_length=80,
                  positions=(.5, .7, .8, 1.))
    out = capsys.readouterr().out
    assert all(len(ln) <= 80 for ln in out.splitlines())
    conv = next(ln for ln in out.splitlines() if ln.startswith("convolution0"))
    assert "4x8x8" in conv
    with pytest.raises(ValueError, match="4 column ends"):
        print_summary(_cnn(), positions=(.5, 1.))


def test_print_summary_multiple_inputs(capsys):
    with Tracer() as t:
        a = t.variable("a", (2, 3), "float32")
        b = t.variable("b", (2, 3), "float32")
        y = nd.Concat(a, b, dim=1)
    print_summary(t.graph([y]))
    out = capsys.readouterr().out
    rows = [ln for ln in out.splitlines() if ln and ln[0] not in "_="]
    i = next(k for k, ln in enumerate(rows) if "(concatenate)" in ln)
    assert rows[i].split()[-1] == "a" and rows[i + 1].strip() == "b"


def test_summary_of_loaded_mxnet_json(capsys):
    from core.symbol.json_io import graph_from_json
    from tests.core.symbol.test_json_io import MXNET_MLP

    g = graph_from_json(MXNET_MLP)
    print_summary(g, shape={"data": (2, 2, 3), "softmax_label": (2,)})
    out = capsys.readouterr().out
    fc1 = next(ln for ln in out.splitlines() if ln.startswith("fc1(FullyConnected)"))
    assert fc1.split()[1:3] == ["4", "28"]  # 6*4 + 4
    assert "Total params: 40" in out  # + 4*3
    src = plot_network(g, shape={"data": (2, 2, 3)}).source
    assert "FullyConnected\n4\n28 params" in src


def test_symbol_input(capsys):
    from core.symbol import symbol

    sym = symbol.Symbol.from_graph(_cnn())
    print_summary(sym)
    assert "Total params: 690" in capsys.readouterr().out
    assert "FullyConnected\n10" in plot_network(sym).source
