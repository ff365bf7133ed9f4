/* textgen.h: the pieces of a generation loop that examples/server.c and examples/generate.c
   (--chat) share.

     tg_stops    a set of stop strings: the earliest one in generated text (tg_stops_find,
                 tg_stops_find_new) and how far the text may be shown before more of it is known
                 (tg_stops_safe_end); the rules are the library's (dintattn_stop_find,
                 dintattn_stop_safe_end)
     tg_encode   a prompt's ids in a new array, with the library's BOS rule
                 (dintattn_tokenizer_encode_prompt), special tokens' texts as their ids
     tg_cache    the ids a session holds; tg_cache_load keeps their longest common prefix with a
                 new prompt (dintattn_session_truncate) and prefills only the rest

   Include after dintattn.h (with the implementation). */
#ifndef DINTATTN_TEXTGEN_H
#define DINTATTN_TEXTGEN_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#if defined(__GNUC__)
#define TG_FN static __attribute__((unused)) /* not every includer calls every function */
#else
#define TG_FN static
#endif

#define TG_MAX_STOPS 96

/* --- stop strings ---------------------------------------------------------------------------- */

typedef struct tg_stops {
    const char *s[TG_MAX_STOPS]; /* not owned: they must outlive the set */
    size_t len[TG_MAX_STOPS];
    int n;
    size_t max_len;
} tg_stops;

/* Adds a stop string s[0..len) (an empty one is skipped); -1 if the set is full. */
TG_FN int tg_stops_add(tg_stops *st, const char *s, size_t len)
{
    if (len == 0) return 0;
    if (st->n >= TG_MAX_STOPS) return -1;
    st->s[st->n] = s;
    st->len[st->n++] = len;
    if (len > st->max_len) st->max_len = len;
    return 0;
}

/* Adds the model's chat-template stop strings (as many as fit). */
TG_FN void tg_stops_add_template(tg_stops *st, const dintattn_model *model)
{
    int k;
    for (k = 0; k < dintattn_chat_n_stops(model); k++) {
        const char *s = dintattn_chat_stop(model, k);
        if (s && tg_stops_add(st, s, strlen(s))) break;
    }
}

/* The offset of the earliest stop string in text[0..len) that starts at or after `from`, or
   (size_t)-1: the library's dintattn_stop_find over the set. */
TG_FN size_t tg_stops_find(const tg_stops *st, const char *text, size_t len, size_t from)
{
    return dintattn_stop_find(text, len, from, st->s, st->len, st->n, NULL);
}

/* As tg_stops_find, after bytes were appended to text at offset `before`: only a stop string
   that ends in the new bytes is new, and none starts before `shown` (the text already shown:
   tg_stops_safe_end held back every tail that could begin one). */
TG_FN size_t tg_stops_find_new(const tg_stops *st, const char *text, size_t len, size_t before, size_t shown)
{
    size_t at = before > st->max_len ? before - st->max_len : 0;
    return tg_stops_find(st, text, len, at > shown ? at : shown);
}

/* How far text[0..len) may be shown: before any tail that could begin a stop string, and
   before an unfinished UTF-8 character (the library's dintattn_stop_safe_end over the set). */
TG_FN size_t tg_stops_safe_end(const tg_stops *st, const char *text, size_t len)
{
    return dintattn_stop_safe_end(text, len, st->s, st->len, st->n);
}

/* --- prompts --------------------------------------------------------------------------------- */

/* Encodes a prompt into *ids (malloc'ed; free it) with the library's BOS rule
   (dintattn_tokenizer_encode_prompt: the model's BOS first, unless the text begins with it);
   special tokens' texts become their ids. Returns the count, or -1 with err set. */
TG_FN int tg_encode(const dintattn_tokenizer *tok, const char *text, size_t len, int **ids, dintattn_error *err)
{
    int n, again;
    *ids = NULL;
    if (dintattn_tokenizer_encode_prompt(tok, text, len, 1, NULL, 0, &n, err)) return -1;
    *ids = (int *)malloc(sizeof(int) * ((size_t)n + 1));
    if (!*ids) {
        if (err) {
            err->code = DINTATTN_ERR_NOMEM;
            snprintf(err->message, sizeof err->message, "out of memory for %d token ids", n + 1);
        }
        return -1;
    }
    if (dintattn_tokenizer_encode_prompt(tok, text, len, 1, *ids, n + 1, &again, err)) return -1;
    if (again != n) {
        if (err) {
            err->code = DINTATTN_ERR_ARG;
            snprintf(err->message, sizeof err->message, "the tokenizer gave %d ids, then %d", n, again);
        }
        return -1;
    }
    return n;
}

/* --- the ids a session holds ----------------------------------------------------------------- */

typedef struct tg_cache {
    int *ids; /* in order; room for the session's n_ctx */
    int n;
} tg_cache;

/* How many ids a[0..na) and b[0..nb) have in common at their start. */
TG_FN int tg_common_prefix(const int *a, int na, const int *b, int nb)
{
    int k = 0;
    while (k < na && k < nb && a[k] == b[k]) k++;
    return k;
}

/* Puts ids[0..n) in the session and its logits (of the last id) in logits, keeping the longest
   prefix the session already holds (all but the last id at most, whose logits are needed) and
   cutting the rest (dintattn_session_truncate): a conversation that goes on prefills only its new
   turn, one whose last turn was edited or taken back only what changed. Returns the ids reused,
   or -1 (err set; the session is then empty). */
TG_FN int tg_cache_load(tg_cache *c, dintattn_session *sess, const int *ids, int n, float *logits, dintattn_error *err)
{
    int reuse = dintattn_session_pos(sess) == c->n ? tg_common_prefix(c->ids, c->n, ids, n) : 0;
    if (reuse > n - 1) reuse = n - 1;
    if (reuse < dintattn_session_pos(sess) && dintattn_session_truncate(sess, reuse, err)) reuse = -1;
    if (reuse <= 0) {
        dintattn_session_reset(sess);
        reuse = 0;
    }
    c->n = reuse;
    if (dintattn_prefill(sess, ids + reuse, n - reuse, logits, 0, err)) {
        dintattn_session_reset(sess);
        c->n = 0;
        return -1;
    }
    memcpy(c->ids, ids, sizeof(int) * (size_t)n);
    c->n = n;
    return reuse;
}

/* Decodes one more id after those held (its logits in logits); on failure the session is
   emptied and -1 returned (err set). */
TG_FN int tg_cache_decode(tg_cache *c, dintattn_session *sess, int id, float *logits, dintattn_error *err)
{
    if (dintattn_decode(sess, id, logits, err)) {
        dintattn_session_reset(sess);
        c->n = 0;
        return -1;
    }
    c->ids[c->n++] = id;
    return 0;
}

#endif /* DINTATTN_TEXTGEN_H */
