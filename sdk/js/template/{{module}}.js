// The `{{name}}` tool. Make the example below your own: `description` is what a model reads to
// decide when to call the tool, each parameter's `description` tells it what to send, and
// `parameters` is the JSON Schema the host checks every call against before `run` runs.
//
// `npm test` runs the tests beside it natively; `toolcell build` compiles it to a component.
// In the component, code at the top level of a module runs once, when the component is built;
// and the engine has no ICU: no Intl, toLocaleString or String.prototype.normalize, and no
// `\p{...}` in regular expressions.

import { InvalidArguments, tool } from "toolcell-tool";

/** Counters for each `unit` the schema allows. */
const COUNT = {
  words: (text) => text.split(/\s+/).filter(Boolean).length,
  lines: (text) => text.split("\n").length - (text.endsWith("\n") ? 1 : 0),
  characters: (text) => [...text].length, // code points, not UTF-16 units
};

export default tool({
  name: "{{name}}",
  title: "{{title}}", // a short name for people
  description: "Count the words, lines or characters in a text. Use it when asked how long a text is.",
  // Behaviour hints for clients: it changes nothing, and the same text gives the same count.
  readOnly: true,
  idempotent: true,
  parameters: {
    properties: {
      text: { type: "string", minLength: 1, maxLength: 100000, description: "The text to measure." },
      unit: {
        type: "string",
        enum: ["words", "lines", "characters"],
        description: "What to count; words when omitted.",
      },
    },
    // `unit` is optional. The SDK adds `additionalProperties: false`: unknown arguments are refused.
    required: ["text"],
  },
  // `args` already matches the schema: the host checked it before this runs.
  run({ text, unit = "words" }) {
    const count = COUNT[unit](text);
    if (count === 0) {
      // A tool's own refusal: the model is told to change its arguments.
      throw new InvalidArguments("`text` is only whitespace: give the text to measure");
    }
    return count;
  },
});
