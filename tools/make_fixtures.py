#!/usr/bin/python3
"""Regenerate tests/fixtures/ (small random models and their reference logits), deterministically.

Run from anywhere, with Debian's python3 (it has numpy):

    /usr/bin/python3 tools/make_fixtures.py [--out DIR]

(--out writes the whole set into DIR instead of tests/fixtures/, e.g. to compare a regeneration
with the committed files: `cmp` every file of tests/fixtures against DIR's.)

Writes, for every fixture NAME below (FIXTURES, then the version 1.1 ones, V11_FIXTURES, whose
names start with "v11_" and whose files say "version": "1.1"):
    tests/fixtures/NAME.safetensors   the model (tools/make_model.py)
    tests/fixtures/NAME.logits        reference logits, little-endian float32 [N, vocab_size],
                                      from tools/reference.py: reference.forward(path, ids)
and, for every converted-weights fixture NAME (CONVERTED below: the load option
dintattn_load_options.weights), besides NAME.safetensors and NAME.logits as above:
    tests/fixtures/NAME.q8.logits     reference logits of the model with every weight matrix
    tests/fixtures/NAME.q4.logits     converted as the engine converts it at load (weights = Q8,
    tests/fixtures/NAME.bf16.logits   weights = Q4, weights = BF16; see convert_matrix), written
                                      to a temporary F32 file and run through reference.forward
    tests/fixtures/NAME.kvbf16.logits reference logits with the KV cache in bf16 / int8 per head
    tests/fixtures/NAME.kvq8.logits   row (reference.forward(..., kv="bf16" / "q8"))
and tests/fixtures/conv_dint_grouped_gqa_q8file.safetensors and _q4file.safetensors,
conv_dint_grouped_gqa_f32 with its matrices stored as Q8 (I8 + NAME.scale) and as Q4 (U8 +
NAME.scale) in the file (make_model.write_quantized_file), checked under the reference to give
conv_dint_grouped_gqa_f32.q8.logits and .q4.logits;
and three lists, one entry per line, fields separated by single spaces:
    tests/fixtures/manifest.txt       NAME IDS        (IDS: comma-separated token ids, N of them)
    tests/fixtures/pairs.txt          A B IDS         (A.safetensors and B.safetensors are the
                                                       same model written two ways: their logits
                                                       must agree; no .logits file for B)
    tests/fixtures/converted.txt      NAME IDS        (the converted-weights fixtures; not in
                                                       manifest.txt)
NAME/A/B are file names without the .safetensors extension.

Every fixture is checked before it is written: logits finite, varying across positions and
vocabulary, and (where a fixture names a contrast) clearly different from the same weights under
the contrasting config (or, for a callable contrast, from the rewritten config and weights it
returns), so each fixture really exercises the option it is named for.  Pairs are
checked to agree under the reference.  Converted-weights fixtures are checked to move the logits
measurably under Q8 (so a test that ignores the option fails) but only by a few percent (so the
conversion is the intended one), under Q4 several times more than under Q8 but by a bounded
amount (Q4_MIN_MOVE, Q4_MAX_RMS), and BF16 of an F32 file likewise.  Seeds derive from the
names, so adding a fixture does not change the others.
"""

import json
import os
import sys
import tempfile
import zlib

import numpy as np

TOOLS = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, TOOLS)
import cli  # noqa: E402
import make_model  # noqa: E402
import safetensors_io  # noqa: E402
import reference  # noqa: E402  (tools/reference.py: forward(path, ids) -> float64 [N, vocab])

OUT = os.path.join(os.path.dirname(TOOLS), "tests", "fixtures")

# sizes: dim 24-32, 2-3 layers, odd vocab 41-69, hidden 32-42, max_seq_len 24-32
S4 = dict(dim=24, n_layers=2, vocab_size=61, hidden_dim=40, max_seq_len=32,
          n_heads=4, head_dim=8)                    # 4 heads of 8
S8 = dict(dim=32, n_layers=2, vocab_size=59, hidden_dim=40, max_seq_len=28,
          n_heads=8, head_dim=4)                    # 8 heads of 4, for G=4 groups and GQA mixes
S6 = dict(dim=30, n_layers=2, vocab_size=53, hidden_dim=42, max_seq_len=24,
          n_heads=6, head_dim=6)                    # odd sizes: 6 heads of 6, D != H*d


def F(name, cfg, dtype, contrast=None, **kw):
    """One fixture: name, config (written verbatim), dtype, optional contrast: config overrides
    (same weights, written under the overridden config; the logits must change: tensors the
    contrast config does not use are left out), or a function (cfg, weights) -> (cfg, weights)
    for contrasts a config override cannot say; make_model options."""
    return dict(name=name, cfg=cfg, dtype=dtype, contrast=contrast, kw=kw)


FIXTURES = [
    # --- standard attention (Llama-style baseline)
    F("standard_gqa_halves_f32",
      dict(S4, attention="standard", n_k1_heads=2, n_v_heads=2, rope="halves"), "f32",
      contrast=dict(rope="interleaved")),
    # four heads over each K / V head, widths for the four-query kernels: decode reads them once
    F("standard_gqa4_d16_f32",
      dict(S8, vocab_size=41, head_dim=16, v_head_dim=32, attention="standard", n_k1_heads=2,
           n_v_heads=2), "f32"),
    F("standard_tied_norope_hd5_f16",
      dict(S4, dim=24, vocab_size=47, hidden_dim=32, head_dim=5, attention="standard",
           n_q2_heads=0, n_k2_heads=0, tie_embeddings=True, rope="none"), "f16"),
    F("standard_lowrank_polynorm_bf16",
      dict(S4, vocab_size=43, attention="standard", n_k1_heads=2, n_v_heads=2, qk_rank=2,
           ffn_act="polynorm"), "bf16"),
    # --- DIFF
    F("diff_interleaved_f32", dict(S4, attention="diff"), "f32",
      contrast=dict(attention="dint")),
    F("diff_all_keys_explicit_bf16",
      dict(S4, vocab_size=67, attention="diff", n_k1_heads=4, n_q2_heads=4, n_k2_heads=4,
           n_v_heads=4, v_head_dim=16, qk_rank=0, integral="mean", lambda_init="depth",
           head_norm=True, head_norm_type="rms", head_scale="one_minus_lambda_init",
           rope="interleaved", rope_theta=10000.0, norm_eps=1e-5, head_norm_eps=1e-5,
           ffn_act="silu", tie_embeddings=False), "bf16"),
    F("diff_gqa_halves_bf16",
      dict(S4, vocab_size=41, attention="diff", n_k1_heads=2, n_k2_heads=2, n_v_heads=2,
           rope="halves"), "bf16"),
    F("diff_headscale_none_f32", dict(S4, vocab_size=45, attention="diff", head_scale="none"),
      "f32", contrast=dict(head_scale="one_minus_lambda_init")),
    F("diff_no_headnorm_f16", dict(S4, vocab_size=49, attention="diff", head_norm=False),
      "f16"),
    F("diff_dv_eq_d_bf16", dict(S4, vocab_size=51, attention="diff", v_head_dim=8), "bf16"),
    F("diff_lambda_const_f32", dict(S4, vocab_size=55, attention="diff", lambda_init=0.5),
      "f32", contrast=dict(lambda_init="depth")),
    F("diff_lambda_list_f16",
      dict(S4, vocab_size=57, attention="diff", lambda_init=[0.1, 0.7]), "f16",
      contrast=dict(lambda_init="depth")),
    F("diff_3layer_depth_f32", dict(S4, vocab_size=63, n_layers=3, attention="diff"), "f32",
      contrast=dict(lambda_init=0.8)),
    F("diff_groupnorm_perhead_f32",
      dict(S4, vocab_size=65, attention="diff", head_norm_type="group"), "f32",
      contrast=dict(head_norm_type="rms"), head_norm_per_head=True),
    F("diff_groupnorm_shared_bf16",
      dict(S4, vocab_size=69, attention="diff", head_norm_type="group"), "bf16"),
    F("diff_rmsnorm_perhead_f16", dict(S4, vocab_size=47, attention="diff"), "f16",
      head_norm_per_head=True),
    F("diff_polynorm_f32", dict(S4, vocab_size=53, attention="diff", ffn_act="polynorm"),
      "f32", contrast=dict(ffn_act="silu")),
    F("diff_custom_eps_theta_bf16",
      dict(S4, vocab_size=59, attention="diff", rope_theta=100.0, norm_eps=1e-2,
           head_norm_eps=0.05), "bf16",
      contrast=dict(rope_theta=10000.0, norm_eps=1e-5, head_norm_eps=1e-5)),
    F("diff_norm_eps_sets_head_eps_f32",
      dict(S4, vocab_size=61, attention="diff", norm_eps=0.02), "f32",
      contrast=dict(head_norm_eps=1e-5)),
    # --- Grouped-DIFF (G:1) and GQA mixes
    F("grouped_diff_g2_f32",
      dict(S4, vocab_size=41, attention="diff", n_q2_heads=2, n_k2_heads=2, n_v_heads=2),
      "f32"),
    F("grouped_diff_g4_f16",
      dict(S8, attention="diff", n_q2_heads=2, n_k2_heads=2, n_v_heads=2), "f16"),
    F("grouped_diff_gqa_bf16",
      dict(S8, vocab_size=43, attention="diff", n_k1_heads=4, n_q2_heads=2, n_k2_heads=2,
           n_v_heads=2), "bf16"),
    # four signal heads sharing K1, V and the noise head (Motif-2's 32 / 8), widths for the
    # four-query kernels (d 16, dv 64): decode reads K1 and V once for the four
    F("dint_gqa4_d16_f32",
      dict(S8, vocab_size=47, head_dim=16, v_head_dim=64, attention="dint", n_k1_heads=2,
           n_q2_heads=2, n_k2_heads=2, n_v_heads=2), "f32"),
    F("diff_odd_sizes_f32",
      dict(S6, attention="diff", n_k1_heads=2, n_q2_heads=3, n_k2_heads=3, n_v_heads=2),
      "f32"),
    # --- Shared-DIFF (low-rank Q/K)
    F("shared_diff_r2_f32", dict(S4, vocab_size=45, attention="diff", qk_rank=2), "f32"),
    F("shared_diff_r8_eq_d_f16", dict(S4, vocab_size=49, attention="diff", qk_rank=8), "f16"),
    F("shared_diff_gqa_r3_bf16",
      dict(S4, vocab_size=51, attention="diff", qk_rank=3, n_k1_heads=2, n_k2_heads=2,
           n_v_heads=2), "bf16"),
    # --- DINT
    F("dint_softmax_f32", dict(S4, vocab_size=67, attention="dint", integral="softmax"),
      "f32", contrast=dict(attention="diff", head_scale="none")),
    F("dint_mean_f16", dict(S4, vocab_size=55, attention="dint", integral="mean"), "f16",
      contrast=dict(integral="softmax")),
    F("dint_headscale_oml_bf16",
      dict(S4, vocab_size=57, attention="dint", head_scale="one_minus_lambda_init"), "bf16",
      contrast=dict(head_scale="none")),
    F("dint_grouped_mean_f32",
      dict(S4, vocab_size=63, attention="dint", integral="mean", n_q2_heads=2, n_k2_heads=2,
           n_v_heads=2), "f32"),
    F("dint_shared_grouped_gqa_bf16",
      dict(S8, vocab_size=65, attention="dint", qk_rank=3, n_k1_heads=4, n_q2_heads=2,
           n_k2_heads=2, n_v_heads=2), "bf16"),
    F("dint_groupnorm_perhead_polynorm_f16",
      dict(S4, vocab_size=61, attention="dint", head_norm_type="group", ffn_act="polynorm",
           lambda_init=0.3), "f16",
      contrast=dict(head_norm_type="rms"), head_norm_per_head=True),
    F("dint_odd_sizes_3layer_list_f32",
      dict(S6, n_layers=3, vocab_size=47, attention="dint", integral="mean", n_k1_heads=2,
           n_q2_heads=3, n_k2_heads=3, n_v_heads=2, lambda_init=[0.2, 0.5, 0.9],
           rope="halves", head_norm=False), "f32"),
]

# --- version 1.1 (docs/format.md section 3): token lambda, shared keys, partial and scaled RoPE, FFN biases.


def _without(*keys):
    """Contrast: the same weights with these config keys removed."""
    def f(cfg, w):
        return {k: v for k, v in cfg.items() if k not in keys}, w
    return f


def _lambda_proj_zero(cfg, w):
    """Contrast: lambda_proj = 0, so lambda = 0.5 in every row and head (the token lambda must
    matter, not only its mean)."""
    return cfg, {k: (v * 0 if k.endswith(".lambda_proj") else v) for k, v in w.items()}


YARN16 = {"type": "yarn", "factor": 4.0, "original_max_position_embeddings": 16}
V11_FIXTURES = [
    # DIFF V2 as docs/format.md section 3 maps it: 2H query heads as Q1/Q2 pairs, K and V shared by both maps
    # (shared_k, KV = 2 heads), v_head_dim = head_dim, no head norm or scale, RoPE interleaved
    F("v11_diff_v2_gqa_f32",
      dict(S4, attention="diff", lambda_mode="token_sigmoid", shared_k=True, n_k1_heads=2,
           n_q2_heads=4, n_k2_heads=2, n_v_heads=2, v_head_dim=8, head_norm=False,
           head_scale="none", rope="interleaved"), "f32", contrast=_lambda_proj_zero),
    F("v11_dint_token_shared_k_bf16",
      dict(S8, vocab_size=47, attention="dint", integral="softmax", lambda_mode="token_sigmoid",
           shared_k=True, n_k1_heads=4, n_q2_heads=2, n_k2_heads=4, n_v_heads=2,
           head_scale="none"), "bf16", contrast=dict(attention="diff")),
    F("v11_shared_diff_shared_k_f16",
      dict(S4, vocab_size=51, attention="diff", qk_rank=3, shared_k=True, n_k1_heads=2,
           n_k2_heads=2, n_v_heads=2, rope="halves"), "f16"),
    F("v11_token_odd_sizes_3layer_f32",
      dict(S6, n_layers=3, vocab_size=43, attention="diff", lambda_mode="token_sigmoid",
           n_k1_heads=2, n_q2_heads=3, n_k2_heads=3, n_v_heads=2, rope_dim=2,
           lambda_init=[0.2, 0.5, 0.9], head_scale="one_minus_lambda_init"), "f32",
      contrast=dict(head_scale="none")),
    # partial and scaled RoPE
    F("v11_partial_rope_yarn_halves_f32",
      dict(S4, vocab_size=57, attention="diff", rope="halves", rope_dim=4, rope_scaling=YARN16),
      "f32", contrast=_without("rope_scaling")),
    F("v11_partial_rope_yarn_mscale_bf16",
      dict(S4, vocab_size=59, attention="dint", rope="interleaved", rope_dim=6, rope_theta=1000.0,
           rope_scaling={"type": "yarn", "factor": 8.0, "original_max_position_embeddings": 12,
                         "beta_fast": 8.0, "beta_slow": 0.5, "mscale": 1.0,
                         "mscale_all_dim": 0.5, "truncate": False}), "bf16",
      contrast=_without("rope_scaling")),
    F("v11_llama3_scaling_f16",
      dict(S4, vocab_size=61, attention="diff", rope="halves", rope_theta=500.0,
           rope_scaling={"type": "llama3", "factor": 8.0, "low_freq_factor": 1.0,
                         "high_freq_factor": 4.0, "original_max_position_embeddings": 16}),
      "f16", contrast=_without("rope_scaling")),
    F("v11_linear_scaling_bias_standard_f32",
      dict(S4, vocab_size=53, attention="standard", n_k1_heads=2, n_v_heads=2, rope="halves",
           rope_dim=6, rope_scaling={"type": "linear", "factor": 2.5}, ffn_bias=True,
           tie_embeddings=True), "f32", contrast=_without("rope_scaling")),
    # FFN biases
    F("v11_ffn_bias_polynorm_dint_bf16",
      dict(S4, vocab_size=49, attention="dint", integral="mean", ffn_act="polynorm",
           ffn_bias=True), "bf16", contrast=dict(ffn_bias=False)),
    # neutral settings, each paired below with its v1 twin
    F("v11_linear1_f32",
      dict(S4, vocab_size=45, attention="diff", rope_scaling={"type": "linear", "factor": 1.0}),
      "f32"),
    F("v11_yarn1_full_rope_dim_f16",
      dict(S4, vocab_size=41, attention="dint", rope="halves", rope_dim=8,
           rope_scaling={"type": "yarn", "factor": 1.0, "original_max_position_embeddings": 8,
                         "truncate": False}), "f16"),
]

# (fixture, rewrite): twin = rewrite(fixture), written as fixture + "_" + rewrite
PAIRS = [
    ("standard_gqa_halves_f32", "expanded"),
    ("grouped_diff_g2_f32", "expanded"),
    ("grouped_diff_gqa_bf16", "expanded"),
    ("diff_odd_sizes_f32", "expanded"),
    ("shared_diff_r2_f32", "merged"),
    ("shared_diff_r8_eq_d_f16", "merged"),
    ("dint_grouped_mean_f32", "expanded"),
    ("dint_shared_grouped_gqa_bf16", "expanded"),
    # v1.1: shared_k equals K2 written as a copy of K1; GQA of DIFF V2 equals its expansion;
    # rope_scaling of factor 1 (linear; yarn with truncate false and rope_dim = head_dim)
    # equals plain RoPE (the twins are version 1 files)
    ("v11_diff_v2_gqa_f32", "unshared"),
    ("v11_diff_v2_gqa_f32", "expanded"),
    ("v11_dint_token_shared_k_bf16", "unshared"),
    ("v11_shared_diff_shared_k_f16", "unshared"),
    ("v11_shared_diff_shared_k_f16", "merged"),
    ("v11_linear1_f32", "unscaled"),
    ("v11_yarn1_full_rope_dim_f16", "plain"),
]
REWRITE = {
    "expanded": make_model.expand_grouped,
    "merged": make_model.merge_low_rank,
    "unshared": make_model.unshare_k,
    "unscaled": lambda a, b: make_model.rewrite_config(a, b, drop=["rope_scaling"]),
    "plain": lambda a, b: make_model.rewrite_config(a, b, drop=["rope_scaling", "rope_dim"]),
}

# Converted-weights fixtures (dintattn_load_options.weights = Q8 / BF16): the matrices' rows are
# a multiple of 32 long (dim 64, hidden_dim 96, n_heads * v_head_dim = 64), so Q8 quantizes them;
# w_down's rows are 3 blocks. Except in conv_standard_gqa_dv12_f32, whose wo rows are 4 * 12 = 48
# long: Q8 leaves wo as stored. No Shared-DIFF: merged at load, it would quantize the merged
# matrices.
S64 = dict(dim=64, n_layers=2, vocab_size=67, hidden_dim=96, max_seq_len=32,
           n_heads=4, head_dim=8, v_head_dim=16)   # 4 heads of 8, values of 16
CONVERTED = [
    F("conv_dint_grouped_gqa_f32",
      dict(S64, attention="dint", integral="softmax", n_k1_heads=2, n_q2_heads=2, n_k2_heads=2,
           n_v_heads=2), "f32"),
    F("conv_diff_rope_polynorm_f32",
      dict(S64, vocab_size=71, attention="diff", rope="interleaved", ffn_act="polynorm"), "f32"),
    F("conv_standard_gqa_dv12_f32",
      dict(S64, vocab_size=65, attention="standard", head_dim=12, v_head_dim=12, n_k1_heads=2,
           n_v_heads=2, rope="halves"), "f32"),
    F("conv_dint_mean_groupnorm_bf16",
      dict(S64, vocab_size=69, attention="dint", integral="mean", head_norm_type="group",
           rope="halves"), "bf16"),
]

# Q4's bounds on a converted fixture's logits (rel_diff and rel_rms against the source's). Its
# step is 16 times Q8's (|m| / 8 against max|w| / 127), and these small random models, with their
# peaky softmaxes, pass that on: Q8 moves the logits by 2.0-2.6% rms (2.5-3.9% max), Q4 by 28-38%
# rms (27-56% max), 11-15 times as much. So Q4 must move them at least Q4_MIN_MOVE times as much
# as Q8 (max and rms), and by less than Q4_MAX_RMS rms: Q4 done wrong gives 0.64 or more (the
# nibbles of a byte swapped: 1.2-1.3; the scales halved: 0.64-0.69).
Q4_MIN_MOVE, Q4_MAX_RMS = 4, 0.5

# The tensors dintattn_load_options.weights converts; everything else (norm and lambda vectors,
# head_norm, act_weight/act_bias, Shared-DIFF *_up factors) stays as stored.
is_matrix = make_model.is_matrix


def convert_matrix(a, how):
    """One matrix (float32) as the engine holds it after converting it at load, as float32 (all
    arithmetic in float32, as the C code does it).
    bf16: round to nearest even bfloat16.
    q8:   if the rows are a multiple of 32 long, make_model.quantize_q8 and weight = scale * q;
    q4:   likewise make_model.quantize_q4 and weight = scale * (nibble - 8);
          other matrices stay as they are."""
    a = np.ascontiguousarray(a, dtype=np.float32)
    if how == "bf16":
        return safetensors_io.round_bf16(a)
    if a.shape[-1] % 32:
        return a
    if how == "q8":
        return make_model.dequantize_q8(*make_model.quantize_q8(a))
    assert how == "q4", how
    return make_model.dequantize_q4(*make_model.quantize_q4(a))


# QFILES[how] is QFILE_OF with its matrices stored as how (Q8, Q4) in the file
# (make_model.write_quantized_file); loaded as stored, it must give QFILE_OF's .q8 / .q4.logits.
QFILE_OF = "conv_dint_grouped_gqa_f32"
QFILES = {"q8": "conv_dint_grouped_gqa_q8file", "q4": "conv_dint_grouped_gqa_q4file"}


def write_converted(src, dst, how):
    """Copy of model src with every weight matrix converted (convert_matrix), stored as F32."""
    t, meta = safetensors_io.read(src)
    out = {k: ("F32", convert_matrix(a, how) if is_matrix(k) else a) for k, (_, a) in t.items()}
    assert sum(map(is_matrix, t)) >= 2 + 5 * json.loads(meta["config"])["n_layers"], src
    safetensors_io.write(dst, out, meta)


def rel_rms(a, ref):
    return float(np.sqrt(np.mean((a - ref) ** 2)) / np.sqrt(np.mean(ref ** 2)))


def seed_of(name):
    return zlib.crc32(name.encode())


def token_ids(name, vocab):
    rng = np.random.default_rng(seed_of("ids:" + name))
    n = int(rng.integers(9, 21))
    return [int(i) for i in rng.integers(0, vocab, n)]


def ref_logits(path, ids):
    y = np.asarray(reference.forward(path, ids), dtype=np.float64)
    cfg = json.loads(safetensors_io.read(path)[1]["config"])
    assert y.shape == (len(ids), cfg["vocab_size"]), (path, y.shape)
    return y


def check_not_degenerate(name, y):
    assert np.all(np.isfinite(y)), "%s: non-finite logits" % name
    across_pos = np.std(y, axis=0).mean()
    across_vocab = np.std(y, axis=1).min()
    assert across_pos > 0.05 * np.std(y), "%s: logits barely vary across positions" % name
    assert across_vocab > 0.1, "%s: a row of logits is nearly flat" % name


def rel_diff(a, b):
    return float(np.max(np.abs(a - b)) / np.max(np.abs(a)))


def contrast_model(f, weights):
    """(config, weights) of fixture f's contrast: the config overridden (or f's function), the
    weights limited to those the contrast config has (the reference refuses v1.1 tensors that
    the config does not call for, e.g. ffn biases with ffn_bias false)."""
    c = f["contrast"]
    cfg, w = c(f["cfg"], weights) if callable(c) else (dict(f["cfg"], **c), weights)
    names = set(make_model.make_tensors(cfg, 0, **f["kw"]))
    assert names <= set(w), "%s: contrast needs %s" % (f["name"], sorted(names - set(w)))
    return cfg, {k: v for k, v in w.items() if k in names}


def main(argv=None):
    global OUT
    ap = cli.parser(__doc__, ["/usr/bin/python3 tools/make_fixtures.py --out /tmp/fx && "
                              "diff -r /tmp/fx tests/fixtures"])
    ap.add_argument("--out", default=OUT, help="output directory (default: tests/fixtures)")
    OUT = ap.parse_args(argv).out
    os.makedirs(OUT, exist_ok=True)
    all_fixtures = FIXTURES + V11_FIXTURES
    names = {f["name"] for f in all_fixtures}
    assert len(names) == len(all_fixtures), "duplicate fixture name"
    assert all(f["name"].startswith("v11_") == (make_model.file_version(f["cfg"]) == "1.1")
               for f in all_fixtures), "v11_ names are exactly the version 1.1 fixtures"
    wanted = set()
    manifest, pairs = [], []
    by_name = {f["name"]: f for f in all_fixtures}
    with tempfile.TemporaryDirectory() as tmp:
        for f in all_fixtures:
            name, cfg = f["name"], f["cfg"]
            path = os.path.join(OUT, name + ".safetensors")
            weights = make_model.make_model(path, cfg, f["dtype"], seed_of(name), **f["kw"])
            ids = token_ids(name, cfg["vocab_size"])
            y = ref_logits(path, ids)
            check_not_degenerate(name, y)
            if f["contrast"]:
                cpath = os.path.join(tmp, name + "_contrast.safetensors")
                ccfg, cweights = contrast_model(f, weights)
                make_model.write_model(cpath, cweights, ccfg, f["dtype"])
                d = rel_diff(y, ref_logits(cpath, ids))
                assert d > 1e-3, "%s: contrast %s changes logits by only %.2g" % (
                    name, f["contrast"], d)
            with open(os.path.join(OUT, name + ".logits"), "wb") as fh:
                fh.write(y.astype("<f4").tobytes())
            manifest.append("%s %s" % (name, ",".join(map(str, ids))))
            wanted |= {name + ".safetensors", name + ".logits"}
            print("%-40s %-5s N=%2d  %s" % (name, f["dtype"], len(ids),
                                            "" if not f["contrast"] else "contrast %.3g" % d))
    for a, how in PAIRS:
        b = a + "_" + how
        pa, pb = (os.path.join(OUT, n + ".safetensors") for n in (a, b))
        REWRITE[how](pa, pb)
        ids = token_ids(b, by_name[a]["cfg"]["vocab_size"])
        d = rel_diff(ref_logits(pa, ids), ref_logits(pb, ids))
        assert d < 1e-4, "pair %s %s differs by %.2g" % (a, b, d)
        pairs.append("%s %s %s" % (a, b, ",".join(map(str, ids))))
        wanted.add(b + ".safetensors")
        print("pair %-36s %-45s rel diff %.2g" % (a, b, d))
    converted = []
    assert not names & {f["name"] for f in CONVERTED}, "converted fixture also in FIXTURES"
    with tempfile.TemporaryDirectory() as tmp:
        for f in CONVERTED:
            name, cfg = f["name"], f["cfg"]
            path = os.path.join(OUT, name + ".safetensors")
            make_model.make_model(path, cfg, f["dtype"], seed_of(name), **f["kw"])
            ids = token_ids(name, cfg["vocab_size"])
            y = ref_logits(path, ids)
            check_not_degenerate(name, y)
            ys = {"": y}
            for how in ("q8", "q4", "bf16"):
                cpath = os.path.join(tmp, "%s.%s.safetensors" % (name, how))
                write_converted(path, cpath, how)
                ys[how] = ref_logits(cpath, ids)
                check_not_degenerate(name + "." + how, ys[how])
            # q8 must move the logits well past the tests' tolerance (5e-6), yet stay close
            d, rms = rel_diff(y, ys["q8"]), rel_rms(ys["q8"], y)
            assert d > 1e-3 and rms < 0.05, "%s: q8 changes logits by %.2g (max), %.2g (rms)" % (
                name, d, rms)
            assert rel_diff(ys["bf16"], ys["q8"]) > 1e-3, "%s: q8 and bf16 logits agree" % name
            # q4 (16 levels a block against q8's 255) must move them several times more than q8,
            # yet stay recognisably the same model
            d4, rms4 = rel_diff(y, ys["q4"]), rel_rms(ys["q4"], y)
            assert d4 > Q4_MIN_MOVE * d and rms4 > Q4_MIN_MOVE * rms and rms4 < Q4_MAX_RMS, \
                "%s: q4 changes logits by %.2g (max), %.2g (rms); q8 by %.2g, %.2g" % (
                    name, d4, rms4, d, rms)
            db = rel_diff(y, ys["bf16"])
            if f["dtype"] == "bf16":
                assert db == 0, "%s: bf16 of a BF16 file changed the logits" % name
            else:
                assert 1e-4 < db and rel_rms(ys["bf16"], y) < 0.05, "%s: bf16 moves logits by %.2g" % (
                    name, db)
            # the KV cache in bf16 and in int8 (dintattn_kv_type): the source's weights, its keys
            # and values rounded as the cache holds them; each must move the logits past the tests'
            # tolerance (so that a cache left in f32 fails), q8 more than bf16
            for kv in ("bf16", "q8"):
                ys["kv" + kv] = np.asarray(reference.forward(path, ids, kv=kv), dtype=np.float64)
            dkb, dkq = rel_diff(y, ys["kvbf16"]), rel_diff(y, ys["kvq8"])
            assert 1e-4 < dkb < dkq < 0.1, "%s: kv bf16 moves logits by %.2g, q8 by %.2g" % (name, dkb, dkq)
            for suffix, v in ((".logits", y), (".q8.logits", ys["q8"]), (".q4.logits", ys["q4"]),
                              (".bf16.logits", ys["bf16"]), (".kvbf16.logits", ys["kvbf16"]),
                              (".kvq8.logits", ys["kvq8"])):
                with open(os.path.join(OUT, name + suffix), "wb") as fh:
                    fh.write(v.astype("<f4").tobytes())
                wanted.add(name + suffix)
            wanted.add(name + ".safetensors")
            for how, qname in QFILES.items() if name == QFILE_OF else ():
                # the same quantized weights stored in the file: the same logits
                qpath = os.path.join(OUT, qname + ".safetensors")
                make_model.write_quantized_file(path, qpath, how)
                dq = rel_diff(ys[how], ref_logits(qpath, ids))
                assert dq < 1e-6, "%s: %s in the file differs from %s at load by %.2g" % (
                    qname, how, how, dq)
                wanted.add(qname + ".safetensors")
            converted.append("%s %s" % (name, ",".join(map(str, ids))))
            print("converted %-31s %-5s N=%2d  q8 %.3g (rms %.3g)  q4 %.3g (rms %.3g)  bf16 %.3g  "
                  "kv bf16 %.3g  kv q8 %.3g" % (name, f["dtype"], len(ids), d, rms, d4, rms4, db, dkb, dkq))
    for fn in os.listdir(OUT):       # drop stale generated files, keep anything else
        if (fn.endswith((".safetensors", ".logits")) and fn not in wanted
                and not fn.startswith(("tok_", "chat_"))):   # tools/make_tok_fixtures.py's and
                                                              # tools/make_chat_model.py's
            os.remove(os.path.join(OUT, fn))
    with open(os.path.join(OUT, "manifest.txt"), "w") as fh:
        fh.write("\n".join(manifest) + "\n")
    with open(os.path.join(OUT, "pairs.txt"), "w") as fh:
        fh.write("\n".join(pairs) + "\n")
    with open(os.path.join(OUT, "converted.txt"), "w") as fh:
        fh.write("\n".join(converted) + "\n")
    total = sum(os.path.getsize(os.path.join(OUT, fn)) for fn in os.listdir(OUT))
    print("%d fixtures, %d pairs, %d converted, %d bytes in %s" % (
        len(manifest), len(pairs), len(converted), total, OUT))
    return 0


if __name__ == "__main__":
    sys.exit(main())
