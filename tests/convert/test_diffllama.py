#!/usr/bin/python3
"""HF DiffLlama -> dintattn: a PyTorch re-implementation of DiffLlamaForCausalLM's forward (from
transformers' modeling_diffllama.py equations, float64), tiny random checkpoints in HF layout,
conversion with tools/convert.py and examples/logits on the result."""

import math
import os
import sys
import tempfile

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import common  # noqa: E402

try:
    import torch
except ImportError:
    print("diffllama: skipped (no torch)")
    sys.exit(0)

torch.set_default_dtype(torch.float64)
import hf_rope_ref  # noqa: E402  (tests/convert/hf_rope_ref.py: HF RoPE scaling and partial rotary)


def rms(x, w, eps):
    y = x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + eps)
    return y if w is None else y * w


def rotate_half(x):
    h = x.shape[-1] // 2
    return torch.cat((-x[..., h:], x[..., :h]), dim=-1)


def repeat_kv(x, n):
    b, kv, s, d = x.shape
    return x[:, :, None].expand(b, kv, n, s, d).reshape(b, kv * n, s, d)


def forward(cfg, t, ids):
    """DiffLlamaForCausalLM.forward (eager attention), batch 1, float64."""
    D, H = cfg["hidden_size"], cfg["num_attention_heads"]
    KV = cfg.get("num_key_value_heads", H)
    d = cfg.get("head_dim") or D // H
    eps, theta = cfg["rms_norm_eps"], cfg.get("rope_theta", 10000.0)
    W = {k: torch.tensor(v, dtype=torch.float64) for k, v in t.items()}
    N = len(ids)
    x = W["model.embed_tokens.weight"][torch.tensor(ids)][None]          # [1, N, D]
    cos, sin, _ = hf_rope_ref.cos_sin(cfg, d, N, theta)   # rope_scaling, partial_rotary_factor
    cos, sin = cos[None, None], sin[None, None]
    mask = torch.full((N, N), float("-inf")).triu(1)
    for l in range(cfg["num_hidden_layers"]):
        p = "model.layers.%d." % l
        a = p + "self_attn."
        h = rms(x, W[p + "input_layernorm.weight"], eps)
        q = (h @ W[a + "q_proj.weight"].T).view(1, N, H, d).transpose(1, 2)
        k = (h @ W[a + "k_proj.weight"].T).view(1, N, KV, d).transpose(1, 2)
        v = (h @ W[a + "v_proj.weight"].T).view(1, N, KV, d).transpose(1, 2)
        q = hf_rope_ref.apply_halves(q, cos, sin)
        k = hf_rope_ref.apply_halves(k, cos, sin)
        k = repeat_kv(k, H // KV)
        v = repeat_kv(v, H // KV)
        v = torch.cat(torch.chunk(v, 2, dim=1), dim=-1)
        v = v.repeat(1, 2, 1, 1)
        w = torch.softmax(q @ k.transpose(2, 3) / math.sqrt(d) + mask, dim=-1)
        lam_init = 0.8 - 0.6 * math.exp(-0.3 * l)
        lam = (torch.exp(torch.sum(W[a + "lambda_q1"] * W[a + "lambda_k1"]))
               - torch.exp(torch.sum(W[a + "lambda_q2"] * W[a + "lambda_k2"])) + lam_init)
        o = w @ v
        o1, o2 = torch.chunk(o, 2, dim=1)
        o = o1 - lam * o2
        o = (1 - lam_init) * rms(o, None, eps)
        o = o.transpose(1, 2).reshape(1, N, -1)
        x = x + o @ W[a + "o_proj.weight"].T
        h = rms(x, W[p + "post_attention_layernorm.weight"], eps)
        g = h @ W[p + "mlp.gate_proj.weight"].T
        x = x + (torch.nn.functional.silu(g) * (h @ W[p + "mlp.up_proj.weight"].T)) @ W[p + "mlp.down_proj.weight"].T
    x = rms(x, W["model.norm.weight"], eps)
    out = W["model.embed_tokens.weight"] if cfg.get("tie_word_embeddings") else W["lm_head.weight"]
    return (x @ out.T)[0].numpy()


def make(cfg, seed=0, round_bf16=False):
    rng = np.random.default_rng(seed)
    D, H, F, V = cfg["hidden_size"], cfg["num_attention_heads"], cfg["intermediate_size"], cfg["vocab_size"]
    KV = cfg.get("num_key_value_heads", H)
    d = cfg.get("head_dim") or D // H

    def n(*shape, std=1.0):
        return (rng.standard_normal(shape) * std).astype(np.float32)

    def normw(k):
        return (1 + 0.2 * rng.standard_normal(k)).astype(np.float32)

    t = {"model.embed_tokens.weight": n(V, D)}
    for l in range(cfg["num_hidden_layers"]):
        p = "model.layers.%d." % l
        a = p + "self_attn."
        t[p + "input_layernorm.weight"] = normw(D)
        t[a + "q_proj.weight"] = n(H * d, D, std=0.6 / math.sqrt(D) * math.sqrt(d))
        t[a + "k_proj.weight"] = n(KV * d, D, std=0.6 / math.sqrt(D) * math.sqrt(d))
        t[a + "v_proj.weight"] = n(KV * d, D, std=1 / math.sqrt(D))
        t[a + "o_proj.weight"] = n(D, H * d, std=1 / math.sqrt(H * d))
        for lam in ("lambda_q1", "lambda_k1", "lambda_q2", "lambda_k2"):
            t[a + lam] = n(d, std=0.3)
        t[p + "post_attention_layernorm.weight"] = normw(D)
        t[p + "mlp.gate_proj.weight"] = n(F, D, std=1 / math.sqrt(D))
        t[p + "mlp.up_proj.weight"] = n(F, D, std=1 / math.sqrt(D))
        t[p + "mlp.down_proj.weight"] = n(D, F, std=1 / math.sqrt(F))
    t["model.norm.weight"] = normw(D)
    if not cfg.get("tie_word_embeddings"):
        t["lm_head.weight"] = n(V, D, std=1 / math.sqrt(D))
    if round_bf16:
        t = {k: common.bf16_round(v) for k, v in t.items()}
    return t


def base_cfg(**kw):
    c = {"architectures": ["DiffLlamaForCausalLM"], "model_type": "diffllama",
         "hidden_size": 32, "intermediate_size": 48, "num_hidden_layers": 3,
         "num_attention_heads": 4, "num_key_value_heads": 2, "vocab_size": 61,
         "max_position_embeddings": 32, "rms_norm_eps": 1e-5, "rope_theta": 10000.0,
         "rope_scaling": None, "attention_bias": False, "hidden_act": "silu",
         "tie_word_embeddings": False, "lambda_std_dev": 0.1, "bos_token_id": 1, "eos_token_id": 2,
         "torch_dtype": "float32"}
    c.update(kw)
    return c


# ---------------------------------------------------------------------------
# tokenizer.json -> rank file
# ---------------------------------------------------------------------------

CL100K = r"""(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+"""
CORPUS = ("the quick brown fox jumps over the lazy dog then the other fox went there and then "
          "they thought that these three threw those things through the thick thorns " * 3)


def b2u():
    bs = list(range(33, 127)) + list(range(161, 173)) + list(range(174, 256))
    cs = bs[:]
    n = 0
    for b in range(256):
        if b not in bs:
            bs.append(b)
            cs.append(256 + n)
            n += 1
    return dict(zip(bs, (chr(c) for c in cs))), bs


def pieces(text):
    """cl100k's split for texts of ASCII letters, digits, punctuation and single spaces."""
    import re
    return re.findall(r" ?[A-Za-z]+|[0-9]{1,3}| ?[^\sA-Za-z0-9]+|\s+", text)


def train_bpe(n_merges):
    """A tiny byte-level BPE (GPT-2 style ids: bytes in bytes_to_unicode order, then merges)."""
    enc, order = b2u()
    vocab = {enc[b]: i for i, b in enumerate(order)}
    words = {}
    for p in pieces(CORPUS):
        w = tuple(enc[b] for b in p.encode())
        words[w] = words.get(w, 0) + 1
    merges = []
    for _ in range(n_merges):
        cnt = {}
        for w, c in words.items():
            for a, b in zip(w, w[1:]):
                cnt[(a, b)] = cnt.get((a, b), 0) + c
        if not cnt:
            break
        best = max(sorted(cnt), key=lambda k: cnt[k])
        merges.append(best)
        vocab[best[0] + best[1]] = len(vocab)
        new = {}
        for w, c in words.items():
            out, i = [], 0
            while i < len(w):
                if i + 1 < len(w) and (w[i], w[i + 1]) == best:
                    out.append(w[i] + w[i + 1])
                    i += 2
                else:
                    out.append(w[i])
                    i += 1
            new[tuple(out)] = new.get(tuple(out), 0) + c
        words = new
    return vocab, merges


def hf_encode(vocab, merges, text):
    """HF's BPE model: per piece, repeatedly merge the adjacent pair of lowest merge rank (leftmost)."""
    enc, _ = b2u()
    rank = {m: i for i, m in enumerate(merges)}
    ids = []
    for p in pieces(text):
        w = [enc[b] for b in p.encode()]
        while True:
            best = None
            for i in range(len(w) - 1):
                r = rank.get((w[i], w[i + 1]))
                if r is not None and (best is None or r < best[0]):
                    best = (r, i)
            if best is None:
                break
            i = best[1]
            w[i:i + 2] = [w[i] + w[i + 1]]
        ids += [vocab[t] for t in w]
    return ids


def tokenizer_json(vocab, merges, special_id, pre="cl100k", model_type="BPE", pair_merges=False):
    if pre == "cl100k":
        pt = {"type": "Sequence", "pretokenizers": [
            {"type": "Split", "pattern": {"Regex": CL100K}, "behavior": "Isolated", "invert": False},
            {"type": "ByteLevel", "add_prefix_space": False, "trim_offsets": True, "use_regex": False}]}
    else:   # GPT-2's
        pt = {"type": "ByteLevel", "add_prefix_space": False, "trim_offsets": True, "use_regex": True}
    return {"version": "1.0", "truncation": None, "padding": None,
            "added_tokens": [{"id": special_id, "content": "<|endoftext|>", "single_word": False, "lstrip": False,
                              "rstrip": False, "normalized": False, "special": True}],
            "normalizer": None, "pre_tokenizer": pt, "post_processor": None,
            "decoder": {"type": "ByteLevel", "add_prefix_space": True, "trim_offsets": True, "use_regex": True},
            "model": {"type": model_type, "dropout": None, "unk_token": None, "continuing_subword_prefix": None,
                      "end_of_word_suffix": None, "fuse_unk": False, "byte_fallback": False,
                      "vocab": vocab, "merges": [list(m) if pair_merges else " ".join(m) for m in merges]}}


def engine_tokens(model, text):
    import subprocess
    p = subprocess.run([common.TOKENIZE, model, text], capture_output=True, text=True)
    if p.returncode:
        return "error: " + p.stderr.strip()
    return [int(x) for x in p.stdout.strip().split(",") if x]


def read_meta(path):
    return common.st.File(path).metadata


def test_tokenizer(rep, tmp):
    import json
    vocab, merges = train_bpe(60)
    V = len(vocab) + 1
    special = V - 1
    cfg = base_cfg(vocab_size=V, bos_token_id=special, eos_token_id=special)
    t = make(cfg, seed=7)
    texts = ["the quick brown fox", "there then thought", "these things threw", "hello world",
             "the other thing, then 123 foxes!", "thethethe thorn"]
    for pair in (False, True):
        d = common.write_hf_dir(os.path.join(tmp, "tok%d" % pair), cfg, t,
                                tokenizer=tokenizer_json(vocab, merges, special, pair_merges=pair))
        out = d + ".safetensors"
        rc, err = common.convert(d, out)
        what = "tokenizer.json (merges as %s)" % ("pairs" if pair else "strings")
        rep.check(what + " converts without warnings", rc == 0 and "warning" not in err, err.strip())
        if rc:
            continue
        meta = read_meta(out)
        tm = json.loads(meta.get("tokenizer", "{}"))
        added = {a["content"]: (a["id"], a["special"]) for a in tm.get("added_tokens", [])}
        rep.check(what + ": special token and bos/eos", tm.get("type") == "bpe" and
                  added == {"<|endoftext|>": (special, True)} and tm.get("bos_id") == special and
                  tm.get("eos_id") == special, str(tm))
        for text in texts:
            want = hf_encode(vocab, merges, text)
            got = engine_tokens(out, text)
            rep.check(what + ": encodes %r as HF's BPE" % text, got == want, "got %s want %s" % (got, want))
        got = engine_tokens(out, "the fox<|endoftext|>the")
        want = hf_encode(vocab, merges, "the fox") + [special] + hf_encode(vocab, merges, "the")
        rep.check(what + ": special token recognised", got == want, "got %s want %s" % (got, want))
    # --tokenizer FILE with GPT-2's pre-tokenizer (ByteLevel with its regex): kept as it is
    tj = os.path.join(tmp, "gpt2-tokenizer.json")
    with open(tj, "w") as f:
        json.dump(tokenizer_json(vocab, merges, special, pre="gpt2"), f)
    d = common.write_hf_dir(os.path.join(tmp, "tok_gpt2"), cfg, t)
    rc, err = common.convert(d, d + ".safetensors", "--tokenizer", tj)
    pre = json.loads(read_meta(d + ".safetensors").get("tokenizer", "{}")).get("pre_tokenizer") if rc == 0 else None
    rep.check("GPT-2 pre-tokenizer: converted as ByteLevel with its regex", rc == 0 and "warning" not in err and
              pre == [{"byte_level": {"add_prefix_space": False, "use_regex": True}}], "%s %s" % (err.strip(), pre))
    # a rank file given with --tokenizer is embedded verbatim
    ranks = os.path.join(tmp, "ranks.tiktoken")
    import base64
    enc, order = b2u()
    u2b = {c: b for b, c in enc.items()}
    with open(ranks, "w") as f:
        for tok, i in sorted(vocab.items(), key=lambda x: x[1]):
            f.write("%s %d\n" % (base64.b64encode(bytes(u2b[c] for c in tok)).decode(), i))
    rc, err = common.convert(d, d + ".r.safetensors", "--tokenizer", ranks)
    got = engine_tokens(d + ".r.safetensors", "these things") if rc == 0 else err
    rep.check("--tokenizer rank file", got == hf_encode(vocab, merges, "these things"), str(got))
    # a vocabulary where tiktoken-style merging differs from HF's: "z j" then "q z" then "qz j";
    # tiktoken turns "qzj" into one token via q + zj, HF stops at [q, zj]
    v2, m2 = dict(vocab), list(merges)
    for a, b in (("z", "j"), ("q", "z"), ("qz", "j")):
        m2.append((a, b))
        v2[a + b] = len(v2)
    cfg2 = base_cfg(vocab_size=len(v2) + 1)
    with open(tj, "w") as f:
        json.dump(tokenizer_json(v2, m2, len(v2)), f)
    d2 = common.write_hf_dir(os.path.join(tmp, "tok_amb"), cfg2, make(cfg2, seed=8))
    rc, err = common.convert(d2, d2 + ".safetensors", "--tokenizer", tj)
    got = engine_tokens(d2 + ".safetensors", "qzj the") if rc == 0 else err
    rep.check("merges in HF's order where tiktoken-style merging differs", got == hf_encode(v2, m2, "qzj the") and
              got[:2] == [v2["q"], v2["zj"]], "got %s want %s" % (got, hf_encode(v2, m2, "qzj the")))
    # token ids beyond the model's vocabulary
    with open(tj, "w") as f:
        json.dump(tokenizer_json(vocab, merges, special), f)
    d3 = common.write_hf_dir(os.path.join(tmp, "tok_small"), base_cfg(vocab_size=100), make(base_cfg(vocab_size=100)))
    rep.refused("refuses token ids outside vocab_size", *common.convert(d3, d3 + ".safetensors", "--tokenizer", tj),
                "vocab_size")

    # a Unigram tokenizer is refused; ids not in merge order are fine (HF merges by list order)
    uj = tokenizer_json(vocab, merges, special, model_type="Unigram")
    with open(tj, "w") as f:
        json.dump(uj, f)
    rep.refused("refuses a Unigram tokenizer", *common.convert(d, d + ".u.safetensors", "--tokenizer", tj), "Unigram")
    bad = dict(vocab)
    a, b = merges[0][0] + merges[0][1], merges[1][0] + merges[1][1]
    bad[a], bad[b] = vocab[b], vocab[a]
    with open(tj, "w") as f:
        json.dump(tokenizer_json(bad, merges, special), f)
    rc, err = common.convert(d, d + ".o.safetensors", "--tokenizer", tj)
    got = engine_tokens(d + ".o.safetensors", texts[0]) if rc == 0 else err
    rep.check("ids out of merge order encode as HF's BPE", got == hf_encode(bad, merges, texts[0]),
              "got %s want %s" % (got, hf_encode(bad, merges, texts[0])))


def test_memory(rep, tmp):
    """A ~400 MB f32 checkpoint whose largest tensor is 64 MB: the converter's peak RSS must stay
    near that one tensor (streamed writing), far below the model's size."""
    import json
    import subprocess
    cfg = base_cfg(hidden_size=1024, intermediate_size=2048, num_hidden_layers=8, num_attention_heads=16,
                   num_key_value_heads=4, vocab_size=16384, max_position_embeddings=64)
    d = os.path.join(tmp, "big")
    os.makedirs(d)
    with open(os.path.join(d, "config.json"), "w") as f:
        json.dump(cfg, f)
    rng = np.random.default_rng(0)
    names, shapes = [], []
    D, F, V, H, KV, dd = 1024, 2048, 16384, 16, 4, 64
    names.append("model.embed_tokens.weight"); shapes.append((V, D))
    for l in range(8):
        p = "model.layers.%d." % l
        for n, sh in (("input_layernorm.weight", (D,)), ("self_attn.q_proj.weight", (H * dd, D)),
                      ("self_attn.k_proj.weight", (KV * dd, D)), ("self_attn.v_proj.weight", (KV * dd, D)),
                      ("self_attn.o_proj.weight", (D, H * dd)), ("self_attn.lambda_q1", (dd,)),
                      ("self_attn.lambda_k1", (dd,)), ("self_attn.lambda_q2", (dd,)), ("self_attn.lambda_k2", (dd,)),
                      ("post_attention_layernorm.weight", (D,)), ("mlp.gate_proj.weight", (F, D)),
                      ("mlp.up_proj.weight", (F, D)), ("mlp.down_proj.weight", (D, F))):
            names.append(p + n); shapes.append(sh)
    names.append("model.norm.weight"); shapes.append((D,))
    names.append("lm_head.weight"); shapes.append((V, D))
    # the header, then the data tensor by tensor, so the test itself stays small too
    total = sum(4 * int(np.prod(sh)) for sh in shapes)
    with open(os.path.join(d, "model.safetensors"), "wb") as f:
        f.write(common.st.header_bytes([(n, "F32", sh) for n, sh in zip(names, shapes)]))
        for n, sh in zip(names, shapes):
            std = 0.02 if len(sh) == 2 else 0.1
            a = (rng.standard_normal(sh, dtype=np.float32) * std)
            if n.endswith("layernorm.weight") or n == "model.norm.weight":
                a += 1
            f.write(common.st.encode("F32", a))
    code = ("import resource, subprocess, sys; r = subprocess.run(sys.argv[1:]).returncode; "
            "print(r, resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)")
    for dt in ("bf16", "f32"):
        out = d + "." + dt
        p = subprocess.run([common.PY, "-c", code, common.PY, common.CONVERT, d, out, "--dtype", dt],
                           capture_output=True, text=True)
        rc, rss = (int(x) for x in p.stdout.split())
        rss_mb = rss / 1024.0
        ok = rc == 0 and rss_mb < 200
        rep.check("bounded memory: %d MB model -> %s, peak RSS %.0f MB (largest tensor 64 MB; bound 200 MB)"
                  % (total >> 20, dt, rss_mb), ok, p.stderr.strip()[-200:] if rc else "")
        if rc == 0 and dt == "bf16":
            ids = [1, 5, 9, 16000, 3]
            got = common.engine_logits(out, ids, V)
            rep.check("bounded memory: converted model runs", bool(np.all(np.isfinite(got))))
        if os.path.exists(out):
            os.unlink(out)


def reference_logits(path, ids):
    sys.path.insert(0, os.path.join(common.ROOT, "tools"))
    import reference
    return reference.forward(reference.load(path), ids)


def main():
    common.build_examples()
    rep = common.Report("diffllama")
    tmp = tempfile.mkdtemp(prefix="conv_diffllama_")
    ids = [3, 17, 5, 60, 0, 9, 33, 41, 2, 8, 12, 7, 55, 19]

    cases = [
        ("GQA H=4 KV=2", base_cfg(), {}),
        ("MHA H=4 KV=4, tied, theta 5e5", base_cfg(num_key_value_heads=4, tie_word_embeddings=True,
                                                   rope_theta=500000.0), {}),
        ("MQA H=8 KV=1, head_dim 6", base_cfg(num_attention_heads=8, num_key_value_heads=1, head_dim=6), {}),
        ("odd KV H=6 KV=3 (heads duplicated)", base_cfg(num_attention_heads=6, num_key_value_heads=3,
                                                        hidden_size=36), {}),
        ("GQA H=8 KV=4, eps 1e-6", base_cfg(num_attention_heads=8, num_key_value_heads=4, rms_norm_eps=1e-6), {}),
        ("sharded (3 files)", base_cfg(), {"shards": 3}),
        ("bf16 source", base_cfg(), {"dtype": "BF16"}),
        # version 1.1 (docs/format.md section 3): rope_scaling (rope_type, or the legacy "type") and partial_rotary_factor
        ("llama3 scaling (DiffLlama-0.3B-handcut: factor 32)", base_cfg(rope_scaling={
            "rope_type": "llama3", "factor": 32.0, "low_freq_factor": 1.0, "high_freq_factor": 4.0,
            "original_max_position_embeddings": 8}, rope_theta=500.0), {"v11": True}),
        ("linear scaling (legacy 'type')", base_cfg(rope_scaling={"type": "linear", "factor": 2.5}), {"v11": True}),
        ("yarn scaling (original context from max_position_embeddings, mscale)", base_cfg(rope_scaling={
            "rope_type": "yarn", "factor": 4.0, "mscale": 1.0, "mscale_all_dim": 0.5, "beta_fast": None},
            max_position_embeddings=16), {"v11": True}),
        ("yarn + partial_rotary_factor 0.5, truncate false", base_cfg(partial_rotary_factor=0.5, rope_scaling={
            "rope_type": "yarn", "factor": 3.0, "original_max_position_embeddings": 12, "truncate": False}),
         {"v11": True}),
        ("partial_rotary_factor 0.25, rope_parameters (transformers 5)", base_cfg(
            partial_rotary_factor=0.25, rope_parameters={"rope_type": "default", "rope_theta": 300.0}), {"v11": True}),
        ("rope_type default = plain RoPE (version 1 file)", base_cfg(rope_scaling={"rope_type": "default"}),
         {"v1": True}),
    ]
    for k, (name, cfg, opt) in enumerate(cases):
        dtype = opt.get("dtype", "F32")
        t = make(cfg, seed=k, round_bf16=dtype == "BF16")
        src = common.write_hf_dir(os.path.join(tmp, "m%d" % k), cfg, t, dtype, opt.get("shards", 1))
        ref = forward(cfg, t, ids)
        out = os.path.join(tmp, "m%d.safetensors" % k)
        rc, err = common.convert(src, out)
        if rc:
            rep.check(name, False, "convert failed: " + err.strip())
            continue
        got = common.engine_logits(out, ids, cfg["vocab_size"])
        rep.logits(name + " (auto-detected, f32)", ref, got)
        if opt.get("v11") or opt.get("v1"):
            version = common.st.File(out).metadata.get("version")
            want = "1.1" if opt.get("v11") else "1"
            rep.check(name + ": file version " + want, version == want, "version %r" % version)
            got = common.engine_logits(out, ids, cfg["vocab_size"], "--decode")
            rep.logits(name + " decode", ref, got)
            rep.logits(name + " tools/reference.py", ref, reference_logits(out, ids))
        if k == 0:
            got = common.engine_logits(out, ids, cfg["vocab_size"], "--decode")
            rep.logits(name + " decode", ref, got)
            rc, err = common.convert(src, out + ".bf16", "--format", "diffllama", "--dtype", "bf16")
            got = common.engine_logits(out + ".bf16", ids, cfg["vocab_size"])
            tb = {kk: common.bf16_round(v) for kk, v in t.items()}
            rep.logits(name + " --dtype bf16 (vs bf16-rounded weights)", forward(cfg, tb, ids), got)
        if dtype == "BF16":
            rc, err = common.convert(src, out + ".bf16", "--dtype", "bf16")
            got = common.engine_logits(out + ".bf16", ids, cfg["vocab_size"])
            rep.logits(name + " -> bf16 (lossless)", ref, got)

    # PyTorch state dicts: an HF directory with pytorch_model.bin (bf16 tensors), and a .pt
    # wrapped as {"model": sd} with config.json beside it
    cfg = base_cfg()
    t = make(cfg, seed=11, round_bf16=True)
    ref = forward(cfg, t, ids)
    d = os.path.join(tmp, "pt_dir")
    os.makedirs(d)
    import json
    with open(os.path.join(d, "config.json"), "w") as f:
        json.dump(cfg, f)
    torch.save({k: torch.tensor(v).to(torch.bfloat16) for k, v in t.items()}, os.path.join(d, "pytorch_model.bin"))
    rc, err = common.convert(d, d + ".safetensors")
    rep.logits("HF directory with pytorch_model.bin (bf16)", ref,
               common.engine_logits(d + ".safetensors", ids, cfg["vocab_size"]) if rc == 0 else np.full_like(ref, np.inf))
    torch.save({"model": {k: torch.tensor(v) for k, v in t.items()}, "step": 3}, os.path.join(d, "ckpt.pt"))
    rc, err = common.convert(os.path.join(d, "ckpt.pt"), d + ".2.safetensors", "--format", "diffllama")
    rep.logits("{'model': state_dict} .pt", ref,
               common.engine_logits(d + ".2.safetensors", ids, cfg["vocab_size"]) if rc == 0 else np.full_like(ref, np.inf))

    legacy = os.path.join(d, "legacy.bin")
    torch.save({"state_dict": {k: torch.tensor(v) for k, v in t.items()}}, legacy, _use_new_zipfile_serialization=False)
    rc, err = common.convert(legacy, d + ".3.safetensors")
    rep.logits("legacy (non-zip) torch pickle .bin, {'state_dict': sd}, auto-detected", ref,
               common.engine_logits(d + ".3.safetensors", ids, cfg["vocab_size"]) if rc == 0 else np.full_like(ref, np.inf))

    # config.json keys the layout does not read are listed on stderr (a transformers config has none)
    cfg = base_cfg()
    t = make(cfg)
    d = common.write_hf_dir(os.path.join(tmp, "keys_known"), cfg, t)
    rc, err = common.convert(d, d + ".safetensors")
    rep.check("a DiffLlamaConfig's keys are all read or known inert", rc == 0 and "not read" not in err, err.strip())
    d = common.write_hf_dir(os.path.join(tmp, "keys_unread"), base_cfg(qk_norm=True, pretraining_tp=2), t)
    rc, err = common.convert(d, d + ".safetensors")
    rep.check("keys the layout does not read are listed", rc == 0 and
              "convert: diffllama: config.json keys not read (they change nothing in the file written; check that "
              "none matters): pretraining_tp, qk_norm\n" in err, err.strip())

    # refusals

    def refuse(case, cfg2, t2, *words):
        d = os.path.join(tmp, "r_" + str(abs(hash(case))))
        common.write_hf_dir(d, cfg2, t2)
        rc, err = common.convert(d, d + ".safetensors")
        rep.refused(case, rc, err, *words)
        rep.check(case + ": no output left", not os.path.exists(d + ".safetensors")
                  and not os.path.exists(d + ".safetensors.tmp"))

    refuse("refuses an unknown tensor", cfg, dict(t, **{"model.layers.0.self_attn.q_proj.bias": np.zeros(16, np.float32)}),
           "model.layers.0.self_attn.q_proj.bias")
    refuse("refuses an odd head count", base_cfg(num_attention_heads=3, num_key_value_heads=1, head_dim=8),
           make(base_cfg(num_attention_heads=3, num_key_value_heads=1, head_dim=8)), "num_attention_heads")
    refuse("refuses KV heads not dividing H", base_cfg(num_attention_heads=4, num_key_value_heads=3),
           t, "num_key_value_heads")
    refuse("refuses rope_scaling type dynamic", base_cfg(rope_scaling={"rope_type": "dynamic", "factor": 2.0}), t,
           "rope_scaling", "dynamic")
    refuse("refuses rope_scaling type longrope", base_cfg(rope_scaling={"rope_type": "longrope", "factor": 2.0,
                                                                        "short_factor": [1.0], "long_factor": [1.0]}),
           t, "rope_scaling", "longrope")
    refuse("refuses an unknown rope_scaling field", base_cfg(rope_scaling={"rope_type": "linear", "factor": 2.0,
                                                                           "low_freq_factor": 1.0}),
           t, "rope_scaling", "low_freq_factor")
    refuse("refuses rope_scaling factor < 1", base_cfg(rope_scaling={"rope_type": "linear", "factor": 0.5}), t,
           "rope_scaling", "factor")
    refuse("refuses llama3 without high_freq_factor", base_cfg(rope_scaling={
        "rope_type": "llama3", "factor": 8.0, "low_freq_factor": 1.0, "original_max_position_embeddings": 64}), t,
           "rope_scaling", "high_freq_factor")
    refuse("refuses an odd rope_dim from partial_rotary_factor", base_cfg(partial_rotary_factor=0.375), t,
           "partial_rotary_factor", "rope_dim")
    refuse("refuses attention_bias", base_cfg(attention_bias=True), t, "attention_bias")
    t2 = dict(t)
    del t2["lm_head.weight"]
    refuse("refuses a missing lm_head", cfg, t2, "lm_head.weight")
    t2 = dict(t)
    t2["model.layers.1.self_attn.k_proj.weight"] = t2["model.layers.1.self_attn.k_proj.weight"][:8]
    refuse("refuses a wrong shape", cfg, t2, "model.layers.1.self_attn.k_proj.weight")

    test_tokenizer(rep, tmp)
    if os.environ.get("CONVERT_TEST_QUICK") != "1":
        test_memory(rep, tmp)

    import shutil
    shutil.rmtree(tmp)
    return rep.finish()


if __name__ == "__main__":
    sys.exit(main())
