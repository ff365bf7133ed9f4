#!/usr/bin/python3
"""Write the tokenizer's test fixtures (read by tests/test_tokenizer.c).

Run from anywhere with Debian's python3 (needs python3-regex and numpy):

    apt-get install -y python3-regex
    /usr/bin/python3 tools/make_tok_fixtures.py

tests/fixtures/pretok.txt
    Expected cl100k_base pre-tokenizer pieces. The reference is python3-regex (a backtracking
    engine with Unicode 15.0 tables in Debian 12, like tiktoken's fancy-regex) running tiktoken's
    own pattern. Input bytes that are not UTF-8 are decoded with errors="replace" (one U+FFFD per
    maximal ill-formed subsequence, as Rust's from_utf8_lossy does) and each piece is mapped back
    to the bytes it covers: that is the rule dintattn documents for invalid UTF-8. Cases: the
    hand-reasoned splits in REASONED (checked here against the regex first: the script fails if
    the reasoning was wrong), the tricky strings in TRICKY, and RANDOM_CASES random mixtures of
    the fragments in POOL.  Line format: HEX(input) TAB piece byte lengths, comma-separated,
    TAB '#' and the input's Python repr.

tests/fixtures/pretok_families.txt
    Expected pieces of every split pattern family dintattn knows by name (FAMILIES: GPT-2's as
    tiktoken first published it and as HF's ByteLevel has it, tiktoken's current possessive
    rewrites of r50k and cl100k (which splits a text's trailing whitespace differently from the
    original), cl100k as first published = Llama-3's, o200k, Qwen2's,
    DeepSeek-V3's Sequence of three Splits), again by python3-regex, on the REASONED and TRICKY
    strings and FAMILY_RANDOM_CASES random mixtures of FAMILY_POOL (mixed scripts, every general
    category the patterns name, digits, punctuation, whitespace runs, contractions in all cases,
    emoji, combining marks, ill-formed UTF-8). A sequence splits each piece of one pattern with
    the next; text no match covers is a piece of its own (HF's "Isolated"). Lines:
    "pattern NAME K HEX(regex)" for the K-th regex of family NAME, "families NAME NAME ...", then
    HEX(input) TAB the piece lengths (comma-separated bytes) of each family, TAB-separated.

tests/fixtures/regex_random.txt
    A differential test of the regex matcher: REGEX_RANDOM_PATTERNS random patterns of its subset
    (random_pattern) and python3-regex's pieces of 10 random strings each (gaps kept, as above).
    Patterns python3-regex cannot compile are skipped; dintattn may refuse others (those that can
    match the empty string, or repeat something that can) -- "E" marks those python matched empty
    with, which dintattn must refuse.

tests/fixtures/toy.tiktoken
    A hand-made rank file: the 256 single bytes at ranks 0..255 (rank = byte value), then the
    merges in TOY_MERGES at ranks 256... (test_tokenizer.c's expected ids are reasoned from it).

tests/fixtures/tok_model.safetensors
    A tiny random model (tools/make_model.py) carrying toy.tiktoken as tensor tokenizer.ranks,
    with special tokens <|endoftext|> = 300 (EOS) and <|bos|> = 301 (BOS), vocab_size 310.

tests/fixtures/tok_model_small_vocab.safetensors
    The same tokenizer, no special tokens, in a model of vocab_size 280 (< its 286 ids).

tests/fixtures/tok_model_regex.safetensors, tok_model_bad_pattern.safetensors
    tok_model's tokenizer with "pattern": {"regex": ["\\p{N}", GPT2]} (a sequence: single digits,
    then GPT-2's split), and with {"regex": "(?<=a)b"} (a lookbehind, which the matcher refuses).
"""

import base64
import codecs
import json
import os
import random
import sys

import regex

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import cli  # noqa: E402
import make_model  # noqa: E402
import safetensors_io  # noqa: E402

FIX = os.path.join(HERE, "..", "tests", "fixtures")

# tiktoken's cl100k_base pattern, verbatim
CL100K = (r"""(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*|"""
          r"""\s*[\r\n]+|\s+(?!\S)|\s+""")
PAT = regex.compile(CL100K)

# (input, pieces) worked out by hand from the pattern, alternative by alternative.
REASONED = [
    # contractions match in any case (?i:), only right after the apostrophe, and take no more
    ("I'm", ["I", "'m"]),
    ("WE'RE", ["WE", "'RE"]),
    ("they'Ve", ["they", "'Ve"]),
    ("it'S", ["it", "'S"]),
    ("'sup", ["'s", "up"]),
    ("'Ll", ["'Ll"]),
    # U+017F (long s) folds to s
    ("'\u017f", ["'\u017f"]),
    # a space before the apostrophe makes it punctuation: " '" then the letters
    ("x 're", ["x", " '", "re"]),
    # one non-letter, non-digit, non-newline character joins the letters after it
    ("(hello", ["(hello"]),
    ("\thello", ["\thello"]),
    # digits go in groups of at most three, from the left
    ("1234567", ["123", "456", "7"]),
    ("x12", ["x", "12"]),
    # a whitespace run gives its last character to the word after it ...
    ("a   b", ["a", "  ", " b"]),
    # ... unless the run ends the text
    ("a   ", ["a", "   "]),
    # a single space before punctuation joins it; newlines after punctuation join it
    ("a !!!\n\nb", ["a", " !!!\n\n", "b"]),
    # whitespace up to the last newline of the run is one piece, the rest goes on
    ("a \n \n  b", ["a", " \n \n", " ", " b"]),
    ("x\r\ny", ["x", "\r\n", "y"]),
    # a lone space before a digit is its own piece (\s+ of one)
    ("a 1", ["a", " ", "1"]),
    # combining marks are not letters
    ("cafe\u0301", ["cafe", "\u0301"]),
    # an ill-formed byte is a character of no class: here it joins the letters after it
    (b"\xffabc", [b"\xffabc"]),
]

TRICKY = [
    "Hello world", "Hello, world!", "don't DON'T Don'T", "I'LL we'D you'VE", "'s's'S", "''s",
    "1", "12", "123", "1234", "12345", "123456", "1234567", "3.14159", "1,234,567", "  42", " 42 ",
    "\u0661\u0662\u0663\u0664", "\u00b2\u00b3\u00bd", "x\u00b2",
    "   leading", "trailing   ", "   ", " ", "\n", "\n\n\n", "a\n\n\nb", "a \n", "a  \n  b",
    "line1\r\nline2\r\n", "\r\r\n\n", "\t\tindent", "a\t\tb", "a\u00a0b", "a\u00a0\u00a0b", "\u3000\u3000x",
    "x\u2028y", "x\u0085y", "x\ufeffy", "\u200bx", "a\u000b\u000cb",
    "!!!", "...\n", "?!\r\n\r\nNext", " --- ", "a.b.c", "(x)", "\"quoted\"", "#include <stdio.h>",
    "def f(x):\n    return x**2\n", "http://example.com/a?b=c&d=e", "user@example.com",
    "e\u0301", "\u1e9b\u0323", "\u0928\u092e\u0938\u094d\u0924\u0947", "\u0e2a\u0e27\u0e31\u0e2a\u0e14\u0e35",
    "\u4f60\u597d\uff0c\u4e16\u754c", "\u65e5\u672c\u8a9e\u306e\u6587", "\ud55c\uad6d\uc5b4",
    "\u041f\u0440\u0438\u0432\u0435\u0442, \u043c\u0438\u0440!", "\u0645\u0631\u062d\u0628\u0627",
    "\U0001f600", "\U0001f44d\U0001f3fd", "\U0001f468\u200d\U0001f469\u200d\U0001f467", "\U0001f1eb\U0001f1f7",
    "a\U0001f600b", " \U0001f600\U0001f600", "\u2764\ufe0f",
    "\x00\x01\x1f", "a\x00b", "\x1c\x1d\x1e\x1f", "\x7f",
    "<|endoftext|>", "x<|endoftext|>y",
    b"\x80", b"\xc3", b"\xc3(", b"\xe2\x82", b"\xe2\x82(", b"\xed\xa0\x80", b"\xf0\x9f\x98", b"\xf4\x90\x80\x80",
    b"\xc0\xaf", b"a\xffb", b" \xff", b"\xff ", b"'\xff", b"1\xff2", b"\xe2\x82\xac", b"\xff\xfe\xfd",
]

POOL = [
    "a", "Z", "hello", "World", "\u00e9", "\u00df", "\u0436", "\u4e2d", "\u65e5\u672c", "\U0001f600",
    "\U0001f44d\U0001f3fd", "1", "42", "9999", "\u0663", "\u00b2", "\u00bd", " ", "  ", "\t", "\n", "\r\n",
    "\r", "\u00a0", "\u3000", "\u2028", "\u0085", "\ufeff", "\u200b", "\u0301", "'", "'s", "'LL", "'Re",
    "'\u017f", "!", "...", "-", "\"", "(", "\x00", "\x1c", "\x7f", b"\xff", b"\xc3", b"\xe2\x82", b"\x80",
    b"\xed\xa0\x80", b"\xf0\x9f",
]
RANDOM_CASES = 400

# The split patterns by family, verbatim from their sources (tiktoken's tiktoken_ext/openai_public.py,
# old and current; the tokenizer.json files of Llama-3, Qwen2 and DeepSeek-V3).
GPT2 = r"""'s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+"""
FAMILIES = [
    ("gpt2", [GPT2]),
    ("r50k_possessive", [r"""'(?:[sdmt]|ll|ve|re)| ?\p{L}++| ?\p{N}++| ?[^\s\p{L}\p{N}]++|\s++$|\s+(?!\S)|\s"""]),
    ("cl100k", [CL100K]),
    ("cl100k_possessive", [r"""'(?i:[sdmt]|ll|ve|re)|[^\r\n\p{L}\p{N}]?+\p{L}++|\p{N}{1,3}+| ?[^\s\p{L}\p{N}]++"""
                           r"""[\r\n]*+|\s++$|\s*[\r\n]|\s+(?!\S)|\s"""]),
    ("o200k", ["|".join([
        r"""[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]*[\p{Ll}\p{Lm}\p{Lo}\p{M}]+(?i:'s|'t|'re|'ve|'m|'ll|'d)?""",
        r"""[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]+[\p{Ll}\p{Lm}\p{Lo}\p{M}]*(?i:'s|'t|'re|'ve|'m|'ll|'d)?""",
        r"""\p{N}{1,3}""",
        r""" ?[^\s\p{L}\p{N}]+[\r\n/]*""",
        r"""\s*[\r\n]+""",
        r"""\s+(?!\S)""",
        r"""\s+""",
    ])]),
    ("qwen2", [r"""(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+"""
               r"""|\s+(?!\S)|\s+"""]),
    # the CJK class as dintattn.h writes it: \u escapes for U+4E00 (一) .. U+9FA5 (龥) etc.
    ("deepseek_v3", [r"""\p{N}{1,3}""", r"""[\u4E00-\u9FA5\u3040-\u309F\u30A0-\u30FF]+""",
                     r"""[!"#$%&'()*+,\-./:;<=>?@\[\\\]^_`{|}~][A-Za-z]+|[^\r\n\p{L}\p{P}\p{S}]?[\p{L}\p{M}]+"""
                     r"""| ?[\p{P}\p{S}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+"""]),
]
FAMILY_POOL = POOL + [
    "A", "b", "Hello", "WORLD", "camelCase", "HTTPServer", "iPhone", "\u01c5", "\u01c4", "\u01c6", "\u02b0",
    "\u00aa", "\u00c9t\u00e9", "\u0130", "\u0131", "\u03a3\u03c3\u03c2", "\u10d0", "\u0915\u093e", "\u093e",
    "\u20dd", "\u0488", "\u1160", "\u216b", "\u2167", "\u00bc", "\u2460", "\u0e51", "\u07c0", "\u3041\u3093",
    "\u30ab\u30bf\u30ab\u30ca", "\u30fc", "\u309f", "\u30a0", "\u4e00", "\u9fa5", "\u9fa6", "\u6f22\u5b57",
    "\uac00", "\u3131", "\uff21", "\uff41", "\uff11", "\u00bf", "\u3001", "\u3002", "\u00ab", "\u2014", "$", "+",
    "\u20ac", "\u00a9", "^", "`", "~", "|", "/", "//", "\\", "_", "@", "#", "%", "&", "*", "<", ">", "=", ";",
    ":", ",", ".", "?", "[", "]", "{", "}", "(", ")", "\"", "'", "''", "'s", "'S", "'t", "'T", "'re", "'RE", "'rE",
    "'Re", "'ve", "'VE", "'vE", "'m", "'M", "'ll", "'LL", "'lL", "'Ll", "'d", "'D", "'\u017f", "'\u212a", "'k",
    "'x", "' s", "123", "1234567", "3.14", "1,000", "\u0660\u0661\u0662\u0663", "  ", "   ", "    ", "\t\t",
    "\n\n", "\r\n\r\n", " \n ", "\u2003", "\u2003\u2003", "\u3000\u3000", "\u000b", "\u000c", "\u001c",
    "\U0001f600", "\U0001f680", "\U0001f468\u200d\U0001f469", "\U0001f1eb\U0001f1f7", "\u2764\ufe0f", "\ufe0f",
    "\u200d", "\u00ad", "\ufffd", "\U0001d400", "\U00020000", "\U0001f3fb", "\U000e0001", "\uE000",
    b"\xff", b"\xfe", b"\xc0", b"\xe0\x80", b"\xed\xbf\xbf", b"\xf4\x90", b"\x9f", b"\xf0\x9f\x98",
]
FAMILY_RANDOM_CASES = 2500

TOY_MERGES = ["th", "he", "the", " t", " the", "in", "ng", "ing", "an", "nd", "and", " a", " and", "aa", "aaaa",
              "er", "re", "ere", "12", "123", "\n\n", "  ", "lo", "hel", "hello", "'s", "\u00e9", b"\xe2\x82",
              "<|", "|>"]


def as_bytes(x):
    return x if isinstance(x, bytes) else x.encode("utf-8")


def decode_with_offsets(b):
    """b decoded with one U+FFFD per ill-formed subsequence, and the byte offset of each character
    (plus the end)."""
    errors = []

    def record(exc):
        errors.append((exc.start, exc.end))
        return ("\ufffd", exc.end)

    codecs.register_error("dintattn_record", record)
    text = b.decode("utf-8", "dintattn_record")
    offs, p = [], 0  # offs[k]: the byte offset of character k
    for ch in text:
        offs.append(p)
        if errors and errors[0][0] == p:
            p = errors.pop(0)[1]
        else:
            p += len(ch.encode("utf-8"))
    assert p == len(b) and not errors
    offs.append(p)
    return text, offs


def split(b):
    """The pieces (as bytes) the pattern cuts b into, with one U+FFFD per ill-formed subsequence."""
    text, offs = decode_with_offsets(b)
    pieces, end = [], 0
    for m in PAT.finditer(text):
        assert m.start() == end, "the pattern skipped characters"
        pieces.append(b[offs[m.start()]:offs[m.end()]])
        end = m.end()
    assert end == len(text)
    return pieces


def write_pretok(path):
    cases = []
    for text, want in REASONED:
        got = split(as_bytes(text))
        if got != [as_bytes(w) for w in want]:
            sys.exit("make_tok_fixtures: reasoned split of %r is %r, the regex says %r" % (text, want, got))
        cases.append(as_bytes(text))
    cases += [as_bytes(t) for t in TRICKY]
    rng = random.Random(1)
    for _ in range(RANDOM_CASES):
        cases.append(b"".join(as_bytes(rng.choice(POOL)) for _ in range(rng.randint(1, 16))))
    with open(path, "w", encoding="ascii") as f:
        f.write("# cl100k_base pre-tokenizer pieces by python3-regex (regex module %s); written by "
                "tools/make_tok_fixtures.py.\n" % regex.__version__)
        f.write("# HEX(input) TAB piece lengths in bytes TAB # repr(input)\n")
        for b in cases:
            lens = ",".join(str(len(p)) for p in split(b))
            f.write("%s\t%s\t# %s\n" % (b.hex(), lens, ascii(b)[2:-1]))
    print("make_tok_fixtures: %d pre-tokenizer cases -> %s" % (len(cases), path))


def split_seq(b, pats):
    """The pieces (as bytes) of b split by pats in sequence, gaps kept (HF's Isolated)."""
    text, offs = decode_with_offsets(b)
    pieces = [(0, len(text))]
    for pat in pats:
        new = []
        for a, z in pieces:
            pos = 0  # each piece is a subject of its own (a lookahead or $ sees only it)
            for m in pat.finditer(text[a:z]):
                assert m.end() > m.start(), "an empty match"
                if m.start() > pos:
                    new.append((a + pos, a + m.start()))
                new.append((a + m.start(), a + m.end()))
                pos = m.end()
            if a + pos < z:
                new.append((a + pos, z))
        pieces = new
    return [b[offs[a]:offs[z]] for a, z in pieces]


def write_families(path):
    compiled = [(name, [regex.compile(p) for p in pats]) for name, pats in FAMILIES]
    cases = [as_bytes(t) for t, _ in REASONED] + [as_bytes(t) for t in TRICKY]
    rng = random.Random(2)
    for _ in range(FAMILY_RANDOM_CASES):
        cases.append(b"".join(as_bytes(rng.choice(FAMILY_POOL)) for _ in range(rng.randint(1, 24))))
    with open(path, "w", encoding="ascii") as f:
        f.write("# Split pattern families' pieces by python3-regex (regex module %s); written by "
                "tools/make_tok_fixtures.py.\n" % regex.__version__)
        for name, pats in FAMILIES:
            for k, p in enumerate(pats):
                f.write("pattern %s %d %s\n" % (name, k, p.encode("utf-8").hex()))
        f.write("families %s\n" % " ".join(name for name, _ in FAMILIES))
        for b in cases:
            cols = [b.hex()]
            for name, pats in compiled:
                pieces = split_seq(b, pats)
                assert b"".join(pieces) == b
                cols.append(",".join(str(len(p)) for p in pieces))
            f.write("\t".join(cols) + "\n")
        # sanity: the two forms of GPT-2's pattern split alike, cl100k is pretok.txt's. The two forms
        # of cl100k's do not: the rewrite's \s++$ takes a text's trailing " \n " whole, where the
        # original gives " \n", " " (tiktoken changed its splits; "cl100k" in dintattn is the original)
        for b in cases:
            assert split_seq(b, compiled[0][1]) == split_seq(b, compiled[1][1]), b
            assert split_seq(b, compiled[2][1]) == split(b), b
    print("make_tok_fixtures: %d cases x %d families -> %s" % (len(cases), len(FAMILIES), path))


# Random patterns of the matcher's subset (differential test): literals, escapes, classes, groups,
# (?i:), lookaheads with bounded bodies, greedy/lazy/possessive quantifiers, nested 3 deep.
RX_LIT = ["a", "b", "A", "B", "s", "S", "k", "K", " ", "\\n", "1", "2", "'", "\\-", "\u00e9", "\u4e2d", "\u017f",
          "\\.", "x"]
RX_ILIT = ["a", "b", "A", "B", "s", "S", "k", "K", "'", "x", " ", "1"]
RX_ESC = ["\\s", "\\S", "\\p{L}", "\\p{Lu}", "\\p{Ll}", "\\p{N}", "\\p{M}", "\\p{P}", "\\p{S}", "\\P{L}",
          "\\P{N}", "."]
RX_CITEM = ["a", "b", "A", "s", "k", "1", " ", "a-c", "A-C", "0-9", "\\s", "\\p{L}", "\\p{N}", "\\n", "'", "\\-",
            "\u00e9", "\u4e2d"]
RX_ICITEM = ["a", "b", "A", "s", "k", "1", " ", "a-c", "A-C", "r-t", "J-L", "\\s", "'", "0-9"]
RX_ALPHABET = ["a", "b", "A", "B", "s", "S", "\u017f", "k", "K", "\u212a", " ", "  ", "\n", "1", "2", "'", "-", ".",
               "\u00e9", "e\u0301", "\u4e2d", "!", "$", "x", b"\xff", b"\xe2\x82"]
REGEX_RANDOM_PATTERNS = 700


def random_pattern(rng):
    def quant(single):
        if rng.random() < 0.5:
            return ""
        q = rng.choice(["?", "*", "+", "{1,3}", "{2}", "{0,2}", "{2,}"])
        r = rng.random()
        if r < 0.2:
            q += "?"
        elif r < 0.4 and single:
            q += "+"
        return q

    def atom(d, ic, bounded):
        r = rng.random()
        if d <= 0 or r < 0.45:
            return rng.choice(RX_ILIT if ic else RX_LIT + RX_ESC), True
        if r < 0.65:
            items = [rng.choice(RX_ICITEM if ic else RX_CITEM) for _ in range(rng.randint(1, 3))]
            return "[" + ("^" if rng.random() < 0.3 else "") + "".join(items) + "]", True
        if r < 0.8:
            return "(?:" + alt(d - 1, ic, bounded) + ")", False
        if r < 0.9 and not ic:
            return "(?i:" + alt(d - 1, True, bounded) + ")", False
        return "(?" + rng.choice("=!") + alt(d - 1, ic, True) + ")", False

    def seq(d, ic, bounded):
        out = ""
        for _ in range(rng.randint(1, 3)):
            a, single = atom(d, ic, bounded)
            q = quant(single)
            if bounded and q and (q[0] in "*+" or q.startswith("{2,}")):
                q = "?"  # a lookahead's body must be bounded
            out += a + q
        return out

    def alt(d, ic, bounded):
        return "|".join(seq(d, ic, bounded) for _ in range(rng.randint(1, 3)))

    return alt(3, False, False)


def write_regex_random(path):
    import re as stdlib_re
    rng = random.Random(3)
    lines, n = [], 0
    while n < REGEX_RANDOM_PATTERNS:
        p = random_pattern(rng)
        # python3-regex bug: with a (?i:) anywhere in the pattern, a negated class of several items
        # holding a cased letter is case-folded too ((?i:s)|[^\-A] does not match "a"; Python's re,
        # Rust's regex and Oniguruma do): such patterns would test python3-regex, not dintattn
        if "(?i:" in p and stdlib_re.search(r"\[\^[^\]]*[A-Za-z\u00e9\u017f]", p):
            continue
        try:
            c = regex.compile(p)
        except regex.error:
            continue
        lines.append("P\t" + p.encode("utf-8").hex())
        for _ in range(10):
            b = b"".join(as_bytes(rng.choice(RX_ALPHABET)) for _ in range(rng.randint(0, 12)))
            try:
                pieces = split_seq(b, [c])
            except AssertionError:  # an empty match: dintattn must refuse the pattern
                lines.append("E")
                break
            lines.append(b.hex() + "\t" + ",".join(str(len(x)) for x in pieces))
        n += 1
    with open(path, "w", encoding="ascii") as f:
        f.write("# Random patterns of the matcher's subset and their pieces by python3-regex (regex module %s); "
                "written by tools/make_tok_fixtures.py.\n" % regex.__version__)
        f.write("# P TAB HEX(pattern), then HEX(input) TAB piece lengths per input; E: python3-regex matched the "
                "empty string (dintattn refuses such patterns)\n")
        f.write("\n".join(lines) + "\n")
    print("make_tok_fixtures: %d random patterns -> %s" % (n, path))


def toy_ranks():
    lines = [base64.b64encode(bytes([i])).decode() + " %d" % i for i in range(256)]
    for k, m in enumerate(TOY_MERGES):
        lines.append(base64.b64encode(as_bytes(m)).decode() + " %d" % (256 + k))
    return ("\n".join(lines) + "\n").encode("ascii")


def main():
    ap = cli.parser(__doc__, ["/usr/bin/python3 tools/make_tok_fixtures.py && git diff --stat tests/fixtures"])
    ap.add_argument("--out", default=FIX, metavar="DIR",
                    help="the folder to write the fixtures to (default: tests/fixtures)")
    out = ap.parse_args().out
    write_pretok(os.path.join(out, "pretok.txt"))
    write_families(os.path.join(out, "pretok_families.txt"))
    write_regex_random(os.path.join(out, "regex_random.txt"))
    ranks = toy_ranks()
    with open(os.path.join(out, "toy.tiktoken"), "wb") as f:
        f.write(ranks)
    import numpy as np
    cfg = {"dim": 8, "n_layers": 1, "vocab_size": 310, "hidden_dim": 16, "max_seq_len": 16, "n_heads": 2,
           "head_dim": 4, "attention": "diff"}
    tensors = make_model.make_tensors(cfg, seed=7)
    st = {k: ("F32", v) for k, v in tensors.items()}
    st["tokenizer.ranks"] = ("U8", np.frombuffer(ranks, dtype=np.uint8))
    meta = make_model._metadata(cfg)
    meta["tokenizer"] = json.dumps({"type": "tiktoken", "pattern": "cl100k",
                                    "special_tokens": {"<|endoftext|>": 300, "<|bos|>": 301},
                                    "bos_id": 301, "eos_id": 300})
    path = os.path.join(out, "tok_model.safetensors")
    safetensors_io.write(path, st, meta)
    # the same tokenizer (without special tokens) in a model whose vocabulary is too small for it
    small = dict(cfg, vocab_size=280)
    st = {k: ("F32", v) for k, v in make_model.make_tensors(small, seed=7).items()}
    st["tokenizer.ranks"] = ("U8", np.frombuffer(ranks, dtype=np.uint8))
    meta = make_model._metadata(small)
    meta["tokenizer"] = json.dumps({"type": "tiktoken", "pattern": "cl100k"})
    safetensors_io.write(os.path.join(out, "tok_model_small_vocab.safetensors"), st, meta)
    # the toy tokenizer with a split of its own (single digits, then GPT-2's pattern on the rest), and
    # with a pattern the matcher refuses (a lookbehind)
    for name, pattern in (("tok_model_regex", {"regex": [r"\p{N}", GPT2]}), ("tok_model_bad_pattern", {"regex": r"(?<=a)b"})):
        st = {k: ("F32", v) for k, v in tensors.items()}
        st["tokenizer.ranks"] = ("U8", np.frombuffer(ranks, dtype=np.uint8))
        meta = make_model._metadata(cfg)
        meta["tokenizer"] = json.dumps({"type": "tiktoken", "pattern": pattern, "special_tokens": {"<|endoftext|>": 300}})
        safetensors_io.write(os.path.join(out, name + ".safetensors"), st, meta)
    print("make_tok_fixtures: toy.tiktoken (%d tokens), tok_model.safetensors" % (256 + len(TOY_MERGES)))


if __name__ == "__main__":
    main()
