// "Did you mean …?": the names a model probably meant, ranked exactly as the host ranks them
// (schema/src/words/suggest.rs): case is ignored, a swap of two neighbouring letters is one edit,
// and a name containing the other (`expr` in `expression`) is close too.

import { utf8Length } from "./text.js";

/** Names are compared on at most this many characters: the cost is the product of lengths. */
const MAX_COMPARED_CHARS = 64;
/** `to` is inside far too many names for containment to mean anything. */
const MIN_CONTAINED_CHARS = 3;

function head(text) {
  return [...text].slice(0, MAX_COMPARED_CHARS).join("");
}

/** Optimal string alignment distance between two names, ignoring case. */
export function nameDistance(first, second) {
  const a = [...first.toLowerCase()];
  const b = [...second.toLowerCase()];
  let before = new Array(b.length + 1).fill(0);
  let previous = Array.from({ length: b.length + 1 }, (_, j) => j);
  let current = new Array(b.length + 1).fill(0);
  for (let i = 0; i < a.length; i += 1) {
    current[0] = i + 1;
    for (let j = 0; j < b.length; j += 1) {
      let best = Math.min(previous[j] + (a[i] === b[j] ? 0 : 1), previous[j + 1] + 1, current[j] + 1);
      if (i > 0 && j > 0 && a[i - 1] === b[j] && a[i] === b[j - 1]) best = Math.min(best, before[j - 1] + 1);
      current[j + 1] = best;
    }
    [before, previous, current] = [previous, current, before];
  }
  return previous[b.length];
}

/** Every distinct candidate with its distance to `word`, nearest first, ties by name. */
function rank(word, candidates) {
  const ranked = candidates.map((candidate) => [nameDistance(word, head(candidate)), candidate]);
  ranked.sort(([d1, c1], [d2, c2]) => d1 - d2 || (c1 < c2 ? -1 : c1 > c2 ? 1 : 0));
  return ranked.filter(([d, c], i) => i === 0 || ranked[i - 1][0] !== d || ranked[i - 1][1] !== c);
}

function containsIgnoringCase(word, candidate) {
  const a = word.toLowerCase();
  const b = head(candidate).toLowerCase();
  const [shorter, longer] = utf8Length(a) <= utf8Length(b) ? [a, b] : [b, a];
  return [...shorter].length >= MIN_CONTAINED_CHARS && longer.includes(shorter);
}

function isClose(word, candidate, distance) {
  const wordChars = [...word].length;
  const candidateChars = [...candidate].length;
  const withinEdits = distance <= Math.max(Math.floor(candidateChars / 3), 2);
  // Short names two edits apart (`find` and `end`) have too little in common to be a typo.
  const mostlyKept = distance * 2 < Math.max(wordChars, candidateChars);
  return (withinEdits && mostlyKept) || containsIgnoringCase(word, candidate);
}

/** The candidates close enough to `word` to suggest, closest first, at most `max`. */
export function closest(word, candidates, max) {
  const headed = head(word);
  return rank(headed, candidates)
    .filter(([distance, candidate]) => isClose(headed, candidate, distance))
    .slice(0, max)
    .map(([, candidate]) => candidate);
}

/** The `max` candidates nearest to `word`, however far. */
export function nearest(word, candidates, max) {
  return rank(head(word), candidates)
    .slice(0, max)
    .map(([, candidate]) => candidate);
}
