//! Ranking the tools a program may call by how well they match a query: BM25 (the `bm25`
//! crate's scorer) over each tool's name, title, description and parameters, with words
//! split out of identifiers (`unit_convert`, `maxResults`), stop words dropped and English
//! stems (Snowball), so "converting units" finds `unit_convert`.

use bm25::{Embedder, EmbedderBuilder, Scorer, Tokenizer};
use rust_stemmers::{Algorithm, Stemmer};
use serde_json::Value;

use crate::tool::definition::ToolDefinition;

/// How many times a tool's name and title count against its other words: a query naming a
/// tool's subject finds it before tools that only mention it.
const NAME_WEIGHT: usize = 3;
const TITLE_WEIGHT: usize = 2;

/// English words that say nothing about what a tool does.
const STOP_WORDS: [&str; 48] = [
    "a", "an", "and", "any", "are", "as", "at", "be", "by", "can", "do", "does", "each", "for", "from", "give",
    "gives", "has", "have", "how", "i", "if", "in", "into", "is", "it", "its", "me", "my", "of", "on", "or", "so",
    "such", "that", "the", "then", "this", "to", "tool", "use", "want", "was", "what", "when", "which", "with", "you",
];

/// The tools of one version, ready to rank.
pub(crate) struct ToolIndex {
    embedder: Embedder<u32, Words>,
    scorer: Scorer<usize, u32>,
    names: Vec<String>,
}

impl ToolIndex {
    /// Indexes `tools` (each indexed by its position).
    pub(crate) fn new<'a>(tools: impl IntoIterator<Item = &'a ToolDefinition>) -> Self {
        let (names, texts): (Vec<String>, Vec<String>) =
            tools.into_iter().map(|tool| (tool.name.clone(), document(tool))).unzip();
        let corpus: Vec<&str> = texts.iter().map(String::as_str).collect();
        let embedder = EmbedderBuilder::<u32, Words>::with_tokenizer_and_fit_to_corpus(Words::new(), &corpus).build();
        let mut scorer = Scorer::new();
        for (i, text) in texts.iter().enumerate() {
            scorer.upsert(&i, embedder.embed(text));
        }
        Self { embedder, scorer, names }
    }

    /// The tools that match `query`, best first (ties by name), at most `limit`, with their
    /// scores.
    pub(crate) fn search(&self, query: &str, limit: usize) -> Vec<(&str, f32)> {
        let mut matches: Vec<(&str, f32)> = self
            .scorer
            .matches(&self.embedder.embed(query))
            .into_iter()
            .filter(|scored| scored.score > 0.0)
            .map(|scored| (self.names[scored.id].as_str(), scored.score))
            .collect();
        matches.sort_by(|a, b| b.1.total_cmp(&a.1).then_with(|| a.0.cmp(b.0)));
        matches.truncate(limit);
        matches
    }

    /// Whether `query` has a word the index could match at all (not only stop words).
    pub(crate) fn has_words(query: &str) -> bool {
        !Words::new().tokenize(query).is_empty()
    }
}

/// The text a tool is found by.
fn document(tool: &ToolDefinition) -> String {
    let mut text = String::new();
    for _ in 0..NAME_WEIGHT {
        text.push_str(&tool.name);
        text.push(' ');
    }
    if let Some(title) = &tool.title {
        for _ in 0..TITLE_WEIGHT {
            text.push_str(title);
            text.push(' ');
        }
    }
    text.push_str(&tool.description);
    if let Some(properties) = tool.parameters.get("properties").and_then(Value::as_object) {
        for (name, schema) in properties {
            text.push(' ');
            text.push_str(name);
            if let Some(description) = schema.get("description").and_then(Value::as_str) {
                text.push(' ');
                text.push_str(description);
            }
        }
    }
    text
}

/// Lower-case English stems of the words in a text, identifiers split into their words.
struct Words {
    stemmer: Stemmer,
}

impl Words {
    fn new() -> Self {
        Self { stemmer: Stemmer::create(Algorithm::English) }
    }
}

impl Default for Words {
    fn default() -> Self {
        Self::new()
    }
}

impl Tokenizer for Words {
    fn tokenize(&self, text: &str) -> Vec<String> {
        split_words(text)
            .into_iter()
            .filter(|word| !STOP_WORDS.contains(&word.as_str()))
            .map(|word| self.stemmer.stem(&word).into_owned())
            .collect()
    }
}

/// The words of `text`, lower-cased: split at anything not a letter or digit, and inside an
/// identifier at each lower-to-upper change (`maxResults` → `max`, `results`).
fn split_words(text: &str) -> Vec<String> {
    let mut words = Vec::new();
    let mut word = String::new();
    let mut previous_lower = false;
    for c in text.chars() {
        if !c.is_alphanumeric() {
            previous_lower = false;
            if !word.is_empty() {
                words.push(std::mem::take(&mut word));
            }
            continue;
        }
        if c.is_uppercase() && previous_lower && !word.is_empty() {
            words.push(std::mem::take(&mut word));
        }
        previous_lower = c.is_lowercase() || c.is_ascii_digit();
        word.extend(c.to_lowercase());
    }
    if !word.is_empty() {
        words.push(word);
    }
    words
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;
    use crate::tool::definition::ToolAnnotations;

    fn tool(name: &str, description: &str, parameters: Value) -> ToolDefinition {
        ToolDefinition {
            name: name.into(),
            title: None,
            description: description.into(),
            version: "1.0.0".into(),
            parameters,
            output_schema: None,
            annotations: ToolAnnotations::default(),
        }
    }

    #[test]
    fn identifiers_split_into_words() {
        assert_eq!(
            split_words("unit_convert maxResults, HTTP-fetch v2"),
            ["unit", "convert", "max", "results", "http", "fetch", "v2"]
        );
    }

    #[test]
    fn ranks_by_name_description_and_parameters() {
        let tools = [
            tool("unit_convert", "Convert a quantity between units of measure.", json!({})),
            tool("calculator", "Evaluate an arithmetic expression.", json!({})),
            tool(
                "datetime",
                "Dates and times: parse, format, difference.",
                json!({"properties": {"time_zone": {"description": "An IANA zone"}}}),
            ),
            tool("weather", "The forecast for a city, in metric units.", json!({})),
        ];
        let index = ToolIndex::new(&tools);
        let names = |query: &str| index.search(query, 10).into_iter().map(|(name, _)| name).collect::<Vec<_>>();
        assert_eq!(names("converting units")[0], "unit_convert", "stems match: converting/convert, units/unit");
        assert_eq!(names("units"), ["unit_convert", "weather"], "a name's words weigh more");
        assert_eq!(names("time zone"), ["datetime"], "parameter names and descriptions count");
        assert!(names("the a of").is_empty() && !ToolIndex::has_words("the a of"));
        assert!(names("zebra").is_empty());
        assert_eq!(index.search("units", 1).len(), 1);
    }
}
