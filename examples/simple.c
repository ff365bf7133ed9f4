/* simple: the shortest complete program -- load a model, encode a prompt, prefill, then sample
   and decode token by token, printing the text as it comes. Greedy, so the same prompt always
   gives the same text (examples/generate --temp 0 prints the same).

       examples/simple MODEL "prompt" [n_tokens]

   Build alone: cc -O2 examples/simple.c -lopenblas -lm -lpthread -o simple */
#define DINTATTN_IMPLEMENTATION
#include "../dintattn.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int main(int argc, char **argv)
{
    dintattn_model *model = NULL;
    dintattn_tokenizer *tok = NULL;
    dintattn_session *sess = NULL;
    dintattn_sampler *sampler = NULL;
    dintattn_session_options so = {0};     /* all zero: the engine's defaults */
    dintattn_sampler_options greedy = {0}; /* all zero: the most likely token each step */
    dintattn_error err = {0};
    int *ids = NULL, n_ids = 0, n_ctx, n_new, i, full = 0, rc = 1;
    float *logits = NULL;

    if (argc == 2 && (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h"))) {
        printf("usage: simple MODEL \"prompt\" [n_tokens (0 or more, default 32)]\n"
               "Greedy text from a dintattn model file that carries its tokenizer.\n");
        return 0;
    }
    if (argc < 3 || argc > 4) {
        fprintf(stderr, "usage: simple MODEL \"prompt\" [n_tokens (default 32)]\n");
        return 2;
    }
    n_new = argc == 4 ? atoi(argv[3]) : 32;
    if (n_new < 0) n_new = 0;

    /* 1. the model and the tokenizer its file carries */
    if (dintattn_model_load(argv[1], NULL, &model, &err) || dintattn_tokenizer_from_model(model, &tok, &err))
        goto fail;
    n_ctx = dintattn_model_config(model)->max_seq_len;

    /* 2. the prompt's ids, BOS first: once to measure, once to fill */
    if (dintattn_tokenizer_encode_prompt(tok, argv[2], strlen(argv[2]), 1, NULL, 0, &n_ids, &err)) goto fail;
    if (!(ids = malloc(sizeof(int) * (size_t)(n_ids + 1)))) {
        snprintf(err.message, sizeof err.message, "out of memory");
        goto fail;
    }
    if (dintattn_tokenizer_encode_prompt(tok, argv[2], strlen(argv[2]), 1, ids, n_ids + 1, &n_ids, &err)) goto fail;
    if (n_ids == 0 || n_ids >= n_ctx) {
        fprintf(stderr, "simple: the prompt is %d tokens; give 1 to %d\n", n_ids, n_ctx - 1);
        goto done;
    }

    /* 3. a session with room for the prompt and the new tokens, and a greedy sampler */
    so.n_ctx = n_new < n_ctx - n_ids ? n_ids + n_new : n_ctx;
    so.n_threads = 2; /* the examples' default; 0 would be 1 */
    logits = malloc(sizeof(float) * (size_t)dintattn_model_config(model)->vocab_size);
    if (!logits) snprintf(err.message, sizeof err.message, "out of memory");
    if (!logits || dintattn_session_new(model, &so, &sess, &err) ||
        dintattn_sampler_new(dintattn_model_config(model)->vocab_size, &greedy, &sampler, &err))
        goto fail;

    /* 4. the prompt in one pass: logits of its last token */
    if (dintattn_prefill(sess, ids, n_ids, logits, 0, &err)) goto fail;
    fputs(argv[2], stdout);

    /* 5. one token at a time until an end-of-sequence id, n_tokens or the context's end */
    for (i = 0; i < n_new; i++) {
        size_t len;
        int next = dintattn_sampler_sample(sampler, logits);
        const char *bytes = dintattn_tokenizer_token(tok, next, &len);
        if (dintattn_tokenizer_is_eos(tok, next)) break;
        if (bytes) fwrite(bytes, 1, len, stdout); /* no bytes: an id past the tokenizer */
        fflush(stdout);
        if ((full = n_ids + i >= so.n_ctx)) break; /* the session is full: no room to run this token */
        if (dintattn_decode(sess, next, logits, &err)) goto fail;
    }
    putchar('\n');
    if (full) fprintf(stderr, "simple: stopped: the context of %d tokens is full\n", so.n_ctx);
    rc = 0;
    goto done;
fail:
    fprintf(stderr, "simple: %s\n", err.message);
done:
    free(logits);
    free(ids);
    dintattn_sampler_free(sampler);
    dintattn_session_free(sess);
    dintattn_tokenizer_free(tok);
    dintattn_model_free(model);
    return rc;
}
