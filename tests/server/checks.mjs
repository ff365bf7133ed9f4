// What tests/server's node scripts share: one line per check, "ok - NAME" or "not ok - NAME:
// DETAIL" (tests/server_test.sh counts them), a check that throws reported as not ok, and the
// exit status.
let failed = 0;
export function check(name, cond, detail = "") {
  if (cond) console.log("ok - " + name);
  else { failed++; console.log("not ok - " + name + ": " + detail); }
}
export async function attempt(name, fn) {
  try { await fn(); } catch (e) { check(name, false, "threw " + (e && e.stack ? e.stack.split("\n").slice(0, 3).join(" | ") : e)); }
}
export function finish() { process.exit(failed ? 1 : 0); }
