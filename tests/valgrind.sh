#!/bin/sh
# The examples under valgrind memcheck: no invalid read or write, no use of uninitialised values,
# no definite or indirect leak, on successful runs and on refused input alike.
# Usage: sh tests/valgrind.sh [BINDIR]   (BINDIR holds logits, tokenize, generate and score; default build)
# Prints "valgrind: N passed, M failed" and exits non-zero if any failed.
dir=${1:-build}
model=tests/fixtures/tok_model.safetensors
ranks=tests/fixtures/toy.tiktoken
export OPENBLAS_NUM_THREADS=1
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
pass=0
fail=0
if ! command -v valgrind >/dev/null 2>&1; then
    echo "valgrind: not installed, skipped"
    exit 0
fi

# vg WANT NAME ARGS...: runs ARGS under memcheck; passes if valgrind found nothing (exit 99 is
# reserved for it) and the program exited WANT (0, or 1 for input it must refuse).
vg() {
    want=$1 name=$2
    shift 2
    valgrind -q --leak-check=full --show-leak-kinds=definite,indirect --errors-for-leak-kinds=definite,indirect \
        --error-exitcode=99 \
        --log-file="$tmp/vg.log" "$@" >"$tmp/out" 2>"$tmp/err" </dev/null
    rc=$?
    if [ "$rc" -eq "$want" ] && [ ! -s "$tmp/vg.log" ]; then
        pass=$((pass + 1))
    else
        fail=$((fail + 1))
        echo "FAIL: $name (exit $rc, want $want)"
        head -40 "$tmp/vg.log"
        head -5 "$tmp/err"
    fi
}

# logits: prefill, decode, chunks, threads; a Shared-DIFF model in both Q/K forms; a DINT model
vg 0 "logits prefill" "$dir/logits" $model 1,2,3,4,5,6,7,8 "$tmp/l.bin"
vg 0 "logits --decode" "$dir/logits" $model 1,2,3,4,5 "$tmp/l.bin" --decode
vg 0 "logits --chunk 3 --threads 2" "$dir/logits" $model 1,2,3,4,5,6,7 "$tmp/l.bin" --chunk 3 --threads 2
vg 0 "logits shared-diff" "$dir/logits" tests/fixtures/shared_diff_r2_f32.safetensors 1,2,3 "$tmp/l.bin"
vg 0 "logits dint gqa" "$dir/logits" tests/fixtures/dint_shared_grouped_gqa_bf16.safetensors 1,2,3,4 "$tmp/l.bin" --threads 2
# int8 and bf16 activations (valgrind hides AVX-512: the AVX2 kernels run), Q4 and Q8 files
vg 0 "logits q4 prefill, 2 threads" "$dir/logits" $model 1,2,3,4,5,6,7,8,9 "$tmp/l.bin" --weights q4 --threads 2
vg 0 "logits q8 file --decode" "$dir/logits" tests/fixtures/conv_dint_grouped_gqa_q8file.safetensors 1,2,3 "$tmp/l.bin" --decode
vg 0 "logits q4 file, chunks" "$dir/logits" tests/fixtures/conv_dint_grouped_gqa_q4file.safetensors 1,2,3,4,5 "$tmp/l.bin" --chunk 4
vg 0 "logits --precision fast" "$dir/logits" $model 1,2,3,4,5,6 "$tmp/l.bin" --precision fast
# logits: refused input (each must free what it allocated before failing)
head -c 3000 $model >"$tmp/trunc.safetensors"
printf 'garbage that is not a model file' >"$tmp/junk.safetensors"
vg 1 "logits missing file" "$dir/logits" "$tmp/none.safetensors" 1,2 "$tmp/l.bin"
vg 1 "logits truncated file" "$dir/logits" "$tmp/trunc.safetensors" 1,2 "$tmp/l.bin"
vg 1 "logits junk file" "$dir/logits" "$tmp/junk.safetensors" 1,2 "$tmp/l.bin"
vg 1 "logits id out of range" "$dir/logits" $model 1,2,999999 "$tmp/l.bin"
# tokenize: a rank file, a model's tokenizer with special tokens, invalid UTF-8, decoding
vg 0 "tokenize --ranks" "$dir/tokenize" --ranks $ranks "In the beginning God created the heaven"
vg 0 "tokenize model" "$dir/tokenize" $model "In the beginning<|endoftext|> and the earth"
printf 'bad \377\376 utf-8 \303(\n' >"$tmp/bad.txt"
vg 0 "tokenize invalid utf-8" "$dir/tokenize" $model -f "$tmp/bad.txt"
vg 0 "tokenize --decode" "$dir/tokenize" $model --decode 1,2,3,4,5
vg 1 "tokenize bad rank file" "$dir/tokenize" --ranks "$tmp/junk.safetensors" "text"
# generate: sampled, greedy, with attention threads; a refused model
vg 0 "generate sampled" "$dir/generate" $model -p "In the beginning" -n 8 --seed 1
vg 0 "generate greedy --threads 2" "$dir/generate" $model -p "And God said" -n 8 --temp 0 --threads 2
vg 0 "generate repeat penalty" "$dir/generate" $model -p "Let there be" -n 6 --seed 3 --top-k 0 --top-p 1 --min-p 0 --repeat-penalty 1.5
vg 1 "generate truncated model" "$dir/generate" "$tmp/trunc.safetensors" -p "x" -n 2
# score: a text in windows, llama.cpp's perplexity, multiple choice, saved logits and KL; refusals
if [ -x "$dir/score" ]; then
    printf 'In the beginning God created the heaven and the earth.' >"$tmp/text.txt"
    printf '{"context": "In the", "choices": [" beginning", " end"], "gold": 0}\n{"context": "", "choices": ["And"]}\n' >"$tmp/mc.jsonl"
    printf '{"context": "In the", "choices": [" b"]}\n{"context": \n' >"$tmp/bad.jsonl"
    vg 0 "score text, windows, --json" "$dir/score" $model -f "$tmp/text.txt" --ctx 10 --json
    vg 0 "score --ppl" "$dir/score" $model --ppl "$tmp/text.txt" --ctx 8
    vg 0 "score --choices" "$dir/score" $model --choices "$tmp/mc.jsonl"
    vg 0 "score --save-logits" "$dir/score" $model -f "$tmp/text.txt" --ctx 12 --save-logits "$tmp/s.bin"
    vg 0 "score --kl, q8" "$dir/score" $model -f "$tmp/text.txt" --ctx 12 --weights q8 --kl "$tmp/s.bin"
    vg 1 "score --kl, other windows" "$dir/score" $model -f "$tmp/text.txt" --kl "$tmp/s.bin"
    vg 1 "score --choices, bad JSON" "$dir/score" $model --choices "$tmp/bad.jsonl"
    printf 'In the' >"$tmp/short.txt"
    vg 1 "score --ppl, too short" "$dir/score" $model --ppl "$tmp/short.txt"
fi
# needle: a small grid with --json --prompts and the SVG, a filler file; refusals
if [ -x "$dir/needle" ]; then
    kjv=models/dint-kjv.safetensors # needles need a tokenizer and room
    vg 0 "needle --json --prompts --svg" "$dir/needle" $kjv --lengths 64,96 --depths 0,100 --needles 2 --asked 2 \
        --samples 1 --max-tokens 3 --json --prompts --svg "$tmp/n.svg"
    printf "In the beginning God created the heaven and the earth.\n" >"$tmp/filler.txt"
    vg 0 "needle --filler" "$dir/needle" $kjv --filler "$tmp/filler.txt" --lengths 80 --depths 50 --needles 1 --samples 1 --max-tokens 2
    vg 1 "needle a length over the context" "$dir/needle" $kjv --lengths 256
    vg 1 "needle --svg unwritable" "$dir/needle" $kjv --lengths 64 --needles 1 --svg "$tmp/no/such/x.svg"
fi

echo "valgrind: $pass passed, $fail failed"
[ "$fail" -eq 0 ]
