/* Concurrency: one model shared by several threads, each with its own session, gives exactly
   (memcmp) the logits and tokens of serial runs; a tokenizer shared for encoding likewise.
   Expected values come from the engine itself run serially on the main thread. Worker threads
   only record what they computed; every assertion runs on the main thread (cmocka's are not
   thread-safe). Build with -fsanitize=thread to look for data races (`make check-tsan`; docs/computing.md,
   "Threads"). */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>
#include <pthread.h>

#define DINTATTN_SOLO_BYTES 0 /* every decode job through the thread pool, however small */
#define DINTATTN__CONVERT_UNIT 96 /* the fixtures' matrices converted at load in several parts */
#define DINTATTN__COPY_UNIT 4096   /* and their files copied so */
#define DINTATTN_IMPLEMENTATION
#include "../dintattn.h"
#include "test_util.h"

#define N_WORKERS 4
#define N_DECODE 4
#define ROUNDS 3

typedef struct job {
    const dintattn_model *model;
    const int *prompt;
    int n_prompt, n_batch, n_threads;
    float *logits;            /* [(n_prompt + N_DECODE) * vocab] */
    int tokens[N_DECODE];     /* greedy continuation */
    dintattn_result result;
    char message[sizeof(((dintattn_error *)0)->message)];
} job;

static int argmax(const float *x, int n)
{
    int i, best = 0;
    for (i = 1; i < n; i++)
        if (x[i] > x[best]) best = i;
    return best;
}

/* Prefills the prompt (all logits), then decodes N_DECODE greedy tokens. */
static void run_job(job *j)
{
    const int V = dintattn_model_config(j->model)->vocab_size;
    dintattn_session_options so;
    dintattn_session *s = NULL;
    dintattn_error err;
    int i;
    memset(&so, 0, sizeof so);
    so.n_batch = j->n_batch;
    so.n_threads = j->n_threads;
    so.kernels = test_kernels();
    so.n_ctx = j->n_prompt + N_DECODE + 1;
    j->result = dintattn_session_new(j->model, &so, &s, &err);
    if (j->result == DINTATTN_OK)
        j->result = dintattn_prefill(s, j->prompt, j->n_prompt, j->logits, 1, &err);
    for (i = 0; i < N_DECODE && j->result == DINTATTN_OK; i++) {
        const float *last = j->logits + (size_t)(j->n_prompt + i - 1) * (size_t)V;
        j->tokens[i] = argmax(last, V);
        j->result = dintattn_decode(s, j->tokens[i], j->logits + (size_t)(j->n_prompt + i) * (size_t)V, &err);
    }
    if (j->result != DINTATTN_OK) snprintf(j->message, sizeof j->message, "%s", err.message);
    dintattn_session_free(s);
}

static void *worker(void *arg)
{
    run_job((job *)arg);
    return NULL;
}

/* Four different prompts, four session set-ups (two with 2 attention threads); every round
   starts the four threads together and compares each with its serial run byte for byte. */
static void check_model(const char *name, dintattn_qk_form form)
{
    static const int prompts[N_WORKERS][12] = {
        {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12},
        {30, 20, 10, 5, 0, 7, 7},
        {3},
        {15, 4, 22, 8, 16, 42, 23, 4, 9}};
    static const int lens[N_WORKERS] = {12, 7, 1, 9};
    static const int batches[N_WORKERS] = {0, 3, 0, 2};
    static const int threads[N_WORKERS] = {1, 2, 2, 1};
    dintattn_model *m = load_fixture(name, form);
    const int V = dintattn_model_config(m)->vocab_size;
    job serial[N_WORKERS], par[N_WORKERS];
    pthread_t tid[N_WORKERS];
    int w, round, k;
    for (w = 0; w < N_WORKERS; w++) {
        size_t cells = (size_t)(lens[w] + N_DECODE) * (size_t)V;
        int *p = (int *)malloc(sizeof(int) * (size_t)lens[w]);
        assert_non_null(p);
        for (k = 0; k < lens[w]; k++) p[k] = prompts[w][k] % V;
        memset(&serial[w], 0, sizeof serial[w]);
        serial[w].model = m;
        serial[w].prompt = p;
        serial[w].n_prompt = lens[w];
        serial[w].n_batch = batches[w];
        serial[w].n_threads = threads[w];
        serial[w].logits = (float *)calloc(cells, sizeof(float));
        assert_non_null(serial[w].logits);
        run_job(&serial[w]);
        if (serial[w].result != DINTATTN_OK) fail_msg("%s serial %d: %s", name, w, serial[w].message);
    }
    for (round = 0; round < ROUNDS; round++) {
        for (w = 0; w < N_WORKERS; w++) {
            size_t cells = (size_t)(lens[w] + N_DECODE) * (size_t)V;
            par[w] = serial[w];
            par[w].logits = (float *)malloc(sizeof(float) * cells);
            assert_non_null(par[w].logits);
            memset(par[w].logits, 0xFF, sizeof(float) * cells); /* NaNs: every cell must be written */
            memset(par[w].tokens, 0, sizeof par[w].tokens);
        }
        for (w = 0; w < N_WORKERS; w++) assert_int_equal(pthread_create(&tid[w], NULL, worker, &par[w]), 0);
        for (w = 0; w < N_WORKERS; w++) assert_int_equal(pthread_join(tid[w], NULL), 0);
        for (w = 0; w < N_WORKERS; w++) {
            size_t cells = (size_t)(lens[w] + N_DECODE) * (size_t)V;
            if (par[w].result != DINTATTN_OK) fail_msg("%s thread %d: %s", name, w, par[w].message);
            if (memcmp(par[w].logits, serial[w].logits, sizeof(float) * cells) != 0)
                fail_msg("%s round %d thread %d: logits differ from the serial run", name, round, w);
            if (memcmp(par[w].tokens, serial[w].tokens, sizeof par[w].tokens) != 0)
                fail_msg("%s round %d thread %d: tokens differ from the serial run", name, round, w);
            free(par[w].logits);
        }
    }
    for (w = 0; w < N_WORKERS; w++) {
        free((void *)serial[w].prompt);
        free(serial[w].logits);
    }
    dintattn_model_free(m);
}

static void test_dint_shared_by_four_threads(void **state)
{
    (void)state;
    check_model("dint_shared_grouped_gqa_bf16", DINTATTN_QK_AUTO);
    check_model("dint_odd_sizes_3layer_list_f32", DINTATTN_QK_AUTO);
}

static void test_diff_shared_by_four_threads(void **state)
{
    (void)state;
    check_model("diff_groupnorm_perhead_f32", DINTATTN_QK_AUTO);
    check_model("grouped_diff_g4_f16", DINTATTN_QK_AUTO);
}

static void test_shared_diff_factored_and_merged(void **state)
{
    (void)state;
    check_model("shared_diff_r2_f32", DINTATTN_QK_FACTORED);
    check_model("shared_diff_r2_f32", DINTATTN_QK_MERGED);
}

static void test_standard_shared_by_four_threads(void **state)
{
    (void)state;
    check_model("standard_gqa_halves_f32", DINTATTN_QK_AUTO);
}

/* The model shipped in models/ (larger: the threads overlap for longer), when present. */
static void test_shipped_model_shared_by_four_threads(void **state)
{
    FILE *f = fopen("models/dint-kjv.safetensors", "rb");
    (void)state;
    if (!f) skip();
    fclose(f);
    check_model("models/dint-kjv.safetensors", DINTATTN_QK_AUTO);
}

/* --- the tokenizer: read-only once built, shared for encoding ---------------------------- */

typedef struct enc_job {
    const dintattn_tokenizer *tok;
    const char *text;
    int ids[256], n;
} enc_job;

static void *encode_worker(void *arg)
{
    enc_job *j = (enc_job *)arg;
    int r;
    for (r = 0; r < 20; r++)
        if (dintattn_tokenizer_encode(j->tok, j->text, strlen(j->text), 1, j->ids, 256, &j->n, NULL)) j->n = -1;
    return NULL;
}

typedef struct progress_log {
    int calls, backwards;
    double done, total;
} progress_log;

static void log_progress(void *user, double done, double total)
{
    progress_log *p = (progress_log *)user;
    if (done < p->done || done > total) p->backwards++;
    p->calls++, p->done = done, p->total = total;
}

/* Weights converted at load on 1, 2 or 5 threads (every matrix cut into parts, 96 elements at
   least: parts of one span, of several, and a last short one) are the same: the same logits bit
   for bit, the same bytes owned; progress only goes forward and ends at the file's size. From
   F32, BF16 and a Q8 file, to each precision, and the files as stored, copied (map COPY: parts
   of 4 KiB pages). n_threads outside [0, 1024] is refused. */
static void test_weights_converted_on_threads(void **state)
{
    static const char *names[] = {"conv_dint_grouped_gqa_f32", "dint_shared_grouped_gqa_bf16", "conv_dint_grouped_gqa_q8file"};
    static const dintattn_weights kinds[] = {DINTATTN_WEIGHTS_F32, DINTATTN_WEIGHTS_BF16, DINTATTN_WEIGHTS_Q8, DINTATTN_WEIGHTS_Q4,
                                             DINTATTN_WEIGHTS_FILE};
    static const int threads[] = {1, 2, 5};
    static const int prompt[] = {1, 7, 3, 50, 9, 4, 11, 2};
    int f, k, t, bad;
    (void)state;
    for (f = 0; f < 3; f++)
        for (k = 0; k < 5; k++) {
            float *first = NULL;
            size_t owned = 0, n = 0;
            for (t = 0; t < 3; t++) {
                char path[256];
                dintattn_load_options lo;
                dintattn_model *m = NULL;
                dintattn_error err;
                progress_log log;
                job j;
                memset(&lo, 0, sizeof lo), memset(&log, 0, sizeof log), memset(&j, 0, sizeof j);
                lo.weights = kinds[k], lo.n_threads = threads[t];
                lo.map = kinds[k] == DINTATTN_WEIGHTS_FILE ? DINTATTN_MAP_COPY : DINTATTN_MAP_AUTO;
                lo.progress = log_progress, lo.progress_user = &log;
                fixture_path(path, sizeof path, names[f], ".safetensors");
                if (dintattn_model_load(path, &lo, &m, &err)) fail_msg("%s: %s", names[f], err.message);
                n = (size_t)(sizeof prompt / sizeof *prompt + N_DECODE) * (size_t)dintattn_model_config(m)->vocab_size;
                j.model = m, j.prompt = prompt, j.n_prompt = (int)(sizeof prompt / sizeof *prompt), j.n_threads = 1;
                j.logits = (float *)calloc(n, sizeof(float));
                assert_non_null(j.logits);
                run_job(&j);
                if (j.result) fail_msg("%s: %s", names[f], j.message);
                assert_int_equal(log.backwards, 0);
                assert_true(log.done == log.total);
                if (k != f) assert_true(log.calls > 0); /* names[f] holds kinds[f]: nothing to convert; */
                if (k == 4) assert_true(dintattn_model_owned_bytes(m) >= 5 * 4096); /* the copy, at least 5 parts */
                if (t == 0) {
                    first = j.logits, owned = dintattn_model_owned_bytes(m);
                } else {
                    assert_int_equal(dintattn_model_owned_bytes(m), owned);
                    if (memcmp(first, j.logits, n * sizeof(float)))
                        fail_msg("%s as %s: logits on %d threads differ", names[f], dintattn_weights_name(kinds[k]), threads[t]);
                    free(j.logits);
                }
                dintattn_model_free(m);
            }
            free(first);
        }
    for (bad = 0; bad < 2; bad++) {
        char path[256];
        dintattn_load_options lo;
        dintattn_model *m = NULL;
        dintattn_error err;
        memset(&lo, 0, sizeof lo);
        lo.n_threads = bad ? 1025 : -1;
        fixture_path(path, sizeof path, names[0], ".safetensors");
        assert_int_equal(dintattn_model_load(path, &lo, &m, &err), DINTATTN_ERR_ARG);
        assert_null(m);
        assert_non_null(strstr(err.message, "n_threads"));
    }
}

/* Each matrix a load converts on 3 threads (parts of 96 elements and more) holds what the portable
   conversion of the file's values gives, element by element: f32 as is, bf16 rounded by
   dintattn__f32_to_bf16 (matrices whose size is no multiple of 32 too), Q8 and Q4 bytes and scales
   of dintattn__quantize_w (rows a multiple of 32 long; others stay as stored). */
static void test_converted_weights_are_the_portable_conversion(void **state)
{
    static const char *names[] = {"diff_odd_sizes_f32", "dint_shared_grouped_gqa_bf16", "conv_dint_grouped_gqa_f32"};
    static const dintattn_weights kinds[] = {DINTATTN_WEIGHTS_F32, DINTATTN_WEIGHTS_BF16, DINTATTN_WEIGHTS_Q8, DINTATTN_WEIGHTS_Q4};
    int f, k, l, t, odd = 0, checked = 0;
    (void)state;
    for (f = 0; f < 3; f++)
        for (k = 0; k < 4; k++) {
            char path[256];
            dintattn_load_options lo;
            dintattn_model *file = NULL, *m = NULL;
            dintattn_error err;
            memset(&lo, 0, sizeof lo);
            fixture_path(path, sizeof path, names[f], ".safetensors");
            lo.qk_form = DINTATTN_QK_FACTORED; /* every matrix comes from the file */
            if (dintattn_model_load(path, &lo, &file, &err)) fail_msg("%s: %s", names[f], err.message);
            lo.weights = kinds[k], lo.n_threads = 3;
            if (dintattn_model_load(path, &lo, &m, &err)) fail_msg("%s: %s", names[f], err.message);
            for (l = -1; l < dintattn_model_config(m)->n_layers; l++)
                for (t = 0; t < DINTATTN__N_TSPECS; t++) {
                    const dintattn__tspec *ts = &dintattn__tensors[t];
                    const dintattn__mat *a, *b;
                    size_t n, i;
                    float *v, *sc;
                    unsigned char *q;
                    if (ts->per_layer != (l >= 0) || ts->held_as != DINTATTN__AS_MATRIX || !dintattn__tspec_present(&m->cfg, ts))
                        continue;
                    a = (const dintattn__mat *)dintattn__tspec_field(file, ts, l < 0 ? 0 : l);
                    b = (const dintattn__mat *)dintattn__tspec_field(m, ts, l < 0 ? 0 : l);
                    if (b->w == a->w) continue; /* read in place: nothing converted */
                    n = (size_t)a->rows * (size_t)a->cols;
                    v = (float *)malloc(n * sizeof(float)), q = (unsigned char *)malloc(n * 4), sc = (float *)malloc(n * sizeof(float));
                    assert_true(v && q && sc);
                    for (i = 0; i < n; i++) v[i] = dintattn__w_elem(a, i);
                    if (b->type == DINTATTN__W_F32) {
                        assert_memory_equal(b->w, v, n * sizeof(float));
                    } else if (b->type == DINTATTN__W_BF16) {
                        for (i = 0; i < n; i++)
                            if (((const uint16_t *)b->w)[i] != dintattn__f32_to_bf16(v[i]))
                                fail_msg("%s as bf16: element %zu of %zu", names[f], i, n);
                        odd += n % 32 != 0;
                    } else {
                        const int bits = b->type == DINTATTN__W_Q8 ? 8 : 4;
                        assert_int_equal(b->type, kinds[k] == DINTATTN_WEIGHTS_Q8 ? DINTATTN__W_Q8 : DINTATTN__W_Q4);
                        dintattn__quantize_w(v, n, bits, q, sc);
                        assert_memory_equal(b->w, q, n * bits / 8);
                        assert_memory_equal(b->scale, sc, n / 32 * sizeof(float));
                    }
                    checked++;
                    free(v), free(q), free(sc);
                }
            dintattn_model_free(m);
            dintattn_model_free(file);
        }
    assert_true(checked > 100 && odd > 0);
}

static void test_tokenizer_shared_by_four_threads(void **state)
{
    static const char *texts[N_WORKERS] = {
        "In the beginning God created the heaven and the earth.",
        "And the earth was without form, and void; <|endoftext|> and darkness",
        "\xff\xfe invalid \xc3\x28 UTF-8 \xe2\x82 and 12345 numbers   spaces\n\n",
        "Let there be light: and there was light."};
    dintattn_model *m = load_fixture("tok_model", DINTATTN_QK_AUTO);
    dintattn_tokenizer *t = NULL;
    dintattn_error err;
    enc_job serial[N_WORKERS], par[N_WORKERS];
    pthread_t tid[N_WORKERS];
    int w;
    (void)state;
    if (dintattn_tokenizer_from_model(m, &t, &err) != DINTATTN_OK) fail_msg("%s", err.message);
    for (w = 0; w < N_WORKERS; w++) {
        memset(&serial[w], 0, sizeof serial[w]);
        serial[w].tok = t;
        serial[w].text = texts[w];
        assert_int_equal(dintattn_tokenizer_encode(t, texts[w], strlen(texts[w]), 1, serial[w].ids, 256, &serial[w].n, &err), DINTATTN_OK);
        assert_true(serial[w].n > 0 && serial[w].n <= 256);
        par[w] = serial[w];
        memset(par[w].ids, 0, sizeof par[w].ids);
    }
    for (w = 0; w < N_WORKERS; w++) assert_int_equal(pthread_create(&tid[w], NULL, encode_worker, &par[w]), 0);
    for (w = 0; w < N_WORKERS; w++) assert_int_equal(pthread_join(tid[w], NULL), 0);
    for (w = 0; w < N_WORKERS; w++) {
        assert_int_equal(par[w].n, serial[w].n);
        assert_memory_equal(par[w].ids, serial[w].ids, sizeof(int) * (size_t)serial[w].n);
    }
    dintattn_tokenizer_free(t);
    dintattn_model_free(m);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_dint_shared_by_four_threads),
        cmocka_unit_test(test_diff_shared_by_four_threads),
        cmocka_unit_test(test_shared_diff_factored_and_merged),
        cmocka_unit_test(test_standard_shared_by_four_threads),
        cmocka_unit_test(test_shipped_model_shared_by_four_threads),
        cmocka_unit_test(test_tokenizer_shared_by_four_threads),
        cmocka_unit_test(test_weights_converted_on_threads),
        cmocka_unit_test(test_converted_weights_are_the_portable_conversion),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
