"""The Python examples of the README and of the book's Python chapter, run as a user would run
them: each ```python block as its own program with the installed wheel, and each `toolcell
invoke` line of their ```sh blocks with the wheel's `toolcell`. A block that fails, or prints
anything on stderr (a warning included), fails its test."""

from __future__ import annotations

import os
import re
import shlex
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[3]
FENCE = re.compile(r"^```(\w*)\n(.*?)^```\n", re.MULTILINE | re.DOTALL)


def python_section_of_readme() -> str:
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    start = readme.index("\n## Embed it in Python\n")
    end = readme.index("\n## ", start + 1)
    return readme[start:end]


DOCUMENTS = {
    "README.md": python_section_of_readme(),
    "docs/src/python.md": (ROOT / "docs" / "src" / "python.md").read_text(encoding="utf-8"),
}


def blocks(language: str) -> list[tuple[str, str]]:
    found = []
    for name, text in DOCUMENTS.items():
        for number, match in enumerate(m for m in FENCE.finditer(text) if m.group(1) == language):
            found.append((f"{name}#{language}{number + 1}", match.group(2)))
    return found


def environment() -> dict[str, str]:
    env = dict(os.environ)
    env["PATH"] = f"{Path(sys.executable).parent}{os.pathsep}{env['PATH']}"
    return env


def test_the_docs_have_python_examples() -> None:
    assert len([name for name, _ in blocks("python") if name.startswith("README")]) >= 2
    assert len(blocks("python")) >= 8


@pytest.mark.parametrize(("name", "code"), blocks("python"), ids=[name for name, _ in blocks("python")])
def test_a_python_example_runs(name: str, code: str, tmp_path: Path) -> None:
    run = subprocess.run(
        [sys.executable, "-c", code], cwd=tmp_path, env=environment(), capture_output=True, text=True, timeout=300
    )
    assert (run.returncode, run.stderr) == (0, ""), f"{name} failed:\n{run.stdout}\n{run.stderr}"
    assert run.stdout.strip(), f"{name} printed nothing"


def invocations() -> list[tuple[str, str]]:
    return [
        (f"{name}:{line}", line.split("#")[0].strip())
        for name, code in blocks("sh")
        for line in code.splitlines()
        if line.startswith("toolcell invoke ")
    ]


def test_the_docs_invoke_the_cli() -> None:
    assert any(name.startswith("README") for name, _ in invocations())


@pytest.mark.parametrize(("name", "command"), invocations(), ids=[name for name, _ in invocations()])
def test_a_cli_example_runs_with_the_wheels_toolcell(name: str, command: str) -> None:
    argv = shlex.split(command)
    binary = Path(sys.executable).parent / "toolcell"
    run = subprocess.run([str(binary), *argv[1:]], env=environment(), capture_output=True, text=True, timeout=300)
    assert run.returncode == 0, f"{name}:\n{run.stdout}\n{run.stderr}"
    assert '"is_error": false' in run.stdout
