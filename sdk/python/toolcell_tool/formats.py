"""The string formats JSON Schema defines, in the words a model reads for them: a copy of the
host's one table (toolcell_schema::formats, schema/src/formats.rs). tests/test_corpus.py
checks it against schema/corpus/formats.json, which the host's tests check against the
original, so the copies cannot drift."""

# Every format of JSON Schema 2020-12's format vocabulary, with its words.
STANDARD = (
    ("date-time", "a date-time like 2024-03-10T08:30:00Z"),
    ("date", "a date like 2024-03-10"),
    ("time", "a time like 08:30:00Z"),
    ("duration", "an ISO 8601 duration like P1DT2H"),
    ("email", "an email address"),
    ("idn-email", "an email address"),
    ("hostname", "a host name"),
    ("idn-hostname", "a host name"),
    ("ipv4", "an IPv4 address"),
    ("ipv6", "an IPv6 address"),
    ("uri", "an absolute URI"),
    ("uri-reference", "a URI or relative reference"),
    ("iri", "an absolute URI"),
    ("iri-reference", "a URI or relative reference"),
    ("uuid", "a UUID"),
    ("uri-template", "a URI template"),
    ("json-pointer", "a JSON Pointer like /a/0"),
    ("relative-json-pointer", "a relative JSON Pointer like 1/a"),
    ("regex", "a valid regular expression"),
)

_WORDS = dict(STANDARD)


def words(format_name):
    """What a value of a standard format looks like ("a date like 2024-03-10"); None for others."""
    return _WORDS.get(format_name) if isinstance(format_name, str) else None
