//! Reports what the sandbox lets it see: environment, arguments, files, sockets, stdin.
//! With no grants, every one must be empty or denied.

use std::io::Read;

use toolcell_guest::{json, tool};

/// What the guest could reach.
#[json]
pub struct Seen {
    env: Vec<String>,
    args: Vec<String>,
    read_root_dir: String,
    read_file: String,
    tcp_connect: String,
    dns_lookup: String,
    stdin: String,
}

fn outcome<T, E: std::fmt::Display>(result: Result<T, E>) -> String {
    match result {
        Ok(_) => "allowed".into(),
        Err(err) => format!("denied: {err}"),
    }
}

/// Probes the sandbox.
#[tool]
fn probe() -> Seen {
    let mut stdin = String::new();
    let stdin_read = std::io::stdin().read_to_string(&mut stdin);
    Seen {
        env: std::env::vars().map(|(key, _)| key).collect(),
        args: std::env::args().collect(),
        read_root_dir: outcome(std::fs::read_dir("/")),
        read_file: outcome(std::fs::read("/etc/passwd")),
        tcp_connect: outcome(std::net::TcpStream::connect("127.0.0.1:80")),
        dns_lookup: outcome(std::net::ToSocketAddrs::to_socket_addrs(&("localhost", 80))),
        stdin: match stdin_read {
            Ok(_) => stdin,
            Err(err) => format!("denied: {err}"),
        },
    }
}
