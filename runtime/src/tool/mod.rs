//! What a tool, a call and an outcome are, as data: a tool's definition and the rules for its
//! name ([`definition`]), its limits ([`limits`]), a call's input and output ([`io`]), the
//! W3C trace context a call continues ([`trace`]), and why a call failed ([`error`]). Nothing
//! here runs anything.

pub(crate) mod definition;
pub(crate) mod error;
pub(crate) mod io;
pub(crate) mod limits;
pub(crate) mod trace;
