/* attention: where a differential-attention model looks -- per layer and head, the attention
   weights W of chosen query positions summarised (mass on key spans such as an answer's tokens,
   "attention to the answer", vs the rest, "attention noise"; negative weights; row sum; entropy;
   lambda), as a table, one JSON object, and a self-contained SVG figure.

       examples/attention MODEL (-p TEXT | -f FILE | --ids 1,2,3) [--span A:B ...] [--span-text STR ...]
                          [--layers L,L-L] [--heads H,H-H] [--pos P | --pos A:B] [--json]
                          [--svg OUT.svg [--svg-layer L] [--svg-metric M]]
                          [--threads T] [--weights W] [--map M] [--precision P | --fast] [--kernels K] [--kv T] [--tokenizer FILE]

   The rows come from dintattn_session_inspect (A1, A2, lambda, DINT's I and W of each chosen
   layer, head and query position, during one prefill of the text up to the last chosen position)
   and are summarised by dintattn_attn_stats_of, then averaged over the chosen query positions.
   Texts are encoded as examples/generate and examples/score encode them (textgen.h's tg_encode:
   the model's BOS first when it has one).
   Exits 0 on success, 1 with one line on stderr on any error. */
#define _POSIX_C_SOURCE 200809L
#define DINTATTN_IMPLEMENTATION
#include "../dintattn.h"
#include "strbuf.h"      /* srv_buf, srv_buf_json_str, srv_utf8_char; textgen.h needs it */
#include "textgen.h"     /* tg_encode */
#define CLI_PROG "attention"
#include "cli.h" /* cli_engine, cli_text_ids, cli_fail: what the examples share */

#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_SPANS 64

static const char *usage =
    "usage: attention MODEL (-p TEXT | -f FILE | --ids 1,2,3) [options]\n"
    "  -p, --prompt TEXT   the text (encoded with the model's BOS first, if it has one)\n"
    "  -f, --file FILE     the text of FILE (- : standard input)\n"
    "  --ids LIST          token ids, comma-separated, used as they are (no BOS added; a model\n"
    "                      without a tokenizer is fine)\n"
    "  --span A:B          key tokens [A, B) (token indices, 0 = the first token, BOS included):\n"
    "                      their attention mass is \"span\" (attention to the answer), the rest\n"
    "                      \"rest\" (attention noise); may be given up to 64 times\n"
    "  --span-text STR     the tokens of the first occurrence of STR's bytes in the text, found\n"
    "                      in the concatenated bytes of the text's tokens (special tokens such as\n"
    "                      BOS count as no bytes): every token overlapping the match is in the span\n"
    "  --layers LIST       layers to show, e.g. 0,2-4 (default: all)\n"
    "  --heads LIST        heads to show, e.g. 0-1 (default: all)\n"
    "  --pos P | A:B       query position P, or positions [A, B), averaged over (default: the last token)\n"
    "  --json              one JSON object instead of the table: every number and the token strings,\n"
    "                      and each shown head's rows (W, A1, A2, I) at the last query position\n"
    "  --svg OUT.svg       also write a figure: a layers x heads heatmap of one metric, and per head\n"
    "                      of one layer the rows of the last query position over the tokens\n"
    "  --svg-layer L       the layer whose rows the figure draws (default: the last shown)\n"
    "  --svg-metric M      the heatmap's metric: span, rest, sum, neg_sum, neg_share, entropy or\n"
    "                      lambda (default: span with --span, else neg_share)\n"
    "  --threads T         threads for matrix rows (" CLI_THREADS_RANGE "; attention runs on the calling thread\n"
    "                      while rows are inspected)\n"
    CLI_ENGINE_USAGE
    "  --tokenizer FILE    a tokenizer or tiktoken rank file instead of the model's own\n"
    "  -h, --help          this text\n"
    "Metrics of a row w over its keys 0..pos (dintattn_attn_stats_of), averaged over the query\n"
    "positions: sum (1 for standard and DINT rows), neg_sum (the sum of the negative weights),\n"
    "neg_share (the fraction of keys with a negative weight), entropy (nats, of |w| / sum |w|),\n"
    "span (the mass on the --span keys; spans clip to the row's keys) and rest (sum - span);\n"
    "lambda is the rows' mean lambda (0 for standard attention).\n";

/* The metrics of one layer and head: sums over the query positions, then means. */
enum { M_SPAN, M_REST, M_SUM, M_NEG_SUM, M_NEG_SHARE, M_ENTROPY, M_LAMBDA, N_METRICS };
static const char *metric_names[N_METRICS] = {"span", "rest", "sum", "neg_sum", "neg_share", "entropy", "lambda"};
static const char *metric_json[N_METRICS] = {"span_mass", "rest_mass", "sum", "neg_sum", "neg_share", "entropy", "lambda"};
enum { T_W, T_A1, T_A2, T_I, N_TERMS };
static const char *term_names[N_TERMS] = {"W", "A1", "A2", "I"};

typedef struct args {
    cli_engine eng; /* MODEL, --threads, --weights, --precision, --kv, --kernels, --tokenizer */
    const char *prompt, *file, *ids, *layers, *heads, *pos, *svg;
    const char *span_text[MAX_SPANS];
    int n_span_text;
    int spans[2 * MAX_SPANS], n_spans; /* --span, then the --span-text matches */
    int json, svg_layer, svg_metric;
} args;

/* What the inspection callback fills. */
typedef struct collect {
    int H, n_rows_want, last_pos, n_keys;
    const int *spans;
    int n_spans;
    double *m;       /* [L * H * N_METRICS] sums over the rows */
    int *count;      /* [L * H] rows seen */
    float *rows;     /* [L * H * N_TERMS * n_keys] the last query position's terms */
    unsigned char *has; /* [L * H * N_TERMS] which terms the row had */
} collect;

/* "A:B" with A < B, both non-negative integers; -1 if malformed. */
static int parse_range(const char *s, int *a, int *b)
{
    char *end;
    long x, y;
    errno = 0;
    x = strtol(s, &end, 10);
    if (errno || end == s || *end != ':' || x < 0 || x > INT_MAX) return -1;
    s = end + 1;
    y = strtol(s, &end, 10);
    if (errno || end == s || *end || y < 0 || y > INT_MAX || y <= x) return -1;
    *a = (int)x, *b = (int)y;
    return 0;
}

static int metric_parse(const char *s)
{
    int k;
    for (k = 0; k < N_METRICS; k++)
        if (!strcmp(s, metric_names[k]) || !strcmp(s, metric_json[k])) return k;
    return -1;
}

/* Returns 0, 1 for an error (printed), 2 for --help. */
static int parse_args(int argc, char **argv, args *a)
{
    static const char *const switches[] = {"--json", NULL};
    int i;
    long v;
    memset(a, 0, sizeof *a);
    cli_engine_init(&a->eng);
    a->svg_layer = -1;
    a->svg_metric = -1;
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
        else if (!strcmp(f, "--layers")) bad = a->layers != NULL, a->layers = val;
        else if (!strcmp(f, "--heads")) bad = a->heads != NULL, a->heads = val;
        else if (!strcmp(f, "--pos")) bad = a->pos != NULL, a->pos = val;
        else if (!strcmp(f, "--svg")) bad = a->svg != NULL || !*val, a->svg = val;
        else if (!strcmp(f, "--svg-layer")) bad = a->svg_layer >= 0 || cli_parse_long(val, 0, INT_MAX, &v), a->svg_layer = (int)v;
        else if (!strcmp(f, "--svg-metric")) bad = a->svg_metric >= 0 || (a->svg_metric = metric_parse(val)) < 0;
        else if (!strcmp(f, "--span")) {
            if (a->n_spans + a->n_span_text >= MAX_SPANS) return cli_fail("more than 64 spans", val);
            bad = parse_range(val, &a->spans[2 * a->n_spans], &a->spans[2 * a->n_spans + 1]);
            if (bad) {
                fprintf(stderr, "attention: bad --span '%s': give A:B, token indices with 0 <= A < B\n", val);
                return 1;
            }
            a->n_spans++;
        } else if (!strcmp(f, "--span-text")) {
            if (a->n_spans + a->n_span_text >= MAX_SPANS) return cli_fail("more than 64 spans", val);
            if (!*val) return cli_fail("--span-text", "the text is empty");
            a->span_text[a->n_span_text++] = val;
        }
        else if ((bad = cli_engine_option(&a->eng, CLI_ENGINE | CLI_TOKENIZER, f, val, NULL)) < 0)
            return cli_fail("unknown option (see --help)", f);
        if (bad) {
            fprintf(stderr, "attention: bad value '%s' for %s (or given twice; see --help)\n", val, f);
            return 1;
        }
    }
    if (!a->eng.model) return cli_fail("no MODEL given (see --help)", NULL);
    if (!!a->prompt + !!a->file + !!a->ids != 1) return cli_fail("give one text: -p TEXT, -f FILE or --ids LIST (see --help)", NULL);
    if (!a->svg && (a->svg_layer >= 0 || a->svg_metric >= 0)) return cli_fail("--svg-layer and --svg-metric need --svg", NULL);
    return cli_engine_done(&a->eng);
}

/* "1,3-5" into flags[0..n) (all zero first); returns 0, or 1 (printed). */
static int parse_list(const char *what, const char *s, int n, unsigned char *flags)
{
    const char *p = s;
    char msg[200];
    memset(flags, 0, (size_t)n);
    for (;;) {
        char *end;
        long a, b;
        errno = 0;
        a = strtol(p, &end, 10);
        if (errno || end == p || a < 0) break;
        b = a;
        if (*end == '-') {
            p = end + 1;
            b = strtol(p, &end, 10);
            if (errno || end == p || b < a) break;
        }
        if (b >= n) {
            snprintf(msg, sizeof msg, "%ld is out of range: the model has %d %s (0 to %d)", b, n, what, n - 1);
            return cli_fail(what[0] == 'l' ? "--layers" : "--heads", msg);
        }
        for (; a <= b; a++) flags[a] = 1;
        if (*end == 0) return 0;
        if (*end != ',') break;
        p = end + 1;
    }
    snprintf(msg, sizeof msg, "'%s': give indices and ranges, e.g. 0,2-3", s);
    return cli_fail(what[0] == 'l' ? "--layers" : "--heads", msg);
}

/* The bytes of token id as shown (none for a special token such as BOS when skip_special). */
static const char *token_bytes(const dintattn_tokenizer *tok, int id, size_t *len)
{
    const char *s = tok ? dintattn_tokenizer_token(tok, id, len) : NULL;
    if (!s) *len = 0;
    return s;
}

/* --span-text: the tokens overlapping the first occurrence of str's bytes in the concatenation
   of the tokens' bytes (special tokens count as none). Returns 0 and sets [*a, *b), or 1 (printed). */
static int find_span_text(const dintattn_tokenizer *tok, const int *ids, int n, const char *str, int *a, int *b)
{
    size_t total = 0, at = 0, len, m = strlen(str), off;
    size_t *start = (size_t *)malloc(sizeof(size_t) * ((size_t)n + 1));
    char *text = NULL;
    int i, rc = 1;
    if (!start) return cli_fail("out of memory", NULL);
    for (i = 0; i < n; i++) {
        if (!dintattn_tokenizer_is_special(tok, ids[i])) token_bytes(tok, ids[i], &len);
        else len = 0;
        start[i] = total;
        total += len;
    }
    start[n] = total;
    if (!(text = (char *)malloc(total + 1))) {
        free(start);
        return cli_fail("out of memory", NULL);
    }
    for (i = 0; i < n; i++) {
        const char *s = dintattn_tokenizer_is_special(tok, ids[i]) ? NULL : token_bytes(tok, ids[i], &len);
        if (s) memcpy(text + at, s, len), at += len;
    }
    for (off = 0; off + m <= total; off++)
        if (!memcmp(text + off, str, m)) break;
    if (off + m > total) {
        fprintf(stderr, "attention: bad --span-text: '%s' is not in the text\n", str);
    } else {
        for (i = 0; i < n && start[i + 1] <= off; i++) {}
        *a = i;
        while (i < n && start[i] < off + m) i++;
        *b = i;
        rc = 0;
    }
    free(text);
    free(start);
    return rc;
}

static void on_row(void *user, const dintattn_attn_row *r)
{
    collect *c = (collect *)user;
    const size_t lh = (size_t)r->layer * c->H + r->head;
    dintattn_attn_stats st;
    double *m = c->m + lh * N_METRICS;
    dintattn_attn_stats_of(r->W, r->n_keys, c->spans, c->n_spans, &st);
    m[M_SPAN] += st.span_mass, m[M_REST] += st.rest_mass, m[M_SUM] += st.sum, m[M_NEG_SUM] += st.neg_sum;
    m[M_NEG_SHARE] += st.neg_share, m[M_ENTROPY] += st.entropy, m[M_LAMBDA] += r->lambda;
    c->count[lh]++;
    if (r->pos == c->last_pos && r->n_keys == c->n_keys) {
        const float *t[N_TERMS];
        int k;
        t[T_W] = r->W, t[T_A1] = r->A1, t[T_A2] = r->A2, t[T_I] = r->integral;
        for (k = 0; k < N_TERMS; k++) {
            c->has[lh * N_TERMS + k] = t[k] != NULL;
            if (t[k]) memcpy(c->rows + (lh * N_TERMS + k) * (size_t)c->n_keys, t[k], sizeof(float) * (size_t)c->n_keys);
        }
    }
}

/* --- output helpers -------------------------------------------------------------------------- */

/* Numbers as JSON and the SVG print them: doubles to 10 digits (srv_buf_num), a row's floats to 9 (exact). */
static void put_f(srv_buf *b, float x)
{
    if (isfinite(x)) srv_buf_printf(b, "%.9g", (double)x);
    else srv_buf_str(b, "null");
}


/* A token's text for the table: quoted, with \n, \t, \\, \" and \xNN for control bytes and bytes
   of no valid UTF-8 character. */
static void text_token(srv_buf *b, const dintattn_tokenizer *tok, int id)
{
    size_t len = 0, i = 0;
    const char *s = token_bytes(tok, id, &len);
    if (!s) {
        srv_buf_str(b, "-");
        return;
    }
    srv_buf_str(b, "\"");
    while (i < len) {
        unsigned char c = (unsigned char)s[i];
        size_t k = c >= 0x80 ? srv_utf8_char((const unsigned char *)s + i, len - i) : 1;
        if (c == '\n') srv_buf_str(b, "\\n");
        else if (c == '\t') srv_buf_str(b, "\\t");
        else if (c == '\\' || c == '"') srv_buf_printf(b, "\\%c", c);
        else if (c < 0x20 || c == 0x7F || k == 0) srv_buf_printf(b, "\\x%02x", c);
        else srv_buf_add(b, s + i, k);
        i += k ? k : 1;
    }
    srv_buf_str(b, "\"");
}

/* s[0..len) as XML character data or an attribute value, at most max_chars characters (then
   "..."): &, <, >, quotes escaped; newline and tab as \n and \t; other control bytes, bytes of no
   valid UTF-8 character and U+FFFE / U+FFFF (not XML characters) as \xNN: always a valid document. */
static void xml_text(srv_buf *b, const char *s, size_t len, int max_chars)
{
    const unsigned char *u = (const unsigned char *)s;
    size_t i = 0;
    int chars = 0;
    while (i < len) {
        unsigned char c = u[i];
        size_t k = c >= 0x80 ? srv_utf8_char(u + i, len - i) : 1;
        if (chars >= max_chars) {
            srv_buf_str(b, "...");
            return;
        }
        chars++;
        if (k == 3 && c == 0xEF && u[i + 1] == 0xBF && u[i + 2] >= 0xBE) k = 0;
        if (c == '&') srv_buf_str(b, "&amp;");
        else if (c == '<') srv_buf_str(b, "&lt;");
        else if (c == '>') srv_buf_str(b, "&gt;");
        else if (c == '"') srv_buf_str(b, "&quot;");
        else if (c == '\'') srv_buf_str(b, "&apos;");
        else if (c == '\n') srv_buf_str(b, "\\n");
        else if (c == '\t') srv_buf_str(b, "\\t");
        else if (c < 0x20 || c == 0x7F || k == 0) srv_buf_printf(b, "\\x%02X", c);
        else srv_buf_add(b, s + i, k);
        i += k ? k : 1;
    }
}

static void xml_token(srv_buf *b, const dintattn_tokenizer *tok, int id, int max_chars)
{
    size_t len = 0;
    const char *s = token_bytes(tok, id, &len);
    if (s) xml_text(b, s, len, max_chars);
    else srv_buf_printf(b, "#%d", id);
}

/* --- the SVG figure -------------------------------------------------------------------------- */

typedef struct figure {
    const args *a;
    const dintattn_config *cfg;
    const dintattn_tokenizer *tok;
    const int *ids;
    const unsigned char *lf, *hf;
    const collect *c;
    const double *mean; /* [L * H * N_METRICS] */
    int pos_from, pos_to, layer, metric;
} figure;

/* Colour of t in [0, 1] from white to dark blue (ColorBrewer's Blues, ends). */
static void blues(srv_buf *b, double t)
{
    const double lo[3] = {247, 251, 255}, hi[3] = {8, 48, 107};
    if (!(t >= 0)) t = 0;
    if (t > 1) t = 1;
    srv_buf_printf(b, "#%02x%02x%02x", (int)(lo[0] + (hi[0] - lo[0]) * t + 0.5), (int)(lo[1] + (hi[1] - lo[1]) * t + 0.5),
                   (int)(lo[2] + (hi[2] - lo[2]) * t + 0.5));
}

/* Whether head h's row `term` of the figure's layer has a negative weight (then it gets room below
   its baseline). */
static int row_has_neg(const figure *fg, int h, int term)
{
    const size_t lh = (size_t)fg->layer * fg->cfg->n_heads + h;
    const float *row = fg->c->rows + (lh * N_TERMS + term) * (size_t)fg->c->n_keys;
    int j;
    for (j = 0; fg->c->has[lh * N_TERMS + term] && j < fg->c->n_keys; j++)
        if (row[j] < 0) return 1;
    return 0;
}

static void svg_write(srv_buf *b, const figure *fg)
{
    const dintattn_config *cfg = fg->cfg;
    const int L = cfg->n_layers, H = cfg->n_heads, nk = fg->c->n_keys, P = fg->pos_to - 1;
    const int metric = fg->metric;
    const char *name = strrchr(fg->a->eng.model, '/') ? strrchr(fg->a->eng.model, '/') + 1 : fg->a->eng.model;
    int nl = 0, nh = 0, l, h, k, j, term, n_terms = 0, terms[N_TERMS];
    double vmin = HUGE_VAL, vmax = -HUGE_VAL;
    /* layout */
    const double cell_w = 44, cell_h = 24, left = 70, top = 70;
    double cw = 1000.0 / nk, heat_w, width, y, panel_up = 44, panel_down = 22, label_h = 90;
    int every;
    if (cw > 22) cw = 22;
    if (cw < 3) cw = 3;
    every = (int)ceil(11.0 / cw);
    for (l = 0; l < L; l++) nl += fg->lf[l] != 0;
    for (h = 0; h < H; h++) nh += fg->hf[h] != 0;
    for (l = 0; l < L; l++)
        for (h = 0; h < H; h++)
            if (fg->lf[l] && fg->hf[h]) {
                const double v = fg->mean[((size_t)l * H + h) * N_METRICS + metric];
                if (v < vmin) vmin = v;
                if (v > vmax) vmax = v;
            }
    for (term = 0; term < N_TERMS; term++) {
        int any = 0;
        for (h = 0; h < H; h++) any |= fg->hf[h] && fg->c->has[((size_t)fg->layer * H + h) * N_TERMS + term];
        if (any) terms[n_terms++] = term;
    }
    heat_w = left + nh * cell_w + 140;
    width = left + nk * cw + 60;
    if (width < heat_w) width = heat_w;
    if (width < 760) width = 760;
    {
        const double heat_bottom = top + 20 + (nl * cell_h > 100 ? nl * cell_h : 100) + 40; /* the legend is 100 high at least */
        double head_h = 24 + n_terms * (panel_up + 4 + 8);
        double height;
        for (h = 0; h < H; h++)
            for (k = 0; fg->hf[h] && k < n_terms; k++)
                head_h += row_has_neg(fg, h, terms[k]) ? (panel_down - 4) / nh : 0;
        height = heat_bottom + 40 + nh * head_h + label_h + 20;
        srv_buf_printf(b, "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
                          "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%.0f\" height=\"%.0f\" viewBox=\"0 0 %.0f %.0f\" "
                          "font-family=\"Helvetica, Arial, sans-serif\" font-size=\"11\" data-n-tokens=\"%d\" "
                          "data-pos-from=\"%d\" data-pos-to=\"%d\" data-metric=\"%s\" data-svg-layer=\"%d\">\n",
                       width, height, width, height, nk, fg->pos_from, fg->pos_to, metric_json[metric], fg->layer);
        srv_buf_printf(b, "<rect width=\"100%%\" height=\"100%%\" fill=\"white\"/>\n<text x=\"20\" y=\"24\" font-size=\"15\" "
                          "font-weight=\"bold\">");
        xml_text(b, name, strlen(name), 80);
        srv_buf_printf(b, ": attention of query position%s %d", fg->pos_to - fg->pos_from > 1 ? "s" : "", fg->pos_from);
        if (fg->pos_to - fg->pos_from > 1) srv_buf_printf(b, "&#8211;%d (mean)", P);
        srv_buf_printf(b, " over %d tokens (%s)</text>\n", nk,
                       cfg->attention == DINTATTN_ATTN_DINT ? "DINT" : cfg->attention == DINTATTN_ATTN_DIFF ? "DIFF" : "standard");
        if (fg->c->n_spans) {
            srv_buf_str(b, "<text x=\"20\" y=\"42\" fill=\"#555\">span keys:");
            for (k = 0; k < fg->c->n_spans; k++)
                srv_buf_printf(b, " [%d, %d)", fg->c->spans[2 * k], fg->c->spans[2 * k + 1]);
            srv_buf_str(b, "</text>\n");
        }

        /* (1) the heatmap: layers down, heads across */
        srv_buf_printf(b, "<g id=\"heatmap\" data-metric=\"%s\">\n<text x=\"%.0f\" y=\"%.0f\" font-weight=\"bold\">mean %s per layer "
                          "and head</text>\n", metric_json[metric], left, top - 8, metric_json[metric]);
        for (k = 0, h = 0; h < H; h++)
            if (fg->hf[h]) srv_buf_printf(b, "<text x=\"%.1f\" y=\"%.0f\" text-anchor=\"middle\">%d</text>\n",
                                          left + (k++ + 0.5) * cell_w, top + 12, h);
        srv_buf_printf(b, "<text x=\"%.1f\" y=\"%.0f\" text-anchor=\"middle\" fill=\"#555\">head</text>\n",
                       left + nh * cell_w / 2, top + 20 + nl * cell_h + 16);
        srv_buf_printf(b, "<text transform=\"translate(%.0f %.1f) rotate(-90)\" text-anchor=\"middle\" fill=\"#555\">layer</text>\n",
                       left - 34, top + 20 + nl * cell_h / 2);
        for (j = 0, l = 0; l < L; l++) {
            if (!fg->lf[l]) continue;
            y = top + 20 + j++ * cell_h;
            srv_buf_printf(b, "<text x=\"%.0f\" y=\"%.1f\" text-anchor=\"end\">%d</text>\n", left - 6, y + cell_h / 2 + 4, l);
            for (k = 0, h = 0; h < H; h++) {
                double v, t;
                if (!fg->hf[h]) continue;
                v = fg->mean[((size_t)l * H + h) * N_METRICS + metric];
                t = vmax > vmin ? (v - vmin) / (vmax - vmin) : 0.5;
                srv_buf_printf(b, "<rect class=\"cell\" x=\"%.1f\" y=\"%.1f\" width=\"%.0f\" height=\"%.0f\" stroke=\"#ccc\" stroke-width=\"0.5\" fill=\"", left + k * cell_w, y,
                               cell_w - 1, cell_h - 1);
                blues(b, t);
                srv_buf_printf(b, "\" data-layer=\"%d\" data-head=\"%d\" data-value=\"", l, h);
                srv_buf_num(b, v);
                srv_buf_printf(b, "\"><title>layer %d head %d: %s = %.6g</title></rect>\n", l, h, metric_json[metric], v);
                srv_buf_printf(b, "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"middle\" font-size=\"9\" fill=\"%s\" "
                                  "pointer-events=\"none\">%.3g</text>\n",
                               left + (k + 0.5) * cell_w, y + cell_h / 2 + 3, t > 0.55 ? "white" : "black", v);
                k++;
            }
        }
        /* the legend: a vertical gradient, max at the top */
        {
            const double lx = left + nh * cell_w + 24, ly = top + 20, lh = nl * cell_h > 100 ? nl * cell_h : 100;
            srv_buf_str(b, "<defs><linearGradient id=\"legend\" x1=\"0\" y1=\"1\" x2=\"0\" y2=\"0\">");
            for (k = 0; k <= 4; k++) {
                srv_buf_printf(b, "<stop offset=\"%.2f\" stop-color=\"", k / 4.0);
                blues(b, k / 4.0);
                srv_buf_str(b, "\"/>");
            }
            srv_buf_str(b, "</linearGradient></defs>\n");
            srv_buf_printf(b, "<rect x=\"%.0f\" y=\"%.0f\" width=\"14\" height=\"%.0f\" fill=\"url(#legend)\" stroke=\"#999\" "
                              "data-min=\"", lx, ly, lh);
            srv_buf_num(b, vmin);
            srv_buf_str(b, "\" data-max=\"");
            srv_buf_num(b, vmax);
            srv_buf_str(b, "\"/>\n");
            srv_buf_printf(b, "<text x=\"%.0f\" y=\"%.0f\">%.4g</text>\n<text x=\"%.0f\" y=\"%.0f\">%.4g</text>\n", lx + 18, ly + 9,
                           vmax, lx + 18, ly + lh, vmin);
            srv_buf_printf(b, "<text x=\"%.0f\" y=\"%.0f\" fill=\"#555\">%s</text>\n", lx + 18, ly + lh / 2 + 4, metric_json[metric]);
        }
        srv_buf_str(b, "</g>\n");

        /* (2) the rows of the last query position, per head of one layer */
        y = heat_bottom + 20;
        srv_buf_printf(b, "<g id=\"rows\" data-layer=\"%d\" data-pos=\"%d\">\n<text x=\"20\" y=\"%.0f\" font-weight=\"bold\">layer %d: "
                          "attention row of query position %d (", fg->layer, P, y, fg->layer, P);
        xml_token(b, fg->tok, fg->ids[P], 24);
        srv_buf_str(b, ") over the keys; negative weights in red</text>\n");
        y += 16;
        for (h = 0; h < H; h++) {
            const size_t lh = (size_t)fg->layer * H + h;
            double amax = 0;
            if (!fg->hf[h]) continue;
            for (k = 0; k < n_terms; k++)
                for (j = 0; j < nk; j++) {
                    const double v = fabs((double)fg->c->rows[(lh * N_TERMS + terms[k]) * nk + j]);
                    if (fg->c->has[lh * N_TERMS + terms[k]] && v > amax) amax = v;
                }
            srv_buf_printf(b, "<g class=\"head\" data-layer=\"%d\" data-head=\"%d\">\n<text x=\"20\" y=\"%.0f\" font-weight=\"bold\">"
                              "head %d</text>", fg->layer, h, y + 14, h);
            if (cfg->attention != DINTATTN_ATTN_STANDARD)
                srv_buf_printf(b, "<text x=\"80\" y=\"%.0f\" fill=\"#555\">lambda %.4g</text>", y + 14,
                               fg->mean[lh * N_METRICS + M_LAMBDA]);
            srv_buf_str(b, "\n");
            y += 24;
            for (k = 0; k < n_terms; k++) {
                const int tm = terms[k];
                const float *row = fg->c->rows + (lh * N_TERMS + tm) * nk;
                const double base = y + panel_up, sc = amax > 0 ? panel_up / amax : 0;
                const double down = row_has_neg(fg, h, tm) ? panel_down : 4;
                int s;
                if (!fg->c->has[lh * N_TERMS + tm]) continue;
                for (s = 0; s < fg->c->n_spans; s++) {
                    int a0 = fg->c->spans[2 * s], b0 = fg->c->spans[2 * s + 1];
                    if (a0 >= nk) continue;
                    if (b0 > nk) b0 = nk;
                    srv_buf_printf(b, "<rect x=\"%.2f\" y=\"%.0f\" width=\"%.2f\" height=\"%.0f\" fill=\"#fff3b0\"/>", left + a0 * cw, y,
                                   (b0 - a0) * cw, panel_up + down);
                }
                srv_buf_printf(b, "<text x=\"%.0f\" y=\"%.0f\" text-anchor=\"end\">%s</text>"
                                  "<line x1=\"%.0f\" x2=\"%.2f\" y1=\"%.1f\" y2=\"%.1f\" stroke=\"#888\" stroke-width=\"0.5\"/>\n",
                               left - 8, base + 4, term_names[tm], left, left + nk * cw, base, base);
                srv_buf_printf(b, "<g class=\"row\" data-layer=\"%d\" data-head=\"%d\" data-term=\"%s\" data-pos=\"%d\">\n", fg->layer, h,
                               term_names[tm], P);
                for (j = 0; j < nk; j++) {
                    const double v = row[j];
                    double hgt = fabs(v) * sc;
                    if (v >= 0 && hgt > panel_up) hgt = panel_up;
                    if (v < 0 && hgt > panel_down) hgt = panel_down; /* clipped: the value is in data-value */
                    srv_buf_printf(b, "<rect x=\"%.2f\" y=\"%.2f\" width=\"%.2f\" height=\"%.2f\" fill=\"%s\" data-key=\"%d\" data-value=\"",
                                   left + j * cw + (cw > 4 ? 0.5 : 0), v >= 0 ? base - hgt : base, cw > 4 ? cw - 1 : cw, hgt,
                                   v >= 0 ? "#2b6cb0" : "#d62828", j);
                    put_f(b, row[j]);
                    srv_buf_printf(b, "\"><title>%d ", j);
                    xml_token(b, fg->tok, fg->ids[j], 24);
                    srv_buf_printf(b, ": %s = %.5g</title></rect>\n", term_names[tm], v);
                }
                srv_buf_str(b, "</g>\n");
                y += panel_up + down + 8;
            }
            srv_buf_str(b, "</g>\n");
        }
        /* the token labels, rotated, every `every`-th (and the query position) */
        srv_buf_printf(b, "<g class=\"tokens\" font-size=\"%d\" xml:space=\"preserve\">\n", cw >= 9 ? 10 : 8);
        for (j = 0; j < nk; j++) {
            const double x = left + (j + 0.5) * cw;
            if (j % every && j != P) continue;
            srv_buf_printf(b, "<text transform=\"translate(%.2f %.1f) rotate(-60)\" text-anchor=\"end\" data-key=\"%d\"%s>", x, y + 6,
                           j, j == P ? " font-weight=\"bold\"" : "");
            xml_token(b, fg->tok, fg->ids[j], 14);
            srv_buf_str(b, "</text>\n");
        }
        srv_buf_str(b, "</g>\n</g>\n</svg>\n");
    }
}

/* --- main ------------------------------------------------------------------------------------ */

/* One run: the model, the text, what is inspected, and what the inspection gave. */
typedef struct run {
    args a;
    dintattn_model *model;
    dintattn_tokenizer *tok;
    dintattn_session *sess;
    const dintattn_config *cfg;
    int *ids, n, L, H;
    int pos_from, pos_to, n_pos;  /* the query positions [pos_from, pos_to) */
    unsigned char *lf, *hf;       /* the shown layers and heads */
    int svg_layer, metric;
    FILE *svg;
    collect c;
    double *mean;                 /* [L * H * N_METRICS] the metrics' means over the query positions */
} run;

/* Loads the model (and tokenizer, unless --ids needs none) and the text's ids, which must fit
   the model's context. Returns 0, or -1 (printed). */
static int load_text(run *r)
{
    dintattn_error err;
    char msg[256];
    if (cli_load_model(r->a.eng.model, r->a.eng.weights, r->a.eng.map, r->a.eng.threads, &r->model, &err))
        return cli_fail(r->a.eng.model, err.message), -1;
    r->cfg = dintattn_model_config(r->model);
    r->L = r->cfg->n_layers, r->H = r->cfg->n_heads;
    /* --ids needs no tokenizer: without one, no token texts */
    if (cli_load_tokenizer(&r->a.eng, r->model, r->a.ids != NULL, &r->tok)) return -1;
    if ((r->n = cli_text_ids(r->a.ids, r->a.file, r->a.prompt, r->tok, r->cfg->vocab_size, &r->ids)) < 0) return -1;
    if (r->n == 0) return cli_fail(r->a.file ? r->a.file : "-p", "the text encodes to no tokens"), -1;
    if (r->n > r->cfg->max_seq_len) {
        snprintf(msg, sizeof msg, "%d tokens, more than the model's context of %d", r->n, r->cfg->max_seq_len);
        return cli_fail("the text is too long", msg), -1;
    }
    return 0;
}

/* --pos: the query positions (default: the last token). Returns 0, or -1 (printed). */
static int choose_positions(run *r)
{
    char msg[256];
    long p;
    r->pos_from = r->n - 1, r->pos_to = r->n;
    if (r->a.pos) {
        if (strchr(r->a.pos, ':') ? parse_range(r->a.pos, &r->pos_from, &r->pos_to)
                                  : (cli_parse_long(r->a.pos, 0, INT_MAX - 1, &p) ? -1 : 0))
            return cli_fail("bad --pos", "give P or A:B (query positions [A, B)), non-negative integers with A < B"), -1;
        if (!strchr(r->a.pos, ':')) r->pos_from = (int)p, r->pos_to = (int)p + 1;
        if (r->pos_to > r->n) {
            snprintf(msg, sizeof msg, "'%s' goes past the text's %d tokens (positions 0 to %d)", r->a.pos, r->n, r->n - 1);
            return cli_fail("--pos", msg), -1;
        }
    }
    r->n_pos = r->pos_to - r->pos_from;
    return 0;
}

/* The spans: --span as given (within the text), then --span-text's matches. Returns 0, or -1 (printed). */
static int choose_spans(run *r)
{
    char msg[256];
    int k;
    for (k = 0; k < r->a.n_spans; k++)
        if (r->a.spans[2 * k + 1] > r->n) {
            snprintf(msg, sizeof msg, "%d:%d goes past the text's %d tokens", r->a.spans[2 * k], r->a.spans[2 * k + 1], r->n);
            return cli_fail("bad --span", msg), -1;
        }
    if (r->a.n_span_text && !r->tok)
        return cli_fail("--span-text needs a tokenizer", "the model has none (give --tokenizer, or --span A:B)"), -1;
    for (k = 0; k < r->a.n_span_text; k++, r->a.n_spans++)
        if (find_span_text(r->tok, r->ids, r->n, r->a.span_text[k], &r->a.spans[2 * r->a.n_spans],
                           &r->a.spans[2 * r->a.n_spans + 1]))
            return -1;
    return 0;
}

/* --layers, --heads, the figure's layer and metric, and its file (opened now, so that a path that
   cannot be written fails before the prefill). Returns 0, or -1 (printed). */
static int choose_rows(run *r)
{
    char msg[256];
    int l;
    r->lf = (unsigned char *)malloc((size_t)r->L), r->hf = (unsigned char *)malloc((size_t)r->H);
    if (!r->lf || !r->hf) return cli_fail("out of memory", NULL), -1;
    if (r->a.layers ? parse_list("layers", r->a.layers, r->L, r->lf) : (memset(r->lf, 1, (size_t)r->L), 0)) return -1;
    if (r->a.heads ? parse_list("heads", r->a.heads, r->H, r->hf) : (memset(r->hf, 1, (size_t)r->H), 0)) return -1;
    r->svg_layer = -1;
    for (l = 0; l < r->L; l++) r->svg_layer = r->lf[l] ? l : r->svg_layer;
    if (r->a.svg_layer >= 0) {
        if (r->a.svg_layer >= r->L || !r->lf[r->a.svg_layer]) {
            snprintf(msg, sizeof msg, "%d is not a shown layer (the model has %d layers%s)", r->a.svg_layer, r->L,
                     r->a.layers ? "; --layers must include it" : "");
            return cli_fail("--svg-layer", msg), -1;
        }
        r->svg_layer = r->a.svg_layer;
    }
    r->metric = r->a.svg_metric >= 0 ? r->a.svg_metric : r->a.n_spans ? M_SPAN : M_NEG_SHARE;
    if (r->a.svg && !(r->svg = fopen(r->a.svg, "wb"))) return cli_fail(r->a.svg, strerror(errno)), -1;
    return 0;
}

/* One prefill up to the last query position, every chosen row summarised, then the means.
   Returns 0, or -1 (printed). */
static int inspect(run *r)
{
    collect *c = &r->c;
    const int L = r->L, H = r->H;
    dintattn_inspect insp;
    dintattn_error err;
    char msg[256];
    int l, h, k;
    c->H = H, c->last_pos = r->pos_to - 1, c->n_keys = r->pos_to, c->spans = r->a.spans, c->n_spans = r->a.n_spans;
    c->m = (double *)calloc((size_t)L * H * N_METRICS, sizeof(double));
    c->count = (int *)calloc((size_t)L * H, sizeof(int));
    c->rows = (float *)calloc((size_t)L * H * N_TERMS * (size_t)r->pos_to, sizeof(float));
    c->has = (unsigned char *)calloc((size_t)L * H * N_TERMS, 1);
    r->mean = (double *)calloc((size_t)L * H * N_METRICS, sizeof(double));
    if (!c->m || !c->count || !c->rows || !c->has || !r->mean) return cli_fail("out of memory for the rows", NULL), -1;
    if (cli_session_new(&r->a.eng, r->model, r->pos_to, &r->sess)) return -1;
    memset(&insp, 0, sizeof insp);
    insp.row = on_row, insp.user = c, insp.layers = r->lf, insp.heads = r->hf, insp.pos_from = r->pos_from;
    insp.pos_to = r->pos_to;
    if (dintattn_session_inspect(r->sess, &insp, &err) || dintattn_prefill(r->sess, r->ids, r->pos_to, NULL, 0, &err))
        return cli_fail("prefill", err.message), -1;
    for (l = 0; l < L; l++)
        for (h = 0; h < H; h++) {
            const size_t lh = (size_t)l * H + h;
            if (!r->lf[l] || !r->hf[h]) continue;
            if (c->count[lh] != r->n_pos) {
                snprintf(msg, sizeof msg, "layer %d head %d: %d rows inspected, %d expected", l, h, c->count[lh], r->n_pos);
                return cli_fail("internal error", msg), -1;
            }
            for (k = 0; k < N_METRICS; k++) r->mean[lh * N_METRICS + k] = c->m[lh * N_METRICS + k] / r->n_pos;
        }
    return 0;
}

/* --json: one object, written to standard output head by head. Returns 0, or -1 (printed). */
static int write_json(const run *r, srv_buf *out)
{
    const int L = r->L, H = r->H, pos_to = r->pos_to;
    int i, k, l, h;
    srv_buf_str(out, "{\"model\": ");
    srv_buf_json_str(out, r->a.eng.model, strlen(r->a.eng.model));
    srv_buf_printf(out, ", \"attention\": \"%s\", \"n_layers\": %d, \"n_heads\": %d, \"n_tokens\": %d, \"query_positions\": [%d, %d], "
                        "\"spans\": [", r->cfg->attention == DINTATTN_ATTN_DINT ? "dint" : r->cfg->attention == DINTATTN_ATTN_DIFF ? "diff" : "standard",
                   L, H, r->n, r->pos_from, pos_to);
    for (k = 0; k < r->a.n_spans; k++) srv_buf_printf(out, "%s[%d, %d]", k ? ", " : "", r->a.spans[2 * k], r->a.spans[2 * k + 1]);
    srv_buf_str(out, "],\n\"tokens\": [");
    for (i = 0; i < r->n; i++) {
        size_t len;
        const char *s = token_bytes(r->tok, r->ids[i], &len);
        srv_buf_printf(out, "%s{\"id\": %d, \"text\": ", i ? ", " : "", r->ids[i]);
        if (s) srv_buf_json_str(out, s, len);
        else srv_buf_str(out, "null");
        srv_buf_str(out, "}");
    }
    srv_buf_str(out, "],\n\"heads\": [");
    for (k = 0, l = 0; l < L; l++)
        for (h = 0; h < H; h++) {
            const size_t lh = (size_t)l * H + h;
            int m, t, j;
            if (!r->lf[l] || !r->hf[h]) continue;
            srv_buf_printf(out, "%s\n{\"layer\": %d, \"head\": %d", k++ ? "," : "", l, h);
            for (m = 0; m < N_METRICS; m++) {
                srv_buf_printf(out, ", \"%s\": ", metric_json[m]);
                srv_buf_num(out, r->mean[lh * N_METRICS + m]);
            }
            srv_buf_printf(out, ", \"row_pos\": %d", pos_to - 1);
            for (t = 0; t < N_TERMS; t++) {
                srv_buf_printf(out, ", \"%s\": ", term_names[t]);
                if (!r->c.has[lh * N_TERMS + t]) {
                    srv_buf_str(out, "null");
                    continue;
                }
                srv_buf_str(out, "[");
                for (j = 0; j < pos_to; j++) {
                    if (j) srv_buf_str(out, ", ");
                    put_f(out, r->c.rows[(lh * N_TERMS + t) * (size_t)pos_to + j]);
                }
                srv_buf_str(out, "]");
            }
            srv_buf_str(out, "}");
            if (cli_flush(out, stdout, "standard output")) return -1;
        }
    srv_buf_str(out, "\n]}\n");
    return 0;
}

/* The table: a heading line, the spans' tokens, one line per shown layer and head. */
static void write_table(const run *r, srv_buf *out)
{
    const dintattn_attention at = r->cfg->attention;
    int i, k, l, h;
    srv_buf_printf(out, "%s: %s attention, %d layers x %d heads; %d tokens; query position%s %d", r->a.eng.model,
                   at == DINTATTN_ATTN_DINT ? "DINT" : at == DINTATTN_ATTN_DIFF ? "DIFF" : "standard", r->L, r->H, r->n,
                   r->n_pos > 1 ? "s" : "", r->pos_from);
    if (r->n_pos > 1) srv_buf_printf(out, "-%d (metrics averaged over %d rows)", r->pos_to - 1, r->n_pos);
    srv_buf_str(out, " ");
    text_token(out, r->tok, r->ids[r->pos_to - 1]);
    srv_buf_str(out, "\n");
    for (k = 0; k < r->a.n_spans; k++) {
        srv_buf_printf(out, "span %d: tokens [%d, %d)", k, r->a.spans[2 * k], r->a.spans[2 * k + 1]);
        for (i = r->a.spans[2 * k]; i < r->a.spans[2 * k + 1] && r->tok; i++) {
            srv_buf_str(out, " ");
            text_token(out, r->tok, r->ids[i]);
        }
        srv_buf_str(out, "\n");
    }
    srv_buf_printf(out, "%5s %4s %10s %10s %10s %10s %10s %10s %10s\n", "layer", "head", "lambda", "sum", "span", "rest",
                   "neg_sum", "neg_share", "entropy");
    for (l = 0; l < r->L; l++)
        for (h = 0; h < r->H; h++) {
            const double *m = r->mean + ((size_t)l * r->H + h) * N_METRICS;
            if (!r->lf[l] || !r->hf[h]) continue;
            srv_buf_printf(out, "%5d %4d %10.6f %10.6f %10.6f %10.6f %10.6f %10.6f %10.6f\n", l, h, m[M_LAMBDA], m[M_SUM],
                           m[M_SPAN], m[M_REST], m[M_NEG_SUM], m[M_NEG_SHARE], m[M_ENTROPY]);
        }
}

/* --svg: the figure into the file choose_rows opened, which is closed (r->svg = NULL) when it is
   whole. Returns 0, or -1 (printed). */
static int write_figure(run *r, srv_buf *out)
{
    figure fg;
    FILE *f = r->svg;
    fg.a = &r->a, fg.cfg = r->cfg, fg.tok = r->tok, fg.ids = r->ids, fg.lf = r->lf, fg.hf = r->hf, fg.c = &r->c;
    fg.mean = r->mean, fg.pos_from = r->pos_from, fg.pos_to = r->pos_to, fg.layer = r->svg_layer, fg.metric = r->metric;
    svg_write(out, &fg);
    if (cli_flush(out, f, r->a.svg)) return -1;
    r->svg = NULL;
    if (fclose(f)) return cli_fail(r->a.svg, strerror(errno)), -1;
    return 0;
}

static void run_free(run *r)
{
    if (r->svg) {
        fclose(r->svg);
        remove(r->a.svg); /* no half-written figure */
    }
    free(r->c.m);
    free(r->c.count);
    free(r->c.rows);
    free(r->c.has);
    free(r->mean);
    free(r->lf);
    free(r->hf);
    free(r->ids);
    dintattn_session_free(r->sess);
    dintattn_tokenizer_free(r->tok);
    dintattn_model_free(r->model);
}

int main(int argc, char **argv)
{
    run r;
    srv_buf out;
    int rc = 1;
    argv = cli_aliases(&argc, argv);
    memset(&r, 0, sizeof r);
    memset(&out, 0, sizeof out);
    switch (parse_args(argc, argv, &r.a)) {
    case 0: break;
    case 2: cli_usage(stdout, usage, 22); return 0;
    default: return 1;
    }
    if (!load_text(&r) && !choose_positions(&r) && !choose_spans(&r) && !choose_rows(&r) && !inspect(&r) &&
        !(r.a.json ? write_json(&r, &out) : (write_table(&r, &out), 0)) && !cli_flush(&out, stdout, "standard output") &&
        !(r.svg && write_figure(&r, &out)))
        rc = 0;
    srv_buf_free(&out);
    run_free(&r);
    return rc;
}
