"""Google-style docstrings: the description before the sections, and what `Args:` (or a
class's `Attributes:`) says about each name.

    Count the words in a text.

    Args:
        text: The text to measure.
        unit (str): What to count; words when
            omitted.
"""

import inspect
import re

# Section headers end the description: what follows them is for the code's readers.
_SECTIONS = {
    "args", "arguments", "parameters", "params", "attributes", "returns", "return", "raises",
    "yields", "examples", "example", "note", "notes", "see also", "warning", "warnings",
}
_NAMED_SECTIONS = {"args", "arguments", "parameters", "params", "attributes"}
_ENTRY = re.compile(r"^(\*{0,2}[A-Za-z_][A-Za-z0-9_]*)\s*(?:\([^)]*\))?\s*:\s*(.*)$")


def _header(line):
    stripped = line.strip()
    if stripped.endswith(":") and stripped[:-1].strip().lower() in _SECTIONS:
        return stripped[:-1].strip().lower()
    return None


def parse(doc):
    """Returns (description, {name: description}) from a docstring (or None)."""
    lines = inspect.cleandoc(doc or "").splitlines()
    description, names = [], {}
    section = None
    entry = None  # the name whose description continues on indented lines
    entry_indent = 0
    for line in lines:
        header = _header(line) if not line.startswith((" ", "\t")) else None
        if header is not None:
            section, entry = header, None
            continue
        if section is None:
            description.append(line)
        elif section in _NAMED_SECTIONS and line.strip():
            indent = len(line) - len(line.lstrip())
            match = _ENTRY.match(line.strip())
            if match and (entry is None or indent <= entry_indent):
                entry, entry_indent = match.group(1).lstrip("*"), indent
                names[entry] = [match.group(2)]
            elif entry is not None:
                names[entry].append(line.strip())
    described = {name: " ".join(part for part in parts if part).strip() for name, parts in names.items()}
    return join_wrapped_lines(description).strip(), {k: v for k, v in described.items() if v}


def join_wrapped_lines(lines):
    """Joins lines wrapped within a paragraph with spaces, keeping blank lines between
    paragraphs and line breaks before list items and indented lines (as the Rust macro does
    with doc comments, so both SDKs describe tools alike)."""
    text = ""
    previous_blank = True
    for line in lines:
        line = line.rstrip()
        trimmed = line.lstrip()
        blank = not trimmed
        starts_block = (
            trimmed.startswith(("-", "*", "|", "#"))
            or re.match(r"^\d+\. ", trimmed) is not None
            or line.startswith("  ")
        )
        if text:
            text += "\n" if blank or previous_blank or starts_block else " "
        text += line if starts_block else trimmed
        previous_blank = blank
    return text
