"""The `text_stats` tool. Make the example below your own: the function's docstring is the
description a model reads to decide when to call the tool, its `Args:` section describes
each argument, and the type hints become the JSON Schema the host checks every call
against before the tool runs.

`toolcell build` compiles it to a component; `python3 -m unittest` runs the tests natively.
Import everything at module level: a component cannot import during a call.
"""

from collections import Counter
from dataclasses import dataclass
from typing import Annotated, Literal

from toolcell_tool import InvalidArguments, Length, Range, tool


@dataclass
class Stats:
    """What was counted.

    Attributes:
        count: How many units the text has.
        unit: The unit counted.
        most_common: The most frequent words, most frequent first, when asked for.
    """

    count: int
    unit: str
    most_common: list[str] | None = None


@tool(name="text_stats", title="Text stats", read_only=True, idempotent=True)
def text_stats(
    text: Annotated[str, Length(min=1, max=100_000)],
    unit: Literal["words", "lines", "characters"] = "words",
    top_words: Annotated[int, Range(min=1, max=20)] | None = None,
) -> Stats:
    """Count the words, lines or characters in a text. Use it when asked how long a text is.

    Args:
        text: The text to measure.
        unit: What to count; words when omitted.
        top_words: Also list this many of the most frequent words.
    """
    words = text.split()
    if not words:
        # A tool's own refusal: the model is told to change its arguments.
        raise InvalidArguments("`text` is only whitespace: give the text to measure")
    count = {"words": len(words), "lines": len(text.splitlines()), "characters": len(text)}[unit]
    most_common = None
    if top_words is not None:
        most_common = [word for word, _ in Counter(word.lower() for word in words).most_common(top_words)]
    return Stats(count=count, unit=unit, most_common=most_common)
