#!/usr/bin/python3
"""tools/export.py: dintattn files written back out as Hugging Face directories.

Tiny random dintattn models (tools/make_model.py) of each exportable family and option are
exported; the exported directory is run by the PyTorch re-implementations of DiffLlama's and
Motif's forward passes (test_diffllama.forward, test_motif.motif_forward: written from the
original modeling code, independent of the converter and the exporter), and their logits must
match examples/logits on the dintattn file (tolerance 1e-4 of the largest logit, as those tests
use).  Round trips: export, then tools/convert.py --format auto back, gives the same tensors bit
for bit and the same config where no value had to change (F32, RoPE halves, head norm weights
that fit the target) and the same logits everywhere; an HF checkpoint converted and exported
comes back tensor for tensor; a BPE tokenizer comes back byte for byte.  Refusals are checked by
their exact messages.  When transformers is importable, DiffLlamaForCausalLM itself is run too."""

import contextlib
import io
import json
import math
import os
import shutil
import sys
import tempfile

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import common  # noqa: E402

try:
    import torch
except ImportError:
    print("test_export: skipped (no torch)")
    sys.exit(0)

import inproc          # noqa: E402  (tools/convert.py in this process)
import test_diffllama  # noqa: E402  (DiffLlamaForCausalLM's forward, float64)
import test_motif      # noqa: E402  (Motif's forward, float64)
import export          # noqa: E402  (tools/export.py; common put tools/ on sys.path)
import make_model      # noqa: E402
import reference       # noqa: E402

IDS = [1, 5, 17, 3, 42, 9, 0, 60, 12, 5, 33, 7]
BASE = dict(make_model.PRESETS["diff"])          # dim 32, 2 layers, 4 heads of 8, vocab 61
MOTIF_LAMBDA = [0.8 - 0.6 * math.exp(-0.3 * (l - 1)) for l in range(BASE["n_layers"])]
POLY = dict(BASE, ffn_act="polynorm", lambda_init=MOTIF_LAMBDA, rope="halves", head_norm_eps=1e-6,
            norm_eps=1e-6)


def run_export(model, out, *flags):
    """tools/export.py in this process -> (exit code, stderr)."""
    err = io.StringIO()
    with contextlib.redirect_stderr(err):
        try:
            rc = export.main([model, out] + list(flags))
        except SystemExit as e:
            rc = e.code if isinstance(e.code, int) else 2
    return rc, err.getvalue()


def read_dir(d):
    with open(os.path.join(d, "config.json")) as f:
        cfg = json.load(f)
    t, _ = common.st.read(os.path.join(d, "model.safetensors"))
    return cfg, {k: a for k, (dt, a) in t.items()}


def hf_logits(cfg, t):
    """The exported directory run by the re-implementation of its engine's modeling code."""
    if cfg["model_type"] == "diffllama":
        return test_diffllama.forward(cfg, t, IDS)
    return test_motif.motif_forward(cfg, {k: torch.tensor(v, dtype=torch.float64) for k, v in t.items()},
                                    IDS).numpy()


def transformers_logits(d):
    import transformers
    model = transformers.AutoModelForCausalLM.from_pretrained(d, torch_dtype=torch.float64)
    with torch.no_grad():
        return model(torch.tensor([IDS])).logits[0].numpy()


def same_tensors(a, b):
    """'' when files a and b hold the same tensors (names, dtypes, bits), else the first difference."""
    ta, _ = common.st.read(a)
    tb, _ = common.st.read(b)
    if sorted(ta) != sorted(tb):
        return "names differ: %s" % sorted(set(ta) ^ set(tb))
    for k in ta:
        (da, xa), (db, xb) = ta[k], tb[k]
        if da != db or xa.shape != xb.shape or xa.tobytes() != xb.tobytes():
            return "tensor %s differs (%s %s vs %s %s)" % (k, da, xa.shape, db, xb.shape)
    return ""


def config_of(path):
    meta = common.st.File(path).metadata
    return reference.resolve_config(json.loads(meta["config"]), meta["version"])


def same_config(a, b):
    ca, cb = config_of(a), config_of(b)
    ca.pop("lambda_init"), cb.pop("lambda_init")   # "depth" and its list are the same values
    diff = sorted(k for k in set(ca) | set(cb) if ca.get(k) != cb.get(k))
    return "" if not diff else "keys differ: " + ", ".join("%s %r vs %r" % (k, ca.get(k), cb.get(k)) for k in diff)


def case(rep, tmp, name, cfg, layout, exact=False, dtype="f32", quant=None, flags=(), seed=3, edit=None):
    """Exports a random model of cfg; checks the layout, the re-implementation's logits against the
    engine's on the dintattn file, and the round trip through tools/convert.py."""
    path = os.path.join(tmp, name + ".safetensors")
    t = make_model.make_tensors(cfg, seed)
    if edit:
        edit(t)
    make_model.write_model(path, t, cfg, dtype)
    if quant:
        make_model.write_quantized_file(path, path + ".q", quant)
        os.replace(path + ".q", path)
    out = os.path.join(tmp, name)
    rc, err = run_export(path, out, *flags)
    if rc:
        rep.check(name + ": exports", False, err)
        return None
    cfg_hf, tensors = read_dir(out)
    rep.check(name + ": %s layout" % layout, cfg_hf["model_type"] == layout, cfg_hf["model_type"])
    engine = common.engine_logits(path, IDS, cfg["vocab_size"])
    rep.logits(name + ": %s forward on the export = examples/logits on the file" % layout,
               hf_logits(cfg_hf, tensors), engine)
    back = out + ".back.safetensors"
    rc, err = inproc.run(out, back, "--dtype", dtype)   # an all-BF16 file exports as BF16
    if rc:
        rep.check(name + ": converts back", False, err)
        return out
    rep.logits(name + ": converted back, same logits", engine, common.engine_logits(back, IDS, cfg["vocab_size"]))
    if exact:
        rep.check(name + ": converted back, same tensors bit for bit", same_tensors(path, back) == "",
                  same_tensors(path, back))
        rep.check(name + ": converted back, same config", same_config(path, back) == "", same_config(path, back))
    return out


def ones_head_norm(t):
    for k in t:
        if k.endswith("head_norm.weight"):
            t[k][:] = 1


def per_head_norm(t):
    """head_norm.weight [dv] -> [H * dv] (H = 4), a different scale per head."""
    for k, v in list(t.items()):
        if k.endswith("head_norm.weight"):
            t[k] = (np.tile(v, 4) * np.repeat(np.float32([1, .5, 2, 1.5]), v.size)).astype(np.float32)


def refusal(rep, tmp, name, cfg, reason, layout="diffllama", flags=(), dtype="f32"):
    path = os.path.join(tmp, name + ".safetensors")
    make_model.make_model(path, cfg, dtype)
    out = os.path.join(tmp, name)
    rc, err = run_export(path, out, *flags)
    want = "export: %s: cannot export to the %s layout: %s\n" % (path, layout, reason)
    rep.check("refuses " + name, rc == 1 and err == want, "rc %d: %s" % (rc, err.strip()))
    rep.check("refuses %s: no directory left" % name, not os.path.exists(out))


def test_exports(rep, tmp):
    gqa = dict(BASE, rope="halves", n_k1_heads=2, n_k2_heads=2, n_v_heads=2)
    # DiffLlama: DIFF with SwiGLU
    case(rep, tmp, "diff_interleaved_rope_head_norm_folded", BASE, "diffllama")
    case(rep, tmp, "diff_gqa_halves", gqa, "diffllama", exact=True, edit=ones_head_norm)
    case(rep, tmp, "diff_bf16_tied_shared_k", dict(gqa, tie_embeddings=True, shared_k=True), "diffllama",
         dtype="bf16", edit=ones_head_norm)
    case(rep, tmp, "diff_llama3_scaling", make_model.PRESETS["llama3-scaling"], "diffllama")
    yarn = {"type": "yarn", "factor": 4.0, "beta_fast": 16, "original_max_position_embeddings": 16}
    case(rep, tmp, "diff_yarn_scaling", dict(gqa, max_seq_len=64, rope_scaling=yarn), "diffllama", exact=True,
         edit=ones_head_norm)
    # a context other than factor * original: max_position_embeddings follows the factor (transformers
    # releases that derive YaRN's factor from the ratio then compute the same RoPE)
    out = case(rep, tmp, "diff_yarn_context_32", dict(gqa, rope_scaling=yarn), "diffllama")
    if out:
        cfg_hf, _ = read_dir(out)
        rep.check("diff_yarn_context_32: max_position_embeddings 64 = factor 4 * original 16",
                  cfg_hf["max_position_embeddings"] == 64 and
                  cfg_hf["rope_scaling"] == {"rope_type": "yarn", "factor": 4.0, "beta_fast": 16,
                                             "original_max_position_embeddings": 16}, str(cfg_hf))
    case(rep, tmp, "diff_per_head_norm_head_scale_none", dict(BASE, head_scale="none"), "diffllama",
         edit=per_head_norm)
    case(rep, tmp, "grouped_diff_swiglu_noise_repeated", make_model.PRESETS["grouped-diff"], "diffllama")
    case(rep, tmp, "diff_q8", dict(gqa, dim=64), "diffllama", quant="q8")
    case(rep, tmp, "diff_q4", dict(gqa, dim=64), "diffllama", quant="q4")
    # Motif: DIFF and Grouped-DIFF with PolyNorm
    case(rep, tmp, "motif_diff", dict(POLY, n_k1_heads=2, n_k2_heads=2, n_v_heads=2), "motif", exact=True)
    gda = dict(POLY, n_k1_heads=2, n_q2_heads=2, n_k2_heads=2, n_v_heads=2)
    case(rep, tmp, "motif_gda", gda, "motif", exact=True)
    case(rep, tmp, "motif_gda_one_kv_group", dict(gda, n_heads=6, dim=48, n_k1_heads=1, n_k2_heads=1,
                                                   n_v_heads=1), "motif", exact=True)
    case(rep, tmp, "motif_gda_k1_per_head_interleaved", dict(make_model.PRESETS["grouped-diff"], ffn_act="polynorm",
                                                             lambda_init=MOTIF_LAMBDA), "motif")
    case(rep, tmp, "motif_gda_bf16_tied", dict(gda, tie_embeddings=True), "motif", exact=True, dtype="bf16")
    case(rep, tmp, "motif_per_head_norm_head_scale_none", dict(gda, head_scale="none"), "motif",
         edit=per_head_norm)
    case(rep, tmp, "motif_head_scale_none", dict(gda, head_scale="none"), "motif")


def test_dtypes(rep, tmp):
    """--dtype auto keeps an all-BF16 file BF16 and writes Q8 as F32, exactly scale * q."""
    gqa = dict(BASE, rope="halves", dim=64, n_k1_heads=2, n_k2_heads=2, n_v_heads=2)
    path = os.path.join(tmp, "dt.safetensors")
    make_model.make_model(path, gqa, "bf16")
    rc, err = run_export(path, os.path.join(tmp, "dt_bf16"))
    f = common.st.File(os.path.join(tmp, "dt_bf16", "model.safetensors")) if rc == 0 else None
    rep.check("--dtype auto: a BF16 file exports as BF16", f is not None and
              {f.dtype(n) for n in f.names()} == {"BF16"}, err.strip())
    make_model.make_model(path + ".f16", gqa, "f16")
    rc, err = run_export(path + ".f16", os.path.join(tmp, "dt_f16"))
    f = common.st.File(os.path.join(tmp, "dt_f16", "model.safetensors")) if rc == 0 else None
    rep.check("--dtype auto: an F16 file exports as F16", f is not None and
              {f.dtype(n) for n in f.names()} == {"F16"}, err.strip())
    make_model.write_quantized_file(path, path + ".q8", "q8")
    rc, err = run_export(path + ".q8", os.path.join(tmp, "dt_q8"))
    ok = rc == 0
    if ok:
        _, t = read_dir(os.path.join(tmp, "dt_q8"))
        q, _ = common.st.read(path + ".q8")
        want = make_model.dequantize_q8(q["layers.0.ffn.w_gate"][1], q["layers.0.ffn.w_gate.scale"][1])
        ok = np.array_equal(t["model.layers.0.mlp.gate_proj.weight"], want)
    rep.check("Q8: dequantized to F32 exactly (scale * q), and says so", ok and
              "Q8/Q4 weight matrices dequantized to F32" in err, err.strip())
    make_model.write_quantized_file(path, path + ".q4", "q4")
    rc, err = run_export(path + ".q4", os.path.join(tmp, "dt_q4"), "--dtype", "bf16")
    ok = rc == 0
    if ok:
        f = common.st.File(os.path.join(tmp, "dt_q4", "model.safetensors"))
        q, _ = common.st.read(path + ".q4")
        want = common.bf16_round(make_model.dequantize_q4(q["layers.1.attn.wq1"][1], q["layers.1.attn.wq1.scale"][1]))
        got = f.get("model.layers.1.self_attn.q_proj.weight")[:want.shape[0]]   # wq1: halves RoPE, no reorder
        ok = f.dtype("model.layers.1.self_attn.q_proj.weight") == "BF16" and np.array_equal(got, want)
    rep.check("Q4 --dtype bf16: scale * q rounded once to BF16, and says so", ok and
              "Q8/Q4 weight matrices dequantized to BF16 (rounded: F32 holds them exactly)" in err, err.strip())


def test_hf_round_trip(rep, tmp):
    """HF checkpoint -> tools/convert.py -> tools/export.py gives back the checkpoint's tensors."""
    cfg = test_diffllama.base_cfg()
    t = test_diffllama.make(cfg, seed=4)
    src = common.write_hf_dir(os.path.join(tmp, "hf_diffllama"), cfg, t)
    back = _hf_back(rep, "DiffLlama", src, tmp)
    if back:
        cb, tb = back
        rep.check("HF DiffLlama (GQA H=4 KV=2) -> dintattn -> DiffLlama: the same tensors and head counts",
                  sorted(tb) == sorted(t) and all(np.array_equal(tb[k], t[k]) for k in t) and
                  (cb["num_attention_heads"], cb["num_key_value_heads"]) == (4, 2))
    for label, c in (("DIFF", test_motif.motif_config(S=8, KVs=4)),
                     ("Grouped-DIFF", test_motif.motif_config(D=80, S=10, KVs=4, N=2))):
        tm = test_motif.motif_weights(c, seed=5)
        src = os.path.join(tmp, "hf_motif_" + label)
        test_motif.write_hf_dir(src, c, tm)
        back = _hf_back(rep, "Motif " + label, src, tmp)
        if back:
            cb, tb = back
            rep.check("HF Motif %s -> dintattn -> Motif: the same tensors and head counts" % label,
                      sorted(tb) == sorted(tm) and all(np.array_equal(tb[k], tm[k].numpy().astype(np.float32))
                                                       for k in tm) and
                      [cb.get(k) for k in ("num_attention_heads", "num_key_value_heads", "num_noise_heads")] ==
                      [c.get(k) for k in ("num_attention_heads", "num_key_value_heads", "num_noise_heads")])


def _hf_back(rep, label, src, tmp):
    mid = src + ".safetensors"
    rc, err = inproc.run(src, mid)
    if rc == 0:
        rc, err = run_export(mid, src + ".out")
    if rc:
        rep.check("HF %s round trip" % label, False, err)
        return None
    return read_dir(src + ".out")


def test_tokenizer(rep, tmp):
    """A converted tokenizer.json is written back, and converting the export gives the same
    tokenizer (metadata and tensors) and the same ids."""
    vocab, merges = test_diffllama.train_bpe(60)
    special = len(vocab)
    cfg = test_diffllama.base_cfg(vocab_size=special + 1, bos_token_id=special, eos_token_id=special)
    src = common.write_hf_dir(os.path.join(tmp, "tok"), cfg, test_diffllama.make(cfg, seed=6),
                              tokenizer=test_diffllama.tokenizer_json(vocab, merges, special))
    try:
        import jinja2  # noqa: F401  (convert.py reads chat templates with it)
        chat = True
        with open(os.path.join(src, "tokenizer_config.json"), "w") as f:
            json.dump({"bos_token": "<|endoftext|>", "eos_token": "<|endoftext|>", "chat_template":
                       "{{ bos_token }}{% for m in messages %}{{ m['role'] + ': ' + m['content'] + '<|endoftext|>' }}"
                       "{% endfor %}{% if add_generation_prompt %}{{ 'assistant: ' }}{% endif %}"}, f)
    except ImportError:
        chat = False
    mid = src + ".safetensors"
    rc, err = inproc.run(src, mid)
    rc2, err2 = run_export(mid, src + ".out") if rc == 0 else (rc, err)
    written = rc2 == 0 and os.path.exists(os.path.join(src + ".out", "tokenizer.json"))
    rep.check("BPE tokenizer: tokenizer.json written", written, err2.strip())
    if not written:
        return
    with open(os.path.join(src + ".out", "tokenizer_config.json")) as f:
        tc = json.load(f)
    rep.check("BPE tokenizer: tokenizer_config.json names bos and eos",
              tc.get("bos_token") == tc.get("eos_token") == "<|endoftext|>", str(tc))
    back = src + ".back.safetensors"
    rc, err = inproc.run(src + ".out", back)
    ma, mb = common.st.File(mid).metadata, common.st.File(back).metadata if rc == 0 else {}
    rep.check("BPE tokenizer: converted back, the same metadata",
              json.loads(ma["tokenizer"]) == json.loads(mb.get("tokenizer", "{}")), err.strip())
    if chat:
        rep.check("chat template: converted back, the same chat metadata", "chat" in ma and
                  json.loads(ma["chat"]) == json.loads(mb.get("chat", "{}")), "%s vs %s" % (ma.get("chat"),
                                                                                        mb.get("chat")))
        rep.check("tokenizer.json: a post-processor puts BOS first, as the engine does",
                  json.load(open(os.path.join(src + ".out", "tokenizer.json")))["post_processor"]["single"][0] ==
                  {"SpecialToken": {"id": "<|endoftext|>", "type_id": 0}})
    ta, tb = common.st.read(mid)[0], common.st.read(back)[0] if rc == 0 else {}
    rep.check("BPE tokenizer: converted back, the same tokenizer tensors",
              all(k in tb and ta[k][1].tobytes() == tb[k][1].tobytes() for k in ta if k.startswith("tokenizer.")))
    for text in ("the quick brown fox", "then 123 things<|endoftext|>the"):
        a, b = test_diffllama.engine_tokens(mid, text), test_diffllama.engine_tokens(back, text)
        rep.check("BPE tokenizer: %r encodes the same" % text, a == b and isinstance(a, list), "%s vs %s" % (a, b))
    # a tiktoken tokenizer has no merges: the model exports without it, and says so
    path = os.path.join(tmp, "tiktoken.safetensors")
    make_model.make_model(path, dict(BASE, rope="halves"))
    ranks = os.path.join(tmp, "ranks.tiktoken")
    with open(ranks, "w") as f:
        f.write("".join("%s %d\n" % (__import__("base64").b64encode(bytes([b])).decode(), b) for b in range(61)))
    tok = export.Model(path)
    meta = dict(tok.f.metadata)
    meta["tokenizer"] = json.dumps({"type": "tiktoken", "pattern": "cl100k", "special_tokens": {},
                                    "bos_id": -1, "eos_id": -1})
    tensors, _ = common.st.read(path)
    with open(ranks, "rb") as f:
        tensors["tokenizer.ranks"] = ("U8", np.frombuffer(f.read(), np.uint8))
    common.st.write(path, tensors, meta)
    rc, err = run_export(path, os.path.join(tmp, "tiktoken"))
    rep.check("tiktoken tokenizer: the model exports without tokenizer.json, with a note",
              rc == 0 and not os.path.exists(os.path.join(tmp, "tiktoken", "tokenizer.json")) and
              "export: note: tokenizer not written: a tiktoken tokenizer has no merge list" in err, err.strip())


def test_tokenizer_components(rep):
    """Each tokenizer.json component convert.py reads comes back from tokenizer_files() as a
    tokenizer.json that convert.py reads into the same tokenizer (metadata and tensors)."""
    import convert
    import test_tokenizer_json as tj
    sp = tj.SP
    split = {"type": "Split", "pattern": {"Regex": tj.LLAMA3_RX}, "behavior": "Isolated", "invert": False}
    cases = [
        ("byte-level, GPT-2's ByteLevel", tj.byte_level_json()),
        ("byte-level, Split + ByteLevel (Llama-3)", tj.byte_level_json(pre={"type": "Sequence", "pretokenizers": [
            split, {"type": "ByteLevel", "add_prefix_space": False, "trim_offsets": True, "use_regex": False}]})),
        ("byte-level, Digits + Split Removed inverted", tj.byte_level_json(pre={"type": "Sequence", "pretokenizers": [
            {"type": "Digits", "individual_digits": True},
            {"type": "Split", "pattern": {"String": "x"}, "behavior": "Removed", "invert": True},
            {"type": "ByteLevel", "add_prefix_space": True, "trim_offsets": True, "use_regex": True}]})),
        ("SentencePiece-style (Llama-2: Prepend, Replace, byte fallback, Fuse, Strip)", tj.sp_json()),
        ("SentencePiece-style, NFC and Metaspace", tj.sp_json(
            normalizer={"type": "NFC"},
            pre={"type": "Metaspace", "replacement": sp, "prepend_scheme": "first", "split": False},
            decoder={"type": "Metaspace", "replacement": sp, "prepend_scheme": "first", "split": False})),
    ]
    for label, src in cases:
        tensors, meta = convert.hf_tokenizer_to_bpe(src, {"bos_token_id": 1, "eos_token_id": 2})
        tensors = dict(tensors)
        files, why = export.tokenizer_files(meta, tensors["tokenizer.ranks"], tensors.get("tokenizer.merges", b""), 64)
        if why:
            rep.check("tokenizer round trip: " + label, False, why)
            continue
        t2, m2 = convert.hf_tokenizer_to_bpe(json.loads(json.dumps(files[0])), files[2])
        rep.check("tokenizer round trip: " + label, dict(t2) == tensors and m2 == meta,
                  "%s vs %s" % (m2, meta) if m2 != meta else "tensors differ")


    # a possessive x{n,m}+ (tiktoken's reading) means (?:x{n,m})+ to Oniguruma: not written
    tensors, meta = convert.hf_tokenizer_to_bpe(tj.byte_level_json(), {})
    meta["pre_tokenizer"] = ["\\p{N}{1,3}+"] + meta["pre_tokenizer"]
    rep.check("tokenizer with a possessive x{n,m}+ split: not written, with the reason",
              export.tokenizer_files(meta, dict(tensors)["tokenizer.ranks"], b"", 64) ==
              (None, "the split regex '\\\\p{N}{1,3}+' reads differently in Hugging Face tokenizers"))


def test_chat_templates(rep, tmp):
    """Every template test_chat.py reduces: its chat metadata written back as a template by
    export.chat_template renders, as transformers renders templates, what dintattn_chat_format
    writes (test_chat.check_reduction on its held-out conversations), and reduces to the same
    metadata."""
    try:
        import jinja2  # noqa: F401
    except ImportError:
        print("  note: no python3-jinja2: exported chat templates are not checked")
        return
    import convert
    import test_chat
    for k, (name, template, bos, eos, engine_bos, expect) in enumerate(test_chat.CASES):
        if expect[0] == "refused":
            continue
        d = os.path.join(tmp, "chat%d" % k)
        os.makedirs(d)
        test_chat.tokenizer_config(d, template, bos, eos)
        tok_meta = {"special_tokens": dict(test_chat.IDS),
                    "bos_id": test_chat.IDS[bos] if (engine_bos and bos) else -1}
        chat = convert.chat_metadata(d, tok_meta)
        text, why = export.chat_template(chat, bool(engine_bos and bos))
        if why:
            rep.check("chat template %s: written" % name, False, why)
            continue
        d2 = d + ".out"
        os.makedirs(d2)
        test_chat.tokenizer_config(d2, text, bos, eos)
        try:
            again = convert.chat_metadata(d2, tok_meta)
        except convert.ConvertError as e:
            again = str(e)
        rep.check("chat template %s: the export reduces to the same chat metadata" % name, again == chat,
                  "" if again == chat else "%s vs %s" % (again, chat))
        test_chat.check_reduction(rep, "chat template %s exported" % name, text, bos, eos, engine_bos, chat)


def test_refusals(rep, tmp):
    halves = dict(BASE, rope="halves")
    refusal(rep, tmp, "dint", make_model.PRESETS["dint"],
            "DINT (attention \"dint\"): no other engine runs DINT's integral term (+ lambda * I, the causal column "
            "mean of A1); DiffLlama and Motif compute A1 - lambda * A2 only")
    refusal(rep, tmp, "dint_polynorm", dict(make_model.PRESETS["dint"], ffn_act="polynorm"),
            "DINT (attention \"dint\"): no other engine runs DINT's integral term (+ lambda * I, the causal column "
            "mean of A1); DiffLlama and Motif compute A1 - lambda * A2 only", layout="motif")
    refusal(rep, tmp, "shared_diff", make_model.PRESETS["shared-diff"],
            "Shared-DIFF (qk_rank 2): no other engine runs queries and keys made of a shared base plus low-rank "
            "per-head factors; tools/make_model.py --merge-low-rank MODEL DENSE writes the same model with dense "
            "projections (from an F32/BF16 file), which exports")
    refusal(rep, tmp, "standard", make_model.PRESETS["standard"],
            "attention \"standard\" is not differential attention: the diffllama and motif layouts hold "
            "differential models only (a plain Llama export is not written)")
    refusal(rep, tmp, "token_lambda", make_model.PRESETS["diff-v2"],
            "lambda_mode 'token_sigmoid' (a lambda per token and head): DiffLlama has only the per-layer lambda "
            "of lambda_q1, lambda_k1, lambda_q2 and lambda_k2")
    refusal(rep, tmp, "ffn_bias", make_model.PRESETS["ffn-bias"],
            "ffn_bias: DiffLlama's MLP has no biases (gate_proj, up_proj and down_proj are bias-free)")
    refusal(rep, tmp, "ffn_bias_motif", dict(POLY, ffn_bias=True),
            "ffn_bias: Motif's MLP has no biases (gate_proj, up_proj and down_proj are bias-free)", layout="motif")
    refusal(rep, tmp, "polynorm_to_diffllama", POLY,
            "ffn_act 'polynorm': DiffLlama's MLP is SwiGLU (hidden_act silu), it has no PolyNorm; --layout motif "
            "runs PolyNorm", flags=("--layout", "diffllama"))
    refusal(rep, tmp, "swiglu_to_motif", halves,
            "ffn_act 'silu': Motif's MLP is PolyNorm (hidden_act poly_norm), it has no SwiGLU; --layout diffllama "
            "runs SwiGLU", layout="motif", flags=("--layout", "motif"))
    refusal(rep, tmp, "no_head_norm", dict(halves, head_norm=False),
            "head_norm false: DiffLlama always RMS-normalizes each head's output (it has no switch for it)")
    refusal(rep, tmp, "group_head_norm", dict(halves, head_norm_type="group"),
            "head_norm_type 'group': DiffLlama's head norm is an RMSNorm, it has no GroupNorm (mean and bias)")
    refusal(rep, tmp, "v_head_dim", dict(halves, v_head_dim=8),
            "v_head_dim 8 is not 2 * head_dim (16): DiffLlama's value heads are two key-width heads side by side")
    refusal(rep, tmp, "no_rope", dict(BASE, rope="none"),
            "rope \"none\": DiffLlama always applies RoPE to queries and keys")
    refusal(rep, tmp, "partial_rope", make_model.PRESETS["partial-rope-yarn"],
            "rope_dim 4 of head_dim 8 (partial RoPE): DiffLlama rotates every component of a head")
    refusal(rep, tmp, "lambda_init_depth_to_motif", dict(POLY, lambda_init="depth"),
            "lambda_init \"depth\": Motif fixes lambda_init(l) = 0.8 - 0.6 exp(-0.3 (l - 1)) (layer 0: "
            "-0.0099152845456018657), the file has 0.20000000000000007", layout="motif")
    refusal(rep, tmp, "lambda_init_number", dict(halves, lambda_init=0.5),
            "lambda_init 0.5: DiffLlama fixes lambda_init(l) = 0.8 - 0.6 exp(-0.3 l) (layer 0: "
            "0.20000000000000007), the file has 0.5")
    refusal(rep, tmp, "head_norm_eps", dict(halves, head_norm_eps=1e-6),
            "head_norm_eps 1e-06 differs from norm_eps 1e-05: DiffLlama normalizes heads with its one rms_norm_eps")

    # not a model file, a tokenizer-only file, an occupied OUTDIR
    hf = common.write_hf_dir(os.path.join(tmp, "hf_plain"), test_diffllama.base_cfg(),
                             test_diffllama.make(test_diffllama.base_cfg()))
    p = os.path.join(hf, "model.safetensors")
    rc, err = run_export(p, os.path.join(tmp, "x1"))
    rep.check("refuses an HF model.safetensors, naming tools/convert.py", rc == 1 and err ==
              "export: %s: __metadata__ \"format\" is 'pt', not \"dintattn\": this exports dintattn model files "
              "(an HF checkpoint is already one; tools/convert.py turns it into a dintattn file)\n" % p, err.strip())
    tokfile = os.path.join(tmp, "tok_only.safetensors")
    common.st.write(tokfile, {"tokenizer.ranks": ("U8", np.frombuffer(b"YQ== 0\n", np.uint8))},
                    {"format": "dintattn-tokenizer", "version": "1", "tokenizer": "{\"type\": \"tiktoken\"}"})
    rc, err = run_export(tokfile, os.path.join(tmp, "x2"))
    rep.check("refuses a tokenizer-only file", rc == 1 and err ==
              "export: %s is a tokenizer-only file: it holds no model to export\n" % tokfile, err.strip())
    path = os.path.join(tmp, "busy.safetensors")
    make_model.make_model(path, halves)
    busy = os.path.join(tmp, "busy")
    os.makedirs(busy)
    open(os.path.join(busy, "keep.txt"), "w").close()
    rc, err = run_export(path, busy)
    rep.check("refuses a non-empty OUTDIR and leaves it alone", rc == 1 and err ==
              "export: %s exists and is not an empty directory; give a new one\n" % busy and
              os.listdir(busy) == ["keep.txt"], err.strip())
    meta = dict(common.st.File(path).metadata, version="2")
    common.st.write(path + ".v2", common.st.read(path)[0], meta)
    rc, err = run_export(path + ".v2", os.path.join(tmp, "x4"))
    rep.check("refuses a file version it does not know", rc == 1 and err ==
              "export: %s.v2: __metadata__ \"version\" '2' is not \"1\" or \"1.1\" (a newer file than this "
              "exporter reads)\n" % path, err.strip())
    t = make_model.make_tensors(halves)
    t["layers.1.ffn.w_up"][3, 5] = np.nan
    make_model.write_model(path + ".nan", t, halves)
    rc, err = run_export(path + ".nan", os.path.join(tmp, "x5"))
    rep.check("a NaN weight: refused by name, no directory left", rc == 1 and err ==
              "export: %s.nan: the weights of 'model.layers.1.mlp.up_proj.weight' hold NaN or Inf: the model is "
              "broken, there is nothing to export\n" % path and
              not os.path.exists(os.path.join(tmp, "x5")), err.strip())
    rc, err = run_export("/nonexistent/m.safetensors", os.path.join(tmp, "x3"))
    rep.check("a missing file: one line, exit 1", rc == 1 and err ==
              "export: /nonexistent/m.safetensors: No such file or directory\n", err.strip())


def test_help(rep):
    import subprocess
    p = subprocess.run([common.PY, os.path.join(common.ROOT, "tools", "export.py"), "--help"],
                       capture_output=True, text=True)
    rep.check("--help: real help on stdout, exit 0", p.returncode == 0 and p.stderr == "" and
              "--layout {auto,diffllama,motif}" in p.stdout and "What is refused" in p.stdout, p.stderr.strip())
    # python3 -S has no site-packages, so no numpy: help still works, an export says which python to use
    tool = os.path.join(common.ROOT, "tools", "export.py")
    h = subprocess.run([common.PY, "-S", tool, "--help"], capture_output=True, text=True)
    e = subprocess.run([common.PY, "-S", tool, "m.safetensors", "out"], capture_output=True, text=True)
    rep.check("without numpy: --help works, an export names the python to use",
              h.returncode == 0 and h.stdout == p.stdout and e.returncode == 1 and e.stderr ==
              "export: No module named 'numpy': run it with Debian's /usr/bin/python3 (python3-numpy)\n",
              e.stderr.strip())


def test_transformers(rep, tmp):
    try:
        import transformers  # noqa: F401
    except ImportError:
        print("  note: transformers is not installed: the real DiffLlamaForCausalLM is not run "
              "(its forward is checked through test_diffllama.forward)")
        return
    cfg = dict(BASE, rope="halves", n_k1_heads=2, n_k2_heads=2, n_v_heads=2)
    path = os.path.join(tmp, "tf.safetensors")
    make_model.make_model(path, cfg)
    out = os.path.join(tmp, "tf")
    rc, err = run_export(path, out)
    if rc:
        rep.check("transformers: exports", False, err)
        return
    rep.logits("transformers DiffLlamaForCausalLM on the export = examples/logits on the file",
               transformers_logits(out), common.engine_logits(path, IDS, cfg["vocab_size"]))


def main():
    common.build_examples()
    rep = common.Report("test_export")
    tmp = tempfile.mkdtemp(prefix="conv_export_")
    try:
        test_help(rep)
        test_exports(rep, tmp)
        test_dtypes(rep, tmp)
        test_hf_round_trip(rep, tmp)
        test_tokenizer(rep, tmp)
        test_tokenizer_components(rep)
        test_chat_templates(rep, tmp)
        test_refusals(rep, tmp)
        test_transformers(rep, tmp)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return rep.finish()


if __name__ == "__main__":
    sys.exit(main())
