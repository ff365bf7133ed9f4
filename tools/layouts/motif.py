"""Motif (Motif-Technologies Motif-2.6B, Motif-2-12.7B Grouped-DIFF) HF checkpoints.

Source: an HF directory (config.json with model_type "motif" + safetensors). Tensor names:

    model.embed_tokens.weight [V, D]     model.norm.weight [D]     lm_head.weight [V, D] (absent if tied)
    model.layers.L.input_layernorm.weight, post_attention_layernorm.weight          [D]
    model.layers.L.self_attn.{q,k,v,o}_proj.weight
    model.layers.L.self_attn.lambda_q1 / lambda_k1 / lambda_q2 / lambda_k2          [head_dim]
    model.layers.L.self_attn.subln.weight                                           [2 head_dim]
    model.layers.L.mlp.{gate,up,down}_proj.weight
    model.layers.L.mlp.act_fn.weight [3], mlp.act_fn.bias [1]                       (PolyNorm)
    (rotary_emb.inv_freq buffers are accepted and ignored)

Forward (Motif's modeling code and its ports): pre-norm blocks (rms_norm_eps), RoPE NeoX
"halves" over head_dim with rope_theta (rope_scaling linear / llama3 / yarn and
partial_rotary_factor -> version 1.1 rope_scaling / rope_dim (docs/format.md section 3): tools/layouts/hf_rope.py),
scale 1/sqrt(head_dim), per-head subln RMSNorm over 2*head_dim (attn_rms_norm_eps), output *
(1 - lambda_init), lambda_init(l) =
0.8 - 0.6 exp(-0.3 (l - 1)) with l the 0-based layer index (-> a per-layer list in the file),
MLP down(PolyNorm(gate x) * up x).

Vanilla DIFF (no num_noise_heads, Motif-2.6B): num_attention_heads S and num_key_value_heads
KVs count d-wide sub-heads. q viewed [S, d]: sub-heads (2h, 2h+1) are (q1, q2) of head h; k
likewise per KV group; v viewed [KVs/2, 2d]. In the file: H = S/2, n_k1 = n_k2 = n_v = KVs/2, n_q2 = H
(head h reads KV group floor(h * KV / H), the flash-attention GQA rule).

Grouped DIFF (num_noise_heads N, Motif-2-12.7B; k_ratio must be 1): q viewed [N, G+1, d] with
G = S/N - 1: each group is G signal heads then one noise head. k viewed [KV, 2, d] (k1, k2)
and v viewed [KV, 2, d] (v1, v2), KV = KVs/2. Signal head j (0..G*N-1, in group order) uses k1
and v = concat(v1, v2) of KV group j // (G*N/KV); noise head g uses k2 and v of KV group
g // (N/KV); signal head j subtracts lambda * (A2 V) of noise head j // G. Since
j // (G*N/KV) == (j // G) // (N/KV), the noise head's value is the signal head's own value,
so the format expresses it exactly: H = G*N, n_q2 = N, n_k1 = n_k2 = n_v = KV, and docs/format.md's
floor(i * n / H) picks the same heads (Q2(i) = i // G, K1(i) = K2(i) = V(i) = i // (H/KV)).
wq1 = the signal rows of q_proj in order, wq2 = the noise rows, wk1/wk2 = the even/odd
d-row blocks of k_proj, wv = v_proj, wo = o_proj, all unchanged in order.
"""

import re

import numpy as np

import spec
from layouts import ConvertError
from layouts.hf_rope import hf_rope, inv_freq


NAME = "motif"

_LAYER = re.compile(r"^model\.layers\.(\d+)\.(.+)$")
_LAYER_ROLES = {
    "input_layernorm.weight": "attn_norm",
    "post_attention_layernorm.weight": "ffn_norm",
    "self_attn.q_proj.weight": "q",
    "self_attn.k_proj.weight": "k",
    "self_attn.v_proj.weight": "v",
    "self_attn.o_proj.weight": "o",
    "self_attn.lambda_q1": "lambda_q1",
    "self_attn.lambda_k1": "lambda_k1",
    "self_attn.lambda_q2": "lambda_q2",
    "self_attn.lambda_k2": "lambda_k2",
    "self_attn.subln.weight": "subln",
    "mlp.gate_proj.weight": "gate",
    "mlp.up_proj.weight": "up",
    "mlp.down_proj.weight": "down",
    "mlp.act_fn.weight": "act_w",
    "mlp.act_fn.bias": "act_b",
}
_GLOBAL = {"model.embed_tokens.weight": "embed", "model.norm.weight": "norm", "lm_head.weight": "output"}

# config keys that change the math in ways the format (docs/format.md) cannot express when set (truthy / not default)
_REFUSE_TRUTHY = ("use_bias", "attention_bias", "mlp_bias", "qkv_bias",
                  "use_sliding_window", "wesar_weights", "use_norm_alpha", "use_emb_alpha",
                  "attn_logit_softcapping", "final_logit_softcapping", "qk_norm", "use_qk_norm",
                  # Motif-3 style latent attention / mixture of experts
                  "q_lora_rank", "kv_lora_rank", "num_experts", "n_routed_experts", "moe_intermediate_size")


def _ignored(name):
    return name.endswith("rotary_emb.inv_freq") or name.endswith(".inv_freq")


def mismatch(source):
    c = source.config or {}
    if c.get("model_type") == "motif":
        return None
    if any("Motif" in str(a) for a in c.get("architectures", []) or []):
        return None
    names = set(source.names())
    if "model.embed_tokens.weight" not in names:
        return "no tensor 'model.embed_tokens.weight'"
    for suffix in ("self_attn.subln.weight", "mlp.act_fn.weight"):
        if not any(n.endswith(suffix) for n in names):
            return "no tensor 'model.layers.N.%s'" % suffix
    return None


def add_arguments(group):
    group.add_argument("--motif-max-seq-len", type=int, metavar="N", default=None,
                       help="max_seq_len to write (default: max_position_embeddings)")


def _classify(names):
    found = {}
    layers = set()
    for n in names:
        if _ignored(n):
            continue
        key = None
        if n in _GLOBAL:
            key = _GLOBAL[n]
        else:
            m = _LAYER.match(n)
            if m and m.group(2) in _LAYER_ROLES:
                L = int(m.group(1))
                layers.add(L)
                key = (_LAYER_ROLES[m.group(2)], L)
        if key is None:
            raise ConvertError("motif: unknown tensor %r" % n)
        found[key] = n
    if not layers:
        raise ConvertError("motif: no model.layers.N.* tensors found")
    return found, layers


def _int(c, key, default=None):
    v = c.get(key, default)
    if v is None:
        raise ConvertError("motif: config.json lacks %r" % key)
    if isinstance(v, bool) or not isinstance(v, (int, float)) or int(v) != v or v <= 0:
        raise ConvertError("motif: config %r=%r is not a positive integer" % (key, v))
    return int(v)


def plan(source, args):
    c = source.config or {}
    if not c:
        raise ConvertError("motif: needs the HF config.json next to the weights")
    for k in _REFUSE_TRUTHY:
        if c.get(k):
            raise ConvertError("motif: config %r=%r is not supported" % (k, c[k]))
    act = c.get("hidden_act", "poly_norm")
    if act != "poly_norm":
        raise ConvertError("motif: config hidden_act=%r is not supported (only poly_norm)" % act)
    if c.get("scale_emb", 1) != 1:
        raise ConvertError("motif: config scale_emb=%r is not supported" % c["scale_emb"])
    if c.get("k_ratio", 1) != 1:
        raise ConvertError("motif: config k_ratio=%r is not supported (only 1: k heads in (k1, k2) pairs)"
                           % c["k_ratio"])

    D = _int(c, "hidden_size")
    nl = _int(c, "num_hidden_layers")
    F = _int(c, "intermediate_size")
    V = _int(c, "vocab_size")
    S = _int(c, "num_attention_heads")
    KVs = _int(c, "num_key_value_heads", S)
    d = int(c["head_dim"]) if c.get("head_dim") else (D // S if D % S == 0 else 0)
    if d <= 0 or d % 2:
        raise ConvertError("motif: head_dim %r must be a positive even number" % c.get("head_dim"))
    if KVs % 2:
        raise ConvertError("motif: num_key_value_heads=%d must be even (k1, k2 pairs)" % KVs)
    KV = KVs // 2
    N = c.get("num_noise_heads")
    if N is None:  # vanilla DIFF
        if S % 2:
            raise ConvertError("motif: num_attention_heads=%d must be even (q1, q2 pairs)" % S)
        H = S // 2
        NQ2 = H
        if H % KV:
            raise ConvertError("motif: num_key_value_heads/2=%d must divide num_attention_heads/2=%d" % (KV, H))
        G = None
    else:
        N = _int(c, "num_noise_heads")
        if S % N or S // N < 2:
            raise ConvertError("motif: num_attention_heads=%d is not num_noise_heads=%d groups of "
                               "(signal heads + 1 noise head)" % (S, N))
        G = S // N - 1
        H = G * N
        NQ2 = N
        if N % KV:
            raise ConvertError("motif: num_key_value_heads/2=%d must divide num_noise_heads=%d" % (KV, N))

    names = list(source.names())
    found, layers = _classify(names)
    if sorted(layers) != list(range(nl)):
        raise ConvertError("motif: layers in the weights (%d..%d) do not match num_hidden_layers=%d"
                           % (min(layers), max(layers), nl))
    tied = bool(c.get("tie_word_embeddings", False))
    if tied and "output" in found:
        raise ConvertError("motif: tie_word_embeddings is true but lm_head.weight is present")
    if not tied and "output" not in found:
        raise ConvertError("motif: missing tensor lm_head.weight (tie_word_embeddings is false)")

    want = {"embed": (V, D), "norm": (D,)}
    if not tied:
        want["output"] = (V, D)
    for L in range(nl):
        want.update({
            ("attn_norm", L): (D,), ("ffn_norm", L): (D,),
            ("q", L): (S * d, D), ("k", L): (KVs * d, D), ("v", L): (KVs * d, D),
            ("o", L): (D, H * 2 * d), ("subln", L): (2 * d,),
            ("gate", L): (F, D), ("up", L): (F, D), ("down", L): (D, F),
            ("act_w", L): (3,), ("act_b", L): (1,),
        })
        for lam in ("lambda_q1", "lambda_k1", "lambda_q2", "lambda_k2"):
            want[(lam, L)] = (d,)
    for key, shp in want.items():
        if key not in found:
            what = key if isinstance(key, str) else "model.layers.%d %s" % (key[1], key[0])
            raise ConvertError("motif: missing tensor for %s" % what)
        got = tuple(int(s) for s in source.shape(found[key]))
        if got != shp:
            raise ConvertError("motif: %s has shape %s, expected %s (heads %d, kv heads %d, noise heads %s, "
                               "head_dim %d)" % (found[key], list(got), list(shp), S, KVs, N, d))
    extra = set(found) - set(want)
    if extra:
        raise ConvertError("motif: unexpected tensor %r" % found[sorted(extra, key=str)[0]])

    max_seq = getattr(args, "motif_max_seq_len", None) or int(c.get("max_position_embeddings", 8192))
    config = {
        "dim": D, "n_layers": nl, "vocab_size": V, "hidden_dim": F, "max_seq_len": int(max_seq),
        "n_heads": H, "head_dim": d, "v_head_dim": 2 * d,
        "n_k1_heads": KV, "n_q2_heads": NQ2, "n_k2_heads": KV, "n_v_heads": KV,
        "attention": "diff", "qk_rank": 0,
        "lambda_init": [spec.lambda_init_depth(l - 1) for l in range(nl)],   # Motif shifts the layer index
        "head_norm": True, "head_norm_type": "rms", "head_scale": "one_minus_lambda_init",
        "rope": "halves",
        "norm_eps": float(c.get("rms_norm_eps", 1e-6)),
        "head_norm_eps": float(c.get("attn_rms_norm_eps", 1e-5)),
        "ffn_act": "polynorm", "tie_embeddings": tied,
    }
    # rope_theta, and version 1.1 rope_scaling / rope_dim (partial_rotary_factor) when set
    try:
        config.update(hf_rope(c, d))
        inv_freq(config)
    except ConvertError as e:
        raise ConvertError("motif: %s" % e)

    def whole(key):
        n = found[key]
        return lambda: source.get(n)

    def pick(key, groups, per, sel, heads):
        # [groups*per*d, D] viewed [groups, per, d, D]; keep sub-heads sel of each group
        n = found[key]
        return lambda: np.ascontiguousarray(
            source.get(n).reshape(groups, per, d, D)[:, sel].reshape(heads * d, D))

    tensors = [("tok_embeddings.weight", (V, D), whole("embed"))]
    for L in range(nl):
        p = "layers.%d." % L
        if G is None:
            wq1 = pick(("q", L), H, 2, slice(0, 1), H)
            wq2 = pick(("q", L), H, 2, slice(1, 2), H)
        else:
            wq1 = pick(("q", L), N, G + 1, slice(0, G), H)
            wq2 = pick(("q", L), N, G + 1, slice(G, G + 1), N)
        tensors += [
            (p + "attn_norm.weight", (D,), whole(("attn_norm", L))),
            (p + "attn.wq1", (H * d, D), wq1),
            (p + "attn.wk1", (KV * d, D), pick(("k", L), KV, 2, slice(0, 1), KV)),
            (p + "attn.wq2", (NQ2 * d, D), wq2),
            (p + "attn.wk2", (KV * d, D), pick(("k", L), KV, 2, slice(1, 2), KV)),
            (p + "attn.wv", (KV * 2 * d, D), whole(("v", L))),
            (p + "attn.wo", (D, H * 2 * d), whole(("o", L))),
        ]
        for lam in ("lambda_q1", "lambda_k1", "lambda_q2", "lambda_k2"):
            tensors.append((p + "attn." + lam, (d,), whole((lam, L))))
        tensors += [
            (p + "attn.head_norm.weight", (2 * d,), whole(("subln", L))),
            (p + "ffn_norm.weight", (D,), whole(("ffn_norm", L))),
            (p + "ffn.w_gate", (F, D), whole(("gate", L))),
            (p + "ffn.w_up", (F, D), whole(("up", L))),
            (p + "ffn.w_down", (D, F), whole(("down", L))),
            (p + "ffn.act_weight", (3,), whole(("act_w", L))),
            (p + "ffn.act_bias", (1,), whole(("act_b", L))),
        ]
    tensors.append(("norm.weight", (D,), whole("norm")))
    if not tied:
        tensors.append(("output.weight", (V, D), whole("output")))
    return config, tensors
