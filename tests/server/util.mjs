// Helpers for tests/server_test.sh (node; tests/server/util.py does the same with python3):
//   get FILE PATH        prints the JSON value at PATH (a.0.b; strings raw, others as JSON)
//   getj FILE PATH       prints the value at PATH as JSON (texts compare and embed safely so)
//   sse FILE FIELD       checks a server-sent event stream (every "data:" line JSON or the final
//                        [DONE], ":" comments skipped, every byte valid UTF-8) and prints the concatenated text (FIELD:
//                        text or content) as JSON, then a line "finish=REASON done=1|0 events=N"
//   cat J...             the concatenation of JSON strings, as JSON
//   slice J START LEN    a substring (UTF-16 units, as JavaScript counts), as JSON
//   before J S           J's text before the first occurrence of S's text, as JSON
//   chatmodel IN OUT     copies a model, adding a chat template to its metadata
import { readFileSync, writeFileSync } from "node:fs";

const [cmd, a, b, c] = process.argv.slice(2);
function at(v, path) {
  for (const k of path.split(".")) { if (v === undefined || v === null) return undefined; v = v[/^\d+$/.test(k) ? Number(k) : k]; }
  return v;
}
if (cmd === "get") {
  const v = at(JSON.parse(readFileSync(a, "utf8")), b);
  process.stdout.write(v === undefined ? "<undefined>" : typeof v === "string" ? v : JSON.stringify(v));
} else if (cmd === "getj") {
  process.stdout.write(JSON.stringify(at(JSON.parse(readFileSync(a, "utf8")), b)) ?? "undefined");
} else if (cmd === "cat") {
  process.stdout.write(JSON.stringify(process.argv.slice(3).map((j) => JSON.parse(j)).join("")));
} else if (cmd === "slice") {
  process.stdout.write(JSON.stringify(JSON.parse(a).substr(Number(b), Number(c))));
} else if (cmd === "before") {
  const t = JSON.parse(a), s = JSON.parse(b), i = t.indexOf(s);
  process.stdout.write(JSON.stringify(i < 0 ? t : t.slice(0, i)));
} else if (cmd === "sse") {
  const raw = readFileSync(a);
  const text = new TextDecoder("utf-8", { fatal: true }).decode(raw); // every chunk valid UTF-8
  let out = "", finish = "none", done = 0, events = 0;
  for (const block of text.split("\n\n")) {
    if (!block || block.startsWith(":")) continue; // empty, or a comment (the server's keep-alive)
    if (!block.startsWith("data: ")) throw new Error("not an SSE data block: " + block.slice(0, 80));
    const data = block.slice(6);
    if (done) throw new Error("data after [DONE]");
    if (data === "[DONE]") { done = 1; continue; }
    const j = JSON.parse(data);
    events++;
    for (const c of j.choices) {
      const piece = b === "text" ? c.text : c.delta.content;
      if (typeof piece === "string") out += piece;
      if (c.finish_reason) finish = c.finish_reason;
    }
  }
  process.stdout.write(JSON.stringify(out) + "\nfinish=" + finish + " done=" + done + " events=" + events + "\n");
} else if (cmd === "chatmodel") {
  const buf = readFileSync(a);
  const n = Number(buf.readBigUInt64LE(0));
  const header = JSON.parse(buf.subarray(8, 8 + n).toString("utf8"));
  header.__metadata__.chat = JSON.stringify({
    roles: { system: ["System: ", "\n"], user: ["User: ", "\n"], assistant: ["Assistant:", "\n"] },
    generation_prompt: "Assistant:",
    stop: [",", ";"],
  });
  let h = Buffer.from(JSON.stringify(header), "utf8");
  h = Buffer.concat([h, Buffer.alloc((8 - (h.length % 8)) % 8, 0x20)]);
  const len = Buffer.alloc(8);
  len.writeBigUInt64LE(BigInt(h.length));
  writeFileSync(b, Buffer.concat([len, h, buf.subarray(8 + n)]));
} else {
  throw new Error("usage: util.mjs get|sse|chatmodel ...");
}
