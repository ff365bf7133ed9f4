"""Hugging Face DiffLlama (DiffLlamaForCausalLM, config model_type "diffllama").

The forward pass (transformers models/diffllama/modeling_diffllama.py, DiffLlamaAttention), with
H = num_attention_heads, d = head_dim, KV = num_key_value_heads, g = H / KV:

    q [H, d], k [KV, d], v [KV, d]; RoPE NeoX-style ("halves", rope_theta) on q and k
    (rope_scaling linear / llama3 / yarn and partial_rotary_factor -> version 1.1 rope_scaling and
    rope_dim, docs/format.md section 3, the first rope_dim components rotated: tools/layouts/hf_rope.py)
    k, v = repeat_kv(k, g), repeat_kv(v, g)                 # head j reads KV head j // g
    v = cat(chunk(v, 2, heads), dim=-1).repeat(1, 2, 1, 1)  # head j: [v[m//g], v[(m+H/2)//g]], m = j mod H/2
    A_j = softmax(q_j k_{j//g}^T / sqrt(d))
    out1, out2 = chunk(A V, 2, heads)                       # heads 0..H/2-1 and H/2..H-1
    out_m = (1 - lambda_init) * RMSNorm_2d(out1_m - lambda * out2_m)   # no weight, eps rms_norm_eps
    lambda = exp(sum(lambda_q1*lambda_k1)) - exp(sum(lambda_q2*lambda_k2)) + lambda_init
    lambda_init = 0.8 - 0.6 * exp(-0.3 * layer_idx)        # 0-based, no shift: docs/format.md's "depth"

So the file's signal head m (H/2 of them) pairs source head m (q1/k1) with head m + H/2 (q2/k2) --
halves, not adjacent -- and reads the value concat(v[m//g], v[(m+H/2)//g]) of width 2d.
Each projection's head count in the file is the smallest that expresses that map (the
floor(i*n/H) rule of docs/format.md section 1); e.g. for even KV, n_k1 = n_k2 = n_v = KV/2.
"""

import numpy as np

from layouts import ConvertError, check_unused, expect_shape, head_count, report_unread, rows
from layouts.hf_rope import hf_rope, inv_freq

NAME = "diffllama"


def add_arguments(group):
    group.add_argument("--diffllama-max-seq-len", type=int, metavar="N", default=None,
                       help="max_seq_len to write (default: config max_position_embeddings)")


def mismatch(source):
    cfg = source.config or {}
    if cfg.get("model_type") == "diffllama" or "DiffLlamaForCausalLM" in (cfg.get("architectures") or []):
        return None
    if cfg.get("model_type"):
        return "config.json has model_type %r" % cfg.get("model_type")
    names = set(source.names())
    for name in ("model.layers.0.self_attn.lambda_q1", "model.layers.0.self_attn.q_proj.weight"):
        if name not in names:
            return "no tensor '%s'" % name
    if "model.layers.0.self_attn.subln.weight" in names:
        return "tensor 'model.layers.0.self_attn.subln.weight' (DiffLlama has no subln)"
    return None


class _One:
    """Keeps the last loaded tensor: wq1/wq2 (and wk1/wk2, wv) come from the same source tensor."""

    def __init__(self, source):
        self.source, self.name, self.arr = source, None, None

    def get(self, name):
        if name != self.name:
            self.name, self.arr = None, None
            self.arr = self.source.get(name)
            self.name = name
        return self.arr


# config.json keys plan reads (directly or through hf_rope); lambda_std_dev only initialises training
_READ = {"hidden_size", "intermediate_size", "num_hidden_layers", "num_attention_heads", "num_key_value_heads",
         "vocab_size", "head_dim", "rms_norm_eps", "max_position_embeddings", "tie_word_embeddings", "hidden_act",
         "attention_bias", "mlp_bias", "rope_theta", "rope_scaling", "rope_parameters", "partial_rotary_factor"}
_INERT = {"lambda_std_dev"}


def _cfg(cfg, key, default=None, kind=int):
    v = cfg.get(key, default)
    if v is None:
        raise ConvertError("config.json: missing '%s'" % key)
    if kind is int and (isinstance(v, bool) or not isinstance(v, int) or v <= 0):
        raise ConvertError("config.json: '%s' = %r is not a positive integer" % (key, v))
    if kind is float and (isinstance(v, bool) or not isinstance(v, (int, float)) or not v > 0):
        raise ConvertError("config.json: '%s' = %r is not a positive number" % (key, v))
    return v


def plan(source, args):
    cfg = source.config or {}
    if not cfg:
        raise ConvertError("%s: the diffllama layout needs the HF config.json" % source.path)
    mt = cfg.get("model_type")
    if mt not in (None, "diffllama"):
        raise ConvertError("config.json: model_type %r is not 'diffllama'" % mt)
    report_unread(NAME, cfg, _READ, _INERT)
    # missing keys take DiffLlamaConfig's defaults, as transformers would
    D = _cfg(cfg, "hidden_size", 2048)
    F = _cfg(cfg, "intermediate_size", 8192)
    L = _cfg(cfg, "num_hidden_layers", 16)
    H = _cfg(cfg, "num_attention_heads", 32)
    KV = cfg.get("num_key_value_heads")
    KV = _cfg({"num_key_value_heads": H if KV is None else KV}, "num_key_value_heads")
    V = _cfg(cfg, "vocab_size", 32000)
    d = cfg.get("head_dim") or D // H
    d = _cfg({"head_dim": d}, "head_dim")
    eps = _cfg(cfg, "rms_norm_eps", 1e-5, float)
    max_seq = args and getattr(args, "diffllama_max_seq_len", None) or _cfg(cfg, "max_position_embeddings", 2048)
    tied = bool(cfg.get("tie_word_embeddings", False))
    act = cfg.get("hidden_act", "silu")
    if act != "silu":
        raise ConvertError("config.json: hidden_act %r is not supported (only silu)" % act)
    for key in ("attention_bias", "mlp_bias"):
        if cfg.get(key):
            raise ConvertError("config.json: %s is set; biases are not supported" % key)
    rope = hf_rope(cfg, d)   # rope_theta, and rope_dim / rope_scaling when the config has them
    theta = rope["rope_theta"]
    if H % 2:
        raise ConvertError("config.json: num_attention_heads %d is odd; DiffLlama pairs head i with i + H/2" % H)
    if H % KV:
        raise ConvertError("config.json: num_attention_heads %d is not a multiple of num_key_value_heads %d"
                           % (H, KV))
    if d % 2:
        raise ConvertError("config.json: head_dim %d is odd (RoPE needs pairs)" % d)
    Hs, g = H // 2, H // KV

    k1_src = [m // g for m in range(Hs)]
    k2_src = [(m + Hs) // g for m in range(Hs)]
    v_src = [(m // g, (m + Hs) // g) for m in range(Hs)]
    n_k1, k1_heads = head_count(k1_src, Hs, "k1")
    n_k2, k2_heads = head_count(k2_src, Hs, "k2")
    n_v, v_heads = head_count(v_src, Hs, "v")

    config = {
        "dim": D, "n_layers": L, "vocab_size": V, "hidden_dim": F, "max_seq_len": int(max_seq),
        "n_heads": Hs, "head_dim": d, "v_head_dim": 2 * d,
        "n_k1_heads": n_k1, "n_q2_heads": Hs, "n_k2_heads": n_k2, "n_v_heads": n_v,
        "attention": "diff", "qk_rank": 0, "lambda_init": "depth",
        "head_norm": True, "head_norm_type": "rms", "head_scale": "one_minus_lambda_init",
        "rope": "halves", "rope_theta": theta, "norm_eps": eps, "head_norm_eps": eps,
        "ffn_act": "silu", "tie_embeddings": tied,
    }
    config.update(rope)   # version 1.1 rope_dim / rope_scaling (docs/format.md section 3): the file becomes version 1.1
    inv_freq(config)      # the scaling's values checked as the engine will check them

    used = set()
    one = _One(source)
    out = []

    def take(name, shape):
        expect_shape(source, name, shape)
        used.add(name)
        return name

    def whole(name, shape):
        n = take(name, shape)
        return lambda: source.get(n)

    out.append(("tok_embeddings.weight", (V, D), whole("model.embed_tokens.weight", (V, D))))
    for l in range(L):
        p = "model.layers.%d." % l
        a = p + "self_attn."
        q = take(a + "q_proj.weight", (H * d, D))
        k = take(a + "k_proj.weight", (KV * d, D))
        v = take(a + "v_proj.weight", (KV * d, D))
        out.append(("layers.%d.attn_norm.weight" % l, (D,), whole(p + "input_layernorm.weight", (D,))))
        out.append(("layers.%d.attn.wq1" % l, (Hs * d, D), lambda q=q: one.get(q)[:Hs * d]))
        out.append(("layers.%d.attn.wq2" % l, (Hs * d, D), lambda q=q: one.get(q)[Hs * d:]))
        out.append(("layers.%d.attn.wk1" % l, (n_k1 * d, D), lambda k=k: rows(one.get(k), k1_heads, d)))
        out.append(("layers.%d.attn.wk2" % l, (n_k2 * d, D), lambda k=k: rows(one.get(k), k2_heads, d)))
        out.append(("layers.%d.attn.wv" % l, (n_v * 2 * d, D),
                    lambda v=v: rows(one.get(v), [h for pair in v_heads for h in pair], d)))
        out.append(("layers.%d.attn.wo" % l, (D, H * d), whole(a + "o_proj.weight", (D, H * d))))
        for lam in ("lambda_q1", "lambda_k1", "lambda_q2", "lambda_k2"):
            out.append(("layers.%d.attn.%s" % (l, lam), (d,), whole(a + lam, (d,))))
        out.append(("layers.%d.attn.head_norm.weight" % l, (2 * d,), lambda: np.ones(2 * d, np.float32)))
        out.append(("layers.%d.ffn_norm.weight" % l, (D,), whole(p + "post_attention_layernorm.weight", (D,))))
        out.append(("layers.%d.ffn.w_gate" % l, (F, D), whole(p + "mlp.gate_proj.weight", (F, D))))
        out.append(("layers.%d.ffn.w_up" % l, (F, D), whole(p + "mlp.up_proj.weight", (F, D))))
        out.append(("layers.%d.ffn.w_down" % l, (D, F), whole(p + "mlp.down_proj.weight", (D, F))))
        inv = a + "rotary_emb.inv_freq"   # a buffer some old checkpoints saved; recomputed from rope_theta
        if inv in source.names():
            want = inv_freq(config)
            got = source.get(inv)
            if got.shape != want.shape or not np.allclose(got, want, rtol=1e-4):
                raise ConvertError("%s: tensor '%s' is not the RoPE of rope_theta %g%s" % (
                    source.path, inv, theta, " with the config's rope_scaling / partial_rotary_factor"
                    if len(rope) > 1 else ""))
            used.add(inv)
    out.append(("norm.weight", (D,), whole("model.norm.weight", (D,))))
    if "lm_head.weight" in source.names():
        if tied:
            expect_shape(source, "lm_head.weight", (V, D))
            if not np.array_equal(source.get("lm_head.weight"), source.get("model.embed_tokens.weight")):
                raise ConvertError("%s: tie_word_embeddings is set but tensor 'lm_head.weight' differs from "
                                   "'model.embed_tokens.weight'" % source.path)
            used.add("lm_head.weight")
        else:
            out.append(("output.weight", (V, D), whole("lm_head.weight", (V, D))))
    elif not tied:
        raise ConvertError("%s: missing tensor 'lm_head.weight' (tie_word_embeddings is false)" % source.path)
    check_unused(source, used, NAME)
    return config, out


def json_short(v):
    import json
    s = json.dumps(v, sort_keys=True)
    return s if len(s) < 120 else s[:117] + "..."
