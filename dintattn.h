/* dintattn.h v0.1.0 -- differential-attention LLM inference on a CPU, in one C header.
   MIT license (see the end of this file).

   Runs decoder LLMs built on DIFF, DINT, Shared-DIFF and Grouped-DIFF attention (and standard
   attention as the baseline) from one safetensors file, as specified in SPEC.md.

   USAGE
   In exactly one C or C++ file:
       #define DINTATTN_IMPLEMENTATION
       #include "dintattn.h"
   Link with -lopenblas -lm -lpthread. Define DINTATTN_STATIC to make every function static.
   Define DINTATTN_MALLOC and DINTATTN_FREE together (and DINTATTN_ASSERT) to override them.

       dintattn_error err;
       dintattn_model *model;
       dintattn_session *sess;
       if (dintattn_model_load("model.safetensors", NULL, &model, &err) != DINTATTN_OK) {
           fprintf(stderr, "%s\n", err.message);
           return 1;
       }
       if (dintattn_session_new(model, NULL, &sess, &err) != DINTATTN_OK) { ... }
       int prompt[3] = {1, 2, 3};
       float *logits = malloc(sizeof(float) * dintattn_model_config(model)->vocab_size);
       dintattn_prefill(sess, prompt, 3, logits, 0, &err);   // logits of the last token
       dintattn_decode(sess, 4, logits, &err);               // one more token through the cache
       dintattn_session_free(sess);
       dintattn_model_free(model);

   Threads: a model and a tokenizer are read-only once loaded and may be shared by any number of
   threads; a session (KV cache, DINT integral state S, scratch) and a sampler belong to one
   thread at a time. A session runs its own n_threads pool in decode; its attention hook runs on
   those threads, for different heads at once (in prefill, on the calling thread). A session
   allocates all its memory when created (dintattn_session_bytes) and nothing per token.
   Environment: DINTATTN_NO_SIMD=1 makes new sessions use the portable C kernels everywhere;
   DINTATTN_NO_SIMD=512 stops at AVX2 (otherwise AVX-512F is used where the CPU has it).
   OpenBLAS runs the prefill GEMMs on its own threads (openblas_set_num_threads); a session's
   n_threads run decode's matrix-vector rows and attention heads.

   CONTENTS
     1. API declarations
     2. Configuration and errors
     3. File loading (safetensors + JSON)
     4. Model validation (weight matrices as stored or converted: F32, F16, BF16, Q8)
     5. Math kernels (RMSNorm, row . x for every weight type in portable C, AVX2 and AVX-512,
        RoPE, softmax, SwiGLU/PolyNorm, the attention rows: scores, the DINT integral, W V)
     6. Attention (A1, A2, lambda, the DINT integral S/G/I, head norm; the thread pool)
     7. The decoder step (prefill by sgemm, blocked attention; decode by matrix-vector rows)
     8. Sampler
     9. Tokenizer
    10. License
*/
#ifndef DINTATTN_H
#define DINTATTN_H

#include <stddef.h>

#define DINTATTN_VERSION "0.1.0"

#if defined(DINTATTN_STATIC) && defined(__GNUC__)
#define DINTATTN_API static __attribute__((unused)) /* a program need not call every function */
#elif defined(DINTATTN_STATIC)
#define DINTATTN_API static
#else
#define DINTATTN_API extern
#endif

#ifdef __cplusplus
extern "C" {
#endif

/* ============================================================================================
   1. API declarations
   ============================================================================================ */

typedef enum dintattn_result {
    DINTATTN_OK = 0,
    DINTATTN_ERR_IO,             /* the file cannot be opened, read or mapped */
    DINTATTN_ERR_TRUNCATED,      /* the file is shorter than its header says */
    DINTATTN_ERR_HEADER,         /* safetensors header: bad length, bad JSON, bad tensor entry */
    DINTATTN_ERR_DTYPE,          /* a tensor has a dtype dintattn does not read */
    DINTATTN_ERR_OFFSETS,        /* data offsets outside the data, of the wrong size, overlapping */
    DINTATTN_ERR_METADATA,       /* __metadata__ lacks format "dintattn", version "1" or a config */
    DINTATTN_ERR_CONFIG,         /* a config key is missing or has an illegal value */
    DINTATTN_ERR_MISSING_TENSOR, /* a tensor the config requires is absent */
    DINTATTN_ERR_UNKNOWN_TENSOR, /* a tensor the config does not use is present */
    DINTATTN_ERR_SHAPE,          /* a tensor's shape does not match the config */
    DINTATTN_ERR_NOMEM,          /* an allocation failed */
    DINTATTN_ERR_ARG,            /* a bad argument: NULL, token id out of range, n <= 0 */
    DINTATTN_ERR_CONTEXT,        /* the tokens do not fit in the session's context */
    DINTATTN_ERR_THREAD,         /* a worker thread could not be started */
    DINTATTN_ERR_TOKENIZER,      /* a tiktoken rank file is malformed */
    DINTATTN_ERR_NONFINITE       /* a weight is NaN or infinite (load option check_finite) */
} dintattn_result;

/* Every fallible call takes an optional dintattn_error: on failure it holds the code and one
   line naming the key, tensor or argument at fault. */
typedef struct dintattn_error {
    dintattn_result code;
    char message[256];
} dintattn_error;

typedef enum { DINTATTN_ATTN_STANDARD, DINTATTN_ATTN_DIFF, DINTATTN_ATTN_DINT } dintattn_attention;
typedef enum { DINTATTN_INTEGRAL_SOFTMAX, DINTATTN_INTEGRAL_MEAN } dintattn_integral;
typedef enum { DINTATTN_ROPE_INTERLEAVED, DINTATTN_ROPE_HALVES, DINTATTN_ROPE_NONE } dintattn_rope;
typedef enum { DINTATTN_HEADNORM_RMS, DINTATTN_HEADNORM_GROUP } dintattn_head_norm_type;
typedef enum { DINTATTN_FFN_SILU, DINTATTN_FFN_POLYNORM } dintattn_ffn_act;

/* The model's numbers, as read from the file's config with SPEC.md's defaults applied. */
typedef struct dintattn_config {
    int dim, n_layers, vocab_size, hidden_dim, max_seq_len;
    int n_heads, head_dim, v_head_dim;                     /* H, d, dv */
    int n_k1_heads, n_q2_heads, n_k2_heads, n_v_heads;
    int qk_rank;                                           /* r; 0 = dense Q/K */
    dintattn_attention attention;
    dintattn_integral integral;
    int head_norm;                                         /* bool */
    dintattn_head_norm_type head_norm_type;
    int head_scale;                                        /* bool: scale heads by 1 - lambda_init */
    dintattn_rope rope;
    double rope_theta, norm_eps, head_norm_eps;
    dintattn_ffn_act ffn_act;
    int tie_embeddings;                                    /* bool */
} dintattn_config;

/* How Shared-DIFF (qk_rank > 0) Q/K projections run: as stored (factored) or merged into dense
   per-head matrices at load. AUTO picks whichever costs fewer FLOPs and bytes per token. */
typedef enum { DINTATTN_QK_AUTO, DINTATTN_QK_FACTORED, DINTATTN_QK_MERGED } dintattn_qk_form;

/* The precision the weight matrices are held and read in (norm and lambda vectors are always
   f32). FILE keeps each matrix as the file stores it (F32, F16, BF16 and Q8 are read in place from
   the mapped file; nothing is copied). F32 and BF16 convert at load. Q8 quantizes at load to int8
   in blocks of 32 along each row with one f32 scale per block (README, "Weights in 8 bits"; a file
   may also store them so: I8 NAME + F32 NAME.scale); a matrix whose rows are not a multiple of 32
   long stays as F32/F16/BF16. */
typedef enum { DINTATTN_WEIGHTS_FILE, DINTATTN_WEIGHTS_F32, DINTATTN_WEIGHTS_BF16, DINTATTN_WEIGHTS_Q8 } dintattn_weights;

/* Load options; all-zero (or a NULL pointer) means the defaults. */
typedef struct dintattn_load_options {
    dintattn_qk_form qk_form;
    dintattn_weights weights;
    int check_finite; /* != 0: scan every weight at load and refuse NaN or infinity (and a
                         non-finite lambda) with DINTATTN_ERR_NONFINITE naming the tensor */
} dintattn_load_options;

/* Session options; all-zero (or a NULL pointer) means the defaults. */
typedef struct dintattn_session_options {
    int n_ctx;      /* tokens the session can hold; 0 = the model's max_seq_len (the maximum) */
    int n_batch;    /* tokens per internal prefill step; 0 = min(n_ctx, 512) */
    int n_threads;  /* threads for attention heads and matrix-vector rows; 0 = 1 */
} dintattn_session_options;

typedef struct dintattn_model dintattn_model;
typedef struct dintattn_session dintattn_session;

/* Called with the final attention weights W[n, 0..n] of one signal head at query position
   `pos` (n_keys = pos + 1), after A1, A2 and the integral are combined. For tests and tools. */
typedef void (*dintattn_attn_hook)(void *user, int layer, int head, int pos,
                                   const float *w, int n_keys);

/* Maps and validates a model file. Returns DINTATTN_OK and sets *model, or an error code. */
DINTATTN_API dintattn_result dintattn_model_load(const char *path, const dintattn_load_options *opt,
                                                 dintattn_model **model, dintattn_error *err);
/* As dintattn_model_load, from a buffer that must outlive the model (it is not copied). */
DINTATTN_API dintattn_result dintattn_model_load_memory(const void *data, size_t size,
                                                        const dintattn_load_options *opt,
                                                        dintattn_model **model, dintattn_error *err);
/* Frees a model (NULL is fine). Free its sessions first. */
DINTATTN_API void dintattn_model_free(dintattn_model *model);
/* The model's config; never NULL for a loaded model. */
DINTATTN_API const dintattn_config *dintattn_model_config(const dintattn_model *model);
/* 1 if this model runs Shared-DIFF Q/K projections in factored form, 0 if dense. */
DINTATTN_API int dintattn_model_qk_factored(const dintattn_model *model);
/* Bytes of weights one decoded token reads: every matrix at the precision it is held in (see
   dintattn_weights), the norm vectors, and one row of the embedding table. */
DINTATTN_API size_t dintattn_model_weight_bytes(const dintattn_model *model);
/* Bytes of weights the model holds in memory of its own (copies and conversions; weights read in
   place from the file are not counted). */
DINTATTN_API size_t dintattn_model_owned_bytes(const dintattn_model *model);

/* Creates a session (KV cache, DINT state, scratch) for `model`. Returns an error code on failure. */
DINTATTN_API dintattn_result dintattn_session_new(const dintattn_model *model,
                                                  const dintattn_session_options *opt,
                                                  dintattn_session **sess, dintattn_error *err);
/* Frees a session (NULL is fine). */
DINTATTN_API void dintattn_session_free(dintattn_session *sess);
/* Forgets every token: the next token is at position 0 again. */
DINTATTN_API void dintattn_session_reset(dintattn_session *sess);
/* Number of tokens the session holds (the position of the next token). */
DINTATTN_API int dintattn_session_pos(const dintattn_session *sess);
/* The session's capacity in tokens. */
DINTATTN_API int dintattn_session_n_ctx(const dintattn_session *sess);
/* Bytes the session allocated at creation; it allocates nothing afterwards. */
DINTATTN_API size_t dintattn_session_bytes(const dintattn_session *sess);
/* Installs (or, with NULL, removes) a hook that sees every final attention row. */
DINTATTN_API void dintattn_session_set_attn_hook(dintattn_session *sess, dintattn_attn_hook hook,
                                                 void *user);

/* Runs n >= 1 tokens after those the session holds. If logits is not NULL it receives the logits
   of every token ([n, vocab_size], all_logits != 0) or of the last one ([vocab_size]).
   On error nothing is changed and an error code is returned. */
DINTATTN_API dintattn_result dintattn_prefill(dintattn_session *sess, const int *tokens, int n,
                                              float *logits, int all_logits, dintattn_error *err);
/* Runs one token through the cache; logits ([vocab_size]) may be NULL. */
DINTATTN_API dintattn_result dintattn_decode(dintattn_session *sess, int token, float *logits,
                                             dintattn_error *err);

/* --- sampler --- */

/* How the next token is drawn from the logits. All-zero (or NULL) means greedy. Applied in this
   order: repetition penalty, top-k, temperature, top-p, min-p, then a seeded random draw. */
typedef struct dintattn_sampler_options {
    float temperature;      /* <= 0: greedy (argmax) */
    int top_k;              /* keep the k most likely tokens; 0 = all */
    float top_p;            /* keep the smallest set whose probability reaches p; 0 or 1 = off */
    float min_p;            /* drop tokens less likely than min_p * p(most likely); 0 = off */
    float repeat_penalty;   /* > 1 discourages the last repeat_last_n tokens; 0 or 1 = off */
    int repeat_last_n;      /* how many past tokens the penalty sees; 0 = 64 */
    unsigned long long seed; /* the same seed gives the same tokens */
} dintattn_sampler_options;

typedef struct dintattn_sampler dintattn_sampler;

/* Creates a sampler for a vocabulary of n_vocab tokens. Returns an error code on bad options. */
DINTATTN_API dintattn_result dintattn_sampler_new(int n_vocab, const dintattn_sampler_options *opt,
                                                  dintattn_sampler **sampler, dintattn_error *err);
/* Frees a sampler (NULL is fine). */
DINTATTN_API void dintattn_sampler_free(dintattn_sampler *sampler);
/* Draws a token id from logits[n_vocab] (the array is used as scratch and changed). Never fails:
   NaN logits count as -infinity; if no logit is finite it returns 0. */
DINTATTN_API int dintattn_sampler_sample(dintattn_sampler *sampler, float *logits);
/* Records a token (prompt or generated) for the repetition penalty. */
DINTATTN_API void dintattn_sampler_accept(dintattn_sampler *sampler, int token);
/* Forgets the recorded tokens and restarts the random sequence from the seed. */
DINTATTN_API void dintattn_sampler_reset(dintattn_sampler *sampler);

/* A short English name of a result code. */
DINTATTN_API const char *dintattn_result_name(dintattn_result r);

/* --- tokenizer --- */

/* Byte-level BPE with tiktoken's rank files and the cl100k_base pre-tokenizer (section 9).
   Read-only after its special tokens are added: threads may share one for encoding. */
typedef struct dintattn_tokenizer dintattn_tokenizer;

/* Reads a tiktoken rank file ("base64(token bytes) rank" per line). Returns DINTATTN_ERR_IO if it
   cannot be read, DINTATTN_ERR_METADATA (naming the line) if it is malformed. */
DINTATTN_API dintattn_result dintattn_tokenizer_load(const char *path, dintattn_tokenizer **tok,
                                                     dintattn_error *err);
/* As dintattn_tokenizer_load, from the rank file's bytes (copied: the buffer may go). */
DINTATTN_API dintattn_result dintattn_tokenizer_from_memory(const void *ranks, size_t size,
                                                            dintattn_tokenizer **tok, dintattn_error *err);
/* The tokenizer a model file carries, with its special tokens, BOS and EOS. DINTATTN_ERR_ARG if
   the model carries none, DINTATTN_ERR_METADATA if it is malformed or does not fit vocab_size. */
DINTATTN_API dintattn_result dintattn_tokenizer_from_model(const dintattn_model *model,
                                                           dintattn_tokenizer **tok, dintattn_error *err);
/* Adds special token `text` (NUL-terminated) with id `id`. DINTATTN_ERR_ARG if the text is empty
   or already special, or the id is already a token. */
DINTATTN_API dintattn_result dintattn_tokenizer_add_special(dintattn_tokenizer *tok, const char *text, int id,
                                                            dintattn_error *err);
/* Frees a tokenizer (NULL is fine). */
DINTATTN_API void dintattn_tokenizer_free(dintattn_tokenizer *tok);
/* The largest id of an ordinary or special token, plus one. */
DINTATTN_API int dintattn_tokenizer_n_vocab(const dintattn_tokenizer *tok);
/* The model's BOS / EOS token id; -1 if it has none (and for tokenizers not from a model). */
DINTATTN_API int dintattn_tokenizer_bos(const dintattn_tokenizer *tok);
DINTATTN_API int dintattn_tokenizer_eos(const dintattn_tokenizer *tok);
/* Encodes len bytes of text into ids[0..max_ids) and returns how many ids the whole text needs
   (at most len; if more than max_ids, call again with a larger buffer), or -1 with err set
   (e.g. for a text longer than INT_MAX bytes). allow_special != 0 turns the special tokens'
   texts into their ids; otherwise they are ordinary text (tiktoken's encode_ordinary).
   Invalid UTF-8 is encoded, never refused: decoding gives the bytes back. */
DINTATTN_API int dintattn_tokenizer_encode(const dintattn_tokenizer *tok, const char *text, size_t len,
                                           int allow_special, int *ids, int max_ids, dintattn_error *err);
/* The bytes of token `id` (not NUL-terminated; *len gets their count if len is not NULL), or NULL
   if id is no token. Decoding is the concatenation of these. */
DINTATTN_API const char *dintattn_tokenizer_token(const dintattn_tokenizer *tok, int id, size_t *len);

#ifdef __cplusplus
}
#endif
#endif /* DINTATTN_H */

/* ============================================================================================
   Implementation
   ============================================================================================ */
#ifdef DINTATTN_IMPLEMENTATION
#ifndef DINTATTN_IMPLEMENTATION_DONE
#define DINTATTN_IMPLEMENTATION_DONE

#include <cblas.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <locale.h>
#include <math.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#if defined(DINTATTN_MALLOC) != defined(DINTATTN_FREE)
#error "define both DINTATTN_MALLOC and DINTATTN_FREE, or neither"
#endif
#ifndef DINTATTN_MALLOC
#define DINTATTN_MALLOC(sz) malloc(sz)
#define DINTATTN_FREE(p) free(p)
#endif
#ifndef DINTATTN_ASSERT
#include <assert.h>
#define DINTATTN_ASSERT(x) assert(x)
#endif

#ifdef __cplusplus
extern "C" {
#endif

/* ============================================================================================
   2. Configuration and errors
   ============================================================================================ */

#define DINTATTN__MAX_HEADER (100u << 20) /* safetensors' own limit on the JSON header */
#define DINTATTN__MAX_DIM (1 << 24)
#define DINTATTN__MAX_LAYERS (1 << 16)
#define DINTATTN__JSON_MAX_DEPTH 64

DINTATTN_API const char *dintattn_result_name(dintattn_result r)
{
    switch (r) {
    case DINTATTN_OK: return "ok";
    case DINTATTN_ERR_IO: return "i/o error";
    case DINTATTN_ERR_TRUNCATED: return "truncated file";
    case DINTATTN_ERR_HEADER: return "bad safetensors header";
    case DINTATTN_ERR_DTYPE: return "unsupported dtype";
    case DINTATTN_ERR_OFFSETS: return "bad data offsets";
    case DINTATTN_ERR_METADATA: return "bad metadata";
    case DINTATTN_ERR_CONFIG: return "bad config";
    case DINTATTN_ERR_MISSING_TENSOR: return "missing tensor";
    case DINTATTN_ERR_UNKNOWN_TENSOR: return "unknown tensor";
    case DINTATTN_ERR_SHAPE: return "wrong tensor shape";
    case DINTATTN_ERR_NOMEM: return "out of memory";
    case DINTATTN_ERR_ARG: return "bad argument";
    case DINTATTN_ERR_CONTEXT: return "context full";
    case DINTATTN_ERR_THREAD: return "thread error";
    case DINTATTN_ERR_TOKENIZER: return "bad tokenizer rank file";
    case DINTATTN_ERR_NONFINITE: return "non-finite weight";
    }
    return "unknown error";
}

#if defined(__GNUC__)
__attribute__((format(printf, 3, 4)))
#endif
static dintattn_result dintattn__fail(dintattn_error *err, dintattn_result code, const char *fmt, ...)
{
    if (err) {
        va_list ap;
        va_start(ap, fmt);
        err->code = code;
        vsnprintf(err->message, sizeof err->message, fmt, ap);
        va_end(ap);
    }
    return code;
}

static void dintattn__ok(dintattn_error *err)
{
    if (err) {
        err->code = DINTATTN_OK;
        err->message[0] = 0;
    }
}

static void *dintattn__alloc(size_t n) { return DINTATTN_MALLOC(n ? n : 1); }

static void *dintattn__calloc(size_t count, size_t size)
{
    void *p;
    if (size && count > SIZE_MAX / size) return NULL;
    p = dintattn__alloc(count * size);
    if (p) memset(p, 0, count * size);
    return p;
}

/* a * b, or 0 with *overflow set when it does not fit in size_t. */
static size_t dintattn__mul(size_t a, size_t b, int *overflow)
{
    if (b && a > SIZE_MAX / b) {
        *overflow = 1;
        return 0;
    }
    return a * b;
}

/* ============================================================================================
   3. File loading (safetensors + JSON)
   ============================================================================================ */

/* --- A small JSON parser: strict RFC 8259 syntax, a depth limit, no duplicate keys. ------- */

enum { DINTATTN__JNULL, DINTATTN__JBOOL, DINTATTN__JNUM, DINTATTN__JSTR, DINTATTN__JARR, DINTATTN__JOBJ };

typedef struct dintattn__jnode {
    int type;
    int child, next;          /* first child / next sibling (node indices), -1 for none */
    int n_children;
    const char *key;          /* object members: the key (decoded, NUL-terminated) */
    const char *str;          /* strings: decoded, NUL-terminated; str_len excludes the NUL */
    size_t str_len;
    double num;
    int is_int;               /* the literal is an integer that fits in long long */
    long long ival;
    int boolean;
} dintattn__jnode;

typedef struct dintattn__json {
    char *text;               /* a private, writable copy of the document; strings decode in place */
    size_t len, pos;
    dintattn__jnode *nodes;
    int n_nodes, cap_nodes;
    int nomem;                /* the parse failed for want of memory, not for bad JSON */
    char err[160];
} dintattn__json;

static void dintattn__json_free(dintattn__json *j)
{
    DINTATTN_FREE(j->text);
    DINTATTN_FREE(j->nodes);
    memset(j, 0, sizeof *j);
}

static int dintattn__json_error(dintattn__json *j, const char *what)
{
    snprintf(j->err, sizeof j->err, "%s at byte %lu", what, (unsigned long)j->pos);
    return -1;
}

static int dintattn__json_new_node(dintattn__json *j, int type)
{
    dintattn__jnode *n;
    if (j->n_nodes == j->cap_nodes) {
        int cap = j->cap_nodes ? j->cap_nodes * 2 : 64;
        dintattn__jnode *grown;
        if (j->cap_nodes > INT_MAX / 4) return dintattn__json_error(j, "too many JSON values");
        grown = (dintattn__jnode *)dintattn__alloc(sizeof *grown * (size_t)cap);
        if (!grown) {
            j->nomem = 1;
            return dintattn__json_error(j, "out of memory");
        }
        if (j->n_nodes) memcpy(grown, j->nodes, sizeof *grown * (size_t)j->n_nodes);
        DINTATTN_FREE(j->nodes);
        j->nodes = grown;
        j->cap_nodes = cap;
    }
    n = &j->nodes[j->n_nodes];
    memset(n, 0, sizeof *n);
    n->type = type;
    n->child = n->next = -1;
    return j->n_nodes++;
}

static void dintattn__json_ws(dintattn__json *j)
{
    while (j->pos < j->len) {
        char c = j->text[j->pos];
        if (c != ' ' && c != '\t' && c != '\n' && c != '\r') break;
        j->pos++;
    }
}

static int dintattn__hex4(const char *s, unsigned *out)
{
    unsigned v = 0;
    int i;
    for (i = 0; i < 4; i++) {
        char c = s[i];
        v <<= 4;
        if (c >= '0' && c <= '9') v |= (unsigned)(c - '0');
        else if (c >= 'a' && c <= 'f') v |= (unsigned)(c - 'a' + 10);
        else if (c >= 'A' && c <= 'F') v |= (unsigned)(c - 'A' + 10);
        else return 0;
    }
    *out = v;
    return 1;
}

static char *dintattn__put_utf8(char *o, unsigned cp)
{
    if (cp < 0x80) {
        *o++ = (char)cp;
    } else if (cp < 0x800) {
        *o++ = (char)(0xC0 | (cp >> 6));
        *o++ = (char)(0x80 | (cp & 0x3F));
    } else if (cp < 0x10000) {
        *o++ = (char)(0xE0 | (cp >> 12));
        *o++ = (char)(0x80 | ((cp >> 6) & 0x3F));
        *o++ = (char)(0x80 | (cp & 0x3F));
    } else {
        *o++ = (char)(0xF0 | (cp >> 18));
        *o++ = (char)(0x80 | ((cp >> 12) & 0x3F));
        *o++ = (char)(0x80 | ((cp >> 6) & 0x3F));
        *o++ = (char)(0x80 | (cp & 0x3F));
    }
    return o;
}

/* Decodes the string starting at the opening quote in place; returns its start or NULL. */
static char *dintattn__json_string(dintattn__json *j, size_t *out_len)
{
    char *start = j->text + j->pos + 1, *o = start;
    j->pos++;
    for (;;) {
        unsigned char c;
        if (j->pos >= j->len) {
            dintattn__json_error(j, "unterminated string");
            return NULL;
        }
        c = (unsigned char)j->text[j->pos];
        if (c == '"') break;
        if (c < 0x20) {
            dintattn__json_error(j, "control character in string");
            return NULL;
        }
        if (c != '\\') {
            *o++ = (char)c;
            j->pos++;
            continue;
        }
        if (j->pos + 1 >= j->len) {
            dintattn__json_error(j, "unterminated string");
            return NULL;
        }
        c = (unsigned char)j->text[j->pos + 1];
        j->pos += 2;
        switch (c) {
        case '"': *o++ = '"'; break;
        case '\\': *o++ = '\\'; break;
        case '/': *o++ = '/'; break;
        case 'b': *o++ = '\b'; break;
        case 'f': *o++ = '\f'; break;
        case 'n': *o++ = '\n'; break;
        case 'r': *o++ = '\r'; break;
        case 't': *o++ = '\t'; break;
        case 'u': {
            unsigned cp, lo;
            if (j->pos + 4 > j->len || !dintattn__hex4(j->text + j->pos, &cp)) {
                dintattn__json_error(j, "bad \\u escape");
                return NULL;
            }
            j->pos += 4;
            if (cp >= 0xD800 && cp <= 0xDBFF) {
                if (j->pos + 6 > j->len || j->text[j->pos] != '\\' || j->text[j->pos + 1] != 'u' ||
                    !dintattn__hex4(j->text + j->pos + 2, &lo) || lo < 0xDC00 || lo > 0xDFFF) {
                    dintattn__json_error(j, "unpaired surrogate in \\u escape");
                    return NULL;
                }
                j->pos += 6;
                cp = 0x10000 + ((cp - 0xD800) << 10) + (lo - 0xDC00);
            } else if (cp >= 0xDC00 && cp <= 0xDFFF) {
                dintattn__json_error(j, "unpaired surrogate in \\u escape");
                return NULL;
            } else if (cp == 0) {
                /* names and values are C strings here: an embedded NUL would shorten them */
                dintattn__json_error(j, "\\u0000 in a string");
                return NULL;
            }
            /* the escape took at least 6 bytes and its UTF-8 at most 4: o stays behind pos */
            o = dintattn__put_utf8(o, cp);
            break;
        }
        default:
            dintattn__json_error(j, "bad escape in string");
            return NULL;
        }
    }
    *out_len = (size_t)(o - start);
    j->pos++; /* the closing quote; the NUL below may overwrite it, which is fine */
    *o = 0;
    return start;
}

static int dintattn__json_number(dintattn__json *j, dintattn__jnode *n)
{
    size_t s = j->pos, p = s, k;
    int is_int = 1;
    char buf[128], *end;
    const char *dp = localeconv()->decimal_point;
    if (p < j->len && j->text[p] == '-') p++;
    if (p >= j->len || j->text[p] < '0' || j->text[p] > '9') return dintattn__json_error(j, "bad number");
    if (j->text[p] == '0') p++;
    else while (p < j->len && j->text[p] >= '0' && j->text[p] <= '9') p++;
    if (p < j->len && j->text[p] == '.') {
        is_int = 0;
        p++;
        if (p >= j->len || j->text[p] < '0' || j->text[p] > '9') return dintattn__json_error(j, "bad number");
        while (p < j->len && j->text[p] >= '0' && j->text[p] <= '9') p++;
    }
    if (p < j->len && (j->text[p] == 'e' || j->text[p] == 'E')) {
        is_int = 0;
        p++;
        if (p < j->len && (j->text[p] == '+' || j->text[p] == '-')) p++;
        if (p >= j->len || j->text[p] < '0' || j->text[p] > '9') return dintattn__json_error(j, "bad number");
        while (p < j->len && j->text[p] >= '0' && j->text[p] <= '9') p++;
    }
    if (p - s >= sizeof buf) return dintattn__json_error(j, "number too long");
    /* strtod follows the C locale's decimal point; a host program may have changed it */
    for (k = 0; k < p - s; k++) buf[k] = (j->text[s + k] == '.' && dp && dp[0]) ? dp[0] : j->text[s + k];
    buf[p - s] = 0;
    n->num = strtod(buf, &end);
    n->is_int = 0;
    if (is_int) {
        errno = 0;
        n->ival = strtoll(buf, &end, 10);
        n->is_int = errno == 0;
    }
    j->pos = p;
    return 0;
}

static int dintattn__json_value(dintattn__json *j, int depth);

static int dintattn__json_container(dintattn__json *j, int depth, int is_obj)
{
    int self = dintattn__json_new_node(j, is_obj ? DINTATTN__JOBJ : DINTATTN__JARR), last = -1;
    char close = is_obj ? '}' : ']';
    if (self < 0) return -1;
    j->pos++;
    dintattn__json_ws(j);
    if (j->pos < j->len && j->text[j->pos] == close) {
        j->pos++;
        return self;
    }
    for (;;) {
        const char *key = NULL;
        int child;
        dintattn__json_ws(j);
        if (is_obj) {
            size_t klen;
            if (j->pos >= j->len || j->text[j->pos] != '"') return dintattn__json_error(j, "expected a key");
            key = dintattn__json_string(j, &klen);
            if (!key) return -1;
            dintattn__json_ws(j);
            if (j->pos >= j->len || j->text[j->pos] != ':') return dintattn__json_error(j, "expected ':'");
            j->pos++;
        }
        child = dintattn__json_value(j, depth + 1);
        if (child < 0) return -1;
        j->nodes[child].key = key;
        if (last < 0) j->nodes[self].child = child;
        else j->nodes[last].next = child;
        last = child;
        j->nodes[self].n_children++;
        dintattn__json_ws(j);
        if (j->pos < j->len && j->text[j->pos] == ',') {
            j->pos++;
            continue;
        }
        if (j->pos < j->len && j->text[j->pos] == close) {
            j->pos++;
            return self;
        }
        return dintattn__json_error(j, is_obj ? "expected ',' or '}'" : "expected ',' or ']'");
    }
}

static int dintattn__json_literal(dintattn__json *j, const char *word, int type, int boolean)
{
    size_t n = strlen(word);
    int self;
    if (j->len - j->pos < n || memcmp(j->text + j->pos, word, n) != 0) return dintattn__json_error(j, "bad literal");
    self = dintattn__json_new_node(j, type);
    if (self < 0) return -1;
    j->nodes[self].boolean = boolean;
    j->pos += n;
    return self;
}

static int dintattn__json_value(dintattn__json *j, int depth)
{
    char c;
    int self;
    if (depth > DINTATTN__JSON_MAX_DEPTH) return dintattn__json_error(j, "JSON nested too deeply");
    dintattn__json_ws(j);
    if (j->pos >= j->len) return dintattn__json_error(j, "unexpected end of JSON");
    c = j->text[j->pos];
    if (c == '{' || c == '[') return dintattn__json_container(j, depth, c == '{');
    if (c == '"') {
        size_t len;
        const char *s;
        self = dintattn__json_new_node(j, DINTATTN__JSTR);
        if (self < 0) return -1;
        s = dintattn__json_string(j, &len);
        if (!s) return -1;
        j->nodes[self].str = s;
        j->nodes[self].str_len = len;
        return self;
    }
    if (c == 't') return dintattn__json_literal(j, "true", DINTATTN__JBOOL, 1);
    if (c == 'f') return dintattn__json_literal(j, "false", DINTATTN__JBOOL, 0);
    if (c == 'n') return dintattn__json_literal(j, "null", DINTATTN__JNULL, 0);
    if (c != '-' && (c < '0' || c > '9')) return dintattn__json_error(j, "unexpected character");
    self = dintattn__json_new_node(j, DINTATTN__JNUM);
    if (self < 0) return -1;
    if (dintattn__json_number(j, &j->nodes[self]) < 0) return -1;
    return self;
}

static int dintattn__cmp_key(const void *a, const void *b)
{
    return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/* Refuses objects that repeat a key; returns 0 or -1 with j->err set. */
static int dintattn__json_no_duplicates(dintattn__json *j)
{
    int i, ok = 0;
    const char **keys = NULL;
    int cap = 0;
    for (i = 0; i < j->n_nodes && ok == 0; i++) {
        int c, k = 0, m;
        if (j->nodes[i].type != DINTATTN__JOBJ || j->nodes[i].n_children < 2) continue;
        if (j->nodes[i].n_children > cap) {
            DINTATTN_FREE((void *)keys);
            cap = j->nodes[i].n_children;
            keys = (const char **)dintattn__alloc(sizeof *keys * (size_t)cap);
            if (!keys) {
                j->nomem = 1;
                snprintf(j->err, sizeof j->err, "out of memory");
                return -1;
            }
        }
        for (c = j->nodes[i].child; c >= 0; c = j->nodes[c].next) keys[k++] = j->nodes[c].key;
        qsort((void *)keys, (size_t)k, sizeof *keys, dintattn__cmp_key);
        for (m = 1; m < k; m++)
            if (strcmp(keys[m - 1], keys[m]) == 0) {
                snprintf(j->err, sizeof j->err, "duplicate key \"%.80s\"", keys[m]);
                ok = -1;
                break;
            }
    }
    DINTATTN_FREE((void *)keys);
    return ok;
}

/* Parses `len` bytes of JSON (copied). Returns 0 (root is node 0) or -1 with j->err set. */
static int dintattn__json_parse(dintattn__json *j, const char *text, size_t len)
{
    memset(j, 0, sizeof *j);
    j->text = (char *)dintattn__alloc(len + 1);
    if (!j->text) {
        j->nomem = 1;
        snprintf(j->err, sizeof j->err, "out of memory");
        return -1;
    }
    memcpy(j->text, text, len);
    j->text[len] = 0;
    j->len = len;
    if (dintattn__json_value(j, 0) < 0) return -1;
    dintattn__json_ws(j);
    if (j->pos != j->len) return dintattn__json_error(j, "trailing characters after JSON");
    return dintattn__json_no_duplicates(j);
}

static const dintattn__jnode *dintattn__json_get(const dintattn__json *j, const dintattn__jnode *obj,
                                                 const char *key)
{
    int c;
    if (!obj || obj->type != DINTATTN__JOBJ) return NULL;
    for (c = obj->child; c >= 0; c = j->nodes[c].next)
        if (strcmp(j->nodes[c].key, key) == 0) return &j->nodes[c];
    return NULL;
}

/* --- safetensors ------------------------------------------------------------------------- */

typedef enum { DINTATTN__F32, DINTATTN__F16, DINTATTN__BF16, DINTATTN__U8, DINTATTN__I8 } dintattn__dtype;

typedef struct dintattn__tensor {
    const char *name;
    dintattn__dtype dtype;
    int ndim;
    int64_t shape[8];
    size_t begin, end;        /* byte offsets into the data section */
    const unsigned char *data;
    int used;                 /* claimed by the model (validation finds the unclaimed) */
} dintattn__tensor;

typedef struct dintattn__file {
    const unsigned char *bytes;
    size_t size;
    void *map;                /* non-NULL when we mmap'ed the file */
    dintattn__json header, config, tokenizer; /* tokenizer: the optional metadata "tokenizer" */
    dintattn__tensor *tensors; /* sorted by name */
    int n_tensors;
} dintattn__file;

static void dintattn__file_close(dintattn__file *f)
{
    if (f->map) munmap(f->map, f->size);
    dintattn__json_free(&f->header);
    dintattn__json_free(&f->config);
    dintattn__json_free(&f->tokenizer);
    DINTATTN_FREE(f->tensors);
    memset(f, 0, sizeof *f);
}

static int dintattn__cmp_tensor_name(const void *a, const void *b)
{
    return strcmp(((const dintattn__tensor *)a)->name, ((const dintattn__tensor *)b)->name);
}

static int dintattn__cmp_tensor_begin(const void *a, const void *b)
{
    const dintattn__tensor *x = *(const dintattn__tensor *const *)a, *y = *(const dintattn__tensor *const *)b;
    if (x->begin != y->begin) return x->begin < y->begin ? -1 : 1;
    return x->end < y->end ? -1 : x->end > y->end;
}

static dintattn__tensor *dintattn__find(dintattn__file *f, const char *name)
{
    int lo = 0, hi = f->n_tensors - 1;
    while (lo <= hi) {
        int mid = lo + (hi - lo) / 2, c = strcmp(name, f->tensors[mid].name);
        if (c == 0) return &f->tensors[mid];
        if (c < 0) hi = mid - 1;
        else lo = mid + 1;
    }
    return NULL;
}

static size_t dintattn__dtype_size(dintattn__dtype t)
{
    return t == DINTATTN__F32 ? 4 : t == DINTATTN__U8 || t == DINTATTN__I8 ? 1 : 2;
}

/* Reads one tensor entry {"dtype","shape","data_offsets"} of the header. */
static dintattn_result dintattn__parse_entry(dintattn__file *f, const dintattn__jnode *e, size_t data_size,
                                             dintattn__tensor *t, dintattn_error *err)
{
    const dintattn__json *j = &f->header;
    const dintattn__jnode *dt = dintattn__json_get(j, e, "dtype"), *sh = dintattn__json_get(j, e, "shape");
    const dintattn__jnode *off = dintattn__json_get(j, e, "data_offsets"), *a, *b;
    size_t numel = 1, bytes;
    int c, overflow = 0;
    t->name = e->key;
    if (e->type != DINTATTN__JOBJ || !dt || !sh || !off || dt->type != DINTATTN__JSTR ||
        sh->type != DINTATTN__JARR || off->type != DINTATTN__JARR)
        return dintattn__fail(err, DINTATTN_ERR_HEADER,
                              "tensor '%.100s': entry needs \"dtype\", \"shape\" and \"data_offsets\"", e->key);
    if (strcmp(dt->str, "F32") == 0) t->dtype = DINTATTN__F32;
    else if (strcmp(dt->str, "F16") == 0) t->dtype = DINTATTN__F16;
    else if (strcmp(dt->str, "BF16") == 0) t->dtype = DINTATTN__BF16;
    else if (strcmp(dt->str, "U8") == 0) t->dtype = DINTATTN__U8;
    else if (strcmp(dt->str, "I8") == 0) t->dtype = DINTATTN__I8;
    else
        return dintattn__fail(err, DINTATTN_ERR_DTYPE, "tensor '%.100s': dtype \"%.20s\" is not F32, F16, BF16 (or I8 or U8)",
                              e->key, dt->str);
    if (sh->n_children > 8)
        return dintattn__fail(err, DINTATTN_ERR_HEADER, "tensor '%.100s': more than 8 dimensions", e->key);
    t->ndim = 0;
    for (c = sh->child; c >= 0; c = j->nodes[c].next) {
        const dintattn__jnode *d = &j->nodes[c];
        if (d->type != DINTATTN__JNUM || !d->is_int || d->ival < 0)
            return dintattn__fail(err, DINTATTN_ERR_HEADER, "tensor '%.100s': shape entries must be integers >= 0",
                                  e->key);
        t->shape[t->ndim++] = d->ival;
        numel = dintattn__mul(numel, (size_t)d->ival, &overflow);
    }
    bytes = dintattn__mul(numel, dintattn__dtype_size(t->dtype), &overflow);
    if (overflow)
        return dintattn__fail(err, DINTATTN_ERR_HEADER, "tensor '%.100s': shape's byte size overflows", e->key);
    a = off->n_children == 2 ? &j->nodes[off->child] : NULL;
    b = a ? &j->nodes[a->next] : NULL;
    if (!a || a->type != DINTATTN__JNUM || b->type != DINTATTN__JNUM || !a->is_int || !b->is_int ||
        a->ival < 0 || b->ival < 0)
        return dintattn__fail(err, DINTATTN_ERR_HEADER, "tensor '%.100s': data_offsets must be two integers >= 0",
                              e->key);
    if (a->ival > b->ival)
        return dintattn__fail(err, DINTATTN_ERR_OFFSETS, "tensor '%.100s': data_offsets [%lld, %lld] are reversed",
                              e->key, a->ival, b->ival);
    if ((unsigned long long)b->ival > data_size)
        return dintattn__fail(err, DINTATTN_ERR_OFFSETS,
                              "tensor '%.100s': data_offsets [%lld, %lld] outside the %lu data bytes", e->key,
                              a->ival, b->ival, (unsigned long)data_size);
    t->begin = (size_t)a->ival;
    t->end = (size_t)b->ival;
    if (t->end - t->begin != bytes)
        return dintattn__fail(err, DINTATTN_ERR_OFFSETS,
                              "tensor '%.100s': data_offsets span %lu bytes, shape and dtype need %lu", e->key,
                              (unsigned long)(t->end - t->begin), (unsigned long)bytes);
    return DINTATTN_OK;
}

/* Refuses tensors whose byte ranges overlap. */
static dintattn_result dintattn__check_overlap(dintattn__file *f, dintattn_error *err)
{
    dintattn__tensor **order;
    const dintattn__tensor *far;
    int i;
    dintattn_result r = DINTATTN_OK;
    if (f->n_tensors < 2) return DINTATTN_OK;
    order = (dintattn__tensor **)dintattn__alloc(sizeof *order * (size_t)f->n_tensors);
    if (!order) return dintattn__fail(err, DINTATTN_ERR_NOMEM, "out of memory reading the header");
    for (i = 0; i < f->n_tensors; i++) order[i] = &f->tensors[i];
    qsort(order, (size_t)f->n_tensors, sizeof *order, dintattn__cmp_tensor_begin);
    /* sorted by start, a tensor overlaps an earlier one iff it starts before the furthest end
       seen so far (empty tensors occupy no bytes and overlap nothing) */
    for (i = 1, far = order[0]; i < f->n_tensors; i++) {
        const dintattn__tensor *q = order[i];
        if (q->end == q->begin) continue;
        if (q->begin < far->end) {
            r = dintattn__fail(err, DINTATTN_ERR_OFFSETS, "tensors '%.80s' and '%.80s' overlap in the file",
                               far->name, q->name);
            break;
        }
        if (q->end > far->end) far = q;
    }
    DINTATTN_FREE(order);
    return r;
}

static dintattn_result dintattn__read_metadata(dintattn__file *f, const dintattn__jnode *meta, dintattn_error *err)
{
    const dintattn__json *j = &f->header;
    const dintattn__jnode *fmt, *ver, *cfg;
    int c;
    if (!meta) return dintattn__fail(err, DINTATTN_ERR_METADATA, "no __metadata__: not a dintattn model");
    if (meta->type != DINTATTN__JOBJ)
        return dintattn__fail(err, DINTATTN_ERR_METADATA, "__metadata__ is not an object");
    for (c = meta->child; c >= 0; c = j->nodes[c].next)
        if (j->nodes[c].type != DINTATTN__JSTR)
            return dintattn__fail(err, DINTATTN_ERR_METADATA, "__metadata__ value '%.80s' is not a string",
                                  j->nodes[c].key);
    fmt = dintattn__json_get(j, meta, "format");
    ver = dintattn__json_get(j, meta, "version");
    cfg = dintattn__json_get(j, meta, "config");
    if (!fmt || strcmp(fmt->str, "dintattn") != 0)
        return dintattn__fail(err, DINTATTN_ERR_METADATA, "__metadata__ \"format\" is not \"dintattn\"");
    if (!ver || strcmp(ver->str, "1") != 0)
        return dintattn__fail(err, DINTATTN_ERR_METADATA, "__metadata__ \"version\" is not \"1\"");
    if (!cfg) return dintattn__fail(err, DINTATTN_ERR_METADATA, "__metadata__ has no \"config\"");
    if (dintattn__json_parse(&f->config, cfg->str, cfg->str_len) < 0)
        return dintattn__fail(err, f->config.nomem ? DINTATTN_ERR_NOMEM : DINTATTN_ERR_CONFIG, "config: %s",
                              f->config.err);
    if (f->config.nodes[0].type != DINTATTN__JOBJ)
        return dintattn__fail(err, DINTATTN_ERR_CONFIG, "config is not a JSON object");
    return DINTATTN_OK;
}

/* Parses and checks the container: header length, JSON, entries, offsets, metadata. */
static dintattn_result dintattn__file_parse(dintattn__file *f, dintattn_error *err)
{
    uint64_t hlen = 0;
    size_t data_size;
    const dintattn__jnode *root, *meta = NULL;
    int c, i, k;
    dintattn_result r;
    if (f->size < 8)
        return dintattn__fail(err, DINTATTN_ERR_TRUNCATED, "file of %lu bytes is too short for a safetensors header",
                              (unsigned long)f->size);
    for (i = 7; i >= 0; i--) hlen = hlen << 8 | f->bytes[i];
    if (hlen > f->size - 8)
        return dintattn__fail(err, DINTATTN_ERR_TRUNCATED, "header length %llu runs past the end of the %lu-byte file",
                              (unsigned long long)hlen, (unsigned long)f->size);
    if (hlen < 2 || hlen > DINTATTN__MAX_HEADER)
        return dintattn__fail(err, DINTATTN_ERR_HEADER, "header length %llu is not in [2, %u]",
                              (unsigned long long)hlen, DINTATTN__MAX_HEADER);
    if (dintattn__json_parse(&f->header, (const char *)f->bytes + 8, (size_t)hlen) < 0)
        return dintattn__fail(err, f->header.nomem ? DINTATTN_ERR_NOMEM : DINTATTN_ERR_HEADER, "header JSON: %s",
                              f->header.err);
    root = &f->header.nodes[0];
    if (root->type != DINTATTN__JOBJ) return dintattn__fail(err, DINTATTN_ERR_HEADER, "header is not a JSON object");
    data_size = f->size - 8 - (size_t)hlen;
    f->tensors = (dintattn__tensor *)dintattn__calloc((size_t)root->n_children + 1, sizeof *f->tensors);
    if (!f->tensors) return dintattn__fail(err, DINTATTN_ERR_NOMEM, "out of memory reading the header");
    k = 0;
    for (c = root->child; c >= 0; c = f->header.nodes[c].next) {
        const dintattn__jnode *e = &f->header.nodes[c];
        if (strcmp(e->key, "__metadata__") == 0) {
            meta = e;
            continue;
        }
        r = dintattn__parse_entry(f, e, data_size, &f->tensors[k], err);
        if (r) return r;
        f->tensors[k].data = f->bytes + 8 + hlen + f->tensors[k].begin;
        k++;
    }
    f->n_tensors = k;
    qsort(f->tensors, (size_t)k, sizeof *f->tensors, dintattn__cmp_tensor_name);
    r = dintattn__check_overlap(f, err);
    if (r) return r;
    return dintattn__read_metadata(f, meta, err);
}

static dintattn_result dintattn__file_map(dintattn__file *f, const char *path, dintattn_error *err)
{
    struct stat st;
    int fd = open(path, O_RDONLY | O_NONBLOCK); /* a FIFO must not block us before fstat refuses it */
    if (fd < 0) return dintattn__fail(err, DINTATTN_ERR_IO, "cannot open '%.200s': %s", path, strerror(errno));
    if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
        close(fd);
        return dintattn__fail(err, DINTATTN_ERR_IO, "'%.200s' is not a regular file", path);
    }
    if ((unsigned long long)st.st_size > (unsigned long long)SIZE_MAX) {
        close(fd);
        return dintattn__fail(err, DINTATTN_ERR_IO, "'%.200s' is too large to map", path);
    }
    f->size = (size_t)st.st_size;
    if (f->size == 0) {
        close(fd);
        return dintattn__fail(err, DINTATTN_ERR_TRUNCATED, "'%.200s' is empty", path);
    }
    f->map = mmap(NULL, f->size, PROT_READ, MAP_PRIVATE, fd, 0);
    close(fd);
    if (f->map == MAP_FAILED) {
        f->map = NULL;
        return dintattn__fail(err, DINTATTN_ERR_IO, "cannot map '%.200s': %s", path, strerror(errno));
    }
    f->bytes = (const unsigned char *)f->map;
    return DINTATTN_OK;
}

/* Float conversions of stored weights: exact (F16 and BF16 are subsets of F32). */
static float dintattn__f16_to_f32(uint16_t h)
{
    uint32_t sign = (uint32_t)(h & 0x8000) << 16, exp = (h >> 10) & 0x1F, man = h & 0x3FF, bits;
    float f;
    if (exp == 0x1F) {
        bits = sign | 0x7F800000u | (man << 13);
    } else if (exp == 0) {
        /* zero or subnormal: man * 2^-24 is exact in f32 */
        f = (float)man * (1.0f / 16777216.0f);
        return sign ? -f : f;
    } else {
        bits = sign | ((exp + 112) << 23) | (man << 13);
    }
    memcpy(&f, &bits, 4);
    return f;
}

static float dintattn__bf16_to_f32(uint16_t h)
{
    uint32_t bits = (uint32_t)h << 16;
    float f;
    memcpy(&f, &bits, 4);
    return f;
}

/* Element i of a float tensor, read little-endian whatever the host. */
static float dintattn__elem(const dintattn__tensor *t, size_t i)
{
    const unsigned char *p = t->data;
    if (t->dtype == DINTATTN__F32) {
        uint32_t b = (uint32_t)p[4 * i] | (uint32_t)p[4 * i + 1] << 8 | (uint32_t)p[4 * i + 2] << 16 |
                     (uint32_t)p[4 * i + 3] << 24;
        float f;
        memcpy(&f, &b, 4);
        return f;
    } else {
        uint16_t h = (uint16_t)(p[2 * i] | p[2 * i + 1] << 8);
        return t->dtype == DINTATTN__F16 ? dintattn__f16_to_f32(h) : dintattn__bf16_to_f32(h);
    }
}

/* ============================================================================================
   4. Model validation
   ============================================================================================ */

/* A weight matrix [rows][cols] (an nn.Linear's weight: y = W x) in the precision it is held in:
   a view into the mapped file, or a conversion the model owns. Q8 rows are blocks of 32 int8
   values q with one f32 scale each: w = scale * q. */
typedef enum { DINTATTN__W_F32, DINTATTN__W_F16, DINTATTN__W_BF16, DINTATTN__W_Q8 } dintattn__wtype;

typedef struct dintattn__mat {
    const void *w;                  /* rows * cols elements of `type` */
    const float *scale;             /* Q8: rows * cols / 32 block scales */
    int rows, cols;
    dintattn__wtype type;
} dintattn__mat;

static size_t dintattn__wsize(dintattn__wtype t) { return t == DINTATTN__W_F32 ? 4 : t == DINTATTN__W_Q8 ? 1 : 2; }

/* Element i (row-major) of M. */
static float dintattn__w_elem(const dintattn__mat *M, size_t i)
{
    switch (M->type) {
    case DINTATTN__W_F32: return ((const float *)M->w)[i];
    case DINTATTN__W_F16: return dintattn__f16_to_f32(((const uint16_t *)M->w)[i]);
    case DINTATTN__W_BF16: return dintattn__bf16_to_f32(((const uint16_t *)M->w)[i]);
    default: return M->scale[i / 32] * (float)((const signed char *)M->w)[i];
    }
}

/* dst[0 .. nr*cols) = rows r0 .. r0+nr of M, in f32 (or, with dst64, in f64). */
static void dintattn__mat_rows(const dintattn__mat *M, int r0, int nr, float *dst, double *dst64)
{
    const size_t n = (size_t)nr * (size_t)M->cols, at = (size_t)r0 * (size_t)M->cols;
    const float *f = (const float *)M->w + at;
    const uint16_t *h = (const uint16_t *)M->w + at;
    const signed char *q = (const signed char *)M->w + at;
    size_t i;
    if (dst64) {
        for (i = 0; i < n; i++) dst64[i] = dintattn__w_elem(M, at + i);
        return;
    }
    switch (M->type) {
    case DINTATTN__W_F32: memcpy(dst, f, n * sizeof(float)); break;
    case DINTATTN__W_BF16:
        for (i = 0; i < n; i++) {
            uint32_t bits = (uint32_t)h[i] << 16;
            memcpy(dst + i, &bits, 4);
        }
        break;
    case DINTATTN__W_F16:
        for (i = 0; i < n; i++) dst[i] = dintattn__f16_to_f32(h[i]);
        break;
    default:
        for (i = 0; i < n; i++) dst[i] = M->scale[(at + i) / 32] * (float)q[i];
    }
}

/* One layer's weights. The Q/K projections accumulate in double (their products q . k feed the
   softmaxes, which amplify rounding: float32 accumulation over D would dominate the error of the
   whole model, DINT's most), whatever precision their weights are held in. */
typedef struct dintattn__layer {
    const float *attn_norm, *ffn_norm;
    dintattn__mat wq1, wk1, wq2, wk2;                   /* dense (or merged Shared-DIFF) Q/K */
    dintattn__mat q_base, k_base, q1_down, k1_down, q2_down, k2_down;   /* Shared-DIFF factored */
    const double *q1_up, *k1_up, *q2_up, *k2_up;        /* [heads][d][r], small: kept in double */
    dintattn__mat wv, wo;
    const float *lambda_q1, *lambda_k1, *lambda_q2, *lambda_k2;
    const float *head_norm_w, *head_norm_b;
    int head_norm_per_head;                             /* weights are [H*dv], not [dv] */
    dintattn__mat w_gate, w_up, w_down;
    const float *act_weight, *act_bias;                 /* PolyNorm (w0, w1, w2), b */
    double lambda_init, lambda;                         /* per-layer scalars (SPEC.md section 1) */
} dintattn__layer;

struct dintattn_model {
    dintattn_config cfg;
    dintattn__layer *layers;
    dintattn__mat tok_embeddings, output;
    const float *norm;
    int qk_factored;
    dintattn_weights weights;                           /* the load option */
    size_t owned_bytes;
    /* the tokenizer carried by the file (README, "Tokenizer in the model file"), if any */
    const unsigned char *tok_ranks;                     /* tokenizer.ranks: a tiktoken rank file */
    size_t tok_ranks_size;
    int bos_id, eos_id;                                 /* -1: none */
    int n_special;
    const char **special_text;                          /* strings live in file.tokenizer */
    int *special_ids;
    dintattn__file file;
    void **owned;                                       /* converted weights to free */
    int n_owned, cap_owned;
};

/* --- config ------------------------------------------------------------------------------ */

static dintattn_result dintattn__cfg_int(const dintattn__json *j, const char *key, int def, int lo, int hi,
                                         int *out, dintattn_error *err)
{
    const dintattn__jnode *n = dintattn__json_get(j, &j->nodes[0], key);
    if (!n) {
        if (def < lo) return dintattn__fail(err, DINTATTN_ERR_CONFIG, "config key '%s' is missing", key);
        *out = def;
        return DINTATTN_OK;
    }
    if (n->type != DINTATTN__JNUM || !n->is_int || n->ival < lo || n->ival > hi)
        return dintattn__fail(err, DINTATTN_ERR_CONFIG, "config key '%s' must be an integer in [%d, %d]", key, lo,
                              hi);
    *out = (int)n->ival;
    return DINTATTN_OK;
}

static dintattn_result dintattn__cfg_num(const dintattn__json *j, const char *key, double def, double lo,
                                         double *out, dintattn_error *err)
{
    const dintattn__jnode *n = dintattn__json_get(j, &j->nodes[0], key);
    if (!n) {
        *out = def;
        return DINTATTN_OK;
    }
    if (n->type != DINTATTN__JNUM || !(n->num >= lo) || !(n->num < 1e300))
        return dintattn__fail(err, DINTATTN_ERR_CONFIG, "config key '%s' must be a finite number >= %g", key, lo);
    *out = n->num;
    return DINTATTN_OK;
}

static dintattn_result dintattn__cfg_bool(const dintattn__json *j, const char *key, int def, int *out,
                                          dintattn_error *err)
{
    const dintattn__jnode *n = dintattn__json_get(j, &j->nodes[0], key);
    if (!n) {
        *out = def;
        return DINTATTN_OK;
    }
    if (n->type != DINTATTN__JBOOL)
        return dintattn__fail(err, DINTATTN_ERR_CONFIG, "config key '%s' must be true or false", key);
    *out = n->boolean;
    return DINTATTN_OK;
}

/* Reads a string key that must be one of `names` (a NULL-terminated list); *out is its index. */
static dintattn_result dintattn__cfg_enum(const dintattn__json *j, const char *key, int def,
                                          const char *const *names, int *out, dintattn_error *err)
{
    const dintattn__jnode *n = dintattn__json_get(j, &j->nodes[0], key);
    int i;
    if (!n) {
        if (def < 0) return dintattn__fail(err, DINTATTN_ERR_CONFIG, "config key '%s' is missing", key);
        *out = def;
        return DINTATTN_OK;
    }
    if (n->type == DINTATTN__JSTR)
        for (i = 0; names[i]; i++)
            if (strcmp(n->str, names[i]) == 0) {
                *out = i;
                return DINTATTN_OK;
            }
    return dintattn__fail(err, DINTATTN_ERR_CONFIG, "config key '%s' must be one of \"%s\", \"%s\"%s%s%s", key,
                          names[0], names[1], names[2] ? ", \"" : "", names[2] ? names[2] : "",
                          names[2] ? "\"" : "");
}

/* A head count of a projection: divides H (or is 0 where the projection is absent). */
static dintattn_result dintattn__cfg_heads(const dintattn__json *j, const char *key, int def, int allow_zero,
                                           int *out, dintattn_error *err, int H)
{
    dintattn_result r = dintattn__cfg_int(j, key, def, allow_zero ? 0 : 1, H, out, err);
    if (r) return r;
    if (allow_zero && *out != 0)
        return dintattn__fail(err, DINTATTN_ERR_CONFIG, "config key '%s' must be 0 for standard attention", key);
    if (*out > 0 && H % *out != 0)
        return dintattn__fail(err, DINTATTN_ERR_CONFIG, "config key '%s' = %d does not divide n_heads = %d", key,
                              *out, H);
    return DINTATTN_OK;
}

/* lambda_init: "depth" (0.8 - 0.6 exp(-0.3 l)), one number, or a list of n_layers numbers. */
static dintattn_result dintattn__cfg_lambda_init(const dintattn__json *j, dintattn_model *m, dintattn_error *err)
{
    const dintattn__jnode *n = dintattn__json_get(j, &j->nodes[0], "lambda_init");
    int l, c;
    if (!n || (n->type == DINTATTN__JSTR && strcmp(n->str, "depth") == 0)) {
        for (l = 0; l < m->cfg.n_layers; l++) m->layers[l].lambda_init = 0.8 - 0.6 * exp(-0.3 * l);
        return DINTATTN_OK;
    }
    if (n->type == DINTATTN__JNUM && fabs(n->num) < 1e300) {
        for (l = 0; l < m->cfg.n_layers; l++) m->layers[l].lambda_init = n->num;
        return DINTATTN_OK;
    }
    if (n->type == DINTATTN__JARR && n->n_children == m->cfg.n_layers) {
        for (l = 0, c = n->child; c >= 0; c = j->nodes[c].next, l++) {
            if (j->nodes[c].type != DINTATTN__JNUM || !(fabs(j->nodes[c].num) < 1e300)) break;
            m->layers[l].lambda_init = j->nodes[c].num;
        }
        if (c < 0) return DINTATTN_OK;
    }
    return dintattn__fail(err, DINTATTN_ERR_CONFIG,
                          "config key 'lambda_init' must be \"depth\", a number or a list of n_layers = %d numbers",
                          m->cfg.n_layers);
}

static const char *const dintattn__attention_names[] = {"standard", "diff", "dint", NULL};
static const char *const dintattn__integral_names[] = {"softmax", "mean", NULL};
static const char *const dintattn__rope_names[] = {"interleaved", "halves", "none", NULL};
static const char *const dintattn__norm_names[] = {"rms", "group", NULL};
static const char *const dintattn__scale_names[] = {"none", "one_minus_lambda_init", NULL};
static const char *const dintattn__ffn_names[] = {"silu", "polynorm", NULL};

/* Reads the sizes and head counts; everything else depends on them. */
static dintattn_result dintattn__read_sizes(const dintattn__json *j, dintattn_config *c, dintattn_error *err)
{
    dintattn_result r;
    int attn, diff, H;
    if ((r = dintattn__cfg_int(j, "dim", -1, 1, DINTATTN__MAX_DIM, &c->dim, err)) ||
        (r = dintattn__cfg_int(j, "n_layers", -1, 1, DINTATTN__MAX_LAYERS, &c->n_layers, err)) ||
        (r = dintattn__cfg_int(j, "vocab_size", -1, 1, DINTATTN__MAX_DIM, &c->vocab_size, err)) ||
        (r = dintattn__cfg_int(j, "hidden_dim", -1, 1, DINTATTN__MAX_DIM, &c->hidden_dim, err)) ||
        (r = dintattn__cfg_int(j, "max_seq_len", -1, 1, DINTATTN__MAX_DIM, &c->max_seq_len, err)) ||
        (r = dintattn__cfg_int(j, "n_heads", -1, 1, DINTATTN__MAX_DIM, &c->n_heads, err)) ||
        (r = dintattn__cfg_int(j, "head_dim", -1, 1, DINTATTN__MAX_DIM, &c->head_dim, err)) ||
        (r = dintattn__cfg_enum(j, "attention", -1, dintattn__attention_names, &attn, err)))
        return r;
    c->attention = (dintattn_attention)attn;
    diff = c->attention != DINTATTN_ATTN_STANDARD;
    H = c->n_heads;
    if ((r = dintattn__cfg_int(j, "v_head_dim", diff ? 2 * c->head_dim : c->head_dim, 1, DINTATTN__MAX_DIM,
                               &c->v_head_dim, err)) ||
        (r = dintattn__cfg_heads(j, "n_k1_heads", H, 0, &c->n_k1_heads, err, H)) ||
        (r = dintattn__cfg_heads(j, "n_q2_heads", diff ? H : 0, !diff, &c->n_q2_heads, err, H)) ||
        (r = dintattn__cfg_heads(j, "n_k2_heads", diff ? H : 0, !diff, &c->n_k2_heads, err, H)) ||
        (r = dintattn__cfg_heads(j, "n_v_heads", H, 0, &c->n_v_heads, err, H)) ||
        (r = dintattn__cfg_int(j, "qk_rank", 0, 0, DINTATTN__MAX_DIM, &c->qk_rank, err)))
        return r;
    return DINTATTN_OK;
}

static dintattn_result dintattn__read_config(dintattn_model *m, dintattn_error *err)
{
    const dintattn__json *j = &m->file.config;
    dintattn_config *c = &m->cfg;
    dintattn_result r;
    int integral, norm_type, scale, rope, ffn, diff;
    if ((r = dintattn__read_sizes(j, c, err))) return r;
    diff = c->attention != DINTATTN_ATTN_STANDARD;
    /* SPEC.md: keys a model does not use are ignored; those it uses must be legal */
    integral = norm_type = 0;
    c->rope_theta = 10000.0;
    if ((r = dintattn__cfg_bool(j, "head_norm", diff, &c->head_norm, err)) ||
        (r = dintattn__cfg_enum(j, "head_scale", c->attention == DINTATTN_ATTN_DIFF, dintattn__scale_names,
                                &scale, err)) ||
        (r = dintattn__cfg_enum(j, "rope", 0, dintattn__rope_names, &rope, err)) ||
        (r = dintattn__cfg_num(j, "norm_eps", 1e-5, 0.0, &c->norm_eps, err)) ||
        (r = dintattn__cfg_num(j, "head_norm_eps", c->norm_eps, 0.0, &c->head_norm_eps, err)) ||
        (r = dintattn__cfg_enum(j, "ffn_act", 0, dintattn__ffn_names, &ffn, err)) ||
        (r = dintattn__cfg_bool(j, "tie_embeddings", 0, &c->tie_embeddings, err)))
        return r;
    if ((c->attention == DINTATTN_ATTN_DINT &&
         (r = dintattn__cfg_enum(j, "integral", 0, dintattn__integral_names, &integral, err))) ||
        (c->head_norm && (r = dintattn__cfg_enum(j, "head_norm_type", 0, dintattn__norm_names, &norm_type, err))) ||
        (rope != DINTATTN_ROPE_NONE &&
         (r = dintattn__cfg_num(j, "rope_theta", 10000.0, 1e-300, &c->rope_theta, err))))
        return r;
    c->integral = (dintattn_integral)integral;
    c->head_norm_type = (dintattn_head_norm_type)norm_type;
    c->head_scale = scale;
    c->rope = (dintattn_rope)rope;
    c->ffn_act = (dintattn_ffn_act)ffn;
    if (c->rope != DINTATTN_ROPE_NONE && c->head_dim % 2)
        return dintattn__fail(err, DINTATTN_ERR_CONFIG, "config: rope needs an even head_dim, got %d", c->head_dim);
    m->layers = (dintattn__layer *)dintattn__calloc((size_t)c->n_layers, sizeof *m->layers);
    if (!m->layers) return dintattn__fail(err, DINTATTN_ERR_NOMEM, "out of memory for %d layers", c->n_layers);
    return dintattn__cfg_lambda_init(j, m, err);
}

/* --- tensors ----------------------------------------------------------------------------- */

/* Binds tensors in two passes: the first checks every name, shape and dtype (and marks the
   tensors used so that unknown ones can be refused); the second converts to f32. */
typedef struct dintattn__binder {
    dintattn_model *m;
    int convert;
    int check_finite;         /* the first pass refuses NaN and infinite weights */
    dintattn_error *err;
} dintattn__binder;

/* A zeroed array of n elements of `size` bytes that the model frees. */
static void *dintattn__own(dintattn_model *m, size_t n, size_t size)
{
    void *p;
    if (m->n_owned == m->cap_owned) {
        int cap = m->cap_owned ? 2 * m->cap_owned : 64;
        void **grown = (void **)dintattn__alloc(sizeof *grown * (size_t)cap);
        if (!grown) return NULL;
        if (m->n_owned) memcpy(grown, m->owned, sizeof *grown * (size_t)m->n_owned);
        DINTATTN_FREE(m->owned);
        m->owned = grown;
        m->cap_owned = cap;
    }
    p = dintattn__calloc(n, size);
    if (p) {
        m->owned[m->n_owned++] = p;
        m->owned_bytes += n * size;
    }
    return p;
}

static int dintattn__host_is_le(void)
{
    const uint16_t one = 1;
    return *(const unsigned char *)&one == 1;
}

/* Finds and checks `name` of shape [rows] (cols == 0) or [rows, cols]; alt_rows, if > 0, is a
   second legal first dimension. Sets *alt when the tensor has it. On the first pass it also marks
   the tensor used and (with check_finite) scans it for NaN and infinity. */
static dintattn_result dintattn__check(dintattn__binder *b, const char *name, int64_t rows, int64_t cols,
                                       int64_t alt_rows, dintattn__tensor **out, int *alt)
{
    dintattn__tensor *t = dintattn__find(&b->m->file, name);
    int ndim = cols ? 2 : 1;
    size_t n, i;
    if (!t) return dintattn__fail(b->err, DINTATTN_ERR_MISSING_TENSOR, "tensor '%s' is missing", name);
    if (t->dtype == DINTATTN__U8 || t->dtype == DINTATTN__I8)
        return dintattn__fail(b->err, DINTATTN_ERR_DTYPE, "tensor '%s' is %s, expected F32, F16 or BF16%s", name,
                              t->dtype == DINTATTN__U8 ? "U8" : "I8",
                              t->dtype == DINTATTN__I8 ? " (only weight matrices may be Q8)" : "");
    if (t->ndim != ndim || (t->shape[0] != rows && (alt_rows <= 0 || t->shape[0] != alt_rows)) ||
        (cols && t->shape[1] != cols)) {
        if (cols)
            return dintattn__fail(b->err, DINTATTN_ERR_SHAPE, "tensor '%s' must have shape [%lld, %lld]", name,
                                  (long long)rows, (long long)cols);
        if (alt_rows > 0)
            return dintattn__fail(b->err, DINTATTN_ERR_SHAPE, "tensor '%s' must have shape [%lld] or [%lld]", name,
                                  (long long)rows, (long long)alt_rows);
        return dintattn__fail(b->err, DINTATTN_ERR_SHAPE, "tensor '%s' must have shape [%lld]", name,
                              (long long)rows);
    }
    t->used = 1;
    if (alt) *alt = alt_rows > 0 && t->shape[0] == alt_rows;
    *out = t;
    n = (size_t)t->shape[0] * (size_t)(cols ? cols : 1);
    if (!b->convert && b->check_finite)
        for (i = 0; i < n; i++) {
            float v = dintattn__elem(t, i);
            if (!(v - v == 0)) /* NaN or +-infinity */
                return dintattn__fail(b->err, DINTATTN_ERR_NONFINITE, "tensor '%s' element %lu is %s", name,
                                      (unsigned long)i, v != v ? "NaN" : "infinite");
        }
    return DINTATTN_OK;
}

/* 1 if tensor t can be read in place as an array of its dtype on this host. */
static int dintattn__in_place(const dintattn__tensor *t)
{
    size_t size = dintattn__dtype_size(t->dtype);
    return dintattn__host_is_le() && (uintptr_t)t->data % size == 0;
}

/* Binds a vector or small matrix as f32: in place if it is F32, else a converted copy. */
static dintattn_result dintattn__bind(dintattn__binder *b, const char *name, int64_t rows, int64_t cols,
                                      int64_t alt_rows, const float **dst, int *alt)
{
    dintattn__tensor *t;
    dintattn_result e;
    size_t n, i;
    float *p;
    if ((e = dintattn__check(b, name, rows, cols, alt_rows, &t, alt)) || !b->convert) return e;
    if (t->dtype == DINTATTN__F32 && dintattn__in_place(t)) {
        *dst = (const float *)(const void *)t->data;
        return DINTATTN_OK;
    }
    n = (size_t)t->shape[0] * (size_t)(cols ? cols : 1);
    p = (float *)dintattn__own(b->m, n, sizeof(float));
    if (!p) return dintattn__fail(b->err, DINTATTN_ERR_NOMEM, "out of memory converting '%s'", name);
    for (i = 0; i < n; i++) p[i] = dintattn__elem(t, i);
    *dst = p;
    return DINTATTN_OK;
}

/* Binds a small matrix as a double copy (Shared-DIFF's up factors). */
static dintattn_result dintattn__bind_f64(dintattn__binder *b, const char *name, int64_t rows, int64_t cols,
                                          const double **dst)
{
    dintattn__tensor *t;
    dintattn_result e;
    size_t n = (size_t)rows * (size_t)cols, i;
    double *p;
    if ((e = dintattn__check(b, name, rows, cols, 0, &t, NULL)) || !b->convert) return e;
    p = (double *)dintattn__own(b->m, n, sizeof(double));
    if (!p) return dintattn__fail(b->err, DINTATTN_ERR_NOMEM, "out of memory converting '%s'", name);
    for (i = 0; i < n; i++) p[i] = dintattn__elem(t, i);
    *dst = p;
    return DINTATTN_OK;
}

/* f32 -> bf16, rounding to nearest even (NaN stays a quiet NaN). */
static uint16_t dintattn__f32_to_bf16(float f)
{
    uint32_t u;
    memcpy(&u, &f, 4);
    if ((u & 0x7FFFFFFFu) > 0x7F800000u) return (uint16_t)((u >> 16) | 0x40);
    return (uint16_t)((u + 0x7FFFu + ((u >> 16) & 1)) >> 16);
}

/* One Q8 block: scale = max|v| / 127, q = round(v / scale). A block holding NaN or infinity gets
   a NaN scale, so that it poisons its outputs as the original weights would. */
static void dintattn__quantize_block(const float *v, signed char *q, float *scale)
{
    float amax = 0, inv;
    int i;
    for (i = 0; i < 32; i++) {
        float a = fabsf(v[i]);
        if (!(a - a == 0)) { /* NaN or infinite */
            memset(q, 0, 32);
            *scale = NAN;
            return;
        }
        if (a > amax) amax = a;
    }
    *scale = amax / 127.0f;
    inv = amax > 0 ? 127.0f / amax : 0.0f;
    if (!(inv - inv == 0)) inv = 0.0f; /* max|w| so small (< 2^-120) that 127 / max overflows: q = 0 */
    for (i = 0; i < 32; i++) {
        float r = rintf(v[i] * inv);
        q[i] = (signed char)(r > 127.0f ? 127 : r < -127.0f ? -127 : r);
    }
}

/* out[0..n) = elements i.. of tensor t (or of src when t is NULL), as f32: whole spans at a time
   when the data can be read in place, so that converting a large model takes a moment. */
static void dintattn__span(const dintattn__tensor *t, const double *src, size_t i, size_t n, float *out)
{
    size_t k;
    if (!t) {
        for (k = 0; k < n; k++) out[k] = (float)src[i + k];
    } else if (dintattn__in_place(t) && t->dtype == DINTATTN__F32) {
        memcpy(out, (const float *)(const void *)t->data + i, n * sizeof(float));
    } else if (dintattn__in_place(t) && t->dtype == DINTATTN__BF16) {
        const uint16_t *h = (const uint16_t *)(const void *)t->data + i;
        for (k = 0; k < n; k++) {
            uint32_t bits = (uint32_t)h[k] << 16;
            memcpy(out + k, &bits, 4);
        }
    } else {
        for (k = 0; k < n; k++) out[k] = dintattn__elem(t, i + k);
    }
}

/* Fills M ([rows, cols] set) from tensor t, or from src when t is NULL, in the precision `want`
   (a dintattn_weights; FILE means f32 for src). */
static dintattn_result dintattn__make_mat(dintattn__binder *b, const dintattn__tensor *t, const double *src,
                                          const char *name, int want, dintattn__mat *M)
{
    const size_t rows = (size_t)M->rows, cols = (size_t)M->cols, n = rows * cols;
    size_t i, k, span;
    float v[1024];
    if (want == DINTATTN_WEIGHTS_Q8 && cols % 32 != 0) want = DINTATTN_WEIGHTS_FILE;
    if (t && dintattn__in_place(t) && (want == DINTATTN_WEIGHTS_FILE || (want == DINTATTN_WEIGHTS_F32 && t->dtype == DINTATTN__F32) ||
                                  (want == DINTATTN_WEIGHTS_BF16 && t->dtype == DINTATTN__BF16))) {
        M->w = t->data;
        M->type = t->dtype == DINTATTN__F32 ? DINTATTN__W_F32 : t->dtype == DINTATTN__F16 ? DINTATTN__W_F16 : DINTATTN__W_BF16;
        return DINTATTN_OK;
    }
    if (want == DINTATTN_WEIGHTS_BF16) {
        uint16_t *p = (uint16_t *)dintattn__own(b->m, n, sizeof(uint16_t));
        if (!p) goto nomem;
        for (i = 0; i < n; i += span) {
            span = n - i < 1024 ? n - i : 1024;
            dintattn__span(t, src, i, span, v);
            for (k = 0; k < span; k++) p[i + k] = dintattn__f32_to_bf16(v[k]);
        }
        M->w = p;
        M->type = DINTATTN__W_BF16;
    } else if (want == DINTATTN_WEIGHTS_Q8) {
        signed char *q = (signed char *)dintattn__own(b->m, n, 1);
        float *sc = (float *)dintattn__own(b->m, n / 32, sizeof(float));
        if (!q || !sc) goto nomem;
        for (i = 0; i < n; i += span) {
            span = n - i < 1024 ? n - i : 1024; /* n is a multiple of 32, so is span */
            dintattn__span(t, src, i, span, v);
            for (k = 0; k < span; k += 32) dintattn__quantize_block(v + k, q + i + k, sc + (i + k) / 32);
        }
        M->w = q;
        M->scale = sc;
        M->type = DINTATTN__W_Q8;
    } else {
        float *p = (float *)dintattn__own(b->m, n, sizeof(float));
        if (!p) goto nomem;
        dintattn__span(t, src, 0, n, p);
        M->w = p;
        M->type = DINTATTN__W_F32;
    }
    return DINTATTN_OK;
nomem:
    return dintattn__fail(b->err, DINTATTN_ERR_NOMEM, "out of memory converting '%s'", name);
}

/* A matrix stored as Q8 (README, "Weights in 8 bits"): I8 `name` (t) [rows, cols] with cols a
   multiple of 32, and F32 `name.scale` [rows, cols / 32]. Checks both, marks them used and sets
   *sc to the scales. */
static dintattn_result dintattn__check_q8(dintattn__binder *b, dintattn__tensor *t, const char *name, int64_t rows,
                                          int64_t cols, dintattn__tensor **sc)
{
    char sname[112];
    dintattn__tensor *s;
    size_t n, i;
    if (t->ndim != 2 || t->shape[0] != rows || t->shape[1] != cols)
        return dintattn__fail(b->err, DINTATTN_ERR_SHAPE, "tensor '%s' must have shape [%lld, %lld]", name,
                              (long long)rows, (long long)cols);
    if (cols % 32 != 0)
        return dintattn__fail(b->err, DINTATTN_ERR_SHAPE,
                              "tensor '%s' is I8 (Q8) but its rows (%lld) are not a multiple of 32 long", name,
                              (long long)cols);
    snprintf(sname, sizeof sname, "%s.scale", name);
    s = dintattn__find(&b->m->file, sname);
    if (!s) return dintattn__fail(b->err, DINTATTN_ERR_MISSING_TENSOR, "tensor '%s' (the scales of I8 '%s') is missing", sname, name);
    if (s->dtype != DINTATTN__F32) return dintattn__fail(b->err, DINTATTN_ERR_DTYPE, "tensor '%s' must be F32", sname);
    if (s->ndim != 2 || s->shape[0] != rows || s->shape[1] != cols / 32)
        return dintattn__fail(b->err, DINTATTN_ERR_SHAPE, "tensor '%s' must have shape [%lld, %lld]", sname,
                              (long long)rows, (long long)(cols / 32));
    t->used = s->used = 1;
    *sc = s;
    n = (size_t)rows * (size_t)(cols / 32);
    if (!b->convert && b->check_finite)
        for (i = 0; i < n; i++) {
            float v = dintattn__elem(s, i);
            if (!(v - v == 0))
                return dintattn__fail(b->err, DINTATTN_ERR_NONFINITE, "tensor '%s' element %lu is %s", sname,
                                      (unsigned long)i, v != v ? "NaN" : "infinite");
        }
    return DINTATTN_OK;
}

/* M (rows, cols set) from a Q8 file matrix: read in place for FILE and Q8, else dequantized into
   the precision asked for. */
static dintattn_result dintattn__make_q8_mat(dintattn__binder *b, const dintattn__tensor *t,
                                             const dintattn__tensor *sc, const char *name, dintattn__mat *M)
{
    const size_t n = (size_t)M->rows * (size_t)M->cols;
    const int want = b->m->weights;
    dintattn__mat view = *M;
    size_t i;
    view.w = t->data;
    view.type = DINTATTN__W_Q8;
    if (dintattn__in_place(sc)) {
        view.scale = (const float *)(const void *)sc->data;
    } else {
        float *p = (float *)dintattn__own(b->m, n / 32, sizeof(float));
        if (!p) goto nomem;
        dintattn__span(sc, NULL, 0, n / 32, p);
        view.scale = p;
    }
    if (want == DINTATTN_WEIGHTS_FILE || want == DINTATTN_WEIGHTS_Q8) {
        *M = view;
    } else if (want == DINTATTN_WEIGHTS_BF16) {
        uint16_t *p = (uint16_t *)dintattn__own(b->m, n, sizeof(uint16_t));
        if (!p) goto nomem;
        for (i = 0; i < n; i++) p[i] = dintattn__f32_to_bf16(dintattn__w_elem(&view, i));
        M->w = p;
        M->type = DINTATTN__W_BF16;
    } else {
        float *p = (float *)dintattn__own(b->m, n, sizeof(float));
        if (!p) goto nomem;
        dintattn__mat_rows(&view, 0, M->rows, p, NULL);
        M->w = p;
        M->type = DINTATTN__W_F32;
    }
    return DINTATTN_OK;
nomem:
    return dintattn__fail(b->err, DINTATTN_ERR_NOMEM, "out of memory converting '%s'", name);
}

/* Binds weight matrix `name` [rows, cols] in the model's weight precision. */
static dintattn_result dintattn__bind_mat(dintattn__binder *b, const char *name, int64_t rows, int64_t cols,
                                          dintattn__mat *M)
{
    dintattn__tensor *t = dintattn__find(&b->m->file, name), *sc = NULL;
    dintattn_result e;
    if (t && t->dtype == DINTATTN__I8) {
        if ((e = dintattn__check_q8(b, t, name, rows, cols, &sc)) || !b->convert) return e;
    } else if ((e = dintattn__check(b, name, rows, cols, 0, &t, NULL)) || !b->convert) {
        return e;
    }
    memset(M, 0, sizeof *M);
    M->rows = (int)rows;
    M->cols = (int)cols;
    if (sc) return dintattn__make_q8_mat(b, t, sc, name, M);
    return dintattn__make_mat(b, t, NULL, name, b->m->weights, M);
}

static dintattn_result dintattn__bind_lmat(dintattn__binder *b, int l, const char *what, int64_t rows,
                                           int64_t cols, dintattn__mat *M)
{
    char name[96];
    snprintf(name, sizeof name, "layers.%d.%s", l, what);
    return dintattn__bind_mat(b, name, rows, cols, M);
}

static dintattn_result dintattn__bind_lf(dintattn__binder *b, int l, const char *what, int64_t rows,
                                         int64_t cols, const float **dst)
{
    char name[96];
    snprintf(name, sizeof name, "layers.%d.%s", l, what);
    return dintattn__bind(b, name, rows, cols, 0, dst, NULL);
}

static dintattn_result dintattn__bind_l64(dintattn__binder *b, int l, const char *what, int64_t rows,
                                          int64_t cols, const double **dst)
{
    char name[96];
    snprintf(name, sizeof name, "layers.%d.%s", l, what);
    return dintattn__bind_f64(b, name, rows, cols, dst);
}

/* Q/K weights of one layer: dense, or Shared-DIFF base + per-head factors. */
static dintattn_result dintattn__bind_qk(dintattn__binder *b, int l)
{
    const dintattn_config *c = &b->m->cfg;
    dintattn__layer *L = &b->m->layers[l];
    int64_t D = c->dim, d = c->head_dim, r = c->qk_rank;
    int diff = c->attention != DINTATTN_ATTN_STANDARD;
    dintattn_result e;
    if (r == 0) {
        if ((e = dintattn__bind_lmat(b, l, "attn.wq1", c->n_heads * d, D, &L->wq1)) ||
            (e = dintattn__bind_lmat(b, l, "attn.wk1", c->n_k1_heads * d, D, &L->wk1)))
            return e;
        if (!diff) return DINTATTN_OK;
        if ((e = dintattn__bind_lmat(b, l, "attn.wq2", c->n_q2_heads * d, D, &L->wq2)) ||
            (e = dintattn__bind_lmat(b, l, "attn.wk2", c->n_k2_heads * d, D, &L->wk2)))
            return e;
        return DINTATTN_OK;
    }
    if ((e = dintattn__bind_lmat(b, l, "attn.q_base", d, D, &L->q_base)) ||
        (e = dintattn__bind_lmat(b, l, "attn.k_base", d, D, &L->k_base)) ||
        (e = dintattn__bind_lmat(b, l, "attn.q1_down", c->n_heads * r, D, &L->q1_down)) ||
        (e = dintattn__bind_l64(b, l, "attn.q1_up", c->n_heads * d, r, &L->q1_up)) ||
        (e = dintattn__bind_lmat(b, l, "attn.k1_down", c->n_k1_heads * r, D, &L->k1_down)) ||
        (e = dintattn__bind_l64(b, l, "attn.k1_up", c->n_k1_heads * d, r, &L->k1_up)))
        return e;
    if (!diff) return DINTATTN_OK;
    if ((e = dintattn__bind_lmat(b, l, "attn.q2_down", c->n_q2_heads * r, D, &L->q2_down)) ||
        (e = dintattn__bind_l64(b, l, "attn.q2_up", c->n_q2_heads * d, r, &L->q2_up)) ||
        (e = dintattn__bind_lmat(b, l, "attn.k2_down", c->n_k2_heads * r, D, &L->k2_down)) ||
        (e = dintattn__bind_l64(b, l, "attn.k2_up", c->n_k2_heads * d, r, &L->k2_up)))
        return e;
    return DINTATTN_OK;
}

static dintattn_result dintattn__bind_layer(dintattn__binder *b, int l)
{
    const dintattn_config *c = &b->m->cfg;
    dintattn__layer *L = &b->m->layers[l];
    int64_t D = c->dim, d = c->head_dim, dv = c->v_head_dim, F = c->hidden_dim;
    dintattn_result e;
    char name[96];
    if ((e = dintattn__bind_lf(b, l, "attn_norm.weight", D, 0, &L->attn_norm)) ||
        (e = dintattn__bind_lf(b, l, "ffn_norm.weight", D, 0, &L->ffn_norm)) || (e = dintattn__bind_qk(b, l)) ||
        (e = dintattn__bind_lmat(b, l, "attn.wv", c->n_v_heads * dv, D, &L->wv)) ||
        (e = dintattn__bind_lmat(b, l, "attn.wo", D, c->n_heads * dv, &L->wo)) ||
        (e = dintattn__bind_lmat(b, l, "ffn.w_gate", F, D, &L->w_gate)) ||
        (e = dintattn__bind_lmat(b, l, "ffn.w_up", F, D, &L->w_up)) ||
        (e = dintattn__bind_lmat(b, l, "ffn.w_down", D, F, &L->w_down)))
        return e;
    if (c->attention != DINTATTN_ATTN_STANDARD &&
        ((e = dintattn__bind_lf(b, l, "attn.lambda_q1", d, 0, &L->lambda_q1)) ||
         (e = dintattn__bind_lf(b, l, "attn.lambda_k1", d, 0, &L->lambda_k1)) ||
         (e = dintattn__bind_lf(b, l, "attn.lambda_q2", d, 0, &L->lambda_q2)) ||
         (e = dintattn__bind_lf(b, l, "attn.lambda_k2", d, 0, &L->lambda_k2))))
        return e;
    if (c->head_norm) {
        int wide_b = 0;
        snprintf(name, sizeof name, "layers.%d.attn.head_norm.weight", l);
        if ((e = dintattn__bind(b, name, dv, 0, (int64_t)c->n_heads * dv, &L->head_norm_w, &L->head_norm_per_head)))
            return e;
        if (c->head_norm_type == DINTATTN_HEADNORM_GROUP) {
            snprintf(name, sizeof name, "layers.%d.attn.head_norm.bias", l);
            /* the bias has the weight's shape: both shared or both per head */
            if ((e = dintattn__bind(b, name, L->head_norm_per_head ? (int64_t)c->n_heads * dv : dv, 0, 0,
                                    &L->head_norm_b, &wide_b)))
                return e;
        }
    }
    if (c->ffn_act == DINTATTN_FFN_POLYNORM &&
        ((e = dintattn__bind_lf(b, l, "ffn.act_weight", 3, 0, &L->act_weight)) ||
         (e = dintattn__bind_lf(b, l, "ffn.act_bias", 1, 0, &L->act_bias))))
        return e;
    return DINTATTN_OK;
}

static dintattn_result dintattn__bind_all(dintattn__binder *b)
{
    const dintattn_config *c = &b->m->cfg;
    dintattn_result e;
    int l;
    if ((e = dintattn__bind_mat(b, "tok_embeddings.weight", c->vocab_size, c->dim, &b->m->tok_embeddings)) ||
        (e = dintattn__bind(b, "norm.weight", c->dim, 0, 0, &b->m->norm, NULL)))
        return e;
    if (!c->tie_embeddings &&
        (e = dintattn__bind_mat(b, "output.weight", c->vocab_size, c->dim, &b->m->output)))
        return e;
    for (l = 0; l < c->n_layers; l++)
        if ((e = dintattn__bind_layer(b, l))) return e;
    if (c->tie_embeddings) b->m->output = b->m->tok_embeddings;
    return DINTATTN_OK;
}

/* The tokenizer a file may carry: tensor "tokenizer.ranks" (U8 [n], a tiktoken rank file) and
   metadata "tokenizer", a JSON object {"type": "tiktoken", "pattern": "cl100k",
   "special_tokens": {"<|endoftext|>": id, ...}, "bos_id": id, "eos_id": id} (ids -1 = none). */
static dintattn_result dintattn__read_tokenizer(dintattn_model *m, dintattn_error *err)
{
    dintattn__file *f = &m->file;
    const dintattn__jnode *meta = NULL, *root, *type, *pat, *spec, *n;
    dintattn__tensor *t = dintattn__find(f, "tokenizer.ranks");
    const dintattn__json *j = &f->tokenizer;
    int c, k;
    m->bos_id = m->eos_id = -1;
    if (t) {
        if (t->dtype != DINTATTN__U8 || t->ndim != 1)
            return dintattn__fail(err, DINTATTN_ERR_SHAPE, "tensor 'tokenizer.ranks' must be U8 of shape [bytes]");
        t->used = 1;
        m->tok_ranks = t->data;
        m->tok_ranks_size = t->end - t->begin;
    }
    for (c = f->header.nodes[0].child; c >= 0; c = f->header.nodes[c].next)
        if (strcmp(f->header.nodes[c].key, "__metadata__") == 0) meta = dintattn__json_get(&f->header, &f->header.nodes[c], "tokenizer");
    if (!meta) return DINTATTN_OK;
    if (!t) return dintattn__fail(err, DINTATTN_ERR_METADATA, "metadata 'tokenizer' without tensor 'tokenizer.ranks'");
    if (dintattn__json_parse(&f->tokenizer, meta->str, meta->str_len) < 0)
        return dintattn__fail(err, f->tokenizer.nomem ? DINTATTN_ERR_NOMEM : DINTATTN_ERR_METADATA,
                              "metadata 'tokenizer': %s", f->tokenizer.err);
    root = &j->nodes[0];
    type = dintattn__json_get(j, root, "type");
    pat = dintattn__json_get(j, root, "pattern");
    spec = dintattn__json_get(j, root, "special_tokens");
    if (root->type != DINTATTN__JOBJ || !type || type->type != DINTATTN__JSTR || strcmp(type->str, "tiktoken") != 0)
        return dintattn__fail(err, DINTATTN_ERR_METADATA, "metadata 'tokenizer': \"type\" must be \"tiktoken\"");
    if (pat && (pat->type != DINTATTN__JSTR || strcmp(pat->str, "cl100k") != 0))
        return dintattn__fail(err, DINTATTN_ERR_METADATA, "metadata 'tokenizer': \"pattern\" must be \"cl100k\"");
    if (spec && spec->type != DINTATTN__JOBJ)
        return dintattn__fail(err, DINTATTN_ERR_METADATA, "metadata 'tokenizer': \"special_tokens\" must be an object");
    m->n_special = spec ? spec->n_children : 0;
    m->special_text = (const char **)dintattn__calloc((size_t)m->n_special + 1, sizeof *m->special_text);
    m->special_ids = (int *)dintattn__calloc((size_t)m->n_special + 1, sizeof *m->special_ids);
    if (!m->special_text || !m->special_ids) return dintattn__fail(err, DINTATTN_ERR_NOMEM, "out of memory");
    for (k = 0, c = spec ? spec->child : -1; c >= 0; c = j->nodes[c].next, k++) {
        n = &j->nodes[c];
        if (n->type != DINTATTN__JNUM || !n->is_int || n->ival < 0 || n->ival >= m->cfg.vocab_size || !n->key[0])
            return dintattn__fail(err, DINTATTN_ERR_METADATA,
                                  "metadata 'tokenizer': special token '%.60s' needs an id in [0, vocab_size)", n->key);
        m->special_text[k] = n->key;
        m->special_ids[k] = (int)n->ival;
    }
    for (k = 0; k < 2; k++) {
        const char *key = k ? "eos_id" : "bos_id";
        int *dst = k ? &m->eos_id : &m->bos_id;
        n = dintattn__json_get(j, root, key);
        if (!n) continue;
        if (n->type != DINTATTN__JNUM || !n->is_int || n->ival < -1 || n->ival >= m->cfg.vocab_size)
            return dintattn__fail(err, DINTATTN_ERR_METADATA, "metadata 'tokenizer': '%s' must be -1 or a token id",
                                  key);
        *dst = (int)n->ival;
    }
    return DINTATTN_OK;
}

static dintattn_result dintattn__refuse_unknown(dintattn_model *m, dintattn_error *err)
{
    int i;
    for (i = 0; i < m->file.n_tensors; i++) {
        const dintattn__tensor *t = &m->file.tensors[i];
        if (!t->used)
            return dintattn__fail(err, DINTATTN_ERR_UNKNOWN_TENSOR,
                                  "tensor '%.120s' is not used by this config (attention, qk_rank, head_norm, "
                                  "ffn_act, tie_embeddings)",
                                  t->name);
    }
    return DINTATTN_OK;
}

/* lambda = exp(lambda_q1 . lambda_k1) - exp(lambda_q2 . lambda_k2) + lambda_init, per layer. */
static void dintattn__compute_lambdas(dintattn_model *m)
{
    int l, k;
    for (l = 0; l < m->cfg.n_layers; l++) {
        dintattn__layer *L = &m->layers[l];
        double d1 = 0, d2 = 0;
        if (m->cfg.attention == DINTATTN_ATTN_STANDARD) {
            L->lambda = 0;
            continue;
        }
        for (k = 0; k < m->cfg.head_dim; k++) {
            d1 += (double)L->lambda_q1[k] * L->lambda_k1[k];
            d2 += (double)L->lambda_q2[k] * L->lambda_k2[k];
        }
        L->lambda = exp(d1) - exp(d2) + L->lambda_init;
    }
}

/* FLOPs per token of the Q/K projections, factored (1) or merged dense (0). */
static double dintattn__qk_cost(const dintattn_config *c, int factored)
{
    double D = c->dim, d = c->head_dim, r = c->qk_rank;
    double nq = c->n_heads + c->n_q2_heads, nk = c->n_k1_heads + c->n_k2_heads;
    if (!factored) return (nq + nk) * d * D;
    return 2 * d * D + (nq + nk) * r * (D + d);
}

/* Merges one projection's factors, W[h] = base + up[h] @ down[h] for h < heads, in double, into
   W (held in the model's weight precision, f32 for FILE). */
static dintattn_result dintattn__merge(dintattn__binder *b, const dintattn__mat *base, const dintattn__mat *down,
                                       const double *up, int heads, dintattn__mat *W)
{
    const dintattn_config *c = &b->m->cfg;
    int D = c->dim, d = c->head_dim, r = c->qk_rank, h;
    size_t per = (size_t)d * D;
    double *w = (double *)dintattn__calloc((size_t)heads * per + (size_t)r * D, sizeof(double)), *dn;
    dintattn_result e;
    if (!w) return dintattn__fail(b->err, DINTATTN_ERR_NOMEM, "out of memory merging Shared-DIFF factors");
    dn = w + (size_t)heads * per;
    for (h = 0; h < heads; h++) {
        double *wh = w + (size_t)h * per;
        dintattn__mat_rows(base, 0, d, NULL, wh);
        dintattn__mat_rows(down, h * r, r, NULL, dn);
        cblas_dgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, d, D, r, 1.0, up + (size_t)h * d * r, r, dn, D, 1.0,
                    wh, D);
    }
    memset(W, 0, sizeof *W);
    W->rows = heads * d;
    W->cols = D;
    e = dintattn__make_mat(b, NULL, w, "merged Q/K", b->m->weights, W);
    DINTATTN_FREE(w);
    return e;
}

static dintattn_result dintattn__merge_qk(dintattn__binder *b)
{
    const dintattn_config *c = &b->m->cfg;
    dintattn_result e;
    int l;
    for (l = 0; l < c->n_layers; l++) {
        dintattn__layer *L = &b->m->layers[l];
        if ((e = dintattn__merge(b, &L->q_base, &L->q1_down, L->q1_up, c->n_heads, &L->wq1)) ||
            (e = dintattn__merge(b, &L->k_base, &L->k1_down, L->k1_up, c->n_k1_heads, &L->wk1)))
            return e;
        if (c->attention != DINTATTN_ATTN_STANDARD &&
            ((e = dintattn__merge(b, &L->q_base, &L->q2_down, L->q2_up, c->n_q2_heads, &L->wq2)) ||
             (e = dintattn__merge(b, &L->k_base, &L->k2_down, L->k2_up, c->n_k2_heads, &L->wk2))))
            return e;
    }
    return DINTATTN_OK;
}

static dintattn_result dintattn__model_build(dintattn_model *m, const dintattn_load_options *opt,
                                             dintattn_error *err)
{
    dintattn__binder b;
    dintattn_result r;
    dintattn_qk_form form = opt ? opt->qk_form : DINTATTN_QK_AUTO;
    if ((r = dintattn__file_parse(&m->file, err)) || (r = dintattn__read_config(m, err))) return r;
    m->weights = opt ? opt->weights : DINTATTN_WEIGHTS_FILE;
    b.m = m;
    b.err = err;
    b.convert = 0;
    b.check_finite = opt && opt->check_finite;
    if ((r = dintattn__bind_all(&b)) || (r = dintattn__read_tokenizer(m, err)) ||
        (r = dintattn__refuse_unknown(m, err)))
        return r;
    b.convert = 1;
    if ((r = dintattn__bind_all(&b))) return r;
    dintattn__compute_lambdas(m);
    if (b.check_finite) {
        int l;
        for (l = 0; l < m->cfg.n_layers; l++)
            if (!(m->layers[l].lambda - m->layers[l].lambda == 0))
                return dintattn__fail(err, DINTATTN_ERR_NONFINITE,
                                      "layer %d: lambda = exp(lambda_q1 . lambda_k1) - exp(lambda_q2 . lambda_k2) + "
                                      "lambda_init is not finite", l);
    }
    if (m->cfg.qk_rank > 0) {
        m->qk_factored = form == DINTATTN_QK_FACTORED ||
                         (form == DINTATTN_QK_AUTO && dintattn__qk_cost(&m->cfg, 1) < dintattn__qk_cost(&m->cfg, 0));
        if (!m->qk_factored && (r = dintattn__merge_qk(&b))) return r;
    }
    return DINTATTN_OK;
}

static dintattn_result dintattn__model_finish(dintattn_model *m, const dintattn_load_options *opt,
                                              dintattn_model **out, dintattn_error *err)
{
    dintattn_result r = dintattn__model_build(m, opt, err);
    if (r) {
        dintattn_model_free(m);
        return r;
    }
    *out = m;
    dintattn__ok(err);
    return DINTATTN_OK;
}

static dintattn_result dintattn__check_load_options(const dintattn_load_options *opt, dintattn_error *err)
{
    if (opt && (opt->qk_form < DINTATTN_QK_AUTO || opt->qk_form > DINTATTN_QK_MERGED))
        return dintattn__fail(err, DINTATTN_ERR_ARG, "dintattn_load_options.qk_form %d is not a dintattn_qk_form",
                              (int)opt->qk_form);
    if (opt && (opt->weights < DINTATTN_WEIGHTS_FILE || opt->weights > DINTATTN_WEIGHTS_Q8))
        return dintattn__fail(err, DINTATTN_ERR_ARG, "dintattn_load_options.weights %d is not a dintattn_weights",
                              (int)opt->weights);
    return DINTATTN_OK;
}

DINTATTN_API dintattn_result dintattn_model_load(const char *path, const dintattn_load_options *opt,
                                                 dintattn_model **out, dintattn_error *err)
{
    dintattn_model *m;
    dintattn_result r;
    if (out) *out = NULL;
    if (!out || !path) return dintattn__fail(err, DINTATTN_ERR_ARG, "dintattn_model_load: NULL argument");
    if ((r = dintattn__check_load_options(opt, err))) return r;
    m = (dintattn_model *)dintattn__calloc(1, sizeof *m);
    if (!m) return dintattn__fail(err, DINTATTN_ERR_NOMEM, "out of memory");
    if ((r = dintattn__file_map(&m->file, path, err))) {
        dintattn_model_free(m);
        return r;
    }
    return dintattn__model_finish(m, opt, out, err);
}

DINTATTN_API dintattn_result dintattn_model_load_memory(const void *data, size_t size,
                                                        const dintattn_load_options *opt,
                                                        dintattn_model **out, dintattn_error *err)
{
    dintattn_model *m;
    dintattn_result r;
    if (out) *out = NULL;
    if (!out || (!data && size)) return dintattn__fail(err, DINTATTN_ERR_ARG, "dintattn_model_load_memory: NULL argument");
    if ((r = dintattn__check_load_options(opt, err))) return r;
    m = (dintattn_model *)dintattn__calloc(1, sizeof *m);
    if (!m) return dintattn__fail(err, DINTATTN_ERR_NOMEM, "out of memory");
    m->file.bytes = (const unsigned char *)data;
    m->file.size = size;
    return dintattn__model_finish(m, opt, out, err);
}

DINTATTN_API void dintattn_model_free(dintattn_model *m)
{
    int i;
    if (!m) return;
    for (i = 0; i < m->n_owned; i++) DINTATTN_FREE(m->owned[i]);
    DINTATTN_FREE(m->owned);
    DINTATTN_FREE(m->layers);
    DINTATTN_FREE((void *)m->special_text);
    DINTATTN_FREE(m->special_ids);
    dintattn__file_close(&m->file);
    DINTATTN_FREE(m);
}

DINTATTN_API const dintattn_config *dintattn_model_config(const dintattn_model *m) { return &m->cfg; }

DINTATTN_API int dintattn_model_qk_factored(const dintattn_model *m) { return m->qk_factored; }

DINTATTN_API size_t dintattn_model_owned_bytes(const dintattn_model *m) { return m->owned_bytes; }

static size_t dintattn__mat_bytes(const dintattn__mat *M)
{
    size_t n = (size_t)M->rows * (size_t)M->cols;
    if (!M->w) return 0;
    return n * dintattn__wsize(M->type) + (M->type == DINTATTN__W_Q8 ? n / 32 * sizeof(float) : 0);
}

DINTATTN_API size_t dintattn_model_weight_bytes(const dintattn_model *m)
{
    const dintattn_config *c = &m->cfg;
    size_t sum = dintattn__mat_bytes(&m->output) + sizeof(float) * (size_t)c->dim; /* LM head, final norm */
    size_t dv = (size_t)c->v_head_dim;
    int l, k;
    sum += dintattn__mat_bytes(&m->tok_embeddings) / (size_t)c->vocab_size; /* one row */
    for (l = 0; l < c->n_layers; l++) {
        const dintattn__layer *L = &m->layers[l];
        const dintattn__mat *mats[] = {&L->wv, &L->wo, &L->w_gate, &L->w_up, &L->w_down, &L->wq1, &L->wk1,
                                       &L->wq2, &L->wk2, &L->q_base, &L->k_base, &L->q1_down, &L->k1_down,
                                       &L->q2_down, &L->k2_down};
        /* merged Shared-DIFF reads the merged matrices, not the factors (factored: wq1.. are unset) */
        for (k = 0; k < 15; k++)
            if (!(c->qk_rank > 0 && !m->qk_factored && k >= 9)) sum += dintattn__mat_bytes(mats[k]);
        if (c->qk_rank > 0 && m->qk_factored)
            sum += sizeof(double) * (size_t)(c->n_heads + c->n_k1_heads + c->n_q2_heads + c->n_k2_heads) *
                   (size_t)c->head_dim * (size_t)c->qk_rank;
        sum += sizeof(float) * 2 * (size_t)c->dim; /* attention and FFN norms */
        if (c->head_norm) sum += sizeof(float) * dv * (L->head_norm_per_head ? (size_t)c->n_heads : 1) *
                                 (c->head_norm_type == DINTATTN_HEADNORM_GROUP ? 2 : 1);
        if (c->ffn_act == DINTATTN_FFN_POLYNORM) sum += 4 * sizeof(float);
    }
    return sum;
}

/* ============================================================================================
   5. Math kernels
   ============================================================================================ */

/* out = x / sqrt(mean(x^2) + eps) * w; sums in double to match a float64 reference closely. */
static void dintattn__rmsnorm(float *out, const float *x, const float *w, int n, double eps)
{
    double ss = 0;
    float inv;
    int i;
    for (i = 0; i < n; i++) ss += (double)x[i] * x[i];
    inv = (float)(1.0 / sqrt(ss / n + eps));
    for (i = 0; i < n; i++) out[i] = x[i] * inv * w[i];
}

static void dintattn__rmsnorm_rows(float *out, const float *x, const float *w, int rows, int n, double eps)
{
    int t;
    for (t = 0; t < rows; t++) dintattn__rmsnorm(out + (size_t)t * n, x + (size_t)t * n, w, n, eps);
}

/* torch.nn.GroupNorm on one group: (x - mean) / sqrt(biased var + eps) * w + b. */
static void dintattn__groupnorm(float *x, const float *w, const float *b, int n, double eps)
{
    double mean = 0, var = 0;
    float inv, mu;
    int i;
    for (i = 0; i < n; i++) mean += x[i];
    mean /= n;
    for (i = 0; i < n; i++) var += (x[i] - mean) * (x[i] - mean);
    inv = (float)(1.0 / sqrt(var / n + eps));
    mu = (float)mean;
    for (i = 0; i < n; i++) x[i] = (x[i] - mu) * inv * w[i] + b[i];
}

static float dintattn__dot(const float *a, const float *b, int n)
{
    float s0 = 0, s1 = 0, s2 = 0, s3 = 0;
    int i = 0;
    for (; i + 4 <= n; i += 4) {
        s0 += a[i] * b[i];
        s1 += a[i + 1] * b[i + 1];
        s2 += a[i + 2] * b[i + 2];
        s3 += a[i + 3] * b[i + 3];
    }
    for (; i < n; i++) s0 += a[i] * b[i];
    return (s0 + s1) + (s2 + s3);
}

/* y += w * x over n floats. */
static void dintattn__axpy(float w, const float *x, float *y, int n)
{
    int i;
    for (i = 0; i < n; i++) y[i] += w * x[i];
}

/* --- weight matrices: rows in f32 or f64, and rows . x ---------------------------------- */

/* Portable row . x kernels: four partial sums, then the tail. */
static float dintattn__rowdot(const dintattn__mat *M, int r, const float *x)
{
    const size_t n = (size_t)M->cols, at = (size_t)r * n;
    float s0 = 0, s1 = 0, s2 = 0, s3 = 0;
    size_t i = 0;
    if (M->type == DINTATTN__W_F32) {
        const float *w = (const float *)M->w + at;
        for (; i + 4 <= n; i += 4) {
            s0 += w[i] * x[i];
            s1 += w[i + 1] * x[i + 1];
            s2 += w[i + 2] * x[i + 2];
            s3 += w[i + 3] * x[i + 3];
        }
    } else if (M->type == DINTATTN__W_Q8) { /* n is a multiple of 32 */
        const signed char *q = (const signed char *)M->w + at;
        const float *sc = M->scale + at / 32;
        for (; i < n; i += 32) {
            float b0 = 0, b1 = 0, b2 = 0, b3 = 0;
            size_t k;
            for (k = i; k < i + 32; k += 4) {
                b0 += (float)q[k] * x[k];
                b1 += (float)q[k + 1] * x[k + 1];
                b2 += (float)q[k + 2] * x[k + 2];
                b3 += (float)q[k + 3] * x[k + 3];
            }
            s0 += sc[i / 32] * ((b0 + b1) + (b2 + b3));
        }
    }
    for (; i < n; i++) s0 += dintattn__w_elem(M, at + i) * x[i];
    return (s0 + s1) + (s2 + s3);
}

static double dintattn__rowdot64(const dintattn__mat *M, int r, const float *x)
{
    const size_t n = (size_t)M->cols, at = (size_t)r * n;
    double s0 = 0, s1 = 0;
    size_t i = 0;
    if (M->type == DINTATTN__W_Q8) {
        const signed char *q = (const signed char *)M->w + at;
        for (; i < n; i += 32) {
            double b0 = 0, b1 = 0;
            size_t k;
            for (k = i; k < i + 32; k += 2) {
                b0 += q[k] * (double)x[k];
                b1 += q[k + 1] * (double)x[k + 1];
            }
            s0 += M->scale[(at + i) / 32] * (b0 + b1);
        }
    }
    for (; i + 2 <= n; i += 2) {
        s0 += (double)dintattn__w_elem(M, at + i) * x[i];
        s1 += (double)dintattn__w_elem(M, at + i + 1) * x[i + 1];
    }
    for (; i < n; i++) s0 += (double)dintattn__w_elem(M, at + i) * x[i];
    return s0 + s1;
}

/* x86 SIMD versions, chosen at run time (dintattn__simd): AVX2 + FMA + F16C for the attention loops
   and every weight type, AVX-512F for the float matrix-vector products. The portable versions
   above run everywhere else (and under DINTATTN_NO_SIMD=1). */
#if defined(__GNUC__) && (defined(__x86_64__) || defined(__i386__))
#define DINTATTN__HAVE_X86 1
#include <cpuid.h>
#include <immintrin.h>
#define DINTATTN__AVX2 __attribute__((target("avx2,fma,f16c")))
#define DINTATTN__AVX512 __attribute__((target("avx512f,avx2,fma,f16c")))

DINTATTN__AVX2 static float dintattn__hsum8(__m256 v)
{
    __m128 s = _mm_add_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
    s = _mm_add_ps(s, _mm_movehl_ps(s, s));
    s = _mm_add_ss(s, _mm_movehdup_ps(s));
    return _mm_cvtss_f32(s);
}

DINTATTN__AVX2 static float dintattn__dot_avx2(const float *a, const float *b, int n)
{
    __m256 s0 = _mm256_setzero_ps(), s1 = _mm256_setzero_ps();
    float sum;
    int i = 0;
    for (; i + 16 <= n; i += 16) {
        s0 = _mm256_fmadd_ps(_mm256_loadu_ps(a + i), _mm256_loadu_ps(b + i), s0);
        s1 = _mm256_fmadd_ps(_mm256_loadu_ps(a + i + 8), _mm256_loadu_ps(b + i + 8), s1);
    }
    for (; i + 8 <= n; i += 8) s0 = _mm256_fmadd_ps(_mm256_loadu_ps(a + i), _mm256_loadu_ps(b + i), s0);
    sum = dintattn__hsum8(_mm256_add_ps(s0, s1));
    for (; i < n; i++) sum += a[i] * b[i];
    return sum;
}

/* 8 weights from element i of a row, as f32 */
#define DINTATTN__LD8_F32(w, i) _mm256_loadu_ps((const float *)(w) + (i))
#define DINTATTN__LD8_BF16(w, i)                                                                                 \
    _mm256_castsi256_ps(_mm256_slli_epi32(                                                                       \
        _mm256_cvtepu16_epi32(_mm_loadu_si128((const __m128i *)((const uint16_t *)(w) + (i)))), 16))
#define DINTATTN__LD8_F16(w, i) _mm256_cvtph_ps(_mm_loadu_si128((const __m128i *)((const uint16_t *)(w) + (i))))
#define DINTATTN__LD8_Q8(w, i)                                                                                   \
    _mm256_cvtepi32_ps(_mm256_cvtepi8_epi32(_mm_loadl_epi64((const __m128i *)((const signed char *)(w) + (i)))))

/* Software prefetch DINTATTN__PF_DIST bytes ahead of element i of a row of ES-byte weights (the
   rows of a thread's share are contiguous, so this runs into the next row): with it the kernels
   read at the full bandwidth of a sum over the same bytes. ES = 4 needs two lines per 32. */
#define DINTATTN__PF_DIST 2048
#define DINTATTN__PF(w, i, ES)                                                                                   \
    do {                                                                                                         \
        _mm_prefetch((const char *)(w) + (size_t)(i) * (ES) + DINTATTN__PF_DIST, _MM_HINT_T0);                   \
        if ((ES) == 4) _mm_prefetch((const char *)(w) + (size_t)(i) * (ES) + DINTATTN__PF_DIST + 64, _MM_HINT_T0); \
    } while (0)

/* row . x over the first n - n % 32 elements (the caller adds the tail), for F32, BF16, F16 */
#define DINTATTN__DOT_AVX2(name, LD, ES)                                                                             \
    DINTATTN__AVX2 static float name(const void *w, const float *x, size_t n)                                    \
    {                                                                                                            \
        __m256 s0 = _mm256_setzero_ps(), s1 = s0, s2 = s0, s3 = s0;                                              \
        size_t i;                                                                                                \
        for (i = 0; i + 32 <= n; i += 32) {                                                                      \
            DINTATTN__PF(w, i, ES);                                                                            \
            s0 = _mm256_fmadd_ps(LD(w, i), _mm256_loadu_ps(x + i), s0);                                          \
            s1 = _mm256_fmadd_ps(LD(w, i + 8), _mm256_loadu_ps(x + i + 8), s1);                                  \
            s2 = _mm256_fmadd_ps(LD(w, i + 16), _mm256_loadu_ps(x + i + 16), s2);                                \
            s3 = _mm256_fmadd_ps(LD(w, i + 24), _mm256_loadu_ps(x + i + 24), s3);                                \
        }                                                                                                        \
        return dintattn__hsum8(_mm256_add_ps(_mm256_add_ps(s0, s1), _mm256_add_ps(s2, s3)));                     \
    }
DINTATTN__DOT_AVX2(dintattn__dot_f32_avx2, DINTATTN__LD8_F32, 4)
DINTATTN__DOT_AVX2(dintattn__dot_bf16_avx2, DINTATTN__LD8_BF16, 2)
DINTATTN__DOT_AVX2(dintattn__dot_f16_avx2, DINTATTN__LD8_F16, 2)

/* n weights from element `at` of M (n and at multiples of 8 for Q8, of 32) into f32 dst. */
DINTATTN__AVX2 static void dintattn__rows_avx2(const dintattn__mat *M, size_t at, size_t n, float *dst)
{
    const unsigned char *w = (const unsigned char *)M->w + at * dintattn__wsize(M->type);
    size_t i = 0;
    switch (M->type) {
    case DINTATTN__W_BF16:
        for (; i + 8 <= n; i += 8) _mm256_storeu_ps(dst + i, DINTATTN__LD8_BF16(w, i));
        break;
    case DINTATTN__W_F16:
        for (; i + 8 <= n; i += 8) _mm256_storeu_ps(dst + i, DINTATTN__LD8_F16(w, i));
        break;
    case DINTATTN__W_Q8:
        for (; i + 8 <= n; i += 8)
            _mm256_storeu_ps(dst + i, _mm256_mul_ps(DINTATTN__LD8_Q8(w, i), _mm256_set1_ps(M->scale[(at + i) / 32])));
        break;
    default:
        memcpy(dst, w, n * sizeof(float));
        i = n;
    }
    for (; i < n; i++) dst[i] = dintattn__w_elem(M, at + i);
}

/* Q8: each block of 32 summed (W lanes at a time), then scaled; two blocks in flight */
#define DINTATTN__DOT_Q8(name, ATTR, VT, W, ZERO, ADD, MUL, FMA, SET1, LDX, LDW, REDUCE)                           \
    ATTR static float name(const void *w, const float *sc, const float *x, size_t n)                           \
    {                                                                                                        \
        VT s0 = ZERO(), s1 = s0;                                                                             \
        size_t i = 0, k;                                                                                     \
        for (; i + 64 <= n; i += 64) {                                                                       \
            VT a = MUL(LDW(w, i), LDX(x + i)), b = MUL(LDW(w, i + 32), LDX(x + i + 32));                     \
            DINTATTN__PF(w, i, 1);                                                                           \
            for (k = W; k < 32; k += W) {                                                                    \
                a = FMA(LDW(w, i + k), LDX(x + i + k), a);                                                   \
                b = FMA(LDW(w, i + 32 + k), LDX(x + i + 32 + k), b);                                         \
            }                                                                                                \
            s0 = FMA(a, SET1(sc[i / 32]), s0);                                                               \
            s1 = FMA(b, SET1(sc[i / 32 + 1]), s1);                                                           \
        }                                                                                                    \
        for (; i < n; i += 32) {                                                                             \
            VT a = MUL(LDW(w, i), LDX(x + i));                                                               \
            for (k = W; k < 32; k += W) a = FMA(LDW(w, i + k), LDX(x + i + k), a);                           \
            s0 = FMA(a, SET1(sc[i / 32]), s0);                                                               \
        }                                                                                                    \
        return REDUCE(ADD(s0, s1));                                                                          \
    }
DINTATTN__DOT_Q8(dintattn__dot_q8_avx2, DINTATTN__AVX2, __m256, 8, _mm256_setzero_ps, _mm256_add_ps, _mm256_mul_ps,
                 _mm256_fmadd_ps, _mm256_set1_ps, _mm256_loadu_ps, DINTATTN__LD8_Q8, dintattn__hsum8)

/* The Q/K projections' row . x: products summed in f32 within each block of 32 (two or four
   products per lane), blocks scaled and accumulated in double. Covers n - n % 32 elements. */
#define DINTATTN__DOT64_AVX2(name, LD, ES)                                                                           \
    DINTATTN__AVX2 static double name(const void *w, const float *sc, const float *x, size_t n)                  \
    {                                                                                                            \
        __m256d s0 = _mm256_setzero_pd(), s1 = s0;                                                               \
        __m128d h;                                                                                               \
        size_t i;                                                                                                \
        for (i = 0; i + 32 <= n; i += 32) {                                                                      \
            DINTATTN__PF(w, i, ES);                                                                            \
            __m256 a = _mm256_mul_ps(LD(w, i), _mm256_loadu_ps(x + i));                                          \
            __m256 b = _mm256_mul_ps(LD(w, i + 8), _mm256_loadu_ps(x + i + 8));                                  \
            __m256d lo, hi, k;                                                                                   \
            a = _mm256_fmadd_ps(LD(w, i + 16), _mm256_loadu_ps(x + i + 16), a);                                  \
            b = _mm256_fmadd_ps(LD(w, i + 24), _mm256_loadu_ps(x + i + 24), b);                                  \
            a = _mm256_add_ps(a, b);                                                                             \
            lo = _mm256_cvtps_pd(_mm256_castps256_ps128(a));                                                     \
            hi = _mm256_cvtps_pd(_mm256_extractf128_ps(a, 1));                                                   \
            k = _mm256_set1_pd(sc ? (double)sc[i / 32] : 1.0);                                                   \
            s0 = _mm256_fmadd_pd(lo, k, s0);                                                                     \
            s1 = _mm256_fmadd_pd(hi, k, s1);                                                                     \
        }                                                                                                        \
        s0 = _mm256_add_pd(s0, s1);                                                                              \
        h = _mm_add_pd(_mm256_castpd256_pd128(s0), _mm256_extractf128_pd(s0, 1));                                \
        return _mm_cvtsd_f64(_mm_add_sd(h, _mm_unpackhi_pd(h, h)));                                              \
    }
DINTATTN__DOT64_AVX2(dintattn__dot64_f32_avx2, DINTATTN__LD8_F32, 4)
DINTATTN__DOT64_AVX2(dintattn__dot64_bf16_avx2, DINTATTN__LD8_BF16, 2)
DINTATTN__DOT64_AVX2(dintattn__dot64_f16_avx2, DINTATTN__LD8_F16, 2)
DINTATTN__DOT64_AVX2(dintattn__dot64_q8_avx2, DINTATTN__LD8_Q8, 1)

/* AVX-512F: 16 weights at a time. (GCC 12's avx512fintrin.h trips -Wmaybe-uninitialized in C++.) */
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wuninitialized"
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#endif
#define DINTATTN__LD16_F32(w, i) _mm512_loadu_ps((const float *)(w) + (i))
#define DINTATTN__LD16_BF16(w, i)                                                                                \
    _mm512_castsi512_ps(_mm512_slli_epi32(                                                                       \
        _mm512_cvtepu16_epi32(_mm256_loadu_si256((const __m256i *)((const uint16_t *)(w) + (i)))), 16))
#define DINTATTN__LD16_F16(w, i) _mm512_cvtph_ps(_mm256_loadu_si256((const __m256i *)((const uint16_t *)(w) + (i))))
#define DINTATTN__LD16_Q8(w, i)                                                                                  \
    _mm512_cvtepi32_ps(_mm512_cvtepi8_epi32(_mm_loadu_si128((const __m128i *)((const signed char *)(w) + (i)))))

#define DINTATTN__DOT_AVX512(name, LD, ES)                                                                           \
    DINTATTN__AVX512 static float name(const void *w, const float *x, size_t n)                                  \
    {                                                                                                            \
        __m512 s0 = _mm512_setzero_ps(), s1 = s0;                                                                \
        size_t i;                                                                                                \
        for (i = 0; i + 32 <= n; i += 32) {                                                                      \
            DINTATTN__PF(w, i, ES);                                                                            \
            s0 = _mm512_fmadd_ps(LD(w, i), _mm512_loadu_ps(x + i), s0);                                          \
            s1 = _mm512_fmadd_ps(LD(w, i + 16), _mm512_loadu_ps(x + i + 16), s1);                                \
        }                                                                                                        \
        return _mm512_reduce_add_ps(_mm512_add_ps(s0, s1));                                                      \
    }
DINTATTN__DOT_AVX512(dintattn__dot_f32_avx512, DINTATTN__LD16_F32, 4)
DINTATTN__DOT_AVX512(dintattn__dot_bf16_avx512, DINTATTN__LD16_BF16, 2)
DINTATTN__DOT_AVX512(dintattn__dot_f16_avx512, DINTATTN__LD16_F16, 2)

#define DINTATTN__DOT64_AVX512(name, LD, ES)                                                                         \
    DINTATTN__AVX512 static double name(const void *w, const float *sc, const float *x, size_t n)                \
    {                                                                                                            \
        __m512d s0 = _mm512_setzero_pd(), s1 = s0;                                                               \
        size_t i;                                                                                                \
        for (i = 0; i + 32 <= n; i += 32) {                                                                      \
            DINTATTN__PF(w, i, ES);                                                                            \
            __m512 a = _mm512_mul_ps(LD(w, i), _mm512_loadu_ps(x + i));                                          \
            __m512d k = _mm512_set1_pd(sc ? (double)sc[i / 32] : 1.0);                                           \
            a = _mm512_fmadd_ps(LD(w, i + 16), _mm512_loadu_ps(x + i + 16), a);                                  \
            s0 = _mm512_fmadd_pd(_mm512_cvtps_pd(_mm512_castps512_ps256(a)), k, s0);                             \
            s1 = _mm512_fmadd_pd(_mm512_cvtps_pd(_mm256_castpd_ps(_mm512_extractf64x4_pd(_mm512_castps_pd(a), 1))), k, s1); \
        }                                                                                                        \
        return _mm512_reduce_add_pd(_mm512_add_pd(s0, s1));                                                      \
    }
DINTATTN__DOT64_AVX512(dintattn__dot64_f32_avx512, DINTATTN__LD16_F32, 4)
DINTATTN__DOT64_AVX512(dintattn__dot64_bf16_avx512, DINTATTN__LD16_BF16, 2)
DINTATTN__DOT64_AVX512(dintattn__dot64_f16_avx512, DINTATTN__LD16_F16, 2)
DINTATTN__DOT64_AVX512(dintattn__dot64_q8_avx512, DINTATTN__LD16_Q8, 1)

DINTATTN__DOT_Q8(dintattn__dot_q8_avx512, DINTATTN__AVX512, __m512, 16, _mm512_setzero_ps, _mm512_add_ps,
                 _mm512_mul_ps, _mm512_fmadd_ps, _mm512_set1_ps, _mm512_loadu_ps, DINTATTN__LD16_Q8,
                 _mm512_reduce_add_ps)
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic pop
#endif
#endif

/* SIMD level for new sessions: 2 AVX-512F (+ AVX2/FMA/F16C), 1 AVX2 + FMA + F16C, 0 portable C.
   DINTATTN_NO_SIMD=1 in the environment forces 0 (the tests run both ways); DINTATTN_NO_SIMD=512
   stops at AVX2. */
static int dintattn__simd(void)
{
#ifdef DINTATTN__HAVE_X86
    const char *env = getenv("DINTATTN_NO_SIMD");
    int cap = 2;
    if (env && strcmp(env, "512") == 0) cap = 1;
    else if (env && env[0] && env[0] != '0') return 0;
    unsigned a, b, c = 0, d;
    __builtin_cpu_init();
    /* F16C (CPUID.1:ECX bit 29) has no __builtin_cpu_supports name in every compiler */
    if (!__get_cpuid(1, &a, &b, &c, &d) || !(c & (1u << 29))) return 0;
    if (!__builtin_cpu_supports("avx2") || !__builtin_cpu_supports("fma")) return 0;
    return cap == 2 && __builtin_cpu_supports("avx512f") ? 2 : 1;
#else
    return 0;
#endif
}

/* Row r of M . x, in the SIMD level's kernel. */
static float dintattn__rowdot_any(int simd, const dintattn__mat *M, int r, const float *x)
{
#ifdef DINTATTN__HAVE_X86
    const size_t n = (size_t)M->cols, at = (size_t)r * n, body = n - n % 32;
    const unsigned char *w = (const unsigned char *)M->w + at * dintattn__wsize(M->type);
    float sum = 0;
    size_t i;
    if (!simd) return dintattn__rowdot(M, r, x);
    if (simd == 2) {
        switch (M->type) {
        case DINTATTN__W_F32: sum = dintattn__dot_f32_avx512(w, x, body); break;
        case DINTATTN__W_BF16: sum = dintattn__dot_bf16_avx512(w, x, body); break;
        case DINTATTN__W_F16: sum = dintattn__dot_f16_avx512(w, x, body); break;
        default: return dintattn__dot_q8_avx512(w, M->scale + at / 32, x, n);
        }
    } else {
        switch (M->type) {
        case DINTATTN__W_F32: sum = dintattn__dot_f32_avx2(w, x, body); break;
        case DINTATTN__W_BF16: sum = dintattn__dot_bf16_avx2(w, x, body); break;
        case DINTATTN__W_F16: sum = dintattn__dot_f16_avx2(w, x, body); break;
        default: return dintattn__dot_q8_avx2(w, M->scale + at / 32, x, n);
        }
    }
    for (i = body; i < n; i++) sum += dintattn__w_elem(M, at + i) * x[i];
    return sum;
#else
    (void)simd;
    return dintattn__rowdot(M, r, x);
#endif
}

/* Rows r0 .. r0+nr of M in f32 (prefill's sgemm tiles, embedding rows). */
static void dintattn__mat_rows_any(int simd, const dintattn__mat *M, int r0, int nr, float *dst)
{
#ifdef DINTATTN__HAVE_X86
    if (simd) {
        dintattn__rows_avx2(M, (size_t)r0 * (size_t)M->cols, (size_t)nr * (size_t)M->cols, dst);
        return;
    }
#endif
    (void)simd;
    dintattn__mat_rows(M, r0, nr, dst, NULL);
}

static double dintattn__rowdot64_any(int simd, const dintattn__mat *M, int r, const float *x)
{
#ifdef DINTATTN__HAVE_X86
    const size_t n = (size_t)M->cols, at = (size_t)r * n, body = n - n % 32;
    const unsigned char *w = (const unsigned char *)M->w + at * dintattn__wsize(M->type);
    const float *sc = M->type == DINTATTN__W_Q8 ? M->scale + at / 32 : NULL;
    double sum;
    size_t i;
    if (!simd) return dintattn__rowdot64(M, r, x);
    if (simd == 2) {
        switch (M->type) {
        case DINTATTN__W_F32: sum = dintattn__dot64_f32_avx512(w, NULL, x, body); break;
        case DINTATTN__W_BF16: sum = dintattn__dot64_bf16_avx512(w, NULL, x, body); break;
        case DINTATTN__W_F16: sum = dintattn__dot64_f16_avx512(w, NULL, x, body); break;
        default: sum = dintattn__dot64_q8_avx512(w, sc, x, body);
        }
    } else {
        switch (M->type) {
        case DINTATTN__W_F32: sum = dintattn__dot64_f32_avx2(w, NULL, x, body); break;
        case DINTATTN__W_BF16: sum = dintattn__dot64_bf16_avx2(w, NULL, x, body); break;
        case DINTATTN__W_F16: sum = dintattn__dot64_f16_avx2(w, NULL, x, body); break;
        default: sum = dintattn__dot64_q8_avx2(w, sc, x, body);
        }
    }
    for (i = body; i < n; i++) sum += (double)dintattn__w_elem(M, at + i) * x[i];
    return sum;
#else
    (void)simd;
    return dintattn__rowdot64(M, r, x);
#endif
}

/* x[0..n) = softmax(x[0..n)), shifted by the max so exp never overflows. */
static void dintattn__softmax(float *x, int n)
{
    float mx = x[0], inv;
    double sum = 0;
    int i;
    for (i = 1; i < n; i++)
        if (x[i] > mx) mx = x[i];
    for (i = 0; i < n; i++) {
        x[i] = expf(x[i] - mx);
        sum += x[i];
    }
    inv = (float)(1.0 / sum);
    for (i = 0; i < n; i++) x[i] *= inv;
}

/* Rotary embedding of `heads` heads of width d at one position; cs/sn hold cos/sin of
   pos * theta^(-2k/d), k < d/2. */
static void dintattn__rope(double *v, int heads, int d, const double *cs, const double *sn, dintattn_rope mode)
{
    int h, k, half = d / 2;
    if (mode == DINTATTN_ROPE_NONE) return;
    for (h = 0; h < heads; h++) {
        double *x = v + (size_t)h * d;
        for (k = 0; k < half; k++) {
            int i0 = mode == DINTATTN_ROPE_INTERLEAVED ? 2 * k : k;
            int i1 = mode == DINTATTN_ROPE_INTERLEAVED ? 2 * k + 1 : k + half;
            double a = x[i0], b = x[i1];
            x[i0] = a * cs[k] - b * sn[k];
            x[i1] = a * sn[k] + b * cs[k];
        }
    }
}

/* SwiGLU's gate: g <- silu(g) * u. */
static void dintattn__swiglu(float *g, const float *u, size_t n)
{
    size_t i;
    for (i = 0; i < n; i++) g[i] = g[i] / (1.0f + expf(-g[i])) * u[i];
}

/* Motif's PolyNorm gate over one row of width F:
   act(g) = w0 g^3/rms_6(g) + w1 g^2/rms_4(g) + w2 g/rms_2(g) + b, rms_p = sqrt(mean(g^p) + 1e-6);
   then g <- act(g) * u. */
static void dintattn__polynorm(float *g, const float *u, int F, const float *w, const float *b)
{
    double m2 = 0, m4 = 0, m6 = 0;
    float c1, c2, c3;
    int i;
    for (i = 0; i < F; i++) {
        double x2 = (double)g[i] * g[i];
        m2 += x2;
        m4 += x2 * x2;
        m6 += x2 * x2 * x2;
    }
    c3 = (float)(w[0] / sqrt(m6 / F + 1e-6));
    c2 = (float)(w[1] / sqrt(m4 / F + 1e-6));
    c1 = (float)(w[2] / sqrt(m2 / F + 1e-6));
    for (i = 0; i < F; i++) {
        float x = g[i];
        g[i] = (c3 * x * x * x + c2 * x * x + c1 * x + b[0]) * u[i];
    }
}

/* --- attention rows: scores, softmax, the DINT integral, W @ V --------------------------------
   Portable versions, AVX2 versions (x86, chosen at run time), and the dispatchers the attention
   code calls. K and V rows of one head are contiguous in the cache (d or dv floats apart). */

/* a[j] = (q . K[j]) * scale for j < nk */
static void dintattn__scores(float *a, const float *q, const float *K, int nk, int d, float scale)
{
    int j;
    for (j = 0; j < nk; j++) a[j] = dintattn__dot(q, K + (size_t)j * d, d) * scale;
}

/* o[0..dv) = sum_j W[j] V[j] */
static void dintattn__wv(float *o, const float *W, const float *V, int nk, int dv)
{
    int j;
    memset(o, 0, sizeof(float) * (size_t)dv);
    for (j = 0; j < nk; j++) dintattn__axpy(W[j], V + (size_t)j * dv, o, dv);
}

/* DINT's integral row from A1's row a1 (nk = n + 1 keys): S += a1; G = S / nk; out = causal
   softmax(G) (or G itself for integral "mean"). */
static void dintattn__integral(double *S, const float *a1, int nk, float *out, dintattn_integral form)
{
    int j;
    double inv = 1.0 / nk;
    for (j = 0; j < nk; j++) {
        S[j] += a1[j];
        out[j] = (float)(S[j] * inv); /* G[n, j] */
    }
    if (form == DINTATTN_INTEGRAL_SOFTMAX) dintattn__softmax(out, nk);
}

#ifdef DINTATTN__HAVE_X86
/* e^x for 8 floats: x = k ln2 + r, |r| <= ln2/2, e^r by Cephes' expf polynomial (about 1 ulp);
   below -87.3 (where expf leaves the normal range) the result is 0. */
DINTATTN__AVX2 static __m256 dintattn__exp8(__m256 x)
{
    const __m256 lo = _mm256_set1_ps(-87.33f);
    __m256 under = _mm256_cmp_ps(x, lo, _CMP_LT_OQ), k, r, p;
    x = _mm256_min_ps(_mm256_max_ps(x, lo), _mm256_set1_ps(88.37f));
    k = _mm256_round_ps(_mm256_mul_ps(x, _mm256_set1_ps(1.44269504088896341f)),
                        _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
    r = _mm256_fnmadd_ps(k, _mm256_set1_ps(0.693359375f), x);
    r = _mm256_fnmadd_ps(k, _mm256_set1_ps(-2.12194440e-4f), r);
    p = _mm256_set1_ps(1.9875691500e-4f);
    p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(1.3981999507e-3f));
    p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(8.3334519073e-3f));
    p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(4.1665795894e-2f));
    p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(1.6666665459e-1f));
    p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(5.0000001201e-1f));
    p = _mm256_fmadd_ps(p, _mm256_mul_ps(r, r), _mm256_add_ps(r, _mm256_set1_ps(1.0f)));
    p = _mm256_mul_ps(p, _mm256_castsi256_ps(_mm256_slli_epi32(
                             _mm256_add_epi32(_mm256_cvtps_epi32(k), _mm256_set1_epi32(127)), 23)));
    return _mm256_andnot_ps(under, p);
}

DINTATTN__AVX2 static void dintattn__softmax_avx2(float *x, int n)
{
    __m256 vmx = _mm256_set1_ps(x[0]), vinv;
    __m256d s0 = _mm256_setzero_pd(), s1 = s0;
    __m128d h;
    float mx, lanes[8];
    double sum;
    int i, k;
    for (i = 0; i + 8 <= n; i += 8) vmx = _mm256_max_ps(vmx, _mm256_loadu_ps(x + i));
    _mm256_storeu_ps(lanes, vmx);
    mx = lanes[0];
    for (k = 1; k < 8; k++) mx = lanes[k] > mx ? lanes[k] : mx;
    for (; i < n; i++) mx = x[i] > mx ? x[i] : mx;
    vmx = _mm256_set1_ps(mx);
    for (i = 0; i + 8 <= n; i += 8) {
        __m256 e = dintattn__exp8(_mm256_sub_ps(_mm256_loadu_ps(x + i), vmx));
        _mm256_storeu_ps(x + i, e);
        s0 = _mm256_add_pd(s0, _mm256_cvtps_pd(_mm256_castps256_ps128(e)));
        s1 = _mm256_add_pd(s1, _mm256_cvtps_pd(_mm256_extractf128_ps(e, 1)));
    }
    s0 = _mm256_add_pd(s0, s1);
    h = _mm_add_pd(_mm256_castpd256_pd128(s0), _mm256_extractf128_pd(s0, 1));
    sum = _mm_cvtsd_f64(_mm_add_sd(h, _mm_unpackhi_pd(h, h)));
    for (k = i; k < n; k++) {
        x[k] = expf(x[k] - mx);
        sum += x[k];
    }
    vinv = _mm256_set1_ps((float)(1.0 / sum));
    for (i = 0; i + 8 <= n; i += 8) _mm256_storeu_ps(x + i, _mm256_mul_ps(_mm256_loadu_ps(x + i), vinv));
    for (; i < n; i++) x[i] *= (float)(1.0 / sum);
}

/* Scores four keys at a time (d a multiple of 8): four dot products share each load of q. */
DINTATTN__AVX2 static void dintattn__scores_avx2(float *a, const float *q, const float *K, int nk, int d, float scale)
{
    const __m128 vs = _mm_set1_ps(scale);
    int j = 0, k;
    for (; j + 4 <= nk; j += 4) {
        const float *k0 = K + (size_t)j * d;
        __m256 c0 = _mm256_setzero_ps(), c1 = c0, c2 = c0, c3 = c0, t0, t1;
        __m128 r;
        for (k = 0; k < d; k += 8) {
            __m256 qv = _mm256_loadu_ps(q + k);
            c0 = _mm256_fmadd_ps(qv, _mm256_loadu_ps(k0 + k), c0);
            c1 = _mm256_fmadd_ps(qv, _mm256_loadu_ps(k0 + d + k), c1);
            c2 = _mm256_fmadd_ps(qv, _mm256_loadu_ps(k0 + 2 * d + k), c2);
            c3 = _mm256_fmadd_ps(qv, _mm256_loadu_ps(k0 + 3 * d + k), c3);
        }
        t0 = _mm256_hadd_ps(c0, c1);
        t1 = _mm256_hadd_ps(c2, c3);
        t0 = _mm256_hadd_ps(t0, t1); /* per 128-bit half: partial sums of keys 0, 1, 2, 3 */
        r = _mm_add_ps(_mm256_castps256_ps128(t0), _mm256_extractf128_ps(t0, 1));
        _mm_storeu_ps(a + j, _mm_mul_ps(r, vs));
    }
    for (; j < nk; j++) a[j] = dintattn__dot_avx2(q, K + (size_t)j * d, d) * scale;
}

/* W @ V in column blocks of 64 (eight accumulators in registers) then 8 (dv a multiple of 8). */
DINTATTN__AVX2 static void dintattn__wv_avx2(float *o, const float *W, const float *V, int nk, int dv)
{
    int c = 0, j;
    for (; c + 64 <= dv; c += 64) {
        __m256 o0 = _mm256_setzero_ps(), o1 = o0, o2 = o0, o3 = o0, o4 = o0, o5 = o0, o6 = o0, o7 = o0;
        for (j = 0; j < nk; j++) {
            const float *v = V + (size_t)j * dv + c;
            const __m256 w = _mm256_broadcast_ss(W + j);
            o0 = _mm256_fmadd_ps(w, _mm256_loadu_ps(v), o0);
            o1 = _mm256_fmadd_ps(w, _mm256_loadu_ps(v + 8), o1);
            o2 = _mm256_fmadd_ps(w, _mm256_loadu_ps(v + 16), o2);
            o3 = _mm256_fmadd_ps(w, _mm256_loadu_ps(v + 24), o3);
            o4 = _mm256_fmadd_ps(w, _mm256_loadu_ps(v + 32), o4);
            o5 = _mm256_fmadd_ps(w, _mm256_loadu_ps(v + 40), o5);
            o6 = _mm256_fmadd_ps(w, _mm256_loadu_ps(v + 48), o6);
            o7 = _mm256_fmadd_ps(w, _mm256_loadu_ps(v + 56), o7);
        }
        _mm256_storeu_ps(o + c, o0);
        _mm256_storeu_ps(o + c + 8, o1);
        _mm256_storeu_ps(o + c + 16, o2);
        _mm256_storeu_ps(o + c + 24, o3);
        _mm256_storeu_ps(o + c + 32, o4);
        _mm256_storeu_ps(o + c + 40, o5);
        _mm256_storeu_ps(o + c + 48, o6);
        _mm256_storeu_ps(o + c + 56, o7);
    }
    for (; c < dv; c += 8) {
        __m256 o0 = _mm256_setzero_ps(), o1 = o0;
        for (j = 0; j + 2 <= nk; j += 2) {
            o0 = _mm256_fmadd_ps(_mm256_broadcast_ss(W + j), _mm256_loadu_ps(V + (size_t)j * dv + c), o0);
            o1 = _mm256_fmadd_ps(_mm256_broadcast_ss(W + j + 1), _mm256_loadu_ps(V + (size_t)(j + 1) * dv + c), o1);
        }
        if (j < nk) o0 = _mm256_fmadd_ps(_mm256_broadcast_ss(W + j), _mm256_loadu_ps(V + (size_t)j * dv + c), o0);
        _mm256_storeu_ps(o + c, _mm256_add_ps(o0, o1));
    }
}

/* SwiGLU's g <- silu(g) * u = g / (1 + e^-g) * u, eight at a time. */
DINTATTN__AVX2 static void dintattn__swiglu_avx2(float *g, const float *u, size_t n)
{
    const __m256 one = _mm256_set1_ps(1.0f), zero = _mm256_setzero_ps();
    size_t i = 0;
    for (; i + 8 <= n; i += 8) {
        __m256 v = _mm256_loadu_ps(g + i), e = dintattn__exp8(_mm256_sub_ps(zero, v));
        _mm256_storeu_ps(g + i, _mm256_mul_ps(_mm256_div_ps(v, _mm256_add_ps(one, e)), _mm256_loadu_ps(u + i)));
    }
    dintattn__swiglu(g + i, u + i, n - i);
}

/* S += a1 and G = S / nk in double, four at a time; then the softmax of G. */
DINTATTN__AVX2 static void dintattn__integral_avx2(double *S, const float *a1, int nk, float *out,
                                                   dintattn_integral form)
{
    const __m256d inv = _mm256_set1_pd(1.0 / nk);
    int j = 0;
    for (; j + 4 <= nk; j += 4) {
        __m256d v = _mm256_add_pd(_mm256_loadu_pd(S + j), _mm256_cvtps_pd(_mm_loadu_ps(a1 + j)));
        _mm256_storeu_pd(S + j, v);
        _mm_storeu_ps(out + j, _mm256_cvtpd_ps(_mm256_mul_pd(v, inv)));
    }
    for (; j < nk; j++) {
        S[j] += a1[j];
        out[j] = (float)(S[j] * (1.0 / nk));
    }
    if (form == DINTATTN_INTEGRAL_SOFTMAX) dintattn__softmax_avx2(out, nk);
}
#endif

static void dintattn__swiglu_any(int simd, float *g, const float *u, size_t n)
{
#ifdef DINTATTN__HAVE_X86
    if (simd) {
        dintattn__swiglu_avx2(g, u, n);
        return;
    }
#endif
    (void)simd;
    dintattn__swiglu(g, u, n);
}

static void dintattn__softmax_any(int simd, float *x, int n)
{
#ifdef DINTATTN__HAVE_X86
    if (simd) {
        dintattn__softmax_avx2(x, n);
        return;
    }
#endif
    (void)simd;
    dintattn__softmax(x, n);
}

/* A row of A1 or A2: scores of q against nk keys, softmaxed. */
static void dintattn__attn_row(int simd, float *a, const float *q, const float *K, int nk, int d, float scale)
{
#ifdef DINTATTN__HAVE_X86
    if (simd && d % 8 == 0) {
        dintattn__scores_avx2(a, q, K, nk, d, scale);
        dintattn__softmax_avx2(a, nk);
        return;
    }
#endif
    dintattn__scores(a, q, K, nk, d, scale);
    dintattn__softmax_any(simd, a, nk);
}

static void dintattn__wv_any(int simd, float *o, const float *W, const float *V, int nk, int dv)
{
#ifdef DINTATTN__HAVE_X86
    if (simd && dv % 8 == 0) {
        dintattn__wv_avx2(o, W, V, nk, dv);
        return;
    }
#endif
    (void)simd;
    dintattn__wv(o, W, V, nk, dv);
}

static void dintattn__integral_any(int simd, double *S, const float *a1, int nk, float *out, dintattn_integral form)
{
#ifdef DINTATTN__HAVE_X86
    if (simd) {
        dintattn__integral_avx2(S, a1, nk, out, form);
        return;
    }
#endif
    (void)simd;
    dintattn__integral(S, a1, nk, out, form);
}

/* ============================================================================================
   6. Attention
   ============================================================================================ */

/* A persistent pool for decode: the caller is thread 0, the workers 1..n. A job is a number of
   units (chunks of matrix rows, or runs of heads); each thread owns a contiguous share and takes
   its units one at a time through its own counter, then takes what is left of the others' (see
   dintattn__take). The job ends when every unit is done, whether or not every worker woke up for
   it, so a preempted or slow thread costs at most the unit it holds. Workers spin briefly for the
   next job (decode runs dozens per token), then sleep on `go`. */
typedef struct dintattn__pool {
    pthread_t *threads;
    int n;                                  /* worker threads (the caller is thread 0 besides) */
    pthread_mutex_t mu;
    pthread_cond_t go, done;
    unsigned long generation;               /* atomic: the job being run */
    int started, quit, caller_waits;        /* atomic */
} dintattn__pool;

enum { DINTATTN__JOB_ROWS, DINTATTN__JOB_HEADS };
#define DINTATTN__UNIT_ROWS 16 /* matrix rows a unit (at least; more for huge jobs) */
/* Decode jobs reading fewer bytes than this run on the calling thread alone (a hand-off costs more
   than a second thread saves). The tests define it as 0 so that every job uses the pool. */
#ifndef DINTATTN_SOLO_BYTES
#define DINTATTN_SOLO_BYTES ((size_t)256 << 10)
#endif
static const size_t dintattn__solo_bytes = DINTATTN_SOLO_BYTES;

#define DINTATTN__QB 128 /* prefill attention: queries per block */

/* One product of a batch: Y (+)= X @ M^T over the chunk's rows (X rows M->cols wide, stride ldx;
   Y rows stride ldy), into y, or for the Q/K projections into y64 (double; never add). */
typedef struct dintattn__mm {
    const dintattn__mat *M;
    const dintattn__mat *up;                /* decode SwiGLU: y = silu(M x) * (up x), row by row */
    const float *x;
    float *y;
    double *y64;
    int ldx, ldy, add;
} dintattn__mm;

struct dintattn_session {
    const dintattn_model *model;
    int n_ctx, n_batch, n_threads, pos;
    size_t bytes;
    void *block;                            /* every buffer below lives in this one allocation */
    float *k1, *k2, *v;                     /* KV cache: [n_layers][heads][n_ctx][width] */
    float *vt;                              /* [n_batch][n_v_heads * dv]: V rows before the cache */
    double *S;                              /* DINT: [n_layers][H][n_ctx] running column sums of A1 */
    double *rope_cos, *rope_sin;            /* [n_ctx][d/2] */
    float *x, *xn, *q1, *q2, *att, *gate, *up;   /* [n_batch][...] activations */
    double *qk64;                           /* [n_batch][heads * d] each for q1, k1, q2, k2 */
    double *q_base, *k_base, *down;         /* Shared-DIFF factored form; down as qk64 with r for d */
    float *rows;                            /* per thread: 3 * n_ctx attention rows */
    float *tile;                            /* prefill: weight rows converted for sgemm */
    float *acc;                             /* prefill: [n_batch][widest Q/K] sgemm slices */
    float *blk;                             /* prefill: A1, A2, W of DINTATTN__QB queries */
    size_t tile_elems;
    dintattn__mm jobs[8];                   /* decode: the matrix-vector products being run */
    int n_jobs, total;                      /* ... and their rows in all */
    /* the pool's current job: written by the caller only while no unit of it is left */
    int job_kind, job_units, unit_rows;
    int done;                               /* atomic: units finished */
    uint64_t *claims;                       /* per thread, 64 bytes apart: job | next unit | end */
    dintattn_attn_hook hook;
    void *hook_user;
    dintattn__pool pool;
    int pool_started;
    /* the chunk being attended, read by the workers */
    int job_layer, job_n, job_pos0;
    int simd;                               /* dintattn__simd() at creation */
};

/* HeadNorm and head scale of one head's output (SPEC.md section 1). */
static void dintattn__head_post(const dintattn_config *c, const dintattn__layer *L, int i, float *o)
{
    int dv = c->v_head_dim, k;
    if (c->head_norm) {
        const float *w = L->head_norm_w + (L->head_norm_per_head ? (size_t)i * dv : 0);
        if (c->head_norm_type == DINTATTN_HEADNORM_RMS) {
            dintattn__rmsnorm(o, o, w, dv, c->head_norm_eps);
        } else {
            const float *b = L->head_norm_b + (L->head_norm_per_head ? (size_t)i * dv : 0);
            dintattn__groupnorm(o, w, b, dv, c->head_norm_eps);
        }
    }
    if (c->head_scale) {
        float sc = (float)(1.0 - L->lambda_init);
        for (k = 0; k < dv; k++) o[k] *= sc;
    }
}

/* Signal heads that read the same Q2 and K2 heads share their noise branch A2 (Grouped-DIFF's G
   signal heads per noise head); runs of such heads are consecutive, and A2 is computed once a run. */
static int dintattn__shares_noise(const dintattn_config *c, int i, int k)
{
    const int H = c->n_heads;
    return c->attention != DINTATTN_ATTN_STANDARD && i * c->n_q2_heads / H == k * c->n_q2_heads / H &&
           i * c->n_k2_heads / H == k * c->n_k2_heads / H;
}

/* Signal heads [h0, h1), one run sharing A2, over the current chunk: for each query, the row of
   A2 once, then per head W = A1 - lambda A2 (+ lambda I), head = W @ V and HeadNorm.
   `rows` is 3 * n_ctx floats of scratch: A1, A2 and W (which first holds I). */
static void dintattn__attend_run(dintattn_session *s, int h0, int h1, float *rows)
{
    const dintattn_model *m = s->model;
    const dintattn_config *c = &m->cfg;
    const int l = s->job_layer, H = c->n_heads, d = c->head_dim, dv = c->v_head_dim;
    const dintattn__layer *L = &m->layers[l];
    const size_t T = (size_t)s->n_ctx;
    const int k2h = c->n_k2_heads ? h0 * c->n_k2_heads / H : 0, q2h = c->n_q2_heads ? h0 * c->n_q2_heads / H : 0;
    const float *K2 = s->k2 + ((size_t)l * c->n_k2_heads + k2h) * T * d;
    const float scale = (float)(1.0 / sqrt((double)d)), lambda = (float)L->lambda;
    float *A1 = rows, *A2 = rows + T, *W = rows + 2 * T;
    int t, i, j;
    for (t = 0; t < s->job_n; t++) {
        const int pos = s->job_pos0 + t, nk = pos + 1;
        if (c->attention != DINTATTN_ATTN_STANDARD)
            dintattn__attn_row(s->simd, A2, s->q2 + ((size_t)t * c->n_q2_heads + q2h) * d, K2, nk, d, scale);
        for (i = h0; i < h1; i++) {
            const float *K1 = s->k1 + ((size_t)l * c->n_k1_heads + (size_t)(i * c->n_k1_heads / H)) * T * d;
            const float *V = s->v + ((size_t)l * c->n_v_heads + (size_t)(i * c->n_v_heads / H)) * T * dv;
            float *o = s->att + ((size_t)t * H + i) * dv;
            dintattn__attn_row(s->simd, A1, s->q1 + ((size_t)t * H + i) * d, K1, nk, d, scale);
            if (c->attention == DINTATTN_ATTN_STANDARD) {
                memcpy(W, A1, sizeof(float) * (size_t)nk);
            } else if (c->attention == DINTATTN_ATTN_DIFF) {
                for (j = 0; j < nk; j++) W[j] = A1[j] - lambda * A2[j];
            } else {
                dintattn__integral_any(s->simd, s->S + ((size_t)l * H + i) * T, A1, nk, W, c->integral);
                for (j = 0; j < nk; j++) W[j] = A1[j] - lambda * A2[j] + lambda * W[j];
            }
            if (s->hook) s->hook(s->hook_user, l, i, pos, W, nk);
            dintattn__wv_any(s->simd, o, W, V, nk, dv);
            dintattn__head_post(c, L, i, o);
        }
    }
}

/* One query row of a prefill block: softmax of the scores in A1 (and A2) over its nk keys, then W
   = A1 - lambda A2 (+ lambda I) for head i, zero beyond nk (up to width) for the W @ V product. */
static void dintattn__block_row(dintattn_session *s, int i, int pos, float *A1, const float *A2, float *W,
                                int width)
{
    const dintattn_config *c = &s->model->cfg;
    const int l = s->job_layer, nk = pos + 1;
    const float lambda = (float)s->model->layers[l].lambda;
    int j;
    dintattn__softmax_any(s->simd, A1, nk);
    if (c->attention == DINTATTN_ATTN_STANDARD) {
        memcpy(W, A1, sizeof(float) * (size_t)nk);
    } else if (c->attention == DINTATTN_ATTN_DIFF) {
        for (j = 0; j < nk; j++) W[j] = A1[j] - lambda * A2[j];
    } else {
        dintattn__integral_any(s->simd, s->S + ((size_t)l * c->n_heads + i) * (size_t)s->n_ctx, A1, nk, W,
                               c->integral);
        for (j = 0; j < nk; j++) W[j] = A1[j] - lambda * A2[j] + lambda * W[j];
    }
    if (s->hook) s->hook(s->hook_user, l, i, pos, W, nk);
    memset(W + nk, 0, sizeof(float) * (size_t)(width - nk));
}

/* Prefill attention of the chunk (s->job_*), blocked: for DINTATTN__QB queries at a time and each
   head, the scores against every key so far are one sgemm (A = Q K^T / sqrt(d)), softmaxed row by
   row (DINT's S then moves row by row, in order), and the heads' outputs one more (O = W V).
   Scratch: 3 * DINTATTN__QB * n_ctx floats. The GEMMs go to OpenBLAS's threads. */
static void dintattn__attend_blocked(dintattn_session *s)
{
    const dintattn_config *c = &s->model->cfg;
    const int l = s->job_layer, H = c->n_heads, d = c->head_dim, dv = c->v_head_dim, n = s->job_n;
    const size_t T = (size_t)s->n_ctx;
    const float scale = (float)(1.0 / sqrt((double)d));
    const int diff = c->attention != DINTATTN_ATTN_STANDARD;
    int b0, nb, width, i, h0, h1, t;
    for (b0 = 0; b0 < n; b0 += nb) {
        float *A1 = s->blk, *A2, *W;
        nb = n - b0 < DINTATTN__QB ? n - b0 : DINTATTN__QB;
        width = s->job_pos0 + b0 + nb; /* keys the block's last row sees */
        A2 = A1 + (size_t)nb * width;
        W = A2 + (size_t)nb * width;
        for (h0 = 0; h0 < H; h0 = h1) {
            for (h1 = h0 + 1; h1 < H && dintattn__shares_noise(c, h0, h1); h1++) continue;
            if (diff) {
                const int q2h = h0 * c->n_q2_heads / H, k2h = h0 * c->n_k2_heads / H;
                cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, nb, width, d, scale,
                            s->q2 + ((size_t)b0 * c->n_q2_heads + q2h) * d, c->n_q2_heads * d,
                            s->k2 + ((size_t)l * c->n_k2_heads + k2h) * T * d, d, 0.0f, A2, width);
                for (t = 0; t < nb; t++) dintattn__softmax_any(s->simd, A2 + (size_t)t * width, s->job_pos0 + b0 + t + 1);
            }
            for (i = h0; i < h1; i++) {
                const float *K1 = s->k1 + ((size_t)l * c->n_k1_heads + (size_t)(i * c->n_k1_heads / H)) * T * d;
                const float *V = s->v + ((size_t)l * c->n_v_heads + (size_t)(i * c->n_v_heads / H)) * T * dv;
                cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, nb, width, d, scale,
                            s->q1 + ((size_t)b0 * H + i) * d, H * d, K1, d, 0.0f, A1, width);
                for (t = 0; t < nb; t++)
                    dintattn__block_row(s, i, s->job_pos0 + b0 + t, A1 + (size_t)t * width, A2 + (size_t)t * width,
                                        W + (size_t)t * width, width);
                cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, nb, dv, width, 1.0f, W, width, V, dv, 0.0f,
                            s->att + ((size_t)b0 * H + i) * dv, H * dv);
                for (t = 0; t < nb; t++)
                    dintattn__head_post(c, &s->model->layers[l], i, s->att + ((size_t)(b0 + t) * H + i) * dv);
            }
        }
    }
}

/* The runs of heads sharing A2 (the units of a decode attention job): how many, or (want >= 0)
   the bounds of run `want`. */
static int dintattn__head_runs(const dintattn_config *c, int want, int *h0, int *h1)
{
    int a, b, run;
    for (a = 0, run = 0; a < c->n_heads; a = b, run++) {
        for (b = a + 1; b < c->n_heads && dintattn__shares_noise(c, a, b); b++) continue;
        if (run == want) {
            *h0 = a;
            *h1 = b;
        }
    }
    return run;
}

/* --- a persistent thread pool ------------------------------------------------------------- */

#define DINTATTN__LOAD(p) __atomic_load_n((p), __ATOMIC_ACQUIRE)
#define DINTATTN__SPINS 4096 /* polls (with a pause each) before a thread sleeps: tens of microseconds */

static void dintattn__pause(void)
{
#if defined(__GNUC__) && (defined(__x86_64__) || defined(__i386__))
    __builtin_ia32_pause();
#endif
}

/* A thread's counter packs the job's generation (24 bits), its next unit and the end of its share
   (20 bits each), so that one compare-and-swap takes a unit of the right job only. */
static uint64_t dintattn__claim(unsigned long gen, unsigned next, unsigned end)
{
    return (uint64_t)(gen & 0xFFFFFF) << 40 | (uint64_t)next << 20 | end;
}

/* The next unit of job `gen` from `owner`'s share, or -1 when none is left (or the job is over). */
static int dintattn__take(dintattn_session *s, int owner, unsigned long gen)
{
    uint64_t *c = s->claims + 8 * (size_t)owner, v = __atomic_load_n(c, __ATOMIC_ACQUIRE);
    for (;;) {
        unsigned next = (unsigned)(v >> 20) & 0xFFFFF, end = (unsigned)v & 0xFFFFF;
        if ((v >> 40) != (gen & 0xFFFFFF) || next >= end) return -1;
        if (__atomic_compare_exchange_n(c, &v, v + ((uint64_t)1 << 20), 0, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE))
            return (int)next;
    }
}

static void dintattn__matvec_unit(dintattn_session *s, int u);

/* Unit u of the current job, on thread tid (whose attention scratch it uses). */
static void dintattn__do_unit(dintattn_session *s, int u, int tid)
{
    int h0 = 0, h1 = 0;
    if (s->job_kind == DINTATTN__JOB_ROWS) {
        dintattn__matvec_unit(s, u);
        return;
    }
    dintattn__head_runs(&s->model->cfg, u, &h0, &h1);
    dintattn__attend_run(s, h0, h1, s->rows + (size_t)tid * 3 * (size_t)s->n_ctx);
}

/* Thread tid's part in job `gen`: its own share, then what is left of the others'. The job's
   description is read only after a unit of it was taken, when it cannot change. */
static void dintattn__work(dintattn_session *s, int tid, unsigned long gen)
{
    dintattn__pool *p = &s->pool;
    const int n = p->n + 1;
    int k, u;
    for (k = 0; k < n; k++)
        while ((u = dintattn__take(s, (tid + k) % n, gen)) >= 0) {
            const int units = s->job_units; /* read while a unit is held: the job cannot end */
            dintattn__do_unit(s, u, tid);
            /* seq_cst on both sides: either this sees caller_waits, or the caller sees done */
            if (__atomic_add_fetch(&s->done, 1, __ATOMIC_SEQ_CST) == units &&
                __atomic_load_n(&p->caller_waits, __ATOMIC_SEQ_CST)) {
                pthread_mutex_lock(&p->mu);
                pthread_cond_signal(&p->done);
                pthread_mutex_unlock(&p->mu);
            }
        }
}

static void *dintattn__worker(void *arg)
{
    dintattn_session *s = (dintattn_session *)arg;
    dintattn__pool *p = &s->pool;
    unsigned long seen = 0;
    int tid, i;
    pthread_mutex_lock(&p->mu);
    tid = ++p->started; /* start-up: each worker takes the next id */
    pthread_cond_signal(&p->done);
    pthread_mutex_unlock(&p->mu);
    for (;;) {
        for (i = 0; i < DINTATTN__SPINS && DINTATTN__LOAD(&p->generation) == seen; i++) dintattn__pause();
        if (DINTATTN__LOAD(&p->generation) == seen) {
            pthread_mutex_lock(&p->mu);
            while (DINTATTN__LOAD(&p->generation) == seen) pthread_cond_wait(&p->go, &p->mu);
            pthread_mutex_unlock(&p->mu);
        }
        seen = DINTATTN__LOAD(&p->generation);
        if (DINTATTN__LOAD(&p->quit)) break;
        dintattn__work(s, tid, seen);
    }
    return NULL;
}

/* Moves the generation (under the lock, so that no worker misses it) and wakes sleepers. */
static void dintattn__pool_kick(dintattn__pool *p)
{
    pthread_mutex_lock(&p->mu);
    __atomic_add_fetch(&p->generation, 1, __ATOMIC_ACQ_REL);
    pthread_cond_broadcast(&p->go);
    pthread_mutex_unlock(&p->mu);
}

/* Starts n_workers threads; returns 0, 1 when out of memory, -1 when threads cannot start. */
static int dintattn__pool_start(dintattn_session *s, int n_workers)
{
    dintattn__pool *p = &s->pool;
    int i;
    if (pthread_mutex_init(&p->mu, NULL)) return -1;
    if (pthread_cond_init(&p->go, NULL)) {
        pthread_mutex_destroy(&p->mu);
        return -1;
    }
    if (pthread_cond_init(&p->done, NULL)) {
        pthread_cond_destroy(&p->go);
        pthread_mutex_destroy(&p->mu);
        return -1;
    }
    s->pool_started = 1;
    p->threads = (pthread_t *)dintattn__calloc((size_t)n_workers + 1, sizeof *p->threads);
    if (!p->threads) return 1;
    for (i = 0; i < n_workers; i++) {
        if (pthread_create(&p->threads[i], NULL, dintattn__worker, s)) return -1;
        p->n = i + 1;
    }
    /* wait until every worker holds its id */
    pthread_mutex_lock(&p->mu);
    while (p->started < p->n) pthread_cond_wait(&p->done, &p->mu);
    pthread_mutex_unlock(&p->mu);
    return 0;
}

static void dintattn__pool_stop(dintattn_session *s)
{
    dintattn__pool *p = &s->pool;
    int i;
    if (!s->pool_started) return;
    __atomic_store_n(&p->quit, 1, __ATOMIC_RELEASE);
    dintattn__pool_kick(p);
    for (i = 0; i < p->n; i++) pthread_join(p->threads[i], NULL);
    DINTATTN_FREE(p->threads);
    pthread_cond_destroy(&p->done);
    pthread_cond_destroy(&p->go);
    pthread_mutex_destroy(&p->mu);
}

/* Runs a job of `units` units of `kind` (its description already in the session) on the pool, or
   on the caller alone when `solo` (jobs too small to be worth a hand-off) or there is no pool. */
static void dintattn__pool_run(dintattn_session *s, int kind, int units, int solo)
{
    dintattn__pool *p = &s->pool;
    const int n = p->n + 1;
    unsigned long gen;
    int t, i;
    if (units <= 0) return;
    s->job_kind = kind;
    s->job_units = units;
    __atomic_store_n(&s->done, 0, __ATOMIC_RELEASE);
    if (p->n == 0 || solo) { /* the caller alone: no counters, no hand-off */
        for (t = 0; t < units; t++) dintattn__do_unit(s, t, 0);
        return;
    }
    gen = DINTATTN__LOAD(&p->generation) + 1;
    for (t = 0; t < n; t++)
        __atomic_store_n(s->claims + 8 * (size_t)t,
                         dintattn__claim(gen, (unsigned)(units * (size_t)t / n), (unsigned)(units * (size_t)(t + 1) / n)),
                         __ATOMIC_RELEASE);
    dintattn__pool_kick(p); /* the generation becomes gen */
    dintattn__work(s, 0, gen);
    for (i = 0; i < DINTATTN__SPINS && DINTATTN__LOAD(&s->done) < units; i++) dintattn__pause();
    if (DINTATTN__LOAD(&s->done) < units) {
        pthread_mutex_lock(&p->mu);
        __atomic_store_n(&p->caller_waits, 1, __ATOMIC_SEQ_CST);
        while (__atomic_load_n(&s->done, __ATOMIC_SEQ_CST) < units) pthread_cond_wait(&p->done, &p->mu);
        __atomic_store_n(&p->caller_waits, 0, __ATOMIC_SEQ_CST);
        pthread_mutex_unlock(&p->mu);
    }
}

/* ============================================================================================
   7. The decoder step (prefill / decode)
   ============================================================================================ */

/* Carves the session's buffers out of one block (pass base = NULL to measure it). */
static size_t dintattn__session_layout(dintattn_session *s, unsigned char *base, int *overflow)
{
    const dintattn_config *c = &s->model->cfg;
    const size_t Lr = (size_t)c->n_layers, T = (size_t)s->n_ctx, B = (size_t)s->n_batch;
    const size_t d = (size_t)c->head_dim, dv = (size_t)c->v_head_dim, r = (size_t)c->qk_rank;
    size_t off = 0, down = 0;
    size_t nq = (size_t)c->n_heads + (size_t)c->n_q2_heads, nk = (size_t)c->n_k1_heads + (size_t)c->n_k2_heads;
#define DINTATTN__CARVE(ptr, type, count)                                                                      \
    do {                                                                                                       \
        size_t n_ = (count), bytes_ = dintattn__mul(n_, sizeof(type), overflow);                                \
        off = (off + 63) & ~(size_t)63;                                                                        \
        if (base) (ptr) = (type *)(void *)(base + off);                                                        \
        if (off + bytes_ < off) *overflow = 1;                                                                 \
        off += bytes_;                                                                                         \
    } while (0)
    DINTATTN__CARVE(s->k1, float, dintattn__mul(Lr * T, (size_t)c->n_k1_heads * d, overflow));
    DINTATTN__CARVE(s->k2, float, dintattn__mul(Lr * T, (size_t)c->n_k2_heads * d, overflow));
    DINTATTN__CARVE(s->v, float, dintattn__mul(Lr * T, (size_t)c->n_v_heads * dv, overflow));
    DINTATTN__CARVE(s->S, double, c->attention == DINTATTN_ATTN_DINT ? dintattn__mul(Lr * T, (size_t)c->n_heads, overflow) : 0);
    DINTATTN__CARVE(s->rope_cos, double, T * (d / 2));
    DINTATTN__CARVE(s->rope_sin, double, T * (d / 2));
    DINTATTN__CARVE(s->vt, float, B * (size_t)c->n_v_heads * dv);
    DINTATTN__CARVE(s->x, float, B * (size_t)c->dim);
    DINTATTN__CARVE(s->xn, float, B * (size_t)c->dim);
    DINTATTN__CARVE(s->q1, float, B * (size_t)c->n_heads * d);
    DINTATTN__CARVE(s->q2, float, B * (size_t)c->n_q2_heads * d);
    DINTATTN__CARVE(s->att, float, B * (size_t)c->n_heads * dv);
    DINTATTN__CARVE(s->gate, float, B * (size_t)c->hidden_dim);
    DINTATTN__CARVE(s->up, float, B * (size_t)c->hidden_dim);
    DINTATTN__CARVE(s->qk64, double, B * d * (nq + nk));
    if (s->model->qk_factored) down = (nq + nk) * r;
    DINTATTN__CARVE(s->q_base, double, s->model->qk_factored ? B * d : 0);
    DINTATTN__CARVE(s->k_base, double, s->model->qk_factored ? B * d : 0);
    DINTATTN__CARVE(s->down, double, B * down);
    DINTATTN__CARVE(s->rows, float, dintattn__mul((size_t)s->n_threads * 3, T, overflow));
    DINTATTN__CARVE(s->blk, float, B > 1 ? dintattn__mul(3 * (size_t)DINTATTN__QB, T, overflow) : 0);
    DINTATTN__CARVE(s->claims, uint64_t, 8 * (size_t)s->n_threads);
    DINTATTN__CARVE(s->tile, float, s->tile_elems);
    DINTATTN__CARVE(s->acc, float, B > 1 ? B * (size_t)c->n_heads * (d > r ? d : r) : 0);
#undef DINTATTN__CARVE
    return off;
}

/* cos/sin of pos * theta^(-2k/d), in double, for every position of the context. */
static void dintattn__rope_tables(dintattn_session *s)
{
    const dintattn_config *c = &s->model->cfg;
    int half = c->head_dim / 2, p, k;
    for (k = 0; k < half; k++) {
        double inv_freq = pow(c->rope_theta, -2.0 * k / c->head_dim);
        for (p = 0; p < s->n_ctx; p++) {
            double a = p * inv_freq;
            s->rope_cos[(size_t)p * half + k] = cos(a);
            s->rope_sin[(size_t)p * half + k] = sin(a);
        }
    }
}

DINTATTN_API dintattn_result dintattn_session_new(const dintattn_model *m, const dintattn_session_options *opt,
                                                  dintattn_session **out, dintattn_error *err)
{
    dintattn_session *s;
    int overflow = 0;
    size_t bytes;
    if (!m || !out) return dintattn__fail(err, DINTATTN_ERR_ARG, "dintattn_session_new: NULL argument");
    *out = NULL;
    if (opt && (opt->n_ctx < 0 || opt->n_ctx > m->cfg.max_seq_len))
        return dintattn__fail(err, DINTATTN_ERR_ARG, "n_ctx %d is not in [0, max_seq_len = %d]", opt->n_ctx,
                              m->cfg.max_seq_len);
    if (opt && (opt->n_batch < 0 || opt->n_threads < 0 || opt->n_threads > 1024))
        return dintattn__fail(err, DINTATTN_ERR_ARG, "n_batch must be >= 0 and n_threads in [0, 1024]");
    s = (dintattn_session *)dintattn__calloc(1, sizeof *s);
    if (!s) return dintattn__fail(err, DINTATTN_ERR_NOMEM, "out of memory");
    s->model = m;
    s->n_ctx = opt && opt->n_ctx ? opt->n_ctx : m->cfg.max_seq_len;
    s->n_batch = opt && opt->n_batch ? opt->n_batch : 512;
    if (s->n_batch > s->n_ctx) s->n_batch = s->n_ctx;
    s->n_threads = opt && opt->n_threads ? opt->n_threads : 1;
    if (s->n_batch > 1) { /* prefill converts weight rows for sgemm: 4 MiB at most, at least a row */
        const dintattn_config *c = &m->cfg;
        size_t widest = (size_t)(c->dim > c->hidden_dim ? c->dim : c->hidden_dim), cap = (size_t)1 << 20;
        size_t largest = (size_t)c->vocab_size * (size_t)c->dim; /* no matrix is larger than all of these */
        if ((size_t)c->n_heads * (size_t)c->v_head_dim > widest) widest = (size_t)c->n_heads * (size_t)c->v_head_dim;
        if ((size_t)c->hidden_dim * (size_t)c->dim > largest) largest = (size_t)c->hidden_dim * (size_t)c->dim;
        if ((size_t)c->n_heads * (size_t)(c->head_dim > c->v_head_dim ? c->head_dim : c->v_head_dim) *
                (size_t)c->dim > largest)
            largest = (size_t)c->n_heads * (size_t)(c->head_dim > c->v_head_dim ? c->head_dim : c->v_head_dim) *
                      (size_t)c->dim;
        s->tile_elems = largest < cap ? largest : cap;
        if (s->tile_elems < widest) s->tile_elems = widest;
    }
    bytes = dintattn__session_layout(s, NULL, &overflow);
    s->block = overflow ? NULL : dintattn__calloc(bytes + 64, 1);
    if (!s->block) {
        int n_ctx = s->n_ctx;
        DINTATTN_FREE(s);
        return dintattn__fail(err, DINTATTN_ERR_NOMEM, "out of memory for a session of %d tokens", n_ctx);
    }
    /* align the block's start to 64 bytes; the layout keeps every buffer aligned from there */
    dintattn__session_layout(s, (unsigned char *)s->block + ((64 - (uintptr_t)s->block % 64) % 64), &overflow);
    s->bytes = bytes + 64 + sizeof *s;
    dintattn__rope_tables(s);
    s->simd = dintattn__simd();
    if (s->n_threads > 1) {
        int workers = s->n_threads - 1, r = dintattn__pool_start(s, workers);
        if (r != 0) {
            dintattn_session_free(s);
            if (r > 0) return dintattn__fail(err, DINTATTN_ERR_NOMEM, "out of memory starting threads");
            return dintattn__fail(err, DINTATTN_ERR_THREAD, "cannot start %d worker threads", workers);
        }
    }
    *out = s;
    dintattn__ok(err);
    return DINTATTN_OK;
}

DINTATTN_API void dintattn_session_free(dintattn_session *s)
{
    if (!s) return;
    dintattn__pool_stop(s);
    DINTATTN_FREE(s->block);
    DINTATTN_FREE(s);
}

DINTATTN_API void dintattn_session_reset(dintattn_session *s)
{
    const dintattn_config *c = &s->model->cfg;
    if (s->S) memset(s->S, 0, sizeof(double) * (size_t)c->n_layers * (size_t)c->n_heads * (size_t)s->n_ctx);
    s->pos = 0;
}

DINTATTN_API int dintattn_session_pos(const dintattn_session *s) { return s->pos; }
DINTATTN_API int dintattn_session_n_ctx(const dintattn_session *s) { return s->n_ctx; }
DINTATTN_API size_t dintattn_session_bytes(const dintattn_session *s) { return s->bytes; }

DINTATTN_API void dintattn_session_set_attn_hook(dintattn_session *s, dintattn_attn_hook hook, void *user)
{
    s->hook = hook;
    s->hook_user = user;
}

/* --- weight products: GEMM over a prefill chunk, matrix-vector rows across threads in decode -- */

/* Decode: unit u of a matrix-vector job, rows [u * unit_rows, (u + 1) * unit_rows) of all
   s->jobs taken in order, as if the matrices were one. */
static void dintattn__matvec_unit(dintattn_session *s, int u)
{
    const size_t lo = (size_t)u * (size_t)s->unit_rows, hi = lo + (size_t)s->unit_rows;
    size_t base = 0;
    int k, r;
    for (k = 0; k < s->n_jobs && base < hi; base += (size_t)s->jobs[k].M->rows, k++) {
        const dintattn__mm *j = &s->jobs[k];
        const int r0 = lo > base ? (int)(lo - base) : 0;
        const int r1 = hi - base < (size_t)j->M->rows ? (int)(hi - base) : j->M->rows;
        for (r = r0; r < r1; r++) {
            if (j->y64) {
                j->y64[r] = dintattn__rowdot64_any(s->simd, j->M, r, j->x);
            } else if (j->up) {
                float g = dintattn__rowdot_any(s->simd, j->M, r, j->x);
                j->y[r] = g / (1.0f + expf(-g)) * dintattn__rowdot_any(s->simd, j->up, r, j->x);
            } else {
                float v = dintattn__rowdot_any(s->simd, j->M, r, j->x);
                j->y[r] = j->add ? j->y[r] + v : v;
            }
        }
    }
}

#ifndef DINTATTN_QK_KC
#define DINTATTN_QK_KC 128
#endif

/* Y64[:, r0..r0+nr) = X @ Wt^T for a Q/K projection: sgemm over slices of DINTATTN_QK_KC columns
   of K, the slices' results summed in double, so that float32 accumulation never runs longer
   than one slice (see dintattn__layer). */
static void dintattn__gemm_qk(dintattn_session *s, int n, const dintattn__mm *j, const float *Wt, int r0, int nr)
{
    const int K = j->M->cols;
    int k0, kc, t, r;
    for (k0 = 0; k0 < K; k0 += kc) {
        kc = K - k0 < DINTATTN_QK_KC ? K - k0 : DINTATTN_QK_KC;
        cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, n, nr, kc, 1.0f, j->x + k0, j->ldx, Wt + k0, K, 0.0f,
                    s->acc, nr);
        for (t = 0; t < n; t++) {
            double *y = j->y64 + (size_t)t * j->ldy + r0;
            const float *a = s->acc + (size_t)t * nr;
            if (k0 == 0)
                for (r = 0; r < nr; r++) y[r] = a[r];
            else
                for (r = 0; r < nr; r++) y[r] += a[r];
        }
    }
}

/* Prefill: one product over n > 1 rows by OpenBLAS. F32 matrices go to sgemm as they are; others
   are converted a tile of rows at a time into s->tile. */
static void dintattn__gemm(dintattn_session *s, int n, const dintattn__mm *j)
{
    const dintattn__mat *M = j->M;
    const int K = M->cols, N = M->rows, tr = (int)(s->tile_elems / (size_t)K);
    float *tile = s->tile;
    int r0, nr;
    if (M->type == DINTATTN__W_F32) {
        if (j->y64)
            dintattn__gemm_qk(s, n, j, (const float *)M->w, 0, N);
        else
            cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, n, N, K, 1.0f, j->x, j->ldx, (const float *)M->w, K,
                        j->add ? 1.0f : 0.0f, j->y, j->ldy);
        return;
    }
    for (r0 = 0; r0 < N; r0 += nr) {
        nr = N - r0 < tr ? N - r0 : tr;
        dintattn__mat_rows_any(s->simd, M, r0, nr, tile);
        if (j->y64)
            dintattn__gemm_qk(s, n, j, tile, r0, nr);
        else
            cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, n, nr, K, 1.0f, j->x, j->ldx, tile, K,
                        j->add ? 1.0f : 0.0f, j->y + r0, j->ldy);
    }
}

/* Runs `count` products of the chunk's n rows. */
static void dintattn__products(dintattn_session *s, int n, const dintattn__mm *jobs, int count)
{
    int k;
    if (n > 1) {
        for (k = 0; k < count; k++) dintattn__gemm(s, n, &jobs[k]);
        return;
    }
    size_t bytes = 0;
    memcpy(s->jobs, jobs, sizeof *jobs * (size_t)count);
    s->n_jobs = count;
    for (k = 0, s->total = 0; k < count; k++) {
        s->total += jobs[k].M->rows;
        bytes += dintattn__mat_bytes(jobs[k].M) + (jobs[k].up ? dintattn__mat_bytes(jobs[k].up) : 0);
    }
    s->unit_rows = DINTATTN__UNIT_ROWS;
    while ((s->total + s->unit_rows - 1) / s->unit_rows >= (1 << 20)) s->unit_rows *= 2;
    dintattn__pool_run(s, DINTATTN__JOB_ROWS, (s->total + s->unit_rows - 1) / s->unit_rows,
                       bytes < dintattn__solo_bytes);
}

static dintattn__mm dintattn__job(const dintattn__mat *M, const float *x, int ldx, float *y, int ldy, int add)
{
    dintattn__mm j;
    memset(&j, 0, sizeof j);
    j.M = M;
    j.x = x;
    j.ldx = ldx;
    j.y = y;
    j.ldy = ldy;
    j.add = add;
    return j;
}

static dintattn__mm dintattn__job64(const dintattn__mat *M, const float *x, double *y, int ldy)
{
    dintattn__mm j;
    memset(&j, 0, sizeof j);
    j.M = M;
    j.x = x;
    j.ldx = M->cols;
    j.y64 = y;
    j.ldy = ldy;
    return j;
}

/* Finishes one Q or K projection of the chunk's n rows, `out` ([n][heads * d], double): for
   factored Shared-DIFF first out = base + up[h] @ down[h] per head; then RoPE at positions
   pos0.., then rounded into Y: head h of row t at Y + h * hs + t * ts. */
static void dintattn__finish_qk(dintattn_session *s, int n, int pos0, double *out, const double *base_x,
                                const double *down, const double *up, int heads, float *Y, size_t hs, size_t ts)
{
    const dintattn_config *c = &s->model->cfg;
    const int d = c->head_dim, r = c->qk_rank, half = d / 2, width = heads * d;
    int t, h, k;
    if (s->model->qk_factored) {
        for (t = 0; t < n; t++)
            for (h = 0; h < heads; h++)
                memcpy(out + (size_t)t * width + (size_t)h * d, base_x + (size_t)t * d, sizeof(double) * (size_t)d);
        for (h = 0; h < heads; h++)
            cblas_dgemm(CblasRowMajor, CblasNoTrans, CblasTrans, n, d, r, 1.0, down + (size_t)h * r, heads * r,
                        up + (size_t)h * d * r, r, 1.0, out + (size_t)h * d, width);
    }
    for (t = 0; t < n; t++) {
        double *row = out + (size_t)t * width;
        dintattn__rope(row, heads, d, s->rope_cos + (size_t)(pos0 + t) * half, s->rope_sin + (size_t)(pos0 + t) * half,
                       c->rope);
        for (h = 0; h < heads; h++)
            for (k = 0; k < d; k++) Y[(size_t)h * hs + (size_t)t * ts + (size_t)k] = (float)row[h * d + k];
    }
}

/* Projections of the chunk: q1, q2 into scratch; k1, k2, v into the cache at pos0. The Q/K
   products (or Shared-DIFF's base and down products) and V run as one batch. */
static void dintattn__project(dintattn_session *s, int l, int n, int pos0)
{
    const dintattn_model *m = s->model;
    const dintattn_config *c = &m->cfg;
    const dintattn__layer *L = &m->layers[l];
    const int D = c->dim, d = c->head_dim, r = c->qk_rank, diff = c->attention != DINTATTN_ATTN_STANDARD;
    const int heads[4] = {c->n_heads, c->n_k1_heads, c->n_q2_heads, c->n_k2_heads};
    const size_t T = (size_t)s->n_ctx, dv = (size_t)c->v_head_dim, vs = (size_t)c->n_v_heads * dv;
    const dintattn__mat *dense[4] = {&L->wq1, &L->wk1, &L->wq2, &L->wk2};
    const dintattn__mat *downs[4] = {&L->q1_down, &L->k1_down, &L->q2_down, &L->k2_down};
    const double *ups[4] = {L->q1_up, L->k1_up, L->q2_up, L->k2_up};
    float *dst[4];
    size_t hs[4], ts[4];                 /* q1, q2: rows of scratch; k1, k2: the head-major cache */
    int ld[4], nproj = diff ? 4 : 2, k, nj = 0, h, t;
    double *out[4], *down[4];
    dintattn__mm jobs[8];
    dst[0] = s->q1;
    dst[1] = s->k1 + (size_t)l * heads[1] * T * d + (size_t)pos0 * d;
    dst[2] = s->q2;
    dst[3] = s->k2 + (size_t)l * heads[3] * T * d + (size_t)pos0 * d;
    for (k = 0; k < 4; k++) {
        hs[k] = k % 2 ? T * d : (size_t)d;
        ts[k] = k % 2 ? (size_t)d : (size_t)heads[k] * d;
    }
    out[0] = s->qk64;
    down[0] = s->down;
    for (k = 0; k < 4; k++) {
        ld[k] = heads[k] * d;
        if (k) out[k] = out[k - 1] + (size_t)n * heads[k - 1] * d;
        if (k && s->down) down[k] = down[k - 1] + (size_t)n * heads[k - 1] * r;
    }
    if (m->qk_factored) {
        jobs[nj++] = dintattn__job64(&L->q_base, s->xn, s->q_base, d);
        jobs[nj++] = dintattn__job64(&L->k_base, s->xn, s->k_base, d);
    }
    for (k = 0; k < nproj; k++)
        jobs[nj++] = m->qk_factored ? dintattn__job64(downs[k], s->xn, down[k], heads[k] * r)
                                    : dintattn__job64(dense[k], s->xn, out[k], ld[k]);
    jobs[nj++] = dintattn__job(&L->wv, s->xn, D, s->vt, (int)vs, 0);
    dintattn__products(s, n, jobs, nj);
    for (k = 0; k < nproj; k++)
        dintattn__finish_qk(s, n, pos0, out[k], k % 2 ? s->k_base : s->q_base, down[k], ups[k], heads[k], dst[k],
                            hs[k], ts[k]);
    for (h = 0; h < c->n_v_heads; h++)
        for (t = 0; t < n; t++)
            memcpy(s->v + (((size_t)l * c->n_v_heads + h) * T + (size_t)(pos0 + t)) * dv, s->vt + t * vs + h * dv,
                   sizeof(float) * dv);
}

/* x += Attn(RMSNorm(x)) for the chunk's n tokens at positions pos0.. */
static void dintattn__attention_block(dintattn_session *s, int l, int n, int pos0)
{
    const dintattn_config *c = &s->model->cfg;
    const dintattn__layer *L = &s->model->layers[l];
    const int D = c->dim, HV = c->n_heads * c->v_head_dim;
    dintattn__mm jo;
    dintattn__rmsnorm_rows(s->xn, s->x, L->attn_norm, n, D, c->norm_eps);
    dintattn__project(s, l, n, pos0);
    s->job_layer = l;
    s->job_n = n;
    s->job_pos0 = pos0;
    if (n > 1) {
        dintattn__attend_blocked(s);
    } else {
        /* the keys and values this token reads; small caches are attended by the caller alone */
        size_t bytes = sizeof(float) * (size_t)(pos0 + 1) *
                       ((size_t)(c->n_k1_heads + c->n_k2_heads) * c->head_dim + (size_t)c->n_v_heads * c->v_head_dim);
        dintattn__pool_run(s, DINTATTN__JOB_HEADS, dintattn__head_runs(c, -1, NULL, NULL),
                           bytes < dintattn__solo_bytes);
    }
    jo = dintattn__job(&L->wo, s->att, HV, s->x, D, 1);
    dintattn__products(s, n, &jo, 1);
}

/* x += w_down @ (act(w_gate @ h) * (w_up @ h)), h = RMSNorm(x). */
static void dintattn__ffn_block(dintattn_session *s, int l, int n)
{
    const dintattn_config *c = &s->model->cfg;
    const dintattn__layer *L = &s->model->layers[l];
    const int D = c->dim, F = c->hidden_dim, silu = c->ffn_act == DINTATTN_FFN_SILU;
    dintattn__mm jobs[2];
    int t;
    dintattn__rmsnorm_rows(s->xn, s->x, L->ffn_norm, n, D, c->norm_eps);
    jobs[0] = dintattn__job(&L->w_gate, s->xn, D, s->gate, F, 0);
    jobs[1] = dintattn__job(&L->w_up, s->xn, D, s->up, F, 0);
    if (n == 1 && silu) { /* decode: SwiGLU row by row inside the product, no hand-off */
        jobs[0].up = &L->w_up;
        dintattn__products(s, n, jobs, 1);
    } else {
        dintattn__products(s, n, jobs, 2);
        if (silu)
            dintattn__swiglu_any(s->simd, s->gate, s->up, (size_t)n * F);
        else
            for (t = 0; t < n; t++)
                dintattn__polynorm(s->gate + (size_t)t * F, s->up + (size_t)t * F, F, L->act_weight, L->act_bias);
    }
    jobs[0] = dintattn__job(&L->w_down, s->gate, F, s->x, D, 1);
    dintattn__products(s, n, jobs, 1);
}

/* Runs n <= n_batch tokens; writes logits of all rows (all) or of the last row to `logits`. */
static void dintattn__forward_chunk(dintattn_session *s, const int *tokens, int n, float *logits, int all)
{
    const dintattn_model *m = s->model;
    const dintattn_config *c = &m->cfg;
    const int D = c->dim, V = c->vocab_size;
    dintattn__mm jo;
    int t, l;
    for (t = 0; t < n; t++) dintattn__mat_rows_any(s->simd, &m->tok_embeddings, tokens[t], 1, s->x + (size_t)t * D);
    for (l = 0; l < c->n_layers; l++) {
        dintattn__attention_block(s, l, n, s->pos);
        dintattn__ffn_block(s, l, n);
    }
    s->pos += n;
    if (!logits) return;
    if (all) {
        dintattn__rmsnorm_rows(s->xn, s->x, m->norm, n, D, c->norm_eps);
    } else {
        dintattn__rmsnorm(s->xn, s->x + (size_t)(n - 1) * D, m->norm, D, c->norm_eps);
        n = 1;
    }
    jo = dintattn__job(&m->output, s->xn, D, logits, V, 0);
    dintattn__products(s, n, &jo, 1);
}

DINTATTN_API dintattn_result dintattn_prefill(dintattn_session *s, const int *tokens, int n, float *logits,
                                              int all_logits, dintattn_error *err)
{
    int i, done;
    if (!s || !tokens) return dintattn__fail(err, DINTATTN_ERR_ARG, "dintattn_prefill: NULL argument");
    if (n <= 0) return dintattn__fail(err, DINTATTN_ERR_ARG, "dintattn_prefill: no tokens (n = %d)", n);
    if (n > s->n_ctx - s->pos)
        return dintattn__fail(err, DINTATTN_ERR_CONTEXT, "%d tokens do not fit: the session holds %d of %d", n,
                              s->pos, s->n_ctx);
    for (i = 0; i < n; i++)
        if (tokens[i] < 0 || tokens[i] >= s->model->cfg.vocab_size)
            return dintattn__fail(err, DINTATTN_ERR_ARG, "token %d at index %d is outside the vocabulary [0, %d)",
                                  tokens[i], i, s->model->cfg.vocab_size);
    for (done = 0; done < n; done += s->n_batch) {
        int k = n - done < s->n_batch ? n - done : s->n_batch, last = done + k == n;
        float *out = NULL;
        if (logits && all_logits) out = logits + (size_t)done * (size_t)s->model->cfg.vocab_size;
        else if (logits && last) out = logits;
        dintattn__forward_chunk(s, tokens + done, k, out, all_logits);
    }
    dintattn__ok(err);
    return DINTATTN_OK;
}

DINTATTN_API dintattn_result dintattn_decode(dintattn_session *s, int token, float *logits, dintattn_error *err)
{
    return dintattn_prefill(s, &token, 1, logits, 0, err);
}

/* ============================================================================================
   8. Sampler
   ============================================================================================ */

typedef struct dintattn__cand {
    float p;  /* a logit, then a probability */
    int id;
} dintattn__cand;

struct dintattn_sampler {
    dintattn_sampler_options opt;
    int n_vocab;
    dintattn__cand *cand;       /* [n_vocab] candidates */
    unsigned *mark;             /* [n_vocab] stamps: the penalty hits each token once */
    unsigned stamp;
    int *history;               /* ring of the last repeat_last_n tokens */
    int n_history, history_pos;
    unsigned long long rng;
};

/* splitmix64: small, fast, and good enough to draw tokens */
static unsigned long long dintattn__rand(unsigned long long *state)
{
    unsigned long long z = (*state += 0x9E3779B97F4A7C15ULL);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
    return z ^ (z >> 31);
}

static double dintattn__uniform(unsigned long long *state)
{
    return (double)(dintattn__rand(state) >> 11) * (1.0 / 9007199254740992.0); /* [0, 1) */
}

DINTATTN_API dintattn_result dintattn_sampler_new(int n_vocab, const dintattn_sampler_options *opt,
                                                  dintattn_sampler **out, dintattn_error *err)
{
    dintattn_sampler *s;
    dintattn_sampler_options o;
    if (out) *out = NULL;
    if (!out || n_vocab < 1) return dintattn__fail(err, DINTATTN_ERR_ARG, "dintattn_sampler_new: n_vocab must be >= 1");
    memset(&o, 0, sizeof o);
    if (opt) o = *opt;
    if (!(o.temperature == o.temperature) || o.temperature > 1e6f)
        return dintattn__fail(err, DINTATTN_ERR_ARG, "temperature must be a number <= 1e6");
    if (o.top_k < 0) return dintattn__fail(err, DINTATTN_ERR_ARG, "top_k must be >= 0");
    if (!(o.top_p >= 0 && o.top_p <= 1)) return dintattn__fail(err, DINTATTN_ERR_ARG, "top_p must be in [0, 1]");
    if (!(o.min_p >= 0 && o.min_p <= 1)) return dintattn__fail(err, DINTATTN_ERR_ARG, "min_p must be in [0, 1]");
    if (!(o.repeat_penalty >= 0 && o.repeat_penalty <= 1e6f))
        return dintattn__fail(err, DINTATTN_ERR_ARG, "repeat_penalty must be in [0, 1e6]");
    if (o.repeat_last_n < 0 || o.repeat_last_n > (1 << 24))
        return dintattn__fail(err, DINTATTN_ERR_ARG, "repeat_last_n must be in [0, 2^24]");
    if (o.repeat_last_n == 0) o.repeat_last_n = 64;
    s = (dintattn_sampler *)dintattn__calloc(1, sizeof *s);
    if (!s) return dintattn__fail(err, DINTATTN_ERR_NOMEM, "out of memory for a sampler");
    s->opt = o;
    s->n_vocab = n_vocab;
    s->cand = (dintattn__cand *)dintattn__calloc((size_t)n_vocab, sizeof *s->cand);
    s->mark = (unsigned *)dintattn__calloc((size_t)n_vocab, sizeof *s->mark);
    s->history = (int *)dintattn__calloc((size_t)o.repeat_last_n, sizeof *s->history);
    if (!s->cand || !s->mark || !s->history) {
        dintattn_sampler_free(s);
        return dintattn__fail(err, DINTATTN_ERR_NOMEM, "out of memory for a sampler");
    }
    dintattn_sampler_reset(s);
    dintattn__ok(err);
    *out = s;
    return DINTATTN_OK;
}

DINTATTN_API void dintattn_sampler_free(dintattn_sampler *s)
{
    if (!s) return;
    DINTATTN_FREE(s->cand);
    DINTATTN_FREE(s->mark);
    DINTATTN_FREE(s->history);
    DINTATTN_FREE(s);
}

DINTATTN_API void dintattn_sampler_reset(dintattn_sampler *s)
{
    s->n_history = s->history_pos = 0;
    s->rng = s->opt.seed;
}

DINTATTN_API void dintattn_sampler_accept(dintattn_sampler *s, int token)
{
    if (token < 0 || token >= s->n_vocab) return;
    s->history[s->history_pos] = token;
    s->history_pos = (s->history_pos + 1) % s->opt.repeat_last_n;
    if (s->n_history < s->opt.repeat_last_n) s->n_history++;
}

/* CTRL's repetition penalty: a recent token's logit is divided by r if positive, else
   multiplied by r; each token once, however often it occurred. */
static void dintattn__penalize(dintattn_sampler *s, float *logits)
{
    float r = s->opt.repeat_penalty;
    int i;
    if (r == 0 || r == 1 || s->n_history == 0) return;
    if (++s->stamp == 0) {
        memset(s->mark, 0, sizeof *s->mark * (size_t)s->n_vocab);
        s->stamp = 1;
    }
    for (i = 0; i < s->n_history; i++) {
        int t = s->history[i];
        if (s->mark[t] == s->stamp) continue;
        s->mark[t] = s->stamp;
        logits[t] = logits[t] > 0 ? logits[t] / r : logits[t] * r;
    }
}

static int dintattn__argmax(const float *x, int n)
{
    int i, best = 0;
    for (i = 1; i < n; i++)
        if (x[i] > x[best]) best = i;
    return best;
}

/* Sifts c[i] down a heap of n; min = 1 keeps the smallest p on top, else the largest. */
static void dintattn__sift(dintattn__cand *c, int n, int i, int min)
{
    for (;;) {
        int l = 2 * i + 1, r = l + 1, top = i;
        if (l < n && (min ? c[l].p < c[top].p : c[l].p > c[top].p)) top = l;
        if (r < n && (min ? c[r].p < c[top].p : c[r].p > c[top].p)) top = r;
        if (top == i) return;
        {
            dintattn__cand t = c[i];
            c[i] = c[top];
            c[top] = t;
        }
        i = top;
    }
}

static int dintattn__cmp_cand_desc(const void *a, const void *b)
{
    const dintattn__cand *x = (const dintattn__cand *)a, *y = (const dintattn__cand *)b;
    if (x->p != y->p) return x->p > y->p ? -1 : 1;
    return x->id - y->id;
}

/* The k largest logits, sorted: a size-k min-heap over the vocabulary, O(V log k). */
static int dintattn__top_k(dintattn__cand *c, const float *logits, int n, int k)
{
    int i, m = 0;
    for (i = 0; i < n; i++) {
        if (m < k) {
            c[m].p = logits[i];
            c[m].id = i;
            if (++m == k) {
                int h;
                for (h = k / 2 - 1; h >= 0; h--) dintattn__sift(c, k, h, 1);
            }
        } else if (logits[i] > c[0].p) {
            c[0].p = logits[i];
            c[0].id = i;
            dintattn__sift(c, k, 0, 1);
        }
    }
    qsort(c, (size_t)m, sizeof *c, dintattn__cmp_cand_desc);
    return m;
}

/* Keeps the most likely candidates whose probabilities sum to top_p. Unsorted candidates are
   popped from a max-heap, so only the kept ones are ever ordered. Returns the new count. */
static int dintattn__top_p(dintattn__cand *c, int n, int sorted, double top_p)
{
    double cum = 0;
    int i, kept = 0;
    if (sorted) {
        for (i = 0; i < n && cum < top_p; i++) cum += c[i].p;
        return i > 0 ? i : 1;
    }
    for (i = n / 2 - 1; i >= 0; i--) dintattn__sift(c, n, i, 0);
    while (kept < n && cum < top_p) { /* pop the largest to the heap's end */
        dintattn__cand t = c[0];
        cum += t.p;
        kept++;
        c[0] = c[n - kept];
        c[n - kept] = t;
        dintattn__sift(c, n - kept, 0, 0);
    }
    /* the kept candidates sit at the end in ascending order: move them to the front, largest first */
    for (i = 0; i < kept; i++) {
        dintattn__cand t = c[i];
        c[i] = c[n - 1 - i];
        c[n - 1 - i] = t;
    }
    return kept > 0 ? kept : 1;
}

DINTATTN_API int dintattn_sampler_sample(dintattn_sampler *s, float *logits)
{
    const dintattn_sampler_options *o = &s->opt;
    const int V = s->n_vocab;
    dintattn__cand *c = s->cand;
    int i, n = V, sorted = 0;
    double sum = 0, r;
    float mx;
    for (i = 0; i < V; i++)
        if (logits[i] != logits[i]) logits[i] = -INFINITY;
    dintattn__penalize(s, logits);
    if (o->temperature <= 0 || o->top_k == 1) return dintattn__argmax(logits, V);
    if (o->top_k > 0 && o->top_k < V) {
        n = dintattn__top_k(c, logits, V, o->top_k);
        sorted = 1;
    } else {
        for (i = 0; i < V; i++) {
            c[i].p = logits[i];
            c[i].id = i;
        }
    }
    mx = c[sorted ? 0 : dintattn__argmax(logits, V)].p;
    if (!(mx > -INFINITY) || mx == INFINITY) return dintattn__argmax(logits, V);
    for (i = 0; i < n; i++) {
        c[i].p = expf((c[i].p - mx) / o->temperature); /* the softmax at this temperature */
        sum += c[i].p;
    }
    for (i = 0; i < n; i++) c[i].p = (float)(c[i].p / sum);
    if (o->top_p > 0 && o->top_p < 1) {
        n = dintattn__top_p(c, n, sorted, o->top_p);
        sorted = 1;
    }
    if (o->min_p > 0) {
        float pmax = 0, floor_p;
        int k = 0;
        for (i = 0; i < n; i++)
            if (c[i].p > pmax) pmax = c[i].p;
        floor_p = o->min_p * pmax;
        for (i = 0; i < n; i++)
            if (c[i].p >= floor_p) c[k++] = c[i];
        n = k;
    }
    for (sum = 0, i = 0; i < n; i++) sum += c[i].p;
    r = dintattn__uniform(&s->rng) * sum;
    for (i = 0; i < n - 1; i++) {
        r -= c[i].p;
        if (r < 0) break;
    }
    return c[i].id;
}

/* ============================================================================================
   9. Tokenizer
   ============================================================================================ */

/* Byte-level BPE as tiktoken does it, with its rank files and the cl100k_base pre-tokenizer:
   1. When special tokens are allowed they cut the text: the earliest occurrence wins (the
      longest one where several start at the same byte); the text between them is ordinary.
   2. Ordinary text is split into pieces where cl100k_base's regex
        (?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*
        |\s*[\r\n]+|\s+(?!\S)|\s+
      matches under the backtracking engine tiktoken uses (Rust's fancy-regex; \s is Unicode
      White_Space, (?i) folds s with U+017F long s). dintattn__pretok spells that regex out.
   3. A piece that is a token is that token. Otherwise its bytes are merged, the adjacent pair
      whose concatenation has the lowest rank first (the leftmost of equals), until no adjacent
      pair is a token. tiktoken searches for that pair linearly (quadratic in the piece); a heap
      finds the same pair in O(log n): a 1 MB piece without spaces takes a fraction of a second.
   Invalid UTF-8 is never refused: each maximal ill-formed subsequence (the bytes that Rust's
   from_utf8_lossy or Python's decode("utf-8", "replace") turn into one U+FFFD) is one character
   of none of the classes L, N or White_Space -- it splits as U+FFFD would, and its bytes are
   encoded by BPE like any others, so decoding returns the input exactly.
   A token's id is its rank. Ranks may leave gaps (ids that are no token), but every single byte
   must have one, or some text could not be encoded: such a rank file is refused. */

enum { DINTATTN__UC_OTHER, DINTATTN__UC_LETTER, DINTATTN__UC_NUMBER, DINTATTN__UC_SPACE };

/* BEGIN GENERATED UNICODE TABLES (tools/gen_unicode.py) -- do not edit by hand.
   Unicode 15.0.0 (UnicodeData.txt, PropList.txt): 806 ranges [first, last] of code points with their class,
   1 = \p{L} (659 ranges), 2 = \p{N} (137), 3 = White_Space (10); every other code point is 0. */
#define DINTATTN__UNICODE_VERSION "15.0.0"
static const uint32_t dintattn__uni_ranges[806][3] = {
    {0x9,0xD,3}, {0x20,0x20,3}, {0x30,0x39,2}, {0x41,0x5A,1}, {0x61,0x7A,1}, {0x85,0x85,3}, {0xA0,0xA0,3},
    {0xAA,0xAA,1}, {0xB2,0xB3,2}, {0xB5,0xB5,1}, {0xB9,0xB9,2}, {0xBA,0xBA,1}, {0xBC,0xBE,2}, {0xC0,0xD6,1},
    {0xD8,0xF6,1}, {0xF8,0x2C1,1}, {0x2C6,0x2D1,1}, {0x2E0,0x2E4,1}, {0x2EC,0x2EC,1}, {0x2EE,0x2EE,1},
    {0x370,0x374,1}, {0x376,0x377,1}, {0x37A,0x37D,1}, {0x37F,0x37F,1}, {0x386,0x386,1}, {0x388,0x38A,1},
    {0x38C,0x38C,1}, {0x38E,0x3A1,1}, {0x3A3,0x3F5,1}, {0x3F7,0x481,1}, {0x48A,0x52F,1}, {0x531,0x556,1},
    {0x559,0x559,1}, {0x560,0x588,1}, {0x5D0,0x5EA,1}, {0x5EF,0x5F2,1}, {0x620,0x64A,1}, {0x660,0x669,2},
    {0x66E,0x66F,1}, {0x671,0x6D3,1}, {0x6D5,0x6D5,1}, {0x6E5,0x6E6,1}, {0x6EE,0x6EF,1}, {0x6F0,0x6F9,2},
    {0x6FA,0x6FC,1}, {0x6FF,0x6FF,1}, {0x710,0x710,1}, {0x712,0x72F,1}, {0x74D,0x7A5,1}, {0x7B1,0x7B1,1},
    {0x7C0,0x7C9,2}, {0x7CA,0x7EA,1}, {0x7F4,0x7F5,1}, {0x7FA,0x7FA,1}, {0x800,0x815,1}, {0x81A,0x81A,1},
    {0x824,0x824,1}, {0x828,0x828,1}, {0x840,0x858,1}, {0x860,0x86A,1}, {0x870,0x887,1}, {0x889,0x88E,1},
    {0x8A0,0x8C9,1}, {0x904,0x939,1}, {0x93D,0x93D,1}, {0x950,0x950,1}, {0x958,0x961,1}, {0x966,0x96F,2},
    {0x971,0x980,1}, {0x985,0x98C,1}, {0x98F,0x990,1}, {0x993,0x9A8,1}, {0x9AA,0x9B0,1}, {0x9B2,0x9B2,1},
    {0x9B6,0x9B9,1}, {0x9BD,0x9BD,1}, {0x9CE,0x9CE,1}, {0x9DC,0x9DD,1}, {0x9DF,0x9E1,1}, {0x9E6,0x9EF,2},
    {0x9F0,0x9F1,1}, {0x9F4,0x9F9,2}, {0x9FC,0x9FC,1}, {0xA05,0xA0A,1}, {0xA0F,0xA10,1}, {0xA13,0xA28,1},
    {0xA2A,0xA30,1}, {0xA32,0xA33,1}, {0xA35,0xA36,1}, {0xA38,0xA39,1}, {0xA59,0xA5C,1}, {0xA5E,0xA5E,1},
    {0xA66,0xA6F,2}, {0xA72,0xA74,1}, {0xA85,0xA8D,1}, {0xA8F,0xA91,1}, {0xA93,0xAA8,1}, {0xAAA,0xAB0,1},
    {0xAB2,0xAB3,1}, {0xAB5,0xAB9,1}, {0xABD,0xABD,1}, {0xAD0,0xAD0,1}, {0xAE0,0xAE1,1}, {0xAE6,0xAEF,2},
    {0xAF9,0xAF9,1}, {0xB05,0xB0C,1}, {0xB0F,0xB10,1}, {0xB13,0xB28,1}, {0xB2A,0xB30,1}, {0xB32,0xB33,1},
    {0xB35,0xB39,1}, {0xB3D,0xB3D,1}, {0xB5C,0xB5D,1}, {0xB5F,0xB61,1}, {0xB66,0xB6F,2}, {0xB71,0xB71,1},
    {0xB72,0xB77,2}, {0xB83,0xB83,1}, {0xB85,0xB8A,1}, {0xB8E,0xB90,1}, {0xB92,0xB95,1}, {0xB99,0xB9A,1},
    {0xB9C,0xB9C,1}, {0xB9E,0xB9F,1}, {0xBA3,0xBA4,1}, {0xBA8,0xBAA,1}, {0xBAE,0xBB9,1}, {0xBD0,0xBD0,1},
    {0xBE6,0xBF2,2}, {0xC05,0xC0C,1}, {0xC0E,0xC10,1}, {0xC12,0xC28,1}, {0xC2A,0xC39,1}, {0xC3D,0xC3D,1},
    {0xC58,0xC5A,1}, {0xC5D,0xC5D,1}, {0xC60,0xC61,1}, {0xC66,0xC6F,2}, {0xC78,0xC7E,2}, {0xC80,0xC80,1},
    {0xC85,0xC8C,1}, {0xC8E,0xC90,1}, {0xC92,0xCA8,1}, {0xCAA,0xCB3,1}, {0xCB5,0xCB9,1}, {0xCBD,0xCBD,1},
    {0xCDD,0xCDE,1}, {0xCE0,0xCE1,1}, {0xCE6,0xCEF,2}, {0xCF1,0xCF2,1}, {0xD04,0xD0C,1}, {0xD0E,0xD10,1},
    {0xD12,0xD3A,1}, {0xD3D,0xD3D,1}, {0xD4E,0xD4E,1}, {0xD54,0xD56,1}, {0xD58,0xD5E,2}, {0xD5F,0xD61,1},
    {0xD66,0xD78,2}, {0xD7A,0xD7F,1}, {0xD85,0xD96,1}, {0xD9A,0xDB1,1}, {0xDB3,0xDBB,1}, {0xDBD,0xDBD,1},
    {0xDC0,0xDC6,1}, {0xDE6,0xDEF,2}, {0xE01,0xE30,1}, {0xE32,0xE33,1}, {0xE40,0xE46,1}, {0xE50,0xE59,2},
    {0xE81,0xE82,1}, {0xE84,0xE84,1}, {0xE86,0xE8A,1}, {0xE8C,0xEA3,1}, {0xEA5,0xEA5,1}, {0xEA7,0xEB0,1},
    {0xEB2,0xEB3,1}, {0xEBD,0xEBD,1}, {0xEC0,0xEC4,1}, {0xEC6,0xEC6,1}, {0xED0,0xED9,2}, {0xEDC,0xEDF,1},
    {0xF00,0xF00,1}, {0xF20,0xF33,2}, {0xF40,0xF47,1}, {0xF49,0xF6C,1}, {0xF88,0xF8C,1}, {0x1000,0x102A,1},
    {0x103F,0x103F,1}, {0x1040,0x1049,2}, {0x1050,0x1055,1}, {0x105A,0x105D,1}, {0x1061,0x1061,1},
    {0x1065,0x1066,1}, {0x106E,0x1070,1}, {0x1075,0x1081,1}, {0x108E,0x108E,1}, {0x1090,0x1099,2},
    {0x10A0,0x10C5,1}, {0x10C7,0x10C7,1}, {0x10CD,0x10CD,1}, {0x10D0,0x10FA,1}, {0x10FC,0x1248,1},
    {0x124A,0x124D,1}, {0x1250,0x1256,1}, {0x1258,0x1258,1}, {0x125A,0x125D,1}, {0x1260,0x1288,1},
    {0x128A,0x128D,1}, {0x1290,0x12B0,1}, {0x12B2,0x12B5,1}, {0x12B8,0x12BE,1}, {0x12C0,0x12C0,1},
    {0x12C2,0x12C5,1}, {0x12C8,0x12D6,1}, {0x12D8,0x1310,1}, {0x1312,0x1315,1}, {0x1318,0x135A,1},
    {0x1369,0x137C,2}, {0x1380,0x138F,1}, {0x13A0,0x13F5,1}, {0x13F8,0x13FD,1}, {0x1401,0x166C,1},
    {0x166F,0x167F,1}, {0x1680,0x1680,3}, {0x1681,0x169A,1}, {0x16A0,0x16EA,1}, {0x16EE,0x16F0,2},
    {0x16F1,0x16F8,1}, {0x1700,0x1711,1}, {0x171F,0x1731,1}, {0x1740,0x1751,1}, {0x1760,0x176C,1},
    {0x176E,0x1770,1}, {0x1780,0x17B3,1}, {0x17D7,0x17D7,1}, {0x17DC,0x17DC,1}, {0x17E0,0x17E9,2},
    {0x17F0,0x17F9,2}, {0x1810,0x1819,2}, {0x1820,0x1878,1}, {0x1880,0x1884,1}, {0x1887,0x18A8,1},
    {0x18AA,0x18AA,1}, {0x18B0,0x18F5,1}, {0x1900,0x191E,1}, {0x1946,0x194F,2}, {0x1950,0x196D,1},
    {0x1970,0x1974,1}, {0x1980,0x19AB,1}, {0x19B0,0x19C9,1}, {0x19D0,0x19DA,2}, {0x1A00,0x1A16,1},
    {0x1A20,0x1A54,1}, {0x1A80,0x1A89,2}, {0x1A90,0x1A99,2}, {0x1AA7,0x1AA7,1}, {0x1B05,0x1B33,1},
    {0x1B45,0x1B4C,1}, {0x1B50,0x1B59,2}, {0x1B83,0x1BA0,1}, {0x1BAE,0x1BAF,1}, {0x1BB0,0x1BB9,2},
    {0x1BBA,0x1BE5,1}, {0x1C00,0x1C23,1}, {0x1C40,0x1C49,2}, {0x1C4D,0x1C4F,1}, {0x1C50,0x1C59,2},
    {0x1C5A,0x1C7D,1}, {0x1C80,0x1C88,1}, {0x1C90,0x1CBA,1}, {0x1CBD,0x1CBF,1}, {0x1CE9,0x1CEC,1},
    {0x1CEE,0x1CF3,1}, {0x1CF5,0x1CF6,1}, {0x1CFA,0x1CFA,1}, {0x1D00,0x1DBF,1}, {0x1E00,0x1F15,1},
    {0x1F18,0x1F1D,1}, {0x1F20,0x1F45,1}, {0x1F48,0x1F4D,1}, {0x1F50,0x1F57,1}, {0x1F59,0x1F59,1},
    {0x1F5B,0x1F5B,1}, {0x1F5D,0x1F5D,1}, {0x1F5F,0x1F7D,1}, {0x1F80,0x1FB4,1}, {0x1FB6,0x1FBC,1},
    {0x1FBE,0x1FBE,1}, {0x1FC2,0x1FC4,1}, {0x1FC6,0x1FCC,1}, {0x1FD0,0x1FD3,1}, {0x1FD6,0x1FDB,1},
    {0x1FE0,0x1FEC,1}, {0x1FF2,0x1FF4,1}, {0x1FF6,0x1FFC,1}, {0x2000,0x200A,3}, {0x2028,0x2029,3},
    {0x202F,0x202F,3}, {0x205F,0x205F,3}, {0x2070,0x2070,2}, {0x2071,0x2071,1}, {0x2074,0x2079,2},
    {0x207F,0x207F,1}, {0x2080,0x2089,2}, {0x2090,0x209C,1}, {0x2102,0x2102,1}, {0x2107,0x2107,1},
    {0x210A,0x2113,1}, {0x2115,0x2115,1}, {0x2119,0x211D,1}, {0x2124,0x2124,1}, {0x2126,0x2126,1},
    {0x2128,0x2128,1}, {0x212A,0x212D,1}, {0x212F,0x2139,1}, {0x213C,0x213F,1}, {0x2145,0x2149,1},
    {0x214E,0x214E,1}, {0x2150,0x2182,2}, {0x2183,0x2184,1}, {0x2185,0x2189,2}, {0x2460,0x249B,2},
    {0x24EA,0x24FF,2}, {0x2776,0x2793,2}, {0x2C00,0x2CE4,1}, {0x2CEB,0x2CEE,1}, {0x2CF2,0x2CF3,1},
    {0x2CFD,0x2CFD,2}, {0x2D00,0x2D25,1}, {0x2D27,0x2D27,1}, {0x2D2D,0x2D2D,1}, {0x2D30,0x2D67,1},
    {0x2D6F,0x2D6F,1}, {0x2D80,0x2D96,1}, {0x2DA0,0x2DA6,1}, {0x2DA8,0x2DAE,1}, {0x2DB0,0x2DB6,1},
    {0x2DB8,0x2DBE,1}, {0x2DC0,0x2DC6,1}, {0x2DC8,0x2DCE,1}, {0x2DD0,0x2DD6,1}, {0x2DD8,0x2DDE,1},
    {0x2E2F,0x2E2F,1}, {0x3000,0x3000,3}, {0x3005,0x3006,1}, {0x3007,0x3007,2}, {0x3021,0x3029,2},
    {0x3031,0x3035,1}, {0x3038,0x303A,2}, {0x303B,0x303C,1}, {0x3041,0x3096,1}, {0x309D,0x309F,1},
    {0x30A1,0x30FA,1}, {0x30FC,0x30FF,1}, {0x3105,0x312F,1}, {0x3131,0x318E,1}, {0x3192,0x3195,2},
    {0x31A0,0x31BF,1}, {0x31F0,0x31FF,1}, {0x3220,0x3229,2}, {0x3248,0x324F,2}, {0x3251,0x325F,2},
    {0x3280,0x3289,2}, {0x32B1,0x32BF,2}, {0x3400,0x4DBF,1}, {0x4E00,0xA48C,1}, {0xA4D0,0xA4FD,1},
    {0xA500,0xA60C,1}, {0xA610,0xA61F,1}, {0xA620,0xA629,2}, {0xA62A,0xA62B,1}, {0xA640,0xA66E,1},
    {0xA67F,0xA69D,1}, {0xA6A0,0xA6E5,1}, {0xA6E6,0xA6EF,2}, {0xA717,0xA71F,1}, {0xA722,0xA788,1},
    {0xA78B,0xA7CA,1}, {0xA7D0,0xA7D1,1}, {0xA7D3,0xA7D3,1}, {0xA7D5,0xA7D9,1}, {0xA7F2,0xA801,1},
    {0xA803,0xA805,1}, {0xA807,0xA80A,1}, {0xA80C,0xA822,1}, {0xA830,0xA835,2}, {0xA840,0xA873,1},
    {0xA882,0xA8B3,1}, {0xA8D0,0xA8D9,2}, {0xA8F2,0xA8F7,1}, {0xA8FB,0xA8FB,1}, {0xA8FD,0xA8FE,1},
    {0xA900,0xA909,2}, {0xA90A,0xA925,1}, {0xA930,0xA946,1}, {0xA960,0xA97C,1}, {0xA984,0xA9B2,1},
    {0xA9CF,0xA9CF,1}, {0xA9D0,0xA9D9,2}, {0xA9E0,0xA9E4,1}, {0xA9E6,0xA9EF,1}, {0xA9F0,0xA9F9,2},
    {0xA9FA,0xA9FE,1}, {0xAA00,0xAA28,1}, {0xAA40,0xAA42,1}, {0xAA44,0xAA4B,1}, {0xAA50,0xAA59,2},
    {0xAA60,0xAA76,1}, {0xAA7A,0xAA7A,1}, {0xAA7E,0xAAAF,1}, {0xAAB1,0xAAB1,1}, {0xAAB5,0xAAB6,1},
    {0xAAB9,0xAABD,1}, {0xAAC0,0xAAC0,1}, {0xAAC2,0xAAC2,1}, {0xAADB,0xAADD,1}, {0xAAE0,0xAAEA,1},
    {0xAAF2,0xAAF4,1}, {0xAB01,0xAB06,1}, {0xAB09,0xAB0E,1}, {0xAB11,0xAB16,1}, {0xAB20,0xAB26,1},
    {0xAB28,0xAB2E,1}, {0xAB30,0xAB5A,1}, {0xAB5C,0xAB69,1}, {0xAB70,0xABE2,1}, {0xABF0,0xABF9,2},
    {0xAC00,0xD7A3,1}, {0xD7B0,0xD7C6,1}, {0xD7CB,0xD7FB,1}, {0xF900,0xFA6D,1}, {0xFA70,0xFAD9,1},
    {0xFB00,0xFB06,1}, {0xFB13,0xFB17,1}, {0xFB1D,0xFB1D,1}, {0xFB1F,0xFB28,1}, {0xFB2A,0xFB36,1},
    {0xFB38,0xFB3C,1}, {0xFB3E,0xFB3E,1}, {0xFB40,0xFB41,1}, {0xFB43,0xFB44,1}, {0xFB46,0xFBB1,1},
    {0xFBD3,0xFD3D,1}, {0xFD50,0xFD8F,1}, {0xFD92,0xFDC7,1}, {0xFDF0,0xFDFB,1}, {0xFE70,0xFE74,1},
    {0xFE76,0xFEFC,1}, {0xFF10,0xFF19,2}, {0xFF21,0xFF3A,1}, {0xFF41,0xFF5A,1}, {0xFF66,0xFFBE,1},
    {0xFFC2,0xFFC7,1}, {0xFFCA,0xFFCF,1}, {0xFFD2,0xFFD7,1}, {0xFFDA,0xFFDC,1}, {0x10000,0x1000B,1},
    {0x1000D,0x10026,1}, {0x10028,0x1003A,1}, {0x1003C,0x1003D,1}, {0x1003F,0x1004D,1}, {0x10050,0x1005D,1},
    {0x10080,0x100FA,1}, {0x10107,0x10133,2}, {0x10140,0x10178,2}, {0x1018A,0x1018B,2}, {0x10280,0x1029C,1},
    {0x102A0,0x102D0,1}, {0x102E1,0x102FB,2}, {0x10300,0x1031F,1}, {0x10320,0x10323,2}, {0x1032D,0x10340,1},
    {0x10341,0x10341,2}, {0x10342,0x10349,1}, {0x1034A,0x1034A,2}, {0x10350,0x10375,1}, {0x10380,0x1039D,1},
    {0x103A0,0x103C3,1}, {0x103C8,0x103CF,1}, {0x103D1,0x103D5,2}, {0x10400,0x1049D,1}, {0x104A0,0x104A9,2},
    {0x104B0,0x104D3,1}, {0x104D8,0x104FB,1}, {0x10500,0x10527,1}, {0x10530,0x10563,1}, {0x10570,0x1057A,1},
    {0x1057C,0x1058A,1}, {0x1058C,0x10592,1}, {0x10594,0x10595,1}, {0x10597,0x105A1,1}, {0x105A3,0x105B1,1},
    {0x105B3,0x105B9,1}, {0x105BB,0x105BC,1}, {0x10600,0x10736,1}, {0x10740,0x10755,1}, {0x10760,0x10767,1},
    {0x10780,0x10785,1}, {0x10787,0x107B0,1}, {0x107B2,0x107BA,1}, {0x10800,0x10805,1}, {0x10808,0x10808,1},
    {0x1080A,0x10835,1}, {0x10837,0x10838,1}, {0x1083C,0x1083C,1}, {0x1083F,0x10855,1}, {0x10858,0x1085F,2},
    {0x10860,0x10876,1}, {0x10879,0x1087F,2}, {0x10880,0x1089E,1}, {0x108A7,0x108AF,2}, {0x108E0,0x108F2,1},
    {0x108F4,0x108F5,1}, {0x108FB,0x108FF,2}, {0x10900,0x10915,1}, {0x10916,0x1091B,2}, {0x10920,0x10939,1},
    {0x10980,0x109B7,1}, {0x109BC,0x109BD,2}, {0x109BE,0x109BF,1}, {0x109C0,0x109CF,2}, {0x109D2,0x109FF,2},
    {0x10A00,0x10A00,1}, {0x10A10,0x10A13,1}, {0x10A15,0x10A17,1}, {0x10A19,0x10A35,1}, {0x10A40,0x10A48,2},
    {0x10A60,0x10A7C,1}, {0x10A7D,0x10A7E,2}, {0x10A80,0x10A9C,1}, {0x10A9D,0x10A9F,2}, {0x10AC0,0x10AC7,1},
    {0x10AC9,0x10AE4,1}, {0x10AEB,0x10AEF,2}, {0x10B00,0x10B35,1}, {0x10B40,0x10B55,1}, {0x10B58,0x10B5F,2},
    {0x10B60,0x10B72,1}, {0x10B78,0x10B7F,2}, {0x10B80,0x10B91,1}, {0x10BA9,0x10BAF,2}, {0x10C00,0x10C48,1},
    {0x10C80,0x10CB2,1}, {0x10CC0,0x10CF2,1}, {0x10CFA,0x10CFF,2}, {0x10D00,0x10D23,1}, {0x10D30,0x10D39,2},
    {0x10E60,0x10E7E,2}, {0x10E80,0x10EA9,1}, {0x10EB0,0x10EB1,1}, {0x10F00,0x10F1C,1}, {0x10F1D,0x10F26,2},
    {0x10F27,0x10F27,1}, {0x10F30,0x10F45,1}, {0x10F51,0x10F54,2}, {0x10F70,0x10F81,1}, {0x10FB0,0x10FC4,1},
    {0x10FC5,0x10FCB,2}, {0x10FE0,0x10FF6,1}, {0x11003,0x11037,1}, {0x11052,0x1106F,2}, {0x11071,0x11072,1},
    {0x11075,0x11075,1}, {0x11083,0x110AF,1}, {0x110D0,0x110E8,1}, {0x110F0,0x110F9,2}, {0x11103,0x11126,1},
    {0x11136,0x1113F,2}, {0x11144,0x11144,1}, {0x11147,0x11147,1}, {0x11150,0x11172,1}, {0x11176,0x11176,1},
    {0x11183,0x111B2,1}, {0x111C1,0x111C4,1}, {0x111D0,0x111D9,2}, {0x111DA,0x111DA,1}, {0x111DC,0x111DC,1},
    {0x111E1,0x111F4,2}, {0x11200,0x11211,1}, {0x11213,0x1122B,1}, {0x1123F,0x11240,1}, {0x11280,0x11286,1},
    {0x11288,0x11288,1}, {0x1128A,0x1128D,1}, {0x1128F,0x1129D,1}, {0x1129F,0x112A8,1}, {0x112B0,0x112DE,1},
    {0x112F0,0x112F9,2}, {0x11305,0x1130C,1}, {0x1130F,0x11310,1}, {0x11313,0x11328,1}, {0x1132A,0x11330,1},
    {0x11332,0x11333,1}, {0x11335,0x11339,1}, {0x1133D,0x1133D,1}, {0x11350,0x11350,1}, {0x1135D,0x11361,1},
    {0x11400,0x11434,1}, {0x11447,0x1144A,1}, {0x11450,0x11459,2}, {0x1145F,0x11461,1}, {0x11480,0x114AF,1},
    {0x114C4,0x114C5,1}, {0x114C7,0x114C7,1}, {0x114D0,0x114D9,2}, {0x11580,0x115AE,1}, {0x115D8,0x115DB,1},
    {0x11600,0x1162F,1}, {0x11644,0x11644,1}, {0x11650,0x11659,2}, {0x11680,0x116AA,1}, {0x116B8,0x116B8,1},
    {0x116C0,0x116C9,2}, {0x11700,0x1171A,1}, {0x11730,0x1173B,2}, {0x11740,0x11746,1}, {0x11800,0x1182B,1},
    {0x118A0,0x118DF,1}, {0x118E0,0x118F2,2}, {0x118FF,0x11906,1}, {0x11909,0x11909,1}, {0x1190C,0x11913,1},
    {0x11915,0x11916,1}, {0x11918,0x1192F,1}, {0x1193F,0x1193F,1}, {0x11941,0x11941,1}, {0x11950,0x11959,2},
    {0x119A0,0x119A7,1}, {0x119AA,0x119D0,1}, {0x119E1,0x119E1,1}, {0x119E3,0x119E3,1}, {0x11A00,0x11A00,1},
    {0x11A0B,0x11A32,1}, {0x11A3A,0x11A3A,1}, {0x11A50,0x11A50,1}, {0x11A5C,0x11A89,1}, {0x11A9D,0x11A9D,1},
    {0x11AB0,0x11AF8,1}, {0x11C00,0x11C08,1}, {0x11C0A,0x11C2E,1}, {0x11C40,0x11C40,1}, {0x11C50,0x11C6C,2},
    {0x11C72,0x11C8F,1}, {0x11D00,0x11D06,1}, {0x11D08,0x11D09,1}, {0x11D0B,0x11D30,1}, {0x11D46,0x11D46,1},
    {0x11D50,0x11D59,2}, {0x11D60,0x11D65,1}, {0x11D67,0x11D68,1}, {0x11D6A,0x11D89,1}, {0x11D98,0x11D98,1},
    {0x11DA0,0x11DA9,2}, {0x11EE0,0x11EF2,1}, {0x11F02,0x11F02,1}, {0x11F04,0x11F10,1}, {0x11F12,0x11F33,1},
    {0x11F50,0x11F59,2}, {0x11FB0,0x11FB0,1}, {0x11FC0,0x11FD4,2}, {0x12000,0x12399,1}, {0x12400,0x1246E,2},
    {0x12480,0x12543,1}, {0x12F90,0x12FF0,1}, {0x13000,0x1342F,1}, {0x13441,0x13446,1}, {0x14400,0x14646,1},
    {0x16800,0x16A38,1}, {0x16A40,0x16A5E,1}, {0x16A60,0x16A69,2}, {0x16A70,0x16ABE,1}, {0x16AC0,0x16AC9,2},
    {0x16AD0,0x16AED,1}, {0x16B00,0x16B2F,1}, {0x16B40,0x16B43,1}, {0x16B50,0x16B59,2}, {0x16B5B,0x16B61,2},
    {0x16B63,0x16B77,1}, {0x16B7D,0x16B8F,1}, {0x16E40,0x16E7F,1}, {0x16E80,0x16E96,2}, {0x16F00,0x16F4A,1},
    {0x16F50,0x16F50,1}, {0x16F93,0x16F9F,1}, {0x16FE0,0x16FE1,1}, {0x16FE3,0x16FE3,1}, {0x17000,0x187F7,1},
    {0x18800,0x18CD5,1}, {0x18D00,0x18D08,1}, {0x1AFF0,0x1AFF3,1}, {0x1AFF5,0x1AFFB,1}, {0x1AFFD,0x1AFFE,1},
    {0x1B000,0x1B122,1}, {0x1B132,0x1B132,1}, {0x1B150,0x1B152,1}, {0x1B155,0x1B155,1}, {0x1B164,0x1B167,1},
    {0x1B170,0x1B2FB,1}, {0x1BC00,0x1BC6A,1}, {0x1BC70,0x1BC7C,1}, {0x1BC80,0x1BC88,1}, {0x1BC90,0x1BC99,1},
    {0x1D2C0,0x1D2D3,2}, {0x1D2E0,0x1D2F3,2}, {0x1D360,0x1D378,2}, {0x1D400,0x1D454,1}, {0x1D456,0x1D49C,1},
    {0x1D49E,0x1D49F,1}, {0x1D4A2,0x1D4A2,1}, {0x1D4A5,0x1D4A6,1}, {0x1D4A9,0x1D4AC,1}, {0x1D4AE,0x1D4B9,1},
    {0x1D4BB,0x1D4BB,1}, {0x1D4BD,0x1D4C3,1}, {0x1D4C5,0x1D505,1}, {0x1D507,0x1D50A,1}, {0x1D50D,0x1D514,1},
    {0x1D516,0x1D51C,1}, {0x1D51E,0x1D539,1}, {0x1D53B,0x1D53E,1}, {0x1D540,0x1D544,1}, {0x1D546,0x1D546,1},
    {0x1D54A,0x1D550,1}, {0x1D552,0x1D6A5,1}, {0x1D6A8,0x1D6C0,1}, {0x1D6C2,0x1D6DA,1}, {0x1D6DC,0x1D6FA,1},
    {0x1D6FC,0x1D714,1}, {0x1D716,0x1D734,1}, {0x1D736,0x1D74E,1}, {0x1D750,0x1D76E,1}, {0x1D770,0x1D788,1},
    {0x1D78A,0x1D7A8,1}, {0x1D7AA,0x1D7C2,1}, {0x1D7C4,0x1D7CB,1}, {0x1D7CE,0x1D7FF,2}, {0x1DF00,0x1DF1E,1},
    {0x1DF25,0x1DF2A,1}, {0x1E030,0x1E06D,1}, {0x1E100,0x1E12C,1}, {0x1E137,0x1E13D,1}, {0x1E140,0x1E149,2},
    {0x1E14E,0x1E14E,1}, {0x1E290,0x1E2AD,1}, {0x1E2C0,0x1E2EB,1}, {0x1E2F0,0x1E2F9,2}, {0x1E4D0,0x1E4EB,1},
    {0x1E4F0,0x1E4F9,2}, {0x1E7E0,0x1E7E6,1}, {0x1E7E8,0x1E7EB,1}, {0x1E7ED,0x1E7EE,1}, {0x1E7F0,0x1E7FE,1},
    {0x1E800,0x1E8C4,1}, {0x1E8C7,0x1E8CF,2}, {0x1E900,0x1E943,1}, {0x1E94B,0x1E94B,1}, {0x1E950,0x1E959,2},
    {0x1EC71,0x1ECAB,2}, {0x1ECAD,0x1ECAF,2}, {0x1ECB1,0x1ECB4,2}, {0x1ED01,0x1ED2D,2}, {0x1ED2F,0x1ED3D,2},
    {0x1EE00,0x1EE03,1}, {0x1EE05,0x1EE1F,1}, {0x1EE21,0x1EE22,1}, {0x1EE24,0x1EE24,1}, {0x1EE27,0x1EE27,1},
    {0x1EE29,0x1EE32,1}, {0x1EE34,0x1EE37,1}, {0x1EE39,0x1EE39,1}, {0x1EE3B,0x1EE3B,1}, {0x1EE42,0x1EE42,1},
    {0x1EE47,0x1EE47,1}, {0x1EE49,0x1EE49,1}, {0x1EE4B,0x1EE4B,1}, {0x1EE4D,0x1EE4F,1}, {0x1EE51,0x1EE52,1},
    {0x1EE54,0x1EE54,1}, {0x1EE57,0x1EE57,1}, {0x1EE59,0x1EE59,1}, {0x1EE5B,0x1EE5B,1}, {0x1EE5D,0x1EE5D,1},
    {0x1EE5F,0x1EE5F,1}, {0x1EE61,0x1EE62,1}, {0x1EE64,0x1EE64,1}, {0x1EE67,0x1EE6A,1}, {0x1EE6C,0x1EE72,1},
    {0x1EE74,0x1EE77,1}, {0x1EE79,0x1EE7C,1}, {0x1EE7E,0x1EE7E,1}, {0x1EE80,0x1EE89,1}, {0x1EE8B,0x1EE9B,1},
    {0x1EEA1,0x1EEA3,1}, {0x1EEA5,0x1EEA9,1}, {0x1EEAB,0x1EEBB,1}, {0x1F100,0x1F10C,2}, {0x1FBF0,0x1FBF9,2},
    {0x20000,0x2A6DF,1}, {0x2A700,0x2B739,1}, {0x2B740,0x2B81D,1}, {0x2B820,0x2CEA1,1}, {0x2CEB0,0x2EBE0,1},
    {0x2F800,0x2FA1D,1}, {0x30000,0x3134A,1}, {0x31350,0x323AF,1},
};
/* END GENERATED UNICODE TABLES */

#define DINTATTN__MAX_RANK (INT_MAX - 1) /* so that n_vocab = max id + 1 is an int */

/* The class of code point cp: \p{L}, \p{N}, White_Space or none of them. */
static int dintattn__uni_class(uint32_t cp)
{
    size_t lo = 0, hi = sizeof dintattn__uni_ranges / sizeof dintattn__uni_ranges[0];
    if (cp < 0x80) {
        if ((cp | 0x20) >= 'a' && (cp | 0x20) <= 'z') return DINTATTN__UC_LETTER;
        if (cp >= '0' && cp <= '9') return DINTATTN__UC_NUMBER;
        return cp == ' ' || (cp >= 0x09 && cp <= 0x0D) ? DINTATTN__UC_SPACE : DINTATTN__UC_OTHER;
    }
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (cp < dintattn__uni_ranges[mid][0]) hi = mid;
        else if (cp > dintattn__uni_ranges[mid][1]) lo = mid + 1;
        else return (int)dintattn__uni_ranges[mid][2];
    }
    return DINTATTN__UC_OTHER;
}

/* One character of the text: its code point (U+FFFD for an ill-formed sequence), class and
   length in bytes. */
typedef struct dintattn__uchar {
    uint32_t cp;
    int cls;
    size_t len;
} dintattn__uchar;

/* The character at s[i] (i < n), decoded by the Unicode standard's table of well-formed UTF-8
   (no overlongs, surrogates or code points past U+10FFFF); an ill-formed sequence ends at its
   first byte that cannot continue it. */
static dintattn__uchar dintattn__uchar_at(const unsigned char *s, size_t n, size_t i)
{
    dintattn__uchar u;
    unsigned c = s[i], lo = 0x80, hi = 0xBF;
    size_t need, k;
    u.cp = 0xFFFD;
    u.cls = DINTATTN__UC_OTHER;
    u.len = 1;
    if (c < 0x80) {
        u.cp = c;
        u.cls = dintattn__uni_class(c);
        return u;
    }
    if (c >= 0xC2 && c <= 0xDF) need = 1;
    else if (c >= 0xE0 && c <= 0xEF) need = 2;
    else if (c >= 0xF0 && c <= 0xF4) need = 3;
    else return u;
    if (c == 0xE0) lo = 0xA0;
    if (c == 0xED) hi = 0x9F;
    if (c == 0xF0) lo = 0x90;
    if (c == 0xF4) hi = 0x8F;
    c &= 0x3F >> need;
    for (k = 1; k <= need; k++) {
        if (i + k >= n || s[i + k] < lo || s[i + k] > hi) {
            u.len = k;
            return u;
        }
        c = c << 6 | (s[i + k] & 0x3Fu);
        lo = 0x80;
        hi = 0xBF;
    }
    u.cp = c;
    u.cls = dintattn__uni_class(c);
    u.len = need + 1;
    return u;
}

static int dintattn__is_crlf(uint32_t cp) { return cp == '\r' || cp == '\n'; }

/* Case folding as (?i:) applies it to the contraction letters: ASCII, and U+017F (long s),
   whose simple case folding is 's'. */
static uint32_t dintattn__fold(uint32_t cp)
{
    if (cp >= 'A' && cp <= 'Z') return cp + 32;
    return cp == 0x17F ? 's' : cp;
}

/* The end of the piece that starts at s[i] (i < n): where cl100k_base's regex, tried at i, stops.
   Each block below is one alternative of the regex, in its order; the first that matches wins. */
static size_t dintattn__pretok(const unsigned char *s, size_t n, size_t i)
{
    dintattn__uchar c = dintattn__uchar_at(s, n, i), d;
    size_t j, last, after_crlf;
    int count;
    /* (?i:'s|'t|'re|'ve|'m|'ll|'d) */
    if (c.cp == '\'' && i + 1 < n) {
        uint32_t f;
        d = dintattn__uchar_at(s, n, i + 1);
        j = i + 1 + d.len;
        f = dintattn__fold(d.cp);
        if (f == 's' || f == 't' || f == 'm' || f == 'd') return j;
        if ((f == 'r' || f == 'v' || f == 'l') && j < n) {
            dintattn__uchar e = dintattn__uchar_at(s, n, j);
            if (dintattn__fold(e.cp) == (f == 'l' ? 'l' : 'e')) return j + e.len;
        }
    }
    /* [^\r\n\p{L}\p{N}]?\p{L}+ */
    j = i;
    if (c.cls != DINTATTN__UC_LETTER && c.cls != DINTATTN__UC_NUMBER && !dintattn__is_crlf(c.cp) && i + c.len < n &&
        dintattn__uchar_at(s, n, i + c.len).cls == DINTATTN__UC_LETTER)
        j = i + c.len;
    if (j > i || c.cls == DINTATTN__UC_LETTER) {
        for (; j < n; j += d.len)
            if ((d = dintattn__uchar_at(s, n, j)).cls != DINTATTN__UC_LETTER) break;
        return j;
    }
    /* \p{N}{1,3} */
    if (c.cls == DINTATTN__UC_NUMBER) {
        for (j = i, count = 0; j < n && count < 3; j += d.len, count++)
            if ((d = dintattn__uchar_at(s, n, j)).cls != DINTATTN__UC_NUMBER) break;
        return j;
    }
    /*  ?[^\s\p{L}\p{N}]+[\r\n]* */
    j = i;
    if (c.cp == ' ' && i + 1 < n && dintattn__uchar_at(s, n, i + 1).cls == DINTATTN__UC_OTHER) j = i + 1;
    if (j > i || c.cls == DINTATTN__UC_OTHER) {
        for (; j < n; j += d.len)
            if ((d = dintattn__uchar_at(s, n, j)).cls != DINTATTN__UC_OTHER) break;
        while (j < n && (s[j] == '\r' || s[j] == '\n')) j++;
        return j;
    }
    /* c is white space. \s*[\r\n]+ backtracks to just after the run's last CR or LF; failing
       that, \s+(?!\S) gives the run's last character back to the piece after it (" word"),
       unless the run ends the text; failing that (a run of one), \s+ takes the run. */
    last = i;
    after_crlf = 0;
    for (j = i; j < n; j += d.len) {
        d = dintattn__uchar_at(s, n, j);
        if (d.cls != DINTATTN__UC_SPACE) break;
        if (dintattn__is_crlf(d.cp)) after_crlf = j + 1;
        last = j;
    }
    if (after_crlf) return after_crlf;
    if (j == n || last == i) return j;
    return last;
}

/* --- the rank table ---------------------------------------------------------------------- */

typedef struct dintattn__token {
    uint32_t off, len; /* the token's bytes: bytes[off .. off + len) */
    int id;
    int line;          /* its line in the rank file, for error messages */
} dintattn__token;

typedef struct dintattn__special {
    char *text;
    size_t len;
    int id;
} dintattn__special;

struct dintattn_tokenizer {
    unsigned char *bytes;       /* every ordinary token's bytes, one after another */
    dintattn__token *tokens;    /* sorted by id */
    int n_tokens;
    int *slots;                 /* hash table, open addressing: an index into tokens, or -1 */
    size_t mask;                /* slots - 1 (a power of two minus one) */
    size_t max_len;             /* the longest ordinary token in bytes */
    int byte_id[256];           /* the token of each single byte */
    dintattn__special *special;
    int n_special, cap_special;
    int n_vocab, bos, eos;
};

/* FNV-1a: token lookups hash short strings, for which it is fast and spreads well enough. */
static size_t dintattn__hash(const unsigned char *p, size_t n)
{
    uint64_t h = 14695981039346656037ull;
    size_t i;
    for (i = 0; i < n; i++) h = (h ^ p[i]) * 1099511628211ull;
    return (size_t)(h ^ (h >> 32));
}

/* The slot where bytes p[0..n) are, or the empty slot where they would go. */
static size_t dintattn__slot(const dintattn_tokenizer *t, const unsigned char *p, size_t n)
{
    size_t h = dintattn__hash(p, n) & t->mask;
    for (;; h = (h + 1) & t->mask) {
        int k = t->slots[h];
        if (k < 0) return h;
        if (t->tokens[k].len == n && memcmp(t->bytes + t->tokens[k].off, p, n) == 0) return h;
    }
}

/* The id of the ordinary token with bytes p[0..n), or -1. */
static int dintattn__lookup(const dintattn_tokenizer *t, const unsigned char *p, size_t n)
{
    int k;
    if (n > t->max_len) return -1;
    k = t->slots[dintattn__slot(t, p, n)];
    return k < 0 ? -1 : t->tokens[k].id;
}

/* Decodes strict base64 (padded, canonical) s[0..n) to out; returns the byte count or -1. */
static long dintattn__base64(const unsigned char *s, size_t n, unsigned char *out)
{
    size_t i, o = 0;
    if (n == 0 || n % 4) return -1;
    for (i = 0; i < n; i += 4) {
        unsigned v[4], k, pad = 0;
        for (k = 0; k < 4; k++) {
            unsigned char c = s[i + k];
            if (c >= 'A' && c <= 'Z') v[k] = (unsigned)(c - 'A');
            else if (c >= 'a' && c <= 'z') v[k] = (unsigned)(c - 'a' + 26);
            else if (c >= '0' && c <= '9') v[k] = (unsigned)(c - '0' + 52);
            else if (c == '+') v[k] = 62;
            else if (c == '/') v[k] = 63;
            else if (c == '=' && i + 4 == n && k >= 2) {
                v[k] = 0;
                pad++;
            } else return -1;
            if (pad && c != '=') return -1; /* data after padding */
        }
        if ((pad == 1 && (v[2] & 3)) || (pad == 2 && (v[1] & 15))) return -1; /* bits that say nothing */
        out[o++] = (unsigned char)(v[0] << 2 | v[1] >> 4);
        if (pad < 2) out[o++] = (unsigned char)((v[1] & 15) << 4 | v[2] >> 2);
        if (pad < 1) out[o++] = (unsigned char)((v[2] & 3) << 6 | v[3]);
    }
    return (long)o;
}

static int dintattn__cmp_token_id(const void *a, const void *b)
{
    const dintattn__token *x = (const dintattn__token *)a, *y = (const dintattn__token *)b;
    return (x->id > y->id) - (x->id < y->id);
}

/* Parses a rank file into t (freshly zeroed): one "BASE64 RANK" line per token, "\n" or "\r\n"
   line ends (the last one optional), nothing else. `what` names the file in messages. */
static dintattn_result dintattn__parse_ranks(dintattn_tokenizer *t, const unsigned char *s, size_t n,
                                             const char *what, dintattn_error *err)
{
    size_t pos, lines = 0, used = 0, cap_slots = 16, i;
    int k;
    if (n == 0) return dintattn__fail(err, DINTATTN_ERR_TOKENIZER, "%s is empty", what);
    if (n > (size_t)INT_MAX)
        return dintattn__fail(err, DINTATTN_ERR_TOKENIZER, "%s is larger than 2 GiB", what);
    for (pos = 0; pos < n; pos++) lines += s[pos] == '\n';
    lines += s[n - 1] != '\n';
    t->tokens = (dintattn__token *)dintattn__calloc(lines, sizeof *t->tokens);
    t->bytes = (unsigned char *)dintattn__alloc(n / 4 * 3 + 3);
    if (!t->tokens || !t->bytes) return dintattn__fail(err, DINTATTN_ERR_NOMEM, "out of memory for %s", what);
    for (pos = 0; pos < n; t->n_tokens++) {
        const unsigned char *line = s + pos, *end = (const unsigned char *)memchr(line, '\n', n - pos), *sp, *d;
        int ln = t->n_tokens + 1;
        long got, rank = 0;
        dintattn__token *tk = &t->tokens[t->n_tokens];
        if (!end) end = s + n;
        pos = (size_t)(end - s) + 1;
        if (end > line && end[-1] == '\r') end--;
        if (end == line) return dintattn__fail(err, DINTATTN_ERR_TOKENIZER, "%s line %d is empty", what, ln);
        sp = (const unsigned char *)memchr(line, ' ', (size_t)(end - line));
        if (!sp || sp + 1 == end)
            return dintattn__fail(err, DINTATTN_ERR_TOKENIZER, "%s line %d: expected 'BASE64 RANK'", what, ln);
        got = dintattn__base64(line, (size_t)(sp - line), t->bytes + used);
        if (got < 0)
            return dintattn__fail(err, DINTATTN_ERR_TOKENIZER, "%s line %d: '%.*s' is not base64 (padded, canonical)",
                                  what, ln, (int)(sp - line < 40 ? sp - line : 40), (const char *)line);
        for (d = sp + 1; d < end; d++) {
            if (*d < '0' || *d > '9' || rank > (DINTATTN__MAX_RANK - (*d - '0')) / 10)
                return dintattn__fail(err, DINTATTN_ERR_TOKENIZER, "%s line %d: rank '%.*s' is not an integer in [0, %d]",
                                      what, ln, (int)(end - sp - 1 < 20 ? end - sp - 1 : 20), (const char *)sp + 1,
                                      DINTATTN__MAX_RANK);
            rank = rank * 10 + (*d - '0');
        }
        tk->off = (uint32_t)used;
        tk->len = (uint32_t)got;
        tk->id = (int)rank;
        tk->line = ln;
        used += (size_t)got;
        if ((size_t)got > t->max_len) t->max_len = (size_t)got;
    }
    qsort(t->tokens, (size_t)t->n_tokens, sizeof *t->tokens, dintattn__cmp_token_id);
    for (k = 1; k < t->n_tokens; k++)
        if (t->tokens[k].id == t->tokens[k - 1].id)
            return dintattn__fail(err, DINTATTN_ERR_TOKENIZER, "%s: rank %d is on lines %d and %d", what, t->tokens[k].id,
                                  t->tokens[k - 1].line < t->tokens[k].line ? t->tokens[k - 1].line : t->tokens[k].line,
                                  t->tokens[k - 1].line < t->tokens[k].line ? t->tokens[k].line : t->tokens[k - 1].line);
    while (cap_slots < 2 * (size_t)t->n_tokens) cap_slots *= 2; /* a load factor <= 1/2 */
    t->slots = (int *)dintattn__alloc(cap_slots * sizeof *t->slots);
    if (!t->slots) return dintattn__fail(err, DINTATTN_ERR_NOMEM, "out of memory for %s", what);
    for (i = 0; i < cap_slots; i++) t->slots[i] = -1;
    t->mask = cap_slots - 1;
    for (k = 0; k < t->n_tokens; k++) {
        const dintattn__token *tk = &t->tokens[k];
        size_t h = dintattn__slot(t, t->bytes + tk->off, tk->len);
        if (t->slots[h] >= 0) {
            const dintattn__token *o = &t->tokens[t->slots[h]];
            return dintattn__fail(err, DINTATTN_ERR_TOKENIZER, "%s: lines %d and %d hold the same token", what,
                                  o->line < tk->line ? o->line : tk->line, o->line < tk->line ? tk->line : o->line);
        }
        t->slots[h] = k;
    }
    for (k = 0; k < 256; k++) {
        unsigned char b = (unsigned char)k;
        if ((t->byte_id[k] = dintattn__lookup(t, &b, 1)) < 0)
            return dintattn__fail(err, DINTATTN_ERR_TOKENIZER,
                                  "%s has no token for the byte 0x%02X: every single byte needs a rank", what, k);
    }
    t->n_vocab = t->tokens[t->n_tokens - 1].id + 1;
    return DINTATTN_OK;
}

DINTATTN_API void dintattn_tokenizer_free(dintattn_tokenizer *t)
{
    int k;
    if (!t) return;
    for (k = 0; k < t->n_special; k++) DINTATTN_FREE(t->special[k].text);
    DINTATTN_FREE(t->special);
    DINTATTN_FREE(t->slots);
    DINTATTN_FREE(t->tokens);
    DINTATTN_FREE(t->bytes);
    DINTATTN_FREE(t);
}

static dintattn_result dintattn__tokenizer_new(const void *ranks, size_t size, const char *what,
                                               dintattn_tokenizer **tok, dintattn_error *err)
{
    dintattn_result r;
    dintattn_tokenizer *t = (dintattn_tokenizer *)dintattn__calloc(1, sizeof *t);
    if (!t) return dintattn__fail(err, DINTATTN_ERR_NOMEM, "out of memory");
    t->bos = t->eos = -1;
    if ((r = dintattn__parse_ranks(t, (const unsigned char *)ranks, size, what, err)) != DINTATTN_OK) {
        dintattn_tokenizer_free(t);
        return r;
    }
    *tok = t;
    dintattn__ok(err);
    return DINTATTN_OK;
}

DINTATTN_API dintattn_result dintattn_tokenizer_from_memory(const void *ranks, size_t size, dintattn_tokenizer **tok,
                                                            dintattn_error *err)
{
    if (tok) *tok = NULL;
    if (!tok || (!ranks && size))
        return dintattn__fail(err, DINTATTN_ERR_ARG, "dintattn_tokenizer_from_memory: NULL argument");
    return dintattn__tokenizer_new(ranks, size, "the rank file", tok, err);
}

DINTATTN_API dintattn_result dintattn_tokenizer_load(const char *path, dintattn_tokenizer **tok, dintattn_error *err)
{
    char what[240];
    unsigned char *buf;
    struct stat st;
    size_t n = 0;
    dintattn_result r;
    int fd;
    if (tok) *tok = NULL;
    if (!tok || !path) return dintattn__fail(err, DINTATTN_ERR_ARG, "dintattn_tokenizer_load: NULL argument");
    fd = open(path, O_RDONLY | O_NONBLOCK); /* a FIFO must not block us before fstat refuses it */
    if (fd < 0) return dintattn__fail(err, DINTATTN_ERR_IO, "cannot open '%.200s': %s", path, strerror(errno));
    if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
        close(fd);
        return dintattn__fail(err, DINTATTN_ERR_IO, "'%.200s' is not a regular file", path);
    }
    if ((unsigned long long)st.st_size > (unsigned long long)INT_MAX) {
        close(fd);
        return dintattn__fail(err, DINTATTN_ERR_TOKENIZER, "rank file '%.200s' is larger than 2 GiB", path);
    }
    if (!(buf = (unsigned char *)dintattn__alloc((size_t)st.st_size))) {
        close(fd);
        return dintattn__fail(err, DINTATTN_ERR_NOMEM, "out of memory reading '%.200s'", path);
    }
    while (n < (size_t)st.st_size) {
        ssize_t got = read(fd, buf + n, (size_t)st.st_size - n);
        if (got < 0 && errno == EINTR) continue;
        if (got <= 0) break;
        n += (size_t)got;
    }
    close(fd);
    if (n < (size_t)st.st_size) {
        DINTATTN_FREE(buf);
        return dintattn__fail(err, DINTATTN_ERR_IO, "cannot read '%.200s'", path);
    }
    snprintf(what, sizeof what, "rank file '%.200s'", path);
    r = dintattn__tokenizer_new(buf, n, what, tok, err);
    DINTATTN_FREE(buf);
    return r;
}

DINTATTN_API dintattn_result dintattn_tokenizer_add_special(dintattn_tokenizer *t, const char *text, int id,
                                                            dintattn_error *err)
{
    dintattn__special *sp;
    size_t len;
    int k;
    if (!t || !text || !text[0])
        return dintattn__fail(err, DINTATTN_ERR_ARG, "dintattn_tokenizer_add_special: NULL or empty text");
    len = strlen(text);
    if (id < 0 || id > DINTATTN__MAX_RANK)
        return dintattn__fail(err, DINTATTN_ERR_ARG, "special token '%.60s': id %d is not in [0, %d]", text, id,
                              DINTATTN__MAX_RANK);
    if (dintattn_tokenizer_token(t, id, NULL))
        return dintattn__fail(err, DINTATTN_ERR_ARG, "special token '%.60s': id %d is already a token", text, id);
    for (k = 0; k < t->n_special; k++)
        if (t->special[k].len == len && memcmp(t->special[k].text, text, len) == 0)
            return dintattn__fail(err, DINTATTN_ERR_ARG, "special token '%.60s' is already id %d", text,
                                  t->special[k].id);
    if (t->n_special == t->cap_special) {
        int cap = t->cap_special ? t->cap_special * 2 : 8;
        dintattn__special *grown = (dintattn__special *)dintattn__calloc((size_t)cap, sizeof *grown);
        if (!grown) return dintattn__fail(err, DINTATTN_ERR_NOMEM, "out of memory");
        if (t->n_special) memcpy(grown, t->special, sizeof *grown * (size_t)t->n_special);
        DINTATTN_FREE(t->special);
        t->special = grown;
        t->cap_special = cap;
    }
    sp = &t->special[t->n_special];
    if (!(sp->text = (char *)dintattn__alloc(len + 1))) return dintattn__fail(err, DINTATTN_ERR_NOMEM, "out of memory");
    memcpy(sp->text, text, len + 1);
    sp->len = len;
    sp->id = id;
    t->n_special++;
    if (id >= t->n_vocab) t->n_vocab = id + 1;
    dintattn__ok(err);
    return DINTATTN_OK;
}

DINTATTN_API dintattn_result dintattn_tokenizer_from_model(const dintattn_model *m, dintattn_tokenizer **tok,
                                                           dintattn_error *err)
{
    dintattn_tokenizer *t = NULL;
    dintattn_result r;
    int k;
    if (tok) *tok = NULL;
    if (!m || !tok) return dintattn__fail(err, DINTATTN_ERR_ARG, "dintattn_tokenizer_from_model: NULL argument");
    if (!m->tok_ranks)
        return dintattn__fail(err, DINTATTN_ERR_ARG, "the model carries no tokenizer (no tensor 'tokenizer.ranks')");
    if ((r = dintattn__tokenizer_new(m->tok_ranks, m->tok_ranks_size, "tensor 'tokenizer.ranks'", &t, err)))
        return r;
    for (k = 0; k < m->n_special; k++)
        if ((r = dintattn_tokenizer_add_special(t, m->special_text[k], m->special_ids[k], err))) {
            if (r == DINTATTN_ERR_ARG) { /* the file's fault, not the caller's */
                r = DINTATTN_ERR_METADATA;
                if (err) err->code = r;
            }
            goto fail;
        }
    if (t->n_vocab > m->cfg.vocab_size) {
        r = dintattn__fail(err, DINTATTN_ERR_METADATA, "the tokenizer has ids up to %d but vocab_size is %d",
                           t->n_vocab - 1, m->cfg.vocab_size);
        goto fail;
    }
    t->bos = m->bos_id;
    t->eos = m->eos_id;
    *tok = t;
    dintattn__ok(err);
    return DINTATTN_OK;
fail:
    dintattn_tokenizer_free(t);
    return r;
}

DINTATTN_API int dintattn_tokenizer_n_vocab(const dintattn_tokenizer *t) { return t->n_vocab; }
DINTATTN_API int dintattn_tokenizer_bos(const dintattn_tokenizer *t) { return t->bos; }
DINTATTN_API int dintattn_tokenizer_eos(const dintattn_tokenizer *t) { return t->eos; }

DINTATTN_API const char *dintattn_tokenizer_token(const dintattn_tokenizer *t, int id, size_t *len)
{
    const dintattn__token *tk = NULL;
    int k;
    if (len) *len = 0;
    if (!t || id < 0) return NULL;
    if (id < t->n_tokens && t->tokens[id].id == id) {
        tk = &t->tokens[id]; /* ranks without gaps: the id is the index */
    } else {
        int lo = 0, hi = t->n_tokens;
        while (lo < hi) {
            int mid = lo + (hi - lo) / 2;
            if (t->tokens[mid].id < id) lo = mid + 1;
            else hi = mid;
        }
        if (lo < t->n_tokens && t->tokens[lo].id == id) tk = &t->tokens[lo];
    }
    if (tk) {
        if (len) *len = tk->len;
        return (const char *)t->bytes + tk->off;
    }
    for (k = 0; k < t->n_special; k++)
        if (t->special[k].id == id) {
            if (len) *len = t->special[k].len;
            return t->special[k].text;
        }
    return NULL;
}

/* --- encoding ---------------------------------------------------------------------------- */

/* Where encode writes: the first max ids go to ids, all are counted. */
typedef struct dintattn__emit {
    int *ids;
    int max, count;
} dintattn__emit;

static void dintattn__put(dintattn__emit *e, int id)
{
    if (e->count < e->max) e->ids[e->count] = id;
    e->count++;
}

/* A candidate merge: the pair of parts that starts at byte pos has the rank `rank`. */
typedef struct dintattn__pair {
    int rank, pos;
} dintattn__pair;

/* Scratch for merging one piece of n bytes: parts as a linked list over their first bytes, and a
   min-heap of candidate merges ordered by (rank, pos) -- tiktoken's choice, the lowest rank and
   of equals the leftmost. Entries go stale when a part changes; they are skipped when popped. */
typedef struct dintattn__bpe {
    int *next, *prev, *rank;   /* per part start: next part's start (n at the end), previous
                                  part's start (-1), rank of this part merged with the next (-1) */
    dintattn__pair *heap;
    int n_heap;
    size_t cap;                /* the longest piece the arrays hold */
} dintattn__bpe;

static int dintattn__pair_less(dintattn__pair a, dintattn__pair b)
{
    return a.rank < b.rank || (a.rank == b.rank && a.pos < b.pos);
}

static void dintattn__heap_push(dintattn__bpe *w, int rank, int pos)
{
    int i = w->n_heap++;
    dintattn__pair m;
    m.rank = rank;
    m.pos = pos;
    while (i > 0 && dintattn__pair_less(m, w->heap[(i - 1) / 2])) {
        w->heap[i] = w->heap[(i - 1) / 2];
        i = (i - 1) / 2;
    }
    w->heap[i] = m;
}

static dintattn__pair dintattn__heap_pop(dintattn__bpe *w)
{
    dintattn__pair top = w->heap[0], m = w->heap[--w->n_heap];
    int i = 0, n = w->n_heap;
    for (;;) {
        int c = 2 * i + 1;
        if (c >= n) break;
        if (c + 1 < n && dintattn__pair_less(w->heap[c + 1], w->heap[c])) c++;
        if (!dintattn__pair_less(w->heap[c], m)) break;
        w->heap[i] = w->heap[c];
        i = c;
    }
    if (n) w->heap[i] = m;
    return top;
}

/* The rank of the part at pos merged with the part after it, or -1 (none, or no such token). */
static int dintattn__pair_rank(const dintattn_tokenizer *t, const dintattn__bpe *w, const unsigned char *p, int n,
                               int pos)
{
    int after = w->next[pos];
    if (after >= n) return -1;
    return dintattn__lookup(t, p + pos, (size_t)(w->next[after] - pos));
}

/* Emits the tokens of a piece of n >= 2 bytes that is not itself a token (tiktoken's
   byte_pair_encode). Returns 0, or -1 for want of memory. */
static int dintattn__bpe_piece(const dintattn_tokenizer *t, dintattn__bpe *w, const unsigned char *p, int n,
                               dintattn__emit *e)
{
    int i;
    if ((size_t)n > w->cap) {
        size_t cap = w->cap * 2 > (size_t)n ? w->cap * 2 : (size_t)n;
        int overflow = 0;
        size_t ints = dintattn__mul(cap, 3 * sizeof(int), &overflow);
        size_t heap = dintattn__mul(cap, 3 * sizeof(dintattn__pair), &overflow);
        void *block = overflow || ints + heap < ints ? NULL : dintattn__alloc(ints + heap);
        if (!block) return -1;
        DINTATTN_FREE(w->next);
        w->next = (int *)block;
        w->prev = w->next + cap;
        w->rank = w->prev + cap;
        w->heap = (dintattn__pair *)(void *)(w->rank + cap);
        w->cap = cap;
    }
    /* every merge pushes at most two entries onto the n - 1 first ones: 3n entries suffice */
    w->n_heap = 0;
    for (i = 0; i < n; i++) {
        w->next[i] = i + 1;
        w->prev[i] = i - 1;
    }
    for (i = 0; i < n; i++)
        if ((w->rank[i] = dintattn__pair_rank(t, w, p, n, i)) >= 0) dintattn__heap_push(w, w->rank[i], i);
    while (w->n_heap) {
        dintattn__pair m = dintattn__heap_pop(w);
        int at = m.pos, gone;
        if (w->next[at] < 0 || w->rank[at] != m.rank) continue; /* a part merged away, or changed */
        gone = w->next[at];
        w->next[at] = w->next[gone];
        if (w->next[at] < n) w->prev[w->next[at]] = at;
        w->next[gone] = -1;
        if ((w->rank[at] = dintattn__pair_rank(t, w, p, n, at)) >= 0) dintattn__heap_push(w, w->rank[at], at);
        if (w->prev[at] >= 0) {
            int before = w->prev[at];
            if ((w->rank[before] = dintattn__pair_rank(t, w, p, n, before)) >= 0)
                dintattn__heap_push(w, w->rank[before], before);
        }
    }
    for (i = 0; i < n; i = w->next[i]) {
        int id = w->next[i] - i == 1 ? t->byte_id[p[i]] : dintattn__lookup(t, p + i, (size_t)(w->next[i] - i));
        DINTATTN_ASSERT(id >= 0); /* parts are single bytes or tokens merged into being */
        dintattn__put(e, id);
    }
    return 0;
}

/* Encodes ordinary text s[0..n) (no special tokens). Returns 0, or -1 for want of memory. */
static int dintattn__encode_ordinary(const dintattn_tokenizer *t, dintattn__bpe *w, const unsigned char *s, size_t n,
                                     dintattn__emit *e)
{
    size_t i, end;
    for (i = 0; i < n; i = end) {
        int id;
        end = dintattn__pretok(s, n, i);
        if ((id = dintattn__lookup(t, s + i, end - i)) >= 0) dintattn__put(e, id);
        else if (dintattn__bpe_piece(t, w, s + i, (int)(end - i), e) < 0) return -1;
    }
    return 0;
}

DINTATTN_API int dintattn_tokenizer_encode(const dintattn_tokenizer *t, const char *text, size_t len,
                                           int allow_special, int *ids, int max_ids, dintattn_error *err)
{
    const unsigned char *s = (const unsigned char *)text;
    dintattn__emit e;
    dintattn__bpe w;
    size_t pos = 0;
    int failed = 0;
    if (!t || (!text && len) || (!ids && max_ids) || max_ids < 0) {
        dintattn__fail(err, DINTATTN_ERR_ARG, "dintattn_tokenizer_encode: NULL argument or max_ids < 0");
        return -1;
    }
    if (len > (size_t)INT_MAX) {
        dintattn__fail(err, DINTATTN_ERR_ARG, "dintattn_tokenizer_encode: text longer than %d bytes", INT_MAX);
        return -1;
    }
    e.ids = ids;
    e.max = max_ids;
    e.count = 0;
    memset(&w, 0, sizeof w);
    while (pos < len && !failed) {
        size_t at = len, k, match = 0; /* the next special token: where, and how long */
        int id = -1, j;
        for (k = pos; allow_special && t->n_special && k < len && !match; k++)
            for (j = 0; j < t->n_special; j++) {
                const dintattn__special *sp = &t->special[j];
                if (sp->len <= len - k && sp->len > match && s[k] == (unsigned char)sp->text[0] &&
                    memcmp(s + k, sp->text, sp->len) == 0) {
                    at = k;
                    match = sp->len;
                    id = sp->id;
                }
            }
        failed = dintattn__encode_ordinary(t, &w, s + pos, at - pos, &e) < 0;
        if (id >= 0) dintattn__put(&e, id);
        pos = at + match;
    }
    DINTATTN_FREE(w.next);
    if (failed) {
        dintattn__fail(err, DINTATTN_ERR_NOMEM, "out of memory encoding %lu bytes", (unsigned long)len);
        return -1;
    }
    dintattn__ok(err);
    return e.count;
}

#ifdef __cplusplus
}
#endif
#endif /* DINTATTN_IMPLEMENTATION_DONE */
#endif /* DINTATTN_IMPLEMENTATION */

/* ============================================================================================
   10. License
   ============================================================================================
MIT License

Copyright (c) 2026 The dintattn authors

Permission is hereby granted, free of charge, to any person obtaining a copy of this software and
associated documentation files (the "Software"), to deal in the Software without restriction,
including without limitation the rights to use, copy, modify, merge, publish, distribute,
sublicense, and/or sell copies of the Software, and to permit persons to whom the Software is
furnished to do so, subject to the following conditions:

The above copyright notice and this permission notice shall be included in all copies or
substantial portions of the Software.

THE SOFTWARE IS PROVIDED "AS IS", WITHOUT WARRANTY OF ANY KIND, EXPRESS OR IMPLIED, INCLUDING BUT
NOT LIMITED TO THE WARRANTIES OF MERCHANTABILITY, FITNESS FOR A PARTICULAR PURPOSE AND
NONINFRINGEMENT. IN NO EVENT SHALL THE AUTHORS OR COPYRIGHT HOLDERS BE LIABLE FOR ANY CLAIM, DAMAGES
OR OTHER LIABILITY, WHETHER IN AN ACTION OF CONTRACT, TORT OR OTHERWISE, ARISING FROM, OUT OF OR IN
CONNECTION WITH THE SOFTWARE OR THE USE OR OTHER DEALINGS IN THE SOFTWARE.
*/
