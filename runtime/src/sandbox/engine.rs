//! The wasmtime engine every tool shares, and the ticker that drives its epoch.

use std::num::NonZeroUsize;
use std::sync::mpsc::{self, RecvTimeoutError, Sender};
use std::thread::JoinHandle;
use std::time::Duration;

use wasmtime::{Config, Enabled, Engine, InstanceAllocationStrategy, PoolingAllocationConfig};

/// Table elements are pointer-sized in wasmtime.
pub(crate) const TABLE_ELEMENT_BYTES: u64 = size_of::<usize>() as u64;

/// How often the epoch advances. A running guest checks its deadline once per tick, so this
/// bounds how far past its timeout a busy guest can run, and how long it can hold a thread
/// before yielding to other calls.
pub(crate) const EPOCH_TICK: Duration = Duration::from_millis(10);

/// Pre-allocated instance slots for up to `slots` calls at once, each with memories of up to
/// `max_memory_bytes`, and `instances_per_call` instances for each: 1, or one more per level
/// of calls from tool to tool when the policy lets tools call others; and
/// [`LOADING_INSTANCES`] more for loading, and `ready_instances` ([`READY_INSTANCES`], or none)
/// for instances made ready before their call.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Pooling {
    pub(crate) slots: u32,
    pub(crate) instances_per_call: u32,
    pub(crate) max_memory_bytes: u64,
    pub(crate) ready_instances: u32,
}

/// Instances of the pool that calls never take: loading a component calls its describing
/// exports (`metadata`, `capabilities`, `annotations`) in an instance, and a component dropped
/// into a served folder must load while every call's slot is busy (a load that found none was
/// refused, as if the tool were broken). Calls are admitted only up to `slots`, so this many
/// instances stay free for loads, which take them one at a time (`Shared::loading`).
pub(crate) const LOADING_INSTANCES: u32 = 1;

/// Instances of the pool kept for instances made ready before their call
/// ([`crate::sandbox::ready`]): at most two per tool, this many in all. Calls never take
/// them otherwise, so a ready instance never leaves a call without a slot.
pub(crate) const READY_INSTANCES: u32 = 16;

/// One call's share of the pool: a Rust component instantiates a few core instances (its
/// code plus canonical-ABI shims), each of which may define a memory and tables. A
/// component needing more is refused when it is compiled, so no call can take another's
/// share and make an innocent call fail for lack of a slot.
const CORE_INSTANCES_PER_CALL: u32 = 16;
const MEMORIES_PER_CALL: u32 = 4;
const TABLES_PER_CALL: u32 = 8;
/// Memory and tables of a reused slot kept mapped instead of returned to the kernel:
/// avoids the page-table churn that makes concurrent fresh instances slower than serial ones.
/// Enough for the standard tools' memories (1.1-1.7 MiB), so none of them unmaps per call.
const KEEP_RESIDENT_BYTES: usize = 2 << 20;

/// The most native stack a guest's wasm may use (wasmtime's default is 512 KiB). Wasm code
/// has a second stack, in linear memory, that guest runtimes check their recursion against;
/// this native one is invisible to them. CPython checks its 1 MiB linear stack, and its C
/// frames can take many times as much native stack (`json.loads`: 16-32 times): at 512 KiB a
/// Python function that recursed through `map` or `sorted` toward its recursion limit (1000)
/// crashed, from 2 MiB it raised `RecursionError`. 8 MiB leaves a margin of four; a deeper
/// recursion traps as `stack_overflow`, the host unharmed. It is host memory outside the
/// memory limit, touched only as deep as a call recurses.
const MAX_WASM_STACK: usize = 8 << 20;
/// Stack for the host functions a guest calls, above the guest's own (wasmtime's default).
const HOST_STACK: usize = 1536 << 10;
/// Frames a trap's backtrace keeps (wasmtime's default, made explicit: the classification
/// of a runaway recursion relies on it).
pub(crate) const BACKTRACE_FRAMES: usize = 20;

pub(crate) fn new_engine(pooling: Option<Pooling>) -> wasmtime::Result<Engine> {
    Engine::new(&engine_config(pooling))
}

/// An engine like [`new_engine`]'s that compiles code for any CPU of this architecture and
/// operating system: with the target named, wasmtime no longer uses the features it finds
/// in this CPU (SSE4.1, AVX, BMI...). An engine of this machine loads that code (a feature
/// the code leaves off is one any CPU has), and so does one on another machine.
pub(crate) fn portable_engine(pooling: Option<Pooling>) -> wasmtime::Result<Engine> {
    let mut config = engine_config(pooling);
    config.target(&target_lexicon::HOST.to_string())?;
    Engine::new(&config)
}

fn engine_config(pooling: Option<Pooling>) -> Config {
    let mut config = Config::new();
    config
        .consume_fuel(true)
        .epoch_interruption(true)
        .max_wasm_stack(MAX_WASM_STACK)
        .async_stack_size(MAX_WASM_STACK + HOST_STACK)
        .wasm_backtrace_max_frames(NonZeroUsize::new(BACKTRACE_FRAMES));
    if let Some(Pooling { slots, instances_per_call, max_memory_bytes, ready_instances }) = pooling {
        let instances =
            slots.saturating_mul(instances_per_call).saturating_add(LOADING_INSTANCES).saturating_add(ready_instances);
        let mut pool = PoolingAllocationConfig::default();
        pool.max_core_instances_per_component(CORE_INSTANCES_PER_CALL)
            .max_memories_per_component(MEMORIES_PER_CALL)
            .max_tables_per_component(TABLES_PER_CALL)
            .total_component_instances(instances)
            .total_core_instances(instances.saturating_mul(CORE_INSTANCES_PER_CALL))
            .total_memories(instances.saturating_mul(MEMORIES_PER_CALL))
            .total_tables(instances.saturating_mul(TABLES_PER_CALL))
            .total_stacks(instances)
            .max_memory_size(usize::try_from(max_memory_bytes).unwrap_or(usize::MAX))
            // A slot's table holds as many elements as the memory limit pays for, so the
            // limiter (which reports `memory_limit`) refuses a table bomb before the pool does.
            .table_elements(usize::try_from(max_memory_bytes / TABLE_ELEMENT_BYTES).unwrap_or(usize::MAX))
            .linear_memory_keep_resident(KEEP_RESIDENT_BYTES)
            .table_keep_resident(KEEP_RESIDENT_BYTES)
            // Where the kernel can say which pages a call wrote (Linux 6.7+), reset only those
            // rather than all of the resident bytes: calculator 51 -> 31 µs per call here.
            .pagemap_scan(Enabled::Auto);
        config.allocation_strategy(InstanceAllocationStrategy::Pooling(pool));
    }
    config
}

/// Advances an engine's epoch every [`EPOCH_TICK`] on a background thread until dropped.
#[derive(Debug)]
pub(crate) struct EpochTicker {
    /// Dropping it wakes the thread at once (rather than after its current tick) to stop.
    stop: Option<Sender<()>>,
    thread: Option<JoinHandle<()>>,
}

impl EpochTicker {
    pub(crate) fn start(engine: &Engine) -> std::io::Result<Self> {
        let (stop, stopped) = mpsc::channel::<()>();
        let engine = engine.clone();
        let thread = std::thread::Builder::new().name("toolcell-epoch".into()).spawn(move || {
            while let Err(RecvTimeoutError::Timeout) = stopped.recv_timeout(EPOCH_TICK) {
                engine.increment_epoch();
            }
        })?;
        Ok(Self { stop: Some(stop), thread: Some(thread) })
    }
}

impl Drop for EpochTicker {
    fn drop(&mut self) {
        drop(self.stop.take());
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}
