/* Hardening: NaN and infinity in weights (refused at load with check_finite; harmless at run
   time without it), and the fuzzers' corpora replayed (fuzz/corpus/<harness>/: the seeds and
   every input that once crashed a harness, kept as a regression test). Expected outcomes come
   from the API's contract: an error code naming the tensor, or a run that ends with tokens in
   range; the harnesses abort on any broken contract. */
#define _POSIX_C_SOURCE 200809L
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>
#include <dirent.h>
#include <float.h>

#define DINTATTN_SOLO_BYTES 0 /* every decode job through the thread pool, however small */
#define DINTATTN__FINITE_CHUNK 101 /* check_finite's chunks: several per tensor, each with a partial last word */
#define DINTATTN_IMPLEMENTATION
#include "../dintattn.h"
#include "test_util.h"

/* The four libFuzzer harnesses, their entry points renamed so that one program holds them all. */
#define LLVMFuzzerTestOneInput fuzz_header_one
#include "../fuzz/fuzz_header.c"
#undef LLVMFuzzerTestOneInput
#define LLVMFuzzerTestOneInput fuzz_model_one
#include "../fuzz/fuzz_model.c"
#undef LLVMFuzzerTestOneInput
#define LLVMFuzzerTestOneInput fuzz_tokenizer_one
#include "../fuzz/fuzz_tokenizer.c"
#undef LLVMFuzzerTestOneInput
#define LLVMFuzzerTestOneInput fuzz_sampler_one
#include "../fuzz/fuzz_sampler.c"
#undef LLVMFuzzerTestOneInput
#define LLVMFuzzerTestOneInput fuzz_http_one
#include "../fuzz/fuzz_http.c"
#undef LLVMFuzzerTestOneInput

/* --- weights edited in memory ------------------------------------------------------------ */

typedef struct model_file {
    unsigned char *bytes;
    size_t size;
} model_file;

static model_file read_model(const char *name)
{
    char path[256];
    model_file f;
    fixture_path(path, sizeof path, name, ".safetensors");
    f.bytes = (unsigned char *)read_file(path, &f.size);
    if (!f.bytes) fail_msg("cannot read %s", path);
    return f;
}

/* Where tensor `name`'s data lies in the file; *esize gets its element size (4 or 2), *bf16
   whether it is BF16 (else F16 when *esize is 2). */
static unsigned char *tensor_at(model_file *f, const char *name, size_t *n_elems, int *esize, int *bf16)
{
    char key[128], *hdr, *at, *dt, *off;
    size_t hlen = 0;
    long long a, b;
    int i;
    for (i = 7; i >= 0; i--) hlen = hlen << 8 | f->bytes[i];
    hdr = (char *)malloc(hlen + 1);
    assert_non_null(hdr);
    memcpy(hdr, f->bytes + 8, hlen);
    hdr[hlen] = 0;
    snprintf(key, sizeof key, "\"%s\"", name);
    at = strstr(hdr, key);
    if (!at) fail_msg("no tensor %s", name);
    dt = strstr(at, "\"dtype\":\"");
    off = strstr(at, "\"data_offsets\":[");
    assert_non_null(dt);
    assert_non_null(off);
    assert_int_equal(sscanf(off + 16, "%lld,%lld", &a, &b), 2);
    *esize = dt[9] == 'F' && dt[10] == '3' ? 4 : 2;
    *bf16 = dt[9] == 'B';
    *n_elems = (size_t)(b - a) / (size_t)*esize;
    free(hdr);
    return f->bytes + 8 + hlen + a;
}

/* Stores v (NaN or +-inf, or any float) as element i of the tensor, in the tensor's dtype. */
static void poke(model_file *f, const char *name, size_t i, float v)
{
    size_t n;
    int esize, bf16;
    unsigned char *p = tensor_at(f, name, &n, &esize, &bf16);
    uint32_t bits;
    uint16_t h;
    assert_true(i < n);
    memcpy(&bits, &v, 4);
    if (esize == 4) {
        p[4 * i] = (unsigned char)bits;
        p[4 * i + 1] = (unsigned char)(bits >> 8);
        p[4 * i + 2] = (unsigned char)(bits >> 16);
        p[4 * i + 3] = (unsigned char)(bits >> 24);
        return;
    }
    if (bf16) h = (uint16_t)(bits >> 16);
    else if (v != v) h = 0x7E00;
    else if (v == INFINITY) h = 0x7C00;
    else if (v == -INFINITY) h = 0xFC00;
    else h = 0x3C00; /* finite values other than 1 are not needed here */
    p[2 * i] = (unsigned char)h;
    p[2 * i + 1] = (unsigned char)(h >> 8);
}

static dintattn_weights load_weights = DINTATTN_WEIGHTS_FILE; /* the precision load_mem asks for */

static dintattn_result load_mem(const model_file *f, int check, dintattn_model **m, dintattn_error *err)
{
    dintattn_load_options o;
    memset(&o, 0, sizeof o);
    o.check_finite = check;
    o.weights = load_weights;
    return dintattn_model_load_memory(f->bytes, f->size, &o, m, err);
}

/* The tensors a bad value is put in: embeddings, norms, Q/K (double), V/O, FFN, lambda, output. */
static const char *const dint_tensors[] = {
    "tok_embeddings.weight", "norm.weight", "layers.0.attn_norm.weight", "layers.0.attn.q_base",
    "layers.1.attn.k2_up", "layers.0.attn.wv", "layers.1.attn.wo", "layers.0.attn.lambda_q1",
    "layers.1.attn.lambda_k2", "layers.0.attn.head_norm.weight", "layers.0.ffn.w_gate",
    "layers.1.ffn.w_down", "layers.1.ffn_norm.weight", NULL};

static void test_check_finite_refuses_nan_and_inf(void **state)
{
    const float bad[3] = {NAN, INFINITY, -INFINITY};
    int t, k;
    (void)state;
    for (t = 0; dint_tensors[t]; t++)
        for (k = 0; k < 3; k++) {
            model_file f = read_model("dint_shared_grouped_gqa_bf16");
            dintattn_model *m = NULL;
            dintattn_error err;
            poke(&f, dint_tensors[t], 1, bad[k]);
            assert_int_equal(load_mem(&f, 1, &m, &err), DINTATTN_ERR_NONFINITE);
            assert_null(m);
            assert_int_equal(err.code, DINTATTN_ERR_NONFINITE);
            if (!strstr(err.message, dint_tensors[t])) fail_msg("message '%s' does not name %s", err.message, dint_tensors[t]);
            assert_string_equal(dintattn_result_name(DINTATTN_ERR_NONFINITE), "non-finite weight");
            free(f.bytes);
        }
}

static void test_check_finite_f32_and_f16(void **state)
{
    static const char *const files[] = {"diff_interleaved_f32", "dint_mean_f16", "standard_tied_norope_hd5_f16"};
    int k;
    (void)state;
    for (k = 0; k < 3; k++) {
        model_file f = read_model(files[k]);
        dintattn_model *m = NULL;
        dintattn_error err;
        poke(&f, "tok_embeddings.weight", 7, k == 1 ? INFINITY : NAN);
        assert_int_equal(load_mem(&f, 1, &m, &err), DINTATTN_ERR_NONFINITE);
        assert_non_null(strstr(err.message, "tok_embeddings.weight"));
        free(f.bytes);
    }
}

/* check_finite tests 8 bytes at a time in chunks (DINTATTN__FINITE_CHUNK, 101 here): a NaN or
   infinity anywhere (first and last element, either side of a chunk's edge, inside a partial last
   word) is refused, named by its index; the largest finite values, -0, and subnormals are not. */
static void test_check_finite_every_position(void **state)
{
    static const char *const files[] = {"dint_shared_grouped_gqa_bf16", "diff_interleaved_f32", "dint_mean_f16"};
    const float bad[3] = {NAN, INFINITY, -INFINITY}, good[5] = {FLT_MAX, -FLT_MAX, -0.0f, 1e-40f, -1e-45f};
    int k, j, b;
    (void)state;
    for (k = 0; k < 3; k++) {
        model_file f = read_model(files[k]);
        size_t n, at[9];
        int esize, bf16;
        (void)tensor_at(&f, "tok_embeddings.weight", &n, &esize, &bf16);
        assert_true(n > 303);
        at[0] = 0, at[1] = 1, at[2] = 100, at[3] = 101, at[4] = 102, at[5] = 303, at[6] = n / 2, at[7] = n - 2, at[8] = n - 1;
        for (j = 0; j < 9; j++) {
            for (b = 0; b < 3; b++) {
                model_file g;
                dintattn_model *m = NULL;
                dintattn_error err;
                char want[64];
                g.size = f.size;
                g.bytes = (unsigned char *)malloc(f.size);
                assert_non_null(g.bytes);
                memcpy(g.bytes, f.bytes, f.size);
                poke(&g, "tok_embeddings.weight", at[j], bad[b]);
                assert_int_equal(load_mem(&g, 1, &m, &err), DINTATTN_ERR_NONFINITE);
                snprintf(want, sizeof want, "element %lu is", (unsigned long)at[j]);
                if (!strstr(err.message, want)) fail_msg("%s, element %lu: message '%s'", files[k], (unsigned long)at[j], err.message);
                free(g.bytes);
            }
            for (b = 0; b < 5; b++) { /* (F16 files get 1 for each: poke writes no other finite value there) */
                dintattn_model *m = NULL;
                dintattn_error err;
                poke(&f, "tok_embeddings.weight", at[j], good[b]);
                if (load_mem(&f, 1, &m, &err) != DINTATTN_OK)
                    fail_msg("%s, element %lu = %g: %s", files[k], (unsigned long)at[j], (double)good[b], err.message);
                dintattn_model_free(m);
            }
        }
        free(f.bytes);
    }
}

/* Every fixture is finite: check_finite changes nothing for them, logits included. */
static void test_check_finite_accepts_every_fixture(void **state)
{
    fixture fx[MAX_FIXTURES];
    int n = read_fixtures(fx, 0), i;
    (void)state;
    assert_true(n > 0);
    for (i = 0; i < n; i++) {
        model_file f = read_model(fx[i].name);
        dintattn_model *a = NULL, *b = NULL;
        dintattn_session *sa = NULL, *sb = NULL;
        dintattn_error err;
        size_t V;
        float *la, *lb;
        if (load_mem(&f, 1, &a, &err) != DINTATTN_OK) fail_msg("%s: %s", fx[i].name, err.message);
        assert_int_equal(load_mem(&f, 0, &b, &err), DINTATTN_OK);
        V = (size_t)dintattn_model_config(a)->vocab_size;
        la = (float *)malloc(sizeof(float) * V);
        lb = (float *)malloc(sizeof(float) * V);
        assert_int_equal(dintattn_session_new(a, NULL, &sa, &err), DINTATTN_OK);
        assert_int_equal(dintattn_session_new(b, NULL, &sb, &err), DINTATTN_OK);
        assert_int_equal(dintattn_prefill(sa, fx[i].ids, fx[i].n, la, 0, &err), DINTATTN_OK);
        assert_int_equal(dintattn_prefill(sb, fx[i].ids, fx[i].n, lb, 0, &err), DINTATTN_OK);
        assert_memory_equal(la, lb, sizeof(float) * V);
        free(la);
        free(lb);
        dintattn_session_free(sa);
        dintattn_session_free(sb);
        dintattn_model_free(a);
        dintattn_model_free(b);
        free(f.bytes);
    }
}

/* Finite weights whose lambda = exp(q1 . k1) - exp(q2 . k2) + lambda_init overflows. */
static void test_check_finite_refuses_infinite_lambda(void **state)
{
    model_file f = read_model("diff_interleaved_f32");
    dintattn_model *m = NULL;
    dintattn_error err;
    size_t k;
    (void)state;
    for (k = 0; k < 8; k++) { /* head_dim 8: q1 . k1 = 8e6, exp overflows */
        poke(&f, "layers.1.attn.lambda_q1", k, 1000.0f);
        poke(&f, "layers.1.attn.lambda_k1", k, 1000.0f);
    }
    assert_int_equal(load_mem(&f, 1, &m, &err), DINTATTN_ERR_NONFINITE);
    assert_non_null(strstr(err.message, "layer 1"));
    /* without the check it loads, and runs (see below) */
    assert_int_equal(load_mem(&f, 0, &m, &err), DINTATTN_OK);
    dintattn_model_free(m);
    free(f.bytes);
}

/* Without check_finite, NaN/inf weights load, and prefill, decode and sampling end normally:
   no crash, no endless loop, every sampled token in range, the context limit still enforced. */
static void run_poisoned(const model_file *f, const char *what)
{
    dintattn_model *m = NULL;
    dintattn_session *s = NULL;
    dintattn_sampler *greedy = NULL, *smp = NULL;
    dintattn_sampler_options so;
    dintattn_session_options sess;
    dintattn_error err;
    int V, ids[5] = {1, 2, 3, 1, 0}, step, tok;
    float *logits;
    if (load_mem(f, 0, &m, &err) != DINTATTN_OK) fail_msg("%s: %s", what, err.message);
    V = dintattn_model_config(m)->vocab_size;
    memset(&sess, 0, sizeof sess);
    sess.n_ctx = 12;
    sess.n_threads = 2;
    assert_int_equal(dintattn_session_new(m, &sess, &s, &err), DINTATTN_OK);
    memset(&so, 0, sizeof so);
    assert_int_equal(dintattn_sampler_new(V, &so, &greedy, &err), DINTATTN_OK);
    so.temperature = 0.9f;
    so.top_k = 10;
    so.top_p = 0.9f;
    so.min_p = 0.05f;
    so.repeat_penalty = 1.3f;
    so.seed = 5;
    assert_int_equal(dintattn_sampler_new(V, &so, &smp, &err), DINTATTN_OK);
    logits = (float *)malloc(sizeof(float) * (size_t)V);
    assert_non_null(logits);
    assert_int_equal(dintattn_prefill(s, ids, 5, logits, 0, &err), DINTATTN_OK);
    for (step = 0; step < 7; step++) {
        tok = dintattn_sampler_sample(step % 2 ? smp : greedy, logits);
        if (tok < 0 || tok >= V) fail_msg("%s: sampled %d", what, tok);
        dintattn_sampler_accept(smp, tok);
        assert_int_equal(dintattn_decode(s, tok, logits, &err), DINTATTN_OK);
    }
    assert_int_equal(dintattn_session_pos(s), 12);
    assert_int_equal(dintattn_decode(s, 0, logits, &err), DINTATTN_ERR_CONTEXT);
    free(logits);
    dintattn_sampler_free(greedy);
    dintattn_sampler_free(smp);
    dintattn_session_free(s);
    dintattn_model_free(m);
}

static void test_nan_weights_run_without_check(void **state)
{
    const float bad[3] = {NAN, INFINITY, -INFINITY};
    int t, k;
    (void)state;
    for (t = 0; dint_tensors[t]; t++)
        for (k = 0; k < 3; k++) {
            model_file f = read_model("dint_shared_grouped_gqa_bf16");
            size_t n, i;
            int esize, bf16;
            poke(&f, dint_tensors[t], 0, bad[k]);
            if (t % 3 == 0) { /* a whole tensor of NaN too */
                tensor_at(&f, dint_tensors[t], &n, &esize, &bf16);
                for (i = 0; i < n; i++) poke(&f, dint_tensors[t], i, bad[k]);
            }
            run_poisoned(&f, dint_tensors[t]);
            free(f.bytes);
        }
    {
        model_file f = read_model("dint_softmax_f32"); /* the softmax integral, F32 views */
        poke(&f, "layers.0.attn.lambda_q1", 0, NAN);
        poke(&f, "tok_embeddings.weight", 30, INFINITY);
        run_poisoned(&f, "dint_softmax_f32");
        free(f.bytes);
    }
    {
        model_file f = read_model("diff_interleaved_f32"); /* an infinite lambda from finite weights */
        size_t k;
        for (k = 0; k < 8; k++) {
            poke(&f, "layers.0.attn.lambda_q1", k, 1000.0f);
            poke(&f, "layers.0.attn.lambda_k1", k, 1000.0f);
        }
        run_poisoned(&f, "diff_interleaved_f32 infinite lambda");
        free(f.bytes);
    }
}

/* The same with weights converted at load: a Q8 block holding NaN or infinity gets a NaN scale,
   BF16 keeps NaN and infinity; neither may crash, hang or sample out of range. */
static void test_nan_weights_run_converted(void **state)
{
    static const char *const mats[] = {"layers.0.attn.wq1", "layers.1.attn.wk2", "layers.0.attn.wv",
                                       "layers.1.ffn.w_down", "output.weight", "tok_embeddings.weight", NULL};
    const dintattn_weights kinds[2] = {DINTATTN_WEIGHTS_Q8, DINTATTN_WEIGHTS_BF16};
    int t, k;
    (void)state;
    for (k = 0; k < 2; k++)
        for (t = 0; mats[t]; t++) {
            model_file f = read_model("conv_dint_grouped_gqa_f32");
            poke(&f, mats[t], 3, t % 2 ? INFINITY : NAN);
            load_weights = kinds[k];
            run_poisoned(&f, mats[t]);
            load_weights = DINTATTN_WEIGHTS_FILE;
            free(f.bytes);
        }
}

/* Q8 of a block whose largest weight is subnormal (127 / max overflows): zeros, not NaN cast to
   int8 (found by fuzz_model; fuzz/corpus/model/regress_q8_tiny_block_nan). */
static void test_q8_of_subnormal_block(void **state)
{
    model_file f = read_model("conv_dint_grouped_gqa_f32");
    int i;
    (void)state;
    for (i = 0; i < 64; i++) poke(&f, "layers.0.attn.wv", (size_t)i, i % 3 ? 1e-40f : 0.0f);
    load_weights = DINTATTN_WEIGHTS_Q8;
    run_poisoned(&f, "Q8 of subnormal weights");
    load_weights = DINTATTN_WEIGHTS_FILE;
    free(f.bytes);
}

/* A Q8 file's scales are weights too: check_finite refuses a NaN scale; without it the model
   runs to the end. */
static void test_q8_file_nan_scale(void **state)
{
    model_file f = read_model("conv_dint_grouped_gqa_q8file");
    dintattn_model *m = NULL;
    dintattn_error err;
    (void)state;
    poke(&f, "layers.1.ffn.w_up.scale", 2, NAN);
    assert_int_equal(load_mem(&f, 1, &m, &err), DINTATTN_ERR_NONFINITE);
    assert_null(m);
    assert_non_null(strstr(err.message, "layers.1.ffn.w_up.scale"));
    run_poisoned(&f, "Q8 file with a NaN scale");
    free(f.bytes);
}

/* --- the fuzzers' corpora, replayed -------------------------------------------------------- */

static int replay_dir(const char *dir, int (*one)(const uint8_t *, size_t))
{
    DIR *d = opendir(dir);
    struct dirent *e;
    int n = 0;
    if (!d) fail_msg("cannot open %s", dir);
    while ((e = readdir(d)) != NULL) {
        char path[512];
        size_t size;
        void *buf;
        if (e->d_name[0] == '.') continue;
        snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
        buf = read_file(path, &size);
        if (!buf) continue; /* a directory */
        print_message("replay %s\n", path);
        one((const uint8_t *)buf, size); /* aborts (a test failure) on a broken contract */
        free(buf);
        n++;
    }
    closedir(d);
    return n;
}

static void test_replay_header_corpus(void **state)
{
    (void)state;
    assert_true(replay_dir("fuzz/corpus/header", fuzz_header_one) > 0);
}

static void test_replay_model_corpus(void **state)
{
    fixture fx[MAX_FIXTURES];
    int n = read_fixtures(fx, 0), i;
    (void)state;
    replay_dir("fuzz/corpus/model", fuzz_model_one);
    for (i = 0; i < n; i++) { /* the harness's seeds: every fixture */
        model_file f = read_model(fx[i].name);
        fuzz_model_one(f.bytes, f.size);
        free(f.bytes);
    }
}

static void test_replay_tokenizer_corpus(void **state)
{
    (void)state;
    assert_true(replay_dir("fuzz/corpus/tokenizer", fuzz_tokenizer_one) > 0);
    dintattn_tokenizer_free(toy);
    toy = NULL;
}

static void test_replay_sampler_corpus(void **state)
{
    (void)state;
    assert_true(replay_dir("fuzz/corpus/sampler", fuzz_sampler_one) > 0);
}

static void test_replay_http_corpus(void **state)
{
    (void)state;
    assert_true(replay_dir("fuzz/corpus/http", fuzz_http_one) > 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_check_finite_refuses_nan_and_inf),
        cmocka_unit_test(test_check_finite_f32_and_f16),
        cmocka_unit_test(test_check_finite_every_position),
        cmocka_unit_test(test_check_finite_accepts_every_fixture),
        cmocka_unit_test(test_check_finite_refuses_infinite_lambda),
        cmocka_unit_test(test_nan_weights_run_without_check),
        cmocka_unit_test(test_nan_weights_run_converted),
        cmocka_unit_test(test_q8_file_nan_scale),
        cmocka_unit_test(test_q8_of_subnormal_block),
        cmocka_unit_test(test_replay_header_corpus),
        cmocka_unit_test(test_replay_model_corpus),
        cmocka_unit_test(test_replay_tokenizer_corpus),
        cmocka_unit_test(test_replay_sampler_corpus),
        cmocka_unit_test(test_replay_http_corpus),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
