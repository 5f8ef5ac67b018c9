"""``python -m gluon.compat.caffe deploy.prototxt weights.caffemodel prefix``.

Writes ``<prefix>-symbol.json`` and ``<prefix>-0000.params`` (MXNet's
``convert_model.py prototxt caffemodel save_model_name``) and prints what it wrote.
Exit status 0 on success, 1 with a one-line message on standard error otherwise.
"""
from __future__ import annotations

import argparse
import sys

from .convert import convert_model


def main(argv: list | None = None) -> int:
    """Run the converter's command line.

    Args:
        argv: the arguments (default ``sys.argv[1:]``).

    Returns:
        The exit status.
    """
    parser = argparse.ArgumentParser(
        prog="python -m gluon.compat.caffe",
        description="Convert a Caffe model (prototxt + caffemodel) to MXNet's "
                    "<prefix>-symbol.json and <prefix>-0000.params.")
    parser.add_argument("prototxt", help="the network definition (deploy.prototxt)")
    parser.add_argument("caffemodel", help="the trained weights (.caffemodel)")
    parser.add_argument("save_model_name", help="the output prefix")
    args = parser.parse_args(argv)
    try:
        symbol, arg_params, aux_params, input_dim = convert_model(
            args.prototxt, args.caffemodel, args.save_model_name)
    except (OSError, ValueError) as e:
        print(f"error: {e}", file=sys.stderr)
        return 1
    prefix = args.save_model_name
    print(f"input {symbol.list_inputs()[0]!r} shape {tuple(input_dim or ())}, outputs "
          f"{symbol.list_outputs()}")
    print(f"wrote {prefix}-symbol.json")
    print(f"wrote {prefix}-0000.params ({len(arg_params)} arg, {len(aux_params)} aux "
          "arrays)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
