//! Assertions an operator makes about a policy, for `toolcell policy check` to prove
//! ([`crate::questions`]):
//!
//! ```text
//! deny write "/home/**"                  no tool may write under /home
//! deny read "/etc/**"                    no tool may read under /etc
//! deny reach "*.internal"                no tool may send a request to a host under .internal
//! deny secret "GITHUB_TOKEN" with reach "*" except "api.github.com"
//!                                        the secret goes nowhere but api.github.com
//! deny call "python" -> "files"          python cannot get files to act for it
//! ```

use std::fmt;
use std::str::FromStr;

use super::hosts::HostGlob;
use super::paths::PathPattern;

/// One assertion about a policy.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct Assertion {
    text: String,
    claim: Claim,
}

/// What an assertion denies.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Claim {
    Write(PathPattern),
    Read(PathPattern),
    Reach(HostGlob),
    Secret { name: String, reach: HostGlob, except: Vec<HostGlob> },
    Call { caller: String, callee: String },
}

impl Assertion {
    /// The assertion as written.
    pub fn as_str(&self) -> &str {
        &self.text
    }

    pub(crate) fn claim(&self) -> &Claim {
        &self.claim
    }
}

impl fmt::Display for Assertion {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.text)
    }
}

const GRAMMAR: &str = "assertions read `deny write \"/home/**\"`, `deny read \"/etc/**\"`, `deny reach \"*.internal\"`, \
                       `deny secret \"NAME\" with reach \"*\" except \"api.github.com\"` or `deny call \"python\" -> \
                       \"files\"`";

impl FromStr for Assertion {
    type Err = String;

    fn from_str(text: &str) -> Result<Self, String> {
        let words = tokens(text)?;
        let words: Vec<&str> = words.iter().map(String::as_str).collect();
        let path = |text: &str| {
            if !text.starts_with('/') {
                return Err(format!("`{text}`: a path in an assertion is absolute, e.g. \"/home/**\""));
            }
            text.parse::<PathPattern>().map_err(|reason| format!("`{text}`: {reason}"))
        };
        let host = |text: &str| text.parse::<HostGlob>().map_err(|reason| format!("`{text}`: {reason}"));
        let claim = match words.as_slice() {
            ["deny", "write", glob] => Claim::Write(path(glob)?),
            ["deny", "read", glob] => Claim::Read(path(glob)?),
            ["deny", "reach", glob] => Claim::Reach(host(glob)?),
            ["deny", "secret", name, "with", "reach", glob, rest @ ..] => {
                let except = match rest {
                    [] => Vec::new(),
                    ["except", globs @ ..] if !globs.is_empty() => {
                        globs.iter().map(|glob| host(glob)).collect::<Result<_, _>>()?
                    }
                    _ => return Err(format!("`{text}`: after the reach, only `except \"HOST\" ...` may follow")),
                };
                Claim::Secret { name: (*name).to_owned(), reach: host(glob)?, except }
            }
            ["deny", "call", caller, "->", callee] => {
                Claim::Call { caller: (*caller).to_owned(), callee: (*callee).to_owned() }
            }
            _ => return Err(format!("`{text}` is not an assertion: {GRAMMAR}")),
        };
        Ok(Self { text: text.trim().to_owned(), claim })
    }
}

/// Words and "quoted strings" (quotes removed).
fn tokens(text: &str) -> Result<Vec<String>, String> {
    let mut tokens = Vec::new();
    let mut rest = text.trim();
    while !rest.is_empty() {
        if let Some(quoted) = rest.strip_prefix('"') {
            let end = quoted.find('"').ok_or_else(|| format!("`{text}` has a `\"` that is not closed"))?;
            tokens.push(quoted[..end].to_owned());
            rest = quoted[end + 1..].trim_start();
        } else {
            let end = rest.find(char::is_whitespace).unwrap_or(rest.len());
            tokens.push(rest[..end].to_owned());
            rest = rest[end..].trim_start();
        }
    }
    Ok(tokens)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bad_assertions_say_how_to_write_them() {
        for (text, says) in [
            ("allow write \"/x\"", "is not an assertion"),
            ("deny write \"x\"", "a path in an assertion is absolute"),
            ("deny reach \"*bad\"", "first label"),
            ("deny secret \"A\" with reach \"*\" except", "only `except"),
            ("deny write \"/x", "not closed"),
        ] {
            let err = text.parse::<Assertion>().expect_err(text);
            assert!(err.contains(says), "{text}: {err}");
        }
    }
}
