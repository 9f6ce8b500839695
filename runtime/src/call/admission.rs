//! How many calls run at once: a fixed number of permits (the pooled instance slots, or a
//! limit sized to the machine), and a queue beyond them, bounded by calls and by the bytes of
//! their arguments. Each running call may hold its tool's memory limit, and each waiting one
//! its arguments, so this bounds the memory all calls together can hold.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use tokio::sync::{OwnedSemaphorePermit, Semaphore};

use crate::observe::metrics::CallsInFlight;
use crate::tool::error::CallError;

/// Calls that run at once when the embedding sets no limit: four per CPU core (calls that
/// wait on HTTP use no CPU), at least four.
pub fn default_max_concurrent_calls() -> u32 {
    let cores = std::thread::available_parallelism().map_or(1, |cores| cores.get());
    u32::try_from(cores.saturating_mul(4)).unwrap_or(u32::MAX).max(4)
}

/// Calls that may wait per call that may run, when the embedding sets no bound: a burst of
/// parallel calls queues, a flood is refused rather than held.
pub const QUEUED_CALLS_PER_SLOT: u32 = 64;

/// Calls that may wait for a place when the embedding sets no bound, for `slots` calls
/// running at once: [`QUEUED_CALLS_PER_SLOT`] per slot.
pub fn default_max_queued_calls(slots: u32) -> u32 {
    slots.max(1).saturating_mul(QUEUED_CALLS_PER_SLOT)
}

/// The bytes of arguments all waiting calls may hold together, when the embedding sets no
/// bound: 64 MiB. A waiting call holds its arguments as compact JSON text.
pub const DEFAULT_MAX_QUEUED_BYTES: u64 = 64 << 20;

#[derive(Debug)]
pub(crate) struct Admission {
    permits: Arc<Semaphore>,
    limit: usize,
    waiting: AtomicUsize,
    max_waiting: usize,
    waiting_bytes: AtomicUsize,
    max_waiting_bytes: usize,
}

impl Admission {
    pub(crate) fn new(limit: u32, max_waiting: u32, max_waiting_bytes: u64) -> Self {
        let limit = usize::try_from(limit.max(1)).unwrap_or(usize::MAX).min(Semaphore::MAX_PERMITS);
        Self {
            permits: Arc::new(Semaphore::new(limit)),
            limit,
            waiting: AtomicUsize::new(0),
            max_waiting: usize::try_from(max_waiting).unwrap_or(usize::MAX),
            waiting_bytes: AtomicUsize::new(0),
            max_waiting_bytes: usize::try_from(max_waiting_bytes).unwrap_or(usize::MAX),
        }
    }

    /// Waits for a place to run, holding `bytes` (the call's arguments) while it waits. The
    /// permit frees the place when dropped.
    ///
    /// # Errors
    /// [`CallError::Overloaded`] at once when every place is taken and the queue is full, by
    /// calls or by bytes.
    pub(crate) async fn admit(&self, bytes: usize) -> Result<OwnedSemaphorePermit, CallError> {
        if let Ok(permit) = self.permits.clone().try_acquire_owned() {
            return Ok(permit);
        }
        let queued = self.waiting.fetch_add(1, Ordering::Relaxed);
        let _waiting = Waiting(&self.waiting, 1);
        let queued_bytes = self.waiting_bytes.fetch_add(bytes, Ordering::Relaxed);
        let _waiting_bytes = Waiting(&self.waiting_bytes, bytes);
        if queued >= self.max_waiting || queued_bytes.saturating_add(bytes) > self.max_waiting_bytes {
            let running = self.limit - self.permits.available_permits().min(self.limit);
            return Err(CallError::Overloaded { running, waiting: queued });
        }
        self.permits
            .clone()
            .acquire_owned()
            .await
            .map_err(|_| CallError::Internal { message: "the runtime is shutting down".into() })
    }

    pub(crate) fn in_flight(&self) -> CallsInFlight {
        CallsInFlight {
            running: self.limit - self.permits.available_permits().min(self.limit),
            waiting: self.waiting.load(Ordering::Relaxed),
            limit: self.limit,
        }
    }
}

/// Counts a queued call (or its bytes) until it is admitted or abandoned.
struct Waiting<'a>(&'a AtomicUsize, usize);

impl Drop for Waiting<'_> {
    fn drop(&mut self) {
        self.0.fetch_sub(self.1, Ordering::Relaxed);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// One call admitted, and one waiting behind it (on a task of its own).
    async fn one_running_one_waiting(
        admission: &Arc<Admission>,
    ) -> (OwnedSemaphorePermit, tokio::task::JoinHandle<Result<(), CallError>>) {
        let first = admission.admit(0).await.expect("admitted");
        let queued = tokio::spawn({
            let admission = admission.clone();
            async move { admission.admit(0).await.map(drop) }
        });
        while admission.in_flight().waiting == 0 {
            tokio::task::yield_now().await;
        }
        (first, queued)
    }

    #[tokio::test]
    async fn calls_beyond_the_limit_wait_and_are_counted() {
        let admission = Arc::new(Admission::new(1, 64, DEFAULT_MAX_QUEUED_BYTES));
        let (first, queued) = one_running_one_waiting(&admission).await;
        assert_eq!(admission.in_flight(), CallsInFlight { running: 1, waiting: 1, limit: 1 });
        drop(first);
        queued.await.expect("task").expect("admitted after the first");
        assert_eq!(admission.in_flight(), CallsInFlight { running: 0, waiting: 0, limit: 1 });
    }

    #[tokio::test]
    async fn a_call_past_a_full_queue_is_refused_at_once_saying_how_busy_the_host_is() {
        let admission = Arc::new(Admission::new(1, 1, DEFAULT_MAX_QUEUED_BYTES));
        let (first, queued) = one_running_one_waiting(&admission).await;
        let refused = admission.admit(0).await.map(drop);
        assert_eq!(refused, Err(CallError::Overloaded { running: 1, waiting: 1 }));
        assert_eq!(admission.in_flight().waiting, 1, "the refused call left no trace in the queue");
        drop(first);
        queued.await.expect("task").expect("the queued call runs");
        assert!(admission.admit(0).await.is_ok(), "with room again, calls are admitted");
    }

    #[tokio::test]
    async fn the_queue_is_bounded_by_the_bytes_its_calls_hold() {
        let admission = Arc::new(Admission::new(1, 64, 1000));
        let first = admission.admit(0).await.expect("admitted");
        let waiting = tokio::spawn({
            let admission = admission.clone();
            async move { admission.admit(600).await.map(drop) }
        });
        while admission.in_flight().waiting == 0 {
            tokio::task::yield_now().await;
        }
        let refused = admission.admit(600).await.map(drop);
        assert_eq!(refused, Err(CallError::Overloaded { running: 1, waiting: 1 }), "600 + 600 bytes > 1000");
        assert_eq!(admission.waiting_bytes.load(Ordering::Relaxed), 600, "the refused call's bytes were given back");
        drop(first);
        waiting.await.expect("task").expect("the first waiting call runs");
        assert_eq!(admission.waiting_bytes.load(Ordering::Relaxed), 0);
    }
}
