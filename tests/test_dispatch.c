/* The dispatch plan (dintattn__plan_make): which unit runs a product of each weight type for each
   chunk length, worked out once per session. Its answers must be those the decoder gave before the
   plan existed, when seven predicates, CPU checks and two test globals decided per product; the
   tables below hold those answers. The plan is made here from stated inputs (kernel table, CPU
   flags, held types), not from this machine, so every level and AMX's tiles are checked on any
   x86 CPU. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#define DINTATTN_IMPLEMENTATION
#include "../dintattn.h"
#include "test_util.h"

static const int counts[] = {1, 2, 3, 7, 8, 9, 16, 31, 32, 64, 200};
#define N_COUNTS (int)(sizeof counts / sizeof counts[0])

/* What dintattn_session_prefill_unit reported before the plan, for a session whose n_batch is the
   token count. Captured at commit 58a2928 (the header before the plan) by a program that laid out
   sessions as dintattn_session_new did (dintattn__session_layout, which decided the buffers the
   old predicates tested) for every set of held weight types, and asked dintattn_session_prefill_unit
   for each type, on an AMD Zen 5 (AVX-512 BF16); AMX's tiles by setting the session's amx, and
   vdpbf16ps's speed by the old dintattn__bf16_dot_rule.
   A row: the five weight types in dintattn__wtypes' order (f32 f16 bf16 q8 q4), each the units
   for the token counts above: s sgemm, r rows, f f32 panels, b bf16 panels, i int8 panels, a AMX
   bf16 tiles, x AMX tiles on three bf16 parts. golden_which[config][precision][held - 1] names
   the row ('A' the first) for held-type set `held` (bit t: type t held), config as configs[]. */
static const char *const golden_rows[18] = {
    "rrrrsssssss rrrrsssssss rrrrsssssss rrrrrrrrrrr rrrrrrrrrrr",
    "rrrrsssssss rrrrsssssss rrrrsssssss rrrrsssssss rrrrsssssss",
    "rrrrsssssss rrrrrrrrrrr rrrrrrrrrrr rrrrrrrrrrr rrrrrrrrrrr",
    "rrrrfffffff rrrrfffffff rrrrfffffff rrrriiiiiii rrrriiiiiii",
    "rrrrfffffff rrrrfffffff rrrrfffffff rrrrsssssss rrrrsssssss",
    "rrrrfffffff rrrrbbbbbbb rrrrbbbbbbb rrrriiiiiii rrrriiiiiii",
    "rrrrfffffff rrrrfffffff rrrrfffffff rrrriiiiiaa rrrriiiiiaa",
    "rrrrfffffff rrrraaaaaaa rrrraaaaaaa rrrriiiiiaa rrrriiiiiaa",
    "rrrrsssssss rrrrrrrrrrr rrrrrrrrrrr rrrriiiiiii rrrriiiiiii",
    "rrrrsssssss rrrrbbbbbbb rrrrbbbbbbb rrrriiiiiii rrrriiiiiii",
    "rrrrsssssss rrrraaaaaaa rrrraaaaaaa rrrriiiiiaa rrrriiiiiaa",
    "rrrrfffffff rrrrbbbbbbb rrrrfffffff rrrriiiiiii rrrriiiiiii",
    "rrrrsssssss rrrrsssssss rrrrxxxxxxx rrrriiiiiaa rrrriiiiiaa",
    "rrrrsssssss rrrrsssssss rrrrxxxxxxx rrrrsssssss rrrrsssssss",
    "rrrrfffffff rrrrfffffff rrrrxxxxxxx rrrriiiiiaa rrrriiiiiaa",
    "rrrrfffffff rrrrfffffff rrrrxxxxxxx rrrrsssssss rrrrsssssss",
    "rrrrsssssss rrrrsssssss rrrrsssssss rrrriiiiiii rrrriiiiiii",
    "rrrrsssssss rrrrsssssss rrrrsssssss rrrriiiiiaa rrrriiiiiaa",
};
static const char *const golden_which[6][3] = {
    {"AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA", "BBBBBBBBBBBBBBBBBBBBBBBBBBBBBBB", "CCCCCCCCCCCCCCCCCCCCCCCCCCCCCCC"},
    {"AAAAAAAQQQQQQQQQQQQQQQQQQQQQQQQ", "BBBBBBBBBBBBBBBBBBBBBBBBBBBBBBB", "CIIIIIIIIIIIIIIIIIIIIIIIIIIIIII"},
    {"DDDDDDDQDDDDDDDQDDDDDDDQDDDDDDD", "EEEEEEEBEEEEEEEBEEEEEEEBEEEEEEE", "FJFLFLFJFJFLFLFJFJFLFLFJFJFLFLF"},
    {"DDDDDDDQDDDDDDDQDDDDDDDQDDDDDDD", "EEEEEEEBEEEEEEEBEEEEEEEBEEEEEEE", "FJFJFJFJFJFJFJFJFJFJFJFJFJFJFJF"},
    {"GGGMOOORGGGMOOORGGGMOOORGGGMOOO", "EEENPPPBEEENPPPBEEENPPPBEEENPPP", "HKHKHKHKHKHKHKHKHKHKHKHKHKHKHKH"},
    {"GGGMOOORGGGMOOORGGGMOOORGGGMOOO", "EEENPPPBEEENPPPBEEENPPPBEEENPPP", "HKHKHKHKHKHKHKHKHKHKHKHKHKHKHKH"},
};

static const char unit_letter[] = "srfbiax"; /* by dintattn_prefill_unit */

typedef struct config {
    dintattn_kernels level;
    int amx, bf16_dot;
} config;
static const config configs[6] = {{DINTATTN_KERNELS_PORTABLE, 0, 0}, {DINTATTN_KERNELS_AVX2, 0, 0},
                                  {DINTATTN_KERNELS_AVX512, 0, 0},   {DINTATTN_KERNELS_AVX512, 0, 1},
                                  {DINTATTN_KERNELS_AVX512, 1, 0},   {DINTATTN_KERNELS_AVX512, 1, 1}};

/* The level's kernel table whatever this CPU runs (NULL where the build has none) */
static const dintattn__kernels *table_of(dintattn_kernels level)
{
#ifdef DINTATTN__HAVE_X86
    if (level == DINTATTN_KERNELS_AVX2) return &dintattn__kernels_avx2;
    if (level == DINTATTN_KERNELS_AVX512) return &dintattn__kernels_avx512;
#endif
    return level == DINTATTN_KERNELS_PORTABLE ? &dintattn__kernels_portable : NULL;
}

static dintattn__plan_in plan_input(const config *c, dintattn_precision precision, unsigned held, int n_batch)
{
    dintattn__plan_in in;
    memset(&in, 0, sizeof in);
    in.k = table_of(c->level);
    in.precision = precision;
    in.held = held;
    in.n_batch = n_batch;
    in.amx = c->amx;
    in.bf16 = 1; /* as the machine the table was captured on */
    in.bf16_dot = c->bf16_dot;
    in.q_tiles_min = DINTATTN__Q_TILES_MIN;
    return in;
}

/* What dintattn_session_prefill_unit reports for `type` in a session of plan p and n_batch */
static dintattn_prefill_unit reported(const dintattn__plan *p, int n_batch, int type)
{
    dintattn_session s;
    dintattn_prefill_unit u;
    memset(&s, 0, sizeof s);
    s.plan = *p;
    s.n_batch = n_batch;
    assert_int_equal(dintattn_session_prefill_unit(&s, dintattn__wtypes[type].name, &u, NULL), DINTATTN_OK);
    return u;
}

/* Every (held types, level, precision, weight type, token count): the unit the plan reports is the
   one reported before it (31 x 6 x 3 x 5 x 11 = 30,690 answers) */
static void test_plan_reports_the_units_of_before(void **state)
{
    int ci, p, held, t, c, checked = 0;
    (void)state;
    for (ci = 0; ci < 6; ci++) {
#ifndef DINTATTN__HAVE_AMX
        if (configs[ci].amx) continue;
#endif
        if (!table_of(configs[ci].level)) continue;
        for (p = 0; p < 3; p++)
            for (held = 1; held < 32; held++) {
                const char *want = golden_rows[golden_which[ci][p][held - 1] - 'A'];
                for (c = 0; c < N_COUNTS; c++) {
                    dintattn__plan plan;
                    dintattn__plan_in in = plan_input(&configs[ci], (dintattn_precision)p, (unsigned)held, counts[c]);
                    dintattn__plan_make(&plan, &in);
                    for (t = 0; t < DINTATTN__W_COUNT; t++) {
                        const char got = unit_letter[reported(&plan, counts[c], t)];
                        if (got != want[t * (N_COUNTS + 1) + c])
                            fail_msg("level %s amx %d bf16_dot %d, %s, held 0x%x, %s weights, %d tokens: %c, before %c",
                                     dintattn_kernels_name(configs[ci].level), configs[ci].amx, configs[ci].bf16_dot,
                                     dintattn_precision_name((dintattn_precision)p), held, dintattn__wtypes[t].name,
                                     counts[c], got, want[t * (N_COUNTS + 1) + c]);
                        checked++;
                    }
                }
            }
    }
#if defined(DINTATTN__HAVE_AMX)
    assert_int_equal(checked, 31 * 6 * 3 * 5 * N_COUNTS);
#else
    assert_true(checked > 0);
#endif
}

/* The plan keeps one route per size class: for every chunk length a session can run (up to its
   n_batch), the route it reads is the one worked out for that length itself
   (dintattn__route_make): activations, unit and packing kernel, for every input above and two
   more thresholds of the tiles */
static void test_route_depends_on_n_only_through_its_class(void **state)
{
    static const int q_min[] = {DINTATTN__Q_TILES_MIN, 8, 20};
    int ci, p, held, t, n, q, checked = 0;
    (void)state;
    for (ci = 0; ci < 6; ci++) {
        if (!table_of(configs[ci].level)) continue;
        for (p = 0; p < 3; p++)
            for (held = 1; held < 32; held++)
                for (q = 0; q < 3; q++) {
                    dintattn_session s;
                    dintattn__plan_in in = plan_input(&configs[ci], (dintattn_precision)p, (unsigned)held, 96);
                    memset(&s, 0, sizeof s);
                    in.q_tiles_min = q_min[q];
                    dintattn__plan_make(&s.plan, &in);
                    for (t = 0; t < DINTATTN__W_COUNT; t++)
                        for (n = 1; n <= in.n_batch; n++) {
                            const dintattn__route want = dintattn__route_make(&in, (dintattn__wtype)t, n);
                            const dintattn__route *got = dintattn__route_of(&s, (dintattn__wtype)t, n);
                            if (got->act != want.act || got->unit != want.unit || got->pack != want.pack)
                                fail_msg("held 0x%x, %s weights, %d tokens, tiles from %d: the plan's route (%d, %s) is not "
                                         "(%d, %s)", held, dintattn__wtypes[t].name, n, q_min[q], got->act,
                                         dintattn_prefill_unit_name(got->unit), want.act, dintattn_prefill_unit_name(want.unit));
                            checked++;
                        }
                }
    }
    assert_true(checked >= 31 * 3 * 3 * 5 * 96);
}

/* Without AVX-512 BF16 no product runs on the bf16 panels (FAST's BF16 / F16 prompts stay on the
   level's rows, or the f32 panels), and the rows on bf16 activations run vdpbf16ps's FMA stand-in:
   what the decoder's and the kernels' checks of the CPU decided per product before the plan */
static void test_no_bf16_panels_without_avx512_bf16(void **state)
{
    int ci, held, t, c, bf16_panels = 0;
    (void)state;
    for (ci = 0; ci < 6; ci++) {
        if (!table_of(configs[ci].level) || configs[ci].amx) continue;
        for (held = 1; held < 32; held++)
            for (c = 0; c < N_COUNTS; c++) {
                dintattn__plan plan, with;
                dintattn__plan_in in = plan_input(&configs[ci], DINTATTN_PRECISION_FAST, (unsigned)held, counts[c]);
                dintattn__plan_make(&with, &in);
                in.bf16 = 0;
                dintattn__plan_make(&plan, &in);
                for (t = 0; t < DINTATTN__W_COUNT; t++) {
                    assert_int_not_equal(reported(&plan, counts[c], t), DINTATTN_PREFILL_BF16_PANELS);
                    bf16_panels += reported(&with, counts[c], t) == DINTATTN_PREFILL_BF16_PANELS;
                }
#ifdef DINTATTN__HAVE_X86
                /* and the bf16 rows take vdpbf16ps's FMA stand-in */
                if (configs[ci].level == DINTATTN_KERNELS_AVX512) {
                    assert_ptr_equal(plan.w[DINTATTN__W_BF16].dotb, dintattn__dotb_bf16_fma);
                    assert_ptr_equal(plan.w[DINTATTN__W_F16].dotb44, dintattn__dotb44_f16w_fma);
                    assert_ptr_equal(with.w[DINTATTN__W_BF16].dotb, dintattn__dotb_bf16);
                    assert_ptr_equal(with.w[DINTATTN__W_F16].dotb44, dintattn__dotb44_f16w);
                }
#endif
            }
    }
#ifdef DINTATTN__HAVE_X86
    assert_true(bf16_panels > 0); /* the CPU flag is what moves them */
#endif
}

/* The overrides are options a session is made with: out-of-range values are refused with what
   is allowed, and a session made with them reports what they ask for */
static void test_dispatch_overrides_are_session_options(void **state)
{
    dintattn_model *m = NULL;
    dintattn_session *s = NULL;
    dintattn_session_options so;
    dintattn_error err;
    dintattn_load_options lo;
    dintattn_prefill_unit u;
    (void)state;
    memset(&lo, 0, sizeof lo);
    lo.weights = DINTATTN_WEIGHTS_BF16;
    if (dintattn_model_load(FIXTURES "standard_gqa4_d16_f32.safetensors", &lo, &m, &err)) fail_msg("%s", err.message);
    memset(&so, 0, sizeof so);
    so.tiles_min_tokens = -1;
    assert_int_equal(dintattn_session_new(m, &so, &s, &err), DINTATTN_ERR_ARG);
    assert_null(s);
    assert_string_equal(err.message, "dintattn_session_options: tiles_min_tokens -1 must be >= 0 and bf16_dot 0 -1, 0 or 1 "
                                     "(0: the session decides)");
    so.tiles_min_tokens = 0;
    so.bf16_dot = 2;
    assert_int_equal(dintattn_session_new(m, &so, &s, &err), DINTATTN_ERR_ARG);
    assert_non_null(strstr(err.message, "bf16_dot 2"));
    /* FAST's BF16 prompt at AVX-512 without tiles: the f32 panels when vdpbf16ps is said not to pay */
    so.bf16_dot = -1;
    so.precision = DINTATTN_PRECISION_FAST;
    so.kernels = DINTATTN_KERNELS_AVX512;
    assert_int_equal(dintattn_session_new(m, &so, &s, &err), DINTATTN_OK);
    assert_int_equal(dintattn_session_prefill_unit(s, "bf16", &u, &err), DINTATTN_OK);
    if (dintattn_session_kernels(s) == DINTATTN_KERNELS_AVX512) assert_int_equal(u, DINTATTN_PREFILL_F32_PANELS);
    else if (dintattn_session_kernels(s) < DINTATTN_KERNELS_AVX512) assert_int_equal(u, DINTATTN_PREFILL_ROWS);
    dintattn_session_free(s);
    dintattn_model_free(m);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_plan_reports_the_units_of_before),
        cmocka_unit_test(test_route_depends_on_n_only_through_its_class),
        cmocka_unit_test(test_no_bf16_panels_without_avx512_bf16),
        cmocka_unit_test(test_dispatch_overrides_are_session_options),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
