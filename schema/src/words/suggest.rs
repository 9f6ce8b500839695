//! "Did you mean …?": finding the names a model probably meant.
//!
//! Used for unknown tools, unknown properties and values outside an enum. Models misspell in
//! predictable ways (case, a dropped or swapped letter, `_` vs none, a shortened name), so
//! the distance ignores case and counts a swap of two neighbouring letters as one edit, and
//! a name that contains the other (`expr` in `expression`) is close too.

/// Names are compared on at most this many chars: a model can send a megabyte as a "name",
/// and the comparison costs the product of both lengths.
const MAX_COMPARED_CHARS: usize = 64;

/// The shorter name must have at least this many chars for containment to count as close:
/// `to` is inside far too many names to mean anything.
const MIN_CONTAINED_CHARS: usize = 3;

/// Edit distance between two names, ignoring case: insertions, deletions, substitutions and
/// swaps of two adjacent chars each cost one (optimal string alignment distance).
///
/// Costs `a.len() * b.len()`; callers with untrusted input go through [`closest`] or
/// [`nearest`], which bound the length.
pub(crate) fn name_distance(a: &str, b: &str) -> usize {
    let a: Vec<char> = a.to_lowercase().chars().collect();
    let b: Vec<char> = b.to_lowercase().chars().collect();
    // Three rolling rows of the DP table: the swap rule looks two rows back.
    let mut before: Vec<usize> = vec![0; b.len() + 1];
    let mut previous: Vec<usize> = (0..=b.len()).collect();
    let mut current: Vec<usize> = vec![0; b.len() + 1];
    for (i, &ca) in a.iter().enumerate() {
        current[0] = i + 1;
        for (j, &cb) in b.iter().enumerate() {
            let substitution = previous[j] + usize::from(ca != cb);
            let mut best = substitution.min(previous[j + 1] + 1).min(current[j] + 1);
            let swapped = i > 0 && j > 0 && a[i - 1] == cb && ca == b[j - 1];
            if swapped {
                best = best.min(before[j - 1] + 1);
            }
            current[j + 1] = best;
        }
        std::mem::swap(&mut before, &mut previous);
        std::mem::swap(&mut previous, &mut current);
    }
    previous[b.len()]
}

/// The candidates close enough to `word` to suggest, closest first (ties by name), at most
/// `max` of them. An exact match ignoring case counts, at distance 0.
///
/// Close means within `max(2, len / 3)` edits (`len` in chars of the candidate) and fewer
/// than half the chars of the longer name, or one name containing the other (at least 3
/// chars).
pub fn closest<'a>(word: &str, candidates: impl IntoIterator<Item = &'a str>, max: usize) -> Vec<&'a str> {
    let word = head_chars(word, MAX_COMPARED_CHARS);
    let ranked =
        rank(word, candidates).into_iter().filter(|(distance, candidate)| is_close(word, candidate, *distance));
    ranked.map(|(_, candidate)| candidate).take(max).collect()
}

/// The `max` candidates nearest to `word`, however far: for showing a few of a long list of
/// allowed values when none is close enough for [`closest`].
pub fn nearest<'a>(word: &str, candidates: impl IntoIterator<Item = &'a str>, max: usize) -> Vec<&'a str> {
    let word = head_chars(word, MAX_COMPARED_CHARS);
    rank(word, candidates).into_iter().map(|(_, candidate)| candidate).take(max).collect()
}

/// Every distinct candidate with its distance to `word`, nearest first, ties by name.
fn rank<'a>(word: &str, candidates: impl IntoIterator<Item = &'a str>) -> Vec<(usize, &'a str)> {
    let mut ranked: Vec<(usize, &str)> = candidates
        .into_iter()
        .map(|candidate| (name_distance(word, head_chars(candidate, MAX_COMPARED_CHARS)), candidate))
        .collect();
    ranked.sort_unstable();
    ranked.dedup();
    ranked
}

fn is_close(word: &str, candidate: &str, distance: usize) -> bool {
    let word_chars = word.chars().count();
    let candidate_chars = candidate.chars().count();
    let within_edits = distance <= (candidate_chars / 3).max(2);
    // Short names two edits apart (`find` and `end`) have too little in common to be a typo.
    let mostly_kept = distance * 2 < word_chars.max(candidate_chars);
    (within_edits && mostly_kept) || contains_ignoring_case(word, candidate)
}

fn contains_ignoring_case(word: &str, candidate: &str) -> bool {
    let (word, candidate) = (word.to_lowercase(), head_chars(candidate, MAX_COMPARED_CHARS).to_lowercase());
    let (shorter, longer) = if word.len() <= candidate.len() { (word, candidate) } else { (candidate, word) };
    shorter.chars().count() >= MIN_CONTAINED_CHARS && longer.contains(&shorter)
}

/// The value whose symbol `word` is, among `(value, description)` pairs: a documented
/// constant's description ends with its symbol in parentheses (`kilometer (km)`), and models
/// often send the symbol (`km`) where the value is the name.
pub fn symbol_owner<'a>(word: &str, described: &[(&'a str, &str)]) -> Option<&'a str> {
    let word = head_chars(word, MAX_COMPARED_CHARS).trim();
    symbols(described).find(|(_, symbol)| *symbol == word).map(|(value, _)| value)
}

/// [`symbol_owner`] ignoring case (`KM`), when only one value's symbol matches so: `mb`
/// could be `MB` or `Mb`.
pub fn symbol_owner_ignoring_case<'a>(word: &str, described: &[(&'a str, &str)]) -> Option<&'a str> {
    let word = head_chars(word, MAX_COMPARED_CHARS).trim().to_lowercase();
    let mut owners = symbols(described).filter(|(_, symbol)| symbol.to_lowercase() == word).map(|(value, _)| value);
    match (owners.next(), owners.next()) {
        (Some(value), None) => Some(value),
        _ => None,
    }
}

/// Each value with its symbol, for the values whose description ends with one.
fn symbols<'a, 'd>(described: &'d [(&'a str, &'d str)]) -> impl Iterator<Item = (&'a str, &'d str)> {
    described.iter().filter_map(|(value, description)| Some((*value, symbol(description)?)))
}

/// The symbol a description ends with in parentheses: `km` of `kilometer (km)`. A short one
/// only: a parenthesized remark (`(the default)`) is a sentence, not a symbol.
fn symbol(description: &str) -> Option<&str> {
    const MAX_SYMBOL_CHARS: usize = 12;
    let inner = description.trim_end().strip_suffix(')')?;
    let symbol = inner.rsplit_once('(')?.1.trim();
    let short = !symbol.is_empty() && symbol.chars().count() <= MAX_SYMBOL_CHARS;
    (short && !symbol.contains(['(', ')'])).then_some(symbol)
}

/// The first `max` chars of `text`.
fn head_chars(text: &str, max: usize) -> &str {
    match text.char_indices().nth(max) {
        Some((cut, _)) => &text[..cut],
        None => text,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn distance_ignores_case() {
        assert_eq!(name_distance("Calculator", "calculator"), 0);
        assert_eq!(name_distance("calculater", "calculator"), 1);
        assert_eq!(name_distance("regx", "regex"), 1);
    }

    #[test]
    fn distance_counts_edits() {
        assert_eq!(name_distance("", ""), 0);
        assert_eq!(name_distance("", "abc"), 3);
        assert_eq!(name_distance("abc", ""), 3);
        assert_eq!(name_distance("kitten", "sitting"), 3);
        assert_eq!(name_distance("lightyear", "light_year"), 1);
    }

    #[test]
    fn a_swap_of_neighbours_is_one_edit() {
        assert_eq!(name_distance("teh", "the"), 1);
        assert_eq!(name_distance("kilometre", "kilometer"), 1);
        assert_eq!(name_distance("ab", "ba"), 1);
    }

    #[test]
    fn distance_counts_chars_not_bytes() {
        assert_eq!(name_distance("µm", "um"), 1);
        assert_eq!(name_distance("ÉTÉ", "été"), 0);
    }

    #[test]
    fn closest_ranks_by_distance_then_name() {
        let names = ["expression", "variables", "expressed", "expressions"];
        assert_eq!(closest("expresion", names, 3), ["expression", "expressions", "expressed"]);
        assert_eq!(closest("expresion", names, 1), ["expression"]);
    }

    #[test]
    fn closest_counts_an_exact_match_ignoring_case() {
        assert_eq!(closest("LOUD", ["quiet", "loud"], 3), ["loud"]);
    }

    #[test]
    fn closest_finds_shortened_and_lengthened_names() {
        assert_eq!(closest("expr", ["expression", "variables"], 3), ["expression"]);
        assert_eq!(closest("max_results_count", ["max_results", "glob"], 3), ["max_results"]);
    }

    #[test]
    fn closest_leaves_out_distant_names() {
        assert!(closest("lightyear", ["meter", "liter", "kelvin"], 3).is_empty());
        assert!(closest("to", ["from", "value"], 3).is_empty());
        assert!(closest("ab", ["xy"], 3).is_empty());
        assert!(closest("x", ["n"], 3).is_empty());
        assert!(closest("find", ["end"], 3).is_empty());
        assert_eq!(closest("fnd", ["find", "replace", "split"], 3), ["find"]);
        assert!(closest("anything", [], 3).is_empty());
    }

    #[test]
    fn closest_lists_a_candidate_once() {
        assert_eq!(closest("metre", ["meter", "meter"], 3), ["meter"]);
    }

    #[test]
    fn nearest_always_gives_some() {
        assert_eq!(nearest("lightyear", ["meter", "liter", "kelvin", "foot"], 2), ["liter", "meter"]);
    }

    #[test]
    fn a_symbol_names_the_value_it_stands_for() {
        let units = [
            ("kilometer", "kilometer (km)"),
            ("mile", "mile, 1760 yards (mi)"),
            ("megabyte", "megabyte, 10^6 bytes (MB)"),
            ("megabit", "megabit, 10^6 bits (Mbit)"),
            ("meter", "meter (m)"),
            ("days", "Days, hours, minutes, seconds (the default)."),
        ];
        assert_eq!(symbol_owner("km", &units), Some("kilometer"));
        assert_eq!(symbol_owner(" mi ", &units), Some("mile"));
        assert_eq!(symbol_owner("KM", &units), None);
        assert_eq!(symbol_owner_ignoring_case("KM", &units), Some("kilometer"));
        assert_eq!(symbol_owner_ignoring_case("mb", &units), Some("megabyte"));
        assert_eq!(symbol_owner_ignoring_case("M", &units), Some("meter"));
        for nothing in ["the default", "lightyear", "", "(km)"] {
            assert_eq!(symbol_owner_ignoring_case(nothing, &units), None, "{nothing}");
        }
    }

    #[test]
    fn a_symbol_shared_ignoring_case_names_nothing() {
        let units = [("millimeter", "millimeter (mm)"), ("megameter", "megameter (Mm)")];
        assert_eq!(symbol_owner("Mm", &units), Some("megameter"));
        assert_eq!(symbol_owner_ignoring_case("MM", &units), None);
    }

    #[test]
    fn huge_words_are_cheap() {
        let word = "a".repeat(1_000_000);
        assert!(closest(&word, ["aaa", "b"], 3).contains(&"aaa"));
        assert_eq!(nearest(&word, ["b"], 3), ["b"]);
    }
}
