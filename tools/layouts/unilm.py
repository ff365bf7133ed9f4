"""Microsoft unilm Diff-Transformer (`MultiheadDiffAttn`) state dicts.

Reference: microsoft/unilm `Diff-Transformer/multihead_diffattn.py`,
`multihead_flashdiff_1.py`, `multihead_flashdiff_2.py`. Microsoft ships only the attention
module; the decoder around it is the caller's. This layout accepts a PyTorch state dict (or an HF
directory with these names) of a Llama-like pre-norm decoder built around `MultiheadDiffAttn`.

Accepted tensor names (after an optional prefix, `--unilm-prefix`, default: auto-strip one of
`module.`, `model.`, `_orig_mod.` when every name has it; `L` = 0-based layer index):

    tok_embeddings.weight | embed_tokens.weight                 [V, E]
    norm.weight                                                  [E]
    output.weight | lm_head.weight                               [V, E]  (absent: tied to the embedding)
    layers.L.attention_norm.weight | layers.L.input_layernorm.weight        [E]
    layers.L.ffn_norm.weight | layers.L.post_attention_layernorm.weight     [E]
    layers.L.{attn|attention|self_attn}.q_proj.weight            [E, E]
    layers.L.{...}.k_proj.weight, v_proj.weight                  [E/n_rep, E]
    layers.L.{...}.out_proj.weight                               [E, E]
    layers.L.{...}.lambda_q1, lambda_k1, lambda_q2, lambda_k2    [d]
    layers.L.{...}.subln.weight                                  [2d]
    layers.L.feed_forward.{w1,w2,w3}.weight (SwiGLU: w2(silu(w1 x) * w3 x))
      | layers.L.mlp.{gate_proj,down_proj,up_proj}.weight
    (any `*.inv_freq` / `rotary_emb` buffer is accepted and ignored)

Hyper-parameters a bare state dict lacks (flags; an HF-style config.json with the same meaning is
used when present: num_attention_heads = H, num_key_value_heads = KV, rope_theta, rms_norm_eps,
max_position_embeddings):
    --unilm-heads H          `num_heads` passed to MultiheadDiffAttn (half a baseline's heads). Required.
    --unilm-kv-heads KV      `num_kv_heads` (default H: no GQA).
    --unilm-rope-theta T     RoPE base of the caller's rel_pos (default 10000).
    --unilm-norm-eps E       eps of the decoder's RMSNorms (default 1e-5).
    --unilm-subln-eps E      eps of subln (Microsoft hard-codes 1e-5).
    --unilm-max-seq-len N    (default 2048).
    --unilm-prefix P         prefix to strip from every name ('' = none).
    --unilm-no-rope          the caller used no rotary embedding.
    --unilm-depth-offset K   the caller passed depth = L + K (default 0: depth = 0-based layer index).
    --unilm-naive-gqa        reproduce multihead_diffattn.py's pairing under GQA (see below).

Mapping (checked against the flash files; the naive file's repeat_kv before pairing mis-pairs
heads when n_rep > 1 and is followed only with --unilm-naive-gqa):
    d = E / H / 2; q viewed [2H, d]: sub-head 2h = q1 of head h, 2h+1 = q2 of head h.
    k viewed [2KV, d] likewise per KV group; v viewed [KV, 2d]; head h uses KV group h // (H/KV)
    (flash_attn GQA), which is docs/format.md's floor(h * KV / H).
    In the file: n_heads H, head_dim d, v_head_dim 2d, n_k1 = n_k2 = n_v = KV, n_q2 = H, attention diff,
    rope interleaved (GPT-J pairs per d-wide sub-head), lambda_init "depth" (0-based depth),
    head_norm rms over 2d (subln), head_scale one_minus_lambda_init, ffn_act silu.

With --unilm-naive-gqa (and n_rep > 1) the naive file's arithmetic is reproduced instead: it
repeats each of the 2KV k sub-heads n_rep times before pairing, so q1 of head h meets k sub-head
(2h) // n_rep and q2 meets (2h+1) // n_rep (for n_rep = 2 both meet sub-head h, i.e. k1 or k2 of
group h // 2), while v still comes from group h // n_rep. The format expresses that with
n_k1 = n_k2 = H (k rows gathered per head) and n_v = KV.
"""

import numpy as np

import spec
from layouts import ConvertError, decoder_names


NAME = "unilm"

_PATTERNS = decoder_names.patterns([
    (r"^layers\.(\d+)\.%s\.out_proj\.weight$" % decoder_names.ATTN, "o"),
    (r"^layers\.(\d+)\.%s\.(lambda_[qk][12])$" % decoder_names.ATTN, "lambda"),  # key (lambda, L, name)
    (r"^layers\.(\d+)\.%s\.subln\.weight$" % decoder_names.ATTN, "subln"),
])


def _strip_prefix(names, prefix):
    return decoder_names.strip_prefix(names, prefix)


def _classify(names, prefix):
    """-> ({role or (role, L, extra): source name}, n_layers); raises on any unknown name."""
    return decoder_names.classify(NAME, names, prefix, _PATTERNS)


def mismatch(source):
    names = list(source.names())
    try:
        prefix = _strip_prefix(names, None)
        found, _ = _classify(names, prefix)
    except ConvertError as e:
        msg = str(e)
        return msg[len(NAME) + 2:] if msg.startswith(NAME + ": ") else msg
    for role, what in (("subln", "attn.subln.weight"), ("o", "attn.out_proj.weight")):
        if not any(isinstance(k, tuple) and k[0] == role for k in found):
            return "no tensor '%slayers.N.%s'" % (prefix, what)
    return None


def add_arguments(group):
    group.add_argument("--unilm-heads", type=int, metavar="H", default=None,
                       help="num_heads of MultiheadDiffAttn (half a baseline's heads)")
    group.add_argument("--unilm-kv-heads", type=int, metavar="KV", default=None, help="num_kv_heads (default: heads)")
    group.add_argument("--unilm-rope-theta", type=float, metavar="T", default=None, help="RoPE base, above 0 (default: config.json rope_theta, else 10000)")
    group.add_argument("--unilm-norm-eps", type=float, metavar="E", default=None, help="decoder RMSNorm eps, above 0 (default: config.json rms_norm_eps, else 1e-5)")
    group.add_argument("--unilm-subln-eps", type=float, metavar="E", default=1e-5, help="subln eps, above 0")
    group.add_argument("--unilm-max-seq-len", type=int, metavar="N", default=None, help="max sequence length, 1 or more (default: config.json max_position_embeddings, else 2048)")
    group.add_argument("--unilm-prefix", default=None, metavar="P", help="prefix stripped from names (default: auto)")
    group.add_argument("--unilm-no-rope", action="store_true", help="the model used no RoPE")
    group.add_argument("--unilm-depth-offset", type=int, metavar="K", default=0,
                       help="depth passed to MultiheadDiffAttn for layer L is L + this (default 0)")
    group.add_argument("--unilm-naive-gqa", action="store_true",
                       help="the model was trained with multihead_diffattn.py (repeat_kv before pairing) "
                            "and n_rep > 1: reproduce its pairing (k heads expanded per head)")


def _opt(args, name, default=None):
    v = getattr(args, name, None)
    return default if v is None else v


def plan(source, args):
    names = list(source.names())
    prefix = _strip_prefix(names, _opt(args, "unilm_prefix"))
    found, nl = _classify(names, prefix)
    cfg_in = source.config or {}

    for key in ("rope_scaling",):
        if cfg_in.get(key):
            raise ConvertError("unilm: config key %r=%r is not supported" % (key, cfg_in[key]))

    need, shape = decoder_names.accessors(NAME, source, found)

    V, E = shape("embed")
    if len(shape("norm")) != 1 or shape("norm")[0] != E:
        raise ConvertError("unilm: %s has shape %s, expected [%d]" % (need("norm"), shape("norm"), E))
    tied = "output" not in found
    if not tied and shape("output") != (V, E):
        raise ConvertError("unilm: %s has shape %s, expected [%d, %d]" % (need("output"), shape("output"), V, E))

    H = _opt(args, "unilm_heads", cfg_in.get("num_attention_heads"))
    if H is None:
        raise ConvertError("unilm: the number of heads is unknown: pass --unilm-heads H "
                           "(MultiheadDiffAttn's num_heads, half a baseline's heads)")
    H = int(H)
    KV = int(_opt(args, "unilm_kv_heads", cfg_in.get("num_key_value_heads", H)))
    if H <= 0 or KV <= 0 or H % KV:
        raise ConvertError("unilm: kv heads %d must divide heads %d" % (KV, H))
    if E % (2 * H):
        raise ConvertError("unilm: embed dim %d is not divisible by 2 * heads (%d)" % (E, 2 * H))
    d = E // H // 2
    if d % 2:
        raise ConvertError("unilm: head_dim %d (E/H/2) is odd; RoPE needs it even" % d)
    n_rep = H // KV
    F = None
    for L in range(nl):
        exp = {
            ("attn_norm", L): (E,), ("ffn_norm", L): (E,),
            ("q", L): (E, E), ("k", L): (E // n_rep, E), ("v", L): (E // n_rep, E),
            ("o", L): (E, 2 * H * d), ("subln", L): (2 * d,),
        }
        for lam in ("lambda_q1", "lambda_k1", "lambda_q2", "lambda_k2"):
            exp[("lambda", L, lam)] = (d,)
        gs = shape(("gate", L))
        if F is None:
            F = gs[0]
        exp[("gate", L)] = (F, E)
        exp[("up", L)] = (F, E)
        exp[("down", L)] = (E, F)
        for k, want in exp.items():
            got = shape(k)
            if got != want:
                raise ConvertError("unilm: %s has shape %s, expected %s (heads=%d, kv_heads=%d, d=%d)"
                                   % (need(k), list(got), list(want), H, KV, d))
    theta = float(_opt(args, "unilm_rope_theta", cfg_in.get("rope_theta", 10000.0)))
    norm_eps = float(_opt(args, "unilm_norm_eps", cfg_in.get("rms_norm_eps", 1e-5)))
    subln_eps = float(_opt(args, "unilm_subln_eps", 1e-5))
    max_seq = int(_opt(args, "unilm_max_seq_len", cfg_in.get("max_position_embeddings", 2048)))
    off = int(_opt(args, "unilm_depth_offset", 0))
    naive = bool(getattr(args, "unilm_naive_gqa", False)) and n_rep > 1
    nk = H if naive else KV
    config = {
        "dim": E, "n_layers": nl, "vocab_size": V, "hidden_dim": F, "max_seq_len": max_seq,
        "n_heads": H, "head_dim": d, "v_head_dim": 2 * d,
        "n_k1_heads": nk, "n_q2_heads": H, "n_k2_heads": nk, "n_v_heads": KV,
        "attention": "diff", "qk_rank": 0,
        "lambda_init": "depth" if off == 0 else [spec.lambda_init_depth(l + off) for l in range(nl)],
        "head_norm": True, "head_norm_type": "rms", "head_scale": "one_minus_lambda_init",
        "rope": "none" if getattr(args, "unilm_no_rope", False) else "interleaved",
        "rope_theta": theta, "norm_eps": norm_eps, "head_norm_eps": subln_eps,
        "ffn_act": "silu", "tie_embeddings": tied,
    }

    def whole(key):
        n = need(key)
        return lambda: source.get(n)

    def half(key, heads, which):
        # [2*heads*d, E] viewed [heads, 2, d, E]; which=0 -> first of each adjacent pair
        n = need(key)
        return lambda: np.ascontiguousarray(
            source.get(n).reshape(heads, 2, d, E)[:, which].reshape(heads * d, E))

    def naive_k(key, which):
        # multihead_diffattn.py: k sub-heads [2KV] are repeated n_rep times each before the
        # (q1, q2) pairing, so q1 of head h meets sub-head (2h) // n_rep, q2 meets (2h+1) // n_rep
        n = need(key)
        idx = [(2 * h + which) // n_rep for h in range(H)]
        return lambda: np.ascontiguousarray(source.get(n).reshape(2 * KV, d, E)[idx].reshape(H * d, E))

    tensors = [("tok_embeddings.weight", (V, E), whole("embed"))]
    for L in range(nl):
        p = "layers.%d." % L
        tensors += [
            (p + "attn_norm.weight", (E,), whole(("attn_norm", L))),
            (p + "attn.wq1", (H * d, E), half(("q", L), H, 0)),
            (p + "attn.wk1", (nk * d, E), naive_k(("k", L), 0) if naive else half(("k", L), KV, 0)),
            (p + "attn.wq2", (H * d, E), half(("q", L), H, 1)),
            (p + "attn.wk2", (nk * d, E), naive_k(("k", L), 1) if naive else half(("k", L), KV, 1)),
            (p + "attn.wv", (KV * 2 * d, E), whole(("v", L))),
            (p + "attn.wo", (E, H * 2 * d), whole(("o", L))),
        ]
        for lam in ("lambda_q1", "lambda_k1", "lambda_q2", "lambda_k2"):
            tensors.append((p + "attn." + lam, (d,), whole(("lambda", L, lam))))
        tensors += [
            (p + "attn.head_norm.weight", (2 * d,), whole(("subln", L))),
            (p + "ffn_norm.weight", (E,), whole(("ffn_norm", L))),
            (p + "ffn.w_gate", (F, E), whole(("gate", L))),
            (p + "ffn.w_up", (F, E), whole(("up", L))),
            (p + "ffn.w_down", (E, F), whole(("down", L))),
        ]
    tensors.append(("norm.weight", (E,), whole("norm")))
    if not tied:
        tensors.append(("output.weight", (V, E), whole("output")))
    return config, tensors
