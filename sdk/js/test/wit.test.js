import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { test } from "node:test";

test("the SDK's copy of the WIT is the repository's", () => {
  const sdk = readFileSync(new URL("../wit/tool.wit", import.meta.url));
  const repository = readFileSync(new URL("../../../wit/tool.wit", import.meta.url));
  assert.ok(
    sdk.equals(repository),
    "sdk/js/wit/tool.wit differs from wit/tool.wit: copy it (cp wit/tool.wit sdk/js/wit/)",
  );
});
