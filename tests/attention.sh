#!/bin/sh
# examples/attention from the command line. Its metrics are recomputed here in awk from the W rows
# its JSON prints (sum, span and rest mass, negative sum and share, entropy of |w|); rows are checked
# to sum to 1 on DINT and standard models; averages over query positions against single-position
# runs; --span-text's span against the tokens' own texts; the SVG's numbers (data-value of every
# heatmap cell and bar) against the JSON's, and the SVG is checked to be well-formed enough for a
# browser (escaped text, valid UTF-8). Every bad input is a non-zero exit with one line on stderr.
# (tests/attention/attention_check.py checks the numbers against tools/reference.py, in CI.)
# Usage: sh tests/attention.sh [PATH/TO/attention]
bin=${1:-examples/attention}
fx=tests/fixtures
. tests/cli_lib.sh

ids_of() { awk -v n="$1" '$1 == n {print $2}' $fx/manifest.txt; }
# head_line L H FILE: the JSON line of layer L, head H
head_line() { grep "^{\"layer\": $1, \"head\": $2," "$3"; }
# field NAME LINE: a scalar of a head's line
field() { echo "$2" | sed -n "s/.*\"$1\": \([^],}[]*\).*/\1/p"; }
# row NAME LINE: a row's numbers (W, A1, A2, I), one a line
row() { echo "$2" | sed -n "s/.*\"$1\": \[\([^]]*\)\].*/\1/p" | tr ',' '\n' | tr -d ' '; }
near() { awk -v a="$1" -v b="$2" -v t="$3" 'BEGIN { d = a - b; if (d < 0) d = -d; exit !(a != "" && b != "" && d <= t) }'; }

# check_heads FILE A B UNIT N: every head's line of a --json run: its metrics are those of its W row
#    (span [A, B)), recomputed here, span + rest = sum, and with UNIT=1 the row sums to 1 within 1e-5;
#    N keys in each row. Prints what differs; fails if anything does.
check_heads() {
    awk -v a="$2" -v b="$3" -v unit="$4" -v n="$5" '
        function num(name,   s) { if (!match(line, "\"" name "\": [^],}]*")) return ""; s = substr(line, RSTART, RLENGTH); sub(/^[^:]*: /, "", s); return s }
        function arr(name, out,   s) { if (!match(line, "\"" name "\": \\[[^]]*\\]")) return -1; s = substr(line, RSTART, RLENGTH)
                                       sub(/^[^[]*\[/, "", s); sub(/\]$/, "", s); return split(s, out, ", ") }
        function off(x, y, t) { d = x - y; if (d < 0) d = -d; return x == "" || d > t }
        /^\{"layer"/ { line = $0; heads++
            k = arr("W", w)
            if (k != n) { print "FAIL: " FILENAME ": " k " keys in a row, want " n; bad = 1; next }
            s = sp = r = ns = nn = as = e = 0
            for (j = 1; j <= k; j++) { x = w[j] + 0; s += x; as += x < 0 ? -x : x; if (x < 0) { ns += x; nn++ }
                                       if (j - 1 >= a && j - 1 < b) sp += x; else r += x }
            for (j = 1; j <= k; j++) { p = (w[j] < 0 ? -w[j] : w[j]) / as; if (p > 0) e -= p * log(p) }
            if (off(num("sum"), s, 1e-6) || off(num("span_mass"), sp, 1e-6) || off(num("rest_mass"), r, 1e-6) ||
                off(num("neg_sum"), ns, 1e-6) || off(num("neg_share"), nn / k, 1e-9) || off(num("entropy"), e, 1e-6) ||
                off(num("span_mass") + num("rest_mass"), num("sum"), 1e-7)) {
                print "FAIL: " FILENAME ": " substr(line, 1, 40) " metrics are not those of its row: " s, sp, r, ns, nn / k, e; bad = 1 }
            if (unit && (off(s, 1, 1e-5) || off(num("sum"), 1, 1e-5))) { print "FAIL: " FILENAME ": " substr(line, 1, 40) " the row sums to " s; bad = 1 }
        }
        END { if (!heads) { print "FAIL: " FILENAME ": no heads"; bad = 1 } exit bad }' "$1"
}

# 1. a DINT, a DIFF, a grouped and a standard fixture: each head's metrics are those of its W row
#    (the last token's), recomputed here; DINT and standard rows sum to 1
for name in dint_softmax_f32 dint_grouped_mean_f32 diff_interleaved_f32 grouped_diff_g2_f32 standard_gqa_halves_f32; do
    ids=$(ids_of $name)
    if "$bin" $fx/$name.safetensors --ids "$ids" --span 2:5 --span 4:7 --json --precision exact >"$tmp/$name.json" 2>"$tmp/err"; then
        L=$(sed -n 's/.*"n_layers": \([0-9]*\).*/\1/p' "$tmp/$name.json" | head -n 1)
        H=$(sed -n 's/.*"n_heads": \([0-9]*\).*/\1/p' "$tmp/$name.json" | head -n 1)
        [ "$(grep -c '^{"layer"' "$tmp/$name.json")" -eq $((L * H)) ] && ok || bad "$name: not every layer and head"
        case $name in dint*|standard*) unit=1 ;; *) unit=0 ;; esac
        check_heads "$tmp/$name.json" 2 7 $unit "$(echo "$ids" | tr ',' '\n' | wc -l)" && ok || bad "$name: the metrics"
        case $name in
            standard*) grep '^{"layer"' "$tmp/$name.json" | grep -v '"neg_sum": 0, .*"A2": null, "I": null}' | grep -q . && bad "$name: negative weights or A2" || ok ;;
            dint*) grep '^{"layer"' "$tmp/$name.json" | grep -q '"I": null' && bad "$name: no I row" || ok ;;
            *) grep '^{"layer"' "$tmp/$name.json" | grep -q '"A2": null\|"I": \[' && bad "$name: no A2 row, or an I row" || ok ;;
        esac
    else
        bad "$name: $(cat "$tmp/err")"
    fi
done
# the checker itself finds a wrong number
sed '0,/"entropy": [0-9]/s/"entropy": \([0-9]\)/"entropy": 9\1/' "$tmp/dint_softmax_f32.json" >"$tmp/wrong.json"
check_heads "$tmp/wrong.json" 2 7 1 19 >/dev/null && bad "check_heads misses a wrong entropy" || ok

# 2. --pos A:B averages the rows of positions A..B-1: the mean of single-position runs (each run
#    prefills up to its last position, in other blocks: within 1e-6)
name=dint_softmax_f32
ids=$(ids_of $name)
m=$fx/$name.safetensors
"$bin" $m --ids "$ids" --pos 10:13 --span 3:6 --json --layers 1 --heads 1-2 >"$tmp/avg.json" 2>"$tmp/err" || bad "--pos 10:13: $(cat "$tmp/err")"
for p in 10 11 12; do "$bin" $m --ids "$ids" --pos $p --span 3:6 --json --layers 1 --heads 1-2 >"$tmp/p$p.json" 2>/dev/null || bad "--pos $p"; done
okavg=1
for h in 1 2; do
    for f in span_mass rest_mass sum neg_sum neg_share entropy lambda; do
        want=$(for p in 10 11 12; do field $f "$(head_line 1 $h "$tmp/p$p.json")"; done | awk '{ s += $1 } END { printf "%.12g", s / 3 }')
        near "$(field $f "$(head_line 1 $h "$tmp/avg.json")")" "$want" 1e-6 || okavg=0
    done
done
[ $okavg = 1 ] && [ "$(grep -c '^{"layer"' "$tmp/avg.json")" -eq 2 ] && grep -q '"query_positions": \[10, 13\]' "$tmp/avg.json" &&
    ok || bad "--pos 10:13 is not the mean of positions 10, 11 and 12"
# the rows printed are the last position's, as long as it
[ "$(row W "$(head_line 1 1 "$tmp/avg.json")" | wc -l)" -eq 13 ] &&
    [ "$(row W "$(head_line 1 1 "$tmp/avg.json")")" = "$(row W "$(head_line 1 1 "$tmp/p12.json")")" ] && ok || bad "--pos 10:13: the row is not position 12's"

# 3. the SVG's numbers are the JSON's: every heatmap cell (the metric, per layer and head) and every
#    bar (each head's W, A1, A2, I of the figure's layer)
# svg_cells FILE: "layer head value" per heatmap cell; svg_bars FILE TERM HEAD: the bars' values
svg_cells() { grep '<rect class="cell"' "$1" | sed 's/.*data-layer="\([0-9]*\)" data-head="\([0-9]*\)" data-value="\([^"]*\)".*/\1 \2 \3/'; }
svg_bars() {
    awk -v t="$2" -v h="$3" '/<g class="row"/ { on = index($0, "data-head=\"" h "\" data-term=\"" t "\"") > 0; next }
        /<\/g>/ { on = 0 } on && /data-value=/ { sub(/.*data-value="/, ""); sub(/".*/, ""); print }' "$1"
}
if "$bin" $m --ids "$ids" --span 2:5 --json --svg "$tmp/a.svg" --svg-metric entropy >"$tmp/a.json" 2>"$tmp/err"; then
    svg_cells "$tmp/a.svg" >"$tmp/cells"
    [ "$(wc -l <"$tmp/cells")" -eq 8 ] && ok || bad "svg: want 8 heatmap cells, got $(wc -l <"$tmp/cells")"
    okc=1
    while read -r l h v; do [ "$v" = "$(field entropy "$(head_line $l $h "$tmp/a.json")")" ] || okc=0; done <"$tmp/cells"
    [ $okc = 1 ] && grep -q 'data-metric="entropy"' "$tmp/a.svg" && ok || bad "svg: the heatmap's values are not the JSON's"
    okb=1
    for t in W A1 A2 I; do
        for h in 0 1 2 3; do
            svg_bars "$tmp/a.svg" $t $h >"$tmp/bars"
            row $t "$(head_line 1 $h "$tmp/a.json")" >"$tmp/jrow"
            [ -s "$tmp/bars" ] && cmp -s "$tmp/bars" "$tmp/jrow" || okb=0
        done
    done
    [ $okb = 1 ] && ok || bad "svg: the bars (layer 1) are not the JSON's rows"
    # the default metric: span mass with a span, negative share without; --svg-layer
    "$bin" $m --ids "$ids" --span 2:5 --svg "$tmp/b.svg" >/dev/null 2>&1 && grep -q '<g id="heatmap" data-metric="span_mass"' "$tmp/b.svg" &&
        "$bin" $m --ids "$ids" --svg "$tmp/c.svg" --svg-layer 0 --json >"$tmp/c.json" 2>/dev/null &&
        grep -q '<g id="heatmap" data-metric="neg_share"' "$tmp/c.svg" && grep -q '<g id="rows" data-layer="0"' "$tmp/c.svg" &&
        [ "$(svg_bars "$tmp/c.svg" W 2)" = "$(row W "$(head_line 0 2 "$tmp/c.json")")" ] && ok || bad "svg: default metric or --svg-layer"
    # the JSON is the same with and without --svg
    "$bin" $m --ids "$ids" --span 2:5 --json >"$tmp/a2.json" 2>/dev/null && cmp -s "$tmp/a.json" "$tmp/a2.json" && ok || bad "--svg changed the JSON"
else
    bad "svg: $(cat "$tmp/err")"
fi

# 4. text: --span-text finds the tokens whose bytes cover the string; the table shows the JSON's
#    numbers; token texts with XML's special characters, control bytes and invalid UTF-8 give a
#    well-formed SVG (escaped, valid UTF-8)
tok=$fx/tok_model.safetensors
text='the <b>&"x" é'
if "$bin" $tok -p "$text" --span-text '<b>' --json --svg "$tmp/t.svg" >"$tmp/t.json" 2>"$tmp/err"; then
    span=$(sed -n 's/.*"spans": \[\[\([0-9]*\), \([0-9]*\)\]\].*/\1 \2/p' "$tmp/t.json")
    set -- $span
    # the texts of tokens A..B-1 joined contain "<b>", and neither end token can be dropped
    texts=$(sed -n 's/^"tokens": \[\(.*\)\],$/\1/p' "$tmp/t.json" | grep -o '"text": "[^"]*"' | sed 's/"text": "//; s/"$//')
    joined=$(echo "$texts" | sed -n "$(($1 + 1)),$2p" | tr -d '\n')
    inner=$(echo "$texts" | sed -n "$(($1 + 2)),$(($2 - 1))p" | tr -d '\n')
    case $joined in *'<b>'*) case $inner in *'<b>'*) bad "--span-text: span too wide" ;; *) ok ;; esac ;;
        *) bad "--span-text: tokens $1..$2 ('$joined') do not cover <b>" ;; esac
    "$bin" $tok -p "$text" --span-text '<b>' >"$tmp/t.txt" 2>/dev/null
    line=$(head_line 0 1 "$tmp/t.json")
    grep -q "^    0    1 $(awk -v x="$(field lambda "$line")" 'BEGIN { printf "%10.6f", x }') .* $(awk -v x="$(field entropy "$line")" 'BEGIN { printf "%10.6f", x }')\$" "$tmp/t.txt" &&
        grep -q "^span 0: tokens \[$1, $2)" "$tmp/t.txt" && ok || bad "the table is not the JSON: $(cat "$tmp/t.txt")"
else
    bad "text: $(cat "$tmp/err")"
fi
# xml_ok FILE: valid UTF-8, no control bytes but newlines, no raw & or < in text or attributes
xml_ok() {
    iconv -f UTF-8 -t UTF-8 "$1" >/dev/null 2>&1 || return 1
    [ "$(tr -d '\n' <"$1" | tr -d '\040-\176\200-\377' | wc -c)" -eq 0 ] || return 1
    # outside tags, no < or > is left and every & starts an entity
    sed 's/<[^<>]*>/\n/g' "$1" | grep -q '[<>]' && return 1
    sed 's/&\(amp\|lt\|gt\|quot\|apos\|#[0-9]*\);//g' "$1" | grep -q '&' && return 1
    # inside tags, attribute values hold no < or raw quotes: every tag is name="..." pairs
    grep -o '<[^<>]*>' "$1" | grep -v '^<?xml' | grep -vq '^</\?[a-zA-Z][a-zA-Z0-9:]*\( [a-zA-Z][a-zA-Z0-9:-]*="[^"<]*"\)*/\?>$' && return 1
    return 0
}
xml_ok "$tmp/t.svg" && grep -q '>&lt;<' "$tmp/t.svg" && grep -q '>&amp;<' "$tmp/t.svg" && grep -q '&quot;' "$tmp/t.svg" && ok ||
    bad "svg: bad XML for token texts with <, & and quotes"
# control bytes and invalid UTF-8 (byte-level tokens) in the figure's labels
printf 'a\001b\tc\n\377\376 \357\277\276 end' >"$tmp/ctl.txt"
"$bin" $tok -f "$tmp/ctl.txt" --svg "$tmp/ctl.svg" >/dev/null 2>"$tmp/err" && xml_ok "$tmp/ctl.svg" && grep -q '\\x01' "$tmp/ctl.svg" &&
    grep -q '\\xFF' "$tmp/ctl.svg" && ok || bad "svg: control bytes or invalid UTF-8 made a bad document: $(cat "$tmp/err")"
xml_ok "$tmp/a.svg" && ok || bad "svg: the fixture's figure is not well-formed"
# the shipped model and a text of a few dozen tokens: every query position's figure parses
kjv=models/dint-kjv.safetensors
if [ -f $kjv ]; then
    "$bin" $kjv -p "In the beginning God created the heaven and the earth. And God said, Let there be light" --span-text "God created" \
        --pos 5:20 --svg "$tmp/kjv.svg" --json >"$tmp/kjv.json" 2>"$tmp/err" && xml_ok "$tmp/kjv.svg" &&
        [ "$(svg_cells "$tmp/kjv.svg" | wc -l)" -eq 24 ] && grep -q '"spans": \[\[4, 6\]\]' "$tmp/kjv.json" && ok ||
        bad "kjv: $(cat "$tmp/err")"
fi

# 5. bad input: one line on stderr, a non-zero exit, no crash
printf 'In the beginning God created the heaven and the earth.' >"$tmp/long.txt"
: >"$tmp/empty.txt"
expect_error "no arguments"
expect_error "no text" $m
expect_error "two texts" $tok -p a -f "$tmp/long.txt"
expect_error "missing model" "$tmp/none.safetensors" -p hello
expect_error "not a model" $fx/manifest.txt -p hello
expect_error "unknown flag" $tok -p hello --frobnicate
expect_error "missing text file" $tok -f "$tmp/none.txt"
expect_error "empty text file" $tok -f "$tmp/empty.txt"
expect_error "empty -p" $tok -p ""
expect_error "text without a tokenizer" $m -p hello
expect_error "text past the context" $tok -f "$tmp/long.txt"
grep -q "context of 16" "$tmp/err" && ok || bad "text past the context: unclear: $(cat "$tmp/err")"
expect_error "id out of range" $m --ids 1,99999
expect_error "malformed ids" $m --ids 1,,2
expect_error "bad span: one number" $m --ids "$ids" --span 3
expect_error "bad span: empty" $m --ids "$ids" --span 5:5
expect_error "bad span: reversed" $m --ids "$ids" --span 5:2
expect_error "bad span: negative" $m --ids "$ids" --span -1:2
expect_error "bad span: past the text" $m --ids "$ids" --span 3:99
expect_error "--span-text not in the text" $tok -p "In the beginning" --span-text "earth"
expect_error "--span-text without a tokenizer" $m --ids "$ids" --span-text "a"
expect_error "--span-text empty" $tok -p "In the" --span-text ""
expect_error "layer out of range" $m --ids "$ids" --layers 2
grep -q "2 layers" "$tmp/err" && ok || bad "layer out of range: unclear: $(cat "$tmp/err")"
expect_error "layer range out of range" $m --ids "$ids" --layers 0-5
expect_error "bad layers" $m --ids "$ids" --layers 1,x
expect_error "head out of range" $m --ids "$ids" --heads 4
expect_error "bad heads" $m --ids "$ids" --heads 2-1
expect_error "--pos past the text" $m --ids "$ids" --pos 19
expect_error "--pos range past the text" $m --ids "$ids" --pos 3:20
expect_error "bad --pos" $m --ids "$ids" --pos 3:x
expect_error "--svg-layer not shown" $m --ids "$ids" --svg "$tmp/x.svg" --layers 0 --svg-layer 1
expect_error "--svg-layer without --svg" $m --ids "$ids" --svg-layer 1
expect_error "bad --svg-metric" $m --ids "$ids" --svg "$tmp/x.svg" --svg-metric mass
expect_error "--svg unwritable" $m --ids "$ids" --svg "$tmp/no/such/dir/x.svg"
expect_error "bad --threads" $m --ids "$ids" --threads 0
expect_error "bad --weights" $m --ids "$ids" --weights q3
expect_error "bad --kv" $m --ids "$ids" --kv f16
expect_error "bad --kernels" $m --ids "$ids" --kernels sse2
[ ! -e "$tmp/x.svg" ] && ok || bad "a refused run left an SVG"
"$bin" --help >"$tmp/help" 2>&1 && grep -q -- "--span-text" "$tmp/help" && ok || bad "--help"

grep -q -- "--threads T .*(1 to 256, default 2" "$tmp/help" && ok || bad "--help: the --threads range"

echo "attention: $pass passed, $fail failed"
[ "$fail" -eq 0 ]
