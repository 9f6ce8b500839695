// The two ways a tool says a call did not succeed, and what every other thrown value becomes.
//
// The WIT world has `invalid-arguments(string)` (the model should change its arguments) and
// `failed({message, retryable})`. Anything else a tool throws is a bug whose message may hold
// secrets (a token in a URL, a path, a row of data): the model gets a generic sentence and the
// operator gets the details on stderr.

/** Marks the SDK's errors; a registered symbol, so two copies of the SDK recognise each other. */
const KIND = Symbol.for("toolcell-tool.error-kind");

/** The arguments are well-formed but unusable: the message says what to change. */
export class InvalidArguments extends Error {
  constructor(message) {
    super(String(message));
    this.name = "InvalidArguments";
  }
}
Object.defineProperty(InvalidArguments.prototype, KIND, { value: "invalid-arguments" });

/** The tool could not do its work for a reason other than the arguments. */
export class Failed extends Error {
  constructor(message, { retryable = false, cause } = {}) {
    super(String(message), cause === undefined ? undefined : { cause });
    this.name = "Failed";
    this.retryable = retryable === true;
  }
}
Object.defineProperty(Failed.prototype, KIND, { value: "failed" });

/** The WIT `tool-error` for an error the tool meant to raise; null for anything else. */
export function toToolError(thrown) {
  switch (thrown?.[KIND]) {
    case "invalid-arguments":
      return { tag: "invalid-arguments", val: String(thrown.message) };
    case "failed":
      return { tag: "failed", val: { message: String(thrown.message), retryable: thrown.retryable === true } };
    default:
      return null;
  }
}

/**
 * Whether the engine ran out of memory. SpiderMonkey throws the string "out of memory", which
 * a catch would turn into an ordinary failure; the host names the limit (`memory_limit`) only
 * when the call traps after its memory could not grow, so this one must not be caught.
 */
export function isOutOfMemory(thrown) {
  return thrown === "out of memory";
}

/** What kind of value was thrown, safe to show a model: a class name or a JS type. */
function thrownLabel(thrown) {
  if (thrown instanceof Error) {
    const name = typeof thrown.name === "string" ? thrown.name : "";
    // A class name, never a message: those are where secrets end up.
    return /^[A-Za-z_$][\w$]{0,63}$/.test(name) ? name : "Error";
  }
  return thrown === null ? "null (not an Error)" : `${typeof thrown} (not an Error)`;
}

/** The model-facing message for an unexpected thrown value. */
export function unexpectedMessage(thrown) {
  return `it threw an unexpected ${thrownLabel(thrown)}; the details went to the operator's log`;
}

/** Everything known about an unexpected thrown value, for the operator's log. */
export function unexpectedDetails(thrown) {
  try {
    if (thrown instanceof Error) {
      // SpiderMonkey's `stack` holds only the frames; V8's starts with the message again.
      const stack = typeof thrown.stack === "string" ? thrown.stack : "";
      const head = String(thrown);
      return stack.startsWith(head) ? stack : `${head}\n${stack}`.trimEnd();
    }
    return typeof thrown === "string" ? thrown : (JSON.stringify(thrown) ?? String(thrown));
  } catch {
    return "(the thrown value could not be described)";
  }
}
