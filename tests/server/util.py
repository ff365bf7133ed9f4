# tests/server/util.mjs for machines with python3 but no node: the same commands and output.
import json, struct, sys

cmd = sys.argv[1]
a = sys.argv[2] if len(sys.argv) > 2 else None
b = sys.argv[3] if len(sys.argv) > 3 else None


def dumps(v):
    return json.dumps(v, ensure_ascii=False, separators=(",", ":"))
out = sys.stdout.buffer


def at(v, path):
    for k in path.split("."):
        if v is None:
            return None
        try:
            v = v[int(k)] if k.isdigit() else v.get(k)
        except (IndexError, KeyError, AttributeError):
            return None
    return v


if cmd == "get":
    v = at(json.load(open(a, encoding="utf-8")), b)
    s = "<undefined>" if v is None else v if isinstance(v, str) else json.dumps(v, separators=(",", ":"))
    out.write(s.encode("utf-8"))
elif cmd == "getj":
    v = at(json.load(open(a, encoding="utf-8")), b)
    out.write(("undefined" if v is None else dumps(v)).encode("utf-8"))
elif cmd == "cat":
    out.write(dumps("".join(json.loads(j) for j in sys.argv[2:])).encode("utf-8"))
elif cmd == "slice":
    t = json.loads(a).encode("utf-16-le")  # UTF-16 units, as JavaScript counts
    start, n = int(b), int(sys.argv[4])
    out.write(dumps(t[2 * start:2 * (start + n)].decode("utf-16-le", "replace")).encode("utf-8"))
elif cmd == "before":
    t, s = json.loads(a), json.loads(b)
    i = t.find(s)
    out.write(dumps(t if i < 0 else t[:i]).encode("utf-8"))
elif cmd == "sse":
    text = open(a, "rb").read().decode("utf-8")  # strict: every chunk valid UTF-8
    res, finish, done, events = "", "none", 0, 0
    for block in text.split("\n\n"):
        if not block or block.startswith(":"):  # empty, or a comment (the server's keep-alive)
            continue
        if not block.startswith("data: ") or done:
            raise SystemExit("bad SSE block: " + block[:80])
        data = block[6:]
        if data == "[DONE]":
            done = 1
            continue
        j = json.loads(data)
        events += 1
        for c in j["choices"]:
            piece = c.get("text") if b == "text" else c["delta"].get("content")
            if isinstance(piece, str):
                res += piece
            if c.get("finish_reason"):
                finish = c["finish_reason"]
    out.write(("%s\nfinish=%s done=%d events=%d\n" % (dumps(res), finish, done, events)).encode("utf-8"))
elif cmd == "chatmodel":
    buf = open(a, "rb").read()
    n = struct.unpack("<Q", buf[:8])[0]
    header = json.loads(buf[8:8 + n])
    header["__metadata__"]["chat"] = json.dumps({
        "roles": {"system": ["System: ", "\n"], "user": ["User: ", "\n"], "assistant": ["Assistant:", "\n"]},
        "generation_prompt": "Assistant:", "stop": [",", ";"]})
    h = json.dumps(header).encode("utf-8")
    h += b" " * ((8 - len(h) % 8) % 8)
    open(b, "wb").write(struct.pack("<Q", len(h)) + h + buf[8 + n:])
