"""The synthetic tool catalogue: a few dozen tools across domains, each with a typed JSON schema,
a templated request clause, a deterministic response generator and a templated answer sentence.

Language is deliberately regular (one clause shape per tool) so a very small model can learn when
and how to call; values in the answers are copied from the arguments and the tool response, so
an offline grounding judge can check them. Chains link one tool's output field to another
tool's argument for dependent multi-step tasks.
"""

from __future__ import annotations

import random
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

CITIES = ["Paris", "Tokyo", "Boston", "Chicago", "Berlin", "Madrid", "Rome", "Sydney", "Toronto", "Denver",
          "Austin", "Seattle", "Lima", "Cairo", "Oslo", "Dublin", "Vienna", "Prague", "Lisbon", "Athens",
          "Mumbai", "Seoul", "Miami", "Dallas"]
CURRENCIES = ["USD", "EUR", "GBP", "JPY", "CAD", "AUD", "CHF", "INR"]
TICKERS = ["AAPL", "MSFT", "GOOG", "AMZN", "TSLA", "NVDA", "META", "IBM"]
PRODUCTS = ["laptop", "phone", "headphones", "camera", "monitor", "keyboard", "backpack", "watch", "tablet", "speaker"]
TEAMS = ["Lions", "Tigers", "Bears", "Eagles", "Sharks", "Wolves", "Falcons", "Hawks"]
LEAGUES = ["north", "south", "east", "west"]
GENRES = ["jazz", "rock", "pop", "classical", "blues", "folk"]
TOPICS = ["science", "sports", "business", "health", "technology", "travel"]
ZONES = ["UTC", "EST", "PST", "CET", "JST", "IST"]
WORDS = ["harbor", "lantern", "meadow", "quartz", "summit", "velvet", "canyon", "glacier", "orbit", "pebble"]
TITLES = ["team sync", "dentist visit", "project review", "lunch with Ana", "gym session", "budget meeting"]
CONDITIONS = ["sunny", "cloudy", "rainy", "windy", "snowy", "foggy"]
AIRLINES = ["SkyJet", "AeroNova", "BlueWing", "Polar Air"]
STATUSES = ["shipped", "processing", "delivered", "in transit"]
ARTISTS = ["The Echoes", "Nina Vale", "Blue Harbor", "Marco Reyes", "Aurora Lane"]
HEADLINE_NOUNS = ["breakthrough", "record", "merger", "study", "launch", "festival"]
UNITS_LEN = ["km", "mile", "meter", "foot"]
LEN_TO_M = {"km": 1000.0, "mile": 1609.344, "meter": 1.0, "foot": 0.3048}


def _date(rng: random.Random) -> str:
    return f"2025-{rng.randint(1, 12):02d}-{rng.randint(1, 28):02d}"


def _code(rng: random.Random) -> str:
    return "".join(rng.choice("ABCDEFGHJKLMNPRSTUVWXYZ") for _ in range(3))


# slot name → value generator
SLOTS: dict[str, Callable[[random.Random], Any]] = {
    "city": lambda r: r.choice(CITIES),
    "temp_unit": lambda r: r.choice(["celsius", "fahrenheit"]),
    "days": lambda r: r.randint(1, 7),
    "severity": lambda r: r.choice(["severe", "moderate", "minor"]),
    "amount": lambda r: r.randint(5, 2000),
    "currency": lambda r: r.choice(CURRENCIES),
    "ticker": lambda r: r.choice(TICKERS),
    "int_a": lambda r: r.randint(2, 999),
    "int_b": lambda r: r.randint(2, 99),
    "percent": lambda r: r.choice([5, 10, 15, 20, 25, 30, 40, 50, 75]),
    "date": _date,
    "nights": lambda r: r.randint(1, 10),
    "budget": lambda r: r.choice([80, 100, 150, 200, 250, 300]),
    "product": lambda r: r.choice(PRODUCTS),
    "max_results": lambda r: r.randint(1, 10),
    "order_id": lambda r: f"ORD-{r.randint(10000, 99999)}",
    "title": lambda r: r.choice(TITLES),
    "minutes": lambda r: r.choice([5, 10, 15, 20, 30, 45, 60, 90]),
    "all_day": lambda r: r.choice([True, False]),
    "word": lambda r: r.choice(WORDS),
    "length": lambda r: r.randint(1, 500),
    "len_unit": lambda r: r.choice(UNITS_LEN),
    "team": lambda r: r.choice(TEAMS),
    "league": lambda r: r.choice(LEAGUES),
    "genre": lambda r: r.choice(GENRES),
    "limit": lambda r: r.randint(1, 10),
    "topic": lambda r: r.choice(TOPICS),
    "zone": lambda r: r.choice(ZONES),
    "nonstop": lambda r: r.choice([True, False]),
    "reminder": lambda r: r.choice(["call mom", "water the plants", "pay rent", "take a break", "check email"]),
}


@dataclass(frozen=True)
class ToolDef:
    """One synthetic tool: schema, how users ask for it, what it returns, how answers cite it."""

    name: str
    domain: str
    description: str
    properties: dict[str, dict[str, Any]]
    required: tuple[str, ...]
    slots: dict[str, str]  # parameter → SLOTS generator
    clause: str  # request clause with {param} placeholders ("get the weather in {city}")
    respond: Callable[[dict[str, Any], random.Random], dict[str, Any]]
    answer: str  # answer sentence with {param} and {response field} placeholders
    optional_clauses: dict[str, str] = field(default_factory=dict)  # optional param → clause suffix

    def schema(self) -> dict[str, Any]:
        """The tool in the OpenAI envelope, as stored in rows."""
        return {
            "type": "function",
            "function": {
                "name": self.name,
                "description": self.description,
                "parameters": {"type": "object", "properties": self.properties, "required": list(self.required)},
            },
        }


def _s(desc: str, enum: list[str] | None = None) -> dict[str, Any]:
    d: dict[str, Any] = {"type": "string", "description": desc}
    if enum:
        d["enum"] = list(enum)
    return d


def _n(desc: str, kind: str = "number") -> dict[str, Any]:
    return {"type": kind, "description": desc}


def _b(desc: str) -> dict[str, Any]:
    return {"type": "boolean", "description": desc}


def _round(x: float) -> float:
    return round(x, 2)


TOOLS: list[ToolDef] = [
    ToolDef("weather-get_current", "weather", "Get the current weather for a city.",
            {"city": _s("City name."), "unit": _s("Temperature unit.", ["celsius", "fahrenheit"])},
            ("city", "unit"), {"city": "city", "unit": "temp_unit"},
            "get the current weather in {city} in {unit}",
            lambda a, r: {"city": a["city"], "temperature": r.randint(-5, 35) if a["unit"] == "celsius" else r.randint(25, 95),
                          "condition": r.choice(CONDITIONS), "humidity": r.randint(20, 95)},
            "It is {temperature} degrees {unit} and {condition} in {city}, with {humidity} percent humidity."),
    ToolDef("weather-get_forecast", "weather", "Get a multi-day weather forecast for a city.",
            {"city": _s("City name."), "days": _n("Number of days, 1 to 7.", "integer")},
            ("city", "days"), {"city": "city", "days": "days"},
            "get the {days}-day forecast for {city}",
            lambda a, r: {"city": a["city"], "high": r.randint(10, 35), "low": r.randint(-5, 9), "summary": r.choice(CONDITIONS)},
            "The {days}-day forecast for {city} has a high of {high} and a low of {low}, mostly {summary}."),
    ToolDef("weather-get_alerts", "weather", "List active weather alerts for a city.",
            {"city": _s("City name."), "severity": _s("Minimum severity.", ["severe", "moderate", "minor"])},
            ("city",), {"city": "city", "severity": "severity"},
            "check the weather alerts for {city}",
            lambda a, r: {"city": a["city"], "alerts": r.randint(0, 4), "level": a.get("severity", r.choice(["severe", "moderate", "minor"]))},
            "There are {alerts} active alerts for {city} at level {level}.",
            {"severity": " with severity {severity}"}),
    ToolDef("currency-convert", "finance", "Convert an amount between two currencies.",
            {"amount": _n("Amount to convert."), "from_currency": _s("Source currency code.", CURRENCIES),
             "to_currency": _s("Target currency code.", CURRENCIES)},
            ("amount", "from_currency", "to_currency"), {"amount": "amount", "from_currency": "currency", "to_currency": "currency"},
            "convert {amount} {from_currency} to {to_currency}",
            lambda a, r: (lambda rate: {"rate": rate, "result": _round(a["amount"] * rate)})(_round(r.uniform(0.2, 3.0))),
            "{amount} {from_currency} is {result} {to_currency} at a rate of {rate}."),
    ToolDef("currency-get_rate", "finance", "Get the exchange rate between two currencies.",
            {"base": _s("Base currency code.", CURRENCIES), "target": _s("Target currency code.", CURRENCIES)},
            ("base", "target"), {"base": "currency", "target": "currency"},
            "get the exchange rate from {base} to {target}",
            lambda a, r: {"base": a["base"], "target": a["target"], "rate": _round(r.uniform(0.2, 3.0))},
            "One {base} buys {rate} {target}."),
    ToolDef("stocks-get_quote", "finance", "Get the latest stock price for a ticker symbol.",
            {"symbol": _s("Ticker symbol.", TICKERS)},
            ("symbol",), {"symbol": "ticker"},
            "get the stock price of {symbol}",
            lambda a, r: {"symbol": a["symbol"], "price": _round(r.uniform(20, 900)), "change": _round(r.uniform(-5, 5))},
            "{symbol} trades at {price} USD, a change of {change} percent today."),
    ToolDef("calculator-add", "math", "Add two numbers.",
            {"a": _n("First number."), "b": _n("Second number.")},
            ("a", "b"), {"a": "int_a", "b": "int_b"},
            "add {a} and {b}",
            lambda a, r: {"result": _round(a["a"] + a["b"])},
            "The sum of {a} and {b} is {result}."),
    ToolDef("calculator-multiply", "math", "Multiply two numbers.",
            {"a": _n("First number."), "b": _n("Second number.")},
            ("a", "b"), {"a": "int_a", "b": "int_b"},
            "multiply {a} by {b}",
            lambda a, r: {"result": _round(a["a"] * a["b"])},
            "{a} times {b} is {result}."),
    ToolDef("calculator-percentage", "math", "Compute a percentage of a value.",
            {"value": _n("The base value."), "percent": _n("Percentage to take.")},
            ("value", "percent"), {"value": "int_a", "percent": "percent"},
            "compute {percent} percent of {value}",
            lambda a, r: {"result": _round(a["value"] * a["percent"] / 100)},
            "{percent} percent of {value} is {result}."),
    ToolDef("airports-find_code", "travel", "Find the main airport code of a city.",
            {"city": _s("City name.")},
            ("city",), {"city": "city"},
            "find the airport code for {city}",
            lambda a, r: {"city": a["city"], "code": _code(random.Random(a["city"]))},
            "The airport code for {city} is {code}."),
    ToolDef("flights-list_departures", "travel", "List departing flights from an airport on a date.",
            {"airport": _s("Three-letter airport code."), "date": _s("Date as YYYY-MM-DD."),
             "nonstop": _b("Only nonstop flights.")},
            ("airport", "date"), {"airport": "airport", "date": "date", "nonstop": "nonstop"},
            "list the departures from airport {airport} on {date}",
            lambda a, r: {"airport": a["airport"], "date": a["date"], "flights": r.randint(3, 40),
                          "first_airline": r.choice(AIRLINES), "first_time": f"{r.randint(5, 11):02d}:{r.choice(['05', '20', '35', '50'])}"},
            "There are {flights} departures from {airport} on {date}; the first is {first_airline} at {first_time}.",
            {"nonstop": " with nonstop set to {nonstop}"}),
    ToolDef("hotels-search", "travel", "Search hotels in a city.",
            {"city": _s("City name."), "nights": _n("Number of nights.", "integer"), "max_price": _n("Maximum price per night in USD.")},
            ("city", "nights"), {"city": "city", "nights": "nights", "max_price": "budget"},
            "find a hotel in {city} for {nights} nights",
            lambda a, r: {"hotel": f"Hotel {r.choice(WORDS).title()}", "price": r.randint(60, a.get("max_price", 300)), "rating": _round(r.uniform(3, 5))},
            "The best match in {city} is {hotel} at {price} USD per night, rated {rating}.",
            {"max_price": " under {max_price} USD"}),
    ToolDef("shop-search_products", "shopping", "Search the store catalogue.",
            {"query": _s("Search words."), "max_results": _n("How many results to return.", "integer")},
            ("query",), {"query": "product", "max_results": "max_results"},
            "search the store for a {query}",
            lambda a, r: {"query": a["query"], "top_product_id": f"P{r.randint(1000, 9999)}", "price": _round(r.uniform(15, 1500))},
            "The top result for {query} is product {top_product_id} at {price} USD.",
            {"max_results": " with {max_results} results"}),
    ToolDef("shop-get_product", "shopping", "Get stock and rating for a product id.",
            {"product_id": _s("Product id such as P1234.")},
            ("product_id",), {"product_id": "product_id"},
            "show the details of product {product_id}",
            lambda a, r: {"product_id": a["product_id"], "stock": r.randint(0, 80), "rating": _round(r.uniform(2.5, 5))},
            "Product {product_id} has {stock} units in stock and a rating of {rating}."),
    ToolDef("shop-track_order", "shopping", "Track an order by its id.",
            {"order_id": _s("Order id such as ORD-12345.")},
            ("order_id",), {"order_id": "order_id"},
            "track order {order_id}",
            lambda a, r: {"order_id": a["order_id"], "status": r.choice(STATUSES), "eta": _date(r)},
            "Order {order_id} is {status} with delivery expected on {eta}."),
    ToolDef("calendar-create_event", "calendar", "Create a calendar event.",
            {"title": _s("Event title."), "date": _s("Date as YYYY-MM-DD."), "all_day": _b("Whether the event lasts all day.")},
            ("title", "date"), {"title": "title", "date": "date", "all_day": "all_day"},
            "create an event called {title} on {date}",
            lambda a, r: {"event_id": f"EV{r.randint(100, 999)}", "title": a["title"], "date": a["date"]},
            "I created the event {title} on {date} with id {event_id}.",
            {"all_day": " with all_day set to {all_day}"}),
    ToolDef("calendar-list_events", "calendar", "List the events on a date.",
            {"date": _s("Date as YYYY-MM-DD.")},
            ("date",), {"date": "date"},
            "list my events on {date}",
            lambda a, r: {"date": a["date"], "count": r.randint(0, 6), "first": r.choice(TITLES)},
            "You have {count} events on {date}; the first is {first}."),
    ToolDef("reminders-set", "calendar", "Set a reminder after some minutes.",
            {"text": _s("What to be reminded of."), "minutes": _n("Minutes from now.", "integer")},
            ("text", "minutes"), {"text": "reminder", "minutes": "minutes"},
            "remind me to {text} in {minutes} minutes",
            lambda a, r: {"reminder_id": f"R{r.randint(100, 999)}", "text": a["text"], "minutes": a["minutes"]},
            "Reminder {reminder_id} will tell you to {text} in {minutes} minutes."),
    ToolDef("dictionary-define", "language", "Look up the definition of an English word.",
            {"word": _s("The word.")},
            ("word",), {"word": "word"},
            "define the word {word}",
            lambda a, r: {"word": a["word"], "part_of_speech": r.choice(["noun", "verb", "adjective"]),
                          "definition": f"a kind of {r.choice(WORDS)}"},
            "{word} is a {part_of_speech} meaning {definition}."),
    ToolDef("dictionary-synonyms", "language", "List synonyms of an English word.",
            {"word": _s("The word."), "limit": _n("Maximum number of synonyms.", "integer")},
            ("word",), {"word": "word", "limit": "limit"},
            "find synonyms for {word}",
            lambda a, r: {"word": a["word"], "synonyms": r.sample(WORDS, 2)},
            "Synonyms for {word} include {synonyms}.",
            {"limit": " with a limit of {limit}"}),
    ToolDef("units-convert_length", "units", "Convert a length between units.",
            {"value": _n("The length."), "from_unit": _s("Source unit.", UNITS_LEN), "to_unit": _s("Target unit.", UNITS_LEN)},
            ("value", "from_unit", "to_unit"), {"value": "length", "from_unit": "len_unit", "to_unit": "len_unit"},
            "convert {value} {from_unit} to {to_unit}",
            lambda a, r: {"result": _round(a["value"] * LEN_TO_M[a["from_unit"]] / LEN_TO_M[a["to_unit"]])},
            "{value} {from_unit} is {result} {to_unit}."),
    ToolDef("units-convert_temperature", "units", "Convert a temperature between scales.",
            {"value": _n("The temperature."), "from_scale": _s("Source scale.", ["celsius", "fahrenheit"]),
             "to_scale": _s("Target scale.", ["celsius", "fahrenheit"])},
            ("value", "from_scale", "to_scale"), {"value": "int_b", "from_scale": "temp_unit", "to_scale": "temp_unit"},
            "convert {value} degrees {from_scale} to {to_scale}",
            lambda a, r: {"result": _round(_temp(a["value"], a["from_scale"], a["to_scale"]))},
            "{value} degrees {from_scale} is {result} degrees {to_scale}."),
    ToolDef("sports-get_score", "sports", "Get the latest game score of a team.",
            {"team": _s("Team name.", TEAMS)},
            ("team",), {"team": "team"},
            "get the latest score of the {team}",
            lambda a, r: {"team": a["team"], "opponent": r.choice([t for t in TEAMS if t != a["team"]]),
                          "score": f"{r.randint(0, 6)}-{r.randint(0, 6)}"},
            "The {team} played the {opponent} and the score was {score}."),
    ToolDef("sports-get_standings", "sports", "Get the standings leader of a league.",
            {"league": _s("League name.", LEAGUES)},
            ("league",), {"league": "league"},
            "get the standings of the {league} league",
            lambda a, r: {"league": a["league"], "leader": r.choice(TEAMS), "points": r.randint(10, 60)},
            "The {leader} lead the {league} league with {points} points."),
    ToolDef("music-search_songs", "music", "Find popular songs of a genre.",
            {"genre": _s("Music genre.", GENRES), "limit": _n("How many songs.", "integer")},
            ("genre",), {"genre": "genre", "limit": "limit"},
            "find a popular {genre} song",
            lambda a, r: {"genre": a["genre"], "top_song": f"{r.choice(WORDS).title()} {r.choice(['Blues', 'Nights', 'Road', 'Light'])}",
                          "artist": r.choice(ARTISTS)},
            "A popular {genre} song is {top_song} by {artist}.",
            {"limit": " with a limit of {limit}"}),
    ToolDef("music-get_song_info", "music", "Get the length and year of a song.",
            {"title": _s("Song title.")},
            ("title",), {"title": "song"},
            "get the info for the song {title}",
            lambda a, r: {"title": a["title"], "year": r.randint(1960, 2024), "minutes": r.randint(2, 7)},
            "{title} came out in {year} and lasts {minutes} minutes."),
    ToolDef("news-get_headlines", "news", "Get the top headline for a topic.",
            {"topic": _s("News topic.", TOPICS), "count": _n("Number of headlines.", "integer")},
            ("topic",), {"topic": "topic", "count": "limit"},
            "get the top {topic} headline",
            lambda a, r: {"topic": a["topic"], "headline": f"{r.choice(CITIES)} {r.choice(HEADLINE_NOUNS)} makes news",
                          "source": r.choice(["Daily Wire Service", "Metro Times", "Global Post"])},
            "The top {topic} headline is {headline} from {source}.",
            {"count": " with {count} headlines"}),
    ToolDef("time-get_current", "time", "Get the current time in a time zone.",
            {"timezone": _s("Time zone.", ZONES)},
            ("timezone",), {"timezone": "zone"},
            "get the current time in {timezone}",
            lambda a, r: {"timezone": a["timezone"], "time": f"{r.randint(0, 23):02d}:{r.randint(0, 59):02d}"},
            "It is {time} in {timezone}."),
    ToolDef("time-days_between", "time", "Count the days between two dates.",
            {"start": _s("Start date as YYYY-MM-DD."), "end": _s("End date as YYYY-MM-DD.")},
            ("start", "end"), {"start": "date", "end": "date"},
            "count the days between {start} and {end}",
            lambda a, r: {"days": abs(_day(a["end"]) - _day(a["start"]))},
            "There are {days} days between {start} and {end}."),
]


def _temp(v: float, src: str, dst: str) -> float:
    if src == dst:
        return v
    return v * 9 / 5 + 32 if src == "celsius" else (v - 32) * 5 / 9


def _day(date: str) -> int:
    y, m, d = (int(x) for x in date.split("-"))
    return y * 360 + m * 30 + d  # a synthetic 30-day calendar keeps the arithmetic self-evident


@dataclass(frozen=True)
class Chain:
    """Tool `first`'s response field `out` feeds tool `second`'s parameter `param`; `clause` asks
    for the second step without naming the value (the model must take it from the response)."""

    first: str
    out: str
    second: str
    param: str
    clause: str


CHAINS: list[Chain] = [
    Chain("airports-find_code", "code", "flights-list_departures", "airport", "list the departures from that airport on {date}"),
    Chain("shop-search_products", "top_product_id", "shop-get_product", "product_id", "show the details of that product"),
    Chain("stocks-get_quote", "price", "calculator-multiply", "a", "multiply that price by {b}"),
    Chain("music-search_songs", "top_song", "music-get_song_info", "title", "get the info for that song"),
    Chain("currency-get_rate", "rate", "calculator-multiply", "a", "multiply that rate by {b}"),
]

# Requests that none of the tools can serve (irrelevant subset) and their fixed answer.
IRRELEVANT = [
    "tell me a joke about a {product} and a {word}",
    "write a short poem about the {word} in {city}",
    "suggest a name for my {product} shop in {city}",
    "explain why the sky is blue in {city}",
    "give me a tip for learning {genre} guitar",
    "describe a good breakfast before a {genre} concert",
    "recommend a book about {word}s",
]
IRRELEVANT_ANSWER = "None of the available tools can help with this request, so I will answer directly: I am not able to look that up."

BY_NAME: dict[str, ToolDef] = {}
for _t in TOOLS:
    if _t.name in BY_NAME:
        raise ValueError(f"duplicate tool {_t.name}")
    BY_NAME[_t.name] = _t
SLOTS["airport"] = lambda r: _code(r)
SLOTS["product_id"] = lambda r: f"P{r.randint(1000, 9999)}"
SLOTS["song"] = lambda r: f"{r.choice(WORDS).title()} {r.choice(['Blues', 'Nights', 'Road', 'Light'])}"
