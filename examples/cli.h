/* cli.h: what the example programs' command lines share, so that each rule has one home.

     cli_fail          "PROG: what: detail" on stderr, one line; returns 1 (the exit status)
     cli_parse_long    a decimal integer in [lo, hi]; cli_parse_int the same into an int;
     cli_parse_float   cli_parse_float a number in [lo, hi] into a float
     cli_parse_ids     "1,2,3" into a new array of token ids
     cli_read_file     a whole file into a NUL-terminated buffer; cli_read_all the same, "-" being
                       standard input
     cli_now           a monotonic clock, in seconds
     cli_engine        the engine options every model-running example takes: --threads, --weights,
                       --map, --precision (--fast: cli_aliases), --kernels (default
                       $DINTATTN_KERNELS), --kv, --ctx, --tokenizer
                       (cli_engine_init, cli_engine_option, cli_engine_done), and what is made
                       from them: cli_load_model (cli_model_failed says why not),
                       cli_load_tokenizer, cli_context, cli_session_options, cli_session_new
     cli_usage         an example's usage text, CLI_ENGINE_USAGE's lines of the engine options
                       among its own, the descriptions at the example's column
     cli_arg           one word of an argument loop: MODEL, --help, a switch, or a flag and its
                       value
     cli_text_ids      the ids of -p TEXT, -f FILE or --ids LIST, checked against the vocabulary
                       (only when textgen.h is included first: it encodes with tg_encode)

   Include after dintattn.h (with the implementation), having defined CLI_PROG, the program's
   name for its messages:
       #define CLI_PROG "score"
       #include "cli.h"
   The functions print what goes wrong (with cli_fail) where they say so, and only there. C99;
   needs _POSIX_C_SOURCE >= 199309L (clock_gettime) defined before the first #include. */
#ifndef DINTATTN_CLI_H
#define DINTATTN_CLI_H

#ifndef CLI_PROG
#error "define CLI_PROG (the program's name for its messages) before including cli.h"
#endif

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#if defined(__GNUC__)
#define CLI_FN static __attribute__((unused)) /* not every example calls every function */
#else
#define CLI_FN static
#endif

/* The model the examples run when none is given: the one shipped in the repository. */
#define CLI_DEFAULT_MODEL "models/dint-kjv.safetensors"

/* --- messages and numbers -------------------------------------------------------------------- */

/* Prints "PROG: what: detail" (or "PROG: what" when detail is NULL) on stderr; returns 1. */
CLI_FN int cli_fail(const char *what, const char *detail)
{
    fprintf(stderr, CLI_PROG ": %s%s%s\n", what, detail ? ": " : "", detail ? detail : "");
    return 1;
}

/* A whole decimal integer in [lo, hi] into *out (set even when out of range); 0, or -1. */
CLI_FN int cli_parse_long(const char *s, long lo, long hi, long *out)
{
    char *end;
    errno = 0;
    *out = strtol(s, &end, 10);
    return errno || end == s || *end || *out < lo || *out > hi ? -1 : 0;
}

/* cli_parse_long into an int, *out set only on success; 0, or -1. */
CLI_FN int cli_parse_int(const char *s, long lo, long hi, int *out)
{
    long v;
    if (cli_parse_long(s, lo, hi, &v) || v < INT_MIN || v > INT_MAX) return -1;
    *out = (int)v;
    return 0;
}

/* A whole number (strtod's syntax) in [lo, hi] into *out, set only on success; 0, or -1. */
CLI_FN int cli_parse_float(const char *s, float lo, float hi, float *out)
{
    char *end;
    double v;
    errno = 0;
    v = strtod(s, &end);
    if (errno || end == s || *end || !(v >= lo && v <= hi)) return -1;
    *out = (float)v;
    return 0;
}

/* Parses "1,2,3" into a new array (*out, the caller frees it, even on failure); returns the count,
   or -1 on a malformed list. */
CLI_FN int cli_parse_ids(const char *s, int **out)
{
    int n = 1, k;
    const char *p;
    for (p = s; *p; p++) n += *p == ',';
    *out = (int *)malloc(sizeof(int) * (size_t)n);
    if (!*out) return -1;
    for (p = s, k = 0; k < n; k++) {
        char *end;
        long v;
        errno = 0;
        v = strtol(p, &end, 10);
        if (errno || end == p || v < INT_MIN || v > INT_MAX || (*end != ',' && *end != 0)) return -1;
        (*out)[k] = (int)v;
        p = end + 1;
    }
    return n;
}

/* --- files and time -------------------------------------------------------------------------- */

/* Reads f to its end into a NUL-terminated buffer; *len excludes the NUL. NULL with errno set
   (ENOMEM, EIO) on failure. Does not close f. */
CLI_FN char *cli_read_stream(FILE *f, size_t *len)
{
    char *buf = NULL;
    size_t cap = 0, n = 0, got;
    do {
        if (n + 65536 + 1 > cap) {
            char *grown = (char *)realloc(buf, cap = 2 * cap + 65536 + 1);
            if (!grown) {
                free(buf);
                errno = ENOMEM;
                return NULL;
            }
            buf = grown;
        }
        got = fread(buf + n, 1, 65536, f);
        n += got;
    } while (got > 0);
    if (ferror(f)) {
        free(buf);
        errno = EIO;
        return NULL;
    }
    buf[n] = 0;
    *len = n;
    return buf;
}

/* Reads the whole file at path (as a name, even "-"); NULL with errno set on failure. */
CLI_FN char *cli_read_file(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    char *buf;
    int e;
    if (!f) return NULL;
    buf = cli_read_stream(f, len);
    e = errno;
    fclose(f);
    errno = e;
    return buf;
}

/* cli_read_file, but "-" is standard input. */
CLI_FN char *cli_read_all(const char *path, size_t *len)
{
    return strcmp(path, "-") ? cli_read_file(path, len) : cli_read_stream(stdin, len);
}

/* Seconds on a monotonic clock. */
CLI_FN double cli_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

/* --- the engine options ---------------------------------------------------------------------- */

/* "--fast" is "--precision fast": argv with each --fast spelled out as the two words (a new
   array, kept for the program's life), or argv itself when there is none. *argc follows. On no
   memory, argv as it was (--fast then is an unknown option). */
CLI_FN char **cli_aliases(int *argc, char **argv)
{
    static char **out;
    static char precision[] = "--precision", fast[] = "fast";
    int i, n = 0, k = 0;
    for (i = 0; i < *argc; i++) n += !strcmp(argv[i], "--fast");
    if (!n || out || !(out = (char **)calloc((size_t)*argc + (size_t)n + 1, sizeof *out))) return argv;
    for (i = 0; i < *argc; i++) {
        if (strcmp(argv[i], "--fast")) out[k++] = argv[i];
        else out[k++] = precision, out[k++] = fast;
    }
    *argc = k;
    return out;
}

/* --threads takes 1 to CLI_MAX_THREADS: more threads than that would only queue on the cores of
   today's largest CPUs. CLI_STR spells a number for usage texts, so that they state the limit
   the parser checks. */
#define CLI_MAX_THREADS 256
#define CLI_STR_(x) #x
#define CLI_STR(x) CLI_STR_(x)

/* What of a model, its tokenizer and a session the command line chose. */
typedef struct cli_engine {
    const char *model;          /* MODEL (the example sets it) */
    const char *prompt_flag;    /* the example's prompt option ("-p"), or NULL: what cli_arg and
                                   cli_model_failed suggest for a word that reads like a prompt */
    const char *tokenizer;      /* --tokenizer FILE, or NULL: the model's own */
    int threads;                /* --threads T (1 to CLI_MAX_THREADS, default 2) */
    int ctx;                    /* --ctx N, or 0: the example's default */
    dintattn_weights weights;   /* --weights W */
    dintattn_map map;           /* --map M */
    dintattn_precision precision; /* --precision P */
    dintattn_kv_type kv;        /* --kv T */
    dintattn_kernels kernels;   /* --kernels K, else $DINTATTN_KERNELS (set by cli_engine_done) */
    const char *kernels_text;   /* the text it comes from, or NULL (auto) */
    const char *kernels_from;   /* where that text came from, for messages: "--kernels" or "DINTATTN_KERNELS" */
} cli_engine;

/* Which options an example takes (cli_engine_option's accept). */
enum {
    CLI_THREADS = 1, CLI_WEIGHTS = 2, CLI_PRECISION = 4, CLI_KERNELS = 8, CLI_KV = 16, CLI_CTX = 32, CLI_TOKENIZER = 64,
    CLI_MAP = 128,
    CLI_ENGINE = CLI_THREADS | CLI_WEIGHTS | CLI_PRECISION | CLI_KERNELS | CLI_KV | CLI_MAP /* every model-running example's */
};

/* The usage lines of the engine options every model-running example takes (cli_engine_option's
   --weights, --map, --precision, --kernels and --kv, and cli_aliases' --fast), each option and
   its description apart by a tab, continuation lines starting with one: an example's usage text
   includes them and prints itself with cli_usage, which sets the descriptions at its column. */
#define CLI_ENGINE_USAGE                                                                          \
    "  --weights W\thold weights as stored (file, the default) or as f32, bf16, q8 or q4\n"      \
    "  --map M\tauto (default), file or copy: where weights kept as stored are read;\n"           \
    "\tauto copies the file into memory (2 MiB pages) when it takes at most\n"                     \
    "\t2/3 of the available memory, file reads it mapped, copy always copies\n"                    \
    "  --precision P\tauto (default: Q8/Q4 weights multiply int8 activations), exact (f32)\n"     \
    "\tor fast (also BF16 and F16 weights multiply bf16 activations; on AMX,\n"                    \
    "\tprompts of every weight type but F32 on bf16 tiles)\n"                                      \
    "  --fast\tthe same as --precision fast\n"                                                    \
    "  --kernels K\tthe highest kernel level: auto, portable, avx2, avx512 or amx\n"              \
    "\t(default: $DINTATTN_KERNELS when set, else auto)\n"                                         \
    "  --kv T\tthe KV cache's type: f32 (default), bf16 or q8 (int8, a scale per row)\n"

/* The usage lines of --threads and --tokenizer, for the examples that take them. */
#define CLI_THREADS_RANGE "1 to " CLI_STR(CLI_MAX_THREADS) ", default 2"
#define CLI_TOKENIZER_USAGE                                                                       \
    "  --tokenizer FILE\tthe tokenizer to use instead of the model's own: a tiktoken rank file,\n" \
    "\ta tokenizer file (tools/convert.py --format tokenizer) or a model file\n"

/* Prints a usage text to f, each line's part after its first tab padded to column col (one
   space at least); lines without a tab as they are. */
CLI_FN void cli_usage(FILE *f, const char *text, int col)
{
    while (*text) {
        const char *end = strchr(text, '\n'), *tab;
        size_t n = end ? (size_t)(end - text) + 1 : strlen(text);
        tab = (const char *)memchr(text, '\t', n);
        if (tab) {
            int w = (int)(tab - text);
            fprintf(f, "%.*s%*s", w, text, w < col ? col - w : 1, "");
            n -= (size_t)(tab + 1 - text), text = tab + 1;
        }
        fwrite(text, 1, n, f);
        text += n;
    }
}

/* The defaults: all zero (the engine's), 2 threads, the kernel level from $DINTATTN_KERNELS. */
CLI_FN void cli_engine_init(cli_engine *e)
{
    memset(e, 0, sizeof *e);
    e->threads = 2;
    e->kernels_text = getenv("DINTATTN_KERNELS");
    e->kernels_from = "DINTATTN_KERNELS";
}

/* Takes flag and its value val if flag is one of the options in accept: --threads (1 to
   CLI_MAX_THREADS),
   --ctx (>= 1), --tokenizer (once), --weights, --map, --precision, --kv and --kernels (the library's
   names). Returns -1 if flag is none of them (val untouched), 0 when taken, 1 for a bad value or
   a second --tokenizer, with err's message when the library gave one (err may be NULL).
   Prints nothing. */
CLI_FN int cli_engine_option(cli_engine *e, unsigned accept, const char *flag, const char *val, dintattn_error *err)
{
    long v;
    if (err) err->message[0] = 0;
    if ((accept & CLI_THREADS) && !strcmp(flag, "--threads")) return cli_parse_long(val, 1, CLI_MAX_THREADS, &v) ? 1 : (e->threads = (int)v, 0);
    if ((accept & CLI_CTX) && !strcmp(flag, "--ctx")) return cli_parse_long(val, 1, INT_MAX, &v) ? 1 : (e->ctx = (int)v, 0);
    if ((accept & CLI_TOKENIZER) && !strcmp(flag, "--tokenizer")) {
        int twice = e->tokenizer != NULL;
        e->tokenizer = val;
        return twice;
    }
    if ((accept & CLI_WEIGHTS) && !strcmp(flag, "--weights")) return dintattn_weights_parse(val, &e->weights, err) != DINTATTN_OK;
    if ((accept & CLI_MAP) && !strcmp(flag, "--map")) return dintattn_map_parse(val, &e->map, err) != DINTATTN_OK;
    if ((accept & CLI_PRECISION) && !strcmp(flag, "--precision"))
        return dintattn_precision_parse(val, &e->precision, err) != DINTATTN_OK;
    if ((accept & CLI_KV) && !strcmp(flag, "--kv")) return dintattn_kv_parse(val, &e->kv, err) != DINTATTN_OK;
    if ((accept & CLI_KERNELS) && !strcmp(flag, "--kernels")) {
        e->kernels_text = val, e->kernels_from = flag;
        return dintattn_kernels_parse(val, &e->kernels, err) != DINTATTN_OK;
    }
    return -1;
}

/* One word of an example's argument loop, argv[*i]: CLI_ARG_HELP for -h or --help; CLI_ARG_MODEL
   for a word not starting with '-', the MODEL (into e->model; a second one is CLI_ARG_FAIL,
   suggesting e->prompt_flag when the example takes a prompt);
   CLI_ARG_SWITCH for one of switches (NULL-terminated, or NULL), which takes no value; any other
   flag is CLI_ARG_VALUE, *val being the next word (*i moves past it; CLI_ARG_FAIL when there is
   none). Prints its failures. */
enum { CLI_ARG_FAIL = -1, CLI_ARG_HELP, CLI_ARG_MODEL, CLI_ARG_SWITCH, CLI_ARG_VALUE };
CLI_FN int cli_arg(int argc, char **argv, int *i, const char *const *switches, cli_engine *e, const char **val)
{
    const char *f = argv[*i];
    *val = NULL;
    if (!strcmp(f, "-h") || !strcmp(f, "--help")) return CLI_ARG_HELP;
    if (f[0] != '-') {
        if (e->model && e->prompt_flag) {
            fprintf(stderr, CLI_PROG ": '%s' follows MODEL '%s'; to give a prompt, use %s \"%s\"\n", f, e->model,
                    e->prompt_flag, f);
            return CLI_ARG_FAIL;
        }
        if (e->model) return cli_fail("more than one MODEL given", f), CLI_ARG_FAIL;
        e->model = f;
        return CLI_ARG_MODEL;
    }
    for (; switches && *switches; switches++)
        if (!strcmp(f, *switches)) return CLI_ARG_SWITCH;
    if (*i + 1 >= argc) return cli_fail("missing value for", f), CLI_ARG_FAIL;
    *val = argv[++*i];
    return CLI_ARG_VALUE;
}

/* Parses the kernel level text (NULL: *k stays) into *k; a bad one is printed as
   "PROG: from: why". Returns 0, or 1. */
CLI_FN int cli_kernels(const char *text, const char *from, dintattn_kernels *k)
{
    dintattn_error err;
    if (text && dintattn_kernels_parse(text, k, &err)) return cli_fail(from, err.message);
    return 0;
}

/* After the command line: settles the kernel level (a bad $DINTATTN_KERNELS is found here).
   Returns 0, or 1 (printed). */
CLI_FN int cli_engine_done(cli_engine *e)
{
    return cli_kernels(e->kernels_text, e->kernels_from, &e->kernels);
}

/* Loads the model at path holding its weights as weights, where map says (the library's
   dintattn_map), converting on `threads` threads, showing progress on stderr under PROG's name.
   Prints nothing: returns the library's status, err saying why. */
CLI_FN dintattn_result cli_load_model(const char *path, dintattn_weights weights, dintattn_map map, int threads,
                                      dintattn_model **model, dintattn_error *err)
{
    dintattn_load_options lo;
    memset(&lo, 0, sizeof lo);
    lo.weights = weights;
    lo.map = map;
    lo.n_threads = threads;
    lo.progress = dintattn_progress_stderr, lo.progress_user = (void *)CLI_PROG;
    return dintattn_model_load(path, &lo, model, err);
}

/* The tokenizer of --tokenizer, else the model's own, into *tok. When optional and the model has
   none (and no --tokenizer was given), *tok is NULL and that is no error. Returns 0, or 1
   (printed: "PROG: MODEL: why", or "PROG: --tokenizer FILE: why (the kinds of file it takes)"); a
   --tokenizer file that loads is reported on stderr with the kind of file it was read as. */
CLI_FN int cli_load_tokenizer(const cli_engine *e, const dintattn_model *model, int optional, dintattn_tokenizer **tok)
{
    dintattn_error err;
    if (e->tokenizer ? dintattn_tokenizer_load(e->tokenizer, tok, &err) : dintattn_tokenizer_from_model(model, tok, &err)) {
        *tok = NULL;
        if (e->tokenizer) {
            fprintf(stderr, CLI_PROG ": --tokenizer %s: %s (it takes a tiktoken rank file, a tokenizer file of "
                    "tools/convert.py --format tokenizer, or a model file that carries a tokenizer)\n", e->tokenizer,
                    err.message);
            return 1;
        }
        if (!optional) return cli_fail(e->model, err.message);
    } else if (e->tokenizer) { /* the option takes three kinds of file: say which this one was */
        fprintf(stderr, CLI_PROG ": --tokenizer %s: read as a %s\n", e->tokenizer, dintattn_tokenizer_source(*tok));
    }
    return 0;
}

/* Session options of n_ctx tokens with the chosen threads, kernels, precision and KV type. */
CLI_FN void cli_session_options(const cli_engine *e, int n_ctx, dintattn_session_options *so)
{
    memset(so, 0, sizeof *so);
    so->n_ctx = n_ctx;
    so->n_threads = e->threads;
    so->kernels = e->kernels;
    so->precision = e->precision;
    so->kv = e->kv;
}

/* A session of n_ctx tokens with cli_session_options. Returns 0, or 1 (printed: "PROG: cannot
   start a session: why"). */
CLI_FN int cli_session_new(const cli_engine *e, const dintattn_model *model, int n_ctx, dintattn_session **sess)
{
    dintattn_session_options so;
    dintattn_error err;
    cli_session_options(e, n_ctx, &so);
    if (dintattn_session_new(model, &so, sess, &err)) return cli_fail("cannot start a session", err.message);
    return 0;
}

/* The context a session gets, in tokens: --ctx when given, but at most the model's (a larger one
   is said on stderr, and the model's used); else the model's, at most cap when cap > 0 (a
   default that keeps a long-context model's KV cache small). */
CLI_FN int cli_context(const cli_engine *e, const dintattn_model *model, int cap)
{
    int max = dintattn_model_config(model)->max_seq_len;
    if (e->ctx > max) {
        fprintf(stderr, CLI_PROG ": --ctx %d is past the model's context of %d: using %d\n", e->ctx, max, max);
        return max;
    }
    if (e->ctx > 0) return e->ctx;
    return cap > 0 && cap < max ? cap : max;
}

/* Prints why MODEL did not load ("PROG: MODEL: why"). When the program takes a prompt with
   prompt_flag (cli_engine's; NULL: it takes none) and MODEL is no file and reads like text rather
   than a path (a space in it, or neither a '/' nor a ".safetensors"), it says how to give a
   prompt instead. Returns 1. */
CLI_FN int cli_model_failed(const char *path, const dintattn_error *err, const char *prompt_flag)
{
    size_t n = strlen(path);
    FILE *f = fopen(path, "rb");
    int text_like = strchr(path, ' ') || (!strchr(path, '/') && (n < 12 || strcmp(path + n - 12, ".safetensors")));
    if (f) fclose(f);
    if (!f && prompt_flag && text_like) {
        fprintf(stderr, CLI_PROG ": '%s' is not a file; to give a prompt, use %s \"%s\" (MODEL is a .safetensors file)\n",
                path, prompt_flag, path);
        return 1;
    }
    return cli_fail(path, err->message);
}

/* --- texts (with textgen.h) ------------------------------------------------------------------ */
#ifdef DINTATTN_TEXTGEN_H
/* The ids of one text: --ids LIST as given (ids_list), else the text of FILE (file; "-": standard
   input) or of -p (prompt) encoded with tg_encode (the model's BOS first when it has one). Each is
   checked against the vocabulary [0, V). Returns the count (>= 0; *ids the caller frees), or -1
   (printed). */
CLI_FN int cli_text_ids(const char *ids_list, const char *file, const char *prompt, const dintattn_tokenizer *tok, int V,
                        int **ids)
{
    dintattn_error err;
    char *text = NULL, msg[160];
    size_t len = 0;
    int n, i;
    *ids = NULL;
    if (ids_list) {
        n = cli_parse_ids(ids_list, ids);
        if (n < 0) return cli_fail("--ids must be comma-separated integers, e.g. 1,2,3", NULL), -1;
    } else {
        if (file && !(text = cli_read_all(file, &len))) return cli_fail(file, strerror(errno)), -1;
        if ((file ? len : strlen(prompt)) == 0) {
            free(text);
            return cli_fail(file ? file : "-p", "the text is empty"), -1;
        }
        n = tg_encode(tok, file ? text : prompt, file ? len : strlen(prompt), ids, &err);
        free(text);
        if (n < 0) return cli_fail("cannot encode the text", err.message), -1;
    }
    for (i = 0; i < n; i++)
        if ((*ids)[i] < 0 || (*ids)[i] >= V) {
            snprintf(msg, sizeof msg, "token id %d (at %d) is outside the model's vocabulary [0, %d)", (*ids)[i], i, V);
            return cli_fail(ids_list ? "--ids" : "the tokenizer does not fit the model", msg), -1;
        }
    return n;
}
#endif /* DINTATTN_TEXTGEN_H */

/* The model MODEL names, or else the shipped one (CLI_DEFAULT_MODEL), from the repository's root or
   next to examples/ (argv0: the program's path), so that examples/generate runs from either. */
CLI_FN const char *cli_model_path(const char *model, const char *argv0)
{
    static char beside[4096];
    const char *slash = strrchr(argv0, '/');
    if (model) return model;
    if (!slash || access(CLI_DEFAULT_MODEL, R_OK) == 0) return CLI_DEFAULT_MODEL;
    snprintf(beside, sizeof beside, "%.*s/../" CLI_DEFAULT_MODEL, (int)(slash - argv0), argv0);
    return beside;
}

#ifdef DINTATTN_STRBUF_H
/* Writes b's bytes to f (name: what f is, for the message) and empties b; 1 (printed: out of
   memory while building it, or the write failed) or 0. Include strbuf.h first. */
CLI_FN int cli_flush(srv_buf *b, FILE *f, const char *name)
{
    if (b->nomem) return cli_fail("out of memory for the output", NULL);
    if ((b->len && fwrite(b->p, 1, b->len, f) != b->len) || fflush(f)) return cli_fail("cannot write", name);
    b->len = 0;
    return 0;
}
#endif

#endif /* DINTATTN_CLI_H */
