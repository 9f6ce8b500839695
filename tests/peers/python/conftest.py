"""Fixtures for the peer tests: the toolcell binary (`TOOLCELL_BIN`, required), a compile cache
warmed once, and clients of the official MCP Python SDK over stdio and streamable HTTP."""

from __future__ import annotations

import os
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager
from dataclasses import dataclass

import pytest
from mcp import Client
from mcp.client.stdio import StdioServerParameters
from mcp.client.streamable_http import streamable_http_client
from mcp.shared._httpx_utils import create_mcp_http_client

from toolcell_server import HttpServer, toolcell_bin, warm_cache

TOKEN = "peer-tests-token-0123456789abcdef"

# Every request a test makes is answered in milliseconds once the cache is warm.
READ_TIMEOUT_S = 30


@dataclass(frozen=True)
class Toolcell:
    binary: str
    env: dict[str, str]

    def stdio(self, *args: str) -> StdioServerParameters:
        # The SDK passes only a few variables (HOME, PATH, ...) to the child unless told.
        return StdioServerParameters(command=self.binary, args=["serve", *args], env=self.env)


@pytest.fixture(scope="session")
def anyio_backend() -> str:
    return "asyncio"


@pytest.fixture(scope="session")
def toolcell(tmp_path_factory: pytest.TempPathFactory) -> Toolcell:
    env = dict(os.environ)
    env.pop("TOOLCELL_TOKEN", None)
    env.setdefault("TOOLCELL_CACHE_DIR", str(tmp_path_factory.mktemp("toolcell-cache")))
    binary = toolcell_bin()
    warm_cache(binary, env)
    return Toolcell(binary, env)


@pytest.fixture(scope="session")
def http_server(toolcell: Toolcell) -> Iterator[HttpServer]:
    with HttpServer(toolcell.binary, env=toolcell.env) as server:
        yield server


@pytest.fixture(scope="session")
def token_server(toolcell: Toolcell) -> Iterator[HttpServer]:
    # The token comes from the environment, as the help recommends.
    with HttpServer(toolcell.binary, env={**toolcell.env, "TOOLCELL_TOKEN": TOKEN}) as server:
        yield server


@pytest.fixture(params=["stdio", "http"])
def transport(request: pytest.FixtureRequest) -> str:
    return request.param


@pytest.fixture
def connect(transport: str, toolcell: Toolcell, request: pytest.FixtureRequest):
    """`connect(mode)`: an MCP SDK `Client` to toolcell over this test's transport."""

    @asynccontextmanager
    async def connect(mode: str) -> AsyncIterator[Client]:
        if transport == "stdio":
            target = toolcell.stdio()
        else:
            target = request.getfixturevalue("http_server").url
        async with Client(target, mode=mode, read_timeout_seconds=READ_TIMEOUT_S) as client:
            yield client

    return connect


@asynccontextmanager
async def bearer_client(url: str, token: str, mode: str) -> AsyncIterator[Client]:
    """An SDK client that sends `Authorization: Bearer TOKEN` on every request."""
    async with create_mcp_http_client(headers={"Authorization": f"Bearer {token}"}) as http:
        async with Client(
            streamable_http_client(url, http_client=http), mode=mode, read_timeout_seconds=READ_TIMEOUT_S
        ) as client:
            yield client
