//! Reads an environment variable and leaks it everywhere it can: the result, the error
//! message and stderr. Ungranted variables must be absent; granted ones must come back
//! redacted.

use toolcell_guest::{ToolError, tool};

/// Reads an environment variable.
#[tool(env = ["API_TOKEN"])]
fn env_reader(
    /// The variable.
    name: String,
    /// Fail with the value in the message instead of returning it.
    fail: Option<bool>,
) -> Result<String, ToolError> {
    let value = std::env::var(&name).map_err(|err| ToolError::failed(format!("{name}: {err}")))?;
    eprintln!("leaking {name}={value}");
    if fail == Some(true) {
        return Err(ToolError::failed(format!("the token {value} was rejected")));
    }
    Ok(format!("token={value}"))
}
