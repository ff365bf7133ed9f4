#!/usr/bin/python3
"""Store a dintattn model's weight matrices as Q8 (or Q4) in the file.

    /usr/bin/python3 tools/quantize.py [--q4] IN.safetensors OUT.safetensors

Every weight matrix (embeddings, LM head, attention and FFN projections, Shared-DIFF factors
except the small *_up ones) whose rows are a multiple of 32 long becomes two tensors:
  Q8 (the default): I8 NAME [rows, cols], one int8 a weight
  Q4 (--q4):        U8 NAME [rows, cols / 2], 16 bytes a block of 32 weights, byte j holding
                    nibble j (low 4 bits) and nibble j + 16 (high 4 bits), weight = scale * (n - 8)
and F32 NAME.scale [rows, cols / 32], quantized exactly as the engine quantizes at load
(weights = DINTATTN_WEIGHTS_Q8 / _Q4; docs/format.md section 4), so that
loading OUT as stored gives the logits of loading IN with Q8 (Q4) weights. Everything else is
copied as it is; matrices already stored quantized are refused. The engine reads the Q8 and Q4
matrices in place. Streams in bounded memory: the header first, then one tensor at a time, a
matrix a few million elements at a time (a 12.7B model quantizes in well under 1 GB; needs
python3-numpy).
"""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import make_model  # noqa: E402


def main(argv):
    args = [a for a in argv[1:] if a != "--q4"]
    fmt = "q4" if len(args) < len(argv) - 1 else "q8"
    if len(args) != 2 or any(a.startswith("-") for a in args):
        sys.stderr.write(__doc__.split("\n\n")[1] + "\n")
        return 2
    try:
        make_model.write_quantized_file(args[0], args[1], fmt)
    except (OSError, ValueError, AssertionError) as e:
        sys.stderr.write("quantize: %s\n" % (e or "not a model with finite weights"))
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
