/* server: an OpenAI-compatible HTTP server for one model.

       examples/server [MODEL] [--host 127.0.0.1] [--port 8080] [--ctx N] [--threads T] [--timeout S]
                       [--weights file|f32|bf16|q8|q4] [--map auto|file|copy] [--precision auto|exact|fast]
                       [--kernels auto|portable|avx2|avx512|amx] [--kv f32|bf16|q8]

   Endpoints: GET /v1/models, POST /v1/completions, POST /v1/chat/completions (stream: true sends
   server-sent events). Requests are served one at a time by a single-threaded accept loop, and
   every response closes its connection (an idle kept-alive connection would hold the loop). The
   session and the ids it holds stay between requests: a prompt that starts with them (a
   conversation extending the previous one) prefills only its new tokens.

   The HTTP layer is ours (examples/server_http.h: request parser and JSON body reader;
   examples/strbuf.h: the replies' string escaping; both fuzzed by fuzz/fuzz_http.c); POSIX
   sockets only. `--port 0` takes a free port; the
   line "server: listening on http://HOST:PORT" on stderr tells which. */
#define _POSIX_C_SOURCE 200809L
#define DINTATTN_IMPLEMENTATION
#include "../dintattn.h"
#include "server_http.h" /* srv_http_parse, srv_parse_params (with dintattn.h's JSON reader) */
#include "textgen.h" /* stop strings, prompt encoding, the prefix cache: shared with generate */
#define CLI_PROG "server"
#include "cli.h" /* cli_engine, cli_arg, cli_load_model: the engine options every example takes */

#include <errno.h>
#include <limits.h>
#include <netdb.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <sys/types.h>
#include <time.h>
#include <unistd.h>

#define DEFAULT_CTX 4096

static const char *usage =
    "usage: server [MODEL] [options]\n"
    "  MODEL            a dintattn .safetensors model with a tokenizer (default: " CLI_DEFAULT_MODEL ")\n"
    "  --host H         address to listen on (default 127.0.0.1)\n"
    "  --port P         port (default 8080; 0 picks a free one, named on stderr)\n"
    "  --ctx N          session context in tokens (default: min(the model's max_seq_len, 4096))\n"
    "  --threads T      threads for decode, prompts and converting weights at load (" CLI_THREADS_RANGE ")\n"
    "  --timeout S      seconds a client has to send its request (default 10)\n"
    CLI_ENGINE_USAGE
    "  -h, --help       this text\n";

static volatile sig_atomic_t stop_flag;

static void on_signal(int sig)
{
    (void)sig;
    stop_flag = 1;
}

typedef struct server {
    dintattn_model *model;
    dintattn_tokenizer *tok;
    dintattn_session *sess;
    float *logits;
    int V, n_ctx;
    tg_cache cache;           /* the ids the session holds, in order */
    char model_id[128];
    unsigned long long n_requests;
    int timeout;
} server;

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

/* --- sockets --------------------------------------------------------------------------------- */

/* Sends everything; -1 if the client is gone (or stalls past SO_SNDTIMEO). */
static int send_all(int fd, const char *p, size_t n)
{
    while (n > 0) {
        ssize_t k = send(fd, p, n, MSG_NOSIGNAL);
        if (k < 0 && errno == EINTR) continue;
        if (k <= 0) return -1;
        p += k;
        n -= (size_t)k;
    }
    return 0;
}

/* 1 if the client has closed its end (or the connection broke). */
static int client_gone(int fd)
{
    struct pollfd pf;
    char c;
    ssize_t k;
    pf.fd = fd;
    pf.events = POLLIN;
    pf.revents = 0;
    if (poll(&pf, 1, 0) <= 0) return 0;
    if (pf.revents & (POLLERR | POLLHUP | POLLNVAL)) return 1;
    k = recv(fd, &c, 1, MSG_PEEK | MSG_DONTWAIT);
    return k == 0 || (k < 0 && errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR);
}

/* Closes after an answer: stop writing, then read what the client still sends (for up to
   `seconds`), so that the answer is not lost to a reset caused by unread bytes. */
static void linger_close(int fd, double seconds)
{
    char sink[16384];
    size_t total = 0;
    double until = now() + seconds;
    struct timeval tv;
    shutdown(fd, SHUT_WR);
    tv.tv_sec = 0;
    tv.tv_usec = 200000;
    setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
    while (now() < until && total < 8u * SRV_MAX_BODY) {
        ssize_t k = recv(fd, sink, sizeof sink, 0);
        if (k == 0 || (k < 0 && errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR)) break;
        if (k > 0) total += (size_t)k;
    }
    close(fd);
}

static const char *status_text(int status)
{
    switch (status) {
    case 200: return "OK";
    case 400: return "Bad Request";
    case 404: return "Not Found";
    case 405: return "Method Not Allowed";
    case 408: return "Request Timeout";
    case 411: return "Length Required";
    case 413: return "Payload Too Large";
    case 414: return "URI Too Long";
    case 417: return "Expectation Failed";
    case 431: return "Request Header Fields Too Large";
    case 500: return "Internal Server Error";
    case 501: return "Not Implemented";
    case 505: return "HTTP Version Not Supported";
    default: return "Error";
    }
}

/* One whole response; returns -1 if it could not be sent. */
static int send_response(int fd, int status, const char *type, const char *extra, const char *body, size_t n)
{
    char head[512];
    int h = snprintf(head, sizeof head,
                     "HTTP/1.1 %d %s\r\nContent-Type: %s\r\nContent-Length: %lu\r\nConnection: close\r\n%s\r\n",
                     status, status_text(status), type, (unsigned long)n, extra ? extra : "");
    if (h < 0 || (size_t)h >= sizeof head) return -1;
    if (send_all(fd, head, (size_t)h)) return -1;
    return send_all(fd, body, n);
}

/* An OpenAI-style error: {"error": {"message", "type", "param", "code"}}. */
static int send_error(int fd, int status, const char *message, const char *param, const char *code,
                      const char *extra)
{
    srv_buf b;
    int r;
    memset(&b, 0, sizeof b);
    srv_buf_str(&b, "{\"error\":{\"message\":");
    srv_buf_json_str(&b, message, strlen(message));
    srv_buf_str(&b, ",\"type\":");
    srv_buf_str(&b, status >= 500 ? "\"server_error\"" : "\"invalid_request_error\"");
    srv_buf_str(&b, ",\"param\":");
    if (param) srv_buf_json_str(&b, param, strlen(param));
    else srv_buf_str(&b, "null");
    srv_buf_str(&b, ",\"code\":");
    if (code) srv_buf_json_str(&b, code, strlen(code));
    else srv_buf_str(&b, "null");
    srv_buf_str(&b, "}}\n");
    if (b.nomem) {
        srv_buf_free(&b);
        return -1;
    }
    r = send_response(fd, status, "application/json", extra, b.p, b.len);
    srv_buf_free(&b);
    fprintf(stderr, "server: %d %s\n", status, message);
    return r;
}

/* --- generation ------------------------------------------------------------------------------ */

typedef struct gen {
    server *s;
    int fd, stream, chat, gone;
    char id[64];
    long long created;
    srv_buf out;                       /* the text generated so far */
    size_t sent;                       /* bytes of out already streamed */
    tg_stops stops;                    /* the request's, and for chat the template's */
} gen;

/* The head of every chunk of this response: data: {"id", "object", "created", "model", "choices": [{ */
static void chunk_head(gen *g, srv_buf *b)
{
    srv_buf_str(b, "data: {\"id\":\"");
    srv_buf_str(b, g->id);
    srv_buf_printf(b, "\",\"object\":\"%s\",\"created\":%lld,\"model\":", g->chat ? "chat.completion.chunk" : "text_completion",
                   g->created);
    srv_buf_json_str(b, g->s->model_id, strlen(g->s->model_id));
}

/* Streams out[sent .. upto) as one chunk (nothing if it is empty and there is no finish reason). */
static void stream_text(gen *g, size_t upto, const char *finish)
{
    srv_buf b;
    if (g->gone || (upto <= g->sent && !finish)) return;
    memset(&b, 0, sizeof b);
    chunk_head(g, &b);
    srv_buf_str(&b, ",\"choices\":[{\"index\":0,");
    if (g->chat) {
        if (upto > g->sent) {
            srv_buf_str(&b, "\"delta\":{\"content\":");
            srv_buf_json_str(&b, g->out.p + g->sent, upto - g->sent);
            srv_buf_str(&b, "}");
        } else {
            srv_buf_str(&b, "\"delta\":{}");
        }
    } else {
        srv_buf_str(&b, "\"text\":");
        srv_buf_json_str(&b, upto > g->sent ? g->out.p + g->sent : "", upto > g->sent ? upto - g->sent : 0);
    }
    srv_buf_str(&b, ",\"logprobs\":null,\"finish_reason\":");
    if (finish) srv_buf_printf(&b, "\"%s\"", finish);
    else srv_buf_str(&b, "null");
    srv_buf_str(&b, "}]}\n\n");
    if (b.nomem || send_all(g->fd, b.p, b.len)) g->gone = 1;
    srv_buf_free(&b);
    if (upto > g->sent) g->sent = upto;
}

static void usage_json(srv_buf *b, int prompt, int completion, int cached)
{
    srv_buf_printf(b, "\"usage\":{\"prompt_tokens\":%d,\"completion_tokens\":%d,\"total_tokens\":%d,"
                      "\"prompt_tokens_details\":{\"cached_tokens\":%d}}",
                   prompt, completion, prompt + completion, cached);
}

/* The prompt's ids into *ids (chat: the conversation formatted with the model's template first):
   their count, or -1 with the error response sent. They fit the context with room for one more. */
static int prompt_ids(server *s, int fd, const srv_params *p, char **text, int **ids)
{
    const int chat = p->chat;
    dintattn_error err;
    size_t text_len = 0;
    char msg[320];
    int n_ids, k;
    if (chat) {
        if (dintattn_chat_format(s->model, p->msgs, p->n_msgs, 1, NULL, 0, &text_len, &err))
            return send_error(fd, 400, err.message, "messages", NULL, NULL), -1;
        *text = (char *)malloc(text_len + 1);
        if (!*text || dintattn_chat_format(s->model, p->msgs, p->n_msgs, 1, *text, text_len + 1, &text_len, &err))
            return send_error(fd, 500, "cannot format the conversation", NULL, NULL, NULL), -1;
    }
    n_ids = tg_encode(s->tok, chat ? *text : p->prompt, chat ? text_len : p->prompt_len, ids, &err);
    if (n_ids < 0)
        return send_error(fd, 500, err.code == DINTATTN_ERR_NOMEM ? "out of memory" : "cannot encode the prompt", NULL, NULL,
                          NULL), -1;
    if (n_ids == 0)
        return send_error(fd, 400, "the prompt is empty and the model has no BOS token to start from",
                          chat ? "messages" : "prompt", NULL, NULL), -1;
    if (n_ids >= s->n_ctx) {
        snprintf(msg, sizeof msg,
                 "This model's maximum context length is %d tokens. However, your prompt has %d tokens "
                 "(and at least one more must fit to generate).",
                 s->n_ctx, n_ids);
        return send_error(fd, 400, msg, chat ? "messages" : "prompt", "context_length_exceeded", NULL), -1;
    }
    for (k = 0; k < n_ids; k++)
        if ((*ids)[k] < 0 || (*ids)[k] >= s->V)
            return send_error(fd, 500, "the tokenizer produced an id outside the model's vocabulary", NULL, NULL, NULL), -1;
    return n_ids;
}

/* The event stream's HTTP head and, for chat, the first chunk, which names the role. */
static void open_stream(gen *g)
{
    static const char head[] = "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nCache-Control: no-cache\r\n"
                               "Connection: close\r\n\r\n";
    if (send_all(g->fd, head, sizeof head - 1)) g->gone = 1;
    if (g->chat && !g->gone) {
        srv_buf b;
        memset(&b, 0, sizeof b);
        chunk_head(g, &b);
        srv_buf_str(&b, ",\"choices\":[{\"index\":0,\"delta\":{\"role\":\"assistant\",\"content\":\"\"},"
                        "\"logprobs\":null,\"finish_reason\":null}]}\n\n");
        if (b.nomem || send_all(g->fd, b.p, b.len)) g->gone = 1;
        srv_buf_free(&b);
    }
}

/* Samples from the session's logits into g->out (streamed as it grows when g->stream) until an EOS
   id, a stop string, max_tokens or the context's end; *n_gen counts the tokens. Returns the finish
   reason: "stop" or "length". */
static const char *generate(gen *g, dintattn_sampler *smp, int n_ids, int max_tokens, int *n_gen)
{
    server *s = g->s;
    dintattn_error err;
    for (;;) {
        int next;
        size_t len, at, before = g->out.len;
        const char *bytes;
        if (*n_gen >= max_tokens || n_ids + *n_gen >= s->n_ctx) break; /* prompt + completion fit the context */
        if (client_gone(g->fd)) g->gone = 1;
        if (g->gone) break;
        next = dintattn_sampler_sample(smp, s->logits);
        if (dintattn_tokenizer_is_eos(s->tok, next)) return "stop";
        ++*n_gen;
        dintattn_sampler_accept(smp, next);
        bytes = dintattn_tokenizer_token(s->tok, next, &len);
        if (bytes) srv_buf_add(&g->out, bytes, len);
        if (g->out.nomem) {
            g->gone = 1;
            break;
        }
        /* a new stop string ends in this token's bytes, and not before what was streamed (tails
           that could begin one are held back) */
        at = tg_stops_find_new(&g->stops, g->out.p, g->out.len, before, g->sent);
        if (at != (size_t)-1) {
            g->out.len = at;
            return "stop";
        }
        if (g->stream) stream_text(g, tg_stops_safe_end(&g->stops, g->out.p, g->out.len), NULL);
        if (dintattn_session_pos(s->sess) >= s->n_ctx) break; /* not reached: the check above ends first */
        if (tg_cache_decode(&s->cache, s->sess, next, s->logits, &err)) {
            fprintf(stderr, "server: decode: %s\n", err.message);
            break;
        }
    }
    return "length";
}

/* The end of a stream: the held tail, the finish reason, the usage if asked for, [DONE]. */
static void close_stream(gen *g, const char *finish, int include_usage, int n_ids, int n_gen, int reused)
{
    stream_text(g, g->out.len, NULL); /* the held tail, unfinished characters as U+FFFD */
    stream_text(g, g->out.len, finish);
    if (include_usage && !g->gone) {
        srv_buf b;
        memset(&b, 0, sizeof b);
        chunk_head(g, &b);
        srv_buf_str(&b, ",\"choices\":[],");
        usage_json(&b, n_ids, n_gen, reused);
        srv_buf_str(&b, "}\n\n");
        if (b.nomem || send_all(g->fd, b.p, b.len)) g->gone = 1;
        srv_buf_free(&b);
    }
    if (!g->gone && send_all(g->fd, "data: [DONE]\n\n", 14)) g->gone = 1;
}

/* The whole completion as one JSON response. */
static void send_completion(gen *g, const char *finish, int n_ids, int n_gen, int reused)
{
    srv_buf b;
    const char *text = g->out.p ? g->out.p : "";
    memset(&b, 0, sizeof b);
    srv_buf_printf(&b, "{\"id\":\"%s\",\"object\":\"%s\",\"created\":%lld,\"model\":", g->id,
                   g->chat ? "chat.completion" : "text_completion", g->created);
    srv_buf_json_str(&b, g->s->model_id, strlen(g->s->model_id));
    srv_buf_str(&b, ",\"choices\":[{\"index\":0,");
    if (g->chat) {
        srv_buf_str(&b, "\"message\":{\"role\":\"assistant\",\"content\":");
        srv_buf_json_str(&b, text, g->out.len);
        srv_buf_str(&b, "}");
    } else {
        srv_buf_str(&b, "\"text\":");
        srv_buf_json_str(&b, text, g->out.len);
    }
    srv_buf_printf(&b, ",\"logprobs\":null,\"finish_reason\":\"%s\"}],", finish);
    usage_json(&b, n_ids, n_gen, reused);
    srv_buf_str(&b, "}\n");
    if (b.nomem) send_error(g->fd, 500, "out of memory", NULL, NULL, NULL);
    else if (send_response(g->fd, 200, "application/json", NULL, b.p, b.len)) g->gone = 1;
    srv_buf_free(&b);
}

static void handle_generate(server *s, int fd, const char *body, size_t body_len, int chat)
{
    srv_params p;
    char msg[320];
    const char *param = NULL, *finish;
    char *text = NULL;
    int *ids = NULL, n_ids, reused, n_gen = 0, max_tokens, k;
    dintattn_sampler *smp = NULL;
    dintattn_sampler_options so;
    dintattn_error err;
    gen g;
    double t0 = now();

    memset(&g, 0, sizeof g);
    if (srv_parse_params(body, body_len, chat, &p, msg, sizeof msg, &param)) {
        send_error(fd, 400, msg, param, NULL, NULL);
        goto done;
    }
    if ((n_ids = prompt_ids(s, fd, &p, &text, &ids)) < 0) goto done;
    /* sampling: OpenAI's temperature and top_p; top_p 0 is greedy; no other filters */
    memset(&so, 0, sizeof so);
    so.temperature = p.top_p > 0 ? (float)p.temperature : 0.0f;
    so.top_p = p.top_p < 1 ? (float)p.top_p : 0.0f;
    so.seed = p.has_seed ? p.seed : (unsigned long long)time(NULL) * 2654435761ull + s->n_requests;
    if (dintattn_sampler_new(s->V, &so, &smp, &err)) {
        send_error(fd, 400, err.message, "temperature", NULL, NULL);
        goto done;
    }
    for (k = 0; k < p.n_stop; k++) tg_stops_add(&g.stops, p.stop[k], p.stop_len[k]);
    if (chat) tg_stops_add_template(&g.stops, s->model); /* the template's stop strings end a turn too */
    reused = tg_cache_load(&s->cache, s->sess, ids, n_ids, s->logits, &err);
    if (reused < 0) {
        send_error(fd, 500, err.message, NULL, NULL, NULL);
        goto done;
    }
    /* without max_tokens: 16 for completions (OpenAI's default), the context's end for chat */
    max_tokens = p.max_tokens > 0 ? p.max_tokens : chat ? INT_MAX : 16;
    g.s = s;
    g.fd = fd;
    g.chat = chat;
    g.stream = p.stream;
    g.created = (long long)time(NULL);
    snprintf(g.id, sizeof g.id, "%s-%llu", chat ? "chatcmpl" : "cmpl", s->n_requests);
    if (g.stream) open_stream(&g);
    finish = generate(&g, smp, n_ids, max_tokens, &n_gen);
    if (g.stream) close_stream(&g, finish, p.include_usage, n_ids, n_gen, reused);
    else if (!g.gone) send_completion(&g, finish, n_ids, n_gen, reused);
    fprintf(stderr, "server: %s %s: prompt %d tokens (%d cached), generated %d, finish %s, %.0f ms%s\n",
            chat ? "chat" : "completion", g.stream ? "stream" : "json", n_ids, reused, n_gen, finish,
            (now() - t0) * 1e3, g.gone ? ", client gone" : "");
done:
    srv_buf_free(&g.out);
    dintattn_sampler_free(smp);
    free(ids);
    free(text);
    srv_params_free(&p);
}

static void handle_models(server *s, int fd, const char *path)
{
    srv_buf b;
    const char *one = !strncmp(path, "/v1/models/", 11) ? path + 11 : NULL;
    memset(&b, 0, sizeof b);
    if (one && strcmp(one, s->model_id) != 0) {
        send_error(fd, 404, "no such model", "model", "model_not_found", NULL);
        return;
    }
    if (!one) srv_buf_str(&b, "{\"object\":\"list\",\"data\":[");
    srv_buf_str(&b, "{\"id\":");
    srv_buf_json_str(&b, s->model_id, strlen(s->model_id));
    srv_buf_printf(&b, ",\"object\":\"model\",\"created\":0,\"owned_by\":\"dintattn\",\"context_length\":%d}", s->n_ctx);
    if (!one) srv_buf_str(&b, "]}");
    srv_buf_str(&b, "\n");
    if (b.nomem) send_error(fd, 500, "out of memory", NULL, NULL, NULL);
    else send_response(fd, 200, "application/json", NULL, b.p, b.len);
    srv_buf_free(&b);
}

/* --- one connection: read the request (bounded in size and time), route it ------------------- */

static void serve(server *s, int fd)
{
    char head[SRV_MAX_HEAD + 1];
    size_t have = 0;
    char *body = NULL;
    srv_http_req req;
    const char *why = "";
    int st = 1;
    double deadline = now() + s->timeout;
    struct timeval tv;
    tv.tv_sec = 1;
    tv.tv_usec = 0;
    setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv); /* a stalled client: we look at the clock each second */
    tv.tv_sec = 10;
    setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof tv); /* a client that stops reading */
    s->n_requests++;
    while (st == 1) {
        ssize_t k;
        if (now() > deadline) {
            send_error(fd, 408, "the request was not received in time", NULL, NULL, NULL);
            close(fd);
            return;
        }
        k = recv(fd, head + have, sizeof head - 1 - have, 0);
        if (k < 0 && (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR)) continue;
        if (k <= 0) { /* closed before a whole request: nothing to answer */
            close(fd);
            return;
        }
        have += (size_t)k;
        st = srv_http_parse(head, have, &req, &why);
    }
    if (st != 0) {
        send_error(fd, st, why, NULL, NULL, NULL);
        linger_close(fd, 2.0); /* the client may still be sending what we refused */
        return;
    }
    if (req.content_length > 0) {
        size_t got = have - req.head_len, need = (size_t)req.content_length;
        body = (char *)malloc(need + 1);
        if (!body) {
            send_error(fd, 500, "out of memory", NULL, NULL, NULL);
            linger_close(fd, 2.0);
            return;
        }
        if (got > need) got = need;
        memcpy(body, head + req.head_len, got);
        if (got < need && req.expect_continue && send_all(fd, "HTTP/1.1 100 Continue\r\n\r\n", 25)) {
            free(body);
            close(fd);
            return;
        }
        while (got < need) {
            ssize_t k;
            if (now() > deadline) {
                send_error(fd, 408, "the request body was not received in time", NULL, NULL, NULL);
                free(body);
                close(fd);
                return;
            }
            k = recv(fd, body + got, need - got, 0);
            if (k < 0 && (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR)) continue;
            if (k <= 0) {
                free(body);
                close(fd);
                return;
            }
            got += (size_t)k;
        }
        body[need] = 0;
    }
    {
        const char *path = req.path, *m = req.method;
        int is_models = !strcmp(path, "/v1/models") || !strncmp(path, "/v1/models/", 11);
        int is_cmpl = !strcmp(path, "/v1/completions"), is_chat = !strcmp(path, "/v1/chat/completions");
        if (!is_models && !is_cmpl && !is_chat) {
            char msg[256];
            snprintf(msg, sizeof msg, "unknown endpoint %.80s (this server has /v1/models, /v1/completions, /v1/chat/completions)", path);
            send_error(fd, 404, msg, NULL, "not_found", NULL);
        } else if (is_models && strcmp(m, "GET") != 0) {
            send_error(fd, 405, "use GET for /v1/models", NULL, NULL, "Allow: GET\r\n");
        } else if (!is_models && strcmp(m, "POST") != 0) {
            send_error(fd, 405, "use POST for this endpoint", NULL, NULL, "Allow: POST\r\n");
        } else if (is_models) {
            handle_models(s, fd, path);
        } else {
            handle_generate(s, fd, body ? body : "", body ? (size_t)req.content_length : 0, is_chat);
        }
    }
    free(body);
    linger_close(fd, 0.2); /* the request was read whole: only a client that lingers waits */
}

/* --- main ------------------------------------------------------------------------------------ */

typedef struct server_args {
    cli_engine eng;
    const char *host, *port;
} server_args;

/* The command line into a and s->timeout; returns -1 to go on, else the exit code. */
static int parse_args(int argc, char **argv, server_args *a, server *s)
{
    int i, port_num = 0;
    cli_engine_init(&a->eng);
    a->host = "127.0.0.1";
    a->port = "8080";
    s->timeout = 10;
    for (i = 1; i < argc; i++) {
        const char *f = argv[i], *v;
        int bad = 0;
        switch (cli_arg(argc, argv, &i, NULL, &a->eng, &v)) {
        case CLI_ARG_VALUE: break;
        case CLI_ARG_MODEL: continue;
        case CLI_ARG_HELP: cli_usage(stdout, usage, 19); return 0;
        default: return 1;
        }
        if (!strcmp(f, "--host")) a->host = v;
        else if (!strcmp(f, "--port")) bad = cli_parse_int(v, 0, 65535, &port_num), a->port = v;
        else if (!strcmp(f, "--timeout")) bad = cli_parse_int(v, 1, 3600, &s->timeout);
        else if ((bad = cli_engine_option(&a->eng, CLI_ENGINE | CLI_CTX, f, v, NULL)) < 0)
            return cli_fail("unknown option (see --help)", f);
        if (bad) {
            fprintf(stderr, "server: bad value '%s' for %s (see --help)\n", v, f);
            return 1;
        }
    }
    return cli_engine_done(&a->eng) ? 1 : -1;
}

/* The model's id in replies: its file name without directory and extension. */
static void name_model(server *s, const char *path)
{
    const char *slash = strrchr(path, '/');
    size_t n;
    snprintf(s->model_id, sizeof s->model_id, "%.100s", slash ? slash + 1 : path);
    n = strlen(s->model_id);
    if (n > 12 && !strcmp(s->model_id + n - 12, ".safetensors")) s->model_id[n - 12] = 0;
}

/* Loads the model and its tokenizer and makes the one session (context: --ctx, else the model's,
   at most DEFAULT_CTX). Returns 0, or -1 (printed). */
static int open_engine(server *s, const cli_engine *eng, const char *path)
{
    dintattn_error err;
    dintattn_session_options so;
    if (cli_load_model(path, eng->weights, eng->map, eng->threads, &s->model, &err) ||
        dintattn_tokenizer_from_model(s->model, &s->tok, &err)) {
        fprintf(stderr, "server: %s: %s\n", path, err.message);
        return -1;
    }
    s->V = dintattn_model_config(s->model)->vocab_size;
    s->n_ctx = dintattn_model_config(s->model)->max_seq_len;
    if (eng->ctx > 0 ? eng->ctx < s->n_ctx : s->n_ctx > DEFAULT_CTX) s->n_ctx = eng->ctx > 0 ? eng->ctx : DEFAULT_CTX;
    cli_session_options(eng, s->n_ctx, &so);
    s->logits = (float *)malloc(sizeof(float) * (size_t)s->V);
    s->cache.ids = (int *)malloc(sizeof(int) * (size_t)s->n_ctx);
    if (!s->logits || !s->cache.ids) {
        fprintf(stderr, "server: out of memory\n");
        return -1;
    }
    if (dintattn_session_new(s->model, &so, &s->sess, &err)) {
        fprintf(stderr, "server: cannot create a session: %s\n", err.message);
        return -1;
    }
    return 0;
}

static void install_signals(void)
{
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = SIG_IGN;
    sigaction(SIGPIPE, &sa, NULL); /* a client gone mid-response is an error from send, not a signal */
    sa.sa_handler = on_signal;     /* no SA_RESTART: accept returns EINTR and the loop ends */
    sigaction(SIGINT, &sa, NULL);
    sigaction(SIGTERM, &sa, NULL);
}

/* A listening socket on host:port, its URL in where; -1 (printed) if there is none. */
static int listen_on(const char *host, const char *port, char *where, size_t cap)
{
    struct addrinfo hints, *ai = NULL;
    struct sockaddr_storage addr;
    socklen_t alen = sizeof addr;
    char hostbuf[1025], portbuf[32];
    int lfd, one = 1, r;
    memset(&hints, 0, sizeof hints);
    hints.ai_family = AF_UNSPEC;
    hints.ai_socktype = SOCK_STREAM;
    hints.ai_flags = AI_PASSIVE | AI_NUMERICSERV;
    if ((r = getaddrinfo(host, port, &hints, &ai)) != 0) {
        fprintf(stderr, "server: %s:%s: %s\n", host, port, gai_strerror(r));
        return -1;
    }
    lfd = socket(ai->ai_family, ai->ai_socktype, ai->ai_protocol);
    if (lfd < 0 || setsockopt(lfd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one) ||
        bind(lfd, ai->ai_addr, ai->ai_addrlen) || listen(lfd, 16) ||
        getsockname(lfd, (struct sockaddr *)&addr, &alen) ||
        getnameinfo((struct sockaddr *)&addr, alen, hostbuf, sizeof hostbuf, portbuf, sizeof portbuf,
                    NI_NUMERICHOST | NI_NUMERICSERV)) {
        fprintf(stderr, "server: cannot listen on %s:%s: %s\n", host, port, strerror(errno));
        if (lfd >= 0) close(lfd);
        freeaddrinfo(ai);
        return -1;
    }
    freeaddrinfo(ai);
    snprintf(where, cap, "http://%s%s%s:%s", strchr(hostbuf, ':') ? "[" : "", hostbuf, strchr(hostbuf, ':') ? "]" : "",
             portbuf);
    return lfd;
}

/* Serves one connection at a time until SIGINT or SIGTERM. */
static void accept_loop(server *s, int lfd)
{
    while (!stop_flag) {
        int fd = accept(lfd, NULL, NULL);
        if (fd < 0) {
            if (errno != EINTR && errno != ECONNABORTED) fprintf(stderr, "server: accept: %s\n", strerror(errno));
            if (errno == EMFILE || errno == ENFILE) sleep(1);
            continue;
        }
        serve(s, fd);
    }
    fprintf(stderr, "server: stopped\n");
}

static void server_free(server *s)
{
    dintattn_session_free(s->sess);
    free(s->cache.ids);
    free(s->logits);
    dintattn_tokenizer_free(s->tok);
    dintattn_model_free(s->model);
}

int main(int argc, char **argv)
{
    server_args a;
    server s;
    const char *path;
    char where[1100];
    int lfd, rc;
    memset(&s, 0, sizeof s);
    argv = cli_aliases(&argc, argv); /* --fast */
    if ((rc = parse_args(argc, argv, &a, &s)) >= 0) return rc;
    path = cli_model_path(a.eng.model, argv[0]);
    name_model(&s, path);
    rc = 1;
    if (open_engine(&s, &a.eng, path) == 0) {
        install_signals();
        if ((lfd = listen_on(a.host, a.port, where, sizeof where)) >= 0) {
            fprintf(stderr, "server: model %s, context %d tokens, %d threads, kernels %s\n", s.model_id, s.n_ctx,
                    a.eng.threads, dintattn_kernels_name(dintattn_session_kernels(s.sess)));
            fprintf(stderr, "server: listening on %s\n", where);
            accept_loop(&s, lfd);
            close(lfd);
            rc = 0;
        }
    }
    server_free(&s);
    return rc;
}
