// The official TypeScript SDK's client against `toolcell serve` over stdio, once per `--schemas`
// mode: it lists the tools (the client compiles every output schema with its Ajv then), compiles
// every input schema with the same validator (as the MCP Inspector does), and calls `calculator`
// and `datetime` in the shape the listed schemas ask for (the client checks each result against
// the output schema). Any line the client prints (Ajv's `unknown format "uint64" ignored`, or any
// other warning) fails the run.
//
//     node client.mjs NPM_DIR
//
// NPM_DIR is where `npm ci` installed tests/peers/package.json; the binary is TOOLCELL_BIN.

import { createRequire } from "node:module";
import path from "node:path";
import process from "node:process";

const [npmDir] = process.argv.slice(2);
const binary = process.env.TOOLCELL_BIN;
if (!npmDir || !binary) {
    process.stderr.write("usage: TOOLCELL_BIN=... node client.mjs NPM_DIR\n");
    process.exit(2);
}
const require = createRequire(path.resolve(npmDir, "package.json"));
const { Client } = require("@modelcontextprotocol/sdk/client/index.js");
const { StdioClientTransport, getDefaultEnvironment } = require("@modelcontextprotocol/sdk/client/stdio.js");
const { AjvJsonSchemaValidator } = require("@modelcontextprotocol/sdk/validation/ajv");

const TOOLS = ["calculator", "datetime", "files", "http_fetch", "json_query", "python", "regex", "unit_convert"];
// Every request is answered in milliseconds once the compile cache is warm (tests/peers/run
// warms it first); a cold one compiles for about 30 s.
const TIMEOUT_MS = 120_000;

// Everything the client and its validator print, from here on.
const printed = [];
for (const method of ["log", "info", "warn", "error", "debug", "trace"]) {
    console[method] = (...args) => printed.push(`console.${method}: ${args.map(String).join(" ")}`);
}
process.on("warning", (warning) => printed.push(`process warning: ${warning.name}: ${warning.message}`));

const failures = [];
const check = (ok, message) => {
    if (!ok) failures.push(message);
};

/** The arguments `given`, with `null` for every other property when the schema requires them
 * all (strict: `null` means "not given"). */
function argumentsFor(tool, given) {
    const schema = tool.inputSchema;
    const filled = { ...given };
    for (const name of schema.required ?? []) {
        if (!(name in filled)) filled[name] = null;
    }
    return filled;
}

async function run(mode) {
    const args = ["serve", ...(mode === "strict" ? ["--schemas", "strict"] : [])];
    const env = { ...getDefaultEnvironment(), TOOLCELL_CACHE_DIR: process.env.TOOLCELL_CACHE_DIR ?? "" };
    // The server's own log is not the client's output: read, not counted.
    const transport = new StdioClientTransport({ command: binary, args, env, stderr: "pipe" });
    const serverLog = [];
    transport.stderr?.on("data", (chunk) => serverLog.push(String(chunk)));
    const client = new Client({ name: "toolcell-peer-tests", version: "0" });
    try {
        await client.connect(transport, { timeout: TIMEOUT_MS });
        const { tools } = await client.listTools(undefined, { timeout: TIMEOUT_MS });
        check(
            JSON.stringify(tools.map((tool) => tool.name)) === JSON.stringify(TOOLS),
            `${mode}: tools/list gave ${tools.map((tool) => tool.name)}`,
        );
        const validator = new AjvJsonSchemaValidator();
        for (const tool of tools) validator.getValidator(tool.inputSchema);
        const byName = Object.fromEntries(tools.map((tool) => [tool.name, tool]));

        const variables = mode === "strict" ? [{ key: "x", value: 21 }] : { x: 21 };
        const calculator = await client.callTool(
            { name: "calculator", arguments: argumentsFor(byName.calculator, { expression: "x * 2", variables }) },
            undefined,
            { timeout: TIMEOUT_MS },
        );
        check(!calculator.isError, `${mode}: calculator failed: ${JSON.stringify(calculator.content)}`);
        check(calculator.structuredContent?.value === 42, `${mode}: calculator gave ${JSON.stringify(calculator)}`);

        const datetime = await client.callTool(
            {
                name: "datetime",
                arguments: argumentsFor(byName.datetime, {
                    operation: "add",
                    instant: "2024-03-10T08:30:00Z",
                    duration: "P1D",
                    time_zone: "UTC",
                }),
            },
            undefined,
            { timeout: TIMEOUT_MS },
        );
        check(!datetime.isError, `${mode}: datetime failed: ${JSON.stringify(datetime.content)}`);
        check(
            datetime.structuredContent?.unix_seconds === 1710145800,
            `${mode}: datetime gave ${JSON.stringify(datetime.structuredContent)}`,
        );
    } catch (error) {
        failures.push(`${mode}: ${error?.stack ?? error}\nserver stderr:\n${serverLog.join("")}`);
    } finally {
        await client.close();
    }
}

for (const mode of ["standard", "strict"]) await run(mode);

const unknownFormats = printed.filter((line) => line.includes("unknown format")).length;
process.stdout.write(
    `typescript sdk: ${printed.length} lines printed by the client (${unknownFormats} unknown format), ` +
        `${failures.length} failures\n`,
);
for (const line of printed) process.stdout.write(`  printed: ${line}\n`);
for (const failure of failures) process.stdout.write(`  FAILED: ${failure}\n`);
process.exit(printed.length || failures.length ? 1 : 0);
