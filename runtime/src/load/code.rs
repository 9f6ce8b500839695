//! A tool's code, linked once: at load when the load compiled it or read its metadata from it,
//! else at its first call or in the background, whichever comes first.
//!
//! A warm start of a tool whose compile-cache entry has a record of what the tool said of
//! itself (`CompileCache::said`) lists the tool from that record and defers its code: reading,
//! authenticating and deserializing megabytes of machine code per tool was most of a warm
//! start. The component's bytes read at load are held until the code is linked, so the code
//! linked is the code of those bytes (their digest names the entry), whatever the file holds
//! by then; an entry gone or refused by then means compiling those bytes.

use std::sync::{Arc, Mutex, OnceLock, PoisonError, Weak};
use std::time::Instant;

use wasmtime::Engine;
use wasmtime::component::Component;

use super::cache::CompileCache;
use super::compile::{self, Code, Compile, LoadEvent, Progress};
use super::precompiled::Precompiled;
use crate::bindings::ToolCorePre;
use crate::sandbox::Sandbox;
use crate::sandbox::engine::Pooling;
use crate::sandbox::link::Linkers;

/// A tool's code: linked, or what links it.
pub(crate) struct ToolCode {
    linked: OnceLock<Result<Linked, String>>,
    /// Until linked: the component's bytes and where its compiled code may be found.
    deferred: Mutex<Option<Deferred>>,
}

/// A component compiled and linked, without `wasi:http` and (once asked for) with it.
struct Linked {
    component: Component,
    without_http: ToolCorePre<Sandbox>,
    with_http: OnceLock<Result<ToolCorePre<Sandbox>, String>>,
}

/// What links a deferred component.
pub(crate) struct Deferred {
    /// The file or label it came from, for the progress display.
    pub(crate) source: String,
    pub(crate) progress: Option<Progress>,
    pub(crate) bytes: bytes::Bytes,
    pub(crate) digest: [u8; 32],
    pub(crate) engine: Engine,
    pub(crate) linkers: Linkers,
    pub(crate) shipped: Precompiled,
    pub(crate) cache: Option<CompileCache>,
    pub(crate) pooling: Option<Pooling>,
}

impl ToolCode {
    /// Code compiled and linked already (without `wasi:http`).
    pub(crate) fn linked(component: Component, without_http: ToolCorePre<Sandbox>) -> Arc<Self> {
        let linked = Linked { component, without_http, with_http: OnceLock::new() };
        Arc::new(Self { linked: OnceLock::from(Ok(linked)), deferred: Mutex::new(None) })
    }

    /// Code linked when first needed.
    pub(crate) fn deferred(deferred: Deferred) -> Arc<Self> {
        Arc::new(Self { linked: OnceLock::new(), deferred: Mutex::new(Some(deferred)) })
    }

    /// Whether it is linked (or failed to be).
    pub(crate) fn is_settled(&self) -> bool {
        self.linked.get().is_some()
    }

    /// The code linked (with `wasi:http` when `http`), if it is linked already: never blocks.
    pub(crate) fn linked_now(&self, linkers: &Linkers, http: bool) -> Option<Result<ToolCorePre<Sandbox>, String>> {
        Some(pre_of(self.linked.get()?, linkers, http))
    }

    /// The code linked (with `wasi:http` when `http`); links it first, on the blocking pool,
    /// when it is not yet. Fails only when its compiled code is gone and its bytes no longer
    /// compile here.
    pub(crate) async fn pre(self: &Arc<Self>, linkers: &Linkers, http: bool) -> Result<ToolCorePre<Sandbox>, String> {
        if let Some(pre) = self.linked_now(linkers, http) {
            return pre;
        }
        let code = self.clone();
        tokio::task::spawn_blocking(move || code.link())
            .await
            .map_err(|err| format!("linking its code panicked: {err}"))?;
        self.linked_now(linkers, http).unwrap_or_else(|| Err("its code was not linked (an internal error)".into()))
    }

    /// Links the code unless it is linked (waiting for a link under way elsewhere). Blocking.
    fn link(&self) {
        self.linked.get_or_init(|| {
            let deferred = self.deferred.lock().unwrap_or_else(PoisonError::into_inner).take();
            deferred.map_or_else(|| Err("its code was not kept (an internal error)".into()), link_deferred)
        });
    }
}

fn pre_of(linked: &Result<Linked, String>, linkers: &Linkers, http: bool) -> Result<ToolCorePre<Sandbox>, String> {
    let linked = linked.as_ref().map_err(Clone::clone)?;
    if !http {
        return Ok(linked.without_http.clone());
    }
    linked
        .with_http
        .get_or_init(|| {
            let pre = compile::link(linkers.with_http(), &linked.component)?;
            ToolCorePre::new(pre).map_err(|err| format!("cannot be linked with wasi:http: {err}"))
        })
        .clone()
}

/// Links a deferred component: its code from shipped code or the compile cache, else
/// compiled from the bytes held (and kept in the cache again).
fn link_deferred(deferred: Deferred) -> Result<Linked, String> {
    let Deferred { source, progress, bytes, digest, engine, linkers, shipped, cache, pooling } = deferred;
    let code = Code { shipped: &shipped, cache: cache.as_ref(), pooling };
    let prepared = match compile::prepare(&engine, &linkers, code, &bytes, &digest, Compile::CachedOnly)? {
        Some(prepared) => prepared,
        None => {
            // Reported as a load's compilation is: `toolcell warm` counts it.
            let report = |event: LoadEvent<'_>| progress.as_ref().map_or((), |report| report(event));
            let started = Instant::now();
            let compiling = || {
                tracing::info!(%source, "compiling a tool listed from the cache: its compiled code is gone or refused");
                report(LoadEvent::Compiling { source: &source, bytes: bytes.len() });
            };
            let compiled = compile::prepare(&engine, &linkers, code, &bytes, &digest, Compile::Announced(&compiling));
            let ok = matches!(compiled, Ok(Some(_)));
            report(LoadEvent::Compiled { source: &source, elapsed: started.elapsed(), ok });
            compiled?.ok_or_else(|| "was not compiled (an internal error)".to_owned())?
        }
    };
    let (component, without_http) = prepared.into_code();
    Ok(Linked { component, without_http, with_http: OnceLock::new() })
}

/// Links, one after another on one blocking thread, the code of `codes` not linked yet: a
/// tool's first call then finds it linked. A code whose runtime is gone by its turn is
/// skipped, so a short-lived runtime (one CLI call) is not kept waiting at its exit.
pub(crate) fn link_in_background(codes: Vec<Weak<ToolCode>>) {
    if codes.is_empty() {
        return;
    }
    let Ok(runtime) = tokio::runtime::Handle::try_current() else { return };
    runtime.spawn_blocking(move || {
        for code in codes {
            if let Some(code) = code.upgrade() {
                code.link();
            }
        }
    });
}
