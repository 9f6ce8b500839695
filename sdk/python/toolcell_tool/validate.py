"""Checks a JSON value against a JSON Schema: the subset of draft 2020-12 that tool schemas
use, reporting each failure as jsonschema-rs (the host's validator) does, for
`violations.explain` to put into the host's words.

Checked: $ref (local), type, enum, const, the numeric, string, array and object limits,
pattern, items, prefixItems, contains, properties, patternProperties, required,
additionalProperties, propertyNames, anyOf, oneOf, allOf, not. Others (format, if/then,
dependentRequired, unevaluated*, ...) are not checked here; the host checks them.
"""

import re

# jsonschema-rs's order of types, which its type errors list them in.
TYPE_ORDER = ("null", "boolean", "integer", "number", "string", "array", "object")
_MAX_REF_HOPS = 16


class SchemaError(Exception):
    """One way a value breaks a schema, like jsonschema-rs's `ValidationError`.

    `kind` is the keyword (`type`, `required`, `additionalProperties`, `anyOf`, ...), `path`
    the JSON Pointer of the value, `instance` the value, `parent` the schema object holding
    the keyword, `detail` what the keyword said (a limit, the missing name, the types), and
    `context` the errors of each alternative of an `anyOf` / `oneOf`.
    """

    def __init__(self, kind, path, instance, parent, detail=None, context=None):
        super().__init__(kind)
        self.kind, self.path, self.instance = kind, path, instance
        self.parent, self.detail, self.context = parent, detail, context


def json_type(value):
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int):
        return "integer"
    if isinstance(value, float):
        return "integer" if value.is_integer() else "number"
    if isinstance(value, str):
        return "string"
    if isinstance(value, list):
        return "array"
    if isinstance(value, dict):
        return "object"
    raise TypeError(f"{type(value).__name__} is not a JSON value")


def is_number(value):
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def json_equal(a, b):
    """JSON equality: `true` is not `1`, but `1` is `1.0`."""
    if is_number(a) and is_number(b):
        return a == b
    if type(a) is not type(b):
        return False
    if isinstance(a, list):
        return len(a) == len(b) and all(json_equal(x, y) for x, y in zip(a, b))
    if isinstance(a, dict):
        return a.keys() == b.keys() and all(json_equal(a[key], b[key]) for key in a)
    return a == b


def resolve_ref(root, reference):
    """A local reference (`#`, `#/$defs/X`) in `root`; None for anything else."""
    if not isinstance(reference, str) or not reference.startswith("#"):
        return None
    fragment = reference[1:]
    if not fragment:
        return root
    if not fragment.startswith("/"):
        return None
    node = root
    for token in fragment[1:].split("/"):
        token = _percent_decode(token).replace("~1", "/").replace("~0", "~")
        if isinstance(node, dict) and token in node:
            node = node[token]
        elif isinstance(node, list) and token.isdigit() and int(token) < len(node):
            node = node[int(token)]
        else:
            return None
    return node


def _percent_decode(token):
    return re.sub(r"%([0-9A-Fa-f]{2})", lambda match: chr(int(match.group(1), 16)), token)


def child_pointer(path, name):
    return f"{path}/{str(name).replace('~', '~0').replace('/', '~1')}"


def errors(root, value, node=None, path="", hops=0):
    """Every way `value` breaks `node` (default: the whole schema `root`)."""
    node = root if node is None else node
    if node is True or node == {}:
        return []
    if node is False:
        return [SchemaError("false", path, value, node)]
    if not isinstance(node, dict):
        return []
    found = []
    if "$ref" in node and hops < _MAX_REF_HOPS:
        target = resolve_ref(root, node["$ref"])
        if target is not None:
            found += errors(root, value, target, path, hops + 1)
    found += _type_and_value(node, value, path)
    if is_number(value):
        found += _number(node, value, path)
    elif isinstance(value, str):
        found += _string(node, value, path)
    elif isinstance(value, list):
        found += _array(root, node, value, path)
    elif isinstance(value, dict):
        found += _object(root, node, value, path)
    found += _combinators(root, node, value, path, hops)
    return found


def _type_and_value(node, value, path):
    found = []
    wanted = node.get("type")
    if wanted is not None:
        wanted = [wanted] if isinstance(wanted, str) else list(wanted)
        actual = json_type(value)
        if actual not in wanted and not (actual == "integer" and "number" in wanted):
            ordered = sorted(set(wanted) & set(TYPE_ORDER), key=TYPE_ORDER.index)
            found.append(SchemaError("type", path, value, node, ordered))
    if "enum" in node and isinstance(node["enum"], list):
        if not any(json_equal(value, option) for option in node["enum"]):
            found.append(SchemaError("enum", path, value, node, node["enum"]))
    if "const" in node and not json_equal(value, node["const"]):
        found.append(SchemaError("const", path, value, node, node["const"]))
    return found


def _number(node, value, path):
    tests = {
        "minimum": lambda limit: value >= limit,
        "maximum": lambda limit: value <= limit,
        "exclusiveMinimum": lambda limit: value > limit,
        "exclusiveMaximum": lambda limit: value < limit,
        "multipleOf": lambda limit: limit <= 0 or (value / limit).is_integer(),
    }
    return [
        SchemaError(keyword, path, value, node, node[keyword])
        for keyword, test in tests.items()
        if is_number(node.get(keyword)) and not test(node[keyword])
    ]


def _string(node, value, path):
    found = []
    length = len(value)
    if isinstance(node.get("minLength"), int) and length < node["minLength"]:
        found.append(SchemaError("minLength", path, value, node, node["minLength"]))
    if isinstance(node.get("maxLength"), int) and length > node["maxLength"]:
        found.append(SchemaError("maxLength", path, value, node, node["maxLength"]))
    pattern = node.get("pattern")
    if isinstance(pattern, str) and not _matches(pattern, value):
        found.append(SchemaError("pattern", path, value, node, pattern))
    return found


def _matches(pattern, text):
    try:
        return re.search(pattern, text) is not None
    except re.error:
        return True  # a pattern Python cannot read is the host's to check


def _array(root, node, value, path):
    found = []
    for keyword, failed in (("minItems", lambda limit: len(value) < limit), ("maxItems", lambda limit: len(value) > limit)):
        if isinstance(node.get(keyword), int) and failed(node[keyword]):
            found.append(SchemaError(keyword, path, value, node, node[keyword]))
    if node.get("uniqueItems") is True:
        if any(json_equal(a, b) for i, a in enumerate(value) for b in value[i + 1 :]):
            found.append(SchemaError("uniqueItems", path, value, node))
    prefix = node.get("prefixItems") if isinstance(node.get("prefixItems"), list) else []
    items = node.get("items")
    for index, item in enumerate(value):
        schema = prefix[index] if index < len(prefix) else items
        if schema is not None:
            found += errors(root, item, schema, child_pointer(path, index))
    if "contains" in node and not any(not errors(root, item, node["contains"]) for item in value):
        found.append(SchemaError("contains", path, value, node))
    return found


def _object(root, node, value, path):
    found = []
    properties = node.get("properties") if isinstance(node.get("properties"), dict) else {}
    for name in node.get("required", []) if isinstance(node.get("required"), list) else []:
        if name not in value:
            found.append(SchemaError("required", path, value, node, name))
    for keyword, failed in (("minProperties", lambda n: len(value) < n), ("maxProperties", lambda n: len(value) > n)):
        if isinstance(node.get(keyword), int) and failed(node[keyword]):
            found.append(SchemaError(keyword, path, value, node, node[keyword]))
    patterns = node.get("patternProperties") if isinstance(node.get("patternProperties"), dict) else {}
    extra = []
    for name, item in value.items():
        pointer = child_pointer(path, name)
        declared = name in properties
        if declared:
            found += errors(root, item, properties[name], pointer)
        for pattern, schema in patterns.items():
            if _matches(pattern, name):
                declared = True
                found += errors(root, item, schema, pointer)
        if not declared:
            extra.append(name)
    additional = node.get("additionalProperties")
    if extra and additional is False and "properties" not in node and "patternProperties" not in node:
        # With nothing declared, the host's validator reports `false` at the object, about
        # its first value, rather than naming the properties.
        found.append(SchemaError("false", path, value[extra[0]], node))
    elif extra and additional is False:
        found.append(SchemaError("additionalProperties", path, value, node, extra))
    elif extra and isinstance(additional, dict):
        for name in extra:
            found += errors(root, value[name], additional, child_pointer(path, name))
    found += _property_names(root, node, value, path)
    return found


def _property_names(root, node, value, path):
    """`propertyNames: false` is `false` at a non-empty object; otherwise every error of every
    name, each reported at the object (`detail` holds the name's own error)."""
    names = node.get("propertyNames", True)
    if names is False:
        return [SchemaError("false", path, value, node)] if value else []
    if not isinstance(names, dict):
        return []
    return [
        SchemaError("propertyNames", path, value, node, inner)
        for name in value
        for inner in errors(root, name, names, path)
    ]


def _combinators(root, node, value, path, hops):
    found = []
    for branch in node.get("allOf", []) if isinstance(node.get("allOf"), list) else []:
        found += errors(root, value, branch, path, hops)
    for keyword in ("anyOf", "oneOf"):
        branches = node.get(keyword)
        if not isinstance(branches, list):
            continue
        context = [errors(root, value, branch, path, hops) for branch in branches]
        valid = sum(1 for branch in context if not branch)
        if valid == 0:
            found.append(SchemaError(keyword, path, value, node, context=context))
        elif keyword == "oneOf" and valid > 1:
            found.append(SchemaError("oneOfMultiple", path, value, node))
    if "not" in node and not errors(root, value, node["not"], path, hops):
        found.append(SchemaError("not", path, value, node))
    return found
