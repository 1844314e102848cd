"""The demo's tools: JSON schemas (what the system prompt lists) and small deterministic
implementations (what produces the tool results in the training data). weft's TypeScript demo
implements the same functions so that the model sees results shaped like those it was trained on.
"""
import json

TOOLS = [
    {"type": "function", "function": {
        "name": "calculator",
        "description": "Do arithmetic on two numbers.",
        "parameters": {"type": "object", "properties": {
            "operation": {"type": "string", "enum": ["add", "subtract", "multiply", "divide"]},
            "a": {"type": "number"},
            "b": {"type": "number"},
        }, "required": ["operation", "a", "b"]}}},
    {"type": "function", "function": {
        "name": "convert_units",
        "description": "Convert a value from one unit to another.",
        "parameters": {"type": "object", "properties": {
            "value": {"type": "number"},
            "from_unit": {"type": "string", "enum": [
                "kilometers", "miles", "meters", "feet", "centimeters", "inches", "kilograms",
                "pounds", "grams", "ounces", "liters", "gallons", "celsius", "fahrenheit"]},
            "to_unit": {"type": "string", "description": "Same units as from_unit."},
        }, "required": ["value", "from_unit", "to_unit"]}}},
    {"type": "function", "function": {
        "name": "get_weather",
        "description": "Current weather in a city, or a forecast when days is given.",
        "parameters": {"type": "object", "properties": {
            "city": {"type": "string"},
            "unit": {"type": "string", "enum": ["celsius", "fahrenheit"]},
            "days": {"type": "integer", "description": "Forecast length."},
        }, "required": ["city"]}}},
    {"type": "function", "function": {
        "name": "create_event",
        "description": "Add an event to the calendar.",
        "parameters": {"type": "object", "properties": {
            "title": {"type": "string"},
            "date": {"type": "string", "description": "YYYY-MM-DD, the year is 2026."},
            "duration_minutes": {"type": "integer"},
            "attendees": {"type": "array", "items": {"type": "string"}},
            "reminder": {"type": "boolean"},
        }, "required": ["title", "date", "duration_minutes", "reminder"]}}},
    {"type": "function", "function": {
        "name": "send_email",
        "description": "Send an email.",
        "parameters": {"type": "object", "properties": {
            "to": {"type": "string"},
            "subject": {"type": "string"},
            "urgent": {"type": "boolean"},
        }, "required": ["to", "subject", "urgent"]}}},
]

FACTORS = {
    ("kilometers", "miles"): 0.621371, ("miles", "kilometers"): 1.609344,
    ("meters", "feet"): 3.28084, ("feet", "meters"): 0.3048,
    ("centimeters", "inches"): 0.393701, ("inches", "centimeters"): 2.54,
    ("kilograms", "pounds"): 2.20462, ("pounds", "kilograms"): 0.453592,
    ("grams", "ounces"): 0.035274, ("ounces", "grams"): 28.3495,
    ("liters", "gallons"): 0.264172, ("gallons", "liters"): 3.78541,
}
CONDITIONS = ["sunny", "cloudy", "rainy", "windy", "snowy"]


def fmt_number(x):
    """Two decimals at most, and integral values as ints, so Python and JS print them alike."""
    x = round(float(x), 2)
    return int(x) if x == int(x) else x


def city_hash(city):
    return sum((i + 1) * ord(ch) for i, ch in enumerate(city))


def to_unit(celsius, unit):
    return fmt_number(celsius * 9 / 5 + 32 if unit == "fahrenheit" else celsius)


def run_tool(name, args):
    if name == "calculator":
        a, b, op = args["a"], args["b"], args["operation"]
        if op == "add":
            r = a + b
        elif op == "subtract":
            r = a - b
        elif op == "multiply":
            r = a * b
        else:
            if b == 0:
                return {"error": "division by zero"}
            r = a / b
        return {"result": fmt_number(r)}
    if name == "convert_units":
        v, src, dst = args["value"], args["from_unit"], args["to_unit"]
        if src == dst:
            return {"value": fmt_number(v), "unit": dst}
        if (src, dst) == ("celsius", "fahrenheit"):
            return {"value": fmt_number(v * 9 / 5 + 32), "unit": dst}
        if (src, dst) == ("fahrenheit", "celsius"):
            return {"value": fmt_number((v - 32) * 5 / 9), "unit": dst}
        if (src, dst) not in FACTORS:
            return {"error": f"cannot convert {src} to {dst}"}
        return {"value": fmt_number(v * FACTORS[(src, dst)]), "unit": dst}
    if name == "get_weather":
        h = city_hash(args["city"])
        unit = args.get("unit", "celsius")
        temp = h % 35 - 5
        cond = CONDITIONS[h % 5]
        if "days" in args:
            return {"city": args["city"], "days": args["days"], "condition": cond,
                    "high": to_unit(temp + 2 + args["days"] % 3, unit), "low": to_unit(temp - 4, unit),
                    "unit": unit}
        return {"city": args["city"], "temperature": to_unit(temp, unit), "unit": unit,
                "condition": cond}
    if name == "create_event":
        return {"status": "created", "title": args["title"], "date": args["date"]}
    if name == "send_email":
        return {"status": "sent", "to": args["to"]}
    return {"error": f"unknown tool {name}"}


def result_text(result):
    """Tool results as the conversation carries them: compact JSON, like JS's JSON.stringify."""
    return json.dumps(result, separators=(",", ":"), ensure_ascii=False)


if __name__ == "__main__":  # python3 tools/demo-model/tool_impl.py > models/weft-demo/tools.json
    print(json.dumps(TOOLS, indent=1))
