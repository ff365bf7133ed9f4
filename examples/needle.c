/* needle: multi-needle retrieval ("needle in a haystack") as the DINT, Shared-DIFF and DIFF
   Transformer papers evaluate it: N needles, each "The magic number of <City> is <number>.", in
   filler text of a given token length; R of the cities asked for; the answer needle at a given
   depth of the context, the others at random places; greedy decoding; accuracy per depth and
   length.

       examples/needle MODEL [--lengths 1024,2048,...] [--depths 0,25,50,75,100] [--needles N]
                       [--asked R] [--samples S] [--seed X] [--filler FILE] [--max-tokens M]
                       [--svg OUT.svg] [--json [--prompts]] [--threads T] [--weights W]
                       [--precision P] [--kernels K] [--kv T]
       examples/needle --extract TEXT [--answer NUMBER]     (the scoring rule alone, for tests)

   The protocol (--help says it too; docs/examples.md, "needle", has the reasons):
   - DINT Transformer section 3.3 and Shared-DIFF Transformer section 3.3 (following LWM and
     Gemini 1.5, after Kamradt's Needle-in-a-Haystack): needles are short sentences that give a
     city a number; the answer needle at depths 0/25/50/75/100% of the context, the others placed
     randomly; each (depth, length) cell averaged over samples (50 in the papers: the default);
     N and R as Table 4 (N = 1..6, R = 1, 2) or Figure 4 (N = 8, R = 1: the default).
   - A length L is the prompt's length in tokens (BOS, haystack, question). The haystack is filler
     words with the needles between sentences, cut at the word that brings the prompt closest to L
     tokens without passing it (encoded whole and counted, so the count is exact).
   - Depth d: the answer needle begins at the sentence boundary (or the haystack's end) nearest to
     d% of the haystack's other tokens (filler and other needles); 0 is its first sentence, 100
     its last, just before the question.
   - The prompt is plain text, no chat template, ending so that a base model completes it:
     "\n\nWhat is the magic number of A?" (R = 1) or "What are the magic numbers of A, B and C?"
     (R > 1, the asked cities in random order), then " The magic number of X is", X the answer
     needle's city: with R > 1 the other asked cities are distractors in the question, and only
     the answer needle's number is scored.
   - Scoring: greedy decoding of up to M tokens (stopping at an end-of-sequence id); the first run
     of ASCII digits in the output is the answer, compared as a number (leading zeros do not
     count) with the answer needle's; no digits is wrong.
   Exits 0 on success, 1 with one line on stderr on any error. */
#define _POSIX_C_SOURCE 200809L
#define DINTATTN_IMPLEMENTATION
#include "../dintattn.h"
#include "strbuf.h" /* srv_buf, srv_buf_json_str, srv_utf8_char */
#define CLI_PROG "needle"
#include "cli.h" /* cli_engine, cli_fail, cli_read_file: what the examples share */

#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define MAX_LENGTHS 64
#define MAX_DEPTHS 101

static const char *usage =
    "usage: needle MODEL [options]      multi-needle retrieval accuracy by depth and context length\n"
    "  --lengths L1,L2,...  prompt lengths in tokens, up to " CLI_STR(MAX_LENGTHS) " of them, each leaving room in\n"
    "                       the model's context for --max-tokens answer tokens (default: 1024,\n"
    "                       2048, ... and the longest that fits)\n"
    "  --depths D1,D2,...   depths of the answer needle in % of the context, 0 to 100, up to\n"
    "                       " CLI_STR(MAX_DEPTHS) " of them (default 0,25,50,75,100)\n"
    "  --needles N          needles per prompt, each a distinct city, 1 to 64 (default 8)\n"
    "  --asked R            cities the question asks for, the answer needle's among them, 1 to\n"
    "                       --needles (default 1)\n"
    "  --samples S          samples per (depth, length) cell, 1 to 1000000 (default 50, as the papers)\n"
    "  --seed X             random seed of the needles, numbers and places, 0 to 2^64-1 (default 1)\n"
    "  --filler FILE        the haystack's text: FILE's words, repeated and cut to length (default:\n"
    "                       sentences made from a built-in word list, the same in every prompt)\n"
    "  --max-tokens M       tokens generated per answer at most, 1 to the model's context - 1\n"
    "                       (default 12)\n"
    "  --batch B            a cell's samples run B at a time, 1 to 256 (default 8; fewer if B\n"
    "                       sessions would not fit in the memory), prefilled and decoded\n"
    "                       together (dintattn_batch_step: one pass over the weights a step)\n"
    "  --json               one JSON object: the grid and every sample, instead of the table\n"
    "  --prompts            with --json, each sample's prompt text too\n"
    "  --svg OUT.svg        also write the grid as an SVG heatmap\n"
    "  --threads T          threads for attention heads and matrix rows (" CLI_THREADS_RANGE ")\n"
    CLI_ENGINE_USAGE
    "  --extract TEXT       no model: print the number the scoring takes from TEXT\n"
    "  --answer NUMBER      with --extract: also whether it counts as correct\n"
    "  -h, --help           this text\n"
    "Protocol (DINT and Shared-DIFF Transformer, section 3.3): N needles \"The magic number of\n"
    "<City> is <7-digit number>.\" with distinct cities and numbers; the answer needle at each depth,\n"
    "the other N - 1 at random sentence boundaries. Depth d%: the answer needle starts at the\n"
    "sentence boundary nearest to d% of the haystack's other tokens. The prompt: BOS (if the model\n"
    "has one), the haystack, then \"\\n\\nWhat is the magic number of A?\" (R = 1) or \"What are the\n"
    "magic numbers of A, B and C?\" (R > 1), then \" The magic number of X is\", X the answer\n"
    "needle's city (one of the R asked; only its number is scored). A length is the prompt's\n"
    "tokens: the haystack is cut at a word so the prompt is as long as it can be without passing\n"
    "it. Answers are greedy, up to M tokens or an end-of-sequence id; the first run of digits in\n"
    "the answer, as a number, must equal the answer needle's. Sample k uses the same needles,\n"
    "numbers and questions in every cell (seeded by X and k): cells differ in depth and length only.\n";

typedef struct args {
    cli_engine eng; /* MODEL, --threads, --weights, --precision, --kv, --kernels */
    const char *filler, *svg, *extract, *answer;
    int lengths[MAX_LENGTHS], n_lengths;
    double depths[MAX_DEPTHS];
    int n_depths;
    int needles, asked, samples, max_tokens, json, prompts, batch;
    unsigned long long seed;
} args;

/* "a,b,c" of integers in [lo, hi]; returns the count, or -1 if malformed or more than max */
static int parse_int_list(const char *s, long lo, long hi, int *out, int max)
{
    int n = 0;
    for (;;) {
        char *end;
        long v;
        errno = 0;
        v = strtol(s, &end, 10);
        if (errno || end == s || v < lo || v > hi || n == max || (*end != ',' && *end)) return -1;
        out[n++] = (int)v;
        if (!*end) return n;
        s = end + 1;
    }
}

static int parse_depth_list(const char *s, double *out, int max)
{
    int n = 0;
    for (;;) {
        char *end;
        double v;
        errno = 0;
        v = strtod(s, &end);
        if (errno || end == s || !(v >= 0 && v <= 100) || n == max || (*end != ',' && *end)) return -1;
        out[n++] = v;
        if (!*end) return n;
        s = end + 1;
    }
}

/* Returns 0, 1 for an error (printed), 2 for --help. */
static int parse_args(int argc, char **argv, args *a)
{
    static const char *const switches[] = {"--json", "--prompts", NULL};
    int i, k, j;
    long v;
    memset(a, 0, sizeof *a);
    cli_engine_init(&a->eng);
    a->needles = 8;
    a->asked = 1;
    a->samples = 50;
    a->seed = 1;
    a->max_tokens = 12;
    a->batch = 8;
    for (k = 0; k < 5; k++) a->depths[k] = 25.0 * k;
    a->n_depths = 5;
    for (i = 1; i < argc; i++) {
        const char *f = argv[i], *val;
        int bad = 0;
        switch (cli_arg(argc, argv, &i, switches, &a->eng, &val)) {
        case CLI_ARG_VALUE: break;
        case CLI_ARG_SWITCH:
            if (!strcmp(f, "--json")) a->json = 1;
            else a->prompts = 1;
            continue;
        case CLI_ARG_MODEL: continue;
        case CLI_ARG_HELP: return 2;
        default: return 1;
        }
        if (!strcmp(f, "--lengths")) bad = (a->n_lengths = parse_int_list(val, 1, INT_MAX, a->lengths, MAX_LENGTHS)) < 0;
        else if (!strcmp(f, "--depths")) bad = (a->n_depths = parse_depth_list(val, a->depths, MAX_DEPTHS)) < 0;
        else if (!strcmp(f, "--needles")) bad = cli_parse_long(val, 1, 64, &v), a->needles = (int)v;
        else if (!strcmp(f, "--asked")) bad = cli_parse_long(val, 1, 64, &v), a->asked = (int)v;
        else if (!strcmp(f, "--samples")) bad = cli_parse_long(val, 1, 1000000, &v), a->samples = (int)v;
        else if (!strcmp(f, "--max-tokens")) bad = cli_parse_long(val, 1, 1000000, &v), a->max_tokens = (int)v;
        else if (!strcmp(f, "--batch")) bad = cli_parse_long(val, 1, 256, &v), a->batch = (int)v;
        else if (!strcmp(f, "--seed")) {
            char *end;
            errno = 0;
            a->seed = strtoull(val, &end, 10);
            bad = errno || end == val || *end || val[0] == '-';
        } else if (!strcmp(f, "--filler")) bad = a->filler != NULL, a->filler = val;
        else if (!strcmp(f, "--svg")) bad = a->svg != NULL, a->svg = val;
        else if (!strcmp(f, "--extract")) bad = a->extract != NULL, a->extract = val;
        else if (!strcmp(f, "--answer")) bad = a->answer != NULL, a->answer = val;
        else if ((bad = cli_engine_option(&a->eng, CLI_ENGINE, f, val, NULL)) < 0)
            return cli_fail("unknown option (see --help)", f);
        if (bad) {
            fprintf(stderr, "needle: bad value '%s' for %s (or given twice; see --help)\n", val, f);
            return 1;
        }
    }
    if (a->extract) {
        if (a->eng.model) return cli_fail("--extract takes no MODEL", a->eng.model);
        if (a->answer && (!a->answer[0] || strspn(a->answer, "0123456789") != strlen(a->answer)))
            return cli_fail("--answer must be a non-negative integer", a->answer);
        return 0;
    }
    if (a->answer) return cli_fail("--answer goes with --extract", NULL);
    if (!a->eng.model) return cli_fail("no MODEL given (see --help)", NULL);
    if (a->asked > a->needles) return cli_fail("--asked must be at most --needles", NULL);
    if (a->prompts && !a->json) return cli_fail("--prompts goes with --json", NULL);
    for (k = 0; k < a->n_depths; k++)
        for (j = 0; j < k; j++)
            if (a->depths[j] == a->depths[k]) return cli_fail("--depths lists a depth twice", NULL);
    for (k = 0; k < a->n_lengths; k++)
        for (j = 0; j < k; j++)
            if (a->lengths[j] == a->lengths[k]) return cli_fail("--lengths lists a length twice", NULL);
    return cli_engine_done(&a->eng);
}

/* --- scoring ------------------------------------------------------------------------------- */

/* The answer in text[0..len): the first run of ASCII digits, without its leading zeros ("0" if
   all zeros), in out[cap]. Returns 0, or -1 if the text has no digit. A run is kept whole however
   long (it is compared as a decimal string, which for integers is comparing numbers); past cap
   bytes it is cut, which never equals a needle's number. */
static int extract_number(const char *text, size_t len, char *out, size_t cap)
{
    size_t i = 0, n = 0;
    while (i < len && !(text[i] >= '0' && text[i] <= '9')) i++;
    if (i == len) return -1;
    while (i + 1 < len && text[i] == '0' && text[i + 1] >= '0' && text[i + 1] <= '9') i++;
    while (i < len && text[i] >= '0' && text[i] <= '9') {
        if (n + 1 < cap) out[n++] = text[i];
        i++;
    }
    out[n] = 0;
    return 0;
}

/* The same number? (both canonical: no leading zeros) */
static int same_number(const char *got, const char *want) { return strcmp(got, want) == 0; }

static int run_extract(const args *a)
{
    char num[64];
    int has = extract_number(a->extract, strlen(a->extract), num, sizeof num) == 0;
    const char *want = a->answer;
    if (want) {
        while (want[0] == '0' && want[1]) want++;
    }
    printf("extracted %s", has ? num : "none");
    if (want) printf(" correct %d", has && same_number(num, want));
    printf("\n");
    return 0;
}

/* --- random numbers: splitmix64 ------------------------------------------------------------- */

static unsigned long long rng_next(unsigned long long *s)
{
    unsigned long long z = (*s += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

static unsigned rng_below(unsigned long long *s, unsigned n) { return (unsigned)(rng_next(s) % n); }

static double rng_unit(unsigned long long *s) { return (double)(rng_next(s) >> 11) / 9007199254740992.0; }

/* --- the haystack's words -------------------------------------------------------------------- */

static const char *const cities[] = {
    "Paris",    "London",   "Tokyo",     "Cairo",    "Lima",      "Oslo",       "Rome",     "Madrid",
    "Berlin",   "Vienna",   "Prague",    "Dublin",   "Lisbon",    "Athens",     "Warsaw",   "Moscow",
    "Delhi",    "Mumbai",   "Beijing",   "Shanghai", "Seoul",     "Bangkok",    "Jakarta",  "Manila",
    "Sydney",   "Melbourne", "Auckland", "Toronto",  "Chicago",   "Boston",     "Denver",   "Seattle",
    "Houston",  "Miami",    "Havana",    "Bogota",   "Quito",     "Santiago",   "Caracas",  "Nairobi",
    "Lagos",    "Accra",    "Dakar",     "Tunis",    "Algiers",   "Casablanca", "Istanbul", "Ankara",
    "Tehran",   "Baghdad",  "Riyadh",    "Dubai",    "Karachi",   "Kabul",      "Dhaka",    "Hanoi",
    "Helsinki", "Stockholm", "Copenhagen", "Amsterdam", "Brussels", "Zurich",   "Budapest", "Bucharest"};
#define N_CITIES ((int)(sizeof cities / sizeof cities[0]))

/* The built-in filler: sentences "The [adj] noun verb the [adj] noun prep the noun." from these
   lists, drawn with a fixed seed (not --seed: every prompt's haystack is the same text, cut to
   its length, as Needle-in-a-Haystack uses the same essays). No digits, no city, no "magic". */
static const char *const f_adj[] = {"old", "quiet", "green", "small", "bright", "long", "narrow", "cold", "warm",
                                    "gentle", "heavy", "wide", "silent", "early", "distant", "low", "tall", "plain"};
static const char *const f_noun[] = {"river", "field", "house", "road", "garden", "hill", "door", "tree", "wind",
                                     "valley", "stone", "window", "boat", "bridge", "forest", "village", "market",
                                     "harbor", "meadow", "wall", "lamp", "table", "letter", "farmer", "shepherd",
                                     "traveler", "bell", "orchard", "path", "cloud"};
static const char *const f_verb[] = {"follows", "crosses", "watches", "passes", "meets", "leaves", "finds", "keeps",
                                     "reaches", "carries", "shades", "faces", "joins", "holds", "circles", "guards"};
static const char *const f_prep[] = {"near", "beyond", "under", "beside", "across", "behind", "toward", "along"};
#define PICK(list, s) list[rng_below(s, (unsigned)(sizeof list / sizeof list[0]))]

typedef struct filler {
    char *text;       /* the words, each NUL-terminated */
    size_t *word;     /* word k starts at text + word[k] */
    unsigned char *ends; /* 1 if word k ends a sentence */
    int *tokens;      /* tokens of " word" encoded alone: an estimate of its share of a prompt */
    int n;
} filler;

static void filler_free(filler *f)
{
    free(f->text);
    free(f->word);
    free(f->ends);
    free(f->tokens);
    memset(f, 0, sizeof *f);
}

static int is_space(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\v' || c == '\f'; }

static int ends_sentence(const char *w, size_t n)
{
    if (n >= 2 && strchr("\"')]", w[n - 1])) n--;
    return n >= 1 && strchr(".!?", w[n - 1]) != NULL;
}

/* Fills f with `want` words: the file's (whitespace-separated, cycled) or the built-in sentences.
   Returns 0, or 1 (printed). */
static int filler_make(filler *f, const char *path, int want, const dintattn_tokenizer *tok)
{
    srv_buf b;
    char *src = NULL;
    size_t src_len = 0, *starts = NULL;
    int n_src = 0, k;
    unsigned long long s = 0x5EEDF111E5ull;
    memset(f, 0, sizeof *f);
    memset(&b, 0, sizeof b);
    if (path) {
        size_t i = 0;
        int cap = 0;
        if (!(src = cli_read_file(path, &src_len))) return cli_fail(path, strerror(errno));
        if (strlen(src) != src_len) {
            free(src);
            return cli_fail(path, "the filler has a NUL byte");
        }
        while (i < src_len) { /* the file's words: cut at whitespace, NUL-terminated in place */
            while (i < src_len && is_space(src[i])) src[i++] = 0;
            if (i == src_len) break;
            if (n_src == cap) {
                size_t *grown = (size_t *)realloc(starts, sizeof *starts * (size_t)(cap = cap ? 2 * cap : 1024));
                if (!grown) {
                    free(src);
                    free(starts);
                    return cli_fail("out of memory", NULL);
                }
                starts = grown;
            }
            starts[n_src++] = i;
            while (i < src_len && !is_space(src[i])) i++;
        }
        if (n_src == 0) {
            free(src);
            free(starts);
            return cli_fail(path, "the filler has no words");
        }
    }
    f->word = (size_t *)malloc(sizeof *f->word * (size_t)want);
    f->ends = (unsigned char *)malloc((size_t)want);
    f->tokens = (int *)malloc(sizeof(int) * (size_t)want);
    if (!f->word || !f->ends || !f->tokens) goto nomem;
    for (k = 0; k < want;) {
        if (path) {
            const char *w = src + starts[k % n_src];
            f->word[k] = b.len;
            f->ends[k] = (unsigned char)ends_sentence(w, strlen(w));
            srv_buf_add(&b, w, strlen(w) + 1);
            k++;
        } else { /* one sentence, as many of its words as are wanted */
            const char *w[12];
            int n = 0, j;
            char first[32];
            w[n++] = "the";
            if (rng_below(&s, 2)) w[n++] = PICK(f_adj, &s);
            w[n++] = PICK(f_noun, &s);
            w[n++] = PICK(f_verb, &s);
            w[n++] = "the";
            if (rng_below(&s, 2)) w[n++] = PICK(f_adj, &s);
            w[n++] = PICK(f_noun, &s);
            w[n++] = PICK(f_prep, &s);
            w[n++] = "the";
            w[n++] = PICK(f_noun, &s);
            for (j = 0; j < n && k < want; j++, k++) {
                f->word[k] = b.len;
                f->ends[k] = (unsigned char)(j == n - 1);
                if (j == 0) {
                    snprintf(first, sizeof first, "%s", w[j]);
                    first[0] = (char)(first[0] - 'a' + 'A');
                    srv_buf_str(&b, first);
                } else {
                    srv_buf_str(&b, w[j]);
                }
                if (j == n - 1) srv_buf_str(&b, ".");
                srv_buf_add(&b, "", 1); /* the NUL */
            }
        }
        if (b.nomem) goto nomem;
    }
    free(src);
    free(starts);
    src = NULL;
    starts = NULL;
    f->text = b.p;
    f->n = want;
    memset(&b, 0, sizeof b);
    for (k = 0; k < want; k++) { /* each word's tokens after a space, alone */
        char buf[256];
        const char *w = f->text + f->word[k];
        int n = 0;
        size_t len = strlen(w);
        dintattn_error err;
        if (len + 2 <= sizeof buf) {
            buf[0] = ' ';
            memcpy(buf + 1, w, len + 1);
            if (dintattn_tokenizer_encode(tok, buf, len + 1, 0, NULL, 0, &n, &err)) return cli_fail("cannot encode the filler", err.message);
        } else {
            n = (int)(len / 4) + 1;
        }
        f->tokens[k] = n > 0 ? n : 1;
    }
    return 0;
nomem:
    free(src);
    free(starts);
    srv_buf_free(&b);
    filler_free(f);
    return cli_fail("out of memory for the filler", NULL);
}

/* --- prompts ---------------------------------------------------------------------------------- */

/* One sample's needles: the same in every cell for sample index k (see --help). Needle 0 is the
   answer needle; needles 0 .. R-1 are asked. */
typedef struct needles {
    int n, r;
    int city[64];
    char number[64][16];
    double place[64];   /* needles 1..: where, as a share of the filler's tokens */
    int order[64];      /* the asked needles in the question's order */
    int tokens[64];     /* tokens of " <needle sentence>" alone (an estimate, as the filler's) */
} needles;

static void needle_text(const needles *nd, int i, srv_buf *b)
{
    srv_buf_printf(b, "The magic number of %s is %s.", cities[nd->city[i]], nd->number[i]);
}

static int needles_make(needles *nd, const args *a, int sample, const dintattn_tokenizer *tok)
{
    unsigned long long s = a->seed * 0xD1342543DE82EF95ull + (unsigned long long)sample + 1;
    int perm[N_CITIES], i, j;
    nd->n = a->needles;
    nd->r = a->asked;
    rng_next(&s);
    for (i = 0; i < N_CITIES; i++) perm[i] = i;
    for (i = 0; i < nd->n; i++) { /* distinct cities: a partial Fisher-Yates shuffle */
        j = i + (int)rng_below(&s, (unsigned)(N_CITIES - i));
        nd->city[i] = perm[j];
        perm[j] = perm[i];
        perm[i] = nd->city[i];
    }
    for (i = 0; i < nd->n; i++) { /* distinct 7-digit numbers */
        int again;
        do {
            snprintf(nd->number[i], sizeof nd->number[i], "%u", 1000000u + rng_below(&s, 9000000u));
            for (again = 0, j = 0; j < i; j++) again |= !strcmp(nd->number[i], nd->number[j]);
        } while (again);
    }
    for (i = 0; i < nd->n; i++) nd->place[i] = i ? rng_unit(&s) : 0;
    for (i = 0; i < nd->r; i++) nd->order[i] = i;
    for (i = nd->r - 1; i > 0; i--) { /* the question's order */
        int t;
        j = (int)rng_below(&s, (unsigned)(i + 1));
        t = nd->order[i], nd->order[i] = nd->order[j], nd->order[j] = t;
    }
    for (i = 0; i < nd->n; i++) {
        srv_buf b;
        dintattn_error err;
        int n = 0;
        memset(&b, 0, sizeof b);
        srv_buf_str(&b, " ");
        needle_text(nd, i, &b);
        if (b.nomem) return cli_fail("out of memory", NULL);
        if (dintattn_tokenizer_encode(tok, b.p, b.len, 0, NULL, 0, &n, &err)) {
            srv_buf_free(&b);
            return cli_fail("cannot encode a needle", err.message);
        }
        srv_buf_free(&b);
        nd->tokens[i] = n;
    }
    return 0;
}

/* A built prompt: its text and where its parts begin (bytes). */
typedef struct prompt {
    srv_buf text;
    size_t needle_at, needle_end, question_at; /* the answer needle's sentence; the "\n\nWhat ..." */
} prompt;

/* The prompt with the first W filler words, the answer needle at depth d (%). */
static void prompt_build(prompt *p, const filler *f, int W, const needles *nd, double d)
{
    int slot[64], i, k, b, best_b = 0, best_first = 1;
    long long total = 0, others = 0, *cum;
    double target, best = -1;
    p->text.len = 0;
    if (p->text.p) p->text.p[0] = 0;
    /* the sentence boundaries: before word 0, after each word ending a sentence, and after word W-1;
       cum[b] = the filler's tokens before word b (an estimate: words encoded alone) */
    cum = (long long *)malloc(sizeof *cum * ((size_t)W + 1));
    if (!cum) {
        p->text.nomem = 1;
        return;
    }
    cum[0] = 0;
    for (k = 0; k < W; k++) cum[k + 1] = cum[k] + f->tokens[k];
    total = cum[W];
#define IS_BOUNDARY(b) ((b) == 0 || (b) == W || f->ends[(b) - 1])
    /* the other needles: the boundary nearest to their place in the filler's tokens */
    for (i = 1; i < nd->n; i++) {
        double want = nd->place[i] * (double)total, near = -1;
        slot[i] = 0;
        for (b = 0; b <= W; b++)
            if (IS_BOUNDARY(b) && (near < 0 || fabs((double)cum[b] - want) < near)) near = fabs((double)cum[b] - want), slot[i] = b;
        others += nd->tokens[i];
    }
    /* the answer needle: the boundary (and the side of the other needles there) nearest to d% of
       the haystack's other tokens */
    target = d / 100.0 * (double)(total + others);
    for (b = 0; b <= W; b++) {
        long long before = cum[b], at = 0;
        int first;
        if (!IS_BOUNDARY(b)) continue;
        for (i = 1; i < nd->n; i++) {
            if (slot[i] < b) before += nd->tokens[i];
            else if (slot[i] == b) at += nd->tokens[i];
        }
        for (first = 1; first >= 0; first--) {
            const double pos = (double)(before + (first ? 0 : at)), dist = fabs(pos - target);
            if (best < 0 || dist < best) best = dist, best_b = b, best_first = first;
        }
    }
    free(cum);
    /* the text: words and needles joined by single spaces */
    for (b = 0; b <= W; b++) {
        if (IS_BOUNDARY(b)) {
            for (k = 0; k < 2; k++) { /* k == 0: the needles before the answer needle's place */
                if (b == best_b && k == (best_first ? 0 : 1)) {
                    if (p->text.len) srv_buf_str(&p->text, " ");
                    p->needle_at = p->text.len;
                    needle_text(nd, 0, &p->text);
                    p->needle_end = p->text.len;
                }
                if (k == 0)
                    for (i = 1; i < nd->n; i++)
                        if (slot[i] == b) {
                            if (p->text.len) srv_buf_str(&p->text, " ");
                            needle_text(nd, i, &p->text);
                        }
            }
        }
        if (b < W) {
            if (p->text.len) srv_buf_str(&p->text, " ");
            srv_buf_str(&p->text, f->text + f->word[b]);
        }
    }
#undef IS_BOUNDARY
    /* the question */
    p->question_at = p->text.len;
    if (nd->r == 1) {
        srv_buf_printf(&p->text, "\n\nWhat is the magic number of %s?", cities[nd->city[0]]);
    } else {
        srv_buf_str(&p->text, "\n\nWhat are the magic numbers of ");
        for (i = 0; i < nd->r; i++)
            srv_buf_printf(&p->text, "%s%s", i == 0 ? "" : i == nd->r - 1 ? " and " : ", ", cities[nd->city[nd->order[i]]]);
        srv_buf_str(&p->text, "?");
    }
    srv_buf_printf(&p->text, " The magic number of %s is", cities[nd->city[0]]);
}

/* Encodes text[0..len) into *ids (grown as needed) with the library's BOS rule
   (dintattn_tokenizer_encode_prompt: the model's BOS first if it has one), special tokens' texts
   as plain text (the filler is data). Returns the count, or -1. */
static int encode(const dintattn_tokenizer *tok, const char *text, size_t len, int **ids, int *cap, dintattn_error *err)
{
    int n = 0;
    if (dintattn_tokenizer_encode_prompt(tok, text, len, 0, NULL, 0, &n, err)) return -1;
    if (n > *cap) {
        int *grown = (int *)realloc(*ids, sizeof(int) * (size_t)n);
        if (!grown) {
            if (err) err->code = DINTATTN_ERR_NOMEM, snprintf(err->message, sizeof err->message, "out of memory");
            return -1;
        }
        *ids = grown;
        *cap = n;
    }
    if (n > 0 && dintattn_tokenizer_encode_prompt(tok, text, len, 0, *ids, n, &n, err)) return -1;
    return n;
}

/* --- output --------------------------------------------------------------------------------- */

typedef struct cell {
    int correct, total;
} cell;

/* A JSON number as %.10g (the SVG's data-value is printed the same way) */
static void fmt_acc(char *out, size_t cap, int correct, int total)
{
    snprintf(out, cap, "%.10g", total ? (double)correct / total : 0.0);
}

/* XML text or attribute value: & < > " ' escaped; valid UTF-8 passes; control characters and
   invalid bytes become '?' (XML 1.0 allows neither). */
static void xml_str(srv_buf *b, const char *s)
{
    const unsigned char *u = (const unsigned char *)s;
    size_t n = strlen(s), i = 0;
    while (i < n) {
        unsigned char c = u[i];
        size_t k;
        if (c == '&') srv_buf_str(b, "&amp;");
        else if (c == '<') srv_buf_str(b, "&lt;");
        else if (c == '>') srv_buf_str(b, "&gt;");
        else if (c == '"') srv_buf_str(b, "&quot;");
        else if (c == '\'') srv_buf_str(b, "&apos;");
        else if (c >= 0x20 && c < 0x7F) srv_buf_add(b, s + i, 1);
        else if (c >= 0x80 && (k = srv_utf8_char(u + i, n - i)) > 0) {
            srv_buf_add(b, s + i, k);
            i += k;
            continue;
        } else srv_buf_str(b, "?");
        i++;
    }
}

/* red (0) - yellow (0.5) - green (1), as Needle-in-a-Haystack's heatmaps */
static void heat_color(double v, char *out, size_t cap)
{
    const double lo[3] = {215, 48, 39}, mid[3] = {254, 224, 139}, hi[3] = {26, 152, 80};
    double c[3];
    int k;
    for (k = 0; k < 3; k++) c[k] = v < 0.5 ? lo[k] + (mid[k] - lo[k]) * v * 2 : mid[k] + (hi[k] - mid[k]) * (v - 0.5) * 2;
    snprintf(out, cap, "#%02x%02x%02x", (int)(c[0] + 0.5), (int)(c[1] + 0.5), (int)(c[2] + 0.5));
}

/* Writes the heatmap to f (opened at the start, so that a bad path fails before the run) and
   closes it. */
static int write_svg(const args *a, const cell *grid, FILE *f)
{
    const int cw = 78, ch = 30, left = 86, top = 64, nl = a->n_lengths, nd = a->n_depths;
    const int width = left + cw * nl + 110 > 640 ? left + cw * nl + 110 : 640, height = top + ch * (nd + 1) + 70;
    srv_buf b;
    char v[32], col[16], title[200];
    int i, j, rc = 0;
    memset(&b, 0, sizeof b);
    srv_buf_printf(&b, "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
                       "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" height=\"%d\" viewBox=\"0 0 %d %d\" "
                       "font-family=\"sans-serif\" font-size=\"12\">\n", width, height, width, height);
    srv_buf_str(&b, "<title>needle: ");
    xml_str(&b, a->eng.model);
    srv_buf_str(&b, "</title>\n<rect width=\"100%\" height=\"100%\" fill=\"#ffffff\"/>\n<text x=\"10\" y=\"20\" font-size=\"14\">");
    srv_buf_str(&b, "Multi-needle retrieval: ");
    xml_str(&b, a->eng.model);
    srv_buf_str(&b, "</text>\n");
    snprintf(title, sizeof title, "N = %d needles, R = %d asked, %d samples per cell, seed %llu, filler: ", a->needles,
             a->asked, a->samples, a->seed);
    srv_buf_str(&b, "<text x=\"10\" y=\"38\" fill=\"#444444\">");
    xml_str(&b, title);
    xml_str(&b, a->filler ? a->filler : "built-in");
    srv_buf_str(&b, "</text>\n");
    srv_buf_printf(&b, "<text x=\"10\" y=\"%d\" fill=\"#444444\">depth</text>\n", top - 6);
    for (j = 0; j < nl; j++)
        srv_buf_printf(&b, "<text x=\"%d\" y=\"%d\" text-anchor=\"middle\">%d</text>\n", left + cw * j + cw / 2,
                       top + ch * (nd + 1) + 16, a->lengths[j]);
    srv_buf_printf(&b, "<text x=\"%d\" y=\"%d\" text-anchor=\"middle\" fill=\"#444444\">context length (tokens)</text>\n",
                   left + cw * nl / 2, top + ch * (nd + 1) + 34);
    for (i = 0; i < nd; i++) {
        srv_buf_printf(&b, "<text x=\"%d\" y=\"%d\" text-anchor=\"end\">%g%%</text>\n", left - 8, top + ch * i + ch / 2 + 4,
                       a->depths[i]);
        for (j = 0; j < nl; j++) {
            const cell *c = &grid[i * nl + j];
            fmt_acc(v, sizeof v, c->correct, c->total);
            heat_color(c->total ? (double)c->correct / c->total : 0, col, sizeof col);
            srv_buf_printf(&b, "<g class=\"cell\" data-depth=\"%g\" data-length=\"%d\" data-correct=\"%d\" data-total=\"%d\" "
                               "data-value=\"%s\">", a->depths[i], a->lengths[j], c->correct, c->total, v);
            srv_buf_printf(&b, "<rect x=\"%d\" y=\"%d\" width=\"%d\" height=\"%d\" fill=\"%s\" stroke=\"#ffffff\"/>",
                           left + cw * j, top + ch * i, cw, ch, col);
            srv_buf_printf(&b, "<text x=\"%d\" y=\"%d\" text-anchor=\"middle\">%.2f</text></g>\n", left + cw * j + cw / 2,
                           top + ch * i + ch / 2 + 4, c->total ? (double)c->correct / c->total : 0.0);
        }
    }
    /* the bottom row: each length's accuracy over every depth (DINT's Figure 4 has it) */
    srv_buf_printf(&b, "<text x=\"%d\" y=\"%d\" text-anchor=\"end\">mean</text>\n", left - 8, top + ch * nd + ch / 2 + 4);
    for (j = 0; j < nl; j++) {
        int cr = 0, tt = 0;
        for (i = 0; i < nd; i++) cr += grid[i * nl + j].correct, tt += grid[i * nl + j].total;
        fmt_acc(v, sizeof v, cr, tt);
        heat_color(tt ? (double)cr / tt : 0, col, sizeof col);
        srv_buf_printf(&b, "<g class=\"mean\" data-length=\"%d\" data-correct=\"%d\" data-total=\"%d\" data-value=\"%s\">",
                       a->lengths[j], cr, tt, v);
        srv_buf_printf(&b, "<rect x=\"%d\" y=\"%d\" width=\"%d\" height=\"%d\" fill=\"%s\" stroke=\"#ffffff\" stroke-width=\"3\"/>",
                       left + cw * j, top + ch * nd, cw, ch, col);
        srv_buf_printf(&b, "<text x=\"%d\" y=\"%d\" text-anchor=\"middle\">%.2f</text></g>\n", left + cw * j + cw / 2,
                       top + ch * nd + ch / 2 + 4, tt ? (double)cr / tt : 0.0);
    }
    /* the legend: the colour scale from 0 to 1 */
    srv_buf_str(&b, "<defs><linearGradient id=\"scale\" x1=\"0\" y1=\"1\" x2=\"0\" y2=\"0\">");
    for (i = 0; i <= 4; i++) {
        heat_color(i / 4.0, col, sizeof col);
        srv_buf_printf(&b, "<stop offset=\"%d%%\" stop-color=\"%s\"/>", i * 25, col);
    }
    srv_buf_str(&b, "</linearGradient></defs>\n");
    srv_buf_printf(&b, "<g class=\"legend\"><rect x=\"%d\" y=\"%d\" width=\"16\" height=\"%d\" fill=\"url(#scale)\" stroke=\"#888888\"/>"
                       "<text x=\"%d\" y=\"%d\">1.0</text><text x=\"%d\" y=\"%d\">0.5</text><text x=\"%d\" y=\"%d\">0.0</text>"
                       "<text x=\"%d\" y=\"%d\" fill=\"#444444\">accuracy</text></g>\n",
                   left + cw * nl + 24, top, ch * (nd + 1), left + cw * nl + 44, top + 10, left + cw * nl + 44,
                   top + ch * (nd + 1) / 2 + 4, left + cw * nl + 44, top + ch * (nd + 1), left + cw * nl + 14, top - 6);
    srv_buf_str(&b, "</svg>\n");
    if (b.nomem) rc = cli_fail("out of memory for the SVG", NULL);
    else if (fwrite(b.p, 1, b.len, f) != b.len) rc = cli_fail(a->svg, "cannot write");
    if (fclose(f) && !rc) rc = cli_fail(a->svg, strerror(errno));
    srv_buf_free(&b);
    return rc;
}

/* --- the run --------------------------------------------------------------------------------- */

/* --- the run --------------------------------------------------------------------------------- */

/* What a run holds while it goes through the cells. */
/* One sample of a batch: its prompt's ids, needles and text (for --json), its answer's ids */
typedef struct slot {
    dintattn_session *sess;
    int *ids, n_ids, *gen, n_kept;
    float *logits;
    needles nd;
    prompt pr;
} slot;

typedef struct runner {
    const args *a;
    const dintattn_tokenizer *tok;
    dintattn_session *sess;
    slot *slots;           /* --batch of them; slots[0].sess is sess */
    int n_slots;
    dintattn_sampler *smp; /* greedy */
    filler fl;
    prompt pr;
    needles nd;
    srv_buf out, gen_text; /* the report; one answer's text */
    int *ids, ids_cap, *pre, pre_cap;
    int V, warned, first_sample;
} runner;

/* One sample: its prompt, where its answer needle is, and its answer, as the JSON reports them. */
typedef struct sample {
    int n, lo_w, needle_tok, needle_len, hay_end, bos_n, n_gen, has, correct;
    double measured;
    char num[64];
} sample;

/* The default --lengths (1024, 2048, ... that fit, and the longest that fits), each checked
   against the model's context C; *maxL the longest. Returns 0, or 1 (printed). */
static int settle_lengths(args *a, int C, int *maxL)
{
    const int usable = C - (a->max_tokens - 1); /* a prompt of L tokens and M answer tokens use L + M - 1 positions */
    char msg[256];
    int li;
    *maxL = 0;
    if (a->n_lengths == 0) {
        int L;
        for (L = 1024; L < usable && a->n_lengths < MAX_LENGTHS - 1; L *= 2) a->lengths[a->n_lengths++] = L;
        if (usable >= 1) a->lengths[a->n_lengths++] = usable;
    }
    for (li = 0; li < a->n_lengths; li++) {
        if (a->lengths[li] > usable) {
            snprintf(msg, sizeof msg, "%d tokens and %d answer tokens do not fit the model's context of %d: "
                     "at most %d with --max-tokens %d", a->lengths[li], a->max_tokens, C, usable > 0 ? usable : 0, a->max_tokens);
            return cli_fail("--lengths", msg);
        }
        if (a->lengths[li] > *maxL) *maxL = a->lengths[li];
    }
    if (a->n_lengths == 0 || *maxL < 1) {
        snprintf(msg, sizeof msg, "--max-tokens %d leaves no room for a prompt in the model's context of %d", a->max_tokens, C);
        return cli_fail(msg, NULL);
    }
    return 0;
}

/* r->pr and r->ids: the prompt at depth d with the most filler words whose encoding is at most L
   tokens (sm->lo_w words, sm->n tokens). Returns 0, or 1 (printed). */
static int fit_prompt(runner *r, int L, double d, sample *sm)
{
    dintattn_error err;
    char msg[256];
    int hi_w = r->fl.n, k;
    sm->lo_w = 0;
    prompt_build(&r->pr, &r->fl, 0, &r->nd, d);
    if (r->pr.text.nomem) return cli_fail("out of memory", NULL);
    if ((sm->n = encode(r->tok, r->pr.text.p, r->pr.text.len, &r->ids, &r->ids_cap, &err)) < 0)
        return cli_fail("cannot encode the prompt", err.message);
    if (sm->n > L) {
        snprintf(msg, sizeof msg, "%d tokens cannot hold %d needles and the question without any filler (%d "
                 "tokens): use longer lengths or fewer --needles", L, r->a->needles, sm->n);
        return cli_fail("--lengths", msg);
    }
    while (sm->lo_w < hi_w) { /* invariant: lo_w words fit */
        const int mid = sm->lo_w + (hi_w - sm->lo_w + 1) / 2;
        prompt_build(&r->pr, &r->fl, mid, &r->nd, d);
        if (r->pr.text.nomem) return cli_fail("out of memory", NULL);
        if ((sm->n = encode(r->tok, r->pr.text.p, r->pr.text.len, &r->ids, &r->ids_cap, &err)) < 0)
            return cli_fail("cannot encode the prompt", err.message);
        if (sm->n <= L) sm->lo_w = mid;
        else hi_w = mid - 1;
    }
    for (;; sm->lo_w--) { /* the count is monotone in the words but for rare merges: make sure */
        prompt_build(&r->pr, &r->fl, sm->lo_w, &r->nd, d);
        if (r->pr.text.nomem || (sm->n = encode(r->tok, r->pr.text.p, r->pr.text.len, &r->ids, &r->ids_cap, &err)) < 0)
            return cli_fail("cannot build the prompt", r->pr.text.nomem ? "out of memory" : err.message);
        if (sm->n <= L || sm->lo_w == 0) break;
    }
    for (k = 0; k < sm->n; k++)
        if (r->ids[k] < 0 || r->ids[k] >= r->V)
            return cli_fail("the tokenizer does not fit the model", "a token id is outside the vocabulary");
    return 0;
}

/* Where the answer needle and the haystack are, in tokens: the encodings of the text before the
   needle (without the space that joins it) and before the question. Returns 0, or 1 (printed). */
static int locate_needle(runner *r, sample *sm)
{
    dintattn_error err;
    double denom;
    int n_pre;
    sm->bos_n = dintattn_tokenizer_bos(r->tok) >= 0;
    sm->needle_tok = sm->bos_n;
    if (r->pr.needle_at > 0) {
        if ((n_pre = encode(r->tok, r->pr.text.p, r->pr.needle_at - 1, &r->pre, &r->pre_cap, &err)) < 0)
            return cli_fail("cannot encode the prompt", err.message);
        if ((n_pre > sm->n || memcmp(r->pre, r->ids, sizeof(int) * (size_t)n_pre)) && !r->warned) {
            fprintf(stderr, "needle: warning: the text before a needle encodes differently alone; "
                            "needle_token may be off by a token (said once)\n");
            r->warned = 1;
        }
        sm->needle_tok = n_pre;
    }
    if ((sm->needle_len = encode(r->tok, r->pr.text.p, r->pr.needle_end, &r->pre, &r->pre_cap, &err)) < 0 ||
        (sm->hay_end = encode(r->tok, r->pr.text.p, r->pr.question_at, &r->pre, &r->pre_cap, &err)) < 0)
        return cli_fail("cannot encode the prompt", err.message);
    sm->needle_len -= sm->needle_tok;
    denom = (double)(sm->hay_end - sm->bos_n - sm->needle_len);
    sm->measured = denom > 0 ? (double)(sm->needle_tok - sm->bos_n) / denom : 0;
    return 0;
}

/* The answers of slots[0..n) (their prompts in slots[j].ids): greedy, up to --max-tokens tokens
   or an end-of-sequence id each, the prompts prefilled together and the answers decoded together
   by dintattn_batch_step (a sequence leaves the batch when its answer ends). An id past the
   tokenizer (a vocabulary padded past it) has no text: it counts and is run, as generate does,
   but is not kept. Returns 0, or 1 (printed). */
static int answer_batch(runner *r, sample *sms, int n)
{
    dintattn_batch_item items[256] = {{0}};
    dintattn_error err;
    int next[256], going[256], j, m;
    for (j = 0; j < n; j++) {
        slot *sl = &r->slots[j];
        dintattn_session_reset(sl->sess);
        items[j].sess = sl->sess, items[j].tokens = sl->ids, items[j].n_tokens = sl->n_ids, items[j].logits = sl->logits;
        sms[j].n_gen = 0;
        sl->n_kept = 0;
        going[j] = 1;
    }
    if (dintattn_batch_step(items, n, NULL, &err)) return cli_fail("prefill", err.message);
    for (;;) {
        for (j = 0, m = 0; j < n; j++) {
            slot *sl = &r->slots[j];
            if (!going[j]) continue;
            next[j] = dintattn_sampler_sample(r->smp, sl->logits);
            if (dintattn_tokenizer_is_eos(r->tok, next[j])) {
                going[j] = 0;
                continue;
            }
            sms[j].n_gen++;
            if (dintattn_tokenizer_has_token(r->tok, next[j])) sl->gen[sl->n_kept++] = next[j];
            if (sms[j].n_gen == r->a->max_tokens) {
                going[j] = 0;
                continue;
            }
            items[m].sess = sl->sess, items[m].tokens = &next[j], items[m].n_tokens = 1, items[m].logits = sl->logits;
            m++;
        }
        if (m == 0) break;
        if (dintattn_batch_step(items, m, NULL, &err)) return cli_fail("decode", err.message);
    }
    return 0;
}

/* Slot j's answer into r->gen_text, and the number it gives. Returns 0, or 1 (printed). */
static int score_answer(runner *r, const slot *sl, sample *sm)
{
    dintattn_error err;
    size_t len = 0;
    r->gen_text.len = 0;
    if (sl->n_kept > 0) {
        if (dintattn_tokenizer_decode(r->tok, sl->gen, sl->n_kept, 1, NULL, 0, &len, &err) ||
            srv_buf_reserve(&r->gen_text, len + 1) ||
            dintattn_tokenizer_decode(r->tok, sl->gen, sl->n_kept, 1, r->gen_text.p, len + 1, &len, &err))
            return cli_fail("cannot decode the answer", r->gen_text.nomem ? "out of memory" : err.message);
        r->gen_text.len = len;
    }
    sm->has = extract_number(r->gen_text.p ? r->gen_text.p : "", r->gen_text.len, sm->num, sizeof sm->num) == 0;
    sm->correct = sm->has && same_number(sm->num, sl->nd.number[0]);
    return 0;
}

/* --json: the run's settings, before the samples. */
static void json_head(runner *r, int C)
{
    const args *a = r->a;
    int li, di;
    srv_buf_str(&r->out, "{\"model\": ");
    srv_buf_json_str(&r->out, a->eng.model, strlen(a->eng.model));
    srv_buf_printf(&r->out, ", \"n_ctx\": %d, \"needles\": %d, \"asked\": %d, \"samples_per_cell\": %d, \"seed\": %llu, "
                            "\"max_tokens\": %d, \"filler\": ", C, a->needles, a->asked, a->samples, a->seed, a->max_tokens);
    if (a->filler) srv_buf_json_str(&r->out, a->filler, strlen(a->filler));
    else srv_buf_str(&r->out, "null");
    srv_buf_str(&r->out, ", \"lengths\": [");
    for (li = 0; li < a->n_lengths; li++) srv_buf_printf(&r->out, "%s%d", li ? ", " : "", a->lengths[li]);
    srv_buf_str(&r->out, "], \"depths\": [");
    for (di = 0; di < a->n_depths; di++) srv_buf_printf(&r->out, "%s%g", di ? ", " : "", a->depths[di]);
    srv_buf_str(&r->out, "],\n\"samples\": [\n");
}

/* --json: one sample. */
static void json_sample(runner *r, int L, double d, int s, const sample *sm)
{
    const needles *nd = &r->nd;
    srv_buf *out = &r->out;
    int k;
    srv_buf_printf(out, "%s{\"length\": %d, \"depth\": %g, \"sample\": %d, \"prompt_tokens\": %d, "
                        "\"filler_words\": %d, \"needle_token\": %d, \"needle_tokens\": %d, "
                        "\"haystack_start\": %d, \"haystack_end\": %d, \"depth_measured\": %.6f, \"cities\": [",
                   r->first_sample ? "" : ",\n", L, d, s, sm->n, sm->lo_w, sm->needle_tok, sm->needle_len, sm->bos_n,
                   sm->hay_end, sm->measured);
    r->first_sample = 0;
    for (k = 0; k < nd->n; k++) srv_buf_printf(out, "%s\"%s\"", k ? ", " : "", cities[nd->city[k]]);
    srv_buf_str(out, "], \"numbers\": [");
    for (k = 0; k < nd->n; k++) srv_buf_printf(out, "%s%s", k ? ", " : "", nd->number[k]);
    srv_buf_str(out, "], \"asked\": [");
    for (k = 0; k < nd->r; k++) srv_buf_printf(out, "%s\"%s\"", k ? ", " : "", cities[nd->city[nd->order[k]]]);
    srv_buf_printf(out, "], \"answer_city\": \"%s\", \"answer\": %s, \"needle\": ", cities[nd->city[0]], nd->number[0]);
    srv_buf_json_str(out, r->pr.text.p + r->pr.needle_at, r->pr.needle_end - r->pr.needle_at);
    srv_buf_printf(out, ", \"answer_tokens\": %d, \"output\": ", sm->n_gen);
    srv_buf_json_str(out, r->gen_text.p ? r->gen_text.p : "", r->gen_text.len);
    srv_buf_printf(out, ", \"extracted\": %s, \"correct\": %s", sm->has ? sm->num : "null", sm->correct ? "true" : "false");
    if (r->a->prompts) {
        srv_buf_str(out, ", \"prompt\": ");
        srv_buf_json_str(out, r->pr.text.p, r->pr.text.len);
    }
    srv_buf_str(out, "}");
}

/* The grid after the samples: --json's "grid", else the table. */
static void report_grid(const args *a, const cell *grid, srv_buf *out)
{
    int li, di;
    if (a->json) {
        srv_buf_str(out, "\n],\n\"grid\": [\n");
        for (di = 0; di < a->n_depths; di++)
            for (li = 0; li < a->n_lengths; li++) {
                const cell *c = &grid[di * a->n_lengths + li];
                char v[32];
                fmt_acc(v, sizeof v, c->correct, c->total);
                srv_buf_printf(out, "{\"depth\": %g, \"length\": %d, \"correct\": %d, \"total\": %d, \"accuracy\": %s}%s\n",
                               a->depths[di], a->lengths[li], c->correct, c->total, v,
                               di == a->n_depths - 1 && li == a->n_lengths - 1 ? "" : ",");
            }
        srv_buf_str(out, "]}\n");
        return;
    }
    srv_buf_printf(out, "multi-needle retrieval: %s, N = %d needles, R = %d asked, %d samples per cell, seed %llu\n",
                   a->eng.model, a->needles, a->asked, a->samples, a->seed);
    srv_buf_str(out, "accuracy (correct/total) by depth (rows) and prompt length in tokens (columns)\n");
    srv_buf_str(out, "depth  ");
    for (li = 0; li < a->n_lengths; li++) srv_buf_printf(out, " %14d", a->lengths[li]);
    srv_buf_str(out, "\n");
    for (di = 0; di <= a->n_depths; di++) {
        if (di < a->n_depths) srv_buf_printf(out, "%5g%% ", a->depths[di]);
        else srv_buf_str(out, "mean   ");
        for (li = 0; li < a->n_lengths; li++) {
            int cr = 0, tt = 0, d0 = di < a->n_depths ? di : 0, d1 = di < a->n_depths ? di + 1 : a->n_depths, d;
            char cnt[32];
            for (d = d0; d < d1; d++) cr += grid[d * a->n_lengths + li].correct, tt += grid[d * a->n_lengths + li].total;
            snprintf(cnt, sizeof cnt, "(%d/%d)", cr, tt);
            srv_buf_printf(out, " %5.2f %8s", tt ? (double)cr / tt : 0.0, cnt);
        }
        srv_buf_str(out, "\n");
    }
}

/* Every cell's samples into grid (and --json's samples into r->out), a line per cell on stderr:
   each sample's prompt built, then --batch of them answered at once. Returns 0, or 1 (printed). */
static int run_cells(runner *r, cell *grid)
{
    const args *a = r->a;
    sample sms[256];
    int li, di, s0, j;
    for (li = 0; li < a->n_lengths; li++)
        for (di = 0; di < a->n_depths; di++) {
            cell *c = &grid[di * a->n_lengths + li];
            double tc = cli_now();
            for (s0 = 0; s0 < a->samples; s0 += r->n_slots) {
                const int n = a->samples - s0 < r->n_slots ? a->samples - s0 : r->n_slots;
                for (j = 0; j < n; j++) { /* the prompts, kept per slot */
                    slot *sl = &r->slots[j];
                    memset(&sms[j], 0, sizeof sms[j]);
                    if (needles_make(&r->nd, a, s0 + j, r->tok) || fit_prompt(r, a->lengths[li], a->depths[di], &sms[j]) ||
                        locate_needle(r, &sms[j]))
                        return 1;
                    sl->nd = r->nd;
                    memcpy(sl->ids, r->ids, sizeof(int) * (size_t)sms[j].n);
                    sl->n_ids = sms[j].n;
                    sl->pr.text.len = 0;
                    srv_buf_add(&sl->pr.text, r->pr.text.p, r->pr.text.len);
                    sl->pr.needle_at = r->pr.needle_at, sl->pr.needle_end = r->pr.needle_end, sl->pr.question_at = r->pr.question_at;
                    if (sl->pr.text.nomem) return cli_fail("out of memory", NULL);
                }
                if (answer_batch(r, sms, n)) return 1;
                for (j = 0; j < n; j++) {
                    slot *sl = &r->slots[j];
                    prompt keep = r->pr;
                    if (score_answer(r, sl, &sms[j])) return 1;
                    c->correct += sms[j].correct;
                    c->total++;
                    r->nd = sl->nd, r->pr = sl->pr; /* json_sample reads the runner's */
                    if (a->json) json_sample(r, a->lengths[li], a->depths[di], s0 + j, &sms[j]);
                    r->pr = keep;
                    if (r->out.nomem) return cli_fail("out of memory for the output", NULL);
                }
            }
            fprintf(stderr, "needle: length %d, depth %g%%: %d/%d correct (%.1f s)\n", a->lengths[li], a->depths[di],
                    c->correct, c->total, cli_now() - tc);
        }
    return 0;
}

/* r->slots: --batch sessions (fewer when B of them would pass 80% of the available memory, said on
   stderr), each with room for a prompt of maxL ids and its answer. Returns 0, or 1 (printed). */
static int make_slots(runner *r, const dintattn_model *model, int maxL)
{
    const args *a = r->a;
    const int V = dintattn_model_config(model)->vocab_size;
    double avail = dintattn_mem_available();
    int j, want = a->batch < a->samples ? a->batch : a->samples;
    r->slots = (slot *)calloc((size_t)want, sizeof *r->slots);
    if (!r->slots) return cli_fail("out of memory", NULL);
    for (j = 0; j < want; j++) {
        slot *sl = &r->slots[j];
        if (j == 0) sl->sess = r->sess;
        else if (avail > 0 && (double)dintattn_session_bytes(r->sess) * (j + 1) > 0.8 * avail) {
            fprintf(stderr, "needle: --batch %d: %d sessions fit in the available memory; running %d at a time\n", a->batch,
                    j, j);
            break;
        } else if (cli_session_new(&a->eng, model, maxL + a->max_tokens - 1, &sl->sess))
            return 1;
        sl->ids = (int *)malloc(sizeof(int) * (size_t)maxL);
        sl->gen = (int *)malloc(sizeof(int) * (size_t)a->max_tokens);
        sl->logits = (float *)malloc(sizeof(float) * (size_t)V);
        r->n_slots = j + 1;
        if (!sl->ids || !sl->gen || !sl->logits) return cli_fail("out of memory", NULL);
    }
    return 0;
}

int main(int argc, char **argv)
{
    args a;
    dintattn_error err;
    dintattn_model *model = NULL;
    dintattn_tokenizer *tok = NULL;
    runner r;
    cell *grid = NULL;
    FILE *svg = NULL;
    int rc = 1, C, maxL, k;
    double t0 = cli_now();
    argv = cli_aliases(&argc, argv);

    memset(&r, 0, sizeof r);
    r.a = &a;
    r.first_sample = 1;
    rc = parse_args(argc, argv, &a);
    if (rc == 2) {
        cli_usage(stdout, usage, 23);
        return 0;
    }
    if (rc) return 1;
    if (a.extract) return run_extract(&a);
    rc = 1;
    if (cli_load_model(a.eng.model, a.eng.weights, a.eng.map, a.eng.threads, &model, &err)) return cli_fail(a.eng.model, err.message);
    if (cli_load_tokenizer(&a.eng, model, 0, &tok)) goto done; /* the model's own: needle takes no --tokenizer */
    r.tok = tok;
    C = dintattn_model_config(model)->max_seq_len;
    r.V = dintattn_model_config(model)->vocab_size;
    if (settle_lengths(&a, C, &maxL) || filler_make(&r.fl, a.filler, maxL, tok)) goto done;
    if (a.svg && !(svg = fopen(a.svg, "wb"))) {
        cli_fail(a.svg, strerror(errno));
        goto done;
    }
    if (cli_session_new(&a.eng, model, maxL + a.max_tokens - 1, &r.sess) || make_slots(&r, model, maxL)) goto done;
    if (dintattn_sampler_new(r.V, NULL, &r.smp, &err)) { /* greedy */
        cli_fail("cannot make a sampler", err.message);
        goto done;
    }
    grid = (cell *)calloc((size_t)a.n_lengths * (size_t)a.n_depths, sizeof *grid);
    if (!grid) {
        cli_fail("out of memory", NULL);
        goto done;
    }
    if (a.json) json_head(&r, C);
    if (run_cells(&r, grid)) goto done;
    report_grid(&a, grid, &r.out);
    if (r.out.nomem) {
        cli_fail("out of memory for the output", NULL);
        goto done;
    }
    if ((r.out.len && fwrite(r.out.p, 1, r.out.len, stdout) != r.out.len) || fflush(stdout)) {
        cli_fail("cannot write to standard output", NULL);
        goto done;
    }
    if (svg) {
        FILE *f = svg;
        svg = NULL;
        if (write_svg(&a, grid, f)) {
            remove(a.svg);
            goto done;
        }
    }
    fprintf(stderr, "needle: %d samples in %.1f s\n", a.n_lengths * a.n_depths * a.samples, cli_now() - t0);
    rc = 0;
done:
    if (svg) { /* the run failed: no half-written heatmap */
        fclose(svg);
        remove(a.svg);
    }
    srv_buf_free(&r.out);
    srv_buf_free(&r.gen_text);
    srv_buf_free(&r.pr.text);
    filler_free(&r.fl);
    free(grid);
    free(r.ids);
    free(r.pre);
    dintattn_sampler_free(r.smp);
    for (k = 0; r.slots && k < r.n_slots; k++) {
        if (k > 0) dintattn_session_free(r.slots[k].sess);
        free(r.slots[k].ids);
        free(r.slots[k].gen);
        free(r.slots[k].logits);
        srv_buf_free(&r.slots[k].pr.text);
    }
    free(r.slots);
    dintattn_session_free(r.sess);
    dintattn_tokenizer_free(tok);
    dintattn_model_free(model);
    return rc;
}
