//! Who may call whom under a policy, and so what each tool reaches through others.

use std::collections::{BTreeMap, BTreeSet, VecDeque};

use crate::policy::{Grants, Policy};

/// Which tools the questions are about: the ones loaded (or about to be), with code mode as
/// it will run.
#[derive(Debug, Clone, Default)]
#[non_exhaustive]
pub struct Scope {
    /// The tools, by name; every tool the policy names is added.
    pub tools: Vec<String>,
    /// Whether code mode is on even without a `[code_mode]` table (as with `serve
    /// --code-mode`): its program tool may call the tools programs may call.
    pub code_mode: bool,
}

impl Scope {
    /// The tools named, code mode as the policy says.
    pub fn new<S: Into<String>>(tools: impl IntoIterator<Item = S>) -> Self {
        Self { tools: tools.into_iter().map(Into::into).collect(), code_mode: false }
    }

    /// Code mode on, as `serve --code-mode` runs.
    #[must_use]
    pub fn with_code_mode(mut self) -> Self {
        self.code_mode = true;
        self
    }
}

/// Who may call whom, and every tool in scope.
pub(crate) struct Calls<'a> {
    policy: &'a Policy,
    tools: BTreeSet<String>,
    edges: BTreeMap<String, BTreeSet<String>>,
}

/// A tool one reaches, and the chain of calls that gets there (the caller first, the tool
/// last).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Reached {
    pub(crate) tool: String,
    pub(crate) via: Vec<String>,
}

impl<'a> Calls<'a> {
    pub(crate) fn new(policy: &'a Policy, scope: &Scope) -> Self {
        let mut tools: BTreeSet<String> = scope.tools.iter().cloned().collect();
        for (tool, grants) in policy.tools() {
            tools.insert(tool.to_owned());
            tools.extend(grants.call_tools.iter().cloned());
        }
        let mut edges: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
        for (tool, grants) in policy.tools() {
            edges.entry(tool.to_owned()).or_default().extend(grants.call_tools.iter().cloned());
        }
        let code_mode = policy.code_mode().cloned().or_else(|| scope.code_mode.then(Default::default));
        if let Some(settings) = code_mode {
            let program = settings.program_tool().to_owned();
            let callees: Vec<String> = match &settings.tools {
                Some(listed) => listed.clone(),
                None => tools.iter().filter(|tool| **tool != program).cloned().collect(),
            };
            tools.insert(program.clone());
            tools.extend(callees.iter().cloned());
            edges.entry(program).or_default().extend(callees);
        }
        Self { policy, tools, edges }
    }

    /// Every tool in scope.
    pub(crate) fn tools(&self) -> impl Iterator<Item = &str> {
        self.tools.iter().map(String::as_str)
    }

    /// The grants of `tool` (none, if the policy does not name it).
    pub(crate) fn grants(&self, tool: &str) -> Grants {
        self.policy.grants(tool).cloned().unwrap_or_default()
    }

    /// The tools `tool` may call directly.
    pub(crate) fn callees(&self, tool: &str) -> Vec<String> {
        self.edges.get(tool).map(|callees| callees.iter().cloned().collect()).unwrap_or_default()
    }

    /// Every tool `tool` reaches through calls (not itself), each by a shortest chain.
    pub(crate) fn reached(&self, tool: &str) -> Vec<Reached> {
        let mut chains: BTreeMap<String, Vec<String>> = BTreeMap::new();
        let mut queue = VecDeque::from([vec![tool.to_owned()]]);
        while let Some(chain) = queue.pop_front() {
            let last = chain.last().cloned().unwrap_or_default();
            for callee in self.edges.get(&last).into_iter().flatten() {
                if callee == tool || chains.contains_key(callee) {
                    continue;
                }
                let mut longer = chain.clone();
                longer.push(callee.clone());
                chains.insert(callee.clone(), longer.clone());
                queue.push_back(longer);
            }
        }
        chains.into_iter().map(|(tool, via)| Reached { tool, via }).collect()
    }
}

/// `a → b → c`.
pub(crate) fn chain(via: &[String]) -> String {
    via.join(" → ")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reach_follows_calls_and_code_mode_without_looping() {
        let text = r#"
            [tools.a]
            call_tools = ["b"]
            [tools.b]
            call_tools = ["c", "a"]
            [code_mode]
            program = "py"
            tools = ["a"]
        "#;
        let policy = Policy::parse(text, std::path::Path::new(".")).expect("policy");
        let calls = Calls::new(&policy, &Scope::new(["d"]));
        assert_eq!(calls.tools().collect::<Vec<_>>(), ["a", "b", "c", "d", "py"]);
        let reached = calls.reached("py");
        let chains: Vec<String> = reached.iter().map(|reached| chain(&reached.via)).collect();
        assert_eq!(chains, ["py → a", "py → a → b", "py → a → b → c"]);
        assert!(calls.reached("c").is_empty());
        let everything = Policy::new();
        let calls = Calls::new(&everything, &Scope::new(["python", "files"]).with_code_mode());
        assert_eq!(calls.reached("python").iter().map(|r| r.tool.as_str()).collect::<Vec<_>>(), ["files"]);
    }
}
