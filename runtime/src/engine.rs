//! The wasmtime engine every tool shares, and the ticker that drives its epoch.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::thread::JoinHandle;
use std::time::Duration;

use wasmtime::{Config, Engine};

/// How often the epoch advances. A running guest checks its deadline once per tick, so this
/// bounds how far past its timeout a busy guest can run, and how long it can hold a thread
/// before yielding to other calls.
pub(crate) const EPOCH_TICK: Duration = Duration::from_millis(10);

pub(crate) fn new_engine() -> wasmtime::Result<Engine> {
    let mut config = Config::new();
    config.consume_fuel(true).epoch_interruption(true);
    Engine::new(&config)
}

/// Advances an engine's epoch every [`EPOCH_TICK`] on a background thread until dropped.
#[derive(Debug)]
pub(crate) struct EpochTicker {
    stop: Arc<AtomicBool>,
    thread: Option<JoinHandle<()>>,
}

impl EpochTicker {
    pub(crate) fn start(engine: &Engine) -> std::io::Result<Self> {
        let stop = Arc::new(AtomicBool::new(false));
        let thread = std::thread::Builder::new().name("toolcell-epoch".into()).spawn({
            let engine = engine.clone();
            let stop = stop.clone();
            move || {
                while !stop.load(Ordering::Relaxed) {
                    std::thread::sleep(EPOCH_TICK);
                    engine.increment_epoch();
                }
            }
        })?;
        Ok(Self { stop, thread: Some(thread) })
    }
}

impl Drop for EpochTicker {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}
