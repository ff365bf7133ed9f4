/* Activation statistics (dintattn_session_act_start / dintattn_session_act_stats): every number
   equals a float64 summary, computed here by sorting and two-pass moments, of the rows the engine
   recorded (seen through DINTATTN__ACT_TAP); the rows are what docs/computing.md says they are
   (the logits' softmaxes are the A1 and A2 rows inspection shows, the last layer's hidden states
   give the float64 reference's logits through the final norm and LM head, each FFN input is
   RMSNorm of the residual stream the FFN then adds to); and prefill, decode, chunks, threads and
   batches agree. Fixtures: one random model of each family (tests/fixtures, tools/make_fixtures.py). */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

static void tap_row(const void *acc, const float *x, int n);
#define DINTATTN__ACT_TAP(acc, x, n) tap_row((acc), (x), (n))
#define DINTATTN_IMPLEMENTATION
#include "../dintattn.h"
#include "test_util.h"

/* The float64 summaries against the library's: the moments are sums in double both ways, in
   other orders (one pass of merged rows against two passes over all), so they agree to about
   1e-12; 1e-9 leaves room without hiding a wrong formula. The median is the histogram's, within
   2^-8 (docs/computing.md). Runs of different kernels, chunks and threads agree within the
   engine's own f32 rounding (1e-5 relative; 1e-4 for kurtosis, a fourth power). */
#define TOL_MOMENTS 1e-9
#define TOL_MEDIAN (1.0 / 256)
#define TOL_RUNS 1e-5
#define TOL_RUNS_KURTOSIS 1e-4

static const char *const families[] = {"standard_gqa_halves_f32", "diff_interleaved_f32", "dint_softmax_f32",
                                       "shared_diff_r2_f32",      "grouped_diff_g2_f32",  "v11_dint_token_shared_k_bf16"};
#define N_FAMILIES (sizeof families / sizeof families[0])

/* --- the tap: every row recorded, per (layer, kind), in order ---------------------------------- */
#define MAX_ACC (64 * DINTATTN_ACT_KINDS)
typedef struct tap_list {
    float *x;
    size_t n, cap;
    int *len; /* each row's length */
    size_t rows, cap_rows;
} tap_list;
static tap_list taps[MAX_ACC];
static const dintattn__act_acc *tap_base; /* the session's accumulators; NULL: not tapping */

static void tap_row(const void *acc, const float *x, int n)
{
    tap_list *t;
    ptrdiff_t i;
    if (!tap_base) return;
    i = (const dintattn__act_acc *)acc - tap_base;
    assert_true(i >= 0 && i < MAX_ACC);
    t = &taps[i];
    if (t->n + (size_t)n > t->cap) {
        t->cap = 2 * (t->n + (size_t)n);
        t->x = (float *)realloc(t->x, sizeof(float) * t->cap);
        assert_non_null(t->x);
    }
    if (t->rows == t->cap_rows) {
        t->cap_rows = 2 * t->cap_rows + 16;
        t->len = (int *)realloc(t->len, sizeof(int) * t->cap_rows);
        assert_non_null(t->len);
    }
    memcpy(t->x + t->n, x, sizeof(float) * (size_t)n);
    t->n += (size_t)n;
    t->len[t->rows++] = n;
}

static void tap_start(const dintattn_session *s)
{
    int i;
    for (i = 0; i < MAX_ACC; i++) taps[i].n = taps[i].rows = 0;
    tap_base = s->act->acc;
}

static void tap_free(void)
{
    int i;
    for (i = 0; i < MAX_ACC; i++) {
        free(taps[i].x), free(taps[i].len);
        memset(&taps[i], 0, sizeof taps[i]);
    }
    tap_base = NULL;
}

static tap_list *tap_of(int layer, dintattn_act_kind kind) { return &taps[layer * DINTATTN_ACT_KINDS + (int)kind]; }

/* The last row tapped of (layer, kind) */
static const float *tap_last(int layer, dintattn_act_kind kind, int *n)
{
    const tap_list *t = tap_of(layer, kind);
    assert_true(t->rows > 0);
    *n = t->len[t->rows - 1];
    return t->x + t->n - (size_t)*n;
}

/* --- the float64 summary ------------------------------------------------------------------------ */
typedef struct ref_stats {
    long long count, nonfinite;
    double *mags; /* descending */
    double median, mean, std, kurtosis;
} ref_stats;

static int desc64(const void *a, const void *b)
{
    const double x = *(const double *)a, y = *(const double *)b;
    return x < y ? 1 : x > y ? -1 : 0;
}

/* docs/computing.md's definitions, directly: sort the magnitudes, take rank ceil(count / 2) of the
   ascending order; moments about the mean in two passes */
static void ref_of(const float *x, size_t n, ref_stats *r)
{
    double sum = 0, m2 = 0, m4 = 0;
    size_t i;
    memset(r, 0, sizeof *r);
    r->mags = (double *)malloc(sizeof(double) * (n ? n : 1));
    assert_non_null(r->mags);
    for (i = 0; i < n; i++) {
        if (!isfinite(x[i])) {
            r->nonfinite++;
            continue;
        }
        r->mags[r->count++] = fabs((double)x[i]);
        sum += x[i];
    }
    if (!r->count) return;
    qsort(r->mags, (size_t)r->count, sizeof(double), desc64);
    r->median = r->mags[r->count - (r->count + 1) / 2];
    r->mean = sum / (double)r->count;
    for (i = 0; i < n; i++)
        if (isfinite(x[i])) {
            const double d = x[i] - r->mean;
            m2 += d * d, m4 += d * d * d * d;
        }
    r->std = sqrt(m2 / (double)r->count);
    r->kurtosis = m2 > 0 ? (double)r->count * m4 / (m2 * m2) : NAN;
}

static int near_rel(double got, double want, double tol)
{
    if (isnan(want)) return isnan(got);
    return fabs(got - want) <= tol * fabs(want) + 1e-300;
}

/* The library's statistics of (layer, kind) against ref_of of the same elements. */
static void expect_matches_ref(const dintattn_session *s, int layer, dintattn_act_kind kind, const float *x,
                               size_t n, int top_k, const char *what)
{
    dintattn_act_stats st;
    dintattn_error err;
    ref_stats r;
    float *top = (float *)malloc(sizeof(float) * (size_t)top_k);
    long long i, k;
    assert_non_null(top);
    assert_int_equal(dintattn_session_act_stats(s, layer, kind, &st, top, top_k, &err), DINTATTN_OK);
    ref_of(x, n, &r);
    if (st.count != r.count || st.nonfinite != r.nonfinite)
        fail_msg("%s layer %d %s: count %lld, nonfinite %lld; float64 %lld, %lld", what, layer,
                 dintattn_act_kind_name(kind), st.count, st.nonfinite, r.count, r.nonfinite);
    k = r.count < top_k ? r.count : top_k;
    assert_int_equal(st.k, k);
    for (i = 0; i < k; i++) /* magnitudes of floats: the same floats, exactly */
        if ((double)top[i] != r.mags[i])
            fail_msg("%s layer %d %s: top[%lld] = %.9g, float64 %.9g", what, layer, dintattn_act_kind_name(kind), i,
                     (double)top[i], r.mags[i]);
    if (r.count) {
        const long long q = r.count - (r.count + 1) / 2; /* the median's index, descending */
        assert_true(st.top1 == r.mags[0] && st.topk == r.mags[k - 1]);
        if (q < k ? st.median != r.median : !(fabs(st.median - r.median) <= TOL_MEDIAN * r.median))
            fail_msg("%s layer %d %s: median %.9g, float64 %.9g (%s)", what, layer, dintattn_act_kind_name(kind),
                     st.median, r.median, q < k ? "exact" : "histogram");
        assert_true(st.median > 0 ? near_rel(st.ratio, st.top1 / st.median, 1e-15) : st.ratio == HUGE_VAL);
        if (!(fabs(st.mean - r.mean) <= TOL_MOMENTS * (fabs(r.mean) + r.std)) || !near_rel(st.std, r.std, TOL_MOMENTS) ||
            !near_rel(st.kurtosis, r.kurtosis, TOL_MOMENTS))
            fail_msg("%s layer %d %s: mean %.12g std %.12g kurtosis %.12g; float64 %.12g %.12g %.12g", what, layer,
                     dintattn_act_kind_name(kind), st.mean, st.std, st.kurtosis, r.mean, r.std, r.kurtosis);
    } else {
        assert_true(st.top1 == 0 && st.median == 0 && st.kurtosis == 0);
    }
    free(r.mags), free(top);
}

static dintattn_session *collecting(const dintattn_model *m, int n_batch, int n_threads, int top_k)
{
    dintattn_session *s = test_session(m, 0, n_batch, n_threads);
    dintattn_act_options o;
    dintattn_error err;
    memset(&o, 0, sizeof o);
    o.top_k = top_k;
    if (dintattn_session_act_start(s, &o, &err) != DINTATTN_OK) fail_msg("%s", err.message);
    return s;
}

static const fixture *find(const char *name)
{
    static fixture fx[MAX_FIXTURES];
    static int n;
    int i;
    if (!n) n = read_fixtures(fx, 0);
    for (i = 0; i < n; i++)
        if (!strcmp(fx[i].name, name)) return &fx[i];
    fail_msg("no fixture %s in tests/fixtures/manifest.txt (run from the repository root)", name);
    return NULL;
}

/* Noise maps a model has: distinct (Q2 head, K2 head) pairs of its signal heads (docs/format.md
   section 1: head i reads Q2 head i n_q2 / H and K2 head i n_k2 / H) */
static int noise_maps(const dintattn_config *c)
{
    int i, n = 0;
    if (c->attention == DINTATTN_ATTN_STANDARD) return 0;
    for (i = 0; i < c->n_heads; i++)
        if (i == 0 || i * c->n_q2_heads / c->n_heads != (i - 1) * c->n_q2_heads / c->n_heads ||
            i * c->n_k2_heads / c->n_heads != (i - 1) * c->n_k2_heads / c->n_heads)
            n++;
    return n;
}

/* Every statistic of every layer and kind, after a prompt of each family (k = 5: medians from the
   histogram; k = 65536: every magnitude kept, medians exact), equals the float64 summary of the
   rows recorded, and there are as many as the definitions say: H N (N + 1) / 2 logits of A1 per
   layer, one A2 row per noise map and query, N rows of D for the FFN input and the hidden state. */
static void test_stats_equal_float64_summaries(void **state)
{
    static const int ks[2] = {5, 65536};
    size_t f;
    int ki;
    (void)state;
    for (f = 0; f < N_FAMILIES; f++)
        for (ki = 0; ki < 2; ki++) {
            dintattn_model *m = load_fixture(families[f], DINTATTN_QK_AUTO);
            const dintattn_config *c = dintattn_model_config(m);
            const fixture *fx = find(families[f]);
            const long long N = fx->n, tri = N * (N + 1) / 2;
            dintattn_session *s = collecting(m, 0, 2, ks[ki]);
            dintattn_error err;
            int l, kind;
            tap_start(s);
            assert_int_equal(dintattn_prefill(s, fx->ids, fx->n, NULL, 0, &err), DINTATTN_OK);
            for (l = 0; l < c->n_layers; l++)
                for (kind = 0; kind < DINTATTN_ACT_KINDS; kind++) {
                    const tap_list *t = tap_of(l, (dintattn_act_kind)kind);
                    const long long want[4] = {c->n_heads * tri, noise_maps(c) * tri, N * c->dim, N * c->dim};
                    if ((long long)t->n != want[kind])
                        fail_msg("%s layer %d %s: %zu elements recorded, want %lld", families[f], l,
                                 dintattn_act_kind_name((dintattn_act_kind)kind), t->n, want[kind]);
                    expect_matches_ref(s, l, (dintattn_act_kind)kind, t->x, t->n, ks[ki], families[f]);
                }
            dintattn_session_free(s);
            tap_free();
            dintattn_model_free(m);
        }
}

static void softmax64(const float *z, int n, double *p)
{
    double mx = -HUGE_VAL, sum = 0;
    int j;
    for (j = 0; j < n; j++) mx = z[j] > mx ? z[j] : mx;
    for (j = 0; j < n; j++) sum += p[j] = exp((double)z[j] - mx);
    for (j = 0; j < n; j++) p[j] /= sum;
}

typedef struct logit_check {
    int rows;
    double worst;
} logit_check;

/* Inspection's row comes right after its logits were recorded (decode: one query): their
   softmaxes, in float64, are the row's A1 and A2. */
static void check_logits_row(void *user, const dintattn_attn_row *r)
{
    logit_check *lc = (logit_check *)user;
    double p[MAX_IDS];
    const float *z;
    int n, j, map;
    for (map = 0; map < (r->A2 ? 2 : 1); map++) {
        z = tap_last(r->layer, map ? DINTATTN_ACT_LOGITS2 : DINTATTN_ACT_LOGITS1, &n);
        assert_int_equal(n, r->n_keys);
        softmax64(z, n, p);
        for (j = 0; j < n; j++) {
            const double e = fabs(p[j] - (map ? r->A2 : r->A1)[j]);
            if (e > lc->worst) lc->worst = e;
        }
    }
    lc->rows++;
}

static double rmsnorm64(const double *x, const float *w, int D, double eps, double *out)
{
    double ss = 0;
    int i;
    for (i = 0; i < D; i++) ss += x[i] * x[i];
    ss = 1.0 / sqrt(ss / D + eps);
    for (i = 0; i < D; i++) out[i] = x[i] * ss * w[i];
    return ss;
}

/* y = M x (+ b) in double, M's elements as the model holds them */
static void matvec64(const dintattn__mat *M, const double *x, const float *b, double *y)
{
    int r, k;
    for (r = 0; r < M->rows; r++) {
        double acc = b ? b[r] : 0;
        for (k = 0; k < M->cols; k++) acc += (double)dintattn__w_elem(M, (size_t)r * M->cols + k) * x[k];
        y[r] = acc;
    }
}

/* The FFN of docs/format.md section 1 in double: w_down (act(w_gate h) * (w_up h)) */
static void ffn64(const dintattn_config *c, const dintattn__layer *L, const double *h, double *y, double *g, double *u)
{
    const int F = c->hidden_dim;
    int i;
    matvec64(&L->w_gate, h, L->b_gate, g);
    matvec64(&L->w_up, h, L->b_up, u);
    if (c->ffn_act == DINTATTN_FFN_SILU) {
        for (i = 0; i < F; i++) g[i] = g[i] / (1 + exp(-g[i])) * u[i];
    } else { /* PolyNorm: w0 g^3 / rms6 + w1 g^2 / rms4 + w2 g / rms2 + b, rms_p = sqrt(mean g^p + 1e-6) */
        double m2 = 0, m4 = 0, m6 = 0;
        for (i = 0; i < F; i++) m2 += g[i] * g[i], m4 += pow(g[i], 4), m6 += pow(g[i], 6);
        m2 = sqrt(m2 / F + 1e-6), m4 = sqrt(m4 / F + 1e-6), m6 = sqrt(m6 / F + 1e-6);
        for (i = 0; i < F; i++)
            g[i] = (L->act_weight[0] * pow(g[i], 3) / m6 + L->act_weight[1] * g[i] * g[i] / m4 +
                    L->act_weight[2] * g[i] / m2 + L->act_bias[0]) *
                   u[i];
    }
    matvec64(&L->w_down, g, L->b_down, y);
}

/* The rows are the activations docs/computing.md names. Logits: decoded one token at a time,
   each recorded row's softmax is inspection's A1 (A2) row of that head (within 1e-6, the f32
   softmax). Hidden states: the last layer's, through the final RMSNorm and LM head in double, give
   the float64 reference's logits (tools/reference.py, in the fixture; 1e-5 relative, its
   tolerance for the engine). FFN input: RMSNorm(hidden - FFN(ffn_in)) * ffn_norm = ffn_in in
   double: the input is the normed residual stream the FFN's output is then added to (1e-4 of its
   largest element: the hidden state is f32, and the subtraction cancels). */
static void test_rows_are_the_named_activations(void **state)
{
    size_t f;
    (void)state;
    for (f = 0; f < N_FAMILIES; f++) {
        dintattn_model *m = load_fixture(families[f], DINTATTN_QK_AUTO);
        const dintattn_config *c = dintattn_model_config(m);
        const fixture *fx = find(families[f]);
        const int D = c->dim, V = c->vocab_size, N = fx->n, F = c->hidden_dim;
        dintattn_session *s = collecting(m, 0, 2, 0);
        dintattn_inspect ins;
        dintattn_error err;
        logit_check lc;
        char path[256];
        size_t size;
        float *want = NULL, *got = (float *)malloc(sizeof(float) * (size_t)N * V);
        double *x = (double *)malloc(sizeof(double) * (size_t)(D + 2 * F + D)), *h = x + D, *g = h + D, *u = g + F;
        double worst_ffn = 0, scale = 1;
        int t, l, i;
        assert_true(got && x);
        memset(&ins, 0, sizeof ins), memset(&lc, 0, sizeof lc);
        ins.row = check_logits_row, ins.user = &lc;
        assert_int_equal(dintattn_session_inspect(s, &ins, &err), DINTATTN_OK);
        tap_start(s);
        for (t = 0; t < N; t++) assert_int_equal(dintattn_decode(s, fx->ids[t], NULL, &err), DINTATTN_OK);
        assert_int_equal(lc.rows, c->n_layers * c->n_heads * N);
        if (lc.worst > 1e-6) fail_msg("%s: softmax of the recorded logits against A1 / A2: %.3g", families[f], lc.worst);
        /* the hidden states of the last layer -> logits */
        fixture_path(path, sizeof path, families[f], ".logits");
        want = (float *)read_file(path, &size);
        assert_non_null(want);
        assert_int_equal(size, sizeof(float) * (size_t)N * V);
        for (t = 0; t < N; t++) {
            const float *row = tap_of(c->n_layers - 1, DINTATTN_ACT_HIDDEN)->x + (size_t)t * D;
            double *lg = (double *)malloc(sizeof(double) * (size_t)V);
            assert_non_null(lg);
            for (i = 0; i < D; i++) x[i] = row[i];
            rmsnorm64(x, m->norm, D, c->norm_eps, h);
            matvec64(&m->output, h, NULL, lg);
            for (i = 0; i < V; i++) got[(size_t)t * V + i] = (float)lg[i];
            free(lg);
        }
        if (rel_error(got, want, (size_t)N * V) > 1e-5)
            fail_msg("%s: logits from the last hidden states against the float64 reference: %.3g", families[f],
                     rel_error(got, want, (size_t)N * V));
        /* the FFN input is RMSNorm of the residual stream before the FFN */
        for (l = 0; l < c->n_layers; l++)
            for (t = 0; t < N; t++) {
                const float *in = tap_of(l, DINTATTN_ACT_FFN_IN)->x + (size_t)t * D;
                const float *hid = tap_of(l, DINTATTN_ACT_HIDDEN)->x + (size_t)t * D;
                double *y = (double *)malloc(sizeof(double) * (size_t)D * 2), *back = y + D;
                assert_non_null(y);
                for (i = 0; i < D; i++) h[i] = in[i];
                ffn64(c, &m->layers[l], h, y, g, u);
                for (i = 0; i < D; i++) x[i] = hid[i] - y[i];
                rmsnorm64(x, m->layers[l].ffn_norm, D, c->norm_eps, back);
                for (i = 0; i < D; i++) {
                    if (fabs(in[i]) > scale) scale = fabs(in[i]);
                    if (fabs(back[i] - in[i]) > worst_ffn) worst_ffn = fabs(back[i] - in[i]);
                }
                free(y);
            }
        if (worst_ffn > 1e-4 * scale)
            fail_msg("%s: RMSNorm(hidden - FFN(ffn_in)) against ffn_in: %.3g (largest %.3g)", families[f], worst_ffn,
                     scale);
        dintattn_session_free(s);
        tap_free();
        free(want), free(got), free(x);
        dintattn_model_free(m);
    }
}

static void expect_same_stats(const dintattn_session *a, const dintattn_session *b, const char *what, const char *name)
{
    const int L = a->model->cfg.n_layers;
    int l, kind;
    for (l = 0; l < L; l++)
        for (kind = 0; kind < DINTATTN_ACT_KINDS; kind++) {
            dintattn_act_stats x, y;
            assert_int_equal(dintattn_session_act_stats(a, l, (dintattn_act_kind)kind, &x, NULL, 0, NULL), DINTATTN_OK);
            assert_int_equal(dintattn_session_act_stats(b, l, (dintattn_act_kind)kind, &y, NULL, 0, NULL), DINTATTN_OK);
            if (x.count != y.count || x.k != y.k || !near_rel(x.top1, y.top1, TOL_RUNS) ||
                !near_rel(x.topk, y.topk, TOL_RUNS) || !near_rel(x.median, y.median, 2 * TOL_MEDIAN) ||
                !near_rel(x.std, y.std, TOL_RUNS) || !(fabs(x.mean - y.mean) <= TOL_RUNS * (fabs(y.mean) + y.std)) ||
                !near_rel(x.kurtosis, y.kurtosis, TOL_RUNS_KURTOSIS))
                fail_msg("%s, %s layer %d %s: count %lld / %lld, top1 %.9g / %.9g, topk %.9g / %.9g, median %.9g / "
                         "%.9g, std %.9g / %.9g, kurtosis %.9g / %.9g",
                         name, what, l, dintattn_act_kind_name((dintattn_act_kind)kind), x.count, y.count, x.top1,
                         y.top1, x.topk, y.topk, x.median, y.median, x.std, y.std, x.kurtosis, y.kurtosis);
        }
}

/* One prompt run as one prefill, in chunks of 3 on 2 threads, token by token, and in a batch
   beside another session that does not collect (its stacked rows must not count): the same
   statistics within the f32 engine's rounding (the median: two bins, as each is within one). */
static void test_prefill_decode_chunks_and_batches_agree(void **state)
{
    size_t f;
    (void)state;
    for (f = 0; f < N_FAMILIES; f++) {
        dintattn_model *m = load_fixture(families[f], DINTATTN_QK_AUTO);
        const fixture *fx = find(families[f]);
        dintattn_session *one = collecting(m, 0, 1, 7), *chunks = collecting(m, 3, 2, 7), *dec = collecting(m, 0, 1, 7);
        dintattn_session *bat = collecting(m, 4, 2, 7), *other = test_session(m, 0, 4, 1);
        dintattn_batch_item items[2];
        dintattn_error err;
        int rev[MAX_IDS], t;
        assert_int_equal(dintattn_prefill(one, fx->ids, fx->n, NULL, 0, &err), DINTATTN_OK);
        assert_int_equal(dintattn_prefill(chunks, fx->ids, fx->n, NULL, 0, &err), DINTATTN_OK);
        for (t = 0; t < fx->n; t++) assert_int_equal(dintattn_decode(dec, fx->ids[t], NULL, &err), DINTATTN_OK);
        for (t = 0; t < fx->n; t++) rev[t] = fx->ids[fx->n - 1 - t];
        items[0].sess = other, items[0].tokens = rev, items[0].n_tokens = fx->n - 2, items[0].logits = NULL;
        items[1].sess = bat, items[1].tokens = fx->ids, items[1].n_tokens = fx->n - 2, items[1].logits = NULL;
        assert_int_equal(dintattn_batch_step(items, 2, NULL, &err), DINTATTN_OK);
        for (t = fx->n - 2; t < fx->n; t++) { /* then decodes, stacked */
            items[0].tokens = rev + t, items[1].tokens = fx->ids + t, items[0].n_tokens = items[1].n_tokens = 1;
            assert_int_equal(dintattn_batch_step(items, 2, NULL, &err), DINTATTN_OK);
        }
        expect_same_stats(chunks, one, "chunks of 3", families[f]);
        expect_same_stats(dec, one, "decode", families[f]);
        expect_same_stats(bat, one, "batch", families[f]);
        dintattn_session_free(one), dintattn_session_free(chunks), dintattn_session_free(dec);
        dintattn_session_free(bat), dintattn_session_free(other);
        dintattn_model_free(m);
    }
}

static uint64_t rng = 88172645463325252ull;
static double uniform(void) /* xorshift64: [0, 1) */
{
    rng ^= rng << 13, rng ^= rng >> 7, rng ^= rng << 17;
    return (double)(rng >> 11) / 9007199254740992.0;
}

/* The summary itself, on rows no model makes: magnitudes spread over 2^-30 .. 2^30 with both
   signs, exact zeros, subnormals, NaN and infinities, in rows of 1 to 700 (merged moments across
   many rows), equals ref_of; the median from the histogram is within 2^-8, and exact while it is
   among the top_k kept; all-equal values have kurtosis NaN and std 0; a kind never fed is all zero. */
static void test_summary_of_wide_and_odd_values(void **state)
{
    dintattn_model *m = load_fixture("standard_gqa_halves_f32", DINTATTN_QK_AUTO);
    const size_t n = 200003;
    float *x = (float *)malloc(sizeof(float) * n);
    int pass;
    (void)state;
    assert_non_null(x);
    for (pass = 0; pass < 3; pass++) {
        const int top_k = pass == 1 ? 65536 : 10;
        const size_t count = pass == 1 ? 1001 : n; /* pass 1: the median among the kept */
        dintattn_session *s = collecting(m, 0, 1, top_k);
        dintattn_act_stats st;
        size_t i, at;
        for (i = 0; i < count; i++) {
            const double u = uniform();
            x[i] = (float)(ldexp(1.0 + uniform(), (int)(60 * uniform()) - 30) * (u < 0.5 ? -1 : 1));
            if (pass == 2) x[i] = -2.5f; /* all equal */
            else if (i % 1000 == 7) x[i] = 0.0f;
            else if (i % 1000 == 9) x[i] = 1e-42f; /* subnormal */
            else if (i % 5000 == 11) x[i] = i % 3 ? (float)NAN : i % 2 ? (float)HUGE_VAL : (float)-HUGE_VAL;
        }
        for (at = 0; at < count;) { /* layer 0's hidden state, row by row */
            const size_t len = 1 + (size_t)(700 * uniform());
            const size_t k = count - at < len ? count - at : len;
            dintattn__act_add(&s->act->acc[DINTATTN_ACT_HIDDEN], s->act->k, x + at, (int)k);
            at += k;
        }
        expect_matches_ref(s, 0, DINTATTN_ACT_HIDDEN, x, count, top_k, "values");
        if (pass == 2) {
            assert_int_equal(dintattn_session_act_stats(s, 0, DINTATTN_ACT_HIDDEN, &st, NULL, 0, NULL), DINTATTN_OK);
            assert_true(isnan(st.kurtosis) && st.std == 0 && st.median == 2.5 && st.ratio == 1);
        }
        assert_int_equal(dintattn_session_act_stats(s, 0, DINTATTN_ACT_FFN_IN, &st, NULL, 0, NULL), DINTATTN_OK);
        assert_true(st.count == 0 && st.nonfinite == 0 && st.k == 0 && st.top1 == 0 && st.ratio == 0);
        dintattn_session_free(s);
    }
    free(x);
    dintattn_model_free(m);
}

/* Off is off and the calls say what is wrong: no statistics before act_start or after act_stop
   (DINTATTN_ERR_ARG naming the cure), a layer or kind out of range and a top_k out of [0, 65536]
   refused; standard attention has no A2; starting again starts from zero; a DINT session's
   truncation runs tokens again without counting them again (the tokens after it count once). */
static void test_calls_and_lifecycle(void **state)
{
    dintattn_model *m = load_fixture("dint_softmax_f32", DINTATTN_QK_AUTO), *std = load_fixture("standard_gqa_halves_f32", DINTATTN_QK_AUTO);
    const dintattn_config *c = dintattn_model_config(m);
    const fixture *fx = find("dint_softmax_f32"), *fs = find("standard_gqa_halves_f32");
    const long long N = fx->n, H = c->n_heads;
    dintattn_session *s = test_session(m, 0, 4, 1);
    dintattn_act_options o;
    dintattn_act_stats st;
    dintattn_error err;
    (void)state;
    memset(&o, 0, sizeof o);
    assert_int_equal(dintattn_session_act_stats(s, 0, DINTATTN_ACT_HIDDEN, &st, NULL, 0, &err), DINTATTN_ERR_ARG);
    assert_non_null(strstr(err.message, "dintattn_session_act_start"));
    assert_int_equal(dintattn_session_act_start(NULL, NULL, &err), DINTATTN_ERR_ARG);
    o.top_k = -1;
    assert_int_equal(dintattn_session_act_start(s, &o, &err), DINTATTN_ERR_ARG);
    o.top_k = 65537;
    assert_int_equal(dintattn_session_act_start(s, &o, &err), DINTATTN_ERR_ARG);
    assert_null(s->act);
    assert_int_equal(dintattn_session_act_start(s, NULL, &err), DINTATTN_OK);
    assert_int_equal(dintattn_session_act_stats(s, c->n_layers, DINTATTN_ACT_HIDDEN, &st, NULL, 0, &err), DINTATTN_ERR_ARG);
    assert_int_equal(dintattn_session_act_stats(s, -1, DINTATTN_ACT_HIDDEN, &st, NULL, 0, &err), DINTATTN_ERR_ARG);
    assert_int_equal(dintattn_session_act_stats(s, 0, DINTATTN_ACT_KINDS, &st, NULL, 0, &err), DINTATTN_ERR_ARG);
    assert_null(dintattn_act_kind_name(DINTATTN_ACT_KINDS));
    assert_string_equal(dintattn_act_kind_name(DINTATTN_ACT_FFN_IN), "ffn_in");
    /* the default top_k is 10 */
    assert_int_equal(dintattn_prefill(s, fx->ids, fx->n, NULL, 0, &err), DINTATTN_OK);
    assert_int_equal(dintattn_session_act_stats(s, 0, DINTATTN_ACT_LOGITS1, &st, NULL, 0, &err), DINTATTN_OK);
    assert_int_equal(st.k, 10);
    assert_int_equal(st.count, H * N * (N + 1) / 2);
    /* truncation to N - 3 runs tokens again (steps of 4) but counts nothing; then 3 new ones count */
    assert_int_equal(dintattn_session_truncate(s, (int)N - 3, &err), DINTATTN_OK);
    assert_int_equal(dintattn_session_act_stats(s, 0, DINTATTN_ACT_LOGITS1, &st, NULL, 0, &err), DINTATTN_OK);
    assert_int_equal(st.count, H * N * (N + 1) / 2);
    assert_int_equal(dintattn_prefill(s, fx->ids + N - 3, 3, NULL, 0, &err), DINTATTN_OK);
    assert_int_equal(dintattn_session_act_stats(s, 0, DINTATTN_ACT_LOGITS1, &st, NULL, 0, &err), DINTATTN_OK);
    assert_int_equal(st.count, H * (N * (N + 1) / 2 + (N - 2) + (N - 1) + N));
    assert_int_equal(dintattn_session_act_stats(s, 0, DINTATTN_ACT_HIDDEN, &st, NULL, 0, &err), DINTATTN_OK);
    assert_int_equal(st.count, (N + 3) * c->dim);
    /* again from zero; stopped, nothing */
    assert_int_equal(dintattn_session_act_start(s, NULL, &err), DINTATTN_OK);
    assert_int_equal(dintattn_session_act_stats(s, 0, DINTATTN_ACT_HIDDEN, &st, NULL, 0, &err), DINTATTN_OK);
    assert_int_equal(st.count, 0);
    dintattn_session_act_stop(s);
    dintattn_session_act_stop(s); /* twice is fine */
    assert_int_equal(dintattn_decode(s, fx->ids[0], NULL, &err), DINTATTN_OK);
    assert_int_equal(dintattn_session_act_stats(s, 0, DINTATTN_ACT_HIDDEN, &st, NULL, 0, &err), DINTATTN_ERR_ARG);
    dintattn_session_free(s);
    /* standard attention: no A2 logits */
    s = collecting(std, 0, 1, 0);
    assert_int_equal(dintattn_prefill(s, fs->ids, 5, NULL, 0, &err), DINTATTN_OK);
    assert_int_equal(dintattn_session_act_stats(s, 0, DINTATTN_ACT_LOGITS2, &st, NULL, 0, &err), DINTATTN_OK);
    assert_int_equal(st.count, 0);
    dintattn_session_free(s);
    dintattn_model_free(m), dintattn_model_free(std);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_stats_equal_float64_summaries),
        cmocka_unit_test(test_rows_are_the_named_activations),
        cmocka_unit_test(test_prefill_decode_chunks_and_batches_agree),
        cmocka_unit_test(test_summary_of_wide_and_odd_values),
        cmocka_unit_test(test_calls_and_lifecycle),
    };
    return cmocka_run_group_tests_name("activations", tests, NULL, NULL);
}
