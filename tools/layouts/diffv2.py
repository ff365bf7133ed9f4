"""Microsoft DIFF V2 (`MultiheadFlashDiffV2`) in a Llama-like decoder: state dicts or HF directories.

Reference: microsoft/unilm `Diff-Transformer/Diff-Transformer-V2/multihead_flashdiffv2.py`.
Microsoft ships only the attention module; the decoder around it is the caller's.  This layout
accepts a PyTorch state dict, a .safetensors file or an HF directory of a Llama-like pre-norm
SwiGLU decoder built around `MultiheadFlashDiffV2` -- with `use_diff_v2 = True` (lambda_proj
present in every layer) or `use_diff_v2 = False` (the module's baseline: standard attention, no
lambda_proj; such a checkpoint is not auto-detected, pass --format diffv2).

Accepted tensor names (after an optional prefix, --diffv2-prefix, default: auto-strip `module.`,
`_orig_mod.`, `model.` when every name but `lm_head.weight` has it; L = 0-based layer index):

    tok_embeddings.weight | embed_tokens.weight                            [V, D]
    norm.weight                                                             [D]
    output.weight | lm_head.weight                                          [V, D]  (absent: tied)
    layers.L.attention_norm.weight | layers.L.input_layernorm.weight        [D]
    layers.L.ffn_norm.weight | layers.L.post_attention_layernorm.weight     [D]
    layers.L.{attn|attention|self_attn}.q_proj.weight      [2H*d, D]  ([H*d, D] without DIFF V2)
    layers.L.{...}.k_proj.weight, v_proj.weight            [KV*d, D]
    layers.L.{...}.o_proj.weight                           [D, H*d]
    layers.L.{...}.lambda_proj.weight                      [H, D]     (DIFF V2 only)
    layers.L.feed_forward.{w1,w2,w3}.weight (SwiGLU: w2(silu(w1 x) * w3 x))
      | layers.L.mlp.{gate_proj,down_proj,up_proj}.weight
    (any `*.inv_freq` / `rotary_emb` buffer is accepted and ignored)

Hyper-parameters: with DIFF V2 the shapes give them all (H = lambda_proj rows, d = q rows / 2H,
KV = k rows / d); without it the head count (or head width) must be given.  An HF-style
config.json beside the weights is read: num_attention_heads (H), num_key_value_heads,
head_dim, rope_theta, rms_norm_eps, max_position_embeddings, tie_word_embeddings, use_diff_v2
(checked against the tensors), rope_scaling / rope_parameters / partial_rotary_factor (version
1.1 rope_scaling / rope_dim, as for DiffLlama: tools/layouts/hf_rope.py).  The training code's
ModelArgs names are read too: norm_eps, max_seq_len, n_heads, n_kv_heads (both spellings of one
setting with different values: refused); any other key is listed on stderr as not read.  Flags override it:
    --diffv2-heads H         num_heads (output heads; needed without DIFF V2 unless head_dim is known)
    --diffv2-head-dim d      head_dim
    --diffv2-rope-theta T    RoPE base of the caller's rel_pos (default 10000)
    --diffv2-rope-dim R      rotate only the first R components (flash-attn's apply_rotary_emb
                             with cos/sin of width R/2); default head_dim
    --diffv2-no-rope         the caller used no rotary embedding
    --diffv2-norm-eps E      eps of the decoder's RMSNorms (default 1e-5)
    --diffv2-max-seq-len N   (default 2048)
    --diffv2-prefix P        prefix to strip from every name ('' = none)

Mapping (docs/format.md section 3): q viewed [2H, d]; sub-head 2h is Q1 of head h, 2h+1 is Q2 of head h;
flash_attn's GQA gives query head j the KV head j // (2H/KV), so both halves of pair h read KV
head floor(h*KV/H) -- docs/format.md's rule -- when KV divides H (otherwise refused).  In the file: n_heads H,
head_dim d, v_head_dim d, attention diff, lambda_mode token_sigmoid (lambda = sigmoid(lambda_proj
x) with x the normed layer input, the module's input), shared_k, n_k1 = n_k2 = n_v = KV,
n_q2 = H, head_norm false, head_scale none, rope interleaved (the module's
apply_rotary_emb(..., interleaved=True)), ffn_act silu.  Without DIFF V2: attention standard,
n_k1 = n_v = KV, v_head_dim d, head j reading KV head j // (H/KV).
"""

import numpy as np

from layouts import ConvertError, decoder_names, report_unread
from layouts.hf_rope import hf_rope, inv_freq

NAME = "diffv2"

_PATTERNS = decoder_names.patterns([
    (r"^layers\.(\d+)\.%s\.o_proj\.weight$" % decoder_names.ATTN, "o"),
    (r"^layers\.(\d+)\.%s\.lambda_proj\.weight$" % decoder_names.ATTN, "lambda"),
])
_BARE = ("lm_head.weight",)  # may stand outside the prefix (an HF model's head beside `model.`)


def _strip_prefix(names, prefix):
    return decoder_names.strip_prefix(names, prefix, _BARE)


def _classify(names, prefix):
    """-> ({role or (role, L): source name}, n_layers); raises on any unknown name."""
    return decoder_names.classify(NAME, names, prefix, _PATTERNS, _BARE)


def mismatch(source):
    names = list(source.names())
    try:
        found, _ = _classify(names, _strip_prefix(names, None))
    except ConvertError as e:
        msg = str(e)
        return msg[len(NAME) + 2:] if msg.startswith(NAME + ": ") else msg
    if not any(isinstance(k, tuple) and k[0] == "lambda" for k in found):
        return ("no tensor 'layers.N.self_attn.lambda_proj.weight' (a use_diff_v2 = False checkpoint "
                "needs --format diffv2)")
    return None


def add_arguments(group):
    group.add_argument("--diffv2-heads", type=int, metavar="H", default=None,
                       help="num_heads (output heads); needed without DIFF V2 unless head_dim is known")
    group.add_argument("--diffv2-head-dim", type=int, metavar="d", default=None, help="head_dim")
    group.add_argument("--diffv2-rope-theta", type=float, metavar="T", default=None, help="RoPE base, above 0 (default: config.json rope_theta, else 10000)")
    group.add_argument("--diffv2-rope-dim", type=int, metavar="R", default=None,
                       help="rotate only the first R components of each head (default head_dim)")
    group.add_argument("--diffv2-no-rope", action="store_true", help="the model used no RoPE")
    group.add_argument("--diffv2-norm-eps", type=float, metavar="E", default=None, help="RMSNorm eps, above 0 (default: config.json rms_norm_eps, else 1e-5)")
    group.add_argument("--diffv2-max-seq-len", type=int, metavar="N", default=None, help="max sequence length, 1 or more (default: config.json max_position_embeddings, else 2048)")
    group.add_argument("--diffv2-prefix", default=None, metavar="P", help="prefix stripped from names (default: auto)")


def _opt(args, name, default=None):
    v = getattr(args, name, None) if args is not None else None
    return default if v is None else v


def _pos_int(v, what):
    if isinstance(v, bool) or not isinstance(v, int) or v <= 0:
        raise ConvertError("diffv2: %s = %r is not a positive integer" % (what, v))
    return v


# The config keys of the original training code's ModelArgs, read as the HF names they mean.
_ALIASES = {"norm_eps": "rms_norm_eps", "max_seq_len": "max_position_embeddings", "n_heads": "num_attention_heads",
            "n_kv_heads": "num_key_value_heads"}
# Keys this layout reads (directly or through hf_rope), and keys the tensor shapes already give
# (besides layouts.HF_INERT).
_READ = {"num_attention_heads", "num_key_value_heads", "head_dim", "rope_theta", "rms_norm_eps",
         "max_position_embeddings", "tie_word_embeddings", "use_diff_v2", "rope_scaling", "rope_parameters",
         "partial_rotary_factor"}
_INERT = {"vocab_size", "hidden_size", "dim", "intermediate_size", "num_hidden_layers", "n_layers", "hidden_act",
          "multiple_of", "ffn_dim_multiplier"}


def _config(cfg):
    """config.json with the original code's key names read as their HF names (both given and different:
    refused); keys the layout does not read are reported on stderr, since they might matter."""
    out = dict(cfg)
    for alias, name in _ALIASES.items():
        if alias in cfg:
            if name in cfg and cfg[name] != cfg[alias]:
                raise ConvertError("diffv2: config.json has %s = %r and %s = %r, which mean the same setting: "
                                   "keep one" % (alias, cfg[alias], name, cfg[name]))
            out[name] = cfg[alias]
            del out[alias]
    report_unread(NAME, out, _READ, _INERT)
    return out


def plan(source, args):
    names = list(source.names())
    found, nl = _classify(names, _strip_prefix(names, _opt(args, "diffv2_prefix")))
    cfg = _config(source.config or {})

    need, shape = decoder_names.accessors(NAME, source, found)

    V, D = shape("embed")
    tied = "output" not in found
    if cfg.get("tie_word_embeddings") and not tied:
        raise ConvertError("diffv2: tie_word_embeddings is set but %s is present" % found["output"])
    n_lambda = sum(1 for k in found if isinstance(k, tuple) and k[0] == "lambda")
    if n_lambda not in (0, nl):
        raise ConvertError("diffv2: lambda_proj in %d of %d layers (use_diff_v2 is one setting for all)"
                           % (n_lambda, nl))
    v2 = n_lambda == nl
    if "use_diff_v2" in cfg and bool(cfg["use_diff_v2"]) != v2:
        raise ConvertError("diffv2: config.json has use_diff_v2 = %r but the tensors %s lambda_proj"
                           % (cfg["use_diff_v2"], "have" if v2 else "have no"))
    q_rows = shape(("q", 0))[0]
    k_rows = shape(("k", 0))[0]
    Hf = _opt(args, "diffv2_heads", cfg.get("num_attention_heads"))
    df = _opt(args, "diffv2_head_dim", cfg.get("head_dim"))
    nq = 2 if v2 else 1
    if v2:
        H = shape(("lambda", 0))[0]
        if Hf is not None and int(Hf) != H:
            raise ConvertError("diffv2: heads %r, but lambda_proj has %d rows (one per output head)" % (Hf, H))
    elif Hf is not None:
        H = _pos_int(Hf, "heads")
    elif df is not None:
        df = _pos_int(df, "head_dim")
        if q_rows % df:
            raise ConvertError("diffv2: q_proj rows %d are not a multiple of head_dim %d" % (q_rows, df))
        H = q_rows // df
    else:
        raise ConvertError("diffv2: without lambda_proj (use_diff_v2 = False) the head count is unknown: pass "
                           "--diffv2-heads H (or --diffv2-head-dim d, or a config.json with num_attention_heads)")
    if q_rows % (nq * H):
        raise ConvertError("diffv2: q_proj rows %d are not %d * heads (%d) * head_dim" % (q_rows, nq, H))
    d = q_rows // (nq * H)
    if df is not None and int(df) != d:
        raise ConvertError("diffv2: head_dim %r, but q_proj rows %d / (%d * %d heads) = %d" % (df, q_rows, nq, H, d))
    if k_rows % d:
        raise ConvertError("diffv2: k_proj rows %d are not a multiple of head_dim %d" % (k_rows, d))
    KV = k_rows // d
    kv_cfg = cfg.get("num_key_value_heads")
    if kv_cfg is not None and int(kv_cfg) != KV:
        raise ConvertError("diffv2: num_key_value_heads %r, but k_proj has %d rows = %d heads of %d"
                           % (kv_cfg, k_rows, KV, d))
    if H % KV:
        if v2:
            raise ConvertError("diffv2: %d KV heads do not divide %d heads: flash-attn's GQA would give the two "
                               "halves of a pair different KV heads, which the dintattn format (docs/format.md section 1) cannot express" % (KV, H))
        raise ConvertError("diffv2: %d KV heads do not divide %d heads" % (KV, H))

    F = shape(("gate", 0))[0]
    want = {"embed": (V, D), "norm": (D,)}
    if not tied:
        want["output"] = (V, D)
    for L in range(nl):
        want.update({("attn_norm", L): (D,), ("ffn_norm", L): (D,), ("q", L): (nq * H * d, D),
                     ("k", L): (KV * d, D), ("v", L): (KV * d, D), ("o", L): (D, H * d),
                     ("gate", L): (F, D), ("up", L): (F, D), ("down", L): (D, F)})
        if v2:
            want[("lambda", L)] = (H, D)
    for key, shp in want.items():
        got = shape(key)
        if got != shp:
            raise ConvertError("diffv2: %s has shape %s, expected %s (heads %d, kv heads %d, head_dim %d%s)"
                               % (need(key), list(got), list(shp), H, KV, d, ", DIFF V2" if v2 else ""))

    no_rope = bool(_opt(args, "diffv2_no_rope", False))
    config = {
        "dim": D, "n_layers": nl, "vocab_size": V, "hidden_dim": F,
        "max_seq_len": int(_opt(args, "diffv2_max_seq_len", cfg.get("max_position_embeddings", 2048))),
        "n_heads": H, "head_dim": d, "v_head_dim": d, "n_k1_heads": KV, "n_v_heads": KV, "qk_rank": 0,
        "rope": "none" if no_rope else "interleaved",
        "norm_eps": float(_opt(args, "diffv2_norm_eps", cfg.get("rms_norm_eps", 1e-5))),
        "ffn_act": "silu", "tie_embeddings": tied,
    }
    if v2:
        config.update({"attention": "diff", "lambda_mode": "token_sigmoid", "shared_k": True,
                       "n_q2_heads": H, "n_k2_heads": KV, "head_norm": False, "head_scale": "none"})
    else:
        config.update({"attention": "standard", "n_q2_heads": 0, "n_k2_heads": 0})
    if not no_rope:
        rope = hf_rope(cfg, d, "diffv2: config.json")
        if getattr(args, "diffv2_rope_theta", None) is not None:
            rope["rope_theta"] = float(args.diffv2_rope_theta)
        rd = getattr(args, "diffv2_rope_dim", None)
        if rd is not None:
            if rd < 2 or rd % 2 or rd > d:
                raise ConvertError("diffv2: --diffv2-rope-dim %d must be even, from 2 to head_dim %d" % (rd, d))
            rope.pop("rope_dim", None)
            if rd != d:
                rope["rope_dim"] = rd
        config.update(rope)
        inv_freq(config)
    elif cfg.get("rope_scaling"):
        raise ConvertError("diffv2: config.json has rope_scaling but --diffv2-no-rope was given")

    def whole(key):
        n = need(key)
        return lambda: source.get(n)

    def half(key, which):
        # q [2H*d, D] viewed [H, 2, d, D]: which 0 = Q1 (even sub-heads), 1 = Q2 (odd)
        n = need(key)
        return lambda: np.ascontiguousarray(source.get(n).reshape(H, 2, d, D)[:, which].reshape(H * d, D))

    tensors = [("tok_embeddings.weight", (V, D), whole("embed"))]
    for L in range(nl):
        p = "layers.%d." % L
        tensors.append((p + "attn_norm.weight", (D,), whole(("attn_norm", L))))
        if v2:
            tensors += [(p + "attn.wq1", (H * d, D), half(("q", L), 0)),
                        (p + "attn.wq2", (H * d, D), half(("q", L), 1)),
                        (p + "attn.lambda_proj", (H, D), whole(("lambda", L)))]
        else:
            tensors.append((p + "attn.wq1", (H * d, D), whole(("q", L))))
        tensors += [
            (p + "attn.wk1", (KV * d, D), whole(("k", L))),
            (p + "attn.wv", (KV * d, D), whole(("v", L))),
            (p + "attn.wo", (D, H * d), whole(("o", L))),
            (p + "ffn_norm.weight", (D,), whole(("ffn_norm", L))),
            (p + "ffn.w_gate", (F, D), whole(("gate", L))),
            (p + "ffn.w_up", (F, D), whole(("up", L))),
            (p + "ffn.w_down", (D, F), whole(("down", L))),
        ]
    tensors.append(("norm.weight", (D,), whole("norm")))
    if not tied:
        tensors.append(("output.weight", (V, D), whole("output")))
    return config, tensors
