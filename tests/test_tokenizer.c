/* Tokenizer tests: the cl100k_base pre-tokenizer, the split regex matcher and the families' split
   patterns, BPE merging, special tokens, rank-file validation, and that decoding gives back
   exactly the bytes encoded.

   Where the expected values come from:
     - tests/fixtures/pretok.txt: python3-regex running tiktoken's own pattern (written by
       tools/make_tok_fixtures.py, which also checks the hand-reasoned splits below against it);
     - tests/fixtures/pretok_families.txt: python3-regex running every family's pattern(s) (GPT-2,
       cl100k and their possessive rewrites, o200k, Qwen2, DeepSeek-V3's sequence of three);
     - tests/fixtures/regex_random.txt: python3-regex running random patterns of the subset;
     - tests/fixtures/toy.tiktoken: a hand-made rank file (rank = byte value for single bytes,
       then the merges listed in tools/make_tok_fixtures.py from 256 on); the expected ids below
       are worked out by hand from it, step by step in the comments;
     - tiktoken's own merge loop (_byte_pair_merge in tiktoken's src/lib.rs), ported naively to
       reference_bpe below, for random pieces;
     - the Unicode Character Database (15.0) for the class spot checks.
   The agreement with real cl100k_base ids is checked by tests/tiktoken_check.sh. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#define DINTATTN_IMPLEMENTATION
#include "../dintattn.h"
#include "test_util.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define TOY FIXTURES "toy.tiktoken"
#define TOY_MODEL FIXTURES "tok_model.safetensors"
#define MAX_TOK 4096

static dintattn_tokenizer *toy(void)
{
    dintattn_tokenizer *t = NULL;
    dintattn_error err;
    if (dintattn_tokenizer_load(TOY, &t, &err) != DINTATTN_OK) fail_msg("%s", err.message);
    return t;
}

/* dintattn_tokenizer_encode's id count, or -1 when it fails. */
static int encode(const dintattn_tokenizer *t, const char *s, size_t len, int allow_special, int *ids, int max_ids,
                  dintattn_error *err)
{
    int n = -7;
    dintattn_result r = dintattn_tokenizer_encode(t, s, len, allow_special, ids, max_ids, &n, err);
    if (r != DINTATTN_OK) {
        assert_int_equal(n, 0); /* a failed call reports no ids */
        return -1;
    }
    return n;
}

/* Encodes a NUL-terminated string; returns the id count. */
static int enc(const dintattn_tokenizer *t, const char *s, int allow_special, int *ids)
{
    dintattn_error err;
    int n = encode(t, s, strlen(s), allow_special, ids, MAX_TOK, &err);
    if (n < 0) fail_msg("encode: %s", err.message);
    return n;
}

static void assert_ids(const int *got, int n, const int *want, int n_want)
{
    int i;
    if (n != n_want) fail_msg("got %d ids, want %d", n, n_want);
    for (i = 0; i < n; i++)
        if (got[i] != want[i]) fail_msg("id %d: got %d, want %d", i, got[i], want[i]);
}

#define EXPECT_IDS(t, text, allow, ...)                                                                \
    do {                                                                                               \
        static const int want_[] = {__VA_ARGS__};                                                      \
        int got_[MAX_TOK];                                                                             \
        int n_ = enc(t, text, allow, got_);                                                            \
        assert_ids(got_, n_, want_, (int)(sizeof want_ / sizeof want_[0]));                            \
    } while (0)

/* Decodes ids into out (cap bytes); returns the byte count. */
static size_t decode(const dintattn_tokenizer *t, const int *ids, int n, unsigned char *out, size_t cap)
{
    size_t total = 0;
    int i;
    for (i = 0; i < n; i++) {
        size_t len;
        const char *p = dintattn_tokenizer_token(t, ids[i], &len);
        assert_non_null(p);
        assert_true(total + len <= cap);
        memcpy(out + total, p, len);
        total += len;
    }
    return total;
}

/* The pieces of s[0..n) as byte lengths; returns their count. */
static int pieces(const unsigned char *s, size_t n, int *lens, int max)
{
    size_t i = 0;
    int k = 0;
    while (i < n) {
        size_t end = dintattn__pretok(s, n, i);
        assert_true(end > i && end <= n);
        if (k < max) lens[k] = (int)(end - i);
        k++;
        i = end;
    }
    return k;
}

/* ---------------------------------------------------------------------------------------- */
/* Pre-tokenizer and Unicode classes                                                        */
/* ---------------------------------------------------------------------------------------- */

/* Each case is worked out from the pattern by hand (and by make_tok_fixtures.py's REASONED, which
   checks them against python3-regex). */
static void test_pretok_hand_reasoned_splits(void **state)
{
    static const struct {
        const char *text;
        int lens[8];
        int n;
    } cases[] = {
        {"I'm", {1, 2}, 2},               /* 'm is a contraction */
        {"WE'RE", {2, 3}, 2},             /* (?i:) 'RE */
        {"they'Ve", {4, 3}, 2},           /* 'Ve */
        {"'sup", {2, 2}, 2},              /* 's then the letters: contractions take no more */
        {"'\xc5\xbf", {3}, 1},            /* ' + U+017F long s, which folds to s */
        {"x 're", {1, 2, 2}, 3},          /* " '" is punctuation after a space, then "re" */
        {"(hello", {6}, 1},               /* one non-letter joins the letters after it */
        {"1234567", {3, 3, 1}, 3},        /* \p{N}{1,3} */
        {"a   b", {1, 2, 2}, 3},          /* \s+(?!\S) leaves " b" */
        {"a   ", {1, 3}, 2},              /* ... unless the run ends the text */
        {"a !!!\n\nb", {1, 6, 1}, 3},     /*  ?[^\s\p{L}\p{N}]+[\r\n]* */
        {"a \n \n  b", {1, 4, 1, 2}, 4},  /* \s*[\r\n]+ up to the last newline; then " ", " b" */
        {"x\r\ny", {1, 2, 1}, 3},
        {"a 1", {1, 1, 1}, 3},            /* a space before a digit stays alone */
        {"cafe\xcc\x81", {4, 2}, 2},      /* U+0301 combining acute is not a letter */
        {"\xff" "abc", {4}, 1},           /* an ill-formed byte is a character of no class */
    };
    size_t c;
    (void)state;
    for (c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        int lens[16], n = pieces((const unsigned char *)cases[c].text, strlen(cases[c].text), lens, 16), i;
        if (n != cases[c].n) fail_msg("'%s': %d pieces, want %d", cases[c].text, n, cases[c].n);
        for (i = 0; i < n; i++)
            if (lens[i] != cases[c].lens[i]) fail_msg("'%s': piece %d has %d bytes, want %d", cases[c].text, i, lens[i],
                                                      cases[c].lens[i]);
    }
}

static int hexval(int c) { return c <= '9' ? c - '0' : (c | 0x20) - 'a' + 10; }

static void test_pretok_matches_python_regex_fixture(void **state)
{
    FILE *f = fopen(FIXTURES "pretok.txt", "r");
    static char line[65536];
    unsigned char bytes[8192];
    int checked = 0;
    (void)state;
    assert_non_null(f);
    while (fgets(line, sizeof line, f)) {
        int want[1024], got[1024], n_want = 0, n_got, i;
        size_t n = 0;
        char *p = line;
        if (line[0] == '#') continue;
        while (*p != '\t') {
            assert_true(n < sizeof bytes);
            bytes[n++] = (unsigned char)(hexval(p[0]) << 4 | hexval(p[1]));
            p += 2;
        }
        p++;
        while (*p != '\t') {
            want[n_want++] = (int)strtol(p, &p, 10);
            if (*p == ',') p++;
        }
        n_got = pieces(bytes, n, got, 1024);
        if (n_got != n_want) fail_msg("%s%d pieces, want %d", line, n_got, n_want);
        for (i = 0; i < n_got; i++)
            if (got[i] != want[i]) fail_msg("%spiece %d has %d bytes, want %d", line, i, got[i], want[i]);
        checked++;
    }
    fclose(f);
    assert_true(checked >= 500);
}

/* Spot checks against the UCD (15.0): a code point of every class, and of the boundaries that
   matter; the table of runs is sorted and covers the code space from 0. */
static void test_unicode_classes_match_ucd(void **state)
{
    static const struct {
        uint32_t cp;
        int gc;
    } cases[] = {
        {'a', DINTATTN__GC_LL}, {'Z', DINTATTN__GC_LU}, {'5', DINTATTN__GC_ND}, {'_', DINTATTN__GC_P},
        {'$', DINTATTN__GC_S}, {'+', DINTATTN__GC_S}, {0x00, DINTATTN__GC_OTHER}, {0x1C, DINTATTN__GC_OTHER},
        {0x0B, DINTATTN__GC_SPACE}, {0x85, DINTATTN__GC_SPACE}, {0xA0, DINTATTN__GC_SPACE}, {0xA1, DINTATTN__GC_P},
        {0xAA, DINTATTN__GC_LO}, {0xAD, DINTATTN__GC_OTHER}, {0xB2, DINTATTN__GC_NO}, {0xBD, DINTATTN__GC_NO},
        {0xD7, DINTATTN__GC_S}, {0xE9, DINTATTN__GC_LL}, {0x17F, DINTATTN__GC_LL}, {0x1C5, DINTATTN__GC_LT},
        {0x2B0, DINTATTN__GC_LM}, {0x301, DINTATTN__GC_MN}, {0x488, DINTATTN__GC_ME}, {0x663, DINTATTN__GC_ND},
        {0x93F, DINTATTN__GC_MC}, {0x1680, DINTATTN__GC_SPACE}, {0x180E, DINTATTN__GC_OTHER},
        {0x200B, DINTATTN__GC_OTHER}, {0x2028, DINTATTN__GC_SPACE}, {0x20DD, DINTATTN__GC_ME},
        {0x216B, DINTATTN__GC_NL}, {0x3000, DINTATTN__GC_SPACE}, {0x3001, DINTATTN__GC_P}, {0x3007, DINTATTN__GC_NL},
        {0x4E2D, DINTATTN__GC_LO}, {0xAC00, DINTATTN__GC_LO}, {0xD7A3, DINTATTN__GC_LO}, {0xD800, DINTATTN__GC_OTHER},
        {0xE000, DINTATTN__GC_OTHER}, {0xFEFF, DINTATTN__GC_OTHER}, {0xFF10, DINTATTN__GC_ND},
        {0xFFFD, DINTATTN__GC_S}, {0x1F600, DINTATTN__GC_S}, {0x11F04, DINTATTN__GC_LO}, /* new in 15.0 */
        {0x2B739, DINTATTN__GC_LO}, {0x2B73A, DINTATTN__GC_OTHER}, {0x10FFFF, DINTATTN__GC_OTHER},
        /* new in 15.1 and 16.0, where tiktoken and HF tokenizers split differently from 15.0 */
        {0x2EBF0, DINTATTN__GC_LO}, {0x1C89, DINTATTN__GC_LU}, {0x1CCF0, DINTATTN__GC_ND}, {0x2EE5E, DINTATTN__GC_OTHER},
    };
    size_t k, n = sizeof dintattn__uni_runs / sizeof dintattn__uni_runs[0];
    (void)state;
    for (k = 0; k < sizeof cases / sizeof cases[0]; k++)
        if (dintattn__gc(cases[k].cp) != cases[k].gc)
            fail_msg("U+%04X: class %d, want %d", (unsigned)cases[k].cp, dintattn__gc(cases[k].cp), cases[k].gc);
    assert_int_equal(dintattn__uni_runs[0] >> 4, 0);
    for (k = 1; k < n; k++) {
        assert_true(dintattn__uni_runs[k - 1] >> 4 < dintattn__uni_runs[k] >> 4);
        assert_true((dintattn__uni_runs[k - 1] & 15) != (dintattn__uni_runs[k] & 15)); /* maximal runs */
        assert_true((dintattn__uni_runs[k] & 15) < DINTATTN__GC_COUNT);
    }
    /* the hand-written splitter's classes agree with the table (and its ASCII shortcut) */
    for (k = 0; k < 0x3000; k++) {
        int g = dintattn__gc((uint32_t)k), want = (DINTATTN__GCM_L >> g) & 1 ? DINTATTN__UC_LETTER
                                               : (DINTATTN__GCM_N >> g) & 1 ? DINTATTN__UC_NUMBER
                                               : g == DINTATTN__GC_SPACE    ? DINTATTN__UC_SPACE
                                                                            : DINTATTN__UC_OTHER;
        assert_int_equal(dintattn__uni_class((uint32_t)k), want);
    }
    assert_string_equal(DINTATTN__UNICODE_VERSION, "16.0.0");
}

/* Maximal subparts (Unicode 15 section 3.9, table 3-8's examples): the lengths of the ill-formed
   units Python's decode("utf-8", "replace") gives one U+FFFD each. */
static void test_utf8_ill_formed_units(void **state)
{
    static const struct {
        const char *s;
        size_t len;
        uint32_t cp;
    } cases[] = {
        {"\xc3\xa9", 2, 0xE9}, {"\xe2\x82\xac", 3, 0x20AC}, {"\xf0\x9f\x98\x80", 4, 0x1F600},
        {"\xe2\x82(", 2, 0xFFFD},     /* a valid start, cut short */
        {"\xf0\x9f\x98", 3, 0xFFFD},  /* cut short by the end of the text */
        {"\xc0\xaf", 1, 0xFFFD},      /* C0 never starts a sequence */
        {"\xe0\x80\x80", 1, 0xFFFD},  /* overlong: E0 needs A0..BF next */
        {"\xed\xa0\x80", 1, 0xFFFD},  /* a surrogate: ED needs 80..9F next */
        {"\xf4\x90\x80\x80", 1, 0xFFFD}, /* past U+10FFFF */
        {"\xf5", 1, 0xFFFD}, {"\x80", 1, 0xFFFD}, {"\xff", 1, 0xFFFD},
    };
    size_t k;
    (void)state;
    for (k = 0; k < sizeof cases / sizeof cases[0]; k++) {
        dintattn__uchar u = dintattn__uchar_at((const unsigned char *)cases[k].s, strlen(cases[k].s), 0);
        assert_int_equal(u.len, cases[k].len);
        assert_int_equal(u.cp, cases[k].cp);
    }
}

/* ---------------------------------------------------------------------------------------- */
/* BPE                                                                                      */
/* ---------------------------------------------------------------------------------------- */

/* Toy ranks: bytes are their own ids; th 256, he 257, the 258, " t" 259, " the" 260, in 261,
   ng 262, ing 263, an 264, nd 265, and 266, " a" 267, " and" 268, aa 269, aaaa 270, er 271,
   re 272, ere 273, 12 274, 123 275, "\n\n" 276, "  " 277, lo 278, hel 279, hello 280, 's 281,
   e-acute 282, E2 82 283, "<|" 284, "|>" 285. */
static void test_toy_merges_give_hand_derived_ids(void **state)
{
    dintattn_tokenizer *t = toy();
    (void)state;
    assert_int_equal(dintattn_tokenizer_n_vocab(t), 286);
    EXPECT_IDS(t, "the", 0, 258); /* the whole piece is a token */
    /* t h e r e: th(256) < he(257) < er(271) < re(272): th; then the(258); then re: [the][re] */
    EXPECT_IDS(t, "there", 0, 258, 272);
    /* "in", " the", " end" = [ ][e][nd] (no " e", no "end") */
    EXPECT_IDS(t, "in the end", 0, 261, 260, 32, 101, 265);
    /* a a a a a: every pair is aa(269); tiktoken merges the leftmost first: [aa]aaa, [aa][aa]a,
       [aaaa]a -- merging from the right would give a[aaaa] */
    EXPECT_IDS(t, "aaaaa", 0, 270, 97);
    /* s i n g i n g: in(261) at 1 and 4, leftmost first; then ing(263) at 1 and 4 */
    EXPECT_IDS(t, "singing", 0, 115, 263, 263);
    /* h e l l o s: he(257), then lo(278) before hel(279), then hel, then hello(280) */
    EXPECT_IDS(t, "hellos", 0, 280, 115);
    /* "123" "45" */
    EXPECT_IDS(t, "12345", 0, 275, 52, 53);
    /* one piece "\n\n\n": [\n\n][\n] */
    EXPECT_IDS(t, "\n\n\n", 0, 276, 10);
    EXPECT_IDS(t, "\xc3\xa9", 0, 282);
    EXPECT_IDS(t, "\xe2\x82", 0, 283); /* an ill-formed piece that is a token */
    EXPECT_IDS(t, "'s", 0, 281);
    /* not allowed, or none defined: "<|" "endoftext" "|>"; e n d o f t e x t has only nd(265) */
    EXPECT_IDS(t, "<|endoftext|>", 1, 284, 101, 265, 111, 102, 116, 101, 120, 116, 285);
    dintattn_tokenizer_free(t);
}

/* tiktoken's _byte_pair_merge, as written there: a linear search for the lowest-ranked pair on
   every step. Returns the number of parts; starts[] gets their first bytes. */
static int reference_bpe(const dintattn_tokenizer *t, const unsigned char *p, int n, int *starts)
{
    int parts = n, i;
    for (i = 0; i < n; i++) starts[i] = i;
    starts[n] = n;
    for (;;) {
        int best = -1, best_rank = INT_MAX;
        for (i = 0; i + 1 < parts; i++) {
            int r = dintattn__lookup(t, p + starts[i], (size_t)(starts[i + 2] - starts[i]));
            if (r >= 0 && r < best_rank) {
                best_rank = r;
                best = i;
            }
        }
        if (best < 0) break;
        memmove(starts + best + 1, starts + best + 2, sizeof(int) * (size_t)(parts - best - 1));
        parts--;
    }
    return parts;
}

static unsigned long long rng_state = 12345;
static unsigned rnd(unsigned n)
{
    rng_state = rng_state * 6364136223846793005ull + 1442695040888963407ull;
    return (unsigned)(rng_state >> 33) % n;
}

static void test_bpe_matches_tiktoken_reference_on_random_pieces(void **state)
{
    static const char alphabet[] = "aehtrindgslo";
    dintattn_tokenizer *t = toy();
    int c;
    (void)state;
    for (c = 0; c < 3000; c++) {
        unsigned char s[80];
        int n = 1 + (int)rnd(79), i, ids[128], starts[81], parts, k;
        for (i = 0; i < n; i++) s[i] = (unsigned char)alphabet[rnd(sizeof alphabet - 1)];
        /* letters only: the whole text is one piece */
        k = encode(t, (const char *)s, (size_t)n, 0, ids, 128, NULL);
        if (dintattn__lookup(t, s, (size_t)n) >= 0) {
            assert_int_equal(k, 1);
            continue;
        }
        parts = reference_bpe(t, s, n, starts);
        assert_int_equal(k, parts);
        for (i = 0; i < parts; i++)
            assert_int_equal(ids[i], dintattn__lookup(t, s + starts[i], (size_t)(starts[i + 1] - starts[i])));
    }
    dintattn_tokenizer_free(t);
}

static void roundtrip(const dintattn_tokenizer *t, const unsigned char *s, size_t n, int allow_special)
{
    static int ids[70000];
    static unsigned char back[70000];
    int k = encode(t, (const char *)s, n, allow_special, ids, 70000, NULL);
    assert_true(k >= 0 && k <= (int)n);
    assert_int_equal(decode(t, ids, k, back, sizeof back), n);
    assert_memory_equal(back, s, n);
}

/* Random bytes (most of them ill-formed UTF-8) and random mixtures of well-formed fragments,
   special-token texts among them, come back byte for byte. */
static void test_decode_of_encode_is_identity(void **state)
{
    static const char *frag[] = {"a", "the", " ", "  ", "\n", "\r\n", "\t", "1", "123", "'s", "'S", "!", "...",
                                 "\xc3\xa9", "\xe2\x82\xac", "\xf0\x9f\x98\x80", "\xe4\xb8\xad", "\xcc\x81",
                                 "\xc2\xa0", "\xe3\x80\x80", "<|endoftext|>", "<|bos|>", "<|", "\xff", "\xe2\x82"};
    dintattn_tokenizer *t = toy(), *m_tok = NULL;
    dintattn_model *m = NULL;
    dintattn_error err;
    unsigned char s[4096];
    int c;
    (void)state;
    assert_int_equal(dintattn_model_load(TOY_MODEL, NULL, &m, &err), DINTATTN_OK);
    assert_int_equal(dintattn_tokenizer_from_model(m, &m_tok, &err), DINTATTN_OK);
    for (c = 0; c < 2000; c++) {
        size_t n = 0, i, want = rnd(300);
        if (c % 2) {
            for (i = 0; i < want; i++) s[n++] = (unsigned char)rnd(256);
        } else {
            while (n < want) {
                const char *f = frag[rnd(sizeof frag / sizeof frag[0])];
                memcpy(s + n, f, strlen(f));
                n += strlen(f);
            }
        }
        roundtrip(t, s, n, 0);
        roundtrip(m_tok, s, n, 0);
        roundtrip(m_tok, s, n, 1);
    }
    dintattn_tokenizer_free(m_tok);
    dintattn_model_free(m);
    dintattn_tokenizer_free(t);
}

/* The best of three encodes of s[0, len), in CPU seconds; *k the ids */
static double encode_secs(dintattn_tokenizer *t, const unsigned char *s, size_t len, int *ids, int cap, int *k)
{
    double best = 1e30;
    int rep;
    for (rep = 0; rep < 3; rep++) {
        clock_t t0 = clock();
        double secs;
        *k = encode(t, (const char *)s, len, 0, ids, cap, NULL);
        secs = (double)(clock() - t0) / CLOCKS_PER_SEC;
        if (secs < best) best = secs;
    }
    return best;
}

/* tiktoken's merge loop is quadratic in the piece; this one must not be: 100 KB pieces without
   a space (letters, punctuation), and 1 MB of one repeated letter, of spaces and of digits. Linear
   means 8 times the bytes take about 8 times as long (a quadratic loop: 64): the bound is on that
   ratio, not on seconds, so that a slow build (under the sanitizers, on a loaded machine, the
   1 MB of 'a' takes over a second) passes and a quadratic one does not. */
static void test_long_pieces_are_fast(void **state)
{
    dintattn_tokenizer *t = toy();
    size_t n = 1 << 20, i;
    unsigned char *s = (unsigned char *)malloc(n);
    int *ids = (int *)malloc(sizeof(int) * n), k, k8, kind;
    unsigned char *back = (unsigned char *)malloc(n);
    (void)state;
    assert_true(s && ids && back);
    for (kind = 0; kind < 5; kind++) {
        size_t len = kind < 2 ? 100000 : n;
        double secs, secs8;
        for (i = 0; i < len; i++)
            s[i] = kind == 0 ? (unsigned char)"aehtrindgslo"[rnd(12)] : kind == 1 ? (unsigned char)"!?.,;:-"[rnd(7)]
                 : kind == 2 ? 'a' : kind == 3 ? ' ' : (unsigned char)('0' + rnd(10));
        secs8 = encode_secs(t, s, len / 8, ids, (int)n, &k8);
        secs = encode_secs(t, s, len, ids, (int)n, &k);
        print_message("long piece kind %d: %lu bytes -> %d ids in %.3f s (an eighth: %.4f s)\n", kind,
                      (unsigned long)len, k, secs, secs8);
        if (secs > 24 * secs8 + 0.05)
            fail_msg("kind %d: %lu bytes took %.3f s, an eighth of them %.4f s: not linear", kind, (unsigned long)len,
                     secs, secs8);
        assert_true(k8 > 0 && k8 <= k);
        assert_int_equal(decode(t, ids, k, back, n), len);
        assert_memory_equal(back, s, len);
        /* 1 MB of 'a': aa, then aaaa, leftmost first: 2^18 x aaaa */
        if (kind == 2) assert_int_equal(k, 1 << 18);
    }
    free(s);
    free(ids);
    free(back);
    dintattn_tokenizer_free(t);
}

/* ---------------------------------------------------------------------------------------- */
/* The encode call, special tokens                                                          */
/* ---------------------------------------------------------------------------------------- */

static void test_encode_returns_the_count_it_needs(void **state)
{
    dintattn_tokenizer *t = toy();
    dintattn_error err;
    int ids[8] = {-7, -7, -7, -7, -7, -7, -7, -7}, all[16];
    const char *text = "in the end";
    (void)state;
    /* 5 ids needed, room for 2: the first 2 are written, nothing past them */
    assert_int_equal(encode(t, text, strlen(text), 0, ids, 2, &err), 5);
    assert_int_equal(enc(t, text, 0, all), 5);
    assert_int_equal(ids[0], all[0]);
    assert_int_equal(ids[1], all[1]);
    assert_int_equal(ids[2], -7);
    assert_int_equal(encode(t, text, strlen(text), 0, NULL, 0, &err), 5);
    assert_int_equal(encode(t, "", 0, 0, NULL, 0, &err), 0);
    assert_int_equal(encode(t, NULL, 0, 1, NULL, 0, &err), 0);
    /* bad arguments */
    assert_int_equal(encode(NULL, text, 3, 0, ids, 8, &err), -1);
    assert_int_equal(err.code, DINTATTN_ERR_ARG);
    assert_int_equal(encode(t, text, 3, 0, NULL, 8, &err), -1);
    assert_int_equal(encode(t, text, 3, 0, ids, -1, &err), -1);
    assert_int_equal(encode(t, NULL, 3, 0, ids, 8, &err), -1);
    /* the count has nowhere to go */
    assert_int_equal(dintattn_tokenizer_encode(t, text, 3, 0, ids, 8, NULL, &err), DINTATTN_ERR_ARG);
    dintattn_tokenizer_free(t);
}

static void test_special_tokens(void **state)
{
    dintattn_tokenizer *t = toy();
    dintattn_error err;
    size_t len;
    const char *p;
    (void)state;
    assert_int_equal(dintattn_tokenizer_add_special(t, "<|endoftext|>", 300, &err), DINTATTN_OK);
    assert_int_equal(dintattn_tokenizer_n_vocab(t), 301);
    p = dintattn_tokenizer_token(t, 300, &len);
    assert_int_equal(len, 13);
    assert_memory_equal(p, "<|endoftext|>", 13);
    EXPECT_IDS(t, "a<|endoftext|>b", 1, 97, 300, 98);
    EXPECT_IDS(t, "<|endoftext|><|endoftext|>", 1, 300, 300);
    /* not allowed: ordinary text ("<|" "endoftext" "|>") */
    EXPECT_IDS(t, "<|endoftext|>", 0, 284, 101, 265, 111, 102, 116, 101, 120, 116, 285);
    /* the text before a special token is encoded on its own: its trailing "  " ends that text, so
       \s+(?!\S) takes both spaces ("  " = 277) instead of leaving one to the next piece */
    EXPECT_IDS(t, "a  <|endoftext|>", 1, 97, 277, 300);
    /* the longest special token at a position wins; the earliest position wins over length */
    assert_int_equal(dintattn_tokenizer_add_special(t, "<x>", 310, &err), DINTATTN_OK);
    assert_int_equal(dintattn_tokenizer_add_special(t, "<x>yz", 311, &err), DINTATTN_OK);
    assert_int_equal(dintattn_tokenizer_add_special(t, "x>yz!", 312, &err), DINTATTN_OK);
    EXPECT_IDS(t, "<x>yz!", 1, 311, 33);
    EXPECT_IDS(t, "<x>y", 1, 310, 121);
    EXPECT_IDS(t, "a<x", 1, 97, 60, 120);
    assert_int_equal(dintattn_tokenizer_n_vocab(t), 313);
    /* refused: empty text, text already special, id already a token (ordinary or special) */
    assert_int_equal(dintattn_tokenizer_add_special(t, "", 400, &err), DINTATTN_ERR_ARG);
    assert_int_equal(dintattn_tokenizer_add_special(t, NULL, 400, &err), DINTATTN_ERR_ARG);
    assert_int_equal(dintattn_tokenizer_add_special(t, "<x>", 400, &err), DINTATTN_ERR_ARG);
    assert_non_null(strstr(err.message, "already id 310"));
    assert_int_equal(dintattn_tokenizer_add_special(t, "<new>", 97, &err), DINTATTN_ERR_ARG);
    assert_non_null(strstr(err.message, "already a token"));
    assert_int_equal(dintattn_tokenizer_add_special(t, "<new>", 300, &err), DINTATTN_ERR_ARG);
    assert_int_equal(dintattn_tokenizer_add_special(t, "<new>", -1, &err), DINTATTN_ERR_ARG);
    assert_int_equal(dintattn_tokenizer_add_special(t, "<new>", INT_MAX, &err), DINTATTN_ERR_ARG);
    assert_int_equal(dintattn_tokenizer_n_vocab(t), 313);
    assert_null(dintattn_tokenizer_token(t, 400, &len));
    assert_int_equal(len, 0);
    dintattn_tokenizer_free(t);
}

static void test_tokenizer_from_model(void **state)
{
    dintattn_model *m = NULL;
    dintattn_tokenizer *t = NULL;
    dintattn_error err;
    (void)state;
    /* tok_model carries toy.tiktoken with <|endoftext|> = 300 (EOS) and <|bos|> = 301 (BOS) */
    assert_int_equal(dintattn_model_load(TOY_MODEL, NULL, &m, &err), DINTATTN_OK);
    assert_int_equal(dintattn_tokenizer_from_model(m, &t, &err), DINTATTN_OK);
    assert_int_equal(dintattn_tokenizer_bos(t), 301);
    assert_int_equal(dintattn_tokenizer_eos(t), 300);
    assert_int_equal(dintattn_tokenizer_n_vocab(t), 302);
    EXPECT_IDS(t, "<|bos|>the<|endoftext|>", 1, 301, 258, 300);
    dintattn_tokenizer_free(t);
    dintattn_model_free(m);
    /* a model without one: a clear error, *tok NULL */
    assert_int_equal(dintattn_model_load(FIXTURES "diff_interleaved_f32.safetensors", NULL, &m, &err), DINTATTN_OK);
    t = (dintattn_tokenizer *)(void *)&err;
    assert_int_equal(dintattn_tokenizer_from_model(m, &t, &err), DINTATTN_ERR_ARG);
    assert_null(t);
    assert_non_null(strstr(err.message, "no tokenizer"));
    dintattn_model_free(m);
    /* a tokenizer with more ids than the model has embeddings: the loader refuses the file */
    assert_int_equal(dintattn_model_load(FIXTURES "tok_model_small_vocab.safetensors", NULL, &m, &err),
                     DINTATTN_ERR_METADATA);
    assert_null(m);
    assert_non_null(strstr(err.message, "ids up to 285 but vocab_size is 280"));
    /* a tokenizer without a model */
    t = toy();
    assert_int_equal(dintattn_tokenizer_bos(t), -1);
    assert_int_equal(dintattn_tokenizer_eos(t), -1);
    dintattn_tokenizer_free(t);
}

/* dintattn_tokenizer_encode_prompt's count into ids[0..max_ids), failing the test on an error. */
static int prompt(const dintattn_tokenizer *t, const char *s, int allow_special, int *ids, int max_ids)
{
    dintattn_error err;
    int n = -7;
    if (dintattn_tokenizer_encode_prompt(t, s, strlen(s), allow_special, ids, max_ids, &n, &err))
        fail_msg("encode_prompt: %s", err.message);
    return n;
}

static void test_encode_prompt_puts_bos_first_once(void **state)
{
    dintattn_tokenizer *t = NULL, *plain = toy();
    dintattn_error err;
    int ids[MAX_TOK], n, k, ordinary;
    (void)state;
    /* tok_model: "the" is 258, <|bos|> 301 (BOS) */
    assert_int_equal(dintattn_tokenizer_load(TOY_MODEL, &t, &err), DINTATTN_OK);
    assert_int_equal(prompt(t, "the", 1, ids, MAX_TOK), 2);
    assert_ids(ids, 2, (const int[]){301, 258}, 2);
    /* the text's own BOS is the one BOS */
    assert_int_equal(prompt(t, "<|bos|>the", 1, ids, MAX_TOK), 2);
    assert_ids(ids, 2, (const int[]){301, 258}, 2);
    /* ... in a buffer with no room for a BOS slot on top */
    ids[0] = ids[1] = -1;
    assert_int_equal(prompt(t, "<|bos|>the", 1, ids, 2), 2);
    assert_ids(ids, 2, (const int[]){301, 258}, 2);
    /* a BOS later in the text is no first BOS */
    assert_int_equal(prompt(t, "the<|bos|>", 1, ids, MAX_TOK), 3);
    assert_ids(ids, 3, (const int[]){301, 258, 301}, 3);
    /* <|bos|> as ordinary text is not BOS: BOS goes first */
    ordinary = enc(t, "<|bos|>", 0, ids);
    assert_true(ordinary > 1);
    assert_int_equal(prompt(t, "<|bos|>", 0, ids, MAX_TOK), ordinary + 1);
    assert_int_equal(ids[0], 301);
    assert_true(ids[1] != 301);
    /* an empty text is BOS alone */
    assert_int_equal(prompt(t, "", 1, ids, MAX_TOK), 1);
    assert_int_equal(ids[0], 301);
    /* measuring: max_ids 0 and 1 give the full count, 1 also the first id */
    assert_int_equal(prompt(t, "the", 1, NULL, 0), 2);
    ids[0] = -1;
    assert_int_equal(prompt(t, "the", 1, ids, 1), 2);
    assert_int_equal(ids[0], 301);
    assert_int_equal(prompt(t, "<|bos|>the", 1, ids, 1), 2);
    assert_int_equal(ids[0], 301);
    /* too small a buffer keeps the ids that fit, in order */
    n = prompt(t, "the the the", 1, ids, 2);
    assert_int_equal(n, 1 + enc(t, "the the the", 1, ids + 100));
    assert_int_equal(ids[0], 301);
    assert_int_equal(ids[1], ids[100]);
    /* NULL arguments */
    assert_int_equal(dintattn_tokenizer_encode_prompt(t, "a", 1, 1, NULL, 4, &n, &err), DINTATTN_ERR_ARG);
    assert_int_equal(dintattn_tokenizer_encode_prompt(NULL, "a", 1, 1, ids, 4, &n, &err), DINTATTN_ERR_ARG);
    /* a tokenizer without BOS: the text's ids as they are */
    assert_int_equal(prompt(plain, "the", 1, ids, MAX_TOK), 1);
    assert_int_equal(ids[0], 258);
    assert_int_equal(prompt(plain, "", 1, ids, MAX_TOK), 0);
    /* has_token: ranks 0..285 and the specials 300, 301 of toy.tiktoken, not the ids between nor
       the model's rows past them (a padded vocabulary of 310) */
    for (k = 0; k < 310; k++)
        if (dintattn_tokenizer_has_token(t, k) != (k <= 285 || k == 300 || k == 301))
            fail_msg("has_token(%d) is %d", k, dintattn_tokenizer_has_token(t, k));
    assert_int_equal(dintattn_tokenizer_has_token(t, 302), 0);
    assert_int_equal(dintattn_tokenizer_has_token(t, 309), 0);
    assert_int_equal(dintattn_tokenizer_has_token(t, -1), 0);
    assert_int_equal(dintattn_tokenizer_has_token(plain, 301), 0);
    assert_int_equal(dintattn_tokenizer_has_token(plain, 258), 1);
    dintattn_tokenizer_free(t);
    dintattn_tokenizer_free(plain);
}

static void test_stop_strings(void **state)
{
    static const char *const stops[] = {"</s>", "\n\n", ""};
    static const size_t lens[] = {4, 2, 0};
    const char *text = "ab\n\ncd</s>";
    int which = 7;
    (void)state;
    assert_int_equal(dintattn_stop_find(text, 10, 0, stops, lens, 3, &which), 2);
    assert_int_equal(which, 1);
    assert_int_equal(dintattn_stop_find(text, 10, 3, stops, lens, 3, &which), 6);
    assert_int_equal(which, 0);
    /* a stop must end inside the text; the empty one never matches */
    assert_true(dintattn_stop_find(text, 9, 3, stops, lens, 3, &which) == (size_t)-1);
    assert_int_equal(which, -1);
    assert_true(dintattn_stop_find("abc", 3, 0, stops + 2, lens + 2, 1, NULL) == (size_t)-1);
    /* shown text stops before a tail that may begin a stop ... */
    assert_int_equal(dintattn_stop_safe_end("hello </", 8, stops, lens, 2), 6);
    assert_int_equal(dintattn_stop_safe_end("hello <", 7, stops, lens, 2), 6);
    assert_int_equal(dintattn_stop_safe_end("hi\n", 3, stops, lens, 2), 2);
    assert_int_equal(dintattn_stop_safe_end("hello", 5, stops, lens, 2), 5);
    assert_int_equal(dintattn_stop_safe_end("a</s>b", 6, stops, lens, 2), 6); /* a whole stop is find's */
    /* ... and before an unfinished UTF-8 character, but not before a finished or invalid one */
    assert_int_equal(dintattn_stop_safe_end("ab\xc3", 3, NULL, NULL, 0), 2);
    assert_int_equal(dintattn_stop_safe_end("ab\xe2\x82", 4, NULL, NULL, 0), 2);
    assert_int_equal(dintattn_stop_safe_end("ab\xf0\x9f\x98", 5, NULL, NULL, 0), 2);
    assert_int_equal(dintattn_stop_safe_end("ab\xe2\x82\xac", 5, NULL, NULL, 0), 5);
    assert_int_equal(dintattn_stop_safe_end("ab\xe0\x80", 4, NULL, NULL, 0), 4); /* overlong: never a character */
    assert_int_equal(dintattn_stop_safe_end("ab\xff", 3, NULL, NULL, 0), 3);
    assert_int_equal(dintattn_stop_safe_end("\xc3<", 2, stops, lens, 2), 0);
}

/* A tokenizer file (format "dintattn-tokenizer") holding toy.tiktoken's ranks, at path. */
static void write_tokenizer_file(const char *path)
{
    FILE *in = fopen(TOY, "rb"), *out = fopen(path, "wb");
    static unsigned char ranks[1 << 16];
    char hdr[512];
    size_t n, h;
    int i;
    assert_non_null(in);
    assert_non_null(out);
    n = fread(ranks, 1, sizeof ranks, in);
    assert_true(n > 0 && n < sizeof ranks);
    fclose(in);
    h = (size_t)snprintf(hdr, sizeof hdr,
                         "{\"__metadata__\":{\"format\":\"dintattn-tokenizer\",\"version\":\"1\",\"tokenizer\":"
                         "\"{\\\"type\\\": \\\"tiktoken\\\"}\"},\"tokenizer.ranks\":{\"dtype\":\"U8\",\"shape\":[%lu],"
                         "\"data_offsets\":[0,%lu]}}", (unsigned long)n, (unsigned long)n);
    for (i = 0; i < 8; i++) fputc((int)((uint64_t)h >> (8 * i) & 0xFF), out);
    assert_int_equal(fwrite(hdr, 1, h, out), h);
    assert_int_equal(fwrite(ranks, 1, n, out), n);
    fclose(out);
}

/* dintattn_tokenizer_load takes each kind of file, and says which it read; every kind encodes
   toy.tiktoken's text alike. */
static void test_tokenizer_load_says_what_it_read(void **state)
{
    char path[128];
    dintattn_tokenizer *t = NULL;
    dintattn_model *m = NULL;
    dintattn_error err;
    FILE *f;
    static char ranks[1 << 16];
    size_t n;
    (void)state;
    t = toy();
    assert_string_equal(dintattn_tokenizer_source(t), "tiktoken rank file");
    EXPECT_IDS(t, "the", 1, 258);
    dintattn_tokenizer_free(t);
    assert_int_equal(dintattn_tokenizer_load(TOY_MODEL, &t, &err), DINTATTN_OK);
    assert_string_equal(dintattn_tokenizer_source(t), "model file");
    EXPECT_IDS(t, "<|bos|>the", 1, 301, 258);
    dintattn_tokenizer_free(t);
    assert_int_equal(dintattn_model_load(TOY_MODEL, NULL, &m, &err), DINTATTN_OK);
    assert_int_equal(dintattn_tokenizer_from_model(m, &t, &err), DINTATTN_OK);
    assert_string_equal(dintattn_tokenizer_source(t), "model file");
    dintattn_tokenizer_free(t);
    dintattn_model_free(m);
    snprintf(path, sizeof path, "/tmp/dintattn_test_tokenizer_%ld.safetensors", (long)getpid());
    write_tokenizer_file(path);
    if (dintattn_tokenizer_load(path, &t, &err) != DINTATTN_OK) fail_msg("%s", err.message);
    assert_string_equal(dintattn_tokenizer_source(t), "tokenizer file");
    EXPECT_IDS(t, "the", 1, 258);
    dintattn_tokenizer_free(t);
    remove(path);
    f = fopen(TOY, "rb");
    assert_non_null(f);
    n = fread(ranks, 1, sizeof ranks, f);
    fclose(f);
    assert_int_equal(dintattn_tokenizer_from_memory(ranks, n, &t, &err), DINTATTN_OK);
    assert_string_equal(dintattn_tokenizer_source(t), "tiktoken rank file");
    dintattn_tokenizer_free(t);
    /* a model file without a tokenizer */
    assert_int_equal(dintattn_tokenizer_load(FIXTURES "diff_interleaved_f32.safetensors", &t, &err), DINTATTN_ERR_ARG);
    assert_null(t);
    assert_string_equal(err.message, "model file 'tests/fixtures/diff_interleaved_f32.safetensors': the file carries no "
                                     "tokenizer (no tensor 'tokenizer.ranks'): give a tokenizer file (python3 "
                                     "tools/convert.py --format tokenizer, docs/tools.md) or a tiktoken rank file");
    /* a model file cut short is one, not a malformed rank file */
    f = fopen(TOY_MODEL, "rb");
    assert_non_null(f);
    n = fread(ranks, 1, 100, f);
    fclose(f);
    assert_int_equal(n, 100);
    f = fopen(path, "wb");
    assert_non_null(f);
    assert_int_equal(fwrite(ranks, 1, n, f), n);
    fclose(f);
    assert_int_equal(dintattn_tokenizer_load(path, &t, &err), DINTATTN_ERR_TRUNCATED);
    assert_null(t);
    assert_non_null(strstr(err.message, "reading a tokenizer: "));
    assert_non_null(strstr(err.message, " is truncated: the file has 100 of the "));
    /* a Hugging Face tokenizer.json: the command that converts it */
    f = fopen(path, "wb");
    assert_non_null(f);
    fputs("\n {\"version\": \"1.0\", \"model\": {\"type\": \"BPE\"}}", f);
    fclose(f);
    assert_int_equal(dintattn_tokenizer_load(path, &t, &err), DINTATTN_ERR_TOKENIZER);
    assert_null(t);
    {
        char want[512];
        snprintf(want, sizeof want, "%s is a JSON file (a Hugging Face tokenizer.json?), not a tokenizer file: convert "
                 "it with python3 tools/convert.py --format tokenizer %s out.safetensors (docs/tools.md)", path, path);
        assert_string_equal(err.message, want);
    }
    remove(path);
    /* a directory: a checkpoint's, whose tokenizer converts */
    assert_int_equal(dintattn_tokenizer_load("tests/fixtures", &t, &err), DINTATTN_ERR_IO);
    assert_null(t);
    assert_string_equal(err.message, "tests/fixtures is a directory, not a tokenizer file: give a tokenizer, model or "
                                     "tiktoken rank file, or convert a Hugging Face checkpoint's tokenizer with python3 "
                                     "tools/convert.py --format tokenizer tests/fixtures out.safetensors (docs/tools.md)");
}

static void test_token_lookup(void **state)
{
    dintattn_tokenizer *t = toy();
    size_t len = 99;
    const char *p;
    (void)state;
    p = dintattn_tokenizer_token(t, 97, &len);
    assert_int_equal(len, 1);
    assert_int_equal(p[0], 'a');
    p = dintattn_tokenizer_token(t, 280, &len);
    assert_int_equal(len, 5);
    assert_memory_equal(p, "hello", 5);
    assert_null(dintattn_tokenizer_token(t, -1, &len));
    assert_null(dintattn_tokenizer_token(t, 286, &len));
    assert_null(dintattn_tokenizer_token(t, INT_MAX, NULL));
    assert_null(dintattn_tokenizer_token(NULL, 0, NULL));
    dintattn_tokenizer_free(t);
}

/* ---------------------------------------------------------------------------------------- */
/* Rank files                                                                               */
/* ---------------------------------------------------------------------------------------- */

/* toy.tiktoken's lines, to be edited into broken files */
static char *toy_text;
static size_t toy_size;

static int load_toy_text(void **state)
{
    (void)state;
    toy_text = (char *)read_file(TOY, &toy_size);
    return toy_text ? 0 : -1;
}

static int free_toy_text(void **state)
{
    (void)state;
    free(toy_text);
    return 0;
}

/* toy.tiktoken with the first `from` (which must occur) replaced by `to`; "" appends `to`. */
static char *edited(const char *from, const char *to, size_t *n)
{
    size_t lf = strlen(from), lt = strlen(to);
    char *out = (char *)malloc(toy_size + lt + 1), *at;
    assert_non_null(out);
    memcpy(out, toy_text, toy_size);
    out[toy_size] = 0;
    if (!lf) {
        memcpy(out + toy_size, to, lt);
        *n = toy_size + lt;
        return out;
    }
    at = strstr(out, from);
    if (!at) fail_msg("'%s' is not in toy.tiktoken", from);
    memmove(at + lt, at + lf, toy_size - (size_t)(at - out) - lf + 1);
    memcpy(at, to, lt);
    *n = toy_size - lf + lt;
    return out;
}

static void test_bad_rank_files_are_refused(void **state)
{
    static const struct {
        const char *from, *to, *message;
    } cases[] = {
        {"", "\n", "line 287 is empty"},
        {"", "\n\n", "line 287 is empty"},
        {"QQ== 65\n", "", "no token for the byte 0x41"},
        {"QQ== 65", "QQ= 65", "line 66: 'QQ=' is not base64"},
        {"QQ== 65", "QR== 65", "line 66: 'QR==' is not base64"},  /* bits after the byte are not zero */
        {"QQ== 65", "Q=Q= 65", "is not base64"},
        {"QQ== 65", "QQ==QQ== 65", "is not base64"},              /* padding inside */
        {"QQ== 65", "Q!== 65", "is not base64"},
        {"QQ== 65", " 65", "line 66: '' is not base64"},
        {"QQ== 65", "QQ==", "line 66: expected 'BASE64 RANK'"},
        {"QQ== 65", "QQ== ", "line 66: expected 'BASE64 RANK'"},
        {"QQ== 65", "QQ==\t65", "line 66: expected 'BASE64 RANK'"},
        {"QQ== 65", "QQ==  65", "line 66: rank ' 65' is not an integer"},
        {"QQ== 65", "QQ== -65", "line 66: rank '-65' is not an integer"},
        {"QQ== 65", "QQ== 65x", "line 66: rank '65x' is not an integer"},
        {"QQ== 65", "QQ== 2147483647", "is not an integer in [0, 2147483646]"},
        {"QQ== 65", "QQ== 99999999999999999999", "is not an integer in [0, 2147483646]"},
        {"QQ== 65", "QQ== 66", "rank 66 is on lines 66 and 67"},
        {"", "QQ== 400\n", "lines 66 and 287 hold the same token"},
        {"aGVsbG8= 280", "aGVsbG8= 279", "rank 279 is on lines 280 and 281"},
    };
    size_t c;
    (void)state;
    for (c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        size_t n;
        char *text = edited(cases[c].from, cases[c].to, &n);
        dintattn_tokenizer *t = (dintattn_tokenizer *)(void *)&n;
        dintattn_error err;
        dintattn_result r = dintattn_tokenizer_from_memory(text, n, &t, &err);
        free(text);
        if (getenv("TEST_TOKENIZER_VERBOSE")) print_message("%s\n", err.message);
        assert_int_equal(r, DINTATTN_ERR_TOKENIZER);
        assert_int_equal(err.code, DINTATTN_ERR_TOKENIZER);
        assert_null(t);
        if (!strstr(err.message, cases[c].message)) fail_msg("message '%s' lacks '%s'", err.message, cases[c].message);
    }
}

static void test_rank_file_forms_accepted(void **state)
{
    static const struct {
        const char *from, *to;
        int n_vocab;
    } cases[] = {
        {"", "", 286},                              /* as is */
        {"fD4= 285\n", "fD4= 285", 286},            /* no final newline */
        {"aGVsbG8= 280", "aGVsbG8= 1000", 1001},    /* a gap: 280 is no token, 1000 is */
        {"QQ== 65", "QQ== 00065", 286},              /* leading zeros */
    };
    size_t c, n;
    dintattn_tokenizer *t;
    dintattn_error err;
    char *crlf;
    size_t i, k;
    (void)state;
    for (c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        char *text = edited(cases[c].from, cases[c].to, &n);
        assert_int_equal(dintattn_tokenizer_from_memory(text, n, &t, &err), DINTATTN_OK);
        free(text);
        assert_int_equal(dintattn_tokenizer_n_vocab(t), cases[c].n_vocab);
        if (cases[c].n_vocab == 1001) {
            assert_null(dintattn_tokenizer_token(t, 280, NULL));
            EXPECT_IDS(t, "hello", 0, 1000);
        }
        dintattn_tokenizer_free(t);
    }
    /* CRLF line ends */
    crlf = (char *)malloc(2 * toy_size);
    assert_non_null(crlf);
    for (i = k = 0; i < toy_size; i++) {
        if (toy_text[i] == '\n') crlf[k++] = '\r';
        crlf[k++] = toy_text[i];
    }
    assert_int_equal(dintattn_tokenizer_from_memory(crlf, k, &t, &err), DINTATTN_OK);
    free(crlf);
    EXPECT_IDS(t, "there", 0, 258, 272);
    dintattn_tokenizer_free(t);
}

/* Random edits of toy.tiktoken (bytes changed, removed, inserted; lines swapped in from the
   end) are loaded or refused with DINTATTN_ERR_TOKENIZER, never anything else; what loads still
   round-trips. Run under the sanitizers, this is a small fuzz test of the parser. */
static void test_mutated_rank_files_load_or_are_refused(void **state)
{
    static const char noise[] = "=+/ \n\r0123456789QABCaz\0\xff-";
    char *buf = (char *)malloc(toy_size + 64);
    int c, loaded = 0;
    (void)state;
    assert_non_null(buf);
    for (c = 0; c < 3000; c++) {
        size_t n = toy_size, at, k, edits = 1 + rnd(4);
        dintattn_tokenizer *t = NULL;
        dintattn_error err;
        dintattn_result r;
        memcpy(buf, toy_text, toy_size);
        for (k = 0; k < edits; k++) {
            at = rnd((unsigned)n);
            switch (rnd(3)) {
            case 0: buf[at] = noise[rnd(sizeof noise - 1)]; break;
            case 1: memmove(buf + at, buf + at + 1, n - at - 1); n--; break;
            default:
                if (n < toy_size + 60) {
                    memmove(buf + at + 1, buf + at, n - at);
                    buf[at] = noise[rnd(sizeof noise - 1)];
                    n++;
                }
            }
        }
        r = dintattn_tokenizer_from_memory(buf, n, &t, &err);
        if (r == DINTATTN_OK) {
            loaded++;
            static const char text[] = "the end, 123 \xff\xe2\x82!";
            roundtrip(t, (const unsigned char *)text, sizeof text - 1, 0);
        } else {
            assert_int_equal(r, DINTATTN_ERR_TOKENIZER);
            assert_null(t);
        }
        dintattn_tokenizer_free(t);
    }
    free(buf);
    print_message("%d of 3000 edited rank files loaded\n", loaded);
}

static void test_rank_file_io_errors(void **state)
{
    dintattn_tokenizer *t = NULL;
    dintattn_error err;
    (void)state;
    assert_int_equal(dintattn_tokenizer_load("tests/fixtures/no-such-file.tiktoken", &t, &err), DINTATTN_ERR_IO);
    assert_non_null(strstr(err.message, "no-such-file"));
    assert_int_equal(dintattn_tokenizer_load("tests/fixtures", &t, &err), DINTATTN_ERR_IO);
    assert_int_equal(dintattn_tokenizer_load("/dev/null", &t, &err), DINTATTN_ERR_IO);
    assert_null(t);
    assert_int_equal(dintattn_tokenizer_from_memory("", 0, &t, &err), DINTATTN_ERR_TOKENIZER);
    assert_non_null(strstr(err.message, "is empty"));
    assert_int_equal(dintattn_tokenizer_from_memory(NULL, 5, &t, &err), DINTATTN_ERR_ARG);
    assert_int_equal(dintattn_tokenizer_load(NULL, &t, &err), DINTATTN_ERR_ARG);
    assert_int_equal(dintattn_tokenizer_load(TOY, NULL, &err), DINTATTN_ERR_ARG);
}

/* ---------------------------------------------------------------------------------------- */
/* The split regex matcher                                                                  */
/* ---------------------------------------------------------------------------------------- */

/* Collects a split's pieces as byte lengths. */
typedef struct piece_list {
    const dintattn__rtext *text;
    int lens[4096], starts[4096]; /* in bytes */
    int n;
} piece_list;

static int collect_piece(void *user, int lo, int hi)
{
    piece_list *p = (piece_list *)user;
    assert_true(hi > lo);
    if (p->n < 4096) {
        p->lens[p->n] = p->text->off[hi] - p->text->off[lo];
        p->starts[p->n] = p->text->off[lo];
    }
    p->n++;
    return 0;
}

/* The pieces of s[0..n) under split sp (byte lengths into out->lens). */
static void regex_pieces(const dintattn__split *sp, const unsigned char *s, size_t n, piece_list *out)
{
    dintattn__rtext text;
    memset(&text, 0, sizeof text);
    out->n = 0;
    out->text = &text;
    assert_int_equal(dintattn__rsplit_text(sp, &text, s, n, collect_piece, out), 0);
    free(text.cp);
    out->text = NULL;
}

static dintattn__split *compile_split(const char *const *re, int n)
{
    dintattn__split *sp = NULL;
    dintattn_error err;
    if (dintattn__split_new(re, NULL, n, &sp, &err) != DINTATTN_OK) fail_msg("%s: %s", re[0], err.message);
    assert_non_null(sp);
    return sp;
}

static size_t unhex(const char *p, unsigned char *out, size_t cap, const char **end)
{
    size_t n = 0;
    while (isxdigit((unsigned char)p[0]) && isxdigit((unsigned char)p[1])) {
        assert_true(n < cap);
        out[n++] = (unsigned char)(hexval(p[0]) << 4 | hexval(p[1]));
        p += 2;
    }
    if (end) *end = p;
    return n;
}

/* pieces in fixture form: "3,1,2" */
static void parse_lens(const char *p, int *lens, int *n)
{
    char *q;
    *n = 0;
    while (*p && *p != '\t' && *p != '\n') {
        lens[(*n)++] = (int)strtol(p, &q, 10);
        p = q;
        if (*p == ',') p++;
    }
}

#define MAX_FAMILIES 12
/* tests/fixtures/pretok_families.txt: every family's pattern(s), compiled by the matcher, split
   every case as python3-regex does; cl100k's hand-written splitter does too; dintattn's named
   patterns are the fixture's, verbatim. */
static void test_regex_families_match_python_regex_fixture(void **state)
{
    FILE *f = fopen(FIXTURES "pretok_families.txt", "r");
    static char line[1 << 17];
    static char pats[MAX_FAMILIES][3][2048];
    static unsigned char bytes[8192];
    static piece_list got;
    char names[MAX_FAMILIES][32];
    int n_pats[MAX_FAMILIES] = {0}, n_fam = 0, k, checked = 0, cl100k = -1;
    dintattn__split *sp[MAX_FAMILIES];
    (void)state;
    assert_non_null(f);
    while (fgets(line, sizeof line, f)) {
        const char *p;
        size_t n;
        if (line[0] == '#') continue;
        if (strncmp(line, "pattern ", 8) == 0) {
            char name[32], hex[4096];
            int stage;
            assert_int_equal(sscanf(line + 8, "%31s %d %4095s", name, &stage, hex), 3);
            for (k = 0; k < n_fam && strcmp(names[k], name) != 0; k++) continue;
            if (k == n_fam) {
                assert_true(n_fam < MAX_FAMILIES);
                strcpy(names[n_fam++], name);
            }
            assert_int_equal(stage, n_pats[k]);
            n = unhex(hex, (unsigned char *)pats[k][stage], sizeof pats[k][stage] - 1, NULL);
            pats[k][stage][n] = 0;
            n_pats[k]++;
            continue;
        }
        if (strncmp(line, "families ", 9) == 0) {
            for (k = 0; k < n_fam; k++) {
                const char *re[3];
                int s;
                for (s = 0; s < n_pats[k]; s++) re[s] = pats[k][s];
                sp[k] = compile_split(re, n_pats[k]);
                if (strcmp(names[k], "cl100k") == 0) cl100k = k;
            }
            continue;
        }
        n = unhex(line, bytes, sizeof bytes, &p);
        for (k = 0; k < n_fam; k++) {
            int want[4096], n_want, i;
            assert_int_equal(*p, '\t');
            parse_lens(++p, want, &n_want);
            regex_pieces(sp[k], bytes, n, &got);
            if (got.n != n_want) fail_msg("%s: %.*s: %d pieces, want %d", names[k], (int)(2 * n), line, got.n, n_want);
            for (i = 0; i < n_want; i++)
                if (got.lens[i] != want[i])
                    fail_msg("%s: %.*s: piece %d has %d bytes, want %d", names[k], (int)(2 * n), line, i, got.lens[i],
                             want[i]);
            if (k == cl100k) { /* the hand-written splitter agrees */
                int hand[4096], n_hand = pieces(bytes, n, hand, 4096);
                assert_int_equal(n_hand, n_want);
                assert_memory_equal(hand, want, sizeof(int) * (size_t)n_want);
            }
            while (*p && *p != '\t' && *p != '\n') p++;
        }
        checked++;
    }
    fclose(f);
    assert_true(checked >= 2500);
    assert_true(cl100k >= 0);
    /* the names dintattn knows carry the fixture's patterns, verbatim */
    {
        static const char *const pairs[][2] = {{"gpt2", "gpt2"}, {"r50k", "gpt2"}, {"p50k", "gpt2"}, {"o200k", "o200k"},
                                               {"qwen2", "qwen2"}, {"deepseek_v3", "deepseek_v3"}};
        size_t q;
        const char *const *named;
        for (q = 0; q < sizeof pairs / sizeof pairs[0]; q++) {
            int n = dintattn__pattern_named(pairs[q][0], strlen(pairs[q][0]), &named), s;
            for (k = 0; k < n_fam && strcmp(names[k], pairs[q][1]) != 0; k++) continue;
            assert_true(k < n_fam);
            assert_int_equal(n, n_pats[k]);
            for (s = 0; s < n; s++) assert_string_equal(named[s], pats[k][s]);
        }
        assert_int_equal(dintattn__pattern_named("cl100k", 6, &named), 0); /* by hand */
        assert_int_equal(dintattn__pattern_named("llama3", 6, &named), 0);
        assert_string_equal(pats[cl100k][0], /* and the hand-written one is llama3's too */
                            "(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\\r\\n\\p{L}\\p{N}]?\\p{L}+|\\p{N}{1,3}| ?[^\\s\\p{L}\\p{N}]+[\\r\\n]*"
                            "|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+");
    }
    for (k = 0; k < n_fam; k++) dintattn__split_free(sp[k]);
}

/* A differential test: tests/fixtures/regex_random.txt holds random patterns of the subset and
   python3-regex's pieces of random strings; the matcher gives the same pieces, and refuses only
   patterns that can match the empty string (or repeat something that can). */
static void test_regex_random_patterns_match_python_regex(void **state)
{
    FILE *f = fopen(FIXTURES "regex_random.txt", "r");
    static char line[1 << 16], pat[1 << 14];
    static unsigned char bytes[4096];
    static piece_list got;
    dintattn__split *sp = NULL;
    dintattn_error err;
    int patterns = 0, refused = 0, checked = 0, skip = 0;
    (void)state;
    assert_non_null(f);
    while (fgets(line, sizeof line, f)) {
        const char *p;
        size_t n;
        int want[4096], n_want, i;
        if (line[0] == '#') continue;
        if (line[0] == 'P') {
            const char *re = pat;
            n = unhex(line + 2, (unsigned char *)pat, sizeof pat - 1, NULL);
            pat[n] = 0;
            dintattn__split_free(sp);
            sp = NULL;
            patterns++;
            skip = dintattn__split_new(&re, NULL, 1, &sp, &err) != DINTATTN_OK;
            if (skip) {
                refused++;
                if (!strstr(err.message, "empty string") && !strstr(err.message, "x{n}?"))
                    fail_msg("'%s' refused: %s", pat, err.message);
            }
            continue;
        }
        if (line[0] == 'E') { /* python3-regex matched the empty string with it */
            if (!skip) fail_msg("'%s' can match the empty string but compiled", pat);
            continue;
        }
        if (skip) continue;
        n = unhex(line, bytes, sizeof bytes, &p);
        assert_int_equal(*p, '\t');
        parse_lens(p + 1, want, &n_want);
        regex_pieces(sp, bytes, n, &got);
        if (got.n != n_want) fail_msg("'%s' on %.*s: %d pieces, want %d", pat, (int)(2 * n), line, got.n, n_want);
        for (i = 0; i < n_want; i++)
            if (got.lens[i] != want[i])
                fail_msg("'%s' on %.*s: piece %d has %d bytes, want %d", pat, (int)(2 * n), line, i, got.lens[i], want[i]);
        checked++;
    }
    fclose(f);
    dintattn__split_free(sp);
    print_message("%d random patterns (%d refused: they can match empty, or hold x{n}?), %d strings\n", patterns, refused,
                  checked);
    assert_true(patterns >= 700 && checked >= 3000);
}

static const char *const CL100K_RE =
    "(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\\r\\n\\p{L}\\p{N}]?\\p{L}+|\\p{N}{1,3}| ?[^\\s\\p{L}\\p{N}]+[\\r\\n]*|\\s*[\\r\\n]+"
    "|\\s+(?!\\S)|\\s+";

/* The matcher running cl100k's regex gives the hand-written splitter's pieces on pretok.txt, and
   on random byte strings (ill-formed UTF-8 included). */
static void test_regex_cl100k_is_the_hand_written_split(void **state)
{
    FILE *f = fopen(FIXTURES "pretok.txt", "r");
    static char line[65536];
    static unsigned char bytes[8192];
    static piece_list got;
    int hand[4096], n_hand, checked = 0, r;
    dintattn__split *sp = compile_split(&CL100K_RE, 1);
    (void)state;
    assert_non_null(f);
    while (fgets(line, sizeof line, f)) {
        size_t n;
        if (line[0] == '#') continue;
        n = unhex(line, bytes, sizeof bytes, NULL);
        regex_pieces(sp, bytes, n, &got);
        n_hand = pieces(bytes, n, hand, 4096);
        assert_int_equal(got.n, n_hand);
        assert_memory_equal(got.lens, hand, sizeof(int) * (size_t)n_hand);
        checked++;
    }
    fclose(f);
    assert_true(checked >= 500);
    for (r = 0; r < 3000; r++) {
        static const char *const frag[] = {"a", "Z", "'", "s", "S", "ll", "\xc5\xbf", " ", "  ", "\n", "\r", "\t", "1",
                                           "!", "\xc3\xa9", "\xe4\xb8\xad", "\xcc\x81", "\xe3\x80\x80", "\xff", "\xe2\x82",
                                           "\xf0\x9f\x98\x80", "\xc2\xa0", "\xd9\xa3", "\x00"};
        size_t n = 0;
        int parts = 1 + (int)rnd(30), i;
        for (i = 0; i < parts; i++) {
            const char *fr = frag[rnd(sizeof frag / sizeof frag[0])];
            size_t len = fr[0] ? strlen(fr) : 1;
            memcpy(bytes + n, fr, len);
            n += len;
        }
        regex_pieces(sp, bytes, n, &got);
        n_hand = pieces(bytes, n, hand, 4096);
        assert_int_equal(got.n, n_hand);
        assert_memory_equal(got.lens, hand, sizeof(int) * (size_t)n_hand);
    }
    dintattn__split_free(sp);
}

/* Pieces of a NUL-terminated text under one regex, as "a|b|c". */
static const char *split_str(const char *re, const char *text)
{
    static char out[1024];
    static piece_list got;
    dintattn__split *sp = compile_split(&re, 1);
    size_t at = 0, pos = 0;
    int k;
    regex_pieces(sp, (const unsigned char *)text, strlen(text), &got);
    for (k = 0; k < got.n; k++) {
        if (k) out[at++] = '|';
        memcpy(out + at, text + pos, (size_t)got.lens[k]);
        at += (size_t)got.lens[k];
        pos += (size_t)got.lens[k];
    }
    out[at] = 0;
    dintattn__split_free(sp);
    return out;
}

/* The subset's features one by one, with splits worked out by hand (Perl semantics; the same in
   python3-regex, fancy-regex and Oniguruma). */
static void test_regex_features(void **state)
{
    (void)state;
    assert_string_equal(split_str("a+", "xaay"), "x|aa|y");          /* unmatched text is a piece */
    assert_string_equal(split_str("a+?", "aaa"), "a|a|a");           /* lazy */
    assert_string_equal(split_str("a{2}", "aaaaa"), "aa|aa|a");
    assert_string_equal(split_str("a{2,}", "aaaaa"), "aaaaa");
    assert_string_equal(split_str("a{1,2}?b|a", "aab"), "aab");      /* lazy: one a, then b fails: two */
    assert_string_equal(split_str("a{1,2}?", "aaa"), "a|a|a");
    assert_string_equal(split_str("a*+a|b", "aaab"), "aaa|b");       /* possessive gives nothing back */
    assert_string_equal(split_str("a*a|b", "aaab"), "aaa|b");
    assert_string_equal(split_str("a?+a", "aa"), "aa");
    assert_string_equal(split_str("ab|a", "aab"), "a|ab");           /* leftmost-first */
    assert_string_equal(split_str("a|ab", "ab"), "a|b");             /* first alternative wins */
    assert_string_equal(split_str("(?:ab)+", "ababa"), "abab|a");
    assert_string_equal(split_str("(ab)+c", "ababc"), "ababc");      /* a capturing group groups */
    assert_string_equal(split_str("a(?=b)", "aab"), "a|a|b");
    assert_string_equal(split_str("a(?!b)", "aab"), "a|ab");
    assert_string_equal(split_str("\\s+(?!\\S)|\\s+", "a   b"), "a|  | |b");
    /* \A \z: the subject's start and end; \Z: the end or before a final \n; ^ $: a line's start
       and end, as Oniguruma reads tokenizer.json patterns (tests/split_check.sh checks these) */
    assert_string_equal(split_str("\\Aa", "aa\na"), "a|a\na");
    assert_string_equal(split_str("a\\z", "a\na"), "a\n|a");
    assert_string_equal(split_str("a\\Z", "a\na\n"), "a\n|a|\n");
    assert_string_equal(split_str("a\\Z", "a\na\n\n"), "a\na\n\n");
    assert_string_equal(split_str("^a", "aa\nab"), "a|a\n|a|b");
    assert_string_equal(split_str("a$", "aaa"), "aa|a");
    assert_string_equal(split_str("a$", "aa\naa\r\na"), "a|a|\naa\r\n|a"); /* \r is no line end */
    assert_string_equal(split_str("\\s+$|\\S+|\\s", "a \nb  \n c "), "a| |\n|b|  |\n| |c| ");
    /* a class inside a class joins it (Oniguruma and Rust's regex; python3-regex differs) */
    assert_string_equal(split_str("[a[bc]]+|.", "abcd[]"), "abc|d|[|]");
    assert_string_equal(split_str("[^a[bc]]+|.", "abcdx"), "a|b|c|dx");
    assert_string_equal(split_str(" ?[^(\\s|[.,!?])]+", "Hi, you(r) x!"), "Hi|,| you|(|r|)| x|!");
    assert_string_equal(split_str(".", "a\nb"), "a|\n|b");           /* . is not \n */
    assert_string_equal(split_str("[^a-c]+", "abxyzc"), "ab|xyz|c");
    assert_string_equal(split_str("[a\\-z]", "-b"), "-|b");
    assert_string_equal(split_str("[-a]", "-a"), "-|a");
    assert_string_equal(split_str("[\\x{e9}\\u00e8\\x41]+", "A\xc3\xa9\xc3\xa8z"), "A\xc3\xa9\xc3\xa8|z");
    assert_string_equal(split_str("\\p{Lu}\\p{Ll}+", "HelloWorld"), "Hello|World");
    assert_string_equal(split_str("\\pN+", "x12\xd9\xa3"), "x|12\xd9\xa3");
    assert_string_equal(split_str("\\P{L}+", "ab12!c"), "ab|12!|c");
    assert_string_equal(split_str("[\\p{M}]+", "e\xcc\x81\xcc\x81"), "e|\xcc\x81\xcc\x81");
    assert_string_equal(split_str("\\p{P}+|\\p{S}+", "!?$+"), "!?|$+");
    /* (?i:) folds ASCII letters both ways, s with U+017F and k with U+212A (Unicode simple case
       folding, as all three engines do), and nothing else */
    assert_string_equal(split_str("(?i:'s)", "'s'S'\xc5\xbf"), "'s|'S|'\xc5\xbf");
    assert_string_equal(split_str("(?i:k)", "kK\xe2\x84\xaax"), "k|K|\xe2\x84\xaa|x");
    assert_string_equal(split_str("(?i:[a-c])+", "aBCd"), "aBC|d");
    assert_string_equal(split_str("(?i:[^s])", "s\xc5\xbf" "x"), "s\xc5\xbf|x");
    assert_string_equal(split_str("(?i:a)b", "ABab"), "AB|ab");        /* the flag ends with its group */
    /* ill-formed UTF-8 matches as U+FFFD (So) would: one character per maximal subpart */
    assert_string_equal(split_str("\\p{S}", "\xff\xe2\x82(" ), "\xff|\xe2\x82|(");
    assert_string_equal(split_str("\\x{FFFD}", "\xff"), "\xff");
    /* sequences: each piece of the first split is split again by the second, gaps kept */
    {
        static const char *const re[2] = {"\\p{N}{1,3}", "[a-z]+"};
        dintattn__split *sp = compile_split(re, 2);
        static piece_list got;
        static const int want[] = {2, 3, 1, 2, 1, 1}; /* ab 123 4 cd - e */
        regex_pieces(sp, (const unsigned char *)"ab1234cd-e", 10, &got);
        assert_int_equal(got.n, 6);
        assert_memory_equal(got.lens, want, sizeof want);
        dintattn__split_free(sp);
    }
}

/* Syntax outside the subset is refused at compile time, naming it. */
static void test_regex_refuses_what_it_does_not_support(void **state)
{
    static const struct {
        const char *re, *msg;
    } cases[] = {
        {"(?<=a)b", "lookbehind"}, {"(?<!a)b", "lookbehind"}, {"(?>ab)", "atomic group"},
        {"(?P<x>a)", "group or inline flag"}, {"(?i)a", "group or inline flag"}, {"(?s:.)", "group or inline flag"},
        {"\\d", "escape \\d"}, {"\\w+", "escape \\w"}, {"\\bx", "escape \\b"}, {"(a)\\1", "escape \\1"},
        {"\\Gx", "escape \\G"}, {"\\p{Greek}", "\\p{...} the matcher does not know"}, {"\\p{Zs}", "does not know"},
        {"[[^a]]", "negated or POSIX class inside"}, {"[[:alpha:]]", "POSIX class"},
        {"[a-[b]]", "range that ends in a class"}, {"[a&&b]", "class operation"}, {"[]a]", "empty class"}, {"[a", "without its ']'"},
        {"(a", "without its ')'"}, {"a)", "without its '('"}, {"*a", "nothing to repeat"}, {"a**", "quantifier on a quantifier"},
        {"a{2", "not a repetition"}, {"a{,2}", "not a repetition"}, {"a{1001}", "over 1000"}, {"a{3,2}", "m < n"},
        {"(?:ab)++", "possessive quantifier on a group"}, {"a{2}?", "x{n}?"}, {"a{2,2}?", "x{n}?"},
        {"a|", "empty string"}, {"a*", "empty string"},
        {"(?=a)", "empty string"}, {"(?:a*)*b", "unbounded repetition of something that can match the empty"},
        {"a(?=b*)", "lookahead whose body"}, {"a(?=(?=(?=(?=(?=b)))))", "nested more than 4"},
        {"(?i:\\p{L})", "\\p or \\P under (?i:)"}, {"(?i:\xc3\xa9)", "non-ASCII character under (?i:)"},
        {"[b-a]", "end comes before"}, {"[a-\\s]", "range that ends in a class"}, {"\\x{110000}", "not a Unicode scalar"},
        {"\\ud800", "not a Unicode scalar"}, {"\xff", "not UTF-8"}, {"a{1000}{1000}", "quantifier on a quantifier"},
        {"(?:(?:(?:a{1000}){1000}))", "more than 8192 instructions"},
    };
    size_t k;
    dintattn_tokenizer *t = toy();
    dintattn_error err;
    (void)state;
    for (k = 0; k < sizeof cases / sizeof cases[0]; k++) {
        dintattn__split *sp = (dintattn__split *)(void *)&err;
        dintattn_result r = dintattn__split_new(&cases[k].re, NULL, 1, &sp, &err);
        if (r != DINTATTN_ERR_TOKENIZER) fail_msg("'%s' compiled (result %d)", cases[k].re, (int)r);
        assert_null(sp);
        if (!strstr(err.message, cases[k].msg) || !strstr(err.message, "at byte"))
            fail_msg("'%s': message '%s' does not say '%s'", cases[k].re, err.message, cases[k].msg);
        /* the API refuses it too, and the tokenizer keeps its split */
        assert_int_equal(dintattn_tokenizer_set_pattern(t, cases[k].re, &err), DINTATTN_ERR_TOKENIZER);
        assert_null(t->pre[0].split);
    }
    { /* the message says where */
        static const char *const at[][2] = {{"x(?<=a)b", "at byte 1 "}, {"ab\\d", "at byte 2 "},
                                            {"[a-z]{2", "at byte 7 "}, {"(?i:x)(?i:\\p{L})", "at byte 10 "}};
        for (k = 0; k < sizeof at / sizeof at[0]; k++) {
            dintattn__split *sp = NULL;
            assert_int_equal(dintattn__split_new(&at[k][0], NULL, 1, &sp, &err), DINTATTN_ERR_TOKENIZER);
            if (!strstr(err.message, at[k][1])) fail_msg("'%s': '%s' is not %s", at[k][0], err.message, at[k][1]);
        }
    }
    { /* a pattern past 64 KB */
        char *big = (char *)malloc(70000);
        const char *re = big;
        dintattn__split *sp = NULL;
        assert_non_null(big);
        memset(big, 'a', 69999);
        big[69999] = 0;
        assert_int_equal(dintattn__split_new(&re, NULL, 1, &sp, &err), DINTATTN_ERR_TOKENIZER);
        assert_non_null(strstr(err.message, "longer than 65536 bytes"));
        free(big);
    }
    {
        static const char *const two[2] = {"a", "(?<=x)"};
        assert_int_equal(dintattn_tokenizer_set_patterns(t, two, 2, &err), DINTATTN_ERR_TOKENIZER);
        assert_non_null(strstr(err.message, "split pattern 2: a lookbehind"));
        assert_int_equal(dintattn_tokenizer_set_patterns(t, two, 0, &err), DINTATTN_ERR_ARG);
        assert_int_equal(dintattn_tokenizer_set_pattern(t, NULL, &err), DINTATTN_ERR_ARG);
    }
    dintattn_tokenizer_free(t);
}

/* Hostile inputs take linear time: every family's pattern on 1 MB runs of one character class,
   and patterns that backtrack exponentially (or quadratically) in a naive engine. */
static void test_regex_hostile_inputs_take_linear_time(void **state)
{
    static const char *const families[] = {"gpt2", "o200k", "qwen2", "deepseek_v3"};
    static const char *const runs[] = {" ", "a", "A", "1", "'", "!", " \n", "\xe4\xb8\xad", "\xcc\x81", "\xff", "a'",
                                       " !", "\t "};
    static const struct {
        const char *re;
        const char *unit;
    } nasty[] = {
        {"(?:a|a)*b|a", "a"}, {"(?:a|aa)*c|a", "a"}, {"(?:a+)+b|a", "a"}, {"\\s+x|\\s", " "}, {"(?:\\s+\\s*)+x|\\s", " "},
        {"a*a*a*a*a*b|a", "a"}, {"(?:a?){30}a{30}|a", "a"}, {"(?:[a ]+ )+x|.", "a "}, {"\\s+(?!\\S)|\\s", " "},
        {"(?:a(?=a{0,60}b)|a)+x|a", "a"},
    };
    size_t n = 1 << 20, i, k;
    unsigned char *s = (unsigned char *)malloc(n);
    static piece_list got;
    (void)state;
    assert_non_null(s);
    for (k = 0; k < sizeof families / sizeof families[0] + sizeof nasty / sizeof nasty[0]; k++) {
        const char *const *re;
        int n_re, r;
        dintattn__split *sp;
        size_t nr = k < sizeof families / sizeof families[0] ? sizeof runs / sizeof runs[0] : 1;
        if (k < sizeof families / sizeof families[0]) {
            n_re = dintattn__pattern_named(families[k], strlen(families[k]), &re);
        } else {
            re = &nasty[k - sizeof families / sizeof families[0]].re;
            n_re = 1;
        }
        sp = compile_split(re, n_re);
        for (r = 0; r < (int)nr; r++) {
            const char *unit = nr > 1 ? runs[r] : nasty[k - sizeof families / sizeof families[0]].unit;
            size_t len = strlen(unit), total = k < sizeof families / sizeof families[0] ? n / 4 : n / 8;
            clock_t t0 = clock();
            double secs;
            for (i = 0; i + len <= total; i += len) memcpy(s + i, unit, len);
            regex_pieces(sp, s, i, &got);
            secs = (double)(clock() - t0) / CLOCKS_PER_SEC;
            /* linear: a fraction of a second here (~1 s under ASan); a backtracking engine without the
               memo does not finish these in minutes */
            if (secs > 6.0) fail_msg("'%s' on %lu bytes of '%s' took %.2f s", re[0], (unsigned long)i, unit, secs);
            if (secs > 0.2) print_message("'%.40s' on %lu bytes of '%s': %.2f s\n", re[0], (unsigned long)i, unit, secs);
        }
        dintattn__split_free(sp);
    }
    free(s);
}

/* dintattn_tokenizer_set_pattern: names and regexes change the pieces BPE sees; a model file's
   "pattern" is read; bad ones are refused at load. */
static void test_set_pattern_and_model_patterns(void **state)
{
    dintattn_tokenizer *t = toy();
    dintattn_model *m = NULL;
    dintattn_error err;
    static const char *const seq[2] = {"\\p{N}", "'s|'t|'re|'ve|'m|'ll|'d| ?\\p{L}+| ?\\p{N}+| ?[^\\s\\p{L}\\p{N}]+|\\s+(?!\\S)|\\s+"};
    (void)state;
    /* cl100k: "123" "45"; qwen2: single digits; gpt2: one piece, merged 12 then 123 */
    EXPECT_IDS(t, "12345", 0, 275, 52, 53);
    assert_int_equal(dintattn_tokenizer_set_pattern(t, "qwen2", &err), DINTATTN_OK);
    EXPECT_IDS(t, "12345", 0, 49, 50, 51, 52, 53);
    assert_int_equal(dintattn_tokenizer_set_pattern(t, "gpt2", &err), DINTATTN_OK);
    EXPECT_IDS(t, "12345", 0, 275, 52, 53);
    EXPECT_IDS(t, "x 12", 0, 120, 32, 274); /* " 12" is one piece: [ ][12] */
    /* GPT-2's contractions are case-sensitive: 'S is "'" then "S" */
    EXPECT_IDS(t, "'s'S", 0, 281, 39, 83);
    assert_int_equal(dintattn_tokenizer_set_pattern(t, "(?i:'s)|.", &err), DINTATTN_OK);
    EXPECT_IDS(t, "'s'S", 0, 281, 39, 83); /* "'S" is a piece, BPE has no token for it */
    assert_int_equal(dintattn_tokenizer_set_pattern(t, "[0-9]{2}", &err), DINTATTN_OK);
    EXPECT_IDS(t, "12345", 0, 274, 51, 52, 53); /* "12" "34" "5": 34 is no token */
    assert_int_equal(dintattn_tokenizer_set_pattern(t, "cl100k", &err), DINTATTN_OK);
    assert_null(t->pre[0].split);
    EXPECT_IDS(t, "12345", 0, 275, 52, 53);
    assert_int_equal(dintattn_tokenizer_set_patterns(t, seq, 2, &err), DINTATTN_OK);
    EXPECT_IDS(t, "x 12", 0, 120, 32, 49, 50);
    /* special tokens still cut the text first */
    assert_int_equal(dintattn_tokenizer_add_special(t, "<s>", 400, &err), DINTATTN_OK);
    EXPECT_IDS(t, "1<s>2", 1, 49, 400, 50);
    dintattn_tokenizer_free(t);
    /* a model file's pattern: {"regex": ["\\p{N}", GPT-2's]} */
    assert_int_equal(dintattn_model_load(FIXTURES "tok_model_regex.safetensors", NULL, &m, &err), DINTATTN_OK);
    assert_int_equal(dintattn_tokenizer_from_model(m, &t, &err), DINTATTN_OK);
    assert_non_null(t->pre[0].split);
    assert_int_equal(t->pre[0].split->n, 2);
    EXPECT_IDS(t, "x 12<|endoftext|>", 1, 120, 32, 49, 50, 300);
    dintattn_tokenizer_free(t);
    dintattn_model_free(m);
    assert_int_equal(dintattn_model_load(FIXTURES "tok_model_bad_pattern.safetensors", NULL, &m, &err),
                     DINTATTN_ERR_METADATA);
    assert_non_null(strstr(err.message, "metadata 'tokenizer': a lookbehind"));
}

/* HF's Split behaviors, inverted or not, on "a1b22c" with \\p{N} (segments a 1 b 2 2 c: the two 2s
   are two matches), worked out from tokenizers' own rules (normalizer.rs, split); all of them are
   checked against HF tokenizers itself by tests/split_check.sh. */
static void test_split_behaviors(void **state)
{
    static const struct {
        const char *json, *want;
    } cases[] = {
        {"{\"regex\": [{\"regex\": \"\\\\p{N}\", \"behavior\": \"Isolated\"}]}", "a|1|b|2|2|c"},
        {"{\"regex\": [{\"regex\": \"\\\\p{N}\", \"behavior\": \"Removed\"}]}", "a|b|c"},
        {"{\"regex\": [{\"regex\": \"\\\\p{N}\", \"behavior\": \"MergedWithPrevious\"}]}", "a1|b2|2|c"},
        {"{\"regex\": [{\"regex\": \"\\\\p{N}\", \"behavior\": \"MergedWithNext\"}]}", "a|1b|2|2c"},
        {"{\"regex\": [{\"regex\": \"\\\\p{N}\", \"behavior\": \"Contiguous\"}]}", "a|1|b|22|c"},
        {"{\"regex\": [{\"regex\": \"\\\\p{N}\", \"behavior\": \"Removed\", \"invert\": true}]}", "1|2|2"},
        {"{\"regex\": [{\"regex\": \"\\\\p{N}\", \"behavior\": \"MergedWithPrevious\", \"invert\": true}]}", "a|1b|2|2c"},
        {"{\"regex\": [{\"regex\": \"\\\\p{N}\", \"behavior\": \"MergedWithNext\", \"invert\": true}]}", "a1|b2|2|c"},
        {"{\"regex\": [{\"regex\": \"\\\\p{N}\", \"invert\": false}, \"b\"]}", "a|1|b|2|2|c"},
        {"{\"regex\": [{\"regex\": \"\\\\p{N}\", \"behavior\": \"Contiguous\"}, \"2\"]}", "a|1|b|2|2|c"},
    };
    static const char *const bad[] = {
        "{\"regex\": [{\"regex\": \"a\", \"behavior\": \"isolated\"}]}",       /* HF's spelling only */
        "{\"regex\": [{\"regex\": \"a\", \"behavior\": \"Isolated\", \"x\": 1}]}", /* unknown key */
        "{\"regex\": [{\"regex\": \"a\", \"invert\": 1}]}",
        "{\"regex\": [{\"behavior\": \"Isolated\"}]}",
    };
    static piece_list got;
    size_t k;
    (void)state;
    for (k = 0; k < sizeof cases / sizeof cases[0] + sizeof bad / sizeof bad[0]; k++) {
        const char *json = k < sizeof cases / sizeof cases[0] ? cases[k].json : bad[k - sizeof cases / sizeof cases[0]];
        dintattn__json j;
        dintattn__split *sp = NULL;
        dintattn_error err;
        dintattn_result r;
        memset(&j, 0, sizeof j);
        assert_true(dintattn__json_parse(&j, json, strlen(json)) >= 0);
        r = dintattn__split_from_json(&j, &j.nodes[0], &sp, &err);
        dintattn__json_free(&j);
        if (k >= sizeof cases / sizeof cases[0]) {
            if (r != DINTATTN_ERR_METADATA) fail_msg("%s: result %d", json, (int)r);
            assert_null(sp);
            continue;
        }
        if (r != DINTATTN_OK) fail_msg("%s: %s", json, err.message);
        {
            char out[64];
            size_t at = 0;
            const char *text = "a1b22c";
            int i;
            regex_pieces(sp, (const unsigned char *)text, 6, &got);
            for (i = 0; i < got.n; i++) {
                if (i) out[at++] = '|';
                memcpy(out + at, text + got.starts[i], (size_t)got.lens[i]);
                at += (size_t)got.lens[i];
            }
            out[at] = 0;
            if (strcmp(out, cases[k].want) != 0) fail_msg("%s: %s, want %s", json, out, cases[k].want);
        }
        dintattn__split_free(sp);
    }
}

/* JSON forms of "pattern" the loader accepts or refuses (through the same function). */
static void test_pattern_json_forms(void **state)
{
    static const struct {
        const char *json;
        dintattn_result want;
        int n;
    } cases[] = {
        {"{\"pattern\": \"cl100k\"}", DINTATTN_OK, 0}, {"{\"pattern\": \"llama3\"}", DINTATTN_OK, 0},
        {"{\"pattern\": \"gpt2\"}", DINTATTN_OK, 1}, {"{\"pattern\": \"o200k\"}", DINTATTN_OK, 1},
        {"{\"pattern\": \"qwen2\"}", DINTATTN_OK, 1}, {"{\"pattern\": \"deepseek_v3\"}", DINTATTN_OK, 3},
        {"{\"pattern\": {\"regex\": \"a+|.\"}}", DINTATTN_OK, 1},
        {"{\"pattern\": {\"regex\": [\"\\\\p{N}\", \"a+|.\"]}}", DINTATTN_OK, 2},
        {"{\"pattern\": \"gpt5\"}", DINTATTN_ERR_METADATA, 0}, {"{\"pattern\": 3}", DINTATTN_ERR_METADATA, 0},
        {"{\"pattern\": {\"regex\": []}}", DINTATTN_ERR_METADATA, 0},
        {"{\"pattern\": {\"regex\": [\"a\", 1]}}", DINTATTN_ERR_METADATA, 0},
        {"{\"pattern\": {\"regex\": \"a\", \"x\": 1}}", DINTATTN_ERR_METADATA, 0},
        {"{\"pattern\": {\"regex\": \"\\\\d\"}}", DINTATTN_ERR_METADATA, 0},
        {"{\"pattern\": {\"regex\": [\"a\", \"a\", \"a\", \"a\", \"a\", \"a\", \"a\", \"a\"]}}", DINTATTN_OK, 8},
        {"{\"pattern\": {\"regex\": [\"a\", \"a\", \"a\", \"a\", \"a\", \"a\", \"a\", \"a\", \"a\"]}}", DINTATTN_ERR_METADATA, 0},
    };
    size_t k;
    (void)state;
    for (k = 0; k < sizeof cases / sizeof cases[0]; k++) {
        dintattn__json j;
        dintattn__split *sp = NULL;
        dintattn_error err;
        dintattn_result r;
        memset(&j, 0, sizeof j);
        assert_true(dintattn__json_parse(&j, cases[k].json, strlen(cases[k].json)) >= 0);
        r = dintattn__split_from_json(&j, dintattn__json_get(&j, &j.nodes[0], "pattern"), &sp, &err);
        if (r != cases[k].want) fail_msg("%s: result %d (%s)", cases[k].json, (int)r, err.message);
        if (r == DINTATTN_OK) {
            assert_int_equal(sp ? sp->n : 0, cases[k].n);
        } else {
            assert_null(sp);
            assert_non_null(strstr(err.message, "metadata 'tokenizer'"));
        }
        dintattn__split_free(sp);
        dintattn__json_free(&j);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_pretok_hand_reasoned_splits),
        cmocka_unit_test(test_pretok_matches_python_regex_fixture),
        cmocka_unit_test(test_unicode_classes_match_ucd),
        cmocka_unit_test(test_utf8_ill_formed_units),
        cmocka_unit_test(test_toy_merges_give_hand_derived_ids),
        cmocka_unit_test(test_bpe_matches_tiktoken_reference_on_random_pieces),
        cmocka_unit_test(test_decode_of_encode_is_identity),
        cmocka_unit_test(test_long_pieces_are_fast),
        cmocka_unit_test(test_encode_returns_the_count_it_needs),
        cmocka_unit_test(test_special_tokens),
        cmocka_unit_test(test_tokenizer_from_model),
        cmocka_unit_test(test_encode_prompt_puts_bos_first_once),
        cmocka_unit_test(test_stop_strings),
        cmocka_unit_test(test_tokenizer_load_says_what_it_read),
        cmocka_unit_test(test_token_lookup),
        cmocka_unit_test(test_bad_rank_files_are_refused),
        cmocka_unit_test(test_rank_file_forms_accepted),
        cmocka_unit_test(test_mutated_rank_files_load_or_are_refused),
        cmocka_unit_test(test_rank_file_io_errors),
        cmocka_unit_test(test_regex_families_match_python_regex_fixture),
        cmocka_unit_test(test_regex_cl100k_is_the_hand_written_split),
        cmocka_unit_test(test_regex_random_patterns_match_python_regex),
        cmocka_unit_test(test_regex_features),
        cmocka_unit_test(test_regex_refuses_what_it_does_not_support),
        cmocka_unit_test(test_regex_hostile_inputs_take_linear_time),
        cmocka_unit_test(test_set_pattern_and_model_patterns),
        cmocka_unit_test(test_pattern_json_forms),
        cmocka_unit_test(test_split_behaviors),
    };
    return cmocka_run_group_tests_name("tokenizer", tests, load_toy_text, free_toy_text);
}
