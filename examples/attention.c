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
    "  --threads T         threads for matrix rows (default 2; attention runs on the calling thread\n"
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

/* Numbers as JSON and the SVG print them: doubles to 10 digits, a row's floats to 9 (exact). */
static void put_num(srv_buf *b, double x)
{
    if (isfinite(x)) srv_buf_printf(b, "%.10g", x);
    else srv_buf_str(b, "null");
}
static void put_f(srv_buf *b, float x)
{
    if (isfinite(x)) srv_buf_printf(b, "%.9g", (double)x);
    else srv_buf_str(b, "null");
}

static int flush_buf(srv_buf *b, FILE *f, const char *name)
{
    if (b->nomem) return cli_fail("out of memory for the output", NULL);
    if ((b->len && fwrite(b->p, 1, b->len, f) != b->len) || fflush(f)) return cli_fail("cannot write", name);
    b->len = 0;
    return 0;
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
                put_num(b, v);
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
            put_num(b, vmin);
            srv_buf_str(b, "\" data-max=\"");
            put_num(b, vmax);
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

int main(int argc, char **argv)
{
    args a;
    dintattn_error err;
    dintattn_model *model = NULL;
    dintattn_tokenizer *tok = NULL;
    dintattn_session *sess = NULL;
    dintattn_inspect insp;
    const dintattn_config *cfg;
    collect c;
    srv_buf out;
    unsigned char *lf = NULL, *hf = NULL;
    double *mean = NULL;
    int *ids = NULL, n, L, H, i, l, h, k, rc, pos_from, pos_to, n_pos, svg_layer = -1, metric;
    char msg[256];
    FILE *svg = NULL;
    argv = cli_aliases(&argc, argv);

    memset(&c, 0, sizeof c);
    memset(&out, 0, sizeof out);
    rc = parse_args(argc, argv, &a);
    if (rc == 2) {
        cli_usage(stdout, usage, 22);
        return 0;
    }
    if (rc) return 1;
    rc = 1;
    if (cli_load_model(a.eng.model, a.eng.weights, a.eng.map, a.eng.threads, &model, &err)) return cli_fail(a.eng.model, err.message);
    cfg = dintattn_model_config(model);
    L = cfg->n_layers, H = cfg->n_heads;
    /* --ids needs no tokenizer: without one, no token texts */
    if (cli_load_tokenizer(&a.eng, model, a.ids != NULL, &tok)) goto done;
    if ((n = cli_text_ids(a.ids, a.file, a.prompt, tok, cfg->vocab_size, &ids)) < 0) goto done;
    if (n == 0) {
        cli_fail(a.file ? a.file : "-p", "the text encodes to no tokens");
        goto done;
    }
    if (n > cfg->max_seq_len) {
        snprintf(msg, sizeof msg, "%d tokens, more than the model's context of %d", n, cfg->max_seq_len);
        cli_fail("the text is too long", msg);
        goto done;
    }
    /* query positions */
    pos_from = n - 1, pos_to = n;
    if (a.pos) {
        long p;
        if (strchr(a.pos, ':') ? parse_range(a.pos, &pos_from, &pos_to) : (cli_parse_long(a.pos, 0, INT_MAX - 1, &p) ? -1 : 0)) {
            cli_fail("bad --pos", "give P or A:B (query positions [A, B)), non-negative integers with A < B");
            goto done;
        }
        if (!strchr(a.pos, ':')) pos_from = (int)p, pos_to = (int)p + 1;
        if (pos_to > n) {
            snprintf(msg, sizeof msg, "'%s' goes past the text's %d tokens (positions 0 to %d)", a.pos, n, n - 1);
            cli_fail("--pos", msg);
            goto done;
        }
    }
    n_pos = pos_to - pos_from;
    /* spans: --span as given (within the text), then --span-text's matches */
    for (k = 0; k < a.n_spans; k++)
        if (a.spans[2 * k + 1] > n) {
            snprintf(msg, sizeof msg, "%d:%d goes past the text's %d tokens", a.spans[2 * k], a.spans[2 * k + 1], n);
            cli_fail("bad --span", msg);
            goto done;
        }
    if (a.n_span_text && !tok) {
        cli_fail("--span-text needs a tokenizer", "the model has none (give --tokenizer, or --span A:B)");
        goto done;
    }
    for (k = 0; k < a.n_span_text; k++, a.n_spans++)
        if (find_span_text(tok, ids, n, a.span_text[k], &a.spans[2 * a.n_spans], &a.spans[2 * a.n_spans + 1])) goto done;
    /* layers and heads */
    lf = (unsigned char *)malloc((size_t)L), hf = (unsigned char *)malloc((size_t)H);
    if (!lf || !hf) {
        cli_fail("out of memory", NULL);
        goto done;
    }
    if (a.layers ? parse_list("layers", a.layers, L, lf) : (memset(lf, 1, (size_t)L), 0)) goto done;
    if (a.heads ? parse_list("heads", a.heads, H, hf) : (memset(hf, 1, (size_t)H), 0)) goto done;
    for (l = 0; l < L; l++) svg_layer = lf[l] ? l : svg_layer;
    if (a.svg_layer >= 0) {
        if (a.svg_layer >= L || !lf[a.svg_layer]) {
            snprintf(msg, sizeof msg, "%d is not a shown layer (the model has %d layers%s)", a.svg_layer, L,
                     a.layers ? "; --layers must include it" : "");
            cli_fail("--svg-layer", msg);
            goto done;
        }
        svg_layer = a.svg_layer;
    }
    metric = a.svg_metric >= 0 ? a.svg_metric : a.n_spans ? M_SPAN : M_NEG_SHARE;
    if (a.svg && !(svg = fopen(a.svg, "wb"))) {
        cli_fail(a.svg, strerror(errno));
        goto done;
    }

    /* one prefill up to the last query position, every chosen row summarised */
    c.H = H, c.last_pos = pos_to - 1, c.n_keys = pos_to, c.spans = a.spans, c.n_spans = a.n_spans;
    c.m = (double *)calloc((size_t)L * H * N_METRICS, sizeof(double));
    c.count = (int *)calloc((size_t)L * H, sizeof(int));
    c.rows = (float *)calloc((size_t)L * H * N_TERMS * (size_t)pos_to, sizeof(float));
    c.has = (unsigned char *)calloc((size_t)L * H * N_TERMS, 1);
    mean = (double *)calloc((size_t)L * H * N_METRICS, sizeof(double));
    if (!c.m || !c.count || !c.rows || !c.has || !mean) {
        cli_fail("out of memory for the rows", NULL);
        goto done;
    }
    if (cli_session_new(&a.eng, model, pos_to, &sess)) goto done;
    memset(&insp, 0, sizeof insp);
    insp.row = on_row, insp.user = &c, insp.layers = lf, insp.heads = hf, insp.pos_from = pos_from, insp.pos_to = pos_to;
    if (dintattn_session_inspect(sess, &insp, &err) || dintattn_prefill(sess, ids, pos_to, NULL, 0, &err)) {
        cli_fail("prefill", err.message);
        goto done;
    }
    for (l = 0; l < L; l++)
        for (h = 0; h < H; h++) {
            const size_t lh = (size_t)l * H + h;
            if (!lf[l] || !hf[h]) continue;
            if (c.count[lh] != n_pos) {
                snprintf(msg, sizeof msg, "layer %d head %d: %d rows inspected, %d expected", l, h, c.count[lh], n_pos);
                cli_fail("internal error", msg);
                goto done;
            }
            for (k = 0; k < N_METRICS; k++) mean[lh * N_METRICS + k] = c.m[lh * N_METRICS + k] / n_pos;
        }

    if (a.json) {
        srv_buf_str(&out, "{\"model\": ");
        srv_buf_json_str(&out, a.eng.model, strlen(a.eng.model));
        srv_buf_printf(&out, ", \"attention\": \"%s\", \"n_layers\": %d, \"n_heads\": %d, \"n_tokens\": %d, \"query_positions\": [%d, %d], "
                             "\"spans\": [", cfg->attention == DINTATTN_ATTN_DINT ? "dint" : cfg->attention == DINTATTN_ATTN_DIFF ? "diff" : "standard",
                       L, H, n, pos_from, pos_to);
        for (k = 0; k < a.n_spans; k++) srv_buf_printf(&out, "%s[%d, %d]", k ? ", " : "", a.spans[2 * k], a.spans[2 * k + 1]);
        srv_buf_str(&out, "],\n\"tokens\": [");
        for (i = 0; i < n; i++) {
            size_t len;
            const char *s = token_bytes(tok, ids[i], &len);
            srv_buf_printf(&out, "%s{\"id\": %d, \"text\": ", i ? ", " : "", ids[i]);
            if (s) srv_buf_json_str(&out, s, len);
            else srv_buf_str(&out, "null");
            srv_buf_str(&out, "}");
        }
        srv_buf_str(&out, "],\n\"heads\": [");
        for (k = 0, l = 0; l < L; l++)
            for (h = 0; h < H; h++) {
                const size_t lh = (size_t)l * H + h;
                int m, t, j;
                if (!lf[l] || !hf[h]) continue;
                srv_buf_printf(&out, "%s\n{\"layer\": %d, \"head\": %d", k++ ? "," : "", l, h);
                for (m = 0; m < N_METRICS; m++) {
                    srv_buf_printf(&out, ", \"%s\": ", metric_json[m]);
                    put_num(&out, mean[lh * N_METRICS + m]);
                }
                srv_buf_printf(&out, ", \"row_pos\": %d", pos_to - 1);
                for (t = 0; t < N_TERMS; t++) {
                    srv_buf_printf(&out, ", \"%s\": ", term_names[t]);
                    if (!c.has[lh * N_TERMS + t]) {
                        srv_buf_str(&out, "null");
                        continue;
                    }
                    srv_buf_str(&out, "[");
                    for (j = 0; j < pos_to; j++) {
                        if (j) srv_buf_str(&out, ", ");
                        put_f(&out, c.rows[(lh * N_TERMS + t) * (size_t)pos_to + j]);
                    }
                    srv_buf_str(&out, "]");
                }
                srv_buf_str(&out, "}");
                if (flush_buf(&out, stdout, "standard output")) goto done;
            }
        srv_buf_str(&out, "\n]}\n");
    } else {
        srv_buf_printf(&out, "%s: %s attention, %d layers x %d heads; %d tokens; query position%s %d", a.eng.model,
                       cfg->attention == DINTATTN_ATTN_DINT ? "DINT" : cfg->attention == DINTATTN_ATTN_DIFF ? "DIFF" : "standard", L, H, n,
                       n_pos > 1 ? "s" : "", pos_from);
        if (n_pos > 1) srv_buf_printf(&out, "-%d (metrics averaged over %d rows)", pos_to - 1, n_pos);
        srv_buf_str(&out, " ");
        text_token(&out, tok, ids[pos_to - 1]);
        srv_buf_str(&out, "\n");
        for (k = 0; k < a.n_spans; k++) {
            srv_buf_printf(&out, "span %d: tokens [%d, %d)", k, a.spans[2 * k], a.spans[2 * k + 1]);
            for (i = a.spans[2 * k]; i < a.spans[2 * k + 1] && tok; i++) {
                srv_buf_str(&out, " ");
                text_token(&out, tok, ids[i]);
            }
            srv_buf_str(&out, "\n");
        }
        srv_buf_printf(&out, "%5s %4s %10s %10s %10s %10s %10s %10s %10s\n", "layer", "head", "lambda", "sum", "span", "rest",
                       "neg_sum", "neg_share", "entropy");
        for (l = 0; l < L; l++)
            for (h = 0; h < H; h++) {
                const double *m = mean + ((size_t)l * H + h) * N_METRICS;
                if (!lf[l] || !hf[h]) continue;
                srv_buf_printf(&out, "%5d %4d %10.6f %10.6f %10.6f %10.6f %10.6f %10.6f %10.6f\n", l, h, m[M_LAMBDA], m[M_SUM], m[M_SPAN],
                               m[M_REST], m[M_NEG_SUM], m[M_NEG_SHARE], m[M_ENTROPY]);
            }
    }
    if (flush_buf(&out, stdout, "standard output")) goto done;
    if (svg) {
        figure fg;
        fg.a = &a, fg.cfg = cfg, fg.tok = tok, fg.ids = ids, fg.lf = lf, fg.hf = hf, fg.c = &c, fg.mean = mean;
        fg.pos_from = pos_from, fg.pos_to = pos_to, fg.layer = svg_layer, fg.metric = metric;
        svg_write(&out, &fg);
        if (flush_buf(&out, svg, a.svg)) goto done;
        if (fclose(svg)) {
            svg = NULL;
            cli_fail(a.svg, strerror(errno));
            goto done;
        }
        svg = NULL;
    }
    rc = 0;
done:
    if (svg) {
        fclose(svg);
        remove(a.svg); /* no half-written figure */
    }
    srv_buf_free(&out);
    free(c.m);
    free(c.count);
    free(c.rows);
    free(c.has);
    free(mean);
    free(lf);
    free(hf);
    free(ids);
    dintattn_session_free(sess);
    dintattn_tokenizer_free(tok);
    dintattn_model_free(model);
    return rc;
}
