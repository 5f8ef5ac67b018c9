"""The CUDA sources of the project's CuPy kernels, for compiling them without a GPU.

CuPy builds an ``ElementwiseKernel``'s CUDA source only when it is launched, from the
arguments' dtypes. This module lists every kernel the project declares and generates,
with CuPy's own code generator, the source a launch would compile, so that a test can
compile each one with NVRTC on a machine without a GPU or driver
(``tests/gpu/test_kernels_compile.py``). Nothing here launches anything, and the
launching code does not use this module.

- :func:`declared_kernels`: every module-level ``*_KERNEL`` in ``core`` and ``gluon``:
  an ``ElementwiseKernel``'s ``(in_params, out_params, body, name)`` (the form
  ``core.cuda.elementwise`` and ``core.optimizer._fused.launch`` take), or a
  ``RawKernel``'s whole CUDA source (a ``str``, compiled as it is).
- :func:`launch_types`: the type placeholders' dtypes as CuPy's launch decides them
  (scalars bind none); :func:`elementwise_code` the source CuPy generates for them.
- :func:`compile_ptx`: NVRTC, with the options CuPy compiles its kernels with;
  :func:`nvrtc_missing` says what is missing to run it (None when nothing is).

Example:
    >>> spec = ("G g, T lr", "P w", "w = (P)((T)w - lr * (T)g);", "kb_half")
    >>> declared_kernels()["core.optimizer.adam._ADAM_KERNEL"][3]
    'kb_adam_update'
    >>> param_types(spec)
    (('G', 'T'), ('P',))
"""
from __future__ import annotations

import importlib
import pathlib
import re

import numpy

__all__ = ["compile_ptx", "declared_kernels", "elementwise_code", "launch_types",
           "nvrtc_missing", "optimizer_type_cases", "param_types"]

_ROOT = pathlib.Path(__file__).resolve().parent.parent
_PACKAGES = ("core", "gluon")
_SPEC_NAME = re.compile(r"^([A-Z_][A-Z0-9_]*_KERNEL)\s*[:=]", re.MULTILINE)  # module level


def declared_kernels() -> dict:
    """Every kernel declared at module level in ``core`` and ``gluon``.

    A module-level name ending in ``_KERNEL`` is bound to an ``ElementwiseKernel`` spec
    ``(in_params, out_params, body, name)`` or to a ``RawKernel``'s source (a ``str``);
    only modules whose text declares such a name are imported.

    Returns:
        ``{"<module>.<NAME>": spec or source}``.

    Raises:
        TypeError: for a ``*_KERNEL`` name bound to anything else (the compile test
            cannot generate its source; extend this module for it).
    """
    found = {}
    for pkg in _PACKAGES:
        for path in sorted((_ROOT / pkg).rglob("*.py")):
            text = path.read_text(encoding="utf-8")
            names = _SPEC_NAME.findall(text)
            if not names:
                continue
            rel = path.relative_to(_ROOT).with_suffix("")
            modname = ".".join(rel.parts[:-1] if rel.name == "__init__" else rel.parts)
            mod = importlib.import_module(modname)
            for name in names:
                spec = getattr(mod, name)
                if not (isinstance(spec, str) or isinstance(spec, tuple) and len(spec) == 4
                        and all(isinstance(s, str) for s in spec)):
                    raise TypeError(f"kernel_sources: {modname}.{name} is neither an "
                                    f"ElementwiseKernel spec (in_params, out_params, "
                                    f"body, name) nor a RawKernel source (str): "
                                    f"{type(spec).__name__}")
                found[f"{modname}.{name}"] = spec
    return found


def _params(s: str) -> list:
    return [p.split() for p in s.split(",") if p.strip()]


def param_types(spec: tuple) -> tuple:
    """The type (placeholder or dtype name) of each input and each output of ``spec``.

    Args:
        spec: ``(in_params, out_params, body, name)``.

    Returns:
        ``(input types, output types)``, e.g. ``(('G', 'T'), ('P',))``.
    """
    return (tuple(p[-2] for p in _params(spec[0])),
            tuple(p[-2] for p in _params(spec[1])))


def optimizer_type_cases(spec: tuple) -> list:
    """The dtypes ``core.optimizer._fused.launch`` runs a spec with: ``P`` and ``G`` the
    weight's dtype (float16, float32, float64; also a float16 gradient for a float32
    weight), ``T`` the weight's compute dtype.

    Args:
        spec: ``(in_params, out_params, body, name)``.

    Returns:
        A list of ``{placeholder: numpy.dtype}``.
    """
    from .optimizer.optimizer import compute_dtype

    pairs = [("float16", "float16"), ("float32", "float32"), ("float64", "float64"),
             ("float32", "float16")]
    return [{"P": numpy.dtype(w), "G": numpy.dtype(g), "T": compute_dtype(w)}
            for w, g in pairs]


def launch_types(spec: tuple, arrays: dict, scalars=()) -> dict:
    """The placeholders' dtypes as CuPy's ``ElementwiseKernel.__call__`` decides them.

    Only arrays bind a placeholder (CuPy casts scalars to it), so a placeholder used by
    scalars alone is an error at launch; this reproduces that without a GPU.

    Args:
        spec: ``(in_params, out_params, body, name)``.
        arrays: ``{placeholder: dtype}`` of the array arguments.
        scalars: the placeholders that only scalar arguments have (not binding).

    Returns:
        ``{placeholder: numpy.dtype}``.

    Raises:
        TypeError: naming the kernel and the placeholders no array binds.
    """

    ins, outs = param_types(spec)
    kern = _kernel_of(spec)
    in_dt = tuple(None if t in scalars else _resolve(t, arrays) for t in ins)
    out_dt = tuple(_resolve(t, arrays) for t in outs)
    try:
        _, _, type_map = kern._decide_params_type(in_dt, out_dt)
    except KeyError as e:
        raise TypeError(f"kernel {spec[3]}: CuPy cannot type placeholder {e} at launch: "
                        f"no array argument binds it (arrays {in_dt}, outputs "
                        f"{out_dt})") from None
    return {k: numpy.dtype(v) for k, v in type_map._pairs}


def _kernel_of(spec: tuple):
    """CuPy's ElementwiseKernel for ``(in, out, body, name[, preamble])``."""
    import cupy

    return cupy.ElementwiseKernel(*spec[:4], preamble=spec[4] if len(spec) > 4 else "")


def _resolve(t: str, types: dict):
    return numpy.dtype(types[t]) if t in types else numpy.dtype(t)


def elementwise_code(spec: tuple, types: dict, scalars=(), ndim: int = 1,
                     index_32_bits: bool = True) -> str:
    """The CUDA source CuPy generates to launch ``spec`` with these placeholder types.

    Args:
        spec: ``(in_params, out_params, body, name)``.
        types: ``{placeholder: dtype}`` for every placeholder of the spec.
        scalars: the input placeholders passed as scalars (CuPy ``CScalar``s).
        ndim: the arrays' dimensions after CuPy reduces them (1: contiguous arrays;
            more: strided or broadcast ones, not C-contiguous).
        index_32_bits: False for arrays too large for 32-bit indexing.

    Returns:
        The kernel's source, CuPy's headers included, ready for :func:`compile_ptx`.
    """
    import cupy
    from cupy._core import _carray, _kernel, _scalar
    from cupy._core import core as cupy_core

    kern = _kernel_of(spec)
    ins, outs = param_types(spec)
    placeholders = {t for t in ins + outs if t in types}
    type_map = _kernel._TypeMap(tuple(sorted((t, numpy.dtype(types[t]))
                                             for t in placeholders)))
    infos = []
    for i, t in enumerate(ins + outs):
        d = _resolve(t, types)
        if i < len(ins) and t in scalars:
            infos.append(_kernel._ArgInfo(3, _scalar.CScalar, d, 0, True, True))
        else:
            infos.append(_kernel._ArgInfo(1, cupy.ndarray, d, ndim, ndim == 1,
                                          index_32_bits))
    infos.append(_kernel._ArgInfo(2, _carray.Indexer, None, ndim, True, index_32_bits))
    code = _kernel._get_elementwise_kernel_code(tuple(infos), type_map, kern.params,
                                                kern.operation, kern.name, kern.preamble)
    headers = "".join(f"#include <{h}>\n" for h in cupy_core._cupy_header_list)
    return headers + code


def nvrtc_missing() -> str | None:
    """What :func:`compile_ptx` lacks here (CuPy, NVRTC, the CUDA headers), or None.

    Returns:
        A sentence naming the missing piece and the package that brings it, or None.
    """
    try:
        import cupy  # noqa: F401
        from cupy._core import core as cupy_core
    except Exception as e:  # noqa: BLE001 - ImportError, or a broken install
        return f"needs CuPy (pip install cupy-cuda13x): {e}"
    try:
        from cupy_backends.cuda.libs import nvrtc

        nvrtc.getVersion()
    except Exception as e:  # noqa: BLE001 - libnvrtc missing or unloadable
        return f"needs NVRTC (pip install nvidia-cuda-nvrtc): {e}"
    try:
        cupy_core.assemble_cupy_compiler_options(())
    except RuntimeError as e:
        return f"needs the CUDA headers (pip install nvidia-cuda-runtime): {e}"
    return None


def compile_ptx(source: str, name: str, arch: str = "compute_80") -> bytes:
    """Compile ``source`` to PTX with NVRTC (no GPU needed), with CuPy's options.

    Args:
        source: CUDA C++ (e.g. from :func:`elementwise_code`).
        name: the kernel's name (for the error).
        arch: the virtual architecture.

    Returns:
        The PTX.

    Raises:
        RuntimeError: naming the kernel, with NVRTC's log and the source.
    """
    from cupy._core import core as cupy_core
    from cupy_backends.cuda.libs import nvrtc

    opts = cupy_core.assemble_cupy_compiler_options(()) + ("-ftz=true", "--device-as-default-execution-space", f"-arch={arch}")
    prog = nvrtc.createProgram(source, f"{name}.cu", [], [])
    try:
        nvrtc.compileProgram(prog, list(opts))
        return nvrtc.getPTX(prog)
    except nvrtc.NVRTCError as e:
        log = nvrtc.getProgramLog(prog)
        raise RuntimeError(f"kernel {name}: NVRTC failed ({e}):\n{log}\n--- source ---\n"
                           f"{source}") from None
    finally:
        nvrtc.destroyProgram(prog)
