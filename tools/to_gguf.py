#!/usr/bin/env python3
"""Write a dintattn *standard-attention* model as a GGUF file for llama.cpp's "llama" architecture,
so the same model shapes (and the same weights) can be run side by side with llama.cpp
(llama-bench, llama-perplexity, ...).

    PYTHONPATH=/path/to/llama.cpp/gguf-py python3 tools/to_gguf.py MODEL.safetensors OUT.gguf \
        [--type f32|f16|bf16]

Needs numpy and llama.cpp's own gguf-py package (on PYTHONPATH); it reads the dintattn file through
tools/reference.py (F32/F16/BF16/F64, and Q8 / Q4 matrices dequantized); make llama.cpp's own
Q8_0 / Q4_0 from the F32 GGUF with llama-quantize.

What is written:
  * hyperparameters: context length (max_seq_len), embedding length (dim), block count, feed-forward
    length (hidden_dim), head count, head count kv (n_k1_heads), key/value length (head_dim),
    rope freq base (rope_theta), RMS norm epsilon (norm_eps), rope dimension count (rope_dim);
  * a dummy SentencePiece-style ("llama") tokenizer of vocab_size tokens -- <unk>, <s>, </s>, the
    256 byte tokens <0x00>..<0xFF>, then "<tN>" -- so that llama.cpp loads the model and can
    tokenize any text (the ids mean nothing: this is for timing, not for reading the output);
  * the tensors, renamed to llama.cpp's names, in F32, F16 or BF16 (1-D norm weights stay F32,
    as llama.cpp's convert_hf_to_gguf.py does).

RoPE: llama.cpp's "llama" architecture rotates pairs (2k, 2k+1) of each head (dintattn's
"interleaved"). A model with rope "halves" (pairs (k, k + r/2), Hugging Face's rotate_half) gets the
rows of wq1 and wk1 permuted within each head, exactly as convert_hf_to_gguf.py permutes HF Llama's
q_proj / k_proj, which makes llama.cpp compute the same attention scores. With that, the standard
model's math is the same as dintattn's (RMSNorm x/sqrt(mean(x^2)+eps)*w, softmax(q.k/sqrt(d)),
SwiGLU FFN, untied or tied LM head), so logits agree up to floating-point rounding: checked on
/tmp/bm/bench-standard.safetensors (rope "halves"), 12 positions, F32 GGUF against tools/reference.py:
max |logit diff| 6.8e-6 with llama.cpp's KV cache in F32, 6.8e-3 with its default F16 KV cache,
argmax equal everywhere (without the permutation the logits differ by up to 4.2).

Refused (llama.cpp's "llama" graph cannot express them): attention other than "standard", rope
"none" or rope_scaling, n_v_heads != n_k1_heads, head_norm, ffn_act other than silu, ffn_bias,
Shared-DIFF factors (qk_rank > 0).
"""

import json
import os
import sys

import numpy as np

try:
    import sentencepiece  # noqa: F401  (gguf-py's vocab.py imports it at the top; unused here)
except ImportError:
    import types
    _sp = types.ModuleType("sentencepiece")
    _sp.SentencePieceProcessor = None
    sys.modules["sentencepiece"] = _sp

try:
    import gguf  # llama.cpp's gguf-py
except ImportError:
    gguf = None   # --help works without it; a conversion says where to get it


# --type -> gguf's LlamaFileType and GGMLQuantizationType member names
FILE_TYPES = {"f32": ("ALL_F32", "F32"), "f16": ("MOSTLY_F16", "F16"), "bf16": ("MOSTLY_BF16", "BF16")}


sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import cli  # noqa: E402
import safetensors_io  # noqa: E402
import reference  # noqa: E402  (tools/reference.py: reads and resolves a dintattn file, dequantizing Q8 / Q4)


class _Lazy(dict):
    """{name: float32 array}, each tensor read from the file when asked for (a 2.7B model's float64
    copy would not fit in memory)."""

    def __init__(self, f):
        super().__init__()
        self.f = f

    def __missing__(self, name):
        return np.asarray(self.f.get(name), dtype=np.float32)


def load(path):
    """-> (the resolved config, {name: float32 array}) as tools/reference.py reads the file: F32,
    F16 and BF16 files tensor by tensor, files with Q8 / Q4 matrices dequantized all at once."""
    f = safetensors_io.File(path)
    if any(f.dtype(k) not in ("F32", "F16", "BF16") for k in f.names()):
        cfg, t = reference.load(path)
        return cfg, {k: np.asarray(v, dtype=np.float32) for k, v in t.items()}
    meta = f.metadata
    if meta.get("format") != "dintattn" or meta.get("version") not in ("1", "1.1"):
        sys.exit(f"to_gguf.py: {path}: not a dintattn v1 / v1.1 file")
    return reference.resolve_config(json.loads(meta["config"]), meta["version"]), _Lazy(f)


def check_supported(cfg):
    why = []
    if cfg["attention"] != "standard":
        why.append(f"attention {cfg['attention']!r} (llama.cpp has standard attention only)")
    if cfg["rope"] not in ("interleaved", "halves"):
        why.append(f"rope {cfg['rope']!r}")
    if cfg.get("rope_scaling_values"):
        why.append("rope_scaling")
    if cfg["n_v_heads"] != cfg["n_k1_heads"]:
        why.append(f"n_v_heads {cfg['n_v_heads']} != n_k1_heads {cfg['n_k1_heads']}")
    if cfg["v_head_dim"] != cfg["head_dim"]:
        why.append(f"v_head_dim {cfg['v_head_dim']} != head_dim {cfg['head_dim']}")
    if cfg["head_norm"]:
        why.append("head_norm")
    if cfg["ffn_act"] != "silu":
        why.append(f"ffn_act {cfg['ffn_act']!r}")
    if cfg.get("ffn_bias"):
        why.append("ffn_bias")
    if cfg["qk_rank"]:
        why.append(f"qk_rank {cfg['qk_rank']}")
    if why:
        sys.exit("to_gguf.py: llama.cpp's llama architecture cannot run this model: " + "; ".join(why))


def halves_to_interleaved(w, n_heads, head_dim, rope_dim):
    """Permute the rows of a Q or K projection [n_heads*head_dim, D] within each head so that the
    "halves" pair (k, k + r/2) lands on rows (2k, 2k+1); rows r..head_dim-1 stay. For r = head_dim
    this is convert_hf_to_gguf.py's LlamaModel.permute."""
    r = rope_dim
    perm = []
    for k in range(r // 2):
        perm += [k, k + r // 2]
    perm += list(range(r, head_dim))
    perm = np.asarray(perm)
    return w.reshape(n_heads, head_dim, -1)[:, perm, :].reshape(w.shape)


def dummy_vocab(n):
    if n < 3 + 256 + 1:
        sys.exit(f"to_gguf.py: vocab_size {n} too small for the dummy tokenizer (needs >= 260)")
    tokens = ["<unk>", "<s>", "</s>"] + [f"<0x{b:02X}>" for b in range(256)]
    types = ([gguf.TokenType.UNKNOWN, gguf.TokenType.CONTROL, gguf.TokenType.CONTROL]
             + [gguf.TokenType.BYTE] * 256)
    tokens += [f"<t{i}>" for i in range(len(tokens), n)]
    types += [gguf.TokenType.NORMAL] * (n - len(types))
    scores = [0.0] * 3 + [0.0] * 256 + [-float(i) for i in range(n - 259)]
    return tokens, scores, types


def convert(src, dst, kind):
    cfg, t = load(src)
    check_supported(cfg)
    ftype, qtype = (getattr(gguf.LlamaFileType, FILE_TYPES[kind][0]),
                    getattr(gguf.GGMLQuantizationType, FILE_TYPES[kind][1]))
    D, L, H, d = cfg["dim"], cfg["n_layers"], cfg["n_heads"], cfg["head_dim"]
    Hkv, V = cfg["n_k1_heads"], cfg["vocab_size"]

    w = gguf.GGUFWriter(dst, "llama")
    w.add_name(os.path.splitext(os.path.basename(src))[0])
    w.add_context_length(cfg["max_seq_len"])
    w.add_embedding_length(D)
    w.add_block_count(L)
    w.add_feed_forward_length(cfg["hidden_dim"])
    w.add_head_count(H)
    w.add_head_count_kv(Hkv)
    w.add_key_length(d)
    w.add_value_length(cfg["v_head_dim"])
    w.add_rope_dimension_count(cfg["rope_dim"])
    w.add_rope_freq_base(float(cfg["rope_theta"]))
    w.add_layer_norm_rms_eps(float(cfg["norm_eps"]))
    w.add_vocab_size(V)
    w.add_file_type(ftype)

    tokens, scores, types = dummy_vocab(V)
    w.add_tokenizer_model("llama")
    w.add_token_list(tokens)
    w.add_token_scores(scores)
    w.add_token_types(types)
    w.add_unk_token_id(0)
    w.add_bos_token_id(1)
    w.add_eos_token_id(2)
    w.add_add_bos_token(True)
    w.add_add_eos_token(False)

    def put(name, arr):
        arr = np.ascontiguousarray(arr, dtype=np.float32)
        if arr.ndim == 1 or qtype == gguf.GGMLQuantizationType.F32:
            w.add_tensor(name, arr)
        elif qtype == gguf.GGMLQuantizationType.F16:
            w.add_tensor(name, arr.astype(np.float16))
        else:
            w.add_tensor(name, gguf.quants.quantize(arr, qtype), raw_dtype=qtype)

    permute = cfg["rope"] == "halves"
    put("token_embd.weight", t["tok_embeddings.weight"])
    for l in range(L):
        p, b = f"layers.{l}.", f"blk.{l}."
        wq, wk = t[p + "attn.wq1"], t[p + "attn.wk1"]
        if permute:
            wq = halves_to_interleaved(wq, H, d, cfg["rope_dim"])
            wk = halves_to_interleaved(wk, Hkv, d, cfg["rope_dim"])
        put(b + "attn_norm.weight", t[p + "attn_norm.weight"])
        put(b + "attn_q.weight", wq)
        put(b + "attn_k.weight", wk)
        put(b + "attn_v.weight", t[p + "attn.wv"])
        put(b + "attn_output.weight", t[p + "attn.wo"])
        put(b + "ffn_norm.weight", t[p + "ffn_norm.weight"])
        put(b + "ffn_gate.weight", t[p + "ffn.w_gate"])
        put(b + "ffn_up.weight", t[p + "ffn.w_up"])
        put(b + "ffn_down.weight", t[p + "ffn.w_down"])
    put("output_norm.weight", t["norm.weight"])
    if not cfg["tie_embeddings"]:          # tied: llama.cpp falls back to token_embd.weight
        put("output.weight", t["output.weight"])

    w.write_header_to_file()
    w.write_kv_data_to_file()
    w.write_tensors_to_file()
    w.close()


def main(argv=None):
    ap = cli.parser(__doc__, ["PYTHONPATH=$HOME/llama.cpp/gguf-py /usr/bin/python3 tools/to_gguf.py "
                              "bench-standard.safetensors bench-standard.gguf --type f16"], full=True)
    ap.add_argument("src", help="dintattn .safetensors (standard attention)")
    ap.add_argument("dst", help="output .gguf")
    ap.add_argument("--type", choices=sorted(FILE_TYPES), default="f32",
                    help="weight matrices' type (1-D norms stay F32)")
    a = ap.parse_args(argv)
    if gguf is None:
        sys.exit("to_gguf.py: cannot import gguf: put llama.cpp's gguf-py on PYTHONPATH "
                 "(PYTHONPATH=/path/to/llama.cpp/gguf-py)")
    convert(a.src, a.dst, a.type)
    print(f"wrote {a.dst}")


if __name__ == "__main__":
    main()
