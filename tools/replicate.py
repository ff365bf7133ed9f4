#!/usr/bin/python3
"""A tiny-scale replication of the DIFF and DINT Transformer papers' claims, measured with
dintattn's instruments: a standard, a DIFF and a DINT Transformer of equal parameter count,
trained here (tools/train.py's model, CPU) on the King James Bible plus a synthetic multi-needle
retrieval task, then measured by the C engine: perplexity on held-out chapters (examples/score,
llama.cpp's protocol), multi-needle retrieval by depth and length (examples/needle, the papers'
section 3.3), and the attention on the answer needle vs the rest of the haystack with the share
of negative attention weights (python/dintattn.py's attention capture; DINT Table 5, Figure 1).

Run with Debian's python3 (python3-torch python3-regex python3-numpy, bible-kjv) after `make
examples/score examples/needle lib`:

    /usr/bin/python3 tools/replicate.py train --workdir /tmp/rep              # stage 1: text + retrieval
    /usr/bin/python3 tools/replicate.py train --workdir /tmp/rep2 --init-from /tmp/rep \
        --steps 1000 --retrieval 1.0 --lr 1e-3 --warmup 50                      # stage 2: retrieval only
    /usr/bin/python3 tools/replicate.py eval --workdir /tmp/rep2 [--samples 50]  # measure, print the table
    /usr/bin/python3 tools/replicate.py table --workdir /tmp/rep2                # the table again

(docs/replication.md's table; about 55 + 35 minutes of training and 15 of measuring on 2 cores). `train`
trains each family in its own process, two at once with one torch thread each; `all` runs train
and eval. Every model sees the same batches (one seed) for the same number of steps with the same
learning-rate schedule; stage 2 starts from each model's stage-1 weights (--init-from) with a
new optimizer and schedule.

Data. The tokenizer is the shipped model's (models/dint-kjv.safetensors' tokenizer.ranks). The
language-modelling stream is train.py's (every 20th chapter held out). A share (--retrieval) of
each batch's rows starts with a retrieval document in examples/needle's exact format: KJV words
from the training chapters joined by spaces, N in 1..8 needles "The magic number of <City> is
<7 digits>." at sentence boundaries (the answer needle at a uniformly random one), then
"\\n\\nWhat is the magic number of A?" (or, with R = 2 asked, "What are the magic numbers of A
and B?") and " The magic number of A is <number>."; the row is filled up with the KJV stream.
The training cities are not examples/needle's (which tests with its own 64), so retrieval is
measured on unseen keys and on held-out filler (the held-out chapters' words).
"""

import argparse
import json
import os
import random
import subprocess
import sys
import time

import numpy as np

TOOLS = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(TOOLS)
sys.path.insert(0, TOOLS)
sys.path.insert(0, os.path.join(ROOT, "python"))
import cli  # noqa: E402

FAMILIES = ("standard", "diff", "dint")
SHIPPED = os.path.join(ROOT, "models", "dint-kjv.safetensors")

# training cities: none of them is one of examples/needle's
TRAIN_CITIES = [
    "Lyon", "Porto", "Bergen", "Krakow", "Seville", "Naples", "Munich", "Hamburg", "Geneva",
    "Antwerp", "Gdansk", "Riga", "Tallinn", "Vilnius", "Minsk", "Kiev", "Odessa", "Sofia",
    "Belgrade", "Zagreb", "Split", "Valletta", "Palermo", "Marseille", "Bordeaux", "Nantes",
    "Glasgow", "Cardiff", "Belfast", "Leeds", "York", "Bristol", "Austin", "Dallas", "Phoenix",
    "Portland", "Atlanta", "Detroit", "Memphis", "Nashville", "Omaha", "Tampa", "Orlando",
    "Montreal", "Calgary", "Ottawa", "Halifax", "Winnipeg", "Recife", "Salvador", "Cusco",
    "Medellin", "Cali", "Asuncion", "Montevideo", "Rosario", "Mendoza", "Kyoto", "Osaka",
    "Nagoya", "Busan", "Taipei", "Perth", "Adelaide", "Brisbane", "Darwin", "Hobart",
    "Kampala", "Kigali", "Harare", "Lusaka", "Luanda", "Maputo", "Durban", "Windhoek",
    "Khartoum", "Amman", "Beirut", "Damascus", "Muscat", "Doha", "Baku", "Tbilisi", "Yerevan",
    "Tashkent", "Almaty", "Bishkek", "Lhasa", "Chengdu", "Wuhan", "Xian", "Harbin", "Lahore",
    "Kolkata", "Chennai", "Colombo", "Kathmandu", "Thimphu", "Yangon",
]


def run(cmd, **kw):
    r = subprocess.run(cmd, capture_output=True, text=True, **kw)
    if r.returncode != 0:
        raise SystemExit("%s failed:\n%s%s" % (" ".join(cmd), r.stdout[-2000:], r.stderr[-2000:]))
    return r.stdout


# ---------------------------------------------------------------------------------------------
# data
# ---------------------------------------------------------------------------------------------

def ranks_file(workdir):
    """The shipped model's tokenizer as a tiktoken rank file (its tokenizer.ranks tensor)."""
    import safetensors_io
    path = os.path.join(workdir, "kjv.tiktoken")
    if not os.path.exists(path):
        tensors, _ = safetensors_io.read(SHIPPED)
        with open(path + ".tmp", "wb") as f:
            f.write(tensors["tokenizer.ranks"][1].tobytes())
        os.replace(path + ".tmp", path)
    return path


def chapter_words(corpus=None):
    """(training words, held-out words): the chapters' words, train.py's split."""
    import train_tokenizer
    train, val = [], []
    for i, (_, _, text) in enumerate(train_tokenizer.kjv_chapters(corpus)):
        (val if i % 20 == 19 else train).extend(text.split())
    return train, val


def ends_sentence(w):
    """examples/needle's rule: a word ending in . ! or ? (before a closing quote or bracket)."""
    if len(w) >= 2 and w[-1] in "\"')]":
        w = w[:-1]
    return w[-1:] in (".", "!", "?")


class Retrieval:
    """Retrieval documents in examples/needle's format, as token ids (see the module doc)."""

    def __init__(self, enc, words, eot):
        self.enc, self.words, self.eot = enc, words, eot
        self.cache = {}

    def _word(self, w):
        t = self.cache.get(w)
        if t is None:
            t = self.cache[w] = self.enc.encode(" " + w)
        return t

    def doc(self, rng, max_tokens):
        n = rng.randint(1, 8)
        r = rng.randint(1, min(2, n))
        cities = rng.sample(TRAIN_CITIES, n)
        numbers = [str(rng.randrange(1000000, 10000000)) for _ in range(n)]
        needles = ["The magic number of %s is %s." % (c, x) for c, x in zip(cities, numbers)]
        asked = cities[:r]
        rng.shuffle(asked)
        if r == 1:
            question = "\n\nWhat is the magic number of %s?" % asked[0]
        else:
            question = "\n\nWhat are the magic numbers of %s and %s?" % tuple(asked)
        tail = question + " The magic number of %s is %s." % (cities[0], numbers[0])
        budget = rng.randint(min(64, max_tokens), max_tokens) - 1     # the EOT first
        needle_tokens = sum(len(self._word(w)) for s in needles for w in s.split())
        tail_tokens = len(self.enc.encode(tail)) + 4
        while n > r and needle_tokens + tail_tokens >= max_tokens:   # a short row: fewer needles
            needle_tokens -= sum(len(self._word(w)) for w in needles.pop().split())
            n -= 1
        # filler words from a random place, as many as fit
        start = rng.randrange(0, len(self.words) - 4096)
        filler, count = [], 0
        for w in self.words[start:start + 4096]:
            t = len(self._word(w))
            if count + t + needle_tokens + tail_tokens > budget:
                break
            filler.append(w)
            count += t
        bounds = [0] + [i + 1 for i, w in enumerate(filler) if ends_sentence(w)]
        if bounds[-1] != len(filler):
            bounds.append(len(filler))
        at = {}
        for i in range(n):
            at.setdefault(rng.choice(bounds), []).append(needles[i])
        words = []
        for b in range(len(filler) + 1):
            for s in at.get(b, ()):
                words.extend(s.split())
            if b < len(filler):
                words.append(filler[b])
        ids = [self.eot] + self.enc.encode(words[0])
        for w in words[1:-1]:
            ids.extend(self._word(w))
        ids.extend(self.enc.encode((" " if len(words) > 1 else "") + words[-1] + tail)
                   if len(words) > 1 else self.enc.encode(tail))
        return ids[:max_tokens]


def make_batches(retrieval, stream, a):
    """next_batch(gen) for train.cmd_train: rows of ctx + 1 tokens, a share starting with a
    retrieval document, the rest of each row from the KJV stream."""
    import torch
    state = {"rng": None}

    def next_batch(gen):
        if state["rng"] is None:
            state["rng"] = random.Random(int(torch.randint(0, 2**31, (1,), generator=gen)))
        rng = state["rng"]
        rows = []
        for b in range(a.batch):
            row = []
            if b < round(a.retrieval * a.batch):
                row = retrieval.doc(rng, a.ctx + 1)
            need = a.ctx + 1 - len(row)
            if need > 0:
                i = int(torch.randint(0, len(stream) - need, (1,), generator=gen))
                row = row + stream[i:i + need].tolist()
            rows.append(row)
        t = torch.tensor(rows, dtype=torch.long)
        return t[:, :-1], t[:, 1:]
    return next_batch


# ---------------------------------------------------------------------------------------------
# train
# ---------------------------------------------------------------------------------------------

def train_one(a, family):
    import torch
    import train
    import train_tokenizer
    torch.manual_seed(0)
    ranks = ranks_file(a.workdir)
    data = train.load_data(ranks, a.corpus)
    words, _ = chapter_words(a.corpus)
    retrieval = Retrieval(train_tokenizer.Encoder(train_tokenizer.load_ranks(ranks)), words,
                          data[0] - 1)
    ap_args = ["train", "--ranks", ranks, "--attention", family, "--steps", str(a.steps),
               "--dim", str(a.dim), "--layers", str(a.layers), "--heads", str(a.heads),
               "--hidden", str(a.hidden), "--ctx", str(a.ctx), "--batch", str(a.batch), "--accum", str(a.accum),
               "--lr", str(a.lr), "--threads", str(a.threads), "--warmup", str(a.warmup),
               "--ckpt-minutes", "12", "--log-every", "20",
               "--out", os.path.join(a.workdir, family + ".safetensors"),
               "--workdir", os.path.join(a.workdir, family)]
    if a.init_from:
        ap_args += ["--init", os.path.join(a.init_from, family, "best.pt")]
    ta = train.parse_args(ap_args)
    return train.cmd_train(ta, make_batches(retrieval, data[1], a), data)


def cmd_train(a):
    os.makedirs(a.workdir, exist_ok=True)
    ranks_file(a.workdir)
    if a.family:
        return train_one(a, a.family)
    # --jobs processes at once, the longest (DINT) first; one torch thread each, as two torch
    # threads on a 2-core machine run slower than one
    todo = sorted(a.families.split(","), key=lambda f: f != "dint")
    # OpenBLAS (torch's BLAS on Debian) keeps its own threads besides torch's: one each, or two
    # trainings run four busy threads on two cores; and glibc would map and unmap every large
    # tensor afresh at each step: keep them in the heap (else page faults take half the CPU time)
    env = dict(os.environ, OPENBLAS_NUM_THREADS=str(a.threads), OMP_NUM_THREADS=str(a.threads),
               MALLOC_MMAP_THRESHOLD_="33554432", MALLOC_TRIM_THRESHOLD_="17179869184",
               MALLOC_TOP_PAD_="268435456")
    running, bad = [], []
    while todo or running:
        while todo and len(running) < a.jobs:
            fam = todo.pop(0)
            log = open(os.path.join(a.workdir, fam + ".log"), "w")
            argv = [sys.executable, os.path.abspath(__file__), "train", "--family", fam] + \
                [x for k, v in vars(a).items()
                 if k not in ("cmd", "family", "families") and v is not None and v is not False
                 for x in ("--" + k.replace("_", "-"), str(v))]
            running.append((fam, subprocess.Popen(argv, stdout=log, stderr=subprocess.STDOUT, env=env)))
            print("training %s: log %s" % (fam, log.name), flush=True)
        time.sleep(1)
        for fam, p in list(running):
            if p.poll() is not None:
                running.remove((fam, p))
                if p.returncode:
                    bad.append(fam)
    if bad:
        raise SystemExit("training failed: %s (see their logs)" % ", ".join(bad))
    return 0


# ---------------------------------------------------------------------------------------------
# eval
# ---------------------------------------------------------------------------------------------

NEEDLE_SETTINGS = [(1, 1), (2, 2), (4, 2), (6, 2)]        # DINT Table 4 (N, R)
ANSWER_TOKENS = 10                                          # greedy tokens per answer


def needle_json(a, model, n, r, lengths, extra=()):
    out = run([os.path.join(ROOT, "examples", "needle"), model, "--lengths",
               ",".join(map(str, lengths)), "--needles", str(n), "--asked", str(r),
               "--samples", str(a.samples), "--filler", os.path.join(a.workdir, "heldout.txt"),
               "--max-tokens", str(ANSWER_TOKENS), "--threads", "2", "--json"] + list(extra))
    return json.loads(out)


def digit_match(samples):
    """The mean share of the answer's 7 digits the extracted number has in the same place (chance:
    about 0.1): a graded measure of retrieval where exact answers are rare."""
    got = []
    for s in samples:
        want, ext = str(s["answer"]), str(s["extracted"] or "")
        got.append(sum(a == b for a, b in zip(want, ext)) / len(want))
    return float(np.mean(got))


def attention_measures(model_path, samples):
    """DINT Table 5 / Figure 1 on the needle prompts: at the last prompt position (where the
    answer's first token is predicted), per layer and head, the mass of W on the answer needle's
    tokens ("attention to answer") and on the rest of the haystack ("attention noise"), and the
    share of W's entries that are negative; means over layers and heads, then over samples, per
    depth. Also the best head's answer mass (the retrieval head)."""
    import dintattn
    model = dintattn.Model(model_path)
    tok = model.tokenizer()
    sess = dintattn.Session(model, n_threads=2)
    by_depth = {}
    for s in samples:
        ids = ([] if tok.bos is None else [tok.bos]) + tok.encode(s["prompt"], allow_special=False)
        if len(ids) != s["prompt_tokens"]:
            raise SystemExit("the prompt encodes to %d tokens here, %d in examples/needle"
                             % (len(ids), s["prompt_tokens"]))
        last = len(ids) - 1
        sess.reset()
        with sess.capture_attention(positions=last) as cap:
            sess.prefill(ids)
        a0, a1 = s["needle_token"], s["needle_token"] + s["needle_tokens"]
        h0, h1 = s["haystack_start"], s["haystack_end"]
        ans, noise, neg, sums, best = [], [], [], [], 0.0
        for (l, h, pos), w in cap.rows.items():  # the library's row statistics (dintattn_attn_stats_of)
            on_answer = dintattn.attention_stats(w, [(a0, a1)])
            am = on_answer["span_mass"]
            ans.append(am)
            noise.append(dintattn.attention_stats(w, [(h0, a0), (a1, h1)])["span_mass"])
            neg.append(on_answer["neg_share"])
            sums.append(on_answer["sum"])
            best = max(best, am)
        d = by_depth.setdefault(s["depth"], {"answer": [], "noise": [], "neg": [], "sum": [], "best": []})
        d["answer"].append(np.mean(ans))
        d["noise"].append(np.mean(noise))
        d["neg"].append(np.mean(neg))
        d["sum"].append(np.mean(sums))
        d["best"].append(best)
    sess.close()
    model.close()
    return {str(k): {m: float(np.mean(v)) for m, v in d.items()} for k, d in sorted(by_depth.items())}


def cmd_eval(a):
    _, held = chapter_words(a.corpus)
    with open(os.path.join(a.workdir, "heldout.txt"), "w") as f:
        f.write(" ".join(held) + "\n")
    ppl_text = os.path.join(a.workdir, "heldout_chapters.txt")
    import train_tokenizer
    with open(ppl_text, "w") as f:
        f.write("".join(t for i, (_, _, t) in enumerate(train_tokenizer.kjv_chapters(a.corpus))
                        if i % 20 == 19))
    path = os.path.join(a.workdir, "results.json")
    results = {}
    if os.path.exists(path):    # families measured before stay (eval --families X adds X)
        with open(path) as f:
            results = json.load(f)
    for fam in a.families.split(","):
        model = os.path.join(a.workdir, fam + ".safetensors")
        t0 = time.time()
        r = {"ppl": json.loads(run([os.path.join(ROOT, "examples", "score"), model, "--ppl",
                                    ppl_text, "--json", "--threads", "2"]))}
        r["needle"] = {}
        top = a.ctx - ANSWER_TOKENS - 4    # the prompt and the answer within the context
        for n, rr in NEEDLE_SETTINGS:
            j = needle_json(a, model, n, rr, [top])
            r["needle"]["%d,%d" % (n, rr)] = sum(c["correct"] for c in j["grid"]) / \
                sum(c["total"] for c in j["grid"])
            r.setdefault("digits", {})["%d,%d" % (n, rr)] = digit_match(j["samples"])
        lengths = [int(top * f) for f in (0.45, 0.64, 0.82, 1.0)]   # 8 needles take 170 tokens
        j = needle_json(a, model, 8, 1, lengths,
                        ["--prompts", "--svg", os.path.join(a.workdir, fam + "_needle.svg")])
        r["grid"] = j["grid"]
        r["digits"]["8,1"] = {str(L): digit_match([s for s in j["samples"] if s["length"] == L]) for L in lengths}
        r["attention"] = attention_measures(model, [s for s in j["samples"] if s["length"] == top])
        results[fam] = r
        print("%s: evaluated in %.0f s" % (fam, time.time() - t0), flush=True)
        with open(path + ".tmp", "w") as f:
            json.dump(results, f, indent=1)
        os.replace(path + ".tmp", path)
    return cmd_table(a)


# ---------------------------------------------------------------------------------------------
# table
# ---------------------------------------------------------------------------------------------

# the papers' corresponding figures (DINT Transformer, arXiv 2501.17486 final version)
PAPER_TABLE4 = {"standard": (1.00, 0.85, 0.62, 0.55), "diff": (1.00, 0.92, 0.84, 0.85),
                "dint": (1.00, 0.96, 0.89, 0.88)}
PAPER_TABLE5_ANSWER = {"standard": (0.03, 0.03, 0.03, 0.07, 0.09),
                       "diff": (0.27, 0.30, 0.31, 0.32, 0.40),
                       "dint": (0.35, 0.38, 0.40, 0.41, 0.45)}
PAPER_TABLE5_NOISE = {"standard": (0.51, 0.54, 0.52, 0.49, 0.49),
                      "diff": (0.01, 0.02, 0.02, 0.02, 0.01),
                      "dint": (0.01, 0.01, 0.01, 0.01, 0.01)}
NAMES = {"standard": "Transformer", "diff": "DIFF", "dint": "DINT"}


def cmd_table(a):
    with open(os.path.join(a.workdir, "results.json")) as f:
        res = json.load(f)
    fams = [f for f in FAMILIES if f in res]
    out = []
    p = out.append
    p("| model | held-out ppl | N=1,R=1 | N=2,R=2 | N=4,R=2 | N=6,R=2 | paper (DINT Table 4) |")
    p("|---|---|---|---|---|---|---|")
    for f in fams:
        r = res[f]
        p("| %s | %.2f +/- %.2f | %s | %s |" % (
            NAMES[f], r["ppl"]["ppl"], r["ppl"].get("ppl_stderr", float("nan")),
            " | ".join("%.2f" % r["needle"]["%d,%d" % nr] for nr in NEEDLE_SETTINGS),
            " / ".join("%.2f" % x for x in PAPER_TABLE4[f])))
    p("")
    p("| model: digits in place (chance 0.1) | N=1,R=1 | N=2,R=2 | N=4,R=2 | N=6,R=2 | N=8,R=1 by length |")
    p("|---|---|---|---|---|---|")
    for f in fams:
        d = res[f].get("digits")
        if d:
            p("| %s | %s | %s |" % (NAMES[f], " | ".join("%.3f" % d["%d,%d" % nr] for nr in NEEDLE_SETTINGS),
                                    " / ".join("%.3f" % v for _, v in sorted(d["8,1"].items(), key=lambda kv: int(kv[0])))))
    p("")
    depths = sorted(next(iter(res.values()))["attention"], key=float)
    p("| model | attention to answer (%s %%) | paper | noise | paper | negative W entries | row sum | best head on answer |"
      % "/".join("%g" % float(d) for d in depths))
    p("|---|---|---|---|---|---|---|---|")
    for f in fams:
        at = res[f]["attention"]
        p("| %s | %s | %s | %s | %s | %.3f | %.3f | %.2f |" % (
            NAMES[f], " / ".join("%.3f" % at[d]["answer"] for d in depths),
            " / ".join("%.2f" % x for x in PAPER_TABLE5_ANSWER[f]),
            " / ".join("%.3f" % at[d]["noise"] for d in depths),
            " / ".join("%.2f" % x for x in PAPER_TABLE5_NOISE[f]),
            np.mean([at[d]["neg"] for d in depths]), np.mean([at[d]["sum"] for d in depths]),
            np.mean([at[d]["best"] for d in depths])))
    p("")
    lengths = sorted({c["length"] for c in next(iter(res.values()))["grid"]})
    p("| model (N=8, R=1) | %s |" % " | ".join("%d tokens" % L for L in lengths))
    p("|---|%s" % ("---|" * len(lengths)))
    for f in fams:
        g = res[f]["grid"]
        p("| %s | %s |" % (NAMES[f], " | ".join(
            "%.2f" % (sum(c["correct"] for c in g if c["length"] == L) /
                      sum(c["total"] for c in g if c["length"] == L)) for L in lengths)))
    text = "\n".join(out) + "\n"
    with open(os.path.join(a.workdir, "table.md"), "w") as f:
        f.write(text)
    print(text, end="")
    return 0


def main(argv=None):
    ap = cli.parser(__doc__, ["/usr/bin/python3 tools/replicate.py train --workdir /tmp/rep",
                              "/usr/bin/python3 tools/replicate.py eval --workdir /tmp/rep --samples 10"], full=True)
    ap.add_argument("cmd", choices=["train", "eval", "table", "all"],
                    help="train the models, measure them (eval), print the table again, or train then eval")
    ap.add_argument("--workdir", default="/tmp/rep", help="one folder a family: checkpoints, models, results")
    ap.add_argument("--corpus", default=None, help="saved `bible -f Gen1:1-Rev22:21` output")
    ap.add_argument("--families", default=",".join(FAMILIES), help="comma-separated, among " + ", ".join(FAMILIES))
    ap.add_argument("--family", default=None, help=argparse.SUPPRESS)
    ap.add_argument("--steps", type=int, default=1500, help="training steps, 1 or more")
    ap.add_argument("--dim", type=int, default=128, help="model width, a multiple of 2 x heads")
    ap.add_argument("--layers", type=int, default=4, help="layers, 1 or more")
    ap.add_argument("--heads", type=int, default=2, help="differential heads (standard: twice)")
    ap.add_argument("--hidden", type=int, default=352, help="FFN width, 1 or more")
    ap.add_argument("--ctx", type=int, default=512, help="training context, 2 or more")
    ap.add_argument("--batch", type=int, default=8, help="rows a batch, 1 or more")
    ap.add_argument("--accum", type=int, default=2, help="micro-batches per batch (tools/train.py)")
    ap.add_argument("--lr", type=float, default=2e-3, help="peak learning rate, above 0")
    ap.add_argument("--warmup", type=int, default=100, help="warm-up steps, 0 or more")
    ap.add_argument("--retrieval", type=float, default=0.5, help="share of rows with a retrieval document, 0 to 1")
    ap.add_argument("--init-from", default=None, metavar="DIR",
                    help="start each model from DIR/FAMILY/best.pt (an earlier train's workdir)")
    ap.add_argument("--threads", type=int, default=1, help="torch threads a model, 1 or more")
    ap.add_argument("--jobs", type=int, default=2, help="models trained at once, 1 or more")
    ap.add_argument("--samples", type=int, default=50, help="needle samples per (depth, length) cell, 1 or more")
    a = ap.parse_args(argv)
    if a.cmd == "all":
        for cmd in (cmd_train, cmd_eval):
            if cmd(a):
                return 1
        return 0
    return {"train": cmd_train, "eval": cmd_eval, "table": cmd_table}[a.cmd](a)


if __name__ == "__main__":
    sys.exit(main())
