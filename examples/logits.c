/* logits: writes the logits of every position of a token sequence, for checking the engine.

       examples/logits MODEL.safetensors IDS OUT.bin [--decode | --chunk K] [--threads T]
                       [--weights file|f32|bf16|q8|q4] [--map auto|file|copy] [--precision auto|exact|fast]
                       [--kernels auto|portable|avx2|avx512|amx] [--kv f32|bf16|q8]

   IDS is a comma-separated list of token ids. OUT.bin receives little-endian float32, row-major
   [N, vocab_size]. Default: one prefill of all ids; --decode: one token at a time; --chunk K:
   prefills of K tokens. --threads: 2 by default, as in every example. --kernels caps the kernel
   level (default: the environment variable DINTATTN_KERNELS when set, as the tests read it, else
   auto).
   Exits 0 on success, 1 with one line on stderr on any error. */
#define _POSIX_C_SOURCE 200809L
#define DINTATTN_IMPLEMENTATION
#include "../dintattn.h"
#define CLI_PROG "logits"
#include "cli.h" /* cli_engine, cli_fail, cli_parse_int, cli_parse_ids, cli_load_model: what the examples share */

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *usage =
    "usage: logits MODEL.safetensors IDS OUT.bin [options]\n"
    "  IDS\tcomma-separated token ids, 1 to the model's context, each in [0, vocab_size)\n"
    "  OUT.bin\treceives little-endian float32 logits, row-major [N, vocab_size]\n"
    "  --decode\tone token at a time (default: one prefill of all ids)\n"
    "  --chunk K\tprefills of K tokens, 1 or more (default: all ids at once)\n"
    "  --threads T\tthreads for attention heads and matrix rows (" CLI_THREADS_RANGE ")\n"
    CLI_ENGINE_USAGE
    "  -h, --help\tthis text\n";

int main(int argc, char **argv)
{
    dintattn_error err;
    dintattn_model *model = NULL;
    dintattn_session *sess = NULL;
    dintattn_session_options so;
    cli_engine eng; /* --threads (2 by default, as every example), --weights, --map, --precision, --kv, --kernels */
    int *ids = NULL, n, chunk = 0, i, rc = 1, bad;
    float *logits = NULL;
    FILE *out = NULL;
    char msg[512];
    size_t V;
    argv = cli_aliases(&argc, argv);

    cli_engine_init(&eng);
    for (i = 1; i < argc; i++)
        if (!strcmp(argv[i], "-h") || !strcmp(argv[i], "--help")) {
            cli_usage(stdout, usage, 18);
            return 0;
        }
    if (argc < 4) return cli_fail("usage: logits MODEL.safetensors IDS OUT.bin [options] (see --help)", NULL);
    for (i = 4; i < argc; i++) {
        if (strcmp(argv[i], "--decode") == 0) chunk = 1;
        else if (strcmp(argv[i], "--chunk") == 0 && i + 1 < argc) {
            if (cli_parse_int(argv[++i], 1, INT_MAX, &chunk)) return cli_fail("--chunk needs a positive integer", NULL);
        } else if (argv[i][0] == '-' && i + 1 < argc &&
                   (bad = cli_engine_option(&eng, CLI_ENGINE, argv[i], argv[i + 1], &err)) >= 0) {
            if (bad && err.message[0]) return cli_fail(argv[i], err.message);
            if (bad) {
                snprintf(msg, sizeof msg, "bad value '%.200s' for %s", argv[i + 1], argv[i]);
                return cli_fail(msg, NULL);
            }
            i++;
        } else if (argv[i][0] == '-' && i + 1 == argc && (!strcmp(argv[i], "--chunk") ||
                                                          cli_engine_option(&eng, CLI_ENGINE, argv[i], "", NULL) >= 0)) {
            return cli_fail("missing value for", argv[i]); /* (the test above only asked whether it is one) */
        } else {
            snprintf(msg, sizeof msg, "unknown argument '%.200s'", argv[i]);
            return cli_fail(msg, NULL);
        }
    }
    if (cli_engine_done(&eng)) return 1;
    n = cli_parse_ids(argv[2], &ids);
    if (n < 0) {
        free(ids);
        return cli_fail("IDS must be comma-separated integers, e.g. 1,2,3", NULL);
    }
    if (cli_load_model(argv[1], eng.weights, eng.map, eng.threads, &model, &err) != DINTATTN_OK) {
        free(ids);
        return cli_fail(err.message, NULL);
    }
    V = (size_t)dintattn_model_config(model)->vocab_size;
    if (n > dintattn_model_config(model)->max_seq_len) {
        snprintf(err.message, sizeof err.message, "%d ids exceed the model's context of %d tokens", n,
                 dintattn_model_config(model)->max_seq_len);
        goto fail;
    }
    cli_session_options(&eng, n, &so); /* a session just large enough: memory follows the input, not max_seq_len */
    if (dintattn_session_new(model, &so, &sess, &err) != DINTATTN_OK) goto fail;
    logits = (float *)malloc(sizeof(float) * V * (size_t)n);
    if (!logits) {
        snprintf(err.message, sizeof err.message, "out of memory for %d x %lu logits", n, (unsigned long)V);
        goto fail;
    }
    if (chunk == 0) chunk = n;
    for (i = 0; i < n; i += chunk) {
        int k = n - i < chunk ? n - i : chunk;
        if (dintattn_prefill(sess, ids + i, k, logits + (size_t)i * V, 1, &err) != DINTATTN_OK) goto fail;
    }
    out = fopen(argv[3], "wb");
    if (!out) {
        snprintf(err.message, sizeof err.message, "cannot write '%.200s': %s", argv[3], strerror(errno));
        goto fail;
    }
    if (fwrite(logits, sizeof(float), V * (size_t)n, out) != V * (size_t)n || fclose(out) != 0) {
        out = NULL;
        snprintf(err.message, sizeof err.message, "cannot write '%.200s'", argv[3]);
        goto fail;
    }
    out = NULL;
    rc = 0;
fail:
    if (rc) cli_fail(err.message, NULL);
    if (out) fclose(out);
    free(logits);
    free(ids);
    dintattn_session_free(sess);
    dintattn_model_free(model);
    return rc;
}
