"""The dintattn file format's rules as the Python tools share them (docs/format.md): one home for
each, so that the converter, the model writers and the trainer cannot drift apart.
tools/reference.py keeps copies of its own on purpose: it is the independent float64 oracle the
rest (C engine and tools alike) is checked against, so it must not share their mistakes.

    lambda_init_depth(l)      the "depth" formula of docs/format.md section 1, l the 0-based layer
    lambda_init(cfg, l)       lambda_init of layer l for any config value ("depth", a number, a
                              per-layer list); 0 if malformed (the random-model writers make
                              such files on purpose for the loader's refusal tests)
    V11_KEYS, file_version    section 3: a config with any of these keys is version "1.1"
    WEIGHT_DTYPES             --dtype name -> safetensors dtype of the float weight types
    resolved(cfg)             the section 2 and 3 defaults the tensor shapes depend on, filled in
                              as a new dict (a config is written as given, never resolved)
    tensor_shapes(cfg, head_norm_per_head=False)
                              {name: shape} of every model tensor, in the file's order
    MATRICES, LAYER_MATRICES, is_matrix(name)
                              the weight matrices (those Q8 / Q4 may store: section 4)
"""

import math


def lambda_init_depth(l):
    """lambda_init(l) = 0.8 - 0.6 exp(-0.3 l): the DIFF Transformer's depth rule (docs/format.md
    section 1). Layouts whose source shifts the layer index pass the shifted index."""
    return 0.8 - 0.6 * math.exp(-0.3 * l)


def lambda_init(c, l):
    """lambda_init(l) per docs/format.md section 1 ("depth", a number, or a per-layer list); 0 if malformed."""
    li = c.get("lambda_init", "depth")
    if li == "depth":
        return lambda_init_depth(l)
    if isinstance(li, list):
        return float(li[l]) if l < len(li) and isinstance(li[l], (int, float)) else 0.0
    return float(li) if isinstance(li, (int, float)) else 0.0


# docs/format.md section 3: a file whose config has any of these keys is "version": "1.1"
V11_KEYS = ("lambda_mode", "shared_k", "rope_dim", "rope_scaling", "ffn_bias")


def file_version(cfg):
    return "1.1" if any(k in cfg for k in V11_KEYS) else "1"


WEIGHT_DTYPES = {"f32": "F32", "f16": "F16", "bf16": "BF16"}


def resolved(cfg):
    """The defaults of docs/format.md section 2 filled in, as a new dict (never written to a file)."""
    c = dict(cfg)
    att = c.get("attention", "standard")   # docs/format.md gives no default; same as tools/reference.py
    differential = att in ("diff", "dint")
    H = c["n_heads"]
    c["attention"] = att
    c.setdefault("n_k1_heads", H)
    c.setdefault("n_v_heads", H)
    c.setdefault("n_q2_heads", H if differential else 0)
    c.setdefault("n_k2_heads", H if differential else 0)
    if not differential:
        c["n_q2_heads"] = c["n_k2_heads"] = 0
    c.setdefault("v_head_dim", 2 * c["head_dim"] if differential else c["head_dim"])
    c.setdefault("qk_rank", 0)
    c.setdefault("head_norm", differential)
    c.setdefault("head_norm_type", "rms")
    c.setdefault("tie_embeddings", False)
    c.setdefault("ffn_act", "silu")
    c.setdefault("rope", "interleaved")
    # docs/format.md section 3 (v1.1)
    c.setdefault("lambda_mode", "reparam")
    c.setdefault("shared_k", False)
    c.setdefault("ffn_bias", False)
    if not differential:
        c["lambda_mode"], c["shared_k"] = "reparam", False
    if c["shared_k"]:
        assert c["n_k2_heads"] == c["n_k1_heads"], "shared_k needs n_k2_heads == n_k1_heads"
    for k in ("n_k1_heads", "n_v_heads", "n_q2_heads", "n_k2_heads"):
        n = c[k]
        if differential or k in ("n_k1_heads", "n_v_heads"):
            assert n > 0 and H % n == 0, "%s=%d must divide n_heads=%d" % (k, n, H)
    if c["rope"] != "none":
        c.setdefault("rope_dim", c["head_dim"])
        assert c["rope_dim"] % 2 == 0 and 2 <= c["rope_dim"] <= c["head_dim"], \
            "RoPE needs an even rope_dim (default head_dim) from 2 to head_dim"
    return c


def tensor_shapes(cfg, head_norm_per_head=False):
    """{name: shape tuple} of every tensor of a model of config cfg (docs/format.md sections 2 and
    3), in the order the tools write them; head_norm_per_head: head_norm of [H*dv] instead of [dv]."""
    c = resolved(cfg)
    D, V, F, L = c["dim"], c["vocab_size"], c["hidden_dim"], c["n_layers"]
    H, d, dv, r = c["n_heads"], c["head_dim"], c["v_head_dim"], c["qk_rank"]
    differential = c["attention"] in ("diff", "dint")
    branches = [("q1", H), ("k1", c["n_k1_heads"])]
    if differential:
        branches += [("q2", c["n_q2_heads"])]
        if not c["shared_k"]:        # shared_k: K2 is K1, no wk2 / k2_down / k2_up
            branches += [("k2", c["n_k2_heads"])]
    s = {"tok_embeddings.weight": (V, D), "norm.weight": (D,)}
    if not c["tie_embeddings"]:
        s["output.weight"] = (V, D)
    for l in range(L):
        p = "layers.%d." % l
        s[p + "attn_norm.weight"] = (D,)
        s[p + "ffn_norm.weight"] = (D,)
        if r == 0:
            for b, n in branches:
                s[p + "attn.w" + b] = (n * d, D)
        else:
            s[p + "attn.q_base"] = (d, D)
            s[p + "attn.k_base"] = (d, D)
            for b, n in branches:
                s[p + "attn.%s_down" % b] = (n * r, D)
                s[p + "attn.%s_up" % b] = (n * d, r)
        s[p + "attn.wv"] = (c["n_v_heads"] * dv, D)
        s[p + "attn.wo"] = (D, H * dv)
        if differential and c["lambda_mode"] == "token_sigmoid":
            s[p + "attn.lambda_proj"] = (H, D)
        elif differential:
            for b in ("q1", "k1", "q2", "k2"):
                s[p + "attn.lambda_" + b] = (d,)
        if c["head_norm"]:
            n = H * dv if head_norm_per_head else dv
            s[p + "attn.head_norm.weight"] = (n,)
            if c["head_norm_type"] == "group":
                s[p + "attn.head_norm.bias"] = (n,)
        s[p + "ffn.w_gate"] = (F, D)
        s[p + "ffn.w_up"] = (F, D)
        s[p + "ffn.w_down"] = (D, F)
        if c["ffn_act"] == "polynorm":
            s[p + "ffn.act_weight"] = (3,)
            s[p + "ffn.act_bias"] = (1,)
        if c["ffn_bias"]:
            s[p + "ffn.b_gate"] = (F,)
            s[p + "ffn.b_up"] = (F,)
            s[p + "ffn.b_down"] = (D,)
    return s


# The weight matrices (the engine converts these at load; Q8 / Q4 files may store them as I8 / U8
# + .scale).
MATRICES = {"tok_embeddings.weight", "output.weight"}
LAYER_MATRICES = {"attn." + k for k in ("wq1", "wk1", "wq2", "wk2", "wv", "wo", "q_base", "k_base",
                                        "q1_down", "k1_down", "q2_down", "k2_down")} | \
                 {"ffn.w_gate", "ffn.w_up", "ffn.w_down"}


def is_matrix(name):
    parts = name.split(".", 2)
    return name in MATRICES or (len(parts) == 3 and parts[0] == "layers" and
                                parts[2] in LAYER_MATRICES)
