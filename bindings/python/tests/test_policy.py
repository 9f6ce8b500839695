"""Questions about a policy from Python, as `toolcell policy` answers them: without loading a
tool, with secrets never shown, and without the policy's `from_host` variables set."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

import toolcell

POLICY = """
assertions = ['deny secret "API_TOKEN" with reach "*"']

[tools.http_fetch.secrets]
GITHUB_TOKEN = { from_host = "TOOLCELL_TEST_UNSET_TOKEN" }

[[tools.http_fetch.http]]
host = "api.github.com"
methods = ["GET"]
paths = ["/repos/*/*/issues"]
headers = { Authorization = "Bearer {secret:GITHUB_TOKEN}" }

[tools.python]
call_tools = ["http_fetch"]
env = { API_TOKEN = { secret = "python-secret-0f3a91" } }
"""


@pytest.fixture
def policy(tmp_path: Path) -> Path:
    file = tmp_path / "policy.toml"
    file.write_text(POLICY)
    return file


def test_explain_shows_each_tools_rules_and_reach_with_secrets_masked(policy: Path) -> None:
    explained = toolcell.explain_policy(policy=policy)
    by_tool = {tool["tool"]: tool for tool in explained}
    assert set(by_tool) == {"calculator", "datetime", "files", "http_fetch", "json_query", "python", "regex", "unit_convert"}
    fetch = by_tool["http_fetch"]
    assert fetch["http"][0]["rule"] == "GET api.github.com under /repos/*/*/issues"
    assert fetch["secrets"][0] == {"name": "GITHUB_TOKEN", "from_host": "TOOLCELL_TEST_UNSET_TOKEN", "sent_to": ["GET api.github.com under /repos/*/*/issues"]}
    python = by_tool["python"]
    assert python["env"][0]["value"] == "[REDACTED]"
    assert python["through"][0]["via"] == ["python", "http_fetch"]
    assert "python-secret-0f3a91" not in json.dumps(explained)
    assert toolcell.explain_policy(policy=policy, tool="python")[0]["tool"] == "python"
    with pytest.raises(KeyError, match="pyton"):
        toolcell.explain_policy(policy=policy, tool="pyton")


def test_check_proves_or_names_the_grants_that_break_an_assertion(policy: Path) -> None:
    outcomes = toolcell.check_policy(['deny reach "*.internal"', 'deny call "python" -> "files"'], policy=policy)
    assert [(outcome["assertion"], outcome["holds"]) for outcome in outcomes] == [
        ('deny secret "API_TOKEN" with reach "*"', False),
        ('deny reach "*.internal"', True),
        ('deny call "python" -> "files"', True),
    ]
    assert outcomes[0]["broken_by"][0].startswith("python holds API_TOKEN (env API_TOKEN) through python → http_fetch")
    # Code mode lets the program tool call every tool.
    outcomes = toolcell.check_policy(['deny call "python" -> "files"'], policy=policy, code_mode=True)
    assert outcomes[-1]["broken_by"] == ["python → files"]
    with pytest.raises(toolcell.PolicyError, match="is not an assertion"):
        toolcell.check_policy(["allow everything"], policy=policy)


def test_suggest_turns_a_denials_file_into_rules_to_review(tmp_path: Path) -> None:
    denials = tmp_path / "denials.jsonl"
    lines = [
        {"tool": "gh", "request": f"GET https://api.github.com/repos/o/r/issues/{n}", "reason": "not allowed",
         "rule": f'{{ host = "api.github.com", methods = ["GET"], paths = ["/repos/o/r/issues/{n}"] }}'}
        for n in (1, 2, 3)
    ]
    denials.write_text("\n".join(json.dumps(line) for line in lines) + "\nnot json\n")
    suggested = toolcell.suggest_rules(denials)
    assert len(suggested["rules"]) == 1
    rule = suggested["rules"][0]
    assert (rule["tool"], rule["paths"], rule["denials"]) == ("gh", ["/repos/o/r/issues/*"], 3)
    assert rule["toml"].startswith("# would have allowed 3 refused requests\n[[tools.gh.http]]")
    with pytest.raises(OSError, match="cannot read the denials file"):
        toolcell.suggest_rules(tmp_path / "missing.jsonl")
