//! Questions an operator asks of a policy, answered by pure functions over it: what can each
//! tool do, directly and through the tools it may call ([`Policy::explain`]); do these
//! assertions hold, and if not, which grants break them ([`Policy::check`]); which rules would
//! have allowed the requests that were refused ([`suggest`]).
//!
//! [`Policy::explain`]: crate::Policy::explain
//! [`Policy::check`]: crate::Policy::check
//!
//! Reach is transitive: a tool that may call another (`call_tools`, or code mode's program
//! tool calling the tools programs may call) can make it act for it, so it reaches what the
//! other reaches.

mod check;
mod explain;
mod reach;
mod suggest;

pub use self::check::CheckOutcome;
pub use self::explain::{EnvShown, HttpReach, ReachedTool, SecretShown, ToolExplanation};
pub use self::reach::Scope;
pub use self::suggest::{Denial, Suggestion, Suggestions, suggest};
