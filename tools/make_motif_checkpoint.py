#!/usr/bin/python3
"""A Motif Hugging Face checkpoint with random weights in the real shapes, written in bounded memory.

    /usr/bin/python3 tools/make_motif_checkpoint.py OUTDIR --size 12.7b|2.6b [--layers N]
        [--vocab V] [--seed S] [--dtype bf16|f32] [--shard-gb 5] [--std 0.02] [--max-seq-len N]

OUTDIR gets what `save_pretrained` writes for a Motif model: config.json (model_type "motif",
the keys tools/layouts/motif.py reads), model-0000k-of-0000n.safetensors shards of at most
--shard-gb x 10^9 bytes (tensors in module order, a new shard when the next tensor would not
fit; inside a shard the data sorted by name, header {"__metadata__": {"format": "pt"}} first,
padded to 8 bytes, as the safetensors library writes) and model.safetensors.index.json
({"metadata": {"total_size"}, "weight_map"}, sorted, indent 2). A single shard is written as
model.safetensors without an index.

Shapes (--layers and --vocab override the depth and the vocabulary, e.g. for a depth-truncated
logit check):

  12.7b  Motif-2-12.7B: hidden 4096, 40 layers, Grouped DIFF: num_attention_heads 40 (8 groups of
         4 signal + 1 noise heads: 32 signal, 8 noise, G = 4), num_noise_heads 8,
         num_key_value_heads 16 (d-wide sub-heads: 8 (k1, k2) pairs), head_dim 128,
         intermediate 16384, rope_theta 1e6, untied LM head (12.70 B parameters).
  2.6b   Motif-2.6B: hidden 2048, 32 layers, vanilla DIFF: num_attention_heads 16 and
         num_key_value_heads 16 (d-wide sub-heads: 8 heads of (q1, q2), 8 (k1, k2) pairs),
         head_dim 128, intermediate 8192, rope_theta 500000, tied embeddings (2.60 B parameters).
  Both: vocab_size 219520 (Motif-2.6B's published config; used for 12.7b too), PolyNorm MLP,
  rms_norm_eps 1e-6, attn_rms_norm_eps 1e-5.

Weights: every matrix normal(0, 0.02) (HF initializer_range; --std), norm and subln weights 1, lambdas
normal(0, 0.1), PolyNorm weight [1/3, 1/3, 1/3] and bias 0 (Motif's initialisation), so the
activations stay finite through all the layers. Each tensor draws from its own generator
(seed, tensor index), so the values do not depend on the sharding. One chunk of rows is held at
a time: memory stays at about 200 MB whatever the size.
"""

import json
import os
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import cli  # noqa: E402
import safetensors_io  # noqa: E402

SIZES = {
    "12.7b": dict(hidden_size=4096, num_hidden_layers=40, intermediate_size=16384,
                  num_attention_heads=40, num_noise_heads=8, num_key_value_heads=16, head_dim=128,
                  rope_theta=1000000.0, tie_word_embeddings=False, max_position_embeddings=16384),
    "2.6b": dict(hidden_size=2048, num_hidden_layers=32, intermediate_size=8192,
                 num_attention_heads=16, num_key_value_heads=16, head_dim=128,
                 rope_theta=500000.0, tie_word_embeddings=True, max_position_embeddings=16384),
}
VOCAB = 219520
CHUNK = 1 << 23          # elements generated and written at a time (32 MB of float32)


def make_config(size, layers=None, vocab=None, dtype="bf16", max_seq_len=None):
    s = dict(SIZES[size])
    c = {"architectures": ["MotifForCausalLM"], "model_type": "motif",
         "auto_map": {"AutoConfig": "configuration_motif.MotifConfig",
                      "AutoModelForCausalLM": "modeling_motif.MotifForCausalLM"},
         "vocab_size": int(vocab or VOCAB), "hidden_act": "poly_norm", "rms_norm_eps": 1e-06,
         "attn_rms_norm_eps": 1e-05, "initializer_range": 0.02, "rope_scaling": None,
         "attention_dropout": 0.0, "use_bias": False, "use_cache": True,
         "torch_dtype": "bfloat16" if dtype == "bf16" else "float32"}
    c.update(s)
    if c.get("num_noise_heads") is not None:
        c["k_ratio"] = 1
    if layers is not None:
        c["num_hidden_layers"] = int(layers)
    if max_seq_len is not None:
        c["max_position_embeddings"] = int(max_seq_len)
    return c


def plan(c, std=0.02):
    """[(name, shape, init)] in module order; init: ("normal", std) or ("const", value)."""
    D, F, V = c["hidden_size"], c["intermediate_size"], c["vocab_size"]
    S, KVs, d = c["num_attention_heads"], c["num_key_value_heads"], c["head_dim"]
    N = c.get("num_noise_heads")
    H = S // 2 if N is None else S - N          # signal heads, each with a 2d-wide value
    w = ("normal", std)
    out = [("model.embed_tokens.weight", (V, D), w)]
    for L in range(c["num_hidden_layers"]):
        p = "model.layers.%d." % L
        out += [
            (p + "self_attn.q_proj.weight", (S * d, D), w),
            (p + "self_attn.k_proj.weight", (KVs * d, D), w),
            (p + "self_attn.v_proj.weight", (KVs * d, D), w),
            (p + "self_attn.o_proj.weight", (D, H * 2 * d), w),
        ]
        for lam in ("lambda_q1", "lambda_k1", "lambda_q2", "lambda_k2"):
            out.append((p + "self_attn." + lam, (d,), ("normal", 0.1)))
        out += [
            (p + "self_attn.subln.weight", (2 * d,), ("const", 1.0)),
            (p + "mlp.gate_proj.weight", (F, D), w),
            (p + "mlp.up_proj.weight", (F, D), w),
            (p + "mlp.down_proj.weight", (D, F), w),
            (p + "mlp.act_fn.weight", (3,), ("const", 1.0 / 3)),
            (p + "mlp.act_fn.bias", (1,), ("const", 0.0)),
            (p + "input_layernorm.weight", (D,), ("const", 1.0)),
            (p + "post_attention_layernorm.weight", (D,), ("const", 1.0)),
        ]
    out.append(("model.norm.weight", (D,), ("const", 1.0)))
    if not c.get("tie_word_embeddings"):
        out.append(("lm_head.weight", (V, D), w))
    return out


def _count(shape):
    n = 1
    for s in shape:
        n *= int(s)
    return n


def bf16_bytes(a):
    """float32 chunk (finite; modified in place) -> bf16 bytes, round to nearest even, as
    safetensors_io.f32_to_bf16_bits without its NaN case (there are none here)."""
    b = a.view(np.uint32)
    r = b >> np.uint32(16)
    r &= np.uint32(1)
    r += np.uint32(0x7FFF)
    r += b
    r >>= np.uint32(16)
    return r.astype("<u2").tobytes()


def stream_tensor(f, init, shape, st_dtype, rng):
    """Writes one tensor's data, CHUNK elements at a time."""
    n = _count(shape)
    kind, val = init
    buf = np.empty(min(n, CHUNK), dtype=np.float32)
    done = 0
    while done < n:
        k = min(CHUNK, n - done)
        a = buf[:k]
        if kind == "normal":
            rng.standard_normal(out=a, dtype=np.float32)
            a *= np.float32(val)
        else:
            a.fill(np.float32(val))
        if st_dtype == "BF16":
            f.write(bf16_bytes(a))
        else:
            f.write(a.astype("<f4", copy=False).tobytes())
        done += k


def shard(entries, itemsize, max_bytes):
    """HF's rule: tensors in order, a new shard when the next one would overflow a non-empty one."""
    shards, cur, size = [], [], 0
    for e in entries:
        nb = _count(e[1]) * itemsize
        if cur and size + nb > max_bytes:
            shards.append(cur)
            cur, size = [], 0
        cur.append(e)
        size += nb
    if cur:
        shards.append(cur)
    return shards


def write_checkpoint(outdir, c, dtype="bf16", seed=0, shard_gb=5.0, log=None, std=0.02):
    st_dtype = {"bf16": "BF16", "f32": "F32"}[dtype]
    isz = safetensors_io.itemsize(st_dtype)
    os.makedirs(outdir, exist_ok=True)
    entries = plan(c, std)
    index_of = {e[0]: i for i, e in enumerate(entries)}
    shards = shard(entries, isz, int(shard_gb * 1e9))
    n = len(shards)
    wmap = {}
    total = 0
    for si, part in enumerate(shards):
        fn = "model.safetensors" if n == 1 else "model-%05d-of-%05d.safetensors" % (si + 1, n)
        part = sorted(part, key=lambda e: e[0])
        head = safetensors_io.header_bytes([(name, st_dtype, shape) for name, shape, _ in part],
                                           {"format": "pt"})
        path = os.path.join(outdir, fn)
        with open(path + ".tmp", "wb") as f:
            f.write(head)
            for name, shape, init in part:
                rng = np.random.default_rng([seed, index_of[name]])
                stream_tensor(f, init, shape, st_dtype, rng)
                wmap[name] = fn
                total += _count(shape) * isz
        os.replace(path + ".tmp", path)
        if log:
            log("%s: %d tensors, %.2f GB" % (fn, len(part), os.path.getsize(path) / 1e9))
    if n > 1:
        with open(os.path.join(outdir, "model.safetensors.index.json"), "w") as f:
            json.dump({"metadata": {"total_size": total}, "weight_map": wmap}, f, indent=2, sort_keys=True)
            f.write("\n")
    with open(os.path.join(outdir, "config.json"), "w") as f:
        json.dump(c, f, indent=2, sort_keys=True)
        f.write("\n")
    return total, sum(_count(e[1]) for e in entries)


def main(argv=None):
    ap = cli.parser(__doc__, ["/usr/bin/python3 tools/make_motif_checkpoint.py /tmp/motif --size 2.6b --layers 2 "
                              "--vocab 512"])
    ap.add_argument("outdir", help="the Hugging Face directory to write")
    ap.add_argument("--size", choices=sorted(SIZES), required=True, help="the real model whose shapes to use")
    ap.add_argument("--layers", type=int, default=None, help="num_hidden_layers (default: the real depth)")
    ap.add_argument("--vocab", type=int, default=None, help="vocab_size (default %d)" % VOCAB)
    ap.add_argument("--seed", type=int, default=0, help="the random weights' seed (any integer)")
    ap.add_argument("--dtype", choices=("bf16", "f32"), default="bf16", help="the shards' weight type")
    ap.add_argument("--shard-gb", type=float, default=5.0, help="largest shard, in 10^9 bytes (default 5)")
    ap.add_argument("--std", type=float, default=0.02,
                    help="standard deviation of the weight matrices (default 0.02)")
    ap.add_argument("--max-seq-len", type=int, default=None,
                    help="max_position_embeddings (default 16384)")
    a = ap.parse_args(argv)
    if a.layers is not None and a.layers < 1 or a.vocab is not None and a.vocab < 1 or a.shard_gb <= 0:
        ap.error("--layers, --vocab and --shard-gb must be positive")
    c = make_config(a.size, a.layers, a.vocab, a.dtype, a.max_seq_len)
    nbytes, params = write_checkpoint(a.outdir, c, a.dtype, a.seed, a.shard_gb,
                                      log=lambda m: sys.stderr.write(m + "\n"), std=a.std)
    sys.stderr.write("%s: Motif %s, %d layers, vocab %d: %.3f B parameters, %.2f GB of %s\n"
                     % (a.outdir, a.size, c["num_hidden_layers"], c["vocab_size"], params / 1e9,
                        nbytes / 1e9, a.dtype))
    return 0


if __name__ == "__main__":
    sys.exit(main())
