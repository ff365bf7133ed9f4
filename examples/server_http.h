/* server_http.h: the byte-level half of examples/server.c, kept apart so that a libFuzzer
   harness (fuzz/fuzz_http.c) and tests/test_hardening.c can drive it without sockets or a model:

     srv_http_parse     an HTTP/1.x request head (request line and headers) from a byte buffer
     srv_parse_params   the JSON body of /v1/completions and /v1/chat/completions

   (the JSON strings of the replies are written with strbuf.h's srv_buf_json_str).
   JSON is read with dintattn.h's JSON reader (dintattn_json_parse, dintattn_json_get: RFC 8259
   syntax, bounded nesting, no duplicate keys), rather than a second parser: include this file
   after dintattn.h. */
#ifndef DINTATTN_SERVER_HTTP_H
#define DINTATTN_SERVER_HTTP_H

#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "strbuf.h" /* srv_buf, srv_buf_json_str, srv_utf8_partial */

#define SRV_MAX_HEAD (16 * 1024)     /* request line + headers; past it: 431 */
#define SRV_MAX_BODY (1024 * 1024)   /* a request body; past it: 413 */
#define SRV_MAX_STOPS 16             /* stop strings of a request (the template's come on top) */

/* --- the HTTP request head ----------------------------------------------------------------- */

typedef struct srv_http_req {
    char method[16];
    char path[1024];          /* the target up to '?' */
    int minor;                /* HTTP/1.0 or 1.1 */
    long content_length;      /* -1: no Content-Length */
    int expect_continue;      /* Expect: 100-continue */
    size_t head_len;          /* bytes of the head, its blank line included */
} srv_http_req;

static int srv_is_tchar(unsigned char c)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
           (c && strchr("!#$%&'*+-.^_`|~", c) != NULL);
}

static int srv_ieq(const char *a, size_t n, const char *b)
{
    size_t i;
    if (strlen(b) != n) return 0;
    for (i = 0; i < n; i++) {
        char x = a[i], y = b[i];
        if (x >= 'A' && x <= 'Z') x = (char)(x - 'A' + 'a');
        if (y >= 'A' && y <= 'Z') y = (char)(y - 'A' + 'a');
        if (x != y) return 0;
    }
    return 1;
}

/* Parses the head of one request in buf[0..len). Returns 0 when it is complete and well formed
   (r filled; the body starts at r->head_len), 1 when more bytes are needed, or the HTTP status to
   answer with (400, 411, 413, 414, 431, 501, 505), *why naming the fault. Lines end in CRLF or LF. */
SRV_FN int srv_http_parse(const char *buf, size_t len, srv_http_req *r, const char **why)
{
    size_t end = 0, i, line, sp1, sp2;
    int have_te = 0;
    memset(r, 0, sizeof *r);
    r->content_length = -1;
    *why = "";
    /* the blank line that ends the head, within SRV_MAX_HEAD bytes */
    for (i = 0; i < len && i < SRV_MAX_HEAD; i++)
        if (buf[i] == '\n' && ((i >= 1 && buf[i - 1] == '\n') || (i >= 2 && buf[i - 1] == '\r' && buf[i - 2] == '\n'))) {
            end = i + 1;
            break;
        }
    if (!end) {
        if (len >= SRV_MAX_HEAD) return *why = "request head over 16 KiB", 431;
        return 1;
    }
    r->head_len = end;
    /* request line: METHOD SP TARGET SP HTTP/1.x */
    for (line = 0; buf[line] != '\n'; line++) {}
    if (line > 0 && buf[line - 1] == '\r') line--;
    for (sp1 = 0; sp1 < line && buf[sp1] != ' '; sp1++)
        if (!srv_is_tchar((unsigned char)buf[sp1])) return *why = "bad request line", 400;
    if (sp1 == 0 || sp1 >= line) return *why = "bad request line", 400;
    if (sp1 >= sizeof r->method) return *why = "method too long", 501;
    memcpy(r->method, buf, sp1);
    for (sp2 = sp1 + 1; sp2 < line && buf[sp2] != ' '; sp2++)
        if ((unsigned char)buf[sp2] <= 0x20 || (unsigned char)buf[sp2] >= 0x7F) return *why = "bad request target", 400;
    if (sp2 >= line || sp2 == sp1 + 1) return *why = "bad request line", 400;
    if (buf[sp1 + 1] != '/') return *why = "the request target must start with '/'", 400;
    for (i = sp1 + 1; i < sp2 && buf[i] != '?'; i++) {}
    if (i - (sp1 + 1) >= sizeof r->path) return *why = "request target too long", 414;
    memcpy(r->path, buf + sp1 + 1, i - (sp1 + 1));
    if (line - (sp2 + 1) != 8 || memcmp(buf + sp2 + 1, "HTTP/", 5) != 0 || buf[sp2 + 7] != '.' ||
        buf[sp2 + 6] < '0' || buf[sp2 + 6] > '9' || buf[sp2 + 8] < '0' || buf[sp2 + 8] > '9')
        return *why = "bad HTTP version", 400;
    if (buf[sp2 + 6] != '1' || (buf[sp2 + 8] != '0' && buf[sp2 + 8] != '1'))
        return *why = "only HTTP/1.0 and 1.1 are served", 505;
    r->minor = buf[sp2 + 8] - '0';
    /* header fields: NAME ":" OWS VALUE OWS */
    for (i = line + (buf[line] == '\r' ? 2 : 1); i < end;) {
        size_t eol, colon, v0, v1, next;
        for (eol = i; buf[eol] != '\n'; eol++) {}
        next = eol + 1;
        if (eol > i && buf[eol - 1] == '\r') eol--;
        if (eol == i) break; /* the blank line */
        if (buf[i] == ' ' || buf[i] == '\t') return *why = "folded header line", 400;
        for (colon = i; colon < eol && buf[colon] != ':'; colon++)
            if (!srv_is_tchar((unsigned char)buf[colon])) return *why = "bad header name", 400;
        if (colon == i || colon >= eol) return *why = "bad header line", 400;
        for (v0 = colon + 1; v0 < eol && (buf[v0] == ' ' || buf[v0] == '\t'); v0++) {}
        for (v1 = eol; v1 > v0 && (buf[v1 - 1] == ' ' || buf[v1 - 1] == '\t'); v1--) {}
        for (next = v0; next < v1; next++) {
            unsigned char c = (unsigned char)buf[next];
            if ((c < 0x20 && c != '\t') || c == 0x7F) return *why = "control character in a header", 400;
        }
        if (srv_ieq(buf + i, colon - i, "content-length")) {
            long v = 0;
            size_t k;
            if (v1 == v0) return *why = "bad Content-Length", 400;
            for (k = v0; k < v1; k++) {
                if (buf[k] < '0' || buf[k] > '9') return *why = "bad Content-Length", 400;
                if (v <= SRV_MAX_BODY) v = v * 10 + (buf[k] - '0');
            }
            if (r->content_length >= 0 && r->content_length != v) return *why = "conflicting Content-Length headers", 400;
            r->content_length = v;
        } else if (srv_ieq(buf + i, colon - i, "transfer-encoding")) {
            have_te = 1;
        } else if (srv_ieq(buf + i, colon - i, "expect")) {
            if (!srv_ieq(buf + v0, v1 - v0, "100-continue")) return *why = "unsupported Expect", 417;
            r->expect_continue = 1;
        }
        i = eol + (buf[eol] == '\r' ? 2 : 1);
    }
    if (have_te && r->content_length >= 0) return *why = "both Transfer-Encoding and Content-Length", 400;
    if (have_te) return *why = "Transfer-Encoding (chunked request bodies) is not supported: send Content-Length", 411;
    if (r->content_length > SRV_MAX_BODY) return *why = "request body over 1 MiB", 413;
    if (r->content_length < 0 && !strcmp(r->method, "POST")) return *why = "a POST needs Content-Length", 411;
    return 0;
}

/* --- the JSON body of a generation request --------------------------------------------------- */

typedef struct srv_params {
    dintattn_json *json;              /* the parsed body: the strings below point into it */
    int chat, stream, include_usage;
    const char *prompt;               /* completions */
    size_t prompt_len;
    dintattn_chat_message *msgs;      /* chat */
    char **joined;                    /* per message: its text parts joined (content as a list), or NULL */
    int n_msgs;
    int max_tokens;                   /* -1 when not given */
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
        v = dintattn_json_get(j, root, "prompt");
        *param = "prompt";
        if (!v) return srv_bad(err, cap, param, "'prompt' is required");
        if (dintattn_json_len(j, v) == 1 && dintattn_json_type(j, v) == DINTATTN_JSON_ARRAY &&
            dintattn_json_type(j, dintattn_json_at(j, v, 0)) == DINTATTN_JSON_STRING)
            v = dintattn_json_at(j, v, 0); /* a list of one prompt */
        p->prompt = dintattn_json_str(j, v, &p->prompt_len);
        if (!p->prompt) return srv_bad(err, cap, param, "'prompt' must be a string (or a list of one string)");
    }
    *param = NULL;
    v = dintattn_json_get(j, root, chat ? "max_completion_tokens" : "max_tokens");
    if (dintattn_json_type(j, v) == DINTATTN_JSON_NULL) v = dintattn_json_get(j, root, "max_tokens");
    if (dintattn_json_type(j, v) != DINTATTN_JSON_NULL) {
        *param = "max_tokens";
        if (!dintattn_json_int(j, v, &ival) || ival < 1 || ival > INT_MAX)
            return srv_bad(err, cap, param, "'max_tokens' must be an integer of at least 1");
        p->max_tokens = (int)ival;
    }
    if (srv_number(j, root, "temperature", 0, 2, &p->temperature, err, cap, param)) return -1;
    if (srv_number(j, root, "top_p", 0, 1, &p->top_p, err, cap, param)) return -1;
    num = 1;
    if (srv_number(j, root, "n", 1, 1, &num, err, cap, param)) return srv_bad(err, cap, param, "only 'n' = 1 is supported");
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

#endif /* DINTATTN_SERVER_HTTP_H */
