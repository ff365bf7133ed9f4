/* Allocation failure: with DINTATTN_MALLOC/REALLOC/FREE overridden by an allocator that fails after k
   successful calls, loading a model and creating a session must fail with DINTATTN_ERR_NOMEM
   and free everything, for every k until they succeed. Also proves DINTATTN_STATIC builds. And
   with every new block filled with NaN bytes, the logits are what they are on fresh blocks: no
   result reads memory the library did not write (converted weights, copies, the session's). */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>
#include <stdlib.h>
#include <string.h>
#include <math.h>

static long budget = -1; /* successful allocations left; -1 = unlimited */
static long live;        /* blocks allocated and not yet freed */
static int poison;       /* != 0: new blocks filled with 0xFF bytes (NaN as floats) */

static void *failing_malloc(size_t n)
{
    void *p;
    if (budget == 0) return NULL;
    if (budget > 0) budget--;
    p = malloc(n);
    if (p) live++;
    if (p && poison) memset(p, 0xFF, n);
    return p;
}

/* A grown block counts as a new allocation: it can fail (leaving the old one live) */
static void *failing_realloc(void *old, size_t n)
{
    void *p;
    if (!old) return failing_malloc(n);
    if (budget == 0) return NULL;
    if (budget > 0) budget--;
    p = realloc(old, n);
    return p;
}

static void counting_free(void *p)
{
    if (p) live--;
    free(p);
}

#define DINTATTN_STATIC
#define DINTATTN_MALLOC(n) failing_malloc(n)
#define DINTATTN_REALLOC(p, n) failing_realloc(p, n)
#define DINTATTN_FREE(p) counting_free(p)
#define DINTATTN_SOLO_BYTES 0 /* every decode job through the thread pool, however small */
#define DINTATTN_IMPLEMENTATION
#include "../dintattn.h"

/* Loads `path` with allocation budget k; returns 1 once everything succeeded. Once the session
   exists, prefill and decode get a budget of 0: they must not allocate at all. */
static int attempt(const char *path, dintattn_qk_form form, dintattn_weights weights, int n_threads, long k)
{
    dintattn_model *m = NULL;
    dintattn_session *s = NULL;
    dintattn_load_options lo;
    dintattn_session_options so;
    dintattn_error err;
    dintattn_result r;
    int ids[3] = {1, 2, 3};
    memset(&lo, 0, sizeof lo);
    memset(&so, 0, sizeof so);
    lo.qk_form = form;
    lo.weights = weights;
    so.n_threads = n_threads;
    budget = k;
    r = dintattn_model_load(path, &lo, &m, &err);
    if (r == DINTATTN_OK) r = dintattn_session_new(m, &so, &s, &err);
    if (r == DINTATTN_OK) {
        float logits[128];
        budget = 0;
        assert_true(dintattn_model_config(m)->vocab_size <= 128);
        assert_int_equal(dintattn_prefill(s, ids, 3, logits, 0, &err), DINTATTN_OK);
        assert_int_equal(dintattn_decode(s, 4, logits, &err), DINTATTN_OK);
        assert_int_equal(dintattn_prefill(s, ids, 2, NULL, 0, &err), DINTATTN_OK);
    }
    budget = -1;
    if (r != DINTATTN_OK) {
        assert_int_equal(r, DINTATTN_ERR_NOMEM);
        assert_non_null(strstr(err.message, "memory"));
    }
    dintattn_session_free(s);
    dintattn_model_free(m);
    assert_int_equal(live, 0);
    return r == DINTATTN_OK;
}

static void check_every_failure_point(const char *path, dintattn_qk_form form, dintattn_weights weights,
                                      int n_threads)
{
    long k;
    for (k = 0; k < 100000; k++)
        if (attempt(path, form, weights, n_threads, k)) break;
    /* the header, config, tensor table, conversions and the session each allocate */
    assert_true(k >= 6);
    assert_true(k < 100000);
}

static void test_allocation_failure_is_an_error_not_a_crash(void **state)
{
    (void)state;
    check_every_failure_point("tests/fixtures/dint_groupnorm_perhead_polynorm_f16.safetensors", DINTATTN_QK_AUTO,
                              DINTATTN_WEIGHTS_FILE, 1);
    check_every_failure_point("tests/fixtures/shared_diff_r2_f32.safetensors", DINTATTN_QK_MERGED,
                              DINTATTN_WEIGHTS_FILE, 3);
    check_every_failure_point("tests/fixtures/shared_diff_r2_f32.safetensors", DINTATTN_QK_MERGED,
                              DINTATTN_WEIGHTS_BF16, 2);
    check_every_failure_point("tests/fixtures/conv_dint_grouped_gqa_f32.safetensors", DINTATTN_QK_AUTO,
                              DINTATTN_WEIGHTS_Q8, 2);
}

/* The tokenizer with allocation budget k: the toy rank file (tests/fixtures/toy.tiktoken) from
   memory and from its file, a special token, an encoding that needs merge scratch, and the
   tokenizer of a model (loaded beforehand, outside the budget). Returns 1 once all succeeded. */
static int attempt_tokenizer(const char *ranks, size_t size, const dintattn_model *m, long k)
{
    static const char text[] = "hellos <|endoftext|> singing";
    dintattn_tokenizer *a = NULL, *b = NULL, *c = NULL;
    dintattn_error err;
    dintattn_result r;
    int ids[64], n = 0;
    long before = live; /* the model's blocks */
    budget = k;
    r = dintattn_tokenizer_from_memory(ranks, size, &a, &err);
    if (r == DINTATTN_OK) r = dintattn_tokenizer_load("tests/fixtures/toy.tiktoken", &b, &err);
    if (r == DINTATTN_OK) r = dintattn_tokenizer_add_special(a, "<|endoftext|>", 300, &err);
    if (r == DINTATTN_OK) r = dintattn_tokenizer_encode(a, text, strlen(text), 1, ids, 64, &n, &err);
    if (r == DINTATTN_OK) r = dintattn_tokenizer_from_model(m, &c, &err);
    budget = -1;
    if (r != DINTATTN_OK) {
        assert_int_equal(r, DINTATTN_ERR_NOMEM);
        assert_non_null(strstr(err.message, "memory"));
    } else {
        assert_int_equal(n, 8); /* hello s, " ", <|endoftext|>, " ", s ing ing */
    }
    dintattn_tokenizer_free(a);
    dintattn_tokenizer_free(b);
    dintattn_tokenizer_free(c);
    assert_int_equal(live, before);
    return r == DINTATTN_OK;
}

static void test_tokenizer_allocation_failure_is_an_error_not_a_crash(void **state)
{
    static char ranks[8192];
    FILE *f = fopen("tests/fixtures/toy.tiktoken", "rb");
    size_t size;
    dintattn_model *m = NULL;
    dintattn_error err;
    long k;
    (void)state;
    assert_non_null(f);
    size = fread(ranks, 1, sizeof ranks, f);
    fclose(f);
    assert_true(size > 0 && size < sizeof ranks);
    assert_int_equal(dintattn_model_load("tests/fixtures/tok_model.safetensors", NULL, &m, &err), DINTATTN_OK);
    for (k = 0; k < 1000; k++)
        if (attempt_tokenizer(ranks, size, m, k)) break;
    assert_true(k >= 8); /* tables, file buffer, special tokens, merge scratch */
    assert_true(k < 1000);
    dintattn_model_free(m);
}

/* The logits of 5 prompt tokens and 3 decoded ones, malloc'ed */
static float *logits_of(const char *path, dintattn_weights weights, dintattn_map map, int n_threads, int *vocab)
{
    const int ids[5] = {1, 2, 3, 5, 8};
    dintattn_model *m = NULL;
    dintattn_session *s = NULL;
    dintattn_load_options lo;
    dintattn_session_options so;
    dintattn_error err;
    float *out;
    int t, V;
    memset(&lo, 0, sizeof lo);
    memset(&so, 0, sizeof so);
    lo.weights = weights, lo.map = map, lo.n_threads = n_threads;
    so.n_threads = n_threads, so.n_ctx = 16;
    if (dintattn_model_load(path, &lo, &m, &err) || dintattn_session_new(m, &so, &s, &err)) fail_msg("%s: %s", path, err.message);
    V = *vocab = dintattn_model_config(m)->vocab_size;
    out = (float *)malloc(sizeof(float) * 8 * (size_t)V);
    assert_non_null(out);
    assert_int_equal(dintattn_prefill(s, ids, 5, out, 1, &err), DINTATTN_OK);
    for (t = 0; t < 3; t++) assert_int_equal(dintattn_decode(s, 7 + t, out + (size_t)(5 + t) * V, &err), DINTATTN_OK);
    dintattn_session_free(s);
    dintattn_model_free(m);
    return out;
}

static void test_nothing_reads_memory_it_did_not_write(void **state)
{
    static const char *paths[] = {"tests/fixtures/conv_dint_grouped_gqa_f32.safetensors",
                                  "tests/fixtures/dint_shared_grouped_gqa_bf16.safetensors",
                                  "tests/fixtures/conv_dint_grouped_gqa_q8file.safetensors",
                                  "tests/fixtures/diff_odd_sizes_f32.safetensors"};
    static const dintattn_weights kinds[] = {DINTATTN_WEIGHTS_FILE, DINTATTN_WEIGHTS_F32, DINTATTN_WEIGHTS_BF16,
                                             DINTATTN_WEIGHTS_Q8, DINTATTN_WEIGHTS_Q4};
    int f, k, threads, V, i;
    (void)state;
    for (f = 0; f < 4; f++)
        for (k = 0; k < 5; k++)
            for (threads = 1; threads <= 3; threads += 2) {
                const dintattn_map map = k == 0 ? DINTATTN_MAP_COPY : DINTATTN_MAP_AUTO;
                float *fresh, *poisoned;
                poison = 0;
                fresh = logits_of(paths[f], kinds[k], map, threads, &V);
                poison = 1;
                poisoned = logits_of(paths[f], kinds[k], map, threads, &V);
                poison = 0;
                for (i = 0; i < 8 * V; i++) assert_true(isfinite(fresh[i]));
                if (memcmp(fresh, poisoned, sizeof(float) * 8 * (size_t)V))
                    fail_msg("%s as %s on %d threads: logits differ on poisoned memory", paths[f],
                             dintattn_weights_name(kinds[k]), threads);
                free(fresh);
                free(poisoned);
            }
    assert_int_equal(live, 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {cmocka_unit_test(test_allocation_failure_is_an_error_not_a_crash),
                                       cmocka_unit_test(test_tokenizer_allocation_failure_is_an_error_not_a_crash),
                                       cmocka_unit_test(test_nothing_reads_memory_it_did_not_write)};
    return cmocka_run_group_tests_name("alloc", tests, NULL, NULL);
}
