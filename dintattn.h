/* dintattn.h v0.3.0 -- differential-attention LLM inference on a CPU, in one C header.
   MIT license (see the end of this file).

   Runs decoder LLMs built on DIFF, DINT, Shared-DIFF and Grouped-DIFF attention (and standard
   attention as the baseline) from one safetensors file, as specified in docs/format.md (the
   model file format and the math: the config keys, the tensors, the math per head). Comments
   cite it by section: 1 the attention rule, 2 the file, 3 version 1.1, 4 weight types, 5 the
   tokenizer in the file, 6 the chat template in the file.

   USAGE
   In exactly one C or C++ file:
       #define DINTATTN_IMPLEMENTATION
       #include "dintattn.h"
   Link with -lopenblas -lm -lpthread. Define DINTATTN_STATIC to make every function static.
   Define DINTATTN_MALLOC, DINTATTN_REALLOC and DINTATTN_FREE together (and DINTATTN_ASSERT) to
   override them. The library reads no environment variable.

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
   thread at a time. A session runs its own n_threads pool in decode; while an attention hook or
   inspection is installed (or activation statistics are collected), attention runs on the
   calling thread, which calls them. A session
   allocates all its memory when created (dintattn_session_bytes) and nothing per token.
   Kernels: a session runs AVX-512F, AVX2 + FMA + F16C or portable C loops, the best the CPU has
   up to dintattn_session_options.kernels (chosen once, at creation); on AVX-512 with AMX (and
   Linux granting its tile state) precision FAST's bf16 prefill runs on AMX tiles.
   A session's n_threads run decode's matrix-vector rows and attention heads, and on AVX-512
   prefill's products (packed panels) and attention; OpenBLAS runs the prefill GEMMs that remain
   (other levels, Q8/Q4 at precision EXACT, chunks of fewer than 8 tokens, attention beside them)
   on its own threads (openblas_set_num_threads).

   CONTENTS (where to find docs/format.md's symbols: lambda in dintattn__compute_lambda; A1, A2, S, G,
   I and W in dintattn__head_weights and dintattn__attend; the head index in dintattn__head_of)
     1. API declarations
     2. Configuration and errors (error codes, allocation, overflow-checked sizes)
     3. File loading (safetensors container, JSON, mapping a file)
     4. Model validation (config, the table of tensors, validate then build: weight matrices as
        stored or converted to F32, BF16, Q8; lambda; the runs of heads sharing A2)
     5. Math kernels (RMSNorm, softmax, RoPE, SwiGLU/PolyNorm; row . x and rows as f32 per weight
        type; prefill's packed panels, AMX tiles; the attention loops; one table of them per
        level: portable, AVX2, AVX-512)
     6. Attention (the thread pool; the session's cache; docs/format.md section 1 step by step)
     7. The decoder step (session memory; products on packed panels, by sgemm or matrix-vector
        rows; projections, RoPE, attention and FFN blocks; prefill and decode)
     8. Sampler
     9. Tokenizer
    10. License
*/
#ifndef DINTATTN_H
#define DINTATTN_H

#include <stddef.h>

#define DINTATTN_VERSION "0.3.0"

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
    DINTATTN_ERR_HEADER,         /* not a safetensors file, or a bad header: JSON, tensor entry */
    DINTATTN_ERR_DTYPE,          /* a tensor has a dtype dintattn does not read */
    DINTATTN_ERR_OFFSETS,        /* data offsets outside the data, of the wrong size, overlapping */
    DINTATTN_ERR_METADATA,       /* __metadata__ lacks format "dintattn" (a checkpoint's file: convert
                                    it), version "1" or a config */
    DINTATTN_ERR_CONFIG,         /* a config key is missing or has an illegal value */
    DINTATTN_ERR_MISSING_TENSOR, /* a tensor the config requires is absent */
    DINTATTN_ERR_UNKNOWN_TENSOR, /* a tensor the config does not use is present */
    DINTATTN_ERR_SHAPE,          /* a tensor's shape does not match the config */
    DINTATTN_ERR_NOMEM,          /* an allocation failed */
    DINTATTN_ERR_ARG,            /* a bad argument: NULL, token id out of range, n <= 0 */
    DINTATTN_ERR_CONTEXT,        /* the tokens do not fit in the session's context */
    DINTATTN_ERR_THREAD,         /* a worker thread could not be started */
    DINTATTN_ERR_TOKENIZER,      /* a tokenizer (a rank file, merges) is malformed or is JSON */
    DINTATTN_ERR_NONFINITE       /* a weight is NaN or infinite (load option check_finite) */
} dintattn_result;

/* Every fallible call takes an optional dintattn_error: on failure it holds the code and one
   line naming the key, tensor or argument at fault, and what to do next. 512 bytes: room for a
   path twice over (a message that names the command to run on it) as well as the words. */
typedef struct dintattn_error {
    dintattn_result code;
    char message[512];
} dintattn_error;

typedef enum { DINTATTN_ATTN_STANDARD, DINTATTN_ATTN_DIFF, DINTATTN_ATTN_DINT } dintattn_attention;
typedef enum { DINTATTN_INTEGRAL_SOFTMAX, DINTATTN_INTEGRAL_MEAN } dintattn_integral;
typedef enum { DINTATTN_ROPE_INTERLEAVED, DINTATTN_ROPE_HALVES, DINTATTN_ROPE_NONE } dintattn_rope;
typedef enum { DINTATTN_HEADNORM_RMS, DINTATTN_HEADNORM_GROUP } dintattn_head_norm_type;
typedef enum { DINTATTN_FFN_SILU, DINTATTN_FFN_POLYNORM } dintattn_ffn_act;
typedef enum { DINTATTN_HEAD_SCALE_NONE, DINTATTN_HEAD_SCALE_ONE_MINUS_LAMBDA_INIT } dintattn_head_scale;
typedef enum { DINTATTN_LAMBDA_REPARAM, DINTATTN_LAMBDA_TOKEN_SIGMOID } dintattn_lambda_mode;
typedef enum {
    DINTATTN_ROPE_SCALING_NONE, DINTATTN_ROPE_SCALING_LINEAR, DINTATTN_ROPE_SCALING_LLAMA3, DINTATTN_ROPE_SCALING_YARN
} dintattn_rope_scaling_type;

/* RoPE frequency scaling (docs/format.md section 3), as Hugging Face transformers computes it. */
typedef struct dintattn_rope_scaling {
    dintattn_rope_scaling_type type;
    double factor;                                         /* s >= 1 */
    double low_freq_factor, high_freq_factor;              /* llama3 */
    double original_max_position_embeddings;               /* llama3, yarn: L */
    double beta_fast, beta_slow;                           /* yarn [32, 1] */
    double attention_factor;                               /* yarn: multiplies cos and sin (resolved) */
    int truncate;                                          /* yarn [true] */
} dintattn_rope_scaling;

/* The model's numbers, as read from the file's config with docs/format.md section 2's defaults applied
   (its table of config keys). */
typedef struct dintattn_config {
    int dim, n_layers, vocab_size, hidden_dim, max_seq_len;
    int n_heads, head_dim, v_head_dim;                     /* H, d, dv */
    int n_k1_heads, n_q2_heads, n_k2_heads, n_v_heads;
    int qk_rank;                                           /* r; 0 = dense Q/K */
    dintattn_attention attention;
    dintattn_integral integral;
    int head_norm;                                         /* bool */
    dintattn_head_norm_type head_norm_type;
    dintattn_head_scale head_scale;                        /* scale heads by 1 - lambda_init, or not */
    dintattn_rope rope;
    double rope_theta, norm_eps, head_norm_eps;
    dintattn_ffn_act ffn_act;
    int tie_embeddings;                                    /* bool */
    /* file version 1.1 (docs/format.md section 3); a version 1 file has the defaults */
    dintattn_lambda_mode lambda_mode;                      /* reparam: lambda per layer; token_sigmoid: per row and head */
    int shared_k;                                          /* bool: K2 is K1 */
    int rope_dim;                                          /* components of each head RoPE rotates [head_dim] */
    dintattn_rope_scaling rope_scaling;
    int ffn_bias;                                          /* bool: b_gate, b_up, b_down */
} dintattn_config;

/* How Shared-DIFF (qk_rank > 0) Q/K projections run: as stored (factored) or merged into dense
   per-head matrices at load. AUTO picks whichever costs fewer FLOPs and bytes per token. */
typedef enum { DINTATTN_QK_AUTO, DINTATTN_QK_FACTORED, DINTATTN_QK_MERGED } dintattn_qk_form;

/* The precision the weight matrices are held and read in (norm and lambda vectors are always
   f32). FILE keeps each matrix as the file stores it (F32, F16, BF16 and Q8 are read in place from
   the mapped file; nothing is copied). F32 and BF16 convert at load. Q8 quantizes at load to int8
   in blocks of 32 along each row with one f32 scale per block (docs/format.md section 4; a file
   may also store them so: I8 NAME + F32 NAME.scale); Q4 likewise in 4 bits (docs/format.md
   section 4; U8 NAME [rows, cols / 2] + F32 NAME.scale). A matrix whose rows are not a multiple of 32
   long stays as F32/F16/BF16. */
typedef enum {
    DINTATTN_WEIGHTS_FILE,
    DINTATTN_WEIGHTS_F32,
    DINTATTN_WEIGHTS_BF16,
    DINTATTN_WEIGHTS_Q8,
    DINTATTN_WEIGHTS_Q4
} dintattn_weights;

/* Where weights used as stored are read from during decode. Through the file's mapping each 4 KiB
   of weights costs a page-table walk; in the model's own memory, advised onto 2 MiB pages, a
   2.7B BF16 model decodes about 20% faster on one thread (examples/bench --weights bf16
   --threads 1 --map copy against --map file; docs/computing.md). */
typedef enum {
    DINTATTN_MAP_AUTO,  /* COPY when the load keeps the file's weights (weights FILE), the file has at
                           least 64 MiB and takes at most 2/3 of the available memory; else FILE */
    DINTATTN_MAP_FILE,  /* the mapped file (its pages shared with the page cache and other processes) */
    DINTATTN_MAP_COPY   /* a copy in memory the model owns (the mapping is dropped once copied) */
} dintattn_map;

/* Load options; all-zero (or a NULL pointer) means the defaults. */
typedef struct dintattn_load_options {
    dintattn_qk_form qk_form;
    dintattn_weights weights;
    int check_finite; /* != 0: scan every weight at load and refuse NaN or infinity (and a
                         non-finite lambda) with DINTATTN_ERR_NONFINITE naming the tensor */
    /* Called now and then while the load converts weights (--weights f32|bf16|q8|q4 of a
       multi-gigabyte model takes minutes): `done` bytes of the file's weights converted so far,
       of the file's `total` bytes, and once more with done == total when the load ends if it
       converted any; NULL: not called. dintattn_progress_stderr is one. A copy (map) reports
       its bytes the same way, ending with done == total. Always on the thread that loads. */
    void (*progress)(void *user, double done, double total);
    void *progress_user;
    dintattn_map map; /* dintattn_model_load only: a buffer of dintattn_model_load_memory is used as it is */
    int n_threads;    /* threads converting weights to another precision, or copying the file (map); 0 = 1,
                         at most 1024 (and 64 at once) */
} dintattn_load_options;

/* The loops a session runs: the best the CPU has up to this level. AUTO is AMX's ceiling;
   PORTABLE is plain C everywhere (the tests run every level). */
typedef enum {
    DINTATTN_KERNELS_AUTO,
    DINTATTN_KERNELS_PORTABLE,
    DINTATTN_KERNELS_AVX2,      /* x86 AVX2 + FMA + F16C */
    DINTATTN_KERNELS_AVX512,    /* AVX-512F/BW/VL/VNNI matrix-vector products, AVX2 attention loops */
    DINTATTN_KERNELS_AMX        /* AVX512's, and a prompt's products of BF16, Q8 and Q4 weights on AMX's
                                   bf16 tiles (with AVX-512 BF16, where Linux grants the tiles) */
} dintattn_kernels;

/* The arithmetic of the matrix products. AUTO: F32, F16 and BF16 weights multiply f32
   activations (the engine's 1e-4 tolerance against the float64 reference); Q8 and Q4 weights
   multiply activations quantized to int8 in blocks of 32 (one f32 scale each), in integer dot
   products (VNNI where the CPU has it): the memory-bound path for 8- and 4-bit weights. Where the
   session has AMX's tiles (kernel level AMX), a prompt's Q8 and Q4 products in chunks of 48 tokens
   or more run on its bf16 tiles instead, at AUTO as at FAST: each weight rounded to bf16, times
   bf16 activations, which is faster and closer to EXACT than int8 activations (dintattn__q_tiles);
   such a prompt's logits then differ from decode's (int8) by about what int8 activations cost.
   EXACT: f32 activations for every weight type. FAST: as AUTO, and BF16 and F16 weights multiply activations rounded to bf16
   (AVX-512 BF16's vdpbf16ps where the CPU has it; AMX's tiles for a prompt; a prompt's BF16
   products on the f32 panels, the rounded activations widened, where vdpbf16ps would be slower
   than the FMA: Intel's CPUs without AMX), in decode and prefill; F16 weights are rounded to bf16
   as they are read (the file keeps them). */
typedef enum { DINTATTN_PRECISION_AUTO, DINTATTN_PRECISION_EXACT, DINTATTN_PRECISION_FAST } dintattn_precision;

/* How the session's cache holds keys and values (DINT's running sums S are always double). F32:
   as computed, the engine's 1e-4 tolerance against the float64 reference. BF16: rounded to bf16
   (to nearest even): half the bytes, about 3 significant digits. Q8: int8 with one f32 scale per
   head row (scale = max|row| / 127, q = round(x / scale)): a quarter of the bytes and a float per
   row. Attention reads the cache back in f32, so prefill, decode and chunks see the same keys. */
typedef enum { DINTATTN_KV_F32, DINTATTN_KV_BF16, DINTATTN_KV_Q8 } dintattn_kv_type;

/* What a session runs a prompt's products of one weight type on (dintattn_session_prefill_unit):
   OpenBLAS's sgemm (f32 activations), the level's matrix-vector rows (a level without packed
   panels), packed panels of f32 (or bf16 widened to f32) or bf16 activations (AVX-512), or of
   int8 activations (AVX2 and AVX-512),
   AMX's bf16 tiles, or AMX's
   bf16 tiles on f32 activations split exactly into three bf16 parts (BF16 weights at precision
   AUTO and EXACT: three tile products for one, each product of a weight and a part exact). */
typedef enum {
    DINTATTN_PREFILL_SGEMM,
    DINTATTN_PREFILL_ROWS,
    DINTATTN_PREFILL_F32_PANELS,
    DINTATTN_PREFILL_BF16_PANELS,
    DINTATTN_PREFILL_INT8_PANELS,
    DINTATTN_PREFILL_AMX_BF16,
    DINTATTN_PREFILL_AMX_BF16X3
} dintattn_prefill_unit;

/* Session options; all-zero (or a NULL pointer) means the defaults. */
typedef struct dintattn_session_options {
    int n_ctx;      /* tokens the session can hold; 0 = the model's max_seq_len (the maximum) */
    int n_batch;    /* tokens per internal prefill step; 0 = min(n_ctx, 512) */
    int n_threads;  /* threads for attention heads and matrix-vector rows; 0 = 1 */
    dintattn_kernels kernels; /* the highest kernel level to use; 0 = AUTO */
    dintattn_precision precision; /* 0 = AUTO */
    dintattn_kv_type kv;          /* 0 = F32 */
    /* Overrides of the session's dispatch plan (which unit runs each product), so that one machine
       can run every road; 0 = what the session works out for the CPU: */
    int tiles_min_tokens; /* Q8 / Q4 prompt chunks of this many tokens or more run on AMX's bf16 tiles
                             where the session has them; 0 = 48 */
    int bf16_dot;         /* FAST's BF16 prompts without tiles: 1 = on the bf16 panels, as where vdpbf16ps
                             outruns the f32 FMA; -1 = widened on the f32 panels, as where it does not */
} dintattn_session_options;

typedef struct dintattn_model dintattn_model;
typedef struct dintattn_session dintattn_session;

/* Called with the final attention weights W[n, 0..n] of one signal head at query position
   `pos` (n_keys = pos + 1), after A1, A2 and the integral are combined. For tests and tools
   (dintattn_session_inspect shows every term of the row). */
typedef void (*dintattn_attn_hook)(void *user, int layer, int head, int pos,
                                   const float *w, int n_keys);

/* One attention row of signal head `head` of layer `layer` at query position `pos`, over its
   n_keys = pos + 1 keys, as docs/format.md section 1 forms it (valid during the call only). */
typedef struct dintattn_attn_row {
    int layer, head, pos, n_keys;
    float lambda;      /* the row's lambda (per layer, or the token's with token lambda); 0: standard */
    const float *A1;   /* softmax(q1 k1^T / sqrt(d)) */
    const float *A2;   /* softmax(q2 k2^T / sqrt(d)) of the head's noise map; NULL for standard */
    const float *integral; /* DINT's I (causal softmax of G, or G itself); else NULL. Not named I:
                              <complex.h>, which OpenBLAS's header includes, defines I */
    const float *W;    /* the final weights: A1; A1 - lambda A2; A1 - lambda A2 + lambda I */
} dintattn_attn_row;

/* What dintattn_session_inspect shows: the rows of the chosen layers, heads and query positions,
   during prefill and decode, one call each, in order (layer, then head, then position within a
   prefill block of queries), on the calling thread. */
typedef struct dintattn_inspect {
    void (*row)(void *user, const dintattn_attn_row *row);
    void *user;
    const unsigned char *layers; /* n_layers flags (nonzero: shown), or NULL for every layer */
    const unsigned char *heads;  /* n_heads flags, or NULL for every head */
    int pos_from, pos_to;        /* query positions [pos_from, pos_to); pos_to <= 0: no end */
} dintattn_inspect;

/* Summaries of one attention row w[0..n) (usually W): its sum (1 for standard and DINT rows),
   the sum and the share of its negative weights (DIFF's and DINT's negative attention), the
   entropy in nats of p = |w| / sum |w|, and its mass on the key spans [spans[2k], spans[2k+1])
   (e.g. an answer's tokens: "attention to the answer") and elsewhere ("attention noise"). Spans
   are clipped to [0, n); overlapping spans count once. */
typedef struct dintattn_attn_stats {
    double sum, neg_sum, neg_share, entropy, span_mass, rest_mass;
} dintattn_attn_stats;

/* A progress callback for dintattn_load_options: "\r<user, a label>: loading weights, N%" on
   stderr, at most once per percent, and a newline at the end; silent for files under 1 GB. */
DINTATTN_API void dintattn_progress_stderr(void *user, double done, double total);
/* Bytes of memory available for new allocations: MemAvailable of /proc/meminfo where there is
   one, else 0 (unknown). */
DINTATTN_API double dintattn_mem_available(void);

/* Maps and validates a model file. Returns DINTATTN_OK and sets *model, or an error code whose
   message says what the file is when it is no model: a Hugging Face checkpoint's file
   (DINTATTN_ERR_METADATA) or directory (DINTATTN_ERR_IO), with its layout and the tools/convert.py
   command; "not a safetensors file" (DINTATTN_ERR_HEADER); "truncated", with the bytes the file
   has and its header describes (DINTATTN_ERR_TRUNCATED). */
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
/* Parameters of the file's tensors (as stored: Shared-DIFF counts its factors). */
DINTATTN_API long long dintattn_model_params(const dintattn_model *model);
/* Bytes of an f32 KV cache (keys, values) and DINT's S that n_tokens positions hold: what a
   session allocates per position (a DINT session also what dintattn_session_truncate keeps),
   and what decoding a token reads at that context (see dintattn_session_kv_bytes for the other
   cache types). */
DINTATTN_API double dintattn_model_kv_bytes(const dintattn_model *model, int n_tokens);

/* One tensor the model holds (dintattn_model_tensors). */
typedef struct dintattn_tensor_info {
    char name[64];        /* the file's name, e.g. "layers.3.attn.wq1" */
    int layer;            /* -1 for the embeddings, final norm and LM head */
    long long rows, cols; /* shape; cols = 0 for a vector */
    const char *type;     /* as held: "f32", "f16", "bf16", "q8", "q4" */
    size_t bytes;         /* bytes held (Q8 with its scales) */
    size_t read_bytes;    /* bytes a decoded token reads: all, one embedding row, or 0 (factors merged) */
    int matrix;           /* 1 if the engine multiplies by it (a weight matrix) */
    int in_file;          /* 0 for Shared-DIFF Q/K matrices merged at load from the file's factors */
    int heads;            /* a matrix multiplied in `heads` blocks of rows / heads rows, each by its head's
                             input (Shared-DIFF's up factors); 1 otherwise */
} dintattn_tensor_info;
/* Fills out[0 .. min(count, max)) with the model's tensors, layer by layer, and returns count
   (out may be NULL to count). */
DINTATTN_API long long dintattn_model_tensors(const dintattn_model *model, dintattn_tensor_info *out, long long max);

/* "file", "f32", "bf16", "q8" (NULL for a value out of range). */
DINTATTN_API const char *dintattn_weights_name(dintattn_weights w);
/* The dintattn_weights named `name`; DINTATTN_ERR_ARG for any other name. */
DINTATTN_API dintattn_result dintattn_weights_parse(const char *name, dintattn_weights *out, dintattn_error *err);
/* "auto", "portable", "avx2", "avx512", "amx" (NULL for a value out of range). */
DINTATTN_API const char *dintattn_kernels_name(dintattn_kernels k);
/* The dintattn_kernels named `name`; DINTATTN_ERR_ARG for any other name. */
DINTATTN_API dintattn_result dintattn_kernels_parse(const char *name, dintattn_kernels *out, dintattn_error *err);
/* "auto", "exact", "fast" <-> dintattn_precision. */
DINTATTN_API const char *dintattn_precision_name(dintattn_precision p);
DINTATTN_API dintattn_result dintattn_precision_parse(const char *name, dintattn_precision *out, dintattn_error *err);
DINTATTN_API dintattn_precision dintattn_session_precision(const dintattn_session *s);
/* "f32", "bf16", "q8" <-> dintattn_kv_type. */
DINTATTN_API const char *dintattn_kv_name(dintattn_kv_type kv);
DINTATTN_API dintattn_result dintattn_kv_parse(const char *name, dintattn_kv_type *out, dintattn_error *err);
/* dintattn_map <-> "auto", "file", "copy" */
DINTATTN_API const char *dintattn_map_name(dintattn_map m);
DINTATTN_API dintattn_result dintattn_map_parse(const char *name, dintattn_map *out, dintattn_error *err);
DINTATTN_API dintattn_kv_type dintattn_session_kv(const dintattn_session *s);
/* dintattn_model_kv_bytes for this session's cache type: bytes n_tokens positions hold, and what
   decoding a token reads at that context. */
DINTATTN_API double dintattn_session_kv_bytes(const dintattn_session *s, int n_tokens);

DINTATTN_API dintattn_result dintattn_session_new(const dintattn_model *model,
                                                  const dintattn_session_options *opt,
                                                  dintattn_session **sess, dintattn_error *err);
/* Frees a session (NULL is fine). */
DINTATTN_API void dintattn_session_free(dintattn_session *sess);
/* Forgets every token: the next token is at position 0 again. */
DINTATTN_API void dintattn_session_reset(dintattn_session *sess);
/* Makes dst hold src's tokens (KV cache, DINT's running sums and what dintattn_session_truncate
   rebuilds them from, position), so that dst continues
   exactly as src would: prefill a shared context once, then copy it into a session per
   continuation (examples/score's multiple choice does). Both sessions must be of the same model
   and KV cache type, and src's tokens must fit dst's context; dst keeps its own threads,
   precision, hook, inspection and activation statistics. Otherwise DINTATTN_ERR_ARG (DINTATTN_ERR_CONTEXT when src's
   tokens do not fit) and dst is unchanged. */
DINTATTN_API dintattn_result dintattn_session_copy(dintattn_session *dst, const dintattn_session *src,
                                                   dintattn_error *err);
/* Keeps the session's first n tokens (0 <= n <= dintattn_session_pos) and forgets the rest, so
   that the next token is at position n: to take back generated tokens, edit a conversation's
   last turn, or reuse a cached prompt's common prefix. The kept tokens' keys and values stay as
   they are. DINT's running sums S also hold the forgotten tokens' attention, which no
   subtraction takes back exactly, so a DINT session records the ids it ran and where each of
   its steps began (a step: up to n_batch tokens of a prefill, or one decode), and copies S at
   the last step boundary before each eighth of its context; truncating restores the nearest
   copy at or below n and runs the tokens from there to n again in the steps they first ran in,
   the last one cut at n (the hook and inspection see them again).
   Costs, DINT only (other families: none): memory, 3.5 times S's with n_ctx rounded up to a
   multiple of 8 (28 bytes per head and position beside S's 8) and 5 bytes per position; time,
   copying S and a prefill of fewer than n_ctx / 8 (rounded up) + n_batch tokens.
   After it the session holds bit for bit what a new session of the same options (any threads)
   fed the same steps cut at n holds: always for DINT, and for the other families where n ends a
   step (after each decoded token, each n_batch-th token of a prompt, the end of each call).
   Inside a prompt's step they keep the rows the whole step computed, which a shorter step
   computes with other kernels: equal in all but the last bits with an f32 cache, while a bf16
   or int8 cache can round such a key or value to its neighbouring step. A copy
   (dintattn_session_copy) truncates as its source; one of a smaller n_batch (which runs the
   source's longer steps in its own), another precision or kernel level, not bit for bit.
   DINTATTN_ERR_ARG for another n (the session is unchanged). */
DINTATTN_API dintattn_result dintattn_session_truncate(dintattn_session *sess, int n, dintattn_error *err);
/* Number of tokens the session holds (the position of the next token). */
DINTATTN_API int dintattn_session_pos(const dintattn_session *sess);
/* The session's capacity in tokens. */
DINTATTN_API int dintattn_session_n_ctx(const dintattn_session *sess);
/* Bytes the session allocated at creation; it allocates nothing afterwards (but what
   dintattn_session_act_start asks for, outside this count). */
DINTATTN_API size_t dintattn_session_bytes(const dintattn_session *sess);
/* The kernel level the session runs (never AUTO). */
DINTATTN_API dintattn_kernels dintattn_session_kernels(const dintattn_session *sess);
/* What a prompt's products of weights held as `type` ("f32", "f16", "bf16", "q8", "q4": a
   dintattn_tensor_info's type) run on in this session for a chunk of its n_batch tokens, the
   longest it runs at once (a shorter chunk may run elsewhere: fewer than 8 tokens on the level's
   rows, Q8 and Q4 chunks of fewer than 48 on the int8 panels instead of AMX's tiles);
   DINTATTN_ERR_ARG for another name. */
DINTATTN_API dintattn_result dintattn_session_prefill_unit(const dintattn_session *sess, const char *type,
                                                           dintattn_prefill_unit *out, dintattn_error *err);
/* Packs the model's weight matrices ahead, as the panels sess's prompts run Q8 / Q4 products on
   (int8 panels) and, at precision FAST, BF16 / F16 ones (bf16 panels; not AMX's tiles), so that a
   product of a few tokens -- a batch of decoded tokens (dintattn_batch_step), a short chunk --
   reads each matrix once for all its tokens from 2 tokens on, instead of packing every panel as
   it runs (which costs a prompt of fewer than about 32 tokens more than the products) or reading
   the rows per 4 tokens. The panels are a copy in the model's memory: 1.25 bytes per weight (1.11x
   a Q8 matrix, 2.2x Q4, 0.63x BF16; *bytes, if not NULL, gets the bytes added). Runs on sess's
   threads; call it while no session of the model runs (sessions made before or after use the
   panels where their kernel level packs the same way). Results stay within the kernels' rounding
   of the unpacked runs (the same sums in the panels' order). A second call packs nothing more.
   If the panels would take more than max_bytes (0: no bound), nothing is packed and
   DINTATTN_ERR_NOMEM names both sizes (*bytes gets the size then too); DINTATTN_ERR_ARG if sess is
   of another model, DINTATTN_ERR_NOMEM if the memory cannot be had. */
DINTATTN_API dintattn_result dintattn_model_prepack(dintattn_model *model, dintattn_session *sess, size_t max_bytes,
                                                    size_t *bytes, dintattn_error *err);
/* "sgemm", "rows", "f32 panels", "bf16 panels", "int8 panels", "amx bf16 tiles" <->
   dintattn_prefill_unit. */
DINTATTN_API const char *dintattn_prefill_unit_name(dintattn_prefill_unit u);
DINTATTN_API dintattn_result dintattn_prefill_unit_parse(const char *name, dintattn_prefill_unit *out,
                                                         dintattn_error *err);
/* Installs (or, with NULL, removes) a hook that sees every final attention row. */
DINTATTN_API void dintattn_session_set_attn_hook(dintattn_session *sess, dintattn_attn_hook hook,
                                                 void *user);
/* Shows the session's attention rows to insp->row (see dintattn_inspect; copied: the flag
   arrays must live while it is installed); NULL (or a NULL row) removes it. Off, it costs a test
   per row. DINTATTN_ERR_ARG for a negative position range. */
DINTATTN_API dintattn_result dintattn_session_inspect(dintattn_session *sess, const dintattn_inspect *insp,
                                                      dintattn_error *err);
/* Fills *out with the summaries of row w[0..n) (see dintattn_attn_stats); spans may be NULL. */
DINTATTN_API void dintattn_attn_stats_of(const float *w, int n, const int *spans, int n_spans,
                                         dintattn_attn_stats *out);

/* Activations a session summarizes per layer while collecting (dintattn_session_act_start), over
   the tokens it runs (docs/computing.md, "Activation statistics", says exactly which elements). */
typedef enum dintattn_act_kind {
    DINTATTN_ACT_LOGITS1, /* attention logits q1 . k1 / sqrt(d) of every signal head and query over the keys
                             it sees (the causal mask's entries left out): the single map of standard attention */
    DINTATTN_ACT_LOGITS2, /* q2 . k2 / sqrt(d) of every noise map A2 (heads sharing one count it once);
                             none for standard attention */
    DINTATTN_ACT_FFN_IN,  /* the FFN's input, RMSNorm(x) * ffn_norm: what w_gate and w_up multiply */
    DINTATTN_ACT_HIDDEN,  /* the residual stream x after the layer (its attention and FFN added) */
    DINTATTN_ACT_KINDS
} dintattn_act_kind;

/* Collection options; all-zero (or NULL) means the defaults. */
typedef struct dintattn_act_options {
    int top_k; /* largest magnitudes kept per layer and kind; 0 = 10, at most 65536 */
} dintattn_act_options;

/* The summary of one kind of activation of one layer, over `count` finite elements x (magnitude
   |x|). The median is the lower median (rank ceil(count / 2) of the ascending magnitudes), read
   from a histogram of 128 bins per power of two: within 2^-8 of the true one, relative, for
   medians of 2^-126 or more, and exact when it is among the top_k largest. Kurtosis is
   Pearson's, m4 / m2^2 of the signed values about their mean (3 for a Gaussian; NaN when all are
   equal). All zero but nonfinite when count is 0. */
typedef struct dintattn_act_stats {
    long long count;     /* finite elements summarized */
    long long nonfinite; /* NaN and infinite elements: counted here, left out of the rest */
    int k;               /* magnitudes held: min(top_k, count) */
    double top1, topk;   /* the largest magnitude and the k-th largest */
    double median;       /* median magnitude */
    double ratio;        /* top1 / median (infinite when the median is 0) */
    double mean, std;    /* of the signed values (std: population, divided by count) */
    double kurtosis;
} dintattn_act_stats;

/* Starts collecting activation statistics on the session (afresh: earlier ones are dropped), with
   opt (NULL: defaults). Costs, while on: memory of 4 histograms of 32640 counts (8 bytes each) and
   top_k floats per layer, allocated here (DINTATTN_ERR_NOMEM if it cannot be); time, a pass over
   every element recorded; attention runs on the calling thread (as with a hook). Tokens that
   dintattn_session_truncate runs again are not counted twice; dintattn_session_reset keeps the
   statistics (start again to drop them). Off, it costs a test per row.
   DINTATTN_ERR_ARG for a NULL session or top_k outside [0, 65536]. */
DINTATTN_API dintattn_result dintattn_session_act_start(dintattn_session *sess, const dintattn_act_options *opt,
                                                        dintattn_error *err);
/* Stops collecting and frees what collection held (NULL or not collecting: nothing to do). */
DINTATTN_API void dintattn_session_act_stop(dintattn_session *sess);
/* Fills *out with the statistics of `kind` in `layer` so far, and top[0 .. min(k, max_top)) with
   the largest magnitudes, descending (top may be NULL). DINTATTN_ERR_ARG if the session is not
   collecting, or layer or kind is out of range (LOGITS2 of standard attention is all zero). */
DINTATTN_API dintattn_result dintattn_session_act_stats(const dintattn_session *sess, int layer, dintattn_act_kind kind,
                                                        dintattn_act_stats *out, float *top, int max_top,
                                                        dintattn_error *err);
/* "logits1", "logits2", "ffn_in", "hidden" (NULL for a value out of range). */
DINTATTN_API const char *dintattn_act_kind_name(dintattn_act_kind kind);

/* Runs n >= 1 tokens after those the session holds. If logits is not NULL it receives the logits
   of every token ([n, vocab_size], all_logits != 0) or of the last one ([vocab_size]).
   On error nothing is changed and an error code is returned. */
DINTATTN_API dintattn_result dintattn_prefill(dintattn_session *sess, const int *tokens, int n,
                                              float *logits, int all_logits, dintattn_error *err);
/* Runs one token through the cache; logits ([vocab_size]) may be NULL. */
DINTATTN_API dintattn_result dintattn_decode(dintattn_session *sess, int token, float *logits,
                                             dintattn_error *err);

/* One sequence's part of a batched step: n_tokens (1: a decode; more: a chunk of its prompt) run
   after those its session holds; logits ([vocab_size]) receives the last token's, or is NULL.
   With all_logits, logits ([n_tokens][vocab_size]) receives every token's (scoring a text). */
typedef struct dintattn_batch_item {
    dintattn_session *sess;
    const int *tokens;
    int n_tokens;
    float *logits;
    int all_logits;
} dintattn_batch_item;

/* Valid when zero-initialised (or pass NULL). */
typedef struct dintattn_batch_options {
    int max_tokens; /* tokens stacked per pass over the weights; 0 = items[0].sess's n_batch, the most
                       its buffers hold (more is refused) */
} dintattn_batch_options;

/* Advances every item's session by its tokens, reading the weights once per pass for all of them;
   on error (DINTATTN_ERR_ARG / _CONTEXT naming the item, _NOMEM) no session is changed.
   Every session must be of one model, precision and kernel level, each at most once. Each keeps
   its own cache, position and DINT sums; a sequence joins or leaves a batch by being in the list.
   The stacked tokens' products run in items[0].sess's buffers on its thread pool, as its dispatch
   plan routes a chunk of that many tokens; each sequence's attention (its heads shared out) runs
   on that pool too (all decoded tokens' (sequence, run of heads) pairs in one job), or on its own
   session's where its cache type differs or its context is longer.
   Tokens past max_tokens go in further passes (each a step of its session, as
   dintattn_session_truncate records them; a session's part of a pass is at most its n_batch). */
DINTATTN_API dintattn_result dintattn_batch_step(const dintattn_batch_item *items, int n_items,
                                                 const dintattn_batch_options *opt, dintattn_error *err);
/* Runs tokens[0..n) as dintattn_prefill does and scores them: logprob[i] = log p(tokens[i + 1] |
   the session's earlier tokens and tokens[0..i]) for i < n - 1 (a log-softmax of each row's
   logits, in double). The first token is context only: to score a continuation after a context,
   prefill the context but its last token, then pass that token followed by the continuation.
   It allocates one block of min(n, n_batch) x vocab_size floats for the call (DINTATTN_ERR_NOMEM
   if it cannot). On error nothing is changed. */
DINTATTN_API dintattn_result dintattn_logprobs(dintattn_session *sess, const int *tokens, int n, float *logprob,
                                               dintattn_error *err);
/* log p(token) = logits[token] - log(sum_j exp(logits[j])) over n_vocab logits, in double (NaN if
   the token is out of range or no logit is finite). */
DINTATTN_API double dintattn_logprob_of(const float *logits, int n_vocab, int token);

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
/* DINTATTN_VERSION of the implementation that was compiled: what a program (or python/dintattn.py)
   linked to a shared library checks against the header it was written for. */
DINTATTN_API const char *dintattn_version(void);
/* A row of the layout table that bindings (python/dintattn.py) check their copies of the
   structs and enums against: a struct's field with its offset and size; the struct itself
   (field NULL, size its sizeof); or an enum's constant (offset its value, size the enum's). */
typedef struct dintattn_abi_field {
    const char *type;  /* "dintattn_config", "dintattn_result", ... */
    const char *field; /* "rope_theta", "DINTATTN_ERR_IO", ...; NULL for the struct's own row */
    size_t offset, size;
} dintattn_abi_field;
/* The layout table of the public structs and enums, as compiled; *n gets its row count. */
DINTATTN_API const dintattn_abi_field *dintattn_abi_fields(int *n);

/* --- tokenizer --- */

/* BPE as tiktoken runs it (a rank file and a split pattern: cl100k_base's by default, another
   family's or a regex) or as Hugging Face tokenizers runs a tokenizer.json that tools/convert.py
   embedded (merges, byte-level or SentencePiece-style with byte fallback, NFC / Prepend / Replace
   normalizers, Split / ByteLevel / Metaspace / Digits pre-tokenizers, added tokens with their
   flags; section 9, docs/format.md section 5).
   Read-only after its special tokens are added: threads may share one for encoding. */
typedef struct dintattn_tokenizer dintattn_tokenizer;

/* Reads a tokenizer file (tools/convert.py --format tokenizer), the tokenizer a model file
   carries, or a tiktoken rank file ("base64(token bytes) rank" per line). Returns
   DINTATTN_ERR_IO if it cannot be read, DINTATTN_ERR_TOKENIZER (naming the line) if a rank file
   is malformed or is JSON (a tokenizer.json: the message names the tools/convert.py command), the
   loader's codes (DINTATTN_ERR_METADATA, ...) for a bad safetensors file. dintattn_tokenizer_source
   says which kind of file it read. */
DINTATTN_API dintattn_result dintattn_tokenizer_load(const char *path, dintattn_tokenizer **tok,
                                                     dintattn_error *err);
/* The kind of file tok was read from: "model file", "tokenizer file" or "tiktoken rank file". */
DINTATTN_API const char *dintattn_tokenizer_source(const dintattn_tokenizer *tok);
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
/* Sets the split pattern (the pre-tokenizer) that cuts ordinary text into pieces before BPE: a
   known name -- "cl100k" (the default; "llama3" is the same pattern), "gpt2" (also "r50k",
   "p50k": GPT-2's and GPT-NeoX's), "o200k", "qwen2" (Qwen2 and 3), "deepseek_v3" -- or else a regex
   of the subset section 9 lists (a name is never read as a regex). DINTATTN_ERR_TOKENIZER, naming
   what is not in the subset and where, if it does not compile. Not while threads encode with tok. */
DINTATTN_API dintattn_result dintattn_tokenizer_set_pattern(dintattn_tokenizer *tok, const char *name_or_regex,
                                                            dintattn_error *err);
/* As dintattn_tokenizer_set_pattern with 1..8 regexes applied in sequence: each piece one cuts is
   cut again by the next (as HF's Sequence of Split pre-tokenizers, behavior Isolated). */
DINTATTN_API dintattn_result dintattn_tokenizer_set_patterns(dintattn_tokenizer *tok, const char *const *regexes,
                                                             int n, dintattn_error *err);
/* Frees a tokenizer (NULL is fine). */
DINTATTN_API void dintattn_tokenizer_free(dintattn_tokenizer *tok);
/* The largest id of an ordinary or special token, plus one. */
DINTATTN_API int dintattn_tokenizer_n_vocab(const dintattn_tokenizer *tok);
/* The model's BOS / EOS token id; -1 if it has none (and for tokenizers not from a model). */
DINTATTN_API int dintattn_tokenizer_bos(const dintattn_tokenizer *tok);
DINTATTN_API int dintattn_tokenizer_eos(const dintattn_tokenizer *tok);
/* 1 if `id` ends a generation: the EOS id or any other end-of-sequence id the model file lists. */
DINTATTN_API int dintattn_tokenizer_is_eos(const dintattn_tokenizer *tok, int id);
/* Encodes len bytes of text into ids[0..max_ids) and sets *n_ids to how many ids the whole text
   needs (if more than max_ids, call again with a larger buffer: a tiktoken or byte-level text
   needs at most len ids, but a normalizer that adds text -- SentencePiece's leading U+2581 --
   can make it more; max_ids = 0 measures). Returns DINTATTN_ERR_ARG for NULL arguments or a text
   longer than INT_MAX bytes (before or after normalizing), DINTATTN_ERR_NOMEM. Added tokens
   (HF's added_tokens, tiktoken's special tokens) are matched first; allow_special == 0 leaves
   the special ones ordinary text (tiktoken's encode_ordinary, HF's encode_special_tokens).
   Encoding is HF's encode(text, add_special_tokens=False): no BOS is put first. Invalid UTF-8
   is encoded, never refused: with a byte-level tokenizer decoding gives the bytes back. */
DINTATTN_API dintattn_result dintattn_tokenizer_encode(const dintattn_tokenizer *tok, const char *text, size_t len,
                                                       int allow_special, int *ids, int max_ids, int *n_ids,
                                                       dintattn_error *err);
/* The bytes decoding token `id` gives (not NUL-terminated; *len gets their count if len is not
   NULL), or NULL if id is no token: the vocabulary's bytes after the decoder's per-token steps
   (SentencePiece's U+2581 is a space, "<0x41>" is "A"). Streaming a generation prints these. */
DINTATTN_API const char *dintattn_tokenizer_token(const dintattn_tokenizer *tok, int id, size_t *len);
/* Decodes n ids: their tokens' bytes, then what the decoder does to the whole text (HF's Strip
   after Fuse: SentencePiece tokenizers drop the space their normalizer put first). Special
   tokens are left out if skip_special. Writes at most cap bytes to out (NUL-terminated if it
   fits) and sets *len to the full length: call with cap 0 to measure. DINTATTN_ERR_ARG for an id
   that is no token. Invalid UTF-8 comes back as the bytes it was (HF would give U+FFFD). */
DINTATTN_API dintattn_result dintattn_tokenizer_decode(const dintattn_tokenizer *tok, const int *ids, int n,
                                                       int skip_special, char *out, size_t cap, size_t *len,
                                                       dintattn_error *err);
/* 1 if `id` is a special token (a tiktoken special token, or an HF added token marked special). */
DINTATTN_API int dintattn_tokenizer_is_special(const dintattn_tokenizer *tok, int id);
/* 1 if `id` is a token of tok; 0 past it (a vocabulary padded past the tokenizer): skip such ids. */
DINTATTN_API int dintattn_tokenizer_has_token(const dintattn_tokenizer *tok, int id);
/* A prompt's ids, as dintattn_tokenizer_encode: BOS first if tok has one and the text's own encoding does not begin with it. */
DINTATTN_API dintattn_result dintattn_tokenizer_encode_prompt(const dintattn_tokenizer *tok, const char *text,
                                                              size_t len, int allow_special, int *ids, int max_ids,
                                                              int *n_ids, dintattn_error *err);
/* The offset of the earliest stop string stops[k] (stop_lens[k] bytes) starting in text[from..len), or (size_t)-1; *which = k. */
DINTATTN_API size_t dintattn_stop_find(const char *text, size_t len, size_t from, const char *const *stops,
                                       const size_t *stop_lens, int n_stops, int *which);
/* How much of text[0..len) may be shown: not into a tail that could begin a stop string, nor an unfinished UTF-8 character. */
DINTATTN_API size_t dintattn_stop_safe_end(const char *text, size_t len, const char *const *stops,
                                           const size_t *stop_lens, int n_stops);

/* --- chat --- */

typedef struct dintattn_chat_message {
    const char *role;     /* "system", "user", "assistant", or any role the template has */
    const char *content;  /* NUL-terminated text */
} dintattn_chat_message;

/* Formats a conversation with the model's chat template (docs/format.md section 6):
   each message's prefix, content and suffix, then (add_generation_prompt) the text that
   opens the assistant's turn (always, for a template that writes it always); first the template's
   beginning, and its default system message if msgs does not begin with a system message; the
   last message with the template's own prefix and suffix for a last message, if it has them. A model without a template gets each content followed by a newline.
   Writes at most cap bytes of it to out (NUL-terminated if it fits) and sets *len to its full
   length: call with cap 0 to measure. DINTATTN_ERR_ARG for a role the template lacks. */
DINTATTN_API dintattn_result dintattn_chat_format(const dintattn_model *model, const dintattn_chat_message *msgs,
                                                  int n, int add_generation_prompt, char *out, size_t cap,
                                                  size_t *len, dintattn_error *err);
/* 1 if the model file carries a chat template. */
DINTATTN_API int dintattn_chat_has_template(const dintattn_model *model);
/* The template's stop strings (a turn ends when one is generated): their count, and string k. */
DINTATTN_API int dintattn_chat_n_stops(const dintattn_model *model);
DINTATTN_API const char *dintattn_chat_stop(const dintattn_model *model, int k);

/* --- JSON reader: the loader's strict parser (RFC 8259, nesting at most 64 deep, no repeated
   key in an object), for programs that read JSON requests or data files. A node is valid while its
   dintattn_json lives; a NULL node (a key that is absent) reads as JSON null, and every reader
   gives 0 / NULL for a node of another type, so a caller checks the type once. --- */

typedef struct dintattn_json dintattn_json;
typedef struct dintattn_json_node dintattn_json_node;
typedef enum {
    DINTATTN_JSON_NULL, DINTATTN_JSON_BOOL, DINTATTN_JSON_NUMBER, DINTATTN_JSON_STRING, DINTATTN_JSON_ARRAY,
    DINTATTN_JSON_OBJECT
} dintattn_json_kind;

/* Parses len bytes (copied); DINTATTN_ERR_ARG with "<problem> at byte N" for bad JSON, DINTATTN_ERR_NOMEM. */
DINTATTN_API dintattn_result dintattn_json_parse(const char *text, size_t len, dintattn_json **out, dintattn_error *err);
/* Frees a parsed document and every node and string in it (NULL is allowed). */
DINTATTN_API void dintattn_json_free(dintattn_json *json);
/* The document's top-level value. */
DINTATTN_API const dintattn_json_node *dintattn_json_root(const dintattn_json *json);
/* The value of key `key` in object obj, or NULL if obj is no object or lacks the key. */
DINTATTN_API const dintattn_json_node *dintattn_json_get(const dintattn_json *json, const dintattn_json_node *obj,
                                                         const char *key);
/* The node's type (DINTATTN_JSON_NULL for a NULL node). */
DINTATTN_API dintattn_json_kind dintattn_json_type(const dintattn_json *json, const dintattn_json_node *node);
/* A string's decoded bytes, NUL-terminated (the parser refuses U+0000, so *len is their strlen), or NULL for another type. */
DINTATTN_API const char *dintattn_json_str(const dintattn_json *json, const dintattn_json_node *node, size_t *len);
/* A number's value (0 for another type). */
DINTATTN_API double dintattn_json_num(const dintattn_json *json, const dintattn_json_node *node);
/* 1 if the node is a number written as an integer (no fraction, no exponent) that fits a long long, stored in *out. */
DINTATTN_API int dintattn_json_int(const dintattn_json *json, const dintattn_json_node *node, long long *out);
/* 1 for true, 0 for false or another type. */
DINTATTN_API int dintattn_json_bool(const dintattn_json *json, const dintattn_json_node *node);
/* An array's elements or an object's members: their count (0 for another type). */
DINTATTN_API int dintattn_json_len(const dintattn_json *json, const dintattn_json_node *node);
/* Element i of an array or the value of member i of an object (in document order), or NULL past the end. */
DINTATTN_API const dintattn_json_node *dintattn_json_at(const dintattn_json *json, const dintattn_json_node *node, int i);
/* The key of an object's member (a node dintattn_json_at gave for an object), else NULL. */
DINTATTN_API const char *dintattn_json_key(const dintattn_json *json, const dintattn_json_node *node);

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
#include <dirent.h>
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

#if defined(DINTATTN_MALLOC) != defined(DINTATTN_FREE) || defined(DINTATTN_MALLOC) != defined(DINTATTN_REALLOC)
#error "define all of DINTATTN_MALLOC, DINTATTN_REALLOC and DINTATTN_FREE, or none"
#endif
#ifndef DINTATTN_MALLOC
#define DINTATTN__OWN_MALLOC /* ours: dintattn__hugepages may advise the kernel on its memory */
#define DINTATTN_MALLOC(sz) malloc(sz)
#define DINTATTN_REALLOC(p, sz) realloc(p, sz)
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

DINTATTN_API const char *dintattn_version(void) { return DINTATTN_VERSION; }

#define DINTATTN__ABI_T(T) {#T, NULL, 0, sizeof(T)}
#define DINTATTN__ABI_F(T, f) {#T, #f, offsetof(T, f), sizeof(((T *)0)->f)}
#define DINTATTN__ABI_E(T, c) {#T, #c, (size_t)(c), sizeof(T)}
static const dintattn_abi_field dintattn__abi[] = {
    DINTATTN__ABI_T(dintattn_error), DINTATTN__ABI_F(dintattn_error, code), DINTATTN__ABI_F(dintattn_error, message),
    DINTATTN__ABI_T(dintattn_rope_scaling), DINTATTN__ABI_F(dintattn_rope_scaling, type),
    DINTATTN__ABI_F(dintattn_rope_scaling, factor), DINTATTN__ABI_F(dintattn_rope_scaling, low_freq_factor),
    DINTATTN__ABI_F(dintattn_rope_scaling, high_freq_factor),
    DINTATTN__ABI_F(dintattn_rope_scaling, original_max_position_embeddings),
    DINTATTN__ABI_F(dintattn_rope_scaling, beta_fast), DINTATTN__ABI_F(dintattn_rope_scaling, beta_slow),
    DINTATTN__ABI_F(dintattn_rope_scaling, attention_factor), DINTATTN__ABI_F(dintattn_rope_scaling, truncate),
    DINTATTN__ABI_T(dintattn_config), DINTATTN__ABI_F(dintattn_config, dim), DINTATTN__ABI_F(dintattn_config, n_layers),
    DINTATTN__ABI_F(dintattn_config, vocab_size), DINTATTN__ABI_F(dintattn_config, hidden_dim),
    DINTATTN__ABI_F(dintattn_config, max_seq_len), DINTATTN__ABI_F(dintattn_config, n_heads),
    DINTATTN__ABI_F(dintattn_config, head_dim), DINTATTN__ABI_F(dintattn_config, v_head_dim),
    DINTATTN__ABI_F(dintattn_config, n_k1_heads), DINTATTN__ABI_F(dintattn_config, n_q2_heads),
    DINTATTN__ABI_F(dintattn_config, n_k2_heads), DINTATTN__ABI_F(dintattn_config, n_v_heads),
    DINTATTN__ABI_F(dintattn_config, qk_rank), DINTATTN__ABI_F(dintattn_config, attention),
    DINTATTN__ABI_F(dintattn_config, integral), DINTATTN__ABI_F(dintattn_config, head_norm),
    DINTATTN__ABI_F(dintattn_config, head_norm_type), DINTATTN__ABI_F(dintattn_config, head_scale),
    DINTATTN__ABI_F(dintattn_config, rope), DINTATTN__ABI_F(dintattn_config, rope_theta),
    DINTATTN__ABI_F(dintattn_config, norm_eps), DINTATTN__ABI_F(dintattn_config, head_norm_eps),
    DINTATTN__ABI_F(dintattn_config, ffn_act), DINTATTN__ABI_F(dintattn_config, tie_embeddings),
    DINTATTN__ABI_F(dintattn_config, lambda_mode), DINTATTN__ABI_F(dintattn_config, shared_k),
    DINTATTN__ABI_F(dintattn_config, rope_dim), DINTATTN__ABI_F(dintattn_config, rope_scaling),
    DINTATTN__ABI_F(dintattn_config, ffn_bias),
    DINTATTN__ABI_T(dintattn_attn_row), DINTATTN__ABI_F(dintattn_attn_row, layer), DINTATTN__ABI_F(dintattn_attn_row, head),
    DINTATTN__ABI_F(dintattn_attn_row, pos), DINTATTN__ABI_F(dintattn_attn_row, n_keys),
    DINTATTN__ABI_F(dintattn_attn_row, lambda), DINTATTN__ABI_F(dintattn_attn_row, A1),
    DINTATTN__ABI_F(dintattn_attn_row, A2), DINTATTN__ABI_F(dintattn_attn_row, integral),
    DINTATTN__ABI_F(dintattn_attn_row, W),
    DINTATTN__ABI_T(dintattn_inspect), DINTATTN__ABI_F(dintattn_inspect, row), DINTATTN__ABI_F(dintattn_inspect, user),
    DINTATTN__ABI_F(dintattn_inspect, layers), DINTATTN__ABI_F(dintattn_inspect, heads),
    DINTATTN__ABI_F(dintattn_inspect, pos_from), DINTATTN__ABI_F(dintattn_inspect, pos_to),
    DINTATTN__ABI_T(dintattn_attn_stats), DINTATTN__ABI_F(dintattn_attn_stats, sum),
    DINTATTN__ABI_F(dintattn_attn_stats, neg_sum), DINTATTN__ABI_F(dintattn_attn_stats, neg_share),
    DINTATTN__ABI_F(dintattn_attn_stats, entropy), DINTATTN__ABI_F(dintattn_attn_stats, span_mass),
    DINTATTN__ABI_F(dintattn_attn_stats, rest_mass),
    DINTATTN__ABI_T(dintattn_load_options), DINTATTN__ABI_F(dintattn_load_options, qk_form),
    DINTATTN__ABI_F(dintattn_load_options, weights), DINTATTN__ABI_F(dintattn_load_options, check_finite),
    DINTATTN__ABI_F(dintattn_load_options, progress), DINTATTN__ABI_F(dintattn_load_options, progress_user),
    DINTATTN__ABI_F(dintattn_load_options, map), DINTATTN__ABI_F(dintattn_load_options, n_threads),
    DINTATTN__ABI_T(dintattn_session_options), DINTATTN__ABI_F(dintattn_session_options, n_ctx),
    DINTATTN__ABI_F(dintattn_session_options, n_batch), DINTATTN__ABI_F(dintattn_session_options, n_threads),
    DINTATTN__ABI_F(dintattn_session_options, kernels), DINTATTN__ABI_F(dintattn_session_options, precision),
    DINTATTN__ABI_F(dintattn_session_options, kv), DINTATTN__ABI_F(dintattn_session_options, tiles_min_tokens),
    DINTATTN__ABI_F(dintattn_session_options, bf16_dot),
    DINTATTN__ABI_T(dintattn_sampler_options), DINTATTN__ABI_F(dintattn_sampler_options, temperature),
    DINTATTN__ABI_F(dintattn_sampler_options, top_k), DINTATTN__ABI_F(dintattn_sampler_options, top_p),
    DINTATTN__ABI_F(dintattn_sampler_options, min_p), DINTATTN__ABI_F(dintattn_sampler_options, repeat_penalty),
    DINTATTN__ABI_F(dintattn_sampler_options, repeat_last_n), DINTATTN__ABI_F(dintattn_sampler_options, seed),
    DINTATTN__ABI_T(dintattn_tensor_info), DINTATTN__ABI_F(dintattn_tensor_info, name),
    DINTATTN__ABI_F(dintattn_tensor_info, layer), DINTATTN__ABI_F(dintattn_tensor_info, rows),
    DINTATTN__ABI_F(dintattn_tensor_info, cols), DINTATTN__ABI_F(dintattn_tensor_info, type),
    DINTATTN__ABI_F(dintattn_tensor_info, bytes), DINTATTN__ABI_F(dintattn_tensor_info, read_bytes),
    DINTATTN__ABI_F(dintattn_tensor_info, matrix), DINTATTN__ABI_F(dintattn_tensor_info, in_file),
    DINTATTN__ABI_F(dintattn_tensor_info, heads),
    DINTATTN__ABI_T(dintattn_chat_message), DINTATTN__ABI_F(dintattn_chat_message, role),
    DINTATTN__ABI_F(dintattn_chat_message, content),
    DINTATTN__ABI_T(dintattn_batch_item), DINTATTN__ABI_F(dintattn_batch_item, sess),
    DINTATTN__ABI_F(dintattn_batch_item, tokens), DINTATTN__ABI_F(dintattn_batch_item, n_tokens),
    DINTATTN__ABI_F(dintattn_batch_item, logits), DINTATTN__ABI_F(dintattn_batch_item, all_logits),
    DINTATTN__ABI_T(dintattn_batch_options), DINTATTN__ABI_F(dintattn_batch_options, max_tokens),
    DINTATTN__ABI_T(dintattn_act_options), DINTATTN__ABI_F(dintattn_act_options, top_k),
    DINTATTN__ABI_T(dintattn_act_stats), DINTATTN__ABI_F(dintattn_act_stats, count),
    DINTATTN__ABI_F(dintattn_act_stats, nonfinite), DINTATTN__ABI_F(dintattn_act_stats, k),
    DINTATTN__ABI_F(dintattn_act_stats, top1), DINTATTN__ABI_F(dintattn_act_stats, topk),
    DINTATTN__ABI_F(dintattn_act_stats, median), DINTATTN__ABI_F(dintattn_act_stats, ratio),
    DINTATTN__ABI_F(dintattn_act_stats, mean), DINTATTN__ABI_F(dintattn_act_stats, std),
    DINTATTN__ABI_F(dintattn_act_stats, kurtosis),
    DINTATTN__ABI_E(dintattn_act_kind, DINTATTN_ACT_LOGITS1), DINTATTN__ABI_E(dintattn_act_kind, DINTATTN_ACT_LOGITS2),
    DINTATTN__ABI_E(dintattn_act_kind, DINTATTN_ACT_FFN_IN), DINTATTN__ABI_E(dintattn_act_kind, DINTATTN_ACT_HIDDEN),
    DINTATTN__ABI_E(dintattn_result, DINTATTN_OK), DINTATTN__ABI_E(dintattn_result, DINTATTN_ERR_IO),
    DINTATTN__ABI_E(dintattn_result, DINTATTN_ERR_TRUNCATED), DINTATTN__ABI_E(dintattn_result, DINTATTN_ERR_HEADER),
    DINTATTN__ABI_E(dintattn_result, DINTATTN_ERR_DTYPE), DINTATTN__ABI_E(dintattn_result, DINTATTN_ERR_OFFSETS),
    DINTATTN__ABI_E(dintattn_result, DINTATTN_ERR_METADATA), DINTATTN__ABI_E(dintattn_result, DINTATTN_ERR_CONFIG),
    DINTATTN__ABI_E(dintattn_result, DINTATTN_ERR_MISSING_TENSOR),
    DINTATTN__ABI_E(dintattn_result, DINTATTN_ERR_UNKNOWN_TENSOR), DINTATTN__ABI_E(dintattn_result, DINTATTN_ERR_SHAPE),
    DINTATTN__ABI_E(dintattn_result, DINTATTN_ERR_NOMEM), DINTATTN__ABI_E(dintattn_result, DINTATTN_ERR_ARG),
    DINTATTN__ABI_E(dintattn_result, DINTATTN_ERR_CONTEXT), DINTATTN__ABI_E(dintattn_result, DINTATTN_ERR_THREAD),
    DINTATTN__ABI_E(dintattn_result, DINTATTN_ERR_TOKENIZER), DINTATTN__ABI_E(dintattn_result, DINTATTN_ERR_NONFINITE),
    DINTATTN__ABI_E(dintattn_attention, DINTATTN_ATTN_STANDARD), DINTATTN__ABI_E(dintattn_attention, DINTATTN_ATTN_DIFF),
    DINTATTN__ABI_E(dintattn_attention, DINTATTN_ATTN_DINT),
    DINTATTN__ABI_E(dintattn_integral, DINTATTN_INTEGRAL_SOFTMAX), DINTATTN__ABI_E(dintattn_integral, DINTATTN_INTEGRAL_MEAN),
    DINTATTN__ABI_E(dintattn_head_norm_type, DINTATTN_HEADNORM_RMS),
    DINTATTN__ABI_E(dintattn_head_norm_type, DINTATTN_HEADNORM_GROUP),
    DINTATTN__ABI_E(dintattn_head_scale, DINTATTN_HEAD_SCALE_NONE),
    DINTATTN__ABI_E(dintattn_head_scale, DINTATTN_HEAD_SCALE_ONE_MINUS_LAMBDA_INIT),
    DINTATTN__ABI_E(dintattn_rope, DINTATTN_ROPE_INTERLEAVED), DINTATTN__ABI_E(dintattn_rope, DINTATTN_ROPE_HALVES),
    DINTATTN__ABI_E(dintattn_rope, DINTATTN_ROPE_NONE),
    DINTATTN__ABI_E(dintattn_ffn_act, DINTATTN_FFN_SILU), DINTATTN__ABI_E(dintattn_ffn_act, DINTATTN_FFN_POLYNORM),
    DINTATTN__ABI_E(dintattn_lambda_mode, DINTATTN_LAMBDA_REPARAM),
    DINTATTN__ABI_E(dintattn_lambda_mode, DINTATTN_LAMBDA_TOKEN_SIGMOID),
    DINTATTN__ABI_E(dintattn_rope_scaling_type, DINTATTN_ROPE_SCALING_NONE),
    DINTATTN__ABI_E(dintattn_rope_scaling_type, DINTATTN_ROPE_SCALING_LINEAR),
    DINTATTN__ABI_E(dintattn_rope_scaling_type, DINTATTN_ROPE_SCALING_LLAMA3),
    DINTATTN__ABI_E(dintattn_rope_scaling_type, DINTATTN_ROPE_SCALING_YARN),
    DINTATTN__ABI_E(dintattn_qk_form, DINTATTN_QK_AUTO), DINTATTN__ABI_E(dintattn_qk_form, DINTATTN_QK_FACTORED),
    DINTATTN__ABI_E(dintattn_qk_form, DINTATTN_QK_MERGED),
};
#undef DINTATTN__ABI_T
#undef DINTATTN__ABI_F
#undef DINTATTN__ABI_E

DINTATTN_API const dintattn_abi_field *dintattn_abi_fields(int *n)
{
    if (n) *n = (int)(sizeof dintattn__abi / sizeof dintattn__abi[0]);
    return dintattn__abi;
}

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

/* memset that is always done: the compiler may fold malloc + memset into calloc, which leaves
   the pages to be faulted in later. */
static void *(*volatile dintattn__memset)(void *, int, size_t) = memset;

/* Asks Linux to back the 2 MiB-aligned interior of [p, p + n) with 2 MiB pages (transparent huge
   pages in "madvise" mode, many distributions' default, go only to memory that asks), before the
   memory is first written: converted weights and the session's KV cache are then walked with one
   page-table entry per 2 MiB instead of per 4 KiB. A 4 KiB page-table walk per 4 KiB of weights
   costs a model of gigabytes a fifth of its decode speed (a 2.7B BF16 model decodes at 0.74 of
   the memory bandwidth on 4 KiB pages, 0.90 on 2 MiB pages: examples/bench --map file against
   --map copy; docs/computing.md, "Weights: where they live"). Advice only: where
   the kernel has no such pages, or with the user's allocator, nothing changes. */
#if defined(MADV_HUGEPAGE)
#define DINTATTN__MADV_HUGEPAGE MADV_HUGEPAGE
#elif defined(__linux__) && !defined(__cplusplus)
/* Strict C (-std=c99, or _POSIX_C_SOURCE alone) hides madvise and MADV_HUGEPAGE in glibc's
   <sys/mman.h>: declared here, with Linux's value (14 on every architecture). Without this the
   advice is never given in the examples' and tests' builds, which use -std=c99 (no
   AnonHugePages in /proc/self/smaps while a converted model decodes). */
#define DINTATTN__MADV_HUGEPAGE 14
extern int madvise(void *addr, size_t len, int advice);
#endif
static void dintattn__hugepages(void *p, size_t n)
{
#if defined(DINTATTN__MADV_HUGEPAGE) && defined(DINTATTN__OWN_MALLOC)
    const uintptr_t huge = (uintptr_t)2 << 20, a = ((uintptr_t)p + huge - 1) & ~(huge - 1);
    const uintptr_t e = ((uintptr_t)p + n) & ~(huge - 1);
    if (e > a) (void)madvise((void *)a, e - a, DINTATTN__MADV_HUGEPAGE);
#else
    (void)p, (void)n;
#endif
}

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

/* Makes room for element n of the array *p (*cap elements of `size` bytes), doubling it (from 8).
   Returns 0, or -1 when out of memory (the array is then unchanged). */
static int dintattn__grow(void **p, int *cap, int n, size_t size)
{
    size_t want;
    void *q;
    if (n < *cap) return 0;
    if (*cap > INT_MAX / 2) return -1;
    want = *cap ? 2 * (size_t)*cap : 8;
    if (want > SIZE_MAX / size || !(q = DINTATTN_REALLOC(*p, want * size))) return -1;
    *p = q;
    *cap = (int)want;
    return 0;
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
    if (j->n_nodes >= INT_MAX / 4) return dintattn__json_error(j, "too many JSON values");
    if (dintattn__grow((void **)&j->nodes, &j->cap_nodes, j->n_nodes, sizeof *j->nodes)) {
        j->nomem = 1;
        return dintattn__json_error(j, "out of memory");
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

/* --- The public JSON reader: thin wrappers over the parser above. ----------------------------
   A dintattn_json_node is a dintattn__jnode of the document. Each container's children are also
   listed in one flat table (kids, from first[node]) so that dintattn_json_at is O(1) and walking an
   array by index stays linear. */

struct dintattn_json {
    dintattn__json j;
    int *first;               /* per node: where its children begin in kids */
    int *kids;                /* every container's children, container by container */
};

typedef char dintattn__json_kinds_match[(DINTATTN__JNULL == (int)DINTATTN_JSON_NULL && DINTATTN__JBOOL == (int)DINTATTN_JSON_BOOL &&
                                         DINTATTN__JNUM == (int)DINTATTN_JSON_NUMBER && DINTATTN__JSTR == (int)DINTATTN_JSON_STRING &&
                                         DINTATTN__JARR == (int)DINTATTN_JSON_ARRAY && DINTATTN__JOBJ == (int)DINTATTN_JSON_OBJECT) ? 1 : -1];

#define DINTATTN__JN(node) ((const dintattn__jnode *)(const void *)(node))

DINTATTN_API void dintattn_json_free(dintattn_json *json)
{
    if (!json) return;
    dintattn__json_free(&json->j);
    DINTATTN_FREE(json->first);
    DINTATTN_FREE(json->kids);
    DINTATTN_FREE(json);
}

DINTATTN_API dintattn_result dintattn_json_parse(const char *text, size_t len, dintattn_json **out, dintattn_error *err)
{
    dintattn_json *json;
    int i, c, at = 0;
    if (!out) return dintattn__fail(err, DINTATTN_ERR_ARG, "dintattn_json_parse: out is NULL");
    *out = NULL;
    if (!text && len) return dintattn__fail(err, DINTATTN_ERR_ARG, "dintattn_json_parse: text is NULL");
    json = (dintattn_json *)dintattn__alloc(sizeof *json);
    if (!json) return dintattn__fail(err, DINTATTN_ERR_NOMEM, "out of memory for a JSON document");
    memset(json, 0, sizeof *json);
    if (dintattn__json_parse(&json->j, text ? text : "", len) < 0) {
        dintattn_result code = json->j.nomem ? DINTATTN_ERR_NOMEM : DINTATTN_ERR_ARG;
        dintattn__fail(err, code, "%s", json->j.err);
        dintattn_json_free(json);
        return code;
    }
    json->first = (int *)dintattn__alloc(sizeof *json->first * (size_t)json->j.n_nodes);
    json->kids = (int *)dintattn__alloc(sizeof *json->kids * (size_t)json->j.n_nodes);
    if (!json->first || !json->kids) {
        dintattn_json_free(json);
        return dintattn__fail(err, DINTATTN_ERR_NOMEM, "out of memory for a JSON document");
    }
    for (i = 0; i < json->j.n_nodes; i++) {
        json->first[i] = at;
        for (c = json->j.nodes[i].child; c >= 0; c = json->j.nodes[c].next) json->kids[at++] = c;
    }
    *out = json;
    dintattn__ok(err);
    return DINTATTN_OK;
}

DINTATTN_API const dintattn_json_node *dintattn_json_root(const dintattn_json *json)
{
    return json ? (const dintattn_json_node *)(const void *)&json->j.nodes[0] : NULL;
}

DINTATTN_API const dintattn_json_node *dintattn_json_get(const dintattn_json *json, const dintattn_json_node *obj,
                                                         const char *key)
{
    if (!json || !key) return NULL;
    return (const dintattn_json_node *)(const void *)dintattn__json_get(&json->j, DINTATTN__JN(obj), key);
}

DINTATTN_API dintattn_json_kind dintattn_json_type(const dintattn_json *json, const dintattn_json_node *node)
{
    (void)json;
    return node ? (dintattn_json_kind)DINTATTN__JN(node)->type : DINTATTN_JSON_NULL;
}

DINTATTN_API const char *dintattn_json_str(const dintattn_json *json, const dintattn_json_node *node, size_t *len)
{
    int is_str = dintattn_json_type(json, node) == DINTATTN_JSON_STRING;
    if (len) *len = is_str ? DINTATTN__JN(node)->str_len : 0;
    return is_str ? DINTATTN__JN(node)->str : NULL;
}

DINTATTN_API double dintattn_json_num(const dintattn_json *json, const dintattn_json_node *node)
{
    return dintattn_json_type(json, node) == DINTATTN_JSON_NUMBER ? DINTATTN__JN(node)->num : 0.0;
}

DINTATTN_API int dintattn_json_int(const dintattn_json *json, const dintattn_json_node *node, long long *out)
{
    if (dintattn_json_type(json, node) != DINTATTN_JSON_NUMBER || !DINTATTN__JN(node)->is_int) return 0;
    if (out) *out = DINTATTN__JN(node)->ival;
    return 1;
}

DINTATTN_API int dintattn_json_bool(const dintattn_json *json, const dintattn_json_node *node)
{
    return dintattn_json_type(json, node) == DINTATTN_JSON_BOOL && DINTATTN__JN(node)->boolean;
}

DINTATTN_API int dintattn_json_len(const dintattn_json *json, const dintattn_json_node *node)
{
    dintattn_json_kind t = dintattn_json_type(json, node);
    return t == DINTATTN_JSON_ARRAY || t == DINTATTN_JSON_OBJECT ? DINTATTN__JN(node)->n_children : 0;
}

DINTATTN_API const dintattn_json_node *dintattn_json_at(const dintattn_json *json, const dintattn_json_node *node, int i)
{
    if (!json || i < 0 || i >= dintattn_json_len(json, node)) return NULL;
    return (const dintattn_json_node *)(const void *)&json->j.nodes[json->kids[json->first[DINTATTN__JN(node) - json->j.nodes] + i]];
}

DINTATTN_API const char *dintattn_json_key(const dintattn_json *json, const dintattn_json_node *node)
{
    (void)json;
    return node ? DINTATTN__JN(node)->key : NULL;
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
    dintattn__json header, config, tokenizer, chat; /* the optional metadata "tokenizer" and "chat" */
    dintattn__tensor *tensors; /* sorted by name */
    int n_tensors;
    int minor;                /* the format's version: "1" (0) or "1.1" (1) */
    int tokenizer_file;       /* in: a tokenizer file (format "dintattn-tokenizer") will do; out: it is one */
    const char *path;         /* while it is read, for the messages: the file's path (NULL: bytes in memory) */
} dintattn__file;

/* What a message calls the file being read. */
static const char *dintattn__file_name(const dintattn__file *f)
{
    return f->path ? f->path : "the model in memory";
}

static void dintattn__file_close(dintattn__file *f)
{
    if (f->map) munmap(f->map, f->size);
    dintattn__json_free(&f->header);
    dintattn__json_free(&f->config);
    dintattn__json_free(&f->tokenizer);
    dintattn__json_free(&f->chat);
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

/* s[0..n) as one shell word (single-quoted if it holds anything but [A-Za-z0-9/._+,:@=-]), so
   that a message's command can be pasted as it is; cut to fit cap. */
static void dintattn__shell_word(char *out, size_t cap, const char *s, size_t n)
{
    size_t i, o = 0;
    int plain = n > 0;
    for (i = 0; i < n; i++) {
        char c = s[i];
        if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || (c && strchr("/._+,:@=-", c))))
            plain = 0;
    }
    if (cap == 0) return;
    if (!plain && o + 1 < cap) out[o++] = '\'';
    for (i = 0; i < n && o + 5 < cap; i++) {
        if (!plain && s[i] == '\'') { /* '\'' ends the quote, puts a quote, opens again */
            memcpy(out + o, "'\\''", 4);
            o += 4;
        } else {
            out[o++] = s[i];
        }
    }
    if (!plain && o + 1 < cap) out[o++] = '\'';
    out[o] = 0;
}

/* 1 if a tensor's name ends with suffix (and contains `also`, if given). */
static int dintattn__has_tensor_like(const dintattn__file *f, const char *suffix, const char *also)
{
    size_t n = strlen(suffix);
    int c;
    for (c = f->header.nodes[0].child; c >= 0; c = f->header.nodes[c].next) { /* the header's keys */
        const char *name = f->header.nodes[c].key;
        size_t len = strlen(name);
        if (len >= n && strcmp(name + len - n, suffix) == 0 && (!also || strstr(name, also))) return 1;
    }
    return 0;
}

/* The tools/convert.py --format of a checkpoint told by the tensor names that tell the layouts
   apart (what the mismatch() of each layout in tools/layouts keys on: PolyNorm's act_fn is Motif's alone,
   lambda_proj DIFF V2's, lambda_q1 without subln DiffLlama's, subln with out_proj unilm's), or NULL
   when none is certain. Any layer index counts, so that every shard of a sharded checkpoint is
   told. *decoder_like: the names look like a decoder's checkpoint at all. */
static const char *dintattn__checkpoint_layout(const dintattn__file *f, int *decoder_like)
{
    *decoder_like = dintattn__has_tensor_like(f, "", "model.layers.") || dintattn__has_tensor_like(f, "", ".self_attn.") ||
                    dintattn__has_tensor_like(f, "embed_tokens.weight", NULL) ||
                    dintattn__has_tensor_like(f, "lm_head.weight", NULL);
    if (dintattn__has_tensor_like(f, ".mlp.act_fn.weight", "layers.")) return "motif";
    if (dintattn__has_tensor_like(f, ".lambda_proj.weight", "layers.")) return "diffv2";
    if (dintattn__has_tensor_like(f, "token_emb.emb.weight", NULL) ||
        dintattn__has_tensor_like(f, ".to_q.weight", "attn_layers.layers."))
        return "xtransformers";
    if (dintattn__has_tensor_like(f, ".self_attn.lambda_q1", "layers.") && !dintattn__has_tensor_like(f, ".subln.weight", NULL))
        return "diffllama";
    if (dintattn__has_tensor_like(f, ".subln.weight", "layers.") && dintattn__has_tensor_like(f, ".out_proj.weight", "layers."))
        return "unilm";
    return NULL;
}

/* The error for a safetensors file that is not a dintattn model (`why`: the metadata's fault): a
   checkpoint's file, named by its layout, with the tools/convert.py command for its directory. */
static dintattn_result dintattn__fail_not_dintattn(const dintattn__file *f, const char *why, dintattn_error *err)
{
    const char *layout, *slash = f->path ? strrchr(f->path, '/') : NULL;
    char dir[200], what[64];
    int decoder_like;
    if (!f->path) snprintf(dir, sizeof dir, "DIR");
    else if (!slash) snprintf(dir, sizeof dir, ".");
    else dintattn__shell_word(dir, sizeof dir, f->path, slash == f->path ? 1 : (size_t)(slash - f->path));
    layout = dintattn__checkpoint_layout(f, &decoder_like);
    if (layout) snprintf(what, sizeof what, "a Hugging Face checkpoint (%s layout)", layout);
    else if (decoder_like) snprintf(what, sizeof what, "a Hugging Face-style checkpoint");
    else
        return dintattn__fail(err, DINTATTN_ERR_METADATA,
                              "%.200s is a safetensors file but not a dintattn model file (%s): give a dintattn model "
                              "file, or convert a checkpoint's directory with python3 tools/convert.py --format auto "
                              "%s out.safetensors (docs/tools.md)", dintattn__file_name(f), why, dir);
    return dintattn__fail(err, DINTATTN_ERR_METADATA,
                          "%.200s is %s, not a dintattn model file: convert its directory with python3 tools/convert.py "
                          "--format auto %s out.safetensors (docs/tools.md)", dintattn__file_name(f), what, dir);
}

static dintattn_result dintattn__read_metadata(dintattn__file *f, const dintattn__jnode *meta, dintattn_error *err)
{
    const dintattn__json *j = &f->header;
    const dintattn__jnode *fmt, *ver, *cfg;
    int c;
    if (!meta) return dintattn__fail_not_dintattn(f, "no __metadata__", err);
    if (meta->type != DINTATTN__JOBJ)
        return dintattn__fail(err, DINTATTN_ERR_METADATA, "__metadata__ is not an object");
    for (c = meta->child; c >= 0; c = j->nodes[c].next)
        if (j->nodes[c].type != DINTATTN__JSTR)
            return dintattn__fail(err, DINTATTN_ERR_METADATA, "__metadata__ value '%.80s' is not a string",
                                  j->nodes[c].key);
    fmt = dintattn__json_get(j, meta, "format");
    ver = dintattn__json_get(j, meta, "version");
    cfg = dintattn__json_get(j, meta, "config");
    if (f->tokenizer_file && fmt && strcmp(fmt->str, "dintattn-tokenizer") == 0) { /* no config */
        if (!ver || strcmp(ver->str, "1") != 0)
            return dintattn__fail(err, DINTATTN_ERR_METADATA, "__metadata__ \"version\" is not \"1\"");
        return DINTATTN_OK;
    }
    if (fmt && strcmp(fmt->str, "dintattn-tokenizer") == 0)
        return dintattn__fail(err, DINTATTN_ERR_METADATA,
                              "a tokenizer file (format \"dintattn-tokenizer\"), not a model: load it with "
                              "dintattn_tokenizer_load");
    f->tokenizer_file = 0;
    if (!fmt || strcmp(fmt->str, "dintattn") != 0)
        return dintattn__fail_not_dintattn(f, "__metadata__ \"format\" is not \"dintattn\"", err);
    if (!ver || (strcmp(ver->str, "1") != 0 && strcmp(ver->str, "1.1") != 0))
        return dintattn__fail(err, DINTATTN_ERR_METADATA, "__metadata__ \"version\" is not \"1\" or \"1.1\"");
    f->minor = strcmp(ver->str, "1.1") == 0;
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
    uint64_t hlen = 0, need, packed;
    size_t data_size, first;
    const dintattn__jnode *root, *meta = NULL;
    int c, i, k;
    dintattn_result r;
    if (f->size < 8)
        return dintattn__fail(err, DINTATTN_ERR_TRUNCATED,
                              "%.200s is not a safetensors file (%lu bytes, too short for a safetensors header): give a "
                              "dintattn model file (docs/format.md section 2)", dintattn__file_name(f),
                              (unsigned long)f->size);
    if (memcmp(f->bytes, "PK\3\4", 4) == 0 || memcmp(f->bytes, "GGUF", 4) == 0) { /* the two other weight files */
        char word[240];
        const int gguf = f->bytes[0] == 'G';
        if (f->path) dintattn__shell_word(word, sizeof word, f->path, strlen(f->path));
        else snprintf(word, sizeof word, "FILE");
        return dintattn__fail(err, DINTATTN_ERR_HEADER,
                              gguf ? "%.200s is a GGUF file (llama.cpp's format), not a dintattn model file: convert the "
                                     "Hugging Face checkpoint it came from with python3 tools/convert.py --format auto "
                                     "DIR out.safetensors (docs/tools.md)%.0s"
                                   : "%.200s is a zip archive (a PyTorch checkpoint?), not a dintattn model file: convert "
                                     "it with python3 tools/convert.py --format auto %s out.safetensors (docs/tools.md)",
                              dintattn__file_name(f), word);
    }
    for (i = 7; i >= 0; i--) hlen = hlen << 8 | f->bytes[i];
    /* the header's first byte after JSON whitespace: a header is an object */
    for (first = 8; first < f->size && first - 8 < hlen && strchr(" \t\r\n", f->bytes[first]) && f->bytes[first]; first++) {}
    /* a header that begins as JSON and is of a plausible length is a file cut short; else the
       eight bytes were never a safetensors header length (a text file's first characters) */
    if (hlen > f->size - 8 && first < f->size && f->bytes[first] == '{' && hlen <= DINTATTN__MAX_HEADER)
        return dintattn__fail(err, DINTATTN_ERR_TRUNCATED,
                              "%.200s is truncated: the file has %lu of the %llu bytes its header describes (copy or "
                              "download it again)", dintattn__file_name(f), (unsigned long)f->size,
                              (unsigned long long)hlen + 8);
    if (hlen > f->size - 8)
        return dintattn__fail(err, DINTATTN_ERR_HEADER,
                              "%.200s is not a safetensors file (header length %llu runs past the end of its %lu bytes): "
                              "give a dintattn model file (docs/format.md section 2)", dintattn__file_name(f),
                              (unsigned long long)hlen, (unsigned long)f->size);
    if (hlen < 2 || hlen > DINTATTN__MAX_HEADER)
        return dintattn__fail(err, DINTATTN_ERR_HEADER,
                              "%.200s is not a safetensors file (header length %llu is not in [2, %u]): give a dintattn "
                              "model file (docs/format.md section 2)", dintattn__file_name(f), (unsigned long long)hlen,
                              DINTATTN__MAX_HEADER);
    if (first == 8 + hlen || f->bytes[first] != '{')
        return dintattn__fail(err, DINTATTN_ERR_HEADER,
                              "%.200s is not a safetensors file (its header does not begin with '{'): give a dintattn "
                              "model file (docs/format.md section 2)", dintattn__file_name(f));
    if (dintattn__json_parse(&f->header, (const char *)f->bytes + 8, (size_t)hlen) < 0)
        return dintattn__fail(err, f->header.nomem ? DINTATTN_ERR_NOMEM : DINTATTN_ERR_HEADER, "header JSON: %s",
                              f->header.err);
    root = &f->header.nodes[0];
    if (root->type != DINTATTN__JOBJ) return dintattn__fail(err, DINTATTN_ERR_HEADER, "header is not a JSON object");
    data_size = f->size - 8 - (size_t)hlen;
    f->tensors = (dintattn__tensor *)dintattn__calloc((size_t)root->n_children + 1, sizeof *f->tensors);
    if (!f->tensors) return dintattn__fail(err, DINTATTN_ERR_NOMEM, "out of memory reading the header");
    /* the furthest end the entries' data_offsets give: past the data, with the tensors packed
       as writers pack them (gaps of at most 64 bytes each, for alignment), the file was cut
       short; an absurd offset is refused below, by the entry's name */
    for (c = root->child, need = 0, packed = 0, k = 0; c >= 0; c = f->header.nodes[c].next, k++) {
        const dintattn__jnode *e = &f->header.nodes[c];
        const dintattn__jnode *off = e->type == DINTATTN__JOBJ ? dintattn__json_get(&f->header, e, "data_offsets") : NULL;
        const dintattn__jnode *a = off && off->type == DINTATTN__JARR && off->n_children == 2
                                       ? &f->header.nodes[off->child] : NULL;
        const dintattn__jnode *b = a ? &f->header.nodes[a->next] : NULL;
        if (!a || a->type != DINTATTN__JNUM || b->type != DINTATTN__JNUM || !a->is_int || !b->is_int || a->ival < 0 ||
            b->ival < a->ival)
            continue;
        if ((uint64_t)b->ival > need) need = (uint64_t)b->ival;
        packed = (uint64_t)(b->ival - a->ival) > UINT64_MAX - packed ? UINT64_MAX : packed + (uint64_t)(b->ival - a->ival);
    }
    if (need > data_size && packed <= need && need - packed <= 64 * (uint64_t)(k + 1))
        return dintattn__fail(err, DINTATTN_ERR_TRUNCATED,
                              "%.200s is truncated: the file has %lu of the %llu bytes its header describes (copy or "
                              "download it again)", dintattn__file_name(f), (unsigned long)f->size,
                              (unsigned long long)(8 + hlen + need));
    /* another program's safetensors file (a checkpoint's) is told as such before its entries,
       whose dtypes and names need not be ours */
    if ((meta = dintattn__json_get(&f->header, root, "__metadata__")) == NULL)
        return dintattn__fail_not_dintattn(f, "no __metadata__", err);
    if (meta->type == DINTATTN__JOBJ) {
        const dintattn__jnode *fmt = dintattn__json_get(&f->header, meta, "format");
        if (!fmt || (fmt->type == DINTATTN__JSTR && strcmp(fmt->str, "dintattn") != 0 &&
                     strcmp(fmt->str, "dintattn-tokenizer") != 0))
            return dintattn__fail_not_dintattn(f, "__metadata__ \"format\" is not \"dintattn\"", err);
    }
    meta = NULL;
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

/* The error for a directory given as a model: a Hugging Face checkpoint's (it has a config.json;
   its model_type named) with the tools/convert.py command, else what to give instead. */
static dintattn_result dintattn__fail_directory(const char *path, dintattn_error *err)
{
    char word[240], file[600], type[64] = "", some[128] = "";
    size_t n = strlen(path);
    DIR *d = opendir(path);
    FILE *cfg;
    struct dirent *e;
    while (n > 1 && path[n - 1] == '/') n--;
    dintattn__shell_word(word, sizeof word, path, n);
    while (d && (e = readdir(d)) != NULL) { /* a .safetensors file in it, to name */
        size_t len = strlen(e->d_name);
        if (len > 12 && strcmp(e->d_name + len - 12, ".safetensors") == 0 && (!some[0] || strcmp(e->d_name, some) < 0))
            snprintf(some, sizeof some, "%.120s", e->d_name);
    }
    if (d) closedir(d);
    snprintf(file, sizeof file, "%.*s/config.json", (int)(n < 500 ? n : 500), path);
    if ((cfg = fopen(file, "rb")) != NULL) {
        /* config.json's model_type: a checkpoint's config is a few KB; 1 MiB is ample */
        char *text = (char *)DINTATTN_MALLOC(1u << 20);
        size_t got = text ? fread(text, 1, 1u << 20, cfg) : 0;
        dintattn__json j;
        memset(&j, 0, sizeof j);
        if (got && dintattn__json_parse(&j, text, got) == 0 && j.nodes[0].type == DINTATTN__JOBJ) {
            const dintattn__jnode *t = dintattn__json_get(&j, &j.nodes[0], "model_type");
            if (t && t->type == DINTATTN__JSTR) snprintf(type, sizeof type, " (model_type \"%.40s\")", t->str);
        }
        dintattn__json_free(&j);
        DINTATTN_FREE(text);
        fclose(cfg);
        return dintattn__fail(err, DINTATTN_ERR_IO,
                              "%.200s is a Hugging Face checkpoint directory%s, not a dintattn model file: convert it "
                              "with python3 tools/convert.py --format auto %s out.safetensors (docs/tools.md)", path,
                              type, word);
    }
    if (some[0])
        return dintattn__fail(err, DINTATTN_ERR_IO,
                              "%.200s is a directory, not a model file: give a dintattn model file in it (such as %s/%s), "
                              "or convert a Hugging Face checkpoint with python3 tools/convert.py --format auto %s "
                              "out.safetensors (docs/tools.md)", path, word, some, word);
    return dintattn__fail(err, DINTATTN_ERR_IO,
                          "%.200s is a directory, not a model file: give a dintattn model file (a .safetensors file "
                          "that tools/convert.py wrote)", path);
}

static dintattn_result dintattn__file_map(dintattn__file *f, const char *path, dintattn_error *err)
{
    struct stat st;
    int fd = open(path, O_RDONLY | O_NONBLOCK); /* a FIFO must not block us before fstat refuses it */
    if (fd < 0) return dintattn__fail(err, DINTATTN_ERR_IO, "cannot open '%.200s': %s", path, strerror(errno));
    if (fstat(fd, &st) == 0 && S_ISDIR(st.st_mode)) {
        close(fd);
        return dintattn__fail_directory(path, err);
    }
    if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
        close(fd);
        return dintattn__fail(err, DINTATTN_ERR_IO, "'%.200s' is not a regular file", path);
    }
    f->path = path;
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
   ============================================================================================
   Loading is parse -> validate -> build: the file's container was parsed in section 3; here the
   config is read (with every size product the engine relies on checked), then one complete pass
   validates every tensor against the table below, then a second pass builds the weight views.
   Nothing after validation checks a shape again. */

/* A weight matrix [rows][cols] (an nn.Linear's weight: y = W x) in the precision it is held in:
   a view into the mapped file, or a conversion the model owns. Q8 rows are blocks of 32 int8
   values q with one f32 scale each: w = scale * q. Q4 rows are blocks of 32 4-bit values in 16
   bytes (byte j holds element j in its low nibble, element j + 16 in its high one) with one f32
   scale each: w = scale * (nibble - 8). Adding a weight type is a name here, a row of
   dintattn__wtypes, a row of each kernel table (section 5) and, to produce it at load, a case in
   dintattn__convert. */
typedef enum {
    DINTATTN__W_F32,
    DINTATTN__W_F16,
    DINTATTN__W_BF16,
    DINTATTN__W_Q8,
    DINTATTN__W_Q4,
    DINTATTN__W_COUNT
} dintattn__wtype;

typedef struct dintattn__mat {
    const void *w;                  /* rows * cols elements of `type` */
    const float *scale;             /* Q8, Q4: rows * cols / 32 block scales */
    int rows, cols;
    dintattn__wtype type;
    /* the rows packed ahead as prefill's int8 or bf16 panels (dintattn_model_prepack), by
       panels_pack; NULL: a product packs each panel as it runs */
    const void *panels;
    void (*panels_pack)(const struct dintattn__mat *M, int r0, void *panel);
} dintattn__mat;

/* Element i (row-major) of M, one weight type each: the reference every kernel's tail and every
   conversion falls back on. */
static float dintattn__elem_f32(const dintattn__mat *M, size_t i) { return ((const float *)M->w)[i]; }
static float dintattn__elem_f16(const dintattn__mat *M, size_t i) { return dintattn__f16_to_f32(((const uint16_t *)M->w)[i]); }
static float dintattn__elem_bf16(const dintattn__mat *M, size_t i) { return dintattn__bf16_to_f32(((const uint16_t *)M->w)[i]); }
static float dintattn__elem_q8(const dintattn__mat *M, size_t i) { return M->scale[i / 32] * (float)((const signed char *)M->w)[i]; }
static float dintattn__elem_q4(const dintattn__mat *M, size_t i)
{
    const unsigned char b = ((const unsigned char *)M->w)[i / 32 * 16 + i % 16];
    return M->scale[i / 32] * (float)((i % 32 < 16 ? b & 15 : b >> 4) - 8);
}

static const struct {
    const char *name;
    size_t bits;              /* per weight */
    size_t block;             /* weights per f32 scale (Q8, Q4), 0: no scales */
    float (*elem)(const dintattn__mat *M, size_t i);
} dintattn__wtypes[DINTATTN__W_COUNT] = {{"f32", 32, 0, dintattn__elem_f32},
                                         {"f16", 16, 0, dintattn__elem_f16},
                                         {"bf16", 16, 0, dintattn__elem_bf16},
                                         {"q8", 8, 32, dintattn__elem_q8},
                                         {"q4", 4, 32, dintattn__elem_q4}};

static size_t dintattn__mat_bytes(const dintattn__mat *M)
{
    const size_t n = (size_t)M->rows * (size_t)M->cols, block = dintattn__wtypes[M->type].block;
    if (!M->w) return 0;
    return n * dintattn__wtypes[M->type].bits / 8 + (block ? n / block * sizeof(float) : 0);
}

static float dintattn__w_elem(const dintattn__mat *M, size_t i) { return dintattn__wtypes[M->type].elem(M, i); }

/* One layer's weights, named as the file names them (docs/format.md section 2). The Q/K projections
   accumulate in double (their products q . k feed the softmaxes, which amplify rounding: float32
   accumulation over D would dominate the error of the whole model, DINT's most), whatever
   precision their weights are held in. */
typedef struct dintattn__layer {
    const float *attn_norm, *ffn_norm;
    dintattn__mat wq1, wk1, wq2, wk2;                   /* dense (or merged Shared-DIFF) Q/K */
    dintattn__mat q_base, k_base, q1_down, k1_down, q2_down, k2_down;   /* Shared-DIFF, factored */
    const float *q1_up, *k1_up, *q2_up, *k2_up;         /* [heads * d][r], f32 (the file's values exactly) */
    dintattn__mat wv, wo;
    const float *lambda_q1, *lambda_k1, *lambda_q2, *lambda_k2;
    dintattn__mat lambda_proj;                          /* token lambda: [H, D] */
    const float *head_norm_w, *head_norm_b;
    int head_norm_per_head;                             /* weights are [H * dv], not [dv] */
    dintattn__mat w_gate, w_up, w_down;
    const float *act_weight, *act_bias;                 /* PolyNorm (w0, w1, w2), b */
    const float *b_gate, *b_up, *b_down;                /* ffn_bias */
    double lambda_init, lambda;                         /* per-layer scalars (docs/format.md section 1) */
} dintattn__layer;

struct dintattn_model {
    dintattn_config cfg;
    dintattn__layer *layers;
    dintattn__mat tok_embeddings, output;
    const float *norm;
    int qk_factored;
    int n_noise_runs;                                   /* runs of signal heads sharing A2 (dintattn__noise_runs) ... */
    int *noise_run;                                     /* ... run k is heads [noise_run[k], noise_run[k+1]) */
    dintattn_weights weights;                           /* the load option */
    void (*progress)(void *user, double done, double total); /* the load option, while loading */
    void *progress_user;
    double progress_done;                               /* bytes of the file's weights converted */
    int load_threads;                                   /* the load option n_threads */
    unsigned held_types;                                /* bit t: some matrix is held as dintattn__wtype t */
    size_t owned_bytes;
    /* the tokenizer carried by the file (docs/format.md section 5), if any */
    const unsigned char *tok_ranks, *tok_merges;        /* tensors tokenizer.ranks and .merges, or NULL */
    size_t tok_ranks_size, tok_merges_size;
    const dintattn__jnode *chat_roles, *chat_prompt, *chat_stop; /* the chat template, if any */
    const dintattn__jnode *chat_system, *chat_begin;    /* its default system message, its beginning */
    const dintattn__jnode *chat_last;                   /* roles written otherwise as the last message */
    int chat_prompt_always;                             /* the generation prompt whether asked for or not */
    dintattn__file file;
    void **owned;                                       /* chunks of converted weights to free */
    int n_owned, cap_owned;
    unsigned char *arena;                               /* the unused part of the last chunk */
    size_t arena_left;
};

/* docs/format.md section 1's head-index rule: signal head i of H reads head floor(i * n / H) of a
   projection with n heads. In 64 bits: i * n passes 2^31 for legal models (46,342 heads). */
static int dintattn__head_of(int i, int n, int H) { return (int)((int64_t)i * n / H); }

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

/* A head count of a projection: divides H; must_be_zero where the projection is absent. */
static dintattn_result dintattn__cfg_heads(const dintattn__json *j, const char *key, int def, int must_be_zero,
                                           int *out, dintattn_error *err, int H)
{
    dintattn_result r = dintattn__cfg_int(j, key, def, must_be_zero ? 0 : 1, H, out, err);
    if (r) return r;
    if (must_be_zero && *out != 0)
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
static const char *const dintattn__lambda_mode_names[] = {"reparam", "token_sigmoid", NULL};

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

/* Every width the engine holds in an int (a tensor's rows or columns, an activation row, a BLAS
   dimension or leading dimension) is a product of two config sizes, each at most 2^24: refuse the
   models whose products pass INT_MAX, naming the keys. Sizes of three or more factors (caches,
   whole tensors) are size_t and checked where they are allocated or by the file's own size. */
static dintattn_result dintattn__check_products(const dintattn_config *c, dintattn_error *err)
{
    const struct {
        const char *a, *b;
        int x, y;
    } p[] = {
        {"n_heads", "head_dim", c->n_heads, c->head_dim},       {"n_k1_heads", "head_dim", c->n_k1_heads, c->head_dim},
        {"n_q2_heads", "head_dim", c->n_q2_heads, c->head_dim}, {"n_k2_heads", "head_dim", c->n_k2_heads, c->head_dim},
        {"n_v_heads", "v_head_dim", c->n_v_heads, c->v_head_dim}, {"n_heads", "v_head_dim", c->n_heads, c->v_head_dim},
        {"n_heads", "qk_rank", c->n_heads, c->qk_rank},         {"n_k1_heads", "qk_rank", c->n_k1_heads, c->qk_rank},
        {"n_q2_heads", "qk_rank", c->n_q2_heads, c->qk_rank},   {"n_k2_heads", "qk_rank", c->n_k2_heads, c->qk_rank},
    };
    size_t k;
    for (k = 0; k < sizeof p / sizeof p[0]; k++)
        if ((int64_t)p[k].x * p[k].y > INT_MAX)
            return dintattn__fail(err, DINTATTN_ERR_CONFIG, "config: %s * %s = %lld is over %d", p[k].a, p[k].b,
                                  (long long)p[k].x * p[k].y, INT_MAX);
    return DINTATTN_OK;
}

/* rope_scaling (docs/format.md section 3): an object with "type" and that type's fields, nothing else. */
static dintattn_result dintattn__read_rope_scaling(const dintattn__json *j, const dintattn__jnode *o,
                                                   dintattn_rope_scaling *rs, dintattn_error *err)
{
    static const char *const types[] = {"linear", "llama3", "yarn", NULL};
    /* the fields each type takes; the first ones listed are required */
    static const char *const fields[3][9] = {
        {"factor", NULL},
        {"factor", "low_freq_factor", "high_freq_factor", "original_max_position_embeddings", NULL},
        {"factor", "original_max_position_embeddings", "beta_fast", "beta_slow", "mscale", "mscale_all_dim",
         "attention_factor", "truncate", NULL}};
    static const int required[3] = {1, 4, 2};
    const dintattn__jnode *type = o->type == DINTATTN__JOBJ ? dintattn__json_get(j, o, "type") : NULL;
    double v[8] = {0, 0, 0, 0, 0, 0, 0, 0};
    int t, k, c, given[8] = {0, 0, 0, 0, 0, 0, 0, 0};
    for (t = 0; type && type->type == DINTATTN__JSTR && types[t] && strcmp(type->str, types[t]) != 0; t++) continue;
    if (!type || type->type != DINTATTN__JSTR || !types[t])
        return dintattn__fail(err, DINTATTN_ERR_CONFIG,
                              "config key 'rope_scaling' must be an object with \"type\" \"linear\", \"llama3\" or \"yarn\"");
    for (c = o->child; c >= 0; c = j->nodes[c].next) {
        const dintattn__jnode *n = &j->nodes[c];
        if (strcmp(n->key, "type") == 0) continue;
        for (k = 0; fields[t][k] && strcmp(n->key, fields[t][k]) != 0; k++) continue;
        if (!fields[t][k])
            return dintattn__fail(err, DINTATTN_ERR_CONFIG, "config: rope_scaling of type \"%s\" has no field '%.60s'",
                                  types[t], n->key);
        if (strcmp(n->key, "truncate") == 0 ? n->type != DINTATTN__JBOOL : n->type != DINTATTN__JNUM || !(fabs(n->num) < 1e300))
            return dintattn__fail(err, DINTATTN_ERR_CONFIG, "config: rope_scaling field '%s' must be a %s", n->key,
                                  strcmp(n->key, "truncate") == 0 ? "boolean" : "finite number");
        v[k] = n->type == DINTATTN__JBOOL ? n->boolean : n->num;
        given[k] = 1;
    }
    for (k = 0; k < required[t]; k++)
        if (!given[k])
            return dintattn__fail(err, DINTATTN_ERR_CONFIG, "config: rope_scaling of type \"%s\" needs '%s'", types[t],
                                  fields[t][k]);
    memset(rs, 0, sizeof *rs);
    rs->type = (dintattn_rope_scaling_type)(t + 1);
    rs->factor = v[0];
    if (!(rs->factor >= 1)) return dintattn__fail(err, DINTATTN_ERR_CONFIG, "config: rope_scaling 'factor' must be >= 1");
    if (t == 1) {
        rs->low_freq_factor = v[1], rs->high_freq_factor = v[2], rs->original_max_position_embeddings = v[3];
        if (!(v[1] > 0 && v[2] > v[1]))
            return dintattn__fail(err, DINTATTN_ERR_CONFIG,
                                  "config: rope_scaling needs 0 < low_freq_factor < high_freq_factor");
    }
    if (t == 2) {
        /* yarn: beta 0 means the default; attention_factor as transformers resolves it */
        const double s = rs->factor;
        double mscale = v[4], mscale_all = v[5];
        rs->original_max_position_embeddings = v[1];
        rs->beta_fast = given[2] && v[2] != 0 ? v[2] : 32;
        rs->beta_slow = given[3] && v[3] != 0 ? v[3] : 1;
        rs->truncate = given[7] ? (int)v[7] : 1;
#define DINTATTN__MSCALE(a) (s <= 1 ? 1.0 : 0.1 * (a) * log(s) + 1.0)
        if (given[6]) rs->attention_factor = v[6];
        else if (given[4] && given[5] && mscale != 0 && mscale_all != 0)
            rs->attention_factor = DINTATTN__MSCALE(mscale) / DINTATTN__MSCALE(mscale_all);
        else rs->attention_factor = DINTATTN__MSCALE(1.0);
#undef DINTATTN__MSCALE
        if (!(rs->attention_factor > 0) || !(rs->beta_fast > 0) || !(rs->beta_slow > 0))
            return dintattn__fail(err, DINTATTN_ERR_CONFIG,
                                  "config: rope_scaling's beta_fast, beta_slow and attention_factor must be > 0");
    }
    if (t >= 1 && !(rs->original_max_position_embeddings >= 1))
        return dintattn__fail(err, DINTATTN_ERR_CONFIG, "config: rope_scaling 'original_max_position_embeddings' must be >= 1");
    return DINTATTN_OK;
}

/* The version 1.1 keys (docs/format.md section 3); in a version 1 file they are refused, since a v1
   reader would run such a model with the wrong math. */
static dintattn_result dintattn__read_v11(const dintattn__json *j, dintattn_config *c, int minor, dintattn_error *err)
{
    static const char *const keys[] = {"lambda_mode", "shared_k", "rope_dim", "rope_scaling", "ffn_bias", NULL};
    const dintattn__jnode *rs;
    const int diff = c->attention != DINTATTN_ATTN_STANDARD;
    dintattn_result r;
    int k, mode = 0;
    c->rope_dim = c->head_dim;
    for (k = 0; !minor && keys[k]; k++)
        if (dintattn__json_get(j, &j->nodes[0], keys[k]))
            return dintattn__fail(err, DINTATTN_ERR_CONFIG,
                                  "config key '%s' needs __metadata__ \"version\" \"1.1\" (this file says \"1\")", keys[k]);
    if (!minor) return DINTATTN_OK;
    if ((diff && (r = dintattn__cfg_enum(j, "lambda_mode", 0, dintattn__lambda_mode_names, &mode, err))) ||
        (diff && (r = dintattn__cfg_bool(j, "shared_k", 0, &c->shared_k, err))) ||
        (r = dintattn__cfg_bool(j, "ffn_bias", 0, &c->ffn_bias, err)) ||
        (c->rope != DINTATTN_ROPE_NONE && (r = dintattn__cfg_int(j, "rope_dim", c->head_dim, 2, c->head_dim, &c->rope_dim, err))))
        return r;
    c->lambda_mode = (dintattn_lambda_mode)mode;
    if (c->rope_dim % 2)
        return dintattn__fail(err, DINTATTN_ERR_CONFIG, "config key 'rope_dim' must be even, got %d", c->rope_dim);
    if (c->shared_k && c->n_k2_heads != c->n_k1_heads)
        return dintattn__fail(err, DINTATTN_ERR_CONFIG, "config: shared_k needs n_k2_heads (%d) = n_k1_heads (%d)",
                              c->n_k2_heads, c->n_k1_heads);
    if ((rs = dintattn__json_get(j, &j->nodes[0], "rope_scaling"))) {
        if (c->rope == DINTATTN_ROPE_NONE)
            return dintattn__fail(err, DINTATTN_ERR_CONFIG, "config: rope_scaling with rope \"none\"");
        return dintattn__read_rope_scaling(j, rs, &c->rope_scaling, err);
    }
    return DINTATTN_OK;
}

static dintattn_result dintattn__read_config(dintattn_model *m, dintattn_error *err)
{
    const dintattn__json *j = &m->file.config;
    dintattn_config *c = &m->cfg;
    dintattn_result r;
    int integral, norm_type, scale, rope, ffn, diff;
    if ((r = dintattn__read_sizes(j, c, err)) || (r = dintattn__check_products(c, err))) return r;
    diff = c->attention != DINTATTN_ATTN_STANDARD;
    /* docs/format.md section 2: keys a model does not use are ignored; those it uses must be legal */
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
    c->head_scale = (dintattn_head_scale)scale;
    c->rope = (dintattn_rope)rope;
    c->ffn_act = (dintattn_ffn_act)ffn;
    if (c->rope != DINTATTN_ROPE_NONE && c->head_dim % 2)
        return dintattn__fail(err, DINTATTN_ERR_CONFIG, "config: rope needs an even head_dim, got %d", c->head_dim);
    if ((r = dintattn__read_v11(j, c, m->file.minor, err))) return r;
    m->layers = (dintattn__layer *)dintattn__calloc((size_t)c->n_layers, sizeof *m->layers);
    if (!m->layers) return dintattn__fail(err, DINTATTN_ERR_NOMEM, "out of memory for %d layers", c->n_layers);
    return dintattn__cfg_lambda_init(j, m, err);
}

/* --- the tensors of a model file: one table ----------------------------------------------- */

/* The sizes shapes are written in (docs/format.md section 2's symbols). */
enum {
    DINTATTN__Z_1, DINTATTN__Z_3, DINTATTN__Z_D, DINTATTN__Z_V, DINTATTN__Z_F, DINTATTN__Z_H, DINTATTN__Z_d,
    DINTATTN__Z_dv, DINTATTN__Z_r, DINTATTN__Z_NK1, DINTATTN__Z_NQ2, DINTATTN__Z_NK2, DINTATTN__Z_NV, DINTATTN__Z_COUNT
};
/* When a tensor is in the file. */
enum {
    DINTATTN__IF_ALWAYS, DINTATTN__IF_UNTIED, DINTATTN__IF_DENSE, DINTATTN__IF_DENSE_DIFF, DINTATTN__IF_DENSE_K2,
    DINTATTN__IF_LOWRANK, DINTATTN__IF_LOWRANK_DIFF, DINTATTN__IF_LOWRANK_K2, DINTATTN__IF_LAMBDA_REPARAM,
    DINTATTN__IF_LAMBDA_TOKEN, DINTATTN__IF_HEAD_NORM, DINTATTN__IF_GROUP_NORM, DINTATTN__IF_POLYNORM,
    DINTATTN__IF_FFN_BIAS
};
/* How it is held: a weight matrix (in the model's weight precision, possibly Q8 in the file), an
   f32 vector, a per-head factor (Shared-DIFF's up: [heads * d, r] in f32, which holds any file
   dtype's values exactly, multiplied head by head); HEAD_NORM vectors are [dv] or [H * dv], and a
   bias has its weight's shape. */
enum { DINTATTN__AS_MATRIX, DINTATTN__AS_VECTOR, DINTATTN__AS_FACTOR, DINTATTN__AS_HEAD_NORM };

typedef struct dintattn__tspec {
    const char *name;               /* after "layers.L." when per_layer */
    unsigned char per_layer, when, held_as;
    unsigned char rows[2], cols[2]; /* shape [rows[0] * rows[1], cols[0] * cols[1]]; cols {1, 1}: a vector */
    size_t field;                   /* offset of the view in dintattn_model, or in dintattn__layer */
} dintattn__tspec;

#define DINTATTN__TM(name, when, r0, r1, c0, c1, f)                                                            \
    {name, 0, DINTATTN__IF_##when, DINTATTN__AS_MATRIX, {DINTATTN__Z_##r0, DINTATTN__Z_##r1},                  \
     {DINTATTN__Z_##c0, DINTATTN__Z_##c1}, offsetof(dintattn_model, f)}
#define DINTATTN__TL(name, when, as, r0, r1, c0, c1, f)                                                        \
    {name, 1, DINTATTN__IF_##when, DINTATTN__AS_##as, {DINTATTN__Z_##r0, DINTATTN__Z_##r1},                    \
     {DINTATTN__Z_##c0, DINTATTN__Z_##c1}, offsetof(dintattn__layer, f)}
/* In the order validation reports problems: model-level tensors, then layer by layer. */
static const dintattn__tspec dintattn__tensors[] = {
    DINTATTN__TM("tok_embeddings.weight", ALWAYS, V, 1, D, 1, tok_embeddings),
    {"norm.weight", 0, DINTATTN__IF_ALWAYS, DINTATTN__AS_VECTOR, {DINTATTN__Z_D, DINTATTN__Z_1},
     {DINTATTN__Z_1, DINTATTN__Z_1}, offsetof(dintattn_model, norm)},
    DINTATTN__TM("output.weight", UNTIED, V, 1, D, 1, output),
    DINTATTN__TL("attn_norm.weight", ALWAYS, VECTOR, D, 1, 1, 1, attn_norm),
    DINTATTN__TL("ffn_norm.weight", ALWAYS, VECTOR, D, 1, 1, 1, ffn_norm),
    DINTATTN__TL("attn.wq1", DENSE, MATRIX, H, d, D, 1, wq1),
    DINTATTN__TL("attn.wk1", DENSE, MATRIX, NK1, d, D, 1, wk1),
    DINTATTN__TL("attn.wq2", DENSE_DIFF, MATRIX, NQ2, d, D, 1, wq2),
    DINTATTN__TL("attn.wk2", DENSE_K2, MATRIX, NK2, d, D, 1, wk2),
    DINTATTN__TL("attn.q_base", LOWRANK, MATRIX, d, 1, D, 1, q_base),
    DINTATTN__TL("attn.k_base", LOWRANK, MATRIX, d, 1, D, 1, k_base),
    DINTATTN__TL("attn.q1_down", LOWRANK, MATRIX, H, r, D, 1, q1_down),
    DINTATTN__TL("attn.q1_up", LOWRANK, FACTOR, H, d, r, 1, q1_up),
    DINTATTN__TL("attn.k1_down", LOWRANK, MATRIX, NK1, r, D, 1, k1_down),
    DINTATTN__TL("attn.k1_up", LOWRANK, FACTOR, NK1, d, r, 1, k1_up),
    DINTATTN__TL("attn.q2_down", LOWRANK_DIFF, MATRIX, NQ2, r, D, 1, q2_down),
    DINTATTN__TL("attn.q2_up", LOWRANK_DIFF, FACTOR, NQ2, d, r, 1, q2_up),
    DINTATTN__TL("attn.k2_down", LOWRANK_K2, MATRIX, NK2, r, D, 1, k2_down),
    DINTATTN__TL("attn.k2_up", LOWRANK_K2, FACTOR, NK2, d, r, 1, k2_up),
    DINTATTN__TL("attn.wv", ALWAYS, MATRIX, NV, dv, D, 1, wv),
    DINTATTN__TL("attn.wo", ALWAYS, MATRIX, D, 1, H, dv, wo),
    DINTATTN__TL("ffn.w_gate", ALWAYS, MATRIX, F, 1, D, 1, w_gate),
    DINTATTN__TL("ffn.w_up", ALWAYS, MATRIX, F, 1, D, 1, w_up),
    DINTATTN__TL("ffn.w_down", ALWAYS, MATRIX, D, 1, F, 1, w_down),
    DINTATTN__TL("attn.lambda_q1", LAMBDA_REPARAM, VECTOR, d, 1, 1, 1, lambda_q1),
    DINTATTN__TL("attn.lambda_k1", LAMBDA_REPARAM, VECTOR, d, 1, 1, 1, lambda_k1),
    DINTATTN__TL("attn.lambda_q2", LAMBDA_REPARAM, VECTOR, d, 1, 1, 1, lambda_q2),
    DINTATTN__TL("attn.lambda_k2", LAMBDA_REPARAM, VECTOR, d, 1, 1, 1, lambda_k2),
    DINTATTN__TL("attn.lambda_proj", LAMBDA_TOKEN, MATRIX, H, 1, D, 1, lambda_proj),
    DINTATTN__TL("attn.head_norm.weight", HEAD_NORM, HEAD_NORM, dv, 1, 1, 1, head_norm_w),
    DINTATTN__TL("attn.head_norm.bias", GROUP_NORM, HEAD_NORM, dv, 1, 1, 1, head_norm_b),
    DINTATTN__TL("ffn.act_weight", POLYNORM, VECTOR, 3, 1, 1, 1, act_weight),
    DINTATTN__TL("ffn.act_bias", POLYNORM, VECTOR, 1, 1, 1, 1, act_bias),
    DINTATTN__TL("ffn.b_gate", FFN_BIAS, VECTOR, F, 1, 1, 1, b_gate),
    DINTATTN__TL("ffn.b_up", FFN_BIAS, VECTOR, F, 1, 1, 1, b_up),
    DINTATTN__TL("ffn.b_down", FFN_BIAS, VECTOR, D, 1, 1, 1, b_down),
};
#undef DINTATTN__TM
#undef DINTATTN__TL
#define DINTATTN__N_TSPECS ((int)(sizeof dintattn__tensors / sizeof dintattn__tensors[0]))

/* Whether the config puts tensor `ts` in the file. */
static int dintattn__tspec_present(const dintattn_config *c, const dintattn__tspec *ts)
{
    const int diff = c->attention != DINTATTN_ATTN_STANDARD, lowrank = c->qk_rank > 0;
    switch (ts->when) {
    case DINTATTN__IF_UNTIED: return !c->tie_embeddings;
    case DINTATTN__IF_DENSE: return !lowrank;
    case DINTATTN__IF_DENSE_DIFF: return !lowrank && diff;
    case DINTATTN__IF_DENSE_K2: return !lowrank && diff && !c->shared_k;
    case DINTATTN__IF_LOWRANK: return lowrank;
    case DINTATTN__IF_LOWRANK_DIFF: return lowrank && diff;
    case DINTATTN__IF_LOWRANK_K2: return lowrank && diff && !c->shared_k;
    case DINTATTN__IF_LAMBDA_REPARAM: return diff && c->lambda_mode == DINTATTN_LAMBDA_REPARAM;
    case DINTATTN__IF_LAMBDA_TOKEN: return diff && c->lambda_mode == DINTATTN_LAMBDA_TOKEN_SIGMOID;
    case DINTATTN__IF_FFN_BIAS: return c->ffn_bias;
    case DINTATTN__IF_HEAD_NORM: return c->head_norm;
    case DINTATTN__IF_GROUP_NORM: return c->head_norm && c->head_norm_type == DINTATTN_HEADNORM_GROUP;
    case DINTATTN__IF_POLYNORM: return c->ffn_act == DINTATTN_FFN_POLYNORM;
    default: return 1;
    }
}

/* Dense Q/K projections, and Shared-DIFF's factors of them. */
static int dintattn__tspec_is_dense_qk(const dintattn__tspec *ts)
{
    return ts->when == DINTATTN__IF_DENSE || ts->when == DINTATTN__IF_DENSE_DIFF || ts->when == DINTATTN__IF_DENSE_K2;
}

static int dintattn__tspec_is_factor(const dintattn__tspec *ts)
{
    return ts->when == DINTATTN__IF_LOWRANK || ts->when == DINTATTN__IF_LOWRANK_DIFF || ts->when == DINTATTN__IF_LOWRANK_K2;
}

/* The tensor's [rows, cols] in this config (cols 0 for a vector); both fit in an int (checked). */
static void dintattn__tspec_shape(const dintattn_config *c, const dintattn__tspec *ts, int64_t *rows, int64_t *cols)
{
    int64_t z[DINTATTN__Z_COUNT];
    z[DINTATTN__Z_1] = 1, z[DINTATTN__Z_3] = 3, z[DINTATTN__Z_D] = c->dim, z[DINTATTN__Z_V] = c->vocab_size;
    z[DINTATTN__Z_F] = c->hidden_dim, z[DINTATTN__Z_H] = c->n_heads, z[DINTATTN__Z_d] = c->head_dim;
    z[DINTATTN__Z_dv] = c->v_head_dim, z[DINTATTN__Z_r] = c->qk_rank, z[DINTATTN__Z_NK1] = c->n_k1_heads;
    z[DINTATTN__Z_NQ2] = c->n_q2_heads, z[DINTATTN__Z_NK2] = c->n_k2_heads, z[DINTATTN__Z_NV] = c->n_v_heads;
    *rows = z[ts->rows[0]] * z[ts->rows[1]];
    *cols = ts->cols[0] == DINTATTN__Z_1 && ts->cols[1] == DINTATTN__Z_1 ? 0 : z[ts->cols[0]] * z[ts->cols[1]];
}

/* The file's name of tensor `ts` (of layer l). */
static void dintattn__tspec_name(const dintattn__tspec *ts, int l, char *name, size_t size)
{
    if (ts->per_layer) snprintf(name, size, "layers.%d.%s", l, ts->name);
    else snprintf(name, size, "%s", ts->name);
}

/* Where tensor ts's view lives: in the model or in layer l. */
static void *dintattn__tspec_field(dintattn_model *m, const dintattn__tspec *ts, int l)
{
    return ts->per_layer ? (void *)((char *)&m->layers[l] + ts->field) : (void *)((char *)m + ts->field);
}

/* --- validation: one complete pass over the file, before anything is built ---------------- */

/* Whether any of elements [i0, i1) of t is NaN or infinite: its exponent's bits all set, tested 8
   bytes at a time: a 2.7B BF16 model's 5.4 GB take 1.1-1.7 s on an Ice Lake Xeon, where one
   float conversion an element takes 10-20 s (dintattn_model_load with check_finite set, timed
   as examples/bench times its load). The mask holds the exponent's bits in the file's
   (little-endian) byte order, so that x = word & mask equals it in a lane exactly where the lane
   is NaN or infinite: then (x ^ mask) has a zero lane, which (v - ones) & ~v & highs finds
   without false negatives (a false positive would only send the chunk to the exact test). */
static int dintattn__any_nonfinite(const dintattn__tensor *t, size_t i0, size_t i1)
{
    static const unsigned char m16[2][8] = {{0x80, 0x7F, 0x80, 0x7F, 0x80, 0x7F, 0x80, 0x7F},  /* BF16 */
                                            {0x00, 0x7C, 0x00, 0x7C, 0x00, 0x7C, 0x00, 0x7C}}; /* F16 */
    static const unsigned char m32[8] = {0x00, 0x00, 0x80, 0x7F, 0x00, 0x00, 0x80, 0x7F};
    const size_t es = dintattn__dtype_size(t->dtype), per = 8 / es;
    const uint64_t ones = es == 2 ? 0x0001000100010001u : 0x0000000100000001u;
    const uint64_t highs = ones << (8 * es - 1);
    const unsigned char *p = (const unsigned char *)t->data + i0 * es;
    uint64_t mask, bad = 0, w, v;
    size_t i;
    memcpy(&mask, es == 4 ? m32 : m16[t->dtype == DINTATTN__F16], 8);
    for (i = i0; i + per <= i1; i += per, p += 8) {
        memcpy(&w, p, 8);
        v = (w & mask) ^ mask;
        bad |= (v - ones) & ~v & highs;
    }
    if (i < i1) { /* the last elements in a word padded with zeros (finite) */
        w = 0;
        memcpy(&w, p, (i1 - i) * es);
        v = (w & mask) ^ mask;
        bad |= (v - ones) & ~v & highs;
    }
    return bad != 0;
}

#ifndef DINTATTN__FINITE_CHUNK
#define DINTATTN__FINITE_CHUNK 4096 /* elements tested at once; the first bad one is then sought */
#endif

static dintattn_result dintattn__check_finite(const dintattn__tensor *t, const char *name, dintattn_error *err)
{
    const size_t n = (t->end - t->begin) / dintattn__dtype_size(t->dtype);
    size_t c, i;
    for (c = 0; c < n; c += DINTATTN__FINITE_CHUNK) {
        const size_t e = n - c < DINTATTN__FINITE_CHUNK ? n : c + DINTATTN__FINITE_CHUNK;
        if (!dintattn__any_nonfinite(t, c, e)) continue;
        for (i = c; i < e; i++) {
            float v = dintattn__elem(t, i);
            if (!(v - v == 0)) /* NaN or +-infinity */
                return dintattn__fail(err, DINTATTN_ERR_NONFINITE, "tensor '%s' element %llu is %s", name,
                                      (unsigned long long)i, v != v ? "NaN" : "infinite");
        }
    }
    return DINTATTN_OK;
}

/* A matrix stored as Q8 (docs/format.md section 4): I8 `name` [rows, cols] with cols a multiple
   of 32, and F32 `name.scale` [rows, cols / 32]. */
/* A weight matrix stored as Q8 (I8 [rows, cols]) or Q4 (U8 [rows, cols / 2]) with its F32 scales
   NAME.scale [rows, cols / 32]. */
static dintattn_result dintattn__validate_q8(dintattn_model *m, dintattn__tensor *t, const char *name, int64_t rows,
                                             int64_t cols, int check_finite, dintattn_error *err)
{
    const int q4 = t->dtype == DINTATTN__U8;
    const char *what = q4 ? "U8 (Q4)" : "I8 (Q8)";
    char sname[112];
    dintattn__tensor *s;
    if (cols % 32 != 0)
        return dintattn__fail(err, DINTATTN_ERR_SHAPE,
                              "tensor '%s' is %s but its rows (%lld) are not a multiple of 32 long", name, what,
                              (long long)cols);
    if (t->ndim != 2 || t->shape[0] != rows || t->shape[1] != (q4 ? cols / 2 : cols))
        return dintattn__fail(err, DINTATTN_ERR_SHAPE, "tensor '%s' (%s) must have shape [%lld, %lld]", name, what,
                              (long long)rows, (long long)(q4 ? cols / 2 : cols));
    snprintf(sname, sizeof sname, "%s.scale", name);
    s = dintattn__find(&m->file, sname);
    if (!s)
        return dintattn__fail(err, DINTATTN_ERR_MISSING_TENSOR, "tensor '%s' (the scales of %s '%s') is missing",
                              sname, what, name);
    if (s->dtype != DINTATTN__F32) return dintattn__fail(err, DINTATTN_ERR_DTYPE, "tensor '%s' must be F32", sname);
    if (s->ndim != 2 || s->shape[0] != rows || s->shape[1] != cols / 32)
        return dintattn__fail(err, DINTATTN_ERR_SHAPE, "tensor '%s' must have shape [%lld, %lld]", sname,
                              (long long)rows, (long long)(cols / 32));
    t->used = s->used = 1;
    return check_finite ? dintattn__check_finite(s, sname, err) : DINTATTN_OK;
}

/* Tensor ts of layer l: present, of a float dtype (or Q8 for a weight matrix), of its shape. */
static dintattn_result dintattn__validate_tensor(dintattn_model *m, const dintattn__tspec *ts, int l,
                                                 int check_finite, dintattn_error *err)
{
    char name[96];
    dintattn__tensor *t;
    int64_t rows, cols, alt = 0;
    dintattn__tspec_name(ts, l, name, sizeof name);
    dintattn__tspec_shape(&m->cfg, ts, &rows, &cols);
    if (!(t = dintattn__find(&m->file, name)))
        return dintattn__fail(err, DINTATTN_ERR_MISSING_TENSOR, "tensor '%s' is missing", name);
    if ((t->dtype == DINTATTN__I8 || t->dtype == DINTATTN__U8) && ts->held_as == DINTATTN__AS_MATRIX)
        return dintattn__validate_q8(m, t, name, rows, cols, check_finite, err);
    if (t->dtype == DINTATTN__U8 || t->dtype == DINTATTN__I8)
        return dintattn__fail(err, DINTATTN_ERR_DTYPE,
                              "tensor '%s' is %s, expected F32, F16 or BF16 (only weight matrices may be Q8 or Q4)",
                              name, t->dtype == DINTATTN__U8 ? "U8" : "I8");
    if (ts->held_as == DINTATTN__AS_HEAD_NORM) {
        /* [dv] shared by the heads or [H * dv] one slice each; the bias (validated after the
           weight) as the weight */
        char wname[96];
        const dintattn__tensor *w;
        snprintf(wname, sizeof wname, "layers.%d.attn.head_norm.weight", l);
        w = dintattn__find(&m->file, wname);
        if (w != t) rows = w->shape[0];
        else alt = (int64_t)m->cfg.n_heads * rows;
    }
    if (t->ndim != (cols ? 2 : 1) || (t->shape[0] != rows && t->shape[0] != alt) || (cols && t->shape[1] != cols)) {
        if (cols)
            return dintattn__fail(err, DINTATTN_ERR_SHAPE, "tensor '%s' must have shape [%lld, %lld]", name,
                                  (long long)rows, (long long)cols);
        if (alt)
            return dintattn__fail(err, DINTATTN_ERR_SHAPE, "tensor '%s' must have shape [%lld] or [%lld]", name,
                                  (long long)rows, (long long)alt);
        return dintattn__fail(err, DINTATTN_ERR_SHAPE, "tensor '%s' must have shape [%lld]", name, (long long)rows);
    }
    t->used = 1;
    return check_finite ? dintattn__check_finite(t, name, err) : DINTATTN_OK;
}

/* The tokenizer a file may carry (docs/format.md section 5): tensors
   "tokenizer.ranks" (the vocabulary) and "tokenizer.merges" (U8 [bytes]) and metadata
   "tokenizer". Built once here to check it all (section 9 builds; dintattn_tokenizer_from_model
   builds again for the caller). */
static dintattn_result dintattn__tokenizer_of_file(dintattn__file *f, int vocab_limit, dintattn_tokenizer **tok,
                                                   dintattn_error *err);
DINTATTN_API void dintattn_tokenizer_free(dintattn_tokenizer *tok);
static dintattn_result dintattn__read_tokenizer(dintattn_model *m, dintattn_error *err)
{
    dintattn__file *f = &m->file;
    dintattn__tensor *ranks = dintattn__find(f, "tokenizer.ranks"), *merges = dintattn__find(f, "tokenizer.merges");
    dintattn_tokenizer *t = NULL;
    dintattn_result r;
    int c;
    for (c = f->header.nodes[0].child; c >= 0; c = f->header.nodes[c].next)
        if (strcmp(f->header.nodes[c].key, "__metadata__") == 0 &&
            dintattn__json_get(&f->header, &f->header.nodes[c], "tokenizer"))
            break;
    if (!ranks && !merges && c < 0) return DINTATTN_OK; /* no tokenizer */
    if (!ranks)
        return dintattn__fail(err, DINTATTN_ERR_METADATA, "metadata 'tokenizer' or tensor 'tokenizer.merges' without "
                                                          "tensor 'tokenizer.ranks'");
    if ((r = dintattn__tokenizer_of_file(f, m->cfg.vocab_size, &t, err))) return r;
    dintattn_tokenizer_free(t);
    m->tok_ranks = ranks->data;
    m->tok_ranks_size = (size_t)(ranks->end - ranks->begin);
    if (merges) {
        m->tok_merges = merges->data;
        m->tok_merges_size = (size_t)(merges->end - merges->begin);
    }
    return DINTATTN_OK;
}

/* The chat template a file may carry (docs/format.md section 6): metadata
   "chat", a JSON object {"roles": {"user": [prefix, suffix], ...}, "generation_prompt": text,
   "stop": [text, ...]}: a conversation is each message's prefix + content + suffix, then the
   generation prompt. */
static dintattn_result dintattn__read_chat(dintattn_model *m, dintattn_error *err)
{
    dintattn__file *f = &m->file;
    const dintattn__json *j = &f->chat;
    const dintattn__jnode *meta = NULL, *root;
    int c, k;
    for (c = f->header.nodes[0].child; c >= 0; c = f->header.nodes[c].next)
        if (strcmp(f->header.nodes[c].key, "__metadata__") == 0)
            meta = dintattn__json_get(&f->header, &f->header.nodes[c], "chat");
    if (!meta) return DINTATTN_OK;
    if (dintattn__json_parse(&f->chat, meta->str, meta->str_len) < 0)
        return dintattn__fail(err, f->chat.nomem ? DINTATTN_ERR_NOMEM : DINTATTN_ERR_METADATA, "metadata 'chat': %s",
                              f->chat.err);
    root = &j->nodes[0];
    if (root->type != DINTATTN__JOBJ) return dintattn__fail(err, DINTATTN_ERR_METADATA, "metadata 'chat' is not an object");
    for (c = root->child; c >= 0; c = j->nodes[c].next) {
        const dintattn__jnode *n = &j->nodes[c];
        if (strcmp(n->key, "roles") == 0 && n->type == DINTATTN__JOBJ) {
            for (k = n->child; k >= 0; k = j->nodes[k].next) {
                const dintattn__jnode *pair = &j->nodes[k];
                if (pair->type != DINTATTN__JARR || pair->n_children != 2 || j->nodes[pair->child].type != DINTATTN__JSTR ||
                    j->nodes[j->nodes[pair->child].next].type != DINTATTN__JSTR)
                    return dintattn__fail(err, DINTATTN_ERR_METADATA,
                                          "metadata 'chat': role '%.60s' needs [prefix, suffix] strings", pair->key);
            }
            m->chat_roles = n;
        } else if (strcmp(n->key, "generation_prompt") == 0 && n->type == DINTATTN__JSTR) {
            m->chat_prompt = n;
        } else if (strcmp(n->key, "default_system") == 0 && n->type == DINTATTN__JSTR) {
            m->chat_system = n;
        } else if (strcmp(n->key, "begin") == 0 && n->type == DINTATTN__JSTR) {
            m->chat_begin = n;
        } else if (strcmp(n->key, "last") == 0 && n->type == DINTATTN__JOBJ) {
            for (k = n->child; k >= 0; k = j->nodes[k].next) { /* [prefix, suffix] or [prefix, suffix, unless] */
                const dintattn__jnode *e = &j->nodes[k];
                int q, ok = e->type == DINTATTN__JARR && (e->n_children == 2 || e->n_children == 3);
                for (q = ok ? e->child : -1; q >= 0; q = j->nodes[q].next) ok &= j->nodes[q].type == DINTATTN__JSTR;
                if (!ok)
                    return dintattn__fail(err, DINTATTN_ERR_METADATA,
                                          "metadata 'chat': \"last\" role '%.60s' needs [prefix, suffix] or [prefix, "
                                          "suffix, unless] strings", e->key);
            }
            m->chat_last = n;
        } else if (strcmp(n->key, "prompt_always") == 0 && n->type == DINTATTN__JBOOL) {
            m->chat_prompt_always = n->boolean;
        } else if (strcmp(n->key, "stop") == 0 && n->type == DINTATTN__JARR) {
            for (k = n->child; k >= 0; k = j->nodes[k].next)
                if (j->nodes[k].type != DINTATTN__JSTR || j->nodes[k].str_len == 0)
                    return dintattn__fail(err, DINTATTN_ERR_METADATA, "metadata 'chat': 'stop' must be non-empty strings");
            m->chat_stop = n;
        } else {
            return dintattn__fail(err, DINTATTN_ERR_METADATA,
                                  "metadata 'chat': '%.60s' is not \"roles\" (an object), \"generation_prompt\", "
                                  "\"default_system\", \"begin\" (strings), \"prompt_always\" (a bool), \"last\" (an "
                                  "object) or \"stop\" (a list)", n->key);
        }
    }
    if (!m->chat_roles) return dintattn__fail(err, DINTATTN_ERR_METADATA, "metadata 'chat' has no \"roles\"");
    if (m->chat_system && !dintattn__json_get(j, m->chat_roles, "system"))
        return dintattn__fail(err, DINTATTN_ERR_METADATA, "metadata 'chat': \"default_system\" needs a \"system\" role");
    return DINTATTN_OK;
}

/* Every tensor of the table the config asks for, in order; then the tokenizer; then nothing else
   may be in the file. */
static dintattn_result dintattn__validate(dintattn_model *m, int check_finite, dintattn_error *err)
{
    const dintattn_config *c = &m->cfg;
    dintattn_result r;
    int k, l, i;
    for (l = -1; l < c->n_layers; l++)
        for (k = 0; k < DINTATTN__N_TSPECS; k++) {
            const dintattn__tspec *ts = &dintattn__tensors[k];
            if ((ts->per_layer != (l >= 0)) || !dintattn__tspec_present(c, ts)) continue;
            if ((r = dintattn__validate_tensor(m, ts, l, check_finite, err))) return r;
        }
    if ((r = dintattn__read_tokenizer(m, err)) || (r = dintattn__read_chat(m, err))) return r;
    for (i = 0; i < m->file.n_tensors; i++)
        if (!m->file.tensors[i].used)
            return dintattn__fail(err, DINTATTN_ERR_UNKNOWN_TENSOR,
                                  "tensor '%.120s' is not used by this config (attention, qk_rank, head_norm, "
                                  "ffn_act, tie_embeddings)",
                                  m->file.tensors[i].name);
    return DINTATTN_OK;
}

/* --- building the views: the second pass; the file is known good --------------------------- */

/* Converted weights are carved from chunks of at least DINTATTN__CHUNK bytes, advised onto 2 MiB
   pages (dintattn__hugepages; one allocation per matrix would be too small for them). The unused
   end of the last chunk is never written, so it costs address space, not memory. */
#define DINTATTN__CHUNK ((size_t)64 << 20)

/* A 64-byte aligned array of n elements of `size` bytes that the model frees, not written (for
   a conversion's threads to touch its pages first); dintattn__own: zeroed. */
static void *dintattn__own_raw(dintattn_model *m, size_t n, size_t size)
{
    size_t bytes;
    unsigned char *p;
    if (size && n > (SIZE_MAX - 64) / size) return NULL;
    bytes = n * size > 0 ? (n * size + 63) & ~(size_t)63 : 64; /* never NULL for nothing */
    if (bytes > m->arena_left) {
        const size_t chunk = bytes > DINTATTN__CHUNK ? bytes : DINTATTN__CHUNK;
        void *c;
        if (chunk > SIZE_MAX - 64 ||
            dintattn__grow((void **)&m->owned, &m->cap_owned, m->n_owned, sizeof *m->owned) ||
            !(c = dintattn__alloc(chunk + 64)))
            return NULL;
        dintattn__hugepages(c, chunk + 64);
        m->owned[m->n_owned++] = c;
        m->arena = (unsigned char *)c + (64 - (uintptr_t)c % 64) % 64;
        m->arena_left = chunk;
    }
    p = m->arena;
    m->arena += bytes, m->arena_left -= bytes;
    m->owned_bytes += n * size;
    return p;
}

static void *dintattn__own(dintattn_model *m, size_t n, size_t size)
{
    void *p = dintattn__own_raw(m, n, size);
    if (p) memset(p, 0, n * size);
    return p;
}

static int dintattn__host_is_le(void)
{
    const uint16_t one = 1;
    return *(const unsigned char *)&one == 1;
}

/* 1 if tensor t can be read in place as an array of its dtype on this host. */
static int dintattn__in_place(const dintattn__tensor *t)
{
    return dintattn__host_is_le() && (uintptr_t)t->data % dintattn__dtype_size(t->dtype) == 0;
}

/* f32 -> bf16, rounding to nearest even (NaN stays a quiet NaN). */
static uint16_t dintattn__f32_to_bf16(float f)
{
    uint32_t u;
    memcpy(&u, &f, 4);
    if ((u & 0x7FFFFFFFu) > 0x7F800000u) return (uint16_t)((u >> 16) | 0x40);
    return (uint16_t)((u + 0x7FFFu + ((u >> 16) & 1)) >> 16);
}

/* n values (a Q8 block of 32 weights, a head row of the int8 KV cache) to int8: scale = max|v| /
   127, q = round(v / scale). NaN or infinity among them gives a NaN scale and zeros, so that they
   poison their outputs as the original values would. */
static void dintattn__quantize_row(const float *v, int n, signed char *q, float *scale)
{
    float amax = 0, inv;
    int i;
    for (i = 0; i < n; i++) {
        float a = fabsf(v[i]);
        if (!(a - a == 0)) { /* NaN or infinite */
            memset(q, 0, (size_t)n);
            *scale = NAN;
            return;
        }
        if (a > amax) amax = a;
    }
    *scale = amax / 127.0f;
    inv = amax > 0 ? 127.0f / amax : 0.0f;
    if (!(inv - inv == 0)) inv = 0.0f; /* max|w| so small (< 2^-120) that 127 / max overflows: q = 0 */
    for (i = 0; i < n; i++) {
        float r = rintf(v[i] * inv);
        q[i] = (signed char)(r > 127.0f ? 127 : r < -127.0f ? -127 : r);
    }
}

/* The weight type of a file tensor of a float dtype. */
static dintattn__wtype dintattn__file_wtype(const dintattn__tensor *t)
{
    return t->dtype == DINTATTN__F32 ? DINTATTN__W_F32 : t->dtype == DINTATTN__F16 ? DINTATTN__W_F16 : DINTATTN__W_BF16;
}

/* One Q4 block: d = m / -8 for the element m of largest magnitude (the first, if several), nibble
   = clamp(round(v / d), -8, 7) + 8, so that m itself is exact; NaN or infinity: NaN scale, zeros. */
static void dintattn__quantize_block4(const float *v, unsigned char *q, float *scale)
{
    float m = 0, inv;
    int i;
    for (i = 0; i < 32; i++) {
        if (!(v[i] - v[i] == 0)) {
            memset(q, 0x88, 16);
            *scale = NAN;
            return;
        }
        if (fabsf(v[i]) > fabsf(m)) m = v[i];
    }
    *scale = m / -8.0f;
    inv = m != 0 ? -8.0f / m : 0.0f;
    if (!(inv - inv == 0)) inv = 0.0f;
    for (i = 0; i < 16; i++) {
        float a = rintf(v[i] * inv), b = rintf(v[i + 16] * inv);
        int lo = (int)(a > 7.0f ? 7 : a < -8.0f ? -8 : a) + 8, hi = (int)(b > 7.0f ? 7 : b < -8.0f ? -8 : b) + 8;
        q[i] = (unsigned char)(lo | hi << 4);
    }
}

/* n weights (a multiple of 32) to Q8 (bits 8: q holds n bytes) or Q4 (bits 4: n / 2 bytes), a
   scale per block of 32 into sc: dintattn__quantize_row / _block4 a block at a time. Each kernel
   level has its version (dintattn__kernels.quantize_w), all giving these bytes. */
typedef void (*dintattn__quantize_w_fn)(const float *v, size_t n, int bits, void *q, float *sc);
static void dintattn__quantize_w(const float *v, size_t n, int bits, void *q, float *sc)
{
    size_t b;
    for (b = 0; b < n / 32; b++)
        if (bits == 8) dintattn__quantize_row(v + 32 * b, 32, (signed char *)q + 32 * b, sc + b);
        else dintattn__quantize_block4(v + 32 * b, (unsigned char *)q + 16 * b, sc + b);
}
/* The load's conversions run the CPU's best kernels (every level gives the same values): from
   dintattn__kernels, to_f32 of the source's weight type (a matrix's elements at..at+n), to_bf16
   (f32 rows rounded to nearest even, padded with zeros to a multiple of 32), quantize_w */
typedef struct dintattn__load_kernels {
    void (*to_f32)(const dintattn__mat *M, size_t at, size_t n, float *dst);
    void (*to_bf16)(const float *x, int cols, uint16_t *out);
    dintattn__quantize_w_fn quantize_w;
} dintattn__load_kernels;
static dintattn__load_kernels dintattn__load_kernels_for_cpu(dintattn__wtype from);

/* The source of a conversion: a file tensor (F32/F16/BF16), a Q8 matrix, or doubles (merged
   Shared-DIFF factors). out[0..n) = its elements i.., as f32, whole spans at a time where the data
   can be read in place, so that converting a large model takes a moment. */
typedef struct dintattn__source {
    const dintattn__tensor *t;
    const dintattn__mat *q8;                /* or Q4 */
    const double *f64;
} dintattn__source;

static void dintattn__source_span(const dintattn__source *src, size_t i, size_t n, float *out)
{
    const dintattn__tensor *t = src->t;
    size_t k;
    if (src->f64) {
        for (k = 0; k < n; k++) out[k] = (float)src->f64[i + k];
    } else if (src->q8) {
        for (k = 0; k < n; k++) out[k] = dintattn__w_elem(src->q8, i + k);
    } else if (dintattn__in_place(t) && t->dtype == DINTATTN__F32) {
        memcpy(out, (const float *)(const void *)t->data + i, n * sizeof(float));
    } else if (dintattn__in_place(t) && t->dtype == DINTATTN__BF16) {
        const uint16_t *h = (const uint16_t *)(const void *)t->data + i;
        for (k = 0; k < n; k++) out[k] = dintattn__bf16_to_f32(h[k]);
    } else {
        for (k = 0; k < n; k++) out[k] = dintattn__elem(t, i + k);
    }
}

/* Tells the load's progress callback that `n` more weights of `type` were converted. */
static void dintattn__progress(dintattn_model *m, size_t n, dintattn__wtype type)
{
    m->progress_done += (double)n * (double)dintattn__wtypes[type].bits / 8;
    if (m->progress) m->progress(m->progress_user, m->progress_done, (double)m->file.size);
}

/* Elements [i0, i1) of a conversion (dintattn__convert), on the thread that first touches that
   part of its output; the caller's part (m set) reports the load's progress, counting each of its
   spans `parts` times (the parts advance together), at most `n` in all. */
typedef struct dintattn__convert_part {
    dintattn_model *m;                      /* the caller's part, or NULL */
    const dintattn__source *src;
    const dintattn__mat *view;              /* a matrix as stored, read by K.to_f32 (or NULL: src) */
    dintattn__load_kernels K;
    dintattn__wtype to, from;
    void *p;
    float *sc;
    size_t i0, i1, n, parts, told;
} dintattn__convert_part;

static void dintattn__convert_range(dintattn__convert_part *c)
{
    const size_t bits = dintattn__wtypes[c->to].bits;
    size_t i, k, span, mine = 0;
    float v[1024], *f;
    for (i = c->i0; i < c->i1; i += span) {
        span = c->i1 - i < 1024 ? c->i1 - i : 1024; /* parts start at multiples of 32, and for Q8
                                                        and Q4 n is a multiple of 32: so is span */
        f = c->to == DINTATTN__W_F32 ? (float *)c->p + i : v;
        if (c->view) c->K.to_f32(c->view, i, span, f);
        else dintattn__source_span(c->src, i, span, f);
        if (c->to == DINTATTN__W_BF16) { /* whole blocks of 32 (to_bf16 pads to them), then the rest */
            c->K.to_bf16(v, (int)(span / 32 * 32), (uint16_t *)c->p + i);
            for (k = span / 32 * 32; k < span; k++) ((uint16_t *)c->p)[i + k] = dintattn__f32_to_bf16(v[k]);
        } else if (c->to != DINTATTN__W_F32) {
            c->K.quantize_w(v, span, (int)bits, (unsigned char *)c->p + i * bits / 8, c->sc + i / 32);
        }
        mine += span;
        if (c->m && c->from != DINTATTN__W_COUNT && mine * c->parts - c->told >= ((size_t)1 << 24)) {
            const size_t seen = mine * c->parts < c->n ? mine * c->parts : c->n;
            dintattn__progress(c->m, seen - c->told, c->from);
            c->told = seen;
        }
    }
}

/* fn(ctx, k) for every k in [0, parts) at once, on a thread each but part 0, which runs on the
   caller (a thread that cannot start leaves its part to the caller); returns when all are done.
   The load's parallel loops: a conversion's parts, a copy's. */
#define DINTATTN__MAX_PARTS 64
typedef struct dintattn__part {
    void (*fn)(void *ctx, size_t k);
    void *ctx;
    size_t k;
} dintattn__part;

static void *dintattn__part_thread(void *a)
{
    const dintattn__part *p = (const dintattn__part *)a;
    p->fn(p->ctx, p->k);
    return NULL;
}

static void dintattn__run_parts(size_t parts, void (*fn)(void *ctx, size_t k), void *ctx)
{
    dintattn__part part[DINTATTN__MAX_PARTS];
    pthread_t thread[DINTATTN__MAX_PARTS];
    int started[DINTATTN__MAX_PARTS];
    size_t k;
    DINTATTN_ASSERT(parts <= DINTATTN__MAX_PARTS);
    for (k = 1; k < parts; k++) {
        part[k].fn = fn, part[k].ctx = ctx, part[k].k = k;
        started[k] = pthread_create(&thread[k], NULL, dintattn__part_thread, &part[k]) == 0;
    }
    fn(ctx, 0);
    for (k = 1; k < parts; k++) {
        if (started[k]) pthread_join(thread[k], NULL);
        else fn(ctx, k);
    }
}

/* The parts a job of n elements takes on the load's threads: one per `unit` elements at most */
static size_t dintattn__load_parts(const dintattn_model *m, size_t n, size_t unit)
{
    size_t parts = (size_t)(m->load_threads > 1 ? m->load_threads : 1);
    if (parts > DINTATTN__MAX_PARTS) parts = DINTATTN__MAX_PARTS;
    if (parts > (n + unit - 1) / unit) parts = (n + unit - 1) / unit;
    return parts < 1 ? 1 : parts;
}

static void dintattn__convert_part_k(void *ctx, size_t k)
{
    dintattn__convert_range((dintattn__convert_part *)ctx + k);
}

#ifndef DINTATTN__CONVERT_UNIT
#define DINTATTN__CONVERT_UNIT ((size_t)1 << 18) /* elements a thread converts at least */
#endif

/* M ([rows, cols] set) converted from `src` into weight type `to` (F32, BF16, Q8 or Q4), in memory
   the model owns: on the load's threads, a part each, with the CPU's best kernels. */
static dintattn_result dintattn__convert(dintattn_model *m, const dintattn__source *src, dintattn__wtype to,
                                         const char *name, dintattn__mat *M, dintattn_error *err)
{
    const size_t n = (size_t)M->rows * (size_t)M->cols, block = dintattn__wtypes[to].block;
    const size_t bits = dintattn__wtypes[to].bits, parts = dintattn__load_parts(m, n, DINTATTN__CONVERT_UNIT);
    const size_t per = (n / parts + 31) / 32 * 32; /* parts of whole blocks */
    dintattn__convert_part part[DINTATTN__MAX_PARTS];
    dintattn__mat file;
    size_t k;
    void *p = dintattn__own_raw(m, bits >= 8 ? n * (bits / 8) : n / 2, 1);
    float *sc = block ? (float *)dintattn__own_raw(m, n / block, sizeof(float)) : NULL;
    DINTATTN_ASSERT(to != DINTATTN__W_F16);
    if (!p || (block && !sc)) return dintattn__fail(err, DINTATTN_ERR_NOMEM, "out of memory converting '%s'", name);
    memset(&part[0], 0, sizeof part[0]);
    part[0].src = src, part[0].view = src->q8, part[0].to = to, part[0].p = p, part[0].sc = sc, part[0].n = n;
    part[0].from = src->q8 ? src->q8->type : src->t ? dintattn__file_wtype(src->t) : DINTATTN__W_COUNT;
    if (src->t && src->t->dtype != DINTATTN__F32 && dintattn__in_place(src->t)) { /* F16, BF16 */
        memset(&file, 0, sizeof file);
        file.rows = M->rows, file.cols = M->cols, file.w = src->t->data, file.type = part[0].from;
        part[0].view = &file;
    }
    part[0].K = dintattn__load_kernels_for_cpu(part[0].view ? part[0].view->type : DINTATTN__W_F32);
    for (k = parts; k-- > 0;) {
        part[k] = part[0];
        part[k].i0 = k * per < n ? k * per : n;
        part[k].i1 = (k + 1) * per < n && k + 1 < parts ? (k + 1) * per : n;
        part[k].parts = parts;
        part[k].m = k ? NULL : m;
    }
    dintattn__run_parts(parts, dintattn__convert_part_k, part);
    if (part[0].from != DINTATTN__W_COUNT) dintattn__progress(m, n - part[0].told, part[0].from);
    M->w = p;
    M->scale = sc;
    M->type = to;
    m->held_types |= 1u << to;
    return DINTATTN_OK;
}

/* The weight type a matrix is held in: the file's (FILE), or the load option's; Q8 and Q4 only
   for rows a multiple of 32 long (others keep the file's precision). */
static dintattn__wtype dintattn__held_type(dintattn_weights want, dintattn__wtype stored, int cols)
{
    switch (want) {
    case DINTATTN_WEIGHTS_F32: return DINTATTN__W_F32;
    case DINTATTN_WEIGHTS_BF16: return DINTATTN__W_BF16;
    case DINTATTN_WEIGHTS_Q8: return cols % 32 == 0 ? DINTATTN__W_Q8 : stored;
    case DINTATTN_WEIGHTS_Q4: return cols % 32 == 0 ? DINTATTN__W_Q4 : stored;
    default: return stored;
    }
}

/* Weight matrix `name` [rows, cols]: read in place when the file holds it in the precision asked
   for (and aligned), else converted (to f32 when it cannot be read in place as stored). */
static dintattn_result dintattn__build_matrix(dintattn_model *m, const char *name, int64_t rows, int64_t cols,
                                              dintattn__mat *M, dintattn_error *err)
{
    const dintattn__tensor *t = dintattn__find(&m->file, name);
    dintattn__source src = {NULL, NULL, NULL};
    dintattn__mat stored;
    dintattn__wtype held;
    memset(&stored, 0, sizeof stored);
    stored.rows = (int)rows;
    stored.cols = (int)cols;
    stored.w = t->data;
    if (t->dtype == DINTATTN__I8 || t->dtype == DINTATTN__U8) { /* Q8 / Q4 in the file: the scales
                                                                     read in place, or copied aligned */
        char sname[112];
        const dintattn__tensor *s;
        const size_t n_scales = (size_t)rows * (size_t)(cols / 32);
        snprintf(sname, sizeof sname, "%s.scale", name);
        s = dintattn__find(&m->file, sname);
        stored.type = t->dtype == DINTATTN__I8 ? DINTATTN__W_Q8 : DINTATTN__W_Q4;
        if (dintattn__in_place(s)) {
            stored.scale = (const float *)(const void *)s->data;
        } else {
            dintattn__source ss = {NULL, NULL, NULL};
            float *p = (float *)dintattn__own(m, n_scales, sizeof(float));
            if (!p) return dintattn__fail(err, DINTATTN_ERR_NOMEM, "out of memory converting '%s'", sname);
            ss.t = s;
            dintattn__source_span(&ss, 0, n_scales, p);
            stored.scale = p;
        }
        src.q8 = &stored;
    } else {
        stored.type = dintattn__file_wtype(t);
        src.t = t;
    }
    *M = stored;
    held = dintattn__held_type(m->weights, stored.type, stored.cols);
    if (held == stored.type && (dintattn__wtypes[held].block || dintattn__in_place(t))) {
        m->held_types |= 1u << held;
        return DINTATTN_OK;
    }
    if (held == stored.type) /* not readable in place: in the load option's precision, f32 for FILE */
        held = m->weights == DINTATTN_WEIGHTS_BF16 ? DINTATTN__W_BF16 : DINTATTN__W_F32;
    return dintattn__convert(m, &src, held, name, M, err);
}

/* Tensor ts of layer l into its field. */
static dintattn_result dintattn__build_tensor(dintattn_model *m, const dintattn__tspec *ts, int l,
                                              dintattn_error *err)
{
    char name[96];
    const dintattn__tensor *t;
    void *field = dintattn__tspec_field(m, ts, l);
    int64_t rows, cols;
    size_t n;
    dintattn__tspec_name(ts, l, name, sizeof name);
    dintattn__tspec_shape(&m->cfg, ts, &rows, &cols);
    if (ts->held_as == DINTATTN__AS_MATRIX) return dintattn__build_matrix(m, name, rows, cols, (dintattn__mat *)field, err);
    t = dintattn__find(&m->file, name);
    n = (t->end - t->begin) / dintattn__dtype_size(t->dtype);
    if (ts->held_as == DINTATTN__AS_HEAD_NORM) m->layers[l].head_norm_per_head = (int64_t)n != rows;
    if (t->dtype == DINTATTN__F32 && dintattn__in_place(t)) {
        *(const float **)field = (const float *)(const void *)t->data;
    } else {
        dintattn__source src = {t, NULL, NULL};
        float *p = (float *)dintattn__own(m, n, sizeof(float));
        if (!p) return dintattn__fail(err, DINTATTN_ERR_NOMEM, "out of memory converting '%s'", name);
        dintattn__source_span(&src, 0, n, p);
        *(const float **)field = p;
    }
    return DINTATTN_OK;
}

/* Merges one projection's factors, W[h] = base + up[h] @ down[h] for h < heads, in double, into
   W (held in the model's weight precision, f32 for FILE). */
static dintattn_result dintattn__merge(dintattn_model *m, const dintattn__mat *base, const dintattn__mat *down,
                                       const float *up, int heads, dintattn__mat *W, dintattn_error *err)
{
    const dintattn_config *c = &m->cfg;
    const int D = c->dim, d = c->head_dim, r = c->qk_rank;
    const size_t per = (size_t)d * D;
    double *w = (double *)dintattn__calloc((size_t)heads * per + (size_t)r * D + (size_t)d * r, sizeof(double)), *dn, *uh;
    dintattn__source src = {NULL, NULL, NULL};
    dintattn_result e;
    size_t i;
    int h;
    if (!w) return dintattn__fail(err, DINTATTN_ERR_NOMEM, "out of memory merging Shared-DIFF factors");
    dn = w + (size_t)heads * per;
    uh = dn + (size_t)r * D;
    for (h = 0; h < heads; h++) {
        double *wh = w + (size_t)h * per;
        for (i = 0; i < per; i++) wh[i] = dintattn__w_elem(base, i);
        for (i = 0; i < (size_t)r * D; i++) dn[i] = dintattn__w_elem(down, (size_t)h * r * D + i);
        for (i = 0; i < (size_t)d * r; i++) uh[i] = up[(size_t)h * d * r + i];
        cblas_dgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, d, D, r, 1.0, uh, r, dn, D, 1.0, wh, D);
    }
    memset(W, 0, sizeof *W);
    W->rows = heads * d;
    W->cols = D;
    src.f64 = w;
    e = dintattn__convert(m, &src, dintattn__held_type(m->weights, DINTATTN__W_F32, D), "merged Q/K", W, err);
    DINTATTN_FREE(w);
    return e;
}

/* FLOPs per token of the Q/K projections, factored (1) or merged dense (0). */
static double dintattn__qk_cost(const dintattn_config *c, int factored)
{
    double D = c->dim, d = c->head_dim, r = c->qk_rank;
    double nq = c->n_heads + c->n_q2_heads, nk = c->n_k1_heads + (c->shared_k ? 0 : c->n_k2_heads);
    if (!factored) return (nq + nk) * d * D;
    return 2 * d * D + (nq + nk) * r * (D + d);
}

/* lambda = exp(lambda_q1 . lambda_k1) - exp(lambda_q2 . lambda_k2) + lambda_init, one per layer
   (docs/format.md section 1): the only place it is computed. */
static dintattn_result dintattn__compute_lambda(dintattn_model *m, int l, int check_finite, dintattn_error *err)
{
    dintattn__layer *L = &m->layers[l];
    double d1 = 0, d2 = 0;
    int k;
    L->lambda = 0;
    if (m->cfg.attention == DINTATTN_ATTN_STANDARD || m->cfg.lambda_mode != DINTATTN_LAMBDA_REPARAM) return DINTATTN_OK;
    for (k = 0; k < m->cfg.head_dim; k++) {
        d1 += (double)L->lambda_q1[k] * L->lambda_k1[k];
        d2 += (double)L->lambda_q2[k] * L->lambda_k2[k];
    }
    L->lambda = exp(d1) - exp(d2) + L->lambda_init;
    if (check_finite && !(L->lambda - L->lambda == 0))
        return dintattn__fail(err, DINTATTN_ERR_NONFINITE,
                              "layer %d: lambda = exp(lambda_q1 . lambda_k1) - exp(lambda_q2 . lambda_k2) + "
                              "lambda_init is not finite", l);
    return DINTATTN_OK;
}

/* Heads decode reads together (dintattn__heads_together, dintattn__attend) */
#define DINTATTN__HEADS 4

/* Whether signal heads a and b read the same K1 and V heads (grouped queries) */
static int dintattn__same_kv(const dintattn_config *c, int a, int b)
{
    const int H = c->n_heads;
    return dintattn__head_of(a, c->n_k1_heads, H) == dintattn__head_of(b, c->n_k1_heads, H) &&
           dintattn__head_of(a, c->n_v_heads, H) == dintattn__head_of(b, c->n_v_heads, H);
}

/* Signal heads that read the same Q2 and K2 heads share their noise map A2 (Grouped-DIFF's G
   signal heads per noise head); such heads are consecutive. The runs, computed once: decode and
   prefill compute A2 once a run, and a run is a unit of attention on the session's threads. With
   standard attention (no A2) a run is up to DINTATTN__HEADS heads that share their K and V heads
   (grouped queries), which decode reads once for the run. */
static dintattn_result dintattn__noise_runs(dintattn_model *m, dintattn_error *err)
{
    const dintattn_config *c = &m->cfg;
    const int H = c->n_heads, diff = c->attention != DINTATTN_ATTN_STANDARD;
    int i, n = 0;
    m->noise_run = (int *)dintattn__calloc((size_t)H + 1, sizeof *m->noise_run);
    if (!m->noise_run) return dintattn__fail(err, DINTATTN_ERR_NOMEM, "out of memory for %d heads", H);
    for (i = 0; i < H; i++)
        if (i == 0 ||
            (diff ? dintattn__head_of(i, c->n_q2_heads, H) != dintattn__head_of(i - 1, c->n_q2_heads, H) ||
                        dintattn__head_of(i, c->n_k2_heads, H) != dintattn__head_of(i - 1, c->n_k2_heads, H)
                  : i - m->noise_run[n - 1] == DINTATTN__HEADS || !dintattn__same_kv(c, i - 1, i)))
            m->noise_run[n++] = i;
    m->noise_run[n] = H;
    m->n_noise_runs = n;
    return DINTATTN_OK;
}

/* Builds every view, computes lambda, merges Shared-DIFF factors if cheaper. */
static dintattn_result dintattn__build(dintattn_model *m, const dintattn_load_options *opt, dintattn_error *err)
{
    const dintattn_config *c = &m->cfg;
    const dintattn_qk_form form = opt ? opt->qk_form : DINTATTN_QK_AUTO;
    const int check_finite = opt && opt->check_finite;
    dintattn_result r;
    int k, l;
    for (l = -1; l < c->n_layers; l++)
        for (k = 0; k < DINTATTN__N_TSPECS; k++) {
            const dintattn__tspec *ts = &dintattn__tensors[k];
            if ((ts->per_layer != (l >= 0)) || !dintattn__tspec_present(c, ts)) continue;
            if ((r = dintattn__build_tensor(m, ts, l, err))) return r;
        }
    if (c->tie_embeddings) m->output = m->tok_embeddings;
    for (l = 0; l < c->n_layers; l++)
        if ((r = dintattn__compute_lambda(m, l, check_finite, err))) return r;
    if ((r = dintattn__noise_runs(m, err))) return r;
    if (c->qk_rank == 0) return DINTATTN_OK;
    m->qk_factored = form == DINTATTN_QK_FACTORED ||
                     (form == DINTATTN_QK_AUTO && dintattn__qk_cost(c, 1) < dintattn__qk_cost(c, 0));
    for (l = 0; l < c->n_layers && !m->qk_factored; l++) {
        dintattn__layer *L = &m->layers[l];
        if ((r = dintattn__merge(m, &L->q_base, &L->q1_down, L->q1_up, c->n_heads, &L->wq1, err)) ||
            (r = dintattn__merge(m, &L->k_base, &L->k1_down, L->k1_up, c->n_k1_heads, &L->wk1, err)))
            return r;
        if (c->attention != DINTATTN_ATTN_STANDARD &&
            ((r = dintattn__merge(m, &L->q_base, &L->q2_down, L->q2_up, c->n_q2_heads, &L->wq2, err)) ||
             (!c->shared_k && (r = dintattn__merge(m, &L->k_base, &L->k2_down, L->k2_up, c->n_k2_heads, &L->wk2, err)))))
            return r;
    }
    return DINTATTN_OK;
}

static dintattn_result dintattn__file_copy(dintattn_model *m, const dintattn_load_options *opt, dintattn_error *err);

/* The rest of a load once the file's bytes are in m->file: copied first if the load option map
   says so (a mapped file only), then parsed, checked and built. */
static dintattn_result dintattn__model_finish(dintattn_model *m, const dintattn_load_options *opt,
                                              dintattn_model **out, dintattn_error *err)
{
    dintattn_result r;
    m->weights = opt ? opt->weights : DINTATTN_WEIGHTS_FILE;
    m->progress = opt ? opt->progress : NULL;
    m->progress_user = opt ? opt->progress_user : NULL;
    m->load_threads = opt && opt->n_threads ? opt->n_threads : 1;
    if ((r = dintattn__file_copy(m, opt, err)) || (r = dintattn__file_parse(&m->file, err)) ||
        (r = dintattn__read_config(m, err)) || (r = dintattn__validate(m, opt && opt->check_finite, err)) ||
        (r = dintattn__build(m, opt, err))) {
        dintattn_model_free(m);
        return r;
    }
    if (m->progress && m->progress_done > 0) m->progress(m->progress_user, (double)m->file.size, (double)m->file.size);
    m->progress = NULL; /* the callback is the load's: never called afterwards */
    *out = m;
    dintattn__ok(err);
    return DINTATTN_OK;
}

static dintattn_result dintattn__check_load_options(const dintattn_load_options *opt, dintattn_error *err)
{
    if (opt && (opt->qk_form < DINTATTN_QK_AUTO || opt->qk_form > DINTATTN_QK_MERGED))
        return dintattn__fail(err, DINTATTN_ERR_ARG, "dintattn_load_options.qk_form %d is not a dintattn_qk_form",
                              (int)opt->qk_form);
    if (opt && (opt->map < DINTATTN_MAP_AUTO || opt->map > DINTATTN_MAP_COPY))
        return dintattn__fail(err, DINTATTN_ERR_ARG, "dintattn_load_options.map %d is not a dintattn_map", (int)opt->map);
    if (opt && (opt->weights < DINTATTN_WEIGHTS_FILE || opt->weights > DINTATTN_WEIGHTS_Q4))
        return dintattn__fail(err, DINTATTN_ERR_ARG, "dintattn_load_options.weights %d is not a dintattn_weights",
                              (int)opt->weights);
    if (opt && (opt->n_threads < 0 || opt->n_threads > 1024))
        return dintattn__fail(err, DINTATTN_ERR_ARG, "dintattn_load_options.n_threads must be in [0, 1024], not %d",
                              opt->n_threads);
    return DINTATTN_OK;
}

DINTATTN_API void dintattn_progress_stderr(void *user, double done, double total)
{
    static int shown = -1; /* the console's one progress line */
    const int pct = total > 0 && done < total ? (int)(100.0 * done / total) : 100;
    if (pct == shown || total < 1e9) return;
    fprintf(stderr, "\r%s: loading weights, %d%% (%.2f GB)%s", user ? (const char *)user : "load", pct, done / 1e9,
            pct == 100 ? "\n" : "");
    fflush(stderr);
    shown = pct == 100 ? -1 : pct;
}

DINTATTN_API double dintattn_mem_available(void)
{
    FILE *f = fopen("/proc/meminfo", "r");
    char line[256];
    double kb = 0;
    if (!f) return 0;
    while (fgets(line, sizeof line, f))
        if (!strncmp(line, "MemAvailable:", 13)) {
            kb = strtod(line + 13, NULL);
            break;
        }
    fclose(f);
    return kb > 0 ? kb * 1024 : 0;
}

#ifndef DINTATTN__COPY_UNIT
#define DINTATTN__COPY_UNIT ((size_t)1 << 20) /* bytes a thread copies at least */
#endif

/* Part k of a copy of n bytes from src to dst, cut into `parts` (of whole 4 KiB pages) */
typedef struct dintattn__copy_job {
    unsigned char *dst;
    const unsigned char *src;
    size_t n, parts;
} dintattn__copy_job;

static void dintattn__copy_part(void *ctx, size_t k)
{
    const dintattn__copy_job *c = (const dintattn__copy_job *)ctx;
    const size_t per = (c->n / c->parts + 4095) / 4096 * 4096, i0 = k * per < c->n ? k * per : c->n;
    const size_t i1 = k + 1 < c->parts && (k + 1) * per < c->n ? (k + 1) * per : c->n;
    memcpy(c->dst + i0, c->src + i0, i1 - i0);
}

/* The mapped file copied into memory the model owns (dintattn_map), on the load's threads, in steps
   of 64 MiB with the load's progress, each step's mapping dropped once copied (its pages stay in the page cache,
   clean, for the kernel to reclaim). Under AUTO a copy that finds no memory keeps the mapping. */
static dintattn_result dintattn__file_copy(dintattn_model *m, const dintattn_load_options *opt, dintattn_error *err)
{
    dintattn__file *f = &m->file;
    const dintattn_map mode = opt ? opt->map : DINTATTN_MAP_AUTO;
    const size_t step = (size_t)64 << 20;
    unsigned char *p;
    size_t i;
    if (!f->map || mode == DINTATTN_MAP_FILE) return DINTATTN_OK;
    if (mode == DINTATTN_MAP_AUTO && ((opt && opt->weights != DINTATTN_WEIGHTS_FILE) || f->size < step ||
                                      3.0 * (double)f->size > 2.0 * dintattn_mem_available()))
        return DINTATTN_OK;
    if (!(p = (unsigned char *)dintattn__own_raw(m, f->size, 1))) {
        if (mode == DINTATTN_MAP_AUTO) return DINTATTN_OK;
        return dintattn__fail(err, DINTATTN_ERR_NOMEM, "out of memory copying the model's %zu bytes", f->size);
    }
    for (i = 0; i < f->size; i += step) { /* each step unmapped once copied: the peak is the copy */
        const size_t n = f->size - i < step ? f->size - i : step;
        dintattn__copy_job c;
        c.dst = p + i, c.src = f->bytes + i, c.n = n, c.parts = dintattn__load_parts(m, n, DINTATTN__COPY_UNIT);
        dintattn__run_parts(c.parts, dintattn__copy_part, &c);
        munmap((unsigned char *)f->map + i, n);
        if (opt && opt->progress) opt->progress(opt->progress_user, (double)(i + n), (double)f->size);
    }
    f->map = NULL;
    f->bytes = p;
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
    if ((r = dintattn__model_finish(m, opt, out, err))) return r;
    (*out)->file.path = NULL; /* the caller's string: not kept past the load */
    return DINTATTN_OK;
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
    DINTATTN_FREE(m->noise_run);
    dintattn__file_close(&m->file);
    DINTATTN_FREE(m);
}

DINTATTN_API const dintattn_config *dintattn_model_config(const dintattn_model *m) { return &m->cfg; }

DINTATTN_API int dintattn_model_qk_factored(const dintattn_model *m) { return m->qk_factored; }

DINTATTN_API size_t dintattn_model_owned_bytes(const dintattn_model *m) { return m->owned_bytes; }

/* Calls fn(ctx, info) for every tensor the model holds, in the table's order (layer by layer),
   then (merged Shared-DIFF) for the dense Q/K matrices merged from the factors. */
static void dintattn__each_tensor(const dintattn_model *m, void (*fn)(void *ctx, const dintattn_tensor_info *t),
                                  void *ctx)
{
    const dintattn_config *c = &m->cfg;
    const int merged = c->qk_rank > 0 && !m->qk_factored;
    dintattn_config dense = *c; /* the config whose dense Q/K the merged matrices stand for */
    dintattn_tensor_info t;
    int s, l, pass;
    dense.qk_rank = 0;
    for (pass = 0; pass < 1 + merged; pass++)
        for (l = -1; l < c->n_layers; l++)
            for (s = 0; s < DINTATTN__N_TSPECS; s++) {
                const dintattn__tspec *ts = &dintattn__tensors[s];
                const void *field = dintattn__tspec_field((dintattn_model *)m, ts, l < 0 ? 0 : l);
                int64_t rows, cols;
                if (ts->per_layer != (l >= 0)) continue;
                if (pass == 0 && !dintattn__tspec_present(c, ts)) continue;
                if (pass == 1 && (!dintattn__tspec_is_dense_qk(ts) || !dintattn__tspec_present(&dense, ts))) continue;
                memset(&t, 0, sizeof t);
                dintattn__tspec_name(ts, l, t.name, sizeof t.name);
                dintattn__tspec_shape(c, ts, &rows, &cols);
                t.layer = l;
                t.rows = rows;
                t.cols = cols;
                t.in_file = pass == 0;
                t.heads = 1;
                if (ts->held_as == DINTATTN__AS_MATRIX) {
                    const dintattn__mat *M = (const dintattn__mat *)field;
                    t.type = dintattn__wtypes[M->type].name;
                    t.bytes = dintattn__mat_bytes(M);
                    t.matrix = 1;
                    t.read_bytes = t.bytes;
                    if (field == (const void *)&m->tok_embeddings) /* a row, and all of it as a tied LM head */
                        t.read_bytes = t.bytes / (size_t)c->vocab_size + (c->tie_embeddings ? t.bytes : 0);
                    if (merged && dintattn__tspec_is_factor(ts)) t.read_bytes = 0; /* the merged ones are read */
                } else {
                    if (ts->held_as == DINTATTN__AS_HEAD_NORM && m->layers[l].head_norm_per_head)
                        t.rows *= c->n_heads;
                    t.type = "f32";
                    t.bytes = (size_t)(t.rows * (t.cols ? t.cols : 1)) * sizeof(float);
                    t.matrix = ts->held_as == DINTATTN__AS_FACTOR;
                    if (t.matrix) t.heads = (int)(rows / c->head_dim);
                    t.read_bytes = merged && t.matrix ? 0 : t.bytes;
                    if (ts->when == DINTATTN__IF_LAMBDA_REPARAM) t.read_bytes = 0; /* lambda is computed at load */
                }
                fn(ctx, &t);
            }
}

typedef struct dintattn__tensor_list {
    dintattn_tensor_info *out;
    long long max, n, params;
    size_t read_bytes;
} dintattn__tensor_list;

static void dintattn__list_tensor(void *ctx, const dintattn_tensor_info *t)
{
    dintattn__tensor_list *a = (dintattn__tensor_list *)ctx;
    if (a->out && a->n < a->max) a->out[a->n] = *t;
    a->n++;
    a->read_bytes += t->read_bytes;
    if (t->in_file) a->params += t->rows * (t->cols ? t->cols : 1);
}

static dintattn__tensor_list dintattn__tensor_totals(const dintattn_model *m, dintattn_tensor_info *out, long long max)
{
    dintattn__tensor_list a;
    memset(&a, 0, sizeof a);
    a.out = out;
    a.max = max;
    dintattn__each_tensor(m, dintattn__list_tensor, &a);
    return a;
}

DINTATTN_API long long dintattn_model_tensors(const dintattn_model *m, dintattn_tensor_info *out, long long max)
{
    return dintattn__tensor_totals(m, out, max).n;
}

DINTATTN_API size_t dintattn_model_weight_bytes(const dintattn_model *m)
{
    return dintattn__tensor_totals(m, NULL, 0).read_bytes;
}

DINTATTN_API long long dintattn_model_params(const dintattn_model *m)
{
    return dintattn__tensor_totals(m, NULL, 0).params;
}

/* The names of an option's values (NULL-terminated, in the enum's order): the value named `name`,
   or -1 with err listing the choices. */
static int dintattn__option_value(const char *const *names, const char *what, const char *name, dintattn_error *err)
{
    char choices[96] = "";
    int k;
    for (k = 0; name && names[k]; k++)
        if (strcmp(name, names[k]) == 0) {
            dintattn__ok(err);
            return k;
        }
    for (k = 0; names[k]; k++)
        snprintf(choices + strlen(choices), sizeof choices - strlen(choices), "%s%s", k ? (names[k + 1] ? ", " : " or ") : "",
                 names[k]);
    dintattn__fail(err, DINTATTN_ERR_ARG, "%s must be %s, not '%.40s'", what, choices, name ? name : "(null)");
    return -1;
}

static const char *const dintattn__weights_names[] = {"file", "f32", "bf16", "q8", "q4", NULL};
static const char *const dintattn__precision_names[] = {"auto", "exact", "fast", NULL};
static const char *const dintattn__kernels_names[] = {"auto", "portable", "avx2", "avx512", "amx", NULL};
static const char *const dintattn__kv_names[] = {"f32", "bf16", "q8", NULL};
static const char *const dintattn__map_names[] = {"auto", "file", "copy", NULL};
static const char *const dintattn__prefill_unit_names[] = {"sgemm",       "rows",        "f32 panels",
                                                           "bf16 panels", "int8 panels", "amx bf16 tiles",
                                                           "amx bf16x3 tiles", NULL};

/* An option's name <-> value: NAME_FN(v) gives names[v] (NULL out of [0, LAST]), PARSE_FN looks
   the name up (DINTATTN_ERR_ARG, naming WHAT and the names, for any other). */
#define DINTATTN__OPTION(T, NAME_FN, PARSE_FN, names, what, LAST)                                             \
    DINTATTN_API const char *NAME_FN(T v) { return (int)v >= 0 && v <= (LAST) ? names[v] : NULL; }            \
    DINTATTN_API dintattn_result PARSE_FN(const char *name, T *out, dintattn_error *err)                       \
    {                                                                                                        \
        const int k = dintattn__option_value(names, what, name, err);                                        \
        if (k < 0) return DINTATTN_ERR_ARG;                                                                  \
        *out = (T)k;                                                                                         \
        return DINTATTN_OK;                                                                                  \
    }
DINTATTN__OPTION(dintattn_weights, dintattn_weights_name, dintattn_weights_parse, dintattn__weights_names, "weights",
                 DINTATTN_WEIGHTS_Q4)
DINTATTN__OPTION(dintattn_kernels, dintattn_kernels_name, dintattn_kernels_parse, dintattn__kernels_names, "kernels",
                 DINTATTN_KERNELS_AMX)
DINTATTN__OPTION(dintattn_precision, dintattn_precision_name, dintattn_precision_parse, dintattn__precision_names,
                 "precision", DINTATTN_PRECISION_FAST)
DINTATTN__OPTION(dintattn_kv_type, dintattn_kv_name, dintattn_kv_parse, dintattn__kv_names, "kv", DINTATTN_KV_Q8)
DINTATTN__OPTION(dintattn_map, dintattn_map_name, dintattn_map_parse, dintattn__map_names, "map", DINTATTN_MAP_COPY)
DINTATTN__OPTION(dintattn_prefill_unit, dintattn_prefill_unit_name, dintattn_prefill_unit_parse,
                 dintattn__prefill_unit_names, "prefill unit", DINTATTN_PREFILL_AMX_BF16X3)

/* ============================================================================================
   5. Math kernels
   ============================================================================================ */

/* out = x / sqrt(mean(x^2) + eps) * w; sums in double to match a float64 reference closely, in
   four chains (one waits on each addition's latency) */
static void dintattn__rmsnorm(float *out, const float *x, const float *w, int n, double eps)
{
    double ss[4] = {0, 0, 0, 0};
    float inv;
    int i;
    for (i = 0; i + 4 <= n; i += 4) {
        ss[0] += (double)x[i] * x[i], ss[1] += (double)x[i + 1] * x[i + 1];
        ss[2] += (double)x[i + 2] * x[i + 2], ss[3] += (double)x[i + 3] * x[i + 3];
    }
    for (; i < n; i++) ss[0] += (double)x[i] * x[i];
    inv = (float)(1.0 / sqrt(((ss[0] + ss[1]) + (ss[2] + ss[3])) / n + eps));
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

/* Rotary embedding of `heads` heads of width d at one position: the first r components rotate
   (pairs (2k, 2k+1), or (k, k + r/2) for "halves"), the rest pass; cs/sn hold the cos/sin of the
   position's angle per pair (dintattn__rope_tables). */
static void dintattn__rope(double *v, int heads, int d, int r, const double *cs, const double *sn, dintattn_rope mode)
{
    int h, k, half = r / 2;
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

/* --- weight matrices: row . x and rows as f32, one kernel per weight type ----------------
   The portable versions (four partial sums; Q8 per block of 32, then scaled); the x86 versions
   follow. Every kernel takes a row of a dintattn__mat and finishes any tail itself. */

#define DINTATTN__ID(v) (v)
#define DINTATTN__DOT_C(name, T, LOAD)                                                                         \
    static float name(const dintattn__mat *M, size_t r, const float *x)                                      \
    {                                                                                                        \
        const size_t n = (size_t)M->cols;                                                                    \
        const T *w = (const T *)M->w + r * n;                                                                \
        float s0 = 0, s1 = 0, s2 = 0, s3 = 0;                                                                \
        size_t i = 0;                                                                                        \
        for (; i + 4 <= n; i += 4) {                                                                         \
            s0 += LOAD(w[i]) * x[i];                                                                         \
            s1 += LOAD(w[i + 1]) * x[i + 1];                                                                 \
            s2 += LOAD(w[i + 2]) * x[i + 2];                                                                 \
            s3 += LOAD(w[i + 3]) * x[i + 3];                                                                 \
        }                                                                                                    \
        for (; i < n; i++) s0 += LOAD(w[i]) * x[i];                                                          \
        return (s0 + s1) + (s2 + s3);                                                                        \
    }
DINTATTN__DOT_C(dintattn__dot_f32_c, float, DINTATTN__ID)
DINTATTN__DOT_C(dintattn__dot_f16_c, uint16_t, dintattn__f16_to_f32)
DINTATTN__DOT_C(dintattn__dot_bf16_c, uint16_t, dintattn__bf16_to_f32)

static float dintattn__dot_q8_c(const dintattn__mat *M, size_t r, const float *x)
{
    const size_t n = (size_t)M->cols;
    const signed char *q = (const signed char *)M->w + r * n;
    const float *sc = M->scale + r * n / 32;
    float s = 0;
    size_t i, k;
    for (i = 0; i < n; i += 32) { /* Q8 rows are a multiple of 32 long */
        float b0 = 0, b1 = 0, b2 = 0, b3 = 0;
        for (k = i; k < i + 32; k += 4) {
            b0 += (float)q[k] * x[k];
            b1 += (float)q[k + 1] * x[k + 1];
            b2 += (float)q[k + 2] * x[k + 2];
            b3 += (float)q[k + 3] * x[k + 3];
        }
        s += sc[i / 32] * ((b0 + b1) + (b2 + b3));
    }
    return s;
}

/* Q4 rows with f32 activations (precision EXACT; AUTO runs int8 activations, below): each block
   of 32 summed in f32, or double for Q/K, then scaled. */
#define DINTATTN__DOT_Q4_C(name, T)                                                                            \
    static T name(const dintattn__mat *M, size_t r, const float *x)                                          \
    {                                                                                                        \
        const size_t n = (size_t)M->cols;                                                                    \
        const unsigned char *q = (const unsigned char *)M->w + r * n / 2;                                    \
        const float *sc = M->scale + r * n / 32;                                                             \
        T s = 0;                                                                                             \
        size_t i, k;                                                                                         \
        for (i = 0; i < n; i += 32, q += 16) {                                                               \
            T lo = 0, hi = 0;                                                                                \
            for (k = 0; k < 16; k++) {                                                                       \
                lo += (T)((q[k] & 15) - 8) * x[i + k];                                                       \
                hi += (T)((q[k] >> 4) - 8) * x[i + 16 + k];                                                  \
            }                                                                                                \
            s += sc[i / 32] * (lo + hi);                                                                     \
        }                                                                                                    \
        return s;                                                                                            \
    }
DINTATTN__DOT_Q4_C(dintattn__dot_q4_c, float)
DINTATTN__DOT_Q4_C(dintattn__dot64_q4_c, double)

/* A row of activations rounded to bf16 (dintattn__f32_to_bf16; precision FAST), zero from cols up
   to a multiple of 32 (AMX's blocks) */
static void dintattn__to_bf16(const float *x, int cols, uint16_t *out)
{
    int k;
    for (k = 0; k < (cols + 31) / 32 * 32; k++) out[k] = k < cols ? dintattn__f32_to_bf16(x[k]) : 0;
}

/* --- int8 activations for Q8 and Q4 rows (precision AUTO) ---------------------------------
   x (n a multiple of 32) is cut into blocks of 32; each block gets d = max|x| / 127 and
   q = round(x / d) in [-127, 127] (a block holding NaN or infinity gets a NaN d). Then
   row . x = sum over blocks of w_scale * d * (the block's integer dot product of weights and q),
   the integer dot exact in int32. The x86 kernels multiply unsigned by signed bytes (VNNI's
   vpdpbusd): Q8 weights w + 128 (Q4 nibbles as stored: w + 8) times q, then take 128 (8) times
   sum over blocks of w_scale * d * sum(q) off the row's total: c holds d * sum(q) per block. */
typedef struct dintattn__xq {
    const signed char *q;                   /* [n] */
    const float *s;                         /* [n / 32]: d */
    const float *c;                         /* [n / 32]: d * sum(q) */
} dintattn__xq;

static void dintattn__quantize_x(const float *x, int n, signed char *q, float *s, float *c)
{
    int b, k;
    for (b = 0; b < n / 32; b++, x += 32, q += 32) {
        float amax = 0, inv;
        int32_t sum = 0;
        for (k = 0; k < 32; k++) {
            const float a = fabsf(x[k]);
            if (!(a <= amax) && amax == amax) amax = a; /* a NaN, once met, stays */
        }
        if (!(amax - amax == 0)) { /* NaN or infinite: a NaN scale (and no float -> int of a NaN) */
            memset(q, 0, 32);
            s[b] = c[b] = NAN;
            continue;
        }
        inv = amax > 0 ? 127.0f / amax : 0.0f;
        if (!(inv - inv == 0)) inv = 0.0f; /* max|x| < 2^-120 */
        for (k = 0; k < 32; k++) {
            float r = rintf(x[k] * inv);
            q[k] = (signed char)(r > 127.0f ? 127 : r < -127.0f ? -127 : r);
            sum += q[k];
        }
        s[b] = amax / 127.0f;
        c[b] = s[b] * (float)sum;
    }
}

static float dintattn__dotq_q8_c(const dintattn__mat *M, size_t r, const dintattn__xq *x)
{
    const size_t n = (size_t)M->cols;
    const signed char *w = (const signed char *)M->w + r * n;
    const float *sc = M->scale + r * n / 32;
    float s = 0;
    size_t i, k;
    for (i = 0; i < n; i += 32) {
        int32_t dot = 0;
        for (k = i; k < i + 32; k++) dot += (int32_t)w[k] * x->q[k];
        s += sc[i / 32] * x->s[i / 32] * (float)dot;
    }
    return s;
}

static float dintattn__dotq_q4_c(const dintattn__mat *M, size_t r, const dintattn__xq *x)
{
    const size_t n = (size_t)M->cols;
    const unsigned char *w = (const unsigned char *)M->w + r * n / 2;
    const float *sc = M->scale + r * n / 32;
    float s = 0;
    size_t i, k;
    for (i = 0; i < n; i += 32, w += 16) {
        int32_t dot = 0;
        for (k = 0; k < 16; k++) dot += ((w[k] & 15) - 8) * x->q[i + k] + ((w[k] >> 4) - 8) * x->q[i + 16 + k];
        s += sc[i / 32] * x->s[i / 32] * (float)dot;
    }
    return s;
}

/* One row against four tokens' activations (prefill); the VNNI level has its own. */
#define DINTATTN__DOTQ4_EACH(name, dotq)                                                                       \
    static void name(const dintattn__mat *M, size_t r, const dintattn__xq *x, float *out)                    \
    {                                                                                                        \
        int j;                                                                                               \
        for (j = 0; j < 4; j++) out[j] = dotq(M, r, x + j);                                                  \
    }
DINTATTN__DOTQ4_EACH(dintattn__dotq4_q8_c, dintattn__dotq_q8_c)
DINTATTN__DOTQ4_EACH(dintattn__dotq4_q4_c, dintattn__dotq_q4_c)

/* --- bf16 activations for BF16 and F16 rows (precision FAST): x rounded to bf16, products in
   f32. F16 weights are rounded to bf16 too, as they are read (vdpbf16ps multiplies bf16 pairs). */
static float dintattn__wb(const dintattn__mat *M, const uint16_t *w, size_t i)
{
    return M->type == DINTATTN__W_F16 ? dintattn__bf16_to_f32(dintattn__f32_to_bf16(dintattn__f16_to_f32(w[i])))
                                      : dintattn__bf16_to_f32(w[i]);
}

static void dintattn__dotb_c(const dintattn__mat *M, size_t r, const uint16_t *const *x, int nt, float *out)
{
    const size_t n = (size_t)M->cols;
    const uint16_t *w = (const uint16_t *)M->w + r * n;
    size_t i;
    int j;
    for (j = 0; j < nt; j++) {
        float s0 = 0, s1 = 0;
        for (i = 0; i + 2 <= n; i += 2) { /* the pairs vdpbf16ps sums */
            s0 += dintattn__wb(M, w, i) * dintattn__bf16_to_f32(x[j][i]);
            s1 += dintattn__wb(M, w, i + 1) * dintattn__bf16_to_f32(x[j][i + 1]);
        }
        if (i < n) s0 += dintattn__wb(M, w, i) * dintattn__bf16_to_f32(x[j][i]);
        out[j] = s0 + s1;
    }
}

/* The Q/K projections' row . x in double (see dintattn__layer). */
#define DINTATTN__DOT64_C(name, T, LOAD)                                                                       \
    static double name(const dintattn__mat *M, size_t r, const float *x)                                     \
    {                                                                                                        \
        const size_t n = (size_t)M->cols;                                                                    \
        const T *w = (const T *)M->w + r * n;                                                                \
        double s0 = 0, s1 = 0;                                                                               \
        size_t i = 0;                                                                                        \
        for (; i + 2 <= n; i += 2) {                                                                         \
            s0 += (double)LOAD(w[i]) * x[i];                                                                 \
            s1 += (double)LOAD(w[i + 1]) * x[i + 1];                                                         \
        }                                                                                                    \
        for (; i < n; i++) s0 += (double)LOAD(w[i]) * x[i];                                                  \
        return s0 + s1;                                                                                      \
    }
DINTATTN__DOT64_C(dintattn__dot64_f32_c, float, DINTATTN__ID)
DINTATTN__DOT64_C(dintattn__dot64_f16_c, uint16_t, dintattn__f16_to_f32)
DINTATTN__DOT64_C(dintattn__dot64_bf16_c, uint16_t, dintattn__bf16_to_f32)

static double dintattn__dot64_q8_c(const dintattn__mat *M, size_t r, const float *x)
{
    const size_t n = (size_t)M->cols;
    const signed char *q = (const signed char *)M->w + r * n;
    const float *sc = M->scale + r * n / 32;
    double s = 0;
    size_t i, k;
    for (i = 0; i < n; i += 32) {
        double b0 = 0, b1 = 0;
        for (k = i; k < i + 32; k += 2) {
            b0 += q[k] * (double)x[k];
            b1 += q[k + 1] * (double)x[k + 1];
        }
        s += sc[i / 32] * (b0 + b1);
    }
    return s;
}

/* n weights from element `at` of M (row-major) into f32 dst */
#define DINTATTN__TO_F32_C(name, T, LOAD)                                                                      \
    static void name(const dintattn__mat *M, size_t at, size_t n, float *dst)                                \
    {                                                                                                        \
        const T *w = (const T *)M->w + at;                                                                   \
        size_t i;                                                                                            \
        for (i = 0; i < n; i++) dst[i] = LOAD(w[i]);                                                         \
    }
DINTATTN__TO_F32_C(dintattn__to_f32_f16_c, uint16_t, dintattn__f16_to_f32)
DINTATTN__TO_F32_C(dintattn__to_f32_bf16_c, uint16_t, dintattn__bf16_to_f32)

static void dintattn__to_f32_f32(const dintattn__mat *M, size_t at, size_t n, float *dst)
{
    memcpy(dst, (const float *)M->w + at, n * sizeof(float));
}

/* Q4: at and n are multiples of 32 (rows are) */
static void dintattn__to_f32_q4(const dintattn__mat *M, size_t at, size_t n, float *dst)
{
    const unsigned char *q = (const unsigned char *)M->w + at / 2;
    size_t i, k;
    for (i = 0; i < n; i += 32, q += 16) {
        const float d = M->scale[(at + i) / 32];
        for (k = 0; k < 16; k++) {
            dst[i + k] = d * (float)((q[k] & 15) - 8);
            dst[i + 16 + k] = d * (float)((q[k] >> 4) - 8);
        }
    }
}

/* dst[i] = scale * q[i]: a head row of the int8 KV cache */
static void dintattn__i8_to_f32_c(const signed char *q, float scale, size_t n, float *dst)
{
    size_t i;
    for (i = 0; i < n; i++) dst[i] = scale * (float)q[i];
}

static void dintattn__to_f32_q8_c(const dintattn__mat *M, size_t at, size_t n, float *dst)
{
    const signed char *q = (const signed char *)M->w + at;
    size_t i;
    for (i = 0; i < n; i++) dst[i] = M->scale[(at + i) / 32] * (float)q[i];
}

/* --- attention rows: scores, the DINT integral's running sum, W @ V -------------------------
   Portable versions, then AVX2 versions. K and V rows of one head are contiguous in the cache
   (d or dv floats apart). */

/* a[j] = (q . K[j]) * scale for j < nk */
static void dintattn__scores(float *a, const float *q, const float *K, int nk, int d, float scale)
{
    int j;
    for (j = 0; j < nk; j++) a[j] = dintattn__dot(q, K + (size_t)j * d, d) * scale;
}

/* Both maps' scores against one set of keys (shared_k), each key read once: a1[j] = (q1 . K[j]) *
   scale, a2[j] = (q2 . K[j]) * scale, the same sums as two dintattn__scores calls. */
static void dintattn__scores2(float *a1, float *a2, const float *q1, const float *q2, const float *K, int nk, int d,
                              float scale)
{
    int j;
    for (j = 0; j < nk; j++) {
        a1[j] = dintattn__dot(q1, K + (size_t)j * d, d) * scale;
        a2[j] = dintattn__dot(q2, K + (size_t)j * d, d) * scale;
    }
}

/* o[0..dv) = sum_j W[j] V[j] */
static void dintattn__wv(float *o, const float *W, const float *V, int nk, int dv)
{
    int j;
    memset(o, 0, sizeof(float) * (size_t)dv);
    for (j = 0; j < nk; j++) dintattn__axpy(W[j], V + (size_t)j * dv, o, dv);
}

/* The DINT integral's running sum over nk = n + 1 keys: S += a1 (A1's row n), G = S / nk (in
   double: S sums n rows). */
static void dintattn__integral(double *S, const float *a1, int nk, float *G)
{
    int j;
    double inv = 1.0 / nk;
    for (j = 0; j < nk; j++) {
        S[j] += a1[j];
        G[j] = (float)(S[j] * inv);
    }
}

/* Prefill's packed panels (dintattn__gemm_unit; the kernels are AVX-512's, and the AVX2 level's
   for int8 activations): DINTATTN__PANEL rows
   a panel, blocks of GQ_NT tokens on int8 and GB_NT on bf16 activations (f32 activations:
   DINTATTN__PANEL_F32 rows, blocks of GF_NT, below). The int8 panel holds per
   block of 32 columns 8 groups x 2 vectors x 16 rows of 4 signed bytes (the weights as integers),
   then the 32 rows' scales, then their offsets -128 * sum(w); the tokens' block per 32 columns: 8
   groups x GQ_NT of 4 unsigned bytes (q + 128), then GQ_NT d. The bf16 panel holds per pair of
   columns 32 rows' pairs; the tokens' block, GB_NT tokens' pairs. */
#define DINTATTN__PANEL 32
#define DINTATTN__GQ_NT 6
#define DINTATTN__GB_NT 12
/* The f32 panels (f32 activations) are taller and their blocks of tokens shorter: 48 rows against
   8 tokens, 24 accumulators fed by 3 loads of rows and 8 broadcasts a column, where 32 rows x 12
   tokens take 2 and 12, 14 loads for the same 24 FMAs. On one Ice Lake core, over slices of 512
   and 2560 columns in L2 (a microbenchmark of the kernel alone, each kernel's best of 100-150
   rounds alternated with a register-only FMA loop like examples/bench's peak), 32 x 12 runs at
   0.73-0.86 of that peak, 48 x 8 at 0.87-1.01. */
#define DINTATTN__PANEL_F32 48
#define DINTATTN__GF_NT 8
#define DINTATTN__F32_SPAN 4096 /* columns of an f32 panel kept in L2 (dintattn__gemm_unit_f32): whole slices */
#define DINTATTN__AMX_NT 32 /* tokens of a block on AMX tiles */
#ifndef DINTATTN__AMX_ROWS_A
#define DINTATTN__AMX_ROWS_A 64 /* the longest chunk with the weights as AMX's A tiles (dintattn__amx_rows_a) */
#endif
#ifndef DINTATTN__AMX_GROUP
#define DINTATTN__AMX_GROUP 4 /* panels of a unit on AMX tiles (dintattn__gemm_unit_amx) */
#endif
#define DINTATTN__GQ_PANEL_BLOCK (8 * 2 * 16 + 2 * 16 + 2 * 16) /* 32-bit words */
#define DINTATTN__GQ_X_BLOCK (8 * DINTATTN__GQ_NT + DINTATTN__GQ_NT)
/* Q8 or Q4 rows r0..r0+31 packed as an int8 panel (the layout above; rows past the matrix zero):
   the AVX2 level's packing, and what the AVX-512 level's (DINTATTN__GQ_PACK) must store. Q4's
   nibbles become their signed values (nibble - 8), byte k of a block holding elements k (low
   nibble) and k + 16 (high). Word g of row i's block at 32 g + i: group g's two vectors of 16 rows. */
static void dintattn__pack_q(const dintattn__mat *M, int r0, void *panel)
{
    const size_t nb = (size_t)M->cols / 32;
    const int q4 = M->type == DINTATTN__W_Q4;
    int32_t *o = (int32_t *)panel;
    size_t b;
    int i, k;
    for (b = 0; b < nb; b++, o += DINTATTN__GQ_PANEL_BLOCK)
        for (i = 0; i < DINTATTN__PANEL; i++) {
            const size_t r = (size_t)r0 + (size_t)i, at = r * nb + b; /* row r's block b */
            signed char v[32] = {0};
            int32_t sum = 0;
            float sc = 0;
            if (r < (size_t)M->rows) {
                if (q4) {
                    const unsigned char *w = (const unsigned char *)M->w + 16 * at;
                    for (k = 0; k < 16; k++) v[k] = (signed char)((w[k] & 15) - 8), v[k + 16] = (signed char)((w[k] >> 4) - 8);
                } else {
                    memcpy(v, (const signed char *)M->w + 32 * at, 32);
                }
                sc = M->scale[at];
            }
            for (k = 0; k < 32; k++) sum += v[k];
            for (k = 0; k < 8; k++) memcpy(o + 32 * k + i, v + 4 * k, 4);
            memcpy(o + 256 + i, &sc, sizeof sc);
            o[288 + i] = -128 * sum;
        }
}

#ifndef DINTATTN__GEMM_MIN_TOKENS
#define DINTATTN__GEMM_MIN_TOKENS 8         /* fewer tokens run on rows (4 x 4 tiles on int8 / bf16) */
#endif

/* --- x86 kernels: AVX2 + FMA + F16C for every weight type and the attention loops, AVX-512F for
   the matrix-vector products; the kernel tables at the end of this section choose among them. */
#if defined(__GNUC__) && (defined(__x86_64__) || defined(__i386__))
#define DINTATTN__HAVE_X86 1
#include <cpuid.h>
#include <immintrin.h>
#define DINTATTN__AVX2 __attribute__((target("avx2,fma,f16c")))
#define DINTATTN__AVX512 __attribute__((target("avx512f,avx2,fma,f16c")))
/* 16 bits of 16 lanes (rows of a panel, elements of a row) where `rows` of them exist */
#define DINTATTN__ROWMASK(rows) ((__mmask16)((rows) >= 16 ? 0xFFFFu : (rows) <= 0 ? 0u : (1u << (rows)) - 1u))

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
   read at the full bandwidth of a sum over the same bytes. ES = 4 needs two lines per 32.
   8192 bytes ahead keeps decode at the bandwidth on every machine measured; shorter distances
   leave part of it unread where memory is far: on an Emerald Rapids Xeon under KVM, 2048 bytes
   leave a tenth to a fifth of it unread (a 2.7B BF16 decode at 318-343 ms/token on 2 threads
   against 286-304 at 6144 or more), and 12288 is slower on one thread. examples/bench's decode
   roofline fraction measures it (build with -DDINTATTN__PF_DIST=N to compare distances). */
#ifndef DINTATTN__PF_DIST
#define DINTATTN__PF_DIST 8192
#endif
/* Into L2 rather than L1: a prefetch to L1 holds one of the core's few L1 fill buffers until its
   line arrives, one to L2 does not (on the same Xeon a 2.7B BF16 decode runs 299-308 ms/token on
   2 threads into L2 against 309-335 into L1; examples/bench, built with
   -DDINTATTN__PF_HINT=_MM_HINT_T0 to compare). */
#ifndef DINTATTN__PF_HINT
#define DINTATTN__PF_HINT _MM_HINT_T1
#endif
/* The panels' kernels prefetch DINTATTN__PF_TOKENS bytes ahead in the stream of a block of tokens
   (the chunk's blocks are contiguous, so this runs into the next block): every panel reads every
   block once, from L3 at a few bytes a cycle, which the hardware's prefetchers do not hide. At
   3072 bytes the f32 panels run a 2.7B BF16 model's prompt of 512 tokens at 73.5-74.4 tok/s,
   against 66.5-67.3 without the prefetch and 72.5-72.9 at 768 bytes (examples/bench --weights
   bf16 --precision fast --kernels avx512 --prompt 512). */
#ifndef DINTATTN__PF_TOKENS
#define DINTATTN__PF_TOKENS 3072
#endif
#define DINTATTN__PF(w, i, ES)                                                                                   \
    do {                                                                                                         \
        _mm_prefetch((const char *)(w) + (size_t)(i) * (ES) + DINTATTN__PF_DIST, DINTATTN__PF_HINT);                 \
        if ((ES) == 4) _mm_prefetch((const char *)(w) + (size_t)(i) * (ES) + DINTATTN__PF_DIST + 64, DINTATTN__PF_HINT); \
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

/* FAST's bf16 activations on AVX2 (no bf16 dot instruction): 8 weights a step widened to f32 (F16
   rounded to bf16 on the way, to nearest even, as dintattn__wb rounds), times the tokens' 8 bf16
   activations widened; one token on four chains, four tokens on one each; the tail as
   dintattn__dotb_c adds it. Products exact in f32, as vdpbf16ps's are. */
DINTATTN__AVX2 static __m256 dintattn__ld8_f16_as_bf16(const uint16_t *w, size_t i)
{
    const __m256 f = DINTATTN__LD8_F16(w, i);
    const __m256i u = _mm256_castps_si256(f);
    const __m256i odd = _mm256_and_si256(_mm256_srli_epi32(u, 16), _mm256_set1_epi32(1));
    const __m256i up = _mm256_add_epi32(u, _mm256_add_epi32(odd, _mm256_set1_epi32(0x7FFF)));
    const __m256 r = _mm256_castsi256_ps(_mm256_and_si256(up, _mm256_set1_epi32(-65536)));
    return _mm256_blendv_ps(r, f, _mm256_cmp_ps(f, f, _CMP_UNORD_Q)); /* a NaN stays one */
}
#define DINTATTN__DOTB_AVX2(name, LW)                                                                        \
    DINTATTN__AVX2 static void name(const dintattn__mat *M, size_t r, const uint16_t *const *x, int nt, float *out) \
    {                                                                                                        \
        const size_t n = (size_t)M->cols;                                                                    \
        const uint16_t *w = (const uint16_t *)M->w + r * n;                                                  \
        __m256 a0 = _mm256_setzero_ps(), a1 = a0, a2 = a0, a3 = a0;                                          \
        size_t i = 0;                                                                                        \
        int j;                                                                                               \
        if (nt == 4) {                                                                                       \
            for (; i + 8 <= n; i += 8) {                                                                     \
                const __m256 v = LW(w, i);                                                                   \
                a0 = _mm256_fmadd_ps(v, DINTATTN__LD8_BF16(x[0], i), a0);                                    \
                a1 = _mm256_fmadd_ps(v, DINTATTN__LD8_BF16(x[1], i), a1);                                    \
                a2 = _mm256_fmadd_ps(v, DINTATTN__LD8_BF16(x[2], i), a2);                                    \
                a3 = _mm256_fmadd_ps(v, DINTATTN__LD8_BF16(x[3], i), a3);                                    \
            }                                                                                                \
            out[0] = dintattn__hsum8(a0), out[1] = dintattn__hsum8(a1);                                      \
            out[2] = dintattn__hsum8(a2), out[3] = dintattn__hsum8(a3);                                      \
        } else {                                                                                             \
            for (; i + 32 <= n; i += 32) {                                                                   \
                DINTATTN__PF(w, i, 2);                                                                       \
                a0 = _mm256_fmadd_ps(LW(w, i), DINTATTN__LD8_BF16(x[0], i), a0);                             \
                a1 = _mm256_fmadd_ps(LW(w, i + 8), DINTATTN__LD8_BF16(x[0], i + 8), a1);                     \
                a2 = _mm256_fmadd_ps(LW(w, i + 16), DINTATTN__LD8_BF16(x[0], i + 16), a2);                   \
                a3 = _mm256_fmadd_ps(LW(w, i + 24), DINTATTN__LD8_BF16(x[0], i + 24), a3);                   \
            }                                                                                                \
            for (; i + 8 <= n; i += 8) a0 = _mm256_fmadd_ps(LW(w, i), DINTATTN__LD8_BF16(x[0], i), a0);      \
            out[0] = dintattn__hsum8(_mm256_add_ps(_mm256_add_ps(a0, a1), _mm256_add_ps(a2, a3)));           \
        }                                                                                                    \
        for (; i < n; i++)                                                                                   \
            for (j = 0; j < nt; j++) out[j] += dintattn__wb(M, w, i) * dintattn__bf16_to_f32(x[j][i]);       \
    }
DINTATTN__DOTB_AVX2(dintattn__dotb_bf16_avx2, DINTATTN__LD8_BF16)
DINTATTN__DOTB_AVX2(dintattn__dotb_f16w_avx2, dintattn__ld8_f16_as_bf16)
static void dintattn__dotb_avx2(const dintattn__mat *M, size_t r, const uint16_t *const *x, int nt, float *out)
{
    (M->type == DINTATTN__W_F16 ? dintattn__dotb_f16w_avx2 : dintattn__dotb_bf16_avx2)(M, r, x, nt, out);
}

/* n weights of a row from element `at` into f32 dst (prefill's sgemm tiles, embedding rows) */
#define DINTATTN__TO_F32_AVX2(name, LD, ES)                                                                          \
    DINTATTN__AVX2 static void name(const dintattn__mat *M, size_t at, size_t n, float *dst)                     \
    {                                                                                                            \
        const unsigned char *w = (const unsigned char *)M->w + at * (ES);                                        \
        size_t i = 0;                                                                                            \
        for (; i + 32 <= n; i += 32) {                                                                          \
            DINTATTN__PF(w, i, ES);                                                                            \
            _mm256_storeu_ps(dst + i, LD(w, i));                                                                 \
            _mm256_storeu_ps(dst + i + 8, LD(w, i + 8));                                                         \
            _mm256_storeu_ps(dst + i + 16, LD(w, i + 16));                                                       \
            _mm256_storeu_ps(dst + i + 24, LD(w, i + 24));                                                       \
        }                                                                                                        \
        for (; i + 8 <= n; i += 8) _mm256_storeu_ps(dst + i, LD(w, i));                                          \
        for (; i < n; i++) dst[i] = dintattn__w_elem(M, at + i);                                                 \
    }
DINTATTN__TO_F32_AVX2(dintattn__to_f32_bf16_avx2, DINTATTN__LD8_BF16, 2)
DINTATTN__TO_F32_AVX2(dintattn__to_f32_f16_avx2, DINTATTN__LD8_F16, 2)

DINTATTN__AVX2 static void dintattn__i8_to_f32_avx2(const signed char *q, float scale, size_t n, float *dst)
{
    const __m256 vs = _mm256_set1_ps(scale);
    size_t i = 0;
    for (; i + 8 <= n; i += 8) _mm256_storeu_ps(dst + i, _mm256_mul_ps(DINTATTN__LD8_Q8(q, i), vs));
    for (; i < n; i++) dst[i] = scale * (float)q[i];
}

/* Q8 rows: at and n are multiples of 32 (rows are) */
DINTATTN__AVX2 static void dintattn__to_f32_q8_avx2(const dintattn__mat *M, size_t at, size_t n, float *dst)
{
    const signed char *w = (const signed char *)M->w + at;
    size_t i;
    for (i = 0; i < n; i += 8)
        _mm256_storeu_ps(dst + i, _mm256_mul_ps(DINTATTN__LD8_Q8(w, i), _mm256_set1_ps(M->scale[(at + i) / 32])));
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
#define DINTATTN__WIDEN16_BF16(h) _mm512_castsi512_ps(_mm512_slli_epi32(_mm512_cvtepu16_epi32(h), 16)) /* 16 bf16 -> f32 */
#define DINTATTN__LD16_BF16(w, i) DINTATTN__WIDEN16_BF16(_mm256_loadu_si256((const __m256i *)((const uint16_t *)(w) + (i))))
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

/* The same for four tokens' x (rows ldx apart) against one row, read once: each token's sums in
   the order of the one-token kernel above, so its results bit for bit (a short prompt's rows) */
#define DINTATTN__DOT4_AVX512(name, LD, ES)                                                                          \
    DINTATTN__AVX512 static void name(const void *w, const float *x, size_t ldx, size_t n, float *out)           \
    {                                                                                                            \
        const float *x1 = x + ldx, *x2 = x1 + ldx, *x3 = x2 + ldx;                                               \
        __m512 a0 = _mm512_setzero_ps(), a1 = a0, a2 = a0, a3 = a0, b0 = a0, b1 = a0, b2 = a0, b3 = a0;         \
        size_t i;                                                                                                \
        for (i = 0; i + 32 <= n; i += 32) {                                                                      \
            const __m512 w0 = LD(w, i), w1 = LD(w, i + 16);                                                      \
            DINTATTN__PF(w, i, ES);                                                                            \
            a0 = _mm512_fmadd_ps(w0, _mm512_loadu_ps(x + i), a0), b0 = _mm512_fmadd_ps(w1, _mm512_loadu_ps(x + i + 16), b0); \
            a1 = _mm512_fmadd_ps(w0, _mm512_loadu_ps(x1 + i), a1), b1 = _mm512_fmadd_ps(w1, _mm512_loadu_ps(x1 + i + 16), b1); \
            a2 = _mm512_fmadd_ps(w0, _mm512_loadu_ps(x2 + i), a2), b2 = _mm512_fmadd_ps(w1, _mm512_loadu_ps(x2 + i + 16), b2); \
            a3 = _mm512_fmadd_ps(w0, _mm512_loadu_ps(x3 + i), a3), b3 = _mm512_fmadd_ps(w1, _mm512_loadu_ps(x3 + i + 16), b3); \
        }                                                                                                        \
        out[0] = _mm512_reduce_add_ps(_mm512_add_ps(a0, b0)), out[1] = _mm512_reduce_add_ps(_mm512_add_ps(a1, b1)); \
        out[2] = _mm512_reduce_add_ps(_mm512_add_ps(a2, b2)), out[3] = _mm512_reduce_add_ps(_mm512_add_ps(a3, b3)); \
    }
DINTATTN__DOT4_AVX512(dintattn__dot4_f32_avx512, DINTATTN__LD16_F32, 4)
DINTATTN__DOT4_AVX512(dintattn__dot4_bf16_avx512, DINTATTN__LD16_BF16, 2)
DINTATTN__DOT4_AVX512(dintattn__dot4_f16_avx512, DINTATTN__LD16_F16, 2)

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

/* e^x in f32 as Cephes' expf (about 1 ulp): x = k ln 2 + r, |r| <= ln 2 / 2 (ln 2 in two parts),
   a degree-5 polynomial in r (times r^2, plus r + 1), times 2^k; below EXP_LO (where expf leaves
   the normal range) 0. The constants' one home, for the 8- and 16-lane versions. */
#define DINTATTN__EXP_LO -87.33f
#define DINTATTN__EXP_HI 88.37f
#define DINTATTN__EXP_LOG2E 1.44269504088896341f
#define DINTATTN__EXP_LN2_HI 0.693359375f
#define DINTATTN__EXP_LN2_LO -2.12194440e-4f
#define DINTATTN__EXP_P0 1.9875691500e-4f
#define DINTATTN__EXP_P1 1.3981999507e-3f
#define DINTATTN__EXP_P2 8.3334519073e-3f
#define DINTATTN__EXP_P3 4.1665795894e-2f
#define DINTATTN__EXP_P4 1.6666665459e-1f
#define DINTATTN__EXP_P5 5.0000001201e-1f
/* p = exp(x) for k = round(x / ln 2), in vectors of type T with intrinsics prefix V (_mm256 or
   _mm512) and CAST their integer-to-float cast: r = x - k ln 2, the polynomial in r, times 2^k */
#define DINTATTN__EXP_FROM_K(V, T, CAST, x, k, p)                                                            \
    do {                                                                                                     \
        const T r_ = V##_fnmadd_ps(k, V##_set1_ps(DINTATTN__EXP_LN2_LO),                                     \
                                   V##_fnmadd_ps(k, V##_set1_ps(DINTATTN__EXP_LN2_HI), x));                  \
        p = V##_set1_ps(DINTATTN__EXP_P0);                                                                   \
        p = V##_fmadd_ps(p, r_, V##_set1_ps(DINTATTN__EXP_P1));                                              \
        p = V##_fmadd_ps(p, r_, V##_set1_ps(DINTATTN__EXP_P2));                                              \
        p = V##_fmadd_ps(p, r_, V##_set1_ps(DINTATTN__EXP_P3));                                              \
        p = V##_fmadd_ps(p, r_, V##_set1_ps(DINTATTN__EXP_P4));                                              \
        p = V##_fmadd_ps(p, r_, V##_set1_ps(DINTATTN__EXP_P5));                                              \
        p = V##_fmadd_ps(p, V##_mul_ps(r_, r_), V##_add_ps(r_, V##_set1_ps(1.0f)));                          \
        p = V##_mul_ps(p, CAST(V##_slli_epi32(V##_add_epi32(V##_cvtps_epi32(k), V##_set1_epi32(127)), 23))); \
    } while (0)
DINTATTN__AVX2 static __m256 dintattn__exp8(__m256 x)
{
    const __m256 lo = _mm256_set1_ps(DINTATTN__EXP_LO);
    __m256 under = _mm256_cmp_ps(x, lo, _CMP_LT_OQ), k, p;
    x = _mm256_min_ps(_mm256_max_ps(x, lo), _mm256_set1_ps(DINTATTN__EXP_HI));
    k = _mm256_round_ps(_mm256_mul_ps(x, _mm256_set1_ps(DINTATTN__EXP_LOG2E)),
                        _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
    DINTATTN__EXP_FROM_K(_mm256, __m256, _mm256_castsi256_ps, x, k, p);
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

#if defined(__GNUC__) && !defined(__clang__) /* GCC 12's avx512fintrin.h trips these in C++ */
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wuninitialized"
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#endif
/* dintattn__exp8 on 16 lanes, the same numbers lane by lane */
DINTATTN__AVX512 static __m512 dintattn__exp16(__m512 x)
{
    const __m512 lo = _mm512_set1_ps(DINTATTN__EXP_LO);
    const __mmask16 under = _mm512_cmp_ps_mask(x, lo, _CMP_LT_OQ);
    __m512 k, p;
    x = _mm512_min_ps(_mm512_max_ps(x, lo), _mm512_set1_ps(DINTATTN__EXP_HI));
    k = _mm512_roundscale_ps(_mm512_mul_ps(x, _mm512_set1_ps(DINTATTN__EXP_LOG2E)),
                             _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
    DINTATTN__EXP_FROM_K(_mm512, __m512, _mm512_castsi512_ps, x, k, p);
    return _mm512_maskz_mov_ps((__mmask16)~under, p);
}

/* dintattn__softmax_avx2 16 lanes a step (the sum in double, the tail under a mask) */
DINTATTN__AVX512 static void dintattn__softmax_x512(float *x, int n)
{
    __m512 vmx = _mm512_set1_ps(x[0]), vinv;
    __m512d s0 = _mm512_setzero_pd(), s1 = s0;
    float mx;
    int i;
    for (i = 0; i < n; i += 16) vmx = _mm512_max_ps(vmx, _mm512_mask_loadu_ps(vmx, DINTATTN__ROWMASK(n - i), x + i));
    mx = _mm512_reduce_max_ps(vmx);
    vmx = _mm512_set1_ps(mx);
    for (i = 0; i < n; i += 16) {
        const __mmask16 m = DINTATTN__ROWMASK(n - i);
        const __m512 e = _mm512_maskz_mov_ps(m, dintattn__exp16(_mm512_sub_ps(_mm512_maskz_loadu_ps(m, x + i), vmx)));
        _mm512_mask_storeu_ps(x + i, m, e);
        s0 = _mm512_add_pd(s0, _mm512_cvtps_pd(_mm512_castps512_ps256(e)));
        s1 = _mm512_add_pd(s1, _mm512_cvtps_pd(_mm256_castpd_ps(_mm512_extractf64x4_pd(_mm512_castps_pd(e), 1))));
    }
    vinv = _mm512_set1_ps((float)(1.0 / _mm512_reduce_add_pd(_mm512_add_pd(s0, s1))));
    for (i = 0; i < n; i += 16) {
        const __mmask16 m = DINTATTN__ROWMASK(n - i);
        _mm512_mask_storeu_ps(x + i, m, _mm512_mul_ps(_mm512_maskz_loadu_ps(m, x + i), vinv));
    }
}
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic pop
#endif

/* Scores four keys at a time (d a multiple of 8): four dot products share each load of q. */
/* Decode attention streams each head's keys and values from memory (the cache outgrows the caches
   within a few hundred positions): software prefetch DINTATTN__PF_DIST bytes ahead in the keys
   (the next four keys' lines) and 8 rows ahead in the values (the 64 columns a pass reads). At
   context 1900 on bench-dint a decoded token takes 4.36 ms with it against 4.68 without (Q4), and
   6.42 against 7.23 (BF16) (examples/bench --prompt 1900, model from tools/make_model.py --preset
   bench-dint). */
#define DINTATTN__PF_KEYS(k0, d)                                                                               \
    do {                                                                                                     \
        int p_;                                                                                              \
        for (p_ = 0; p_ < 4 * (d); p_ += 16) _mm_prefetch((const char *)((k0) + p_) + DINTATTN__PF_DIST, _MM_HINT_T0); \
    } while (0)
#define DINTATTN__PF_VALUES(v, dv)                                                                             \
    do {                                                                                                     \
        int p_;                                                                                              \
        for (p_ = 0; p_ < 64; p_ += 16) _mm_prefetch((const char *)((v) + p_ + (size_t)8 * (dv)), _MM_HINT_T0); \
    } while (0)
DINTATTN__AVX2 static void dintattn__scores_avx2(float *a, const float *q, const float *K, int nk, int d, float scale)
{
    const __m128 vs = _mm_set1_ps(scale);
    int j = 0, k;
    for (; j + 4 <= nk; j += 4) {
        const float *k0 = K + (size_t)j * d;
        __m256 c0 = _mm256_setzero_ps(), c1 = c0, c2 = c0, c3 = c0, t0, t1;
        __m128 r;
        DINTATTN__PF_KEYS(k0, d);
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

/* dintattn__scores_avx2 for two queries against the same keys, four keys at a time: each block of
   keys is loaded once for both (the same sums as two calls). */
DINTATTN__AVX2 static void dintattn__scores2_avx2(float *a1, float *a2, const float *q1, const float *q2,
                                                  const float *K, int nk, int d, float scale)
{
    const __m128 vs = _mm_set1_ps(scale);
    int j = 0, k;
    for (; j + 4 <= nk; j += 4) {
        const float *k0 = K + (size_t)j * d;
        __m256 c0 = _mm256_setzero_ps(), c1 = c0, c2 = c0, c3 = c0, e0 = c0, e1 = c0, e2 = c0, e3 = c0, t0, t1;
        DINTATTN__PF_KEYS(k0, d);
        for (k = 0; k < d; k += 8) {
            const __m256 x = _mm256_loadu_ps(q1 + k), y = _mm256_loadu_ps(q2 + k);
            const __m256 r0 = _mm256_loadu_ps(k0 + k), r1 = _mm256_loadu_ps(k0 + d + k);
            const __m256 r2 = _mm256_loadu_ps(k0 + 2 * d + k), r3 = _mm256_loadu_ps(k0 + 3 * d + k);
            c0 = _mm256_fmadd_ps(x, r0, c0), c1 = _mm256_fmadd_ps(x, r1, c1);
            c2 = _mm256_fmadd_ps(x, r2, c2), c3 = _mm256_fmadd_ps(x, r3, c3);
            e0 = _mm256_fmadd_ps(y, r0, e0), e1 = _mm256_fmadd_ps(y, r1, e1);
            e2 = _mm256_fmadd_ps(y, r2, e2), e3 = _mm256_fmadd_ps(y, r3, e3);
        }
        t0 = _mm256_hadd_ps(_mm256_hadd_ps(c0, c1), _mm256_hadd_ps(c2, c3));
        t1 = _mm256_hadd_ps(_mm256_hadd_ps(e0, e1), _mm256_hadd_ps(e2, e3));
        _mm_storeu_ps(a1 + j, _mm_mul_ps(_mm_add_ps(_mm256_castps256_ps128(t0), _mm256_extractf128_ps(t0, 1)), vs));
        _mm_storeu_ps(a2 + j, _mm_mul_ps(_mm_add_ps(_mm256_castps256_ps128(t1), _mm256_extractf128_ps(t1, 1)), vs));
    }
    for (; j < nk; j++) {
        a1[j] = dintattn__dot_avx2(q1, K + (size_t)j * d, d) * scale;
        a2[j] = dintattn__dot_avx2(q2, K + (size_t)j * d, d) * scale;
    }
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
            DINTATTN__PF_VALUES(v, dv);
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

/* S += a1 and G = S / nk in double, four at a time. */
DINTATTN__AVX2 static void dintattn__integral_avx2(double *S, const float *a1, int nk, float *G)
{
    const __m256d inv = _mm256_set1_pd(1.0 / nk);
    int j = 0;
    for (; j + 4 <= nk; j += 4) {
        __m256d v = _mm256_add_pd(_mm256_loadu_pd(S + j), _mm256_cvtps_pd(_mm_loadu_ps(a1 + j)));
        _mm256_storeu_pd(S + j, v);
        _mm_storeu_ps(G + j, _mm256_cvtpd_ps(_mm256_mul_pd(v, inv)));
    }
    for (; j < nk; j++) {
        S[j] += a1[j];
        G[j] = (float)(S[j] * (1.0 / nk));
    }
}

/* dintattn__quantize_x on AVX2 (a prompt's int8 activations on the AVX2 level): the same bytes and
   floats, the conversion rounding to nearest even as rintf does; blocks holding NaN or infinity,
   all zeros, or whose reciprocal scale overflows take the scalar code. */
DINTATTN__AVX2 static void dintattn__quantize_x_avx2(const float *x, int n, signed char *q, float *s, float *c)
{
    const __m256 magnitude = _mm256_castsi256_ps(_mm256_set1_epi32(0x7FFFFFFF)), inf = _mm256_set1_ps(INFINITY);
    const __m256i hi = _mm256_set1_epi32(127), lo = _mm256_set1_epi32(-127), order = _mm256_setr_epi32(0, 4, 1, 5, 2, 6, 3, 7);
    int b, k;
    for (b = 0; b < n / 32; b++, x += 32, q += 32) {
        __m256 v[4], a[4], m;
        __m128 h;
        __m256i qi[4], sum;
        float amax, inv;
        int finite = 1;
        for (k = 0; k < 4; k++) {
            v[k] = _mm256_loadu_ps(x + 8 * k), a[k] = _mm256_and_ps(v[k], magnitude);
            finite &= _mm256_movemask_ps(_mm256_cmp_ps(a[k], inf, _CMP_LT_OQ)) == 0xFF;
        }
        m = _mm256_max_ps(_mm256_max_ps(a[0], a[1]), _mm256_max_ps(a[2], a[3]));
        h = _mm_max_ps(_mm256_castps256_ps128(m), _mm256_extractf128_ps(m, 1));
        h = _mm_max_ps(h, _mm_movehl_ps(h, h));
        amax = _mm_cvtss_f32(_mm_max_ss(h, _mm_shuffle_ps(h, h, 1)));
        inv = 127.0f / amax;
        if (!finite || !(amax > 0) || !(inv - inv == 0)) {
            dintattn__quantize_x(x, 32, q, s + b, c + b);
            continue;
        }
        for (k = 0; k < 4; k++)
            qi[k] = _mm256_max_epi32(_mm256_min_epi32(_mm256_cvtps_epi32(_mm256_mul_ps(v[k], _mm256_set1_ps(inv))), hi), lo);
        /* packed to bytes lane by lane, then the four 4-byte groups of each vector put back in order */
        _mm256_storeu_si256((__m256i *)(void *)q,
                            _mm256_permutevar8x32_epi32(_mm256_packs_epi16(_mm256_packs_epi32(qi[0], qi[1]),
                                                                           _mm256_packs_epi32(qi[2], qi[3])), order));
        sum = _mm256_add_epi32(_mm256_add_epi32(qi[0], qi[1]), _mm256_add_epi32(qi[2], qi[3]));
        sum = _mm256_add_epi32(sum, _mm256_shuffle_epi32(sum, 0x4E));
        sum = _mm256_add_epi32(sum, _mm256_shuffle_epi32(sum, 0xB1));
        s[b] = amax / 127.0f;
        c[b] = s[b] * (float)(_mm256_extract_epi32(sum, 0) + _mm256_extract_epi32(sum, 4));
    }
}

/* int8 activations (see dintattn__xq) on 256-bit vectors, a block per vector: per 4 bytes the
   integer dot of unsigned bytes u and signed bytes q, DOT4(u, q) -- Q8: u = |w| and q with w's sign
   (pairs stay below 2^15), Q4: u the nibbles -- as vpmaddubsw then vpmaddwd (AVX2) or one
   vpdpbusd (AVX-VNNI): the same integers, so the same results bit for bit. Two blocks a step into
   two accumulators (and Q4's offset into two sums): with one, each block waits on the previous
   block's FMA, 4 cycles for 16 bytes of Q4, and Q4 decode reads 0.35 of the bandwidth against
   the AVX-512 level's 0.51 (examples/bench --kernels avx2 --weights q4 on an Emerald Rapids Xeon,
   model from tools/make_model.py --preset bench-standard). */
#define DINTATTN__DOTQ_X2_Q8(acc, w, x, sc, i, DOT4)                                                          \
    do {                                                                                                     \
        const __m256i v_ = _mm256_loadu_si256((const __m256i *)(const void *)((w) + (i)));                   \
        const __m256i q_ = _mm256_loadu_si256((const __m256i *)(const void *)((x)->q + (i)));                \
        const __m256i d_ = DOT4(_mm256_sign_epi8(v_, v_), _mm256_sign_epi8(q_, v_));                         \
        acc = _mm256_fmadd_ps(_mm256_cvtepi32_ps(d_), _mm256_set1_ps((sc)[(i) / 32] * (x)->s[(i) / 32]), acc); \
    } while (0)
#define DINTATTN__DOTQ_X2_Q4(acc, corr, w, x, sc, i, DOT4)                                                    \
    do {                                                                                                     \
        const __m128i v_ = _mm_loadu_si128((const __m128i *)(const void *)((w) + (i) / 2));                  \
        const __m256i u_ = _mm256_set_m128i(_mm_and_si128(_mm_srli_epi16(v_, 4), low), _mm_and_si128(v_, low)); \
        const __m256i d_ = DOT4(u_, _mm256_loadu_si256((const __m256i *)(const void *)((x)->q + (i))));       \
        acc = _mm256_fmadd_ps(_mm256_cvtepi32_ps(d_), _mm256_set1_ps((sc)[(i) / 32] * (x)->s[(i) / 32]), acc); \
        corr += (sc)[(i) / 32] * (x)->c[(i) / 32];                                                           \
    } while (0)
#define DINTATTN__DOTQ_X2(q8_name, q4_name, TARGET, DOT4)                                                     \
    TARGET static float q8_name(const dintattn__mat *M, size_t r, const dintattn__xq *x)                      \
    {                                                                                                        \
        const size_t n = (size_t)M->cols;                                                                    \
        const signed char *w = (const signed char *)M->w + r * n;                                            \
        const float *sc = M->scale + r * n / 32;                                                             \
        __m256 a0 = _mm256_setzero_ps(), a1 = a0;                                                            \
        size_t i = 0;                                                                                        \
        for (; i + 64 <= n; i += 64) {                                                                       \
            DINTATTN__PF(w, i, 1);                                                                           \
            DINTATTN__DOTQ_X2_Q8(a0, w, x, sc, i, DOT4);                                                     \
            DINTATTN__DOTQ_X2_Q8(a1, w, x, sc, i + 32, DOT4);                                                \
        }                                                                                                    \
        if (i < n) DINTATTN__DOTQ_X2_Q8(a0, w, x, sc, i, DOT4);                                              \
        return dintattn__hsum8(_mm256_add_ps(a0, a1));                                                       \
    }                                                                                                        \
    TARGET static float q4_name(const dintattn__mat *M, size_t r, const dintattn__xq *x)                      \
    {                                                                                                        \
        const size_t n = (size_t)M->cols;                                                                    \
        const unsigned char *w = (const unsigned char *)M->w + r * n / 2;                                    \
        const float *sc = M->scale + r * n / 32;                                                             \
        const __m128i low = _mm_set1_epi8(15);                                                               \
        __m256 a0 = _mm256_setzero_ps(), a1 = a0;                                                            \
        float c0 = 0, c1 = 0;                                                                                \
        size_t i = 0;                                                                                        \
        for (; i + 64 <= n; i += 64) {                                                                       \
            DINTATTN__PF(w, i / 2, 1);                                                                       \
            DINTATTN__DOTQ_X2_Q4(a0, c0, w, x, sc, i, DOT4);                                                 \
            DINTATTN__DOTQ_X2_Q4(a1, c1, w, x, sc, i + 32, DOT4);                                            \
        }                                                                                                    \
        if (i < n) DINTATTN__DOTQ_X2_Q4(a0, c0, w, x, sc, i, DOT4);                                          \
        return dintattn__hsum8(_mm256_add_ps(a0, a1)) - 8.0f * (c0 + c1);                                   \
    }
#define DINTATTN__DOT4_AVX2(u, q) _mm256_madd_epi16(_mm256_maddubs_epi16((u), (q)), _mm256_set1_epi16(1))
DINTATTN__DOTQ_X2(dintattn__dotq_q8_avx2, dintattn__dotq_q4_avx2, DINTATTN__AVX2, DINTATTN__DOT4_AVX2)

/* AVX-VNNI (the VEX vpdpbusd of Alder Lake and later, Zen 5): GCC 11 and Clang 12 have it */
#if defined(__clang__) ? __clang_major__ >= 12 : __GNUC__ >= 11
#define DINTATTN__HAVE_AVXVNNI 1
#define DINTATTN__DOT4_AVXVNNI(u, q) _mm256_dpbusd_avx_epi32(_mm256_setzero_si256(), (u), (q))
DINTATTN__DOTQ_X2(dintattn__dotq_q8_avxvnni, dintattn__dotq_q4_avxvnni, __attribute__((target("avxvnni,avx2,fma,f16c"))),
                  DINTATTN__DOT4_AVXVNNI)
#endif

/* 1 where the CPU has AVX-VNNI (CPUID leaf 7, subleaf 1: EAX bit 4), found once */
static int dintattn__cpu_avxvnni(void)
{
    static int known = -1; /* every thread that asks first finds the same answer */
    int v = __atomic_load_n(&known, __ATOMIC_RELAXED);
    unsigned a = 0, b, c, d;
    if (v < 0) {
        v = __get_cpuid_count(7, 1, &a, &b, &c, &d) && (a >> 4) & 1;
        __atomic_store_n(&known, v, __ATOMIC_RELAXED);
    }
    return v;
}

/* The AVX2 level's int8-activation rows: AVX-VNNI's where the CPU has it (the same numbers) */
static float dintattn__dotq_q8_x2(const dintattn__mat *M, size_t r, const dintattn__xq *x)
{
#ifdef DINTATTN__HAVE_AVXVNNI
    if (dintattn__cpu_avxvnni()) return dintattn__dotq_q8_avxvnni(M, r, x);
#endif
    return dintattn__dotq_q8_avx2(M, r, x);
}

static float dintattn__dotq_q4_x2(const dintattn__mat *M, size_t r, const dintattn__xq *x)
{
#ifdef DINTATTN__HAVE_AVXVNNI
    if (dintattn__cpu_avxvnni()) return dintattn__dotq_q4_avxvnni(M, r, x);
#endif
    return dintattn__dotq_q4_avx2(M, r, x);
}

/* dintattn__pack_q on AVX2 (the AVX2 level's packing; the same words): per block, 8 rows at a time
   (their 32 bytes, Q4's nibbles spread to signed bytes as there) transposed as 8 x 8 words, so
   that word g of the 8 rows is one store; each row's sum from the transposed words by vpmaddubsw
   against ones. Rows past the matrix take the C code. */
DINTATTN__AVX2 static void dintattn__pack_q_avx2(const dintattn__mat *M, int r0, void *panel)
{
    const size_t nb = (size_t)M->cols / 32;
    const int q4 = M->type == DINTATTN__W_Q4;
    const __m256i ones8 = _mm256_set1_epi8(1), ones16 = _mm256_set1_epi16(1), low = _mm256_set1_epi8(15),
                  eight = _mm256_set1_epi8(8);
    int32_t *o = (int32_t *)panel;
    size_t b;
    int i0, i, g;
    if (r0 + DINTATTN__PANEL > M->rows) {
        dintattn__pack_q(M, r0, panel);
        return;
    }
    for (b = 0; b < nb; b++, o += DINTATTN__GQ_PANEL_BLOCK)
        for (i0 = 0; i0 < DINTATTN__PANEL; i0 += 8) {
            __m256i v[8], t[8], u[8], sum = _mm256_setzero_si256();
            for (i = 0; i < 8; i++) {
                const size_t at = ((size_t)r0 + (size_t)(i0 + i)) * nb + b; /* the row's block b */
                if (q4) {
                    const __m128i x = _mm_loadu_si128((const __m128i *)(const void *)((const unsigned char *)M->w + 16 * at));
                    const __m256i xx = _mm256_set_m128i(_mm_srli_epi16(x, 4), x);
                    v[i] = _mm256_sub_epi8(_mm256_and_si256(xx, low), eight);
                } else {
                    v[i] = _mm256_loadu_si256((const __m256i *)(const void *)((const signed char *)M->w + 32 * at));
                }
                memcpy(o + 256 + i0 + i, M->scale + at, sizeof(float));
            }
            for (i = 0; i < 8; i += 2)
                t[i] = _mm256_unpacklo_epi32(v[i], v[i + 1]), t[i + 1] = _mm256_unpackhi_epi32(v[i], v[i + 1]);
            for (i = 0; i < 8; i += 4) {
                u[i] = _mm256_unpacklo_epi64(t[i], t[i + 2]), u[i + 1] = _mm256_unpackhi_epi64(t[i], t[i + 2]);
                u[i + 2] = _mm256_unpacklo_epi64(t[i + 1], t[i + 3]), u[i + 3] = _mm256_unpackhi_epi64(t[i + 1], t[i + 3]);
            }
            for (g = 0; g < 4; g++) /* u[g]: words g (low lanes) and g + 4 of rows 0-3; u[g + 4] of rows 4-7 */
                v[g] = _mm256_permute2x128_si256(u[g], u[g + 4], 0x20), v[g + 4] = _mm256_permute2x128_si256(u[g], u[g + 4], 0x31);
            for (g = 0; g < 8; g++) {
                _mm256_storeu_si256((__m256i *)(void *)(o + 32 * g + i0), v[g]);
                sum = _mm256_add_epi32(sum, _mm256_madd_epi16(_mm256_maddubs_epi16(ones8, v[g]), ones16));
            }
            _mm256_storeu_si256((__m256i *)(void *)(o + 288 + i0), _mm256_slli_epi32(_mm256_sub_epi32(_mm256_setzero_si256(), sum), 7));
        }
}

/* The AVX2 level's int8 panels (prefill; packed by dintattn__pack_q) against DINTATTN__GQ_NT tokens,
   the same integer dots as the AVX-512 kernel scaled the same way, so the same floats bit for bit.
   With AVX-VNNI's vpdpbusd, as on AVX-512: the unsigned bytes q + 128 times the signed weights,
   from the rows' offsets; 16 rows at a time, 12 integer sums, whose f32 sums wait in `out`
   between blocks, the 8 groups of 4 columns unrolled. Plain AVX2 has no unsigned-by-signed dot
   that cannot saturate, so each block's tokens are made signed again (q) and take each weight's
   sign, times |w| by vpmaddubsw (a pair at most 2 x 128 x 127 < 2^15, since q >= -127) and then
   vpmaddwd, from zero; 8 rows at a time, whose 6 integer and 6 f32 sums and the weights fill the
   16 registers, the groups in a loop: unrolled, GCC regroups the additions and spills the
   sums. In a microbenchmark of the kernels alone (one thread of an Emerald Rapids Xeon, a panel
   of 1024 columns against 96 tokens), AVX-VNNI 8 rows x 6 tokens in a loop runs 52 GMAC/s, 16
   rows in a loop 48 (GCC stores the 12 sums every group), 16 rows unrolled 117, where the
   AVX-512 kernel runs 231; plain AVX2 Q8 46, and on a Q4 panel Q4's kernel (below) 1.5-1.6x the
   Q8 kernel. */
#define DINTATTN__GQ_X2_SCALE(t)                                                                             \
    f##t = _mm256_fmadd_ps(_mm256_cvtepi32_ps(i##t),                                                         \
                           _mm256_mul_ps(s_, _mm256_set1_ps(((const float *)xb)[8 * DINTATTN__GQ_NT + (t)])), f##t)
#define DINTATTN__GQ_PLAIN_STEP(t, Q4)                                                                       \
    i##t = (Q4) ? _mm256_add_epi16(i##t, _mm256_maddubs_epi16(_mm256_set1_epi32(xg[t]), w_))                 \
                : _mm256_add_epi32(i##t, _mm256_madd_epi16(_mm256_maddubs_epi16(a_, _mm256_sign_epi8(_mm256_set1_epi32(xg[t]), w_)), \
                                                           _mm256_set1_epi16(1)))
#define DINTATTN__GQ_Q4_WIDEN(t) i##t = _mm256_add_epi32(c_, _mm256_madd_epi16(i##t, _mm256_set1_epi16(1)))
/* Plain AVX2 on a Q4 panel (Q4 1): its weights (nibble - 8) are small enough for vpmaddubsw to take
   the tokens' unsigned bytes as they are (a pair at most 2 x 255 x 8 = 4080), and a block's 8
   groups sum in 16 bits (at most 32640), widened once a block by vpmaddwd onto the rows' offsets,
   as vpdpbusd sums them: the same integer dots, two instructions a step where Q8 takes four. */
#define DINTATTN__GQ_X2_PLAIN(name, Q4)                                                                       \
    DINTATTN__AVX2 static void name(const void *panel, int cols, const void *xblk, float *out)               \
    {                                                                                                        \
        int32_t sx[8 * DINTATTN__GQ_NT]; /* Q8: a block's tokens as signed bytes */                          \
        int j, b, l, g;                                                                                      \
        DINTATTN_ASSERT(DINTATTN__GQ_NT == 6);                                                               \
        for (j = 0; j < 4; j++) {                                                                            \
            const int32_t *p = (const int32_t *)panel + 8 * j, *xb = (const int32_t *)xblk;                  \
            __m256 f0 = _mm256_setzero_ps(), f1 = f0, f2 = f0, f3 = f0, f4 = f0, f5 = f0;                     \
            for (b = 0; b < cols / 32; b++, p += DINTATTN__GQ_PANEL_BLOCK, xb += DINTATTN__GQ_X_BLOCK) {     \
                const __m256 s_ = _mm256_loadu_ps((const float *)p + 256);                                   \
                const int32_t *xs = xb;                                                                      \
                __m256i i0 = _mm256_setzero_si256(), i1 = i0, i2 = i0, i3 = i0, i4 = i0, i5 = i0;             \
                if (!(Q4)) {                                                                                 \
                    for (l = 0; l < 8 * DINTATTN__GQ_NT; l += 8)                                             \
                        _mm256_storeu_si256((__m256i *)(void *)(sx + l),                                     \
                                            _mm256_xor_si256(_mm256_loadu_si256((const __m256i *)(const void *)(xb + l)), \
                                                             _mm256_set1_epi8((char)0x80)));                 \
                    xs = sx;                                                                                 \
                }                                                                                            \
                for (g = 0; g < 8; g++) {                                                                    \
                    const __m256i w_ = _mm256_loadu_si256((const __m256i *)(const void *)(p + 32 * g));      \
                    const __m256i a_ = (Q4) ? w_ : _mm256_sign_epi8(w_, w_);                                 \
                    const int32_t *xg = xs + DINTATTN__GQ_NT * g;                                            \
                    DINTATTN__GQ_PLAIN_STEP(0, Q4), DINTATTN__GQ_PLAIN_STEP(1, Q4), DINTATTN__GQ_PLAIN_STEP(2, Q4); \
                    DINTATTN__GQ_PLAIN_STEP(3, Q4), DINTATTN__GQ_PLAIN_STEP(4, Q4), DINTATTN__GQ_PLAIN_STEP(5, Q4); \
                }                                                                                            \
                if (Q4) {                                                                                    \
                    const __m256i c_ = _mm256_loadu_si256((const __m256i *)(const void *)(p + 288));         \
                    DINTATTN__GQ_Q4_WIDEN(0), DINTATTN__GQ_Q4_WIDEN(1), DINTATTN__GQ_Q4_WIDEN(2);             \
                    DINTATTN__GQ_Q4_WIDEN(3), DINTATTN__GQ_Q4_WIDEN(4), DINTATTN__GQ_Q4_WIDEN(5);             \
                }                                                                                            \
                DINTATTN__GQ_X2_SCALE(0), DINTATTN__GQ_X2_SCALE(1), DINTATTN__GQ_X2_SCALE(2);                 \
                DINTATTN__GQ_X2_SCALE(3), DINTATTN__GQ_X2_SCALE(4), DINTATTN__GQ_X2_SCALE(5);                 \
            }                                                                                                \
            _mm256_storeu_ps(out + 8 * j, f0), _mm256_storeu_ps(out + 32 + 8 * j, f1);                       \
            _mm256_storeu_ps(out + 64 + 8 * j, f2), _mm256_storeu_ps(out + 96 + 8 * j, f3);                  \
            _mm256_storeu_ps(out + 128 + 8 * j, f4), _mm256_storeu_ps(out + 160 + 8 * j, f5);                \
        }                                                                                                    \
    }
DINTATTN__GQ_X2_PLAIN(dintattn__panel_q8_avx2, 0)
DINTATTN__GQ_X2_PLAIN(dintattn__panel_q4_avx2, 1)

/* The AVX-VNNI kernel's body, DPBUSD the 256-bit vpdpbusd (the tests run it on AVX-512 VNNI's
   encoding too) */
#define DINTATTN__GQ_X2_TOKEN(t, DPBUSD)                                                                     \
    do {                                                                                                     \
        const __m256i x_ = _mm256_set1_epi32(xg[t]);                                                         \
        i0##t = DPBUSD(i0##t, x_, w0), i1##t = DPBUSD(i1##t, x_, w1);                                        \
    } while (0)
#define DINTATTN__GQ_X2_GROUP(g, DPBUSD)                                                                     \
    do {                                                                                                     \
        const __m256i w0 = _mm256_loadu_si256((const __m256i *)(const void *)(p + 32 * (g)));               \
        const __m256i w1 = _mm256_loadu_si256((const __m256i *)(const void *)(p + 32 * (g) + 8));           \
        const int32_t *xg = xb + DINTATTN__GQ_NT * (g);                                                      \
        DINTATTN__GQ_X2_TOKEN(0, DPBUSD); DINTATTN__GQ_X2_TOKEN(1, DPBUSD); DINTATTN__GQ_X2_TOKEN(2, DPBUSD); \
        DINTATTN__GQ_X2_TOKEN(3, DPBUSD); DINTATTN__GQ_X2_TOKEN(4, DPBUSD); DINTATTN__GQ_X2_TOKEN(5, DPBUSD); \
    } while (0)
#define DINTATTN__GQ_X2_SCALE2(t)                                                                            \
    do {                                                                                                     \
        float *o_ = out + 32 * (t) + 16 * j;                                                                 \
        const __m256 d_ = _mm256_set1_ps(((const float *)xb)[8 * DINTATTN__GQ_NT + (t)]);                    \
        _mm256_storeu_ps(o_, _mm256_fmadd_ps(_mm256_cvtepi32_ps(i0##t), _mm256_mul_ps(s0, d_), _mm256_loadu_ps(o_))); \
        _mm256_storeu_ps(o_ + 8, _mm256_fmadd_ps(_mm256_cvtepi32_ps(i1##t), _mm256_mul_ps(s1, d_), _mm256_loadu_ps(o_ + 8))); \
    } while (0)
#define DINTATTN__GQ_X2_VNNI(name, TARGET, DPBUSD)                                                            \
    TARGET static void name(const void *panel, int cols, const void *xblk, float *out)                       \
    {                                                                                                        \
        int j, b;                                                                                            \
        DINTATTN_ASSERT(DINTATTN__GQ_NT == 6);                                                               \
        memset(out, 0, sizeof(float) * DINTATTN__PANEL * DINTATTN__GQ_NT);                                   \
        for (j = 0; j < 2; j++) {                                                                            \
            const int32_t *p = (const int32_t *)panel + 16 * j, *xb = (const int32_t *)xblk;                 \
            for (b = 0; b < cols / 32; b++, p += DINTATTN__GQ_PANEL_BLOCK, xb += DINTATTN__GQ_X_BLOCK) {     \
                const __m256i c0 = _mm256_loadu_si256((const __m256i *)(const void *)(p + 288));             \
                const __m256i c1 = _mm256_loadu_si256((const __m256i *)(const void *)(p + 296));             \
                __m256i i00 = c0, i01 = c0, i02 = c0, i03 = c0, i04 = c0, i05 = c0;                           \
                __m256i i10 = c1, i11 = c1, i12 = c1, i13 = c1, i14 = c1, i15 = c1;                           \
                __m256 s0, s1;                                                                               \
                DINTATTN__GQ_X2_GROUP(0, DPBUSD); DINTATTN__GQ_X2_GROUP(1, DPBUSD);                          \
                DINTATTN__GQ_X2_GROUP(2, DPBUSD); DINTATTN__GQ_X2_GROUP(3, DPBUSD);                          \
                DINTATTN__GQ_X2_GROUP(4, DPBUSD); DINTATTN__GQ_X2_GROUP(5, DPBUSD);                          \
                DINTATTN__GQ_X2_GROUP(6, DPBUSD); DINTATTN__GQ_X2_GROUP(7, DPBUSD);                          \
                s0 = _mm256_loadu_ps((const float *)p + 256), s1 = _mm256_loadu_ps((const float *)p + 264);  \
                DINTATTN__GQ_X2_SCALE2(0); DINTATTN__GQ_X2_SCALE2(1); DINTATTN__GQ_X2_SCALE2(2);             \
                DINTATTN__GQ_X2_SCALE2(3); DINTATTN__GQ_X2_SCALE2(4); DINTATTN__GQ_X2_SCALE2(5);             \
            }                                                                                                \
        }                                                                                                    \
    }
#ifdef DINTATTN__HAVE_AVXVNNI
DINTATTN__GQ_X2_VNNI(dintattn__panel_q_avxvnni, __attribute__((target("avxvnni,avx2,fma,f16c"))), _mm256_dpbusd_avx_epi32)
#endif

/* The AVX2 level's int8 panels: AVX-VNNI's where the CPU has it (the same numbers) */
static void dintattn__panel_q8_x2(const void *panel, int cols, const void *xblk, float *out)
{
#ifdef DINTATTN__HAVE_AVXVNNI
    if (dintattn__cpu_avxvnni()) {
        dintattn__panel_q_avxvnni(panel, cols, xblk, out);
        return;
    }
#endif
    dintattn__panel_q8_avx2(panel, cols, xblk, out);
}

static void dintattn__panel_q4_x2(const void *panel, int cols, const void *xblk, float *out)
{
#ifdef DINTATTN__HAVE_AVXVNNI
    if (dintattn__cpu_avxvnni()) {
        dintattn__panel_q_avxvnni(panel, cols, xblk, out);
        return;
    }
#endif
    dintattn__panel_q4_avx2(panel, cols, xblk, out);
}

#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic push /* GCC 12's AVX-512 intrinsics, in C++: "__Y may be used uninitialized" */
#pragma GCC diagnostic ignored "-Wuninitialized"
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#endif
/* AVX-512 VNNI. A 512-bit vector holds two blocks (lanes 0-7 the first, 8-15 the second):
   vpdpbusd sums them into int32 lanes, which are scaled by w_scale * d of their block and summed
   in f32. DINTATTN__VNNI_ROW runs a row against NT tokens at once (1 in decode, 4 in prefill):
   PAIR gives a pair's weights as unsigned bytes (an odd last block through masked loads), OFF
   is what that added to them. */
#define DINTATTN__VNNI __attribute__((target("avx512f,avx512bw,avx512vl,avx512vnni,avx2,fma,f16c")))

/* Q8: a pair of blocks is 64 bytes, made unsigned by flipping the top bit (w + 128) */
DINTATTN__VNNI static __m512i dintattn__q8_pair(const unsigned char *w, __mmask64 m)
{
    return _mm512_xor_si512(_mm512_maskz_loadu_epi8(m, w), _mm512_set1_epi8((char)0x80));
}

/* Q4: a pair of blocks is 32 bytes -> low and high nibbles -> [lo0 hi0 lo1 hi1] in 128-bit
   lanes: element order */
DINTATTN__VNNI static __m512i dintattn__q4_pair(const unsigned char *w, __mmask32 m)
{
    const __m256i v = _mm256_maskz_loadu_epi8(m, w), low = _mm256_set1_epi8(15);
    const __m512i z = _mm512_inserti64x4(_mm512_castsi256_si512(_mm256_and_si256(v, low)),
                                         _mm256_and_si256(_mm256_srli_epi16(v, 4), low), 1);
    return _mm512_shuffle_i64x2(z, z, _MM_SHUFFLE(3, 1, 2, 0));
}

/* Two blocks' floats p[0], p[1] (m = 3), or one (m = 1; the other lanes 0), each over its 8 lanes */
DINTATTN__VNNI static __m512 dintattn__vnni_lanes(__m128 v)
{
    return _mm512_permutexvar_ps(_mm512_set_epi32(1, 1, 1, 1, 1, 1, 1, 1, 0, 0, 0, 0, 0, 0, 0, 0), _mm512_castps128_ps512(v));
}
#define DINTATTN__VNNI_LD2(p, m) ((m) == 3 ? _mm_castsi128_ps(_mm_loadl_epi64((const __m128i *)(const void *)(p))) : _mm_load_ss(p))

/* w_scale * d of two blocks (m = 3), or one (m = 1), each over its 8 lanes */
DINTATTN__VNNI static __m512 dintattn__vnni_scales(const float *sw, const float *sx, int m)
{
    return dintattn__vnni_lanes(_mm_mul_ps(DINTATTN__VNNI_LD2(sw, m), DINTATTN__VNNI_LD2(sx, m)));
}

/* sum over nb blocks of w_scale * c: what the offset added, over OFF */
DINTATTN__VNNI static float dintattn__vnni_offset(const float *sw, const float *c, size_t nb)
{
    __m512 a = _mm512_setzero_ps();
    size_t b = 0;
    for (; b + 16 <= nb; b += 16) a = _mm512_fmadd_ps(_mm512_loadu_ps(sw + b), _mm512_loadu_ps(c + b), a);
    if (b < nb) {
        const __mmask16 m = (__mmask16)((1u << (nb - b)) - 1);
        a = _mm512_fmadd_ps(_mm512_maskz_loadu_ps(m, sw + b), _mm512_maskz_loadu_ps(m, c + b), a);
    }
    return _mm512_reduce_add_ps(a);
}

/* dintattn__quantize_x in AVX-512, the same numbers: x * (127 / max|x|) in f32, rounded to
   nearest even (the default rounding of both rintf and vcvtps2dq). A block holding NaN or infinity,
   or too small for 127 / max|x|, goes to the scalar code. */
DINTATTN__VNNI static void dintattn__quantize_x_avx512(const float *x, int n, signed char *q, float *s, float *c)
{
    const __m512 inf = _mm512_set1_ps(INFINITY);
    const __m512i hi = _mm512_set1_epi32(127), lo = _mm512_set1_epi32(-127);
    int b;
    for (b = 0; b < n / 32; b++, x += 32, q += 32) {
        const __m512 x0 = _mm512_loadu_ps(x), x1 = _mm512_loadu_ps(x + 16);
        const __m512 a0 = _mm512_abs_ps(x0), a1 = _mm512_abs_ps(x1);
        const float amax = _mm512_reduce_max_ps(_mm512_max_ps(a0, a1)), inv = 127.0f / amax;
        __m512i q0, q1;
        if ((_mm512_cmp_ps_mask(a0, inf, _CMP_LT_OQ) & _mm512_cmp_ps_mask(a1, inf, _CMP_LT_OQ)) != 0xFFFF ||
            !(amax > 0) || !(inv - inv == 0)) {
            dintattn__quantize_x(x, 32, q, s + b, c + b);
            continue;
        }
        q0 = _mm512_max_epi32(_mm512_min_epi32(_mm512_cvtps_epi32(_mm512_mul_ps(x0, _mm512_set1_ps(inv))), hi), lo);
        q1 = _mm512_max_epi32(_mm512_min_epi32(_mm512_cvtps_epi32(_mm512_mul_ps(x1, _mm512_set1_ps(inv))), hi), lo);
        _mm_storeu_si128((__m128i *)(void *)q, _mm512_cvtepi32_epi8(q0));
        _mm_storeu_si128((__m128i *)(void *)(q + 16), _mm512_cvtepi32_epi8(q1));
        s[b] = amax / 127.0f;
        c[b] = s[b] * (float)_mm512_reduce_add_epi32(_mm512_add_epi32(q0, q1));
    }
}

/* dintattn__quantize_w on AVX-512: the same bytes and scales (the same products, rounded to
   nearest even by the conversion as rintf does, clamped alike); blocks holding NaN or infinity,
   all zeros, or whose reciprocal scale overflows take the scalar code. Q4's m is the first element
   of largest magnitude, as there. */
DINTATTN__VNNI static void dintattn__quantize_w_avx512(const float *v, size_t n, int bits, void *q, float *sc)
{
    const __m512 inf = _mm512_set1_ps(INFINITY);
    size_t b;
    for (b = 0; b < n / 32; b++, v += 32) {
        const __m512 x0 = _mm512_loadu_ps(v), x1 = _mm512_loadu_ps(v + 16);
        const __m512 a0 = _mm512_abs_ps(x0), a1 = _mm512_abs_ps(x1);
        const float amax = _mm512_reduce_max_ps(_mm512_max_ps(a0, a1));
        const int finite = (_mm512_cmp_ps_mask(a0, inf, _CMP_LT_OQ) & _mm512_cmp_ps_mask(a1, inf, _CMP_LT_OQ)) == 0xFFFF;
        if (bits == 8) {
            const float inv = 127.0f / amax;
            const __m512i hi = _mm512_set1_epi32(127), lo = _mm512_set1_epi32(-127);
            signed char *o = (signed char *)q + 32 * b;
            if (!finite || !(amax > 0) || !(inv - inv == 0)) {
                dintattn__quantize_row(v, 32, o, sc + b);
                continue;
            }
            _mm_storeu_si128((__m128i *)(void *)o, _mm512_cvtepi32_epi8(_mm512_max_epi32(
                _mm512_min_epi32(_mm512_cvtps_epi32(_mm512_mul_ps(x0, _mm512_set1_ps(inv))), hi), lo)));
            _mm_storeu_si128((__m128i *)(void *)(o + 16), _mm512_cvtepi32_epi8(_mm512_max_epi32(
                _mm512_min_epi32(_mm512_cvtps_epi32(_mm512_mul_ps(x1, _mm512_set1_ps(inv))), hi), lo)));
            sc[b] = amax / 127.0f;
        } else {
            const __m512 am = _mm512_set1_ps(amax);
            const unsigned at = (unsigned)_mm512_cmp_ps_mask(a1, am, _CMP_EQ_OQ) << 16 | _mm512_cmp_ps_mask(a0, am, _CMP_EQ_OQ);
            const float m = finite && amax > 0 ? v[__builtin_ctz(at)] : 0.0f, inv = -8.0f / m;
            const __m512i hi = _mm512_set1_epi32(7), lo = _mm512_set1_epi32(-8), eight = _mm512_set1_epi32(8);
            unsigned char *o = (unsigned char *)q + 16 * b;
            __m512i n0, n1;
            if (!finite || !(amax > 0) || !(inv - inv == 0)) {
                dintattn__quantize_block4(v, o, sc + b);
                continue;
            }
            n0 = _mm512_max_epi32(_mm512_min_epi32(_mm512_cvtps_epi32(_mm512_mul_ps(x0, _mm512_set1_ps(inv))), hi), lo);
            n1 = _mm512_max_epi32(_mm512_min_epi32(_mm512_cvtps_epi32(_mm512_mul_ps(x1, _mm512_set1_ps(inv))), hi), lo);
            n0 = _mm512_add_epi32(n0, eight), n1 = _mm512_add_epi32(n1, eight);
            _mm_storeu_si128((__m128i *)(void *)o, _mm512_cvtepi32_epi8(_mm512_or_si512(n0, _mm512_slli_epi32(n1, 4))));
            sc[b] = m / -8.0f;
        }
    }
}

/* acc += token X's dot with the pair u, scaled (m: the pair's scales in use, 3 or 1) */
#define DINTATTN__VNNI_TOKEN(acc, X, u, b, QLOAD, m)                                                            \
    acc = _mm512_fmadd_ps(_mm512_cvtepi32_ps(_mm512_dpbusd_epi32(_mm512_setzero_si512(), (u), QLOAD((X).q + 32 * (b)))), \
                          dintattn__vnni_scales(sw + (b), (X).s + (b), (m)), acc)
#define DINTATTN__VNNI_Q(p) _mm512_loadu_si512(p)
#define DINTATTN__VNNI_Q_HALF(p) _mm512_maskz_loadu_epi8(0xFFFFFFFFu, (p))

/* NT (1 or 4) tokens: the accumulators a0..a3 stay in registers (an array would not) */
#define DINTATTN__VNNI_ROW(name, NT, PAIR, PAIR_BYTES, OFF)                                                     \
    DINTATTN__VNNI static void name(const dintattn__mat *M, size_t r, const dintattn__xq *x, float *out)      \
    {                                                                                                        \
        const size_t nb = (size_t)M->cols / 32;                                                              \
        const unsigned char *w = (const unsigned char *)M->w + r * nb * (PAIR_BYTES) / 2;                    \
        const float *sw = M->scale + r * nb;                                                                 \
        __m512 a0 = _mm512_setzero_ps(), a1 = a0, a2 = a0, a3 = a0;                                          \
        size_t b = 0;                                                                                        \
        for (; b + 2 <= nb; b += 2, w += (PAIR_BYTES)) {                                                     \
            const __m512i u = PAIR(w, ~0);                                                                   \
            if ((NT) == 1) { /* the weights, and their scales as far ahead in time: 1/8 the bytes */         \
                DINTATTN__PF(w, 0, 1);                                                                       \
                _mm_prefetch((const char *)(sw + b) + DINTATTN__PF_DIST / 8, _MM_HINT_T0);                   \
            }                                                                                                \
            DINTATTN__VNNI_TOKEN(a0, x[0], u, b, DINTATTN__VNNI_Q, 3);                                       \
            if ((NT) == 4) {                                                                                 \
                DINTATTN__VNNI_TOKEN(a1, x[1], u, b, DINTATTN__VNNI_Q, 3);                                   \
                DINTATTN__VNNI_TOKEN(a2, x[2], u, b, DINTATTN__VNNI_Q, 3);                                   \
                DINTATTN__VNNI_TOKEN(a3, x[3], u, b, DINTATTN__VNNI_Q, 3);                                   \
            }                                                                                                \
        }                                                                                                    \
        if (b < nb) { /* one block left */                                                                   \
            const __m512i u = PAIR(w, (PAIR_BYTES) == 64 ? 0xFFFFFFFFu : 0xFFFFu);                           \
            DINTATTN__VNNI_TOKEN(a0, x[0], u, b, DINTATTN__VNNI_Q_HALF, 1);                                  \
            if ((NT) == 4) {                                                                                 \
                DINTATTN__VNNI_TOKEN(a1, x[1], u, b, DINTATTN__VNNI_Q_HALF, 1);                              \
                DINTATTN__VNNI_TOKEN(a2, x[2], u, b, DINTATTN__VNNI_Q_HALF, 1);                              \
                DINTATTN__VNNI_TOKEN(a3, x[3], u, b, DINTATTN__VNNI_Q_HALF, 1);                              \
            }                                                                                                \
        }                                                                                                    \
        out[0] = _mm512_reduce_add_ps(a0) - (OFF) * dintattn__vnni_offset(sw, x[0].c, nb);                   \
        if ((NT) == 4) {                                                                                     \
            out[1] = _mm512_reduce_add_ps(a1) - (OFF) * dintattn__vnni_offset(sw, x[1].c, nb);               \
            out[2] = _mm512_reduce_add_ps(a2) - (OFF) * dintattn__vnni_offset(sw, x[2].c, nb);               \
            out[3] = _mm512_reduce_add_ps(a3) - (OFF) * dintattn__vnni_offset(sw, x[3].c, nb);               \
        }                                                                                                    \
    }
/* Four rows r..r+3 against four tokens (prefill): 16 accumulators, each pair of blocks of the
   four rows loaded once for the four tokens and each token's once for the four rows (the row
   kernel above loads a token's activations for every row). Per pair and (row, token): the
   integer dot, to f32, times the token's d less OFF / 8 of its c in each of the block's 8 lanes
   (the offset, taken off here rather than once per row and token after the loop), times the
   row's scale into the accumulator. out[4 i + j] is row r + i against token j. */
#define DINTATTN__VNNI_STEP(acc, U, Q, D, C, S) acc = _mm512_fmadd_ps(_mm512_fmsub_ps(_mm512_cvtepi32_ps(_mm512_dpbusd_epi32(_mm512_setzero_si512(), (U), (Q))), (D), (C)), (S), acc)
#define DINTATTN__VNNI_STEP4(a0, a1, a2, a3, Q, D, C) \
    DINTATTN__VNNI_STEP(a0, u0, Q, D, C, s0), DINTATTN__VNNI_STEP(a1, u1, Q, D, C, s1), \
    DINTATTN__VNNI_STEP(a2, u2, Q, D, C, s2), DINTATTN__VNNI_STEP(a3, u3, Q, D, C, s3)
/* One token X of the pair of blocks at b (m: 3 or 1) against the tile's four rows u0..u3 */
#define DINTATTN__VNNI_TOKEN4(X, a0, a1, a2, a3)                                                               \
    do {                                                                                                     \
        const __m512i q_ = m == 3 ? DINTATTN__VNNI_Q((X).q + 32 * b) : DINTATTN__VNNI_Q_HALF((X).q + 32 * b); \
        const __m512 d_ = dintattn__vnni_lanes(DINTATTN__VNNI_LD2((X).s + b, m));                           \
        const __m512 c_ = _mm512_mul_ps(dintattn__vnni_lanes(DINTATTN__VNNI_LD2((X).c + b, m)), off8);      \
        DINTATTN__VNNI_STEP4(a0, a1, a2, a3, q_, d_, c_);                                                    \
    } while (0)
/* A 4 x 4 tile's accumulators a00..a33 (a{row}{token}) summed into out[4 row + token] */
#define DINTATTN__TILE_OUT(out)                                                                                \
    do {                                                                                                     \
        (out)[0] = _mm512_reduce_add_ps(a00), (out)[1] = _mm512_reduce_add_ps(a01);                          \
        (out)[2] = _mm512_reduce_add_ps(a02), (out)[3] = _mm512_reduce_add_ps(a03);                          \
        (out)[4] = _mm512_reduce_add_ps(a10), (out)[5] = _mm512_reduce_add_ps(a11);                          \
        (out)[6] = _mm512_reduce_add_ps(a12), (out)[7] = _mm512_reduce_add_ps(a13);                          \
        (out)[8] = _mm512_reduce_add_ps(a20), (out)[9] = _mm512_reduce_add_ps(a21);                          \
        (out)[10] = _mm512_reduce_add_ps(a22), (out)[11] = _mm512_reduce_add_ps(a23);                        \
        (out)[12] = _mm512_reduce_add_ps(a30), (out)[13] = _mm512_reduce_add_ps(a31);                        \
        (out)[14] = _mm512_reduce_add_ps(a32), (out)[15] = _mm512_reduce_add_ps(a33);                        \
    } while (0)
#define DINTATTN__VNNI_TILE(name, PAIR, PAIR_BYTES, OFF)                                                        \
    DINTATTN__VNNI static void name(const dintattn__mat *M, size_t r, const dintattn__xq *x, float *out)      \
    {                                                                                                        \
        const size_t nb = (size_t)M->cols / 32, rb = nb * (PAIR_BYTES) / 2;                                  \
        const unsigned char *w = (const unsigned char *)M->w + r * rb;                                       \
        const float *sw = M->scale + r * nb;                                                                 \
        __m512 a00 = _mm512_setzero_ps(), a01 = a00, a02 = a00, a03 = a00, a10 = a00, a11 = a00, a12 = a00;  \
        __m512 a13 = a00, a20 = a00, a21 = a00, a22 = a00, a23 = a00, a30 = a00, a31 = a00, a32 = a00;       \
        __m512 a33 = a00;                                                                                    \
        const __m512 off8 = _mm512_set1_ps((OFF) / 8);                                                       \
        size_t b;                                                                                            \
        for (b = 0; b < nb; b += 2, w += (PAIR_BYTES)) {                                                     \
            const int m = b + 2 <= nb ? 3 : 1; /* a pair, or the odd last block */                          \
            const __m512i u0 = m == 3 ? PAIR(w, ~0) : PAIR(w, (PAIR_BYTES) == 64 ? 0xFFFFFFFFu : 0xFFFFu);   \
            const __m512i u1 = m == 3 ? PAIR(w + rb, ~0) : PAIR(w + rb, (PAIR_BYTES) == 64 ? 0xFFFFFFFFu : 0xFFFFu); \
            const __m512i u2 = m == 3 ? PAIR(w + 2 * rb, ~0) : PAIR(w + 2 * rb, (PAIR_BYTES) == 64 ? 0xFFFFFFFFu : 0xFFFFu); \
            const __m512i u3 = m == 3 ? PAIR(w + 3 * rb, ~0) : PAIR(w + 3 * rb, (PAIR_BYTES) == 64 ? 0xFFFFFFFFu : 0xFFFFu); \
            const __m512 s0 = dintattn__vnni_lanes(DINTATTN__VNNI_LD2(sw + b, m));                           \
            const __m512 s1 = dintattn__vnni_lanes(DINTATTN__VNNI_LD2(sw + nb + b, m));                      \
            const __m512 s2 = dintattn__vnni_lanes(DINTATTN__VNNI_LD2(sw + 2 * nb + b, m));                  \
            const __m512 s3 = dintattn__vnni_lanes(DINTATTN__VNNI_LD2(sw + 3 * nb + b, m));                  \
            DINTATTN__VNNI_TOKEN4(x[0], a00, a10, a20, a30);                                                 \
            DINTATTN__VNNI_TOKEN4(x[1], a01, a11, a21, a31);                                                 \
            DINTATTN__VNNI_TOKEN4(x[2], a02, a12, a22, a32);                                                 \
            DINTATTN__VNNI_TOKEN4(x[3], a03, a13, a23, a33);                                                 \
        }                                                                                                    \
        DINTATTN__TILE_OUT(out);                                                                             \
    }
DINTATTN__VNNI_TILE(dintattn__dotq44_q8_vnni, dintattn__q8_pair, 64, 128.0f)
DINTATTN__VNNI_TILE(dintattn__dotq44_q4_vnni, dintattn__q4_pair, 32, 8.0f)

DINTATTN__VNNI_ROW(dintattn__dotq1_q8_vnni, 1, dintattn__q8_pair, 64, 128.0f)
DINTATTN__VNNI_ROW(dintattn__dotq4_q8_vnni, 4, dintattn__q8_pair, 64, 128.0f)
DINTATTN__VNNI_ROW(dintattn__dotq4_q4_vnni, 4, dintattn__q4_pair, 32, 8.0f)

DINTATTN__VNNI static float dintattn__dotq_q8_vnni(const dintattn__mat *M, size_t r, const dintattn__xq *x)
{
    float v;
    dintattn__dotq1_q8_vnni(M, r, x, &v);
    return v;
}

/* Q4 in decode, four blocks (64 bytes of nibbles) a step. Each 128-bit lane then holds one block,
   whose low nibbles are its elements 0-15 and high nibbles 16-31; two shuffles group the
   activations' four blocks the same way (first halves, second halves), and two vpdpbusd sum each
   block into four int32 lanes, scaled by w_scale * d of their block. Half the operations per
   weight of unpacking pairs into element order (dintattn__q4_pair): that kernel runs at about 30
   GB/s of weights on one core with its data in cache, this one keeps up with the memory. Two
   accumulators, eight blocks a step, and a third for the offset's sum of w_scale * c (as a
   second pass over the row's scales it takes 3.8% of a Q4 decode's samples on one thread, in
   perf record of examples/bench --weights q4 --threads 1); the last blocks go pair by pair. */
DINTATTN__VNNI static float dintattn__dotq_q4_vnni(const dintattn__mat *M, size_t r, const dintattn__xq *x)
{
    const size_t nb = (size_t)M->cols / 32;
    const unsigned char *w = (const unsigned char *)M->w + r * nb * 16;
    const float *sw = M->scale + r * nb;
    const __m512i low = _mm512_set1_epi8(15), lanes4 = _mm512_set_epi32(3, 3, 3, 3, 2, 2, 2, 2, 1, 1, 1, 1, 0, 0, 0, 0);
    float off;
    __m512 a0 = _mm512_setzero_ps(), a1 = a0;
    __m256 o = _mm256_setzero_ps();
    size_t b = 0;
    for (; b + 8 <= nb; b += 8, w += 128) {
        const signed char *q = x->q + 32 * b;
        const __m512i v0 = _mm512_loadu_si512(w), v1 = _mm512_loadu_si512(w + 64);
        const __m512i p0 = _mm512_loadu_si512(q), p1 = _mm512_loadu_si512(q + 64);
        const __m512i p2 = _mm512_loadu_si512(q + 128), p3 = _mm512_loadu_si512(q + 192);
        __m512i d0, d1;
        DINTATTN__PF(w, 0, 1);
        DINTATTN__PF(w, 64, 1);
        _mm_prefetch((const char *)(sw + b) + DINTATTN__PF_DIST / 4, _MM_HINT_T0);
        d0 = _mm512_dpbusd_epi32(_mm512_setzero_si512(), _mm512_and_si512(v0, low),
                                 _mm512_shuffle_i64x2(p0, p1, _MM_SHUFFLE(2, 0, 2, 0)));
        d0 = _mm512_dpbusd_epi32(d0, _mm512_and_si512(_mm512_srli_epi16(v0, 4), low),
                                 _mm512_shuffle_i64x2(p0, p1, _MM_SHUFFLE(3, 1, 3, 1)));
        d1 = _mm512_dpbusd_epi32(_mm512_setzero_si512(), _mm512_and_si512(v1, low),
                                 _mm512_shuffle_i64x2(p2, p3, _MM_SHUFFLE(2, 0, 2, 0)));
        d1 = _mm512_dpbusd_epi32(d1, _mm512_and_si512(_mm512_srli_epi16(v1, 4), low),
                                 _mm512_shuffle_i64x2(p2, p3, _MM_SHUFFLE(3, 1, 3, 1)));
        a0 = _mm512_fmadd_ps(_mm512_cvtepi32_ps(d0), _mm512_permutexvar_ps(lanes4, _mm512_castps128_ps512(_mm_mul_ps(
                                 _mm_loadu_ps(sw + b), _mm_loadu_ps(x->s + b)))), a0);
        a1 = _mm512_fmadd_ps(_mm512_cvtepi32_ps(d1), _mm512_permutexvar_ps(lanes4, _mm512_castps128_ps512(_mm_mul_ps(
                                 _mm_loadu_ps(sw + b + 4), _mm_loadu_ps(x->s + b + 4)))), a1);
        o = _mm256_fmadd_ps(_mm256_loadu_ps(sw + b), _mm256_loadu_ps(x->c + b), o);
    }
    a0 = _mm512_add_ps(a0, a1);
    off = dintattn__hsum8(o) + (b < nb ? dintattn__vnni_offset(sw + b, x->c + b, nb - b) : 0.0f);
    for (; b + 2 <= nb; b += 2, w += 32) {
        const __m512i u = dintattn__q4_pair(w, ~0);
        DINTATTN__VNNI_TOKEN(a0, x[0], u, b, DINTATTN__VNNI_Q, 3);
    }
    if (b < nb) {
        const __m512i u = dintattn__q4_pair(w, 0xFFFFu);
        DINTATTN__VNNI_TOKEN(a0, x[0], u, b, DINTATTN__VNNI_Q_HALF, 1);
    }
    return _mm512_reduce_add_ps(a0) - 8.0f * off;
}
/* AVX-512 BF16: 32 weights and 32 activations a step, vdpbf16ps summing pairs into 16 f32
   lanes; the tail through masked loads (zeros add nothing). On an AVX-512 CPU without AVX-512
   BF16 (Skylake-SP to Ice Lake) the same kernels run on DINTATTN__DPBF16_FMA (dintattn__dotb_avx512
   chooses). */
#define DINTATTN__BF16 __attribute__((target("avx512f,avx512bw,avx512vl,avx512bf16,avx2,fma,f16c")))
#define DINTATTN__DPBF16(acc, w, x) _mm512_dpbf16_ps((acc), (__m512bh)(w), (__m512bh)(x))
/* vdpbf16ps's sums by FMA: each 32-bit lane's two bf16 values (the low one shifted up, the high
   one with the low bits cleared) are exactly f32 values, and their products, exact in f32, are
   added one after the other, each sum rounded once, as vdpbf16ps adds them (which also takes
   subnormal inputs as zero). Two FMAs and four integer operations for 32 products: decode stays
   bound by memory. */
#define DINTATTN__BF16_FMA __attribute__((target("avx512f,avx512bw,avx512vl,avx2,fma,f16c")))
#define DINTATTN__BF16_LO(v) _mm512_castsi512_ps(_mm512_slli_epi32((v), 16))
#define DINTATTN__BF16_HI(v) _mm512_castsi512_ps(_mm512_and_si512((v), _mm512_set1_epi32(-65536)))
#define DINTATTN__DPBF16_FMA(acc, w, x)                                                                        \
    _mm512_fmadd_ps(DINTATTN__BF16_LO(w), DINTATTN__BF16_LO(x),                                                \
                    _mm512_fmadd_ps(DINTATTN__BF16_HI(w), DINTATTN__BF16_HI(x), (acc)))
/* The weights' 32 bf16 values at p (lanes past mask m: zero): BF16 rows as stored, F16 rows
   widened to f32 and rounded to bf16 (to nearest even; every F16 value is normal in bf16) */
#define DINTATTN__WB_BF16(m, p) _mm512_maskz_loadu_epi16((m), (p))
#define DINTATTN__WB_F16(m, p) dintattn__f16_as_bf16((m), (p))
DINTATTN__BF16 static __m512i dintattn__f16_as_bf16(__mmask32 m, const uint16_t *p)
{
    const __m512i h = _mm512_maskz_loadu_epi16(m, p);
    return (__m512i)_mm512_cvtne2ps_pbh(_mm512_cvtph_ps(_mm512_extracti64x4_epi64(h, 1)),
                                        _mm512_cvtph_ps(_mm512_castsi512_si256(h)));
}
/* dintattn__f32_to_bf16 of 16 floats' bits u, bit for bit (to nearest even, a NaN quiet): the
   bf16 values in the low halves */
DINTATTN__AVX512 static __m512i dintattn__bf16_round16(__m512i u)
{
    const __mmask16 nan = _mm512_cmpgt_epu32_mask(_mm512_and_si512(u, _mm512_set1_epi32(0x7FFFFFFF)), _mm512_set1_epi32(0x7F800000));
    const __m512i even = _mm512_and_si512(_mm512_srli_epi32(u, 16), _mm512_set1_epi32(1));
    const __m512i r = _mm512_srli_epi32(_mm512_add_epi32(u, _mm512_add_epi32(_mm512_set1_epi32(0x7FFF), even)), 16);
    return _mm512_mask_mov_epi32(r, nan, _mm512_or_si512(_mm512_srli_epi32(u, 16), _mm512_set1_epi32(0x40)));
}

/* The same 32 bf16 values without vcvtne2ps2bf16: each widened F16 rounded by
   dintattn__bf16_round16 */
#define DINTATTN__WB_F16_FMA(m, p) dintattn__f16_as_bf16_fma((m), (p))
#define DINTATTN__F16X16_AS_BF16(h16) _mm512_cvtepi32_epi16(dintattn__bf16_round16(_mm512_castps_si512(_mm512_cvtph_ps(h16))))
DINTATTN__BF16_FMA static __m512i dintattn__f16_as_bf16_fma(__mmask32 m, const uint16_t *p)
{
    const __m512i h = _mm512_maskz_loadu_epi16(m, p);
    return _mm512_inserti64x4(_mm512_castsi256_si512(DINTATTN__F16X16_AS_BF16(_mm512_castsi512_si256(h))),
                              DINTATTN__F16X16_AS_BF16(_mm512_extracti64x4_epi64(h, 1)), 1);
}

/* A row against nt (1 or 4) tokens, WB loading the row's weights as bf16 */
#define DINTATTN__DOTB_X86(name, WB, ATTR, DP)                                                               \
    ATTR static void name(const dintattn__mat *M, size_t r, const uint16_t *const *x, int nt, float *out)    \
    {                                                                                                        \
        const size_t n = (size_t)M->cols;                                                                    \
        const uint16_t *w = (const uint16_t *)M->w + r * n;                                                  \
        __m512 a0 = _mm512_setzero_ps(), a1 = a0, a2 = a0, a3 = a0;                                          \
        size_t i = 0;                                                                                        \
        if (nt == 4) {                                                                                       \
            for (; i + 32 <= n; i += 32) {                                                                   \
                const __m512i v = WB(~(__mmask32)0, w + i);                                                  \
                a0 = DP(a0, v, _mm512_loadu_si512(x[0] + i));                                                \
                a1 = DP(a1, v, _mm512_loadu_si512(x[1] + i));                                                \
                a2 = DP(a2, v, _mm512_loadu_si512(x[2] + i));                                                \
                a3 = DP(a3, v, _mm512_loadu_si512(x[3] + i));                                                \
            }                                                                                                \
            if (i < n) {                                                                                     \
                const __mmask32 m = (__mmask32)((1ull << (n - i)) - 1);                                      \
                const __m512i v = WB(m, w + i);                                                              \
                a0 = DP(a0, v, _mm512_maskz_loadu_epi16(m, x[0] + i));                                       \
                a1 = DP(a1, v, _mm512_maskz_loadu_epi16(m, x[1] + i));                                       \
                a2 = DP(a2, v, _mm512_maskz_loadu_epi16(m, x[2] + i));                                       \
                a3 = DP(a3, v, _mm512_maskz_loadu_epi16(m, x[3] + i));                                       \
            }                                                                                                \
            out[0] = _mm512_reduce_add_ps(a0), out[1] = _mm512_reduce_add_ps(a1);                            \
            out[2] = _mm512_reduce_add_ps(a2), out[3] = _mm512_reduce_add_ps(a3);                            \
            return;                                                                                          \
        }                                                                                                    \
        for (; i + 128 <= n; i += 128) { /* one token: four chains; every line prefetched */                 \
            DINTATTN__PF(w, i, 2);                                                                           \
            DINTATTN__PF(w, i + 32, 2);                                                                      \
            DINTATTN__PF(w, i + 64, 2);                                                                      \
            DINTATTN__PF(w, i + 96, 2);                                                                      \
            a0 = DP(a0, WB(~(__mmask32)0, w + i), _mm512_loadu_si512(x[0] + i));                             \
            a1 = DP(a1, WB(~(__mmask32)0, w + i + 32), _mm512_loadu_si512(x[0] + i + 32));                   \
            a2 = DP(a2, WB(~(__mmask32)0, w + i + 64), _mm512_loadu_si512(x[0] + i + 64));                   \
            a3 = DP(a3, WB(~(__mmask32)0, w + i + 96), _mm512_loadu_si512(x[0] + i + 96));                   \
        }                                                                                                    \
        a0 = _mm512_add_ps(a0, a2), a1 = _mm512_add_ps(a1, a3);                                              \
        for (; i + 64 <= n; i += 64) {                                                                       \
            DINTATTN__PF(w, i, 2);                                                                           \
            DINTATTN__PF(w, i + 32, 2);                                                                      \
            a0 = DP(a0, WB(~(__mmask32)0, w + i), _mm512_loadu_si512(x[0] + i));                             \
            a1 = DP(a1, WB(~(__mmask32)0, w + i + 32), _mm512_loadu_si512(x[0] + i + 32));                   \
        }                                                                                                    \
        for (; i < n; i += 32) {                                                                             \
            const __mmask32 m = n - i >= 32 ? ~(__mmask32)0 : (__mmask32)((1ull << (n - i)) - 1);            \
            a0 = DP(a0, WB(m, w + i), _mm512_maskz_loadu_epi16(m, x[0] + i));                                \
        }                                                                                                    \
        out[0] = _mm512_reduce_add_ps(_mm512_add_ps(a0, a1));                                                \
    }
DINTATTN__DOTB_X86(dintattn__dotb_bf16, DINTATTN__WB_BF16, DINTATTN__BF16, DINTATTN__DPBF16)
DINTATTN__DOTB_X86(dintattn__dotb_f16w, DINTATTN__WB_F16, DINTATTN__BF16, DINTATTN__DPBF16)
DINTATTN__DOTB_X86(dintattn__dotb_bf16_fma, DINTATTN__WB_BF16, DINTATTN__BF16_FMA, DINTATTN__DPBF16_FMA)
DINTATTN__DOTB_X86(dintattn__dotb_f16w_fma, DINTATTN__WB_F16_FMA, DINTATTN__BF16_FMA, DINTATTN__DPBF16_FMA)

/* Rows r..r+3 against four tokens (prefill): 16 accumulators, each step's 32 weights of a row
   loaded (for F16, converted) once for the four tokens and a token's once for the four rows.
   out[4 i + j]: row r + i, token j. */
#define DINTATTN__DOTB44_X86(name, WB, ATTR, DP)                                                             \
    ATTR static void name(const dintattn__mat *M, size_t r, const uint16_t *const *x, float *out)            \
    {                                                                                                        \
        const size_t n = (size_t)M->cols;                                                                    \
        const uint16_t *w = (const uint16_t *)M->w + r * n;                                                  \
        __m512 a00 = _mm512_setzero_ps(), a01 = a00, a02 = a00, a03 = a00, a10 = a00, a11 = a00, a12 = a00;  \
        __m512 a13 = a00, a20 = a00, a21 = a00, a22 = a00, a23 = a00, a30 = a00, a31 = a00, a32 = a00;       \
        __m512 a33 = a00;                                                                                    \
        size_t i;                                                                                            \
        for (i = 0; i < n; i += 32) {                                                                        \
            const __mmask32 m = n - i >= 32 ? ~(__mmask32)0 : (__mmask32)((1ull << (n - i)) - 1);            \
            const __m512i w0 = WB(m, w + i), w1 = WB(m, w + n + i), w2 = WB(m, w + 2 * n + i);               \
            const __m512i w3 = WB(m, w + 3 * n + i);                                                         \
            __m512i v = _mm512_maskz_loadu_epi16(m, x[0] + i);                                               \
            a00 = DP(a00, w0, v), a10 = DP(a10, w1, v);                                                      \
            a20 = DP(a20, w2, v), a30 = DP(a30, w3, v);                                                      \
            v = _mm512_maskz_loadu_epi16(m, x[1] + i);                                                       \
            a01 = DP(a01, w0, v), a11 = DP(a11, w1, v);                                                      \
            a21 = DP(a21, w2, v), a31 = DP(a31, w3, v);                                                      \
            v = _mm512_maskz_loadu_epi16(m, x[2] + i);                                                       \
            a02 = DP(a02, w0, v), a12 = DP(a12, w1, v);                                                      \
            a22 = DP(a22, w2, v), a32 = DP(a32, w3, v);                                                      \
            v = _mm512_maskz_loadu_epi16(m, x[3] + i);                                                       \
            a03 = DP(a03, w0, v), a13 = DP(a13, w1, v);                                                      \
            a23 = DP(a23, w2, v), a33 = DP(a33, w3, v);                                                      \
        }                                                                                                    \
        DINTATTN__TILE_OUT(out);                                                                             \
    }
DINTATTN__DOTB44_X86(dintattn__dotb44_bf16, DINTATTN__WB_BF16, DINTATTN__BF16, DINTATTN__DPBF16)
DINTATTN__DOTB44_X86(dintattn__dotb44_f16w, DINTATTN__WB_F16, DINTATTN__BF16, DINTATTN__DPBF16)
DINTATTN__DOTB44_X86(dintattn__dotb44_bf16_fma, DINTATTN__WB_BF16, DINTATTN__BF16_FMA, DINTATTN__DPBF16_FMA)
DINTATTN__DOTB44_X86(dintattn__dotb44_f16w_fma, DINTATTN__WB_F16_FMA, DINTATTN__BF16_FMA, DINTATTN__DPBF16_FMA)

/* --- prefill on packed panels (AVX-512): int8 x int8 (VNNI) and bf16 x bf16 (AVX-512 BF16) ----
   A GEMM in the layout the instructions want: a panel holds 32 rows of a matrix (two vectors of
   16 rows) with their columns interleaved in groups (4 bytes of int8, 2 bf16), so that one load
   gives 16 rows' next group and one broadcast gives a token's; each vpdpbusd / vdpbf16ps then
   adds to 16 outputs, and NT tokens x 32 rows of accumulators stay in registers over the whole
   row. dintattn__gemm_unit packs a panel once (rows past the matrix: zero), then runs every block
   of NT tokens, packed once per product input (dintattn__pack_xq / _xb), against it. */

/* dintattn__to_bf16 16 at a time, bit for bit */
DINTATTN__AVX512 static void dintattn__to_bf16_avx512(const float *x, int cols, uint16_t *out)
{
    int k;
    for (k = 0; k < (cols + 31) / 32 * 32; k += 16) {
        const __m512i u = _mm512_castps_si512(_mm512_maskz_loadu_ps(DINTATTN__ROWMASK(cols - k), x + k));
        _mm256_storeu_si256((__m256i *)(void *)(out + k), _mm512_cvtepi32_epi16(dintattn__bf16_round16(u)));
    }
}

/* The offsets of 16 consecutive rows `stride` apart, for the packers' gathers */
DINTATTN__VNNI static __m512i dintattn__row_offsets(size_t stride)
{
    return _mm512_mullo_epi32(_mm512_set_epi32(15, 14, 13, 12, 11, 10, 9, 8, 7, 6, 5, 4, 3, 2, 1, 0),
                              _mm512_set1_epi32((int)stride));
}

/* Half a panel for a packer's gathers: which of the 16 rows from r exist (m), and where their
   bytes start (`stride` a row; row 0's where none exists: a gather under an empty mask reads
   nothing) */
static const unsigned char *dintattn__half_panel(const dintattn__mat *M, int r, size_t stride, __mmask16 *m)
{
    *m = DINTATTN__ROWMASK(M->rows - r);
    return (const unsigned char *)M->w + (size_t)(*m ? r : 0) * stride;
}

/* A 16 x 16 block of 32-bit words transposed in registers: v[i] holds row i on entry, column i on
   return (t: scratch). Two rounds of unpacks inside 128-bit lanes, then the lanes' 4 x 4 transpose
   across vectors in two rounds of shuffles; written out so that both arrays stay in registers. */
#define DINTATTN__UNPACK(o, i, w, a, b) o[i] = _mm512_unpacklo_##w(a, b), o[i + 1] = _mm512_unpackhi_##w(a, b)
#define DINTATTN__LANES(o, i, a, b) o[i] = _mm512_shuffle_i32x4(a, b, 0x88), o[i + 4] = _mm512_shuffle_i32x4(a, b, 0xDD)
#define DINTATTN__LANES2(o, i, a, b) o[i] = _mm512_shuffle_i32x4(a, b, 0x88), o[i + 8] = _mm512_shuffle_i32x4(a, b, 0xDD)
#define DINTATTN__TRANSPOSE16(v, t)                                                                          \
    do {                                                                                                     \
        DINTATTN__UNPACK(t, 0, epi32, v[0], v[1]), DINTATTN__UNPACK(t, 2, epi32, v[2], v[3]);                \
        DINTATTN__UNPACK(t, 4, epi32, v[4], v[5]), DINTATTN__UNPACK(t, 6, epi32, v[6], v[7]);                \
        DINTATTN__UNPACK(t, 8, epi32, v[8], v[9]), DINTATTN__UNPACK(t, 10, epi32, v[10], v[11]);             \
        DINTATTN__UNPACK(t, 12, epi32, v[12], v[13]), DINTATTN__UNPACK(t, 14, epi32, v[14], v[15]);          \
        DINTATTN__UNPACK(v, 0, epi64, t[0], t[2]), DINTATTN__UNPACK(v, 2, epi64, t[1], t[3]);                \
        DINTATTN__UNPACK(v, 4, epi64, t[4], t[6]), DINTATTN__UNPACK(v, 6, epi64, t[5], t[7]);                \
        DINTATTN__UNPACK(v, 8, epi64, t[8], t[10]), DINTATTN__UNPACK(v, 10, epi64, t[9], t[11]);             \
        DINTATTN__UNPACK(v, 12, epi64, t[12], t[14]), DINTATTN__UNPACK(v, 14, epi64, t[13], t[15]);          \
        DINTATTN__LANES(t, 0, v[0], v[4]), DINTATTN__LANES(t, 1, v[1], v[5]);                                \
        DINTATTN__LANES(t, 2, v[2], v[6]), DINTATTN__LANES(t, 3, v[3], v[7]);                                \
        DINTATTN__LANES(t, 8, v[8], v[12]), DINTATTN__LANES(t, 9, v[9], v[13]);                              \
        DINTATTN__LANES(t, 10, v[10], v[14]), DINTATTN__LANES(t, 11, v[11], v[15]);                          \
        DINTATTN__LANES2(v, 0, t[0], t[8]), DINTATTN__LANES2(v, 1, t[1], t[9]);                              \
        DINTATTN__LANES2(v, 2, t[2], t[10]), DINTATTN__LANES2(v, 3, t[3], t[11]);                            \
        DINTATTN__LANES2(v, 4, t[4], t[12]), DINTATTN__LANES2(v, 5, t[5], t[13]);                            \
        DINTATTN__LANES2(v, 6, t[6], t[14]), DINTATTN__LANES2(v, 7, t[7], t[15]);                            \
    } while (0)

/* 64 bytes at byte `at` of each of 16 rows rb bytes apart from w (zeros for rows not in the mask
   m), transposed: v[i] holds 32-bit word i of the 16 rows (t: scratch) */
#define DINTATTN__LOAD_T16(v, t, w, rb, m, at)                                                               \
    do {                                                                                                     \
        int i_;                                                                                              \
        for (i_ = 0; i_ < 16; i_++)                                                                          \
            v[i_] = ((m) >> i_) & 1 ? _mm512_loadu_si512((w) + (size_t)i_ * (rb) + (at)) : _mm512_setzero_si512(); \
        DINTATTN__TRANSPOSE16(v, t);                                                                         \
    } while (0)

/* Q8 and Q4 rows r0..r0+31 packed: signed bytes (Q8 as stored; Q4 nibble - 8), the scales, and
   per row -128 times the block's sum of weights (vpdpbusd against ones sums them), which takes out
   what the activations' offset of 128 adds */
#define DINTATTN__GQ_PACK(name, Q4)                                                                            \
    DINTATTN__VNNI static void name(const dintattn__mat *M, int r0, void *panel)                             \
    {                                                                                                        \
        const size_t nb = (size_t)M->cols / 32, bb = (Q4) ? 16 : 32, rb = nb * bb; /* bytes a block, a row */ \
        const int G = (Q4) ? 4 : 8, per64 = 64 / (int)bb; /* words a block; blocks in 64 bytes */          \
        const __m512i step = dintattn__row_offsets(rb), sstep = dintattn__row_offsets(nb);                 \
        const __m512i ones = _mm512_set1_epi8(1), low = _mm512_set1_epi8(15), eight = _mm512_set1_epi8(8);  \
        size_t b;                                                                                            \
        int j, g, k, n;                                                                                      \
        for (b = 0; b < nb; b += (size_t)n) {                                                                \
            n = b + (size_t)per64 <= nb ? per64 : 1; /* blocks taken 64 bytes a row and transposed, or one gathered */ \
            for (j = 0; j < 2; j++) {                                                                        \
                const int r = r0 + 16 * j;                                                                   \
                __m512i v[16], t[16];                                                                        \
                __mmask16 m;                                                                                 \
                const unsigned char *w = dintattn__half_panel(M, r, rb, &m);                                 \
                if (n > 1) DINTATTN__LOAD_T16(v, t, w, rb, m, bb * b); /* v[G k + g]: word g of block b + k */ \
                for (k = 0; k < n; k++) {                                                                    \
                    int32_t *out = (int32_t *)panel + (b + (size_t)k) * DINTATTN__GQ_PANEL_BLOCK;            \
                    __m512i sum = _mm512_setzero_si512();                                                    \
                    _mm512_storeu_ps(out + 256 + 16 * j, _mm512_mask_i32gather_ps(_mm512_setzero_ps(), m, sstep, \
                                                                                 M->scale + (size_t)(m ? r : 0) * nb + b + k, 4)); \
                    for (g = 0; g < G; g++) {                                                                \
                        const __m512i x = n > 1 ? v[G * k + g]                                               \
                                                : _mm512_mask_i32gather_epi32(_mm512_setzero_si512(), m, step, w + bb * b + 4 * g, 1); \
                        if (Q4) {                                                                            \
                            const __m512i lo = _mm512_maskz_mov_epi32(m, _mm512_sub_epi8(_mm512_and_si512(x, low), eight)); \
                            const __m512i hi = _mm512_maskz_mov_epi32(                                       \
                                m, _mm512_sub_epi8(_mm512_and_si512(_mm512_srli_epi16(x, 4), low), eight));  \
                            _mm512_storeu_si512(out + (2 * g + j) * 16, lo);                                 \
                            _mm512_storeu_si512(out + (2 * (g + 4) + j) * 16, hi);                           \
                            sum = _mm512_dpbusd_epi32(_mm512_dpbusd_epi32(sum, ones, lo), ones, hi);         \
                        } else {                                                                             \
                            _mm512_storeu_si512(out + (2 * g + j) * 16, x);                                  \
                            sum = _mm512_dpbusd_epi32(sum, ones, x);                                         \
                        }                                                                                    \
                    }                                                                                        \
                    _mm512_storeu_si512(out + 288 + 16 * j, _mm512_mullo_epi32(sum, _mm512_set1_epi32(-128))); \
                }                                                                                            \
            }                                                                                                \
        }                                                                                                    \
    }
DINTATTN__GQ_PACK(dintattn__pack_q8_vnni, 0)
DINTATTN__GQ_PACK(dintattn__pack_q4_vnni, 1)

/* One block of DINTATTN__GQ_NT tokens against a packed int8 panel: out[t * 32 + i], row i of the
   panel against token t. Per block of 32 columns and (16 rows, token): the integer dot starts at
   the rows' offsets, takes 8 vpdpbusd (the token's unsigned bytes times the signed weights), then
   is scaled by the rows' scales times the token's d into the f32 accumulator. */
#define DINTATTN__GQ_TOKEN(t)                                                                                \
    i0##t = _mm512_dpbusd_epi32(i0##t, _mm512_set1_epi32(xg[t]), w0),                                        \
    i1##t = _mm512_dpbusd_epi32(i1##t, _mm512_set1_epi32(xg[t]), w1)
#define DINTATTN__GQ_GROUP(g)                                                                                \
    do {                                                                                                     \
        const __m512i w0 = _mm512_loadu_si512(p + 32 * (g)), w1 = _mm512_loadu_si512(p + 32 * (g) + 16);     \
        const int32_t *xg = xb + DINTATTN__GQ_NT * (g);                                                      \
        DINTATTN__GQ_TOKEN(0), DINTATTN__GQ_TOKEN(1), DINTATTN__GQ_TOKEN(2);                                 \
        DINTATTN__GQ_TOKEN(3), DINTATTN__GQ_TOKEN(4), DINTATTN__GQ_TOKEN(5);                                 \
    } while (0)
#define DINTATTN__GQ_SCALE(t)                                                                                \
    do {                                                                                                     \
        const __m512 d_ = _mm512_set1_ps(((const float *)xb)[8 * DINTATTN__GQ_NT + (t)]);                    \
        f0##t = _mm512_fmadd_ps(_mm512_cvtepi32_ps(i0##t), _mm512_mul_ps(s0, d_), f0##t);                   \
        f1##t = _mm512_fmadd_ps(_mm512_cvtepi32_ps(i1##t), _mm512_mul_ps(s1, d_), f1##t);                   \
    } while (0)
#define DINTATTN__GQ_OUT(t) _mm512_storeu_ps(out + 32 * (t), f0##t), _mm512_storeu_ps(out + 32 * (t) + 16, f1##t)
DINTATTN__VNNI static void dintattn__panel_q_vnni(const void *panel, int cols, const void *xblk, float *out)
{
    const int32_t *p = (const int32_t *)panel, *xb = (const int32_t *)xblk;
    __m512 f00 = _mm512_setzero_ps(), f01 = f00, f02 = f00, f03 = f00, f04 = f00, f05 = f00;
    __m512 f10 = f00, f11 = f00, f12 = f00, f13 = f00, f14 = f00, f15 = f00;
    int b, l;
    DINTATTN_ASSERT(DINTATTN__GQ_NT == 6);
    for (b = 0; b < cols / 32; b++, p += DINTATTN__GQ_PANEL_BLOCK, xb += DINTATTN__GQ_X_BLOCK) {
        const __m512i c0 = _mm512_loadu_si512(p + 288), c1 = _mm512_loadu_si512(p + 304);
        const __m512 s0 = _mm512_loadu_ps((const float *)p + 256), s1 = _mm512_loadu_ps((const float *)p + 272);
        __m512i i00 = c0, i01 = c0, i02 = c0, i03 = c0, i04 = c0, i05 = c0;
        __m512i i10 = c1, i11 = c1, i12 = c1, i13 = c1, i14 = c1, i15 = c1;
        for (l = 0; l < (int)sizeof(int32_t) * DINTATTN__GQ_X_BLOCK; l += 64) /* the tokens' 216 bytes */
            _mm_prefetch((const char *)xb + DINTATTN__PF_TOKENS + l, _MM_HINT_T0);
        DINTATTN__GQ_GROUP(0); DINTATTN__GQ_GROUP(1); DINTATTN__GQ_GROUP(2); DINTATTN__GQ_GROUP(3);
        DINTATTN__GQ_GROUP(4); DINTATTN__GQ_GROUP(5); DINTATTN__GQ_GROUP(6); DINTATTN__GQ_GROUP(7);
        DINTATTN__GQ_SCALE(0); DINTATTN__GQ_SCALE(1); DINTATTN__GQ_SCALE(2);
        DINTATTN__GQ_SCALE(3); DINTATTN__GQ_SCALE(4); DINTATTN__GQ_SCALE(5);
    }
    DINTATTN__GQ_OUT(0), DINTATTN__GQ_OUT(1), DINTATTN__GQ_OUT(2), DINTATTN__GQ_OUT(3), DINTATTN__GQ_OUT(4), DINTATTN__GQ_OUT(5);
}

/* BF16 or F16 rows r0..r0+31 as 32-bit words of two halves, as stored: pair p (columns 2p, 2p + 1)
   of row r0 + 16 j + i at out[32 p + 16 j + i]; an odd last column pairs with a zero, rows past the
   matrix are zero. 64 bytes of each of 16 rows (16 pairs) transposed at a time, gathers for the
   last pairs. No AVX-512 BF16 instruction (the AVX-512 level's target), so that a CPU without it
   can check the packing. */
DINTATTN__VNNI static void dintattn__pack_b16_words(const dintattn__mat *M, int r0, uint32_t *out)
{
    const size_t K = (size_t)M->cols, rb = 2 * K, np = (K + 1) / 2, wide = K / 32 * 16; /* pairs transposed */
    const __m512i step = dintattn__row_offsets(rb);
    const uint16_t *w16 = (const uint16_t *)M->w;
    size_t p;
    int j, i;
    for (j = 0; j < 2; j++) {
        const int r = r0 + 16 * j;
        __mmask16 m;
        const unsigned char *w = dintattn__half_panel(M, r, rb, &m);
        for (p = 0; p < wide; p += 16) {
            __m512i v[16], t[16];
            DINTATTN__LOAD_T16(v, t, w, rb, m, 4 * p);
            for (i = 0; i < 16; i++) _mm512_storeu_si512(out + 32 * (p + (size_t)i) + 16 * j, v[i]);
        }
        for (; p < K / 2; p++)
            _mm512_storeu_si512(out + 32 * p + 16 * j, _mm512_mask_i32gather_epi32(_mm512_setzero_si512(), m, step, w + 4 * p, 1));
        if (K % 2) /* the odd last column, one row at a time */
            for (i = 0; i < 16; i++) out[32 * (np - 1) + 16 * j + i] = r + i < M->rows ? w16[(size_t)(r + i) * K + K - 1] : 0;
    }
}

/* BF16 or F16 rows r0..r0+31 packed as bf16 pairs (dintattn__pack_b16_words; F16 then rounded to
   bf16 as dintattn__f16_as_bf16 does), the pairs zero up to a multiple of 16 (AMX) */
DINTATTN__BF16 static void dintattn__pack_b16(const dintattn__mat *M, int r0, void *panel)
{
    const size_t np = ((size_t)M->cols + 1) / 2;
    uint32_t *out = (uint32_t *)panel;
    size_t p;
    dintattn__pack_b16_words(M, r0, out);
    if (M->type == DINTATTN__W_F16) /* 32 halves at a time, widened and rounded back in their order */
        for (p = 0; p < 2 * np; p++) {
            const __m512i v = _mm512_loadu_si512(out + 16 * p);
            _mm512_storeu_si512(out + 16 * p, (__m512i)_mm512_cvtne2ps_pbh(_mm512_cvtph_ps(_mm512_extracti64x4_epi64(v, 1)),
                                                                           _mm512_cvtph_ps(_mm512_castsi512_si256(v))));
        }
    memset(out + 32 * np, 0, sizeof(uint32_t) * 32 * ((16 - np % 16) % 16));
}

/* One block of 12 tokens' bf16 pairs against a packed bf16 panel of 32 rows, 24 vectors of
   accumulators over the whole row: out[t * 32 + i]. Per pair of columns the panel's 32 rows'
   words, then the 12 tokens'. */
#define DINTATTN__P12_DECL(t) __m512 c0##t = _mm512_setzero_ps(), c1##t = c0##t
#define DINTATTN__P12_STORE(t) _mm512_storeu_ps(out + 32 * (t), c0##t), _mm512_storeu_ps(out + 32 * (t) + 16, c1##t)
#define DINTATTN__GB_TOKEN(t)                                                                                \
    do {                                                                                                     \
        const __m512i x_ = _mm512_set1_epi32((int)xp[t]);                                                    \
        c0##t = DINTATTN__DPBF16(c0##t, w0, x_), c1##t = DINTATTN__DPBF16(c1##t, w1, x_);                    \
    } while (0)
DINTATTN__BF16 static void dintattn__panel_b16(const void *panel, int cols, const void *xblk, float *out)
{
    const uint32_t *pk = (const uint32_t *)panel, *xp = (const uint32_t *)xblk;
    const int ng = (cols + 1) / 2;
    int g;
    DINTATTN__P12_DECL(0); DINTATTN__P12_DECL(1); DINTATTN__P12_DECL(2); DINTATTN__P12_DECL(3);
    DINTATTN__P12_DECL(4); DINTATTN__P12_DECL(5); DINTATTN__P12_DECL(6); DINTATTN__P12_DECL(7);
    DINTATTN__P12_DECL(8); DINTATTN__P12_DECL(9); DINTATTN__P12_DECL(10); DINTATTN__P12_DECL(11);
    for (g = 0; g < ng; g++, pk += 32, xp += DINTATTN__GB_NT) {
        const __m512i w0 = _mm512_loadu_si512(pk), w1 = _mm512_loadu_si512(pk + 16);
        _mm_prefetch((const char *)xp + DINTATTN__PF_TOKENS, _MM_HINT_T0);
        DINTATTN__GB_TOKEN(0); DINTATTN__GB_TOKEN(1); DINTATTN__GB_TOKEN(2); DINTATTN__GB_TOKEN(3);
        DINTATTN__GB_TOKEN(4); DINTATTN__GB_TOKEN(5); DINTATTN__GB_TOKEN(6); DINTATTN__GB_TOKEN(7);
        DINTATTN__GB_TOKEN(8); DINTATTN__GB_TOKEN(9); DINTATTN__GB_TOKEN(10); DINTATTN__GB_TOKEN(11);
    }
    DINTATTN__P12_STORE(0), DINTATTN__P12_STORE(1), DINTATTN__P12_STORE(2), DINTATTN__P12_STORE(3);
    DINTATTN__P12_STORE(4), DINTATTN__P12_STORE(5), DINTATTN__P12_STORE(6), DINTATTN__P12_STORE(7);
    DINTATTN__P12_STORE(8), DINTATTN__P12_STORE(9), DINTATTN__P12_STORE(10), DINTATTN__P12_STORE(11);
}

/* F32 activations (precision EXACT, and AUTO on F32 / BF16 / F16 weights): F32, BF16 and F16 rows
   r0..r0+47 packed as f32, per column the 48 rows' values (BF16 and F16 widened exactly). Each 16
   rows' first columns are read 64 bytes a row and transposed in registers, the last (up to 15 f32
   or 31 16-bit columns) gathered a column at a time: a 16-token prompt of the 2.7B model packs
   every weight for a block or two of tokens, where gathers alone take longer than the products
   (perf record of a gathers-only packing, Ice Lake Xeon, examples/bench --prompt 16
   --precision exact on the 2.7B: pack 31.6% of samples, panels 22.1%). */
DINTATTN__VNNI static void dintattn__pack_pair(int type, __m512i v, float *lo, float *hi)
{
    if (type == DINTATTN__W_BF16) { /* a 32-bit word per row: the low half its first column */
        _mm512_storeu_ps(lo, DINTATTN__BF16_LO(v));
        _mm512_storeu_ps(hi, DINTATTN__BF16_HI(v));
    } else {
        _mm512_storeu_ps(lo, _mm512_cvtph_ps(_mm512_cvtepi32_epi16(v)));
        _mm512_storeu_ps(hi, _mm512_cvtph_ps(_mm512_cvtepi32_epi16(_mm512_srli_epi32(v, 16))));
    }
}

DINTATTN__VNNI static void dintattn__pack_f32(const dintattn__mat *M, int r0, void *panel)
{
    const size_t K = (size_t)M->cols, es = M->type == DINTATTN__W_F32 ? 4 : 2, rb = es * K;
    const size_t per = 64 / es, wide = K / per * per; /* columns in 64 bytes of a row; those transposed */
    const __m512i step = dintattn__row_offsets(rb);
    float *out = (float *)panel;
    size_t k;
    int j, i;
    for (j = 0; j < DINTATTN__PANEL_F32 / 16; j++) {
        const int r = r0 + 16 * j;
        __mmask16 m;
        const unsigned char *w = dintattn__half_panel(M, r, rb, &m);
        float *o = out + 16 * j; /* column k of these 16 rows at o + 48 k */
        for (k = 0; k < wide; k += per) { /* word i of the 16 rows: f32 column k + i, or 16-bit k + 2i, k + 2i + 1 */
            __m512i v[16], t[16];
            DINTATTN__LOAD_T16(v, t, w, rb, m, es * k);
            for (i = 0; i < 16; i++) {
                if (es == 4) _mm512_storeu_si512(o + DINTATTN__PANEL_F32 * (k + (size_t)i), v[i]);
                else dintattn__pack_pair(M->type, v[i], o + DINTATTN__PANEL_F32 * (k + 2 * (size_t)i), o + DINTATTN__PANEL_F32 * (k + 2 * (size_t)i + 1));
            }
        }
        if (es == 4) {
            for (; k < K; k++)
                _mm512_storeu_ps(o + DINTATTN__PANEL_F32 * k, _mm512_mask_i32gather_ps(_mm512_setzero_ps(), m, step, w + 4 * k, 1));
            continue;
        }
        for (; k + 2 <= K; k += 2)
            dintattn__pack_pair(M->type, _mm512_mask_i32gather_epi32(_mm512_setzero_si512(), m, step, w + 2 * k, 1),
                                o + DINTATTN__PANEL_F32 * k, o + DINTATTN__PANEL_F32 * (k + 1));
        if (K % 2) /* the odd last column, one row at a time */
            for (i = 0; i < 16; i++)
                o[DINTATTN__PANEL_F32 * (K - 1) + i] = r + i < M->rows ? dintattn__wtypes[M->type].elem(M, (size_t)(r + i) * K + K - 1) : 0.0f;
    }
}

/* A block of DINTATTN__GF_NT tokens' f32 activations (rows ldx apart; the first n, the rest
   zero) packed for the f32 panels: per column, each token's value, with `bf16` rounded to bf16 as
   dintattn__f32_to_bf16 rounds (DINTATTN__ACT_BF16_F32). 16 columns at a time: the block's rows
   (8 tokens, then 8 of zeros) transposed, each column's 8 values stored. */
DINTATTN__AVX512 static void dintattn__pack_xf_avx512(const float *x, size_t ldx, int n, int cols, int bf16, float *o)
{
    int k, t;
    for (k = 0; k < cols; k += 16) {
        const __mmask16 m = DINTATTN__ROWMASK(cols - k);
        __m512i v[16], s[16];
        for (t = 0; t < 16; t++) {
            v[t] = t < n && t < DINTATTN__GF_NT ? _mm512_castps_si512(_mm512_maskz_loadu_ps(m, x + (size_t)t * ldx + k))
                                                : _mm512_setzero_si512();
            if (bf16) v[t] = _mm512_slli_epi32(dintattn__bf16_round16(v[t]), 16);
        }
        DINTATTN__TRANSPOSE16(v, s);
        for (t = 0; t < 16 && k + t < cols; t++)
            _mm256_storeu_ps(o + (size_t)(k + t) * DINTATTN__GF_NT, _mm512_castps512_ps256(_mm512_castsi512_ps(v[t])));
    }
}

/* One block of DINTATTN__GF_NT tokens (or its first 4) against a packed f32 panel of 48 rows over
   `cols` columns: 3 vectors of rows x the tokens in accumulators, out[t * 48 + i]; each sum one
   chain of FMAs down the columns, so the 4-token kernel's sums are the 8-token kernel's, bit for
   bit. Two columns a step, with one prefetch of the tokens' stream (64 bytes: two columns). */
#define DINTATTN__GF_DECL(t) __m512 c0##t = _mm512_setzero_ps(), c1##t = c0##t, c2##t = c0##t
#define DINTATTN__GF_STORE(t)                                                                                \
    _mm512_storeu_ps(out + DINTATTN__PANEL_F32 * (t), c0##t),                                                \
        _mm512_storeu_ps(out + DINTATTN__PANEL_F32 * (t) + 16, c1##t),                                       \
        _mm512_storeu_ps(out + DINTATTN__PANEL_F32 * (t) + 32, c2##t)
#define DINTATTN__GF_TOKEN(t)                                                                                \
    do {                                                                                                     \
        const __m512 x_ = _mm512_set1_ps(xp[t]);                                                             \
        c0##t = _mm512_fmadd_ps(w0, x_, c0##t);                                                              \
        c1##t = _mm512_fmadd_ps(w1, x_, c1##t);                                                              \
        c2##t = _mm512_fmadd_ps(w2, x_, c2##t);                                                              \
    } while (0)
#define DINTATTN__GF_COLUMN(TOKENS)                                                                          \
    do {                                                                                                     \
        const __m512 w0 = _mm512_loadu_ps(pk), w1 = _mm512_loadu_ps(pk + 16), w2 = _mm512_loadu_ps(pk + 32); \
        TOKENS;                                                                                              \
        pk += DINTATTN__PANEL_F32, xp += DINTATTN__GF_NT;                                                    \
    } while (0)
#define DINTATTN__GF_KERNEL(name, DECL, TOKENS, STORE)                                                        \
    DINTATTN__VNNI static void name(const void *panel, int cols, const void *xblk, float *out)                \
    {                                                                                                        \
        const float *pk = (const float *)panel, *xp = (const float *)xblk;                                   \
        int g;                                                                                               \
        DECL;                                                                                                \
        for (g = 0; g + 2 <= cols; g += 2) {                                                                 \
            _mm_prefetch((const char *)xp + DINTATTN__PF_TOKENS, _MM_HINT_T0);                               \
            DINTATTN__GF_COLUMN(TOKENS);                                                                     \
            DINTATTN__GF_COLUMN(TOKENS);                                                                     \
        }                                                                                                    \
        if (g < cols) DINTATTN__GF_COLUMN(TOKENS);                                                           \
        STORE;                                                                                               \
    }
#define DINTATTN__P4(M) M(0); M(1); M(2); M(3)
#define DINTATTN__P4S(M) M(0), M(1), M(2), M(3)
#define DINTATTN__P8(M) M(0); M(1); M(2); M(3); M(4); M(5); M(6); M(7)
#define DINTATTN__P8S(M) M(0), M(1), M(2), M(3), M(4), M(5), M(6), M(7)
DINTATTN__GF_KERNEL(dintattn__panel_f32, DINTATTN__P8(DINTATTN__GF_DECL), DINTATTN__P8(DINTATTN__GF_TOKEN),
                    DINTATTN__P8S(DINTATTN__GF_STORE))
DINTATTN__GF_KERNEL(dintattn__panel_f32_4, DINTATTN__P4(DINTATTN__GF_DECL), DINTATTN__P4(DINTATTN__GF_TOKEN),
                    DINTATTN__P4S(DINTATTN__GF_STORE))

/* A block's n f32 sums of one slice (a multiple of 8) added into its double sums (`first`: set),
   and, with `out`, the totals rounded to f32 there: the f32 panels and AMX's tiles alike */
DINTATTN__AVX512 static void dintattn__add_slice(const float *o, int n, double *sum, int first, float *out)
{
    int i;
    for (i = 0; i < n; i += 8) {
        __m512d v = _mm512_cvtps_pd(_mm256_loadu_ps(o + i));
        if (!first) v = _mm512_add_pd(_mm512_loadu_pd(sum + i), v);
        _mm512_storeu_pd(sum + i, v);
        if (out) _mm256_storeu_ps(out + i, _mm512_cvtpd_ps(v));
    }
}

/* dintattn__panel_f32 over one slice of columns for the block's first nt tokens (1..8; past the
   kernel's 4 or 8 the sums and outputs untouched), its f32 sums added into the block's double sums
   (`first`: set), and, with `out`, the totals rounded to f32 there (same layout, t * 48 + i) */
DINTATTN__VNNI static void dintattn__panel_f32_slice(const void *panel, int cols, const void *xblk, int nt, double *sum,
                                                     int first, float *out)
{
    float o[DINTATTN__PANEL_F32 * DINTATTN__GF_NT];
    if (nt <= 4) dintattn__panel_f32_4(panel, cols, xblk, o);
    else dintattn__panel_f32(panel, cols, xblk, o);
    dintattn__add_slice(o, DINTATTN__PANEL_F32 * (nt <= 4 ? 4 : DINTATTN__GF_NT), sum, first, out);
}

#if !defined(DINTATTN_NO_AMX) && (defined(__clang__) ? __clang_major__ >= 12 : __GNUC__ >= 11)
#define DINTATTN__HAVE_AMX 1
/* AMX (Intel's tile units, where the CPU and Linux have them): BF16 prefill on the same panels.
   A panel's pairs are the layout tdpbf16ps takes for its second operand (a tile row is 16 rows'
   pairs), and the tokens' bf16 rows are the first as they are: per 16 pairs, two tiles of 16
   tokens x 32 columns and two of 16 pairs x 16 rows make four 16 x 16 f32 products, which stay in
   tiles 0-3 over the whole row. A short chunk swaps the roles (dintattn__amx_rows_a): the weights'
   rows are the first operand where they lie, the tokens transposed the second.
   dintattn__amx_ready asks Linux for the tile state once. */
#define DINTATTN__AMX __attribute__((target("amx-tile,amx-bf16,avx512f")))

static int dintattn__amx_ready(void)
{
#if defined(__linux__) && defined(__x86_64__)
    static int state; /* 0: not asked yet, 1: usable, 2: not */
    int st = __atomic_load_n(&state, __ATOMIC_ACQUIRE);
    if (!st) {
        unsigned a, b, c, d;
        long ret = -1;
        /* CPUID.7.0:EDX bit 24 AMX-TILE, bit 22 AMX-BF16; then arch_prctl(ARCH_REQ_XCOMP_PERM,
           XFEATURE_XTILEDATA), without <unistd.h>'s syscall(), which strict C99 does not declare */
        if (__get_cpuid_count(7, 0, &a, &b, &c, &d) && (d >> 24 & 1u) && (d >> 22 & 1u))
            __asm__ volatile("syscall" : "=a"(ret) : "a"(158L), "D"(0x1023L), "S"(18L) : "rcx", "r11", "memory");
        st = ret == 0 ? 1 : 2;
        __atomic_store_n(&state, st, __ATOMIC_RELEASE);
    }
    return st == 1;
#else
    return 0;
#endif
}

/* Tiles 0-7 as 16 rows of 64 bytes (palette 1), on the calling thread until dintattn__amx_end */
DINTATTN__AMX static void dintattn__amx_begin(void)
{
    /* a static object, all 64 bytes in memory: GCC's _tile_loadconfig tells the compiler it reads
       only a pointer's worth of its operand, so stores to a local could be dropped */
    static const unsigned char cfg[64] = {1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
                                          64, 0, 64, 0, 64, 0, 64, 0, 64, 0, 64, 0, 64, 0, 64, 0,
                                          0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
                                          16, 16, 16, 16, 16, 16, 16, 16, 0, 0, 0, 0, 0, 0, 0, 0};
    _tile_loadconfig(cfg);
}

DINTATTN__AMX static void dintattn__amx_end(void) { _tile_release(); }

/* F32 activations on bf16 tiles (DINTATTN__ACT_BF16X3: BF16 weights at precision AUTO and EXACT).
   Each x is hi + mid + lo, three bf16 values: hi is x rounded to bf16, mid the rest rounded, lo
   what remains, which fits (24 bits of significand in three parts of 8; a part below bf16's
   normal range, |x| < 2^-110 or so, is flushed, as the tiles would). A bf16 weight times each part
   is exact in f32, so three tile products give f32 sums of the exact products w * x, as the f32
   panels do. Per 32 columns the row holds hi, mid and lo of them side by side (96 bf16 values:
   the three token tiles of a step read neighbouring lines), zero from `cols` up to a multiple of
   32. */
DINTATTN__BF16 static void dintattn__split_bf16x3(const float *x, int cols, uint16_t *out)
{
    int k;
    for (k = 0; k < (cols + 31) / 32 * 32; k += 16) {
        uint16_t *o = out + k / 32 * 96 + k % 32;
        const __m512 v = _mm512_maskz_loadu_ps(DINTATTN__ROWMASK(cols - k), x + k);
        const __m256i hi = (__m256i)_mm512_cvtneps_pbh(v);
        const __m512 r = _mm512_sub_ps(v, DINTATTN__WIDEN16_BF16(hi));
        const __m256i mid = (__m256i)_mm512_cvtneps_pbh(r);
        const __m256i lo = (__m256i)_mm512_cvtneps_pbh(_mm512_sub_ps(r, DINTATTN__WIDEN16_BF16(mid)));
        _mm256_storeu_si256((__m256i *)(void *)o, hi);
        _mm256_storeu_si256((__m256i *)(void *)(o + 32), mid);
        _mm256_storeu_si256((__m256i *)(void *)(o + 64), lo);
    }
}

/* DINTATTN__AMX_NT tokens against `cols` columns of a packed bf16 panel whose pairs are zero up to
   a multiple of 16: out[t * 32 + i]. The tokens' rows are ldx bytes apart and hold, per 32
   columns, `parts` groups of 32 bf16 values (1: the bf16 activations; 3: hi, mid and lo of
   dintattn__split_bf16x3), zero from the panel's columns up to a multiple of 32. Per 32 columns
   the two weight tiles stay loaded while each part passes through the token tiles into the same
   four sums; `half`: only the first 16 tokens (a short chunk's block), the others' sums zero. */
DINTATTN__AMX static void dintattn__panel_b16_amx(const void *panel, int cols, const uint16_t *x, size_t ldx, int parts,
                                                  int half, float *out)
{
    const char *pk = (const char *)panel, *xa = (const char *)x;
    int k, part;
    _tile_zero(0);
    _tile_zero(1);
    _tile_zero(2);
    _tile_zero(3);
    for (k = 0; k < cols; k += 32, pk += 16 * 128, xa += 64 * parts) {
        _tile_loadd(6, pk, 128);
        _tile_loadd(7, pk + 64, 128);
        for (part = 0; part < parts; part++) {
            _tile_loadd(4, xa + 64 * part, ldx);
            _tile_dpbf16ps(0, 4, 6);
            _tile_dpbf16ps(1, 4, 7);
            if (half) continue;
            _tile_loadd(5, xa + 64 * part + 16 * ldx, ldx);
            _tile_dpbf16ps(2, 5, 6);
            _tile_dpbf16ps(3, 5, 7);
        }
    }
    _tile_stored(0, out, 128);
    _tile_stored(1, out + 16, 128);
    _tile_stored(2, out + 16 * 32, 128);
    _tile_stored(3, out + 16 * 32 + 16, 128);
}

/* A block of DINTATTN__AMX_NT tokens' bf16 activations against 32 rows of bf16 weights over `cols`
   columns (a multiple of 32): out[i * 32 + t], row i against token t. The weights are two A tiles
   per 32 columns, 16 rows x 32 values each: rows 0-15 from w, `ldw` bytes a row, rows 16-31 from
   w + half_w, the next 32 columns kstep bytes on (dintattn__amx_rows: a matrix's own rows, or
   converted ones with each tile's 1 KiB together). The tokens are B tiles (dintattn__amx_tokens):
   per 16 tokens and 32 columns, 16 pairs of columns x 16 tokens' pairs; xt is the block's first
   at the first 32 columns, the next 32 columns 256 words on, the next 16 tokens tstep words on.
   `half`: only the first 16 tokens (a short chunk's block), the others' sums zero. Each sum takes
   the same products in the same order as with the weights in the B tiles
   (dintattn__panel_b16_amx), so the two give the same logits. */
DINTATTN__AMX static void dintattn__tiles_b16_amx(const unsigned char *w, size_t ldw, size_t half_w, size_t kstep, int cols,
                                                  const uint32_t *xt, size_t tstep, int half, float *out)
{
    int k;
    _tile_zero(0);
    _tile_zero(1);
    _tile_zero(2);
    _tile_zero(3);
    for (k = 0; k < cols; k += 32, w += kstep, xt += 256) {
        _tile_loadd(4, w, ldw);
        _tile_loadd(5, w + half_w, ldw);
        _tile_loadd(6, xt, 64);
        _tile_dpbf16ps(0, 4, 6);
        _tile_dpbf16ps(1, 5, 6);
        if (half) continue;
        _tile_loadd(7, xt + tstep, 64);
        _tile_dpbf16ps(2, 4, 7);
        _tile_dpbf16ps(3, 5, 7);
    }
    _tile_stored(0, out, 128);
    _tile_stored(1, out + 16 * 32, 128);
    _tile_stored(2, out + 16, 128);
    _tile_stored(3, out + 16 * 32 + 16, 128);
}

/* 16 tokens' bf16 rows (ldx values apart; n of them, the rest zero; zero past the columns up to a
   multiple of 32) as the B tiles of dintattn__tiles_b16_amx: per 32 columns (nk of them), the
   tokens' 16 pairs transposed to 16 pairs x 16 tokens. */
DINTATTN__AMX static void dintattn__amx_tokens(const uint16_t *x, size_t ldx, int n, size_t nk, uint32_t *o)
{
    __m512i v[16], tt[16];
    size_t k;
    int i;
    for (k = 0; k < nk; k++, o += 256) {
        for (i = 0; i < 16; i++) v[i] = i < n ? _mm512_loadu_si512(x + (size_t)i * ldx + 32 * k) : _mm512_setzero_si512();
        DINTATTN__TRANSPOSE16(v, tt);
        for (i = 0; i < 16; i++) _mm512_storeu_si512(o + 16 * i, v[i]);
    }
}

/* A 32 x 32 block of 32-bit values transposed in place: its 16 x 16 quarters, the two off the
   diagonal swapped */
DINTATTN__AVX512 static void dintattn__transpose32(float *a)
{
    __m512i v[16], u[16], tt[16];
    int q, i;
    for (q = 0; q < 2; q++) {
        float *b = a + q * (16 * 32 + 16);
        for (i = 0; i < 16; i++) v[i] = _mm512_loadu_si512(b + i * 32);
        DINTATTN__TRANSPOSE16(v, tt);
        for (i = 0; i < 16; i++) _mm512_storeu_si512(b + i * 32, v[i]);
    }
    for (i = 0; i < 16; i++) v[i] = _mm512_loadu_si512(a + 16 + i * 32), u[i] = _mm512_loadu_si512(a + 16 * 32 + i * 32);
    DINTATTN__TRANSPOSE16(v, tt);
    DINTATTN__TRANSPOSE16(u, tt);
    for (i = 0; i < 16; i++) _mm512_storeu_si512(a + 16 * 32 + i * 32, v[i]), _mm512_storeu_si512(a + 16 + i * 32, u[i]);
}

/* Q8 or Q4 rows r0..r0+31 as the bf16 panels of dintattn__pack_b16 for AMX tiles: each element
   scale * q in f32 (dintattn__elem_q8 / _q4), rounded to bf16; per block of 32 columns, 16 rows'
   bf16 pairs transposed to 16 pairs x 16 rows (DINTATTN__TRANSPOSE16; rows past the matrix: zero). */
DINTATTN__BF16 static void dintattn__pack_qb16(const dintattn__mat *M, int r0, void *panel)
{
    const size_t K = (size_t)M->cols, nb = K / 32;
    const __m512i eight = _mm512_set1_epi32(8), low = _mm512_set1_epi32(15);
    uint32_t *out = (uint32_t *)panel;
    __m512i v[16], t[16];
    size_t b;
    int j, i;
    for (j = 0; j < 2; j++)
        for (b = 0; b < nb; b++) {
            for (i = 0; i < 16; i++) {
                const int r = r0 + 16 * j + i;
                __m512 lo, hi, d;
                if (r >= M->rows) {
                    v[i] = _mm512_setzero_si512();
                    continue;
                }
                d = _mm512_set1_ps(M->scale[(size_t)r * nb + b]);
                if (M->type == DINTATTN__W_Q8) {
                    const signed char *q = (const signed char *)M->w + (size_t)r * K + 32 * b;
                    lo = _mm512_cvtepi32_ps(_mm512_cvtepi8_epi32(_mm_loadu_si128((const __m128i *)(const void *)q)));
                    hi = _mm512_cvtepi32_ps(_mm512_cvtepi8_epi32(_mm_loadu_si128((const __m128i *)(const void *)(q + 16))));
                } else { /* a block's 16 bytes: columns 0-15 in the low nibbles, 16-31 in the high */
                    const __m512i n = _mm512_cvtepu8_epi32(
                        _mm_loadu_si128((const __m128i *)(const void *)((const unsigned char *)M->w + ((size_t)r * nb + b) * 16)));
                    lo = _mm512_cvtepi32_ps(_mm512_sub_epi32(_mm512_and_si512(n, low), eight));
                    hi = _mm512_cvtepi32_ps(_mm512_sub_epi32(_mm512_srli_epi32(n, 4), eight));
                }
                v[i] = (__m512i)_mm512_cvtne2ps_pbh(_mm512_mul_ps(hi, d), _mm512_mul_ps(lo, d));
            }
            DINTATTN__TRANSPOSE16(v, t);
            for (i = 0; i < 16; i++) _mm512_storeu_si512(out + 32 * (16 * b + (size_t)i) + 16 * j, v[i]);
        }
}

/* Rows r0..r0+31 of M as bf16 over ld columns (ld >= cols, a multiple of 32), zero past the
   matrix's rows and columns, laid out as AMX's A tiles: per 32 columns, rows 0-15 then 16-31, 64
   bytes a row. BF16 as stored, F16 rounded to bf16 (dintattn__f16_as_bf16), Q8 and Q4 each element
   scale * q in f32 (dintattn__elem_q8 / _q4) rounded to bf16. */
DINTATTN__BF16 static void dintattn__rows_bf16(const dintattn__mat *M, int r0, size_t ld, uint16_t *out)
{
    const size_t K = (size_t)M->cols, nb = K / 32;
    const __m512i eight = _mm512_set1_epi32(8), low = _mm512_set1_epi32(15);
    size_t k;
    int i;
    for (i = 0; i < DINTATTN__PANEL; i++) {
        const size_t r = (size_t)r0 + (size_t)i;
        for (k = 0; k < ld; k += 32) {
            const int none = k >= K || r >= (size_t)M->rows; /* zero */
            const __mmask32 m = none ? 0 : K - k >= 32 ? 0xFFFFFFFFu : (1u << (K - k)) - 1u;
            __m512i v;
            if (M->type == DINTATTN__W_BF16 || M->type == DINTATTN__W_F16) {
                const uint16_t *w16 = (const uint16_t *)M->w + (none ? 0 : r * K + k);
                v = M->type == DINTATTN__W_BF16 ? _mm512_maskz_loadu_epi16(m, w16) : dintattn__f16_as_bf16(m, w16);
            } else if (none) {
                v = _mm512_setzero_si512();
            } else { /* Q8 / Q4: block k / 32 of the row, whole (their columns are a multiple of 32) */
                const __m512 d = _mm512_set1_ps(M->scale[r * nb + k / 32]);
                __m512 lo, hi;
                if (M->type == DINTATTN__W_Q8) {
                    const signed char *q = (const signed char *)M->w + r * K + k;
                    lo = _mm512_cvtepi32_ps(_mm512_cvtepi8_epi32(_mm_loadu_si128((const __m128i *)(const void *)q)));
                    hi = _mm512_cvtepi32_ps(_mm512_cvtepi8_epi32(_mm_loadu_si128((const __m128i *)(const void *)(q + 16))));
                } else { /* a block's 16 bytes: columns 0-15 in the low nibbles, 16-31 in the high */
                    const __m512i nq = _mm512_cvtepu8_epi32(
                        _mm_loadu_si128((const __m128i *)(const void *)((const unsigned char *)M->w + (r * nb + k / 32) * 16)));
                    lo = _mm512_cvtepi32_ps(_mm512_sub_epi32(_mm512_and_si512(nq, low), eight));
                    hi = _mm512_cvtepi32_ps(_mm512_sub_epi32(_mm512_srli_epi32(nq, 4), eight));
                }
                v = (__m512i)_mm512_cvtne2ps_pbh(_mm512_mul_ps(hi, d), _mm512_mul_ps(lo, d));
            }
            _mm512_storeu_si512(out + k * 32 + (size_t)i * 32, v); /* tile k / 32, row i */
        }
    }
}

#endif

/* The level's bf16 rows for callers without a session (the kernel tests): the CPU and the weight
   type asked per call, where a session's plan (dintattn__plan_make) asks once */
static void dintattn__dotb44_avx512(const dintattn__mat *M, size_t r, const uint16_t *const *x, float *out)
{
    if (!__builtin_cpu_supports("avx512bf16")) /* a read of what __builtin_cpu_init found */
        (M->type == DINTATTN__W_F16 ? dintattn__dotb44_f16w_fma : dintattn__dotb44_bf16_fma)(M, r, x, out);
    else if (M->type == DINTATTN__W_F16) dintattn__dotb44_f16w(M, r, x, out);
    else dintattn__dotb44_bf16(M, r, x, out);
}

static void dintattn__dotb_avx512(const dintattn__mat *M, size_t r, const uint16_t *const *x, int nt, float *out)
{
    if (!__builtin_cpu_supports("avx512bf16"))
        (M->type == DINTATTN__W_F16 ? dintattn__dotb_f16w_fma : dintattn__dotb_bf16_fma)(M, r, x, nt, out);
    else if (M->type == DINTATTN__W_F16) dintattn__dotb_f16w(M, r, x, nt, out);
    else dintattn__dotb_bf16(M, r, x, nt, out);
}

#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic pop
#endif

DINTATTN__DOTQ4_EACH(dintattn__dotq4_q8_x2, dintattn__dotq_q8_x2)
DINTATTN__DOTQ4_EACH(dintattn__dotq4_q4_x2, dintattn__dotq_q4_x2)

/* The x86 row kernels run over n - n % 32 elements of raw rows; these adapt them to a
   dintattn__mat row, finishing the tail in C. */
#define DINTATTN__ROW_DOT(name, body, ES)                                                                      \
    static float name(const dintattn__mat *M, size_t r, const float *x)                                      \
    {                                                                                                        \
        const size_t n = (size_t)M->cols, at = r * n, end = n - n % 32;                                      \
        float sum = body((const unsigned char *)M->w + at * (ES), x, end);                                   \
        size_t i;                                                                                            \
        for (i = end; i < n; i++) sum += dintattn__w_elem(M, at + i) * x[i];                                 \
        return sum;                                                                                          \
    }
#define DINTATTN__ROW_DOT64(name, body, ES)                                                                    \
    static double name(const dintattn__mat *M, size_t r, const float *x)                                     \
    {                                                                                                        \
        const size_t n = (size_t)M->cols, at = r * n, end = n - n % 32;                                      \
        double sum = body((const unsigned char *)M->w + at * (ES), M->scale ? M->scale + at / 32 : NULL, x, end); \
        size_t i;                                                                                            \
        for (i = end; i < n; i++) sum += (double)dintattn__w_elem(M, at + i) * x[i];                         \
        return sum;                                                                                          \
    }
/* ... and for four tokens (rows ldx apart), each token's tail added as the one-token wrapper adds it */
#define DINTATTN__ROW_DOT4(name, body, ES)                                                                     \
    static void name(const dintattn__mat *M, size_t r, const float *x, size_t ldx, float *out)               \
    {                                                                                                        \
        const size_t n = (size_t)M->cols, at = r * n, end = n - n % 32;                                      \
        size_t i;                                                                                            \
        int t;                                                                                               \
        body((const unsigned char *)M->w + at * (ES), x, ldx, end, out);                                     \
        for (t = 0; t < 4; t++)                                                                              \
            for (i = end; i < n; i++) out[t] += dintattn__w_elem(M, at + i) * x[(size_t)t * ldx + i];        \
    }
DINTATTN__ROW_DOT(dintattn__rowdot_f32_avx2, dintattn__dot_f32_avx2, 4)
DINTATTN__ROW_DOT(dintattn__rowdot_bf16_avx2, dintattn__dot_bf16_avx2, 2)
DINTATTN__ROW_DOT(dintattn__rowdot_f16_avx2, dintattn__dot_f16_avx2, 2)
DINTATTN__ROW_DOT(dintattn__rowdot_f32_avx512, dintattn__dot_f32_avx512, 4)
DINTATTN__ROW_DOT(dintattn__rowdot_bf16_avx512, dintattn__dot_bf16_avx512, 2)
DINTATTN__ROW_DOT(dintattn__rowdot_f16_avx512, dintattn__dot_f16_avx512, 2)
DINTATTN__ROW_DOT64(dintattn__rowdot64_f32_avx2, dintattn__dot64_f32_avx2, 4)
DINTATTN__ROW_DOT64(dintattn__rowdot64_bf16_avx2, dintattn__dot64_bf16_avx2, 2)
DINTATTN__ROW_DOT64(dintattn__rowdot64_f16_avx2, dintattn__dot64_f16_avx2, 2)
DINTATTN__ROW_DOT64(dintattn__rowdot64_q8_avx2, dintattn__dot64_q8_avx2, 1)
DINTATTN__ROW_DOT64(dintattn__rowdot64_f32_avx512, dintattn__dot64_f32_avx512, 4)
DINTATTN__ROW_DOT64(dintattn__rowdot64_bf16_avx512, dintattn__dot64_bf16_avx512, 2)
DINTATTN__ROW_DOT64(dintattn__rowdot64_f16_avx512, dintattn__dot64_f16_avx512, 2)
DINTATTN__ROW_DOT64(dintattn__rowdot64_q8_avx512, dintattn__dot64_q8_avx512, 1)
DINTATTN__ROW_DOT4(dintattn__rowdot4_f32_avx512, dintattn__dot4_f32_avx512, 4)
DINTATTN__ROW_DOT4(dintattn__rowdot4_bf16_avx512, dintattn__dot4_bf16_avx512, 2)
DINTATTN__ROW_DOT4(dintattn__rowdot4_f16_avx512, dintattn__dot4_f16_avx512, 2)

static float dintattn__rowdot_q8_avx2(const dintattn__mat *M, size_t r, const float *x)
{
    const size_t n = (size_t)M->cols;
    return dintattn__dot_q8_avx2((const signed char *)M->w + r * n, M->scale + r * n / 32, x, n);
}

static float dintattn__rowdot_q8_avx512(const dintattn__mat *M, size_t r, const float *x)
{
    const size_t n = (size_t)M->cols;
    return dintattn__dot_q8_avx512((const signed char *)M->w + r * n, M->scale + r * n / 32, x, n);
}

/* The AVX2 attention loops need rows a multiple of 8 wide; others take the portable loops. */
static void dintattn__scores_x86(float *a, const float *q, const float *K, int nk, int d, float scale)
{
    if (d % 8 == 0) dintattn__scores_avx2(a, q, K, nk, d, scale);
    else dintattn__scores(a, q, K, nk, d, scale);
}

static void dintattn__scores2_x86(float *a1, float *a2, const float *q1, const float *q2, const float *K, int nk,
                                  int d, float scale)
{
    if (d % 8 == 0) dintattn__scores2_avx2(a1, a2, q1, q2, K, nk, d, scale);
    else dintattn__scores2(a1, a2, q1, q2, K, nk, d, scale);
}

static void dintattn__wv_x86(float *o, const float *W, const float *V, int nk, int dv)
{
    if (dv % 8 == 0) dintattn__wv_avx2(o, W, V, nk, dv);
    else dintattn__wv(o, W, V, nk, dv);
}

/* W @ V in one pass over the value rows for dv a multiple of 16 up to 128 (dv / 16 accumulators
   of 16 columns; the AVX2 kernel's blocks of 64 columns read a 128-wide row twice, once per
   block): at context 1900 on bench-dint a decoded token takes 4.38 ms this way against 4.84 (Q4),
   and 7.12 against 7.57 (BF16) (examples/bench --prompt 1900). */
DINTATTN__AVX512 static void dintattn__wv_avx512(float *o, const float *W, const float *V, int nk, int dv)
{
    __m512 a[8];
    const int nv = dv / 16;
    int j, c;
    for (c = 0; c < nv; c++) a[c] = _mm512_setzero_ps();
    for (j = 0; j < nk; j++) {
        const float *v = V + (size_t)j * dv;
        const __m512 w = _mm512_set1_ps(W[j]);
        for (c = 0; c < nv; c += 4) _mm_prefetch((const char *)(v + 16 * c + (size_t)8 * dv), _MM_HINT_T0);
        for (c = 0; c < nv; c++) a[c] = _mm512_fmadd_ps(w, _mm512_loadu_ps(v + 16 * c), a[c]);
    }
    for (c = 0; c < nv; c++) _mm512_storeu_ps(o + 16 * c, a[c]);
}

static void dintattn__wv_x512(float *o, const float *W, const float *V, int nk, int dv)
{
    if (dv % 16 == 0 && dv <= 128) dintattn__wv_avx512(o, W, V, nk, dv);
    else dintattn__wv_x86(o, W, V, nk, dv);
}

/* Four queries at once (prefill attention, query by query on the pool): each key's or value's row
   is loaded once for the four, and sixteen accumulators keep both FMA pipes busy. */
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic push /* GCC 12's AVX-512 intrinsics, in C++: "__Y may be used uninitialized" */
#pragma GCC diagnostic ignored "-Wuninitialized"
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#endif

/* The sums of sixteen vectors: lane i of the result is the sum of v<i>'s lanes */
#define DINTATTN__HSUM16(r, v0, v1, v2, v3, v4, v5, v6, v7, v8, v9, v10, v11, v12, v13, v14, v15)          \
    do {                                                                                                     \
        __m512 b0_ = _mm512_add_ps(_mm512_unpacklo_ps(v0, v1), _mm512_unpackhi_ps(v0, v1));                  \
        __m512 b1_ = _mm512_add_ps(_mm512_unpacklo_ps(v2, v3), _mm512_unpackhi_ps(v2, v3));                  \
        __m512 b2_ = _mm512_add_ps(_mm512_unpacklo_ps(v4, v5), _mm512_unpackhi_ps(v4, v5));                  \
        __m512 b3_ = _mm512_add_ps(_mm512_unpacklo_ps(v6, v7), _mm512_unpackhi_ps(v6, v7));                  \
        __m512 b4_ = _mm512_add_ps(_mm512_unpacklo_ps(v8, v9), _mm512_unpackhi_ps(v8, v9));                  \
        __m512 b5_ = _mm512_add_ps(_mm512_unpacklo_ps(v10, v11), _mm512_unpackhi_ps(v10, v11));              \
        __m512 b6_ = _mm512_add_ps(_mm512_unpacklo_ps(v12, v13), _mm512_unpackhi_ps(v12, v13));              \
        __m512 b7_ = _mm512_add_ps(_mm512_unpacklo_ps(v14, v15), _mm512_unpackhi_ps(v14, v15));              \
        /* per 128-bit lane: the lane's sums of four vectors */                                              \
        const __m512 c0_ = _mm512_add_ps(_mm512_shuffle_ps(b0_, b1_, 0x44), _mm512_shuffle_ps(b0_, b1_, 0xEE)); \
        const __m512 c1_ = _mm512_add_ps(_mm512_shuffle_ps(b2_, b3_, 0x44), _mm512_shuffle_ps(b2_, b3_, 0xEE)); \
        const __m512 c2_ = _mm512_add_ps(_mm512_shuffle_ps(b4_, b5_, 0x44), _mm512_shuffle_ps(b4_, b5_, 0xEE)); \
        const __m512 c3_ = _mm512_add_ps(_mm512_shuffle_ps(b6_, b7_, 0x44), _mm512_shuffle_ps(b6_, b7_, 0xEE)); \
        const __m512 e0_ = _mm512_add_ps(_mm512_shuffle_f32x4(c0_, c1_, 0x88), _mm512_shuffle_f32x4(c0_, c1_, 0xDD)); \
        const __m512 e1_ = _mm512_add_ps(_mm512_shuffle_f32x4(c2_, c3_, 0x88), _mm512_shuffle_f32x4(c2_, c3_, 0xDD)); \
        (r) = _mm512_add_ps(_mm512_shuffle_f32x4(e0_, e1_, 0x88), _mm512_shuffle_f32x4(e0_, e1_, 0xDD));      \
    } while (0)

/* a[q * lda + j] = (Q[q] . K[j]) * scale for four queries q (rows ldq apart) and nk keys; d a
   multiple of 16. Four keys a step: a{q}{k} sums query q against key k. */
#define DINTATTN__S4_Q(q)                                                                                    \
    do {                                                                                                     \
        const __m512 x_ = _mm512_loadu_ps(Q + (size_t)(q) * ldq + c);                                        \
        a##q##0 = _mm512_fmadd_ps(x_, k0, a##q##0), a##q##1 = _mm512_fmadd_ps(x_, k1, a##q##1);              \
        a##q##2 = _mm512_fmadd_ps(x_, k2, a##q##2), a##q##3 = _mm512_fmadd_ps(x_, k3, a##q##3);              \
    } while (0)
DINTATTN__AVX512 static void dintattn__scores4_avx512(float *a, size_t lda, const float *Q, size_t ldq, const float *K,
                                                     int nk, int d, float scale)
{
    const __m512 vs = _mm512_set1_ps(scale);
    int j = 0, c, q;
    for (; j + 4 <= nk; j += 4) {
        const float *kj = K + (size_t)j * d;
        __m512 a00 = _mm512_setzero_ps(), a01 = a00, a02 = a00, a03 = a00, a10 = a00, a11 = a00, a12 = a00;
        __m512 a13 = a00, a20 = a00, a21 = a00, a22 = a00, a23 = a00, a30 = a00, a31 = a00, a32 = a00, a33 = a00;
        __m512 r;
        for (c = 0; c < d; c += 16) {
            const __m512 k0 = _mm512_loadu_ps(kj + c), k1 = _mm512_loadu_ps(kj + d + c);
            const __m512 k2 = _mm512_loadu_ps(kj + 2 * d + c), k3 = _mm512_loadu_ps(kj + 3 * d + c);
            DINTATTN__S4_Q(0);
            DINTATTN__S4_Q(1);
            DINTATTN__S4_Q(2);
            DINTATTN__S4_Q(3);
        }
        DINTATTN__HSUM16(r, a00, a01, a02, a03, a10, a11, a12, a13, a20, a21, a22, a23, a30, a31, a32, a33);
        r = _mm512_mul_ps(r, vs);
        _mm_storeu_ps(a + j, _mm512_extractf32x4_ps(r, 0));
        _mm_storeu_ps(a + lda + j, _mm512_extractf32x4_ps(r, 1));
        _mm_storeu_ps(a + 2 * lda + j, _mm512_extractf32x4_ps(r, 2));
        _mm_storeu_ps(a + 3 * lda + j, _mm512_extractf32x4_ps(r, 3));
    }
    for (q = 0; j < nk && q < 4; q++) dintattn__scores_x86(a + (size_t)q * lda + j, Q + (size_t)q * ldq, K + (size_t)j * d, nk - j, d, scale);
}

/* O[q] = W[q] @ V for four queries (rows of W ldw apart, of O ldo apart) and nk values; dv a
   multiple of 64, a pass of 64 columns: o{q}{c} holds query q's columns c0 + 16 c.. */
#define DINTATTN__WV4_Q(q)                                                                                   \
    do {                                                                                                     \
        const __m512 w_ = _mm512_set1_ps(W[(size_t)(q) * ldw + j]);                                          \
        o##q##0 = _mm512_fmadd_ps(w_, v0, o##q##0), o##q##1 = _mm512_fmadd_ps(w_, v1, o##q##1);              \
        o##q##2 = _mm512_fmadd_ps(w_, v2, o##q##2), o##q##3 = _mm512_fmadd_ps(w_, v3, o##q##3);              \
    } while (0)
#define DINTATTN__WV4_STORE(q)                                                                               \
    _mm512_storeu_ps(O + (size_t)(q) * ldo + c0, o##q##0), _mm512_storeu_ps(O + (size_t)(q) * ldo + c0 + 16, o##q##1), \
    _mm512_storeu_ps(O + (size_t)(q) * ldo + c0 + 32, o##q##2), _mm512_storeu_ps(O + (size_t)(q) * ldo + c0 + 48, o##q##3)
#define DINTATTN__WV4_LOAD(q)                                                                                \
    o##q##0 = _mm512_loadu_ps(O + (size_t)(q) * ldo + c0), o##q##1 = _mm512_loadu_ps(O + (size_t)(q) * ldo + c0 + 16), \
    o##q##2 = _mm512_loadu_ps(O + (size_t)(q) * ldo + c0 + 32), o##q##3 = _mm512_loadu_ps(O + (size_t)(q) * ldo + c0 + 48)
/* Values wider than 64 columns are taken DINTATTN__WV4_KB rows at a time, every pass over those
   rows while they are in L1, the sums carried in O between them (the same additions in the same
   order): a pass over all nk rows for each 64 columns read each row's cache lines in four strided
   sweeps. */
#define DINTATTN__WV4_KB 32
DINTATTN__AVX512 static void dintattn__wv4_avx512(float *O, size_t ldo, const float *W, size_t ldw, const float *V, int nk,
                                                 int dv)
{
    int c0, j, j0 = 0, j1;
    do {
        j1 = dv > 64 && nk - j0 > DINTATTN__WV4_KB ? j0 + DINTATTN__WV4_KB : nk;
        for (c0 = 0; c0 < dv; c0 += 64) {
            __m512 o00 = _mm512_setzero_ps(), o01 = o00, o02 = o00, o03 = o00, o10 = o00, o11 = o00, o12 = o00;
            __m512 o13 = o00, o20 = o00, o21 = o00, o22 = o00, o23 = o00, o30 = o00, o31 = o00, o32 = o00, o33 = o00;
            if (j0) DINTATTN__WV4_LOAD(0), DINTATTN__WV4_LOAD(1), DINTATTN__WV4_LOAD(2), DINTATTN__WV4_LOAD(3);
            for (j = j0; j < j1; j++) {
                const float *v = V + (size_t)j * dv + c0;
                const __m512 v0 = _mm512_loadu_ps(v), v1 = _mm512_loadu_ps(v + 16), v2 = _mm512_loadu_ps(v + 32);
                const __m512 v3 = _mm512_loadu_ps(v + 48);
                DINTATTN__WV4_Q(0);
                DINTATTN__WV4_Q(1);
                DINTATTN__WV4_Q(2);
                DINTATTN__WV4_Q(3);
            }
            DINTATTN__WV4_STORE(0), DINTATTN__WV4_STORE(1), DINTATTN__WV4_STORE(2), DINTATTN__WV4_STORE(3);
        }
    } while ((j0 = j1) < nk);
}

/* The four-query kernels where the widths allow them (0: the caller goes query by query) */
static int dintattn__scores4_x512(float *a, size_t lda, const float *Q, size_t ldq, const float *K, int nk, int d, float scale)
{
    if (d % 16) return 0;
    dintattn__scores4_avx512(a, lda, Q, ldq, K, nk, d, scale);
    return 1;
}

static int dintattn__wv4_x512(float *O, size_t ldo, const float *W, size_t ldw, const float *V, int nk, int dv)
{
    if (dv % 64) return 0;
    dintattn__wv4_avx512(O, ldo, W, ldw, V, nk, dv);
    return 1;
}

/* Decode attention straight from a BF16 / Q8 cache (DINTATTN_KV_BF16, _Q8): each row's 16
   elements at a time widened to f32 in registers and multiplied there, instead of tiles converted
   into memory and read again (dintattn__cache_rows). KS is Q8's scale per row (NULL for BF16);
   d and dv multiples of 16, dv at most 128. */
#define DINTATTN__KV16_BF16(p, i)                                                                              \
    _mm512_castsi512_ps(_mm512_slli_epi32(_mm512_cvtepu16_epi32(_mm256_loadu_si256((const __m256i *)((p) + (i)))), 16))
#define DINTATTN__KV16_Q8(p, i) _mm512_cvtepi32_ps(_mm512_cvtepi8_epi32(_mm_loadu_si128((const __m128i *)((p) + (i)))))
#define DINTATTN__KV_KERNELS(scores, wv, T, LD16)                                                            \
    DINTATTN__AVX512 static void scores(float *a, const float *q, const T *K, const float *ks, int nk, int d,    \
                                        float scale)                                                         \
    {                                                                                                        \
        const __m128 vs = _mm_set1_ps(scale);                                                                \
        const int row = d * (int)sizeof(T);                                                                  \
        int j = 0, c;                                                                                        \
        for (; j + 4 <= nk; j += 4) { /* four keys: four sums per load of q */                               \
            const T *k0 = K + (size_t)j * d;                                                                 \
            __m512 c0 = _mm512_setzero_ps(), c1 = c0, c2 = c0, c3 = c0, b0, b1;                              \
            __m256 e;                                                                                        \
            __m128 r;                                                                                        \
            for (c = 0; c < 4 * row; c += 64) _mm_prefetch((const char *)k0 + c + DINTATTN__PF_DIST, _MM_HINT_T0); \
            for (c = 0; c < d; c += 16) {                                                                    \
                const __m512 x = _mm512_loadu_ps(q + c);                                                     \
                c0 = _mm512_fmadd_ps(x, LD16(k0, c), c0), c1 = _mm512_fmadd_ps(x, LD16(k0 + d, c), c1);      \
                c2 = _mm512_fmadd_ps(x, LD16(k0 + 2 * d, c), c2), c3 = _mm512_fmadd_ps(x, LD16(k0 + 3 * d, c), c3); \
            }                                                                                                \
            b0 = _mm512_add_ps(_mm512_unpacklo_ps(c0, c1), _mm512_unpackhi_ps(c0, c1));                      \
            b1 = _mm512_add_ps(_mm512_unpacklo_ps(c2, c3), _mm512_unpackhi_ps(c2, c3));                      \
            b0 = _mm512_add_ps(_mm512_shuffle_ps(b0, b1, 0x44), _mm512_shuffle_ps(b0, b1, 0xEE));            \
            e = _mm256_add_ps(_mm512_castps512_ps256(b0), _mm256_castpd_ps(_mm512_extractf64x4_pd(_mm512_castps_pd(b0), 1))); \
            r = _mm_mul_ps(_mm_add_ps(_mm256_castps256_ps128(e), _mm256_extractf128_ps(e, 1)), vs);          \
            _mm_storeu_ps(a + j, ks ? _mm_mul_ps(r, _mm_loadu_ps(ks + j)) : r);                              \
        }                                                                                                    \
        for (; j < nk; j++) {                                                                                \
            __m512 c0 = _mm512_setzero_ps();                                                                 \
            for (c = 0; c < d; c += 16) c0 = _mm512_fmadd_ps(_mm512_loadu_ps(q + c), LD16(K + (size_t)j * d, c), c0); \
            a[j] = _mm512_reduce_add_ps(c0) * scale * (ks ? ks[j] : 1.0f);                                   \
        }                                                                                                    \
    }                                                                                                        \
    DINTATTN__AVX512 static void wv(float *o, const float *W, const T *V, const float *ks, int nk, int dv)      \
    {                                                                                                        \
        __m512 a[8];                                                                                         \
        const int nv = dv / 16, row = dv * (int)sizeof(T);                                                   \
        int j, c;                                                                                            \
        for (c = 0; c < nv; c++) a[c] = _mm512_setzero_ps();                                                 \
        for (j = 0; j < nk; j++) {                                                                           \
            const T *v = V + (size_t)j * dv;                                                                 \
            const __m512 w = _mm512_set1_ps(ks ? W[j] * ks[j] : W[j]);                                       \
            for (c = 0; c < row; c += 64) _mm_prefetch((const char *)v + c + (size_t)8 * row, _MM_HINT_T0);  \
            for (c = 0; c < nv; c++) a[c] = _mm512_fmadd_ps(w, LD16(v, 16 * c), a[c]);                        \
        }                                                                                                    \
        for (c = 0; c < nv; c++) _mm512_storeu_ps(o + 16 * c, a[c]);                                         \
    }
DINTATTN__KV_KERNELS(dintattn__scores_kvb_avx512, dintattn__wv_kvb_avx512, uint16_t, DINTATTN__KV16_BF16)
DINTATTN__KV_KERNELS(dintattn__scores_kvq_avx512, dintattn__wv_kvq_avx512, signed char, DINTATTN__KV16_Q8)

/* The kernels above where the widths allow them (0: the caller reads the cache through tiles) */
static int dintattn__scores_kv_x512(float *a, const float *q, const void *K, const float *ks, int nk, int d, float scale)
{
    if (d % 16) return 0;
    if (ks) dintattn__scores_kvq_avx512(a, q, (const signed char *)K, ks, nk, d, scale);
    else dintattn__scores_kvb_avx512(a, q, (const uint16_t *)K, NULL, nk, d, scale);
    return 1;
}

static int dintattn__wv_kv_x512(float *o, const float *W, const void *V, const float *ks, int nk, int dv)
{
    if (dv % 16 || dv > 128) return 0;
    if (ks) dintattn__wv_kvq_avx512(o, W, (const signed char *)V, ks, nk, dv);
    else dintattn__wv_kvb_avx512(o, W, (const uint16_t *)V, NULL, nk, dv);
    return 1;
}
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic pop
#endif
#endif

/* --- the kernel tables: one per level, chosen once per session ----------------------------- */

typedef struct dintattn__kernels {
    dintattn_kernels level;
    struct {                                                     /* per weight type */
        float (*dot)(const dintattn__mat *M, size_t r, const float *x);    /* row r . x */
        double (*dot64)(const dintattn__mat *M, size_t r, const float *x); /* the same, for Q/K */
        void (*to_f32)(const dintattn__mat *M, size_t at, size_t n, float *dst);
        float (*dotq)(const dintattn__mat *M, size_t r, const dintattn__xq *x); /* Q8, Q4: int8 x */
        void (*dotq4)(const dintattn__mat *M, size_t r, const dintattn__xq *x, float *out); /* 4 x */
    void (*dotq44)(const dintattn__mat *M, size_t r, const dintattn__xq *x, float *out); /* 4 rows x 4 x, or NULL */
        /* prefill on packed panels, or NULL: pack rows r0..r0+31; a block of tokens against a panel
           (int8 or bf16 activations); packf packs rows for the level's panelf (f32 activations) */
        void (*pack)(const dintattn__mat *M, int r0, void *panel);
        void (*panel)(const void *panel, int cols, const void *xblk, float *out);
        void (*packf)(const dintattn__mat *M, int r0, void *panel);
        /* row r against four tokens' f32 x (rows ldx apart): dot's four results bit for bit, or NULL */
        void (*dot4)(const dintattn__mat *M, size_t r, const float *x, size_t ldx, float *out);
    } w[DINTATTN__W_COUNT];
    /* a block of tokens against an f32 panel over a slice of columns, into double sums (see
       dintattn__panel_f32_slice), or NULL */
    void (*panelf)(const void *panel, int cols, const void *xblk, int nt, double *sum, int first, float *out);
    void (*packxf)(const float *x, size_t ldx, int n, int cols, int bf16, float *o); /* its token blocks */
    void (*scores)(float *a, const float *q, const float *K, int nk, int d, float scale);
    /* four queries' scores (rows lda apart) and W @ V (rows ldo apart): 0 where the widths do not
       suit the level (the caller goes query by query), or NULL */
    int (*scores4)(float *a, size_t lda, const float *Q, size_t ldq, const float *K, int nk, int d, float scale);
    int (*wv4)(float *O, size_t ldo, const float *W, size_t ldw, const float *V, int nk, int dv);
    void (*scores2)(float *a1, float *a2, const float *q1, const float *q2, const float *K, int nk, int d, float scale);
    void (*softmax)(float *x, int n);
    void (*integral)(double *S, const float *a1, int nk, float *G);
    void (*wv)(float *o, const float *W, const float *V, int nk, int dv);
    void (*swiglu)(float *g, const float *u, size_t n);
    /* BF16 row r against nt (1 or 4) tokens' bf16 activations x[j] (precision FAST) */
    void (*dotb)(const dintattn__mat *M, size_t r, const uint16_t *const *x, int nt, float *out);
    void (*i8_to_f32)(const signed char *q, float scale, size_t n, float *dst); /* int8 KV rows */
    void (*quantize_x)(const float *x, int n, signed char *q, float *s, float *c); /* int8 activations */
    dintattn__quantize_w_fn quantize_w;                                              /* Q8 / Q4 weights at load */
    void (*to_bf16)(const float *x, int cols, uint16_t *out); /* bf16 activations (dintattn__to_bf16) */
    /* BF16 rows r..r+3 against four tokens (out[4 i + j]), or NULL */
    void (*dotb44)(const dintattn__mat *M, size_t r, const uint16_t *const *x, float *out);
    /* one query's scores and W @ V read straight from a BF16 cache's rows (ks NULL) or a Q8
       cache's (ks: its scale per row): 0 where the widths do not suit the level, or NULL */
    int (*scores_kv)(float *a, const float *q, const void *K, const float *ks, int nk, int d, float scale);
    int (*wv_kv)(float *o, const float *W, const void *V, const float *ks, int nk, int dv);
} dintattn__kernels;

static const dintattn__kernels dintattn__kernels_portable = {
    DINTATTN_KERNELS_PORTABLE,
    {{dintattn__dot_f32_c, dintattn__dot64_f32_c, dintattn__to_f32_f32, NULL, NULL, NULL, NULL, NULL, NULL, NULL},
     {dintattn__dot_f16_c, dintattn__dot64_f16_c, dintattn__to_f32_f16_c, NULL, NULL, NULL, NULL, NULL, NULL, NULL},
     {dintattn__dot_bf16_c, dintattn__dot64_bf16_c, dintattn__to_f32_bf16_c, NULL, NULL, NULL, NULL, NULL, NULL, NULL},
     {dintattn__dot_q8_c, dintattn__dot64_q8_c, dintattn__to_f32_q8_c, dintattn__dotq_q8_c, dintattn__dotq4_q8_c, NULL, NULL, NULL, NULL, NULL},
     {dintattn__dot_q4_c, dintattn__dot64_q4_c, dintattn__to_f32_q4, dintattn__dotq_q4_c, dintattn__dotq4_q4_c, NULL, NULL, NULL, NULL, NULL}},
    NULL, NULL, dintattn__scores, NULL, NULL, dintattn__scores2, dintattn__softmax, dintattn__integral, dintattn__wv, dintattn__swiglu,
    dintattn__dotb_c, dintattn__i8_to_f32_c, dintattn__quantize_x, dintattn__quantize_w, dintattn__to_bf16, NULL, NULL, NULL};

#ifdef DINTATTN__HAVE_X86
static const dintattn__kernels dintattn__kernels_avx2 = {
    DINTATTN_KERNELS_AVX2,
    {{dintattn__rowdot_f32_avx2, dintattn__rowdot64_f32_avx2, dintattn__to_f32_f32, NULL, NULL, NULL, NULL, NULL, NULL, NULL},
     {dintattn__rowdot_f16_avx2, dintattn__rowdot64_f16_avx2, dintattn__to_f32_f16_avx2, NULL, NULL, NULL, NULL, NULL, NULL, NULL},
     {dintattn__rowdot_bf16_avx2, dintattn__rowdot64_bf16_avx2, dintattn__to_f32_bf16_avx2, NULL, NULL, NULL, NULL, NULL, NULL, NULL},
     {dintattn__rowdot_q8_avx2, dintattn__rowdot64_q8_avx2, dintattn__to_f32_q8_avx2, dintattn__dotq_q8_x2, dintattn__dotq4_q8_x2, NULL, dintattn__pack_q_avx2, dintattn__panel_q8_x2, NULL, NULL},
     {dintattn__dot_q4_c, dintattn__dot64_q4_c, dintattn__to_f32_q4, dintattn__dotq_q4_x2, dintattn__dotq4_q4_x2, NULL, dintattn__pack_q_avx2, dintattn__panel_q4_x2, NULL, NULL}},
    NULL, NULL, dintattn__scores_x86, NULL, NULL, dintattn__scores2_x86, dintattn__softmax_avx2, dintattn__integral_avx2, dintattn__wv_x86,
    dintattn__swiglu_avx2, dintattn__dotb_avx2, dintattn__i8_to_f32_avx2, dintattn__quantize_x_avx2, dintattn__quantize_w, dintattn__to_bf16,
    NULL, NULL, NULL};

/* AVX-512F for the matrix-vector products (and VNNI for int8 activations) and W @ V; the other
   attention loops stay AVX2 */
static const dintattn__kernels dintattn__kernels_avx512 = {
    DINTATTN_KERNELS_AVX512,
    {{dintattn__rowdot_f32_avx512, dintattn__rowdot64_f32_avx512, dintattn__to_f32_f32, NULL, NULL, NULL, NULL, NULL, dintattn__pack_f32, dintattn__rowdot4_f32_avx512},
     {dintattn__rowdot_f16_avx512, dintattn__rowdot64_f16_avx512, dintattn__to_f32_f16_avx2, NULL, NULL, NULL, dintattn__pack_b16, dintattn__panel_b16, dintattn__pack_f32, dintattn__rowdot4_f16_avx512},
     {dintattn__rowdot_bf16_avx512, dintattn__rowdot64_bf16_avx512, dintattn__to_f32_bf16_avx2, NULL, NULL, NULL, dintattn__pack_b16, dintattn__panel_b16, dintattn__pack_f32, dintattn__rowdot4_bf16_avx512},
     {dintattn__rowdot_q8_avx512, dintattn__rowdot64_q8_avx512, dintattn__to_f32_q8_avx2, dintattn__dotq_q8_vnni, dintattn__dotq4_q8_vnni, dintattn__dotq44_q8_vnni, dintattn__pack_q8_vnni, dintattn__panel_q_vnni, NULL, NULL},
     {dintattn__dot_q4_c, dintattn__dot64_q4_c, dintattn__to_f32_q4, dintattn__dotq_q4_vnni, dintattn__dotq4_q4_vnni, dintattn__dotq44_q4_vnni, dintattn__pack_q4_vnni, dintattn__panel_q_vnni, NULL, NULL}},
    dintattn__panel_f32_slice, dintattn__pack_xf_avx512, dintattn__scores_x86, dintattn__scores4_x512, dintattn__wv4_x512, dintattn__scores2_x86, dintattn__softmax_x512, dintattn__integral_avx2, dintattn__wv_x512,
    dintattn__swiglu_avx2, dintattn__dotb_avx512, dintattn__i8_to_f32_avx2, dintattn__quantize_x_avx512,
    dintattn__quantize_w_avx512, dintattn__to_bf16_avx512, dintattn__dotb44_avx512, dintattn__scores_kv_x512, dintattn__wv_kv_x512};
#endif

/* The table of the highest level up to `want` (AUTO: any) that this CPU runs; AMX's is AVX512's
   (the session adds the tiles, dintattn_session_new). */
static const dintattn__kernels *dintattn__kernels_for(dintattn_kernels want)
{
#ifdef DINTATTN__HAVE_X86
    unsigned a, b, c = 0, d;
    if (want == DINTATTN_KERNELS_AUTO) want = DINTATTN_KERNELS_AMX;
    __builtin_cpu_init();
    /* F16C (CPUID.1:ECX bit 29) has no __builtin_cpu_supports name in every compiler */
    if (want < DINTATTN_KERNELS_AVX2 || !__get_cpuid(1, &a, &b, &c, &d) || !(c & (1u << 29)) ||
        !__builtin_cpu_supports("avx2") || !__builtin_cpu_supports("fma"))
        return &dintattn__kernels_portable;
    if (want >= DINTATTN_KERNELS_AVX512 && __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
        __builtin_cpu_supports("avx512vl") && __builtin_cpu_supports("avx512vnni"))
        return &dintattn__kernels_avx512;
    return &dintattn__kernels_avx2;
#else
    (void)want;
    return &dintattn__kernels_portable;
#endif
}

static dintattn__load_kernels dintattn__load_kernels_for_cpu(dintattn__wtype from)
{
    const dintattn__kernels *K = dintattn__kernels_for(DINTATTN_KERNELS_AUTO);
    dintattn__load_kernels L;
    L.to_f32 = K->w[from].to_f32, L.to_bf16 = K->to_bf16, L.quantize_w = K->quantize_w;
    return L;
}


/* ============================================================================================
   6. Attention
   ============================================================================================ */

/* --- a persistent thread pool that knows nothing about the work ---------------------------
   dintattn__pool_run(p, n_units, fn, ctx) calls fn(ctx, unit, tid) once for every unit in [0,
   n_units), on the caller (tid 0) and the pool's workers (tid 1..n), and returns when all are
   done. Each thread owns a contiguous share of the units and takes them one at a time through
   its own counter, then takes what is left of the others' shares. The job ends when its last
   unit is counted, whether or not every worker woke up for it: a thread that wakes late finds its
   share taken, and only one preempted while it holds units delays the end. Workers spin briefly
   for the next job (decode runs dozens per token), then sleep. */
typedef void (*dintattn__task)(void *ctx, int64_t unit, int tid);

typedef struct dintattn__pool {
    pthread_t *threads;
    int n;                                  /* worker threads (the caller is thread 0 besides) */
    pthread_mutex_t mu;
    pthread_cond_t go, done;
    int initialised;                        /* mu, go and done exist */
    unsigned long generation;               /* atomic: moves once per job, to wake the workers */
    int started, quit, caller_waits;        /* atomic */
    /* the job: written by the caller while no unit can be taken, read after taking one */
    dintattn__task fn;
    void *ctx;
    uint64_t n_units;
    uint64_t finished;                      /* atomic: units done */
    uint64_t *claims;                       /* per thread, 64 bytes apart: next unit << 32 | end */
} dintattn__pool;

#define DINTATTN__LOAD(p) __atomic_load_n((p), __ATOMIC_ACQUIRE)
#ifndef DINTATTN__SPINS
#define DINTATTN__SPINS 4096 /* polls (with a pause each) before a thread sleeps: tens of microseconds */
#endif

static void dintattn__pause(void)
{
#if defined(__GNUC__) && (defined(__x86_64__) || defined(__i386__))
    __builtin_ia32_pause();
#endif
}

/* The next unit from `owner`'s share, or -1 when none is left. A worker still looking at an old
   job may take a unit of the next one: it reads the job after taking, so it runs the right work. */
static int64_t dintattn__take(dintattn__pool *p, int owner)
{
    uint64_t *c = p->claims + 8 * (size_t)owner, v = __atomic_load_n(c, __ATOMIC_ACQUIRE);
    for (;;) {
        uint64_t next = v >> 32, end = v & 0xFFFFFFFFu;
        if (next >= end) return -1;
        if (__atomic_compare_exchange_n(c, &v, v + ((uint64_t)1 << 32), 0, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE))
            return (int64_t)next;
    }
}

/* Thread tid's part in the current job: its own share, then what is left of the others'. The
   units it ran are counted into `finished` once, when none is left to take (one atomic add on the
   shared line per thread and job, not per unit: per unit, the two threads' adds cost decode about
   8%). The job cannot end while a thread holds units it has not counted, so all it took belong to
   one job. */
static void dintattn__work(dintattn__pool *p, int tid)
{
    const int n = p->n + 1;
    uint64_t units = 0, done = 0;
    int64_t u;
    int k;
    for (k = 0; k < n; k++)
        while ((u = dintattn__take(p, (tid + k) % n)) >= 0) {
            if (!done) units = p->n_units; /* read while a unit is held: the job cannot end */
            p->fn(p->ctx, u, tid);
            done++;
        }
    /* seq_cst on both sides: either this sees caller_waits, or the caller sees finished */
    if (done && __atomic_add_fetch(&p->finished, done, __ATOMIC_SEQ_CST) == units &&
        __atomic_load_n(&p->caller_waits, __ATOMIC_SEQ_CST)) {
        pthread_mutex_lock(&p->mu);
        pthread_cond_signal(&p->done);
        pthread_mutex_unlock(&p->mu);
    }
}

static void *dintattn__worker(void *arg)
{
    dintattn__pool *p = (dintattn__pool *)arg;
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
        dintattn__work(p, tid);
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

static void dintattn__pool_stop(dintattn__pool *p)
{
    int i;
    if (!p->initialised) return;
    __atomic_store_n(&p->quit, 1, __ATOMIC_RELEASE);
    dintattn__pool_kick(p);
    for (i = 0; i < p->n; i++) pthread_join(p->threads[i], NULL);
    DINTATTN_FREE(p->threads);
    pthread_cond_destroy(&p->done);
    pthread_cond_destroy(&p->go);
    pthread_mutex_destroy(&p->mu);
    p->initialised = 0;
}

/* Starts n_workers threads, with `claims` (8 * (n_workers + 1) words) as their counters. */
static dintattn_result dintattn__pool_start(dintattn__pool *p, int n_workers, uint64_t *claims, dintattn_error *err)
{
    int i;
    memset(p, 0, sizeof *p);
    p->claims = claims;
    if (pthread_mutex_init(&p->mu, NULL)) goto fail;
    if (pthread_cond_init(&p->go, NULL)) {
        pthread_mutex_destroy(&p->mu);
        goto fail;
    }
    if (pthread_cond_init(&p->done, NULL)) {
        pthread_cond_destroy(&p->go);
        pthread_mutex_destroy(&p->mu);
        goto fail;
    }
    p->initialised = 1;
    p->threads = (pthread_t *)dintattn__calloc((size_t)n_workers + 1, sizeof *p->threads);
    if (!p->threads) return dintattn__fail(err, DINTATTN_ERR_NOMEM, "out of memory starting threads");
    for (i = 0; i < n_workers; i++) {
        if (pthread_create(&p->threads[i], NULL, dintattn__worker, p)) goto fail;
        p->n = i + 1;
    }
    pthread_mutex_lock(&p->mu); /* wait until every worker holds its id */
    while (p->started < p->n) pthread_cond_wait(&p->done, &p->mu);
    pthread_mutex_unlock(&p->mu);
    return DINTATTN_OK;
fail:
    return dintattn__fail(err, DINTATTN_ERR_THREAD, "cannot start %d worker threads", n_workers);
}

/* Runs fn for units [0, n_units) (fewer than 2^32) on the pool, or on the caller alone when p is
   NULL or has no workers. */
static void dintattn__pool_run(dintattn__pool *p, int64_t n_units, dintattn__task fn, void *ctx)
{
    int64_t u;
    int t, i, n;
    if (n_units <= 0) return;
    if (!p || p->n == 0) {
        for (u = 0; u < n_units; u++) fn(ctx, u, 0);
        return;
    }
    DINTATTN_ASSERT((uint64_t)n_units <= 0xFFFFFFFFu);
    n = p->n + 1;
    p->fn = fn;
    p->ctx = ctx;
    p->n_units = (uint64_t)n_units;
    __atomic_store_n(&p->finished, 0, __ATOMIC_RELEASE);
    for (t = 0; t < n; t++) /* after the job's description: taking a unit acquires it */
        __atomic_store_n(p->claims + 8 * (size_t)t,
                         (uint64_t)n_units * (uint64_t)t / (uint64_t)n << 32 | (uint64_t)n_units * (uint64_t)(t + 1) / (uint64_t)n,
                         __ATOMIC_RELEASE);
    dintattn__pool_kick(p);
    dintattn__work(p, 0);
    for (i = 0; i < DINTATTN__SPINS && DINTATTN__LOAD(&p->finished) < (uint64_t)n_units; i++) dintattn__pause();
    if (DINTATTN__LOAD(&p->finished) < (uint64_t)n_units) {
        pthread_mutex_lock(&p->mu);
        __atomic_store_n(&p->caller_waits, 1, __ATOMIC_SEQ_CST);
        while (__atomic_load_n(&p->finished, __ATOMIC_SEQ_CST) < (uint64_t)n_units) pthread_cond_wait(&p->done, &p->mu);
        __atomic_store_n(&p->caller_waits, 0, __ATOMIC_SEQ_CST);
        pthread_mutex_unlock(&p->mu);
    }
}

/* --- the session: KV cache, DINT's S, scratch --------------------------------------------- */

/* One projection's cache: [n_layers][heads][n_ctx][width] values of `type` (and for Q8 one scale
   per row), head-major so that each head's keys (or values) are one contiguous stream. */
typedef struct dintattn__cache {
    void *data;
    float *scale;                           /* Q8: [n_layers][heads][n_ctx] */
    dintattn_kv_type type;
    int heads, width;
    size_t n_ctx;
} dintattn__cache;

static const size_t dintattn__kv_elem[] = {sizeof(float), sizeof(uint16_t), 1}; /* by dintattn_kv_type */

/* The index of row `pos` of head h of layer l. */
static size_t dintattn__cache_at(const dintattn__cache *kv, int l, int h, int pos)
{
    return ((size_t)l * (size_t)kv->heads + (size_t)h) * kv->n_ctx + (size_t)pos;
}

/* Stores one row (width floats) at row `pos` of head h of layer l, in the cache's type. */
static void dintattn__cache_put(const dintattn__cache *kv, int l, int h, int pos, const float *row)
{
    const size_t at = dintattn__cache_at(kv, l, h, pos), w = (size_t)kv->width;
    size_t k;
    switch (kv->type) {
    case DINTATTN_KV_F32: memcpy((float *)kv->data + at * w, row, sizeof(float) * w); break;
    case DINTATTN_KV_BF16:
        for (k = 0; k < w; k++) ((uint16_t *)kv->data + at * w)[k] = dintattn__f32_to_bf16(row[k]);
        break;
    case DINTATTN_KV_Q8: dintattn__quantize_row(row, kv->width, (signed char *)kv->data + at * w, kv->scale + at); break;
    }
}

/* Rows [j0, j0 + n) of head h of layer l in f32: the cache's own memory (F32), else converted
   into buf (n x width floats). */
static const float *dintattn__cache_rows(const dintattn__kernels *k, const dintattn__cache *kv, int l, int h, int j0,
                                         int n, float *buf)
{
    const size_t at = dintattn__cache_at(kv, l, h, j0), w = (size_t)kv->width;
    size_t r;
    switch (kv->type) {
    case DINTATTN_KV_F32: return (const float *)kv->data + at * w;
    case DINTATTN_KV_BF16: {
        dintattn__mat M;
        memset(&M, 0, sizeof M);
        M.w = kv->data, M.scale = NULL, M.rows = 0, M.cols = kv->width, M.type = DINTATTN__W_BF16;
        k->w[DINTATTN__W_BF16].to_f32(&M, at * w, (size_t)n * w, buf);
        break;
    }
    case DINTATTN_KV_Q8:
        for (r = 0; r < (size_t)n; r++)
            k->i8_to_f32((const signed char *)kv->data + (at + r) * w, kv->scale[at + r], w, buf + r * w);
        break;
    }
    return buf;
}

/* Head h of layer l's rows as stored, and (Q8) their scales in *ks (else NULL) */
static const void *dintattn__cache_raw(const dintattn__cache *kv, int l, int h, const float **ks)
{
    const size_t at = dintattn__cache_at(kv, l, h, 0);
    *ks = kv->type == DINTATTN_KV_Q8 ? kv->scale + at : NULL;
    return (const char *)kv->data + at * (size_t)kv->width * dintattn__kv_elem[kv->type];
}

/* Rows of keys or values attention converts at a time from a BF16 / Q8 cache: in decode, a tile
   that stays in L1; in prefill, a tile that keeps sgemm as efficient as on the f32 cache (one
   call per 4096 keys; at 512, prefill runs at half the f32 cache's speed at 4K context:
   examples/bench --kv bf16 --prompt 4096 against --kv f32). */
#define DINTATTN__KV_TILE 64
#ifndef DINTATTN__KV_PTILE
#define DINTATTN__KV_PTILE 4096
#endif

/* Decode jobs reading fewer bytes than this run on the calling thread alone (a hand-off costs more
   than a second thread saves). The tests define it as 0 so that every job uses the pool. */
#ifndef DINTATTN_SOLO_BYTES
#define DINTATTN_SOLO_BYTES ((size_t)256 << 10)
#endif
static const size_t dintattn__solo_bytes = DINTATTN_SOLO_BYTES;
#define DINTATTN__QB 128 /* prefill attention: queries per block */
/* DINT's S kept for dintattn_session_truncate at the last step boundary before each of this many
   parts of the context: a truncation runs at most a part and a step again, and the copies take
   (this - 1) / 2 times S's memory (checkpoint i holds i parts of each row) */
#define DINTATTN__S_CHECKPOINTS 8

/* --- the dispatch plan: which unit runs a product, worked out once per session -------------------
   A product of one weight type over a chunk of n tokens runs on one unit (the level's rows, sgemm,
   f32 / bf16 / int8 panels, AMX's tiles) on activations in one form (DINTATTN__ACT_*). The answer
   depends on the weight type, the chunk's size class, the precision, the kernel level and the CPU,
   none of which changes while a session lives, so dintattn__plan_make works every answer out when
   the session is made and the decoder and dintattn_session_prefill_unit only read them
   (dintattn__route_of), as ggml reads its type traits. Tokens of several sequences in one step are
   one chunk of that many tokens. */
enum {
    DINTATTN__N_ROWS,    /* fewer than DINTATTN__GEMM_MIN_TOKENS tokens (decode among them): rows */
    DINTATTN__N_GEMM,    /* a prompt's chunk ... */
    DINTATTN__N_LONG,    /* ... of plan.long_from tokens or more (where Q8 / Q4 may take AMX's tiles) */
    DINTATTN__N_CLASSES
};

typedef struct dintattn__route {
    int act;                                /* the activations' form (DINTATTN__ACT_*) */
    dintattn_prefill_unit unit;             /* what runs the product */
    /* packs a panel of its rows for the int8 / bf16 panels or the tiles (NULL for the others: the
       f32 panels have one packing, the level's packf) */
    void (*pack)(const dintattn__mat *M, int r0, void *panel);
} dintattn__route;

typedef struct dintattn__plan {
    dintattn__route route[DINTATTN__W_COUNT][DINTATTN__N_CLASSES];
    dintattn__route plain[DINTATTN__W_COUNT]; /* a prompt's product of a matrix too wide for the panels */
    int long_from;                          /* the first chunk length of DINTATTN__N_LONG */
    int x3;                                 /* BF16 prompts split f32 activations in three (dintattn__x3) */
    int q_tiles;                            /* some Q8 / Q4 prompt runs on the tiles (dintattn__q_tiles) */
    int prefill_f32;                        /* dintattn__prefill_f32's bits */
    int f32_blocks;                         /* a prompt packs f32 activations' token blocks (xpf) */
    int packs;                              /* a prompt packs panels (pack_ld) */
    struct {                                /* per weight type: rows against bf16 activations, with
                                               vdpbf16ps where the CPU has it, else its FMA stand-in */
        void (*dotb)(const dintattn__mat *M, size_t r, const uint16_t *const *x, int nt, float *out);
        void (*dotb44)(const dintattn__mat *M, size_t r, const uint16_t *const *x, float *out); /* or NULL */
    } w[DINTATTN__W_COUNT];
} dintattn__plan;

/* What the plan is worked out from */
typedef struct dintattn__plan_in {
    const dintattn__kernels *k;
    dintattn_precision precision;
    unsigned held;                          /* the model's held_types */
    int n_batch;
    int amx;                                /* Linux granted AMX's tiles (and the level allows them) */
    int bf16;                               /* the CPU has AVX-512 BF16 */
    int bf16_dot;                           /* its vdpbf16ps outruns the f32 FMA (dintattn__bf16_dot_pays) */
    int q_tiles_min;                        /* dintattn__q_tiles' threshold */
} dintattn__plan_in;

struct dintattn_session {
    const dintattn_model *model;
    const dintattn__kernels *k;             /* chosen at creation */
    dintattn_precision precision;
    int n_ctx, n_batch, n_threads, pos;
    size_t bytes;
    void *block;                            /* every buffer below lives in this one allocation */
    dintattn__cache k1, k2, v;              /* keys of both maps, values */
    double *S;                              /* DINT: [n_layers][H][n_ctx] running column sums of A1 */
    /* DINT, for dintattn_session_truncate: what rebuilds S at an earlier position */
    int *ids;                               /* [n_ctx] the tokens run */
    unsigned char *step_start;              /* [n_ctx] 1 where a dintattn__forward_chunk began */
    int ckpt_every, n_ckpt;                 /* checkpoint i (1..n_ckpt) is the last step boundary <= i ckpt_every */
    int *ckpt_pos;                          /* [n_ckpt + 1] its position (0: none, S is zero there) */
    double *ckpt;                           /* checkpoint i: [n_layers][H][i ckpt_every] S's first ckpt_pos[i] columns */
    double *rope_cos, *rope_sin;            /* [n_ctx][d/2] */
    /* activations of up to n_batch rows */
    float *x, *xn;                          /* [n][D]: the residual stream, normed */
    float *q1, *q2;                         /* [n][heads * d] after RoPE */
    float *v_rows;                          /* [n][n_v_heads * dv]: values before the cache */
    float *att;                             /* [n][H * dv]: the heads' outputs */
    float *lambda_rows;                     /* token lambda: [n][H] */
    float *ffn_gate, *ffn_up;               /* [n][F] */
    double *qk64;                           /* [n][heads * d] each for q1, k1, q2, k2 (before RoPE) */
    double *q_base_x, *k_base_x, *down_x;   /* Shared-DIFF factored: base x, and down x per projection */
    double *up64;                           /* [d][r]: a head's up in double, for a prompt's dgemm */
    float *rows;                            /* decode: per thread, A1, A2, W of one query (DINTATTN__ATT_ROWS n_ctx) */
    float *kvt;                             /* BF16 / Q8 cache, decode: per thread, kvt_ld floats of
                                               DINTATTN__KV_TILE rows in f32 and a row of W @ V */
    size_t kvt_ld;
    float *k_row;                           /* [n_threads][head_dim]: a key on its way to the cache */
    float *kvp;                             /* ... prefill: DINTATTN__KV_PTILE rows in f32 */
    float *blk;                             /* prefill: A1, A2, W of DINTATTN__QB queries */
    float *tile;                            /* prefill: weight rows converted for sgemm */
    size_t tile_elems;
    float *acc;                             /* prefill: [n][widest Q/K] sgemm slices */
    signed char *xq;                        /* Q8/Q4 rows, precision AUTO: [n][xq_ld] int8 activations */
    float *xq_s, *xq_c;                     /* ... and their [n][xq_ld / 32] d and c (dintattn__xq) */
    uint16_t *xb;                           /* [n][xq_ld] bf16 activations (FAST's BF16 rows, Q8/Q4 on AMX) */
    uint16_t *xb3;                          /* [n][3 * xq_ld]: three parts (dintattn__x3) */
    uint32_t *xt1;                          /* ... xb as AMX's B tiles, for a short chunk (dintattn__amx_tokens) */
    size_t xq_ld;                           /* the widest product input, a multiple of 32 */
    int32_t *xpq;                           /* prefill's packed activations (dintattn__gemm_unit): int8 ... */
    uint32_t *xpb;                          /* ... and bf16 pairs ... */
    float *xpf;                             /* ... and f32 */
    unsigned char *pack;                    /* prefill: per thread, pack_ld bytes of a packed panel */
    int amx;                                /* bf16 products on AMX tiles (dintattn__gemm_unit_amx) */
    dintattn__plan plan;                    /* which unit runs each product (dintattn__plan_make) */
    double *psum;                           /* prefill: per thread, psum_ld doubles of f32 panels' sums */
    size_t psum_ld;
    size_t pack_ld;
    uint64_t *claims;                       /* the pool's counters */
    dintattn__pool pool;
    dintattn_attn_hook hook;
    void *hook_user;
    dintattn_inspect insp;                  /* insp.row NULL: off */
    int attn_pool;                          /* prefill attention on the pool: -1 where no sgemm runs (the
                                               default), 1 always (tests), 0 never */
    float *I_row;                           /* [n_ctx]: DINT's I of an inspected row */
    struct dintattn__act *act;              /* activation statistics (dintattn_session_act_start); NULL: off */
};

static double *dintattn__S_row(const dintattn_session *s, int l, int i)
{
    return s->S + ((size_t)l * (size_t)s->model->cfg.n_heads + (size_t)i) * (size_t)s->n_ctx;
}

/* Row (l, h) of DINT's checkpoint i (dintattn_session_truncate) */
static double *dintattn__ckpt_row(const dintattn_session *s, int i, int l, int h)
{
    const size_t H = (size_t)s->model->cfg.n_heads, K = (size_t)s->ckpt_every;
    return s->ckpt + (size_t)s->model->cfg.n_layers * H * K * ((size_t)i * (size_t)(i - 1) / 2) +
           ((size_t)l * H + (size_t)h) * K * (size_t)i;
}

/* --- docs/format.md section 1, step by step ------------------------------------------------------ */

/* Where attention reads one layer's cache: tiles of `tile` rows (all `width` at once from an f32
   cache), converted into `buf` (and, in decode, a row `o_tile` of partial W @ V). */
typedef struct dintattn__kv_read {
    const dintattn__kernels *k;
    int l, width, tile;
    int rows;                               /* query by query (the decode kernels), or by sgemm */
    int heads;                              /* the rows are heads at one position (all see `width` keys) */
    float *buf, *o_tile;
    dintattn__pool *pool;                   /* prefill by sgemm: converts its tiles on the session's threads */
} dintattn__kv_read;

/* A tile's conversion shared out on the pool, DINTATTN__KV_SPLIT rows a unit. */
#define DINTATTN__KV_SPLIT 256
typedef struct dintattn__kv_convert {
    const dintattn__kv_read *rd;
    const dintattn__cache *kv;
    int h, j0, n;
} dintattn__kv_convert;

static void dintattn__kv_convert_unit(void *ctx, int64_t unit, int tid)
{
    const dintattn__kv_convert *c = (const dintattn__kv_convert *)ctx;
    const int r0 = (int)unit * DINTATTN__KV_SPLIT, n = c->n - r0 < DINTATTN__KV_SPLIT ? c->n - r0 : DINTATTN__KV_SPLIT;
    (void)tid;
    dintattn__cache_rows(c->rd->k, c->kv, c->rd->l, c->h, c->j0 + r0, n, c->rd->buf + (size_t)r0 * c->kv->width);
}

/* Rows [j0, j0 + n) of head h in f32 (dintattn__cache_rows), converted on rd's pool if it has one. */
static const float *dintattn__kv_tile(const dintattn__kv_read *rd, const dintattn__cache *kv, int h, int j0, int n)
{
    dintattn__kv_convert c;
    if (kv->type == DINTATTN_KV_F32 || !rd->pool || n <= DINTATTN__KV_SPLIT)
        return dintattn__cache_rows(rd->k, kv, rd->l, h, j0, n, rd->buf);
    c.rd = rd, c.kv = kv, c.h = h, c.j0 = j0, c.n = n;
    dintattn__pool_run(rd->pool, (n + DINTATTN__KV_SPLIT - 1) / DINTATTN__KV_SPLIT, dintattn__kv_convert_unit, &c);
    return rd->buf;
}

/* Keys of tile [j0, j0 + n) that query t of a block of nb sees (the last sees all `width`; heads
   at one position, rd->heads, all do) */
static int dintattn__keys_in_tile(const dintattn__kv_read *rd, int nb, int t, int j0, int n)
{
    const int nk = (rd->heads ? rd->width : rd->width - nb + t + 1) - j0;
    return nk < 0 ? 0 : nk < n ? nk : n;
}

/* A[t][j] = (Q[t] . K[j]) * s for nb queries (rows ldq apart, rows of A `width` apart) and the
   keys of head h each sees: query by query by the decode kernel (rd->rows), or by sgemm for a
   block (every key; the caller ignores those past a query). */
static void dintattn__scores_block(const dintattn__kv_read *rd, const dintattn__cache *kv, int h, float *A,
                                   const float *Q, int ldq, int nb, float s)
{
    const int d = kv->width;
    int j0, t, m;
    const float *ks = NULL;
    const void *raw = rd->rows && nb == 1 && kv->type != DINTATTN_KV_F32 ? dintattn__cache_raw(kv, rd->l, h, &ks) : NULL;
    if (raw && rd->k->scores_kv && rd->k->scores_kv(A, Q, raw, ks, rd->width, d, s)) /* in place */
        return;
    for (j0 = 0; j0 < rd->width; j0 += rd->tile) {
        const int n = rd->width - j0 < rd->tile ? rd->width - j0 : rd->tile;
        const float *K = dintattn__kv_tile(rd, kv, h, j0, n);
        if (!rd->rows)
            cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, nb, n, d, s, Q, ldq, K, d, 0.0f, A + j0, rd->width);
        else
            for (t = 0; t < nb; t++) {
                if ((m = dintattn__keys_in_tile(rd, nb, t, j0, n)) == 0) continue;
                if (t + 4 <= nb && rd->k->scores4 && /* four queries, as far as the last of them sees */
                    rd->k->scores4(A + (size_t)t * rd->width + j0, (size_t)rd->width, Q + (size_t)t * ldq, (size_t)ldq, K,
                                   dintattn__keys_in_tile(rd, nb, t + 3, j0, n), d, s)) {
                    t += 3;
                    continue;
                }
                rd->k->scores(A + (size_t)t * rd->width + j0, Q + (size_t)t * ldq, K, m, d, s);
            }
    }
}

/* O[t] = W[t] @ V for nb rows of W (rows `width` apart; rows of O ldo apart), V head h's values. */
static void dintattn__wv_block(const dintattn__kv_read *rd, const dintattn__cache *kv, int h, float *O, int ldo,
                               const float *W, int nb)
{
    const int dv = kv->width;
    int j0, c, t, m;
    const float *ks = NULL;
    const void *raw = rd->rows && nb == 1 && kv->type != DINTATTN_KV_F32 ? dintattn__cache_raw(kv, rd->l, h, &ks) : NULL;
    if (raw && rd->k->wv_kv && rd->k->wv_kv(O, W, raw, ks, rd->width, dv)) /* in place */
        return;
    for (j0 = 0; j0 < rd->width; j0 += rd->tile) {
        const int n = rd->width - j0 < rd->tile ? rd->width - j0 : rd->tile;
        const float *V = dintattn__kv_tile(rd, kv, h, j0, n);
        if (!rd->rows) {
            cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, nb, dv, n, 1.0f, W + j0, rd->width, V, dv,
                        j0 ? 1.0f : 0.0f, O, ldo);
            continue;
        }
        for (t = 0; t < nb; t++) {
            float *o = O + (size_t)t * ldo;
            const float *w = W + (size_t)t * rd->width + j0;
            if ((m = dintattn__keys_in_tile(rd, nb, t, j0, n)) == 0) continue;
            if (j0 == 0 && t + 4 <= nb && rd->k->wv4 && /* four queries; W is zero past each one's keys */
                rd->k->wv4(o, (size_t)ldo, w, (size_t)rd->width, V, dintattn__keys_in_tile(rd, nb, t + 3, j0, n), dv)) {
                t += 3;
                continue;
            }
            if (j0 == 0) {
                rd->k->wv(o, w, V, m, dv);
            } else { /* later tiles: their share, added */
                rd->k->wv(rd->o_tile, w, V, m, dv);
                for (c = 0; c < dv; c++) o[c] += rd->o_tile[c];
            }
        }
    }
}

/* The attention weights W of one signal head at one query position n (nk = n + 1 keys), from A1's
   scores (softmaxed here, in place) and the noise map A2 (softmaxed by the caller, once for the
   heads that share it). S is the head's running column sum of A1 (DINT). */
static void dintattn__head_weights(const dintattn__kernels *k, const dintattn_config *c, float lambda, double *S,
                                   float *A1, const float *A2, float *W, int nk, float *I_out)
{
    int j;
    k->softmax(A1, nk); /* A1 = softmax(q1 k1^T s) */
    switch (c->attention) {
    case DINTATTN_ATTN_STANDARD: /* W = A1 */
        memcpy(W, A1, sizeof(float) * (size_t)nk);
        break;
    case DINTATTN_ATTN_DIFF: /* W = A1 - lambda A2 */
        for (j = 0; j < nk; j++) W[j] = A1[j] - lambda * A2[j];
        break;
    case DINTATTN_ATTN_DINT: /* W = A1 - lambda A2 + lambda I */
        k->integral(S, A1, nk, W);                                 /* S += A1[n, :]; G = S / (n + 1) */
        if (c->integral == DINTATTN_INTEGRAL_SOFTMAX) k->softmax(W, nk); /* I = causal softmax(G), or G */
        if (I_out) memcpy(I_out, W, sizeof(float) * (size_t)nk);
        for (j = 0; j < nk; j++) W[j] = A1[j] - lambda * A2[j] + lambda * W[j];
        break;
    }
}

/* Whether dintattn_session_inspect shows head i of layer l at query position pos. */
static int dintattn__inspected(const dintattn_inspect *in, int l, int i, int pos)
{
    return (!in->layers || in->layers[l]) && (!in->heads || in->heads[i]) && pos >= in->pos_from &&
           (in->pos_to <= 0 || pos < in->pos_to);
}

/* --- activation statistics (dintattn_session_act_start) -------------------------------------- */

/* A magnitude's histogram bin is its float's bits shifted right by 16: the exponent and the top 7
   bits of the mantissa, 128 bins per power of two that rise with the value; the finite floats end
   below bin 0x7F80 (infinity's). A bin of normal floats [lo, hi) has hi - lo <= lo 2^-7, so its
   midpoint is within 2^-8 of any magnitude in it, relative. */
#define DINTATTN__ACT_BINS 0x7F80
#define DINTATTN__ACT_TOP_MAX 65536

/* One layer's and kind's running summary: counts per bin, the k largest magnitudes (a min-heap:
   top[0] is the smallest kept) and the central moments' sums of the signed values, merged a row
   at a time (Pebay's pairwise update: a row's moments about its own mean, then combined, which
   keeps the fourth moment accurate where raw power sums would cancel). */
typedef struct dintattn__act_acc {
    uint64_t *hist;
    float *top;
    int n_top;
    float least;            /* the smallest magnitude: with top[], it bounds the median's bin */
    long long n, nonfinite;
    double mean, m2, m3, m4;
} dintattn__act_acc;

struct dintattn__act {
    int k, n_layers;
    dintattn__act_acc *acc; /* [n_layers][DINTATTN_ACT_KINDS] */
    float *sorted;          /* [k]: scratch for dintattn_session_act_stats */
};

static void dintattn__top_down(float *h, int n, int i)
{
    for (;;) {
        int m = i, a = 2 * i + 1, b = a + 1;
        float t;
        if (a < n && h[a] < h[m]) m = a;
        if (b < n && h[b] < h[m]) m = b;
        if (m == i) return;
        t = h[i], h[i] = h[m], h[m] = t;
        i = m;
    }
}

static void dintattn__top_push(float *h, int n, float v) /* h holds n; v becomes the (n+1)-th */
{
    int i = n;
    h[i] = v;
    while (i > 0 && h[(i - 1) / 2] > h[i]) {
        float t = h[i];
        h[i] = h[(i - 1) / 2], h[(i - 1) / 2] = t;
        i = (i - 1) / 2;
    }
}

/* Adds the n elements x[0..n) (one row: a query's logits over its keys, a token's vector). */
static void dintattn__act_add(dintattn__act_acc *a, int k, const float *x, int n)
{
    double sum = 0, mean, nb, na, nn, delta, dn, m2 = 0, m3 = 0, m4 = 0;
    long long cnt = 0;
    int j;
#ifdef DINTATTN__ACT_TAP /* tests/test_activations.c: every recorded row, to summarize again in float64 */
    DINTATTN__ACT_TAP(a, x, n);
#endif
    for (j = 0; j < n; j++) {
        const float m = fabsf(x[j]);
        uint32_t u;
        if (!isfinite(m)) {
            a->nonfinite++;
            continue;
        }
        memcpy(&u, &m, sizeof u);
        a->hist[u >> 16]++;
        if (m < a->least || !a->n_top) a->least = m;
        if (a->n_top < k) dintattn__top_push(a->top, a->n_top++, m);
        else if (m > a->top[0]) a->top[0] = m, dintattn__top_down(a->top, k, 0);
        sum += x[j], cnt++;
    }
    if (!cnt) return;
    mean = sum / (double)cnt;
    for (j = 0; j < n; j++)
        if (isfinite(x[j])) {
            const double d = x[j] - mean, d2 = d * d;
            m2 += d2, m3 += d2 * d, m4 += d2 * d2;
        }
    na = (double)a->n, nb = (double)cnt, nn = na + nb;
    delta = mean - a->mean, dn = delta / nn;
    a->m4 += m4 + delta * dn * dn * dn * na * nb * (na * na - na * nb + nb * nb) +
             6 * dn * dn * (na * na * m2 + nb * nb * a->m2) + 4 * dn * (na * m3 - nb * a->m3);
    a->m3 += m3 + delta * dn * dn * na * nb * (na - nb) + 3 * dn * (na * m2 - nb * a->m2);
    a->m2 += m2 + delta * dn * na * nb;
    a->mean += dn * nb;
    a->n += cnt;
}

/* HeadNorm and head scale of one head's output (docs/format.md section 1). */
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
    if (c->head_scale == DINTATTN_HEAD_SCALE_ONE_MINUS_LAMBDA_INIT) {
        float sc = (float)(1.0 - L->lambda_init);
        for (k = 0; k < dv; k++) o[k] *= sc;
    }
}

/* The chunk being attended: its n tokens at positions pos0.. of layer l of session s (keys and
   values already in its cache), their rows of queries, token lambdas and heads' outputs at q1, q2,
   lambda, att: s's own rows, or a batch's stacked rows in another session (dintattn_batch_step),
   whose pool and scratch (w) then run it where they fit s's cache type and context. */
typedef struct dintattn__chunk {
    dintattn_session *s;
    dintattn_session *w;                    /* whose pool and per-thread scratch run it (s or a batch's host) */
    int l, n, pos0;
    const float *q1, *q2, *lambda;          /* [n][heads * d] ..., [n][H] (NULL: the layer's lambda) */
    float *att;                             /* [n][H * dv] */
} dintattn__chunk;

/* Heads read together in decode (dintattn__attend): DINTATTN__HEADS consecutive heads that share
   their K1 and V heads (grouped queries) take their scores and W @ V in one read of those rows
   (the level's four-query kernels), not one read a head: on the 12.7B Motif shape (32 heads, 8
   K1 / V heads, Q8) at context 2048 a decoded token takes 514 ms against 600 a head at a time,
   and a standard model of 32 heads over 8 K / V heads at context 3072 31 ms against 39.5
   (examples/bench --prompt 2048 or 3072, decode's best of 12). A unit's scratch
   (DINTATTN__ATT_ROWS rows of the context) holds their A1 and W rows. */
#define DINTATTN__ATT_ROWS (1 + 2 * DINTATTN__HEADS)

static int dintattn__heads_together(const dintattn_config *c, int i, int h1)
{
    const int last = i + DINTATTN__HEADS - 1;
    return last < h1 && dintattn__same_kv(c, i, last) ? DINTATTN__HEADS : 1;
}

/* Attention of signal heads [h0, h1) (a run sharing one noise head) for queries t0 .. t0+nb of
   the chunk: A2 once for the run, then per head (or, for one query, per group of heads sharing
   K1 and V: dintattn__heads_together) A1, W (dintattn__head_weights), W @ V, HeadNorm. `A` is
   scratch for max(nb, DINTATTN__HEADS) + 2 nb rows of (keys the last query sees) floats; kvt
   (decode) or kvp (prefill) holds the tiles a BF16 / Q8 cache is read through. */
static void dintattn__attend(const dintattn__chunk *ch, int h0, int h1, int t0, int nb, float *A, float *kvt, int rows)
{
    dintattn_session *s = ch->s;
    const dintattn__kernels *k = s->k;
    const dintattn_config *c = &s->model->cfg;
    const dintattn__layer *L = &s->model->layers[ch->l];
    const int H = c->n_heads, d = c->head_dim, dv = c->v_head_dim, l = ch->l;
    const int width = ch->pos0 + t0 + nb; /* keys the block's last query sees */
    const float scale = (float)(1.0 / sqrt((double)d));
    float *A1 = A, *A2 = A + (size_t)(nb > DINTATTN__HEADS ? nb : DINTATTN__HEADS) * width, *W = A2 + (size_t)nb * width;
    /* shared_k, one query, one head: both maps' scores in one read of the keys */
    const int fused = c->shared_k && nb == 1 && h1 == h0 + 1 &&
                      dintattn__head_of(h0, c->n_k1_heads, H) == dintattn__head_of(h0, c->n_k2_heads, H);
    dintattn__kv_read rd;
    int i, t, j, g;
    rd.k = k, rd.l = l, rd.width = width, rd.buf = kvt; /* kvt is NULL with an f32 cache, read in place */
    rd.heads = 0;
    rd.o_tile = kvt ? kvt + (size_t)DINTATTN__KV_TILE * (size_t)(d > dv ? d : dv) : NULL;
    rd.tile = s->k1.type == DINTATTN_KV_F32 ? width : rows ? DINTATTN__KV_TILE : DINTATTN__KV_PTILE;
    rd.rows = rows;
    rd.pool = rows ? NULL : &ch->w->pool; /* query by query runs on the pool's threads already */
    if (c->attention != DINTATTN_ATTN_STANDARD) { /* A2 = softmax(q2 k2^T s) */
        const int q2h = dintattn__head_of(h0, c->n_q2_heads, H), k2h = dintattn__head_of(h0, c->n_k2_heads, H);
        const float *q2 = ch->q2 + ((size_t)t0 * c->n_q2_heads + q2h) * d, *q1 = ch->q1 + ((size_t)t0 * H + h0) * d;
        int j0;
        for (j0 = 0; fused && j0 < width; j0 += rd.tile) {
            const int n = width - j0 < rd.tile ? width - j0 : rd.tile;
            k->scores2(A1 + j0, A2 + j0, q1, q2, dintattn__kv_tile(&rd, &s->k2, k2h, j0, n), n, d, scale);
        }
        if (!fused) dintattn__scores_block(&rd, &s->k2, k2h, A2, q2, c->n_q2_heads * d, nb, scale);
        for (t = 0; t < nb; t++) {
            if (s->act) /* the noise map's logits, once for the run of heads sharing it */
                dintattn__act_add(&s->act->acc[(size_t)l * DINTATTN_ACT_KINDS + DINTATTN_ACT_LOGITS2], s->act->k,
                                  A2 + (size_t)t * width, width - nb + t + 1);
            k->softmax(A2 + (size_t)t * width, width - nb + t + 1);
        }
    }
    for (i = h0; i < h1; i += g) {
        /* g heads at once (one query), their rows of A1 and W j = 0..g-1; else one, rows t */
        g = nb == 1 && rows && !fused ? dintattn__heads_together(c, i, h1) : 1;
        rd.heads = g > 1;
        if (!fused)
            dintattn__scores_block(&rd, &s->k1, dintattn__head_of(i, c->n_k1_heads, H), A1,
                                   ch->q1 + ((size_t)t0 * H + i) * d, g > 1 ? d : H * d, g > 1 ? g : nb, scale);
        for (j = 0; j < g; j++)
            for (t = 0; t < nb; t++) {
                const int nk = width - nb + t + 1, pos = nk - 1, h = i + j;
                const float lambda = ch->lambda ? ch->lambda[(size_t)(t0 + t) * H + h] : (float)L->lambda;
                float *a1 = A1 + (size_t)(j + t) * width, *w = W + (size_t)(j + t) * width;
                const int shown = s->insp.row && dintattn__inspected(&s->insp, l, h, pos);
                if (s->act) /* the logits over the keys the query sees, before the softmax */
                    dintattn__act_add(&s->act->acc[(size_t)l * DINTATTN_ACT_KINDS + DINTATTN_ACT_LOGITS1], s->act->k,
                                      a1, nk);
                dintattn__head_weights(k, c, lambda, s->S ? dintattn__S_row(s, l, h) : NULL, a1, A2 + (size_t)t * width, w,
                                       nk, shown ? s->I_row : NULL);
                if (s->hook) s->hook(s->hook_user, l, h, pos, w, nk);
                if (shown) {
                    dintattn_attn_row r;
                    const int diff = c->attention != DINTATTN_ATTN_STANDARD;
                    r.layer = l, r.head = h, r.pos = pos, r.n_keys = nk, r.lambda = diff ? lambda : 0.0f;
                    r.A1 = a1, r.A2 = diff ? A2 + (size_t)t * width : NULL, r.W = w;
                    r.integral = c->attention == DINTATTN_ATTN_DINT ? s->I_row : NULL;
                    s->insp.row(s->insp.user, &r);
                }
                memset(w + nk, 0, sizeof(float) * (size_t)(width - nk)); /* the future: for the block's W @ V */
            }
        dintattn__wv_block(&rd, &s->v, dintattn__head_of(i, c->n_v_heads, H), ch->att + ((size_t)t0 * H + i) * dv,
                           g > 1 ? dv : H * dv, W, g > 1 ? g : nb);
        for (j = 0; j < g; j++)
            for (t = 0; t < nb; t++) dintattn__head_post(c, L, i + j, ch->att + ((size_t)(t0 + t) * H + i + j) * dv);
    }
}

/* Decode: a unit is a run of heads sharing A2, on thread tid's rows. */
static void dintattn__attend_unit(void *ctx, int64_t unit, int tid)
{
    const dintattn__chunk *ch = (const dintattn__chunk *)ctx;
    const dintattn_model *m = ch->s->model;
    const dintattn_session *w = ch->w;
    dintattn__attend(ch, m->noise_run[unit], m->noise_run[unit + 1], 0, 1,
                     w->rows + (size_t)tid * DINTATTN__ATT_ROWS * (size_t)w->n_ctx,
                     w->kvt ? w->kvt + (size_t)tid * w->kvt_ld : NULL, 1);
}

/* A batch's decoded tokens that attend on one pool (each chunk's w): unit u is run u % n_runs of
   chunk u / n_runs, so the threads share out every (sequence, run of heads) at once. */
typedef struct dintattn__decodes {
    const dintattn__chunk *ch;
    int count;
} dintattn__decodes;

static void dintattn__decodes_unit(void *ctx, int64_t unit, int tid)
{
    const dintattn__decodes *j = (const dintattn__decodes *)ctx;
    const int runs = j->ch[0].s->model->n_noise_runs;
    dintattn__attend_unit((void *)&j->ch[unit / runs], unit % runs, tid);
}

/* Prefill: a unit is a run of heads sharing A2, for the block of queries t0.., query by query on
   thread tid's scratch. */
typedef struct dintattn__block {
    const dintattn__chunk *ch;
    int t0, nb;
} dintattn__block;

static void dintattn__attend_block_unit(void *ctx, int64_t unit, int tid)
{
    const dintattn__block *b = (const dintattn__block *)ctx;
    const dintattn_session *s = b->ch->w;
    dintattn__attend(b->ch, s->model->noise_run[unit], s->model->noise_run[unit + 1], b->t0, b->nb,
                     s->blk + (size_t)tid * 3 * DINTATTN__QB * (size_t)s->n_ctx,
                     s->kvt ? s->kvt + (size_t)tid * s->kvt_ld : NULL, 1);
}

/* The activations a product's rows multiply (the session's plan picks): f32 as they are, int8
   (Q8/Q4 rows; precision AUTO or FAST), or rounded to bf16 (BF16 rows; precision FAST); on AMX
   tiles also f32 split exactly into three bf16 parts (dintattn__split_bf16x3; BF16 rows of a
   prompt at AUTO and EXACT), and on the f32 panels bf16 ones widened back to f32 (a prompt's
   FAST products where vdpbf16ps does not outrun the f32 FMA): see dintattn__route_make. */
enum { DINTATTN__ACT_F32, DINTATTN__ACT_INT8, DINTATTN__ACT_BF16, DINTATTN__ACT_BF16X3, DINTATTN__ACT_BF16_F32,
       DINTATTN__ACT_COUNT };

static int dintattn__act_of(const dintattn__plan_in *in, dintattn__wtype type)
{
    if (in->precision == DINTATTN_PRECISION_EXACT) return DINTATTN__ACT_F32;
    if (in->k->w[type].dotq) return DINTATTN__ACT_INT8;
    return in->precision == DINTATTN_PRECISION_FAST && (type == DINTATTN__W_BF16 || type == DINTATTN__W_F16)
               ? DINTATTN__ACT_BF16
               : DINTATTN__ACT_F32;
}

/* Whether a prompt's Q8 / Q4 products run on AMX's bf16 tiles (each weight rounded to bf16, times
   activations rounded to bf16) instead of int8 activations: at AUTO and FAST where the session has
   tiles. There the products are both faster and closer to EXACT's than with int8 activations: the
   shipped model at Q8, 107 tokens of Genesis, logits' relative RMS error 0.0031 against int8's
   0.0068, KL 6.6e-6 against 5.2e-5 (test_q8_tiles_beat_int8_on_a_trained_model); a 2.7B Q8
   prompt of 512 tokens runs 234-240 tok/s against 158 (examples/bench --weights q8 --prompt 512
   on a Xeon with AMX; docs/performance.md). But only for a chunk of DINTATTN__Q_TILES_MIN tokens
   or more: each prompt converts every weight to bf16 for the tiles (dintattn__pack_qb16,
   dintattn__rows_bf16), which a short chunk does not earn back; at 2.7B, prompts of 8-40 tokens
   run 1.1-1.7x faster on the int8 panels, 48 and 64 the same or slower (examples/bench --weights
   q8 --prompt N). Decode keeps int8 activations: one token reads every weight once, and int8
   keeps that memory-bound. */
#ifndef DINTATTN__Q_TILES_MIN
#define DINTATTN__Q_TILES_MIN 48
#endif

/* (the threshold is in->q_tiles_min: dintattn_session_options.tiles_min_tokens, or the above) */
static int dintattn__q_tiles(const dintattn__plan_in *in, int n)
{
    return in->amx && in->precision != DINTATTN_PRECISION_EXACT && n >= in->q_tiles_min;
}

/* Whether a prompt's BF16 products multiply f32 activations split into three bf16 parts on AMX's
   tiles (dintattn__split_bf16x3; precision AUTO and EXACT where the session has tiles) */
static int dintattn__x3(const dintattn__plan_in *in)
{
    return in->amx && in->precision != DINTATTN_PRECISION_FAST && in->n_batch > 1 && in->held >> DINTATTN__W_BF16 & 1u;
}

/* Whether the level runs f32-activation products of `type` weights on its f32 panels */
static int dintattn__f32_panels(const dintattn__plan_in *in, dintattn__wtype type)
{
    return in->k->panelf && in->k->w[type].packf;
}

/* Whether this CPU's vdpbf16ps outruns its f32 FMA, so that bf16 activations pay on the bf16
   panels. AMD's do: Zen 4 and Zen 5 issue a 512-bit vdpbf16ps (32 products) as often as a
   512-bit FMA (16), and on a Zen 5 EPYC the bf16 dot's register-only peak is 1.7x the FMA's.
   Intel's do not: on a Xeon with AMX (2 threads) 245 against 488 GFLOP/s, and FAST's BF16
   prompt on the bf16 panels 960 tok/s against 1430 on the f32 panels (the 2.7B 42.8 against
   56.2). examples/bench's peak and prefill measure both (--weights bf16 --precision fast; model
   from tools/make_model.py --preset bench-standard). A session asks once, when it is made (CPUID can
   cost microseconds in a virtual machine); dintattn_session_options.bf16_dot lets the tests run
   both roads on one machine. */
static int dintattn__bf16_dot_pays(void)
{
#ifdef DINTATTN__HAVE_X86
    unsigned a, b, c, d;
    if (!__builtin_cpu_supports("avx512bf16") || !__get_cpuid(0, &a, &b, &c, &d)) return 0;
    /* the vendor string, in EBX, EDX, ECX: "AuthenticAMD" or Hygon's "HygonGenuine" */
    return (b == 0x68747541u && d == 0x69746e65u && c == 0x444d4163u) || (b == 0x6f677948u && d == 0x6e65476eu && c == 0x656e6975u);
#else
    return 0;
#endif
}

/* Whether a prompt's products of `type` weights multiply FAST's bf16 activations on the f32
   panels (DINTATTN__ACT_BF16_F32: each rounded to bf16 as dintattn__to_bf16 rounds, then widened
   exactly, so that the products are those of the bf16 panels and of decode) instead of on the
   bf16 panels or rows: BF16 weights where there are no AMX tiles and vdpbf16ps does not outrun
   the FMA (or is missing). Not F16 weights, which FAST rounds to bf16 (the f32 panels widen them
   as they are), nor beside F32 weights, whose f32 activations the same token blocks hold. */
static int dintattn__bf16_on_f32_panels(const dintattn__plan_in *in, dintattn__wtype type)
{
    return type == DINTATTN__W_BF16 && !in->amx && !in->bf16_dot && dintattn__act_of(in, type) == DINTATTN__ACT_BF16 &&
           dintattn__f32_panels(in, type) && !(in->held >> DINTATTN__W_F32 & 1u);
}

/* The held types whose matrices a prompt multiplies with f32 activations: bit 0 on the level's
   f32 panels (dintattn__gemm_unit), bit 1 by sgemm; with sgemm OpenBLAS's idle threads spin
   between calls, and attention stays on sgemm beside them (dintattn__attention). */
static int dintattn__prefill_f32(const dintattn__plan_in *in)
{
    int t, f = 0;
    for (t = 0; t < DINTATTN__W_COUNT; t++)
        if (in->held >> t & 1u && dintattn__act_of(in, (dintattn__wtype)t) == DINTATTN__ACT_F32 &&
            !(t == DINTATTN__W_BF16 && dintattn__x3(in))) /* BF16 on AMX tiles instead (dintattn__route_make) */
            f |= dintattn__f32_panels(in, (dintattn__wtype)t) ? 1 : 2;
        else if (in->held >> t & 1u && dintattn__bf16_on_f32_panels(in, (dintattn__wtype)t))
            f |= 1;
    return f;
}

/* Whether a prompt packs panels: f32 activations' on the f32 panels, int8 ones (Q8 / Q4 held),
   FAST's bf16 ones (BF16 / F16 held), or three parts for the tiles; dintattn__session_layout gives
   them their buffers */
static int dintattn__plan_packs(const dintattn__plan_in *in)
{
    const unsigned int8 = 1u << DINTATTN__W_Q8 | 1u << DINTATTN__W_Q4, half = 1u << DINTATTN__W_BF16 | 1u << DINTATTN__W_F16;
    return in->n_batch > 1 && (dintattn__prefill_f32(in) & 1 || in->held & int8 ||
                               (in->precision == DINTATTN_PRECISION_FAST && in->held & half) || dintattn__x3(in));
}

/* Where a chunk of n tokens runs its products of `type` weights, and on which activations
   (dintattn__act_of's, except that Q8/Q4 products on AMX tiles, dintattn__q_tiles, multiply bf16:
   their weights rounded to bf16 as dintattn__pack_qb16 and dintattn__rows_bf16 convert them).
   Fewer than DINTATTN__GEMM_MIN_TOKENS run on the level's rows; a prompt's products without
   panels on rows (int8, bf16) or sgemm (f32). */
static dintattn__route dintattn__route_make(const dintattn__plan_in *in, dintattn__wtype type, int n)
{
    const int f32_blocks = in->n_batch > 1 && dintattn__prefill_f32(in) & 1;
    dintattn__route r;
    r.act = dintattn__act_of(in, type);
    r.unit = r.act == DINTATTN__ACT_F32 && n >= DINTATTN__GEMM_MIN_TOKENS ? DINTATTN_PREFILL_SGEMM : DINTATTN_PREFILL_ROWS;
    r.pack = NULL;
    if (!dintattn__plan_packs(in) || n < DINTATTN__GEMM_MIN_TOKENS) return r;
#ifdef DINTATTN__HAVE_AMX
    /* BF16 weights times f32 activations in three bf16 parts: three tile products, each exact
       before the f32 sums; about 2x the f32 panels' prompt at 2.7B (examples/bench --weights
       bf16 --precision exact, --kernels amx against avx512; docs/performance.md) */
    if (r.act == DINTATTN__ACT_F32 && type == DINTATTN__W_BF16 && dintattn__x3(in)) {
        r.act = DINTATTN__ACT_BF16X3, r.unit = DINTATTN_PREFILL_AMX_BF16X3, r.pack = in->k->w[type].pack;
        return r;
    }
#endif
    if (f32_blocks && dintattn__bf16_on_f32_panels(in, type)) {
        r.act = DINTATTN__ACT_BF16_F32, r.unit = DINTATTN_PREFILL_F32_PANELS;
        return r;
    }
    if (r.act == DINTATTN__ACT_F32 ? !f32_blocks || !dintattn__f32_panels(in, type) : !in->k->w[type].panel) return r;
#ifdef DINTATTN__HAVE_X86
    if (r.act == DINTATTN__ACT_BF16 && !in->bf16) return r;
#endif
#ifdef DINTATTN__HAVE_AMX
    /* int8 sums scaled per block of 32 do not pay on tiles: each block's 16 x 16 sums leave the
       tiles through memory to be scaled in vector registers, and a microbenchmark of that
       (tdpbssd on blocks of 32) runs only 1.2-1.3x the VNNI panel: the core does not overlap
       the tile work with the vector scaling (alone 860-1240 and 1760-1900 GOP/s, together
       525-690, however far behind the tiles the scaling runs; with one 16 x 16 block's sums
       scaled into registers 300-380 GMAC/s a core, the panel 294). Q8/Q4
       prompts take the bf16 tiles instead (dintattn__q_tiles). */
    if (r.act == DINTATTN__ACT_BF16 ? in->amx : r.act == DINTATTN__ACT_INT8 && dintattn__q_tiles(in, n)) {
        /* Q8 / Q4 weights rounded to bf16 as they are packed */
        r.pack = r.act == DINTATTN__ACT_INT8 ? dintattn__pack_qb16 : in->k->w[type].pack;
        r.act = DINTATTN__ACT_BF16, r.unit = DINTATTN_PREFILL_AMX_BF16;
        return r;
    }
#endif
    r.unit = r.act == DINTATTN__ACT_INT8   ? DINTATTN_PREFILL_INT8_PANELS
             : r.act == DINTATTN__ACT_BF16 ? DINTATTN_PREFILL_BF16_PANELS
                                           : DINTATTN_PREFILL_F32_PANELS;
    r.pack = r.act == DINTATTN__ACT_F32 ? NULL : in->k->w[type].pack;
    return r;
}

/* Works out the session's plan: each weight type's route in each size class (a route depends on n
   only through the class), and what the session's layout holds for them. */
static void dintattn__plan_make(dintattn__plan *p, const dintattn__plan_in *in)
{
    int t;
    memset(p, 0, sizeof *p);
    p->long_from = in->q_tiles_min > DINTATTN__GEMM_MIN_TOKENS ? in->q_tiles_min : DINTATTN__GEMM_MIN_TOKENS;
    for (t = 0; t < DINTATTN__W_COUNT; t++) {
        p->route[t][DINTATTN__N_ROWS] = dintattn__route_make(in, (dintattn__wtype)t, 1);
        p->route[t][DINTATTN__N_GEMM] = dintattn__route_make(in, (dintattn__wtype)t, DINTATTN__GEMM_MIN_TOKENS);
        p->route[t][DINTATTN__N_LONG] = dintattn__route_make(in, (dintattn__wtype)t, p->long_from);
        p->plain[t].act = dintattn__act_of(in, (dintattn__wtype)t);
        p->plain[t].unit = p->plain[t].act == DINTATTN__ACT_F32 ? DINTATTN_PREFILL_SGEMM : DINTATTN_PREFILL_ROWS;
        p->w[t].dotb = in->k->dotb, p->w[t].dotb44 = in->k->dotb44;
    }
#ifdef DINTATTN__HAVE_X86
    if (in->k->level == DINTATTN_KERNELS_AVX512) { /* its dotb and dotb44 ask the CPU per row (for callers without a plan) */
        p->w[DINTATTN__W_BF16].dotb = in->bf16 ? dintattn__dotb_bf16 : dintattn__dotb_bf16_fma;
        p->w[DINTATTN__W_BF16].dotb44 = in->bf16 ? dintattn__dotb44_bf16 : dintattn__dotb44_bf16_fma;
        p->w[DINTATTN__W_F16].dotb = in->bf16 ? dintattn__dotb_f16w : dintattn__dotb_f16w_fma;
        p->w[DINTATTN__W_F16].dotb44 = in->bf16 ? dintattn__dotb44_f16w : dintattn__dotb44_f16w_fma;
    }
#endif
    p->x3 = dintattn__x3(in);
    p->q_tiles = dintattn__q_tiles(in, INT_MAX);
    p->prefill_f32 = dintattn__prefill_f32(in);
    p->f32_blocks = in->n_batch > 1 && p->prefill_f32 & 1;
    p->packs = dintattn__plan_packs(in);
}

/* The route of a chunk of n tokens' products of `type` weights */
static const dintattn__route *dintattn__route_of(const dintattn_session *s, dintattn__wtype type, int n)
{
    return &s->plan.route[type][n < DINTATTN__GEMM_MIN_TOKENS ? DINTATTN__N_ROWS
                                : n < s->plan.long_from       ? DINTATTN__N_GEMM
                                                              : DINTATTN__N_LONG];
}

static int dintattn__on_amx(dintattn_prefill_unit u) { return u == DINTATTN_PREFILL_AMX_BF16 || u == DINTATTN_PREFILL_AMX_BF16X3; }
/* ... on packed panels or tiles */
static int dintattn__on_panels(dintattn_prefill_unit u) { return u != DINTATTN_PREFILL_ROWS && u != DINTATTN_PREFILL_SGEMM; }

/* Whether a chunk of n tokens multiplies some matrix by sgemm (dintattn__products: f32 activations
   without f32 panels, DINTATTN__GEMM_MIN_TOKENS tokens or more) */
static int dintattn__prefill_sgemm(const dintattn_session *s, int n)
{
    return n >= DINTATTN__GEMM_MIN_TOKENS && s->plan.prefill_f32 >> 1 & 1;
}

/* Attention of the chunk: one token's heads shared out on the pool (small caches on the caller
   alone); a prompt's queries in blocks of DINTATTN__QB, and for each block either the runs of
   heads on the pool, query by query, or (where the products use OpenBLAS, whose idle threads
   would spin against the pool's, or for hooks and inspection) each head's scores and W @ V one
   sgemm on OpenBLAS's threads, the softmaxes and DINT's S row by row in order. */
/* Bytes of the cache a decoded token of the chunk reads (small ones attend on the caller alone) */
static size_t dintattn__decode_reads(const dintattn__chunk *ch)
{
    const dintattn__cache *kv[3];
    size_t bytes = 0;
    int c;
    kv[0] = &ch->s->k1, kv[1] = &ch->s->k2, kv[2] = &ch->s->v;
    for (c = 0; c < 3; c++)
        bytes += dintattn__kv_elem[kv[c]->type] * (size_t)(ch->pos0 + 1) * (size_t)kv[c]->heads * (size_t)kv[c]->width;
    return bytes;
}

static void dintattn__attention(dintattn__chunk *ch)
{
    dintattn_session *s = ch->s;
    const dintattn_model *m = s->model;
    int t0, nb, run;
    if (ch->n == 1) {
        /* hooks, inspection and activation statistics see their rows on the calling thread, in order */
        dintattn__pool_run(dintattn__decode_reads(ch) < dintattn__solo_bytes || s->hook || s->insp.row || s->act
                               ? NULL
                               : &ch->w->pool,
                           m->n_noise_runs, dintattn__attend_unit, ch);
        return;
    }
    for (t0 = 0; t0 < ch->n; t0 += nb) {
        nb = ch->n - t0 < DINTATTN__QB ? ch->n - t0 : DINTATTN__QB;
        if (s->hook || s->insp.row || s->act ||
            !(s->attn_pool < 0 ? !dintattn__prefill_sgemm(s, ch->n) : s->attn_pool)) {
            for (run = 0; run < m->n_noise_runs; run++)
                dintattn__attend(ch, m->noise_run[run], m->noise_run[run + 1], t0, nb, ch->w->blk, ch->w->kvp, 0);
        } else {
            dintattn__block b;
            b.ch = ch, b.t0 = t0, b.nb = nb;
            dintattn__pool_run(&ch->w->pool, m->n_noise_runs, dintattn__attend_block_unit, &b);
        }
    }
}

/* ============================================================================================
   7. The decoder step (prefill / decode)
   ============================================================================================ */

/* Bytes of keys, values (in `kv`'s type, with Q8's row scales) and DINT's S (double) that one
   position of the context holds in every layer: the session's cache, and what a decoded token
   reads per position before it. */
static size_t dintattn__kv_bytes_per_pos(const dintattn_config *c, dintattn_kv_type kv)
{
    const size_t k_heads = (size_t)(c->n_k1_heads + (c->shared_k ? 0 : c->n_k2_heads));
    size_t per = dintattn__kv_elem[kv] * (k_heads * (size_t)c->head_dim + (size_t)c->n_v_heads * (size_t)c->v_head_dim);
    if (kv == DINTATTN_KV_Q8) per += sizeof(float) * (k_heads + (size_t)c->n_v_heads);
    if (c->attention == DINTATTN_ATTN_DINT) per += sizeof(double) * (size_t)c->n_heads;
    return per * (size_t)c->n_layers;
}

DINTATTN_API double dintattn_model_kv_bytes(const dintattn_model *m, int n_tokens)
{
    return (double)dintattn__kv_bytes_per_pos(&m->cfg, DINTATTN_KV_F32) * (n_tokens > 0 ? n_tokens : 0);
}

DINTATTN_API double dintattn_session_kv_bytes(const dintattn_session *s, int n_tokens)
{
    return (double)dintattn__kv_bytes_per_pos(&s->model->cfg, s->k1.type) * (n_tokens > 0 ? n_tokens : 0);
}

/* Carves the session's buffers out of one block (pass base = NULL to measure it). Every count
   is a product of config sizes and n_ctx / n_batch, multiplied with overflow checks. */
static size_t dintattn__session_layout(dintattn_session *s, unsigned char *base, int *overflow)
{
    const dintattn_config *c = &s->model->cfg;
    const size_t Lr = (size_t)c->n_layers, T = (size_t)s->n_ctx, B = (size_t)s->n_batch;
    const size_t d = (size_t)c->head_dim, dv = (size_t)c->v_head_dim, r = (size_t)c->qk_rank;
    const size_t nq = (size_t)c->n_heads + (size_t)c->n_q2_heads;
    const size_t nk = (size_t)c->n_k1_heads + (c->shared_k ? 0 : (size_t)c->n_k2_heads), half = (size_t)c->rope_dim / 2;
    const int factored = s->model->qk_factored, dint = c->attention == DINTATTN_ATTN_DINT;
    const int token_lambda = c->attention != DINTATTN_ATTN_STANDARD && c->lambda_mode == DINTATTN_LAMBDA_TOKEN_SIGMOID;
    size_t off = 0;
#define DINTATTN__MUL3(a, b, c_) dintattn__mul(dintattn__mul((a), (b), overflow), (c_), overflow)
#define DINTATTN__CARVE(ptr, type, count)                                                                      \
    do {                                                                                                       \
        size_t bytes_ = dintattn__mul((count), sizeof(type), overflow);                                        \
        off = (off + 63) & ~(size_t)63;                                                                        \
        if (base) (ptr) = bytes_ ? (type *)(void *)(base + off) : NULL;                                        \
        if (off + bytes_ < off) *overflow = 1;                                                                 \
        off += bytes_;                                                                                         \
    } while (0)
    {
        const size_t e = dintattn__kv_elem[s->k1.type], q8 = s->k1.type == DINTATTN_KV_Q8;
        DINTATTN__CARVE(s->k1.data, unsigned char, DINTATTN__MUL3(Lr * T, (size_t)c->n_k1_heads, d * e));
        DINTATTN__CARVE(s->k2.data, unsigned char, c->shared_k ? 0 : DINTATTN__MUL3(Lr * T, (size_t)c->n_k2_heads, d * e));
        DINTATTN__CARVE(s->v.data, unsigned char, DINTATTN__MUL3(Lr * T, (size_t)c->n_v_heads, dv * e));
        DINTATTN__CARVE(s->k1.scale, float, q8 ? DINTATTN__MUL3(Lr, T, (size_t)c->n_k1_heads) : 0);
        DINTATTN__CARVE(s->k2.scale, float, q8 && !c->shared_k ? DINTATTN__MUL3(Lr, T, (size_t)c->n_k2_heads) : 0);
        DINTATTN__CARVE(s->v.scale, float, q8 ? DINTATTN__MUL3(Lr, T, (size_t)c->n_v_heads) : 0);
        /* tiles of a converted cache: per thread in decode, and prefill's */
        s->kvt_ld = s->k1.type == DINTATTN_KV_F32 ? 0 : (size_t)(DINTATTN__KV_TILE + 1) * (d > dv ? d : dv);
        DINTATTN__CARVE(s->kvt, float, dintattn__mul((size_t)s->n_threads, s->kvt_ld, overflow));
        DINTATTN__CARVE(s->k_row, float, dintattn__mul((size_t)s->n_threads, (size_t)d, overflow));
        DINTATTN__CARVE(s->I_row, float, dint ? T : 0);
        DINTATTN__CARVE(s->kvp, float, s->kvt_ld && B > 1 ? (size_t)DINTATTN__KV_PTILE * (d > dv ? d : dv) : 0);
    }
    DINTATTN__CARVE(s->S, double, dint ? DINTATTN__MUL3(Lr, T, (size_t)c->n_heads) : 0);
    /* checkpoint i holds i ckpt_every columns of each row: ckpt_every n_ckpt (n_ckpt + 1) / 2 in all */
    s->ckpt_every = (int)((T + DINTATTN__S_CHECKPOINTS - 1) / DINTATTN__S_CHECKPOINTS);
    s->n_ckpt = dint ? (int)((T - 1) / (size_t)s->ckpt_every) : 0;
    DINTATTN__CARVE(s->ids, int, dint ? T : 0);
    DINTATTN__CARVE(s->step_start, unsigned char, dint ? T : 0);
    DINTATTN__CARVE(s->ckpt_pos, int, dint ? (size_t)s->n_ckpt + 1 : 0);
    DINTATTN__CARVE(s->ckpt, double,
                    dintattn__mul(DINTATTN__MUL3(Lr, (size_t)c->n_heads, (size_t)s->ckpt_every),
                                  (size_t)s->n_ckpt * ((size_t)s->n_ckpt + 1) / 2, overflow));
    DINTATTN__CARVE(s->rope_cos, double, dintattn__mul(T, half, overflow));
    DINTATTN__CARVE(s->rope_sin, double, dintattn__mul(T, half, overflow));
    DINTATTN__CARVE(s->x, float, dintattn__mul(B, (size_t)c->dim, overflow));
    DINTATTN__CARVE(s->xn, float, dintattn__mul(B, (size_t)c->dim, overflow));
    DINTATTN__CARVE(s->q1, float, DINTATTN__MUL3(B, (size_t)c->n_heads, d));
    DINTATTN__CARVE(s->q2, float, DINTATTN__MUL3(B, (size_t)c->n_q2_heads, d));
    DINTATTN__CARVE(s->v_rows, float, DINTATTN__MUL3(B, (size_t)c->n_v_heads, dv));
    DINTATTN__CARVE(s->att, float, DINTATTN__MUL3(B, (size_t)c->n_heads, dv));
    DINTATTN__CARVE(s->lambda_rows, float, token_lambda ? dintattn__mul(B, (size_t)c->n_heads, overflow) : 0);
    DINTATTN__CARVE(s->ffn_gate, float, dintattn__mul(B, (size_t)c->hidden_dim, overflow));
    DINTATTN__CARVE(s->ffn_up, float, dintattn__mul(B, (size_t)c->hidden_dim, overflow));
    DINTATTN__CARVE(s->qk64, double, DINTATTN__MUL3(B, d, nq + nk));
    DINTATTN__CARVE(s->q_base_x, double, factored ? dintattn__mul(B, d, overflow) : 0);
    DINTATTN__CARVE(s->k_base_x, double, factored ? dintattn__mul(B, d, overflow) : 0);
    DINTATTN__CARVE(s->down_x, double, factored ? DINTATTN__MUL3(B, r, nq + nk) : 0);
    DINTATTN__CARVE(s->up64, double, factored && B >= DINTATTN__GEMM_MIN_TOKENS ? d * r : 0);
    DINTATTN__CARVE(s->rows, float, DINTATTN__MUL3((size_t)s->n_threads, DINTATTN__ATT_ROWS, T));
    DINTATTN__CARVE(s->blk, float, B > 1 ? DINTATTN__MUL3(3 * (size_t)s->n_threads, (size_t)DINTATTN__QB, T) : 0);
    DINTATTN__CARVE(s->claims, uint64_t, 8 * (size_t)s->n_threads);
    DINTATTN__CARVE(s->tile, float, s->tile_elems);
    DINTATTN__CARVE(s->acc, float, B > 1 ? DINTATTN__MUL3(B, (size_t)c->n_heads, d > r ? d : r) : 0);
    {
        const unsigned held = s->model->held_types, int8 = 1u << DINTATTN__W_Q8 | 1u << DINTATTN__W_Q4;
        const unsigned half = 1u << DINTATTN__W_BF16 | 1u << DINTATTN__W_F16; /* dintattn__act's bf16 rows */
        const size_t q = held & int8 ? s->xq_ld : 0;
        /* bf16 rows: precision FAST's BF16/F16 products, and Q8/Q4 prompts on AMX (dintattn__q_tiles,
           for chunks of any length: the tests move the threshold) */
        const size_t b = (s->precision == DINTATTN_PRECISION_FAST && held & half) || (q && s->plan.q_tiles) ? s->xq_ld : 0;
        /* ... and three parts of each (dintattn__x3) */
        const int x3 = s->plan.x3;
        const size_t Bx = B > 1 ? (B + 31) / 32 * 32 : B; /* AMX's blocks */
        DINTATTN__CARVE(s->xq, signed char, dintattn__mul(B, q, overflow));
        DINTATTN__CARVE(s->xq_s, float, dintattn__mul(B, q / 32, overflow));
        DINTATTN__CARVE(s->xq_c, float, dintattn__mul(B, q / 32, overflow));
        DINTATTN__CARVE(s->xb, uint16_t, dintattn__mul(Bx, b, overflow));
        DINTATTN__CARVE(s->xb3, uint16_t, DINTATTN__MUL3(Bx, x3 ? s->xq_ld : 0, 3));
        /* per 16 tokens and 32 columns a 1 KiB tile (as many bytes as the rows), for the chunks that
           take them (dintattn__amx_rows_a) */
        DINTATTN__CARVE(s->xt1, uint32_t,
                        dintattn__mul(Bx < DINTATTN__AMX_ROWS_A ? Bx : (DINTATTN__AMX_ROWS_A + 31) / 32 * 32, b && s->amx ? s->xq_ld / 2 : 0, overflow));
        /* packed panels and tokens, for prefill (dintattn__gemm_unit): a panel of 32 rows is at most
           64 bytes a column (bf16 pairs, int8), one of 48 f32 rows 192 */
        {
            const size_t Bq = (B + DINTATTN__GQ_NT - 1) / DINTATTN__GQ_NT, Bb = (B + DINTATTN__GB_NT - 1) / DINTATTN__GB_NT;
            const size_t Bf = (B + DINTATTN__GF_NT - 1) / DINTATTN__GF_NT;
            const size_t f = s->plan.f32_blocks ? s->xq_ld : 0;
            DINTATTN__CARVE(s->xpq, int32_t, B > 1 ? DINTATTN__MUL3(Bq, q / 32, DINTATTN__GQ_X_BLOCK) : 0);
            DINTATTN__CARVE(s->xpb, uint32_t, B > 1 ? DINTATTN__MUL3(Bb, b / 2, DINTATTN__GB_NT) : 0);
            DINTATTN__CARVE(s->xpf, float, DINTATTN__MUL3(Bf, f, DINTATTN__GF_NT));
            /* every block's sums of a panel wider than a span (dintattn__gemm_unit_f32) */
            s->psum_ld = f > DINTATTN__F32_SPAN ? dintattn__mul(Bf, DINTATTN__PANEL_F32 * DINTATTN__GF_NT, overflow) : 0;
            DINTATTN__CARVE(s->psum, double, dintattn__mul((size_t)s->n_threads, s->psum_ld, overflow));
            s->pack_ld = !s->plan.packs ? 0 : f ? dintattn__mul(s->xq_ld, 4 * DINTATTN__PANEL_F32, overflow) : q || b ? dintattn__mul(s->xq_ld, 64, overflow) : 0;
            if (x3 || (b && s->amx)) /* DINTATTN__AMX_GROUP bf16 panels on AMX (dintattn__gemm_unit_amx) */
                s->pack_ld = dintattn__mul(s->xq_ld, 64 * DINTATTN__AMX_GROUP, overflow);
            DINTATTN__CARVE(s->pack, unsigned char, dintattn__mul((size_t)s->n_threads, s->pack_ld, overflow));
        }
    }
#undef DINTATTN__CARVE
#undef DINTATTN__MUL3
    return off;
}

/* RoPE's inverse frequencies inv[k] = theta^(-2k/r), k < r/2 (r = rope_dim), scaled as
   docs/format.md section 3 says (Hugging Face transformers' rope types); returns the factor on cos and sin. */
static double dintattn__rope_inv_freq(const dintattn_config *c, double *inv)
{
    const dintattn_rope_scaling *rs = &c->rope_scaling;
    const int r = c->rope_dim, half = r / 2;
    const double s = rs->factor, L = rs->original_max_position_embeddings, pi = 3.14159265358979323846;
    double lo = 0, hi = 0;
    int k;
    if (rs->type == DINTATTN_ROPE_SCALING_YARN) { /* the dimensions where extrapolation turns to interpolation */
        lo = r * log(L / (2 * pi * rs->beta_fast)) / (2 * log(c->rope_theta));
        hi = r * log(L / (2 * pi * rs->beta_slow)) / (2 * log(c->rope_theta));
        if (rs->truncate) lo = floor(lo), hi = ceil(hi);
        if (lo < 0) lo = 0;
        if (hi > r - 1) hi = r - 1;
        if (lo == hi) hi += 0.001;
    }
    for (k = 0; k < half; k++) {
        const double base = pow(c->rope_theta, -2.0 * k / r);
        double w, t;
        switch (rs->type) {
        case DINTATTN_ROPE_SCALING_LINEAR: inv[k] = base / s; break;
        case DINTATTN_ROPE_SCALING_LLAMA3:
            w = 2 * pi / base;
            if (w < L / rs->high_freq_factor) inv[k] = base;
            else if (w > L / rs->low_freq_factor) inv[k] = base / s;
            else {
                t = (L / w - rs->low_freq_factor) / (rs->high_freq_factor - rs->low_freq_factor);
                inv[k] = (1 - t) * base / s + t * base;
            }
            break;
        case DINTATTN_ROPE_SCALING_YARN:
            t = (k - lo) / (hi - lo);
            t = t < 0 ? 0 : t > 1 ? 1 : t;
            inv[k] = t * base / s + (1 - t) * base;
            break;
        default: inv[k] = base;
        }
    }
    return rs->type == DINTATTN_ROPE_SCALING_YARN ? rs->attention_factor : 1.0;
}

/* cos/sin of pos * inv[k] (times YaRN's attention factor), in double, for every position. The
   inverse frequencies sit in the first row of rope_cos while they are used. */
static void dintattn__rope_tables(dintattn_session *s)
{
    const dintattn_config *c = &s->model->cfg;
    const int half = c->rope_dim / 2;
    double *inv = s->rope_sin, mscale;
    int p, k;
    if (c->rope == DINTATTN_ROPE_NONE || half == 0) return;
    mscale = dintattn__rope_inv_freq(c, inv); /* row 0 of sin, overwritten last */
    for (p = s->n_ctx - 1; p >= 0; p--)
        for (k = 0; k < half; k++) {
            double a = p * inv[k];
            s->rope_cos[(size_t)p * half + k] = cos(a) * mscale;
            s->rope_sin[(size_t)p * half + k] = sin(a) * mscale;
        }
}

/* Prefill converts weight rows for sgemm a tile at a time: 4 MiB at most, at least one row of
   the widest matrix (and no more than the largest matrix). */
static size_t dintattn__tile_elems(const dintattn_config *c)
{
    const size_t hd = (size_t)(c->head_dim > c->v_head_dim ? c->head_dim : c->v_head_dim);
    size_t widest = (size_t)(c->dim > c->hidden_dim ? c->dim : c->hidden_dim), cap = (size_t)1 << 20;
    size_t largest = (size_t)c->vocab_size * (size_t)c->dim, tile;
    if ((size_t)c->n_heads * (size_t)c->v_head_dim > widest) widest = (size_t)c->n_heads * (size_t)c->v_head_dim;
    if ((size_t)c->hidden_dim * (size_t)c->dim > largest) largest = (size_t)c->hidden_dim * (size_t)c->dim;
    if ((size_t)c->n_heads * hd * (size_t)c->dim > largest) largest = (size_t)c->n_heads * hd * (size_t)c->dim;
    tile = largest < cap ? largest : cap;
    return tile < widest ? widest : tile;
}

/* A session's block zeroed now, on its threads (but the pool's claims, zeroed before the pool
   started), through a pointer the compiler cannot see through (it would turn malloc + memset into
   a lazy calloc): the pages are faulted in here, once, and not in the middle of the first
   prefill, where faults cost it a fifth of its speed (examples/bench's prefill, on a Zen 5 EPYC).
   A fresh page costs a guest of KVM far more than its clearing: one thread writes 2 GiB the first
   time at 0.5-3 GB/s, two threads at 3-10. */
#define DINTATTN__ZERO_UNIT ((size_t)16 << 20)
typedef struct dintattn__zero_job {
    unsigned char *b, *skip0, *skip1; /* the block; [skip0, skip1) left alone */
    size_t n;
} dintattn__zero_job;

static void dintattn__zero_unit(void *ctx, int64_t unit, int tid)
{
    const dintattn__zero_job *j = (const dintattn__zero_job *)ctx;
    unsigned char *lo = j->b + (size_t)unit * DINTATTN__ZERO_UNIT;
    unsigned char *hi = j->b + ((size_t)(unit + 1) * DINTATTN__ZERO_UNIT < j->n ? (size_t)(unit + 1) * DINTATTN__ZERO_UNIT : j->n);
    (void)tid;
    if (lo < j->skip0) dintattn__memset(lo, 0, (size_t)((hi < j->skip0 ? hi : j->skip0) - lo));
    if (hi > j->skip1) dintattn__memset(lo > j->skip1 ? lo : j->skip1, 0, (size_t)(hi - (lo > j->skip1 ? lo : j->skip1)));
}

static void dintattn__zero_block(dintattn_session *s, size_t n)
{
    dintattn__zero_job j;
    j.b = (unsigned char *)s->block, j.n = n;
    j.skip0 = (unsigned char *)s->claims, j.skip1 = (unsigned char *)(s->claims + 8 * (size_t)s->n_threads);
    dintattn__pool_run(s->n_threads > 1 ? &s->pool : NULL, (int64_t)((n + DINTATTN__ZERO_UNIT - 1) / DINTATTN__ZERO_UNIT),
                       dintattn__zero_unit, &j);
}

/* Creates a session (KV cache, DINT state, scratch) for `model`. Returns an error code on failure. */
DINTATTN_API dintattn_result dintattn_session_new(const dintattn_model *m, const dintattn_session_options *opt,
                                                  dintattn_session **out, dintattn_error *err)
{
    dintattn_session *s;
    dintattn_result r;
    int overflow = 0;
    size_t bytes;
    if (!m || !out) return dintattn__fail(err, DINTATTN_ERR_ARG, "dintattn_session_new: NULL argument");
    *out = NULL;
    if (opt && (opt->n_ctx < 0 || opt->n_ctx > m->cfg.max_seq_len))
        return dintattn__fail(err, DINTATTN_ERR_ARG, "n_ctx %d is not in [0, max_seq_len = %d]", opt->n_ctx,
                              m->cfg.max_seq_len);
    if (opt && (opt->n_batch < 0 || opt->n_threads < 0 || opt->n_threads > 1024))
        return dintattn__fail(err, DINTATTN_ERR_ARG, "n_batch must be >= 0 and n_threads in [0, 1024]");
    if (opt && (opt->kernels < DINTATTN_KERNELS_AUTO || opt->kernels > DINTATTN_KERNELS_AMX))
        return dintattn__fail(err, DINTATTN_ERR_ARG, "dintattn_session_options.kernels %d is not a dintattn_kernels",
                              (int)opt->kernels);
    if (opt && (opt->precision < DINTATTN_PRECISION_AUTO || opt->precision > DINTATTN_PRECISION_FAST))
        return dintattn__fail(err, DINTATTN_ERR_ARG,
                              "dintattn_session_options.precision %d is not a dintattn_precision", (int)opt->precision);
    if (opt && (opt->kv < DINTATTN_KV_F32 || opt->kv > DINTATTN_KV_Q8))
        return dintattn__fail(err, DINTATTN_ERR_ARG, "dintattn_session_options.kv %d is not a dintattn_kv_type",
                              (int)opt->kv);
    if (opt && (opt->tiles_min_tokens < 0 || opt->bf16_dot < -1 || opt->bf16_dot > 1))
        return dintattn__fail(err, DINTATTN_ERR_ARG,
                              "dintattn_session_options: tiles_min_tokens %d must be >= 0 and bf16_dot %d -1, 0 or 1 "
                              "(0: the session decides)", opt->tiles_min_tokens, opt->bf16_dot);
    s = (dintattn_session *)dintattn__calloc(1, sizeof *s);
    if (!s) return dintattn__fail(err, DINTATTN_ERR_NOMEM, "out of memory");
    s->model = m;
    s->k = dintattn__kernels_for(opt ? opt->kernels : DINTATTN_KERNELS_AUTO);
    s->precision = opt ? opt->precision : DINTATTN_PRECISION_AUTO;
    s->attn_pool = -1;
#ifdef DINTATTN__HAVE_AMX
    s->amx = (!opt || opt->kernels == DINTATTN_KERNELS_AUTO || opt->kernels == DINTATTN_KERNELS_AMX) &&
             s->k->level == DINTATTN_KERNELS_AVX512 && __builtin_cpu_supports("avx512bf16") && dintattn__amx_ready();
#endif
    s->n_ctx = opt && opt->n_ctx ? opt->n_ctx : m->cfg.max_seq_len;
    s->n_batch = opt && opt->n_batch ? opt->n_batch : 512;
    if (s->n_batch > s->n_ctx) s->n_batch = s->n_ctx;
    { /* the plan, before the layout that holds its buffers */
        dintattn__plan_in in;
        in.k = s->k, in.precision = s->precision, in.held = m->held_types, in.n_batch = s->n_batch, in.amx = s->amx;
#ifdef DINTATTN__HAVE_X86
        in.bf16 = __builtin_cpu_supports("avx512bf16");
#else
        in.bf16 = 0;
#endif
        in.bf16_dot = opt && opt->bf16_dot ? opt->bf16_dot > 0 : dintattn__bf16_dot_pays();
        in.q_tiles_min = opt && opt->tiles_min_tokens ? opt->tiles_min_tokens : DINTATTN__Q_TILES_MIN;
        dintattn__plan_make(&s->plan, &in);
    }
    s->n_threads = opt && opt->n_threads ? opt->n_threads : 1;
    s->tile_elems = s->n_batch > 1 ? dintattn__tile_elems(&m->cfg) : 0;
    { /* the widest input of a product */
        const dintattn_config *c = &m->cfg;
        size_t w = (size_t)c->dim;
        if ((size_t)c->n_heads * (size_t)c->v_head_dim > w) w = (size_t)c->n_heads * (size_t)c->v_head_dim;
        if ((size_t)c->hidden_dim > w) w = (size_t)c->hidden_dim;
        s->xq_ld = (w + 31) / 32 * 32;
    }
    s->k1.heads = m->cfg.n_k1_heads, s->k1.width = m->cfg.head_dim;
    s->k2.heads = m->cfg.n_k2_heads, s->k2.width = m->cfg.head_dim;
    s->v.heads = m->cfg.n_v_heads, s->v.width = m->cfg.v_head_dim;
    s->k1.n_ctx = s->k2.n_ctx = s->v.n_ctx = (size_t)s->n_ctx;
    s->k1.type = s->k2.type = s->v.type = opt ? opt->kv : DINTATTN_KV_F32;
    bytes = dintattn__session_layout(s, NULL, &overflow);
    s->block = overflow || bytes > SIZE_MAX - 64 ? NULL : dintattn__alloc(bytes + 64);
    if (s->block) dintattn__hugepages(s->block, bytes + 64);
    if (!s->block) {
        int n_ctx = s->n_ctx;
        DINTATTN_FREE(s);
        return dintattn__fail(err, DINTATTN_ERR_NOMEM, "out of memory for a session of %d tokens", n_ctx);
    }
    /* align the block's start to 64 bytes; the layout keeps every buffer aligned from there */
    dintattn__session_layout(s, (unsigned char *)s->block + ((64 - (uintptr_t)s->block % 64) % 64), &overflow);
    if (m->cfg.shared_k) s->k2 = s->k1; /* one cache serves both maps */
    s->bytes = bytes + 64 + sizeof *s;
    memset(s->claims, 0, 8 * sizeof *s->claims * (size_t)s->n_threads); /* the pool's, before it starts */
    if (s->n_threads > 1 && (r = dintattn__pool_start(&s->pool, s->n_threads - 1, s->claims, err))) {
        dintattn_session_free(s);
        return r;
    }
    dintattn__zero_block(s, bytes + 64);
    dintattn__rope_tables(s);
    *out = s;
    dintattn__ok(err);
    return DINTATTN_OK;
}

DINTATTN_API void dintattn_session_free(dintattn_session *s)
{
    if (!s) return;
    dintattn__pool_stop(&s->pool);
    dintattn_session_act_stop(s);
    DINTATTN_FREE(s->block);
    DINTATTN_FREE(s);
}

DINTATTN_API void dintattn_session_reset(dintattn_session *s)
{
    const dintattn_config *c = &s->model->cfg;
    if (s->S) memset(s->S, 0, sizeof(double) * (size_t)c->n_layers * (size_t)c->n_heads * (size_t)s->n_ctx);
    if (s->ckpt_pos) memset(s->ckpt_pos, 0, sizeof(int) * ((size_t)s->n_ckpt + 1));
    s->pos = 0;
}

/* The first n rows of each (layer, head) of a cache, from src to dst (of another n_ctx). */
static void dintattn__cache_copy(const dintattn__cache *dst, const dintattn__cache *src, int n_layers, int n)
{
    const size_t row = dintattn__kv_elem[src->type] * (size_t)src->width;
    int l, h;
    if (!src->data) return;
    for (l = 0; l < n_layers; l++)
        for (h = 0; h < src->heads; h++) {
            memcpy((char *)dst->data + dintattn__cache_at(dst, l, h, 0) * row,
                   (const char *)src->data + dintattn__cache_at(src, l, h, 0) * row, row * (size_t)n);
            if (src->scale)
                memcpy(dst->scale + dintattn__cache_at(dst, l, h, 0), src->scale + dintattn__cache_at(src, l, h, 0),
                       sizeof(float) * (size_t)n);
        }
}

DINTATTN_API dintattn_result dintattn_session_copy(dintattn_session *dst, const dintattn_session *src,
                                                   dintattn_error *err)
{
    const dintattn_config *c;
    int l, i;
    if (!dst || !src) return dintattn__fail(err, DINTATTN_ERR_ARG, "dintattn_session_copy: NULL session");
    if (dst->model != src->model)
        return dintattn__fail(err, DINTATTN_ERR_ARG, "dintattn_session_copy: the sessions are of different models");
    if (dst->k1.type != src->k1.type)
        return dintattn__fail(err, DINTATTN_ERR_ARG, "dintattn_session_copy: KV caches of different types (%s, %s)",
                              dintattn_kv_name(dst->k1.type), dintattn_kv_name(src->k1.type));
    if (src->pos > dst->n_ctx)
        return dintattn__fail(err, DINTATTN_ERR_CONTEXT, "dintattn_session_copy: %d tokens do not fit a context of %d",
                              src->pos, dst->n_ctx);
    if (dst != src) {
        c = &dst->model->cfg;
        dintattn__cache_copy(&dst->k1, &src->k1, c->n_layers, src->pos);
        if (src->k2.data != src->k1.data) dintattn__cache_copy(&dst->k2, &src->k2, c->n_layers, src->pos); /* shared_k */
        dintattn__cache_copy(&dst->v, &src->v, c->n_layers, src->pos);
        if (dst->S) /* each row: src's sums, then zeros (the keys dst has not seen) */
            for (l = 0; l < c->n_layers; l++)
                for (i = 0; i < c->n_heads; i++) {
                    double *to = dintattn__S_row(dst, l, i);
                    memcpy(to, dintattn__S_row(src, l, i), sizeof(double) * (size_t)src->pos);
                    memset(to + src->pos, 0, sizeof(double) * (size_t)(dst->n_ctx - src->pos));
                }
        if (dst->ids) { /* what truncating needs: the tokens, their steps, and checkpoints of S */
            memcpy(dst->ids, src->ids, sizeof(int) * (size_t)src->pos);
            memcpy(dst->step_start, src->step_start, (size_t)src->pos);
            for (i = 1; i <= dst->n_ckpt; i++) { /* src's nearest at or below each of dst's multiples */
                const int at = i * dst->ckpt_every;
                int j, best = 0, h;
                for (j = 1; at < src->pos && j <= src->n_ckpt; j++)
                    if (src->ckpt_pos[j] <= at && src->ckpt_pos[j] > src->ckpt_pos[best]) best = j;
                dst->ckpt_pos[i] = best ? src->ckpt_pos[best] : 0;
                for (l = 0; best && l < c->n_layers; l++)
                    for (h = 0; h < c->n_heads; h++)
                        memcpy(dintattn__ckpt_row(dst, i, l, h), dintattn__ckpt_row(src, best, l, h),
                               sizeof(double) * (size_t)dst->ckpt_pos[i]);
            }
        }
        dst->pos = src->pos;
    }
    dintattn__ok(err);
    return DINTATTN_OK;
}

DINTATTN_API int dintattn_session_pos(const dintattn_session *s) { return s->pos; }
DINTATTN_API int dintattn_session_n_ctx(const dintattn_session *s) { return s->n_ctx; }
DINTATTN_API size_t dintattn_session_bytes(const dintattn_session *s) { return s->bytes; }
DINTATTN_API dintattn_kernels dintattn_session_kernels(const dintattn_session *s)
{
    return s->amx ? DINTATTN_KERNELS_AMX : s->k->level;
}
DINTATTN_API dintattn_precision dintattn_session_precision(const dintattn_session *s) { return s->precision; }
DINTATTN_API dintattn_kv_type dintattn_session_kv(const dintattn_session *s) { return s->k1.type; }

DINTATTN_API dintattn_result dintattn_session_inspect(dintattn_session *s, const dintattn_inspect *insp,
                                                      dintattn_error *err)
{
    if (!s) return dintattn__fail(err, DINTATTN_ERR_ARG, "dintattn_session_inspect: NULL session");
    if (insp && insp->row && (insp->pos_from < 0 || insp->pos_to < 0))
        return dintattn__fail(err, DINTATTN_ERR_ARG, "dintattn_session_inspect: positions [%d, %d) are negative",
                              insp->pos_from, insp->pos_to);
    if (insp && insp->row) s->insp = *insp;
    else memset(&s->insp, 0, sizeof s->insp);
    dintattn__ok(err);
    return DINTATTN_OK;
}

DINTATTN_API void dintattn_attn_stats_of(const float *w, int n, const int *spans, int n_spans, dintattn_attn_stats *out)
{
    double abs_sum = 0;
    int j, k, neg = 0;
    memset(out, 0, sizeof *out);
    for (j = 0; j < n; j++) {
        int in = 0;
        for (k = 0; k < n_spans && spans && !in; k++) in = j >= spans[2 * k] && j < spans[2 * k + 1];
        out->sum += w[j];
        abs_sum += fabs((double)w[j]);
        if (w[j] < 0) out->neg_sum += w[j], neg++;
        if (in) out->span_mass += w[j];
        else out->rest_mass += w[j];
    }
    out->neg_share = n > 0 ? (double)neg / n : 0.0;
    for (j = 0; j < n && abs_sum > 0; j++) {
        const double p = fabs((double)w[j]) / abs_sum;
        if (p > 0) out->entropy -= p * log(p);
    }
}

DINTATTN_API const char *dintattn_act_kind_name(dintattn_act_kind kind)
{
    static const char *const names[DINTATTN_ACT_KINDS] = {"logits1", "logits2", "ffn_in", "hidden"};
    return (int)kind >= 0 && kind < DINTATTN_ACT_KINDS ? names[kind] : NULL;
}

DINTATTN_API void dintattn_session_act_stop(dintattn_session *s)
{
    if (!s || !s->act) return;
    DINTATTN_FREE(s->act);
    s->act = NULL;
}

DINTATTN_API dintattn_result dintattn_session_act_start(dintattn_session *s, const dintattn_act_options *opt,
                                                        dintattn_error *err)
{
    const int k = opt && opt->top_k ? opt->top_k : 10;
    size_t n_acc, per, bytes, i;
    struct dintattn__act *a;
    unsigned char *p;
    if (!s) return dintattn__fail(err, DINTATTN_ERR_ARG, "dintattn_session_act_start: NULL session");
    if (k < 1 || k > DINTATTN__ACT_TOP_MAX)
        return dintattn__fail(err, DINTATTN_ERR_ARG,
                              "dintattn_session_act_start: top_k = %d is outside [0, %d] (0: the default, 10)",
                              opt->top_k, DINTATTN__ACT_TOP_MAX);
    dintattn_session_act_stop(s);
    /* the layers (validated at load) times at most 4 (2^18 + 2^16 + 1) bytes: no overflow on 64 bits,
       and checked against SIZE_MAX where size_t is narrower */
    n_acc = (size_t)s->model->cfg.n_layers * DINTATTN_ACT_KINDS;
    per = sizeof(dintattn__act_acc) + sizeof(uint64_t) * DINTATTN__ACT_BINS + sizeof(float) * (size_t)k;
    if ((double)n_acc * (double)per + sizeof *a + sizeof(float) * (double)k > (double)SIZE_MAX)
        return dintattn__fail(err, DINTATTN_ERR_NOMEM, "dintattn_session_act_start: %d layers' statistics exceed memory",
                              s->model->cfg.n_layers);
    bytes = sizeof *a + n_acc * per + sizeof(float) * (size_t)k;
    a = (struct dintattn__act *)DINTATTN_MALLOC(bytes);
    if (!a)
        return dintattn__fail(err, DINTATTN_ERR_NOMEM,
                              "dintattn_session_act_start: cannot allocate %zu bytes for %d layers' statistics (a "
                              "smaller top_k needs less)",
                              bytes, s->model->cfg.n_layers);
    memset(a, 0, sizeof *a);
    a->k = k, a->n_layers = s->model->cfg.n_layers;
    /* the structs, then the 8-byte counts, then the floats: each part aligned for its type */
    a->acc = (dintattn__act_acc *)(a + 1);
    p = (unsigned char *)(a->acc + n_acc);
    for (i = 0; i < n_acc; i++) {
        memset(&a->acc[i], 0, sizeof a->acc[i]);
        a->acc[i].hist = (uint64_t *)p;
        p += sizeof(uint64_t) * DINTATTN__ACT_BINS;
    }
    memset(a->acc[0].hist, 0, sizeof(uint64_t) * DINTATTN__ACT_BINS * n_acc);
    for (i = 0; i < n_acc; i++) {
        a->acc[i].top = (float *)p;
        p += sizeof(float) * (size_t)k;
    }
    a->sorted = (float *)p;
    s->act = a;
    dintattn__ok(err);
    return DINTATTN_OK;
}

static int dintattn__descending(const void *a, const void *b)
{
    const float x = *(const float *)a, y = *(const float *)b;
    return x < y ? 1 : x > y ? -1 : 0;
}

DINTATTN_API dintattn_result dintattn_session_act_stats(const dintattn_session *s, int layer, dintattn_act_kind kind,
                                                        dintattn_act_stats *out, float *top, int max_top,
                                                        dintattn_error *err)
{
    const dintattn__act_acc *a;
    long long r, cum = 0;
    int b;
    if (!s || !out) return dintattn__fail(err, DINTATTN_ERR_ARG, "dintattn_session_act_stats: NULL argument");
    if (!s->act)
        return dintattn__fail(err, DINTATTN_ERR_ARG,
                              "dintattn_session_act_stats: the session is not collecting: call "
                              "dintattn_session_act_start before running the tokens");
    if (layer < 0 || layer >= s->act->n_layers || (int)kind < 0 || kind >= DINTATTN_ACT_KINDS)
        return dintattn__fail(err, DINTATTN_ERR_ARG,
                              "dintattn_session_act_stats: layer %d, kind %d: the model has layers [0, %d) and kinds "
                              "[0, %d)",
                              layer, (int)kind, s->act->n_layers, DINTATTN_ACT_KINDS);
    a = &s->act->acc[(size_t)layer * DINTATTN_ACT_KINDS + (size_t)kind];
    memset(out, 0, sizeof *out);
    out->nonfinite = a->nonfinite;
    dintattn__ok(err);
    if (!a->n) return DINTATTN_OK;
    memcpy(s->act->sorted, a->top, sizeof(float) * (size_t)a->n_top);
    qsort(s->act->sorted, (size_t)a->n_top, sizeof(float), dintattn__descending);
    out->count = a->n, out->k = a->n_top;
    out->top1 = s->act->sorted[0], out->topk = s->act->sorted[a->n_top - 1];
    if (top && max_top > 0) memcpy(top, s->act->sorted, sizeof(float) * (size_t)(max_top < a->n_top ? max_top : a->n_top));
    r = (a->n + 1) / 2; /* the lower median's rank, ascending from 1 */
    if (a->n - r < a->n_top) {
        out->median = s->act->sorted[a->n - r]; /* among the largest kept: exact */
    } else {
        for (b = 0; b < DINTATTN__ACT_BINS && (cum += (long long)a->hist[b]) < r; b++) {}
        if (b > 0) { /* the bin's midpoint (bin 0, zero and the smallest subnormals: 0), kept within the
                        magnitudes seen, which can only bring it nearer (all equal: exact) */
            const uint32_t lo_bits = (uint32_t)b << 16, hi_bits = (uint32_t)(b + 1) << 16;
            float lo, hi;
            memcpy(&lo, &lo_bits, sizeof lo), memcpy(&hi, &hi_bits, sizeof hi);
            out->median = 0.5 * ((double)lo + (double)hi);
            if (out->median > out->top1) out->median = out->top1;
            if (out->median < a->least) out->median = a->least;
        }
    }
    out->ratio = out->median > 0 ? out->top1 / out->median : HUGE_VAL;
    out->mean = a->mean;
    out->std = sqrt(a->m2 / (double)a->n);
    out->kurtosis = a->m2 > 0 ? (double)a->n * a->m4 / (a->m2 * a->m2) : NAN;
    return DINTATTN_OK;
}

DINTATTN_API void dintattn_session_set_attn_hook(dintattn_session *s, dintattn_attn_hook hook, void *user)
{
    s->hook = hook;
    s->hook_user = user;
}

/* --- weight products: GEMM over a prefill chunk, matrix-vector rows across threads in decode -- */

/* One product of a batch: Y (+)= X @ M^T over the chunk's rows (X rows M->cols wide, stride ldx;
   Y rows stride ldy), into y, or for the Q/K projections into y64 (double; never added to). For
   one token only (n = 1, into y, not added to), with swiglu_up: y = silu(M x + bias) * (swiglu_up
   x + swiglu_up_bias), each unit of rows by the level's SwiGLU kernel. */

typedef struct dintattn__product {
    const dintattn__mat *M;
    const float *bias;                      /* added to every row's result (ffn_bias), or NULL */
    const dintattn__mat *swiglu_up;
    const float *swiglu_up_bias;
    const float *x;
    float *y;
    double *y64;
    int ldx, ldy, add;
    int act;                                /* set by dintattn__products from the plan: x as f32, int8 or bf16 ... */
    dintattn_prefill_unit unit;             /* ... what runs the product ... */
    void (*pack)(const dintattn__mat *M, int r0, void *panel); /* ... and packs its panels */
} dintattn__product;

static dintattn__product dintattn__product_f32(const dintattn__mat *M, const float *x, int ldx, float *y, int ldy,
                                               int add)
{
    dintattn__product p;
    memset(&p, 0, sizeof p);
    p.M = M;
    p.x = x;
    p.ldx = ldx;
    p.y = y;
    p.ldy = ldy;
    p.add = add;
    return p;
}

static dintattn__product dintattn__product_f64(const dintattn__mat *M, const float *x, double *y, int ldy)
{
    dintattn__product p;
    memset(&p, 0, sizeof p);
    p.M = M;
    p.x = x;
    p.ldx = M->cols;
    p.y64 = y;
    p.ldy = ldy;
    return p;
}

/* Row t of the chunk's int8 activations (dintattn__products quantized them). */
static dintattn__xq dintattn__xq_row(const dintattn_session *s, int t)
{
    dintattn__xq xq;
    xq.q = s->xq + (size_t)t * s->xq_ld;
    xq.s = s->xq_s + (size_t)t * s->xq_ld / 32;
    xq.c = s->xq_c + (size_t)t * s->xq_ld / 32;
    return xq;
}

/* Rows r0..r1 of M . x (x row t of the chunk) into v[0..r1 - r0), in the product's activations,
   and of M2 into v2 when M2 is not NULL (row by row, the two matrices' rows in turn): the kernels
   chosen and the activations' row found once for the rows (found per row, with each row's store
   and SwiGLU's expf, they take 11.7% of a Q4 decode's samples on one thread, 4.6% with this and
   the unit's SwiGLU: perf record of examples/bench --weights q4 --threads 1) */
static void dintattn__rows_dot(const dintattn_session *s, const dintattn__product *p, const dintattn__mat *M,
                               const dintattn__mat *M2, int r0, int r1, int t, float *v, float *v2)
{
    const dintattn__mat *const mat[2] = {M, M2};
    float *const out[2] = {v, v2};
    const int nm = M2 ? 2 : 1;
    size_t r;
    int i;
    if (p->act == DINTATTN__ACT_INT8) {
        const dintattn__xq xq = dintattn__xq_row(s, t);
        float (*dotq[2])(const dintattn__mat *, size_t, const dintattn__xq *);
        for (i = 0; i < nm; i++) dotq[i] = s->k->w[mat[i]->type].dotq;
        for (r = (size_t)r0; r < (size_t)r1; r++)
            for (i = 0; i < nm; i++) out[i][r - (size_t)r0] = dotq[i](mat[i], r, &xq);
    } else if (p->act == DINTATTN__ACT_BF16) {
        const uint16_t *xb = s->xb + (size_t)t * s->xq_ld;
        void (*dotb[2])(const dintattn__mat *, size_t, const uint16_t *const *, int, float *);
        for (i = 0; i < nm; i++) dotb[i] = s->plan.w[mat[i]->type].dotb;
        for (r = (size_t)r0; r < (size_t)r1; r++)
            for (i = 0; i < nm; i++) dotb[i](mat[i], r, &xb, 1, out[i] + (r - (size_t)r0));
    } else {
        const float *x = p->x + (size_t)t * p->ldx;
        float (*dot[2])(const dintattn__mat *, size_t, const float *);
        for (i = 0; i < nm; i++) dot[i] = s->k->w[mat[i]->type].dot;
        for (r = (size_t)r0; r < (size_t)r1; r++)
            for (i = 0; i < nm; i++) out[i][r - (size_t)r0] = dot[i](mat[i], r, x);
    }
}

/* Row r of M . x (x row t of the chunk), in the product's activations. */
static float dintattn__row_dot(const dintattn_session *s, const dintattn__product *p, const dintattn__mat *M, int r,
                               int t)
{
    float v;
    dintattn__rows_dot(s, p, M, NULL, r, r + 1, t, &v, NULL);
    return v;
}

/* Stores v[0..n), rows r0.. of p against token t, as the product says (into y64, or y with the
   bias, added or not). */
static void dintattn__store_row(const dintattn__product *p, int r0, int t, const float *v, int n)
{
    const size_t at = (size_t)t * p->ldy + r0;
    int i;
    if (p->y64)
        for (i = 0; i < n; i++) p->y64[at + i] = v[i];
    else if (p->bias && p->add)
        for (i = 0; i < n; i++) p->y[at + i] += v[i] + p->bias[r0 + i];
    else if (p->bias)
        for (i = 0; i < n; i++) p->y[at + i] = v[i] + p->bias[r0 + i];
    else if (p->add)
        for (i = 0; i < n; i++) p->y[at + i] += v[i];
    else
        memcpy(p->y + at, v, sizeof(float) * (size_t)n);
}

/* dintattn__store_row for a panel's rows (n <= DINTATTN__PANEL): panels run only where the CPU
   has AVX-512F, so the rows go 16 at a time under a mask (the plain loops above stay scalar at -O2) */
#ifdef DINTATTN__HAVE_X86
#if defined(__GNUC__) && !defined(__clang__) /* GCC 12's avx512fintrin.h trips these in C++ */
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wuninitialized"
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#endif
DINTATTN__AVX512 static void dintattn__store_panel(const dintattn__product *p, int r0, int t, const float *v, int n)
{
    const size_t at = (size_t)t * p->ldy + r0;
    int i;
    for (i = 0; i < n; i += 16) {
        const __mmask16 m = DINTATTN__ROWMASK(n - i);
        __m512 x = _mm512_maskz_loadu_ps(m, v + i);
        if (p->y64) {
            _mm512_mask_storeu_pd(p->y64 + at + i, (__mmask8)m, _mm512_cvtps_pd(_mm512_castps512_ps256(x)));
            _mm512_mask_storeu_pd(p->y64 + at + i + 8, (__mmask8)(m >> 8),
                                  _mm512_cvtps_pd(_mm256_castpd_ps(_mm512_extractf64x4_pd(_mm512_castps_pd(x), 1))));
            continue;
        }
        if (p->bias) x = _mm512_add_ps(x, _mm512_maskz_loadu_ps(m, p->bias + r0 + i));
        if (p->add) x = _mm512_add_ps(_mm512_maskz_loadu_ps(m, p->y + at + i), x);
        _mm512_mask_storeu_ps(p->y + at + i, m, x);
    }
}
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic pop
#endif
#else
#define dintattn__store_panel dintattn__store_row
#endif

/* ... one value, row r against token t */
static void dintattn__store(const dintattn__product *p, int r, int t, float v)
{
    dintattn__store_row(p, r, t, &v, 1);
}

/* Row r of p for tokens t..t+3 on int8 or bf16 activations. */
static void dintattn__rows4(const dintattn_session *s, const dintattn__product *p, int r, int t)
{
    dintattn__xq xq[4];
    const uint16_t *xb[4];
    float v[4];
    int j;
    if (p->act == DINTATTN__ACT_INT8) {
        for (j = 0; j < 4; j++) xq[j] = dintattn__xq_row(s, t + j);
        s->k->w[p->M->type].dotq4(p->M, (size_t)r, xq, v);
    } else {
        for (j = 0; j < 4; j++) xb[j] = s->xb + (size_t)(t + j) * s->xq_ld;
        s->plan.w[p->M->type].dotb(p->M, (size_t)r, xb, 4, v);
    }
    for (j = 0; j < 4; j++) dintattn__store(p, r, t + j, v[j]);
}

/* Rows r..r+3 of p for tokens t..t+3 on int8 or bf16 activations, by the level's tile kernel. */
static void dintattn__rows44(const dintattn_session *s, const dintattn__product *p, int r, int t)
{
    dintattn__xq xq[4];
    const uint16_t *xb[4];
    float v[16];
    int i, j;
    if (p->act == DINTATTN__ACT_INT8) {
        for (j = 0; j < 4; j++) xq[j] = dintattn__xq_row(s, t + j);
        s->k->w[p->M->type].dotq44(p->M, (size_t)r, xq, v);
    } else {
        for (j = 0; j < 4; j++) xb[j] = s->xb + (size_t)(t + j) * s->xq_ld;
        s->plan.w[p->M->type].dotb44(p->M, (size_t)r, xb, v);
    }
    for (i = 0; i < 4; i++)
        for (j = 0; j < 4; j++) dintattn__store(p, r + i, t + j, v[4 * i + j]);
}

/* Matrix-vector rows of a batch of products, taken DINTATTN__UNIT_ROWS at a time as if the
   matrices were one, each row for the chunk's n tokens in turn (decode: n = 1; prefill: the
   products on int8 or bf16 activations, and any on f32 for a short prompt, so that a row is read
   once while it is in L1). */
#define DINTATTN__UNIT_ROWS 16
#ifndef DINTATTN__UNIT_TOKENS
#define DINTATTN__UNIT_TOKENS 8 /* 8 tokens of x stay in L1 with the unit's rows (16 and 32: 5-15% slower) */
#endif
typedef struct dintattn__rows_job {
    const dintattn_session *s;
    const dintattn__product *p;
    int count, n;
} dintattn__rows_job;

static void dintattn__rows_unit(void *ctx, int64_t unit, int tid)
{
    const dintattn__rows_job *job = (const dintattn__rows_job *)ctx;
    const dintattn_session *s = job->s;
    const int64_t lo = unit * DINTATTN__UNIT_ROWS, hi = lo + DINTATTN__UNIT_ROWS;
    int64_t base = 0;
    int k, r, t, t0;
    (void)tid;
    for (k = 0; k < job->count && base < hi; base += job->p[k].M->rows, k++) {
        const dintattn__product *p = &job->p[k];
        const int r0 = lo > base ? (int)(lo - base) : 0;
        const int r1 = hi - base < p->M->rows ? (int)(hi - base) : p->M->rows;
        if (r0 >= r1) continue; /* the unit starts past this product */
        if (job->n == 1) {
            /* a decoded token: the unit's rows straight, without the loop's tests per row and token
               (with them this function takes 4.9% of a Q4 decode's samples, 1.6% without: perf
               record of examples/bench --weights q4 --threads 1),
               then SwiGLU (swiglu_up) by the level's kernel, as a prompt's, or the rows stored; Q/K
               on f32 activations sum in double (dot64) */
            float g[DINTATTN__UNIT_ROWS], u[DINTATTN__UNIT_ROWS];
            if (p->y64 && p->act == DINTATTN__ACT_F32) {
                double (*const dot64)(const dintattn__mat *, size_t, const float *) = s->k->w[p->M->type].dot64;
                for (r = r0; r < r1; r++) p->y64[r] = dot64(p->M, (size_t)r, p->x);
                continue;
            }
            dintattn__rows_dot(s, p, p->M, p->swiglu_up, r0, r1, 0, g, u);
            if (p->swiglu_up) {
                for (r = r0; p->bias && r < r1; r++) g[r - r0] += p->bias[r], u[r - r0] += p->swiglu_up_bias[r];
                s->k->swiglu(g, u, (size_t)(r1 - r0));
                memcpy(p->y + r0, g, sizeof(float) * (size_t)(r1 - r0));
            } else
                dintattn__store_row(p, r0, 0, g, r1 - r0);
            continue;
        }
        const int tiles = (p->act == DINTATTN__ACT_INT8 && s->k->w[p->M->type].dotq44) ||
                          (p->act == DINTATTN__ACT_BF16 && s->plan.w[p->M->type].dotb44);
        for (t0 = 0; t0 < job->n; t0 += DINTATTN__UNIT_TOKENS) { /* the unit's rows stay in L1 ... */
            const int t1 = job->n - t0 < DINTATTN__UNIT_TOKENS ? job->n : t0 + DINTATTN__UNIT_TOKENS;
            int rt = r0; /* rows before rt: done in tiles of 4 rows x 4 tokens, but the last tokens */
            for (; tiles && rt + 4 <= r1 && t0 + 4 <= t1; rt += 4)
                for (t = t0; t + 4 <= t1; t += 4) dintattn__rows44(s, p, rt, t);
            for (r = r0; r < r1; r++)
                for (t = r < rt ? t0 + (t1 - t0) / 4 * 4 : t0; t < t1; t++) { /* ... these tokens in L2 */
                    const size_t at = (size_t)t * p->ldy + r;
                    if (p->act != DINTATTN__ACT_F32 && t + 4 <= t1) {
                        dintattn__rows4(s, p, r, t); /* four tokens at once */
                        t += 3;
                    } else if (p->y64 && p->act == DINTATTN__ACT_F32) {
                        p->y64[at] = s->k->w[p->M->type].dot64(p->M, (size_t)r, p->x + (size_t)t * p->ldx);
                    } else if (p->y64) {
                        p->y64[at] = dintattn__row_dot(s, p, p->M, r, t);
                    } else {
                        /* one token, or four at once on f32 activations (dot4: the same sums) */
                        float g[4];
                        int j, nt = 1;
                        if (p->act == DINTATTN__ACT_F32 && t + 4 <= t1 && s->k->w[p->M->type].dot4) {
                            nt = 4;
                            s->k->w[p->M->type].dot4(p->M, (size_t)r, p->x + (size_t)t * p->ldx, (size_t)p->ldx, g);
                        } else {
                            g[0] = dintattn__row_dot(s, p, p->M, r, t);
                        }
                        for (j = 0; j < nt; j++) dintattn__store(p, r, t + j, g[j]);
                        t += nt - 1;
                    }
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
static void dintattn__gemm_qk(dintattn_session *s, int n, const dintattn__product *p, const float *Wt, int r0, int nr)
{
    const int K = p->M->cols;
    int k0, kc, t, r;
    for (k0 = 0; k0 < K; k0 += kc) {
        kc = K - k0 < DINTATTN_QK_KC ? K - k0 : DINTATTN_QK_KC;
        cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, n, nr, kc, 1.0f, p->x + k0, p->ldx, Wt + k0, K, 0.0f,
                    s->acc, nr);
        for (t = 0; t < n; t++) {
            double *y = p->y64 + (size_t)t * p->ldy + r0;
            const float *a = s->acc + (size_t)t * nr;
            if (k0 == 0)
                for (r = 0; r < nr; r++) y[r] = a[r];
            else
                for (r = 0; r < nr; r++) y[r] += a[r];
        }
    }
}

/* Prefill: one product over n >= DINTATTN__GEMM_MIN_TOKENS rows by OpenBLAS. F32 matrices go to
   sgemm as they are; others are converted a tile of rows at a time into s->tile. */
static void dintattn__gemm(dintattn_session *s, int n, const dintattn__product *p)
{
    const dintattn__mat *M = p->M;
    const int K = M->cols, N = M->rows, tr = (int)(s->tile_elems / (size_t)K);
    int r0, nr;
    if (M->type == DINTATTN__W_F32) {
        if (p->y64)
            dintattn__gemm_qk(s, n, p, (const float *)M->w, 0, N);
        else
            cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, n, N, K, 1.0f, p->x, p->ldx, (const float *)M->w, K,
                        p->add ? 1.0f : 0.0f, p->y, p->ldy);
        return;
    }
    for (r0 = 0; r0 < N; r0 += nr) {
        nr = N - r0 < tr ? N - r0 : tr;
        s->k->w[M->type].to_f32(M, (size_t)r0 * (size_t)K, (size_t)nr * (size_t)K, s->tile);
        if (p->y64)
            dintattn__gemm_qk(s, n, p, s->tile, r0, nr);
        else
            cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, n, nr, K, 1.0f, p->x, p->ldx, s->tile, K,
                        p->add ? 1.0f : 0.0f, p->y + r0, p->ldy);
    }
}

/* Prefill on packed panels: a unit is one panel of one product (DINTATTN__PANEL_F32 rows on f32
   activations, DINTATTN__PANEL on others), packed by the thread that takes it and run against
   every block of the chunk's packed tokens (on AMX tiles up to DINTATTN__AMX_GROUP panels,
   dintattn__gemm_unit_amx). */
static int dintattn__f32_act(int act) { return act == DINTATTN__ACT_F32 || act == DINTATTN__ACT_BF16_F32; }

static int dintattn__unit_panels(const dintattn_session *s, const dintattn__product *p)
{
    const int panels = (p->M->rows + DINTATTN__PANEL - 1) / DINTATTN__PANEL;
    /* groups only where every thread still gets two units or more */
    return dintattn__on_amx(p->unit) && panels >= 2 * s->n_threads * DINTATTN__AMX_GROUP ? DINTATTN__AMX_GROUP : 1;
}

/* The rows of one unit of p's panels */
static int dintattn__unit_rows(const dintattn_session *s, const dintattn__product *p)
{
    return dintattn__f32_act(p->act) ? DINTATTN__PANEL_F32 : DINTATTN__PANEL * dintattn__unit_panels(s, p);
}

/* The tokens of one block of the chunk's activations prepared for `act` (dintattn__act_unit) */
static int dintattn__block_tokens(int act)
{
    return act == DINTATTN__ACT_INT8 ? DINTATTN__GQ_NT : dintattn__f32_act(act) ? DINTATTN__GF_NT : DINTATTN__GB_NT;
}

typedef struct dintattn__gemm_job {
    const dintattn_session *s;
    const dintattn__product *p;
    int count, n;
    int64_t first[9];                       /* product k's panels: units first[k] .. first[k + 1] - 1 */
} dintattn__gemm_job;

/* dintattn__gemm_unit on f32 activations: the panel packed in f32, the tokens' blocks against it
   over slices of columns whose sums are added in double, so that f32 accumulation never runs
   longer than a slice: the Q/K projections (y64) in slices of DINTATTN_QK_KC, keeping the double,
   as dintattn__gemm_qk does with sgemm (see dintattn__layer); the others in slices of
   DINTATTN__F32_KC, rounded once. On tools/check_accuracy.py's large DINT model (2048 tokens,
   BF16 weights) one f32 chain over a row (2752 columns in w_down) uses 0.66 of the tolerance,
   slices of 512 0.54 and of 128 0.47 (sgemm's blocked sums: 0.46); 128 costs 10% of the prefill
   (examples/bench on tools/make_model.py --preset bench-standard), 512 about 3%. */
#ifndef DINTATTN__F32_KC
#define DINTATTN__F32_KC 512 /* the other products' slices */
#endif
/* A panel wider than DINTATTN__F32_SPAN columns (192 bytes a column: 768 KB) would not stay in L2
   beside the tokens' blocks, so such a row is taken a span at a time, every block of tokens
   against each span, their double sums kept between spans in `sums` (the thread's psum): the
   same additions in the same order. On the 12.7B's w_down (16384 columns: a 2 MB panel) a prompt
   of 512 tokens runs 89.3-96.7 tok/s a span at a time against 82.9-83.4 whole (8 of its layers,
   FAST on the f32 panels: examples/bench --precision fast --kernels avx512 --prompt 512). */
static void dintattn__gemm_unit_f32(const dintattn_session *s, const dintattn__product *p, void *panel, double *sums,
                                    int r0, int rows, int n)
{
    const int K = p->M->cols, slice = p->y64 ? DINTATTN_QK_KC : DINTATTN__F32_KC;
    const int span = K > DINTATTN__F32_SPAN && sums ? DINTATTN__F32_SPAN : K;
    float out[DINTATTN__PANEL_F32 * DINTATTN__GF_NT];
    double one[DINTATTN__PANEL_F32 * DINTATTN__GF_NT];
    int t0, t, k0, k1, i;
    s->k->w[p->M->type].packf(p->M, r0, panel);
    for (k1 = 0; k1 < K; k1 += span) {
        const float *xp = s->xpf;
        for (t0 = 0; t0 < n; t0 += DINTATTN__GF_NT, xp += (size_t)K * DINTATTN__GF_NT) {
            double *sum = span < K ? sums + (size_t)(t0 / DINTATTN__GF_NT) * DINTATTN__PANEL_F32 * DINTATTN__GF_NT : one;
            for (k0 = k1; k0 < K && k0 < k1 + span; k0 += slice) {
                const int kc = K - k0 < slice ? K - k0 : slice;
                s->k->panelf((const float *)panel + (size_t)k0 * DINTATTN__PANEL_F32, kc, xp + (size_t)k0 * DINTATTN__GF_NT,
                             n - t0, sum, !k0, k0 + kc < K || p->y64 ? NULL : out);
            }
            if (k1 + span < K) continue; /* the row's sums are not complete yet */
            for (t = t0; t < t0 + DINTATTN__GF_NT && t < n; t++) {
                const double *v = sum + (t - t0) * DINTATTN__PANEL_F32;
                if (p->y64) {
                    for (i = 0; i < rows; i++) p->y64[(size_t)t * p->ldy + r0 + i] = v[i];
                    continue;
                }
                dintattn__store_panel(p, r0, t, out + (t - t0) * DINTATTN__PANEL_F32, rows);
            }
        }
    }
}

#ifdef DINTATTN__HAVE_AMX
/* Rows r0..r0+31 of M for dintattn__tiles_b16_amx over K columns (the columns rounded up to 32): a
   BF16 matrix's own rows where all 32 exist and K is its columns, else converted into buf
   (dintattn__rows_bf16). Sets the tiles' strides: *ldw bytes a row, rows 16-31 at *half_w, 32
   columns on at *kstep. */
static const unsigned char *dintattn__amx_rows(const dintattn__mat *M, int r0, unsigned char *buf, size_t *ldw,
                                               size_t *half_w, size_t *kstep)
{
    const size_t K = ((size_t)M->cols + 31) / 32 * 32;
    if (M->type == DINTATTN__W_BF16 && (size_t)M->cols == K && M->rows - r0 >= DINTATTN__PANEL) {
        *ldw = 2 * K, *half_w = 16 * 2 * K, *kstep = 64;
        return (const unsigned char *)M->w + (size_t)r0 * K * 2;
    }
    dintattn__rows_bf16(M, r0, K, (uint16_t *)(void *)buf);
    *ldw = 64, *half_w = 1024, *kstep = 2048;
    return buf;
}

/* Whether a chunk of n tokens on `act` activations runs on AMX's tiles with the weights as the A
   tiles, read where they lie (dintattn__tiles_b16_amx), instead of packed as the B tiles
   (dintattn__panel_b16_amx): bf16 activations in chunks of DINTATTN__AMX_ROWS_A tokens or fewer,
   where packing every weight for a few blocks of tokens costs more than the products: at 2.7B on
   2 threads, FAST BF16 prompts of 8 tokens run 40.7 tok/s this way against 27.9 packed, 16
   tokens 80.2 against 52.7, 64 tokens 161.4 against 141.9; but 96-256 tokens run 9-14% slower,
   the same products in the other orientation, and three-part activations slower at every length
   (8-24%). examples/bench --weights bf16 --precision fast --prompt N measures it. */
static int dintattn__amx_rows_a(int act, int n) { return act == DINTATTN__ACT_BF16 && n <= DINTATTN__AMX_ROWS_A; }

/* The chunk's bf16 rows (s->xb) as AMX's B tiles (s->xt1) for dintattn__tiles_b16_amx, 16 tokens
   a unit, once per input before its products */
typedef struct dintattn__amx_tokens_job {
    const dintattn_session *s;
    int n, cols;
} dintattn__amx_tokens_job;

static void dintattn__amx_tokens_unit(void *ctx, int64_t unit, int tid)
{
    const dintattn__amx_tokens_job *j = (const dintattn__amx_tokens_job *)ctx;
    const dintattn_session *s = j->s;
    const size_t nk = ((size_t)j->cols + 31) / 32, t0 = (size_t)unit * 16;
    (void)tid;
    dintattn__amx_tokens(s->xb + t0 * s->xq_ld, s->xq_ld, j->n - (int)t0, nk, s->xt1 + (size_t)unit * nk * 256);
}

/* dintattn__gemm_unit on AMX tiles. A unit is `group` panels of 32 rows (rows r0.. of p; see
   dintattn__unit_panels), so that each block of tokens, read from memory once, serves them all
   from the caches (2.7B BF16, three parts, 512 tokens: 121 tok/s in groups of 4 against 89 one
   panel at a time, 2 and 8 slower; examples/bench --weights bf16 --precision exact --prompt 512),
   packed as bf16 panels (Q8 / Q4 rounded to it) for the B tiles -- or, in a short chunk
   (dintattn__amx_rows_a), taken as the A tiles: BF16 rows where they lie, others converted to bf16
   rows (dintattn__amx_rows), the tokens as B tiles. Bf16 activations (precision FAST) sum
   in f32 over the whole row. F32 activations in three parts (DINTATTN__ACT_BF16X3) sum in f32 over
   slices of columns added in double, as dintattn__gemm_unit_f32 does: Q/K in slices of
   DINTATTN_QK_KC, kept in double, the others in slices of DINTATTN__X3_KC, rounded once
   (tools/check_accuracy.py --size large --tokens 2048: worst error 0.306 (DINT) and 0.075
   (standard) of the tolerance, against the f32 panels' 0.563 and 0.140). */
#ifndef DINTATTN__X3_KC
#define DINTATTN__X3_KC 256
#endif
static void dintattn__gemm_unit_amx(const dintattn_session *s, const dintattn__product *p, unsigned char *panels,
                                    int r0, int group, int n)
{
    const int x3 = p->act == DINTATTN__ACT_BF16X3, K = (p->M->cols + 31) / 32 * 32;
    const int slice = !x3 ? K : p->y64 ? DINTATTN_QK_KC : DINTATTN__X3_KC;
    const int left = p->M->rows - r0, np = (left + DINTATTN__PANEL - 1) / DINTATTN__PANEL;
    const int ng = np < group ? np : group, rows_a = dintattn__amx_rows_a(p->act, n);
    const size_t panel_bytes = (size_t)K * 64; /* 32 bf16 rows of K columns */
    const size_t nk = (size_t)K / 32;          /* the tokens' B tiles (rows_a): per 16 tokens, nk tiles */
    float out[DINTATTN__AMX_GROUP][DINTATTN__PANEL * DINTATTN__AMX_NT], o[DINTATTN__PANEL];
    double sum[DINTATTN__AMX_GROUP][DINTATTN__PANEL * DINTATTN__AMX_NT];
    const unsigned char *w[DINTATTN__AMX_GROUP];
    size_t ldw[DINTATTN__AMX_GROUP], half_w[DINTATTN__AMX_GROUP], kstep[DINTATTN__AMX_GROUP];
    int t0, t, k0, i, g;
    DINTATTN_ASSERT(slice % 32 == 0 && ng <= DINTATTN__AMX_GROUP && (!rows_a || !x3));
    for (g = 0; g < ng; g++) {
        unsigned char *at = panels + g * panel_bytes;
        if (rows_a) w[g] = dintattn__amx_rows(p->M, r0 + DINTATTN__PANEL * g, at, &ldw[g], &half_w[g], &kstep[g]);
        else p->pack(p->M, r0 + DINTATTN__PANEL * g, at);
    }
    dintattn__amx_begin();
    for (t0 = 0; t0 < n; t0 += DINTATTN__AMX_NT) {
        const uint16_t *x = x3 ? s->xb3 + 3 * (size_t)t0 * s->xq_ld : s->xb + (size_t)t0 * s->xq_ld;
        const int half = n - t0 <= DINTATTN__AMX_NT / 2;
        for (k0 = 0; k0 < K; k0 += slice)
            for (g = 0; g < ng; g++) {
                if (rows_a) { /* rows x tokens, turned to tokens x rows */
                    dintattn__tiles_b16_amx(w[g], ldw[g], half_w[g], kstep[g], K, s->xt1 + (size_t)(t0 / 16) * nk * 256, nk * 256,
                                            half, out[g]);
                    dintattn__transpose32(out[g]);
                } else if (!x3) {
                    dintattn__panel_b16_amx(panels + g * panel_bytes, p->M->cols, x, 2 * s->xq_ld, 1, half, out[g]);
                } else {
                    dintattn__panel_b16_amx(panels + g * panel_bytes + (size_t)k0 * 64, K - k0 < slice ? K - k0 : slice,
                                            x + 3 * (size_t)k0, 6 * s->xq_ld, 3, half, out[g]);
                    dintattn__add_slice(out[g], DINTATTN__PANEL * DINTATTN__AMX_NT, sum[g], !k0, NULL);
                }
            }
        for (g = 0; g < ng; g++) {
            const int rg = r0 + DINTATTN__PANEL * g, rows = p->M->rows - rg < DINTATTN__PANEL ? p->M->rows - rg : DINTATTN__PANEL;
            for (t = t0; t < t0 + DINTATTN__AMX_NT && t < n; t++) {
                const double *v = sum[g] + (t - t0) * DINTATTN__PANEL;
                if (!x3) {
                    dintattn__store_panel(p, rg, t, out[g] + (t - t0) * DINTATTN__PANEL, rows);
                } else if (p->y64) {
                    for (i = 0; i < rows; i++) p->y64[(size_t)t * p->ldy + rg + i] = v[i];
                } else {
                    for (i = 0; i < rows; i++) o[i] = (float)v[i];
                    dintattn__store_panel(p, rg, t, o, rows);
                }
            }
        }
    }
    dintattn__amx_end();
}
#endif

/* Bytes of one panel of M's 32 rows packed for int8 (act DINTATTN__ACT_INT8) or bf16 panels (the
   pairs zero up to a multiple of 16, as dintattn__pack_b16 leaves them) */
static size_t dintattn__panel_bytes(int act, const dintattn__mat *M)
{
    if (act == DINTATTN__ACT_INT8) return sizeof(int32_t) * (size_t)(M->cols / 32) * DINTATTN__GQ_PANEL_BLOCK;
    return sizeof(uint32_t) * DINTATTN__PANEL * ((((size_t)M->cols + 1) / 2 + 15) / 16 * 16);
}

static void dintattn__gemm_unit(void *ctx, int64_t unit, int tid)
{
    const dintattn__gemm_job *job = (const dintattn__gemm_job *)ctx;
    const dintattn_session *s = job->s;
    const dintattn__product *p;
    float out[DINTATTN__PANEL * 32]; /* a block's results: 32 tokens at most */
    void *panel = s->pack + (size_t)tid * s->pack_ld;
    const void *packed;
    const unsigned char *xp;
    size_t blk;
    int k = 0, r0, rows, unit_rows, nt, t0, t;
    while (unit >= job->first[k + 1]) k++;
    p = &job->p[k];
    unit_rows = dintattn__unit_rows(s, p);
    r0 = (int)(unit - job->first[k]) * unit_rows;
#ifdef DINTATTN__HAVE_AMX
    if (dintattn__on_amx(p->unit)) { /* bf16 panels of any type but F32 */
        dintattn__gemm_unit_amx(s, p, (unsigned char *)panel, r0, dintattn__unit_panels(s, p), job->n);
        return;
    }
#endif
    rows = p->M->rows - r0 < unit_rows ? p->M->rows - r0 : unit_rows; /* off AMX a unit is one panel */
    if (dintattn__f32_act(p->act)) {
        dintattn__gemm_unit_f32(s, p, panel, s->psum ? s->psum + (size_t)tid * s->psum_ld : NULL, r0, rows, job->n);
        return;
    }
    if (p->M->panels && p->M->panels_pack == p->pack) { /* packed ahead: read, not packed */
        packed = (const unsigned char *)p->M->panels + (size_t)(r0 / DINTATTN__PANEL) * dintattn__panel_bytes(p->act, p->M);
    } else {
        p->pack(p->M, r0, panel);
        packed = panel;
    }
    nt = dintattn__block_tokens(p->act);
    if (p->act == DINTATTN__ACT_INT8) {
        xp = (const unsigned char *)s->xpq;
        blk = sizeof(int32_t) * (size_t)(p->M->cols / 32) * DINTATTN__GQ_X_BLOCK;
    } else {
        xp = (const unsigned char *)s->xpb;
        blk = sizeof(uint32_t) * (size_t)((p->M->cols + 1) / 2) * DINTATTN__GB_NT;
    }
    for (t0 = 0; t0 < job->n; t0 += nt, xp += blk) {
        s->k->w[p->M->type].panel(packed, p->M->cols, xp, out);
        for (t = t0; t < t0 + nt && t < job->n; t++)
            dintattn__store_panel(p, r0, t, out + (t - t0) * DINTATTN__PANEL, rows);
    }
}

/* The plan's route for product p of n tokens, but for a matrix too wide for the panels' gathers
   (int32 offsets) the route it would take without panels */
static const dintattn__route *dintattn__product_route(const dintattn_session *s, const dintattn__product *p, int n)
{
    const dintattn__route *r = dintattn__route_of(s, p->M->type, n);
    if (n > 1 && p->M->panels && !dintattn__on_panels(r->unit) &&
        s->plan.route[p->M->type][DINTATTN__N_GEMM].pack == p->M->panels_pack)
        /* packed ahead, a matrix's panels read its rows once for all the tokens from 2 on, where the
           rows read them per 4 (a batch of decoded tokens: dintattn_model_prepack) */
        return &s->plan.route[p->M->type][DINTATTN__N_GEMM];
    if (dintattn__on_panels(r->unit) && (dintattn__mat_bytes(p->M) / (size_t)p->M->rows > 0x7FFFFFFF / 16 ||
                                         (size_t)p->M->cols / 32 > 0x7FFFFFFF / 16))
        return &s->plan.plain[p->M->type];
    return r;
}

DINTATTN_API dintattn_result dintattn_session_prefill_unit(const dintattn_session *s, const char *type,
                                                           dintattn_prefill_unit *out, dintattn_error *err)
{
    int t;
    if (!s || !out) return dintattn__fail(err, DINTATTN_ERR_ARG, "dintattn_session_prefill_unit: NULL argument");
    for (t = 0; t < DINTATTN__W_COUNT && (!type || strcmp(type, dintattn__wtypes[t].name)); t++) {}
    if (t == DINTATTN__W_COUNT)
        return dintattn__fail(err, DINTATTN_ERR_ARG, "prefill unit: \"%.40s\" is not a weight type (f32, f16, bf16, q8, q4)",
                              type ? type : "(null)");
    *out = dintattn__route_of(s, (dintattn__wtype)t, s->n_batch)->unit;
    return DINTATTN_OK;
}

/* --- weights packed ahead (dintattn_model_prepack) ------------------------------------------ */

/* The model's weight matrices: up to max pointers into out, the count returned */
static int dintattn__model_mats(dintattn_model *m, dintattn__mat **out, int max)
{
    int l, n = 0, k;
    for (l = 0; l < m->cfg.n_layers; l++) {
        dintattn__layer *L = &m->layers[l];
        dintattn__mat *const mats[] = {&L->wq1, &L->wk1, &L->wq2, &L->wk2, &L->q_base, &L->k_base, &L->q1_down,
                                       &L->k1_down, &L->q2_down, &L->k2_down, &L->wv, &L->wo, &L->lambda_proj,
                                       &L->w_gate, &L->w_up, &L->w_down};
        for (k = 0; k < (int)(sizeof mats / sizeof mats[0]); k++)
            if (mats[k]->rows > 0 && mats[k]->w && n < max) out[n++] = mats[k];
    }
    if (m->output.rows > 0 && m->output.w && n < max) out[n++] = &m->output;
    return n;
}

typedef struct dintattn__prepack_job {
    dintattn__mat **M;
    const dintattn__route **r;
    unsigned char **to;
    int64_t *first;                         /* matrix k's panels are units first[k] .. first[k + 1] - 1 */
    int count;
} dintattn__prepack_job;

static void dintattn__prepack_unit(void *ctx, int64_t unit, int tid)
{
    const dintattn__prepack_job *job = (const dintattn__prepack_job *)ctx;
    int k = 0;
    int64_t i;
    (void)tid;
    while (unit >= job->first[k + 1]) k++;
    i = unit - job->first[k];
    job->r[k]->pack(job->M[k], (int)i * DINTATTN__PANEL, job->to[k] + (size_t)i * dintattn__panel_bytes(job->r[k]->act, job->M[k]));
}

DINTATTN_API dintattn_result dintattn_model_prepack(dintattn_model *m, dintattn_session *s, size_t max_bytes, size_t *bytes,
                                                    dintattn_error *err)
{
    dintattn__prepack_job job;
    dintattn__mat **all;
    size_t total = 0;
    int n, k, c = 0;
    if (bytes) *bytes = 0;
    if (!m || !s) return dintattn__fail(err, DINTATTN_ERR_ARG, "dintattn_model_prepack: NULL argument");
    if (s->model != m) return dintattn__fail(err, DINTATTN_ERR_ARG, "dintattn_model_prepack: the session is of another model");
    n = 16 * m->cfg.n_layers + 1;
    all = (dintattn__mat **)dintattn__alloc(sizeof *all * (size_t)n);
    job.M = (dintattn__mat **)dintattn__alloc(sizeof *job.M * (size_t)n);
    job.r = (const dintattn__route **)dintattn__alloc(sizeof *job.r * (size_t)n);
    job.to = (unsigned char **)dintattn__alloc(sizeof *job.to * (size_t)n);
    job.first = (int64_t *)dintattn__alloc(sizeof *job.first * (size_t)(n + 1));
    if (!all || !job.M || !job.r || !job.to || !job.first) {
        DINTATTN_FREE(all), DINTATTN_FREE(job.M), DINTATTN_FREE((void *)job.r), DINTATTN_FREE(job.to), DINTATTN_FREE(job.first);
        return dintattn__fail(err, DINTATTN_ERR_NOMEM, "dintattn_model_prepack: out of memory for %d matrices", n);
    }
    n = dintattn__model_mats(m, all, n);
    job.first[0] = 0;
    for (k = 0; k < n; k++) { /* the matrices a prompt runs on int8 or bf16 panels, not packed yet */
        dintattn__product p;
        const dintattn__route *r = &s->plan.route[all[k]->type][DINTATTN__N_GEMM];
        memset(&p, 0, sizeof p);
        p.M = all[k];
        if (!dintattn__on_panels(r->unit) || dintattn__on_amx(r->unit) || !r->pack ||
            (r->act != DINTATTN__ACT_INT8 && r->act != DINTATTN__ACT_BF16) ||
            dintattn__product_route(s, &p, s->plan.long_from > DINTATTN__GEMM_MIN_TOKENS ? DINTATTN__GEMM_MIN_TOKENS : s->plan.long_from) != r ||
            (all[k]->panels && all[k]->panels_pack == r->pack))
            continue;
        job.M[c] = all[k];
        job.r[c] = r;
        job.first[c + 1] = job.first[c] + (all[k]->rows + DINTATTN__PANEL - 1) / DINTATTN__PANEL;
        total += (size_t)(job.first[c + 1] - job.first[c]) * dintattn__panel_bytes(r->act, all[k]);
        c++;
    }
    job.count = c;
    if (bytes) *bytes = total;
    for (k = 0; k < c && (!max_bytes || total <= max_bytes); k++) {
        job.to[k] = (unsigned char *)dintattn__own_raw(m, (size_t)(job.first[k + 1] - job.first[k]), dintattn__panel_bytes(job.r[k]->act, job.M[k]));
        if (!job.to[k]) break;
    }
    if (k < c) {
        DINTATTN_FREE(all), DINTATTN_FREE(job.M), DINTATTN_FREE((void *)job.r), DINTATTN_FREE(job.to), DINTATTN_FREE(job.first);
        if (max_bytes && total > max_bytes)
            return dintattn__fail(err, DINTATTN_ERR_NOMEM, "dintattn_model_prepack: the panels would take %.0f MB, more than the %.0f MB allowed",
                                  (double)total / 1e6, (double)max_bytes / 1e6);
        return dintattn__fail(err, DINTATTN_ERR_NOMEM, "dintattn_model_prepack: out of memory for %.0f MB of panels", (double)total / 1e6);
    }
    if (c > 0) dintattn__pool_run(&s->pool, job.first[c], dintattn__prepack_unit, &job);
    for (k = 0; k < c; k++) job.M[k]->panels = job.to[k], job.M[k]->panels_pack = job.r[k]->pack;
    DINTATTN_FREE(all), DINTATTN_FREE(job.M), DINTATTN_FREE((void *)job.r), DINTATTN_FREE(job.to), DINTATTN_FREE(job.first);
    dintattn__ok(err);
    return DINTATTN_OK;
}

/* A block of DINTATTN__GQ_NT tokens' int8 activations (the first n of them; the rest zero)
   packed for the panels: per block of 32 columns, 8 groups of 4 unsigned bytes (q + 128) per
   token, then each token's d. */
static void dintattn__pack_xq(const dintattn__xq *x, int n, int cols, int32_t *o)
{
    const int nt = DINTATTN__GQ_NT;
    int b, t, g, k;
    for (b = 0; b < cols / 32; b++, o += DINTATTN__GQ_X_BLOCK)
        for (t = 0; t < nt; t++) {
            const float d = t < n ? x[t].s[b] : 0.0f;
            for (g = 0; g < 8; g++) {
                unsigned char u[4] = {128, 128, 128, 128};
                for (k = 0; t < n && k < 4; k++) u[k] = (unsigned char)(x[t].q[32 * b + 4 * g + k] + 128);
                memcpy(o + nt * g + t, u, 4);
            }
            memcpy(o + 8 * nt + t, &d, sizeof d);
        }
}

/* A block of DINTATTN__GB_NT tokens' bf16 activations (the first n; the rest zero) packed for the
   panels: per pair of columns, each token's pair (an odd last column with a zero). */
static void dintattn__pack_xb(const uint16_t *const *x, int n, int cols, uint32_t *o)
{
    int k, t;
    for (k = 0; k < (cols + 1) / 2; k++, o += DINTATTN__GB_NT)
        for (t = 0; t < DINTATTN__GB_NT; t++)
            o[t] = t >= n ? 0 : x[t][2 * k] | (2 * k + 1 < cols ? (uint32_t)x[t][2 * k + 1] << 16 : 0);
}

/* The chunk's activations for int8 or bf16 products, per block of tokens on the pool: quantized
   (rounded) row by row into s->xq (s->xb), and, with `packed`, also in the panels' token blocks. */
typedef struct dintattn__act_job {
    const dintattn_session *s;
    const float *x;
    int ldx, n, cols, act, packed;
} dintattn__act_job;

static void dintattn__act_unit(void *ctx, int64_t unit, int tid)
{
    const dintattn__act_job *job = (const dintattn__act_job *)ctx;
    const dintattn_session *s = job->s;
    const size_t ld = s->xq_ld;
    const int int8 = job->act == DINTATTN__ACT_INT8, nt = dintattn__block_tokens(job->act);
    const int t0 = (int)unit * nt;
    dintattn__xq xq[DINTATTN__GQ_NT];
    const uint16_t *xb[DINTATTN__GB_NT];
    int t;
    (void)tid;
#ifdef DINTATTN__HAVE_AMX
    if (job->act == DINTATTN__ACT_BF16X3) {
        for (t = t0; t < t0 + nt && t < job->n; t++)
            dintattn__split_bf16x3(job->x + (size_t)t * job->ldx, job->cols, s->xb3 + 3 * (size_t)t * ld);
        return;
    }
#endif
    if (dintattn__f32_act(job->act)) {
        s->k->packxf(job->x + (size_t)t0 * job->ldx, job->ldx, job->n - t0 < nt ? job->n - t0 : nt, job->cols,
                     job->act == DINTATTN__ACT_BF16_F32, s->xpf + (size_t)unit * (size_t)job->cols * DINTATTN__GF_NT);
        return;
    }
    for (t = t0; t < t0 + nt && t < job->n; t++) {
        const float *x = job->x + (size_t)t * job->ldx;
        if (int8)
            s->k->quantize_x(x, job->cols, s->xq + (size_t)t * ld, s->xq_s + (size_t)t * ld / 32,
                                 s->xq_c + (size_t)t * ld / 32);
        else
            s->k->to_bf16(x, job->cols, s->xb + (size_t)t * ld);
    }
    if (!job->packed) return;
    for (t = 0; t < nt && t0 + t < job->n; t++) {
        if (int8) xq[t] = dintattn__xq_row(s, t0 + t);
        else xb[t] = s->xb + (size_t)(t0 + t) * ld;
    }
    if (int8) dintattn__pack_xq(xq, t, job->cols, s->xpq + (size_t)unit * (size_t)(job->cols / 32) * DINTATTN__GQ_X_BLOCK);
    else dintattn__pack_xb(xb, t, job->cols, s->xpb + (size_t)unit * (size_t)((job->cols + 1) / 2) * DINTATTN__GB_NT);
}

/* Whether a product of p[0..count) on input x with activations `act` runs on panels for n tokens
   (then the input's tokens are packed in the panels' blocks) */
static int dintattn__panels_read(const dintattn_session *s, const dintattn__product *p, int count, int n, const float *x, int act)
{
    int k;
    for (k = 0; k < count; k++) {
        const dintattn__route *r = dintattn__product_route(s, &p[k], n);
        if (p[k].x == x && r->act == act && dintattn__on_panels(r->unit)) return 1;
    }
    return 0;
}

/* Runs `count` products (at most 8) of the chunk's n rows. F32 activations: matrix-vector rows
   shared out on the pool for fewer than DINTATTN__GEMM_MIN_TOKENS tokens (small products on the
   caller alone; each row read once for the tokens, where sgemm, converting other types to f32
   tiles first, takes a 2.7B BF16 model's 4-token prompt 9 tokens' time), f32 panels or sgemm for
   a longer prompt. Int8 or bf16 activations: x is quantized (rounded) once per distinct input, then
   rows on the pool for one token, packed panels (dintattn__gemm_unit) for a prompt where the
   level has them, else rows in tiles of 4 x 4. */
static void dintattn__products(dintattn_session *s, int n, const dintattn__product *p, int count)
{
    dintattn__product q[8], g[8];
    dintattn__rows_job job;
    dintattn__gemm_job gj;
    const float *prepared[DINTATTN__ACT_COUNT] = {NULL}; /* by DINTATTN__ACT_*: the input prepared for it */
    int64_t rows = 0;
    size_t bytes = 0, gbytes = 0;
    int k, t, r, m = 0, ng = 0;
    DINTATTN_ASSERT(count <= 8);
    gj.first[0] = 0;
    for (k = 0; k < count; k++) {
        const dintattn__route *route = dintattn__product_route(s, &p[k], n);
        const int panels = dintattn__on_panels(route->unit);
        q[k] = p[k];
        DINTATTN_ASSERT(!q[k].swiglu_up || (n == 1 && !q[k].y64 && !q[k].add));
        q[k].act = route->act;
        q[k].unit = route->unit;
        q[k].pack = route->pack;
        if ((q[k].act != DINTATTN__ACT_F32 || panels) && q[k].x != prepared[q[k].act]) {
            /* the batch's products share one input of each kind: quantized, rounded or packed once */
            dintattn__act_job aj;
            const int nt = dintattn__block_tokens(q[k].act);
            DINTATTN_ASSERT(!prepared[q[k].act] && (size_t)q[k].M->cols <= s->xq_ld);
            aj.s = s, aj.x = q[k].x, aj.ldx = q[k].ldx, aj.n = n, aj.cols = q[k].M->cols, aj.act = q[k].act;
            /* the panels' token blocks; AMX reads the bf16 rows as they are (an input's products
               of one kind of activations run in one place) */
            aj.packed = (n >= DINTATTN__GEMM_MIN_TOKENS || dintattn__panels_read(s, p, count, n, q[k].x, q[k].act)) &&
                        s->pack_ld && !dintattn__on_amx(q[k].unit);
            dintattn__pool_run(n >= DINTATTN__GEMM_MIN_TOKENS ? &s->pool : NULL, (n + nt - 1) / nt, dintattn__act_unit, &aj);
#ifdef DINTATTN__HAVE_AMX
            if (panels && dintattn__on_amx(q[k].unit) && dintattn__amx_rows_a(q[k].act, n)) { /* as B tiles */
                dintattn__amx_tokens_job tj;
                tj.s = s, tj.n = n, tj.cols = q[k].M->cols;
                dintattn__pool_run(&s->pool, (n + 15) / 16, dintattn__amx_tokens_unit, &tj);
            }
#endif
            prepared[q[k].act] = q[k].x;
        }
        if (q[k].unit == DINTATTN_PREFILL_SGEMM) {
            dintattn__gemm(s, n, &q[k]);
            for (t = 0; q[k].bias && t < n; t++)
                for (r = 0; r < q[k].M->rows; r++) q[k].y[(size_t)t * q[k].ldy + r] += q[k].bias[r];
            continue;
        }
        if (panels) {
            const int unit_rows = dintattn__unit_rows(s, &q[k]);
            g[ng] = q[k];
            gj.first[ng + 1] = gj.first[ng] + (q[k].M->rows + unit_rows - 1) / unit_rows;
            gbytes += dintattn__mat_bytes(q[k].M);
            ng++;
            continue;
        }
        q[m++] = q[k];
        rows += q[k].M->rows;
        bytes += dintattn__mat_bytes(q[k].M) + (q[k].swiglu_up ? dintattn__mat_bytes(q[k].swiglu_up) : 0);
    }
    if (ng) {
        gj.s = s, gj.p = g, gj.count = ng, gj.n = n;
        dintattn__pool_run(gbytes * (size_t)n < dintattn__solo_bytes ? NULL : &s->pool, gj.first[ng], dintattn__gemm_unit, &gj);
    }
    job.s = s;
    job.p = q;
    job.count = m;
    job.n = n;
    dintattn__pool_run(bytes * (size_t)n < dintattn__solo_bytes ? NULL : &s->pool,
                       (rows + DINTATTN__UNIT_ROWS - 1) / DINTATTN__UNIT_ROWS, dintattn__rows_unit, &job);
}

/* One Q/K projection: `heads` heads of width d, computed in double into `out` [n][heads * d]:
   dense (or merged) W, or Shared-DIFF's factors (q = base x + up[h] (down[h] x)). */
typedef struct dintattn__qk_proj {
    int heads;
    const dintattn__mat *W;                 /* dense */
    const dintattn__mat *down;              /* factored: down [heads * r, D], up [heads * d, r] */
    const float *up;
    const double *base_x;                   /* [n][d]: q_base x or k_base x */
    double *down_x;                         /* [n][heads * r] */
    double *out;
    float *q_rows;                          /* a query: its rows [n][heads * d] go here ... */
    const dintattn__cache *cache;           /* ... a key: into this cache */
} dintattn__qk_proj;

/* out = base x + up[h] @ (down[h] x) for head h of the chunk's n rows, in double: by dgemm for a
   prompt (on the caller, up[h] widened into s->up64 first), by loops for fewer than
   DINTATTN__GEMM_MIN_TOKENS. A decoded token reads every head's up (1 MB of f32 a token at the
   Shared-DIFF bench shape; held in double it would be 2 MB); dgemm copies each head's before
   multiplying, and takes about 400 us a token there, these loops with their prefetch 250 (perf
   record of examples/bench --weights q4 --threads 1 on tools/make_model.py --preset
   bench-shared-diff). */
static void dintattn__expand_head(const dintattn_session *s, int n, const dintattn__qk_proj *p, int h)
{
    const int d = s->model->cfg.head_dim, r = s->model->cfg.qk_rank, width = p->heads * d;
    const float *up = p->up + (size_t)h * d * r;
    int t, i, k;
    for (t = 0; t < n; t++)
        memcpy(p->out + (size_t)t * width + (size_t)h * d, p->base_x + (size_t)t * d, sizeof(double) * (size_t)d);
    if (n >= DINTATTN__GEMM_MIN_TOKENS) {
        for (i = 0; i < d * r; i++) s->up64[i] = up[i];
        cblas_dgemm(CblasRowMajor, CblasNoTrans, CblasTrans, n, d, r, 1.0, p->down_x + (size_t)h * r, p->heads * r, s->up64, r,
                    1.0, p->out + (size_t)h * d, width);
        return;
    }
    for (t = 0; t < n; t++) {
        const double *z = p->down_x + (size_t)t * p->heads * r + (size_t)h * r;
        double *o = p->out + (size_t)t * width + (size_t)h * d;
        for (i = 0; i < d; i++) { /* four chains of sums a row */
            const float *u = up + (size_t)i * r;
            double a[4] = {0, 0, 0, 0};
#ifdef __GNUC__
            for (k = 0; k < r; k += 16) __builtin_prefetch(u + 512 + k); /* 2 KB ahead: up comes from memory */
#endif
            for (k = 0; k + 4 <= r; k += 4)
                a[0] += u[k] * z[k], a[1] += u[k + 1] * z[k + 1], a[2] += u[k + 2] * z[k + 2], a[3] += u[k + 3] * z[k + 3];
            for (; k < r; k++) a[0] += u[k] * z[k];
            o[i] += (a[0] + a[1]) + (a[2] + a[3]);
        }
    }
}

typedef struct dintattn__expand_job {
    const dintattn_session *s;
    dintattn__qk_proj *const *proj;
    int n;
} dintattn__expand_job;

/* Unit u: head u of the projections in turn */
static void dintattn__expand_unit(void *ctx, int64_t unit, int tid)
{
    const dintattn__expand_job *j = (const dintattn__expand_job *)ctx;
    int i = 0;
    (void)tid;
    for (; unit >= j->proj[i]->heads; i++) unit -= j->proj[i]->heads;
    dintattn__expand_head(j->s, j->n, j->proj[i], (int)unit);
}

/* Every head of the n_proj factored projections: a decoded token's heads on the pool (on the
   caller alone they leave the other threads waiting: Shared-DIFF's Q4 decode reads 0.811-0.864
   of the bandwidth this way against 0.736-0.827 on the caller, examples/bench --weights q4 on
   tools/make_model.py --preset bench-shared-diff, 2 threads), a prompt's dgemm calls on the
   caller */
static void dintattn__expand_factors(dintattn_session *s, int n, dintattn__qk_proj *const *proj, int n_proj)
{
    dintattn__expand_job j;
    int64_t units = 0;
    int i;
    for (i = 0; i < n_proj; i++) units += proj[i]->heads;
    j.s = s, j.proj = proj, j.n = n;
    dintattn__pool_run(n < DINTATTN__GEMM_MIN_TOKENS ? &s->pool : NULL, units, dintattn__expand_unit, &j);
}

/* Runs fn over the chunk's n tokens in units of DINTATTN__TOKEN_UNIT (unit u: tokens
   [u * TOKEN_UNIT, ...)), on the pool for a prompt and on the caller for a token or a few */
#define DINTATTN__TOKEN_UNIT 8
static void dintattn__per_token(dintattn_session *s, int n, dintattn__task fn, void *ctx)
{
    dintattn__pool_run(n >= DINTATTN__GEMM_MIN_TOKENS ? &s->pool : NULL, (n + DINTATTN__TOKEN_UNIT - 1) / DINTATTN__TOKEN_UNIT,
                       fn, ctx);
}

/* Tokens [t0, t1) of a unit of n */
static void dintattn__token_range(int64_t unit, int n, int *t0, int *t1)
{
    *t0 = (int)unit * DINTATTN__TOKEN_UNIT;
    *t1 = n - *t0 < DINTATTN__TOKEN_UNIT ? n : *t0 + DINTATTN__TOKEN_UNIT;
}

/* Where each of a batch's stacked tokens goes (dintattn_batch_step): its sequence's session and
   its position there */
typedef struct dintattn__stack {
    dintattn_session **sess;                /* [n] */
    int *pos;                               /* [n] */
} dintattn__stack;

/* A unit of the projections' tokens: RoPE in double, queries to their f32 rows, keys (through
   the thread's k_row) and values to the cache (of the token's own session in a batch) */
typedef struct dintattn__qk_rows_job {
    dintattn_session *s;
    dintattn__qk_proj **proj;
    const dintattn__stack *stack;           /* NULL: every token is s's, at pos0 + t */
    int l, n, pos0, n_proj;
} dintattn__qk_rows_job;

static void dintattn__qk_rows_unit(void *ctx, int64_t unit, int tid)
{
    const dintattn__qk_rows_job *j = (const dintattn__qk_rows_job *)ctx;
    dintattn_session *s = j->s;
    const dintattn_config *c = &s->model->cfg;
    const int d = c->head_dim, pos0 = j->pos0;
    float *k_row = s->k_row + (size_t)tid * d;
    int i, t, t0, t1, h, k;
    dintattn__token_range(unit, j->n, &t0, &t1);
    for (i = 0; i < j->n_proj; i++) {
        const dintattn__qk_proj *p = j->proj[i];
        for (t = t0; t < t1; t++) {
            const dintattn_session *ts = j->stack ? j->stack->sess[t] : s;
            const int pos = j->stack ? j->stack->pos[t] : pos0 + t;
            double *row = p->out + (size_t)t * p->heads * d;
            if (c->rope != DINTATTN_ROPE_NONE)
                dintattn__rope(row, p->heads, d, c->rope_dim, ts->rope_cos + (size_t)pos * (c->rope_dim / 2),
                               ts->rope_sin + (size_t)pos * (c->rope_dim / 2), c->rope);
            for (h = 0; h < p->heads; h++) {
                float *dst = p->q_rows ? p->q_rows + ((size_t)t * p->heads + h) * d : k_row;
                for (k = 0; k < d; k++) dst[k] = (float)row[(size_t)h * d + k];
                if (!p->q_rows) dintattn__cache_put(p->cache == &s->k1 ? &ts->k1 : &ts->k2, j->l, h, pos, dst);
            }
        }
    }
    for (h = 0; h < c->n_v_heads; h++)
        for (t = t0; t < t1; t++)
            dintattn__cache_put(j->stack ? &j->stack->sess[t]->v : &s->v, j->l, h, j->stack ? j->stack->pos[t] : pos0 + t,
                                s->v_rows + ((size_t)t * c->n_v_heads + h) * c->v_head_dim);
}

/* Q1, K1, Q2, K2 and V of the chunk's n rows at positions pos0..: queries into s->q1 and s->q2
   ([n][heads * d]), keys and values into the cache (with a stack: each token's into its own
   session's, at its own position). */
static void dintattn__project(dintattn_session *s, int l, int n, int pos0, const dintattn__stack *stack)
{
    const dintattn_model *m = s->model;
    const dintattn_config *c = &m->cfg;
    const dintattn__layer *L = &m->layers[l];
    const int D = c->dim, d = c->head_dim, r = c->qk_rank, H = c->n_heads;
    const int n_proj = c->attention == DINTATTN_ATTN_STANDARD ? 2 : c->shared_k ? 3 : 4; /* K2 is K1 */
    dintattn__qk_proj q1, k1, q2, k2, *proj[4];
    dintattn__qk_rows_job tj;
    dintattn__product prods[8];
    double *out = s->qk64, *down_x = s->down_x;
    int i, count = 0;
    memset(&q1, 0, sizeof q1), memset(&k1, 0, sizeof k1), memset(&q2, 0, sizeof q2), memset(&k2, 0, sizeof k2);
    q1.heads = c->n_heads, q1.W = &L->wq1, q1.down = &L->q1_down, q1.up = L->q1_up, q1.base_x = s->q_base_x;
    k1.heads = c->n_k1_heads, k1.W = &L->wk1, k1.down = &L->k1_down, k1.up = L->k1_up, k1.base_x = s->k_base_x;
    q2.heads = c->n_q2_heads, q2.W = &L->wq2, q2.down = &L->q2_down, q2.up = L->q2_up, q2.base_x = s->q_base_x;
    k2.heads = c->n_k2_heads, k2.W = &L->wk2, k2.down = &L->k2_down, k2.up = L->k2_up, k2.base_x = s->k_base_x;
    q1.q_rows = s->q1, k1.cache = &s->k1, q2.q_rows = s->q2, k2.cache = &s->k2;
    proj[0] = &q1, proj[1] = &k1, proj[2] = &q2, proj[3] = &k2;
    /* one batch of products: the dense Q/K (or the factors' base and down) and V */
    if (m->qk_factored) {
        prods[count++] = dintattn__product_f64(&L->q_base, s->xn, s->q_base_x, d);
        prods[count++] = dintattn__product_f64(&L->k_base, s->xn, s->k_base_x, d);
    }
    for (i = 0; i < n_proj; i++) {
        dintattn__qk_proj *p = proj[i];
        p->out = out;
        out += (size_t)n * p->heads * d;
        if (m->qk_factored) {
            p->down_x = down_x;
            down_x += (size_t)n * p->heads * r;
            prods[count++] = dintattn__product_f64(p->down, s->xn, p->down_x, p->heads * r);
        } else {
            prods[count++] = dintattn__product_f64(p->W, s->xn, p->out, p->heads * d);
        }
    }
    prods[count++] = dintattn__product_f32(&L->wv, s->xn, D, s->v_rows, c->n_v_heads * c->v_head_dim, 0);
    if (s->lambda_rows) prods[count++] = dintattn__product_f32(&L->lambda_proj, s->xn, D, s->lambda_rows, H, 0);
    dintattn__products(s, n, prods, count);
    /* token lambda (docs/format.md section 3): lambda[n, i] = sigmoid(lambda_proj[i, :] . x_n) */
    for (i = 0; s->lambda_rows && i < n * H; i++) s->lambda_rows[i] = 1.0f / (1.0f + expf(-s->lambda_rows[i]));
    /* then the factors, and per token on the pool: RoPE, the rows in f32, the keys and values cached */
    if (m->qk_factored) dintattn__expand_factors(s, n, proj, n_proj);
    tj.s = s, tj.l = l, tj.n = n, tj.pos0 = pos0, tj.proj = proj, tj.n_proj = n_proj, tj.stack = stack;
    dintattn__per_token(s, n, dintattn__qk_rows_unit, &tj);
}

/* A unit of the chunk's rows: RMSNorm of x into xn with weights w, or the FFN's activation (SwiGLU,
   or PolyNorm with the layer's weights) of gate and up into gate */
typedef struct dintattn__rows_step {
    dintattn_session *s;
    const float *w;
    const dintattn__layer *L; /* NULL: RMSNorm; else the FFN's activation */
    int n;
} dintattn__rows_step;

static void dintattn__rows_step_unit(void *ctx, int64_t unit, int tid)
{
    const dintattn__rows_step *j = (const dintattn__rows_step *)ctx;
    dintattn_session *s = j->s;
    const dintattn_config *c = &s->model->cfg;
    const size_t D = (size_t)c->dim, F = (size_t)c->hidden_dim;
    int t, t0, t1;
    (void)tid;
    dintattn__token_range(unit, j->n, &t0, &t1);
    if (!j->L)
        dintattn__rmsnorm_rows(s->xn + t0 * D, s->x + t0 * D, j->w, t1 - t0, (int)D, c->norm_eps);
    else if (c->ffn_act == DINTATTN_FFN_SILU)
        s->k->swiglu(s->ffn_gate + t0 * F, s->ffn_up + t0 * F, (size_t)(t1 - t0) * F);
    else
        for (t = t0; t < t1; t++)
            dintattn__polynorm(s->ffn_gate + t * F, s->ffn_up + t * F, (int)F, j->L->act_weight, j->L->act_bias);
}

/* xn = RMSNorm(x) with weights w, for the chunk's n rows */
static void dintattn__norm_chunk(dintattn_session *s, const float *w, int n)
{
    dintattn__rows_step j;
    j.s = s, j.w = w, j.L = NULL, j.n = n;
    dintattn__per_token(s, n, dintattn__rows_step_unit, &j);
}

/* x += Attn(RMSNorm(x)) for the chunk's n tokens at positions pos0.. */
static void dintattn__attention_block(dintattn_session *s, int l, int n, int pos0)
{
    const dintattn_config *c = &s->model->cfg;
    const dintattn__layer *L = &s->model->layers[l];
    const int D = c->dim;
    dintattn__product wo;
    dintattn__chunk ch;
    dintattn__norm_chunk(s, L->attn_norm, n);
    dintattn__project(s, l, n, pos0, NULL);
    ch.s = s, ch.w = s, ch.l = l, ch.n = n, ch.pos0 = pos0;
    ch.q1 = s->q1, ch.q2 = s->q2, ch.lambda = s->lambda_rows, ch.att = s->att;
    dintattn__attention(&ch);
    wo = dintattn__product_f32(&L->wo, s->att, c->n_heads * c->v_head_dim, s->x, D, 1);
    dintattn__products(s, n, &wo, 1);
}

/* Records rows[0..n) (each `width` floats) as activation `kind` of layer l: each row for the
   session it belongs to (st: a batch's stacked rows; NULL: all s's), if that session collects. */
static void dintattn__act_rows(dintattn_session *s, const dintattn__stack *st, int l, int kind,
                               const float *rows, int n, int width)
{
    int t;
    for (t = 0; t < n; t++) {
        const dintattn_session *o = st ? st->sess[t] : s;
        if (o->act)
            dintattn__act_add(&o->act->acc[(size_t)l * DINTATTN_ACT_KINDS + (size_t)kind], o->act->k,
                              rows + (size_t)t * (size_t)width, width);
    }
}

/* x += w_down @ (act(w_gate @ h) * (w_up @ h)), h = RMSNorm(x), for the chunk's n rows (st: a
   batch's, each its session's; NULL: all s's). */
static void dintattn__ffn_block(dintattn_session *s, int l, int n, const dintattn__stack *st)
{
    const dintattn_config *c = &s->model->cfg;
    const dintattn__layer *L = &s->model->layers[l];
    const int D = c->dim, F = c->hidden_dim, silu = c->ffn_act == DINTATTN_FFN_SILU;
    dintattn__product p[2];
    dintattn__norm_chunk(s, L->ffn_norm, n);
    dintattn__act_rows(s, st, l, DINTATTN_ACT_FFN_IN, s->xn, n, D);
    p[0] = dintattn__product_f32(&L->w_gate, s->xn, D, s->ffn_gate, F, 0);
    p[1] = dintattn__product_f32(&L->w_up, s->xn, D, s->ffn_up, F, 0);
    p[0].bias = L->b_gate, p[1].bias = L->b_up;
    if (n == 1 && silu) { /* decode: SwiGLU row by row inside the product, no hand-off */
        p[0].swiglu_up = &L->w_up, p[0].swiglu_up_bias = L->b_up;
        dintattn__products(s, n, p, 1);
    } else {
        dintattn__rows_step j;
        dintattn__products(s, n, p, 2);
        j.s = s, j.w = NULL, j.L = L, j.n = n;
        dintattn__per_token(s, n, dintattn__rows_step_unit, &j);
    }
    p[0] = dintattn__product_f32(&L->w_down, s->ffn_gate, F, s->x, D, 1);
    p[0].bias = L->b_down;
    dintattn__products(s, n, p, 1);
    dintattn__act_rows(s, st, l, DINTATTN_ACT_HIDDEN, s->x, n, D);
}

/* DINT, before a step of n tokens at pos: S at pos becomes the checkpoint of every multiple of
   ckpt_every the step passes (pos is the last boundary before it), and the step's tokens and
   start are recorded, so that dintattn_session_truncate can run them again as they ran. */
static void dintattn__record_step(dintattn_session *s, const int *tokens, int n)
{
    const dintattn_config *c = &s->model->cfg;
    const int a = s->pos, K = s->ckpt_every;
    int i, l, h;
    if (!s->ids) return;
    for (i = (a + K - 1) / K; i <= s->n_ckpt && i * K < a + n; i++) {
        if (i == 0 || s->ckpt_pos[i] == a) continue; /* zero, or already S at pos */
        for (l = 0; l < c->n_layers; l++)
            for (h = 0; h < c->n_heads; h++)
                memcpy(dintattn__ckpt_row(s, i, l, h), dintattn__S_row(s, l, h), sizeof(double) * (size_t)a);
        s->ckpt_pos[i] = a;
    }
    if (tokens != s->ids + a) memcpy(s->ids + a, tokens, sizeof(int) * (size_t)n);
    s->step_start[a] = 1;
    memset(s->step_start + a + 1, 0, (size_t)n - 1);
}

/* Runs n <= n_batch tokens; writes logits of all rows (all) or of the last row to `logits`. */
static void dintattn__forward_chunk(dintattn_session *s, const int *tokens, int n, float *logits, int all)
{
    const dintattn_model *m = s->model;
    const dintattn_config *c = &m->cfg;
    const int D = c->dim, V = c->vocab_size;
    dintattn__product head;
    int t, l;
    dintattn__record_step(s, tokens, n);
    for (t = 0; t < n; t++)
        s->k->w[m->tok_embeddings.type].to_f32(&m->tok_embeddings, (size_t)tokens[t] * (size_t)D, (size_t)D,
                                               s->x + (size_t)t * D);
    for (l = 0; l < c->n_layers; l++) {
        dintattn__attention_block(s, l, n, s->pos);
        dintattn__ffn_block(s, l, n, NULL);
    }
    s->pos += n;
    if (!logits) return;
    if (all) {
        dintattn__norm_chunk(s, m->norm, n);
    } else {
        dintattn__rmsnorm(s->xn, s->x + (size_t)(n - 1) * D, m->norm, D, c->norm_eps);
        n = 1;
    }
    head = dintattn__product_f32(&m->output, s->xn, D, logits, V, 0);
    dintattn__products(s, n, &head, 1);
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

/* One pass of a batch: part[i] tokens of item i (from done[i]) stacked at rows off[i].. of the
   host's buffers; `out` holds a row of logits per item that ends in this pass, `chunks` one
   dintattn__chunk per item. */
static void dintattn__batch_pass(dintattn_session *h, const dintattn_batch_item *items, int n_items, const int *done,
                                 const int *part, const int *off, int N, const dintattn__stack *st, float *out,
                                 dintattn__chunk *chunks)
{
    const dintattn_model *m = h->model;
    const dintattn_config *c = &m->cfg;
    const int D = c->dim, V = c->vocab_size, H = c->n_heads, d = c->head_dim;
    dintattn__product head;
    int i, t, l, k = 0;
    for (i = 0; i < n_items; i++) {
        dintattn_session *s = items[i].sess;
        const int *tokens = items[i].tokens + done[i];
        if (!part[i]) continue;
        dintattn__record_step(s, tokens, part[i]);
        for (t = 0; t < part[i]; t++) {
            st->sess[off[i] + t] = s, st->pos[off[i] + t] = s->pos + t;
            s->k->w[m->tok_embeddings.type].to_f32(&m->tok_embeddings, (size_t)tokens[t] * (size_t)D, (size_t)D,
                                                   h->x + (size_t)(off[i] + t) * D);
        }
    }
    for (l = 0; l < c->n_layers; l++) {
        const dintattn__layer *L = &m->layers[l];
        dintattn__product wo;
        dintattn__decodes dec;
        size_t reads = 0;
        dintattn__norm_chunk(h, L->attn_norm, N);
        dintattn__project(h, l, N, 0, st);
        dec.ch = chunks, dec.count = 0;
        for (i = 0; i < n_items; i++) { /* each sequence against its own cache */
            dintattn_session *s = items[i].sess;
            dintattn__chunk ch;
            if (!part[i]) continue;
            ch.s = s, ch.l = l, ch.n = part[i], ch.pos0 = s->pos;
            /* the host's per-thread scratch holds A1, A2, W rows of its n_ctx and tiles of its cache type */
            ch.w = s->k1.type == h->k1.type && s->n_ctx <= h->n_ctx ? h : s;
            ch.q1 = h->q1 + (size_t)off[i] * H * d, ch.q2 = h->q2 + (size_t)off[i] * c->n_q2_heads * d;
            ch.lambda = h->lambda_rows ? h->lambda_rows + (size_t)off[i] * H : NULL;
            ch.att = h->att + (size_t)off[i] * H * c->v_head_dim;
            if (ch.n == 1 && ch.w == h && !s->hook && !s->insp.row && !s->act) { /* with the other decodes, below */
                reads += dintattn__decode_reads(&ch);
                chunks[dec.count++] = ch;
            } else {
                dintattn__attention(&ch); /* its heads on the pool it runs on */
            }
        }
        if (dec.count)
            dintattn__pool_run(reads < dintattn__solo_bytes ? NULL : &h->pool, (int64_t)dec.count * m->n_noise_runs,
                               dintattn__decodes_unit, &dec);
        wo = dintattn__product_f32(&L->wo, h->att, H * c->v_head_dim, h->x, D, 1);
        dintattn__products(h, N, &wo, 1);
        dintattn__ffn_block(h, l, N, st);
    }
    for (i = 0; i < n_items; i++) { /* the rows the LM head reads: each item's last token, or all of them */
        if (!part[i]) continue;
        items[i].sess->pos += part[i];
        for (t = items[i].all_logits ? 0 : part[i] - 1; t < part[i] && items[i].logits; t++)
            if (items[i].all_logits || done[i] + part[i] == items[i].n_tokens)
                dintattn__rmsnorm(h->xn + (size_t)k++ * D, h->x + (size_t)(off[i] + t) * D, m->norm, D, c->norm_eps);
    }
    if (!k) return;
    head = dintattn__product_f32(&m->output, h->xn, D, out, V, 0);
    dintattn__products(h, k, &head, 1);
    for (i = 0, k = 0; i < n_items; i++) {
        if (!part[i] || !items[i].logits) continue;
        if (items[i].all_logits) {
            memcpy(items[i].logits + (size_t)done[i] * V, out + (size_t)k * V, sizeof(float) * (size_t)part[i] * V);
            k += part[i];
        } else if (done[i] + part[i] == items[i].n_tokens) {
            memcpy(items[i].logits, out + (size_t)k++ * V, sizeof(float) * (size_t)V);
        }
    }
}

DINTATTN_API dintattn_result dintattn_batch_step(const dintattn_batch_item *items, int n_items,
                                                 const dintattn_batch_options *opt, dintattn_error *err)
{
    dintattn_session *h;
    dintattn__stack st;
    dintattn__chunk *chunks;
    size_t bytes;
    void *block;
    float *out;
    int *done, *part, *off, cap, i, j, n_out = 0;
    if (!items || n_items <= 0)
        return dintattn__fail(err, DINTATTN_ERR_ARG, "dintattn_batch_step: no items (items %s, n_items = %d)",
                              items ? "given" : "NULL", n_items);
    for (i = 0; i < n_items; i++) {
        const dintattn_session *s = items[i].sess;
        if (!s || !items[i].tokens)
            return dintattn__fail(err, DINTATTN_ERR_ARG, "dintattn_batch_step: item %d has no %s (NULL)", i,
                                  s ? "tokens" : "session");
        if (s->model != items[0].sess->model)
            return dintattn__fail(err, DINTATTN_ERR_ARG,
                                  "dintattn_batch_step: item %d's session is of another model than item 0's: "
                                  "batch only sessions of one model",
                                  i);
        if (s->precision != items[0].sess->precision || s->k != items[0].sess->k)
            return dintattn__fail(err, DINTATTN_ERR_ARG,
                                  "dintattn_batch_step: item %d's session runs at precision %s, kernels %s, item 0's "
                                  "at %s, %s: batch only sessions made with one precision and kernel level",
                                  i, dintattn_precision_name(s->precision), dintattn_kernels_name(s->k->level),
                                  dintattn_precision_name(items[0].sess->precision),
                                  dintattn_kernels_name(items[0].sess->k->level));
        for (j = 0; j < i; j++)
            if (items[j].sess == s)
                return dintattn__fail(err, DINTATTN_ERR_ARG,
                                      "dintattn_batch_step: items %d and %d are one session: give a session's tokens "
                                      "in one item",
                                      j, i);
        if (items[i].n_tokens <= 0)
            return dintattn__fail(err, DINTATTN_ERR_ARG, "dintattn_batch_step: item %d has no tokens (n_tokens = %d)", i,
                                  items[i].n_tokens);
        if (items[i].n_tokens > s->n_ctx - s->pos)
            return dintattn__fail(err, DINTATTN_ERR_CONTEXT,
                                  "dintattn_batch_step: item %d's %d tokens do not fit: its session holds %d of %d", i,
                                  items[i].n_tokens, s->pos, s->n_ctx);
        for (j = 0; j < items[i].n_tokens; j++)
            if (items[i].tokens[j] < 0 || items[i].tokens[j] >= s->model->cfg.vocab_size)
                return dintattn__fail(err, DINTATTN_ERR_ARG,
                                      "dintattn_batch_step: item %d's token %d at index %d is outside the vocabulary "
                                      "[0, %d)",
                                      i, items[i].tokens[j], j, s->model->cfg.vocab_size);
        n_out += !items[i].logits ? 0 : items[i].all_logits ? items[i].n_tokens : 1;
    }
    h = items[0].sess;
    cap = opt && opt->max_tokens ? opt->max_tokens : h->n_batch;
    if (cap < 0 || cap > h->n_batch)
        return dintattn__fail(err, DINTATTN_ERR_ARG,
                              "dintattn_batch_step: max_tokens = %d is outside [0, %d], the tokens item 0's session "
                              "holds a step (its n_batch)",
                              cap, h->n_batch);
    if (n_out > cap) n_out = cap; /* a pass ends at most one item a stacked token */
    bytes = sizeof(dintattn__chunk) * (size_t)n_items + sizeof(float) * (size_t)n_out * (size_t)h->model->cfg.vocab_size +
            (sizeof(dintattn_session *) + sizeof(int)) * (size_t)cap + 3 * sizeof(int) * (size_t)n_items;
    block = DINTATTN_MALLOC(bytes ? bytes : 1);
    if (!block)
        return dintattn__fail(err, DINTATTN_ERR_NOMEM, "dintattn_batch_step: cannot allocate %zu bytes for %d items",
                              bytes, n_items);
    chunks = (dintattn__chunk *)block; /* the structs and pointers first, for their alignment */
    st.sess = (dintattn_session **)(chunks + n_items);
    out = (float *)(st.sess + cap);
    st.pos = (int *)(out + (size_t)n_out * (size_t)h->model->cfg.vocab_size);
    done = st.pos + cap, part = done + n_items, off = part + n_items;
    memset(done, 0, sizeof(int) * (size_t)n_items);
    for (;;) {
        int N = 0;
        for (i = 0; i < n_items; i++) {
            int k = items[i].n_tokens - done[i];
            if (k > items[i].sess->n_batch) k = items[i].sess->n_batch;
            if (k > cap - N) k = cap - N;
            part[i] = k, off[i] = N;
            N += k;
        }
        if (!N) break;
        dintattn__batch_pass(h, items, n_items, done, part, off, N, &st, out, chunks);
        for (i = 0; i < n_items; i++) done[i] += part[i];
    }
    DINTATTN_FREE(block);
    dintattn__ok(err);
    return DINTATTN_OK;
}

DINTATTN_API dintattn_result dintattn_session_truncate(dintattn_session *s, int n, dintattn_error *err)
{
    if (!s) return dintattn__fail(err, DINTATTN_ERR_ARG, "dintattn_session_truncate: NULL session");
    if (n < 0 || n > s->pos)
        return dintattn__fail(err, DINTATTN_ERR_ARG,
                              "dintattn_session_truncate: n = %d is outside [0, %d], the tokens the session holds "
                              "(dintattn_session_pos): pass an n in that range",
                              n, s->pos);
    if (s->S && n < s->pos) {
        const dintattn_config *c = &s->model->cfg;
        struct dintattn__act *act = s->act;
        int i, best = 0, l, h;
        for (i = 1; i <= s->n_ckpt; i++) { /* the nearest checkpoint at or below n; the others past n go */
            if (s->ckpt_pos[i] > n) s->ckpt_pos[i] = 0;
            else if (s->ckpt_pos[i] > s->ckpt_pos[best]) best = i;
        }
        for (l = 0; l < c->n_layers; l++)
            for (h = 0; h < c->n_heads; h++) {
                double *row = dintattn__S_row(s, l, h);
                const int p = best ? s->ckpt_pos[best] : 0;
                if (p) memcpy(row, dintattn__ckpt_row(s, best, l, h), sizeof(double) * (size_t)p);
                memset(row + p, 0, sizeof(double) * (size_t)(s->pos - p));
            }
        s->act = NULL; /* tokens run again are not counted again */
        s->pos = best ? s->ckpt_pos[best] : 0;
        while (s->pos < n) { /* the recorded steps again, the last one cut at n */
            int end = s->pos + 1;
            while (end < n && !s->step_start[end]) end++;
            if (end - s->pos > s->n_batch) end = s->pos + s->n_batch; /* a step of a copied session's longer batch */
            dintattn__forward_chunk(s, s->ids + s->pos, end - s->pos, NULL, 0);
        }
        s->act = act;
    }
    s->pos = n;
    dintattn__ok(err);
    return DINTATTN_OK;
}

DINTATTN_API double dintattn_logprob_of(const float *logits, int n_vocab, int token)
{
    double mx = -HUGE_VAL, sum = 0.0;
    int j;
    if (!logits || token < 0 || token >= n_vocab) return NAN;
    for (j = 0; j < n_vocab; j++)
        if (logits[j] > mx) mx = logits[j];
    if (!(mx > -HUGE_VAL) || mx == HUGE_VAL) return NAN;
    for (j = 0; j < n_vocab; j++) sum += exp((double)logits[j] - mx);
    return (double)logits[token] - mx - log(sum);
}

DINTATTN_API dintattn_result dintattn_logprobs(dintattn_session *s, const int *tokens, int n, float *logprob,
                                               dintattn_error *err)
{
    const int V = s ? s->model->cfg.vocab_size : 0;
    float *rows;
    int done, i;
    if (!s || !tokens || !logprob) return dintattn__fail(err, DINTATTN_ERR_ARG, "dintattn_logprobs: NULL argument");
    if (n <= 0) return dintattn__fail(err, DINTATTN_ERR_ARG, "dintattn_logprobs: no tokens (n = %d)", n);
    if (n > s->n_ctx - s->pos) /* refused before anything runs, as dintattn_prefill would */
        return dintattn__fail(err, DINTATTN_ERR_CONTEXT, "%d tokens do not fit: the session holds %d of %d", n,
                              s->pos, s->n_ctx);
    for (i = 0; i < n; i++)
        if (tokens[i] < 0 || tokens[i] >= V)
            return dintattn__fail(err, DINTATTN_ERR_ARG, "token %d at index %d is outside the vocabulary [0, %d)",
                                  tokens[i], i, V);
    rows = (float *)malloc(sizeof(float) * (size_t)(n < s->n_batch ? n : s->n_batch) * (size_t)V);
    if (!rows) return dintattn__fail(err, DINTATTN_ERR_NOMEM, "dintattn_logprobs: out of memory for %d rows of logits",
                                     n < s->n_batch ? n : s->n_batch);
    for (done = 0; done < n; done += s->n_batch) {
        const int k = n - done < s->n_batch ? n - done : s->n_batch;
        dintattn__forward_chunk(s, tokens + done, k, rows, 1);
        for (i = 0; i < k && done + i + 1 < n; i++)
            logprob[done + i] = (float)dintattn_logprob_of(rows + (size_t)i * V, V, tokens[done + i + 1]);
    }
    free(rows);
    dintattn__ok(err);
    return DINTATTN_OK;
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

/* Byte-level BPE as tiktoken does it, with its rank files, and the split pattern of one of the
   known families (or any regex of the subset below):
   1. When special tokens are allowed they cut the text: the earliest occurrence wins (the
      longest one where several start at the same byte); the text between them is ordinary.
   2. Ordinary text is split into pieces by the tokenizer's split pattern. By default (and for
      the names "cl100k" and "llama3") that is cl100k_base's regex
        (?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*
        |\s*[\r\n]+|\s+(?!\S)|\s+
      as the backtracking engine tiktoken uses matches it (Rust's fancy-regex; \s is Unicode
      White_Space, (?i) folds s with U+017F long s). dintattn__pretok spells that regex out by
      hand (the fast path); every other pattern runs on the regex matcher below, which gives the
      same pieces for this one (tests/test_tokenizer.c checks both against python3-regex).
   3. A piece that is a token is that token. Otherwise its bytes are merged, the adjacent pair
      whose concatenation has the lowest rank first (the leftmost of equals), until no adjacent
      pair is a token. tiktoken searches for that pair linearly (quadratic in the piece); a heap
      finds the same pair in O(log n): a 1 MB piece without spaces takes a fraction of a second.
   Invalid UTF-8 is never refused: each maximal ill-formed subsequence (the bytes that Rust's
   from_utf8_lossy or Python's decode("utf-8", "replace") turn into one U+FFFD) is one character
   that matches exactly as U+FFFD would (class So: none of L, M, N, P or White_Space) -- it
   splits as U+FFFD would, and its bytes are encoded by BPE like any others, so decoding returns
   the input exactly.
   A token's id is its rank. Ranks may leave gaps (ids that are no token), but every single byte
   must have one, or some text could not be encoded: such a rank file is refused.

   The split regex matcher (dintattn__re_*): the patterns of GPT-2 (r50k, p50k, GPT-NeoX),
   cl100k (Llama-3), o200k, Qwen2/3 and DeepSeek-V3 use a small subset of regex syntax, and that
   subset is all it compiles; anything else is refused with a message that names it.
     - literals (UTF-8), \r \n \t \f \v \xHH \x{H...} \uHHHH, escaped punctuation, `.` (not \n);
     - \s \S (White_Space), \p{X} \P{X} \pX for X in L Lu Ll Lt Lm Lo M Mn Mc Me N Nd Nl No P S;
     - classes [...] [^...] of those, with ranges, and classes nested in them (a union:
       [^(\s|[.,!?])] as Oniguruma and Rust's regex read it; python3-regex reads a literal '[');
     - alternation, (...) and (?:...) (no captures are kept), (?i:...) over ASCII letters,
       folded as Unicode's simple case folding does (s also matches U+017F, k U+212A -- as
       fancy-regex, Oniguruma and python3-regex do); no \p or non-ASCII letters inside (?i:);
     - quantifiers ? * + {n} {n,} {n,m} (n, m <= 1000), greedy, lazy (?? *? +? {n,}? {n,m}?) or
       possessive (?+ *+ ++ {n,m}+, on a single character or class only). {n,m}+ is possessive as
       in tiktoken's patterns (Rust, Perl, python3-regex); Oniguruma (Ruby syntax) reads it as
       (?:x{n,m})+, so a tokenizer.json pattern with it must be rewritten so before it comes
       here. x{n}? means different things to the two and is refused;
     - lookahead (?=...) (?!...) whose body spans at most 64 characters, nested at most 4 deep;
     - \A \z (the subject's start and end), \Z (its end or before a final "\n"), ^ $ (a line's
       start and end, as Oniguruma reads them in tokenizer.json patterns: next to a "\n" or at
       the subject's ends; tiktoken's `\s++$` splits the same either way).
   It refuses a pattern that can match the empty string and a repetition of something that can.
   Semantics: a backtracking search in Perl's priority order (leftmost-first, what fancy-regex,
   Oniguruma and python3-regex do), repeated as a find-all: the first match at or after where
   the last one ended. Text no match covers becomes a piece of its own (HF's Split "Isolated";
   tiktoken would drop it -- none of the known patterns leaves any). A family with several
   patterns (DeepSeek-V3's Sequence of three Splits) splits each piece of one pattern again with
   the next; a later pattern sees only its piece (a lookahead stops at the piece's end, $ is it).
   A model file's split may give each stage HF's Split "behavior" and "invert" (dintattn__split,
   DINTATTN__RB_*); "Removed" drops the text it matches, as HF does, so decoding does not give
   that text back.
   Bounded time and memory: the search memoizes failure. A state is an instruction and a
   position; when every way on from a branch point has failed, the (branch, position) pair is
   marked and never explored again, for the rest of the subject (no captures or back-references,
   so whether a state can reach the end depends on nothing else). A lookahead's result is
   memoized per position, and its body is short; an unbounded possessive span scans each run
   once (its end is kept per position), a bounded one at most m characters. So a subject of n
   characters costs O(n * (instructions + lookahead bodies * 64)) steps (times m for a {n,m}+),
   whatever the text: no exponential or quadratic blow-up (test_tokenizer times hostile inputs).
   Memory, per character of the text being split: one bit per branch point (two per lookahead;
   cl100k's regex has 25, o200k's 37), an int per unbounded possessive span, 9 bytes for the
   decoded text, and the backtracking stack (16 bytes per character of a run a loop holds: a
   long run of spaces under \s+). Lookaheads recurse in C at most 4 deep, stages at most 8. */

enum { DINTATTN__UC_OTHER, DINTATTN__UC_LETTER, DINTATTN__UC_NUMBER, DINTATTN__UC_SPACE };

/* Character classes of the generated table (tools/gen_unicode.py's CLASSES): the general
   categories the split patterns name, P and S whole, White_Space apart; 0 is everything else. */
enum {
    DINTATTN__GC_OTHER, DINTATTN__GC_LU, DINTATTN__GC_LL, DINTATTN__GC_LT, DINTATTN__GC_LM, DINTATTN__GC_LO,
    DINTATTN__GC_MN, DINTATTN__GC_MC, DINTATTN__GC_ME, DINTATTN__GC_ND, DINTATTN__GC_NL, DINTATTN__GC_NO,
    DINTATTN__GC_P, DINTATTN__GC_S, DINTATTN__GC_SPACE, DINTATTN__GC_COUNT
};
#define DINTATTN__GCM(g) (1u << DINTATTN__GC_##g)
#define DINTATTN__GCM_L (DINTATTN__GCM(LU) | DINTATTN__GCM(LL) | DINTATTN__GCM(LT) | DINTATTN__GCM(LM) | DINTATTN__GCM(LO))
#define DINTATTN__GCM_M (DINTATTN__GCM(MN) | DINTATTN__GCM(MC) | DINTATTN__GCM(ME))
#define DINTATTN__GCM_N (DINTATTN__GCM(ND) | DINTATTN__GCM(NL) | DINTATTN__GCM(NO))
#define DINTATTN__GCM_ALL ((1u << DINTATTN__GC_COUNT) - 1)

/* BEGIN GENERATED UNICODE TABLES (tools/gen_unicode.py) -- do not edit by hand.
   Unicode 16.0.0 (UnicodeData.txt, PropList.txt): the code space as 3815 runs of one class,
   each (first code point << 4 | class); a run ends where the next begins. Runs per class:
   738 other, 651 Lu, 662 Ll, 10 Lt, 75 Lm, 528 Lo, 357 Mn, 190 Mc,
   5 Me, 71 Nd, 12 Nl, 72 No, 198 P, 236 S, 10 White_Space. */
#define DINTATTN__UNICODE_VERSION "16.0.0"
static const uint32_t dintattn__uni_runs[3815] = {
    0x0, 0x9E, 0xE0, 0x20E, 0x21C, 0x24D, 0x25C, 0x2BD, 0x2CC, 0x309, 0x3AC, 0x3CD, 0x3FC, 0x411, 0x5BC,
    0x5ED, 0x5FC, 0x60D, 0x612, 0x7BC, 0x7CD, 0x7DC, 0x7ED, 0x7F0, 0x85E, 0x860, 0xA0E, 0xA1C, 0xA2D, 0xA7C,
    0xA8D, 0xAA5, 0xABC, 0xACD, 0xAD0, 0xAED, 0xB2B, 0xB4D, 0xB52, 0xB6C, 0xB8D, 0xB9B, 0xBA5, 0xBBC, 0xBCB,
    0xBFC, 0xC01, 0xD7D, 0xD81, 0xDF2, 0xF7D, 0xF82, 0x1001, 0x1012, 0x1021, 0x1032, 0x1041, 0x1052, 0x1061,
    0x1072, 0x1081, 0x1092, 0x10A1, 0x10B2, 0x10C1, 0x10D2, 0x10E1, 0x10F2, 0x1101, 0x1112, 0x1121, 0x1132,
    0x1141, 0x1152, 0x1161, 0x1172, 0x1181, 0x1192, 0x11A1, 0x11B2, 0x11C1, 0x11D2, 0x11E1, 0x11F2, 0x1201,
    0x1212, 0x1221, 0x1232, 0x1241, 0x1252, 0x1261, 0x1272, 0x1281, 0x1292, 0x12A1, 0x12B2, 0x12C1, 0x12D2,
    0x12E1, 0x12F2, 0x1301, 0x1312, 0x1321, 0x1332, 0x1341, 0x1352, 0x1361, 0x1372, 0x1391, 0x13A2, 0x13B1,
    0x13C2, 0x13D1, 0x13E2, 0x13F1, 0x1402, 0x1411, 0x1422, 0x1431, 0x1442, 0x1451, 0x1462, 0x1471, 0x1482,
    0x14A1, 0x14B2, 0x14C1, 0x14D2, 0x14E1, 0x14F2, 0x1501, 0x1512, 0x1521, 0x1532, 0x1541, 0x1552, 0x1561,
    0x1572, 0x1581, 0x1592, 0x15A1, 0x15B2, 0x15C1, 0x15D2, 0x15E1, 0x15F2, 0x1601, 0x1612, 0x1621, 0x1632,
    0x1641, 0x1652, 0x1661, 0x1672, 0x1681, 0x1692, 0x16A1, 0x16B2, 0x16C1, 0x16D2, 0x16E1, 0x16F2, 0x1701,
    0x1712, 0x1721, 0x1732, 0x1741, 0x1752, 0x1761, 0x1772, 0x1781, 0x17A2, 0x17B1, 0x17C2, 0x17D1, 0x17E2,
    0x1811, 0x1832, 0x1841, 0x1852, 0x1861, 0x1882, 0x1891, 0x18C2, 0x18E1, 0x1922, 0x1931, 0x1952, 0x1961,
    0x1992, 0x19C1, 0x19E2, 0x19F1, 0x1A12, 0x1A21, 0x1A32, 0x1A41, 0x1A52, 0x1A61, 0x1A82, 0x1A91, 0x1AA2,
    0x1AC1, 0x1AD2, 0x1AE1, 0x1B02, 0x1B11, 0x1B42, 0x1B51, 0x1B62, 0x1B71, 0x1B92, 0x1BB5, 0x1BC1, 0x1BD2,
    0x1C05, 0x1C41, 0x1C53, 0x1C62, 0x1C71, 0x1C83, 0x1C92, 0x1CA1, 0x1CB3, 0x1CC2, 0x1CD1, 0x1CE2, 0x1CF1,
    0x1D02, 0x1D11, 0x1D22, 0x1D31, 0x1D42, 0x1D51, 0x1D62, 0x1D71, 0x1D82, 0x1D91, 0x1DA2, 0x1DB1, 0x1DC2,
    0x1DE1, 0x1DF2, 0x1E01, 0x1E12, 0x1E21, 0x1E32, 0x1E41, 0x1E52, 0x1E61, 0x1E72, 0x1E81, 0x1E92, 0x1EA1,
    0x1EB2, 0x1EC1, 0x1ED2, 0x1EE1, 0x1EF2, 0x1F11, 0x1F23, 0x1F32, 0x1F41, 0x1F52, 0x1F61, 0x1F92, 0x1FA1,
    0x1FB2, 0x1FC1, 0x1FD2, 0x1FE1, 0x1FF2, 0x2001, 0x2012, 0x2021, 0x2032, 0x2041, 0x2052, 0x2061, 0x2072,
    0x2081, 0x2092, 0x20A1, 0x20B2, 0x20C1, 0x20D2, 0x20E1, 0x20F2, 0x2101, 0x2112, 0x2121, 0x2132, 0x2141,
    0x2152, 0x2161, 0x2172, 0x2181, 0x2192, 0x21A1, 0x21B2, 0x21C1, 0x21D2, 0x21E1, 0x21F2, 0x2201, 0x2212,
    0x2221, 0x2232, 0x2241, 0x2252, 0x2261, 0x2272, 0x2281, 0x2292, 0x22A1, 0x22B2, 0x22C1, 0x22D2, 0x22E1,
    0x22F2, 0x2301, 0x2312, 0x2321, 0x2332, 0x23A1, 0x23C2, 0x23D1, 0x23F2, 0x2411, 0x2422, 0x2431, 0x2472,
    0x2481, 0x2492, 0x24A1, 0x24B2, 0x24C1, 0x24D2, 0x24E1, 0x24F2, 0x2945, 0x2952, 0x2B04, 0x2C2D, 0x2C64,
    0x2D2D, 0x2E04, 0x2E5D, 0x2EC4, 0x2EDD, 0x2EE4, 0x2EFD, 0x3006, 0x3701, 0x3712, 0x3721, 0x3732, 0x3744,
    0x375D, 0x3761, 0x3772, 0x3780, 0x37A4, 0x37B2, 0x37EC, 0x37F1, 0x3800, 0x384D, 0x3861, 0x387C, 0x3881,
    0x38B0, 0x38C1, 0x38D0, 0x38E1, 0x3902, 0x3911, 0x3A20, 0x3A31, 0x3AC2, 0x3CF1, 0x3D02, 0x3D21, 0x3D52,
    0x3D81, 0x3D92, 0x3DA1, 0x3DB2, 0x3DC1, 0x3DD2, 0x3DE1, 0x3DF2, 0x3E01, 0x3E12, 0x3E21, 0x3E32, 0x3E41,
    0x3E52, 0x3E61, 0x3E72, 0x3E81, 0x3E92, 0x3EA1, 0x3EB2, 0x3EC1, 0x3ED2, 0x3EE1, 0x3EF2, 0x3F41, 0x3F52,
    0x3F6D, 0x3F71, 0x3F82, 0x3F91, 0x3FB2, 0x3FD1, 0x4302, 0x4601, 0x4612, 0x4621, 0x4632, 0x4641, 0x4652,
    0x4661, 0x4672, 0x4681, 0x4692, 0x46A1, 0x46B2, 0x46C1, 0x46D2, 0x46E1, 0x46F2, 0x4701, 0x4712, 0x4721,
    0x4732, 0x4741, 0x4752, 0x4761, 0x4772, 0x4781, 0x4792, 0x47A1, 0x47B2, 0x47C1, 0x47D2, 0x47E1, 0x47F2,
    0x4801, 0x4812, 0x482D, 0x4836, 0x4888, 0x48A1, 0x48B2, 0x48C1, 0x48D2, 0x48E1, 0x48F2, 0x4901, 0x4912,
    0x4921, 0x4932, 0x4941, 0x4952, 0x4961, 0x4972, 0x4981, 0x4992, 0x49A1, 0x49B2, 0x49C1, 0x49D2, 0x49E1,
    0x49F2, 0x4A01, 0x4A12, 0x4A21, 0x4A32, 0x4A41, 0x4A52, 0x4A61, 0x4A72, 0x4A81, 0x4A92, 0x4AA1, 0x4AB2,
    0x4AC1, 0x4AD2, 0x4AE1, 0x4AF2, 0x4B01, 0x4B12, 0x4B21, 0x4B32, 0x4B41, 0x4B52, 0x4B61, 0x4B72, 0x4B81,
    0x4B92, 0x4BA1, 0x4BB2, 0x4BC1, 0x4BD2, 0x4BE1, 0x4BF2, 0x4C01, 0x4C22, 0x4C31, 0x4C42, 0x4C51, 0x4C62,
    0x4C71, 0x4C82, 0x4C91, 0x4CA2, 0x4CB1, 0x4CC2, 0x4CD1, 0x4CE2, 0x4D01, 0x4D12, 0x4D21, 0x4D32, 0x4D41,
    0x4D52, 0x4D61, 0x4D72, 0x4D81, 0x4D92, 0x4DA1, 0x4DB2, 0x4DC1, 0x4DD2, 0x4DE1, 0x4DF2, 0x4E01, 0x4E12,
    0x4E21, 0x4E32, 0x4E41, 0x4E52, 0x4E61, 0x4E72, 0x4E81, 0x4E92, 0x4EA1, 0x4EB2, 0x4EC1, 0x4ED2, 0x4EE1,
    0x4EF2, 0x4F01, 0x4F12, 0x4F21, 0x4F32, 0x4F41, 0x4F52, 0x4F61, 0x4F72, 0x4F81, 0x4F92, 0x4FA1, 0x4FB2,
    0x4FC1, 0x4FD2, 0x4FE1, 0x4FF2, 0x5001, 0x5012, 0x5021, 0x5032, 0x5041, 0x5052, 0x5061, 0x5072, 0x5081,
    0x5092, 0x50A1, 0x50B2, 0x50C1, 0x50D2, 0x50E1, 0x50F2, 0x5101, 0x5112, 0x5121, 0x5132, 0x5141, 0x5152,
    0x5161, 0x5172, 0x5181, 0x5192, 0x51A1, 0x51B2, 0x51C1, 0x51D2, 0x51E1, 0x51F2, 0x5201, 0x5212, 0x5221,
    0x5232, 0x5241, 0x5252, 0x5261, 0x5272, 0x5281, 0x5292, 0x52A1, 0x52B2, 0x52C1, 0x52D2, 0x52E1, 0x52F2,
    0x5300, 0x5311, 0x5570, 0x5594, 0x55AC, 0x5602, 0x589C, 0x58B0, 0x58DD, 0x5900, 0x5916, 0x5BEC, 0x5BF6,
    0x5C0C, 0x5C16, 0x5C3C, 0x5C46, 0x5C6C, 0x5C76, 0x5C80, 0x5D05, 0x5EB0, 0x5EF5, 0x5F3C, 0x5F50, 0x606D,
    0x609C, 0x60BD, 0x60CC, 0x60ED, 0x6106, 0x61BC, 0x61C0, 0x61DC, 0x6205, 0x6404, 0x6415, 0x64B6, 0x6609,
    0x66AC, 0x66E5, 0x6706, 0x6715, 0x6D4C, 0x6D55, 0x6D66, 0x6DD0, 0x6DED, 0x6DF6, 0x6E54, 0x6E76, 0x6E9D,
    0x6EA6, 0x6EE5, 0x6F09, 0x6FA5, 0x6FDD, 0x6FF5, 0x700C, 0x70E0, 0x7105, 0x7116, 0x7125, 0x7306, 0x74B0,
    0x74D5, 0x7A66, 0x7B15, 0x7B20, 0x7C09, 0x7CA5, 0x7EB6, 0x7F44, 0x7F6D, 0x7F7C, 0x7FA4, 0x7FB0, 0x7FD6,
    0x7FED, 0x8005, 0x8166, 0x81A4, 0x81B6, 0x8244, 0x8256, 0x8284, 0x8296, 0x82E0, 0x830C, 0x83F0, 0x8405,
    0x8596, 0x85C0, 0x85EC, 0x85F0, 0x8605, 0x86B0, 0x8705, 0x888D, 0x8895, 0x88F0, 0x8976, 0x8A05, 0x8C94,
    0x8CA6, 0x8E20, 0x8E36, 0x9037, 0x9045, 0x93A6, 0x93B7, 0x93C6, 0x93D5, 0x93E7, 0x9416, 0x9497, 0x94D6,
    0x94E7, 0x9505, 0x9516, 0x9585, 0x9626, 0x964C, 0x9669, 0x970C, 0x9714, 0x9725, 0x9816, 0x9827, 0x9840,
    0x9855, 0x98D0, 0x98F5, 0x9910, 0x9935, 0x9A90, 0x9AA5, 0x9B10, 0x9B25, 0x9B30, 0x9B65, 0x9BA0, 0x9BC6,
    0x9BD5, 0x9BE7, 0x9C16, 0x9C50, 0x9C77, 0x9C90, 0x9CB7, 0x9CD6, 0x9CE5, 0x9CF0, 0x9D77, 0x9D80, 0x9DC5,
    0x9DE0, 0x9DF5, 0x9E26, 0x9E40, 0x9E69, 0x9F05, 0x9F2D, 0x9F4B, 0x9FAD, 0x9FC5, 0x9FDC, 0x9FE6, 0x9FF0,
    0xA016, 0xA037, 0xA040, 0xA055, 0xA0B0, 0xA0F5, 0xA110, 0xA135, 0xA290, 0xA2A5, 0xA310, 0xA325, 0xA340,
    0xA355, 0xA370, 0xA385, 0xA3A0, 0xA3C6, 0xA3D0, 0xA3E7, 0xA416, 0xA430, 0xA476, 0xA490, 0xA4B6, 0xA4E0,
    0xA516, 0xA520, 0xA595, 0xA5D0, 0xA5E5, 0xA5F0, 0xA669, 0xA706, 0xA725, 0xA756, 0xA76C, 0xA770, 0xA816,
    0xA837, 0xA840, 0xA855, 0xA8E0, 0xA8F5, 0xA920, 0xA935, 0xAA90, 0xAAA5, 0xAB10, 0xAB25, 0xAB40, 0xAB55,
    0xABA0, 0xABC6, 0xABD5, 0xABE7, 0xAC16, 0xAC60, 0xAC76, 0xAC97, 0xACA0, 0xACB7, 0xACD6, 0xACE0, 0xAD05,
    0xAD10, 0xAE05, 0xAE26, 0xAE40, 0xAE69, 0xAF0C, 0xAF1D, 0xAF20, 0xAF95, 0xAFA6, 0xB000, 0xB016, 0xB027,
    0xB040, 0xB055, 0xB0D0, 0xB0F5, 0xB110, 0xB135, 0xB290, 0xB2A5, 0xB310, 0xB325, 0xB340, 0xB355, 0xB3A0,
    0xB3C6, 0xB3D5, 0xB3E7, 0xB3F6, 0xB407, 0xB416, 0xB450, 0xB477, 0xB490, 0xB4B7, 0xB4D6, 0xB4E0, 0xB556,
    0xB577, 0xB580, 0xB5C5, 0xB5E0, 0xB5F5, 0xB626, 0xB640, 0xB669, 0xB70D, 0xB715, 0xB72B, 0xB780, 0xB826,
    0xB835, 0xB840, 0xB855, 0xB8B0, 0xB8E5, 0xB910, 0xB925, 0xB960, 0xB995, 0xB9B0, 0xB9C5, 0xB9D0, 0xB9E5,
    0xBA00, 0xBA35, 0xBA50, 0xBA85, 0xBAB0, 0xBAE5, 0xBBA0, 0xBBE7, 0xBC06, 0xBC17, 0xBC30, 0xBC67, 0xBC90,
    0xBCA7, 0xBCD6, 0xBCE0, 0xBD05, 0xBD10, 0xBD77, 0xBD80, 0xBE69, 0xBF0B, 0xBF3D, 0xBFB0, 0xC006, 0xC017,
    0xC046, 0xC055, 0xC0D0, 0xC0E5, 0xC110, 0xC125, 0xC290, 0xC2A5, 0xC3A0, 0xC3C6, 0xC3D5, 0xC3E6, 0xC417,
    0xC450, 0xC466, 0xC490, 0xC4A6, 0xC4E0, 0xC556, 0xC570, 0xC585, 0xC5B0, 0xC5D5, 0xC5E0, 0xC605, 0xC626,
    0xC640, 0xC669, 0xC700, 0xC77C, 0xC78B, 0xC7FD, 0xC805, 0xC816, 0xC827, 0xC84C, 0xC855, 0xC8D0, 0xC8E5,
    0xC910, 0xC925, 0xCA90, 0xCAA5, 0xCB40, 0xCB55, 0xCBA0, 0xCBC6, 0xCBD5, 0xCBE7, 0xCBF6, 0xCC07, 0xCC50,
    0xCC66, 0xCC77, 0xCC90, 0xCCA7, 0xCCC6, 0xCCE0, 0xCD57, 0xCD70, 0xCDD5, 0xCDF0, 0xCE05, 0xCE26, 0xCE40,
    0xCE69, 0xCF00, 0xCF15, 0xCF37, 0xCF40, 0xD006, 0xD027, 0xD045, 0xD0D0, 0xD0E5, 0xD110, 0xD125, 0xD3B6,
    0xD3D5, 0xD3E7, 0xD416, 0xD450, 0xD467, 0xD490, 0xD4A7, 0xD4D6, 0xD4E5, 0xD4FD, 0xD500, 0xD545, 0xD577,
    0xD58B, 0xD5F5, 0xD626, 0xD640, 0xD669, 0xD70B, 0xD79D, 0xD7A5, 0xD800, 0xD816, 0xD827, 0xD840, 0xD855,
    0xD970, 0xD9A5, 0xDB20, 0xDB35, 0xDBC0, 0xDBD5, 0xDBE0, 0xDC05, 0xDC70, 0xDCA6, 0xDCB0, 0xDCF7, 0xDD26,
    0xDD50, 0xDD66, 0xDD70, 0xDD87, 0xDE00, 0xDE69, 0xDF00, 0xDF27, 0xDF4C, 0xDF50, 0xE015, 0xE316, 0xE325,
    0xE346, 0xE3B0, 0xE3FD, 0xE405, 0xE464, 0xE476, 0xE4FC, 0xE509, 0xE5AC, 0xE5C0, 0xE815, 0xE830, 0xE845,
    0xE850, 0xE865, 0xE8B0, 0xE8C5, 0xEA40, 0xEA55, 0xEA60, 0xEA75, 0xEB16, 0xEB25, 0xEB46, 0xEBD5, 0xEBE0,
    0xEC05, 0xEC50, 0xEC64, 0xEC70, 0xEC86, 0xECF0, 0xED09, 0xEDA0, 0xEDC5, 0xEE00, 0xF005, 0xF01D, 0xF04C,
    0xF13D, 0xF14C, 0xF15D, 0xF186, 0xF1AD, 0xF209, 0xF2AB, 0xF34D, 0xF356, 0xF36D, 0xF376, 0xF38D, 0xF396,
    0xF3AC, 0xF3E7, 0xF405, 0xF480, 0xF495, 0xF6D0, 0xF716, 0xF7F7, 0xF806, 0xF85C, 0xF866, 0xF885, 0xF8D6,
    0xF980, 0xF996, 0xFBD0, 0xFBED, 0xFC66, 0xFC7D, 0xFCD0, 0xFCED, 0xFD0C, 0xFD5D, 0xFD9C, 0xFDB0, 0x10005,
    0x102B7, 0x102D6, 0x10317, 0x10326, 0x10387, 0x10396, 0x103B7, 0x103D6, 0x103F5, 0x10409, 0x104AC,
    0x10505, 0x10567, 0x10586, 0x105A5, 0x105E6, 0x10615, 0x10627, 0x10655, 0x10677, 0x106E5, 0x10716,
    0x10755, 0x10826, 0x10837, 0x10856, 0x10877, 0x108D6, 0x108E5, 0x108F7, 0x10909, 0x109A7, 0x109D6,
    0x109ED, 0x10A01, 0x10C60, 0x10C71, 0x10C80, 0x10CD1, 0x10CE0, 0x10D02, 0x10FBC, 0x10FC4, 0x10FD2,
    0x11005, 0x12490, 0x124A5, 0x124E0, 0x12505, 0x12570, 0x12585, 0x12590, 0x125A5, 0x125E0, 0x12605,
    0x12890, 0x128A5, 0x128E0, 0x12905, 0x12B10, 0x12B25, 0x12B60, 0x12B85, 0x12BF0, 0x12C05, 0x12C10,
    0x12C25, 0x12C60, 0x12C85, 0x12D70, 0x12D85, 0x13110, 0x13125, 0x13160, 0x13185, 0x135B0, 0x135D6,
    0x1360C, 0x1369B, 0x137D0, 0x13805, 0x1390D, 0x139A0, 0x13A01, 0x13F60, 0x13F82, 0x13FE0, 0x1400C,
    0x14015, 0x166DD, 0x166EC, 0x166F5, 0x1680E, 0x16815, 0x169BC, 0x169D0, 0x16A05, 0x16EBC, 0x16EEA,
    0x16F15, 0x16F90, 0x17005, 0x17126, 0x17157, 0x17160, 0x171F5, 0x17326, 0x17347, 0x1735C, 0x17370,
    0x17405, 0x17526, 0x17540, 0x17605, 0x176D0, 0x176E5, 0x17710, 0x17726, 0x17740, 0x17805, 0x17B46,
    0x17B67, 0x17B76, 0x17BE7, 0x17C66, 0x17C77, 0x17C96, 0x17D4C, 0x17D74, 0x17D8C, 0x17DBD, 0x17DC5,
    0x17DD6, 0x17DE0, 0x17E09, 0x17EA0, 0x17F0B, 0x17FA0, 0x1800C, 0x180B6, 0x180E0, 0x180F6, 0x18109,
    0x181A0, 0x18205, 0x18434, 0x18445, 0x18790, 0x18805, 0x18856, 0x18875, 0x18A96, 0x18AA5, 0x18AB0,
    0x18B05, 0x18F60, 0x19005, 0x191F0, 0x19206, 0x19237, 0x19276, 0x19297, 0x192C0, 0x19307, 0x19326,
    0x19337, 0x19396, 0x193C0, 0x1940D, 0x19410, 0x1944C, 0x19469, 0x19505, 0x196E0, 0x19705, 0x19750,
    0x19805, 0x19AC0, 0x19B05, 0x19CA0, 0x19D09, 0x19DAB, 0x19DB0, 0x19DED, 0x1A005, 0x1A176, 0x1A197,
    0x1A1B6, 0x1A1C0, 0x1A1EC, 0x1A205, 0x1A557, 0x1A566, 0x1A577, 0x1A586, 0x1A5F0, 0x1A606, 0x1A617,
    0x1A626, 0x1A637, 0x1A656, 0x1A6D7, 0x1A736, 0x1A7D0, 0x1A7F6, 0x1A809, 0x1A8A0, 0x1A909, 0x1A9A0,
    0x1AA0C, 0x1AA74, 0x1AA8C, 0x1AAE0, 0x1AB06, 0x1ABE8, 0x1ABF6, 0x1ACF0, 0x1B006, 0x1B047, 0x1B055,
    0x1B346, 0x1B357, 0x1B366, 0x1B3B7, 0x1B3C6, 0x1B3D7, 0x1B426, 0x1B437, 0x1B455, 0x1B4D0, 0x1B4EC,
    0x1B509, 0x1B5AC, 0x1B61D, 0x1B6B6, 0x1B74D, 0x1B7DC, 0x1B806, 0x1B827, 0x1B835, 0x1BA17, 0x1BA26,
    0x1BA67, 0x1BA86, 0x1BAA7, 0x1BAB6, 0x1BAE5, 0x1BB09, 0x1BBA5, 0x1BE66, 0x1BE77, 0x1BE86, 0x1BEA7,
    0x1BED6, 0x1BEE7, 0x1BEF6, 0x1BF27, 0x1BF40, 0x1BFCC, 0x1C005, 0x1C247, 0x1C2C6, 0x1C347, 0x1C366,
    0x1C380, 0x1C3BC, 0x1C409, 0x1C4A0, 0x1C4D5, 0x1C509, 0x1C5A5, 0x1C784, 0x1C7EC, 0x1C802, 0x1C891,
    0x1C8A2, 0x1C8B0, 0x1C901, 0x1CBB0, 0x1CBD1, 0x1CC0C, 0x1CC80, 0x1CD06, 0x1CD3C, 0x1CD46, 0x1CE17,
    0x1CE26, 0x1CE95, 0x1CED6, 0x1CEE5, 0x1CF46, 0x1CF55, 0x1CF77, 0x1CF86, 0x1CFA5, 0x1CFB0, 0x1D002,
    0x1D2C4, 0x1D6B2, 0x1D784, 0x1D792, 0x1D9B4, 0x1DC06, 0x1E001, 0x1E012, 0x1E021, 0x1E032, 0x1E041,
    0x1E052, 0x1E061, 0x1E072, 0x1E081, 0x1E092, 0x1E0A1, 0x1E0B2, 0x1E0C1, 0x1E0D2, 0x1E0E1, 0x1E0F2,
    0x1E101, 0x1E112, 0x1E121, 0x1E132, 0x1E141, 0x1E152, 0x1E161, 0x1E172, 0x1E181, 0x1E192, 0x1E1A1,
    0x1E1B2, 0x1E1C1, 0x1E1D2, 0x1E1E1, 0x1E1F2, 0x1E201, 0x1E212, 0x1E221, 0x1E232, 0x1E241, 0x1E252,
    0x1E261, 0x1E272, 0x1E281, 0x1E292, 0x1E2A1, 0x1E2B2, 0x1E2C1, 0x1E2D2, 0x1E2E1, 0x1E2F2, 0x1E301,
    0x1E312, 0x1E321, 0x1E332, 0x1E341, 0x1E352, 0x1E361, 0x1E372, 0x1E381, 0x1E392, 0x1E3A1, 0x1E3B2,
    0x1E3C1, 0x1E3D2, 0x1E3E1, 0x1E3F2, 0x1E401, 0x1E412, 0x1E421, 0x1E432, 0x1E441, 0x1E452, 0x1E461,
    0x1E472, 0x1E481, 0x1E492, 0x1E4A1, 0x1E4B2, 0x1E4C1, 0x1E4D2, 0x1E4E1, 0x1E4F2, 0x1E501, 0x1E512,
    0x1E521, 0x1E532, 0x1E541, 0x1E552, 0x1E561, 0x1E572, 0x1E581, 0x1E592, 0x1E5A1, 0x1E5B2, 0x1E5C1,
    0x1E5D2, 0x1E5E1, 0x1E5F2, 0x1E601, 0x1E612, 0x1E621, 0x1E632, 0x1E641, 0x1E652, 0x1E661, 0x1E672,
    0x1E681, 0x1E692, 0x1E6A1, 0x1E6B2, 0x1E6C1, 0x1E6D2, 0x1E6E1, 0x1E6F2, 0x1E701, 0x1E712, 0x1E721,
    0x1E732, 0x1E741, 0x1E752, 0x1E761, 0x1E772, 0x1E781, 0x1E792, 0x1E7A1, 0x1E7B2, 0x1E7C1, 0x1E7D2,
    0x1E7E1, 0x1E7F2, 0x1E801, 0x1E812, 0x1E821, 0x1E832, 0x1E841, 0x1E852, 0x1E861, 0x1E872, 0x1E881,
    0x1E892, 0x1E8A1, 0x1E8B2, 0x1E8C1, 0x1E8D2, 0x1E8E1, 0x1E8F2, 0x1E901, 0x1E912, 0x1E921, 0x1E932,
    0x1E941, 0x1E952, 0x1E9E1, 0x1E9F2, 0x1EA01, 0x1EA12, 0x1EA21, 0x1EA32, 0x1EA41, 0x1EA52, 0x1EA61,
    0x1EA72, 0x1EA81, 0x1EA92, 0x1EAA1, 0x1EAB2, 0x1EAC1, 0x1EAD2, 0x1EAE1, 0x1EAF2, 0x1EB01, 0x1EB12,
    0x1EB21, 0x1EB32, 0x1EB41, 0x1EB52, 0x1EB61, 0x1EB72, 0x1EB81, 0x1EB92, 0x1EBA1, 0x1EBB2, 0x1EBC1,
    0x1EBD2, 0x1EBE1, 0x1EBF2, 0x1EC01, 0x1EC12, 0x1EC21, 0x1EC32, 0x1EC41, 0x1EC52, 0x1EC61, 0x1EC72,
    0x1EC81, 0x1EC92, 0x1ECA1, 0x1ECB2, 0x1ECC1, 0x1ECD2, 0x1ECE1, 0x1ECF2, 0x1ED01, 0x1ED12, 0x1ED21,
    0x1ED32, 0x1ED41, 0x1ED52, 0x1ED61, 0x1ED72, 0x1ED81, 0x1ED92, 0x1EDA1, 0x1EDB2, 0x1EDC1, 0x1EDD2,
    0x1EDE1, 0x1EDF2, 0x1EE01, 0x1EE12, 0x1EE21, 0x1EE32, 0x1EE41, 0x1EE52, 0x1EE61, 0x1EE72, 0x1EE81,
    0x1EE92, 0x1EEA1, 0x1EEB2, 0x1EEC1, 0x1EED2, 0x1EEE1, 0x1EEF2, 0x1EF01, 0x1EF12, 0x1EF21, 0x1EF32,
    0x1EF41, 0x1EF52, 0x1EF61, 0x1EF72, 0x1EF81, 0x1EF92, 0x1EFA1, 0x1EFB2, 0x1EFC1, 0x1EFD2, 0x1EFE1,
    0x1EFF2, 0x1F081, 0x1F102, 0x1F160, 0x1F181, 0x1F1E0, 0x1F202, 0x1F281, 0x1F302, 0x1F381, 0x1F402,
    0x1F460, 0x1F481, 0x1F4E0, 0x1F502, 0x1F580, 0x1F591, 0x1F5A0, 0x1F5B1, 0x1F5C0, 0x1F5D1, 0x1F5E0,
    0x1F5F1, 0x1F602, 0x1F681, 0x1F702, 0x1F7E0, 0x1F802, 0x1F883, 0x1F902, 0x1F983, 0x1FA02, 0x1FA83,
    0x1FB02, 0x1FB50, 0x1FB62, 0x1FB81, 0x1FBC3, 0x1FBDD, 0x1FBE2, 0x1FBFD, 0x1FC22, 0x1FC50, 0x1FC62,
    0x1FC81, 0x1FCC3, 0x1FCDD, 0x1FD02, 0x1FD40, 0x1FD62, 0x1FD81, 0x1FDC0, 0x1FDDD, 0x1FE02, 0x1FE81,
    0x1FEDD, 0x1FF00, 0x1FF22, 0x1FF50, 0x1FF62, 0x1FF81, 0x1FFC3, 0x1FFDD, 0x1FFF0, 0x2000E, 0x200B0,
    0x2010C, 0x2028E, 0x202A0, 0x202FE, 0x2030C, 0x2044D, 0x2045C, 0x2052D, 0x2053C, 0x205FE, 0x20600,
    0x2070B, 0x20714, 0x20720, 0x2074B, 0x207AD, 0x207DC, 0x207F4, 0x2080B, 0x208AD, 0x208DC, 0x208F0,
    0x20904, 0x209D0, 0x20A0D, 0x20C10, 0x20D06, 0x20DD8, 0x20E16, 0x20E28, 0x20E56, 0x20F10, 0x2100D,
    0x21021, 0x2103D, 0x21071, 0x2108D, 0x210A2, 0x210B1, 0x210E2, 0x21101, 0x21132, 0x2114D, 0x21151,
    0x2116D, 0x21191, 0x211ED, 0x21241, 0x2125D, 0x21261, 0x2127D, 0x21281, 0x2129D, 0x212A1, 0x212ED,
    0x212F2, 0x21301, 0x21342, 0x21355, 0x21392, 0x213AD, 0x213C2, 0x213E1, 0x2140D, 0x21451, 0x21462,
    0x214AD, 0x214E2, 0x214FD, 0x2150B, 0x2160A, 0x21831, 0x21842, 0x2185A, 0x2189B, 0x218AD, 0x218C0,
    0x2190D, 0x2308C, 0x230CD, 0x2329C, 0x232BD, 0x242A0, 0x2440D, 0x244B0, 0x2460B, 0x249CD, 0x24EAB,
    0x2500D, 0x2768C, 0x2776B, 0x2794D, 0x27C5C, 0x27C7D, 0x27E6C, 0x27F0D, 0x2983C, 0x2999D, 0x29D8C,
    0x29DCD, 0x29FCC, 0x29FED, 0x2B740, 0x2B76D, 0x2B960, 0x2B97D, 0x2C001, 0x2C302, 0x2C601, 0x2C612,
    0x2C621, 0x2C652, 0x2C671, 0x2C682, 0x2C691, 0x2C6A2, 0x2C6B1, 0x2C6C2, 0x2C6D1, 0x2C712, 0x2C721,
    0x2C732, 0x2C751, 0x2C762, 0x2C7C4, 0x2C7E1, 0x2C812, 0x2C821, 0x2C832, 0x2C841, 0x2C852, 0x2C861,
    0x2C872, 0x2C881, 0x2C892, 0x2C8A1, 0x2C8B2, 0x2C8C1, 0x2C8D2, 0x2C8E1, 0x2C8F2, 0x2C901, 0x2C912,
    0x2C921, 0x2C932, 0x2C941, 0x2C952, 0x2C961, 0x2C972, 0x2C981, 0x2C992, 0x2C9A1, 0x2C9B2, 0x2C9C1,
    0x2C9D2, 0x2C9E1, 0x2C9F2, 0x2CA01, 0x2CA12, 0x2CA21, 0x2CA32, 0x2CA41, 0x2CA52, 0x2CA61, 0x2CA72,
    0x2CA81, 0x2CA92, 0x2CAA1, 0x2CAB2, 0x2CAC1, 0x2CAD2, 0x2CAE1, 0x2CAF2, 0x2CB01, 0x2CB12, 0x2CB21,
    0x2CB32, 0x2CB41, 0x2CB52, 0x2CB61, 0x2CB72, 0x2CB81, 0x2CB92, 0x2CBA1, 0x2CBB2, 0x2CBC1, 0x2CBD2,
    0x2CBE1, 0x2CBF2, 0x2CC01, 0x2CC12, 0x2CC21, 0x2CC32, 0x2CC41, 0x2CC52, 0x2CC61, 0x2CC72, 0x2CC81,
    0x2CC92, 0x2CCA1, 0x2CCB2, 0x2CCC1, 0x2CCD2, 0x2CCE1, 0x2CCF2, 0x2CD01, 0x2CD12, 0x2CD21, 0x2CD32,
    0x2CD41, 0x2CD52, 0x2CD61, 0x2CD72, 0x2CD81, 0x2CD92, 0x2CDA1, 0x2CDB2, 0x2CDC1, 0x2CDD2, 0x2CDE1,
    0x2CDF2, 0x2CE01, 0x2CE12, 0x2CE21, 0x2CE32, 0x2CE5D, 0x2CEB1, 0x2CEC2, 0x2CED1, 0x2CEE2, 0x2CEF6,
    0x2CF21, 0x2CF32, 0x2CF40, 0x2CF9C, 0x2CFDB, 0x2CFEC, 0x2D002, 0x2D260, 0x2D272, 0x2D280, 0x2D2D2,
    0x2D2E0, 0x2D305, 0x2D680, 0x2D6F4, 0x2D70C, 0x2D710, 0x2D7F6, 0x2D805, 0x2D970, 0x2DA05, 0x2DA70,
    0x2DA85, 0x2DAF0, 0x2DB05, 0x2DB70, 0x2DB85, 0x2DBF0, 0x2DC05, 0x2DC70, 0x2DC85, 0x2DCF0, 0x2DD05,
    0x2DD70, 0x2DD85, 0x2DDF0, 0x2DE06, 0x2E00C, 0x2E2F4, 0x2E30C, 0x2E50D, 0x2E52C, 0x2E5E0, 0x2E80D,
    0x2E9A0, 0x2E9BD, 0x2EF40, 0x2F00D, 0x2FD60, 0x2FF0D, 0x3000E, 0x3001C, 0x3004D, 0x30054, 0x30065,
    0x3007A, 0x3008C, 0x3012D, 0x3014C, 0x3020D, 0x3021A, 0x302A6, 0x302E7, 0x3030C, 0x30314, 0x3036D,
    0x3038A, 0x303B4, 0x303C5, 0x303DC, 0x303ED, 0x30400, 0x30415, 0x30970, 0x30996, 0x309BD, 0x309D4,
    0x309F5, 0x30A0C, 0x30A15, 0x30FBC, 0x30FC4, 0x30FF5, 0x31000, 0x31055, 0x31300, 0x31315, 0x318F0,
    0x3190D, 0x3192B, 0x3196D, 0x31A05, 0x31C0D, 0x31E60, 0x31EFD, 0x31F05, 0x3200D, 0x321F0, 0x3220B,
    0x322AD, 0x3248B, 0x3250D, 0x3251B, 0x3260D, 0x3280B, 0x328AD, 0x32B1B, 0x32C0D, 0x34005, 0x4DC0D,
    0x4E005, 0xA0154, 0xA0165, 0xA48D0, 0xA490D, 0xA4C70, 0xA4D05, 0xA4F84, 0xA4FEC, 0xA5005, 0xA60C4,
    0xA60DC, 0xA6105, 0xA6209, 0xA62A5, 0xA62C0, 0xA6401, 0xA6412, 0xA6421, 0xA6432, 0xA6441, 0xA6452,
    0xA6461, 0xA6472, 0xA6481, 0xA6492, 0xA64A1, 0xA64B2, 0xA64C1, 0xA64D2, 0xA64E1, 0xA64F2, 0xA6501,
    0xA6512, 0xA6521, 0xA6532, 0xA6541, 0xA6552, 0xA6561, 0xA6572, 0xA6581, 0xA6592, 0xA65A1, 0xA65B2,
    0xA65C1, 0xA65D2, 0xA65E1, 0xA65F2, 0xA6601, 0xA6612, 0xA6621, 0xA6632, 0xA6641, 0xA6652, 0xA6661,
    0xA6672, 0xA6681, 0xA6692, 0xA66A1, 0xA66B2, 0xA66C1, 0xA66D2, 0xA66E5, 0xA66F6, 0xA6708, 0xA673C,
    0xA6746, 0xA67EC, 0xA67F4, 0xA6801, 0xA6812, 0xA6821, 0xA6832, 0xA6841, 0xA6852, 0xA6861, 0xA6872,
    0xA6881, 0xA6892, 0xA68A1, 0xA68B2, 0xA68C1, 0xA68D2, 0xA68E1, 0xA68F2, 0xA6901, 0xA6912, 0xA6921,
    0xA6932, 0xA6941, 0xA6952, 0xA6961, 0xA6972, 0xA6981, 0xA6992, 0xA69A1, 0xA69B2, 0xA69C4, 0xA69E6,
    0xA6A05, 0xA6E6A, 0xA6F06, 0xA6F2C, 0xA6F80, 0xA700D, 0xA7174, 0xA720D, 0xA7221, 0xA7232, 0xA7241,
    0xA7252, 0xA7261, 0xA7272, 0xA7281, 0xA7292, 0xA72A1, 0xA72B2, 0xA72C1, 0xA72D2, 0xA72E1, 0xA72F2,
    0xA7321, 0xA7332, 0xA7341, 0xA7352, 0xA7361, 0xA7372, 0xA7381, 0xA7392, 0xA73A1, 0xA73B2, 0xA73C1,
    0xA73D2, 0xA73E1, 0xA73F2, 0xA7401, 0xA7412, 0xA7421, 0xA7432, 0xA7441, 0xA7452, 0xA7461, 0xA7472,
    0xA7481, 0xA7492, 0xA74A1, 0xA74B2, 0xA74C1, 0xA74D2, 0xA74E1, 0xA74F2, 0xA7501, 0xA7512, 0xA7521,
    0xA7532, 0xA7541, 0xA7552, 0xA7561, 0xA7572, 0xA7581, 0xA7592, 0xA75A1, 0xA75B2, 0xA75C1, 0xA75D2,
    0xA75E1, 0xA75F2, 0xA7601, 0xA7612, 0xA7621, 0xA7632, 0xA7641, 0xA7652, 0xA7661, 0xA7672, 0xA7681,
    0xA7692, 0xA76A1, 0xA76B2, 0xA76C1, 0xA76D2, 0xA76E1, 0xA76F2, 0xA7704, 0xA7712, 0xA7791, 0xA77A2,
    0xA77B1, 0xA77C2, 0xA77D1, 0xA77F2, 0xA7801, 0xA7812, 0xA7821, 0xA7832, 0xA7841, 0xA7852, 0xA7861,
    0xA7872, 0xA7884, 0xA789D, 0xA78B1, 0xA78C2, 0xA78D1, 0xA78E2, 0xA78F5, 0xA7901, 0xA7912, 0xA7921,
    0xA7932, 0xA7961, 0xA7972, 0xA7981, 0xA7992, 0xA79A1, 0xA79B2, 0xA79C1, 0xA79D2, 0xA79E1, 0xA79F2,
    0xA7A01, 0xA7A12, 0xA7A21, 0xA7A32, 0xA7A41, 0xA7A52, 0xA7A61, 0xA7A72, 0xA7A81, 0xA7A92, 0xA7AA1,
    0xA7AF2, 0xA7B01, 0xA7B52, 0xA7B61, 0xA7B72, 0xA7B81, 0xA7B92, 0xA7BA1, 0xA7BB2, 0xA7BC1, 0xA7BD2,
    0xA7BE1, 0xA7BF2, 0xA7C01, 0xA7C12, 0xA7C21, 0xA7C32, 0xA7C41, 0xA7C82, 0xA7C91, 0xA7CA2, 0xA7CB1,
    0xA7CD2, 0xA7CE0, 0xA7D01, 0xA7D12, 0xA7D20, 0xA7D32, 0xA7D40, 0xA7D52, 0xA7D61, 0xA7D72, 0xA7D81,
    0xA7D92, 0xA7DA1, 0xA7DB2, 0xA7DC1, 0xA7DD0, 0xA7F24, 0xA7F51, 0xA7F62, 0xA7F75, 0xA7F84, 0xA7FA2,
    0xA7FB5, 0xA8026, 0xA8035, 0xA8066, 0xA8075, 0xA80B6, 0xA80C5, 0xA8237, 0xA8256, 0xA8277, 0xA828D,
    0xA82C6, 0xA82D0, 0xA830B, 0xA836D, 0xA83A0, 0xA8405, 0xA874C, 0xA8780, 0xA8807, 0xA8825, 0xA8B47,
    0xA8C46, 0xA8C60, 0xA8CEC, 0xA8D09, 0xA8DA0, 0xA8E06, 0xA8F25, 0xA8F8C, 0xA8FB5, 0xA8FCC, 0xA8FD5,
    0xA8FF6, 0xA9009, 0xA90A5, 0xA9266, 0xA92EC, 0xA9305, 0xA9476, 0xA9527, 0xA9540, 0xA95FC, 0xA9605,
    0xA97D0, 0xA9806, 0xA9837, 0xA9845, 0xA9B36, 0xA9B47, 0xA9B66, 0xA9BA7, 0xA9BC6, 0xA9BE7, 0xA9C1C,
    0xA9CE0, 0xA9CF4, 0xA9D09, 0xA9DA0, 0xA9DEC, 0xA9E05, 0xA9E56, 0xA9E64, 0xA9E75, 0xA9F09, 0xA9FA5,
    0xA9FF0, 0xAA005, 0xAA296, 0xAA2F7, 0xAA316, 0xAA337, 0xAA356, 0xAA370, 0xAA405, 0xAA436, 0xAA445,
    0xAA4C6, 0xAA4D7, 0xAA4E0, 0xAA509, 0xAA5A0, 0xAA5CC, 0xAA605, 0xAA704, 0xAA715, 0xAA77D, 0xAA7A5,
    0xAA7B7, 0xAA7C6, 0xAA7D7, 0xAA7E5, 0xAAB06, 0xAAB15, 0xAAB26, 0xAAB55, 0xAAB76, 0xAAB95, 0xAABE6,
    0xAAC05, 0xAAC16, 0xAAC25, 0xAAC30, 0xAADB5, 0xAADD4, 0xAADEC, 0xAAE05, 0xAAEB7, 0xAAEC6, 0xAAEE7,
    0xAAF0C, 0xAAF25, 0xAAF34, 0xAAF57, 0xAAF66, 0xAAF70, 0xAB015, 0xAB070, 0xAB095, 0xAB0F0, 0xAB115,
    0xAB170, 0xAB205, 0xAB270, 0xAB285, 0xAB2F0, 0xAB302, 0xAB5BD, 0xAB5C4, 0xAB602, 0xAB694, 0xAB6AD,
    0xAB6C0, 0xAB702, 0xABC05, 0xABE37, 0xABE56, 0xABE67, 0xABE86, 0xABE97, 0xABEBC, 0xABEC7, 0xABED6,
    0xABEE0, 0xABF09, 0xABFA0, 0xAC005, 0xD7A40, 0xD7B05, 0xD7C70, 0xD7CB5, 0xD7FC0, 0xF9005, 0xFA6E0,
    0xFA705, 0xFADA0, 0xFB002, 0xFB070, 0xFB132, 0xFB180, 0xFB1D5, 0xFB1E6, 0xFB1F5, 0xFB29D, 0xFB2A5,
    0xFB370, 0xFB385, 0xFB3D0, 0xFB3E5, 0xFB3F0, 0xFB405, 0xFB420, 0xFB435, 0xFB450, 0xFB465, 0xFBB2D,
    0xFBC30, 0xFBD35, 0xFD3EC, 0xFD40D, 0xFD505, 0xFD900, 0xFD925, 0xFDC80, 0xFDCFD, 0xFDD00, 0xFDF05,
    0xFDFCD, 0xFE006, 0xFE10C, 0xFE1A0, 0xFE206, 0xFE30C, 0xFE530, 0xFE54C, 0xFE62D, 0xFE63C, 0xFE64D,
    0xFE670, 0xFE68C, 0xFE69D, 0xFE6AC, 0xFE6C0, 0xFE705, 0xFE750, 0xFE765, 0xFEFD0, 0xFF01C, 0xFF04D,
    0xFF05C, 0xFF0BD, 0xFF0CC, 0xFF109, 0xFF1AC, 0xFF1CD, 0xFF1FC, 0xFF211, 0xFF3BC, 0xFF3ED, 0xFF3FC,
    0xFF40D, 0xFF412, 0xFF5BC, 0xFF5CD, 0xFF5DC, 0xFF5ED, 0xFF5FC, 0xFF665, 0xFF704, 0xFF715, 0xFF9E4,
    0xFFA05, 0xFFBF0, 0xFFC25, 0xFFC80, 0xFFCA5, 0xFFD00, 0xFFD25, 0xFFD80, 0xFFDA5, 0xFFDD0, 0xFFE0D,
    0xFFE70, 0xFFE8D, 0xFFEF0, 0xFFFCD, 0xFFFE0, 0x100005, 0x1000C0, 0x1000D5, 0x100270, 0x100285, 0x1003B0,
    0x1003C5, 0x1003E0, 0x1003F5, 0x1004E0, 0x100505, 0x1005E0, 0x100805, 0x100FB0, 0x10100C, 0x101030,
    0x10107B, 0x101340, 0x10137D, 0x10140A, 0x10175B, 0x10179D, 0x1018AB, 0x1018CD, 0x1018F0, 0x10190D,
    0x1019D0, 0x101A0D, 0x101A10, 0x101D0D, 0x101FD6, 0x101FE0, 0x102805, 0x1029D0, 0x102A05, 0x102D10,
    0x102E06, 0x102E1B, 0x102FC0, 0x103005, 0x10320B, 0x103240, 0x1032D5, 0x10341A, 0x103425, 0x1034AA,
    0x1034B0, 0x103505, 0x103766, 0x1037B0, 0x103805, 0x1039E0, 0x1039FC, 0x103A05, 0x103C40, 0x103C85,
    0x103D0C, 0x103D1A, 0x103D60, 0x104001, 0x104282, 0x104505, 0x1049E0, 0x104A09, 0x104AA0, 0x104B01,
    0x104D40, 0x104D82, 0x104FC0, 0x105005, 0x105280, 0x105305, 0x105640, 0x1056FC, 0x105701, 0x1057B0,
    0x1057C1, 0x1058B0, 0x1058C1, 0x105930, 0x105941, 0x105960, 0x105972, 0x105A20, 0x105A32, 0x105B20,
    0x105B32, 0x105BA0, 0x105BB2, 0x105BD0, 0x105C05, 0x105F40, 0x106005, 0x107370, 0x107405, 0x107560,
    0x107605, 0x107680, 0x107804, 0x107860, 0x107874, 0x107B10, 0x107B24, 0x107BB0, 0x108005, 0x108060,
    0x108085, 0x108090, 0x1080A5, 0x108360, 0x108375, 0x108390, 0x1083C5, 0x1083D0, 0x1083F5, 0x108560,
    0x10857C, 0x10858B, 0x108605, 0x10877D, 0x10879B, 0x108805, 0x1089F0, 0x108A7B, 0x108B00, 0x108E05,
    0x108F30, 0x108F45, 0x108F60, 0x108FBB, 0x109005, 0x10916B, 0x1091C0, 0x1091FC, 0x109205, 0x1093A0,
    0x1093FC, 0x109400, 0x109805, 0x109B80, 0x109BCB, 0x109BE5, 0x109C0B, 0x109D00, 0x109D2B, 0x10A005,
    0x10A016, 0x10A040, 0x10A056, 0x10A070, 0x10A0C6, 0x10A105, 0x10A140, 0x10A155, 0x10A180, 0x10A195,
    0x10A360, 0x10A386, 0x10A3B0, 0x10A3F6, 0x10A40B, 0x10A490, 0x10A50C, 0x10A590, 0x10A605, 0x10A7DB,
    0x10A7FC, 0x10A805, 0x10A9DB, 0x10AA00, 0x10AC05, 0x10AC8D, 0x10AC95, 0x10AE56, 0x10AE70, 0x10AEBB,
    0x10AF0C, 0x10AF70, 0x10B005, 0x10B360, 0x10B39C, 0x10B405, 0x10B560, 0x10B58B, 0x10B605, 0x10B730,
    0x10B78B, 0x10B805, 0x10B920, 0x10B99C, 0x10B9D0, 0x10BA9B, 0x10BB00, 0x10C005, 0x10C490, 0x10C801,
    0x10CB30, 0x10CC02, 0x10CF30, 0x10CFAB, 0x10D005, 0x10D246, 0x10D280, 0x10D309, 0x10D3A0, 0x10D409,
    0x10D4A5, 0x10D4E4, 0x10D4F5, 0x10D501, 0x10D660, 0x10D696, 0x10D6EC, 0x10D6F4, 0x10D702, 0x10D860,
    0x10D8ED, 0x10D900, 0x10E60B, 0x10E7F0, 0x10E805, 0x10EAA0, 0x10EAB6, 0x10EADC, 0x10EAE0, 0x10EB05,
    0x10EB20, 0x10EC25, 0x10EC50, 0x10EFC6, 0x10F005, 0x10F1DB, 0x10F275, 0x10F280, 0x10F305, 0x10F466,
    0x10F51B, 0x10F55C, 0x10F5A0, 0x10F705, 0x10F826, 0x10F86C, 0x10F8A0, 0x10FB05, 0x10FC5B, 0x10FCC0,
    0x10FE05, 0x10FF70, 0x110007, 0x110016, 0x110027, 0x110035, 0x110386, 0x11047C, 0x1104E0, 0x11052B,
    0x110669, 0x110706, 0x110715, 0x110736, 0x110755, 0x110760, 0x1107F6, 0x110827, 0x110835, 0x110B07,
    0x110B36, 0x110B77, 0x110B96, 0x110BBC, 0x110BD0, 0x110BEC, 0x110C26, 0x110C30, 0x110D05, 0x110E90,
    0x110F09, 0x110FA0, 0x111006, 0x111035, 0x111276, 0x1112C7, 0x1112D6, 0x111350, 0x111369, 0x11140C,
    0x111445, 0x111457, 0x111475, 0x111480, 0x111505, 0x111736, 0x11174C, 0x111765, 0x111770, 0x111806,
    0x111827, 0x111835, 0x111B37, 0x111B66, 0x111BF7, 0x111C15, 0x111C5C, 0x111C96, 0x111CDC, 0x111CE7,
    0x111CF6, 0x111D09, 0x111DA5, 0x111DBC, 0x111DC5, 0x111DDC, 0x111E00, 0x111E1B, 0x111F50, 0x112005,
    0x112120, 0x112135, 0x1122C7, 0x1122F6, 0x112327, 0x112346, 0x112357, 0x112366, 0x11238C, 0x1123E6,
    0x1123F5, 0x112416, 0x112420, 0x112805, 0x112870, 0x112885, 0x112890, 0x1128A5, 0x1128E0, 0x1128F5,
    0x1129E0, 0x1129F5, 0x112A9C, 0x112AA0, 0x112B05, 0x112DF6, 0x112E07, 0x112E36, 0x112EB0, 0x112F09,
    0x112FA0, 0x113006, 0x113027, 0x113040, 0x113055, 0x1130D0, 0x1130F5, 0x113110, 0x113135, 0x113290,
    0x1132A5, 0x113310, 0x113325, 0x113340, 0x113355, 0x1133A0, 0x1133B6, 0x1133D5, 0x1133E7, 0x113406,
    0x113417, 0x113450, 0x113477, 0x113490, 0x1134B7, 0x1134E0, 0x113505, 0x113510, 0x113577, 0x113580,
    0x1135D5, 0x113627, 0x113640, 0x113666, 0x1136D0, 0x113706, 0x113750, 0x113805, 0x1138A0, 0x1138B5,
    0x1138C0, 0x1138E5, 0x1138F0, 0x113905, 0x113B60, 0x113B75, 0x113B87, 0x113BB6, 0x113C10, 0x113C27,
    0x113C30, 0x113C57, 0x113C60, 0x113C77, 0x113CB0, 0x113CC7, 0x113CE6, 0x113CF7, 0x113D06, 0x113D15,
    0x113D26, 0x113D35, 0x113D4C, 0x113D60, 0x113D7C, 0x113D90, 0x113E16, 0x113E30, 0x114005, 0x114357,
    0x114386, 0x114407, 0x114426, 0x114457, 0x114466, 0x114475, 0x1144BC, 0x114509, 0x1145AC, 0x1145C0,
    0x1145DC, 0x1145E6, 0x1145F5, 0x114620, 0x114805, 0x114B07, 0x114B36, 0x114B97, 0x114BA6, 0x114BB7,
    0x114BF6, 0x114C17, 0x114C26, 0x114C45, 0x114C6C, 0x114C75, 0x114C80, 0x114D09, 0x114DA0, 0x115805,
    0x115AF7, 0x115B26, 0x115B60, 0x115B87, 0x115BC6, 0x115BE7, 0x115BF6, 0x115C1C, 0x115D85, 0x115DC6,
    0x115DE0, 0x116005, 0x116307, 0x116336, 0x1163B7, 0x1163D6, 0x1163E7, 0x1163F6, 0x11641C, 0x116445,
    0x116450, 0x116509, 0x1165A0, 0x11660C, 0x1166D0, 0x116805, 0x116AB6, 0x116AC7, 0x116AD6, 0x116AE7,
    0x116B06, 0x116B67, 0x116B76, 0x116B85, 0x116B9C, 0x116BA0, 0x116C09, 0x116CA0, 0x116D09, 0x116E40,
    0x117005, 0x1171B0, 0x1171D6, 0x1171E7, 0x1171F6, 0x117207, 0x117226, 0x117267, 0x117276, 0x1172C0,
    0x117309, 0x1173AB, 0x1173CC, 0x1173FD, 0x117405, 0x117470, 0x118005, 0x1182C7, 0x1182F6, 0x118387,
    0x118396, 0x1183BC, 0x1183C0, 0x118A01, 0x118C02, 0x118E09, 0x118EAB, 0x118F30, 0x118FF5, 0x119070,
    0x119095, 0x1190A0, 0x1190C5, 0x119140, 0x119155, 0x119170, 0x119185, 0x119307, 0x119360, 0x119377,
    0x119390, 0x1193B6, 0x1193D7, 0x1193E6, 0x1193F5, 0x119407, 0x119415, 0x119427, 0x119436, 0x11944C,
    0x119470, 0x119509, 0x1195A0, 0x119A05, 0x119A80, 0x119AA5, 0x119D17, 0x119D46, 0x119D80, 0x119DA6,
    0x119DC7, 0x119E06, 0x119E15, 0x119E2C, 0x119E35, 0x119E47, 0x119E50, 0x11A005, 0x11A016, 0x11A0B5,
    0x11A336, 0x11A397, 0x11A3A5, 0x11A3B6, 0x11A3FC, 0x11A476, 0x11A480, 0x11A505, 0x11A516, 0x11A577,
    0x11A596, 0x11A5C5, 0x11A8A6, 0x11A977, 0x11A986, 0x11A9AC, 0x11A9D5, 0x11A9EC, 0x11AA30, 0x11AB05,
    0x11AF90, 0x11B00C, 0x11B0A0, 0x11BC05, 0x11BE1C, 0x11BE20, 0x11BF09, 0x11BFA0, 0x11C005, 0x11C090,
    0x11C0A5, 0x11C2F7, 0x11C306, 0x11C370, 0x11C386, 0x11C3E7, 0x11C3F6, 0x11C405, 0x11C41C, 0x11C460,
    0x11C509, 0x11C5AB, 0x11C6D0, 0x11C70C, 0x11C725, 0x11C900, 0x11C926, 0x11CA80, 0x11CA97, 0x11CAA6,
    0x11CB17, 0x11CB26, 0x11CB47, 0x11CB56, 0x11CB70, 0x11D005, 0x11D070, 0x11D085, 0x11D0A0, 0x11D0B5,
    0x11D316, 0x11D370, 0x11D3A6, 0x11D3B0, 0x11D3C6, 0x11D3E0, 0x11D3F6, 0x11D465, 0x11D476, 0x11D480,
    0x11D509, 0x11D5A0, 0x11D605, 0x11D660, 0x11D675, 0x11D690, 0x11D6A5, 0x11D8A7, 0x11D8F0, 0x11D906,
    0x11D920, 0x11D937, 0x11D956, 0x11D967, 0x11D976, 0x11D985, 0x11D990, 0x11DA09, 0x11DAA0, 0x11EE05,
    0x11EF36, 0x11EF57, 0x11EF7C, 0x11EF90, 0x11F006, 0x11F025, 0x11F037, 0x11F045, 0x11F110, 0x11F125,
    0x11F347, 0x11F366, 0x11F3B0, 0x11F3E7, 0x11F406, 0x11F417, 0x11F426, 0x11F43C, 0x11F509, 0x11F5A6,
    0x11F5B0, 0x11FB05, 0x11FB10, 0x11FC0B, 0x11FD5D, 0x11FF20, 0x11FFFC, 0x120005, 0x1239A0, 0x12400A,
    0x1246F0, 0x12470C, 0x124750, 0x124805, 0x125440, 0x12F905, 0x12FF1C, 0x12FF30, 0x130005, 0x134300,
    0x134406, 0x134415, 0x134476, 0x134560, 0x134605, 0x143FB0, 0x144005, 0x146470, 0x161005, 0x1611E6,
    0x1612A7, 0x1612D6, 0x161309, 0x1613A0, 0x168005, 0x16A390, 0x16A405, 0x16A5F0, 0x16A609, 0x16A6A0,
    0x16A6EC, 0x16A705, 0x16ABF0, 0x16AC09, 0x16ACA0, 0x16AD05, 0x16AEE0, 0x16AF06, 0x16AF5C, 0x16AF60,
    0x16B005, 0x16B306, 0x16B37C, 0x16B3CD, 0x16B404, 0x16B44C, 0x16B45D, 0x16B460, 0x16B509, 0x16B5A0,
    0x16B5BB, 0x16B620, 0x16B635, 0x16B780, 0x16B7D5, 0x16B900, 0x16D404, 0x16D435, 0x16D6B4, 0x16D6DC,
    0x16D709, 0x16D7A0, 0x16E401, 0x16E602, 0x16E80B, 0x16E97C, 0x16E9B0, 0x16F005, 0x16F4B0, 0x16F4F6,
    0x16F505, 0x16F517, 0x16F880, 0x16F8F6, 0x16F934, 0x16FA00, 0x16FE04, 0x16FE2C, 0x16FE34, 0x16FE46,
    0x16FE50, 0x16FF07, 0x16FF20, 0x170005, 0x187F80, 0x188005, 0x18CD60, 0x18CFF5, 0x18D090, 0x1AFF04,
    0x1AFF40, 0x1AFF54, 0x1AFFC0, 0x1AFFD4, 0x1AFFF0, 0x1B0005, 0x1B1230, 0x1B1325, 0x1B1330, 0x1B1505,
    0x1B1530, 0x1B1555, 0x1B1560, 0x1B1645, 0x1B1680, 0x1B1705, 0x1B2FC0, 0x1BC005, 0x1BC6B0, 0x1BC705,
    0x1BC7D0, 0x1BC805, 0x1BC890, 0x1BC905, 0x1BC9A0, 0x1BC9CD, 0x1BC9D6, 0x1BC9FC, 0x1BCA00, 0x1CC00D,
    0x1CCF09, 0x1CCFA0, 0x1CD00D, 0x1CEB40, 0x1CF006, 0x1CF2E0, 0x1CF306, 0x1CF470, 0x1CF50D, 0x1CFC40,
    0x1D000D, 0x1D0F60, 0x1D100D, 0x1D1270, 0x1D129D, 0x1D1657, 0x1D1676, 0x1D16AD, 0x1D16D7, 0x1D1730,
    0x1D17B6, 0x1D183D, 0x1D1856, 0x1D18CD, 0x1D1AA6, 0x1D1AED, 0x1D1EB0, 0x1D200D, 0x1D2426, 0x1D245D,
    0x1D2460, 0x1D2C0B, 0x1D2D40, 0x1D2E0B, 0x1D2F40, 0x1D300D, 0x1D3570, 0x1D360B, 0x1D3790, 0x1D4001,
    0x1D41A2, 0x1D4341, 0x1D44E2, 0x1D4550, 0x1D4562, 0x1D4681, 0x1D4822, 0x1D49C1, 0x1D49D0, 0x1D49E1,
    0x1D4A00, 0x1D4A21, 0x1D4A30, 0x1D4A51, 0x1D4A70, 0x1D4A91, 0x1D4AD0, 0x1D4AE1, 0x1D4B62, 0x1D4BA0,
    0x1D4BB2, 0x1D4BC0, 0x1D4BD2, 0x1D4C40, 0x1D4C52, 0x1D4D01, 0x1D4EA2, 0x1D5041, 0x1D5060, 0x1D5071,
    0x1D50B0, 0x1D50D1, 0x1D5150, 0x1D5161, 0x1D51D0, 0x1D51E2, 0x1D5381, 0x1D53A0, 0x1D53B1, 0x1D53F0,
    0x1D5401, 0x1D5450, 0x1D5461, 0x1D5470, 0x1D54A1, 0x1D5510, 0x1D5522, 0x1D56C1, 0x1D5862, 0x1D5A01,
    0x1D5BA2, 0x1D5D41, 0x1D5EE2, 0x1D6081, 0x1D6222, 0x1D63C1, 0x1D6562, 0x1D6701, 0x1D68A2, 0x1D6A60,
    0x1D6A81, 0x1D6C1D, 0x1D6C22, 0x1D6DBD, 0x1D6DC2, 0x1D6E21, 0x1D6FBD, 0x1D6FC2, 0x1D715D, 0x1D7162,
    0x1D71C1, 0x1D735D, 0x1D7362, 0x1D74FD, 0x1D7502, 0x1D7561, 0x1D76FD, 0x1D7702, 0x1D789D, 0x1D78A2,
    0x1D7901, 0x1D7A9D, 0x1D7AA2, 0x1D7C3D, 0x1D7C42, 0x1D7CA1, 0x1D7CB2, 0x1D7CC0, 0x1D7CE9, 0x1D800D,
    0x1DA006, 0x1DA37D, 0x1DA3B6, 0x1DA6DD, 0x1DA756, 0x1DA76D, 0x1DA846, 0x1DA85D, 0x1DA87C, 0x1DA8C0,
    0x1DA9B6, 0x1DAA00, 0x1DAA16, 0x1DAB00, 0x1DF002, 0x1DF0A5, 0x1DF0B2, 0x1DF1F0, 0x1DF252, 0x1DF2B0,
    0x1E0006, 0x1E0070, 0x1E0086, 0x1E0190, 0x1E01B6, 0x1E0220, 0x1E0236, 0x1E0250, 0x1E0266, 0x1E02B0,
    0x1E0304, 0x1E06E0, 0x1E08F6, 0x1E0900, 0x1E1005, 0x1E12D0, 0x1E1306, 0x1E1374, 0x1E13E0, 0x1E1409,
    0x1E14A0, 0x1E14E5, 0x1E14FD, 0x1E1500, 0x1E2905, 0x1E2AE6, 0x1E2AF0, 0x1E2C05, 0x1E2EC6, 0x1E2F09,
    0x1E2FA0, 0x1E2FFD, 0x1E3000, 0x1E4D05, 0x1E4EB4, 0x1E4EC6, 0x1E4F09, 0x1E4FA0, 0x1E5D05, 0x1E5EE6,
    0x1E5F05, 0x1E5F19, 0x1E5FB0, 0x1E5FFC, 0x1E6000, 0x1E7E05, 0x1E7E70, 0x1E7E85, 0x1E7EC0, 0x1E7ED5,
    0x1E7EF0, 0x1E7F05, 0x1E7FF0, 0x1E8005, 0x1E8C50, 0x1E8C7B, 0x1E8D06, 0x1E8D70, 0x1E9001, 0x1E9222,
    0x1E9446, 0x1E94B4, 0x1E94C0, 0x1E9509, 0x1E95A0, 0x1E95EC, 0x1E9600, 0x1EC71B, 0x1ECACD, 0x1ECADB,
    0x1ECB0D, 0x1ECB1B, 0x1ECB50, 0x1ED01B, 0x1ED2ED, 0x1ED2FB, 0x1ED3E0, 0x1EE005, 0x1EE040, 0x1EE055,
    0x1EE200, 0x1EE215, 0x1EE230, 0x1EE245, 0x1EE250, 0x1EE275, 0x1EE280, 0x1EE295, 0x1EE330, 0x1EE345,
    0x1EE380, 0x1EE395, 0x1EE3A0, 0x1EE3B5, 0x1EE3C0, 0x1EE425, 0x1EE430, 0x1EE475, 0x1EE480, 0x1EE495,
    0x1EE4A0, 0x1EE4B5, 0x1EE4C0, 0x1EE4D5, 0x1EE500, 0x1EE515, 0x1EE530, 0x1EE545, 0x1EE550, 0x1EE575,
    0x1EE580, 0x1EE595, 0x1EE5A0, 0x1EE5B5, 0x1EE5C0, 0x1EE5D5, 0x1EE5E0, 0x1EE5F5, 0x1EE600, 0x1EE615,
    0x1EE630, 0x1EE645, 0x1EE650, 0x1EE675, 0x1EE6B0, 0x1EE6C5, 0x1EE730, 0x1EE745, 0x1EE780, 0x1EE795,
    0x1EE7D0, 0x1EE7E5, 0x1EE7F0, 0x1EE805, 0x1EE8A0, 0x1EE8B5, 0x1EE9C0, 0x1EEA15, 0x1EEA40, 0x1EEA55,
    0x1EEAA0, 0x1EEAB5, 0x1EEBC0, 0x1EEF0D, 0x1EEF20, 0x1F000D, 0x1F02C0, 0x1F030D, 0x1F0940, 0x1F0A0D,
    0x1F0AF0, 0x1F0B1D, 0x1F0C00, 0x1F0C1D, 0x1F0D00, 0x1F0D1D, 0x1F0F60, 0x1F100B, 0x1F10DD, 0x1F1AE0,
    0x1F1E6D, 0x1F2030, 0x1F210D, 0x1F23C0, 0x1F240D, 0x1F2490, 0x1F250D, 0x1F2520, 0x1F260D, 0x1F2660,
    0x1F300D, 0x1F6D80, 0x1F6DCD, 0x1F6ED0, 0x1F6F0D, 0x1F6FD0, 0x1F700D, 0x1F7770, 0x1F77BD, 0x1F7DA0,
    0x1F7E0D, 0x1F7EC0, 0x1F7F0D, 0x1F7F10, 0x1F800D, 0x1F80C0, 0x1F810D, 0x1F8480, 0x1F850D, 0x1F85A0,
    0x1F860D, 0x1F8880, 0x1F890D, 0x1F8AE0, 0x1F8B0D, 0x1F8BC0, 0x1F8C0D, 0x1F8C20, 0x1F900D, 0x1FA540,
    0x1FA60D, 0x1FA6E0, 0x1FA70D, 0x1FA7D0, 0x1FA80D, 0x1FA8A0, 0x1FA8FD, 0x1FAC70, 0x1FACED, 0x1FADD0,
    0x1FADFD, 0x1FAEA0, 0x1FAF0D, 0x1FAF90, 0x1FB00D, 0x1FB930, 0x1FB94D, 0x1FBF09, 0x1FBFA0, 0x200005,
    0x2A6E00, 0x2A7005, 0x2B73A0, 0x2B7405, 0x2B81E0, 0x2B8205, 0x2CEA20, 0x2CEB05, 0x2EBE10, 0x2EBF05,
    0x2EE5E0, 0x2F8005, 0x2FA1E0, 0x300005, 0x3134B0, 0x313505, 0x323B00, 0xE01006, 0xE01F00,
};

/* NFC data, Unicode 9.0.0: Python 14.0.0's unicodedata restricted to the code points
   @unicode/unicode-9.0.0 assigns (see tools/gen_unicode.py). 496 runs of one canonical combining
   class, each (first code point << 8 | class); the full canonical decomposition of
   dintattn__nfd_cp[k] (2060 code points, Hangul syllables apart) is
   dintattn__nfd_data[dintattn__nfd_off[k] .. dintattn__nfd_off[k + 1]); the 940 primary
   composites as (first, second, composite), sorted. */
#define DINTATTN__NFC_UNICODE_VERSION "9.0.0"
static const uint32_t dintattn__ccc_runs[496] = {
    0x0, 0x300E6, 0x315E8, 0x316DC, 0x31AE8, 0x31BD8, 0x31CDC, 0x321CA, 0x323DC, 0x327CA, 0x329DC, 0x33401,
    0x339DC, 0x33DE6, 0x345F0, 0x346E6, 0x347DC, 0x34AE6, 0x34DDC, 0x34F00, 0x350E6, 0x353DC, 0x357E6,
    0x358E8, 0x359DC, 0x35BE6, 0x35CE9, 0x35DEA, 0x35FE9, 0x360EA, 0x362E9, 0x363E6, 0x37000, 0x483E6,
    0x48800, 0x591DC, 0x592E6, 0x596DC, 0x597E6, 0x59ADE, 0x59BDC, 0x59CE6, 0x5A2DC, 0x5A8E6, 0x5AADC,
    0x5ABE6, 0x5ADDE, 0x5AEE4, 0x5AFE6, 0x5B00A, 0x5B10B, 0x5B20C, 0x5B30D, 0x5B40E, 0x5B50F, 0x5B610,
    0x5B711, 0x5B812, 0x5B913, 0x5BB14, 0x5BC15, 0x5BD16, 0x5BE00, 0x5BF17, 0x5C000, 0x5C118, 0x5C219,
    0x5C300, 0x5C4E6, 0x5C5DC, 0x5C600, 0x5C712, 0x5C800, 0x610E6, 0x6181E, 0x6191F, 0x61A20, 0x61B00,
    0x64B1B, 0x64C1C, 0x64D1D, 0x64E1E, 0x64F1F, 0x65020, 0x65121, 0x65222, 0x653E6, 0x655DC, 0x657E6,
    0x65CDC, 0x65DE6, 0x65FDC, 0x66000, 0x67023, 0x67100, 0x6D6E6, 0x6DD00, 0x6DFE6, 0x6E3DC, 0x6E4E6,
    0x6E500, 0x6E7E6, 0x6E900, 0x6EADC, 0x6EBE6, 0x6EDDC, 0x6EE00, 0x71124, 0x71200, 0x730E6, 0x731DC,
    0x732E6, 0x734DC, 0x735E6, 0x737DC, 0x73AE6, 0x73BDC, 0x73DE6, 0x73EDC, 0x73FE6, 0x742DC, 0x743E6,
    0x744DC, 0x745E6, 0x746DC, 0x747E6, 0x748DC, 0x749E6, 0x74B00, 0x7EBE6, 0x7F2DC, 0x7F3E6, 0x7F400,
    0x816E6, 0x81A00, 0x81BE6, 0x82400, 0x825E6, 0x82800, 0x829E6, 0x82E00, 0x859DC, 0x85C00, 0x8D4E6,
    0x8E200, 0x8E3DC, 0x8E4E6, 0x8E6DC, 0x8E7E6, 0x8E9DC, 0x8EAE6, 0x8EDDC, 0x8F01B, 0x8F11C, 0x8F21D,
    0x8F3E6, 0x8F6DC, 0x8F7E6, 0x8F9DC, 0x8FBE6, 0x90000, 0x93C07, 0x93D00, 0x94D09, 0x94E00, 0x951E6,
    0x952DC, 0x953E6, 0x95500, 0x9BC07, 0x9BD00, 0x9CD09, 0x9CE00, 0xA3C07, 0xA3D00, 0xA4D09, 0xA4E00,
    0xABC07, 0xABD00, 0xACD09, 0xACE00, 0xB3C07, 0xB3D00, 0xB4D09, 0xB4E00, 0xBCD09, 0xBCE00, 0xC4D09,
    0xC4E00, 0xC5554, 0xC565B, 0xC5700, 0xCBC07, 0xCBD00, 0xCCD09, 0xCCE00, 0xD4D09, 0xD4E00, 0xDCA09,
    0xDCB00, 0xE3867, 0xE3A09, 0xE3B00, 0xE486B, 0xE4C00, 0xEB876, 0xEBA00, 0xEC87A, 0xECC00, 0xF18DC,
    0xF1A00, 0xF35DC, 0xF3600, 0xF37DC, 0xF3800, 0xF39D8, 0xF3A00, 0xF7181, 0xF7282, 0xF7300, 0xF7484,
    0xF7500, 0xF7A82, 0xF7E00, 0xF8082, 0xF8100, 0xF82E6, 0xF8409, 0xF8500, 0xF86E6, 0xF8800, 0xFC6DC,
    0xFC700, 0x103707, 0x103800, 0x103909, 0x103B00, 0x108DDC, 0x108E00, 0x135DE6, 0x136000, 0x171409,
    0x171500, 0x173409, 0x173500, 0x17D209, 0x17D300, 0x17DDE6, 0x17DE00, 0x18A9E4, 0x18AA00, 0x1939DE,
    0x193AE6, 0x193BDC, 0x193C00, 0x1A17E6, 0x1A18DC, 0x1A1900, 0x1A6009, 0x1A6100, 0x1A75E6, 0x1A7D00,
    0x1A7FDC, 0x1A8000, 0x1AB0E6, 0x1AB5DC, 0x1ABBE6, 0x1ABDDC, 0x1ABE00, 0x1B3407, 0x1B3500, 0x1B4409,
    0x1B4500, 0x1B6BE6, 0x1B6CDC, 0x1B6DE6, 0x1B7400, 0x1BAA09, 0x1BAC00, 0x1BE607, 0x1BE700, 0x1BF209,
    0x1BF400, 0x1C3707, 0x1C3800, 0x1CD0E6, 0x1CD300, 0x1CD401, 0x1CD5DC, 0x1CDAE6, 0x1CDCDC, 0x1CE0E6,
    0x1CE100, 0x1CE201, 0x1CE900, 0x1CEDDC, 0x1CEE00, 0x1CF4E6, 0x1CF500, 0x1CF8E6, 0x1CFA00, 0x1DC0E6,
    0x1DC2DC, 0x1DC3E6, 0x1DCADC, 0x1DCBE6, 0x1DCDEA, 0x1DCED6, 0x1DCFDC, 0x1DD0CA, 0x1DD1E6, 0x1DF600,
    0x1DFBE6, 0x1DFCE9, 0x1DFDDC, 0x1DFEE6, 0x1DFFDC, 0x1E0000, 0x20D0E6, 0x20D201, 0x20D4E6, 0x20D801,
    0x20DBE6, 0x20DD00, 0x20E1E6, 0x20E200, 0x20E501, 0x20E7E6, 0x20E8DC, 0x20E9E6, 0x20EA01, 0x20ECDC,
    0x20F0E6, 0x20F100, 0x2CEFE6, 0x2CF200, 0x2D7F09, 0x2D8000, 0x2DE0E6, 0x2E0000, 0x302ADA, 0x302BE4,
    0x302CE8, 0x302DDE, 0x302EE0, 0x303000, 0x309908, 0x309B00, 0xA66FE6, 0xA67000, 0xA674E6, 0xA67E00,
    0xA69EE6, 0xA6A000, 0xA6F0E6, 0xA6F200, 0xA80609, 0xA80700, 0xA8C409, 0xA8C500, 0xA8E0E6, 0xA8F200,
    0xA92BDC, 0xA92E00, 0xA95309, 0xA95400, 0xA9B307, 0xA9B400, 0xA9C009, 0xA9C100, 0xAAB0E6, 0xAAB100,
    0xAAB2E6, 0xAAB4DC, 0xAAB500, 0xAAB7E6, 0xAAB900, 0xAABEE6, 0xAAC000, 0xAAC1E6, 0xAAC200, 0xAAF609,
    0xAAF700, 0xABED09, 0xABEE00, 0xFB1E1A, 0xFB1F00, 0xFE20E6, 0xFE27DC, 0xFE2EE6, 0xFE3000, 0x101FDDC,
    0x101FE00, 0x102E0DC, 0x102E100, 0x10376E6, 0x1037B00, 0x10A0DDC, 0x10A0E00, 0x10A0FE6, 0x10A1000,
    0x10A38E6, 0x10A3901, 0x10A3ADC, 0x10A3B00, 0x10A3F09, 0x10A4000, 0x10AE5E6, 0x10AE6DC, 0x10AE700,
    0x1104609, 0x1104700, 0x1107F09, 0x1108000, 0x110B909, 0x110BA07, 0x110BB00, 0x11100E6, 0x1110300,
    0x1113309, 0x1113500, 0x1117307, 0x1117400, 0x111C009, 0x111C100, 0x111CA07, 0x111CB00, 0x1123509,
    0x1123607, 0x1123700, 0x112E907, 0x112EA09, 0x112EB00, 0x1133C07, 0x1133D00, 0x1134D09, 0x1134E00,
    0x11366E6, 0x1136D00, 0x11370E6, 0x1137500, 0x1144209, 0x1144300, 0x1144607, 0x1144700, 0x114C209,
    0x114C307, 0x114C400, 0x115BF09, 0x115C007, 0x115C100, 0x1163F09, 0x1164000, 0x116B609, 0x116B707,
    0x116B800, 0x1172B09, 0x1172C00, 0x11C3F09, 0x11C4000, 0x16AF001, 0x16AF500, 0x16B30E6, 0x16B3700,
    0x1BC9E01, 0x1BC9F00, 0x1D165D8, 0x1D16701, 0x1D16A00, 0x1D16DE2, 0x1D16ED8, 0x1D17300, 0x1D17BDC,
    0x1D18300, 0x1D185E6, 0x1D18ADC, 0x1D18C00, 0x1D1AAE6, 0x1D1AE00, 0x1D242E6, 0x1D24500, 0x1E000E6,
    0x1E00700, 0x1E008E6, 0x1E01900, 0x1E01BE6, 0x1E02200, 0x1E023E6, 0x1E02500, 0x1E026E6, 0x1E02B00,
    0x1E8D0DC, 0x1E8D700, 0x1E944E6, 0x1E94A07, 0x1E94B00,
};
static const uint32_t dintattn__nfd_cp[2060] = {
    0xC0, 0xC1, 0xC2, 0xC3, 0xC4, 0xC5, 0xC7, 0xC8, 0xC9, 0xCA, 0xCB, 0xCC, 0xCD, 0xCE, 0xCF, 0xD1, 0xD2,
    0xD3, 0xD4, 0xD5, 0xD6, 0xD9, 0xDA, 0xDB, 0xDC, 0xDD, 0xE0, 0xE1, 0xE2, 0xE3, 0xE4, 0xE5, 0xE7, 0xE8,
    0xE9, 0xEA, 0xEB, 0xEC, 0xED, 0xEE, 0xEF, 0xF1, 0xF2, 0xF3, 0xF4, 0xF5, 0xF6, 0xF9, 0xFA, 0xFB, 0xFC,
    0xFD, 0xFF, 0x100, 0x101, 0x102, 0x103, 0x104, 0x105, 0x106, 0x107, 0x108, 0x109, 0x10A, 0x10B, 0x10C,
    0x10D, 0x10E, 0x10F, 0x112, 0x113, 0x114, 0x115, 0x116, 0x117, 0x118, 0x119, 0x11A, 0x11B, 0x11C, 0x11D,
    0x11E, 0x11F, 0x120, 0x121, 0x122, 0x123, 0x124, 0x125, 0x128, 0x129, 0x12A, 0x12B, 0x12C, 0x12D, 0x12E,
    0x12F, 0x130, 0x134, 0x135, 0x136, 0x137, 0x139, 0x13A, 0x13B, 0x13C, 0x13D, 0x13E, 0x143, 0x144, 0x145,
    0x146, 0x147, 0x148, 0x14C, 0x14D, 0x14E, 0x14F, 0x150, 0x151, 0x154, 0x155, 0x156, 0x157, 0x158, 0x159,
    0x15A, 0x15B, 0x15C, 0x15D, 0x15E, 0x15F, 0x160, 0x161, 0x162, 0x163, 0x164, 0x165, 0x168, 0x169, 0x16A,
    0x16B, 0x16C, 0x16D, 0x16E, 0x16F, 0x170, 0x171, 0x172, 0x173, 0x174, 0x175, 0x176, 0x177, 0x178, 0x179,
    0x17A, 0x17B, 0x17C, 0x17D, 0x17E, 0x1A0, 0x1A1, 0x1AF, 0x1B0, 0x1CD, 0x1CE, 0x1CF, 0x1D0, 0x1D1, 0x1D2,
    0x1D3, 0x1D4, 0x1D5, 0x1D6, 0x1D7, 0x1D8, 0x1D9, 0x1DA, 0x1DB, 0x1DC, 0x1DE, 0x1DF, 0x1E0, 0x1E1, 0x1E2,
    0x1E3, 0x1E6, 0x1E7, 0x1E8, 0x1E9, 0x1EA, 0x1EB, 0x1EC, 0x1ED, 0x1EE, 0x1EF, 0x1F0, 0x1F4, 0x1F5, 0x1F8,
    0x1F9, 0x1FA, 0x1FB, 0x1FC, 0x1FD, 0x1FE, 0x1FF, 0x200, 0x201, 0x202, 0x203, 0x204, 0x205, 0x206, 0x207,
    0x208, 0x209, 0x20A, 0x20B, 0x20C, 0x20D, 0x20E, 0x20F, 0x210, 0x211, 0x212, 0x213, 0x214, 0x215, 0x216,
    0x217, 0x218, 0x219, 0x21A, 0x21B, 0x21E, 0x21F, 0x226, 0x227, 0x228, 0x229, 0x22A, 0x22B, 0x22C, 0x22D,
    0x22E, 0x22F, 0x230, 0x231, 0x232, 0x233, 0x340, 0x341, 0x343, 0x344, 0x374, 0x37E, 0x385, 0x386, 0x387,
    0x388, 0x389, 0x38A, 0x38C, 0x38E, 0x38F, 0x390, 0x3AA, 0x3AB, 0x3AC, 0x3AD, 0x3AE, 0x3AF, 0x3B0, 0x3CA,
    0x3CB, 0x3CC, 0x3CD, 0x3CE, 0x3D3, 0x3D4, 0x400, 0x401, 0x403, 0x407, 0x40C, 0x40D, 0x40E, 0x419, 0x439,
    0x450, 0x451, 0x453, 0x457, 0x45C, 0x45D, 0x45E, 0x476, 0x477, 0x4C1, 0x4C2, 0x4D0, 0x4D1, 0x4D2, 0x4D3,
    0x4D6, 0x4D7, 0x4DA, 0x4DB, 0x4DC, 0x4DD, 0x4DE, 0x4DF, 0x4E2, 0x4E3, 0x4E4, 0x4E5, 0x4E6, 0x4E7, 0x4EA,
    0x4EB, 0x4EC, 0x4ED, 0x4EE, 0x4EF, 0x4F0, 0x4F1, 0x4F2, 0x4F3, 0x4F4, 0x4F5, 0x4F8, 0x4F9, 0x622, 0x623,
    0x624, 0x625, 0x626, 0x6C0, 0x6C2, 0x6D3, 0x929, 0x931, 0x934, 0x958, 0x959, 0x95A, 0x95B, 0x95C, 0x95D,
    0x95E, 0x95F, 0x9CB, 0x9CC, 0x9DC, 0x9DD, 0x9DF, 0xA33, 0xA36, 0xA59, 0xA5A, 0xA5B, 0xA5E, 0xB48, 0xB4B,
    0xB4C, 0xB5C, 0xB5D, 0xB94, 0xBCA, 0xBCB, 0xBCC, 0xC48, 0xCC0, 0xCC7, 0xCC8, 0xCCA, 0xCCB, 0xD4A, 0xD4B,
    0xD4C, 0xDDA, 0xDDC, 0xDDD, 0xDDE, 0xF43, 0xF4D, 0xF52, 0xF57, 0xF5C, 0xF69, 0xF73, 0xF75, 0xF76, 0xF78,
    0xF81, 0xF93, 0xF9D, 0xFA2, 0xFA7, 0xFAC, 0xFB9, 0x1026, 0x1B06, 0x1B08, 0x1B0A, 0x1B0C, 0x1B0E, 0x1B12,
    0x1B3B, 0x1B3D, 0x1B40, 0x1B41, 0x1B43, 0x1E00, 0x1E01, 0x1E02, 0x1E03, 0x1E04, 0x1E05, 0x1E06, 0x1E07,
    0x1E08, 0x1E09, 0x1E0A, 0x1E0B, 0x1E0C, 0x1E0D, 0x1E0E, 0x1E0F, 0x1E10, 0x1E11, 0x1E12, 0x1E13, 0x1E14,
    0x1E15, 0x1E16, 0x1E17, 0x1E18, 0x1E19, 0x1E1A, 0x1E1B, 0x1E1C, 0x1E1D, 0x1E1E, 0x1E1F, 0x1E20, 0x1E21,
    0x1E22, 0x1E23, 0x1E24, 0x1E25, 0x1E26, 0x1E27, 0x1E28, 0x1E29, 0x1E2A, 0x1E2B, 0x1E2C, 0x1E2D, 0x1E2E,
    0x1E2F, 0x1E30, 0x1E31, 0x1E32, 0x1E33, 0x1E34, 0x1E35, 0x1E36, 0x1E37, 0x1E38, 0x1E39, 0x1E3A, 0x1E3B,
    0x1E3C, 0x1E3D, 0x1E3E, 0x1E3F, 0x1E40, 0x1E41, 0x1E42, 0x1E43, 0x1E44, 0x1E45, 0x1E46, 0x1E47, 0x1E48,
    0x1E49, 0x1E4A, 0x1E4B, 0x1E4C, 0x1E4D, 0x1E4E, 0x1E4F, 0x1E50, 0x1E51, 0x1E52, 0x1E53, 0x1E54, 0x1E55,
    0x1E56, 0x1E57, 0x1E58, 0x1E59, 0x1E5A, 0x1E5B, 0x1E5C, 0x1E5D, 0x1E5E, 0x1E5F, 0x1E60, 0x1E61, 0x1E62,
    0x1E63, 0x1E64, 0x1E65, 0x1E66, 0x1E67, 0x1E68, 0x1E69, 0x1E6A, 0x1E6B, 0x1E6C, 0x1E6D, 0x1E6E, 0x1E6F,
    0x1E70, 0x1E71, 0x1E72, 0x1E73, 0x1E74, 0x1E75, 0x1E76, 0x1E77, 0x1E78, 0x1E79, 0x1E7A, 0x1E7B, 0x1E7C,
    0x1E7D, 0x1E7E, 0x1E7F, 0x1E80, 0x1E81, 0x1E82, 0x1E83, 0x1E84, 0x1E85, 0x1E86, 0x1E87, 0x1E88, 0x1E89,
    0x1E8A, 0x1E8B, 0x1E8C, 0x1E8D, 0x1E8E, 0x1E8F, 0x1E90, 0x1E91, 0x1E92, 0x1E93, 0x1E94, 0x1E95, 0x1E96,
    0x1E97, 0x1E98, 0x1E99, 0x1E9B, 0x1EA0, 0x1EA1, 0x1EA2, 0x1EA3, 0x1EA4, 0x1EA5, 0x1EA6, 0x1EA7, 0x1EA8,
    0x1EA9, 0x1EAA, 0x1EAB, 0x1EAC, 0x1EAD, 0x1EAE, 0x1EAF, 0x1EB0, 0x1EB1, 0x1EB2, 0x1EB3, 0x1EB4, 0x1EB5,
    0x1EB6, 0x1EB7, 0x1EB8, 0x1EB9, 0x1EBA, 0x1EBB, 0x1EBC, 0x1EBD, 0x1EBE, 0x1EBF, 0x1EC0, 0x1EC1, 0x1EC2,
    0x1EC3, 0x1EC4, 0x1EC5, 0x1EC6, 0x1EC7, 0x1EC8, 0x1EC9, 0x1ECA, 0x1ECB, 0x1ECC, 0x1ECD, 0x1ECE, 0x1ECF,
    0x1ED0, 0x1ED1, 0x1ED2, 0x1ED3, 0x1ED4, 0x1ED5, 0x1ED6, 0x1ED7, 0x1ED8, 0x1ED9, 0x1EDA, 0x1EDB, 0x1EDC,
    0x1EDD, 0x1EDE, 0x1EDF, 0x1EE0, 0x1EE1, 0x1EE2, 0x1EE3, 0x1EE4, 0x1EE5, 0x1EE6, 0x1EE7, 0x1EE8, 0x1EE9,
    0x1EEA, 0x1EEB, 0x1EEC, 0x1EED, 0x1EEE, 0x1EEF, 0x1EF0, 0x1EF1, 0x1EF2, 0x1EF3, 0x1EF4, 0x1EF5, 0x1EF6,
    0x1EF7, 0x1EF8, 0x1EF9, 0x1F00, 0x1F01, 0x1F02, 0x1F03, 0x1F04, 0x1F05, 0x1F06, 0x1F07, 0x1F08, 0x1F09,
    0x1F0A, 0x1F0B, 0x1F0C, 0x1F0D, 0x1F0E, 0x1F0F, 0x1F10, 0x1F11, 0x1F12, 0x1F13, 0x1F14, 0x1F15, 0x1F18,
    0x1F19, 0x1F1A, 0x1F1B, 0x1F1C, 0x1F1D, 0x1F20, 0x1F21, 0x1F22, 0x1F23, 0x1F24, 0x1F25, 0x1F26, 0x1F27,
    0x1F28, 0x1F29, 0x1F2A, 0x1F2B, 0x1F2C, 0x1F2D, 0x1F2E, 0x1F2F, 0x1F30, 0x1F31, 0x1F32, 0x1F33, 0x1F34,
    0x1F35, 0x1F36, 0x1F37, 0x1F38, 0x1F39, 0x1F3A, 0x1F3B, 0x1F3C, 0x1F3D, 0x1F3E, 0x1F3F, 0x1F40, 0x1F41,
    0x1F42, 0x1F43, 0x1F44, 0x1F45, 0x1F48, 0x1F49, 0x1F4A, 0x1F4B, 0x1F4C, 0x1F4D, 0x1F50, 0x1F51, 0x1F52,
    0x1F53, 0x1F54, 0x1F55, 0x1F56, 0x1F57, 0x1F59, 0x1F5B, 0x1F5D, 0x1F5F, 0x1F60, 0x1F61, 0x1F62, 0x1F63,
    0x1F64, 0x1F65, 0x1F66, 0x1F67, 0x1F68, 0x1F69, 0x1F6A, 0x1F6B, 0x1F6C, 0x1F6D, 0x1F6E, 0x1F6F, 0x1F70,
    0x1F71, 0x1F72, 0x1F73, 0x1F74, 0x1F75, 0x1F76, 0x1F77, 0x1F78, 0x1F79, 0x1F7A, 0x1F7B, 0x1F7C, 0x1F7D,
    0x1F80, 0x1F81, 0x1F82, 0x1F83, 0x1F84, 0x1F85, 0x1F86, 0x1F87, 0x1F88, 0x1F89, 0x1F8A, 0x1F8B, 0x1F8C,
    0x1F8D, 0x1F8E, 0x1F8F, 0x1F90, 0x1F91, 0x1F92, 0x1F93, 0x1F94, 0x1F95, 0x1F96, 0x1F97, 0x1F98, 0x1F99,
    0x1F9A, 0x1F9B, 0x1F9C, 0x1F9D, 0x1F9E, 0x1F9F, 0x1FA0, 0x1FA1, 0x1FA2, 0x1FA3, 0x1FA4, 0x1FA5, 0x1FA6,
    0x1FA7, 0x1FA8, 0x1FA9, 0x1FAA, 0x1FAB, 0x1FAC, 0x1FAD, 0x1FAE, 0x1FAF, 0x1FB0, 0x1FB1, 0x1FB2, 0x1FB3,
    0x1FB4, 0x1FB6, 0x1FB7, 0x1FB8, 0x1FB9, 0x1FBA, 0x1FBB, 0x1FBC, 0x1FBE, 0x1FC1, 0x1FC2, 0x1FC3, 0x1FC4,
    0x1FC6, 0x1FC7, 0x1FC8, 0x1FC9, 0x1FCA, 0x1FCB, 0x1FCC, 0x1FCD, 0x1FCE, 0x1FCF, 0x1FD0, 0x1FD1, 0x1FD2,
    0x1FD3, 0x1FD6, 0x1FD7, 0x1FD8, 0x1FD9, 0x1FDA, 0x1FDB, 0x1FDD, 0x1FDE, 0x1FDF, 0x1FE0, 0x1FE1, 0x1FE2,
    0x1FE3, 0x1FE4, 0x1FE5, 0x1FE6, 0x1FE7, 0x1FE8, 0x1FE9, 0x1FEA, 0x1FEB, 0x1FEC, 0x1FED, 0x1FEE, 0x1FEF,
    0x1FF2, 0x1FF3, 0x1FF4, 0x1FF6, 0x1FF7, 0x1FF8, 0x1FF9, 0x1FFA, 0x1FFB, 0x1FFC, 0x1FFD, 0x2000, 0x2001,
    0x2126, 0x212A, 0x212B, 0x219A, 0x219B, 0x21AE, 0x21CD, 0x21CE, 0x21CF, 0x2204, 0x2209, 0x220C, 0x2224,
    0x2226, 0x2241, 0x2244, 0x2247, 0x2249, 0x2260, 0x2262, 0x226D, 0x226E, 0x226F, 0x2270, 0x2271, 0x2274,
    0x2275, 0x2278, 0x2279, 0x2280, 0x2281, 0x2284, 0x2285, 0x2288, 0x2289, 0x22AC, 0x22AD, 0x22AE, 0x22AF,
    0x22E0, 0x22E1, 0x22E2, 0x22E3, 0x22EA, 0x22EB, 0x22EC, 0x22ED, 0x2329, 0x232A, 0x2ADC, 0x304C, 0x304E,
    0x3050, 0x3052, 0x3054, 0x3056, 0x3058, 0x305A, 0x305C, 0x305E, 0x3060, 0x3062, 0x3065, 0x3067, 0x3069,
    0x3070, 0x3071, 0x3073, 0x3074, 0x3076, 0x3077, 0x3079, 0x307A, 0x307C, 0x307D, 0x3094, 0x309E, 0x30AC,
    0x30AE, 0x30B0, 0x30B2, 0x30B4, 0x30B6, 0x30B8, 0x30BA, 0x30BC, 0x30BE, 0x30C0, 0x30C2, 0x30C5, 0x30C7,
    0x30C9, 0x30D0, 0x30D1, 0x30D3, 0x30D4, 0x30D6, 0x30D7, 0x30D9, 0x30DA, 0x30DC, 0x30DD, 0x30F4, 0x30F7,
    0x30F8, 0x30F9, 0x30FA, 0x30FE, 0xF900, 0xF901, 0xF902, 0xF903, 0xF904, 0xF905, 0xF906, 0xF907, 0xF908,
    0xF909, 0xF90A, 0xF90B, 0xF90C, 0xF90D, 0xF90E, 0xF90F, 0xF910, 0xF911, 0xF912, 0xF913, 0xF914, 0xF915,
    0xF916, 0xF917, 0xF918, 0xF919, 0xF91A, 0xF91B, 0xF91C, 0xF91D, 0xF91E, 0xF91F, 0xF920, 0xF921, 0xF922,
    0xF923, 0xF924, 0xF925, 0xF926, 0xF927, 0xF928, 0xF929, 0xF92A, 0xF92B, 0xF92C, 0xF92D, 0xF92E, 0xF92F,
    0xF930, 0xF931, 0xF932, 0xF933, 0xF934, 0xF935, 0xF936, 0xF937, 0xF938, 0xF939, 0xF93A, 0xF93B, 0xF93C,
    0xF93D, 0xF93E, 0xF93F, 0xF940, 0xF941, 0xF942, 0xF943, 0xF944, 0xF945, 0xF946, 0xF947, 0xF948, 0xF949,
    0xF94A, 0xF94B, 0xF94C, 0xF94D, 0xF94E, 0xF94F, 0xF950, 0xF951, 0xF952, 0xF953, 0xF954, 0xF955, 0xF956,
    0xF957, 0xF958, 0xF959, 0xF95A, 0xF95B, 0xF95C, 0xF95D, 0xF95E, 0xF95F, 0xF960, 0xF961, 0xF962, 0xF963,
    0xF964, 0xF965, 0xF966, 0xF967, 0xF968, 0xF969, 0xF96A, 0xF96B, 0xF96C, 0xF96D, 0xF96E, 0xF96F, 0xF970,
    0xF971, 0xF972, 0xF973, 0xF974, 0xF975, 0xF976, 0xF977, 0xF978, 0xF979, 0xF97A, 0xF97B, 0xF97C, 0xF97D,
    0xF97E, 0xF97F, 0xF980, 0xF981, 0xF982, 0xF983, 0xF984, 0xF985, 0xF986, 0xF987, 0xF988, 0xF989, 0xF98A,
    0xF98B, 0xF98C, 0xF98D, 0xF98E, 0xF98F, 0xF990, 0xF991, 0xF992, 0xF993, 0xF994, 0xF995, 0xF996, 0xF997,
    0xF998, 0xF999, 0xF99A, 0xF99B, 0xF99C, 0xF99D, 0xF99E, 0xF99F, 0xF9A0, 0xF9A1, 0xF9A2, 0xF9A3, 0xF9A4,
    0xF9A5, 0xF9A6, 0xF9A7, 0xF9A8, 0xF9A9, 0xF9AA, 0xF9AB, 0xF9AC, 0xF9AD, 0xF9AE, 0xF9AF, 0xF9B0, 0xF9B1,
    0xF9B2, 0xF9B3, 0xF9B4, 0xF9B5, 0xF9B6, 0xF9B7, 0xF9B8, 0xF9B9, 0xF9BA, 0xF9BB, 0xF9BC, 0xF9BD, 0xF9BE,
    0xF9BF, 0xF9C0, 0xF9C1, 0xF9C2, 0xF9C3, 0xF9C4, 0xF9C5, 0xF9C6, 0xF9C7, 0xF9C8, 0xF9C9, 0xF9CA, 0xF9CB,
    0xF9CC, 0xF9CD, 0xF9CE, 0xF9CF, 0xF9D0, 0xF9D1, 0xF9D2, 0xF9D3, 0xF9D4, 0xF9D5, 0xF9D6, 0xF9D7, 0xF9D8,
    0xF9D9, 0xF9DA, 0xF9DB, 0xF9DC, 0xF9DD, 0xF9DE, 0xF9DF, 0xF9E0, 0xF9E1, 0xF9E2, 0xF9E3, 0xF9E4, 0xF9E5,
    0xF9E6, 0xF9E7, 0xF9E8, 0xF9E9, 0xF9EA, 0xF9EB, 0xF9EC, 0xF9ED, 0xF9EE, 0xF9EF, 0xF9F0, 0xF9F1, 0xF9F2,
    0xF9F3, 0xF9F4, 0xF9F5, 0xF9F6, 0xF9F7, 0xF9F8, 0xF9F9, 0xF9FA, 0xF9FB, 0xF9FC, 0xF9FD, 0xF9FE, 0xF9FF,
    0xFA00, 0xFA01, 0xFA02, 0xFA03, 0xFA04, 0xFA05, 0xFA06, 0xFA07, 0xFA08, 0xFA09, 0xFA0A, 0xFA0B, 0xFA0C,
    0xFA0D, 0xFA10, 0xFA12, 0xFA15, 0xFA16, 0xFA17, 0xFA18, 0xFA19, 0xFA1A, 0xFA1B, 0xFA1C, 0xFA1D, 0xFA1E,
    0xFA20, 0xFA22, 0xFA25, 0xFA26, 0xFA2A, 0xFA2B, 0xFA2C, 0xFA2D, 0xFA2E, 0xFA2F, 0xFA30, 0xFA31, 0xFA32,
    0xFA33, 0xFA34, 0xFA35, 0xFA36, 0xFA37, 0xFA38, 0xFA39, 0xFA3A, 0xFA3B, 0xFA3C, 0xFA3D, 0xFA3E, 0xFA3F,
    0xFA40, 0xFA41, 0xFA42, 0xFA43, 0xFA44, 0xFA45, 0xFA46, 0xFA47, 0xFA48, 0xFA49, 0xFA4A, 0xFA4B, 0xFA4C,
    0xFA4D, 0xFA4E, 0xFA4F, 0xFA50, 0xFA51, 0xFA52, 0xFA53, 0xFA54, 0xFA55, 0xFA56, 0xFA57, 0xFA58, 0xFA59,
    0xFA5A, 0xFA5B, 0xFA5C, 0xFA5D, 0xFA5E, 0xFA5F, 0xFA60, 0xFA61, 0xFA62, 0xFA63, 0xFA64, 0xFA65, 0xFA66,
    0xFA67, 0xFA68, 0xFA69, 0xFA6A, 0xFA6B, 0xFA6C, 0xFA6D, 0xFA70, 0xFA71, 0xFA72, 0xFA73, 0xFA74, 0xFA75,
    0xFA76, 0xFA77, 0xFA78, 0xFA79, 0xFA7A, 0xFA7B, 0xFA7C, 0xFA7D, 0xFA7E, 0xFA7F, 0xFA80, 0xFA81, 0xFA82,
    0xFA83, 0xFA84, 0xFA85, 0xFA86, 0xFA87, 0xFA88, 0xFA89, 0xFA8A, 0xFA8B, 0xFA8C, 0xFA8D, 0xFA8E, 0xFA8F,
    0xFA90, 0xFA91, 0xFA92, 0xFA93, 0xFA94, 0xFA95, 0xFA96, 0xFA97, 0xFA98, 0xFA99, 0xFA9A, 0xFA9B, 0xFA9C,
    0xFA9D, 0xFA9E, 0xFA9F, 0xFAA0, 0xFAA1, 0xFAA2, 0xFAA3, 0xFAA4, 0xFAA5, 0xFAA6, 0xFAA7, 0xFAA8, 0xFAA9,
    0xFAAA, 0xFAAB, 0xFAAC, 0xFAAD, 0xFAAE, 0xFAAF, 0xFAB0, 0xFAB1, 0xFAB2, 0xFAB3, 0xFAB4, 0xFAB5, 0xFAB6,
    0xFAB7, 0xFAB8, 0xFAB9, 0xFABA, 0xFABB, 0xFABC, 0xFABD, 0xFABE, 0xFABF, 0xFAC0, 0xFAC1, 0xFAC2, 0xFAC3,
    0xFAC4, 0xFAC5, 0xFAC6, 0xFAC7, 0xFAC8, 0xFAC9, 0xFACA, 0xFACB, 0xFACC, 0xFACD, 0xFACE, 0xFACF, 0xFAD0,
    0xFAD1, 0xFAD2, 0xFAD3, 0xFAD4, 0xFAD5, 0xFAD6, 0xFAD7, 0xFAD8, 0xFAD9, 0xFB1D, 0xFB1F, 0xFB2A, 0xFB2B,
    0xFB2C, 0xFB2D, 0xFB2E, 0xFB2F, 0xFB30, 0xFB31, 0xFB32, 0xFB33, 0xFB34, 0xFB35, 0xFB36, 0xFB38, 0xFB39,
    0xFB3A, 0xFB3B, 0xFB3C, 0xFB3E, 0xFB40, 0xFB41, 0xFB43, 0xFB44, 0xFB46, 0xFB47, 0xFB48, 0xFB49, 0xFB4A,
    0xFB4B, 0xFB4C, 0xFB4D, 0xFB4E, 0x1109A, 0x1109C, 0x110AB, 0x1112E, 0x1112F, 0x1134B, 0x1134C, 0x114BB,
    0x114BC, 0x114BE, 0x115BA, 0x115BB, 0x1D15E, 0x1D15F, 0x1D160, 0x1D161, 0x1D162, 0x1D163, 0x1D164,
    0x1D1BB, 0x1D1BC, 0x1D1BD, 0x1D1BE, 0x1D1BF, 0x1D1C0, 0x2F800, 0x2F801, 0x2F802, 0x2F803, 0x2F804,
    0x2F805, 0x2F806, 0x2F807, 0x2F808, 0x2F809, 0x2F80A, 0x2F80B, 0x2F80C, 0x2F80D, 0x2F80E, 0x2F80F,
    0x2F810, 0x2F811, 0x2F812, 0x2F813, 0x2F814, 0x2F815, 0x2F816, 0x2F817, 0x2F818, 0x2F819, 0x2F81A,
    0x2F81B, 0x2F81C, 0x2F81D, 0x2F81E, 0x2F81F, 0x2F820, 0x2F821, 0x2F822, 0x2F823, 0x2F824, 0x2F825,
    0x2F826, 0x2F827, 0x2F828, 0x2F829, 0x2F82A, 0x2F82B, 0x2F82C, 0x2F82D, 0x2F82E, 0x2F82F, 0x2F830,
    0x2F831, 0x2F832, 0x2F833, 0x2F834, 0x2F835, 0x2F836, 0x2F837, 0x2F838, 0x2F839, 0x2F83A, 0x2F83B,
    0x2F83C, 0x2F83D, 0x2F83E, 0x2F83F, 0x2F840, 0x2F841, 0x2F842, 0x2F843, 0x2F844, 0x2F845, 0x2F846,
    0x2F847, 0x2F848, 0x2F849, 0x2F84A, 0x2F84B, 0x2F84C, 0x2F84D, 0x2F84E, 0x2F84F, 0x2F850, 0x2F851,
    0x2F852, 0x2F853, 0x2F854, 0x2F855, 0x2F856, 0x2F857, 0x2F858, 0x2F859, 0x2F85A, 0x2F85B, 0x2F85C,
    0x2F85D, 0x2F85E, 0x2F85F, 0x2F860, 0x2F861, 0x2F862, 0x2F863, 0x2F864, 0x2F865, 0x2F866, 0x2F867,
    0x2F868, 0x2F869, 0x2F86A, 0x2F86B, 0x2F86C, 0x2F86D, 0x2F86E, 0x2F86F, 0x2F870, 0x2F871, 0x2F872,
    0x2F873, 0x2F874, 0x2F875, 0x2F876, 0x2F877, 0x2F878, 0x2F879, 0x2F87A, 0x2F87B, 0x2F87C, 0x2F87D,
    0x2F87E, 0x2F87F, 0x2F880, 0x2F881, 0x2F882, 0x2F883, 0x2F884, 0x2F885, 0x2F886, 0x2F887, 0x2F888,
    0x2F889, 0x2F88A, 0x2F88B, 0x2F88C, 0x2F88D, 0x2F88E, 0x2F88F, 0x2F890, 0x2F891, 0x2F892, 0x2F893,
    0x2F894, 0x2F895, 0x2F896, 0x2F897, 0x2F898, 0x2F899, 0x2F89A, 0x2F89B, 0x2F89C, 0x2F89D, 0x2F89E,
    0x2F89F, 0x2F8A0, 0x2F8A1, 0x2F8A2, 0x2F8A3, 0x2F8A4, 0x2F8A5, 0x2F8A6, 0x2F8A7, 0x2F8A8, 0x2F8A9,
    0x2F8AA, 0x2F8AB, 0x2F8AC, 0x2F8AD, 0x2F8AE, 0x2F8AF, 0x2F8B0, 0x2F8B1, 0x2F8B2, 0x2F8B3, 0x2F8B4,
    0x2F8B5, 0x2F8B6, 0x2F8B7, 0x2F8B8, 0x2F8B9, 0x2F8BA, 0x2F8BB, 0x2F8BC, 0x2F8BD, 0x2F8BE, 0x2F8BF,
    0x2F8C0, 0x2F8C1, 0x2F8C2, 0x2F8C3, 0x2F8C4, 0x2F8C5, 0x2F8C6, 0x2F8C7, 0x2F8C8, 0x2F8C9, 0x2F8CA,
    0x2F8CB, 0x2F8CC, 0x2F8CD, 0x2F8CE, 0x2F8CF, 0x2F8D0, 0x2F8D1, 0x2F8D2, 0x2F8D3, 0x2F8D4, 0x2F8D5,
    0x2F8D6, 0x2F8D7, 0x2F8D8, 0x2F8D9, 0x2F8DA, 0x2F8DB, 0x2F8DC, 0x2F8DD, 0x2F8DE, 0x2F8DF, 0x2F8E0,
    0x2F8E1, 0x2F8E2, 0x2F8E3, 0x2F8E4, 0x2F8E5, 0x2F8E6, 0x2F8E7, 0x2F8E8, 0x2F8E9, 0x2F8EA, 0x2F8EB,
    0x2F8EC, 0x2F8ED, 0x2F8EE, 0x2F8EF, 0x2F8F0, 0x2F8F1, 0x2F8F2, 0x2F8F3, 0x2F8F4, 0x2F8F5, 0x2F8F6,
    0x2F8F7, 0x2F8F8, 0x2F8F9, 0x2F8FA, 0x2F8FB, 0x2F8FC, 0x2F8FD, 0x2F8FE, 0x2F8FF, 0x2F900, 0x2F901,
    0x2F902, 0x2F903, 0x2F904, 0x2F905, 0x2F906, 0x2F907, 0x2F908, 0x2F909, 0x2F90A, 0x2F90B, 0x2F90C,
    0x2F90D, 0x2F90E, 0x2F90F, 0x2F910, 0x2F911, 0x2F912, 0x2F913, 0x2F914, 0x2F915, 0x2F916, 0x2F917,
    0x2F918, 0x2F919, 0x2F91A, 0x2F91B, 0x2F91C, 0x2F91D, 0x2F91E, 0x2F91F, 0x2F920, 0x2F921, 0x2F922,
    0x2F923, 0x2F924, 0x2F925, 0x2F926, 0x2F927, 0x2F928, 0x2F929, 0x2F92A, 0x2F92B, 0x2F92C, 0x2F92D,
    0x2F92E, 0x2F92F, 0x2F930, 0x2F931, 0x2F932, 0x2F933, 0x2F934, 0x2F935, 0x2F936, 0x2F937, 0x2F938,
    0x2F939, 0x2F93A, 0x2F93B, 0x2F93C, 0x2F93D, 0x2F93E, 0x2F93F, 0x2F940, 0x2F941, 0x2F942, 0x2F943,
    0x2F944, 0x2F945, 0x2F946, 0x2F947, 0x2F948, 0x2F949, 0x2F94A, 0x2F94B, 0x2F94C, 0x2F94D, 0x2F94E,
    0x2F94F, 0x2F950, 0x2F951, 0x2F952, 0x2F953, 0x2F954, 0x2F955, 0x2F956, 0x2F957, 0x2F958, 0x2F959,
    0x2F95A, 0x2F95B, 0x2F95C, 0x2F95D, 0x2F95E, 0x2F95F, 0x2F960, 0x2F961, 0x2F962, 0x2F963, 0x2F964,
    0x2F965, 0x2F966, 0x2F967, 0x2F968, 0x2F969, 0x2F96A, 0x2F96B, 0x2F96C, 0x2F96D, 0x2F96E, 0x2F96F,
    0x2F970, 0x2F971, 0x2F972, 0x2F973, 0x2F974, 0x2F975, 0x2F976, 0x2F977, 0x2F978, 0x2F979, 0x2F97A,
    0x2F97B, 0x2F97C, 0x2F97D, 0x2F97E, 0x2F97F, 0x2F980, 0x2F981, 0x2F982, 0x2F983, 0x2F984, 0x2F985,
    0x2F986, 0x2F987, 0x2F988, 0x2F989, 0x2F98A, 0x2F98B, 0x2F98C, 0x2F98D, 0x2F98E, 0x2F98F, 0x2F990,
    0x2F991, 0x2F992, 0x2F993, 0x2F994, 0x2F995, 0x2F996, 0x2F997, 0x2F998, 0x2F999, 0x2F99A, 0x2F99B,
    0x2F99C, 0x2F99D, 0x2F99E, 0x2F99F, 0x2F9A0, 0x2F9A1, 0x2F9A2, 0x2F9A3, 0x2F9A4, 0x2F9A5, 0x2F9A6,
    0x2F9A7, 0x2F9A8, 0x2F9A9, 0x2F9AA, 0x2F9AB, 0x2F9AC, 0x2F9AD, 0x2F9AE, 0x2F9AF, 0x2F9B0, 0x2F9B1,
    0x2F9B2, 0x2F9B3, 0x2F9B4, 0x2F9B5, 0x2F9B6, 0x2F9B7, 0x2F9B8, 0x2F9B9, 0x2F9BA, 0x2F9BB, 0x2F9BC,
    0x2F9BD, 0x2F9BE, 0x2F9BF, 0x2F9C0, 0x2F9C1, 0x2F9C2, 0x2F9C3, 0x2F9C4, 0x2F9C5, 0x2F9C6, 0x2F9C7,
    0x2F9C8, 0x2F9C9, 0x2F9CA, 0x2F9CB, 0x2F9CC, 0x2F9CD, 0x2F9CE, 0x2F9CF, 0x2F9D0, 0x2F9D1, 0x2F9D2,
    0x2F9D3, 0x2F9D4, 0x2F9D5, 0x2F9D6, 0x2F9D7, 0x2F9D8, 0x2F9D9, 0x2F9DA, 0x2F9DB, 0x2F9DC, 0x2F9DD,
    0x2F9DE, 0x2F9DF, 0x2F9E0, 0x2F9E1, 0x2F9E2, 0x2F9E3, 0x2F9E4, 0x2F9E5, 0x2F9E6, 0x2F9E7, 0x2F9E8,
    0x2F9E9, 0x2F9EA, 0x2F9EB, 0x2F9EC, 0x2F9ED, 0x2F9EE, 0x2F9EF, 0x2F9F0, 0x2F9F1, 0x2F9F2, 0x2F9F3,
    0x2F9F4, 0x2F9F5, 0x2F9F6, 0x2F9F7, 0x2F9F8, 0x2F9F9, 0x2F9FA, 0x2F9FB, 0x2F9FC, 0x2F9FD, 0x2F9FE,
    0x2F9FF, 0x2FA00, 0x2FA01, 0x2FA02, 0x2FA03, 0x2FA04, 0x2FA05, 0x2FA06, 0x2FA07, 0x2FA08, 0x2FA09,
    0x2FA0A, 0x2FA0B, 0x2FA0C, 0x2FA0D, 0x2FA0E, 0x2FA0F, 0x2FA10, 0x2FA11, 0x2FA12, 0x2FA13, 0x2FA14,
    0x2FA15, 0x2FA16, 0x2FA17, 0x2FA18, 0x2FA19, 0x2FA1A, 0x2FA1B, 0x2FA1C, 0x2FA1D,
};
static const uint16_t dintattn__nfd_off[2061] = {
    0, 2, 4, 6, 8, 10, 12, 14, 16, 18, 20, 22, 24, 26, 28, 30, 32, 34, 36, 38, 40, 42, 44, 46, 48, 50, 52, 54,
    56, 58, 60, 62, 64, 66, 68, 70, 72, 74, 76, 78, 80, 82, 84, 86, 88, 90, 92, 94, 96, 98, 100, 102, 104,
    106, 108, 110, 112, 114, 116, 118, 120, 122, 124, 126, 128, 130, 132, 134, 136, 138, 140, 142, 144, 146,
    148, 150, 152, 154, 156, 158, 160, 162, 164, 166, 168, 170, 172, 174, 176, 178, 180, 182, 184, 186, 188,
    190, 192, 194, 196, 198, 200, 202, 204, 206, 208, 210, 212, 214, 216, 218, 220, 222, 224, 226, 228, 230,
    232, 234, 236, 238, 240, 242, 244, 246, 248, 250, 252, 254, 256, 258, 260, 262, 264, 266, 268, 270, 272,
    274, 276, 278, 280, 282, 284, 286, 288, 290, 292, 294, 296, 298, 300, 302, 304, 306, 308, 310, 312, 314,
    316, 318, 320, 322, 324, 326, 328, 330, 332, 334, 336, 338, 340, 342, 344, 346, 349, 352, 355, 358, 361,
    364, 367, 370, 373, 376, 379, 382, 384, 386, 388, 390, 392, 394, 396, 398, 401, 404, 406, 408, 410, 412,
    414, 416, 418, 421, 424, 426, 428, 430, 432, 434, 436, 438, 440, 442, 444, 446, 448, 450, 452, 454, 456,
    458, 460, 462, 464, 466, 468, 470, 472, 474, 476, 478, 480, 482, 484, 486, 488, 490, 492, 494, 496, 498,
    500, 503, 506, 509, 512, 514, 516, 519, 522, 524, 526, 527, 528, 529, 531, 532, 533, 535, 537, 538, 540,
    542, 544, 546, 548, 550, 553, 555, 557, 559, 561, 563, 565, 568, 570, 572, 574, 576, 578, 580, 582, 584,
    586, 588, 590, 592, 594, 596, 598, 600, 602, 604, 606, 608, 610, 612, 614, 616, 618, 620, 622, 624, 626,
    628, 630, 632, 634, 636, 638, 640, 642, 644, 646, 648, 650, 652, 654, 656, 658, 660, 662, 664, 666, 668,
    670, 672, 674, 676, 678, 680, 682, 684, 686, 688, 690, 692, 694, 696, 698, 700, 702, 704, 706, 708, 710,
    712, 714, 716, 718, 720, 722, 724, 726, 728, 730, 732, 734, 736, 738, 740, 742, 744, 746, 748, 750, 752,
    754, 756, 758, 760, 762, 764, 766, 768, 770, 772, 774, 777, 779, 781, 783, 785, 787, 790, 792, 794, 796,
    798, 800, 802, 804, 806, 808, 810, 812, 814, 816, 818, 820, 822, 824, 826, 828, 830, 832, 834, 836, 838,
    840, 842, 844, 846, 848, 850, 852, 854, 856, 858, 860, 862, 864, 866, 869, 872, 874, 876, 878, 880, 882,
    884, 886, 888, 890, 892, 895, 898, 901, 904, 906, 908, 910, 912, 915, 918, 920, 922, 924, 926, 928, 930,
    932, 934, 936, 938, 940, 942, 944, 946, 948, 950, 953, 956, 958, 960, 962, 964, 966, 968, 970, 972, 975,
    978, 980, 982, 984, 986, 988, 990, 992, 994, 996, 998, 1000, 1002, 1004, 1006, 1008, 1010, 1012, 1014,
    1017, 1020, 1023, 1026, 1029, 1032, 1035, 1038, 1040, 1042, 1044, 1046, 1048, 1050, 1052, 1054, 1057,
    1060, 1062, 1064, 1066, 1068, 1070, 1072, 1075, 1078, 1081, 1084, 1087, 1090, 1092, 1094, 1096, 1098,
    1100, 1102, 1104, 1106, 1108, 1110, 1112, 1114, 1116, 1118, 1121, 1124, 1127, 1130, 1132, 1134, 1136,
    1138, 1140, 1142, 1144, 1146, 1148, 1150, 1152, 1154, 1156, 1158, 1160, 1162, 1164, 1166, 1168, 1170,
    1172, 1174, 1176, 1178, 1180, 1182, 1184, 1186, 1188, 1190, 1192, 1194, 1196, 1198, 1200, 1203, 1206,
    1209, 1212, 1215, 1218, 1221, 1224, 1227, 1230, 1233, 1236, 1239, 1242, 1245, 1248, 1251, 1254, 1257,
    1260, 1262, 1264, 1266, 1268, 1270, 1272, 1275, 1278, 1281, 1284, 1287, 1290, 1293, 1296, 1299, 1302,
    1304, 1306, 1308, 1310, 1312, 1314, 1316, 1318, 1321, 1324, 1327, 1330, 1333, 1336, 1339, 1342, 1345,
    1348, 1351, 1354, 1357, 1360, 1363, 1366, 1369, 1372, 1375, 1378, 1380, 1382, 1384, 1386, 1389, 1392,
    1395, 1398, 1401, 1404, 1407, 1410, 1413, 1416, 1418, 1420, 1422, 1424, 1426, 1428, 1430, 1432, 1434,
    1436, 1439, 1442, 1445, 1448, 1451, 1454, 1456, 1458, 1461, 1464, 1467, 1470, 1473, 1476, 1478, 1480,
    1483, 1486, 1489, 1492, 1494, 1496, 1499, 1502, 1505, 1508, 1510, 1512, 1515, 1518, 1521, 1524, 1527,
    1530, 1532, 1534, 1537, 1540, 1543, 1546, 1549, 1552, 1554, 1556, 1559, 1562, 1565, 1568, 1571, 1574,
    1576, 1578, 1581, 1584, 1587, 1590, 1593, 1596, 1598, 1600, 1603, 1606, 1609, 1612, 1614, 1616, 1619,
    1622, 1625, 1628, 1630, 1632, 1635, 1638, 1641, 1644, 1647, 1650, 1652, 1655, 1658, 1661, 1663, 1665,
    1668, 1671, 1674, 1677, 1680, 1683, 1685, 1687, 1690, 1693, 1696, 1699, 1702, 1705, 1707, 1709, 1711,
    1713, 1715, 1717, 1719, 1721, 1723, 1725, 1727, 1729, 1731, 1733, 1736, 1739, 1743, 1747, 1751, 1755,
    1759, 1763, 1766, 1769, 1773, 1777, 1781, 1785, 1789, 1793, 1796, 1799, 1803, 1807, 1811, 1815, 1819,
    1823, 1826, 1829, 1833, 1837, 1841, 1845, 1849, 1853, 1856, 1859, 1863, 1867, 1871, 1875, 1879, 1883,
    1886, 1889, 1893, 1897, 1901, 1905, 1909, 1913, 1915, 1917, 1920, 1922, 1925, 1927, 1930, 1932, 1934,
    1936, 1938, 1940, 1941, 1943, 1946, 1948, 1951, 1953, 1956, 1958, 1960, 1962, 1964, 1966, 1968, 1970,
    1972, 1974, 1976, 1979, 1982, 1984, 1987, 1989, 1991, 1993, 1995, 1997, 1999, 2001, 2003, 2005, 2008,
    2011, 2013, 2015, 2017, 2020, 2022, 2024, 2026, 2028, 2030, 2032, 2034, 2035, 2038, 2040, 2043, 2045,
    2048, 2050, 2052, 2054, 2056, 2058, 2059, 2060, 2061, 2062, 2063, 2065, 2067, 2069, 2071, 2073, 2075,
    2077, 2079, 2081, 2083, 2085, 2087, 2089, 2091, 2093, 2095, 2097, 2099, 2101, 2103, 2105, 2107, 2109,
    2111, 2113, 2115, 2117, 2119, 2121, 2123, 2125, 2127, 2129, 2131, 2133, 2135, 2137, 2139, 2141, 2143,
    2145, 2147, 2149, 2151, 2153, 2154, 2155, 2157, 2159, 2161, 2163, 2165, 2167, 2169, 2171, 2173, 2175,
    2177, 2179, 2181, 2183, 2185, 2187, 2189, 2191, 2193, 2195, 2197, 2199, 2201, 2203, 2205, 2207, 2209,
    2211, 2213, 2215, 2217, 2219, 2221, 2223, 2225, 2227, 2229, 2231, 2233, 2235, 2237, 2239, 2241, 2243,
    2245, 2247, 2249, 2251, 2253, 2255, 2257, 2259, 2261, 2263, 2265, 2267, 2269, 2271, 2273, 2274, 2275,
    2276, 2277, 2278, 2279, 2280, 2281, 2282, 2283, 2284, 2285, 2286, 2287, 2288, 2289, 2290, 2291, 2292,
    2293, 2294, 2295, 2296, 2297, 2298, 2299, 2300, 2301, 2302, 2303, 2304, 2305, 2306, 2307, 2308, 2309,
    2310, 2311, 2312, 2313, 2314, 2315, 2316, 2317, 2318, 2319, 2320, 2321, 2322, 2323, 2324, 2325, 2326,
    2327, 2328, 2329, 2330, 2331, 2332, 2333, 2334, 2335, 2336, 2337, 2338, 2339, 2340, 2341, 2342, 2343,
    2344, 2345, 2346, 2347, 2348, 2349, 2350, 2351, 2352, 2353, 2354, 2355, 2356, 2357, 2358, 2359, 2360,
    2361, 2362, 2363, 2364, 2365, 2366, 2367, 2368, 2369, 2370, 2371, 2372, 2373, 2374, 2375, 2376, 2377,
    2378, 2379, 2380, 2381, 2382, 2383, 2384, 2385, 2386, 2387, 2388, 2389, 2390, 2391, 2392, 2393, 2394,
    2395, 2396, 2397, 2398, 2399, 2400, 2401, 2402, 2403, 2404, 2405, 2406, 2407, 2408, 2409, 2410, 2411,
    2412, 2413, 2414, 2415, 2416, 2417, 2418, 2419, 2420, 2421, 2422, 2423, 2424, 2425, 2426, 2427, 2428,
    2429, 2430, 2431, 2432, 2433, 2434, 2435, 2436, 2437, 2438, 2439, 2440, 2441, 2442, 2443, 2444, 2445,
    2446, 2447, 2448, 2449, 2450, 2451, 2452, 2453, 2454, 2455, 2456, 2457, 2458, 2459, 2460, 2461, 2462,
    2463, 2464, 2465, 2466, 2467, 2468, 2469, 2470, 2471, 2472, 2473, 2474, 2475, 2476, 2477, 2478, 2479,
    2480, 2481, 2482, 2483, 2484, 2485, 2486, 2487, 2488, 2489, 2490, 2491, 2492, 2493, 2494, 2495, 2496,
    2497, 2498, 2499, 2500, 2501, 2502, 2503, 2504, 2505, 2506, 2507, 2508, 2509, 2510, 2511, 2512, 2513,
    2514, 2515, 2516, 2517, 2518, 2519, 2520, 2521, 2522, 2523, 2524, 2525, 2526, 2527, 2528, 2529, 2530,
    2531, 2532, 2533, 2534, 2535, 2536, 2537, 2538, 2539, 2540, 2541, 2542, 2543, 2544, 2545, 2546, 2547,
    2548, 2549, 2550, 2551, 2552, 2553, 2554, 2555, 2556, 2557, 2558, 2559, 2560, 2561, 2562, 2563, 2564,
    2565, 2566, 2567, 2568, 2569, 2570, 2571, 2572, 2573, 2574, 2575, 2576, 2577, 2578, 2579, 2580, 2581,
    2582, 2583, 2584, 2585, 2586, 2587, 2588, 2589, 2590, 2591, 2592, 2593, 2594, 2595, 2596, 2597, 2598,
    2599, 2600, 2601, 2602, 2603, 2604, 2605, 2606, 2607, 2608, 2609, 2610, 2611, 2612, 2613, 2614, 2615,
    2616, 2617, 2618, 2619, 2620, 2621, 2622, 2623, 2624, 2625, 2626, 2627, 2628, 2629, 2630, 2631, 2632,
    2633, 2634, 2635, 2636, 2637, 2638, 2639, 2640, 2641, 2642, 2643, 2644, 2645, 2646, 2647, 2648, 2649,
    2650, 2651, 2652, 2653, 2654, 2655, 2656, 2657, 2658, 2659, 2660, 2661, 2662, 2663, 2664, 2665, 2666,
    2667, 2668, 2669, 2670, 2671, 2672, 2673, 2674, 2675, 2676, 2677, 2678, 2679, 2680, 2681, 2682, 2683,
    2684, 2685, 2686, 2687, 2688, 2689, 2690, 2691, 2692, 2693, 2694, 2695, 2696, 2697, 2698, 2699, 2700,
    2701, 2702, 2703, 2704, 2705, 2706, 2707, 2708, 2709, 2710, 2711, 2712, 2713, 2714, 2715, 2716, 2717,
    2718, 2719, 2720, 2721, 2722, 2723, 2724, 2725, 2726, 2727, 2728, 2729, 2730, 2731, 2732, 2733, 2735,
    2737, 2739, 2741, 2744, 2747, 2749, 2751, 2753, 2755, 2757, 2759, 2761, 2763, 2765, 2767, 2769, 2771,
    2773, 2775, 2777, 2779, 2781, 2783, 2785, 2787, 2789, 2791, 2793, 2795, 2797, 2799, 2801, 2803, 2805,
    2807, 2809, 2811, 2813, 2815, 2817, 2819, 2821, 2823, 2825, 2827, 2829, 2831, 2834, 2837, 2840, 2843,
    2846, 2848, 2850, 2853, 2856, 2859, 2862, 2863, 2864, 2865, 2866, 2867, 2868, 2869, 2870, 2871, 2872,
    2873, 2874, 2875, 2876, 2877, 2878, 2879, 2880, 2881, 2882, 2883, 2884, 2885, 2886, 2887, 2888, 2889,
    2890, 2891, 2892, 2893, 2894, 2895, 2896, 2897, 2898, 2899, 2900, 2901, 2902, 2903, 2904, 2905, 2906,
    2907, 2908, 2909, 2910, 2911, 2912, 2913, 2914, 2915, 2916, 2917, 2918, 2919, 2920, 2921, 2922, 2923,
    2924, 2925, 2926, 2927, 2928, 2929, 2930, 2931, 2932, 2933, 2934, 2935, 2936, 2937, 2938, 2939, 2940,
    2941, 2942, 2943, 2944, 2945, 2946, 2947, 2948, 2949, 2950, 2951, 2952, 2953, 2954, 2955, 2956, 2957,
    2958, 2959, 2960, 2961, 2962, 2963, 2964, 2965, 2966, 2967, 2968, 2969, 2970, 2971, 2972, 2973, 2974,
    2975, 2976, 2977, 2978, 2979, 2980, 2981, 2982, 2983, 2984, 2985, 2986, 2987, 2988, 2989, 2990, 2991,
    2992, 2993, 2994, 2995, 2996, 2997, 2998, 2999, 3000, 3001, 3002, 3003, 3004, 3005, 3006, 3007, 3008,
    3009, 3010, 3011, 3012, 3013, 3014, 3015, 3016, 3017, 3018, 3019, 3020, 3021, 3022, 3023, 3024, 3025,
    3026, 3027, 3028, 3029, 3030, 3031, 3032, 3033, 3034, 3035, 3036, 3037, 3038, 3039, 3040, 3041, 3042,
    3043, 3044, 3045, 3046, 3047, 3048, 3049, 3050, 3051, 3052, 3053, 3054, 3055, 3056, 3057, 3058, 3059,
    3060, 3061, 3062, 3063, 3064, 3065, 3066, 3067, 3068, 3069, 3070, 3071, 3072, 3073, 3074, 3075, 3076,
    3077, 3078, 3079, 3080, 3081, 3082, 3083, 3084, 3085, 3086, 3087, 3088, 3089, 3090, 3091, 3092, 3093,
    3094, 3095, 3096, 3097, 3098, 3099, 3100, 3101, 3102, 3103, 3104, 3105, 3106, 3107, 3108, 3109, 3110,
    3111, 3112, 3113, 3114, 3115, 3116, 3117, 3118, 3119, 3120, 3121, 3122, 3123, 3124, 3125, 3126, 3127,
    3128, 3129, 3130, 3131, 3132, 3133, 3134, 3135, 3136, 3137, 3138, 3139, 3140, 3141, 3142, 3143, 3144,
    3145, 3146, 3147, 3148, 3149, 3150, 3151, 3152, 3153, 3154, 3155, 3156, 3157, 3158, 3159, 3160, 3161,
    3162, 3163, 3164, 3165, 3166, 3167, 3168, 3169, 3170, 3171, 3172, 3173, 3174, 3175, 3176, 3177, 3178,
    3179, 3180, 3181, 3182, 3183, 3184, 3185, 3186, 3187, 3188, 3189, 3190, 3191, 3192, 3193, 3194, 3195,
    3196, 3197, 3198, 3199, 3200, 3201, 3202, 3203, 3204, 3205, 3206, 3207, 3208, 3209, 3210, 3211, 3212,
    3213, 3214, 3215, 3216, 3217, 3218, 3219, 3220, 3221, 3222, 3223, 3224, 3225, 3226, 3227, 3228, 3229,
    3230, 3231, 3232, 3233, 3234, 3235, 3236, 3237, 3238, 3239, 3240, 3241, 3242, 3243, 3244, 3245, 3246,
    3247, 3248, 3249, 3250, 3251, 3252, 3253, 3254, 3255, 3256, 3257, 3258, 3259, 3260, 3261, 3262, 3263,
    3264, 3265, 3266, 3267, 3268, 3269, 3270, 3271, 3272, 3273, 3274, 3275, 3276, 3277, 3278, 3279, 3280,
    3281, 3282, 3283, 3284, 3285, 3286, 3287, 3288, 3289, 3290, 3291, 3292, 3293, 3294, 3295, 3296, 3297,
    3298, 3299, 3300, 3301, 3302, 3303, 3304, 3305, 3306, 3307, 3308, 3309, 3310, 3311, 3312, 3313, 3314,
    3315, 3316, 3317, 3318, 3319, 3320, 3321, 3322, 3323, 3324, 3325, 3326, 3327, 3328, 3329, 3330, 3331,
    3332, 3333, 3334, 3335, 3336, 3337, 3338, 3339, 3340, 3341, 3342, 3343, 3344, 3345, 3346, 3347, 3348,
    3349, 3350, 3351, 3352, 3353, 3354, 3355, 3356, 3357, 3358, 3359, 3360, 3361, 3362, 3363, 3364, 3365,
    3366, 3367, 3368, 3369, 3370, 3371, 3372, 3373, 3374, 3375, 3376, 3377, 3378, 3379, 3380, 3381, 3382,
    3383, 3384, 3385, 3386, 3387, 3388, 3389, 3390, 3391, 3392, 3393, 3394, 3395, 3396, 3397, 3398, 3399,
    3400, 3401, 3402, 3403, 3404,
};
static const uint32_t dintattn__nfd_data[3404] = {
    0x41, 0x300, 0x41, 0x301, 0x41, 0x302, 0x41, 0x303, 0x41, 0x308, 0x41, 0x30A, 0x43, 0x327, 0x45, 0x300,
    0x45, 0x301, 0x45, 0x302, 0x45, 0x308, 0x49, 0x300, 0x49, 0x301, 0x49, 0x302, 0x49, 0x308, 0x4E, 0x303,
    0x4F, 0x300, 0x4F, 0x301, 0x4F, 0x302, 0x4F, 0x303, 0x4F, 0x308, 0x55, 0x300, 0x55, 0x301, 0x55, 0x302,
    0x55, 0x308, 0x59, 0x301, 0x61, 0x300, 0x61, 0x301, 0x61, 0x302, 0x61, 0x303, 0x61, 0x308, 0x61, 0x30A,
    0x63, 0x327, 0x65, 0x300, 0x65, 0x301, 0x65, 0x302, 0x65, 0x308, 0x69, 0x300, 0x69, 0x301, 0x69, 0x302,
    0x69, 0x308, 0x6E, 0x303, 0x6F, 0x300, 0x6F, 0x301, 0x6F, 0x302, 0x6F, 0x303, 0x6F, 0x308, 0x75, 0x300,
    0x75, 0x301, 0x75, 0x302, 0x75, 0x308, 0x79, 0x301, 0x79, 0x308, 0x41, 0x304, 0x61, 0x304, 0x41, 0x306,
    0x61, 0x306, 0x41, 0x328, 0x61, 0x328, 0x43, 0x301, 0x63, 0x301, 0x43, 0x302, 0x63, 0x302, 0x43, 0x307,
    0x63, 0x307, 0x43, 0x30C, 0x63, 0x30C, 0x44, 0x30C, 0x64, 0x30C, 0x45, 0x304, 0x65, 0x304, 0x45, 0x306,
    0x65, 0x306, 0x45, 0x307, 0x65, 0x307, 0x45, 0x328, 0x65, 0x328, 0x45, 0x30C, 0x65, 0x30C, 0x47, 0x302,
    0x67, 0x302, 0x47, 0x306, 0x67, 0x306, 0x47, 0x307, 0x67, 0x307, 0x47, 0x327, 0x67, 0x327, 0x48, 0x302,
    0x68, 0x302, 0x49, 0x303, 0x69, 0x303, 0x49, 0x304, 0x69, 0x304, 0x49, 0x306, 0x69, 0x306, 0x49, 0x328,
    0x69, 0x328, 0x49, 0x307, 0x4A, 0x302, 0x6A, 0x302, 0x4B, 0x327, 0x6B, 0x327, 0x4C, 0x301, 0x6C, 0x301,
    0x4C, 0x327, 0x6C, 0x327, 0x4C, 0x30C, 0x6C, 0x30C, 0x4E, 0x301, 0x6E, 0x301, 0x4E, 0x327, 0x6E, 0x327,
    0x4E, 0x30C, 0x6E, 0x30C, 0x4F, 0x304, 0x6F, 0x304, 0x4F, 0x306, 0x6F, 0x306, 0x4F, 0x30B, 0x6F, 0x30B,
    0x52, 0x301, 0x72, 0x301, 0x52, 0x327, 0x72, 0x327, 0x52, 0x30C, 0x72, 0x30C, 0x53, 0x301, 0x73, 0x301,
    0x53, 0x302, 0x73, 0x302, 0x53, 0x327, 0x73, 0x327, 0x53, 0x30C, 0x73, 0x30C, 0x54, 0x327, 0x74, 0x327,
    0x54, 0x30C, 0x74, 0x30C, 0x55, 0x303, 0x75, 0x303, 0x55, 0x304, 0x75, 0x304, 0x55, 0x306, 0x75, 0x306,
    0x55, 0x30A, 0x75, 0x30A, 0x55, 0x30B, 0x75, 0x30B, 0x55, 0x328, 0x75, 0x328, 0x57, 0x302, 0x77, 0x302,
    0x59, 0x302, 0x79, 0x302, 0x59, 0x308, 0x5A, 0x301, 0x7A, 0x301, 0x5A, 0x307, 0x7A, 0x307, 0x5A, 0x30C,
    0x7A, 0x30C, 0x4F, 0x31B, 0x6F, 0x31B, 0x55, 0x31B, 0x75, 0x31B, 0x41, 0x30C, 0x61, 0x30C, 0x49, 0x30C,
    0x69, 0x30C, 0x4F, 0x30C, 0x6F, 0x30C, 0x55, 0x30C, 0x75, 0x30C, 0x55, 0x308, 0x304, 0x75, 0x308, 0x304,
    0x55, 0x308, 0x301, 0x75, 0x308, 0x301, 0x55, 0x308, 0x30C, 0x75, 0x308, 0x30C, 0x55, 0x308, 0x300, 0x75,
    0x308, 0x300, 0x41, 0x308, 0x304, 0x61, 0x308, 0x304, 0x41, 0x307, 0x304, 0x61, 0x307, 0x304, 0xC6, 0x304,
    0xE6, 0x304, 0x47, 0x30C, 0x67, 0x30C, 0x4B, 0x30C, 0x6B, 0x30C, 0x4F, 0x328, 0x6F, 0x328, 0x4F, 0x328,
    0x304, 0x6F, 0x328, 0x304, 0x1B7, 0x30C, 0x292, 0x30C, 0x6A, 0x30C, 0x47, 0x301, 0x67, 0x301, 0x4E, 0x300,
    0x6E, 0x300, 0x41, 0x30A, 0x301, 0x61, 0x30A, 0x301, 0xC6, 0x301, 0xE6, 0x301, 0xD8, 0x301, 0xF8, 0x301,
    0x41, 0x30F, 0x61, 0x30F, 0x41, 0x311, 0x61, 0x311, 0x45, 0x30F, 0x65, 0x30F, 0x45, 0x311, 0x65, 0x311,
    0x49, 0x30F, 0x69, 0x30F, 0x49, 0x311, 0x69, 0x311, 0x4F, 0x30F, 0x6F, 0x30F, 0x4F, 0x311, 0x6F, 0x311,
    0x52, 0x30F, 0x72, 0x30F, 0x52, 0x311, 0x72, 0x311, 0x55, 0x30F, 0x75, 0x30F, 0x55, 0x311, 0x75, 0x311,
    0x53, 0x326, 0x73, 0x326, 0x54, 0x326, 0x74, 0x326, 0x48, 0x30C, 0x68, 0x30C, 0x41, 0x307, 0x61, 0x307,
    0x45, 0x327, 0x65, 0x327, 0x4F, 0x308, 0x304, 0x6F, 0x308, 0x304, 0x4F, 0x303, 0x304, 0x6F, 0x303, 0x304,
    0x4F, 0x307, 0x6F, 0x307, 0x4F, 0x307, 0x304, 0x6F, 0x307, 0x304, 0x59, 0x304, 0x79, 0x304, 0x300, 0x301,
    0x313, 0x308, 0x301, 0x2B9, 0x3B, 0xA8, 0x301, 0x391, 0x301, 0xB7, 0x395, 0x301, 0x397, 0x301, 0x399,
    0x301, 0x39F, 0x301, 0x3A5, 0x301, 0x3A9, 0x301, 0x3B9, 0x308, 0x301, 0x399, 0x308, 0x3A5, 0x308, 0x3B1,
    0x301, 0x3B5, 0x301, 0x3B7, 0x301, 0x3B9, 0x301, 0x3C5, 0x308, 0x301, 0x3B9, 0x308, 0x3C5, 0x308, 0x3BF,
    0x301, 0x3C5, 0x301, 0x3C9, 0x301, 0x3D2, 0x301, 0x3D2, 0x308, 0x415, 0x300, 0x415, 0x308, 0x413, 0x301,
    0x406, 0x308, 0x41A, 0x301, 0x418, 0x300, 0x423, 0x306, 0x418, 0x306, 0x438, 0x306, 0x435, 0x300, 0x435,
    0x308, 0x433, 0x301, 0x456, 0x308, 0x43A, 0x301, 0x438, 0x300, 0x443, 0x306, 0x474, 0x30F, 0x475, 0x30F,
    0x416, 0x306, 0x436, 0x306, 0x410, 0x306, 0x430, 0x306, 0x410, 0x308, 0x430, 0x308, 0x415, 0x306, 0x435,
    0x306, 0x4D8, 0x308, 0x4D9, 0x308, 0x416, 0x308, 0x436, 0x308, 0x417, 0x308, 0x437, 0x308, 0x418, 0x304,
    0x438, 0x304, 0x418, 0x308, 0x438, 0x308, 0x41E, 0x308, 0x43E, 0x308, 0x4E8, 0x308, 0x4E9, 0x308, 0x42D,
    0x308, 0x44D, 0x308, 0x423, 0x304, 0x443, 0x304, 0x423, 0x308, 0x443, 0x308, 0x423, 0x30B, 0x443, 0x30B,
    0x427, 0x308, 0x447, 0x308, 0x42B, 0x308, 0x44B, 0x308, 0x627, 0x653, 0x627, 0x654, 0x648, 0x654, 0x627,
    0x655, 0x64A, 0x654, 0x6D5, 0x654, 0x6C1, 0x654, 0x6D2, 0x654, 0x928, 0x93C, 0x930, 0x93C, 0x933, 0x93C,
    0x915, 0x93C, 0x916, 0x93C, 0x917, 0x93C, 0x91C, 0x93C, 0x921, 0x93C, 0x922, 0x93C, 0x92B, 0x93C, 0x92F,
    0x93C, 0x9C7, 0x9BE, 0x9C7, 0x9D7, 0x9A1, 0x9BC, 0x9A2, 0x9BC, 0x9AF, 0x9BC, 0xA32, 0xA3C, 0xA38, 0xA3C,
    0xA16, 0xA3C, 0xA17, 0xA3C, 0xA1C, 0xA3C, 0xA2B, 0xA3C, 0xB47, 0xB56, 0xB47, 0xB3E, 0xB47, 0xB57, 0xB21,
    0xB3C, 0xB22, 0xB3C, 0xB92, 0xBD7, 0xBC6, 0xBBE, 0xBC7, 0xBBE, 0xBC6, 0xBD7, 0xC46, 0xC56, 0xCBF, 0xCD5,
    0xCC6, 0xCD5, 0xCC6, 0xCD6, 0xCC6, 0xCC2, 0xCC6, 0xCC2, 0xCD5, 0xD46, 0xD3E, 0xD47, 0xD3E, 0xD46, 0xD57,
    0xDD9, 0xDCA, 0xDD9, 0xDCF, 0xDD9, 0xDCF, 0xDCA, 0xDD9, 0xDDF, 0xF42, 0xFB7, 0xF4C, 0xFB7, 0xF51, 0xFB7,
    0xF56, 0xFB7, 0xF5B, 0xFB7, 0xF40, 0xFB5, 0xF71, 0xF72, 0xF71, 0xF74, 0xFB2, 0xF80, 0xFB3, 0xF80, 0xF71,
    0xF80, 0xF92, 0xFB7, 0xF9C, 0xFB7, 0xFA1, 0xFB7, 0xFA6, 0xFB7, 0xFAB, 0xFB7, 0xF90, 0xFB5, 0x1025, 0x102E,
    0x1B05, 0x1B35, 0x1B07, 0x1B35, 0x1B09, 0x1B35, 0x1B0B, 0x1B35, 0x1B0D, 0x1B35, 0x1B11, 0x1B35, 0x1B3A,
    0x1B35, 0x1B3C, 0x1B35, 0x1B3E, 0x1B35, 0x1B3F, 0x1B35, 0x1B42, 0x1B35, 0x41, 0x325, 0x61, 0x325, 0x42,
    0x307, 0x62, 0x307, 0x42, 0x323, 0x62, 0x323, 0x42, 0x331, 0x62, 0x331, 0x43, 0x327, 0x301, 0x63, 0x327,
    0x301, 0x44, 0x307, 0x64, 0x307, 0x44, 0x323, 0x64, 0x323, 0x44, 0x331, 0x64, 0x331, 0x44, 0x327, 0x64,
    0x327, 0x44, 0x32D, 0x64, 0x32D, 0x45, 0x304, 0x300, 0x65, 0x304, 0x300, 0x45, 0x304, 0x301, 0x65, 0x304,
    0x301, 0x45, 0x32D, 0x65, 0x32D, 0x45, 0x330, 0x65, 0x330, 0x45, 0x327, 0x306, 0x65, 0x327, 0x306, 0x46,
    0x307, 0x66, 0x307, 0x47, 0x304, 0x67, 0x304, 0x48, 0x307, 0x68, 0x307, 0x48, 0x323, 0x68, 0x323, 0x48,
    0x308, 0x68, 0x308, 0x48, 0x327, 0x68, 0x327, 0x48, 0x32E, 0x68, 0x32E, 0x49, 0x330, 0x69, 0x330, 0x49,
    0x308, 0x301, 0x69, 0x308, 0x301, 0x4B, 0x301, 0x6B, 0x301, 0x4B, 0x323, 0x6B, 0x323, 0x4B, 0x331, 0x6B,
    0x331, 0x4C, 0x323, 0x6C, 0x323, 0x4C, 0x323, 0x304, 0x6C, 0x323, 0x304, 0x4C, 0x331, 0x6C, 0x331, 0x4C,
    0x32D, 0x6C, 0x32D, 0x4D, 0x301, 0x6D, 0x301, 0x4D, 0x307, 0x6D, 0x307, 0x4D, 0x323, 0x6D, 0x323, 0x4E,
    0x307, 0x6E, 0x307, 0x4E, 0x323, 0x6E, 0x323, 0x4E, 0x331, 0x6E, 0x331, 0x4E, 0x32D, 0x6E, 0x32D, 0x4F,
    0x303, 0x301, 0x6F, 0x303, 0x301, 0x4F, 0x303, 0x308, 0x6F, 0x303, 0x308, 0x4F, 0x304, 0x300, 0x6F, 0x304,
    0x300, 0x4F, 0x304, 0x301, 0x6F, 0x304, 0x301, 0x50, 0x301, 0x70, 0x301, 0x50, 0x307, 0x70, 0x307, 0x52,
    0x307, 0x72, 0x307, 0x52, 0x323, 0x72, 0x323, 0x52, 0x323, 0x304, 0x72, 0x323, 0x304, 0x52, 0x331, 0x72,
    0x331, 0x53, 0x307, 0x73, 0x307, 0x53, 0x323, 0x73, 0x323, 0x53, 0x301, 0x307, 0x73, 0x301, 0x307, 0x53,
    0x30C, 0x307, 0x73, 0x30C, 0x307, 0x53, 0x323, 0x307, 0x73, 0x323, 0x307, 0x54, 0x307, 0x74, 0x307, 0x54,
    0x323, 0x74, 0x323, 0x54, 0x331, 0x74, 0x331, 0x54, 0x32D, 0x74, 0x32D, 0x55, 0x324, 0x75, 0x324, 0x55,
    0x330, 0x75, 0x330, 0x55, 0x32D, 0x75, 0x32D, 0x55, 0x303, 0x301, 0x75, 0x303, 0x301, 0x55, 0x304, 0x308,
    0x75, 0x304, 0x308, 0x56, 0x303, 0x76, 0x303, 0x56, 0x323, 0x76, 0x323, 0x57, 0x300, 0x77, 0x300, 0x57,
    0x301, 0x77, 0x301, 0x57, 0x308, 0x77, 0x308, 0x57, 0x307, 0x77, 0x307, 0x57, 0x323, 0x77, 0x323, 0x58,
    0x307, 0x78, 0x307, 0x58, 0x308, 0x78, 0x308, 0x59, 0x307, 0x79, 0x307, 0x5A, 0x302, 0x7A, 0x302, 0x5A,
    0x323, 0x7A, 0x323, 0x5A, 0x331, 0x7A, 0x331, 0x68, 0x331, 0x74, 0x308, 0x77, 0x30A, 0x79, 0x30A, 0x17F,
    0x307, 0x41, 0x323, 0x61, 0x323, 0x41, 0x309, 0x61, 0x309, 0x41, 0x302, 0x301, 0x61, 0x302, 0x301, 0x41,
    0x302, 0x300, 0x61, 0x302, 0x300, 0x41, 0x302, 0x309, 0x61, 0x302, 0x309, 0x41, 0x302, 0x303, 0x61, 0x302,
    0x303, 0x41, 0x323, 0x302, 0x61, 0x323, 0x302, 0x41, 0x306, 0x301, 0x61, 0x306, 0x301, 0x41, 0x306, 0x300,
    0x61, 0x306, 0x300, 0x41, 0x306, 0x309, 0x61, 0x306, 0x309, 0x41, 0x306, 0x303, 0x61, 0x306, 0x303, 0x41,
    0x323, 0x306, 0x61, 0x323, 0x306, 0x45, 0x323, 0x65, 0x323, 0x45, 0x309, 0x65, 0x309, 0x45, 0x303, 0x65,
    0x303, 0x45, 0x302, 0x301, 0x65, 0x302, 0x301, 0x45, 0x302, 0x300, 0x65, 0x302, 0x300, 0x45, 0x302, 0x309,
    0x65, 0x302, 0x309, 0x45, 0x302, 0x303, 0x65, 0x302, 0x303, 0x45, 0x323, 0x302, 0x65, 0x323, 0x302, 0x49,
    0x309, 0x69, 0x309, 0x49, 0x323, 0x69, 0x323, 0x4F, 0x323, 0x6F, 0x323, 0x4F, 0x309, 0x6F, 0x309, 0x4F,
    0x302, 0x301, 0x6F, 0x302, 0x301, 0x4F, 0x302, 0x300, 0x6F, 0x302, 0x300, 0x4F, 0x302, 0x309, 0x6F, 0x302,
    0x309, 0x4F, 0x302, 0x303, 0x6F, 0x302, 0x303, 0x4F, 0x323, 0x302, 0x6F, 0x323, 0x302, 0x4F, 0x31B, 0x301,
    0x6F, 0x31B, 0x301, 0x4F, 0x31B, 0x300, 0x6F, 0x31B, 0x300, 0x4F, 0x31B, 0x309, 0x6F, 0x31B, 0x309, 0x4F,
    0x31B, 0x303, 0x6F, 0x31B, 0x303, 0x4F, 0x31B, 0x323, 0x6F, 0x31B, 0x323, 0x55, 0x323, 0x75, 0x323, 0x55,
    0x309, 0x75, 0x309, 0x55, 0x31B, 0x301, 0x75, 0x31B, 0x301, 0x55, 0x31B, 0x300, 0x75, 0x31B, 0x300, 0x55,
    0x31B, 0x309, 0x75, 0x31B, 0x309, 0x55, 0x31B, 0x303, 0x75, 0x31B, 0x303, 0x55, 0x31B, 0x323, 0x75, 0x31B,
    0x323, 0x59, 0x300, 0x79, 0x300, 0x59, 0x323, 0x79, 0x323, 0x59, 0x309, 0x79, 0x309, 0x59, 0x303, 0x79,
    0x303, 0x3B1, 0x313, 0x3B1, 0x314, 0x3B1, 0x313, 0x300, 0x3B1, 0x314, 0x300, 0x3B1, 0x313, 0x301, 0x3B1,
    0x314, 0x301, 0x3B1, 0x313, 0x342, 0x3B1, 0x314, 0x342, 0x391, 0x313, 0x391, 0x314, 0x391, 0x313, 0x300,
    0x391, 0x314, 0x300, 0x391, 0x313, 0x301, 0x391, 0x314, 0x301, 0x391, 0x313, 0x342, 0x391, 0x314, 0x342,
    0x3B5, 0x313, 0x3B5, 0x314, 0x3B5, 0x313, 0x300, 0x3B5, 0x314, 0x300, 0x3B5, 0x313, 0x301, 0x3B5, 0x314,
    0x301, 0x395, 0x313, 0x395, 0x314, 0x395, 0x313, 0x300, 0x395, 0x314, 0x300, 0x395, 0x313, 0x301, 0x395,
    0x314, 0x301, 0x3B7, 0x313, 0x3B7, 0x314, 0x3B7, 0x313, 0x300, 0x3B7, 0x314, 0x300, 0x3B7, 0x313, 0x301,
    0x3B7, 0x314, 0x301, 0x3B7, 0x313, 0x342, 0x3B7, 0x314, 0x342, 0x397, 0x313, 0x397, 0x314, 0x397, 0x313,
    0x300, 0x397, 0x314, 0x300, 0x397, 0x313, 0x301, 0x397, 0x314, 0x301, 0x397, 0x313, 0x342, 0x397, 0x314,
    0x342, 0x3B9, 0x313, 0x3B9, 0x314, 0x3B9, 0x313, 0x300, 0x3B9, 0x314, 0x300, 0x3B9, 0x313, 0x301, 0x3B9,
    0x314, 0x301, 0x3B9, 0x313, 0x342, 0x3B9, 0x314, 0x342, 0x399, 0x313, 0x399, 0x314, 0x399, 0x313, 0x300,
    0x399, 0x314, 0x300, 0x399, 0x313, 0x301, 0x399, 0x314, 0x301, 0x399, 0x313, 0x342, 0x399, 0x314, 0x342,
    0x3BF, 0x313, 0x3BF, 0x314, 0x3BF, 0x313, 0x300, 0x3BF, 0x314, 0x300, 0x3BF, 0x313, 0x301, 0x3BF, 0x314,
    0x301, 0x39F, 0x313, 0x39F, 0x314, 0x39F, 0x313, 0x300, 0x39F, 0x314, 0x300, 0x39F, 0x313, 0x301, 0x39F,
    0x314, 0x301, 0x3C5, 0x313, 0x3C5, 0x314, 0x3C5, 0x313, 0x300, 0x3C5, 0x314, 0x300, 0x3C5, 0x313, 0x301,
    0x3C5, 0x314, 0x301, 0x3C5, 0x313, 0x342, 0x3C5, 0x314, 0x342, 0x3A5, 0x314, 0x3A5, 0x314, 0x300, 0x3A5,
    0x314, 0x301, 0x3A5, 0x314, 0x342, 0x3C9, 0x313, 0x3C9, 0x314, 0x3C9, 0x313, 0x300, 0x3C9, 0x314, 0x300,
    0x3C9, 0x313, 0x301, 0x3C9, 0x314, 0x301, 0x3C9, 0x313, 0x342, 0x3C9, 0x314, 0x342, 0x3A9, 0x313, 0x3A9,
    0x314, 0x3A9, 0x313, 0x300, 0x3A9, 0x314, 0x300, 0x3A9, 0x313, 0x301, 0x3A9, 0x314, 0x301, 0x3A9, 0x313,
    0x342, 0x3A9, 0x314, 0x342, 0x3B1, 0x300, 0x3B1, 0x301, 0x3B5, 0x300, 0x3B5, 0x301, 0x3B7, 0x300, 0x3B7,
    0x301, 0x3B9, 0x300, 0x3B9, 0x301, 0x3BF, 0x300, 0x3BF, 0x301, 0x3C5, 0x300, 0x3C5, 0x301, 0x3C9, 0x300,
    0x3C9, 0x301, 0x3B1, 0x313, 0x345, 0x3B1, 0x314, 0x345, 0x3B1, 0x313, 0x300, 0x345, 0x3B1, 0x314, 0x300,
    0x345, 0x3B1, 0x313, 0x301, 0x345, 0x3B1, 0x314, 0x301, 0x345, 0x3B1, 0x313, 0x342, 0x345, 0x3B1, 0x314,
    0x342, 0x345, 0x391, 0x313, 0x345, 0x391, 0x314, 0x345, 0x391, 0x313, 0x300, 0x345, 0x391, 0x314, 0x300,
    0x345, 0x391, 0x313, 0x301, 0x345, 0x391, 0x314, 0x301, 0x345, 0x391, 0x313, 0x342, 0x345, 0x391, 0x314,
    0x342, 0x345, 0x3B7, 0x313, 0x345, 0x3B7, 0x314, 0x345, 0x3B7, 0x313, 0x300, 0x345, 0x3B7, 0x314, 0x300,
    0x345, 0x3B7, 0x313, 0x301, 0x345, 0x3B7, 0x314, 0x301, 0x345, 0x3B7, 0x313, 0x342, 0x345, 0x3B7, 0x314,
    0x342, 0x345, 0x397, 0x313, 0x345, 0x397, 0x314, 0x345, 0x397, 0x313, 0x300, 0x345, 0x397, 0x314, 0x300,
    0x345, 0x397, 0x313, 0x301, 0x345, 0x397, 0x314, 0x301, 0x345, 0x397, 0x313, 0x342, 0x345, 0x397, 0x314,
    0x342, 0x345, 0x3C9, 0x313, 0x345, 0x3C9, 0x314, 0x345, 0x3C9, 0x313, 0x300, 0x345, 0x3C9, 0x314, 0x300,
    0x345, 0x3C9, 0x313, 0x301, 0x345, 0x3C9, 0x314, 0x301, 0x345, 0x3C9, 0x313, 0x342, 0x345, 0x3C9, 0x314,
    0x342, 0x345, 0x3A9, 0x313, 0x345, 0x3A9, 0x314, 0x345, 0x3A9, 0x313, 0x300, 0x345, 0x3A9, 0x314, 0x300,
    0x345, 0x3A9, 0x313, 0x301, 0x345, 0x3A9, 0x314, 0x301, 0x345, 0x3A9, 0x313, 0x342, 0x345, 0x3A9, 0x314,
    0x342, 0x345, 0x3B1, 0x306, 0x3B1, 0x304, 0x3B1, 0x300, 0x345, 0x3B1, 0x345, 0x3B1, 0x301, 0x345, 0x3B1,
    0x342, 0x3B1, 0x342, 0x345, 0x391, 0x306, 0x391, 0x304, 0x391, 0x300, 0x391, 0x301, 0x391, 0x345, 0x3B9,
    0xA8, 0x342, 0x3B7, 0x300, 0x345, 0x3B7, 0x345, 0x3B7, 0x301, 0x345, 0x3B7, 0x342, 0x3B7, 0x342, 0x345,
    0x395, 0x300, 0x395, 0x301, 0x397, 0x300, 0x397, 0x301, 0x397, 0x345, 0x1FBF, 0x300, 0x1FBF, 0x301,
    0x1FBF, 0x342, 0x3B9, 0x306, 0x3B9, 0x304, 0x3B9, 0x308, 0x300, 0x3B9, 0x308, 0x301, 0x3B9, 0x342, 0x3B9,
    0x308, 0x342, 0x399, 0x306, 0x399, 0x304, 0x399, 0x300, 0x399, 0x301, 0x1FFE, 0x300, 0x1FFE, 0x301,
    0x1FFE, 0x342, 0x3C5, 0x306, 0x3C5, 0x304, 0x3C5, 0x308, 0x300, 0x3C5, 0x308, 0x301, 0x3C1, 0x313, 0x3C1,
    0x314, 0x3C5, 0x342, 0x3C5, 0x308, 0x342, 0x3A5, 0x306, 0x3A5, 0x304, 0x3A5, 0x300, 0x3A5, 0x301, 0x3A1,
    0x314, 0xA8, 0x300, 0xA8, 0x301, 0x60, 0x3C9, 0x300, 0x345, 0x3C9, 0x345, 0x3C9, 0x301, 0x345, 0x3C9,
    0x342, 0x3C9, 0x342, 0x345, 0x39F, 0x300, 0x39F, 0x301, 0x3A9, 0x300, 0x3A9, 0x301, 0x3A9, 0x345, 0xB4,
    0x2002, 0x2003, 0x3A9, 0x4B, 0x41, 0x30A, 0x2190, 0x338, 0x2192, 0x338, 0x2194, 0x338, 0x21D0, 0x338,
    0x21D4, 0x338, 0x21D2, 0x338, 0x2203, 0x338, 0x2208, 0x338, 0x220B, 0x338, 0x2223, 0x338, 0x2225, 0x338,
    0x223C, 0x338, 0x2243, 0x338, 0x2245, 0x338, 0x2248, 0x338, 0x3D, 0x338, 0x2261, 0x338, 0x224D, 0x338,
    0x3C, 0x338, 0x3E, 0x338, 0x2264, 0x338, 0x2265, 0x338, 0x2272, 0x338, 0x2273, 0x338, 0x2276, 0x338,
    0x2277, 0x338, 0x227A, 0x338, 0x227B, 0x338, 0x2282, 0x338, 0x2283, 0x338, 0x2286, 0x338, 0x2287, 0x338,
    0x22A2, 0x338, 0x22A8, 0x338, 0x22A9, 0x338, 0x22AB, 0x338, 0x227C, 0x338, 0x227D, 0x338, 0x2291, 0x338,
    0x2292, 0x338, 0x22B2, 0x338, 0x22B3, 0x338, 0x22B4, 0x338, 0x22B5, 0x338, 0x3008, 0x3009, 0x2ADD, 0x338,
    0x304B, 0x3099, 0x304D, 0x3099, 0x304F, 0x3099, 0x3051, 0x3099, 0x3053, 0x3099, 0x3055, 0x3099, 0x3057,
    0x3099, 0x3059, 0x3099, 0x305B, 0x3099, 0x305D, 0x3099, 0x305F, 0x3099, 0x3061, 0x3099, 0x3064, 0x3099,
    0x3066, 0x3099, 0x3068, 0x3099, 0x306F, 0x3099, 0x306F, 0x309A, 0x3072, 0x3099, 0x3072, 0x309A, 0x3075,
    0x3099, 0x3075, 0x309A, 0x3078, 0x3099, 0x3078, 0x309A, 0x307B, 0x3099, 0x307B, 0x309A, 0x3046, 0x3099,
    0x309D, 0x3099, 0x30AB, 0x3099, 0x30AD, 0x3099, 0x30AF, 0x3099, 0x30B1, 0x3099, 0x30B3, 0x3099, 0x30B5,
    0x3099, 0x30B7, 0x3099, 0x30B9, 0x3099, 0x30BB, 0x3099, 0x30BD, 0x3099, 0x30BF, 0x3099, 0x30C1, 0x3099,
    0x30C4, 0x3099, 0x30C6, 0x3099, 0x30C8, 0x3099, 0x30CF, 0x3099, 0x30CF, 0x309A, 0x30D2, 0x3099, 0x30D2,
    0x309A, 0x30D5, 0x3099, 0x30D5, 0x309A, 0x30D8, 0x3099, 0x30D8, 0x309A, 0x30DB, 0x3099, 0x30DB, 0x309A,
    0x30A6, 0x3099, 0x30EF, 0x3099, 0x30F0, 0x3099, 0x30F1, 0x3099, 0x30F2, 0x3099, 0x30FD, 0x3099, 0x8C48,
    0x66F4, 0x8ECA, 0x8CC8, 0x6ED1, 0x4E32, 0x53E5, 0x9F9C, 0x9F9C, 0x5951, 0x91D1, 0x5587, 0x5948, 0x61F6,
    0x7669, 0x7F85, 0x863F, 0x87BA, 0x88F8, 0x908F, 0x6A02, 0x6D1B, 0x70D9, 0x73DE, 0x843D, 0x916A, 0x99F1,
    0x4E82, 0x5375, 0x6B04, 0x721B, 0x862D, 0x9E1E, 0x5D50, 0x6FEB, 0x85CD, 0x8964, 0x62C9, 0x81D8, 0x881F,
    0x5ECA, 0x6717, 0x6D6A, 0x72FC, 0x90CE, 0x4F86, 0x51B7, 0x52DE, 0x64C4, 0x6AD3, 0x7210, 0x76E7, 0x8001,
    0x8606, 0x865C, 0x8DEF, 0x9732, 0x9B6F, 0x9DFA, 0x788C, 0x797F, 0x7DA0, 0x83C9, 0x9304, 0x9E7F, 0x8AD6,
    0x58DF, 0x5F04, 0x7C60, 0x807E, 0x7262, 0x78CA, 0x8CC2, 0x96F7, 0x58D8, 0x5C62, 0x6A13, 0x6DDA, 0x6F0F,
    0x7D2F, 0x7E37, 0x964B, 0x52D2, 0x808B, 0x51DC, 0x51CC, 0x7A1C, 0x7DBE, 0x83F1, 0x9675, 0x8B80, 0x62CF,
    0x6A02, 0x8AFE, 0x4E39, 0x5BE7, 0x6012, 0x7387, 0x7570, 0x5317, 0x78FB, 0x4FBF, 0x5FA9, 0x4E0D, 0x6CCC,
    0x6578, 0x7D22, 0x53C3, 0x585E, 0x7701, 0x8449, 0x8AAA, 0x6BBA, 0x8FB0, 0x6C88, 0x62FE, 0x82E5, 0x63A0,
    0x7565, 0x4EAE, 0x5169, 0x51C9, 0x6881, 0x7CE7, 0x826F, 0x8AD2, 0x91CF, 0x52F5, 0x5442, 0x5973, 0x5EEC,
    0x65C5, 0x6FFE, 0x792A, 0x95AD, 0x9A6A, 0x9E97, 0x9ECE, 0x529B, 0x66C6, 0x6B77, 0x8F62, 0x5E74, 0x6190,
    0x6200, 0x649A, 0x6F23, 0x7149, 0x7489, 0x79CA, 0x7DF4, 0x806F, 0x8F26, 0x84EE, 0x9023, 0x934A, 0x5217,
    0x52A3, 0x54BD, 0x70C8, 0x88C2, 0x8AAA, 0x5EC9, 0x5FF5, 0x637B, 0x6BAE, 0x7C3E, 0x7375, 0x4EE4, 0x56F9,
    0x5BE7, 0x5DBA, 0x601C, 0x73B2, 0x7469, 0x7F9A, 0x8046, 0x9234, 0x96F6, 0x9748, 0x9818, 0x4F8B, 0x79AE,
    0x91B4, 0x96B8, 0x60E1, 0x4E86, 0x50DA, 0x5BEE, 0x5C3F, 0x6599, 0x6A02, 0x71CE, 0x7642, 0x84FC, 0x907C,
    0x9F8D, 0x6688, 0x962E, 0x5289, 0x677B, 0x67F3, 0x6D41, 0x6E9C, 0x7409, 0x7559, 0x786B, 0x7D10, 0x985E,
    0x516D, 0x622E, 0x9678, 0x502B, 0x5D19, 0x6DEA, 0x8F2A, 0x5F8B, 0x6144, 0x6817, 0x7387, 0x9686, 0x5229,
    0x540F, 0x5C65, 0x6613, 0x674E, 0x68A8, 0x6CE5, 0x7406, 0x75E2, 0x7F79, 0x88CF, 0x88E1, 0x91CC, 0x96E2,
    0x533F, 0x6EBA, 0x541D, 0x71D0, 0x7498, 0x85FA, 0x96A3, 0x9C57, 0x9E9F, 0x6797, 0x6DCB, 0x81E8, 0x7ACB,
    0x7B20, 0x7C92, 0x72C0, 0x7099, 0x8B58, 0x4EC0, 0x8336, 0x523A, 0x5207, 0x5EA6, 0x62D3, 0x7CD6, 0x5B85,
    0x6D1E, 0x66B4, 0x8F3B, 0x884C, 0x964D, 0x898B, 0x5ED3, 0x5140, 0x55C0, 0x585A, 0x6674, 0x51DE, 0x732A,
    0x76CA, 0x793C, 0x795E, 0x7965, 0x798F, 0x9756, 0x7CBE, 0x7FBD, 0x8612, 0x8AF8, 0x9038, 0x90FD, 0x98EF,
    0x98FC, 0x9928, 0x9DB4, 0x90DE, 0x96B7, 0x4FAE, 0x50E7, 0x514D, 0x52C9, 0x52E4, 0x5351, 0x559D, 0x5606,
    0x5668, 0x5840, 0x58A8, 0x5C64, 0x5C6E, 0x6094, 0x6168, 0x618E, 0x61F2, 0x654F, 0x65E2, 0x6691, 0x6885,
    0x6D77, 0x6E1A, 0x6F22, 0x716E, 0x722B, 0x7422, 0x7891, 0x793E, 0x7949, 0x7948, 0x7950, 0x7956, 0x795D,
    0x798D, 0x798E, 0x7A40, 0x7A81, 0x7BC0, 0x7DF4, 0x7E09, 0x7E41, 0x7F72, 0x8005, 0x81ED, 0x8279, 0x8279,
    0x8457, 0x8910, 0x8996, 0x8B01, 0x8B39, 0x8CD3, 0x8D08, 0x8FB6, 0x9038, 0x96E3, 0x97FF, 0x983B, 0x6075,
    0x242EE, 0x8218, 0x4E26, 0x51B5, 0x5168, 0x4F80, 0x5145, 0x5180, 0x52C7, 0x52FA, 0x559D, 0x5555, 0x5599,
    0x55E2, 0x585A, 0x58B3, 0x5944, 0x5954, 0x5A62, 0x5B28, 0x5ED2, 0x5ED9, 0x5F69, 0x5FAD, 0x60D8, 0x614E,
    0x6108, 0x618E, 0x6160, 0x61F2, 0x6234, 0x63C4, 0x641C, 0x6452, 0x6556, 0x6674, 0x6717, 0x671B, 0x6756,
    0x6B79, 0x6BBA, 0x6D41, 0x6EDB, 0x6ECB, 0x6F22, 0x701E, 0x716E, 0x77A7, 0x7235, 0x72AF, 0x732A, 0x7471,
    0x7506, 0x753B, 0x761D, 0x761F, 0x76CA, 0x76DB, 0x76F4, 0x774A, 0x7740, 0x78CC, 0x7AB1, 0x7BC0, 0x7C7B,
    0x7D5B, 0x7DF4, 0x7F3E, 0x8005, 0x8352, 0x83EF, 0x8779, 0x8941, 0x8986, 0x8996, 0x8ABF, 0x8AF8, 0x8ACB,
    0x8B01, 0x8AFE, 0x8AED, 0x8B39, 0x8B8A, 0x8D08, 0x8F38, 0x9072, 0x9199, 0x9276, 0x967C, 0x96E3, 0x9756,
    0x97DB, 0x97FF, 0x980B, 0x983B, 0x9B12, 0x9F9C, 0x2284A, 0x22844, 0x233D5, 0x3B9D, 0x4018, 0x4039,
    0x25249, 0x25CD0, 0x27ED3, 0x9F43, 0x9F8E, 0x5D9, 0x5B4, 0x5F2, 0x5B7, 0x5E9, 0x5C1, 0x5E9, 0x5C2, 0x5E9,
    0x5BC, 0x5C1, 0x5E9, 0x5BC, 0x5C2, 0x5D0, 0x5B7, 0x5D0, 0x5B8, 0x5D0, 0x5BC, 0x5D1, 0x5BC, 0x5D2, 0x5BC,
    0x5D3, 0x5BC, 0x5D4, 0x5BC, 0x5D5, 0x5BC, 0x5D6, 0x5BC, 0x5D8, 0x5BC, 0x5D9, 0x5BC, 0x5DA, 0x5BC, 0x5DB,
    0x5BC, 0x5DC, 0x5BC, 0x5DE, 0x5BC, 0x5E0, 0x5BC, 0x5E1, 0x5BC, 0x5E3, 0x5BC, 0x5E4, 0x5BC, 0x5E6, 0x5BC,
    0x5E7, 0x5BC, 0x5E8, 0x5BC, 0x5E9, 0x5BC, 0x5EA, 0x5BC, 0x5D5, 0x5B9, 0x5D1, 0x5BF, 0x5DB, 0x5BF, 0x5E4,
    0x5BF, 0x11099, 0x110BA, 0x1109B, 0x110BA, 0x110A5, 0x110BA, 0x11131, 0x11127, 0x11132, 0x11127, 0x11347,
    0x1133E, 0x11347, 0x11357, 0x114B9, 0x114BA, 0x114B9, 0x114B0, 0x114B9, 0x114BD, 0x115B8, 0x115AF,
    0x115B9, 0x115AF, 0x1D157, 0x1D165, 0x1D158, 0x1D165, 0x1D158, 0x1D165, 0x1D16E, 0x1D158, 0x1D165,
    0x1D16F, 0x1D158, 0x1D165, 0x1D170, 0x1D158, 0x1D165, 0x1D171, 0x1D158, 0x1D165, 0x1D172, 0x1D1B9,
    0x1D165, 0x1D1BA, 0x1D165, 0x1D1B9, 0x1D165, 0x1D16E, 0x1D1BA, 0x1D165, 0x1D16E, 0x1D1B9, 0x1D165,
    0x1D16F, 0x1D1BA, 0x1D165, 0x1D16F, 0x4E3D, 0x4E38, 0x4E41, 0x20122, 0x4F60, 0x4FAE, 0x4FBB, 0x5002,
    0x507A, 0x5099, 0x50E7, 0x50CF, 0x349E, 0x2063A, 0x514D, 0x5154, 0x5164, 0x5177, 0x2051C, 0x34B9, 0x5167,
    0x518D, 0x2054B, 0x5197, 0x51A4, 0x4ECC, 0x51AC, 0x51B5, 0x291DF, 0x51F5, 0x5203, 0x34DF, 0x523B, 0x5246,
    0x5272, 0x5277, 0x3515, 0x52C7, 0x52C9, 0x52E4, 0x52FA, 0x5305, 0x5306, 0x5317, 0x5349, 0x5351, 0x535A,
    0x5373, 0x537D, 0x537F, 0x537F, 0x537F, 0x20A2C, 0x7070, 0x53CA, 0x53DF, 0x20B63, 0x53EB, 0x53F1, 0x5406,
    0x549E, 0x5438, 0x5448, 0x5468, 0x54A2, 0x54F6, 0x5510, 0x5553, 0x5563, 0x5584, 0x5584, 0x5599, 0x55AB,
    0x55B3, 0x55C2, 0x5716, 0x5606, 0x5717, 0x5651, 0x5674, 0x5207, 0x58EE, 0x57CE, 0x57F4, 0x580D, 0x578B,
    0x5832, 0x5831, 0x58AC, 0x214E4, 0x58F2, 0x58F7, 0x5906, 0x591A, 0x5922, 0x5962, 0x216A8, 0x216EA, 0x59EC,
    0x5A1B, 0x5A27, 0x59D8, 0x5A66, 0x36EE, 0x36FC, 0x5B08, 0x5B3E, 0x5B3E, 0x219C8, 0x5BC3, 0x5BD8, 0x5BE7,
    0x5BF3, 0x21B18, 0x5BFF, 0x5C06, 0x5F53, 0x5C22, 0x3781, 0x5C60, 0x5C6E, 0x5CC0, 0x5C8D, 0x21DE4, 0x5D43,
    0x21DE6, 0x5D6E, 0x5D6B, 0x5D7C, 0x5DE1, 0x5DE2, 0x382F, 0x5DFD, 0x5E28, 0x5E3D, 0x5E69, 0x3862, 0x22183,
    0x387C, 0x5EB0, 0x5EB3, 0x5EB6, 0x5ECA, 0x2A392, 0x5EFE, 0x22331, 0x22331, 0x8201, 0x5F22, 0x5F22, 0x38C7,
    0x232B8, 0x261DA, 0x5F62, 0x5F6B, 0x38E3, 0x5F9A, 0x5FCD, 0x5FD7, 0x5FF9, 0x6081, 0x393A, 0x391C, 0x6094,
    0x226D4, 0x60C7, 0x6148, 0x614C, 0x614E, 0x614C, 0x617A, 0x618E, 0x61B2, 0x61A4, 0x61AF, 0x61DE, 0x61F2,
    0x61F6, 0x6210, 0x621B, 0x625D, 0x62B1, 0x62D4, 0x6350, 0x22B0C, 0x633D, 0x62FC, 0x6368, 0x6383, 0x63E4,
    0x22BF1, 0x6422, 0x63C5, 0x63A9, 0x3A2E, 0x6469, 0x647E, 0x649D, 0x6477, 0x3A6C, 0x654F, 0x656C, 0x2300A,
    0x65E3, 0x66F8, 0x6649, 0x3B19, 0x6691, 0x3B08, 0x3AE4, 0x5192, 0x5195, 0x6700, 0x669C, 0x80AD, 0x43D9,
    0x6717, 0x671B, 0x6721, 0x675E, 0x6753, 0x233C3, 0x3B49, 0x67FA, 0x6785, 0x6852, 0x6885, 0x2346D, 0x688E,
    0x681F, 0x6914, 0x3B9D, 0x6942, 0x69A3, 0x69EA, 0x6AA8, 0x236A3, 0x6ADB, 0x3C18, 0x6B21, 0x238A7, 0x6B54,
    0x3C4E, 0x6B72, 0x6B9F, 0x6BBA, 0x6BBB, 0x23A8D, 0x21D0B, 0x23AFA, 0x6C4E, 0x23CBC, 0x6CBF, 0x6CCD,
    0x6C67, 0x6D16, 0x6D3E, 0x6D77, 0x6D41, 0x6D69, 0x6D78, 0x6D85, 0x23D1E, 0x6D34, 0x6E2F, 0x6E6E, 0x3D33,
    0x6ECB, 0x6EC7, 0x23ED1, 0x6DF9, 0x6F6E, 0x23F5E, 0x23F8E, 0x6FC6, 0x7039, 0x701E, 0x701B, 0x3D96, 0x704A,
    0x707D, 0x7077, 0x70AD, 0x20525, 0x7145, 0x24263, 0x719C, 0x243AB, 0x7228, 0x7235, 0x7250, 0x24608,
    0x7280, 0x7295, 0x24735, 0x24814, 0x737A, 0x738B, 0x3EAC, 0x73A5, 0x3EB8, 0x3EB8, 0x7447, 0x745C, 0x7471,
    0x7485, 0x74CA, 0x3F1B, 0x7524, 0x24C36, 0x753E, 0x24C92, 0x7570, 0x2219F, 0x7610, 0x24FA1, 0x24FB8,
    0x25044, 0x3FFC, 0x4008, 0x76F4, 0x250F3, 0x250F2, 0x25119, 0x25133, 0x771E, 0x771F, 0x771F, 0x774A,
    0x4039, 0x778B, 0x4046, 0x4096, 0x2541D, 0x784E, 0x788C, 0x78CC, 0x40E3, 0x25626, 0x7956, 0x2569A,
    0x256C5, 0x798F, 0x79EB, 0x412F, 0x7A40, 0x7A4A, 0x7A4F, 0x2597C, 0x25AA7, 0x25AA7, 0x7AEE, 0x4202,
    0x25BAB, 0x7BC6, 0x7BC9, 0x4227, 0x25C80, 0x7CD2, 0x42A0, 0x7CE8, 0x7CE3, 0x7D00, 0x25F86, 0x7D63, 0x4301,
    0x7DC7, 0x7E02, 0x7E45, 0x4334, 0x26228, 0x26247, 0x4359, 0x262D9, 0x7F7A, 0x2633E, 0x7F95, 0x7FFA,
    0x8005, 0x264DA, 0x26523, 0x8060, 0x265A8, 0x8070, 0x2335F, 0x43D5, 0x80B2, 0x8103, 0x440B, 0x813E,
    0x5AB5, 0x267A7, 0x267B5, 0x23393, 0x2339C, 0x8201, 0x8204, 0x8F9E, 0x446B, 0x8291, 0x828B, 0x829D,
    0x52B3, 0x82B1, 0x82B3, 0x82BD, 0x82E6, 0x26B3C, 0x82E5, 0x831D, 0x8363, 0x83AD, 0x8323, 0x83BD, 0x83E7,
    0x8457, 0x8353, 0x83CA, 0x83CC, 0x83DC, 0x26C36, 0x26D6B, 0x26CD5, 0x452B, 0x84F1, 0x84F3, 0x8516,
    0x273CA, 0x8564, 0x26F2C, 0x455D, 0x4561, 0x26FB1, 0x270D2, 0x456B, 0x8650, 0x865C, 0x8667, 0x8669,
    0x86A9, 0x8688, 0x870E, 0x86E2, 0x8779, 0x8728, 0x876B, 0x8786, 0x45D7, 0x87E1, 0x8801, 0x45F9, 0x8860,
    0x8863, 0x27667, 0x88D7, 0x88DE, 0x4635, 0x88FA, 0x34BB, 0x278AE, 0x27966, 0x46BE, 0x46C7, 0x8AA0, 0x8AED,
    0x8B8A, 0x8C55, 0x27CA8, 0x8CAB, 0x8CC1, 0x8D1B, 0x8D77, 0x27F2F, 0x20804, 0x8DCB, 0x8DBC, 0x8DF0,
    0x208DE, 0x8ED4, 0x8F38, 0x285D2, 0x285ED, 0x9094, 0x90F1, 0x9111, 0x2872E, 0x911B, 0x9238, 0x92D7,
    0x92D8, 0x927C, 0x93F9, 0x9415, 0x28BFA, 0x958B, 0x4995, 0x95B7, 0x28D77, 0x49E6, 0x96C3, 0x5DB2, 0x9723,
    0x29145, 0x2921A, 0x4A6E, 0x4A76, 0x97E0, 0x2940A, 0x4AB2, 0x29496, 0x980B, 0x980B, 0x9829, 0x295B6,
    0x98E2, 0x4B33, 0x9929, 0x99A7, 0x99C2, 0x99FE, 0x4BCE, 0x29B30, 0x9B12, 0x9C40, 0x9CFD, 0x4CCE, 0x4CED,
    0x9D67, 0x2A0CE, 0x4CF8, 0x2A105, 0x2A20E, 0x2A291, 0x9EBB, 0x4D56, 0x9EF9, 0x9EFE, 0x9F05, 0x9F0F,
    0x9F16, 0x9F3B, 0x2A600,
};
static const uint32_t dintattn__nfc_pairs[2820] = {
    0x3C, 0x338, 0x226E, 0x3D, 0x338, 0x2260, 0x3E, 0x338, 0x226F, 0x41, 0x300, 0xC0, 0x41, 0x301, 0xC1,
    0x41, 0x302, 0xC2, 0x41, 0x303, 0xC3, 0x41, 0x304, 0x100, 0x41, 0x306, 0x102, 0x41, 0x307, 0x226,
    0x41, 0x308, 0xC4, 0x41, 0x309, 0x1EA2, 0x41, 0x30A, 0xC5, 0x41, 0x30C, 0x1CD, 0x41, 0x30F, 0x200,
    0x41, 0x311, 0x202, 0x41, 0x323, 0x1EA0, 0x41, 0x325, 0x1E00, 0x41, 0x328, 0x104, 0x42, 0x307, 0x1E02,
    0x42, 0x323, 0x1E04, 0x42, 0x331, 0x1E06, 0x43, 0x301, 0x106, 0x43, 0x302, 0x108, 0x43, 0x307, 0x10A,
    0x43, 0x30C, 0x10C, 0x43, 0x327, 0xC7, 0x44, 0x307, 0x1E0A, 0x44, 0x30C, 0x10E, 0x44, 0x323, 0x1E0C,
    0x44, 0x327, 0x1E10, 0x44, 0x32D, 0x1E12, 0x44, 0x331, 0x1E0E, 0x45, 0x300, 0xC8, 0x45, 0x301, 0xC9,
    0x45, 0x302, 0xCA, 0x45, 0x303, 0x1EBC, 0x45, 0x304, 0x112, 0x45, 0x306, 0x114, 0x45, 0x307, 0x116,
    0x45, 0x308, 0xCB, 0x45, 0x309, 0x1EBA, 0x45, 0x30C, 0x11A, 0x45, 0x30F, 0x204, 0x45, 0x311, 0x206,
    0x45, 0x323, 0x1EB8, 0x45, 0x327, 0x228, 0x45, 0x328, 0x118, 0x45, 0x32D, 0x1E18, 0x45, 0x330, 0x1E1A,
    0x46, 0x307, 0x1E1E, 0x47, 0x301, 0x1F4, 0x47, 0x302, 0x11C, 0x47, 0x304, 0x1E20, 0x47, 0x306, 0x11E,
    0x47, 0x307, 0x120, 0x47, 0x30C, 0x1E6, 0x47, 0x327, 0x122, 0x48, 0x302, 0x124, 0x48, 0x307, 0x1E22,
    0x48, 0x308, 0x1E26, 0x48, 0x30C, 0x21E, 0x48, 0x323, 0x1E24, 0x48, 0x327, 0x1E28, 0x48, 0x32E, 0x1E2A,
    0x49, 0x300, 0xCC, 0x49, 0x301, 0xCD, 0x49, 0x302, 0xCE, 0x49, 0x303, 0x128, 0x49, 0x304, 0x12A,
    0x49, 0x306, 0x12C, 0x49, 0x307, 0x130, 0x49, 0x308, 0xCF, 0x49, 0x309, 0x1EC8, 0x49, 0x30C, 0x1CF,
    0x49, 0x30F, 0x208, 0x49, 0x311, 0x20A, 0x49, 0x323, 0x1ECA, 0x49, 0x328, 0x12E, 0x49, 0x330, 0x1E2C,
    0x4A, 0x302, 0x134, 0x4B, 0x301, 0x1E30, 0x4B, 0x30C, 0x1E8, 0x4B, 0x323, 0x1E32, 0x4B, 0x327, 0x136,
    0x4B, 0x331, 0x1E34, 0x4C, 0x301, 0x139, 0x4C, 0x30C, 0x13D, 0x4C, 0x323, 0x1E36, 0x4C, 0x327, 0x13B,
    0x4C, 0x32D, 0x1E3C, 0x4C, 0x331, 0x1E3A, 0x4D, 0x301, 0x1E3E, 0x4D, 0x307, 0x1E40, 0x4D, 0x323, 0x1E42,
    0x4E, 0x300, 0x1F8, 0x4E, 0x301, 0x143, 0x4E, 0x303, 0xD1, 0x4E, 0x307, 0x1E44, 0x4E, 0x30C, 0x147,
    0x4E, 0x323, 0x1E46, 0x4E, 0x327, 0x145, 0x4E, 0x32D, 0x1E4A, 0x4E, 0x331, 0x1E48, 0x4F, 0x300, 0xD2,
    0x4F, 0x301, 0xD3, 0x4F, 0x302, 0xD4, 0x4F, 0x303, 0xD5, 0x4F, 0x304, 0x14C, 0x4F, 0x306, 0x14E,
    0x4F, 0x307, 0x22E, 0x4F, 0x308, 0xD6, 0x4F, 0x309, 0x1ECE, 0x4F, 0x30B, 0x150, 0x4F, 0x30C, 0x1D1,
    0x4F, 0x30F, 0x20C, 0x4F, 0x311, 0x20E, 0x4F, 0x31B, 0x1A0, 0x4F, 0x323, 0x1ECC, 0x4F, 0x328, 0x1EA,
    0x50, 0x301, 0x1E54, 0x50, 0x307, 0x1E56, 0x52, 0x301, 0x154, 0x52, 0x307, 0x1E58, 0x52, 0x30C, 0x158,
    0x52, 0x30F, 0x210, 0x52, 0x311, 0x212, 0x52, 0x323, 0x1E5A, 0x52, 0x327, 0x156, 0x52, 0x331, 0x1E5E,
    0x53, 0x301, 0x15A, 0x53, 0x302, 0x15C, 0x53, 0x307, 0x1E60, 0x53, 0x30C, 0x160, 0x53, 0x323, 0x1E62,
    0x53, 0x326, 0x218, 0x53, 0x327, 0x15E, 0x54, 0x307, 0x1E6A, 0x54, 0x30C, 0x164, 0x54, 0x323, 0x1E6C,
    0x54, 0x326, 0x21A, 0x54, 0x327, 0x162, 0x54, 0x32D, 0x1E70, 0x54, 0x331, 0x1E6E, 0x55, 0x300, 0xD9,
    0x55, 0x301, 0xDA, 0x55, 0x302, 0xDB, 0x55, 0x303, 0x168, 0x55, 0x304, 0x16A, 0x55, 0x306, 0x16C,
    0x55, 0x308, 0xDC, 0x55, 0x309, 0x1EE6, 0x55, 0x30A, 0x16E, 0x55, 0x30B, 0x170, 0x55, 0x30C, 0x1D3,
    0x55, 0x30F, 0x214, 0x55, 0x311, 0x216, 0x55, 0x31B, 0x1AF, 0x55, 0x323, 0x1EE4, 0x55, 0x324, 0x1E72,
    0x55, 0x328, 0x172, 0x55, 0x32D, 0x1E76, 0x55, 0x330, 0x1E74, 0x56, 0x303, 0x1E7C, 0x56, 0x323, 0x1E7E,
    0x57, 0x300, 0x1E80, 0x57, 0x301, 0x1E82, 0x57, 0x302, 0x174, 0x57, 0x307, 0x1E86, 0x57, 0x308, 0x1E84,
    0x57, 0x323, 0x1E88, 0x58, 0x307, 0x1E8A, 0x58, 0x308, 0x1E8C, 0x59, 0x300, 0x1EF2, 0x59, 0x301, 0xDD,
    0x59, 0x302, 0x176, 0x59, 0x303, 0x1EF8, 0x59, 0x304, 0x232, 0x59, 0x307, 0x1E8E, 0x59, 0x308, 0x178,
    0x59, 0x309, 0x1EF6, 0x59, 0x323, 0x1EF4, 0x5A, 0x301, 0x179, 0x5A, 0x302, 0x1E90, 0x5A, 0x307, 0x17B,
    0x5A, 0x30C, 0x17D, 0x5A, 0x323, 0x1E92, 0x5A, 0x331, 0x1E94, 0x61, 0x300, 0xE0, 0x61, 0x301, 0xE1,
    0x61, 0x302, 0xE2, 0x61, 0x303, 0xE3, 0x61, 0x304, 0x101, 0x61, 0x306, 0x103, 0x61, 0x307, 0x227,
    0x61, 0x308, 0xE4, 0x61, 0x309, 0x1EA3, 0x61, 0x30A, 0xE5, 0x61, 0x30C, 0x1CE, 0x61, 0x30F, 0x201,
    0x61, 0x311, 0x203, 0x61, 0x323, 0x1EA1, 0x61, 0x325, 0x1E01, 0x61, 0x328, 0x105, 0x62, 0x307, 0x1E03,
    0x62, 0x323, 0x1E05, 0x62, 0x331, 0x1E07, 0x63, 0x301, 0x107, 0x63, 0x302, 0x109, 0x63, 0x307, 0x10B,
    0x63, 0x30C, 0x10D, 0x63, 0x327, 0xE7, 0x64, 0x307, 0x1E0B, 0x64, 0x30C, 0x10F, 0x64, 0x323, 0x1E0D,
    0x64, 0x327, 0x1E11, 0x64, 0x32D, 0x1E13, 0x64, 0x331, 0x1E0F, 0x65, 0x300, 0xE8, 0x65, 0x301, 0xE9,
    0x65, 0x302, 0xEA, 0x65, 0x303, 0x1EBD, 0x65, 0x304, 0x113, 0x65, 0x306, 0x115, 0x65, 0x307, 0x117,
    0x65, 0x308, 0xEB, 0x65, 0x309, 0x1EBB, 0x65, 0x30C, 0x11B, 0x65, 0x30F, 0x205, 0x65, 0x311, 0x207,
    0x65, 0x323, 0x1EB9, 0x65, 0x327, 0x229, 0x65, 0x328, 0x119, 0x65, 0x32D, 0x1E19, 0x65, 0x330, 0x1E1B,
    0x66, 0x307, 0x1E1F, 0x67, 0x301, 0x1F5, 0x67, 0x302, 0x11D, 0x67, 0x304, 0x1E21, 0x67, 0x306, 0x11F,
    0x67, 0x307, 0x121, 0x67, 0x30C, 0x1E7, 0x67, 0x327, 0x123, 0x68, 0x302, 0x125, 0x68, 0x307, 0x1E23,
    0x68, 0x308, 0x1E27, 0x68, 0x30C, 0x21F, 0x68, 0x323, 0x1E25, 0x68, 0x327, 0x1E29, 0x68, 0x32E, 0x1E2B,
    0x68, 0x331, 0x1E96, 0x69, 0x300, 0xEC, 0x69, 0x301, 0xED, 0x69, 0x302, 0xEE, 0x69, 0x303, 0x129,
    0x69, 0x304, 0x12B, 0x69, 0x306, 0x12D, 0x69, 0x308, 0xEF, 0x69, 0x309, 0x1EC9, 0x69, 0x30C, 0x1D0,
    0x69, 0x30F, 0x209, 0x69, 0x311, 0x20B, 0x69, 0x323, 0x1ECB, 0x69, 0x328, 0x12F, 0x69, 0x330, 0x1E2D,
    0x6A, 0x302, 0x135, 0x6A, 0x30C, 0x1F0, 0x6B, 0x301, 0x1E31, 0x6B, 0x30C, 0x1E9, 0x6B, 0x323, 0x1E33,
    0x6B, 0x327, 0x137, 0x6B, 0x331, 0x1E35, 0x6C, 0x301, 0x13A, 0x6C, 0x30C, 0x13E, 0x6C, 0x323, 0x1E37,
    0x6C, 0x327, 0x13C, 0x6C, 0x32D, 0x1E3D, 0x6C, 0x331, 0x1E3B, 0x6D, 0x301, 0x1E3F, 0x6D, 0x307, 0x1E41,
    0x6D, 0x323, 0x1E43, 0x6E, 0x300, 0x1F9, 0x6E, 0x301, 0x144, 0x6E, 0x303, 0xF1, 0x6E, 0x307, 0x1E45,
    0x6E, 0x30C, 0x148, 0x6E, 0x323, 0x1E47, 0x6E, 0x327, 0x146, 0x6E, 0x32D, 0x1E4B, 0x6E, 0x331, 0x1E49,
    0x6F, 0x300, 0xF2, 0x6F, 0x301, 0xF3, 0x6F, 0x302, 0xF4, 0x6F, 0x303, 0xF5, 0x6F, 0x304, 0x14D,
    0x6F, 0x306, 0x14F, 0x6F, 0x307, 0x22F, 0x6F, 0x308, 0xF6, 0x6F, 0x309, 0x1ECF, 0x6F, 0x30B, 0x151,
    0x6F, 0x30C, 0x1D2, 0x6F, 0x30F, 0x20D, 0x6F, 0x311, 0x20F, 0x6F, 0x31B, 0x1A1, 0x6F, 0x323, 0x1ECD,
    0x6F, 0x328, 0x1EB, 0x70, 0x301, 0x1E55, 0x70, 0x307, 0x1E57, 0x72, 0x301, 0x155, 0x72, 0x307, 0x1E59,
    0x72, 0x30C, 0x159, 0x72, 0x30F, 0x211, 0x72, 0x311, 0x213, 0x72, 0x323, 0x1E5B, 0x72, 0x327, 0x157,
    0x72, 0x331, 0x1E5F, 0x73, 0x301, 0x15B, 0x73, 0x302, 0x15D, 0x73, 0x307, 0x1E61, 0x73, 0x30C, 0x161,
    0x73, 0x323, 0x1E63, 0x73, 0x326, 0x219, 0x73, 0x327, 0x15F, 0x74, 0x307, 0x1E6B, 0x74, 0x308, 0x1E97,
    0x74, 0x30C, 0x165, 0x74, 0x323, 0x1E6D, 0x74, 0x326, 0x21B, 0x74, 0x327, 0x163, 0x74, 0x32D, 0x1E71,
    0x74, 0x331, 0x1E6F, 0x75, 0x300, 0xF9, 0x75, 0x301, 0xFA, 0x75, 0x302, 0xFB, 0x75, 0x303, 0x169,
    0x75, 0x304, 0x16B, 0x75, 0x306, 0x16D, 0x75, 0x308, 0xFC, 0x75, 0x309, 0x1EE7, 0x75, 0x30A, 0x16F,
    0x75, 0x30B, 0x171, 0x75, 0x30C, 0x1D4, 0x75, 0x30F, 0x215, 0x75, 0x311, 0x217, 0x75, 0x31B, 0x1B0,
    0x75, 0x323, 0x1EE5, 0x75, 0x324, 0x1E73, 0x75, 0x328, 0x173, 0x75, 0x32D, 0x1E77, 0x75, 0x330, 0x1E75,
    0x76, 0x303, 0x1E7D, 0x76, 0x323, 0x1E7F, 0x77, 0x300, 0x1E81, 0x77, 0x301, 0x1E83, 0x77, 0x302, 0x175,
    0x77, 0x307, 0x1E87, 0x77, 0x308, 0x1E85, 0x77, 0x30A, 0x1E98, 0x77, 0x323, 0x1E89, 0x78, 0x307, 0x1E8B,
    0x78, 0x308, 0x1E8D, 0x79, 0x300, 0x1EF3, 0x79, 0x301, 0xFD, 0x79, 0x302, 0x177, 0x79, 0x303, 0x1EF9,
    0x79, 0x304, 0x233, 0x79, 0x307, 0x1E8F, 0x79, 0x308, 0xFF, 0x79, 0x309, 0x1EF7, 0x79, 0x30A, 0x1E99,
    0x79, 0x323, 0x1EF5, 0x7A, 0x301, 0x17A, 0x7A, 0x302, 0x1E91, 0x7A, 0x307, 0x17C, 0x7A, 0x30C, 0x17E,
    0x7A, 0x323, 0x1E93, 0x7A, 0x331, 0x1E95, 0xA8, 0x300, 0x1FED, 0xA8, 0x301, 0x385, 0xA8, 0x342, 0x1FC1,
    0xC2, 0x300, 0x1EA6, 0xC2, 0x301, 0x1EA4, 0xC2, 0x303, 0x1EAA, 0xC2, 0x309, 0x1EA8, 0xC4, 0x304, 0x1DE,
    0xC5, 0x301, 0x1FA, 0xC6, 0x301, 0x1FC, 0xC6, 0x304, 0x1E2, 0xC7, 0x301, 0x1E08, 0xCA, 0x300, 0x1EC0,
    0xCA, 0x301, 0x1EBE, 0xCA, 0x303, 0x1EC4, 0xCA, 0x309, 0x1EC2, 0xCF, 0x301, 0x1E2E, 0xD4, 0x300, 0x1ED2,
    0xD4, 0x301, 0x1ED0, 0xD4, 0x303, 0x1ED6, 0xD4, 0x309, 0x1ED4, 0xD5, 0x301, 0x1E4C, 0xD5, 0x304, 0x22C,
    0xD5, 0x308, 0x1E4E, 0xD6, 0x304, 0x22A, 0xD8, 0x301, 0x1FE, 0xDC, 0x300, 0x1DB, 0xDC, 0x301, 0x1D7,
    0xDC, 0x304, 0x1D5, 0xDC, 0x30C, 0x1D9, 0xE2, 0x300, 0x1EA7, 0xE2, 0x301, 0x1EA5, 0xE2, 0x303, 0x1EAB,
    0xE2, 0x309, 0x1EA9, 0xE4, 0x304, 0x1DF, 0xE5, 0x301, 0x1FB, 0xE6, 0x301, 0x1FD, 0xE6, 0x304, 0x1E3,
    0xE7, 0x301, 0x1E09, 0xEA, 0x300, 0x1EC1, 0xEA, 0x301, 0x1EBF, 0xEA, 0x303, 0x1EC5, 0xEA, 0x309, 0x1EC3,
    0xEF, 0x301, 0x1E2F, 0xF4, 0x300, 0x1ED3, 0xF4, 0x301, 0x1ED1, 0xF4, 0x303, 0x1ED7, 0xF4, 0x309, 0x1ED5,
    0xF5, 0x301, 0x1E4D, 0xF5, 0x304, 0x22D, 0xF5, 0x308, 0x1E4F, 0xF6, 0x304, 0x22B, 0xF8, 0x301, 0x1FF,
    0xFC, 0x300, 0x1DC, 0xFC, 0x301, 0x1D8, 0xFC, 0x304, 0x1D6, 0xFC, 0x30C, 0x1DA, 0x102, 0x300, 0x1EB0,
    0x102, 0x301, 0x1EAE, 0x102, 0x303, 0x1EB4, 0x102, 0x309, 0x1EB2, 0x103, 0x300, 0x1EB1,
    0x103, 0x301, 0x1EAF, 0x103, 0x303, 0x1EB5, 0x103, 0x309, 0x1EB3, 0x112, 0x300, 0x1E14,
    0x112, 0x301, 0x1E16, 0x113, 0x300, 0x1E15, 0x113, 0x301, 0x1E17, 0x14C, 0x300, 0x1E50,
    0x14C, 0x301, 0x1E52, 0x14D, 0x300, 0x1E51, 0x14D, 0x301, 0x1E53, 0x15A, 0x307, 0x1E64,
    0x15B, 0x307, 0x1E65, 0x160, 0x307, 0x1E66, 0x161, 0x307, 0x1E67, 0x168, 0x301, 0x1E78,
    0x169, 0x301, 0x1E79, 0x16A, 0x308, 0x1E7A, 0x16B, 0x308, 0x1E7B, 0x17F, 0x307, 0x1E9B,
    0x1A0, 0x300, 0x1EDC, 0x1A0, 0x301, 0x1EDA, 0x1A0, 0x303, 0x1EE0, 0x1A0, 0x309, 0x1EDE,
    0x1A0, 0x323, 0x1EE2, 0x1A1, 0x300, 0x1EDD, 0x1A1, 0x301, 0x1EDB, 0x1A1, 0x303, 0x1EE1,
    0x1A1, 0x309, 0x1EDF, 0x1A1, 0x323, 0x1EE3, 0x1AF, 0x300, 0x1EEA, 0x1AF, 0x301, 0x1EE8,
    0x1AF, 0x303, 0x1EEE, 0x1AF, 0x309, 0x1EEC, 0x1AF, 0x323, 0x1EF0, 0x1B0, 0x300, 0x1EEB,
    0x1B0, 0x301, 0x1EE9, 0x1B0, 0x303, 0x1EEF, 0x1B0, 0x309, 0x1EED, 0x1B0, 0x323, 0x1EF1,
    0x1B7, 0x30C, 0x1EE, 0x1EA, 0x304, 0x1EC, 0x1EB, 0x304, 0x1ED, 0x226, 0x304, 0x1E0, 0x227, 0x304, 0x1E1,
    0x228, 0x306, 0x1E1C, 0x229, 0x306, 0x1E1D, 0x22E, 0x304, 0x230, 0x22F, 0x304, 0x231, 0x292, 0x30C, 0x1EF,
    0x391, 0x300, 0x1FBA, 0x391, 0x301, 0x386, 0x391, 0x304, 0x1FB9, 0x391, 0x306, 0x1FB8,
    0x391, 0x313, 0x1F08, 0x391, 0x314, 0x1F09, 0x391, 0x345, 0x1FBC, 0x395, 0x300, 0x1FC8,
    0x395, 0x301, 0x388, 0x395, 0x313, 0x1F18, 0x395, 0x314, 0x1F19, 0x397, 0x300, 0x1FCA,
    0x397, 0x301, 0x389, 0x397, 0x313, 0x1F28, 0x397, 0x314, 0x1F29, 0x397, 0x345, 0x1FCC,
    0x399, 0x300, 0x1FDA, 0x399, 0x301, 0x38A, 0x399, 0x304, 0x1FD9, 0x399, 0x306, 0x1FD8,
    0x399, 0x308, 0x3AA, 0x399, 0x313, 0x1F38, 0x399, 0x314, 0x1F39, 0x39F, 0x300, 0x1FF8,
    0x39F, 0x301, 0x38C, 0x39F, 0x313, 0x1F48, 0x39F, 0x314, 0x1F49, 0x3A1, 0x314, 0x1FEC,
    0x3A5, 0x300, 0x1FEA, 0x3A5, 0x301, 0x38E, 0x3A5, 0x304, 0x1FE9, 0x3A5, 0x306, 0x1FE8,
    0x3A5, 0x308, 0x3AB, 0x3A5, 0x314, 0x1F59, 0x3A9, 0x300, 0x1FFA, 0x3A9, 0x301, 0x38F,
    0x3A9, 0x313, 0x1F68, 0x3A9, 0x314, 0x1F69, 0x3A9, 0x345, 0x1FFC, 0x3AC, 0x345, 0x1FB4,
    0x3AE, 0x345, 0x1FC4, 0x3B1, 0x300, 0x1F70, 0x3B1, 0x301, 0x3AC, 0x3B1, 0x304, 0x1FB1,
    0x3B1, 0x306, 0x1FB0, 0x3B1, 0x313, 0x1F00, 0x3B1, 0x314, 0x1F01, 0x3B1, 0x342, 0x1FB6,
    0x3B1, 0x345, 0x1FB3, 0x3B5, 0x300, 0x1F72, 0x3B5, 0x301, 0x3AD, 0x3B5, 0x313, 0x1F10,
    0x3B5, 0x314, 0x1F11, 0x3B7, 0x300, 0x1F74, 0x3B7, 0x301, 0x3AE, 0x3B7, 0x313, 0x1F20,
    0x3B7, 0x314, 0x1F21, 0x3B7, 0x342, 0x1FC6, 0x3B7, 0x345, 0x1FC3, 0x3B9, 0x300, 0x1F76,
    0x3B9, 0x301, 0x3AF, 0x3B9, 0x304, 0x1FD1, 0x3B9, 0x306, 0x1FD0, 0x3B9, 0x308, 0x3CA,
    0x3B9, 0x313, 0x1F30, 0x3B9, 0x314, 0x1F31, 0x3B9, 0x342, 0x1FD6, 0x3BF, 0x300, 0x1F78,
    0x3BF, 0x301, 0x3CC, 0x3BF, 0x313, 0x1F40, 0x3BF, 0x314, 0x1F41, 0x3C1, 0x313, 0x1FE4,
    0x3C1, 0x314, 0x1FE5, 0x3C5, 0x300, 0x1F7A, 0x3C5, 0x301, 0x3CD, 0x3C5, 0x304, 0x1FE1,
    0x3C5, 0x306, 0x1FE0, 0x3C5, 0x308, 0x3CB, 0x3C5, 0x313, 0x1F50, 0x3C5, 0x314, 0x1F51,
    0x3C5, 0x342, 0x1FE6, 0x3C9, 0x300, 0x1F7C, 0x3C9, 0x301, 0x3CE, 0x3C9, 0x313, 0x1F60,
    0x3C9, 0x314, 0x1F61, 0x3C9, 0x342, 0x1FF6, 0x3C9, 0x345, 0x1FF3, 0x3CA, 0x300, 0x1FD2,
    0x3CA, 0x301, 0x390, 0x3CA, 0x342, 0x1FD7, 0x3CB, 0x300, 0x1FE2, 0x3CB, 0x301, 0x3B0,
    0x3CB, 0x342, 0x1FE7, 0x3CE, 0x345, 0x1FF4, 0x3D2, 0x301, 0x3D3, 0x3D2, 0x308, 0x3D4, 0x406, 0x308, 0x407,
    0x410, 0x306, 0x4D0, 0x410, 0x308, 0x4D2, 0x413, 0x301, 0x403, 0x415, 0x300, 0x400, 0x415, 0x306, 0x4D6,
    0x415, 0x308, 0x401, 0x416, 0x306, 0x4C1, 0x416, 0x308, 0x4DC, 0x417, 0x308, 0x4DE, 0x418, 0x300, 0x40D,
    0x418, 0x304, 0x4E2, 0x418, 0x306, 0x419, 0x418, 0x308, 0x4E4, 0x41A, 0x301, 0x40C, 0x41E, 0x308, 0x4E6,
    0x423, 0x304, 0x4EE, 0x423, 0x306, 0x40E, 0x423, 0x308, 0x4F0, 0x423, 0x30B, 0x4F2, 0x427, 0x308, 0x4F4,
    0x42B, 0x308, 0x4F8, 0x42D, 0x308, 0x4EC, 0x430, 0x306, 0x4D1, 0x430, 0x308, 0x4D3, 0x433, 0x301, 0x453,
    0x435, 0x300, 0x450, 0x435, 0x306, 0x4D7, 0x435, 0x308, 0x451, 0x436, 0x306, 0x4C2, 0x436, 0x308, 0x4DD,
    0x437, 0x308, 0x4DF, 0x438, 0x300, 0x45D, 0x438, 0x304, 0x4E3, 0x438, 0x306, 0x439, 0x438, 0x308, 0x4E5,
    0x43A, 0x301, 0x45C, 0x43E, 0x308, 0x4E7, 0x443, 0x304, 0x4EF, 0x443, 0x306, 0x45E, 0x443, 0x308, 0x4F1,
    0x443, 0x30B, 0x4F3, 0x447, 0x308, 0x4F5, 0x44B, 0x308, 0x4F9, 0x44D, 0x308, 0x4ED, 0x456, 0x308, 0x457,
    0x474, 0x30F, 0x476, 0x475, 0x30F, 0x477, 0x4D8, 0x308, 0x4DA, 0x4D9, 0x308, 0x4DB, 0x4E8, 0x308, 0x4EA,
    0x4E9, 0x308, 0x4EB, 0x627, 0x653, 0x622, 0x627, 0x654, 0x623, 0x627, 0x655, 0x625, 0x648, 0x654, 0x624,
    0x64A, 0x654, 0x626, 0x6C1, 0x654, 0x6C2, 0x6D2, 0x654, 0x6D3, 0x6D5, 0x654, 0x6C0, 0x928, 0x93C, 0x929,
    0x930, 0x93C, 0x931, 0x933, 0x93C, 0x934, 0x9C7, 0x9BE, 0x9CB, 0x9C7, 0x9D7, 0x9CC, 0xB47, 0xB3E, 0xB4B,
    0xB47, 0xB56, 0xB48, 0xB47, 0xB57, 0xB4C, 0xB92, 0xBD7, 0xB94, 0xBC6, 0xBBE, 0xBCA, 0xBC6, 0xBD7, 0xBCC,
    0xBC7, 0xBBE, 0xBCB, 0xC46, 0xC56, 0xC48, 0xCBF, 0xCD5, 0xCC0, 0xCC6, 0xCC2, 0xCCA, 0xCC6, 0xCD5, 0xCC7,
    0xCC6, 0xCD6, 0xCC8, 0xCCA, 0xCD5, 0xCCB, 0xD46, 0xD3E, 0xD4A, 0xD46, 0xD57, 0xD4C, 0xD47, 0xD3E, 0xD4B,
    0xDD9, 0xDCA, 0xDDA, 0xDD9, 0xDCF, 0xDDC, 0xDD9, 0xDDF, 0xDDE, 0xDDC, 0xDCA, 0xDDD,
    0x1025, 0x102E, 0x1026, 0x1B05, 0x1B35, 0x1B06, 0x1B07, 0x1B35, 0x1B08, 0x1B09, 0x1B35, 0x1B0A,
    0x1B0B, 0x1B35, 0x1B0C, 0x1B0D, 0x1B35, 0x1B0E, 0x1B11, 0x1B35, 0x1B12, 0x1B3A, 0x1B35, 0x1B3B,
    0x1B3C, 0x1B35, 0x1B3D, 0x1B3E, 0x1B35, 0x1B40, 0x1B3F, 0x1B35, 0x1B41, 0x1B42, 0x1B35, 0x1B43,
    0x1E36, 0x304, 0x1E38, 0x1E37, 0x304, 0x1E39, 0x1E5A, 0x304, 0x1E5C, 0x1E5B, 0x304, 0x1E5D,
    0x1E62, 0x307, 0x1E68, 0x1E63, 0x307, 0x1E69, 0x1EA0, 0x302, 0x1EAC, 0x1EA0, 0x306, 0x1EB6,
    0x1EA1, 0x302, 0x1EAD, 0x1EA1, 0x306, 0x1EB7, 0x1EB8, 0x302, 0x1EC6, 0x1EB9, 0x302, 0x1EC7,
    0x1ECC, 0x302, 0x1ED8, 0x1ECD, 0x302, 0x1ED9, 0x1F00, 0x300, 0x1F02, 0x1F00, 0x301, 0x1F04,
    0x1F00, 0x342, 0x1F06, 0x1F00, 0x345, 0x1F80, 0x1F01, 0x300, 0x1F03, 0x1F01, 0x301, 0x1F05,
    0x1F01, 0x342, 0x1F07, 0x1F01, 0x345, 0x1F81, 0x1F02, 0x345, 0x1F82, 0x1F03, 0x345, 0x1F83,
    0x1F04, 0x345, 0x1F84, 0x1F05, 0x345, 0x1F85, 0x1F06, 0x345, 0x1F86, 0x1F07, 0x345, 0x1F87,
    0x1F08, 0x300, 0x1F0A, 0x1F08, 0x301, 0x1F0C, 0x1F08, 0x342, 0x1F0E, 0x1F08, 0x345, 0x1F88,
    0x1F09, 0x300, 0x1F0B, 0x1F09, 0x301, 0x1F0D, 0x1F09, 0x342, 0x1F0F, 0x1F09, 0x345, 0x1F89,
    0x1F0A, 0x345, 0x1F8A, 0x1F0B, 0x345, 0x1F8B, 0x1F0C, 0x345, 0x1F8C, 0x1F0D, 0x345, 0x1F8D,
    0x1F0E, 0x345, 0x1F8E, 0x1F0F, 0x345, 0x1F8F, 0x1F10, 0x300, 0x1F12, 0x1F10, 0x301, 0x1F14,
    0x1F11, 0x300, 0x1F13, 0x1F11, 0x301, 0x1F15, 0x1F18, 0x300, 0x1F1A, 0x1F18, 0x301, 0x1F1C,
    0x1F19, 0x300, 0x1F1B, 0x1F19, 0x301, 0x1F1D, 0x1F20, 0x300, 0x1F22, 0x1F20, 0x301, 0x1F24,
    0x1F20, 0x342, 0x1F26, 0x1F20, 0x345, 0x1F90, 0x1F21, 0x300, 0x1F23, 0x1F21, 0x301, 0x1F25,
    0x1F21, 0x342, 0x1F27, 0x1F21, 0x345, 0x1F91, 0x1F22, 0x345, 0x1F92, 0x1F23, 0x345, 0x1F93,
    0x1F24, 0x345, 0x1F94, 0x1F25, 0x345, 0x1F95, 0x1F26, 0x345, 0x1F96, 0x1F27, 0x345, 0x1F97,
    0x1F28, 0x300, 0x1F2A, 0x1F28, 0x301, 0x1F2C, 0x1F28, 0x342, 0x1F2E, 0x1F28, 0x345, 0x1F98,
    0x1F29, 0x300, 0x1F2B, 0x1F29, 0x301, 0x1F2D, 0x1F29, 0x342, 0x1F2F, 0x1F29, 0x345, 0x1F99,
    0x1F2A, 0x345, 0x1F9A, 0x1F2B, 0x345, 0x1F9B, 0x1F2C, 0x345, 0x1F9C, 0x1F2D, 0x345, 0x1F9D,
    0x1F2E, 0x345, 0x1F9E, 0x1F2F, 0x345, 0x1F9F, 0x1F30, 0x300, 0x1F32, 0x1F30, 0x301, 0x1F34,
    0x1F30, 0x342, 0x1F36, 0x1F31, 0x300, 0x1F33, 0x1F31, 0x301, 0x1F35, 0x1F31, 0x342, 0x1F37,
    0x1F38, 0x300, 0x1F3A, 0x1F38, 0x301, 0x1F3C, 0x1F38, 0x342, 0x1F3E, 0x1F39, 0x300, 0x1F3B,
    0x1F39, 0x301, 0x1F3D, 0x1F39, 0x342, 0x1F3F, 0x1F40, 0x300, 0x1F42, 0x1F40, 0x301, 0x1F44,
    0x1F41, 0x300, 0x1F43, 0x1F41, 0x301, 0x1F45, 0x1F48, 0x300, 0x1F4A, 0x1F48, 0x301, 0x1F4C,
    0x1F49, 0x300, 0x1F4B, 0x1F49, 0x301, 0x1F4D, 0x1F50, 0x300, 0x1F52, 0x1F50, 0x301, 0x1F54,
    0x1F50, 0x342, 0x1F56, 0x1F51, 0x300, 0x1F53, 0x1F51, 0x301, 0x1F55, 0x1F51, 0x342, 0x1F57,
    0x1F59, 0x300, 0x1F5B, 0x1F59, 0x301, 0x1F5D, 0x1F59, 0x342, 0x1F5F, 0x1F60, 0x300, 0x1F62,
    0x1F60, 0x301, 0x1F64, 0x1F60, 0x342, 0x1F66, 0x1F60, 0x345, 0x1FA0, 0x1F61, 0x300, 0x1F63,
    0x1F61, 0x301, 0x1F65, 0x1F61, 0x342, 0x1F67, 0x1F61, 0x345, 0x1FA1, 0x1F62, 0x345, 0x1FA2,
    0x1F63, 0x345, 0x1FA3, 0x1F64, 0x345, 0x1FA4, 0x1F65, 0x345, 0x1FA5, 0x1F66, 0x345, 0x1FA6,
    0x1F67, 0x345, 0x1FA7, 0x1F68, 0x300, 0x1F6A, 0x1F68, 0x301, 0x1F6C, 0x1F68, 0x342, 0x1F6E,
    0x1F68, 0x345, 0x1FA8, 0x1F69, 0x300, 0x1F6B, 0x1F69, 0x301, 0x1F6D, 0x1F69, 0x342, 0x1F6F,
    0x1F69, 0x345, 0x1FA9, 0x1F6A, 0x345, 0x1FAA, 0x1F6B, 0x345, 0x1FAB, 0x1F6C, 0x345, 0x1FAC,
    0x1F6D, 0x345, 0x1FAD, 0x1F6E, 0x345, 0x1FAE, 0x1F6F, 0x345, 0x1FAF, 0x1F70, 0x345, 0x1FB2,
    0x1F74, 0x345, 0x1FC2, 0x1F7C, 0x345, 0x1FF2, 0x1FB6, 0x345, 0x1FB7, 0x1FBF, 0x300, 0x1FCD,
    0x1FBF, 0x301, 0x1FCE, 0x1FBF, 0x342, 0x1FCF, 0x1FC6, 0x345, 0x1FC7, 0x1FF6, 0x345, 0x1FF7,
    0x1FFE, 0x300, 0x1FDD, 0x1FFE, 0x301, 0x1FDE, 0x1FFE, 0x342, 0x1FDF, 0x2190, 0x338, 0x219A,
    0x2192, 0x338, 0x219B, 0x2194, 0x338, 0x21AE, 0x21D0, 0x338, 0x21CD, 0x21D2, 0x338, 0x21CF,
    0x21D4, 0x338, 0x21CE, 0x2203, 0x338, 0x2204, 0x2208, 0x338, 0x2209, 0x220B, 0x338, 0x220C,
    0x2223, 0x338, 0x2224, 0x2225, 0x338, 0x2226, 0x223C, 0x338, 0x2241, 0x2243, 0x338, 0x2244,
    0x2245, 0x338, 0x2247, 0x2248, 0x338, 0x2249, 0x224D, 0x338, 0x226D, 0x2261, 0x338, 0x2262,
    0x2264, 0x338, 0x2270, 0x2265, 0x338, 0x2271, 0x2272, 0x338, 0x2274, 0x2273, 0x338, 0x2275,
    0x2276, 0x338, 0x2278, 0x2277, 0x338, 0x2279, 0x227A, 0x338, 0x2280, 0x227B, 0x338, 0x2281,
    0x227C, 0x338, 0x22E0, 0x227D, 0x338, 0x22E1, 0x2282, 0x338, 0x2284, 0x2283, 0x338, 0x2285,
    0x2286, 0x338, 0x2288, 0x2287, 0x338, 0x2289, 0x2291, 0x338, 0x22E2, 0x2292, 0x338, 0x22E3,
    0x22A2, 0x338, 0x22AC, 0x22A8, 0x338, 0x22AD, 0x22A9, 0x338, 0x22AE, 0x22AB, 0x338, 0x22AF,
    0x22B2, 0x338, 0x22EA, 0x22B3, 0x338, 0x22EB, 0x22B4, 0x338, 0x22EC, 0x22B5, 0x338, 0x22ED,
    0x3046, 0x3099, 0x3094, 0x304B, 0x3099, 0x304C, 0x304D, 0x3099, 0x304E, 0x304F, 0x3099, 0x3050,
    0x3051, 0x3099, 0x3052, 0x3053, 0x3099, 0x3054, 0x3055, 0x3099, 0x3056, 0x3057, 0x3099, 0x3058,
    0x3059, 0x3099, 0x305A, 0x305B, 0x3099, 0x305C, 0x305D, 0x3099, 0x305E, 0x305F, 0x3099, 0x3060,
    0x3061, 0x3099, 0x3062, 0x3064, 0x3099, 0x3065, 0x3066, 0x3099, 0x3067, 0x3068, 0x3099, 0x3069,
    0x306F, 0x3099, 0x3070, 0x306F, 0x309A, 0x3071, 0x3072, 0x3099, 0x3073, 0x3072, 0x309A, 0x3074,
    0x3075, 0x3099, 0x3076, 0x3075, 0x309A, 0x3077, 0x3078, 0x3099, 0x3079, 0x3078, 0x309A, 0x307A,
    0x307B, 0x3099, 0x307C, 0x307B, 0x309A, 0x307D, 0x309D, 0x3099, 0x309E, 0x30A6, 0x3099, 0x30F4,
    0x30AB, 0x3099, 0x30AC, 0x30AD, 0x3099, 0x30AE, 0x30AF, 0x3099, 0x30B0, 0x30B1, 0x3099, 0x30B2,
    0x30B3, 0x3099, 0x30B4, 0x30B5, 0x3099, 0x30B6, 0x30B7, 0x3099, 0x30B8, 0x30B9, 0x3099, 0x30BA,
    0x30BB, 0x3099, 0x30BC, 0x30BD, 0x3099, 0x30BE, 0x30BF, 0x3099, 0x30C0, 0x30C1, 0x3099, 0x30C2,
    0x30C4, 0x3099, 0x30C5, 0x30C6, 0x3099, 0x30C7, 0x30C8, 0x3099, 0x30C9, 0x30CF, 0x3099, 0x30D0,
    0x30CF, 0x309A, 0x30D1, 0x30D2, 0x3099, 0x30D3, 0x30D2, 0x309A, 0x30D4, 0x30D5, 0x3099, 0x30D6,
    0x30D5, 0x309A, 0x30D7, 0x30D8, 0x3099, 0x30D9, 0x30D8, 0x309A, 0x30DA, 0x30DB, 0x3099, 0x30DC,
    0x30DB, 0x309A, 0x30DD, 0x30EF, 0x3099, 0x30F7, 0x30F0, 0x3099, 0x30F8, 0x30F1, 0x3099, 0x30F9,
    0x30F2, 0x3099, 0x30FA, 0x30FD, 0x3099, 0x30FE, 0x11099, 0x110BA, 0x1109A, 0x1109B, 0x110BA, 0x1109C,
    0x110A5, 0x110BA, 0x110AB, 0x11131, 0x11127, 0x1112E, 0x11132, 0x11127, 0x1112F,
    0x11347, 0x1133E, 0x1134B, 0x11347, 0x11357, 0x1134C, 0x114B9, 0x114B0, 0x114BC,
    0x114B9, 0x114BA, 0x114BB, 0x114B9, 0x114BD, 0x114BE, 0x115B8, 0x115AF, 0x115BA,
    0x115B9, 0x115AF, 0x115BB,
};

/* END GENERATED UNICODE TABLES */

/* dintattn__nfc: Unicode Normalization Form C exactly as HF tokenizers' NFC normalizer gives it
   (its crate unicode-normalization-alignments: Unicode 9.0.0 data, the canonical ordering and
   composition of UAX #15). Each maximal ill-formed UTF-8 subsequence (what U+FFFD replaces) is
   copied unchanged and acts as a starter that composes with nothing, as U+FFFD would.
   Time O(n * k) for n bytes, k <= 55 the number of distinct combining classes in a run of
   non-starters; no memory besides out. A run of non-starters is stably sorted by class by
   scanning it once per class it holds (a counting sort over at most 255 classes that re-reads
   the input instead of keeping the run). The starter being composed is written last: its 4
   bytes are reserved at its place, the non-starters left uncomposed are written after them, and
   when it is done it goes into its place and they move down (each byte moves once). */

#define DINTATTN__NFC_NONE 0xFFFFFFFFu /* no code point: an ill-formed subsequence, or no starter */

/* The canonical combining class of cp (0 for one unassigned in Unicode 9.0). */
static uint32_t dintattn__nfc_ccc(uint32_t cp)
{
    size_t lo = 0, hi = sizeof dintattn__ccc_runs / sizeof dintattn__ccc_runs[0];
    if (cp < 0x300 || cp > 0x10FFFF) return 0;
    while (hi - lo > 1) { /* runs[lo] starts at or before cp, runs[hi] (if any) after it */
        size_t mid = lo + (hi - lo) / 2;
        if (dintattn__ccc_runs[mid] >> 8 <= cp) lo = mid;
        else hi = mid;
    }
    return dintattn__ccc_runs[lo] & 0xFF;
}

/* The full canonical decomposition of cp into d; returns its length (1: cp itself). */
static int dintattn__nfc_decompose(uint32_t cp, uint32_t d[4])
{
    size_t lo = 0, hi = sizeof dintattn__nfd_cp / sizeof dintattn__nfd_cp[0], k;
    if (cp - 0xAC00u < 11172u) { /* a Hangul syllable: L V or L V T (Unicode 3.12) */
        uint32_t si = cp - 0xAC00u;
        d[0] = 0x1100u + si / 588u;
        d[1] = 0x1161u + si % 588u / 28u;
        d[2] = 0x11A7u + si % 28u;
        return si % 28u ? 3 : 2;
    }
    d[0] = cp;
    if (cp < 0xC0) return 1;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (dintattn__nfd_cp[mid] < cp) lo = mid + 1;
        else hi = mid;
    }
    if (lo == sizeof dintattn__nfd_cp / sizeof dintattn__nfd_cp[0] || dintattn__nfd_cp[lo] != cp) return 1;
    for (k = dintattn__nfd_off[lo]; k < dintattn__nfd_off[lo + 1]; k++)
        d[k - dintattn__nfd_off[lo]] = dintattn__nfd_data[k];
    return (int)(dintattn__nfd_off[lo + 1] - dintattn__nfd_off[lo]);
}

/* The primary composite of a and b, or 0. */
static uint32_t dintattn__nfc_compose(uint32_t a, uint32_t b)
{
    size_t lo = 0, hi = sizeof dintattn__nfc_pairs / sizeof dintattn__nfc_pairs[0] / 3;
    if (b < 0x300) return 0; /* no composition has a second character below U+0300 */
    if (a - 0x1100u < 19u && b - 0x1161u < 21u) return 0xAC00u + ((a - 0x1100u) * 21u + b - 0x1161u) * 28u;
    if (a - 0xAC00u < 11172u && (a - 0xAC00u) % 28u == 0 && b - 0x11A8u < 27u) return a + b - 0x11A7u;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        const uint32_t *p = dintattn__nfc_pairs + 3 * mid;
        if (p[0] < a || (p[0] == a && p[1] < b)) lo = mid + 1;
        else hi = mid;
    }
    if (lo < sizeof dintattn__nfc_pairs / sizeof dintattn__nfc_pairs[0] / 3 && dintattn__nfc_pairs[3 * lo] == a
        && dintattn__nfc_pairs[3 * lo + 1] == b)
        return dintattn__nfc_pairs[3 * lo + 2];
    return 0;
}

/* The input as a stream of decomposed code points: the character at byte i (len bytes long),
   its decomposition d[0..nd) (d[0] = DINTATTN__NFC_NONE for an ill-formed subsequence), and the
   next element j. A copy of it is a position to come back to. */
typedef struct dintattn__nfc_it {
    size_t i, len;
    uint32_t d[4];
    int nd, j;
} dintattn__nfc_it;

/* Decodes the character at it->i < n (by the Unicode standard's table of well-formed UTF-8, as
   dintattn__uchar_at does: an ill-formed subsequence ends before the first byte that cannot
   continue it) and decomposes it. */
static void dintattn__nfc_load(dintattn__nfc_it *it, const unsigned char *s, size_t n)
{
    size_t i = it->i, need, k;
    uint32_t c = s[i], lo = 0x80, hi = 0xBF;
    it->j = 0;
    it->nd = 1;
    it->len = 1;
    it->d[0] = c;
    if (c < 0x80) return;
    it->d[0] = DINTATTN__NFC_NONE;
    if (c >= 0xC2 && c <= 0xDF) need = 1;
    else if (c >= 0xE0 && c <= 0xEF) need = 2;
    else if (c >= 0xF0 && c <= 0xF4) need = 3;
    else return;
    if (c == 0xE0) lo = 0xA0;
    if (c == 0xED) hi = 0x9F;
    if (c == 0xF0) lo = 0x90;
    if (c == 0xF4) hi = 0x8F;
    c &= 0x3Fu >> need;
    for (k = 1; k <= need; k++) {
        if (i + k >= n || s[i + k] < lo || s[i + k] > hi) {
            it->len = k;
            return;
        }
        c = c << 6 | (s[i + k] & 0x3Fu);
        lo = 0x80;
        hi = 0xBF;
    }
    it->len = need + 1;
    it->nd = dintattn__nfc_decompose(c, it->d);
}

static void dintattn__nfc_next(dintattn__nfc_it *it, const unsigned char *s, size_t n)
{
    if (++it->j < it->nd) return;
    it->i += it->len;
    if (it->i < n) dintattn__nfc_load(it, s, n);
}

/* The composer (the crate's Recompositions): the starter being composed (DINTATTN__NFC_NONE if
   none yet, or after an ill-formed subsequence) has 4 bytes reserved at out[at_s]; the
   non-starters after it that it did not take are in out[at_s + 4 .. at); last is the class of
   the last of them (0: none). */
typedef struct dintattn__nfc_out {
    unsigned char *p;
    size_t at, at_s;
    uint32_t s, last;
} dintattn__nfc_out;

static size_t dintattn__nfc_put(unsigned char *o, uint32_t cp)
{
    if (cp < 0x80) {
        o[0] = (unsigned char)cp;
        return 1;
    }
    if (cp < 0x800) {
        o[0] = (unsigned char)(0xC0 | cp >> 6);
        o[1] = (unsigned char)(0x80 | (cp & 0x3F));
        return 2;
    }
    if (cp < 0x10000) {
        o[0] = (unsigned char)(0xE0 | cp >> 12);
        o[1] = (unsigned char)(0x80 | (cp >> 6 & 0x3F));
        o[2] = (unsigned char)(0x80 | (cp & 0x3F));
        return 3;
    }
    o[0] = (unsigned char)(0xF0 | cp >> 18);
    o[1] = (unsigned char)(0x80 | (cp >> 12 & 0x3F));
    o[2] = (unsigned char)(0x80 | (cp >> 6 & 0x3F));
    o[3] = (unsigned char)(0x80 | (cp & 0x3F));
    return 4;
}

/* Writes the starter into its place and moves the non-starters after it down. */
static void dintattn__nfc_flush(dintattn__nfc_out *o)
{
    size_t len;
    if (o->s == DINTATTN__NFC_NONE) return;
    len = dintattn__nfc_put(o->p + o->at_s, o->s);
    if (len < 4) memmove(o->p + o->at_s + len, o->p + o->at_s + 4, o->at - o->at_s - 4);
    o->at -= 4 - len;
    o->s = DINTATTN__NFC_NONE;
}

/* Takes the next code point cp (class c) of the canonically ordered stream. */
static void dintattn__nfc_feed(dintattn__nfc_out *o, uint32_t cp, uint32_t c)
{
    uint32_t r;
    if (o->s != DINTATTN__NFC_NONE) {
        if ((o->last == 0 || o->last < c) && (r = dintattn__nfc_compose(o->s, cp)) != 0) {
            o->s = r; /* not blocked, and they compose */
            return;
        }
        if (c == 0) dintattn__nfc_flush(o);
    }
    if (c == 0) {
        o->s = cp;
        o->at_s = o->at;
        o->at += 4;
        o->last = 0;
        return;
    }
    o->at += dintattn__nfc_put(o->p + o->at, cp);
    o->last = c;
}

/* Writes the NFC form of s[0..n) to out (room for 3 * n + 4 bytes: no character's NFC is more
   than 3 times as long, and a starter's 4 reserved bytes are the rest) and its length to
   *out_len. Returns 0 (it allocates nothing, so it cannot fail). */
static int dintattn__nfc(const unsigned char *s, size_t n, unsigned char *out, size_t *out_len)
{
    dintattn__nfc_it it, run;
    dintattn__nfc_out o;
    uint32_t seen[8], cp, c, prev, cls;
    int sorted;
    o.p = out;
    o.at = o.at_s = 0;
    o.s = DINTATTN__NFC_NONE;
    o.last = 0;
    it.i = 0;
    if (n) dintattn__nfc_load(&it, s, n);
    while (it.i < n) {
        cp = it.d[it.j];
        if (cp == DINTATTN__NFC_NONE) { /* an ill-formed subsequence: copied as it is */
            dintattn__nfc_flush(&o);
            memcpy(out + o.at, s + it.i, it.len);
            o.at += it.len;
            dintattn__nfc_next(&it, s, n);
            continue;
        }
        if ((c = dintattn__nfc_ccc(cp)) == 0) {
            dintattn__nfc_feed(&o, cp, 0);
            dintattn__nfc_next(&it, s, n);
            continue;
        }
        /* A run of non-starters: note the classes it holds and whether it is in order ... */
        run = it;
        memset(seen, 0, sizeof seen);
        sorted = 1;
        prev = 0;
        while (it.i < n && (cp = it.d[it.j]) != DINTATTN__NFC_NONE && (c = dintattn__nfc_ccc(cp)) != 0) {
            seen[c >> 5] |= 1u << (c & 31);
            if (c < prev) sorted = 0;
            prev = c;
            dintattn__nfc_next(&it, s, n);
        }
        /* ... then give it to the composer in one pass, or in one pass per class, lowest first. */
        for (cls = sorted ? 0 : 1; cls < 256; cls++) {
            dintattn__nfc_it k = run;
            if (cls && !(seen[cls >> 5] >> (cls & 31) & 1)) continue;
            while (k.i != it.i || k.j != it.j) {
                cp = k.d[k.j];
                c = dintattn__nfc_ccc(cp);
                if (!cls || c == cls) dintattn__nfc_feed(&o, cp, c);
                dintattn__nfc_next(&k, s, n);
            }
            if (!cls) break;
        }
    }
    dintattn__nfc_flush(&o);
    *out_len = o.at;
    return 0;
}

#define DINTATTN__MAX_RANK (INT_MAX - 1) /* so that n_vocab = max id + 1 is an int */

/* The class (DINTATTN__GC_*) of code point cp: the last run that starts at or before it. */
static int dintattn__gc(uint32_t cp)
{
    size_t lo = 0, hi = sizeof dintattn__uni_runs / sizeof dintattn__uni_runs[0];
    if (cp > 0x10FFFF) return DINTATTN__GC_OTHER;
    while (hi - lo > 1) { /* runs[lo] starts at or before cp, runs[hi] (if any) after it */
        size_t mid = lo + (hi - lo) / 2;
        if (dintattn__uni_runs[mid] >> 4 <= cp) lo = mid;
        else hi = mid;
    }
    return (int)(dintattn__uni_runs[lo] & 15);
}

/* The class of code point cp for cl100k's hand-written pre-tokenizer: \p{L}, \p{N}, White_Space
   or none of them. */
static int dintattn__uni_class(uint32_t cp)
{
    int g;
    if (cp < 0x80) {
        if ((cp | 0x20) >= 'a' && (cp | 0x20) <= 'z') return DINTATTN__UC_LETTER;
        if (cp >= '0' && cp <= '9') return DINTATTN__UC_NUMBER;
        return cp == ' ' || (cp >= 0x09 && cp <= 0x0D) ? DINTATTN__UC_SPACE : DINTATTN__UC_OTHER;
    }
    g = dintattn__gc(cp);
    if ((DINTATTN__GCM_L >> g) & 1) return DINTATTN__UC_LETTER;
    if ((DINTATTN__GCM_N >> g) & 1) return DINTATTN__UC_NUMBER;
    return g == DINTATTN__GC_SPACE ? DINTATTN__UC_SPACE : DINTATTN__UC_OTHER;
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

/* --- the split regex matcher ------------------------------------------------------------- */

#define DINTATTN__RE_MAX_INSTS 8192   /* compiled program size (repetitions are unrolled) */
#define DINTATTN__RE_MAX_LEN 65536    /* bytes of a pattern */
#define DINTATTN__RE_MAX_NEST 32      /* groups inside groups */
#define DINTATTN__RE_MAX_LOOK_NEST 4  /* lookaheads inside lookaheads: the C recursion depth */
#define DINTATTN__RE_MAX_LOOK_LEN 64  /* characters a lookahead body may span */
#define DINTATTN__RE_MAX_REPEAT 1000  /* n and m of {n,m} */
#define DINTATTN__RE_MAX_STAGES 8     /* patterns applied in sequence */
#define DINTATTN__RE_INF 0x3FFFFFFF   /* an unbounded length */

/* A set of characters: every code point of the classes in mask, and the code point ranges
   ranges[2 * first ..) (count pairs [lo, hi]); complemented if neg. */
typedef struct dintattn__rset {
    uint32_t mask;
    int first, count, neg;
} dintattn__rset;

/* Syntax tree: a node of each kind; the children of CAT and ALT are a list (child, next). */
enum { DINTATTN__RN_EMPTY, DINTATTN__RN_SET, DINTATTN__RN_CAT, DINTATTN__RN_ALT, DINTATTN__RN_REP, DINTATTN__RN_LOOK,
       DINTATTN__RN_ANCHOR };
/* Anchors (a node's and an instruction's x): \A, \z, ^ and $ (a line's start and end, as
   Oniguruma has them: at the subject's ends and next to a "\n"), \Z (the end or before a final
   "\n"). */
enum { DINTATTN__RA_START, DINTATTN__RA_END, DINTATTN__RA_LINE_START, DINTATTN__RA_LINE_END, DINTATTN__RA_END_NL };
enum { DINTATTN__RQ_GREEDY, DINTATTN__RQ_LAZY, DINTATTN__RQ_POSSESSIVE };
typedef struct dintattn__rnode {
    int kind, child, next;
    int set;           /* SET: the set; ANCHOR: DINTATTN__RA_* */
    int min, max;      /* REP: max -1 is unbounded */
    int quant;         /* REP: DINTATTN__RQ_* */
    int neg;           /* LOOK: (?!...) */
} dintattn__rnode;

/* Program: SET consumes one character of set x; SPAN (possessive) consumes as many of set x as
   it can, at most max (-1: no limit), and fails under min; SPLIT goes on at x, and at y when
   that fails; JMP goes to x; LOOK runs the body at x to its MATCH and goes on at y if it matched
   (neg: if it did not); ANCHOR tests anchor x; MATCH ends a match. */
enum { DINTATTN__RI_SET, DINTATTN__RI_SPAN, DINTATTN__RI_SPLIT, DINTATTN__RI_JMP, DINTATTN__RI_LOOK,
       DINTATTN__RI_ANCHOR, DINTATTN__RI_MATCH };
typedef struct dintattn__rinst {
    int op, x, y, min, max;
    int memo;          /* SPLIT: its row of failure bits; LOOK: its two rows (known, result);
                          SPAN without max: its row of run ends */
    int neg;
} dintattn__rinst;

typedef struct dintattn__regex {
    dintattn__rinst *insts;
    int n_insts, cap_insts;
    dintattn__rset *sets;
    int n_sets, cap_sets;
    uint32_t *ranges;  /* pairs */
    int n_ranges, cap_ranges; /* in uint32_t */
    int n_memo;        /* rows of memo bits */
    int n_runs;        /* unbounded possessive SPANs: rows of run ends */
} dintattn__regex;

/* The tokenizer's split: 0 patterns is cl100k by hand (dintattn__pretok). */
/* What a stage does with its matches, as HF's Split pre-tokenizer "behavior": each match and each
   text between matches a piece (Isolated); the text between only (Removed: matches are dropped);
   a match joined to the text before it (MergedWithPrevious) or after it (MergedWithNext) when
   that is not a match; runs of matches, and runs of the rest, one piece each (Contiguous). invert
   swaps what is a match and what is not first. */
enum { DINTATTN__RB_ISOLATED, DINTATTN__RB_REMOVED, DINTATTN__RB_MERGED_PREV, DINTATTN__RB_MERGED_NEXT,
       DINTATTN__RB_CONTIGUOUS };
typedef struct dintattn__split {
    int n;
    dintattn__regex re[DINTATTN__RE_MAX_STAGES];
    int behavior[DINTATTN__RE_MAX_STAGES], invert[DINTATTN__RE_MAX_STAGES];
} dintattn__split;

typedef struct dintattn__rparse {
    const unsigned char *pat, *p, *end;
    dintattn__regex *re;
    dintattn__rnode *nodes;
    int n_nodes, cap_nodes;
    int icase, nest, look_nest;
    int nomem;
    char msg[200];
} dintattn__rparse;

static void dintattn__regex_free(dintattn__regex *re)
{
    DINTATTN_FREE(re->insts);
    DINTATTN_FREE(re->sets);
    DINTATTN_FREE(re->ranges);
    memset(re, 0, sizeof *re);
}

/* Records the first error (the byte offset where it was found and what it is); returns -1. */
static int dintattn__rerr(dintattn__rparse *ps, const char *fmt, const char *what)
{
    if (!ps->msg[0]) {
        int at = (int)(ps->p - ps->pat);
        char text[120];
        snprintf(text, sizeof text, fmt, what);
        snprintf(ps->msg, sizeof ps->msg, "%s at byte %d of the split pattern", text, at);
    }
    return -1;
}

static int dintattn__rnomem(dintattn__rparse *ps)
{
    ps->nomem = 1;
    return dintattn__rerr(ps, "%s", "out of memory");
}

static int dintattn__rnode_new(dintattn__rparse *ps, int kind)
{
    dintattn__rnode *n;
    if (dintattn__grow((void **)&ps->nodes, &ps->cap_nodes, ps->n_nodes, sizeof *ps->nodes)) return dintattn__rnomem(ps);
    n = &ps->nodes[ps->n_nodes];
    memset(n, 0, sizeof *n);
    n->kind = kind;
    n->child = n->next = n->set = -1;
    return ps->n_nodes++;
}

/* A new empty set (its ranges come next in re->ranges, so they stay contiguous). */
static int dintattn__rset_new(dintattn__rparse *ps)
{
    dintattn__regex *re = ps->re;
    if (dintattn__grow((void **)&re->sets, &re->cap_sets, re->n_sets, sizeof *re->sets)) return dintattn__rnomem(ps);
    memset(&re->sets[re->n_sets], 0, sizeof re->sets[0]);
    re->sets[re->n_sets].first = re->n_ranges / 2;
    return re->n_sets++;
}

static int dintattn__rset_range(dintattn__rparse *ps, int set, uint32_t lo, uint32_t hi)
{
    dintattn__regex *re = ps->re;
    if (dintattn__grow((void **)&re->ranges, &re->cap_ranges, re->n_ranges + 1, sizeof *re->ranges))
        return dintattn__rnomem(ps);
    re->ranges[re->n_ranges++] = lo;
    re->ranges[re->n_ranges++] = hi;
    re->sets[set].count++;
    return 0;
}

/* Adds [lo, hi] to the set, with (?i:) the other case of its ASCII letters and the two
   non-ASCII code points whose simple case folding is an ASCII letter: U+017F (s), U+212A (k). */
static int dintattn__rset_add(dintattn__rparse *ps, int set, uint32_t lo, uint32_t hi)
{
    uint32_t k;
    if (dintattn__rset_range(ps, set, lo, hi)) return -1;
    if (!ps->icase) return 0;
    if (hi >= 0x80)
        return dintattn__rerr(ps, "%s", "a non-ASCII character under (?i:) (only ASCII letters are case-folded)");
    for (k = 0; k < 2; k++) { /* k = 0: A-Z, 1: a-z */
        uint32_t first = k ? 'a' : 'A', last = first + 25, s = first + 18, kel = first + 10;
        uint32_t a = lo > first ? lo : first, b = hi < last ? hi : last;
        if (a > b) continue;
        if (dintattn__rset_range(ps, set, a ^ 0x20, b ^ 0x20)) return -1;
        if (a <= s && b >= s && dintattn__rset_range(ps, set, 0x17F, 0x17F)) return -1;
        if (a <= kel && b >= kel && dintattn__rset_range(ps, set, 0x212A, 0x212A)) return -1;
    }
    return 0;
}

/* \p{X}: the class mask of X, or 0 if X is not one the matcher knows. */
static uint32_t dintattn__rprop(const char *name)
{
    static const struct {
        const char *name;
        uint32_t mask;
    } props[] = {
        {"L", DINTATTN__GCM_L}, {"Lu", DINTATTN__GCM(LU)}, {"Ll", DINTATTN__GCM(LL)}, {"Lt", DINTATTN__GCM(LT)},
        {"Lm", DINTATTN__GCM(LM)}, {"Lo", DINTATTN__GCM(LO)}, {"M", DINTATTN__GCM_M}, {"Mn", DINTATTN__GCM(MN)},
        {"Mc", DINTATTN__GCM(MC)}, {"Me", DINTATTN__GCM(ME)}, {"N", DINTATTN__GCM_N}, {"Nd", DINTATTN__GCM(ND)},
        {"Nl", DINTATTN__GCM(NL)}, {"No", DINTATTN__GCM(NO)}, {"P", DINTATTN__GCM(P)}, {"S", DINTATTN__GCM(S)},
    };
    size_t k;
    for (k = 0; k < sizeof props / sizeof props[0]; k++)
        if (strcmp(props[k].name, name) == 0) return props[k].mask;
    return 0;
}

/* The next code point of the pattern (which must be UTF-8), or -1. */
static long dintattn__rchar(dintattn__rparse *ps)
{
    dintattn__uchar u;
    if (ps->p >= ps->end) return dintattn__rerr(ps, "%s", "unexpected end");
    u = dintattn__uchar_at(ps->p, (size_t)(ps->end - ps->p), 0);
    if (u.cp == 0xFFFD && !(u.len == 3 && ps->p[0] == 0xEF && ps->p[1] == 0xBF && ps->p[2] == 0xBD))
        return dintattn__rerr(ps, "%s", "bytes that are not UTF-8");
    ps->p += u.len;
    return (long)u.cp;
}

static int dintattn__rhex(int c) { return c >= '0' && c <= '9' ? c - '0' : (c | 0x20) >= 'a' && (c | 0x20) <= 'f' ? (c | 0x20) - 'a' + 10 : -1; }

/* An escape after its backslash. Returns 0 with *cp set (a character) or *mask set (a class:
   \s \S \p \P), 1 for \A, \z or \Z (*cp = the anchor, outside classes only), or -1. */
static int dintattn__rescape(dintattn__rparse *ps, int in_class, long *cp, uint32_t *mask)
{
    const unsigned char *backslash = ps->p - 1;
    long c = dintattn__rchar(ps);
    int k, digits;
    *mask = 0;
    *cp = -1;
    if (c < 0) return -1;
    switch (c) {
    case 'r': *cp = '\r'; return 0;
    case 'n': *cp = '\n'; return 0;
    case 't': *cp = '\t'; return 0;
    case 'f': *cp = '\f'; return 0;
    case 'v': *cp = 0x0B; return 0;
    case 's': *mask = DINTATTN__GCM(SPACE); return 0;
    case 'S': *mask = DINTATTN__GCM_ALL & ~DINTATTN__GCM(SPACE); return 0;
    case 'A': case 'z': case 'Z':
        if (in_class) break;
        *cp = c == 'A' ? DINTATTN__RA_START : c == 'z' ? DINTATTN__RA_END : DINTATTN__RA_END_NL;
        return 1;
    case 'x': case 'u':
        *cp = 0;
        if (c == 'x' && ps->p < ps->end && *ps->p == '{') {
            for (ps->p++, digits = 0; ps->p < ps->end && *ps->p != '}'; ps->p++, digits++) {
                if ((k = dintattn__rhex(*ps->p)) < 0 || digits >= 6) return dintattn__rerr(ps, "%s", "a bad \\x{...}");
                *cp = *cp * 16 + k;
            }
            if (ps->p >= ps->end || !digits) return dintattn__rerr(ps, "%s", "a bad \\x{...}");
            ps->p++;
        } else {
            for (digits = 0; digits < (c == 'x' ? 2 : 4); digits++, ps->p++) {
                if (ps->p >= ps->end || (k = dintattn__rhex(*ps->p)) < 0)
                    return dintattn__rerr(ps, "%s", c == 'x' ? "a bad \\xHH" : "a bad \\uHHHH");
                *cp = *cp * 16 + k;
            }
        }
        if (*cp > 0x10FFFF || (*cp >= 0xD800 && *cp <= 0xDFFF))
            return dintattn__rerr(ps, "%s", "an escape that is not a Unicode scalar value");
        return 0;
    case 'p': case 'P': {
        char name[8];
        size_t n = 0;
        if (ps->icase) {
            ps->p = backslash;
            return dintattn__rerr(ps, "%s", "\\p or \\P under (?i:)");
        }
        if (ps->p < ps->end && *ps->p == '{') {
            const unsigned char *close = ps->p + 1;
            while (close < ps->end && *close != '}' && close - ps->p < 8) close++;
            if (close >= ps->end || *close != '}' || close - ps->p - 1 >= (long)sizeof name || close == ps->p + 1)
                return dintattn__rerr(ps, "%s", "a \\p{...} the matcher does not know (it knows L Lu Ll Lt Lm Lo M Mn Mc Me N Nd Nl No P S)");
            n = (size_t)(close - ps->p - 1);
            memcpy(name, ps->p + 1, n);
            ps->p = close + 1;
        } else if (ps->p < ps->end) {
            name[n++] = (char)*ps->p++;
        }
        name[n] = 0;
        if (!(*mask = dintattn__rprop(name)))
            return dintattn__rerr(ps, "%s", "a \\p{...} the matcher does not know (it knows L Lu Ll Lt Lm Lo M Mn Mc Me N Nd Nl No P S)");
        if (c == 'P') *mask = DINTATTN__GCM_ALL & ~*mask;
        return 0;
    }
    default:
        if (c < 0x80 && !((c | 0x20) >= 'a' && (c | 0x20) <= 'z') && !(c >= '0' && c <= '9')) {
            *cp = c; /* escaped punctuation stands for itself */
            return 0;
        }
    }
    {
        char what[8];
        snprintf(what, sizeof what, "\\%c", (int)(c < 0x80 ? c : '?'));
        ps->p = backslash;
        return dintattn__rerr(ps, "the escape %s (not in the subset)", what);
    }
}

/* The items of a class up to its ']' into set; a '[' opens a class nested in it, whose items
   join the set (a union, as Oniguruma and Rust's regex read it). */
static int dintattn__rclass_items(dintattn__rparse *ps, int set, int depth)
{
    int first;
    for (first = 1;; first = 0) {
        long lo, hi;
        uint32_t mask;
        if (ps->p >= ps->end) return dintattn__rerr(ps, "%s", "a class without its ']'");
        if (*ps->p == ']') {
            if (first) return dintattn__rerr(ps, "%s", "an empty class or a ']' first in one (escape it)");
            ps->p++;
            return 0;
        }
        if (*ps->p == '[') {
            if (ps->p + 1 < ps->end && (ps->p[1] == '^' || ps->p[1] == ':'))
                return dintattn__rerr(ps, "%s", "a negated or POSIX class inside a class ([^...] or [:...:] in [...])");
            if (depth >= 8) return dintattn__rerr(ps, "%s", "classes nested more than 8 deep");
            ps->p++;
            if (dintattn__rclass_items(ps, set, depth + 1)) return -1;
            continue;
        }
        if (ps->p + 1 < ps->end && ((ps->p[0] == '&' && ps->p[1] == '&') || (ps->p[0] == '-' && ps->p[1] == '-') ||
                                    (ps->p[0] == '~' && ps->p[1] == '~')))
            return dintattn__rerr(ps, "%s", "a class operation (&&, --, ~~)");
        if (*ps->p == '\\') {
            ps->p++;
            if (dintattn__rescape(ps, 1, &lo, &mask) < 0) return -1;
            if (mask) {
                ps->re->sets[set].mask |= mask;
                continue;
            }
        } else if ((lo = dintattn__rchar(ps)) < 0) {
            return -1;
        }
        hi = lo;
        if (ps->p + 1 < ps->end && ps->p[0] == '-' && ps->p[1] != ']') {
            ps->p++;
            if (*ps->p == '\\') {
                ps->p++;
                if (dintattn__rescape(ps, 1, &hi, &mask) < 0) return -1;
                if (mask) return dintattn__rerr(ps, "%s", "a range that ends in a class");
            } else if (*ps->p == '[') {
                return dintattn__rerr(ps, "%s", "a range that ends in a class");
            } else if ((hi = dintattn__rchar(ps)) < 0) {
                return -1;
            }
            if (hi < lo) return dintattn__rerr(ps, "%s", "a range whose end comes before its start");
        }
        if (dintattn__rset_add(ps, set, (uint32_t)lo, (uint32_t)hi)) return -1;
    }
}

/* [...] after its '['. */
static int dintattn__rclass(dintattn__rparse *ps)
{
    int set = dintattn__rset_new(ps);
    if (set < 0) return -1;
    if (ps->p < ps->end && *ps->p == '^') {
        ps->re->sets[set].neg = 1;
        ps->p++;
    }
    return dintattn__rclass_items(ps, set, 0) ? -1 : set;
}

static int dintattn__ralt(dintattn__rparse *ps);

/* A set node of one character or class. */
static int dintattn__rset_node(dintattn__rparse *ps, long cp, uint32_t mask, int neg)
{
    int set = dintattn__rset_new(ps), node;
    if (set < 0) return -1;
    ps->re->sets[set].mask = mask;
    ps->re->sets[set].neg = neg;
    if (cp >= 0 && dintattn__rset_add(ps, set, (uint32_t)cp, (uint32_t)cp)) return -1;
    if ((node = dintattn__rnode_new(ps, DINTATTN__RN_SET)) < 0) return -1;
    ps->nodes[node].set = set;
    return node;
}

static int dintattn__ratom(dintattn__rparse *ps)
{
    unsigned char c = *ps->p;
    long cp;
    uint32_t mask;
    int node, r;
    if (c == '(') {
        int saved_icase = ps->icase, look = -1;
        ps->p++;
        if (ps->p < ps->end && *ps->p == '?') {
            const unsigned char *q = ps->p + 1;
            ps->p--; /* errors point at the '(' */
            if (q < ps->end && *q == ':') ps->p += 3;
            else if (q + 1 < ps->end && q[0] == 'i' && q[1] == ':') ps->p += 4, ps->icase = 1;
            else if (q < ps->end && (*q == '=' || *q == '!')) look = *q == '!', ps->p += 3;
            else if (q < ps->end && *q == '<' && q + 1 < ps->end && (q[1] == '=' || q[1] == '!'))
                return dintattn__rerr(ps, "%s", "a lookbehind (?<=...) or (?<!...)");
            else if (q < ps->end && *q == '>') return dintattn__rerr(ps, "%s", "an atomic group (?>...)");
            else return dintattn__rerr(ps, "%s", "a group or inline flag other than (?:...), (?i:...), (?=...), (?!...)");
        }
        if (++ps->nest > DINTATTN__RE_MAX_NEST) return dintattn__rerr(ps, "%s", "groups nested more than 32 deep");
        if (look >= 0 && ++ps->look_nest > DINTATTN__RE_MAX_LOOK_NEST)
            return dintattn__rerr(ps, "%s", "lookaheads nested more than 4 deep");
        if ((r = dintattn__ralt(ps)) < 0) return -1;
        if (ps->p >= ps->end || *ps->p != ')') return dintattn__rerr(ps, "%s", "a '(' without its ')'");
        ps->p++;
        ps->nest--;
        ps->icase = saved_icase;
        if (look < 0) return r;
        ps->look_nest--;
        if ((node = dintattn__rnode_new(ps, DINTATTN__RN_LOOK)) < 0) return -1;
        ps->nodes[node].child = r;
        ps->nodes[node].neg = look;
        return node;
    }
    if (c == '[') {
        int set;
        ps->p++;
        if ((set = dintattn__rclass(ps)) < 0) return -1;
        if ((node = dintattn__rnode_new(ps, DINTATTN__RN_SET)) < 0) return -1;
        ps->nodes[node].set = set;
        return node;
    }
    if (c == '.') {
        ps->p++;
        return dintattn__rset_node(ps, '\n', 0, 1);
    }
    if (c == '^' || c == '$') {
        ps->p++;
        if ((node = dintattn__rnode_new(ps, DINTATTN__RN_ANCHOR)) < 0) return -1;
        ps->nodes[node].set = c == '^' ? DINTATTN__RA_LINE_START : DINTATTN__RA_LINE_END;
        return node;
    }
    if (c == '*' || c == '+' || c == '?' || c == '{')
        return dintattn__rerr(ps, "%s", "a quantifier with nothing to repeat (escape a literal '{', '*', '+' or '?')");
    if (c == '\\') {
        ps->p++;
        if ((r = dintattn__rescape(ps, 0, &cp, &mask)) < 0) return -1;
        if (r == 1) {
            if ((node = dintattn__rnode_new(ps, DINTATTN__RN_ANCHOR)) < 0) return -1;
            ps->nodes[node].set = (int)cp;
            return node;
        }
        return dintattn__rset_node(ps, mask ? -1 : cp, mask, 0);
    }
    if ((cp = dintattn__rchar(ps)) < 0) return -1;
    return dintattn__rset_node(ps, cp, 0, 0);
}

/* A decimal number of a {n,m} quantifier, at most DINTATTN__RE_MAX_REPEAT; -1 if none. */
static int dintattn__rnum(dintattn__rparse *ps)
{
    int v = 0, digits = 0;
    while (ps->p < ps->end && *ps->p >= '0' && *ps->p <= '9') {
        v = v * 10 + (*ps->p++ - '0');
        if (++digits > 4) return DINTATTN__RE_MAX_REPEAT + 1;
    }
    return digits ? v : -1;
}

static int dintattn__rrepeat(dintattn__rparse *ps)
{
    int atom = dintattn__ratom(ps), node, min, max;
    if (atom < 0) return -1;
    if (ps->p >= ps->end) return atom;
    switch (*ps->p) {
    case '?': min = 0, max = 1; ps->p++; break;
    case '*': min = 0, max = -1; ps->p++; break;
    case '+': min = 1, max = -1; ps->p++; break;
    case '{':
        ps->p++;
        min = max = dintattn__rnum(ps);
        if (min >= 0 && ps->p < ps->end && *ps->p == ',') {
            ps->p++;
            max = dintattn__rnum(ps);
        }
        if (min < 0 || ps->p >= ps->end || *ps->p != '}')
            return dintattn__rerr(ps, "%s", "a '{' that is not a repetition {n}, {n,} or {n,m} (escape it)");
        ps->p++;
        if (min > DINTATTN__RE_MAX_REPEAT || max > DINTATTN__RE_MAX_REPEAT)
            return dintattn__rerr(ps, "%s", "a repetition count over 1000");
        if (max >= 0 && max < min) return dintattn__rerr(ps, "%s", "a repetition {n,m} with m < n");
        break;
    default:
        return atom;
    }
    if ((node = dintattn__rnode_new(ps, DINTATTN__RN_REP)) < 0) return -1;
    ps->nodes[node].child = atom;
    ps->nodes[node].min = min;
    ps->nodes[node].max = max;
    if (ps->p < ps->end && (*ps->p == '?' || *ps->p == '+')) {
        /* x{n}? is x{n} to Perl, Rust and python3-regex, (?:x{n})? to Oniguruma (Ruby syntax):
           neither reading is safe to pick */
        if (*ps->p == '?' && max == min && max >= 0)
            return dintattn__rerr(ps, "%s", "x{n}? (x{n} in Perl and Rust, (?:x{n})? in Oniguruma: write the one meant)");
        ps->nodes[node].quant = *ps->p == '?' ? DINTATTN__RQ_LAZY : DINTATTN__RQ_POSSESSIVE;
        ps->p++;
        if (ps->nodes[node].quant == DINTATTN__RQ_POSSESSIVE && ps->nodes[atom].kind != DINTATTN__RN_SET)
            return dintattn__rerr(ps, "%s", "a possessive quantifier on a group (only on a character or class)");
    }
    if (ps->p < ps->end && (*ps->p == '?' || *ps->p == '*' || *ps->p == '+' || *ps->p == '{'))
        return dintattn__rerr(ps, "%s", "a quantifier on a quantifier (put the inner one in a group)");
    return node;
}

/* A list node (CAT or ALT) of children, or the single child itself. */
static int dintattn__rlist(dintattn__rparse *ps, int kind, int first, int count)
{
    int node;
    if (count == 1) return first;
    if ((node = dintattn__rnode_new(ps, count ? kind : DINTATTN__RN_EMPTY)) < 0) return -1;
    ps->nodes[node].child = first;
    return node;
}

static int dintattn__rseq(dintattn__rparse *ps)
{
    int first = -1, last = -1, count = 0, r;
    while (ps->p < ps->end && *ps->p != '|' && *ps->p != ')') {
        if ((r = dintattn__rrepeat(ps)) < 0) return -1;
        if (last >= 0) ps->nodes[last].next = r;
        else first = r;
        last = r;
        count++;
    }
    return dintattn__rlist(ps, DINTATTN__RN_CAT, first, count);
}

static int dintattn__ralt(dintattn__rparse *ps)
{
    int first = -1, last = -1, count = 0, r;
    for (;;) {
        if ((r = dintattn__rseq(ps)) < 0) return -1;
        if (last >= 0) ps->nodes[last].next = r;
        else first = r;
        last = r;
        count++;
        if (ps->p >= ps->end || *ps->p != '|') break;
        ps->p++;
    }
    return dintattn__rlist(ps, DINTATTN__RN_ALT, first, count);
}

/* Whether node n can match the empty string, and the most characters it can match. */
static int dintattn__rnullable(const dintattn__rparse *ps, int n)
{
    const dintattn__rnode *x = &ps->nodes[n];
    int c;
    switch (x->kind) {
    case DINTATTN__RN_SET: return 0;
    case DINTATTN__RN_CAT:
        for (c = x->child; c >= 0; c = ps->nodes[c].next)
            if (!dintattn__rnullable(ps, c)) return 0;
        return 1;
    case DINTATTN__RN_ALT:
        for (c = x->child; c >= 0; c = ps->nodes[c].next)
            if (dintattn__rnullable(ps, c)) return 1;
        return 0;
    case DINTATTN__RN_REP: return x->min == 0 || dintattn__rnullable(ps, x->child);
    default: return 1;
    }
}

static int dintattn__rmaxlen(const dintattn__rparse *ps, int n)
{
    const dintattn__rnode *x = &ps->nodes[n];
    long total = 0, m;
    int c;
    switch (x->kind) {
    case DINTATTN__RN_SET: return 1;
    case DINTATTN__RN_CAT:
    case DINTATTN__RN_ALT:
        for (c = x->child; c >= 0; c = ps->nodes[c].next) {
            m = dintattn__rmaxlen(ps, c);
            total = x->kind == DINTATTN__RN_CAT ? total + m : (m > total ? m : total);
        }
        return total > DINTATTN__RE_INF ? DINTATTN__RE_INF : (int)total;
    case DINTATTN__RN_REP:
        m = dintattn__rmaxlen(ps, x->child);
        if (m == 0) return 0;
        if (x->max < 0) return DINTATTN__RE_INF;
        total = m * x->max;
        return total > DINTATTN__RE_INF ? DINTATTN__RE_INF : (int)total;
    default: return 0;
    }
}

/* Checks what the syntax alone does not: unbounded repetitions of what can match empty,
   lookahead bodies too long. */
static int dintattn__rcheck(dintattn__rparse *ps)
{
    int n;
    for (n = 0; n < ps->n_nodes; n++) {
        const dintattn__rnode *x = &ps->nodes[n];
        if (x->kind == DINTATTN__RN_REP && x->max < 0 && dintattn__rnullable(ps, x->child))
            return dintattn__rerr(ps, "%s", "an unbounded repetition of something that can match the empty string");
        if (x->kind == DINTATTN__RN_LOOK && dintattn__rmaxlen(ps, x->child) > DINTATTN__RE_MAX_LOOK_LEN)
            return dintattn__rerr(ps, "%s", "a lookahead whose body can span more than 64 characters");
    }
    return 0;
}

static int dintattn__remit(dintattn__rparse *ps, int op, int x, int y)
{
    dintattn__regex *re = ps->re;
    dintattn__rinst *in;
    if (re->n_insts >= DINTATTN__RE_MAX_INSTS)
        return dintattn__rerr(ps, "%s", "a pattern that compiles to more than 8192 instructions (repetitions are unrolled)");
    if (dintattn__grow((void **)&re->insts, &re->cap_insts, re->n_insts, sizeof *re->insts)) return dintattn__rnomem(ps);
    in = &re->insts[re->n_insts];
    memset(in, 0, sizeof *in);
    in->op = op;
    in->x = x;
    in->y = y;
    in->memo = -1;
    if (op == DINTATTN__RI_SPLIT) in->memo = re->n_memo++;
    if (op == DINTATTN__RI_LOOK) {
        in->memo = re->n_memo;
        re->n_memo += 2;
    }
    return re->n_insts++;
}

/* Emits SPLIT(first choice: body at pc + 1; then y, patched later), or the lazy way round. */
static int dintattn__rsplit(dintattn__rparse *ps, int lazy)
{
    int pc = dintattn__remit(ps, DINTATTN__RI_SPLIT, 0, 0);
    if (pc >= 0 && lazy) ps->re->insts[pc].y = pc + 1;
    else if (pc >= 0) ps->re->insts[pc].x = pc + 1;
    return pc;
}

/* Patches the "other" branch of the SPLIT at pc to target. */
static void dintattn__rpatch(dintattn__regex *re, int pc, int target, int lazy)
{
    if (lazy) re->insts[pc].x = target;
    else re->insts[pc].y = target;
}

static int dintattn__rcompile(dintattn__rparse *ps, int n)
{
    const dintattn__rnode *x = &ps->nodes[n];
    dintattn__regex *re = ps->re;
    int c, pc, k;
    switch (x->kind) {
    case DINTATTN__RN_EMPTY: return 0;
    case DINTATTN__RN_SET: return dintattn__remit(ps, DINTATTN__RI_SET, x->set, 0) < 0 ? -1 : 0;
    case DINTATTN__RN_ANCHOR: return dintattn__remit(ps, DINTATTN__RI_ANCHOR, x->set, 0) < 0 ? -1 : 0;
    case DINTATTN__RN_CAT:
        for (c = x->child; c >= 0; c = ps->nodes[c].next)
            if (dintattn__rcompile(ps, c)) return -1;
        return 0;
    case DINTATTN__RN_ALT: {
        int jumps = -1; /* a chain of JMPs to patch, linked through their x */
        for (c = x->child; c >= 0; c = ps->nodes[c].next) {
            int split = -1;
            if (ps->nodes[c].next >= 0 && (split = dintattn__rsplit(ps, 0)) < 0) return -1;
            if (dintattn__rcompile(ps, c)) return -1;
            if (ps->nodes[c].next >= 0) {
                if ((pc = dintattn__remit(ps, DINTATTN__RI_JMP, jumps, 0)) < 0) return -1;
                jumps = pc;
                dintattn__rpatch(re, split, re->n_insts, 0);
            }
        }
        while (jumps >= 0) {
            int next = re->insts[jumps].x;
            re->insts[jumps].x = re->n_insts;
            jumps = next;
        }
        return 0;
    }
    case DINTATTN__RN_LOOK:
        if ((pc = dintattn__remit(ps, DINTATTN__RI_LOOK, 0, 0)) < 0) return -1;
        re->insts[pc].x = pc + 1;
        re->insts[pc].neg = x->neg;
        if (dintattn__rcompile(ps, x->child) || dintattn__remit(ps, DINTATTN__RI_MATCH, 0, 0) < 0) return -1;
        ps->re->insts[pc].y = ps->re->n_insts;
        return 0;
    case DINTATTN__RN_REP: {
        int lazy = x->quant == DINTATTN__RQ_LAZY, first_split = -1;
        if (x->quant == DINTATTN__RQ_POSSESSIVE) {
            if ((pc = dintattn__remit(ps, DINTATTN__RI_SPAN, ps->nodes[x->child].set, 0)) < 0) return -1;
            re->insts[pc].min = x->min;
            re->insts[pc].max = x->max;
            if (x->max < 0) re->insts[pc].memo = re->n_runs++;
            return 0;
        }
        for (k = 0; k < x->min; k++)
            if (dintattn__rcompile(ps, x->child)) return -1;
        if (x->max < 0) { /* L: SPLIT(body, out); body; JMP L */
            if ((pc = dintattn__rsplit(ps, lazy)) < 0 || dintattn__rcompile(ps, x->child) ||
                dintattn__remit(ps, DINTATTN__RI_JMP, pc, 0) < 0)
                return -1;
            dintattn__rpatch(re, pc, re->n_insts, lazy);
            return 0;
        }
        /* max - min nested optionals: (x(x(x)?)?)?; every SPLIT's way out goes to the end */
        for (k = x->min; k < x->max; k++) {
            if ((pc = dintattn__rsplit(ps, lazy)) < 0 || dintattn__rcompile(ps, x->child)) return -1;
            re->insts[pc].neg = first_split; /* chained for patching; neg is unused by SPLIT */
            first_split = pc;
        }
        while (first_split >= 0) {
            int next = re->insts[first_split].neg;
            re->insts[first_split].neg = 0;
            dintattn__rpatch(re, first_split, re->n_insts, lazy);
            first_split = next;
        }
        return 0;
    }
    }
    return dintattn__rerr(ps, "%s", "an internal error (unknown node)");
}

/* Compiles pattern[0..len) into re (zeroed). Returns DINTATTN_OK, DINTATTN_ERR_TOKENIZER with the
   reason, or DINTATTN_ERR_NOMEM. */
static dintattn_result dintattn__regex_compile(dintattn__regex *re, const char *pattern, size_t len,
                                                dintattn_error *err)
{
    dintattn__rparse ps;
    int root;
    memset(&ps, 0, sizeof ps);
    memset(re, 0, sizeof *re);
    ps.pat = ps.p = (const unsigned char *)pattern;
    ps.end = ps.p + len;
    ps.re = re;
    if (len > DINTATTN__RE_MAX_LEN) {
        ps.p = ps.pat;
        root = dintattn__rerr(&ps, "%s", "a pattern longer than 65536 bytes");
    } else {
        root = dintattn__ralt(&ps);
    }
    if (root >= 0 && ps.p < ps.end) root = dintattn__rerr(&ps, "%s", "a ')' without its '('");
    if (root >= 0 && dintattn__rcheck(&ps)) root = -1;
    if (root >= 0 && dintattn__rnullable(&ps, root)) {
        ps.p = ps.pat;
        root = dintattn__rerr(&ps, "%s", "a pattern that can match the empty string");
    }
    if (root >= 0 && (dintattn__rcompile(&ps, root) || dintattn__remit(&ps, DINTATTN__RI_MATCH, 0, 0) < 0)) root = -1;
    DINTATTN_FREE(ps.nodes);
    if (root < 0) {
        dintattn__regex_free(re);
        return dintattn__fail(err, ps.nomem ? DINTATTN_ERR_NOMEM : DINTATTN_ERR_TOKENIZER, "%s", ps.msg);
    }
    return DINTATTN_OK;
}

/* Whether the character (cp, class g) is in set s. */
static int dintattn__rin(const dintattn__regex *re, const dintattn__rset *s, uint32_t cp, int g)
{
    int in = (int)((s->mask >> g) & 1), k;
    const uint32_t *r = s->count ? re->ranges + 2 * s->first : NULL; /* no ranges at all: NULL */
    for (k = 0; !in && k < s->count; k++) in = cp >= r[2 * k] && cp <= r[2 * k + 1];
    return in != s->neg;
}

/* The decoded text: characters [0, n) with code points, classes and byte offsets (off[n] is the
   byte length). */
typedef struct dintattn__rtext {
    uint32_t *cp;
    unsigned char *gc;
    int *off;
    int n;
} dintattn__rtext;

/* A search over one subject [lo, hi) of the text with one pattern: memo bits (row * (hi - lo +
   1) + pos - lo), the unbounded possessive spans' run ends (the same layout; end + 1, 0 while
   unknown: each is scanned once), and the backtracking stack (pairs: pc >= 0 and a position to
   try, or -1 - row and a position to mark failed). */
typedef struct dintattn__rctx {
    const dintattn__regex *re;
    const dintattn__rtext *text;
    int lo, hi;
    uint64_t *memo;
    size_t cap_memo;   /* in words */
    int *runs;
    size_t cap_runs;
    int *stack;
    int n_stack, cap_stack;
} dintattn__rctx;

static int dintattn__rbit(const dintattn__rctx *c, int row, int pos)
{
    size_t b = (size_t)row * (size_t)(c->hi - c->lo + 1) + (size_t)(pos - c->lo);
    return (int)((c->memo[b >> 6] >> (b & 63)) & 1);
}

static void dintattn__rset_bit(dintattn__rctx *c, int row, int pos)
{
    size_t b = (size_t)row * (size_t)(c->hi - c->lo + 1) + (size_t)(pos - c->lo);
    c->memo[b >> 6] |= (uint64_t)1 << (b & 63);
}

static int dintattn__rpush(dintattn__rctx *c, int pc, int pos)
{
    if (c->n_stack + 2 > c->cap_stack) {
        int cap = c->cap_stack ? c->cap_stack : 64;
        void *q;
        if (cap > INT_MAX / 4) return -1;
        if (!(q = DINTATTN_REALLOC(c->stack, (size_t)cap * 2 * sizeof *c->stack))) return -1;
        c->stack = (int *)q;
        c->cap_stack = cap * 2;
    }
    c->stack[c->n_stack++] = pc;
    c->stack[c->n_stack++] = pos;
    return 0;
}

/* Prepares c to search subject [lo, hi). Returns 0, or -1 for want of memory. */
static int dintattn__rctx_reset(dintattn__rctx *c, int lo, int hi)
{
    const dintattn__regex *re = c->re;
    size_t bits = (size_t)re->n_memo * (size_t)(hi - lo + 1), words = bits / 64 + 1;
    c->lo = lo;
    c->hi = hi;
    if (words > c->cap_memo) {
        size_t cap = c->cap_memo * 2 > words ? c->cap_memo * 2 : words;
        void *q = cap > SIZE_MAX / sizeof *c->memo ? NULL : DINTATTN_REALLOC(c->memo, cap * sizeof *c->memo);
        if (!q) return -1;
        c->memo = (uint64_t *)q;
        c->cap_memo = cap;
    }
    memset(c->memo, 0, words * sizeof *c->memo);
    words = (size_t)re->n_runs * (size_t)(hi - lo + 1); /* ints */
    if (words > c->cap_runs) {
        size_t cap = c->cap_runs * 2 > words ? c->cap_runs * 2 : words;
        void *q = cap > SIZE_MAX / sizeof *c->runs ? NULL : DINTATTN_REALLOC(c->runs, cap * sizeof *c->runs);
        if (!q) return -1;
        c->runs = (int *)q;
        c->cap_runs = cap;
    }
    if (words) memset(c->runs, 0, words * sizeof *c->runs);
    c->n_stack = 0;
    return 0;
}

/* Runs the program from pc at pos (a match attempt, or a lookahead's body). Returns where the
   match ends, -1 if there is none, -2 for want of memory. */
static int dintattn__rrun(dintattn__rctx *c, int pc, int pos)
{
    const dintattn__regex *re = c->re;
    const dintattn__rtext *t = c->text;
    int base = c->n_stack;
    if (dintattn__rpush(c, pc, pos)) return -2;
    while (c->n_stack > base) {
        c->n_stack -= 2;
        pc = c->stack[c->n_stack];
        pos = c->stack[c->n_stack + 1];
        if (pc < 0) { /* every way on from this branch point failed */
            dintattn__rset_bit(c, -1 - pc, pos);
            continue;
        }
        for (;;) {
            const dintattn__rinst *in = &re->insts[pc];
            if (in->op == DINTATTN__RI_SET) {
                if (pos >= c->hi || !dintattn__rin(re, &re->sets[in->x], t->cp[pos], t->gc[pos])) break;
                pos++;
                pc++;
            } else if (in->op == DINTATTN__RI_SPLIT) {
                if (dintattn__rbit(c, in->memo, pos)) break;
                if (dintattn__rpush(c, -1 - in->memo, pos) || dintattn__rpush(c, in->y, pos)) return -2;
                pc = in->x;
            } else if (in->op == DINTATTN__RI_JMP) {
                pc = in->x;
            } else if (in->op == DINTATTN__RI_SPAN) {
                const dintattn__rset *s = &re->sets[in->x];
                int end = pos;
                if (in->max < 0) { /* the run's end, scanned once for all its positions */
                    int *row = c->runs + (size_t)in->memo * (size_t)(c->hi - c->lo + 1) - c->lo, q;
                    if (!row[pos]) {
                        while (end < c->hi && !row[end] && dintattn__rin(re, s, t->cp[end], t->gc[end])) end++;
                        q = end;
                        if (row[q]) end = row[q] - 1;
                        for (; pos <= q; q--)
                            if (!row[q]) row[q] = end + 1;
                    }
                    end = row[pos] - 1;
                } else {
                    while (end < c->hi && end - pos < in->max && dintattn__rin(re, s, t->cp[end], t->gc[end])) end++;
                }
                if (end - pos < in->min) break;
                pos = end;
                pc++;
            } else if (in->op == DINTATTN__RI_LOOK) {
                int ok;
                if (!dintattn__rbit(c, in->memo, pos)) {
                    int r = dintattn__rrun(c, in->x, pos);
                    if (r == -2) return -2;
                    dintattn__rset_bit(c, in->memo, pos);
                    if (r >= 0) dintattn__rset_bit(c, in->memo + 1, pos);
                }
                ok = dintattn__rbit(c, in->memo + 1, pos);
                if (ok == in->neg) break;
                pc = in->y;
            } else if (in->op == DINTATTN__RI_ANCHOR) {
                int ok;
                switch (in->x) {
                case DINTATTN__RA_START: ok = pos == c->lo; break;
                case DINTATTN__RA_END: ok = pos == c->hi; break;
                case DINTATTN__RA_LINE_START: ok = pos == c->lo || t->cp[pos - 1] == '\n'; break;
                case DINTATTN__RA_LINE_END: ok = pos == c->hi || t->cp[pos] == '\n'; break;
                default: ok = pos == c->hi || (pos + 1 == c->hi && t->cp[pos] == '\n'); break;
                }
                if (!ok) break;
                pc++;
            } else { /* MATCH */
                c->n_stack = base;
                return pos;
            }
        }
    }
    return -1;
}

/* Where the pieces of a split go: one call per piece, characters [lo, hi) of the text. */
typedef int (*dintattn__rsink)(void *user, int lo, int hi);

/* Splits subject [lo, hi) with patterns stage.. of the split (each piece of one goes through
   the next), giving every final piece to sink. Returns 0, -1 for want of memory, or the sink's
   nonzero result. */
static int dintattn__rsplit_stage(const dintattn__split *sp, dintattn__rctx *ctx, int stage, int lo, int hi,
                                  dintattn__rsink sink, void *user);

/* A stage's segments in order (matches and the text between), turned into pieces by its
   behavior: a piece waits in [*p0, *p1) (*p0 < 0: none; *pm: whether its last segment was a
   match) until the next segment shows whether it grows. a < 0 flushes it. */
static int dintattn__rsegment(const dintattn__split *sp, dintattn__rctx *ctx, int stage, int a, int b, int m, int *p0,
                              int *p1, int *pm, dintattn__rsink sink, void *user)
{
    int r, behavior = sp->behavior[stage], join = 0;
    if (a >= 0) {
        m ^= sp->invert[stage];
        if (behavior == DINTATTN__RB_ISOLATED || (behavior == DINTATTN__RB_REMOVED && !m))
            return dintattn__rsplit_stage(sp, ctx, stage + 1, a, b, sink, user);
        if (behavior == DINTATTN__RB_REMOVED) return 0;
        if (*p0 >= 0)
            join = behavior == DINTATTN__RB_CONTIGUOUS ? m == *pm
                 : behavior == DINTATTN__RB_MERGED_PREV ? m && !*pm
                                                         : !m && *pm; /* MERGED_NEXT */
        if (join) {
            *p1 = b;
            *pm = m;
            return 0;
        }
    }
    if (*p0 >= 0 && (r = dintattn__rsplit_stage(sp, ctx, stage + 1, *p0, *p1, sink, user))) return r;
    *p0 = a;
    *p1 = b;
    *pm = m;
    return 0;
}

static int dintattn__rsplit_stage(const dintattn__split *sp, dintattn__rctx *ctx, int stage, int lo, int hi,
                                  dintattn__rsink sink, void *user)
{
    dintattn__rctx *c = &ctx[stage];
    int pos = lo, s, r, p0 = -1, p1 = -1, pm = 0;
    if (stage == sp->n) return sink(user, lo, hi);
    if (dintattn__rctx_reset(c, lo, hi)) return -1;
    while (pos < hi) {
        int end = -1;
        for (s = pos; s < hi && end < 0; s++)
            if ((end = dintattn__rrun(c, 0, s)) == -2) return -1;
        s--;
        if (end < 0) { /* no match in the rest */
            s = hi;
            end = hi;
        }
        /* the text no match covers, then the match (never empty: such patterns are refused); the
           next stage resets its own context, so this one's memo stays valid */
        if (s > pos && (r = dintattn__rsegment(sp, ctx, stage, pos, s, 0, &p0, &p1, &pm, sink, user))) return r;
        if (end > s && (r = dintattn__rsegment(sp, ctx, stage, s, end, 1, &p0, &p1, &pm, sink, user))) return r;
        pos = end;
    }
    return dintattn__rsegment(sp, ctx, stage, -1, -1, 0, &p0, &p1, &pm, sink, user);
}

/* Decodes s[0..n) into t (arrays grown as needed). Returns 0, or -1 for want of memory. */
static int dintattn__rdecode(dintattn__rtext *t, const unsigned char *s, size_t n)
{
    size_t i;
    int k = 0;
    DINTATTN_FREE(t->cp);
    t->cp = NULL;
    if (n > (SIZE_MAX - sizeof *t->off) / (sizeof *t->cp + 1 + sizeof *t->off)) return -1;
    t->cp = (uint32_t *)dintattn__alloc(n * (sizeof *t->cp + 1 + sizeof *t->off) + sizeof *t->off);
    if (!t->cp) return -1;
    t->off = (int *)(void *)(t->cp + n);
    t->gc = (unsigned char *)(t->off + n + 1);
    for (i = 0; i < n; k++) {
        dintattn__uchar u = dintattn__uchar_at(s, n, i);
        t->cp[k] = u.cp;
        t->gc[k] = (unsigned char)(u.cp < 0x80 && u.cls != DINTATTN__UC_OTHER
                                       ? (u.cls == DINTATTN__UC_SPACE ? DINTATTN__GC_SPACE
                                          : u.cls == DINTATTN__UC_NUMBER ? DINTATTN__GC_ND
                                          : u.cp >= 'a' ? DINTATTN__GC_LL : DINTATTN__GC_LU)
                                       : dintattn__gc(u.cp));
        t->off[k] = (int)i;
        i += u.len;
    }
    t->off[k] = (int)n;
    t->n = k;
    return 0;
}

static void dintattn__rfree_ctx(dintattn__rctx *ctx, int n)
{
    int k;
    for (k = 0; k < n; k++) {
        DINTATTN_FREE(ctx[k].memo);
        DINTATTN_FREE(ctx[k].runs);
        DINTATTN_FREE(ctx[k].stack);
    }
}

/* Splits s[0..n) (n <= INT_MAX) with sp, giving the pieces as character ranges of *text (which the
   caller frees: DINTATTN_FREE(text->cp)). Returns 0, -1 for want of memory, or sink's result. */
static int dintattn__rsplit_text(const dintattn__split *sp, dintattn__rtext *text, const unsigned char *s, size_t n,
                                 dintattn__rsink sink, void *user)
{
    dintattn__rctx ctx[DINTATTN__RE_MAX_STAGES];
    int k, r;
    memset(ctx, 0, sizeof ctx);
    if (dintattn__rdecode(text, s, n)) return -1;
    for (k = 0; k < sp->n; k++) {
        ctx[k].re = &sp->re[k];
        ctx[k].text = text;
    }
    r = dintattn__rsplit_stage(sp, ctx, 0, 0, text->n, sink, user);
    dintattn__rfree_ctx(ctx, sp->n);
    return r;
}

/* The split patterns the tokenizer knows by name, verbatim from their sources: tiktoken's
   tiktoken_ext/openai_public.py (gpt2 = r50k_base = p50k_base, as HF's ByteLevel regex too, and
   GPT-NeoX's; cl100k_base as it was first published, which is also Llama-3's tokenizer.json;
   o200k_base), Qwen2's tokenizer.json (Qwen3's is the same), DeepSeek-V3's tokenizer.json
   (three Splits in a Sequence; its CJK class written here with \u escapes). cl100k and llama3
   split by hand (dintattn__pretok): no pattern is compiled for them. */
static const struct {
    const char *name;
    const char *re[3];
} dintattn__patterns[] = {
    {"cl100k", {NULL, NULL, NULL}},
    {"llama3", {NULL, NULL, NULL}},
    {"gpt2", {"'s|'t|'re|'ve|'m|'ll|'d| ?\\p{L}+| ?\\p{N}+| ?[^\\s\\p{L}\\p{N}]+|\\s+(?!\\S)|\\s+", NULL, NULL}},
    {"r50k", {"'s|'t|'re|'ve|'m|'ll|'d| ?\\p{L}+| ?\\p{N}+| ?[^\\s\\p{L}\\p{N}]+|\\s+(?!\\S)|\\s+", NULL, NULL}},
    {"p50k", {"'s|'t|'re|'ve|'m|'ll|'d| ?\\p{L}+| ?\\p{N}+| ?[^\\s\\p{L}\\p{N}]+|\\s+(?!\\S)|\\s+", NULL, NULL}},
    {"o200k",
     {"[^\\r\\n\\p{L}\\p{N}]?[\\p{Lu}\\p{Lt}\\p{Lm}\\p{Lo}\\p{M}]*[\\p{Ll}\\p{Lm}\\p{Lo}\\p{M}]+(?i:'s|'t|'re|'ve|'m|'ll|'d)?"
      "|[^\\r\\n\\p{L}\\p{N}]?[\\p{Lu}\\p{Lt}\\p{Lm}\\p{Lo}\\p{M}]+[\\p{Ll}\\p{Lm}\\p{Lo}\\p{M}]*(?i:'s|'t|'re|'ve|'m|'ll|'d)?"
      "|\\p{N}{1,3}| ?[^\\s\\p{L}\\p{N}]+[\\r\\n/]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+",
      NULL, NULL}},
    {"qwen2",
     {"(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\\r\\n\\p{L}\\p{N}]?\\p{L}+|\\p{N}| ?[^\\s\\p{L}\\p{N}]+[\\r\\n]*|\\s*[\\r\\n]+"
      "|\\s+(?!\\S)|\\s+",
      NULL, NULL}},
    {"deepseek_v3",
     {"\\p{N}{1,3}", "[\\u4E00-\\u9FA5\\u3040-\\u309F\\u30A0-\\u30FF]+",
      "[!\"#$%&'()*+,\\-./:;<=>?@\\[\\\\\\]^_`{|}~][A-Za-z]+|[^\\r\\n\\p{L}\\p{P}\\p{S}]?[\\p{L}\\p{M}]+"
      "| ?[\\p{P}\\p{S}]+[\\r\\n]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+"}},
};

/* Puts prefix before err's message (cutting its end if the two do not fit). */
static void dintattn__err_prefix(dintattn_error *err, const char *prefix)
{
    size_t p = strlen(prefix), m, cap = sizeof err->message;
    if (!err || p >= cap) return;
    m = strlen(err->message);
    if (p + m >= cap) m = cap - 1 - p;
    memmove(err->message + p, err->message, m);
    memcpy(err->message, prefix, p);
    err->message[p + m] = 0;
}

/* An error of code `from` that is the file's fault (a pattern that does not compile, a duplicate
   added token): DINTATTN_ERR_METADATA, the message saying where. Other codes pass through. */
static dintattn_result dintattn__file_fault(dintattn_result r, dintattn_result from, dintattn_error *err)
{
    if (r != from) return r;
    dintattn__err_prefix(err, "metadata 'tokenizer': ");
    if (err) err->code = DINTATTN_ERR_METADATA;
    return DINTATTN_ERR_METADATA;
}

static void dintattn__split_free(dintattn__split *sp)
{
    int k;
    if (!sp) return;
    for (k = 0; k < sp->n; k++) dintattn__regex_free(&sp->re[k]);
    DINTATTN_FREE(sp);
}

/* Compiles n patterns (applied in sequence) into *out; n == 0 is the hand-written cl100k (*out
   = NULL). Lengths: lens[k], or strlen if lens is NULL. */
static dintattn_result dintattn__split_new(const char *const *re, const size_t *lens, int n, dintattn__split **out,
                                           dintattn_error *err)
{
    dintattn__split *sp;
    dintattn_result r;
    int k;
    *out = NULL;
    if (n == 0) return DINTATTN_OK;
    if (n < 0 || n > DINTATTN__RE_MAX_STAGES)
        return dintattn__fail(err, DINTATTN_ERR_TOKENIZER, "a split takes 1 to %d patterns, not %d",
                              DINTATTN__RE_MAX_STAGES, n);
    if (!(sp = (dintattn__split *)dintattn__calloc(1, sizeof *sp))) return dintattn__fail(err, DINTATTN_ERR_NOMEM, "out of memory");
    for (k = 0; k < n; k++) {
        if (!re[k]) {
            dintattn__split_free(sp);
            return dintattn__fail(err, DINTATTN_ERR_ARG, "split pattern %d is NULL", k);
        }
        if ((r = dintattn__regex_compile(&sp->re[k], re[k], lens ? lens[k] : strlen(re[k]), err))) {
            if (n > 1) {
                char prefix[32];
                snprintf(prefix, sizeof prefix, "split pattern %d: ", k + 1);
                dintattn__err_prefix(err, prefix);
            }
            dintattn__split_free(sp);
            return r;
        }
        sp->n = k + 1;
    }
    *out = sp;
    return DINTATTN_OK;
}

/* The patterns of a known name: returns their count (0: by hand) or -1 if the name is unknown. */
static int dintattn__pattern_named(const char *name, size_t len, const char *const **re)
{
    size_t k;
    int n;
    for (k = 0; k < sizeof dintattn__patterns / sizeof dintattn__patterns[0]; k++)
        if (strlen(dintattn__patterns[k].name) == len && memcmp(dintattn__patterns[k].name, name, len) == 0) {
            for (n = 0; n < 3 && dintattn__patterns[k].re[n]; n++) continue;
            *re = dintattn__patterns[k].re;
            return n;
        }
    return -1;
}

/* A split stage of a tokenizer's metadata: REGEX, or {"regex": REGEX, "behavior": HF's name,
   "invert": BOOL}. 0, or -1 if e is not one. */
static int dintattn__stage_from_json(const dintattn__json *j, const dintattn__jnode *e, const char **re, size_t *len,
                                     int *behavior, int *invert)
{
    static const char *const behaviors[] = {"Isolated", "Removed", "MergedWithPrevious", "MergedWithNext", "Contiguous"};
    const dintattn__jnode *v, *b, *inv;
    int k = 0;
    *behavior = *invert = 0;
    if (e->type == DINTATTN__JOBJ) {
        v = dintattn__json_get(j, e, "regex");
        b = dintattn__json_get(j, e, "behavior");
        inv = dintattn__json_get(j, e, "invert");
        if (!v || v->type != DINTATTN__JSTR || (b && b->type != DINTATTN__JSTR) || (inv && inv->type != DINTATTN__JBOOL) ||
            e->n_children != 1 + !!b + !!inv)
            return -1;
        for (k = 0; b && k < 5 && strcmp(b->str, behaviors[k]) != 0; k++) continue;
        if (k == 5) return -1;
        *behavior = b ? k : 0;
        *invert = inv && inv->boolean;
        e = v;
    }
    if (e->type != DINTATTN__JSTR) return -1;
    *re = e->str;
    *len = e->str_len;
    return 0;
}

/* The split a tokenizer's metadata asks for ("pattern": NAME or {"regex": R or [STAGE, ...]}),
   into *out (NULL: the hand-written cl100k). */
static dintattn_result dintattn__split_from_json(const dintattn__json *j, const dintattn__jnode *pat,
                                                 dintattn__split **out, dintattn_error *err)
{
    const char *re[DINTATTN__RE_MAX_STAGES] = {NULL};
    size_t lens[DINTATTN__RE_MAX_STAGES] = {0};
    int behavior[DINTATTN__RE_MAX_STAGES] = {0}, invert[DINTATTN__RE_MAX_STAGES] = {0};
    const char *const *named;
    const dintattn__jnode *rx;
    dintattn_result r;
    int n = 0, c, k;
    *out = NULL;
    if (!pat) return DINTATTN_OK;
    if (pat->type == DINTATTN__JSTR) {
        if ((n = dintattn__pattern_named(pat->str, pat->str_len, &named)) < 0)
            return dintattn__fail(err, DINTATTN_ERR_METADATA,
                                  "metadata 'tokenizer': unknown \"pattern\" '%.60s' (known: cl100k llama3 gpt2 r50k "
                                  "p50k o200k qwen2 deepseek_v3, or {\"regex\": ...})", pat->str);
        r = dintattn__split_new(named, NULL, n, out, err);
    } else {
        rx = pat->type == DINTATTN__JOBJ && pat->n_children == 1 ? dintattn__json_get(j, pat, "regex") : NULL;
        if (rx && rx->type == DINTATTN__JSTR) {
            re[0] = rx->str;
            lens[0] = rx->str_len;
            n = 1;
        } else if (rx && rx->type == DINTATTN__JARR && rx->n_children >= 1 &&
                   rx->n_children <= DINTATTN__RE_MAX_STAGES) {
            for (c = rx->child; c >= 0; c = j->nodes[c].next, n++)
                if (dintattn__stage_from_json(j, &j->nodes[c], &re[n], &lens[n], &behavior[n], &invert[n])) break;
            if (c >= 0) rx = NULL;
        } else {
            rx = NULL;
        }
        if (!rx)
            return dintattn__fail(err, DINTATTN_ERR_METADATA,
                                  "metadata 'tokenizer': \"pattern\" must be a name or {\"regex\": REGEX or [STAGE, ...]} "
                                  "(1 to %d; a STAGE is REGEX or {\"regex\": REGEX, \"behavior\": \"Isolated\", "
                                  "\"Removed\", \"MergedWithPrevious\", \"MergedWithNext\" or \"Contiguous\", "
                                  "\"invert\": BOOL})", DINTATTN__RE_MAX_STAGES);
        r = dintattn__split_new(re, lens, n, out, err);
        for (k = 0; !r && k < n; k++) {
            (*out)->behavior[k] = behavior[k];
            (*out)->invert[k] = invert[k];
        }
    }
    return dintattn__file_fault(r, DINTATTN_ERR_TOKENIZER, err);
}

/* --- the tokenizer's parts -------------------------------------------------------------------

   Encoding runs HF tokenizers' pipeline (a tiktoken rank file is the special case with no
   normalizer, one split and rank merging):
     1. added tokens whose text is matched as given are cut out of the text (HF's leftmost-longest
        search, with each token's single_word, lstrip and rstrip);
     2. each remaining segment is normalized (NFC, Prepend, Replace), and the added tokens matched
        after normalizing are cut out of it;
     3. each remaining piece goes through the pre-tokenizer's steps in order (regex splits, HF
        Metaspace, ByteLevel's prefix space), each cutting or rewriting the pieces of the last;
     4. each final piece is merged into tokens: by rank (tiktoken) or by HF's merge list (BPE),
        from its bytes (byte-level) or its characters (with byte fallback or an unknown token). */

enum { DINTATTN__TOK_TIKTOKEN, DINTATTN__TOK_BPE };
enum { DINTATTN__NS_NFC, DINTATTN__NS_PREPEND, DINTATTN__NS_REPLACE };
enum { DINTATTN__PS_SPLIT, DINTATTN__PS_METASPACE, DINTATTN__PS_PREFIX_SPACE };
enum { DINTATTN__MS_ALWAYS, DINTATTN__MS_FIRST, DINTATTN__MS_NEVER };
#define DINTATTN__TOK_MAX_STEPS 16    /* normalizer or pre-tokenizer steps */
#define DINTATTN__ADDED_MAX_LEN 4096  /* bytes of an added token's text */

typedef struct dintattn__token {
    uint32_t off, len;   /* the token's bytes: bytes[off .. off + len) */
    uint32_t doff, dlen; /* what decoding it gives: dec[doff .. doff + dlen) */
    int id;
    int line;            /* its line in the rank file, for error messages */
} dintattn__token;

/* An added token (HF's AddedToken; a tiktoken special token is one with special = 1). */
typedef struct dintattn__added {
    char *text;            /* its text, NUL-terminated */
    char *norm;            /* the text normalized: what a normalized token is matched as */
    char *dec;             /* what decoding it gives */
    size_t len, norm_len, dec_len;
    int id;
    unsigned char special, lstrip, rstrip, normalized, single_word;
} dintattn__added;

/* A byte trie of added tokens' texts, for the leftmost-longest search. */
typedef struct dintattn__tnode {
    int child, next; /* first child, next sibling; -1 for none */
    int tok;         /* the added token whose text ends here, or -1 */
    unsigned char byte;
} dintattn__tnode;

typedef struct dintattn__trie {
    dintattn__tnode *nodes; /* nodes[0] is the root; NULL: no tokens */
    int n, cap;
    int first[256];         /* the root's child for each first byte, or -1 */
} dintattn__trie;

/* A normalizer or pre-tokenizer step. */
typedef struct dintattn__step {
    int kind;                /* DINTATTN__NS_* or DINTATTN__PS_* */
    char *a, *b;             /* NS_PREPEND: a; NS_REPLACE: a by b; PS_METASPACE: a, the replacement */
    size_t alen, blen;
    int scheme;              /* PS_METASPACE: DINTATTN__MS_* */
    dintattn__split *split;  /* PS_SPLIT: its stages (NULL: cl100k's pattern by hand) */
} dintattn__step;

struct dintattn_tokenizer {
    int kind;                   /* DINTATTN__TOK_TIKTOKEN or DINTATTN__TOK_BPE */
    unsigned char *bytes;       /* every vocabulary token's bytes, one after another */
    unsigned char *dec;         /* what decoding each gives (bytes itself when no decoder rewrites) */
    dintattn__token *tokens;    /* sorted by id */
    int n_tokens;
    int *slots;                 /* hash table, open addressing: an index into tokens, or -1 */
    size_t mask;                /* slots - 1 (a power of two minus one) */
    size_t max_len;             /* the longest vocabulary token in bytes */
    int byte_id[256];           /* the token of each single byte, or -1 */
    int fallback_id[256];       /* byte fallback: the token "<0xHH>" of each byte, or -1 */
    int byte_level;             /* BPE starts from bytes (else from characters) */
    int byte_fallback, fuse_unk, ignore_merges, unk; /* HF BPE's options; unk: its id or -1 */
    uint64_t *merge_key;        /* BPE merges, hash table: (left id << 32 | right id) ... */
    int *merge_rank, *merge_id; /* ... -> the merge's line and the merged token (-1: empty slot) */
    size_t merge_mask;
    dintattn__step norm[DINTATTN__TOK_MAX_STEPS], pre[DINTATTN__TOK_MAX_STEPS];
    int n_norm, n_pre;
    dintattn__added *added;
    int n_added, cap_added;
    int *added_by_id;           /* indices into added, sorted by id */
    dintattn__trie raw, normalized; /* the added tokens matched in the text as given / normalized */
    char strip[8];              /* decoding cuts up to strip_start copies of strip from the start */
    size_t strip_len;           /* of the text, and up to strip_stop from its end */
    int strip_start, strip_stop;
    char ms[8];                 /* HF's Metaspace decoder: its replacement, dropped from the first */
    size_t ms_len;              /* token decoded (0: none) */
    int n_vocab, bos, eos;
    int *eos_ids, n_eos;        /* every id that ends a generation (from a model) */
    const char *source;         /* the kind of file it was read from (dintattn_tokenizer_source) */
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

/* The id of the vocabulary token with bytes p[0..n), or -1. */
static int dintattn__lookup(const dintattn_tokenizer *t, const unsigned char *p, size_t n)
{
    int k;
    if (n > t->max_len) return -1;
    k = t->slots[dintattn__slot(t, p, n)];
    return k < 0 ? -1 : t->tokens[k].id;
}

/* The vocabulary token with id `id`, or NULL. */
static const dintattn__token *dintattn__token_of(const dintattn_tokenizer *t, int id)
{
    int lo = 0, hi = t->n_tokens;
    if (id < 0) return NULL;
    if (id < t->n_tokens && t->tokens[id].id == id) return &t->tokens[id]; /* ids without gaps */
    while (lo < hi) {
        int mid = lo + (hi - lo) / 2;
        if (t->tokens[mid].id < id) lo = mid + 1;
        else hi = mid;
    }
    return lo < t->n_tokens && t->tokens[lo].id == id ? &t->tokens[lo] : NULL;
}

/* The added token with id `id`, or NULL. */
static const dintattn__added *dintattn__added_of(const dintattn_tokenizer *t, int id)
{
    int lo = 0, hi = t->n_added;
    while (lo < hi) {
        int mid = lo + (hi - lo) / 2;
        if (t->added[t->added_by_id[mid]].id < id) lo = mid + 1;
        else hi = mid;
    }
    return lo < t->n_added && t->added[t->added_by_id[lo]].id == id ? &t->added[t->added_by_id[lo]] : NULL;
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

/* Reads a decimal integer in [0, DINTATTN__MAX_RANK] from s[*i..end), stopping at its first
   non-digit; returns it, or -1 if there is none or it is too large. */
static long dintattn__read_id(const unsigned char *s, size_t *i, size_t end)
{
    long v = 0;
    size_t k = *i;
    if (k >= end || s[k] < '0' || s[k] > '9') return -1;
    for (; k < end && s[k] >= '0' && s[k] <= '9'; k++) {
        if (v > (DINTATTN__MAX_RANK - (s[k] - '0')) / 10) return -1;
        v = v * 10 + (s[k] - '0');
    }
    *i = k;
    return v;
}

/* The next line of s[0..n) from *pos: [*line, *end) without its "\n" or "\r\n"; advances *pos. */
static void dintattn__next_line(const unsigned char *s, size_t n, size_t *pos, size_t *line, size_t *end)
{
    const unsigned char *nl = (const unsigned char *)memchr(s + *pos, '\n', n - *pos);
    *line = *pos;
    *end = nl ? (size_t)(nl - s) : n;
    *pos = *end + 1;
    if (*end > *line && s[*end - 1] == '\r') (*end)--;
}

/* Parses a rank file (the vocabulary: "BASE64 ID" per line, "\n" or "\r\n" line ends, the last
   one optional, nothing else) into t. `what` names it in messages. every_byte: each single byte
   must be a token (tiktoken's rule). */
static dintattn_result dintattn__parse_ranks(dintattn_tokenizer *t, const unsigned char *s, size_t n, int every_byte,
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
    t->dec = t->bytes;
    for (pos = 0; pos < n; t->n_tokens++) {
        size_t line, end, at;
        const unsigned char *sp;
        int ln = t->n_tokens + 1;
        long got, rank;
        dintattn__token *tk = &t->tokens[t->n_tokens];
        dintattn__next_line(s, n, &pos, &line, &end);
        if (end == line) return dintattn__fail(err, DINTATTN_ERR_TOKENIZER, "%s line %d is empty", what, ln);
        sp = (const unsigned char *)memchr(s + line, ' ', end - line);
        if (!sp || sp + 1 == s + end)
            return dintattn__fail(err, DINTATTN_ERR_TOKENIZER, "%s line %d: expected 'BASE64 RANK'", what, ln);
        got = dintattn__base64(s + line, (size_t)(sp - s) - line, t->bytes + used);
        if (got < 0)
            return dintattn__fail(err, DINTATTN_ERR_TOKENIZER, "%s line %d: '%.*s' is not base64 (padded, canonical)",
                                  what, ln, (int)((size_t)(sp - s) - line < 40 ? (size_t)(sp - s) - line : 40),
                                  (const char *)s + line);
        at = (size_t)(sp - s) + 1;
        if ((rank = dintattn__read_id(s, &at, end)) < 0 || at != end)
            return dintattn__fail(err, DINTATTN_ERR_TOKENIZER, "%s line %d: rank '%.*s' is not an integer in [0, %d]",
                                  what, ln, (int)(end - (size_t)(sp - s) - 1 < 20 ? end - (size_t)(sp - s) - 1 : 20),
                                  (const char *)sp + 1, DINTATTN__MAX_RANK);
        tk->off = tk->doff = (uint32_t)used;
        tk->len = tk->dlen = (uint32_t)got;
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
        if ((t->byte_id[k] = dintattn__lookup(t, &b, 1)) < 0 && every_byte)
            return dintattn__fail(err, DINTATTN_ERR_TOKENIZER,
                                  "%s has no token for the byte 0x%02X: every single byte needs a rank", what, k);
    }
    t->n_vocab = t->tokens[t->n_tokens - 1].id + 1;
    return DINTATTN_OK;
}

/* The slot of merge key in t's merge table: where it is, or the empty slot where it would go. */
static size_t dintattn__merge_slot(const dintattn_tokenizer *t, uint64_t key)
{
    size_t h = (size_t)((key * 0x9E3779B97F4A7C15ull) >> 17) & t->merge_mask;
    for (;; h = (h + 1) & t->merge_mask)
        if (t->merge_id[h] < 0 || t->merge_key[h] == key) return h;
}

/* The slot of the merge of tokens a and b, or -1 if they do not merge. */
static long dintattn__merge_find(const dintattn_tokenizer *t, int a, int b)
{
    size_t h = dintattn__merge_slot(t, (uint64_t)(uint32_t)a << 32 | (uint32_t)b);
    return t->merge_id[h] < 0 ? -1 : (long)h;
}

/* Parses tensor tokenizer.merges ("LEFT RIGHT" ids per line, the rank being the line's index;
   a pair listed twice keeps its last line, as HF's table does) into t's merge table. */
static dintattn_result dintattn__parse_merges(dintattn_tokenizer *t, const unsigned char *s, size_t n,
                                              dintattn_error *err)
{
    size_t pos, lines = 0, cap = 16, i;
    unsigned char *buf;
    int ln = 0;
    if (n > (size_t)INT_MAX)
        return dintattn__fail(err, DINTATTN_ERR_TOKENIZER, "tensor 'tokenizer.merges' is larger than 2 GiB");
    for (pos = 0; pos < n; pos++) lines += s[pos] == '\n';
    lines += n && s[n - 1] != '\n';
    while (cap < 2 * lines) cap *= 2;
    t->merge_key = (uint64_t *)dintattn__alloc(cap * sizeof *t->merge_key);
    t->merge_rank = (int *)dintattn__alloc(cap * sizeof *t->merge_rank);
    t->merge_id = (int *)dintattn__alloc(cap * sizeof *t->merge_id);
    buf = (unsigned char *)dintattn__alloc(2 * t->max_len);
    if (!t->merge_key || !t->merge_rank || !t->merge_id || !buf) {
        DINTATTN_FREE(buf);
        return dintattn__fail(err, DINTATTN_ERR_NOMEM, "out of memory for tensor 'tokenizer.merges'");
    }
    for (i = 0; i < cap; i++) t->merge_id[i] = -1;
    t->merge_mask = cap - 1;
    for (pos = 0; pos < n; ln++) {
        size_t line, end, at, h;
        long a, b;
        const dintattn__token *x, *y;
        int id;
        dintattn__next_line(s, n, &pos, &line, &end);
        at = line;
        if ((a = dintattn__read_id(s, &at, end)) < 0 || at >= end || s[at++] != ' ' ||
            (b = dintattn__read_id(s, &at, end)) < 0 || at != end) {
            DINTATTN_FREE(buf);
            return dintattn__fail(err, DINTATTN_ERR_TOKENIZER, "tensor 'tokenizer.merges' line %d: expected 'ID ID'",
                                  ln + 1);
        }
        x = dintattn__token_of(t, (int)a);
        y = dintattn__token_of(t, (int)b);
        if (!x || !y) {
            DINTATTN_FREE(buf);
            return dintattn__fail(err, DINTATTN_ERR_TOKENIZER, "tensor 'tokenizer.merges' line %d: id %ld is no token",
                                  ln + 1, x ? b : a);
        }
        memcpy(buf, t->bytes + x->off, x->len);
        memcpy(buf + x->len, t->bytes + y->off, y->len);
        if ((id = dintattn__lookup(t, buf, (size_t)x->len + y->len)) < 0) {
            DINTATTN_FREE(buf);
            return dintattn__fail(err, DINTATTN_ERR_TOKENIZER,
                                  "tensor 'tokenizer.merges' line %d: tokens %ld and %ld merge into no token", ln + 1,
                                  a, b);
        }
        h = dintattn__merge_slot(t, (uint64_t)a << 32 | (uint64_t)b);
        t->merge_key[h] = (uint64_t)a << 32 | (uint64_t)b;
        t->merge_rank[h] = ln;
        t->merge_id[h] = id;
    }
    DINTATTN_FREE(buf);
    return DINTATTN_OK;
}

/* --- added tokens ------------------------------------------------------------------------ */

static void dintattn__trie_free(dintattn__trie *tr)
{
    DINTATTN_FREE(tr->nodes);
    tr->nodes = NULL;
    tr->n = tr->cap = 0;
}

/* Adds text s[0..n) ending in token tok (the first token of a text keeps it). 0, or -1. */
static int dintattn__trie_add(dintattn__trie *tr, const char *s, size_t n, int tok)
{
    int node = 0, c;
    size_t i;
    if (!tr->nodes) {
        if (dintattn__grow((void **)&tr->nodes, &tr->cap, 0, sizeof *tr->nodes)) return -1;
        tr->nodes[0].child = tr->nodes[0].next = tr->nodes[0].tok = -1;
        tr->n = 1;
        for (c = 0; c < 256; c++) tr->first[c] = -1;
    }
    for (i = 0; i < n; i++) {
        unsigned char b = (unsigned char)s[i];
        c = node ? tr->nodes[node].child : tr->first[b];
        while (c >= 0 && tr->nodes[c].byte != b) c = tr->nodes[c].next;
        if (c < 0) {
            if (dintattn__grow((void **)&tr->nodes, &tr->cap, tr->n, sizeof *tr->nodes)) return -1;
            c = tr->n++;
            tr->nodes[c].byte = b;
            tr->nodes[c].child = tr->nodes[c].tok = -1;
            if (node) {
                tr->nodes[c].next = tr->nodes[node].child;
                tr->nodes[node].child = c;
            } else {
                tr->nodes[c].next = -1;
                tr->first[b] = c;
            }
        }
        node = c;
    }
    if (tr->nodes[node].tok < 0) tr->nodes[node].tok = tok;
    return 0;
}

/* The longest text of tr that starts at s[i]: its token (and its end in *end), or -1. */
static int dintattn__trie_longest(const dintattn__trie *tr, const unsigned char *s, size_t n, size_t i, size_t *end)
{
    int node = tr->first[s[i]], found = -1;
    while (node >= 0) {
        if (tr->nodes[node].tok >= 0) {
            found = tr->nodes[node].tok;
            *end = i + 1;
        }
        if (++i >= n) break;
        for (node = tr->nodes[node].child; node >= 0 && tr->nodes[node].byte != s[i]; node = tr->nodes[node].next)
            continue;
    }
    return found;
}

/* An added token's id, text and index, to sort them by id and by text (ties: the earlier first). */
typedef struct dintattn__added_key {
    int id, k;
    const char *text;
    size_t len;
} dintattn__added_key;

static int dintattn__cmp_added_id(const void *a, const void *b)
{
    const dintattn__added_key *x = (const dintattn__added_key *)a, *y = (const dintattn__added_key *)b;
    return x->id != y->id ? (x->id > y->id) - (x->id < y->id) : (x->k > y->k) - (x->k < y->k);
}

static int dintattn__cmp_added_text(const void *a, const void *b)
{
    const dintattn__added_key *x = (const dintattn__added_key *)a, *y = (const dintattn__added_key *)b;
    int c = memcmp(x->text, y->text, x->len < y->len ? x->len : y->len);
    if (c) return c;
    return x->len != y->len ? (x->len > y->len) - (x->len < y->len) : (x->k > y->k) - (x->k < y->k);
}

/* Rebuilds the tries and the id index of t's added tokens, which must have distinct ids and
   texts (DINTATTN_ERR_ARG names the later of two). Sorting finds both in O(n log n), so a file
   with a million added tokens is checked as fast as it is read. */
static dintattn_result dintattn__index_added(dintattn_tokenizer *t, dintattn_error *err)
{
    dintattn__added_key *order;
    dintattn_result r = DINTATTN_OK;
    int k;
    dintattn__trie_free(&t->raw);
    dintattn__trie_free(&t->normalized);
    DINTATTN_FREE(t->added_by_id);
    t->added_by_id = (int *)dintattn__alloc(((size_t)t->n_added + 1) * sizeof *t->added_by_id);
    order = (dintattn__added_key *)dintattn__alloc(((size_t)t->n_added + 1) * sizeof *order);
    if (!t->added_by_id || !order) {
        DINTATTN_FREE(order);
        return dintattn__fail(err, DINTATTN_ERR_NOMEM, "out of memory");
    }
    for (k = 0; k < t->n_added; k++) {
        order[k].id = t->added[k].id;
        order[k].k = k;
        order[k].text = t->added[k].text;
        order[k].len = t->added[k].len;
    }
    qsort(order, (size_t)t->n_added, sizeof *order, dintattn__cmp_added_text);
    for (k = 1; k < t->n_added && !r; k++)
        if (order[k].len == order[k - 1].len && memcmp(order[k].text, order[k - 1].text, order[k].len) == 0)
            r = dintattn__fail(err, DINTATTN_ERR_ARG, "added token '%.60s' is already id %d", order[k].text,
                               order[k - 1].id);
    qsort(order, (size_t)t->n_added, sizeof *order, dintattn__cmp_added_id);
    for (k = 1; k < t->n_added && !r; k++)
        if (order[k].id == order[k - 1].id)
            r = dintattn__fail(err, DINTATTN_ERR_ARG, "added token '%.60s': id %d is already '%.60s'", order[k].text,
                               order[k].id, order[k - 1].text);
    for (k = 0; k < t->n_added; k++) t->added_by_id[k] = order[k].k;
    DINTATTN_FREE(order);
    for (k = 0; k < t->n_added && !r; k++) {
        const dintattn__added *a = &t->added[k];
        if (a->normalized ? dintattn__trie_add(&t->normalized, a->norm, a->norm_len, k)
                          : dintattn__trie_add(&t->raw, a->text, a->len, k))
            r = dintattn__fail(err, DINTATTN_ERR_NOMEM, "out of memory");
    }
    return r;
}

/* Rust regex's \w, as HF tests single_word tokens' neighbours with: Alphabetic (letters, Nl and
   the marks and symbols of Other_Alphabetic), marks, Nd, connector punctuation, joiners. */
static int dintattn__is_word(uint32_t cp)
{
    int g;
    if (cp < 0x80) return ((cp | 0x20) >= 'a' && (cp | 0x20) <= 'z') || (cp >= '0' && cp <= '9') || cp == '_';
    if (cp == 0x200C || cp == 0x200D || cp == 0x203F || cp == 0x2040 || cp == 0x2054 || cp == 0xFE33 ||
        cp == 0xFE34 || (cp >= 0xFE4D && cp <= 0xFE4F) || cp == 0xFF3F)
        return 1; /* Join_Control, Pc */
    if ((cp >= 0x24B6 && cp <= 0x24E9) || (cp >= 0x1F130 && cp <= 0x1F149) || (cp >= 0x1F150 && cp <= 0x1F169) ||
        (cp >= 0x1F170 && cp <= 0x1F189))
        return 1; /* circled and squared letters: So, but Other_Alphabetic */
    g = dintattn__gc(cp);
    return ((DINTATTN__GCM_L >> g) & 1) || g == DINTATTN__GC_MN || g == DINTATTN__GC_MC || g == DINTATTN__GC_ME ||
           g == DINTATTN__GC_ND || g == DINTATTN__GC_NL;
}

/* The character that ends at s[i] (0 < i <= n): its first byte in *at, its code point (U+FFFD
   for an ill-formed byte, which is then a character of its own). */
static uint32_t dintattn__uchar_before(const unsigned char *s, size_t n, size_t i, size_t *at)
{
    size_t k = i - 1, lo = i >= 4 ? i - 4 : 0;
    dintattn__uchar u;
    while (k > lo && (s[k] & 0xC0) == 0x80) k--;
    u = dintattn__uchar_at(s, n, k);
    if (k + u.len == i) {
        *at = k;
        return u.cp;
    }
    *at = i - 1;
    return 0xFFFD;
}

/* Text cut into segments: ordinary text (id -1) and added tokens. */
typedef struct dintattn__span {
    size_t a, b;
    int id;
} dintattn__span;

typedef struct dintattn__spans {
    dintattn__span *v;
    int n, cap;
} dintattn__spans;

static int dintattn__span_put(dintattn__spans *out, size_t a, size_t b, int id)
{
    if (dintattn__grow((void **)&out->v, &out->cap, out->n, sizeof *out->v)) return -1;
    out->v[out->n].a = a;
    out->v[out->n].b = b;
    out->v[out->n++].id = id;
    return 0;
}

/* Cuts s[0..n) at the added tokens of tr, as HF's AddedVocabulary::find_matches: the leftmost
   longest text of a token, then the next from its end; a match is dropped if it is a special
   token and !allow_special, or a single_word token next to a word character; lstrip and rstrip
   tokens take in the white space before / after them. 0, or -1 for want of memory. */
static int dintattn__find_added(const dintattn_tokenizer *t, const dintattn__trie *tr, const unsigned char *s,
                                size_t n, int allow_special, dintattn__spans *out)
{
    size_t i = 0, done = 0;
    out->n = 0;
    while (tr->nodes && i < n) {
        size_t start = i, stop = i, at;
        int k = dintattn__trie_longest(tr, s, n, i, &stop);
        const dintattn__added *a;
        if (k < 0) {
            i++;
            continue;
        }
        a = &t->added[k];
        i = stop;
        if (a->special && !allow_special) continue;
        if (a->single_word && ((start > 0 && dintattn__is_word(dintattn__uchar_before(s, n, start, &at))) ||
                               (stop < n && dintattn__is_word(dintattn__uchar_at(s, n, stop).cp))))
            continue;
        if (a->lstrip)
            while (start > done && dintattn__gc(dintattn__uchar_before(s, n, start, &at)) == DINTATTN__GC_SPACE)
                start = at;
        if (a->rstrip)
            while (stop < n) {
                dintattn__uchar u = dintattn__uchar_at(s, n, stop);
                if (dintattn__gc(u.cp) != DINTATTN__GC_SPACE) break;
                stop += u.len;
            }
        if (stop <= done) continue; /* inside what the last token's rstrip took */
        if (start < done) start = done;
        if ((done < start && dintattn__span_put(out, done, start, -1)) || dintattn__span_put(out, start, stop, a->id))
            return -1;
        done = stop;
    }
    return done < n ? dintattn__span_put(out, done, n, -1) : 0;
}

/* --- normalizing ------------------------------------------------------------------------- */

/* Normalizes s[0..n) with t's steps into a new buffer *out (*out_n bytes; the caller frees it);
   *out is NULL when t has no steps. Returns 0, -1 for want of memory, -2 if the text grows past
   INT_MAX bytes. */
static int dintattn__normalize(const dintattn_tokenizer *t, const unsigned char *s, size_t n, unsigned char **out,
                               size_t *out_n)
{
    unsigned char *cur = NULL, *next;
    size_t cn = n;
    int k;
    *out = NULL;
    *out_n = n;
    for (k = 0; k < t->n_norm; k++) {
        const dintattn__step *st = &t->norm[k];
        const unsigned char *in = cur ? cur : s;
        size_t nn = cn, i, o = 0, hits = 0;
        if (st->kind == DINTATTN__NS_NFC) {
            nn = 3 * cn + 4;
        } else if (st->kind == DINTATTN__NS_PREPEND) {
            if (cn == 0) continue;
            nn = cn + st->alen;
        } else {
            for (i = 0; i + st->alen <= cn;)
                if (memcmp(in + i, st->a, st->alen) == 0) {
                    hits++;
                    i += st->alen;
                } else i++;
            if (!hits) continue;
            nn = cn - hits * st->alen + hits * st->blen;
        }
        if (nn > (size_t)INT_MAX + 4) {
            DINTATTN_FREE(cur);
            return -2;
        }
        if (!(next = (unsigned char *)dintattn__alloc(nn))) {
            DINTATTN_FREE(cur);
            return -1;
        }
        if (st->kind == DINTATTN__NS_NFC) {
            if (dintattn__nfc(in, cn, next, &o)) {
                DINTATTN_FREE(next);
                DINTATTN_FREE(cur);
                return -1;
            }
        } else if (st->kind == DINTATTN__NS_PREPEND) {
            memcpy(next, st->a, st->alen);
            memcpy(next + st->alen, in, cn);
            o = nn;
        } else {
            for (i = 0; i < cn;)
                if (i + st->alen <= cn && memcmp(in + i, st->a, st->alen) == 0) {
                    memcpy(next + o, st->b, st->blen);
                    o += st->blen;
                    i += st->alen;
                } else next[o++] = in[i++];
        }
        DINTATTN_FREE(cur);
        cur = next;
        cn = o;
        if (cn > (size_t)INT_MAX) {
            DINTATTN_FREE(cur);
            return -2;
        }
    }
    if (!cur && t->n_norm) { /* every step left the text as it was */
        if (!(cur = (unsigned char *)dintattn__alloc(n))) return -1;
        if (n) memcpy(cur, s, n);
    }
    *out = cur;
    *out_n = cn;
    return 0;
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

/* A candidate merge: the parts at pos merge with rank `rank` (into token id, for BPE). */
typedef struct dintattn__pair {
    int rank, pos, id;
} dintattn__pair;

/* Scratch for merging one piece of n bytes: parts as a linked list, and a min-heap of candidate
   merges ordered by (rank, pos) -- the lowest rank and of equals the leftmost, in tiktoken and
   HF alike. Entries go stale when a part changes; they are skipped when popped. */
typedef struct dintattn__bpe {
    int *next, *prev, *rank;   /* per part: the next part (n at the end), the previous one (-1), the
                                  rank of this part merged with the next (tiktoken: -1 none) */
    int *sym;                  /* BPE: each part's token */
    dintattn__pair *heap;
    int n_heap;
    size_t cap;                /* the longest piece the arrays hold */
} dintattn__bpe;

static int dintattn__pair_less(dintattn__pair a, dintattn__pair b)
{
    return a.rank < b.rank || (a.rank == b.rank && a.pos < b.pos);
}

static void dintattn__heap_push(dintattn__bpe *w, int rank, int pos, int id)
{
    int i = w->n_heap++;
    dintattn__pair m;
    m.rank = rank;
    m.pos = pos;
    m.id = id;
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

/* Makes w hold pieces of n bytes. 0, or -1 for want of memory. */
static int dintattn__bpe_reserve(dintattn__bpe *w, size_t n)
{
    size_t cap, ints, heap;
    int overflow = 0;
    void *block;
    if (n <= w->cap) return 0;
    cap = w->cap * 2 > n ? w->cap * 2 : n;
    ints = dintattn__mul(cap, 4 * sizeof(int), &overflow);
    heap = dintattn__mul(cap, 3 * sizeof(dintattn__pair), &overflow);
    block = overflow || ints + heap < ints ? NULL : dintattn__alloc(ints + heap);
    if (!block) return -1;
    DINTATTN_FREE(w->next);
    w->next = (int *)block;
    w->prev = w->next + cap;
    w->rank = w->prev + cap;
    w->sym = w->rank + cap;
    w->heap = (dintattn__pair *)(void *)(w->sym + cap);
    w->cap = cap;
    return 0;
}

/* tiktoken: the rank of the part at pos merged with the part after it, or -1. */
static int dintattn__pair_rank(const dintattn_tokenizer *t, const dintattn__bpe *w, const unsigned char *p, int n,
                               int pos)
{
    int after = w->next[pos];
    if (after >= n) return -1;
    return dintattn__lookup(t, p + pos, (size_t)(w->next[after] - pos));
}

/* tiktoken's byte_pair_encode: emits the tokens of a piece of n >= 2 bytes that is not itself a
   token, parts being byte ranges. Returns 0, or -1 for want of memory. */
static int dintattn__bpe_ranks(const dintattn_tokenizer *t, dintattn__bpe *w, const unsigned char *p, int n,
                               dintattn__emit *e)
{
    int i;
    if (dintattn__bpe_reserve(w, (size_t)n)) return -1;
    /* every merge pushes at most two entries onto the n - 1 first ones: 3n entries suffice */
    w->n_heap = 0;
    for (i = 0; i < n; i++) {
        w->next[i] = i + 1;
        w->prev[i] = i - 1;
    }
    for (i = 0; i < n; i++)
        if ((w->rank[i] = dintattn__pair_rank(t, w, p, n, i)) >= 0) dintattn__heap_push(w, w->rank[i], i, 0);
    while (w->n_heap) {
        dintattn__pair m = dintattn__heap_pop(w);
        int at = m.pos, gone;
        if (w->next[at] < 0 || w->rank[at] != m.rank) continue; /* a part merged away, or changed */
        gone = w->next[at];
        w->next[at] = w->next[gone];
        if (w->next[at] < n) w->prev[w->next[at]] = at;
        w->next[gone] = -1;
        if ((w->rank[at] = dintattn__pair_rank(t, w, p, n, at)) >= 0) dintattn__heap_push(w, w->rank[at], at, 0);
        if (w->prev[at] >= 0) {
            int before = w->prev[at];
            if ((w->rank[before] = dintattn__pair_rank(t, w, p, n, before)) >= 0)
                dintattn__heap_push(w, w->rank[before], before, 0);
        }
    }
    for (i = 0; i < n; i = w->next[i]) {
        int id = w->next[i] - i == 1 ? t->byte_id[p[i]] : dintattn__lookup(t, p + i, (size_t)(w->next[i] - i));
        DINTATTN_ASSERT(id >= 0); /* parts are single bytes or tokens merged into being */
        dintattn__put(e, id);
    }
    return 0;
}

/* HF BPE: queues the merge of part at with the part after it, if the two merge. */
static void dintattn__bpe_queue(const dintattn_tokenizer *t, dintattn__bpe *w, int n, int at)
{
    long h;
    if (at < 0 || w->next[at] >= n) return;
    if ((h = dintattn__merge_find(t, w->sym[at], w->sym[w->next[at]])) >= 0)
        dintattn__heap_push(w, t->merge_rank[h], at, t->merge_id[h]);
}

/* HF BPE (models/bpe: merge_word, then Word::merge_all): a piece's parts are its bytes
   (byte-level) or characters looked up in the vocabulary; a character that is no token becomes
   its bytes' "<0xHH>" tokens (byte fallback) or the unknown token (consecutive ones fused into
   one if fuse_unk), or nothing when there is neither. Then the pair of adjacent parts whose merge
   is listed first merges, of equals the leftmost, until none does. Emits the parts' tokens;
   returns 0, or -1 for want of memory. */
static int dintattn__bpe_merges(const dintattn_tokenizer *t, dintattn__bpe *w, const unsigned char *p, int n,
                                dintattn__emit *e)
{
    int i, k, ns = 0, unk = 0;
    if (dintattn__bpe_reserve(w, (size_t)n)) return -1;
    for (i = 0; i < n;) {
        int len = 1, id = -1;
        if (t->byte_level) {
            id = t->byte_id[p[i]];
        } else {
            len = (int)dintattn__uchar_at(p, (size_t)n, (size_t)i).len;
            id = dintattn__lookup(t, p + i, (size_t)len);
        }
        if (id >= 0) {
            if (unk) w->sym[ns++] = t->unk;
            unk = 0;
            w->sym[ns++] = id;
        } else {
            for (k = 0; t->byte_fallback && k < len && t->fallback_id[p[i + k]] >= 0; k++) continue;
            if (t->byte_fallback && k == len) {
                for (k = 0; k < len; k++) w->sym[ns++] = t->fallback_id[p[i + k]];
            } else if (t->unk >= 0) {
                if (unk && !t->fuse_unk) w->sym[ns++] = t->unk;
                unk = 1;
            }
        }
        i += len;
    }
    if (unk) w->sym[ns++] = t->unk;
    w->n_heap = 0;
    for (i = 0; i < ns; i++) {
        w->next[i] = i + 1;
        w->prev[i] = i - 1;
    }
    for (i = 0; i + 1 < ns; i++) dintattn__bpe_queue(t, w, ns, i);
    while (w->n_heap) {
        dintattn__pair m = dintattn__heap_pop(w);
        int at = m.pos, gone = w->next[at];
        long h;
        if (gone < 0 || gone >= ns) continue; /* merged away, or the last part now */
        h = dintattn__merge_find(t, w->sym[at], w->sym[gone]);
        if (h < 0 || t->merge_id[h] != m.id) continue; /* the parts changed since */
        w->sym[at] = m.id;
        w->next[at] = w->next[gone];
        if (w->next[at] < ns) w->prev[w->next[at]] = at;
        w->next[gone] = -1;
        dintattn__bpe_queue(t, w, ns, w->prev[at]);
        dintattn__bpe_queue(t, w, ns, at);
    }
    for (i = 0; i < ns; i = w->next[i]) dintattn__put(e, w->sym[i]);
    return 0;
}

/* An encoding in progress. */
typedef struct dintattn__enc {
    const dintattn_tokenizer *t;
    dintattn__bpe w;
    dintattn__emit e;
} dintattn__enc;

/* The model's tokens for one final piece. 0, or -1 for want of memory. */
static int dintattn__encode_piece(dintattn__enc *c, const unsigned char *p, size_t n)
{
    const dintattn_tokenizer *t = c->t;
    int id;
    if (!n) return 0;
    if ((t->kind == DINTATTN__TOK_TIKTOKEN || t->ignore_merges) && (id = dintattn__lookup(t, p, n)) >= 0) {
        dintattn__put(&c->e, id);
        return 0;
    }
    return t->kind == DINTATTN__TOK_TIKTOKEN ? dintattn__bpe_ranks(t, &c->w, p, (int)n, &c->e)
                                             : dintattn__bpe_merges(t, &c->w, p, (int)n, &c->e);
}

static int dintattn__pre_tokenize(dintattn__enc *c, int k, const unsigned char *p, size_t n, int at_start);

/* A regex split's pieces go on to the next step. */
typedef struct dintattn__piece_sink {
    dintattn__enc *c;
    int k, at_start;
    const dintattn__rtext *text;
    const unsigned char *s;
} dintattn__piece_sink;

static int dintattn__split_piece(void *user, int lo, int hi)
{
    const dintattn__piece_sink *k = (const dintattn__piece_sink *)user;
    int a = k->text->off[lo], b = k->text->off[hi];
    return dintattn__pre_tokenize(k->c, k->k + 1, k->s + a, (size_t)(b - a), k->at_start && a == 0);
}

/* Runs piece p[0..n) through pre-tokenizer steps k.. and the model. at_start: the piece starts
   the text (HF Metaspace's "first" scheme prepends only there). 0, or -1 for want of memory. */
static int dintattn__pre_tokenize(dintattn__enc *c, int k, const unsigned char *p, size_t n, int at_start)
{
    const dintattn_tokenizer *t = c->t;
    const dintattn__step *st = &t->pre[k];
    unsigned char *buf;
    size_t i, o = 0, hits = 0;
    int r, pre;
    if (!n) return 0; /* HF drops empty pieces */
    if (k == t->n_pre) return dintattn__encode_piece(c, p, n);
    if (st->kind == DINTATTN__PS_SPLIT && !st->split) { /* cl100k by hand */
        size_t end;
        for (i = 0; i < n; i = end) {
            end = dintattn__pretok(p, n, i);
            if (dintattn__pre_tokenize(c, k + 1, p + i, end - i, at_start && i == 0)) return -1;
        }
        return 0;
    }
    if (st->kind == DINTATTN__PS_SPLIT) {
        dintattn__rtext text;
        dintattn__piece_sink sink;
        memset(&text, 0, sizeof text);
        sink.c = c;
        sink.k = k;
        sink.at_start = at_start;
        sink.text = &text;
        sink.s = p;
        r = dintattn__rsplit_text(st->split, &text, p, n, dintattn__split_piece, &sink);
        DINTATTN_FREE(text.cp);
        return r ? -1 : 0;
    }
    /* Metaspace: ' ' becomes the replacement, which is put first (scheme permitting) if the
       piece does not start with it; ByteLevel's prefix space: ' ' put first likewise */
    if (st->kind == DINTATTN__PS_METASPACE)
        for (i = 0; i < n; i++) hits += p[i] == ' ';
    pre = st->kind == DINTATTN__PS_PREFIX_SPACE
              ? p[0] != ' '
              : (st->scheme == DINTATTN__MS_ALWAYS || (st->scheme == DINTATTN__MS_FIRST && at_start)) &&
                    !((p[0] == ' ' && st->alen) || (n >= st->alen && memcmp(p, st->a, st->alen) == 0));
    if (!hits && !pre) return dintattn__pre_tokenize(c, k + 1, p, n, at_start);
    if (n + hits * st->alen + st->alen > (size_t)INT_MAX) return -1;
    if (!(buf = (unsigned char *)dintattn__alloc(n + hits * st->alen + st->alen))) return -1;
    if (pre) {
        memcpy(buf, st->a, st->alen);
        o = st->alen;
    }
    for (i = 0; i < n; i++)
        if (p[i] == ' ' && st->kind == DINTATTN__PS_METASPACE) {
            memcpy(buf + o, st->a, st->alen);
            o += st->alen;
        } else buf[o++] = p[i];
    r = dintattn__pre_tokenize(c, k + 1, buf, o, at_start);
    DINTATTN_FREE(buf);
    return r;
}

/* Encodes one segment of ordinary text (between added tokens matched as given): normalizes it,
   cuts out the added tokens matched after normalizing, pre-tokenizes the rest. 0, -1 for want
   of memory, -2 if normalizing grows it past INT_MAX bytes. */
static int dintattn__encode_segment(dintattn__enc *c, const unsigned char *s, size_t n, int at_start,
                                    int allow_special, dintattn__spans *spans)
{
    const dintattn_tokenizer *t = c->t;
    unsigned char *norm;
    const unsigned char *p;
    size_t pn;
    int r, k;
    if ((r = dintattn__normalize(t, s, n, &norm, &pn))) return r;
    p = norm ? norm : s;
    if (!t->normalized.nodes) {
        r = dintattn__pre_tokenize(c, 0, p, pn, at_start);
    } else if (!(r = dintattn__find_added(t, &t->normalized, p, pn, allow_special, spans))) {
        for (k = 0; k < spans->n && !r; k++) {
            if (spans->v[k].id >= 0) dintattn__put(&c->e, spans->v[k].id);
            else r = dintattn__pre_tokenize(c, 0, p + spans->v[k].a, spans->v[k].b - spans->v[k].a,
                                            at_start && spans->v[k].a == 0);
        }
    }
    DINTATTN_FREE(norm);
    return r;
}

DINTATTN_API dintattn_result dintattn_tokenizer_encode(const dintattn_tokenizer *t, const char *text, size_t len,
                                                       int allow_special, int *ids, int max_ids, int *n_ids,
                                                       dintattn_error *err)
{
    const unsigned char *s = (const unsigned char *)text;
    dintattn__enc c;
    dintattn__spans raw, inner;
    int r = 0, k;
    if (n_ids) *n_ids = 0;
    if (!t || (!text && len) || (!ids && max_ids) || max_ids < 0 || !n_ids)
        return dintattn__fail(err, DINTATTN_ERR_ARG, "dintattn_tokenizer_encode: NULL argument or max_ids < 0");
    if (len > (size_t)INT_MAX)
        return dintattn__fail(err, DINTATTN_ERR_ARG, "dintattn_tokenizer_encode: text longer than %d bytes", INT_MAX);
    memset(&c, 0, sizeof c);
    memset(&raw, 0, sizeof raw);
    memset(&inner, 0, sizeof inner);
    c.t = t;
    c.e.ids = ids;
    c.e.max = max_ids;
    if (!t->raw.nodes) {
        r = dintattn__encode_segment(&c, s, len, 1, allow_special, &inner);
    } else if (!(r = dintattn__find_added(t, &t->raw, s, len, allow_special, &raw))) {
        for (k = 0; k < raw.n && !r; k++) {
            if (raw.v[k].id >= 0) dintattn__put(&c.e, raw.v[k].id);
            else r = dintattn__encode_segment(&c, s + raw.v[k].a, raw.v[k].b - raw.v[k].a, raw.v[k].a == 0,
                                              allow_special, &inner);
        }
    }
    DINTATTN_FREE(c.w.next);
    DINTATTN_FREE(raw.v);
    DINTATTN_FREE(inner.v);
    if (r == -2)
        return dintattn__fail(err, DINTATTN_ERR_ARG, "dintattn_tokenizer_encode: text longer than %d bytes once normalized",
                              INT_MAX);
    if (r) return dintattn__fail(err, DINTATTN_ERR_NOMEM, "out of memory encoding %lu bytes", (unsigned long)len);
    *n_ids = c.e.count;
    dintattn__ok(err);
    return DINTATTN_OK;
}

/* --- building a tokenizer ------------------------------------------------------------------ */

/* A growable byte buffer. */
typedef struct dintattn__buf {
    unsigned char *p;
    size_t n, cap;
} dintattn__buf;

static int dintattn__buf_put(dintattn__buf *b, const void *s, size_t n)
{
    if (n > b->cap - b->n) {
        size_t cap = b->cap ? b->cap : 64;
        void *q;
        while (cap - b->n < n) {
            if (cap > SIZE_MAX / 2) return -1;
            cap *= 2;
        }
        if (!(q = DINTATTN_REALLOC(b->p, cap))) return -1;
        b->p = (unsigned char *)q;
        b->cap = cap;
    }
    if (n) memcpy(b->p + b->n, s, n);
    b->n += n;
    return 0;
}

/* GPT-2's byte-level alphabet: the byte a code point stands for, or -1. Bytes ! .. ~, U+00A1 ..
   U+00AC and U+00AE .. U+00FF stand for themselves, the other 68 for U+0100 + their order. */
static int dintattn__gpt2_byte(uint32_t cp)
{
    int b, n = 0;
    for (b = 0; b < 256; b++) {
        int self = (b >= '!' && b <= '~') || (b >= 0xA1 && b <= 0xAC) || b >= 0xAE;
        if (self ? cp == (uint32_t)b : cp == 0x100u + (uint32_t)n++) return b;
    }
    return -1;
}

/* A decoder step (HF's Replace, ByteFallback, Strip), applied to each token's text. */
enum { DINTATTN__DS_REPLACE, DINTATTN__DS_BYTE_FALLBACK, DINTATTN__DS_STRIP };
typedef struct dintattn__dstep {
    int kind;
    const char *a, *b;  /* REPLACE: a by b; STRIP: a, the character */
    size_t alen, blen;
    int start, stop;    /* STRIP: how many copies of a to cut from the start and the end */
} dintattn__dstep;

static int dintattn__hex(unsigned char c)
{
    return c >= '0' && c <= '9' ? c - '0' : (c | 0x20) >= 'a' && (c | 0x20) <= 'f' ? (c | 0x20) - 'a' + 10 : -1;
}

/* Appends to out what decoding a token of text s[0..n) gives: the steps applied in order, each
   writing into the scratch buffer the last one did not. 0, or -1 for want of memory. */
static int dintattn__decode_token(const dintattn__dstep *steps, int n_steps, const unsigned char *s, size_t n,
                                  dintattn__buf *out, dintattn__buf scratch[2])
{
    const unsigned char *cur = s;
    size_t cn = n, i;
    int k, w = 0, c;
    for (k = 0; k < n_steps; k++, w ^= 1) {
        const dintattn__dstep *st = &steps[k];
        dintattn__buf *o = &scratch[w];
        size_t lo = 0, hi = cn;
        int r = 0;
        o->n = 0;
        if (st->kind == DINTATTN__DS_REPLACE) {
            for (i = 0; i < cn && !r;)
                if (i + st->alen <= cn && memcmp(cur + i, st->a, st->alen) == 0) {
                    r = dintattn__buf_put(o, st->b, st->blen);
                    i += st->alen;
                } else r = dintattn__buf_put(o, cur + i++, 1);
        } else if (st->kind == DINTATTN__DS_BYTE_FALLBACK && cn == 6 && memcmp(cur, "<0x", 3) == 0 && cur[5] == '>' &&
                   dintattn__hex(cur[3]) >= 0 && dintattn__hex(cur[4]) >= 0) {
            unsigned char byte = (unsigned char)(dintattn__hex(cur[3]) << 4 | dintattn__hex(cur[4]));
            r = dintattn__buf_put(o, &byte, 1);
        } else if (st->kind == DINTATTN__DS_STRIP) {
            for (c = 0; c < st->start && hi - lo >= st->alen && memcmp(cur + lo, st->a, st->alen) == 0; c++)
                lo += st->alen;
            for (c = 0; c < st->stop && hi - lo >= st->alen && memcmp(cur + hi - st->alen, st->a, st->alen) == 0; c++)
                hi -= st->alen;
            r = dintattn__buf_put(o, cur + lo, hi - lo);
        } else r = dintattn__buf_put(o, cur, cn);
        if (r) return -1;
        cur = o->p;
        cn = o->n;
    }
    return dintattn__buf_put(out, cur, cn);
}

DINTATTN_API void dintattn_tokenizer_free(dintattn_tokenizer *t)
{
    int k;
    if (!t) return;
    for (k = 0; k < t->n_added; k++) DINTATTN_FREE(t->added[k].text);
    DINTATTN_FREE(t->added);
    DINTATTN_FREE(t->added_by_id);
    dintattn__trie_free(&t->raw);
    dintattn__trie_free(&t->normalized);
    for (k = 0; k < t->n_norm; k++) DINTATTN_FREE(t->norm[k].a);
    for (k = 0; k < t->n_pre; k++) {
        DINTATTN_FREE(t->pre[k].a);
        dintattn__split_free(t->pre[k].split);
    }
    DINTATTN_FREE(t->merge_key);
    DINTATTN_FREE(t->merge_rank);
    DINTATTN_FREE(t->merge_id);
    DINTATTN_FREE(t->eos_ids);
    DINTATTN_FREE(t->slots);
    DINTATTN_FREE(t->tokens);
    if (t->dec != t->bytes) DINTATTN_FREE(t->dec);
    DINTATTN_FREE(t->bytes);
    DINTATTN_FREE(t);
}

/* Adds an added token (its text copied; norm and dec filled in later). */
static dintattn_result dintattn__add_token(dintattn_tokenizer *t, const char *text, size_t len, int id, int special,
                                           int normalized, dintattn_error *err)
{
    dintattn__added *a;
    if (dintattn__grow((void **)&t->added, &t->cap_added, t->n_added, sizeof *t->added))
        return dintattn__fail(err, DINTATTN_ERR_NOMEM, "out of memory");
    a = &t->added[t->n_added];
    memset(a, 0, sizeof *a);
    if (!(a->text = (char *)dintattn__alloc(len + 1))) return dintattn__fail(err, DINTATTN_ERR_NOMEM, "out of memory");
    memcpy(a->text, text, len);
    a->text[len] = 0;
    a->norm = a->dec = a->text;
    a->len = a->norm_len = a->dec_len = len;
    a->id = id;
    a->special = (unsigned char)!!special;
    a->normalized = (unsigned char)!!normalized;
    t->n_added++;
    if (id >= t->n_vocab) t->n_vocab = id + 1;
    return DINTATTN_OK;
}

/* A copy of s[0..n), NUL-terminated. */
static char *dintattn__strndup(const char *s, size_t n)
{
    char *d = (char *)dintattn__alloc(n + 1);
    if (d) {
        memcpy(d, s, n);
        d[n] = 0;
    }
    return d;
}

/* Sets added token a's normalized text and decoded bytes (held after its text, one block). */
static int dintattn__finish_added(const dintattn_tokenizer *t, dintattn__added *a, const dintattn__dstep *steps,
                                  int n_steps, dintattn__buf scratch[2])
{
    dintattn__buf b;
    unsigned char *norm = NULL;
    size_t nn = a->len, i, sn;
    const char *src;
    char *block, *copy = NULL;
    memset(&b, 0, sizeof b);
    if (a->normalized && dintattn__normalize(t, (const unsigned char *)a->text, a->len, &norm, &nn)) return -1;
    if (dintattn__buf_put(&b, a->text, a->len + 1) || dintattn__buf_put(&b, norm ? norm : (unsigned char *)a->text, nn) ||
        dintattn__buf_put(&b, "", 1)) {
        DINTATTN_FREE(norm);
        DINTATTN_FREE(b.p);
        return -1;
    }
    DINTATTN_FREE(norm);
    /* HF decodes a normalized token from its normalized text (it keeps that one), through the decoder */
    src = a->normalized ? (const char *)b.p + a->len + 1 : a->text;
    sn = a->normalized ? nn : a->len;
    if (a->normalized && !(copy = dintattn__strndup(src, sn))) {
        DINTATTN_FREE(b.p);
        return -1;
    }
    if (copy) src = copy;
    if (t->byte_level) { /* HF's ByteLevel decoder: the bytes the text's characters stand for, if all do */
        dintattn__buf raw;
        int ok = 1;
        memset(&raw, 0, sizeof raw);
        for (i = 0; i < sn && ok;) {
            dintattn__uchar u = dintattn__uchar_at((const unsigned char *)src, sn, i);
            int byte = dintattn__gpt2_byte(u.cp);
            unsigned char c = (unsigned char)byte;
            ok = byte >= 0 && !dintattn__buf_put(&raw, &c, 1);
            i += u.len;
        }
        i = b.n;
        if (dintattn__decode_token(steps, n_steps, ok ? raw.p : (const unsigned char *)src, ok ? raw.n : sn, &b,
                                   scratch)) {
            DINTATTN_FREE(copy);
            DINTATTN_FREE(raw.p);
            DINTATTN_FREE(b.p);
            return -1;
        }
        DINTATTN_FREE(raw.p);
    } else {
        i = b.n;
        if (dintattn__decode_token(steps, n_steps, (const unsigned char *)src, sn, &b, scratch)) {
            DINTATTN_FREE(copy);
            DINTATTN_FREE(b.p);
            return -1;
        }
    }
    DINTATTN_FREE(copy);
    block = (char *)b.p;
    DINTATTN_FREE(a->text);
    a->text = block;
    a->norm = block + a->len + 1;
    a->norm_len = nn;
    a->dec = block + i;
    a->dec_len = b.n - i;
    return 0;
}

/* The JSON helpers of the builder: a member's bool / int value, with a default. */
static int dintattn__jbool(const dintattn__json *j, const dintattn__jnode *o, const char *key, int dflt, int *bad)
{
    const dintattn__jnode *n = dintattn__json_get(j, o, key);
    if (!n) return dflt;
    if (n->type != DINTATTN__JBOOL) *bad = 1;
    return n->boolean;
}

/* Whether every member of object o is one of keys (NULL-terminated); else *which names one. */
static int dintattn__only_keys(const dintattn__json *j, const dintattn__jnode *o, const char *const *keys,
                               const char **which)
{
    int c, k;
    for (c = o->child; c >= 0; c = j->nodes[c].next) {
        for (k = 0; keys[k] && strcmp(keys[k], j->nodes[c].key) != 0; k++) continue;
        if (!keys[k]) {
            *which = j->nodes[c].key;
            return 0;
        }
    }
    return 1;
}

#define DINTATTN__TOKFAIL(...) dintattn__fail(err, DINTATTN_ERR_METADATA, "metadata 'tokenizer': " __VA_ARGS__)

/* Adds the split stages re[0..n) as one pre-tokenizer step. */
static dintattn_result dintattn__add_split(dintattn_tokenizer *t, const char **re, const size_t *lens, const int *behavior,
                                           const int *invert, int n, dintattn_error *err)
{
    dintattn__split *sp;
    dintattn_result r;
    int k;
    if (t->n_pre == DINTATTN__TOK_MAX_STEPS) return DINTATTN__TOKFAIL("more than %d pre-tokenizer steps", DINTATTN__TOK_MAX_STEPS);
    if ((r = dintattn__split_new(re, lens, n, &sp, err))) return dintattn__file_fault(r, DINTATTN_ERR_TOKENIZER, err);
    for (k = 0; k < n; k++) {
        sp->behavior[k] = behavior[k];
        sp->invert[k] = invert[k];
    }
    t->pre[t->n_pre].kind = DINTATTN__PS_SPLIT;
    t->pre[t->n_pre++].split = sp;
    return DINTATTN_OK;
}

static int dintattn__stage_from_json(const dintattn__json *j, const dintattn__jnode *e, const char **re,
                                                 size_t *len, int *behavior, int *invert);

/* "pre_tokenizer": [STEP, ...] of a "bpe" tokenizer (docs/format.md section 5). */
static dintattn_result dintattn__read_pre(dintattn_tokenizer *t, const dintattn__json *j, const dintattn__jnode *list,
                                          dintattn_error *err)
{
    static const char *const meta_keys[] = {"metaspace", "prepend_scheme", "split", NULL};
    static const char *const bl_keys[] = {"add_prefix_space", "use_regex", NULL};
    static const char *const schemes[] = {"always", "first", "never"};
    const char *re[DINTATTN__RE_MAX_STAGES];
    size_t lens[DINTATTN__RE_MAX_STAGES];
    int behavior[DINTATTN__RE_MAX_STAGES], invert[DINTATTN__RE_MAX_STAGES], n = 0, c;
    dintattn_result r;
    const char *which = NULL;
    if (list->type != DINTATTN__JARR) return DINTATTN__TOKFAIL("\"pre_tokenizer\" must be a list of steps");
    for (c = list->child;; c = j->nodes[c].next) {
        const dintattn__jnode *e = c >= 0 ? &j->nodes[c] : NULL, *v;
        if (e && !dintattn__stage_from_json(j, e, &re[n], &lens[n], &behavior[n], &invert[n])) {
            if (++n == DINTATTN__RE_MAX_STAGES) {
                if ((r = dintattn__add_split(t, re, lens, behavior, invert, n, err))) return r;
                n = 0;
            }
            continue;
        }
        if (n) { /* the regex stages so far: one split */
            if ((r = dintattn__add_split(t, re, lens, behavior, invert, n, err))) return r;
            n = 0;
        }
        if (!e) break;
        if (e->type == DINTATTN__JOBJ && (v = dintattn__json_get(j, e, "metaspace")) != NULL) {
            const dintattn__jnode *sc = dintattn__json_get(j, e, "prepend_scheme");
            int bad = 0, split = dintattn__jbool(j, e, "split", 0, &bad), k = 0;
            char rx[16];
            dintattn__step *st;
            if (v->type != DINTATTN__JSTR || v->str_len == 0 ||
                dintattn__uchar_at((const unsigned char *)v->str, v->str_len, 0).len != v->str_len ||
                (sc && sc->type != DINTATTN__JSTR) || bad || !dintattn__only_keys(j, e, meta_keys, &which))
                return DINTATTN__TOKFAIL("a \"metaspace\" step is {\"metaspace\": CHARACTER, \"prepend_scheme\": "
                                         "\"always\"|\"first\"|\"never\", \"split\": BOOL}");
            for (k = 0; sc && k < 3 && strcmp(sc->str, schemes[k]) != 0; k++) continue;
            if (k == 3) return DINTATTN__TOKFAIL("unknown Metaspace prepend_scheme '%.40s'", sc->str);
            if (t->n_pre == DINTATTN__TOK_MAX_STEPS)
                return DINTATTN__TOKFAIL("more than %d pre-tokenizer steps", DINTATTN__TOK_MAX_STEPS);
            st = &t->pre[t->n_pre];
            if (!(st->a = dintattn__strndup(v->str, v->str_len))) return dintattn__fail(err, DINTATTN_ERR_NOMEM, "out of memory");
            st->kind = DINTATTN__PS_METASPACE;
            st->alen = v->str_len;
            st->scheme = k;
            t->n_pre++;
            if (split) { /* HF splits at the replacement, which joins the text after it */
                const char *one = rx;
                size_t len;
                int mn = DINTATTN__RB_MERGED_NEXT, no = 0;
                snprintf(rx, sizeof rx, "\\x{%X}", (unsigned)dintattn__uchar_at((const unsigned char *)v->str, v->str_len, 0).cp);
                len = strlen(rx);
                if ((r = dintattn__add_split(t, &one, &len, &mn, &no, 1, err))) return r;
            }
        } else if (e->type == DINTATTN__JOBJ && e->n_children == 1 && (v = dintattn__json_get(j, e, "byte_level")) != NULL) {
            int bad = v->type != DINTATTN__JOBJ, prefix, use_regex;
            prefix = bad ? 0 : dintattn__jbool(j, v, "add_prefix_space", 0, &bad);
            use_regex = bad ? 0 : dintattn__jbool(j, v, "use_regex", 1, &bad);
            if (bad || !dintattn__only_keys(j, v, bl_keys, &which))
                return DINTATTN__TOKFAIL("a \"byte_level\" step is {\"byte_level\": {\"add_prefix_space\": BOOL, "
                                         "\"use_regex\": BOOL}}");
            if (prefix) {
                if (t->n_pre == DINTATTN__TOK_MAX_STEPS)
                    return DINTATTN__TOKFAIL("more than %d pre-tokenizer steps", DINTATTN__TOK_MAX_STEPS);
                if (!(t->pre[t->n_pre].a = dintattn__strndup(" ", 1)))
                    return dintattn__fail(err, DINTATTN_ERR_NOMEM, "out of memory");
                t->pre[t->n_pre].kind = DINTATTN__PS_PREFIX_SPACE;
                t->pre[t->n_pre++].alen = 1;
            }
            if (use_regex) { /* GPT-2's pattern, Isolated */
                const char *const *gpt2;
                size_t len;
                int iso = DINTATTN__RB_ISOLATED, no = 0;
                dintattn__pattern_named("gpt2", 4, &gpt2);
                len = strlen(gpt2[0]);
                if ((r = dintattn__add_split(t, (const char **)gpt2, &len, &iso, &no, 1, err))) return r;
            }
        } else {
            return DINTATTN__TOKFAIL("pre-tokenizer step %d is not a REGEX, {\"regex\": ...}, {\"metaspace\": ...} "
                                     "or {\"byte_level\": ...}", (int)t->n_pre + 1);
        }
    }
    return DINTATTN_OK;
}

/* "normalizer": [STEP, ...]: "nfc", {"prepend": TEXT}, {"replace": [FROM, TO]}. */
static dintattn_result dintattn__read_norm(dintattn_tokenizer *t, const dintattn__json *j, const dintattn__jnode *list,
                                           dintattn_error *err)
{
    int c;
    if (list->type != DINTATTN__JARR) return DINTATTN__TOKFAIL("\"normalizer\" must be a list of steps");
    for (c = list->child; c >= 0; c = j->nodes[c].next) {
        const dintattn__jnode *e = &j->nodes[c], *v = NULL, *from = NULL, *to = NULL;
        dintattn__step *st = &t->norm[t->n_norm];
        if (t->n_norm == DINTATTN__TOK_MAX_STEPS)
            return DINTATTN__TOKFAIL("more than %d normalizer steps", DINTATTN__TOK_MAX_STEPS);
        if (e->type == DINTATTN__JSTR && strcmp(e->str, "nfc") == 0) {
            st->kind = DINTATTN__NS_NFC;
        } else if (e->type == DINTATTN__JOBJ && e->n_children == 1 && (v = dintattn__json_get(j, e, "prepend")) &&
                   v->type == DINTATTN__JSTR) {
            st->kind = DINTATTN__NS_PREPEND;
            if (!(st->a = dintattn__strndup(v->str, v->str_len))) return dintattn__fail(err, DINTATTN_ERR_NOMEM, "out of memory");
            st->alen = v->str_len;
        } else if (e->type == DINTATTN__JOBJ && e->n_children == 1 && (v = dintattn__json_get(j, e, "replace")) &&
                   v->type == DINTATTN__JARR && v->n_children == 2 && (from = &j->nodes[v->child])->type == DINTATTN__JSTR &&
                   from->str_len > 0 && (to = &j->nodes[from->next])->type == DINTATTN__JSTR) {
            st->kind = DINTATTN__NS_REPLACE;
            if (!(st->a = (char *)dintattn__alloc(from->str_len + to->str_len + 2)))
                return dintattn__fail(err, DINTATTN_ERR_NOMEM, "out of memory");
            memcpy(st->a, from->str, from->str_len + 1);
            st->b = st->a + from->str_len + 1;
            memcpy(st->b, to->str, to->str_len + 1);
            st->alen = from->str_len;
            st->blen = to->str_len;
        } else {
            return DINTATTN__TOKFAIL("normalizer step %d is not \"nfc\", {\"prepend\": TEXT} or {\"replace\": [FROM, TO]} "
                                     "(FROM not empty)", t->n_norm + 1);
        }
        t->n_norm++;
    }
    return DINTATTN_OK;
}

/* "decoder": [STEP, ...]: "byte_fallback", "fuse", {"replace": [FROM, TO]}, {"strip": [CHARACTER,
   START, STOP]}; the steps before "fuse" are kept in steps[], a "strip" after it in t. */
static dintattn_result dintattn__read_decoder(dintattn_tokenizer *t, const dintattn__json *j, const dintattn__jnode *list,
                                              dintattn__dstep *steps, int *n_steps, dintattn_error *err)
{
    int c, fused = 0;
    *n_steps = 0;
    if (list->type != DINTATTN__JARR) return DINTATTN__TOKFAIL("\"decoder\" must be a list of steps");
    for (c = list->child; c >= 0; c = j->nodes[c].next) {
        const dintattn__jnode *e = &j->nodes[c], *v = NULL, *x, *y, *z;
        dintattn__dstep *st = &steps[*n_steps];
        if (*n_steps == DINTATTN__TOK_MAX_STEPS)
            return DINTATTN__TOKFAIL("more than %d decoder steps", DINTATTN__TOK_MAX_STEPS);
        memset(st, 0, sizeof *st);
        if (e->type == DINTATTN__JSTR && strcmp(e->str, "fuse") == 0) {
            fused = 1;
            continue;
        }
        if (e->type == DINTATTN__JOBJ && e->n_children == 1 && (v = dintattn__json_get(j, e, "metaspace")) &&
            v->type == DINTATTN__JSTR && v->str_len > 0 && v->str_len < sizeof t->ms && list->n_children == 1 &&
            dintattn__uchar_at((const unsigned char *)v->str, v->str_len, 0).len == v->str_len) {
            /* alone: each replacement a space, except in the first token, where it goes */
            memcpy(t->ms, v->str, v->str_len);
            t->ms_len = v->str_len;
            st->kind = DINTATTN__DS_REPLACE;
            st->a = v->str;
            st->alen = v->str_len;
            st->b = " ";
            st->blen = 1;
        } else if (e->type == DINTATTN__JSTR && strcmp(e->str, "byte_fallback") == 0 && !fused) {
            st->kind = DINTATTN__DS_BYTE_FALLBACK;
        } else if (e->type == DINTATTN__JOBJ && e->n_children == 1 && (v = dintattn__json_get(j, e, "replace")) && !fused &&
                   v->type == DINTATTN__JARR && v->n_children == 2 && (x = &j->nodes[v->child])->type == DINTATTN__JSTR &&
                   x->str_len > 0 && (y = &j->nodes[x->next])->type == DINTATTN__JSTR) {
            st->kind = DINTATTN__DS_REPLACE;
            st->a = x->str;
            st->alen = x->str_len;
            st->b = y->str;
            st->blen = y->str_len;
        } else if (e->type == DINTATTN__JOBJ && e->n_children == 1 && (v = dintattn__json_get(j, e, "strip")) &&
                   v->type == DINTATTN__JARR && v->n_children == 3 && (x = &j->nodes[v->child])->type == DINTATTN__JSTR &&
                   x->str_len > 0 && x->str_len < sizeof t->strip &&
                   dintattn__uchar_at((const unsigned char *)x->str, x->str_len, 0).len == x->str_len &&
                   (y = &j->nodes[x->next])->type == DINTATTN__JNUM && y->is_int && y->ival >= 0 && y->ival <= 64 &&
                   (z = &j->nodes[y->next])->type == DINTATTN__JNUM && z->is_int && z->ival >= 0 && z->ival <= 64 &&
                   (!fused || !t->strip_len)) {
            if (fused) { /* after "fuse": the whole text */
                memcpy(t->strip, x->str, x->str_len);
                t->strip_len = x->str_len;
                t->strip_start = (int)y->ival;
                t->strip_stop = (int)z->ival;
                continue;
            }
            st->kind = DINTATTN__DS_STRIP;
            st->a = x->str;
            st->alen = x->str_len;
            st->start = (int)y->ival;
            st->stop = (int)z->ival;
        } else {
            return DINTATTN__TOKFAIL("decoder step %d is not \"byte_fallback\", \"fuse\", {\"replace\": [FROM, TO]}, "
                                     "{\"strip\": [CHARACTER, START, STOP]} (after \"fuse\" only one \"strip\") or "
                                     "{\"metaspace\": CHARACTER} (alone)",
                                     c >= 0 ? *n_steps + 1 : 0);
        }
        (*n_steps)++;
    }
    return DINTATTN_OK;
}

/* "added_tokens": [{"id", "content", "special", "lstrip", "rstrip", "normalized", "single_word"}]. */
static dintattn_result dintattn__read_added(dintattn_tokenizer *t, const dintattn__json *j, const dintattn__jnode *list,
                                            int vocab_limit, dintattn_error *err)
{
    static const char *const keys[] = {"id", "content", "special", "lstrip", "rstrip", "normalized", "single_word", NULL};
    dintattn_result r;
    const char *which = NULL;
    int c;
    if (list->type != DINTATTN__JARR) return DINTATTN__TOKFAIL("\"added_tokens\" must be a list");
    for (c = list->child; c >= 0; c = j->nodes[c].next) {
        const dintattn__jnode *e = &j->nodes[c], *id, *content;
        int bad = 0, special, normalized;
        dintattn__added *a;
        if (e->type != DINTATTN__JOBJ) return DINTATTN__TOKFAIL("an added token must be an object");
        id = dintattn__json_get(j, e, "id");
        content = dintattn__json_get(j, e, "content");
        if (!dintattn__only_keys(j, e, keys, &which))
            return DINTATTN__TOKFAIL("added token: unknown key '%.40s'", which);
        if (!content || content->type != DINTATTN__JSTR || content->str_len == 0 ||
            content->str_len > DINTATTN__ADDED_MAX_LEN)
            return DINTATTN__TOKFAIL("an added token needs a \"content\" of 1 to %d bytes", DINTATTN__ADDED_MAX_LEN);
        if (!id || id->type != DINTATTN__JNUM || !id->is_int || id->ival < 0 || id->ival >= vocab_limit)
            return DINTATTN__TOKFAIL("added token '%.60s' needs an id in [0, vocab_size)", content->str);
        special = dintattn__jbool(j, e, "special", 0, &bad);
        normalized = dintattn__jbool(j, e, "normalized", !special, &bad);
        if ((r = dintattn__add_token(t, content->str, content->str_len, (int)id->ival, special, normalized, err)))
            return r;
        a = &t->added[t->n_added - 1];
        a->lstrip = (unsigned char)dintattn__jbool(j, e, "lstrip", 0, &bad);
        a->rstrip = (unsigned char)dintattn__jbool(j, e, "rstrip", 0, &bad);
        a->single_word = (unsigned char)dintattn__jbool(j, e, "single_word", 0, &bad);
        if (bad) return DINTATTN__TOKFAIL("added token '%.60s': its flags must be true or false", content->str);
    }
    return DINTATTN_OK;
}

/* Builds a tokenizer from a file's parts (docs/format.md section 5): the vocabulary
   (a rank file's lines), the merges (NULL: none) and the metadata (j NULL: a plain tiktoken rank
   file). Ids must be below vocab_limit. `what` names the vocabulary in messages. */
static dintattn_result dintattn__tokenizer_build(const unsigned char *ranks, size_t ranks_size, const char *what,
                                                 const unsigned char *merges, size_t merges_size,
                                                 const dintattn__json *j, int vocab_limit, dintattn_tokenizer **out,
                                                 dintattn_error *err)
{
    static const char *const tiktoken_keys[] = {"type", "pattern", "special_tokens", "bos_id", "eos_id", "eos_ids", NULL};
    static const char *const bpe_keys[] = {"type", "byte_level", "unk_id", "fuse_unk", "byte_fallback", "ignore_merges",
                                           "normalizer", "pre_tokenizer", "added_tokens", "decoder", "bos_id", "eos_id",
                                           "eos_ids", NULL};
    const dintattn__jnode *root = j ? &j->nodes[0] : NULL, *type = NULL, *n;
    dintattn__dstep dsteps[DINTATTN__TOK_MAX_STEPS];
    dintattn__buf dec, scratch[2];
    dintattn_tokenizer *t;
    dintattn_result r = DINTATTN_OK;
    const char *which = NULL;
    int k, c, n_dsteps = 0, bad = 0;
    *out = NULL;
    memset(&dec, 0, sizeof dec);
    memset(scratch, 0, sizeof scratch);
    if (!(t = (dintattn_tokenizer *)dintattn__calloc(1, sizeof *t))) return dintattn__fail(err, DINTATTN_ERR_NOMEM, "out of memory");
    t->bos = t->eos = t->unk = -1;
    for (k = 0; k < 256; k++) t->fallback_id[k] = -1;
    if (root) {
        type = dintattn__json_get(j, root, "type");
        if (root->type != DINTATTN__JOBJ || !type || type->type != DINTATTN__JSTR ||
            (strcmp(type->str, "tiktoken") != 0 && strcmp(type->str, "bpe") != 0)) {
            r = DINTATTN__TOKFAIL("\"type\" must be \"tiktoken\" or \"bpe\"");
            goto done;
        }
        t->kind = strcmp(type->str, "bpe") == 0 ? DINTATTN__TOK_BPE : DINTATTN__TOK_TIKTOKEN;
        if (!dintattn__only_keys(j, root, t->kind ? bpe_keys : tiktoken_keys, &which)) {
            r = DINTATTN__TOKFAIL("unknown key '%.60s' for type \"%s\"", which, type->str);
            goto done;
        }
    }
    if (merges && t->kind != DINTATTN__TOK_BPE) {
        r = dintattn__fail(err, DINTATTN_ERR_METADATA, "tensor 'tokenizer.merges' is for tokenizers of type \"bpe\"");
        goto done;
    }
    if ((r = dintattn__parse_ranks(t, ranks, ranks_size, t->kind == DINTATTN__TOK_TIKTOKEN, what, err))) goto done;
    if (t->kind == DINTATTN__TOK_BPE) {
        char name[8];
        if ((r = dintattn__parse_merges(t, merges ? merges : (const unsigned char *)"", merges ? merges_size : 0, err)))
            goto done;
        t->byte_level = dintattn__jbool(j, root, "byte_level", 0, &bad);
        t->fuse_unk = dintattn__jbool(j, root, "fuse_unk", 0, &bad);
        t->byte_fallback = dintattn__jbool(j, root, "byte_fallback", 0, &bad);
        t->ignore_merges = dintattn__jbool(j, root, "ignore_merges", 0, &bad);
        if (bad) {
            r = DINTATTN__TOKFAIL("byte_level, fuse_unk, byte_fallback and ignore_merges must be true or false");
            goto done;
        }
        if ((n = dintattn__json_get(j, root, "unk_id")) != NULL) {
            if (n->type != DINTATTN__JNUM || !n->is_int || n->ival < -1 || n->ival > INT_MAX ||
                (n->ival >= 0 && !dintattn__token_of(t, (int)n->ival))) {
                r = DINTATTN__TOKFAIL("'unk_id' must be -1 or a vocabulary token's id");
                goto done;
            }
            t->unk = (int)n->ival;
        }
        for (k = 0; k < 256; k++) { /* HF's byte fallback tokens: "<0x" + 2 upper-case hex digits + ">" */
            snprintf(name, sizeof name, "<0x%02X>", k);
            t->fallback_id[k] = dintattn__lookup(t, (const unsigned char *)name, 6);
        }
        if ((n = dintattn__json_get(j, root, "normalizer")) && (r = dintattn__read_norm(t, j, n, err))) goto done;
        if ((n = dintattn__json_get(j, root, "pre_tokenizer")) && (r = dintattn__read_pre(t, j, n, err))) goto done;
        if ((n = dintattn__json_get(j, root, "decoder")) && (r = dintattn__read_decoder(t, j, n, dsteps, &n_dsteps, err)))
            goto done;
        if ((n = dintattn__json_get(j, root, "added_tokens")) && (r = dintattn__read_added(t, j, n, vocab_limit, err)))
            goto done;
    } else {
        t->n_pre = 1; /* one split: the file's "pattern", cl100k's by default */
        t->pre[0].kind = DINTATTN__PS_SPLIT;
        if (root && (r = dintattn__split_from_json(j, dintattn__json_get(j, root, "pattern"), &t->pre[0].split, err)))
            goto done;
        n = root ? dintattn__json_get(j, root, "special_tokens") : NULL;
        if (n && n->type != DINTATTN__JOBJ) {
            r = DINTATTN__TOKFAIL("\"special_tokens\" must be an object");
            goto done;
        }
        for (c = n ? n->child : -1; c >= 0; c = j->nodes[c].next) {
            const dintattn__jnode *e = &j->nodes[c];
            if (e->type != DINTATTN__JNUM || !e->is_int || e->ival < 0 || e->ival >= vocab_limit || !e->key[0]) {
                r = DINTATTN__TOKFAIL("special token '%.60s' needs an id in [0, vocab_size)", e->key);
                goto done;
            }
            if (dintattn__token_of(t, (int)e->ival)) {
                r = DINTATTN__TOKFAIL("special token '%.60s': id %d is already a token", e->key, (int)e->ival);
                goto done;
            }
            if ((r = dintattn__add_token(t, e->key, strlen(e->key), (int)e->ival, 1, 0, err))) goto done;
        }
    }
    /* what decoding gives: each token's bytes through the decoder's steps */
    if (n_dsteps) {
        for (k = 0; k < t->n_tokens && !r; k++) {
            dintattn__token *tk = &t->tokens[k];
            size_t at = dec.n;
            if (dintattn__decode_token(dsteps, n_dsteps, t->bytes + tk->off, tk->len, &dec, scratch) ||
                dec.n - at > UINT32_MAX || dec.n > UINT32_MAX)
                r = dintattn__fail(err, DINTATTN_ERR_NOMEM, "out of memory decoding the vocabulary");
            tk->doff = (uint32_t)at;
            tk->dlen = (uint32_t)(dec.n - at);
        }
        if (r) goto done;
        t->dec = dec.p ? dec.p : t->bytes;
        dec.p = NULL;
    }
    for (k = 0; k < t->n_added; k++)
        if (dintattn__finish_added(t, &t->added[k], dsteps, n_dsteps, scratch)) {
            r = dintattn__fail(err, DINTATTN_ERR_NOMEM, "out of memory");
            goto done;
        }
    for (k = 0; k < 2 && root; k++) {
        const char *key = k ? "eos_id" : "bos_id";
        int *dst = k ? &t->eos : &t->bos;
        if (!(n = dintattn__json_get(j, root, key))) continue;
        if (n->type != DINTATTN__JNUM || !n->is_int || n->ival < -1 || n->ival >= vocab_limit) {
            r = DINTATTN__TOKFAIL("'%s' must be -1 or a token id", key);
            goto done;
        }
        *dst = (int)n->ival;
    }
    /* every end-of-sequence id (checkpoints have several): eos_id and the list "eos_ids" */
    n = root ? dintattn__json_get(j, root, "eos_ids") : NULL;
    if (n && n->type != DINTATTN__JARR) {
        r = DINTATTN__TOKFAIL("'eos_ids' must be a list of token ids");
        goto done;
    }
    if (!(t->eos_ids = (int *)dintattn__calloc((size_t)(n ? n->n_children : 0) + 1, sizeof *t->eos_ids))) {
        r = dintattn__fail(err, DINTATTN_ERR_NOMEM, "out of memory");
        goto done;
    }
    if (t->eos >= 0) t->eos_ids[t->n_eos++] = t->eos;
    for (c = n ? n->child : -1; c >= 0; c = j->nodes[c].next) {
        const dintattn__jnode *e = &j->nodes[c];
        if (e->type != DINTATTN__JNUM || !e->is_int || e->ival < 0 || e->ival >= vocab_limit) {
            r = DINTATTN__TOKFAIL("'eos_ids' must be a list of token ids");
            goto done;
        }
        for (k = 0; k < t->n_eos && t->eos_ids[k] != (int)e->ival; k++) continue;
        if (k == t->n_eos) t->eos_ids[t->n_eos++] = (int)e->ival;
    }
    if (t->n_vocab > vocab_limit) {
        r = dintattn__fail(err, DINTATTN_ERR_METADATA, "the tokenizer has ids up to %d but vocab_size is %d",
                           t->n_vocab - 1, vocab_limit);
        goto done;
    }
    r = dintattn__file_fault(dintattn__index_added(t, err), DINTATTN_ERR_ARG, err);
done:
    DINTATTN_FREE(dec.p);
    DINTATTN_FREE(scratch[0].p);
    DINTATTN_FREE(scratch[1].p);
    if (r) {
        dintattn_tokenizer_free(t);
        return r;
    }
    *out = t;
    return DINTATTN_OK;
}
#undef DINTATTN__TOKFAIL

/* --- the tokenizer's API ----------------------------------------------------------------- */

DINTATTN_API dintattn_result dintattn_tokenizer_from_memory(const void *ranks, size_t size, dintattn_tokenizer **tok,
                                                            dintattn_error *err)
{
    dintattn_result r;
    if (tok) *tok = NULL;
    if (!tok || (!ranks && size))
        return dintattn__fail(err, DINTATTN_ERR_ARG, "dintattn_tokenizer_from_memory: NULL argument");
    if ((r = dintattn__tokenizer_build((const unsigned char *)ranks, size, "the rank file", NULL, 0, NULL, INT_MAX, tok,
                                       err)))
        return r;
    (*tok)->source = "tiktoken rank file";
    dintattn__ok(err);
    return DINTATTN_OK;
}

/* The tokenizer of a file's parsed container (a model file, or a tokenizer file). */
static dintattn_result dintattn__tokenizer_of_file(dintattn__file *f, int vocab_limit, dintattn_tokenizer **tok,
                                                   dintattn_error *err)
{
    dintattn__tensor *ranks = dintattn__find(f, "tokenizer.ranks"), *merges = dintattn__find(f, "tokenizer.merges");
    const dintattn__jnode *meta = NULL, *spec = NULL;
    int c;
    for (c = f->header.nodes[0].child; c >= 0; c = f->header.nodes[c].next)
        if (strcmp(f->header.nodes[c].key, "__metadata__") == 0)
            meta = &f->header.nodes[c];
    if (meta) spec = dintattn__json_get(&f->header, meta, "tokenizer");
    if (!ranks) {
        if (spec) return dintattn__fail(err, DINTATTN_ERR_METADATA, "metadata 'tokenizer' without tensor 'tokenizer.ranks'");
        return dintattn__fail(err, DINTATTN_ERR_ARG,
                              "the file carries no tokenizer (no tensor 'tokenizer.ranks'): give a tokenizer file "
                              "(python3 tools/convert.py --format tokenizer, docs/tools.md) or a tiktoken rank file");
    }
    if (ranks->dtype != DINTATTN__U8 || ranks->ndim != 1)
        return dintattn__fail(err, DINTATTN_ERR_SHAPE, "tensor 'tokenizer.ranks' must be U8 of shape [bytes]");
    if (merges && (merges->dtype != DINTATTN__U8 || merges->ndim != 1))
        return dintattn__fail(err, DINTATTN_ERR_SHAPE, "tensor 'tokenizer.merges' must be U8 of shape [bytes]");
    ranks->used = 1;
    if (merges) merges->used = 1;
    if (spec && !f->tokenizer.nodes && dintattn__json_parse(&f->tokenizer, spec->str, spec->str_len) < 0)
        return dintattn__fail(err, f->tokenizer.nomem ? DINTATTN_ERR_NOMEM : DINTATTN_ERR_METADATA,
                              "metadata 'tokenizer': %s", f->tokenizer.err);
    return dintattn__tokenizer_build(ranks->data, (size_t)(ranks->end - ranks->begin), "tensor 'tokenizer.ranks'",
                                     merges ? merges->data : NULL, merges ? (size_t)(merges->end - merges->begin) : 0,
                                     spec ? &f->tokenizer : NULL, vocab_limit, tok, err);
}

DINTATTN_API dintattn_result dintattn_tokenizer_load(const char *path, dintattn_tokenizer **tok, dintattn_error *err)
{
    char what[240];
    dintattn__file f;
    dintattn_result r;
    uint64_t hlen = 0;
    int i;
    if (tok) *tok = NULL;
    if (!tok || !path) return dintattn__fail(err, DINTATTN_ERR_ARG, "dintattn_tokenizer_load: NULL argument");
    memset(&f, 0, sizeof f);
    {
        struct stat st;
        if (stat(path, &st) == 0 && S_ISDIR(st.st_mode)) { /* a checkpoint's directory: its tokenizer converts */
            dintattn__shell_word(what, sizeof what, path, strlen(path));
            return dintattn__fail(err, DINTATTN_ERR_IO,
                                  "%.200s is a directory, not a tokenizer file: give a tokenizer, model or tiktoken rank "
                                  "file, or convert a Hugging Face checkpoint's tokenizer with python3 tools/convert.py "
                                  "--format tokenizer %s out.safetensors (docs/tools.md)", path, what);
        }
    }
    if ((r = dintattn__file_map(&f, path, err))) return r;
    for (i = 7; i >= 0 && f.size >= 10; i--) hlen = hlen << 8 | f.bytes[i];
    if (f.size >= 10 && hlen >= 2 && hlen <= DINTATTN__MAX_HEADER && f.bytes[8] == '{') {
        /* a safetensors file (perhaps cut short: the loader says so): a tokenizer file or a
           model file carrying a tokenizer. A rank file's first byte is base64, never '{'. */
        int limit = INT_MAX;
        f.tokenizer_file = 1;
        if (!(r = dintattn__file_parse(&f, err))) {
            const dintattn__jnode *v = f.config.nodes ? dintattn__json_get(&f.config, &f.config.nodes[0], "vocab_size") : NULL;
            if (v && v->type == DINTATTN__JNUM && v->is_int && v->ival > 0 && v->ival < INT_MAX) limit = (int)v->ival;
            r = dintattn__tokenizer_of_file(&f, limit, tok, err);
            if (!r) (*tok)->source = f.tokenizer_file ? "tokenizer file" : "model file";
            snprintf(what, sizeof what, "%s '%.200s': ", f.tokenizer_file ? "tokenizer file" : "model file", path);
        } else {
            snprintf(what, sizeof what, "reading a tokenizer: ");
        }
        if (r) dintattn__err_prefix(err, what);
    } else {
        size_t at = 0;
        while (at < f.size && (f.bytes[at] == ' ' || f.bytes[at] == '\t' || f.bytes[at] == '\r' || f.bytes[at] == '\n')) at++;
        snprintf(what, sizeof what, "rank file '%.200s'", path);
        if (at < f.size && f.bytes[at] == '{') { /* JSON, never a rank file's base64 */
            char word[240];
            dintattn__shell_word(word, sizeof word, path, strlen(path));
            r = dintattn__fail(err, DINTATTN_ERR_TOKENIZER,
                               "%.200s is a JSON file (a Hugging Face tokenizer.json?), not a tokenizer file: convert it "
                               "with python3 tools/convert.py --format tokenizer %s out.safetensors (docs/tools.md)",
                               path, word);
        } else if (f.size > (size_t)INT_MAX)
            r = dintattn__fail(err, DINTATTN_ERR_TOKENIZER, "rank file '%.200s' is larger than 2 GiB", path);
        else
            r = dintattn__tokenizer_build(f.bytes, f.size, what, NULL, 0, NULL, INT_MAX, tok, err);
        if (!r) (*tok)->source = "tiktoken rank file";
    }
    dintattn__file_close(&f);
    if (!r) dintattn__ok(err);
    return r;
}

DINTATTN_API dintattn_result dintattn_tokenizer_add_special(dintattn_tokenizer *t, const char *text, int id,
                                                            dintattn_error *err)
{
    dintattn__buf scratch[2];
    dintattn_result r;
    size_t len;
    int n_vocab;
    if (!t || !text || !text[0])
        return dintattn__fail(err, DINTATTN_ERR_ARG, "dintattn_tokenizer_add_special: NULL or empty text");
    len = strlen(text);
    if (id < 0 || id > DINTATTN__MAX_RANK)
        return dintattn__fail(err, DINTATTN_ERR_ARG, "special token '%.60s': id %d is not in [0, %d]", text, id,
                              DINTATTN__MAX_RANK);
    if (len > DINTATTN__ADDED_MAX_LEN)
        return dintattn__fail(err, DINTATTN_ERR_ARG, "special token '%.60s...' is longer than %d bytes", text,
                              DINTATTN__ADDED_MAX_LEN);
    if (dintattn_tokenizer_token(t, id, NULL))
        return dintattn__fail(err, DINTATTN_ERR_ARG, "special token '%.60s': id %d is already a token", text, id);
    n_vocab = t->n_vocab;
    if ((r = dintattn__add_token(t, text, len, id, 1, 0, err))) return r;
    memset(scratch, 0, sizeof scratch);
    r = dintattn__finish_added(t, &t->added[t->n_added - 1], NULL, 0, scratch)
            ? dintattn__fail(err, DINTATTN_ERR_NOMEM, "out of memory")
            : dintattn__index_added(t, err);
    DINTATTN_FREE(scratch[0].p);
    DINTATTN_FREE(scratch[1].p);
    if (r) { /* the token is not kept: the tokenizer stays as it was */
        dintattn_error keep;
        DINTATTN_FREE(t->added[--t->n_added].text);
        t->n_vocab = n_vocab;
        if (dintattn__index_added(t, &keep) && err) *err = keep;
        return r;
    }
    dintattn__ok(err);
    return r;
}

/* Replaces t's pre-tokenizer with one split, sp (which it then owns). */
static void dintattn__tokenizer_use_split(dintattn_tokenizer *t, dintattn__split *sp)
{
    int k;
    for (k = 0; k < t->n_pre; k++) {
        DINTATTN_FREE(t->pre[k].a);
        dintattn__split_free(t->pre[k].split);
    }
    memset(t->pre, 0, sizeof t->pre);
    t->pre[0].kind = DINTATTN__PS_SPLIT;
    t->pre[0].split = sp;
    t->n_pre = 1;
}

DINTATTN_API dintattn_result dintattn_tokenizer_set_patterns(dintattn_tokenizer *t, const char *const *regexes, int n,
                                                             dintattn_error *err)
{
    dintattn__split *sp;
    dintattn_result r;
    if (!t || !regexes || n < 1)
        return dintattn__fail(err, DINTATTN_ERR_ARG, "dintattn_tokenizer_set_patterns: NULL argument or n < 1");
    if ((r = dintattn__split_new(regexes, NULL, n, &sp, err))) return r;
    dintattn__tokenizer_use_split(t, sp);
    dintattn__ok(err);
    return DINTATTN_OK;
}

DINTATTN_API dintattn_result dintattn_tokenizer_set_pattern(dintattn_tokenizer *t, const char *name_or_regex,
                                                            dintattn_error *err)
{
    const char *const *named;
    dintattn__split *sp;
    dintattn_result r;
    int n;
    if (!t || !name_or_regex)
        return dintattn__fail(err, DINTATTN_ERR_ARG, "dintattn_tokenizer_set_pattern: NULL argument");
    n = dintattn__pattern_named(name_or_regex, strlen(name_or_regex), &named);
    if (n >= 0) r = dintattn__split_new(named, NULL, n, &sp, err);
    else r = dintattn__split_new(&name_or_regex, NULL, 1, &sp, err);
    if (r) return r;
    dintattn__tokenizer_use_split(t, sp);
    dintattn__ok(err);
    return DINTATTN_OK;
}

DINTATTN_API dintattn_result dintattn_tokenizer_from_model(const dintattn_model *m, dintattn_tokenizer **tok,
                                                           dintattn_error *err)
{
    dintattn_result r;
    if (tok) *tok = NULL;
    if (!m || !tok) return dintattn__fail(err, DINTATTN_ERR_ARG, "dintattn_tokenizer_from_model: NULL argument");
    if (!m->tok_ranks)
        return dintattn__fail(err, DINTATTN_ERR_ARG, "the model carries no tokenizer (no tensor 'tokenizer.ranks')");
    if ((r = dintattn__tokenizer_build(m->tok_ranks, m->tok_ranks_size, "tensor 'tokenizer.ranks'", m->tok_merges,
                                       m->tok_merges_size, m->file.tokenizer.nodes ? &m->file.tokenizer : NULL,
                                       m->cfg.vocab_size, tok, err)))
        return r;
    (*tok)->source = "model file";
    dintattn__ok(err);
    return DINTATTN_OK;
}

DINTATTN_API int dintattn_tokenizer_n_vocab(const dintattn_tokenizer *t) { return t->n_vocab; }
DINTATTN_API int dintattn_tokenizer_bos(const dintattn_tokenizer *t) { return t->bos; }
DINTATTN_API int dintattn_tokenizer_eos(const dintattn_tokenizer *t) { return t->eos; }
DINTATTN_API const char *dintattn_tokenizer_source(const dintattn_tokenizer *t) { return t->source; }

DINTATTN_API int dintattn_tokenizer_is_eos(const dintattn_tokenizer *t, int id)
{
    int k;
    for (k = 0; k < t->n_eos; k++)
        if (t->eos_ids[k] == id) return 1;
    return id >= 0 && id == t->eos;
}

DINTATTN_API int dintattn_tokenizer_is_special(const dintattn_tokenizer *t, int id)
{
    const dintattn__added *a = t ? dintattn__added_of(t, id) : NULL;
    return a && a->special;
}

DINTATTN_API int dintattn_tokenizer_has_token(const dintattn_tokenizer *t, int id)
{
    return dintattn_tokenizer_token(t, id, NULL) != NULL;
}

DINTATTN_API dintattn_result dintattn_tokenizer_encode_prompt(const dintattn_tokenizer *t, const char *text,
                                                              size_t len, int allow_special, int *ids, int max_ids,
                                                              int *n_ids, dintattn_error *err)
{
    int first = -1, n = 0, bos = t ? t->bos : -1;
    dintattn_result r;
    if (n_ids) *n_ids = 0;
    if (!t || (!ids && max_ids) || max_ids < 0 || !n_ids)
        return dintattn__fail(err, DINTATTN_ERR_ARG, "dintattn_tokenizer_encode_prompt: NULL argument or max_ids < 0");
    if (bos < 0) return dintattn_tokenizer_encode(t, text, len, allow_special, ids, max_ids, n_ids, err);
    /* the text's ids go after a slot for BOS; the first of them decides whether BOS is added */
    if (max_ids >= 2) {
        if ((r = dintattn_tokenizer_encode(t, text, len, allow_special, ids + 1, max_ids - 1, &n, err))) return r;
        first = n > 0 ? ids[1] : -1;
    } else if ((r = dintattn_tokenizer_encode(t, text, len, allow_special, &first, 1, &n, err))) {
        return r;
    }
    if (n > 0 && first == bos) { /* the text begins with BOS: not twice */
        if (n == max_ids) { /* fits without the slot, whose room lacked the last id: again, in place */
            if ((r = dintattn_tokenizer_encode(t, text, len, allow_special, ids, max_ids, &n, err))) return r;
        } else if (max_ids >= 2) {
            memmove(ids, ids + 1, sizeof(int) * (size_t)(n < max_ids - 1 ? n : max_ids - 1));
        } else if (max_ids == 1) {
            ids[0] = bos;
        }
        *n_ids = n;
    } else {
        if (n == INT_MAX)
            return dintattn__fail(err, DINTATTN_ERR_ARG, "dintattn_tokenizer_encode_prompt: more than %d ids", INT_MAX - 1);
        if (max_ids >= 1) ids[0] = bos;
        *n_ids = n + 1;
    }
    dintattn__ok(err);
    return DINTATTN_OK;
}

DINTATTN_API size_t dintattn_stop_find(const char *text, size_t len, size_t from, const char *const *stops,
                                       const size_t *stop_lens, int n_stops, int *which)
{
    size_t best = (size_t)-1, i;
    int k;
    if (which) *which = -1;
    if (!text || !stops || !stop_lens) return best;
    for (k = 0; k < n_stops; k++) {
        size_t n = stop_lens[k];
        if (n == 0 || !stops[k]) continue; /* an empty stop would end every text at once */
        for (i = from; i + n <= len && i < best; i++)
            if (memcmp(text + i, stops[k], n) == 0) {
                best = i;
                if (which) *which = k;
                break;
            }
    }
    return best;
}

/* How many bytes at the end of s[0..n) begin a valid UTF-8 character (RFC 3629: no overlongs,
   surrogates or code points past U+10FFFF) that more bytes may finish: 0 to 3. */
static size_t dintattn__utf8_partial(const unsigned char *s, size_t n)
{
    size_t back, k;
    for (back = 1; back <= 3 && back <= n; back++) {
        unsigned c = s[n - back], lo = 0x80, hi = 0xBF, need;
        if ((c & 0xC0) == 0x80) continue; /* a continuation byte: look further back */
        need = c < 0xC2 ? 0 : c < 0xE0 ? 2 : c < 0xF0 ? 3 : c < 0xF5 ? 4 : 0;
        if (need <= back) return 0; /* ASCII, invalid, or already complete */
        if (c == 0xE0) lo = 0xA0;
        if (c == 0xED) hi = 0x9F;
        if (c == 0xF0) lo = 0x90;
        if (c == 0xF4) hi = 0x8F;
        if (back >= 2 && (s[n - back + 1] < lo || s[n - back + 1] > hi)) return 0;
        for (k = 2; k < back; k++)
            if ((s[n - back + k] & 0xC0) != 0x80) return 0;
        return back;
    }
    return 0;
}

DINTATTN_API size_t dintattn_stop_safe_end(const char *text, size_t len, const char *const *stops,
                                           const size_t *stop_lens, int n_stops)
{
    size_t end = len, p;
    int k;
    if (!text) return 0;
    for (k = 0; stops && stop_lens && k < n_stops; k++) {
        size_t n = stop_lens[k];
        if (n == 0 || !stops[k]) continue;
        for (p = len > n - 1 ? len - (n - 1) : 0; p < end; p++)
            if (memcmp(text + p, stops[k], len - p) == 0) {
                end = p;
                break;
            }
    }
    return end - dintattn__utf8_partial((const unsigned char *)text, end);
}

DINTATTN_API const char *dintattn_tokenizer_token(const dintattn_tokenizer *t, int id, size_t *len)
{
    const dintattn__added *a;
    const dintattn__token *tk;
    if (len) *len = 0;
    if (!t || id < 0) return NULL;
    if ((a = dintattn__added_of(t, id)) != NULL) { /* an added token's text wins, as in HF */
        if (len) *len = a->dec_len;
        return a->dec;
    }
    if (!(tk = dintattn__token_of(t, id))) return NULL;
    if (len) *len = tk->dlen;
    return (const char *)t->dec + tk->doff;
}

DINTATTN_API dintattn_result dintattn_tokenizer_decode(const dintattn_tokenizer *t, const int *ids, int n,
                                                       int skip_special, char *out, size_t cap, size_t *len,
                                                       dintattn_error *err)
{
    dintattn__buf b;
    size_t lo = 0, hi, m, i;
    const char *s;
    int k, c, first = 1;
    if (len) *len = 0;
    if (!t || !len || n < 0 || (n && !ids) || (!out && cap))
        return dintattn__fail(err, DINTATTN_ERR_ARG, "dintattn_tokenizer_decode: NULL argument or n < 0");
    memset(&b, 0, sizeof b);
    for (k = 0; k < n; k++) {
        const dintattn__added *a;
        const dintattn__token *tk;
        if (!(s = dintattn_tokenizer_token(t, ids[k], &m))) {
            DINTATTN_FREE(b.p);
            return dintattn__fail(err, DINTATTN_ERR_ARG, "dintattn_tokenizer_decode: id %d (at %d) is no token", ids[k], k);
        }
        if (skip_special && dintattn_tokenizer_is_special(t, ids[k])) continue;
        if (first && t->ms_len) { /* HF's Metaspace decoder drops every replacement of the first token */
            a = dintattn__added_of(t, ids[k]);
            tk = a ? NULL : dintattn__token_of(t, ids[k]);
            s = a ? (a->normalized ? a->norm : a->text) : (const char *)t->bytes + tk->off;
            m = a ? (a->normalized ? a->norm_len : a->len) : tk->len;
            for (i = 0; i < m;)
                if (m - i >= t->ms_len && memcmp(s + i, t->ms, t->ms_len) == 0) i += t->ms_len;
                else if (dintattn__buf_put(&b, s + i++, 1)) break;
            if (i < m) goto nomem;
        } else if (dintattn__buf_put(&b, s, m)) {
            goto nomem;
        }
        first = 0;
    }
    /* HF's Strip after Fuse: up to strip_start copies of the character off the start of the
       text, strip_stop off its end */
    hi = b.n;
    for (c = 0; c < t->strip_start && hi - lo >= t->strip_len && memcmp(b.p + lo, t->strip, t->strip_len) == 0; c++)
        lo += t->strip_len;
    for (c = 0; c < t->strip_stop && hi - lo >= t->strip_len && memcmp(b.p + hi - t->strip_len, t->strip, t->strip_len) == 0;
         c++)
        hi -= t->strip_len;
    if (cap && hi > lo) memcpy(out, b.p + lo, hi - lo < cap ? hi - lo : cap); /* b.p is NULL for no text */
    *len = hi - lo;
    if (*len < cap) out[*len] = 0;
    DINTATTN_FREE(b.p);
    dintattn__ok(err);
    return DINTATTN_OK;
nomem:
    DINTATTN_FREE(b.p);
    return dintattn__fail(err, DINTATTN_ERR_NOMEM, "out of memory decoding %d ids", n);
}

/* --- chat --------------------------------------------------------------------------------- */

/* Appends n bytes to out[*len ..) where they fit; *len counts them all. */
static void dintattn__append(char *out, size_t cap, size_t *len, const char *s, size_t n)
{
    if (*len < cap) memcpy(out + *len, s, cap - *len < n ? cap - *len : n);
    *len += n;
}

DINTATTN_API dintattn_result dintattn_chat_format(const dintattn_model *m, const dintattn_chat_message *msgs, int n,
                                                  int add_generation_prompt, char *out, size_t cap, size_t *len,
                                                  dintattn_error *err)
{
    const dintattn__json *j = m ? &m->file.chat : NULL;
    size_t at = 0;
    int i, c;
    if (len) *len = 0;
    if (!m || !len || (n > 0 && !msgs) || n < 0 || (!out && cap))
        return dintattn__fail(err, DINTATTN_ERR_ARG, "dintattn_chat_format: NULL argument or n < 0");
    if (m->chat_begin) dintattn__append(out, cap, &at, m->chat_begin->str, m->chat_begin->str_len);
    /* a template with a default system message puts it first when the conversation has none */
    i = m->chat_system && (n == 0 || !msgs[0].role || strcmp(msgs[0].role, "system") != 0) ? -1 : 0;
    for (; i < n; i++) {
        const char *role = i < 0 ? "system" : msgs[i].role;
        const char *content = i < 0 ? m->chat_system->str : msgs[i].content ? msgs[i].content : "";
        const dintattn__jnode *pair = NULL, *pre, *suf;
        if (!role) return dintattn__fail(err, DINTATTN_ERR_ARG, "dintattn_chat_format: message %d has no role", i);
        if (!m->chat_roles) { /* no template: the contents, one a line */
            dintattn__append(out, cap, &at, content, strlen(content));
            dintattn__append(out, cap, &at, "\n", 1);
            continue;
        }
        for (c = m->chat_roles->child; c >= 0 && !pair; c = j->nodes[c].next)
            if (strcmp(j->nodes[c].key, role) == 0) pair = &j->nodes[c];
        if (!pair)
            return dintattn__fail(err, DINTATTN_ERR_ARG, "the chat template has no role '%.60s'", role);
        if (i == n - 1 && m->chat_last) { /* the last message may be written otherwise (Qwen3) */
            const dintattn__jnode *last = dintattn__json_get(j, m->chat_last, role), *unless;
            unless = last && last->n_children == 3 ? &j->nodes[j->nodes[j->nodes[last->child].next].next] : NULL;
            if (last && !(unless && strstr(content, unless->str))) pair = last;
        }
        pre = &j->nodes[pair->child];
        suf = &j->nodes[pre->next];
        dintattn__append(out, cap, &at, pre->str, pre->str_len);
        dintattn__append(out, cap, &at, content, strlen(content));
        dintattn__append(out, cap, &at, suf->str, suf->str_len);
    }
    if ((add_generation_prompt || m->chat_prompt_always) && m->chat_prompt)
        dintattn__append(out, cap, &at, m->chat_prompt->str, m->chat_prompt->str_len);
    if (at < cap) out[at] = 0;
    *len = at;
    dintattn__ok(err);
    return DINTATTN_OK;
}

DINTATTN_API int dintattn_chat_has_template(const dintattn_model *m) { return m->chat_roles != NULL; }

DINTATTN_API int dintattn_chat_n_stops(const dintattn_model *m) { return m->chat_stop ? m->chat_stop->n_children : 0; }

DINTATTN_API const char *dintattn_chat_stop(const dintattn_model *m, int k)
{
    int c = m->chat_stop ? m->chat_stop->child : -1;
    for (; c >= 0 && k > 0; k--) c = m->file.chat.nodes[c].next;
    return c >= 0 && k == 0 ? m->file.chat.nodes[c].str : NULL;
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
