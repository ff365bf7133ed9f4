/* score: how likely a model finds a text -- per-token log-probabilities, perplexity with
   llama.cpp's protocol, multiple choice as lm-evaluation-harness scores it, and the logits of two
   runs compared (for quantization and precision studies).

       examples/score MODEL (-p TEXT | -f FILE | --ids 1,2,3) [--json]
       examples/score MODEL --ppl FILE [--json]
       examples/score MODEL --choices FILE.jsonl
       examples/score MODEL (-p TEXT | -f FILE | --ids 1,2,3) --save-logits OUT
       examples/score MODEL (-p TEXT | -f FILE | --ids 1,2,3) --kl SAVED [--json]
   and in every mode [--ctx N] [--threads T] [--weights W] [--map M] [--precision P | --fast] [--kernels K] [--kv T]
   [--tokenizer FILE]; --help says what each mode computes and how (docs/examples.md, "score", too).

   Texts are encoded as examples/generate encodes a prompt (textgen.h's tg_encode: the model's
   BOS first when it has one, special tokens' texts as their ids). Log-probabilities come from
   dintattn_logprobs (or, where the logits themselves are needed, dintattn_prefill's rows and
   dintattn_logprob_of): a log-softmax in double of the engine's float32 logits.
   Exits 0 on success, 1 with one line on stderr on any error. */
#define _POSIX_C_SOURCE 200809L
#define DINTATTN_IMPLEMENTATION
#include "../dintattn.h"
#include "strbuf.h"      /* srv_buf, srv_buf_json_str, srv_utf8_char; textgen.h needs it */
#include "textgen.h"     /* tg_encode */
#include "logitcmp.h"    /* lc_stats, lc_add: --kl's comparison, shared with lowbit */
#define CLI_PROG "score"
#include "cli.h" /* cli_engine, cli_text_ids, cli_fail: what the examples share */

#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

static const char *usage =
    "usage: score MODEL (-p TEXT | -f FILE | --ids 1,2,3) [--json]      per-token log-probabilities\n"
    "       score MODEL --ppl FILE [--json]                             perplexity, llama.cpp's protocol\n"
    "       score MODEL --choices FILE.jsonl                            multiple choice, lm-eval's scoring\n"
    "       score MODEL (-p TEXT | -f FILE | --ids ...) --save-logits OUT   ... and the run's logits to OUT\n"
    "       score MODEL (-p TEXT | -f FILE | --ids ...) --kl SAVED [--json]  this run against SAVED's logits\n"
    "  -p, --prompt TEXT   the text (encoded with the model's BOS first, if it has one)\n"
    "  -f, --file FILE     the text of FILE (- : standard input)\n"
    "  --ids LIST          token ids, comma-separated, used as they are (no BOS added; a model\n"
    "                      without a tokenizer is fine)\n"
    "  --json              one JSON object instead of the table (--ppl, --kl: the figures)\n"
    "  --batch B           --ppl's windows and --choices' choices scored B at a time, 1 to 256\n"
    "                      (default 8): one pass over the weights for all of them a step\n"
    "  --ctx N             tokens per window, at most the model's max_seq_len (the default)\n"
    "  --threads T         threads for attention heads and matrix rows (" CLI_THREADS_RANGE ")\n"
    CLI_ENGINE_USAGE
    "  --tokenizer FILE    a tokenizer or tiktoken rank file instead of the model's own\n"
    "  -h, --help          this text\n";
static const char *usage_modes =
    "Scoring a text: log p(token i | tokens before it) for every token but the first, which is\n"
    "context only (the BOS, when the model has one); total and mean negative log-likelihood (NLL)\n"
    "and perplexity exp(mean NLL). A text longer than --ctx is scored in windows of --ctx tokens,\n"
    "each starting from an empty cache with the previous window's last token (so every token is\n"
    "scored once, the first tokens of a window with little context; said on stderr).\n"
    "--ppl: llama.cpp's perplexity tool: the text (BOS first) cut into floor(n / ctx) windows of\n"
    "ctx tokens (at least two: 2 x ctx tokens are needed; the rest is unused), each run from an\n"
    "empty cache with its first token replaced by BOS (if the model has one); only the second\n"
    "half is scored (tokens ctx/2 + 1 .. ctx - 1 of each window). Prints the running perplexity\n"
    "after each window, [1]x,[2]y,..., and \"Final estimate: PPL = p +/- e\", e = p x the standard\n"
    "error of the mean NLL (sqrt((mean(nll^2) - mean(nll)^2) / (count - 1)), as llama.cpp).\n"
    "--choices: each line {\"context\": \"...\", \"choices\": [\"...\", ...], \"gold\": optional index}.\n"
    "Each choice is appended to the context as written (give it its leading space). As lm-eval\n"
    "does: trailing whitespace of the context moves to the front of the choice; context + choice\n"
    "is encoded whole and split where the context's own encoding ends (BOS first if the model has\n"
    "one; an empty context is BOS alone, else EOS); the score is the sum of the choice tokens'\n"
    "log-probabilities. The tokens all choices share are run once per line (dintattn_session_copy),\n"
    "then --batch choices at a time together (dintattn_batch_step).\n"
    "Prints a JSON line per line: pred (argmax of the sums: acc), pred_norm\n"
    "(of sum / the choice's length in characters: acc_norm), pred_bytes (/ length in UTF-8 bytes:\n"
    "acc_bytes), and with gold whether each is right; then a summary line with the accuracies.\n"
    "--save-logits OUT: writes the run's logits: \"DINTLOGT\", then little-endian u32 version (1),\n"
    "n_tokens, n_vocab, window (tokens per window), then the n_tokens int32 ids, then float32\n"
    "[n_tokens, n_vocab]: row i is the logits after token i that scored token i + 1.\n"
    "--kl SAVED: runs the same text and compares with SAVED (same ids, vocabulary and window, or\n"
    "it refuses): KL(saved || this run) in double per scored token (mean, max), top-1 agreement,\n"
    "RMS of the logit difference, and both runs' perplexity.\n";

typedef struct args {
    cli_engine eng; /* MODEL, --ctx, --threads, --weights, --precision, --kv, --kernels, --tokenizer */
    const char *prompt, *file, *ids, *ppl, *choices, *save, *kl;
    int json, batch;
} args;

/* Returns 0, 1 for an error (printed), 2 for --help. */
static int parse_args(int argc, char **argv, args *a)
{
    static const char *const switches[] = {"--json", NULL};
    int i, inputs, modes;
    long v;
    memset(a, 0, sizeof *a);
    cli_engine_init(&a->eng);
    a->batch = 8;
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
        else if (!strcmp(f, "--ppl")) bad = a->ppl != NULL, a->ppl = val;
        else if (!strcmp(f, "--choices")) bad = a->choices != NULL, a->choices = val;
        else if (!strcmp(f, "--save-logits")) bad = a->save != NULL, a->save = val;
        else if (!strcmp(f, "--kl")) bad = a->kl != NULL, a->kl = val;
        else if (!strcmp(f, "--batch")) bad = cli_parse_long(val, 1, 256, &v), a->batch = (int)v;
        else if ((bad = cli_engine_option(&a->eng, CLI_ENGINE | CLI_CTX | CLI_TOKENIZER, f, val, NULL)) < 0)
            return cli_fail("unknown option (see --help)", f);
        if (bad) {
            fprintf(stderr, "score: bad value '%s' for %s (or given twice; see --help)\n", val, f);
            return 1;
        }
    }
    if (!a->eng.model) return cli_fail("no MODEL given (see --help)", NULL);
    inputs = !!a->prompt + !!a->file + !!a->ids;
    modes = !!a->ppl + !!a->choices + !!a->save + !!a->kl;
    if (modes > 1) return cli_fail("give one of --ppl, --choices, --save-logits and --kl", NULL);
    if ((a->ppl || a->choices) && inputs)
        return cli_fail(a->ppl ? "--ppl reads its text from its FILE: no -p, -f or --ids"
                               : "--choices reads its texts from its FILE: no -p, -f or --ids", NULL);
    if (!a->ppl && !a->choices && inputs != 1) return cli_fail("give one text: -p TEXT, -f FILE or --ids LIST (see --help)", NULL);
    return cli_engine_done(&a->eng);
}

/* A token's text for the table: quoted, with \n, \t, \\, \" and \xNN for control bytes and bytes
   of no valid UTF-8 character (a byte-level token may be part of one). */
static void print_token(const dintattn_tokenizer *tok, int id)
{
    size_t len = 0, i = 0;
    const char *s = tok ? dintattn_tokenizer_token(tok, id, &len) : NULL;
    if (!s) {
        fputs("-", stdout);
        return;
    }
    putchar('"');
    while (i < len) {
        unsigned char c = (unsigned char)s[i];
        size_t k = c >= 0x80 ? srv_utf8_char((const unsigned char *)s + i, len - i) : 1;
        if (c == '\n') fputs("\\n", stdout);
        else if (c == '\t') fputs("\\t", stdout);
        else if (c == '\\' || c == '"') printf("\\%c", c);
        else if (c < 0x20 || c == 0x7F || k == 0) printf("\\x%02x", c);
        else fwrite(s + i, 1, k, stdout);
        i += k ? k : 1;
    }
    putchar('"');
}

/* --- saved logits (--save-logits, --kl) ----------------------------------------------------- */

#define LOGITS_MAGIC "DINTLOGT"
#define LOGITS_VERSION 1u
#define LOGITS_HEADER 24 /* magic, then u32 version, n_tokens, n_vocab, window */

static int host_is_little(void)
{
    const unsigned one = 1;
    return *(const unsigned char *)&one == 1;
}

/* Puts n 4-byte words between the host's order and little-endian (a no-op on x86). */
static void le32_words(void *p, size_t n)
{
    unsigned char *b = (unsigned char *)p, t;
    if (host_is_little()) return;
    for (; n > 0; n--, b += 4) t = b[0], b[0] = b[3], b[3] = t, t = b[1], b[1] = b[2], b[2] = t;
}

static void put_u32(unsigned char *p, uint32_t v)
{
    p[0] = (unsigned char)v, p[1] = (unsigned char)(v >> 8), p[2] = (unsigned char)(v >> 16), p[3] = (unsigned char)(v >> 24);
}

static uint32_t get_u32(const unsigned char *p)
{
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

/* Opens SAVED and checks it against this run: the header, the file's size, the ids. */
static FILE *open_saved(const char *path, const int *ids, int n, int V, int window)
{
    unsigned char h[LOGITS_HEADER];
    struct stat st;
    uint32_t version, sn, sv, sw;
    int32_t *saved = NULL;
    char msg[256];
    FILE *f = fopen(path, "rb");
    int i;
    if (!f) return cli_fail(path, strerror(errno)), (FILE *)NULL;
    if (fstat(fileno(f), &st) || fread(h, 1, sizeof h, f) != sizeof h || memcmp(h, LOGITS_MAGIC, 8) != 0) {
        fclose(f);
        return cli_fail(path, "not a logits file of examples/score --save-logits (no DINTLOGT header)"), (FILE *)NULL;
    }
    version = get_u32(h + 8), sn = get_u32(h + 12), sv = get_u32(h + 16), sw = get_u32(h + 20);
    if (version != LOGITS_VERSION) snprintf(msg, sizeof msg, "version %u, this program reads %u", version, LOGITS_VERSION);
    else if (sv != (uint32_t)V) snprintf(msg, sizeof msg, "logits over a vocabulary of %u, this model's is %d", sv, V);
    else if (sn != (uint32_t)n) snprintf(msg, sizeof msg, "%u tokens, this run has %d: not the same text", sn, n);
    else if (sw != (uint32_t)window)
        snprintf(msg, sizeof msg, "scored in windows of %u tokens, this run in windows of %d (give the same --ctx)", sw, window);
    else if ((double)st.st_size != LOGITS_HEADER + 4.0 * sn + 4.0 * sn * sv)
        snprintf(msg, sizeof msg, "%.0f bytes, its header says %.0f (truncated or damaged)", (double)st.st_size,
                 LOGITS_HEADER + 4.0 * sn + 4.0 * sn * sv);
    else msg[0] = 0;
    if (!msg[0] && !(saved = (int32_t *)malloc(sizeof *saved * (size_t)n))) snprintf(msg, sizeof msg, "out of memory");
    if (!msg[0] && fread(saved, 4, (size_t)n, f) != (size_t)n) snprintf(msg, sizeof msg, "cannot read its token ids");
    if (!msg[0]) {
        le32_words(saved, (size_t)n);
        for (i = 0; i < n && saved[i] == ids[i]; i++) {}
        if (i < n) snprintf(msg, sizeof msg, "token %d is id %d there, %d in this run: not the same text (or tokenizer)", i,
                            (int)saved[i], ids[i]);
    }
    free(saved);
    if (msg[0]) {
        fclose(f);
        return cli_fail(path, msg), (FILE *)NULL;
    }
    return f;
}

/* --- scoring a text ------------------------------------------------------------------------ */

/* Scores ids[0..n) in windows of at most C tokens (each window after the first starts with the
   previous one's last token), lp[i] = log p(ids[i] | ...) for i >= 1. With save or saved: the
   logits of every window by dintattn_prefill, and each row written to save / compared with the
   saved row into kl. Returns 0, or 1 (printed). */
static int score_windows(const args *a, dintattn_session *sess, const int *ids, int n, int C, int V, float *lp,
                         FILE *save, FILE *saved, lc_stats *kl)
{
    dintattn_error err;
    float *rows = NULL, *row_saved = NULL;
    int start = 0, rc = 1;
    if (save || saved) {
        rows = (float *)malloc(sizeof(float) * (size_t)(n < C ? n : C) * (size_t)V);
        row_saved = (float *)malloc(sizeof(float) * (size_t)V);
        if (!rows || !row_saved) {
            cli_fail("out of memory for a window of logits", NULL);
            goto done;
        }
    }
    lp[0] = NAN;
    for (;;) {
        const int len = lc_window_len(n, C, start), last = start + len == n;
        int i;
        dintattn_session_reset(sess);
        if (!rows) {
            if (dintattn_logprobs(sess, ids + start, len, lp + start + 1, &err)) {
                cli_fail("scoring", err.message);
                goto done;
            }
        } else {
            if (dintattn_prefill(sess, ids + start, len, rows, 1, &err)) {
                cli_fail("prefill", err.message);
                goto done;
            }
            for (i = 0; i + 1 < len; i++)
                lp[start + i + 1] = (float)dintattn_logprob_of(rows + (size_t)i * V, V, ids[start + i + 1]);
            /* the rows that scored a token of this window, and the very last row of the text */
            for (i = 0; i < len - 1 + last; i++) {
                float *row = rows + (size_t)i * V;
                if (save) {
                    le32_words(row, (size_t)V);
                    if (fwrite(row, sizeof(float), (size_t)V, save) != (size_t)V) {
                        cli_fail(a->save, "cannot write the logits");
                        goto done;
                    }
                } else {
                    if (fread(row_saved, sizeof(float), (size_t)V, saved) != (size_t)V) {
                        cli_fail(a->kl, "cannot read its logits");
                        goto done;
                    }
                    le32_words(row_saved, (size_t)V);
                    if (start + i + 1 < n) lc_add(kl, row_saved, row, V, start + i, ids[start + i + 1]);
                }
            }
        }
        if (last) break;
        start += len - 1;
    }
    rc = 0;
done:
    free(rows);
    free(row_saved);
    return rc;
}

/* --save: the file's header and the ids, before the logits score_windows appends. The open file,
   or NULL (printed). */
static FILE *open_save(const char *path, const int *ids, int n, int V, int window)
{
    unsigned char h[LOGITS_HEADER];
    int32_t *le = (int32_t *)malloc(sizeof(int32_t) * (size_t)n);
    FILE *save;
    int i;
    if (!(save = fopen(path, "wb"))) {
        free(le);
        cli_fail(path, strerror(errno));
        return NULL;
    }
    memcpy(h, LOGITS_MAGIC, 8);
    put_u32(h + 8, LOGITS_VERSION), put_u32(h + 12, (uint32_t)n), put_u32(h + 16, (uint32_t)V);
    put_u32(h + 20, (uint32_t)window);
    if (le) {
        for (i = 0; i < n; i++) le[i] = ids[i];
        le32_words(le, (size_t)n);
    }
    if (!le || fwrite(h, 1, sizeof h, save) != sizeof h || fwrite(le, 4, (size_t)n, save) != (size_t)n) {
        free(le);
        fclose(save);
        remove(path); /* not a file that looks whole */
        cli_fail(path, "cannot write");
        return NULL;
    }
    free(le);
    return save;
}

/* --kl: how this run's distributions differ from the saved ones, as a table or JSON. */
static void report_kl(const args *a, const lc_stats *kl, int n, int window, srv_buf *out)
{
    if (a->json) {
        srv_buf_printf(out, "{\"n_tokens\": %d, \"n_scored\": %lld, \"window\": %d, \"kl_mean\": ", n, kl->n_rows, window);
        srv_buf_num(out, lc_kl_mean(kl));
        srv_buf_str(out, ", \"kl_max\": ");
        srv_buf_num(out, kl->max_kl);
        srv_buf_printf(out, ", \"kl_max_at\": %d, \"top1_same\": %lld, \"top1_agreement\": ", kl->max_at, kl->n_same_top);
        srv_buf_num(out, lc_top1(kl));
        srv_buf_str(out, ", \"logit_rms_diff\": ");
        srv_buf_num(out, lc_rms(kl));
        srv_buf_str(out, ", \"ppl_saved\": ");
        srv_buf_num(out, lc_ppl_ref(kl));
        srv_buf_str(out, ", \"ppl\": ");
        srv_buf_num(out, lc_ppl_run(kl));
        srv_buf_str(out, "}\n");
    } else {
        srv_buf_printf(out, "KL(saved || this run), over %lld scored tokens: mean %.6g, max %.6g (the token after %d)\n",
                       kl->n_rows, lc_kl_mean(kl), kl->max_kl, kl->max_at);
        srv_buf_printf(out, "top-1 agreement: %.4f (%lld of %lld)\n", lc_top1(kl), kl->n_same_top, kl->n_rows);
        srv_buf_printf(out, "RMS of the logit difference: %.6g\n", lc_rms(kl));
        srv_buf_printf(out, "perplexity: saved %.4f, this run %.4f\n", lc_ppl_ref(kl), lc_ppl_run(kl));
    }
}

/* --json: every token with its log-probability, then the totals. */
static void report_json(const dintattn_tokenizer *tok, const int *ids, const float *lp, int n, int bos_first, int window,
                        int n_windows, double nll, srv_buf *out)
{
    int i;
    srv_buf_printf(out, "{\"n_tokens\": %d, \"n_scored\": %d, \"bos_first\": %s, \"window\": %d, \"n_windows\": %d, "
                        "\"tokens\": [", n, n - 1, bos_first ? "true" : "false", window, n_windows);
    for (i = 0; i < n; i++) {
        size_t len = 0;
        const char *s = tok ? dintattn_tokenizer_token(tok, ids[i], &len) : NULL;
        srv_buf_printf(out, "%s{\"id\": %d, \"text\": ", i ? ", " : "", ids[i]);
        if (s) srv_buf_json_str(out, s, len);
        else srv_buf_str(out, "null");
        srv_buf_str(out, ", \"logprob\": ");
        if (i == 0) srv_buf_str(out, "null");
        else if (isfinite(lp[i])) srv_buf_printf(out, "%.9g", lp[i]);
        else srv_buf_str(out, "null");
        srv_buf_str(out, "}");
    }
    srv_buf_str(out, "], \"total_nll\": ");
    srv_buf_num(out, nll);
    srv_buf_str(out, ", \"mean_nll\": ");
    srv_buf_num(out, nll / (n - 1));
    srv_buf_str(out, ", \"perplexity\": ");
    srv_buf_num(out, exp(nll / (n - 1)));
    srv_buf_str(out, "}\n");
}

/* The table: one line per token (printed directly), then the totals into out. Returns 0, or 1 (printed). */
static int report_table(const dintattn_tokenizer *tok, const int *ids, const float *lp, int n, int bos_first, double nll,
                        srv_buf *out)
{
    int i;
    if (cli_flush(out, stdout, "standard output")) return 1;
    printf("%6s %8s %10s  %s\n", "i", "id", "logprob", "token");
    for (i = 0; i < n; i++) {
        if (i == 0) printf("%6d %8d %10s  ", i, ids[i], "-");
        else printf("%6d %8d %10.4f  ", i, ids[i], lp[i]);
        print_token(tok, ids[i]);
        putchar('\n');
    }
    srv_buf_printf(out, "tokens: %d (%d scored%s) | total NLL %.4f | mean NLL %.4f | perplexity %.4f\n", n, n - 1,
                   bos_first ? ", BOS first" : "", nll, nll / (n - 1), exp(nll / (n - 1)));
    return 0;
}

static int run_text(const args *a, const dintattn_model *model, const dintattn_tokenizer *tok, int C)
{
    const int V = dintattn_model_config(model)->vocab_size;
    dintattn_session *sess = NULL;
    FILE *save = NULL, *saved = NULL;
    lc_stats kl;
    srv_buf out;
    float *lp = NULL;
    int *ids = NULL, n, i, rc = 1, window, n_windows, bos_first;
    double nll = 0, t0, t1;
    char msg[256];

    memset(&kl, 0, sizeof kl);
    memset(&out, 0, sizeof out);
    if ((n = cli_text_ids(a->ids, a->file, a->prompt, tok, V, &ids)) < 0) goto done;
    bos_first = !a->ids && tok && dintattn_tokenizer_bos(tok) >= 0;
    if (n < 2) {
        snprintf(msg, sizeof msg, "%d token%s (%s): nothing to score, the first token being context only", n,
                 n == 1 ? "" : "s", bos_first ? "the BOS alone" : "at least 2 are needed");
        cli_fail(a->ids ? "--ids" : "the text is too short", msg);
        goto done;
    }
    if (n > C && C < 2) {
        cli_fail("--ctx 1 cannot score a text of more than one token", "a window needs 2 tokens");
        goto done;
    }
    window = n < C ? n : C;
    n_windows = lc_n_windows(n, C);
    if (a->save && !(save = open_save(a->save, ids, n, V, window))) goto done;
    if (a->kl && !(saved = open_saved(a->kl, ids, n, V, window))) goto done;
    if (!(lp = (float *)malloc(sizeof(float) * (size_t)n))) {
        cli_fail("out of memory", NULL);
        goto done;
    }
    if (cli_session_new(&a->eng, model, window, &sess)) goto done;
    t0 = cli_now();
    if (score_windows(a, sess, ids, n, C, V, lp, save, saved, &kl)) goto done;
    t1 = cli_now();
    if (save) {
        FILE *f = save;
        save = NULL;
        if (fclose(f)) {
            cli_fail(a->save, "cannot write");
            goto done;
        }
    }
    for (i = 1; i < n; i++) nll -= lp[i];
    if (n_windows > 1)
        fprintf(stderr, "score: %d tokens, more than the context of %d: scored in %d windows of up to %d tokens, each "
                        "from an empty cache starting with the previous window's last token\n", n, C, n_windows, C);
    fprintf(stderr, "score: %d tokens in %.2f s (%.1f tok/s) | kernels %s\n", n, t1 - t0, n / (t1 - t0 > 0 ? t1 - t0 : 1e-9),
            dintattn_kernels_name(dintattn_session_kernels(sess)));
    if (a->kl) report_kl(a, &kl, n, window, &out);
    else if (a->json) report_json(tok, ids, lp, n, bos_first, window, n_windows, nll, &out);
    else if (report_table(tok, ids, lp, n, bos_first, nll, &out)) goto done;
    if (cli_flush(&out, stdout, "standard output")) goto done;
    rc = 0;
done:
    if (save) {
        fclose(save);
        remove(a->save); /* not a file that looks whole */
    }
    if (saved) fclose(saved);
    srv_buf_free(&out);
    free(lp);
    free(ids);
    dintattn_session_free(sess);
    return rc;
}

/* --- --ppl: llama.cpp's perplexity --------------------------------------------------------- */

/* dintattn_logprobs for count sequences at once: each session (empty, or holding a context) runs
   ids[k][0..n[k]) and lp[k][t] = log p(ids[k][t + 1] | what precedes) for t < n[k] - 1. The
   sequences advance together, SCORE_CHUNK tokens each per dintattn_batch_step (so that the rows'
   logits, SCORE_CHUNK x vocabulary per sequence in rows, stay bounded); each row's log-softmax is
   the library's (dintattn_logprob_of). Returns 0, or 1 (printed). */
#define SCORE_CHUNK 64
static int batch_logprobs(dintattn_session **sess, const int *const *ids, const int *n, int count, float **lp, float *rows,
                          int V)
{
    dintattn_batch_item items[256];
    dintattn_error err;
    int done[256] = {0}, k, t;
    memset(items, 0, sizeof items);
    for (;;) {
        int m = 0;
        for (k = 0; k < count; k++) {
            if (done[k] >= n[k]) continue;
            items[m].sess = sess[k], items[m].tokens = ids[k] + done[k];
            items[m].n_tokens = n[k] - done[k] < SCORE_CHUNK ? n[k] - done[k] : SCORE_CHUNK;
            items[m].logits = rows + (size_t)k * SCORE_CHUNK * (size_t)V, items[m].all_logits = 1;
            m++;
        }
        if (m == 0) return 0;
        if (dintattn_batch_step(items, m, NULL, &err)) return cli_fail("scoring", err.message);
        for (k = 0, m = 0; k < count; k++) {
            if (done[k] >= n[k]) continue;
            for (t = 0; t < items[m].n_tokens; t++)
                if (done[k] + t + 1 < n[k])
                    lp[k][done[k] + t] = (float)dintattn_logprob_of(rows + ((size_t)k * SCORE_CHUNK + (size_t)t) * (size_t)V, V,
                                                                    ids[k][done[k] + t + 1]);
            done[k] += items[m].n_tokens;
            m++;
        }
    }
}

/* count sessions for a batch (the first is first, made by the caller), and rows for
   batch_logprobs; fewer than asked when they would pass 80% of the available memory (said on
   stderr). Returns the count made, or 0 (printed). */
static int batch_sessions(const args *a, const dintattn_model *model, int C, int want, dintattn_session **sess,
                          float **rows)
{
    const int V = dintattn_model_config(model)->vocab_size;
    const double avail = dintattn_mem_available(), per = (double)dintattn_session_bytes(sess[0]) + 4.0 * SCORE_CHUNK * V;
    int k;
    for (k = 1; k < want; k++) {
        if (avail > 0 && per * (k + 1) > 0.8 * avail) {
            fprintf(stderr, "score: --batch %d: %d sequences fit in the available memory; scoring %d at a time\n", a->batch, k, k);
            break;
        }
        if (cli_session_new(&a->eng, model, C, &sess[k])) return 0;
    }
    *rows = (float *)malloc(sizeof(float) * (size_t)k * SCORE_CHUNK * (size_t)V);
    if (!*rows) return cli_fail("out of memory", NULL), 0;
    return k;
}

static int run_ppl(const args *a, const dintattn_model *model, const dintattn_tokenizer *tok, int C)
{
    const int V = dintattn_model_config(model)->vocab_size, bos = dintattn_tokenizer_bos(tok), first = C / 2;
    dintattn_session *sess[256] = {NULL};
    srv_buf out;
    float *lp = NULL, *rows = NULL, *lps[256];
    const int *wins[256];
    int *ids = NULL, *win = NULL, n, n_windows, w, i, k, B = 0, lens[256], rc = 1;
    long long count = 0;
    double nll = 0, nll2 = 0, *running = NULL, mean, var, se, ppl;
    char msg[256];

    memset(&out, 0, sizeof out);
    if (C < 3) {
        cli_fail("--ppl needs a context of at least 3 tokens", "each window scores tokens ctx/2 + 1 .. ctx - 1");
        goto done;
    }
    if ((n = cli_text_ids(NULL, a->ppl, NULL, tok, V, &ids)) < 0) goto done; /* the text of --ppl's FILE */
    if (n < 2 * C) {
        snprintf(msg, sizeof msg, "it gives %d tokens%s; perplexity with a context of %d needs at least %d (two windows, "
                 "as llama.cpp): give a longer text or a smaller --ctx", n, bos >= 0 ? " with BOS" : "", C, 2 * C);
        cli_fail(a->ppl, msg);
        goto done;
    }
    n_windows = n / C;
    if (cli_session_new(&a->eng, model, C, &sess[0]) ||
        !(B = batch_sessions(a, model, C, a->batch < n_windows ? a->batch : n_windows, sess, &rows)))
        goto done;
    win = (int *)malloc(sizeof(int) * (size_t)C * (size_t)B);
    lp = (float *)malloc(sizeof(float) * (size_t)C * (size_t)B);
    running = (double *)malloc(sizeof(double) * (size_t)n_windows);
    if (!win || !lp || !running) {
        cli_fail("out of memory", NULL);
        goto done;
    }
    fprintf(stderr, "score: %s: %d tokens%s, %d windows of %d (BOS %s), scoring the last %d tokens of each; %d token%s "
                    "after the last window unused\n", a->ppl, n, bos >= 0 ? " (BOS first)" : "", n_windows, C,
            bos >= 0 ? "first in each" : "none: the model has no BOS", C - 1 - first, n - n_windows * C,
            n - n_windows * C == 1 ? "" : "s");
    for (w = 0; w < n_windows; w += B) { /* B windows at a time */
        const int m = n_windows - w < B ? n_windows - w : B;
        for (k = 0; k < m; k++) {
            int *wk = win + (size_t)k * C;
            memcpy(wk, ids + (size_t)(w + k) * C, sizeof(int) * (size_t)C);
            if (bos >= 0) wk[0] = bos;
            dintattn_session_reset(sess[k]);
            wins[k] = wk, lens[k] = C, lps[k] = lp + (size_t)k * C;
        }
        if (batch_logprobs(sess, wins, lens, m, lps, rows, V)) goto done;
        for (k = 0; k < m; k++) {
            for (i = first; i < C - 1; i++) { /* lps[k][i] = log p(win[i + 1] | win[0..i]) */
                nll -= lps[k][i];
                nll2 += (double)lps[k][i] * lps[k][i];
                count++;
            }
            running[w + k] = exp(nll / (double)count);
            if (!a->json) {
                printf("[%d]%.4f,", w + k + 1, running[w + k]);
                fflush(stdout);
            }
        }
    }
    mean = nll / (double)count;
    var = nll2 / (double)count - mean * mean;
    se = var > 0 ? sqrt(var / (double)(count - 1)) : 0;
    ppl = exp(mean);
    if (a->json) {
        srv_buf_printf(&out, "{\"n_tokens\": %d, \"n_ctx\": %d, \"n_windows\": %d, \"n_scored\": %lld, \"bos\": ", n, C,
                       n_windows, count);
        if (bos >= 0) srv_buf_printf(&out, "%d", bos);
        else srv_buf_str(&out, "null");
        srv_buf_str(&out, ", \"running_ppl\": [");
        for (w = 0; w < n_windows; w++) {
            if (w) srv_buf_str(&out, ", ");
            srv_buf_num(&out, running[w]);
        }
        srv_buf_str(&out, "], \"mean_nll\": ");
        srv_buf_num(&out, mean);
        srv_buf_str(&out, ", \"nll_stderr\": ");
        srv_buf_num(&out, se);
        srv_buf_str(&out, ", \"ppl\": ");
        srv_buf_num(&out, ppl);
        srv_buf_str(&out, ", \"ppl_stderr\": ");
        srv_buf_num(&out, ppl * se);
        srv_buf_str(&out, "}\n");
    } else {
        srv_buf_printf(&out, "\nFinal estimate: PPL = %.4f +/- %.5f\n", ppl, ppl * se);
    }
    if (cli_flush(&out, stdout, "standard output")) goto done;
    rc = 0;
done:
    srv_buf_free(&out);
    free(running);
    free(lp);
    free(rows);
    free(win);
    free(ids);
    for (k = 0; k < 256; k++) dintattn_session_free(sess[k]);
    return rc;
}

/* --- --choices: lm-eval-harness's multiple choice ------------------------------------------ */

typedef struct mc_choice {
    int *ids;               /* the model's input: context tokens, then the choice's */
    int n, n_cont;          /* all of them; the choice's (the last n_cont) */
    double chars, bytes;    /* the choice's length as written */
} mc_choice;

typedef struct mc_item {
    int line, gold, n_choices; /* gold: -1 if not given */
    mc_choice *c;
} mc_item;

static void mc_free(mc_item *items, int n)
{
    int i, k;
    for (i = 0; i < n; i++) {
        for (k = 0; k < items[i].n_choices; k++) free(items[i].c[k].ids);
        free(items[i].c);
    }
    free(items);
}

/* One choice's tokens, as lm-eval's _encode_pair and loglikelihood make them (see --help).
   Returns 0, or -1 with msg set. */
static int mc_encode(const dintattn_tokenizer *tok, const char *ctx, size_t ctx_len, const char *choice,
                     size_t choice_len, mc_choice *c, char *msg, size_t cap)
{
    dintattn_error err;
    int *ctx_ids = NULL, *whole = NULL, n_ctx, n_whole, rc = -1;
    size_t keep = ctx_len;
    char *joined = (char *)malloc(ctx_len + choice_len + 1);
    if (!joined) return snprintf(msg, cap, "out of memory"), -1;
    memcpy(joined, ctx, ctx_len);
    memcpy(joined + ctx_len, choice, choice_len);
    joined[ctx_len + choice_len] = 0;
    while (keep > 0 && ctx[keep - 1] && strchr(" \t\n\r\v\f", ctx[keep - 1])) keep--; /* trailing whitespace joins the choice */
    if ((n_ctx = tg_encode(tok, ctx, keep, &ctx_ids, &err)) < 0 ||
        (n_whole = tg_encode(tok, joined, ctx_len + choice_len, &whole, &err)) < 0) {
        snprintf(msg, cap, "cannot encode: %.160s", err.message);
        goto done;
    }
    if (n_ctx == 0) { /* an empty context and no BOS: the EOS stands for it, as lm-eval's prefix token */
        const int eos = dintattn_tokenizer_eos(tok);
        if (eos < 0) {
            snprintf(msg, cap, "the context is empty, and the model has neither BOS nor EOS to put first");
            goto done;
        }
        free(ctx_ids);
        if (!(ctx_ids = (int *)malloc(sizeof(int)))) {
            snprintf(msg, cap, "out of memory");
            goto done;
        }
        ctx_ids[0] = eos;
        n_ctx = 1;
        n_whole += 1;
        {
            int *grown = (int *)realloc(whole, sizeof(int) * (size_t)n_whole);
            if (!grown) {
                snprintf(msg, cap, "out of memory");
                goto done;
            }
            whole = grown;
            memmove(whole + 1, whole, sizeof(int) * (size_t)(n_whole - 1));
            whole[0] = eos;
        }
    }
    if (n_whole <= n_ctx) {
        snprintf(msg, cap, "context + choice encode to %d tokens, the context alone to %d: the choice adds none (it "
                           "merges into the context's last token; begin it with a space?)", n_whole, n_ctx);
        goto done;
    }
    /* the context's own tokens, then what the whole encoding has past their count */
    memcpy(whole, ctx_ids, sizeof(int) * (size_t)n_ctx);
    c->ids = whole;
    whole = NULL;
    c->n = n_whole;
    c->n_cont = n_whole - n_ctx;
    rc = 0;
done:
    free(joined);
    free(ctx_ids);
    free(whole);
    return rc;
}

/* Reads and encodes every line of the file; returns the count, or -1 (printed). */
static int mc_read(const char *path, const dintattn_tokenizer *tok, int V, int C, mc_item **out, int *longest)
{
    dintattn_json *j = NULL;
    dintattn_error jerr;
    char *text, *line, msg[320];
    size_t len, at = 0;
    int n = 0, cap = 0, line_no = 0, k, i;
    mc_item *items = NULL;
    *out = NULL;
    *longest = 0;
    if (!(text = cli_read_all(path, &len))) return cli_fail(path, strerror(errno)), -1;
    msg[0] = 0;
    while (at < len && !msg[0]) {
        const dintattn_json_node *root, *choices, *gold;
        const char *ctx;
        size_t end = at, p, ctx_len;
        long long g = -1;
        int n_choices;
        mc_item *it;
        line = text + at;
        while (end < len && text[end] != '\n') end++;
        at = end + 1;
        line_no++;
        for (p = 0; line + p < text + end && line[p] && strchr(" \t\r", line[p]); p++) {}
        if (line + p == text + end) continue; /* a blank line */
        if (dintattn_json_parse(line, (size_t)(text + end - line), &j, &jerr) != DINTATTN_OK) {
            snprintf(msg, sizeof msg, "line %d is not valid JSON: %.200s", line_no, jerr.message);
            break;
        }
        root = dintattn_json_root(j);
        ctx = dintattn_json_str(j, dintattn_json_get(j, root, "context"), &ctx_len);
        choices = dintattn_json_get(j, root, "choices");
        n_choices = dintattn_json_len(j, choices);
        gold = dintattn_json_get(j, root, "gold");
        if (dintattn_json_type(j, root) != DINTATTN_JSON_OBJECT) snprintf(msg, sizeof msg, "line %d: not a JSON object", line_no);
        else if (!ctx) snprintf(msg, sizeof msg, "line %d: \"context\" must be a string", line_no);
        else if (dintattn_json_type(j, choices) != DINTATTN_JSON_ARRAY || n_choices < 1)
            snprintf(msg, sizeof msg, "line %d: \"choices\" must be a non-empty array of strings", line_no);
        else if (dintattn_json_type(j, gold) != DINTATTN_JSON_NULL &&
                 (!dintattn_json_int(j, gold, &g) || g < 0 || g >= n_choices))
            snprintf(msg, sizeof msg, "line %d: \"gold\" must be an index into \"choices\" (0 to %d)", line_no,
                     n_choices - 1);
        if (msg[0]) break;
        if (n == cap) {
            mc_item *grown = (mc_item *)realloc(items, sizeof *items * (size_t)(cap = cap ? 2 * cap : 16));
            if (!grown) {
                snprintf(msg, sizeof msg, "out of memory");
                break;
            }
            items = grown;
        }
        it = &items[n++];
        it->line = line_no;
        it->gold = dintattn_json_type(j, gold) == DINTATTN_JSON_NUMBER ? (int)g : -1;
        it->n_choices = 0;
        if (!(it->c = (mc_choice *)calloc((size_t)n_choices, sizeof *it->c))) {
            snprintf(msg, sizeof msg, "out of memory");
            break;
        }
        for (k = 0; k < n_choices && !msg[0]; k++) {
            mc_choice *c = &it->c[k];
            char why[200];
            size_t ch_len;
            const char *ch = dintattn_json_str(j, dintattn_json_at(j, choices, k), &ch_len);
            if (!ch || ch_len == 0) {
                snprintf(msg, sizeof msg, "line %d: choice %d must be a non-empty string", line_no, k);
                break;
            }
            it->n_choices = k + 1;
            c->bytes = (double)ch_len;
            for (p = 0; p < ch_len; p++) c->chars += ((unsigned char)ch[p] & 0xC0) != 0x80;
            if (mc_encode(tok, ctx, ctx_len, ch, ch_len, c, why, sizeof why)) {
                snprintf(msg, sizeof msg, "line %d, choice %d: %s", line_no, k, why);
                break;
            }
            for (i = 0; i < c->n; i++)
                if (c->ids[i] < 0 || c->ids[i] >= V) {
                    snprintf(msg, sizeof msg, "line %d, choice %d: token id %d is outside the model's vocabulary [0, %d)",
                             line_no, k, c->ids[i], V);
                    break;
                }
            if (!msg[0] && c->n > C)
                snprintf(msg, sizeof msg, "line %d, choice %d: %d tokens with the context, more than the context of %d "
                         "(lm-eval would cut the context on the left; score refuses)", line_no, k, c->n, C);
            if (c->n > *longest) *longest = c->n;
        }
        dintattn_json_free(j);
        j = NULL;
    }
    dintattn_json_free(j);
    free(text);
    if (!msg[0] && n == 0) snprintf(msg, sizeof msg, "no lines to score");
    if (msg[0]) {
        mc_free(items, n);
        return cli_fail(path, msg), -1;
    }
    *out = items;
    return n;
}

/* lm-eval's mean_stderr of 0/1 outcomes: the sample standard deviation over sqrt(n). */
static void json_acc(srv_buf *b, const char *name, int right, int n)
{
    const double m = (double)right / n;
    srv_buf_printf(b, ", \"%s\": ", name);
    srv_buf_num(b, m);
    srv_buf_printf(b, ", \"%s_stderr\": ", name);
    if (n > 1) srv_buf_num(b, sqrt(((double)right * (1 - m) * (1 - m) + (double)(n - right) * m * m) / (n - 1) / n));
    else srv_buf_str(b, "null");
}

static int run_choices(const args *a, const dintattn_model *model, const dintattn_tokenizer *tok, int C)
{
    const int V = dintattn_model_config(model)->vocab_size;
    dintattn_error err;
    dintattn_session *sess[256] = {NULL}, *shared = NULL;
    mc_item *items = NULL;
    srv_buf out;
    float *lp = NULL, *rows = NULL, *lps[256];
    const int *cids[256];
    int n_items, longest, i, k, t, j, B = 0, lens[256], rc = 1, n_gold = 0, right[3] = {0, 0, 0};
    double *ll = NULL;

    memset(&out, 0, sizeof out);
    if ((n_items = mc_read(a->choices, tok, V, C, &items, &longest)) < 0) goto done;
    for (i = 0, k = 0; i < n_items; i++) k = items[i].n_choices > k ? items[i].n_choices : k;
    ll = (double *)malloc(sizeof(double) * (size_t)k);
    if (!ll) {
        cli_fail("out of memory", NULL);
        goto done;
    }
    if (cli_session_new(&a->eng, model, longest, &sess[0]) || cli_session_new(&a->eng, model, longest, &shared) ||
        !(B = batch_sessions(a, model, longest, a->batch < k ? a->batch : k, sess, &rows)))
        goto done;
    lp = (float *)malloc(sizeof(float) * (size_t)longest * (size_t)B);
    if (!lp) {
        cli_fail("out of memory", NULL);
        goto done;
    }
    for (i = 0; i < n_items; i++) {
        const mc_item *it = &items[i];
        int pred[3] = {0, 0, 0}, m, P = it->c[0].n - it->c[0].n_cont - 1;
        /* P: the tokens every choice starts with, run once (dintattn_session_copy gives each choice
           a session holding them); the context's last token stays out, as the choice's first
           log-probability is read from its row */
        for (k = 1; k < it->n_choices; k++) {
            const mc_choice *c = &it->c[k];
            if (c->n - c->n_cont - 1 < P) P = c->n - c->n_cont - 1;
            for (t = 0; t < P && c->ids[t] == it->c[0].ids[t]; t++) {}
            P = t;
        }
        dintattn_session_reset(shared);
        if (P > 0 && dintattn_prefill(shared, it->c[0].ids, P, NULL, 0, &err)) {
            cli_fail("scoring", err.message);
            goto done;
        }
        for (k = 0; k < it->n_choices; k++) {
            const mc_choice *c = &it->c[k];
            if (k % B == 0) { /* the next B choices, each from a copy of the shared tokens, scored together */
                const int m = it->n_choices - k < B ? it->n_choices - k : B;
                for (j = 0; j < m; j++) {
                    const mc_choice *cj = &it->c[k + j];
                    if (dintattn_session_copy(sess[j], shared, &err)) {
                        cli_fail("scoring", err.message);
                        goto done;
                    }
                    cids[j] = cj->ids + P, lens[j] = cj->n - P, lps[j] = lp + (size_t)j * longest;
                }
                if (batch_logprobs(sess, cids, lens, m, lps, rows, V)) goto done;
            }
            ll[k] = 0;
            for (t = c->n - 1 - c->n_cont; t < c->n - 1; t++) ll[k] += lps[k % B][t - P]; /* [t - P]: the token at t + 1 */
            /* the first best, as numpy's argmax */
            if (ll[k] > ll[pred[0]]) pred[0] = k;
            if (ll[k] / c->chars > ll[pred[1]] / it->c[pred[1]].chars) pred[1] = k;
            if (ll[k] / c->bytes > ll[pred[2]] / it->c[pred[2]].bytes) pred[2] = k;
        }
        srv_buf_printf(&out, "{\"line\": %d, \"pred\": %d, \"pred_norm\": %d, \"pred_bytes\": %d", it->line, pred[0], pred[1],
                       pred[2]);
        if (it->gold >= 0) {
            n_gold++;
            srv_buf_printf(&out, ", \"gold\": %d, \"acc\": %d, \"acc_norm\": %d, \"acc_bytes\": %d", it->gold,
                           pred[0] == it->gold, pred[1] == it->gold, pred[2] == it->gold);
            for (m = 0; m < 3; m++) right[m] += pred[m] == it->gold;
        }
        srv_buf_str(&out, ", \"choices\": [");
        for (k = 0; k < it->n_choices; k++) {
            const mc_choice *c = &it->c[k];
            srv_buf_printf(&out, "%s{\"logprob\": ", k ? ", " : "");
            srv_buf_num(&out, ll[k]);
            srv_buf_printf(&out, ", \"n_tokens\": %d, \"chars\": %.0f, \"bytes\": %.0f, \"norm\": ", c->n_cont, c->chars, c->bytes);
            srv_buf_num(&out, ll[k] / c->chars);
            srv_buf_str(&out, ", \"norm_bytes\": ");
            srv_buf_num(&out, ll[k] / c->bytes);
            srv_buf_str(&out, "}");
        }
        srv_buf_str(&out, "]}\n");
        if (cli_flush(&out, stdout, "standard output")) goto done;
    }
    srv_buf_printf(&out, "{\"summary\": {\"lines\": %d, \"with_gold\": %d", n_items, n_gold);
    if (n_gold > 0) {
        json_acc(&out, "acc", right[0], n_gold);
        json_acc(&out, "acc_norm", right[1], n_gold);
        json_acc(&out, "acc_bytes", right[2], n_gold);
        fprintf(stderr, "score: %d lines, %d with gold: acc %.4f, acc_norm %.4f, acc_bytes %.4f\n", n_items, n_gold,
                (double)right[0] / n_gold, (double)right[1] / n_gold, (double)right[2] / n_gold);
    }
    srv_buf_str(&out, "}}\n");
    if (cli_flush(&out, stdout, "standard output")) goto done;
    rc = 0;
done:
    srv_buf_free(&out);
    mc_free(items, n_items > 0 ? n_items : 0);
    free(lp);
    free(rows);
    free(ll);
    for (k = 0; k < 256; k++) dintattn_session_free(sess[k]);
    dintattn_session_free(shared);
    return rc;
}

int main(int argc, char **argv)
{
    args a;
    dintattn_error err;
    dintattn_model *model = NULL;
    dintattn_tokenizer *tok = NULL;
    int rc = 1, C, max_ctx;
    char msg[128];
    argv = cli_aliases(&argc, argv);

    rc = parse_args(argc, argv, &a);
    if (rc == 2) {
        cli_usage(stdout, usage, 22), fputs(usage_modes, stdout);
        return 0;
    }
    if (rc) return 1;
    rc = 1;
    if (cli_load_model(a.eng.model, a.eng.weights, a.eng.map, a.eng.threads, &model, &err)) return cli_fail(a.eng.model, err.message);
    /* --ids needs no tokenizer: without one, no token texts */
    if (cli_load_tokenizer(&a.eng, model, a.ids != NULL, &tok)) goto done;
    max_ctx = dintattn_model_config(model)->max_seq_len;
    if (a.eng.ctx > max_ctx) {
        snprintf(msg, sizeof msg, "%d is more than the model's context of %d tokens", a.eng.ctx, max_ctx);
        cli_fail("--ctx", msg);
        goto done;
    }
    C = a.eng.ctx ? a.eng.ctx : max_ctx;
    if (a.ppl) rc = run_ppl(&a, model, tok, C);
    else if (a.choices) rc = run_choices(&a, model, tok, C);
    else rc = run_text(&a, model, tok, C);
done:
    dintattn_tokenizer_free(tok);
    dintattn_model_free(model);
    return rc;
}
