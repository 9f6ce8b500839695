"""Runs `phoenix serve` with its gRPC OTLP port on loopback only.

Phoenix binds its OTLP/HTTP server to PHOENIX_HOST but its gRPC server to `[::]` whatever the
host says (phoenix/server/grpc_server.py); test servers here listen on 127.0.0.1 only, so this
rewrites that one address before Phoenix starts. Everything else is Phoenix's own `serve`.
"""

import sys

from grpc.aio._server import Server


def _loopback_only(add_port):
    def add(self, address, *args, **kwargs):
        return add_port(self, address.replace("[::]", "127.0.0.1"), *args, **kwargs)

    return add


Server.add_insecure_port = _loopback_only(Server.add_insecure_port)
Server.add_secure_port = _loopback_only(Server.add_secure_port)

from phoenix.server.main import main  # noqa: E402  (after the patch)

sys.argv = ["phoenix", "serve"]
sys.exit(main())
