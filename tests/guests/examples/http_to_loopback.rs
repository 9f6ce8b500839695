//! Tries every spelling of "this machine" (IP literals, `localhost`, IPv6 loopback) on a
//! port: with only a wildcard grant, each must be refused; the call panics if any got through.

use toolcell_guest::{ToolError, tool};

/// Reaches for the host's own services.
#[tool(http = ["*.example.com"])]
fn http_to_loopback(
    /// The port to try.
    port: u16,
) -> Result<(), ToolError> {
    let targets = [
        format!("http://127.0.0.1:{port}/"),
        format!("http://localhost:{port}/"),
        format!("http://[::1]:{port}/"),
        format!("http://0.0.0.0:{port}/"),
        format!("http://2130706433:{port}/"),
        format!("http://127.0.0.1.nip.io.example.com.localhost:{port}/"),
    ];
    let mut refused = Vec::new();
    for target in targets {
        match toolcell_test_guests::http_get(&target, false) {
            Ok((status, _)) => panic!("{target} answered {status}"),
            Err(err) => refused.push(format!("{target}: {err}")),
        }
    }
    Err(ToolError::failed(refused.join("; ")))
}
