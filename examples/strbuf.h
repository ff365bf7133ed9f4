/* strbuf.h: the examples' growable byte buffer and the UTF-8 checks their output needs, shared by
   generate, needle, score, attention and the server (whose JSON replies are built with them):

     srv_buf            a growable, always NUL-terminated byte buffer that notes a failed append
     srv_buf_json_str   a JSON string literal (UTF-8 passes through; invalid bytes become U+FFFD)
     srv_utf8_char      the length of the valid UTF-8 character at a position, or 0
     srv_utf8_partial   how many bytes at the end of a buffer are an unfinished UTF-8 character
     srv_buf_num        a number in JSON (null for NaN and infinities)

   It needs only the C library (not dintattn.h). The names keep the server's srv_ prefix, which
   the programs that include it already use. */
#ifndef DINTATTN_STRBUF_H
#define DINTATTN_STRBUF_H

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#ifndef SRV_FN
#if defined(__GNUC__)
#define SRV_FN static __attribute__((unused)) /* not every includer calls every function */
#else
#define SRV_FN static
#endif
#endif

/* --- a growable byte buffer ------------------------------------------------------------- */

typedef struct srv_buf {
    char *p;
    size_t len, cap;
    int nomem; /* an append failed: the content is incomplete */
} srv_buf;

SRV_FN void srv_buf_free(srv_buf *b)
{
    free(b->p);
    memset(b, 0, sizeof *b);
}

SRV_FN int srv_buf_reserve(srv_buf *b, size_t extra)
{
    size_t want;
    char *grown;
    if (b->nomem) return -1;
    if (extra > ((size_t)-1) / 2 - b->len) {
        b->nomem = 1;
        return -1;
    }
    want = b->len + extra + 1; /* always room for a NUL */
    if (want <= b->cap) return 0;
    if (want < 2 * b->cap) want = 2 * b->cap;
    if (want < 256) want = 256;
    grown = (char *)realloc(b->p, want);
    if (!grown) {
        b->nomem = 1;
        return -1;
    }
    b->p = grown;
    b->cap = want;
    return 0;
}

SRV_FN void srv_buf_add(srv_buf *b, const char *s, size_t n)
{
    if (srv_buf_reserve(b, n)) return;
    if (n) memcpy(b->p + b->len, s, n);
    b->len += n;
    b->p[b->len] = 0;
}

SRV_FN void srv_buf_str(srv_buf *b, const char *s) { srv_buf_add(b, s, strlen(s)); }

#if defined(__GNUC__)
__attribute__((format(printf, 2, 3)))
#endif
SRV_FN void srv_buf_printf(srv_buf *b, const char *fmt, ...)
{
    char tmp[512];
    va_list ap;
    int n;
    va_start(ap, fmt);
    n = vsnprintf(tmp, sizeof tmp, fmt, ap);
    va_end(ap);
    if (n < 0) return;
    srv_buf_add(b, tmp, (size_t)n < sizeof tmp ? (size_t)n : sizeof tmp - 1);
}

/* --- UTF-8 ------------------------------------------------------------------------------ */

/* The bytes a lead byte's second byte may take (RFC 3629: no overlongs, no surrogates, nothing
   past U+10FFFF); returns the sequence's length, 0 for a byte that starts none. */
SRV_FN int srv_utf8_lead(unsigned char c, unsigned char *lo, unsigned char *hi)
{
    *lo = 0x80;
    *hi = 0xBF;
    if (c < 0x80) return 1;
    if (c < 0xC2) return 0;
    if (c < 0xE0) return 2;
    if (c < 0xF0) {
        if (c == 0xE0) *lo = 0xA0;
        if (c == 0xED) *hi = 0x9F;
        return 3;
    }
    if (c < 0xF5) {
        if (c == 0xF0) *lo = 0x90;
        if (c == 0xF4) *hi = 0x8F;
        return 4;
    }
    return 0;
}

/* Length of the valid UTF-8 character at s[0..n), or 0 if the bytes there are not one (invalid, or
   cut short by the end of the buffer). */
SRV_FN size_t srv_utf8_char(const unsigned char *s, size_t n)
{
    unsigned char lo, hi;
    int need = srv_utf8_lead(s[0], &lo, &hi), k;
    if (need == 0 || (size_t)need > n) return 0;
    if (need > 1 && (s[1] < lo || s[1] > hi)) return 0;
    for (k = 2; k < need; k++)
        if ((s[k] & 0xC0) != 0x80) return 0;
    return (size_t)need;
}

/* How many bytes at the end of s[0..n) begin a valid UTF-8 character that the next bytes may
   finish (0 to 3): a streamed chunk holds them back so that every chunk is whole characters. */
SRV_FN size_t srv_utf8_partial(const char *s, size_t n)
{
    const unsigned char *u = (const unsigned char *)s;
    size_t back;
    for (back = 1; back <= 3 && back <= n; back++) {
        unsigned char c = u[n - back], lo, hi;
        int need;
        size_t k;
        if ((c & 0xC0) == 0x80) continue; /* a continuation byte: look further back */
        need = srv_utf8_lead(c, &lo, &hi);
        if (need <= 1 || (size_t)need <= back) return 0; /* ASCII, invalid, or already complete */
        if (back >= 2 && (u[n - back + 1] < lo || u[n - back + 1] > hi)) return 0;
        for (k = 2; k < back; k++)
            if ((u[n - back + k] & 0xC0) != 0x80) return 0;
        return back;
    }
    return 0;
}

/* Appends s[0..n) as a JSON string literal, quotes included. Valid UTF-8 passes through; each
   byte that is not part of a valid character becomes U+FFFD, so the output is always valid
   UTF-8 and valid JSON. */
SRV_FN void srv_buf_json_str(srv_buf *b, const char *s, size_t n)
{
    const unsigned char *u = (const unsigned char *)s;
    size_t i = 0, run = 0; /* s[i - run .. i) are bytes to copy as they are */
    srv_buf_add(b, "\"", 1);
    while (i < n) {
        unsigned char c = u[i];
        const char *esc = NULL;
        char tmp[8];
        size_t len;
        if (c >= 0x20 && c < 0x80 && c != '"' && c != '\\') {
            run++;
            i++;
            continue;
        }
        if (c >= 0x80 && (len = srv_utf8_char(u + i, n - i)) > 0) {
            run += len;
            i += len;
            continue;
        }
        srv_buf_add(b, s + i - run, run);
        run = 0;
        switch (c) {
        case '"': esc = "\\\""; break;
        case '\\': esc = "\\\\"; break;
        case '\n': esc = "\\n"; break;
        case '\r': esc = "\\r"; break;
        case '\t': esc = "\\t"; break;
        case '\b': esc = "\\b"; break;
        case '\f': esc = "\\f"; break;
        default:
            if (c < 0x20) {
                snprintf(tmp, sizeof tmp, "\\u%04x", c);
                esc = tmp;
            } else {
                esc = "\xEF\xBF\xBD"; /* U+FFFD for a byte of invalid UTF-8 */
            }
        }
        srv_buf_str(b, esc);
        i++;
    }
    srv_buf_add(b, s + i - run, run);
    srv_buf_add(b, "\"", 1);
}

/* x as a JSON number to 10 significant digits, or null for NaN and infinities (JSON has neither) */
SRV_FN void srv_buf_num(srv_buf *b, double x)
{
    if (isfinite(x)) srv_buf_printf(b, "%.10g", x);
    else srv_buf_str(b, "null");
}

#endif /* DINTATTN_STRBUF_H */
