/* activations: how large a model's activations get, per layer -- the DIFF paper's outlier
   measure (its Table 5: the largest activation magnitudes against the median) -- for the attention
   logits of each map (A1's, and A2's for the differential families), the FFN's input and the
   residual stream after each layer: top-1 and top-k magnitudes, the median, their ratio and the
   kurtosis over a text, as a table, one JSON object, and an SVG figure; several models side by
   side.

       examples/activations MODEL [MODEL ...] (-p TEXT | -f FILE | --ids 1,2,3) [--top-k K] [--json]
                            [--svg OUT.svg] [--threads T] [--weights W] [--map M] [--precision P | --fast]
                            [--kernels K] [--kv T] [--tokenizer FILE]

   The numbers are the library's (dintattn_session_act_start, dintattn_session_act_stats; what each
   is over: docs/computing.md, "Activation statistics"), collected during one prefill of the text.
   Texts are encoded as examples/attention encodes them (textgen.h's tg_encode: the model's BOS
   first when it has one), by each model's own tokenizer. Exits 0 on success, 1 with one line on
   stderr on any error. */
#define _POSIX_C_SOURCE 200809L
#define DINTATTN_IMPLEMENTATION
#include "../dintattn.h"
#include "strbuf.h"  /* srv_buf; textgen.h needs it */
#include "textgen.h" /* tg_encode */
#define CLI_PROG "activations"
#include "cli.h" /* cli_engine, cli_text_ids, cli_fail: what the examples share */

#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_MODELS 8

static const char *usage =
    "usage: activations MODEL [MODEL ...] (-p TEXT | -f FILE | --ids 1,2,3) [options]\n"
    "  MODEL ...\tup to 8 model files, run on the same text and shown side by side\n"
    "  -p, --prompt TEXT\tthe text (encoded with each model's BOS first, if it has one)\n"
    "  -f, --file FILE\tthe text of FILE (- : standard input)\n"
    "  --ids LIST\ttoken ids, comma-separated, used as they are (no BOS added; a model\n"
    "\twithout a tokenizer is fine)\n"
    "  --top-k K\tthe largest magnitudes kept per layer and activation (1 to 65536, default 10)\n"
    "  --json\tone JSON object instead of the table: every statistic and the top-k magnitudes\n"
    "  --svg OUT.svg\talso write a figure: per activation and layer, each model's top-1, k-th\n"
    "\tlargest and median magnitude on a log scale, and the kurtosis\n"
    "  --threads T\tthreads for matrix rows (" CLI_THREADS_RANGE "; attention runs on the calling thread\n"
    "\twhile statistics are collected)\n"
    CLI_ENGINE_USAGE
    CLI_TOKENIZER_USAGE
    "  -h, --help\tthis text\n"
    "Per layer, over the text's tokens (docs/computing.md, \"Activation statistics\"):\n"
    "  logits1  attention logits q1.k1/sqrt(d) of every head over the keys it sees (the causal\n"
    "           mask left out): standard attention's single map, A1 of the differential ones\n"
    "  logits2  A2's logits q2.k2/sqrt(d), each noise map once (none for standard attention)\n"
    "  ffn_in   the FFN's input, RMSNorm(x) * ffn_norm\n"
    "  hidden   the residual stream after the layer\n"
    "top1 and topk are the largest and the k-th largest |x|, median the median |x| (within 2^-8,\n"
    "relative), ratio top1 / median, kurtosis m4 / m2^2 of x (3 for a Gaussian).\n";

static const char *const kind_titles[DINTATTN_ACT_KINDS] = {"attention logits of A1 (standard attention: its one map)",
                                                            "attention logits of A2 (the noise map)",
                                                            "FFN input", "hidden state (after the layer)"};

typedef struct args {
    cli_engine eng;
    const char *models[MAX_MODELS];
    int n_models;
    const char *prompt, *file, *ids, *svg;
    int top_k, json;
} args;

/* One model's results. */
typedef struct result {
    const char *path;
    dintattn_attention attention;
    int L, H, D, n_tokens, k;
    dintattn_act_stats *st; /* [L][DINTATTN_ACT_KINDS] */
    float *top;             /* [L][DINTATTN_ACT_KINDS][k] */
} result;

/* Returns 0, 1 for an error (printed), 2 for --help. */
static int parse_args(int argc, char **argv, args *a)
{
    static const char *const switches[] = {"--json", NULL};
    int i;
    memset(a, 0, sizeof *a);
    cli_engine_init(&a->eng);
    a->top_k = 10;
    for (i = 1; i < argc; i++) {
        const char *f = argv[i], *val;
        int bad = 0;
        if (f[0] != '-' && f[0]) { /* a MODEL: several are fine here */
            if (a->n_models == MAX_MODELS) return cli_fail("more than 8 MODELs given", f);
            a->models[a->n_models++] = f;
            continue;
        }
        switch (cli_arg(argc, argv, &i, switches, &a->eng, &val)) {
        case CLI_ARG_VALUE: break;
        case CLI_ARG_SWITCH: a->json = 1; continue;
        case CLI_ARG_HELP: return 2;
        default: return 1;
        }
        if (!strcmp(f, "-p") || !strcmp(f, "--prompt")) bad = a->prompt != NULL, a->prompt = val;
        else if (!strcmp(f, "-f") || !strcmp(f, "--file")) bad = a->file != NULL, a->file = val;
        else if (!strcmp(f, "--ids")) bad = a->ids != NULL, a->ids = val;
        else if (!strcmp(f, "--svg")) bad = a->svg != NULL || !*val, a->svg = val;
        else if (!strcmp(f, "--top-k")) bad = cli_parse_int(val, 1, 65536, &a->top_k);
        else if ((bad = cli_engine_option(&a->eng, CLI_ENGINE | CLI_TOKENIZER, f, val, NULL)) < 0)
            return cli_fail("unknown option (see --help)", f);
        if (bad) {
            fprintf(stderr, "activations: bad value '%s' for %s (or given twice; see --help)\n", val, f);
            return 1;
        }
    }
    if (!a->n_models) return cli_fail("no MODEL given (see --help)", NULL);
    if (!!a->prompt + !!a->file + !!a->ids != 1) return cli_fail("give one text: -p TEXT, -f FILE or --ids LIST (see --help)", NULL);
    return cli_engine_done(&a->eng);
}

/* Runs the text through one model with statistics collected, into *r. The model and its session
   are freed before returning, so that several large models need not fit at once. Returns 0, or -1
   (printed). */
static int run_model(const args *a, const char *path, const char *text, size_t text_len, result *r)
{
    cli_engine eng = a->eng;
    dintattn_model *model = NULL;
    dintattn_tokenizer *tok = NULL;
    dintattn_session *sess = NULL;
    const dintattn_config *cfg;
    dintattn_act_options ao;
    dintattn_error err;
    char msg[256];
    int *ids = NULL, n, l, kind, rc = -1;
    memset(r, 0, sizeof *r);
    r->path = path;
    eng.model = path;
    if (cli_load_model(path, eng.weights, eng.map, eng.threads, &model, &err)) return cli_model_failed(path, &err, "-p"), -1;
    cfg = dintattn_model_config(model);
    r->attention = cfg->attention, r->L = cfg->n_layers, r->H = cfg->n_heads, r->D = cfg->dim, r->k = a->top_k;
    /* --ids needs no tokenizer; a text read once (-f -) is encoded by each model */
    if (cli_load_tokenizer(&eng, model, a->ids != NULL, &tok)) goto done;
    if (a->ids) {
        n = cli_text_ids(a->ids, NULL, "", tok, cfg->vocab_size, &ids);
    } else {
        n = tg_encode(tok, text, text_len, &ids, &err);
        if (n < 0) cli_fail("cannot encode the text", err.message);
    }
    if (n < 0) goto done;
    if (n == 0) {
        cli_fail(a->file ? a->file : a->ids ? "--ids" : "-p", "the text encodes to no tokens");
        goto done;
    }
    if (n > cfg->max_seq_len) {
        snprintf(msg, sizeof msg, "%d tokens, more than %s's context of %d", n, path, cfg->max_seq_len);
        cli_fail("the text is too long", msg);
        goto done;
    }
    r->n_tokens = n;
    r->st = (dintattn_act_stats *)calloc((size_t)r->L * DINTATTN_ACT_KINDS, sizeof *r->st);
    r->top = (float *)calloc((size_t)r->L * DINTATTN_ACT_KINDS * (size_t)r->k, sizeof(float));
    if (!r->st || !r->top) {
        cli_fail("out of memory for the statistics", NULL);
        goto done;
    }
    if (cli_session_new(&eng, model, n, &sess)) goto done;
    memset(&ao, 0, sizeof ao);
    ao.top_k = a->top_k;
    if (dintattn_session_act_start(sess, &ao, &err) || dintattn_prefill(sess, ids, n, NULL, 0, &err)) {
        cli_fail(path, err.message);
        goto done;
    }
    for (l = 0; l < r->L; l++)
        for (kind = 0; kind < DINTATTN_ACT_KINDS; kind++) {
            const size_t at = (size_t)l * DINTATTN_ACT_KINDS + (size_t)kind;
            if (dintattn_session_act_stats(sess, l, (dintattn_act_kind)kind, &r->st[at], r->top + at * (size_t)r->k, r->k,
                                           &err)) {
                cli_fail(path, err.message);
                goto done;
            }
        }
    rc = 0;
done:
    free(ids);
    dintattn_session_free(sess);
    dintattn_tokenizer_free(tok);
    dintattn_model_free(model);
    return rc;
}

static const char *family(dintattn_attention at)
{
    return at == DINTATTN_ATTN_DINT ? "dint" : at == DINTATTN_ATTN_DIFF ? "diff" : "standard";
}

static const char *base_name(const char *path) { return strrchr(path, '/') ? strrchr(path, '/') + 1 : path; }

/* Whether a model has activations of this kind (standard attention has no A2) */
static int has_kind(const result *r, int kind) { return kind != DINTATTN_ACT_LOGITS2 || r->attention != DINTATTN_ATTN_STANDARD; }


/* --json: {"top_k": K, "models": [{"model", "attention", "n_layers", "n_heads", "dim", "n_tokens", "layers": [{"layer",
   KIND: {"count", "nonfinite", "top1", "topk", "median", "ratio", "mean", "std", "kurtosis", "top"}
   or null}]}]}; numbers that are not finite (a ratio over a zero median, the kurtosis of equal
   values) are null. */
static void write_json(srv_buf *b, const result *rs, int n, int top_k)
{
    int m, l, kind, i;
    srv_buf_printf(b, "{\"top_k\": %d, \"models\": [", top_k);
    for (m = 0; m < n; m++) {
        const result *r = &rs[m];
        srv_buf_str(b, m ? ",\n{\"model\": " : "\n{\"model\": ");
        srv_buf_json_str(b, r->path, strlen(r->path));
        srv_buf_printf(b, ", \"attention\": \"%s\", \"n_layers\": %d, \"n_heads\": %d, \"dim\": %d, \"n_tokens\": %d, "
                          "\"layers\": [",
                       family(r->attention), r->L, r->H, r->D, r->n_tokens);
        for (l = 0; l < r->L; l++) {
            srv_buf_printf(b, "%s\n {\"layer\": %d", l ? "," : "", l);
            for (kind = 0; kind < DINTATTN_ACT_KINDS; kind++) {
                const size_t at = (size_t)l * DINTATTN_ACT_KINDS + (size_t)kind;
                const dintattn_act_stats *s = &r->st[at];
                srv_buf_printf(b, ", \"%s\": ", dintattn_act_kind_name((dintattn_act_kind)kind));
                if (!has_kind(r, kind)) {
                    srv_buf_str(b, "null");
                    continue;
                }
                srv_buf_printf(b, "{\"count\": %lld, \"nonfinite\": %lld, \"top1\": ", s->count, s->nonfinite);
                srv_buf_num(b, s->top1);
                srv_buf_str(b, ", \"topk\": "), srv_buf_num(b, s->topk);
                srv_buf_str(b, ", \"median\": "), srv_buf_num(b, s->median);
                srv_buf_str(b, ", \"ratio\": "), srv_buf_num(b, s->ratio);
                srv_buf_str(b, ", \"mean\": "), srv_buf_num(b, s->mean);
                srv_buf_str(b, ", \"std\": "), srv_buf_num(b, s->std);
                srv_buf_str(b, ", \"kurtosis\": "), srv_buf_num(b, s->kurtosis);
                srv_buf_str(b, ", \"top\": [");
                for (i = 0; i < s->k; i++) srv_buf_printf(b, "%s%.9g", i ? ", " : "", (double)r->top[at * (size_t)r->k + i]);
                srv_buf_str(b, "]}");
            }
            srv_buf_str(b, "}");
        }
        srv_buf_str(b, "]}");
    }
    srv_buf_str(b, "\n]}\n");
}

/* The table: per model a heading, then a line per layer and activation. */
static void write_table(srv_buf *b, const result *rs, int n, int top_k)
{
    int m, l, kind;
    for (m = 0; m < n; m++) {
        const result *r = &rs[m];
        srv_buf_printf(b, "%s%s: %s attention, %d layers; %d tokens; |x| = magnitude, k = %d\n", m ? "\n" : "", r->path,
                       family(r->attention), r->L, r->n_tokens, top_k);
        srv_buf_printf(b, "%5s %-8s %12s %11s %11s %11s %11s %10s\n", "layer", "kind", "count", "top1", "topk", "median",
                       "top1/median", "kurtosis");
        for (l = 0; l < r->L; l++)
            for (kind = 0; kind < DINTATTN_ACT_KINDS; kind++) {
                const dintattn_act_stats *s = &r->st[(size_t)l * DINTATTN_ACT_KINDS + (size_t)kind];
                if (!has_kind(r, kind)) continue;
                srv_buf_printf(b, "%5d %-8s %12lld %11.5g %11.5g %11.5g %11.5g %10.4g\n", l,
                               dintattn_act_kind_name((dintattn_act_kind)kind), s->count, s->top1, s->topk, s->median,
                               s->ratio, s->kurtosis);
                if (s->nonfinite) srv_buf_printf(b, "%5s %-8s %12lld NaN or infinite, left out\n", "", "", s->nonfinite);
            }
    }
}

/* --- the SVG figure ---------------------------------------------------------------------------- */

static const char *const colors[MAX_MODELS] = {"#1f77b4", "#d62728", "#2ca02c", "#9467bd",
                                               "#ff7f0e", "#8c564b", "#e377c2", "#17becf"};

/* A decade's tick label: 0.001, 0.01, ... 1000, else 1e-4, 1e4 */
static void decade_label(srv_buf *b, int e)
{
    if (e >= 0 && e <= 3) srv_buf_printf(b, "%.0f", pow(10, e));
    else if (e < 0 && e >= -3) srv_buf_printf(b, "%.*f", -e, pow(10, e));
    else srv_buf_printf(b, "1e%d", e);
}

/* A panel's frame: axes, the y scale in decades [e0, e1] with gridlines and labels, the y title,
   the layers on x. */
static void panel_axes(srv_buf *b, double x0, double y0, double w, double h, int e0, int e1, int L, const char *title,
                       const char *ytitle)
{
    const int step = e1 - e0 > 8 ? 2 : 1;
    int e, l;
    srv_buf_printf(b, "<text x=\"%.1f\" y=\"%.1f\" font-weight=\"bold\">%s</text>\n", x0, y0 - 8, title);
    srv_buf_printf(b, "<rect x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\" fill=\"none\" stroke=\"#444\"/>\n", x0, y0,
                   w, h);
    for (e = e0; e <= e1; e += step) {
        const double y = y0 + h - (e - e0) * h / (e1 - e0);
        srv_buf_printf(b, "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"#ddd\"/>"
                          "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"end\" data-decade=\"%d\">",
                       x0, y, x0 + w, y, x0 - 5, y + 4, e);
        decade_label(b, e);
        srv_buf_str(b, "</text>\n");
    }
    srv_buf_printf(b, "<text transform=\"translate(%.1f,%.1f) rotate(-90)\" text-anchor=\"middle\">%s</text>\n", x0 - 48,
                   y0 + h / 2, ytitle);
    for (l = 0; l < L; l++)
        if (L <= 16 || l % ((L + 15) / 16) == 0)
            srv_buf_printf(b, "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"middle\">%d</text>\n", x0 + (l + 0.5) * w / L,
                           y0 + h + 14, l);
    srv_buf_printf(b, "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"middle\">layer</text>\n", x0 + w / 2, y0 + h + 30);
}

/* Decades [*e0, *e1] covering log10 of the positive values among v[0..n) (at least one decade) */
static void decades(const double *v, int n, int *e0, int *e1)
{
    double lo = HUGE_VAL, hi = -HUGE_VAL;
    int i;
    for (i = 0; i < n; i++)
        if (v[i] > 0 && isfinite(v[i])) {
            if (log10(v[i]) < lo) lo = log10(v[i]);
            if (log10(v[i]) > hi) hi = log10(v[i]);
        }
    if (lo > hi) lo = hi = 0;
    *e0 = (int)floor(lo), *e1 = (int)ceil(hi);
    if (*e1 <= *e0) *e1 = *e0 + 1;
}

/* The figure: a row per activation kind that some model has; on the left each model's top-1
   (triangle), k-th largest (bar) and median (circle) magnitude per layer, joined by a line whose
   length in decades is log10 of the ratio; on the right the kurtosis, with the Gaussian's 3. Every
   mark carries data-model, data-layer, data-kind, data-stat and data-value (tests/activations.sh
   reads them back against the JSON). */
static void svg_write(srv_buf *b, const result *rs, int n, int top_k, int n_tokens_same)
{
    const double ph = 190, left = 80, gap = 110, top0 = 100 + 16 * n, row_h = ph + 80;
    int kinds[DINTATTN_ACT_KINDS], n_kinds = 0, kind, m, l, Lmax = 1, i, k;
    double width, height, pw;
    for (kind = 0; kind < DINTATTN_ACT_KINDS; kind++) {
        int any = 0;
        for (m = 0; m < n; m++) any |= has_kind(&rs[m], kind);
        if (any) kinds[n_kinds++] = kind;
    }
    for (m = 0; m < n; m++) Lmax = rs[m].L > Lmax ? rs[m].L : Lmax;
    pw = 10.0 * Lmax * (n + 1) > 420 ? 10.0 * Lmax * (n + 1) : 420; /* 10 pixels a mark at least */
    width = left + pw + gap + pw + 40, height = top0 + n_kinds * row_h + 20;
    srv_buf_printf(b, "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
                      "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%.0f\" height=\"%.0f\" viewBox=\"0 0 %.0f %.0f\" "
                      "font-family=\"Helvetica, Arial, sans-serif\" font-size=\"11\" data-top-k=\"%d\" data-models=\"%d\">\n",
                   width, height, width, height, top_k, n);
    srv_buf_str(b, "<rect width=\"100%\" height=\"100%\" fill=\"white\"/>\n");
    srv_buf_printf(b, "<text x=\"20\" y=\"24\" font-size=\"15\" font-weight=\"bold\">Activation magnitudes per layer "
                      "over a text of %d tokens%s</text>\n",
                   rs[0].n_tokens, n_tokens_same ? "" : " (per model's tokenizer: see the legend)");
    srv_buf_printf(b, "<text x=\"20\" y=\"42\">Left: the magnitude |x| on a log scale, per layer and model; the line "
                      "from the median up to the top-1 spans log10(top-1 / median) decades. Right: the kurtosis of x "
                      "(3 for a Gaussian).</text>\n");
    /* the key: the marks, then a color per model */
    srv_buf_printf(b, "<g transform=\"translate(20,58)\"><path d=\"M5 -9l-4.5 7h9z\" fill=\"#444\"/><text x=\"14\" "
                      "y=\"-2\">top-1 (the largest |x|)</text><line x1=\"160\" y1=\"-5\" x2=\"170\" y2=\"-5\" stroke=\"#444\" "
                      "stroke-width=\"2.5\"/><text x=\"176\" y=\"-2\">top-k (the k-th largest, k = %d)</text><circle cx=\"375\" "
                      "cy=\"-5\" r=\"3.5\" fill=\"white\" stroke=\"#444\" stroke-width=\"1.5\"/><text x=\"384\" y=\"-2\">median "
                      "|x|</text><circle cx=\"465\" cy=\"-5\" r=\"3.5\" fill=\"#444\"/><text x=\"474\" y=\"-2\">kurtosis</text></g>\n",
                   top_k);
    for (m = 0; m < n; m++) {
        const double x = 20, y = 80 + m * 16;
        const char *name = base_name(rs[m].path);
        srv_buf_printf(b, "<rect x=\"%.1f\" y=\"%.1f\" width=\"12\" height=\"10\" fill=\"%s\"/><text x=\"%.1f\" y=\"%.1f\" "
                          "data-legend=\"%d\">",
                       x, y - 9, colors[m], x + 16, y, m);
        for (i = 0; name[i] && i < 60; i++) { /* the file name, XML-escaped */
            const char c = name[i];
            if (c == '<') srv_buf_str(b, "&lt;");
            else if (c == '>') srv_buf_str(b, "&gt;");
            else if (c == '&') srv_buf_str(b, "&amp;");
            else if (c == '"') srv_buf_str(b, "&quot;");
            else if ((unsigned char)c >= 0x20 && (unsigned char)c < 0x7f) srv_buf_add(b, &c, 1);
            else srv_buf_str(b, "?");
        }
        srv_buf_printf(b, "%s (%s, %d tokens)</text>\n", name[i] ? "..." : "", family(rs[m].attention), rs[m].n_tokens);
    }
    for (k = 0; k < n_kinds; k++) {
        const double y0 = top0 + k * row_h, xl = left, xr = left + pw + gap;
        double *mags = (double *)malloc(sizeof(double) * (size_t)(3 * n * Lmax + 1)), *kur;
        int nv = 0, nk = 0, e0, e1, q0, q1;
        kind = kinds[k];
        if (!mags) {
            b->nomem = 1;
            return;
        }
        kur = mags + 2 * n * Lmax;
        for (m = 0; m < n; m++)
            for (l = 0; l < rs[m].L && has_kind(&rs[m], kind); l++) {
                const dintattn_act_stats *s = &rs[m].st[(size_t)l * DINTATTN_ACT_KINDS + (size_t)kind];
                mags[nv++] = s->top1, mags[nv++] = s->median > 0 ? s->median : s->topk;
                kur[nk++] = s->kurtosis;
            }
        decades(mags, nv, &e0, &e1);
        decades(kur, nk, &q0, &q1);
        if (q0 > 0) q0 = 0; /* from 1, the least a kurtosis can be */
        panel_axes(b, xl, y0, pw, ph, e0, e1, Lmax, kind_titles[kind], "|x| (log scale)");
        panel_axes(b, xr, y0, pw, ph, q0, q1, Lmax, "kurtosis", "kurtosis (log scale)");
        if (log10(3) >= q0 && log10(3) <= q1) {
            const double y = y0 + ph - (log10(3) - q0) * ph / (q1 - q0);
            srv_buf_printf(b, "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"#888\" stroke-dasharray=\"4 3\"/>"
                              "<text x=\"%.1f\" y=\"%.1f\" fill=\"#666\">3</text>\n",
                           xr, y, xr + pw, y, xr + pw + 3, y + 4);
        }
        for (m = 0; m < n; m++) {
            const char *c = colors[m];
            if (!has_kind(&rs[m], kind)) continue;
            srv_buf_printf(b, "<g data-model=\"%d\" data-kind=\"%s\">\n", m, dintattn_act_kind_name((dintattn_act_kind)kind));
            for (l = 0; l < rs[m].L; l++) {
                const dintattn_act_stats *s = &rs[m].st[(size_t)l * DINTATTN_ACT_KINDS + (size_t)kind];
                const double x = xl + (l + (m + 1.0) / (n + 1)) * pw / Lmax, xk = xr + (l + (m + 1.0) / (n + 1)) * pw / Lmax;
                const double yt = y0 + ph - (log10(s->top1) - e0) * ph / (e1 - e0);
                const double yk = y0 + ph - (log10(s->topk) - e0) * ph / (e1 - e0);
                const double ym = s->median > 0 ? y0 + ph - (log10(s->median) - e0) * ph / (e1 - e0) : y0 + ph;
                if (!(s->top1 > 0)) continue;
                srv_buf_printf(b, "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"%s\" stroke-width=\"1.5\"/>\n",
                               x, yt, x, ym, c);
                srv_buf_printf(b, "<path d=\"M%.1f %.1fl-4.5 7h9z\" fill=\"%s\" data-layer=\"%d\" data-stat=\"top1\" "
                                  "data-value=\"%.9g\"/>\n",
                               x, yt - 4, c, l, s->top1);
                srv_buf_printf(b, "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"%s\" stroke-width=\"2.5\" "
                                  "data-layer=\"%d\" data-stat=\"topk\" data-value=\"%.9g\"/>\n",
                               x - 5, yk, x + 5, yk, c, l, s->topk);
                if (s->median > 0)
                    srv_buf_printf(b, "<circle cx=\"%.1f\" cy=\"%.1f\" r=\"3.5\" fill=\"white\" stroke=\"%s\" stroke-width=\"1.5\" "
                                      "data-layer=\"%d\" data-stat=\"median\" data-value=\"%.9g\"/>\n",
                                   x, ym, c, l, s->median);
                if (s->kurtosis > 0 && isfinite(s->kurtosis))
                    srv_buf_printf(b, "<circle cx=\"%.1f\" cy=\"%.1f\" r=\"3.5\" fill=\"%s\" data-layer=\"%d\" "
                                      "data-stat=\"kurtosis\" data-value=\"%.9g\"/>\n",
                                   xk, y0 + ph - (log10(s->kurtosis) - q0) * ph / (q1 - q0), c, l, s->kurtosis);
            }
            srv_buf_str(b, "</g>\n");
        }
        free(mags);
    }
    srv_buf_str(b, "</svg>\n");
}

int main(int argc, char **argv)
{
    args a;
    result rs[MAX_MODELS];
    srv_buf out;
    char *text = NULL;
    size_t text_len = 0;
    int m, n = 0, rc = 1, same = 1;
    FILE *svg = NULL;
    argv = cli_aliases(&argc, argv);
    memset(&out, 0, sizeof out);
    switch (parse_args(argc, argv, &a)) {
    case 0: break;
    case 2: cli_usage(stdout, usage, 22); return 0;
    default: return 1;
    }
    if (a.file && !(text = cli_read_all(a.file, &text_len))) return cli_fail(a.file, strerror(errno));
    if (a.prompt) text_len = strlen(a.prompt);
    if ((a.file || a.prompt) && text_len == 0) {
        free(text);
        return cli_fail(a.file ? a.file : "-p", "the text is empty");
    }
    if (a.svg && !(svg = fopen(a.svg, "wb"))) { /* a path that cannot be written fails before the models run */
        free(text);
        return cli_fail(a.svg, strerror(errno));
    }
    for (m = 0; m < a.n_models; m++, n++)
        if (run_model(&a, a.models[m], text ? text : a.prompt, text_len, &rs[m])) break;
    if (n == a.n_models) {
        for (m = 1; m < n; m++) same &= rs[m].n_tokens == rs[0].n_tokens;
        if (a.json) write_json(&out, rs, n, a.top_k);
        else write_table(&out, rs, n, a.top_k);
        if (!cli_flush(&out, stdout, "standard output")) {
            rc = 0;
            if (svg) {
                svg_write(&out, rs, n, a.top_k, same);
                rc = cli_flush(&out, svg, a.svg);
                if (fclose(svg) && !rc) rc = cli_fail(a.svg, strerror(errno));
                svg = NULL;
            }
        }
    }
    if (svg || (rc && a.svg)) {
        if (svg) fclose(svg);
        remove(a.svg); /* no half-written figure */
    }
    for (m = 0; m <= n && m < a.n_models; m++) free(rs[m].st), free(rs[m].top);
    srv_buf_free(&out);
    free(text);
    return rc;
}
