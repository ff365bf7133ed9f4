#!/usr/bin/env bash
# examples/server over HTTP, on loopback only: curl and the real `openai` npm client (installed here
# into a scratch directory; skipped, with a line saying so, without node and npm).
#   bash tests/server_test.sh PATH/TO/server [MODEL]      (make check-server)
# Starts the server on a free port (--port 0, the port read from its stderr), checks completions and
# chat, streaming and not, seeds, stop strings, max_tokens, the context limit, prefix reuse (against
# the same request from an empty session), a chat template's stop strings, and hostile requests
# (malformed JSON, a 2 MB body, bad Content-Length, wrong types, 404/405, a stalled client, a client
# that leaves mid-stream), each answered while the server keeps serving. Builds nothing; kills its
# servers on exit; prints "server: N passed, M failed" and exits non-zero on failure.
bin=${1:?usage: server_test.sh PATH/TO/server [MODEL]}
model=${2:-models/dint-kjv.safetensors}
here=$(cd "$(dirname "$0")" && pwd)
tmp=$(mktemp -d)
pids=""
cleanup() {
    for p in $pids; do kill "$p" 2>/dev/null; done
    rm -rf "$tmp"
}
trap cleanup EXIT
trap 'exit 130' INT TERM
pass=0
fail=0
skipped=0
ok() { pass=$((pass + 1)); }
bad() { fail=$((fail + 1)); echo "FAIL: $*"; }
check() { if eval "$2"; then ok; else bad "$1"; fi; } # check NAME CONDITION

# reading JSON: node, else python3
if command -v node >/dev/null 2>&1; then json() { node "$here/server/util.mjs" "$@"; }
elif command -v python3 >/dev/null 2>&1; then json() { python3 "$here/server/util.py" "$@"; }
else
    echo "server: skipped (needs node or python3 to read JSON)"
    echo "server: 0 passed, 0 failed, 1 skipped"
    exit 0
fi
if ! command -v curl >/dev/null 2>&1; then
    echo "server: skipped (needs curl)"
    echo "server: 0 passed, 0 failed, 1 skipped"
    exit 0
fi
get() { json get "$tmp/out" "$1"; }   # a field of the last response
getj() { json getj "$tmp/out" "$1"; } # the same as JSON: texts are compared and embedded so

# start_server LOG ARGS...: sets $port and $pid; 0 once it listens
start_server() {
    local log=$1 i
    shift
    "$bin" "$@" --host 127.0.0.1 --port 0 --timeout 3 2>"$log" &
    pid=$!
    pids="$pids $pid"
    for i in $(seq 100); do
        port=$(sed -n 's/^server: listening on http:\/\/127\.0\.0\.1:\([0-9]*\)$/\1/p' "$log")
        [ -n "$port" ] && return 0
        kill -0 "$pid" 2>/dev/null || break
        sleep 0.1
    done
    echo "server did not start:"; cat "$log"
    return 1
}

# post PATH BODY: the status; the body goes to $tmp/out
post() { curl -s -o "$tmp/out" -w '%{http_code}' --max-time 30 -H 'Content-Type: application/json' --data-binary "$2" "$url$1"; }
# sse PATH BODY FIELD: the streamed text, then "finish=... done=... events=..." (stream checked)
sse() {
    curl -s -N -o "$tmp/sse" --max-time 30 -H 'Content-Type: application/json' --data-binary "$2" "$url$1" &&
        json sse "$tmp/sse" "$3"
}
# raw BYTES: sends them on a new connection, prints the status of the answer
raw() {
    exec 3<>"/dev/tcp/127.0.0.1/$port" || return 1
    printf '%b' "$1" >&3
    timeout 10 head -c 4096 <&3 >"$tmp/raw"
    exec 3<&-
    sed -n '1s/^HTTP\/1\.1 \([0-9]*\) .*/\1/p' "$tmp/raw"
}
is_error() { # is_error STATUS WANT [PARAM]: the status and an OpenAI-style JSON error body
    [ "$1" = "$2" ] && [ "$(get error.type)" = invalid_request_error ] && [ -n "$(get error.message)" ] &&
        { [ -z "$3" ] || [ "$(get error.param)" = "$3" ]; }
}
said() { [ "$(get error.message)" = "$1" ]; } # said MESSAGE: the last error response's message is exactly MESSAGE

start_server "$tmp/server.log" "$model" || { echo "server: 0 passed, 1 failed"; exit 1; }
url="http://127.0.0.1:$port"
main_pid=$pid

# --- models, completions ---------------------------------------------------------------------
st=$(curl -s -o "$tmp/out" -w '%{http_code}' --max-time 10 "$url/v1/models")
check "GET /v1/models" '[ "$st" = 200 ] && [ "$(get object)" = list ] && [ "$(get data.0.id)" = dint-kjv ]'

P="In the beginning God created"
greedy="{\"prompt\":\"$P\",\"max_tokens\":12,\"temperature\":0}"
st=$(post /v1/completions "$greedy")
T1=$(getj choices.0.text)
check "completion: 200 and text" '[ "$st" = 200 ] && [ ${#T1} -gt 2 ] && [ "$(get object)" = text_completion ]'
check "completion: finish_reason length at max_tokens" '[ "$(get choices.0.finish_reason)" = length ]'
check "completion: usage counts" '[ "$(get usage.completion_tokens)" = 12 ] && [ "$(get usage.prompt_tokens)" -gt 0 ] &&
    [ "$(get usage.total_tokens)" = $(( $(get usage.prompt_tokens) + 12 )) ]'
post /v1/completions "$greedy" >/dev/null
check "completion: the same request at temperature 0 gives the same text" '[ "$(getj choices.0.text)" = "$T1" ]'
printf '%s\nfinish=length done=1\n' "$T1" >"$tmp/want"
sse /v1/completions "{\"prompt\":\"$P\",\"max_tokens\":12,\"temperature\":0,\"stream\":true}" text | sed 's/ events=.*//' >"$tmp/got"
check "completion stream: the same text, the finish, [DONE]" 'cmp -s "$tmp/want" "$tmp/got"'
post /v1/completions "{\"prompt\":\"$P\",\"max_tokens\":1}" >/dev/null
check "max_tokens 1 gives one token" '[ "$(get usage.completion_tokens)" = 1 ] && [ "$(get choices.0.finish_reason)" = length ]'
post /v1/completions "{\"prompt\":\"$P\",\"temperature\":0}" >/dev/null
check "completion without max_tokens: 16 tokens (OpenAI's default)" '[ "$(get usage.completion_tokens)" = 16 ]'

seeded="{\"prompt\":\"And the LORD\",\"max_tokens\":24,\"temperature\":1,\"top_p\":0.9,\"seed\":42"
post /v1/completions "$seeded}" >/dev/null
S1=$(getj choices.0.text)
post /v1/completions "$seeded}" >/dev/null
check "seed: the same seed gives the same text" '[ ${#S1} -gt 2 ] && [ "$(getj choices.0.text)" = "$S1" ]'
check "seed: streamed, the same text" '[ "$(sse /v1/completions "$seeded,\"stream\":true}" text | head -n -1)" = "$S1" ]'

# stop strings: the text up to the first occurrence, found across tokens and when streaming
post /v1/completions "{\"prompt\":\"$P\",\"max_tokens\":40,\"temperature\":0}" >/dev/null
T40=$(getj choices.0.text)
stop=$(json slice "$T40" 8 4) # 4 characters, likely across tokens
want=$(json before "$T40" "$stop")
post /v1/completions "{\"prompt\":\"$P\",\"max_tokens\":40,\"temperature\":0,\"stop\":$stop}" >/dev/null
check "stop string: text before it, finish_reason stop" '[ ${#stop} -ge 4 ] && [ "$(getj choices.0.text)" = "$want" ] &&
    [ "$(get choices.0.finish_reason)" = stop ]'
sse /v1/completions "{\"prompt\":\"$P\",\"max_tokens\":40,\"temperature\":0,\"stream\":true,\"stop\":[\"zzz\",$stop]}" text >"$tmp/got"
check "stop string, streamed: nothing of it is sent" '[ "$(head -n -1 "$tmp/got")" = "$want" ] && tail -n 1 "$tmp/got" | grep -q "^finish=stop done=1"'

# the context: 256 tokens for the shipped model
long=$(awk 'BEGIN { for (i = 0; i < 300; i++) printf "word%d ", i }')
st=$(post /v1/completions "{\"prompt\":\"$long\"}")
check "prompt past the context: 400 context_length_exceeded" 'is_error "$st" 400 prompt && [ "$(get error.code)" = context_length_exceeded ]'
mid=$(awk 'BEGIN { for (i = 0; i < 60; i++) printf "word%d ", i }')
st=$(post /v1/completions "{\"prompt\":\"$mid\",\"max_tokens\":100000,\"temperature\":0}")
check "generation up to the context's end: finish_reason length, prompt + completion = 256" '[ "$st" = 200 ] && [ "$(get choices.0.finish_reason)" = length ] &&
    [ "$(get usage.total_tokens)" = 256 ]'

# prefix reuse: a prompt extending the last one prefills only its new tokens, and gives what the
# same prompt gives from an empty session
post /v1/completions "$greedy" >/dev/null
ext="{\"prompt\":$(json cat "\"$P\"" "$(getj choices.0.text)" '" and"'),\"max_tokens\":12,\"temperature\":0}"
post /v1/completions "$ext" >/dev/null
E1=$(getj choices.0.text)
C1=$(get usage.prompt_tokens_details.cached_tokens)
check "prefix reuse: the extension reuses the cached tokens" '[ "$C1" -gt 0 ] && [ "$C1" -lt "$(get usage.prompt_tokens)" ]'
post /v1/completions "${ext%\}},\"cache_prompt\":false}" >/dev/null
check "prefix reuse: the same text as from an empty session (cache_prompt false)" '[ "$(get usage.prompt_tokens_details.cached_tokens)" = 0 ] &&
    [ ${#E1} -gt 2 ] && [ "$(getj choices.0.text)" = "$E1" ]'

# --- chat -------------------------------------------------------------------------------------
chat='{"messages":[{"role":"user","content":"And God said"}],"max_tokens":16,"temperature":0'
st=$(post /v1/chat/completions "$chat}")
R1=$(getj choices.0.message.content)
check "chat: 200, assistant message" '[ "$st" = 200 ] && [ "$(get object)" = chat.completion ] &&
    [ "$(get choices.0.message.role)" = assistant ] && [ ${#R1} -gt 2 ]'
check "chat stream: the same text" '[ "$(sse /v1/chat/completions "$chat,\"stream\":true}" content | head -n -1)" = "$R1" ]'
post /v1/chat/completions '{"messages":[{"role":"user","content":[{"type":"text","text":"And God"},{"type":"text","text":" said"}]}],"max_tokens":16,"temperature":0}' >/dev/null
check "chat: content as text parts is their concatenation" '[ "$(getj choices.0.message.content)" = "$R1" ]'
st=$(post /v1/chat/completions '{"messages":[{"role":"user","content":[{"type":"image_url","image_url":{"url":"x"}}]}]}')
check "chat: an image part: 400" 'is_error "$st" 400 messages'
turn2="{\"messages\":[{\"role\":\"user\",\"content\":\"And God said\"},{\"role\":\"assistant\",\"content\":$R1},{\"role\":\"user\",\"content\":\"And the earth\"}],\"max_tokens\":16,\"temperature\":0}"
post /v1/chat/completions "$chat}" >/dev/null
post /v1/chat/completions "$turn2" >/dev/null
R2=$(getj choices.0.message.content)
check "chat: the second turn reuses the first's tokens" '[ "$(get usage.prompt_tokens_details.cached_tokens)" -gt 0 ]'
post /v1/chat/completions "${turn2%\}},\"cache_prompt\":false}" >/dev/null
check "chat: the second turn from an empty session says the same" '[ ${#R2} -gt 2 ] && [ "$(getj choices.0.message.content)" = "$R2" ]'

# --- hostile requests ---------------------------------------------------------------------------
st=$(post /v1/completions '{"prompt": "x",')
check "malformed JSON: 400 saying where" 'is_error "$st" 400 && said "the body is not valid JSON: expected a key at byte 15"'
st=$(post /v1/completions '{"prompt":"x","prompt":"y"}')
check "a repeated key: 400 naming it" 'is_error "$st" 400 && said "the body is not valid JSON: duplicate key \"prompt\""'
st=$(post /v1/completions '[1,2]')
check "a body that is no object: 400" 'is_error "$st" 400 && said "the body must be a JSON object"'
st=$(post /v1/completions '{"prompt":"x","max_tokens":"x"}')
check "max_tokens \"x\": 400 naming it" 'is_error "$st" 400 max_tokens && said "'"'max_tokens'"' must be an integer of at least 1 (0 only with echo)"'
st=$(post /v1/completions '{"prompt":"x","max_tokens":2.0}')
check "max_tokens 2.0: 400 (an integer is written without a fraction)" 'is_error "$st" 400 max_tokens'
st=$(post /v1/completions '{"prompt":"x","stop":["a",1]}')
check "a stop list with a number: 400 naming it" 'is_error "$st" 400 stop && said "'"'stop'"' must be a string or a list of strings"'
st=$(post /v1/chat/completions '{"messages":3}')
check "messages 3: 400 naming it" 'is_error "$st" 400 messages'
st=$(post /v1/completions '{"prompt":"x","temperature":-1}')
check "temperature -1: 400 naming it" 'is_error "$st" 400 temperature'
st=$(post /v1/completions '{"prompt":"x","stream":"yes"}')
check "stream \"yes\": 400" 'is_error "$st" 400 stream'
st=$(post /v1/completions '{"prompt":"x","n":65}')
check "n 65: 400" 'is_error "$st" 400 n'
st=$(post /v1/completions "{\"prompt\":[$(seq -s, -f '"p%g"' 1 5)],\"n\":60}")
check "5 prompts x n 60: 400 (at most 256 choices)" 'is_error "$st" 400 n && get error.message | grep -q "make 300 choices, more than 256"'
st=$(post /v1/completions '{"prompt":"x","max_tokens":0}')
check "max_tokens 0 without echo: 400" 'is_error "$st" 400 max_tokens'
st=$(post /v1/completions '{"prompt":[[1,2],[3,-1]]}')
check "a negative token id: 400" 'is_error "$st" 400 prompt'
st=$(post /v1/completions '{"prompt":[5,999999]}')
check "a token id past the vocabulary: 400 naming it" 'is_error "$st" 400 prompt && get error.message | grep -q "token id 999999 is not in the model"'
st=$(post /v1/chat/completions '{"messages":[{"role":"user","content":"x"}],"top_logprobs":3}')
check "top_logprobs without logprobs: 400" 'is_error "$st" 400 top_logprobs'
st=$(post /v1/completions '{"prompt":"x","logprobs":21}')
check "logprobs 21: 400" 'is_error "$st" 400 logprobs'
st=$(post /v1/completions '{"max_tokens":3}')
check "no prompt: 400" 'is_error "$st" 400 prompt'
st=$(post /v1/chat/completions '{"messages":[{"role":"user","content":7}]}')
check "content 7: 400" 'is_error "$st" 400 messages && said "messages[0].content must be a string or a list of text parts"'
head -c 2000000 /dev/zero | tr '\0' 'a' >"$tmp/big"
st=$(curl -s -o "$tmp/out" -w '%{http_code}' --max-time 30 --data-binary @"$tmp/big" "$url/v1/completions")
check "a 2 MB body: 413" 'is_error "$st" 413'
st=$(curl -s -o "$tmp/out" -w '%{http_code}' --max-time 30 -H 'Transfer-Encoding: chunked' --data-binary "$greedy" "$url/v1/completions")
check "a chunked body: read as any other" '[ "$st" = 200 ] && [ "$(getj choices.0.text)" = "$T1" ]'
st=$(curl -s -o "$tmp/out" -w '%{http_code}' --max-time 10 -H "X-Big: $(head -c 70000 "$tmp/big")" "$url/v1/models")
check "70 KB of headers: 431" '[ "$st" = 431 ]'
st=$(curl -s -o "$tmp/out" -w '%{http_code}' --max-time 10 "$url/v2/nothing")
check "unknown endpoint: 404" 'is_error "$st" 404'
st=$(curl -s -o "$tmp/out" -w '%{http_code}' --max-time 10 "$url/v1/completions")
check "GET /v1/completions: 405" 'is_error "$st" 405'
st=$(curl -s -o "$tmp/out" -w '%{http_code}' --max-time 10 -d '{}' "$url/v1/models")
check "POST /v1/models: 405" 'is_error "$st" 405'
check "bad Content-Length: 400" '[ "$(raw "POST /v1/completions HTTP/1.1\r\nContent-Length: abc\r\n\r\n")" = 400 ]'
check "negative Content-Length: 400" '[ "$(raw "POST /v1/completions HTTP/1.1\r\nContent-Length: -5\r\n\r\n")" = 400 ]'
check "two Content-Lengths: 400" '[ "$(raw "POST /v1/completions HTTP/1.1\r\nContent-Length: 2\r\nContent-Length: 3\r\n\r\n{}")" = 400 ]'
check "POST without a body: 400" '[ "$(raw "POST /v1/completions HTTP/1.1\r\nHost: x\r\n\r\n")" = 400 ]'
raw "HELLO\r\n\r\n" >/dev/null # libmicrohttpd closes such a connection without an answer
check "a garbage request line: the server goes on" '[ "$(curl -s -o /dev/null -w "%{http_code}" --max-time 10 "$url/health")" = 200 ]'
check "HTTP/2.0: 505" '[ "$(raw "GET /v1/models HTTP/2.0\r\n\r\n")" = 505 ]'

# a client that stalls mid-request holds only its own connection, closed after --timeout (3 s)
exec 4<>"/dev/tcp/127.0.0.1/$port"
printf 'POST /v1/completions HTTP/1.1\r\nContent-Length: 100\r\n\r\n{"prom' >&4
st=$(post /v1/completions "$greedy")
check "a stalled client: the next request is served meanwhile" '[ "$st" = 200 ] && [ "$(getj choices.0.text)" = "$T1" ]'
check "a stalled client: closed after --timeout" 'timeout 8 cat <&4 >/dev/null'
exec 4<&-

# a client that leaves mid-stream stops its generation
exec 4<>"/dev/tcp/127.0.0.1/$port"
body='{"prompt":"And it came to pass","max_tokens":200,"stream":true,"temperature":0}'
printf 'POST /v1/completions HTTP/1.1\r\nContent-Length: %d\r\n\r\n%s' "${#body}" "$body" >&4
exec 4<&-
sleep 0.5
st=$(curl -s -o "$tmp/out" -w '%{http_code}' --max-time 10 "$url/v1/models")
check "a client gone mid-stream: generation stopped, server serving" '[ "$st" = 200 ] && grep -q "the client left" "$tmp/server.log"'

post /v1/completions "$greedy" >/dev/null
check "after the hostile requests: the same greedy text" '[ "$(getj choices.0.text)" = "$T1" ]'

# --- a chat template (the shipped model with one added: stop strings "," and ";") --------------------
if json chatmodel "$model" "$tmp/chat.safetensors" && start_server "$tmp/chat.log" "$tmp/chat.safetensors"; then
    curl_url=$url
    url="http://127.0.0.1:$port"
    q="Who made the heaven and the earth?"
    st=$(post /v1/chat/completions "{\"messages\":[{\"role\":\"system\",\"content\":\"Answer.\"},{\"role\":\"user\",\"content\":\"$q\"}],\"max_tokens\":40,\"temperature\":0}")
    R=$(get choices.0.message.content)
    Rj=$(getj choices.0.message.content)
    check "template: the turn ends at the template's stop string" '[ "$st" = 200 ] && [ "$(get choices.0.finish_reason)" = stop ] &&
        [ -n "$R" ] && [ "${R%%[,;]*}" = "$R" ] && [ "$(get usage.completion_tokens)" -lt 40 ]'
    post /v1/completions "{\"prompt\":\"System: Answer.\\nUser: $q\\nAssistant:\",\"max_tokens\":40,\"temperature\":0,\"stop\":[\",\",\";\"]}" >/dev/null
    check "template: the prompt is the template's formatting" '[ "$(getj choices.0.text)" = "$Rj" ]'
    t2="{\"messages\":[{\"role\":\"system\",\"content\":\"Answer.\"},{\"role\":\"user\",\"content\":\"$q\"},{\"role\":\"assistant\",\"content\":$Rj},{\"role\":\"user\",\"content\":\"And the sea?\"}],\"max_tokens\":40,\"temperature\":0}"
    post /v1/chat/completions "{\"messages\":[{\"role\":\"system\",\"content\":\"Answer.\"},{\"role\":\"user\",\"content\":\"$q\"}],\"max_tokens\":40,\"temperature\":0}" >/dev/null
    post /v1/chat/completions "$t2" >/dev/null
    R2=$(getj choices.0.message.content)
    check "template: the next turn reuses the cached prefix" '[ "$(get usage.prompt_tokens_details.cached_tokens)" -gt 0 ]'
    post /v1/chat/completions "${t2%\}},\"cache_prompt\":false}" >/dev/null
    check "template: the next turn from an empty session says the same" '[ ${#R2} -gt 2 ] && [ "$(getj choices.0.message.content)" = "$R2" ] &&
        [ "$(get usage.prompt_tokens_details.cached_tokens)" = 0 ]'
    st=$(post /v1/chat/completions '{"messages":[{"role":"tool","content":"x"}]}')
    check "template: a role it lacks: 400" 'is_error "$st" 400 messages'
    url=$curl_url
else
    bad "cannot start the server on a model with a chat template"
fi

# node_checks NAME SCRIPT ARGS...: runs tests/server/SCRIPT in the npm scratch directory and adds
# its "ok - " and "not ok - " lines to the counts
node_checks() {
    local name=$1 script=$2 n_ok n_bad
    shift 2
    cp "$here/server/$script" "$here/server/checks.mjs" "$tmp/npm/"
    timeout 600 node "$tmp/npm/$script" "$@" >"$tmp/$script.out" 2>&1
    n_ok=$(grep -c '^ok - ' "$tmp/$script.out")
    n_bad=$(grep -c '^not ok - ' "$tmp/$script.out")
    pass=$((pass + n_ok))
    fail=$((fail + n_bad))
    grep '^not ok - ' "$tmp/$script.out" | sed "s/^not ok - /FAIL: $name: /"
    echo "$name: $n_ok passed, $n_bad failed"
    [ "$n_ok" -gt 0 ] || { bad "$name ran no check"; cat "$tmp/$script.out"; }
}

# --- the openai npm client -------------------------------------------------------------------------
if command -v node >/dev/null 2>&1 && command -v npm >/dev/null 2>&1; then
    mkdir -p "$tmp/npm"
    if (cd "$tmp/npm" && timeout 300 npm install --no-audit --no-fund --no-save --silent openai >"$tmp/npm.log" 2>&1); then
        node_checks "openai client" openai_client.mjs "$url/v1" "$P" "$T1"
    else
        echo "openai client: skipped (npm install openai failed: $(tail -n 1 "$tmp/npm.log"))"
        skipped=$((skipped + 1))
    fi
else
    echo "openai client: skipped (node and npm are needed)"
    skipped=$((skipped + 1))
fi

# --- many clients at once (tests/server/many.mjs): a second server with one slot and a queue of one
logits_bin=$(dirname "$bin")/logits
if [ -d "$tmp/npm/node_modules/openai" ] && [ -x "$logits_bin" ]; then
    if start_server "$tmp/queue.log" "$model" --parallel 1 --queue 1; then
        queue_url="http://127.0.0.1:$port"
        ids="1,200,17,35,90,4,61,333,12,8,140,77"
        if "$logits_bin" "$model" "$ids" "$tmp/logits.bin" >/dev/null 2>&1; then
            node_checks "many clients" many.mjs "$url" "$queue_url" "$tmp/logits.bin" "$ids"
        else
            bad "examples/logits failed on $model"
        fi
    else
        bad "cannot start a server with --parallel 1 --queue 1"
    fi
else
    echo "many clients: skipped (needs the openai npm client and $logits_bin)"
    skipped=$((skipped + 1))
fi

# --- the server stops cleanly (under ASan: no leak, no report) ----------------------------------------
for p in $pids; do kill -TERM "$p" 2>/dev/null; done
rc=0
wait "$main_pid" || rc=$?
pids=""
check "SIGTERM: the server exits with status 0" '[ "$rc" = 0 ]'
if grep -q -E "AddressSanitizer|LeakSanitizer|ThreadSanitizer|runtime error" "$tmp"/*.log; then
    bad "a sanitizer report in the server's log"
    grep -h -A 30 -E "AddressSanitizer|LeakSanitizer|ThreadSanitizer|runtime error" "$tmp"/*.log | head -60
fi

# --- bad command lines: one line on stderr naming the problem, a non-zero exit, no listening -------
bad_args() { # bad_args WORD-EXPECTED ARGS...
    local want=$1 rc=0
    shift
    "$bin" "$@" --port 0 >"$tmp/args.out" 2>"$tmp/args.err" </dev/null || rc=$?
    check "server $*: exits 1 with one line naming '$want'" \
        '[ "$rc" = 1 ] && [ "$(wc -l <"$tmp/args.err")" = 1 ] && grep -q -- "$want" "$tmp/args.err"'
}
bad_args "unknown option" "$model" --frobnicate 1
bad_args "more than one MODEL" "$model" "$model"
bad_args "--threads" "$model" --threads 0
bad_args "--kv" "$model" --kv q9
bad_args "--weights" "$model" --weights q3
bad_args "--port" "$model" --port 65536
DINTATTN_KERNELS=sse2 bad_args "DINTATTN_KERNELS" "$model"

if [ "$skipped" -gt 0 ]; then echo "server: $pass passed, $fail failed, $skipped skipped"; else echo "server: $pass passed, $fail failed"; fi
[ "$fail" -eq 0 ]
