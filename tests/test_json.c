/* The public JSON reader (dintattn_json_*): what each reader gives for each type, nested lookups,
   counts and indexing, decoded strings (escapes, surrogate pairs; a NUL, raw or escaped, refused), integers against
   other numbers, and the exact message and code of each refusal, the nesting limit included. It
   uses only the API, so it links the implementation compiled once (build/dintattn.o). */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#define DINTATTN_IMPLEMENTATION
#include "../dintattn.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static dintattn_json *parse_ok(const char *text)
{
    dintattn_json *j = NULL;
    dintattn_error err;
    dintattn_result r = dintattn_json_parse(text, strlen(text), &j, &err);
    if (r != DINTATTN_OK) fail_msg("%s: %s", text, err.message);
    assert_non_null(j);
    return j;
}

/* Parses text, which must be refused with `code` and exactly `message`. */
static void parse_bad(const char *text, size_t len, dintattn_result code, const char *message)
{
    dintattn_json *j = (dintattn_json *)1;
    dintattn_error err;
    assert_int_equal(dintattn_json_parse(text, len, &j, &err), code);
    assert_int_equal(err.code, code);
    assert_string_equal(err.message, message);
    assert_null(j);
}

static void test_types_and_values(void **state)
{
    dintattn_json *j = parse_ok(" {\"n\": null, \"t\": true, \"f\": false, \"i\": -42, \"x\": 2.5e3,"
                                " \"big\": 123456789012345678901234, \"s\": \"hi\", \"a\": [], \"o\": {}} ");
    const dintattn_json_node *root = dintattn_json_root(j), *n;
    long long v = 7;
    size_t len = 99;
    (void)state;
    assert_int_equal(dintattn_json_type(j, root), DINTATTN_JSON_OBJECT);
    assert_int_equal(dintattn_json_len(j, root), 9);
    assert_int_equal(dintattn_json_type(j, dintattn_json_get(j, root, "n")), DINTATTN_JSON_NULL);
    assert_non_null(dintattn_json_get(j, root, "n")); /* present, and null */
    assert_null(dintattn_json_get(j, root, "missing"));
    assert_int_equal(dintattn_json_type(j, NULL), DINTATTN_JSON_NULL);
    assert_int_equal(dintattn_json_type(j, dintattn_json_get(j, root, "t")), DINTATTN_JSON_BOOL);
    assert_int_equal(dintattn_json_bool(j, dintattn_json_get(j, root, "t")), 1);
    assert_int_equal(dintattn_json_bool(j, dintattn_json_get(j, root, "f")), 0);
    n = dintattn_json_get(j, root, "i");
    assert_int_equal(dintattn_json_type(j, n), DINTATTN_JSON_NUMBER);
    assert_true(dintattn_json_num(j, n) == -42.0);
    assert_int_equal(dintattn_json_int(j, n, &v), 1);
    assert_int_equal(v, -42);
    n = dintattn_json_get(j, root, "x"); /* an exponent makes it no integer, even when whole */
    assert_true(dintattn_json_num(j, n) == 2500.0);
    v = 7;
    assert_int_equal(dintattn_json_int(j, n, &v), 0);
    assert_int_equal(v, 7);
    n = dintattn_json_get(j, root, "big"); /* past long long: a number, not an integer */
    assert_true(dintattn_json_num(j, n) == 123456789012345678901234.0);
    assert_int_equal(dintattn_json_int(j, n, &v), 0);
    n = dintattn_json_get(j, root, "s");
    assert_int_equal(dintattn_json_type(j, n), DINTATTN_JSON_STRING);
    assert_string_equal(dintattn_json_str(j, n, &len), "hi");
    assert_int_equal(len, 2);
    assert_int_equal(dintattn_json_type(j, dintattn_json_get(j, root, "a")), DINTATTN_JSON_ARRAY);
    assert_int_equal(dintattn_json_len(j, dintattn_json_get(j, root, "a")), 0);
    assert_null(dintattn_json_at(j, dintattn_json_get(j, root, "a"), 0));
    assert_int_equal(dintattn_json_type(j, dintattn_json_get(j, root, "o")), DINTATTN_JSON_OBJECT);
    assert_int_equal(dintattn_json_len(j, dintattn_json_get(j, root, "o")), 0);
    /* a reader of another type gives 0 / NULL */
    assert_null(dintattn_json_str(j, dintattn_json_get(j, root, "i"), &len));
    assert_int_equal(len, 0);
    assert_true(dintattn_json_num(j, dintattn_json_get(j, root, "s")) == 0.0);
    assert_int_equal(dintattn_json_bool(j, dintattn_json_get(j, root, "i")), 0);
    assert_int_equal(dintattn_json_len(j, dintattn_json_get(j, root, "s")), 0);
    assert_null(dintattn_json_get(j, dintattn_json_get(j, root, "a"), "x")); /* get on an array */
    dintattn_json_free(j);
    dintattn_json_free(NULL);
}

static void test_nested_and_indexed(void **state)
{
    dintattn_json *j = parse_ok("{\"messages\": [{\"role\": \"user\", \"content\": [{\"type\": \"text\", \"text\": \"a\"},"
                                " {\"type\": \"text\", \"text\": \"bc\"}]}, {\"role\": \"assistant\"}, 3],"
                                " \"cfg\": {\"deep\": {\"deeper\": [10, 20, 30]}}}");
    const dintattn_json_node *root = dintattn_json_root(j), *msgs, *m0, *parts, *deeper;
    int i;
    (void)state;
    msgs = dintattn_json_get(j, root, "messages");
    assert_int_equal(dintattn_json_len(j, msgs), 3);
    m0 = dintattn_json_at(j, msgs, 0);
    assert_string_equal(dintattn_json_str(j, dintattn_json_get(j, m0, "role"), NULL), "user");
    parts = dintattn_json_get(j, m0, "content");
    assert_int_equal(dintattn_json_len(j, parts), 2);
    assert_string_equal(dintattn_json_str(j, dintattn_json_get(j, dintattn_json_at(j, parts, 1), "text"), NULL), "bc");
    assert_string_equal(dintattn_json_str(j, dintattn_json_get(j, dintattn_json_at(j, msgs, 1), "role"), NULL), "assistant");
    assert_true(dintattn_json_num(j, dintattn_json_at(j, msgs, 2)) == 3.0);
    assert_null(dintattn_json_at(j, msgs, 3));
    assert_null(dintattn_json_at(j, msgs, -1));
    deeper = dintattn_json_get(j, dintattn_json_get(j, dintattn_json_get(j, root, "cfg"), "deep"), "deeper");
    for (i = 0; i < 3; i++) assert_true(dintattn_json_num(j, dintattn_json_at(j, deeper, i)) == 10.0 * (i + 1));
    /* an object's members by index, with their keys, in document order */
    assert_string_equal(dintattn_json_key(j, dintattn_json_at(j, root, 0)), "messages");
    assert_string_equal(dintattn_json_key(j, dintattn_json_at(j, root, 1)), "cfg");
    assert_true(dintattn_json_at(j, root, 1) == dintattn_json_get(j, root, "cfg"));
    assert_null(dintattn_json_key(j, dintattn_json_at(j, deeper, 0))); /* array elements have none */
    /* a missing link in a chain of gets gives NULL, never a crash */
    assert_null(dintattn_json_get(j, dintattn_json_get(j, root, "nope"), "deep"));
    assert_null(dintattn_json_at(j, NULL, 0));
    dintattn_json_free(j);
}

static void test_strings(void **state)
{
    /* escapes, a surrogate pair, raw UTF-8 (a string cannot hold U+0000: test_refusals) */
    static const char text[] = "[\"a\\\"b\\\\c\\/d\\b\\f\\n\\r\\t\", \"\\u00e9\\ud83d\\ude00\", \"\xc3\xa9\", \"\"]";
    dintattn_json *j = parse_ok(text);
    const dintattn_json_node *root = dintattn_json_root(j);
    size_t len;
    const char *s;
    (void)state;
    s = dintattn_json_str(j, dintattn_json_at(j, root, 0), &len);
    assert_int_equal(len, 12);
    assert_memory_equal(s, "a\"b\\c/d\b\f\n\r\t", 13);
    s = dintattn_json_str(j, dintattn_json_at(j, root, 1), &len);
    assert_int_equal(len, 6);
    assert_string_equal(s, "\xc3\xa9\xf0\x9f\x98\x80");
    assert_string_equal(dintattn_json_str(j, dintattn_json_at(j, root, 2), &len), "\xc3\xa9");
    assert_int_equal(len, 2);
    assert_string_equal(dintattn_json_str(j, dintattn_json_at(j, root, 3), &len), "");
    assert_int_equal(len, 0);
    dintattn_json_free(j);
}

static void test_refusals(void **state)
{
    static const char nul_inside[] = "[\"a\0b\"]";
    (void)state;
    parse_bad("", 0, DINTATTN_ERR_ARG, "unexpected end of JSON at byte 0");
    parse_bad("[1, 2", 5, DINTATTN_ERR_ARG, "expected ',' or ']' at byte 5");
    parse_bad("{\"a\": 1,}", 9, DINTATTN_ERR_ARG, "expected a key at byte 8");
    parse_bad("{\"a\": 1, \"a\": 2}", 16, DINTATTN_ERR_ARG, "duplicate key \"a\"");
    parse_bad("[01]", 4, DINTATTN_ERR_ARG, "expected ',' or ']' at byte 2");
    parse_bad("[1.]", 4, DINTATTN_ERR_ARG, "bad number at byte 1");
    parse_bad("tru", 3, DINTATTN_ERR_ARG, "bad literal at byte 0");
    parse_bad("{} x", 4, DINTATTN_ERR_ARG, "trailing characters after JSON at byte 3");
    parse_bad("\"\\u0000\"", 8, DINTATTN_ERR_ARG, "\\u0000 in a string at byte 7");
    parse_bad("\"\\ud83d\"", 8, DINTATTN_ERR_ARG, "unpaired surrogate in \\u escape at byte 7");
    parse_bad(nul_inside, sizeof nul_inside - 1, DINTATTN_ERR_ARG, "control character in string at byte 3");
    parse_bad("\"abc", 4, DINTATTN_ERR_ARG, "unterminated string at byte 4");
    parse_bad(NULL, 1, DINTATTN_ERR_ARG, "dintattn_json_parse: text is NULL");
    {
        dintattn_error err;
        assert_int_equal(dintattn_json_parse("1", 1, NULL, &err), DINTATTN_ERR_ARG);
        assert_string_equal(err.message, "dintattn_json_parse: out is NULL");
    }
}

/* 64 levels of nesting below the top-level value are read; one more is refused at its bracket. */
static void test_depth_limit(void **state)
{
    char text[2 * 70 + 1];
    int levels;
    (void)state;
    for (levels = 64; levels <= 66; levels++) {
        dintattn_json *j = NULL;
        dintattn_error err;
        dintattn_result r;
        memset(text, '[', (size_t)levels);
        memset(text + levels, ']', (size_t)levels);
        r = dintattn_json_parse(text, 2 * (size_t)levels, &j, &err);
        if (levels <= 65) {
            const dintattn_json_node *n = dintattn_json_root(j);
            int d;
            assert_int_equal(r, DINTATTN_OK);
            for (d = 1; d < levels; d++) n = dintattn_json_at(j, n, 0);
            assert_int_equal(dintattn_json_type(j, n), DINTATTN_JSON_ARRAY);
            assert_int_equal(dintattn_json_len(j, n), 0);
            dintattn_json_free(j);
        } else {
            assert_int_equal(r, DINTATTN_ERR_ARG);
            assert_string_equal(err.message, "JSON nested too deeply at byte 65");
            assert_null(j);
        }
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_types_and_values),
        cmocka_unit_test(test_nested_and_indexed),
        cmocka_unit_test(test_strings),
        cmocka_unit_test(test_refusals),
        cmocka_unit_test(test_depth_limit),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
