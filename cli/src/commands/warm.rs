//! `toolcell warm`: every tool compiled into the compile cache ahead of time, so that a
//! server's first start (and every command's) reads them in milliseconds.

use std::process::ExitCode;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Instant;

use anyhow::bail;
use toolcell_runtime::load::LoadEvent;

use crate::load::{Source, builder, shipped_code, warn_diagnostics};
use crate::print::human_duration;
use crate::progress::compile_progress;

pub(crate) async fn warm(source: Source<'_>) -> anyhow::Result<ExitCode> {
    let Some(cache) = source.cache else {
        bail!("`warm` fills the compile cache, and --no-cache turns it off: drop --no-cache (or set --cache-dir)");
    };
    let compiled = Arc::new(AtomicUsize::new(0));
    let counted = compiled.clone();
    let show = compile_progress();
    let started = Instant::now();
    let runtime = builder(source, None, None)
        .on_load_progress(move |event| {
            if let LoadEvent::Compiled { ok: true, .. } = event {
                counted.fetch_add(1, Ordering::Relaxed);
            }
            show(event);
        })
        .build()
        .await?;
    warn_diagnostics(&runtime);
    // Tools listed from the cache's records: their code is checked (and compiled if it is
    // gone or refused) now, not at their first call.
    let unlinked = runtime.link_code().await;
    for diagnostic in &unlinked {
        eprintln!("warning: not loaded: {diagnostic}");
    }
    let tools = runtime.definitions().len();
    let compiled = compiled.load(Ordering::Relaxed);
    let elapsed = human_duration(std::time::Duration::from_millis(started.elapsed().as_millis() as u64));
    println!(
        "{tools} tools are in the compile cache {}: {compiled} compiled now in {elapsed}, {} already there",
        cache.display(),
        tools.saturating_sub(compiled),
    );
    if !shipped_code().is_empty() {
        println!("(this binary ships the standard tools compiled: they load without the cache)");
    }
    Ok(if runtime.diagnostics().is_empty() && unlinked.is_empty() { ExitCode::SUCCESS } else { ExitCode::FAILURE })
}
