/* split_pieces: the pieces dintattn's split patterns cut texts into (for tests/split_check.sh).

       split_pieces NAME|REGEX... < CASES
       split_pieces --json PATTERN < CASES

   CASES: texts, each a 4-byte little-endian length and its bytes. Prints one line per text: the
   byte lengths of its pieces, comma-separated. NAME is a family dintattn knows (cl100k and llama3
   run the hand-written splitter, the others the regex matcher); anything else is compiled as a
   regex, several as a sequence (each piece of one split again by the next). --json takes what a
   model file's tokenizer metadata may hold as "pattern" (docs/format.md section 5), e.g. with Split behaviors. Exits 1 with a message on stderr if the pattern does not compile. */
#define DINTATTN_IMPLEMENTATION
#include "../../dintattn.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct out {
    const dintattn__rtext *text;
    int first;
} out;

static int put(void *user, int lo, int hi)
{
    out *o = (out *)user;
    printf(o->first ? "%d" : ",%d", o->text->off[hi] - o->text->off[lo]);
    o->first = 0;
    return 0;
}

int main(int argc, char **argv)
{
    const char *const *re;
    dintattn__split *sp = NULL;
    dintattn_error err;
    unsigned char head[4], *buf = NULL;
    int n;
    if (argc < 2) {
        fprintf(stderr, "usage: split_pieces NAME|REGEX... < CASES\n");
        return 1;
    }
    if (argc == 3 && strcmp(argv[1], "--json") == 0) {
        dintattn__json j;
        memset(&j, 0, sizeof j);
        if (dintattn__json_parse(&j, argv[2], strlen(argv[2])) < 0) {
            fprintf(stderr, "split_pieces: bad JSON: %s\n", j.err);
            return 1;
        }
        if (dintattn__split_from_json(&j, &j.nodes[0], &sp, &err) != DINTATTN_OK) {
            fprintf(stderr, "split_pieces: %s\n", err.message);
            return 1;
        }
        dintattn__json_free(&j);
        n = 0;
    } else {
        n = argc == 2 ? dintattn__pattern_named(argv[1], strlen(argv[1]), &re) : -1;
        if (n < 0) {
            re = (const char *const *)&argv[1];
            n = argc - 1;
        }
    }
    if (n && dintattn__split_new(re, NULL, n, &sp, &err) != DINTATTN_OK) {
        fprintf(stderr, "split_pieces: %s\n", err.message);
        return 1;
    }
    while (fread(head, 1, 4, stdin) == 4) {
        size_t len = (size_t)head[0] | (size_t)head[1] << 8 | (size_t)head[2] << 16 | (size_t)head[3] << 24;
        if (!(buf = (unsigned char *)realloc(buf, len + 1)) || fread(buf, 1, len, stdin) != len) {
            fprintf(stderr, "split_pieces: truncated input\n");
            return 1;
        }
        if (!sp) { /* cl100k by hand */
            size_t i = 0, end;
            for (; i < len; i = end) {
                end = dintattn__pretok(buf, len, i);
                printf(i ? ",%d" : "%d", (int)(end - i));
            }
        } else {
            dintattn__rtext text;
            out o;
            memset(&text, 0, sizeof text);
            o.text = &text;
            o.first = 1;
            if (dintattn__rsplit_text(sp, &text, buf, len, put, &o)) {
                fprintf(stderr, "split_pieces: out of memory\n");
                return 1;
            }
            free(text.cp);
        }
        printf("\n");
    }
    free(buf);
    dintattn__split_free(sp);
    return fflush(stdout) != 0;
}
