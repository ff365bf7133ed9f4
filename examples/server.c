/* server: an OpenAI-compatible HTTP server for one model and many users at once.

       examples/server [MODEL] [--host 127.0.0.1] [--port 8080] [--parallel N] [--queue N]
                       [--ctx N] [--threads T] [--timeout S] [engine options]

   Endpoints: POST /v1/completions and /v1/chat/completions (stream: true sends server-sent
   events), GET /v1/models, /health, /metrics (Prometheus text) and /slots.

   How it is built:
   - HTTP is libmicrohttpd's (Debian's libmicrohttpd-dev), a thread per connection: a slow, idle
     or half-closed client holds only its own thread, keep-alive and chunked bodies come with it,
     and `--timeout` closes a connection that sends nothing for that long.
   - One generation thread owns the model's sessions: `--parallel` slots, each a session with its
     own context. Every step it gives waiting sequences free slots, then advances every busy slot
     at once with dintattn_batch_step (one pass over the weights for all of them: a decoded token
     each, or a chunk of a prompt), samples, and hands the text to the connections.
   - A request waits in a queue of `--queue` requests for a free slot; past it, 503 with
     Retry-After, never a reset.
   - A slot keeps the ids its session holds after its request ends: a new sequence takes the free
     slot whose ids share the longest prefix with its prompt (or copies the session of any slot
     that shares a longer one: dintattn_session_copy), cuts it there
     (dintattn_session_truncate) and prefills only the rest; usage.prompt_tokens_details.
     cached_tokens counts the reused ids.
   - `n` samples of a prompt prefill it once; the others copy that session and its logits.
   - logprobs are the model's own (a log-softmax of the raw logits, dintattn_logprob_of), before
     temperature and top_p. Completions' `echo` with `logprobs` returns every prompt token's
     logprob and alternatives, as lm-evaluation-harness's local-completions model reads them.
   The JSON bodies are read by server_params.h (fuzzed by fuzz/fuzz_http.c). `--port 0` takes a
   free port; the line "server: listening on http://HOST:PORT" on stderr says which, once the
   model is loaded ("server: loading ..." comes first, with the address: /health answers 503
   until then). */
#define _POSIX_C_SOURCE 200809L
#define DINTATTN_IMPLEMENTATION
#include "../dintattn.h"
#include "server_params.h" /* srv_parse_params: the JSON bodies (with dintattn.h's JSON reader) */
#include "textgen.h"       /* stop strings, prompt encoding: shared with generate */
#define CLI_PROG "server"
#include "cli.h" /* cli_engine, cli_arg, cli_load_model: the engine options every example takes */

#include <errno.h>
#include <limits.h>
#include <math.h>
#include <netdb.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/types.h>
#include <time.h>
#include <unistd.h>

#include <microhttpd.h>

#define DEFAULT_CTX 4096
#define MAX_DEFAULT_SLOTS 16   /* --parallel's default: at most this many, as memory allows */
#define ECHO_ROWS 64           /* prompt rows of logits computed at once for echo with logprobs */
#define RATE_STEPS 64          /* /metrics' tokens per second: over the last this many steps */

static const char *usage =
    "usage: server [MODEL] [options]\n"
    "  MODEL            a dintattn .safetensors model, with a tokenizer or --tokenizer (default: " CLI_DEFAULT_MODEL ")\n"
    "  --host H         address to listen on (default 127.0.0.1)\n"
    "  --port P         port (default 8080; 0 picks a free one, named on stderr)\n"
    "  --parallel N     slots: sequences generated at once, each with its own context (1 to 256;\n"
    "                   default: as many as fit in half the available memory, at most 16)\n"
    "  --queue N        requests that may wait for a free slot; past it, 503 (0 to 100000, default 64)\n"
    "  --ctx N          each slot's context in tokens (default: min(the model's max_seq_len, 4096))\n"
    "  --threads T      threads for decode, prompts and converting weights at load (" CLI_THREADS_RANGE ")\n"
    CLI_TOKENIZER_USAGE
    "  --timeout S      seconds a connection may stay silent: sending a request, or idle between\n"
    "                   requests (1 to 3600, default 10)\n"
    CLI_ENGINE_USAGE
    "  -h, --help       this text\n";

/* --- state ----------------------------------------------------------------------------------- */

typedef struct server server;
typedef struct request request;

/* One token's log-probability and its most likely alternatives. */
typedef struct lp_entry {
    int id;
    size_t start, end;        /* its bytes in its choice's text */
    double logprob;           /* NaN for a prompt's first token, which has no context */
    int n_top;
    int top_id[SRV_MAX_TOP];
    double top_lp[SRV_MAX_TOP];
} lp_entry;

typedef struct lp_list {
    lp_entry *e;
    int n, cap;
} lp_list;

enum { CH_QUEUED, CH_PREFILL, CH_ECHO, CH_SAMPLE, CH_DECODE, CH_DONE };

/* One sequence of a request: a prompt and one sample of its continuation. state, fed, next and
   slot belong to the generation thread; the text, logprobs and `done` are read by the connection
   under the server's lock. */
typedef struct choice {
    request *req;
    int index, prompt, sample;     /* index = prompt * n + sample */
    int state;
    struct slot *slot;
    dintattn_sampler *smp;
    int fed;                       /* the prompt's ids in the slot's session */
    int cached;                    /* of them, reused from a slot */
    int next;                      /* the sampled id to run next */
    int n_gen;
    int opened;                    /* echo text put first, first token timed */
    srv_buf out;                   /* echoed prompt text, then the generated text */
    size_t gen_start;              /* where the generated text starts in out */
    size_t sent;                   /* bytes of out streamed */
    lp_list lp;                    /* logprobs of out's tokens, in order */
    int lp_sent;
    const char *finish;            /* "stop", "length"; NULL while running or when dropped */
    int done, finish_sent;
} choice;

struct request {
    server *s;
    int refs;                      /* the connection's and the generation thread's */
    pthread_cond_t cond;           /* new text, or done */
    srv_params p;
    int chat, stream, logprobs, echo, max_tokens;
    tg_stops stops;
    char *chat_text;
    int n_prompts;
    int **ids, *n_ids;             /* per prompt */
    float **prompt_logits;         /* per prompt: its last id's logits, for the other samples */
    lp_list *echo_lp;              /* per prompt: every id's logprob (echo with logprobs) */
    choice *choices;
    int n_choices, next_admit, n_done;
    int queued, cancelled, failed;
    char error[320];
    double t_arrive, t_first;
    char id[64];
    long long created;
    int prompt_tokens, cached_tokens;
    srv_buf wire;                  /* the event stream's bytes not yet given to the connection */
    size_t wire_off;
    int role_sent, usage_sent, wire_end;
    double last_write;
};

typedef struct slot {
    int id;
    dintattn_session *sess;
    float *logits;
    int *ids, n_ids;               /* the ids its session holds, in order */
    choice *ch;                    /* the sequence it runs; NULL: free (its ids stay for reuse) */
    unsigned long long used;       /* when it was last given a sequence: the oldest free slot goes first */
} slot;

#define N_TTFT_BUCKETS 10
static const double ttft_bounds[N_TTFT_BUCKETS] = {0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60};

typedef struct metrics {
    int status_code[16];
    unsigned long long status_n[16];
    unsigned long long prompt_tokens, cached_tokens, generated_tokens, steps, step_tokens;
    unsigned long long ttft_n[N_TTFT_BUCKETS + 1], ttft_count;
    double ttft_sum;
    double rate_sec[RATE_STEPS];
    int rate_tok[RATE_STEPS], rate_at;
} metrics;

struct server {
    /* set before the generation thread starts */
    dintattn_model *model;
    dintattn_tokenizer *tok;
    int V, n_ctx, n_slots, queue_max, timeout;
    slot *slots;
    char model_id[128];
    int n_batch;                   /* the slots' sessions' n_batch: a step's prompt tokens */
    float *echo_logits;            /* the generation thread's: ECHO_ROWS rows */
    float *scratch;                /* the generation thread's: logits a sampler may change */
    int *eos_ids, n_eos;           /* the ids that end a generation (ignore_eos masks them) */
    /* under mu */
    pthread_mutex_t mu;
    pthread_cond_t work;           /* a request arrived, or one was cancelled */
    int loaded, stopping;
    request **queue;
    int n_queue;
    unsigned long long n_requests, use_clock;
    metrics m;
};

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

static void lp_push(lp_list *l, const lp_entry *e)
{
    if (l->n == l->cap) {
        int cap = l->cap ? 2 * l->cap : 16;
        lp_entry *p = (lp_entry *)realloc(l->e, sizeof *p * (size_t)cap);
        if (!p) return; /* a logprob lost to no memory, not the answer */
        l->e = p;
        l->cap = cap;
    }
    l->e[l->n++] = *e;
}

/* Fills e with log p(id) and the k most likely ids under logits (the model's own distribution:
   the library's log-softmax, dintattn_logprob_of, whose normaliser the others share). */
static void logprob_entry(const float *logits, int V, int id, int k, lp_entry *e)
{
    double lp = dintattn_logprob_of(logits, V, id), norm = (double)logits[id] - lp;
    int j, n = 0;
    memset(e, 0, sizeof *e);
    e->id = id;
    e->logprob = lp;
    for (j = 0; j < V && k > 0; j++) { /* insertion into the k best, kept sorted */
        float x = logits[j];
        int at;
        if (!(x == x)) continue;
        if (n == k && x <= logits[e->top_id[n - 1]]) continue;
        at = n < k ? n++ : n - 1;
        while (at > 0 && logits[e->top_id[at - 1]] < x) {
            e->top_id[at] = e->top_id[at - 1];
            at--;
        }
        e->top_id[at] = j;
    }
    e->n_top = n;
    for (j = 0; j < n; j++) e->top_lp[j] = (double)logits[e->top_id[j]] - norm;
}

/* --- metrics --------------------------------------------------------------------------------- */

static void count_status(server *s, int status)
{
    int k;
    pthread_mutex_lock(&s->mu);
    for (k = 0; k < 16; k++)
        if (s->m.status_code[k] == status || s->m.status_code[k] == 0) {
            s->m.status_code[k] = status;
            s->m.status_n[k]++;
            break;
        }
    pthread_mutex_unlock(&s->mu);
}

/* --- HTTP replies ---------------------------------------------------------------------------- */

static enum MHD_Result reply(server *s, struct MHD_Connection *mc, int status, const char *type, srv_buf *body,
                             const char *h1, const char *v1)
{
    struct MHD_Response *r;
    enum MHD_Result ret;
    if (body->nomem) {
        static const char oom[] = "{\"error\":{\"message\":\"out of memory\",\"type\":\"server_error\",\"param\":null,\"code\":null}}\n";
        r = MHD_create_response_from_buffer(sizeof oom - 1, (void *)oom, MHD_RESPMEM_PERSISTENT);
        status = 500;
    } else {
        r = MHD_create_response_from_buffer(body->len, body->p ? body->p : (char *)"", MHD_RESPMEM_MUST_COPY);
    }
    if (!r) return MHD_NO;
    MHD_add_response_header(r, "Content-Type", type);
    if (h1) MHD_add_response_header(r, h1, v1);
    ret = MHD_queue_response(mc, (unsigned)status, r);
    MHD_destroy_response(r);
    count_status(s, status);
    return ret;
}

/* An OpenAI-style error: {"error": {"message", "type", "param", "code"}}. */
static enum MHD_Result reply_error(server *s, struct MHD_Connection *mc, int status, const char *message,
                                   const char *param, const char *code, const char *h1, const char *v1)
{
    srv_buf b;
    enum MHD_Result r;
    memset(&b, 0, sizeof b);
    srv_buf_str(&b, "{\"error\":{\"message\":");
    srv_buf_json_str(&b, message, strlen(message));
    srv_buf_printf(&b, ",\"type\":\"%s\",\"param\":",
                   status == 503 ? "unavailable_error" : status >= 500 ? "server_error" : "invalid_request_error");
    if (param) srv_buf_json_str(&b, param, strlen(param));
    else srv_buf_str(&b, "null");
    srv_buf_str(&b, ",\"code\":");
    if (code) srv_buf_json_str(&b, code, strlen(code));
    else srv_buf_str(&b, "null");
    srv_buf_str(&b, "}}\n");
    r = reply(s, mc, status, "application/json", &b, h1, v1);
    srv_buf_free(&b);
    fprintf(stderr, "server: %d %s\n", status, message);
    return r;
}

/* --- requests -------------------------------------------------------------------------------- */

static void request_free(request *r)
{
    int k;
    for (k = 0; k < r->n_choices; k++) {
        dintattn_sampler_free(r->choices[k].smp);
        srv_buf_free(&r->choices[k].out);
        free(r->choices[k].lp.e);
    }
    for (k = 0; k < r->n_prompts; k++) {
        if (r->ids) free(r->ids[k]);
        if (r->prompt_logits) free(r->prompt_logits[k]);
        if (r->echo_lp) free(r->echo_lp[k].e);
    }
    free(r->ids);
    free(r->n_ids);
    free(r->prompt_logits);
    free(r->echo_lp);
    free(r->choices);
    free(r->chat_text);
    srv_buf_free(&r->wire);
    srv_params_free(&r->p);
    pthread_cond_destroy(&r->cond);
    free(r);
}

/* Drops one reference (under the lock); the last frees the request. */
static void request_release(request *r)
{
    if (--r->refs == 0) request_free(r);
}

/* The request's prompts as ids (chat: the conversation through the model's template first), and
   its choices with their samplers. 0, or the HTTP status with msg (and *param, *code) set. */
static int request_prepare(server *s, request *r, char *msg, size_t cap, const char **param, const char **code)
{
    const srv_params *p = &r->p;
    dintattn_error err;
    int k, i;
    r->n_prompts = r->chat ? 1 : p->n_prompts;
    r->ids = (int **)calloc((size_t)r->n_prompts, sizeof *r->ids);
    r->n_ids = (int *)calloc((size_t)r->n_prompts, sizeof *r->n_ids);
    r->prompt_logits = (float **)calloc((size_t)r->n_prompts, sizeof *r->prompt_logits);
    r->echo_lp = (lp_list *)calloc((size_t)r->n_prompts, sizeof *r->echo_lp);
    r->n_choices = r->n_prompts * p->n;
    r->choices = (choice *)calloc((size_t)r->n_choices, sizeof *r->choices);
    if (!r->ids || !r->n_ids || !r->prompt_logits || !r->echo_lp || !r->choices)
        return snprintf(msg, cap, "out of memory"), 500;
    *param = r->chat ? "messages" : "prompt";
    for (k = 0; k < r->n_prompts; k++) {
        int n;
        if (r->chat) {
            size_t len = 0;
            if (dintattn_chat_format(s->model, p->msgs, p->n_msgs, 1, NULL, 0, &len, &err))
                return snprintf(msg, cap, "%s", err.message), 400;
            r->chat_text = (char *)malloc(len + 1);
            if (!r->chat_text || dintattn_chat_format(s->model, p->msgs, p->n_msgs, 1, r->chat_text, len + 1, &len, &err))
                return snprintf(msg, cap, "cannot format the conversation"), 500;
            n = tg_encode(s->tok, r->chat_text, len, &r->ids[k], &err);
        } else if (p->prompts[k].text) {
            n = tg_encode(s->tok, p->prompts[k].text, p->prompts[k].len, &r->ids[k], &err);
        } else {
            n = p->prompts[k].n_ids;
            r->ids[k] = (int *)malloc(sizeof(int) * (size_t)n);
            if (r->ids[k]) memcpy(r->ids[k], p->prompts[k].ids, sizeof(int) * (size_t)n);
            else n = -1, err.code = DINTATTN_ERR_NOMEM;
        }
        if (n < 0) return snprintf(msg, cap, "%s", err.code == DINTATTN_ERR_NOMEM ? "out of memory" : "cannot encode the prompt"), 500;
        if (n == 0) return snprintf(msg, cap, "the prompt is empty and the model has no BOS token to start from"), 400;
        if (n >= s->n_ctx) {
            *code = "context_length_exceeded";
            return snprintf(msg, cap,
                            "This model's maximum context length is %d tokens. However, your prompt%s has %d tokens "
                            "(and at least one more must fit to generate).",
                            s->n_ctx, r->n_prompts > 1 ? "s' longest" : "", n), 400;
        }
        for (i = 0; i < n; i++)
            if (r->ids[k][i] < 0 || r->ids[k][i] >= s->V || !dintattn_tokenizer_has_token(s->tok, r->ids[k][i]))
                return snprintf(msg, cap, "prompt %d: token id %d is not in the model's vocabulary of %d", k, r->ids[k][i],
                                s->V), 400;
        r->n_ids[k] = n;
        r->prompt_tokens += n;
    }
    *param = NULL;
    for (k = 0; k < r->n_choices; k++) {
        choice *c = &r->choices[k];
        dintattn_sampler_options so;
        c->req = r;
        c->index = k;
        c->prompt = k / p->n;
        c->sample = k % p->n;
        memset(&so, 0, sizeof so);
        /* OpenAI's temperature and top_p; top_p 0 is greedy; sample k of a seeded request draws
           with seed + k, so that each is reproducible alone */
        so.temperature = p->top_p > 0 ? (float)p->temperature : 0.0f;
        so.top_p = p->top_p < 1 ? (float)p->top_p : 0.0f;
        so.seed = (p->has_seed ? p->seed : (unsigned long long)time(NULL) * 2654435761ull ^ (unsigned long long)(uintptr_t)r) +
                  (unsigned long long)c->sample;
        if (dintattn_sampler_new(s->V, &so, &c->smp, &err)) return *param = "temperature", snprintf(msg, cap, "%s", err.message), 400;
    }
    for (k = 0; k < p->n_stop; k++) tg_stops_add(&r->stops, p->stop[k], p->stop_len[k]);
    if (r->chat) tg_stops_add_template(&r->stops, s->model); /* the template's stop strings end a turn too */
    /* without max_tokens: 16 for completions (OpenAI's default), the context's end for chat */
    r->max_tokens = p->max_tokens >= 0 ? p->max_tokens : r->chat ? INT_MAX : 16;
    return 0;
}

/* --- the generation thread ------------------------------------------------------------------- */

/* Marks c finished (reason NULL: dropped, its client gone), frees its slot (keeping the slot's
   ids for reuse) and, when it is the request's last, gives up the thread's reference. Under the
   lock. */
static void choice_finish(server *s, choice *c, const char *reason)
{
    request *r = c->req;
    if (c->done) return;
    c->finish = reason;
    c->done = 1;
    c->state = CH_DONE;
    if (c->slot) {
        c->slot->ch = NULL;
        c->slot->used = ++s->use_clock;
        c->slot = NULL;
    }
    s->m.generated_tokens += (unsigned long long)c->n_gen;
    pthread_cond_broadcast(&r->cond);
    if (++r->n_done == r->n_choices) {
        s->m.prompt_tokens += (unsigned long long)r->prompt_tokens;
        s->m.cached_tokens += (unsigned long long)r->cached_tokens;
        request_release(r);
    }
}

static void dequeue(server *s, int at);

/* Ends every sequence of r with an error (under the lock); r leaves the queue if it is in it. */
static void fail_request(server *s, request *r, const char *why)
{
    int k;
    if (r->queued) {
        for (k = 0; k < s->n_queue; k++)
            if (s->queue[k] == r) dequeue(s, k--);
        r->queued = 0;
    }
    if (!r->failed) {
        r->failed = 1;
        snprintf(r->error, sizeof r->error, "%s", why);
    }
    for (k = 0; k < r->n_choices; k++) choice_finish(s, &r->choices[k], NULL);
}

static void dequeue(server *s, int at)
{
    memmove(s->queue + at, s->queue + at + 1, sizeof *s->queue * (size_t)(s->n_queue - at - 1));
    s->n_queue--;
}

static int common_prefix(const slot *sl, const request *r, int p)
{
    return tg_common_prefix(sl->ids, sl->n_ids, r->ids[p], r->n_ids[p]);
}

/* A sequence given a slot, and what the slot's session becomes first: src's session copied (src
   != dst), then cut to `keep` ids. */
typedef struct plan {
    choice *c;
    slot *dst, *src;
    int keep;
} plan;

/* Gives queued sequences free slots, in arrival order (under the lock). A prompt's later samples
   wait until its first one has its logits, then start from a copy of them. */
static int admit(server *s, plan *plans)
{
    int n = 0;
    while (s->n_queue > 0) {
        request *r = s->queue[0];
        choice *c;
        slot *dst = NULL, *src = NULL;
        int k, best = -1, best_any = -1, need, own;
        if (r->cancelled || r->failed) { /* left while waiting */
            fail_request(s, r, "the client left");
            continue;
        }
        c = &r->choices[r->next_admit];
        if (c->sample > 0 && !r->prompt_logits[c->prompt]) break;
        for (k = 0; k < s->n_slots; k++) {
            slot *sl = &s->slots[k];
            int lcp = common_prefix(sl, r, c->prompt);
            if (!sl->ch && (lcp > best || (lcp == best && sl->used < dst->used))) best = lcp, dst = sl;
            if (lcp > best_any) best_any = lcp, src = sl;
        }
        if (!dst) break; /* no free slot */
        /* the ids to keep: all of the prompt if its logits are known, else all but its last (whose
           logits the prefill gives); none for echo with logprobs, which scores every id */
        need = r->prompt_logits[c->prompt] ? r->n_ids[c->prompt] : r->n_ids[c->prompt] - 1;
        if ((r->echo && r->logprobs >= 0 && !r->prompt_logits[c->prompt]) || (!r->p.cache_prompt && c->sample == 0)) need = 0;
        own = best < need ? best : need;
        if (best_any > need) best_any = need;
        plans[n].c = c;
        plans[n].dst = dst;
        plans[n].src = best_any > own ? src : dst;
        plans[n].keep = best_any > own ? best_any : own;
        n++;
        dst->ch = c;
        c->slot = dst;
        c->state = CH_PREFILL;
        if (++r->next_admit == r->n_choices) {
            r->queued = 0;
            dequeue(s, 0);
        }
    }
    return n;
}

/* Carries out a plan (no lock: only this thread touches sessions and slot ids). */
static void run_plan(server *s, const plan *pl)
{
    slot *dst = pl->dst;
    choice *c = pl->c;
    request *r = c->req;
    dintattn_error err;
    int keep = pl->keep;
    if (pl->src != dst) {
        if (dintattn_session_copy(dst->sess, pl->src->sess, &err) == DINTATTN_OK) {
            memcpy(dst->ids, pl->src->ids, sizeof(int) * (size_t)pl->src->n_ids);
            dst->n_ids = pl->src->n_ids;
        } else {
            fprintf(stderr, "server: slot %d: cannot copy slot %d's session: %s\n", dst->id, pl->src->id, err.message);
            keep = 0;
        }
    }
    /* the plan's prefix was measured before this step's other plans ran: one may have changed the
       source since (as its own destination) */
    if (keep > common_prefix(dst, r, c->prompt)) keep = common_prefix(dst, r, c->prompt);
    if (keep < dintattn_session_pos(dst->sess) && dintattn_session_truncate(dst->sess, keep, &err) != DINTATTN_OK) {
        fprintf(stderr, "server: slot %d: %s\n", dst->id, err.message);
        dintattn_session_reset(dst->sess);
        keep = 0;
    }
    dst->n_ids = keep;
    c->fed = c->cached = keep;
    if (c->sample == 0) r->cached_tokens += keep;
    if (keep == r->n_ids[c->prompt]) { /* the whole prompt is there: its logits were kept */
        memcpy(dst->logits, r->prompt_logits[c->prompt], sizeof(float) * (size_t)s->V);
        c->state = CH_SAMPLE;
    } else {
        c->state = r->echo && r->logprobs >= 0 && !r->prompt_logits[c->prompt] ? CH_ECHO : CH_PREFILL;
    }
}

/* Echo with logprobs: runs the next rows of c's prompt with every row's logits, scoring each id
   after the first (no lock). */
static int run_echo(server *s, choice *c, dintattn_error *err)
{
    request *r = c->req;
    slot *sl = c->slot;
    const int *ids = r->ids[c->prompt];
    int n = r->n_ids[c->prompt], rows = n - c->fed < ECHO_ROWS ? n - c->fed : ECHO_ROWS, i;
    lp_list *l = &r->echo_lp[c->prompt];
    if (dintattn_prefill(sl->sess, ids + c->fed, rows, s->echo_logits, 1, err)) return -1;
    if (c->fed == 0) { /* the first id: no context */
        lp_entry e;
        memset(&e, 0, sizeof e);
        e.id = ids[0];
        e.logprob = NAN;
        lp_push(l, &e);
    }
    for (i = 0; i < rows; i++) {
        const float *row = s->echo_logits + (size_t)i * (size_t)s->V;
        lp_entry e;
        if (c->fed + i + 1 >= n) break;
        logprob_entry(row, s->V, ids[c->fed + i + 1], r->logprobs, &e);
        lp_push(l, &e);
    }
    memcpy(sl->ids + sl->n_ids, ids + c->fed, sizeof(int) * (size_t)rows);
    sl->n_ids += rows;
    c->fed += rows;
    if (c->fed == n) {
        memcpy(sl->logits, s->echo_logits + (size_t)(rows - 1) * (size_t)s->V, sizeof(float) * (size_t)s->V);
        c->state = CH_SAMPLE;
    }
    return 0;
}

/* The echoed prompt goes first in c's text (with its logprobs), and the first token is timed. */
static void choice_open(server *s, choice *c)
{
    request *r = c->req;
    int k;
    c->opened = 1;
    if (r->t_first == 0) {
        int b;
        double t = now() - r->t_arrive;
        r->t_first = now();
        for (b = 0; b < N_TTFT_BUCKETS && t > ttft_bounds[b]; b++) {}
        s->m.ttft_n[b]++;
        s->m.ttft_sum += t;
        s->m.ttft_count++;
    }
    if (!r->echo) return;
    for (k = 0; k < r->n_ids[c->prompt]; k++) {
        int id = r->ids[c->prompt][k];
        size_t len = 0, start = c->out.len;
        const char *bytes = dintattn_tokenizer_is_special(s->tok, id) ? NULL : dintattn_tokenizer_token(s->tok, id, &len);
        if (bytes) srv_buf_add(&c->out, bytes, len);
        if (r->logprobs >= 0 && k < r->echo_lp[c->prompt].n) {
            lp_entry e = r->echo_lp[c->prompt].e[k];
            e.start = start;
            e.end = c->out.len;
            lp_push(&c->lp, &e);
        }
    }
    c->gen_start = c->out.len;
}

/* Draws c's next token from its slot's logits (under the lock): its text, logprobs and stop
   rules; finishes c or leaves the token to run in the next step. */
static void choice_sample(server *s, choice *c)
{
    request *r = c->req;
    slot *sl = c->slot;
    const int n_prompt = r->n_ids[c->prompt];
    lp_entry e;
    size_t len = 0, before, at, from;
    const char *bytes;
    int next;
    if (!c->opened) choice_open(s, c);
    if (c->n_gen >= r->max_tokens || n_prompt + c->n_gen >= s->n_ctx) {
        choice_finish(s, c, "length");
        return;
    }
    if (r->p.ignore_eos) {
        int k;
        for (k = 0; k < s->n_eos; k++) sl->logits[s->eos_ids[k]] = -INFINITY;
    }
    if (r->logprobs >= 0) { /* the sampler changes the logits it draws from: a copy */
        memcpy(s->scratch, sl->logits, sizeof(float) * (size_t)s->V);
        next = dintattn_sampler_sample(c->smp, s->scratch);
    } else {
        next = dintattn_sampler_sample(c->smp, sl->logits);
    }
    if (dintattn_tokenizer_is_eos(s->tok, next)) {
        choice_finish(s, c, "stop");
        return;
    }
    c->n_gen++;
    dintattn_sampler_accept(c->smp, next);
    before = c->out.len;
    bytes = dintattn_tokenizer_token(s->tok, next, &len);
    if (bytes) srv_buf_add(&c->out, bytes, len);
    if (r->logprobs >= 0) {
        logprob_entry(sl->logits, s->V, next, r->logprobs, &e);
        e.start = before;
        e.end = c->out.len;
        lp_push(&c->lp, &e);
    }
    if (c->out.nomem) {
        fail_request(s, r, "out of memory");
        return;
    }
    pthread_cond_broadcast(&r->cond);
    /* a new stop string ends in this token's bytes, not inside the echoed prompt nor before what
       was streamed (tails that could begin one are held back) */
    from = before > r->stops.max_len ? before - r->stops.max_len : 0;
    if (from < c->gen_start) from = c->gen_start;
    if (from < c->sent) from = c->sent;
    at = tg_stops_find(&r->stops, c->out.p, c->out.len, from);
    if (at != (size_t)-1) {
        c->out.len = at;
        while (c->lp.n > 0 && c->lp.e[c->lp.n - 1].start >= at && c->lp.n > c->lp_sent) c->lp.n--;
        choice_finish(s, c, "stop");
        return;
    }
    if (c->n_gen >= r->max_tokens || n_prompt + c->n_gen >= s->n_ctx) {
        choice_finish(s, c, "length");
        return;
    }
    c->next = next;
    c->state = CH_DECODE;
}

static void rate_add(server *s, double sec, int tokens)
{
    s->m.rate_sec[s->m.rate_at] = sec;
    s->m.rate_tok[s->m.rate_at] = tokens;
    s->m.rate_at = (s->m.rate_at + 1) % RATE_STEPS;
}

static void *gen_main(void *arg)
{
    server *s = (server *)arg;
    plan *plans = (plan *)calloc((size_t)s->n_slots, sizeof *plans);
    dintattn_batch_item *items = (dintattn_batch_item *)calloc((size_t)s->n_slots, sizeof *items);
    choice **which = (choice **)calloc((size_t)s->n_slots, sizeof *which);
    choice **echo = (choice **)calloc((size_t)s->n_slots, sizeof *echo);
    int k;
    if (!plans || !items || !which || !echo) {
        fprintf(stderr, "server: out of memory for the generation thread\n");
        exit(1);
    }
    pthread_mutex_lock(&s->mu);
    for (;;) {
        int n_plans, n_items = 0, n_echo = 0, n_decode = 0, n_prefill = 0, budget, busy = 0;
        dintattn_error err;
        dintattn_result rc = DINTATTN_OK;
        double t0;
        for (k = 0; k < s->n_slots; k++) busy += s->slots[k].ch != NULL;
        while (!s->stopping && s->n_queue == 0 && busy == 0) pthread_cond_wait(&s->work, &s->mu);
        if (s->stopping) break;
        for (k = 0; k < s->n_slots; k++) { /* sequences whose clients left */
            choice *c = s->slots[k].ch;
            if (c && c->req->cancelled) choice_finish(s, c, NULL);
        }
        n_plans = admit(s, plans);
        pthread_mutex_unlock(&s->mu);

        for (k = 0; k < n_plans; k++) run_plan(s, &plans[k]);
        /* the step: every decoding slot's token, then prompt chunks in the room the session's
           n_batch leaves (at least a few tokens each, so that prompts advance under any load) */
        for (k = 0; k < s->n_slots; k++) {
            choice *c = s->slots[k].ch;
            if (!c) continue;
            if (c->state == CH_DECODE) {
                items[n_items].sess = s->slots[k].sess;
                items[n_items].tokens = &c->next;
                items[n_items].n_tokens = 1;
                items[n_items].logits = s->slots[k].logits;
                which[n_items++] = c;
                n_decode++;
            } else if (c->state == CH_PREFILL) {
                n_prefill++;
            } else if (c->state == CH_ECHO) {
                echo[n_echo++] = c;
            }
        }
        budget = s->n_batch - n_decode;
        if (n_prefill > 0) budget = (budget > 16 * n_prefill ? budget : 16 * n_prefill) / n_prefill;
        for (k = 0; k < s->n_slots; k++) {
            choice *c = s->slots[k].ch;
            int left;
            if (!c || c->state != CH_PREFILL) continue;
            left = c->req->n_ids[c->prompt] - c->fed;
            items[n_items].sess = s->slots[k].sess;
            items[n_items].tokens = c->req->ids[c->prompt] + c->fed;
            items[n_items].n_tokens = left < budget ? left : budget;
            items[n_items].logits = left <= budget ? s->slots[k].logits : NULL;
            which[n_items++] = c;
        }
        t0 = now();
        for (k = 0; k < n_echo; k++)
            if (run_echo(s, echo[k], &err)) {
                pthread_mutex_lock(&s->mu);
                fail_request(s, echo[k]->req, err.message);
                pthread_mutex_unlock(&s->mu);
            }
        if (n_items > 0) rc = dintattn_batch_step(items, n_items, NULL, &err);

        pthread_mutex_lock(&s->mu);
        if (n_items > 0) {
            s->m.steps++;
            s->m.step_tokens += (unsigned long long)n_items;
            rate_add(s, now() - t0, n_decode);
        }
        if (rc != DINTATTN_OK) {
            fprintf(stderr, "server: batch step: %s\n", err.message);
            for (k = 0; k < n_items; k++) fail_request(s, which[k]->req, err.message);
            n_items = 0;
        }
        for (k = 0; k < n_items; k++) { /* the ids the slots now hold */
            choice *c = which[k];
            slot *sl = c->slot;
            if (!sl) continue;
            memcpy(sl->ids + sl->n_ids, items[k].tokens, sizeof(int) * (size_t)items[k].n_tokens);
            sl->n_ids += items[k].n_tokens;
            if (c->state == CH_DECODE) {
                c->state = CH_SAMPLE;
            } else {
                c->fed += items[k].n_tokens;
                if (c->fed == c->req->n_ids[c->prompt]) c->state = CH_SAMPLE;
            }
        }
        for (k = 0; k < s->n_slots; k++) {
            choice *c = s->slots[k].ch;
            request *r;
            if (!c || c->state != CH_SAMPLE) continue;
            r = c->req;
            if (r->cancelled) {
                choice_finish(s, c, NULL);
                continue;
            }
            if (c->sample == 0 && r->p.n > 1 && !r->prompt_logits[c->prompt] && c->n_gen == 0) {
                r->prompt_logits[c->prompt] = (float *)malloc(sizeof(float) * (size_t)s->V);
                if (!r->prompt_logits[c->prompt]) {
                    fail_request(s, r, "out of memory");
                    continue;
                }
                memcpy(r->prompt_logits[c->prompt], s->slots[k].logits, sizeof(float) * (size_t)s->V);
            }
            choice_sample(s, c);
        }
    }
    /* stopping: every request still here ends (the connections answer or close) */
    for (k = 0; k < s->n_slots; k++)
        if (s->slots[k].ch) fail_request(s, s->slots[k].ch->req, "the server is shutting down");
    while (s->n_queue > 0) fail_request(s, s->queue[0], "the server is shutting down");
    pthread_mutex_unlock(&s->mu);
    free(plans);
    free(items);
    free(which);
    free(echo);
    return NULL;
}

/* A request whose client left: its waiting sequences go now, running ones at the next step. */
static void request_cancel(server *s, request *r)
{
    if (r->n_done == r->n_choices) return;
    r->cancelled = 1;
    if (r->queued && r->next_admit == 0) fail_request(s, r, "the client left"); /* none runs yet */
    pthread_cond_signal(&s->work);
}

/* --- replies' JSON --------------------------------------------------------------------------- */

static void json_token(srv_buf *b, const server *s, int id)
{
    size_t len = 0;
    const char *t = dintattn_tokenizer_token(s->tok, id, &len);
    srv_buf_json_str(b, t ? t : "", t ? len : 0);
}

static void json_logprob(srv_buf *b, double x)
{
    if (x != x) srv_buf_str(b, "null");
    else srv_buf_printf(b, "%.7g", x < -9999 ? -9999.0 : x); /* -inf has no JSON: OpenAI's floor */
}

/* Completions' logprobs of entries e[0..n): tokens, token_logprobs, top_logprobs (an object per
   token: text -> logprob, a text seen twice kept once) and text_offset (bytes, from `base`). */
static void json_lp_completion(srv_buf *b, const server *s, const lp_entry *e, int n, size_t base)
{
    int i, j, pass;
    srv_buf key;
    memset(&key, 0, sizeof key);
    for (pass = 0; pass < 4; pass++) {
        static const char *const names[4] = {"{\"tokens\":[", "],\"token_logprobs\":[", "],\"top_logprobs\":[",
                                             "],\"text_offset\":["};
        srv_buf_str(b, names[pass]);
        for (i = 0; i < n; i++) {
            if (i) srv_buf_str(b, ",");
            if (pass == 0) json_token(b, s, e[i].id);
            else if (pass == 1) json_logprob(b, e[i].logprob);
            else if (pass == 3) srv_buf_printf(b, "%lu", (unsigned long)(e[i].start - base));
            else if (e[i].logprob != e[i].logprob) srv_buf_str(b, "null");
            else {
                size_t *at = (size_t *)malloc(sizeof(size_t) * (size_t)(e[i].n_top + 1));
                srv_buf_str(b, "{");
                key.len = 0;
                for (j = 0; j < e[i].n_top && at; j++) {
                    size_t start = key.len;
                    int dup = 0, q;
                    json_token(&key, s, e[i].top_id[j]);
                    at[j] = start;
                    for (q = 0; q < j && !dup; q++) {
                        size_t lq = (q + 1 < j ? at[q + 1] : start) - at[q];
                        dup = at[q] != (size_t)-1 && lq == key.len - start && !memcmp(key.p + at[q], key.p + start, lq);
                    }
                    if (dup) {
                        key.len = start;
                        at[j] = start;
                        continue;
                    }
                    if (b->p[b->len - 1] != '{') srv_buf_str(b, ",");
                    srv_buf_add(b, key.p + start, key.len - start);
                    srv_buf_str(b, ":");
                    json_logprob(b, e[i].top_lp[j]);
                }
                free(at);
                srv_buf_str(b, "}");
            }
        }
    }
    srv_buf_str(b, "]}");
    srv_buf_free(&key);
}

static void json_bytes(srv_buf *b, const server *s, int id)
{
    size_t len = 0, i;
    const char *t = dintattn_tokenizer_token(s->tok, id, &len);
    srv_buf_str(b, "[");
    for (i = 0; t && i < len; i++) srv_buf_printf(b, i ? ",%u" : "%u", (unsigned)(unsigned char)t[i]);
    srv_buf_str(b, "]");
}

/* Chat's logprobs of entries e[0..n): {"content": [{token, logprob, bytes, top_logprobs}]}. */
static void json_lp_chat(srv_buf *b, const server *s, const lp_entry *e, int n)
{
    int i, j;
    srv_buf_str(b, "{\"content\":[");
    for (i = 0; i < n; i++) {
        srv_buf_str(b, i ? ",{\"token\":" : "{\"token\":");
        json_token(b, s, e[i].id);
        srv_buf_str(b, ",\"logprob\":");
        json_logprob(b, e[i].logprob);
        srv_buf_str(b, ",\"bytes\":");
        json_bytes(b, s, e[i].id);
        srv_buf_str(b, ",\"top_logprobs\":[");
        for (j = 0; j < e[i].n_top; j++) {
            srv_buf_str(b, j ? ",{\"token\":" : "{\"token\":");
            json_token(b, s, e[i].top_id[j]);
            srv_buf_str(b, ",\"logprob\":");
            json_logprob(b, e[i].top_lp[j]);
            srv_buf_str(b, ",\"bytes\":");
            json_bytes(b, s, e[i].top_id[j]);
            srv_buf_str(b, "}");
        }
        srv_buf_str(b, "]}");
    }
    srv_buf_str(b, "],\"refusal\":null}");
}

static void json_head(srv_buf *b, const server *s, const request *r, const char *object)
{
    srv_buf_printf(b, "{\"id\":\"%s\",\"object\":\"%s\",\"created\":%lld,\"model\":", r->id, object, r->created);
    srv_buf_json_str(b, s->model_id, strlen(s->model_id));
}

static void json_usage(srv_buf *b, const request *r)
{
    int k, gen = 0;
    for (k = 0; k < r->n_choices; k++) gen += r->choices[k].n_gen;
    srv_buf_printf(b, "\"usage\":{\"prompt_tokens\":%d,\"completion_tokens\":%d,\"total_tokens\":%d,"
                      "\"prompt_tokens_details\":{\"cached_tokens\":%d}}",
                   r->prompt_tokens, gen, r->prompt_tokens + gen, r->cached_tokens);
}

/* The whole answer (under the lock). */
static void json_completion(srv_buf *b, const server *s, const request *r)
{
    int k;
    json_head(b, s, r, r->chat ? "chat.completion" : "text_completion");
    srv_buf_str(b, ",\"choices\":[");
    for (k = 0; k < r->n_choices; k++) {
        const choice *c = &r->choices[k];
        srv_buf_printf(b, "%s{\"index\":%d,", k ? "," : "", k);
        if (r->chat) {
            srv_buf_str(b, "\"message\":{\"role\":\"assistant\",\"content\":");
            srv_buf_json_str(b, c->out.p ? c->out.p : "", c->out.len);
            srv_buf_str(b, "},\"logprobs\":");
            if (r->logprobs >= 0) json_lp_chat(b, s, c->lp.e, c->lp.n);
            else srv_buf_str(b, "null");
        } else {
            srv_buf_str(b, "\"text\":");
            srv_buf_json_str(b, c->out.p ? c->out.p : "", c->out.len);
            srv_buf_str(b, ",\"logprobs\":");
            if (r->logprobs >= 0) json_lp_completion(b, s, c->lp.e, c->lp.n, 0);
            else srv_buf_str(b, "null");
        }
        srv_buf_printf(b, ",\"finish_reason\":\"%s\"}", c->finish ? c->finish : "length");
    }
    srv_buf_str(b, "],");
    json_usage(b, r);
    srv_buf_str(b, "}\n");
}

/* One event of the stream for choice c: text out[from..to) with logprob entries [l0, l1), and
   the finish reason (or null). */
static void sse_chunk(srv_buf *b, const server *s, const request *r, const choice *c, size_t from, size_t to, int l0,
                      int l1, const char *finish)
{
    srv_buf_str(b, "data: ");
    json_head(b, s, r, r->chat ? "chat.completion.chunk" : "text_completion");
    srv_buf_printf(b, ",\"choices\":[{\"index\":%d,", c->index);
    if (r->chat) {
        if (to > from) {
            srv_buf_str(b, "\"delta\":{\"content\":");
            srv_buf_json_str(b, c->out.p + from, to - from);
            srv_buf_str(b, "}");
        } else {
            srv_buf_str(b, "\"delta\":{}");
        }
    } else {
        srv_buf_str(b, "\"text\":");
        srv_buf_json_str(b, to > from ? c->out.p + from : "", to > from ? to - from : 0);
    }
    srv_buf_str(b, ",\"logprobs\":");
    if (r->logprobs >= 0 && l1 > l0) {
        if (r->chat) json_lp_chat(b, s, c->lp.e + l0, l1 - l0);
        else json_lp_completion(b, s, c->lp.e + l0, l1 - l0, 0);
    } else {
        srv_buf_str(b, "null");
    }
    srv_buf_str(b, ",\"finish_reason\":");
    if (finish) srv_buf_printf(b, "\"%s\"", finish);
    else srv_buf_str(b, "null");
    srv_buf_str(b, "}]}\n\n");
}

/* Appends to r->wire what the stream can say now (under the lock): the roles first (chat), then
   per choice its new text as far as no stop string could still cut it, its finish, and at the
   end the usage (if asked) and [DONE]. */
static void stream_fill(server *s, request *r)
{
    int k;
    if (r->chat && !r->role_sent) {
        for (k = 0; k < r->n_choices; k++) {
            srv_buf_str(&r->wire, "data: ");
            json_head(&r->wire, s, r, "chat.completion.chunk");
            srv_buf_printf(&r->wire, ",\"choices\":[{\"index\":%d,\"delta\":{\"role\":\"assistant\",\"content\":\"\"},"
                                     "\"logprobs\":null,\"finish_reason\":null}]}\n\n", k);
        }
        r->role_sent = 1;
    }
    for (k = 0; k < r->n_choices; k++) {
        choice *c = &r->choices[k];
        size_t upto = c->done ? c->out.len : tg_stops_safe_end(&r->stops, c->out.p, c->out.len);
        int l1 = c->lp_sent;
        if (r->failed) continue;
        if (upto < c->sent) upto = c->sent;
        while (l1 < c->lp.n && (c->done || c->lp.e[l1].end <= upto)) l1++;
        if (upto > c->sent || l1 > c->lp_sent) {
            sse_chunk(&r->wire, s, r, c, c->sent, upto, c->lp_sent, l1, NULL);
            c->sent = upto;
            c->lp_sent = l1;
        }
        if (c->done && !c->finish_sent) {
            sse_chunk(&r->wire, s, r, c, c->sent, c->sent, 0, 0, c->finish ? c->finish : "length");
            c->finish_sent = 1;
        }
    }
    if (r->n_done == r->n_choices && !r->usage_sent) {
        r->usage_sent = 1;
        if (r->failed) {
            srv_buf_str(&r->wire, "data: {\"error\":{\"message\":");
            srv_buf_json_str(&r->wire, r->error, strlen(r->error));
            srv_buf_str(&r->wire, ",\"type\":\"server_error\",\"param\":null,\"code\":null}}\n\n");
        } else if (r->p.include_usage) {
            srv_buf_str(&r->wire, "data: ");
            json_head(&r->wire, s, r, r->chat ? "chat.completion.chunk" : "text_completion");
            srv_buf_str(&r->wire, ",\"choices\":[],");
            json_usage(&r->wire, r);
            srv_buf_str(&r->wire, "}\n\n");
        }
        srv_buf_str(&r->wire, "data: [DONE]\n\n");
    }
}

static void log_request(const server *s, const request *r, const char *how)
{
    int k, gen = 0;
    (void)s;
    for (k = 0; k < r->n_choices; k++) gen += r->choices[k].n_gen;
    fprintf(stderr, "server: %s %s: %d prompt%s, %d tokens (%d cached), %d choice%s, generated %d, %s%s, %.0f ms\n",
            r->chat ? "chat" : "completion", r->stream ? "stream" : "json", r->n_prompts, r->n_prompts > 1 ? "s" : "",
            r->prompt_tokens, r->cached_tokens, r->n_choices, r->n_choices > 1 ? "s" : "", gen,
            r->failed ? "failed: " : "finish ",
            r->failed ? r->error : r->n_choices && r->choices[0].finish ? r->choices[0].finish : "none",
            (now() - r->t_arrive) * 1e3);
    (void)how;
}

/* The event stream, as the connection's thread pulls it (libmicrohttpd's content reader): waits
   for text; a comment line (":") goes out when nothing else has for half of --timeout, so that a
   stream waiting for a slot or a long prompt is not closed as silent, and a client that left is
   noticed. */
static ssize_t stream_read(void *cls, uint64_t pos, char *buf, size_t max)
{
    request *r = (request *)cls;
    server *s = r->s;
    double ping = s->timeout / 2.0 < 0.5 ? 0.5 : s->timeout / 2.0;
    size_t n;
    (void)pos;
    pthread_mutex_lock(&s->mu);
    for (;;) {
        double due;
        struct timespec ts;
        if (r->wire_off < r->wire.len) break;
        r->wire.len = r->wire_off = 0;
        if (r->wire_end) {
            pthread_mutex_unlock(&s->mu);
            return MHD_CONTENT_READER_END_OF_STREAM;
        }
        stream_fill(s, r);
        if (r->wire.nomem) {
            pthread_mutex_unlock(&s->mu);
            return MHD_CONTENT_READER_END_WITH_ERROR;
        }
        if (r->usage_sent) r->wire_end = 1;
        if (r->wire.len) break;
        due = r->last_write + ping;
        if (now() >= due) {
            srv_buf_str(&r->wire, ":\n\n");
            break;
        }
        clock_gettime(CLOCK_REALTIME, &ts);
        due -= now();
        ts.tv_sec += (time_t)due;
        ts.tv_nsec += (long)((due - (double)(time_t)due) * 1e9);
        if (ts.tv_nsec >= 1000000000L) ts.tv_sec++, ts.tv_nsec -= 1000000000L;
        pthread_cond_timedwait(&r->cond, &s->mu, &ts);
    }
    n = r->wire.len - r->wire_off < max ? r->wire.len - r->wire_off : max;
    memcpy(buf, r->wire.p + r->wire_off, n);
    r->wire_off += n;
    r->last_write = now();
    pthread_mutex_unlock(&s->mu);
    return (ssize_t)n;
}

/* The stream's end, whole or cut short by the client: a request not finished is cancelled. */
static void stream_free(void *cls)
{
    request *r = (request *)cls;
    server *s = r->s;
    pthread_mutex_lock(&s->mu);
    log_request(s, r, "stream");
    if (r->n_done < r->n_choices) fprintf(stderr, "server: %s: the client left\n", r->id);
    request_cancel(s, r);
    request_release(r);
    pthread_mutex_unlock(&s->mu);
}

/* 1 if the client's connection broke (a reset): one that only closed its sending half is
   still waiting for its answer. */
static int client_broke(struct MHD_Connection *mc)
{
    const union MHD_ConnectionInfo *ci = MHD_get_connection_info(mc, MHD_CONNECTION_INFO_CONNECTION_FD);
    struct pollfd pf;
    if (!ci) return 0;
    pf.fd = ci->connect_fd;
    pf.events = POLLIN;
    pf.revents = 0;
    return poll(&pf, 1, 0) > 0 && (pf.revents & (POLLERR | POLLHUP | POLLNVAL));
}

static enum MHD_Result handle_generate(server *s, struct MHD_Connection *mc, const char *body, size_t len, int chat)
{
    request *r;
    char msg[640];
    const char *param = NULL, *code = NULL;
    int status, free_slots = 0, k;
    if (!(r = (request *)calloc(1, sizeof *r))) return reply_error(s, mc, 500, "out of memory", NULL, NULL, NULL, NULL);
    r->s = s;
    r->chat = chat;
    r->t_arrive = now();
    r->created = (long long)time(NULL);
    pthread_cond_init(&r->cond, NULL);
    if (srv_parse_params(body, len, chat, &r->p, msg, sizeof msg, &param)) {
        request_free(r);
        return reply_error(s, mc, 400, msg, param, NULL, NULL, NULL);
    }
    r->stream = r->p.stream;
    r->logprobs = r->p.logprobs;
    r->echo = r->p.echo;
    if ((status = request_prepare(s, r, msg, sizeof msg, &param, &code)) != 0) {
        request_free(r);
        return reply_error(s, mc, status, msg, param, code, NULL, NULL);
    }
    pthread_mutex_lock(&s->mu);
    for (k = 0; k < s->n_slots; k++) free_slots += s->slots[k].ch == NULL;
    if (s->stopping || s->n_queue - free_slots >= s->queue_max) {
        int q = s->n_queue;
        pthread_mutex_unlock(&s->mu);
        request_free(r);
        snprintf(msg, sizeof msg,
                 s->stopping ? "the server is shutting down"
                             : "all %d slots are busy and %d requests wait for one (--queue %d): retry in a moment",
                 s->n_slots, q, s->queue_max);
        return reply_error(s, mc, 503, msg, NULL, NULL, "Retry-After", "1");
    }
    snprintf(r->id, sizeof r->id, "%s-%llu", chat ? "chatcmpl" : "cmpl", ++s->n_requests);
    r->refs = 2;
    r->queued = 1;
    s->queue[s->n_queue++] = r;
    pthread_cond_signal(&s->work);
    if (r->stream) {
        struct MHD_Response *resp;
        enum MHD_Result ret;
        r->last_write = now();
        pthread_mutex_unlock(&s->mu);
        resp = MHD_create_response_from_callback(MHD_SIZE_UNKNOWN, 16384, stream_read, r, stream_free);
        if (!resp) {
            stream_free(r);
            return MHD_NO;
        }
        MHD_add_response_header(resp, "Content-Type", "text/event-stream");
        MHD_add_response_header(resp, "Cache-Control", "no-cache");
        ret = MHD_queue_response(mc, 200, resp);
        MHD_destroy_response(resp);
        count_status(s, 200);
        return ret;
    }
    while (r->n_done < r->n_choices) {
        struct timespec ts;
        clock_gettime(CLOCK_REALTIME, &ts);
        ts.tv_sec += 1;
        if (pthread_cond_timedwait(&r->cond, &s->mu, &ts) == ETIMEDOUT && r->n_done < r->n_choices) {
            int broke;
            pthread_mutex_unlock(&s->mu);
            broke = client_broke(mc);
            pthread_mutex_lock(&s->mu);
            if (broke) {
                fprintf(stderr, "server: %s: the client left\n", r->id);
                request_cancel(s, r);
                request_release(r);
                pthread_mutex_unlock(&s->mu);
                return MHD_NO;
            }
        }
    }
    log_request(s, r, "json");
    {
        srv_buf b;
        enum MHD_Result ret;
        memset(&b, 0, sizeof b);
        if (!r->failed) json_completion(&b, s, r);
        else snprintf(msg, sizeof msg, "%s", r->error);
        status = r->failed ? (s->stopping ? 503 : 500) : 200;
        request_release(r);
        pthread_mutex_unlock(&s->mu);
        ret = status == 200 ? reply(s, mc, 200, "application/json", &b, NULL, NULL)
                            : reply_error(s, mc, status, msg, NULL, NULL, NULL, NULL);
        srv_buf_free(&b);
        return ret;
    }
}

/* --- the other endpoints --------------------------------------------------------------------- */

static enum MHD_Result handle_models(server *s, struct MHD_Connection *mc, const char *path)
{
    srv_buf b;
    enum MHD_Result r;
    const char *one = !strncmp(path, "/v1/models/", 11) ? path + 11 : NULL;
    if (one && strcmp(one, s->model_id) != 0) return reply_error(s, mc, 404, "no such model", "model", "model_not_found", NULL, NULL);
    memset(&b, 0, sizeof b);
    if (!one) srv_buf_str(&b, "{\"object\":\"list\",\"data\":[");
    srv_buf_str(&b, "{\"id\":");
    srv_buf_json_str(&b, s->model_id, strlen(s->model_id));
    srv_buf_printf(&b, ",\"object\":\"model\",\"created\":0,\"owned_by\":\"dintattn\",\"context_length\":%d}", s->n_ctx);
    if (!one) srv_buf_str(&b, "]}");
    srv_buf_str(&b, "\n");
    r = reply(s, mc, 200, "application/json", &b, NULL, NULL);
    srv_buf_free(&b);
    return r;
}

static int slots_busy(const server *s)
{
    int k, n = 0;
    for (k = 0; k < s->n_slots; k++) n += s->slots[k].ch != NULL;
    return n;
}

/* /health: 200 {"status": "ok", ...} once the model is loaded, 503 before (as llama.cpp's). */
static enum MHD_Result handle_health(server *s, struct MHD_Connection *mc)
{
    srv_buf b;
    enum MHD_Result r;
    int loaded;
    memset(&b, 0, sizeof b);
    pthread_mutex_lock(&s->mu);
    loaded = s->loaded;
    if (loaded)
        srv_buf_printf(&b, "{\"status\":\"ok\",\"slots_idle\":%d,\"slots_processing\":%d,\"queue\":%d}\n",
                       s->n_slots - slots_busy(s), slots_busy(s), s->n_queue);
    else
        srv_buf_str(&b, "{\"status\":\"loading model\",\"error\":{\"code\":503,\"message\":\"Loading model\","
                        "\"type\":\"unavailable_error\"}}\n");
    pthread_mutex_unlock(&s->mu);
    r = reply(s, mc, loaded ? 200 : 503, "application/json", &b, loaded ? NULL : "Retry-After", "1");
    srv_buf_free(&b);
    return r;
}

/* /metrics: Prometheus' text format. */
static enum MHD_Result handle_metrics(server *s, struct MHD_Connection *mc)
{
    srv_buf b;
    enum MHD_Result r;
    const metrics *m = &s->m;
    double sec = 0, cum = 0;
    int k, tok = 0;
    memset(&b, 0, sizeof b);
    pthread_mutex_lock(&s->mu);
    srv_buf_str(&b, "# HELP dintattn_requests_total HTTP requests answered, by status.\n"
                    "# TYPE dintattn_requests_total counter\n");
    for (k = 0; k < 16 && m->status_code[k]; k++)
        srv_buf_printf(&b, "dintattn_requests_total{status=\"%d\"} %llu\n", m->status_code[k], m->status_n[k]);
    srv_buf_printf(&b, "# HELP dintattn_queue_depth Requests waiting for a free slot.\n# TYPE dintattn_queue_depth gauge\n"
                       "dintattn_queue_depth %d\n", s->n_queue);
    srv_buf_printf(&b, "# HELP dintattn_slots_busy Slots running a sequence.\n# TYPE dintattn_slots_busy gauge\n"
                       "dintattn_slots_busy %d\n", s->loaded ? slots_busy(s) : 0);
    srv_buf_printf(&b, "# HELP dintattn_slots_total Slots (--parallel).\n# TYPE dintattn_slots_total gauge\n"
                       "dintattn_slots_total %d\n", s->n_slots);
    srv_buf_printf(&b, "# HELP dintattn_prompt_tokens_total Prompt tokens of finished requests.\n"
                       "# TYPE dintattn_prompt_tokens_total counter\ndintattn_prompt_tokens_total %llu\n", m->prompt_tokens);
    srv_buf_printf(&b, "# HELP dintattn_prompt_tokens_cached_total Of them, reused from a slot's cache.\n"
                       "# TYPE dintattn_prompt_tokens_cached_total counter\ndintattn_prompt_tokens_cached_total %llu\n",
                   m->cached_tokens);
    srv_buf_printf(&b, "# HELP dintattn_generated_tokens_total Tokens generated by finished sequences.\n"
                       "# TYPE dintattn_generated_tokens_total counter\ndintattn_generated_tokens_total %llu\n",
                   m->generated_tokens);
    srv_buf_printf(&b, "# HELP dintattn_batch_steps_total Passes of the batch over the weights.\n"
                       "# TYPE dintattn_batch_steps_total counter\ndintattn_batch_steps_total %llu\n", m->steps);
    srv_buf_printf(&b, "# HELP dintattn_batch_sequences_total Sequences advanced, summed over the steps.\n"
                       "# TYPE dintattn_batch_sequences_total counter\ndintattn_batch_sequences_total %llu\n", m->step_tokens);
    for (k = 0; k < RATE_STEPS; k++) sec += m->rate_sec[k], tok += m->rate_tok[k];
    srv_buf_printf(&b, "# HELP dintattn_tokens_per_second Tokens decoded per second of the last %d steps.\n"
                       "# TYPE dintattn_tokens_per_second gauge\ndintattn_tokens_per_second %.3f\n",
                   RATE_STEPS, sec > 0 ? tok / sec : 0.0);
    srv_buf_str(&b, "# HELP dintattn_time_to_first_token_seconds From a request's arrival to its first token.\n"
                    "# TYPE dintattn_time_to_first_token_seconds histogram\n");
    for (k = 0; k <= N_TTFT_BUCKETS; k++) {
        cum += (double)m->ttft_n[k];
        if (k < N_TTFT_BUCKETS)
            srv_buf_printf(&b, "dintattn_time_to_first_token_seconds_bucket{le=\"%g\"} %.0f\n", ttft_bounds[k], cum);
        else
            srv_buf_printf(&b, "dintattn_time_to_first_token_seconds_bucket{le=\"+Inf\"} %.0f\n", cum);
    }
    srv_buf_printf(&b, "dintattn_time_to_first_token_seconds_sum %.6f\ndintattn_time_to_first_token_seconds_count %llu\n",
                   m->ttft_sum, m->ttft_count);
    pthread_mutex_unlock(&s->mu);
    r = reply(s, mc, 200, "text/plain; version=0.0.4", &b, NULL, NULL);
    srv_buf_free(&b);
    return r;
}

/* /slots: each slot's state and the ids it holds. */
static enum MHD_Result handle_slots(server *s, struct MHD_Connection *mc)
{
    srv_buf b;
    enum MHD_Result r;
    int k;
    memset(&b, 0, sizeof b);
    pthread_mutex_lock(&s->mu);
    srv_buf_str(&b, "[");
    for (k = 0; k < s->n_slots; k++) {
        const slot *sl = &s->slots[k];
        srv_buf_printf(&b, "%s{\"id\":%d,\"n_ctx\":%d,\"is_processing\":%s,\"tokens_cached\":%d", k ? "," : "", k, s->n_ctx,
                       sl->ch ? "true" : "false", sl->n_ids);
        if (sl->ch) srv_buf_printf(&b, ",\"request\":\"%s\",\"choice\":%d", sl->ch->req->id, sl->ch->index);
        srv_buf_str(&b, "}");
    }
    srv_buf_str(&b, "]\n");
    pthread_mutex_unlock(&s->mu);
    r = reply(s, mc, 200, "application/json", &b, NULL, NULL);
    srv_buf_free(&b);
    return r;
}

/* --- libmicrohttpd's callbacks --------------------------------------------------------------- */

/* A connection's request body as it arrives (bounded: past SRV_MAX_BODY it is read and dropped,
   then refused with 413). */
typedef struct conn_ctx {
    srv_buf body;
    int too_big;
} conn_ctx;

static enum MHD_Result on_request(void *cls, struct MHD_Connection *mc, const char *url, const char *method,
                                  const char *version, const char *upload, size_t *upload_size, void **ptr)
{
    server *s = (server *)cls;
    conn_ctx *cx = (conn_ctx *)*ptr;
    int is_models, is_cmpl, is_chat, is_get, loaded;
    (void)version;
    if (!cx) { /* the head: the body (if any) comes in the next calls */
        cx = (conn_ctx *)calloc(1, sizeof *cx);
        if (!cx) return MHD_NO;
        *ptr = cx;
        return MHD_YES;
    }
    if (*upload_size) {
        if (!cx->too_big && cx->body.len + *upload_size > SRV_MAX_BODY) {
            cx->too_big = 1;
            srv_buf_free(&cx->body);
        }
        if (!cx->too_big) srv_buf_add(&cx->body, upload, *upload_size);
        *upload_size = 0;
        return MHD_YES;
    }
    is_models = !strcmp(url, "/v1/models") || !strncmp(url, "/v1/models/", 11);
    is_cmpl = !strcmp(url, "/v1/completions");
    is_chat = !strcmp(url, "/v1/chat/completions");
    is_get = is_models || !strcmp(url, "/health") || !strcmp(url, "/metrics") || !strcmp(url, "/slots");
    if (!is_get && !is_cmpl && !is_chat) {
        char msg[256];
        snprintf(msg, sizeof msg,
                 "unknown endpoint %.80s (this server has /v1/models, /v1/completions, /v1/chat/completions, /health, "
                 "/metrics, /slots)",
                 url);
        return reply_error(s, mc, 404, msg, NULL, "not_found", NULL, NULL);
    }
    if (is_get && strcmp(method, "GET") != 0 && strcmp(method, "HEAD") != 0)
        return reply_error(s, mc, 405, "use GET for this endpoint", NULL, NULL, "Allow", "GET, HEAD");
    if (!is_get && strcmp(method, "POST") != 0)
        return reply_error(s, mc, 405, "use POST for this endpoint", NULL, NULL, "Allow", "POST");
    if (cx->too_big) return reply_error(s, mc, 413, "the request body is over 1 MiB", NULL, NULL, NULL, NULL);
    if (!strcmp(url, "/health")) return handle_health(s, mc);
    if (!strcmp(url, "/metrics")) return handle_metrics(s, mc);
    pthread_mutex_lock(&s->mu);
    loaded = s->loaded;
    pthread_mutex_unlock(&s->mu);
    if (!loaded)
        return reply_error(s, mc, 503, "the model is still loading: retry in a moment (GET /health says when it is ready)",
                           NULL, NULL, "Retry-After", "1");
    if (!strcmp(url, "/slots")) return handle_slots(s, mc);
    if (is_models) return handle_models(s, mc, url);
    if (cx->body.nomem) return reply_error(s, mc, 500, "out of memory", NULL, NULL, NULL, NULL);
    return handle_generate(s, mc, cx->body.p ? cx->body.p : "", cx->body.len, is_chat);
}

static void on_completed(void *cls, struct MHD_Connection *mc, void **ptr, enum MHD_RequestTerminationCode why)
{
    conn_ctx *cx = (conn_ctx *)*ptr;
    (void)cls;
    (void)mc;
    (void)why;
    if (cx) {
        srv_buf_free(&cx->body);
        free(cx);
        *ptr = NULL;
    }
}

static void on_mhd_log(void *cls, const char *fmt, va_list ap)
{
    (void)cls;
    fputs("server: http: ", stderr);
    vfprintf(stderr, fmt, ap);
}

/* --- main ------------------------------------------------------------------------------------ */

typedef struct server_args {
    cli_engine eng;
    const char *host, *port;
    int parallel;
} server_args;

/* The command line into a and s's settings; returns -1 to go on, else the exit code. */
static int parse_args(int argc, char **argv, server_args *a, server *s)
{
    int i, port_num = 0;
    cli_engine_init(&a->eng);
    a->host = "127.0.0.1";
    a->port = "8080";
    a->parallel = 0;
    s->timeout = 10;
    s->queue_max = 64;
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
        else if (!strcmp(f, "--parallel")) bad = cli_parse_int(v, 1, 256, &a->parallel);
        else if (!strcmp(f, "--queue")) bad = cli_parse_int(v, 0, 100000, &s->queue_max);
        else if ((bad = cli_engine_option(&a->eng, CLI_ENGINE | CLI_CTX | CLI_TOKENIZER, f, v, NULL)) < 0)
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

/* Loads the model and its tokenizer and makes the slots (context: --ctx, else the model's, at
   most DEFAULT_CTX; count: --parallel, else as many sessions as fit in half the available memory,
   at most MAX_DEFAULT_SLOTS). Returns 0, or -1 (printed). */
static int open_engine(server *s, const cli_engine *eng, const char *path, int parallel)
{
    dintattn_error err;
    dintattn_session_options so;
    int k;
    if (cli_load_model(path, eng->weights, eng->map, eng->threads, &s->model, &err)) {
        fprintf(stderr, "server: %s: %s\n", path, err.message);
        return -1;
    }
    if (cli_load_tokenizer(eng, s->model, 0, &s->tok)) return -1;
    s->V = dintattn_model_config(s->model)->vocab_size;
    s->n_ctx = dintattn_model_config(s->model)->max_seq_len;
    if (eng->ctx > 0 ? eng->ctx < s->n_ctx : s->n_ctx > DEFAULT_CTX) s->n_ctx = eng->ctx > 0 ? eng->ctx : DEFAULT_CTX;
    cli_session_options(eng, s->n_ctx, &so);
    s->n_slots = parallel > 0 ? parallel : 256;
    s->slots = (slot *)calloc((size_t)s->n_slots, sizeof *s->slots);
    s->queue = (request **)calloc((size_t)s->queue_max + (size_t)s->n_slots + 1, sizeof *s->queue);
    s->echo_logits = (float *)malloc(sizeof(float) * (size_t)s->V * ECHO_ROWS);
    s->scratch = (float *)malloc(sizeof(float) * (size_t)s->V);
    if (!s->slots || !s->queue || !s->echo_logits || !s->scratch) {
        fprintf(stderr, "server: out of memory\n");
        return -1;
    }
    s->eos_ids = (int *)malloc(sizeof(int) * 64);
    for (k = 0; k < s->V && s->eos_ids && s->n_eos < 64; k++)
        if (dintattn_tokenizer_is_eos(s->tok, k)) s->eos_ids[s->n_eos++] = k;
    for (k = 0; k < s->n_slots; k++) {
        slot *sl = &s->slots[k];
        if (parallel == 0 && k > 0) { /* the default: what fits */
            double need = (double)dintattn_session_bytes(s->slots[0].sess) + sizeof(float) * (double)s->V,
                   avail = dintattn_mem_available();
            if (k >= MAX_DEFAULT_SLOTS || (avail > 0 && need > avail / 2)) break;
        }
        sl->id = k;
        sl->logits = (float *)malloc(sizeof(float) * (size_t)s->V);
        sl->ids = (int *)malloc(sizeof(int) * (size_t)s->n_ctx);
        if (!sl->logits || !sl->ids) {
            fprintf(stderr, "server: out of memory for slot %d\n", k);
            return -1;
        }
        if (dintattn_session_new(s->model, &so, &sl->sess, &err)) {
            fprintf(stderr, "server: cannot create slot %d's session: %s%s\n", k, err.message,
                    k ? " (try a smaller --parallel or --ctx)" : "");
            return -1;
        }
    }
    s->n_slots = k;
    if (s->n_slots > 1) { /* a step of a few sequences reads each matrix once: its panels packed ahead */
        size_t bytes = 0;
        double avail = dintattn_mem_available();
        if (dintattn_model_prepack(s->model, s->slots[0].sess, avail > 0 ? (size_t)(avail / 2) : 0, &bytes, &err) == DINTATTN_OK) {
            if (bytes) fprintf(stderr, "server: %.0f MB of weights packed ahead for batched steps\n", (double)bytes / 1e6);
        } else {
            fprintf(stderr, "server: weights not packed ahead (%s): batched steps of fewer than 8 tokens read them per 4\n",
                    err.message);
        }
    }
    s->n_batch = so.n_batch > 0 ? so.n_batch : 512;
    if (s->n_batch > s->n_ctx) s->n_batch = s->n_ctx;
    return 0;
}

/* A listening socket on host:port (a backlog for floods of connections), its URL in where; -1
   (printed) if there is none. */
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
        bind(lfd, ai->ai_addr, ai->ai_addrlen) || listen(lfd, 4096) ||
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

/* As many connections as the descriptor limit allows (raised to its hard limit), less room for
   the model's files and the process's own. */
static unsigned connection_limit(void)
{
    struct rlimit rl;
    if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur < rl.rlim_max) {
        rl.rlim_cur = rl.rlim_max < 65536 ? rl.rlim_max : 65536;
        setrlimit(RLIMIT_NOFILE, &rl);
        getrlimit(RLIMIT_NOFILE, &rl);
    }
    if (rl.rlim_cur == RLIM_INFINITY || rl.rlim_cur > 16384) return 16384;
    return rl.rlim_cur > 128 ? (unsigned)rl.rlim_cur - 64 : 64;
}

static void server_free(server *s)
{
    int k;
    for (k = 0; s->slots && k < s->n_slots; k++) {
        dintattn_session_free(s->slots[k].sess);
        free(s->slots[k].ids);
        free(s->slots[k].logits);
    }
    free(s->slots);
    free(s->queue);
    free(s->echo_logits);
    free(s->scratch);
    free(s->eos_ids);
    dintattn_tokenizer_free(s->tok);
    dintattn_model_free(s->model);
}

int main(int argc, char **argv)
{
    server_args a;
    server s;
    const char *path;
    char where[1100];
    int lfd, rc, sig;
    sigset_t stop_sigs;
    struct MHD_Daemon *d;
    pthread_t gen;
    memset(&s, 0, sizeof s);
    argv = cli_aliases(&argc, argv); /* --fast */
    if ((rc = parse_args(argc, argv, &a, &s)) >= 0) return rc;
    path = cli_model_path(a.eng.model, argv[0]);
    name_model(&s, path);
    pthread_mutex_init(&s.mu, NULL);
    pthread_cond_init(&s.work, NULL);
    /* SIGINT and SIGTERM wait for main's sigwait (every thread inherits the mask); a client gone
       mid-response is an error from send, not a signal */
    signal(SIGPIPE, SIG_IGN);
    sigemptyset(&stop_sigs);
    sigaddset(&stop_sigs, SIGINT);
    sigaddset(&stop_sigs, SIGTERM);
    pthread_sigmask(SIG_BLOCK, &stop_sigs, NULL);
    if ((lfd = listen_on(a.host, a.port, where, sizeof where)) < 0) return 1;
    d = MHD_start_daemon(MHD_USE_THREAD_PER_CONNECTION | MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_POLL | MHD_USE_ERROR_LOG,
                         0, NULL, NULL, on_request, &s, MHD_OPTION_EXTERNAL_LOGGER, on_mhd_log, NULL,
                         MHD_OPTION_LISTEN_SOCKET, lfd,
                         MHD_OPTION_CONNECTION_TIMEOUT, (unsigned)s.timeout, MHD_OPTION_CONNECTION_LIMIT, connection_limit(),
                         MHD_OPTION_THREAD_STACK_SIZE, (size_t)1 << 20, MHD_OPTION_NOTIFY_COMPLETED, on_completed, NULL,
                         MHD_OPTION_END);
    if (!d) {
        fprintf(stderr, "server: cannot start the HTTP server on %s\n", where);
        close(lfd);
        return 1;
    }
    fprintf(stderr, "server: loading %s on %s (/health answers 503 until it is ready)\n", path, where);
    rc = 1;
    if (open_engine(&s, &a.eng, path, a.parallel) == 0 && pthread_create(&gen, NULL, gen_main, &s) == 0) {
        pthread_mutex_lock(&s.mu);
        s.loaded = 1;
        pthread_mutex_unlock(&s.mu);
        fprintf(stderr, "server: model %s, %d slots of %d tokens, queue %d, %d threads, kernels %s\n", s.model_id,
                s.n_slots, s.n_ctx, s.queue_max, a.eng.threads, dintattn_kernels_name(dintattn_session_kernels(s.slots[0].sess)));
        fprintf(stderr, "server: listening on %s\n", where);
        sigwait(&stop_sigs, &sig);
        fprintf(stderr, "server: stopping\n");
        pthread_mutex_lock(&s.mu);
        s.stopping = 1;
        pthread_cond_broadcast(&s.work);
        pthread_mutex_unlock(&s.mu);
        pthread_join(gen, NULL);
        rc = 0;
    }
    MHD_stop_daemon(d);
    close(lfd);
    server_free(&s);
    fprintf(stderr, "server: stopped\n");
    return rc;
}
