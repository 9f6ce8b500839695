//! Interceptors: hooks an embedding puts around calls, to log, rewrite arguments, ask a person,
//! deny or defer. A [`crate::ToolSet`] runs them around its calls, and around the calls its
//! code mode's programs make.

use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;

use super::definition::ToolDefinition;
use super::io::{ToolCall, ToolOutput};

/// A boxed future, as [`Interceptor`]s return them.
pub type BoxFuture<'a, T> = Pin<Box<dyn Future<Output = T> + Send + 'a>>;

/// What an [`Interceptor`] decides about a call before it runs.
// One per call, moved once and matched at once: boxing the call would cost an allocation for
// nothing, and change the API.
#[expect(clippy::large_enum_variant, reason = "one per call, moved once and matched at once")]
#[derive(Debug)]
pub enum Verdict {
    /// Run this call: the one given, or a rewritten one (its arguments are validated after).
    Run(ToolCall),
    /// Do not run it. The reason reaches the model in a [`super::CallError::Denied`].
    Deny(String),
    /// Not now: a person must decide first (the reason says what they are asked). A program
    /// of code mode pauses at the call with an `approval_required` error and a resume token,
    /// and [`crate::code_mode::CodeMode::resume`] goes on with their decision; any other call
    /// ends `approval_required` without running, to be made again once they have decided.
    Defer(String),
}

/// A hook around every call of a [`crate::ToolSet`]: to log, rewrite arguments, ask a person,
/// deny, defer, or record results. Interceptors run in the order they were added before a
/// call, and in reverse order after it.
pub trait Interceptor: Send + Sync + 'static {
    /// Decides about `call` (to the tool `definition` describes) before it runs.
    fn before<'a>(&'a self, call: ToolCall, definition: &'a ToolDefinition) -> BoxFuture<'a, Verdict> {
        let _ = definition;
        Box::pin(async move { Verdict::Run(call) })
    }

    /// Sees each call's output (a denied call's too), in the order calls finish.
    fn after<'a>(&'a self, call: &'a ToolCall, output: &'a ToolOutput) -> BoxFuture<'a, ()> {
        let _ = (call, output);
        Box::pin(async {})
    }
}

/// A shared interceptor: keep a handle to read what it recorded.
impl<T: Interceptor + ?Sized> Interceptor for Arc<T> {
    fn before<'a>(&'a self, call: ToolCall, definition: &'a ToolDefinition) -> BoxFuture<'a, Verdict> {
        (**self).before(call, definition)
    }

    fn after<'a>(&'a self, call: &'a ToolCall, output: &'a ToolOutput) -> BoxFuture<'a, ()> {
        (**self).after(call, output)
    }
}

/// Interceptors in the order they run before a call (cheap to clone).
#[derive(Clone, Default)]
pub(crate) struct Interceptors(Arc<[Arc<dyn Interceptor>]>);

impl Interceptors {
    pub(crate) fn new(interceptors: Vec<Arc<dyn Interceptor>>) -> Self {
        Self(interceptors.into())
    }

    pub(crate) fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    /// Their verdicts on `call` in order: the first that does not run it ends it; otherwise
    /// the call as they rewrote it.
    pub(crate) async fn before(&self, mut call: ToolCall, definition: &ToolDefinition) -> Verdict {
        for interceptor in self.0.iter() {
            match interceptor.before(call, definition).await {
                Verdict::Run(next) => call = next,
                stopped => return stopped,
            }
        }
        Verdict::Run(call)
    }

    /// Shows them `output`, in reverse order.
    pub(crate) async fn after(&self, call: &ToolCall, output: &ToolOutput) {
        for interceptor in self.0.iter().rev() {
            interceptor.after(call, output).await;
        }
    }
}

impl std::fmt::Debug for Interceptors {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{} interceptor(s)", self.0.len())
    }
}
