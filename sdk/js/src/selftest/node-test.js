// `node:test` inside a test-harness component (what `toolcell test` builds): `test`, `it`,
// `describe`, `suite` and the hooks register tests when the test files' top-level code runs,
// which is at build time; the harness runs one registered test per call. What is not here
// (mocks, snapshots, the runner's options) throws saying so, rather than passing silently.

const registered = [];
/** The test file whose top-level code is running (set by build.mjs's `toolcell:tests`). */
let currentFile = "";

export function setCurrentFile(file) {
  currentFile = file;
}
/** The describe blocks being registered, outermost first: each has a name and its hooks. */
const open = [];

/** The tests, in the order the files registered them. */
export function registeredTests() {
  return registered;
}

function parse(name, options, fn) {
  if (typeof name === "function") return { name: name.name || "<anonymous>", options: {}, fn: name };
  if (typeof options === "function") return { name: String(name), options: {}, fn: options };
  return { name: String(name), options: options ?? {}, fn };
}

function hooks() {
  return open.map((block) => block.hooks);
}

export function test(name, options, fn) {
  const parsed = parse(name, options, fn);
  registered.push({
    name: [...open.map((block) => block.name), parsed.name].join(" > "),
    file: currentFile,
    skip: parsed.options.skip ?? parsed.options.todo ?? false,
    fn: parsed.fn,
    hooks: hooks(),
  });
  return Promise.resolve();
}
test.skip = (name, options, fn) => {
  const parsed = parse(name, options, fn);
  return test(parsed.name, { ...parsed.options, skip: true }, parsed.fn);
};
test.todo = test.skip;
test.only = test;
export const it = test;

export function describe(name, options, fn) {
  const parsed = parse(name, options, fn);
  const block = { name: parsed.name, hooks: { before: [], after: [], beforeEach: [], afterEach: [] } };
  open.push(block);
  try {
    const skip = parsed.options.skip ?? parsed.options.todo ?? false;
    const at = registered.length;
    parsed.fn?.();
    if (skip) for (const registeredTest of registered.slice(at)) registeredTest.skip = skip;
  } finally {
    open.pop();
  }
  return Promise.resolve();
}
describe.skip = (name, options, fn) => {
  const parsed = parse(name, options, fn);
  return describe(parsed.name, { ...parsed.options, skip: true }, parsed.fn);
};
describe.todo = describe.skip;
describe.only = describe;
export const suite = describe;

/** Top-level hooks apply to every test of the file, as natively; here, to every later test. */
const topLevel = { before: [], after: [], beforeEach: [], afterEach: [] };
function addHook(kind, fn) {
  (open.length > 0 ? open[open.length - 1].hooks : topLevel)[kind].push(fn);
}
export const before = (fn) => addHook("before", fn);
export const after = (fn) => addHook("after", fn);
export const beforeEach = (fn) => addHook("beforeEach", fn);
export const afterEach = (fn) => addHook("afterEach", fn);

/** Runs one registered test in this (fresh) instance: its blocks' hooks around it. */
export async function runTest(entry) {
  const chain = [topLevel, ...entry.hooks];
  for (const level of chain) for (const hook of level.before) await hook();
  for (const level of chain) for (const hook of level.beforeEach) await hook();
  let failure;
  try {
    await callTest(entry.fn, entry.name);
  } catch (error) {
    failure = error;
  }
  for (const level of [...chain].reverse()) for (const hook of level.afterEach) await hook();
  for (const level of [...chain].reverse()) for (const hook of level.after) await hook();
  if (failure !== undefined) throw failure;
}

class Skipped extends Error {}

/** Whether `error` is a test's own `t.skip()`. */
export function isSkip(error) {
  return error instanceof Skipped;
}

async function callTest(fn, name) {
  if (fn === undefined) return;
  const context = new TestContext(name);
  if (fn.length >= 2) {
    await new Promise((resolve, reject) => {
      fn(context, (error) => (error ? reject(error) : resolve()));
    });
  } else {
    await fn(context);
  }
}

class TestContext {
  constructor(name) {
    this.name = name;
    this.signal = new AbortController().signal;
  }
  /** A subtest runs at once, inside its parent. */
  async test(name, options, fn) {
    const parsed = parse(name, options, fn);
    if (parsed.options.skip || parsed.options.todo) return;
    await callTest(parsed.fn, `${this.name} > ${parsed.name}`);
  }
  skip(message) {
    throw new Skipped(message ?? "skipped");
  }
  todo(message) {
    throw new Skipped(message ?? "todo");
  }
  diagnostic(message) {
    console.log(`# ${message}`);
  }
  plan() {}
  get mock() {
    return unsupported("t.mock");
  }
}

function unsupported(what) {
  throw new Error(`${what} is not available in the component that \`toolcell test\` runs the tests in`);
}

export const mock = new Proxy({}, { get: (_, key) => unsupported(`mock.${String(key)}`) });
export const snapshot = new Proxy({}, { get: (_, key) => unsupported(`snapshot.${String(key)}`) });
export function run() {
  return unsupported("run()");
}
export default test;
