//! Instances made ready before their call.
//!
//! A fresh instance per call has two costs that need nothing from the call. One is making the
//! instance: the `python` tool's start-up code fills CPython's function table, 0.6-0.7 ms.
//! The other is resetting its pool slot afterwards, 0.4 ms. So after a call, the used
//! instance is dropped in the background, and once no call is running, the tool's next
//! instances are made there too (`crate::call`). The next call only binds what is its own:
//! its deadline, the tools it may call, its secrets, where its stdout goes. Then it calls
//! `invoke`.
//!
//! Each instance still serves exactly one call, and it is taken out of its slot before that
//! call starts. It is made under the tool's own grants and limits, as the call's would be, and
//! runs nothing but its start-up code before the call. The fuel that start-up burned counts
//! against the call, and so does the memory it took, as when the call instantiates its own.
//! A call whose limits differ from the tool's, or that is recorded or replayed, instantiates
//! its own. So does every call of a tool whose instance could not be made ready: the tool's
//! own instantiation then reports why.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Instant;

use tokio::sync::{OwnedSemaphorePermit, Semaphore};
use tokio_util::sync::CancellationToken;
use wasmtime::{Engine, Store};

use super::execute::{Execution, Failure, Returned, conclude, deadline_after, new_store, supervise};
use super::nested::NestedCalls;
use super::{Given, Network, Sandbox};
use crate::bindings::{CallContext, ToolCore, ToolCorePre};
use crate::policy::Access;
use crate::redact::Redactor;
use crate::tool::io::StdoutLines;
use crate::tool::limits::Limits;

/// Instances a tool keeps ready at most: two, so that the first two calls of a burst after a
/// pause each find one (they are made only while no call runs, `crate::call`).
const READY_PER_TOOL: usize = 2;

/// Where a tool keeps its instances made ready for its next calls.
#[derive(Default)]
pub(crate) struct ReadySlot {
    ready: Mutex<Vec<Ready>>,
    /// One instance is made at a time.
    preparing: AtomicBool,
    /// Making one failed: the tool's calls instantiate their own from now on.
    failed: AtomicBool,
}

impl ReadySlot {
    /// A ready instance made under `limits`, if there is one.
    pub(crate) fn take(&self, limits: &Limits) -> Option<Ready> {
        let mut ready = self.ready.lock().unwrap_or_else(PoisonError::into_inner);
        let position = ready.iter().position(|ready| ready.limits == *limits)?;
        Some(ready.swap_remove(position))
    }

    /// Claims the making of the next instances: none if enough are ready, some are being
    /// made, or one could not be made before.
    pub(crate) fn claim(self: &Arc<Self>) -> Option<Claim> {
        if self.failed.load(Ordering::Relaxed) || !self.wants_more() || self.preparing.swap(true, Ordering::AcqRel) {
            return None;
        }
        Some(Claim(self.clone()))
    }

    fn wants_more(&self) -> bool {
        self.ready.lock().unwrap_or_else(PoisonError::into_inner).len() < READY_PER_TOOL
    }
}

/// The making of a tool's next instances, claimed. Dropping it ends the claim, whether the
/// task that held it made them or was dropped itself (its tokio runtime shut down).
pub(crate) struct Claim(Arc<ReadySlot>);

impl Claim {
    /// Keeps what was made; true if the tool wants another.
    pub(crate) fn keep(&self, made: Made) -> bool {
        match made {
            Made::Ready(ready) => {
                self.0.ready.lock().unwrap_or_else(PoisonError::into_inner).push(ready);
                self.0.wants_more()
            }
            Made::Failed => {
                self.0.failed.store(true, Ordering::Relaxed);
                false
            }
            Made::NoRoom => false,
        }
    }
}

impl Drop for Claim {
    fn drop(&mut self) {
        self.0.preparing.store(false, Ordering::Release);
    }
}

/// What an attempt to make an instance ready came to.
pub(crate) enum Made {
    Ready(Ready),
    /// Never for this tool: its instantiation failed, or its instances take more memory
    /// than one ready instance may hold.
    Failed,
    /// No room now: every pool slot or all the memory kept for ready instances is taken.
    NoRoom,
}

/// Memory the ready instances may hold in all: their memories and tables as their start-up
/// left them. One instance may take at most a [`READY_PER_TOOL`]th of it; a tool whose
/// instances take more gets none. So a tool that grows its memory to its limit as it starts
/// makes the host hold that memory only while a call runs, as before.
const READY_MEMORY_BYTES: u64 = 256 << 20;

/// The room for instances made ready: the pool slots kept for them, and memory.
pub(crate) struct ReadyRoom {
    slots: Arc<Semaphore>,
    bytes_left: Mutex<u64>,
    /// Whether it has any slot: with none, no instance is ever made ready.
    open: bool,
}

impl ReadyRoom {
    pub(crate) fn new(slots: u32) -> Arc<Self> {
        let (bytes_left, open) = (Mutex::new(READY_MEMORY_BYTES), slots > 0);
        Arc::new(Self { slots: Arc::new(Semaphore::new(slots as usize)), bytes_left, open })
    }

    /// Whether instances may be made ready at all ([`crate::RuntimeBuilder::ready_instances`]).
    pub(crate) fn is_open(&self) -> bool {
        self.open
    }

    fn reserve(self: &Arc<Self>, bytes: u64) -> Option<Reservation> {
        let mut left = self.bytes_left.lock().unwrap_or_else(PoisonError::into_inner);
        *left = left.checked_sub(bytes)?;
        Some(Reservation { room: self.clone(), bytes })
    }
}

/// Memory a ready instance holds, given back when it is dropped.
struct Reservation {
    room: Arc<ReadyRoom>,
    bytes: u64,
}

impl Drop for Reservation {
    fn drop(&mut self) {
        *self.room.bytes_left.lock().unwrap_or_else(PoisonError::into_inner) += self.bytes;
    }
}

/// An instance of a tool, made before its call and not yet called.
pub(crate) struct Ready {
    store: Store<Sandbox>,
    tool: ToolCore,
    limits: Limits,
    /// Its pool slot among those kept for ready instances, and its memory: held until the
    /// instance is dropped (after its store: fields drop in order).
    room: (OwnedSemaphorePermit, Reservation),
}

/// An instance that served its call, dropped off the call's path.
pub(crate) struct Used {
    _store: Store<Sandbox>,
    _room: (OwnedSemaphorePermit, Reservation),
}

/// Makes an instance of `pre` under the tool's `limits` and `access`, as a call's would be,
/// in `room`.
pub(crate) async fn prepare(
    room: &Arc<ReadyRoom>,
    engine: &Engine,
    limits: Limits,
    access: &Access,
    network: &Network,
    pre: &ToolCorePre<Sandbox>,
) -> Made {
    let Ok(slot) = room.slots.clone().try_acquire_owned() else {
        return Made::NoRoom;
    };
    let deadline = deadline_after(limits.timeout);
    // Calls are bound in [`Ready::invoke`]; until then, its start-up code may call none.
    let Ok(sandbox) =
        Sandbox::new(&limits, access, &access.redactor, network, NestedCalls::Loading, deadline, Given::default())
    else {
        return Made::Failed;
    };
    let Ok(mut store) = new_store(engine, &limits, sandbox) else {
        return Made::Failed;
    };
    let tool = match supervise(pre.instantiate_async(&mut store), &limits, None).await {
        Ok(Ok(tool)) => tool,
        Ok(Err(_)) | Err(_) => return Made::Failed,
    };
    let bytes = store.data().memory.peak;
    if bytes > READY_MEMORY_BYTES / READY_PER_TOOL as u64 {
        return Made::Failed;
    }
    match room.reserve(bytes) {
        Some(reservation) => Made::Ready(Ready { store, tool, limits, room: (slot, reservation) }),
        None => Made::NoRoom,
    }
}

/// What only the call brings to a ready instance.
pub(crate) struct Binding<'a> {
    pub(crate) calls: NestedCalls,
    /// The call's secrets: its tool's and, for a nested call, its callers'.
    pub(crate) redactor: &'a Redactor,
    pub(crate) stdout_lines: Option<&'a StdoutLines>,
    pub(crate) arguments: &'a str,
    pub(crate) context: &'a CallContext,
}

impl Ready {
    /// Binds the call to the instance and calls `invoke`, stopping the guest as
    /// [`super::execute::execute`] does. Returns the instance, used, to be dropped off the
    /// call's path.
    pub(crate) async fn invoke(self, binding: Binding<'_>, cancel: Option<&CancellationToken>) -> (Execution, Used) {
        let started = Instant::now();
        let Self { mut store, tool, limits, room } = self;
        store.data_mut().bind(deadline_after(limits.timeout), binding.calls, binding.redactor, binding.stdout_lines);
        // The epoch moved on while the instance waited: count from now.
        store.set_epoch_deadline(1);
        let called = async {
            let invoked = tool.call_invoke(&mut store, binding.arguments, binding.context).await;
            invoked.map(Returned::Invoke).map_err(|error| Failure { error, instantiating: false })
        };
        let finished = supervise(called, &limits, cancel).await;
        let execution = conclude(&store, finished, &limits, started);
        (execution, Used { _store: store, _room: room })
    }
}
