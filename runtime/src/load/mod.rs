//! Loading: what it reports ([`LoadEvent`] while it compiles, a [`LoadDiagnostic`] for each
//! component that did not load) and why a runtime could not be built at all
//! ([`RuntimeError`]).

// From folders, files and bytes to a version of a runtime's tools. The policy files and the
// components are read as one snapshot (`sources`); each component is compiled, or read from
// the authenticated compile cache (`cache`), and linked (`component`); its metadata is read
// once and checked (`metadata`); each tool gets its grants, checked against every other
// tool's and against what the host loads (`grants`); together they make a `Version`
// (`assemble`, `version`). A reload does the same from the previous version, reusing what
// did not change.

mod announce;
mod assemble;
pub(crate) mod cache;
mod code;
mod compile;
mod component;
mod error;
mod grants;
mod metadata;
mod precompiled;
mod registry;
mod sources;
mod steer;
mod version;

use std::sync::Arc;

pub(crate) use self::announce::{AnnouncedTool, Announcement, announced};
pub use self::compile::LoadEvent;
pub(crate) use self::compile::Progress;
pub use self::component::LoadDiagnostic;
pub use self::error::RuntimeError;
pub(crate) use self::grants::{max_memory_bytes, nests_calls};
pub(crate) use self::precompiled::artifact;
pub use self::precompiled::{NotAnArtifact, Precompiled};
pub(crate) use self::registry::RegistryLoading;
pub(crate) use self::sources::{Snapshot, read_policy};
pub(crate) use self::steer::{Steer, Wanted};
pub(crate) use self::version::{Recipe, Shared, Source, ToolEntry, Version};

/// What the first version of the tools `recipe` names is built from: read before the engine
/// exists, since its policy sizes the pool.
///
/// # Errors
/// When a tools folder cannot be read, or a policy file is invalid or keeps changing.
pub(crate) async fn first_snapshot(recipe: &Recipe) -> Result<Snapshot, RuntimeError> {
    sources::read_snapshot(recipe, None, true).await
}

/// Whether the policy of `snapshot` fits the pool `shared` was made with.
///
/// # Errors
/// When it raises a memory limit above the pool's slots.
pub(crate) fn check_fits_pool(shared: &Shared, recipe: &Recipe, snapshot: &Snapshot) -> Result<(), RuntimeError> {
    grants::check_fits_pool(&recipe.limits, snapshot.policy(), shared.pooling)
}

/// The first version of the tools `recipe` names, from its [`first_snapshot`]; with `steer`,
/// each version of the tools loaded so far is published on the way.
///
/// # Errors
/// When the policy does not fit the pool.
pub(crate) async fn first_version(
    shared: Arc<Shared>,
    recipe: Arc<Recipe>,
    snapshot: Snapshot,
    steer: Option<&Steer>,
) -> Result<Arc<Version>, RuntimeError> {
    Ok(assemble::assemble(shared, recipe, snapshot, None, steer).await?.0)
}

/// The next version after `previous`, and the sources it compiled; `previous` itself when
/// nothing it was built from changed. See [`crate::Runtime::reload`].
///
/// # Errors
/// As [`first_version`], and when an unchanged grant now leads elsewhere.
pub(crate) async fn reload(previous: &Arc<Version>) -> Result<(Arc<Version>, Vec<String>), RuntimeError> {
    let recipe = previous.recipe.clone();
    let snapshot = sources::read_snapshot(&recipe, Some(previous), true).await?;
    if previous.read.as_ref() == Some(&snapshot.read) {
        return Ok((previous.clone(), Vec::new()));
    }
    assemble::assemble(previous.shared.clone(), recipe, snapshot, Some(previous), None).await
}
