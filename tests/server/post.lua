-- wrk script for tests/server/load.sh: every request is the same greedy completion.
wrk.method = "POST"
wrk.headers["Content-Type"] = "application/json"
wrk.body = '{"prompt": "And it came to pass", "max_tokens": 16, "temperature": 0}'
