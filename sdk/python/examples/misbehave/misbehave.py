"""A test guest: one Python component that misbehaves in each way the host must contain.
(Each Python component compiles to tens of MB of native code, so one guest covers all.)"""

from typing import Literal

from toolcell_tool import InvalidArguments, tool

SECRET = "SECRET-py-7f3a"


@tool
def misbehave(mode: Literal["ok", "reject", "boom", "spin", "bomb"]) -> dict:
    """Misbehaves as asked, for testing a host. Never give it to a model.

    Args:
        mode: `ok` returns a value, `reject` refuses the arguments, `boom` raises an
            unexpected error whose text holds a secret, `spin` loops forever, `bomb`
            allocates memory without end.
    """
    if mode == "reject":
        raise InvalidArguments("`mode` is `reject`, so the tool refuses it: pick another mode")
    if mode == "boom":
        raise RuntimeError(f"connection to db://admin:{SECRET}@internal failed")
    if mode == "spin":
        while True:
            pass
    if mode == "bomb":
        hoard = []
        while True:
            hoard.append(bytearray(1 << 20))
    return {"mode": mode, "ok": True}
