/* lowbit: how far a model's predictions move at each precision the engine holds its weights and
   its KV cache in, against the same text run with f32 weights and an f32 cache -- the DIFF
   paper's low-bit protocol (its Figure 8) as far as the engine's precisions reach.

       examples/lowbit [MODEL] (-p TEXT | -f FILE | --ids 1,2,3) [--weights LIST] [--kv LIST] [--json]
   and [--ctx N] [--threads T] [--map M] [--precision P | --fast] [--kernels K] [--tokenizer FILE].
   MODEL defaults to the shipped models/dint-kjv.safetensors; --help says what each figure is.

   The text is encoded and cut into windows as examples/score scores it (tg_encode; logitcmp.h's
   windows), and each pair of runs is compared as score --kl compares them (logitcmp.h's lc_add),
   so that every row equals score --kl of the same text against a saved f32 run. One model is
   loaded at a time: the reference's logits are kept (tokens x vocabulary floats), each weight
   precision is loaded, run with every cache type, and freed before the next.
   Exits 0 on success, 1 with one line on stderr on any error. */
#define _POSIX_C_SOURCE 200809L
#define DINTATTN_IMPLEMENTATION
#include "../dintattn.h"
#include "strbuf.h"   /* srv_buf; textgen.h needs it */
#include "textgen.h"  /* tg_encode, through cli_text_ids */
#define CLI_PROG "lowbit"
#include "cli.h"      /* cli_engine, cli_text_ids, cli_load_model, cli_fail */
#include "logitcmp.h" /* lc_add and the windows: score --kl's comparison */

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *usage =
    "usage: lowbit [MODEL] (-p TEXT | -f FILE | --ids 1,2,3) [options]\n"
    "  MODEL\ta .safetensors model (default: " CLI_DEFAULT_MODEL ")\n"
    "  -p, --prompt TEXT\tthe text (encoded with the model's BOS first, if it has one)\n"
    "  -f, --file FILE\tthe text of FILE (- : standard input)\n"
    "  --ids LIST\ttoken ids, comma-separated, used as they are (no BOS added)\n"
    "  --weights LIST\tweight precisions to compare, comma-separated, from f32, bf16, q8\n"
    "\tand q4 (default: all four)\n"
    "  --kv LIST\tKV cache types to compare, from f32, bf16 and q8 (default: all three)\n"
    "  --json\tone JSON object instead of the table\n"
    "  --ctx N\ttokens per window, at most the model's max_seq_len (the default)\n"
    "  --threads T\tthreads for attention heads and matrix rows (" CLI_THREADS_RANGE ")\n"
    "  --map M\tauto (default), file or copy: where f32 weights of an f32 file are read\n"
    "  --precision P\tauto (default: Q8/Q4 weights multiply int8 activations), exact (f32\n"
    "\tactivations for every weight type) or fast; the same for every row\n"
    "  --fast\tthe same as --precision fast\n"
    "  --kernels K\tthe highest kernel level: auto, portable, avx2, avx512 or amx\n"
    "\t(default: $DINTATTN_KERNELS when set, else auto)\n"
    CLI_TOKENIZER_USAGE
    "  -h, --help\tthis text\n";
static const char *usage_more =
    "\n"
    "Every row is one (weights, KV cache) pair, run over the whole text and compared, token by\n"
    "token, with the reference: f32 weights and an f32 cache, run first. The f32/f32 row is a\n"
    "second, separate run of the reference's setting: the run-to-run difference (0 when the engine\n"
    "is deterministic). For each scored token (every token but the first; a text longer than --ctx\n"
    "runs in windows of --ctx tokens, each from an empty cache starting with the previous window's\n"
    "last token, as examples/score):\n"
    "  KL       KL(reference || row) of the two next-token distributions, in nats, in double from\n"
    "           the float32 logits; the table gives the mean per token and the largest\n"
    "  top-1    the fraction of tokens where both runs' most likely next token is the same\n"
    "  ppl      the row's perplexity exp(mean NLL) of the text, and its change from the\n"
    "           reference's (absolute and in percent)\n"
    "  w bits   the weight matrices' bits per parameter as held (scales included: Q8 stores a\n"
    "           float per 32 weights); a matrix whose rows are not a multiple of 32 long keeps\n"
    "           the file's precision at q8 and q4, and \"held\" is the fraction of the matrices'\n"
    "           parameters at the row's precision\n"
    "  KV B/tok the cache's bytes per token of context\n"
    "Each row equals examples/score --kl of the same text, weights and cache against a run saved\n"
    "with --save-logits at f32 weights and an f32 cache.\n"
    "\n"
    "What it covers of the DIFF Transformer paper's Figure 8 (HellaSwag accuracy of DIFF and a\n"
    "Transformer with their attention logits quantized to 16, 8, 6 and 4 bits): the bit widths the\n"
    "engine has. Weights: 16 (bf16), 8 (q8: int8, a scale per 32) and 4 (q4: 4-bit, a scale per\n"
    "32); at --precision auto the Q8/Q4 rows also quantize the activations entering each product\n"
    "to int8 (blocks of 32), at exact they do not. KV cache: 16 (bf16) and 8 (q8: int8, a scale\n"
    "per head row). Not covered: 6-bit anything (the engine has no 6-bit type); quantizing the\n"
    "attention logits themselves, which is what Figure 8 did (the engine computes them in f32\n"
    "from the cache's keys); 4-bit KV caches; and task accuracy (examples/score --choices gives\n"
    "lm-eval's multiple-choice accuracy with the same --weights and --kv, one setting per run).\n";

#define N_WEIGHTS 4 /* f32, bf16, q8, q4: dintattn_weights after FILE */
#define N_KV 3      /* f32, bf16, q8 */

typedef struct args {
    cli_engine eng; /* MODEL, --ctx, --threads, --map, --precision, --kernels, --tokenizer */
    const char *prompt, *file, *ids;
    int json;
    dintattn_weights weights[N_WEIGHTS];
    dintattn_kv_type kv[N_KV];
    int n_weights, n_kv;
} args;

/* One row of the table. */
typedef struct row {
    dintattn_weights weights;
    dintattn_kv_type kv;
    double w_bits, held, kv_bytes; /* bits per matrix parameter, the fraction held so, bytes per token */
    lc_stats st;
} row;

/* Parses a comma-separated list of names with parse (the library's) into out, in the library's
   order (so that f32 runs first), each at most once. Returns the count, or -1 (printed). */
static int parse_list(const char *flag, const char *list, int max, int *out,
                      int (*parse)(const char *name, int *v, dintattn_error *err))
{
    dintattn_error err;
    char name[32], msg[320];
    const char *p = list;
    int n = 0, seen[8] = {0}, v, k;
    for (;;) {
        size_t len = strcspn(p, ",");
        if (len == 0 || len >= sizeof name) {
            snprintf(msg, sizeof msg, "'%s' is not a comma-separated list of names (see --help)", list);
            return cli_fail(flag, msg), -1;
        }
        memcpy(name, p, len), name[len] = 0;
        if (parse(name, &v, &err)) return cli_fail(flag, err.message), -1;
        if (v < 0 || v >= 8 || seen[v]++) {
            snprintf(msg, sizeof msg, "'%s' is given twice or is no precision to compare (see --help)", name);
            return cli_fail(flag, msg), -1;
        }
        if (p[len] == 0) break;
        p += len + 1;
    }
    for (k = 0; k < 8; k++)
        if (seen[k] && n < max) out[n++] = k;
    return n;
}

/* The library's parsers, as parse_list takes them; "file" is refused: it is the file's own
   types, not a precision. */
static int parse_weights(const char *name, int *v, dintattn_error *err)
{
    dintattn_weights w;
    if (dintattn_weights_parse(name, &w, err)) return 1;
    if (w == DINTATTN_WEIGHTS_FILE) {
        snprintf(err->message, sizeof err->message, "'file' keeps the file's own types; give f32, bf16, q8 or q4");
        return 1;
    }
    *v = (int)w - 1;
    return 0;
}

static int parse_kv(const char *name, int *v, dintattn_error *err)
{
    dintattn_kv_type t;
    if (dintattn_kv_parse(name, &t, err)) return 1;
    *v = (int)t;
    return 0;
}

/* Returns 0, 1 for an error (printed), 2 for --help. */
static int parse_args(int argc, char **argv, args *a)
{
    static const char *const switches[] = {"--json", NULL};
    int i, list[N_WEIGHTS], k;
    memset(a, 0, sizeof *a);
    cli_engine_init(&a->eng);
    a->eng.prompt_flag = "-p";
    for (i = 1; i < argc; i++) {
        const char *f = argv[i], *val;
        int bad = 0;
        switch (cli_arg(argc, argv, &i, switches, &a->eng, &val)) {
        case CLI_ARG_VALUE: break;
        case CLI_ARG_SWITCH: a->json = 1; continue;
        case CLI_ARG_MODEL: continue;
        case CLI_ARG_HELP: return 2;
        default: return 1;
        }
        if (!strcmp(f, "-p") || !strcmp(f, "--prompt")) bad = a->prompt != NULL, a->prompt = val;
        else if (!strcmp(f, "-f") || !strcmp(f, "--file")) bad = a->file != NULL, a->file = val;
        else if (!strcmp(f, "--ids")) bad = a->ids != NULL, a->ids = val;
        else if (!strcmp(f, "--weights")) {
            if (a->n_weights) bad = 1;
            else if ((a->n_weights = parse_list(f, val, N_WEIGHTS, list, parse_weights)) < 0) return 1;
            else
                for (k = 0; k < a->n_weights; k++) a->weights[k] = (dintattn_weights)(list[k] + 1);
        } else if (!strcmp(f, "--kv")) {
            if (a->n_kv) bad = 1;
            else if ((a->n_kv = parse_list(f, val, N_KV, list, parse_kv)) < 0) return 1;
            else
                for (k = 0; k < a->n_kv; k++) a->kv[k] = (dintattn_kv_type)list[k];
        } else if ((bad = cli_engine_option(&a->eng, CLI_THREADS | CLI_MAP | CLI_PRECISION | CLI_KERNELS | CLI_CTX |
                                                         CLI_TOKENIZER, f, val, NULL)) < 0)
            return cli_fail("unknown option (see --help)", f);
        if (bad) {
            fprintf(stderr, "lowbit: bad value '%s' for %s (or given twice; see --help)\n", val, f);
            return 1;
        }
    }
    if (!!a->prompt + !!a->file + !!a->ids != 1)
        return cli_fail("give one text: -p TEXT, -f FILE or --ids LIST (see --help)", NULL);
    if (!a->n_weights)
        for (a->n_weights = 0; a->n_weights < N_WEIGHTS; a->n_weights++)
            a->weights[a->n_weights] = (dintattn_weights)(DINTATTN_WEIGHTS_F32 + a->n_weights);
    if (!a->n_kv)
        for (a->n_kv = 0; a->n_kv < N_KV; a->n_kv++) a->kv[a->n_kv] = (dintattn_kv_type)(DINTATTN_KV_F32 + a->n_kv);
    return cli_engine_done(&a->eng);
}

/* The bits per parameter of the model's weight matrices as held, and the fraction of their
   parameters held at precision w (from dintattn_model_tensors: the library's account). */
static int weight_bits(const dintattn_model *model, dintattn_weights w, double *bits, double *held)
{
    const long long n = dintattn_model_tensors(model, NULL, 0);
    dintattn_tensor_info *t = (dintattn_tensor_info *)malloc(sizeof *t * (size_t)(n > 0 ? n : 1));
    double params = 0, bytes = 0, at_w = 0;
    long long i;
    if (!t) return cli_fail("out of memory", NULL);
    dintattn_model_tensors(model, t, n);
    for (i = 0; i < n; i++) {
        const double p = (double)t[i].rows * (double)t[i].cols;
        if (!t[i].matrix) continue;
        params += p;
        bytes += (double)t[i].bytes;
        if (!strcmp(t[i].type, dintattn_weights_name(w))) at_w += p;
    }
    free(t);
    *bits = params > 0 ? 8 * bytes / params : NAN;
    *held = params > 0 ? at_w / params : NAN;
    return 0;
}

/* Runs ids[0..n) in windows of at most C tokens in a new session of model with cache type kv.
   With keep (the reference): row `at` of the logits (after token at, for at < n - 1) is copied to
   ref + at V. Otherwise each is compared with the reference's into r->st, and r->kv_bytes is
   set. Returns 0, or 1 (printed). */
static int run(const args *a, const dintattn_model *model, dintattn_kv_type kv, const int *ids, int n, int C, int V,
               float *ref, int keep, row *r)
{
    cli_engine eng = a->eng;
    dintattn_session *sess = NULL;
    dintattn_error err;
    const int window = lc_window_len(n, C, 0);
    float *rows = (float *)malloc(sizeof(float) * (size_t)window * (size_t)V);
    int start = 0, i, rc = 1;
    char what[64];
    eng.kv = kv;
    if (!rows) {
        cli_fail("out of memory for a window of logits", "give a smaller --ctx");
        goto done;
    }
    if (cli_session_new(&eng, model, window, &sess)) goto done;
    for (;;) {
        const int len = lc_window_len(n, C, start);
        dintattn_session_reset(sess);
        if (dintattn_prefill(sess, ids + start, len, rows, 1, &err)) {
            snprintf(what, sizeof what, "running the text (KV %s)", dintattn_kv_name(kv));
            cli_fail(what, err.message);
            goto done;
        }
        for (i = 0; i + 1 < len; i++) {
            const int at = start + i;
            if (keep) memcpy(ref + (size_t)at * V, rows + (size_t)i * V, sizeof(float) * (size_t)V);
            else lc_add(&r->st, ref + (size_t)at * V, rows + (size_t)i * V, V, at, ids[at + 1]);
        }
        if (start + len == n) break;
        start += len - 1;
    }
    if (r) r->kv_bytes = dintattn_session_kv_bytes(sess, 1);
    rc = 0;
done:
    dintattn_session_free(sess);
    free(rows);
    return rc;
}

/* A JSON number, or null for NaN and infinities (JSON has neither). */
static void json_num(srv_buf *b, const char *key, double x)
{
    srv_buf_printf(b, ", \"%s\": ", key);
    srv_buf_num(b, x);
}

static void report_json(const args *a, const char *model, const row *rows, int n_rows, int n, int C, double ppl_ref,
                        srv_buf *out)
{
    int i;
    srv_buf_str(out, "{\"model\": ");
    srv_buf_json_str(out, model, strlen(model));
    srv_buf_printf(out, ", \"n_tokens\": %d, \"n_scored\": %d, \"window\": %d, \"n_windows\": %d, \"precision\": \"%s\"",
                   n, n - 1, lc_window_len(n, C, 0), lc_n_windows(n, C), dintattn_precision_name(a->eng.precision));
    json_num(out, "ppl_reference", ppl_ref);
    srv_buf_str(out, ", \"rows\": [");
    for (i = 0; i < n_rows; i++) {
        const row *r = &rows[i];
        const double ppl = lc_ppl_run(&r->st);
        srv_buf_printf(out, "%s{\"weights\": \"%s\", \"kv\": \"%s\"", i ? ", " : "", dintattn_weights_name(r->weights),
                       dintattn_kv_name(r->kv));
        json_num(out, "weight_bits", r->w_bits);
        json_num(out, "weights_held", r->held);
        json_num(out, "kv_bytes_per_token", r->kv_bytes);
        json_num(out, "kl_mean", lc_kl_mean(&r->st));
        json_num(out, "kl_max", r->st.max_kl);
        srv_buf_printf(out, ", \"kl_max_at\": %d, \"top1_same\": %lld", r->st.max_at, r->st.n_same_top);
        json_num(out, "top1_agreement", lc_top1(&r->st));
        json_num(out, "logit_rms_diff", lc_rms(&r->st));
        json_num(out, "ppl", ppl);
        json_num(out, "ppl_change", ppl - ppl_ref);
        json_num(out, "ppl_change_rel", (ppl - ppl_ref) / ppl_ref);
        srv_buf_str(out, "}");
    }
    srv_buf_str(out, "]}\n");
}

static void report_table(const args *a, const char *model, const row *rows, int n_rows, int n, int C, double ppl_ref,
                         srv_buf *out)
{
    int i;
    srv_buf_printf(out, "%s: %d tokens, %d scored, %d window%s of up to %d | precision %s | reference f32/f32 "
                        "perplexity %.4f\n", model, n, n - 1, lc_n_windows(n, C), lc_n_windows(n, C) == 1 ? "" : "s",
                   lc_window_len(n, C, 0), dintattn_precision_name(a->eng.precision), ppl_ref);
    srv_buf_printf(out, "%-7s %-4s %6s %5s %9s %11s %11s %7s %10s %10s %8s\n", "weights", "kv", "w bits", "held",
                   "KV B/tok", "KL mean", "KL max", "top-1", "ppl", "change", "change%");
    for (i = 0; i < n_rows; i++) {
        const row *r = &rows[i];
        const double ppl = lc_ppl_run(&r->st);
        srv_buf_printf(out, "%-7s %-4s %6.2f %5.3f %9.0f %11.4g %11.4g %7.4f %10.4f %+10.4f %+7.3f%%\n",
                       dintattn_weights_name(r->weights), dintattn_kv_name(r->kv), r->w_bits, r->held, r->kv_bytes,
                       lc_kl_mean(&r->st), r->st.max_kl, lc_top1(&r->st), ppl, ppl - ppl_ref,
                       100 * (ppl - ppl_ref) / ppl_ref);
    }
}

/* Loads the model with weights w, printing why not. */
static int load(const args *a, const char *path, dintattn_weights w, dintattn_model **model)
{
    dintattn_error err;
    if (cli_load_model(path, w, a->eng.map, a->eng.threads, model, &err)) return cli_model_failed(path, &err, "-p");
    return 0;
}

int main(int argc, char **argv)
{
    args a;
    dintattn_model *model = NULL;
    dintattn_tokenizer *tok = NULL;
    const char *path;
    float *ref = NULL;
    int *ids = NULL, n, V, C, max_ctx, rc, w, k, n_rows = 0;
    row rows[N_WEIGHTS * N_KV];
    lc_stats self;
    srv_buf out;
    char msg[256];
    double ref_bytes;
    argv = cli_aliases(&argc, argv);

    rc = parse_args(argc, argv, &a);
    if (rc == 2) {
        cli_usage(stdout, usage, 20), fputs(usage_more, stdout);
        return 0;
    }
    if (rc) return 1;
    rc = 1;
    memset(&out, 0, sizeof out);
    memset(rows, 0, sizeof rows);
    memset(&self, 0, sizeof self);
    path = cli_model_path(a.eng.model, argv[0]);

    /* the reference: f32 weights (a bf16 or f16 file widened exactly), an f32 cache */
    if (load(&a, path, DINTATTN_WEIGHTS_F32, &model)) return 1;
    V = dintattn_model_config(model)->vocab_size;
    max_ctx = dintattn_model_config(model)->max_seq_len;
    if (cli_load_tokenizer(&a.eng, model, a.ids != NULL, &tok)) goto done;
    n = cli_text_ids(a.ids, a.file, a.prompt, tok, V, &ids);
    dintattn_tokenizer_free(tok); /* only the ids are needed from here on */
    if (n < 0) goto done;
    if (a.eng.ctx > max_ctx) {
        snprintf(msg, sizeof msg, "%d is more than the model's context of %d tokens", a.eng.ctx, max_ctx);
        cli_fail("--ctx", msg);
        goto done;
    }
    C = a.eng.ctx ? a.eng.ctx : max_ctx;
    if (n < 2) {
        cli_fail("the text is too short", "it gives one token, and the first token is context only: give 2 or more");
        goto done;
    }
    if (n > C && C < 2) {
        cli_fail("--ctx 1 cannot run a text of more than one token", "a window needs 2 tokens");
        goto done;
    }
    ref_bytes = 4.0 * (n - 1) * V;
    if (ref_bytes > (double)SIZE_MAX / 2 || !(ref = (float *)malloc((size_t)ref_bytes))) {
        snprintf(msg, sizeof msg, "%.0f MiB for the reference's logits (%d tokens x %d vocabulary): give a shorter text",
                 ref_bytes / 1048576, n - 1, V);
        cli_fail("out of memory", msg);
        goto done;
    }
    if (run(&a, model, DINTATTN_KV_F32, ids, n, C, V, ref, 1, NULL)) goto done;

    /* each weight precision in turn, one model in memory at a time (f32 first: the one loaded) */
    for (w = 0; w < a.n_weights; w++) {
        double bits, held;
        if (a.weights[w] != DINTATTN_WEIGHTS_F32) {
            dintattn_model_free(model);
            model = NULL;
            if (load(&a, path, a.weights[w], &model)) goto done;
        }
        if (weight_bits(model, a.weights[w], &bits, &held)) goto done;
        for (k = 0; k < a.n_kv; k++) {
            row *r = &rows[n_rows++];
            r->weights = a.weights[w], r->kv = a.kv[k], r->w_bits = bits, r->held = held;
            if (run(&a, model, a.kv[k], ids, n, C, V, ref, 0, r)) goto done;
            fprintf(stderr, "lowbit: weights %s, KV %s: done\n", dintattn_weights_name(r->weights), dintattn_kv_name(r->kv));
        }
    }
    /* the reference's perplexity, from its own rows by the same arithmetic as every row's */
    for (k = 0; k + 1 < n; k++) lc_add(&self, ref + (size_t)k * V, ref + (size_t)k * V, V, k, ids[k + 1]);
    if (a.json) report_json(&a, path, rows, n_rows, n, C, lc_ppl_ref(&self), &out);
    else report_table(&a, path, rows, n_rows, n, C, lc_ppl_ref(&self), &out);
    if (out.nomem) cli_fail("out of memory for the output", NULL);
    else if ((out.len && fwrite(out.p, 1, out.len, stdout) != out.len) || fflush(stdout))
        cli_fail("cannot write to standard output", NULL);
    else rc = 0;
done:
    srv_buf_free(&out);
    free(ref);
    free(ids);
    dintattn_model_free(model);
    return rc;
}
