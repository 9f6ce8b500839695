//! Opens sockets directly with wasi:sockets (TCP connect, UDP bind, DNS lookup), bypassing
//! wasi:http: the host grants no network, so each must be refused (the call then fails
//! listing the refusals; it panics if any attempt succeeded).

use toolcell_guest::{ToolError, tool};

/// Opens sockets.
#[tool]
fn socket_open(
    /// A local port to try to connect to.
    port: u16,
) -> Result<(), ToolError> {
    Err(ToolError::failed(attempts(port).join("; ")))
}

#[cfg(target_arch = "wasm32")]
fn attempts(port: u16) -> Vec<String> {
    use wasip2::sockets::network::{IpAddressFamily, IpSocketAddress, Ipv4SocketAddress};
    use wasip2::sockets::{instance_network, ip_name_lookup, tcp_create_socket, udp_create_socket};

    let network = instance_network::instance_network();
    let loopback = IpSocketAddress::Ipv4(Ipv4SocketAddress { port, address: (127, 0, 0, 1) });
    let mut outcomes = Vec::new();
    outcomes.push(match tcp_create_socket::create_tcp_socket(IpAddressFamily::Ipv4) {
        Ok(socket) => match socket.start_connect(&network, loopback) {
            Ok(()) => {
                socket.subscribe().block();
                match socket.finish_connect() {
                    Ok(_) => panic!("tcp connect to port {port} succeeded"),
                    Err(err) => format!("tcp connect: {err:?}"),
                }
            }
            Err(err) => format!("tcp connect: {err:?}"),
        },
        Err(err) => format!("tcp socket: {err:?}"),
    });
    outcomes.push(match udp_create_socket::create_udp_socket(IpAddressFamily::Ipv4) {
        Ok(socket) => match socket.start_bind(&network, loopback) {
            Ok(()) => match socket.finish_bind() {
                Ok(()) => panic!("udp bind succeeded"),
                Err(err) => format!("udp bind: {err:?}"),
            },
            Err(err) => format!("udp bind: {err:?}"),
        },
        Err(err) => format!("udp socket: {err:?}"),
    });
    outcomes.push(match ip_name_lookup::resolve_addresses(&network, "localhost") {
        Ok(stream) => {
            stream.subscribe().block();
            match stream.resolve_next_address() {
                Ok(Some(address)) => panic!("dns lookup answered {address:?}"),
                Ok(None) => "dns lookup: no addresses".to_owned(),
                Err(err) => format!("dns lookup: {err:?}"),
            }
        }
        Err(err) => format!("dns lookup: {err:?}"),
    });
    outcomes
}

#[cfg(not(target_arch = "wasm32"))]
fn attempts(_port: u16) -> Vec<String> {
    Vec::new()
}
