/* Legal but extreme models (issue 10, "integer safety as a property"): tens of thousands of heads
   of width 1, MQA with 65,536 query heads, a vocabulary of a million, an FFN of two million, 3000
   layers, qk_rank far above dim, head_dim 200,000, max_seq_len at the loader's limit, Grouped-DIFF
   DINT with thousands of heads, and a job of 2^20 attention heads. Each is built here, in memory,
   by a deterministic generator (config + weights k * 2^-e, k a seeded integer in [-127, 127], so
   that BF16 and F16 hold them exactly) and must give the float64 reference's logits
   (tools/reference.py) for one token, a 4-token prefill and the same tokens decoded one at a time
   (one session, reset between the three), with one thread and with two; decode must agree with
   prefill, and two threads with one bit for bit. Shared-DIFF models run factored and merged too;
   the model at max_seq_len's limit also gets a session of n_ctx 0 (the whole context), which must
   be created or refused with DINTATTN_ERR_NOMEM, never crash. Configs whose products pass 2^31
   must be refused as configs (DINTATTN_ERR_CONFIG, the message naming the keys) before any tensor
   is looked at: their files have no tensors.

   The expected logits are in tests/fixtures/extreme/NAME.txt (tools/make_extreme_fixtures.py):
   the CRC-32 of the model's bytes (checked here, so a fixture provably belongs to the bytes this
   file generates), the token ids and, per row, the logits at 64 indices (argmax and argmin among
   them) and five statistics of the whole row (max, min, log-sum-exp, mean and a signed mean), each
   of which moves by at most the largest error of any logit.

       build/test_extreme                 every model
       build/test_extreme NAME...         only these
       build/test_extreme --list          the table
       build/test_extreme --write DIR     writes DIR/NAME.safetensors and DIR/manifest.txt
                                          ("NAME run IDS" or "NAME refuse") for the fixture tool */
#define _POSIX_C_SOURCE 200809L
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>
#include <ctype.h>
#include <errno.h>
#include <signal.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#define DINTATTN_SOLO_BYTES 0 /* every decode job through the thread pool, however small */
#define DINTATTN_IMPLEMENTATION
#include "../dintattn.h"
#include "test_util.h"

/* A session of the maximal context (max_seq_len 2^24) may not fit in memory: dintattn_session_new
   must then say DINTATTN_ERR_NOMEM. Under AddressSanitizer a failed allocation aborts unless
   allocator_may_return_null is set; the library's answer is what is under test, so set it. */
#if defined(__SANITIZE_ADDRESS__)
#define XT_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define XT_ASAN 1
#endif
#endif
#ifdef XT_ASAN
const char *__asan_default_options(void);
const char *__asan_default_options(void) { return "allocator_may_return_null=1"; }
#endif

#define TOL_REFERENCE 5e-6 /* as tests/test_engine.c: relative to max(1, max |reference logit|) */
#define TOL_SELF 1e-5      /* decode against prefill, as tests/test_engine.c */
#define N_CTX 8            /* the sessions' context (every model here has max_seq_len >= 16) */
#define N_IDS 4            /* tokens run per model */
#define MAX_AT 64          /* logits kept per row in a fixture */
#define FIXTURE_DIR "tests/fixtures/extreme/"
#ifndef WATCHDOG_SECONDS
#define WATCHDOG_SECONDS 300 /* a model still running after this long hangs (each takes seconds) */
#endif
#define WATCHDOG_STR(x) #x
#define WATCHDOG_TEXT_(x) WATCHDOG_STR(x)
#define WATCHDOG_TEXT WATCHDOG_TEXT_(WATCHDOG_SECONDS)

/* --- the table ----------------------------------------------------------------------------- */

enum { RUNS, REFUSED_CONFIG, REFUSED };

typedef struct xmodel {
    const char *name, *what;
    /* config; 0 (NULL) leaves a key out, so that the engine applies its default */
    const char *attention;
    int dim, n_layers, vocab_size, hidden_dim, max_seq_len, n_heads, head_dim;
    int v_head_dim, n_k1_heads, n_q2_heads, n_k2_heads, n_v_heads, qk_rank;
    const char *rope;
    double norm_eps; /* dim 1 models use a large epsilon, so that RMSNorm does not flatten x to +-1 */
    int tie_embeddings;
    /* weights */
    int f16;         /* stored as F16 (else BF16) */
    double qk_gain;  /* Q/K weights' standard deviation times sqrt(dim); 0 means 1.5 (peaky softmaxes) */
    double res_gain; /* scale of wo and w_down (each sublayer's share of the residual); 0 means 1 */
    /* what must happen */
    int expect;             /* RUNS, REFUSED_CONFIG (naming keys[0] and keys[1]) or REFUSED (any error) */
    const char *keys[2];
    int ctx0;               /* also a session with n_ctx 0 (= max_seq_len): OK or ERR_NOMEM */
    int qk_forms;           /* also loaded with Shared-DIFF factored and merged */
} xmodel;

/* Sizes: each runs in a few seconds under ASan on 2 cores and in well under 1 GB. Magnitudes:
   logits of a few units; sublayers whose outputs are sums of 10^5..10^6 float32 products, and the
   3000 layers' residual stream, add a small share (res_gain) to the residual, so that the float64
   reference's logits are within the engine's usual tolerance of any float32 evaluation (not just
   this engine's summation order), while a wrong head, row or layer still moves them by 10^3 times
   the tolerance. Models of dim 1 use norm_eps 0.5: RMSNorm of one number is otherwise its sign. */
static const xmodel models[] = {
    /* (a) issue 10's crash: i * n_k1_heads / H overflowed int (46341 * 46342 > 2^31 - 1) */
    {.name = "heads_46342_w1", .what = "standard, 46342 heads of width 1, dim 1", .attention = "standard",
     .dim = 1, .n_layers = 1, .vocab_size = 67, .hidden_dim = 3, .max_seq_len = 16, .n_heads = 46342,
     .head_dim = 1, .rope = "none", .norm_eps = 0.5, .res_gain = 0.25},
    /* (b) MQA: every query head reads the one K and V head */
    {.name = "mqa_65536", .what = "standard MQA, 65536 query heads of 2, 1 K and 1 V head", .attention = "standard",
     .dim = 2, .n_layers = 1, .vocab_size = 61, .hidden_dim = 4, .max_seq_len = 16, .n_heads = 65536,
     .head_dim = 2, .n_k1_heads = 1, .n_v_heads = 1, .res_gain = 0.25},
    {.name = "diff_mqa_65536_f16", .what = "diff, 65536 heads of 2, K1/V 1 head, Q2 4, K2 2, halves, F16",
     .attention = "diff", .dim = 2, .n_layers = 1, .vocab_size = 59, .hidden_dim = 4, .max_seq_len = 16,
     .n_heads = 65536, .head_dim = 2, .n_k1_heads = 1, .n_q2_heads = 4, .n_k2_heads = 2, .n_v_heads = 1,
     .rope = "halves", .f16 = 1, .res_gain = 0.25},
    /* (c) */
    {.name = "vocab_1m_tied", .what = "dint, vocabulary 1,000,000, dim 4, tied embeddings", .attention = "dint",
     .dim = 4, .n_layers = 1, .vocab_size = 1000000, .hidden_dim = 8, .max_seq_len = 16, .n_heads = 2,
     .head_dim = 2, .tie_embeddings = 1},
    /* (d) */
    {.name = "ffn_2m", .what = "diff, hidden_dim 2,000,003, dim 2", .attention = "diff", .dim = 2, .n_layers = 1,
     .vocab_size = 53, .hidden_dim = 2000003, .max_seq_len = 16, .n_heads = 1, .head_dim = 2, .res_gain = 0.25},
    /* (e) with res_gain 1/8 the 3000 layers were chaotic: weights moved by 1e-7 moved logits by 1e-4 */
    {.name = "layers_3000", .what = "dint, 3000 layers of dim 2, 1 head of 2", .attention = "dint", .dim = 2,
     .n_layers = 3000, .vocab_size = 11, .hidden_dim = 2, .max_seq_len = 16, .n_heads = 1, .head_dim = 2,
     .res_gain = 0.015625},
    /* (f) */
    {.name = "shared_diff_r4096", .what = "Shared-DIFF, qk_rank 4096, dim 2, 2 heads of 2", .attention = "diff",
     .dim = 2, .n_layers = 1, .vocab_size = 29, .hidden_dim = 4, .max_seq_len = 16, .n_heads = 2, .head_dim = 2,
     .qk_rank = 4096, .qk_forms = 1},
    /* (g) v_head_dim left to its default, 2 * head_dim = 400,000; scores are sums of 200,000
       products, so Q/K are smaller than elsewhere */
    {.name = "head_dim_200000_f16", .what = "diff, 1 head, head_dim 200,000 (v 400,000), dim 2, F16",
     .attention = "diff", .dim = 2, .n_layers = 1, .vocab_size = 37, .hidden_dim = 4, .max_seq_len = 16,
     .n_heads = 1, .head_dim = 200000, .f16 = 1, .qk_gain = 0.75, .res_gain = 0.25},
    /* (h) */
    {.name = "max_seq_len_limit", .what = "dint, max_seq_len 16,777,216 (the limit), tiny", .attention = "dint",
     .dim = 2, .n_layers = 1, .vocab_size = 19, .hidden_dim = 4, .max_seq_len = 16777216, .n_heads = 1,
     .head_dim = 2, .ctx0 = 1},
    /* (i) */
    {.name = "dint_grouped_8192", .what = "dint, 8192 heads of 2, Q2/K2 2048 heads (G = 4), dim 4, 2 layers",
     .attention = "dint", .dim = 4, .n_layers = 2, .vocab_size = 41, .hidden_dim = 8, .max_seq_len = 16,
     .n_heads = 8192, .head_dim = 2, .n_q2_heads = 2048, .n_k2_heads = 2048, .res_gain = 0.25},
    /* (i) past the overflow of (a), in DINT: i * n_k1_heads and i * n_v_heads pass 2^31 */
    {.name = "dint_grouped_49152_w1", .what = "dint, 49152 heads of 1 (v 2), Q2/K2 12288 heads, dim 1",
     .attention = "dint", .dim = 1, .n_layers = 1, .vocab_size = 31, .hidden_dim = 2, .max_seq_len = 16,
     .n_heads = 49152, .head_dim = 1, .n_q2_heads = 12288, .n_k2_heads = 12288, .rope = "none",
     .norm_eps = 0.5, .res_gain = 0.25},
    /* a decode attention job of 2^20 units (one per head): the pool's counters held 20 bits */
    {.name = "heads_2pow20_w1", .what = "standard, 1,048,576 heads of width 1, dim 1", .attention = "standard",
     .dim = 1, .n_layers = 1, .vocab_size = 23, .hidden_dim = 2, .max_seq_len = 16, .n_heads = 1048576,
     .head_dim = 1, .rope = "none", .norm_eps = 0.5, .res_gain = 0.25},
    /* small ones (files under 64 KB: also seeds of fuzz/corpus/model) */
    {.name = "mqa_8192_w1", .what = "standard MQA, 8192 query heads of 1, dim 1", .attention = "standard", .dim = 1,
     .n_layers = 1, .vocab_size = 17, .hidden_dim = 2, .max_seq_len = 16, .n_heads = 8192, .head_dim = 1,
     .n_k1_heads = 1, .n_v_heads = 1, .rope = "none", .norm_eps = 0.5, .res_gain = 0.25},
    {.name = "rank_2048_dim1", .what = "standard Shared-QK, qk_rank 2048, dim 1, 1 head of 1",
     .attention = "standard", .dim = 1, .n_layers = 1, .vocab_size = 13, .hidden_dim = 2, .max_seq_len = 16,
     .n_heads = 1, .head_dim = 1, .qk_rank = 2048, .rope = "none", .norm_eps = 0.5, .qk_forms = 1},

    /* refused as configs: each file is a header without tensors */
    {.name = "refuse_heads_x_v_head_dim", .what = "n_heads 2^24 * v_head_dim 2^24 = 2^48",
     .attention = "standard", .dim = 1, .n_layers = 1, .vocab_size = 2, .hidden_dim = 1, .max_seq_len = 8,
     .n_heads = 16777216, .head_dim = 1, .v_head_dim = 16777216, .n_k1_heads = 1, .n_v_heads = 1, .rope = "none",
     .expect = REFUSED_CONFIG, .keys = {"n_heads", "v_head_dim"}},
    {.name = "refuse_heads_x_qk_rank", .what = "n_heads 2^16 * qk_rank 2^16 = 2^32 (q1_down rows)",
     .attention = "standard", .dim = 1, .n_layers = 1, .vocab_size = 2, .hidden_dim = 1, .max_seq_len = 8,
     .n_heads = 65536, .head_dim = 1, .n_k1_heads = 1, .n_v_heads = 1, .qk_rank = 65536, .rope = "none",
     .expect = REFUSED_CONFIG, .keys = {"n_heads", "qk_rank"}},
    {.name = "refuse_heads_x_head_dim", .what = "n_heads 2^16 * head_dim 2^16 = 2^32 (v_head_dim 1)",
     .attention = "standard", .dim = 1, .n_layers = 1, .vocab_size = 2, .hidden_dim = 1, .max_seq_len = 8,
     .n_heads = 65536, .head_dim = 65536, .v_head_dim = 1, .n_k1_heads = 1, .n_v_heads = 1, .rope = "none",
     .expect = REFUSED_CONFIG, .keys = {"n_heads", "head_dim"}},
    {.name = "refuse_heads_x_head_dim_2pow31", .what = "diff, n_heads 2^16 * head_dim 2^15 = 2^31 exactly",
     .attention = "diff", .dim = 1, .n_layers = 1, .vocab_size = 2, .hidden_dim = 1, .max_seq_len = 8,
     .n_heads = 65536, .head_dim = 32768, .v_head_dim = 1, .n_k1_heads = 1, .n_q2_heads = 1, .n_k2_heads = 1,
     .n_v_heads = 1, .rope = "none", .expect = REFUSED_CONFIG, .keys = {"n_heads", "head_dim"}},
    {.name = "refuse_max_seq_len_over_limit", .what = "max_seq_len 16,777,217", .attention = "standard",
     .dim = 2, .n_layers = 1, .vocab_size = 2, .hidden_dim = 1, .max_seq_len = 16777217, .n_heads = 1,
     .head_dim = 2, .expect = REFUSED_CONFIG, .keys = {"max_seq_len", NULL}},
    /* products that fit in size_t: the loader may accept the config and then miss the tensors */
    {.name = "nocrash_vocab_x_dim", .what = "vocab_size 2^24 * dim 2^24 = 2^48, no tensors",
     .attention = "standard", .dim = 16777216, .n_layers = 1, .vocab_size = 16777216, .hidden_dim = 1,
     .max_seq_len = 8, .n_heads = 1, .head_dim = 2, .expect = REFUSED},
    {.name = "nocrash_ffn_x_dim_x_layers", .what = "hidden_dim 2^24 * dim 2^24 * 65536 layers, no tensors",
     .attention = "dint", .dim = 16777216, .n_layers = 65536, .vocab_size = 2, .hidden_dim = 16777216,
     .max_seq_len = 8, .n_heads = 1, .head_dim = 2, .expect = REFUSED},
};

#define N_MODELS ((int)(sizeof models / sizeof models[0]))

/* --- the generator ------------------------------------------------------------------------- */

typedef struct sbuf {
    char *p;
    size_t n, cap;
} sbuf;

static void sb_printf(sbuf *b, const char *fmt, ...)
{
    va_list ap;
    int k;
    va_start(ap, fmt);
    k = vsnprintf(NULL, 0, fmt, ap);
    va_end(ap);
    assert_true(k >= 0);
    if (b->n + (size_t)k + 1 > b->cap) {
        size_t cap = b->cap ? b->cap : 4096;
        while (b->n + (size_t)k + 1 > cap) cap *= 2;
        b->p = (char *)realloc(b->p, cap);
        assert_non_null(b->p);
        b->cap = cap;
    }
    va_start(ap, fmt);
    vsnprintf(b->p + b->n, (size_t)k + 1, fmt, ap);
    va_end(ap);
    b->n += (size_t)k;
}

/* The config with docs/format.md section 2's defaults applied: what the tensor shapes need. */
typedef struct xshape {
    int D, L, V, F, H, d, dv, nk1, nq2, nk2, nv, r, diff, tied;
} xshape;

static xshape resolve(const xmodel *x)
{
    xshape s;
    s.D = x->dim;
    s.L = x->n_layers;
    s.V = x->vocab_size;
    s.F = x->hidden_dim;
    s.H = x->n_heads;
    s.d = x->head_dim;
    s.diff = strcmp(x->attention, "standard") != 0;
    s.dv = x->v_head_dim ? x->v_head_dim : s.diff ? 2 * s.d : s.d;
    s.nk1 = x->n_k1_heads ? x->n_k1_heads : s.H;
    s.nv = x->n_v_heads ? x->n_v_heads : s.H;
    s.nq2 = !s.diff ? 0 : x->n_q2_heads ? x->n_q2_heads : s.H;
    s.nk2 = !s.diff ? 0 : x->n_k2_heads ? x->n_k2_heads : s.H;
    s.r = x->qk_rank;
    s.tied = x->tie_embeddings;
    return s;
}

static void config_json(const xmodel *x, sbuf *b)
{
    sb_printf(b, "{\"attention\":\"%s\",\"dim\":%d,\"n_layers\":%d,\"vocab_size\":%d,\"hidden_dim\":%d,"
                 "\"max_seq_len\":%d,\"n_heads\":%d,\"head_dim\":%d",
              x->attention, x->dim, x->n_layers, x->vocab_size, x->hidden_dim, x->max_seq_len, x->n_heads,
              x->head_dim);
    if (x->v_head_dim) sb_printf(b, ",\"v_head_dim\":%d", x->v_head_dim);
    if (x->n_k1_heads) sb_printf(b, ",\"n_k1_heads\":%d", x->n_k1_heads);
    if (x->n_q2_heads) sb_printf(b, ",\"n_q2_heads\":%d", x->n_q2_heads);
    if (x->n_k2_heads) sb_printf(b, ",\"n_k2_heads\":%d", x->n_k2_heads);
    if (x->n_v_heads) sb_printf(b, ",\"n_v_heads\":%d", x->n_v_heads);
    if (x->qk_rank) sb_printf(b, ",\"qk_rank\":%d", x->qk_rank);
    if (x->rope) sb_printf(b, ",\"rope\":\"%s\"", x->rope);
    if (x->norm_eps > 0) sb_printf(b, ",\"norm_eps\":%g", x->norm_eps);
    if (x->tie_embeddings) sb_printf(b, ",\"tie_embeddings\":true");
    sb_printf(b, "}");
}

enum { GEN_UNIFORM, GEN_NEAR_ONE };

typedef struct xtensor {
    char name[48];
    int64_t rows, cols; /* cols 0: a vector */
    int gen, e;         /* GEN_UNIFORM: k * 2^-e, k uniform in [-127, 127]; GEN_NEAR_ONE: 1 + k / 128, |k| <= 12 */
} xtensor;

typedef struct xlist {
    xtensor *t;
    int n, cap;
} xlist;

/* The exponent e for which k * 2^-e (k uniform in [-127, 127], standard deviation 73.6) has about
   the standard deviation `std`. */
static int exponent_for(double std)
{
    int e = -8;
    while (73.6 * ldexp(1.0, -e) > std * 1.4142135623730951) e++;
    return e;
}

static void add(xlist *l, const char *name, int64_t rows, int64_t cols, int gen, double std)
{
    xtensor *t;
    if (l->n == l->cap) {
        l->cap = l->cap ? 2 * l->cap : 64;
        l->t = (xtensor *)realloc(l->t, sizeof *l->t * (size_t)l->cap);
        assert_non_null(l->t);
    }
    t = &l->t[l->n++];
    assert_true(strlen(name) < sizeof t->name);
    strcpy(t->name, name);
    t->rows = rows;
    t->cols = cols;
    t->gen = gen;
    t->e = gen == GEN_UNIFORM ? exponent_for(std) : 0;
}

/* Every tensor of the model (docs/format.md section 2), with the spread of its values:
   Q/K large enough for peaky softmaxes, lambda = exp(q1.k1) - exp(q2.k2) + lambda_init of order 1,
   logits of a few units. */
static void list_tensors(const xmodel *x, xlist *l)
{
    const xshape s = resolve(x);
    const double res = x->res_gain > 0 ? x->res_gain : 1.0, sD = sqrt((double)s.D);
    const double qk = x->qk_gain > 0 ? x->qk_gain : 1.5;
    const char *br[4] = {"q1", "k1", "q2", "k2"};
    const int heads[4] = {s.H, s.nk1, s.nq2, s.nk2};
    char name[64];
    int layer, k;
    add(l, "tok_embeddings.weight", s.V, s.D, GEN_UNIFORM, 1.0);
    add(l, "norm.weight", s.D, 0, GEN_NEAR_ONE, 0);
    if (!s.tied) add(l, "output.weight", s.V, s.D, GEN_UNIFORM, 1.5 / sD);
    for (layer = 0; layer < s.L; layer++) {
#define NAME(suffix) (snprintf(name, sizeof name, "layers.%d.%s", layer, suffix), name)
        add(l, NAME("attn_norm.weight"), s.D, 0, GEN_NEAR_ONE, 0);
        add(l, NAME("ffn_norm.weight"), s.D, 0, GEN_NEAR_ONE, 0);
        if (s.r == 0) {
            for (k = 0; k < (s.diff ? 4 : 2); k++) {
                char w[16];
                snprintf(w, sizeof w, "attn.w%s", br[k]);
                add(l, NAME(w), (int64_t)heads[k] * s.d, s.D, GEN_UNIFORM, qk / sD);
            }
        } else {
            add(l, NAME("attn.q_base"), s.d, s.D, GEN_UNIFORM, qk / 1.5 / sD);
            add(l, NAME("attn.k_base"), s.d, s.D, GEN_UNIFORM, qk / 1.5 / sD);
            for (k = 0; k < (s.diff ? 4 : 2); k++) {
                char w[16];
                snprintf(w, sizeof w, "attn.%s_down", br[k]);
                add(l, NAME(w), (int64_t)heads[k] * s.r, s.D, GEN_UNIFORM, 1.0 / sD);
                snprintf(w, sizeof w, "attn.%s_up", br[k]);
                add(l, NAME(w), (int64_t)heads[k] * s.d, s.r, GEN_UNIFORM, qk / 1.5 / sqrt((double)s.r));
            }
        }
        add(l, NAME("attn.wv"), (int64_t)s.nv * s.dv, s.D, GEN_UNIFORM, 1.0 / sD);
        add(l, NAME("attn.wo"), s.D, (int64_t)s.H * s.dv, GEN_UNIFORM, res / sqrt((double)s.H * s.dv));
        if (s.diff) {
            const double lam = pow(0.09 / s.d, 0.25); /* q1 . k1 has standard deviation 0.3 */
            for (k = 0; k < 4; k++) {
                char w[24];
                snprintf(w, sizeof w, "attn.lambda_%s", br[k]);
                add(l, NAME(w), s.d, 0, GEN_UNIFORM, lam);
            }
            add(l, NAME("attn.head_norm.weight"), s.dv, 0, GEN_NEAR_ONE, 0);
        }
        add(l, NAME("ffn.w_gate"), s.F, s.D, GEN_UNIFORM, 1.0 / sD);
        add(l, NAME("ffn.w_up"), s.F, s.D, GEN_UNIFORM, 1.0 / sD);
        add(l, NAME("ffn.w_down"), s.D, s.F, GEN_UNIFORM, res / sqrt((double)s.F));
#undef NAME
    }
}

static uint64_t fnv1a(const char *s)
{
    uint64_t h = 1469598103934665603ULL;
    while (*s) h = (h ^ (unsigned char)*s++) * 1099511628211ULL;
    return h;
}

static uint64_t splitmix(uint64_t *state)
{
    uint64_t z = (*state += 0x9E3779B97F4A7C15ULL);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
    return z ^ (z >> 31);
}

static uint32_t f32_bits(float v)
{
    uint32_t u;
    memcpy(&u, &v, 4);
    return u;
}

/* v as BF16 or F16; v is exactly representable in both (checked) */
static uint16_t half_bits(float v, int f16)
{
    uint32_t u = f32_bits(v);
    int ex;
    double m;
    uint16_t sign = (uint16_t)(u >> 16 & 0x8000);
    if (!f16) {
        assert_true((u & 0xFFFF) == 0);
        return (uint16_t)(u >> 16);
    }
    if (v == 0) return sign;
    m = frexp(fabs((double)v), &ex); /* |v| = m 2^ex, m in [0.5, 1) */
    if (ex - 1 >= -14) {             /* normal: (1 + f / 1024) 2^(E - 15) */
        double f = (2 * m - 1) * 1024;
        assert_true(ex - 1 <= 15 && f == floor(f));
        return (uint16_t)(sign | (unsigned)(ex - 1 + 15) << 10 | (unsigned)f);
    } else { /* subnormal: f / 1024 * 2^-14 */
        double f = fabs((double)v) * 16777216.0;
        assert_true(f == floor(f));
        return (uint16_t)(sign | (unsigned)f);
    }
}

/* The model file's bytes (malloc'ed; *size gets its length): the header, then the tensors in the
   order listed, contiguous. */
static unsigned char *build_model(const xmodel *x, size_t *size)
{
    xlist l = {NULL, 0, 0};
    sbuf cfg = {NULL, 0, 0}, h = {NULL, 0, 0};
    size_t off = 0, hlen, i, k;
    unsigned char *out, *data;
    int t;
    if (x->expect == RUNS) list_tensors(x, &l);
    config_json(x, &cfg);
    sb_printf(&h, "{\"__metadata__\":{\"format\":\"dintattn\",\"version\":\"1\",\"config\":\"");
    for (i = 0; i < cfg.n; i++) sb_printf(&h, cfg.p[i] == '"' ? "\\\"" : "%c", cfg.p[i]);
    sb_printf(&h, "\"}");
    for (t = 0; t < l.n; t++) {
        size_t n = (size_t)l.t[t].rows * (size_t)(l.t[t].cols ? l.t[t].cols : 1);
        sb_printf(&h, ",\"%s\":{\"dtype\":\"%s\",\"shape\":[%lld", l.t[t].name, x->f16 ? "F16" : "BF16",
                  (long long)l.t[t].rows);
        if (l.t[t].cols) sb_printf(&h, ",%lld", (long long)l.t[t].cols);
        sb_printf(&h, "],\"data_offsets\":[%lu,%lu]}", (unsigned long)off, (unsigned long)(off + 2 * n));
        off += 2 * n;
    }
    sb_printf(&h, "}");
    while (h.n % 8) sb_printf(&h, " "); /* the data starts 8-aligned */
    hlen = h.n;
    out = (unsigned char *)malloc(8 + hlen + off);
    assert_non_null(out);
    for (k = 0; k < 8; k++) out[k] = (unsigned char)((uint64_t)hlen >> (8 * k));
    memcpy(out + 8, h.p, hlen);
    data = out + 8 + hlen;
    for (t = 0; t < l.n; t++) {
        const xtensor *e = &l.t[t];
        size_t n = (size_t)e->rows * (size_t)(e->cols ? e->cols : 1);
        uint64_t state = fnv1a(x->name) ^ (fnv1a(e->name) * 0x9E3779B97F4A7C15ULL);
        const float unit = (float)ldexp(1.0, -e->e);
        for (i = 0; i < n; i++) {
            uint64_t r = splitmix(&state);
            float v = e->gen == GEN_UNIFORM ? (float)((int)(r % 255) - 127) * unit
                                            : (float)(128 + (int)(r % 25) - 12) / 128.0f;
            uint16_t b = half_bits(v, x->f16);
            data[2 * i] = (unsigned char)(b & 0xFF);
            data[2 * i + 1] = (unsigned char)(b >> 8);
        }
        data += 2 * n;
    }
    *size = 8 + hlen + off;
    free(l.t);
    free(cfg.p);
    free(h.p);
    return out;
}

/* CRC-32 (IEEE 802.3, as zlib.crc32) */
static uint32_t crc32_of(const unsigned char *p, size_t n)
{
    static uint32_t table[256];
    uint32_t c = 0xFFFFFFFFu;
    size_t i;
    if (!table[1]) {
        uint32_t k, j;
        for (k = 0; k < 256; k++) {
            uint32_t v = k;
            for (j = 0; j < 8; j++) v = v & 1 ? 0xEDB88320u ^ (v >> 1) : v >> 1;
            table[k] = v;
        }
    }
    for (i = 0; i < n; i++) c = table[(c ^ p[i]) & 0xFF] ^ (c >> 8);
    return c ^ 0xFFFFFFFFu;
}

/* The tokens each model runs: the last id (the embedding table's last row), the middle, 1, a third. */
static void model_ids(const xmodel *x, int *ids)
{
    const int V = x->vocab_size;
    ids[0] = V - 1;
    ids[1] = V / 2;
    ids[2] = 1 % V;
    ids[3] = (V / 3 + 2) % V;
}

/* --- fixtures ------------------------------------------------------------------------------ */

typedef struct xrow {
    double stat[5]; /* max, min, log-sum-exp, mean, signed mean */
    int n_at, idx[MAX_AT];
    double val[MAX_AT];
} xrow;

typedef struct xfix {
    unsigned long crc;
    unsigned long long bytes;
    int vocab, n, ids[N_IDS];
    xrow row[N_IDS];
    double scale; /* max(1, max |reference logit|) */
} xfix;

static const char *const stat_names[5] = {"max", "min", "log-sum-exp", "mean", "signed mean"};

/* the sign of logit i in the signed mean (also in tools/make_extreme_fixtures.py) */
static int sign_of(int i)
{
    return ((uint32_t)i * 2654435761u) >> 31 ? -1 : 1;
}

static void row_stats(const float *x, int V, double *st)
{
    double mx = -HUGE_VAL, mn = HUGE_VAL, sum = 0, ssum = 0, e = 0;
    int i;
    for (i = 0; i < V; i++) {
        if (x[i] > mx) mx = x[i];
        if (x[i] < mn) mn = x[i];
        sum += x[i];
        ssum += sign_of(i) * (double)x[i];
    }
    for (i = 0; i < V; i++) e += exp(x[i] - mx);
    st[0] = mx;
    st[1] = mn;
    st[2] = mx + log(e);
    st[3] = sum / V;
    st[4] = ssum / V;
}

/* Reads tests/fixtures/extreme/NAME.txt; fails the test if it is missing or malformed. */
static void read_fixture(const char *name, xfix *f)
{
    char path[256], line[8192];
    FILE *fp;
    int got = 0, r;
    memset(f, 0, sizeof *f);
    snprintf(path, sizeof path, FIXTURE_DIR "%s.txt", name);
    fp = fopen(path, "r");
    if (!fp) fail_msg("%s: no fixture %s (run /usr/bin/python3 tools/make_extreme_fixtures.py)", name, path);
    while (fgets(line, sizeof line, fp)) {
        char *p;
        assert_non_null(strchr(line, '\n')); /* no line longer than the buffer */
        if (sscanf(line, "crc32 %lx", &f->crc) == 1) got |= 1;
        else if (sscanf(line, "bytes %llu", &f->bytes) == 1) got |= 2;
        else if (sscanf(line, "vocab %d", &f->vocab) == 1) got |= 4;
        else if (strncmp(line, "ids ", 4) == 0) {
            for (p = line + 4, f->n = 0; f->n < N_IDS && *p && *p != '\n'; f->n++) {
                f->ids[f->n] = (int)strtol(p, &p, 10);
                if (*p == ',') p++;
            }
            got |= 8;
        } else if (sscanf(line, "row %d", &r) == 1) {
            xrow *w;
            assert_true(r >= 0 && r < N_IDS);
            w = &f->row[r];
            assert_int_equal(sscanf(line, "row %*d max %lf min %lf lse %lf mean %lf smean %lf", &w->stat[0],
                                    &w->stat[1], &w->stat[2], &w->stat[3], &w->stat[4]),
                             5);
        } else if (sscanf(line, "at %d", &r) == 1) {
            xrow *w;
            assert_true(r >= 0 && r < N_IDS);
            w = &f->row[r];
            p = strchr(line + 3, ' ');
            while (p && w->n_at < MAX_AT) {
                char *end;
                long i = strtol(p, &end, 10);
                if (end == p || *end != ':') break;
                w->idx[w->n_at] = (int)i;
                w->val[w->n_at++] = strtod(end + 1, &p);
            }
        }
    }
    fclose(fp);
    if (got != 15) fail_msg("%s: fixture %s lacks a line (%d)", name, path, got);
    f->scale = 1;
    for (r = 0; r < f->n; r++) {
        int k;
        if (f->row[r].n_at == 0) fail_msg("%s: fixture row %d has no logits", name, r);
        for (k = 0; k < f->row[r].n_at; k++)
            if (f->row[r].idx[k] < 0 || f->row[r].idx[k] >= f->vocab)
                fail_msg("%s: fixture row %d holds logit %d of %d", name, r, f->row[r].idx[k], f->vocab);
        if (fabs(f->row[r].stat[0]) > f->scale) f->scale = fabs(f->row[r].stat[0]);
        if (fabs(f->row[r].stat[1]) > f->scale) f->scale = fabs(f->row[r].stat[1]);
    }
}

/* --- checks -------------------------------------------------------------------------------- */

static double worst_ratio; /* the largest error / tolerance seen for the current model */

static void note(double ratio)
{
    if (!(ratio <= worst_ratio)) worst_ratio = ratio; /* NaN sticks */
}

/* Rows got[0..n) (each of the fixture's vocabulary) against the fixture's rows row0..row0+n. */
static void check_rows(const char *name, const char *what, const xfix *f, const float *got, int row0, int n)
{
    const double lim = TOL_REFERENCE * f->scale;
    int r, k;
    for (r = 0; r < n; r++) {
        const xrow *w = &f->row[row0 + r];
        const float *g = got + (size_t)r * (size_t)f->vocab;
        double st[5];
        row_stats(g, f->vocab, st);
        for (k = 0; k < 5; k++) {
            double e = fabs(st[k] - w->stat[k]);
            note(e / lim);
            if (!(e <= lim))
                fail_msg("%s %s: row %d %s %.9g, reference %.9g: error %.3g > %.3g (%g x %.3g)", name, what,
                         row0 + r, stat_names[k], st[k], w->stat[k], e, lim, TOL_REFERENCE, f->scale);
        }
        for (k = 0; k < w->n_at; k++) {
            double e = fabs((double)g[w->idx[k]] - w->val[k]);
            note(e / lim);
            if (!(e <= lim))
                fail_msg("%s %s: row %d logit %d = %.9g, reference %.9g: error %.3g > %.3g", name, what, row0 + r,
                         w->idx[k], (double)g[w->idx[k]], w->val[k], e, lim);
        }
    }
}

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static dintattn_session *new_session(const dintattn_model *m, int n_ctx, int n_threads)
{
    return test_session(m, n_ctx, 0, n_threads);
}

enum { ONE_TOKEN, PREFILL, DECODE };
static const char *const mode_names[3] = {"one token", "prefill", "decode"};

/* The logits of the fixture's tokens run one way on session s (reset first): ONE_TOKEN ([V], the
   first token), PREFILL (all rows of one prefill) or DECODE (one token at a time). */
static float *run(const char *name, dintattn_session *s, const xfix *f, int mode, int n_threads)
{
    const size_t V = (size_t)f->vocab;
    float *out = (float *)malloc(sizeof(float) * V * (size_t)f->n);
    dintattn_error err;
    dintattn_result r = DINTATTN_OK;
    int i;
    assert_non_null(out);
    dintattn_session_reset(s);
    if (mode == ONE_TOKEN) r = dintattn_prefill(s, f->ids, 1, out, 1, &err);
    else if (mode == PREFILL) r = dintattn_prefill(s, f->ids, f->n, out, 1, &err);
    else
        for (i = 0; i < f->n && r == DINTATTN_OK; i++) r = dintattn_decode(s, f->ids[i], out + (size_t)i * V, &err);
    if (r != DINTATTN_OK) fail_msg("%s %s, %d threads: %s", name, mode_names[mode], n_threads, err.message);
    assert_int_equal(dintattn_session_pos(s), mode == ONE_TOKEN ? 1 : f->n);
    return out;
}

/* One token, a prefill and decode (each after dintattn_session_reset), with 1 and 2 threads,
   against the reference; decode against prefill; and 2 threads give exactly what 1 gives (docs/computing.md,
   "Threads": threads give bit-identical logits). */
static void check_model_runs(const char *name, const dintattn_model *m, const xfix *f, const char *form)
{
    const size_t V = (size_t)f->vocab;
    float *first[3] = {NULL, NULL, NULL}, *got[3] = {NULL, NULL, NULL};
    int mode, t;
    for (t = 1; t <= 2; t++) {
        dintattn_session *s = new_session(m, N_CTX, t); /* one per thread count: sessions of these
                                                            models are large, and reset is cheap */
        for (mode = 0; mode < 3; mode++) {
            char what[96];
            got[mode] = run(name, s, f, mode, t);
            snprintf(what, sizeof what, "%s%s, %d thread%s", form, mode_names[mode], t, t > 1 ? "s" : "");
            check_rows(name, what, f, got[mode], 0, mode == ONE_TOKEN ? 1 : f->n);
            if (mode == DECODE) {
                double e = rel_error(got[DECODE], got[PREFILL], V * (size_t)f->n);
                note(e / TOL_SELF);
                if (!(e <= TOL_SELF))
                    fail_msg("%s %s: decode against prefill, error %.3g > %.3g", name, what, e, TOL_SELF);
            }
            if (t == 2) {
                size_t n = V * (mode == ONE_TOKEN ? 1 : (size_t)f->n), i;
                for (i = 0; i < n; i++)
                    if (memcmp(&got[mode][i], &first[mode][i], sizeof(float)) != 0)
                        fail_msg("%s %s: logit %lu differs from 1 thread's (%.9g, %.9g)", name, what,
                                 (unsigned long)i, (double)got[mode][i], (double)first[mode][i]);
            }
        }
        dintattn_session_free(s);
        for (mode = 0; mode < 3; mode++) {
            if (t == 1) first[mode] = got[mode];
            else free(got[mode]);
        }
    }
    for (mode = 0; mode < 3; mode++) free(first[mode]);
}

/* A session of the whole context (n_ctx 0 = max_seq_len): created, or refused for lack of memory;
   if created, it gives the reference's logits too. At the default n_batch its sizes hold products
   past 2^32 (prefill scratch of 3 x 128 x 2^24 floats, 26 GB with the KV cache and the rest): on
   machines with less memory than that (this project's has 23 GB) it is refused; with more, it is
   created and the library zeroes all of it. */
static void check_full_context(const char *name, const dintattn_model *m, const xfix *f)
{
    dintattn_session *s = NULL;
    dintattn_session_options so;
    dintattn_error err;
    dintattn_result r;
    float *out;
    memset(&so, 0, sizeof so);
    so.n_threads = 2;
    r = dintattn_session_new(m, &so, &s, &err);
    if (r != DINTATTN_OK) {
        if (r != DINTATTN_ERR_NOMEM)
            fail_msg("%s: session of n_ctx 0: %s (%s)", name, dintattn_result_name(r), err.message);
        assert_null(s);
        assert_true(err.code == r && err.message[0]);
        print_message("  %s: session of n_ctx 0 refused: %s\n", name, err.message);
        return;
    }
    assert_int_equal(dintattn_session_n_ctx(s), dintattn_model_config(m)->max_seq_len);
    print_message("  %s: session of n_ctx 0 holds %d tokens in %.0f MiB\n", name, dintattn_session_n_ctx(s),
                  (double)dintattn_session_bytes(s) / 1048576.0);
    out = (float *)malloc(sizeof(float) * (size_t)f->vocab * (size_t)f->n);
    assert_non_null(out);
    if (dintattn_prefill(s, f->ids, f->n, out, 1, &err) != DINTATTN_OK) fail_msg("%s: %s", name, err.message);
    check_rows(name, "prefill, n_ctx 0", f, out, 0, f->n);
    if (dintattn_decode(s, f->ids[0], out, &err) != DINTATTN_OK) fail_msg("%s: %s", name, err.message);
    free(out);
    dintattn_session_free(s);
}

/* `key` appears in msg as a whole name (so "head_dim" is not found in "v_head_dim") */
static int names_key(const char *msg, const char *key)
{
    const size_t n = strlen(key);
    const char *p;
    for (p = strstr(msg, key); p; p = strstr(p + 1, key)) {
        int before = p > msg && (isalnum((unsigned char)p[-1]) || p[-1] == '_');
        int after = isalnum((unsigned char)p[n]) || p[n] == '_';
        if (!before && !after) return 1;
    }
    return 0;
}

static void check_refused(const xmodel *x, const unsigned char *bytes, size_t size)
{
    dintattn_model *m = (dintattn_model *)&m; /* anything but NULL: a refused load sets it to NULL */
    dintattn_error err;
    dintattn_result r;
    int k;
    memset(&err, 0, sizeof err);
    r = dintattn_model_load_memory(bytes, size, NULL, &m, &err);
    if (r == DINTATTN_OK) {
        dintattn_model_free(m);
        fail_msg("%s: loaded, must be refused", x->name);
    }
    assert_null(m);
    assert_int_equal(err.code, r);
    if (!err.message[0] || !memchr(err.message, 0, sizeof err.message)) fail_msg("%s: no message", x->name);
    print_message("  %s: %s: %s\n", x->name, dintattn_result_name(r), err.message);
    if (x->expect != REFUSED_CONFIG) return;
    if (r != DINTATTN_ERR_CONFIG)
        fail_msg("%s: refused with %s, not as a config (DINTATTN_ERR_CONFIG): %s", x->name, dintattn_result_name(r),
                 err.message);
    for (k = 0; k < 2; k++)
        if (x->keys[k] && !names_key(err.message, x->keys[k]))
            fail_msg("%s: message '%s' does not name '%s'", x->name, err.message, x->keys[k]);
}

/* A job whose units are never all taken (e.g. a unit counter that wraps) hangs the caller: end the
   test program then, naming the model, rather than hang make check. */
static const char *volatile running_model = "";

static void watchdog(int sig)
{
    static const char a[] = "\ntest_extreme: ", b[] = " still runs after " WATCHDOG_TEXT " s: it hangs\n";
    (void)sig;
    if (write(2, a, sizeof a - 1) < 0 || write(2, running_model, strlen(running_model)) < 0 ||
        write(2, b, sizeof b - 1) < 0)
        _exit(2);
    _exit(1);
}

static void test_model(void **state)
{
    const xmodel *x = (const xmodel *)*state;
    const double t0 = now();
    size_t size;
    unsigned char *bytes = build_model(x, &size);
    dintattn_model *m = NULL;
    dintattn_error err;
    xfix f;
    int ids[N_IDS], k;
    worst_ratio = 0;
    running_model = x->name;
    signal(SIGALRM, watchdog);
    alarm(WATCHDOG_SECONDS);
    if (x->expect != RUNS) {
        check_refused(x, bytes, size);
        free(bytes);
        return;
    }
    read_fixture(x->name, &f);
    model_ids(x, ids);
    if (f.crc != crc32_of(bytes, size) || f.bytes != size)
        fail_msg("%s: the fixture is for other bytes (CRC-32 %08lx, %llu bytes; generated %08lx, %lu bytes): "
                 "run tools/make_extreme_fixtures.py",
                 x->name, f.crc, f.bytes, (unsigned long)crc32_of(bytes, size), (unsigned long)size);
    assert_int_equal(f.vocab, x->vocab_size);
    assert_int_equal(f.n, N_IDS);
    for (k = 0; k < N_IDS; k++) assert_int_equal(f.ids[k], ids[k]);
    if (dintattn_model_load_memory(bytes, size, NULL, &m, &err) != DINTATTN_OK)
        fail_msg("%s: refused: %s", x->name, err.message);
    {
        const dintattn_config *c = dintattn_model_config(m);
        const xshape s = resolve(x);
        assert_int_equal(c->vocab_size, x->vocab_size);
        assert_int_equal(c->n_heads, s.H);
        assert_int_equal(c->v_head_dim, s.dv);
        assert_int_equal(c->max_seq_len, x->max_seq_len);
    }
    check_model_runs(x->name, m, &f, "");
    if (x->ctx0) check_full_context(x->name, m, &f);
    dintattn_model_free(m);
    if (x->qk_forms) {
        static const dintattn_qk_form forms[2] = {DINTATTN_QK_FACTORED, DINTATTN_QK_MERGED};
        static const char *const form_names[2] = {"factored, ", "merged, "};
        for (k = 0; k < 2; k++) {
            dintattn_load_options lo;
            memset(&lo, 0, sizeof lo);
            lo.qk_form = forms[k];
            if (dintattn_model_load_memory(bytes, size, &lo, &m, &err) != DINTATTN_OK)
                fail_msg("%s %s: refused: %s", x->name, form_names[k], err.message);
            check_model_runs(x->name, m, &f, form_names[k]);
            dintattn_model_free(m);
        }
    }
    free(bytes);
    print_message("  %-26s %7.2f s, %6.1f MB, worst error %.2f of the tolerance\n", x->name, now() - t0,
                  (double)size / 1e6, worst_ratio);
}

/* Not a row of the table: a prompt long enough for the packed panels (>= 8 tokens; 26 make two
   blocks of 12 and a partial one) on a model whose products span several of the f32 panels'
   column slices (dim 640: Q/K in 5 slices of 128, V and O in 512 + 128; hidden_dim 1100: w_down in
   512 + 512 + 76), run from BF16 weights at precision AUTO (f32 activations): the prefill must give
   what the same tokens decoded one at a time give (matrix-vector rows) and what a prefill at the
   portable level gives (no panels), to TOL_SELF. */
static const xmodel wide_prompt = {.name = "wide_prompt", .what = "diff, dim 640, hidden_dim 1100, a 26-token prompt",
                                   .attention = "diff", .dim = 640, .n_layers = 2, .vocab_size = 97,
                                   .hidden_dim = 1100, .max_seq_len = 32, .n_heads = 5, .head_dim = 64,
                                   .res_gain = 0.25};

static void test_wide_prompt(void **state)
{
    enum { N = 26 };
    const size_t V = (size_t)wide_prompt.vocab_size;
    size_t size;
    unsigned char *bytes = build_model(&wide_prompt, &size);
    dintattn_model *m = NULL;
    dintattn_session *s;
    dintattn_session_options so;
    dintattn_prefill_unit unit;
    dintattn_error err;
    float *pre = (float *)malloc(sizeof(float) * V * N), *dec = (float *)malloc(sizeof(float) * V * N);
    int ids[N], i;
    double e;
    (void)state;
    assert_true(pre && dec);
    for (i = 0; i < N; i++) ids[i] = (i * 37 + 11) % wide_prompt.vocab_size;
    if (dintattn_model_load_memory(bytes, size, NULL, &m, &err) != DINTATTN_OK)
        fail_msg("wide_prompt: refused: %s", err.message);
    s = new_session(m, 32, 2);
    if (dintattn_prefill(s, ids, N, pre, 1, &err) != DINTATTN_OK) fail_msg("wide_prompt: %s", err.message);
    dintattn_session_reset(s);
    for (i = 0; i < N; i++)
        if (dintattn_decode(s, ids[i], dec + (size_t)i * V, &err) != DINTATTN_OK) fail_msg("wide_prompt: %s", err.message);
    e = rel_error(pre, dec, V * N);
    assert_int_equal(dintattn_session_prefill_unit(s, "bf16", &unit, NULL), DINTATTN_OK);
    print_message("  wide_prompt: prefill (%s) against decode: %.3g\n", dintattn_prefill_unit_name(unit), e);
    if (!(e <= TOL_SELF)) fail_msg("wide_prompt: prefill against decode, error %.3g > %.3g", e, TOL_SELF);
    dintattn_session_free(s);
    memset(&so, 0, sizeof so);
    so.n_ctx = 32, so.n_threads = 2, so.kernels = DINTATTN_KERNELS_PORTABLE;
    if (dintattn_session_new(m, &so, &s, &err) != DINTATTN_OK) fail_msg("wide_prompt: %s", err.message);
    if (dintattn_prefill(s, ids, N, dec, 1, &err) != DINTATTN_OK) fail_msg("wide_prompt: %s", err.message);
    e = rel_error(pre, dec, V * N);
    print_message("  wide_prompt: against a portable prefill: %.3g\n", e);
    if (!(e <= TOL_SELF)) fail_msg("wide_prompt: prefill against the portable level's, error %.3g > %.3g", e, TOL_SELF);
    dintattn_session_free(s);
    dintattn_model_free(m);
    free(bytes), free(pre), free(dec);
}

/* --- main ---------------------------------------------------------------------------------- */

static int write_models(const char *dir)
{
    char path[1024];
    FILE *manifest;
    int i, k;
    if (mkdir(dir, 0777) != 0 && errno != EEXIST) {
        fprintf(stderr, "cannot create %s: %s\n", dir, strerror(errno));
        return 1;
    }
    snprintf(path, sizeof path, "%s/manifest.txt", dir);
    manifest = fopen(path, "w");
    if (!manifest) {
        fprintf(stderr, "cannot write %s\n", path);
        return 1;
    }
    for (i = 0; i < N_MODELS; i++) {
        size_t size;
        unsigned char *bytes = build_model(&models[i], &size);
        FILE *fp;
        int ids[N_IDS];
        snprintf(path, sizeof path, "%s/%s.safetensors", dir, models[i].name);
        fp = fopen(path, "wb");
        if (!fp || fwrite(bytes, 1, size, fp) != size || fclose(fp) != 0) {
            fprintf(stderr, "cannot write %s\n", path);
            return 1;
        }
        free(bytes);
        if (models[i].expect == RUNS) {
            model_ids(&models[i], ids);
            fprintf(manifest, "%s run ", models[i].name);
            for (k = 0; k < N_IDS; k++) fprintf(manifest, "%d%s", ids[k], k + 1 < N_IDS ? "," : "\n");
        } else {
            fprintf(manifest, "%s refuse\n", models[i].name);
        }
    }
    return fclose(manifest) != 0;
}

int main(int argc, char **argv)
{
    struct CMUnitTest tests[N_MODELS + 1];
    int i, k, n = 0;
    if (argc == 3 && strcmp(argv[1], "--write") == 0) return write_models(argv[2]);
    if (argc == 2 && strcmp(argv[1], "--list") == 0) {
        for (i = 0; i < N_MODELS; i++)
            printf("%-32s %-9s %s\n", models[i].name,
                   models[i].expect == RUNS ? "runs" : models[i].expect == REFUSED_CONFIG ? "refused" : "no crash",
                   models[i].what);
        return 0;
    }
    for (i = 0; i < N_MODELS; i++) {
        int wanted = argc == 1;
        for (k = 1; k < argc; k++) wanted |= strcmp(argv[k], models[i].name) == 0;
        if (!wanted) continue;
        memset(&tests[n], 0, sizeof tests[n]);
        tests[n].name = models[i].name;
        tests[n].test_func = test_model;
        tests[n].initial_state = (void *)(uintptr_t)&models[i];
        n++;
    }
    if (argc == 1 || (argc == 2 && strcmp(argv[1], wide_prompt.name) == 0)) {
        memset(&tests[n], 0, sizeof tests[n]);
        tests[n].name = wide_prompt.name;
        tests[n].test_func = test_wide_prompt;
        n++;
    }
    if (n == 0) {
        fprintf(stderr, "usage: %s [--list | --write DIR | NAME...]: no model named so\n", argv[0]);
        return 2;
    }
    k = _cmocka_run_group_tests("extreme", tests, (size_t)n, NULL, NULL);
    alarm(0);
    return k;
}
