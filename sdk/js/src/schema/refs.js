// Local references inside one schema (`#`, `#/$defs/X`), and keyword lookup through them.

/** `$ref` hops followed from one schema: a cycle of references must end. */
const MAX_REF_HOPS = 16;

function unescapeToken(token) {
  return token.replaceAll("~1", "/").replaceAll("~0", "~");
}

function percentDecode(token) {
  try {
    return decodeURIComponent(token);
  } catch {
    return token;
  }
}

/** The schema a local reference points at in `root`; undefined for anchors and other documents. */
export function resolveRef(root, reference) {
  if (typeof reference !== "string" || !reference.startsWith("#")) return undefined;
  const fragment = reference.slice(1);
  if (fragment === "") return root;
  if (!fragment.startsWith("/")) return undefined;
  let node = root;
  for (const token of fragment.slice(1).split("/")) {
    if (node === null || typeof node !== "object") return undefined;
    node = node[unescapeToken(percentDecode(token))];
  }
  return node;
}

/** `keyword` of `node`, else of what its `$ref` chain points at: a property's own
 * `description` wins over its type's. */
export function lookup(root, node, keyword) {
  for (let hop = 0; hop < MAX_REF_HOPS && node !== null && typeof node === "object"; hop += 1) {
    if (Object.hasOwn(node, keyword)) return node[keyword];
    node = resolveRef(root, node.$ref);
  }
  return undefined;
}
