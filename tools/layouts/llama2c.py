"""llama2.c checkpoints (karpathy/llama2.c, run.c; fp32 legacy "version 0" or version-1 export).

run.c's forward, per layer: x += wo @ attn(rope(wq @ rmsnorm(x, rms_att)), rope(wk @ ...), wv @ ...),
x += w2 @ (silu(w1 @ h) * (w3 @ h)) with h = rmsnorm(x, rms_ffn); RMSNorm eps 1e-5; RoPE on
adjacent pairs (2k, 2k+1) with frequency 10000^(-2k/head_size) (docs/format.md's "interleaved"); query head
h reads KV head h / (n_heads / n_kv_heads); logits = wcls @ rmsnorm(x, rms_final), wcls being
the token embedding when the header's vocab_size is positive.  -> attention "standard" (docs/format.md section 1).
The two legacy freq_cis tables are not used (RoPE is recomputed), but are checked to be the
plain RoPE table when they are not all zero.
"""

import numpy as np

from layouts import ConvertError, check_unused

NAME = "llama2c"


def add_arguments(group):
    group.add_argument("--llama2c-max-seq-len", type=int, metavar="N", default=None,
                       help="max_seq_len to write (default: the header's seq_len)")


def mismatch(source):
    for name in ("token_embedding_table", "rms_att_weight"):
        if name not in source.names():
            return "no tensor '%s'" % name
    return None


def plan(source, args):
    c = source.config
    if "token_embedding_table" not in source.names() or "dim" not in c:
        raise ConvertError("%s: not a llama2.c checkpoint" % source.path)
    D, F, L, H, KV, V, S = (c[k] for k in ("dim", "hidden_dim", "n_layers", "n_heads", "n_kv_heads",
                                             "vocab_size", "seq_len"))
    hs = D // H
    tied = bool(c["shared_weights"])
    max_seq = getattr(args, "llama2c_max_seq_len", None) or S
    config = {
        "dim": D, "n_layers": L, "vocab_size": V, "hidden_dim": F, "max_seq_len": int(max_seq),
        "n_heads": H, "head_dim": hs, "v_head_dim": hs,
        "n_k1_heads": KV, "n_q2_heads": 0, "n_k2_heads": 0, "n_v_heads": KV,
        "attention": "standard", "qk_rank": 0, "head_norm": False, "head_scale": "none",
        "rope": "interleaved", "rope_theta": 10000.0, "norm_eps": 1e-5,
        "ffn_act": "silu", "tie_embeddings": tied,
    }
    used = set()

    def whole(name):
        used.add(name)
        return lambda: source.get(name)

    def layer(name, l):
        used.add(name)
        return lambda: source.get_layer(name, l)   # one layer's block, read alone

    # freq_cis tables: ignore when zero, else require the standard table (a different RoPE would
    # silently give other logits)
    for name in ("freq_cis_real", "freq_cis_imag"):
        if name not in source.names():
            continue   # version-1 exports have none
        used.add(name)
        t = source.get(name).astype(np.float64)
        if np.any(t):
            freq = 1.0 / (10000.0 ** (np.arange(0, hs, 2, dtype=np.float64) / hs))
            ang = np.outer(np.arange(S, dtype=np.float64), freq)
            want = np.cos(ang) if name.endswith("real") else np.sin(ang)
            if not np.allclose(t, want, atol=1e-4):
                raise ConvertError("%s: tensor '%s' is not RoPE with theta 10000 over head size %d; "
                                   "refusing an unknown position encoding" % (source.path, name, hs))

    out = [("tok_embeddings.weight", (V, D), whole("token_embedding_table"))]
    for l in range(L):
        out += [
            ("layers.%d.attn_norm.weight" % l, (D,), layer("rms_att_weight", l)),
            ("layers.%d.attn.wq1" % l, (H * hs, D), layer("wq", l)),
            ("layers.%d.attn.wk1" % l, (KV * hs, D), layer("wk", l)),
            ("layers.%d.attn.wv" % l, (KV * hs, D), layer("wv", l)),
            ("layers.%d.attn.wo" % l, (D, H * hs), layer("wo", l)),
            ("layers.%d.ffn_norm.weight" % l, (D,), layer("rms_ffn_weight", l)),
            ("layers.%d.ffn.w_gate" % l, (F, D), layer("w1", l)),
            ("layers.%d.ffn.w_up" % l, (F, D), layer("w3", l)),
            ("layers.%d.ffn.w_down" % l, (D, F), layer("w2", l)),
        ]
    out.append(("norm.weight", (D,), whole("rms_final_weight")))
    if not tied:
        out.append(("output.weight", (V, D), whole("wcls")))
    check_unused(source, used, NAME)
    return config, out
