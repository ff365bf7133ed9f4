#!/usr/bin/python3
"""A tiny-scale replication of the DIFF and DINT Transformer papers' claims, measured with
dintattn's instruments: a standard, a DIFF and a DINT Transformer of equal parameter count,
trained here (tools/train.py's model, CPU) on the King James Bible plus a synthetic retrieval
curriculum, several seeds each, then measured by the C engine: perplexity on held-out chapters
(examples/score, llama.cpp's protocol), multi-needle retrieval by N, R, depth and length
(examples/needle, the papers' section 3.3), and the attention on the answer needle vs the rest of
the haystack with the share of negative attention weights (python/dintattn.py's attention
capture and the library's row statistics, dintattn_attn_stats_of; DINT Table 5, Figure 1).

Run with Debian's python3 (python3-torch python3-regex python3-numpy, bible-kjv) after `make
examples/score examples/needle lib`, under `nice -n 19` on a shared machine:

    /usr/bin/python3 tools/replicate.py all --workdir /tmp/rep      # train and measure, run by run
    /usr/bin/python3 tools/replicate.py train --workdir /tmp/rep [--families F --seeds S]
    /usr/bin/python3 tools/replicate.py train --workdir /tmp/rep2 --init-from /tmp/rep --induction 0 --ramp 0.25
    /usr/bin/python3 tools/replicate.py eval --workdir /tmp/rep [--samples 30]
    /usr/bin/python3 tools/replicate.py table --workdir /tmp/rep    # the tables again

A run is one (family, seed): WORKDIR/FAMILY-sSEED/ holds its checkpoints, FAMILY-sSEED.safetensors
its model (the final weights), FAMILY-sSEED.log its log, FAMILY-sSEED.done marks it finished.
Runs go one at a time (--jobs), seed by seed, in their own process with one torch thread. To
resume after an interruption, run the same command again: finished runs are skipped, a run cut
short continues from its last checkpoint (every --ckpt-minutes; the optimizer and step restored,
the batches drawn afresh from the step on), and eval adds to results.json.

Data. The tokenizer is the shipped model's (models/dint-kjv.safetensors' tokenizer.ranks).
Training has two stages. In the first (--induction steps) every row is packed with repeats:
EOT, ordinary tokens drawn at random, the same tokens again. Only copying by content predicts a
repeat's second half (an induction head: a previous-token head and a head that matches on what
it wrote), the mechanism every retrieval here needs; mixed into text and retrieval from the
start, no pilot learned it. In the second stage every batch has three kinds of rows:
- retrieval (--retrieval of them): documents in examples/needle's exact format packed one after
  another, each EOT, KJV words from the training chapters joined by spaces with N needles "The
  magic number of <City> is <7 digits>." at sentence boundaries (the answer needle at a uniformly
  random one), then "\\n\\nWhat is the magic number of A?" (or, R = 2, "What are the magic numbers
  of A and B?") and " The magic number of A is <number>.", then up to --queries - 1 more
  questions about the other needles, each answered (multi-query associative recall). A
  curriculum grows the documents from --start-len tokens and 2 needles at most to the whole row
  and 8 needles over the first --ramp of the second stage's steps. In the loss the answers'
  digits weigh --answer-weight;
- repeats (--copy of them), as in the first stage, so that copying stays rewarded;
- the rest: the KJV stream (train.py's; every 20th chapter held out).
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
        self.digits = {t for d in "0123456789" for t in enc.encode(d)}
        self.question_mark = enc.encode("?")[0]

    def repeat(self, rng, max_tokens):
        """EOT, ordinary tokens drawn uniformly at random, the same tokens again (cut to
        max_tokens): the second half is predictable only by finding the first, by content (no
        token predicts the next, and the distance changes from row to row), which is what an
        induction head does and what retrieval builds on. Random tokens, not words: repeated
        words let a model lower the loss from word statistics alone, and no pilot with words
        learned to copy."""
        half = (max_tokens - 1) // 2
        ids = [rng.randrange(256, self.eot) for _ in range(half)]
        return ([self.eot] + ids + ids)[:max_tokens]

    def answer_mask(self, row):
        """1 at the tokens of a row that are answers' digits: digits after a question mark in
        the same document (the KJV text has no digits, and needles come before the questions,
        except a needle after a question of the filler's own, a few documents in a hundred)."""
        out, asked = [], False
        for t in row:
            if t == self.eot:
                asked = False
            elif t == self.question_mark:
                asked = True
            out.append(1 if asked and t in self.digits else 0)
        return out

    def _word(self, w):
        t = self.cache.get(w)
        if t is None:
            t = self.cache[w] = self.enc.encode(" " + w)
        return t

    def doc(self, rng, max_tokens, queries=1, n=None, shortest=64):
        """One document of at most max_tokens tokens (EOT first) and at least about `shortest`:
        n needles (default 1 to 8), then the question and its answer; with queries > 1, up to
        queries - 1 more questions about the other needles, each answered, so that one haystack
        teaches several retrievals (multi-query associative recall)."""
        n = n or rng.randint(1, 8)
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
        budget = rng.randint(min(shortest, max_tokens), max_tokens) - 1     # the EOT first
        needle_tokens = sum(len(self._word(w)) for s in needles for w in s.split())
        tail_tokens = len(self.enc.encode(tail)) + 4
        while n > r and needle_tokens + tail_tokens >= max_tokens:   # a short row: fewer needles
            needle_tokens -= sum(len(self._word(w)) for w in needles.pop().split())
            n -= 1
        # more questions while they fit the row (the filler then gets what is left of the budget)
        others = list(range(1, n))
        rng.shuffle(others)
        for i in others[:queries - 1]:
            q = "\n\nWhat is the magic number of %s? The magic number of %s is %s." % (
                cities[i], cities[i], numbers[i])
            q_tokens = len(self.enc.encode(q))
            if needle_tokens + tail_tokens + q_tokens >= max_tokens:
                break
            tail += q
            tail_tokens += q_tokens
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


def curriculum(a, step):
    """(longest document, most needles) at `step`: from --start-len tokens and 2 needles
    (retrieval is found first where there is little to search and few keys to tell apart) to the
    whole row and 8 needles, linearly over the first --ramp share of the steps after the
    --induction stage."""
    f = min(1.0, max(0, step - a.induction) / max(1.0, a.ramp * (a.steps - a.induction)))
    return int(a.start_len + (a.ctx + 1 - a.start_len) * f), 2 + round(6 * f)


def make_batches(retrieval, stream, a):
    """next_batch(gen, step) for train.cmd_train: rows of ctx + 1 tokens; a share (--retrieval)
    of them packed with retrieval documents of the curriculum's length (each starting with EOT,
    --queries questions a haystack), a share (--copy) with repeats, the rest from the KJV stream
    (in the first --induction steps, every row with repeats); and the loss weights."""
    import torch
    state = {"rng": None}

    def next_batch(gen, step):
        if state["rng"] is None:
            state["rng"] = random.Random(int(torch.randint(0, 2**31, (1,), generator=gen)))
        rng = state["rng"]
        top, most = curriculum(a, step)
        rows = []
        n_retrieval = round(a.retrieval * a.batch)
        n_copy = round((a.retrieval + a.copy) * a.batch) - n_retrieval
        for b in range(a.batch):
            row = []
            if step < a.induction:
                kind = "copy"           # the first stage: repeats only
            else:
                kind = "retrieval" if b < n_retrieval else "copy" if b < n_retrieval + n_copy else "text"
            if kind == "retrieval":
                while a.ctx + 1 - len(row) >= 48:     # room for one more short document
                    room = min(top, a.ctx + 1 - len(row))
                    # documents near the curriculum's length: a haystack so short that the
                    # needle sits right before the question lets a model copy from a fixed
                    # distance, a shortcut that does not retrieve
                    row += retrieval.doc(rng, room, queries=a.queries, n=rng.randint(1, most),
                                         shortest=max(32, room * 3 // 4))
            elif kind == "copy":
                while a.ctx + 1 - len(row) >= 8:
                    row += retrieval.repeat(rng, min(a.ctx + 1 - len(row), 2 * rng.randint(8, 48) + 1))
            need = a.ctx + 1 - len(row)
            if need > 0:
                i = int(torch.randint(0, len(stream) - need, (1,), generator=gen))
                row = row + stream[i:i + need].tolist()
            rows.append(row[:a.ctx + 1])
        t = torch.tensor(rows, dtype=torch.long)
        # answers' digits weigh --answer-weight in the loss: they are a few tokens of each row,
        # and the only ones that need retrieval
        w = 1.0 + (a.answer_weight - 1.0) * torch.tensor([retrieval.answer_mask(r[1:]) for r in rows],
                                                          dtype=torch.float32)
        return t[:, :-1], t[:, 1:], w
    return next_batch


def make_probe(enc, held, eot, ctx):
    """probe(model) -> str: on fixed full-length documents of held-out filler with N = 1 and
    N = 4 needles, the share whose answer (the space and 7 digits after "... is") the model
    predicts exactly, token by token given the right prefix, and the share of first digits
    right (the digit that needs the retrieval; chance 0.1), and the share of repeated random
    tokens predicted (copying by content). A cheap signal during training; the
    C engine's greedy needle accuracy is the measure."""
    import torch
    gen = Retrieval(enc, held, eot)
    rng = random.Random(99)
    docs = {n: [gen.doc(rng, ctx, n=n, shortest=ctx) for _ in range(24)] for n in (1, 4)}
    half = 40   # a repeat: EOT, `half` random tokens, the same tokens again
    repeats = torch.tensor([gen.repeat(rng, 2 * half + 1) for _ in range(16)])

    def probe(model):
        model.eval()
        out = []
        with torch.no_grad():
            for n, ds in docs.items():
                exact = first = 0
                for ids in ds:
                    x = torch.tensor([ids[:-1]])
                    pred = model(x)[0, -9:-1].argmax(-1)
                    want = torch.tensor(ids[-9:-1])
                    exact += int(bool((pred == want).all()))
                    first += int(pred[1] == want[1])
                out.append("N=%d exact %.2f first digit %.2f" % (n, exact / len(ds), first / len(ds)))
            # the repeats' second halves (tokens half + 1 on; the first of them has no cue: not
            # counted), each predicted at the position before it
            pred = model(repeats[:, :-1])[:, half + 1:].argmax(-1)
            out.append("repeats %.2f" % (pred == repeats[:, half + 2:]).float().mean().item())
        model.train()
        return ", ".join(out)
    return probe


# ---------------------------------------------------------------------------------------------
# train
# ---------------------------------------------------------------------------------------------

def run_name(family, seed):
    return "%s-s%d" % (family, seed)


def train_one(a, family, seed):
    import torch
    import train
    import train_tokenizer
    torch.manual_seed(seed)
    torch.set_num_threads(a.threads)
    ranks = ranks_file(a.workdir)
    data = train.load_data(ranks, a.corpus)
    words, held = chapter_words(a.corpus)
    enc = train_tokenizer.Encoder(train_tokenizer.load_ranks(ranks))
    retrieval = Retrieval(enc, words, data[0] - 1)
    name = run_name(family, seed)
    # a continuation (--init-from) trains the same model on new batches: another seed
    batch_seed = seed + 1000 if a.init_from else seed
    ap_args = ["train", "--ranks", ranks, "--attention", family, "--steps", str(a.steps),
               "--dim", str(a.dim), "--layers", str(a.layers), "--heads", str(a.heads),
               "--hidden", str(a.hidden), "--ctx", str(a.ctx), "--batch", str(a.batch), "--accum", str(a.accum),
               "--lr", str(a.lr), "--threads", str(a.threads), "--warmup", str(a.warmup),
               "--ckpt-minutes", str(a.ckpt_minutes), "--log-every", "20", "--seed", str(batch_seed),
               "--export-last", "--resume",
               "--out", os.path.join(a.workdir, name + ".safetensors"),
               "--workdir", os.path.join(a.workdir, name)]
    if a.init_from:
        ap_args += ["--init", os.path.join(a.init_from, name, "best.pt")]
    ta = train.parse_args(ap_args)
    return train.cmd_train(ta, make_batches(retrieval, data[1], a), data,
                           probe=make_probe(enc, held, data[0] - 1, a.ctx))


def child_env(a):
    # OpenBLAS (torch's BLAS on Debian) keeps its own threads besides torch's: as many as torch's,
    # or a training runs more busy threads than cores; and glibc would map and unmap every large
    # tensor afresh at each step: keep them in the heap (else page faults take half the CPU time)
    return dict(os.environ, OPENBLAS_NUM_THREADS=str(a.threads), OMP_NUM_THREADS=str(a.threads),
                MALLOC_MMAP_THRESHOLD_="33554432", MALLOC_TRIM_THRESHOLD_="17179869184",
                MALLOC_TOP_PAD_="268435456")


def runs(a):
    """(family, seed) in the order trained: seed by seed, so that a run cut short leaves every
    family with the same number of seeds."""
    return [(f, int(s)) for s in a.seeds.split(",") for f in a.families.split(",")]


def cmd_train(a):
    os.makedirs(a.workdir, exist_ok=True)
    ranks_file(a.workdir)
    if a.family:
        return train_one(a, a.family, a.seed)
    # --jobs processes at once (default one: the machine is shared), each in its own process
    # with --threads torch threads; a run whose model exists is done and skipped, a run cut short
    # resumes from its last checkpoint (WORKDIR/FAMILY-sSEED/ckpt.pt)
    todo = [(f, s) for f, s in runs(a)
            if not os.path.exists(os.path.join(a.workdir, run_name(f, s) + ".done"))]
    running, bad = [], []
    while todo or running:
        while todo and len(running) < a.jobs:
            fam, seed = todo.pop(0)
            name = run_name(fam, seed)
            log = open(os.path.join(a.workdir, name + ".log"), "a")
            argv = [sys.executable, os.path.abspath(__file__), "train", "--family", fam, "--seed", str(seed)] + \
                [x for k, v in vars(a).items()
                 if k not in ("cmd", "family", "families", "seed", "seeds") and v is not None
                 for x in ("--" + k.replace("_", "-"), str(v))]
            running.append((name, subprocess.Popen(argv, stdout=log, stderr=subprocess.STDOUT,
                                                   env=child_env(a))))
            print("training %s: log %s" % (name, log.name), flush=True)
        time.sleep(1)
        for name, p in list(running):
            if p.poll() is not None:
                running.remove((name, p))
                if p.returncode:
                    bad.append(name)
                else:
                    open(os.path.join(a.workdir, name + ".done"), "w").close()
    if bad:
        raise SystemExit("training failed: %s (see their logs)" % ", ".join(bad))
    return 0


# ---------------------------------------------------------------------------------------------
# eval
# ---------------------------------------------------------------------------------------------

NEEDLE_SETTINGS = [(1, 1), (2, 2), (4, 2), (6, 2)]        # DINT Table 4 (N, R)
ANSWER_TOKENS = 10                                          # greedy tokens per answer


def needle_json(a, model, n, r, lengths, extra=()):
    out = run([os.path.join(a.bin, "needle"), model, "--lengths",
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


def answer_lead(encode, decode_bytes, number):
    """The tokens of the answer " <number>" before its first digit: none when the vocabulary
    joins the space to the digit, the space when it splits it off (the shipped vocabulary)."""
    lead = []
    for t in encode(" %d" % number):
        if any(48 <= b <= 57 for b in decode_bytes([t])):
            break
        lead.append(t)
    return lead


def attention_measures(model_path, samples):
    """DINT Table 5 / Figure 1 on the needle prompts: at the position that predicts the answer's
    first digit, per layer and head, the mass of W on the answer needle's tokens ("attention to
    answer") and on the rest of the haystack ("attention noise"), and the share of W's entries
    that are negative; means over layers and heads, then over samples, per depth. Also the best
    head's answer mass (the retrieval head). That position is the last of the prompt when the
    tokenizer joins the space to the first digit; when it splits the space off (as the shipped
    vocabulary does), the last prompt position predicts only the space, so the answer's tokens
    before its first digit are appended and the position after them is measured."""
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
        ids += answer_lead(lambda text: tok.encode(text, allow_special=False), tok.decode_bytes, s["answer"])
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


ACT_TOKENS = 4096           # held-out tokens the activation statistics run over
LOWBIT_CHARS = 24000        # held-out characters low-bit runs compare (about 6K tokens)
LOWBIT_ROWS = [("q8", "f32"), ("q4", "f32"), ("bf16", "q8"), ("q4", "q8")]   # (weights, KV)


def activation_measures(model_path, text, ctx):
    """DIFF Table 5's outliers: per layer, the attention logits of each map (A1's; A2's for DIFF
    and DINT) and the hidden states (the residual stream after the layer), over the first
    ACT_TOKENS of the held-out chapters in windows of the context, from the library's activation
    statistics (dintattn_session_act_start / act_stats): the largest magnitude, the median
    magnitude, their ratio and the kurtosis, each a mean over layers."""
    import dintattn
    model = dintattn.Model(model_path)
    tok = model.tokenizer()
    ids = tok.encode(text, allow_special=False)[:ACT_TOKENS]
    sess = dintattn.Session(model, n_threads=2)
    sess.act_start(top_k=10)
    for i in range(0, len(ids), ctx - 1):
        sess.reset()        # the statistics stay; each window starts from an empty cache, BOS first
        sess.prefill(([] if tok.bos is None else [tok.bos]) + ids[i:i + ctx - 1])
    out = {}
    for kind in ["logits1", "hidden"] + ([] if model.config.attention == "standard" else ["logits2"]):
        per = [sess.act_stats(l, kind) for l in range(model.config.n_layers)]
        out[kind] = {m: float(np.mean([p[m] for p in per])) for m in ("top1", "median", "ratio", "kurtosis")}
        out[kind]["per_layer_ratio"] = [float(p["ratio"]) for p in per]
    sess.act_stop()
    sess.close()
    model.close()
    return out


def lowbit_measures(a, model_path, text_path):
    """DIFF Figure 8's protocol as far as the engine's precisions reach: examples/lowbit runs the
    held-out text at each (weights, KV cache) pair of LOWBIT_ROWS and compares it with f32 weights
    and an f32 cache: mean KL per token, top-1 agreement, relative perplexity change."""
    j = json.loads(run([os.path.join(a.bin, "lowbit"), model_path, "-f", text_path, "--json",
                        "--threads", "2", "--weights", "f32,bf16,q8,q4", "--kv", "f32,q8"]))
    out = {}
    for row in j["rows"]:
        if (row["weights"], row["kv"]) in LOWBIT_ROWS:
            out["%s/%s" % (row["weights"], row["kv"])] = {
                "kl": row["kl_mean"], "top1": row["top1_agreement"], "ppl_rel": row["ppl_change_rel"]}
    return out


def write_texts(a):
    """The held-out filler (examples/needle --filler), chapters (examples/score --ppl) and the
    chapters' start (examples/lowbit)."""
    import train_tokenizer
    _, held = chapter_words(a.corpus)
    with open(os.path.join(a.workdir, "heldout.txt"), "w") as f:
        f.write(" ".join(held) + "\n")
    ppl_text = os.path.join(a.workdir, "heldout_chapters.txt")
    with open(ppl_text, "w") as f:
        f.write("".join(t for i, (_, _, t) in enumerate(train_tokenizer.kjv_chapters(a.corpus))
                        if i % 20 == 19))
    with open(ppl_text) as f, open(os.path.join(a.workdir, "lowbit.txt"), "w") as g:
        g.write(f.read(LOWBIT_CHARS))
    return ppl_text


def by_depth(grid, length=None):
    """{depth: accuracy} of examples/needle's grid (at one length, or over all)."""
    out = {}
    for c in grid:
        if length is None or c["length"] == length:
            d = out.setdefault(str(c["depth"]), [0, 0])
            d[0] += c["correct"]
            d[1] += c["total"]
    return {k: v[0] / v[1] for k, v in out.items()}


def eval_one(a, fam, seed, ppl_text):
    name = run_name(fam, seed)
    model = os.path.join(a.workdir, name + ".safetensors")
    r = {"ppl": json.loads(run([os.path.join(a.bin, "score"), model, "--ppl",
                                ppl_text, "--json", "--threads", "2"]))}
    r["needle"], r["needle_depth"], r["digits"] = {}, {}, {}
    top = a.ctx - ANSWER_TOKENS - 4    # the prompt and the answer within the context
    for n, rr in NEEDLE_SETTINGS:
        j = needle_json(a, model, n, rr, [top])
        key = "%d,%d" % (n, rr)
        r["needle"][key] = sum(c["correct"] for c in j["grid"]) / sum(c["total"] for c in j["grid"])
        r["needle_depth"][key] = by_depth(j["grid"])
        r["digits"][key] = digit_match(j["samples"])
    lengths = grid_lengths(a)
    j = needle_json(a, model, 8, 1, lengths,
                    ["--prompts", "--svg", os.path.join(a.workdir, name + "_needle.svg")])
    r["grid"] = j["grid"]
    r["needle_depth"]["8,1"] = by_depth(j["grid"], top)
    r["digits"]["8,1"] = {str(L): digit_match([s for s in j["samples"] if s["length"] == L]) for L in lengths}
    r["attention"] = attention_measures(model, [s for s in j["samples"] if s["length"] == top])
    with open(ppl_text) as f:
        r["act"] = activation_measures(model, f.read(), a.ctx)
    r["lowbit"] = lowbit_measures(a, model, os.path.join(a.workdir, "lowbit.txt"))
    return r


def grid_lengths(a):
    """The N = 8 prompts' lengths: 8 needles take about 140 tokens and the question 20, so the
    shortest keeps some haystack around them."""
    top = a.ctx - ANSWER_TOKENS - 4
    return [int(top * f) for f in (0.76, 0.84, 0.92, 1.0)]


def cmd_eval(a):
    ppl_text = write_texts(a)
    path = os.path.join(a.workdir, "results.json")
    results = {}
    if os.path.exists(path):    # runs measured before stay (eval --families X --seeds Y adds them)
        with open(path) as f:
            results = json.load(f)
    for fam, seed in runs(a):
        if not os.path.exists(os.path.join(a.workdir, run_name(fam, seed) + ".safetensors")):
            print("%s: no model, skipped" % run_name(fam, seed), flush=True)
            continue
        t0 = time.time()
        results.setdefault(fam, {})[str(seed)] = eval_one(a, fam, seed, ppl_text)
        print("%s: evaluated in %.0f s" % (run_name(fam, seed), time.time() - t0), flush=True)
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


def ms(values, fmt="%.2f"):
    """mean +/- the seeds' sample standard deviation (the mean alone for one seed)."""
    v = np.asarray(values, dtype=np.float64)
    if len(v) < 2:
        return fmt % v.mean()
    return (fmt + " +/- " + fmt) % (v.mean(), v.std(ddof=1))


def cmd_table(a):
    with open(os.path.join(a.workdir, "results.json")) as f:
        res = json.load(f)
    fams = [f for f in FAMILIES if res.get(f)]
    runs_of = {f: [res[f][s] for s in sorted(res[f], key=int)] for f in fams}
    any_run = runs_of[fams[0]][0]
    settings = ["%d,%d" % nr for nr in NEEDLE_SETTINGS]
    out = []
    p = out.append
    p("Mean +/- standard deviation over seeds (the seeds column says how many).")
    p("")
    p("| model | seeds | held-out ppl | N=1,R=1 | N=2,R=2 | N=4,R=2 | N=6,R=2 | paper (DINT Table 4) |")
    p("|---|---|---|---|---|---|---|---|")
    for f in fams:
        rs = runs_of[f]
        p("| %s | %d | %s | %s | %s |" % (
            NAMES[f], len(rs), ms([r["ppl"]["ppl"] for r in rs]),
            " | ".join(ms([r["needle"][k] for r in rs]) for k in settings),
            " / ".join("%.2f" % x for x in PAPER_TABLE4[f])))
    p("")
    depths = sorted(any_run["needle_depth"]["1,1"], key=float)
    p("| model: accuracy by the answer's depth (%s %%) | %s |" % (
        "/".join(depths), " | ".join("N=%s,R=%s" % tuple(k.split(",")) for k in settings + ["8,1"])))
    p("|---|%s" % ("---|" * (len(settings) + 1)))
    for f in fams:
        rs = runs_of[f]
        p("| %s | %s |" % (NAMES[f], " | ".join(
            " / ".join("%.2f" % np.mean([r["needle_depth"][k][d] for r in rs]) for d in depths)
            for k in settings + ["8,1"])))
    p("")
    p("| model: digits in place (chance 0.1) | N=1,R=1 | N=2,R=2 | N=4,R=2 | N=6,R=2 | N=8,R=1 by length |")
    p("|---|---|---|---|---|---|")
    for f in fams:
        rs = runs_of[f]
        lengths = sorted(rs[0]["digits"]["8,1"], key=int)
        p("| %s | %s | %s |" % (NAMES[f], " | ".join(ms([r["digits"][k] for r in rs], "%.3f") for k in settings),
                                " / ".join("%.3f" % np.mean([r["digits"]["8,1"][L] for r in rs]) for L in lengths)))
    p("")
    at_depths = sorted(any_run["attention"], key=float)
    p("| model (N=8, R=1) | attention to answer (%s %%) | paper | noise | paper | negative W entries | row sum | best head on answer |"
      % "/".join("%g" % float(d) for d in at_depths))
    p("|---|---|---|---|---|---|---|---|")
    for f in fams:
        rs = runs_of[f]

        def per_depth(m):
            return " / ".join("%.3f" % np.mean([r["attention"][d][m] for r in rs]) for d in at_depths)

        def over_depths(m, fmt="%.3f"):
            return ms([np.mean([r["attention"][d][m] for d in at_depths]) for r in rs], fmt)
        p("| %s | %s (mean %s) | %s | %s (mean %s) | %s | %s | %s | %s |" % (
            NAMES[f], per_depth("answer"), over_depths("answer"),
            " / ".join("%.2f" % x for x in PAPER_TABLE5_ANSWER[f]),
            per_depth("noise"), over_depths("noise"),
            " / ".join("%.2f" % x for x in PAPER_TABLE5_NOISE[f]),
            over_depths("neg"), over_depths("sum"), over_depths("best", "%.2f")))
    p("")
    if all("act" in r for f in fams for r in runs_of[f]):
        p("| model: activations (means over layers) | attention logits top-1 | median | top-1 / median | kurtosis "
          "| hidden states top-1 | median | top-1 / median | kurtosis | noise map A2's logits top-1 / median |")
        p("|---|---|---|---|---|---|---|---|---|---|")
        for f in fams:
            rs = runs_of[f]

            def act(kind, m, fmt="%.1f"):
                return ms([r["act"][kind][m] for r in rs], fmt)
            p("| %s | %s | %s | %s | %s | %s | %s | %s | %s | %s |" % (
                NAMES[f], act("logits1", "top1"), act("logits1", "median", "%.2f"), act("logits1", "ratio"),
                act("logits1", "kurtosis"), act("hidden", "top1"), act("hidden", "median", "%.2f"),
                act("hidden", "ratio"), act("hidden", "kurtosis"),
                act("logits2", "ratio") if "logits2" in rs[0]["act"] else "-"))
        p("")
    if all("lowbit" in r for f in fams for r in runs_of[f]):
        keys = ["%s/%s" % wk for wk in LOWBIT_ROWS]
        p("| model: against f32 (weights/KV) | %s |" % " | ".join(
            "%s: KL, top-1 agree, ppl change" % k for k in keys))
        p("|---|%s" % ("---|" * len(keys)))
        for f in fams:
            rs = runs_of[f]
            p("| %s | %s |" % (NAMES[f], " | ".join(
                "%s, %s, %s%%" % (ms([r["lowbit"][k]["kl"] for r in rs], "%.5f"),
                                  ms([r["lowbit"][k]["top1"] for r in rs], "%.3f"),
                                  ms([100 * r["lowbit"][k]["ppl_rel"] for r in rs], "%.2f")) for k in keys)))
        p("")
    lengths = sorted({c["length"] for c in any_run["grid"]})
    p("| model (N=8, R=1) | %s |" % " | ".join("%d tokens" % L for L in lengths))
    p("|---|%s" % ("---|" * len(lengths)))
    for f in fams:
        rs = runs_of[f]
        p("| %s | %s |" % (NAMES[f], " | ".join(
            ms([sum(c["correct"] for c in r["grid"] if c["length"] == L) /
                sum(c["total"] for c in r["grid"] if c["length"] == L) for r in rs]) for L in lengths)))
    text = "\n".join(out) + "\n"
    with open(os.path.join(a.workdir, "table.md"), "w") as f:
        f.write(text)
    print(text, end="")
    return 0


def main(argv=None):
    ap = cli.parser(__doc__, ["nice -n 19 /usr/bin/python3 tools/replicate.py all --workdir /tmp/rep",
                              "/usr/bin/python3 tools/replicate.py eval --workdir /tmp/rep --samples 10"], full=True)
    ap.add_argument("cmd", choices=["train", "eval", "table", "all"],
                    help="train the models, measure them (eval), print the tables again, or both run by run (all)")
    ap.add_argument("--workdir", default="/tmp/rep", help="one folder a family: checkpoints, models, results")
    ap.add_argument("--corpus", default=None, help="saved `bible -f Gen1:1-Rev22:21` output")
    ap.add_argument("--families", default=",".join(FAMILIES), help="comma-separated, among " + ", ".join(FAMILIES))
    ap.add_argument("--family", default=None, help=argparse.SUPPRESS)
    ap.add_argument("--seed", type=int, default=0, help=argparse.SUPPRESS)
    ap.add_argument("--seeds", default="0,1,2", help="comma-separated seeds (initial weights and batches), each 0 or more")
    ap.add_argument("--steps", type=int, default=2400, help="training steps, 1 or more")
    ap.add_argument("--dim", type=int, default=128, help="model width, a multiple of 2 x heads")
    ap.add_argument("--layers", type=int, default=2, help="layers, 1 or more")
    ap.add_argument("--heads", type=int, default=2, help="differential heads (standard: twice)")
    ap.add_argument("--hidden", type=int, default=352, help="FFN width, 1 or more")
    ap.add_argument("--ctx", type=int, default=256, help="training context, 2 or more")
    ap.add_argument("--batch", type=int, default=16, help="rows a batch, 1 or more")
    ap.add_argument("--accum", type=int, default=1, help="micro-batches per batch (tools/train.py)")
    ap.add_argument("--lr", type=float, default=2e-3, help="peak learning rate, above 0")
    ap.add_argument("--warmup", type=int, default=100, help="warm-up steps, 0 or more")
    ap.add_argument("--induction", type=int, default=900,
                    help="steps of the first stage, repeats only (copying by content), 0 to --steps")
    ap.add_argument("--retrieval", type=float, default=0.5, help="share of rows packed with retrieval documents, 0 to 1")
    ap.add_argument("--copy", type=float, default=0.25,
                    help="share of the second stage's rows packed with repeats of random tokens (copying, what retrieval needs), 0 to 1")
    ap.add_argument("--answer-weight", type=float, default=4.0, help="loss weight of answers' digits, above 0")
    ap.add_argument("--queries", type=int, default=4, help="questions a retrieval document asks at most, 1 or more")
    ap.add_argument("--start-len", type=int, default=128, help="the curriculum's first longest document, 48 to ctx")
    ap.add_argument("--ramp", type=float, default=0.5, help="share of the steps over which documents reach the whole row")
    ap.add_argument("--ckpt-minutes", type=float, default=1.5, help="minutes between checkpoints (resume points)")
    ap.add_argument("--init-from", default=None, metavar="DIR",
                    help="continue each run from DIR/FAMILY-sSEED/best.pt (an earlier train's workdir) "
                         "with a new optimizer and schedule and other batches (the seed + 1000)")
    ap.add_argument("--threads", type=int, default=1, help="torch threads a model, 1 or more")
    ap.add_argument("--jobs", type=int, default=1, help="models trained at once, 1 or more")
    ap.add_argument("--bin", default=os.path.join(ROOT, "examples"),
                    help="folder of the needle, score and lowbit programs (a copy stays put while others rebuild)")
    ap.add_argument("--samples", type=int, default=30, help="needle samples per (depth, length) cell, 1 or more")
    a = ap.parse_args(argv)
    if not 0 <= a.induction <= a.steps:
        ap.error("--induction %d: the first stage's steps must be 0 to --steps (%d)" % (a.induction, a.steps))
    if a.cmd == "all":
        # run by run, each measured as soon as it is trained: a session cut short keeps the
        # runs it finished, measured, with every family at the same number of seeds
        for fam, seed in runs(a):
            one = argparse.Namespace(**dict(vars(a), families=fam, seeds=str(seed)))
            if cmd_train(one) or cmd_eval(one):
                return 1
        return cmd_table(a)
    return {"train": cmd_train, "eval": cmd_eval, "table": cmd_table}[a.cmd](a)


if __name__ == "__main__":
    sys.exit(main())
