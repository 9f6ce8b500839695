// Pyodide (CPython in WebAssembly) under Node, as Pyodide-based sandboxes run it, timed from
// inside the process. Reads {"programs": {name: code}, "calls": n, "fresh": m} on stdin and
// prints JSON: the version, the first load, and per program the milliseconds of `calls` runs
// in one interpreter (a fresh globals dict each: no isolation between runs) and of `fresh`
// runs each in a new interpreter (loadPyodide again: isolation, at its price).
// `node bench.mjs --once CODE` loads, runs CODE once and exits: a cold start.
import { loadPyodide } from "pyodide";

const quiet = { stdout: () => {}, stderr: () => {} };

async function interpreter() {
  const py = await loadPyodide(quiet);
  py.setStdout({ batched: () => {} });
  return py;
}

function run(py, code) {
  const globals = py.globals.get("dict")();
  try {
    py.runPython(code, { globals });
  } finally {
    globals.destroy();
  }
}

function time(action) {
  const started = performance.now();
  action();
  return performance.now() - started;
}

if (process.argv[2] === "--once") {
  run(await interpreter(), process.argv[3]);
} else {
  const chunks = [];
  for await (const chunk of process.stdin) chunks.push(chunk);
  const { programs, calls, fresh } = JSON.parse(Buffer.concat(chunks).toString());
  const started = performance.now();
  const py = await interpreter();
  const result = { version: py.version, load_ms: performance.now() - started, reused: {}, fresh: {} };
  for (const [name, code] of Object.entries(programs)) {
    run(py, code); // warm-up
    result.reused[name] = Array.from({ length: calls }, () => time(() => run(py, code)));
    result.fresh[name] = [];
    for (let i = 0; i < fresh; i++) {
      const begun = performance.now();
      run(await interpreter(), code);
      result.fresh[name].push(performance.now() - begun);
    }
  }
  console.log(JSON.stringify(result));
}
