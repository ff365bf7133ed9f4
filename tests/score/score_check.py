#!/usr/bin/python3
"""examples/score against the float64 numpy reference (tools/reference.py), with the protocols it
claims written out again here: llama.cpp's perplexity, lm-eval-harness's multiple choice, and
KL / top-1 / RMS between two runs' saved logits.

    /usr/bin/python3 tests/score/score_check.py [PATH/TO/score [PATH/TO/tokenize]]

(default examples/score and examples/tokenize, built with make if missing). Prints one line per
failed check and "score_check: N passed, M failed" last; exits non-zero on any failure. Without
numpy it prints "score_check: skipped". Texts are tokenized with examples/tokenize (checked
against tiktoken and HF tokenizers elsewhere); everything after the ids -- the forward passes,
log-softmax, windows, sums, statistics -- is computed here in float64."""

import json
import math
import os
import re
import struct
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
import checklib  # noqa: E402  (tests/checklib.py: check, report, run, import_or_skip)
from checklib import ROOT, FX, KJV, check  # noqa: E402
# tools/reference.py: forward((cfg, tensors) or path, ids) -> [N, vocab]; make_fixtures: convert_matrix
# (a matrix as the engine holds it at --weights q8); make_model: is_matrix
np, reference, make_fixtures, make_model = checklib.import_or_skip("score_check", "numpy", "reference", "make_fixtures",
                                                                   "make_model")

SCORE = os.path.abspath(sys.argv[1]) if len(sys.argv) > 1 else os.path.join(ROOT, "examples", "score")
TOKENIZE = os.path.abspath(sys.argv[2]) if len(sys.argv) > 2 else os.path.join(ROOT, "examples", "tokenize")
TOK = os.path.join(FX, "tok_model.safetensors")
TMP = tempfile.mkdtemp(prefix="score_check.")

# Genesis 1:1-8 (King James Version, public domain)
GENESIS = (
    "In the beginning God created the heaven and the earth. And the earth was without form, and void; and "
    "darkness was upon the face of the deep. And the Spirit of God moved upon the face of the waters. And God "
    "said, Let there be light: and there was light. And God saw the light, that it was good: and God divided "
    "the light from the darkness. And God called the light Day, and the darkness he called Night. And the "
    "evening and the morning were the first day.\nAnd God said, Let there be a firmament in the midst of the "
    "waters, and let it divide the waters from the waters. And God made the firmament, and divided the waters "
    "which were under the firmament from the waters which were above the firmament: and it was so. And God "
    "called the firmament Heaven. And the evening and the morning were the second day.\n")

def close(a, b, tol):
    """|a - b| <= tol * max(1, |b|), elementwise, same shapes."""
    a, b = np.asarray(a, dtype=np.float64), np.asarray(b, dtype=np.float64)
    return a.shape == b.shape and bool(np.all(np.abs(a - b) <= tol * np.maximum(1.0, np.abs(b))))


def rel_close(a, b, tol):
    return abs(a - b) <= tol * abs(b) + 1e-15


def score(*args, expect_ok=True):
    return checklib.run(SCORE, args, expect_ok)


def write(name, data, mode="w"):
    path = os.path.join(TMP, name)
    with open(path, mode) as f:
        f.write(data)
    return path


def tokenize(model, text):
    """The model's tokenizer's ids of text (examples/tokenize: no BOS, special tokens as ids)."""
    path = write("tok.txt", text.encode("utf-8"), "wb")
    out = subprocess.run([TOKENIZE, model, "-f", path], capture_output=True, text=True, check=True).stdout.strip()
    return [int(t) for t in out.split(",")] if out else []


def bos_of(model):
    meta, _ = reference.read_safetensors(model)
    return json.loads(meta["tokenizer"]).get("bos_id", -1)


def log_softmax(logits):
    x = np.asarray(logits, dtype=np.float64)
    m = x.max(axis=-1, keepdims=True)
    return x - m - np.log(np.exp(x - m).sum(axis=-1, keepdims=True))


_models = {}


def model(path, how=None):
    """reference.load(path), and with how = "q8" every weight matrix as the engine holds it at
    --weights q8 (make_fixtures.convert_matrix)."""
    if (path, how) not in _models:
        cfg, t = reference.load(path)
        if how:
            t = dict(t)
            for k in t:
                if make_model.is_matrix(k):
                    t[k] = make_fixtures.convert_matrix(np.float32(t[k]), how).astype(np.float64)
        _models[path, how] = (cfg, t)
    return _models[path, how]


def ref_logprobs(path, ids, how=None):
    """lp[i] = log p(ids[i + 1] | ids[0..i]) under the reference, i < len(ids) - 1."""
    lsm = log_softmax(reference.forward(model(path, how), ids))
    return np.array([lsm[i, ids[i + 1]] for i in range(len(ids) - 1)])


def json_logprobs(out):
    d = json.loads(out)
    return d, [t["id"] for t in d["tokens"]], np.array([t["logprob"] for t in d["tokens"][1:]], dtype=np.float64)


# --- 1. per-token log-probabilities of --ids: fixtures of every family ------------------------------

def check_fixture_logprobs():
    manifest = dict(line.split() for line in open(os.path.join(FX, "manifest.txt")))
    for name in ("dint_softmax_f32", "dint_mean_f16", "dint_shared_grouped_gqa_bf16", "diff_polynorm_f32",
                 "grouped_diff_g4_f16", "shared_diff_gqa_r3_bf16", "standard_lowrank_polynorm_bf16",
                 "v11_dint_token_shared_k_bf16", "v11_partial_rope_yarn_halves_f32"):
        path = os.path.join(FX, name + ".safetensors")
        ids = [int(t) for t in manifest[name].split(",")]
        d, got_ids, lp = json_logprobs(score(path, "--ids", manifest[name], "--json", "--precision", "exact").stdout)
        want = ref_logprobs(path, ids)
        check(name + ": ids", got_ids == ids)
        check(name + ": log-probabilities", close(lp, want, 1e-4), "max diff %.3g" % np.max(np.abs(lp - want)))
        nll = -want.sum()
        check(name + ": total / mean NLL, perplexity",
              close([d["total_nll"], d["mean_nll"], d["perplexity"]], [nll, nll / len(want), math.exp(nll / len(want))], 1e-4))


# --- 2. a text on the shipped model: BOS + the text's ids, and windows past --ctx -------------------

def windows_protocol(path, ids, C):
    """score's windows: [0, C), then each starting at the previous one's last token; every token
    from 1 on scored once, from the window that holds it and the token before it."""
    lp = np.full(len(ids), np.nan)
    start = 0
    while True:
        w = ids[start:start + C]
        lp[start + 1:start + len(w)] = ref_logprobs(path, w)
        if start + len(w) == len(ids):
            return lp[1:]
        start += len(w) - 1


def check_text():
    text = GENESIS[:160]
    bos = bos_of(KJV)
    want_ids = [bos] + tokenize(KJV, text)
    d, ids, lp = json_logprobs(score(KJV, "-p", text, "--json").stdout)
    check("kjv -p: ids are BOS + the text's", ids == want_ids, "%s vs %s" % (ids[:8], want_ids[:8]))
    want = ref_logprobs(KJV, want_ids)
    check("kjv -p: log-probabilities", close(lp, want, 1e-4), "max diff %.3g" % np.max(np.abs(lp - want)))
    nll = -want.sum()
    check("kjv -p: perplexity", close(d["perplexity"], math.exp(nll / len(want)), 1e-4))
    # the table prints the same numbers
    table = score(KJV, "-p", text).stdout.splitlines()
    rows = [l.split() for l in table[2:-1]]
    check("kjv table: one row a token", len(rows) == len(ids) - 1 and all(int(r[1]) == i for r, i in zip(rows, ids[1:])))
    check("kjv table: logprobs", close([float(r[2]) for r in rows], want, 1e-4))
    check("kjv table: perplexity", ("perplexity %.4f" % math.exp(nll / len(want))) in table[-1], table[-1])
    # longer than --ctx: windows
    path = write("genesis.txt", GENESIS)
    C = 40
    d, ids, lp = json_logprobs(score(KJV, "-f", path, "--ctx", C, "--json").stdout)
    want = windows_protocol(KJV, ids, C)
    check("kjv -f --ctx 40: ids", ids == [bos] + tokenize(KJV, GENESIS))
    check("kjv -f --ctx 40: windows", d["n_windows"] == 1 + -(-(len(ids) - C) // (C - 1)), str(d["n_windows"]))
    check("kjv -f --ctx 40: log-probabilities in windows", close(lp, want, 1e-4), "max diff %.3g" % np.max(np.abs(lp - want)))


# --- 3. --ppl: llama.cpp's perplexity -----------------------------------------------------------

def llama_cpp_ppl(path, ids, C, bos):
    """tools/perplexity/perplexity.cpp's perplexity(): floor(n / C) windows of C tokens, each from
    an empty cache with its first token replaced by BOS; the logits of positions C/2 .. C-2 score
    the (original) tokens C/2 + 1 .. C - 1; running exp(nll / count) after each window; the final
    PPL with ppl * sqrt((mean(nll^2) - mean(nll)^2) / (count - 1))."""
    first, nll, nll2, count, running = C // 2, 0.0, 0.0, 0, []
    for k in range(len(ids) // C):
        w = list(ids[k * C:(k + 1) * C])
        if bos >= 0:
            w[0] = bos
        lsm = log_softmax(reference.forward(model(path), w))
        for j in range(first, C - 1):
            v = -lsm[j, ids[k * C + j + 1]]
            nll, nll2, count = nll + v, nll2 + v * v, count + 1
        running.append(math.exp(nll / count))
    mean = nll / count
    var = nll2 / count - mean * mean
    se = math.sqrt(var / (count - 1)) if var > 0 else 0.0
    return running, count, math.exp(mean), math.exp(mean) * se


def check_ppl():
    for path, text, C in ((TOK, GENESIS[:300], 8), (KJV, GENESIS, 32), (KJV, GENESIS, 50)):
        name = "%s --ppl --ctx %d" % (os.path.basename(path), C)
        f = write("ppl.txt", text)
        bos = bos_of(path)
        ids = [bos] + tokenize(path, text)
        running, count, ppl, se = llama_cpp_ppl(path, ids, C, bos)
        d = json.loads(score(path, "--ppl", f, "--ctx", C, "--json").stdout)
        check(name + ": windows and tokens", (d["n_tokens"], d["n_windows"], d["n_scored"]) == (len(ids), len(ids) // C, count),
              "%s vs %s" % ((d["n_tokens"], d["n_windows"], d["n_scored"]), (len(ids), len(ids) // C, count)))
        check(name + ": running perplexity", close(d["running_ppl"], running, 1e-4), "%s vs %s" % (d["running_ppl"], running))
        check(name + ": PPL +/- its error", close([d["ppl"], d["ppl_stderr"]], [ppl, se], 1e-4),
              "%s +/- %s vs %s +/- %s" % (d["ppl"], d["ppl_stderr"], ppl, se))
        out = score(path, "--ppl", f, "--ctx", C).stdout.splitlines()
        shown = re.fullmatch(r"(?:\[(\d+)\](\d+\.\d{4}),)+", out[0]) and re.findall(r"\[(\d+)\](\d+\.\d{4}),", out[0])
        final = re.fullmatch(r"Final estimate: PPL = (\d+\.\d{4}) \+/- (\d+\.\d{5})", out[1])
        check(name + ": llama.cpp's lines", bool(shown) and [int(k) for k, _ in shown] == list(range(1, len(running) + 1)) and
              close([float(v) for _, v in shown], running, 1e-4) and bool(final) and
              close([float(final.group(1)), float(final.group(2))], [ppl, se], 1e-4), "\n".join(out))


# --- 4. --choices: lm-eval-harness's multiple choice ---------------------------------------------

CHOICES = [
    {"context": "In the beginning God created the", "choices": [" heaven and the earth.", " cattle and the creeping thing.",
                                                             " sea"], "gold": 0},
    {"context": "And God said, Let there be ", "choices": ["light: and there was light.", "darkness upon the deep."],
     "gold": 0},
    {"context": "", "choices": ["And God said", "Zebra quantum"]},
    {"context": "The LORD is my", "choices": [" shepherd; I shall not want.", " caf\u00e9 \u00e0 la cr\u00e8me"], "gold": 1},
    {"context": "And the evening and the morning were the first", "choices": [" day.", " night.", " dayspring"], "gold": 0},
    # the whole's tokens merge across the cut ("sa" + "id" is "said"): lm-eval keeps the context's
    # own tokens and what the whole has past their count
    {"context": "And God sa", "choices": ["id, Let there be light", "w the light"], "gold": 0},
]


def lm_eval_tokens(path, context, choice, bos):
    """lm_eval.api.model's loglikelihood / _encode_pair for a causal model with add_bos_token:
    trailing whitespace of the context moves to the continuation; whole = encode(context +
    continuation), context_enc = encode(context), continuation_enc = whole[len(context_enc):];
    an empty context is the prefix token (BOS) alone."""
    n = len(context) - len(context.rstrip(" \t\n\r\v\f"))
    if n:
        context, choice = context[:-n], context[-n:] + choice
    ctx = [bos] + tokenize(path, context)
    whole = [bos] + tokenize(path, context + choice)
    return ctx + whole[len(ctx):], len(whole) - len(ctx)


def check_choices():
    bos = bos_of(KJV)
    f = write("mc.jsonl", "\n".join(json.dumps(c) for c in CHOICES) + "\n")
    lines = [json.loads(l) for l in score(KJV, "--choices", f).stdout.splitlines()]
    check("choices: a line each and a summary", len(lines) == len(CHOICES) + 1)
    right = {"acc": [], "acc_norm": [], "acc_bytes": []}
    for k, (doc, got) in enumerate(zip(CHOICES, lines)):
        lls, ntok = [], []
        for choice in doc["choices"]:
            ids, n_cont = lm_eval_tokens(KJV, doc["context"], choice, bos)
            lls.append(float(ref_logprobs(KJV, ids)[-n_cont:].sum()))
            ntok.append(n_cont)
        lls = np.array(lls)
        chars = np.array([float(len(c)) for c in doc["choices"]])
        nbytes = np.array([float(len(c.encode("utf-8"))) for c in doc["choices"]])
        pred, pred_norm, pred_bytes = int(np.argmax(lls)), int(np.argmax(lls / chars)), int(np.argmax(lls / nbytes))
        name = "choices line %d" % (k + 1)
        check(name + ": line number", got["line"] == k + 1)
        check(name + ": tokens of each choice", [c["n_tokens"] for c in got["choices"]] == ntok,
              "%s vs %s" % ([c["n_tokens"] for c in got["choices"]], ntok))
        check(name + ": log-likelihoods", close([c["logprob"] for c in got["choices"]], lls, 1e-4),
              "%s vs %s" % ([c["logprob"] for c in got["choices"]], lls))
        check(name + ": lengths", [c["chars"] for c in got["choices"]] == list(chars) and
              [c["bytes"] for c in got["choices"]] == list(nbytes))
        check(name + ": predictions", (got["pred"], got["pred_norm"], got["pred_bytes"]) == (pred, pred_norm, pred_bytes),
              "%s vs %s" % ((got["pred"], got["pred_norm"], got["pred_bytes"]), (pred, pred_norm, pred_bytes)))
        if "gold" in doc:
            g = doc["gold"]
            check(name + ": acc", (got["acc"], got["acc_norm"], got["acc_bytes"]) == (pred == g, pred_norm == g, pred_bytes == g))
            right["acc"].append(float(pred == g))
            right["acc_norm"].append(float(pred_norm == g))
            right["acc_bytes"].append(float(pred_bytes == g))
        else:
            check(name + ": no gold, no acc", "acc" not in got and "gold" not in got)
    s = lines[-1]["summary"]
    check("choices summary: counts", (s["lines"], s["with_gold"]) == (len(CHOICES), len(right["acc"])))
    for m, v in right.items():  # lm-eval's mean and mean_stderr (sample standard deviation / sqrt(n))
        v = np.array(v)
        check("choices summary: " + m, close([s[m], s[m + "_stderr"]], [v.mean(), v.std(ddof=1) / math.sqrt(len(v))], 1e-9),
              "%s %s vs %s %s" % (s[m], s[m + "_stderr"], v.mean(), v.std(ddof=1) / math.sqrt(len(v))))
    # the mean (acc_norm) differs from the sum (acc) somewhere, so the test tells them apart
    check("choices: acc and acc_norm differ on some line", any(l["pred"] != l["pred_norm"] for l in lines[:-1]))


# --- 5. --save-logits and --kl ---------------------------------------------------------------------

def read_logits(path):
    """An independent reader of score's logits file: b"DINTLOGT", u32 version, n_tokens, n_vocab,
    window, int32 ids[n_tokens], float32 logits[n_tokens, n_vocab], little-endian."""
    with open(path, "rb") as f:
        blob = f.read()
    magic, version, n, V, window = struct.unpack("<8sIIII", blob[:24])
    assert magic == b"DINTLOGT" and version == 1, (magic, version)
    ids = list(struct.unpack("<%di" % n, blob[24:24 + 4 * n]))
    x = np.frombuffer(blob, dtype="<f4", offset=24 + 4 * n).astype(np.float64)
    assert x.size == n * V, (x.size, n, V)
    return ids, window, x.reshape(n, V)


def window_logits(path, ids, C, how=None):
    """The reference's logits in score's windows: row i from the window that also holds token i + 1
    (the last row from the last window)."""
    rows = np.zeros((len(ids), model(path, how)[0]["vocab_size"]))
    start = 0
    while True:
        w = ids[start:start + C]
        rows[start:start + len(w)] = reference.forward(model(path, how), w)
        if start + len(w) == len(ids):
            return rows
        start += len(w) - 1


def kl_stats(a, b, ids):
    """KL(a || b) per scored row (rows 0 .. n-2), top-1 agreement, RMS logit difference, and both
    perplexities, in float64."""
    a, b = a[:-1], b[:-1]
    la, lb = log_softmax(a), log_softmax(b)
    kl = (np.exp(la) * (la - lb)).sum(axis=1)
    nxt = np.array(ids[1:])
    r = np.arange(len(nxt))
    return {"kl_mean": kl.mean(), "kl_max": kl.max(), "kl_max_at": int(np.argmax(kl)),
            "top1_agreement": float(np.mean(a.argmax(axis=1) == b.argmax(axis=1))),
            "logit_rms_diff": float(np.sqrt(np.mean((b - a) ** 2))),
            "ppl_saved": math.exp(-la[r, nxt].mean()), "ppl": math.exp(-lb[r, nxt].mean())}


def check_kl():
    text = write("kl.txt", GENESIS)
    C = 64
    f32, q8, q8x = (os.path.join(TMP, n) for n in ("f32.bin", "q8.bin", "q8x.bin"))
    score(KJV, "-f", text, "--ctx", C, "--weights", "f32", "--save-logits", f32)
    score(KJV, "-f", text, "--ctx", C, "--weights", "q8", "--save-logits", q8)           # int8 activations (auto)
    score(KJV, "-f", text, "--ctx", C, "--weights", "q8", "--precision", "exact", "--save-logits", q8x)
    ids, window, a = read_logits(f32)
    _, _, b = read_logits(q8)
    check("save-logits: ids and window", ids == [bos_of(KJV)] + tokenize(KJV, GENESIS) and window == C)
    # the saved rows are the reference's (f32 weights; Q8-dequantized weights at precision exact)
    want = window_logits(KJV, ids, C)
    check("save-logits f32: the reference's logits", close(a, want, 1e-4), "max diff %.3g" % np.max(np.abs(a - want)))
    _, _, bx = read_logits(q8x)
    wantq = window_logits(KJV, ids, C, "q8")
    check("save-logits q8 exact: the reference's Q8 logits", close(bx, wantq, 1e-4), "max diff %.3g" % np.max(np.abs(bx - wantq)))
    # --kl of a Q8 run against the f32 file: the statistics of the two saved files
    d = json.loads(score(KJV, "-f", text, "--ctx", C, "--weights", "q8", "--kl", f32, "--json").stdout)
    s = kl_stats(a, b, ids)
    check("kl: tokens", (d["n_tokens"], d["n_scored"]) == (len(ids), len(ids) - 1))
    for k in ("kl_mean", "kl_max", "logit_rms_diff", "ppl_saved", "ppl"):
        check("kl q8 vs f32: " + k, rel_close(d[k], s[k], 1e-6), "%r vs %r" % (d[k], s[k]))
    check("kl q8 vs f32: where the max is, top-1 agreement",
          d["kl_max_at"] == s["kl_max_at"] and abs(d["top1_agreement"] - s["top1_agreement"]) < 1e-9)
    check("kl q8 vs f32: Q8 moves the distribution, a little", 0 < s["kl_mean"] < 0.05, "%g" % s["kl_mean"])
    # and against the reference's own f32 and Q8 logits, within what the engine's 1e-4 allows
    sr = kl_stats(want, wantq, ids)
    dx = json.loads(score(KJV, "-f", text, "--ctx", C, "--weights", "q8", "--precision", "exact", "--kl", f32, "--json").stdout)
    # (they agree within about 1e-5; KL(b || a) is 6e-4 away)
    for k in ("kl_mean", "kl_max", "logit_rms_diff", "ppl_saved", "ppl"):
        check("kl q8 exact vs f32: the reference's " + k, rel_close(dx[k], sr[k], 1e-4), "%r vs %r" % (dx[k], sr[k]))
    # a mismatched text or window is refused
    other = write("kl_other.txt", GENESIS.replace("firmament", "expanse"))
    p = score(KJV, "-f", other, "--ctx", C, "--kl", f32, expect_ok=False)
    check("kl: another text refused", p.returncode == 1 and "not the same text" in p.stderr, p.stderr)
    p = score(KJV, "-f", text, "--ctx", C + 1, "--kl", f32, expect_ok=False)
    check("kl: another window refused", p.returncode == 1 and "windows" in p.stderr, p.stderr)


def main():
    checklib.make_if_missing([SCORE, TOKENIZE], ["examples/score", "examples/tokenize"])
    for part in (check_fixture_logprobs, check_text, check_ppl, check_choices, check_kl):
        try:
            part()
        except Exception as e:  # a crash of one part is a failure, the others still run
            check(part.__name__, False, "%s: %s" % (type(e).__name__, e))
    return checklib.report("score_check")


if __name__ == "__main__":
    sys.exit(main())
