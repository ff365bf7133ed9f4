#!/bin/sh
# examples/activations from the command line. On a random model of each family: the JSON's counts
# are the definitions' (H N (N + 1) / 2 logits of A1 per layer, N D FFN inputs and hidden states;
# no A2 for standard attention), each top-k list is descending with top1 first and topk last, the
# ratio is top1 / median, the median is in (0, top1] and the kurtosis at least 1; the table
# says the JSON's numbers; --top-k 1 makes topk top1. Two models side by side: the SVG is
# well-formed XML, has both models' marks, and every mark's data-value is the JSON's number. A text
# through the shipped model's tokenizer (-p, -f). Every bad input is a non-zero exit with one line
# on stderr, and leaves no SVG. Last, tests/activations/activations_check.py: every number against
# the float64 reference (tools/reference.py), where numpy is.
# Usage: sh tests/activations.sh [PATH/TO/activations]
bin=${1:-examples/activations}
fx=tests/fixtures
. tests/cli_lib.sh

ids_of() { awk -v n="$1" '$1 == n {print $2}' $fx/manifest.txt; }

# check_json FILE N: the invariants of every layer's line of a one-model --json run over N tokens
check_json() {
    awk -v n="$2" '
        function num(obj, name,   s) { if (!match(obj, "\"" name "\": [^],}]*")) return ""; s = substr(obj, RSTART, RLENGTH); sub(/^[^:]*: /, "", s); return s }
        function kind(name,   s) { if (!match(line, "\"" name "\": (null|\\{[^}]*\\})")) return ""; s = substr(line, RSTART, RLENGTH); sub(/^[^:]*: /, "", s); return s }
        function fail(what) { print "FAIL: " FILENAME " layer " layer " " what; bad = 1 }
        /"n_heads"/ { H = num($0, "n_heads"); D = num($0, "dim"); std = $0 ~ /"attention": "standard"/ }
        /^ \{"layer"/ { line = $0; layer = num(line, "layer"); layers++
            want["logits1"] = H * n * (n + 1) / 2; want["ffn_in"] = n * D; want["hidden"] = n * D
            for (k in want) if (num(kind(k), "count") != want[k]) fail(k " count " num(kind(k), "count") ", want " want[k])
            if ((kind("logits2") == "null") != std) fail("logits2 is " (std ? "not " : "") "null")
            split("logits1 logits2 ffn_in hidden", kinds, " ")
            for (i = 1; i <= 4; i++) {
                o = kind(kinds[i]); if (o == "null") continue
                s = o; sub(/.*"top": \[/, "", s); sub(/\].*/, "", s); k = split(s, t, ", ")
                c = num(o, "count"); top1 = num(o, "top1"); topk = num(o, "topk"); med = num(o, "median")
                if (k != (c + 0 < topk_n + 0 ? c + 0 : topk_n + 0)) fail(kinds[i] ": " k " top values")
                for (j = 2; j <= k; j++) if (t[j] + 0 > t[j - 1] + 0) fail(kinds[i] ": top not descending")
                if (t[1] + 0 != top1 + 0 && (t[1] - top1) ^ 2 > 1e-12 * top1 ^ 2) fail(kinds[i] ": top[0] " t[1] " != top1 " top1)
                if ((t[k] - topk) ^ 2 > 1e-12 * topk ^ 2) fail(kinds[i] ": top[k-1] " t[k] " != topk " topk)
                if (med + 0 > top1 + 0 || med + 0 <= 0) fail(kinds[i] ": median " med " outside (0, top1]")
                r = num(o, "ratio"); if ((r - top1 / med) ^ 2 > 1e-16 * r ^ 2) fail(kinds[i] ": ratio " r " != " top1 / med)
                if (num(o, "kurtosis") + 0 < 1) fail(kinds[i] ": kurtosis below 1")
            }
        }
        END { if (!layers) { print "FAIL: " FILENAME ": no layers"; bad = 1 } exit bad }' topk_n="$3" "$1"
}

# 1. each family: the JSON's invariants, and the table's numbers are the JSON's
for name in standard_gqa_halves_f32 diff_interleaved_f32 dint_softmax_f32 shared_diff_r2_f32 grouped_diff_g2_f32 \
            v11_dint_token_shared_k_bf16; do
    ids=$(ids_of $name)
    n=$(echo "$ids" | tr ',' '\n' | wc -l)
    if "$bin" $fx/$name.safetensors --ids "$ids" --json --top-k 6 >"$tmp/$name.json" 2>"$tmp/err" &&
       "$bin" $fx/$name.safetensors --ids "$ids" --top-k 6 >"$tmp/$name.txt" 2>>"$tmp/err"; then
        check_json "$tmp/$name.json" "$n" 6 && ok || bad "$name: the JSON's invariants"
        # the table's top1 and kurtosis, to its 5 and 4 digits, per layer and kind
        awk 'FNR == NR { if ($0 ~ /^ \{"layer"/) { l = $0; sub(/^ \{"layer": /, "", l); sub(/,.*/, "", l)
                           n = split("logits1 logits2 ffn_in hidden", ks, " ")
                           for (i = 1; i <= n; i++) if (match($0, "\"" ks[i] "\": \\{[^}]*\\}")) { o = substr($0, RSTART, RLENGTH)
                               match(o, /"top1": [^,]*/); t1[l " " ks[i]] = substr(o, RSTART + 8, RLENGTH - 8)
                               match(o, /"kurtosis": [^,]*/); ku[l " " ks[i]] = substr(o, RSTART + 12, RLENGTH - 12) } } next }
             $1 ~ /^[0-9]+$/ && NF == 8 { rows++; key = $1 " " $2
                 if (!(key in t1) || sprintf("%.5g", t1[key]) != $4 || sprintf("%.4g", ku[key]) != $8) { print "FAIL: table " key ": " $4 ", " $8 " against " t1[key] ", " ku[key]; bad = 1 } }
             END { if (!rows) { print "FAIL: no table rows"; bad = 1 } exit bad }' "$tmp/$name.json" "$tmp/$name.txt" && ok || bad "$name: the table against the JSON"
    else
        bad "$name: $(cat "$tmp/err")"
    fi
done
m=$fx/dint_softmax_f32.safetensors
ids=$(ids_of dint_softmax_f32)
"$bin" $m --ids "$ids" --json --top-k 1 >"$tmp/k1.json" 2>"$tmp/err" || bad "--top-k 1: $(cat "$tmp/err")"
grep '^ {"layer"' "$tmp/k1.json" | grep -o '"top1": [^,]*, "topk": [^,]*' | awk '{ if ($2 + 0 != $4 + 0) bad = 1 } END { exit bad }' &&
    ok || bad "--top-k 1: topk is not top1"
# the checker finds a wrong number
sed '0,/"ratio": [0-9]/s/"ratio": \([0-9]\)/"ratio": 9\1/' "$tmp/dint_softmax_f32.json" >"$tmp/wrong.json"
check_json "$tmp/wrong.json" "$(echo "$ids" | tr ',' '\n' | wc -l)" 6 >/dev/null && bad "check_json misses a wrong ratio" || ok

# 2. two models side by side: the JSON has both, in order; the SVG's marks carry the JSON's numbers
s=$fx/standard_gqa_halves_f32.safetensors
sids=$(ids_of standard_gqa_halves_f32)
if "$bin" $m $s --ids "$sids" --json --svg "$tmp/two.svg" >"$tmp/two.json" 2>"$tmp/err"; then
    [ "$(grep -c '"model": ' "$tmp/two.json")" -eq 2 ] && ok || bad "two models: not two in the JSON"
    if command -v xmllint >/dev/null 2>&1; then xmllint --noout "$tmp/two.svg" && ok || bad "two models: the SVG is not well-formed"; fi
    grep -q 'data-model="1" data-kind="hidden"' "$tmp/two.svg" && ! grep -q 'data-model="1" data-kind="logits2"' "$tmp/two.svg" &&
        grep -q 'data-model="0" data-kind="logits2"' "$tmp/two.svg" && ok || bad "two models: the SVG's groups"
    grep -q '|x| (log scale)' "$tmp/two.svg" && grep -q 'data-decade=' "$tmp/two.svg" && grep -q 'data-legend="1"' "$tmp/two.svg" &&
        ok || bad "two models: the SVG lacks its axis title, scale or legend"
    # every mark: (model, kind, layer, stat) -> its data-value, against the JSON's number
    awk 'FNR == NR { if ($0 ~ /"model": /) mi++
                     if ($0 ~ /^ \{"layer"/) { l = $0; sub(/^ \{"layer": /, "", l); sub(/,.*/, "", l)
                         n = split("logits1 logits2 ffn_in hidden", ks, " ")
                         for (i = 1; i <= n; i++) if (match($0, "\"" ks[i] "\": \\{[^}]*\\}")) { o = substr($0, RSTART, RLENGTH)
                             split("top1 topk median kurtosis", ss, " ")
                             for (j = 1; j <= 4; j++) { match(o, "\"" ss[j] "\": [^,]*"); v = substr(o, RSTART, RLENGTH); sub(/^[^:]*: /, "", v)
                                 want[(mi - 1) " " ks[i] " " l " " ss[j]] = v } } } next }
         /<g data-model=/ { match($0, /data-model="[0-9]+"/); gm = substr($0, RSTART + 12, RLENGTH - 13)
                            match($0, /data-kind="[a-z0-9_]+"/); gk = substr($0, RSTART + 11, RLENGTH - 12) }
         /data-stat=/ { match($0, /data-layer="[0-9]+"/); l = substr($0, RSTART + 12, RLENGTH - 13)
                        match($0, /data-stat="[a-z0-9]+"/); st = substr($0, RSTART + 11, RLENGTH - 12)
                        match($0, /data-value="[^"]*"/); v = substr($0, RSTART + 12, RLENGTH - 13)
                        key = gm " " gk " " l " " st; marks++
                        d = v - want[key]; if (!(key in want) || d * d > 1e-14 * v * v) { print "FAIL: mark " key " = " v ", JSON " want[key]; bad = 1 } }
         END { if (marks < 2 * 3 * 4 * 2) { print "FAIL: " marks " marks"; bad = 1 } exit bad }' "$tmp/two.json" "$tmp/two.svg" &&
        ok || bad "two models: the SVG's numbers against the JSON"
else
    bad "two models: $(cat "$tmp/err")"
fi

# 3. a text through the shipped model's tokenizer, from -p and from a file (the same tokens, numbers)
kjv=models/dint-kjv.safetensors
if [ -f $kjv ]; then
    printf 'In the beginning God created the heaven and the earth.' >"$tmp/text.txt"
    "$bin" $kjv -p "In the beginning God created the heaven and the earth." --json >"$tmp/p.json" 2>"$tmp/err" || bad "-p: $(cat "$tmp/err")"
    "$bin" $kjv -f "$tmp/text.txt" --json >"$tmp/f.json" 2>"$tmp/err" || bad "-f: $(cat "$tmp/err")"
    cmp -s "$tmp/p.json" "$tmp/f.json" && ok || bad "-p and -f of one text differ"
    n=$(sed -n 's/.*"n_tokens": \([0-9]*\).*/\1/p' "$tmp/p.json")
    check_json "$tmp/p.json" "$n" 10 && ok || bad "-p: the JSON's invariants"
fi

# 4. refusals
: >"$tmp/empty.txt"
expect_error "no MODEL" --ids 1,2
expect_error "no text" $m
expect_error "two texts" $m --ids 1,2 -p hello
expect_error "missing MODEL file" "$tmp/none.safetensors" --ids 1,2
expect_error "text without a tokenizer" $m -p hello
expect_error "empty -p" $m -p ""
expect_error "empty file" $m -f "$tmp/empty.txt"
expect_error "missing text file" $m -f "$tmp/none.txt"
expect_error "id out of range" $m --ids 1,99999
expect_error "malformed ids" $m --ids 1,,2
expect_error "--top-k 0" $m --ids "$ids" --top-k 0
expect_error "--top-k past 65536" $m --ids "$ids" --top-k 65537
expect_error "--top-k x" $m --ids "$ids" --top-k x
expect_error "unknown option" $m --ids "$ids" --layers 0
expect_error "nine models" $m $m $m $m $m $m $m $m $m --ids "$ids"
expect_error "bad --threads" $m --ids "$ids" --threads 0
expect_error "bad --weights" $m --ids "$ids" --weights q3
expect_error "--svg unwritable" $m --ids "$ids" --svg "$tmp/no/such/dir/x.svg"
expect_error "second model fails" $m "$tmp/none.safetensors" --ids "$ids" --svg "$tmp/x.svg"
[ ! -e "$tmp/x.svg" ] && ok || bad "a refused run left an SVG"
"$bin" --help >"$tmp/help" 2>&1 && grep -q -- "--top-k K" "$tmp/help" && grep -q "kurtosis" "$tmp/help" && ok || bad "--help"

# 5. the float64 reference (it says "skipped" without numpy)
if [ -x /usr/bin/python3 ]; then
    /usr/bin/python3 tests/activations/activations_check.py "$bin" && ok || bad "activations_check.py"
fi

echo "activations: $pass passed, $fail failed"
[ "$fail" -eq 0 ]
