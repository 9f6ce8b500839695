// `node:assert` and `node:assert/strict` inside a test-harness component (what `toolcell test`
// builds), where Node's modules do not exist: the functions tests use, with Node's meaning.
// `equal` and `deepEqual` are strict here, as in `node:assert/strict` (the one the templates
// import); a test that relies on loose equality fails here and says so.

export class AssertionError extends Error {
  constructor({ message, actual, expected, operator }) {
    super(message ?? `${show(actual)} ${operator} ${show(expected)}`);
    this.name = "AssertionError";
    this.code = "ERR_ASSERTION";
    Object.assign(this, { actual, expected, operator });
  }
}

function show(value) {
  if (typeof value === "string") return JSON.stringify(value);
  if (typeof value === "bigint") return `${value}n`;
  if (value instanceof Error) return `${value.name}: ${value.message}`;
  try {
    const text = JSON.stringify(value);
    return text === undefined ? String(value) : text;
  } catch {
    return String(value);
  }
}

function fail(message, fields) {
  if (message instanceof Error) throw message;
  throw new AssertionError({ message, ...fields });
}

function isDeepEqual(a, b) {
  if (Object.is(a, b)) return true;
  if (typeof a !== "object" || typeof b !== "object" || a === null || b === null) return false;
  if (Object.getPrototypeOf(a) !== Object.getPrototypeOf(b)) return false;
  if (a instanceof Date) return a.getTime() === b.getTime();
  if (a instanceof RegExp) return String(a) === String(b);
  if (a instanceof Map || a instanceof Set) {
    if (a.size !== b.size) return false;
    if (a instanceof Set) return [...a].every((item) => b.has(item) || [...b].some((other) => isDeepEqual(item, other)));
    return [...a].every(([key, value]) => b.has(key) && isDeepEqual(value, b.get(key)));
  }
  const keysA = Reflect.ownKeys(a).filter((key) => Object.prototype.propertyIsEnumerable.call(a, key));
  const keysB = Reflect.ownKeys(b).filter((key) => Object.prototype.propertyIsEnumerable.call(b, key));
  if (keysA.length !== keysB.length) return false;
  if (a instanceof Error && (a.message !== b.message || a.name !== b.name)) return false;
  return keysA.every((key) => Object.prototype.propertyIsEnumerable.call(b, key) && isDeepEqual(a[key], b[key]));
}

export function ok(value, message) {
  if (!value) fail(message ?? `The expression evaluated to a falsy value: ${show(value)}`, { actual: value, expected: true, operator: "==" });
}

export function equal(actual, expected, message) {
  if (!Object.is(actual, expected)) fail(message, { actual, expected, operator: "strictEqual" });
}
export const strictEqual = equal;

export function notEqual(actual, expected, message) {
  if (Object.is(actual, expected)) fail(message, { actual, expected, operator: "notStrictEqual" });
}
export const notStrictEqual = notEqual;

export function deepEqual(actual, expected, message) {
  if (!isDeepEqual(actual, expected)) fail(message, { actual, expected, operator: "deepStrictEqual" });
}
export const deepStrictEqual = deepEqual;

export function notDeepEqual(actual, expected, message) {
  if (isDeepEqual(actual, expected)) fail(message, { actual, expected, operator: "notDeepStrictEqual" });
}
export const notDeepStrictEqual = notDeepEqual;

export function match(string, regexp, message) {
  if (typeof string !== "string" || !regexp.test(string)) {
    fail(message ?? `The input did not match the regular expression ${regexp}. Input: ${show(string)}`, {
      actual: string,
      expected: regexp,
      operator: "match",
    });
  }
}

export function doesNotMatch(string, regexp, message) {
  if (typeof string === "string" && regexp.test(string)) {
    fail(message ?? `The input was expected to not match ${regexp}. Input: ${show(string)}`, {
      actual: string,
      expected: regexp,
      operator: "doesNotMatch",
    });
  }
}

export function ifError(value) {
  if (value !== null && value !== undefined) throw value;
}

function failNow(message = "Failed") {
  fail(message, { operator: "fail" });
}
export { failNow as fail };

/** Whether `error` is what `expected` (a class, a RegExp, a validation function, an object of
 * properties) describes; throws an AssertionError when not, as Node does. */
function check(error, expected, message) {
  if (expected === undefined) return;
  if (typeof expected === "function") {
    if (expected.prototype !== undefined && error instanceof expected) return;
    if (Error.isPrototypeOf(expected) || expected === Error) {
      fail(message ?? `The error is expected to be an instance of "${expected.name}". Received ${show(error)}`, {
        actual: error,
        expected,
        operator: "throws",
      });
    }
    if (expected.call({}, error) === true) return;
    fail(message ?? `The validation function is expected to return "true". Received ${show(error)}`, {
      actual: error,
      expected,
      operator: "throws",
    });
  }
  if (expected instanceof RegExp) {
    if (expected.test(String(error))) return;
    fail(message ?? `The input did not match the regular expression ${expected}. Input: ${show(String(error))}`, {
      actual: error,
      expected,
      operator: "throws",
    });
  }
  for (const [key, want] of Object.entries(expected)) {
    const got = error?.[key];
    const same = want instanceof RegExp && typeof got === "string" ? want.test(got) : isDeepEqual(got, want);
    if (!same) {
      fail(message ?? `Expected values to be strictly deep-equal: ${key} is ${show(got)}, expected ${show(want)}`, {
        actual: error,
        expected,
        operator: "throws",
      });
    }
  }
}

const NOTHING = Symbol("nothing thrown");

export function throws(fn, expected, message) {
  if (typeof expected === "string") [message, expected] = [expected, undefined];
  let thrown = NOTHING;
  try {
    fn();
  } catch (error) {
    thrown = error;
  }
  if (thrown === NOTHING) fail(message ?? "Missing expected exception.", { expected, operator: "throws" });
  check(thrown, expected, message);
}

export function doesNotThrow(fn, message) {
  try {
    fn();
  } catch (error) {
    fail(typeof message === "string" ? message : `Got unwanted exception.\nActual message: "${error?.message}"`, {
      actual: error,
      operator: "doesNotThrow",
    });
  }
}

export async function rejects(promiseOrFn, expected, message) {
  if (typeof expected === "string") [message, expected] = [expected, undefined];
  let thrown = NOTHING;
  try {
    await (typeof promiseOrFn === "function" ? promiseOrFn() : promiseOrFn);
  } catch (error) {
    thrown = error;
  }
  if (thrown === NOTHING) fail(message ?? "Missing expected rejection.", { expected, operator: "rejects" });
  check(thrown, expected, message);
}

export async function doesNotReject(promiseOrFn, message) {
  try {
    await (typeof promiseOrFn === "function" ? promiseOrFn() : promiseOrFn);
  } catch (error) {
    fail(typeof message === "string" ? message : `Got unwanted rejection.\nActual message: "${error?.message}"`, {
      actual: error,
      operator: "doesNotReject",
    });
  }
}

/** `assert(value)` is `assert.ok(value)`; every function above is a property of it too. */
function assert(value, message) {
  ok(value, message);
}
Object.assign(assert, {
  AssertionError,
  ok,
  equal,
  strictEqual,
  notEqual,
  notStrictEqual,
  deepEqual,
  deepStrictEqual,
  notDeepEqual,
  notDeepStrictEqual,
  match,
  doesNotMatch,
  ifError,
  fail: failNow,
  throws,
  doesNotThrow,
  rejects,
  doesNotReject,
});
assert.strict = assert;
export { assert as strict };
export default assert;
