"""What the host tells a tool about one call, outside the arguments."""

import json
from dataclasses import dataclass, field


@dataclass(frozen=True)
class Context:
    """The call id and the host application's context object (a user id, a locale, ...).

    A tool receives it through a parameter annotated `Context`; it is never part of the
    parameters schema, so a model never sees or supplies it.
    """

    call_id: str = ""
    host_context: dict = field(default_factory=dict)

    @classmethod
    def from_wit(cls, call_id, host_context_json):
        """From the WIT `call-context` record (the host context travels as JSON text)."""
        try:
            host_context = json.loads(host_context_json) if host_context_json else {}
        except ValueError:
            host_context = {}
        if not isinstance(host_context, dict):
            host_context = {}
        return cls(call_id=call_id, host_context=host_context)
