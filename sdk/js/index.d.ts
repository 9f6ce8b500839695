// Types of toolcell-tool: write a toolcell tool in JavaScript. See README.md.

/** A JSON Schema (draft 2020-12), as a plain object. */
export type JsonSchema = { [keyword: string]: unknown };

/** What the host tells a tool about one call; never part of the parameters schema. */
export interface Context {
  /** The id of this call, as the model's provider issued it. */
  callId: string;
  /** Values the host application supplied (a user id, a locale); `{}` when none. */
  hostContext: Record<string, unknown>;
}

export interface ToolDefinition<Args = any, Result = unknown> {
  /** The name a model calls the tool by: 1-64 characters from `[a-zA-Z0-9_-]`. */
  name: string;
  /** What the tool does and when to use it, for the model: non-empty, at most 1024 characters. */
  description: string;
  /**
   * JSON Schema of the arguments object. `type: "object"`, `additionalProperties: false` and
   * `required: []` are filled in when absent; a `type` other than `"object"` is refused.
   */
  parameters: JsonSchema;
  /**
   * Runs the tool on arguments the host has already checked against `parameters`. Returns
   * (or resolves to) any JSON value; `undefined` is sent as `null`. Throw `InvalidArguments`
   * or `Failed`; anything else thrown reaches the model only as a generic failure.
   */
  run(args: Args, context: Context): Result | Promise<Result>;
  /** JSON Schema of the result; the host rejects results that do not match it. */
  outputSchema?: JsonSchema;
  /** A short name for people: non-empty, at most 128 characters, one line. */
  title?: string;
  /** MCP hint: the tool changes nothing outside its result. */
  readOnly?: boolean;
  /** MCP hint: the tool may delete or overwrite things (contradicts `readOnly: true`). */
  destructive?: boolean;
  /** MCP hint: calling again with the same arguments has no further effect. */
  idempotent?: boolean;
  /** MCP hint: the tool reaches an open world (the web); unsaid, the host derives it from `http`. */
  openWorld?: boolean;
  /** Hosts the tool fetches from (`api.example.com`, `*.example.com`); enables `fetch`. */
  http?: string[];
  /** Directories the tool reads, by guest path. */
  dirs?: string[];
  /** Directories the tool writes, by guest path. */
  writableDirs?: string[];
  /** Environment variables the tool reads. */
  env?: string[];
}

/** A defined tool: the definition checked, completed and frozen. */
export interface Tool<Args = any, Result = unknown> extends Readonly<
  Required<Pick<ToolDefinition<Args, Result>, "name" | "description" | "parameters" | "run">>
> {
  readonly outputSchema: JsonSchema | undefined;
  readonly title: string | undefined;
  readonly readOnly: boolean | undefined;
  readonly destructive: boolean | undefined;
  readonly idempotent: boolean | undefined;
  readonly openWorld: boolean | undefined;
  readonly http: readonly string[];
  readonly dirs: readonly string[];
  readonly writableDirs: readonly string[];
  readonly env: readonly string[];
}

/** Defines a tool; the module's default export must be its result. Throws a TypeError that
 * says what to fix when the definition would not load in a host. */
export function tool<Args = any, Result = unknown>(definition: ToolDefinition<Args, Result>): Tool<Args, Result>;

/** The arguments are well-formed but unusable; the message tells the model what to change.
 * The host reports it as `rejected_arguments`. */
export class InvalidArguments extends Error {
  constructor(message: string);
  readonly name: "InvalidArguments";
}

/** The tool could not do its work for a reason other than the arguments. The host reports it
 * as `tool_failed`; `retryable` says whether the same call may succeed later. */
export class Failed extends Error {
  constructor(message: string, options?: { retryable?: boolean; cause?: unknown });
  readonly name: "Failed";
  readonly retryable: boolean;
}

/**
 * Calls a tool natively, as the host would: `argumentsJson` is checked against the tool's
 * schema first (rejecting with `InvalidArguments` in the host's words), then `run` runs.
 * Resolves to the result as JSON text; rejects with `InvalidArguments` or `Failed` (any other
 * error becomes a `Failed` with the model's generic message, the original as its `cause`).
 */
export function invokeJson(
  tool: Tool,
  argumentsJson: string,
  context?: { callId?: string; hostContext?: Record<string, unknown> },
): Promise<string>;
