"""Three `toolcell serve --transport http --stateless` replicas behind HAProxy (Debian's package)
on 127.0.0.1, their tools pulled by digest from a real OCI registry (Debian's `docker-registry`)
and signed, driven by the Python SDK at 2026-07-28 and at 2025-11-25:

- every call is answered by whichever replica HAProxy picks;
- one replica killed while calls are in flight on it: those calls fail as a client sees them,
  and every later call succeeds;
- a rolling update to a new digest of the tool (each replica drains, then stops, and its
  successor starts): every response comes from the old or the new version, never a mix inside
  one call, and none is lost. (A client that lists the tools on an old replica and calls a new
  one sees both versions in one session: the Python SDK then refuses the new answer against the
  old output schema. The test counts those apart.)

Each run prints its counts (`pytest -s` shows them; tests/peers/run keeps them in its log).
"""

from __future__ import annotations

import asyncio
import re
import shutil
import signal
import subprocess
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

import pytest
from mcp import Client
from mcp.client.streamable_http import streamable_http_client
from mcp.shared._httpx_utils import create_mcp_http_client

from conftest import READ_TIMEOUT_S, Toolcell
from oci_registry import answers, free_port, guest, registry, wait_until  # noqa: F401 (registry: a fixture)

pytestmark = pytest.mark.anyio

# The SDK's modes: the modern revision without a handshake, and the 2025-11-25 handshake.
MODES = {"2026-07-28": "2026-07-28", "2025-11-25": "legacy"}
REPLICAS = 3
# Above HAProxy's health checks (every 100 ms, one failure takes a server out): a replica told
# to stop keeps serving this long while its /healthz says it drains.
DRAIN_DELAY = "500ms"


@dataclass
class Release:
    """Two versions of the tool `echo` in the registry, signed: `echo.wasm` (v1, a structured
    result) and `echo_v2.wasm` (v2, `echo 2: TEXT`), each known by its digest."""

    key: Path
    digests: dict[str, str] = field(default_factory=dict)


@pytest.fixture(scope="module")
def release(toolcell: Toolcell, registry: str, tmp_path_factory: pytest.TempPathFactory) -> Release:
    folder = tmp_path_factory.mktemp("release")
    run = lambda *args: subprocess.run(  # noqa: E731
        [toolcell.binary, *args], env=toolcell.env, capture_output=True, text=True, timeout=120, check=True
    ).stdout
    run("keygen", str(folder / "release"))
    release = Release(folder / "release.pub")
    for version, component in (("1", "echo.wasm"), ("2", "echo_v2.wasm")):
        pushed = run("push", str(guest(component)), f"oci://{registry}/tools/echo:{version}", "--sign",
                      str(folder / "release.key"))
        release.digests[version] = re.search(r"@(sha256:[0-9a-f]{64})", pushed).group(1)
    return release


def tools_folder(base: Path, registry: str, release: Release, version: str) -> Path:
    """A tools folder whose policy takes `echo` from the registry by digest, signed, beside a
    local `sleeper` (a call that stays in flight) limited to 3 s."""
    folder = base / f"tools-v{version}"
    folder.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(guest("sleeper.wasm"), folder / "sleeper.wasm")
    shutil.copyfile(release.key, folder / "release.pub")
    (folder / "toolcell.toml").write_text(
        '[signers.release]\nkey = "release.pub"\n\n'
        f'[tools.echo]\nsource = "oci://{registry}/tools/echo@{release.digests[version]}"\n'
        'signed_by = ["release"]\n\n'
        '[tools.sleeper]\nlimits = { timeout_ms = 3000 }\n'
    )
    return folder


class Replica:
    """`toolcell serve --stateless` on a fixed port (HAProxy's backend names it)."""

    def __init__(self, toolcell: Toolcell, port: int, tools: Path, store: Path) -> None:
        self.port = port
        self.command = [toolcell.binary, "--tools-dir", str(tools), "--no-builtins", "--registry-store", str(store),
                        "serve", "--transport", "http", "--stateless", "--listen", f"127.0.0.1:{port}",
                        "--shutdown-grace", "5s", "--drain-delay", DRAIN_DELAY]
        self.env = toolcell.env
        self.process: subprocess.Popen[bytes] | None = None

    def start(self) -> None:
        self.process = subprocess.Popen(self.command, env=self.env, stdout=subprocess.DEVNULL,
                                        stderr=subprocess.DEVNULL, stdin=subprocess.DEVNULL)
        wait_until(lambda: answers(f"http://127.0.0.1:{self.port}/healthz"), f"replica :{self.port} is ready")

    def stop(self, sig: int = signal.SIGTERM) -> None:
        if self.process and self.process.poll() is None:
            self.process.send_signal(sig)
            self.process.wait(timeout=30)


@dataclass
class Deployment:
    url: str
    replicas: list[Replica]
    base: Path
    toolcell: Toolcell
    registry: str
    release: Release


@pytest.fixture
def deployment(toolcell: Toolcell, registry: str, release: Release, tmp_path: Path) -> Iterator[Deployment]:
    haproxy = shutil.which("haproxy")
    if haproxy is None:
        raise SystemExit("haproxy is not installed: apt-get install haproxy (.ci/run does)")
    v1 = tools_folder(tmp_path, registry, release, "1")
    replicas = [Replica(toolcell, free_port(), v1, tmp_path / f"store-{n}") for n in range(REPLICAS)]
    front = free_port()
    servers = "\n".join(
        f"    server r{n} 127.0.0.1:{replica.port} check inter 100ms fall 1 rise 2"
        for n, replica in enumerate(replicas)
    )
    config = tmp_path / "haproxy.cfg"
    config.write_text(f"""global
    maxconn 512
defaults
    mode http
    timeout connect 1s
    timeout client 30s
    timeout server 30s
    retries 3
    option redispatch 1
    option http-server-close
frontend mcp
    bind 127.0.0.1:{front}
    default_backend toolcell
backend toolcell
    balance roundrobin
    option httpchk GET /healthz
{servers}
""")
    for replica in replicas:
        replica.start()
    balancer = subprocess.Popen(["timeout", "900", haproxy, "-f", str(config), "-db"],
                                stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        wait_until(lambda: answers(f"http://127.0.0.1:{front}/healthz"), "HAProxy forwards")
        yield Deployment(f"http://127.0.0.1:{front}/mcp", replicas, tmp_path, toolcell, registry, release)
    finally:
        balancer.terminate()
        balancer.wait(timeout=15)
        for replica in replicas:
            replica.stop(signal.SIGKILL)


def cause(error: BaseException) -> str:
    """What a client saw: the first error inside the SDK's task groups."""
    while isinstance(error, BaseExceptionGroup) and error.exceptions:
        error = error.exceptions[0]
    return f"{type(error).__name__}: {str(error)[:80]}"


def version_of(result) -> str:
    """v1's echo answers with a structured result; v2's with `echo 2: ` and the text."""
    if result.is_error:
        return "error"
    if result.structured_content is not None and result.structured_content.get("text") == "hi":
        return "v1"
    return "v2" if result.content[0].text.strip('"') == "echo 2: hi" else "mixed"


async def echo_calls(url: str, mode: str, count: int) -> Counter:
    """`count` calls of `echo`, each in a client of its own (a call may land on any replica),
    four at a time; the versions that answered, and the calls that failed."""
    seen: Counter = Counter()
    gate = asyncio.Semaphore(4)

    async def one() -> None:
        async with gate:
            try:
                async with create_mcp_http_client() as http, Client(
                    streamable_http_client(url, http_client=http), mode=mode, read_timeout_seconds=READ_TIMEOUT_S
                ) as client:
                    seen[version_of(await client.call_tool("echo", {"text": "hi", "count": 1}))] += 1
            except Exception as error:  # noqa: BLE001 - a lost call, counted
                if "has an output schema but did not return structured content" in cause(error):
                    # The SDK listed the tools (for their output schemas) on a replica of the old
                    # version, and the call was answered by one of the new: the answer is v2's,
                    # which the SDK checks against v1's schema and refuses.
                    seen["v2, refused against v1's schema by the client"] += 1
                else:
                    seen[f"failed: {cause(error)}"] += 1

    await asyncio.gather(*(one() for _ in range(count)))
    return seen


@pytest.mark.parametrize("revision", MODES)
async def test_calls_through_the_balancer_are_answered_by_every_replica(deployment, revision):
    seen = await echo_calls(deployment.url, MODES[revision], 30)
    print(f"\nreplicas ({revision}): 30 calls -> {dict(seen)}")
    assert seen == Counter({"v1": 30})


@pytest.mark.parametrize("revision", MODES)
async def test_a_replica_killed_mid_run_fails_only_its_calls_in_flight(deployment, revision):
    mode = MODES[revision]

    async def sleeper() -> str:
        try:
            async with create_mcp_http_client() as http, Client(
                streamable_http_client(deployment.url, http_client=http), mode=mode, read_timeout_seconds=30
            ) as client:
                result = await client.call_tool("sleeper", {})
                # Its replica stopped it at its 3 s limit: an error result, the call answered.
                return "answered: stopped at its limit" if result.is_error else "answered"
        except Exception as error:  # noqa: BLE001 - lost with the replica
            return f"failed: {cause(error)}"

    in_flight = [asyncio.ensure_future(sleeper()) for _ in range(6)]
    await asyncio.sleep(1.0)
    deployment.replicas[0].stop(signal.SIGKILL)
    outcomes = Counter(await asyncio.gather(*in_flight))
    later = await echo_calls(deployment.url, mode, 30)
    print(f"\nkill ({revision}): 6 calls in flight -> {dict(outcomes)}; 30 later calls -> {dict(later)}")
    failed = sum(count for outcome, count in outcomes.items() if outcome.startswith("failed"))
    assert 1 <= failed <= 3, outcomes
    assert outcomes["answered: stopped at its limit"] == 6 - failed, outcomes
    assert later == Counter({"v1": 30}), later


@pytest.mark.parametrize("revision", MODES)
async def test_a_rolling_update_to_a_new_digest_mixes_no_versions_and_loses_no_call(deployment, revision):
    v2 = tools_folder(deployment.base, deployment.registry, deployment.release, "2")
    seen: Counter = Counter()
    rolling = True

    async def traffic() -> None:
        while rolling:
            seen.update(await echo_calls(deployment.url, MODES[revision], 8))

    calls = asyncio.ensure_future(traffic())
    for n, old in enumerate(deployment.replicas):
        # One at a time: stop the old version (it finishes its calls), start the new in its place.
        await asyncio.to_thread(old.stop)
        new = Replica(deployment.toolcell, old.port, v2, deployment.base / f"store-new-{n}")
        await asyncio.to_thread(new.start)
        deployment.replicas[n] = new
        await asyncio.sleep(0.5)
    rolling = False
    await calls
    after = await echo_calls(deployment.url, MODES[revision], 20)
    print(f"\nrolling update ({revision}): during -> {dict(seen)}; after -> {dict(after)}")
    # One call is answered by one replica: v1's answer or v2's, never a mix. A client that listed
    # the tools on one version and called on the other sees both versions in one session.
    assert set(seen) <= {"v1", "v2", "v2, refused against v1's schema by the client"}, seen
    assert seen["v1"] > 0 and seen["v2"] > 0, seen
    assert after == Counter({"v2": 20}), after
