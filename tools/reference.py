#!/usr/bin/python3
"""Independent float64 numpy reference for dintattn models (docs/format.md: version 1 and the version 1.1 additions).

Straightforward dense math, written from the format's specification (docs/format.md) and nothing else, never from dintattn.h: every
attention matrix (A1, A2, S/G, I, W) is built in full, N x N per head, with explicit causal
masks. It exists to check the C engine, so clarity wins over speed.

It keeps its own copies of the format's rules (the config defaults, lambda_init's depth formula,
the version 1.1 keys, the tensors each option adds or removes, a safetensors reader) instead of
importing tools/spec.py and tools/safetensors_io.py, which the other tools share: as the
independent oracle it must not inherit their mistakes.

Usage (Debian's python has numpy; the pyenv `python3` on PATH does not):

    /usr/bin/python3 tools/reference.py MODEL.safetensors 1,2,3,4 OUT.bin

writes the logits of one causal pass over the ids (positions 0..N-1) as little-endian
float32, row-major [N, vocab_size].

As a module:

    cfg, tensors = load(path)     # config with defaults resolved, float64 weights (Q8 / Q4
                                  # matrices dequantized: see dequantize)
    logits = forward(path_or_(cfg, tensors), ids)               # [N, vocab] float64
    logits, attn = forward(..., return_attn=True)   # attn[l] = final W matrices [H, N, N]
"""

import json
import math
import os
import struct
import sys

import numpy as np

# ----------------------------------------------------------------------------------------------
# safetensors reader (hand written: u64 LE header length, JSON header, data section)
# ----------------------------------------------------------------------------------------------

_ITEMSIZE = {"F32": 4, "F16": 2, "BF16": 2, "U8": 1, "I8": 1}


def _decode(dtype, raw):
    """Decode raw little-endian bytes exactly; float weights become float64."""
    if dtype == "F32":
        return np.frombuffer(raw, dtype="<f4").astype(np.float64)
    if dtype == "F16":
        return np.frombuffer(raw, dtype="<f2").astype(np.float64)
    if dtype == "BF16":  # bf16 is the upper half of an f32
        u32 = np.frombuffer(raw, dtype="<u2").astype(np.uint32) << 16
        return u32.view("<f4").astype(np.float64)
    if dtype == "U8":  # Q4 nibbles (see dequantize), or the tokenizer's bytes
        return np.frombuffer(raw, dtype=np.uint8).copy()
    if dtype == "I8":  # Q8 values; their scales are NAME.scale (see dequantize)
        return np.frombuffer(raw, dtype=np.int8).astype(np.float64)
    raise ValueError(f"unsupported dtype {dtype!r}")


def read_safetensors(path, dtypes=None):
    """Return (metadata: dict[str, str], tensors: dict[str, np.ndarray]); with a dict dtypes,
    also fill it with each tensor's safetensors dtype."""
    with open(path, "rb") as f:
        blob = f.read()
    if len(blob) < 8:
        raise ValueError(f"{path}: truncated (no header length)")
    (hlen,) = struct.unpack("<Q", blob[:8])
    if 8 + hlen > len(blob):
        raise ValueError(f"{path}: header length {hlen} past end of file")
    header = json.loads(blob[8:8 + hlen].decode("utf-8"))
    data = memoryview(blob)[8 + hlen:]
    meta = header.pop("__metadata__", {}) or {}
    tensors = {}
    for name, info in header.items():
        dtype, shape = info["dtype"], [int(s) for s in info["shape"]]
        begin, end = (int(o) for o in info["data_offsets"])
        if dtype not in _ITEMSIZE:
            raise ValueError(f"{name}: unsupported dtype {dtype!r}")
        if not 0 <= begin <= end <= len(data):
            raise ValueError(f"{name}: data_offsets [{begin}, {end}] out of range")
        if end - begin != _ITEMSIZE[dtype] * math.prod(shape):
            raise ValueError(f"{name}: {end - begin} bytes for {dtype} {shape}")
        tensors[name] = _decode(dtype, bytes(data[begin:end])).reshape(shape)
        if dtypes is not None:
            dtypes[name] = dtype
    return meta, tensors


# The weight matrices, the only tensors that may be stored quantized (Q8 or Q4)
_MATRICES = {"tok_embeddings.weight", "output.weight"}
_LAYER_MATRICES = {"attn." + k for k in ("wq1", "wk1", "wq2", "wk2", "wv", "wo", "q_base", "k_base",
                                         "q1_down", "k1_down", "q2_down", "k2_down")} | \
                  {"ffn." + k for k in ("w_gate", "w_up", "w_down")}


def _is_matrix(name):
    parts = name.split(".", 2)
    return name in _MATRICES or (len(parts) == 3 and parts[0] == "layers" and parts[1].isdigit()
                                 and parts[2] in _LAYER_MATRICES)


def dequantize(path, tensors, dtypes):
    """Replace every quantized weight matrix of tensors (as read, with their dtypes) by its float64
    weights, and drop its scales. A matrix [rows, cols], cols a multiple of 32, is stored as
      Q8: I8 NAME [rows, cols] holding q in [-127, 127]           (docs/format.md section 4)
      Q4: U8 NAME [rows, cols / 2]: 16 bytes a block of 32 weights, byte j holding nibble n_j
          (low 4 bits) and n_{j+16} (high 4 bits), q = n - 8 in [-8, 7]
    with F32 NAME.scale [rows, cols / 32]; weight = scale * q for each block of 32 along a row.
    Anything else I8 or U8 (but the tokenizer's bytes), and scales without their matrix, are
    refused."""
    for name in [k for k, dt in dtypes.items() if dt in ("I8", "U8")]:
        if name.startswith("tokenizer."):
            continue                       # the tokenizer's U8 blobs, not weights
        dt, q = dtypes[name], tensors[name]
        what = "I8 (Q8)" if dt == "I8" else "U8 (Q4)"
        if not _is_matrix(name):
            raise ValueError(f"{path}: tensor {name!r} is {dt}: only weight matrices may be Q8 or Q4")
        sname = name + ".scale"
        if sname not in tensors:
            raise ValueError(f"{path}: tensor {name!r} is {what} but {sname!r} (its scales) is missing")
        if dtypes[sname] != "F32":
            raise ValueError(f"{path}: tensor {sname!r} is {dtypes[sname]}, must be F32")
        if q.ndim != 2:
            raise ValueError(f"{path}: tensor {name!r} ({what}) must be 2-D, has shape {list(q.shape)}")
        rows, cols = q.shape[0], q.shape[1] * (2 if dt == "U8" else 1)
        if cols % 32:
            raise ValueError(f"{path}: tensor {name!r} is {what} but its rows ({cols} weights) are "
                             f"not a multiple of 32 long")
        scale = tensors.pop(sname)
        if scale.shape != (rows, cols // 32):
            raise ValueError(f"{path}: tensor {sname!r} has shape {list(scale.shape)}, expected "
                             f"[{rows}, {cols // 32}]")
        if dt == "U8":
            b = q.reshape(rows, cols // 32, 16).astype(np.int64)
            q = np.concatenate([b & 15, b >> 4], axis=2).astype(np.float64) - 8.0
        tensors[name] = (q.reshape(rows, cols // 32, 32) * scale[:, :, None]).reshape(rows, cols)
        dtypes[name] = "F64"
        del dtypes[sname]
    orphans = [k for k in tensors if k.endswith(".scale")]
    if orphans:
        raise ValueError(f"{path}: tensor {orphans[0]!r}: scales without a Q8 or Q4 matrix "
                         f"{orphans[0][:-6]!r}")


# ----------------------------------------------------------------------------------------------
# config
# ----------------------------------------------------------------------------------------------

# docs/format.md section 3: the keys a "version": "1.1" file may use (refused by name in a "1" file)
V11_KEYS = ("lambda_mode", "shared_k", "rope_dim", "rope_scaling", "ffn_bias")

# rope_scaling: type -> (required fields, optional fields), names as in HF config.json
ROPE_SCALING_FIELDS = {
    "linear": (("factor",), ()),
    "llama3": (("factor", "low_freq_factor", "high_freq_factor", "original_max_position_embeddings"), ()),
    "yarn": (("factor", "original_max_position_embeddings"),
             ("beta_fast", "beta_slow", "mscale", "mscale_all_dim", "attention_factor", "truncate")),
}


def _is_num(v):
    return isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v)


def resolve_rope_scaling(rs):
    """Validate a rope_scaling object (docs/format.md section 3) -> dict with every field resolved:
    type, factor, and per type low/high_freq_factor, original_max_position_embeddings,
    beta_fast, beta_slow, truncate, attention_factor (1 unless yarn)."""
    if not isinstance(rs, dict) or not isinstance(rs.get("type"), str):
        raise ValueError(f"rope_scaling {rs!r}: must be an object with a \"type\"")
    typ = rs["type"]
    if typ not in ROPE_SCALING_FIELDS:
        raise ValueError(f"rope_scaling type {typ!r}")
    required, optional = ROPE_SCALING_FIELDS[typ]
    for k, v in rs.items():
        if k == "type":
            continue
        if k not in required and k not in optional:
            raise ValueError(f"rope_scaling of type {typ!r}: unknown field {k!r}")
        if k == "truncate":
            if not isinstance(v, bool):
                raise ValueError(f"rope_scaling field 'truncate' must be a bool, got {v!r}")
        elif not _is_num(v):
            raise ValueError(f"rope_scaling field {k!r} must be a finite number, got {v!r}")
    for k in required:
        if k not in rs:
            raise ValueError(f"rope_scaling of type {typ!r} needs {k!r}")
    out = {"type": typ, "factor": float(rs["factor"]), "attention_factor": 1.0}
    s = out["factor"]
    if not s >= 1:
        raise ValueError(f"rope_scaling 'factor' {s!r} must be >= 1")
    if typ in ("llama3", "yarn"):
        L = float(rs["original_max_position_embeddings"])
        if not L >= 1:
            raise ValueError(f"rope_scaling 'original_max_position_embeddings' {L!r} must be >= 1")
        out["original_max_position_embeddings"] = L
    if typ == "llama3":
        lf, hf = float(rs["low_freq_factor"]), float(rs["high_freq_factor"])
        if not 0 < lf < hf:
            raise ValueError(f"rope_scaling needs 0 < low_freq_factor ({lf}) < high_freq_factor ({hf})")
        out["low_freq_factor"], out["high_freq_factor"] = lf, hf
    if typ == "yarn":
        # 0 (or absent) means the default, as transformers' `get("beta_fast") or 32`
        out["beta_fast"] = float(rs.get("beta_fast") or 32.0)
        out["beta_slow"] = float(rs.get("beta_slow") or 1.0)
        if not (out["beta_fast"] > 0 and out["beta_slow"] > 0):
            raise ValueError("rope_scaling's beta_fast and beta_slow must be > 0")
        out["truncate"] = rs.get("truncate", True)

        def m(a):
            return 1.0 if s <= 1 else 0.1 * a * math.log(s) + 1.0

        if "attention_factor" in rs:
            af = float(rs["attention_factor"])
            if not af > 0:   # transformers would zero cos and sin: refused as meaningless
                raise ValueError(f"rope_scaling 'attention_factor' {af!r} must be > 0")
        elif rs.get("mscale") and rs.get("mscale_all_dim"):
            af = m(float(rs["mscale"])) / m(float(rs["mscale_all_dim"]))
        else:
            af = m(1.0)
        if not af > 0:
            raise ValueError(f"rope_scaling: attention factor {af!r} from mscale/mscale_all_dim must be > 0")
        out["attention_factor"] = af
    return out


def rope_inv_freq(cfg):
    """(inv_freq [rope_dim/2], attention_factor) for a resolved config: theta^(-2k/r), k < r/2,
    scaled per docs/format.md section 3 (Hugging Face transformers' modeling_rope_utils rope types)."""
    r, b = cfg["rope_dim"], float(cfg["rope_theta"])
    k = np.arange(r // 2, dtype=np.float64)
    inv = b ** (-2.0 * k / r)
    rs = cfg["rope_scaling_values"]
    if rs is None:
        return inv, 1.0
    s = rs["factor"]
    if rs["type"] == "linear":
        return inv / s, 1.0
    L = rs["original_max_position_embeddings"]
    if rs["type"] == "llama3":
        lf, hf = rs["low_freq_factor"], rs["high_freq_factor"]
        out = np.empty_like(inv)
        for i, f in enumerate(inv):
            w = 2.0 * math.pi / f                       # wavelength
            if w < L / hf:
                out[i] = f                              # high frequency: kept
            elif w > L / lf:
                out[i] = f / s                          # low frequency: interpolated
            else:
                t = (L / w - lf) / (hf - lf)
                out[i] = (1.0 - t) * f / s + t * f
        return out, 1.0
    # yarn: c(n) = r ln(L / (2 pi n)) / (2 ln b), the pair index that turns n times in L positions
    def c(n):
        return r * math.log(L / (2.0 * math.pi * n)) / (2.0 * math.log(b))
    lo, hi = c(rs["beta_fast"]), c(rs["beta_slow"])
    if rs["truncate"]:
        lo, hi = math.floor(lo), math.ceil(hi)
    lo, hi = max(lo, 0), min(hi, r - 1)
    if lo == hi:
        hi += 0.001
    ramp = np.clip((k - lo) / (hi - lo), 0.0, 1.0)
    return ramp * inv / s + (1.0 - ramp) * inv, rs["attention_factor"]


def resolve_config(raw, version="1.1"):
    """Fill in every default (team decisions where docs/format.md is silent); unknown keys kept.
    version is the file's __metadata__ version: in "1" the v1.1 keys are refused by name."""
    c = dict(raw)
    if version == "1":
        for key in V11_KEYS:
            if key in c:
                raise ValueError(f"config key {key!r} needs __metadata__ version \"1.1\" (file says \"1\")")
    elif version != "1.1":
        raise ValueError(f"version {version!r}")
    att = c.get("attention", "standard")
    if att not in ("standard", "diff", "dint"):
        raise ValueError(f"attention {att!r}")
    c["attention"] = att
    differential = att != "standard"
    H = c["n_heads"]
    d = c["head_dim"]
    c.setdefault("n_k1_heads", H)
    c.setdefault("n_v_heads", H)
    c.setdefault("n_q2_heads", H if differential else 0)
    c.setdefault("n_k2_heads", H if differential else 0)
    c.setdefault("v_head_dim", 2 * d if differential else d)
    c.setdefault("integral", "softmax")
    c.setdefault("qk_rank", 0)
    c.setdefault("lambda_init", "depth")
    c.setdefault("head_norm", differential)
    c.setdefault("head_norm_type", "rms")
    c.setdefault("head_scale", "one_minus_lambda_init" if att == "diff" else "none")
    c.setdefault("rope", "interleaved")
    c.setdefault("rope_theta", 10000.0)
    c.setdefault("norm_eps", 1e-5)
    c.setdefault("head_norm_eps", c["norm_eps"])
    c.setdefault("ffn_act", "silu")
    c.setdefault("tie_embeddings", False)

    heads = ["n_k1_heads", "n_v_heads"] + (["n_q2_heads", "n_k2_heads"] if differential else [])
    for key in heads:
        if c[key] <= 0 or H % c[key]:
            raise ValueError(f"{key}={c[key]} does not divide n_heads={H}")
    li = c["lambda_init"]
    if li == "depth":   # docs/format.md section 1; written out here on purpose (see the module doc)
        c["lambda_init_values"] = [0.8 - 0.6 * math.exp(-0.3 * l) for l in range(c["n_layers"])]
    elif isinstance(li, (int, float)) and not isinstance(li, bool):
        c["lambda_init_values"] = [float(li)] * c["n_layers"]
    elif isinstance(li, list) and len(li) == c["n_layers"]:
        c["lambda_init_values"] = [float(v) for v in li]
    else:
        raise ValueError(f"lambda_init {li!r}")
    for key, legal in (("integral", ("softmax", "mean")), ("head_norm_type", ("rms", "group")),
                       ("head_scale", ("one_minus_lambda_init", "none")),
                       ("rope", ("interleaved", "halves", "none")),
                       ("ffn_act", ("silu", "polynorm"))):
        if c[key] not in legal:
            raise ValueError(f"{key} {c[key]!r}")

    # --- version 1.1 (docs/format.md section 3); lambda_mode and shared_k only matter for diff/dint,
    # rope_dim and rope_scaling only with RoPE (unused keys are ignored, as in v1)
    c.setdefault("lambda_mode", "reparam")
    c.setdefault("shared_k", False)
    c.setdefault("ffn_bias", False)
    if differential:
        if c["lambda_mode"] not in ("reparam", "token_sigmoid"):
            raise ValueError(f"lambda_mode {c['lambda_mode']!r}")
        if not isinstance(c["shared_k"], bool):
            raise ValueError(f"shared_k {c['shared_k']!r} must be a bool")
        if c["shared_k"] and c["n_k2_heads"] != c["n_k1_heads"]:
            raise ValueError(f"shared_k needs n_k2_heads ({c['n_k2_heads']}) = n_k1_heads "
                             f"({c['n_k1_heads']})")
    else:
        c["lambda_mode"], c["shared_k"] = "reparam", False
    if not isinstance(c["ffn_bias"], bool):
        raise ValueError(f"ffn_bias {c['ffn_bias']!r} must be a bool")
    c["rope_scaling_values"] = None
    if c["rope"] == "none":
        if "rope_scaling" in c:
            raise ValueError('rope_scaling with rope "none"')
        c["rope_dim"] = 0
    else:
        if "rope_dim" not in c and d % 2:
            raise ValueError(f"RoPE ({c['rope']!r}) needs an even head_dim (or an even rope_dim), "
                             f"got {d}")
        rd = c.setdefault("rope_dim", d)
        if not isinstance(rd, int) or isinstance(rd, bool) or not 2 <= rd <= d or rd % 2:
            raise ValueError(f"rope_dim {rd!r}: must be an even integer from 2 to head_dim={d}")
        if "rope_scaling" in c:
            c["rope_scaling_values"] = resolve_rope_scaling(c["rope_scaling"])
    return c


def check_v11_tensors(cfg, t):
    """The tensors the v1.1 keys add or remove are present (right shapes) or absent."""
    H, D, F, d, r = cfg["n_heads"], cfg["dim"], cfg["hidden_dim"], cfg["head_dim"], cfg["qk_rank"]
    differential = cfg["attention"] != "standard"
    for l in range(cfg["n_layers"]):
        a, f = f"layers.{l}.attn.", f"layers.{l}.ffn."
        want, gone = {}, []
        token = differential and cfg["lambda_mode"] == "token_sigmoid"
        if token:
            want[a + "lambda_proj"] = (H, D)
            gone += [a + "lambda_" + b for b in ("q1", "k1", "q2", "k2")]
        else:
            gone.append(a + "lambda_proj")
            if differential:
                want.update({a + "lambda_" + b: (d,) for b in ("q1", "k1", "q2", "k2")})
        if differential and cfg["shared_k"]:
            gone += [a + "wk2", a + "k2_down", a + "k2_up"]
        elif differential:
            want.update({a + "wk2": (cfg["n_k2_heads"] * d, D)} if r == 0 else
                        {a + "k2_down": (cfg["n_k2_heads"] * r, D), a + "k2_up": (cfg["n_k2_heads"] * d, r)})
        biases = {f + "b_gate": (F,), f + "b_up": (F,), f + "b_down": (D,)}
        if cfg["ffn_bias"]:
            want.update(biases)
        else:
            gone += list(biases)
        for name, shape in want.items():
            if name not in t:
                raise ValueError(f"missing tensor {name}")
            if tuple(t[name].shape) != shape:
                raise ValueError(f"{name}: shape {list(t[name].shape)}, expected {list(shape)}")
        for name in gone:
            if name in t:
                raise ValueError(f"unexpected tensor {name} for this config")


def load(path):
    """Read a dintattn .safetensors file -> (cfg with defaults resolved, float64 tensors)."""
    dtypes = {}
    meta, tensors = read_safetensors(path, dtypes)
    if meta.get("format") != "dintattn" or meta.get("version") not in ("1", "1.1"):
        raise ValueError(f"{path}: not a dintattn v1 / v1.1 file (metadata {meta.get('format')!r}, "
                         f"{meta.get('version')!r})")
    dequantize(path, tensors, dtypes)      # Q8 / Q4 matrices -> float64 weights
    cfg = resolve_config(json.loads(meta["config"]), meta["version"])
    check_v11_tensors(cfg, tensors)
    return cfg, tensors


# ----------------------------------------------------------------------------------------------
# building blocks
# ----------------------------------------------------------------------------------------------

def rms_norm(x, w, eps):
    return x / np.sqrt(np.mean(x * x, axis=-1, keepdims=True) + eps) * w


def causal_softmax(scores):
    """Row softmax over j <= n of scores[..., n, j]; masked entries get exactly zero weight."""
    n = scores.shape[-1]
    mask = np.tril(np.ones((n, n), dtype=bool))
    s = np.where(mask, scores, -np.inf)
    s = s - s.max(axis=-1, keepdims=True)
    e = np.where(mask, np.exp(s), 0.0)
    return e / e.sum(axis=-1, keepdims=True)


def rope(x, style, inv, scale=1.0):
    """Rotate x [N, heads, d] by absolute position n = 0..N-1 (row index): the first
    r = 2*len(inv) components of each head, pair k at angle n * inv[k], with cos and sin times
    scale (YaRN's attention factor); components r..d-1 pass through unchanged."""
    if style == "none":
        return x
    N, _, d = x.shape
    r = 2 * len(inv)
    ang = np.arange(N)[:, None] * inv[None, :]                      # [N, r/2]
    cos = scale * np.cos(ang)[:, None, :]                           # broadcast over heads
    sin = scale * np.sin(ang)[:, None, :]
    if style == "interleaved":
        ia, ib = np.arange(0, r, 2), np.arange(1, r, 2)             # pairs (2k, 2k+1)
    else:
        ia, ib = np.arange(r // 2), np.arange(r // 2, r)            # "halves": (k, k+r/2)
    a, b = x[..., ia], x[..., ib]
    out = x.copy()
    out[..., ia] = a * cos - b * sin
    out[..., ib] = a * sin + b * cos
    return out


def project_qk(h, t, pre, which, n_heads, cfg):
    """Q or K heads [N, n_heads, d] for branch `which` in {"q1","k1","q2","k2"}."""
    d, r, N = cfg["head_dim"], cfg["qk_rank"], h.shape[0]
    if r == 0:
        w = t[pre + "w" + which]                                    # [n_heads*d, D]
        return (h @ w.T).reshape(N, n_heads, d)
    # Shared-DIFF: shared base + per-head low-rank update
    base = h @ t[pre + ("q_base" if which[0] == "q" else "k_base")].T          # [N, d]
    down = t[pre + which + "_down"].reshape(n_heads, r, -1)                    # [heads, r, D]
    up = t[pre + which + "_up"].reshape(n_heads, d, r)                         # [heads, d, r]
    low = np.einsum("hrD,nD->nhr", down, h)                                    # [N, heads, r]
    return base[:, None, :] + np.einsum("hdr,nhr->nhd", up, low)


def kv_round(z, kv):
    """Keys or values [N, heads, width] as the engine's cache holds them (dintattn_kv_type): as
    they are ("f32"), bf16 rounded to nearest even ("bf16"), or int8 with one scale per head row ("q8":
    scale = max|row| / 127, q = rint(row * (127 / max)), both in float32, value = scale * q)."""
    if kv == "f32":  # the reference's own float64 (the engine's f32 cache is within its tolerance)
        return z
    z32 = np.asarray(z, dtype=np.float32)
    if kv == "bf16":
        u = z32.view(np.uint32).astype(np.uint64)
        u = ((u + 0x7FFF + ((u >> 16) & 1)) >> 16) << 16
        return u.astype(np.uint32).view(np.float32).astype(np.float64)
    assert kv == "q8", kv
    amax = np.max(np.abs(z32), axis=-1, keepdims=True)
    with np.errstate(divide="ignore"):
        inv = np.where(amax > 0, np.float32(127.0) / amax, np.float32(0.0)).astype(np.float32)
    q = np.clip(np.rint(z32 * inv), -127, 127).astype(np.float32)
    scale = (amax / np.float32(127.0)).astype(np.float32)
    return (scale * q).astype(np.float32).astype(np.float64)


def attention(x, t, l, cfg, kv="f32"):
    """One attention sublayer on normed input x [N, D]; returns (out [N, D], W [H, N, N], terms):
    terms = {"A1", "A2", "I": [H, N, N] or None, "lambda": a scalar or [H, N, 1]}, what W is made
    of. kv: the cache's type (kv_round) that keys and values are read back in."""
    pre = f"layers.{l}.attn."
    N = x.shape[0]
    H, d, dv = cfg["n_heads"], cfg["head_dim"], cfg["v_head_dim"]
    att = cfg["attention"]
    lam_init = cfg["lambda_init_values"][l]
    s = 1.0 / math.sqrt(d)
    i = np.arange(H)
    # signal head i reads these source heads of each projection
    k1_of = i * cfg["n_k1_heads"] // H
    v_of = i * cfg["n_v_heads"] // H

    if cfg["rope"] != "none":
        inv, af = rope_inv_freq(cfg)

    def rot(z):
        return z if cfg["rope"] == "none" else rope(z, cfg["rope"], inv, af)

    q1 = rot(project_qk(x, t, pre, "q1", H, cfg))                      # [N, H, d]
    k1 = kv_round(rot(project_qk(x, t, pre, "k1", cfg["n_k1_heads"], cfg)), kv)      # [N, n_k1, d]
    v = kv_round((x @ t[pre + "wv"].T).reshape(N, cfg["n_v_heads"], dv), kv)

    A1 = causal_softmax(np.einsum("nhd,mhd->hnm", q1, k1[:, k1_of]) * s)   # [H, N, N]
    terms = {"A1": A1, "A2": None, "I": None, "lambda": 0.0}
    if att == "standard":
        W = A1
    else:
        q2_of = i * cfg["n_q2_heads"] // H
        k2_of = i * cfg["n_k2_heads"] // H
        q2 = rot(project_qk(x, t, pre, "q2", cfg["n_q2_heads"], cfg))
        # shared_k: K2 is K1 (n_k2_heads == n_k1_heads, so k2_of == k1_of)
        k2 = k1 if cfg["shared_k"] else kv_round(rot(project_qk(x, t, pre, "k2", cfg["n_k2_heads"], cfg)), kv)
        A2 = causal_softmax(np.einsum("nhd,mhd->hnm", q2[:, q2_of], k2[:, k2_of]) * s)
        if cfg["lambda_mode"] == "token_sigmoid":
            # lambda[n, i] = sigmoid(lambda_proj[i] . x_n): one value per head and row
            z = x @ t[pre + "lambda_proj"].T                               # [N, H]
            lam = (1.0 / (1.0 + np.exp(-z))).T[:, :, None]                 # [H, N, 1]
        else:
            lam = (math.exp(t[pre + "lambda_q1"] @ t[pre + "lambda_k1"])
                   - math.exp(t[pre + "lambda_q2"] @ t[pre + "lambda_k2"]) + lam_init)
        W = A1 - lam * A2
        terms.update(A2=A2, **{"lambda": lam})
        if att == "dint":
            # S[n, j] = sum_{m<=n} A1[m, j] (A1 is zero above the diagonal, so S is too);
            # G[n, j] = S[n, j] / (n+1), the causal column mean.
            S = np.cumsum(A1, axis=1)
            G = S / np.arange(1, N + 1)[None, :, None]
            I = causal_softmax(G) if cfg["integral"] == "softmax" else G
            W = W + lam * I
            terms["I"] = I

    heads = np.einsum("hnm,mhe->hne", W, v[:, v_of])                   # [H, N, dv]
    if cfg["head_norm"]:
        w = t[pre + "head_norm.weight"]
        w = w.reshape(H, 1, dv) if w.size == H * dv else w.reshape(1, 1, dv)
        eps = cfg["head_norm_eps"]
        if cfg["head_norm_type"] == "rms":
            heads = rms_norm(heads, w, eps)
        else:  # GroupNorm, one group per head over its dv channels, biased variance
            b = t[pre + "head_norm.bias"]
            b = b.reshape(H, 1, dv) if b.size == H * dv else b.reshape(1, 1, dv)
            mu = heads.mean(axis=-1, keepdims=True)
            var = ((heads - mu) ** 2).mean(axis=-1, keepdims=True)
            heads = (heads - mu) / np.sqrt(var + eps) * w + b
    if cfg["head_scale"] == "one_minus_lambda_init":
        heads = heads * (1.0 - lam_init)
    concat = heads.transpose(1, 0, 2).reshape(N, H * dv)               # head i -> cols i*dv..
    return concat @ t[pre + "wo"].T, W, terms


def ffn(h, t, l, cfg):
    pre = f"layers.{l}.ffn."
    bias = cfg["ffn_bias"]
    g = h @ t[pre + "w_gate"].T                                        # [N, F]
    if bias:
        g = g + t[pre + "b_gate"]
    if cfg["ffn_act"] == "silu":
        a = g / (1.0 + np.exp(-g))
    else:  # polynorm; the means run over the full width F
        def rms(p):
            return np.sqrt(np.mean(g ** p, axis=-1, keepdims=True) + 1e-6)
        w0, w1, w2 = t[pre + "act_weight"]
        a = w0 * g ** 3 / rms(6) + w1 * g ** 2 / rms(4) + w2 * g / rms(2) + t[pre + "act_bias"][0]
    u = h @ t[pre + "w_up"].T
    if bias:
        u = u + t[pre + "b_up"]
    y = (a * u) @ t[pre + "w_down"].T
    return y + t[pre + "b_down"] if bias else y


# ----------------------------------------------------------------------------------------------
# model
# ----------------------------------------------------------------------------------------------

def forward(model, ids, return_attn=False, kv="f32", return_terms=False):
    """Logits [N, vocab] (float64) for one causal pass over ids from position 0.

    model is a path or a (cfg, tensors) pair from load(). With return_attn, also returns a
    list (one per layer) of the final attention matrices W [H, N, N]; with return_terms, a list
    (one per layer) of what W is made of (attention's terms). kv: the KV cache's type (kv_round).
    """
    cfg, t = load(model) if isinstance(model, (str, bytes, os.PathLike)) else model
    ids = np.asarray(ids, dtype=np.int64)
    if ids.ndim != 1 or ids.size == 0:
        raise ValueError("ids must be a non-empty 1-D sequence")
    if ids.min() < 0 or ids.max() >= cfg["vocab_size"]:
        raise ValueError("token id out of range")
    emb = t["tok_embeddings.weight"]
    x = emb[ids]                                                       # [N, D]
    eps = cfg["norm_eps"]
    attn, terms = [], []
    for l in range(cfg["n_layers"]):
        a, W, parts = attention(rms_norm(x, t[f"layers.{l}.attn_norm.weight"], eps), t, l, cfg, kv)
        x = x + a
        x = x + ffn(rms_norm(x, t[f"layers.{l}.ffn_norm.weight"], eps), t, l, cfg)
        attn.append(W)
        terms.append(parts)
    x = rms_norm(x, t["norm.weight"], eps)
    out = emb if cfg["tie_embeddings"] else t["output.weight"]
    logits = x @ out.T
    return (logits,) + ((attn,) if return_attn else ()) + ((terms,) if return_terms else ()) \
        if return_attn or return_terms else logits


def main(argv):
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    import cli   # the command line only: the math above imports nothing of the tools
    ap = cli.parser(__doc__, ["/usr/bin/python3 tools/reference.py tests/fixtures/conv_dint_grouped_gqa_f32.safetensors "
                              "1,2,3,4 /tmp/logits.bin"], full=True)
    ap.add_argument("model", metavar="MODEL.safetensors", help="a dintattn model file (any weight type)")
    ap.add_argument("ids", metavar="IDS", help="comma-separated token ids, each from 0 to vocab_size - 1")
    ap.add_argument("out", metavar="OUT.bin", help="the logits: float32 little-endian, [N, vocab_size]")
    a = ap.parse_args(argv[1:])
    try:
        ids = [int(s) for s in a.ids.split(",") if s.strip()]
    except ValueError:
        ap.error("IDS must be comma-separated integers, e.g. 1,2,3,4 (got %r)" % a.ids)
    try:
        logits = forward(a.model, ids)
        with open(a.out, "wb") as f:
            f.write(np.ascontiguousarray(logits, dtype="<f4").tobytes())
    except (OSError, ValueError, KeyError) as e:
        sys.stderr.write("reference: %s\n" % e)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
