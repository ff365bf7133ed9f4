// tests/server_test.sh drives examples/server with many clients at once: the real `openai` npm
// client for streams and choices, node's own sockets for hostile and idle connections.
//   node many.mjs BASE_URL QUEUE_URL LOGITS_BIN IDS
// BASE_URL: a server with several slots; QUEUE_URL: one started with --parallel 1 --queue 1;
// LOGITS_BIN: examples/logits' float32 rows for the comma-separated IDS, whose log-softmax (in
// float64, here: not the server's code) the server's echo logprobs must equal. Prints one line
// per check: "ok - NAME" or "not ok - NAME: DETAIL".
import OpenAI from "openai";
import { check, attempt, finish } from "./checks.mjs";
import net from "node:net";
import { readFileSync } from "node:fs";

const [base, queueBase, logitsFile, idsText] = process.argv.slice(2);
const client = new OpenAI({ baseURL: base + "/v1", apiKey: "none", maxRetries: 0, timeout: 120000 });
const model = "dint-kjv";
async function collect(stream, chat) {
  const text = {}, finish = {};
  let usage = null;
  for await (const c of stream) {
    if (c.usage) usage = c.usage;
    for (const ch of c.choices) {
      const piece = chat ? ch.delta?.content : ch.text;
      text[ch.index] = (text[ch.index] ?? "") + (piece ?? "");
      if (ch.finish_reason) finish[ch.index] = ch.finish_reason;
    }
  }
  return { text, finish, usage };
}
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
const hostPort = (u) => { const x = new URL(u); return { host: x.hostname, port: Number(x.port) }; };

// Sends raw bytes on a new connection; resolves with everything the server sent until it closed
// (or `ms` passed), and whether the connection was reset.
function rawExchange(u, bytes, { halfClose = false, ms = 30000 } = {}) {
  return new Promise((resolve) => {
    const s = net.connect(hostPort(u));
    const chunks = [];
    let reset = false;
    const t = setTimeout(() => s.destroy(), ms);
    s.on("connect", () => { s.write(bytes); if (halfClose) s.end(); });
    s.on("data", (d) => chunks.push(d));
    s.on("error", (e) => { reset = e.code === "ECONNRESET" || e.code === "EPIPE"; });
    s.on("close", () => { clearTimeout(t); resolve({ text: Buffer.concat(chunks).toString("utf8"), reset }); });
  });
}
function post(path, body) {
  const b = JSON.stringify(body);
  return `POST ${path} HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(b)}\r\nConnection: close\r\n\r\n${b}`;
}
const statusOf = (text) => Number((/^HTTP\/1\.1 (\d+)/.exec(text) || [])[1] || 0);
const bodyOf = (text) => text.slice(text.indexOf("\r\n\r\n") + 4);
async function metrics(u) {
  const text = await (await fetch(u + "/metrics")).text();
  const m = {};
  for (const line of text.split("\n")) {
    if (!line || line.startsWith("#")) continue;
    const [k, v] = line.split(" ");
    m[k] = Number(v);
  }
  return m;
}

const prompts = ["In the beginning", "And God said", "And the LORD spake unto Moses", "Blessed is the man",
  "The LORD is my shepherd", "And it came to pass", "Now these are the names", "Hear, O Israel",
  "And Jesus answered", "Let not your heart", "For God so loved", "Thou shalt not", "Praise ye the LORD",
  "And the earth was", "Behold, I send", "In my Father's house"];

// --- many streams at once, each as it is alone ----------------------------------------------------
const lone = {};
await attempt("lone runs", async () => {
  for (const p of prompts) {
    const r = await client.completions.create({ model, prompt: p, max_tokens: 24, temperature: 0, cache_prompt: false });
    lone[p] = r.choices[0].text;
  }
  check("lone runs: a text for every prompt", prompts.every((p) => lone[p].length > 0), JSON.stringify(lone));
});
await attempt("16 concurrent streams", async () => {
  const m0 = await metrics(base);
  const runs = prompts.map(async (p) => collect(await client.completions.create({ model, prompt: p, max_tokens: 24,
    temperature: 0, stream: true, stream_options: { include_usage: true } }), false));
  const got = await Promise.all(runs);
  const bad = prompts.filter((p, i) => got[i].text[0] !== lone[p]);
  check("16 concurrent streams: each equals its lone run", bad.length === 0,
        JSON.stringify(bad.map((p) => [p, lone[p], got[prompts.indexOf(p)].text[0]])));
  const m1 = await metrics(base);
  const gen = got.reduce((a, g) => a + (g.usage?.completion_tokens ?? 0), 0);
  check("/metrics: generated tokens grew by the streams' completion tokens",
        m1.dintattn_generated_tokens_total - m0.dintattn_generated_tokens_total === gen && gen > 16,
        JSON.stringify([m0.dintattn_generated_tokens_total, m1.dintattn_generated_tokens_total, gen]));
  check("/metrics: steps ran several sequences at once (batched)",
        (m1.dintattn_batch_sequences_total - m0.dintattn_batch_sequences_total) >
          1.5 * (m1.dintattn_batch_steps_total - m0.dintattn_batch_steps_total),
        JSON.stringify([m0, m1]));
  check("/metrics: 200s counted, time to first token observed", m1['dintattn_requests_total{status="200"}'] >= 32 &&
        m1.dintattn_time_to_first_token_seconds_count >= 32 && m1.dintattn_slots_total >= 4, JSON.stringify(m1));
});

// --- n samples, several prompts --------------------------------------------------------------------
await attempt("n samples", async () => {
  const p = prompts[0];
  const r = await client.completions.create({ model, prompt: p, max_tokens: 24, temperature: 0, n: 3 });
  check("n 3 greedy: three choices, each the lone text", r.choices.length === 3 &&
        r.choices.every((c, i) => c.index === i && c.text === lone[p]) && r.usage.completion_tokens === 72,
        JSON.stringify(r));
  const seeded = { model, prompt: "And the LORD", max_tokens: 20, temperature: 1, top_p: 0.95 };
  const two = await client.completions.create({ ...seeded, n: 2, seed: 7 });
  const a = await client.completions.create({ ...seeded, seed: 7 });
  const b = await client.completions.create({ ...seeded, seed: 8 });
  check("n 2 seeded: sample k is the lone run with seed + k",
        two.choices[0].text === a.choices[0].text && two.choices[1].text === b.choices[0].text,
        JSON.stringify([two.choices.map((c) => c.text), a.choices[0].text, b.choices[0].text]));
  const s = await collect(await client.chat.completions.create({ model, messages: [{ role: "user", content: p }],
    max_tokens: 12, temperature: 0, n: 2, stream: true }), true);
  const one = await client.chat.completions.create({ model, messages: [{ role: "user", content: p }], max_tokens: 12, temperature: 0 });
  check("chat stream n 2: both choices interleaved, each the lone text",
        s.text[0] === one.choices[0].message.content && s.text[1] === one.choices[0].message.content &&
        s.finish[0] && s.finish[1], JSON.stringify([s, one.choices[0].message.content]));
  const list = await client.completions.create({ model, prompt: [prompts[1], prompts[2], prompts[3]], max_tokens: 24, temperature: 0 });
  check("a list of prompts: a choice each, in order, each the lone text",
        list.choices.length === 3 && list.choices.every((c, i) => c.index === i && c.text === lone[prompts[i + 1]]),
        JSON.stringify(list.choices));
});

await attempt("ignore_eos", async () => {
  const all = await client.completions.create({ model, prompt: prompts, max_tokens: 24, temperature: 0 });
  const ign = await client.completions.create({ model, prompt: prompts, max_tokens: 24, temperature: 0, ignore_eos: true });
  const ended = all.choices.filter((c) => c.finish_reason === "stop").length;
  check("ignore_eos: every choice runs to max_tokens (some end early without it)", ended > 0 &&
        ign.choices.every((c) => c.finish_reason === "length") && ign.usage.completion_tokens === 16 * 24,
        JSON.stringify([ended, ign.usage]));
});

// --- logprobs ---------------------------------------------------------------------------------------
await attempt("logprobs", async () => {
  const ref = { ids: idsText.split(",").map(Number), logprob: [] };
  const raw = readFileSync(logitsFile), rows = new Float32Array(raw.buffer, raw.byteOffset, raw.length / 4);
  const V = rows.length / ref.ids.length;
  for (let i = 0; i + 1 < ref.ids.length; i++) {
    let max = -Infinity, sum = 0;
    for (let j = 0; j < V; j++) max = Math.max(max, rows[i * V + j]);
    for (let j = 0; j < V; j++) sum += Math.exp(rows[i * V + j] - max);
    ref.logprob.push(rows[i * V + ref.ids[i + 1]] - max - Math.log(sum));
  }
  const r = await client.completions.create({ model, prompt: ref.ids, max_tokens: 0, echo: true, logprobs: 2, temperature: 0 });
  const lp = r.choices[0].logprobs;
  let worst = 0;
  for (let i = 1; i < ref.ids.length; i++) worst = Math.max(worst, Math.abs(lp.token_logprobs[i] - ref.logprob[i - 1]));
  check("echo: a token per prompt id, the first without a logprob", lp.tokens.length === ref.ids.length &&
        lp.token_logprobs[0] === null && lp.top_logprobs[0] === null && r.usage.completion_tokens === 0,
        JSON.stringify(lp).slice(0, 400));
  check("echo: logprobs equal examples/logits' rows' log-softmax (1e-4)", worst < 1e-4, "worst " + worst);
  check("echo: each top_logprobs holds 2 alternatives, the best at least the token's",
        lp.top_logprobs.slice(1).every((t, i) => Object.keys(t).length === 2 &&
          Math.max(...Object.values(t)) >= lp.token_logprobs[i + 1] - 1e-6), JSON.stringify(lp.top_logprobs.slice(0, 3)));
  const g = await client.completions.create({ model, prompt: prompts[4], max_tokens: 8, temperature: 0, logprobs: 3 });
  const gl = g.choices[0].logprobs;
  check("completions logprobs: greedy tokens are the top alternative", gl.tokens.length === 8 &&
        gl.tokens.join("") === g.choices[0].text &&
        gl.top_logprobs.every((t, i) => Math.abs(Math.max(...Object.values(t)) - gl.token_logprobs[i]) < 1e-6),
        JSON.stringify(gl).slice(0, 400));
  const c = await client.chat.completions.create({ model, messages: [{ role: "user", content: prompts[5] }], max_tokens: 6,
    temperature: 0, logprobs: true, top_logprobs: 2 });
  const cl = c.choices[0].logprobs.content;
  check("chat logprobs: a token each, bytes, 2 alternatives, greedy = the best",
        cl.length > 0 && cl.map((e) => e.token).join("") === c.choices[0].message.content &&
        cl.every((e) => e.top_logprobs.length === 2 && Math.abs(e.top_logprobs[0].logprob - e.logprob) < 1e-6 &&
          Buffer.from(e.bytes).toString("utf8") === e.token), JSON.stringify(cl).slice(0, 400));
  const sl = await client.chat.completions.create({ model, messages: [{ role: "user", content: prompts[5] }], max_tokens: 6,
    temperature: 0, logprobs: true, top_logprobs: 2, stream: true });
  const streamed = [];
  for await (const ch of sl) for (const x of ch.choices) if (x.logprobs?.content) streamed.push(...x.logprobs.content);
  check("chat logprobs streamed: the same entries", JSON.stringify(streamed) === JSON.stringify(cl),
        JSON.stringify([streamed.length, cl.length]));
});

// --- connections that misbehave --------------------------------------------------------------------
await attempt("half-close", async () => {
  const r = await rawExchange(base, post("/v1/completions", { prompt: prompts[0], max_tokens: 24, temperature: 0 }), { halfClose: true });
  check("a client that half-closes after its request gets the whole answer", statusOf(r.text) === 200 &&
        JSON.parse(bodyOf(r.text)).choices[0].text === lone[prompts[0]], r.text.slice(0, 300));
});
await attempt("idle and slow clients", async () => {
  const idle = [];
  for (let i = 0; i < 50; i++) idle.push(net.connect(hostPort(base)));
  idle.forEach((s) => s.on("error", () => {}));
  const slow = net.connect(hostPort(base));
  slow.on("error", () => {});
  slow.write("POST /v1/completions HTTP/1.1\r\nHost: x\r\nContent-Le");
  await sleep(200);
  const r = await client.completions.create({ model, prompt: prompts[0], max_tokens: 24, temperature: 0 });
  check("50 idle connections and a slow one: a request is served meanwhile", r.choices[0].text === lone[prompts[0]], r.choices[0].text);
  idle.forEach((s) => s.destroy());
  slow.destroy();
});
await attempt("a client that leaves mid-stream", async () => {
  const s = net.connect(hostPort(queueBase));
  let got = "";
  await new Promise((resolve) => {
    s.on("connect", () => s.write(post("/v1/completions", { prompt: prompts[6], max_tokens: 200, stream: true, temperature: 0 })));
    s.on("data", (d) => { got += d; if (got.includes("data: {")) { s.destroy(); resolve(); } });
    s.on("error", resolve);
  });
  let freed = false;
  for (let i = 0; i < 50 && !freed; i++) {
    await sleep(100);
    const slots = await (await fetch(queueBase + "/slots")).json();
    freed = slots.every((x) => !x.is_processing);
  }
  check("a client that leaves mid-stream frees its slot", freed);
  const r = await fetch(queueBase + "/v1/completions", { method: "POST", headers: { "Content-Type": "application/json" },
    body: JSON.stringify({ prompt: prompts[0], max_tokens: 24, temperature: 0 }) });
  check("... and the next request is served", r.status === 200 && (await r.json()).choices[0].text === lone[prompts[0]]);
});
await attempt("queue full", async () => {
  const long = post("/v1/completions", { prompt: prompts[7], max_tokens: 150, temperature: 0 });
  const rs = await Promise.all([0, 1, 2, 3, 4].map(() => rawExchange(queueBase, long)));
  const st = rs.map((r) => statusOf(r.text));
  const busy = rs.find((r) => statusOf(r.text) === 503);
  check("--parallel 1 --queue 1, 5 at once: 2 answered, 3 get 503 with Retry-After, none reset",
        st.filter((x) => x === 200).length === 2 && st.filter((x) => x === 503).length === 3 && rs.every((r) => !r.reset) &&
        busy && /\r\nRetry-After: 1\r\n/i.test(busy.text) && JSON.parse(bodyOf(busy.text)).error.type === "unavailable_error",
        JSON.stringify(st));
});
await attempt("200 connections at once", async () => {
  const body = post("/v1/completions", { prompt: prompts[8], max_tokens: 4, temperature: 0 });
  const rs = await Promise.all(Array.from({ length: 200 }, () => rawExchange(queueBase, body, { ms: 120000 })));
  const st = rs.map((r) => statusOf(r.text));
  const counts = {};
  st.forEach((x) => { counts[x] = (counts[x] ?? 0) + 1; });
  check("200 connections at once: each gets 200 or 503, none reset", st.every((x) => x === 200 || x === 503) &&
        rs.every((r) => !r.reset) && counts[200] >= 2, JSON.stringify(counts));
  const h = await (await fetch(queueBase + "/health")).json();
  check("/health after the flood: ok, nothing waiting", h.status === "ok" && h.queue === 0, JSON.stringify(h));
});
finish();
