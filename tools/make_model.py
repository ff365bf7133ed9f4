#!/usr/bin/python3
"""Write random dintattn models (docs/format.md sections 2 and 3) as .safetensors files.

Run with Debian's python3 (it has numpy; the pyenv `python3` on PATH does not):

    /usr/bin/python3 tools/make_model.py OUT.safetensors --preset dint
    /usr/bin/python3 tools/make_model.py OUT.safetensors --preset bench-dint [--dtype bf16]
    /usr/bin/python3 tools/make_model.py OUT.safetensors \\
        --config '{"dim":32,"n_layers":2,"vocab_size":61,"hidden_dim":48,
                   "max_seq_len":32,"n_heads":4,"head_dim":8,"attention":"diff"}' \\
        [--dtype f32|f16|bf16] [--seed 1] [--head-norm-per-head]
    /usr/bin/python3 tools/make_model.py OUT.safetensors --preset diff-v2 \\
        --set rope_dim=4 --set 'rope_scaling={"type":"linear","factor":2}'
    /usr/bin/python3 tools/make_model.py --expand-grouped SRC DST
    /usr/bin/python3 tools/make_model.py --merge-low-rank SRC DST
    /usr/bin/python3 tools/make_model.py --unshare-k SRC DST

As a module (tools/make_fixtures.py uses it):

    make_model(path, cfg, dtype="f32", seed=0, head_norm_per_head=False)
    write_model(path, tensors, cfg, dtype="f32")   # given weights, e.g. under another config
    expand_grouped(src, dst)   # same model, every K1/Q2/K2/V head count raised to n_heads
    merge_low_rank(src, dst)   # same model, Shared-DIFF factors merged into dense wq1/wk1/...
    unshare_k(src, dst)        # same model, shared_k: K2 written as a copy of K1 (shared_k false)
    rewrite_config(src, dst, drop=(), **set)   # same tensors, config keys dropped / set
    write_safetensors(path, {name: (dtype, array)}, metadata)    (tools/safetensors_io.py's
    read_safetensors(path) -> ({name: (dtype, array)}, metadata)   write and read)
    quantize_q8(a) -> (q int8 [rows, cols], scale)           the engine's Q8 and Q4 of a matrix,
    quantize_q4(a) -> (packed uint8 [rows, cols/2], scale)   bit for bit (scale f32 [rows, cols/32])
    dequantize_q8(q, scale), dequantize_q4(packed, scale)    -> the float32 weights they stand for
    write_quantized_file(src, dst, "q8" | "q4")   the model with its weight matrices stored as Q8
        or Q4 in the file, streamed (tools/quantize.py); write_q8_file(src, dst) is the Q8 case

The config is written exactly as given; defaults (docs/format.md section 2's table; tools/spec.py) are only computed to know
the tensor shapes.

Presets: standard, diff, dint, shared-diff, grouped-diff are tiny (dim 32, 2 layers, vocab 61);
bench-standard, bench-diff, bench-dint, bench-shared-diff, bench-grouped-diff are the `bench` size
for examples/bench and tools/torch_bench.py: dim 1024, 8 layers, 8 differential heads of 2 x 64
(head_dim 64, v_head_dim 128; standard: 16 heads of 64, v 64), FFN 2752, vocab 8192, context 2048,
untied embeddings (118.0M parameters: 450 MiB as f32, 225 MiB as bf16); Grouped-DIFF with G = 4,
Shared-DIFF with qk_rank 16.  The random values are chosen so the math is exercised: Q/K weights are large
enough that softmaxes are peaky, lambda differs per layer, norm weights are not all ones.

Version 1.1 (docs/format.md section 3) presets, tiny as above; a config with any v1.1 key (lambda_mode, shared_k,
rope_dim, rope_scaling, ffn_bias) is written as "version": "1.1", any other as "1":
  diff-v2              Microsoft's DIFF V2: token_sigmoid lambda, shared_k, 2 KV heads for both
                       maps and V, v_head_dim = head_dim, no head norm or scale, RoPE interleaved
  dint-token-shared-k  DINT with token_sigmoid lambda and shared_k
  shared-diff-shared-k Shared-DIFF (qk_rank 2) with shared_k: no k2_down / k2_up
  partial-rope-yarn    DIFF, rope_dim 4 of head_dim 8 (halves), YaRN factor 4
  llama3-scaling       DIFF, Llama 3 RoPE scaling (factor 8, low 1, high 4, original 16)
  ffn-bias             DIFF with b_gate / b_up / b_down (SwiGLU)
  ffn-bias-polynorm    standard attention, polynorm FFN with biases
  bench-diff-v2        the bench size as DIFF V2 (8 heads of 64, 2 KV heads)
lambda_proj is drawn small (lambda_proj[i] . x_n has std ~0.8) so the sigmoid is not saturated.
"""

import json
import math
import os
import sys

import numpy as np

import safetensors_io   # tools/safetensors_io.py, beside this file
import spec              # tools/spec.py: the format's rules the tools share

# safetensors files: tools/safetensors_io.py (these two names are kept for the callers of this module)
write_safetensors = safetensors_io.write
read_safetensors = safetensors_io.read


# The format's rules (defaults, lambda_init, version, weight types): tools/spec.py, the tools' one
# home for them; these names are kept for the callers of this module.
resolved = spec.resolved
V11_KEYS = spec.V11_KEYS
file_version = spec.file_version
DTYPES = spec.WEIGHT_DTYPES
lambda_init = spec.lambda_init


# ---------------------------------------------------------------------------
# random model
# ---------------------------------------------------------------------------

def make_tensors(cfg, seed=0, head_norm_per_head=False):
    """{name: float32 array} for a random model of config cfg, in docs/format.md section 2's order."""
    c = resolved(cfg)
    rng = np.random.default_rng(seed)
    D, V, F, L = c["dim"], c["vocab_size"], c["hidden_dim"], c["n_layers"]
    H, d, dv, r = c["n_heads"], c["head_dim"], c["v_head_dim"], c["qk_rank"]
    differential = c["attention"] in ("diff", "dint")

    def normal(shape, std):
        return (rng.standard_normal(shape) * std).astype(np.float32)

    def norm_w(n):
        return (1.0 + rng.standard_normal(n) * 0.1).astype(np.float32)

    t = {}
    t["tok_embeddings.weight"] = normal((V, D), 1.0)
    t["norm.weight"] = norm_w(D)
    if not c["tie_embeddings"]:
        t["output.weight"] = normal((V, D), 1.0 / math.sqrt(D))

    qk_std = 2.0 / math.sqrt(D)          # peaky softmaxes: logits with std of a few units
    branches = [("q1", H), ("k1", c["n_k1_heads"])]
    if differential:
        branches += [("q2", c["n_q2_heads"])]
        if not c["shared_k"]:        # shared_k: K2 is K1, no wk2 / k2_down / k2_up
            branches += [("k2", c["n_k2_heads"])]
    for l in range(L):
        p = "layers.%d." % l
        t[p + "attn_norm.weight"] = norm_w(D)
        t[p + "ffn_norm.weight"] = norm_w(D)
        if r == 0:
            for b, n in branches:
                t[p + "attn.w" + b] = normal((n * d, D), qk_std)
        else:
            # shared base plus per-head low-rank updates of similar size (~N(0,1) per
            # channel), so heads really differ and the up matrices matter
            t[p + "attn.q_base"] = normal((d, D), 1.5 / math.sqrt(D))
            t[p + "attn.k_base"] = normal((d, D), 1.5 / math.sqrt(D))
            for b, n in branches:
                t[p + "attn.%s_down" % b] = normal((n * r, D), 1.0 / math.sqrt(D))
                t[p + "attn.%s_up" % b] = normal((n * d, r), 1.2 / math.sqrt(r))
        t[p + "attn.wv"] = normal((c["n_v_heads"] * dv, D), 1.0 / math.sqrt(D))
        t[p + "attn.wo"] = normal((D, H * dv), 1.0 / math.sqrt(H * dv))
        if differential and c["lambda_mode"] == "token_sigmoid":
            # lambda[n, i] = sigmoid(lambda_proj[i] . x_n), x_n RMS-normed (entries ~1): with
            # std 0.8/sqrt(D) the argument has std ~0.8, lambda mostly in 0.2..0.8 (DIFF V2's
            # lambda_proj starts at zero, lambda 0.5; random weights make it vary per head and row)
            t[p + "attn.lambda_proj"] = normal((H, D), 0.8 / math.sqrt(D))
        elif differential:
            # redraw until lambda is clearly non-zero and not huge, so both A2 and (for dint)
            # the integral term matter in every layer
            for _ in range(100):
                lam = {b: normal(d, 0.3) for b in ("q1", "k1", "q2", "k2")}
                value = (math.exp(float(lam["q1"] @ lam["k1"]))
                         - math.exp(float(lam["q2"] @ lam["k2"])) + lambda_init(c, l))
                if 0.15 <= abs(value) <= 1.2:
                    break
            for b in ("q1", "k1", "q2", "k2"):
                t[p + "attn.lambda_" + b] = lam[b]
        if c["head_norm"]:
            n = H * dv if head_norm_per_head else dv
            t[p + "attn.head_norm.weight"] = norm_w(n)
            if c["head_norm_type"] == "group":
                t[p + "attn.head_norm.bias"] = normal(n, 0.1)
        t[p + "ffn.w_gate"] = normal((F, D), 1.0 / math.sqrt(D))
        t[p + "ffn.w_up"] = normal((F, D), 1.0 / math.sqrt(D))
        t[p + "ffn.w_down"] = normal((D, F), 1.0 / math.sqrt(F))
        if c["ffn_act"] == "polynorm":
            t[p + "ffn.act_weight"] = (np.array([0.3, 0.3, 1.0])
                                       + rng.standard_normal(3) * 0.05).astype(np.float32)
            t[p + "ffn.act_bias"] = normal(1, 0.05)
        if c["ffn_bias"]:
            # about the size of a row of w_gate @ h (std ~1), so the biases move the logits
            t[p + "ffn.b_gate"] = normal(F, 0.5)
            t[p + "ffn.b_up"] = normal(F, 0.5)
            t[p + "ffn.b_down"] = normal(D, 0.3)
    # the tensors drawn above in the draw order the fixtures depend on; their names and shapes are spec's
    assert {k: v.shape for k, v in t.items()} == spec.tensor_shapes(c, head_norm_per_head) and \
        list(t) == list(spec.tensor_shapes(c, head_norm_per_head)), "make_tensors drifted from tools/spec.py"
    return t


def quantize_q8(a):
    """The engine's Q8 (docs/format.md section 4) of a float matrix whose rows are a multiple of
    32 long, in float32 arithmetic as the C code does it: each run of 32 (row-major) is a block,
    scale = amax / 127, q = clamp(rint(v * (127 / amax)), -127, 127). -> (q int8 [rows, cols],
    scale float32 [rows, cols / 32])."""
    a = np.ascontiguousarray(a, dtype=np.float32)
    assert a.ndim == 2 and a.shape[1] % 32 == 0, a.shape
    blocks = a.reshape(-1, 32)
    assert np.all(np.isfinite(blocks))
    amax = np.max(np.abs(blocks), axis=1)
    scale = amax / np.float32(127.0)
    with np.errstate(over="ignore"):
        inv = np.divide(np.float32(127.0), amax, out=np.zeros_like(amax), where=amax > 0)
    inv[~np.isfinite(inv)] = 0  # max |w| so small that 127 / max overflows: q = 0, as the C code
    q = np.clip(np.rint(blocks * inv[:, None]), -127, 127)
    assert scale.dtype == inv.dtype == q.dtype == np.float32
    return q.astype(np.int8).reshape(a.shape), scale.reshape(a.shape[0], a.shape[1] // 32)


def dequantize_q8(q, scale):
    """Weights of quantize_q8's (q, scale) as the engine computes them: scale * q in float32."""
    rows, cols = q.shape
    return (scale[:, :, None] * q.reshape(rows, cols // 32, 32).astype(np.float32)).reshape(rows, cols)


def quantize_q4(a):
    """The engine's Q4 (docs/format.md section 4; dintattn.h's dintattn__quantize_block4 is the
    authority) of a float matrix whose rows are a multiple of 32 long, in float32 arithmetic as the
    C code does it: each run of 32 (row-major) is a block; m = its element of largest |v| (the
    first if several tie, +0 if all are zero), scale = m / -8, nibble = clamp(rint(v * (-8 / m)),
    -8, 7) + 8 (-8 / m taken as 0 when m is 0 or it overflows), so that m itself is exact (nibble
    0); a block holding NaN or infinity gets a NaN scale and nibbles 8. Block byte j (0..15) =
    nibble[j] | nibble[j + 16] << 4.
    -> (packed uint8 [rows, cols / 2], scale float32 [rows, cols / 32])."""
    a = np.ascontiguousarray(a, dtype=np.float32)
    assert a.ndim == 2 and a.shape[1] % 32 == 0, a.shape
    blocks = a.reshape(-1, 32)
    bad = ~np.all(np.isfinite(blocks), axis=1)
    b = np.where(bad[:, None], np.float32(0), blocks)
    m = b[np.arange(len(b)), np.argmax(np.abs(b), axis=1)]   # argmax: the first of equal maxima
    m = np.where(m == 0, np.float32(0), m)                    # -0 never wins in the C loop: m = +0
    scale = m / np.float32(-8.0)
    with np.errstate(over="ignore", divide="ignore"):
        inv = np.divide(np.float32(-8.0), m, out=np.zeros_like(m), where=m != 0)
    inv[~np.isfinite(inv)] = 0   # |m| < 2^-125: -8 / m overflows, nibbles 8 (weights 0), as the C code
    scale[bad] = np.float32(np.nan)
    nib = (np.clip(np.rint(b * inv[:, None]), -8, 7) + 8).astype(np.uint8)
    assert scale.dtype == inv.dtype == np.float32
    packed = nib[:, :16] | (nib[:, 16:] << 4)
    return (packed.reshape(a.shape[0], a.shape[1] // 2),
            scale.reshape(a.shape[0], a.shape[1] // 32))


def dequantize_q4(packed, scale):
    """Weights of quantize_q4's (packed, scale) as the engine computes them (dintattn__elem_q4):
    scale * (nibble - 8) in float32. -> float32 [rows, 2 * packed cols]."""
    rows = packed.shape[0]
    p = packed.reshape(rows, -1, 16)
    nib = np.concatenate([p & 15, p >> 4], axis=2).astype(np.float32) - 8   # [rows, blocks, 32]
    return (scale[:, :, None] * nib).reshape(rows, -1)


# The in-file quantized formats: name -> (dtype of NAME, its shape from [rows, cols], quantize)
QFORMATS = {
    "q8": ("I8", lambda rows, cols: (rows, cols), quantize_q8),
    "q4": ("U8", lambda rows, cols: (rows, cols // 2), quantize_q4),
}


MATRICES, LAYER_MATRICES, is_matrix = spec.MATRICES, spec.LAYER_MATRICES, spec.is_matrix


Q8_CHUNK = 1 << 22   # elements of a matrix read and quantized at a time (Q8 and Q4)


def _read_rows(f, name, r0, r1):
    """Rows [r0, r1) of 2-D tensor name of safetensors_io.File f, decoded as File.get does."""
    dt, shape = f.dtype(name), f.shape(name)
    cols = shape[1]
    isz = safetensors_io.itemsize(dt)
    count = (r1 - r0) * cols
    raw = np.fromfile(f.path, dtype=safetensors_io.DTYPES[dt], count=count,
                      offset=f.data_start + f.entries[name]["data_offsets"][0] + r0 * cols * isz)
    if raw.size != count:
        raise safetensors_io.SafetensorsError("%s: tensor '%s' is truncated" % (f.path, name))
    return safetensors_io.decode(dt, raw).reshape(r1 - r0, cols)


def write_quantized_file(src, dst, fmt="q8"):
    """Copy of model src with every weight matrix whose rows are a multiple of 32 long stored as
    fmt, with F32 NAME.scale [rows, cols / 32]; everything else as it was.
      q8: I8 NAME [rows, cols] (quantize_q8)
      q4: U8 NAME [rows, cols / 2], two nibbles a byte (quantize_q4)
    The same numbers as the engine's weights = DINTATTN_WEIGHTS_Q8 / _Q4 at load. A source matrix
    already I8 or U8 (quantized) is refused (ValueError), and so is a non-finite weight
    (AssertionError). Streams: the header first, then one tensor at a time, a matrix Q8_CHUNK
    elements (whole rows) at a time (blocks never cross a row, so chunks quantize as the whole
    matrix would), so memory stays at a few chunks plus one matrix's scales, whatever the model's
    size. Written to dst.tmp and renamed: a failure leaves no dst."""
    qdtype, qshape, quantize = QFORMATS[fmt]
    f = safetensors_io.File(src)
    order = sorted(f.entries, key=lambda k: f.entries[k]["data_offsets"][0])
    # the output's tensors: name -> (dtype, shape, what writes it), in the order (and with the
    # overwriting) of a dict filled in the source's data order (a source that already holds a
    # NAME.scale keeps the later of the two)
    plan = {}
    for k in order:
        shape = f.shape(k)
        if is_matrix(k) and shape[-1] % 32 == 0:
            assert len(shape) == 2, (k, shape)   # as quantize_q8 / quantize_q4 assert
            if f.dtype(k) not in ("F32", "F16", "BF16"):
                raise ValueError("%s: tensor '%s' is %s, not F32, F16 or BF16 (already quantized?)"
                                 % (src, k, f.dtype(k)))
            plan[k] = (qdtype, qshape(*shape), ("q", k))
            plan[k + ".scale"] = ("F32", (shape[0], shape[1] // 32), ("scale", k))
        else:
            plan[k] = (f.dtype(k), shape, ("copy", k))
    head = safetensors_io.header_bytes([(n, dt, shp) for n, (dt, shp, _) in plan.items()], f.metadata)
    at, off = {}, len(head)
    for n, (dt, shp, _) in plan.items():
        at[n] = off
        off += int(np.prod(shp)) * safetensors_io.itemsize(dt)
    tmp = dst + ".tmp"
    try:
        with open(tmp, "wb") as out:
            out.write(head)
            for k in order:
                if plan[k][2] == ("copy", k):
                    out.seek(at[k])
                    out.write(safetensors_io.encode(f.dtype(k), f.get(k)))
                    continue
                if plan[k][2] != ("q", k):
                    continue
                rows, cols = f.shape(k)
                step = max(1, Q8_CHUNK // max(cols, 1))
                scales = np.empty((rows, cols // 32), dtype=np.float32)
                out.seek(at[k])
                for r0 in range(0, rows, step):
                    r1 = min(rows, r0 + step)
                    w = _read_rows(f, k, r0, r1)
                    assert np.all(np.isfinite(w)), "%s: tensor '%s' has a non-finite weight" % (src, k)
                    q, sc = quantize(w)
                    out.write(q.tobytes())
                    scales[r0:r1] = sc
                if plan[k + ".scale"][2] == ("scale", k):
                    out.seek(at[k + ".scale"])
                    out.write(safetensors_io.encode("F32", scales))
            out.truncate(off)
        os.replace(tmp, dst)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise


def write_q8_file(src, dst):
    """write_quantized_file(src, dst, "q8") (the name its callers know)."""
    write_quantized_file(src, dst, "q8")


def _metadata(cfg):
    return {"format": "dintattn", "version": file_version(cfg), "config": json.dumps(cfg)}


def write_model(path, tensors, cfg, dtype="f32"):
    """Write {name: float array} with config cfg (verbatim), every tensor stored as dtype."""
    st = DTYPES[dtype]
    safetensors_io.write(path, {k: (st, v) for k, v in tensors.items()}, _metadata(cfg))


def make_model(path, cfg, dtype="f32", seed=0, head_norm_per_head=False):
    """Write a random model with config cfg (written verbatim) to path; returns its tensors
    (float32, before rounding to dtype), e.g. to write the same weights under another config."""
    t = make_tensors(cfg, seed, head_norm_per_head)
    write_model(path, t, cfg, dtype)
    return t


# ---------------------------------------------------------------------------
# equivalent rewrites, for the equivalence tests
# ---------------------------------------------------------------------------

def _load(path):
    t, meta = safetensors_io.read(path)
    assert meta.get("format") == "dintattn", path
    return t, json.loads(meta["config"])


def _repeat_heads(a, n, H, rows):
    """Head-blocked rows [n*rows, ...] -> [H*rows, ...]; head i copies head floor(i*n/H)."""
    blocks = a.reshape((n, rows) + a.shape[1:])
    idx = [i * n // H for i in range(H)]
    return blocks[idx].reshape((H * rows,) + a.shape[1:])


def expand_grouped(src_path, dst_path):
    """Write the model of src_path with every K1/Q2/K2/V head count raised to n_heads by
    duplicating head rows (signal head i reads head floor(i*n/H)), which is the same model.
    Dense or low-rank Q/K; tensors keep their dtype (duplication is exact)."""
    t, cfg = _load(src_path)
    c = resolved(cfg)
    H, d, dv, r = c["n_heads"], c["head_dim"], c["v_head_dim"], c["qk_rank"]
    differential = c["attention"] in ("diff", "dint")
    counts = {"k1": "n_k1_heads", "v": "n_v_heads"}
    if differential:
        counts.update({"q2": "n_q2_heads", "k2": "n_k2_heads"})
    out = {}
    for name, (dt, a) in t.items():
        parts = name.split(".")
        if len(parts) == 4 and parts[0] == "layers" and parts[2] == "attn":
            key = parts[3]
            if key == "wv":
                a = _repeat_heads(a, c["n_v_heads"], H, dv)
            elif key.startswith("w") and key[1:] in counts:
                a = _repeat_heads(a, c[counts[key[1:]]], H, d)
            elif key.endswith("_down") and key[:-5] in counts:
                a = _repeat_heads(a, c[counts[key[:-5]]], H, r)
            elif key.endswith("_up") and key[:-3] in counts:
                a = _repeat_heads(a, c[counts[key[:-3]]], H, d)
        out[name] = (dt, a)
    cfg = dict(cfg)
    for key in counts.values():
        cfg[key] = H
    safetensors_io.write(dst_path, out, _metadata(cfg))


def merge_low_rank(src_path, dst_path):
    """Write the qk_rank > 0 model of src_path as the same dense model (qk_rank 0):
    head i of wq1 = q_base + q1_up[i] @ q1_down[i], likewise k1 (k_base), q2, k2.
    Every tensor of the result is F32 (the merge is done in float64 and rounded once), so
    a BF16/F16 source is not rounded a second time."""
    t, cfg = _load(src_path)
    c = resolved(cfg)
    H, d, r, L = c["n_heads"], c["head_dim"], c["qk_rank"], c["n_layers"]
    assert r > 0, "%s has qk_rank 0" % src_path
    differential = c["attention"] in ("diff", "dint")
    branches = [("q1", H, "q"), ("k1", c["n_k1_heads"], "k")]
    if differential:
        branches += [("q2", c["n_q2_heads"], "q")]
        if not c["shared_k"]:
            branches += [("k2", c["n_k2_heads"], "k")]
    arr = {k: v[1].astype(np.float64) for k, v in t.items()}
    out = {}
    for name in t:
        parts = name.split(".")
        if len(parts) == 4 and parts[0] == "layers" and parts[2] == "attn":
            key, p = parts[3], "layers.%s.attn." % parts[1]
            if key in ("q_base", "k_base") or key.endswith("_up"):
                continue
            if key.endswith("_down"):
                b = key[:-5]
                n, base = [(n, s) for bb, n, s in branches if bb == b][0]
                down = arr[p + b + "_down"].reshape(n, r, -1)
                up = arr[p + b + "_up"].reshape(n, d, r)
                w = arr[p + base + "_base"][None] + np.einsum("hdr,hrD->hdD", up, down)
                out[p + "w" + b] = ("F32", w.reshape(n * d, -1).astype(np.float32))
                continue
        out[name] = ("F32", t[name][1])
    assert sum(1 for k in out if ".attn.w" in k) == L * (len(branches) + 2)
    cfg = dict(cfg)
    cfg["qk_rank"] = 0
    safetensors_io.write(dst_path, out, _metadata(cfg))


def unshare_k(src_path, dst_path):
    """Write the shared_k model of src_path as the same model with shared_k false: wk2 a copy of
    wk1 (or k2_down / k2_up copies of k1_down / k1_up), dtype kept (the copy is exact)."""
    t, cfg = _load(src_path)
    c = resolved(cfg)
    assert c["shared_k"], "%s has no shared_k" % src_path
    out = {}
    for name, v in t.items():
        out[name] = v
        parts = name.split(".")
        if len(parts) == 4 and parts[0] == "layers" and parts[2] == "attn" and \
                parts[3] in ("wk1", "k1_down", "k1_up"):
            out[".".join(parts[:3] + [parts[3].replace("k1", "k2")])] = v
    cfg = dict(cfg, shared_k=False)
    safetensors_io.write(dst_path, out, _metadata(cfg))


def rewrite_config(src_path, dst_path, drop=(), **values):
    """Write the tensors of src_path verbatim under its config with the keys in drop removed and
    the given keys set (e.g. drop=["rope_scaling"] for a factor-1 scaling; the version follows)."""
    t, cfg = _load(src_path)
    cfg = {k: v for k, v in cfg.items() if k not in drop}
    cfg.update(values)
    safetensors_io.write(dst_path, t, _metadata(cfg))


# ---------------------------------------------------------------------------
# CLI
# ---------------------------------------------------------------------------

_BASE = {"dim": 32, "n_layers": 2, "vocab_size": 61, "hidden_dim": 48, "max_seq_len": 32,
         "n_heads": 4, "head_dim": 8}
PRESETS = {
    "standard": dict(_BASE, attention="standard", n_k1_heads=2, n_v_heads=2, rope="halves"),
    "diff": dict(_BASE, attention="diff"),
    "dint": dict(_BASE, attention="dint", integral="softmax", head_scale="none"),
    "shared-diff": dict(_BASE, attention="diff", qk_rank=2),
    "grouped-diff": dict(_BASE, attention="diff", n_q2_heads=2, n_k2_heads=2, n_v_heads=2),
    # version 1.1 (docs/format.md section 3)
    "diff-v2": dict(_BASE, attention="diff", lambda_mode="token_sigmoid", shared_k=True,
                    n_k1_heads=2, n_q2_heads=4, n_k2_heads=2, n_v_heads=2, v_head_dim=8,
                    head_norm=False, head_scale="none", rope="interleaved"),
    "dint-token-shared-k": dict(_BASE, attention="dint", lambda_mode="token_sigmoid",
                                shared_k=True, head_scale="none"),
    "shared-diff-shared-k": dict(_BASE, attention="diff", qk_rank=2, shared_k=True),
    "partial-rope-yarn": dict(_BASE, attention="diff", rope="halves", rope_dim=4,
                              rope_scaling={"type": "yarn", "factor": 4.0,
                                            "original_max_position_embeddings": 16}),
    "llama3-scaling": dict(_BASE, attention="diff", rope_theta=500.0,
                           rope_scaling={"type": "llama3", "factor": 8.0, "low_freq_factor": 1.0,
                                         "high_freq_factor": 4.0,
                                         "original_max_position_embeddings": 16}),
    "ffn-bias": dict(_BASE, attention="diff", ffn_bias=True),
    "ffn-bias-polynorm": dict(_BASE, attention="standard", ffn_act="polynorm", ffn_bias=True),
}

# The `bench` size (issue 5, examples/bench): dim 1024, 8 layers, FFN 2752, vocab 8192, context
# 2048; 8 differential heads of 2 x 64 (head_dim 64, v_head_dim 128), or for standard attention 16
# heads of 64 (v 64), so every family has the same attention projection widths (about 118M
# parameters, untied embeddings). Grouped-DIFF uses G = 4 (2 noise heads and value groups);
# Shared-DIFF uses qk_rank 16 (the engine runs it factored). Use as --preset bench-FAMILY.
_BENCH = {"dim": 1024, "n_layers": 8, "vocab_size": 8192, "hidden_dim": 2752, "max_seq_len": 2048,
          "n_heads": 8, "head_dim": 64, "v_head_dim": 128}
PRESETS.update({
    "bench-standard": dict(_BENCH, attention="standard", n_heads=16, v_head_dim=64, rope="halves"),
    "bench-diff": dict(_BENCH, attention="diff"),
    "bench-dint": dict(_BENCH, attention="dint", integral="softmax", head_scale="none"),
    "bench-shared-diff": dict(_BENCH, attention="diff", qk_rank=16),
    "bench-grouped-diff": dict(_BENCH, attention="diff", n_q2_heads=2, n_k2_heads=2, n_v_heads=2),
    "bench-diff-v2": dict(_BENCH, attention="diff", v_head_dim=64, lambda_mode="token_sigmoid",
                          shared_k=True, n_k1_heads=2, n_k2_heads=2, n_v_heads=2,
                          head_norm=False, head_scale="none"),
})


def main(argv=None):
    import cli   # beside this file
    ap = cli.parser(__doc__, ["/usr/bin/python3 tools/make_model.py /tmp/dint.safetensors --preset dint",
                              "/usr/bin/python3 tools/make_model.py /tmp/d.safetensors --preset diff "
                              "--set rope_dim=4 --dtype bf16"])
    ap.add_argument("out", nargs="?", help="output .safetensors")
    ap.add_argument("--config", help="config JSON object (written verbatim); --config or --preset is needed")
    ap.add_argument("--preset", choices=sorted(PRESETS), help="a named config")
    ap.add_argument("--dtype", default="f32", choices=sorted(DTYPES), help="the weights' type")
    ap.add_argument("--seed", type=int, default=0, help="the random weights' seed (any integer)")
    ap.add_argument("--head-norm-per-head", action="store_true",
                    help="head_norm.weight/bias of shape [H*dv] instead of [dv]")
    ap.add_argument("--set", action="append", default=[], metavar="KEY=JSON",
                    help="set (or with an empty value, drop) a config key of the preset or "
                         "--config, e.g. --set rope_dim=4 --set shared_k=true")
    ap.add_argument("--expand-grouped", nargs=2, metavar=("SRC", "DST"),
                    help="grouped model -> the same model with every K1/Q2/K2/V head count raised to n_heads")
    ap.add_argument("--merge-low-rank", nargs=2, metavar=("SRC", "DST"),
                    help="Shared-DIFF (qk_rank > 0) model -> the same model with dense projections (F32)")
    ap.add_argument("--unshare-k", nargs=2, metavar=("SRC", "DST"),
                    help="shared_k model -> the same model with wk2 a copy of wk1")
    a = ap.parse_args(argv)
    if a.expand_grouped:
        expand_grouped(*a.expand_grouped)
        return 0
    if a.merge_low_rank:
        merge_low_rank(*a.merge_low_rank)
        return 0
    if a.unshare_k:
        unshare_k(*a.unshare_k)
        return 0
    if not a.out or (a.config is None) == (a.preset is None):
        ap.error("need OUT and exactly one of --config / --preset")
    cfg = dict(json.loads(a.config) if a.config else PRESETS[a.preset])
    for kv in a.set:
        key, eq, value = kv.partition("=")
        if not eq:
            ap.error("--set %r: want KEY=JSON" % kv)
        if value == "":
            cfg.pop(key, None)
        else:
            try:
                cfg[key] = json.loads(value)
            except ValueError:
                ap.error("--set %s: %r is not JSON" % (key, value))
    make_model(a.out, cfg, a.dtype, a.seed, a.head_norm_per_head)
    return 0


if __name__ == "__main__":
    sys.exit(main())
