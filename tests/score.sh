#!/bin/sh
# examples/score from the command line. Its numbers are checked against what does not come from
# the program's own arithmetic: log-probabilities against a log-softmax (awk, in double) of the
# float64 reference's logits in tests/fixtures; perplexity (llama.cpp's protocol), multiple choice
# (lm-eval's split and sums) and KL against the same protocols written out here in awk over
# single-window runs, and over the reference's f32 and Q8 logits. Every bad input is a non-zero
# exit with one line on stderr. (tests/score/score_check.py does the same in Python against
# tools/reference.py, in CI.)
# Usage: sh tests/score.sh PATH/TO/score [PATH/TO/tokenize [PATH/TO/logits]] (by default next to score)
bin=${1:-examples/score}
tokenize=${2:-$(dirname "$bin")/tokenize}
logits=${3:-$(dirname "$bin")/logits}
fx=tests/fixtures
. tests/cli_lib.sh

# jget KEY FILE: a scalar of the JSON object in FILE; jarr KEY FILE: an array's items, a line each
jget() { sed -n "s/.*\"$1\": \([^],}]*\).*/\1/p" "$2" | head -n 1; }
jarr() { sed -n "s/.*\"$1\": \[\([^]]*\)\].*/\1/p" "$2" | head -n 1 | tr ',' '\n' | tr -d ' '; }
# logprobs FILE: the "logprob" of every token of a --json text run, null for the first
logprobs() { grep -o '"logprob": [^,}]*' "$1" | sed 's/"logprob": //'; }
# near A B TOL: |A - B| <= TOL * max(1, |B|)
near() { awk -v a="$1" -v b="$2" -v t="$3" 'BEGIN { d = a - b; if (d < 0) d = -d; m = b < 0 ? -b : b; exit !(a != "" && b != "" && d <= t * (m > 1 ? m : 1)) }'; }
# rnear A B TOL: |A - B| <= TOL * |B| (for small numbers: KL)
rnear() { awk -v a="$1" -v b="$2" -v t="$3" 'BEGIN { d = a - b; if (d < 0) d = -d; m = b < 0 ? -b : b; exit !(a != "" && b != "" && d <= t * m + 1e-15) }'; }
# floats FILE [SKIP]: the little-endian float32 values of FILE after SKIP bytes, one a line
floats() { od -An -v -tf4 -w4 -j "${2:-0}" "$1"; }
# ref_logprobs V IDS: stdin the logits [N, V] one a line; prints log p(ids[i + 1]) for row i
ref_logprobs() {
    awk -v V="$1" -v ids="$2" '{ x[NR - 1] = $1 }
        END { n = split(ids, t, ",")
              for (i = 0; i < n - 1; i++) {
                  mx = x[i * V]; for (j = 1; j < V; j++) if (x[i * V + j] > mx) mx = x[i * V + j]
                  s = 0; for (j = 0; j < V; j++) s += exp(x[i * V + j] - mx)
                  printf "%.12g\n", x[i * V + t[i + 2]] - mx - log(s) } }'
}
# same_lists A B TOL: files of numbers, line by line, within TOL (and as many)
same_lists() {
    [ "$(wc -l <"$1")" -eq "$(wc -l <"$2")" ] && [ -s "$1" ] &&
        paste "$1" "$2" | awk -v t="$3" '{ d = $1 - $2; if (d < 0) d = -d; m = $2 < 0 ? -$2 : $2; if (d > t * (m > 1 ? m : 1)) bad = 1 } END { exit bad }'
}
vocab() { echo $(($(wc -c <"$fx/$1.logits") / 4 / $(echo "$2" | tr ',' '\n' | wc -l))); }

# 1. per-token log-probabilities of --ids against the reference's logits: a DINT, a DIFF, a
#    Shared-DIFF and a standard model, F32 and BF16 weights
for name in dint_softmax_f32 diff_interleaved_f32 shared_diff_r2_f32 standard_gqa_halves_f32 dint_headscale_oml_bf16; do
    ids=$(awk -v n=$name '$1 == n {print $2}' $fx/manifest.txt)
    if "$bin" $fx/$name.safetensors --ids "$ids" --json --precision exact --threads 1 >"$tmp/$name.json" 2>"$tmp/err"; then
        logprobs "$tmp/$name.json" | tail -n +2 >"$tmp/got"
        floats $fx/$name.logits | ref_logprobs "$(vocab $name "$ids")" "$ids" >"$tmp/want"
        same_lists "$tmp/got" "$tmp/want" 1e-4 && ok || bad "$name: log-probabilities differ from the reference's"
        # total, mean NLL and perplexity from the same numbers
        total=$(awk '{ s -= $1 } END { printf "%.9g", s }' "$tmp/want")
        near "$(jget total_nll "$tmp/$name.json")" "$total" 1e-4 &&
            near "$(jget perplexity "$tmp/$name.json")" "$(awk -v s="$total" -v n="$(wc -l <"$tmp/want")" 'BEGIN { printf "%.9g", exp(s / n) }')" 1e-4 &&
            ok || bad "$name: total NLL / perplexity"
    else
        bad "$name: score --ids failed: $(cat "$tmp/err")"
    fi
done

# 2. windows: a text longer than --ctx is scored in windows of --ctx tokens, each starting with the
#    previous one's last token: the first window is the reference's prefix, every window a run of its
#    own ids
name=dint_softmax_f32
ids=$(awk -v n=$name '$1 == n {print $2}' $fx/manifest.txt)
n=$(echo "$ids" | tr ',' '\n' | wc -l)
if "$bin" $fx/$name.safetensors --ids "$ids" --ctx 6 --json --precision exact >"$tmp/win.json" 2>"$tmp/win.err"; then
    logprobs "$tmp/win.json" >"$tmp/win.lp"
    grep -q "scored in 4 windows" "$tmp/win.err" && [ "$(jget n_windows "$tmp/win.json")" = 4 ] && ok || bad "windows: $(cat "$tmp/win.err")"
    sed -n 2,6p "$tmp/win.lp" >"$tmp/got"
    floats $fx/$name.logits | ref_logprobs "$(vocab $name "$ids")" "$ids" | head -n 5 >"$tmp/want5"
    same_lists "$tmp/got" "$tmp/want5" 1e-4 && ok || bad "windows: the first window is not the reference's"
    start=0 okw=1
    while [ $((start + 1)) -lt "$n" ]; do
        end=$((start + 6 < n ? start + 6 : n))
        w=$(echo "$ids" | cut -d, -f$((start + 1))-$end)
        "$bin" $fx/$name.safetensors --ids "$w" --json --precision exact >"$tmp/w1.json" 2>/dev/null || okw=0
        logprobs "$tmp/w1.json" | tail -n +2 >"$tmp/w1"
        sed -n "$((start + 2)),$((end))p" "$tmp/win.lp" >"$tmp/w2"
        same_lists "$tmp/w2" "$tmp/w1" 1e-6 || okw=0
        start=$((end - 1))
    done
    [ $okw = 1 ] && ok || bad "windows: a window is not the run of its own ids"
else
    bad "windows: $(cat "$tmp/win.err")"
fi

# 3. text: -p and -f give the same; the table's perplexity is the JSON's
tok=$fx/tok_model.safetensors
bos=301
text="In the beginning God created the heaven and the earth."
printf '%s' "$text" >"$tmp/text.txt"
"$bin" $tok -p "$text" --json >"$tmp/p.json" 2>/dev/null && "$bin" $tok -f "$tmp/text.txt" --json >"$tmp/f.json" 2>/dev/null &&
    cmp -s "$tmp/p.json" "$tmp/f.json" && ok || bad "-p and -f differ"
"$bin" $tok -p "$text" >"$tmp/table" 2>/dev/null &&
    grep -q "perplexity $(awk -v p="$(jget perplexity "$tmp/p.json")" 'BEGIN { printf "%.4f", p }')" "$tmp/table" && ok ||
    bad "the table's perplexity is not the JSON's"
# the ids are BOS, then the tokenizer's
tids=$("$tokenize" $tok -f "$tmp/text.txt")
[ "$(grep -o '"id": [0-9]*' "$tmp/p.json" | sed 's/"id": //' | paste -sd, -)" = "$bos,$tids" ] && ok || bad "-p: not BOS + the text's ids"

# 4. --ppl: llama.cpp's protocol written out here over runs of single windows (--ids): windows of
#    8 tokens, the first replaced by BOS, tokens 5..7 of each scored
all="$bos,$tids"
N=$(echo "$all" | tr ',' '\n' | wc -l)
C=8
W=$((N / C))
: >"$tmp/ppl.lp"
k=0
while [ $k -lt $W ]; do
    w=$(echo "$all" | cut -d, -f$((k * C + 2))-$((k * C + C)))
    "$bin" $tok --ids "$bos,$w" --json >"$tmp/pw.json" 2>/dev/null || bad "ppl: window $k"
    logprobs "$tmp/pw.json" | sed -n "$((C / 2 + 2)),${C}p" | sed "s/^/$k /" >>"$tmp/ppl.lp"
    k=$((k + 1))
done
awk '{ nll -= $2; nll2 += $2 * $2; c++; r[$1] = exp(nll / c) }
     END { for (k = 0; k in r; k++) printf "%.9g\n", r[k] > "/dev/stderr"
           m = nll / c; v = nll2 / c - m * m; se = v > 0 ? sqrt(v / (c - 1)) : 0
           printf "%d %.12g %.12g %.12g\n", c, m, exp(m), exp(m) * se }' "$tmp/ppl.lp" >"$tmp/ppl.want" 2>"$tmp/ppl.running"
if "$bin" $tok --ppl "$tmp/text.txt" --ctx $C --json >"$tmp/ppl.json" 2>"$tmp/ppl.err"; then
    read -r count mean ppl se <"$tmp/ppl.want"
    [ "$(jget n_windows "$tmp/ppl.json")" = $W ] && [ "$(jget n_scored "$tmp/ppl.json")" = "$count" ] && ok ||
        bad "ppl: windows $(jget n_windows "$tmp/ppl.json") (want $W), scored $(jget n_scored "$tmp/ppl.json") (want $count)"
    near "$(jget mean_nll "$tmp/ppl.json")" "$mean" 1e-6 && near "$(jget ppl "$tmp/ppl.json")" "$ppl" 1e-6 &&
        near "$(jget ppl_stderr "$tmp/ppl.json")" "$se" 1e-6 && ok ||
        bad "ppl: $(jget ppl "$tmp/ppl.json") +/- $(jget ppl_stderr "$tmp/ppl.json"), want $ppl +/- $se"
    jarr running_ppl "$tmp/ppl.json" >"$tmp/ppl.r"
    same_lists "$tmp/ppl.r" "$tmp/ppl.running" 1e-6 && ok || bad "ppl: the running perplexities"
    # llama.cpp's output: [1]x,[2]y, ... and the final estimate
    "$bin" $tok --ppl "$tmp/text.txt" --ctx $C >"$tmp/ppl.txt" 2>/dev/null
    want=$(awk '{ printf "[%d]%.4f,", NR, $1 }' "$tmp/ppl.running")
    [ "$(head -n 1 "$tmp/ppl.txt")" = "$want" ] &&
        [ "$(sed -n 2p "$tmp/ppl.txt")" = "$(awk -v p="$ppl" -v e="$se" 'BEGIN { printf "Final estimate: PPL = %.4f +/- %.5f", p, e }')" ] &&
        ok || bad "ppl: the text output: $(cat "$tmp/ppl.txt")"
else
    bad "ppl: $(cat "$tmp/ppl.err")"
fi

# 5. --choices: lm-eval's split (context + choice encoded whole, cut where the context's ids end,
#    BOS first), the sums over the choice's tokens, acc / acc_norm (characters) / acc_bytes
cat >"$tmp/mc.jsonl" <<'EOF'
{"context": "In the", "choices": [" beginning", " end \u00e9\u00e9", " earth"], "gold": 1}
{"context": "In the ", "choices": ["beginning"], "gold": 0, "other": [1, 2]}

{"context": "", "choices": ["In the"]}
EOF
# mc_ids CONTEXT CONTEXT+CHOICE: BOS, the context's ids, the whole's ids past their count
mc_ids() {
    c=$("$tokenize" $tok "$1") w=$("$tokenize" $tok "$2")
    nc=$(echo "$c" | tr ',' '\n' | grep -c .)
    cont=$(echo "$w" | cut -d, -f$((nc + 1))-)
    echo "$bos${c:+,$c},$cont $(echo "$cont" | tr ',' '\n' | wc -l)"
}
mc_want() { # mc_want CONTEXT CONTEXT+CHOICE: the sum of the choice's log-probabilities
    set -- $(mc_ids "$1" "$2")
    "$bin" $tok --ids "$1" --json 2>/dev/null | grep -o '"logprob": [^,}]*' | sed 's/"logprob": //' |
        tail -n "$2" | awk '{ s += $1 } END { printf "%.12g", s }'
}
if "$bin" $tok --choices "$tmp/mc.jsonl" >"$tmp/mc.out" 2>"$tmp/mc.err"; then
    [ "$(wc -l <"$tmp/mc.out")" -eq 4 ] && ok || bad "choices: want 3 lines and a summary: $(cat "$tmp/mc.out")"
    sed -n 1p "$tmp/mc.out" | grep -o '"logprob": [^,}]*' | sed 's/"logprob": //' >"$tmp/mc.got"
    { mc_want "In the" "In the beginning"; echo; mc_want "In the" "In the end éé"; echo; mc_want "In the" "In the earth"; echo; } >"$tmp/mc.want"
    same_lists "$tmp/mc.got" "$tmp/mc.want" 1e-6 && ok || bad "choices: line 1's sums: $(paste -sd' ' "$tmp/mc.got") want $(paste -sd' ' "$tmp/mc.want")"
    # the predictions: sums, sums / characters, sums / bytes (" end éé": 7 characters, 9 bytes)
    preds=$(paste "$tmp/mc.want" - <<'EOF' | awk '{ s[NR - 1] = $1; c[NR - 1] = $2; b[NR - 1] = $3 }
        END { p = q = r = 0; for (k = 1; k in s; k++) { if (s[k] > s[p]) p = k; if (s[k] / c[k] > s[q] / c[q]) q = k; if (s[k] / b[k] > s[r] / b[r]) r = k }
              printf "%d %d %d", p, q, r }'
10 10
7 9
6 6
EOF
)
    set -- $preds
    line1=$(sed -n 1p "$tmp/mc.out")
    case $line1 in *"\"pred\": $1, \"pred_norm\": $2, \"pred_bytes\": $3, \"gold\": 1, \"acc\": $([ "$1" = 1 ] && echo 1 || echo 0),"*) ok ;;
        *) bad "choices: predictions $preds: $line1" ;; esac
    case $line1 in *'"n_tokens": '*', "chars": 7, "bytes": 9,'*) ok ;; *) bad "choices: lengths of a non-ASCII choice" ;; esac
    # trailing whitespace of the context joins the choice: line 2 is line 1's first choice
    near "$(sed -n 2p "$tmp/mc.out" | grep -o '"logprob": [^,}]*' | sed 's/"logprob": //')" "$(sed -n 1p "$tmp/mc.want")" 1e-9 && ok ||
        bad "choices: 'In the ' + 'beginning' is not 'In the' + ' beginning'"
    # an empty context is BOS alone; a blank line is skipped (the line numbers are the file's)
    near "$(sed -n 3p "$tmp/mc.out" | grep -o '"logprob": [^,}]*' | sed 's/"logprob": //')" "$(mc_want "" "In the")" 1e-6 &&
        sed -n 3p "$tmp/mc.out" | grep -q '"line": 4,' && ok || bad "choices: empty context"
    # the summary: the accuracies of the lines with gold
    acc=$(sed -n '1,3p' "$tmp/mc.out" | grep -o '"acc": [01]' | awk '{ s += $2; n++ } END { printf "%.10g", s / n }')
    tail -n 1 "$tmp/mc.out" | grep -q "\"summary\": {\"lines\": 3, \"with_gold\": 2, \"acc\": $acc," && ok ||
        bad "choices: summary $(tail -n 1 "$tmp/mc.out"), want acc $acc"
else
    bad "choices: $(cat "$tmp/mc.err")"
fi

# 5b. --batch: windows and choices scored B at a time give what one at a time gives (the batched
#     rows run other kernels: within 1e-6 relative); B past the count is fine
if "$bin" $tok --ppl "$tmp/text.txt" --ctx $C --json --batch 1 >"$tmp/b1.json" 2>/dev/null &&
    "$bin" $tok --ppl "$tmp/text.txt" --ctx $C --json --batch 3 >"$tmp/b3.json" 2>/dev/null &&
    "$bin" $tok --ppl "$tmp/text.txt" --ctx $C --json --batch 256 >"$tmp/b256.json" 2>/dev/null; then
    jarr running_ppl "$tmp/b1.json" >"$tmp/b1.r"
    jarr running_ppl "$tmp/b3.json" >"$tmp/b3.r"
    jarr running_ppl "$tmp/b256.json" >"$tmp/b256.r"
    same_lists "$tmp/b1.r" "$tmp/b3.r" 1e-6 && same_lists "$tmp/b1.r" "$tmp/b256.r" 1e-6 &&
        near "$(jget ppl "$tmp/b3.json")" "$(jget ppl "$tmp/b1.json")" 1e-6 && ok || bad "ppl --batch 3 differs from --batch 1"
else
    bad "ppl --batch"
fi
if "$bin" $tok --choices "$tmp/mc.jsonl" --batch 1 >"$tmp/mc1.out" 2>/dev/null &&
    "$bin" $tok --choices "$tmp/mc.jsonl" --batch 2 >"$tmp/mc2.out" 2>/dev/null; then
    grep -o '"logprob": [^,}]*' "$tmp/mc1.out" | sed 's/"logprob": //' >"$tmp/mc1.l"
    grep -o '"logprob": [^,}]*' "$tmp/mc2.out" | sed 's/"logprob": //' >"$tmp/mc2.l"
    same_lists "$tmp/mc1.l" "$tmp/mc2.l" 1e-6 && [ "$(grep -c . "$tmp/mc1.l")" -ge 5 ] &&
        [ "$(sed 's/"logprob": [^,}]*//g; s/"norm[a-z_]*": [^,}]*//g' "$tmp/mc1.out")" = "$(sed 's/"logprob": [^,}]*//g; s/"norm[a-z_]*": [^,}]*//g' "$tmp/mc2.out")" ] &&
        ok || bad "choices --batch 2 differs from --batch 1"
else
    bad "choices --batch"
fi
expect_error "--batch 0" $tok --ppl "$tmp/text.txt" --batch 0
expect_error "--batch 257" $tok --ppl "$tmp/text.txt" --batch 257

# 6. --save-logits / --kl: the file is what examples/logits writes for the same ids, within 1e-4
#    of the reference's logits; KL, top-1 agreement, logit RMS and both perplexities are computed
#    here from the two saved files (f32 and Q8 weights) and from the reference's f32 and Q8 logits
name=conv_dint_grouped_gqa_f32
ids=$(awk -v n=$name '$1 == n {print $2}' $fx/converted.txt)
n=$(echo "$ids" | tr ',' '\n' | wc -l)
V=$(vocab $name "$ids")
m=$fx/$name.safetensors
# kl_of A SKIP_A B SKIP_B: "mean max top1 rms ppl_a ppl_b" over rows 0 .. n - 2 of two logits streams
kl_of() {
    floats "$1" "$2" >"$tmp/ka"
    floats "$3" "$4" >"$tmp/kb"
    paste "$tmp/ka" "$tmp/kb" | awk -v V="$V" -v ids="$ids" '{ a[NR - 1] = $1; b[NR - 1] = $2 }
        END { n = split(ids, t, ",")
              for (i = 0; i < n - 1; i++) {
                  ma = mb = -1e300; ia = ib = 0
                  for (j = 0; j < V; j++) { if (a[i * V + j] > ma) { ma = a[i * V + j]; ia = j } if (b[i * V + j] > mb) { mb = b[i * V + j]; ib = j } }
                  sa = sb = 0; for (j = 0; j < V; j++) { sa += exp(a[i * V + j] - ma); sb += exp(b[i * V + j] - mb) }
                  la = ma + log(sa); lb = mb + log(sb); kl = 0
                  for (j = 0; j < V; j++) { p = a[i * V + j] - la; q = b[i * V + j] - lb; kl += exp(p) * (p - q); d = b[i * V + j] - a[i * V + j]; sq += d * d }
                  sum += kl; if (i == 0 || kl > mx) mx = kl; same += ia == ib
                  na -= a[i * V + t[i + 2]] - la; nb -= b[i * V + t[i + 2]] - lb }
              c = n - 1; printf "%.12g %.12g %.12g %.12g %.12g %.12g\n", sum / c, mx, same / c, sqrt(sq / (c * V)), exp(na / c), exp(nb / c) }'
}
kl_check() { # kl_check WHAT JSON "mean max top1 rms ppl_saved ppl" TOL
    set -- "$1" "$2" $3 "$4"
    rnear "$(jget kl_mean "$2")" "$3" "$9" && rnear "$(jget kl_max "$2")" "$4" "$9" && near "$(jget top1_agreement "$2")" "$5" 1e-9 &&
        rnear "$(jget logit_rms_diff "$2")" "$6" "$9" && rnear "$(jget ppl_saved "$2")" "$7" "$9" && rnear "$(jget ppl "$2")" "$8" "$9" &&
        ok || bad "$1: $(cat "$2"), want kl $3 $4 top1 $5 rms $6 ppl $7 $8"
}
hdr=$((24 + 4 * n))
if "$bin" $m --ids "$ids" --precision exact --save-logits "$tmp/f32.bin" >/dev/null 2>"$tmp/err" &&
   "$bin" $m --ids "$ids" --precision exact --weights q8 --save-logits "$tmp/q8.bin" >/dev/null 2>>"$tmp/err" &&
   "$bin" $m --ids "$ids" --precision exact --weights q8 --kl "$tmp/f32.bin" --json >"$tmp/kl.json" 2>>"$tmp/err"; then
    # the layout: magic, version 1, n_tokens, n_vocab, window, the ids, the logits
    [ "$(head -c 8 "$tmp/f32.bin")" = DINTLOGT ] &&
        [ "$(od -An -v -tu4 -j 8 -N 16 "$tmp/f32.bin" | tr -s ' ' | sed 's/^ //;s/ $//')" = "1 $n $V $n" ] &&
        [ "$(od -An -v -td4 -w4 -j 24 -N $((4 * n)) "$tmp/f32.bin" | tr -d ' ' | paste -sd, -)" = "$ids" ] &&
        [ "$(wc -c <"$tmp/f32.bin")" -eq $((hdr + 4 * n * V)) ] && ok || bad "save-logits: the file's layout"
    # examples/logits, one prefill of the same ids: the same bytes
    if [ -x "$logits" ]; then
        "$logits" $m "$ids" "$tmp/l.bin" --precision exact && tail -c +$((hdr + 1)) "$tmp/f32.bin" | cmp -s - "$tmp/l.bin" && ok ||
            bad "save-logits: not examples/logits' rows"
    fi
    floats "$tmp/f32.bin" $hdr >"$tmp/saved"
    floats $fx/$name.logits >"$tmp/ref"
    same_lists "$tmp/saved" "$tmp/ref" 1e-4 && ok || bad "save-logits: the logits are not the reference's"
    kl_check "kl: f32 vs q8 against the two saved files" "$tmp/kl.json" "$(kl_of "$tmp/f32.bin" $hdr "$tmp/q8.bin" $hdr)" 1e-5
    kl_check "kl: f32 vs q8 against the reference's logits" "$tmp/kl.json" "$(kl_of $fx/$name.logits 0 $fx/$name.q8.logits 0)" 1e-4
    [ "$(jget top1_same "$tmp/kl.json")" -ge 1 ] && awk -v k="$(jget kl_mean "$tmp/kl.json")" 'BEGIN { exit !(k > 0) }' && ok ||
        bad "kl: q8 against f32 should differ a little"
    # a run against itself: nothing differs
    "$bin" $m --ids "$ids" --precision exact --kl "$tmp/f32.bin" --json >"$tmp/self.json" 2>/dev/null &&
        [ "$(jget kl_max "$tmp/self.json")" = 0 ] && [ "$(jget top1_agreement "$tmp/self.json")" = 1 ] &&
        [ "$(jget logit_rms_diff "$tmp/self.json")" = 0 ] && ok || bad "kl: a run against itself: $(cat "$tmp/self.json")"
else
    bad "save-logits / kl: $(cat "$tmp/err")"
fi
# the text mode's numbers do not depend on --save-logits (prefill rows vs dintattn_logprobs)
"$bin" $tok -f "$tmp/text.txt" --ctx 10 --json >"$tmp/s1.json" 2>/dev/null &&
    "$bin" $tok -f "$tmp/text.txt" --ctx 10 --json --save-logits "$tmp/tok.bin" >"$tmp/s2.json" 2>/dev/null &&
    cmp -s "$tmp/s1.json" "$tmp/s2.json" && ok || bad "--save-logits changed the scores"
# windows of a long text: the saved rows, and a --kl of the same run
[ "$(wc -c <"$tmp/tok.bin")" -eq $((24 + 4 * N + 4 * N * 310)) ] &&
    "$bin" $tok -f "$tmp/text.txt" --ctx 10 --kl "$tmp/tok.bin" --json >"$tmp/s3.json" 2>/dev/null &&
    [ "$(jget kl_max "$tmp/s3.json")" = 0 ] && ok || bad "kl over windows"

# 7. bad input: one line on stderr, a non-zero exit, no crash
"$bin" $tok --ids 1,2 --save-logits "$tmp/two.bin" >/dev/null 2>&1 || bad "save two ids"
printf 'NOTLOGITS-------------------------------' >"$tmp/notlogits.bin"
head -c 100 "$tmp/f32.bin" >"$tmp/trunc.bin"
# said MESSAGE: the one line the last expect_error's command wrote on stderr is exactly MESSAGE
said() { [ "$(cat "$tmp/err")" = "$1" ] && ok || bad "message: got '$(cat "$tmp/err")', want '$1'"; }
printf '{"context": "a", "choices": [" b"]}\n{"context": "a", "choices": [" b"\n' >"$tmp/badjson.jsonl"
printf '{"context": "a", "choices": []}\n' >"$tmp/nochoice.jsonl"
printf '{"context": "a", "choices": " b"}\n' >"$tmp/strchoice.jsonl"
printf '{"context": 3, "choices": [" b"]}\n' >"$tmp/numctx.jsonl"
printf '{"context": "a", "choices": [" b"], "gold": 1}\n' >"$tmp/badgold.jsonl"
printf '{"context": "a", "choices": [" b"], "gold": 0.5}\n' >"$tmp/fracgold.jsonl"
printf '{"context": "a", "choices": [""]}\n' >"$tmp/emptychoice.jsonl"
printf '[1, 2]\n' >"$tmp/array.jsonl"
printf '\n  \n' >"$tmp/blank.jsonl"
: >"$tmp/empty.txt"
printf 'In the beginning God' >"$tmp/long.txt"
expect_error "no arguments"
expect_error "no text" $tok
expect_error "two texts" $tok -p a -f "$tmp/text.txt"
expect_error "missing model" "$tmp/none.safetensors" -p hello
expect_error "not a model" $fx/manifest.txt -p hello
expect_error "missing text file" $tok -f "$tmp/none.txt"
expect_error "empty text file" $tok -f "$tmp/empty.txt"
expect_error "empty -p" $tok -p ""
expect_error "text without a tokenizer" $fx/dint_softmax_f32.safetensors -p hello
expect_error "one id" $fx/dint_softmax_f32.safetensors --ids 3
expect_error "id out of range" $fx/dint_softmax_f32.safetensors --ids 1,99999
expect_error "negative id" $fx/dint_softmax_f32.safetensors --ids 1,-1
expect_error "malformed ids" $fx/dint_softmax_f32.safetensors --ids 1,,2
expect_error "--ctx over the model's" $tok -p hello --ctx 17
expect_error "--ctx 0" $tok -p hello --ctx 0
expect_error "--ctx 1 on two tokens" $tok -p "In the" --ctx 1
expect_error "bad --threads" $tok -p hello --threads x
expect_error "bad --weights" $tok -p hello --weights q3
expect_error "bad --precision" $tok -p hello --precision fast1
expect_error "bad --kernels" $tok -p hello --kernels sse2
expect_error "--kernels without a value" $tok -p hello --kernels
expect_error "unknown flag" $tok -p hello --frobnicate
expect_error "two modes" $tok -f "$tmp/text.txt" --save-logits "$tmp/x.bin" --kl "$tmp/f32.bin"
expect_error "--ppl with -p" $tok --ppl "$tmp/text.txt" -p hello
expect_error "--ppl: missing file" $tok --ppl "$tmp/none.txt"
expect_error "--ppl: empty file" $tok --ppl "$tmp/empty.txt"
expect_error "--ppl: fewer than 2 x ctx tokens" $tok --ppl "$tmp/long.txt" --ctx 16
expect_error "--ppl: ctx 2" $tok --ppl "$tmp/long.txt" --ctx 2
expect_error "--ppl: no tokenizer" $fx/dint_softmax_f32.safetensors --ppl "$tmp/long.txt"
expect_error "--choices: missing file" $tok --choices "$tmp/none.jsonl"
expect_error "--choices: bad JSON" $tok --choices "$tmp/badjson.jsonl"
said "score: $tmp/badjson.jsonl: line 2 is not valid JSON: expected ',' or ']' at byte 33"
expect_error "--choices: no choices" $tok --choices "$tmp/nochoice.jsonl"
said "score: $tmp/nochoice.jsonl: line 1: \"choices\" must be a non-empty array of strings"
expect_error "--choices: choices a string" $tok --choices "$tmp/strchoice.jsonl"
said "score: $tmp/strchoice.jsonl: line 1: \"choices\" must be a non-empty array of strings"
expect_error "--choices: context a number" $tok --choices "$tmp/numctx.jsonl"
said "score: $tmp/numctx.jsonl: line 1: \"context\" must be a string"
expect_error "--choices: gold out of range" $tok --choices "$tmp/badgold.jsonl"
said "score: $tmp/badgold.jsonl: line 1: \"gold\" must be an index into \"choices\" (0 to 0)"
expect_error "--choices: gold not an integer" $tok --choices "$tmp/fracgold.jsonl"
said "score: $tmp/fracgold.jsonl: line 1: \"gold\" must be an index into \"choices\" (0 to 0)"
expect_error "--choices: empty choice" $tok --choices "$tmp/emptychoice.jsonl"
said "score: $tmp/emptychoice.jsonl: line 1: choice 0 must be a non-empty string"
expect_error "--choices: not an object" $tok --choices "$tmp/array.jsonl"
said "score: $tmp/array.jsonl: line 1: not a JSON object"
expect_error "--choices: only blank lines" $tok --choices "$tmp/blank.jsonl"
printf '{"context": "%s", "choices": [" x"]}\n' "$text" >"$tmp/toolong.jsonl"
expect_error "--choices: longer than the context" $tok --choices "$tmp/toolong.jsonl"
expect_error "--save-logits: unwritable" $m --ids "$ids" --save-logits "$tmp/no/such/dir/x.bin"
expect_error "--kl: missing file" $m --ids "$ids" --kl "$tmp/none.bin"
expect_error "--kl: not a logits file" $m --ids "$ids" --kl "$tmp/notlogits.bin"
expect_error "--kl: truncated" $m --ids "$ids" --kl "$tmp/trunc.bin"
expect_error "--kl: other ids" $m --ids "$(echo "$ids" | sed 's/^0,/1,/')" --kl "$tmp/f32.bin"
grep -q "token 0 is id 0 there, 1 in this run" "$tmp/err" && ok || bad "--kl: other ids: unclear: $(cat "$tmp/err")"
expect_error "--kl: fewer ids" $m --ids 1,2 --kl "$tmp/f32.bin"
expect_error "--kl: another vocabulary" $fx/dint_softmax_f32.safetensors --ids 1,2 --kl "$tmp/two.bin"
grep -q "vocabulary" "$tmp/err" && ok || bad "--kl: another vocabulary: unclear: $(cat "$tmp/err")"
expect_error "--kl: other windows" $tok -f "$tmp/text.txt" --ctx 12 --kl "$tmp/tok.bin"
[ ! -e "$tmp/no/such/dir/x.bin" ] && ok || bad "a failed --save-logits left a file"
"$bin" --help >"$tmp/help" 2>&1 && grep -q -- "--ppl" "$tmp/help" && grep -q -- "--choices" "$tmp/help" && ok || bad "--help"

grep -q -- "--threads T .*(1 to 256, default 2" "$tmp/help" && ok || bad "--help: the --threads range"

echo "score: $pass passed, $fail failed"
[ "$fail" -eq 0 ]
