// The modes that return natively; `spin` and `bomb` are for the host's limits only.
import assert from "node:assert/strict";
import { test } from "node:test";
import { Failed, InvalidArguments, invokeJson } from "toolcell-tool";

import misbehave from "./misbehave.js";

const call = (mode) => invokeJson(misbehave, JSON.stringify({ mode }), { callId: "c1", hostContext: { user: "u" } });

test("ok returns a value", async () => {
  assert.deepEqual(JSON.parse(await call("ok")), { mode: "ok", callId: "c1", hostContext: { user: "u" } });
});

test("reject refuses its arguments and boom fails without its secret", async () => {
  await assert.rejects(call("reject"), InvalidArguments);
  await assert.rejects(call("boom"), (error) => error instanceof Failed && !error.message.includes("SECRET-js-7f3a"));
});

test("an unknown mode is refused by the schema", async () => {
  await assert.rejects(call("nope"), {
    message: /\n- \/mode: `nope` is not one of the allowed values\. Allowed: ok, reject, boom, spin, bomb\n/,
  });
});
