#!/usr/bin/python3
"""Write a dintattn model file back out as a Hugging Face directory that GPU engines load.

    /usr/bin/python3 tools/export.py MODEL.safetensors OUTDIR [--layout auto|diffllama|motif]
        [--dtype auto|f32|bf16|f16] [--no-tokenizer]

OUTDIR (new, or empty) receives config.json and model.safetensors, and, when the model carries a
Hugging Face BPE tokenizer (docs/format.md section 5, "type": "bpe"), tokenizer.json and
tokenizer_config.json.  This is tools/convert.py run backwards: converting OUTDIR with
`tools/convert.py OUTDIR M.safetensors` gives the model again.

Layouts (the inverses of tools/layouts/diffllama.py and tools/layouts/motif.py, which describe
the engines' forward passes):
  diffllama  transformers' DiffLlamaForCausalLM (model_type "diffllama"): DIFF with SwiGLU.
             Signal head m pairs query head m with head m + H (q_proj = [Q1; Q2]); the key and
             value heads are the smallest count 2c that expresses the file's K1, K2 and V head
             counts (c their least common multiple); a value head of the file is two KV heads of
             width head_dim.  Grouped-DIFF exports too, each noise query repeated for its signal
             heads (exact, but the repeated queries cost compute).
  motif      Motif's modeling code and its vLLM fork (model_type "motif"): DIFF and Grouped-DIFF
             with PolyNorm.  q_proj holds (q1, q2) pairs, or, for Grouped-DIFF, groups of G
             signal heads and one noise head (num_noise_heads); k_proj (k1, k2) pairs; v_proj the
             file's value heads as they are.  Motif's code is not part of transformers: load the
             directory with Motif's modeling_motif.py (trust_remote_code from Motif's repository).
  auto       (the default) the layout whose MLP the file has: motif for ffn_act polynorm,
             diffllama for silu.

What changes on the way, and stays the same model:
  - RoPE "interleaved" (pairs 2k, 2k+1) becomes the targets' "halves" (pairs k, k + d/2) by
    permuting each query and key head's rows the same way: every q . k is unchanged, no value is
    rounded.
  - head_norm.weight, and 1 / (1 - lambda_init) for head_scale "none", are multiplied into the
    columns of wo (o_proj) where the target has no such weight: DiffLlama's head norm has none,
    Motif's subln is one vector for all heads.  These columns are rounded once to the output type.
  - Q8 and Q4 weight matrices are dequantized (scale * q, exact in f32); --dtype auto writes F32
    for them, and for a file that mixes float types; a file all BF16 (or all F16) stays so.
  - With YaRN, max_position_embeddings is written as factor * original_max_position_embeddings
    when that is a whole number: some transformers releases take the factor from that ratio.
  - The exported num_key_value_heads may be larger than the checkpoint a file was converted from
    had, where the file's head counts need it (each KV group must read one K1, K2 and V head).
What is refused, naming what the target lacks: standard attention, DINT, Shared-DIFF (qk_rank >
0), token lambda (lambda_mode token_sigmoid), ffn_bias, an MLP the target does not have (PolyNorm
for diffllama, SwiGLU for motif), head_norm false or "group", v_head_dim other than 2 * head_dim,
rope "none" or a partial rope_dim, a lambda_init other than the target's formula (head_scale
"none" with lambda_init 1 too), and for diffllama a head_norm_eps other than norm_eps.

The chat template (metadata "chat") goes to tokenizer_config.json as a Jinja template that
renders what dintattn_chat_format writes (with the BOS token first when the model has one, and a
post-processor in tokenizer.json that puts BOS first as the engine does).  A tiktoken tokenizer
("type": "tiktoken") has no merge list to write as tokenizer.json and is left out, as is a BPE
tokenizer whose pieces Hugging Face would read differently.  Each omission is said on stderr.
Errors are one line on stderr ("export: ..."), exit 1; nothing is left in OUTDIR.
"""

import argparse
import base64
import json
import math
import os
import shutil
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
if HERE not in sys.path:
    sys.path.insert(0, HERE)

# --help works without numpy (a python3 that lacks it gets told which one to use instead)
try:
    import numpy as np
    import make_model       # tools/make_model.py: the engine's Q8 / Q4 dequantization
    import reference        # tools/reference.py: the config's defaults, docs/format.md section 2
    import safetensors_io   # tools/safetensors_io.py
    MISSING = None
except ImportError as e:
    MISSING = e

LAYOUTS = ("diffllama", "motif")
OUT_DTYPES = {"f32": "F32", "bf16": "BF16", "f16": "F16"}
TORCH_NAMES = {"F32": "float32", "BF16": "bfloat16", "F16": "float16"}
TITLE = {"diffllama": "DiffLlama", "motif": "Motif"}

# lambda_init values closer than this to the target's formula are the formula (a file stores it
# as JSON numbers, which round-trip Python floats exactly; this allows for other writers' last digit)
LAMBDA_INIT_TOL = 1e-9


class ExportError(Exception):
    """A file or option the exporter refuses; the message names the key or tensor and what to do."""


# ---------------------------------------------------------------------------------------------
# reading the dintattn file
# ---------------------------------------------------------------------------------------------

class Model:
    """A dintattn model file: its config with every default filled in (reference.resolve_config)
    and its tensors, read one at a time as float32, Q8 / Q4 matrices dequantized."""

    def __init__(self, path):
        self.path = path
        try:
            self.f = safetensors_io.File(path)
        except OSError as e:
            raise ExportError("%s: %s" % (path, e.strerror or e))
        except safetensors_io.SafetensorsError as e:
            raise ExportError("%s (give a dintattn model file)" % e)
        meta = self.f.metadata
        if meta.get("format") == "dintattn-tokenizer":
            raise ExportError("%s is a tokenizer-only file: it holds no model to export" % path)
        if meta.get("format") != "dintattn":
            raise ExportError("%s: __metadata__ \"format\" is %r, not \"dintattn\": this exports dintattn model "
                              "files (an HF checkpoint is already one; tools/convert.py turns it into a "
                              "dintattn file)" % (path, meta.get("format")))
        if meta.get("version") not in ("1", "1.1"):
            raise ExportError("%s: __metadata__ \"version\" %r is not \"1\" or \"1.1\" (a newer file than this "
                              "exporter reads)" % (path, meta.get("version")))
        try:
            raw = json.loads(meta.get("config", ""))
        except ValueError as e:
            raise ExportError("%s: __metadata__ \"config\" is not JSON: %s" % (path, e))
        if not isinstance(raw, dict):
            raise ExportError("%s: __metadata__ \"config\" is not a JSON object" % path)
        for key in ("dim", "n_layers", "vocab_size", "hidden_dim", "max_seq_len", "n_heads", "head_dim"):
            if not isinstance(raw.get(key), int) or isinstance(raw.get(key), bool) or raw[key] <= 0:
                raise ExportError("%s: config %r is %r, not a positive integer (docs/format.md section 2)"
                                  % (path, key, raw.get(key)))
        try:
            self.c = reference.resolve_config(raw, meta["version"])
        except (ValueError, KeyError, TypeError) as e:
            raise ExportError("%s: config: %s" % (path, e))
        self.tokenizer = meta.get("tokenizer")
        self.chat = meta.get("chat")
        self.used = set()

    def shape(self, name):
        """The weights' shape: a Q4 matrix stores two weights a byte."""
        s = self.f.shape(name)
        return (s[0], 2 * s[1]) if self.f.dtype(name) == "U8" and len(s) == 2 else s

    def need(self, name, *shapes):
        """Checks that tensor name exists with one of shapes; marks it (and its .scale) used."""
        if name not in self.f.entries:
            raise ExportError("%s: missing tensor '%s'" % (self.path, name))
        if self.shape(name) not in [tuple(s) for s in shapes]:
            raise ExportError("%s: tensor '%s' has shape %s, expected %s" % (
                self.path, name, list(self.shape(name)), " or ".join(str(list(s)) for s in shapes)))
        self.used.add(name)
        if self.f.dtype(name) in ("I8", "U8"):
            if name + ".scale" not in self.f.entries:
                raise ExportError("%s: quantized tensor '%s' has no '%s.scale'" % (self.path, name, name))
            self.used.add(name + ".scale")
        return self.shape(name)

    def get(self, name):
        dt = self.f.dtype(name)
        try:
            a = self.f.get(name)
            if dt == "I8":
                return make_model.dequantize_q8(a, self.f.get(name + ".scale"))
            if dt == "U8":
                return make_model.dequantize_q4(a, self.f.get(name + ".scale"))
        except safetensors_io.SafetensorsError as e:
            raise ExportError(str(e))
        if dt not in ("F32", "F16", "BF16"):
            raise ExportError("%s: tensor '%s' is %s, not a float or quantized weight" % (self.path, name, dt))
        return a.astype(np.float32, copy=False)

    def check_all_used(self):
        for name in self.f.names():
            if name not in self.used and not name.startswith("tokenizer."):
                raise ExportError("%s: tensor '%s' is not part of the model its config describes"
                                  % (self.path, name))

    def dtypes_read(self):
        """The stored types of the tensors need() accepted (I8 / U8 for Q8 / Q4 matrices)."""
        return {self.f.dtype(n) for n in self.used}


# ---------------------------------------------------------------------------------------------
# what the targets can express
# ---------------------------------------------------------------------------------------------

def target_lambda_init(layout, l):
    """lambda_init of layer l (0-based) as the target computes it: DiffLlama the depth formula,
    Motif the same formula one layer later (tools/layouts/motif.py)."""
    return make_model.lambda_init({"lambda_init": "depth"}, l if layout == "diffllama" else l - 1)


def refusal(c, layout):
    """Why the target cannot run model config c (with defaults), or None."""
    t = TITLE[layout]
    att = c["attention"]
    if att == "standard":
        return ("attention \"standard\" is not differential attention: the diffllama and motif layouts hold "
                "differential models only (a plain Llama export is not written)")
    if att == "dint":
        return ("DINT (attention \"dint\"): no other engine runs DINT's integral term (+ lambda * I, the causal "
                "column mean of A1); DiffLlama and Motif compute A1 - lambda * A2 only")
    if c["qk_rank"] > 0:
        return ("Shared-DIFF (qk_rank %d): no other engine runs queries and keys made of a shared base plus "
                "low-rank per-head factors; tools/make_model.py --merge-low-rank MODEL DENSE writes the same "
                "model with dense projections (from an F32/BF16 file), which exports" % c["qk_rank"])
    if c["lambda_mode"] != "reparam":
        return ("lambda_mode %r (a lambda per token and head): %s has only the per-layer lambda of lambda_q1, "
                "lambda_k1, lambda_q2 and lambda_k2" % (c["lambda_mode"], t))
    if c["ffn_bias"]:
        return "ffn_bias: %s's MLP has no biases (gate_proj, up_proj and down_proj are bias-free)" % t
    if layout == "diffllama" and c["ffn_act"] != "silu":
        return ("ffn_act %r: DiffLlama's MLP is SwiGLU (hidden_act silu), it has no PolyNorm; --layout motif "
                "runs PolyNorm" % c["ffn_act"])
    if layout == "motif" and c["ffn_act"] != "polynorm":
        return ("ffn_act %r: Motif's MLP is PolyNorm (hidden_act poly_norm), it has no SwiGLU; --layout "
                "diffllama runs SwiGLU" % c["ffn_act"])
    if not c["head_norm"]:
        return "head_norm false: %s always RMS-normalizes each head's output (it has no switch for it)" % t
    if c["head_norm_type"] != "rms":
        return ("head_norm_type %r: %s's head norm is an RMSNorm, it has no GroupNorm (mean and bias)"
                % (c["head_norm_type"], t))
    if c["v_head_dim"] != 2 * c["head_dim"]:
        return ("v_head_dim %d is not 2 * head_dim (%d): %s's value heads are two key-width heads side by side"
                % (c["v_head_dim"], 2 * c["head_dim"], t))
    if c["rope"] == "none":
        return "rope \"none\": %s always applies RoPE to queries and keys" % t
    if c["rope_dim"] != c["head_dim"]:
        return ("rope_dim %d of head_dim %d (partial RoPE): %s rotates every component of a head"
                % (c["rope_dim"], c["head_dim"], t))
    formula = "0.8 - 0.6 exp(-0.3 l)" if layout == "diffllama" else "0.8 - 0.6 exp(-0.3 (l - 1))"
    for l, v in enumerate(c["lambda_init_values"]):
        want = target_lambda_init(layout, l)
        if not abs(v - want) <= LAMBDA_INIT_TOL:
            return ("lambda_init %s: %s fixes lambda_init(l) = %s (layer %d: %.17g), the file has %.17g"
                    % (json.dumps(c["lambda_init"])[:60], t, formula, l, want, v))
        if c["head_scale"] == "none" and want == 1:
            return ("head_scale \"none\" with lambda_init 1 (layer %d): %s scales heads by 1 - lambda_init = 0"
                    % (l, t))
    if layout == "diffllama" and c["head_norm_eps"] != c["norm_eps"]:
        return ("head_norm_eps %g differs from norm_eps %g: DiffLlama normalizes heads with its one rms_norm_eps"
                % (c["head_norm_eps"], c["norm_eps"]))
    return None


def choose_layout(c, asked):
    if asked != "auto":
        return asked
    return "motif" if c["ffn_act"] == "polynorm" else "diffllama"


def lcm(*ns):
    out = 1
    for n in ns:
        out = out * n // math.gcd(out, n)
    return out


def hf_rope(c):
    """The file's RoPE -> HF config keys (tools/layouts/hf_rope.py read backwards)."""
    out = {"rope_theta": float(c["rope_theta"]), "rope_scaling": None}
    rs = c.get("rope_scaling")
    if rs is not None:
        hf = {"rope_type": rs["type"]}
        hf.update({k: v for k, v in rs.items() if k != "type"})
        out["rope_scaling"] = hf
    return out


def rope_perm(c):
    """Row order within a query / key head that turns the file's RoPE into the targets' halves:
    interleaved pair (2k, 2k+1) becomes halves pair (k, k + d/2); None when nothing moves."""
    if c["rope"] != "interleaved":
        return None
    d = c["head_dim"]
    return np.array(list(range(0, d, 2)) + list(range(1, d, 2)))


# ---------------------------------------------------------------------------------------------
# plans: [(HF tensor name, shape, loader)] and the HF config
# ---------------------------------------------------------------------------------------------

class Heads:
    """Head-blocked rows of one layer's projections, read from the model, rows of each query and
    key head permuted for RoPE."""

    def __init__(self, m, layer, perm):
        self.m, self.p, self.perm = m, "layers.%d.attn." % layer, perm
        self.c = m.c
        self.cache = {}

    def _w(self, key):
        if key not in self.cache:
            self.cache[key] = self.m.get(self.p + key)
        return self.cache[key]

    def qk(self, key, i):
        """Head i of wq1 / wk1 / wq2 / wk2 (wk2 is wk1 with shared_k)."""
        if key == "wk2" and self.c["shared_k"]:
            key = "wk1"
        d = self.c["head_dim"]
        h = self._w(key)[i * d:(i + 1) * d]
        return h if self.perm is None else h[self.perm]

    def v(self, i, half=None):
        dv = self.c["v_head_dim"]
        h = self._w("wv")[i * dv:(i + 1) * dv]
        return h if half is None else h[half * dv // 2:(half + 1) * dv // 2]


def index(i, n, H):
    """docs/format.md section 1's head index rule: signal head i of H reads head i * n // H of n."""
    return i * n // H


def head_columns(m, layer):
    """What the target's head norm cannot hold: head_norm.weight (shared [dv] or per head
    [H * dv]) and the scalar 1 / (1 - lambda_init) that head_scale "none" needs to undo the
    targets' (1 - lambda_init) -> (weight float64, scalar)."""
    c = m.c
    w = m.get("layers.%d.attn.head_norm.weight" % layer).astype(np.float64)
    s = 1.0 if c["head_scale"] == "one_minus_lambda_init" else 1.0 / (1.0 - c["lambda_init_values"][layer])
    return w, s


def check_tensors(m):
    """Every tensor the config calls for, with its shape, and no other (besides the tokenizer's)."""
    c = m.c
    D, V, F, L = c["dim"], c["vocab_size"], c["hidden_dim"], c["n_layers"]
    H, d, dv = c["n_heads"], c["head_dim"], c["v_head_dim"]
    m.need("tok_embeddings.weight", (V, D))
    m.need("norm.weight", (D,))
    if not c["tie_embeddings"]:
        m.need("output.weight", (V, D))
    for l in range(L):
        p = "layers.%d." % l
        m.need(p + "attn_norm.weight", (D,))
        m.need(p + "ffn_norm.weight", (D,))
        m.need(p + "attn.wq1", (H * d, D))
        m.need(p + "attn.wk1", (c["n_k1_heads"] * d, D))
        m.need(p + "attn.wq2", (c["n_q2_heads"] * d, D))
        if not c["shared_k"]:
            m.need(p + "attn.wk2", (c["n_k2_heads"] * d, D))
        m.need(p + "attn.wv", (c["n_v_heads"] * dv, D))
        m.need(p + "attn.wo", (D, H * dv))
        for lam in ("lambda_q1", "lambda_k1", "lambda_q2", "lambda_k2"):
            m.need(p + "attn." + lam, (d,))
        m.need(p + "attn.head_norm.weight", (dv,), (H * dv,))
        m.need(p + "ffn.w_gate", (F, D))
        m.need(p + "ffn.w_up", (F, D))
        m.need(p + "ffn.w_down", (D, F))
        if c["ffn_act"] == "polynorm":
            m.need(p + "ffn.act_weight", (3,))
            m.need(p + "ffn.act_bias", (1,))
    m.check_all_used()


def plan(m, layout):
    """-> (HF config dict, [(name, shape, loader)], notes)."""
    c = m.c
    D, V, F, L = c["dim"], c["vocab_size"], c["hidden_dim"], c["n_layers"]
    H, d, dv = c["n_heads"], c["head_dim"], c["v_head_dim"]
    n_k1, n_q2, n_k2, n_v = c["n_k1_heads"], c["n_q2_heads"], c["n_k2_heads"], c["n_v_heads"]
    check_tensors(m)
    perm = rope_perm(c)
    notes = []
    # KV groups: the fewest key-value groups in which every signal head of a group reads the same
    # K1, K2 and V heads of the file (each count divides H, so their lcm does)
    KV = lcm(n_k1, n_k2, n_v)
    # Motif's noise heads: a noise head serves whole KV groups, so there are lcm(n_q2, KV) of them,
    # each with G signal heads (N = H is Motif's plain DIFF layout, one noise head per signal head)
    N = lcm(n_q2, KV)
    G = H // N
    out = []

    def whole(name):
        return lambda: m.get(name)

    out.append(("model.embed_tokens.weight", (V, D), whole("tok_embeddings.weight")))
    for l in range(L):
        p, hp = "layers.%d." % l, "model.layers.%d." % l
        a = hp + "self_attn."
        out.append((hp + "input_layernorm.weight", (D,), whole(p + "attn_norm.weight")))
        if layout == "diffllama":
            # q heads 0..H-1 are Q1, H..2H-1 the Q2 of signal head m; KV heads 0..KV-1 are K1 and the
            # first halves of V, KV..2KV-1 K2 and the second halves (signal m reads KV head m // (H/KV)
            # and m // (H/KV) + KV: tools/layouts/diffllama.py)
            def q(l=l):
                h = Heads(m, l, perm)
                return np.concatenate([h.qk("wq1", i) for i in range(H)] +
                                      [h.qk("wq2", index(i, n_q2, H)) for i in range(H)])

            def k(l=l):
                h = Heads(m, l, perm)
                return np.concatenate([h.qk("wk1", index(g, n_k1, KV)) for g in range(KV)] +
                                      [h.qk("wk2", index(g, n_k2, KV)) for g in range(KV)])

            def v(l=l):
                h = Heads(m, l, None)
                return np.concatenate([h.v(index(g, n_v, KV), 0) for g in range(KV)] +
                                      [h.v(index(g, n_v, KV), 1) for g in range(KV)])
            q_rows, kv_rows = 2 * H * d, 2 * KV * d
        else:
            def q(l=l):
                h = Heads(m, l, perm)
                rows = []
                for g in range(N):   # G signal heads, then their noise head
                    rows += [h.qk("wq1", g * G + t) for t in range(G)]
                    rows.append(h.qk("wq2", index(g, n_q2, N)))
                return np.concatenate(rows)

            def k(l=l):
                h = Heads(m, l, perm)
                rows = []
                for g in range(KV):   # (k1, k2) of each KV group
                    rows += [h.qk("wk1", index(g, n_k1, KV)), h.qk("wk2", index(g, n_k2, KV))]
                return np.concatenate(rows)

            def v(l=l):
                h = Heads(m, l, None)
                return np.concatenate([h.v(index(g, n_v, KV)) for g in range(KV)])
            q_rows, kv_rows = (H + N) * d, 2 * KV * d
        out.append((a + "q_proj.weight", (q_rows, D), q))
        out.append((a + "k_proj.weight", (kv_rows, D), k))
        out.append((a + "v_proj.weight", (kv_rows, D), v))

        def o(l=l, p=p):
            wo = m.get(p + "attn.wo")
            w, s = head_columns(m, l)
            if layout == "motif" and w.size == dv:
                return wo                # a shared weight and the scalar go to subln
            cols = np.tile(w, H * dv // w.size) * s
            if np.all(cols == 1):
                return wo                # nothing to fold: the tensor as it is, bit for bit
            return (wo.astype(np.float64) * cols[None, :]).astype(np.float32)
        out.append((a + "o_proj.weight", (D, H * dv), o))
        for lam in ("lambda_q1", "lambda_k1", "lambda_q2", "lambda_k2"):
            out.append((a + lam, (d,), whole(p + "attn." + lam)))
        if layout == "motif":
            def subln(l=l, p=p):
                w, s = head_columns(m, l)
                if w.size != dv:
                    return np.ones(dv, np.float32)   # per-head weights went to o_proj
                return m.get(p + "attn.head_norm.weight") if s == 1 else (w * s).astype(np.float32)
            out.append((a + "subln.weight", (dv,), subln))
        out.append((hp + "post_attention_layernorm.weight", (D,), whole(p + "ffn_norm.weight")))
        out.append((hp + "mlp.gate_proj.weight", (F, D), whole(p + "ffn.w_gate")))
        out.append((hp + "mlp.up_proj.weight", (F, D), whole(p + "ffn.w_up")))
        out.append((hp + "mlp.down_proj.weight", (D, F), whole(p + "ffn.w_down")))
        if layout == "motif":
            out.append((hp + "mlp.act_fn.weight", (3,), whole(p + "ffn.act_weight")))
            out.append((hp + "mlp.act_fn.bias", (1,), whole(p + "ffn.act_bias")))
    out.append(("model.norm.weight", (D,), whole("norm.weight")))
    if not c["tie_embeddings"]:
        out.append(("lm_head.weight", (V, D), whole("output.weight")))

    common = {"hidden_size": D, "intermediate_size": F, "num_hidden_layers": L, "head_dim": d,
              "vocab_size": V, "max_position_embeddings": int(c["max_seq_len"]),
              "rms_norm_eps": float(c["norm_eps"]), "tie_word_embeddings": bool(c["tie_embeddings"])}
    common.update(hf_rope(c))
    rs = c.get("rope_scaling")
    if rs is not None and rs["type"] == "yarn":
        # some transformers releases take YaRN's factor as max_position_embeddings divided by
        # original_max_position_embeddings, not from rope_scaling: make the two agree
        implied = rs["factor"] * rs["original_max_position_embeddings"]
        if implied == int(implied) and implied != c["max_seq_len"]:
            common["max_position_embeddings"] = int(implied)
            notes.append("yarn: max_position_embeddings is factor * original_max_position_embeddings = %d (the "
                         "file's max_seq_len is %d), as transformers versions that derive the factor from it need"
                         % (implied, c["max_seq_len"]))
        elif implied != c["max_seq_len"]:
            notes.append("yarn: factor * original_max_position_embeddings = %g is not a whole context; transformers "
                         "versions that derive the factor from max_position_embeddings (%d) compute another RoPE"
                         % (implied, c["max_seq_len"]))
    if layout == "diffllama":
        cfg = {"architectures": ["DiffLlamaForCausalLM"], "model_type": "diffllama",
               "num_attention_heads": 2 * H, "num_key_value_heads": 2 * KV, "hidden_act": "silu",
               "attention_bias": False, "attention_dropout": 0.0, "lambda_std_dev": 0.1,
               "initializer_range": 0.02, "use_cache": True}
        if n_q2 < H:
            notes.append("DiffLlama has no grouped noise heads: each of the %d noise queries is repeated for its "
                         "%d signal heads (%d query heads in q_proj; --layout motif keeps them grouped when the "
                         "MLP is PolyNorm)" % (n_q2, H // n_q2, 2 * H))
    else:
        cfg = {"architectures": ["MotifForCausalLM"], "model_type": "motif",
               "num_attention_heads": H + N, "num_key_value_heads": 2 * KV, "hidden_act": "poly_norm",
               "attn_rms_norm_eps": float(c["head_norm_eps"]), "use_bias": False, "scale_emb": 1,
               "initializer_range": 0.02, "use_cache": True}
        if N < H:
            cfg.update({"num_noise_heads": N, "k_ratio": 1})
        if N > n_q2:
            notes.append("Motif's noise heads serve whole key-value groups: each of the %d noise queries is "
                         "repeated %d times (%d noise heads%s)" % (n_q2, N // n_q2, N,
                                                                   ", one per signal head: Motif's DIFF layout"
                                                                   if N == H else ""))
    cfg.update(common)
    if perm is not None:
        notes.append("RoPE interleaved -> halves: the rows of each query and key head reordered (exact)")
    return cfg, out, notes


# ---------------------------------------------------------------------------------------------
# tokenizer.json (tools/convert.py's hf_tokenizer_to_bpe read backwards)
# ---------------------------------------------------------------------------------------------

def _tok_tensor(m, name):
    if name not in m.f.entries:
        return None
    return bytes(m.f.get(name).astype(np.uint8).tobytes())


def bytes_to_unicode():
    import convert   # tools/convert.py: GPT-2's byte -> character table, one home
    return convert.bytes_to_unicode()


def _regex_ok(rx):
    """A stored Split regex means the same to Oniguruma (HF tokenizers) when convert.py would
    store it unchanged (it rewrites tiktoken's possessive x{n,m}+)."""
    import convert
    try:
        return convert.oniguruma_regex(rx) == rx
    except Exception:   # convert's regex reader raises ConvertError on what it cannot read
        return False


def model_tokenizer(m):
    """The model's tokenizer as Hugging Face files: tokenizer_files() of its metadata and tensors."""
    if m.tokenizer is None:
        return None, None
    try:
        t = json.loads(m.tokenizer)
    except ValueError:
        return None, "its \"tokenizer\" metadata is not JSON"
    if t.get("type") != "bpe":
        return None, ("a %s tokenizer has no merge list for tokenizer.json (a tiktoken rank file converts with "
                      "tools/convert.py --tokenizer, or use the model's original tokenizer.json)" % t.get("type"))
    ranks = _tok_tensor(m, "tokenizer.ranks")
    if ranks is None:
        return None, "no tensor tokenizer.ranks"
    return tokenizer_files(t, ranks, _tok_tensor(m, "tokenizer.merges") or b"", int(m.c["max_seq_len"]))


def tokenizer_files(t, ranks, merges, max_seq_len):
    """A "bpe" tokenizer (docs/format.md section 5: metadata dict t, the bytes of tokenizer.ranks
    and tokenizer.merges) -> ((tokenizer.json dict, tokenizer_config.json dict, config.json's
    bos/eos ids), None), or (None, why it cannot be written)."""
    byte_level = bool(t.get("byte_level"))
    u = bytes_to_unicode() if byte_level else None
    added = {a["id"]: a for a in t.get("added_tokens") or []}
    text = {}
    for line in ranks.decode("ascii").splitlines():
        if not line.strip():
            continue
        b64, i = line.split()
        i, bts = int(i), base64.b64decode(b64)
        if i in added:
            text[i] = added[i]["content"]
        elif byte_level:
            text[i] = "".join(u[b] for b in bts)
        else:
            try:
                text[i] = bts.decode("utf-8")
            except UnicodeDecodeError:
                return None, "token %d is not UTF-8 text (a non-byte-level vocabulary)" % i
    vocab = {s: i for i, s in sorted(text.items())}
    if len(vocab) != len(text):
        return None, "two token ids have the same text"
    pairs = []
    for line in merges.decode("ascii").splitlines():
        if line.strip():
            a, b = (int(x) for x in line.split())
            pairs.append([text[a], text[b]])
    norm = []
    for s in t.get("normalizer") or []:
        if s == "nfc":
            norm.append({"type": "NFC"})
        elif "prepend" in s:
            norm.append({"type": "Prepend", "prepend": s["prepend"]})
        elif "replace" in s:
            norm.append({"type": "Replace", "pattern": {"String": s["replace"][0]}, "content": s["replace"][1]})
        else:
            return None, "normalizer step %r" % (s,)
    pre = []
    for s in t.get("pre_tokenizer") or []:
        if s in ({"regex": "\\p{N}"}, {"regex": "\\p{N}+"}):   # how convert.py writes HF's Digits
            pre.append({"type": "Digits", "individual_digits": s["regex"] == "\\p{N}"})
        elif isinstance(s, str) or "regex" in s:
            rx, behavior, invert = (s, "Isolated", False) if isinstance(s, str) else \
                (s["regex"], s.get("behavior", "Isolated"), s.get("invert", False))
            if not isinstance(rx, str) or not _regex_ok(rx):
                return None, "the split regex %r reads differently in Hugging Face tokenizers" % (rx,)
            pre.append({"type": "Split", "pattern": {"Regex": rx}, "behavior": behavior, "invert": invert})
        elif "byte_level" in s:
            pre.append(dict({"type": "ByteLevel", "trim_offsets": True}, **s["byte_level"]))
        elif "metaspace" in s:
            pre.append({"type": "Metaspace", "replacement": s["metaspace"],
                        "prepend_scheme": s.get("prepend_scheme", "always"), "split": s.get("split", True)})
        else:
            return None, "pre-tokenizer step %r" % (s,)
    dec = [{"type": "ByteLevel", "add_prefix_space": True, "trim_offsets": True, "use_regex": True}] \
        if byte_level else []
    for s in t.get("decoder") or []:
        if s == "byte_fallback":
            dec.append({"type": "ByteFallback"})
        elif s == "fuse":
            dec.append({"type": "Fuse"})
        elif "replace" in s:
            dec.append({"type": "Replace", "pattern": {"String": s["replace"][0]}, "content": s["replace"][1]})
        elif "strip" in s:
            dec.append({"type": "Strip", "content": s["strip"][0], "start": s["strip"][1], "stop": s["strip"][2]})
        elif "metaspace" in s:
            dec.append({"type": "Metaspace", "replacement": s["metaspace"], "prepend_scheme": "always",
                        "split": True})
        else:
            return None, "decoder step %r" % (s,)

    def seq(steps, key):
        if not steps:
            return None
        return steps[0] if len(steps) == 1 else {"type": "Sequence", key: steps}
    unk = t.get("unk_id", -1)
    tj = {"version": "1.0", "truncation": None, "padding": None,
          "added_tokens": [{k: a[k] for k in ("id", "content", "single_word", "lstrip", "rstrip", "normalized",
                                                "special")} for a in t.get("added_tokens") or []],
          "normalizer": seq(norm, "normalizers"), "pre_tokenizer": seq(pre, "pretokenizers"),
          "post_processor": None, "decoder": seq(dec, "decoders"),
          "model": {"type": "BPE", "dropout": None, "unk_token": text.get(unk) if unk >= 0 else None,
                    "continuing_subword_prefix": None, "end_of_word_suffix": None,
                    "fuse_unk": bool(t.get("fuse_unk")), "byte_fallback": bool(t.get("byte_fallback")),
                    "ignore_merges": bool(t.get("ignore_merges")), "vocab": vocab, "merges": pairs}}
    ids = {}
    every = dict(text)
    every.update({i: a["content"] for i, a in added.items()})
    tc = {"tokenizer_class": "PreTrainedTokenizerFast", "clean_up_tokenization_spaces": False,
          "model_max_length": max_seq_len}
    bos = t.get("bos_id", -1)
    eos = t.get("eos_ids") or ([t["eos_id"]] if t.get("eos_id", -1) >= 0 else [])
    if bos >= 0:
        ids["bos_token_id"] = bos
        if bos in every:
            tc["bos_token"] = every[bos]
            # the engine puts BOS first (dintattn_tokenizer_encode_prompt); HF does when the
            # post-processor says so (convert.py does not read it back: the file's bos_id does it)
            b = every[bos]
            tj["post_processor"] = {
                "type": "TemplateProcessing",
                "single": [{"SpecialToken": {"id": b, "type_id": 0}}, {"Sequence": {"id": "A", "type_id": 0}}],
                "pair": [{"SpecialToken": {"id": b, "type_id": 0}}, {"Sequence": {"id": "A", "type_id": 0}},
                         {"SpecialToken": {"id": b, "type_id": 1}}, {"Sequence": {"id": "B", "type_id": 1}}],
                "special_tokens": {b: {"id": b, "ids": [bos], "tokens": [b]}}}
    if eos:
        ids["eos_token_id"] = eos[0] if len(eos) == 1 else eos
        if eos[0] in every:
            tc["eos_token"] = every[eos[0]]
    return (tj, tc, ids), None


def chat_template(chat, bos):
    """The file's chat metadata (docs/format.md section 6) as a Jinja chat template that renders,
    as transformers renders templates, what dintattn_chat_format writes, after {{ bos_token }}
    when the model has a BOS (the engine puts it first; an HF chat prompt is tokenized without
    special tokens).  -> (template text, None) or (None, why not)."""
    roles = chat.get("roles") or {}
    if "default_system" in chat and "system" not in roles:
        return None, "a default system message without a system role"

    def lit(v):   # a Jinja literal: JSON strings, lists and objects are Jinja's too
        return json.dumps(v, ensure_ascii=False)
    last = chat.get("last") or {}
    parts = ["{%- set roles = " + lit(roles) + " -%}", "{%- set last = " + lit(last) + " -%}"]
    if bos:
        parts.append("{{- bos_token -}}")
    if chat.get("begin"):
        parts.append("{{- " + lit(chat["begin"]) + " -}}")
    if "default_system" in chat:
        parts.append("{%- if not messages or messages[0]['role'] != 'system' -%}"
                     "{{- roles['system'][0] + " + lit(chat["default_system"]) + " + roles['system'][1] -}}"
                     "{%- endif -%}")
    parts.append("{%- for m in messages -%}"
                 "{%- if m['role'] not in roles -%}"
                 "{{- raise_exception('this chat template has no role ' + m['role']) -}}{%- endif -%}"
                 "{%- set r = last[m['role']] if loop.last and m['role'] in last and "
                 "(last[m['role']]|length < 3 or last[m['role']][2] not in m['content']) else roles[m['role']] -%}"
                 "{{- r[0] + m['content'] + r[1] -}}"
                 "{%- endfor -%}")
    gen = lit(chat.get("generation_prompt", ""))
    parts.append("{{- " + gen + " -}}" if chat.get("prompt_always") else
                 "{%- if add_generation_prompt -%}{{- " + gen + " -}}{%- endif -%}")
    return "".join(parts), None


# ---------------------------------------------------------------------------------------------
# writing
# ---------------------------------------------------------------------------------------------

CHUNK = 1 << 22   # elements checked and encoded at a time


def write_weights(path, tensors, st_dtype, source):
    """Header first, then tensor by tensor: memory stays near the largest tensor."""
    head = safetensors_io.header_bytes([(n, st_dtype, s) for n, s, _ in tensors], {"format": "pt"})
    with open(path, "wb") as f:
        f.write(head)
        for name, shape, loader in tensors:
            arr = np.asarray(loader())
            if tuple(arr.shape) != tuple(shape):
                raise ExportError("internal: tensor '%s' came out %s, planned %s" % (name, arr.shape, shape))
            flat = arr.reshape(-1)
            for i in range(0, flat.size, CHUNK):
                chunk = flat[i:i + CHUNK].astype(np.float32, copy=False)
                if not np.all(np.isfinite(chunk)):
                    raise ExportError("%s: the weights of '%s' hold NaN or Inf: the model is broken, there is "
                                      "nothing to export" % (source, name))
                if st_dtype == "F16" and chunk.size and float(np.max(np.abs(chunk))) > 65504:
                    raise ExportError("tensor '%s' has values beyond f16's range; use --dtype bf16 or f32" % name)
                f.write(safetensors_io.encode(st_dtype, chunk))


def export(args):
    """-> (layout, output dtype, notes)."""
    m = Model(args.model)
    layout = choose_layout(m.c, args.layout)
    why = refusal(m.c, layout)
    if why:
        raise ExportError("%s: cannot export to the %s layout: %s" % (args.model, layout, why))
    cfg, tensors, notes = plan(m, layout)
    if args.dtype == "auto":
        kinds = m.dtypes_read()
        st_dtype = kinds.pop() if len(kinds) == 1 and next(iter(kinds)) in ("BF16", "F16") else "F32"
    else:
        st_dtype = OUT_DTYPES[args.dtype]
    if m.dtypes_read() & {"I8", "U8"}:
        notes.append("Q8/Q4 weight matrices dequantized to %s%s" % (
            st_dtype, "" if st_dtype == "F32" else " (rounded: F32 holds them exactly)"))
    cfg["torch_dtype"] = TORCH_NAMES[st_dtype]
    tok = None
    if not args.no_tokenizer:
        tok, why = model_tokenizer(m)
        if why:
            notes.append("tokenizer not written: " + why)
        elif tok is not None:
            cfg.update(tok[2])
    if m.chat is not None and tok is None:
        notes.append("chat template not written: it goes to tokenizer_config.json, which comes with tokenizer.json")
    elif m.chat is not None:
        try:
            text, why = chat_template(json.loads(m.chat), "bos_token" in tok[1])
        except (ValueError, AttributeError, TypeError) as e:
            text, why = None, "its \"chat\" metadata is malformed (%s)" % e
        if why:
            notes.append("chat template not written: " + why)
        else:
            tok[1]["chat_template"] = text

    out = args.outdir
    if os.path.exists(out) and (not os.path.isdir(out) or os.listdir(out)):
        raise ExportError("%s exists and is not an empty directory; give a new one" % out)
    made = not os.path.exists(out)
    try:
        os.makedirs(out, exist_ok=True)
        write_weights(os.path.join(out, "model.safetensors"), tensors, st_dtype, args.model)
        with open(os.path.join(out, "config.json"), "w") as f:
            json.dump(cfg, f, indent=2)
            f.write("\n")
        if tok is not None:
            with open(os.path.join(out, "tokenizer.json"), "w", encoding="utf-8") as f:
                json.dump(tok[0], f, ensure_ascii=False)
            with open(os.path.join(out, "tokenizer_config.json"), "w", encoding="utf-8") as f:
                json.dump(tok[1], f, ensure_ascii=False, indent=2)
                f.write("\n")
    except BaseException:
        if made:
            shutil.rmtree(out, ignore_errors=True)
        else:
            for name in os.listdir(out):
                os.unlink(os.path.join(out, name))
        raise
    return layout, st_dtype, notes


def build_parser():
    ap = argparse.ArgumentParser(prog="tools/export.py", description=__doc__.split("\n\n")[0],
                                 epilog=__doc__.split("\n\n", 2)[2],
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("model", help="the dintattn model file (.safetensors) to export")
    ap.add_argument("outdir", help="the Hugging Face directory to write (new, or empty)")
    ap.add_argument("--layout", default="auto", choices=("auto",) + LAYOUTS,
                    help="the target (default auto: motif for a PolyNorm MLP, diffllama for SwiGLU)")
    ap.add_argument("--dtype", default="auto", choices=("auto",) + tuple(OUT_DTYPES),
                    help="weight type to write (default auto: the file's BF16 or F16 when all its tensors "
                         "are, else f32)")
    ap.add_argument("--no-tokenizer", action="store_true", help="write no tokenizer.json")
    return ap


def main(argv=None):
    args = build_parser().parse_args(argv)
    if MISSING is not None:
        sys.stderr.write("export: %s: run it with Debian's /usr/bin/python3 (python3-numpy)\n" % MISSING)
        return 1
    try:
        layout, st_dtype, notes = export(args)
    except ExportError as e:
        sys.stderr.write("export: %s\n" % e)
        return 1
    except OSError as e:
        sys.stderr.write("export: %s: %s\n" % (getattr(e, "filename", None) or args.outdir, e.strerror or e))
        return 1
    except MemoryError:
        sys.stderr.write("export: out of memory\n")
        return 1
    for n in notes:
        sys.stderr.write("export: note: %s\n" % n)
    sys.stderr.write("export: %s -> %s (%s layout, %s)\n" % (args.model, args.outdir, layout, st_dtype))
    return 0


if __name__ == "__main__":
    sys.exit(main())
