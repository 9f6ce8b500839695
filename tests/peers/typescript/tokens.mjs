// What `tools/list` costs a model in tokens: the tools as the official TypeScript SDK's client
// receives them from `toolcell serve`, and from `toolcell serve --code-mode` (`search` and
// `execute` only), counted with js-tiktoken's o200k_base (the encoding of OpenAI's GPT-4o and
// later models). Prints a table; fails when code mode's list is not the smaller one.
//
//     node tokens.mjs NPM_DIR [-- extra serve arguments, e.g. --tools-dir DIR]
//
// NPM_DIR is where `npm ci` installed tests/peers/package.json; the binary is TOOLCELL_BIN.

import { createRequire } from "node:module";
import path from "node:path";
import process from "node:process";

const [npmDir, ...rest] = process.argv.slice(2);
const binary = process.env.TOOLCELL_BIN;
if (!npmDir || !binary) {
    process.stderr.write("usage: TOOLCELL_BIN=... node tokens.mjs NPM_DIR [-- serve arguments]\n");
    process.exit(2);
}
const serveArgs = rest[0] === "--" ? rest.slice(1) : rest;
const require = createRequire(path.resolve(npmDir, "package.json"));
const { Client } = require("@modelcontextprotocol/sdk/client/index.js");
const { StdioClientTransport, getDefaultEnvironment } = require("@modelcontextprotocol/sdk/client/stdio.js");
const { Tiktoken } = require("js-tiktoken/lite");
const o200kBase = require("js-tiktoken/ranks/o200k_base");

const encoding = new Tiktoken(o200kBase.default ?? o200kBase);
const TIMEOUT_MS = 120_000;

/** The tools `toolcell serve ARGS` lists, as the client received them. */
async function listed(args) {
    const transport = new StdioClientTransport({
        command: binary,
        args: ["serve", ...serveArgs, ...args],
        env: { ...getDefaultEnvironment(), ...process.env },
        stderr: "ignore",
    });
    const client = new Client({ name: "toolcell-tokens", version: "1.0.0" });
    await client.connect(transport, { timeout: TIMEOUT_MS });
    try {
        return (await client.listTools(undefined, { timeout: TIMEOUT_MS })).tools;
    } finally {
        await client.close();
    }
}

/** Tokens of the list as a model is given it: each tool's JSON, as the provider SDKs send it. */
const tokens = (tools) => encoding.encode(JSON.stringify(tools)).length;

const folder = await listed([]);
const codeMode = await listed(["--code-mode"]);
const [folderTokens, codeModeTokens] = [tokens(folder), tokens(codeMode)];
const label = serveArgs.length ? serveArgs.join(" ") : "the standard tools";
console.log(`tools/list of ${label}, in o200k_base tokens (js-tiktoken):`);
console.log(`| ${folder.length} tools | ${folderTokens} |`);
console.log(`| code mode (${codeMode.map((tool) => tool.name).join(", ")}) | ${codeModeTokens} |`);
if (codeMode.map((tool) => tool.name).sort().join() !== "execute,search" || codeModeTokens >= folderTokens) {
    console.error("tokens: code mode should list `search` and `execute` only, in fewer tokens");
    process.exit(1);
}
