// The `slugify` tool: an example of a tool written in JavaScript, laid out as
// `toolcell new slugify --lang js` lays out a project (its SDK dependency points into this
// repository instead). Build it with `toolcell build` or `node ../../build.mjs . -o slugify.wasm`.

import { InvalidArguments, tool } from "toolcell-tool";

// The engine has no ICU, so `text.normalize("NFD")` cannot strip accents: a table does it for
// the Latin letters people write most. Built at the top level, so at build time, not per call.
const FOLDED = new Map(
  Object.entries({
    a: "àáâãäåāă",
    c: "çćč",
    d: "ďđð",
    e: "èéêëēėęě",
    i: "ìíîïīį",
    l: "łľ",
    n: "ñńň",
    o: "òóôõöøō",
    r: "ř",
    s: "śšş",
    t: "ťţ",
    u: "ùúûüūůű",
    y: "ýÿ",
    z: "źżž",
    ss: "ß",
    ae: "æ",
    oe: "œ",
    th: "þ",
  }).flatMap(([ascii, letters]) => [...letters].map((letter) => [letter, ascii])),
);

function fold(text) {
  return [...text].map((char) => FOLDED.get(char) ?? char).join("");
}

/** `slug` cut to at most `max` characters, at a separator when there is one to cut at. */
function shorten(slug, separator, max) {
  if (slug.length <= max) return slug;
  const cut = slug.lastIndexOf(separator, max);
  return cut > 0 ? slug.slice(0, cut) : slug.slice(0, max);
}

export default tool({
  name: "slugify",
  title: "Slugify",
  description:
    "Turn a text into a slug: lower-case ASCII letters and digits, its words joined by a separator. " +
    "Use it to make a URL path, a file name or an identifier from a title.",
  readOnly: true,
  idempotent: true,
  parameters: {
    properties: {
      text: {
        type: "string",
        minLength: 1,
        maxLength: 10000,
        description: "The text to make a slug of, e.g. a title.",
      },
      separator: { type: "string", enum: ["-", "_", "."], description: "What joins the words; `-` when omitted." },
      max_length: {
        type: "integer",
        minimum: 1,
        maximum: 200,
        description: "The longest slug to return, cut between words where possible; no limit when omitted.",
      },
    },
    required: ["text"],
  },
  // Declared, so the host checks every result against it (and MCP clients see its shape).
  outputSchema: {
    type: "object",
    properties: { slug: { type: "string", description: "The slug." } },
    required: ["slug"],
  },
  run({ text, separator = "-", max_length: max = Infinity }) {
    const words = fold(text.toLowerCase())
      .split(/[^a-z0-9]+/)
      .filter(Boolean);
    if (words.length === 0) {
      throw new InvalidArguments("`text` has no letters or digits to make a slug of: give a title or a phrase");
    }
    return { slug: shorten(words.join(separator), separator, max) };
  },
});
