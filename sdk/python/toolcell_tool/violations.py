"""Plain-language explanations of how arguments break a tool's schema, in the host's words.

A port of the common paths of toolcell-schema's explainer (schema/src/explain.rs, messages/
and words/) and `ArgumentsReport`, so that a native test sees the refusal a model would read:
"- /count: must be at least 1; got 0". tests/test_corpus.py holds it to the host's words, on
the corpus shared with the host (schema/corpus/).

Over 500 lines: one port of the host's explainer, kept whole to compare with it.
"""

import json

from . import formats, suggest
from .validate import TYPE_ORDER, child_pointer, resolve_ref

MAX_VIOLATIONS = 20
_MAX_MESSAGE_BYTES = 300
_MAX_ERRORS_READ = 100
_MAX_COLLECTED = 200
_MAX_NESTING = 32
_MAX_REF_HOPS = 16
_MAX_DESCRIBE_DEPTH = 4
_MAX_QUOTED_BYTES = 60
_MAX_LISTED_BYTES = 40
_MAX_LISTED_VALUES = 12
_NEAREST_SHOWN = 5
_MAX_VALUES_KEPT = 1000
_MAX_LISTED_NAMES = 24
_MAX_DESCRIPTION_BYTES = 150
_MAX_DUPLICATE_SEARCH = 64
_PLURALS = {
    "integer": "integers", "number": "numbers", "string": "strings", "array": "arrays",
    "object": "objects", "boolean": "booleans", "null": "nulls",
}
_INTEGER_FORMATS = {
    "uint8": (0, 255), "uint16": (0, 65535), "uint32": (0, 4294967295), "uint": (0, None),
    "uint64": (0, None), "uint128": (0, None), "usize": (0, None), "int8": (-128, 127),
    "int16": (-32768, 32767), "int32": (-2147483648, 2147483647),
}


def arguments_report(violations):
    """The message a model reads when its arguments break the parameters schema."""
    count = len(violations)
    problems = "1 problem" if count == 1 else f"{count} problems"
    lines = [f"The arguments do not match the tool's parameters schema ({problems}):"]
    lines += [f"- {pointer or '(top level)'}: {message}" for pointer, message in violations]
    lines.append("Fix these and call the tool again.")
    return "\n".join(lines)


def output_report(violations):
    """Why a result breaks the output schema, as the end of a sentence."""
    if not violations:
        return "it matches the tool's output schema"
    pointer, message = violations[0]
    at = f"`{pointer}`" if pointer else "the top level"
    more = f" and {len(violations) - 1} more" if len(violations) > 1 else ""
    return f"it does not match the tool's output schema (at {at}: {message}{more})"


def explain(schema, errors):
    """(pointer, message) pairs for validate.errors(), sorted, deduplicated, at most 20."""
    errors = errors[:_MAX_ERRORS_READ]
    explainer = _Explainer(schema)
    explainer.describe_all(errors, 0)
    if not explainer.found and errors:  # an invalid call must never look valid
        explainer.push(errors[0].path, "does not fit the tool's parameters")
    found = sorted(
        {(pointer, truncated(message, _MAX_MESSAGE_BYTES)) for pointer, message in explainer.found},
        key=lambda violation: (_pointer_key(violation[0]), violation[1]),
    )
    return found[:MAX_VIOLATIONS]


def _pointer_key(pointer):
    return [(0, int(token), token) if token.isascii() and token.isdigit() else (1, 0, token) for token in pointer.split("/")]


class _Explainer:
    def __init__(self, root):
        self.root = root
        self.found = []

    def push(self, pointer, message):
        if len(self.found) < _MAX_COLLECTED:
            self.found.append((pointer, message))

    def view(self, error):
        return _View(self.root, error.parent)

    def describe_all(self, errors, depth):
        # A type error is left out where the same value also missed an enum or const: the
        # list of allowed values says more.
        valued = {error.path for error in errors if error.kind in ("enum", "const")}
        for error in errors:
            if not (error.kind == "type" and error.path in valued):
                self.describe(error, depth)

    def describe(self, error, depth):
        kind, at = error.kind, error.path
        if kind in ("anyOf", "oneOf"):
            self.describe_alternatives(error, depth)
        elif kind == "additionalProperties":
            declared = self.view(error).declared_properties()
            for name in error.detail[:MAX_VIOLATIONS]:
                self.push(child_pointer(at, name), _unknown_message(name, declared, at == ""))
        elif kind == "required":
            summary = self.view(error).property(error.detail)
            summary = summary.summary() if summary else None
            name = _code(error.detail)
            self.push(at, f"{name} is missing: it is required ({summary})" if summary else f"{name} is missing: it is required")
        elif kind == "type":
            self.push(at, _expected_message(error.detail, self.view(error), error.instance))
        elif kind == "contains":
            wanted = self.view(error).child("contains")
            wanted = wanted.words(0) if wanted is not None else None
            if wanted:
                self.push(at, f"must contain enough items that are {wanted}")
            else:
                self.push(at, "must contain enough items of the required kind")
        elif kind == "propertyNames":
            self.describe_property_name(at, error.detail, depth)
        else:
            self.push(at, _plain_message(error))

    def describe_alternatives(self, error, depth):
        at = error.path
        if depth >= _MAX_NESTING:
            self.push(at, f"does not have any of the allowed forms; got {_described(error.instance)}")
            return
        mismatched = [branch for branch in error.context if _is_type_mismatch(branch, at)]
        fitting = [branch for branch in error.context if not _is_type_mismatch(branch, at)]
        if not fitting:
            self.push(at, _expected_message(_types_of(mismatched), None, error.instance))
        elif len(fitting) == 1:
            self.describe_branch(at, fitting[0], depth + 1)
        elif all(_is_value_mismatch(branch, at) for branch in fitting):
            allowed = _allowed_values(error for branch in fitting for error in branch)
            self.push(at, _not_allowed_message(error.instance, allowed, _types_of(mismatched)))
        else:
            tag = _common_tag(fitting)
            if tag is not None:
                self.push(tag[0].path, _not_allowed_message(tag[0].instance, tag[1], []))
            else:
                self.describe_branch(at, _best_branch(fitting), depth + 1)

    def describe_property_name(self, at, inner, depth):
        """A property name that breaks `propertyNames`: the name is described as a value, then
        reported at the object."""
        name = _subject(inner.instance)
        start = len(self.found)
        if depth < _MAX_NESTING:
            self.describe(inner, depth + 1)
        if len(self.found) == start:
            self.push(at, f"the field name {name} is not allowed")
            return
        for index in range(start, len(self.found)):
            self.found[index] = (at, f"the field name {name} is not allowed: {self.found[index][1]}")

    def describe_branch(self, at, branch, depth):
        if not branch:
            self.push(at, "does not have any of the allowed forms")
        else:
            self.describe_all(branch, depth)


class _View:
    """A schema seen through its `$ref` chain: a keyword is looked up on the schema itself
    first, then on what it refers to, so a property's own description wins over its type's."""

    def __init__(self, root, node):
        self.root, self.node = root, node

    def get(self, keyword):
        node = self.node
        for _ in range(_MAX_REF_HOPS):
            if not isinstance(node, dict):
                return None
            if keyword in node:
                return node[keyword]
            node = resolve_ref(self.root, node.get("$ref"))
        return None

    def child(self, keyword):
        node = self.get(keyword)
        return None if node is None else _View(self.root, node)

    def property(self, name):
        properties = self.get("properties")
        if isinstance(properties, dict) and name in properties:
            return _View(self.root, properties[name])
        return None

    def branches(self):
        for keyword in ("allOf", "anyOf", "oneOf"):
            for node in self.get(keyword) or []:
                yield _View(self.root, node)

    def number(self, keyword):
        value = self.get(keyword)
        return value if isinstance(value, (int, float)) and not isinstance(value, bool) else None

    def count(self, keyword):
        value = self.get(keyword)
        return value if isinstance(value, int) and not isinstance(value, bool) and value >= 0 else None

    def text(self, keyword):
        value = self.get(keyword)
        return value if isinstance(value, str) else None

    def declared_properties(self):
        names = set()
        for view in [self, *self.branches()]:
            properties = view.get("properties")
            if isinstance(properties, dict):
                names.update(properties)
        return sorted(names)

    def summary(self):
        """"a string: The text to search." for a property, from its type and description."""
        words = self.words(0)
        description = self.text("description")
        description = _first_sentence(description) if description is not None else None
        if words and description:
            return f"{words}: {description}"
        return words or description

    def words(self, depth):
        """What the schema accepts, in words: "an integer from 1 to 10", "one of: a, b"."""
        if depth > _MAX_DESCRIBE_DEPTH:
            return None
        if isinstance(self.node, dict) and "const" in self.node or self.get("const") is not None:
            return f"exactly {_listed(self.get('const'))}"
        values = self.enum_values()
        if values is not None:
            return _one_of_words(values)
        branches = self.get("anyOf") or self.get("oneOf")
        if isinstance(branches, list):
            words = []
            for node in branches:
                word = _View(self.root, node).words(depth + 1)
                if word is not None and word not in words:
                    words.append(word)
            return _join_or(words) if words else None
        words = [_type_words(kind, self) for kind in _null_last(self.types())]
        return _join_or(words) if words else None

    def enum_values(self):
        values = self.get("enum")
        if isinstance(values, list):
            return values
        branches = self.get("oneOf") or self.get("anyOf")
        if not isinstance(branches, list):
            return None
        consts = []
        for node in branches:
            view = _View(self.root, node)
            if view.get("const") is None and not (isinstance(node, dict) and "const" in node):
                return None
            consts.append(view.get("const"))
        return consts

    def types(self):
        kind = self.get("type")
        if isinstance(kind, str):
            return [kind] if kind in TYPE_ORDER else []
        if isinstance(kind, list):
            return [each for each in kind if each in TYPE_ORDER]
        return []


def _is_type_mismatch(branch, at):
    return bool(branch) and all(error.kind == "type" and error.path == at for error in branch)


def _is_value_mismatch(branch, at):
    return any(error.kind in ("enum", "const") for error in branch) and all(
        error.path == at and error.kind in ("enum", "const", "type") for error in branch
    )


def _is_tag_error(error):
    return error.kind == "const" or (error.kind == "enum" and isinstance(error.detail, list) and len(error.detail) == 1)


def _best_branch(branches):
    def score(indexed):
        index, branch = indexed
        missed_tags = sum(1 for error in branch if _is_tag_error(error))
        deepest = max((error.path.count("/") for error in branch), default=0)
        return (missed_tags, -deepest, len(branch), index)

    return min(enumerate(branches), key=score)[1]


def _common_tag(branches):
    tags = []
    for branch in branches:
        found = [error for error in branch if _is_tag_error(error)]
        if len(found) != 1:
            return None
        tags.append(found[0])
    if not tags or any(tag.path != tags[0].path for tag in tags):
        return None
    return tags[0], _allowed_values(tags)


def _types_of(branches):
    kinds = {kind for branch in branches for error in branch if error.kind == "type" for kind in error.detail}
    return sorted(kinds, key=TYPE_ORDER.index)


def _allowed_values(errors):
    values = []
    for error in errors:
        found = [error.detail] if error.kind == "const" else error.detail if error.kind == "enum" else []
        for value in found if isinstance(found, list) else []:
            if len(values) < _MAX_VALUES_KEPT and not any(_same(value, kept) for kept in values):
                values.append(value)
    return values


def _same(a, b):
    return type(a) is type(b) and a == b


def _expected_message(kinds, view, given):
    if not kinds:
        return f"has the wrong type; got {_described(given)}"
    words = [_type_words(kind, view) for kind in _null_last(kinds)]
    return f"expected {_join_or(words)}, got {_described(given)}"


def _not_allowed_message(given, allowed, also):
    if not allowed:
        return f"no value is allowed here; got {_described(given)}"
    strings = [value for value in allowed if isinstance(value, str)]
    guess = suggest.closest(given, strings, 1) if isinstance(given, str) else []
    guess = guess[0] if guess else None
    message = _subject(given)
    if len(allowed) <= _MAX_LISTED_VALUES:
        message += " is not one of the allowed values"
    else:
        message += f" is not one of the {len(allowed)} allowed values"
    message += f"; did you mean {_code(guess)}?" if guess is not None else "."
    message += " " + _allowed_list(given, allowed, strings, guess is not None)
    if also:
        message += f" (or {_join_or([_type_words(kind, None) for kind in _null_last(also)])})"
    return message


def _allowed_list(given, allowed, strings, close):
    if len(allowed) <= _MAX_LISTED_VALUES:
        return "Allowed: " + ", ".join(_listed(value) for value in allowed)
    if isinstance(given, str) and close and strings:
        nearest = suggest.nearest(given, strings, _NEAREST_SHOWN)
        return "Closest: " + ", ".join(_listed(name) for name in nearest) + ", …"
    shown = ", ".join(_listed(value) for value in allowed[:_MAX_LISTED_VALUES])
    return f"The first of them: {shown}, … (the parameter's schema lists them all)"


def _unknown_message(name, declared, top_level):
    what, label = ("a parameter", "Parameters") if top_level else ("a field of this object", "Fields")
    message = f"{_code(name)} is not {what}"
    guess = suggest.closest(name, declared, 1)
    message += f"; did you mean {_code(guess[0])}?" if guess else "."
    if declared:
        more = ", …" if len(declared) > _MAX_LISTED_NAMES else ""
        message += f" {label}: {', '.join(declared[:_MAX_LISTED_NAMES])}{more}"
    return message


def _plain_message(error):
    kind, limit, given = error.kind, error.detail, error.instance
    bounds = {
        "minimum": "must be at least", "maximum": "must be at most",
        "exclusiveMinimum": "must be greater than", "exclusiveMaximum": "must be less than",
        "multipleOf": "must be a multiple of",
    }
    if kind in bounds:
        return f"{bounds[kind]} {_number(limit)}; got {_shown(given)}"
    if kind in ("minLength", "maxLength"):
        bound = "at least" if kind == "minLength" else "at most"
        if limit == 1 and bound == "at least" and given == "":
            return "must not be empty"
        return f"must be {bound} {_count_of(limit, 'character')} long; got {_count_of(len(given), 'character')}"
    sizes = {
        "minItems": ("at least", "item"), "maxItems": ("at most", "item"),
        "minProperties": ("at least", "entry"), "maxProperties": ("at most", "entry"),
    }
    if kind in sizes:
        bound, unit = sizes[kind]
        return f"must have {bound} {_count_of(limit, unit)}; got {len(given)}"
    if kind == "pattern":
        return f"must match the pattern {_code(limit)}; got {_shown(given)}"
    if kind == "uniqueItems":
        return _unique_message(given)
    if kind == "enum":
        return _not_allowed_message(given, list(limit), [])
    if kind == "const":
        return f"must be exactly {_listed(limit)}; got {_shown(given)}"
    if kind == "oneOfMultiple":
        return "fits more than one of the allowed forms, so its meaning is ambiguous; it must fit exactly one"
    if kind in ("not", "false"):
        return f"this value is not allowed here; got {_described(given)}"
    return f"is not allowed here; got {_described(given)}"


def _unique_message(given):
    searched = given[:_MAX_DUPLICATE_SEARCH]
    for i, item in enumerate(searched):
        for j in range(i + 1, len(searched)):
            if _json(searched[j]) == _json(item):
                return f"items must be unique, but items {i} and {j} are equal"
    return "items must be unique; remove the duplicates"


def _null_last(kinds):
    return [kind for kind in kinds if kind != "null"] + [kind for kind in kinds if kind == "null"]


def _type_words(kind, view):
    if kind == "integer":
        return _number_words("an integer", view, True)
    if kind == "number":
        return _number_words("a number", view, False)
    if kind == "string":
        return _string_words(view)
    if kind == "array":
        items = view.child("items").types() if view is not None and view.child("items") else []
        return f"an array of {_PLURALS[items[0]]}" if len(items) == 1 else "an array"
    return {"object": "an object", "boolean": "a boolean (true or false)", "null": "null"}[kind]


def _number_words(noun, view, integer):
    fmt = view.text("format") if view is not None and integer else None
    implied = _INTEGER_FORMATS.get(fmt, (None, None))

    def bound(keyword):
        value = view.number(keyword) if view is not None else None
        return None if value is None else _number(value)

    low = bound("minimum") or (None if implied[0] is None else str(implied[0]))
    high = bound("maximum") or (None if implied[1] is None else str(implied[1]))
    low_exclusive, high_exclusive = bound("exclusiveMinimum"), bound("exclusiveMaximum")
    if low is not None and high is not None and low_exclusive is None and high_exclusive is None:
        return f"{noun} from {low} to {high}"
    if integer and low == "0" and high is None and low_exclusive is None and high_exclusive is None:
        return "a non-negative integer"
    parts = [
        f"{words} {value}"
        for words, value in (("at least", low), ("greater than", low_exclusive), ("at most", high), ("less than", high_exclusive))
        if value is not None
    ]
    return f"{noun} ({' and '.join(parts)})" if parts else noun


def _string_words(view):
    if view is None:
        return "a string"
    format_words = formats.words(view.text("format"))
    if format_words is not None:
        return f"a string: {format_words}"
    low, high = view.count("minLength"), view.count("maxLength")
    low = low if low else None
    if low == 1 and high is not None:
        words = f"a non-empty string of at most {_count_of(high, 'character')}"
    elif low == 1:
        words = "a non-empty string"
    elif low is not None and high is not None:
        words = f"a string of {low} to {high} characters"
    elif low is not None:
        words = f"a string of at least {_count_of(low, 'character')}"
    elif high is not None:
        words = f"a string of at most {_count_of(high, 'character')}"
    else:
        words = "a string"
    pattern = view.text("pattern")
    return f"{words} matching {_code(pattern)}" if pattern is not None else words


def _one_of_words(values):
    shown = [_listed(value) for value in values[:_MAX_LISTED_VALUES]]
    if len(values) <= _MAX_LISTED_VALUES:
        return "one of: " + ", ".join(shown)
    return f"one of {len(values)} values such as {', '.join(shown[:_NEAREST_SHOWN])}"


def _first_sentence(description):
    flat = " ".join(description.split())
    start = 0
    while True:
        at = flat.find(". ", start)
        if at < 0:
            break
        end = at + 1
        rest = flat[end:].lstrip()
        if rest[:1].isupper() and not flat[:end].endswith(("e.g.", "i.e.")):
            if len(flat[:end].encode()) <= _MAX_DESCRIPTION_BYTES:
                return flat[:end]
            break
        start = end
    return truncated(flat, _MAX_DESCRIPTION_BYTES)


def _join_or(words):
    return words[0] if len(words) == 1 else f"{', '.join(words[:-1])} or {words[-1]}" if words else ""


def _count_of(count, unit):
    if count == 1:
        return f"1 {unit}"
    return f"{count} entries" if unit == "entry" else f"{count} {unit}s"


def _subject(value):
    return _code(value) if isinstance(value, str) else _described(value)


def _described(value):
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (int, float)):
        return f"the number {_number(value)}"
    if isinstance(value, str):
        return f"the string {_quoted(value)}"
    if isinstance(value, list):
        return f"an array of {_count_of(len(value), 'item')}" if value else "an empty array"
    return "an object" if value else "an empty object"


def _shown(value):
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return _number(value)
    if isinstance(value, str):
        return _quoted(value)
    return _described(value)


def _listed(value):
    if isinstance(value, str):
        if value and all(char.isalnum() or char in "_-.:/+@#" for char in value):
            return truncated(value, _MAX_LISTED_BYTES)
        return _json(truncated(value, _MAX_LISTED_BYTES))
    return truncated(_json(value), _MAX_LISTED_BYTES)


def _code(text):
    if not text or "`" in text or any(ord(char) < 0x20 or 0x7F <= ord(char) < 0xA0 for char in text):
        return _quoted(text)
    return f"`{truncated(text, _MAX_QUOTED_BYTES)}`"


def _quoted(text):
    return _json(truncated(text, _MAX_QUOTED_BYTES))


def _number(value):
    return _json(value)


def _json(value):
    """As serde_json writes it: compact, keys sorted, non-ASCII kept."""
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"), sort_keys=True)


def truncated(text, max_bytes):
    """`text` cut to at most `max_bytes` UTF-8 bytes, `…` (3 bytes) marking a cut."""
    encoded = text.encode()
    if len(encoded) <= max_bytes:
        return text
    return encoded[: max(max_bytes - 3, 0)].decode(errors="ignore") + "…"
