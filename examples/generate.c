/* generate: streams text from a model, token by token; with --chat, a conversation.

       examples/generate [MODEL] [-p PROMPT | -f FILE] [-n N] [--temp T] [--top-k K] [--top-p P]
                         [--min-p M] [--repeat-penalty R] [--seed S] [--threads T] [--weights W]
                         [--precision auto|exact|fast] [--kernels auto|portable|avx2|avx512|amx]
                         [--kv f32|bf16|q8] [--tokenizer FILE] [--ctx N] [--samples K]
       examples/generate [MODEL] --chat [--system TEXT] [--think show|hide]
                         [--think-history keep|drop] [options as above]

   With no MODEL it runs the model shipped in the repository (models/dint-kjv.safetensors).
   --kernels caps the kernel level (default: the environment variable DINTATTN_KERNELS when set,
   as the tests read it, else auto); the speed report names the level that ran.

   --chat reads user messages from stdin, a line each, and answers each as it comes. The whole
   conversation is formatted with the model's chat template (dintattn_chat_format) every turn and
   encoded; the session keeps the longest prefix its tokens share with it (cut there by
   dintattn_session_truncate, said on stderr) and prefills the rest. So every reply is what a fresh process prints for
   `-p "<the formatted conversation>"` with the same options and seed. What the turn loop shares
   with examples/server (stop strings held back while streaming, prompt encoding, the prefix
   cache) is in textgen.h. */
#define _POSIX_C_SOURCE 200809L
#define DINTATTN_IMPLEMENTATION
#include "../dintattn.h"
#include "strbuf.h" /* srv_buf: a chat reply as it grows */
#include "textgen.h"
#define CLI_PROG "generate"
#include "cli.h" /* cli_engine, cli_fail, cli_parse_*: what the examples share */

#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <signal.h>
#include <time.h>
#include <unistd.h>

#define DEFAULT_CHAT_CTX 4096

static const char *usage =
    "usage: generate [MODEL] [-p PROMPT | -f FILE] [options]\n"
    "  MODEL               a dintattn .safetensors model (default: " CLI_DEFAULT_MODEL ")\n"
    "  -p, --prompt TEXT   the prompt (default: empty, starting from the model's BOS token)\n"
    "  -f, --file FILE     read the prompt from FILE\n"
    "  -n N                generate at most N tokens, 0 or more (default 256; stops earlier at EOS\n"
    "                      or the context's end, said on stderr); with --chat, per reply\n"
    "  --temp T            temperature, 0 to 100; 0 = greedy (default 0.8)\n"
    "  --top-k K           sample from the K most likely tokens, 0 or more; 0 (or more than the\n"
    "                      vocabulary) = all (default 40)\n"
    "  --top-p P           nucleus sampling, 0 to 1; 0 or 1 = off (default 0.95)\n"
    "  --min-p M           drop tokens below M x p(most likely), 0 to 1; 0 = off (default 0.05)\n"
    "  --repeat-penalty R  penalise the last 64 tokens, 0 to 100; 1 = off (default 1.1)\n"
    "  --seed S            random seed, 0 to 2^64-1; the same seed gives the same text\n"
    "                      (default: from the clock)\n"
    "  --samples K         K continuations of the prompt, 1 to 64, decoded together (one pass over\n"
    "                      the weights a step; the prompt prefilled once); sample k draws with\n"
    "                      seed + k, so each equals a lone run with that seed; printed in turn\n"
    "                      after \"[sample k, seed S]\" lines (default 1: streamed as it comes)\n"
    "  --threads T         threads for decode, prompts and converting weights at load\n"
    "                      (" CLI_THREADS_RANGE ")\n"
    CLI_ENGINE_USAGE
    CLI_TOKENIZER_USAGE
    "  --ctx N             the session's context in tokens, 1 to the model's max_seq_len (a larger\n"
    "                      N is said on stderr and the model's used; default: the model's; with\n"
    "                      --chat, at most " CLI_STR(DEFAULT_CHAT_CTX) ")\n"
    "  -h, --help          this text\n";
/* apart from usage: C99 compilers need take no string over 4095 bytes */
static const char *usage_chat =
    "chat:\n"
    "  --chat              an interactive conversation: each line read from stdin is a user message\n"
    "                      (empty lines are skipped; \"> \" prompts only when stdin is a terminal),\n"
    "                      answered on stdout as its tokens come, one reply ending in one newline.\n"
    "                      The model's chat template formats the conversation; a model without one\n"
    "                      gets plain turns: each message a line, and a reply ends at a newline.\n"
    "                      A reply ends at an EOS id, a stop string of the template (not printed),\n"
    "                      -n tokens or the context's end. The KV cache is kept across turns: a turn\n"
    "                      prefills only what differs from the cached tokens (said on stderr). A message\n"
    "                      that no longer fits the context ends the conversation with a message on\n"
    "                      stderr and exit status 1 (older turns are not dropped). Per-turn figures\n"
    "                      go to stderr when stdin is not a terminal. Ends at the end of stdin\n"
    "                      (in a terminal, Ctrl-D; Ctrl-C ends a reply, or at the prompt the chat).\n"
    "  --system TEXT       a system message first (the template must have a system role)\n"
    "  --think show|hide   reasoning spans <think>...</think> in replies: printed (show, the\n"
    "                      default) or not (hide); either way they stay in the conversation\n"
    "                      (unless --think-history drop)\n"
    "  --think-history keep|drop\n"
    "                      what later turns see of a reply's reasoning: all of it (keep, the\n"
    "                      default; the cache is reused) or only the text after </think> (drop,\n"
    "                      as DeepSeek-R1-style templates render history: tools/convert.py says\n"
    "                      \"drops the reasoning\" for them; each turn then prefills from the\n"
    "                      dropped reasoning on)\n";

typedef struct args {
    cli_engine eng; /* MODEL, --ctx, --threads, --weights, --precision, --kv, --kernels, --tokenizer */
    const char *prompt, *prompt_file, *system;
    int n, has_seed, samples;
    int chat, think_hide, think_drop, think_set; /* --chat, --think hide, --think-history drop */
    unsigned long long seed;  /* with has_seed */
    dintattn_sampler_options sampling;
} args;

/* Returns 0, 1 for an error (printed), 2 for --help. */
static int parse_args(int argc, char **argv, args *a)
{
    static const char *const switches[] = {"--chat", NULL};
    int i;
    long v;
    memset(a, 0, sizeof *a);
    cli_engine_init(&a->eng);
    a->eng.prompt_flag = "-p";
    a->n = 256;
    a->samples = 1;
    a->sampling.temperature = 0.8f;
    a->sampling.top_k = 40;
    a->sampling.top_p = 0.95f;
    a->sampling.min_p = 0.05f;
    a->sampling.repeat_penalty = 1.1f;
    for (i = 1; i < argc; i++) {
        const char *f = argv[i], *val;
        int bad = 0;
        switch (cli_arg(argc, argv, &i, switches, &a->eng, &val)) {
        case CLI_ARG_VALUE: break;
        case CLI_ARG_SWITCH: a->chat = 1; continue;
        case CLI_ARG_MODEL: continue;
        case CLI_ARG_HELP: return 2;
        default: return 1;
        }
        if (!strcmp(f, "-p") || !strcmp(f, "--prompt")) a->prompt = val;
        else if (!strcmp(f, "-f") || !strcmp(f, "--file")) a->prompt_file = val;
        else if (!strcmp(f, "--tokenizer")) a->eng.tokenizer = val; /* the last one given */
        else if (!strcmp(f, "--system")) a->system = val;
        else if (!strcmp(f, "--think"))
            bad = strcmp(val, "show") && strcmp(val, "hide"), a->think_hide = !strcmp(val, "hide"), a->think_set = 1;
        else if (!strcmp(f, "--think-history"))
            bad = strcmp(val, "keep") && strcmp(val, "drop"), a->think_drop = !strcmp(val, "drop"), a->think_set = 1;
        else if (!strcmp(f, "-n")) bad = cli_parse_long(val, 0, INT_MAX, &v), a->n = (int)v;
        else if (!strcmp(f, "--samples")) bad = cli_parse_long(val, 1, 64, &v), a->samples = (int)v;
        else if (!strcmp(f, "--top-k")) bad = cli_parse_long(val, 0, INT_MAX, &v), a->sampling.top_k = (int)v;
        else if (!strcmp(f, "--temp")) bad = cli_parse_float(val, 0, 100, &a->sampling.temperature);
        else if (!strcmp(f, "--top-p")) bad = cli_parse_float(val, 0, 1, &a->sampling.top_p);
        else if (!strcmp(f, "--min-p")) bad = cli_parse_float(val, 0, 1, &a->sampling.min_p);
        else if (!strcmp(f, "--repeat-penalty")) bad = cli_parse_float(val, 0, 100, &a->sampling.repeat_penalty);
        else if (!strcmp(f, "--seed")) {
            char *end;
            errno = 0;
            a->seed = strtoull(val, &end, 10);
            bad = errno || end == val || *end || val[0] == '-';
            a->has_seed = 1;
        } else if ((bad = cli_engine_option(&a->eng, CLI_ENGINE | CLI_CTX, f, val, NULL)) < 0)
            return cli_fail("unknown option (see --help)", f);
        if (bad) {
            fprintf(stderr, "generate: bad value '%s' for %s (see --help)\n", val, f);
            return 1;
        }
    }
    if (a->prompt && a->prompt_file) return cli_fail("give -p or -f, not both", NULL);
    if (a->chat && (a->prompt || a->prompt_file)) return cli_fail("--chat reads the conversation from stdin: no -p or -f", NULL);
    if (!a->chat && a->system) return cli_fail("--system is for --chat", NULL);
    if (!a->chat && a->think_set) return cli_fail("--think and --think-history are for --chat", NULL);
    if (a->chat && a->samples > 1) return cli_fail("--samples is for a prompt, not --chat", NULL);
    return cli_engine_done(&a->eng);
}

static void emit(const dintattn_tokenizer *tok, int id)
{
    size_t len = 0;
    const char *bytes = dintattn_tokenizer_token(tok, id, &len);
    if (bytes) fwrite(bytes, 1, len, stdout);
    fflush(stdout);
}

/* --- --chat ---------------------------------------------------------------------------------- */

typedef struct conversation {
    dintattn_chat_message *m; /* contents are owned (malloc'ed) */
    int n, cap;
} conversation;

static int conv_add(conversation *c, const char *role, const char *content, size_t len)
{
    char *copy;
    if (c->n == c->cap) {
        int cap = c->cap ? 2 * c->cap : 16;
        dintattn_chat_message *grown = (dintattn_chat_message *)realloc(c->m, sizeof *grown * (size_t)cap);
        if (!grown) return -1;
        c->m = grown;
        c->cap = cap;
    }
    if (!(copy = (char *)malloc(len + 1))) return -1;
    memcpy(copy, content, len);
    copy[len] = 0;
    c->m[c->n].role = role;
    c->m[c->n++].content = copy;
    return 0;
}

static void conv_free(conversation *c)
{
    int i;
    for (i = 0; i < c->n; i++) free((char *)c->m[i].content);
    free(c->m);
}

/* The conversation as the template renders it (malloc'ed, NUL-terminated), or NULL with err set. */
static char *format_chat(const dintattn_model *model, const dintattn_chat_message *m, int n, int gen, size_t *len,
                         dintattn_error *err)
{
    char *text;
    if (dintattn_chat_format(model, m, n, gen, NULL, 0, len, err)) return NULL;
    if (!(text = (char *)malloc(*len + 1))) {
        snprintf(err->message, sizeof err->message, "out of memory");
        return NULL;
    }
    if (dintattn_chat_format(model, m, n, gen, text, *len + 1, len, err)) {
        free(text);
        return NULL;
    }
    return text;
}

/* What of a reply is printed: everything, or (--think hide) not its <think>...</think> spans nor
   the whitespace after one. Tags are found across tokens: a tail that could begin the tag looked
   for is held back until the next bytes tell. */
typedef struct shower {
    int hide, in_think, skip_ws;
    size_t done; /* bytes of the reply handled */
} shower;

static void show_bytes(shower *sh, const char *p, size_t n)
{
    if (sh->hide && sh->in_think) return;
    if (sh->hide && sh->skip_ws) {
        while (n > 0 && isspace((unsigned char)*p)) p++, n--;
        if (n > 0) sh->skip_ws = 0;
    }
    fwrite(p, 1, n, stdout);
}

/* Shows reply[done .. upto); `final`: nothing more comes, hold nothing back. */
static void show_upto(shower *sh, const char *reply, size_t upto, int final)
{
    while (sh->done < upto) {
        const char *p = reply + sh->done, *tag = sh->in_think ? "</think>" : "<think>";
        size_t n = upto - sh->done, tl = strlen(tag), at, hold = 0;
        if (!sh->hide) {
            show_bytes(sh, p, n);
            sh->done = upto;
            return;
        }
        for (at = 0; at + tl <= n && memcmp(p + at, tag, tl) != 0; at++) {}
        if (at + tl > n) { /* no whole tag: hold back a tail that may begin one */
            if (!final)
                for (hold = tl - 1 < n ? tl - 1 : n; hold > 0 && memcmp(p + n - hold, tag, hold) != 0; hold--) {}
            show_bytes(sh, p, n - hold);
            sh->done += n - hold;
            return;
        }
        show_bytes(sh, p, at);
        sh->done += at + tl;
        sh->in_think = !sh->in_think;
        if (!sh->in_think) sh->skip_ws = 1;
    }
}

static volatile sig_atomic_t interrupted;

static void on_interrupt(int sig)
{
    (void)sig;
    interrupted = 1;
}

/* What a conversation holds from turn to turn. */
typedef struct chat {
    args *a;
    const dintattn_model *model;
    const dintattn_tokenizer *tok;
    dintattn_session *sess;
    dintattn_sampler *sampler;
    conversation conv;
    tg_stops stops;       /* a reply ends at these (not printed) */
    tg_cache cache;       /* the ids the session holds */
    srv_buf out;          /* the reply being written */
    float *logits;
    char *gen_prompt;     /* the template's generation prompt (malloc'ed) */
    const char *gen_tail; /* what it adds to the assistant's prefix: a reply's text follows it */
    const char *opened;   /* an opening <think> it ends with, or NULL */
    int plain, interactive, n_ctx, V;
} chat;

/* The template's pieces a conversation needs: the generation prompt, and the assistant's prefix
   (a reply's text in the cache comes after the generation prompt, which begins with it); a
   --system message, checked and put first; the stop strings. Returns 0, or 1 (printed). */
static int chat_template(chat *c)
{
    static const char marker[] = "\001dintattn-reply\002";
    dintattn_chat_message probe[2];
    dintattn_error err;
    char *text;
    size_t len, p_a, k;
    if (!(c->gen_prompt = format_chat(c->model, NULL, 0, 1, &len, &err))) return cli_fail("the chat template", err.message);
    probe[0].role = "assistant";
    probe[0].content = marker;
    if (!(text = format_chat(c->model, probe, 1, 0, &len, &err)))
        return cli_fail("the chat template cannot format a reply", err.message);
    p_a = strstr(text, marker) ? (size_t)(strstr(text, marker) - text) : 0;
    if (strlen(c->gen_prompt) >= p_a && !memcmp(c->gen_prompt, text, p_a)) c->gen_tail = c->gen_prompt + p_a;
    free(text);
    /* a generation prompt that ends in "<think>" (DeepSeek-R1 style) opens the reasoning itself */
    for (k = strlen(c->gen_prompt); k > 0 && isspace((unsigned char)c->gen_prompt[k - 1]); k--) {}
    if (k >= 7 && !memcmp(c->gen_prompt + k - 7, "<think>", 7)) c->opened = c->gen_prompt + k - 7;
    if (c->a->system) {
        probe[0].role = "system";
        probe[0].content = c->a->system;
        probe[1].role = "user";
        probe[1].content = "";
        if (!(text = format_chat(c->model, probe, 2, 1, &len, &err))) return cli_fail("--system", err.message);
        free(text);
        if (conv_add(&c->conv, "system", c->a->system, strlen(c->a->system))) return cli_fail("out of memory", NULL);
    }
    /* a reply ends at the template's stop strings; without a template, at the end of its line */
    if (c->plain) tg_stops_add(&c->stops, "\n", 1);
    else tg_stops_add_template(&c->stops, c->model);
    return 0;
}

/* The conversation with the user's message `line` added, encoded into *ids (*n_ids; the caller
   frees them), checked against the context and the vocabulary. Returns 0, or 1 (printed: the
   conversation ends). */
static int chat_prompt(chat *c, const char *line, size_t n, int **ids, int *n_ids)
{
    const int max = dintattn_model_config(c->model)->max_seq_len;
    dintattn_error err;
    char *text, hint[96] = "";
    size_t len;
    int i;
    *ids = NULL;
    if (conv_add(&c->conv, "user", line, n)) return cli_fail("out of memory", NULL);
    if (!(text = format_chat(c->model, c->conv.m, c->conv.n, 1, &len, &err)))
        return cli_fail("cannot format the conversation", err.message);
    *n_ids = tg_encode(c->tok, text, len, ids, &err);
    free(text);
    if (*n_ids < 0) return cli_fail("cannot encode the conversation", err.message);
    if (*n_ids >= c->n_ctx) {
        if (c->n_ctx < max) snprintf(hint, sizeof hint, ", or raise --ctx (the model's context is %d)", max);
        fprintf(stderr,
                "generate: the conversation has outgrown the context: with this message it is %d tokens, and "
                "the context holds %d (the reply needs at least one more); it ends here. Start a new "
                "conversation%s\n", *n_ids, c->n_ctx, hint);
        return 1;
    }
    for (i = 0; i < *n_ids; i++)
        if ((*ids)[i] < 0 || (*ids)[i] >= c->V) return cli_fail("the tokenizer produced an id outside the model's vocabulary", NULL);
    return 0;
}

/* The reply, streamed to stdout after the session holds the prompt's n_ids tokens: stop strings
   and unfinished characters held back until known. *n_gen: its tokens; *ended: what ended it.
   Returns 0, or 1 (printed). */
static int chat_reply(chat *c, int n_ids, int *n_gen, const char **ended)
{
    dintattn_error err;
    shower sh;
    c->out.len = 0;
    *n_gen = 0;
    *ended = "the -n limit";
    memset(&sh, 0, sizeof sh);
    sh.hide = c->a->think_hide;
    sh.in_think = c->opened != NULL;
    if (c->opened && !sh.hide) fputs(c->opened, stdout); /* the template's opening tag, for the reader */
    for (;;) {
        int next;
        size_t before = c->out.len, at, blen;
        const char *bytes;
        if (*n_gen >= c->a->n) break;
        if (interrupted) {
            *ended = "Ctrl-C";
            break;
        }
        if (n_ids + *n_gen >= c->n_ctx) {
            *ended = "the context's end";
            break;
        }
        next = dintattn_sampler_sample(c->sampler, c->logits);
        if (dintattn_tokenizer_is_eos(c->tok, next)) {
            *ended = "EOS";
            break;
        }
        ++*n_gen;
        dintattn_sampler_accept(c->sampler, next);
        bytes = dintattn_tokenizer_token(c->tok, next, &blen);
        if (bytes) srv_buf_add(&c->out, bytes, blen);
        if (c->out.nomem) return cli_fail("out of memory", NULL);
        at = tg_stops_find_new(&c->stops, c->out.p, c->out.len, before, sh.done);
        if (at != (size_t)-1) {
            c->out.len = at;
            *ended = c->plain ? "the end of the line" : "a stop string";
            break;
        }
        show_upto(&sh, c->out.p, tg_stops_safe_end(&c->stops, c->out.p, c->out.len), 0);
        fflush(stdout);
        if (tg_cache_decode(&c->cache, c->sess, next, c->logits, &err)) return cli_fail("decode", err.message);
    }
    show_upto(&sh, c->out.p ? c->out.p : "", c->out.len, 1);
    putchar('\n');
    fflush(stdout);
    return 0;
}

/* The reply as the conversation holds it: after the assistant's prefix comes what the generation
   prompt added to it (so the cache stays a prefix), then the reply (--think-history drop: only
   what follows its last </think>). Returns 0, or 1 (printed). */
static int chat_remember(chat *c)
{
    srv_buf content;
    int bad;
    memset(&content, 0, sizeof content);
    srv_buf_str(&content, c->gen_tail);
    srv_buf_add(&content, c->out.p ? c->out.p : "", c->out.len);
    if (c->a->think_drop && content.p) {
        char *cut = NULL, *f = content.p;
        while ((f = strstr(f, "</think>")) != NULL) cut = f += 8;
        if (cut) {
            content.len -= (size_t)(cut - content.p);
            memmove(content.p, cut, content.len + 1);
        }
    }
    bad = content.nomem || conv_add(&c->conv, "assistant", content.p ? content.p : "", content.len);
    srv_buf_free(&content);
    return bad ? cli_fail("out of memory", NULL) : 0;
}

/* One turn for the user's message `line`: the prompt prefilled (only what extends the cache),
   the reply streamed and remembered, the figures on stderr. Returns 0, or 1 (printed: the
   conversation ends). */
static int chat_turn(chat *c, int turn, const char *line, size_t n)
{
    dintattn_error err;
    const char *ended;
    int *ids, n_ids, had, common, reused, n_gen, i;
    double t0, t1, t2;
    if (chat_prompt(c, line, n, &ids, &n_ids)) {
        free(ids);
        return 1;
    }
    had = c->cache.n;
    common = tg_common_prefix(c->cache.ids, c->cache.n, ids, n_ids);
    t0 = cli_now();
    reused = tg_cache_load(&c->cache, c->sess, ids, n_ids, c->logits, &err);
    if (reused < 0) {
        free(ids);
        return cli_fail("prefill", err.message);
    }
    if (reused < had)
        fprintf(stderr, "generate: the conversation differs from the %d tokens the session holds from token %d on: "
                        "keeping %d, prefilling %d\n", had, common, reused, n_ids - reused);
    dintattn_sampler_reset(c->sampler); /* as a fresh process: the seed's sequence, the prompt's ids */
    for (i = 0; i < n_ids; i++) dintattn_sampler_accept(c->sampler, ids[i]);
    free(ids);
    t1 = cli_now();
    if (chat_reply(c, n_ids, &n_gen, &ended) || chat_remember(c)) return 1;
    t2 = cli_now();
    if (!c->interactive) /* figures for logs and tests; a terminal shows only the conversation */
        fprintf(stderr,
                "generate: turn %d: prompt %d tokens (%d reused, %d prefilled, %.1f tok/s) | reply %d tokens, "
                "%.1f tok/s, ended by %s\n",
                turn, n_ids, reused, n_ids - reused, (n_ids - reused) / (t1 - t0 > 0 ? t1 - t0 : 1e-9), n_gen,
                n_gen / (t2 - t1 > 0 ? t2 - t1 : 1e-9), ended);
    if (n_ids + n_gen >= c->n_ctx) /* the reply was cut there */
        fprintf(stderr, "generate: the context (%d tokens) is full: the next message ends the conversation\n", c->n_ctx);
    return 0;
}

/* The interactive conversation (--chat). Returns the exit status. */
static int run_chat(args *a, dintattn_model *model, dintattn_tokenizer *tok)
{
    chat c;
    dintattn_session_options so;
    dintattn_error err;
    char *line = NULL;
    size_t line_cap = 0;
    int rc = 1, turn = 0, i;

    memset(&c, 0, sizeof c);
    c.a = a, c.model = model, c.tok = tok;
    c.interactive = isatty(0);
    c.V = dintattn_model_config(model)->vocab_size;
    c.plain = !dintattn_chat_has_template(model);
    c.gen_tail = "";
    c.n_ctx = cli_context(&a->eng, model, DEFAULT_CHAT_CTX);
    if (chat_template(&c)) goto done;
    cli_session_options(&a->eng, c.n_ctx, &so);
    a->sampling.seed = a->has_seed ? a->seed : (unsigned long long)time(NULL);
    if (dintattn_session_new(model, &so, &c.sess, &err) || dintattn_sampler_new(c.V, &a->sampling, &c.sampler, &err)) {
        cli_fail("cannot start", err.message);
        goto done;
    }
    c.logits = (float *)malloc(sizeof(float) * (size_t)c.V);
    c.cache.ids = (int *)malloc(sizeof(int) * (size_t)c.n_ctx);
    if (!c.logits || !c.cache.ids) {
        cli_fail("out of memory", NULL);
        goto done;
    }
    if (c.interactive) { /* Ctrl-C ends the reply being written; at the prompt, the conversation */
        struct sigaction sa;
        memset(&sa, 0, sizeof sa);
        sa.sa_handler = on_interrupt; /* no SA_RESTART: a read at the prompt returns */
        sigemptyset(&sa.sa_mask);
        sigaction(SIGINT, &sa, NULL);
    }
    fprintf(stderr, "generate: chat with %s: context %d tokens, %s, seed %llu, kernels %s\n", a->eng.model, c.n_ctx,
            c.plain ? "no chat template (plain turns: a line each)" : "the model's chat template", a->sampling.seed,
            dintattn_kernels_name(dintattn_session_kernels(c.sess)));
    for (;;) {
        ssize_t got;
        if (c.interactive) {
            fputs("> ", stdout);
            fflush(stdout);
        }
        interrupted = 0;
        if ((got = getline(&line, &line_cap, stdin)) < 0 || interrupted) {
            if (c.interactive) putchar('\n');
            break;
        }
        while (got > 0 && (line[got - 1] == '\n' || line[got - 1] == '\r')) line[--got] = 0;
        for (i = 0; i < got && isspace((unsigned char)line[i]); i++) {}
        if (i == got) continue; /* an empty line */
        if (chat_turn(&c, ++turn, line, (size_t)got)) goto done;
    }
    rc = 0;
done:
    free(line);
    free(c.gen_prompt);
    free(c.logits);
    free(c.cache.ids);
    srv_buf_free(&c.out);
    conv_free(&c.conv);
    dintattn_sampler_free(c.sampler);
    dintattn_session_free(c.sess);
    return rc;
}

/* One generation (no --chat): the prompt echoed, then its continuation streamed to stdout, the
   figures on stderr. Returns the exit status. */
/* --samples K: the prompt's session (prefilled; its last logits in logits0) copied into K - 1
   more, each sample with its own sampler (seed + k) and text; each step decodes every sample
   still going in one dintattn_batch_step. Returns 0, or 1 (printed). */
static int run_samples(const args *a, const dintattn_model *model, const dintattn_tokenizer *tok, dintattn_session *sess0,
                       const float *logits0, const int *ids, int n_ids, const char *prompt, size_t prompt_len,
                       double prefill_s)
{
    const int K = a->samples, V = dintattn_model_config(model)->vocab_size;
    dintattn_session *sess[64] = {NULL};
    dintattn_sampler *smp[64] = {NULL};
    dintattn_batch_item items[64] = {{0}};
    float *logits[64] = {NULL};
    srv_buf out[64];
    int next[64], n_gen[64] = {0}, going[64], k, i, steps = 0, rc = 1, total = 0;
    dintattn_session_options so;
    dintattn_error err;
    double t0 = cli_now(), t1;
    memset(out, 0, sizeof out);
    cli_session_options(&a->eng, dintattn_session_n_ctx(sess0), &so);
    for (k = 0; k < K; k++) {
        dintattn_sampler_options o = a->sampling;
        o.seed = a->sampling.seed + (unsigned long long)k;
        sess[k] = sess0;
        if ((k > 0 && (dintattn_session_new(model, &so, &sess[k], &err) || dintattn_session_copy(sess[k], sess0, &err))) ||
            dintattn_sampler_new(V, &o, &smp[k], &err)) {
            if (k > 0 && sess[k] == sess0) sess[k] = NULL;
            cli_fail("cannot start a sample", err.message);
            goto done;
        }
        for (i = 0; i < n_ids; i++) dintattn_sampler_accept(smp[k], ids[i]);
        if (!(logits[k] = (float *)malloc(sizeof(float) * (size_t)V))) {
            cli_fail("out of memory", NULL);
            goto done;
        }
        memcpy(logits[k], logits0, sizeof(float) * (size_t)V);
        going[k] = a->n > 0;
    }
    for (;;) {
        int n = 0;
        for (k = 0; k < K; k++) {
            size_t len = 0;
            const char *bytes;
            if (!going[k]) continue;
            next[k] = dintattn_sampler_sample(smp[k], logits[k]);
            if (dintattn_tokenizer_is_eos(tok, next[k])) {
                going[k] = 0;
                continue;
            }
            n_gen[k]++;
            dintattn_sampler_accept(smp[k], next[k]);
            if (dintattn_tokenizer_has_token(tok, next[k]) && (bytes = dintattn_tokenizer_token(tok, next[k], &len)))
                srv_buf_add(&out[k], bytes, len);
            if (n_gen[k] >= a->n || dintattn_session_pos(sess[k]) >= dintattn_session_n_ctx(sess[k])) {
                going[k] = 0;
                continue;
            }
            items[n].sess = sess[k], items[n].tokens = &next[k], items[n].n_tokens = 1, items[n].logits = logits[k];
            n++;
        }
        if (n == 0) break;
        if (dintattn_batch_step(items, n, NULL, &err)) {
            cli_fail("decode", err.message);
            goto done;
        }
        steps++;
    }
    t1 = cli_now();
    for (k = 0; k < K; k++) {
        if (out[k].nomem) {
            cli_fail("out of memory", NULL);
            goto done;
        }
        printf("[sample %d, seed %llu]\n", k, a->sampling.seed + (unsigned long long)k);
        fwrite(prompt, 1, prompt_len, stdout);
        fwrite(out[k].p ? out[k].p : "", 1, out[k].len, stdout);
        printf("\n");
        total += n_gen[k];
    }
    fprintf(stderr, "prompt: %d tokens, %.1f tok/s, once | generated: %d samples, %d tokens in %d batched steps, %.1f tok/s | "
                    "seeds %llu to %llu | kernels %s\n",
            n_ids, n_ids / (prefill_s > 0 ? prefill_s : 1e-9), K, total, steps, total / (t1 - t0 > 0 ? t1 - t0 : 1e-9),
            a->sampling.seed, a->sampling.seed + (unsigned long long)(K - 1), dintattn_kernels_name(dintattn_session_kernels(sess0)));
    rc = 0;
done:
    for (k = 0; k < K; k++) {
        if (k > 0) dintattn_session_free(sess[k]);
        dintattn_sampler_free(smp[k]);
        free(logits[k]);
        srv_buf_free(&out[k]);
    }
    return rc;
}

static int run_prompt(args *a, dintattn_model *model, dintattn_tokenizer *tok)
{
    dintattn_error err;
    dintattn_session *sess = NULL;
    dintattn_sampler *sampler = NULL;
    dintattn_session_options so;
    char *text = NULL;
    size_t text_len = 0;
    int *ids = NULL, n_ids, i, n_gen = 0, rc = 1, n_ctx, V, full = 0;
    float *logits = NULL;
    double t0, t1, t2;

    if (a->prompt_file) {
        text = cli_read_file(a->prompt_file, &text_len);
        if (!text) {
            cli_fail(a->prompt_file, strerror(errno));
            goto done;
        }
    }
    n_ctx = cli_context(&a->eng, model, 0);
    V = dintattn_model_config(model)->vocab_size;
    n_ids = tg_encode(tok, text ? text : a->prompt ? a->prompt : "", text ? text_len : a->prompt ? strlen(a->prompt) : 0, &ids,
                      &err);
    if (n_ids < 0) {
        cli_fail("cannot encode the prompt", err.message);
        goto done;
    }
    if (n_ids == 0) {
        cli_fail("empty prompt, and the model has no BOS token to start from", NULL);
        goto done;
    }
    if (n_ids >= n_ctx) {
        char msg[128];
        snprintf(msg, sizeof msg, "%d tokens, the context holds %d", n_ids, n_ctx);
        cli_fail("prompt too long", msg);
        goto done;
    }
    cli_session_options(&a->eng, a->n < n_ctx - n_ids ? n_ids + a->n : n_ctx, &so); /* room for the prompt and -n tokens */
    a->sampling.seed = a->has_seed ? a->seed : (unsigned long long)time(NULL);
    if (dintattn_session_new(model, &so, &sess, &err) ||
        dintattn_sampler_new(V, &a->sampling, &sampler, &err)) {
        cli_fail("cannot start", err.message);
        goto done;
    }
    for (i = 0; i < n_ids; i++) {
        if (ids[i] >= V) {
            cli_fail("the tokenizer produced an id outside the model's vocabulary", NULL);
            goto done;
        }
        dintattn_sampler_accept(sampler, ids[i]);
    }
    logits = (float *)malloc(sizeof(float) * (size_t)V);
    if (!logits) {
        cli_fail("out of memory", NULL);
        goto done;
    }
    if (a->samples == 1) { /* streamed; --samples prints each sample whole */
        fwrite(text ? text : a->prompt ? a->prompt : "", 1, text ? text_len : a->prompt ? strlen(a->prompt) : 0, stdout);
        fflush(stdout);
    }
    t0 = cli_now();
    if (dintattn_prefill(sess, ids, n_ids, logits, 0, &err)) {
        cli_fail("prefill", err.message);
        goto done;
    }
    t1 = cli_now();
    if (a->samples > 1) {
        rc = run_samples(a, model, tok, sess, logits, ids, n_ids, text ? text : a->prompt ? a->prompt : "",
                         text ? text_len : a->prompt ? strlen(a->prompt) : 0, t1 - t0);
        goto done;
    }
    while (n_gen < a->n) {
        int next = dintattn_sampler_sample(sampler, logits);
        if (dintattn_tokenizer_is_eos(tok, next)) break; /* any of the model's EOS ids */
        emit(tok, next);
        n_gen++;
        dintattn_sampler_accept(sampler, next);
        if (dintattn_session_pos(sess) >= dintattn_session_n_ctx(sess)) {
            full = n_gen < a->n; /* else -n ended it as well */
            break;
        }
        if (dintattn_decode(sess, next, logits, &err)) {
            cli_fail("decode", err.message);
            goto done;
        }
    }
    t2 = cli_now();
    printf("\n");
    if (full)
        fprintf(stderr, "generate: stopped: the context of %d tokens is full (%d of -n %d generated)%s\n", n_ctx, n_gen,
                a->n, n_ctx < dintattn_model_config(model)->max_seq_len ? "; --ctx can raise it" : "");
    fprintf(stderr, "prompt: %d tokens, %.1f tok/s | generated: %d tokens, %.1f tok/s | seed %llu | kernels %s\n",
            n_ids, n_ids / (t1 - t0 > 0 ? t1 - t0 : 1e-9), n_gen, n_gen / (t2 - t1 > 0 ? t2 - t1 : 1e-9),
            a->sampling.seed, dintattn_kernels_name(dintattn_session_kernels(sess)));
    rc = 0;
done:
    free(logits);
    free(ids);
    free(text);
    dintattn_sampler_free(sampler);
    dintattn_session_free(sess);
    return rc;
}

int main(int argc, char **argv)
{
    args a;
    dintattn_error err;
    dintattn_model *model = NULL;
    dintattn_tokenizer *tok = NULL;
    int rc;
    argv = cli_aliases(&argc, argv);

    rc = parse_args(argc, argv, &a);
    if (rc == 2) {
        cli_usage(stdout, usage, 22);
        cli_usage(stdout, usage_chat, 22);
        return 0;
    }
    if (rc) return 1;
    a.eng.model = cli_model_path(a.eng.model, argv[0]);
    if (cli_load_model(a.eng.model, a.eng.weights, a.eng.map, a.eng.threads, &model, &err))
        return cli_model_failed(a.eng.model, &err, a.eng.prompt_flag);
    rc = cli_load_tokenizer(&a.eng, model, 0, &tok) ? 1 : a.chat ? run_chat(&a, model, tok) : run_prompt(&a, model, tok);
    dintattn_tokenizer_free(tok);
    dintattn_model_free(model);
    return rc;
}
