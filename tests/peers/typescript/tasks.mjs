// The TypeScript Tasks extension client (@modelcontextprotocol/ext-tasks over the SDK v2 client,
// @modelcontextprotocol/client, pinned to revision 2026-07-28) against `toolcell serve` over HTTP,
// with its defaults: a long call becomes a task the client polls to its result; a tool's failure
// settles as a completed task with isError; code mode's `execute` is a task whose approval the
// client's elicitation handler gives (and refuses); cancelling a task settles it as cancelled.
// Any line the client prints fails the run.
//
//     node tasks.mjs NPM_DIR
//
// NPM_DIR is where `npm ci` installed tests/peers/package.json; the binary is TOOLCELL_BIN, and
// toolcell-task-tools (the fixture tools, beside it) writes the tools folder.

import { spawn, execFileSync } from "node:child_process";
import { appendFileSync, mkdtempSync, rmSync } from "node:fs";
import { createRequire } from "node:module";
import os from "node:os";
import path from "node:path";
import process from "node:process";
import { pathToFileURL } from "node:url";

const [npmDir] = process.argv.slice(2);
const binary = process.env.TOOLCELL_BIN;
if (!npmDir || !binary) {
    process.stderr.write("usage: TOOLCELL_BIN=... node tasks.mjs NPM_DIR\n");
    process.exit(2);
}
const require = createRequire(path.resolve(npmDir, "package.json"));
const load = (name) => import(pathToFileURL(require.resolve(name)).href);
const { Client, StreamableHTTPClientTransport } = await load("@modelcontextprotocol/client");
const { createTaskSessionFromClient, createApplicationInputHandler } = await import(
    pathToFileURL(path.resolve(npmDir, "node_modules/@modelcontextprotocol/ext-tasks/dist/client/index.js")).href
);

const VERSION = "2026-07-28";
const INFO = { name: "toolcell-peer-tests", version: "0" };
const CAPABILITIES = { elicitation: {}, extensions: { "io.modelcontextprotocol/tasks": {} } };
const TIMEOUT_MS = 120_000;

const printed = [];
for (const method of ["log", "info", "warn", "error", "debug", "trace"]) {
    console[method] = (...args) => printed.push(`console.${method}: ${args.map(String).join(" ")}`);
}
process.on("warning", (warning) => printed.push(`process warning: ${warning.name}: ${warning.message}`));
const failures = [];
const check = (ok, message) => {
    if (!ok) failures.push(message);
};

/** The fixture tools, and a policy that has a person approve every `calculator` call a program makes. */
function toolsFolder() {
    const dir = mkdtempSync(path.join(os.tmpdir(), "toolcell-tasks-"));
    execFileSync(path.join(path.dirname(binary), "toolcell-task-tools"), [dir]);
    appendFileSync(path.join(dir, "toolcell.toml"), "\n[tools.calculator]\napprove = true\n");
    return dir;
}

/** `toolcell serve` over HTTP on a free port; its URL, once it listens, and the process. */
async function serve(toolsDir) {
    const args = ["serve", "--transport", "http", "--listen", "127.0.0.1:0", "--code-mode", "also"];
    const server = spawn(binary, [...args, "--tools-dir", toolsDir], { stdio: ["ignore", "ignore", "pipe"] });
    const log = [];
    const url = await new Promise((resolve, reject) => {
        const timer = setTimeout(() => reject(new Error(`no URL within ${TIMEOUT_MS} ms: ${log.join("")}`)), TIMEOUT_MS);
        server.stderr.on("data", (chunk) => {
            log.push(String(chunk));
            const found = log.join("").match(/serving MCP at (http:\/\/\S+\/mcp)/);
            if (found) {
                clearTimeout(timer);
                resolve(found[1]);
            }
        });
        server.on("exit", (code) => reject(new Error(`the server exited (${code}): ${log.join("")}`)));
    });
    return { url, server, log };
}

/** The raw request path ext-tasks needs for revision 2026-07-28 task traffic: one JSON-RPC POST
 * of its `{method, params}` under an id of ours, with the routing headers the revision asks for,
 * and its JSON or event-stream answer. */
function rawDispatch(url) {
    let nextId = 1;
    return async (unframed, options) => {
        const request = { jsonrpc: "2.0", id: `raw-${nextId++}`, ...unframed };
        const headers = {
            "content-type": "application/json",
            accept: "application/json, text/event-stream",
            "mcp-protocol-version": VERSION,
            "mcp-method": request.method,
        };
        const name = request.params?.name ?? request.params?.taskId;
        if (typeof name === "string") headers["mcp-name"] = name;
        const response = await fetch(url, {
            method: "POST",
            headers,
            body: JSON.stringify(request),
            signal: options?.signal,
        });
        const body = await response.text();
        const messages = body.startsWith("{")
            ? [JSON.parse(body)]
            : body
                  .split("\n")
                  .filter((line) => line.startsWith("data:"))
                  .map((line) => JSON.parse(line.slice(5)));
        const answer = messages.find((message) => message.id === request.id);
        if (!answer) throw new Error(`no answer to ${request.method} in ${body}`);
        return answer.error ? { kind: "error", error: answer.error } : { kind: "result", result: answer.result };
    };
}

async function session(url, approve) {
    const client = new Client(INFO, { capabilities: CAPABILITIES, versionNegotiation: { mode: { pin: VERSION } } });
    await client.connect(new StreamableHTTPClientTransport(new URL(url)));
    const asked = [];
    const tasks = createTaskSessionFromClient(client, {
        endpointId: "toolcell-peer-tests",
        rawDispatch: rawDispatch(url),
        v2RequestFraming: { protocolVersion: VERSION, clientInfo: INFO, clientCapabilities: CAPABILITIES },
        onInputRequest: createApplicationInputHandler({
            elicitation: async (request) => {
                asked.push(request.params.message);
                return { action: "accept", content: { approve } };
            },
            sampling: async () => {
                throw new Error("toolcell never samples");
            },
            roots: async () => ({ roots: [] }),
        }),
    });
    return { tasks, asked };
}

const text = (result) => result?.content?.[0]?.text ?? "";

async function run(url) {
    const { tasks, asked } = await session(url, true);
    check(tasks.capabilities !== undefined, "the session has task capabilities");

    // slow_compute is always a task (its policy): polled to its result.
    const slow = await tasks.callTool("slow_compute", { seconds: 2, label: "ts" });
    check(slow.kind === "task", `slow_compute: a task, got ${slow.kind}`);
    const settled = await slow.settle();
    check(settled.outcome.status === "completed", `slow_compute settled ${settled.outcome.status}`);
    check(text(settled.outcome.result) === '"ts done after 2 s"', `slow_compute: ${text(settled.outcome.result)}`);

    // A tool's failure: a completed task whose result is the error the model reads.
    const failing = await (await tasks.callTool("failing_job", {})).settle();
    check(failing.outcome.status === "completed", `failing_job settled ${failing.outcome.status}`);
    check(failing.outcome.result?.isError === true, `failing_job: ${JSON.stringify(failing.outcome.result)}`);

    // greet is never a task.
    const greet = await tasks.callTool("greet", { name: "TS" });
    check(greet.kind === "immediate", `greet: immediate, got ${greet.kind}`);

    // execute pauses at calculator until the elicitation handler approves it.
    const program = { code: "print(tools.calculator(expression='6*7')['value'])" };
    const execution = await tasks.callTool("execute", program);
    check(execution.kind === "task", `execute: a task, got ${execution.kind}`);
    const approved = await execution.settle();
    check(approved.outcome.status === "completed", `execute settled ${approved.outcome.status}`);
    check(approved.outcome.result?.structuredContent?.stdout === "42.0\n", `execute: ${JSON.stringify(approved.outcome.result)}`);
    check(asked.length === 1 && asked[0].includes("`calculator`"), `asked: ${JSON.stringify(asked)}`);
    await tasks.close();

    // Refused: the program gets ToolCallError(kind="denied") and may carry on.
    const refusing = await session(url, false);
    const guarded = { code: "try:\n    tools.calculator(expression='1')\nexcept ToolCallError as e:\n    print(e.kind)" };
    const refused = await (await refusing.tasks.callTool("execute", guarded)).settle();
    check(refused.outcome.result?.structuredContent?.stdout === "denied\n", `refused: ${JSON.stringify(refused.outcome)}`);

    // Cancelled while running: settles as cancelled.
    const long = await refusing.tasks.callTool("slow_compute", { seconds: 60 });
    await new Promise((resolve) => setTimeout(resolve, 300));
    await long.cancel();
    const cancelled = await long.settle();
    check(cancelled.outcome.status === "cancelled", `cancelled settled ${cancelled.outcome.status}`);
    await refusing.tasks.close();
}

const toolsDir = toolsFolder();
const { url, server, log } = await serve(toolsDir);
try {
    await run(url);
} catch (error) {
    failures.push(`the run failed: ${error?.stack ?? error}${error?.cause ? `\ncaused by: ${error.cause?.stack ?? error.cause}` : ""}`);
} finally {
    server.kill();
    rmSync(toolsDir, { recursive: true, force: true });
}
for (const line of printed) failures.push(`the client printed: ${line}`);
if (failures.length) {
    process.stderr.write(`ext-tasks: ${failures.length} failure(s):\n  ${failures.join("\n  ")}\nserver log:\n${log.join("")}`);
    process.exit(1);
}
process.stdout.write("ext-tasks: slow_compute, failing_job, greet, execute approved and refused, cancel: all as expected\n");
