#!/bin/sh
# examples/lowbit from the command line. Its figures are checked against what does not come from
# the program's own loop: each row's KL, top-1 agreement and perplexity against the same figures
# computed here in awk (in double) from the float64 reference's logits in tests/fixtures (the
# model's f32 logits and those of its Q8, Q4 and BF16 weights and BF16 and Q8 caches, written by
# tools/make_fixtures.py), and against examples/score --kl of the same text and setting against
# a saved f32 run (one text in windows, on the shipped model). Invariants: the f32/f32 row is a
# second run of the reference (KL 0, agreement 1); the quantized rows differ from it. Every bad
# input is a non-zero exit with one line on stderr.
# Usage: sh tests/lowbit.sh PATH/TO/lowbit [PATH/TO/score] (by default next to lowbit)
bin=${1:-examples/lowbit}
score=${2:-$(dirname "$bin")/score}
fx=tests/fixtures
. tests/cli_lib.sh

# jget KEY FILE: a scalar of the JSON object in FILE (the first); row W KV FILE: that row's object
jget() { sed -n "s/.*\"$1\": \([^],}]*\).*/\1/p" "$2" | head -n 1; }
row() { tr '{' '\n' <"$3" | grep "\"weights\": \"$1\", \"kv\": \"$2\"" >"$tmp/row.$1.$2"; echo "$tmp/row.$1.$2"; }
# near A B TOL: |A - B| <= TOL * max(1, |B|); rnear A B TOL: |A - B| <= TOL * |B| + 1e-15
near() { awk -v a="$1" -v b="$2" -v t="$3" 'BEGIN { d = a - b; if (d < 0) d = -d; m = b < 0 ? -b : b; exit !(a != "" && b != "" && d <= t * (m > 1 ? m : 1)) }'; }
rnear() { awk -v a="$1" -v b="$2" -v t="$3" 'BEGIN { d = a - b; if (d < 0) d = -d; m = b < 0 ? -b : b; exit !(a != "" && b != "" && d <= t * m + 1e-15) }'; }
floats() { od -An -v -tf4 -w4 "$1"; }

# 1. A converted-weights fixture at --precision exact: the rows of one precision changed at a time
#    against the reference's logits of the same conversion. compare A B: "kl_mean kl_max top1
#    ppl_a ppl_b" of logits files A (the reference) and B over rows 0 .. n - 2, in awk.
compare() {
    floats "$1" >"$tmp/ka"
    floats "$2" >"$tmp/kb"
    paste "$tmp/ka" "$tmp/kb" | awk -v V="$V" -v ids="$ids" '{ a[NR - 1] = $1; b[NR - 1] = $2 }
        END { n = split(ids, t, ",")
              for (i = 0; i < n - 1; i++) {
                  ma = mb = -1e300; ia = ib = 0
                  for (j = 0; j < V; j++) { if (a[i * V + j] > ma) { ma = a[i * V + j]; ia = j } if (b[i * V + j] > mb) { mb = b[i * V + j]; ib = j } }
                  sa = sb = 0; for (j = 0; j < V; j++) { sa += exp(a[i * V + j] - ma); sb += exp(b[i * V + j] - mb) }
                  la = ma + log(sa); lb = mb + log(sb); kl = 0
                  for (j = 0; j < V; j++) { p = a[i * V + j] - la; kl += exp(p) * (p - (b[i * V + j] - lb)) }
                  sum += kl; if (i == 0 || kl > mx) mx = kl; same += ia == ib
                  na -= a[i * V + t[i + 2]] - la; nb -= b[i * V + t[i + 2]] - lb }
              c = n - 1; printf "%.12g %.12g %.12g %.12g %.12g\n", sum / c, mx, same / c, exp(na / c), exp(nb / c) }'
}
# check_row WHAT ROWFILE "kl_mean kl_max top1 ppl_ref ppl" TOL_KL: the row's figures
check_row() {
    set -- "$1" "$2" $3 "$4"
    rnear "$(jget kl_mean "$2")" "$3" "$8" && rnear "$(jget kl_max "$2")" "$4" "$8" &&
        near "$(jget top1_agreement "$2")" "$5" 1e-9 && rnear "$(jget ppl "$2")" "$7" 1e-4 &&
        rnear "$(jget ppl_change "$2")" "$(awk -v a="$7" -v b="$6" 'BEGIN { printf "%.12g", a - b }')" 1e-2 &&
        ok || bad "$1: $(cat "$2"), want kl $3 max $4 top1 $5 ppl $7 (reference $6)"
}
for name in conv_dint_grouped_gqa_f32 conv_standard_gqa_dv12_f32; do
    all32=0
    [ $name = conv_dint_grouped_gqa_f32 ] && all32=1
    ids=$(awk -v n=$name '$1 == n {print $2}' $fx/converted.txt)
    n=$(echo "$ids" | tr ',' '\n' | wc -l)
    V=$(($(wc -c <$fx/$name.logits) / 4 / n))
    m=$fx/$name.safetensors
    if ! "$bin" $m --ids "$ids" --precision exact --threads 1 --json >"$tmp/$name.json" 2>"$tmp/err"; then
        bad "$name: lowbit failed: $(cat "$tmp/err")"
        continue
    fi
    [ "$(tr '{' '\n' <"$tmp/$name.json" | grep -c '"weights"')" -eq 12 ] && [ "$(jget n_scored "$tmp/$name.json")" = $((n - 1)) ] &&
        ok || bad "$name: 12 rows of $((n - 1)) scored tokens: $(cat "$tmp/$name.json")"
    # the reference's perplexity: of the float64 reference's logits
    want=$(compare $fx/$name.logits $fx/$name.logits)
    rnear "$(jget ppl_reference "$tmp/$name.json")" "$(echo "$want" | cut -d' ' -f4)" 1e-4 && ok ||
        bad "$name: reference perplexity $(jget ppl_reference "$tmp/$name.json"), want $(echo "$want" | cut -d' ' -f4)"
    # f32/f32 is the reference run again: nothing differs
    r=$(row f32 f32 "$tmp/$name.json")
    [ "$(jget kl_mean "$r")" = 0 ] && [ "$(jget kl_max "$r")" = 0 ] && [ "$(jget top1_agreement "$r")" = 1 ] &&
        [ "$(jget ppl_change "$r")" = 0 ] && [ "$(jget weight_bits "$r")" = 32 ] && [ "$(jget weights_held "$r")" = 1 ] &&
        ok || bad "$name: the f32/f32 row: $(cat "$r")"
    # one precision changed at a time, against the reference's logits of that setting. The KL of
    # a rounded cache moves more with the engine's 1e-6 differences (a value near a rounding
    # boundary of bf16 / int8 goes either way), hence its wider tolerance.
    for v in "q8 f32 q8" "q4 f32 q4" "bf16 f32 bf16" "f32 bf16 kvbf16" "f32 q8 kvq8"; do
        set -- $v
        tol=1e-3
        [ "$2" = f32 ] || tol=2e-2
        check_row "$name: weights $1, KV $2" "$(row "$1" "$2" "$tmp/$name.json")" "$(compare $fx/$name.logits $fx/$name.$3.logits)" $tol
    done
    # the quantized rows differ from f32, and the weights' bits are as held: Q8 8 bits and a 32-bit
    # scale per 32, Q4 4 bits and one, BF16 16; the matrices whose rows are not a multiple of 32
    # long (not held so) stay f32 as the file stores them (the first fixture has none)
    for v in "q8 9" "q4 5" "bf16 16"; do
        set -- $v
        r=$(row "$1" q8 "$tmp/$name.json")
        held=$(jget weights_held "$r")
        rnear "$(jget weight_bits "$r")" "$(awk -v h="$held" -v b="$2" 'BEGIN { printf "%.12g", h * b + (1 - h) * 32 }')" 1e-9 &&
            awk -v k="$(jget kl_mean "$r")" -v h="$held" -v all="$all32" 'BEGIN { exit !(k > 0 && h > 0.5 && (!all || h == 1)) }' &&
            ok || bad "$name: weights $1: bits or KL: $(cat "$r")"
    done
done

# 2. Every row equals examples/score --kl of the same text and setting against a saved f32 run:
#    a fixture (one window; --precision exact and auto: Q8/Q4 with int8 activations) and the
#    shipped model on a text in windows (the default MODEL; a subset of rows, in any order)
name=conv_dint_grouped_gqa_f32
ids=$(awk -v n=$name '$1 == n {print $2}' $fx/converted.txt)
m=$fx/$name.safetensors
# same_as_score WHAT LOWBIT_JSON W KV SCORE_ARGS...: the row against score --kl with SCORE_ARGS
same_as_score() {
    what=$1 j=$2 w=$3 kv=$4
    shift 4
    r=$(row "$w" "$kv" "$j")
    if "$score" "$@" --weights "$w" --kv "$kv" --kl "$tmp/saved.bin" --json >"$tmp/kl.json" 2>"$tmp/err"; then
        for key in kl_mean kl_max top1_agreement logit_rms_diff ppl; do
            rnear "$(jget $key "$r")" "$(jget $key "$tmp/kl.json")" 1e-9 || { bad "$what: $w/$kv: $key $(jget $key "$r"), score --kl says $(jget $key "$tmp/kl.json")"; return; }
        done
        rnear "$(jget ppl_reference "$j")" "$(jget ppl_saved "$tmp/kl.json")" 1e-9 && ok || bad "$what: the reference's perplexity"
    else
        bad "$what: score --kl: $(cat "$tmp/err")"
    fi
}
for precision in exact auto; do
    if "$bin" $m --ids "$ids" --precision $precision --threads 1 --json >"$tmp/lb.json" 2>"$tmp/err" &&
        "$score" $m --ids "$ids" --precision $precision --threads 1 --save-logits "$tmp/saved.bin" >/dev/null 2>>"$tmp/err"; then
        for w in f32 bf16 q8 q4; do
            for kv in f32 bf16 q8; do
                same_as_score "$name at $precision" "$tmp/lb.json" $w $kv $m --ids "$ids" --precision $precision --threads 1
            done
        done
    else
        bad "$name at $precision: $(cat "$tmp/err")"
    fi
done
kjv=models/dint-kjv.safetensors
text="In the beginning God created the heaven and the earth. And the earth was without form, and void; and darkness was upon the face of the deep."
if "$bin" -p "$text" --ctx 12 --weights q4,f32 --kv q8,f32 --threads 1 --json >"$tmp/kjv.json" 2>"$tmp/err" &&
    "$score" $kjv -p "$text" --ctx 12 --threads 1 --save-logits "$tmp/saved.bin" >/dev/null 2>>"$tmp/err"; then
    [ "$(tr '{' '\n' <"$tmp/kjv.json" | sed -n 's/.*"weights": "\([a-z0-9]*\)", "kv": "\([a-z0-9]*\)".*/\1\/\2/p' | paste -sd' ' -)" = \
        "f32/f32 f32/q8 q4/f32 q4/q8" ] && ok || bad "shipped model: the rows and their order: $(cat "$tmp/kjv.json")"
    [ "$(jget n_windows "$tmp/kjv.json")" -ge 3 ] && ok || bad "shipped model: not in windows: $(cat "$tmp/kjv.json")"
    for v in "f32 f32" "f32 q8" "q4 f32" "q4 q8"; do
        set -- $v
        same_as_score "shipped model, windows of 12" "$tmp/kjv.json" "$1" "$2" $kjv -p "$text" --ctx 12 --threads 1
    done
    r=$(row q4 f32 "$tmp/kjv.json")
    awk -v k="$(jget kl_mean "$r")" 'BEGIN { exit !(k > 0) }' && ok || bad "shipped model: q4 does not differ: $(cat "$r")"
    # the table: a header and the four rows, f32/f32 at 0 and 1
    "$bin" -p "$text" --ctx 12 --weights q4,f32 --kv q8,f32 --threads 1 >"$tmp/table" 2>/dev/null &&
        [ "$(wc -l <"$tmp/table")" -eq 6 ] && sed -n 2p "$tmp/table" | grep -q "KL mean" &&
        sed -n 3p "$tmp/table" | awk '$1 == "f32" && $2 == "f32" && $6 == 0 && $7 == 0 && $8 == "1.0000" { ok = 1 } END { exit !ok }' &&
        ok || bad "the table: $(cat "$tmp/table")"
else
    bad "shipped model: $(cat "$tmp/err")"
fi

# 3. bad input: one line on stderr, a non-zero exit
expect_error "no text" $m
expect_error "two texts" $m --ids "$ids" -p "x"
expect_error "an unknown weight type" $m --ids "$ids" --weights f32,q5
grep -q "weights" "$tmp/err" && grep -q "q5" "$tmp/err" && ok || bad "--weights q5: unclear: $(cat "$tmp/err")"
expect_error "--weights file" $m --ids "$ids" --weights file
grep -q "f32, bf16, q8 or q4" "$tmp/err" && ok || bad "--weights file: unclear: $(cat "$tmp/err")"
expect_error "a weight type twice" $m --ids "$ids" --weights q8,f32,q8
grep -q "twice" "$tmp/err" && ok || bad "--weights q8,f32,q8: unclear: $(cat "$tmp/err")"
expect_error "an empty list" $m --ids "$ids" --weights ""
expect_error "a trailing comma" $m --ids "$ids" --kv f32,
expect_error "an unknown KV type" $m --ids "$ids" --kv int4
grep -q "int4" "$tmp/err" && ok || bad "--kv int4: unclear: $(cat "$tmp/err")"
expect_error "--kv twice" $m --ids "$ids" --kv f32 --kv q8
expect_error "--weights (the engine option) without a value" $m --ids "$ids" --weights
expect_error "an unknown option" $m --ids "$ids" --bits 6
expect_error "--ctx 0" $m --ids "$ids" --ctx 0
expect_error "--ctx past the model's" $m --ids "$ids" --ctx 100000
expect_error "--ctx 1 on two tokens" $m --ids 1,2,3 --ctx 1
expect_error "one token" $m --ids 1
expect_error "an id outside the vocabulary" $m --ids 1,99999
expect_error "a text without a tokenizer" $m -p "hello"
expect_error "no such model" $tmp/none.safetensors --ids 1,2
expect_error "not a model" $fx/manifest.txt --ids 1,2
expect_error "a bad --precision" $m --ids "$ids" --precision low
expect_error "an empty file" $m -f /dev/null

echo "lowbit: $pass passed, $fail failed"
[ "$fail" -eq 0 ]
