/* HF BPE tokenizers (docs/format.md section 5, type "bpe"): merges in list order,
   byte fallback and the unknown token, added tokens and their flags, the normalizer, the
   pre-tokenizer's Metaspace and ByteLevel steps, the decoder, tokenizer files, and refusals.

   The tokenizers are tiny and written here; every expected id is worked out by hand from HF
   tokenizers' rules (models/bpe/model.rs merge_word and word.rs merge_all; added_vocabulary.rs
   find_matches; pre_tokenizers/metaspace.rs; normalizers/prepend.rs, replace.rs), step by step
   in the comments. tests/hf_tokenizer_check.sh compares real tokenizer.json files with the
   library itself. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#define DINTATTN_IMPLEMENTATION
#include "../dintattn.h"
#include "test_util.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_IDS 64

static void b64(const char *s, size_t n, char *out)
{
    static const char tab[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    const unsigned char *p = (const unsigned char *)s;
    size_t i, o = 0;
    for (i = 0; i + 2 < n; i += 3) {
        out[o++] = tab[p[i] >> 2];
        out[o++] = tab[(p[i] & 3) << 4 | p[i + 1] >> 4];
        out[o++] = tab[(p[i + 1] & 15) << 2 | p[i + 2] >> 6];
        out[o++] = tab[p[i + 2] & 63];
    }
    if (n - i == 1) {
        out[o++] = tab[p[i] >> 2];
        out[o++] = tab[(p[i] & 3) << 4];
        out[o++] = '=';
        out[o++] = '=';
    } else if (n - i == 2) {
        out[o++] = tab[p[i] >> 2];
        out[o++] = tab[(p[i] & 3) << 4 | p[i + 1] >> 4];
        out[o++] = tab[(p[i + 1] & 15) << 2];
        out[o++] = '=';
    }
    out[o] = 0;
}

/* Writes a tokenizer file: vocab[k] is token k (a NULL-terminated list), merges "L R\n" lines
   (NULL: no tensor), meta the "tokenizer" JSON. Returns the path (static buffer). */
static const char *tok_file(const char *const *vocab, const char *merges, const char *meta)
{
    static char ranks[1 << 14], header[1 << 15], esc[1 << 14];
    size_t nr = 0, nm = merges ? strlen(merges) : 0, nh;
    const void *parts[2];
    size_t sizes[2];
    int k;
    for (k = 0; vocab[k]; k++) {
        char line[256];
        b64(vocab[k], strlen(vocab[k]), line);
        nr += (size_t)snprintf(ranks + nr, sizeof ranks - nr, "%s %d\n", line, k);
    }
    json_escape(esc, 0, meta);
    if (merges)
        nh = (size_t)snprintf(header, sizeof header,
                              "{\"__metadata__\":{\"format\":\"dintattn-tokenizer\",\"version\":\"1\",\"tokenizer\":\"%s\"},"
                              "\"tokenizer.ranks\":{\"dtype\":\"U8\",\"shape\":[%zu],\"data_offsets\":[0,%zu]},"
                              "\"tokenizer.merges\":{\"dtype\":\"U8\",\"shape\":[%zu],\"data_offsets\":[%zu,%zu]}}",
                              esc, nr, nr, nm, nr, nr + nm);
    else
        nh = (size_t)snprintf(header, sizeof header,
                              "{\"__metadata__\":{\"format\":\"dintattn-tokenizer\",\"version\":\"1\",\"tokenizer\":\"%s\"},"
                              "\"tokenizer.ranks\":{\"dtype\":\"U8\",\"shape\":[%zu],\"data_offsets\":[0,%zu]}}",
                              esc, nr, nr);
    parts[0] = ranks;
    sizes[0] = nr;
    parts[1] = merges;
    sizes[1] = nm;
    return write_safetensors("bpe", header, nh, parts, sizes, 2);
}

static dintattn_tokenizer *load(const char *const *vocab, const char *merges, const char *meta)
{
    dintattn_tokenizer *t = NULL;
    dintattn_error err;
    const char *path = tok_file(vocab, merges, meta);
    if (dintattn_tokenizer_load(path, &t, &err) != DINTATTN_OK) fail_msg("%s", err.message);
    remove(path);
    return t;
}

/* Loading fails with code and a message holding `what`. */
static void refused(const char *const *vocab, const char *merges, const char *meta, dintattn_result code,
                    const char *what)
{
    dintattn_tokenizer *t = (dintattn_tokenizer *)(void *)&t;
    dintattn_error err;
    const char *path = tok_file(vocab, merges, meta);
    dintattn_result r = dintattn_tokenizer_load(path, &t, &err);
    remove(path);
    assert_null(t);
    if (r != code || !strstr(err.message, what))
        fail_msg("got %d '%s', want %d '...%s...'", (int)r, err.message, (int)code, what);
}

static void expect(const dintattn_tokenizer *t, const char *text, int allow_special, const int *want, int n_want)
{
    int ids[MAX_IDS], n = -1, i;
    dintattn_error err;
    if (dintattn_tokenizer_encode(t, text, strlen(text), allow_special, ids, MAX_IDS, &n, &err))
        fail_msg("encode '%s': %s", text, err.message);
    if (n != n_want) fail_msg("'%s': got %d ids, want %d", text, n, n_want);
    for (i = 0; i < n; i++)
        if (ids[i] != want[i]) fail_msg("'%s': id %d is %d, want %d", text, i, ids[i], want[i]);
}

#define EXPECT(t, text, allow, ...)                                       \
    do {                                                                  \
        static const int want_[] = {__VA_ARGS__};                         \
        expect(t, text, allow, want_, (int)(sizeof want_ / sizeof *want_)); \
    } while (0)

static void expect_decode(const dintattn_tokenizer *t, const int *ids, int n, int skip, const char *want)
{
    char out[256];
    size_t len = 0;
    dintattn_error err;
    assert_int_equal(dintattn_tokenizer_decode(t, ids, n, skip, out, sizeof out, &len, &err), DINTATTN_OK);
    if (len != strlen(want) || memcmp(out, want, len) != 0) fail_msg("decoded '%.*s', want '%s'", (int)len, out, want);
}

/* a b c, ab, bc, abc: merges list (b c) first, then (a b), then (ab c). */
static const char *const abc_vocab[] = {"a", "b", "c", "ab", "bc", "abc", NULL};

static void test_merges_go_in_list_order(void **state)
{
    dintattn_tokenizer *t;
    (void)state;
    /* "abc": pairs (a b) rank 1 and (b c) rank 0 -> b c merge first: a bc; (a bc) is no merge.
       tiktoken's rule (the lowest-ranked token) would make ab (id 3) first, then abc. */
    t = load(abc_vocab, "1 2\n0 1\n3 2\n", "{\"type\": \"bpe\"}");
    EXPECT(t, "abc", 1, 0, 4);
    EXPECT(t, "ab", 1, 3);        /* (a b) */
    EXPECT(t, "abab", 1, 3, 3);   /* (a b) at 0 and 2: leftmost first, then the other */
    EXPECT(t, "cab", 1, 2, 3);
    EXPECT(t, "abcd", 1, 0, 4);   /* d is no token and there is no unk or fallback: dropped, as HF */
    dintattn_tokenizer_free(t);
    /* the same pairs with (ab c) listed first: a b c -> (a b) is the only candidate -> ab c -> abc */
    t = load(abc_vocab, "3 2\n0 1\n1 2\n", "{\"type\": \"bpe\"}");
    EXPECT(t, "abc", 1, 5);
    dintattn_tokenizer_free(t);
    /* a pair listed twice keeps its last line: (b c) at rank 3 now comes after (a b) at 1 */
    t = load(abc_vocab, "1 2\n0 1\n3 2\n1 2\n", "{\"type\": \"bpe\"}");
    EXPECT(t, "abc", 1, 5); /* a b c -> ab c (rank 1) -> abc (rank 2) */
    dintattn_tokenizer_free(t);
    /* ignore_merges: a text that is a token is that token, merges or not */
    t = load(abc_vocab, "1 2\n0 1\n", "{\"type\": \"bpe\", \"ignore_merges\": true}");
    EXPECT(t, "abc", 1, 5);
    dintattn_tokenizer_free(t);
    t = load(abc_vocab, "1 2\n0 1\n", "{\"type\": \"bpe\", \"ignore_merges\": false}");
    EXPECT(t, "abc", 1, 0, 4);
    dintattn_tokenizer_free(t);
}

/* SentencePiece-style: U+2581 for spaces, <0xHH> byte tokens, <unk>. */
static const char *const sp_vocab[] = {"<unk>", "a", "\xE2\x96\x81", "\xE2\x96\x81" "a", "<0xC3>", "<0xA9>", "<x>",
                                       "b", "\xE2\x96\x81" "b", NULL};
#define SP_NORM "\"normalizer\": [{\"prepend\": \"\xE2\x96\x81\"}, {\"replace\": [\" \", \"\xE2\x96\x81\"]}]"
#define SP_DEC "\"decoder\": [{\"replace\": [\"\xE2\x96\x81\", \" \"]}, \"byte_fallback\", \"fuse\", {\"strip\": [\" \", 1, 0]}]"

static void test_byte_fallback_and_unknown(void **state)
{
    dintattn_tokenizer *t;
    static const int ids[] = {3, 2, 4, 5};
    (void)state;
    t = load(sp_vocab, "2 1\n2 7\n",
             "{\"type\": \"bpe\", \"byte_fallback\": true, \"unk_id\": 0, \"fuse_unk\": true, " SP_NORM ", " SP_DEC "}");
    /* "a é" -> "▁a▁é" -> ▁ a ▁ é; é is no token: its bytes C3 A9 as <0xC3> <0xA9>; (▁ a) merges */
    EXPECT(t, "a \xC3\xA9", 1, 3, 2, 4, 5);
    /* ü (C3 BC): no <0xBC>, so no fallback: <unk>, and the next ü fuses into it */
    EXPECT(t, "a\xC3\xBC\xC3\xBC", 1, 3, 0);
    EXPECT(t, "a\xC3\xBC" "a\xC3\xBC", 1, 3, 0, 1, 0);
    /* the decoder: ▁ is a space, <0xHH> its byte, then the first space of the text goes */
    expect_decode(t, ids, 4, 0, "a \xC3\xA9");
    {
        size_t len;
        const char *s = dintattn_tokenizer_token(t, 3, &len);
        assert_int_equal(len, 2);
        assert_memory_equal(s, " a", 2);
        s = dintattn_tokenizer_token(t, 5, &len);
        assert_int_equal(len, 1);
        assert_int_equal((unsigned char)s[0], 0xA9);
    }
    /* the normalizer can make more ids than bytes: "é" (2 bytes) -> ▁ <0xC3> <0xA9> */
    {
        int n = -1, one[1];
        assert_int_equal(dintattn_tokenizer_encode(t, "\xC3\xA9", 2, 1, one, 1, &n, NULL), DINTATTN_OK);
        assert_int_equal(n, 3);
        assert_int_equal(one[0], 2);
    }
    dintattn_tokenizer_free(t);
    /* fuse_unk false: one <unk> per character */
    t = load(sp_vocab, "2 1\n", "{\"type\": \"bpe\", \"unk_id\": 0, " SP_NORM "}");
    EXPECT(t, "a\xC3\xBC\xC3\xBC", 1, 3, 0, 0);
    EXPECT(t, "a\xC3\xA9", 1, 3, 0); /* no byte_fallback: é is unknown too */
    dintattn_tokenizer_free(t);
}

static void test_added_tokens_and_their_flags(void **state)
{
    dintattn_tokenizer *t;
    static const int ids[] = {3, 6, 3};
    (void)state;
    t = load(sp_vocab, "2 1\n2 7\n",
             "{\"type\": \"bpe\", \"unk_id\": 0, " SP_NORM ", " SP_DEC ", \"added_tokens\": ["
             "{\"id\": 6, \"content\": \"<x>\", \"special\": true, \"lstrip\": true, \"rstrip\": true, "
             "\"normalized\": false, \"single_word\": false},"
             "{\"id\": 9, \"content\": \"<y>\", \"special\": true, \"lstrip\": false, \"rstrip\": false, "
             "\"normalized\": false, \"single_word\": false},"
             "{\"id\": 10, \"content\": \"ab\", \"special\": false, \"lstrip\": false, \"rstrip\": false, "
             "\"normalized\": false, \"single_word\": true},"
             "{\"id\": 11, \"content\": \" b\", \"special\": false, \"lstrip\": false, \"rstrip\": false, "
             "\"normalized\": true, \"single_word\": false}]}");
    /* lstrip and rstrip: <x> takes the spaces around it; "a" and "a" are segments of their own,
       each normalized to "▁a" */
    EXPECT(t, "a  <x>  a", 1, 3, 6, 3);
    expect_decode(t, ids, 3, 0, "a<x> a");
    expect_decode(t, ids, 3, 1, "a a");
    /* no flags: the spaces stay text: "a " -> "▁a▁" ; " a" -> "▁▁a" */
    EXPECT(t, "a <y> a", 1, 3, 2, 9, 2, 3);
    /* allow_special 0: <y> is text: "a <y> a" -> "▁a▁<y>▁a" -> ▁ a ▁ < y > ▁ a, the three of <y>
       unknown (one <unk> each: fuse_unk is off); (▁ a) merges twice */
    EXPECT(t, "a <y> a", 0, 3, 2, 0, 0, 0, 3);
    /* single_word: "ab" alone is the token; inside "cab" it is not (c before it is a word
       character): then c a b are text; "cab" -> "▁cab" -> ▁ <unk>(c) a b */
    EXPECT(t, "ab", 1, 10);
    EXPECT(t, "cab", 1, 2, 0, 1, 7);
    EXPECT(t, "ab.", 1, 10, 2, 0); /* '.' is no word character; ".": "▁." -> ▁ <unk> */
    /* a normalized token is matched in the normalized text, as its normalized form: " b" ->
       Prepend -> "▁ b" -> Replace -> "▁▁b". "a b" -> "▁a▁b" holds no "▁▁b": ▁a ▁b; "a  b" ->
       "▁a▁▁b": ▁a, then the token */
    EXPECT(t, "a b", 1, 3, 8);
    EXPECT(t, "a  b", 1, 3, 11);
    {
        /* and it decodes from that normalized form, through the decoder, as HF keeps it */
        static const int ab[] = {3, 11};
        expect_decode(t, ab, 2, 0, "a  b");
    }
    dintattn_tokenizer_free(t);
}

static void test_metaspace_and_prefix_space(void **state)
{
    static const char *const bl_vocab[] = {" ", "h", "i", " h", " hi", NULL};
    dintattn_tokenizer *t;
    (void)state;
    /* Metaspace, scheme "first": ▁ goes first only where the text starts */
    t = load(sp_vocab, "2 1\n",
             "{\"type\": \"bpe\", \"unk_id\": 0, \"pre_tokenizer\": [{\"metaspace\": \"\xE2\x96\x81\", "
             "\"prepend_scheme\": \"first\", \"split\": true}], \"added_tokens\": [{\"id\": 6, \"content\": \"<x>\", "
             "\"special\": true, \"lstrip\": false, \"rstrip\": false, \"normalized\": false, \"single_word\": false}]}");
    EXPECT(t, "a<x>a", 1, 3, 6, 1);
    EXPECT(t, "<x>a", 1, 6, 1);
    /* split: "a a" -> "▁a▁a" cut before each ▁ -> ▁a, ▁a */
    EXPECT(t, "a a", 1, 3, 3);
    dintattn_tokenizer_free(t);
    t = load(sp_vocab, "2 1\n",
             "{\"type\": \"bpe\", \"unk_id\": 0, \"pre_tokenizer\": [{\"metaspace\": \"\xE2\x96\x81\", "
             "\"prepend_scheme\": \"always\", \"split\": false}], \"added_tokens\": [{\"id\": 6, \"content\": \"<x>\", "
             "\"special\": true, \"lstrip\": false, \"rstrip\": false, \"normalized\": false, \"single_word\": false}]}");
    EXPECT(t, "a<x>a", 1, 3, 6, 3);
    EXPECT(t, " a", 1, 3); /* " a" -> "▁a": it starts with ▁ already */
    dintattn_tokenizer_free(t);
    /* HF's Metaspace decoder: every ▁ of the first token goes, the others are spaces */
    t = load(sp_vocab, "2 1\n", "{\"type\": \"bpe\", \"decoder\": [{\"metaspace\": \"\xE2\x96\x81\"}]}");
    {
        static const int two[] = {3, 3}, lone[] = {2, 3};
        expect_decode(t, two, 2, 0, "a a");
        expect_decode(t, lone, 2, 0, " a");
    }
    dintattn_tokenizer_free(t);
    /* ByteLevel's prefix space, then GPT-2's split: "hi" -> " hi" -> 20 68 69 -> ( h) then ( h i) */
    t = load(bl_vocab, "0 1\n3 2\n",
             "{\"type\": \"bpe\", \"byte_level\": true, \"pre_tokenizer\": [{\"byte_level\": {\"add_prefix_space\": true, "
             "\"use_regex\": true}}]}");
    EXPECT(t, "hi", 1, 4);
    EXPECT(t, " hi", 1, 4);
    EXPECT(t, "hi hi", 1, 4, 4);
    dintattn_tokenizer_free(t);
}

static void test_tokenizer_files_and_refusals(void **state)
{
    dintattn_model *m = (dintattn_model *)(void *)&m;
    dintattn_error err;
    const char *path;
    (void)state;
    /* a tokenizer file is no model */
    path = tok_file(abc_vocab, "1 2\n", "{\"type\": \"bpe\"}");
    assert_int_equal(dintattn_model_load(path, NULL, &m, &err), DINTATTN_ERR_METADATA);
    assert_null(m);
    assert_non_null(strstr(err.message, "a tokenizer file"));
    remove(path);
    refused(abc_vocab, "1 9\n", "{\"type\": \"bpe\"}", DINTATTN_ERR_TOKENIZER, "merges' line 1: id 9 is no token");
    refused(abc_vocab, "0 2\n", "{\"type\": \"bpe\"}", DINTATTN_ERR_TOKENIZER, "merge into no token");
    refused(abc_vocab, "0 x\n", "{\"type\": \"bpe\"}", DINTATTN_ERR_TOKENIZER, "expected 'ID ID'");
    refused(abc_vocab, "0 1\n", "{\"type\": \"tiktoken\"}", DINTATTN_ERR_METADATA, "for tokenizers of type \"bpe\"");
    refused(abc_vocab, NULL, "{\"type\": \"bpe\", \"dropout\": 0.1}", DINTATTN_ERR_METADATA, "unknown key 'dropout'");
    refused(abc_vocab, NULL, "{\"type\": \"wordpiece\"}", DINTATTN_ERR_METADATA, "\"type\" must be");
    refused(abc_vocab, NULL, "{\"type\": \"bpe\", \"normalizer\": [\"nfkc\"]}", DINTATTN_ERR_METADATA, "normalizer step 1");
    refused(abc_vocab, NULL, "{\"type\": \"bpe\", \"pre_tokenizer\": [{\"whitespace\": true}]}", DINTATTN_ERR_METADATA,
            "pre-tokenizer step");
    refused(abc_vocab, NULL, "{\"type\": \"bpe\", \"pre_tokenizer\": [\"(?<=a)\"]}", DINTATTN_ERR_METADATA,
            "metadata 'tokenizer'");
    refused(abc_vocab, NULL, "{\"type\": \"bpe\", \"decoder\": [\"fuse\", {\"replace\": [\"a\", \"b\"]}]}",
            DINTATTN_ERR_METADATA, "decoder step");
    refused(abc_vocab, NULL, "{\"type\": \"bpe\", \"unk_id\": 17}", DINTATTN_ERR_METADATA, "unk_id");
    refused(abc_vocab, NULL,
            "{\"type\": \"bpe\", \"added_tokens\": [{\"id\": 7, \"content\": \"q\"}, {\"id\": 8, \"content\": \"q\"}]}",
            DINTATTN_ERR_METADATA, "already id 7");
    refused(abc_vocab, NULL,
            "{\"type\": \"bpe\", \"added_tokens\": [{\"id\": 7, \"content\": \"q\"}, {\"id\": 9, \"content\": \"r\"}, "
            "{\"id\": 7, \"content\": \"s\", \"normalized\": false}]}",
            DINTATTN_ERR_METADATA, "id 7 is already 'q'");
    refused(abc_vocab, NULL, "{\"type\": \"bpe\", \"added_tokens\": [{\"id\": 7, \"content\": \"\"}]}",
            DINTATTN_ERR_METADATA, "\"content\" of 1 to");
    refused(abc_vocab, NULL, "{\"type\": \"bpe\", \"added_tokens\": [{\"id\": 7, \"content\": \"q\", \"lstrip\": 1}]}",
            DINTATTN_ERR_METADATA, "true or false");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_merges_go_in_list_order),
        cmocka_unit_test(test_byte_fallback_and_unknown),
        cmocka_unit_test(test_added_tokens_and_their_flags),
        cmocka_unit_test(test_metaspace_and_prefix_space),
        cmocka_unit_test(test_tokenizer_files_and_refusals),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
