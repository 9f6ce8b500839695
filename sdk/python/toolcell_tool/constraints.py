"""Constraints on a parameter, written with `typing.Annotated`, that become schema keywords.

    text: Annotated[str, Length(min=1, max=100_000)]
    count: Annotated[int, Range(min=1, max=50)]
    code: Annotated[str, Pattern(r"^[A-Z]{3}$")]
    ratio: Annotated[float, Schema({"exclusiveMinimum": 0})]

The host checks them before the tool runs, so the function can rely on them.
"""

import re


class Constraint:
    """Base of the markers; `keywords(kind)` gives the schema keywords for a value whose JSON
    type is `kind` ("string", "integer", "number", "array", "object", ...), or raises
    ValueError saying why the marker does not apply to it."""

    def keywords(self, kind):
        raise NotImplementedError


def _drop_none(keywords):
    return {key: value for key, value in keywords.items() if value is not None}


class Range(Constraint):
    """Inclusive bounds on a number: `Range(min=1)`, `Range(max=10)`, `Range(min=0, max=1)`."""

    def __init__(self, min=None, max=None):  # noqa: A002 - the names the Rust macro uses
        if min is None and max is None:
            raise ValueError("Range needs min=, max= or both")
        for bound in (min, max):
            if bound is not None and (isinstance(bound, bool) or not isinstance(bound, (int, float))):
                raise ValueError(f"Range bounds must be numbers, not {bound!r}")
        self.min, self.max = min, max

    def keywords(self, kind):
        if kind not in ("integer", "number"):
            raise ValueError("Range applies to int and float")
        return _drop_none({"minimum": self.min, "maximum": self.max})

    def __repr__(self):
        return f"Range(min={self.min!r}, max={self.max!r})"


class Length(Constraint):
    """Bounds on a length: characters of a str, items of a list, entries of a dict."""

    _KEYWORDS = {"string": "Length", "array": "Items", "object": "Properties"}

    def __init__(self, min=None, max=None):  # noqa: A002
        if min is None and max is None:
            raise ValueError("Length needs min=, max= or both")
        for bound in (min, max):
            if bound is not None and (isinstance(bound, bool) or not isinstance(bound, int) or bound < 0):
                raise ValueError(f"Length bounds must be non-negative ints, not {bound!r}")
        self.min, self.max = min, max

    def keywords(self, kind):
        suffix = self._KEYWORDS.get(kind)
        if suffix is None:
            raise ValueError("Length applies to str, list and dict")
        return _drop_none({"min" + suffix: self.min, "max" + suffix: self.max})

    def __repr__(self):
        return f"Length(min={self.min!r}, max={self.max!r})"


class Pattern(Constraint):
    """A regular expression a str must match somewhere (anchor it with ^...$ to match all of
    it), in the syntax Python and the host's validator share."""

    def __init__(self, regex):
        re.compile(regex)  # a broken pattern fails at decoration, not in the host
        self.regex = regex

    def keywords(self, kind):
        if kind != "string":
            raise ValueError("Pattern applies to str")
        return {"pattern": self.regex}

    def __repr__(self):
        return f"Pattern({self.regex!r})"


class Schema(Constraint):
    """Raw JSON Schema keywords merged into the parameter's schema, for what the other
    markers do not say (`{"format": "date"}`, `{"exclusiveMinimum": 0}`, `{"examples": [...]}`).

    Native tests check only the keywords the SDK's validator knows; the host checks all."""

    def __init__(self, keywords):
        if not isinstance(keywords, dict):
            raise ValueError("Schema takes a dict of JSON Schema keywords")
        self.raw = dict(keywords)

    def keywords(self, kind):
        return dict(self.raw)

    def __repr__(self):
        return f"Schema({self.raw!r})"
