# The code-mode script of the book (docs/src/code-mode.md) and the Python benchmark: five tool calls in one program.
shipments = tools.json_query(document=inputs, query="$.shipments[?@.status == 'open']")["matches"]
pounds = tools.calculator(expression=" + ".join(str(s["value"]["weight_lb"]) for s in shipments))["value"]
kilos = tools.unit_convert(value=pounds, to="kilogram", **{"from": "pound"})["value"]
oldest = min(s["value"]["shipped"] for s in shipments)
waiting = tools.datetime(operation="difference", instant=oldest, end="2026-11-24", time_zone="UTC")
contact = tools.regex(operation="find", pattern=r"[\w.]+@[\w.]+\w", text=inputs["note"])["matches"][0]["text"]
{"open": len(shipments), "kg": round(kilos, 1), "waiting": waiting["friendly"], "contact": contact}
