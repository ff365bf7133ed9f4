#!/usr/bin/python3
"""tools/convert.py's shared machinery, independent of any one layout: the written file's
header (format, version, config, alignment, contiguous offsets), the safetensors readers
(sharded, truncated, duplicated), refusals that must leave no output behind, f16 range, --help
listing every layout's flags, --format auto naming what rules each layout out, and
tools/reference.py (the project's float64 numpy model) agreeing with examples/logits on a
converted file.  Needs numpy only."""

import json
import os
import shutil
import struct
import subprocess
import sys
import tempfile

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import common  # noqa: E402


def hf_model(d, scale=1.0, shards=1, **over):
    cfg = {"model_type": "diffllama", "architectures": ["DiffLlamaForCausalLM"], "hidden_size": 16,
           "intermediate_size": 24, "num_hidden_layers": 2, "num_attention_heads": 4, "num_key_value_heads": 2,
           "vocab_size": 40, "max_position_embeddings": 16, "rms_norm_eps": 1e-5, "tie_word_embeddings": False}
    cfg.update(over)
    rng = np.random.default_rng(1)
    D, F, H, KV, V = 16, 24, 4, 2, 40
    d_ = D // H
    t = {"model.embed_tokens.weight": rng.standard_normal((V, D)) * scale}
    for l in range(2):
        p = "model.layers.%d." % l
        t[p + "input_layernorm.weight"] = 1 + 0.1 * rng.standard_normal(D)
        t[p + "self_attn.q_proj.weight"] = rng.standard_normal((H * d_, D)) * 0.5
        t[p + "self_attn.k_proj.weight"] = rng.standard_normal((KV * d_, D)) * 0.5
        t[p + "self_attn.v_proj.weight"] = rng.standard_normal((KV * d_, D)) * 0.25
        t[p + "self_attn.o_proj.weight"] = rng.standard_normal((D, H * d_)) * 0.25
        for lam in ("lambda_q1", "lambda_k1", "lambda_q2", "lambda_k2"):
            t[p + "self_attn." + lam] = rng.standard_normal(d_) * 0.3
        t[p + "post_attention_layernorm.weight"] = 1 + 0.1 * rng.standard_normal(D)
        t[p + "mlp.gate_proj.weight"] = rng.standard_normal((F, D)) * 0.25
        t[p + "mlp.up_proj.weight"] = rng.standard_normal((F, D)) * 0.25
        t[p + "mlp.down_proj.weight"] = rng.standard_normal((D, F)) * 0.2
    t["model.norm.weight"] = 1 + 0.1 * rng.standard_normal(D)
    t["lm_head.weight"] = rng.standard_normal((V, D)) * 0.25
    t = {k: np.asarray(v, np.float32) for k, v in t.items()}
    return common.write_hf_dir(d, cfg, t, shards=shards), cfg, t


def header(path):
    """-> (header length, header with __metadata__) of a file safetensors_io.File accepts."""
    f = common.st.File(path)
    return f.data_start - 8, dict(f.entries, __metadata__=f.metadata)


def main():
    common.build_examples()
    rep = common.Report("common")
    tmp = tempfile.mkdtemp(prefix="conv_common_")
    ids = [1, 4, 9, 39, 0, 22, 7]

    src, cfg, t = hf_model(os.path.join(tmp, "a"))
    out = os.path.join(tmp, "a.safetensors")
    rc, err = common.convert(src, out)
    rep.check("converts", rc == 0, err.strip())
    n, h = header(out)
    meta = h.pop("__metadata__", {})
    rep.check("metadata format/version", meta.get("format") == "dintattn" and meta.get("version") == "1", str(meta))
    c = json.loads(meta.get("config", "{}"))
    rep.check("config is a JSON object with the keys of docs/format.md section 2",
              c.get("attention") == "diff" and c.get("n_heads") == 2 and c.get("v_head_dim") == 8, str(c))
    rep.check("tensor data starts 64-byte aligned", (8 + n) % 64 == 0, str(8 + n))
    spans = sorted(e["data_offsets"] for e in h.values())
    contiguous = spans[0][0] == 0 and all(a[1] == b[0] for a, b in zip(spans, spans[1:]))
    rep.check("offsets contiguous and the file ends with the data",
              contiguous and os.path.getsize(out) == 8 + n + spans[-1][1])
    rep.check("no .tmp left", not os.path.exists(out + ".tmp"))

    # the project's own float64 reference reads the converted file and agrees with the engine
    ref_out = os.path.join(tmp, "ref.bin")
    p = subprocess.run([common.PY, os.path.join(common.ROOT, "tools", "reference.py"), out,
                        ",".join(map(str, ids)), ref_out], capture_output=True, text=True)
    if p.returncode:
        rep.check("tools/reference.py on the converted file", False, p.stderr.strip()[-300:])
    else:
        ref = np.fromfile(ref_out, dtype="<f4").reshape(len(ids), -1)
        rep.logits("tools/reference.py agrees with examples/logits", ref, common.engine_logits(out, ids, 40))

    # dtypes: f16 output and a value beyond f16's range
    rc, err = common.convert(src, out + ".f16", "--dtype", "f16")
    rep.check("--dtype f16", rc == 0 and all(e["dtype"] == "F16" for e in header(out + ".f16")[1].values()
                                              if isinstance(e, dict) and "dtype" in e), err.strip())
    src2, _, _ = hf_model(os.path.join(tmp, "big"), scale=1e5)
    rep.refused("refuses values beyond f16", *common.convert(src2, out + ".b16", "--dtype", "f16"),
                "tok_embeddings.weight", "f16")
    rep.check("refusal mid-write leaves no output", not os.path.exists(out + ".b16")
              and not os.path.exists(out + ".b16.tmp"))

    # NaN in the source
    d = os.path.join(tmp, "nan")
    t2 = dict(t)
    t2["model.layers.1.mlp.up_proj.weight"] = t2["model.layers.1.mlp.up_proj.weight"].copy()
    t2["model.layers.1.mlp.up_proj.weight"][3, 4] = np.nan
    common.write_hf_dir(d, cfg, t2)
    rep.refused("refuses NaN weights", *common.convert(d, d + ".safetensors"), "NaN")

    # shards: a missing shard, a tensor in two shards
    d, _, _ = hf_model(os.path.join(tmp, "sh"), shards=2)
    os.unlink(os.path.join(d, "model-00002-of-00002.safetensors"))
    rep.refused("refuses a missing shard", *common.convert(d, d + ".safetensors"), "model-00002-of-00002")
    d, _, _ = hf_model(os.path.join(tmp, "dup"), shards=2)
    common.write_st(os.path.join(d, "model-00002-of-00002.safetensors"),
                    {"model.norm.weight": t["model.norm.weight"], "lm_head.weight": t["lm_head.weight"],
                     "model.embed_tokens.weight": t["model.embed_tokens.weight"]})
    rep.refused("refuses a tensor in two shards", *common.convert(d, d + ".safetensors"), "is in both")

    # a truncated safetensors file, a header length beyond the file
    d, _, _ = hf_model(os.path.join(tmp, "tr"))
    fn = os.path.join(d, "model.safetensors")
    with open(fn, "r+b") as f:
        f.truncate(os.path.getsize(fn) - 10)
    rep.refused("refuses a truncated safetensors file", *common.convert(d, d + ".safetensors"), "offsets")
    with open(fn, "wb") as f:   # written by hand: no writer makes this
        f.write(struct.pack("<Q", 1 << 40) + b"{}")
    rep.refused("refuses a bad header length", *common.convert(d, d + ".safetensors"), "header length")

    # tokenizer files that are neither
    bad = os.path.join(tmp, "bad.tok")
    with open(bad, "w") as f:
        f.write("this is not a rank file\n")
    rep.refused("refuses a tokenizer file that is neither format", *common.convert(src, out + ".t", "--tokenizer", bad),
                "bad.tok")
    rep.refused("refuses a directory with no weights", *common.convert(os.path.join(tmp, "sh") + "_none", out + ".x"),
                "no such file")
    os.makedirs(os.path.join(tmp, "empty"))
    with open(os.path.join(tmp, "empty", "config.json"), "w") as f:
        f.write("{}")
    rep.refused("refuses an HF directory without weights", *common.convert(os.path.join(tmp, "empty"), out + ".y"),
                "model.safetensors")

    # --help lists every layout's flags, each under its layout's heading
    p = subprocess.run([common.PY, common.CONVERT, "--help"], capture_output=True, text=True)
    import argparse
    import importlib
    for name in ("unilm", "motif", "diffllama", "llama2c"):
        g = argparse.ArgumentParser(add_help=False).add_argument_group(name)
        importlib.import_module("layouts." + name).add_arguments(g)
        flags = [o for a in g._group_actions for o in a.option_strings]
        section = p.stdout.split("\n%s layout:" % name, 1)[-1].split(" layout:\n", 1)[0]
        missing = [f for f in flags if "\n  " + f not in section]
        rep.check("--help lists the %s layout's flags (%s)" % (name, " ".join(flags)),
                  p.returncode == 0 and flags and not missing, missing and "missing " + " ".join(missing))

    # --format auto with no matching layout names the tensor that stopped it
    os.makedirs(os.path.join(tmp, "odd"))
    odd = os.path.join(tmp, "odd", "odd.safetensors")
    common.write_st(odd, {"encoder.block.0.weight": np.ones((2, 2), np.float32)})
    rc, err = common.convert(odd, out + ".odd")
    rep.refused("--format auto: no layout matches, the error names the tensor", rc, err, "odd.safetensors",
                "no layout matches", "'encoder.block.0.weight'", "unilm:", "motif:", "diffllama:", "llama2c:")
    d, _, _ = hf_model(os.path.join(tmp, "llama"), model_type="llama", architectures=["LlamaForCausalLM"])
    rc, err = common.convert(d, out + ".llama")
    rep.refused("--format auto: a config.json of another model type is named", rc, err,
                "model_type 'llama'", "no tensor 'model.layers.N.self_attn.subln.weight'")

    shutil.rmtree(tmp)
    return rep.finish()


if __name__ == "__main__":
    sys.exit(main())
