/* The chat template a model file carries (docs/format.md section 6):
   dintattn_chat_format's text for each metadata key, worked out by hand, and the loader's
   refusals. tests/convert/test_chat.py checks the same function against jinja2's rendering of
   real-style templates, end to end through tools/convert.py. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#define DINTATTN_IMPLEMENTATION
#include "../dintattn.h"
#include "test_util.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* tests/fixtures/tok_model.safetensors with metadata "chat" set to `chat` (a JSON text), written
   to a temporary file; returns its path. */
static const char *with_chat(const char *chat)
{
    FILE *f = fopen(FIXTURES "tok_model.safetensors", "rb");
    unsigned char len8[8], *data;
    char *header, *out;
    size_t hlen = 0, size, o, at;
    const char *key = "\"__metadata__\":{", *path;
    const void *parts[1];
    int i;
    assert_non_null(f);
    assert_int_equal(fread(len8, 1, 8, f), 8);
    for (i = 7; i >= 0; i--) hlen = hlen << 8 | len8[i];
    fseek(f, 0, SEEK_END);
    size = (size_t)ftell(f) - 8 - hlen;
    fseek(f, 8, SEEK_SET);
    header = (char *)malloc(hlen + 1);
    data = (unsigned char *)malloc(size);
    out = (char *)malloc(hlen + 2 * strlen(chat) + 64);
    assert_true(header && data && out);
    assert_int_equal(fread(header, 1, hlen, f), hlen);
    assert_int_equal(fread(data, 1, size, f), size);
    fclose(f);
    header[hlen] = 0;
    assert_non_null(strstr(header, key));
    at = (size_t)(strstr(header, key) - header) + strlen(key);
    memcpy(out, header, at);
    o = at + (size_t)sprintf(out + at, "\"chat\":\"");
    o = json_escape(out, o, chat);
    o += (size_t)sprintf(out + o, "\",");
    memcpy(out + o, header + at, hlen - at);
    o += hlen - at;
    while ((8 + o) % 8) out[o++] = ' ';
    parts[0] = data;
    path = write_safetensors("chat", out, o, parts, &size, 1);
    free(header);
    free(data);
    free(out);
    return path;
}

static dintattn_model *load_chat(const char *chat)
{
    dintattn_model *m = NULL;
    dintattn_error err;
    const char *path = with_chat(chat);
    if (dintattn_model_load(path, NULL, &m, &err) != DINTATTN_OK) fail_msg("%s", err.message);
    remove(path);
    return m;
}

static void refused(const char *chat, const char *what)
{
    dintattn_model *m = NULL;
    dintattn_error err;
    const char *path = with_chat(chat);
    dintattn_result r = dintattn_model_load(path, NULL, &m, &err);
    remove(path);
    assert_null(m);
    if (r != DINTATTN_ERR_METADATA || !strstr(err.message, what))
        fail_msg("got %d '%s', want DINTATTN_ERR_METADATA '...%s...'", (int)r, err.message, what);
}

/* Formats "role:content|role:content|..." (the roles and contents) and compares with want. */
static void expect(const dintattn_model *m, const char *conv, int gen, const char *want)
{
    dintattn_chat_message msgs[8];
    char buf[512], out[1024], *p = buf, *next;
    size_t len = 0;
    int n = 0;
    dintattn_error err;
    snprintf(buf, sizeof buf, "%s", conv);
    while (*conv && p) {
        next = strchr(p, '|');
        if (next) *next++ = 0;
        msgs[n].role = p;
        p = strchr(p, ':');
        assert_non_null(p);
        *p++ = 0;
        msgs[n++].content = p;
        p = next;
    }
    if (dintattn_chat_format(m, msgs, n, gen, out, sizeof out, &len, &err)) fail_msg("%s", err.message);
    if (len != strlen(want) || strcmp(out, want) != 0) fail_msg("'%s': got '%s', want '%s'", conv, out, want);
}

static void test_roles_and_prompt(void **state)
{
    dintattn_model *m;
    (void)state;
    m = load_chat("{\"roles\": {\"system\": [\"<s>\", \"</s>\"], \"user\": [\"<u>\", \"</u>\"], "
                  "\"assistant\": [\"<a>\", \"</a>\"]}, \"generation_prompt\": \"<a>\", \"stop\": [\"</a>\"]}");
    expect(m, "user:hi", 1, "<u>hi</u><a>");
    expect(m, "system:be brief|user:hi|assistant:yo", 0, "<s>be brief</s><u>hi</u><a>yo</a>");
    assert_int_equal(dintattn_chat_n_stops(m), 1);
    assert_string_equal(dintattn_chat_stop(m, 0), "</a>");
    dintattn_model_free(m);
}

static void test_begin_default_system_always_last(void **state)
{
    dintattn_model *m;
    (void)state;
    /* begin: once, first; default_system: when the conversation has no system message first */
    m = load_chat("{\"roles\": {\"system\": [\"<s>\", \"</s>\"], \"user\": [\"<u>\", \"</u>\"], "
                  "\"assistant\": [\"<a>\", \"</a>\"]}, \"generation_prompt\": \"<a>\", \"begin\": \"[B]\", "
                  "\"default_system\": \"You help.\"}");
    expect(m, "user:hi", 1, "[B]<s>You help.</s><u>hi</u><a>");
    expect(m, "system:Be terse.|user:hi", 1, "[B]<s>Be terse.</s><u>hi</u><a>");
    expect(m, "", 1, "[B]<s>You help.</s><a>");
    dintattn_model_free(m);
    /* prompt_always: the generation prompt even when not asked for */
    m = load_chat("{\"roles\": {\"user\": [\"<u>\", \"</u>\"], \"assistant\": [\"<a>\", \"</a>\"]}, "
                  "\"generation_prompt\": \"<a>\", \"prompt_always\": true}");
    expect(m, "user:hi", 0, "<u>hi</u><a>");
    expect(m, "user:hi", 1, "<u>hi</u><a>");
    dintattn_model_free(m);
    /* last: the last message of that role written otherwise, unless its content holds the third
       string (Qwen3's empty reasoning block) */
    m = load_chat("{\"roles\": {\"user\": [\"<u>\", \"</u>\"], \"assistant\": [\"<a>\", \"</a>\"]}, "
                  "\"generation_prompt\": \"<a>\", \"last\": {\"assistant\": [\"<a><t></t>\", \"</a>\", \"</t>\"]}}");
    expect(m, "user:hi|assistant:yo", 0, "<u>hi</u><a><t></t>yo</a>");
    expect(m, "user:hi|assistant:<t>x</t>yo", 0, "<u>hi</u><a><t>x</t>yo</a>");
    expect(m, "user:hi|assistant:yo|user:and?", 1, "<u>hi</u><a>yo</a><u>and?</u><a>");
    dintattn_model_free(m);
}

static void test_refusals(void **state)
{
    (void)state;
    refused("{\"generation_prompt\": \"x\"}", "no \"roles\"");
    refused("{\"roles\": {\"user\": [\"a\"]}}", "needs [prefix, suffix]");
    refused("{\"roles\": {\"user\": [\"a\", \"b\"]}, \"default_system\": \"x\"}", "needs a \"system\" role");
    refused("{\"roles\": {\"user\": [\"a\", \"b\"]}, \"last\": {\"user\": [\"a\", 1]}}", "\"last\" role 'user'");
    refused("{\"roles\": {\"user\": [\"a\", \"b\"]}, \"prompt_always\": \"yes\"}", "'prompt_always' is not");
    refused("{\"roles\": {\"user\": [\"a\", \"b\"]}, \"stop\": [\"\"]}", "non-empty strings");
    refused("{\"roles\": {\"user\": [\"a\", \"b\"]}, \"temperature\": 0.7}", "'temperature' is not");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_roles_and_prompt),
        cmocka_unit_test(test_begin_default_system_always_last),
        cmocka_unit_test(test_refusals),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
