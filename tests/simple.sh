#!/bin/sh
# examples/simple, the shortest complete program: its greedy text is examples/generate's greedy
# text (--temp 0 --repeat-penalty 1: the same argmax at every step), it stops at the session's end
# as generate does, and a bad model file is one line on stderr and a non-zero exit.
# Usage: sh tests/simple.sh PATH/TO/simple PATH/TO/generate
bin=${1:-examples/simple}
generate=${2:-examples/generate}
. tests/cli_lib.sh

same_as_generate() { # MODEL PROMPT N
    "$bin" "$1" "$2" "$3" >"$tmp/s" 2>"$tmp/s.err" || { bad "simple $1 '$2': $(cat "$tmp/s.err")"; return; }
    "$generate" "$1" -p "$2" -n "$3" --temp 0 --repeat-penalty 1 >"$tmp/g" 2>"$tmp/g.err" ||
        { bad "generate $1 '$2': $(cat "$tmp/g.err")"; return; }
    if [ -s "$tmp/s" ] && cmp -s "$tmp/s" "$tmp/g"; then ok; else bad "simple and generate differ on $1 '$2'"; fi
}
same_as_generate models/dint-kjv.safetensors "In the beginning" 20
same_as_generate models/dint-kjv.safetensors "And God said" 12
# the prompt is longer than half of this model's context: both stop at its end, after 5 tokens,
# and say so
same_as_generate tests/fixtures/tok_model.safetensors "And God said" 8
grep -qx "simple: stopped: the context of 16 tokens is full" "$tmp/s.err" && ok || bad "no word on the context's end: $(cat "$tmp/s.err")"
# an empty prompt starts from the model's BOS token
"$bin" models/dint-kjv.safetensors "" 6 >"$tmp/e" 2>"$tmp/e.err" && [ "$(wc -c <"$tmp/e")" -gt 1 ] && ok ||
    bad "empty prompt: $(cat "$tmp/e.err")"

# errors: one line, the library's message
expect_error "a missing model" "$tmp/missing.safetensors" "text"
grep -q "cannot open '$tmp/missing.safetensors'" "$tmp/err" && ok || bad "missing model: $(cat "$tmp/err")"
expect_error "a text file as the model" README.md "text"
expect_error "no prompt" models/dint-kjv.safetensors
grep -q '^usage: simple MODEL "prompt"' "$tmp/err" && ok || bad "usage: $(cat "$tmp/err")"
# --help: usage with the range and default of n_tokens, on stdout, exit 0
"$bin" --help >"$tmp/help" 2>"$tmp/help.err" && grep -q '^usage: simple MODEL "prompt" \[n_tokens (0 or more, default 32)\]' "$tmp/help" &&
    [ ! -s "$tmp/help.err" ] && ok || bad "--help: $(cat "$tmp/help" "$tmp/help.err")"

echo "simple: $pass passed, $fail failed"
[ "$fail" -eq 0 ]
