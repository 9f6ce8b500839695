"""The errors a tool raises to say why a call did not produce a result.

They map onto the WIT `tool-error` variant. Any other exception is a bug in the tool: the
component reports it as `failed` with a generic message, because its text may hold secrets.
"""


class ToolError(Exception):
    """Base of the errors a tool raises on purpose; `message` is written for the model."""

    def __init__(self, message):
        super().__init__(message)
        self.message = str(message)


class InvalidArguments(ToolError):
    """The arguments are well-formed but unusable: the model should change them and call
    again. Say what to change, e.g. "`expression`: unexpected `)` at column 7".

    The host reports it as `rejected_arguments` (its own `invalid_arguments` means the
    arguments broke the schema and the tool never ran).
    """


class Failed(ToolError):
    """The tool could not do its work for a reason other than the arguments.

    `retryable=True` when calling again with the same arguments may succeed (a transient
    condition); the host reports it as `tool_failed` either way.
    """

    def __init__(self, message, retryable=False):
        super().__init__(message)
        self.retryable = bool(retryable)


class Unavailable(Failed):
    """The tool cannot work here because the operator has not granted what it needs (a
    directory, an HTTP host, a secret). Reported like `Failed`, not retryable."""

    def __init__(self, message):
        super().__init__(message, retryable=False)


class ToolDefinitionError(TypeError):
    """A tool is defined wrongly (a missing description, an unsupported type hint, ...).

    Raised when the function is decorated or the project is built, never during a call.
    """
