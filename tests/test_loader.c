/* Loader tests: the loader refuses each kind of broken file with its own error code and a
   message naming the key or tensor at fault, leaves *model NULL, and never trips a sanitizer.

   Where the inputs come from: every broken file is made in memory by this file, from
     - a valid fixture (tests/fixtures/NAME.safetensors, written by tools/make_model.py) whose
       JSON header text (bytes 8 .. 8+len) is edited by exact string replacement, the tensor data
       kept as is (optionally with bytes appended for a moved or extra tensor), or
     - a header string written here from scratch (JSON syntax, metadata, header-length cases).
   File-level cases use temporary files under /tmp (empty, short, cut short), a path that does
   not exist, a directory (tests/fixtures) and a character device (/dev/null).
   Set TEST_LOADER_VERBOSE=1 to print every refusal's code and message.
   Each fixture that is edited is also loaded unmodified (test_base_fixtures_load), so that an
   edit case cannot pass because its base file was broken to begin with; and every edit must
   find its `from` text exactly once, or the case fails. */
#define _POSIX_C_SOURCE 200809L
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#define DINTATTN_IMPLEMENTATION
#include "../dintattn.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define FIXDIR "tests/fixtures/"

/* The base fixtures the edit tables mutate. */
#define DIFF "diff_interleaved_f32"     /* diff, H=4, d=8, dv=16, D=24, 2 layers, F32 */
#define DINT "dint_softmax_f32"         /* dint, integral softmax */
#define SHARED "shared_diff_r2_f32"     /* diff, qk_rank 2 */
#define STD "standard_gqa_halves_f32"   /* standard, n_k1 = n_v = 2, rope halves */
#define GROUP "diff_groupnorm_perhead_f32" /* head_norm_type group, per-head weight/bias [64] */
#define POLY "diff_polynorm_f32"        /* ffn_act polynorm */
#define YARN "v11_partial_rope_yarn_halves_f32" /* version 1.1: diff, rope halves, rope_dim 4, yarn factor 4 */

/* 500 decimal digits, for a number literal longer than any parser buffer */
#define D10 "1234567890"
#define D100 D10 D10 D10 D10 D10 D10 D10 D10 D10 D10
#define D500 D100 D100 D100 D100 D100

/* ---------------------------------------------------------------------------------------- */
/* Helpers                                                                                  */
/* ---------------------------------------------------------------------------------------- */

/* Every buffer a test allocates is registered, so that a failing assertion (which longjmps out
   of the test) leaks nothing: each group's teardown releases what is left, and removes the
   temporary file if one is left behind. */
static void *kept[64];
static int n_kept;
static char temp_path[64];

static void *xcalloc(size_t n)
{
    void *p = calloc(n ? n : 1, 1);
    if (!p || n_kept == (int)(sizeof kept / sizeof kept[0])) {
        print_error("out of memory or too many live buffers\n");
        fail();
    }
    kept[n_kept++] = p;
    return p;
}

static void *xmalloc(size_t n) { return xcalloc(n); }

static void xfree(void *p)
{
    int i;
    if (!p) return;
    for (i = 0; i < n_kept; i++)
        if (kept[i] == p) {
            kept[i] = kept[--n_kept];
            break;
        }
    free(p);
}

static int release_all(void **state)
{
    (void)state;
    while (n_kept) free(kept[--n_kept]);
    if (temp_path[0]) unlink(temp_path);
    temp_path[0] = 0;
    return 0;
}

typedef struct blob {
    unsigned char *p;
    size_t n;
} blob;

static int sentinel_object;
/* a non-NULL value *model starts with, so that "left NULL" means "set to NULL" */
#define SENTINEL ((dintattn_model *)(void *)&sentinel_object)

#if defined(__GNUC__)
__attribute__((format(printf, 1, 2)))
#endif
static void failf(const char *fmt, ...)
{
    char buf[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf, sizeof buf, fmt, ap);
    va_end(ap);
    print_error("%s\n", buf);
    fail();
}

static blob slurp(const char *path)
{
    blob b = {NULL, 0};
    FILE *f = fopen(path, "rb");
    long n;
    if (!f) failf("cannot open %s (run from the repository root)", path);
    fseek(f, 0, SEEK_END);
    n = ftell(f);
    fseek(f, 0, SEEK_SET);
    b.n = n > 0 ? (size_t)n : 0;
    b.p = (unsigned char *)xmalloc(b.n ? b.n : 1);
    if (fread(b.p, 1, b.n, f) != b.n) failf("cannot read %s", path);
    fclose(f);
    return b;
}

static blob read_fixture(const char *name)
{
    char path[256];
    snprintf(path, sizeof path, FIXDIR "%s.safetensors", name);
    return slurp(path);
}

static uint64_t header_len(const blob *b)
{
    uint64_t h = 0;
    int i;
    assert_true(b->n >= 8);
    for (i = 7; i >= 0; i--) h = h << 8 | b->p[i];
    return h;
}

/* The fixture's header text, NUL-terminated (malloc'd); *data / *dlen: its data section. */
static char *split_fixture(const blob *b, const unsigned char **data, size_t *dlen)
{
    uint64_t h = header_len(b);
    char *s;
    assert_true(h <= b->n - 8);
    s = (char *)xmalloc((size_t)h + 1);
    memcpy(s, b->p + 8, (size_t)h);
    s[h] = 0;
    *data = b->p + 8 + h;
    *dlen = b->n - 8 - (size_t)h;
    return s;
}

/* 8-byte LE `declared` + hdr[0..hlen) + data[0..dlen) + `extra` copies of fill bytes (a NULL
   fill appends zeros). The header is written as given, with no padding. */
static blob assemble_raw(uint64_t declared, const void *hdr, size_t hlen, const void *data, size_t dlen,
                         const void *fill, size_t extra)
{
    blob b;
    int i;
    b.n = 8 + hlen + dlen + extra;
    b.p = (unsigned char *)xcalloc(b.n ? b.n : 1);
    for (i = 0; i < 8; i++) b.p[i] = (unsigned char)(declared >> (8 * i));
    if (hlen) memcpy(b.p + 8, hdr, hlen);
    if (dlen) memcpy(b.p + 8 + hlen, data, dlen);
    if (extra && fill) memcpy(b.p + 8 + hlen + dlen, fill, extra);
    return b;
}

/* A well-formed container: the header padded with spaces to a multiple of 8 (as safetensors
   writers do, so F32 data keeps its alignment), then data, then `extra` zero bytes. */
static blob assemble(const char *hdr, const void *data, size_t dlen, size_t extra)
{
    size_t n = strlen(hdr), padded = (n + 7) / 8 * 8;
    char *h = (char *)xmalloc(padded + 1);
    blob b;
    memcpy(h, hdr, n);
    memset(h + n, ' ', padded - n);
    b = assemble_raw(padded, h, padded, data, dlen, NULL, extra);
    xfree(h);
    return b;
}

static size_t count_occurrences(const char *s, const char *sub)
{
    size_t k = 0, n = strlen(sub);
    const char *p = s;
    while ((p = strstr(p, sub)) != NULL) {
        k++;
        p += n;
    }
    return k;
}

/* s with the one occurrence of `from` replaced by `to` (malloc'd). */
static char *replace_once(const char *s, const char *from, const char *to)
{
    const char *at = strstr(s, from);
    size_t k = count_occurrences(s, from), ns = strlen(s), nf = strlen(from), nt = strlen(to);
    char *out;
    if (k != 1) failf("edit: \"%.200s\" occurs %lu times in the base header, expected once", from, (unsigned long)k);
    out = (char *)xmalloc(ns - nf + nt + 1);
    memcpy(out, s, (size_t)(at - s));
    memcpy(out + (at - s), to, nt);
    memcpy(out + (at - s) + nt, at + nf, ns - (size_t)(at - s) - nf + 1);
    return out;
}

/* Config text as it appears inside the header's "config" JSON string: \ and " escaped. */
static char *escape_config(const char *s)
{
    size_t n = strlen(s), i, k = 0;
    char *out = (char *)xmalloc(2 * n + 1);
    for (i = 0; i < n; i++) {
        if (s[i] == '"' || s[i] == '\\') out[k++] = '\\';
        out[k++] = s[i];
    }
    out[k] = 0;
    return out;
}

static void check_refused(dintattn_result got, const dintattn_error *err, const dintattn_model *m,
                          dintattn_result code, const char *needle, const char *needle2)
{
    if (got != code)
        failf("expected %s, got %s: \"%s\"", dintattn_result_name(code), dintattn_result_name(got),
              got == DINTATTN_OK ? "" : err->message);
    assert_int_equal(err->code, code);
    if (m != NULL) failf("*model is %p after a refused load, expected NULL", (const void *)m);
    if (needle && !strstr(err->message, needle))
        failf("message \"%s\" does not contain \"%s\"", err->message, needle);
    if (needle2 && !strstr(err->message, needle2))
        failf("message \"%s\" does not contain \"%s\"", err->message, needle2);
    if (getenv("TEST_LOADER_VERBOSE")) print_message("    %-22s %s\n", dintattn_result_name(got), err->message);
}

/* Loads data[0..n) from memory, expects `code` and a message containing needle (and needle2);
   then again with a NULL error pointer, which must give the same code without crashing. */
static void expect_refused2(const void *data, size_t n, dintattn_result code, const char *needle,
                            const char *needle2)
{
    dintattn_model *m = SENTINEL;
    dintattn_error err;
    dintattn_result r;
    memset(&err, 0, sizeof err);
    err.code = DINTATTN_OK;
    strcpy(err.message, "(message not set)");
    r = dintattn_model_load_memory(data, n, NULL, &m, &err);
    if (r == DINTATTN_OK) {
        dintattn_model_free(m);
        m = NULL;
    }
    check_refused(r, &err, m, code, needle, needle2);
    m = SENTINEL;
    r = dintattn_model_load_memory(data, n, NULL, &m, NULL);
    assert_int_equal(r, code);
    assert_null(m);
}

static void expect_refused(const void *data, size_t n, dintattn_result code, const char *needle)
{
    expect_refused2(data, n, code, needle, NULL);
}

static void expect_loads(const void *data, size_t n)
{
    dintattn_model *m = SENTINEL;
    dintattn_error err;
    dintattn_result r = dintattn_model_load_memory(data, n, NULL, &m, &err);
    if (r != DINTATTN_OK) failf("expected a clean load, got %s: \"%s\"", dintattn_result_name(r), err.message);
    assert_int_equal(err.code, DINTATTN_OK);
    assert_string_equal(err.message, "");
    assert_non_null(m);
    assert_true(m != SENTINEL);
    assert_non_null(dintattn_model_config(m));
    dintattn_model_free(m);
}

static void remove_temp(void)
{
    if (temp_path[0]) unlink(temp_path);
    temp_path[0] = 0;
}

/* Writes data to a fresh file under /tmp; returns its path (one at a time; the test unlinks it,
   or the group's teardown does if the test failed first). */
static const char *write_temp(const void *data, size_t n)
{
    int fd;
    remove_temp();
    strcpy(temp_path, "/tmp/dintattn_test_loader_XXXXXX");
    fd = mkstemp(temp_path);
    if (fd < 0) failf("mkstemp failed");
    if (n && write(fd, data, n) != (ssize_t)n) failf("cannot write %s", temp_path);
    close(fd);
    return temp_path;
}

static void expect_file_refused(const char *path, dintattn_result code, const char *needle)
{
    dintattn_model *m = SENTINEL;
    dintattn_error err;
    dintattn_result r;
    memset(&err, 0, sizeof err);
    strcpy(err.message, "(message not set)");
    r = dintattn_model_load(path, NULL, &m, &err);
    if (r == DINTATTN_OK) {
        dintattn_model_free(m);
        m = NULL;
    }
    check_refused(r, &err, m, code, needle, NULL);
    m = SENTINEL;
    assert_int_equal(dintattn_model_load(path, NULL, &m, NULL), code);
    assert_null(m);
}

/* ---------------------------------------------------------------------------------------- */
/* Table-driven header edits                                                                */
/* ---------------------------------------------------------------------------------------- */

enum { HDR = 0, CFG = 1 };

typedef struct edit_case {
    const char *name;    /* the property, as a test name */
    const char *fixture; /* base fixture */
    int where;           /* HDR: from/to are header text; CFG: config text (escaped for you) */
    const char *from, *to;
    size_t append;       /* zero bytes appended to the data (room for a moved or extra tensor) */
    dintattn_result code;
    const char *needle, *needle2; /* must appear in err.message (needle2 may be NULL) */
} edit_case;

/* Applies one edit to a fixture; returns the broken file. */
static blob edited_fixture(const char *fixture, int where, const char *from, const char *to, size_t append)
{
    blob base = read_fixture(fixture), out;
    const unsigned char *data;
    size_t dlen;
    char *hdr = split_fixture(&base, &data, &dlen), *edited;
    if (where == CFG) {
        char *f = escape_config(from), *t = escape_config(to);
        edited = replace_once(hdr, f, t);
        xfree(f);
        xfree(t);
    } else {
        edited = replace_once(hdr, from, to);
    }
    out = assemble(edited, data, dlen, append);
    xfree(edited);
    xfree(hdr);
    xfree(base.p);
    return out;
}

static void run_edit_case(void **state)
{
    const edit_case *c = (const edit_case *)*state;
    blob b = edited_fixture(c->fixture, c->where, c->from, c->to, c->append);
    expect_refused2(b.p, b.n, c->code, c->needle, c->needle2);
    xfree(b.p);
}

/* --- JSON syntax inside a real header ------------------------------------------------------- */
static edit_case json_cases[] = {
    {"refuses_duplicate_top_level_key", DIFF, HDR,
     "\"norm.weight\":{\"dtype\":\"F32\",\"shape\":[24],\"data_offsets\":[5856,5952]}",
     "\"norm.weight\":{\"dtype\":\"F32\",\"shape\":[24],\"data_offsets\":[5856,5952]},"
     "\"norm.weight\":{\"dtype\":\"F32\",\"shape\":[24],\"data_offsets\":[5856,5952]}",
     0, DINTATTN_ERR_HEADER, "duplicate key", "norm.weight"},
    {"refuses_duplicate_key_in_tensor_entry", DIFF, HDR, "\"norm.weight\":{\"dtype\":\"F32\",",
     "\"norm.weight\":{\"dtype\":\"F32\",\"dtype\":\"F16\",", 0, DINTATTN_ERR_HEADER, "duplicate key", "dtype"},
    {"refuses_duplicate_key_in_metadata", DIFF, HDR, "\"version\":\"1\"", "\"version\":\"1\",\"version\":\"1\"", 0,
     DINTATTN_ERR_HEADER, "duplicate key", "version"},
    {"refuses_duplicate_key_in_config", DIFF, CFG, "\"dim\": 24", "\"dim\": 24, \"dim\": 24", 0,
     DINTATTN_ERR_CONFIG, "duplicate key", "dim"},
    {"refuses_invalid_escape_in_key", DIFF, HDR, "\"norm.weight\"", "\"norm\\q.weight\"", 0, DINTATTN_ERR_HEADER,
     "bad escape", NULL},
    {"refuses_invalid_hex_in_u_escape", DIFF, HDR, "\"norm.weight\"", "\"norm\\u00g1.weight\"", 0,
     DINTATTN_ERR_HEADER, "\\u escape", NULL},
    {"refuses_raw_control_char_in_string", DIFF, HDR, "\"norm.weight\"", "\"norm\x01.weight\"", 0,
     DINTATTN_ERR_HEADER, "control character", NULL},
    {"refuses_raw_tab_in_string", DIFF, HDR, "\"norm.weight\"", "\"norm\t.weight\"", 0, DINTATTN_ERR_HEADER,
     "control character", NULL},
    {"refuses_unpaired_high_surrogate", DIFF, HDR, "\"norm.weight\"", "\"norm\\ud800.weight\"", 0,
     DINTATTN_ERR_HEADER, "surrogate", NULL},
    {"refuses_high_surrogate_followed_by_non_low", DIFF, HDR, "\"norm.weight\"", "\"norm\\ud800\\u0041.weight\"",
     0, DINTATTN_ERR_HEADER, "surrogate", NULL},
    {"refuses_lone_low_surrogate", DIFF, HDR, "\"norm.weight\"", "\"norm\\udc00.weight\"", 0, DINTATTN_ERR_HEADER,
     "surrogate", NULL},
    {"refuses_500_digit_number", DIFF, HDR, "\"norm.weight\":{\"dtype\":\"F32\",\"shape\":[24]",
     "\"norm.weight\":{\"dtype\":\"F32\",\"shape\":[" D500 "]", 0, DINTATTN_ERR_HEADER, "number too long", NULL},
    {"refuses_number_with_leading_zero", DIFF, HDR, "\"norm.weight\":{\"dtype\":\"F32\",\"shape\":[24]",
     "\"norm.weight\":{\"dtype\":\"F32\",\"shape\":[024]", 0, DINTATTN_ERR_HEADER, "header JSON", NULL},
    {"refuses_trailing_comma", DIFF, HDR, "\"norm.weight\":{\"dtype\":\"F32\",\"shape\":[24]",
     "\"norm.weight\":{\"dtype\":\"F32\",\"shape\":[24,]", 0, DINTATTN_ERR_HEADER, "header JSON", NULL},
    {"refuses_misspelt_literal", DIFF, HDR, "\"norm.weight\":{\"dtype\":\"F32\",\"shape\":[24]",
     "\"norm.weight\":{\"dtype\":\"F32\",\"shape\":[tru]", 0, DINTATTN_ERR_HEADER, "literal", NULL},
    {"refuses_single_quoted_key", DIFF, HDR, "\"norm.weight\"", "'norm.weight'", 0, DINTATTN_ERR_HEADER,
     "expected a key", NULL},
    {"refuses_config_with_bad_json", DIFF, HDR, "\"config\":\"{", "\"config\":\"x{", 0, DINTATTN_ERR_CONFIG,
     "config", NULL},
    {"refuses_truncated_config_json", DIFF, CFG, "\"attention\": \"diff\"}", "\"attention\": \"diff\"", 0,
     DINTATTN_ERR_CONFIG, "config", NULL},
    {"refuses_trailing_garbage_in_config", DIFF, CFG, "\"attention\": \"diff\"}", "\"attention\": \"diff\"} x", 0,
     DINTATTN_ERR_CONFIG, "trailing", NULL},
    {"refuses_500_digit_number_in_config", DIFF, CFG, "\"dim\": 24", "\"dim\": " D500, 0, DINTATTN_ERR_CONFIG,
     "number too long", NULL},
};

/* --- tensor entries: dtype, shape, data_offsets -------------------------------------------- */
#define NORM_ENTRY "\"norm.weight\":{\"dtype\":\"F32\",\"shape\":[24],\"data_offsets\":[5856,5952]}"
#define NORM_HEAD "\"norm.weight\":{\"dtype\":\"F32\",\"shape\":[24]"
static edit_case entry_cases[] = {
    {"refuses_entry_without_dtype", DIFF, HDR, "\"norm.weight\":{\"dtype\":\"F32\",", "\"norm.weight\":{", 0,
     DINTATTN_ERR_HEADER, "'norm.weight'", "dtype"},
    {"refuses_entry_without_shape", DIFF, HDR, NORM_HEAD ",", "\"norm.weight\":{\"dtype\":\"F32\",", 0,
     DINTATTN_ERR_HEADER, "'norm.weight'", "shape"},
    {"refuses_entry_without_data_offsets", DIFF, HDR, NORM_ENTRY, NORM_HEAD "}", 0, DINTATTN_ERR_HEADER,
     "'norm.weight'", "data_offsets"},
    {"refuses_entry_that_is_not_an_object", DIFF, HDR, NORM_ENTRY, "\"norm.weight\":[5856,5952]", 0,
     DINTATTN_ERR_HEADER, "'norm.weight'", NULL},
    {"refuses_dtype_that_is_not_a_string", DIFF, HDR, "\"norm.weight\":{\"dtype\":\"F32\"",
     "\"norm.weight\":{\"dtype\":32", 0, DINTATTN_ERR_HEADER, "'norm.weight'", NULL},
    {"refuses_shape_that_is_not_an_array", DIFF, HDR, NORM_HEAD, "\"norm.weight\":{\"dtype\":\"F32\",\"shape\":24", 0,
     DINTATTN_ERR_HEADER, "'norm.weight'", NULL},
    {"refuses_negative_shape_entry", DIFF, HDR, NORM_HEAD, "\"norm.weight\":{\"dtype\":\"F32\",\"shape\":[-24]", 0,
     DINTATTN_ERR_HEADER, "'norm.weight'", "shape"},
    {"refuses_fractional_shape_entry", DIFF, HDR, NORM_HEAD, "\"norm.weight\":{\"dtype\":\"F32\",\"shape\":[24.5]",
     0, DINTATTN_ERR_HEADER, "'norm.weight'", "shape"},
    {"refuses_shape_entry_written_as_float", DIFF, HDR, NORM_HEAD,
     "\"norm.weight\":{\"dtype\":\"F32\",\"shape\":[2.4e1]", 0, DINTATTN_ERR_HEADER, "'norm.weight'", "shape"},
    {"refuses_shape_entry_that_is_a_string", DIFF, HDR, NORM_HEAD,
     "\"norm.weight\":{\"dtype\":\"F32\",\"shape\":[\"24\"]", 0, DINTATTN_ERR_HEADER, "'norm.weight'", "shape"},
    {"refuses_infinite_shape_entry", DIFF, HDR, NORM_HEAD,
     "\"norm.weight\":{\"dtype\":\"F32\",\"shape\":[1e999999]", 0, DINTATTN_ERR_HEADER, "'norm.weight'", "shape"},
    {"refuses_shape_entry_past_int64", DIFF, HDR, NORM_HEAD,
     "\"norm.weight\":{\"dtype\":\"F32\",\"shape\":[9223372036854775808]", 0, DINTATTN_ERR_HEADER, "'norm.weight'",
     "shape"},
    {"refuses_shape_with_nine_dimensions", DIFF, HDR, NORM_HEAD,
     "\"norm.weight\":{\"dtype\":\"F32\",\"shape\":[1,1,1,1,1,1,1,1,24]", 0, DINTATTN_ERR_HEADER, "'norm.weight'",
     "dimensions"},
    {"refuses_shape_whose_element_count_overflows", DIFF, HDR,
     "\"tok_embeddings.weight\":{\"dtype\":\"F32\",\"shape\":[61,24]",
     "\"tok_embeddings.weight\":{\"dtype\":\"F32\",\"shape\":[4294967296,4294967296,16]", 0, DINTATTN_ERR_HEADER,
     "'tok_embeddings.weight'", "overflow"},
    {"refuses_shape_whose_byte_size_overflows", DIFF, HDR, NORM_HEAD,
     "\"norm.weight\":{\"dtype\":\"F32\",\"shape\":[4611686018427387904]", 0, DINTATTN_ERR_HEADER, "'norm.weight'",
     "overflow"},
    {"refuses_overflowing_shape_even_with_a_zero_dim_after", DIFF, HDR, NORM_HEAD,
     "\"norm.weight\":{\"dtype\":\"F32\",\"shape\":[4294967296,4294967296,16,0]", 0, DINTATTN_ERR_HEADER,
     "'norm.weight'", "overflow"},
    {"refuses_one_data_offset", DIFF, HDR, "[5856,5952]", "[5856]", 0, DINTATTN_ERR_HEADER, "'norm.weight'",
     "data_offsets"},
    {"refuses_three_data_offsets", DIFF, HDR, "[5856,5952]", "[5856,5952,5952]", 0, DINTATTN_ERR_HEADER,
     "'norm.weight'", "data_offsets"},
    {"refuses_negative_data_offset", DIFF, HDR, "[5856,5952]", "[-96,0]", 0, DINTATTN_ERR_HEADER, "'norm.weight'",
     "data_offsets"},
    {"refuses_fractional_data_offset", DIFF, HDR, "[5856,5952]", "[5856.0,5952]", 0, DINTATTN_ERR_HEADER,
     "'norm.weight'", "data_offsets"},
    {"refuses_data_offset_past_uint64", DIFF, HDR, "[5856,5952]", "[5856,18446744073709551616]", 0,
     DINTATTN_ERR_HEADER, "'norm.weight'", "data_offsets"},
    {"refuses_reversed_data_offsets", DIFF, HDR, "[5856,5952]", "[5952,5856]", 0, DINTATTN_ERR_OFFSETS,
     "'norm.weight'", NULL},
    /* past the data with the tensors packed: a file cut short, as far as the header can tell */
    {"refuses_data_offsets_past_the_data", DIFF, HDR, "[5856,5952]", "[84768,84864]", 0, DINTATTN_ERR_TRUNCATED,
     "is truncated: the file has 87880 of the 87976 bytes its header describes", NULL},
    {"refuses_data_offsets_at_int64_max", DIFF, HDR, "[5856,5952]", "[9223372036854775711,9223372036854775807]", 0,
     DINTATTN_ERR_OFFSETS, "'norm.weight'", NULL},
    {"refuses_span_smaller_than_shape_needs", DIFF, HDR, NORM_HEAD,
     "\"norm.weight\":{\"dtype\":\"F32\",\"shape\":[25]", 0, DINTATTN_ERR_OFFSETS, "'norm.weight'", NULL},
    {"refuses_span_larger_than_shape_needs", DIFF, HDR, NORM_HEAD, "\"norm.weight\":{\"dtype\":\"F32\",\"shape\":[23]",
     0, DINTATTN_ERR_OFFSETS, "'norm.weight'", NULL},
    {"refuses_span_that_fits_another_dtype", DIFF, HDR, NORM_HEAD, "\"norm.weight\":{\"dtype\":\"F16\",\"shape\":[24]",
     0, DINTATTN_ERR_OFFSETS, "'norm.weight'", NULL},
    {"refuses_identical_offsets_of_two_tensors", DIFF, HDR, "[5952,11808]", "[0,5856]", 0, DINTATTN_ERR_OFFSETS,
     "'tok_embeddings.weight'", "'output.weight'"},
    {"refuses_partially_overlapping_offsets", DIFF, HDR, "[5856,5952]", "[5800,5896]", 0, DINTATTN_ERR_OFFSETS,
     "'norm.weight'", "overlap"},
    {"refuses_tensor_nested_inside_another", DIFF, HDR, "[5856,5952]", "[96,192]", 0, DINTATTN_ERR_OFFSETS,
     "'norm.weight'", "'tok_embeddings.weight'"},
    /* the same nesting, with an empty tensor placed between the two starts: the overlap is still
       there and must still be found (an empty tensor overlaps nothing, but hides nothing either) */
    {"refuses_overlapping_offsets_hidden_behind_an_empty_tensor", DIFF, HDR, NORM_ENTRY,
     "\"zz.empty\":{\"dtype\":\"F32\",\"shape\":[0],\"data_offsets\":[8,8]},"
     "\"norm.weight\":{\"dtype\":\"F32\",\"shape\":[24],\"data_offsets\":[96,192]}",
     0, DINTATTN_ERR_OFFSETS, "'norm.weight'", "'tok_embeddings.weight'"},
    {"refuses_dtype_f64", DIFF, HDR, "\"norm.weight\":{\"dtype\":\"F32\"", "\"norm.weight\":{\"dtype\":\"F64\"", 0,
     DINTATTN_ERR_DTYPE, "'norm.weight'", "F64"},
    {"refuses_dtype_i32", DIFF, HDR, "\"norm.weight\":{\"dtype\":\"F32\"", "\"norm.weight\":{\"dtype\":\"I32\"", 0,
     DINTATTN_ERR_DTYPE, "'norm.weight'", "I32"},
    {"refuses_lowercase_dtype", DIFF, HDR, "\"norm.weight\":{\"dtype\":\"F32\"", "\"norm.weight\":{\"dtype\":\"f32\"",
     0, DINTATTN_ERR_DTYPE, "'norm.weight'", NULL},
    {"refuses_u8_vector_weight", DIFF, HDR, NORM_HEAD, "\"norm.weight\":{\"dtype\":\"U8\",\"shape\":[96]", 0,
     DINTATTN_ERR_DTYPE, "'norm.weight'", "U8"},
    {"refuses_u8_matrix_weight", DIFF, HDR, "\"layers.0.attn.wq1\":{\"dtype\":\"F32\",\"shape\":[32,24]",
     "\"layers.0.attn.wq1\":{\"dtype\":\"U8\",\"shape\":[32,96]", 0, DINTATTN_ERR_SHAPE, "'layers.0.attn.wq1'",
     "U8 (Q4)"},
};

/* --- __metadata__ -------------------------------------------------------------------------- */
static edit_case metadata_cases[] = {
    {"refuses_wrong_format", DIFF, HDR, "\"format\":\"dintattn\"", "\"format\":\"gguf\"", 0,
     DINTATTN_ERR_METADATA, "format", NULL},
    {"refuses_missing_format", DIFF, HDR, "\"format\":\"dintattn\",", "", 0, DINTATTN_ERR_METADATA, "format", NULL},
    {"refuses_format_with_trailing_text", DIFF, HDR, "\"format\":\"dintattn\"", "\"format\":\"dintattnx\"", 0,
     DINTATTN_ERR_METADATA, "format", NULL},
    {"refuses_wrong_version", DIFF, HDR, "\"version\":\"1\"", "\"version\":\"2\"", 0, DINTATTN_ERR_METADATA,
     "version", NULL},
    {"refuses_version_given_as_number", DIFF, HDR, "\"version\":\"1\"", "\"version\":1", 0, DINTATTN_ERR_METADATA,
     "version", NULL},
    {"refuses_missing_version", DIFF, HDR, "\"version\":\"1\",", "", 0, DINTATTN_ERR_METADATA, "version", NULL},
    {"refuses_non_string_metadata_value", DIFF, HDR, "\"version\":\"1\"", "\"version\":\"1\",\"n_params\":42", 0,
     DINTATTN_ERR_METADATA, "n_params", NULL},
    {"refuses_missing_config", DIFF, HDR, "\"config\":\"", "\"konfig\":\"", 0, DINTATTN_ERR_METADATA, "config", NULL},
};

/* --- config keys ----------------------------------------------------------------------------
   DIFF's config: {"dim": 24, "n_layers": 2, "vocab_size": 61, "hidden_dim": 40, "max_seq_len": 32,
                   "n_heads": 4, "head_dim": 8, "attention": "diff"}                                */
#define ADD(kv) "\"attention\": \"diff\"", "\"attention\": \"diff\", " kv
#define ADD_STD(kv) "\"rope\": \"halves\"", "\"rope\": \"halves\", " kv
/* (the extra level of macro lets ADD(...) expand into two arguments) */
#define CFGERR(...) CFGERR_(__VA_ARGS__)
#define CFGERR_(name, fx, from, to, key) {name, fx, CFG, from, to, 0, DINTATTN_ERR_CONFIG, key, NULL}
static edit_case config_cases[] = {
    CFGERR("refuses_config_without_dim", DIFF, "\"dim\": 24, ", "", "'dim'"),
    CFGERR("refuses_config_without_n_layers", DIFF, "\"n_layers\": 2, ", "", "'n_layers'"),
    CFGERR("refuses_config_without_vocab_size", DIFF, "\"vocab_size\": 61, ", "", "'vocab_size'"),
    CFGERR("refuses_config_without_hidden_dim", DIFF, "\"hidden_dim\": 40, ", "", "'hidden_dim'"),
    CFGERR("refuses_config_without_max_seq_len", DIFF, "\"max_seq_len\": 32, ", "", "'max_seq_len'"),
    CFGERR("refuses_config_without_n_heads", DIFF, "\"n_heads\": 4, ", "", "'n_heads'"),
    CFGERR("refuses_config_without_head_dim", DIFF, "\"head_dim\": 8, ", "", "'head_dim'"),
    CFGERR("refuses_config_without_attention", DIFF, ", \"attention\": \"diff\"", "", "'attention'"),
    CFGERR("refuses_dim_given_as_string", DIFF, "\"dim\": 24", "\"dim\": \"24\"", "'dim'"),
    CFGERR("refuses_fractional_n_layers", DIFF, "\"n_layers\": 2", "\"n_layers\": 1.5", "'n_layers'"),
    CFGERR("refuses_n_layers_written_as_float", DIFF, "\"n_layers\": 2", "\"n_layers\": 2.0", "'n_layers'"),
    CFGERR("refuses_negative_dim", DIFF, "\"dim\": 24", "\"dim\": -24", "'dim'"),
    CFGERR("refuses_zero_dim", DIFF, "\"dim\": 24", "\"dim\": 0", "'dim'"),
    CFGERR("refuses_zero_head_dim", DIFF, "\"head_dim\": 8", "\"head_dim\": 0", "'head_dim'"),
    CFGERR("refuses_absurd_n_layers_1e12", DIFF, "\"n_layers\": 2", "\"n_layers\": 1e12", "'n_layers'"),
    CFGERR("refuses_absurd_integer_vocab_size", DIFF, "\"vocab_size\": 61", "\"vocab_size\": 1000000000000",
           "'vocab_size'"),
    CFGERR("refuses_max_seq_len_past_int64", DIFF, "\"max_seq_len\": 32", "\"max_seq_len\": 99999999999999999999",
           "'max_seq_len'"),
    CFGERR("refuses_null_hidden_dim", DIFF, "\"hidden_dim\": 40", "\"hidden_dim\": null", "'hidden_dim'"),
    CFGERR("refuses_boolean_n_heads", DIFF, "\"n_heads\": 4", "\"n_heads\": true", "'n_heads'"),
    CFGERR("refuses_head_dim_given_as_list", DIFF, "\"head_dim\": 8", "\"head_dim\": [8]", "'head_dim'"),
    CFGERR("refuses_unknown_attention", DIFF, "\"attention\": \"diff\"", "\"attention\": \"foo\"", "'attention'"),
    CFGERR("refuses_attention_in_wrong_case", DIFF, "\"attention\": \"diff\"", "\"attention\": \"DIFF\"",
           "'attention'"),
    CFGERR("refuses_attention_given_as_number", DIFF, "\"attention\": \"diff\"", "\"attention\": 1", "'attention'"),
    CFGERR("refuses_unknown_rope", DIFF, ADD("\"rope\": \"bar\""), "'rope'"),
    CFGERR("refuses_unknown_integral", DINT, "\"integral\": \"softmax\"", "\"integral\": \"sum\"", "'integral'"),
    CFGERR("refuses_unknown_head_norm_type", DIFF, ADD("\"head_norm_type\": \"batch\""), "'head_norm_type'"),
    CFGERR("refuses_unknown_head_scale", DIFF, ADD("\"head_scale\": \"half\""), "'head_scale'"),
    CFGERR("refuses_unknown_ffn_act", DIFF, ADD("\"ffn_act\": \"relu\""), "'ffn_act'"),
    CFGERR("refuses_n_k1_heads_not_dividing_n_heads", DIFF, ADD("\"n_k1_heads\": 3"), "'n_k1_heads'"),
    CFGERR("refuses_n_q2_heads_not_dividing_n_heads", DIFF, ADD("\"n_q2_heads\": 3"), "'n_q2_heads'"),
    CFGERR("refuses_n_k2_heads_not_dividing_n_heads", DIFF, ADD("\"n_k2_heads\": 3"), "'n_k2_heads'"),
    CFGERR("refuses_n_v_heads_not_dividing_n_heads", DIFF, ADD("\"n_v_heads\": 3"), "'n_v_heads'"),
    CFGERR("refuses_n_v_heads_above_n_heads", DIFF, ADD("\"n_v_heads\": 8"), "'n_v_heads'"),
    CFGERR("refuses_zero_n_k1_heads", DIFF, ADD("\"n_k1_heads\": 0"), "'n_k1_heads'"),
    CFGERR("refuses_zero_n_q2_heads_for_diff", DIFF, ADD("\"n_q2_heads\": 0"), "'n_q2_heads'"),
    CFGERR("refuses_n_q2_heads_for_standard_attention", STD, ADD_STD("\"n_q2_heads\": 2"), "'n_q2_heads'"),
    CFGERR("refuses_n_k2_heads_for_standard_attention", STD, ADD_STD("\"n_k2_heads\": 4"), "'n_k2_heads'"),
    CFGERR("refuses_negative_qk_rank", DIFF, ADD("\"qk_rank\": -1"), "'qk_rank'"),
    CFGERR("refuses_qk_rank_given_as_string", DIFF, ADD("\"qk_rank\": \"2\""), "'qk_rank'"),
    CFGERR("refuses_zero_v_head_dim", DIFF, ADD("\"v_head_dim\": 0"), "'v_head_dim'"),
    CFGERR("refuses_lambda_init_list_too_short", DIFF, ADD("\"lambda_init\": [0.5]"), "'lambda_init'"),
    CFGERR("refuses_lambda_init_list_too_long", DIFF, ADD("\"lambda_init\": [0.5, 0.6, 0.7]"), "'lambda_init'"),
    CFGERR("refuses_lambda_init_list_with_a_string", DIFF, ADD("\"lambda_init\": [0.5, \"0.6\"]"), "'lambda_init'"),
    CFGERR("refuses_lambda_init_list_with_infinity", DIFF, ADD("\"lambda_init\": [0.5, 1e999]"), "'lambda_init'"),
    CFGERR("refuses_unknown_lambda_init_schedule", DIFF, ADD("\"lambda_init\": \"linear\""), "'lambda_init'"),
    CFGERR("refuses_boolean_lambda_init", DIFF, ADD("\"lambda_init\": true"), "'lambda_init'"),
    CFGERR("refuses_odd_head_dim_with_interleaved_rope", DIFF, "\"head_dim\": 8", "\"head_dim\": 7", "head_dim"),
    CFGERR("refuses_odd_head_dim_with_halves_rope", DIFF, "\"head_dim\": 8, \"attention\": \"diff\"",
           "\"head_dim\": 7, \"attention\": \"diff\", \"rope\": \"halves\"", "head_dim"),
    CFGERR("refuses_head_norm_given_as_number", DIFF, ADD("\"head_norm\": 1"), "'head_norm'"),
    CFGERR("refuses_head_norm_given_as_string", DIFF, ADD("\"head_norm\": \"true\""), "'head_norm'"),
    CFGERR("refuses_tie_embeddings_given_as_number", DIFF, ADD("\"tie_embeddings\": 0"), "'tie_embeddings'"),
    CFGERR("refuses_zero_rope_theta", DIFF, ADD("\"rope_theta\": 0"), "'rope_theta'"),
    CFGERR("refuses_negative_rope_theta", DIFF, ADD("\"rope_theta\": -10000"), "'rope_theta'"),
    CFGERR("refuses_infinite_rope_theta", DIFF, ADD("\"rope_theta\": 1e999999"), "'rope_theta'"),
    CFGERR("refuses_rope_theta_given_as_string", DIFF, ADD("\"rope_theta\": \"1e4\""), "'rope_theta'"),
    CFGERR("refuses_negative_norm_eps", DIFF, ADD("\"norm_eps\": -1e-5"), "'norm_eps'"),
    CFGERR("refuses_null_norm_eps", DIFF, ADD("\"norm_eps\": null"), "'norm_eps'"),
    CFGERR("refuses_negative_head_norm_eps", DIFF, ADD("\"head_norm_eps\": -1"), "'head_norm_eps'"),
    /* version 1.1 (docs/format.md section 3) */
    CFGERR("refuses_v11_key_in_a_version_1_file", DIFF, ADD("\"ffn_bias\": false"), "'ffn_bias'"),
    CFGERR("refuses_odd_rope_dim", YARN, "\"rope_dim\": 4", "\"rope_dim\": 5", "'rope_dim'"),
    CFGERR("refuses_rope_dim_above_head_dim", YARN, "\"rope_dim\": 4", "\"rope_dim\": 10", "'rope_dim'"),
    CFGERR("refuses_rope_dim_of_zero", YARN, "\"rope_dim\": 4", "\"rope_dim\": 0", "'rope_dim'"),
    CFGERR("refuses_unknown_rope_scaling_type", YARN, "\"type\": \"yarn\"", "\"type\": \"ntk\"", "'rope_scaling'"),
    CFGERR("refuses_rope_scaling_field_of_another_type", YARN, "\"factor\": 4.0", "\"factor\": 4.0, \"low_freq_factor\": 1",
           "'low_freq_factor'"),
    CFGERR("refuses_hf_rope_type_spelling", YARN, "\"factor\": 4.0", "\"factor\": 4.0, \"rope_type\": \"yarn\"",
           "'rope_type'"),
    CFGERR("refuses_rope_scaling_factor_below_one", YARN, "\"factor\": 4.0", "\"factor\": 0.5", "'factor'"),
    CFGERR("refuses_yarn_without_original_context", YARN, ", \"original_max_position_embeddings\": 16", "",
           "'original_max_position_embeddings'"),
    CFGERR("refuses_yarn_truncate_given_as_number", YARN, "\"factor\": 4.0", "\"factor\": 4.0, \"truncate\": 1",
           "'truncate'"),
    CFGERR("refuses_rope_scaling_with_rope_none", YARN, "\"rope\": \"halves\"", "\"rope\": \"none\"", "rope_scaling"),
    CFGERR("refuses_unknown_lambda_mode", YARN, ADD("\"lambda_mode\": \"sigmoid\""), "'lambda_mode'"),
    CFGERR("refuses_shared_k_with_another_k2_head_count", YARN, ADD("\"shared_k\": true, \"n_k2_heads\": 2"),
           "shared_k"),
};

/* --- tensors against the config -------------------------------------------------------------- */
#define LAST_DIFF "\"data_offsets\":[80928,84768]}"  /* DIFF's last tensor ends the data */
#define LAST_STD "\"data_offsets\":[49824,53664]}"   /* STD's */
#define WQ1_DIFF "\"layers.0.attn.wq1\":{\"dtype\":\"F32\",\"shape\":[32,24],\"data_offsets\":[12000,15072]}"
#define TENSOR_ERR(...) TENSOR_ERR_(__VA_ARGS__)
#define TENSOR_ERR_(name, fx, where, from, to, append, code, needle) \
    {name, fx, where, from, to, append, code, needle, NULL}
static edit_case tensor_cases[] = {
    /* version 1.1: shared_k has no wk2; token lambda's lambda_proj replaces the lambda vectors */
    TENSOR_ERR("refuses_wk2_with_shared_k", YARN, CFG, ADD("\"shared_k\": true"), 0, DINTATTN_ERR_UNKNOWN_TENSOR,
               "'layers.0.attn.wk2'"),
    TENSOR_ERR("refuses_token_lambda_without_lambda_proj", YARN, CFG, ADD("\"lambda_mode\": \"token_sigmoid\""), 0,
               DINTATTN_ERR_MISSING_TENSOR, "'layers.0.attn.lambda_proj'"),
    TENSOR_ERR("refuses_ffn_bias_without_biases", YARN, CFG, ADD("\"ffn_bias\": true"), 0,
               DINTATTN_ERR_MISSING_TENSOR, "'layers.0.ffn.b_gate'"),
    TENSOR_ERR("refuses_missing_layer_tensor", DIFF, HDR, "\"layers.1.attn.wk2\"", "\"layers.1.attn.wk9\"", 0,
               DINTATTN_ERR_MISSING_TENSOR, "'layers.1.attn.wk2'"),
    TENSOR_ERR("refuses_missing_norm_weight", DIFF, HDR, "\"norm.weight\"", "\"norm.weights\"", 0,
               DINTATTN_ERR_MISSING_TENSOR, "'norm.weight'"),
    TENSOR_ERR("refuses_missing_output_weight_when_untied", DIFF, HDR, "\"output.weight\"", "\"output.w\"", 0,
               DINTATTN_ERR_MISSING_TENSOR, "'output.weight'"),
    TENSOR_ERR("refuses_missing_lambda_for_diff", DIFF, HDR, "\"layers.0.attn.lambda_k2\"",
               "\"layers.0.attn.lambda_kk\"", 0, DINTATTN_ERR_MISSING_TENSOR, "'layers.0.attn.lambda_k2'"),
    TENSOR_ERR("refuses_extra_tensor_of_a_layer_past_n_layers", DIFF, HDR, LAST_DIFF,
               LAST_DIFF ",\"layers.2.attn.wq1\":{\"dtype\":\"F32\",\"shape\":[32,24],"
                         "\"data_offsets\":[84768,87840]}",
               3072, DINTATTN_ERR_UNKNOWN_TENSOR, "'layers.2.attn.wq1'"),
    TENSOR_ERR("refuses_extra_empty_tensor", DIFF, HDR, LAST_DIFF,
               LAST_DIFF ",\"extra\":{\"dtype\":\"F32\",\"shape\":[0],\"data_offsets\":[0,0]}", 0,
               DINTATTN_ERR_UNKNOWN_TENSOR, "'extra'"),
    TENSOR_ERR("refuses_output_weight_when_tied", DIFF, CFG, ADD("\"tie_embeddings\": true"), 0,
               DINTATTN_ERR_UNKNOWN_TENSOR, "'output.weight'"),
    TENSOR_ERR("refuses_dense_qk_when_qk_rank_is_set", DIFF, CFG, ADD("\"qk_rank\": 2"), 0,
               DINTATTN_ERR_MISSING_TENSOR, "'layers.0.attn.q_base'"),
    TENSOR_ERR("refuses_factors_without_dense_qk_when_qk_rank_is_0", SHARED, CFG, ", \"qk_rank\": 2", "", 0,
               DINTATTN_ERR_MISSING_TENSOR, "'layers.0.attn.wq1'"),
    TENSOR_ERR("refuses_q_base_when_qk_rank_is_0", DIFF, HDR, LAST_DIFF,
               LAST_DIFF ",\"layers.0.attn.q_base\":{\"dtype\":\"F32\",\"shape\":[8,24],"
                         "\"data_offsets\":[84768,85536]}",
               768, DINTATTN_ERR_UNKNOWN_TENSOR, "'layers.0.attn.q_base'"),
    TENSOR_ERR("refuses_factors_of_another_rank", SHARED, CFG, "\"qk_rank\": 2", "\"qk_rank\": 3", 0,
               DINTATTN_ERR_SHAPE, "'layers.0.attn.q1_down'"),
    TENSOR_ERR("refuses_missing_low_rank_factor", SHARED, HDR, "\"layers.1.attn.k2_up\"", "\"layers.1.attn.k2_upp\"",
               0, DINTATTN_ERR_MISSING_TENSOR, "'layers.1.attn.k2_up'"),
    TENSOR_ERR("refuses_wq1_with_one_row_too_many", DIFF, HDR, WQ1_DIFF,
               "\"layers.0.attn.wq1\":{\"dtype\":\"F32\",\"shape\":[33,24],\"data_offsets\":[84768,87936]}", 3168,
               DINTATTN_ERR_SHAPE, "'layers.0.attn.wq1'"),
    TENSOR_ERR("refuses_transposed_wq1", DIFF, HDR, "\"layers.0.attn.wq1\":{\"dtype\":\"F32\",\"shape\":[32,24]",
               "\"layers.0.attn.wq1\":{\"dtype\":\"F32\",\"shape\":[24,32]", 0, DINTATTN_ERR_SHAPE,
               "'layers.0.attn.wq1'"),
    TENSOR_ERR("refuses_vector_stored_as_matrix", DIFF, HDR, NORM_HEAD,
               "\"norm.weight\":{\"dtype\":\"F32\",\"shape\":[24,1]", 0, DINTATTN_ERR_SHAPE, "'norm.weight'"),
    TENSOR_ERR("refuses_matrix_with_a_third_dimension", DIFF, HDR,
               "\"tok_embeddings.weight\":{\"dtype\":\"F32\",\"shape\":[61,24]",
               "\"tok_embeddings.weight\":{\"dtype\":\"F32\",\"shape\":[61,24,1]", 0, DINTATTN_ERR_SHAPE,
               "'tok_embeddings.weight'"),
    TENSOR_ERR("refuses_embeddings_of_another_vocab_size", DIFF, CFG, "\"vocab_size\": 61", "\"vocab_size\": 62", 0,
               DINTATTN_ERR_SHAPE, "'tok_embeddings.weight'"),
    /* control for the two odd-head_dim cases above: without rope, head_dim 7 is legal config */
    TENSOR_ERR("refuses_wrong_shapes_for_odd_head_dim_without_rope", DIFF, CFG,
               "\"head_dim\": 8, \"attention\": \"diff\"", "\"head_dim\": 7, \"attention\": \"diff\", \"rope\": \"none\"",
               0, DINTATTN_ERR_SHAPE, "'layers.0.attn.wq1'"),
    TENSOR_ERR("refuses_lambda_tensor_for_standard_attention", STD, HDR, LAST_STD,
               LAST_STD ",\"layers.0.attn.lambda_q1\":{\"dtype\":\"F32\",\"shape\":[8],"
                        "\"data_offsets\":[53664,53696]}",
               32, DINTATTN_ERR_UNKNOWN_TENSOR, "'layers.0.attn.lambda_q1'"),
    TENSOR_ERR("refuses_wq2_for_standard_attention", STD, HDR, LAST_STD,
               LAST_STD ",\"layers.1.attn.wq2\":{\"dtype\":\"F32\",\"shape\":[32,24],"
                        "\"data_offsets\":[53664,56736]}",
               3072, DINTATTN_ERR_UNKNOWN_TENSOR, "'layers.1.attn.wq2'"),
    TENSOR_ERR("refuses_head_norm_weight_neither_dv_nor_h_dv", DIFF, HDR,
               "\"layers.0.attn.head_norm.weight\":{\"dtype\":\"F32\",\"shape\":[16]",
               "\"layers.0.attn.head_norm.weight\":{\"dtype\":\"F16\",\"shape\":[32]", 0, DINTATTN_ERR_SHAPE,
               "'layers.0.attn.head_norm.weight'"),
    TENSOR_ERR("refuses_head_norm_weight_when_head_norm_is_off", DIFF, CFG, ADD("\"head_norm\": false"), 0,
               DINTATTN_ERR_UNKNOWN_TENSOR, "'layers.0.attn.head_norm.weight'"),
    TENSOR_ERR("refuses_group_norm_without_bias", GROUP, HDR, "\"layers.0.attn.head_norm.bias\"",
               "\"layers.0.attn.head_norm.bia\"", 0, DINTATTN_ERR_MISSING_TENSOR, "'layers.0.attn.head_norm.bias'"),
    TENSOR_ERR("refuses_group_norm_bias_of_wrong_length", GROUP, HDR,
               "\"layers.1.attn.head_norm.bias\":{\"dtype\":\"F32\",\"shape\":[64]",
               "\"layers.1.attn.head_norm.bias\":{\"dtype\":\"F16\",\"shape\":[128]", 0, DINTATTN_ERR_SHAPE,
               "'layers.1.attn.head_norm.bias'"),
    TENSOR_ERR("refuses_shared_bias_with_per_head_weight", GROUP, HDR,
               "\"layers.0.attn.head_norm.bias\":{\"dtype\":\"F32\",\"shape\":[64],\"data_offsets\":[37728,37984]}",
               "\"layers.0.attn.head_norm.bias\":{\"dtype\":\"F32\",\"shape\":[16],\"data_offsets\":[37728,37792]}", 0,
               DINTATTN_ERR_SHAPE, "'layers.0.attn.head_norm.bias'"),
    TENSOR_ERR("refuses_bias_for_rms_head_norm", GROUP, CFG, ", \"head_norm_type\": \"group\"", "", 0,
               DINTATTN_ERR_UNKNOWN_TENSOR, "'layers.0.attn.head_norm.bias'"),
    TENSOR_ERR("refuses_silu_model_without_polynorm_weights", DIFF, CFG, ADD("\"ffn_act\": \"polynorm\""), 0,
               DINTATTN_ERR_MISSING_TENSOR, "'layers.0.ffn.act_weight'"),
    TENSOR_ERR("refuses_polynorm_weights_in_silu_model", POLY, CFG, ", \"ffn_act\": \"polynorm\"", "", 0,
               DINTATTN_ERR_UNKNOWN_TENSOR, "'layers.0.ffn.act_bias'"),
    TENSOR_ERR("refuses_polynorm_weight_of_wrong_shape", POLY, HDR,
               "\"layers.1.ffn.act_weight\":{\"dtype\":\"F32\",\"shape\":[3]",
               "\"layers.1.ffn.act_weight\":{\"dtype\":\"F32\",\"shape\":[1,3]", 0, DINTATTN_ERR_SHAPE,
               "'layers.1.ffn.act_weight'"),
};

/* ---------------------------------------------------------------------------------------- */
/* Headers written from scratch: header length, JSON shape, metadata                        */
/* ---------------------------------------------------------------------------------------- */

#define ACTUAL UINT64_C(0xFFFFFFFFFFFFFFF0) /* "declare the header's real length" */
#define META_OK "\"__metadata__\":{\"format\":\"dintattn\",\"version\":\"1\",\"config\":"
#define TINY_CONFIG                                                                                       \
    "\"{\\\"dim\\\":2,\\\"n_layers\\\":1,\\\"vocab_size\\\":3,\\\"hidden_dim\\\":2,\\\"max_seq_len\\\":4," \
    "\\\"n_heads\\\":1,\\\"head_dim\\\":2,\\\"attention\\\":\\\"standard\\\"}\""

typedef struct raw_case {
    const char *name;
    const char *text;   /* header bytes */
    size_t text_len;    /* 0: strlen(text) */
    uint64_t declared;  /* the length field; ACTUAL for text_len */
    size_t data_len;    /* zero bytes after the header */
    dintattn_result code;
    const char *needle;
} raw_case;

static raw_case raw_cases[] = {
    {"refuses_header_length_0", "", 0, 0, 0, DINTATTN_ERR_HEADER, "header length 0"},
    {"refuses_header_length_1", "{", 0, ACTUAL, 0, DINTATTN_ERR_HEADER, "header length 1"},
    /* a header that begins as JSON, of a plausible length: the file was cut short */
    {"refuses_header_length_past_end_of_file", "{}", 0, 1000, 0, DINTATTN_ERR_TRUNCATED,
     "is truncated: the file has 10 of the 1008 bytes its header describes"},
    {"refuses_header_length_one_past_end_of_file", "{}", 0, 3, 0, DINTATTN_ERR_TRUNCATED,
     "is truncated: the file has 10 of the 11 bytes its header describes"},
    /* a length no header has: the file never was safetensors */
    {"refuses_header_length_uint64_max", "{}", 0, UINT64_MAX, 0, DINTATTN_ERR_HEADER,
     "is not a safetensors file (header length 18446744073709551615 runs past the end of its 10 bytes)"},
    {"refuses_header_length_2_pow_63", "{}", 0, UINT64_C(1) << 63, 0, DINTATTN_ERR_HEADER,
     "is not a safetensors file (header length 9223372036854775808 runs past"},
    {"refuses_header_that_is_not_json", "hello, world", 0, ACTUAL, 0, DINTATTN_ERR_HEADER, "not a safetensors file (its header does not begin with '{')"},
    {"refuses_truncated_header_json", "{\"norm.weight\":{\"dtype\":\"F32\",\"shape\":[", 0, ACTUAL, 0,
     DINTATTN_ERR_HEADER, "end of JSON"},
    {"refuses_unterminated_string_in_header", "{\"norm.weight", 0, ACTUAL, 0, DINTATTN_ERR_HEADER, "unterminated"},
    {"refuses_header_that_is_an_array", "[{\"__metadata__\":{}}]", 0, ACTUAL, 0, DINTATTN_ERR_HEADER, "not a safetensors file (its header does not begin with '{')"},
    {"refuses_header_that_is_a_string", "\"dintattn\"", 0, ACTUAL, 0, DINTATTN_ERR_HEADER, "not a safetensors file (its header does not begin with '{')"},
    {"refuses_trailing_garbage_after_header", "{} x", 0, ACTUAL, 0, DINTATTN_ERR_HEADER, "trailing"},
    {"refuses_two_header_objects", "{}{}", 0, ACTUAL, 0, DINTATTN_ERR_HEADER, "trailing"},
    {"refuses_whitespace_only_header", "        ", 0, ACTUAL, 0, DINTATTN_ERR_HEADER, "not a safetensors file (its header does not begin with '{')"},
    {"refuses_nul_bytes_as_header", "\0\0\0\0\0\0\0\0", 8, ACTUAL, 0, DINTATTN_ERR_HEADER, "not a safetensors file (its header does not begin with '{')"},
    {"refuses_nul_padding_after_header", "{}\0\0\0\0\0\0", 8, ACTUAL, 0, DINTATTN_ERR_HEADER, "trailing"},
    {"refuses_empty_header_object_as_not_a_model", "{}", 0, ACTUAL, 0, DINTATTN_ERR_METADATA, "__metadata__"},
    {"refuses_file_without_metadata", "{\"norm.weight\":{\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[0,4]}}", 0,
     ACTUAL, 4, DINTATTN_ERR_METADATA, "__metadata__"},
    {"refuses_metadata_that_is_a_string", "{\"__metadata__\":\"dintattn\"}", 0, ACTUAL, 0, DINTATTN_ERR_METADATA,
     "__metadata__"},
    {"refuses_metadata_that_is_an_array", "{\"__metadata__\":[\"format\",\"dintattn\"]}", 0, ACTUAL, 0,
     DINTATTN_ERR_METADATA, "__metadata__"},
    {"refuses_config_that_is_an_object_not_a_string", "{" META_OK "{\"dim\":24}}}", 0, ACTUAL, 0,
     DINTATTN_ERR_METADATA, "config"},
    {"refuses_config_that_is_a_json_array", "{" META_OK "\"[1,2]\"}}", 0, ACTUAL, 0, DINTATTN_ERR_CONFIG,
     "config is not a JSON object"},
    {"refuses_config_that_is_a_json_string", "{" META_OK "\"\\\"x\\\"\"}}", 0, ACTUAL, 0, DINTATTN_ERR_CONFIG,
     "config is not a JSON object"},
    {"refuses_config_that_is_not_json", "{" META_OK "\"dim=24\"}}", 0, ACTUAL, 0, DINTATTN_ERR_CONFIG, "config"},
    {"refuses_empty_config_string", "{" META_OK "\"\"}}", 0, ACTUAL, 0, DINTATTN_ERR_CONFIG, "config"},
    {"refuses_empty_config_object", "{" META_OK "\"{}\"}}", 0, ACTUAL, 0, DINTATTN_ERR_CONFIG, "'dim'"},
    {"refuses_valid_config_without_tensors", "{" META_OK TINY_CONFIG "}}", 0, ACTUAL, 0,
     DINTATTN_ERR_MISSING_TENSOR, "'tok_embeddings.weight'"},
    {"refuses_tensor_entry_when_data_section_is_empty",
     "{" META_OK TINY_CONFIG "},\"norm.weight\":{\"dtype\":\"F32\",\"shape\":[2],\"data_offsets\":[0,8]}}", 0, ACTUAL,
     0, DINTATTN_ERR_TRUNCATED, "is truncated: the file has 269 of the 277 bytes its header describes"},
};

static void run_raw_case(void **state)
{
    const raw_case *c = (const raw_case *)*state;
    size_t n = c->text_len ? c->text_len : strlen(c->text);
    blob b = assemble_raw(c->declared == ACTUAL ? (uint64_t)n : c->declared, c->text, n, NULL, 0, NULL, c->data_len);
    expect_refused(b.p, b.n, c->code, c->needle);
    xfree(b.p);
}

/* ---------------------------------------------------------------------------------------- */
/* Single tests                                                                              */
/* ---------------------------------------------------------------------------------------- */

static const char *const base_fixtures[] = {DIFF, DINT, SHARED, STD, GROUP, POLY};

/* Positive control: every base fixture loads from its file, from memory as is, and from memory
   after its header went through this file's split/assemble helpers unchanged. */
static void test_base_fixtures_load(void **state)
{
    size_t i;
    (void)state;
    for (i = 0; i < sizeof base_fixtures / sizeof base_fixtures[0]; i++) {
        char path[256];
        dintattn_model *m = SENTINEL;
        dintattn_error err;
        blob b = read_fixture(base_fixtures[i]), re;
        const unsigned char *data;
        size_t dlen;
        char *hdr = split_fixture(&b, &data, &dlen);
        snprintf(path, sizeof path, FIXDIR "%s.safetensors", base_fixtures[i]);
        if (dintattn_model_load(path, NULL, &m, &err) != DINTATTN_OK) failf("%s: %s", path, err.message);
        dintattn_model_free(m);
        expect_loads(b.p, b.n);
        re = assemble(hdr, data, dlen, 0);
        expect_loads(re.p, re.n);
        xfree(re.p);
        xfree(hdr);
        xfree(b.p);
    }
}

static char *edit_step(char *hdr, int where, const char *from, const char *to)
{
    char *out;
    if (where == CFG) {
        char *f = escape_config(from), *t = escape_config(to);
        out = replace_once(hdr, f, t);
        xfree(f);
        xfree(t);
    } else {
        out = replace_once(hdr, from, to);
    }
    xfree(hdr);
    return out;
}

static void test_loads_with_trailing_bytes_after_data(void **state)
{
    blob b = read_fixture(DIFF), big;
    (void)state;
    big = assemble_raw(header_len(&b), b.p + 8, b.n - 8, NULL, 0, NULL, 4096);
    expect_loads(big.p, big.n);
    xfree(big.p);
    xfree(b.p);
}

/* Legal but unusual headers: whitespace around the JSON, escapes in names and in the config,
   extra metadata strings, config keys the model does not use (even with values it would refuse, as docs/format.md section 2 says), nesting well inside the limit. */
static void test_loads_unusual_but_legal_header(void **state)
{
    blob b = read_fixture(DIFF), out;
    const unsigned char *data;
    size_t dlen;
    char *hdr = split_fixture(&b, &data, &dlen);
    (void)state;
    hdr = edit_step(hdr, HDR, "{\"__metadata__\":{\"format\"",
                    " \r\n\t{ \"__metadata__\" : {\"note\":\"made by test_loader \\u00e9\\ud83d\\ude00\", \"format\"");
    hdr = edit_step(hdr, HDR, "\"norm.weight\"", "\"norm\\u002eweight\"");
    hdr = edit_step(hdr, CFG, "\"attention\": \"diff\"",
                    "\"attention\": \"\\u0064iff\", \"model_type\": \"x\", \"integral\": \"unused-by-diff\", "
                    "\"nested\": [[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[{}]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]");
    out = assemble(hdr, data, dlen, 0);
    expect_loads(out.p, out.n);
    xfree(out.p);
    xfree(hdr);
    xfree(b.p);
}

/* A tensor moved to the end of the data, leaving a gap where it was, loads and gives the same
   logits as the original file. */
static void test_loads_tensor_moved_past_a_gap(void **state)
{
    blob b = read_fixture(DIFF), moved;
    const unsigned char *data;
    size_t dlen;
    char *hdr = split_fixture(&b, &data, &dlen);
    dintattn_model *m[2] = {NULL, NULL};
    dintattn_session *s[2] = {NULL, NULL};
    dintattn_error err;
    float logits[2][61];
    int tokens[5] = {1, 7, 3, 60, 2}, i, k;
    (void)state;
    hdr = edit_step(hdr, HDR, WQ1_DIFF,
                    "\"layers.0.attn.wq1\":{\"dtype\":\"F32\",\"shape\":[32,24],\"data_offsets\":[84768,87840]}");
    assert_int_equal(dlen, 84768);
    moved = assemble(hdr, data, dlen, 3072);
    memcpy(moved.p + moved.n - 3072, data + 12000, 3072);
    memset(moved.p + (moved.n - 3072 - dlen) + 12000, 0x7f, 3072); /* the gap: garbage, unread */
    if (dintattn_model_load_memory(b.p, b.n, NULL, &m[0], &err)) failf("original: %s", err.message);
    if (dintattn_model_load_memory(moved.p, moved.n, NULL, &m[1], &err)) failf("moved: %s", err.message);
    for (k = 0; k < 2; k++) {
        assert_int_equal(dintattn_model_config(m[k])->vocab_size, 61);
        if (dintattn_session_new(m[k], NULL, &s[k], &err)) failf("session: %s", err.message);
        if (dintattn_prefill(s[k], tokens, 5, logits[k], 0, &err)) failf("prefill: %s", err.message);
    }
    for (i = 0; i < 61; i++) assert_float_equal(logits[0][i], logits[1][i], 1e-5);
    for (k = 0; k < 2; k++) {
        dintattn_session_free(s[k]);
        dintattn_model_free(m[k]);
    }
    xfree(moved.p);
    xfree(hdr);
    xfree(b.p);
}

/* A real model's header with __metadata__ cut out: a plain safetensors file, not a dintattn one. */
static void test_refuses_fixture_without_metadata(void **state)
{
    blob b = read_fixture(DIFF), out;
    const unsigned char *data;
    size_t dlen;
    char *hdr = split_fixture(&b, &data, &dlen), *cut;
    const char *rest = strstr(hdr, "\"tok_embeddings.weight\"");
    (void)state;
    assert_int_equal(strncmp(hdr, "{\"__metadata__\":", 16), 0);
    assert_non_null(rest);
    cut = (char *)xmalloc(strlen(rest) + 2);
    cut[0] = '{';
    strcpy(cut + 1, rest);
    out = assemble(cut, data, dlen, 0);
    expect_refused(out.p, out.n, DINTATTN_ERR_METADATA, "__metadata__");
    xfree(out.p);
    xfree(cut);
    xfree(hdr);
    xfree(b.p);
}

static char *repeat(const char *prefix, const char *unit, int times, const char *suffix)
{
    size_t np = strlen(prefix), nu = strlen(unit), ns = strlen(suffix), k = np;
    char *s = (char *)xmalloc(np + nu * (size_t)times + ns + 1);
    int i;
    memcpy(s, prefix, np);
    for (i = 0; i < times; i++, k += nu) memcpy(s + k, unit, nu);
    memcpy(s + k, suffix, ns + 1);
    return s;
}

static void test_refuses_deeply_nested_header(void **state)
{
    char *open = repeat("", "[", 10000, ""), *objs = repeat("", "{\"a\":", 10000, "1");
    char *closed = repeat(open, "]", 10000, "");
    char *in_entry = repeat("{\"norm.weight\":{\"dtype\":\"F32\",\"shape\":", "[", 10000, "");
    const char *docs[4];
    int i;
    (void)state;
    docs[0] = open;
    docs[1] = closed;
    docs[2] = objs;
    docs[3] = in_entry;
    for (i = 0; i < 4; i++) { /* an array is no header: only objects are parsed */
        blob b = assemble_raw(strlen(docs[i]), docs[i], strlen(docs[i]), NULL, 0, NULL, 0);
        expect_refused(b.p, b.n, DINTATTN_ERR_HEADER, i < 2 ? "is not a safetensors file" : "nested too deeply");
        xfree(b.p);
    }
    xfree(open);
    xfree(objs);
    xfree(closed);
    xfree(in_entry);
}

static void test_refuses_deeply_nested_config(void **state)
{
    char *to = repeat("\"attention\": \"diff\", \"x\": ", "[", 10000, "");
    blob b;
    (void)state;
    b = edited_fixture(DIFF, CFG, "\"attention\": \"diff\"", to, 0);
    expect_refused(b.p, b.n, DINTATTN_ERR_CONFIG, "nested too deeply");
    xfree(b.p);
    xfree(to);
}

/* A header length over the 100 MiB limit in a buffer that really is that long. */
static void test_refuses_header_length_over_limit(void **state)
{
    size_t hlen = ((size_t)100 << 20) + 1;
    unsigned char *p = (unsigned char *)xcalloc(8 + hlen);
    int i;
    (void)state;
    for (i = 0; i < 8; i++) p[i] = (unsigned char)((uint64_t)hlen >> (8 * i));
    expect_refused(p, 8 + hlen, DINTATTN_ERR_HEADER, "header length 104857601");
    xfree(p);
}

/* --- messages that must not mislead ----------------------------------------------------------- */

/* Offsets [5952, 5856] lie inside the 84768 data bytes; they are reversed, not "outside". */
static void test_reversed_offsets_message_does_not_say_outside(void **state)
{
    blob b = edited_fixture(DIFF, HDR, "[5856,5952]", "[5952,5856]", 0);
    dintattn_model *m = SENTINEL;
    dintattn_error err;
    (void)state;
    assert_int_equal(dintattn_model_load_memory(b.p, b.n, NULL, &m, &err), DINTATTN_ERR_OFFSETS);
    assert_null(m);
    assert_non_null(strstr(err.message, "'norm.weight'"));
    if (strstr(err.message, "outside"))
        failf("reversed offsets inside the data reported as \"%s\"", err.message);
    xfree(b.p);
}

/* A header that starts with a letter (or a NUL byte) is not "a bad number". */
static void test_non_json_header_message_does_not_say_bad_number(void **state)
{
    static const char *const docs[] = {"hello, world", "\0\0\0\0", "<xml/>"};
    static const size_t lens[] = {12, 4, 6};
    int i;
    (void)state;
    for (i = 0; i < 3; i++) {
        blob b = assemble_raw(lens[i], docs[i], lens[i], NULL, 0, NULL, 0);
        dintattn_model *m = SENTINEL;
        dintattn_error err;
        assert_int_equal(dintattn_model_load_memory(b.p, b.n, NULL, &m, &err), DINTATTN_ERR_HEADER);
        assert_null(m);
        if (strstr(err.message, "number"))
            failf("header \"%s\" reported as \"%s\"", i == 1 ? "\\0\\0\\0\\0" : docs[i], err.message);
        xfree(b.p);
    }
}

/* "norm.weight\u0000junk" is not the name "norm.weight": C strings would cut it there, so the
   loader must refuse it (as a header it cannot represent, or as norm.weight missing), not bind it. */
static void test_refuses_tensor_name_with_escaped_nul(void **state)
{
    blob b = edited_fixture(DIFF, HDR, "\"norm.weight\"", "\"norm.weight\\u0000junk\"", 0);
    dintattn_model *m = SENTINEL;
    dintattn_error err;
    dintattn_result r;
    (void)state;
    r = dintattn_model_load_memory(b.p, b.n, NULL, &m, &err);
    if (r == DINTATTN_OK) {
        dintattn_model_free(m);
        failf("a tensor named \"norm.weight\\u0000junk\" was loaded as 'norm.weight'");
    }
    if (r != DINTATTN_ERR_HEADER && r != DINTATTN_ERR_MISSING_TENSOR)
        failf("expected bad safetensors header or missing tensor, got %s: %s", dintattn_result_name(r), err.message);
    assert_null(m);
    if (!strstr(err.message, "norm.weight") && !(r == DINTATTN_ERR_HEADER && strstr(err.message, "u0000")))
        failf("message \"%s\" names neither 'norm.weight' nor the \\u0000 escape", err.message);
    xfree(b.p);
}

/* The same for a config value: "diff\u0000x" is not "diff". */
static void test_refuses_config_value_with_escaped_nul(void **state)
{
    blob b = edited_fixture(DIFF, CFG, "\"attention\": \"diff\"", "\"attention\": \"diff\\u0000x\"", 0);
    (void)state;
    expect_refused(b.p, b.n, DINTATTN_ERR_CONFIG, "config");
    xfree(b.p);
}

/* --- files on disk ------------------------------------------------------------------------- */

static void test_refuses_nonexistent_path(void **state)
{
    (void)state;
    expect_file_refused("tests/fixtures/no_such_model.safetensors", DINTATTN_ERR_IO, "no_such_model.safetensors");
}

static void test_refuses_directory(void **state)
{
    (void)state;
    expect_file_refused("tests/fixtures", DINTATTN_ERR_IO, "tests/fixtures");
}

static void test_refuses_character_device(void **state)
{
    (void)state;
    expect_file_refused("/dev/null", DINTATTN_ERR_IO, "/dev/null");
}

static void test_refuses_empty_file(void **state)
{
    const char *path = write_temp("", 0);
    (void)state;
    expect_file_refused(path, DINTATTN_ERR_TRUNCATED, path);
    remove_temp();
}

static void test_refuses_file_shorter_than_8_bytes(void **state)
{
    const char *path = write_temp("\x02\0\0\0\0", 5);
    (void)state;
    expect_file_refused(path, DINTATTN_ERR_TRUNCATED, "5 bytes");
    remove_temp();
    expect_refused("\x02\0\0\0\0\0\0", 7, DINTATTN_ERR_TRUNCATED, "7 bytes");
}

/* As expect_file_refused, the message exactly `want` with "%s" standing for the path. */
static void expect_file_message(const char *path, dintattn_result code, const char *want)
{
    char full[1024];
    dintattn_model *m = SENTINEL;
    dintattn_error err;
    snprintf(full, sizeof full, want, path);
    memset(&err, 0, sizeof err);
    assert_int_equal(dintattn_model_load(path, NULL, &m, &err), code);
    assert_null(m);
    assert_int_equal(err.code, code);
    assert_string_equal(err.message, full);
}

/* The fixture (3104 header bytes, 87872 in all) cut inside the header, after it, and 4 bytes
   short: each time the one message a cut file gets, with what it has and what it needs. */
static void test_refuses_file_cut_inside_header(void **state)
{
    blob b = read_fixture(DIFF);
    const char *path = write_temp(b.p, 100);
    (void)state;
    assert_int_equal(8 + header_len(&b), 3104);
    assert_int_equal(b.n, 87872);
    expect_file_message(path, DINTATTN_ERR_TRUNCATED,
                        "%s is truncated: the file has 100 of the 3104 bytes its header describes (copy or download "
                        "it again)");
    remove_temp();
    xfree(b.p);
}

static void test_refuses_file_cut_after_header(void **state)
{
    blob b = read_fixture(DIFF);
    const char *path = write_temp(b.p, 8 + (size_t)header_len(&b));
    (void)state;
    expect_file_message(path, DINTATTN_ERR_TRUNCATED,
                        "%s is truncated: the file has 3104 of the 87872 bytes its header describes (copy or download "
                        "it again)");
    remove_temp();
    xfree(b.p);
}

static void test_refuses_file_missing_its_last_bytes(void **state)
{
    blob b = read_fixture(DIFF);
    const char *path = write_temp(b.p, b.n - 4);
    (void)state;
    expect_file_message(path, DINTATTN_ERR_TRUNCATED,
                        "%s is truncated: the file has 87868 of the 87872 bytes its header describes (copy or download "
                        "it again)");
    expect_refused(b.p, b.n - 4, DINTATTN_ERR_TRUNCATED,
                   "the model in memory is truncated: the file has 87868 of the 87872 bytes its header describes");
    remove_temp();
    xfree(b.p);
}

/* A text file (a README) as the model: its first 8 bytes read as a header length no file has. */
static void test_refuses_text_file_as_not_safetensors(void **state)
{
    static const char text[] = "# dintattn\n\nDifferential attention on a CPU.\n";
    const char *path = write_temp(text, sizeof text - 1);
    char want[200];
    unsigned long long hlen = 0;
    int i;
    (void)state;
    for (i = 7; i >= 0; i--) hlen = hlen << 8 | (unsigned char)text[i]; /* "# dintat", little-endian */
    assert_true(hlen == 0x7461746e69642023ull);
    snprintf(want, sizeof want, "%%s is not a safetensors file (header length %llu runs past the end of its 45 bytes): "
             "give a dintattn model file (docs/format.md section 2)", hlen);
    expect_file_message(path, DINTATTN_ERR_HEADER, want);
    remove_temp();
    /* a plausible length but no JSON object after it */
    {
        blob b = assemble_raw(6, "[1, 2]", 6, NULL, 0, NULL, 0);
        path = write_temp(b.p, b.n);
        expect_file_message(path, DINTATTN_ERR_HEADER,
                            "%s is not a safetensors file (its header does not begin with '{'): give a dintattn model "
                            "file (docs/format.md section 2)");
        remove_temp();
        xfree(b.p);
    }
    expect_file_refused("README.md", DINTATTN_ERR_HEADER, "README.md is not a safetensors file (header length ");
}

/* The other weight files a user may have: PyTorch's (a zip archive) and llama.cpp's (GGUF). */
static void test_refuses_pytorch_and_gguf_files_naming_the_converter(void **state)
{
    static const unsigned char zip[] = "PK\3\4\24\0\0\0\0\0archive/data.pkl";
    static const unsigned char gguf[] = "GGUF\3\0\0\0\0\0\0\0\0\0\0\0";
    const char *path = write_temp(zip, sizeof zip - 1);
    char want[600];
    (void)state;
    snprintf(want, sizeof want, "%%s is a zip archive (a PyTorch checkpoint?), not a dintattn model file: convert it with "
             "python3 tools/convert.py --format auto %s out.safetensors (docs/tools.md)", path);
    expect_file_message(path, DINTATTN_ERR_HEADER, want);
    remove_temp();
    expect_refused(zip, sizeof zip - 1, DINTATTN_ERR_HEADER,
                   "the model in memory is a zip archive (a PyTorch checkpoint?), not a dintattn model file: convert it "
                   "with python3 tools/convert.py --format auto FILE out.safetensors (docs/tools.md)");
    path = write_temp(gguf, sizeof gguf - 1);
    expect_file_message(path, DINTATTN_ERR_HEADER,
                        "%s is a GGUF file (llama.cpp's format), not a dintattn model file: convert the Hugging Face "
                        "checkpoint it came from with python3 tools/convert.py --format auto DIR out.safetensors "
                        "(docs/tools.md)");
    remove_temp();
}

/* A checkpoint's safetensors file: another program's format metadata ("pt", as transformers
   writes) and its tensor names, which tell tools/convert.py's layout as --format auto would. */
typedef struct checkpoint_case {
    const char *what;   /* what the message calls it */
    const char *names[3];
} checkpoint_case;

static const checkpoint_case checkpoint_cases[] = {
    {"a Hugging Face checkpoint (motif layout)",
     {"model.layers.0.self_attn.subln.weight", "model.layers.3.mlp.act_fn.weight", "model.embed_tokens.weight"}},
    {"a Hugging Face checkpoint (diffllama layout)",
     {"model.layers.0.self_attn.lambda_q1", "model.layers.0.self_attn.q_proj.weight", "lm_head.weight"}},
    {"a Hugging Face checkpoint (diffv2 layout)",
     {"model.layers.7.self_attn.lambda_proj.weight", "model.layers.7.self_attn.q_proj.weight", "lm_head.weight"}},
    {"a Hugging Face checkpoint (unilm layout)",
     {"layers.0.attn.subln.weight", "layers.0.attn.out_proj.weight", "layers.0.attn.lambda_q1"}},
    {"a Hugging Face checkpoint (xtransformers layout)",
     {"token_emb.emb.weight", "attn_layers.layers.0.1.to_q.weight", "to_logits.weight"}},
    /* a decoder none of the layouts claims for certain: --format auto still decides */
    {"a Hugging Face-style checkpoint",
     {"model.layers.0.self_attn.q_proj.weight", "model.layers.0.mlp.gate_proj.weight", "model.norm.weight"}},
};

/* The header of a checkpoint file holding the three tensors, BF16 [2] each. */
static blob checkpoint_file(const checkpoint_case *c, const char *format)
{
    char hdr[1024];
    static const unsigned char data[12];
    snprintf(hdr, sizeof hdr,
             "{\"__metadata__\":{\"format\":\"%s\"},\"%s\":{\"dtype\":\"BF16\",\"shape\":[2],\"data_offsets\":[0,4]},"
             "\"%s\":{\"dtype\":\"BF16\",\"shape\":[2],\"data_offsets\":[4,8]},"
             "\"%s\":{\"dtype\":\"BF16\",\"shape\":[2],\"data_offsets\":[8,12]}}",
             format, c->names[0], c->names[1], c->names[2]);
    return assemble(hdr, data, sizeof data, 0);
}

static void test_refuses_checkpoint_naming_its_layout_and_the_converter(void **state)
{
    size_t i;
    (void)state;
    for (i = 0; i < sizeof checkpoint_cases / sizeof checkpoint_cases[0]; i++) {
        const checkpoint_case *c = &checkpoint_cases[i];
        blob b = checkpoint_file(c, "pt");
        const char *path = write_temp(b.p, b.n);
        char want[600];
        snprintf(want, sizeof want,
                 "%%s is %s, not a dintattn model file: convert its directory with python3 tools/convert.py "
                 "--format auto /tmp out.safetensors (docs/tools.md)", c->what);
        expect_file_message(path, DINTATTN_ERR_METADATA, want);
        remove_temp();
        snprintf(want, sizeof want,
                 "the model in memory is %s, not a dintattn model file: convert its directory with python3 "
                 "tools/convert.py --format auto DIR out.safetensors (docs/tools.md)", c->what);
        {
            dintattn_model *m = SENTINEL;
            dintattn_error err;
            assert_int_equal(dintattn_model_load_memory(b.p, b.n, NULL, &m, &err), DINTATTN_ERR_METADATA);
            assert_null(m);
            assert_string_equal(err.message, want);
        }
        xfree(b.p);
    }
}

/* A safetensors file of no known kind, in a directory whose name needs quoting in a shell. */
static void test_refuses_foreign_safetensors_with_a_pasteable_command(void **state)
{
    static const checkpoint_case c = {"", {"a", "b", "c"}};
    char dir[64] = "/tmp/dintattn test's XXXXXX", path[128], want[600];
    blob b = checkpoint_file(&c, "numpy");
    FILE *f;
    (void)state;
    if (!mkdtemp(dir)) failf("mkdtemp failed");
    snprintf(path, sizeof path, "%s/weights.safetensors", dir);
    f = fopen(path, "wb");
    assert_non_null(f);
    assert_int_equal(fwrite(b.p, 1, b.n, f), b.n);
    fclose(f);
    snprintf(want, sizeof want,
             "%%s is a safetensors file but not a dintattn model file (__metadata__ \"format\" is not \"dintattn\"): "
             "give a dintattn model file, or convert a checkpoint's directory with python3 tools/convert.py "
             "--format auto '/tmp/dintattn test'\\''s %s' out.safetensors (docs/tools.md)", dir + 21);
    expect_file_message(path, DINTATTN_ERR_METADATA, want);
    unlink(path);
    rmdir(dir);
    xfree(b.p);
}

/* A directory as the model: a checkpoint's (config.json) gets the converter's command with its
   model_type; one holding safetensors files names one; any other is no model. */
static void test_refuses_directory_saying_what_to_give(void **state)
{
    char dir[64] = "/tmp/dintattn_test_dir_XXXXXX", file[128], want[800];
    FILE *f;
    (void)state;
    if (!mkdtemp(dir)) failf("mkdtemp failed");
    snprintf(want, sizeof want, "%s is a directory, not a model file: give a dintattn model file (a .safetensors file "
             "that tools/convert.py wrote)", dir);
    expect_file_message(dir, DINTATTN_ERR_IO, want);
    snprintf(file, sizeof file, "%s/b.safetensors", dir);
    fclose(fopen(file, "wb"));
    snprintf(file, sizeof file, "%s/a.safetensors", dir);
    fclose(fopen(file, "wb"));
    snprintf(want, sizeof want, "%s is a directory, not a model file: give a dintattn model file in it (such as "
             "%s/a.safetensors), or convert a Hugging Face checkpoint with python3 tools/convert.py --format auto "
             "%s out.safetensors (docs/tools.md)", dir, dir, dir);
    expect_file_message(dir, DINTATTN_ERR_IO, want);
    snprintf(file, sizeof file, "%s/config.json", dir);
    f = fopen(file, "wb");
    assert_non_null(f);
    fputs("{\"architectures\": [\"DiffLlamaForCausalLM\"], \"model_type\": \"diffllama\"}\n", f);
    fclose(f);
    snprintf(want, sizeof want, "%s is a Hugging Face checkpoint directory (model_type \"diffllama\"), not a dintattn "
             "model file: convert it with python3 tools/convert.py --format auto %s out.safetensors (docs/tools.md)",
             dir, dir);
    expect_file_message(dir, DINTATTN_ERR_IO, want);
    { /* a trailing slash is the same directory */
        char slash[80];
        snprintf(slash, sizeof slash, "%s/", dir);
        snprintf(want, sizeof want, "%s/ is a Hugging Face checkpoint directory (model_type \"diffllama\"), not a "
                 "dintattn model file: convert it with python3 tools/convert.py --format auto %s out.safetensors "
                 "(docs/tools.md)", dir, dir);
        expect_file_message(slash, DINTATTN_ERR_IO, want);
    }
    unlink(file);
    snprintf(file, sizeof file, "%s/a.safetensors", dir);
    unlink(file);
    snprintf(file, sizeof file, "%s/b.safetensors", dir);
    unlink(file);
    rmdir(dir);
}

static void test_loads_file_with_trailing_bytes(void **state)
{
    blob b = read_fixture(STD);
    unsigned char *p = (unsigned char *)xcalloc(b.n + 13);
    const char *path;
    dintattn_model *m = NULL;
    dintattn_error err;
    (void)state;
    memcpy(p, b.p, b.n);
    path = write_temp(p, b.n + 13);
    if (dintattn_model_load(path, NULL, &m, &err) != DINTATTN_OK) failf("%s", err.message);
    assert_non_null(m);
    dintattn_model_free(m);
    remove_temp();
    xfree(p);
    xfree(b.p);
}

/* --- bad arguments ------------------------------------------------------------------------- */

static void test_load_refuses_null_path(void **state)
{
    dintattn_model *m = SENTINEL;
    dintattn_error err;
    (void)state;
    assert_int_equal(dintattn_model_load(NULL, NULL, &m, &err), DINTATTN_ERR_ARG);
    assert_int_equal(err.code, DINTATTN_ERR_ARG);
    assert_non_null(strstr(err.message, "NULL"));
    assert_int_equal(dintattn_model_load(NULL, NULL, &m, NULL), DINTATTN_ERR_ARG);
    /* like every other refused load, this one should leave *model NULL */
    if (m != NULL) failf("dintattn_model_load(NULL path) left *model = %p, expected NULL", (void *)m);
}

static void test_load_refuses_null_out(void **state)
{
    dintattn_error err;
    (void)state;
    assert_int_equal(dintattn_model_load(FIXDIR DIFF ".safetensors", NULL, NULL, &err), DINTATTN_ERR_ARG);
    assert_int_equal(err.code, DINTATTN_ERR_ARG);
    assert_non_null(strstr(err.message, "NULL"));
    assert_int_equal(dintattn_model_load(NULL, NULL, NULL, NULL), DINTATTN_ERR_ARG);
}

static void test_load_memory_refuses_null_out(void **state)
{
    blob b = read_fixture(DIFF);
    dintattn_error err;
    (void)state;
    assert_int_equal(dintattn_model_load_memory(b.p, b.n, NULL, NULL, &err), DINTATTN_ERR_ARG);
    assert_int_equal(err.code, DINTATTN_ERR_ARG);
    assert_non_null(strstr(err.message, "NULL"));
    xfree(b.p);
}

static void test_load_memory_refuses_null_data_with_size(void **state)
{
    dintattn_model *m = SENTINEL;
    dintattn_error err;
    (void)state;
    assert_int_equal(dintattn_model_load_memory(NULL, 64, NULL, &m, &err), DINTATTN_ERR_ARG);
    assert_int_equal(err.code, DINTATTN_ERR_ARG);
    assert_non_null(strstr(err.message, "NULL"));
    if (m != NULL) failf("dintattn_model_load_memory(NULL, 64) left *model = %p, expected NULL", (void *)m);
}

static void test_load_memory_refuses_empty_buffer(void **state)
{
    static const unsigned char one = 0;
    (void)state;
    expect_refused(NULL, 0, DINTATTN_ERR_TRUNCATED, "0 bytes");
    expect_refused(&one, 0, DINTATTN_ERR_TRUNCATED, "0 bytes");
}

/* A successful load after a failed one clears the error. */
static void test_successful_load_clears_error(void **state)
{
    blob b = read_fixture(DIFF);
    dintattn_model *m = NULL;
    dintattn_error err;
    (void)state;
    assert_int_equal(dintattn_model_load_memory(b.p, 5, NULL, &m, &err), DINTATTN_ERR_TRUNCATED);
    assert_int_equal(dintattn_model_load_memory(b.p, b.n, NULL, &m, &err), DINTATTN_OK);
    assert_int_equal(err.code, DINTATTN_OK);
    assert_string_equal(err.message, "");
    dintattn_model_free(m);
    xfree(b.p);
}

/* dintattn_load_options.map: the model copied into its own memory (COPY) computes what the mapped
   file (FILE) does, bit for bit; the copy is the model's (owned bytes grow by the file's size)
   and reports its progress to the end; a value outside the enum is refused. */
static double progress_last, progress_total;
static void note_progress(void *user, double done, double total)
{
    (void)user;
    progress_last = done, progress_total = total;
}

static void test_copy_computes_what_the_map_does(void **state)
{
    const char *path = FIXDIR DIFF ".safetensors";
    const int tokens[5] = {1, 7, 3, 9, 2};
    dintattn_load_options lo;
    dintattn_model *m[2] = {NULL, NULL};
    dintattn_session *s;
    dintattn_error err;
    float logits[2][5 * 64];
    size_t owned[2], size;
    int k, n_vocab;
    FILE *f = fopen(path, "rb");
    (void)state;
    assert_non_null(f);
    fseek(f, 0, SEEK_END);
    size = (size_t)ftell(f);
    fclose(f);
    for (k = 0; k < 2; k++) {
        memset(&lo, 0, sizeof lo);
        lo.map = k ? DINTATTN_MAP_COPY : DINTATTN_MAP_FILE;
        lo.progress = note_progress;
        progress_last = progress_total = -1;
        if (dintattn_model_load(path, &lo, &m[k], &err) != DINTATTN_OK) failf("%s: %s", path, err.message);
        if (k) assert_true(progress_last == (double)size && progress_total == (double)size);
        else assert_true(progress_last == -1); /* nothing copied, nothing converted */
        owned[k] = dintattn_model_owned_bytes(m[k]);
        n_vocab = dintattn_model_config(m[k])->vocab_size;
        assert_true(n_vocab <= 64);
        assert_int_equal(dintattn_session_new(m[k], NULL, &s, &err), DINTATTN_OK);
        assert_int_equal(dintattn_prefill(s, tokens, 5, logits[k], 1, &err), DINTATTN_OK);
        dintattn_session_free(s);
    }
    assert_true(owned[1] >= owned[0] + size);
    assert_memory_equal(logits[0], logits[1], sizeof(float) * 5 * (size_t)n_vocab);
    for (k = 0; k < 2; k++) dintattn_model_free(m[k]);
    memset(&lo, 0, sizeof lo);
    assert_int_equal(dintattn_map_parse("copy", &lo.map, &err), DINTATTN_OK);
    assert_int_equal(lo.map, DINTATTN_MAP_COPY);
    assert_string_equal(dintattn_map_name(DINTATTN_MAP_FILE), "file");
    assert_int_equal(dintattn_map_parse("mmap", &lo.map, &err), DINTATTN_ERR_ARG);
    assert_null(dintattn_map_name((dintattn_map)3));
    lo.map = (dintattn_map)7;
    assert_int_equal(dintattn_model_load(path, &lo, &m[0], &err), DINTATTN_ERR_ARG);
    assert_null(m[0]);
    assert_non_null(strstr(err.message, "map"));
}

/* ---------------------------------------------------------------------------------------- */

static int run_edit_table(const char *group, edit_case *cases, size_t n)
{
    struct CMUnitTest *t = (struct CMUnitTest *)calloc(n, sizeof *t);
    size_t i;
    int failed;
    if (!t) return 1;
    for (i = 0; i < n; i++) {
        t[i].name = cases[i].name;
        t[i].test_func = run_edit_case;
        t[i].initial_state = &cases[i];
    }
    failed = _cmocka_run_group_tests(group, t, n, NULL, release_all);
    free(t);
    return failed;
}

static int run_raw_table(void)
{
    size_t n = sizeof raw_cases / sizeof raw_cases[0], i;
    struct CMUnitTest *t = (struct CMUnitTest *)calloc(n, sizeof *t);
    int failed;
    if (!t) return 1;
    for (i = 0; i < n; i++) {
        t[i].name = raw_cases[i].name;
        t[i].test_func = run_raw_case;
        t[i].initial_state = &raw_cases[i];
    }
    failed = _cmocka_run_group_tests("raw_headers", t, n, NULL, release_all);
    free(t);
    return failed;
}

#define TABLE(group, cases) run_edit_table(group, cases, sizeof cases / sizeof cases[0])

int main(void)
{
    const struct CMUnitTest controls[] = {
        cmocka_unit_test(test_base_fixtures_load),
        cmocka_unit_test(test_loads_with_trailing_bytes_after_data),
        cmocka_unit_test(test_loads_unusual_but_legal_header),
        cmocka_unit_test(test_loads_tensor_moved_past_a_gap),
        cmocka_unit_test(test_loads_file_with_trailing_bytes),
        cmocka_unit_test(test_successful_load_clears_error),
        cmocka_unit_test(test_copy_computes_what_the_map_does),
    };
    const struct CMUnitTest singles[] = {
        cmocka_unit_test(test_refuses_fixture_without_metadata),
        cmocka_unit_test(test_refuses_deeply_nested_header),
        cmocka_unit_test(test_refuses_deeply_nested_config),
        cmocka_unit_test(test_refuses_header_length_over_limit),
        cmocka_unit_test(test_refuses_tensor_name_with_escaped_nul),
        cmocka_unit_test(test_refuses_config_value_with_escaped_nul),
        cmocka_unit_test(test_reversed_offsets_message_does_not_say_outside),
        cmocka_unit_test(test_non_json_header_message_does_not_say_bad_number),
    };
    const struct CMUnitTest files[] = {
        cmocka_unit_test(test_refuses_nonexistent_path),
        cmocka_unit_test(test_refuses_directory),
        cmocka_unit_test(test_refuses_character_device),
        cmocka_unit_test(test_refuses_empty_file),
        cmocka_unit_test(test_refuses_file_shorter_than_8_bytes),
        cmocka_unit_test(test_refuses_file_cut_inside_header),
        cmocka_unit_test(test_refuses_file_cut_after_header),
        cmocka_unit_test(test_refuses_file_missing_its_last_bytes),
        cmocka_unit_test(test_refuses_text_file_as_not_safetensors),
        cmocka_unit_test(test_refuses_pytorch_and_gguf_files_naming_the_converter),
        cmocka_unit_test(test_refuses_checkpoint_naming_its_layout_and_the_converter),
        cmocka_unit_test(test_refuses_foreign_safetensors_with_a_pasteable_command),
        cmocka_unit_test(test_refuses_directory_saying_what_to_give),
    };
    const struct CMUnitTest args[] = {
        cmocka_unit_test(test_load_refuses_null_path),
        cmocka_unit_test(test_load_refuses_null_out),
        cmocka_unit_test(test_load_memory_refuses_null_out),
        cmocka_unit_test(test_load_memory_refuses_null_data_with_size),
        cmocka_unit_test(test_load_memory_refuses_empty_buffer),
    };
    int failed = 0;
    failed += cmocka_run_group_tests_name("positive_controls", controls, NULL, release_all);
    failed += cmocka_run_group_tests_name("files", files, NULL, release_all);
    failed += run_raw_table();
    failed += cmocka_run_group_tests_name("structure", singles, NULL, release_all);
    failed += TABLE("json_syntax", json_cases);
    failed += TABLE("tensor_entries", entry_cases);
    failed += TABLE("metadata", metadata_cases);
    failed += TABLE("config", config_cases);
    failed += TABLE("tensors_vs_config", tensor_cases);
    failed += cmocka_run_group_tests_name("arguments", args, NULL, release_all);
    return failed ? 1 : 0;
}
