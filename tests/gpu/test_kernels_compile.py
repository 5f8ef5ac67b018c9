"""Every CUDA kernel the project declares or generates compiles with NVRTC, without a GPU.

Runs wherever CuPy, NVRTC and the CUDA headers are installed (CI installs
``cupy-cuda13x``, ``nvidia-cuda-nvrtc`` and ``nvidia-cuda-runtime``); no GPU or driver
is needed, so these tests carry no ``gpu`` marker. Each kernel's source is the one CuPy would generate at launch
(``core.kernel_sources``): the fused optimizer kernels for each weight dtype, the fused
elementwise kernels (one per fused form and input dtype, and those the fusion pass makes
for representative graphs). A compile error fails the test naming the kernel.
"""
import pathlib
import re

import numpy as np
import pytest

from core import kernel_sources as ks
from core import nd
from core.ops import fused as fz
from core.ops.fusible import FusionByAttr
from core.ops.registry import REGISTRY, Aval
from core.optimizer._fused import launch_spec
from core.symbol.passes import fusion
from core.symbol.trace import Tracer

_MISSING = ks.nvrtc_missing()
if _MISSING:
    pytest.skip(_MISSING, allow_module_level=True)

_DTYPES = ("bool", "int8", "uint8", "int32", "int64", "float16", "float32", "float64")
_ROOT = pathlib.Path(__file__).resolve().parents[2]
try:
    _FOUND, _FOUND_ERROR = ks.declared_kernels(), None
except TypeError as e:  # reported by test_declared_kernels_found
    _FOUND, _FOUND_ERROR = {}, e
_DECLARED = {k: v for k, v in _FOUND.items() if isinstance(v, tuple)}
_RAW = {k: v for k, v in _FOUND.items() if isinstance(v, str)}


def _compile(spec, types, scalars=()):
    src = ks.elementwise_code(spec, types, scalars=scalars)
    ptx = ks.compile_ptx(src, spec[3])
    assert f".entry {spec[3]}" in ptx.decode(errors="replace"), spec[3]


def test_declared_kernels_found():
    assert _FOUND_ERROR is None, str(_FOUND_ERROR)
    names = {spec[3] for spec in _DECLARED.values()}
    assert {"kb_sgd_update", "kb_adam_update", "kb_lamb_phase1"} <= names
    assert len(names) == len(_DECLARED), "two specs share a kernel name"


@pytest.mark.parametrize("key", sorted(_DECLARED))
def test_optimizer_kernel_compiles(key):
    """What ``launch`` gives CuPy (``launch_spec``: T written out) compiles."""
    spec = _DECLARED[key]
    for types in ks.optimizer_type_cases(spec):
        launched = launch_spec(spec, types["T"])
        _compile(launched, types, scalars=(types["T"].name,))


@pytest.mark.parametrize("key", sorted(_DECLARED))
def test_optimizer_kernel_types_at_launch(key):
    """CuPy decides every placeholder of the launched kernel from the arrays launch
    passes (P, G; T is concrete), as ``cupy.ElementwiseKernel.__call__`` does."""
    spec = _DECLARED[key]
    for types in ks.optimizer_type_cases(spec):
        launched = launch_spec(spec, types["T"])
        arrays = {k: v for k, v in types.items() if k != "T"}
        got = ks.launch_types(launched, arrays)
        assert got == arrays, (spec[3], got, arrays)


def test_a_placeholder_only_scalars_have_is_undecided():
    """Why launch_spec exists: CuPy cannot type T from scalars alone."""
    spec = _DECLARED["core.optimizer.sgd._SGD_KERNEL"]
    types = ks.optimizer_type_cases(spec)[1]
    with pytest.raises(TypeError, match="cannot type placeholder"):
        ks.launch_types(spec, {k: v for k, v in types.items() if k != "T"}, scalars=("T",))


@pytest.mark.parametrize("key", sorted(_RAW) or [pytest.param(None, marks=pytest.mark.skip(
    reason="no RawKernel source is declared"))])
def test_raw_kernel_compiles(key):
    ks.compile_ptx(_RAW[key], key.rsplit(".", 1)[-1])


# Where the project builds CuPy kernels, and which test here compiles what each builds.
_SITES = {
    ("core/cuda.py", "ElementwiseKernel("): "the factory the two sites below call",
    ("core/optimizer/_fused.py", "cuda.elementwise("): "test_optimizer_kernel_compiles",
    ("core/ops/fused.py", "cuda.elementwise("): "test_every_fused_form_compiles",
    ("core/kernel_sources.py", "ElementwiseKernel("): "source generation, never launched",
}
_SITE = re.compile(r"(?:ElementwiseKernel|ReductionKernel|RawKernel|RawModule|"
                   r"cuda\.elementwise|cuda\.reduction|cuda\.raw\w*|\bfuse|rawkernel)\(")


def test_no_kernel_site_unchecked():
    """A new place that builds a CuPy kernel must get its sources compiled here."""
    found = set()
    for pkg in ("core", "gluon", "kbackend"):
        for path in sorted((_ROOT / pkg).rglob("*.py")):
            rel = path.relative_to(_ROOT).as_posix()
            for m in _SITE.finditer(path.read_text(encoding="utf-8")):
                found.add((rel, m.group(0)))
    new = sorted(found - set(_SITES))
    assert not new, (f"kernels built at {new}: compile their sources in "
                     f"tests/gpu/test_kernels_compile.py (see core.kernel_sources)")


def test_launch_types_names_the_kernel():
    spec = ("G g, T lr", "P w", "w = (P)((T)w - lr * (T)g);", "kb_probe")
    with pytest.raises(TypeError, match="kb_probe.*'T'"):
        ks.launch_types(spec, {"P": "float32", "G": "float32"}, scalars=("T",))


def test_compile_error_names_the_kernel():
    spec = ("T x", "T y", "y = undefined_function(x);", "kb_broken")
    with pytest.raises(RuntimeError, match="kernel kb_broken: NVRTC failed"):
        _compile(spec, {"T": np.dtype("float32")})


# ------------------------------------------------------------ fused elementwise kernels
def _fused_source(program, dtypes, outputs=-1):
    in_p, out_p, body = fz.kernel_source(program, tuple(np.dtype(d) for d in dtypes),
                                         outputs)
    return (in_p, out_p, body, fz.kernel_name(in_p, out_p, body))


def _table_programs():
    """One single-step program per fused form and input dtype (as tests/gpu/test_fused_gpu)."""
    for op in REGISTRY.values():
        form = op.fusion
        if form is None:
            continue
        forms = [((form.attr, v),) for v in form.forms] if isinstance(form, FusionByAttr) \
            else [None]
        nin = len(op.inputs)
        args = (("in", 0),) if nin == 1 else (("in", 0), ("in", 1))
        for attrs in forms:
            for d in _DTYPES:
                if fz.can_fuse(op.name, [Aval((), d)] * nin, dict(attrs or ())):
                    step = (op.name, args) if attrs is None else (op.name, args, attrs)
                    yield (step,), (d,) * nin


def test_every_fused_form_compiles():
    """All single-step kernels in one NVRTC program per input dtype (fast); a failing
    program is compiled kernel by kernel to name the kernel."""
    by_dtype = {}
    for program, dtypes in _table_programs():
        spec = _fused_source(program, dtypes)  # the name is the source's hash
        by_dtype.setdefault(dtypes[0], {})[spec[3]] = spec
    assert sum(map(len, by_dtype.values())) > 100
    for d, named in by_dtype.items():
        specs = list(named.values())
        codes = [ks.elementwise_code(s, {}) for s in specs]
        unit = "\n".join(codes)
        try:
            ks.compile_ptx(unit, f"fused_forms_{d}")
        except RuntimeError:
            for s in specs:
                _compile(s, {})
            raise


def _graphs():
    """Representative graphs: what the fusion pass makes of them is compiled."""
    def mlp_act(t):
        x = t.variable("x", (256, 64), "float32")
        w = t.variable("w", (64,), "float32")
        return [nd.Activation(x * w + 0.5, act_type="softrelu") - nd.sigmoid(x)]

    def half_chain(t):
        x = t.variable("x", (8, 16), "float16")
        b = t.variable("b", (16,), "float16")
        return [nd.tanh(nd.relu(x + b) * 0.1) + 1]

    def two_outputs(t):
        x = t.variable("x", (4, 5), "float64")
        y = nd.exp(x * 2.0)
        return [y + 1, y > 3.0]

    def int_and_cast(t):
        x = t.variable("x", (6,), "int32")
        y = nd.cast(x * 3, dtype="float32")
        return [nd.sqrt(nd.abs(y - 1.5))]

    def gelu_like(t):
        x = t.variable("x", (32,), "float32")
        return [0.5 * x * (1 + nd.tanh(0.79788456 * (x + 0.044715 * x * x * x)))]

    return {"mlp_act": mlp_act, "half_chain": half_chain, "two_outputs": two_outputs,
            "int_and_cast": int_and_cast, "gelu_like": gelu_like}


@pytest.mark.parametrize("name", sorted(_graphs()))
def test_fusion_pass_kernels_compile(name):
    with Tracer() as t:
        heads = _graphs()[name](t)
    g = fusion.run(t.graph(heads))
    nodes = [n for n in g.topo() if n.op_name == "_fused_elemwise"]
    assert nodes, f"{name}: the fusion pass fused nothing"
    for n in nodes:
        dtypes = [e.node.avals[e.index].dtype for e in n.inputs]
        spec = _fused_source(n.attrs["program"], dtypes, n.attrs.get("outputs", -1))
        _compile(spec, {})  # contiguous arrays
        # broadcast or strided arrays, too large for 32-bit indices
        src = ks.elementwise_code(spec, {}, ndim=3, index_32_bits=False)
        ks.compile_ptx(src, spec[3])
