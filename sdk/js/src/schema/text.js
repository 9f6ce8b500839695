// How values, names and limits are written in messages for a model. Each function mirrors
// the host's own (schema/src/words/), so that a native test reads the same words a model would.
//
// No `\p{…}` regexes and no Intl here: the guest engine has no ICU.

const ELLIPSIS = "…";
/** A value, name or pattern quoted in a message is cut to this many bytes. */
const MAX_QUOTED_BYTES = 60;
/** An allowed value shown in a list is cut to this many bytes. */
const MAX_LISTED_BYTES = 40;
/** A property description quoted with a missing property is cut to this many bytes. */
const MAX_DESCRIPTION_BYTES = 150;

/** Bytes of `text` in UTF-8: the host's limits count bytes, not UTF-16 units. */
export function utf8Length(text) {
  let bytes = 0;
  for (const char of text) {
    const code = char.codePointAt(0);
    bytes += code < 0x80 ? 1 : code < 0x800 ? 2 : code < 0x10000 ? 3 : 4;
  }
  return bytes;
}

/** Unicode characters (code points), as Rust's `chars().count()` counts them. */
export function charCount(text) {
  let count = 0;
  for (const _ of text) count += 1;
  return count;
}

/** `text` cut to at most `maxBytes` UTF-8 bytes, the `…` that marks a cut included. */
export function truncated(text, maxBytes) {
  if (utf8Length(text) <= maxBytes) return text;
  const budget = Math.max(0, maxBytes - utf8Length(ELLIPSIS));
  let bytes = 0;
  let end = 0;
  for (const char of text) {
    const size = utf8Length(char);
    if (bytes + size > budget) break;
    bytes += size;
    end += char.length;
  }
  return text.slice(0, end) + ELLIPSIS;
}

/** A string as JSON, cut short. */
export function quoted(text) {
  return JSON.stringify(truncated(text, MAX_QUOTED_BYTES));
}

function isControl(char) {
  const code = char.codePointAt(0);
  return code < 0x20 || (code >= 0x7f && code < 0xa0);
}

/** A name in backticks, or as a JSON string when backticks would not delimit it. */
export function code(text) {
  if (text === "" || text.includes("`") || [...text].some(isControl)) return quoted(text);
  return "`" + truncated(text, MAX_QUOTED_BYTES) + "`";
}

/** "1 character", "3 entries". */
export function countOf(count, unit) {
  if (count === 1) return `1 ${unit}`;
  return unit === "entry" ? `${count} entries` : `${count} ${unit}s`;
}

/** "a, b or c". */
export function joinOr(words) {
  if (words.length <= 1) return words.join("");
  return `${words.slice(0, -1).join(", ")} or ${words[words.length - 1]}`;
}

export function isObject(value) {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

/** A value with what it is: `the string "5"`, `the number 5`, `an array of 3 items`. */
export function described(value) {
  if (value === null) return "null";
  if (typeof value === "boolean") return String(value);
  if (typeof value === "number") return `the number ${value}`;
  if (typeof value === "string") return `the string ${quoted(value)}`;
  if (Array.isArray(value))
    return value.length === 0 ? "an empty array" : `an array of ${countOf(value.length, "item")}`;
  return Object.keys(value).length === 0 ? "an empty object" : "an object";
}

/** A value after "got": numbers and strings as written, containers summarised. */
export function shown(value) {
  if (typeof value === "number") return String(value);
  if (typeof value === "string") return quoted(value);
  return described(value);
}

/** A value as the subject of a sentence: a string in backticks, else described. */
export function subject(value) {
  return typeof value === "string" ? code(value) : described(value);
}

function isAlphanumeric(char) {
  if (/^[A-Za-z0-9]$/.test(char)) return true;
  // Outside ASCII, a cased letter is close enough to Rust's `is_alphanumeric` for a label.
  return char.codePointAt(0) > 0x7f && char.toLowerCase() !== char.toUpperCase();
}

function isPlainName(text) {
  return text !== "" && [...text].every((char) => isAlphanumeric(char) || "_-.:/+@#".includes(char));
}

/** A value as the host's serde_json writes it: compact, object keys sorted. */
export function json(value) {
  if (Array.isArray(value)) return `[${value.map(json).join(",")}]`;
  if (isObject(value)) {
    // Not through an object: JavaScript puts integer-like keys first, whatever the order.
    const members = Object.keys(value)
      .sort()
      .map((key) => `${JSON.stringify(key)}:${json(value[key])}`);
    return `{${members.join(",")}}`;
  }
  return JSON.stringify(value);
}

/** An allowed value in a list: plain names bare, anything else as JSON, cut short. */
export function listed(value) {
  if (typeof value === "string") {
    return isPlainName(value) ? truncated(value, MAX_LISTED_BYTES) : JSON.stringify(truncated(value, MAX_LISTED_BYTES));
  }
  return truncated(json(value), MAX_LISTED_BYTES);
}

function isUppercase(char) {
  return char !== undefined && char !== char.toLowerCase() && char === char.toUpperCase();
}

/** The first sentence of a description if it is short, else its start. */
export function firstSentence(description) {
  const flat = description.split(/\s+/).filter(Boolean).join(" ");
  let search = 0;
  for (;;) {
    const dot = flat.indexOf(". ", search);
    if (dot < 0) break;
    const end = dot + 1;
    const head = flat.slice(0, end);
    const nextIsCapital = isUppercase([...flat.slice(end).trimStart()][0]);
    if (nextIsCapital && !head.endsWith("e.g.") && !head.endsWith("i.e.")) {
      return utf8Length(head) <= MAX_DESCRIPTION_BYTES ? head : truncated(flat, MAX_DESCRIPTION_BYTES);
    }
    search = end;
  }
  return truncated(flat, MAX_DESCRIPTION_BYTES);
}
