#!/usr/bin/env bash
# Build real MXNet 1.9.1 in its own virtual environment: a test reference only (the tests
# that load our files in MXNet, or MXNet's files in ours, run scripts there through
# tests/mxnet_ref.py). MXNet 1.9.1 needs numpy<1.24. Usage: bash tests/mxnet_venv.sh [DIR]
# (default ~/.cache/kbackend/mxnet-1.9.1, where tests/mxnet_ref.py looks).
set -euo pipefail
dir="${1:-$HOME/.cache/kbackend/mxnet-1.9.1}"
# onnx for MXNet's own ONNX export/import (mx.onnx, mx.contrib.onnx): 1.14.1 still has
# onnx.mapping, which MXNet 1.9 uses, and wheels for numpy 1.23 and Python 3.11
onnx_pkgs=("onnx==1.14.1" "protobuf<4.22")
if [ -x "$dir/bin/python" ] && "$dir/bin/python" -c "import mxnet" >/dev/null 2>&1; then
    "$dir/bin/python" -c "import onnx" >/dev/null 2>&1 ||
        "$dir/bin/python" -m pip install -q "${onnx_pkgs[@]}" || true
    echo "mxnet venv: $dir (already built)"
    exit 0
fi
python3 -m venv "$dir"
"$dir/bin/python" -m pip install -q "numpy<1.24" "mxnet==1.9.1"
"$dir/bin/python" -m pip install -q "${onnx_pkgs[@]}" || echo "mxnet venv: no onnx (optional)"
"$dir/bin/python" -c "import mxnet; print('mxnet venv:', '$dir', 'mxnet', mxnet.__version__)"
