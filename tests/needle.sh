#!/bin/sh
# examples/needle from the command line, on the shipped model (models/dint-kjv.safetensors). The
# model is tiny and knows only the King James Bible, so its accuracy is about 0: these checks are
# of the mechanics, each against what does not come from the program's own bookkeeping:
# - the scoring rule (--extract) on known strings, including ones it must call correct;
# - every sample of a --json --prompts run: its prompt re-tokenized with examples/tokenize gives
#   prompt_tokens (within 3% of its length, never over), needle_token (the text before the
#   answer needle) and haystack_end (the text before the question); the answer needle's sentence
#   is in the prompt once, at |offset/len - depth| small; every needle is there once with its
#   city and number; the question asks the asked cities and ends on the answer city; the extracted
#   number is the first run of digits of the output (awk), and correct is that number == answer;
# - the grid: one cell per depth and length, its counts those of the samples, total = --samples,
#   accuracy = correct / total; the table and the SVG's data-value attributes say the same;
# - the checker itself fails on tampered JSON (so each check can fail); bad input is refused with
#   one line on stderr. (tests/needle/needle_check.py parses the SVG as XML, in CI.)
# Usage: sh tests/needle.sh [PATH/TO/needle [PATH/TO/tokenize]]
bin=${1:-examples/needle}
tokenize=${2:-$(dirname "$bin")/tokenize}
model=models/dint-kjv.safetensors
. tests/cli_lib.sh

# 1. the scoring rule: the first run of ASCII digits, compared as a number
extract() { "$bin" --extract "$1" ${2:+--answer "$2"} 2>&1; }
[ "$(extract ' the number is 0123 and 456')" = "extracted 123" ] && ok || bad "extract: leading zeros"
[ "$(extract ' 4821937.' 4821937)" = "extracted 4821937 correct 1" ] && ok || bad "extract: a right answer"
[ "$(extract '4821937' 04821937)" = "extracted 4821937 correct 1" ] && ok || bad "extract: numbers, not strings"
[ "$(extract '48219370' 4821937)" = "extracted 48219370 correct 0" ] && ok || bad "extract: a longer number is wrong"
[ "$(extract 'is 482 1937' 4821937)" = "extracted 482 correct 0" ] && ok || bad "extract: the first run only"
[ "$(extract 'no digits here' 4821937)" = "extracted none correct 0" ] && ok || bad "extract: no digits"
[ "$(extract '1,234,567')" = "extracted 1" ] && ok || bad "extract: a comma ends a number"
[ "$(extract 'x-42y')" = "extracted 42" ] && ok || bad "extract: no sign"
[ "$(extract '000' 0)" = "extracted 0 correct 1" ] && ok || bad "extract: zero"
[ "$(extract '')" = "extracted none" ] && ok || bad "extract: empty"

# check_json FILE LENGTHS DEPTHS SAMPLES NEEDLES ASKED TOL: checks a --json --prompts run (see the
# top); prints a FAIL line per failed check and returns non-zero if any.
check_json() {
    f=$1 lengths=$2 depths=$3 S=$4 N=$5 R=$6 tol=$7
    rm -f "$tmp"/cj_*
    awk -v lengths="$lengths" -v depths="$depths" -v S="$S" -v N="$N" -v R="$R" -v tol="$tol" -v dir="$tmp" '
    function num(k,   s) { if (!match($0, "\"" k "\": -?[0-9.]+")) return ""; s = substr($0, RSTART, RLENGTH); sub(/.*: /, "", s); return s }
    function str(k,   i, c, s, e) {  # a JSON string value, unescaped
        i = index($0, "\"" k "\": \""); if (!i) return ""
        s = ""; for (i += length(k) + 5; i <= length($0); i++) {
            c = substr($0, i, 1)
            if (c == "\"") return s
            if (c == "\\") { e = substr($0, ++i, 1)
                if (e == "n") c = "\n"; else if (e == "t") c = "\t"; else if (e == "r") c = "\r"
                else if (e == "u") { c = "?"; i += 4 } else c = e }
            s = s c }
        return s }
    function arr(k, out,   s) { if (!match($0, "\"" k "\": \\[[^]]*\\]")) return 0; s = substr($0, RSTART, RLENGTH)
        sub(/^[^[]*\[/, "", s); sub(/\]$/, "", s); gsub(/[" ]/, "", s); return split(s, out, ",") }
    function count(s, t,   n, i) { n = 0; while ((i = index(s, t)) > 0) { n++; s = substr(s, i + length(t)) } return n }
    function fail(m) { print "FAIL: line " NR ": " m; bad = 1 }
    function abs(x) { return x < 0 ? -x : x }
    /^\{"length"/ {
        L = num("length") + 0; d = num("depth") + 0; n = num("prompt_tokens") + 0; nt = num("needle_token") + 0
        nl = num("needle_tokens") + 0; hs = num("haystack_start") + 0; he = num("haystack_end") + 0
        dm = num("depth_measured") + 0; ans = num("answer")  # ans and ex: digit strings
        p = str("prompt"); out = str("output"); needle = str("needle"); ac = str("answer_city"); ex = num("extracted")
        if (ex == "" && index($0, "\"extracted\": null") == 0) fail("no extracted number nor null")
        key = num("length") SUBSEP num("depth"); tot[key]++; cor[key] += index($0, "\"correct\": true") > 0; samples++
        if (!(n <= L && (L - n) / L <= 0.03)) fail("prompt_tokens " n " is not within 3% below " L)
        if (hs != 1) fail("haystack_start " hs ": the model has a BOS")
        m = (nt - hs) / (he - hs - nl)
        if (abs(m - dm) > 1e-5) fail("depth_measured " dm " is not (needle_token - start) / (end - start - needle_tokens) = " m)
        if (abs(m - d / 100) > tol) fail("the answer needle is at depth " m ", asked " d "%")
        nc = arr("cities", city); nn = arr("numbers", number); na = arr("asked", asked)
        if (nc != N || nn != N || na != R) fail(nc " cities, " nn " numbers, " na " asked")
        if (city[1] != ac || number[1] != ans) fail("needle 1 is not the answer needle")
        if (needle != "The magic number of " ac " is " ans ".") fail("the needle text: " needle)
        for (k = 1; k <= N; k++) {
            s = "The magic number of " city[k] " is " number[k] "."
            if (count(p, s) != 1) fail("needle " k " is not in the prompt once: " s)
            if (number[k] !~ /^[1-9][0-9][0-9][0-9][0-9][0-9][0-9]$/) fail("not a 7-digit number: " number[k])
            for (j = 1; j < k; j++) if (city[j] == city[k] || number[j] == number[k]) fail("needles " j " and " k " share a city or number")
        }
        q = index(p, "\n\nWhat "); question = substr(p, q)
        for (k = 1; k <= R; k++) { if (count(question, " " asked[k]) < 1) fail("the question lacks " asked[k]); isans += asked[k] == ac }
        if (isans != 1) fail("the answer city is not asked once"); isans = 0
        s = "? The magic number of " ac " is"
        if (substr(p, length(p) - length(s) + 1) != s) fail("the prompt does not end on the answer city: " substr(p, length(p) - 60))
        if (q == 0 || count(p, "\n\nWhat ") != 1) fail("no question")
        # the first run of digits of the output, as a number
        want = "null"; if (match(out, /[0-9]+/)) { want = substr(out, RSTART, RLENGTH); sub(/^0+/, "", want); if (want == "") want = "0" }
        if ((ex == "" ? "null" : ex) != want) fail("extracted " ex ", the first integer of \"" out "\" is " want)
        if ((index($0, "\"correct\": true") > 0) != (ex != "" && ex == ans "")) fail("correct is not extracted == answer")
        # files for examples/tokenize: the prompt, the text before the needle (without the space
        # joining it), the haystack
        i = index(p, needle); if (i == 0) next
        printf "%s", p > (dir "/cj_" NR ".prompt"); close(dir "/cj_" NR ".prompt")
        printf "%s", substr(p, 1, i > 1 ? i - 2 : 0) > (dir "/cj_" NR ".pre"); close(dir "/cj_" NR ".pre")
        printf "%s", substr(p, 1, q - 1) > (dir "/cj_" NR ".hay"); close(dir "/cj_" NR ".hay")
        print NR, n, nt, he > (dir "/cj_list")
    }
    /^\{"depth"/ {
        key = num("length") SUBSEP num("depth"); cells++
        if (seen[key]++) print "FAIL: grid: cell " num("depth") "% x " num("length") " twice"
        g_tot[key] = num("total"); g_cor[key] = num("correct"); g_acc[key] = num("accuracy")
    }
    END {
        nL = split(lengths, Ls, ","); nD = split(depths, Ds, ",")
        if (samples != nL * nD * S) fail(samples " samples, not " nL " x " nD " x " S)
        if (cells != nL * nD) print "FAIL: grid: " cells " cells, not " nL " x " nD
        for (a = 1; a <= nL; a++) for (b = 1; b <= nD; b++) {
            key = Ls[a] SUBSEP Ds[b]
            if (!(key in g_tot)) { print "FAIL: grid: no cell " Ds[b] "% x " Ls[a]; bad = 1; continue }
            if (g_tot[key] != S || tot[key] != S) { print "FAIL: grid: " Ds[b] "% x " Ls[a] ": total " g_tot[key] ", " tot[key] " samples"; bad = 1 }
            if (g_cor[key] != cor[key] + 0) { print "FAIL: grid: " Ds[b] "% x " Ls[a] ": correct " g_cor[key] ", " cor[key] " samples correct"; bad = 1 }
            if (abs(g_acc[key] - g_cor[key] / g_tot[key]) > 1e-9) { print "FAIL: grid: accuracy " g_acc[key] " is not correct/total"; bad = 1 }
        }
        exit bad
    }' "$f" || return 1
    # the token counts against examples/tokenize (+1: BOS)
    [ -s "$tmp/cj_list" ] || { echo "FAIL: no prompt to tokenize"; return 1; }
    while read -r i n nt he; do
        got=$(($("$tokenize" $model -f "$tmp/cj_$i.prompt" | tr ',' '\n' | wc -l) + 1))
        [ "$got" = "$n" ] || { echo "FAIL: sample $i: the prompt is $got tokens, prompt_tokens says $n"; return 1; }
        got=1
        [ -s "$tmp/cj_$i.pre" ] && got=$(($("$tokenize" $model -f "$tmp/cj_$i.pre" | tr ',' '\n' | wc -l) + 1))
        [ "$got" = "$nt" ] || { echo "FAIL: sample $i: the needle begins at token $got, needle_token says $nt"; return 1; }
        got=$(($("$tokenize" $model -f "$tmp/cj_$i.hay" | tr ',' '\n' | wc -l) + 1))
        [ "$got" = "$he" ] || { echo "FAIL: sample $i: the haystack ends at token $got, haystack_end says $he"; return 1; }
    done <"$tmp/cj_list"
}

# 2. a run: 3 needles, 2 asked, 2 samples per cell (the model's context is 256: 256 would leave no
#    room for the answer, see 5)
L=128,240 D=0,25,50,75,100
if "$bin" $model --lengths $L --needles 3 --asked 2 --samples 2 --json --prompts --svg "$tmp/run.svg" >"$tmp/run.json" 2>"$tmp/run.err"; then
    check_json "$tmp/run.json" $L $D 2 3 2 0.25 && ok || bad "the --needles 3 --asked 2 run"
    # the SVG's cells are the JSON grid's
    grep '^{"depth"' "$tmp/run.json" | sed 's/{"depth": \([^,]*\), "length": \([^,]*\), "correct": \([^,]*\), "total": \([^,]*\), "accuracy": \([^}]*\)}.*/data-depth="\1" data-length="\2" data-correct="\3" data-total="\4" data-value="\5"/' >"$tmp/cells"
    okc=1
    while read -r line; do grep -qF "$line" "$tmp/run.svg" || okc=0; done <"$tmp/cells"
    [ $okc = 1 ] && [ "$(grep -c 'class="cell"' "$tmp/run.svg")" = 10 ] && [ "$(grep -c 'class="mean"' "$tmp/run.svg")" = 2 ] &&
        head -n 1 "$tmp/run.svg" | grep -q '^<?xml' && tail -n 1 "$tmp/run.svg" | grep -q '^</svg>$' && ok || bad "the SVG's cells are not the JSON grid"
    # the table says the same counts, row by row
    "$bin" $model --lengths $L --needles 3 --asked 2 --samples 2 >"$tmp/run.txt" 2>/dev/null
    for d in 0 25 50 75 100; do
        want=$(grep "^{\"depth\": $d," "$tmp/run.json" | sed 's/.*"correct": \([0-9]*\), "total": \([0-9]*\).*/(\1\/\2)/' | paste -sd' ' -)
        got=$(awk -v d="$d%" '$1 == d { for (i = 3; i <= NF; i += 2) printf "%s%s", (i > 3 ? " " : ""), $i; print "" }' "$tmp/run.txt")
        [ "$got" = "$want" ] && ok || bad "the table's row $d%: $got, the JSON's: $want"
    done
    # the same seed gives the same run; another seed other needles
    "$bin" $model --lengths $L --needles 3 --asked 2 --samples 2 --json --prompts >"$tmp/again.json" 2>/dev/null &&
        cmp -s "$tmp/run.json" "$tmp/again.json" && ok || bad "the same seed gave another run"
    "$bin" $model --lengths 128 --depths 50 --needles 3 --samples 1 --seed 7 --json >"$tmp/seed7.json" 2>/dev/null &&
        [ "$(grep -o '"numbers": [^]]*' "$tmp/seed7.json")" != "$(grep '"depth": 50, "sample": 0' "$tmp/run.json" | grep -o '"numbers": [^]]*' | head -n 1)" ] &&
        ok || bad "--seed changed nothing"
else
    bad "the run failed: $(cat "$tmp/run.err")"
fi

# 3. the answer needle's depth, with one needle (the others can only be placed a needle away)
if "$bin" $model --lengths 128,240 --needles 1 --samples 2 --json --prompts >"$tmp/one.json" 2>"$tmp/one.err"; then
    check_json "$tmp/one.json" 128,240 $D 2 1 1 0.08 && ok || bad "the --needles 1 run"
else
    bad "the --needles 1 run failed: $(cat "$tmp/one.err")"
fi

# 4. the checker fails on tampered runs (so each kind of check can)
if [ -s "$tmp/run.json" ]; then
    tamper() { sed "$1" "$tmp/run.json" >"$tmp/t.json"; check_json "$tmp/t.json" $L $D 2 3 2 0.25 >"$tmp/t.out" && bad "tampered ($2) passed" || ok; [ -n "$NEEDLE_DEBUG" ] && { echo "== $2"; head -n 3 "$tmp/t.out"; }; }
    tamper '0,/"prompt_tokens": \([0-9]*\)/s//"prompt_tokens": 1\1/' "prompt_tokens over the length"
    tamper '0,/"needle_token": [0-9]*/s//"needle_token": 60/' "needle offset"
    tamper '0,/"correct": false/s//"correct": true/' "a sample's correct"
    tamper '0,/"extracted": null/s//"extracted": 7/' "extracted"
    tamper '0,/"total": 2/s//"total": 3/' "a cell's total"
    tamper '0,/"accuracy": 0/s//"accuracy": 0.5/' "a cell's accuracy"
    tamper '0,/ The magic number of \([A-Za-z]*\) is \([0-9]*\)\./s// The magic number of \1 is 1\2./' "a needle's number in the prompt"
    tamper '/"depth": 100, "sample": 1/d' "a missing sample"
    # one token fewer than the prompt has: within 3% of its length, but not what examples/tokenize counts
    awk '!done && match($0, /"prompt_tokens": [0-9]+/) { n = substr($0, RSTART + 17, RLENGTH - 17)
         $0 = substr($0, 1, RSTART - 1) "\"prompt_tokens\": " (n - 1) substr($0, RSTART + RLENGTH); done = 1 } { print }' \
        "$tmp/run.json" >"$tmp/t.json"
    check_json "$tmp/t.json" $L $D 2 3 2 0.25 >"$tmp/t.out" && bad "tampered (prompt_tokens - 1) passed" || ok
    [ -n "$NEEDLE_DEBUG" ] && { echo "== prompt_tokens - 1"; head -n 3 "$tmp/t.out"; }
    # a needle moved: the prompt's first needle sentence to the haystack's end
    awk '/"depth": 0, "sample": 0/ && !done { sub(/"prompt": "The magic number of [A-Za-z]* is [0-9]*\. /, "\"prompt\": \""); done = 1 } { print }' "$tmp/run.json" >"$tmp/t.json"
    check_json "$tmp/t.json" $L $D 2 3 2 0.25 >"$tmp/t.out" && bad "tampered (a needle removed) passed" || ok
    [ -n "$NEEDLE_DEBUG" ] && { echo "== a needle removed"; head -n 3 "$tmp/t.out"; }
fi

# 5. --filler: the file's words, repeated; default lengths; bad input
printf 'Blessed are the meek:\nfor they shall inherit the earth.  ' >"$tmp/filler.txt"
"$bin" $model --filler "$tmp/filler.txt" --lengths 200 --depths 50 --needles 2 --samples 1 --json --prompts >"$tmp/fill.json" 2>/dev/null &&
    grep -q '"prompt": ".*meek: for they shall inherit the earth\. Blessed are the meek:' "$tmp/fill.json" &&
    check_json "$tmp/fill.json" 200 50 1 2 1 0.25 && ok || bad "--filler"
"$bin" $model --needles 2 --samples 1 --depths 0 --json >"$tmp/def.json" 2>/dev/null &&
    grep -q '"lengths": \[245\]' "$tmp/def.json" && ok || bad "the default length is not the longest that fits (245)"
: >"$tmp/empty.txt"
printf ' \n\t ' >"$tmp/blank.txt"
ln -s "$(pwd)/$model" "$tmp/a&b<c>'.safetensors"
"$bin" "$tmp/a&b<c>'.safetensors" --lengths 100 --depths 50 --needles 1 --samples 1 --svg "$tmp/esc.svg" >/dev/null 2>&1 &&
    grep -q "a&amp;b&lt;c&gt;&apos;.safetensors" "$tmp/esc.svg" && ! grep -q "a&b" "$tmp/esc.svg" && ok || bad "the SVG does not escape the model's name"
expect_error "no arguments"
expect_error "missing model" "$tmp/none.safetensors" --lengths 128
expect_error "not a model" tests/fixtures/manifest.txt --lengths 128
expect_error "a model without a tokenizer" tests/fixtures/dint_softmax_f32.safetensors --lengths 8 --needles 1
expect_error "a length over the context" $model --lengths 128,256
grep -q "at most 245" "$tmp/err" && ok || bad "a length over the context: unclear: $(cat "$tmp/err")"
expect_error "a length with no room for the needles" $model --lengths 40 --needles 8
expect_error "--lengths 0" $model --lengths 0
expect_error "--lengths malformed" $model --lengths 128,,240
expect_error "--lengths twice the same" $model --lengths 128,128
expect_error "--depths over 100" $model --depths 0,101
expect_error "--depths negative" $model --depths -5
expect_error "--depths not a number" $model --depths 0,half
expect_error "--needles 0" $model --needles 0
expect_error "--needles 65" $model --needles 65
expect_error "--asked over --needles" $model --needles 2 --asked 3
expect_error "--samples 0" $model --samples 0
expect_error "--max-tokens 0" $model --max-tokens 0
expect_error "--max-tokens filling the context" $model --max-tokens 256
expect_error "--seed negative" $model --seed -1
expect_error "missing filler" $model --filler "$tmp/none.txt"
expect_error "empty filler" $model --filler "$tmp/empty.txt"
expect_error "blank filler" $model --filler "$tmp/blank.txt"
expect_error "--svg unwritable" $model --lengths 128 --svg "$tmp/no/such/dir/x.svg"
expect_error "--prompts without --json" $model --prompts
expect_error "unknown flag" $model --frobnicate
expect_error "bad --threads" $model --threads x
expect_error "bad --weights" $model --weights q3
expect_error "bad --precision" $model --precision fast1
expect_error "bad --kernels" $model --kernels sse2
expect_error "bad --kv" $model --kv f8
expect_error "--answer without --extract" $model --answer 12
expect_error "--extract with a MODEL" $model --extract 12
expect_error "--extract, --answer not a number" --extract 12 --answer 1e3
[ ! -e "$tmp/no/such/dir/x.svg" ] && ok || bad "a failed --svg left a file"
"$bin" --help >"$tmp/help" 2>&1 && grep -q -- "--depths" "$tmp/help" && ok || bad "--help"

# a vocabulary padded past the tokenizer: tok_model's 310 ids hold toy.tiktoken's 286 tokens and
# the specials 300 and 301, so its random weights answer with ids that are no token (299 among
# these samples). They are run and counted but have no text, as in generate; never an exit.
# (tok_model's context, 16 tokens, is made 512 here: the header's JSON keeps its length, so the
# tensors' offsets stay as they are.)
perl -e 'open F, "<:raw", $ARGV[0] or die; local $/; $d = <F>; $n = unpack("Q<", substr($d, 0, 8));
         $h = substr($d, 8, $n); $h =~ s/\\"max_seq_len\\": 16/\\"max_seq_len\\":512/ or die "no max_seq_len";
         binmode STDOUT; print pack("Q<", length $h) . $h . substr($d, 8 + $n)' \
    tests/fixtures/tok_model.safetensors >"$tmp/padded.safetensors" || bad "cannot make the padded-vocabulary model"
if "$bin" "$tmp/padded.safetensors" --lengths 150,250 --max-tokens 8 --samples 3 --depths 0,50,100 --needles 1 --json \
        >"$tmp/padded.json" 2>"$tmp/padded.err"; then
    [ "$(grep -o '"answer_tokens": 8,' "$tmp/padded.json" | wc -l)" -eq 18 ] && ok ||
        bad "padded vocabulary: not 18 answers of 8 tokens"
else
    bad "padded vocabulary: $(cat "$tmp/padded.err")"
fi
# --help: each option's range and default, the limit of --threads
grep -q -- "--threads T .*(1 to 256, default 2)" "$tmp/help" && grep -q -- "--samples S .*1 to 1000000" "$tmp/help" &&
    ok || bad "--help: ranges"
# --batch B: a cell's samples answered B at a time by batched steps; the same JSON (every prompt,
# answer and grid cell) as one at a time, also when B does not divide --samples
"$bin" $model --lengths 120,240 --needles 2 --samples 7 --json --prompts --batch 1 >"$tmp/b1.json" 2>/dev/null &&
    "$bin" $model --lengths 120,240 --needles 2 --samples 7 --json --prompts --batch 3 >"$tmp/b3.json" 2>/dev/null &&
    [ -s "$tmp/b1.json" ] && cmp -s "$tmp/b1.json" "$tmp/b3.json" && ok || bad "--batch 3 differs from --batch 1"
"$bin" $model --lengths 120 --needles 2 --samples 4 --depths 50 --batch 64 >/dev/null 2>"$tmp/b64.err" && ok ||
    bad "--batch past --samples: $(cat "$tmp/b64.err")"
grep -q -- "--batch B .*1 to 256" "$tmp/help" && grep -q "default 8" "$tmp/help" && ok || bad "--help: --batch"
expect_error "--batch 0" $model --lengths 128 --batch 0
expect_error "--batch 257" $model --lengths 128 --batch 257

echo "needle: $pass passed, $fail failed"
[ "$fail" -eq 0 ]
