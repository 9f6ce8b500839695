"""A tool project's `pyproject.toml`: `[project] name, version` and `[tool.toolcell] module`."""

import os
import re
import tomllib

_MODULE_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*(\.[A-Za-z_][A-Za-z0-9_]*)*$")


class ProjectError(Exception):
    """The project cannot be built as it is; the message says what to change."""


def read(project_dir):
    """(name, version, module) from PROJECT_DIR/pyproject.toml."""
    path = os.path.join(project_dir, "pyproject.toml")
    try:
        with open(path, "rb") as file:
            data = tomllib.load(file)
    except FileNotFoundError:
        raise ProjectError(
            f"{project_dir} has no pyproject.toml: a Python tool project needs one with [project] name and "
            'version and [tool.toolcell] module = "your_module" (`toolcell new NAME --lang python` makes one)'
        ) from None
    except (OSError, tomllib.TOMLDecodeError) as err:
        raise ProjectError(f"{path} cannot be read: {err}") from None
    project = data.get("project", {})
    name, version = project.get("name"), project.get("version")
    if not isinstance(name, str) or not isinstance(version, str) or not version.strip():
        raise ProjectError(f'{path} must set [project] name and version as strings, e.g. version = "0.1.0"')
    module = data.get("tool", {}).get("toolcell", {}).get("module")
    if not isinstance(module, str) or not _MODULE_NAME.match(module):
        raise ProjectError(
            f'{path} must name the module holding the tool under [tool.toolcell], e.g. module = "text_stats"'
        )
    return name, version.strip(), module


def find_version(source_file):
    """The `[project] version` of the nearest pyproject.toml above a source file, or None:
    natively, a tool reports the version its project declares, as the build will."""
    directory = os.path.dirname(os.path.abspath(source_file))
    while True:
        path = os.path.join(directory, "pyproject.toml")
        if os.path.isfile(path):
            try:
                with open(path, "rb") as file:
                    version = tomllib.load(file).get("project", {}).get("version")
            except (OSError, tomllib.TOMLDecodeError):
                return None
            return version if isinstance(version, str) else None
        parent = os.path.dirname(directory)
        if parent == directory:
            return None
        directory = parent
