"""Executor.debug_str and Executor.get_optimized_symbol (core.symbol.executor_info)."""
import re

import numpy as np

from core import cpu, nd, sym


def _mb(exe):
    return int(re.search(r"Total (\d+) MB allocated", exe.debug_str()).group(1))


def _chain():
    x = sym.Variable("data")
    for _ in range(6):
        x = x * x
    return x


def test_debug_str_lists_the_graph_and_the_memory_estimate():
    exe = _chain().simple_bind(ctx=cpu(), data=(4, 256, 256))
    text = exe.debug_str()
    assert text.startswith("Symbol Outputs:\n\toutput[0]=")
    assert "Variable:data" in text and "Op:multiply" in text
    big = _mb(exe)
    small = _mb(_chain().simple_bind(ctx=cpu(), data=(4, 256, 256), grad_req="null"))
    stopped = _mb(sym.stop_gradient(_chain()).simple_bind(ctx=cpu(), data=(4, 256, 256)))
    assert big > small > 0
    assert stopped == small  # zero gradients need no backward arrays (MXNet's zero_prop)


def _internals(exe):
    return len(exe.get_optimized_symbol().get_internals().list_outputs())


def test_get_optimized_symbol_eliminates_common_expressions(monkeypatch):
    a, b = sym.Variable("a"), sym.Variable("b")
    cases = [((a + 1) + (a + 2), 0), ((a + b) + (a + b), 1),
             (((a + b) + a) + ((a + b) + a), 2)]
    d = a + 1
    cases += [(sym.Group([a * d, a * d]), 0), (sym.Group([a * d + b, a * d + b]), 1)]
    for s, saved in cases:
        shapes = {n: (2, 3) for n in s.list_arguments()}
        monkeypatch.setenv("MXNET_ELIMINATE_COMMON_EXPR", "0")
        orig = s.simple_bind(ctx=cpu(), **shapes)
        monkeypatch.setenv("MXNET_ELIMINATE_COMMON_EXPR", "1")
        merged = s.simple_bind(ctx=cpu(), **shapes)
        monkeypatch.delenv("MXNET_ELIMINATE_COMMON_EXPR")  # the switch is read at bind
        assert _internals(orig) == _internals(merged) + saved, s.list_outputs()
        vals = {n: nd.array(np.arange(6.0).reshape(2, 3) + i) for i, n in enumerate(shapes)}
        for o, m in zip(orig.forward(**vals), merged.forward(**vals)):
            np.testing.assert_array_equal(o.asnumpy(), m.asnumpy())


def test_random_operators_are_never_merged():
    a = sym.Variable("a")
    s = sym.Dropout(a) + sym.Dropout(a)
    exe = s.simple_bind(ctx=cpu(), a=(2, 3))
    assert _internals(exe) == len(s.get_internals().list_outputs())
