#!/usr/bin/env python3
"""`toolcell server-json` checked by a second implementation: the entry it writes for the standard
tools, validated with Python's `jsonschema` (Draft 7, formats checked) against the MCP registry's
published schema, and the registry's publishing rules for OCI packages. The schema is the copy
the binary embeds (cli/schemas/), proven to be the published one by its SHA-256.

Usage: check_server_json.py TOOLCELL_BIN SCHEMA_FILE
"""

import hashlib
import importlib.metadata
import json
import pathlib
import re
import subprocess
import sys

import jsonschema

# sha256 of https://static.modelcontextprotocol.io/schemas/2025-12-11/server.schema.json
# (modelcontextprotocol/static, as fetched and checked for issue 32).
PUBLISHED_SHA256 = "3fba09590c99f61735d234822279f4223fab9e300c0a81e81c91ab62a4114de0"
URL = "https://static.modelcontextprotocol.io/schemas/2025-12-11/server.schema.json"

toolcell, schema_file = sys.argv[1], pathlib.Path(sys.argv[2])
raw = schema_file.read_bytes()
if hashlib.sha256(raw).hexdigest() != PUBLISHED_SHA256:
    sys.exit(f"{schema_file} is not the registry's published schema (its sha256 differs)")
schema = json.loads(raw)
jsonschema.Draft7Validator.check_schema(schema)
validator = jsonschema.Draft7Validator(schema, format_checker=jsonschema.Draft7Validator.FORMAT_CHECKER)


def server_json(*flags: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([toolcell, "server-json", *flags], capture_output=True, text=True, timeout=300, check=False)


def refusals(entry: dict) -> list[str]:
    found = [f"/{'/'.join(map(str, error.absolute_path))}: {error.message}" for error in validator.iter_errors(entry)]
    if entry.get("$schema") != URL:
        found.append(f"$schema is not {URL}")
    for index, package in enumerate(entry.get("packages", [])):
        if package.get("registryType") == "oci":
            found += [f"packages/{index}: an OCI package has no {key}" for key in ("registryBaseUrl", "version", "fileSha256")
                      if key in package]
            if not re.fullmatch(r"[a-z0-9.-]+(:\d+)?/[^\s:@]+(:\w[\w.-]{0,127})?(@sha256:[a-f0-9]{64})?", package["identifier"]):
                found.append(f"packages/{index}: identifier {package['identifier']!r} is not registry/repository:tag")
    return found


written = server_json("--name", "io.github.acme/tools", "--image", "ghcr.io/acme/tools:1.2.0",
                      "--repository", "https://github.com/acme/tools", "--title", "Acme tools")
if written.returncode != 0:
    sys.exit(f"server-json failed ({written.returncode}):\n{written.stderr}")
entry = json.loads(written.stdout)
problems = refusals(entry)
if problems:
    sys.exit("the registry would refuse the entry:\n" + "\n".join(problems))
tools = entry["_meta"]["io.modelcontextprotocol.registry/publisher-provided"]["tools"]
assert "calculator" in tools and "python" in tools, tools
assert "io.modelcontextprotocol.server.name" in written.stderr, written.stderr

# What the registry refuses, toolcell refuses before writing (and names).
for flags, words in [
    (["--name", "acme-tools", "--image", "ghcr.io/acme/tools:1.2.0"], "/name: "),
    (["--name", "io.github.acme/tools", "--image", "ghcr.io/acme/tools:latest"], "--server-version"),
    (["--name", "io.github.acme/tools", "--image", "ghcr.io/acme/tools:1", "--description", "x" * 101], "/description: "),
]:
    refused = server_json(*flags)
    assert refused.returncode == 1 and words in refused.stderr and not refused.stdout, (flags, refused)
print(f"server.json: valid against the registry's schema (jsonschema {importlib.metadata.version('jsonschema')}); {len(tools)} tools listed")
