// The string formats JSON Schema defines, in the words a model reads for them: a copy of the
// host's one table (toolcell_schema::formats, schema/src/formats.rs). test/corpus.test.js
// checks it against schema/corpus/formats.json, which the host's tests check against the
// original, so the copies cannot drift.

/** Every format of JSON Schema 2020-12's format vocabulary, with its words. */
export const STANDARD_FORMATS = [
  ["date-time", "a date-time like 2024-03-10T08:30:00Z"],
  ["date", "a date like 2024-03-10"],
  ["time", "a time like 08:30:00Z"],
  ["duration", "an ISO 8601 duration like P1DT2H"],
  ["email", "an email address"],
  ["idn-email", "an email address"],
  ["hostname", "a host name"],
  ["idn-hostname", "a host name"],
  ["ipv4", "an IPv4 address"],
  ["ipv6", "an IPv6 address"],
  ["uri", "an absolute URI"],
  ["uri-reference", "a URI or relative reference"],
  ["iri", "an absolute URI"],
  ["iri-reference", "a URI or relative reference"],
  ["uuid", "a UUID"],
  ["uri-template", "a URI template"],
  ["json-pointer", "a JSON Pointer like /a/0"],
  ["relative-json-pointer", "a relative JSON Pointer like 1/a"],
  ["regex", "a valid regular expression"],
];

const WORDS = new Map(STANDARD_FORMATS);

/** What a value of a standard `format` looks like ("a date like 2024-03-10"); null for others. */
export function formatWords(format) {
  return WORDS.get(format) ?? null;
}

/** The range [low, high] (either null when open) of schemars' integer formats, as the host reads them. */
const INTEGER_RANGES = new Map([
  ["uint8", ["0", "255"]],
  ["uint16", ["0", "65535"]],
  ["uint32", ["0", "4294967295"]],
  ["uint", ["0", null]],
  ["uint64", ["0", null]],
  ["uint128", ["0", null]],
  ["usize", ["0", null]],
  ["int8", ["-128", "127"]],
  ["int16", ["-32768", "32767"]],
  ["int32", ["-2147483648", "2147483647"]],
]);

/** The bounds an integer `format` implies, as [low, high] strings; [null, null] for others. */
export function integerRange(format) {
  return INTEGER_RANGES.get(format) ?? [null, null];
}
