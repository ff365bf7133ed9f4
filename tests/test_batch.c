/* Batched steps (dintattn_batch_step): each sequence of a batch gives the logits it gives alone.
   Expected numbers come from tests/fixtures (the float64 reference's logits of each fixture's ids,
   tools/reference.py; a prefix of the ids has the first rows of them) and from the engine run on
   each sequence alone with the same chunks (dintattn_prefill / dintattn_decode), never from
   constants typed here. DINTATTN_KERNELS picks the level, as for test_engine. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#define DINTATTN_SOLO_BYTES 0 /* every job through the thread pool, however small */
#define DINTATTN_IMPLEMENTATION
#include "../dintattn.h"
#include "test_util.h"

/* a batched sequence against the float64 reference: the reviewers' bound */
#define TOL_REFERENCE 1e-4
/* a batched sequence against itself run alone: the stacked tokens' products take another unit
   (panels or sgemm instead of rows) and so another order of sums; observed at most 4.9e-6 with
   f32 activations and an f32 cache (5.4e-6 with FAST's bf16 activations), over every fixture,
   weight type, kernel level and thread count */
#define TOL_SOLO 1e-5
/* ... with int8 or bf16 activations (precision AUTO / FAST on Q8, Q4, BF16 weights) or a rounded
   cache: an input that differs in its last bits lands on the other side of a rounding step, which
   moves a logit by up to about 1e-2 on these models -- as much as the engine alone moves between
   decoding and prefilling the same ids (conv_dint_mean_groupnorm_bf16 at Q8, its ids from the
   sixth on: 0.0097 at row 8); observed at most 0.0098 in a batch with int8 activations, 2.9e-4
   with a Q8 cache (portable kernels) */
#define TOL_ROUNDED 2e-2

static fixture fx[MAX_FIXTURES], conv[MAX_FIXTURES];
static int n_fx, n_conv;


/* One sequence of a batch: ids[0..n), joining the batch at call `join`, its first chunk `first`
   tokens and each later one `then` (1: decodes) */
typedef struct seq {
    int ids[MAX_IDS], n, join, first, then;
    int is_prefix; /* ids are the fixture's first n: its reference rows apply */
} seq;

/* How sessions are made for a run */
typedef struct setup {
    dintattn_precision precision;
    dintattn_kv_type kv;
    int n_threads, n_batch, max_tokens, n_ctx;
    double tol_solo;                        /* TOL_SOLO or TOL_ROUNDED */
    const float *ref;                       /* the fixture's reference logits for this session, or NULL */
} setup;

static int chunk_at(const seq *q, int done)
{
    int k = done ? q->then : q->first;
    return q->n - done < k ? q->n - done : k;
}

/* Logits of every sequence alone (rows at the end of each of its chunks; ended[] marks them) */
static void run_solo(const dintattn_model *m, const seq *q, const setup *su, float *out, int *ended)
{
    const size_t V = (size_t)dintattn_model_config(m)->vocab_size;
    dintattn_session *s = test_session_kv(m, su->n_ctx, su->n_batch, su->n_threads, su->precision, su->kv);
    dintattn_error err;
    int done = 0;
    while (done < q->n) {
        const int k = chunk_at(q, done);
        float *row = out + (size_t)(done + k - 1) * V;
        dintattn_result r = k == 1 ? dintattn_decode(s, q->ids[done], row, &err)
                                   : dintattn_prefill(s, q->ids + done, k, row, 0, &err);
        if (r != DINTATTN_OK) fail_msg("solo: %s", err.message);
        ended[done + k - 1] = 1;
        done += k;
    }
    dintattn_session_free(s);
}

/* The sequences stepped together, sequence i in a session made as su[i] (max_tokens: su[0]'s): at
   call c every sequence that has joined (join <= c) and not finished gives its next chunk; the
   sessions are left in sess[] */
static void run_batch(const dintattn_model *m, const seq *qs, int n_seq, const setup *su, float **out,
                      dintattn_session **sess)
{
    const size_t V = (size_t)dintattn_model_config(m)->vocab_size;
    dintattn_batch_item items[8] = {{0}};
    dintattn_batch_options opt;
    dintattn_error err;
    int done[8] = {0}, call, i, left = n_seq;
    memset(&opt, 0, sizeof opt);
    opt.max_tokens = su->max_tokens;
    assert_true(n_seq <= 8);
    for (i = 0; i < n_seq; i++)
        sess[i] = test_session_kv(m, su[i].n_ctx, su[i].n_batch, su[i].n_threads, su[i].precision, su[i].kv);
    for (call = 0; left; call++) {
        int n = 0;
        for (i = 0; i < n_seq; i++) {
            int k;
            if (qs[i].join > call || done[i] == qs[i].n) continue;
            k = chunk_at(&qs[i], done[i]);
            items[n].sess = sess[i], items[n].tokens = qs[i].ids + done[i], items[n].n_tokens = k;
            items[n].logits = out[i] + (size_t)(done[i] + k - 1) * V;
            n++;
            done[i] += k;
            left -= done[i] == qs[i].n;
        }
        if (!n) continue;
        if (dintattn_batch_step(items, n, &opt, &err) != DINTATTN_OK) fail_msg("batch: %s", err.message);
        for (i = 0; i < n_seq; i++) assert_int_equal(dintattn_session_pos(sess[i]), done[i]);
    }
}

/* Four sequences of the fixture's ids: of different lengths, joining at different calls (and so
   leaving at different ones), prompts in chunks of different sizes then decodes, one of them the
   ids rotated (only its solo run says what it must give) */
static int make_seqs(const fixture *f, seq *qs)
{
    static const int shape[4][5] = {/* length cut, join, first, then, rotate */
                                    {0, 0, 3, 1, 0},
                                    {2, 1, 5, 1, 0},
                                    {3, 0, 1, 2, 1},
                                    {1, 3, 2, 3, 0}};
    int i, t;
    for (i = 0; i < 4; i++) {
        seq *q = &qs[i];
        q->n = f->n - shape[i][0];
        q->join = shape[i][1], q->first = shape[i][2], q->then = shape[i][3];
        q->is_prefix = !shape[i][4];
        for (t = 0; t < q->n; t++) q->ids[t] = f->ids[shape[i][4] ? (t + 5) % f->n : t];
    }
    return 4;
}

/* Every sequence of the batch (sequence i in a session made as su[i]) equals its solo run within
   su[i].tol_solo and (ids of the fixture) su[i].ref's rows within TOL_REFERENCE, at the rows where
   one of its chunks ended */
static double check_mixed(const dintattn_model *m, const fixture *f, const setup *sus, const char *what)
{
    const size_t V = (size_t)dintattn_model_config(m)->vocab_size;
    seq qs[4];
    float *out[4], *solo;
    dintattn_session *sess[4];
    int ended[MAX_IDS], i, t, n_seq = make_seqs(f, qs), rows = 0;
    double worst = 0;
    for (i = 0; i < n_seq; i++) {
        out[i] = (float *)calloc((size_t)f->n * V, sizeof(float));
        assert_non_null(out[i]);
    }
    solo = (float *)calloc((size_t)f->n * V, sizeof(float));
    assert_non_null(solo);
    run_batch(m, qs, n_seq, sus, out, sess);
    for (i = 0; i < n_seq; i++) {
        const setup *su = &sus[i];
        memset(ended, 0, sizeof ended);
        run_solo(m, &qs[i], su, solo, ended);
        for (t = 0; t < qs[i].n; t++) {
            double e;
            if (!ended[t]) continue;
            e = rel_error(out[i] + (size_t)t * V, solo + (size_t)t * V, V);
            if (!(e <= su->tol_solo))
                fail_msg("%s %s (%d threads): sequence %d row %d against its solo run: %.3g > %.3g", f->name, what,
                         su->n_threads, i, t, e, su->tol_solo);
            if (e > worst) worst = e;
            if (su->ref && qs[i].is_prefix) {
                e = rel_error(out[i] + (size_t)t * V, su->ref + (size_t)t * V, V);
                if (!(e <= TOL_REFERENCE))
                    fail_msg("%s %s: sequence %d row %d against the reference: %.3g > %.3g", f->name, what, i, t, e,
                             TOL_REFERENCE);
            }
            rows++;
        }
        dintattn_session_free(sess[i]);
        free(out[i]);
    }
    assert_true(rows >= 4 * 3);
    free(solo);
    if (getenv("BATCH_SHOW_ERRORS")) /* how TOL_SOLO and TOL_ROUNDED were measured */
        fprintf(stderr, "%s %s %s kv %s %d threads: worst against solo %.3g\n", f->name, what,
                dintattn_precision_name(sus->precision), dintattn_kv_name(sus->kv), sus->n_threads, worst);
    return worst;
}

/* check_mixed with every session made as su */
static double check_batch(const dintattn_model *m, const fixture *f, const float *ref, const setup *su,
                          const char *what)
{
    setup sus[4];
    int i;
    for (i = 0; i < 4; i++) sus[i] = *su, sus[i].ref = ref;
    return check_mixed(m, f, sus, what);
}

/* Every family of tests/fixtures (standard, DIFF, DINT, Shared-DIFF, GDA, the v1.1 options), in
   batches on 1 and 2 threads: one pass per call, several passes (max_tokens 4), and sessions of
   n_batch 3 whose chunks the batch splits */
static void test_every_fixture_in_a_batch_equals_its_solo_run(void **state)
{
    int f, th, mode;
    (void)state;
    assert_true(n_fx >= 20);
    for (f = 0; f < n_fx; f++) {
        dintattn_model *m = load_fixture(fx[f].name, DINTATTN_QK_AUTO);
        float *ref = read_logits(&fx[f], ".logits", m);
        for (th = 1; th <= 2; th++)
            for (mode = 0; mode < 3; mode++) {
                setup su;
                memset(&su, 0, sizeof su);
                su.precision = DINTATTN_PRECISION_AUTO, su.kv = DINTATTN_KV_F32, su.n_threads = th;
                su.tol_solo = TOL_SOLO;
                su.max_tokens = mode == 1 ? 4 : 0;
                su.n_batch = mode == 2 ? 3 : 0;
                check_batch(m, &fx[f], ref, &su, mode == 0 ? "one pass" : mode == 1 ? "passes of 4" : "n_batch 3");
            }
        free(ref);
        dintattn_model_free(m);
    }
}

/* Shared-DIFF's low-rank Q/K run factored (base x + up (down x), the stacked tokens' factors
   expanded together) and merged, batched, on 1 and 2 threads */
static void test_shared_diff_forms_in_a_batch(void **state)
{
    static const dintattn_qk_form forms[] = {DINTATTN_QK_FACTORED, DINTATTN_QK_MERGED};
    int f, k, th, checked = 0;
    (void)state;
    for (f = 0; f < n_fx; f++)
        for (k = 0; k < 2; k++) {
            dintattn_model *m = load_fixture(fx[f].name, forms[k]);
            float *ref;
            setup su;
            if (dintattn_model_config(m)->qk_rank == 0) {
                dintattn_model_free(m);
                continue;
            }
            ref = read_logits(&fx[f], ".logits", m);
            assert_int_equal(dintattn_model_qk_factored(m), k == 0);
            memset(&su, 0, sizeof su);
            su.precision = DINTATTN_PRECISION_AUTO, su.kv = DINTATTN_KV_F32, su.tol_solo = TOL_SOLO;
            for (th = 1; th <= 2; th++) {
                su.n_threads = th;
                check_batch(m, &fx[f], ref, &su, k == 0 ? "factored" : "merged");
            }
            free(ref);
            dintattn_model_free(m);
            checked++;
        }
    assert_true(checked >= 4);
}

/* Q8, Q4 and BF16 weights (precision EXACT, against the reference of the converted weights; AUTO,
   with int8 / bf16 activations, against the solo run only) and BF16 / Q8 caches, batched */
static void test_weight_and_cache_types_in_a_batch(void **state)
{
    static const dintattn_weights how[] = {DINTATTN_WEIGHTS_Q8, DINTATTN_WEIGHTS_Q4, DINTATTN_WEIGHTS_BF16};
    static const char *const wext[] = {".q8.logits", ".q4.logits", ".bf16.logits"};
    static const dintattn_kv_type kvs[] = {DINTATTN_KV_BF16, DINTATTN_KV_Q8};
    static const char *const kext[] = {".kvbf16.logits", ".kvq8.logits"};
    int f, k, th;
    (void)state;
    assert_true(n_conv >= 4);
    for (f = 0; f < n_conv; f++)
        for (th = 1; th <= 2; th++) {
            setup su;
            memset(&su, 0, sizeof su);
            su.n_threads = th;
            for (k = 0; k < 3; k++) {
                dintattn_model *m = load_fixture_as(conv[f].name, DINTATTN_QK_AUTO, how[k]);
                float *ref = read_logits(&conv[f], wext[k], m);
                su.kv = DINTATTN_KV_F32;
                su.precision = DINTATTN_PRECISION_EXACT, su.tol_solo = TOL_SOLO;
                check_batch(m, &conv[f], ref, &su, wext[k] + 1);
                su.precision = DINTATTN_PRECISION_AUTO, su.tol_solo = TOL_ROUNDED;
                check_batch(m, &conv[f], NULL, &su, wext[k] + 1);
                su.precision = DINTATTN_PRECISION_FAST;
                check_batch(m, &conv[f], NULL, &su, wext[k] + 1);
                free(ref);
                dintattn_model_free(m);
            }
            for (k = 0; k < 2; k++) {
                dintattn_model *m = load_fixture(conv[f].name, DINTATTN_QK_AUTO);
                float *ref = read_logits(&conv[f], kext[k], m);
                su.kv = kvs[k], su.precision = DINTATTN_PRECISION_EXACT, su.tol_solo = TOL_ROUNDED;
                check_batch(m, &conv[f], ref, &su, kext[k] + 1);
                free(ref);
                dintattn_model_free(m);
            }
        }
}

/* Logits of every id of f run as one prefill of n tokens after a prefill of the rest, in a new
   session of m (precision p, 2 threads) */
static void prefill_rows(const dintattn_model *m, const fixture *f, int n, dintattn_precision p, float *out)
{
    dintattn_session *s = test_session_p(m, 0, 0, 2, p);
    dintattn_error err;
    const size_t V = (size_t)dintattn_model_config(m)->vocab_size;
    if (f->n - n > 0 && dintattn_prefill(s, f->ids, f->n - n, NULL, 0, &err)) fail_msg("prefill: %s", err.message);
    if (dintattn_prefill(s, f->ids + f->n - n, n, out + (size_t)(f->n - n) * V, 1, &err)) fail_msg("prefill: %s", err.message);
    dintattn_session_free(s);
}

/* Weights packed ahead (dintattn_model_prepack): a prompt long enough for the panels gives the
   logits it gave packing each panel as it ran, bit for bit (the same panels, the same kernel);
   shorter chunks, which now read the panels instead of the rows, stay within the rounding bound,
   and so do batches against their solo runs; a bound below the panels' size packs nothing; a
   second call packs nothing more; a session whose prompts run int8 panels (Q8) packs something */
static void test_prepacked_panels_in_a_batch(void **state)
{
    static const dintattn_weights how[] = {DINTATTN_WEIGHTS_Q8, DINTATTN_WEIGHTS_Q4, DINTATTN_WEIGHTS_BF16};
    static const dintattn_precision prec[] = {DINTATTN_PRECISION_AUTO, DINTATTN_PRECISION_AUTO, DINTATTN_PRECISION_FAST};
    int f, k, i;
    (void)state;
    assert_true(n_conv >= 4);
    for (f = 0; f < n_conv; f++)
        for (k = 0; k < 3; k++) {
            dintattn_model *m = load_fixture_as(conv[f].name, DINTATTN_QK_AUTO, how[k]);
            const int N = conv[f].n, lens[3] = {2, 5, N};
            const size_t V = (size_t)dintattn_model_config(m)->vocab_size, rows = (size_t)N * V;
            float *before[3], *after = (float *)calloc(rows, sizeof(float));
            dintattn_session *s = test_session_p(m, 0, 0, 2, prec[k]);
            dintattn_prefill_unit unit;
            dintattn_error err;
            size_t bytes = 0, again = 1, j;
            setup su;
            assert_non_null(after);
            assert_true(N >= DINTATTN__GEMM_MIN_TOKENS);
            for (i = 0; i < 3; i++) {
                assert_non_null(before[i] = (float *)calloc(rows, sizeof(float)));
                prefill_rows(m, &conv[f], lens[i], prec[k], before[i]);
            }
            {
                const dintattn_result r = dintattn_model_prepack(m, s, 1, &bytes, &err);
                assert_int_equal(r, bytes > 1 ? DINTATTN_ERR_NOMEM : DINTATTN_OK);
                if (bytes > 1) assert_non_null(strstr(err.message, "MB, more than the 0 MB allowed"));
            }
            prefill_rows(m, &conv[f], 2, prec[k], after); /* nothing was packed: the rows as before */
            assert_memory_equal(before[0], after, sizeof(float) * rows);
            assert_int_equal(dintattn_model_prepack(m, s, 0, &bytes, &err), DINTATTN_OK);
            assert_int_equal(dintattn_model_prepack(m, s, 0, &again, &err), DINTATTN_OK);
            assert_int_equal(again, 0);
            assert_int_equal(dintattn_session_prefill_unit(s, dintattn_weights_name(how[k]), &unit, &err), DINTATTN_OK);
            if (unit == DINTATTN_PREFILL_INT8_PANELS || unit == DINTATTN_PREFILL_BF16_PANELS) assert_true(bytes > 0);
            if (k == 0 && unit == DINTATTN_PREFILL_INT8_PANELS) assert_true(bytes > 0);
            for (i = 0; i < 3; i++) {
                double worst = 0;
                prefill_rows(m, &conv[f], lens[i], prec[k], after);
                if (lens[i] == N) /* one prompt on the panels both times */
                    assert_memory_equal(before[i], after, sizeof(float) * rows);
                for (j = 0; j < rows; j++)
                    if (fabs((double)after[j] - (double)before[i][j]) > worst) worst = fabs((double)after[j] - (double)before[i][j]);
                if (worst > TOL_ROUNDED) fail_msg("%s %s: a prompt's last %d ids after packing ahead: %g from before", conv[f].name,
                                                  dintattn_weights_name(how[k]), lens[i], worst);
                free(before[i]);
            }
            memset(&su, 0, sizeof su);
            su.n_threads = 2, su.precision = prec[k], su.tol_solo = TOL_ROUNDED;
            check_batch(m, &conv[f], NULL, &su, "prepacked");
            dintattn_session_free(s);
            free(after);
            dintattn_model_free(m);
        }
}

/* all_logits: every token's logits, through passes of max_tokens that cut the items anywhere,
   equal a solo prefill's rows (all_logits there too) within TOL_SOLO; an item without it beside
   them gets its last row only */
static void test_all_logits_in_a_batch(void **state)
{
    int f, i, pass;
    (void)state;
    for (f = 0; f < n_fx; f++) {
        const dintattn_model *m = load_fixture(fx[f].name, DINTATTN_QK_AUTO);
        const size_t V = (size_t)dintattn_model_config(m)->vocab_size;
        const int N = fx[f].n, len[3] = {N, N - 3 > 1 ? N - 3 : 1, 2};
        for (pass = 0; pass < 2; pass++) {
            dintattn_batch_item items[3] = {{0}};
            dintattn_batch_options opt;
            dintattn_session *s[3];
            dintattn_error err;
            float *got[3], *want = (float *)calloc((size_t)N * V, sizeof(float)), *last = (float *)calloc(V, sizeof(float));
            assert_non_null(want);
            assert_non_null(last);
            memset(&opt, 0, sizeof opt);
            opt.max_tokens = pass ? 4 : 0;
            for (i = 0; i < 3; i++) {
                s[i] = test_session_p(m, 0, 0, 2, DINTATTN_PRECISION_EXACT);
                assert_non_null(got[i] = (float *)calloc((size_t)N * V, sizeof(float)));
                items[i].sess = s[i], items[i].tokens = fx[f].ids + (N - len[i]), items[i].n_tokens = len[i];
                items[i].logits = i == 2 ? last : got[i], items[i].all_logits = i != 2;
            }
            if (dintattn_batch_step(items, 3, &opt, &err) != DINTATTN_OK) fail_msg("batch: %s", err.message);
            for (i = 0; i < 3; i++) {
                dintattn_session *solo = test_session_p(m, 0, 0, 2, DINTATTN_PRECISION_EXACT);
                const float *g = i == 2 ? last : got[i], *w = i == 2 ? want + (size_t)(len[i] - 1) * V : want;
                const size_t rows = i == 2 ? 1 : (size_t)len[i];
                size_t j;
                if (dintattn_prefill(solo, fx[f].ids + (N - len[i]), len[i], want, 1, &err)) fail_msg("solo: %s", err.message);
                for (j = 0; j < rows * V; j++)
                    if (fabs((double)g[j] - (double)w[j]) > TOL_SOLO * (1 + fabs((double)w[j])))
                        fail_msg("%s: item %d (all_logits %d), max_tokens %d, row %zu: %g against %g", fx[f].name, i,
                                 items[i].all_logits, opt.max_tokens, j / V, g[j], w[j]);
                dintattn_session_free(solo);
                dintattn_session_free(s[i]);
                free(got[i]);
            }
            free(want);
            free(last);
        }
        dintattn_model_free((dintattn_model *)m);
    }
}

/* A batch of one sequence runs its chunks as dintattn_prefill / dintattn_decode do: the same
   route for the same number of tokens, so the same logits bit for bit, on every fixture */
static void test_a_batch_of_one_is_the_solo_run(void **state)
{
    int f, th;
    (void)state;
    for (f = 0; f < n_fx; f++) {
        dintattn_model *m = load_fixture(fx[f].name, DINTATTN_QK_AUTO);
        const size_t V = (size_t)dintattn_model_config(m)->vocab_size;
        seq qs[4];
        setup su;
        float *out[1], *solo = (float *)calloc((size_t)fx[f].n * V, sizeof(float));
        dintattn_session *sess[1];
        int ended[MAX_IDS], q;
        make_seqs(&fx[f], qs);
        memset(&su, 0, sizeof su);
        su.precision = DINTATTN_PRECISION_AUTO, su.kv = DINTATTN_KV_F32;
        for (th = 1; th <= 2; th++)
            for (q = 0; q < 4; q++) {
                su.n_threads = th;
                out[0] = (float *)calloc((size_t)fx[f].n * V, sizeof(float));
                memset(solo, 0, sizeof(float) * (size_t)fx[f].n * V);
                run_batch(m, &qs[q], 1, &su, out, sess);
                run_solo(m, &qs[q], &su, solo, ended);
                if (memcmp(out[0], solo, sizeof(float) * (size_t)qs[q].n * V))
                    fail_msg("%s sequence %d, %d threads: a batch of one differs from its solo run", fx[f].name, q, th);
                dintattn_session_free(sess[0]);
                free(out[0]);
            }
        free(solo);
        dintattn_model_free(m);
    }
}

/* Sessions unlike the first in a batch: a Q8 or BF16 cache, a shorter or longer context, another
   thread count, another n_batch (their attention runs on the first's pool and scratch where those
   fit them, else on their own); each still gives its solo run and the reference of its cache type */
static void test_unlike_sessions_share_a_batch(void **state)
{
    static const char *const ext[] = {".logits", ".kvq8.logits", ".logits", ".kvbf16.logits"};
    float *refs[4];
    int f, k;
    (void)state;
    assert_true(n_conv >= 4);
    for (f = 0; f < n_conv; f++) {
        dintattn_model *m = load_fixture(conv[f].name, DINTATTN_QK_AUTO);
        const int model_ctx = dintattn_model_config(m)->max_seq_len;
        setup sus[4];
        int i, first;
        assert_true(model_ctx > conv[f].n + 1);
        for (k = 0; k < 4; k++) refs[k] = read_logits(&conv[f], ext[k], m);
        for (first = 0; first < 3; first++) { /* kind `first` first: it lends its pool where it fits */
            memset(sus, 0, sizeof sus);
            for (i = 0; i < 4; i++) {
                const int kind = (i + first) % 4; /* which kind of session sequence i gets */
                sus[i].precision = DINTATTN_PRECISION_EXACT;
                sus[i].kv = kind == 1 ? DINTATTN_KV_Q8 : kind == 3 ? DINTATTN_KV_BF16 : DINTATTN_KV_F32;
                sus[i].tol_solo = sus[i].kv == DINTATTN_KV_F32 ? TOL_SOLO : TOL_ROUNDED;
                sus[i].n_ctx = kind == 2 ? conv[f].n + 1 : 0; /* a context shorter than the others' */
                sus[i].n_threads = kind == 2 ? 1 : 2;
                sus[i].n_batch = kind == 3 ? 2 : 0;
                sus[i].ref = refs[kind];
            }
            check_mixed(m, &conv[f], sus, first == 0 ? "unlike sessions, f32 cache first" : first == 1
                                                      ? "unlike sessions, Q8 cache first" : "unlike sessions, short context first");
        }
        for (k = 0; k < 4; k++) free(refs[k]);
        dintattn_model_free(m);
    }
}

/* DINT sessions stepped in a batch keep their record of steps: truncated to n and fed the rest
   of the ids, a session gives the reference's rows again (and its solo run's: a fresh session fed
   the first n ids then the rest) */
static void test_dint_truncate_after_batched_steps(void **state)
{
    int f, checked = 0;
    (void)state;
    for (f = 0; f < n_fx; f++) {
        dintattn_model *m = load_fixture(fx[f].name, DINTATTN_QK_AUTO);
        const size_t V = (size_t)dintattn_model_config(m)->vocab_size;
        seq qs[4];
        float *out[4], *ref, *got, *fresh;
        dintattn_session *sess[4], *s;
        setup su, sus[4];
        dintattn_error err;
        int i, cut, n_seq;
        if (dintattn_model_config(m)->attention != DINTATTN_ATTN_DINT) {
            dintattn_model_free(m);
            continue;
        }
        ref = read_logits(&fx[f], ".logits", m);
        n_seq = make_seqs(&fx[f], qs);
        memset(&su, 0, sizeof su);
        su.precision = DINTATTN_PRECISION_AUTO, su.kv = DINTATTN_KV_F32, su.n_threads = 2, su.max_tokens = 4;
        for (i = 0; i < n_seq; i++) out[i] = (float *)calloc((size_t)fx[f].n * V, sizeof(float));
        got = (float *)malloc(sizeof(float) * V * (size_t)fx[f].n);
        fresh = (float *)malloc(sizeof(float) * V * (size_t)fx[f].n);
        for (i = 0; i < n_seq; i++) sus[i] = su;
        run_batch(m, qs, n_seq, sus, out, sess);
        for (cut = 1; cut < qs[0].n; cut += 3) {
            const int rest = qs[0].n - cut;
            if (dintattn_session_truncate(sess[0], cut, &err) != DINTATTN_OK) fail_msg("truncate: %s", err.message);
            if (dintattn_prefill(sess[0], qs[0].ids + cut, rest, got, 1, &err) != DINTATTN_OK)
                fail_msg("prefill: %s", err.message);
            s = test_session_kv(m, 0, 0, 2, su.precision, su.kv);
            if (dintattn_prefill(s, qs[0].ids, cut, NULL, 0, &err) != DINTATTN_OK ||
                dintattn_prefill(s, qs[0].ids + cut, rest, fresh, 1, &err) != DINTATTN_OK)
                fail_msg("fresh: %s", err.message);
            dintattn_session_free(s);
            if (!(rel_error(got, fresh, V * (size_t)rest) <= TOL_SOLO))
                fail_msg("%s truncated to %d: %.3g from a fresh session", fx[f].name, cut,
                         rel_error(got, fresh, V * (size_t)rest));
            if (!(rel_error(got, ref + (size_t)cut * V, V * (size_t)rest) <= TOL_REFERENCE))
                fail_msg("%s truncated to %d: %.3g from the reference", fx[f].name, cut,
                         rel_error(got, ref + (size_t)cut * V, V * (size_t)rest));
        }
        for (i = 0; i < n_seq; i++) dintattn_session_free(sess[i]), free(out[i]);
        free(got), free(fresh), free(ref);
        dintattn_model_free(m);
        checked++;
    }
    assert_true(checked >= 5);
}

/* Refused batches name the item and change no session */
static void expect_refused(dintattn_batch_item *items, int n, const dintattn_batch_options *opt, dintattn_result code,
                           const char *message)
{
    dintattn_error err;
    assert_int_equal(dintattn_batch_step(items, n, opt, &err), code);
    assert_string_equal(err.message, message);
}

static void test_bad_batches_are_refused_without_side_effects(void **state)
{
    dintattn_model *a = load_fixture(fx[0].name, DINTATTN_QK_AUTO), *b = load_fixture(fx[1].name, DINTATTN_QK_AUTO);
    dintattn_session *sa = test_session(a, 8, 0, 1), *sb = test_session(b, 8, 0, 1), *sa2 = test_session(a, 8, 0, 1);
    dintattn_session *exact = test_session_p(a, 8, 0, 1, DINTATTN_PRECISION_EXACT);
    dintattn_batch_item it[2] = {{0}};
    dintattn_batch_options opt;
    dintattn_error err;
    int ids[9] = {1, 2, 3, 4, 5, 6, 7, 8, 9}, bad = dintattn_model_config(a)->vocab_size;
    char msg[512];
    (void)state;
    memset(&opt, 0, sizeof opt);
    assert_int_equal(dintattn_prefill(sa, ids, 2, NULL, 0, &err), DINTATTN_OK);
    it[0].sess = sa, it[0].tokens = ids, it[0].n_tokens = 1, it[0].logits = NULL;
    it[1] = it[0];
    expect_refused(NULL, 1, NULL, DINTATTN_ERR_ARG, "dintattn_batch_step: no items (items NULL, n_items = 1)");
    expect_refused(it, 0, NULL, DINTATTN_ERR_ARG, "dintattn_batch_step: no items (items given, n_items = 0)");
    it[1].sess = sb;
    expect_refused(it, 2, NULL, DINTATTN_ERR_ARG,
                   "dintattn_batch_step: item 1's session is of another model than item 0's: batch only sessions of "
                   "one model");
    it[1].sess = NULL;
    expect_refused(it, 2, NULL, DINTATTN_ERR_ARG, "dintattn_batch_step: item 1 has no session (NULL)");
    it[1].sess = sa2, it[1].tokens = NULL;
    expect_refused(it, 2, NULL, DINTATTN_ERR_ARG, "dintattn_batch_step: item 1 has no tokens (NULL)");
    it[1].tokens = ids, it[1].sess = sa;
    expect_refused(it, 2, NULL, DINTATTN_ERR_ARG,
                   "dintattn_batch_step: items 0 and 1 are one session: give a session's tokens in one item");
    it[1].sess = sa2, it[1].n_tokens = 0;
    expect_refused(it, 2, NULL, DINTATTN_ERR_ARG, "dintattn_batch_step: item 1 has no tokens (n_tokens = 0)");
    it[1].n_tokens = 9;
    expect_refused(it, 2, NULL, DINTATTN_ERR_CONTEXT,
                   "dintattn_batch_step: item 1's 9 tokens do not fit: its session holds 0 of 8");
    it[0].n_tokens = 7;
    expect_refused(it, 1, NULL, DINTATTN_ERR_CONTEXT,
                   "dintattn_batch_step: item 0's 7 tokens do not fit: its session holds 2 of 8");
    it[0].n_tokens = 1, it[1].n_tokens = 2, it[1].tokens = &bad;
    it[1].n_tokens = 1;
    snprintf(msg, sizeof msg,
             "dintattn_batch_step: item 1's token %d at index 0 is outside the vocabulary [0, %d)", bad, bad);
    expect_refused(it, 2, NULL, DINTATTN_ERR_ARG, msg);
    it[1].tokens = ids, it[1].sess = exact;
    snprintf(msg, sizeof msg,
             "dintattn_batch_step: item 1's session runs at precision exact, kernels %s, item 0's at auto, %s: batch "
             "only sessions made with one precision and kernel level",
             dintattn_kernels_name(exact->k->level), dintattn_kernels_name(sa->k->level));
    expect_refused(it, 2, NULL, DINTATTN_ERR_ARG, msg);
    it[1].sess = sa2;
    opt.max_tokens = 9;
    expect_refused(it, 2, &opt, DINTATTN_ERR_ARG,
                   "dintattn_batch_step: max_tokens = 9 is outside [0, 8], the tokens item 0's session holds a step "
                   "(its n_batch)");
    assert_int_equal(dintattn_session_pos(sa), 2);
    assert_int_equal(dintattn_session_pos(sa2), 0);
    assert_int_equal(dintattn_session_pos(sb), 0);
    opt.max_tokens = 1; /* accepted: two passes */
    assert_int_equal(dintattn_batch_step(it, 2, &opt, &err), DINTATTN_OK);
    assert_int_equal(dintattn_session_pos(sa), 3);
    assert_int_equal(dintattn_session_pos(sa2), 1);
    dintattn_session_free(sa), dintattn_session_free(sa2), dintattn_session_free(sb), dintattn_session_free(exact);
    dintattn_model_free(a), dintattn_model_free(b);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_bad_batches_are_refused_without_side_effects),
        cmocka_unit_test(test_a_batch_of_one_is_the_solo_run),
        cmocka_unit_test(test_every_fixture_in_a_batch_equals_its_solo_run),
        cmocka_unit_test(test_shared_diff_forms_in_a_batch),
        cmocka_unit_test(test_weight_and_cache_types_in_a_batch),
        cmocka_unit_test(test_unlike_sessions_share_a_batch),
        cmocka_unit_test(test_dint_truncate_after_batched_steps),
        cmocka_unit_test(test_prepacked_panels_in_a_batch),
        cmocka_unit_test(test_all_logits_in_a_batch),
    };
    n_fx = read_fixtures(fx, 0);
    n_conv = read_converted(conv);
    return cmocka_run_group_tests(tests, NULL, NULL);
}
