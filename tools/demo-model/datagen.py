"""Synthetic, seeded chat conversations for the weft-demo model.

Each conversation is a list of Hugging Face-shaped messages (role, content, reasoning_content,
tool_calls [{type, function: {name, arguments}}]); the tools are the fixed TOOLS below, so the
rendered system prompt is identical every time. Arguments are copied or computed from the user's
words (month names become dates, "an hour" becomes 60, "subtract 3 from 10" puts 10 first), and
tool results come from the small deterministic implementations in this file.

    python3 tools/demo-model/datagen.py --seed 0 --count 60000 --out train.jsonl
"""
import argparse
import json
import random

from tool_impl import TOOLS, run_tool, fmt_number, result_text

CITIES = [
    "Paris", "London", "Tokyo", "Oslo", "Berlin", "Madrid", "Rome", "Cairo", "Lima", "Sydney",
    "Toronto", "Chicago", "Boston", "Denver", "Seattle", "Dublin", "Vienna", "Prague", "Lisbon",
    "Athens", "Mumbai", "Delhi", "Seoul", "Bangkok", "Nairobi", "Lagos", "Warsaw", "Helsinki",
    "Zurich", "Austin", "Miami", "Vancouver", "Montreal", "Santiago", "Manila", "Hanoi", "Osaka",
    "Auckland", "New York", "San Francisco", "Buenos Aires", "Mexico City", "Cape Town",
]
COUNTRY_OF = {
    "Paris": "France", "London": "the United Kingdom", "Tokyo": "Japan", "Oslo": "Norway",
    "Berlin": "Germany", "Madrid": "Spain", "Rome": "Italy", "Cairo": "Egypt", "Lima": "Peru",
    "Sydney": "Australia", "Toronto": "Canada", "Chicago": "the United States",
    "Boston": "the United States", "Denver": "the United States", "Seattle": "the United States",
    "Dublin": "Ireland", "Vienna": "Austria", "Prague": "the Czech Republic", "Lisbon": "Portugal",
    "Athens": "Greece", "Mumbai": "India", "Delhi": "India", "Seoul": "South Korea",
    "Bangkok": "Thailand", "Nairobi": "Kenya", "Lagos": "Nigeria", "Warsaw": "Poland",
    "Helsinki": "Finland", "Zurich": "Switzerland", "Austin": "the United States",
    "Miami": "the United States", "Vancouver": "Canada", "Montreal": "Canada", "Santiago": "Chile",
    "Manila": "the Philippines", "Hanoi": "Vietnam", "Osaka": "Japan", "Auckland": "New Zealand",
    "New York": "the United States", "San Francisco": "the United States",
    "Buenos Aires": "Argentina", "Mexico City": "Mexico", "Cape Town": "South Africa",
}
CAPITALS = {
    "France": "Paris", "Japan": "Tokyo", "Norway": "Oslo", "Germany": "Berlin", "Spain": "Madrid",
    "Italy": "Rome", "Egypt": "Cairo", "Peru": "Lima", "Ireland": "Dublin", "Austria": "Vienna",
    "Portugal": "Lisbon", "Greece": "Athens", "South Korea": "Seoul", "Thailand": "Bangkok",
    "Kenya": "Nairobi", "Poland": "Warsaw", "Finland": "Helsinki", "Chile": "Santiago",
    "Vietnam": "Hanoi", "Canada": "Ottawa", "Australia": "Canberra", "India": "New Delhi",
    "Mexico": "Mexico City", "Argentina": "Buenos Aires", "Brazil": "Brasilia",
}
NAMES = [
    "Ana", "Ben", "Chloe", "David", "Emma", "Felix", "Grace", "Hugo", "Iris", "Jack", "Kate",
    "Leo", "Maya", "Noah", "Olivia", "Paul", "Quinn", "Rosa", "Sam", "Tara", "Uma", "Victor",
    "Wendy", "Yusuf", "Zoe",
]
TITLES = [
    "team standup", "dentist appointment", "project review", "yoga class", "book club",
    "budget meeting", "code review", "birthday party", "coffee chat", "design workshop",
    "sprint planning", "piano lesson", "doctor visit", "quarterly review", "movie night",
]
SUBJECTS = [
    "the budget", "lunch plans", "the quarterly report", "the team offsite", "the new website",
    "the client meeting", "the product launch", "travel plans", "the invoice",
    "the holiday schedule", "the contract", "the job interview",
]
MONTHS = [
    "January", "February", "March", "April", "May", "June", "July", "August", "September",
    "October", "November", "December",
]
UNIT_PAIRS = [
    ("kilometers", "miles"), ("meters", "feet"), ("centimeters", "inches"),
    ("kilograms", "pounds"), ("grams", "ounces"), ("liters", "gallons"), ("celsius", "fahrenheit"),
]
UNIT_WORDS = {  # how a user may write a unit
    "kilometers": ["kilometers", "km"], "miles": ["miles"], "meters": ["meters", "m"],
    "feet": ["feet", "ft"], "centimeters": ["centimeters", "cm"], "inches": ["inches"],
    "kilograms": ["kilograms", "kg"], "pounds": ["pounds", "lbs"], "grams": ["grams", "g"],
    "ounces": ["ounces", "oz"], "liters": ["liters"], "gallons": ["gallons"],
    "celsius": ["degrees celsius"], "fahrenheit": ["degrees fahrenheit"],
}
DURATION_WORDS = {30: ["30 minutes", "half an hour"], 60: ["60 minutes", "an hour", "one hour"],
                  90: ["90 minutes"], 120: ["120 minutes", "two hours"], 15: ["15 minutes"],
                  45: ["45 minutes"]}
OP_WORDS = {"add": "plus", "subtract": "minus", "multiply": "times", "divide": "divided by"}


def call(name, **arguments):
    return {"type": "function", "function": {"name": name, "arguments": arguments}}


def lower_first(s):
    return s[0].lower() + s[1:]


def pick_number(rng):
    r = rng.random()
    if r < 0.6:
        return rng.randint(2, 99)
    if r < 0.85:
        return rng.randint(100, 999)
    return fmt_number(rng.randint(1, 999) / 10)


def req_calculator(rng):
    op = rng.choice(["add", "subtract", "multiply", "divide"])
    a, b = pick_number(rng), pick_number(rng)
    phrasings = {
        "add": ["What is {a} plus {b}?", "Add {a} and {b}.", "What's the sum of {a} and {b}?",
                "Calculate {a} + {b}."],
        "subtract": ["What is {a} minus {b}?", "Subtract {b} from {a}.", "Calculate {a} - {b}.",
                     "What's {a} take away {b}?"],
        "multiply": ["What is {a} times {b}?", "Multiply {a} by {b}.", "Calculate {a} * {b}.",
                     "What's the product of {a} and {b}?"],
        "divide": ["What is {a} divided by {b}?", "Divide {a} by {b}.", "Calculate {a} / {b}.",
                   "How much is {a} over {b}?"],
    }
    user = rng.choice(phrasings[op]).format(a=a, b=b)
    c = call("calculator", operation=op, a=a, b=b)
    words = OP_WORDS[op]
    return dict(
        user=user,
        think=f"The user wants {a} {words} {b}, so I call calculator with operation {op}, a = {a} and b = {b}.",
        call=c,
        answer=lambda res: f"{a} {words} {b} is {res['result']}.",
    )


def req_convert(rng):
    pair = rng.choice(UNIT_PAIRS)
    src, dst = pair if rng.random() < 0.5 else pair[::-1]
    value = pick_number(rng)
    s_word, d_word = rng.choice(UNIT_WORDS[src]), rng.choice(UNIT_WORDS[dst])
    user = rng.choice([
        "Convert {v} {s} to {d}.", "How many {d} is {v} {s}?", "What is {v} {s} in {d}?",
        "Please convert {v} {s} into {d}.",
    ]).format(v=value, s=s_word, d=d_word)
    c = call("convert_units", value=value, from_unit=src, to_unit=dst)
    return dict(
        user=user,
        think=f"The user wants {value} {src} in {dst}, so I call convert_units with value {value}, from_unit {src} and to_unit {dst}.",
        call=c,
        answer=lambda res: f"{value} {src} is {res['value']} {dst}.",
    )


def req_weather(rng):
    city = rng.choice(CITIES)
    unit = rng.choice([None, None, "celsius", "fahrenheit"])
    days = rng.choice([None, None, None, rng.randint(2, 7)])
    unit_part = f" in {unit}" if unit else ""
    if days is None:
        user = rng.choice([
            "What's the weather in {c}{u}?", "How is the weather in {c} right now{u}?",
            "Tell me the temperature in {c}{u}.", "Weather for {c}{u}, please.",
        ]).format(c=city, u=unit_part)
    else:
        user = rng.choice([
            "What's the {n}-day forecast for {c}{u}?",
            "Give me the forecast for {c} for the next {n} days{u}.",
            "What will the weather be in {c} over the next {n} days{u}?",
        ]).format(c=city, n=days, u=unit_part)
    args = {"city": city}
    if unit:
        args["unit"] = unit
    if days is not None:
        args["days"] = days
    c = call("get_weather", **args)
    detail = f"city {city}"
    if unit:
        detail += f", unit {unit}"
    if days is not None:
        detail += f", days {days}"
    what = "forecast" if days is not None else "weather"
    think = f"The user asks for the {what} in {city}, so I call get_weather with {detail}."

    def answer(res):
        if days is None:
            return f"It is {res['temperature']} degrees {res['unit']} and {res['condition']} in {city}."
        return (f"The next {days} days in {city} look {res['condition']}, with highs of {res['high']}"
                f" and lows of {res['low']} degrees {res['unit']}.")
    return dict(user=user, think=think, call=c, answer=answer)


def req_event(rng):
    title = rng.choice(TITLES)
    month_index = rng.randrange(12)
    day = rng.randint(1, 28)
    duration = rng.choice(list(DURATION_WORDS))
    dur_word = rng.choice(DURATION_WORDS[duration])
    people = rng.sample(NAMES, rng.choice([0, 1, 1, 2, 2, 3]))
    reminder = rng.random() < 0.5
    month = MONTHS[month_index]
    date = f"2026-{month_index + 1:02d}-{day:02d}"
    if len(people) == 0:
        with_part = ""
    elif len(people) == 1:
        with_part = f" with {people[0]}"
    else:
        with_part = " with " + ", ".join(people[:-1]) + " and " + people[-1]
    rem_part = rng.choice(["and remind me", "with a reminder"]) if reminder else rng.choice(
        ["no reminder", "without a reminder"])
    user = rng.choice([
        "Schedule {t} on {m} {d} for {du}{w}, {r}.",
        "Add {t} to my calendar on {m} {d}, {du}{w}, {r}.",
        "Book {t} for {m} {d}, lasting {du}{w}, {r}.",
    ]).format(t=title, m=month, d=day, du=dur_word, w=with_part, r=rem_part)
    args = {"title": title, "date": date, "duration_minutes": duration}
    if people:
        args["attendees"] = people
    args["reminder"] = reminder
    c = call("create_event", **args)
    who = f", attendees {', '.join(people)}" if people else ""
    think = (f"The user wants {title} on {month} {day}, which is {date}, for {duration} minutes{who}"
             f", reminder {'true' if reminder else 'false'}. I call create_event.")
    return dict(user=user, think=think, call=c,
                answer=lambda res: f"I added {title} on {month} {day} to your calendar.")


def req_email(rng):
    name = rng.choice(NAMES)
    subject = rng.choice(SUBJECTS)
    urgent = rng.random() < 0.5
    if urgent:
        user = rng.choice([
            "Send an urgent email to {n} about {s}.", "Email {n} about {s}, it's urgent.",
            "Write to {n} about {s} right away, it is urgent.",
        ])
    else:
        user = rng.choice([
            "Email {n} about {s}.", "Send an email to {n} about {s}, no rush.",
            "Write to {n} about {s}, it is not urgent.",
        ])
    user = user.format(n=name, s=subject)
    c = call("send_email", to=name, subject=subject, urgent=urgent)
    think = (f"The user wants an email to {name} about {subject}, urgent {'true' if urgent else 'false'}."
             " I call send_email.")
    return dict(user=user, think=think, call=c,
                answer=lambda res: f"Your email to {name} about {subject} has been sent.")


REQUESTS = [req_calculator, req_convert, req_weather, req_event, req_email]


def no_tool_exchange(rng):
    kind = rng.choice(["greet", "thanks", "abilities", "capital", "country", "capital", "country"])
    if kind == "greet":
        user = rng.choice(["Hello!", "Hi there.", "Good morning!", "Hey, how are you?"])
        think = "The user is greeting me. No tool is needed."
        answer = "Hello! I can do arithmetic, convert units, check the weather, add calendar events and send emails."
    elif kind == "thanks":
        user = rng.choice(["Thanks!", "Thank you, that helps.", "Great, thanks a lot."])
        think = "The user is thanking me. No tool is needed."
        answer = "You're welcome!"
    elif kind == "abilities":
        user = rng.choice(["What can you do?", "Which tools do you have?", "How can you help me?"])
        think = "The user asks what I can do. No tool is needed."
        answer = "I can do arithmetic, convert units, check the weather, add calendar events and send emails."
    elif kind == "capital":
        country = rng.choice(list(CAPITALS))
        user = rng.choice(["What is the capital of {c}?", "Which city is the capital of {c}?"]).format(c=country)
        think = f"This is a general question about {country}. No tool is needed."
        answer = f"The capital of {country} is {CAPITALS[country]}."
    else:
        city = rng.choice(CITIES)
        user = rng.choice(["Which country is {c} in?", "In what country is {c}?"]).format(c=city)
        think = f"This is a general question about {city}. No tool is needed."
        answer = f"{city} is in {COUNTRY_OF[city]}."
    return [
        {"role": "user", "content": user},
        {"role": "assistant", "content": answer, "reasoning_content": think},
    ]


def tool_exchange(rng):
    n = rng.choices([1, 2, 3], weights=[0.6, 0.3, 0.1])[0]
    reqs = [rng.choice(REQUESTS)(rng) for _ in range(n)]
    user = reqs[0]["user"]
    for r in reqs[1:]:
        user += " " + rng.choice(["Also, ", "And ", "Then "]) + lower_first(r["user"])
    if n == 1:
        think = reqs[0]["think"]
    else:
        think = f"The user asks for {n} things. " + " ".join(r["think"] for r in reqs)
    calls = [r["call"] for r in reqs]
    results = [run_tool(c["function"]["name"], c["function"]["arguments"]) for c in calls]
    messages = [
        {"role": "user", "content": user},
        {"role": "assistant", "content": "", "reasoning_content": think, "tool_calls": calls},
    ]
    for c, res in zip(calls, results):
        messages.append({"role": "tool", "name": c["function"]["name"], "content": result_text(res)})
    final_think = ("The tool returned the result, so I can answer." if n == 1
                   else f"The tools returned all {n} results, so I can answer.")
    answer = " ".join(r["answer"](res) for r, res in zip(reqs, results))
    messages.append({"role": "assistant", "content": answer, "reasoning_content": final_think})
    return messages


def exchange(rng):
    return no_tool_exchange(rng) if rng.random() < 0.3 else tool_exchange(rng)


def conversation(rng):
    messages = []
    if rng.random() < 0.15:  # an earlier exchange in the history
        messages += exchange(rng)
    messages += exchange(rng)
    return messages


def generate(seed, count):
    rng = random.Random(seed)
    return [conversation(rng) for _ in range(count)]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--count", type=int, default=1000)
    ap.add_argument("--out", required=True)
    args = ap.parse_args()
    with open(args.out, "w") as f:
        for i, messages in enumerate(generate(args.seed, args.count)):
            f.write(json.dumps({"id": f"s{args.seed}-{i}", "messages": messages}) + "\n")


if __name__ == "__main__":
    main()
