//! One module per command.

pub(crate) mod author;
pub(crate) mod check;
pub(crate) mod client_config;
pub(crate) mod export;
pub(crate) mod invoke;
pub(crate) mod list;
pub(crate) mod policy;
pub(crate) mod precompile;
pub(crate) mod registry;
pub(crate) mod replay;
pub(crate) mod respond;
pub(crate) mod schema;
pub(crate) mod serve;
pub(crate) mod server_json;
pub(crate) mod test;
pub(crate) mod warm;
