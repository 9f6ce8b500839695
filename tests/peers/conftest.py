"""Shared by both venvs (standard library only): stops the run at once, saying why, when
`TOOLCELL_BIN` does not name the binary to test."""

import pytest

from toolcell_server import toolcell_bin


def pytest_sessionstart(session: pytest.Session) -> None:
    try:
        toolcell_bin()
    except SystemExit as error:
        pytest.exit(str(error), returncode=2)
