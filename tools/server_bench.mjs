// Benchmarks examples/server under many clients (node 18+, no packages: fetch and node:net).
//   node tools/server_bench.mjs URL [--clients 16] [--tokens 64] [--rounds 2] [--json]
// URL is a running server's base (http://127.0.0.1:8080). Prints, for one client and then for
// --clients concurrent streaming clients (greedy, a different prompt each, ignore_eos so each
// generates --tokens): aggregate generated tokens per second, per-stream decode ms/token, time to
// first token p50/p99, and how many concurrent texts equal their lone runs; then 200
// simultaneous connections (statuses; any reset) and a short request's latency on the idle
// server against with 50 idle connections held (medians of 7). Rounds alternate one client and
// many, and each figure is the best round's. Needs the server started with --parallel of at least
// --clients for the concurrent figures to mean one batch.
import net from "node:net";

const args = process.argv.slice(2);
const base = args.find((a) => !a.startsWith("--"));
const opt = (name, dflt) => { const i = args.indexOf("--" + name); return i >= 0 ? Number(args[i + 1]) : dflt; };
const clients = opt("clients", 16), tokens = opt("tokens", 64), rounds = opt("rounds", 2), asJson = args.includes("--json");
if (!base) { console.error("usage: node tools/server_bench.mjs URL [--clients N] [--tokens N] [--rounds N] [--json]"); process.exit(2); }

const words = ["In the beginning", "And God said", "And the LORD spake unto Moses", "Blessed is the man",
  "The LORD is my shepherd", "And it came to pass", "Now these are the names", "Hear, O Israel",
  "And Jesus answered", "Let not your heart", "For God so loved", "Thou shalt not", "Praise ye the LORD",
  "And the earth was", "Behold, I send", "In my Father's house"];
const prompt = (i) => words[i % words.length] + (i >= words.length ? " " + i : "");
const now = () => Number(process.hrtime.bigint()) / 1e9;
const pct = (xs, p) => { const s = [...xs].sort((a, b) => a - b); return s[Math.min(s.length - 1, Math.floor(p * s.length))]; };

// One streaming completion: its text, tokens, time to first token and decode time.
async function stream(i) {
  const t0 = now();
  const r = await fetch(base + "/v1/completions", { method: "POST", headers: { "Content-Type": "application/json" },
    body: JSON.stringify({ prompt: prompt(i), max_tokens: tokens, temperature: 0, stream: true, ignore_eos: true,
      stream_options: { include_usage: true } }) });
  const dec = new TextDecoder();
  let buf = "", text = "", first = 0, n = 0;
  for await (const chunk of r.body) {
    buf += dec.decode(chunk, { stream: true });
    let k;
    while ((k = buf.indexOf("\n\n")) >= 0) {
      const block = buf.slice(0, k);
      buf = buf.slice(k + 2);
      if (!block.startsWith("data: ") || block === "data: [DONE]") continue;
      const j = JSON.parse(block.slice(6));
      if (j.usage) n = j.usage.completion_tokens;
      for (const c of j.choices) if (c.text) { if (!first) first = now(); text += c.text; }
    }
  }
  const t1 = now();
  return { text, n, ttft: (first || t1) - t0, decode: t1 - (first || t1), t0, t1 };
}

function rawStatus(bytes) {
  return new Promise((resolve) => {
    const { hostname, port } = new URL(base);
    const s = net.connect({ host: hostname, port: Number(port) });
    let got = "", reset = false;
    s.on("connect", () => s.write(bytes));
    s.on("data", (d) => { got += d; });
    s.on("error", (e) => { reset = true; });
    s.on("close", () => resolve({ status: Number((/^HTTP\/1\.1 (\d+)/.exec(got) || [])[1] || 0), reset }));
  });
}
async function latency() {
  const t0 = now();
  const r = await fetch(base + "/v1/completions", { method: "POST", headers: { "Content-Type": "application/json" },
    body: JSON.stringify({ prompt: "And God said", max_tokens: 4, temperature: 0 }) });
  await r.json();
  return now() - t0;
}

const lone = {}, one = [], many = [];
for (let round = 0; round < rounds; round++) {
  // one client: the prompts in turn
  let gen = 0, t = 0;
  const dec = [];
  for (let i = 0; i < clients; i++) {
    const s = await stream(i);
    lone[i] = s.text;
    gen += s.n;
    t += s.t1 - s.t0;
    dec.push(s.decode / Math.max(1, s.n - 1));
  }
  one.push({ tok_s: gen / t, ms_token: 1e3 * pct(dec, 0.5) });
  // many clients at once
  const ss = await Promise.all(Array.from({ length: clients }, (_, i) => stream(i)));
  const start = Math.min(...ss.map((s) => s.t0)), end = Math.max(...ss.map((s) => s.t1));
  many.push({
    tok_s: ss.reduce((a, s) => a + s.n, 0) / (end - start),
    ms_token: 1e3 * pct(ss.map((s) => s.decode / Math.max(1, s.n - 1)), 0.5),
    ttft_p50: pct(ss.map((s) => s.ttft), 0.5), ttft_p99: pct(ss.map((s) => s.ttft), 0.99),
    equal: ss.filter((s, i) => s.text === lone[i]).length,
  });
}
const best = (xs) => xs.reduce((a, b) => (b.tok_s > a.tok_s ? b : a));
const o = best(one), m = best(many);

const body = JSON.stringify({ prompt: "And God said", max_tokens: 4, temperature: 0 });
const req = `POST /v1/completions HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: ${body.length}\r\nConnection: close\r\n\r\n${body}`;
const flood = await Promise.all(Array.from({ length: 200 }, () => rawStatus(req)));
const statuses = {};
flood.forEach((f) => { statuses[f.status] = (statuses[f.status] ?? 0) + 1; });

const idleLat = [], heldLat = [];
for (let i = 0; i < 7; i++) idleLat.push(await latency());
const { hostname, port } = new URL(base);
const held = Array.from({ length: 50 }, () => { const s = net.connect({ host: hostname, port: Number(port) }); s.on("error", () => {}); return s; });
await new Promise((r) => setTimeout(r, 300));
for (let i = 0; i < 7; i++) heldLat.push(await latency());
held.forEach((s) => s.destroy());

const out = {
  clients, tokens, rounds,
  one: o, many: m, speedup: m.tok_s / o.tok_s,
  flood: { statuses, resets: flood.filter((f) => f.reset).length },
  latency_ms: { idle: 1e3 * pct(idleLat, 0.5), with_50_idle: 1e3 * pct(heldLat, 0.5) },
};
if (asJson) console.log(JSON.stringify(out, null, 1));
else {
  console.log(`one client:      ${o.tok_s.toFixed(1)} tok/s, ${o.ms_token.toFixed(2)} ms/token`);
  console.log(`${clients} clients:      ${m.tok_s.toFixed(1)} tok/s aggregate (${out.speedup.toFixed(2)}x), ${m.ms_token.toFixed(2)} ms/token per stream, ` +
              `first token p50 ${(1e3 * m.ttft_p50).toFixed(0)} ms, p99 ${(1e3 * m.ttft_p99).toFixed(0)} ms, texts equal to lone runs: ${m.equal} of ${clients}`);
  console.log(`200 connections: ${JSON.stringify(statuses)}, ${out.flood.resets} reset`);
  console.log(`a short request: ${out.latency_ms.idle.toFixed(1)} ms idle, ${out.latency_ms.with_50_idle.toFixed(1)} ms with 50 idle connections held`);
}
