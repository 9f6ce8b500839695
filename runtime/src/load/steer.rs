//! Steering a first load that serves while it compiles ([`crate::load::Loading`]): which
//! component to compile next, and each version of the tools loaded so far.

use std::sync::{Arc, Mutex, PoisonError};

use super::version::Version;

/// Steers a first load.
pub(crate) struct Steer {
    /// The components wanted before the others.
    pub(crate) wanted: Arc<Wanted>,
    /// Given each version of the tools loaded so far, with the source just settled (loaded or
    /// not): a version serves its tools while the others compile.
    pub(crate) publish: Box<dyn Fn(Arc<Version>, String) + Send + Sync>,
    /// Every component by source, in the order of the sources, with the name of the tool it
    /// announces: a partial version names those not yet loaded when a call names a tool it
    /// does not have, and withholds a tool whose name an earlier source announces (the whole
    /// version keeps the first of two of the same name).
    pub(crate) announced: Vec<(String, Option<String>)>,
}

impl Steer {
    /// Of the tools loaded so far, with the sources `settled`: the names of those announced
    /// and not loaded yet, and the loaded ones an earlier source, not settled yet, announces
    /// too (they would serve under another's name until it loads).
    pub(crate) fn partial<T>(
        &self,
        tools: &std::collections::BTreeMap<String, T>,
        source_of: impl Fn(&T) -> &str,
        settled: &std::collections::BTreeSet<String>,
    ) -> (Vec<String>, Vec<String>) {
        let unsettled = || {
            self.announced
                .iter()
                .enumerate()
                .filter(|(_, (source, _))| !settled.contains(source))
                .filter_map(|(index, (_, name))| Some((index, name.as_deref()?)))
        };
        let compiling = unsettled().filter(|(_, name)| !tools.contains_key(*name)).map(|(_, name)| name.to_owned());
        let position = |source: &str| self.announced.iter().position(|(known, _)| known == source);
        let shadowed = tools
            .iter()
            .filter(|(name, tool)| {
                let at = position(source_of(tool));
                unsettled().any(|(index, announced)| announced == name.as_str() && at.is_some_and(|at| index < at))
            })
            .map(|(name, _)| name.clone());
        (compiling.collect(), shadowed.collect())
    }
}

/// The components wanted before the others (by source), in the order they were wanted. Holds
/// at most one entry per source.
#[derive(Debug, Default)]
pub(crate) struct Wanted(Mutex<Vec<String>>);

impl Wanted {
    /// Compiles `source` as soon as the component compiling now is done.
    pub(crate) fn want(&self, source: &str) {
        let mut wanted = self.0.lock().unwrap_or_else(PoisonError::into_inner);
        if !wanted.iter().any(|known| known == source) {
            wanted.push(source.to_owned());
        }
    }

    /// The position in `pending` of the component wanted first, if any is.
    pub(crate) fn first<'a>(&self, pending: impl Iterator<Item = &'a String> + Clone) -> Option<usize> {
        let wanted = self.0.lock().unwrap_or_else(PoisonError::into_inner);
        wanted.iter().find_map(|source| pending.clone().position(|candidate| candidate == source))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_first_wanted_and_pending_comes_first() {
        let wanted = Wanted::default();
        let pending = ["a.wasm".to_owned(), "b.wasm".to_owned(), "c.wasm".to_owned()];
        assert_eq!(wanted.first(pending.iter()), None);
        wanted.want("z.wasm");
        wanted.want("c.wasm");
        wanted.want("b.wasm");
        wanted.want("c.wasm");
        assert_eq!(wanted.first(pending.iter()), Some(2), "z is not pending; c was wanted before b");
        assert_eq!(wanted.0.lock().unwrap().len(), 3, "wanted twice, held once");
        assert_eq!(wanted.first(pending[..2].iter()), Some(1));
    }

    #[test]
    fn a_partial_version_names_what_compiles_and_withholds_what_an_earlier_source_announces() {
        let announced = [("a", Some("calc")), ("b", None), ("c", Some("calc")), ("d", Some("echo"))];
        let steer = Steer {
            wanted: Arc::default(),
            publish: Box::new(|_, _| {}),
            announced: announced.iter().map(|(source, name)| ((*source).to_owned(), name.map(str::to_owned))).collect(),
        };
        let tools: std::collections::BTreeMap<String, &str> = [("calc".to_owned(), "c")].into();
        let settled = ["c".to_owned()].into();
        let (compiling, shadowed) = steer.partial(&tools, |source| source, &settled);
        assert_eq!(compiling, ["echo"], "calc is loaded (from c)");
        assert_eq!(shadowed, ["calc"], "a, earlier, announces calc too and is not settled");
        let settled = ["a".to_owned(), "c".to_owned()].into();
        assert_eq!(steer.partial(&tools, |source| source, &settled).1, Vec::<String>::new());
    }
}
