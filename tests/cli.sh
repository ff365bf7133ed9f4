#!/bin/sh
# examples/logits and examples/tokenize from the command line: they write what they should, and
# turn every bad input into a non-zero exit with one line on stderr (never a crash).
# Usage: sh tests/cli.sh PATH/TO/logits PATH/TO/tokenize [PATH/TO/bench]
# (bench: by default next to logits; its checks are skipped when it is not built there)
bin=${1:-examples/logits}
tokenize=${2:-examples/tokenize}
bench=${3:-$(dirname "$bin")/bench}
fx=tests/fixtures
. tests/cli_lib.sh

name=dint_softmax_f32
ids=$(awk -v n=$name '$1 == n {print $2}' $fx/manifest.txt)
# every mode writes [N, vocab] float32 (their values are checked against the reference in
# test_engine); attention threads split heads, so --threads 1 gives the very same bytes as the
# default 2
want=$(wc -c <$fx/$name.logits)
"$bin" $fx/$name.safetensors "$ids" "$tmp/base.bin" || bad "logits failed"
for mode in "--decode" "--chunk 4" "--threads 1"; do
    # shellcheck disable=SC2086
    if "$bin" $fx/$name.safetensors "$ids" "$tmp/l.bin" $mode; then
        size=$(wc -c <"$tmp/l.bin")
        if [ "$size" -eq "$want" ]; then ok; else bad "$mode: wrote $size bytes, want $want"; fi
    else
        bad "logits $mode failed"
    fi
done
cmp -s "$tmp/base.bin" "$tmp/l.bin" && ok || bad "--threads 1 changed the logits"
# --weights f32 of an F32 file is the same bytes; q8 writes the same shape, different values
"$bin" $fx/$name.safetensors "$ids" "$tmp/w.bin" --weights f32 && cmp -s "$tmp/base.bin" "$tmp/w.bin" && ok ||
    bad "--weights f32 changed the logits of an F32 model"
"$bin" $fx/conv_dint_grouped_gqa_f32.safetensors 1,2,3 "$tmp/w8.bin" --weights q8 &&
    "$bin" $fx/conv_dint_grouped_gqa_f32.safetensors 1,2,3 "$tmp/w32.bin" &&
    [ "$(wc -c <"$tmp/w8.bin")" -eq "$(wc -c <"$tmp/w32.bin")" ] && ! cmp -s "$tmp/w8.bin" "$tmp/w32.bin" && ok ||
    bad "--weights q8"
# --fast is --precision fast: the same bytes, and not auto's on BF16 weights
b16=$fx/conv_dint_mean_groupnorm_bf16.safetensors
"$bin" $b16 1,2,3,4,5,6,7,8,9 "$tmp/fa.bin" --fast && "$bin" $b16 1,2,3,4,5,6,7,8,9 "$tmp/fp.bin" --precision fast &&
    "$bin" $b16 1,2,3,4,5,6,7,8,9 "$tmp/au.bin" && cmp -s "$tmp/fa.bin" "$tmp/fp.bin" && ! cmp -s "$tmp/fa.bin" "$tmp/au.bin" &&
    ok || bad "--fast is not --precision fast"
# --map copy reads the weights from the model's own copy: the same logits as the mapped file
"$bin" $fx/$name.safetensors "$ids" "$tmp/mc.bin" --map copy && cmp -s "$tmp/base.bin" "$tmp/mc.bin" && ok ||
    bad "--map copy changed the logits"
"$bin" $fx/$name.safetensors "$ids" "$tmp/mf.bin" --map file && cmp -s "$tmp/base.bin" "$tmp/mf.bin" && ok ||
    bad "--map file changed the logits"
# the kernel level is a session option: --kernels sets it, DINTATTN_KERNELS (the tests' variable,
# same names) is the default when set, and --kernels wins over it. Decoding runs the matrix-vector
# kernels, whose sums differ in the last bits from level to level, so equal bytes mean the same
# level ran.
unset DINTATTN_KERNELS
kern() { out=$1; shift; "$bin" $fx/$name.safetensors "$ids" "$tmp/$out.bin" --decode "$@"; }
kenv() { e=$1; out=$2; shift 2; DINTATTN_KERNELS=$e "$bin" $fx/$name.safetensors "$ids" "$tmp/$out.bin" --decode "$@"; }
for k in auto portable avx2 avx512 amx; do kern "k_$k" --kernels $k || bad "--kernels $k failed"; done
kern k_default && cmp -s "$tmp/k_default.bin" "$tmp/k_auto.bin" && ok ||
    bad "no --kernels and no DINTATTN_KERNELS is not --kernels auto"
for k in auto portable avx2 avx512 amx; do
    kenv $k "e_$k" && cmp -s "$tmp/e_$k.bin" "$tmp/k_$k.bin" && ok || bad "DINTATTN_KERNELS=$k is not --kernels $k"
done
kenv portable e_portable_avx2 --kernels avx2 && cmp -s "$tmp/e_portable_avx2.bin" "$tmp/k_avx2.bin" && ok ||
    bad "--kernels avx2 does not override DINTATTN_KERNELS=portable"
kenv sse2 e_bad_portable --kernels portable && cmp -s "$tmp/e_bad_portable.bin" "$tmp/k_portable.bin" && ok ||
    bad "--kernels portable with DINTATTN_KERNELS=sse2 (not read when the flag is given)"
export DINTATTN_KERNELS=sse2
expect_error "bad DINTATTN_KERNELS" $fx/$name.safetensors 1,2 "$tmp/o.bin"
unset DINTATTN_KERNELS

long=$(awk 'BEGIN { for (i = 0; i < 40; i++) printf "%s%d", (i ? "," : ""), i % 7 }')
expect_error "no arguments"
expect_error "missing file" "$tmp/none.safetensors" 1,2 "$tmp/o.bin"
expect_error "not a model" $fx/manifest.txt 1,2 "$tmp/o.bin"
expect_error "id out of range" $fx/$name.safetensors 1,99999 "$tmp/o.bin"
expect_error "negative id" $fx/$name.safetensors 1,-1 "$tmp/o.bin"
expect_error "malformed ids" $fx/$name.safetensors 1,,2 "$tmp/o.bin"
expect_error "non-numeric ids" $fx/$name.safetensors abc "$tmp/o.bin"
expect_error "more ids than the context" $fx/$name.safetensors "$long" "$tmp/o.bin"
expect_error "bad --chunk" $fx/$name.safetensors 1,2 "$tmp/o.bin" --chunk 0
expect_error "bad --threads" $fx/$name.safetensors 1,2 "$tmp/o.bin" --threads x
for f in --threads --chunk --kv; do # a flag given last without its value says so
    expect_error "$f without its value" $fx/$name.safetensors 1,2 "$tmp/o.bin" $f
    grep -q "missing value for: $f" "$tmp/err" && ok || bad "$f without its value: $(cat "$tmp/err")"
done
expect_error "bad --weights" $fx/$name.safetensors 1,2 "$tmp/o.bin" --weights q3
expect_error "bad --map" $fx/$name.safetensors 1,2 "$tmp/o.bin" --map mmap
expect_error "bad --kernels" $fx/$name.safetensors 1,2 "$tmp/o.bin" --kernels sse2
expect_error "bad --precision" $fx/$name.safetensors 1,2 "$tmp/o.bin" --precision fast1
expect_error "bad --kv" $fx/$name.safetensors 1,2 "$tmp/o.bin" --kv q4
expect_error "--kernels without a value" $fx/$name.safetensors 1,2 "$tmp/o.bin" --kernels
expect_error "unknown flag" $fx/$name.safetensors 1,2 "$tmp/o.bin" --frobnicate
expect_error "unwritable output" $fx/$name.safetensors 1,2 "$tmp/no/such/dir/o.bin"
head -c 1000 $fx/$name.safetensors >"$tmp/trunc.safetensors"
expect_error "truncated model" "$tmp/trunc.safetensors" 1,2 "$tmp/o.bin"

# tokenize: text -> ids -> the same bytes, with a rank file and with a model's tokenizer
toy=tests/fixtures/toy.tiktoken
tokmodel=tests/fixtures/tok_model.safetensors
printf 'Hello  world\r\n\377 caf\303\251 123456 <|endoftext|>' >"$tmp/text"
for src in "--ranks $toy" "$tokmodel"; do
    # shellcheck disable=SC2086
    if ids=$("$tokenize" $src -f "$tmp/text") && "$tokenize" $src --decode "$ids" >"$tmp/back" && cmp -s "$tmp/text" "$tmp/back"; then
        ok
    else
        bad "tokenize round trip with $src"
    fi
done
case $("$tokenize" --ranks $toy "ab") in *[!0-9,]*|"") bad "tokenize prints ids as 1,2,3" ;; *) ok ;; esac
# logits --help: the whole usage on stdout, each option's range and default; no arguments is an error
"$bin" --help >"$tmp/help" 2>"$tmp/help.err" && [ ! -s "$tmp/help.err" ] && grep -q -- "--chunk K .*1 or more" "$tmp/help" &&
    grep -q -- "--threads T .*(1 to 256, default 2)" "$tmp/help" && grep -q -- "--kv T" "$tmp/help" && ok || bad "logits --help"
expect_error "logits: no arguments"
grep -q "see --help" "$tmp/err" && ok || bad "logits without arguments: $(cat "$tmp/err")"
bin=$tokenize
expect_error "tokenize: no source" hello
expect_error "tokenize: missing rank file" --ranks "$tmp/none.tiktoken" hello
expect_error "tokenize: bad rank file" --ranks $fx/manifest.txt hello
expect_error "tokenize: model without tokenizer" $fx/$name.safetensors hello
expect_error "tokenize: bad ids" --ranks $toy --decode 1,x
expect_error "tokenize: id not a token" --ranks $toy --decode 99999999
expect_error "tokenize: missing file" --ranks $toy -f "$tmp/none.txt"

# bench: its usage errors, and one short run with --weights q4 --precision exact --kv q8 (a run pages in
# and reads a 1 GiB buffer to measure the bandwidth and spends about a second in its register-only
# peaks: a few seconds, so only one)
if [ -x "$bench" ]; then
    "$bench" --help >"$tmp/help" 2>&1 && grep -q -- "--kernels" "$tmp/help" && grep -q -- "--weights" "$tmp/help" &&
        grep -q -- "--precision auto|exact" "$tmp/help" && grep -q "q4" "$tmp/help" && ok || bad "bench --help"
    grep -q "(1 to 1024, default 2)" "$tmp/help" && ok || bad "bench --help: the limit of --threads"
    # a --prompt past the context (256 tokens, 4 of them decoded) is cut to fit, and said so
    if "$bench" models/dint-kjv.safetensors --prompt 300 --gen 4 --weights q4 --precision exact --kv q8 --json >"$tmp/bench.json" 2>"$tmp/bench.err" &&
        grep -qx "bench: --prompt 300 with 4 decoded tokens is past the model's context of 256: using 252" "$tmp/bench.err" &&
        grep -q '"prompt_tokens": 252,' "$tmp/bench.json" &&
        grep -q '"weights": "q4"' "$tmp/bench.json" && grep -q '"precision": "exact"' "$tmp/bench.json" &&
        grep -q '"kv": "q8"' "$tmp/bench.json" &&
        grep -q '"peak_f32_gflop_s": [0-9]' "$tmp/bench.json" && grep -q '"quality_reference": "f32"' "$tmp/bench.json" &&
        grep -q '"prefill_gemm_unset_fraction": [0-9]' "$tmp/bench.json"; then
        ok
    else
        bad "bench --weights q4 --precision exact --kv q8"; cat "$tmp/bench.err"
    fi
    bin=$bench
    expect_error "bench: bad --weights" $fx/$name.safetensors --weights q3
    expect_error "bench: bad --precision" $fx/$name.safetensors --precision bogus
    grep -q "precision.*auto.*exact.*bogus" "$tmp/err" && ok || bad "bench --precision bogus: unclear message: $(cat "$tmp/err")"
    expect_error "bench: --precision without a value" $fx/$name.safetensors --precision
    expect_error "bench: bad --kv" $fx/$name.safetensors --kv int4
    expect_error "bench: bad --kernels" $fx/$name.safetensors --kernels sse2
    expect_error "bench: --kernels without a value" $fx/$name.safetensors --kernels
    export DINTATTN_KERNELS=sse2
    expect_error "bench: bad DINTATTN_KERNELS" $fx/$name.safetensors
    unset DINTATTN_KERNELS
    expect_error "bench: bad --prompt" $fx/$name.safetensors --prompt 0
    expect_error "bench: unknown flag" $fx/$name.safetensors --frobnicate
    expect_error "bench: two MODELs" $fx/$name.safetensors $fx/$name.safetensors
    grep -q "more than one MODEL" "$tmp/err" && ok || bad "bench with two MODELs: unclear message: $(cat "$tmp/err")"
    expect_error "bench: missing model" "$tmp/none.safetensors"
    # --parallel: batched decoding (the figures are a benchmark's; here its rows and their sense)
    for bad_list in 0 257 1,,2 1,2, x "1,2,3,4,5,6,7,8,9,10,11,12,13,14,15,16,17"; do
        expect_error "bench: --parallel $bad_list" $fx/$name.safetensors --parallel "$bad_list"
        grep -q "parallel needs a comma-separated list of at most 16 batch sizes from 1 to 256" "$tmp/err" && ok ||
            bad "bench --parallel $bad_list: unclear message: $(cat "$tmp/err")"
    done
    if "$bench" models/dint-kjv.safetensors --weights q8 --parallel 1,3 --prompt 12 --gen 5 --json >"$tmp/par.json" 2>"$tmp/par.err" &&
        "$bench" models/dint-kjv.safetensors --weights q8 --parallel 2 --prompt 12 --gen 5 >"$tmp/par.txt" 2>>"$tmp/par.err"; then
        python3 - "$tmp/par.json" <<'PY' && ok || bad "bench --parallel 1,3 --json: $(cat "$tmp/par.json")"
import json, sys
j = json.load(open(sys.argv[1]))
rows = j["rows"]
assert [r["B"] for r in rows] == [1, 3] and j["prompt"] == 12 and j["gen"] == 5 and j["weights_held"] == "q8"
assert j["prepacked_bytes"] > 0 and rows[0]["speedup_vs_B1"] == 1
for r in rows:
    assert r["decode_tok_s"] > 0 and r["prefill_tok_s"] > 0 and r["ms_per_step"] > 0
    assert abs(r["decode_tok_s"] * r["ms_per_step"] / 1e3 - r["B"]) < 1e-2 * r["B"]  # B tokens a step
    assert 0 < r["weights_bandwidth_fraction"] <= r["bandwidth_fraction_with_kv"]
assert rows[1]["mix_ms_per_step"] > 0 and rows[0]["mix_ms_per_step"] == 0
PY
        grep -q "weights packed ahead: yes" "$tmp/par.txt" && grep -qE '^ +2 ' "$tmp/par.txt" && ok ||
            bad "bench --parallel 2: $(cat "$tmp/par.txt")"
    else
        bad "bench --parallel: $(cat "$tmp/par.err")"
    fi
else
    echo "cli: $bench is not built, its checks skipped"
fi

echo "cli: $pass passed, $fail failed"
[ "$fail" -eq 0 ]
