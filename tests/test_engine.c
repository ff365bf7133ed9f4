/* Engine tests: logits against the float64 numpy reference, and the invariants of docs/format.md.
   Expected numbers come from tests/fixtures (tools/make_fixtures.py + tools/reference.py) or
   from the engine itself run another way (decode vs prefill vs chunks, threads, appended
   tokens), never from constants typed into this file. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#define DINTATTN_SOLO_BYTES 0 /* every decode job through the thread pool, however small */
#define DINTATTN__KV_PTILE 200 /* prefill reads a rounded KV cache in several tiles on short prompts */
#define DINTATTN_IMPLEMENTATION
#include "../dintattn.h"
#include "test_util.h"

/* float32 engine (Q/K in double) vs float64 reference on these small models: observed ~1.1e-6 */
#define TOL_REFERENCE 5e-6
/* a rounded KV cache against the reference rounding the same way: a value the engine holds in
   f32 and the reference in float64 can fall on two sides of a bf16 / int8 step (observed 1.3e-5;
   the rounding itself moves the logits by more than 1e-3) */
#define TOL_KV 1e-4
/* the engine against itself, run another way */
#define TOL_SELF 1e-5

static fixture fx[MAX_FIXTURES], pairs[MAX_FIXTURES], conv[MAX_FIXTURES];
static int n_fx, n_pairs, n_conv;


static dintattn_session *session(const dintattn_model *m, int n_batch, int n_threads)
{
    return test_session(m, 0, n_batch, n_threads);
}

/* Logits of all n ids fed in pieces of `chunk` tokens (chunk 1 = decode, n = one prefill), at
   `precision`, with the KV cache in `kv`. */
static float *run_kv(const dintattn_model *m, const int *ids, int n, int chunk, int n_batch, int n_threads,
                     dintattn_precision precision, dintattn_kv_type kv)
{
    size_t V = (size_t)dintattn_model_config(m)->vocab_size;
    float *out = (float *)malloc(sizeof(float) * V * (size_t)n);
    dintattn_session *s = test_session_kv(m, 0, n_batch, n_threads, precision, kv);
    dintattn_error err;
    int i;
    assert_non_null(out);
    for (i = 0; i < n; i += chunk) {
        int k = n - i < chunk ? n - i : chunk;
        dintattn_result r = k == 1 ? dintattn_decode(s, ids[i], out + (size_t)i * V, &err)
                                   : dintattn_prefill(s, ids + i, k, out + (size_t)i * V, 1, &err);
        if (r != DINTATTN_OK) fail_msg("forward: %s", err.message);
    }
    assert_int_equal(dintattn_session_pos(s), n);
    dintattn_session_free(s);
    return out;
}

static float *run_p(const dintattn_model *m, const int *ids, int n, int chunk, int n_batch, int n_threads,
                    dintattn_precision precision)
{
    return run_kv(m, ids, n, chunk, n_batch, n_threads, precision, DINTATTN_KV_F32);
}

static float *run(const dintattn_model *m, const int *ids, int n, int chunk, int n_batch, int n_threads)
{
    return run_p(m, ids, n, chunk, n_batch, n_threads, DINTATTN_PRECISION_AUTO);
}

/* Logits of one prefill of all n ids with attention on the session's pool of n_threads, as it
   runs where no product calls sgemm (dintattn__attention), forced for f32 weights */
static float *run_pool_attention(const dintattn_model *m, const int *ids, int n, int n_threads)
{
    float *out = (float *)malloc(sizeof(float) * (size_t)dintattn_model_config(m)->vocab_size * (size_t)n);
    dintattn_session *s = test_session_kv(m, 0, 0, n_threads, DINTATTN_PRECISION_AUTO, DINTATTN_KV_F32);
    dintattn_error err;
    assert_non_null(out);
    s->attn_pool = 1;
    if (dintattn_prefill(s, ids, n, out, 1, &err) != DINTATTN_OK) fail_msg("forward: %s", err.message);
    dintattn_session_free(s);
    return out;
}

static void expect_close(const char *what, const char *name, const float *got, const float *want, size_t n,
                         double tol)
{
    double e = rel_error(got, want, n);
    if (!(e <= tol)) fail_msg("%s %s: relative error %.3g > %.3g", name, what, e, tol);
}

/* Every fixture, fed three ways (docs/format.md section 1: prefill, decode and chunks must give the same logits),
   against the reference. Also with a tiny internal batch so prefill splits into steps. */
static void check_fixture_modes(dintattn_qk_form form, int only_low_rank)
{
    int f, checked = 0;
    for (f = 0; f < n_fx; f++) {
        char path[256];
        size_t size;
        float *ref, *got;
        dintattn_model *m;
        int chunks[] = {0, 1, 3, 7}, c;
        m = load_fixture(fx[f].name, form);
        if (only_low_rank && dintattn_model_config(m)->qk_rank == 0) {
            dintattn_model_free(m);
            continue;
        }
        fixture_path(path, sizeof path, fx[f].name, ".logits");
        ref = (float *)read_file(path, &size);
        assert_non_null(ref);
        assert_int_equal(size, sizeof(float) * (size_t)fx[f].n * (size_t)dintattn_model_config(m)->vocab_size);
        for (c = 0; c < 4; c++) {
            int chunk = chunks[c] ? chunks[c] : fx[f].n;
            got = run(m, fx[f].ids, fx[f].n, chunk, 0, 1);
            expect_close(c == 0 ? "prefill" : c == 1 ? "decode" : "chunked", fx[f].name, got, ref,
                         size / sizeof(float), TOL_REFERENCE);
            free(got);
        }
        got = run(m, fx[f].ids, fx[f].n, fx[f].n, 4, 1);
        expect_close("prefill with n_batch 4", fx[f].name, got, ref, size / sizeof(float), TOL_REFERENCE);
        free(got);
        got = run_pool_attention(m, fx[f].ids, fx[f].n, 2);
        expect_close("prefill, attention on 2 threads' pool", fx[f].name, got, ref, size / sizeof(float), TOL_REFERENCE);
        free(got);
        free(ref);
        dintattn_model_free(m);
        checked++;
    }
    assert_true(checked >= (only_low_rank ? 2 : 20));
}

static void test_every_family_matches_reference_in_all_modes(void **state)
{
    (void)state;
    check_fixture_modes(DINTATTN_QK_AUTO, 0);
}

/* Shared-DIFF runs factored or merged (docs/format.md section 1: both must be right); force each. */
static void test_shared_diff_factored_matches_reference(void **state)
{
    (void)state;
    check_fixture_modes(DINTATTN_QK_FACTORED, 1);
}

static void test_shared_diff_merged_matches_reference(void **state)
{
    (void)state;
    check_fixture_modes(DINTATTN_QK_MERGED, 1);
}

/* AUTO picks the factored form for a small rank and the dense form when r = d. */
static void test_shared_diff_auto_picks_cheaper_form(void **state)
{
    dintattn_model *a = load_fixture("shared_diff_r2_f32", DINTATTN_QK_AUTO);
    dintattn_model *b = load_fixture("shared_diff_r8_eq_d_f16", DINTATTN_QK_AUTO);
    (void)state;
    assert_int_equal(dintattn_model_config(a)->qk_rank, 2);
    assert_true(dintattn_model_qk_factored(a));
    assert_int_equal(dintattn_model_config(b)->qk_rank, dintattn_model_config(b)->head_dim);
    assert_false(dintattn_model_qk_factored(b));
    dintattn_model_free(a);
    dintattn_model_free(b);
}

/* dintattn_model_tensors says what is held: Shared-DIFF's up factors are f32 matrices multiplied
   head by head (heads = rows / head_dim, the projection's head count), read by a decoded token only
   in factored form; an F32 file's are read in place (nothing owned), and merged matrices are listed
   as not in the file. */
static void test_tensor_list_says_what_is_held(void **state)
{
    const dintattn_qk_form forms[] = {DINTATTN_QK_FACTORED, DINTATTN_QK_MERGED};
    int f;
    (void)state;
    for (f = 0; f < 2; f++) {
        dintattn_model *m = load_fixture("shared_diff_r2_f32", forms[f]);
        const dintattn_config *c = dintattn_model_config(m);
        const long long n = dintattn_model_tensors(m, NULL, 0);
        dintattn_tensor_info *t = (dintattn_tensor_info *)calloc((size_t)n, sizeof *t);
        long long i, ups = 0, merged = 0;
        size_t read = 0;
        assert_non_null(t);
        assert_int_equal(dintattn_model_tensors(m, t, n), n);
        for (i = 0; i < n; i++) {
            const char *up = strstr(t[i].name, "_up");
            read += t[i].read_bytes;
            if (!t[i].in_file) {
                merged++;
                assert_int_equal(t[i].heads, 1);
                assert_int_equal(t[i].read_bytes, t[i].bytes);
            }
            if (!up || !strstr(t[i].name, "attn.")) {
                assert_int_equal(t[i].heads, 1);
                continue;
            }
            ups++;
            assert_string_equal(t[i].type, "f32");
            assert_true(t[i].matrix);
            assert_int_equal(t[i].cols, c->qk_rank);
            assert_int_equal(t[i].heads * c->head_dim, t[i].rows);
            assert_int_equal(t[i].heads, strstr(t[i].name, "q1_up") ? c->n_heads : strstr(t[i].name, "k1_up") ? c->n_k1_heads
                                         : strstr(t[i].name, "q2_up") ? c->n_q2_heads : c->n_k2_heads);
            assert_int_equal(t[i].bytes, (size_t)(t[i].rows * t[i].cols) * sizeof(float));
            assert_int_equal(t[i].read_bytes, f == 0 ? t[i].bytes : 0);
        }
        assert_int_equal(ups, (long long)c->n_layers * (c->shared_k ? 3 : 4));
        assert_int_equal(merged, f == 0 ? 0 : ups);
        assert_int_equal(read, dintattn_model_weight_bytes(m));
        if (f == 0) assert_int_equal(dintattn_model_owned_bytes(m), 0);
        free(t);
        dintattn_model_free(m);
    }
}

/* Grouped-DIFF (G signal heads per noise head), GQA and low-rank models equal the plain models
   whose heads are repeated / factors merged (pairs.txt, written by tools/make_model.py). */
static void test_grouped_and_low_rank_equal_their_expanded_twins(void **state)
{
    int p;
    (void)state;
    assert_true(n_pairs >= 3);
    for (p = 0; p < n_pairs; p++) {
        dintattn_model *a = load_fixture(pairs[p].name, DINTATTN_QK_AUTO), *b = load_fixture(pairs[p].other, DINTATTN_QK_AUTO);
        size_t n = (size_t)pairs[p].n * (size_t)dintattn_model_config(a)->vocab_size;
        float *la = run(a, pairs[p].ids, pairs[p].n, pairs[p].n, 0, 1);
        float *lb = run(b, pairs[p].ids, pairs[p].n, pairs[p].n, 0, 1);
        assert_int_equal(dintattn_model_config(a)->vocab_size, dintattn_model_config(b)->vocab_size);
        expect_close("vs twin", pairs[p].name, la, lb, n, TOL_SELF);
        free(la);
        free(lb);
        dintattn_model_free(a);
        dintattn_model_free(b);
    }
}

/* --- weights converted at load (dintattn_load_options.weights) ----------------------------- */

static dintattn_model *load_weights(const char *name, dintattn_weights w)
{
    return load_fixture_as(name, DINTATTN_QK_AUTO, w);
}

/* NAME + ext (.logits, .q8.logits, .bf16.logits), checked to hold N x vocab floats */
/* The fixture (of manifest.txt or converted.txt) called name. */
static const fixture *find_fixture(const char *name)
{
    int f;
    for (f = 0; f < n_fx; f++)
        if (!strcmp(fx[f].name, name)) return &fx[f];
    for (f = 0; f < n_conv; f++)
        if (!strcmp(conv[f].name, name)) return &conv[f];
    fail_msg("no fixture %s", name);
    return NULL;
}

/* Q8, Q4 and BF16 weights give the reference's logits for the same model with its matrices
   converted the same way (tools/make_fixtures.py writes NAME.q8.logits, .q4.logits and
   .bf16.logits from a converted copy), in one prefill and token by token (one thread and three:
   matrix-vector rows split), with f32 activations (precision EXACT; AUTO is tested below). */
static void test_converted_weights_match_reference(void **state)
{
    static const dintattn_weights how[] = {DINTATTN_WEIGHTS_Q8, DINTATTN_WEIGHTS_Q4, DINTATTN_WEIGHTS_BF16};
    static const char *const ext[] = {".q8.logits", ".q4.logits", ".bf16.logits"};
    const dintattn_precision X = DINTATTN_PRECISION_EXACT;
    int f, k;
    (void)state;
    assert_true(n_conv >= 4);
    for (f = 0; f < n_conv; f++)
        for (k = 0; k < 3; k++) {
            char what[64];
            dintattn_model *m = load_weights(conv[f].name, how[k]);
            float *ref = read_logits(&conv[f], ext[k], m), *got;
            size_t n = (size_t)conv[f].n * (size_t)dintattn_model_config(m)->vocab_size;
            snprintf(what, sizeof what, "%s prefill", ext[k] + 1);
            got = run_p(m, conv[f].ids, conv[f].n, conv[f].n, 0, 1, X);
            expect_close(what, conv[f].name, got, ref, n, TOL_REFERENCE);
            free(got);
            snprintf(what, sizeof what, "%s decode", ext[k] + 1);
            got = run_p(m, conv[f].ids, conv[f].n, 1, 0, 1, X);
            expect_close(what, conv[f].name, got, ref, n, TOL_REFERENCE);
            free(got);
            snprintf(what, sizeof what, "%s decode, 3 threads", ext[k] + 1);
            got = run_p(m, conv[f].ids, conv[f].n, 1, 0, 3, X);
            expect_close(what, conv[f].name, got, ref, n, TOL_REFERENCE);
            free(got);
            free(ref);
            dintattn_model_free(m);
        }
}

/* Q8 (Q4) stored in the file (I8 NAME [U8 NAME, half as wide] + F32 NAME.scale):
   conv_dint_grouped_gqa_q8file (_q4file) holds the Q8 (Q4) of conv_dint_grouped_gqa_f32, so as
   stored (read in place: nothing copied) and as Q8 (Q4) it gives that fixture's .q8.logits
   (.q4.logits) at precision EXACT, and converted to F32 the same within rounding; at precision
   AUTO the file and the conversion at load give identical logits. */
static void check_quantized_file(const char *file, dintattn_weights kind, const char *ext)
{
    const dintattn_weights how[] = {DINTATTN_WEIGHTS_FILE, kind, DINTATTN_WEIGHTS_F32};
    const dintattn_precision X = DINTATTN_PRECISION_EXACT;
    const fixture *f = NULL;
    dintattn_model *at_load = NULL;
    float *auto_at_load;
    int k;
    for (k = 0; k < n_conv; k++)
        if (strcmp(conv[k].name, "conv_dint_grouped_gqa_f32") == 0) f = &conv[k];
    assert_non_null(f);
    at_load = load_weights(f->name, kind);
    auto_at_load = run(at_load, f->ids, f->n, f->n, 0, 1);
    for (k = 0; k < 3; k++) {
        dintattn_model *m = load_weights(file, how[k]);
        float *ref = read_logits(f, ext, m), *got;
        size_t n = (size_t)f->n * (size_t)dintattn_model_config(m)->vocab_size;
        got = run_p(m, f->ids, f->n, f->n, 0, 1, X);
        expect_close("file, prefill", file, got, ref, n, TOL_REFERENCE);
        free(got);
        got = run_p(m, f->ids, f->n, 1, 0, 2, X);
        expect_close("file, decode", file, got, ref, n, TOL_REFERENCE);
        free(got);
        free(ref);
        if (k < 2) {
            assert_int_equal(dintattn_model_owned_bytes(m), 0);
            assert_int_equal(dintattn_model_weight_bytes(m), dintattn_model_weight_bytes(at_load));
            got = run(m, f->ids, f->n, f->n, 0, 1);
            assert_memory_equal(got, auto_at_load, sizeof(float) * n);
            free(got);
        }
        dintattn_model_free(m);
    }
    free(auto_at_load);
    dintattn_model_free(at_load);
}

static void test_q8_stored_in_the_file(void **state)
{
    (void)state;
    check_quantized_file("conv_dint_grouped_gqa_q8file", DINTATTN_WEIGHTS_Q8, ".q8.logits");
}

static void test_q4_stored_in_the_file(void **state)
{
    (void)state;
    check_quantized_file("conv_dint_grouped_gqa_q4file", DINTATTN_WEIGHTS_Q4, ".q4.logits");
}

/* --- int8 activations (precision AUTO with Q8 / Q4 weights) --------------------------------- */

/* dintattn__quantize_x: |q| <= 127, each x within half a step of d q, the block's largest |x|
   exactly 127 steps, c = d sum(q); a block with NaN or infinity gets NaN (and q = 0: fuzz_model
   found the conversion of inf * 0 to int8 under clang's UBSan). */
static void test_activation_quantization(void **state)
{
    float x[96], s[3], c[3];
    signed char q[96];
    int i, b;
    (void)state;
    for (i = 0; i < 96; i++) x[i] = (float)sin(0.37 * i * i + 1.0) * (i < 32 ? 1e-3f : i < 64 ? 30.0f : 1.0f);
    x[70] = INFINITY;
    x[75] = NAN;
    dintattn__quantize_x(x, 96, q, s, c);
    for (b = 0; b < 2; b++) {
        float amax = 0;
        int sum = 0, top = 0;
        for (i = 32 * b; i < 32 * b + 32; i++) amax = fabsf(x[i]) > amax ? fabsf(x[i]) : amax;
        for (i = 32 * b; i < 32 * b + 32; i++) {
            assert_true(q[i] >= -127 && q[i] <= 127);
            assert_true(fabs((double)s[b] * q[i] - x[i]) <= 0.5001 * s[b]);
            top |= q[i] == 127 || q[i] == -127;
            sum += q[i];
        }
        assert_true(top);
        assert_true(fabs(s[b] - amax / 127.0) <= 1e-6 * amax);
        assert_true(c[b] == s[b] * (float)sum);
    }
    assert_true(isnan(s[2]) && isnan(c[2]));
    for (i = 64; i < 96; i++) assert_int_equal(q[i], 0); /* no float -> int of inf * 0 */
}

/* n floats (n >= 320) in blocks of 32 for the quantizers' tests: blocks of every scale, tiny ones
   (block 3) whose 127 / max|x| overflows, signed zeros (4), exact halves of a step (5), odd halves
   (6: ties), and blocks holding NaN (7) or an infinity (8, 9). */
static void fill_quantizer_blocks(float *x, int n)
{
    int i;
    for (i = 0; i < n; i++) x[i] = (float)sin(0.37 * i * i + 1.0) * (float)pow(10.0, (i / 32) % 13 - 6);
    for (i = 32 * 3; i < 32 * 4; i++) x[i] = 1e-39f * (float)(i % 7); /* max|x| < 2^-120 */
    for (i = 32 * 4; i < 32 * 5; i++) x[i] = i % 2 ? 0.0f : -0.0f;
    for (i = 32 * 5; i < 32 * 6; i++) x[i] = (float)(i % 32 - 16) * 0.5f * (32.0f / 127.0f) * (i % 3 ? 1 : -1);
    for (i = 32 * 6; i < 32 * 7; i++) x[i] = (float)((i % 32) * 2 + 1) / 254.0f;
    x[32 * 7 + 3] = NAN, x[32 * 8 + 30] = -INFINITY, x[32 * 9] = INFINITY;
}

/* Every level's quantize_x gives dintattn__quantize_x's bytes and floats on fill_quantizer_blocks. */
static void test_activation_quantization_levels_agree(void **state)
{
    static const dintattn_kernels levels[] = {DINTATTN_KERNELS_PORTABLE, DINTATTN_KERNELS_AVX2, DINTATTN_KERNELS_AVX512};
    enum { NB = 40, N = 32 * NB };
    float x[N], s[2][NB], c[2][NB];
    signed char q[2][N];
    int i, lv;
    (void)state;
    fill_quantizer_blocks(x, N);
    dintattn__quantize_x(x, N, q[0], s[0], c[0]);
    for (lv = 0; lv < 3; lv++) {
        const dintattn__kernels *K = dintattn__kernels_for(levels[lv]);
        memset(q[1], 0x55, sizeof q[1]);
        K->quantize_x(x, N, q[1], s[1], c[1]);
        assert_memory_equal(q[0], q[1], N);
        for (i = 0; i < NB; i++)
            if (!(memcmp(&s[0][i], &s[1][i], sizeof(float)) == 0 && memcmp(&c[0][i], &c[1][i], sizeof(float)) == 0) &&
                !(isnan(s[0][i]) && isnan(s[1][i]) && isnan(c[0][i]) && isnan(c[1][i])))
                fail_msg("level %s, block %d: d %.9g c %.9g, want %.9g %.9g", dintattn_kernels_name(K->level), i,
                         s[1][i], c[1][i], s[0][i], c[0][i]);
    }
}

/* Every level's quantize_w (the load's Q8 / Q4 conversion) gives dintattn__quantize_w's bytes and
   scales: on fill_quantizer_blocks, Q4's ties, largest magnitudes held twice with either sign first
   (Q4's m is the first), in either half of the block, denormals, near FLT_MAX. */
static void test_weight_quantization_levels_agree(void **state)
{
    static const dintattn_kernels levels[] = {DINTATTN_KERNELS_PORTABLE, DINTATTN_KERNELS_AVX2, DINTATTN_KERNELS_AVX512};
    enum { NB = 48, N = 32 * NB };
    float x[N], s[2][NB];
    unsigned char q[2][N];
    int i, lv, bits;
    (void)state;
    fill_quantizer_blocks(x, N);
    for (i = 32 * 10; i < 32 * 11; i++) x[i] = (float)((i % 32) - 16) / 16.0f; /* Q4's ties: m = -1 */
    for (i = 32 * 11; i < 32 * 15; i++) x[i] = 0.1f * (float)sin(i);
    x[32 * 11 + 2] = -5.0f, x[32 * 11 + 20] = 5.0f;  /* the same magnitude twice, the negative first */
    x[32 * 12 + 4] = 5.0f, x[32 * 12 + 9] = -5.0f;
    x[32 * 13 + 31] = 7.0f, x[32 * 14 + 16] = -7.0f; /* the largest in the second half */
    for (i = 32 * 15; i < 32 * 16; i++) x[i] = 1e-44f * (float)(i % 5 - 2); /* denormals */
    for (i = 32 * 16; i < 32 * 17; i++) x[i] = 3.0e38f * (float)sin(i);
    x[32 * 17 + 5] = -0.0f;
    for (i = 32 * 18; i < 32 * 19; i++) x[i] = i % 3 ? 0.0f : -0.0f, x[32 * 18 + 7] = 1e-30f;
    for (bits = 8; bits >= 4; bits -= 4) {
        dintattn__quantize_w(x, N, bits, q[0], s[0]);
        for (lv = 0; lv < 3; lv++) {
            const dintattn__kernels *K = dintattn__kernels_for(levels[lv]);
            memset(q[1], 0x55, sizeof q[1]);
            K->quantize_w(x, N, bits, q[1], s[1]);
            assert_memory_equal(q[0], q[1], (size_t)N * bits / 8);
            for (i = 0; i < NB; i++)
                if (memcmp(&s[0][i], &s[1][i], sizeof(float)) != 0 && !(isnan(s[0][i]) && isnan(s[1][i])))
                    fail_msg("Q%d, level %s, block %d: scale %.9g, want %.9g", bits, dintattn_kernels_name(K->level), i,
                             s[1][i], s[0][i]);
        }
    }
    assert_true(s[0][4] == 0.0f && signbit(s[0][4]) && isnan(s[0][7])); /* Q4: m = +0, d = 0 / -8 */
    assert_true(s[0][11] == 5.0f / 8.0f && s[0][12] == -5.0f / 8.0f);
}

/* Every level's int8 kernels against the integer dot products written out here, for Q8 and Q4
   rows of 1 to 19 blocks (odd counts take the vector kernels' one-block tails; the Q4 decode
   kernel's steps of 8 blocks leave every remainder from 0 to 7 after one step, and after two at
   16 to 19); the four-token kernels against the one-token ones. */
static void test_int8_kernels_match_integer_dots(void **state)
{
    static const dintattn_kernels levels[] = {DINTATTN_KERNELS_PORTABLE, DINTATTN_KERNELS_AVX2, DINTATTN_KERNELS_AVX512};
    enum { ROWS = 4, MAXN = 608 };
    float w[ROWS * MAXN], x[MAXN], wsc[ROWS * MAXN / 32], xs[MAXN / 32], ys[2][MAXN / 32], y[MAXN];
    float xc[MAXN / 32], yc[2][MAXN / 32];
    signed char w8[ROWS * MAXN], xq[MAXN], yq[2][MAXN];
    unsigned char w4[ROWS * MAXN / 2];
    int nb, lv, r, i, kind, tiles = 0;
    (void)state;
    for (i = 0; i < ROWS * MAXN; i++) w[i] = (float)cos(0.11 * i * i + 0.3 * i);
    for (i = 0; i < MAXN; i++) x[i] = (float)sin(0.7 * i + 0.01 * i * i) * (1.0f + (float)(i % 5));
    for (nb = 1; nb <= 19; nb++) {
        const int n = 32 * nb;
        dintattn__xq X, Y[2];
        dintattn__quantize_x(x, n, xq, xs, xc);
        X.q = xq, X.s = xs, X.c = xc;
        for (kind = 0; kind < 2; kind++) {
            for (i = 0; i < n; i++) y[i] = x[(i * 7 + kind) % n] * (kind ? -3.0f : 0.01f);
            dintattn__quantize_x(y, n, yq[kind], ys[kind], yc[kind]);
            Y[kind].q = yq[kind], Y[kind].s = ys[kind], Y[kind].c = yc[kind];
        }
        for (kind = 0; kind < 2; kind++) {
            dintattn__mat M;
            memset(&M, 0, sizeof M);
            M.rows = ROWS, M.cols = n, M.scale = wsc;
            M.type = kind ? DINTATTN__W_Q4 : DINTATTN__W_Q8;
            M.w = kind ? (const void *)w4 : (const void *)w8;
            for (i = 0; i < ROWS * nb; i++) {
                if (kind) dintattn__quantize_block4(w + 32 * i, w4 + 16 * i, wsc + i);
                else dintattn__quantize_row(w + 32 * i, 32, w8 + 32 * i, wsc + i);
            }
            for (r = 0; r < ROWS; r++) {
                double want = 0, mag = 0;
                int b, k;
                for (b = 0; b < nb; b++) { /* sum over blocks of w_scale * d * integer dot */
                    long dot = 0;
                    for (k = 0; k < 32; k++) {
                        const size_t e = (size_t)r * n + 32 * b + k;
                        const int wi = kind ? ((w4[e / 32 * 16 + e % 16] >> (e % 32 < 16 ? 0 : 4)) & 15) - 8 : w8[e];
                        dot += (long)wi * xq[32 * b + k];
                    }
                    want += (double)wsc[r * nb + b] * xs[b] * dot;
                    mag += fabs((double)wsc[r * nb + b] * xs[b]) * 127 * 127 * 32;
                }
                for (lv = 0; lv < 3; lv++) {
                    const dintattn__kernels *K = dintattn__kernels_for(levels[lv]);
                    const double got = K->w[M.type].dotq(&M, (size_t)r, &X);
                    dintattn__xq four[4];
                    float each[4];
                    int j;
                    if (!(fabs(got - want) <= 1e-6 * mag))
                        fail_msg("%s, %d blocks, row %d, level %s: %.9g, want %.9g", kind ? "Q4" : "Q8", nb, r,
                                 dintattn_kernels_name(K->level), got, want);
                    /* the four-token kernel: these activations and three others, each as dotq has them */
                    four[0] = X, four[1] = Y[0], four[2] = Y[1], four[3] = X;
                    K->w[M.type].dotq4(&M, (size_t)r, four, each);
                    for (j = 0; j < 4; j++) {
                        const double one = K->w[M.type].dotq(&M, (size_t)r, &four[j]);
                        if (!(fabs(each[j] - one) <= 1e-6 * mag))
                            fail_msg("%s, %d blocks, row %d, level %s, token %d of 4: %.9g, alone %.9g",
                                     kind ? "Q4" : "Q8", nb, r, dintattn_kernels_name(K->level), j, each[j], one);
                    }
                    if (K->w[M.type].dotq44 && r == 0) { /* the tile kernel: the four rows, the four tokens */
                        float tile[16];
                        int i;
                        K->w[M.type].dotq44(&M, 0, four, tile);
                        for (i = 0; i < ROWS; i++)
                            for (j = 0; j < 4; j++) {
                                const double one = K->w[M.type].dotq(&M, (size_t)i, &four[j]);
                                if (!(fabs(tile[4 * i + j] - one) <= 1e-6 * mag))
                                    fail_msg("%s, %d blocks, level %s, tile row %d, token %d: %.9g, alone %.9g",
                                             kind ? "Q4" : "Q8", nb, dintattn_kernels_name(K->level), i, j,
                                             tile[4 * i + j], one);
                            }
                        tiles++;
                    }
                }
            }
        }
    }
    /* the AVX512 level has the tile kernel (where this CPU runs it): Q8 and Q4, 1 to 19 blocks */
    if (dintattn__kernels_for(DINTATTN_KERNELS_AVX512)->level == DINTATTN_KERNELS_AVX512) assert_int_equal(tiles, 38);
}

/* The bf16 value an F16 weight is multiplied as under precision FAST: widened, then rounded to
   bf16 to nearest even, written out here in integers. */
static float f16_as_bf16(uint16_t h)
{
    const uint32_t sign = (uint32_t)(h >> 15) << 31;
    int e = (h >> 10) & 31;
    uint32_t mant = h & 1023u, bits, keep;
    float f;
    if (e == 0) { /* subnormal: mant * 2^-24, normal in f32 */
        f = (float)mant * 5.9604644775390625e-8f;
        memcpy(&bits, &f, 4);
        bits |= sign;
    } else {
        bits = sign | (uint32_t)(e - 15 + 127) << 23 | mant << 13;
    }
    keep = bits >> 16; /* round the low 16 bits away, ties to even */
    if ((bits & 0xFFFFu) > 0x8000u || ((bits & 0xFFFFu) == 0x8000u && (keep & 1u))) keep++;
    bits = keep << 16;
    memcpy(&f, &bits, 4);
    return f;
}

/* The bf16-activation kernels of every level (precision FAST) against products of the bf16
   values summed in double, for rows of 1 to 70 weights (the vector kernels' masked tails), one
   token and four, for BF16 weights and for F16 weights (all finite F16 values but the largest,
   subnormals among them, each rounded to bf16 as f16_as_bf16 says). A fourth "level" holds the
   AVX-512 kernels that stand in for vdpbf16ps on CPUs without it (FMA on the pairs widened),
   checked here whichever the CPU runs. */
static void test_bf16_kernels_match_double_sums(void **state)
{
    static const dintattn_kernels levels[] = {DINTATTN_KERNELS_PORTABLE, DINTATTN_KERNELS_AVX2, DINTATTN_KERNELS_AVX512};
    enum { ROWS = 4, MAXN = 70 };
    uint16_t wb[ROWS * MAXN], wh[ROWS * MAXN], xb[4][MAXN];
    int n, r, j, i, lv, kind, tiles = 0, nlv = 3;
    dintattn__kernels fma = *dintattn__kernels_for(DINTATTN_KERNELS_AVX512);
    (void)state;
#ifdef DINTATTN__HAVE_X86
    if (fma.level == DINTATTN_KERNELS_AVX512) nlv = 4;
#endif
    for (i = 0; i < ROWS * MAXN; i++) {
        wb[i] = dintattn__f32_to_bf16((float)sin(0.3 * i * i + 1.0) * 3.0f);
        wh[i] = (uint16_t)(((unsigned)i * 2654435761u >> 9) & 0xFBFFu); /* exponent at most 30: finite */
    }
    wh[0] = 0x0001, wh[1] = 0x8400, wh[2] = 0x3C01, wh[3] = 0x3C03; /* subnormal, normal, two ties */
    for (j = 0; j < 4; j++)
        for (i = 0; i < MAXN; i++) xb[j][i] = dintattn__f32_to_bf16((float)cos(0.7 * i + j) * (float)(j + 1));
    for (kind = 0; kind < 2; kind++)
    for (n = 1; n <= MAXN; n++) {
        dintattn__mat M;
        const uint16_t *x[4], *w = kind ? wh : wb;
        memset(&M, 0, sizeof M);
        M.rows = ROWS, M.cols = n, M.type = kind ? DINTATTN__W_F16 : DINTATTN__W_BF16, M.w = w;
        for (j = 0; j < 4; j++) x[j] = xb[j];
        for (r = 0; r < ROWS; r++)
            for (lv = 0; lv < nlv; lv++) {
                const dintattn__kernels *K = lv < 3 ? dintattn__kernels_for(levels[lv]) : &fma;
                float four[4], one;
#ifdef DINTATTN__HAVE_X86
                fma.dotb = kind ? dintattn__dotb_f16w_fma : dintattn__dotb_bf16_fma;
                fma.dotb44 = kind ? dintattn__dotb44_f16w_fma : dintattn__dotb44_bf16_fma;
#endif
                for (j = 0; j < 4; j++) {
                    double want = 0, mag = 0;
                    for (i = 0; i < n; i++) {
                        const double wv = kind ? f16_as_bf16(w[r * n + i]) : dintattn__bf16_to_f32(w[r * n + i]);
                        const double p = wv * dintattn__bf16_to_f32(x[j][i]);
                        want += p, mag += fabs(p);
                    }
                    K->dotb(&M, (size_t)r, x + j, 1, &one);
                    if (j == 0) K->dotb(&M, (size_t)r, x, 4, four);
                    if (!(fabs(one - want) <= 1e-6 * mag + 1e-30) || !(fabs(four[j] - want) <= 1e-6 * mag + 1e-30))
                        fail_msg("%s, n %d, row %d, token %d, level %s: %.9g / %.9g of four, want %.9g",
                                 kind ? "F16" : "BF16", n, r, j, dintattn_kernels_name(K->level), one, four[j], want);
                    if (K->dotb44 && r == 0) { /* the tile kernel's row i, token j against dotb's */
                        float tile[16], row[4];
                        int t;
                        K->dotb44(&M, 0, x, tile);
                        for (t = 0; t < ROWS; t++) {
                            K->dotb(&M, (size_t)t, x, 4, row);
                            if (!(fabs(tile[4 * t + j] - row[j]) <= 1e-6 * mag + 1e-6))
                                fail_msg("n %d, tile row %d, token %d: %.9g, dotb %.9g", n, t, j, tile[4 * t + j], row[j]);
                        }
                        tiles++;
                    }
                }
            }
    }
    if (nlv == 4) assert_int_equal(tiles, 2 * 8 * MAXN);
    /* an F16 NaN (0x7FFF: rounding up would carry it into -0) stays a NaN in every kernel */
    for (i = 0; i < ROWS * MAXN; i++) wh[i] = 0x3C00;
    wh[0] = 0x7FFF, wh[MAXN + 66] = 0xFFFF; /* rows 0 and 1, the second in the tail */
    for (lv = 0; lv < nlv; lv++) {
        const dintattn__kernels *K = lv < 3 ? dintattn__kernels_for(levels[lv]) : &fma;
        dintattn__mat M;
        const uint16_t *x[4] = {xb[0], xb[1], xb[2], xb[3]};
        float four[4], one, tile[16];
        memset(&M, 0, sizeof M);
        M.rows = ROWS, M.cols = MAXN, M.type = DINTATTN__W_F16, M.w = wh;
#ifdef DINTATTN__HAVE_X86
        fma.dotb = dintattn__dotb_f16w_fma, fma.dotb44 = dintattn__dotb44_f16w_fma;
#endif
        for (r = 0; r < 2; r++) {
            K->dotb(&M, (size_t)r, x, 1, &one);
            K->dotb(&M, (size_t)r, x, 4, four);
            assert_true(isnan(one) && isnan(four[0]) && isnan(four[3]));
        }
        if (K->dotb44) {
            K->dotb44(&M, 0, x, tile);
            assert_true(isnan(tile[0]) && isnan(tile[7]) && !isnan(tile[8]));
        }
    }
}

/* A row against four tokens' f32 activations at once (short prompts' rows): each token's result
   bit for bit the one-token kernel's, every weight type and level that has the kernel, 1-70 and
   a few longer widths (tails past the 32-column steps), the tokens' rows apart by more than n. */
static void test_dot4_equals_dot(void **state)
{
    static const dintattn_kernels levels[] = {DINTATTN_KERNELS_PORTABLE, DINTATTN_KERNELS_AVX2, DINTATTN_KERNELS_AVX512};
    static const dintattn__wtype types[] = {DINTATTN__W_F32, DINTATTN__W_F16, DINTATTN__W_BF16};
    enum { ROWS = 3, MAXN = 300, LDX = MAXN + 5 };
    static float wf[ROWS * MAXN], x[4 * LDX];
    static uint16_t wh[ROWS * MAXN], wb[ROWS * MAXN];
    int n, r, j, i, lv, ty, runs = 0;
    (void)state;
    for (i = 0; i < ROWS * MAXN; i++) {
        wf[i] = (float)sin(0.37 * i * i + 1.0) * 2.5f;
        wb[i] = dintattn__f32_to_bf16(wf[i]);
        wh[i] = (uint16_t)(((unsigned)i * 2654435761u >> 9) & 0xBBFFu); /* finite halves */
    }
    for (i = 0; i < 4 * LDX; i++) x[i] = (float)cos(0.71 * i) * (float)(1 + i % 7);
    for (ty = 0; ty < 3; ty++)
        for (n = 1; n <= MAXN; n += n < 70 ? 1 : 23) {
            dintattn__mat M;
            memset(&M, 0, sizeof M);
            M.rows = ROWS, M.cols = n, M.type = types[ty];
            M.w = types[ty] == DINTATTN__W_F32 ? (void *)wf : types[ty] == DINTATTN__W_F16 ? (void *)wh : (void *)wb;
            for (lv = 0; lv < 3; lv++) {
                const dintattn__kernels *K = dintattn__kernels_for(levels[lv]);
                if (!K->w[types[ty]].dot4) continue;
                for (r = 0; r < ROWS; r++) {
                    float four[4];
                    K->w[types[ty]].dot4(&M, (size_t)r, x, LDX, four);
                    for (j = 0; j < 4; j++) {
                        const float one = K->w[types[ty]].dot(&M, (size_t)r, x + (size_t)j * LDX);
                        if (memcmp(&one, &four[j], sizeof one))
                            fail_msg("type %d, n %d, row %d, token %d, level %s: dot4 %.9g, dot %.9g", ty, n, r, j,
                                     dintattn_kernels_name(K->level), four[j], one);
                    }
                    runs++;
                }
            }
        }
    if (dintattn__kernels_for(DINTATTN_KERNELS_AVX512)->level == DINTATTN_KERNELS_AVX512) assert_true(runs >= 3 * 80 * ROWS);
}

/* The inputs of one panel test: 32 tokens' int8 (q, d), bf16 and f32 activations of `cols`
   columns; the f32 ones when `f32`, else as the weight type takes them (int8 or bf16) */
typedef struct panel_tokens {
    int cols, n, f32;                       /* the block's first n tokens are present */
    dintattn__xq X[32];
    const uint16_t *XB[32];
    const float *XF;                        /* [32][cols] */
} panel_tokens;

/* Rows r0.. of M packed (a panel: 48 rows on f32 activations, else 32), and one block of tokens
   against them, as prefill runs them: by the
   AVX-512 kernels (amx 0) on tokens packed as the session packs them, or on AMX tiles (amx 1,
   any type but F32: Q8 / Q4 rows rounded to bf16) reading the tokens' bf16 rows as the session
   holds them (32 rows, zero past n and past the columns); 0 where this build or CPU has no such
   tiles. */
static int run_panel(const dintattn__kernels *K, const dintattn__mat *M, int r0, void *panel, const panel_tokens *tk,
                     int amx, float *out)
{
    enum { MAXC = 160 };
    const int int8 = M->type == DINTATTN__W_Q8 || M->type == DINTATTN__W_Q4;
    int t;
    if (tk->f32 && amx) {
#ifdef DINTATTN__HAVE_AMX
        /* BF16 rows on f32 activations in three bf16 parts, a block as the session splits it */
        static uint16_t x3[32 * 3 * MAXC];
        if (M->type != DINTATTN__W_BF16 || !dintattn__amx_ready()) return 0;
        memset(x3, 0, sizeof x3);
        for (t = 0; t < tk->n; t++) dintattn__split_bf16x3(tk->XF + (size_t)t * (size_t)tk->cols, tk->cols, x3 + t * 3 * MAXC);
        K->w[M->type].pack(M, r0, panel);
        dintattn__amx_begin();
        dintattn__panel_b16_amx(panel, tk->cols, x3, 2 * 3 * MAXC, 3, tk->n <= 16, out);
        dintattn__amx_end();
        return 1;
#else
        return 0;
#endif
    }
    if (tk->f32) {
        float xpf[MAXC * DINTATTN__GF_NT];
        double sum[DINTATTN__PANEL_F32 * DINTATTN__GF_NT];
        K->packxf(tk->XF, (size_t)tk->cols, tk->n, tk->cols, 0, xpf);
        K->w[M->type].packf(M, r0, panel);
        K->panelf(panel, tk->cols, xpf, tk->n, sum, 1, out); /* one slice: its sums rounded back to f32 */
        return 1;
    }
    if (!amx) {
        K->w[M->type].pack(M, r0, panel);
        int32_t xpq[MAXC / 32 * DINTATTN__GQ_X_BLOCK];
        uint32_t xpb[MAXC / 2 * DINTATTN__GB_NT];
        if (int8) dintattn__pack_xq(tk->X, tk->n, tk->cols, xpq);
        else dintattn__pack_xb(tk->XB, tk->n, tk->cols, xpb);
        K->w[M->type].panel(panel, tk->cols, int8 ? (const void *)xpq : (const void *)xpb, out);
        return 1;
    }
#ifdef DINTATTN__HAVE_AMX
    if (dintattn__amx_ready()) { /* Q8 / Q4 rows rounded to bf16 */
        static uint16_t b[32][MAXC];
        static uint32_t xt[2 * MAXC / 32 * 256];
        static float packed[DINTATTN__PANEL * DINTATTN__AMX_NT];
        const size_t nk = ((size_t)tk->cols + 31) / 32;
        size_t ldw, half_w, kstep;
        const unsigned char *w;
        int i;
        memset(b, 0, sizeof b);
        for (t = 0; t < tk->n; t++) memcpy(b[t], tk->XB[t], sizeof(uint16_t) * (size_t)tk->cols);
        /* both orientations the engine runs (dintattn__amx_rows_a): the rows packed as B tiles and
           the tokens' rows as A, and the rows as A tiles (in place or converted) and the tokens
           as B; the same products in the same order, so the same sums to the bit */
        if (int8) dintattn__pack_qb16(M, r0, panel);
        else K->w[M->type].pack(M, r0, panel);
        dintattn__amx_begin();
        dintattn__panel_b16_amx(panel, tk->cols, b[0], sizeof b[0], 1, tk->n <= 16, packed);
        w = dintattn__amx_rows(M, r0, (unsigned char *)panel, &ldw, &half_w, &kstep);
        dintattn__amx_tokens(b[0], MAXC, tk->n, nk, xt);
        dintattn__amx_tokens(b[16], MAXC, tk->n - 16, nk, xt + nk * 256);
        dintattn__tiles_b16_amx(w, ldw, half_w, kstep, (int)(32 * nk), xt, nk * 256, tk->n <= 16, out);
        dintattn__amx_end();
        dintattn__transpose32(out);
        for (t = 0; t < tk->n; t++)
            for (i = 0; i < DINTATTN__PANEL && r0 + i < M->rows; i++)
                if (memcmp(&out[t * DINTATTN__PANEL + i], &packed[t * DINTATTN__PANEL + i], sizeof(float)))
                    fail_msg("AMX, %d columns: row %d token %d %.9g as A tiles, %.9g as B", tk->cols, r0 + i, t,
                             out[t * DINTATTN__PANEL + i], packed[t * DINTATTN__PANEL + i]);
        return 1;
    }
#endif
    (void)t;
    return 0;
}

/* The AVX-512 level's packed panels (prefill's GEMM) against its row kernels, which the tests
   above hold to integer dots and double sums: Q8 and Q4 rows of 1, 2, 3 and 5 blocks on int8
   activations; BF16 and F16 rows of 1 to 70 columns (an odd last column pairs with a zero) on
   bf16 activations; F32, BF16 and F16 rows on f32 activations; 1 to 61 rows (a second panel of 32
   or 48 rows; rows past the matrix), and a block's tokens all present or only one; where the CPU has AMX, the Q8,
   Q4, BF16 and F16 panels on its tiles too (blocks of 32 tokens of bf16 activations; Q8 and Q4
   against dotb on a BF16 matrix of their elements, each rounded to bf16), and BF16 on f32
   activations split into three bf16 parts (against the f32 row kernel, as the f32 panels). */
static void test_packed_panels_match_row_kernels(void **state)
{
    const dintattn__kernels *K = dintattn__kernels_for(DINTATTN_KERNELS_AVX512);
    static const int row_counts[] = {1, 16, 17, 32, 45, 48, 61}, blocks[] = {1, 2, 3, 5};
    /* Q8, Q4 (int8 activations), BF16, F16 (bf16), F32, BF16, F16 (f32) */
    static const dintattn__wtype types[] = {DINTATTN__W_Q8, DINTATTN__W_Q4, DINTATTN__W_BF16, DINTATTN__W_F16,
                                            DINTATTN__W_F32, DINTATTN__W_BF16, DINTATTN__W_F16};
    enum { MAXR = 61, MAXC = 160, NT = 32 };
    static float w[MAXR * MAXC], x[NT * MAXC], wsc[MAXR * MAXC / 32], xs[NT][MAXC / 32], xc[NT][MAXC / 32];
    static signed char w8[MAXR * MAXC], xq[NT][MAXC];
    static unsigned char w4[MAXR * MAXC / 2];
    static uint16_t wb[MAXR * MAXC], wh[MAXR * MAXC], xb[NT][MAXC], wqb[MAXR * MAXC];
    void *panel = malloc(4 * DINTATTN__PANEL_F32 * MAXC);
    float out[DINTATTN__PANEL * 32];
    int kind, ci, ri, i, t, r0, amx, checked = 0, amx_checked = 0, bf16 = 0;
    (void)state;
    assert_non_null(panel);
#ifdef DINTATTN__HAVE_X86
    bf16 = __builtin_cpu_supports("avx512bf16"); /* the bf16 panels (kinds 2, 3) need it; the rest do not */
    if (K->level != DINTATTN_KERNELS_AVX512)
#endif
    {
        free(panel);
        skip();
    }
    for (i = 0; i < MAXR * MAXC; i++) {
        w[i] = (float)cos(0.11 * i * i + 0.3 * i) * (1.0f + (float)(i % 7));
        wb[i] = dintattn__f32_to_bf16(w[i]);
        wh[i] = (uint16_t)(((unsigned)i * 2654435761u >> 9) & 0xFBFFu); /* finite F16, subnormals too */
    }
    for (kind = 0; kind < 7; kind++)
        for (ci = 0; ci < (kind < 2 ? 4 : 70) && (bf16 || kind < 2 || kind > 3); ci++) {
            const int cols = kind < 2 ? 32 * blocks[ci] : ci + 1, nb = cols / 32;
            dintattn__mat M, MB;
            panel_tokens tk;
            memset(&M, 0, sizeof M);
            M.cols = cols, M.type = types[kind], M.scale = wsc;
            M.w = kind == 0 ? (const void *)w8 : kind == 1 ? (const void *)w4 : kind == 4 ? (const void *)w
                : M.type == DINTATTN__W_BF16 ? (const void *)wb : (const void *)wh;
            for (i = 0; kind < 2 && i < MAXR * nb; i++) {
                if (kind) dintattn__quantize_block4(w + 32 * i, w4 + 16 * i, wsc + i);
                else dintattn__quantize_row(w + 32 * i, 32, w8 + 32 * i, wsc + i);
            }
            memset(&MB, 0, sizeof MB); /* Q8 / Q4 on AMX: the BF16 matrix of their rounded elements */
            MB.cols = cols, MB.rows = MAXR, MB.type = DINTATTN__W_BF16, MB.w = wqb;
            for (i = 0; kind < 2 && i < MAXR * cols; i++) wqb[i] = dintattn__f32_to_bf16(dintattn__wtypes[M.type].elem(&M, (size_t)i));
            for (i = 0; i < NT * cols; i++)
                x[i] = (float)sin(0.7 * i + 0.01 * i * i) * (1.0f + (float)(i % 5)) * (i / cols == 3 ? -1e-3f : 1.0f);
            for (t = 0; t < NT; t++) {
                if (kind < 2) dintattn__quantize_x(x + t * cols, cols, xq[t], xs[t], xc[t]);
                for (i = 0; i < cols; i++) xb[t][i] = dintattn__f32_to_bf16(x[t * cols + i]);
                tk.X[t].q = xq[t], tk.X[t].s = xs[t], tk.X[t].c = xc[t], tk.XB[t] = xb[t];
            }
            tk.cols = cols, tk.f32 = kind >= 4, tk.XF = x;
            for (amx = 0; amx < 2; amx++) {
                const int block = amx ? DINTATTN__AMX_NT : kind < 2 ? DINTATTN__GQ_NT : kind < 4 ? DINTATTN__GB_NT : DINTATTN__GF_NT;
                const int prows = kind >= 4 && !amx ? DINTATTN__PANEL_F32 : DINTATTN__PANEL; /* a panel's rows */
                for (tk.n = 1; tk.n <= block; tk.n += block - 1)
                    for (ri = 0; ri < 7; ri++)
                        for (M.rows = row_counts[ri], r0 = 0; r0 < M.rows; r0 += prows) {
                            if (!run_panel(K, &M, r0, panel, &tk, amx, out)) continue;
                            amx_checked += amx;
                            for (t = 0; t < tk.n; t++)
                                for (i = r0; i < M.rows && i < r0 + prows; i++) {
                                    double mag = 0;
                                    float want, got = out[t * prows + i - r0];
                                    int k;
                                    if (kind < 2 && amx) {
                                        K->dotb(&MB, (size_t)i, tk.XB + t, 1, &want);
                                        for (k = 0; k < cols; k++)
                                            mag += fabs(dintattn__bf16_to_f32(wqb[i * cols + k]) * (double)dintattn__bf16_to_f32(xb[t][k]));
                                    } else if (kind < 2) {
                                        want = K->w[M.type].dotq(&M, (size_t)i, &tk.X[t]);
                                        for (k = 0; k < nb; k++) mag += fabs((double)wsc[i * nb + k] * xs[t][k]) * 127 * 127 * 32;
                                    } else if (kind < 4) {
                                        K->dotb(&M, (size_t)i, tk.XB + t, 1, &want);
                                        for (k = 0; k < cols; k++)
                                            mag += fabs(dintattn__wtypes[M.type].elem(&M, (size_t)i * cols + k) * (double)dintattn__bf16_to_f32(xb[t][k]));
                                    } else {
                                        want = K->w[M.type].dot(&M, (size_t)i, x + t * cols);
                                        for (k = 0; k < cols; k++)
                                            mag += fabs(dintattn__wtypes[M.type].elem(&M, (size_t)i * cols + k) * (double)x[t * cols + k]);
                                    }
                                    if (!(fabs(got - want) <= 1e-6 * mag + 1e-30))
                                        fail_msg("kind %d%s, %d columns, %d rows, %d tokens: row %d token %d %.9g, row kernel %.9g",
                                                 kind, amx ? " (AMX)" : "", cols, M.rows, tk.n, i, t, got, want);
                                    checked++;
                                }
                        }
            }
        }
    assert_true(checked > (bf16 ? 10000 : 5000));
#ifdef DINTATTN__HAVE_AMX /* per row count its panels (1, 1, 1, 1, 2, 2, 2), for each column count, type and token count */
    assert_int_equal(amx_checked, dintattn__amx_ready() ? (3 * 70 + 2 * 4) * 2 * 10 : 0);
#endif
    free(panel);
}

/* The AVX2 level's int8-activation rows on AVX-VNNI (one vpdpbusd where AVX2 takes vpmaddubsw and
   vpmaddwd) equal the AVX2 kernels bit for bit: Q8 and Q4 rows of 1 to 40 blocks, extreme weights
   and activations among them. Where the CPU has AVX-VNNI its kernels run; on an AVX-512 VNNI CPU
   the same body (DINTATTN__DOTQ_X2) runs on the 256-bit EVEX vpdpbusd, the same operation in
   another encoding, so CPUs without AVX-VNNI check the body too. */
#if defined(DINTATTN__HAVE_X86) && defined(DINTATTN__HAVE_AVXVNNI)
#define TEST_DOT4_EVEX(u, q) _mm256_dpbusd_epi32(_mm256_setzero_si256(), (u), (q))
DINTATTN__DOTQ_X2(test_dotq_q8_evex, test_dotq_q4_evex, __attribute__((target("avx512vnni,avx512vl,avx2,fma,f16c"))),
                  TEST_DOT4_EVEX)
#endif
static void test_avxvnni_rows_equal_avx2(void **state)
{
#if defined(DINTATTN__HAVE_X86) && defined(DINTATTN__HAVE_AVXVNNI)
    enum { NB = 40, ROWS = 3 };
    static signed char w8[ROWS * NB * 32], xq[NB * 32];
    static unsigned char w4[ROWS * NB * 16];
    static float wsc[ROWS * NB], xs[NB], xc[NB];
    const int evex = __builtin_cpu_supports("avx512vnni") && __builtin_cpu_supports("avx512vl"),
              vex = dintattn__cpu_avxvnni();
    uint32_t u = 12345u;
    int i, nb, r, kind, checked = 0;
    (void)state;
    if (!evex && !vex) skip();
    for (i = 0; i < ROWS * NB * 32; i++) {
        u = u * 1664525u + 1013904223u;
        w8[i] = (signed char)(i % 97 == 0 ? -127 : i % 89 == 0 ? 127 : i % 101 == 0 ? -128 : (int)(u >> 24) % 255 - 127);
        if (i < ROWS * NB * 16) w4[i] = (unsigned char)(i % 31 == 0 ? 0xFF : i % 37 == 0 ? 0 : u >> 16);
    }
    for (i = 0; i < NB * 32; i++) {
        u = u * 1664525u + 1013904223u;
        xq[i] = (signed char)(i % 13 == 0 ? 127 : i % 17 == 0 ? -127 : (int)(u >> 24) % 255 - 127);
    }
    for (i = 0; i < ROWS * NB; i++) wsc[i] = 0.01f + 0.001f * (float)(i % 7);
    for (i = 0; i < NB; i++) {
        int k, sum = 0;
        for (k = 0; k < 32; k++) sum += xq[32 * i + k];
        xs[i] = 0.02f + 0.003f * (float)(i % 5), xc[i] = xs[i] * (float)sum;
    }
    for (kind = 0; kind < 2; kind++)
        for (nb = 1; nb <= NB; nb++)
            for (r = 0; r < ROWS; r++) {
                dintattn__mat M;
                dintattn__xq X;
                float want, got[2];
                int v;
                memset(&M, 0, sizeof M);
                M.rows = ROWS, M.cols = 32 * nb, M.scale = wsc;
                M.type = kind ? DINTATTN__W_Q4 : DINTATTN__W_Q8;
                M.w = kind ? (const void *)w4 : (const void *)w8;
                X.q = xq, X.s = xs, X.c = xc;
                want = kind ? dintattn__dotq_q4_avx2(&M, (size_t)r, &X) : dintattn__dotq_q8_avx2(&M, (size_t)r, &X);
                got[0] = !evex ? want : kind ? test_dotq_q4_evex(&M, (size_t)r, &X) : test_dotq_q8_evex(&M, (size_t)r, &X);
                got[1] = !vex ? want : kind ? dintattn__dotq_q4_avxvnni(&M, (size_t)r, &X) : dintattn__dotq_q8_avxvnni(&M, (size_t)r, &X);
                for (v = 0; v < 2; v++)
                    if (memcmp(&got[v], &want, sizeof want))
                        fail_msg("%s, %d blocks, row %d: %s %.9g, AVX2 %.9g", kind ? "Q4" : "Q8", nb, r,
                                 v ? "AVX-VNNI" : "EVEX vpdpbusd", got[v], want);
                checked++;
            }
    assert_int_equal(checked, 2 * NB * ROWS);
#else
    (void)state;
    skip();
#endif
}

/* The int8 panels' packing in C (dintattn__pack_q) is what the AVX2 level's and the AVX-512
   level's (DINTATTN__GQ_PACK) store, word for word; and the AVX2 level's panel kernels (plain
   AVX2's Q8 and Q4 kernels, AVX-VNNI's where the CPU has it, and its body on the EVEX vpdpbusd
   where the CPU has AVX-512 VNNI) give the AVX-512 panel's floats bit for bit, and within rounding
   of the integer dots written out here: Q8 and Q4 rows with extreme weights (-128, 127; nibbles 0
   and 15) and activations (+-127), 1 to 61 rows (a second panel; rows past the matrix), 1 to 7
   blocks, a block's tokens all present or only one. */
#if defined(DINTATTN__HAVE_X86) && defined(DINTATTN__HAVE_AVXVNNI)
DINTATTN__GQ_X2_VNNI(test_panel_q_evex, __attribute__((target("avx512vnni,avx512vl,avx2,fma,f16c"))), _mm256_dpbusd_epi32)
#endif
static void test_avx2_int8_panels(void **state)
{
#if defined(DINTATTN__HAVE_X86) && defined(DINTATTN__HAVE_AVXVNNI)
    enum { MAXR = 61, MAXB = 7, NT = DINTATTN__GQ_NT };
    static const int row_counts[] = {1, 8, 17, 32, 33, 61};
    static signed char w8[MAXR * MAXB * 32], xq[NT][MAXB * 32];
    static unsigned char w4[MAXR * MAXB * 16];
    static float wsc[MAXR * MAXB], xs[NT][MAXB], xc[NT][MAXB];
    static int32_t panel[2][(MAXB + 1) * DINTATTN__GQ_PANEL_BLOCK], xpq[MAXB * DINTATTN__GQ_X_BLOCK];
    const dintattn__kernels *K512 = dintattn__kernels_for(DINTATTN_KERNELS_AVX512);
    const int avx512 = K512->level == DINTATTN_KERNELS_AVX512, vex = dintattn__cpu_avxvnni(),
              evex = __builtin_cpu_supports("avx512vnni") && __builtin_cpu_supports("avx512vl");
    uint32_t u = 777u;
    int i, kind, nb, ri, r0, n, t, v, checked = 0;
    (void)state;
    if (!__builtin_cpu_supports("avx2")) skip();
    for (i = 0; i < MAXR * MAXB * 32; i++) {
        u = u * 1664525u + 1013904223u;
        w8[i] = (signed char)(i % 97 == 0 ? -127 : i % 89 == 0 ? 127 : i % 23 == 0 ? -128 : (int)(u >> 24) % 256 - 128);
        if (i < MAXR * MAXB * 16) w4[i] = (unsigned char)(i % 31 == 0 ? 0xFF : i % 37 == 0 ? 0 : i % 41 == 0 ? 0x0F : u >> 16);
    }
    for (i = 0; i < MAXR * MAXB; i++) wsc[i] = (0.01f + 0.001f * (float)(i % 7)) * (i % 11 == 0 ? -1.0f : 1.0f);
    for (t = 0; t < NT; t++)
        for (i = 0; i < MAXB; i++) {
            int k, sum = 0;
            for (k = 0; k < 32; k++) {
                u = u * 1664525u + 1013904223u;
                xq[t][32 * i + k] = (signed char)((k + t) % 13 == 0 ? 127 : (k + i) % 7 == 0 ? -127 : (int)(u >> 24) % 255 - 127);
                sum += xq[t][32 * i + k];
            }
            xs[t][i] = 0.02f + 0.003f * (float)((i + t) % 5), xc[t][i] = xs[t][i] * (float)sum;
        }
    for (kind = 0; kind < 2; kind++)
        for (nb = 1; nb <= MAXB; nb++)
            for (ri = 0; ri < 6; ri++)
                for (r0 = 0; r0 < row_counts[ri]; r0 += DINTATTN__PANEL)
                    for (n = 1; n <= NT; n += NT - 1) {
                        dintattn__mat M;
                        dintattn__xq X[NT];
                        float out[5][DINTATTN__PANEL * NT];
                        memset(&M, 0, sizeof M);
                        M.rows = row_counts[ri], M.cols = 32 * nb, M.scale = wsc;
                        M.type = kind ? DINTATTN__W_Q4 : DINTATTN__W_Q8;
                        M.w = kind ? (const void *)w4 : (const void *)w8;
                        for (t = 0; t < NT; t++) X[t].q = xq[t], X[t].s = xs[t], X[t].c = xc[t];
                        dintattn__pack_xq(X, n, M.cols, xpq);
                        memset(panel, 0xAB, sizeof panel);
                        dintattn__pack_q(&M, r0, panel[0]);
                        assert_int_equal(panel[0][nb * DINTATTN__GQ_PANEL_BLOCK], (int32_t)0xABABABABu);
                        memset(panel[1], 0xCD, sizeof panel[1]);
                        dintattn__pack_q_avx2(&M, r0, panel[1]);
                        if (memcmp(panel[0], panel[1], sizeof(int32_t) * (size_t)nb * DINTATTN__GQ_PANEL_BLOCK))
                            fail_msg("%s, %d rows from %d, %d blocks: the AVX2 packing differs from C's", kind ? "Q4" : "Q8",
                                     M.rows, r0, nb);
                        if (avx512) {
                            K512->w[M.type].pack(&M, r0, panel[1]);
                            if (memcmp(panel[0], panel[1], sizeof(int32_t) * (size_t)nb * DINTATTN__GQ_PANEL_BLOCK))
                                fail_msg("%s, %d rows from %d, %d blocks: the C packing differs from AVX-512's",
                                         kind ? "Q4" : "Q8", M.rows, r0, nb);
                        }
                        memset(out, 0, sizeof out);
                        dintattn__panel_q8_avx2(panel[0], M.cols, xpq, out[0]);
                        if (vex) dintattn__panel_q_avxvnni(panel[0], M.cols, xpq, out[1]);
                        if (evex) test_panel_q_evex(panel[0], M.cols, xpq, out[2]);
                        if (avx512) K512->w[M.type].panel(panel[0], M.cols, xpq, out[3]);
                        if (kind) dintattn__panel_q4_avx2(panel[0], M.cols, xpq, out[4]); /* Q4's own */
                        for (v = 1; v < 5; v++)
                            if ((v == 1 ? vex : v == 2 ? evex : v == 3 ? avx512 : kind) &&
                                memcmp(out[v], out[0], sizeof(float) * DINTATTN__PANEL * (size_t)n))
                                fail_msg("%s, %d rows from %d, %d blocks, %d tokens: %s differs from plain AVX2's",
                                         kind ? "Q4" : "Q8", M.rows, r0, nb, n,
                                         v == 1 ? "AVX-VNNI" : v == 2 ? "EVEX vpdpbusd" : v == 3 ? "the AVX-512 panel"
                                                                                            : "plain AVX2's Q4 kernel");
                        for (t = 0; t < NT; t++)
                            for (i = 0; i < DINTATTN__PANEL; i++) {
                                const int r = r0 + i;
                                double want = 0, mag = 0;
                                int b, k;
                                for (b = 0; t < n && r < M.rows && b < nb; b++) {
                                    long dot = 0;
                                    for (k = 0; k < 32; k++) {
                                        const size_t e = (size_t)r * (size_t)M.cols + 32 * (size_t)b + (size_t)k;
                                        const int wi = kind ? ((w4[e / 32 * 16 + e % 16] >> (e % 32 < 16 ? 0 : 4)) & 15) - 8 : w8[e];
                                        dot += (long)wi * xq[t][32 * b + k];
                                    }
                                    want += (double)wsc[r * nb + b] * xs[t][b] * dot;
                                    mag += fabs((double)wsc[r * nb + b] * xs[t][b]) * 128 * 127 * 32;
                                }
                                if (!(fabs(out[0][t * DINTATTN__PANEL + i] - want) <= 1e-6 * mag))
                                    fail_msg("%s, %d rows from %d, %d blocks, %d tokens: row %d token %d %.9g, want %.9g",
                                             kind ? "Q4" : "Q8", M.rows, r0, nb, n, r, t, out[0][t * DINTATTN__PANEL + i], want);
                                checked++;
                            }
                    }
    assert_int_equal(checked, 2 * MAXB * (1 + 1 + 1 + 1 + 2 + 2) * 2 * DINTATTN__PANEL * NT);
#else
    (void)state;
    skip();
#endif
}

/* The bf16 panels' words (dintattn__pack_b16_words: what dintattn__pack_b16 stores for BF16 and
   rounds for F16) against their definition, word by word: pair p (columns 2p, 2p + 1) of row
   r0 + 16 j + i at 32 p + 16 j + i, an odd last column beside a zero, rows past the matrix zero,
   nothing written past the last pair. 1 to 45 rows and 1 to 200 columns: the blocks of 16 pairs
   transposed, the last pairs gathered, the odd column. It needs AVX-512 but not AVX-512 BF16, so
   CPUs without the bf16 panels check their packing too (the test above holds their products to
   the row kernels where they run). */
static void test_b16_panels_pack_their_pairs(void **state)
{
#ifdef DINTATTN__HAVE_X86
    enum { MAXR = 45, MAXC = 200 };
    static uint16_t w[MAXR * MAXC];
    static uint32_t panel[32 * (MAXC / 2 + 1)];
    static const int row_counts[] = {1, 15, 16, 17, 32, 33, 45};
    int ri, cols, r0, p, j, i;
    long checked = 0;
    (void)state;
    if (dintattn__kernels_for(DINTATTN_KERNELS_AVX512)->level != DINTATTN_KERNELS_AVX512) skip();
    for (i = 0; i < MAXR * MAXC; i++) w[i] = (uint16_t)((unsigned)i * 2654435761u >> 7);
    for (ri = 0; ri < 7; ri++)
        for (cols = 1; cols <= MAXC; cols++) {
            const int np = (cols + 1) / 2;
            dintattn__mat M;
            memset(&M, 0, sizeof M);
            M.w = w, M.rows = row_counts[ri], M.cols = cols, M.type = DINTATTN__W_BF16;
            for (r0 = 0; r0 < M.rows; r0 += DINTATTN__PANEL) {
                memset(panel, 0xAB, sizeof panel);
                dintattn__pack_b16_words(&M, r0, panel);
                for (p = 0; p < np; p++)
                    for (j = 0; j < 2; j++)
                        for (i = 0; i < 16; i++) {
                            const int r = r0 + 16 * j + i;
                            uint32_t want = 0;
                            if (r < M.rows)
                                want = w[r * cols + 2 * p] | (2 * p + 1 < cols ? (uint32_t)w[r * cols + 2 * p + 1] << 16 : 0u);
                            if (panel[32 * p + 16 * j + i] != want)
                                fail_msg("%d rows, %d columns, panel at row %d: pair %d of row %d is %08x, not %08x", M.rows,
                                         cols, r0, p, r, panel[32 * p + 16 * j + i], want);
                            checked++;
                        }
                assert_int_equal(panel[32 * np], 0xABABABABu);
            }
        }
    assert_true(checked == 32L * (MAXC / 2) * (MAXC / 2 + 1) * 9); /* 33 and 45 rows: two panels each */
#else
    (void)state;
    skip();
#endif
}

/* Activations rounded to bf16 for precision FAST: the AVX-512 level's rows equal the scalar
   rounding bit for bit (halfway values both ways, NaN, infinities, subnormals, the largest
   finite values that round up to infinity), and zero up to a multiple of 32 columns. So do the
   f32 panels' token blocks (packxf), as they are and rounded, for full and short blocks, and they
   write nothing past their columns. */
static void test_bf16_rounding_levels_agree(void **state)
{
    enum { COLS = 999, PAD = 1024 };
    static float x[COLS], blk[DINTATTN__GF_NT * COLS + 16];
    static uint16_t a[PAD], b[PAD];
    const dintattn__kernels *K = dintattn__kernels_for(DINTATTN_KERNELS_AVX512);
    int n, bf16, t, bad = 0;
    static const uint32_t special[] = {0x7FC00000u, 0xFFC00001u, 0x7F800001u, 0x7F800000u, 0xFF800000u,
                                       0x00000001u, 0x80008000u, 0x7F7FFFFFu, 0x3F808000u, 0x3F818000u,
                                       0x00000000u, 0x80000000u, 0x7F7F8000u};
    uint32_t u = 777u;
    int i;
    (void)state;
    for (i = 0; i < COLS; i++) {
        uint32_t bits;
        u = u * 1664525u + 1013904223u;
        bits = i < (int)(sizeof special / sizeof special[0]) ? special[i] : i % 3 ? u : (u & 0xFFFF0000u) | 0x8000u;
        memcpy(&x[i], &bits, 4);
    }
    memset(a, 0xFF, sizeof a), memset(b, 0xEE, sizeof b);
    dintattn__kernels_for(DINTATTN_KERNELS_PORTABLE)->to_bf16(x, COLS, a);
    for (i = 0; i < COLS; i++) assert_int_equal(a[i], dintattn__f32_to_bf16(x[i]));
    for (i = COLS; i < PAD; i++) assert_int_equal(a[i], 0);
#ifdef DINTATTN__HAVE_X86
    if (dintattn__kernels_for(DINTATTN_KERNELS_AVX512)->level != DINTATTN_KERNELS_AVX512) skip();
#endif
    K->to_bf16(x, COLS, b);
    assert_memory_equal(a, b, sizeof a);
    /* token t's row is x from column t (rows COLS / 16 apart, so they differ) */
    for (n = 5; n <= DINTATTN__GF_NT; n += DINTATTN__GF_NT - 5)
        for (bf16 = 0; bf16 < 2; bf16++) {
            const int cols = COLS - 15 * DINTATTN__GF_NT, ldx = 15;
            for (i = 0; i < (int)(sizeof blk / sizeof blk[0]); i++) blk[i] = -7.0f;
            K->packxf(x, (size_t)ldx, n, cols, bf16, blk);
            for (i = 0; i < cols; i++)
                for (t = 0; t < DINTATTN__GF_NT; t++) {
                    const float v = t < n ? x[t * ldx + i] : 0.0f;
                    const float want = bf16 ? dintattn__bf16_to_f32(dintattn__f32_to_bf16(v)) : v;
                    bad += memcmp(&blk[i * DINTATTN__GF_NT + t], &want, 4) != 0;
                }
            for (i = cols * DINTATTN__GF_NT; i < (int)(sizeof blk / sizeof blk[0]); i++) bad += blk[i] != -7.0f;
        }
    assert_int_equal(bad, 0);
}

/* A panel wider than DINTATTN__F32_SPAN columns is taken a span at a time, every block of tokens
   against each span, the double sums kept between spans: the same sums in the same order as one
   pass over the whole row, bit for bit, into y (rounded) and y64 (Q/K, in double), for full and
   short panels and blocks of tokens; and they are the product. */
static void test_f32_panel_spans(void **state)
{
    enum { COLS = DINTATTN__F32_SPAN + 709, ROWS = 60, N = 29 };
    const dintattn__kernels *K = dintattn__kernels_for(DINTATTN_KERNELS_AVX512);
    const int nb = (N + DINTATTN__GF_NT - 1) / DINTATTN__GF_NT;
    float *W = (float *)malloc(sizeof(float) * ROWS * COLS), *X = (float *)malloc(sizeof(float) * N * COLS);
    float *xpf = (float *)calloc((size_t)nb * COLS * DINTATTN__GF_NT, sizeof(float));
    float *panel = (float *)malloc(sizeof(float) * DINTATTN__PANEL_F32 * COLS), y[2][N * ROWS];
    double *sums = (double *)malloc(sizeof(double) * nb * DINTATTN__PANEL_F32 * DINTATTN__GF_NT), y64[2][N * ROWS];
    dintattn_session *s = (dintattn_session *)calloc(1, sizeof *s);
    dintattn__mat M;
    int i, t, r0, way, q, bad = 0;
    (void)state;
    if (K->level != DINTATTN_KERNELS_AVX512 || !K->panelf) skip();
    assert_non_null(W), assert_non_null(X), assert_non_null(xpf), assert_non_null(panel), assert_non_null(sums), assert_non_null(s);
    for (i = 0; i < ROWS * COLS; i++) W[i] = (float)sin(0.37 * i + 0.001 * (i % 977));
    for (i = 0; i < N * COLS; i++) X[i] = (float)cos(0.11 * i) * (1.0f + (float)(i % 13) / 13.0f);
    M.w = W, M.scale = NULL, M.rows = ROWS, M.cols = COLS, M.type = DINTATTN__W_F32;
    s->k = K, s->xpf = xpf;
    for (t = 0; t < N; t += DINTATTN__GF_NT)
        K->packxf(X + (size_t)t * COLS, COLS, N - t < DINTATTN__GF_NT ? N - t : DINTATTN__GF_NT, COLS, 0,
                  xpf + (size_t)t * COLS);
    for (q = 0; q < 2; q++) /* y (rounded once), then y64 (Q/K) */
        for (way = 0; way < 2; way++) {
            dintattn__product p = q ? dintattn__product_f64(&M, X, y64[way], ROWS) : dintattn__product_f32(&M, X, COLS, y[way], ROWS, 0);
            for (r0 = 0; r0 < ROWS; r0 += DINTATTN__PANEL_F32)
                dintattn__gemm_unit_f32(s, &p, panel, way ? sums : NULL, r0, ROWS - r0 < DINTATTN__PANEL_F32 ? ROWS - r0 : DINTATTN__PANEL_F32, N);
        }
    assert_memory_equal(y[0], y[1], sizeof y[0]);
    assert_memory_equal(y64[0], y64[1], sizeof y64[0]);
    for (t = 0; t < N; t++)
        for (i = 0; i < ROWS; i++) {
            double want = 0, mag = 0;
            int k;
            for (k = 0; k < COLS; k++) want += (double)W[i * COLS + k] * X[t * COLS + k], mag += fabs((double)W[i * COLS + k] * X[t * COLS + k]);
            bad += !(fabs(y64[1][t * ROWS + i] - want) <= 1e-6 * mag) || !(fabs(y[1][t * ROWS + i] - want) <= 1e-6 * mag);
        }
    assert_int_equal(bad, 0);
    free(W), free(X), free(xpf), free(panel), free(sums), free(s);
}

/* A block of 4 tokens or fewer (a prompt's last) runs the f32 panel's 4-token kernel: each
   token's double sums and rounded outputs equal the 8-token kernel's bit for bit, over one slice
   and added to a previous one, and the sums and outputs past the kernel's tokens are not written. */
static void test_f32_panel_short_blocks(void **state)
{
    enum { COLS = 301, N = DINTATTN__PANEL_F32 * DINTATTN__GF_NT };
    const dintattn__kernels *K = dintattn__kernels_for(DINTATTN_KERNELS_AVX512);
    static float W[DINTATTN__PANEL_F32 * COLS], X[DINTATTN__GF_NT * COLS], xpf[COLS * DINTATTN__GF_NT],
        panel[DINTATTN__PANEL_F32 * COLS], out[2][N];
    static double sum[2][N];
    dintattn__mat M;
    int i, nt, first, w;
    (void)state;
    if (K->level != DINTATTN_KERNELS_AVX512 || !K->panelf) skip();
    for (i = 0; i < DINTATTN__PANEL_F32 * COLS; i++) W[i] = (float)sin(0.29 * i + 0.003 * (i % 331));
    for (i = 0; i < DINTATTN__GF_NT * COLS; i++) X[i] = (float)cos(0.13 * i) * (1.0f + (float)(i % 7) / 7.0f);
    memset(&M, 0, sizeof M);
    M.w = W, M.rows = DINTATTN__PANEL_F32, M.cols = COLS, M.type = DINTATTN__W_F32;
    K->packxf(X, COLS, DINTATTN__GF_NT, COLS, 0, xpf);
    K->w[M.type].packf(&M, 0, panel);
    for (nt = 1; nt <= 4; nt++)
        for (first = 1; first >= 0; first--) {
            for (w = 0; w < 2; w++) {
                for (i = 0; i < N; i++) sum[w][i] = 0.5 * i, out[w][i] = -3.0f;
                K->panelf(panel, COLS, xpf, w ? nt : DINTATTN__GF_NT, sum[w], first, out[w]);
            }
            assert_memory_equal(sum[0], sum[1], sizeof(double) * DINTATTN__PANEL_F32 * nt);
            assert_memory_equal(out[0], out[1], sizeof(float) * DINTATTN__PANEL_F32 * nt);
            for (i = DINTATTN__PANEL_F32 * 4; i < N; i++) assert_true(sum[1][i] == 0.5 * i && out[1][i] == -3.0f);
        }
}

/* The three bf16 parts of an f32 activation (AMX, BF16 weights at AUTO and EXACT) add up to it
   exactly for every sign and binade where the parts stay normal (halfway values and the
   largest significands too), and the padding up to a multiple of 32 columns is zero. */
static void test_bf16x3_split_is_exact(void **state)
{
    enum { COLS = 1000, PAD = 1024 };
    static float x[COLS];
    static uint16_t parts[3 * PAD];
    uint32_t u = 12345u;
    int i, k, bad = 0;
    (void)state;
#ifdef DINTATTN__HAVE_AMX
    if (!__builtin_cpu_supports("avx512bf16") || !__builtin_cpu_supports("avx512bw")) skip();
    for (i = 0; i < COLS; i++) {
        uint32_t bits;
        u = u * 1664525u + 1013904223u;
        bits = (u & 0x807FFFFFu) | (uint32_t)(30 + i % 190) << 23; /* exponents 2^-97 .. 2^92 */
        if (i % 10 == 1) bits = (bits & 0xFFFF0000u) | 0x8000u; /* halfway between two bf16 */
        if (i % 10 == 2) bits |= 0x007FFFFFu;                    /* all ones: rounds up a binade */
        memcpy(&x[i], &bits, 4);
    }
    memset(parts, 0xFF, sizeof parts);
    dintattn__split_bf16x3(x, COLS, parts);
    for (k = 0; k < PAD; k++) {
        const uint16_t *p = parts + k / 32 * 96 + k % 32;
        const double sum = (double)dintattn__bf16_to_f32(p[0]) + dintattn__bf16_to_f32(p[32]) + dintattn__bf16_to_f32(p[64]);
        if (k >= COLS ? p[0] || p[32] || p[64] : sum != (double)x[k]) bad++;
    }
    assert_int_equal(bad, 0);
#else
    (void)x, (void)parts, (void)u, (void)i, (void)k, (void)bad;
    skip();
#endif
}

/* Every level's attention kernels against sums in double: scores and scores2 (q . k over d,
   times the scale) and W @ V, for widths 4 to 144 (the vector kernels' multiples of 8 and 16,
   AVX-512's one-pass W @ V up to 128 and what falls back) and 1 to 67 keys (the four-key blocks'
   tails); and the AVX-512 level's four-query scores and W @ V (prefill) where the widths suit
   them, nothing written past dv. */
static void test_attention_kernels_match_double_sums(void **state)
{
    static const dintattn_kernels levels[] = {DINTATTN_KERNELS_PORTABLE, DINTATTN_KERNELS_AVX2, DINTATTN_KERNELS_AVX512};
    static const int widths[] = {4, 8, 12, 16, 24, 32, 48, 64, 96, 112, 128, 136, 144};
    static const int keys[] = {1, 2, 3, 4, 5, 7, 8, 9, 33, 64, 67};
    enum { MAXW = 144, MAXK = 67 };
    float *K = (float *)malloc(sizeof(float) * MAXW * MAXK), q1[MAXW], q2[MAXW], W[MAXK];
    float a1[MAXK], a2[MAXK], o[MAXW], Q4[4 * MAXW], a4[4 * MAXK], W4[4 * MAXK], O4[4 * MAXW];
    int wi, ki, lv, i, j, checked = 0, four = 0;
    (void)state;
    assert_true(K != NULL);
    for (i = 0; i < MAXW * MAXK; i++) K[i] = (float)sin(0.37 * i + 0.001 * i * i);
    for (i = 0; i < MAXW; i++) q1[i] = (float)cos(0.7 * i), q2[i] = (float)sin(1.1 * i + 0.5);
    for (j = 0; j < MAXK; j++) W[j] = (float)(cos(0.3 * j) / (1 + j % 4));
    for (i = 0; i < 4 * MAXW; i++) Q4[i] = (float)sin(0.13 * i + 0.002 * i * i);
    for (i = 0; i < 4 * MAXK; i++) W4[i] = (float)cos(0.29 * i) * (i % 7 == 3 ? 0.0f : 1.0f);
    for (wi = 0; wi < (int)(sizeof widths / sizeof *widths); wi++)
        for (ki = 0; ki < (int)(sizeof keys / sizeof *keys); ki++) {
            const int d = widths[wi], nk = keys[ki];
            for (lv = 0; lv < 3; lv++) {
                const dintattn__kernels *k = dintattn__kernels_for(levels[lv]);
                k->scores(a1, q1, K, nk, d, 0.25f);
                for (j = 0; j < nk; j++) {
                    double want = 0, mag = 0;
                    for (i = 0; i < d; i++) want += (double)q1[i] * K[(size_t)j * d + i], mag += fabs((double)q1[i] * K[(size_t)j * d + i]);
                    if (!(fabs(a1[j] - 0.25 * want) <= 1e-6 * mag + 1e-30))
                        fail_msg("scores, d %d, %d keys, level %s: key %d %.9g, want %.9g", d, nk,
                                 dintattn_kernels_name(k->level), j, a1[j], 0.25 * want);
                }
                k->scores2(a1, a2, q1, q2, K, nk, d, 0.5f);
                for (j = 0; j < nk; j++) {
                    double w1 = 0, w2 = 0, mag = 0;
                    for (i = 0; i < d; i++) {
                        w1 += (double)q1[i] * K[(size_t)j * d + i], w2 += (double)q2[i] * K[(size_t)j * d + i];
                        mag += fabs((double)K[(size_t)j * d + i]) * 2;
                    }
                    if (!(fabs(a1[j] - 0.5 * w1) <= 1e-6 * mag + 1e-30) || !(fabs(a2[j] - 0.5 * w2) <= 1e-6 * mag + 1e-30))
                        fail_msg("scores2, d %d, %d keys, level %s: key %d %.9g / %.9g, want %.9g / %.9g", d, nk,
                                 dintattn_kernels_name(k->level), j, a1[j], a2[j], 0.5 * w1, 0.5 * w2);
                }
                for (i = 0; i < MAXW; i++) o[i] = 12345.0f;
                k->wv(o, W, K, nk, d);
                for (i = 0; i < d; i++) {
                    double want = 0, mag = 0;
                    for (j = 0; j < nk; j++) want += (double)W[j] * K[(size_t)j * d + i], mag += fabs((double)W[j] * K[(size_t)j * d + i]);
                    if (!(fabs(o[i] - want) <= 1e-6 * mag + 1e-30))
                        fail_msg("wv, dv %d, %d keys, level %s: column %d %.9g, want %.9g", d, nk,
                                 dintattn_kernels_name(k->level), i, o[i], want);
                }
                for (i = d; i < MAXW; i++) assert_true(o[i] == 12345.0f); /* nothing past dv written */
                if (k->scores4 && k->scores4(a4, MAXK, Q4, MAXW, K, nk, d, 0.25f)) { /* four queries at once */
                    int q;
                    for (q = 0; q < 4; q++)
                        for (j = 0; j < nk; j++) {
                            double want = 0, mag = 0;
                            for (i = 0; i < d; i++) {
                                const double p = (double)Q4[q * MAXW + i] * K[(size_t)j * d + i];
                                want += p, mag += fabs(p);
                            }
                            if (!(fabs(a4[q * MAXK + j] - 0.25 * want) <= 1e-6 * mag + 1e-30))
                                fail_msg("scores4, d %d, %d keys, level %s: query %d key %d %.9g, want %.9g", d, nk,
                                         dintattn_kernels_name(k->level), q, j, a4[q * MAXK + j], 0.25 * want);
                        }
                    four++;
                }
                for (i = 0; i < 4 * MAXW; i++) O4[i] = 12345.0f;
                if (k->wv4 && k->wv4(O4, MAXW, W4, MAXK, K, nk, d)) {
                    int q;
                    for (q = 0; q < 4; q++) {
                        for (i = 0; i < d; i++) {
                            double want = 0, mag = 0;
                            for (j = 0; j < nk; j++) {
                                const double p = (double)W4[q * MAXK + j] * K[(size_t)j * d + i];
                                want += p, mag += fabs(p);
                            }
                            if (!(fabs(O4[q * MAXW + i] - want) <= 1e-6 * mag + 1e-30))
                                fail_msg("wv4, dv %d, %d keys, level %s: query %d column %d %.9g, want %.9g", d, nk,
                                         dintattn_kernels_name(k->level), q, i, O4[q * MAXW + i], want);
                        }
                        for (i = d; i < MAXW; i++) assert_true(O4[q * MAXW + i] == 12345.0f);
                    }
                    four++;
                }
                checked++;
            }
        }
    assert_int_equal(checked, 3 * 13 * 11);
    /* the four-query kernels of the AVX-512 level: scores for d 16, 32, 48, 64, 96, 112, 128, 144;
       W @ V for dv 64 and 128, every key count */
    if (dintattn__kernels_for(DINTATTN_KERNELS_AVX512)->level == DINTATTN_KERNELS_AVX512) assert_int_equal(four, 10 * 11);
    free(K);
}

/* Precision FAST: BF16 and F16 weights multiply bf16 activations. The logits move from EXACT's
   by about bf16's rounding (a few 1e-3 here), prefill, decode and chunks agree, and F32 weights
   (and with them this option's effect on anything but BF16, F16 and Q8/Q4 rows) are untouched.
   A prompt takes either road of dintattn__bf16_dot_pays (the bf16 panels, or the same bf16
   activations widened on the f32 panels): both meet all of this, and their logits differ only by
   the order of the f32 sums. */
static void test_bf16_activations(void **state)
{
    static const dintattn_weights how[] = {DINTATTN_WEIGHTS_BF16, DINTATTN_WEIGHTS_F32};
    const dintattn_precision F = DINTATTN_PRECISION_FAST;
    int f, k, road, f16 = 0;
    (void)state;
    for (f = 0; f < n_conv; f++)
        for (k = 0; k < 2; k++) {
            dintattn_model *m = load_weights(conv[f].name, how[k]);
            const size_t n = (size_t)conv[f].n * (size_t)dintattn_model_config(m)->vocab_size;
            float *exact = run_p(m, conv[f].ids, conv[f].n, conv[f].n, 0, 1, DINTATTN_PRECISION_EXACT);
            float *a[2];
            for (road = 0; road < 2; road++) {
                float *d, *c;
                double e;
                test_session_base.bf16_dot = road ? 1 : -1;
                a[road] = run_p(m, conv[f].ids, conv[f].n, conv[f].n, 0, 1, F);
                d = run_p(m, conv[f].ids, conv[f].n, 1, 0, 3, F);
                c = run_p(m, conv[f].ids, conv[f].n, 3, 0, 1, F);
                e = rel_error(a[road], exact, n);
                if (how[k] == DINTATTN_WEIGHTS_F32) assert_memory_equal(a[road], exact, sizeof(float) * n);
                else if (!(e > 1e-6 && e < 0.02))
                    fail_msg("%s: bf16 activations move the logits by %.3g", conv[f].name, e);
                expect_close("bf16 decode, 3 threads", conv[f].name, d, a[road], n, 2e-3);
                expect_close("bf16 chunks of 3", conv[f].name, c, a[road], n, 2e-3);
                free(d), free(c);
            }
            test_session_base.bf16_dot = 0;
            /* the same products either way, summed in another order: far closer than bf16's
               rounding moves them. Not to 1e-5 on every model: where a sum lands next to a
               rounding boundary of bf16, the order flips that activation by one bf16 step
               (2^-8) and the later layers carry it (conv_standard_gqa_dv12 on the row kernels
               of a CPU without AVX-512 BF16: 1.1e-3 apart, 7.5e-3 from EXACT, so the bound is a
               quarter of the distance to EXACT). A road that skipped the rounding would sit at
               EXACT, as far as the rounding moves. */
            if (how[k] == DINTATTN_WEIGHTS_BF16)
                expect_close("bf16 activations on the f32 panels", conv[f].name, a[0], a[1], n,
                             0.25 * rel_error(a[0], exact, n));
            free(exact), free(a[0]), free(a[1]);
            dintattn_model_free(m);
        }
    /* F16 weights as the file holds them: rounded to bf16 as they are read, with bf16 activations */
    for (f = 0; f < n_fx; f++) {
        dintattn_model *m;
        size_t n;
        float *exact, *a, *d, *c;
        double e;
        if (!strstr(fx[f].name, "_f16")) continue;
        m = load_weights(fx[f].name, DINTATTN_WEIGHTS_FILE);
        n = (size_t)fx[f].n * (size_t)dintattn_model_config(m)->vocab_size;
        exact = run_p(m, fx[f].ids, fx[f].n, fx[f].n, 0, 1, DINTATTN_PRECISION_EXACT);
        a = run_p(m, fx[f].ids, fx[f].n, fx[f].n, 0, 1, F);
        d = run_p(m, fx[f].ids, fx[f].n, 1, 0, 3, F);
        c = run_p(m, fx[f].ids, fx[f].n, 3, 0, 1, F);
        e = rel_error(a, exact, n);
        /* two roundings to bf16 per product (weight and activation): 0.006-0.023 on these models */
        if (!(e > 1e-6 && e < 0.05)) fail_msg("%s: F16 weights with bf16 activations move the logits by %.3g", fx[f].name, e);
        expect_close("F16 weights, bf16 decode, 3 threads", fx[f].name, d, a, n, 2e-3);
        expect_close("F16 weights, bf16 chunks of 3", fx[f].name, c, a, n, 2e-3);
        free(exact), free(a), free(d), free(c);
        dintattn_model_free(m);
        f16++;
    }
    assert_true(f16 >= 4);
}

/* What a prompt's products of weights held as `w` run on in a session of m at the suite's level */
static dintattn_prefill_unit prompt_unit(const dintattn_model *m, dintattn_weights w, dintattn_precision precision)
{
    dintattn_session *s = test_session_kv(m, 0, 0, 1, precision, DINTATTN_KV_F32);
    dintattn_prefill_unit u;
    assert_int_equal(dintattn_session_prefill_unit(s, dintattn_weights_name(w), &u, NULL), DINTATTN_OK);
    dintattn_session_free(s);
    return u;
}

/* With Q8 and Q4 weights, precision AUTO runs int8 activations in decode, in chunks too short for
   a prompt's products (fewer than DINTATTN__GEMM_MIN_TOKENS), and in prompts where the session has
   no AMX tiles (test_q8_q4_prompts_on_tiles): the logits move from EXACT's (so the path is taken)
   by what quantizing activations costs (a few percent at most on these models), and decode,
   chunks, threads, a prompt without tiles and the file's weights agree. F32 / BF16 weights are
   untouched by the option. */
static void test_int8_activations(void **state)
{
    static const dintattn_weights how[] = {DINTATTN_WEIGHTS_Q8, DINTATTN_WEIGHTS_Q4, DINTATTN_WEIGHTS_BF16};
    int f, k;
    (void)state;
    for (f = 0; f < n_conv; f++)
        for (k = 0; k < 3; k++) {
            dintattn_model *m = load_weights(conv[f].name, how[k]);
            const size_t n = (size_t)conv[f].n * (size_t)dintattn_model_config(m)->vocab_size;
            float *exact = run_p(m, conv[f].ids, conv[f].n, conv[f].n, 0, 1, DINTATTN_PRECISION_EXACT);
            float *a = run(m, conv[f].ids, conv[f].n, conv[f].n, 0, 1);
            float *d = run(m, conv[f].ids, conv[f].n, 1, 0, 3);
            float *c = run(m, conv[f].ids, conv[f].n, 3, 0, 1);
            const double e = rel_error(c, exact, n);
            if (how[k] == DINTATTN_WEIGHTS_BF16) {
                assert_memory_equal(a, exact, sizeof(float) * n);
            } else if (!(e > 1e-5 && e < 0.05)) {
                fail_msg("%s %s: int8 activations move the logits by %.3g", conv[f].name,
                         dintattn_weights_name(how[k]), e);
            }
            /* one int8 rounding that lands the other way (inputs differ in the last bit between
               prefill and decode) moves a logit by about a 127th of a block's share */
            expect_close("int8 decode, 3 threads", conv[f].name, d, c, n, 2e-3);
            if (prompt_unit(m, how[k], DINTATTN_PRECISION_AUTO) != DINTATTN_PREFILL_AMX_BF16)
                expect_close("int8 prompt", conv[f].name, a, c, n, 2e-3);
            free(exact), free(a), free(d), free(c);
            dintattn_model_free(m);
        }
}

/* dintattn_session_prefill_unit: what a prompt's products run on, as documented at each level
   (dintattn_precision, dintattn_prefill_unit), and the units' names both ways. */
static void test_prefill_unit(void **state)
{
    dintattn_model *m = load_weights(fx[0].name, DINTATTN_WEIGHTS_Q8);
    dintattn_session *e = test_session_p(m, 0, 0, 1, DINTATTN_PRECISION_EXACT);
    dintattn_session *a = test_session_p(m, 0, 0, 1, DINTATTN_PRECISION_AUTO);
    const int avx512 = dintattn_session_kernels(a) >= DINTATTN_KERNELS_AVX512, amx = dintattn_session_kernels(a) == DINTATTN_KERNELS_AMX;
    const int int8 = dintattn_session_kernels(a) >= DINTATTN_KERNELS_AVX2; /* the int8 panels: AVX2 and above */
    dintattn_prefill_unit u, v;
    dintattn_error err;
    int k, bf16_dot = 0;
    (void)state;
    for (k = DINTATTN_PREFILL_SGEMM; k <= DINTATTN_PREFILL_AMX_BF16X3; k++) {
        assert_non_null(dintattn_prefill_unit_name((dintattn_prefill_unit)k));
        assert_int_equal(dintattn_prefill_unit_parse(dintattn_prefill_unit_name((dintattn_prefill_unit)k), &v, &err), DINTATTN_OK);
        assert_int_equal(v, k);
    }
    assert_null(dintattn_prefill_unit_name((dintattn_prefill_unit)k));
    assert_string_equal(dintattn_prefill_unit_name(DINTATTN_PREFILL_INT8_PANELS), "int8 panels");
    /* the tiles where the suite's level allows them (auto, amx) and the CPU and Linux have them */
#ifdef DINTATTN__HAVE_AMX
    assert_int_equal(amx, (test_kernels() == DINTATTN_KERNELS_AUTO || test_kernels() == DINTATTN_KERNELS_AMX) && avx512 &&
                              __builtin_cpu_supports("avx512bf16") && dintattn__amx_ready());
#else
    assert_false(amx);
#endif
    assert_int_equal(dintattn_prefill_unit_parse("tiles", &v, &err), DINTATTN_ERR_ARG);
    assert_int_equal(dintattn_session_prefill_unit(a, "q5", &u, &err), DINTATTN_ERR_ARG);
    assert_non_null(strstr(err.message, "\"q5\""));
    assert_int_equal(dintattn_session_prefill_unit(a, NULL, &u, &err), DINTATTN_ERR_ARG);
    assert_int_equal(dintattn_session_prefill_unit(NULL, "q8", &u, &err), DINTATTN_ERR_ARG);
    assert_int_equal(dintattn_session_prefill_unit(a, "q8", NULL, &err), DINTATTN_ERR_ARG);
    /* EXACT: f32 activations; Q8 and Q4 weights have no f32 panels, so sgemm at every level */
    assert_int_equal(dintattn_session_prefill_unit(e, "q8", &u, &err), DINTATTN_OK);
    assert_int_equal(u, DINTATTN_PREFILL_SGEMM);
    assert_int_equal(dintattn_session_prefill_unit(e, "q4", &u, &err), DINTATTN_OK);
    assert_int_equal(u, DINTATTN_PREFILL_SGEMM);
    /* AUTO: int8 activations on the int8 panels (AVX2 and AVX-512; the rows below), and on AMX's bf16 tiles
       for chunks of DINTATTN__Q_TILES_MIN tokens or more: this model's context (32) holds fewer than
       the default 48, so a session of it reports the tiles only with the threshold lowered
       (dintattn_session_options.tiles_min_tokens) */
    assert_int_equal(dintattn_session_n_ctx(a), 32);
    assert_true(DINTATTN__Q_TILES_MIN > 32);
    assert_int_equal(dintattn_session_prefill_unit(a, "q8", &u, &err), DINTATTN_OK);
    assert_int_equal(u, int8 ? DINTATTN_PREFILL_INT8_PANELS : DINTATTN_PREFILL_ROWS);
    test_session_base.tiles_min_tokens = 32;
    assert_int_equal(prompt_unit(m, DINTATTN_WEIGHTS_Q8, DINTATTN_PRECISION_AUTO),
                     amx ? DINTATTN_PREFILL_AMX_BF16 : int8 ? DINTATTN_PREFILL_INT8_PANELS : DINTATTN_PREFILL_ROWS);
    test_session_base.tiles_min_tokens = 33;
    assert_int_equal(prompt_unit(m, DINTATTN_WEIGHTS_Q8, DINTATTN_PRECISION_AUTO),
                     int8 ? DINTATTN_PREFILL_INT8_PANELS : DINTATTN_PREFILL_ROWS);
    test_session_base.tiles_min_tokens = 0;
    assert_int_equal(dintattn_session_prefill_unit(a, "f32", &u, &err), DINTATTN_OK);
    assert_int_equal(u, avx512 ? DINTATTN_PREFILL_F32_PANELS : DINTATTN_PREFILL_SGEMM);
    dintattn_session_free(e);
    dintattn_session_free(a);
    dintattn_model_free(m);
    /* BF16 weights at AUTO and EXACT: f32 activations in three bf16 parts on AMX tiles where the
       CPU and Linux have them, else the f32 panels (AVX-512) or sgemm */
    m = load_weights(fx[0].name, DINTATTN_WEIGHTS_BF16);
    for (k = 0; k < 2; k++) {
        dintattn_session *b = test_session_p(m, 0, 0, 1, k ? DINTATTN_PRECISION_EXACT : DINTATTN_PRECISION_AUTO);
        assert_int_equal(dintattn_session_prefill_unit(b, "bf16", &u, &err), DINTATTN_OK);
        assert_int_equal(u, amx ? DINTATTN_PREFILL_AMX_BF16X3 : avx512 ? DINTATTN_PREFILL_F32_PANELS : DINTATTN_PREFILL_SGEMM);
        dintattn_session_free(b);
    }
    /* ... at FAST: bf16 activations on the tiles; without them on the bf16 panels where vdpbf16ps
       outruns the FMA (dintattn__bf16_dot_pays, either answer forced here), else widened on the
       f32 panels; rows below AVX-512 */
#ifdef DINTATTN__HAVE_X86
    bf16_dot = __builtin_cpu_supports("avx512bf16");
#endif
    for (k = 0; k < 2; k++) {
        dintattn_session *b;
        test_session_base.bf16_dot = k ? 1 : -1;
        b = test_session_p(m, 0, 0, 1, DINTATTN_PRECISION_FAST);
        assert_int_equal(dintattn_session_prefill_unit(b, "bf16", &u, &err), DINTATTN_OK);
        assert_int_equal(u, amx      ? DINTATTN_PREFILL_AMX_BF16
                            : !avx512 ? DINTATTN_PREFILL_ROWS
                            : !k      ? DINTATTN_PREFILL_F32_PANELS
                            : bf16_dot ? DINTATTN_PREFILL_BF16_PANELS : DINTATTN_PREFILL_ROWS);
        dintattn_session_free(b);
    }
    test_session_base.bf16_dot = 0;
    dintattn_model_free(m);
}

/* Logits of one prefill of n ids at kernel level `kernels` (1 thread, AUTO) */
static float *run_level(const dintattn_model *m, const int *ids, int n, dintattn_kernels kernels)
{
    float *out = (float *)malloc(sizeof(float) * (size_t)dintattn_model_config(m)->vocab_size * (size_t)n);
    dintattn_session_options so;
    dintattn_session *s = NULL;
    dintattn_error err;
    assert_non_null(out);
    memset(&so, 0, sizeof so);
    so.n_threads = 1;
    so.kernels = kernels;
    if (dintattn_session_new(m, &so, &s, &err) != DINTATTN_OK) fail_msg("session: %s", err.message);
    if (dintattn_prefill(s, ids, n, out, 1, &err) != DINTATTN_OK) fail_msg("forward: %s", err.message);
    dintattn_session_free(s);
    return out;
}

/* Where the session has AMX tiles, a prompt's Q8 and Q4 products run on its bf16 tiles at AUTO and
   FAST alike (the weights rounded to bf16, bf16 activations; dintattn__q_tiles): the same logits
   at both, moved from EXACT's (the same weights, f32 activations) by at most about what int8
   activations do (0.26-1.04 times that on these random models; far less on the trained one,
   test_q8_tiles_beat_int8_on_a_trained_model); a prompt in chunks of 8 (tiles again) agrees with
   one prefill of it; decode keeps int8 activations, so it is at most as far from the prompt as
   both are from EXACT. Without tiles, FAST is AUTO for these weights, to the bit. The tiles take
   chunks of DINTATTN__Q_TILES_MIN tokens (48) or more, lowered to 8 here for these models' short
   contexts; at 48 a prompt of these models runs as a session without tiles runs it, to the bit. */
static void test_q8_q4_prompts_on_tiles(void **state)
{
    static const dintattn_weights how[] = {DINTATTN_WEIGHTS_Q8, DINTATTN_WEIGHTS_Q4};
    int f, k, tiles = 0, amx = 0, short_ok = 0;
    (void)state;
    for (f = 0; f < n_conv; f++)
        for (k = 0; k < 2; k++) {
            dintattn_model *m = load_weights(conv[f].name, how[k]);
            dintattn_session *s = test_session_p(m, 0, 0, 1, DINTATTN_PRECISION_AUTO);
            if (dintattn_session_kernels(s) == DINTATTN_KERNELS_AMX) {
                const size_t n = (size_t)conv[f].n * (size_t)dintattn_model_config(m)->vocab_size;
                float *t = run_level(m, conv[f].ids, conv[f].n, DINTATTN_KERNELS_AMX);
                float *v = run_level(m, conv[f].ids, conv[f].n, DINTATTN_KERNELS_AVX512);
                assert_true(conv[f].n < DINTATTN__Q_TILES_MIN);
                assert_memory_equal(t, v, sizeof(float) * n);
                free(t), free(v);
                short_ok++;
            }
            dintattn_session_free(s);
            dintattn_model_free(m);
        }
    test_session_base.tiles_min_tokens = 8;
    for (f = 0; f < n_conv; f++)
        for (k = 0; k < 2; k++) {
            dintattn_model *m = load_weights(conv[f].name, how[k]);
            const size_t n = (size_t)conv[f].n * (size_t)dintattn_model_config(m)->vocab_size;
            dintattn_session *s = test_session_kv(m, 0, 0, 1, DINTATTN_PRECISION_FAST, DINTATTN_KV_F32);
            const dintattn_prefill_unit on = prompt_unit(m, how[k], DINTATTN_PRECISION_FAST);
            float *exact = run_p(m, conv[f].ids, conv[f].n, conv[f].n, 0, 1, DINTATTN_PRECISION_EXACT);
            float *a = run_p(m, conv[f].ids, conv[f].n, conv[f].n, 0, 1, DINTATTN_PRECISION_AUTO);
            float *p = run_p(m, conv[f].ids, conv[f].n, conv[f].n, 0, 2, DINTATTN_PRECISION_FAST);
            const int n8 = conv[f].n / 8 * 8; /* whole chunks of 8: a shorter one would run on rows */
            float *c = run_p(m, conv[f].ids, n8, 8, 0, 1, DINTATTN_PRECISION_FAST);
            float *p8 = run_p(m, conv[f].ids, n8, n8, 0, 1, DINTATTN_PRECISION_FAST);
            float *d = run_p(m, conv[f].ids, conv[f].n, 1, 0, 1, DINTATTN_PRECISION_FAST);
            const double ed = rel_error(d, exact, n), ep = rel_error(p, exact, n);
            amx += dintattn_session_kernels(s) == DINTATTN_KERNELS_AMX;
            dintattn_session_free(s);
            if (on != DINTATTN_PREFILL_AMX_BF16) {
                assert_memory_equal(p, a, sizeof(float) * n);
            } else {
                assert_int_equal(prompt_unit(m, how[k], DINTATTN_PRECISION_AUTO), DINTATTN_PREFILL_AMX_BF16);
                /* AUTO's BF16 / F16 matrices, if the model held any, would multiply f32 */
                if (!(m->held_types & (1u << DINTATTN__W_BF16 | 1u << DINTATTN__W_F16)))
                    assert_memory_equal(a, p, sizeof(float) * n);
                if (!(ep > 1e-6 && ep < 0.05 && ep < 2 * ed))
                    fail_msg("%s %s: bf16 tiles move the logits by %.3g, int8 activations by %.3g", conv[f].name,
                             dintattn_weights_name(how[k]), ep, ed);
                expect_close("tiles, chunks of 8", conv[f].name, c, p8, (size_t)n8 * (size_t)dintattn_model_config(m)->vocab_size, 2e-3);
                /* two roads from EXACT's logits: apart by at most the sum of their lengths */
                expect_close("decode (int8) against the prompt (bf16)", conv[f].name, d, p, n, 1.1 * (ed + ep));
                tiles++;
            }
            free(exact), free(a), free(p), free(c), free(p8), free(d);
            dintattn_model_free(m);
        }
    test_session_base.tiles_min_tokens = 0;
    assert_int_equal(tiles, amx);
    assert_int_equal(short_ok, amx);
#ifdef DINTATTN__HAVE_AMX
    if (test_kernels() == DINTATTN_KERNELS_AUTO && dintattn__kernels_for(DINTATTN_KERNELS_AUTO)->level == DINTATTN_KERNELS_AVX512 &&
        dintattn__amx_ready() && __builtin_cpu_supports("avx512bf16"))
        assert_true(amx > 0);
#endif
}

/* Why AUTO takes a Q8 prompt to the tiles (dintattn__q_tiles): on the shipped model, which was
   trained (at Q8, 96 tokens of Genesis), the tiles' logits are closer to EXACT's than int8
   activations' (decode's, as a session without tiles would run the prompt): relative RMS error
   under 0.6 and KL under 0.4 times int8's (on a Xeon with AMX the ratios are 0.32 and 0.08, so
   the bounds leave room for other CPUs' rounding). Skipped where the session has no tiles. */
static void test_q8_tiles_beat_int8_on_a_trained_model(void **state)
{
    static const char text[] =
        "In the beginning God created the heaven and the earth. And the earth was without form, and void; and "
        "darkness was upon the face of the deep. And the Spirit of God moved upon the face of the waters. And God "
        "said, Let there be light: and there was light. And God saw the light, that it was good: and God divided the "
        "light from the darkness. And God called the light Day, and the darkness he called Night. And the evening "
        "and the morning were the first day.";
    dintattn_load_options lo;
    dintattn_model *m = NULL;
    dintattn_tokenizer *tok = NULL;
    dintattn_error err;
    int ids[256], n = 0, V, t, i, k;
    float *exact, *tiles, *int8;
    double kl[2] = {0, 0}, e[2];
    (void)state;
    memset(&lo, 0, sizeof lo);
    lo.weights = DINTATTN_WEIGHTS_Q8;
    if (dintattn_model_load("models/dint-kjv.safetensors", &lo, &m, &err)) fail_msg("shipped model: %s", err.message);
    if (prompt_unit(m, DINTATTN_WEIGHTS_Q8, DINTATTN_PRECISION_AUTO) != DINTATTN_PREFILL_AMX_BF16) {
        dintattn_model_free(m);
        skip();
    }
    assert_int_equal(dintattn_tokenizer_from_model(m, &tok, &err), DINTATTN_OK);
    assert_int_equal(dintattn_tokenizer_encode(tok, text, strlen(text), 0, ids, 256, &n, &err), DINTATTN_OK);
    assert_true(n >= 64 && n <= 256);
    V = dintattn_model_config(m)->vocab_size;
    exact = run_p(m, ids, n, n, 0, 2, DINTATTN_PRECISION_EXACT);
    tiles = run_p(m, ids, n, n, 0, 2, DINTATTN_PRECISION_AUTO);
    int8 = run_p(m, ids, n, 1, 0, 2, DINTATTN_PRECISION_AUTO);
    for (t = 0; t < n; t++)
        for (k = 0; k < 2; k++) {
            const float *x = exact + (size_t)t * V, *y = (k ? int8 : tiles) + (size_t)t * V;
            double mx = -HUGE_VAL, my = -HUGE_VAL, sx = 0, sy = 0;
            for (i = 0; i < V; i++) mx = x[i] > mx ? x[i] : mx, my = y[i] > my ? y[i] : my;
            for (i = 0; i < V; i++) sx += exp(x[i] - mx), sy += exp(y[i] - my);
            for (i = 0; i < V; i++) /* KL(exact || y) */
                kl[k] += exp(x[i] - mx) / sx * ((x[i] - mx - log(sx)) - (y[i] - my - log(sy))) / n;
        }
    e[0] = rel_error(tiles, exact, (size_t)n * V);
    e[1] = rel_error(int8, exact, (size_t)n * V);
    if (!(e[0] > 1e-6 && e[0] < 0.6 * e[1] && kl[0] < 0.4 * kl[1]))
        fail_msg("tiles: error %.3g, KL %.3g; int8: %.3g, %.3g", e[0], kl[0], e[1], kl[1]);
    print_message("tiles: error %.3g, KL %.3g; int8: %.3g, %.3g (%d tokens)\n", e[0], kl[0], e[1], kl[1], n);
    free(exact), free(tiles), free(int8);
    dintattn_tokenizer_free(tok);
    dintattn_model_free(m);
}

static unsigned char *edited_file(const char *name, const char *from, const char *to, size_t *out_size);

/* Each edit of `file`'s header makes the load fail with its code and message. */
typedef struct scale_case {
    const char *from, *to, *says;
    dintattn_result code;
} scale_case;

static void check_refused_edits(const char *file, const scale_case *cases, size_t n)
{
    size_t k;
    for (k = 0; k < n; k++) {
        size_t size;
        unsigned char *bytes = edited_file(file, cases[k].from, cases[k].to, &size);
        dintattn_model *m = NULL;
        dintattn_error err;
        assert_int_equal(dintattn_model_load_memory(bytes, size, NULL, &m, &err), cases[k].code);
        assert_null(m);
        if (!strstr(err.message, cases[k].says)) fail_msg("'%s' does not say '%s'", err.message, cases[k].says);
        free(bytes);
    }
}

/* A Q8 matrix without its scales, or with scales of the wrong shape, or an I8 vector, is refused. */
static void test_q8_file_needs_its_scales(void **state)
{
    static const scale_case cases[] = {
        {"\"layers.0.attn.wq1.scale\"", "\"layers.0.attn.wq1.scalf\"", "layers.0.attn.wq1.scale",
         DINTATTN_ERR_MISSING_TENSOR},
        {"\"shape\":[32,2]", "\"shape\":[64,1]", ".scale' must have shape [32, 2]", DINTATTN_ERR_SHAPE},
        /* the same 32 bytes as I8: only weight matrices may be Q8 */
        {"\"layers.0.attn.lambda_q1\":{\"dtype\":\"F32\",\"shape\":[8]",
         "\"layers.0.attn.lambda_q1\":{\"dtype\":\"I8\",\"shape\":[32]", "only weight matrices may be Q8",
         DINTATTN_ERR_DTYPE},
    };
    (void)state;
    check_refused_edits("conv_dint_grouped_gqa_q8file", cases, sizeof cases / sizeof cases[0]);
}

/* A Q4 matrix (U8, half as wide as the weights) without its scales, with scales of another
   shape, with the weights' own width (the same bytes as [64, 16]), or a U8 vector, is refused. */
static void test_q4_file_needs_its_scales(void **state)
{
    static const scale_case cases[] = {
        {"\"layers.0.attn.wq1.scale\"", "\"layers.0.attn.wq1.scalf\"", "layers.0.attn.wq1.scale",
         DINTATTN_ERR_MISSING_TENSOR},
        {"\"layers.0.attn.wq1.scale\":{\"dtype\":\"F32\",\"shape\":[32,2]",
         "\"layers.0.attn.wq1.scale\":{\"dtype\":\"F32\",\"shape\":[64,1]", ".scale' must have shape [32, 2]",
         DINTATTN_ERR_SHAPE},
        {"\"layers.0.attn.wq1\":{\"dtype\":\"U8\",\"shape\":[32,32]",
         "\"layers.0.attn.wq1\":{\"dtype\":\"U8\",\"shape\":[64,16]", "(U8 (Q4)) must have shape [32, 32]",
         DINTATTN_ERR_SHAPE},
        {"\"layers.0.attn.lambda_q1\":{\"dtype\":\"F32\",\"shape\":[8]",
         "\"layers.0.attn.lambda_q1\":{\"dtype\":\"U8\",\"shape\":[32]", "only weight matrices may be Q8 or Q4",
         DINTATTN_ERR_DTYPE},
    };
    (void)state;
    check_refused_edits("conv_dint_grouped_gqa_q4file", cases, sizeof cases / sizeof cases[0]);
}

/* weights = F32 on an F32 file reads it in place, exactly as FILE does: identical logits, and
   both match the unconverted reference (NAME.logits). FILE copies no matrix of an F32 or BF16
   file (only vectors may be copied). */
static void test_f32_weights_equal_file_weights(void **state)
{
    int f, f32_files = 0;
    (void)state;
    for (f = 0; f < n_conv; f++) {
        dintattn_model *a = load_weights(conv[f].name, DINTATTN_WEIGHTS_FILE);
        float *ref = read_logits(&conv[f], ".logits", a);
        size_t n = (size_t)conv[f].n * (size_t)dintattn_model_config(a)->vocab_size;
        float *la = run(a, conv[f].ids, conv[f].n, conv[f].n, 0, 1), *da = run(a, conv[f].ids, conv[f].n, 1, 0, 1);
        expect_close("file prefill", conv[f].name, la, ref, n, TOL_REFERENCE);
        expect_close("file decode", conv[f].name, da, ref, n, TOL_REFERENCE);
        assert_true(dintattn_model_owned_bytes(a) < dintattn_model_weight_bytes(a) / 10);
        if (strstr(conv[f].name, "_f32")) {
            dintattn_model *b = load_weights(conv[f].name, DINTATTN_WEIGHTS_F32);
            float *lb = run(b, conv[f].ids, conv[f].n, conv[f].n, 0, 1), *db = run(b, conv[f].ids, conv[f].n, 1, 0, 1);
            assert_memory_equal(la, lb, sizeof(float) * n);
            assert_memory_equal(da, db, sizeof(float) * n);
            assert_int_equal(dintattn_model_weight_bytes(a), dintattn_model_weight_bytes(b));
            assert_true(dintattn_model_owned_bytes(b) < dintattn_model_weight_bytes(b) / 10);
            free(lb);
            free(db);
            dintattn_model_free(b);
            f32_files++;
        }
        free(ref);
        free(la);
        free(da);
        dintattn_model_free(a);
    }
    assert_true(f32_files >= 3);
}

/* Q8 holds about 1.125 bytes per weight (int8 + one f32 scale per 32) against F32's 4, in memory
   the model owns; matrices whose rows are not a multiple of 32 long (here only wo, rows of
   n_heads * v_head_dim) stay at 4 bytes. */
static void test_q8_weights_are_small(void **state)
{
    int f;
    (void)state;
    for (f = 0; f < n_conv; f++) {
        dintattn_model *q = load_weights(conv[f].name, DINTATTN_WEIGHTS_Q8);
        dintattn_model *w = load_weights(conv[f].name, DINTATTN_WEIGHTS_F32);
        const dintattn_config *c = dintattn_model_config(w);
        size_t qb = dintattn_model_weight_bytes(q), wb = dintattn_model_weight_bytes(w), kept = 0;
        assert_true(c->dim % 32 == 0 && c->hidden_dim % 32 == 0);
        if (c->n_heads * c->v_head_dim % 32)
            kept = sizeof(float) * (size_t)c->n_layers * (size_t)c->dim * (size_t)(c->n_heads * c->v_head_dim);
        if (!(qb < 0.35 * (double)(wb - kept) + (double)kept))
            fail_msg("%s: q8 weight bytes %lu, f32 %lu (%lu of them not quantizable)", conv[f].name,
                     (unsigned long)qb, (unsigned long)wb, (unsigned long)kept);
        assert_true(dintattn_model_owned_bytes(q) > 0);
        dintattn_model_free(q);
        dintattn_model_free(w);
    }
}

/* A weights value that is no dintattn_weights is refused, naming the option. */
static void test_bad_weights_option_is_refused(void **state)
{
    static const int bad[] = {7, DINTATTN_WEIGHTS_Q4 + 1, -1};
    int k;
    (void)state;
    for (k = 0; k < 3; k++) {
        dintattn_model *m = (dintattn_model *)&m; /* anything but NULL: a refused load sets it to NULL */
        dintattn_error err;
        dintattn_load_options opt;
        memset(&opt, 0, sizeof opt);
        opt.weights = (dintattn_weights)bad[k];
        assert_int_equal(dintattn_model_load(FIXTURES "dint_softmax_f32.safetensors", &opt, &m, &err), DINTATTN_ERR_ARG);
        assert_null(m);
        assert_non_null(strstr(err.message, "weights"));
    }
}

/* --- the attention rows, through the hook ------------------------------------------------ */

typedef struct row_stats {
    int rows;
    double worst_sum_error, worst_future;
} row_stats;

static void sum_rows(void *user, int layer, int head, int pos, const float *w, int n_keys)
{
    row_stats *st = (row_stats *)user;
    double sum = 0;
    int j;
    (void)layer;
    (void)head;
    assert_int_equal(n_keys, pos + 1); /* causal: exactly the keys 0..pos */
    for (j = 0; j < n_keys; j++) sum += w[j];
    if (fabs(sum - 1) > st->worst_sum_error) st->worst_sum_error = fabs(sum - 1);
    st->rows++;
}

/* DINT with gamma = lambda: every row of A1 - lambda A2 + lambda I sums to 1 (docs/format.md section 1);
   standard attention's rows (A1) too. */
/* dintattn_logprobs against log-softmax (in double, here) of the float64 reference's logits, on
   every fixture, in one call and after a prefix with n_batch 3 (rows from several steps). */
static void test_logprobs_match_reference(void **state)
{
    int f;
    (void)state;
    for (f = 0; f < n_fx; f++) {
        dintattn_model *m = load_fixture(fx[f].name, DINTATTN_QK_AUTO);
        const int V = dintattn_model_config(m)->vocab_size, n = fx[f].n, split = n / 3;
        float *ref = read_logits(&fx[f], ".logits", m), *got = (float *)malloc(sizeof(float) * (size_t)n);
        int pass, i;
        assert_non_null(got);
        for (pass = 0; pass < 2; pass++) {
            dintattn_session *s = session(m, pass ? 3 : 0, 1);
            dintattn_error err;
            const int from = pass ? split : 0; /* pass 1: tokens before `from` prefilled first */
            if (from > 0 && dintattn_prefill(s, fx[f].ids, from, NULL, 0, &err) != DINTATTN_OK) fail_msg("%s", err.message);
            if (dintattn_logprobs(s, fx[f].ids + from, n - from, got, &err) != DINTATTN_OK) fail_msg("%s", err.message);
            assert_int_equal(dintattn_session_pos(s), n);
            for (i = from; i + 1 < n; i++) {
                const float *row = ref + (size_t)i * V;
                double mx = row[0], sum = 0.0, want;
                int j;
                for (j = 1; j < V; j++) mx = row[j] > mx ? row[j] : mx;
                for (j = 0; j < V; j++) sum += exp((double)row[j] - mx);
                want = row[fx[f].ids[i + 1]] - mx - log(sum);
                if (!(fabs(got[i - from] - want) <= 1e-4 * (1.0 + fabs(want))))
                    fail_msg("%s: logprob of token %d is %.7g, the reference gives %.7g", fx[f].name, i + 1,
                             got[i - from], want);
            }
            dintattn_session_free(s);
        }
        assert_true(isnan(dintattn_logprob_of(ref, V, V)) && isnan(dintattn_logprob_of(ref, V, -1)));
        free(got);
        free(ref);
        dintattn_model_free(m);
    }
}

/* dintattn_session_copy: a context prefilled in one session and copied into another (of a larger
   context, used before on the whole text so its DINT sums and cache hold other tokens) continues
   there exactly as in the first, for every fixture and KV cache type: the continuation's logits
   are bit-identical in both, and (f32 cache) match the reference. Refusals leave dst unchanged. */
static void test_session_copy_continues(void **state)
{
    static const dintattn_kv_type kvs[] = {DINTATTN_KV_F32, DINTATTN_KV_BF16, DINTATTN_KV_Q8};
    int f, k;
    (void)state;
    for (f = 0; f < n_fx; f++) {
        dintattn_model *m = load_fixture(fx[f].name, DINTATTN_QK_AUTO);
        const size_t V = (size_t)dintattn_model_config(m)->vocab_size;
        const int n = fx[f].n, split = n / 2, rest = n - split;
        float *ref = read_logits(&fx[f], ".logits", m);
        float *a = (float *)malloc(sizeof(float) * V * (size_t)rest), *b = (float *)malloc(sizeof(float) * V * (size_t)rest);
        assert_true(a && b && split > 0);
        for (k = 0; k < 3; k++) {
            dintattn_session *src = test_session_kv(m, n, 0, 1, DINTATTN_PRECISION_EXACT, kvs[k]);
            dintattn_session *dst = test_session_kv(m, n + 7, 0, 1, DINTATTN_PRECISION_EXACT, kvs[k]);
            dintattn_session *other = test_session_kv(m, n, 0, 1, DINTATTN_PRECISION_EXACT, kvs[(k + 1) % 3]);
            dintattn_error err;
            if (dintattn_prefill(dst, fx[f].ids + split, rest, NULL, 0, &err) ||
                dintattn_prefill(dst, fx[f].ids, split, NULL, 0, &err) || dintattn_prefill(src, fx[f].ids, split, NULL, 0, &err))
                fail_msg("%s", err.message);
            assert_int_equal(dintattn_session_copy(dst, other, &err), DINTATTN_ERR_ARG); /* another cache type */
            assert_non_null(strstr(err.message, "types"));
            assert_int_equal(dintattn_session_pos(dst), n);
            assert_int_equal(dintattn_session_copy(dst, src, &err), DINTATTN_OK);
            assert_int_equal(dintattn_session_copy(src, src, &err), DINTATTN_OK);
            assert_int_equal(dintattn_session_pos(dst), split);
            if (dintattn_prefill(src, fx[f].ids + split, rest, a, 1, &err) || dintattn_prefill(dst, fx[f].ids + split, rest, b, 1, &err))
                fail_msg("%s", err.message);
            assert_memory_equal(a, b, sizeof(float) * V * (size_t)rest);
            if (kvs[k] == DINTATTN_KV_F32) expect_close("copied session", fx[f].name, b, ref + (size_t)split * V, V * (size_t)rest, TOL_REFERENCE);
            assert_int_equal(dintattn_session_copy(other, dst, &err), DINTATTN_ERR_ARG);
            dintattn_session_free(other);
            other = test_session_kv(m, split, 0, 1, DINTATTN_PRECISION_EXACT, kvs[k]); /* too small */
            assert_int_equal(dintattn_session_copy(other, dst, &err), DINTATTN_ERR_CONTEXT);
            assert_int_equal(dintattn_session_pos(other), 0);
            assert_int_equal(dintattn_session_copy(NULL, dst, &err), DINTATTN_ERR_ARG);
            dintattn_session_free(other);
            dintattn_session_free(dst);
            dintattn_session_free(src);
        }
        if (n_fx > 1) { /* sessions of different models */
            dintattn_model *m2 = load_fixture(fx[(f + 1) % n_fx].name, DINTATTN_QK_AUTO);
            dintattn_session *s1 = test_session_kv(m, 0, 0, 1, DINTATTN_PRECISION_EXACT, DINTATTN_KV_F32);
            dintattn_session *s2 = test_session_kv(m2, 0, 0, 1, DINTATTN_PRECISION_EXACT, DINTATTN_KV_F32);
            dintattn_error err;
            assert_int_equal(dintattn_session_copy(s2, s1, &err), DINTATTN_ERR_ARG);
            assert_non_null(strstr(err.message, "different models"));
            dintattn_session_free(s1);
            dintattn_session_free(s2);
            dintattn_model_free(m2);
        }
        free(a);
        free(b);
        free(ref);
        dintattn_model_free(m);
    }
}

/* The KV cache in bf16 and int8 (dintattn_kv_type) against the reference with its keys and
   values rounded the same way (NAME.kvbf16.logits, .kvq8.logits, which differ from the f32
   cache's by more than 1e-3): prefill, decode, chunks, n_batch 4 and two threads. */
static void test_kv_cache_types_match_reference(void **state)
{
    static const dintattn_kv_type kvs[] = {DINTATTN_KV_BF16, DINTATTN_KV_Q8};
    static const char *const ext[] = {".kvbf16.logits", ".kvq8.logits"};
    int f, k, mode;
    (void)state;
    assert_true(n_conv >= 4);
    for (f = 0; f < n_conv; f++) {
        dintattn_model *m = load_fixture(conv[f].name, DINTATTN_QK_AUTO);
        const size_t N = (size_t)conv[f].n * (size_t)dintattn_model_config(m)->vocab_size;
        for (k = 0; k < 2; k++) {
            float *ref = read_logits(&conv[f], ext[k], m), *f32 = read_logits(&conv[f], ".logits", m);
            assert_true(rel_error(f32, ref, N) > 1e-3); /* an f32 cache would fail */
            for (mode = 0; mode < 5; mode++) {
                const int chunk = mode == 1 ? 1 : mode == 2 ? 3 : conv[f].n;
                float *got = run_kv(m, conv[f].ids, conv[f].n, chunk, mode == 3 ? 4 : 0, mode == 4 ? 2 : 1,
                                    DINTATTN_PRECISION_EXACT, kvs[k]);
                expect_close(ext[k], conv[f].name, got, ref, N, TOL_KV);
                free(got);
            }
            free(f32);
            free(ref);
        }
        dintattn_model_free(m);
    }
}

/* A BF16 / Q8 cache written row by row and read back in tiles, against double sums over the rows
   it holds: each row is the value rounded (bf16: within 2^-8, low 16 bits zero; q8: within half a
   step of max|row| / 127), and the scores and W @ V equal the sums: one query with
   DINTATTN__KV_TILE rows a tile and the partial sums added, or (widths of 64 and 128) the level's
   kernels reading the rows in place; three with DINTATTN__KV_PTILE and sgemm. */
static void test_kv_tiles_read_the_cache(void **state)
{
    const dintattn__kernels *k = dintattn__kernels_for(test_kernels());
    enum { DMAX = 128, T = 700, NB = 3 };
    static const int widths[] = {40, 64, 128};
    const int width = 650;
    float *all = (float *)malloc(sizeof(float) * T * DMAX), *buf = (float *)malloc(sizeof(float) * (DINTATTN__KV_PTILE + 1) * DMAX);
    float *A = (float *)malloc(sizeof(float) * NB * width), *Wt = (float *)malloc(sizeof(float) * NB * width);
    float row[DMAX], Q[NB * DMAX], O[NB * DMAX];
    int kv, h, pos, i, j, t, nb, D, wi;
    (void)state;
    assert_true(all && buf && A && Wt);
    for (wi = 0; wi < 3; wi++)
    for (D = widths[wi], kv = DINTATTN_KV_BF16; kv <= DINTATTN_KV_Q8; kv++) {
        dintattn__cache c;
        dintattn__kv_read rd;
        c.type = (dintattn_kv_type)kv, c.heads = 2, c.width = D, c.n_ctx = T;
        c.data = malloc(dintattn__kv_elem[kv] * 2 * T * D);
        c.scale = (float *)malloc(sizeof(float) * 2 * T);
        assert_true(c.data && c.scale);
        for (h = 0; h < 2; h++)
            for (pos = 0; pos < T; pos++) {
                for (i = 0; i < D; i++) row[i] = (float)(sin(0.37 * pos + 1.3 * i + h) * (1 + pos % 5));
                dintattn__cache_put(&c, 0, h, pos, row);
            }
        assert_true(dintattn__cache_rows(k, &c, 0, 1, 0, T, all) == all);
        for (pos = 0; pos < T; pos++) {
            float amax = 0;
            for (i = 0; i < D; i++) {
                const double x = sin(0.37 * pos + 1.3 * i + 1) * (1 + pos % 5);
                amax = (float)fabs(x) > amax ? (float)fabs(x) : amax;
            }
            for (i = 0; i < D; i++) {
                const double x = (float)(sin(0.37 * pos + 1.3 * i + 1) * (1 + pos % 5)), y = all[(size_t)pos * D + i];
                uint32_t u;
                memcpy(&u, &all[(size_t)pos * D + i], 4);
                if (kv == DINTATTN_KV_BF16) assert_true((u & 0xFFFF) == 0 && fabs(y - x) <= fabs(x) / 256);
                else assert_true(fabs(y - x) <= amax / 127 * 0.5001 && c.scale[T + pos] == amax / 127.0f);
            }
        }
        for (i = 0; i < NB * D; i++) Q[i] = (float)cos(0.7 * i);
        for (i = 0; i < NB * width; i++) Wt[i] = (float)cos(0.11 * i) / width;
        for (nb = 1; nb <= NB; nb += NB - 1) {
            memset(&rd, 0, sizeof rd); /* no pool: converted on this thread */
            rd.k = k, rd.l = 0, rd.width = width, rd.buf = buf, rd.o_tile = buf + (size_t)DINTATTN__KV_TILE * D;
            rd.rows = nb == 1; /* decode's kernels, else sgemm */
            rd.tile = nb == 1 ? DINTATTN__KV_TILE : DINTATTN__KV_PTILE;
            dintattn__scores_block(&rd, &c, 1, A, Q, D, nb, 0.5f);
            dintattn__wv_block(&rd, &c, 1, O, D, Wt, nb);
            for (t = 0; t < nb; t++) {
                for (j = 0; j < width; j++) {
                    double want = 0;
                    for (i = 0; i < D; i++) want += (double)Q[t * D + i] * all[(size_t)j * D + i];
                    if (!(fabs(A[(size_t)t * width + j] - 0.5 * want) <= 1e-5 * (1 + fabs(want))))
                        fail_msg("kv %s, width %d, %d queries: score %d of query %d is %.7g, want %.7g",
                                 dintattn_kv_name((dintattn_kv_type)kv), D, nb, j, t, A[(size_t)t * width + j], 0.5 * want);
                }
                for (i = 0; i < D; i++) {
                    double want = 0, mag = 0;
                    for (j = 0; j < width; j++) {
                        want += (double)Wt[(size_t)t * width + j] * all[(size_t)j * D + i];
                        mag += fabs((double)Wt[(size_t)t * width + j] * all[(size_t)j * D + i]);
                    }
                    if (!(fabs(O[t * D + i] - want) <= 1e-5 * mag))
                        fail_msg("kv %s, width %d, %d queries: W @ V [%d][%d] is %.7g, want %.7g",
                                 dintattn_kv_name((dintattn_kv_type)kv), D, nb, t, i, O[t * D + i], want);
                }
            }
        }
        free(c.data);
        free(c.scale);
    }
    free(all), free(buf), free(A), free(Wt);
}

static void test_dint_rows_sum_to_one(void **state)
{
    int f, models = 0;
    (void)state;
    for (f = 0; f < n_fx; f++) {
        dintattn_model *m = load_fixture(fx[f].name, DINTATTN_QK_AUTO);
        const dintattn_config *c = dintattn_model_config(m);
        row_stats st;
        dintattn_session *s;
        dintattn_error err;
        if (c->attention == DINTATTN_ATTN_DIFF) {
            dintattn_model_free(m);
            continue;
        }
        memset(&st, 0, sizeof st);
        s = session(m, 5, 1);
        dintattn_session_set_attn_hook(s, sum_rows, &st);
        assert_int_equal(dintattn_prefill(s, fx[f].ids, fx[f].n, NULL, 0, &err), DINTATTN_OK);
        assert_int_equal(st.rows, c->n_layers * c->n_heads * fx[f].n);
        if (st.worst_sum_error > 1e-5) fail_msg("%s: a row sums to 1 %+.3g", fx[f].name, st.worst_sum_error);
        dintattn_session_free(s);
        dintattn_model_free(m);
        models++;
    }
    assert_true(models >= 5);
}

/* What dintattn_session_inspect saw: rows checked as they come, W kept per (layer, head, pos). */
typedef struct inspected {
    const dintattn_config *c;
    int rows, order_ok, last_key;
    double worst;          /* largest error of W against its terms, or of a softmax's sum */
    float *W;              /* [n_layers][n_heads][n][n] */
    int n;
} inspected;

static void inspect_row(void *user, const dintattn_attn_row *r)
{
    inspected *in = (inspected *)user;
    const dintattn_config *c = in->c;
    double s1 = 0, s2 = 0, sI = 0, e;
    int j, key = (r->layer * c->n_heads + r->head) * in->n + r->pos;
    in->rows++;
    /* a decode call shows its rows in (layer, head) order */
    if (in->last_key >= 0 && in->last_key % in->n == r->pos && key <= in->last_key) in->order_ok = 0;
    in->last_key = key;
    assert_int_equal(r->n_keys, r->pos + 1);
    assert_true((r->A2 != NULL) == (c->attention != DINTATTN_ATTN_STANDARD));
    assert_true((r->integral != NULL) == (c->attention == DINTATTN_ATTN_DINT));
    for (j = 0; j < r->n_keys; j++) {
        double want = r->A1[j];
        s1 += r->A1[j];
        if (r->A2) want -= (double)r->lambda * r->A2[j], s2 += r->A2[j];
        if (r->integral) want += (double)r->lambda * r->integral[j], sI += r->integral[j];
        e = fabs(want - r->W[j]);
        if (e > in->worst) in->worst = e;
        in->W[(size_t)key * in->n + j] = r->W[j];
    }
    e = fabs(s1 - 1) > fabs(r->A2 ? s2 - 1 : 0) ? fabs(s1 - 1) : fabs(s2 - 1);
    if (r->A2 && e > in->worst) in->worst = e;
    if (r->integral && c->integral == DINTATTN_INTEGRAL_SOFTMAX && fabs(sI - 1) > in->worst) in->worst = fabs(sI - 1);
}

/* Attention inspection: every row's W equals A1 - lambda A2 + lambda I from the terms it shows
   (A1, A2 and a softmaxed I sum to 1), decode shows the rows prefill showed, the layer, head and
   position filters choose exactly those rows, and the stats of a row equal sums done here. */
static void test_attention_inspection(void **state)
{
    static const char *const names[] = {"dint_softmax_f32", "diff_3layer_depth_f32", "conv_standard_gqa_dv12_f32",
                                        "conv_dint_grouped_gqa_f32"};
    int k;
    (void)state;
    for (k = 0; k < 4; k++) {
        dintattn_model *m = load_fixture(names[k], DINTATTN_QK_AUTO);
        const dintattn_config *c = dintattn_model_config(m);
        const fixture *f = find_fixture(names[k]);
        const size_t cells = (size_t)c->n_layers * c->n_heads * f->n * f->n;
        inspected a, b;
        dintattn_inspect ins;
        dintattn_session *s;
        dintattn_error err;
        unsigned char layers[64], heads[64];
        int t;
        memset(&a, 0, sizeof a), memset(&b, 0, sizeof b), memset(&ins, 0, sizeof ins);
        a.c = b.c = c, a.n = b.n = f->n, a.order_ok = b.order_ok = 1, a.last_key = b.last_key = -1;
        a.W = (float *)calloc(cells, sizeof(float)), b.W = (float *)calloc(cells, sizeof(float));
        assert_true(a.W && b.W);
        ins.row = inspect_row, ins.user = &a;
        s = session(m, 0, 2);
        assert_int_equal(dintattn_session_inspect(s, &ins, &err), DINTATTN_OK);
        assert_int_equal(dintattn_prefill(s, f->ids, f->n, NULL, 0, &err), DINTATTN_OK);
        assert_int_equal(a.rows, c->n_layers * c->n_heads * f->n);
        dintattn_session_free(s);
        s = session(m, 0, 2); /* decode, two threads: the rows come from the calling thread */
        ins.user = &b;
        assert_int_equal(dintattn_session_inspect(s, &ins, &err), DINTATTN_OK);
        for (t = 0; t < f->n; t++) assert_int_equal(dintattn_decode(s, f->ids[t], NULL, &err), DINTATTN_OK);
        assert_int_equal(b.rows, a.rows);
        assert_true(b.order_ok);
        if (a.worst > 1e-5 || b.worst > 1e-5) fail_msg("%s: W against its terms: %.3g", names[k], a.worst + b.worst);
        expect_close("decode's rows", names[k], b.W, a.W, cells, TOL_SELF);
        /* filters: the last layer, head 1, positions [2, 5) */
        memset(layers, 0, sizeof layers), memset(heads, 0, sizeof heads);
        layers[c->n_layers - 1] = 1, heads[1] = 1;
        ins.layers = layers, ins.heads = heads, ins.pos_from = 2, ins.pos_to = 5;
        memset(b.W, 0, cells * sizeof(float)), b.rows = 0;
        dintattn_session_reset(s);
        assert_int_equal(dintattn_session_inspect(s, &ins, &err), DINTATTN_OK);
        assert_int_equal(dintattn_prefill(s, f->ids, f->n, NULL, 0, &err), DINTATTN_OK);
        assert_int_equal(b.rows, 3);
        for (t = 2; t < 5; t++) {
            const size_t key = ((size_t)(c->n_layers - 1) * c->n_heads + 1) * f->n + t;
            expect_close("filtered row", names[k], b.W + key * f->n, a.W + key * f->n, (size_t)t + 1, TOL_SELF);
        }
        /* off: no more rows */
        assert_int_equal(dintattn_session_inspect(s, NULL, &err), DINTATTN_OK);
        assert_int_equal(dintattn_decode(s, f->ids[0], NULL, &err), DINTATTN_OK);
        assert_int_equal(b.rows, 3);
        ins.pos_from = -1;
        assert_int_equal(dintattn_session_inspect(s, &ins, &err), DINTATTN_ERR_ARG);
        { /* stats of the last position's row of layer 0, head 0, with a span [1, 3) */
            const float *w = a.W + (size_t)(f->n - 1) * f->n;
            const int spans[4] = {1, 3, 2, 4}, nk = f->n;
            dintattn_attn_stats st;
            double sum = 0, neg = 0, abs_sum = 0, span = 0, ent = 0;
            int j, negs = 0;
            for (j = 0; j < nk; j++) {
                sum += w[j], abs_sum += fabs(w[j]);
                if (w[j] < 0) neg += w[j], negs++;
                if (j >= 1 && j < 4) span += w[j];
            }
            for (j = 0; j < nk; j++)
                if (w[j] != 0) ent -= fabs(w[j]) / abs_sum * log(fabs(w[j]) / abs_sum);
            dintattn_attn_stats_of(w, nk, spans, 2, &st);
            assert_true(fabs(st.sum - sum) < 1e-9 && fabs(st.neg_sum - neg) < 1e-9 && fabs(st.entropy - ent) < 1e-9);
            assert_true(fabs(st.span_mass - span) < 1e-9 && fabs(st.span_mass + st.rest_mass - sum) < 1e-9);
            assert_true(fabs(st.neg_share - (double)negs / nk) < 1e-12);
        }
        dintattn_session_free(s);
        free(a.W), free(b.W);
        dintattn_model_free(m);
    }
}

/* The future never changes the past: logits at position n do not move when tokens follow. */
static void test_appending_tokens_keeps_past_logits(void **state)
{
    dintattn_model *m = load_fixture("dint_softmax_f32", DINTATTN_QK_AUTO);
    int ids[24], i;
    size_t V = (size_t)dintattn_model_config(m)->vocab_size;
    float *shortl, *longl;
    (void)state;
    for (i = 0; i < 24; i++) ids[i] = (i * 7 + 3) % (int)V;
    shortl = run(m, ids, 10, 10, 0, 1);
    longl = run(m, ids, 24, 24, 0, 1);
    expect_close("prefix", "dint_softmax_f32", longl, shortl, 10 * V, TOL_SELF);
    /* and the appended tokens did change something: the rows after 10 differ from row 9 */
    assert_true(rel_error(longl + 10 * V, longl + 9 * V, V) > 1e-3);
    free(shortl);
    free(longl);
    dintattn_model_free(m);
}

/* Multi-turn: prefill, decode, prefill again on the same session == one prefill; and after a
   reset the session replays identically (the integral state S is cleared). */
static void test_multi_turn_and_reset(void **state)
{
    dintattn_model *m = load_fixture("dint_shared_grouped_gqa_bf16", DINTATTN_QK_AUTO);
    size_t V = (size_t)dintattn_model_config(m)->vocab_size;
    int ids[16] = {1, 5, 9, 2, 7, 3, 3, 8, 4, 6, 1, 2, 9, 9, 0, 5};
    float *one = run(m, ids, 16, 16, 0, 1), *turns = (float *)malloc(sizeof(float) * V * 16);
    dintattn_session *s = session(m, 0, 1);
    dintattn_error err;
    int pass, i;
    (void)state;
    for (pass = 0; pass < 2; pass++) {
        assert_int_equal(dintattn_prefill(s, ids, 5, turns, 1, &err), DINTATTN_OK);
        for (i = 5; i < 8; i++) assert_int_equal(dintattn_decode(s, ids[i], turns + i * V, &err), DINTATTN_OK);
        assert_int_equal(dintattn_prefill(s, ids + 8, 8, turns + 8 * V, 1, &err), DINTATTN_OK);
        expect_close("multi-turn", "dint_shared_grouped_gqa_bf16", turns, one, 16 * V, TOL_SELF);
        dintattn_session_reset(s);
        assert_int_equal(dintattn_session_pos(s), 0);
    }
    dintattn_session_free(s);
    free(one);
    free(turns);
    dintattn_model_free(m);
}

/* last-token logits (all_logits = 0) equal the last row of all logits */
static void test_last_logits_equal_last_row(void **state)
{
    dintattn_model *m = load_fixture("diff_interleaved_f32", DINTATTN_QK_AUTO);
    size_t V = (size_t)dintattn_model_config(m)->vocab_size;
    int ids[9] = {3, 1, 4, 1, 5, 9, 2, 6, 5};
    float *all = run(m, ids, 9, 9, 0, 1), *last = (float *)malloc(sizeof(float) * V);
    dintattn_session *s = session(m, 4, 1);
    (void)state;
    assert_int_equal(dintattn_prefill(s, ids, 9, last, 0, NULL), DINTATTN_OK);
    expect_close("last row", "diff_interleaved_f32", last, all + 8 * V, V, TOL_SELF);
    dintattn_session_free(s);
    free(all);
    free(last);
    dintattn_model_free(m);
}

/* Heads split across threads compute exactly what one thread computes. */
static void test_threads_give_identical_logits(void **state)
{
    const char *names[] = {"dint_shared_grouped_gqa_bf16", "diff_odd_sizes_f32", "standard_gqa_halves_f32"};
    int k;
    (void)state;
    for (k = 0; k < 3; k++) {
        dintattn_model *m = load_fixture(names[k], DINTATTN_QK_AUTO);
        size_t V = (size_t)dintattn_model_config(m)->vocab_size;
        int ids[12] = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12};
        float *one = run(m, ids, 12, 5, 0, 1), *many = run(m, ids, 12, 5, 0, 3);
        assert_memory_equal(one, many, sizeof(float) * 12 * V);
        free(one);
        free(many);
        dintattn_model_free(m);
    }
}

/* Errors leave the session as it was: a full context, a bad token, no tokens. */
static void test_bad_calls_are_refused_without_side_effects(void **state)
{
    dintattn_model *m = load_fixture("dint_mean_f16", DINTATTN_QK_AUTO);
    const dintattn_config *c = dintattn_model_config(m);
    dintattn_session *s = session(m, 0, 1);
    dintattn_error err;
    int *ids = (int *)calloc((size_t)c->max_seq_len + 1, sizeof(int)), bad[2] = {1, 0};
    (void)state;
    bad[1] = c->vocab_size;
    assert_int_equal(dintattn_prefill(s, ids, c->max_seq_len + 1, NULL, 0, &err), DINTATTN_ERR_CONTEXT);
    assert_int_equal(dintattn_prefill(s, bad, 2, NULL, 0, &err), DINTATTN_ERR_ARG);
    assert_non_null(strstr(err.message, "vocabulary"));
    assert_int_equal(dintattn_decode(s, -1, NULL, &err), DINTATTN_ERR_ARG);
    assert_int_equal(dintattn_prefill(s, ids, 0, NULL, 0, &err), DINTATTN_ERR_ARG);
    assert_int_equal(dintattn_prefill(NULL, ids, 1, NULL, 0, &err), DINTATTN_ERR_ARG);
    assert_int_equal(dintattn_session_pos(s), 0);
    assert_int_equal(dintattn_prefill(s, ids, c->max_seq_len, NULL, 0, &err), DINTATTN_OK);
    assert_int_equal(dintattn_decode(s, 1, NULL, &err), DINTATTN_ERR_CONTEXT);
    assert_int_equal(dintattn_session_pos(s), c->max_seq_len);
    dintattn_session_free(s);
    free(ids);
    dintattn_model_free(m);
}

/* The kernel level is a session option: asked for, it is what the session runs (portable C
   runs everywhere; AUTO resolves to a real level); a level that is no dintattn_kernels is
   refused. The logits of every level are held against the reference by the runs of this suite
   under DINTATTN_KERNELS (make check). */
static void test_kernel_level_is_a_session_option(void **state)
{
    dintattn_model *m = load_fixture("dint_mean_f16", DINTATTN_QK_AUTO);
    dintattn_session_options so;
    dintattn_session *s = NULL;
    dintattn_error err;
    (void)state;
    memset(&so, 0, sizeof so);
    so.kernels = DINTATTN_KERNELS_PORTABLE;
    assert_int_equal(dintattn_session_new(m, &so, &s, &err), DINTATTN_OK);
    assert_int_equal(dintattn_session_kernels(s), DINTATTN_KERNELS_PORTABLE);
    assert_string_equal(dintattn_kernels_name(dintattn_session_kernels(s)), "portable");
    dintattn_session_free(s);
    so.kernels = DINTATTN_KERNELS_AUTO;
    assert_int_equal(dintattn_session_new(m, &so, &s, &err), DINTATTN_OK);
    assert_true(dintattn_session_kernels(s) != DINTATTN_KERNELS_AUTO);
    dintattn_session_free(s);
    so.kernels = (dintattn_kernels)99;
    assert_int_equal(dintattn_session_new(m, &so, &s, &err), DINTATTN_ERR_ARG);
    assert_null(s);
    assert_non_null(strstr(err.message, "kernels"));
    dintattn_model_free(m);
}

/* Rewrites one fixture's config key (as it appears in the header) and loads the result. */
/* tests/fixtures/NAME.safetensors with the first `from` in its header replaced by `to` (the
   header length fixed up); *size gets the new size. */
static unsigned char *edited_file(const char *name, const char *from, const char *to, size_t *out_size)
{
    char path[256];
    size_t size, hlen, flen = strlen(from), tlen = strlen(to);
    unsigned char *src, *dst;
    char *hit;
    int i;
    fixture_path(path, sizeof path, name, ".safetensors");
    src = (unsigned char *)read_file(path, &size);
    assert_non_null(src);
    for (hlen = 0, i = 7; i >= 0; i--) hlen = hlen << 8 | src[i];
    hit = strstr((char *)src + 8, from);
    assert_non_null(hit);
    assert_true((size_t)((unsigned char *)hit - src) < 8 + hlen);
    dst = (unsigned char *)malloc(size - flen + tlen);
    assert_non_null(dst);
    memcpy(dst, src, (size_t)((unsigned char *)hit - src));
    memcpy(dst + ((unsigned char *)hit - src), to, tlen);
    memcpy(dst + ((unsigned char *)hit - src) + tlen, hit + flen, size - (size_t)((unsigned char *)hit - src) - flen);
    hlen = hlen - flen + tlen;
    for (i = 0; i < 8; i++) dst[i] = (unsigned char)(hlen >> (8 * i));
    free(src);
    *out_size = size - flen + tlen;
    return dst;
}

static dintattn_model *load_edited(const char *name, const char *from, const char *to, void **keep)
{
    dintattn_model *m = NULL;
    dintattn_error err;
    size_t size;
    unsigned char *dst = edited_file(name, from, to, &size);
    if (dintattn_model_load_memory(dst, size, NULL, &m, &err) != DINTATTN_OK)
        fail_msg("%s edited: %s", name, err.message);
    *keep = dst;
    return m;
}

/* Past the tiles a BF16 / Q8 cache is read through (DINTATTN__KV_TILE rows in decode,
   DINTATTN__KV_PTILE in prefill): decode (two threads), prefill and chunks agree, and stay near
   the f32 cache without equalling it. */
static void test_kv_cache_tiles(void **state)
{
    void *buf;
    dintattn_model *m = load_edited("conv_dint_grouped_gqa_f32", "\\\"max_seq_len\\\": 32", "\\\"max_seq_len\\\": 1024", &buf);
    const int V = dintattn_model_config(m)->vocab_size, n = DINTATTN__KV_PTILE + 2 * DINTATTN__KV_TILE + 5;
    int *ids = (int *)malloc(sizeof(int) * (size_t)n), i, k;
    float *f32;
    (void)state;
    assert_non_null(ids);
    assert_true(n <= dintattn_model_config(m)->max_seq_len);
    for (i = 0; i < n; i++) ids[i] = (i * 7919 + 13) % V;
    f32 = run_kv(m, ids, n, n, 0, 1, DINTATTN_PRECISION_EXACT, DINTATTN_KV_F32);
    for (k = DINTATTN_KV_BF16; k <= DINTATTN_KV_Q8; k++) {
        float *pre = run_kv(m, ids, n, n, 0, 1, DINTATTN_PRECISION_EXACT, (dintattn_kv_type)k);
        float *dec = run_kv(m, ids, n, 1, 0, 2, DINTATTN_PRECISION_EXACT, (dintattn_kv_type)k);
        float *chk = run_kv(m, ids, n, 100, 64, 1, DINTATTN_PRECISION_EXACT, (dintattn_kv_type)k);
        const double e = rel_error(pre, f32, (size_t)n * V);
        /* Values from sgemm steps of 512 or 64 rows and from matrix-vector rows (decode) differ in
           their last bits and may round to neighbouring bf16 / int8 steps (one value of V in 12672
           did, at 98 tokens), which moves these random models' logits by up to 3e-4; reading the
           wrong rows would move them as much as the rounding itself does (e, about 3e-2). The
           tiles' arithmetic is checked exactly by test_kv_tiles_read_the_cache. */
        expect_close("decode", dintattn_kv_name((dintattn_kv_type)k), dec, pre, (size_t)n * V, 2e-3);
        expect_close("chunks", dintattn_kv_name((dintattn_kv_type)k), chk, pre, (size_t)n * V, 2e-3);
        if (!(e > 1e-2 && e < 0.1)) fail_msg("kv %s moves logits by %.3g", dintattn_kv_name((dintattn_kv_type)k), e);
        free(pre), free(dec), free(chk);
    }
    free(f32);
    free(ids);
    dintattn_model_free(m);
    free(buf);
}

/* Decode on a BF16 / Q8 cache where the level reads it in place (the shipped model: heads of 32
   and values of 64, both multiples of 16) against a prompt of the same tokens, which reads the
   same cache through tiles: within the neighbouring-step flips test_kv_cache_tiles allows, and as
   far from the f32 cache as the rounding moves it (a key of the wrong head, layer or position
   would move it by more). */
static void test_kv_in_place_on_the_shipped_model(void **state)
{
    dintattn_load_options lo;
    dintattn_model *m = NULL;
    dintattn_error err;
    enum { N = 96 };
    int ids[N], i, k, V;
    float *f32;
    (void)state;
    memset(&lo, 0, sizeof lo);
    lo.weights = DINTATTN_WEIGHTS_F32;
    if (dintattn_model_load("models/dint-kjv.safetensors", &lo, &m, &err)) fail_msg("shipped model: %s", err.message);
    assert_true(dintattn_model_config(m)->head_dim % 16 == 0 && dintattn_model_config(m)->v_head_dim % 16 == 0);
    V = dintattn_model_config(m)->vocab_size;
    for (i = 0; i < N; i++) ids[i] = (i * 7919 + 13) % V;
    f32 = run_kv(m, ids, N, N, 0, 1, DINTATTN_PRECISION_EXACT, DINTATTN_KV_F32);
    for (k = DINTATTN_KV_BF16; k <= DINTATTN_KV_Q8; k++) {
        float *pre = run_kv(m, ids, N, N, 0, 1, DINTATTN_PRECISION_EXACT, (dintattn_kv_type)k);
        float *dec = run_kv(m, ids, N, 1, 0, 2, DINTATTN_PRECISION_EXACT, (dintattn_kv_type)k);
        const double e = rel_error(dec, f32, (size_t)N * V), ep = rel_error(pre, f32, (size_t)N * V);
        expect_close("decode in place", dintattn_kv_name((dintattn_kv_type)k), dec, pre, (size_t)N * V, 2e-3);
        if (!(e > 1e-4 && e < 0.1 && e < 2 * ep))
            fail_msg("kv %s: decode %.3g and prompt %.3g from the f32 cache", dintattn_kv_name((dintattn_kv_type)k), e, ep);
        print_message("kv %s: decode %.3g from the prompt, %.3g from the f32 cache (the prompt %.3g)\n",
                      dintattn_kv_name((dintattn_kv_type)k), rel_error(dec, pre, (size_t)N * V), e, ep);
        free(pre), free(dec);
    }
    free(f32);
    dintattn_model_free(m);
}

static void ignore_rows(void *user, int layer, int head, int pos, const float *w, int n_keys)
{
    (void)user, (void)layer, (void)head, (void)pos, (void)w, (void)n_keys;
}

/* A prompt's attention runs on the session's threads query by query (through per-thread tiles of
   DINTATTN__KV_TILE rows of a rounded cache) where no product calls sgemm, and on the calling
   thread with each head's scores and W @ V by sgemm where one does, or for an attention hook.
   Forced onto the pool (f32 weights, precision EXACT: no activation is rounded), past several
   tiles of keys, on 1 and 2 threads: the same logits but for f32 rounding with an f32 cache;
   with a rounded cache a key or value may round to the neighbouring bf16 / int8 step in a later
   layer (as in test_kv_cache_tiles). Then with Q8 weights (int8 activations), where the pool is
   the default: the same within the rounding of an activation to its neighbouring int8 step. */
static void test_prefill_attention_paths_agree(void **state)
{
    const char *name = "conv_dint_grouped_gqa_f32";
    unsigned char *bytes;
    size_t size;
    dintattn_load_options opt;
    dintattn_error err;
    const int n = 3 * DINTATTN__KV_TILE + 5;
    int *ids = (int *)malloc(sizeof(int) * (size_t)n), i, k, th, w, V;
    (void)state;
    bytes = edited_file(name, "\\\"max_seq_len\\\": 32", "\\\"max_seq_len\\\": 1024", &size);
    assert_non_null(ids);
    for (w = 0; w < 2; w++) {
        dintattn_model *m = NULL;
        const dintattn_precision prec = w ? DINTATTN_PRECISION_AUTO : DINTATTN_PRECISION_EXACT;
        memset(&opt, 0, sizeof opt);
        opt.weights = w ? DINTATTN_WEIGHTS_Q8 : DINTATTN_WEIGHTS_FILE;
        if (dintattn_model_load_memory(bytes, size, &opt, &m, &err) != DINTATTN_OK) fail_msg("%s: %s", name, err.message);
        V = dintattn_model_config(m)->vocab_size;
        for (i = 0; i < n; i++) ids[i] = (i * 7919 + 13) % V;
        for (k = DINTATTN_KV_F32; k <= DINTATTN_KV_Q8; k++)
            for (th = 1; th <= 2; th++) {
                float *pool = (float *)malloc(sizeof(float) * (size_t)n * V);
                float *ordered = (float *)malloc(sizeof(float) * (size_t)n * V);
                dintattn_session *s = test_session_kv(m, 0, 0, th, prec, (dintattn_kv_type)k);
                assert_true(pool && ordered);
                if (!w) s->attn_pool = 1;
                if (dintattn_prefill(s, ids, n, pool, 1, &err) != DINTATTN_OK) fail_msg("prefill: %s", err.message);
                dintattn_session_reset(s);
                dintattn_session_set_attn_hook(s, ignore_rows, NULL);
                if (dintattn_prefill(s, ids, n, ordered, 1, &err) != DINTATTN_OK) fail_msg("prefill: %s", err.message);
                expect_close(w ? "Q8, attention on the pool vs by sgemm" : "attention forced onto the pool vs by sgemm",
                             dintattn_kv_name((dintattn_kv_type)k), pool, ordered, (size_t)n * V,
                             !w && k == DINTATTN_KV_F32 ? 1e-5 : 2e-2);
                dintattn_session_free(s);
                free(pool), free(ordered);
            }
        dintattn_model_free(m);
    }
    free(ids);
    free(bytes);
}

/* A long prompt runs in memory linear in the context: no N x N matrix is ever allocated. The
   last logits of one 4096-token prefill equal those of prefilling 4095 and decoding one more. */
static void test_long_prompt_runs_in_linear_memory(void **state)
{
    void *buf;
    dintattn_model *m = load_edited("dint_softmax_f32", "\\\"max_seq_len\\\": 32", "\\\"max_seq_len\\\": 4096", &buf);
    const dintattn_config *c = dintattn_model_config(m);
    const int N = 4096;
    size_t V = (size_t)c->vocab_size;
    int *ids = (int *)malloc(sizeof(int) * N), i;
    float *a = (float *)malloc(sizeof(float) * V), *b = (float *)malloc(sizeof(float) * V);
    dintattn_session *s = session(m, 0, 2);
    dintattn_error err;
    size_t kv = (size_t)c->n_layers * N * ((size_t)(c->n_k1_heads + c->n_k2_heads) * c->head_dim +
                                            (size_t)c->n_v_heads * c->v_head_dim) * sizeof(float);
    (void)state;
    assert_int_equal(c->max_seq_len, N);
    for (i = 0; i < N; i++) ids[i] = (i * 31 + i / 7) % (int)V;
    assert_int_equal(dintattn_prefill(s, ids, N, a, 0, &err), DINTATTN_OK);
    dintattn_session_reset(s);
    assert_int_equal(dintattn_prefill(s, ids, N - 1, NULL, 0, &err), DINTATTN_OK);
    assert_int_equal(dintattn_decode(s, ids[N - 1], b, &err), DINTATTN_OK);
    expect_close("decode after 4095", "dint_softmax_f32", b, a, V, TOL_SELF);
    for (i = 0; i < (int)V; i++) assert_true(isfinite(a[i]));
    /* the KV cache plus O(context) per thread and O(block x context) for prefill attention
       (3 x 128 x N floats, 6 MiB); an N x N float matrix alone is 64 MiB */
    assert_true(dintattn_session_bytes(s) < 2 * kv + ((size_t)12 << 20));
    dintattn_session_free(s);
    dintattn_model_free(m);
    free(buf);
    free(ids);
    free(a);
    free(b);
}

/* --- dintattn_session_truncate ------------------------------------------------------------------ */

/* A truncated session against a new one fed the first n tokens in other steps: a step's rows
   depend on its length (rows under 8 tokens, panels, sgemm, blocks of queries), so where the
   truncation keeps rows a longer step computed (a family without S, cut inside a prompt's step)
   only the engine's agreement between step layouts holds: the logits with an f32 cache
   (observed 2.4e-6; against a new session fed one prefill, TOL_SELF: observed 4.2e-6), DINT's S
   against one prefill (observed 7.8e-7), and with a bf16 or int8 cache, where a key a step
   computes in other last bits can round to the neighbouring step (observed 1.0e-2, Q8 weights
   and cache; test_prefill_attention_paths_agree allows as much) */
#define TOL_TRUNCATE 5e-6
#define TOL_TRUNCATE_SUMS 2e-6
#define TOL_TRUNCATE_ROUNDED 2e-2

/* Feeds the history the truncation tests use, up to n tokens: a prefill of the first `prompt`
   ids (in steps of the session's n_batch), then one decode each; with n below the whole history
   it is the same steps cut at n. */
static void feed_history(dintattn_session *s, const int *ids, int prompt, int n)
{
    dintattn_error err;
    int i;
    if (n > 0 && dintattn_prefill(s, ids, n < prompt ? n : prompt, NULL, 0, &err) != DINTATTN_OK)
        fail_msg("prefill: %s", err.message);
    for (i = prompt; i < n; i++)
        if (dintattn_decode(s, ids[i], NULL, &err) != DINTATTN_OK) fail_msg("decode: %s", err.message);
    assert_int_equal(dintattn_session_pos(s), n);
}

/* Continues a session: tail[0..n_tail) as one prefill (every row's logits), then `last` decoded;
   out gets n_tail + 1 rows. */
static void continue_with(dintattn_session *s, const int *tail, int n_tail, int last, float *out)
{
    const size_t V = (size_t)dintattn_model_config(s->model)->vocab_size;
    dintattn_error err;
    if (n_tail > 0 && dintattn_prefill(s, tail, n_tail, out, 1, &err) != DINTATTN_OK) fail_msg("prefill: %s", err.message);
    if (dintattn_decode(s, last, out + (size_t)n_tail * V, &err) != DINTATTN_OK) fail_msg("decode: %s", err.message);
}

/* DINT's running sums S of two sessions of one model (both NULL for other families): the
   largest difference over the first `cols` columns of every row, relative to max(1, |b|) */
static double sums_error(const dintattn_session *a, const dintattn_session *b, int cols)
{
    const dintattn_config *c = dintattn_model_config(a->model);
    double worst = 0, scale = 1;
    int l, h, j;
    assert_true(!a->S == !b->S);
    for (l = 0; a->S && l < c->n_layers; l++)
        for (h = 0; h < c->n_heads; h++) {
            const double *x = dintattn__S_row(a, l, h), *y = dintattn__S_row(b, l, h);
            for (j = 0; j < cols; j++) {
                const double d = fabs(x[j] - y[j]);
                if (!(d <= worst)) worst = d;
                if (fabs(y[j]) > scale) scale = fabs(y[j]);
            }
        }
    return worst / scale;
}

/* As sums_error, bit for bit: fails naming the first row that differs */
static void expect_same_sums(const dintattn_session *a, const dintattn_session *b, int cols, const char *what,
                             const char *name, int n)
{
    const dintattn_config *c = dintattn_model_config(a->model);
    int l, h;
    assert_true(!a->S == !b->S);
    for (l = 0; a->S && l < c->n_layers; l++)
        for (h = 0; h < c->n_heads; h++)
            if (memcmp(dintattn__S_row(a, l, h), dintattn__S_row(b, l, h), sizeof(double) * (size_t)cols))
                fail_msg("%s, %s, n = %d: S of layer %d head %d differs", name, what, n, l, h);
}

/* One model's truncations (see test_truncate_then_continue_equals_fresh); ref: the float64
   reference's logits of ids[0..N), or NULL. worst[3 k + 0], for cache type kvs[k]: the logits
   against a session fed the same steps cut at n where they may differ, worst[3 k + 1]: against
   one fed the first n tokens by one prefill, worst[3 k + 2]: DINT's S against that one. */
static void check_truncation(const char *name, const dintattn_model *m, dintattn_precision prec, const int *ids, int N,
                             const float *ref, double *worst)
{
    static const dintattn_kv_type kvs[] = {DINTATTN_KV_F32, DINTATTN_KV_BF16, DINTATTN_KV_Q8};
    const dintattn_config *c = dintattn_model_config(m);
    const size_t V = (size_t)c->vocab_size;
    const int dint = c->attention == DINTATTN_ATTN_DINT, prompt = N * 2 / 3;
    const int cuts[] = {0, 1, prompt / 2, 4, 5, prompt, prompt + 1, N};
    float *la = (float *)malloc(sizeof(float) * V * (size_t)(N + 1)), *lb = (float *)malloc(sizeof(float) * V * (size_t)(N + 1));
    int k, b, i;
    assert_true(la && lb && prompt + 1 < N && N + 1 <= c->max_seq_len);
    for (k = 0; k < 3; k++)
        for (b = 0; b < 2; b++)
            for (i = 0; i < (int)(sizeof cuts / sizeof cuts[0]); i++) {
                const int n = cuts[i], rows = N - n + 1;
                const int f32 = kvs[k] == DINTATTN_KV_F32;
                const double tol = f32 ? TOL_TRUNCATE : TOL_TRUNCATE_ROUNDED, tol_prefill = f32 ? TOL_SELF : TOL_TRUNCATE_ROUNDED;
                const double tol_sums = f32 ? TOL_TRUNCATE_SUMS : TOL_TRUNCATE_ROUNDED;
                dintattn_session *ta = test_session_kv(m, 0, b ? 4 : 0, 2, prec, kvs[k]);
                dintattn_session *fb = test_session_kv(m, 0, b ? 4 : 0, 1, prec, kvs[k]);
                dintattn_session *fc = test_session_kv(m, 0, 0, 1, prec, kvs[k]);
                /* the same steps cut at n: every n at or after the prompt, or on n_batch's multiples */
                const int exact = dint || n >= prompt || n % ta->n_batch == 0;
                dintattn_error err;
                char what[96];
                double e;
                snprintf(what, sizeof what, "kv %s, n_batch %d", dintattn_kv_name(kvs[k]), ta->n_batch);
                feed_history(ta, ids, prompt, N);
                if (dintattn_session_truncate(ta, n, &err) != DINTATTN_OK) fail_msg("truncate: %s", err.message);
                assert_int_equal(dintattn_session_pos(ta), n);
                feed_history(fb, ids, prompt, n);
                if (n > 0 && dintattn_prefill(fc, ids, n, NULL, 0, &err) != DINTATTN_OK) fail_msg("prefill: %s", err.message);
                if (dint) {
                    expect_same_sums(ta, fb, ta->n_ctx, what, name, n);
                    e = sums_error(ta, fc, ta->n_ctx);
                    if (ref && !(e <= tol_sums))
                        fail_msg("%s, %s, n = %d: S's relative error %.3g > %.3g against one prefill", name, what, n, e, tol_sums);
                    if (ref && e > worst[3 * k + 2]) worst[3 * k + 2] = e;
                }
                continue_with(ta, ids + n, N - n, ids[0], la);
                continue_with(fb, ids + n, N - n, ids[0], lb);
                if (exact && memcmp(la, lb, sizeof(float) * V * (size_t)rows))
                    fail_msg("%s, %s, n = %d: logits after truncating differ from a new session's fed the same steps",
                             name, what, n);
                e = rel_error(la, lb, V * (size_t)rows);
                if (!(e <= tol)) fail_msg("%s, %s, n = %d: relative error %.3g > %.3g against the same steps", name, what, n, e, tol);
                if (!exact && e > worst[3 * k]) worst[3 * k] = e;
                if (dint) expect_same_sums(ta, fb, ta->n_ctx, "after continuing", name, n);
                if (ref && kvs[k] == DINTATTN_KV_F32 && n < N)
                    expect_close("truncated, then the rest", name, la, ref + (size_t)n * V, V * (size_t)(N - n), TOL_REFERENCE);
                continue_with(fc, ids + n, N - n, ids[0], lb);
                e = rel_error(la, lb, V * (size_t)rows);
                if (ref && !(e <= tol_prefill))
                    fail_msg("%s, %s, n = %d: relative error %.3g > %.3g against one prefill", name, what, n, e, tol_prefill);
                if (ref && e > worst[3 * k + 1]) worst[3 * k + 1] = e;
                dintattn_session_free(ta);
                dintattn_session_free(fb);
                dintattn_session_free(fc);
            }
    free(la);
    free(lb);
}

/* Truncate to n then feed more == a new session fed the first n tokens in the same steps (the
   history's prefill cut at n, then its decodes) then the same: DINT's S bit for bit right after
   the truncation and after continuing, the logits bit for bit for DINT (whose truncation runs the
   cut step again) and wherever n is a step boundary, else within TOL_TRUNCATE (an f32 cache) or
   TOL_TRUNCATE_ROUNDED; so also against a session fed the first n tokens by one prefill (DINT's
   S within TOL_TRUNCATE_SUMS with an f32 cache); and the continuation against the
   float64 reference. Every fixture (families, v1.1 options), the three cache types, n_batch 4
   and the default, n from 0 to the whole history including mid-step; Q8 and Q4 weights on the
   converted fixtures; the suite's kernel level. */
static void test_truncate_then_continue_equals_fresh(void **state)
{
    static const dintattn_weights quant[] = {DINTATTN_WEIGHTS_Q8, DINTATTN_WEIGHTS_Q4};
    double worst[9] = {0, 0, 0, 0, 0, 0, 0, 0, 0};
    int f, w, k, dints = 0;
    (void)state;
    for (f = 0; f < n_fx; f++) {
        dintattn_model *m = load_fixture(fx[f].name, DINTATTN_QK_AUTO);
        float *ref = read_logits(&fx[f], ".logits", m);
        dints += dintattn_model_config(m)->attention == DINTATTN_ATTN_DINT;
        check_truncation(fx[f].name, m, DINTATTN_PRECISION_AUTO, fx[f].ids, fx[f].n, ref, worst);
        free(ref);
        dintattn_model_free(m);
    }
    for (f = 0; f < n_conv; f++)
        for (w = 0; w < 2; w++) {
            dintattn_model *m = load_fixture_as(conv[f].name, DINTATTN_QK_AUTO, quant[w]);
            check_truncation(conv[f].name, m, DINTATTN_PRECISION_AUTO, conv[f].ids, conv[f].n, NULL, worst);
            dintattn_model_free(m);
        }
    assert_true(n_fx >= 20 && dints >= 5 && n_conv >= 2);
    for (k = 0; k < 3; k++)
        print_message("truncate, kv %s: logits against the same steps cut mid-step %.3g, against one prefill %.3g; "
                      "S against one prefill %.3g\n",
                      dintattn_kv_name((dintattn_kv_type)k), worst[3 * k], worst[3 * k + 1], worst[3 * k + 2]);
}

/* Rows the attention hook saw: how many, and their first and last positions */
typedef struct rows_seen {
    int rows, lo, hi;
} rows_seen;

static void count_rows(void *user, int layer, int head, int pos, const float *w, int n_keys)
{
    rows_seen *r = (rows_seen *)user;
    (void)layer, (void)head, (void)w, (void)n_keys;
    if (r->rows == 0 || pos < r->lo) r->lo = pos;
    if (r->rows == 0 || pos > r->hi) r->hi = pos;
    r->rows++;
}

/* Truncates s to n and returns the rows its attention ran meanwhile (the hook sees them) */
static rows_seen truncate_counting(dintattn_session *s, int n)
{
    rows_seen r = {0, 0, 0};
    dintattn_error err;
    dintattn_session_set_attn_hook(s, count_rows, &r);
    if (dintattn_session_truncate(s, n, &err) != DINTATTN_OK) fail_msg("truncate: %s", err.message);
    dintattn_session_set_attn_hook(s, NULL, NULL);
    assert_int_equal(dintattn_session_pos(s), n);
    return r;
}

/* DINT's truncation runs again only the tokens from the nearest checkpoint of S at or below n:
   a context of 32 has checkpoints at the last step boundary at or before 4, 8, .. 28, so with
   steps of 4 and then decodes it runs exactly the tokens from the multiple of 4 below n, and
   never a part and a step's worth or more, whatever n; a family without S runs nothing. */
static void test_truncate_runs_from_the_nearest_checkpoint(void **state)
{
    dintattn_model *m = load_fixture("dint_softmax_f32", DINTATTN_QK_AUTO), *std = load_fixture("standard_gqa_halves_f32", DINTATTN_QK_AUTO);
    const dintattn_config *c = dintattn_model_config(m);
    const int heads = c->n_layers * c->n_heads, N = 26, prompt = 20;
    int ids[26], i, n;
    dintattn_session *s = test_session(m, 32, 4, 1), *t = test_session(std, 32, 4, 1);
    rows_seen r;
    (void)state;
    assert_int_equal(c->max_seq_len, 32);
    assert_int_equal(s->ckpt_every, 4);
    assert_int_equal(s->n_ckpt, 7);
    for (i = 0; i < N; i++) ids[i] = (i * 7 + 3) % 61; /* both models' vocabularies hold 61 */
    assert_true(c->vocab_size >= 61 && dintattn_model_config(std)->vocab_size >= 61);
    feed_history(s, ids, prompt, N);
    r = truncate_counting(s, 22); /* from the checkpoint at 20: the decodes at 20 and 21 */
    assert_int_equal(r.rows, 2 * heads);
    assert_int_equal(r.lo, 20);
    assert_int_equal(r.hi, 21);
    r = truncate_counting(s, 9); /* from 8, the start of the prompt's step [8, 12) cut at 9 */
    assert_int_equal(r.rows, heads);
    assert_int_equal(r.lo, 8);
    r = truncate_counting(s, 9); /* n = pos: nothing */
    assert_int_equal(r.rows, 0);
    r = truncate_counting(s, 0);
    assert_int_equal(r.rows, 0);
    for (i = 0; i < c->n_layers * c->n_heads * s->n_ctx; i++) assert_true(s->S[i] == 0.0);
    for (n = 0; n < N; n++) {
        dintattn_session_reset(s);
        feed_history(s, ids, prompt, N);
        r = truncate_counting(s, n);
        assert_int_equal(r.rows, n % 4 * heads);
        assert_true(r.rows < (s->ckpt_every + s->n_batch) * heads);
        feed_history(t, ids, prompt, N);
        r = truncate_counting(t, n);
        assert_int_equal(r.rows, 0);
        dintattn_session_reset(t);
    }
    dintattn_session_free(s);
    dintattn_session_free(t);
    dintattn_model_free(m);
    dintattn_model_free(std);
}

/* Truncating again after continuing a truncated session: the steps it holds are the history cut
   at the first n, then its new steps, cut at the second; the same as a new session fed those.
   Every DINT fixture, f32 and int8 caches, bit for bit (S and logits). */
static void test_truncate_again_after_continuing(void **state)
{
    static const dintattn_kv_type kvs[] = {DINTATTN_KV_F32, DINTATTN_KV_Q8};
    int f, k, checked = 0;
    (void)state;
    for (f = 0; f < n_fx; f++) {
        dintattn_model *m = load_fixture(fx[f].name, DINTATTN_QK_AUTO);
        const dintattn_config *c = dintattn_model_config(m);
        const size_t V = (size_t)c->vocab_size;
        int ids[20], more[8], i;
        float *la = (float *)malloc(sizeof(float) * V * 4), *lb = (float *)malloc(sizeof(float) * V * 4);
        assert_true(la && lb);
        if (c->attention != DINTATTN_ATTN_DINT || c->max_seq_len < 22) {
            free(la), free(lb);
            dintattn_model_free(m);
            continue;
        }
        for (i = 0; i < 20; i++) ids[i] = (i * 11 + 5) % c->vocab_size;
        for (i = 0; i < 8; i++) more[i] = (i * 13 + 2) % c->vocab_size;
        for (k = 0; k < 2; k++) {
            dintattn_session *a = test_session_kv(m, 0, 4, 2, DINTATTN_PRECISION_AUTO, kvs[k]);
            dintattn_session *b = test_session_kv(m, 0, 4, 1, DINTATTN_PRECISION_AUTO, kvs[k]);
            dintattn_error err;
            feed_history(a, ids, 13, 16);                                         /* [0,4) .. [12,13), 13, 14, 15 */
            assert_int_equal(dintattn_session_truncate(a, 10, &err), DINTATTN_OK); /* [8,12) cut at 10 */
            assert_int_equal(dintattn_prefill(a, more, 6, NULL, 0, &err), DINTATTN_OK); /* [10,14), [14,16) */
            for (i = 6; i < 8; i++) assert_int_equal(dintattn_decode(a, more[i], NULL, &err), DINTATTN_OK);
            assert_int_equal(dintattn_session_pos(a), 18);
            assert_int_equal(dintattn_session_truncate(a, 15, &err), DINTATTN_OK); /* [14,16) cut at 15 */
            assert_int_equal(dintattn_prefill(b, ids, 10, NULL, 0, &err), DINTATTN_OK);
            assert_int_equal(dintattn_prefill(b, more, 5, NULL, 0, &err), DINTATTN_OK);
            expect_same_sums(a, b, a->n_ctx, dintattn_kv_name(kvs[k]), fx[f].name, 15);
            continue_with(a, ids, 3, more[7], la);
            continue_with(b, ids, 3, more[7], lb);
            if (memcmp(la, lb, sizeof(float) * V * 4))
                fail_msg("%s, kv %s: logits after truncating twice differ", fx[f].name, dintattn_kv_name(kvs[k]));
            dintattn_session_free(a);
            dintattn_session_free(b);
        }
        free(la), free(lb);
        dintattn_model_free(m);
        checked++;
    }
    assert_true(checked >= 5);
}

/* Checkpoints of S past the kept tokens are forgotten (by a truncation) or all of them (by a
   reset), so that new tokens whose steps begin where old checkpoints were save their own S
   there. A context of 24 and steps of 3 put checkpoints at 3, 6, 9 ..; every DINT fixture. */
static void test_truncate_forgets_checkpoints_of_cut_tokens(void **state)
{
    int f, checked = 0;
    (void)state;
    for (f = 0; f < n_fx; f++) {
        dintattn_model *m = load_fixture(fx[f].name, DINTATTN_QK_AUTO);
        const dintattn_config *c = dintattn_model_config(m);
        int ids[15], more[8], i;
        dintattn_session *a, *b;
        dintattn_error err;
        if (c->attention != DINTATTN_ATTN_DINT) {
            dintattn_model_free(m);
            continue;
        }
        for (i = 0; i < 15; i++) ids[i] = (i * 11 + 5) % c->vocab_size;
        for (i = 0; i < 8; i++) more[i] = (i * 13 + 2) % c->vocab_size;
        a = test_session(m, 24, 3, 1), b = test_session(m, 24, 3, 1);
        assert_int_equal(a->ckpt_every, 3);
        /* truncated: [0,3), [3,6) cut at 4, then [4,6), [6,9), [9,12) of new tokens, cut at 7 */
        feed_history(a, ids, 15, 15);
        assert_int_equal(dintattn_session_truncate(a, 4, &err), DINTATTN_OK);
        assert_int_equal(dintattn_prefill(a, more, 2, NULL, 0, &err), DINTATTN_OK);
        assert_int_equal(dintattn_prefill(a, more + 2, 6, NULL, 0, &err), DINTATTN_OK);
        assert_int_equal(dintattn_session_truncate(a, 7, &err), DINTATTN_OK);
        feed_history(b, ids, 4, 4);
        assert_int_equal(dintattn_prefill(b, more, 2, NULL, 0, &err), DINTATTN_OK);
        assert_int_equal(dintattn_prefill(b, more + 2, 1, NULL, 0, &err), DINTATTN_OK);
        expect_same_sums(a, b, a->n_ctx, "new tokens after a truncation", fx[f].name, 7);
        /* reset: new tokens in steps [0,3), [3,6), cut at 4 */
        dintattn_session_reset(a);
        dintattn_session_reset(b);
        feed_history(a, ids, 15, 15);
        dintattn_session_reset(a);
        feed_history(a, more, 6, 6);
        assert_int_equal(dintattn_session_truncate(a, 4, &err), DINTATTN_OK);
        feed_history(b, more, 4, 4);
        expect_same_sums(a, b, a->n_ctx, "new tokens after a reset", fx[f].name, 4);
        dintattn_session_free(a);
        dintattn_session_free(b);
        dintattn_model_free(m);
        checked++;
    }
    assert_true(checked >= 5);
}

/* A copy truncates as its source would: dst (another context, so other checkpoints, and its
   own threads) takes src's tokens, steps and checkpoints of S; truncated to n, it holds and
   continues bit for bit as src truncated to n; of a smaller n_batch (src's steps run again in
   its shorter ones), within the tolerances of other steps. Every fixture, f32 and bf16 caches;
   and a copy into a session that held more tokens keeps none of its checkpoints. */
static void test_truncate_after_copy_equals_truncating_the_source(void **state)
{
    static const dintattn_kv_type kvs[] = {DINTATTN_KV_F32, DINTATTN_KV_BF16};
    int f, k, i;
    (void)state;
    for (f = 0; f < n_fx; f++) {
        dintattn_model *m = load_fixture(fx[f].name, DINTATTN_QK_AUTO);
        const dintattn_config *c = dintattn_model_config(m);
        const size_t V = (size_t)c->vocab_size;
        const int N = fx[f].n, prompt = N * 2 / 3, cuts[] = {0, 3, prompt / 2 + 1, prompt, N - 1};
        float *la = (float *)malloc(sizeof(float) * V * (size_t)(N + 1)), *lb = (float *)malloc(sizeof(float) * V * (size_t)(N + 1));
        assert_true(la && lb);
        for (k = 0; k < 2; k++)
            for (i = 0; i < 5; i++) {
                const int n = cuts[i], rows = N - n + 1;
                dintattn_session *src = test_session_kv(m, 0, 4, 1, DINTATTN_PRECISION_AUTO, kvs[k]);
                dintattn_session *dst = test_session_kv(m, N + 1, 4, 2, DINTATTN_PRECISION_AUTO, kvs[k]);
                dintattn_session *small = test_session_kv(m, 0, 2, 1, DINTATTN_PRECISION_AUTO, kvs[k]);
                dintattn_error err;
                double e;
                feed_history(src, fx[f].ids, prompt, N);
                assert_int_equal(dintattn_session_copy(dst, src, &err), DINTATTN_OK);
                assert_int_equal(dintattn_session_copy(small, src, &err), DINTATTN_OK);
                assert_int_equal(dintattn_session_truncate(src, n, &err), DINTATTN_OK);
                assert_int_equal(dintattn_session_truncate(dst, n, &err), DINTATTN_OK);
                assert_int_equal(dintattn_session_truncate(small, n, &err), DINTATTN_OK);
                expect_same_sums(dst, src, dst->n_ctx, "copy", fx[f].name, n);
                continue_with(src, fx[f].ids + n, N - n, fx[f].ids[0], la);
                continue_with(dst, fx[f].ids + n, N - n, fx[f].ids[0], lb);
                if (memcmp(la, lb, sizeof(float) * V * (size_t)rows))
                    fail_msg("%s, kv %s, n = %d: the copy's logits after truncating differ from the source's", fx[f].name,
                             dintattn_kv_name(kvs[k]), n);
                continue_with(small, fx[f].ids + n, N - n, fx[f].ids[0], lb);
                e = rel_error(lb, la, V * (size_t)rows);
                if (!(e <= (k ? TOL_TRUNCATE_ROUNDED : TOL_TRUNCATE)))
                    fail_msg("%s, kv %s, n = %d: a copy of a smaller n_batch, truncated: relative error %.3g", fx[f].name,
                             dintattn_kv_name(kvs[k]), n, e);
                dintattn_session_free(src);
                dintattn_session_free(dst);
                dintattn_session_free(small);
            }
        if (c->attention == DINTATTN_ATTN_DINT) {
            /* a copy into a session that held more tokens: none of its own checkpoints of S stay
               (its steps [0,6), [6,20) put S at 6 into its checkpoints at 6 .. 18) */
            dintattn_session *src = test_session(m, 0, 4, 1), *dst = test_session(m, 24, 16, 1);
            int other[20];
            dintattn_error err;
            for (i = 0; i < 20; i++) other[i] = (i * 17 + 1) % c->vocab_size;
            assert_int_equal(dintattn_prefill(dst, other, 6, NULL, 0, &err), DINTATTN_OK);
            assert_int_equal(dintattn_prefill(dst, other + 6, 14, NULL, 0, &err), DINTATTN_OK);
            feed_history(src, fx[f].ids, 8, 8);
            assert_int_equal(dintattn_session_copy(dst, src, &err), DINTATTN_OK);
            assert_int_equal(dintattn_session_truncate(dst, 7, &err), DINTATTN_OK);
            assert_int_equal(dintattn_session_truncate(src, 7, &err), DINTATTN_OK);
            expect_same_sums(dst, src, dst->n_ctx, "copy into a longer session", fx[f].name, 7);
            dintattn_session_free(src);
            dintattn_session_free(dst);
        }
        free(la), free(lb);
        dintattn_model_free(m);
    }
}

/* n outside [0, pos] is refused with a message naming both, and the session is as it was (it
   continues bit for bit as an untouched one); n = pos changes nothing; a NULL session is refused. */
static void test_truncate_refuses_n_outside_the_session(void **state)
{
    dintattn_model *m = load_fixture("dint_mean_f16", DINTATTN_QK_AUTO);
    const size_t V = (size_t)dintattn_model_config(m)->vocab_size;
    int ids[10] = {1, 5, 9, 2, 7, 3, 3, 8, 4, 6}, bad[3] = {-1, 8, 1 << 30}, i;
    float *la = (float *)malloc(sizeof(float) * V * 3), *lb = (float *)malloc(sizeof(float) * V * 3);
    dintattn_session *s = session(m, 4, 1), *same = session(m, 4, 1);
    dintattn_error err;
    char want[200];
    (void)state;
    assert_true(la && lb);
    feed_history(s, ids, 5, 7);
    feed_history(same, ids, 5, 7);
    for (i = 0; i < 3; i++) {
        assert_int_equal(dintattn_session_truncate(s, bad[i], &err), DINTATTN_ERR_ARG);
        snprintf(want, sizeof want,
                 "dintattn_session_truncate: n = %d is outside [0, 7], the tokens the session holds "
                 "(dintattn_session_pos): pass an n in that range",
                 bad[i]);
        assert_string_equal(err.message, want);
        assert_int_equal(dintattn_session_pos(s), 7);
    }
    assert_int_equal(dintattn_session_truncate(s, 7, &err), DINTATTN_OK);
    assert_int_equal(dintattn_session_truncate(NULL, 0, &err), DINTATTN_ERR_ARG);
    assert_string_equal(err.message, "dintattn_session_truncate: NULL session");
    expect_same_sums(s, same, s->n_ctx, "refused", "dint_mean_f16", 7);
    continue_with(s, ids + 7, 2, ids[9], la);
    continue_with(same, ids + 7, 2, ids[9], lb);
    assert_memory_equal(la, lb, sizeof(float) * V * 3);
    dintattn_session_free(s);
    dintattn_session_free(same);
    free(la), free(lb);
    dintattn_model_free(m);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_every_family_matches_reference_in_all_modes),
        cmocka_unit_test(test_shared_diff_factored_matches_reference),
        cmocka_unit_test(test_shared_diff_merged_matches_reference),
        cmocka_unit_test(test_shared_diff_auto_picks_cheaper_form),
        cmocka_unit_test(test_tensor_list_says_what_is_held),
        cmocka_unit_test(test_grouped_and_low_rank_equal_their_expanded_twins),
        cmocka_unit_test(test_converted_weights_match_reference),
        cmocka_unit_test(test_q8_stored_in_the_file),
        cmocka_unit_test(test_q4_stored_in_the_file),
        cmocka_unit_test(test_activation_quantization),
        cmocka_unit_test(test_activation_quantization_levels_agree),
        cmocka_unit_test(test_weight_quantization_levels_agree),
        cmocka_unit_test(test_int8_kernels_match_integer_dots),
        cmocka_unit_test(test_int8_activations),
        cmocka_unit_test(test_prefill_unit),
        cmocka_unit_test(test_q8_q4_prompts_on_tiles),
        cmocka_unit_test(test_q8_tiles_beat_int8_on_a_trained_model),
        cmocka_unit_test(test_bf16_kernels_match_double_sums),
        cmocka_unit_test(test_dot4_equals_dot),
        cmocka_unit_test(test_packed_panels_match_row_kernels),
        cmocka_unit_test(test_b16_panels_pack_their_pairs),
        cmocka_unit_test(test_avxvnni_rows_equal_avx2),
        cmocka_unit_test(test_avx2_int8_panels),
        cmocka_unit_test(test_bf16x3_split_is_exact),
        cmocka_unit_test(test_bf16_rounding_levels_agree),
        cmocka_unit_test(test_f32_panel_spans),
        cmocka_unit_test(test_f32_panel_short_blocks),
        cmocka_unit_test(test_attention_kernels_match_double_sums),
        cmocka_unit_test(test_bf16_activations),
        cmocka_unit_test(test_q8_file_needs_its_scales),
        cmocka_unit_test(test_q4_file_needs_its_scales),
        cmocka_unit_test(test_f32_weights_equal_file_weights),
        cmocka_unit_test(test_q8_weights_are_small),
        cmocka_unit_test(test_bad_weights_option_is_refused),
        cmocka_unit_test(test_logprobs_match_reference),
        cmocka_unit_test(test_session_copy_continues),
        cmocka_unit_test(test_kv_cache_types_match_reference),
        cmocka_unit_test(test_kv_cache_tiles),
        cmocka_unit_test(test_kv_tiles_read_the_cache),
        cmocka_unit_test(test_kv_in_place_on_the_shipped_model),
        cmocka_unit_test(test_prefill_attention_paths_agree),
        cmocka_unit_test(test_dint_rows_sum_to_one),
        cmocka_unit_test(test_attention_inspection),
        cmocka_unit_test(test_appending_tokens_keeps_past_logits),
        cmocka_unit_test(test_multi_turn_and_reset),
        cmocka_unit_test(test_last_logits_equal_last_row),
        cmocka_unit_test(test_threads_give_identical_logits),
        cmocka_unit_test(test_bad_calls_are_refused_without_side_effects),
        cmocka_unit_test(test_kernel_level_is_a_session_option),
        cmocka_unit_test(test_long_prompt_runs_in_linear_memory),
        cmocka_unit_test(test_truncate_then_continue_equals_fresh),
        cmocka_unit_test(test_truncate_runs_from_the_nearest_checkpoint),
        cmocka_unit_test(test_truncate_again_after_continuing),
        cmocka_unit_test(test_truncate_forgets_checkpoints_of_cut_tokens),
        cmocka_unit_test(test_truncate_after_copy_equals_truncating_the_source),
        cmocka_unit_test(test_truncate_refuses_n_outside_the_session),
    };
    const char *only = getenv("TEST_ENGINE_ONLY"); /* a cmocka pattern, e.g. "test_truncate*": those alone */
    n_fx = read_fixtures(fx, 0);
    n_pairs = read_fixtures(pairs, 1);
    n_conv = read_converted(conv);
    if (n_fx == 0) {
        fprintf(stderr, "no fixtures: run from the repository root\n");
        return 1;
    }
    if (only) cmocka_set_test_filter(only);
    return cmocka_run_group_tests_name("engine", tests, NULL, NULL);
}
