// What works in Node but not in the component's engine (StarlingMonkey, built without ICU),
// found in the project's own sources so the build can warn: `npm test` passes natively, and
// the call fails or answers differently only in the component. Measured in a component built
// by this SDK (componentize-js 0.23.0):
//   typeof Intl                              "undefined"; `new Intl.NumberFormat()` throws
//                                            ReferenceError: Intl is not defined
//   (1234567.891).toLocaleString("en-US")    "1234567.891" (Node: "1,234,567.891")
//   new Date(0).toLocaleDateString("en-US")  "01/01/1970" (Node: "1/1/1970")
//   "e\u0301".normalize("NFC")               TypeError: normalize is not a function
//   /\p{L}/u                                 SyntaxError: invalid property name in regular expression

/** Each construct: how to find it in code without comments, and what it does in the component. */
const UNSUPPORTED = [
  {
    name: "`\\p{…}` in a regular expression",
    pattern: /\\[pP]\{/,
    effect: "it throws SyntaxError: invalid property name in regular expression; spell out the characters instead",
  },
  {
    name: "`Intl`",
    pattern: /\bIntl\b/,
    effect: "it throws ReferenceError: Intl is not defined; format numbers and dates yourself",
  },
  {
    name: "`toLocaleString`",
    pattern: /\.toLocale(?:Date|Time)?String\s*\(/,
    effect: 'it ignores the locale: (1234567.891).toLocaleString("en-US") gives "1234567.891", not "1,234,567.891"',
  },
  {
    name: "`String.prototype.normalize`",
    pattern: /\.normalize\s*\(\s*(?:\)|["'`]NF)/,
    effect: "it throws TypeError: normalize is not a function",
  },
];

/**
 * The warnings for `sources` ([{ file, code }], comments already removed): one per file and
 * construct, saying what happens in the component instead.
 */
export function engineWarnings(sources) {
  const warnings = [];
  for (const { file, code } of sources) {
    for (const { name, pattern, effect } of UNSUPPORTED) {
      if (pattern.test(code)) {
        warnings.push(`${file} uses ${name}, which works in Node but not in the component: ${effect}`);
      }
    }
  }
  return warnings;
}

/**
 * The project's own modules (not the SDK's, not node_modules'), without their comments
 * (esbuild drops them), for `engineWarnings`. `inputs` are the bundle's metafile inputs,
 * relative to the project's folder.
 */
export async function projectSources(esbuild, inputs, projectDir, readFile) {
  const sources = [];
  for (const input of inputs) {
    if (input.startsWith("..") || input.includes("node_modules/") || input.includes(":")) continue;
    if (!/\.[cm]?[jt]s$/.test(input)) continue;
    const text = readFile(`${projectDir}/${input}`);
    const loader = input.endsWith("ts") ? "ts" : "js";
    const { code } = await esbuild.transform(text, { loader, legalComments: "none" });
    sources.push({ file: input, code });
  }
  return sources;
}
