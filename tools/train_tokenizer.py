#!/usr/bin/python3
"""Train a small byte-level BPE tokenizer (tiktoken rank file) on the King James Bible.

Run with Debian's python3 (needs python3-regex; the corpus comes from the `bible-kjv` package):

    apt-get install -y python3-regex bible-kjv
    /usr/bin/python3 tools/train_tokenizer.py OUT.tiktoken [--vocab 4096] [--corpus FILE]

The corpus is extracted reproducibly with `bible -f "Gen1:1-Rev22:21"` (one verse per line,
prefixed by its reference), unless --corpus names a saved copy of that command's output.
References are stripped; every chapter becomes one document: its verses, one per line, each
ending in "\\n".  Documents are separated by the special token <|endoftext|> (see train.py).

Output: a tiktoken rank file, one `base64(token bytes) rank` line per token.  Ranks 0..255 are
the single bytes in byte order, then the merges in the order they were learned, so the usual
tiktoken encoding (split with the cl100k_base pattern, then repeatedly merge the adjacent pair
whose concatenation has the lowest rank) reproduces the trained segmentation.  The special
token <|endoftext|> is NOT in the file; its id is the number of ranks (= vocab - 1).

Training: pre-token frequencies are counted once with the cl100k_base pattern (merges never
cross pre-token boundaries), then merges run on the unique pre-tokens with incremental pair
counts.  Ties are broken deterministically (highest count, then smallest pair of bytes).  A merge
whose result already exists as a token (the same bytes reached by another split) is applied but
gets no new rank, so every line of the file is a distinct byte string.

As a module (train.py uses it):

    chapters = kjv_chapters(corpus_path=None)      # list of (book, chapter, text)
    ranks = load_ranks(path)                       # {bytes: rank}
    enc = Encoder(ranks); enc.encode(text)         # list of ids (no special tokens)
"""

import base64
import collections
import re as _re
import subprocess
import sys
import time

import regex

CL100K_PATTERN = (r"(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}|"
                  r" ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+")
PAT = regex.compile(CL100K_PATTERN)
ENDOFTEXT = "<|endoftext|>"

_REF = _re.compile(r"^([0-9]?[A-Za-z]+)(\d+):(\d+) (.*)$")


def kjv_raw(corpus_path=None):
    if corpus_path:
        with open(corpus_path, encoding="utf-8") as f:
            return f.read()
    return subprocess.run(["bible", "-f", "Gen1:1-Rev22:21"], check=True,
                          capture_output=True, text=True).stdout


def kjv_chapters(corpus_path=None):
    """[(book, chapter, text)] in Bible order; text = the chapter's verses, one per line."""
    chapters = []
    cur = None
    for line in kjv_raw(corpus_path).splitlines():
        line = line.strip()
        if not line:
            continue
        m = _REF.match(line)
        if not m:
            raise ValueError("unexpected line in bible output: %r" % line[:80])
        book, chap, verse = m.group(1), int(m.group(2)), m.group(4).strip()
        if cur is None or cur[0] != book or cur[1] != chap:
            cur = [book, chap, []]
            chapters.append(cur)
        cur[2].append(verse)
    return [(b, c, "".join(v + "\n" for v in vs)) for b, c, vs in chapters]


# ---------------------------------------------------------------------------------------------
# training
# ---------------------------------------------------------------------------------------------

def train_bpe(texts, vocab_size, log=print):
    """-> list of token byte strings, index = rank (256 single bytes first)."""
    n_merges = vocab_size - 1 - 256            # one id kept for <|endoftext|>
    freq = collections.Counter()
    for t in texts:
        freq.update(PAT.findall(t))
    words = [[bytes([b]) for b in w.encode("utf-8")] for w in freq]
    counts = [freq[w] for w in freq]
    log("%d pre-tokens, %d unique" % (sum(counts), len(words)))

    pair_count = collections.Counter()
    pair_words = collections.defaultdict(set)
    for wi, w in enumerate(words):
        c = counts[wi]
        for a, b in zip(w, w[1:]):
            pair_count[(a, b)] += c
            pair_words[(a, b)].add(wi)

    vocab = [bytes([i]) for i in range(256)]
    known = set(vocab)
    merges_done = 0
    while len(vocab) < 256 + n_merges:
        if not pair_count:
            break
        cnt = max(pair_count.values())
        a, b = min(p for p, c in pair_count.items() if c == cnt)   # ties: smallest pair
        if cnt < 2:
            break
        new = a + b
        if new not in known:
            known.add(new)
            vocab.append(new)
        merges_done += 1
        for wi in list(pair_words.pop((a, b), ())):
            w = words[wi]
            c = counts[wi]
            # remove this word's old pair counts, merge, add new ones
            for p in zip(w, w[1:]):
                pair_count[p] -= c
                if pair_count[p] <= 0:
                    del pair_count[p]
            out = []
            i = 0
            while i < len(w):
                if i + 1 < len(w) and w[i] == a and w[i + 1] == b:
                    out.append(new)
                    i += 2
                else:
                    out.append(w[i])
                    i += 1
            words[wi] = out
            for p in zip(out, out[1:]):
                pair_count[p] += c
                pair_words[p].add(wi)
        pair_count.pop((a, b), None)
        if len(vocab) % 500 == 0:
            log("  %d tokens (last %r x %d)" % (len(vocab), new, cnt))
    return vocab


def write_ranks(path, vocab):
    with open(path, "w") as f:
        for r, tok in enumerate(vocab):
            f.write("%s %d\n" % (base64.b64encode(tok).decode("ascii"), r))


def load_ranks(path):
    ranks = {}
    with open(path) as f:
        for line in f:
            if line.strip():
                tok, r = line.split()
                ranks[base64.b64decode(tok)] = int(r)
    return ranks


class Encoder:
    """tiktoken-style encoder: cl100k split, then lowest-rank pair merging per pre-token."""

    def __init__(self, ranks):
        self.ranks = ranks
        self.cache = {}

    def _bpe(self, piece):
        parts = [piece[i:i + 1] for i in range(len(piece))]
        ranks = self.ranks
        while len(parts) > 1:
            best, bi = None, -1
            for i in range(len(parts) - 1):
                r = ranks.get(parts[i] + parts[i + 1])
                if r is not None and (best is None or r < best):
                    best, bi = r, i
            if best is None:
                break
            parts[bi:bi + 2] = [parts[bi] + parts[bi + 1]]
        return [ranks[p] for p in parts]

    def encode(self, text):
        out = []
        for w in PAT.findall(text):
            ids = self.cache.get(w)
            if ids is None:
                ids = self._bpe(w.encode("utf-8"))
                self.cache[w] = ids
            out.extend(ids)
        return out


def main(argv=None):
    import cli   # beside this file
    ap = cli.parser(__doc__, ["/usr/bin/python3 tools/train_tokenizer.py /tmp/train/kjv.tiktoken --vocab 4096"])
    ap.add_argument("out", help="output tiktoken rank file")
    ap.add_argument("--vocab", type=int, default=4096,
                    help="total vocabulary incl. 256 bytes and <|endoftext|>, 258 or more")
    ap.add_argument("--corpus", help="saved output of `bible -f Gen1:1-Rev22:21` (default: run it)")
    a = ap.parse_args(argv)
    t0 = time.time()
    chapters = kjv_chapters(a.corpus)
    texts = [t for _, _, t in chapters]
    print("%d chapters, %d bytes" % (len(texts), sum(len(t) for t in texts)))
    vocab = train_bpe(texts, a.vocab)
    write_ranks(a.out, vocab)
    print("wrote %s: %d ranks (+ <|endoftext|> = id %d), %.1fs"
          % (a.out, len(vocab), len(vocab), time.time() - t0))
    # round trip check with the tiktoken-style encoder
    enc = Encoder(load_ranks(a.out))
    ids = [i for t in texts for i in enc.encode(t)]
    inv = {r: t for t, r in enc.ranks.items()}
    assert b"".join(inv[i] for i in ids) == "".join(texts).encode("utf-8")
    print("corpus = %d tokens (%.2f bytes/token)" % (len(ids), sum(len(t) for t in texts) / len(ids)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
