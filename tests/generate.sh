#!/bin/sh
# examples/generate from the command line: runs a model that carries a tokenizer, gives the same
# text for the same seed, and turns every bad input into one line on stderr and a non-zero exit.
# Usage: sh tests/generate.sh PATH/TO/generate
bin=${1:-examples/generate}
model=tests/fixtures/tok_model.safetensors
. tests/cli_lib.sh

# the same seed gives the same text; the prompt is echoed first
if "$bin" $model -p "In the beginning" -n 12 --seed 7 >"$tmp/a" 2>"$tmp/a.err" &&
   "$bin" $model -p "In the beginning" -n 12 --seed 7 >"$tmp/b" 2>/dev/null; then
    if cmp -s "$tmp/a" "$tmp/b"; then ok; else bad "same seed, different text"; fi
    case $(head -c 16 "$tmp/a") in "In the beginning") ok ;; *) bad "prompt not echoed" ;; esac
    if grep -q "tok/s" "$tmp/a.err"; then ok; else bad "no speed report on stderr"; fi
else
    bad "generate failed: $(cat "$tmp/a.err")"
fi
# greedy is deterministic without a seed; -f reads the prompt from a file
printf 'And God said' >"$tmp/prompt.txt"
"$bin" $model -f "$tmp/prompt.txt" -n 8 --temp 0 >"$tmp/c" 2>/dev/null &&
"$bin" $model -p "And God said" -n 8 --temp 0 >"$tmp/d" 2>/dev/null && cmp -s "$tmp/c" "$tmp/d" && ok || bad "greedy from -f and -p differ"
# the README's run command: no MODEL runs the model shipped in models/
if [ -f models/dint-kjv.safetensors ]; then
    "$bin" -p "In the beginning" -n 8 --seed 1 >"$tmp/e" 2>"$tmp/e.err" && [ -s "$tmp/e" ] && ok || bad "the shipped model: $(cat "$tmp/e.err")"
fi
"$bin" --help >"$tmp/help" 2>&1 && grep -q -- "--repeat-penalty" "$tmp/help" && ok || bad "--help"
# every weight precision runs; q8 and bf16 text stays text (greedy, so it is comparable)
for w in file f32 bf16 q8; do
    "$bin" $model -p "And God said" -n 8 --temp 0 --weights $w >"$tmp/w_$w" 2>"$tmp/w.err" &&
        case $(head -c 12 "$tmp/w_$w") in "And God said") ok ;; *) bad "--weights $w: no prompt echo" ;; esac ||
        bad "--weights $w: $(cat "$tmp/w.err")"
done
cmp -s "$tmp/w_file" "$tmp/w_f32" && ok || bad "--weights f32 differs from file on an f32 model"
# --kernels sets the session's kernel level, which the speed report names; DINTATTN_KERNELS (the
# tests' variable, same names) is the default when set, and the flag wins over it (a CPU without
# AVX2 runs portable loops whatever is asked)
unset DINTATTN_KERNELS
run_k() { out=$1; shift; "$bin" $model -p "And God said" -n 4 --temp 0 "$@" >"$tmp/$out" 2>"$tmp/$out.err"; }
level() { sed -n 's/.*| kernels \([a-z0-9]*\)$/\1/p' "$tmp/$1.err"; }
for k in portable avx2 avx512 auto; do
    run_k "f_$k" --kernels $k || bad "--kernels $k failed"
    DINTATTN_KERNELS=$k run_k "e_$k" || bad "DINTATTN_KERNELS=$k failed"
    case "$k:$(level "f_$k")" in
        portable:portable | avx2:avx2 | avx2:portable | avx512:avx512 | avx512:avx2 | avx512:portable) ok ;;
        auto:amx | auto:avx512 | auto:avx2 | auto:portable) ok ;;
        *) bad "--kernels $k ran kernels '$(level "f_$k")'" ;;
    esac
    [ "$(level "e_$k")" = "$(level "f_$k")" ] && cmp -s "$tmp/e_$k" "$tmp/f_$k" && ok ||
        bad "DINTATTN_KERNELS=$k is not --kernels $k"
done
DINTATTN_KERNELS=avx2 run_k e_flag --kernels portable && [ "$(level e_flag)" = portable ] && ok ||
    bad "--kernels portable does not override DINTATTN_KERNELS=avx2"
grep -q -- "--kernels" "$tmp/help" && ok || bad "--help does not list --kernels"

# --chat: lines from stdin are user messages; a reply streams to stdout and ends in one newline
chat() { # chat NAME INPUT ARGS...: stdin INPUT, stdout $tmp/NAME, stderr $tmp/NAME.err, exit status $tmp/NAME.rc
    name=$1 input=$2; shift 2
    printf "$input" | "$bin" "$@" --chat >"$tmp/$name" 2>"$tmp/$name.err"
    echo $? >"$tmp/$name.rc"
}
rc_of() { cat "$tmp/$1.rc"; }
# continuation NAME FILE ARGS...: what a fresh process (-f FILE) generates after the prompt, to $tmp/NAME
continuation() {
    name=$1 file=$2; shift 2
    "$bin" -f "$file" "$@" >"$tmp/$name.full" 2>/dev/null && tail -c +$(($(wc -c <"$file") + 1)) "$tmp/$name.full" >"$tmp/$name"
}
if [ -f models/dint-kjv.safetensors ]; then
    # the shipped model has no chat template: plain turns, a line each (a reply ends at a newline)
    l1="In the beginning God created the heaven and the earth." l2="And God said, Let there be light."
    chat two "\n$l1\n\n   \n$l2\n" --temp 0 -n 40
    [ "$(rc_of two)" = 0 ] && [ "$(wc -l <"$tmp/two")" -eq 2 ] && ok || bad "chat: two turns: $(cat "$tmp/two.err")"
    case $(head -c 2 "$tmp/two") in "> ") bad "chat: a prompt while stdin is a pipe" ;; *) ok ;; esac
    # the second turn prefilled only its new tokens ...
    grep -q "turn 2: prompt [0-9]* tokens ([1-9][0-9]* reused" "$tmp/two.err" && ! grep -q "prefilling all" "$tmp/two.err" &&
        ok || bad "chat: the second turn did not reuse the cache: $(cat "$tmp/two.err")"
    # ... and says what a fresh process says after the whole conversation in one prompt
    printf '%s\n%s\n%s\n' "$l1" "$(head -n 1 "$tmp/two")" "$l2" >"$tmp/conv.txt"
    continuation fresh "$tmp/conv.txt" --temp 0 -n 40 && [ -s "$tmp/two" ] &&
        [ "$(sed -n 2p "$tmp/two")" = "$(head -n 1 "$tmp/fresh")" ] && ok ||
        bad "chat: turn 2 '$(sed -n 2p "$tmp/two")' is not a fresh process's '$(head -n 1 "$tmp/fresh")'"
    # --system: a message before the first (plain: its own line)
    chat sys "$l1\n" --temp 0 -n 40 --system "Hear the word of the LORD."
    printf 'Hear the word of the LORD.\n%s\n' "$l1" >"$tmp/sys.txt"
    continuation sysfresh "$tmp/sys.txt" --temp 0 -n 40 && [ "$(rc_of sys)" = 0 ] &&
        [ "$(cat "$tmp/sys")" = "$(head -n 1 "$tmp/sysfresh")" ] && ok || bad "chat: --system: '$(cat "$tmp/sys")'"
    # a conversation that outgrows the context ends with a message and status 1, after the replies it had
    chat full "$l1\n$l2\n$l1\n$l2\n$l1\n$l2\n" --temp 0 -n 16 --ctx 64
    [ "$(rc_of full)" = 1 ] && grep -q "the conversation has outgrown the context: with this message it is [0-9]* tokens, and the context holds 64" "$tmp/full.err" &&
        [ "$(wc -l <"$tmp/full")" -ge 1 ] && ok || bad "chat: context overflow (exit $(rc_of full)): $(tail -n 1 "$tmp/full.err")"
    # a reply that fills the context is cut there, and the next message ends the conversation
    chat fill "$l1\n$l2\n" --temp 0.8 --seed 3 -n 1000 --ctx 16 --repeat-penalty 1
    grep -q "ended by the context's end" "$tmp/fill.err" && grep -q "the context (16 tokens) is full" "$tmp/fill.err" &&
        [ "$(rc_of fill)" = 1 ] && ok || bad "chat: a reply reaching the context's end: $(cat "$tmp/fill.err")"
fi
# a chat template with reasoning (tools/make_chat_model.py): the model says "<think>hm</think> OKé",
# then the template's stop string <|im_end|> (not an EOS id), to any conversation; the r1 file's
# generation prompt opens the <think> itself; in the eos file <|im_end|> is an EOS id of "eos_ids"
cm=tests/fixtures/chat_think.safetensors r1=tests/fixtures/chat_think_r1.safetensors eos=tests/fixtures/chat_think_eos.safetensors
printf '<think>hm</think> OK\303\251\n<think>hm</think> OK\303\251\n' >"$tmp/want_show"
printf 'OK\303\251\nOK\303\251\n' >"$tmp/want_hide"
for m in $cm $r1 $eos; do
    ending="a stop string"; [ $m = $eos ] && ending=EOS
    chat show "hi\nhow are you\n" $m --temp 0
    chat default "hi\nhow are you\n" $m --temp 0 --think show
    chat hide "hi\nhow are you\n" $m --temp 0 --think hide --system "Be brief."
    cmp -s "$tmp/show" "$tmp/want_show" && cmp -s "$tmp/default" "$tmp/want_show" && ok ||
        bad "chat $m: --think show printed '$(cat "$tmp/show")'"
    cmp -s "$tmp/hide" "$tmp/want_hide" && ok || bad "chat $m: --think hide printed '$(cat "$tmp/hide")'"
    # the reasoning stays in the conversation: the next turn reuses the cache
    grep -q "turn 1: .*ended by $ending" "$tmp/hide.err" && grep -q "turn 2: .*ended by $ending" "$tmp/hide.err" && ! grep -q "keeping" "$tmp/hide.err" &&
        grep -q "turn 2: prompt [0-9]* tokens ([1-9][0-9]* reused" "$tmp/hide.err" && ok ||
        bad "chat $m: --think hide, turn 2: $(cat "$tmp/hide.err")"
    # --think-history drop: later turns see only the answer (R1-style templates), so the cache is
    # cut where the conversation first differs (the reasoning) and only the rest is prefilled
    chat drop "hi\nhow are you\n" $m --temp 0 --think hide --think-history drop
    cmp -s "$tmp/drop" "$tmp/want_hide" && grep -q "from token [0-9]* on: keeping [1-9][0-9]*, prefilling" "$tmp/drop.err" &&
        grep -q "turn 2: prompt [0-9]* tokens ([1-9][0-9]* reused" "$tmp/drop.err" && ok ||
        bad "chat $m: --think-history drop: $(cat "$tmp/drop.err")"
done
# the system message is in the prompt (more tokens than without)
p_sys=$(sed -n 's/.*turn 1: prompt \([0-9]*\) tokens.*/\1/p' "$tmp/hide.err")
p_no=$(sed -n 's/.*turn 1: prompt \([0-9]*\) tokens.*/\1/p' "$tmp/drop.err")
[ -n "$p_sys" ] && [ -n "$p_no" ] && [ "$p_sys" -gt "$p_no" ] && ok || bad "chat: --system did not lengthen the prompt ($p_sys, $p_no)"
# stdin without messages: nothing to say, exit 0
chat empty "" $cm --temp 0
[ "$(rc_of empty)" = 0 ] && [ ! -s "$tmp/empty" ] && ok || bad "chat: empty stdin"
grep -q -- "--think show|hide" "$tmp/help" && grep -q -- "--chat" "$tmp/help" && ok || bad "--help does not describe --chat"
# in a terminal (script(1) gives the program a pty): "> " prompts, then the replies
if command -v script >/dev/null 2>&1; then
    printf 'hi\nyo\n' | script -q -e -c "$bin $cm --chat --temp 0 --think hide 2>/dev/null" /dev/null >"$tmp/tty" 2>&1
    tr -d '\r' <"$tmp/tty" >"$tmp/tty.txt"
    grep -q "^> OK\(.\)*$" "$tmp/tty.txt" && [ "$(grep -c "^> OK" "$tmp/tty.txt")" -eq 2 ] && ok || bad "chat in a terminal: $(cat "$tmp/tty.txt")"
fi

long=$(awk 'BEGIN { for (i = 0; i < 3000; i++) printf "word%d ", i }')
expect_error "missing model" "$tmp/none.safetensors" -p hi
expect_error "model without a tokenizer" tests/fixtures/dint_softmax_f32.safetensors -p hi
expect_error "bad -n" $model -p hi -n x
expect_error "negative -n" $model -p hi -n -3
expect_error "bad --temp" $model -p hi --temp abc
expect_error "bad --top-p" $model -p hi --top-p 1.5
expect_error "bad --min-p" $model -p hi --min-p -1
expect_error "bad --top-k" $model -p hi --top-k -1
expect_error "bad --seed" $model -p hi --seed -5
expect_error "bad --threads" $model -p hi --threads 0
expect_error "unknown flag" $model -p hi --frobnicate 1
expect_error "flag without value" $model -p
expect_error "bad --weights" $model -p hi --weights q3
expect_error "bad --precision" $model -p hi --precision fast1
expect_error "bad --kernels" $model -p hi --kernels sse2
export DINTATTN_KERNELS=sse2
expect_error "bad DINTATTN_KERNELS" $model -p hi
unset DINTATTN_KERNELS
expect_error "both -p and -f" $model -p hi -f "$tmp/prompt.txt"
expect_error "missing prompt file" $model -f "$tmp/none.txt"
expect_error "missing tokenizer file" $model -p hi --tokenizer "$tmp/none.tiktoken"
expect_error "prompt longer than the context" $model -p "$long"
expect_error "--chat with -p" $model --chat -p hi
expect_error "--system without --chat" $model -p hi --system be
expect_error "--think without --chat" $model -p hi --think hide
expect_error "bad --think" $model --chat --think maybe
expect_error "bad --think-history" $model --chat --think-history forget
expect_error "bad --ctx" $model -p hi --ctx 0

# a word that reads like a prompt where MODEL goes, or after it, points to -p
expect_error "a prompt as MODEL" "In the beginning"
grep -qx "generate: 'In the beginning' is not a file; to give a prompt, use -p \"In the beginning\" (MODEL is a .safetensors file)" "$tmp/err" &&
    ok || bad "a prompt as MODEL: $(cat "$tmp/err")"
expect_error "a prompt after MODEL" $model "In the beginning"
grep -qx "generate: 'In the beginning' follows MODEL '$model'; to give a prompt, use -p \"In the beginning\"" "$tmp/err" &&
    ok || bad "a prompt after MODEL: $(cat "$tmp/err")"
# a missing file named as a path is just missing
expect_error "a missing model path" "$tmp/none.safetensors" -p hi
grep -q "cannot open" "$tmp/err" && ! grep -q -- "use -p" "$tmp/err" && ok || bad "a missing model path: $(cat "$tmp/err")"
# --ctx past the model's context is said and the model's used; a generation that fills the
# context says it stopped there (the model's context is 16 tokens; the prompt takes 12)
max=16
"$bin" $model -p "And God said" -n 1000 --temp 0 --ctx 100000 >"$tmp/ctx" 2>"$tmp/ctx.err" &&
    grep -qx "generate: --ctx 100000 is past the model's context of $max: using $max" "$tmp/ctx.err" && ok ||
    bad "--ctx past the model: $(cat "$tmp/ctx.err")"
grep -qx "generate: stopped: the context of $max tokens is full (5 of -n 1000 generated)" "$tmp/ctx.err" && ok ||
    bad "no word on stopping at the context's end: $(cat "$tmp/ctx.err")"
"$bin" $model -p "And God said" -n 40 --temp 0 --ctx 14 >"$tmp/ctx14" 2>"$tmp/ctx14.err" &&
    grep -qx "generate: stopped: the context of 14 tokens is full (3 of -n 40 generated); --ctx can raise it" "$tmp/ctx14.err" &&
    ok || bad "--ctx 14: $(cat "$tmp/ctx14.err")"
"$bin" $model -p "And God said" -n 2 --temp 0 >/dev/null 2>"$tmp/n2.err" && ! grep -q "stopped" "$tmp/n2.err" && ok ||
    bad "-n 2 said it stopped at the context: $(cat "$tmp/n2.err")"
# --help: each option's range and default, the limit of --threads, the kinds of --tokenizer file
grep -q -- "--threads T .*" "$tmp/help" && grep -q "(1 to 256, default 2)" "$tmp/help" && ok || bad "--help: --threads limit"
grep -q "a tiktoken rank file," "$tmp/help" && grep -q "or a model file" "$tmp/help" && ok || bad "--help: --tokenizer kinds"
# --tokenizer reads a model file's tokenizer (the same text as the model's own); a file of no
# kind it takes names the kinds
"$bin" $model -p "And God said" -n 4 --temp 0 --tokenizer $model >"$tmp/tm" 2>"$tmp/tm_err" &&
    "$bin" $model -p "And God said" -n 4 --temp 0 >"$tmp/tm0" 2>/dev/null && cmp -s "$tmp/tm" "$tmp/tm0" && ok ||
    bad "--tokenizer MODEL differs from the model's own"
grep -q "^generate: --tokenizer $model: read as a model file$" "$tmp/tm_err" && ok ||
    bad "--tokenizer MODEL does not say it read a model file: $(cat "$tmp/tm_err")"
expect_error "--tokenizer of a text file" $model -p hi --tokenizer README.md
grep -q "^generate: --tokenizer README.md: .*(it takes a tiktoken rank file, a tokenizer file of tools/convert.py --format tokenizer, or a model file that carries a tokenizer)$" "$tmp/err" &&
    ok || bad "--tokenizer README.md: $(cat "$tmp/err")"

# --samples K: K continuations decoded together; sample k is the lone run with seed + k (greedy:
# all equal to the lone greedy run); the prompt is prefilled once
sm=models/dint-kjv.safetensors
"$bin" $sm -p "In the beginning" -n 16 --samples 3 --seed 40 >"$tmp/samples" 2>"$tmp/samples.err" || bad "--samples 3: $(cat "$tmp/samples.err")"
for k in 0 1 2; do
    "$bin" $sm -p "In the beginning" -n 16 --seed $((40 + k)) >"$tmp/lone$k" 2>/dev/null
    sed -n "/^\[sample $k, seed $((40 + k))\]\$/{n;p;}" "$tmp/samples" >"$tmp/got$k"
    [ -s "$tmp/got$k" ] && cmp -s "$tmp/got$k" "$tmp/lone$k" && ok ||
        bad "--samples 3: sample $k is not the lone run with seed $((40 + k)): '$(cat "$tmp/got$k")' vs '$(cat "$tmp/lone$k")'"
done
grep -q "generated: 3 samples, [0-9]* tokens in [0-9]* batched steps" "$tmp/samples.err" && ok || bad "--samples 3: stderr: $(cat "$tmp/samples.err")"
"$bin" $sm -p "And God said" -n 12 --temp 0 --samples 4 >"$tmp/gsamples" 2>/dev/null
"$bin" $sm -p "And God said" -n 12 --temp 0 >"$tmp/glone" 2>/dev/null
[ "$(grep -c '^\[sample' "$tmp/gsamples")" = 4 ] && [ "$(grep -v '^\[sample' "$tmp/gsamples" | sort -u | wc -l)" = 1 ] &&
    [ "$(grep -v '^\[sample' "$tmp/gsamples" | sort -u)" = "$(cat "$tmp/glone")" ] && ok || bad "--samples 4 --temp 0: $(cat "$tmp/gsamples")"
expect_error "--samples 0" $model -p hi --samples 0
expect_error "--samples 65" $model -p hi --samples 65
expect_error "--samples with --chat" $model --chat --samples 2
grep -q "samples is for a prompt, not --chat" "$tmp/err" && ok || bad "--samples --chat: $(cat "$tmp/err")"

echo "generate: $pass passed, $fail failed"
[ "$fail" -eq 0 ]
