// A test guest, not an example to copy: one tool that misbehaves on request, so that the host's
// report of each way a JS tool can go wrong is checked against one compiled component (each JS
// component compiles to tens of MB of native code, so one guest covers every mode).

import { InvalidArguments, tool } from "toolcell-tool";

export default tool({
  name: "misbehave",
  description: "Misbehaves as asked: a test guest for the toolcell host. Never give it to a model.",
  parameters: {
    properties: {
      mode: {
        type: "string",
        enum: ["ok", "reject", "boom", "spin", "bomb"],
        description:
          "ok: returns a value. reject: refuses its arguments. boom: throws an Error holding a secret. " +
          "spin: loops forever. bomb: allocates without end.",
      },
    },
    required: ["mode"],
  },
  run({ mode }, context) {
    switch (mode) {
      case "ok":
        return { mode, callId: context.callId, hostContext: context.hostContext };
      case "reject":
        throw new InvalidArguments("`mode` is `reject`, which this tool always refuses: use `ok`");
      case "boom":
        // Unexpected errors must reach the operator's log only: this text must never reach a model.
        throw new Error("could not reach https://user:SECRET-js-7f3a@db.internal/");
      case "spin":
        for (;;) {}
      case "bomb": {
        const hoard = [];
        for (;;) hoard.push(new Array(1 << 16).fill(hoard.length));
      }
    }
  },
});
