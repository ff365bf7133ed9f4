"""lucidrains/x-transformers `TransformerWrapper(attn_layers = Decoder(...))` state dicts.

Written from x_transformers/x_transformers.py and attend.py (standard attention: the library
has no differential attention).  Supported: the options of a Llama-style decoder --
    rotary_pos_emb (rotary_emb_dim, default dim_head // 2: partial), rotary_interpolation_factor
    (-> rope_scaling linear), rotary_base_rescale_factor (folded into rope_theta),
    use_rmsnorm or use_simple_rmsnorm (norm_add_unit_offset true, the default, or false),
    ff_glu with ff_swish (ff_mult any; ff_no_bias), attn_kv_heads / attn_one_kv_head (GQA),
    attn_dim_head, tie_embedding, and settings that do not change inference (dropouts,
    attn_flash, attn_z_loss_weight, emb_frac_gradient, verbose).
Every other option set to anything but off (False / None / 0) is refused by name, and so is
any tensor this layout does not consume.

Hyper-parameters: the TransformerWrapper and Decoder keyword arguments, as a JSON object
(--xtransformers-config FILE, or a config.json beside the state dict holding "attn_layers"):
    {"num_tokens": 256, "max_seq_len": 1024, "tie_embedding": false,
     "attn_layers": {"dim": 512, "depth": 6, "heads": 8, "rotary_pos_emb": true, ...}}
(a flat object with the Decoder's keys at the top level is read the same way), and/or
--xtransformers-set KEY=JSON (repeatable, e.g. heads=8, attn_kv_heads=2, rotary_pos_emb=true).
Absent keys take the library's defaults (heads 8, attn_dim_head 64, LayerNorm -- refused --,
no rotary, rotary_emb_dim = dim_head // 2 -- or, when not given, the width of the saved
inv_freq buffer --, base 10000).  One key is this layout's own:
"x_transformers_version" (e.g. "1.27.0"), the library version that trained the model, for the
two defaults that changed and that the weights do not show: rotary pairs are adjacent since
1.30.1 (halves before: rope "halves"), and norm_add_unit_offset (gamma = g + 1) is on by default
since 1.31.3 (absent before 1.31.0, off by default in 1.31.0-1.31.2); also, before 1.42.18
rotary_emb_dim was raised to at least 32.  Without it (and without --xtransformers-version)
a checkpoint that uses rotary or RMSNorm gains is refused: its weights do not show which
behaviour trained them.
num_tokens, dim, depth and the FFN
width are read from the shapes.

Tensor names (after optional `net.` (AutoregressiveWrapper), `module.`, `_orig_mod.`, `model.`
prefix; layers alternate attention (2l) and feed-forward (2l+1)):
    token_emb.emb.weight [V, D]                 to_logits.weight [V, D] (absent when tied)
    attn_layers.rotary_pos_emb.inv_freq [R/2]   (checked against rotary_emb_dim and the base)
    attn_layers.layers.{2l}.0.0.g [D]           (RMSNorm gamma; SimpleRMSNorm has none)
    attn_layers.layers.{2l}.1.to_q.weight [H*d, D]   to_k, to_v [KV*d, D]   to_out.weight [D, H*d]
                                                (no to_out when heads = 1 and d = D: identity)
    attn_layers.layers.{2l+1}.0.0.g [D]
    attn_layers.layers.{2l+1}.1.ff.0.proj.weight [2F, D], .bias [2F]   (GLU: value rows first,
                                                then gate rows; the bias is always there)
    attn_layers.layers.{2l+1}.1.ff.{2|3}.weight [D, F], .bias [D]      (bias absent with ff_no_bias)
    attn_layers.final_norm.g [D]

Mapping:
  - Norms: F.normalize(x) * sqrt(D) * gamma with gamma = g + 1 (norm_add_unit_offset, the
    default) or g (false), or 1 for SimpleRMSNorm: RMSNorm without eps, except that
    F.normalize clamps the norm at 1e-12.  norm_eps is written as 1e-24 / D, so
    sqrt(mean(x^2) + eps) = sqrt(|x|^2 + 1e-24) / sqrt(D): the same for any row whose norm is
    well above 1e-12 (relative difference below 1e-12 for norms above 1e-6), and a zero row (a
    zeroed padding embedding) gives 0 as x-transformers does, where eps 0 would give NaN.
  - RoPE: rotate_half on (d r) pairs = "interleaved" (pairs (2k, 2k+1)) on the first R =
    rotary_emb_dim components (rope_dim R), inv_freq = base^(-2k/R); no xpos.  Before 1.30.1:
    "halves" (pairs (k, k + R/2)).
  - GQA: attend.py repeats K/V as 'b kvh n d -> b (r kvh) n d', so query head j reads KV head
    j mod KV (not j // (H/KV) as in Llama).  The file's signal head i = c*g + r (g = H/KV) is
    source head r*KV + c: the rows of to_q and the columns of to_out are permuted so, which
    leaves the output unchanged, and head i reads KV head i // g = c.
  - FFN: GLU proj x -> (value, gate) halves, value * silu(gate): w_up = first F rows, w_gate =
    last F rows (and their biases); ffn_bias true (version 1.1, docs/format.md section 3), b_down zero with ff_no_bias.
"""

import json
import math
import re

import numpy as np

from layouts import ConvertError, auto_prefix

NAME = "xtransformers"

_PREFIXES = ("net.", "module.", "_orig_mod.", "model.")

# TransformerWrapper keyword arguments (the rest belong to the Decoder)
_WRAPPER_KEYS = {
    "num_tokens", "max_seq_len", "attn_layers", "embed_num_tokens", "emb_dim", "max_mem_len",
    "shift_mem_down", "emb_dropout", "post_emb_norm", "num_memory_tokens", "memory_tokens_interspersed_every",
    "tie_embedding", "logits_dim", "return_only_embed", "num_output_heads", "use_abs_pos_emb",
    "scaled_sinu_pos_emb", "l2norm_embed", "recycling", "train_max_recycle_steps", "looped", "max_looped_steps",
    "emb_frac_gradient", "attn_z_loss_weight", "average_pool_embed", "use_cls_token", "num_cls_tokens",
    "attn_pool", "num_pooled_tokens", "attn_pool_depth", "dim_pooled_tokens", "squeeze_out_last_dim",
    "token_emb", "mixture_of_softmax", "mixture_of_softmax_k", "sigsoftmax_logits", "ff_deep_embed",
    "to_logits", "add_continuous_pred_head", "input_not_include_cache",
}
# keys read by this layout (any value is checked below)
_HANDLED = {
    "num_tokens", "max_seq_len", "tie_embedding", "use_abs_pos_emb", "dim", "depth", "heads",
    "use_rmsnorm", "use_simple_rmsnorm", "norm_add_unit_offset", "rotary_pos_emb", "rotary_emb_dim",
    "rotary_interpolation_factor", "rotary_base_rescale_factor", "rotary_xpos", "attn_dim_head",
    "attn_kv_heads", "attn_one_kv_head", "ff_glu", "ff_swish", "ff_mult", "ff_no_bias", "pre_norm",
    "pre_norm_has_final_norm", "emb_dim", "logits_dim", "num_output_heads", "disable_abs_pos_emb",
    "x_transformers_version",
}
# keys that do not change inference, any value accepted
_INERT = {
    "emb_dropout", "layer_dropout", "attn_dropout", "ff_dropout", "attn_sublayer_dropout",
    "ff_sublayer_dropout", "cross_attn_tokens_dropout", "attn_flash", "attn_z_loss_weight",
    "emb_frac_gradient", "verbose", "train_max_recycle_steps", "max_looped_steps", "attn_onnxable",
    "attn_attend_sdp_kwargs", "learned_value_residual_mix", "attn_low_rank_silu_gates",
    "zero_init_branch_output", "attn_zero_init_output", "ff_zero_init_output", "max_mem_len",
    "dynamic_tanh_init_alpha", "rotary_xpos_scale_base", "rel_pos_num_buckets", "rel_pos_max_distance",
}


def _strip(names):
    return auto_prefix(names, _PREFIXES)


def mismatch(source):
    names = list(source.names())
    p = _strip(names)
    for want in ("token_emb.emb.weight", "attn_layers.layers.0.1.to_q.weight"):
        if p + want not in names:
            return "no tensor '%s%s'" % (p, want)
    return None


def add_arguments(group):
    group.add_argument("--xtransformers-config", metavar="FILE", default=None,
                       help="JSON of the TransformerWrapper / Decoder keyword arguments")
    group.add_argument("--xtransformers-set", metavar="KEY=JSON", action="append", default=[],
                       help="one keyword argument (repeatable), e.g. heads=8 or rotary_pos_emb=true")
    group.add_argument("--xtransformers-version", metavar="X.Y.Z", default=None,
                       help="the x-transformers version that trained the model (pip show x-transformers "
                            "there), when its config has no \"x_transformers_version\"; needed whenever "
                            "rotary or RMSNorm gains are used, whose meaning changed between versions")


def _off(v):
    return v is None or v is False or (isinstance(v, (int, float)) and not isinstance(v, bool) and v == 0) \
        or v == {} or v == [] or v == ()


def _hyper(source, args):
    """The keyword arguments, flattened: Decoder's and TransformerWrapper's in one dict."""
    merged = {}

    def add(obj, where):
        if not isinstance(obj, dict):
            raise ConvertError("xtransformers: %s is not a JSON object" % where)
        for k, v in obj.items():
            if k == "attn_layers":
                if not isinstance(v, dict):
                    raise ConvertError("xtransformers: %s: attn_layers must be an object of the Decoder's "
                                       "keyword arguments" % where)
                for k2, v2 in v.items():
                    if k2 in _WRAPPER_KEYS:
                        raise ConvertError("xtransformers: %s: %r is a TransformerWrapper argument, not the "
                                           "Decoder's" % (where, k2))
                    merged[k2] = v2
            else:
                merged[k] = v

    cfg = source.config or {}
    if "attn_layers" in cfg:
        add(cfg, "config.json")
    path = getattr(args, "xtransformers_config", None) if args is not None else None
    if path:
        try:
            with open(path) as f:
                add(json.load(f), path)
        except OSError as e:
            raise ConvertError("%s: %s" % (path, e.strerror or e))
        except ValueError as e:
            raise ConvertError("%s: %s" % (path, e))
    for item in (getattr(args, "xtransformers_set", None) or []) if args is not None else []:
        if "=" not in item:
            raise ConvertError("xtransformers: --xtransformers-set %r is not KEY=JSON" % item)
        k, v = item.split("=", 1)
        try:
            v = json.loads(v)
        except ValueError:
            raise ConvertError("xtransformers: --xtransformers-set %s: %r is not JSON (strings need quotes)" % (k, v))
        add({k.strip(): v}, "--xtransformers-set")
    if merged.get("causal") is not None:
        raise ConvertError("xtransformers: option 'causal' is not a Decoder argument (a Decoder is always causal)")
    return merged


def _version(v):
    """x_transformers_version "1.30.1" -> (1, 30, 1); None when not given (the current library)."""
    if v is None:
        return None
    m = re.match(r"^(\d+)\.(\d+)(?:\.(\d+))?", str(v))
    if not m:
        raise ConvertError("xtransformers: x_transformers_version %r is not a version number like \"1.30.1\"" % (v,))
    return tuple(int(x or 0) for x in m.groups())


def _int(h, key, default):
    v = h.get(key, default)
    if isinstance(v, bool) or not isinstance(v, int) or v <= 0:
        raise ConvertError("xtransformers: option %r = %r is not a positive integer" % (key, v))
    return v


def _num(h, key, default):
    v = h.get(key, default)
    if isinstance(v, bool) or not isinstance(v, (int, float)) or not math.isfinite(v):
        raise ConvertError("xtransformers: option %r = %r is not a number" % (key, v))
    return float(v)


def _bool(h, key, default):
    v = h.get(key, default)
    if not isinstance(v, bool):
        raise ConvertError("xtransformers: option %r = %r is not a bool" % (key, v))
    return v


def plan(source, args):
    h = _hyper(source, args)
    for k, v in sorted(h.items()):
        if k in _HANDLED or k in _INERT or _off(v):
            continue
        raise ConvertError("xtransformers: option %r = %s is not supported (this layout converts Llama-style "
                           "decoders: rotary_pos_emb, use_rmsnorm / use_simple_rmsnorm, ff_glu + ff_swish, "
                           "attn_kv_heads, ff_no_bias, tie_embedding)" % (k, json.dumps(v)))
    # options with a non-off default, or that must be on
    if not _bool(h, "pre_norm", True):
        raise ConvertError("xtransformers: option 'pre_norm' = false (post-norm) is not supported")
    if not _bool(h, "pre_norm_has_final_norm", True):
        raise ConvertError("xtransformers: option 'pre_norm_has_final_norm' = false is not supported")
    rms, simple = _bool(h, "use_rmsnorm", False), _bool(h, "use_simple_rmsnorm", False)
    if rms and simple:
        raise ConvertError("xtransformers: options 'use_rmsnorm' and 'use_simple_rmsnorm' are both set")
    if not (rms or simple):
        raise ConvertError("xtransformers: the norm is LayerNorm (neither 'use_rmsnorm' nor 'use_simple_rmsnorm' "
                           "is set): not supported%s"
                           % ("" if h else "; no hyper-parameters were given (--xtransformers-config FILE or "
                              "--xtransformers-set KEY=JSON)"))
    ver = _version(h.get("x_transformers_version"))
    cli_ver = getattr(args, "xtransformers_version", None) if args is not None else None
    if cli_ver is not None:
        if ver is not None and _version(cli_ver) != ver:
            raise ConvertError("xtransformers: --xtransformers-version %s disagrees with the config's "
                               "\"x_transformers_version\" %r: give one of them" % (cli_ver, h.get("x_transformers_version")))
        ver = _version(cli_ver)
    if ver is None:
        # Defaults that changed between versions and that the weights do not show: guessing wrong gives a
        # model that runs with logits off by about 2, so the version is asked for unless none applies.
        depends = []
        if h.get("rotary_pos_emb", False) and not _off(h.get("rotary_pos_emb")):
            depends.append("rotary pairs (halves before 1.30.1, adjacent since)")
        if _bool(h, "use_rmsnorm", False) and "norm_add_unit_offset" not in h:
            depends.append("RMSNorm gains (g, or g + 1 by default since 1.31.3)")
        if depends:
            raise ConvertError("xtransformers: the checkpoint does not say which x-transformers version trained it, "
                               "and its %s depend on it: give --xtransformers-version X.Y.Z (`pip show "
                               "x-transformers` where it was trained) or put \"x_transformers_version\" in its "
                               "config" % " and ".join(depends))
    # norm_add_unit_offset: absent before 1.31.0 (gamma = g), default false in 1.31.0-1.31.2
    unit_offset = _bool(h, "norm_add_unit_offset", ver is None or ver >= (1, 31, 3))
    if unit_offset and ver is not None and ver < (1, 31, 0):
        raise ConvertError("xtransformers: option 'norm_add_unit_offset' does not exist before x-transformers 1.31.0")
    if not _bool(h, "ff_glu", False):
        raise ConvertError("xtransformers: option 'ff_glu' is not set: only the GLU feed-forward (ff_glu with "
                           "ff_swish) is supported")
    if not _bool(h, "ff_swish", False):
        raise ConvertError("xtransformers: option 'ff_swish' is not set: ff_glu with GELU is not supported, only "
                           "with swish (SwiGLU)")
    if _bool(h, "rotary_xpos", False):
        raise ConvertError("xtransformers: option 'rotary_xpos' is not supported")
    for k in ("emb_dim", "logits_dim"):
        if h.get(k) is not None:
            raise ConvertError("xtransformers: option %r is not supported" % k)
    if h.get("num_output_heads", 1) != 1:
        raise ConvertError("xtransformers: option 'num_output_heads' = %r is not supported" % h["num_output_heads"])

    names = list(source.names())
    name_set = set(names)
    prefix = _strip(names)
    used = set()

    def has(n):
        return prefix + n in name_set

    def take(n, shape=None):
        full = prefix + n
        if full not in name_set:
            raise ConvertError("xtransformers: missing tensor '%s'" % full)
        got = tuple(int(s) for s in source.shape(full))
        if shape is not None and got != tuple(shape):
            raise ConvertError("xtransformers: tensor '%s' has shape %s, expected %s" % (full, list(got), list(shape)))
        used.add(full)
        return full, got

    if has("pos_emb.emb.weight"):
        raise ConvertError("xtransformers: tensor '%spos_emb.emb.weight': the absolute positional embedding is not "
                           "supported (use rotary_pos_emb, or use_abs_pos_emb = false)" % prefix)
    emb, (V, D) = take("token_emb.emb.weight")
    if h.get("num_tokens") is not None and _int(h, "num_tokens", V) != V:
        raise ConvertError("xtransformers: num_tokens %r, but token_emb.emb.weight has %d rows" % (h["num_tokens"], V))
    if h.get("dim") is not None and _int(h, "dim", D) != D:
        raise ConvertError("xtransformers: dim %r, but token_emb.emb.weight has %d columns" % (h["dim"], D))
    layer_ids = set()
    for n in names:
        m = re.match(re.escape(prefix) + r"attn_layers\.layers\.(\d+)\.", n)
        if m:
            layer_ids.add(int(m.group(1)))
    nmod = max(layer_ids) + 1 if layer_ids else 0
    if nmod == 0 or nmod % 2:
        raise ConvertError("xtransformers: %d attn_layers.layers modules: expected attention / feed-forward pairs"
                           % nmod)
    nl = nmod // 2
    if h.get("depth") is not None and _int(h, "depth", nl) != nl:
        raise ConvertError("xtransformers: depth %r, but the state dict has %d layers" % (h["depth"], nl))

    heads = _int(h, "heads", 8)
    d = _int(h, "attn_dim_head", 64)
    if _bool(h, "attn_one_kv_head", False):
        if h.get("attn_kv_heads") is not None:
            raise ConvertError("xtransformers: attn_one_kv_head and attn_kv_heads are both set")
        KV = 1
    else:
        KV = _int(h, "attn_kv_heads", heads)
    if heads % KV:
        raise ConvertError("xtransformers: attn_kv_heads %d does not divide heads %d" % (KV, heads))
    g = heads // KV
    q_rows = int(source.shape(prefix + "attn_layers.layers.0.1.to_q.weight")[0])
    if q_rows != heads * d:
        raise ConvertError("xtransformers: to_q has %d rows, but heads %d * attn_dim_head %d = %d: set 'heads' and "
                           "'attn_dim_head' as the model was built" % (q_rows, heads, d, heads * d))

    rotary = h.get("rotary_pos_emb")
    inv_name = "attn_layers.rotary_pos_emb.inv_freq"
    if rotary is None:
        rotary = has(inv_name)
    elif not isinstance(rotary, bool):
        raise ConvertError("xtransformers: option 'rotary_pos_emb' = %r is not a bool" % rotary)
    if not rotary and has(inv_name):
        raise ConvertError("xtransformers: rotary_pos_emb is false but tensor '%s%s' is present" % (prefix, inv_name))
    if not rotary and h.get("use_abs_pos_emb", True) and h.get("max_seq_len", 1) != 0 \
            and not h.get("disable_abs_pos_emb"):
        # the library would have built an absolute positional embedding: its tensor is absent
        raise ConvertError("xtransformers: neither rotary_pos_emb nor use_abs_pos_emb = false: the model has an "
                           "absolute positional embedding (tensor 'pos_emb.emb.weight' missing), not supported")
    config = {
        "dim": D, "n_layers": nl, "vocab_size": V, "n_heads": heads, "head_dim": d, "v_head_dim": d,
        "n_k1_heads": KV, "n_v_heads": KV, "n_q2_heads": 0, "n_k2_heads": 0, "attention": "standard",
        "qk_rank": 0, "norm_eps": 1e-24 / D, "ffn_act": "silu", "ffn_bias": True,
        "max_seq_len": int(h.get("max_seq_len") or 2048),
        # rotate_half on adjacent pairs since 1.30.1; before, on halves (cat(freqs, freqs))
        "rope": ("interleaved" if ver is None or ver >= (1, 30, 1) else "halves") if rotary else "none",
    }
    if rotary:
        given = h.get("rotary_emb_dim")
        R = _int(h, "rotary_emb_dim", d // 2)
        if ver is not None and ver < (1, 42, 18):   # the library raised it to at least 32 then
            R = max(R, 32)
        elif given is None and has(inv_name):
            R = 2 * int(source.shape(prefix + inv_name)[0])   # the buffer tells the width
        if R > d or R % 2 or R < 2:
            raise ConvertError("xtransformers: rotary_emb_dim %d must be even, from 2 to attn_dim_head %d" % (R, d))
        base = 10000.0
        resc = _num(h, "rotary_base_rescale_factor", 1.0)
        if resc != 1.0:
            if R == 2:
                raise ConvertError("xtransformers: rotary_base_rescale_factor with rotary_emb_dim 2 divides by zero")
            base *= resc ** (R / (R - 2))
        interp = _num(h, "rotary_interpolation_factor", 1.0)
        if interp < 1:
            raise ConvertError("xtransformers: rotary_interpolation_factor %r is below 1" % interp)
        config["rope_theta"] = base
        if R != d:
            config["rope_dim"] = R
        if interp != 1.0:
            config["rope_scaling"] = {"type": "linear", "factor": interp}
        if has(inv_name):
            n, shp = take(inv_name)
            want = 1.0 / (base ** (np.arange(0, R, 2, dtype=np.float64) / R))
            got = source.get(n)
            if shp != (R // 2,) or not np.allclose(got, want, rtol=1e-5):
                raise ConvertError("xtransformers: tensor '%s' (%d frequencies) is not the rotary embedding of "
                                   "rotary_emb_dim %d, base %g: set 'rotary_emb_dim' / 'rotary_base_rescale_factor' "
                                   "as the model was built" % (n, shp[0] if shp else 0, R, base))

    tied = _bool(h, "tie_embedding", False)
    if tied and has("to_logits.weight"):
        raise ConvertError("xtransformers: tie_embedding is true but tensor '%sto_logits.weight' is present" % prefix)
    if not tied and not has("to_logits.weight"):
        raise ConvertError("xtransformers: missing tensor '%sto_logits.weight' (set tie_embedding = true if the "
                           "embedding was tied)" % prefix)
    config["tie_embeddings"] = tied

    def gamma(n):
        if simple:
            if has(n + ".g"):
                raise ConvertError("xtransformers: use_simple_rmsnorm, but tensor '%s%s.g' is present "
                                   "(use_rmsnorm?)" % (prefix, n))
            return lambda: np.ones(D, np.float32)
        full, _ = take(n + ".g", (D,))
        if unit_offset:
            return lambda: source.get(full).astype(np.float64) + 1.0
        return lambda: source.get(full)

    def whole(full):
        return lambda: source.get(full)

    def perm_rows(full):
        # the file's head i = c*g + r  <-  source head r*KV + c
        order = [r * KV + c for c in range(KV) for r in range(g)]
        return lambda: np.ascontiguousarray(source.get(full).reshape(heads, d, D)[order].reshape(heads * d, D))

    def perm_cols(full):
        order = [r * KV + c for c in range(KV) for r in range(g)]
        return lambda: np.ascontiguousarray(source.get(full).reshape(D, heads, d)[:, order].reshape(D, heads * d))

    F = None
    tensors = [("tok_embeddings.weight", (V, D), whole(emb))]
    for l in range(nl):
        a, f = "attn_layers.layers.%d." % (2 * l), "attn_layers.layers.%d." % (2 * l + 1)
        p = "layers.%d." % l
        q, _ = take(a + "1.to_q.weight", (heads * d, D))
        k, _ = take(a + "1.to_k.weight", (KV * d, D))
        v, _ = take(a + "1.to_v.weight", (KV * d, D))
        tensors += [(p + "attn_norm.weight", (D,), gamma(a + "0.0")),
                    (p + "attn.wq1", (heads * d, D), perm_rows(q)),
                    (p + "attn.wk1", (KV * d, D), whole(k)),
                    (p + "attn.wv", (KV * d, D), whole(v))]
        if has(a + "1.to_out.weight"):
            o, _ = take(a + "1.to_out.weight", (D, heads * d))
            tensors.append((p + "attn.wo", (D, heads * d), perm_cols(o)))
        elif heads == 1 and d == D:   # Attention builds no to_out for one head of width dim: identity
            tensors.append((p + "attn.wo", (D, D), lambda: np.eye(D, dtype=np.float32)))
        else:
            take(a + "1.to_out.weight")   # raises: missing
        pw, shp = take(f + "1.ff.0.proj.weight")
        if F is None:
            if len(shp) != 2 or shp[1] != D or shp[0] % 2:
                raise ConvertError("xtransformers: tensor '%s' has shape %s, expected [2F, %d]" % (pw, list(shp), D))
            F = shp[0] // 2
        take(f + "1.ff.0.proj.weight", (2 * F, D))
        pb, _ = take(f + "1.ff.0.proj.bias", (2 * F,))
        outs = [i for i in (2, 3) if has(f + "1.ff.%d.weight" % i)]
        if len(outs) != 1:
            raise ConvertError("xtransformers: expected one feed-forward output projection '%s%s1.ff.2.weight' "
                               "(found %d)" % (prefix, f, len(outs)))
        dw, _ = take(f + "1.ff.%d.weight" % outs[0], (D, F))
        no_bias = _bool(h, "ff_no_bias", False)
        if no_bias:
            if has(f + "1.ff.%d.bias" % outs[0]):
                raise ConvertError("xtransformers: ff_no_bias is set but tensor '%s%s1.ff.%d.bias' is present"
                                   % (prefix, f, outs[0]))
            b_down = (lambda: np.zeros(D, np.float32))
        else:
            db, _ = take(f + "1.ff.%d.bias" % outs[0], (D,))
            b_down = whole(db)
        tensors += [
            (p + "ffn_norm.weight", (D,), gamma(f + "0.0")),
            (p + "ffn.w_gate", (F, D), lambda pw=pw: source.get(pw)[F:]),
            (p + "ffn.w_up", (F, D), lambda pw=pw: source.get(pw)[:F]),
            (p + "ffn.w_down", (D, F), whole(dw)),
            (p + "ffn.b_gate", (F,), lambda pb=pb: source.get(pb)[F:]),
            (p + "ffn.b_up", (F,), lambda pb=pb: source.get(pb)[:F]),
            (p + "ffn.b_down", (D,), b_down),
        ]
    config["hidden_dim"] = F
    tensors.append(("norm.weight", (D,), gamma("attn_layers.final_norm")))
    if not tied:
        lo, _ = take("to_logits.weight", (V, D))
        tensors.append(("output.weight", (V, D), whole(lo)))
    for n in names:
        if n not in used:
            raise ConvertError("xtransformers: unknown tensor '%s' (shape %s): an option this layout does not "
                               "convert" % (n, list(source.shape(n))))
    return config, tensors
