/* bench: how fast a model runs, next to what this machine can do, measured in the same run.

       examples/bench [MODEL] [--prompt N] [--gen M] [--threads T] [--batch B]
                      [--weights file|f32|bf16|q8|q4] [--map auto|file|copy] [--precision auto|exact|fast]
                      [--kernels auto|portable|avx2|avx512|amx] [--json]
       examples/bench [MODEL] --parallel 1,2,4,8,16,32 [--no-prepack] [the options above]

   --parallel measures batched decoding instead (par_run below; docs/examples.md says what each
   column is). Otherwise:

   Measures, for MODEL (default models/dint-kjv.safetensors) with its weight matrices held as
   --weights says (file: as stored, read in place; f32, bf16, q8, q4: converted at load) and the
   session's arithmetic as --precision says (dintattn_precision: auto multiplies Q8/Q4 weights by
   int8-quantized activations, a prompt's on AMX's bf16 tiles where the CPU has them; exact keeps
   f32 activations for every weight type):
     load      seconds in dintattn_model_load;
     prefill   tokens/s of dintattn_prefill over an N-token prompt (default 512; clamped so
               that N + M fits in the model's context), logits of the last token only: the median
               of 3 runs from an empty cache, with their range;
     decode    tokens/s of M dintattn_decode calls after it (default 128), each fed the argmax of
               the previous logits (the argmax is outside the timed region);
   and, on the same T threads (default 2: session n_threads and openblas_set_num_threads):
     bandwidth the machine's memory read bandwidth: T pthreads sum the floats of a 1 GiB buffer
               (far larger than any cache), each in 8 independent vector sums of aligned loads
               (AVX-512F: 8 x 64-byte registers; else AVX2: 8 x 32 bytes; else plain C, 32 float
               sums): one sum in flight waits on its own adds and reads about half of what the
               memory delivers. GB/s = 1e9 bytes/s. Decode runs in 4 rounds and the bandwidth is
               measured (best of 3 passes) just before each: on a shared machine the figure drifts
               by tens of percent from second to second, so each decoded token is held against the
               bandwidth of its own round. The 1-thread figure (best of 3, once, after the decode)
               is printed beside it and not used in any ratio;
     sgemm     cblas_sgemm GFLOP/s at the model's prefill shapes: C[M x Nout] = A[M x K] B^T with
               M = N prompt tokens and (K, Nout) = (cols, rows) of each weight matrix of the layers
               that a decoded token reads (dintattn_model_tensors: Q1/K1/Q2/K2, dense or merged, or
               the Shared-DIFF base/down factors and the up factors one head at a time when the
               engine runs them factored; V; O; gate, up; down), best of 3 per shape; the figure
               is sum(FLOPs) / sum(seconds) over the matrices, i.e. the FLOP-weighted (harmonic)
               average rate. OpenBLAS reads OPENBLAS_CORETYPE (which kernels it runs) once, when it
               loads, so when the variable is set the bench also runs itself again
               (/proc/self/exe, hidden option --sgemm-only M T K:N:COUNT,...: the parent's shapes
               on its command line, so the child loads no model) with the variable removed from
               the environment, at the same shapes and threads, and prints both figures; the first
               (as configured) is the one the ratios use;
     peak      register-only microkernels on T pthreads at once, each about 0.2 s, no memory
               traffic, the best of PEAK_PASSES passes over the kinds (a shared machine's cores
               lose tens of percent for seconds at a time; a peak taken once during such a dip
               made prefills read above 1 of it): f32 FMA (AVX-512F _mm512_fmadd_ps, 12
               independent accumulators, 2 FLOPs a lane; else AVX2 + FMA; else plain C), bf16 dot
               (_mm512_dpbf16_ps: 32 bf16 pairs, 64 FLOPs an instruction; needs AVX-512-BF16) and
               int8 dot (_mm512_dpbusd_epi32: 64 u8 x s8 products, 128 ops an instruction; else
               AVX-VNNI _mm256_dpbusd_avx_epi32, 64 ops), each only where the session's kernel
               level uses those instructions (--kernels avx2: the 256-bit ones; AMX's tiles only
               at the AMX level). What the CPU or the level lacks is printed as "not available".
   From those:
     params    dintattn_model_params: the file's tensors as stored (Shared-DIFF counts its factors);
     weight bytes per decoded token: dintattn_model_weight_bytes, every matrix at the precision it
               is held in (q8: 1 byte a weight + a 4-byte scale per 32; q4: half a byte + the same
               scales), the norm vectors and one embedding row;
     decode roofline fraction = sum over tokens of (weight bytes per token / its round's bandwidth)
               / (seconds of decode); the bandwidth printed is the matching harmonic mean. Also
               printed: the same with the bytes of the KV cache (and DINT's S) each token reads
               added (dintattn_session_kv_bytes, at --kv), which matters at long contexts
               (kv_bytes_per_token: the mean over decode)
     prefill GEMM fraction    = prefill model GFLOP/s / sgemm GFLOP/s (as configured, and with
               OPENBLAS_CORETYPE unset when it is set), where the model FLOPs are
               those of the weight matrices only: 2 * N * (matrix parameters of all layers)
               + 2 * V * D (LM head, last token). Attention FLOPs (q.k and W.v over the causal
               triangle, N(N+1)/2 pairs per head) are printed separately and not in the ratio.
     prefill peak fraction    = the same prefill GFLOP/s over the f32 FMA peak; and, for the
               arithmetic the layers' matrices are held for (the type most of their parameters
               are held in: --weights, or the file's own), over the int8 dot peak (q8, q4) or the
               bf16 dot peak (bf16). Under --precision exact every product runs in f32: the f32
               figure is then the relevant one.
   With --weights bf16, q8 or q4, or --kv bf16 or q8, it also runs the first min(N, 128) prompt
   tokens through the model and through a reference load of the same file (with an f32 cache): the relative RMS and largest change of
   the logits, the mean KL divergence (reference || tested) per position, how often the argmax
   agrees, and the perplexity of the prompt's next tokens under each (the prompt is random: the
   perplexities themselves mean little, their difference is the quality change). The reference
   is the file with f32 weights when that copy (4 bytes a parameter, plus a session) fits in 80%
   of the available memory (dintattn_mem_available; when unknown, it is tried); else the
   file's own weights, read in place (when they differ from the tested ones: "q8 vs file (bf16)
   weights", with the reason); else the comparison is skipped, with the reason. The reference
   session runs --precision exact.

   --json prints one JSON object with all of it; figures that were not measured are null. Among
   them: sgemm_gflop_s (as configured) and sgemm_unset_gflop_s (with OPENBLAS_CORETYPE unset: the
   same figure when the variable is not set, null when the child run failed, with
   sgemm_unset_error), prefill_gemm_fraction and prefill_gemm_unset_fraction against them;
   peak_f32_gflop_s, peak_bf16_gflop_s, peak_int8_gop_s and the instruction sets they ran
   (peak_*_isa); prefill_f32_peak_fraction, prefill_bf16_peak_fraction,
   prefill_int8_peak_fraction; bandwidth_1thread_gb_s; weights_held; precision;
   quality_reference ("f32", "file (bf16)", ...; null when not compared) and quality_note.
   --batch B sets the session's n_batch (tokens per internal prefill step; 0 = the prompt's
   length up to 512, then the engine's default, 512). --kernels caps the session's kernel level
   (default: the environment variable DINTATTN_KERNELS when set, as the tests read it, else auto;
   both go through dintattn_kernels_parse); the report names the level that ran.
   Errors: one line on stderr, exit 1. A failed OPENBLAS_CORETYPE-unset sgemm run is reported in
   the output, not an error. */
#define _POSIX_C_SOURCE 200809L
#define DINTATTN_IMPLEMENTATION
#include "../dintattn.h"
#define CLI_PROG "bench"
#include "cli.h" /* cli_engine, cli_fail, cli_parse_int, cli_now: what the examples share */

#include <cblas.h>
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#if defined(__x86_64__)
#include <immintrin.h>
#endif

extern char **environ;

#define BW_BYTES ((size_t)1 << 30)
#define BW_PASSES 3
#define BW_ROUNDS 4
#define PREFILL_RUNS 3 /* timed prefills: the median is reported */

static int cmp_double(const void *a, const void *b)
{
    const double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}
#define GEMM_REPS 3
#define PEAK_SECONDS 0.2
#define PEAK_PASSES 3
#define PEAK_CHUNK 50000       /* microkernel iterations between clock reads */
#ifndef MEM_FRACTION           /* (-DMEM_FRACTION=1e-9 tries the fallbacks) */
#define MEM_FRACTION 0.8       /* of the available memory, for the f32 quality reference */
#endif
#define CORETYPE "OPENBLAS_CORETYPE"

/* bench may measure more threads than the other examples take (cli.h's CLI_MAX_THREADS): as many
   as a session accepts, for the bandwidth and peak tests of the largest machines. */
#define BENCH_MAX_THREADS 1024

static const char *usage =
    "usage: bench [MODEL] [--prompt N] [--gen M] [--threads T] [--batch B] [--parallel LIST]\n"
    "             [--weights file|f32|bf16|q8|q4] [--map auto|file|copy] [--precision auto|exact|fast]\n"
    "             [--kernels auto|portable|avx2|avx512|amx] [--kv f32|bf16|q8] [--json]\n"
    "  MODEL         a dintattn .safetensors model (default: " CLI_DEFAULT_MODEL ")\n"
    "  --prompt N    prompt tokens for prefill, 1 or more (default 512); N + M is cut to the\n"
    "                model's context (M first, to context - 1; said on stderr when given)\n"
    "  --gen M       tokens decoded after the prompt, 1 or more (default 128)\n"
    "  --threads T   session, load and OpenBLAS threads; also the bandwidth and peak tests\n"
    "                (1 to " CLI_STR(BENCH_MAX_THREADS) ", default 2)\n"
    "  --batch B     the session's n_batch, 0 or more (default 0: the prompt's length up to 512)\n"
    CLI_ENGINE_USAGE
    "  --parallel L  batched decoding instead: for each B of the comma-separated list (1 to 256\n"
    "                each, e.g. 1,2,4,8,16,32), B sequences of --prompt tokens (default 128)\n"
    "                prefilled and decoded --gen steps (default 64) together by dintattn_batch_step\n"
    "  --no-prepack  with --parallel: leave the weights unpacked (dintattn_model_prepack)\n"
    "  --json        print one JSON object instead of the text report\n"
    "  -h, --help    this text\n";

#define BENCH_MAX_PARALLEL 16 /* batch sizes in a --parallel list */
typedef struct args {
    cli_engine eng; /* MODEL, --threads, --weights, --precision, --kv, --kernels */
    int prompt, gen, batch, json;
    int parallel[BENCH_MAX_PARALLEL], n_parallel, no_prepack;
    int prompt_set, gen_set; /* given on the command line (a default cut to the context is no news) */
} args;

/* Returns 0, 1 for an error (printed), 3 for --help. */
static int parse_args(int argc, char **argv, args *a)
{
    static const char *const switches[] = {"--json", "--no-prepack", NULL};
    int i, r;
    dintattn_error err;
    memset(a, 0, sizeof *a);
    cli_engine_init(&a->eng);
    a->prompt = 512;
    a->gen = 128;
    a->eng.precision = DINTATTN_PRECISION_AUTO;
    for (i = 1; i < argc; i++) {
        const char *o = argv[i], *val;
        int *dst;
        long lo = 1, hi = INT_MAX;
        switch (cli_arg(argc, argv, &i, switches, &a->eng, &val)) {
        case CLI_ARG_VALUE: break;
        case CLI_ARG_SWITCH:
            if (!strcmp(o, "--json")) a->json = 1;
            else a->no_prepack = 1;
            continue;
        case CLI_ARG_MODEL: continue;
        case CLI_ARG_HELP: cli_usage(stdout, usage, 16); return 3;
        default: return 1;
        }
        if ((r = cli_engine_option(&a->eng, CLI_WEIGHTS | CLI_MAP | CLI_PRECISION | CLI_KV | CLI_KERNELS, o, val, &err)) >= 0) {
            if (r) return cli_fail(o, err.message);
            continue;
        }
        if (!strcmp(o, "--prompt")) dst = &a->prompt, a->prompt_set = 1;
        else if (!strcmp(o, "--gen")) dst = &a->gen, a->gen_set = 1;
        else if (!strcmp(o, "--threads")) dst = &a->eng.threads, hi = BENCH_MAX_THREADS;
        else if (!strcmp(o, "--batch")) dst = &a->batch, lo = 0;
        else if (!strcmp(o, "--parallel")) {
            const char *q = val;
            a->n_parallel = 0;
            while (*q) {
                char word[16];
                size_t n = strcspn(q, ",");
                if (n == 0 || n >= sizeof word || a->n_parallel == BENCH_MAX_PARALLEL) break;
                memcpy(word, q, n), word[n] = 0;
                if (cli_parse_int(word, 1, 256, &a->parallel[a->n_parallel])) break;
                a->n_parallel++;
                q += n + (q[n] == ',');
                if (q[-1] == ',' && !*q) a->n_parallel = 0; /* a trailing comma */
            }
            if (*q || a->n_parallel == 0) {
                fprintf(stderr, "bench: --parallel needs a comma-separated list of at most %d batch sizes from 1 to 256 "
                                "(e.g. 1,2,4,8,16,32), not '%s'\n", BENCH_MAX_PARALLEL, val);
                return 1;
            }
            continue;
        } else return cli_fail("unknown option (see --help)", o);
        if (cli_parse_int(val, lo, hi, dst)) {
            fprintf(stderr, "bench: %s needs an integer in [%ld, %ld], not '%s'\n", o, lo, hi, val);
            return 1;
        }
    }
    if (!a->eng.model) a->eng.model = CLI_DEFAULT_MODEL;
    if (a->n_parallel && !a->prompt_set) a->prompt = 128;
    if (a->n_parallel && !a->gen_set) a->gen = 64;
    return cli_engine_done(&a->eng);
}

/* ---- memory read bandwidth ---------------------------------------------------------------- */

/* Floats per block: every thread's share is a whole number of blocks (512 bytes), so that the
   loops below need no tail and every share starts 64-byte aligned. */
#define BW_BLOCK 128

typedef struct bw_job {
    float *p;
    size_t n;
    int fill;
    double sum;
} bw_job;

/* Each sums n floats (a multiple of BW_BLOCK, 64-byte aligned) in 8 independent accumulators:
   one add has a latency of several cycles, so a single running sum would leave the loads waiting
   on it (on Zen 5 that reads about half the bandwidth). */
#if defined(__x86_64__)
__attribute__((target("avx512f"))) static double bw_sum_avx512(const float *p, size_t n)
{
    __m512 a0 = _mm512_setzero_ps(), a1 = a0, a2 = a0, a3 = a0, a4 = a0, a5 = a0, a6 = a0, a7 = a0;
    size_t i;
    for (i = 0; i < n; i += BW_BLOCK) {
        a0 = _mm512_add_ps(a0, _mm512_load_ps(p + i));
        a1 = _mm512_add_ps(a1, _mm512_load_ps(p + i + 16));
        a2 = _mm512_add_ps(a2, _mm512_load_ps(p + i + 32));
        a3 = _mm512_add_ps(a3, _mm512_load_ps(p + i + 48));
        a4 = _mm512_add_ps(a4, _mm512_load_ps(p + i + 64));
        a5 = _mm512_add_ps(a5, _mm512_load_ps(p + i + 80));
        a6 = _mm512_add_ps(a6, _mm512_load_ps(p + i + 96));
        a7 = _mm512_add_ps(a7, _mm512_load_ps(p + i + 112));
    }
    a0 = _mm512_add_ps(_mm512_add_ps(_mm512_add_ps(a0, a1), _mm512_add_ps(a2, a3)),
                       _mm512_add_ps(_mm512_add_ps(a4, a5), _mm512_add_ps(a6, a7)));
    return (double)_mm512_reduce_add_ps(a0);
}

__attribute__((target("avx2"))) static double bw_sum_avx2(const float *p, size_t n)
{
    __m256 a0 = _mm256_setzero_ps(), a1 = a0, a2 = a0, a3 = a0, a4 = a0, a5 = a0, a6 = a0, a7 = a0;
    float t[8];
    double s = 0;
    size_t i;
    int k;
    for (i = 0; i < n; i += 64) {
        a0 = _mm256_add_ps(a0, _mm256_load_ps(p + i));
        a1 = _mm256_add_ps(a1, _mm256_load_ps(p + i + 8));
        a2 = _mm256_add_ps(a2, _mm256_load_ps(p + i + 16));
        a3 = _mm256_add_ps(a3, _mm256_load_ps(p + i + 24));
        a4 = _mm256_add_ps(a4, _mm256_load_ps(p + i + 32));
        a5 = _mm256_add_ps(a5, _mm256_load_ps(p + i + 40));
        a6 = _mm256_add_ps(a6, _mm256_load_ps(p + i + 48));
        a7 = _mm256_add_ps(a7, _mm256_load_ps(p + i + 56));
    }
    a0 = _mm256_add_ps(_mm256_add_ps(_mm256_add_ps(a0, a1), _mm256_add_ps(a2, a3)),
                       _mm256_add_ps(_mm256_add_ps(a4, a5), _mm256_add_ps(a6, a7)));
    _mm256_storeu_ps(t, a0);
    for (k = 0; k < 8; k++) s += t[k];
    return s;
}
#endif

/* Plain C: 32 running sums, which a vectorizing compiler turns into several vector accumulators. */
static double bw_sum_c(const float *p, size_t n)
{
    float s[32];
    double t = 0;
    size_t i;
    int k;
    for (k = 0; k < 32; k++) s[k] = 0;
    for (i = 0; i < n; i += 32)
        for (k = 0; k < 32; k++) s[k] += p[i + k];
    for (k = 0; k < 32; k++) t += s[k];
    return t;
}

/* The widest of the above this CPU runs. */
static const char *bw_isa(void)
{
#if defined(__x86_64__)
    if (__builtin_cpu_supports("avx512f")) return "avx512f";
    if (__builtin_cpu_supports("avx2")) return "avx2";
#endif
    return "c";
}

static void *bw_worker(void *arg)
{
    bw_job *j = (bw_job *)arg;
    size_t i;
    if (j->fill) {
        for (i = 0; i < j->n; i++) j->p[i] = (float)(i & 7) * 0.125f;
        return NULL;
    }
#if defined(__x86_64__)
    if (__builtin_cpu_supports("avx512f")) {
        j->sum = bw_sum_avx512(j->p, j->n);
        return NULL;
    }
    if (__builtin_cpu_supports("avx2")) {
        j->sum = bw_sum_avx2(j->p, j->n);
        return NULL;
    }
#endif
    j->sum = bw_sum_c(j->p, j->n);
    return NULL;
}

/* Runs one pass of T threads over buf (fill or sum); returns seconds, or -1 if a thread fails. */
static double bw_pass(float *buf, size_t n, int T, int fill, double *sum)
{
    pthread_t tid[1024];
    bw_job job[1024];
    size_t per = (n / (size_t)T) & ~(size_t)(BW_BLOCK - 1);
    double t0, t1;
    int i, started = 0, ok = 1;
    for (i = 0; i < T; i++) {
        job[i].p = buf + per * (size_t)i;
        job[i].n = i == T - 1 ? (n - per * (size_t)i) & ~(size_t)(BW_BLOCK - 1) : per;
        job[i].fill = fill;
        job[i].sum = 0;
    }
    t0 = cli_now();
    for (i = 1; i < T; i++) {
        if (pthread_create(&tid[i], NULL, bw_worker, &job[i])) { ok = 0; break; }
        started++;
    }
    bw_worker(&job[0]);
    for (i = 1; i <= started; i++) pthread_join(tid[i], NULL);
    t1 = cli_now();
    if (!ok) return -1;
    for (i = 0; i < T; i++) *sum += job[i].sum;
    return t1 - t0;
}

/* The bandwidth test's buffer, allocated and paged in once. */
typedef struct bw_buffer {
    float *p;
    size_t n, bytes;
} bw_buffer;

static int bw_open(bw_buffer *b, int T, double *checksum)
{
    void *mem = NULL;
    b->bytes = BW_BYTES;
    while (b->bytes >= ((size_t)1 << 28) && posix_memalign(&mem, 64, b->bytes) != 0) b->bytes /= 2;
    if (!mem) return -1;
    b->p = (float *)mem;
    b->n = b->bytes / sizeof(float);
    if (bw_pass(b->p, b->n, T, 1, checksum) < 0) return -1; /* first touch, pages in */
    return 0;
}

/* Best of `passes` reads of the buffer, in GB/s (1e9 bytes/s); 0 on failure. */
static double bw_best(const bw_buffer *b, int T, int passes, double *checksum)
{
    double best = 0;
    int p;
    for (p = 0; p < passes; p++) {
        double s = bw_pass(b->p, b->n, T, 0, checksum);
        if (s <= 0) return 0;
        if (b->bytes / s / 1e9 > best) best = (double)b->bytes / s / 1e9;
    }
    return best;
}

/* ---- register-only peaks ------------------------------------------------------------------ */

/* Each kernel runs chunks of PEAK_CHUNK iterations of 12 independent multiply-accumulates (more
   than latency x throughput of any of these units: 4-6 cycles x 2 a cycle) until `secs` have
   passed, sets *ops (FLOPs or integer ops) and *elapsed, and returns a sum of its accumulators,
   which the caller stores to a volatile: the chains cannot be dropped, and the loop count depends
   on the clock, so it cannot be folded. The f32 chains a = a * m + c converge (m < 1), so the
   values stay normal; the dot-product chains grow linearly, far from overflow (or, for int32,
   wrap, which costs nothing). Every accumulator starts from a different value: chains that were
   equal from the start would be one chain to the compiler (it keeps one and copies it). */
typedef double (*peak_fn)(float seed, double secs, double *ops, double *elapsed);

#define PEAK_12(X) X(0) X(1) X(2) X(3) X(4) X(5) X(6) X(7) X(8) X(9) X(10) X(11)

/* Runs BODY in chunks of PEAK_CHUNK until secs have passed; *ops = iterations * OPS_PER_ITER,
   *elapsed = the seconds (the caller declares int r). */
#define PEAK_TIMED(BODY, OPS_PER_ITER)                                                                 \
    do {                                                                                               \
        double t0_ = cli_now(), t_;                                                                        \
        long long it_ = 0;                                                                             \
        do {                                                                                           \
            for (r = 0; r < PEAK_CHUNK; r++) { BODY }                                                  \
            it_ += PEAK_CHUNK;                                                                         \
            t_ = cli_now() - t0_;                                                                          \
        } while (t_ < secs);                                                                           \
        *ops = (double)it_ * (OPS_PER_ITER);                                                           \
        *elapsed = t_;                                                                                 \
    } while (0)

#if defined(__x86_64__)
#define PEAK_INIT512(k) __m512 a##k = _mm512_set1_ps(seed + (float)k);
#define PEAK_FMA512(k) a##k = _mm512_fmadd_ps(a##k, m, c);
__attribute__((target("avx512f"))) static double peak_f32_avx512(float seed, double secs, double *ops, double *elapsed)
{
    const __m512 m = _mm512_set1_ps(0.999999f), c = _mm512_set1_ps(1e-3f * seed);
    PEAK_12(PEAK_INIT512)
    int r;
    PEAK_TIMED(PEAK_12(PEAK_FMA512), 12 * 16 * 2);
    a0 = _mm512_add_ps(_mm512_add_ps(_mm512_add_ps(a0, a1), _mm512_add_ps(a2, a3)),
                       _mm512_add_ps(_mm512_add_ps(a4, a5), _mm512_add_ps(a6, a7)));
    a0 = _mm512_add_ps(a0, _mm512_add_ps(_mm512_add_ps(a8, a9), _mm512_add_ps(a10, a11)));
    return (double)_mm512_reduce_add_ps(a0);
}

#define PEAK_INIT256(k) __m256 a##k = _mm256_set1_ps(seed + (float)k);
#define PEAK_FMA256(k) a##k = _mm256_fmadd_ps(a##k, m, c);
#define PEAK_ADD256(k) s = _mm256_add_ps(s, a##k);
__attribute__((target("avx2,fma"))) static double peak_f32_avx2(float seed, double secs, double *ops, double *elapsed)
{
    const __m256 m = _mm256_set1_ps(0.999999f), c = _mm256_set1_ps(1e-3f * seed);
    __m256 s = _mm256_setzero_ps();
    PEAK_12(PEAK_INIT256)
    float v[8];
    double sum = 0;
    int r;
    PEAK_TIMED(PEAK_12(PEAK_FMA256), 12 * 8 * 2);
    PEAK_12(PEAK_ADD256)
    _mm256_storeu_ps(v, s);
    for (r = 0; r < 8; r++) sum += v[r];
    return sum;
}

/* 32 bf16 pairs per instruction: 32 multiplies + 32 adds. */
#define PEAK_BF16(k) a##k = _mm512_dpbf16_ps(a##k, x, y);
__attribute__((target("avx512f,avx512bf16"))) static double peak_bf16_avx512(float seed, double secs, double *ops,
                                                                            double *elapsed)
{
    const __m512bh x = _mm512_cvtne2ps_pbh(_mm512_set1_ps(seed), _mm512_set1_ps(1e-3f));
    const __m512bh y = _mm512_cvtne2ps_pbh(_mm512_set1_ps(1e-3f), _mm512_set1_ps(seed));
    PEAK_12(PEAK_INIT512)
    int r;
    PEAK_TIMED(PEAK_12(PEAK_BF16), 12 * 64);
    a0 = _mm512_add_ps(_mm512_add_ps(_mm512_add_ps(a0, a1), _mm512_add_ps(a2, a3)),
                       _mm512_add_ps(_mm512_add_ps(a4, a5), _mm512_add_ps(a6, a7)));
    a0 = _mm512_add_ps(a0, _mm512_add_ps(_mm512_add_ps(a8, a9), _mm512_add_ps(a10, a11)));
    return (double)_mm512_reduce_add_ps(a0);
}

/* 64 u8 x s8 products summed into 16 int32 per instruction: 64 multiplies + 64 adds. */
#define PEAK_INITI512(k) __m512i a##k = _mm512_set1_epi32(k);
#define PEAK_DP512(k) a##k = _mm512_dpbusd_epi32(a##k, x, y);
__attribute__((target("avx512f,avx512vnni"))) static double peak_int8_avx512(float seed, double secs, double *ops,
                                                                            double *elapsed)
{
    const __m512i x = _mm512_set1_epi8((char)(int)(seed * 3)), y = _mm512_set1_epi8((char)-(int)(seed * 5));
    PEAK_12(PEAK_INITI512)
    int v[16];
    double sum = 0;
    int r;
    PEAK_TIMED(PEAK_12(PEAK_DP512), 12 * 128);
    a0 = _mm512_add_epi32(_mm512_add_epi32(_mm512_add_epi32(a0, a1), _mm512_add_epi32(a2, a3)),
                          _mm512_add_epi32(_mm512_add_epi32(a4, a5), _mm512_add_epi32(a6, a7)));
    a0 = _mm512_add_epi32(a0, _mm512_add_epi32(_mm512_add_epi32(a8, a9), _mm512_add_epi32(a10, a11)));
    _mm512_storeu_si512((void *)v, a0);  /* (not _mm512_reduce_add_epi32: its adds are signed, and these wrap) */
    for (r = 0; r < 16; r++) sum += v[r];
    return sum;
}

/* AVX-VNNI (VEX, 256 bits): 32 u8 x s8 products per instruction, 64 ops. */
#define PEAK_INITI256(k) __m256i a##k = _mm256_set1_epi32(k);
#define PEAK_DP256(k) a##k = _mm256_dpbusd_avx_epi32(a##k, x, y);
#define PEAK_ADDI256(k) s = _mm256_add_epi32(s, a##k);
__attribute__((target("avx2,avxvnni"))) static double peak_int8_avxvnni(float seed, double secs, double *ops,
                                                                       double *elapsed)
{
    const __m256i x = _mm256_set1_epi8((char)(int)(seed * 3)), y = _mm256_set1_epi8((char)-(int)(seed * 5));
    __m256i s = _mm256_setzero_si256();
    PEAK_12(PEAK_INITI256)
    int v[8];
    double sum = 0;
    int r;
    PEAK_TIMED(PEAK_12(PEAK_DP256), 12 * 64);
    PEAK_12(PEAK_ADDI256)
    _mm256_storeu_si256((__m256i *)(void *)v, s);
    for (r = 0; r < 8; r++) sum += v[r];
    return sum;
}
#endif

/* Plain C: 12 scalar chains (a compiler may pack them into vectors; either way a lower bound). */
#define PEAK_FMAC(k) a[k] = a[k] * m + c;
static double peak_f32_c(float seed, double secs, double *ops, double *elapsed)
{
    float a[12];
    const float m = 0.999999f, c = 1e-3f * seed;
    double sum = 0;
    int r;
    for (r = 0; r < 12; r++) a[r] = seed + (float)r;
    PEAK_TIMED(PEAK_12(PEAK_FMAC), 12 * 2);
    for (r = 0; r < 12; r++) sum += a[r];
    return sum;
}

#ifdef DINTATTN__HAVE_AMX
/* AMX tiles (where the library runs bf16 prefill on them): four 16 x 16 f32 products of 16 x 32
   bf16 tiles per step, tiles 4-7 loaded once; 16 x 16 x 32 pairs, 2 ops each, per instruction. */
#define PEAK_AMX4 _tile_dpbf16ps(0, 4, 6); _tile_dpbf16ps(1, 4, 7); _tile_dpbf16ps(2, 5, 6); _tile_dpbf16ps(3, 5, 7);
__attribute__((target("amx-tile,amx-bf16"))) static double peak_amx_bf16(float seed, double secs, double *ops,
                                                                          double *elapsed)
{
    static uint16_t x[16 * 32];
    float c[16 * 16];
    double sum = 0;
    int r;
    for (r = 0; r < 16 * 32; r++) x[r] = dintattn__f32_to_bf16(seed * 1e-3f * (float)(r % 7));
    dintattn__amx_begin();
    _tile_loadd(4, x, 64);
    _tile_loadd(5, x, 64);
    _tile_loadd(6, x, 64);
    _tile_loadd(7, x, 64);
    _tile_zero(0);
    _tile_zero(1);
    _tile_zero(2);
    _tile_zero(3);
    PEAK_TIMED(PEAK_AMX4, 4.0 * 16 * 16 * 32 * 2);
    _tile_stored(0, c, 64);
    dintattn__amx_end();
    for (r = 0; r < 16 * 16; r++) sum += c[r];
    return sum;
}
#endif

enum { PEAK_F32, PEAK_BF16, PEAK_INT8, PEAK_AMX, PEAK_KINDS };

/* The kernel for `kind` on this CPU with the instructions the session's kernel level uses (so that
   `--kernels avx2` is held to 256-bit peaks), and the instruction set it uses, or NULL: not
   available. */
static peak_fn peak_pick(int kind, dintattn_kernels level, const char **isa)
{
    *isa = NULL;
#if defined(__x86_64__)
    if (level >= DINTATTN_KERNELS_AVX512) {
        if (kind == PEAK_F32 && __builtin_cpu_supports("avx512f")) return *isa = "avx512f", peak_f32_avx512;
        if (kind == PEAK_BF16 && __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bf16"))
            return *isa = "avx512bf16", peak_bf16_avx512;
        if (kind == PEAK_INT8 && __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512vnni"))
            return *isa = "avx512vnni", peak_int8_avx512;
    }
    if (level >= DINTATTN_KERNELS_AVX2) {
        if (kind == PEAK_F32 && __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma"))
            return *isa = "avx2+fma", peak_f32_avx2;
        if (kind == PEAK_INT8 && __builtin_cpu_supports("avx2") && __builtin_cpu_supports("avxvnni"))
            return *isa = "avxvnni", peak_int8_avxvnni;
    }
#endif
#ifdef DINTATTN__HAVE_AMX
    if (kind == PEAK_AMX && level == DINTATTN_KERNELS_AMX && dintattn__amx_ready()) return *isa = "amx-bf16", peak_amx_bf16;
#endif
    if (kind == PEAK_F32) return *isa = "c", peak_f32_c;
    return NULL;
}

typedef struct peak_job {
    peak_fn fn;
    float seed;
    double ops, secs, sum;
} peak_job;

static volatile double peak_sink;

static void *peak_worker(void *arg)
{
    peak_job *j = (peak_job *)arg;
    j->sum = j->fn(j->seed, PEAK_SECONDS, &j->ops, &j->secs);
    return NULL;
}

/* fn on T threads at once: the sum of their rates in G ops/s; 0 if a thread could not start. */
static double peak_run(peak_fn fn, int T)
{
    pthread_t tid[1024];
    peak_job job[1024];
    double rate = 0, sum = 0;
    int i, started = 0, ok = 1;
    for (i = 0; i < T; i++) {
        job[i].fn = fn;
        job[i].seed = 1.0f + (float)i / 64;
        job[i].ops = job[i].secs = job[i].sum = 0;
    }
    for (i = 1; i < T; i++) {
        if (pthread_create(&tid[i], NULL, peak_worker, &job[i])) { ok = 0; break; }
        started++;
    }
    peak_worker(&job[0]);
    for (i = 1; i <= started; i++) pthread_join(tid[i], NULL);
    if (!ok) return 0;
    for (i = 0; i < T; i++) {
        rate += job[i].secs > 0 ? job[i].ops / job[i].secs : 0;
        sum += job[i].sum;
    }
    peak_sink = sum;
    return rate / 1e9;
}

/* ---- sgemm at the model's shapes ---------------------------------------------------------- */

typedef struct shape {
    int K, N;         /* C[M x N] = A[M x K] B[N x K]^T */
    long long count;  /* products of this shape per token, over all layers */
} shape;

static void add_shape(shape *s, int *ns, long long K, long long N, long long count)
{
    int i;
    if (K <= 0 || N <= 0 || count <= 0) return;
    for (i = 0; i < *ns; i++)
        if (s[i].K == K && s[i].N == N) { s[i].count += count; return; }
    s[*ns].K = (int)K;
    s[*ns].N = (int)N;
    s[*ns].count = count;
    (*ns)++;
}

/* The layers' matrix products as the engine runs them for a token: every weight matrix a decoded
   token reads (matrix, read_bytes > 0; the embeddings and LM head are left to the caller), K its
   cols and N its rows. A matrix of several heads (Shared-DIFF's up factors, [heads * head_dim, r])
   runs one head at a time.
   Returns the number of distinct shapes in *out (malloc'ed), or -1 when out of memory. */
static int layer_shapes(const dintattn_model *model, shape **out)
{
    const long long n = dintattn_model_tensors(model, NULL, 0);
    dintattn_tensor_info *t = (dintattn_tensor_info *)malloc(sizeof *t * (size_t)n);
    shape *s = (shape *)malloc(sizeof *s * (size_t)n);
    long long i;
    int ns = 0;
    *out = s;
    if (!t || !s) {
        free(t);
        return -1;
    }
    dintattn_model_tensors(model, t, n);
    for (i = 0; i < n; i++) {
        if (t[i].layer < 0 || !t[i].matrix || !t[i].read_bytes) continue;
        add_shape(s, &ns, t[i].cols, t[i].rows / t[i].heads, t[i].heads);
    }
    free(t);
    return ns;
}

/* Matrix parameters of the layers (multiply-adds per token). */
static double layer_matrix_params(const shape *s, int ns)
{
    double p = 0;
    int i;
    for (i = 0; i < ns; i++) p += (double)s[i].K * s[i].N * (double)s[i].count;
    return p;
}

/* FLOP-weighted sgemm GFLOP/s over the shapes at M rows; 0 on failure. */
static double measure_sgemm(const shape *s, int ns, int M)
{
    size_t maxa = 0, maxb = 0, maxc = 0, i;
    float *A, *B, *C;
    double flops = 0, secs = 0;
    int k, rep;
    for (k = 0; k < ns; k++) {
        if ((size_t)M * s[k].K > maxa) maxa = (size_t)M * s[k].K;
        if ((size_t)s[k].N * s[k].K > maxb) maxb = (size_t)s[k].N * s[k].K;
        if ((size_t)M * s[k].N > maxc) maxc = (size_t)M * s[k].N;
    }
    A = (float *)calloc(maxa, sizeof(float));  /* calloc: initialized even where the fill below is empty */
    B = (float *)calloc(maxb, sizeof(float));
    C = (float *)malloc(maxc * sizeof(float));
    if (!A || !B || !C) { free(A); free(B); free(C); return 0; }
    for (i = 0; i < maxa; i++) A[i] = (float)((i * 7) % 13) * 0.01f - 0.06f;
    for (i = 0; i < maxb; i++) B[i] = (float)((i * 5) % 11) * 0.01f - 0.05f;
    memset(C, 0, maxc * sizeof(float));
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, M, s[0].N, s[0].K, 1.0f, A, s[0].K, B, s[0].K, 0.0f,
                C, s[0].N);  /* warm-up: OpenBLAS starts its threads */
    for (k = 0; k < ns; k++) {
        double best = 1e30;
        for (rep = 0; rep < GEMM_REPS; rep++) {
            double t0 = cli_now(), t;
            cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, M, s[k].N, s[k].K, 1.0f, A, s[k].K, B, s[k].K,
                        0.0f, C, s[k].N);
            t = cli_now() - t0;
            if (t < best) best = t;
        }
        flops += 2.0 * M * s[k].K * (double)s[k].N * (double)s[k].count;
        secs += best * (double)s[k].count;
    }
    free(A);
    free(B);
    free(C);
    return secs > 0 ? flops / secs / 1e9 : 0;
}

/* ---- sgemm with OPENBLAS_CORETYPE unset: this binary again, in a child process ------------- */

/* The hidden mode the parent runs: `bench --sgemm-only M T K:N:COUNT,...` prints measure_sgemm's
   GFLOP/s at those shapes on T threads and exits 0 (1 on a bad argument or failure). The shapes
   come on the command line, so that the child measures exactly the parent's without loading the
   model a second time. */
static int sgemm_only(int argc, char **argv)
{
    shape *s;
    const char *p;
    int M, T, ns = 0, cap = 1;
    double g;
    if (argc != 5 || cli_parse_int(argv[2], 1, INT_MAX, &M) || cli_parse_int(argv[3], 1, 1024, &T))
        return cli_fail("--sgemm-only M T K:N:COUNT,...", "bad arguments");
    for (p = argv[4]; *p; p++) cap += *p == ',';
    if (!(s = (shape *)malloc(sizeof *s * (size_t)cap))) return cli_fail("out of memory", NULL);
    for (p = argv[4]; *p;) {
        long long K, N, count;
        char *end;
        K = strtoll(p, &end, 10);
        if (*end != ':') break;
        N = strtoll(end + 1, &end, 10);
        if (*end != ':') break;
        count = strtoll(end + 1, &end, 10);
        if (K <= 0 || K > INT_MAX || N <= 0 || N > INT_MAX || count <= 0 || (*end && *end != ',')) break;
        add_shape(s, &ns, K, N, count);
        p = *end ? end + 1 : end;
    }
    if (*p || !ns) {
        free(s);
        return cli_fail("--sgemm-only", "bad shape list");
    }
    openblas_set_num_threads(T);
    g = measure_sgemm(s, ns, M);
    free(s);
    if (g <= 0) return cli_fail("sgemm test failed (out of memory)", NULL);
    printf("%.6f\n", g);
    return 0;
}

/* Runs /proc/self/exe --sgemm-only with OPENBLAS_CORETYPE removed from the environment. Returns
   its GFLOP/s, or 0 with the reason in why[n]. */
static double sgemm_unset(const shape *s, int ns, int M, int T, char *why, size_t n)
{
    char **env = NULL, *list = NULL, num[2][24], out[128];
    char *argv[6];
    size_t envc = 0, len = 0, got = 0, i, j;
    int fd[2] = {-1, -1}, status, k;
    pid_t pid;
    ssize_t r;
    double g = 0;
    char *end;
    while (environ[envc]) envc++;
    env = (char **)malloc(sizeof *env * (envc + 1));
    list = (char *)malloc((size_t)ns * 64 + 1);
    if (!env || !list) {
        snprintf(why, n, "out of memory");
        goto done;
    }
    for (i = j = 0; i < envc; i++)
        if (strncmp(environ[i], CORETYPE "=", sizeof CORETYPE)) env[j++] = environ[i];
    env[j] = NULL;
    list[0] = 0;
    for (k = 0; k < ns; k++)
        len += (size_t)sprintf(list + len, "%s%d:%d:%lld", k ? "," : "", s[k].K, s[k].N, s[k].count);
    snprintf(num[0], sizeof num[0], "%d", M);
    snprintf(num[1], sizeof num[1], "%d", T);
    argv[0] = (char *)"bench";
    argv[1] = (char *)"--sgemm-only";
    argv[2] = num[0];
    argv[3] = num[1];
    argv[4] = list;
    argv[5] = NULL;
    fflush(stdout);
    fflush(stderr);
    if (pipe(fd)) {
        snprintf(why, n, "pipe: %s", strerror(errno));
        goto done;
    }
    pid = fork();
    if (pid < 0) {
        snprintf(why, n, "fork: %s", strerror(errno));
        goto done;
    }
    if (pid == 0) {  /* between fork and exec only async-signal-safe calls */
        close(fd[0]);
        if (dup2(fd[1], 1) < 0) _exit(127);
        close(fd[1]);
        execve("/proc/self/exe", argv, env);
        _exit(127);
    }
    close(fd[1]);
    fd[1] = -1;
    while ((r = read(fd[0], out + got, sizeof out - 1 - got)) > 0 || (r < 0 && errno == EINTR))
        if (r > 0) got += (size_t)r;
    out[got] = 0;
    while (waitpid(pid, &status, 0) < 0)
        if (errno != EINTR) {
            snprintf(why, n, "waitpid: %s", strerror(errno));
            goto done;
        }
    if (WIFSIGNALED(status)) snprintf(why, n, "it was killed by signal %d", WTERMSIG(status));
    else if (WIFEXITED(status) && WEXITSTATUS(status) == 127) snprintf(why, n, "/proc/self/exe could not be run");
    else if (!WIFEXITED(status) || WEXITSTATUS(status)) snprintf(why, n, "it exited with status %d", WEXITSTATUS(status));
    else if ((g = strtod(out, &end)) <= 0 || end == out) {
        g = 0;
        snprintf(why, n, "it printed no figure");
    }
done:
    if (fd[0] >= 0) close(fd[0]);
    if (fd[1] >= 0) close(fd[1]);
    free(env);
    free(list);
    return g;
}

/* ---- quality of converted weights: logits against a reference load of the same file ------- */

typedef struct quality {
    int tokens;
    double rel_rms, max_abs, kl, top1, ppl_ref, ppl;
    char ref[32];    /* what the reference held: "f32" or "file (bf16)"; "" when not run */
    char note[192];  /* why the reference is not f32, or why the comparison was skipped */
    int skipped;
} quality;

static int argmax(const float *x, int n)
{
    int i, best = 0;
    for (i = 1; i < n; i++)
        if (x[i] > x[best]) best = i;
    return best;
}

/* log-softmax of x[n] into out */
static void log_softmax(const float *x, int n, double *out)
{
    double mx = x[0], sum = 0;
    int i;
    for (i = 1; i < n; i++)
        if (x[i] > mx) mx = x[i];
    for (i = 0; i < n; i++) sum += exp(x[i] - mx);
    for (i = 0; i < n; i++) out[i] = x[i] - mx - log(sum);
}

/* The type most of the layers' weight-matrix parameters are held in ("f32", "bf16", "q8", ...)
   into out[n]; "?" if the model has none (or no memory to list them). */
static void held_type(const dintattn_model *m, char *out, size_t n)
{
    const long long count = dintattn_model_tensors(m, NULL, 0);
    dintattn_tensor_info *t = (dintattn_tensor_info *)malloc(sizeof *t * (size_t)(count > 0 ? count : 1));
    const char *type[16];
    double params[16], best = 0;
    int nt = 0, k;
    long long i;
    snprintf(out, n, "?");
    if (!t) return;
    dintattn_model_tensors(m, t, count);
    for (i = 0; i < count; i++) {
        if (t[i].layer < 0 || !t[i].matrix || !t[i].type) continue;
        for (k = 0; k < nt && strcmp(type[k], t[i].type); k++) {}
        if (k == nt) {
            if (nt == 16) continue;
            type[nt] = t[i].type;
            params[nt++] = 0;
        }
        params[k] += (double)t[i].rows * (double)(t[i].cols > 0 ? t[i].cols : 1);
    }
    for (k = 0; k < nt; k++)
        if (params[k] > best) best = params[k], snprintf(out, n, "%s", type[k]);
    free(t);
}

/* bytes as "50.8 GB", or "312 MB" below a gigabyte */
static const char *size_text(char *buf, size_t n, double bytes)
{
    if (bytes >= 1e9) snprintf(buf, n, "%.1f GB", bytes / 1e9);
    else snprintf(buf, n, "%.0f MB", bytes / 1e6);
    return buf;
}

/* Runs the first q prompt tokens through `test` and through a reference load of the file (on the
   same threads and kernels; the reference in --precision exact), and compares every position's
   logits. The reference holds f32 weights when that copy fits in MEM_FRACTION of the available
   memory; else the file's own weights (read in place) when they are not what `test` holds; else
   out->skipped is set with the reason in out->note. Returns 0, or 1 with a message printed. */
static int measure_quality(const args *arg, const dintattn_model *test, const int *prompt, int q, quality *out)
{
    dintattn_load_options lo;
    dintattn_session_options so;
    dintattn_model *ref = NULL;
    dintattn_session *s = NULL;
    dintattn_error err;
    const int V = dintattn_model_config(test)->vocab_size;
    float *a = (float *)malloc(sizeof(float) * (size_t)q * V), *b = (float *)malloc(sizeof(float) * (size_t)q * V);
    double *la = (double *)malloc(sizeof(double) * V), *lb = (double *)malloc(sizeof(double) * V);
    double se = 0, sr = 0, nll_a = 0, nll_b = 0, need, avail;
    char file_type[16], test_type[16], s1[24], s2[24];
    int t, i, agree = 0, rc = 1;
    memset(out, 0, sizeof *out);
    if (!a || !b || !la || !lb) goto done;
    cli_session_options(&arg->eng, q, &so);
    /* the tested model first: its session's size is part of what the reference will need */
    if (dintattn_session_new(test, &so, &s, &err) || dintattn_prefill(s, prompt, q, b, 1, &err)) {
        cli_fail("quality", err.message);
        goto done;
    }
    need = 4.0 * (double)dintattn_model_params(test) + (double)dintattn_session_bytes(s);
    dintattn_session_free(s);
    s = NULL;
    held_type(test, test_type, sizeof test_type);

    /* the file as stored costs little (mapped in place) and says what the f32 copy would add */
    memset(&lo, 0, sizeof lo);
    lo.weights = DINTATTN_WEIGHTS_FILE;
    lo.map = DINTATTN_MAP_FILE; /* a reference, read once: no copy */
    lo.n_threads = arg->eng.threads;
    if (dintattn_model_load(arg->eng.model, &lo, &ref, &err)) {
        cli_fail("quality: reference", err.message);
        goto done;
    }
    held_type(ref, file_type, sizeof file_type);
    avail = dintattn_mem_available();
    if (!strcmp(file_type, "f32")) {
        snprintf(out->ref, sizeof out->ref, "f32");
    } else if (avail <= 0 || need <= MEM_FRACTION * avail) {
        dintattn_model_free(ref);
        ref = NULL;
        lo.weights = DINTATTN_WEIGHTS_F32;
        if (dintattn_model_load(arg->eng.model, &lo, &ref, &err)) {
            cli_fail("quality: f32 reference", err.message);
            goto done;
        }
        snprintf(out->ref, sizeof out->ref, "f32");
    } else if (strcmp(file_type, test_type)) {
        snprintf(out->ref, sizeof out->ref, "file (%s)", file_type);
        snprintf(out->note, sizeof out->note, "f32 copy of %s would not fit in %s available",
                 size_text(s1, sizeof s1, need), size_text(s2, sizeof s2, avail));
    } else {
        out->skipped = 1;
        snprintf(out->note, sizeof out->note,
                 "an f32 copy of %s would not fit in %s available, and the file's weights are %s, as tested",
                 size_text(s1, sizeof s1, need), size_text(s2, sizeof s2, avail), file_type);
        rc = 0;
        goto done;
    }
    so.precision = DINTATTN_PRECISION_EXACT;
    so.kv = DINTATTN_KV_F32;
    if (dintattn_session_new(ref, &so, &s, &err) || dintattn_prefill(s, prompt, q, a, 1, &err)) {
        cli_fail("quality: reference", err.message);
        goto done;
    }
    for (t = 0; t < q; t++) {
        const float *x = a + (size_t)t * V, *y = b + (size_t)t * V;
        double kl = 0;
        log_softmax(x, V, la);
        log_softmax(y, V, lb);
        for (i = 0; i < V; i++) {
            double d = (double)x[i] - y[i];
            se += d * d;
            sr += (double)x[i] * x[i];
            if (fabs(d) > out->max_abs) out->max_abs = fabs(d);
            kl += exp(la[i]) * (la[i] - lb[i]);
        }
        out->kl += kl / q;
        agree += argmax(x, V) == argmax(y, V);
        if (t + 1 < q) {
            nll_a -= la[prompt[t + 1]];
            nll_b -= lb[prompt[t + 1]];
        }
    }
    out->tokens = q;
    out->rel_rms = sr > 0 ? sqrt(se / sr) : 0;
    out->top1 = (double)agree / q;
    out->ppl_ref = q > 1 ? exp(nll_a / (q - 1)) : 0;
    out->ppl = q > 1 ? exp(nll_b / (q - 1)) : 0;
    rc = 0;
done:
    if (rc && !(a && b && la && lb)) cli_fail("quality: out of memory", NULL);
    dintattn_session_free(s);
    dintattn_model_free(ref);
    free(a);
    free(b);
    free(la);
    free(lb);
    return rc;
}

static const char *attention_name(const dintattn_config *c)
{
    if (c->attention == DINTATTN_ATTN_STANDARD) return "standard";
    if (c->attention == DINTATTN_ATTN_DIFF) return c->qk_rank > 0 ? "diff (shared, low-rank Q/K)" : "diff";
    return "dint";
}

static void json_string(const char *s)
{
    putchar('"');
    for (; *s; s++) {
        unsigned char ch = (unsigned char)*s;
        if (ch == '"' || ch == '\\') printf("\\%c", ch);
        else if (ch < 0x20) printf("\\u%04x", ch);
        else putchar(ch);
    }
    putchar('"');
}

/* ", "key": v" with v printed by fmt, or null when !known */
static void json_num(const char *key, const char *fmt, double v, int known)
{
    printf(", \"%s\": ", key);
    if (known) printf(fmt, v);
    else fputs("null", stdout);
}

/* ", "key": "s"", or null for NULL or "" */
static void json_str(const char *key, const char *s)
{
    printf(", \"%s\": ", key);
    if (s && *s) json_string(s);
    else fputs("null", stdout);
}

/* "X unit" or "not available" */
static const char *rate_text(char *buf, size_t n, double v, const char *unit)
{
    if (v > 0) snprintf(buf, n, "%.1f %s", v, unit);
    else snprintf(buf, n, "not available");
    return buf;
}

/* --- the run -------------------------------------------------------------------------------- */

/* What a run measured, for its report. */
typedef struct measured {
    const dintattn_config *c;
    int N, M, n_batch, factored, int8_held, bf16_held, unit_known;
    dintattn_prefill_unit unit;
    dintattn_kernels level;
    long long params;
    const char *kernels, *precision, *pkernel, *coretype, *peak_isa[PEAK_KINDS];
    char held[16], why[160];
    quality qual;
    double prefill_runs[PREFILL_RUNS];          /* seconds, sorted */
    double load_s, prefill_s, decode_s, wbytes, kv_mean, checksum;
    double bw, bw1, bw_min, bw_max, limit_s, limit_kv_s; /* GB/s; the seconds the bandwidth allows */
    double gemm, gemm_unset, peak[PEAK_KINDS];  /* the machine: G(FL)OP/s */
    double mparams, model_flops, attn_flops;
    int bw_mib;                                 /* the bandwidth test's buffer */
} measured;

/* The figures derived from what was measured: rates, and fractions of the machine's limits. */
typedef struct ratios {
    double pre_tok_s, dec_tok_s, pre_gflop_s, roof, roof_kv, gfrac, gfrac_unset, f_f32, f_int8, f_bf16, f_amx;
    double amx_products;
    int on_amx, on_f32;
} ratios;

static ratios ratios_of(const measured *m)
{
    ratios q;
    const int known = m->unit_known;
    q.pre_tok_s = m->N / m->prefill_s, q.dec_tok_s = m->M / m->decode_s, q.pre_gflop_s = m->model_flops / m->prefill_s / 1e9;
    q.roof = m->limit_s / m->decode_s, q.roof_kv = m->limit_kv_s / m->decode_s, q.gfrac = q.pre_gflop_s / m->gemm;
    q.gfrac_unset = m->gemm_unset > 0 ? q.pre_gflop_s / m->gemm_unset : 0;
    q.f_f32 = m->peak[PEAK_F32] > 0 ? q.pre_gflop_s / m->peak[PEAK_F32] : 0;
    /* the peak of the unit the library runs the prompt's products on */
    /* on AMX with f32 activations in three bf16 parts each product takes three tile products */
    q.on_amx = known && (m->unit == DINTATTN_PREFILL_AMX_BF16 || m->unit == DINTATTN_PREFILL_AMX_BF16X3);
    q.amx_products = known && m->unit == DINTATTN_PREFILL_AMX_BF16X3 ? 3 : 1;
    q.on_f32 = known && (m->unit == DINTATTN_PREFILL_SGEMM || m->unit == DINTATTN_PREFILL_F32_PANELS);
    q.f_int8 = m->int8_held && !q.on_amx && !q.on_f32 && m->peak[PEAK_INT8] > 0 ? q.pre_gflop_s / m->peak[PEAK_INT8] : 0;
    q.f_bf16 = m->bf16_held && !q.on_amx && !q.on_f32 && m->peak[PEAK_BF16] > 0 ? q.pre_gflop_s / m->peak[PEAK_BF16] : 0;
    q.f_amx = q.on_amx && m->peak[PEAK_AMX] > 0 ? q.amx_products * q.pre_gflop_s / m->peak[PEAK_AMX] : 0;
    return q;
}

/* The prompt and decode lengths: N + M must fit in the context, M at most ctx - 1, then N at
   most ctx - M; a length given and cut is said on stderr. Returns 0, or 1 (printed). */
static int fit_context(const args *a, int ctx, measured *m)
{
    m->M = a->gen < ctx - 1 ? a->gen : ctx - 1;
    m->N = a->prompt < ctx - m->M ? a->prompt : ctx - m->M;
    if (m->N < 1 || m->M < 1) return cli_fail("the model's context is too short to benchmark", NULL);
    if (a->gen_set && m->M < a->gen)
        fprintf(stderr, "bench: --gen %d is past the model's context of %d: using %d\n", a->gen, ctx, m->M);
    if (a->prompt_set && m->N < a->prompt)
        fprintf(stderr, "bench: --prompt %d with %d decoded tokens is past the model's context of %d: using %d\n",
                a->prompt, m->M, ctx, m->N);
    return 0;
}

/* A warm-up (page faults, thread pools), then PREFILL_RUNS prefills of the prompt from an empty
   cache (as llama-bench repeats): their times sorted, the median the figure. The cache holds the
   last one's tokens for the decode. Returns 0, or 1 (printed). */
static int timed_prefill(dintattn_session *sess, const int *prompt, float *logits, measured *m)
{
    dintattn_error err;
    double t0;
    int i, V = m->c->vocab_size;
    if (dintattn_prefill(sess, prompt, m->N < 8 ? m->N : 8, logits, 0, &err) != DINTATTN_OK ||
        dintattn_decode(sess, argmax(logits, V), logits, &err) != DINTATTN_OK)
        return cli_fail("warm-up", err.message);
    for (i = 0; i < PREFILL_RUNS; i++) {
        dintattn_session_reset(sess);
        t0 = cli_now();
        if (dintattn_prefill(sess, prompt, m->N, logits, 0, &err) != DINTATTN_OK) return cli_fail("prefill", err.message);
        m->prefill_runs[i] = cli_now() - t0;
    }
    qsort(m->prefill_runs, PREFILL_RUNS, sizeof m->prefill_runs[0], cmp_double);
    m->prefill_s = m->prefill_runs[PREFILL_RUNS / 2];
    return 0;
}

/* Decode in BW_ROUNDS rounds, each just after a bandwidth measurement: on a shared machine the
   bandwidth drifts by tens of percent over seconds, so each round is held against its own.
   Returns 0, or 1 (printed). */
static int timed_decode(const args *a, dintattn_session *sess, bw_buffer *bwb, float *logits, measured *m)
{
    dintattn_error err;
    const int M = m->M, V = m->c->vocab_size;
    double t0, bw = 0;
    int i, tok;
    m->decode_s = m->limit_s = m->limit_kv_s = 0;
    m->bw_min = 1e30;
    m->bw_max = 0;
    for (i = 0; i < M; i++) {
        if (i * BW_ROUNDS / M != (i - 1) * BW_ROUNDS / M || i == 0) {
            bw = bw_best(bwb, a->eng.threads, BW_PASSES, &m->checksum);
            if (bw <= 0) return cli_fail("bandwidth test failed (no threads)", NULL);
            m->bw_min = bw < m->bw_min ? bw : m->bw_min;
            m->bw_max = bw > m->bw_max ? bw : m->bw_max;
        }
        m->limit_s += m->wbytes / (bw * 1e9);
        m->limit_kv_s += (m->wbytes + dintattn_session_kv_bytes(sess, m->N + i + 1)) / (bw * 1e9);
        tok = argmax(logits, V);
        t0 = cli_now();
        if (dintattn_decode(sess, tok, logits, &err) != DINTATTN_OK) return cli_fail("decode", err.message);
        m->decode_s += cli_now() - t0;
    }
    m->kv_mean = dintattn_session_kv_bytes(sess, m->N + (M + 1) / 2);
    m->bw = m->wbytes * M / m->limit_s / 1e9; /* the harmonic mean over the tokens */
    return 0;
}

/* The model's figures: a session for N + M tokens, a fixed vocabulary-wide prompt, the timed
   prefill and decode with the bandwidth beside them, and what bf16 / q8 / q4 weights or a
   bf16 / q8 KV cache change. Returns 0, or 1 (printed). */
static int measure_model(const args *a, const dintattn_model *model, measured *m)
{
    dintattn_session_options so;
    dintattn_session *sess = NULL;
    dintattn_error err;
    bw_buffer bwb = {NULL, 0, 0};
    unsigned long long rng = 0x9E3779B97F4A7C15ULL;
    int *prompt = NULL, i, rc = 1;
    float *logits = NULL;

    cli_session_options(&a->eng, m->N + m->M, &so);
    /* a prompt up to the engine's default step runs as one chunk, the one
       dintattn_session_prefill_unit reports on (its n_batch) */
    so.n_batch = a->batch ? a->batch : m->N < 512 ? m->N : 0;
    m->n_batch = so.n_batch;
    if (dintattn_session_new(model, &so, &sess, &err) != DINTATTN_OK) return cli_fail("session", err.message);
    m->level = dintattn_session_kernels(sess);
    m->kernels = dintattn_kernels_name(m->level);
    m->precision = dintattn_precision_name(dintattn_session_precision(sess));
    m->unit_known = dintattn_session_prefill_unit(sess, m->held, &m->unit, &err) == DINTATTN_OK;
    m->pkernel = m->unit_known ? dintattn_prefill_unit_name(m->unit) : "?";
    prompt = (int *)malloc(sizeof(int) * (size_t)m->N);
    logits = (float *)malloc(sizeof(float) * (size_t)m->c->vocab_size);
    if (!prompt || !logits) {
        cli_fail("out of memory", NULL);
        goto done;
    }
    for (i = 0; i < m->N; i++) {  /* splitmix64 draws: a fixed, vocabulary-wide prompt */
        unsigned long long z = (rng += 0x9E3779B97F4A7C15ULL);
        z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
        z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
        prompt[i] = (int)((z ^ (z >> 31)) % (unsigned long long)m->c->vocab_size);
    }
    if (timed_prefill(sess, prompt, logits, m)) goto done;
    m->wbytes = (double)dintattn_model_weight_bytes(model);
    if (bw_open(&bwb, a->eng.threads, &m->checksum)) {
        cli_fail("bandwidth test failed (no memory for the buffer, or no threads)", NULL);
        goto done;
    }
    m->bw_mib = (int)(bwb.bytes >> 20);
    if (timed_decode(a, sess, &bwb, logits, m)) goto done;
    dintattn_session_free(sess);
    sess = NULL;
    /* one thread, once: what a single core draws (not used in the ratios); then the buffer goes,
       leaving its GiB to the quality reference */
    m->bw1 = bw_best(&bwb, 1, BW_PASSES, &m->checksum);
    free(bwb.p);
    bwb.p = NULL;
    /* against f32 weights and cache (or the file's weights, see measure_quality) */
    if ((a->eng.weights == DINTATTN_WEIGHTS_BF16 || a->eng.weights == DINTATTN_WEIGHTS_Q8 ||
         a->eng.weights == DINTATTN_WEIGHTS_Q4 || a->eng.kv != DINTATTN_KV_F32) &&
        measure_quality(a, model, prompt, m->N < 128 ? m->N : 128, &m->qual))
        goto done;
    rc = 0;
done:
    free(bwb.p);
    free(prompt);
    free(logits);
    dintattn_session_free(sess);
    return rc;
}

/* The machine, on the same threads: sgemm at the layers' shapes (as configured, and with
   OPENBLAS_CORETYPE unset), the register-only peaks, and the work a prompt is. Returns 0, or 1
   (printed). */
static int measure_machine(const args *a, const dintattn_model *model, measured *m)
{
    const dintattn_config *c = m->c;
    shape *shapes = NULL;
    double pairs, per_head_pair;
    int ns, i, k;
    ns = layer_shapes(model, &shapes);
    m->gemm = ns > 0 ? measure_sgemm(shapes, ns, m->N) : 0;
    if (m->gemm <= 0) {
        free(shapes);
        return cli_fail("sgemm test failed (out of memory)", NULL);
    }
    m->coretype = getenv(CORETYPE);
    m->gemm_unset = m->coretype ? sgemm_unset(shapes, ns, m->N, a->eng.threads, m->why, sizeof m->why) : m->gemm;
    for (k = 0; k < PEAK_KINDS; k++) m->peak[k] = 0;
    for (i = 0; i < PEAK_PASSES; i++) /* the kinds in turn, so that a dip falls on one pass of each */
        for (k = 0; k < PEAK_KINDS; k++) {
            peak_fn fn = peak_pick(k, m->level, &m->peak_isa[k]);
            double r = fn ? peak_run(fn, a->eng.threads) : 0;
            m->peak[k] = r > m->peak[k] ? r : m->peak[k];
        }
    m->params = dintattn_model_params(model);
    m->mparams = layer_matrix_params(shapes, ns);
    m->model_flops = 2.0 * m->N * m->mparams + 2.0 * c->vocab_size * c->dim;
    pairs = 0.5 * m->N * (m->N + 1.0);
    per_head_pair = 2.0 * c->head_dim * (c->attention == DINTATTN_ATTN_STANDARD ? 1 : 2) + 2.0 * c->v_head_dim;
    m->attn_flops = pairs * c->n_heads * per_head_pair * c->n_layers;
    free(shapes);
    return 0;
}

/* --json: one object. */
static void print_json(const args *a, const measured *m)
{
    const dintattn_config *c = m->c;
    const int N = m->N, M = m->M, factored = m->factored;
    const char *held = m->held, *precision = m->precision, *kernels = m->kernels, *pkernel = m->pkernel;
    const char *coretype = m->coretype, *const *peak_isa = m->peak_isa, *wname = dintattn_weights_name(a->eng.weights);
    const double *prefill_runs = m->prefill_runs, *peak = m->peak, load_s = m->load_s, prefill_s = m->prefill_s;
    const double decode_s = m->decode_s, wbytes = m->wbytes, bw = m->bw, bw1 = m->bw1, bw_min = m->bw_min;
    const double bw_max = m->bw_max, gemm = m->gemm, gemm_unset = m->gemm_unset, kv_mean = m->kv_mean;
    const double model_flops = m->model_flops, attn_flops = m->attn_flops;
    const long long params = m->params;
    const quality qual = m->qual;
    const char *why = m->why;
    const ratios q = ratios_of(m);
    const double pre_tok_s = q.pre_tok_s, dec_tok_s = q.dec_tok_s, pre_gflop_s = q.pre_gflop_s, roof = q.roof;
    const double roof_kv = q.roof_kv, gfrac = q.gfrac, gfrac_unset = q.gfrac_unset, f_f32 = q.f_f32;
    const double f_int8 = q.f_int8, f_bf16 = q.f_bf16, f_amx = q.f_amx;
    const int n_batch = m->n_batch;
    printf("{\"model\": ");
    json_string(a->eng.model);
    printf(", \"attention\": \"%s\", \"qk_rank\": %d, \"qk_factored\": %d, \"dim\": %d, \"n_layers\": %d, "
           "\"n_heads\": %d, \"head_dim\": %d, \"v_head_dim\": %d, \"n_k1_heads\": %d, \"n_q2_heads\": %d, "
           "\"n_k2_heads\": %d, \"n_v_heads\": %d, \"hidden_dim\": %d, \"vocab_size\": %d, "
           "\"max_seq_len\": %d, \"params\": %lld, \"weights\": \"%s\", \"weights_held\": \"%s\", "
           "\"precision\": \"%s\", \"kv\": \"%s\", \"kernels\": \"%s\", "
           "\"threads\": %d, \"n_batch\": %d, \"prompt_tokens\": %d, \"gen_tokens\": %d, \"load_s\": %.6f, "
           "\"prefill_s\": %.6f, \"prefill_tok_s\": %.3f, \"decode_s\": %.6f, \"decode_tok_s\": %.3f, "
           "\"weight_bytes_per_token\": %.0f, \"bandwidth_gb_s\": %.3f, \"bandwidth_min_gb_s\": %.3f, "
           "\"bandwidth_max_gb_s\": %.3f, \"bandwidth_isa\": \"%s\"",
           c->attention == DINTATTN_ATTN_STANDARD ? "standard"
           : c->attention == DINTATTN_ATTN_DIFF   ? "diff"
                                                  : "dint",
           c->qk_rank, factored, c->dim, c->n_layers, c->n_heads, c->head_dim, c->v_head_dim,
           c->n_k1_heads, c->n_q2_heads, c->n_k2_heads, c->n_v_heads, c->hidden_dim, c->vocab_size,
           c->max_seq_len, params, wname, held, precision, dintattn_kv_name(a->eng.kv), kernels, a->eng.threads, n_batch, N, M,
           load_s, prefill_s, pre_tok_s, decode_s, dec_tok_s, wbytes, bw, bw_min, bw_max, bw_isa());
    printf(", \"prefill_runs\": %d, \"prefill_tok_s_min\": %.3f, \"prefill_tok_s_max\": %.3f", PREFILL_RUNS,
           N / prefill_runs[PREFILL_RUNS - 1], N / prefill_runs[0]);
    json_num("bandwidth_1thread_gb_s", "%.3f", bw1, bw1 > 0);
    printf(", \"sgemm_gflop_s\": %.3f", gemm);
    json_str("sgemm_openblas_coretype", coretype);
    json_num("sgemm_unset_gflop_s", "%.3f", gemm_unset, gemm_unset > 0);
    json_str("sgemm_unset_error", coretype && gemm_unset <= 0 ? why : NULL);
    json_num("peak_f32_gflop_s", "%.3f", peak[PEAK_F32], peak[PEAK_F32] > 0);
    json_num("peak_bf16_gflop_s", "%.3f", peak[PEAK_BF16], peak[PEAK_BF16] > 0);
    json_num("peak_int8_gop_s", "%.3f", peak[PEAK_INT8], peak[PEAK_INT8] > 0);
    json_num("peak_amx_bf16_gflop_s", "%.3f", peak[PEAK_AMX], peak[PEAK_AMX] > 0);
    json_str("peak_f32_isa", peak_isa[PEAK_F32]);
    json_str("peak_bf16_isa", peak_isa[PEAK_BF16]);
    json_str("peak_int8_isa", peak_isa[PEAK_INT8]);
    printf(", \"prefill_model_gflop\": %.4f, \"prefill_gflop_s\": %.3f, \"attention_gflop\": %.4f, "
           "\"decode_roofline_fraction\": %.4f, \"kv_bytes_per_token\": %.0f, "
           "\"decode_roofline_fraction_with_kv\": %.4f, \"prefill_gemm_fraction\": %.4f",
           model_flops / 1e9, pre_gflop_s, attn_flops / 1e9, roof, kv_mean, roof_kv, gfrac);
    json_num("prefill_gemm_unset_fraction", "%.4f", gfrac_unset, gfrac_unset > 0);
    json_num("prefill_f32_peak_fraction", "%.4f", f_f32, f_f32 > 0);
    json_num("prefill_bf16_peak_fraction", "%.4f", f_bf16, f_bf16 > 0);
    json_num("prefill_amx_peak_fraction", "%.4f", f_amx, f_amx > 0);
    json_num("prefill_int8_peak_fraction", "%.4f", f_int8, f_int8 > 0);
    json_str("prefill_kernel", pkernel);
    json_str("quality_reference", qual.ref);
    json_str("quality_note", qual.note);
    printf(", \"quality_tokens\": %d", qual.tokens);
    json_num("logit_rel_rms", "%.6g", qual.rel_rms, qual.tokens > 0);
    json_num("logit_max_abs", "%.6g", qual.max_abs, qual.tokens > 0);
    json_num("kl_nats", "%.6g", qual.kl, qual.tokens > 0);
    json_num("top1_agree", "%.4f", qual.top1, qual.tokens > 0);
    json_num("ppl_ref", "%.6g", qual.ppl_ref, qual.tokens > 1);
    json_num("ppl", "%.6g", qual.ppl, qual.tokens > 1);
    printf("}\n");
}

/* The text report. */
static void print_text(const args *a, const measured *m)
{
    const dintattn_config *c = m->c;
    const int N = m->N, M = m->M, factored = m->factored;
    const char *held = m->held, *precision = m->precision, *kernels = m->kernels, *pkernel = m->pkernel;
    const char *coretype = m->coretype, *const *peak_isa = m->peak_isa, *wname = dintattn_weights_name(a->eng.weights);
    const double *prefill_runs = m->prefill_runs, *peak = m->peak, load_s = m->load_s, prefill_s = m->prefill_s;
    const double decode_s = m->decode_s, wbytes = m->wbytes, bw = m->bw, bw1 = m->bw1, bw_min = m->bw_min;
    const double bw_max = m->bw_max, gemm = m->gemm, gemm_unset = m->gemm_unset, kv_mean = m->kv_mean;
    const double model_flops = m->model_flops, attn_flops = m->attn_flops, limit_s = m->limit_s;
    const long long params = m->params;
    const quality qual = m->qual;
    const char *why = m->why;
    const ratios q = ratios_of(m);
    const double pre_tok_s = q.pre_tok_s, dec_tok_s = q.dec_tok_s, pre_gflop_s = q.pre_gflop_s, roof = q.roof;
    const double roof_kv = q.roof_kv, gfrac = q.gfrac, gfrac_unset = q.gfrac_unset, f_f32 = q.f_f32;
    const double f_int8 = q.f_int8, f_bf16 = q.f_bf16, f_amx = q.f_amx, amx_products = q.amx_products;
    const int on_amx = q.on_amx, on_f32 = q.on_f32;
    const int int8_held = m->int8_held, bf16_held = m->bf16_held;
    char t1[48], t2[48], t3[48];
    printf("model      %s\n", a->eng.model);
    printf("config     %s, dim %d, %d layers, %d heads of %d (v %d), k1/q2/k2/v heads %d/%d/%d/%d, "
           "qk_rank %d%s, ffn %d, vocab %d, context %d, %.1fM params\n",
           attention_name(c), c->dim, c->n_layers, c->n_heads, c->head_dim, c->v_head_dim, c->n_k1_heads,
           c->n_q2_heads, c->n_k2_heads, c->n_v_heads, c->qk_rank, factored ? " (factored)" : "",
           c->hidden_dim, c->vocab_size, c->max_seq_len, (double)params / 1e6);
    printf("threads    %d (session and OpenBLAS); kernels %s; weights %s (%s; the layers' matrices held as "
           "%s); precision %s (Q/K accumulate in double); KV cache %s\n",
           a->eng.threads, kernels, wname, a->eng.weights ? "converted at load" : "as stored", held, precision,
           dintattn_kv_name(a->eng.kv));
    printf("load       %.3f s\n", load_s);
    printf("prefill    %d tokens in %.3f s: %.1f tok/s, %.2f GFLOP/s in weight matrices "
           "(%.3f GFLOP; attention adds %.3f GFLOP, not counted); median of %d runs, %.1f to %.1f tok/s\n",
           N, prefill_s, pre_tok_s, pre_gflop_s, model_flops / 1e9, attn_flops / 1e9, PREFILL_RUNS,
           N / prefill_runs[PREFILL_RUNS - 1], N / prefill_runs[0]);
    printf("decode     %d tokens after %d in %.3f s: %.1f tok/s, %.2f ms/token\n", M, N, decode_s,
           dec_tok_s, 1e3 * decode_s / M);
    printf("weights    %.2f MB read per decoded token\n", wbytes / 1e6);
    printf("machine    memory read %.2f GB/s (%d threads over %d MiB, 8 %s accumulators a thread, best of %d "
           "passes before each of %d decode rounds: %.2f to %.2f); 1 thread: %.2f GB/s (once, after the "
           "decode; not in the ratios)\n",
           bw, a->eng.threads, m->bw_mib, bw_isa(), BW_PASSES, BW_ROUNDS, bw_min, bw_max, bw1);
    if (!coretype)
        printf("sgemm      %.2f GFLOP/s with " CORETYPE " unset (OpenBLAS's own choice)", gemm);
    else if (gemm_unset > 0)
        printf("sgemm      %.2f GFLOP/s (" CORETYPE "=%s, as configured); %.2f GFLOP/s with " CORETYPE
               " unset (OpenBLAS's own choice)", gemm, coretype, gemm_unset);
    else
        printf("sgemm      %.2f GFLOP/s (" CORETYPE "=%s, as configured); with " CORETYPE
               " unset: not measured, the child run failed (%s)", gemm, coretype, why);
    printf("; at M = %d over the layers' shapes, %d threads\n", N, a->eng.threads);
    printf("peak       f32 FMA %s, bf16 dot %s, int8 dot %s (register-only, best of %d, %d threads; %s, %s, %s)\n",
           rate_text(t1, sizeof t1, peak[PEAK_F32], "GFLOP/s"), rate_text(t2, sizeof t2, peak[PEAK_BF16], "GFLOP/s"),
           rate_text(t3, sizeof t3, peak[PEAK_INT8], "GOP/s"), PEAK_PASSES, a->eng.threads, peak_isa[PEAK_F32],
           peak_isa[PEAK_BF16] ? peak_isa[PEAK_BF16] : "no avx512bf16 at this kernel level",
           peak_isa[PEAK_INT8] ? peak_isa[PEAK_INT8] : "no avx512vnni or avxvnni at this kernel level");
    if (peak[PEAK_AMX] > 0)
        printf("peak       AMX bf16 tiles %s (register-only: tiles loaded once, best of %d, %d threads)\n",
               rate_text(t1, sizeof t1, peak[PEAK_AMX], "GFLOP/s"), PEAK_PASSES, a->eng.threads);
    printf("decode roofline fraction  %.3f  (%.3f ms/token at the bandwidth limit); counting the KV "
           "cache read too (%.2f MB/token on average) %.3f\n",
           roof, 1e3 * limit_s / M, kv_mean / 1e6, roof_kv);
    printf("prefill GEMM fraction     %.3f  (prefill GFLOP/s in weight matrices / sgemm%s)", gfrac,
           coretype ? ", as configured" : "");
    if (coretype && gfrac_unset > 0) printf("; %.3f of sgemm with OPENBLAS_CORETYPE unset", gfrac_unset);
    printf("\n");
    printf("prefill peak fraction     %.3f of the f32 FMA peak", f_f32);
    if (on_amx && f_amx > 0)
        printf("; %.3f of the AMX bf16 peak%s", f_amx, amx_products > 1 ? " (three tile products a product)" : "");
    else if (on_amx) printf("; AMX bf16 peak not available");
    else if (int8_held && !on_f32) printf(f_int8 > 0 ? "; %.3f of the int8 dot peak" : "; int8 dot peak not available", f_int8);
    else if (bf16_held && !on_f32) printf(f_bf16 > 0 ? "; %.3f of the bf16 dot peak" : "; bf16 dot peak not available", f_bf16);
    printf("  (prefill GFLOP/s in weight matrices / register-only peak; matrices held as %s, precision %s: "
           "products on %s)\n", held, precision, pkernel);
    if (qual.skipped)
        printf("quality    skipped: %s\n", qual.note);
    else if (qual.tokens)
        printf("quality    %s weights, %s KV cache vs %s weights, f32 cache, over %d prompt positions: logits "
               "rel. RMS diff %.3g, max |diff| %.3g; KL %.3g nats/token; top-1 agreement %.1f%%; prompt "
               "perplexity %.4g vs %.4g%s%s%s\n",
               wname, dintattn_kv_name(a->eng.kv), qual.ref, qual.tokens, qual.rel_rms, qual.max_abs, qual.kl, 100 * qual.top1, qual.ppl,
               qual.ppl_ref, qual.note[0] ? " (" : "", qual.note, qual.note[0] ? ")" : "");
}

/* ---- --parallel: batched decoding --------------------------------------------------------- */

#define PAR_ROUNDS 2  /* rounds over the list, alternately up and down it: each figure the best */
#define PAR_CHUNK 32  /* the joining prompt's chunk in the mix */

typedef struct par_row {
    int B;
    double prefill_tok_s, decode_tok_s, ms_step, bw_frac, bw_kv_frac, gb_s;
    double mix_ms_step, mix_decode_tok_s, mix_prompt_tok_s; /* B - 1 decoding while one prompt joins */
} par_row;

/* One batched step of items[0..n); returns its seconds, or -1 (printed) */
static double par_step(dintattn_batch_item *items, int n)
{
    dintattn_error err;
    double t0 = cli_now();
    if (dintattn_batch_step(items, n, NULL, &err) != DINTATTN_OK) return cli_fail("batch step", err.message), -1;
    return cli_now() - t0;
}

/* B sequences: their prompts prefilled together, then m->M steps decoding all of them (each its
   argmax), after a bandwidth measurement; then the mix: B - 1 decoding while a new prompt joins
   in chunks of PAR_CHUNK. Fills r (keeping the better of r's and this round's figures). */
static int par_measure(const args *a, dintattn_session **sess, int B, int *const *prompts, float **logits, bw_buffer *bwb,
                       const measured *m, par_row *r)
{
    dintattn_batch_item items[256] = {{0}};
    int toks[256], i, step, V = m->c->vocab_size;
    double t, dec = 0, bw, kv = 0, mix = 0, mix_tokens = 0;
    for (i = 0; i < B; i++) {
        dintattn_session_reset(sess[i]);
        items[i].sess = sess[i], items[i].tokens = prompts[i], items[i].n_tokens = m->N, items[i].logits = logits[i];
    }
    if ((t = par_step(items, B)) < 0) return 1;
    r->B = B;
    if (B * m->N / t > r->prefill_tok_s) r->prefill_tok_s = B * m->N / t;
    bw = bw_best(bwb, a->eng.threads, BW_PASSES, &((measured *)m)->checksum);
    for (step = 0; step < m->M - 1; step++) {
        for (i = 0; i < B; i++) {
            toks[i] = argmax(logits[i], V);
            items[i].tokens = &toks[i], items[i].n_tokens = 1;
        }
        kv += B * dintattn_session_kv_bytes(sess[0], m->N + step + 1);
        if ((t = par_step(items, B)) < 0) return 1;
        dec += t;
    }
    if (B * (m->M - 1) / dec > r->decode_tok_s) {
        r->decode_tok_s = B * (m->M - 1) / dec;
        r->ms_step = 1e3 * dec / (m->M - 1);
        r->gb_s = bw;
        r->bw_frac = m->wbytes * (m->M - 1) / dec / (bw * 1e9);
        r->bw_kv_frac = (m->wbytes * (m->M - 1) + kv) / dec / (bw * 1e9);
    }
    if (B < 2) return 0;
    /* the mix: sequence B-1 starts again and prefills while the others decode */
    dintattn_session_reset(sess[B - 1]);
    for (step = 0; step * PAR_CHUNK < m->N; step++) {
        const int k = m->N - step * PAR_CHUNK < PAR_CHUNK ? m->N - step * PAR_CHUNK : PAR_CHUNK;
        for (i = 0; i < B - 1; i++) {
            toks[i] = argmax(logits[i], V);
            items[i].tokens = &toks[i], items[i].n_tokens = 1;
        }
        items[B - 1].tokens = prompts[B - 1] + step * PAR_CHUNK, items[B - 1].n_tokens = k;
        if (dintattn_session_pos(sess[0]) + 1 > dintattn_session_n_ctx(sess[0])) break;
        if ((t = par_step(items, B)) < 0) return 1;
        mix += t, mix_tokens += k;
    }
    if (step > 0 && (r->mix_ms_step == 0 || 1e3 * mix / step < r->mix_ms_step)) {
        r->mix_ms_step = 1e3 * mix / step;
        r->mix_decode_tok_s = (B - 1) * step / mix;
        r->mix_prompt_tok_s = mix_tokens / mix;
    }
    return 0;
}

static int par_run(const args *a, dintattn_model *model, measured *m)
{
    par_row rows[BENCH_MAX_PARALLEL];
    dintattn_session *sess[256] = {NULL};
    int *prompts[256] = {NULL};
    float *logits[256] = {NULL};
    dintattn_session_options so;
    dintattn_error err;
    bw_buffer bwb = {NULL, 0, 0};
    unsigned long long rng = 0x9E3779B97F4A7C15ULL;
    size_t packed = 0;
    int maxB = 0, i, j, round, rc = 1;
    memset(rows, 0, sizeof rows);
    for (i = 0; i < a->n_parallel; i++) maxB = a->parallel[i] > maxB ? a->parallel[i] : maxB;
    cli_session_options(&a->eng, m->N + m->M + PAR_CHUNK, &so);
    so.n_batch = a->batch ? a->batch : 0;
    for (i = 0; i < maxB; i++) {
        if (dintattn_session_new(model, &so, &sess[i], &err) != DINTATTN_OK) {
            cli_fail("session", err.message);
            goto done;
        }
        prompts[i] = (int *)malloc(sizeof(int) * (size_t)m->N);
        logits[i] = (float *)malloc(sizeof(float) * (size_t)m->c->vocab_size);
        if (!prompts[i] || !logits[i]) {
            cli_fail("out of memory", NULL);
            goto done;
        }
        for (j = 0; j < m->N; j++) { /* splitmix64 draws: fixed, vocabulary-wide prompts */
            unsigned long long z = (rng += 0x9E3779B97F4A7C15ULL);
            z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
            z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
            prompts[i][j] = (int)((z ^ (z >> 31)) % (unsigned long long)m->c->vocab_size);
        }
    }
    m->level = dintattn_session_kernels(sess[0]);
    m->kernels = dintattn_kernels_name(m->level);
    m->precision = dintattn_precision_name(dintattn_session_precision(sess[0]));
    if (!a->no_prepack && dintattn_model_prepack(model, sess[0], 0, &packed, &err) != DINTATTN_OK) {
        cli_fail("prepack", err.message);
        goto done;
    }
    m->wbytes = (double)dintattn_model_weight_bytes(model);
    if (bw_open(&bwb, a->eng.threads, &m->checksum)) {
        cli_fail("bandwidth test failed (no memory for the buffer, or no threads)", NULL);
        goto done;
    }
    if (par_measure(a, sess, 1, prompts, logits, &bwb, m, &rows[0])) goto done; /* a warm-up */
    memset(rows, 0, sizeof rows);
    for (round = 0; round < PAR_ROUNDS; round++)
        for (j = 0; j < a->n_parallel; j++) {
            const int k = round % 2 ? a->n_parallel - 1 - j : j;
            if (par_measure(a, sess, a->parallel[k], prompts, logits, &bwb, m, &rows[k])) goto done;
        }
    if (a->json) {
        printf("{\"model\": ");
        json_string(a->eng.model);
        printf(", \"weights_held\": \"%s\", \"precision\": \"%s\", \"kernels\": \"%s\", \"kv\": \"%s\", \"threads\": %d, "
               "\"prompt\": %d, \"gen\": %d, \"prepacked_bytes\": %zu, \"weight_bytes\": %.0f, \"rows\": [",
               m->held, m->precision, m->kernels, dintattn_kv_name(a->eng.kv), a->eng.threads, m->N, m->M, packed, m->wbytes);
        for (j = 0; j < a->n_parallel; j++) {
            const par_row *r = &rows[j];
            printf("%s\n  {\"B\": %d, \"prefill_tok_s\": %.1f, \"decode_tok_s\": %.1f, \"ms_per_step\": %.3f, "
                   "\"speedup_vs_B1\": %.3f, \"bandwidth_gb_s\": %.2f, \"weights_bandwidth_fraction\": %.3f, "
                   "\"bandwidth_fraction_with_kv\": %.3f, \"mix_ms_per_step\": %.3f, \"mix_decode_tok_s\": %.1f, "
                   "\"mix_prompt_tok_s\": %.1f}",
                   j ? "," : "", r->B, r->prefill_tok_s, r->decode_tok_s, r->ms_step, r->decode_tok_s / rows[0].decode_tok_s,
                   r->gb_s, r->bw_frac, r->bw_kv_frac, r->mix_ms_step, r->mix_decode_tok_s, r->mix_prompt_tok_s);
        }
        printf("\n]}\n");
    } else {
        printf("model      %s: %s weights, precision %s, kernels %s, KV %s, %d threads\n", a->eng.model, m->held, m->precision,
               m->kernels, dintattn_kv_name(a->eng.kv), a->eng.threads);
        printf("batches    B sequences: %d prompt tokens each, prefilled together, then %d decode steps of all B;\n"
               "           weights packed ahead: %s; best of %d rounds\n", m->N, m->M - 1,
               a->no_prepack ? "no (--no-prepack)" : packed ? "yes" : "nothing to pack at this precision", PAR_ROUNDS);
        printf("%5s %12s %12s %10s %9s %12s %12s   %s\n", "B", "prefill t/s", "decode t/s", "ms/step", "x B=1", "weights/bw",
               "+KV/bw", "mix: B-1 decoding + a prompt in chunks of 32");
        for (j = 0; j < a->n_parallel; j++) {
            const par_row *r = &rows[j];
            char mixs[96] = "";
            if (r->B > 1)
                snprintf(mixs, sizeof mixs, "%.2f ms/step, %.0f decode t/s, %.0f prompt t/s", r->mix_ms_step, r->mix_decode_tok_s,
                         r->mix_prompt_tok_s);
            printf("%5d %12.1f %12.1f %10.3f %9.2f %12.3f %12.3f   %s\n", r->B, r->prefill_tok_s, r->decode_tok_s, r->ms_step,
                   r->decode_tok_s / rows[0].decode_tok_s, r->bw_frac, r->bw_kv_frac, mixs);
        }
        printf("           (x B=1 is against the list's first B; weights/bw: weight bytes per step over the step's time,\n"
               "           as a fraction of the read bandwidth measured before each B's decode; +KV adds the caches' bytes)\n");
    }
    rc = m->checksum < 0 ? 1 : 0;
done:
    for (i = 0; i < maxB; i++) {
        dintattn_session_free(sess[i]);
        free(prompts[i]);
        free(logits[i]);
    }
    free(bwb.p);
    return rc;
}

int main(int argc, char **argv)
{
    args a;
    dintattn_error err;
    dintattn_model *model = NULL;
    measured m;
    double t0;
    int rc;
    argv = cli_aliases(&argc, argv);

    if (argc > 1 && !strcmp(argv[1], "--sgemm-only")) return sgemm_only(argc, argv);
    if ((rc = parse_args(argc, argv, &a))) return rc == 3 ? 0 : rc;
    openblas_set_num_threads(a.eng.threads);
    memset(&m, 0, sizeof m);

    t0 = cli_now();
    if (cli_load_model(a.eng.model, a.eng.weights, a.eng.map, a.eng.threads, &model, &err) != DINTATTN_OK) return cli_fail(a.eng.model, err.message);
    m.load_s = cli_now() - t0;
    m.c = dintattn_model_config(model);
    m.factored = dintattn_model_qk_factored(model);
    held_type(model, m.held, sizeof m.held);
    m.int8_held = !strcmp(m.held, "q8") || !strcmp(m.held, "q4");
    m.bf16_held = !strcmp(m.held, "bf16");
    if (a.n_parallel) {
        rc = fit_context(&a, m.c->max_seq_len - PAR_CHUNK, &m) || par_run(&a, model, &m);
        dintattn_model_free(model);
        return rc;
    }
    rc = fit_context(&a, m.c->max_seq_len, &m) || measure_model(&a, model, &m) || measure_machine(&a, model, &m);
    if (!rc) {
        if (a.json) print_json(&a, &m);
        else print_text(&a, &m);
        rc = m.checksum < 0 ? 1 : 0; /* the bandwidth sums are used, so the reads cannot be dropped */
    }
    dintattn_model_free(model);
    return rc;
}
