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
import cli  # noqa: E402


def main(argv):
    ap = cli.parser(__doc__, ["/usr/bin/python3 tools/quantize.py model.safetensors model-q8.safetensors",
                              "/usr/bin/python3 tools/quantize.py --q4 model.safetensors model-q4.safetensors"],
                    full=True)
    ap.add_argument("src", metavar="IN.safetensors", help="a dintattn model file (F32, F16 or BF16 weights)")
    ap.add_argument("dst", metavar="OUT.safetensors", help="the file to write")
    ap.add_argument("--q4", action="store_true", help="4-bit weights (Q4) instead of 8-bit (Q8, the default)")
    a = ap.parse_args(argv[1:])
    try:
        import make_model  # numpy: only after --help, which works without it
        make_model.write_quantized_file(a.src, a.dst, "q4" if a.q4 else "q8")
    except (OSError, ValueError, AssertionError) as e:
        sys.stderr.write("quantize: %s\n" % (e or "not a model with finite weights"))
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
