// tests/server_test.sh drives examples/server with the real `openai` npm client (installed by the
// script into a scratch directory, where this file is copied and run).
//   node openai_client.mjs BASE_URL GREEDY_PROMPT GREEDY_TEXT
// GREEDY_TEXT (as JSON) is what curl got for GREEDY_PROMPT (temperature 0, max_tokens 12). Prints one line
// per check: "ok - NAME" or "not ok - NAME: DETAIL".
import OpenAI from "openai";
import { check, attempt, finish } from "./checks.mjs";

const [base, greedyPrompt, greedyJson] = process.argv.slice(2);
const greedyText = JSON.parse(greedyJson);
const client = new OpenAI({ baseURL: base, apiKey: "none", maxRetries: 0, timeout: 30000 });
const model = "dint-kjv";
async function collect(stream, chat) {
  let text = "", finish = null, usage = null, chunks = 0;
  for await (const c of stream) {
    chunks++;
    if (c.usage) usage = c.usage;
    for (const ch of c.choices) {
      const piece = chat ? ch.delta?.content : ch.text;
      if (piece) text += piece;
      if (ch.finish_reason) finish = ch.finish_reason;
    }
  }
  return { text, finish, usage, chunks };
}

await attempt("models.list", async () => {
  const list = await client.models.list();
  const ids = list.data.map((m) => m.id);
  check("models.list", ids.includes(model), JSON.stringify(ids));
});

await attempt("completions: greedy text equals curl's", async () => {
  const r = await client.completions.create({ model, prompt: greedyPrompt, max_tokens: 12, temperature: 0 });
  check("completions: greedy text equals curl's", r.choices[0].text === greedyText, JSON.stringify([r.choices[0].text, greedyText]));
  check("completions: finish_reason length and usage at max_tokens",
        r.choices[0].finish_reason === "length" && r.usage.completion_tokens === 12 &&
        r.usage.total_tokens === r.usage.prompt_tokens + 12, JSON.stringify(r.usage));
});

await attempt("completions: stream equals non-stream", async () => {
  const s = await client.completions.create({ model, prompt: greedyPrompt, max_tokens: 12, temperature: 0, stream: true });
  const got = await collect(s, false);
  check("completions: stream equals non-stream", got.text === greedyText && got.finish === "length",
        JSON.stringify([got.text, got.finish]));
});

await attempt("completions: seed", async () => {
  const req = { model, prompt: "And the LORD", max_tokens: 24, temperature: 1, top_p: 0.9, seed: 1234 };
  const a = await client.completions.create(req);
  const b = await client.completions.create(req);
  check("completions: the same seed gives the same text", a.choices[0].text === b.choices[0].text && a.choices[0].text.length > 0,
        JSON.stringify([a.choices[0].text, b.choices[0].text]));
});

await attempt("completions: stop", async () => {
  const long = await client.completions.create({ model, prompt: greedyPrompt, max_tokens: 40, temperature: 0 });
  const t = long.choices[0].text;
  const words = t.split(" ").filter((w) => w.length > 2);
  const stop = words.length > 2 ? words[2] : t.slice(3, 6);
  const r = await client.completions.create({ model, prompt: greedyPrompt, max_tokens: 40, temperature: 0, stop: ["@@never@@", stop] });
  check("completions: a stop string ends the text before it", r.choices[0].text === t.slice(0, t.indexOf(stop)) &&
        r.choices[0].finish_reason === "stop", JSON.stringify([stop, t, r.choices[0].text, r.choices[0].finish_reason]));
});

const first = [{ role: "user", content: "And God said" }];
let reply = null;
await attempt("chat: non-stream", async () => {
  const r = await client.chat.completions.create({ model, messages: first, max_tokens: 16, temperature: 0 });
  reply = r.choices[0].message.content;
  check("chat: non-stream answer", r.choices[0].message.role === "assistant" && reply.length > 0 &&
        r.object === "chat.completion" && r.usage.completion_tokens > 0, JSON.stringify(r));
  const s = await client.chat.completions.create({ model, messages: first, max_tokens: 16, temperature: 0, stream: true,
                                                   stream_options: { include_usage: true } });
  const got = await collect(s, true);
  check("chat: stream equals non-stream, usage chunk", got.text === reply && got.finish === r.choices[0].finish_reason &&
        got.usage && got.usage.completion_tokens === r.usage.completion_tokens, JSON.stringify([got, reply]));
});

await attempt("chat: a conversation that goes on", async () => {
  const turn1 = await client.chat.completions.create({ model, messages: first, max_tokens: 16, temperature: 0 });
  const msgs = [...first, { role: "assistant", content: turn1.choices[0].message.content }, { role: "user", content: "And the earth" }];
  const turn2 = await client.chat.completions.create({ model, messages: msgs, max_tokens: 16, temperature: 0 });
  const cached = turn2.usage.prompt_tokens_details?.cached_tokens ?? 0;
  check("chat: the second turn reuses the cached prefix", cached > 0 && cached < turn2.usage.prompt_tokens, JSON.stringify(turn2.usage));
  // the same second turn from an empty session (llama.cpp's cache_prompt: false) gives the same text
  const again = await client.chat.completions.create({ model, messages: msgs, max_tokens: 16, temperature: 0, cache_prompt: false });
  check("chat: the reused prefix gives the text a fresh session gives",
        again.choices[0].message.content === turn2.choices[0].message.content &&
        (again.usage.prompt_tokens_details?.cached_tokens ?? 0) === 0,
        JSON.stringify([turn2.choices[0].message.content, again.choices[0].message.content, again.usage]));
});

await attempt("several connections at once", async () => {
  const reqs = [1, 2, 3].map(() => client.completions.create({ model, prompt: greedyPrompt, max_tokens: 12, temperature: 0 }));
  const rs = await Promise.all(reqs);
  check("several connections at once are served in turn", rs.every((r) => r.choices[0].text === greedyText),
        JSON.stringify(rs.map((r) => r.choices[0].text)));
});

for (const [name, body, param] of [
  ["max_tokens of the wrong type", { model, prompt: "x", max_tokens: "x" }, "max_tokens"],
  ["negative temperature", { model, prompt: "x", temperature: -1 }, "temperature"],
  ["stop of the wrong type", { model, prompt: "x", stop: 5 }, "stop"],
]) {
  await attempt(name, async () => {
    try {
      await client.completions.create(body);
      check("error: " + name, false, "no error");
    } catch (e) {
      check("error: " + name, e instanceof OpenAI.BadRequestError && e.status === 400 && e.error?.type === "invalid_request_error" &&
            e.param === param, String(e));
    }
  });
}
await attempt("chat: messages of the wrong type", async () => {
  try {
    await client.chat.completions.create({ model, messages: 3 });
    check("error: messages of the wrong type", false, "no error");
  } catch (e) {
    check("error: messages of the wrong type", e instanceof OpenAI.BadRequestError && e.param === "messages", String(e));
  }
});

await attempt("still serving", async () => {
  const r = await client.completions.create({ model, prompt: greedyPrompt, max_tokens: 12, temperature: 0 });
  check("still serving after the errors", r.choices[0].text === greedyText, r.choices[0].text);
});
finish();
