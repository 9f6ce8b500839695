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
    /// The tool each component announces, by source: a partial version names those not yet
    /// loaded when a call names a tool it does not have.
    pub(crate) announced: Vec<(String, String)>,
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
}
