/* server_params.h: the JSON bodies of examples/server.c's /v1/completions and
   /v1/chat/completions (srv_parse_params), kept apart so that a libFuzzer harness
   (fuzz/fuzz_http.c) can drive it without sockets or a model. HTTP itself is libmicrohttpd's.
   JSON is read with dintattn.h's JSON reader (dintattn_json_parse, dintattn_json_get: RFC 8259
   syntax, bounded nesting, no duplicate keys), rather than a second parser: include this file
   after dintattn.h. */
#ifndef DINTATTN_SERVER_PARAMS_H
#define DINTATTN_SERVER_PARAMS_H

#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "strbuf.h" /* srv_buf, srv_buf_json_str, srv_utf8_partial */

#define SRV_MAX_BODY (1024 * 1024)   /* a request body; past it: 413 */
#define SRV_MAX_STOPS 16             /* stop strings of a request (the template's come on top) */
#define SRV_MAX_PROMPTS 256          /* prompts of one completions request (a list, as evaluators send) */
#define SRV_MAX_N 64                 /* samples per prompt ('n') */
#define SRV_MAX_CHOICES 256          /* prompts x n of one request: each holds a sampler and a text */
#define SRV_MAX_TOP 20               /* most alternatives per token in logprobs (OpenAI's bound) */

/* --- the JSON body of a generation request --------------------------------------------------- */

/* One prompt of a completions request: a text, or token ids given as numbers (used as they are:
   no BOS is added). */
typedef struct srv_prompt {
    const char *text;                 /* NULL for ids */
    size_t len;
    int *ids;                         /* malloc'ed */
    int n_ids;
} srv_prompt;

typedef struct srv_params {
    dintattn_json *json;              /* the parsed body: the strings below point into it */
    int chat, stream, include_usage;
    srv_prompt *prompts;              /* completions: one or more prompts */
    int n_prompts;
    dintattn_chat_message *msgs;      /* chat */
    char **joined;                    /* per message: its text parts joined (content as a list), or NULL */
    int n_msgs;
    int max_tokens;                   /* -1 when not given; 0 (completions with echo) scores the prompt only */
    int n;                            /* samples per prompt */
    int logprobs;                     /* -1: none; else alternatives per token (0 to SRV_MAX_TOP) */
    int echo;                         /* completions: the prompt comes back first, logprobs included */
    int cache_prompt;                 /* reuse a slot's ids (as llama.cpp's server; default 1) */
    int ignore_eos;                   /* end-of-sequence ids are never drawn (llama.cpp's; benchmarks) */
    double temperature, top_p;
    int has_seed;
    unsigned long long seed;
    const char *stop[SRV_MAX_STOPS];
    size_t stop_len[SRV_MAX_STOPS];
    int n_stop;
} srv_params;

SRV_FN void srv_params_free(srv_params *p)
{
    int k;
    dintattn_json_free(p->json);
    for (k = 0; p->prompts && k < p->n_prompts; k++) free(p->prompts[k].ids);
    free(p->prompts);
    for (k = 0; p->joined && k < p->n_msgs; k++) free(p->joined[k]);
    free(p->joined);
    free(p->msgs);
    memset(p, 0, sizeof *p);
}

#if defined(__GNUC__)
__attribute__((format(printf, 4, 5)))
#endif
static int srv_bad(char *err, size_t cap, const char **param, const char *fmt, ...)
{
    va_list ap;
    (void)param;
    va_start(ap, fmt);
    vsnprintf(err, cap, fmt, ap);
    va_end(ap);
    return -1;
}

/* A number in [lo, hi]; absent or null keeps *out. */
static int srv_number(const dintattn_json *j, const dintattn_json_node *root, const char *key, double lo, double hi,
                      double *out, char *err, size_t cap, const char **param)
{
    const dintattn_json_node *v = dintattn_json_get(j, root, key);
    double x = dintattn_json_num(j, v);
    if (dintattn_json_type(j, v) == DINTATTN_JSON_NULL) return 0;
    *param = key;
    if (dintattn_json_type(j, v) != DINTATTN_JSON_NUMBER || !isfinite(x) || x < lo || x > hi)
        return srv_bad(err, cap, param, "'%s' must be a number from %g to %g", key, lo, hi);
    *out = x;
    return 0;
}

/* messages[k].content as a list of text parts [{"type": "text", "text": ...}]: their texts joined
   into p->joined[k]. */
static int srv_join_parts(const dintattn_json *j, const dintattn_json_node *content, int k, srv_params *p,
                          char *err, size_t cap, const char **param)
{
    int i, n = dintattn_json_len(j, content);
    size_t total = 0, at = 0, len;
    for (i = 0; i < n; i++) {
        const dintattn_json_node *part = dintattn_json_at(j, content, i);
        const char *type = dintattn_json_str(j, dintattn_json_get(j, part, "type"), NULL);
        if (!type || strcmp(type, "text") != 0 || !dintattn_json_str(j, dintattn_json_get(j, part, "text"), &len))
            return srv_bad(err, cap, param, "messages[%d].content: only parts {\"type\": \"text\", \"text\": ...} are supported", k);
        total += len;
    }
    p->joined[k] = (char *)malloc(total + 1);
    if (!p->joined[k]) return srv_bad(err, cap, param, "out of memory");
    for (i = 0; i < n; i++) {
        const char *t = dintattn_json_str(j, dintattn_json_get(j, dintattn_json_at(j, content, i), "text"), &len);
        memcpy(p->joined[k] + at, t, len);
        at += len;
    }
    p->joined[k][at] = 0;
    p->msgs[k].content = p->joined[k];
    return 0;
}

/* "messages" of a chat request into p->msgs. */
static int srv_parse_messages(const dintattn_json *j, const dintattn_json_node *root, srv_params *p, char *err,
                              size_t cap, const char **param)
{
    const dintattn_json_node *v = dintattn_json_get(j, root, "messages");
    int k, n = dintattn_json_len(j, v);
    *param = "messages";
    if (!v) return srv_bad(err, cap, param, "'messages' is required");
    if (dintattn_json_type(j, v) != DINTATTN_JSON_ARRAY || n < 1)
        return srv_bad(err, cap, param, "'messages' must be a non-empty array");
    p->msgs = (dintattn_chat_message *)calloc((size_t)n, sizeof *p->msgs);
    p->joined = (char **)calloc((size_t)n, sizeof *p->joined);
    if (!p->msgs || !p->joined) return srv_bad(err, cap, param, "out of memory");
    for (k = 0; k < n; k++) {
        const dintattn_json_node *m = dintattn_json_at(j, v, k), *content = dintattn_json_get(j, m, "content");
        const char *role = dintattn_json_str(j, dintattn_json_get(j, m, "role"), NULL);
        dintattn_json_kind ct = dintattn_json_type(j, content);
        if (dintattn_json_type(j, m) != DINTATTN_JSON_OBJECT) return srv_bad(err, cap, param, "messages[%d] must be an object", k);
        if (!role) return srv_bad(err, cap, param, "messages[%d].role must be a string", k);
        p->n_msgs = k + 1; /* joined[k] is freed from here on */
        p->msgs[k].role = role;
        p->msgs[k].content = ct == DINTATTN_JSON_STRING ? dintattn_json_str(j, content, NULL) : "";
        if (ct == DINTATTN_JSON_ARRAY) {
            if (srv_join_parts(j, content, k, p, err, cap, param)) return -1;
        } else if (ct != DINTATTN_JSON_STRING && ct != DINTATTN_JSON_NULL) {
            return srv_bad(err, cap, param, "messages[%d].content must be a string or a list of text parts", k);
        }
    }
    p->n_msgs = n;
    return 0;
}

/* "stop": a string or a list of at most SRV_MAX_STOPS strings; empty ones are dropped, since an
   empty stop string would stop before anything. */
static int srv_parse_stop(const dintattn_json *j, const dintattn_json_node *v, srv_params *p, char *err, size_t cap,
                          const char **param)
{
    int i, n = 1, list = dintattn_json_type(j, v) == DINTATTN_JSON_ARRAY;
    *param = "stop";
    if (list) {
        n = dintattn_json_len(j, v);
        if (n > SRV_MAX_STOPS) return srv_bad(err, cap, param, "at most %d stop strings", SRV_MAX_STOPS);
    }
    for (i = 0; i < n; i++) {
        size_t len;
        const char *s = dintattn_json_str(j, list ? dintattn_json_at(j, v, i) : v, &len);
        if (!s) return srv_bad(err, cap, param, "'stop' must be a string or a list of strings");
        if (len == 0) continue;
        p->stop[p->n_stop] = s;
        p->stop_len[p->n_stop++] = len;
    }
    return 0;
}

/* A list of token ids (numbers) into pr->ids; -1 (err set) if one is not an integer >= 0. */
static int srv_parse_ids(const dintattn_json *j, const dintattn_json_node *v, srv_prompt *pr, char *err, size_t cap,
                         const char **param)
{
    int i, n = dintattn_json_len(j, v);
    pr->ids = (int *)malloc(sizeof(int) * (size_t)(n > 0 ? n : 1));
    if (!pr->ids) return srv_bad(err, cap, param, "out of memory");
    for (i = 0; i < n; i++) {
        long long id;
        if (!dintattn_json_int(j, dintattn_json_at(j, v, i), &id) || id < 0 || id > INT_MAX)
            return srv_bad(err, cap, param, "'prompt' as token ids must hold integers of at least 0 (item %d is not)", i);
        pr->ids[i] = (int)id;
    }
    pr->n_ids = n;
    return 0;
}

/* "prompt": a string, a list of strings, a list of token ids, or a list of such lists (as
   lm-evaluation-harness sends a batch). */
static int srv_parse_prompts(const dintattn_json *j, const dintattn_json_node *root, srv_params *p, char *err,
                             size_t cap, const char **param)
{
    const dintattn_json_node *v = dintattn_json_get(j, root, "prompt");
    dintattn_json_kind t = dintattn_json_type(j, v);
    int i, n = 1, list = 0;
    *param = "prompt";
    if (!v || t == DINTATTN_JSON_NULL) return srv_bad(err, cap, param, "'prompt' is required");
    if (t == DINTATTN_JSON_ARRAY) {
        dintattn_json_kind t0 = dintattn_json_type(j, dintattn_json_at(j, v, 0));
        n = dintattn_json_len(j, v);
        if (n < 1) return srv_bad(err, cap, param, "'prompt' must not be an empty list");
        list = t0 == DINTATTN_JSON_STRING || t0 == DINTATTN_JSON_ARRAY;
        if (!list) n = 1; /* one prompt of ids */
        if (n > SRV_MAX_PROMPTS) return srv_bad(err, cap, param, "at most %d prompts in one request", SRV_MAX_PROMPTS);
    } else if (t != DINTATTN_JSON_STRING) {
        return srv_bad(err, cap, param, "'prompt' must be a string, a list of strings, or token ids");
    }
    p->prompts = (srv_prompt *)calloc((size_t)n, sizeof *p->prompts);
    if (!p->prompts) return srv_bad(err, cap, param, "out of memory");
    p->n_prompts = n;
    for (i = 0; i < n; i++) {
        const dintattn_json_node *e = list ? dintattn_json_at(j, v, i) : v;
        srv_prompt *pr = &p->prompts[i];
        if (dintattn_json_type(j, e) == DINTATTN_JSON_STRING) {
            pr->text = dintattn_json_str(j, e, &pr->len);
        } else if (dintattn_json_type(j, e) == DINTATTN_JSON_ARRAY) {
            if (list && dintattn_json_type(j, dintattn_json_at(j, e, 0)) == DINTATTN_JSON_ARRAY)
                return srv_bad(err, cap, param, "'prompt' item %d: a list of token ids must hold numbers", i);
            if (srv_parse_ids(j, e, pr, err, cap, param)) return -1;
            if (pr->n_ids == 0) return srv_bad(err, cap, param, "'prompt' item %d is an empty list of token ids", i);
        } else {
            return srv_bad(err, cap, param, "'prompt' item %d must be a string or a list of token ids", i);
        }
    }
    return 0;
}

/* logprobs: completions' "logprobs" (an integer: alternatives per token, with "echo"); chat's
   "logprobs" (a boolean) and "top_logprobs" (an integer). */
static int srv_parse_logprobs(const dintattn_json *j, const dintattn_json_node *root, srv_params *p, char *err,
                              size_t cap, const char **param)
{
    const dintattn_json_node *v = dintattn_json_get(j, root, "logprobs");
    long long k;
    if (p->chat) {
        if (dintattn_json_type(j, v) != DINTATTN_JSON_NULL) {
            *param = "logprobs";
            if (dintattn_json_type(j, v) != DINTATTN_JSON_BOOL) return srv_bad(err, cap, param, "'logprobs' must be a boolean");
            if (dintattn_json_bool(j, v)) p->logprobs = 0;
        }
        v = dintattn_json_get(j, root, "top_logprobs");
        if (dintattn_json_type(j, v) != DINTATTN_JSON_NULL) {
            *param = "top_logprobs";
            if (!dintattn_json_int(j, v, &k) || k < 0 || k > SRV_MAX_TOP)
                return srv_bad(err, cap, param, "'top_logprobs' must be an integer from 0 to %d", SRV_MAX_TOP);
            if (p->logprobs < 0 && k > 0) return srv_bad(err, cap, param, "'top_logprobs' needs 'logprobs': true");
            if (p->logprobs >= 0) p->logprobs = (int)k;
        }
    } else {
        if (dintattn_json_type(j, v) != DINTATTN_JSON_NULL) {
            *param = "logprobs";
            if (!dintattn_json_int(j, v, &k) || k < 0 || k > SRV_MAX_TOP)
                return srv_bad(err, cap, param, "'logprobs' must be an integer from 0 to %d", SRV_MAX_TOP);
            p->logprobs = (int)k;
        }
        v = dintattn_json_get(j, root, "echo");
        if (dintattn_json_type(j, v) != DINTATTN_JSON_NULL) {
            *param = "echo";
            if (dintattn_json_type(j, v) != DINTATTN_JSON_BOOL) return srv_bad(err, cap, param, "'echo' must be a boolean");
            p->echo = dintattn_json_bool(j, v);
        }
    }
    *param = NULL;
    return 0;
}

/* Reads the body of /v1/completions (chat = 0) or /v1/chat/completions (chat = 1). Returns 0, or
   -1 with a message in err (and *param naming the field, or NULL). Unknown fields are ignored;
   the fields read here must have their OpenAI types and ranges. p owns memory even on failure:
   free it with srv_params_free. */
SRV_FN int srv_parse_params(const char *body, size_t len, int chat, srv_params *p, char *err, size_t cap,
                            const char **param)
{
    const dintattn_json *j;
    const dintattn_json_node *root, *v;
    dintattn_error jerr;
    double num;
    long long ival;
    memset(p, 0, sizeof *p);
    p->chat = chat;
    p->max_tokens = -1;
    p->n = 1;
    p->logprobs = -1;
    p->cache_prompt = 1;
    p->temperature = 1.0;
    p->top_p = 1.0;
    *param = NULL;
    if (dintattn_json_parse(body, len, &p->json, &jerr) != DINTATTN_OK)
        return srv_bad(err, cap, param, "the body is not valid JSON: %s", jerr.message);
    j = p->json;
    root = dintattn_json_root(j);
    if (dintattn_json_type(j, root) != DINTATTN_JSON_OBJECT) return srv_bad(err, cap, param, "the body must be a JSON object");
    v = dintattn_json_get(j, root, "model");
    if (dintattn_json_type(j, v) != DINTATTN_JSON_STRING && dintattn_json_type(j, v) != DINTATTN_JSON_NULL)
        return *param = "model", srv_bad(err, cap, param, "'model' must be a string");
    if (chat) {
        if (srv_parse_messages(j, root, p, err, cap, param)) return -1;
    } else {
        if (srv_parse_prompts(j, root, p, err, cap, param)) return -1;
    }
    *param = NULL;
    v = dintattn_json_get(j, root, chat ? "max_completion_tokens" : "max_tokens");
    if (dintattn_json_type(j, v) == DINTATTN_JSON_NULL) v = dintattn_json_get(j, root, "max_tokens");
    if (dintattn_json_type(j, v) != DINTATTN_JSON_NULL) {
        *param = "max_tokens";
        if (!dintattn_json_int(j, v, &ival) || ival < 0 || ival > INT_MAX)
            return srv_bad(err, cap, param, "'max_tokens' must be an integer of at least 1 (0 only with echo)");
        p->max_tokens = (int)ival;
    }
    if (srv_number(j, root, "temperature", 0, 2, &p->temperature, err, cap, param)) return -1;
    if (srv_number(j, root, "top_p", 0, 1, &p->top_p, err, cap, param)) return -1;
    num = 1;
    if (srv_number(j, root, "n", 1, SRV_MAX_N, &num, err, cap, param)) return -1;
    if (num != (int)num) return srv_bad(err, cap, param, "'n' must be an integer from 1 to %d", SRV_MAX_N);
    p->n = (int)num;
    if (!chat && (long long)p->n_prompts * p->n > SRV_MAX_CHOICES)
        return srv_bad(err, cap, param, "%d prompts x n = %d make %lld choices, more than %d: send fewer at once",
                       p->n_prompts, p->n, (long long)p->n_prompts * p->n, SRV_MAX_CHOICES);
    if (srv_parse_logprobs(j, root, p, err, cap, param)) return -1;
    if (p->max_tokens == 0 && !p->echo)
        return *param = "max_tokens", srv_bad(err, cap, param, "'max_tokens' must be at least 1 (0 only with echo)");
    if (dintattn_json_type(j, v = dintattn_json_get(j, root, "seed")) != DINTATTN_JSON_NULL) {
        *param = "seed";
        if (!dintattn_json_int(j, v, &ival)) return srv_bad(err, cap, param, "'seed' must be an integer");
        p->has_seed = 1;
        p->seed = (unsigned long long)ival;
    }
    if (dintattn_json_type(j, v = dintattn_json_get(j, root, "stream")) != DINTATTN_JSON_NULL) {
        *param = "stream";
        if (dintattn_json_type(j, v) != DINTATTN_JSON_BOOL) return srv_bad(err, cap, param, "'stream' must be a boolean");
        p->stream = dintattn_json_bool(j, v);
    }
    if (dintattn_json_type(j, v = dintattn_json_get(j, root, "cache_prompt")) != DINTATTN_JSON_NULL) {
        *param = "cache_prompt";
        if (dintattn_json_type(j, v) != DINTATTN_JSON_BOOL) return srv_bad(err, cap, param, "'cache_prompt' must be a boolean");
        p->cache_prompt = dintattn_json_bool(j, v);
    }
    if (dintattn_json_type(j, v = dintattn_json_get(j, root, "ignore_eos")) != DINTATTN_JSON_NULL) {
        *param = "ignore_eos";
        if (dintattn_json_type(j, v) != DINTATTN_JSON_BOOL) return srv_bad(err, cap, param, "'ignore_eos' must be a boolean");
        p->ignore_eos = dintattn_json_bool(j, v);
    }
    if (dintattn_json_type(j, v = dintattn_json_get(j, root, "stream_options")) != DINTATTN_JSON_NULL) {
        const dintattn_json_node *u = dintattn_json_get(j, v, "include_usage");
        *param = "stream_options";
        if (dintattn_json_type(j, v) != DINTATTN_JSON_OBJECT) return srv_bad(err, cap, param, "'stream_options' must be an object");
        if (dintattn_json_type(j, u) != DINTATTN_JSON_BOOL && dintattn_json_type(j, u) != DINTATTN_JSON_NULL)
            return srv_bad(err, cap, param, "'stream_options.include_usage' must be a boolean");
        p->include_usage = dintattn_json_bool(j, u);
    }
    if (dintattn_json_type(j, v = dintattn_json_get(j, root, "stop")) != DINTATTN_JSON_NULL &&
        srv_parse_stop(j, v, p, err, cap, param))
        return -1;
    *param = NULL;
    return 0;
}

#endif /* DINTATTN_SERVER_PARAMS_H */
