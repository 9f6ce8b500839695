// `tool({...})`: a tool's definition, checked when it is made, so that a mistake the host
// would refuse at load (a bad name, an empty description, a schema that is not an object)
// fails at once, in the author's terms, natively and at build time alike.

import { closest } from "./schema/suggest.js";
import { charCount, isObject } from "./schema/text.js";

/** Brands what `tool()` returns; registered, so two copies of the SDK recognise each other. */
const TOOL = Symbol.for("toolcell-tool.tool");

const NAME = /^[a-zA-Z0-9_-]{1,64}$/;
const MAX_DESCRIPTION_CHARS = 1024;
const MAX_TITLE_CHARS = 128;
const HINTS = ["readOnly", "destructive", "idempotent", "openWorld"];
const CAPABILITIES = ["http", "dirs", "writableDirs", "env"];
const OPTIONS = ["name", "description", "parameters", "run", "outputSchema", "title", ...HINTS, ...CAPABILITIES];

function refuse(message) {
  throw new TypeError(`tool(): ${message}`);
}

export function isTool(value) {
  return isObject(value) && value[TOOL] === true;
}

/** A JSON document's own copy, frozen: the schema a tool declares cannot change later. */
function frozenJson(value, what) {
  let copy;
  try {
    copy = JSON.parse(JSON.stringify(value));
  } catch (error) {
    refuse(`${what} must be JSON (${error.message})`);
  }
  const freeze = (node) => {
    if (node !== null && typeof node === "object") Object.values(Object.freeze(node)).forEach(freeze);
    return node;
  };
  return freeze(copy);
}

/** The parameters schema as the host wants it: an object that refuses unknown properties
 * and always lists what is required (some model providers refuse a schema without it). */
function parametersSchema(parameters) {
  if (!isObject(parameters)) {
    refuse('`parameters` must be a JSON Schema object, e.g. { properties: { text: { type: "string" } } }');
  }
  if (parameters.type !== undefined && parameters.type !== "object") {
    refuse(
      `\`parameters\` must describe an object (\`type: "object"\`), because arguments are always a JSON object; got type ${JSON.stringify(parameters.type)}`,
    );
  }
  if (parameters.properties !== undefined && !isObject(parameters.properties)) {
    refuse("`parameters.properties` must be an object mapping each parameter's name to its schema");
  }
  const required = parameters.required ?? [];
  if (!Array.isArray(required) || !required.every((name) => typeof name === "string")) {
    refuse("`parameters.required` must be an array of parameter names");
  }
  const schema = { type: "object", ...parameters };
  schema.additionalProperties ??= false;
  schema.required ??= [];
  if (schema.additionalProperties === false) {
    const undeclared = required.find((name) => !Object.hasOwn(schema.properties ?? {}, name));
    if (undeclared !== undefined) {
      refuse(
        `\`parameters.required\` lists \`${undeclared}\`, which \`parameters.properties\` does not declare: no call could pass`,
      );
    }
  }
  return frozenJson(schema, "`parameters`");
}

function checkTitle(title) {
  if (title === undefined) return undefined;
  if (typeof title !== "string" || title.trim() === "") {
    refuse('`title` must be a non-empty string, a short name for people such as "Word Count"');
  }
  const trimmed = title.trim();
  if (charCount(trimmed) > MAX_TITLE_CHARS) {
    refuse(`\`title\` has ${charCount(trimmed)} characters; at most ${MAX_TITLE_CHARS} are allowed`);
  }
  if (/[\u0000-\u001f\u007f-\u009f]/.test(trimmed)) {
    refuse("`title` must be one line of plain text, without control characters");
  }
  return trimmed;
}

function stringList(value, option) {
  if (value === undefined) return Object.freeze([]);
  if (!Array.isArray(value) || !value.every((item) => typeof item === "string" && item !== "")) {
    refuse(`\`${option}\` must be an array of non-empty strings`);
  }
  return Object.freeze([...value]);
}

/**
 * Defines a tool. Returns the definition, checked, completed and frozen: `parameters` gets
 * `type: "object"`, `additionalProperties: false` and `required: []` where it says nothing.
 */
export function tool(definition) {
  if (!isObject(definition)) refuse("takes one object: { name, description, parameters, run }");
  for (const option of Object.keys(definition)) {
    if (!OPTIONS.includes(option)) {
      const guess = closest(option, OPTIONS, 1)[0];
      refuse(
        `\`${option}\` is not an option${guess ? `; did you mean \`${guess}\`?` : "."} Options: ${OPTIONS.join(", ")}`,
      );
    }
  }
  const { name, description, parameters, run, outputSchema } = definition;
  if (typeof name !== "string" || !NAME.test(name)) {
    refuse(
      `the name ${JSON.stringify(name)} is invalid: it must be 1-64 characters from a-z, A-Z, 0-9, \`_\` and \`-\``,
    );
  }
  if (typeof description !== "string" || description.trim() === "") {
    refuse(`tool \`${name}\` needs a description: what it does and when to use it, for the model`);
  }
  if (charCount(description.trim()) > MAX_DESCRIPTION_CHARS) {
    refuse(
      `tool \`${name}\` has a description of ${charCount(description.trim())} characters; model providers accept at most ${MAX_DESCRIPTION_CHARS}`,
    );
  }
  if (typeof run !== "function") refuse(`tool \`${name}\` needs \`run\`: the function (args, context) => result`);
  if (outputSchema !== undefined && !isObject(outputSchema)) refuse("`outputSchema` must be a JSON Schema object");
  for (const hint of HINTS) {
    if (definition[hint] !== undefined && typeof definition[hint] !== "boolean")
      refuse(`\`${hint}\` must be true or false`);
  }
  if (definition.readOnly === true && definition.destructive === true) {
    refuse(
      "`readOnly` and `destructive` contradict each other: a read-only tool changes nothing; declare only the one that is true",
    );
  }
  return Object.freeze({
    [TOOL]: true,
    name,
    description: description.trim(),
    parameters: parametersSchema(parameters),
    outputSchema: outputSchema === undefined ? undefined : frozenJson(outputSchema, "`outputSchema`"),
    run,
    title: checkTitle(definition.title),
    ...Object.fromEntries(HINTS.map((hint) => [hint, definition[hint]])),
    ...Object.fromEntries(CAPABILITIES.map((option) => [option, stringList(definition[option], option)])),
  });
}
