#!/bin/sh
# Runs README.md's commands as written, so that CI proves each one works on a fresh tree.
#
#     sh tests/readme_check.sh
#
# Every ```sh block of README.md runs with `sh -e` from the top of a temporary copy of this
# working tree (without .git; build outputs come along with their times, so `make` rebuilds only
# what is out of date), in the order the README gives them, and every ```python block with
# `PYTHONPATH=python /usr/bin/python3`, as the README says to run it. A block whose fence is
# preceded by a line
#     <!-- readme_check: skip (why) -->
# is not run (package installs, downloads, the full test suite that CI runs anyway), and one
# preceded by
#     <!-- readme_check: background (why) -->
# is started in the background (a server), must print "listening on" within 120 s, and is stopped
# after the last block. The README names a real checkpoint directory, Motif-2.6B, that cannot be
# downloaded here: a tiny checkpoint in Motif's Hugging Face layout, with a byte-level BPE
# tokenizer.json and a ChatML chat template, is written at that path first, so that the
# conversion, quantization, generation, chat and server commands run exactly as printed.
#
# Prints one line per block, then "readme: N passed, M failed" last; exits 1 on any failure.
# Needs /usr/bin/python3 with numpy and jinja2 (the tools' own needs) and curl.

ROOT=$(cd "$(dirname "$0")/.." && pwd)
README="$ROOT/README.md"
WORK=$(mktemp -d "${TMPDIR:-/tmp}/readme_check.XXXXXX")
BG_PIDS=""
export OPENBLAS_CORETYPE="${OPENBLAS_CORETYPE:-Haswell}"

cleanup() {
    for p in $BG_PIDS; do kill -TERM "-$p" 2>/dev/null || kill -TERM "$p" 2>/dev/null; done
    rm -rf "$WORK"
}
trap cleanup EXIT
trap 'exit 2' INT TERM

# --- the blocks: WORK/blocks/NNN.{sh,py} and NNN.mode (run, skip or background), NNN.line ----
mkdir -p "$WORK/blocks" "$WORK/repo"
awk -v dir="$WORK/blocks" '
    function fail(msg) { print "readme_check: README.md line " NR ": " msg > "/dev/stderr"; bad = 1; exit 1 }
    /^<!-- readme_check: / {
        mode = $3
        if (mode != "skip" && mode != "background") fail("unknown marker \"" mode "\" (skip or background)")
        marked = NR; next
    }
    !inblock && /^```/ {
        lang = substr($0, 4)
        if (lang != "sh" && lang != "python") { other = 1; inblock = 1; marked = 0; next }
        n++; other = 0; inblock = 1
        f = sprintf("%s/%03d.%s", dir, n, lang == "sh" ? "sh" : "py")
        printf "%s\n", (marked == NR - 1 ? mode : "run") > sprintf("%s/%03d.mode", dir, n)
        printf "%d\n", NR > sprintf("%s/%03d.line", dir, n)
        printf "" > f
        marked = 0; next
    }
    inblock && /^```$/ { inblock = 0; if (!other) close(f); next }
    inblock && !other { print > f; next }
    marked && NR > marked { fail("a readme_check marker must be the line just before a ```sh or ```python fence") }
    END { if (bad) exit 1; if (inblock) fail("a code block is not closed") }
' "$README" || { echo "readme: 0 passed, 1 failed"; exit 1; }
n_blocks=$(ls "$WORK/blocks" | grep -c '\.mode$')
if [ "$n_blocks" -eq 0 ]; then
    echo "readme: no \`\`\`sh or \`\`\`python block found in README.md"
    echo "readme: 0 passed, 1 failed"
    exit 1
fi

# --- a copy of the tree -------------------------------------------------------------------------
(cd "$ROOT" && tar --exclude=./.git -cf - .) | (cd "$WORK/repo" && tar -xpf -) || {
    echo "readme: could not copy the tree to $WORK/repo"; echo "readme: 0 passed, 1 failed"; exit 1; }

# --- the stand-in for the README's Hugging Face checkpoint ------------------------------------
# Motif-2.6B's layout (tools/layouts/motif.py: vanilla DIFF, PolyNorm MLP) at width 64, 2 layers,
# random weights in BF16; a byte-level BPE tokenizer (GPT-2's byte alphabet and a few merges,
# <|endoftext|>, and ChatML's <|im_start|> / <|im_end|>) and a ChatML template, as chat
# checkpoints ship them. Written with numpy and tools/safetensors_io.py only (no torch).
if ! /usr/bin/python3 - "$WORK/repo" "$WORK/repo/Motif-2.6B" <<'EOF'
import json, os, sys
import numpy as np
root, out = sys.argv[1], sys.argv[2]
sys.path.insert(0, os.path.join(root, "tools"))
import safetensors_io as st

# GPT-2's bytes -> printable characters
bs = list(range(33, 127)) + list(range(161, 173)) + list(range(174, 256))
cs, k = bs[:], 0
for b in range(256):
    if b not in bs:
        bs.append(b); cs.append(256 + k); k += 1
enc = {b: chr(c) for b, c in zip(bs, cs)}
vocab = {enc[b]: i for i, b in enumerate(bs)}
merges = []
for pair in [(" ", "t"), ("h", "e"), (" t", "he"), (" ", "a"), ("i", "n"), (" ", "s"), ("e", "r"), ("o", "n")]:
    a, b = ("".join(enc[x] for x in p.encode()) for p in pair)
    merges.append(a + " " + b)
    vocab.setdefault(a + b, len(vocab))
V0 = len(vocab)
specials = ["<|endoftext|>", "<|im_start|>", "<|im_end|>"]
added = [{"id": V0 + i, "content": t, "single_word": False, "lstrip": False, "rstrip": False,
          "normalized": False, "special": True} for i, t in enumerate(specials)]
tokenizer = {"version": "1.0", "truncation": None, "padding": None, "added_tokens": added,
             "normalizer": None,
             "pre_tokenizer": {"type": "ByteLevel", "add_prefix_space": False, "trim_offsets": True, "use_regex": True},
             "post_processor": None,
             "decoder": {"type": "ByteLevel", "add_prefix_space": True, "trim_offsets": True, "use_regex": True},
             "model": {"type": "BPE", "dropout": None, "unk_token": None, "continuing_subword_prefix": None,
                       "end_of_word_suffix": None, "fuse_unk": False, "byte_fallback": False,
                       "vocab": vocab, "merges": merges}}
V = V0 + len(specials)
D, L, S, KVs, d, F = 64, 2, 4, 4, 16, 96          # S, KVs: d-wide sub-heads, as Motif counts them
config = {"model_type": "motif", "architectures": ["MotifForCausalLM"], "hidden_size": D,
          "num_hidden_layers": L, "intermediate_size": F, "num_attention_heads": S,
          "num_key_value_heads": KVs, "head_dim": d, "vocab_size": V, "rms_norm_eps": 1e-6,
          "attn_rms_norm_eps": 1e-5, "rope_theta": 10000.0, "max_position_embeddings": 256,
          "hidden_act": "poly_norm", "tie_word_embeddings": False, "rope_scaling": None,
          "use_bias": False, "torch_dtype": "bfloat16", "bos_token_id": V0, "eos_token_id": V0 + 2}
rng = np.random.default_rng(0)
r = lambda *shape, std=1.0: (rng.standard_normal(shape) * std).astype(np.float32)
t = {"model.embed_tokens.weight": r(V, D)}
for l in range(L):
    p = "model.layers.%d." % l
    t[p + "input_layernorm.weight"] = 1 + r(D, std=0.1)
    t[p + "self_attn.q_proj.weight"] = r(S * d, D, std=D ** -0.5)
    t[p + "self_attn.k_proj.weight"] = r(KVs * d, D, std=D ** -0.5)
    t[p + "self_attn.v_proj.weight"] = r(KVs * d, D, std=D ** -0.5)
    t[p + "self_attn.o_proj.weight"] = r(D, S * d, std=(S * d) ** -0.5)
    for lam in ("lambda_q1", "lambda_k1", "lambda_q2", "lambda_k2"):
        t[p + "self_attn." + lam] = r(d, std=0.1)
    t[p + "self_attn.subln.weight"] = 1 + r(2 * d, std=0.1)
    t[p + "post_attention_layernorm.weight"] = 1 + r(D, std=0.1)
    t[p + "mlp.gate_proj.weight"] = r(F, D, std=D ** -0.5)
    t[p + "mlp.up_proj.weight"] = r(F, D, std=D ** -0.5)
    t[p + "mlp.down_proj.weight"] = r(D, F, std=F ** -0.5)
    t[p + "mlp.act_fn.weight"] = np.array([1 / 3, 1 / 3, 1 / 3], np.float32) + r(3, std=0.1)
    t[p + "mlp.act_fn.bias"] = r(1, std=0.1)
t["model.norm.weight"] = 1 + r(D, std=0.1)
t["lm_head.weight"] = r(V, D, std=D ** -0.5)
os.makedirs(out, exist_ok=True)
st.write(os.path.join(out, "model.safetensors"), {k: ("BF16", v) for k, v in t.items()}, {"format": "pt"})
with open(os.path.join(out, "config.json"), "w") as f:
    json.dump(config, f, indent=2)
with open(os.path.join(out, "tokenizer.json"), "w") as f:
    json.dump(tokenizer, f)
template = ("{% for m in messages %}<|im_start|>{{ m['role'] }}\n{{ m['content'] }}<|im_end|>\n{% endfor %}"
            "{% if add_generation_prompt %}<|im_start|>assistant\n{% endif %}")
with open(os.path.join(out, "tokenizer_config.json"), "w") as f:
    json.dump({"chat_template": template, "bos_token": "<|endoftext|>", "eos_token": "<|im_end|>"}, f)
EOF
then
    echo "readme: could not write the stand-in checkpoint Motif-2.6B (needs /usr/bin/python3 with numpy)"
    echo "readme: 0 passed, 1 failed"
    exit 1
fi

# --- run them -----------------------------------------------------------------------------------
passed=0 failed=0 skipped=0
for m in "$WORK"/blocks/*.mode; do
    b=${m%.mode}
    mode=$(cat "$m") line=$(cat "$b.line") log="$b.log"
    if [ -f "$b.sh" ]; then src="$b.sh" kind=sh; else src="$b.py" kind=python; fi
    what="README.md line $line ($kind)"
    case $mode in
    skip)
        skipped=$((skipped + 1))
        echo "skip: $what"
        continue ;;
    background)
        (cd "$WORK/repo" && exec setsid sh -e "$src" >"$log" 2>&1) &
        pid=$!
        BG_PIDS="$BG_PIDS $pid"
        i=0
        while [ $i -lt 240 ] && kill -0 "$pid" 2>/dev/null && ! grep -q "listening on" "$log"; do
            sleep 0.5; i=$((i + 1))
        done
        if grep -q "listening on" "$log" && kill -0 "$pid" 2>/dev/null; then rc=0; else rc=1; fi ;;
    *)
        if [ "$kind" = sh ]; then
            (cd "$WORK/repo" && timeout 900 sh -e "$src") >"$log" 2>&1
        else
            (cd "$WORK/repo" && PYTHONPATH=python timeout 900 /usr/bin/python3 "$src") >"$log" 2>&1
        fi
        rc=$? ;;
    esac
    if [ "$rc" -eq 0 ]; then
        passed=$((passed + 1))
        echo "ok: $what"
    else
        failed=$((failed + 1))
        echo "FAILED: $what, exit status $rc; the block:"
        sed 's/^/    /' "$src"
        echo "  its output (last 20 lines):"
        tail -n 20 "$log" | sed 's/^/    /'
    fi
done
echo "readme: $skipped blocks marked readme_check: skip"
echo "readme: $passed passed, $failed failed"
[ "$failed" -eq 0 ]
