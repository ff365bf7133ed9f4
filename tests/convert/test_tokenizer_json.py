#!/usr/bin/python3
"""tools/convert.py's HF tokenizer.json -> "bpe" tokenizer format (docs/format.md section 5).

Small synthetic tokenizer.json dicts, one per component and setting: every supported HF model
field, normalizer, pre-tokenizer, added-token flag and decoder must map onto the format's steps
as the format says (the Llama-3/Qwen2 Sequence[Split, ByteLevel], GPT-2's lone ByteLevel,
DeepSeek-V3's three Splits, SentencePiece-style Llama-2/Gemma files, Metaspace in its new and
legacy spellings, String Splits, Digits); every unsupported one must be refused with one line
naming it (NFKC, Lowercase, BertPreTokenizer, WordPiece, dropout, a Split after ByteLevel, ...),
never approximated.  Merges in both syntaxes, the byte-level vocabulary's unmapping to bytes and
the rewrite of Oniguruma's `x{n,m}+` are checked on their own; `--format tokenizer` must write a
file holding only the tokenizer tensors and the metadata the format names (read back with
tools/safetensors_io.py).  The C side is checked against HF tokenizers itself by
tests/hf_tokenizer_check.sh.  Needs numpy (tools/safetensors_io.py)."""

import base64
import copy
import json
import os
import shutil
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import common  # noqa: E402
import inproc  # noqa: E402

import convert  # noqa: E402  (tools/convert.py, put on sys.path by inproc)

SP = "\u2581"
LLAMA3_RX = (r"(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*|"
             r"\s*[\r\n]+|\s+(?!\S)|\s+")


def gpt2_alphabet():
    return convert.bytes_to_unicode()


def byte_level_json(pre=None, decoder=None, merges_as="strings", extra_vocab=(), merges=(("Ġ", "t"), ("Ġt", "h"))):
    """A byte-level BPE tokenizer.json: the 256 byte tokens (ids 0..255 in byte order), then
    extra_vocab and the merges' results, and one special added token after them."""
    b2u = gpt2_alphabet()
    vocab = {b2u[b]: b for b in range(256)}
    for t in extra_vocab:
        vocab.setdefault(t, len(vocab))
    for a, b in merges:
        vocab.setdefault(a + b, len(vocab))
    if pre is None:
        pre = {"type": "ByteLevel", "add_prefix_space": False, "trim_offsets": True, "use_regex": True}
    if decoder is None:
        decoder = {"type": "ByteLevel", "add_prefix_space": True, "trim_offsets": True, "use_regex": True}
    ms = [" ".join(m) if merges_as == "strings" else list(m) for m in merges]
    return {"version": "1.0", "truncation": None, "padding": None,
            "added_tokens": [{"id": len(vocab), "content": "<|endoftext|>", "single_word": False, "lstrip": False,
                              "rstrip": False, "normalized": False, "special": True}],
            "normalizer": None, "pre_tokenizer": pre, "post_processor": None, "decoder": decoder,
            "model": {"type": "BPE", "dropout": None, "unk_token": None, "continuing_subword_prefix": None,
                      "end_of_word_suffix": None, "fuse_unk": False, "byte_fallback": False,
                      "vocab": vocab, "merges": ms}}


def sp_json(normalizer="llama2", pre=None, decoder="llama2"):
    """A SentencePiece-style BPE tokenizer.json (Llama-2's components): <unk> <s> </s>, the 256
    <0xHH> byte tokens, a few characters and merges."""
    vocab = {"<unk>": 0, "<s>": 1, "</s>": 2}
    for b in range(256):
        vocab["<0x%02X>" % b] = len(vocab)
    for t in (SP, "a", "b", "h", "é", SP + "a", SP + "ab", "ab", "hé"):
        vocab[t] = len(vocab)
    merges = [SP + " a", "a b", SP + "a b", "h é"]
    if normalizer == "llama2":
        normalizer = {"type": "Sequence", "normalizers": [{"type": "Prepend", "prepend": SP},
                                                          {"type": "Replace", "pattern": {"String": " "},
                                                           "content": SP}]}
    if decoder == "llama2":
        decoder = {"type": "Sequence", "decoders": [
            {"type": "Replace", "pattern": {"String": SP}, "content": " "}, {"type": "ByteFallback"},
            {"type": "Fuse"}, {"type": "Strip", "content": " ", "start": 1, "stop": 0}]}
    added = [{"id": i, "content": t, "single_word": False, "lstrip": False, "rstrip": False, "normalized": False,
              "special": True} for t, i in (("<unk>", 0), ("<s>", 1), ("</s>", 2))]
    return {"version": "1.0", "truncation": None, "padding": None, "added_tokens": added,
            "normalizer": normalizer, "pre_tokenizer": pre, "post_processor": None, "decoder": decoder,
            "model": {"type": "BPE", "dropout": None, "unk_token": "<unk>", "continuing_subword_prefix": None,
                      "end_of_word_suffix": None, "fuse_unk": True, "byte_fallback": True, "vocab": vocab,
                      "merges": merges}}


def conv(tj, config=None):
    """-> (tensors dict {name: bytes}, metadata) or the ConvertError's text."""
    try:
        tensors, meta = convert.hf_tokenizer_to_bpe(copy.deepcopy(tj), config or {}, "tokenizer.json")
    except convert.ConvertError as e:
        return str(e)
    return dict(tensors), meta


def ranks_of(tensors):
    """{id: bytes} of a tokenizer.ranks tensor."""
    out = {}
    for line in tensors["tokenizer.ranks"].decode("ascii").splitlines():
        b64, i = line.split(" ")
        out[int(i)] = base64.b64decode(b64)
    return out


def merges_of(tensors):
    if "tokenizer.merges" not in tensors:
        return []
    return [tuple(int(x) for x in line.split(" ")) for line in tensors["tokenizer.merges"].decode("ascii").splitlines()]


def test_components(rep):
    # GPT-2 / GPT-NeoX: the lone ByteLevel pre-tokenizer with GPT-2's regex
    r = conv(byte_level_json())
    ok = not isinstance(r, str)
    meta = r[1] if ok else {}
    rep.check("GPT-2: ByteLevel alone -> byte_level step with use_regex", ok and meta["pre_tokenizer"] ==
              [{"byte_level": {"add_prefix_space": False, "use_regex": True}}] and meta["byte_level"] is True
              and meta["decoder"] == [] and meta["normalizer"] == [] and meta["type"] == "bpe", str(r)[:300])
    rep.check("GPT-2: model fields", ok and meta["unk_id"] == -1 and meta["fuse_unk"] is False
              and meta["byte_fallback"] is False and meta["ignore_merges"] is False, str(meta)[:300])
    rep.check("metadata keys are the format's", ok and set(meta) == {
        "type", "byte_level", "unk_id", "fuse_unk", "byte_fallback", "ignore_merges", "normalizer", "pre_tokenizer",
        "added_tokens", "decoder", "bos_id", "eos_id"}, sorted(meta))
    # ByteLevel with its fields left out: tokenizers' defaults (add_prefix_space, use_regex true)
    r = conv(byte_level_json(pre={"type": "ByteLevel"}))
    rep.check("ByteLevel defaults: add_prefix_space and use_regex true", not isinstance(r, str) and
              r[1]["pre_tokenizer"] == [{"byte_level": {"add_prefix_space": True, "use_regex": True}}], str(r)[:300])
    # Llama-3 / Qwen2: Sequence[Split(regex), ByteLevel(use_regex false)], ignore_merges, NFC
    tj = byte_level_json(pre={"type": "Sequence", "pretokenizers": [
        {"type": "Split", "pattern": {"Regex": LLAMA3_RX}, "behavior": "Isolated", "invert": False},
        {"type": "ByteLevel", "add_prefix_space": False, "trim_offsets": True, "use_regex": False}]})
    tj["model"]["ignore_merges"] = True
    tj["normalizer"] = {"type": "NFC"}
    r = conv(tj)
    rep.check("Llama-3/Qwen2: Split then ByteLevel(use_regex false), verbatim regex, NFC, ignore_merges",
              not isinstance(r, str) and r[1]["pre_tokenizer"] ==
              [LLAMA3_RX, {"byte_level": {"add_prefix_space": False, "use_regex": False}}]
              and r[1]["normalizer"] == ["nfc"] and r[1]["ignore_merges"] is True, str(r)[:400])
    # DeepSeek-V3: three Splits in sequence (nested Sequence flattened), then ByteLevel
    rx = [r"\p{N}{1,3}", "[\u4e00-\u9fa5\u3040-\u309f\u30a0-\u30ff]+", r"[!-/][A-Za-z]+|\s+(?!\S)|\s+"]
    tj = byte_level_json(pre={"type": "Sequence", "pretokenizers": [
        {"type": "Split", "pattern": {"Regex": rx[0]}, "behavior": "Isolated", "invert": False},
        {"type": "Sequence", "pretokenizers": [
            {"type": "Split", "pattern": {"Regex": rx[1]}, "behavior": "Isolated", "invert": False},
            {"type": "Split", "pattern": {"Regex": rx[2]}, "behavior": "Isolated", "invert": False}]},
        {"type": "ByteLevel", "add_prefix_space": False, "trim_offsets": True, "use_regex": False}]})
    tj["normalizer"] = {"type": "Sequence", "normalizers": []}
    r = conv(tj)
    rep.check("DeepSeek-V3: three Splits, then ByteLevel; empty normalizer Sequence = none",
              not isinstance(r, str) and r[1]["pre_tokenizer"][:3] == rx and len(r[1]["pre_tokenizer"]) == 4
              and r[1]["normalizer"] == [], str(r)[:400])
    # Split behaviors and invert (GPT-4o's Removed + invert)
    for behavior, invert in (("Removed", True), ("MergedWithPrevious", False), ("MergedWithNext", False),
                             ("Contiguous", False), ("Isolated", True)):
        tj = byte_level_json(pre={"type": "Sequence", "pretokenizers": [
            {"type": "Split", "pattern": {"Regex": "a+"}, "behavior": behavior, "invert": invert},
            {"type": "ByteLevel", "add_prefix_space": False, "use_regex": False}]})
        r = conv(tj)
        rep.check("Split behavior %s invert %s -> regex step with both" % (behavior, invert),
                  not isinstance(r, str) and r[1]["pre_tokenizer"][0] ==
                  {"regex": "a+", "behavior": behavior, "invert": invert}, str(r)[:300])
    # Split with a String pattern: a regex of \x{HHHH} escapes (special characters, astral too)
    tj = sp_json(pre={"type": "Split", "pattern": {"String": " "}, "behavior": "MergedWithPrevious",
                      "invert": False})
    r = conv(tj)
    rep.check("Split String ' ' (MergedWithPrevious) -> \\x{20}", not isinstance(r, str) and
              r[1]["pre_tokenizer"] == [{"regex": "\\x{20}", "behavior": "MergedWithPrevious", "invert": False}],
              str(r)[:300])
    tj = sp_json(pre={"type": "Split", "pattern": {"String": "a.|\U0001F600"}, "behavior": "Isolated", "invert": False})
    r = conv(tj)
    rep.check("Split String with regex metacharacters and an emoji -> escapes only",
              not isinstance(r, str) and r[1]["pre_tokenizer"] == ["\\x{61}\\x{2E}\\x{7C}\\x{1F600}"], str(r)[:300])
    # Digits
    for ind, want in ((True, "\\p{N}"), (False, "\\p{N}+")):
        tj = sp_json(pre={"type": "Sequence", "pretokenizers": [{"type": "Digits", "individual_digits": ind}]})
        r = conv(tj)
        rep.check("Digits individual_digits %s -> {regex: %s}" % (ind, want),
                  not isinstance(r, str) and r[1]["pre_tokenizer"] == [{"regex": want}], str(r)[:300])
    # SentencePiece-style (Llama-2, Yi, Baichuan): normalizer Prepend + Replace, no pre-tokenizer,
    # byte_fallback, decoder Replace/ByteFallback/Fuse/Strip; vocabulary as UTF-8 with ▁ in it
    r = conv(sp_json())
    ok = not isinstance(r, str)
    meta = r[1] if ok else {}
    rep.check("Llama-2: normalizer Prepend + Replace", ok and meta["normalizer"] ==
              [{"prepend": SP}, {"replace": [" ", SP]}], str(meta)[:300])
    rep.check("Llama-2: no pre-tokenizer, not byte-level, unk/fuse_unk/byte_fallback", ok and
              meta["pre_tokenizer"] == [] and meta["byte_level"] is False and meta["unk_id"] == 0
              and meta["fuse_unk"] is True and meta["byte_fallback"] is True, str(meta)[:300])
    rep.check("Llama-2: decoder Replace, ByteFallback, Fuse, Strip", ok and meta["decoder"] ==
              [{"replace": [SP, " "]}, "byte_fallback", "fuse", {"strip": [" ", 1, 0]}], str(meta)[:300])
    if ok:
        ranks = ranks_of(r[0])
        vocab = sp_json()["model"]["vocab"]
        rep.check("SentencePiece-style vocabulary: each token's UTF-8 (▁, <0x41> kept as text)",
                  all(ranks[i] == t.encode("utf-8") for t, i in vocab.items()) and len(ranks) == len(vocab),
                  str(list(ranks.items())[:5]))
        rep.check("SentencePiece-style merges as ids", merges_of(r[0]) ==
                  [(vocab[SP], vocab["a"]), (vocab["a"], vocab["b"]), (vocab[SP + "a"], vocab["b"]),
                   (vocab["h"], vocab["é"])], str(merges_of(r[0])))
    # Gemma: Replace only, decoder without Strip
    tj = sp_json(normalizer={"type": "Replace", "pattern": {"String": " "}, "content": SP},
                 decoder={"type": "Sequence", "decoders": [
                     {"type": "Replace", "pattern": {"String": SP}, "content": " "}, {"type": "ByteFallback"},
                     {"type": "Fuse"}]})
    r = conv(tj)
    rep.check("Gemma: lone Replace normalizer, decoder without Strip", not isinstance(r, str) and
              r[1]["normalizer"] == [{"replace": [" ", SP]}] and
              r[1]["decoder"] == [{"replace": [SP, " "]}, "byte_fallback", "fuse"], str(r)[:300])
    # Metaspace pre-tokenizer + decoder, new spelling
    for scheme, split in (("always", True), ("first", False), ("never", True)):
        tj = sp_json(normalizer=None,
                     pre={"type": "Metaspace", "replacement": SP, "prepend_scheme": scheme, "split": split},
                     decoder={"type": "Metaspace", "replacement": SP, "prepend_scheme": scheme, "split": split})
        r = conv(tj)
        want_dec = [{"replace": [SP, " "]}] if scheme == "never" else [{"metaspace": SP}]
        rep.check("Metaspace prepend_scheme %s split %s (pre-tokenizer and decoder)" % (scheme, split),
                  not isinstance(r, str) and r[1]["pre_tokenizer"] ==
                  [{"metaspace": SP, "prepend_scheme": scheme, "split": split}] and r[1]["decoder"] == want_dec
                  and r[1]["normalizer"] == [], str(r)[:400])
    # legacy Metaspace (tokenizers < 0.19): add_prefix_space, no prepend_scheme / split
    for aps, scheme in ((True, "always"), (False, "never")):
        tj = sp_json(normalizer=None,
                     pre={"type": "Metaspace", "replacement": SP, "add_prefix_space": aps, "str_rep": SP},
                     decoder={"type": "Metaspace", "replacement": SP, "add_prefix_space": aps})
        tj["pre_tokenizer"].pop("str_rep")
        r = conv(tj)
        rep.check("legacy Metaspace add_prefix_space %s -> prepend_scheme %s, split true" % (aps, scheme),
                  not isinstance(r, str) and r[1]["pre_tokenizer"] ==
                  [{"metaspace": SP, "prepend_scheme": scheme, "split": True}] and
                  r[1]["decoder"] == ([{"metaspace": SP}] if scheme != "never" else [{"replace": [SP, " "]}]),
                  str(r)[:400])
    # added tokens: every flag as given; one not in the vocabulary stays out of tokenizer.ranks
    tj = sp_json()
    tj["added_tokens"] += [
        {"id": 268, "content": "<|im_start|>", "single_word": True, "lstrip": True, "rstrip": False,
         "normalized": False, "special": True},
        {"id": 269, "content": " hello", "single_word": False, "lstrip": False, "rstrip": True,
         "normalized": True, "special": False}]
    r = conv(tj)
    ok = not isinstance(r, str)
    rep.check("added tokens: id, content and all five flags as given", ok and r[1]["added_tokens"][3:] == [
        {"id": 268, "content": "<|im_start|>", "special": True, "lstrip": True, "rstrip": False, "normalized": False,
         "single_word": True},
        {"id": 269, "content": " hello", "special": False, "lstrip": False, "rstrip": True, "normalized": True,
         "single_word": False}], str(r[1]["added_tokens"] if ok else r)[:400])
    rep.check("added tokens not in model.vocab are not in tokenizer.ranks; those in it stay",
              ok and 268 not in ranks_of(r[0]) and 269 not in ranks_of(r[0]) and ranks_of(r[0])[1] == b"<s>",
              "")
    # bos/eos from the config as before
    r = conv(sp_json(), {"bos_token_id": 1, "eos_token_id": [2, 5]})
    rep.check("bos_id / eos_id from config.json", not isinstance(r, str) and r[1]["bos_id"] == 1
              and r[1]["eos_id"] == 2, str(r)[:200])
    # an empty-prefix/suffix BPE model ("" = none) and dropout 0 convert
    tj = byte_level_json()
    tj["model"].update(continuing_subword_prefix="", end_of_word_suffix="", dropout=0.0)
    rep.check("continuing_subword_prefix/end_of_word_suffix \"\" and dropout 0 are accepted",
              not isinstance(conv(tj), str), str(conv(tj))[:200])


def test_merges_and_bytes(rep):
    merges = (("Ġ", "t"), ("Ġt", "h"), ("h", "é"), ("Ã", "©"))
    b2u = gpt2_alphabet()
    # "é" in GPT-2's alphabet is the two characters of its UTF-8 bytes C3 A9: "Ã©"
    r1 = conv(byte_level_json(merges=merges, extra_vocab=("h", "é"), merges_as="strings"))
    r2 = conv(byte_level_json(merges=merges, extra_vocab=("h", "é"), merges_as="pairs"))
    ok = not isinstance(r1, str) and not isinstance(r2, str)
    rep.check("merges as \"a b\" strings and as [a, b] pairs give the same tensor",
              ok and r1[0]["tokenizer.merges"] == r2[0]["tokenizer.merges"], str(r1)[:200] + str(r2)[:200])
    if ok:
        vocab = byte_level_json(merges=merges, extra_vocab=("h", "é"))["model"]["vocab"]
        rep.check("merges: LEFT_ID RIGHT_ID per line in file order",
                  merges_of(r1[0]) == [(vocab[a], vocab[b]) for a, b in merges], str(merges_of(r1[0])))
        ranks = ranks_of(r1[0])
        rep.check("byte-level vocabulary unmapped to bytes: each of the 256 byte tokens",
                  all(ranks[b] == bytes([b]) for b in range(256)), "")
        rep.check("byte-level vocabulary unmapped to bytes: Ġth = ' th', Ã© = C3 A9",
                  ranks[vocab["Ġth"]] == b" th" and ranks[vocab["Ã©"]] == "é".encode("utf-8")
                  and ranks[vocab["Ċ"]] == b"\n" and ranks[vocab[b2u[0xFF]]] == b"\xff",
                  str({k: ranks[vocab[k]] for k in ("Ġth", "Ã©")}))
        rep.check("tokenizer.ranks lines sorted by id, one per vocab entry",
                  [int(x.split()[1]) for x in r1[0]["tokenizer.ranks"].decode().splitlines()] == sorted(vocab.values()),
                  "")
    # an added token that is a vocab key with characters outside GPT-2's alphabet: its UTF-8
    tj = byte_level_json(extra_vocab=("<｜begin▁of▁sentence｜>",))
    i = tj["model"]["vocab"]["<｜begin▁of▁sentence｜>"]
    tj["added_tokens"].append({"id": i, "content": "<｜begin▁of▁sentence｜>", "single_word": False, "lstrip": False,
                               "rstrip": False, "normalized": False, "special": True})
    r = conv(tj)
    rep.check("byte-level: an added token's vocab entry outside the alphabet is written as its UTF-8",
              not isinstance(r, str) and ranks_of(r[0])[i] == "<｜begin▁of▁sentence｜>".encode("utf-8"), str(r)[:200])
    # pairs may hold tokens with spaces (not expressible as strings)
    tj = sp_json()
    tj["model"]["vocab"].update({"a b": 400, "a bh": 401})
    tj["model"]["merges"] = [["a b", "h"]]
    r = conv(tj)
    rep.check("a pair merge of a token holding a space",
              not isinstance(r, str) and merges_of(r[0]) == [(400, tj["model"]["vocab"]["h"])], str(r)[:200])
    # no merges: no tensor
    r = conv(byte_level_json(merges=()))
    rep.check("no merges: no tokenizer.merges tensor", not isinstance(r, str) and "tokenizer.merges" not in r[0],
              str(r)[:200])


def test_regex_rewrite(rep):
    cases = [
        (r"\p{N}{1,3}", r"\p{N}{1,3}"),
        (r"\p{N}{1,3}+", r"(?:\p{N}{1,3})+"),
        (r"[a-z]{2}+|x", r"(?:[a-z]{2})+|x"),
        (r"(ab|c){1,2}+x", r"(?:(ab|c){1,2})+x"),
        (r"a{2,}+", r"(?:a{2,})+"),
        (r"a{1,3}?b{2,4}", r"a{1,3}?b{2,4}"),
        (r"\{1,2}+", r"\{1,2}+"),
        (r"[{]1,2}+", r"[{]1,2}+"),
        (r"\x{41}{1,2}+", r"(?:\x{41}{1,2})+"),
        (r"[\]x]{1,2}+", r"(?:[\]x]{1,2})+"),
        (r"(?i:'s|'t)|\s+(?!\S)", r"(?i:'s|'t)|\s+(?!\S)"),
        (r"[^\[\]]{1,2}+", r"(?:[^\[\]]{1,2})+"),
        (r"[a[bc]]{2}+", r"(?:[a[bc]]{2})+"),   # a class nested in a class (Oniguruma)
    ]
    for src, want in cases:
        try:
            got = convert.oniguruma_regex(src)
        except convert.ConvertError as e:
            got = "refused: %s" % e
        rep.check("Oniguruma regex %s -> %s" % (src, want), got == want, got)
    try:
        convert.oniguruma_regex(r"a{0,2}+")
        rep.check("x{0,m}+ refused (its rewrite repeats an empty match)", False, "accepted")
    except convert.ConvertError as e:
        rep.check("x{0,m}+ refused (its rewrite repeats an empty match)", "{0,2}+" in str(e), str(e))
    # through a whole tokenizer.json: the rewritten regex is what is stored
    tj = byte_level_json(pre={"type": "Sequence", "pretokenizers": [
        {"type": "Split", "pattern": {"Regex": r"\p{N}{1,3}+"}, "behavior": "Isolated", "invert": False},
        {"type": "ByteLevel", "add_prefix_space": False, "use_regex": False}]})
    r = conv(tj)
    rep.check("a Split's x{n,m}+ is stored rewritten", not isinstance(r, str) and
              r[1]["pre_tokenizer"][0] == r"(?:\p{N}{1,3})+", str(r)[:300])
    tj["pre_tokenizer"]["pretokenizers"][0]["pattern"]["Regex"] = r"a{0,3}+"
    r = conv(tj)
    rep.check("a Split that cannot be rewritten is refused with the regex", isinstance(r, str) and
              "a{0,3}+" in r and "Split" in r, r)


def refusals():
    """(case, tokenizer.json, words the one-line error must hold)."""
    out = []

    def bl(**kw):
        return byte_level_json(**kw)

    for t in ("NFKC", "NFD", "NFKD", "Lowercase", "BertNormalizer", "StripAccents", "Precompiled", "ByteLevel", "Nmt"):
        tj = bl()
        tj["normalizer"] = {"type": t}
        out.append(("normalizer %s" % t, tj, ["normalizer %s" % t, "not supported"]))
    tj = bl()
    tj["normalizer"] = {"type": "Sequence", "normalizers": [{"type": "NFC"}, {"type": "Lowercase"}]}
    out.append(("Lowercase inside a normalizer Sequence", tj, ["normalizer Lowercase"]))
    tj = sp_json()
    tj["normalizer"]["normalizers"][1]["pattern"] = {"Regex": " +"}
    out.append(("normalizer Replace with a Regex pattern", tj, ["normalizer Replace", "Regex"]))
    for t in ("BertPreTokenizer", "Whitespace", "WhitespaceSplit", "Punctuation", "CharDelimiterSplit",
              "UnicodeScripts", "FixedLength"):
        out.append(("pre_tokenizer %s" % t, bl(pre={"type": t}), ["pre_tokenizer %s" % t]))
    for t in ("Split", "Digits", "Metaspace", "ByteLevel"):
        step = {"Split": {"type": "Split", "pattern": {"Regex": "a"}, "behavior": "Isolated", "invert": False},
                "Digits": {"type": "Digits", "individual_digits": True},
                "Metaspace": {"type": "Metaspace", "replacement": SP, "prepend_scheme": "always", "split": True},
                "ByteLevel": {"type": "ByteLevel", "add_prefix_space": False, "use_regex": False}}[t]
        out.append(("%s after ByteLevel" % t, bl(pre={"type": "Sequence", "pretokenizers": [
            {"type": "ByteLevel", "add_prefix_space": False, "use_regex": True}, step]}),
            ["pre_tokenizer %s after ByteLevel" % t]))
    out.append(("Split behavior unknown", bl(pre={"type": "Sequence", "pretokenizers": [
        {"type": "Split", "pattern": {"Regex": "a"}, "behavior": "Spread", "invert": False},
        {"type": "ByteLevel"}]}), ["Split behavior", "Spread"]))
    for t in ("WordPiece", "Unigram", "WordLevel"):
        tj = bl()
        tj["model"]["type"] = t
        out.append(("model %s" % t, tj, ["model %s" % t]))
    tj = bl()
    tj["model"]["dropout"] = 0.1
    out.append(("BPE dropout 0.1", tj, ["dropout 0.1"]))
    tj = bl()
    tj["model"]["continuing_subword_prefix"] = "##"
    out.append(("continuing_subword_prefix ##", tj, ["continuing_subword_prefix", "##"]))
    tj = bl()
    tj["model"]["end_of_word_suffix"] = "</w>"
    out.append(("end_of_word_suffix </w>", tj, ["end_of_word_suffix", "</w>"]))
    tj = bl()
    tj["model"]["some_new_field"] = True
    out.append(("an unknown BPE model field", tj, ["some_new_field"]))
    tj = bl()
    tj["something"] = {}
    out.append(("an unknown top-level key", tj, ["something"]))
    for t in ("WordPiece", "CTC", "BPEDecoder"):
        tj = sp_json(decoder={"type": t})
        out.append(("decoder %s" % t, tj, ["decoder %s" % t]))
    tj = sp_json()
    tj["decoder"]["decoders"][0]["pattern"] = {"Regex": SP}
    out.append(("decoder Replace with a Regex pattern", tj, ["decoder Replace", "Regex"]))
    tj = sp_json()
    tj["decoder"]["decoders"].append({"type": "ByteFallback"})
    out.append(("decoder ByteFallback after Fuse", tj, ["decoder ByteFallback after Fuse"]))
    out.append(("no decoder", sp_json(decoder=None), ["no decoder"]))
    out.append(("decoder Metaspace in a Sequence with others", sp_json(decoder={"type": "Sequence", "decoders": [
        {"type": "Metaspace", "replacement": SP, "prepend_scheme": "first", "split": False}, {"type": "ByteFallback"},
        {"type": "Fuse"}]}), ["decoder Metaspace combined"]))
    out.append(("ByteLevel pre-tokenizer without ByteLevel decoder",
                bl(decoder={"type": "Fuse"}), ["ByteLevel pre_tokenizer without a ByteLevel decoder"]))
    out.append(("ByteLevel decoder without ByteLevel pre-tokenizer",
                bl(pre={"type": "Split", "pattern": {"Regex": "a"}, "behavior": "Isolated", "invert": False}),
                ["ByteLevel decoder without a ByteLevel pre_tokenizer"]))
    tj = bl()
    del tj["model"]["vocab"][gpt2_alphabet()[0x41]]
    out.append(("byte-level vocabulary missing a byte", tj, ["byte 0x41"]))
    tj = bl()
    tj["model"]["vocab"]["x y"] = 999
    out.append(("byte-level vocab token outside the alphabet", tj, ["'x y'", "byte-level alphabet"]))
    tj = bl()
    tj["model"]["merges"].append("Ġ q")
    out.append(("a merge whose result is not in the vocab", tj, ["merge 2", "'Ġq'", "not in the vocab"]))
    tj = bl()
    tj["model"]["merges"].append("a b c")
    out.append(("a merge string of three tokens", tj, ["merge 2", "not two tokens"]))
    tj = sp_json()
    tj["model"]["unk_token"] = "<missing>"
    out.append(("unk_token not in the vocab", tj, ["unk_token", "<missing>"]))
    tj = sp_json(normalizer=None, pre={"type": "Metaspace", "replacement": SP, "add_prefix_space": False,
                                       "prepend_scheme": "always"})
    out.append(("Metaspace add_prefix_space false with prepend_scheme always", tj, ["add_prefix_space", "always"]))
    tj = sp_json()
    tj["added_tokens"][1]["id"] = 7
    out.append(("an added token whose id is not its vocab id", tj, ["'<s>'", "vocab id 1"]))
    # HF tokenizers gives a new added token the next id after the vocabulary, whatever the file says
    tj = sp_json()
    tj["added_tokens"].append({"id": 300, "content": "<x>", "single_word": False, "lstrip": False, "rstrip": False,
                               "normalized": False, "special": True})
    out.append(("an added token not in the vocab with an id HF would not give it", tj,
                ["'<x>'", "id 300", "gives it id 268"]))
    tj = sp_json()
    tj["added_tokens"].append(dict(tj["added_tokens"][1]))
    out.append(("an added token listed twice", tj, ["'<s>'", "twice"]))
    return out


def test_refusals(rep):
    for case, tj, words in refusals():
        r = conv(tj)
        rep.check("refused by name: %s" % case, isinstance(r, str) and "\n" not in r and all(w in r for w in words),
                  r if isinstance(r, str) else "accepted: %s" % str(r[1])[:200])


def test_format_tokenizer(rep, tmp):
    """--format tokenizer: the file's header, from a tokenizer.json, a rank file and an HF directory."""
    tj = sp_json()
    path = os.path.join(tmp, "tokenizer.json")
    with open(path, "w") as f:
        json.dump(tj, f)
    out = os.path.join(tmp, "tok.safetensors")
    rc, err = inproc.run(path, out, "--format", "tokenizer")
    rep.check("--format tokenizer tokenizer.json converts", rc == 0 and "warning" not in err, err.strip())
    if rc == 0:
        f = common.st.File(out)
        meta = f.metadata
        want_t, want_m = convert.hf_tokenizer_to_bpe(copy.deepcopy(tj), {}, path)
        rep.check("header: __metadata__ is format dintattn-tokenizer, version 1, tokenizer (no config)",
                  set(meta) == {"format", "version", "tokenizer"} and meta["format"] == "dintattn-tokenizer"
                  and meta["version"] == "1", str(meta)[:200])
        rep.check("header: the tokenizer metadata is the conversion's", json.loads(meta["tokenizer"]) == want_m,
                  meta["tokenizer"][:200])
        rep.check("header: only tokenizer.ranks and tokenizer.merges, U8, shape [bytes]",
                  sorted(f.names()) == ["tokenizer.merges", "tokenizer.ranks"] and
                  all(f.dtype(n) == "U8" and f.shape(n) == (len(dict(want_t)[n]),) for n in f.names()), str(f.entries))
        rep.check("data: the tensors' bytes", all(f.get(n).tobytes() == dict(want_t)[n] for n in f.names()), "")
    # a tiktoken rank file stays "type": "tiktoken"
    ranks = os.path.join(tmp, "ranks.tiktoken")
    with open(ranks, "w") as fh:
        for b in range(256):
            fh.write("%s %d\n" % (base64.b64encode(bytes([b])).decode(), b))
    rc, err = inproc.run(ranks, out, "--format", "tokenizer")
    if rc == 0:
        f = common.st.File(out)
        tm = json.loads(f.metadata["tokenizer"])
        rep.check("--format tokenizer rank file: type tiktoken, the file verbatim",
                  tm["type"] == "tiktoken" and f.names() == ["tokenizer.ranks"] and
                  f.get("tokenizer.ranks").tobytes() == open(ranks, "rb").read(), str(tm))
    else:
        rep.check("--format tokenizer rank file converts", False, err.strip())
    # an HF directory: bos from config.json, every EOS id, the chat template when it reduces
    d = os.path.join(tmp, "hfdir")
    os.makedirs(d)
    tj = sp_json()
    tj["added_tokens"] += [{"id": 268, "content": "<|im_start|>", "single_word": False, "lstrip": False, "rstrip": False,
                            "normalized": False, "special": True},
                           {"id": 269, "content": "<|im_end|>", "single_word": False, "lstrip": False, "rstrip": False,
                            "normalized": False, "special": True}]
    with open(os.path.join(d, "tokenizer.json"), "w") as fh:
        json.dump(tj, fh)
    with open(os.path.join(d, "config.json"), "w") as fh:
        json.dump({"bos_token_id": 1, "eos_token_id": 2}, fh)
    with open(os.path.join(d, "generation_config.json"), "w") as fh:
        json.dump({"eos_token_id": [2, 269]}, fh)
    tmpl = ("{% for m in messages %}<|im_start|>{{ m['role'] }}\n{{ m['content'] }}<|im_end|>\n{% endfor %}"
            "{% if add_generation_prompt %}<|im_start|>assistant\n{% endif %}")
    with open(os.path.join(d, "tokenizer_config.json"), "w") as fh:
        json.dump({"eos_token": "<|im_end|>", "bos_token": None, "chat_template": tmpl}, fh)
    rc, err = inproc.run(d, out, "--format", "tokenizer")
    if rc == 0:
        f = common.st.File(out)
        tm = json.loads(f.metadata["tokenizer"])
        chat = json.loads(f.metadata.get("chat", "null"))
        rep.check("--format tokenizer HF directory: bos_id, eos_id and eos_ids",
                  tm["bos_id"] == 1 and tm["eos_id"] == 2 and tm.get("eos_ids") == [2, 269], str(tm)[-200:])
        rep.check("--format tokenizer HF directory: the chat metadata, <|im_end|> as stop",
                  chat is not None and chat["roles"]["user"] == ["<|im_start|>user\n", "<|im_end|>\n"]
                  and chat.get("stop") == ["<|im_end|>"], str(chat))
    else:
        try:
            import jinja2  # noqa: F401
            rep.check("--format tokenizer HF directory converts", False, err.strip())
        except ImportError:
            print("  (no python3-jinja2: the HF-directory case is skipped)")
    rc, err = inproc.run(d, out, "--format", "tokenizer", "--no-chat-template")
    rep.check("--format tokenizer --no-chat-template: no chat key",
              rc == 0 and "chat" not in common.st.File(out).metadata, err.strip())
    # an EOS id outside the tokenizer's ids is refused
    with open(os.path.join(d, "generation_config.json"), "w") as fh:
        json.dump({"eos_token_id": [2, 5000]}, fh)
    rep.refused("--format tokenizer: an end-of-sequence id beyond the tokenizer refused",
                *inproc.run(d, out, "--format", "tokenizer", "--no-chat-template"), "end-of-sequence id 5000")
    # no config.json: bos_id is tokenizer_config.json's bos_token
    d2 = os.path.join(tmp, "hfdir2")
    os.makedirs(d2)
    shutil.copy(os.path.join(d, "tokenizer.json"), d2)
    with open(os.path.join(d2, "tokenizer_config.json"), "w") as fh:
        json.dump({"bos_token": "<s>", "eos_token": "</s>"}, fh)
    rc, err = inproc.run(d2, out, "--format", "tokenizer")
    tm = json.loads(common.st.File(out).metadata["tokenizer"]) if rc == 0 else {}
    rep.check("--format tokenizer HF directory without config.json: bos_id/eos_id from tokenizer_config.json",
              rc == 0 and tm.get("bos_id") == 1 and tm.get("eos_id") == 2, err.strip() + str(tm)[-80:])
    # refusals reach the command line as one line naming the component
    bad = copy.deepcopy(sp_json())
    bad["normalizer"] = {"type": "NFKC"}
    with open(path, "w") as fh:
        json.dump(bad, fh)
    rep.refused("--format tokenizer: NFKC refused on the command line", *inproc.run(path, out, "--format", "tokenizer"),
                "tokenizer.json: normalizer NFKC is not supported")
    rep.check("a refused conversion leaves no file behind", not os.path.exists(out + ".tmp"), "")
    # a model file written with a bpe tokenizer carries both tensors after the weights
    tensors, meta = convert.hf_tokenizer_to_bpe(sp_json(), {}, "t")
    mpath = os.path.join(tmp, "m.safetensors")
    import numpy as np
    convert.write_spec(mpath, {"dim": 2}, [("w", [2], lambda: np.ones(2, np.float32))], "f32", (tensors, meta))
    f = common.st.File(mpath)
    rep.check("write_spec: a model file gets tokenizer.ranks and tokenizer.merges, format dintattn",
              f.names() == ["w", "tokenizer.ranks", "tokenizer.merges"] and f.metadata["format"] == "dintattn"
              and f.get("tokenizer.merges").tobytes() == dict(tensors)["tokenizer.merges"], str(f.names()))
    # write_spec still takes one rank file's bytes (the old form)
    convert.write_spec(mpath, {"dim": 2}, [], "f32", (b"QQ== 0\n", {"type": "tiktoken"}))
    f = common.st.File(mpath)
    rep.check("write_spec: rank-file bytes as before", f.names() == ["tokenizer.ranks"] and
              f.get("tokenizer.ranks").tobytes() == b"QQ== 0\n", str(f.names()))


def main():
    rep = common.Report("tokenizer_json")
    tmp = tempfile.mkdtemp(prefix="conv_tokjson_")
    try:
        test_components(rep)
        test_merges_and_bytes(rep)
        test_regex_rewrite(rep)
        test_refusals(rep)
        test_format_tokenizer(rep, tmp)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return rep.finish()


if __name__ == "__main__":
    sys.exit(main())
