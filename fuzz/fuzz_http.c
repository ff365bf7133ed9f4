/* libFuzzer harness: examples/server's own byte-level layer (examples/server_params.h and the
   string helpers of examples/strbuf.h), no sockets and no model; HTTP itself is libmicrohttpd's.
   The first byte picks the mode (the rest is the input):
     0, 1: a /v1/completions body, 2: a /v1/chat/completions body (srv_parse_params)
     3: bytes as streamed text: cut at every point the stream would cut (srv_utf8_partial), each
        piece escaped (srv_buf_json_str)
   Contract: a body is read or refused with a message, and what is read is in range (prompts,
   token ids, n, logprobs, stop strings); every escaped string is valid JSON that dintattn.h's
   JSON reader reads back as the input (invalid UTF-8 as U+FFFD); held-back tails are at most 3
   bytes of an unfinished character, and the streamed pieces read as the whole text does. */
#define DINTATTN_IMPLEMENTATION
#include "../dintattn.h"
#include "../examples/server_params.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void check_params(const char *body, size_t n, int chat)
{
    srv_params p;
    char err[320];
    const char *param = NULL;
    int r, k;
    err[0] = 0;
    r = srv_parse_params(body, n, chat, &p, err, sizeof err, &param);
    if (r != 0 && r != -1) abort();
    if (r == -1 && (!err[0] || !memchr(err, 0, sizeof err))) abort();
    if (r == 0) {
        if (p.max_tokens < -1 || (p.max_tokens == 0 && !p.echo)) abort();
        if (!(p.temperature >= 0 && p.temperature <= 2) || !(p.top_p >= 0 && p.top_p <= 1)) abort();
        if (p.n < 1 || p.n > SRV_MAX_N || p.logprobs < -1 || p.logprobs > SRV_MAX_TOP) abort();
        if (p.n_stop < 0 || p.n_stop > SRV_MAX_STOPS) abort();
        for (k = 0; k < p.n_stop; k++)
            if (!p.stop[k] || p.stop_len[k] == 0 || strlen(p.stop[k]) != p.stop_len[k]) abort();
        if (chat) {
            if (p.n_msgs < 1 || !p.msgs) abort();
            for (k = 0; k < p.n_msgs; k++)
                if (!p.msgs[k].role || !p.msgs[k].content) abort();
        } else {
            if (p.n_prompts < 1 || p.n_prompts > SRV_MAX_PROMPTS || !p.prompts) abort();
            for (k = 0; k < p.n_prompts; k++) {
                const srv_prompt *q = &p.prompts[k];
                int i;
                if (q->text ? strlen(q->text) != q->len : (q->n_ids < 1 || !q->ids)) abort();
                for (i = 0; !q->text && i < q->n_ids; i++)
                    if (q->ids[i] < 0) abort();
            }
        }
    }
    srv_params_free(&p);
}

/* Escapes s[0..n) and parses it back: it must be valid JSON holding the same bytes, each byte of
   invalid UTF-8 replaced by U+FFFD (a NUL is escaped as \u0000, which the strict parser refuses).
   The text a client reads is appended to `seen` (if not NULL). */
static void check_escape(const char *s, size_t n, srv_buf *seen)
{
    srv_buf b;
    dintattn_json *j;
    srv_buf want;
    size_t i = 0;
    memset(&b, 0, sizeof b);
    memset(&want, 0, sizeof want);
    srv_buf_json_str(&b, s, n);
    if (b.nomem) abort();
    while (i < n) { /* the expected text */
        size_t len = (unsigned char)s[i] < 0x80 ? 1 : srv_utf8_char((const unsigned char *)s + i, n - i);
        if (len) srv_buf_add(&want, s + i, len), i += len;
        else srv_buf_add(&want, "\xEF\xBF\xBD", 3), i++;
    }
    if (memchr(s, 0, n)) {
        if (!strstr(b.p, "\\u0000")) abort();
    } else {
        size_t len;
        const char *got;
        if (dintattn_json_parse(b.p, b.len, &j, NULL) != DINTATTN_OK) abort();
        got = dintattn_json_str(j, dintattn_json_root(j), &len);
        if (!got || len != want.len || (want.len && memcmp(got, want.p, want.len) != 0)) abort();
        dintattn_json_free(j);
    }
    if (seen) srv_buf_add(seen, want.p ? want.p : "", want.len);
    srv_buf_free(&b);
    srv_buf_free(&want);
}

/* A stream's chunks read as the whole text would: the cuts fall between characters. */
static void check_stream(const char *s, size_t n)
{
    size_t sent = 0, end, cut;
    srv_buf pieces, whole;
    memset(&pieces, 0, sizeof pieces);
    memset(&whole, 0, sizeof whole);
    /* a stream that grows one byte at a time: send what is safe, hold the rest */
    for (end = 1; end <= n; end++) {
        size_t hold = srv_utf8_partial(s, end);
        if (hold > 3 || hold > end) abort();
        cut = end - hold;
        if (hold && srv_utf8_char((const unsigned char *)s + cut, hold) != 0) abort(); /* held a whole char */
        if (cut > sent) {
            check_escape(s + sent, cut - sent, &pieces);
            sent = cut;
        }
    }
    if (sent < n) check_escape(s + sent, n - sent, &pieces);
    check_escape(s, n, &whole);
    if (pieces.nomem || whole.nomem || pieces.len != whole.len || (whole.len && memcmp(pieces.p, whole.p, whole.len) != 0))
        abort();
    srv_buf_free(&pieces);
    srv_buf_free(&whole);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const char *in = (const char *)data + 1;
    size_t n = size ? size - 1 : 0;
    if (size == 0) return 0;
    switch (data[0] & 3) {
    case 0:
    case 1:
    case 2:
        check_params(in, n, (data[0] & 3) == 2);
        break;
    default:
        check_stream(in, n);
        break;
    }
    return 0;
}
