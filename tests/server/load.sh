#!/usr/bin/env bash
# A bounded load run on examples/server (in .ci/run): wrk with 32 connections for 10 s against a
# server of 4 slots and a queue of 8, on loopback. Every answer must be a 200 or a 503 (the full
# queue's), no connection may break, and the server must still answer the same greedy text after.
#   bash tests/server/load.sh PATH/TO/server [MODEL]
# Prints "load: N passed, M failed" (and wrk's request rate, which is not checked: no timed tests).
bin=${1:?usage: load.sh PATH/TO/server [MODEL]}
model=${2:-models/dint-kjv.safetensors}
here=$(cd "$(dirname "$0")" && pwd)
if ! command -v wrk >/dev/null 2>&1 || ! command -v curl >/dev/null 2>&1; then
    echo "load: skipped (needs wrk and curl)"
    exit 0
fi
tmp=$(mktemp -d)
pid=""
trap '[ -n "$pid" ] && kill "$pid" 2>/dev/null; rm -rf "$tmp"' EXIT
pass=0
fail=0
check() { if eval "$2"; then pass=$((pass + 1)); else fail=$((fail + 1)); echo "FAIL: $1"; fi; }

"$bin" "$model" --port 0 --parallel 4 --queue 8 2>"$tmp/log" &
pid=$!
for _ in $(seq 100); do
    port=$(sed -n 's/^server: listening on http:\/\/127\.0\.0\.1:\([0-9]*\)$/\1/p' "$tmp/log")
    [ -n "$port" ] && break
    sleep 0.1
done
[ -n "$port" ] || { cat "$tmp/log"; echo "load: 0 passed, 1 failed"; exit 1; }
url="http://127.0.0.1:$port"
body='{"prompt": "And it came to pass", "max_tokens": 16, "temperature": 0}'
want=$(curl -s --max-time 30 -H 'Content-Type: application/json' -d "$body" "$url/v1/completions" | sed 's/.*"text":\("[^"]*"\).*/\1/')
wrk -t 2 -c 32 -d 10s --timeout 30s -s "$here/post.lua" "$url/v1/completions" >"$tmp/wrk" 2>&1
cat "$tmp/wrk" | sed -n 's/^Requests\/sec:/load: wrk requests\/s:/p'
total=$(sed -n 's/^ *\([0-9]*\) requests in .*/\1/p' "$tmp/wrk")
non2xx=$(sed -n 's/^ *Non-2xx or 3xx responses: *\([0-9]*\)/\1/p' "$tmp/wrk")
check "wrk ran and counted requests" '[ -n "$total" ] && [ "$total" -gt 0 ]'
check "no socket errors (connect, read, write, timeout)" '! grep -q "Socket errors" "$tmp/wrk"'
ok=$(grep -c 'completion json' "$tmp/log")
busy=$(grep -c '^server: 503 ' "$tmp/log")
echo "load: $total requests, $ok answered, $busy refused (503), wrk non-2xx ${non2xx:-0}"
check "every answer is a 200 or the full queue's 503 (wrk stops counting with some in flight)" '[ $((ok + busy)) -ge "$total" ] && [ "${non2xx:-0}" -le "$busy" ] && [ "$ok" -gt 0 ]'
check "no other error in the server's log" '! grep -E "^server: (4|50[0-2])[0-9]* " "$tmp/log" | grep -q .'
got=$(curl -s --max-time 30 -H 'Content-Type: application/json' -d "$body" "$url/v1/completions" | sed 's/.*"text":\("[^"]*"\).*/\1/')
check "after the load: the same greedy text" '[ -n "$want" ] && [ "$got" = "$want" ]'
health=$(curl -s --max-time 10 "$url/health")
check "after the load: /health ok, nothing waiting" 'echo "$health" | grep -q "\"status\":\"ok\".*\"queue\":0"'
kill -TERM "$pid"
wait "$pid"
rc=$?
pid=""
check "SIGTERM after the load: exit status 0" '[ "$rc" = 0 ]'
check "no sanitizer report" '! grep -q -E "AddressSanitizer|LeakSanitizer|ThreadSanitizer|runtime error" "$tmp/log"'
echo "load: $pass passed, $fail failed"
[ "$fail" -eq 0 ]
