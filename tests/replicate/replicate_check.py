#!/usr/bin/python3
"""The replication's tools (tools/train.py, tools/replicate.py) against what they must agree with:

- each family the trainer builds (standard, DIFF, DINT) is docs/format.md's: `train.py verify` exports a
  random model of it and compares torch's logits with tools/reference.py's and examples/logits'
  (1e-4), F32 and BF16; the three have the same parameter count (within the lambdas and head
  norms: under 0.1%);
- the retrieval documents are examples/needle's prompts: the same sentences ("The magic number of
  <City> is <7 digits>.", the question, the answer sentence), tokenized exactly as the whole text
  encodes, within the context, the answer's number that of the answer needle (the first), and no
  training city among examples/needle's (read from its source), so retrieval is measured on
  unseen keys;
- the batches: the first --induction steps are repeats only (ordinary tokens, then the same
  again), later steps the stated mix of retrieval, repeat and text rows, with only the answers'
  digits weighted and the curriculum starting where the first stage ends.

    /usr/bin/python3 tests/replicate/replicate_check.py [PATH/TO/logits]

Needs python3-torch, python3-numpy and python3-regex (skips itself without them). Prints one
line per failed check and "replicate_check: N passed, M failed" last."""

import os
import random
import re
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
import checklib  # noqa: E402  (tests/checklib.py)
from checklib import ROOT, check  # noqa: E402

LOGITS = os.path.abspath(sys.argv[1]) if len(sys.argv) > 1 else os.path.join(ROOT, "examples", "logits")


def main():
    torch, train, replicate, train_tokenizer = checklib.import_or_skip(
        "replicate_check", "torch", "train", "replicate", "train_tokenizer")
    checklib.make_if_missing([LOGITS], ["examples/logits"])
    work = tempfile.mkdtemp(prefix="replicate_check.")
    ranks = replicate.ranks_file(work)
    env = dict(os.environ, OPENBLAS_CORETYPE=os.environ.get("OPENBLAS_CORETYPE", "Haswell"))

    # the families against the reference and the C engine
    counts = {}
    for fam in replicate.FAMILIES:
        p = subprocess.run([sys.executable, os.path.join(ROOT, "tools", "train.py"), "verify", "--ranks", ranks,
                            "--attention", fam, "--size", "tiny", "--workdir", os.path.join(work, fam)],
                           capture_output=True, text=True, env=env, cwd=ROOT)
        check("train.py verify --attention %s" % fam, p.returncode == 0 and "VERIFY OK" in p.stdout
              and "C          vs reference" in p.stdout, (p.stdout + p.stderr)[-600:])
        c = train.make_config(128, 4, 2, 352, 4096, 512, fam)
        check("%s is docs/format.md's attention %r" % (fam, fam), c["attention"] == fam)
        counts[fam] = train.nparams(train.Model(c))
    for fam, n in counts.items():
        check("%s has the standard Transformer's parameter count" % fam,
              abs(n - counts["standard"]) <= 1e-3 * counts["standard"], "%d vs %d" % (n, counts["standard"]))

    # the retrieval documents
    with open(os.path.join(ROOT, "examples", "needle.c")) as f:
        src = f.read()
    block = src[src.index("cities[] = {"):]
    needle_cities = set(re.findall(r'"([^"]+)"', block[:block.index("};")]))
    check("examples/needle's 64 cities read", len(needle_cities) == 64, str(len(needle_cities)))
    overlap = needle_cities & set(replicate.TRAIN_CITIES)
    check("no training city is one of examples/needle's", not overlap, str(sorted(overlap)))
    check("training cities are distinct", len(set(replicate.TRAIN_CITIES)) == len(replicate.TRAIN_CITIES))

    r = train_tokenizer.load_ranks(ranks)
    enc = train_tokenizer.Encoder(r)
    inv = {v: k for k, v in r.items()}
    eot = len(r)
    words, held = replicate.chapter_words()
    check("held-out words are not training words' prefix", words[:50] != held[:50])
    gen = replicate.Retrieval(enc, words, eot)
    rng = random.Random(7)
    needle = re.compile(r"The magic number of ([A-Z][a-z]+) is ([1-9][0-9]{6})\.")
    tail = re.compile(r"\n\nWhat (?:is the magic number of ([A-Z][a-z]+)|are the magic numbers of ([A-Z][a-z]+) and "
                      r"([A-Z][a-z]+))\? The magic number of ([A-Z][a-z]+) is ([1-9][0-9]{6})\.$")
    bad = []
    for i in range(300):
        ctx = rng.choice([160, 300, 513])
        ids = gen.doc(rng, ctx)
        text = b"".join(inv[t] for t in ids[1:]).decode("utf-8")
        m = tail.search(text)
        found = needle.findall(text[:m.start()] if m else text)
        why = None
        if ids[0] != eot or len(ids) > ctx:
            why = "starts with EOT and fits %d tokens" % ctx
        elif enc.encode(text) != ids[1:]:
            why = "tokens differ from the whole text's encoding"
        elif not m:
            why = "no question and answer at the end"
        elif not 1 <= len(found) <= 8 or len({c for c, _ in found}) != len(found):
            why = "1 to 8 needles of distinct cities"
        elif any(c not in replicate.TRAIN_CITIES for c, _ in found):
            why = "a needle of a city outside the training list"
        else:
            asked = [x for x in m.groups()[:3] if x]
            numbers = dict(found)
            if m.group(4) not in asked or numbers.get(m.group(4)) != m.group(5) or any(a not in numbers for a in asked):
                why = "the answer is the asked needle's number"
            elif "  " in text or text.startswith(" "):
                why = "words joined by single spaces"
        if why:
            bad.append("doc %d (%s): %s" % (i, why, text[-200:]))
    check("300 retrieval documents are examples/needle's format", not bad, "; ".join(bad[:3]))

    # the batches: the first stage is repeats only, the second the stated mix
    import argparse
    a = argparse.Namespace(induction=3, steps=10, ramp=0.5, start_len=128, ctx=256, batch=8,
                           retrieval=0.5, copy=0.25, queries=4, answer_weight=4.0)
    next_batch = replicate.make_batches(gen, torch.arange(5000) % (eot - 256) + 256, a)
    g = torch.Generator().manual_seed(0)

    def segments(row):
        """The row's EOT-led segments, the last (cut) one left out."""
        cuts = [i for i, t in enumerate(row) if t == eot] + [len(row)]
        return [row[cuts[i] + 1:cuts[i + 1]] for i in range(len(cuts) - 2)]
    for step in range(4):
        x, y, w = next_batch(g, step)
        rows = torch.cat([x, y[:, -1:]], 1).tolist()
        kinds = []
        for row in rows:
            segs = segments(row)
            if segs and all(len(s) % 2 == 0 and s[:len(s) // 2] == s[len(s) // 2:]
                            and all(256 <= t < eot for t in s) for s in segs):
                kinds.append("copy")
            elif eot in row and any(t < 256 for t in row):
                kinds.append("retrieval")
            else:
                kinds.append("text")
        want = ["copy"] * 8 if step < 3 else ["retrieval"] * 4 + ["copy"] * 2 + ["text"] * 2
        check("step %d's rows are %s" % (step, "repeats only" if step < 3 else "4 retrieval, 2 repeats, 2 text"),
              kinds == want and tuple(x.shape) == (8, 256), str(kinds))
        check("step %d: the answers' digits alone weigh %g" % (step, a.answer_weight),
              set(w.unique().tolist()) <= {1.0, 4.0} and (step < 3) == bool((w == 1.0).all()))
    check("the curriculum starts after the first stage",
          replicate.curriculum(a, 3) == (128, 2) and replicate.curriculum(a, 6.5) == (257, 8))

    # the training probe scores a model that knows every next token 1.00 and one that predicts
    # the current token instead (an off-by-one) near 0: its positions are the answers' and the
    # repeats' second halves
    seen = []

    class Recorded(replicate.Retrieval):
        def doc(self, *args, **kw):
            seen.append(super().doc(*args, **kw))
            return seen[-1]

        def repeat(self, *args, **kw):
            seen.append(super().repeat(*args, **kw))
            return seen[-1]

    class Oracle(torch.nn.Module):
        def __init__(self, shift):
            super().__init__()
            self.shift = shift

        def forward(self, x):
            out = torch.zeros(x.shape[0], x.shape[1], eot + 1)
            for b, row in enumerate(x.tolist()):
                full = next(s for s in seen if s[:len(row)] == row)
                nxt = full[1 - self.shift:len(row) + 1 - self.shift]
                out[b, torch.arange(len(row)), torch.tensor(nxt)] = 1.0
            return out
    real, replicate.Retrieval = replicate.Retrieval, Recorded
    try:
        probe = replicate.make_probe(enc, held, eot, 256)
    finally:
        replicate.Retrieval = real
    got = probe(Oracle(0))
    check("the probe scores a model that knows the next token 1.00",
          got == "N=1 exact 1.00 first digit 1.00, N=4 exact 1.00 first digit 1.00, repeats 1.00", got)
    got = [float(v) for v in re.findall(r"\d\.\d\d", probe(Oracle(1)))]
    check("the probe scores an off-by-one model near 0", max(got) <= 0.15, str(got))

    # attention to the answer is measured where the first digit is predicted: after the answer's
    # space when the vocabulary splits it off (the shipped one does), at once when it joins them
    def decode_bytes(ids):
        return b"".join(inv[i] for i in ids)
    lead = replicate.answer_lead(enc.encode, decode_bytes, 5292717)
    rest = enc.encode(" 5292717")[len(lead):]
    check("the shipped vocabulary's answer: the space, then the digits",
          lead == enc.encode(" ") and decode_bytes(rest[:1]) == b"5", "%r %r" % (lead, rest))
    joined = replicate.answer_lead(lambda t: [t[:2]] + list(t[2:]), lambda ids: "".join(ids).encode(), 5292717)
    check("a vocabulary that joins the space to the digit: nothing before it", joined == [], repr(joined))
    return checklib.report("replicate_check")


if __name__ == "__main__":
    sys.exit(main())
