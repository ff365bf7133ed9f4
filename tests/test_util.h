/* Helpers shared by the cmocka suites (include after dintattn.h): reading fixtures and comparing logits.
   Fixtures (tests/fixtures) are written by tools/make_fixtures.py: NAME.safetensors is a random
   model, NAME.logits the float64 numpy reference's logits (tools/reference.py) as float32
   [N, vocab]; manifest.txt lists "NAME IDS", pairs.txt "A B IDS" for models that must agree. */
#ifndef DINTATTN_TEST_UTIL_H
#define DINTATTN_TEST_UTIL_H

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#if defined(__GNUC__)
#define TEST_HELPER static __attribute__((unused)) /* not every suite uses every helper */
#else
#define TEST_HELPER static
#endif

#define FIXTURES "tests/fixtures/"
#define MAX_FIXTURES 64
#define MAX_IDS 64

typedef struct fixture {
    char name[96], other[96]; /* other: the second model of a pair */
    int ids[MAX_IDS], n;
} fixture;

/* The kernel level the suite runs at: DINTATTN_KERNELS=auto|portable|avx2|avx512|amx (make check
   runs test_engine at portable, avx2 and avx512 besides the default, the best the CPU has). The library
   itself reads no environment variable. */
TEST_HELPER dintattn_kernels test_kernels(void)
{
    dintattn_kernels k = DINTATTN_KERNELS_AUTO;
    const char *env = getenv("DINTATTN_KERNELS");
    if (env && dintattn_kernels_parse(env, &k, NULL) != DINTATTN_OK) {
        fprintf(stderr, "DINTATTN_KERNELS=%s is not auto, portable, avx2, avx512 or amx\n", env);
        exit(2);
    }
    return k;
}

/* What every session test_session_kv makes takes besides its arguments: a test sets the dispatch
   overrides here (tiles_min_tokens, bf16_dot) around the runs that need them and zeroes them after. */
TEST_HELPER dintattn_session_options test_session_base;

/* A session of n_ctx tokens (0: the model's), n_batch, n_threads and precision, at the suite's
   kernel level, which it checks the session runs (or a lower one on a CPU without it). */
TEST_HELPER dintattn_session *test_session_kv(const dintattn_model *m, int n_ctx, int n_batch, int n_threads,
                                             dintattn_precision precision, dintattn_kv_type kv)
{
    dintattn_session *s = NULL;
    dintattn_session_options so = test_session_base;
    dintattn_error err;
    so.n_ctx = n_ctx;
    so.n_batch = n_batch;
    so.n_threads = n_threads;
    so.kernels = test_kernels();
    so.precision = precision;
    so.kv = kv;
    if (dintattn_session_new(m, &so, &s, &err) != DINTATTN_OK) fail_msg("session: %s", err.message);
    if (so.kernels != DINTATTN_KERNELS_AUTO) assert_true(dintattn_session_kernels(s) <= so.kernels);
    assert_int_equal(dintattn_session_kv(s), kv);
    return s;
}

/* As test_session_kv with an f32 KV cache. */
TEST_HELPER dintattn_session *test_session_p(const dintattn_model *m, int n_ctx, int n_batch, int n_threads,
                                            dintattn_precision precision)
{
    return test_session_kv(m, n_ctx, n_batch, n_threads, precision, DINTATTN_KV_F32);
}

/* As test_session_p at precision AUTO (Q8/Q4 weights multiply int8 activations). */
TEST_HELPER dintattn_session *test_session(const dintattn_model *m, int n_ctx, int n_batch, int n_threads)
{
    return test_session_p(m, n_ctx, n_batch, n_threads, DINTATTN_PRECISION_AUTO);
}

/* Reads a whole file; returns NULL if it cannot. */
TEST_HELPER void *read_file(const char *path, size_t *size)
{
    FILE *f = fopen(path, "rb");
    long n;
    void *buf;
    if (!f) return NULL;
    fseek(f, 0, SEEK_END);
    n = ftell(f);
    fseek(f, 0, SEEK_SET);
    buf = malloc(n > 0 ? (size_t)n : 1);
    if (buf && fread(buf, 1, (size_t)n, f) != (size_t)n) {
        free(buf);
        buf = NULL;
    }
    fclose(f);
    if (size) *size = (size_t)n;
    return buf;
}

TEST_HELPER int parse_ids(const char *s, int *ids)
{
    int n = 0;
    while (*s && n < MAX_IDS) {
        ids[n++] = (int)strtol(s, (char **)&s, 10);
        if (*s == ',') s++;
    }
    return n;
}

/* Reads a list of fixtures, "NAME IDS" per line (pairs: "NAME OTHER IDS"); returns the count. */
TEST_HELPER int read_fixture_list(fixture *fx, const char *path, int pairs)
{
    FILE *f = fopen(path, "r");
    char ids[1024];
    int n = 0;
    if (!f) return 0;
    while (n < MAX_FIXTURES) {
        int got = pairs ? fscanf(f, "%95s %95s %1023s", fx[n].name, fx[n].other, ids)
                        : fscanf(f, "%95s %1023s", fx[n].name, ids);
        if (got != (pairs ? 3 : 2)) break;
        fx[n].n = parse_ids(ids, fx[n].ids);
        n++;
    }
    fclose(f);
    return n;
}

/* Reads manifest.txt (pairs = 0) or pairs.txt (pairs = 1); returns the count. */
TEST_HELPER int read_fixtures(fixture *fx, int pairs)
{
    return read_fixture_list(fx, pairs ? FIXTURES "pairs.txt" : FIXTURES "manifest.txt", pairs);
}

/* converted.txt: the fixtures loaded with dintattn_load_options.weights converting them. */
TEST_HELPER int read_converted(fixture *fx)
{
    return read_fixture_list(fx, FIXTURES "converted.txt", 0);
}

TEST_HELPER void fixture_path(char *out, size_t cap, const char *name, const char *ext)
{
    snprintf(out, cap, FIXTURES "%.95s%.20s", name, ext);
}

/* The reference logits of fixture f saved as f's name + ext ([f->n][vocab] floats, as m's
   vocabulary); fails the test if the file is missing or of another size. Free them. */
TEST_HELPER float *read_logits(const fixture *f, const char *ext, const dintattn_model *m)
{
    char path[256];
    size_t size;
    float *ref;
    fixture_path(path, sizeof path, f->name, ext);
    ref = (float *)read_file(path, &size);
    if (!ref) fail_msg("cannot read %s", path);
    assert_int_equal(size, sizeof(float) * (size_t)f->n * (size_t)dintattn_model_config(m)->vocab_size);
    return ref;
}

/* max |a - b| / max(1, max |ref|): the reviewers' error measure (tolerance 1e-4). */
TEST_HELPER double rel_error(const float *a, const float *ref, size_t n)
{
    double worst = 0, scale = 1;
    size_t i;
    for (i = 0; i < n; i++) {
        double d = fabs((double)a[i] - ref[i]);
        if (!(d <= worst)) worst = d; /* NaN propagates as a failure */
        if (fabs(ref[i]) > scale) scale = fabs(ref[i]);
    }
    return worst / scale;
}

/* Loads tests/fixtures/NAME.safetensors (or NAME itself, if it is a path) with a Shared-DIFF
   form and a weight precision; fails the test with the loader's message if it cannot. */
TEST_HELPER dintattn_model *load_fixture_as(const char *name, dintattn_qk_form form, dintattn_weights weights)
{
    char path[256];
    dintattn_model *m = NULL;
    dintattn_error err;
    dintattn_load_options opt;
    memset(&opt, 0, sizeof opt);
    opt.qk_form = form;
    opt.weights = weights;
    if (strchr(name, '/')) snprintf(path, sizeof path, "%.250s", name);
    else fixture_path(path, sizeof path, name, ".safetensors");
    if (dintattn_model_load(path, &opt, &m, &err) != DINTATTN_OK) fail_msg("%s: %s", name, err.message);
    return m;
}

TEST_HELPER dintattn_model *load_fixture(const char *name, dintattn_qk_form form)
{
    return load_fixture_as(name, form, DINTATTN_WEIGHTS_FILE);
}

/* Appends s to out[at..) as the inside of a JSON string (" and \ escaped); returns the new end. */
TEST_HELPER size_t json_escape(char *out, size_t at, const char *s)
{
    for (; *s; s++) {
        if (*s == '"' || *s == '\\') out[at++] = '\\';
        out[at++] = *s;
    }
    out[at] = 0;
    return at;
}

/* Writes a safetensors file -- the 8-byte header length, header[0..hlen), then the n data parts
   -- to $TMPDIR/dintattn_test_NAME_PID.safetensors and returns that path (a static buffer). */
TEST_HELPER const char *write_safetensors(const char *name, const char *header, size_t hlen,
                                          const void *const *parts, const size_t *sizes, int n)
{
    static char path[256];
    unsigned char len8[8];
    FILE *f;
    int i;
    snprintf(path, sizeof path, "%s/dintattn_test_%s_%d.safetensors", getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp",
             name, (int)getpid());
    for (i = 0; i < 8; i++) len8[i] = (unsigned char)(hlen >> (8 * i));
    f = fopen(path, "wb");
    assert_non_null(f);
    assert_int_equal(fwrite(len8, 1, 8, f), 8);
    assert_int_equal(fwrite(header, 1, hlen, f), hlen);
    for (i = 0; i < n; i++)
        if (sizes[i]) assert_int_equal(fwrite(parts[i], 1, sizes[i], f), sizes[i]);
    assert_int_equal(fclose(f), 0);
    return path;
}

#endif
