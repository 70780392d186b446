"""The `calculator` tool: exact arithmetic (backend.agent.tools.arithmetic, never Python's eval)
over an expression the model writes, the program writes from the message, or the model chooses
among the program's candidates (backend.agent.tools.expressions)."""

from __future__ import annotations

import re
from dataclasses import replace
from typing import Any, Callable, Sequence

from backend.agent.numerals import NUMBER_RE, with_currency_signs
from backend.agent.operations import (asks_bill_total, asks_cost, asks_difference, asks_money, asks_policy_limit, asks_price,
                                      asks_quantity, named_operations, numbers_beyond)
from backend.agent.routing import asks_for_creative_writing, asks_for_own_writing, needs_calculation, typed_expression, typed_operator
from backend.agent.tools import ToolContext, ToolResult, ToolSpec
from backend.agent.tools.arithmetic import (FUNCTIONS, MAX_BITS, MAX_EXPRESSION_CHARS, Value,  # noqa: F401 (re-exported)
                                            evaluate, format_value)
from backend.agent.tools.allowances import allowance_expressions
from backend.agent.tools.deposits import ASKS_DEPOSIT, PAID_DEPOSIT, asked_deposit, balance_due
from backend.agent.tools.mentions import mentioned_difference, mentioned_total
from backend.agent.tools.discounts import claimed_discount, claimed_surcharges
from backend.agent.tools.minimums import least_term_expressions
from backend.agent.tools.expressions import candidate_expressions
from backend.agent.tools.relations import asks_relation, relations
from backend.agent.tools.offers import asks_offers, offer_expressions
from backend.agent.tools.parts import asks_repair_with_parts
from backend.agent.tools.plans import upfront_months, year_in_months
from backend.agent.tools.pricing import (as_priced, named_lengths, of_named_documents, priced_per_count,
                                         prices_counted_thing)
from backend.agent.tools.segmentation import text_sentences
from backend.agent.tools.sentences import rank_sentences, section_headings
from backend.agent.tools.taxes import claimed_tax
from backend.agent.tools.refunds import late_cancellation, refund_window
from backend.agent.tools.tiers import tier_expressions
from backend.agent.tools.visits import visit_charge, zone_charge
from backend.agent.tools.units import (asked_period, asked_scale, asked_unit, asks_area, implied_conversions,
                                       stated_conversion)


# A number written in cents ("16.50", "0.25"): the expression is about money, and so is its result.
_CENTS = re.compile(r"(?<![\d.])[0-9]+\.[0-9]{2}(?![\d.])")


def run(context: ToolContext, arguments: dict[str, Any]) -> ToolResult:
    expression = arguments["expression"]
    value = evaluate(expression)
    # "16.50 * 5 = 82.50", as a price is written; an integer stays one ("16.50 * 2 = 33")
    shown = format_value(value, places=2 if _CENTS.search(expression) else 0)
    data = {
        "expression": expression,
        "result": shown,
        "exact": value.exact,
        "numerator": str(value.q.numerator),
        "denominator": str(value.q.denominator),
    }
    summary_expression = " ".join(expression.split())
    if len(summary_expression) > 60:
        summary_expression = summary_expression[:59] + "…"
    return ToolResult(content=f"{expression} = {shown}", summary=f"Calculated {summary_expression} = {shown[:80]}",
                      data=data)


# What the model may write as an expression (the arguments' JSON Schema, which the engine's
# grammar follows while the model writes the call): digits, the operators, parentheses, commas,
# dots, spaces and the function names, each followed by "("; at most MAX_ARGUMENT_CHARS. A string of these has to
# close: SmolLM2-135M, free to write any JSON string, kept writing '12 * 34}}]</tool_call> # ...'
# inside it until max_tokens (2026-12-02). Every expression the pattern allows is made of
# tokens the parser reads (exponent notation such as 1e-3 is left out: letters are names only).
EXPRESSION_PATTERN = r"^(?:[0-9 .+*/%^(),-]|(?:" + "|".join(sorted(FUNCTIONS)) + r")\()+$"
MAX_ARGUMENT_CHARS = 100

def _typed(text: str) -> dict[str, Any] | None:
    """A planned call's arguments when the message holds a whole expression (backend.agent.routing)."""
    expression = typed_expression(text, evaluate)
    if expression is None or len(expression) > MAX_ARGUMENT_CHARS or not re.fullmatch(EXPRESSION_PATTERN, expression):
        return None
    return {"expression": expression}


SPEC = ToolSpec(
    name="calculator",
    description=(
        "Evaluate an arithmetic expression exactly. Supports numbers (12, 3.5), + - * / "
        "// (floor division) % ^ (power), parentheses and sqrt, abs, round, min, max, floor, ceil."
    ),
    parameters={
        "type": "object",
        "properties": {
            "expression": {"type": "string", "minLength": 1, "maxLength": MAX_ARGUMENT_CHARS,
                           "pattern": EXPRESSION_PATTERN, "description": "for example (1 + 2) * 3 ^ 2 / 7"},
        },
        "required": ["expression"],
        "additionalProperties": False,
    },
    permission="tools.calculator",
    side_effect=False,
    run=run,
    relevant=lambda user_id, text: needs_calculation(text),
    planned_arguments=lambda text: _typed(text),
)


_PLAIN_RESULT = re.compile(r" = (-?\d{1,20}(?:\.\d{1,10})?)$")


def stated_result(content: str) -> str | None:
    """The value of a result "expression = value" when it is a plain number (at most 20 digits,
    10 after the point): what the answer after it must state; None otherwise (an error, an
    inexact or very long value)."""
    match = _PLAIN_RESULT.search(content)
    return match.group(1) if match else None


# A question listing several things: "a bobbin case and a presser foot", "service plus pickup & return", "on both".
_LISTS_THINGS = re.compile(r"\bplus\b|[+&]|\band\s+(?:a|an|the|my|our|[0-9]+|one|two|three|four)\b|\bboth\b", re.IGNORECASE)


def spec(embed: Callable[[Sequence[str]], Any] | None = None,
         passages: Callable[[str, str], list[tuple[str, str]]] | None = None) -> ToolSpec:
    """SPEC with candidate_arguments: the expressions over a number in the run's earlier results
    that the question asks for (backend.agent.tools.expressions), the fact sentence found with
    `embed` (the chat's embedder; None: by the question's words alone); and with `passages`
    ((user_id, text) -> (label, text) of each passage the person may read that the message is
    about, the label naming its document as search_documents' results do: passages.format_passages),
    also planned for a question about his documents that asks for a quantity and brings a number
    they do not hold ("If the campsite added 450 pitches, how many would it have?"), or asks what
    a count of things costs ("what would 4 full passes come to?"); ordinary chat with cost words
    ("the flu set me back 2 weeks") is not about his documents, or asks in another unit, scale
    or period than the passage gives ("in grams" of "212 kilograms", "in Fahrenheit", "in a week"
    of "140 grams a day": backend.agent.tools.units), or relates two of their numbers and brings
    none ("what percentage of its hives did it start with": relations.asks_relation)."""

    def candidates(text: str, results: Sequence[str]) -> list[dict[str, Any]]:
        found = candidate_expressions(text, results, embed, evaluate)
        return [{"expression": e} for e in found
                if len(e) <= MAX_ARGUMENT_CHARS and re.fullmatch(EXPRESSION_PATTERN, e)]

    def relevant(user_id: str, text: str) -> bool:
        if asks_policy_limit(text):  # "I've been a member for 2 years - how much notice ...", "how far do you deliver"
            return False
        if (asks_for_own_writing(text) or asks_for_creative_writing(text)) and not typed_operator(text):
            # "help me write an email ... for a week", "write a two-line poem about tyres"
            return False
        if needs_calculation(text):
            return True
        if passages is None:
            return False
        cost = asks_cost(text) and bool(named_operations(text))  # "what would 4 passes come to?"
        # "in grams", "in a week", "in Fahrenheit"
        converts = (asked_unit(text) is not None or asked_period(text) is not None or asked_scale(text) is not None
                    or asks_area(text) or stated_conversion(text) is not None)
        related = asks_relation(text)  # "what percentage of ...", "how many years after ... was"
        offers = asks_offers(text)  # "how much do I save ... instead of", "price per hour of the course"
        listed = asks_cost(text) or asks_bill_total(text)  # "what would a midi skip plus a road permit cost altogether"
        money = asks_money(text)  # "... total with cleaning", "cost?"
        deposit = ASKS_DEPOSIT.search(text) is not None  # "whats the deposit to book the full day course"
        if not (cost or money or asks_price(text) or asks_quantity(text) or converts or related or offers or listed
                or deposit):
            return False
        # (prices written with a currency's code read as signed: "8.00 EUR per person")
        found = [(label, with_currency_signs(t)) for label, t in passages(user_id, text)]
        if not found:
            return False
        pairs = [(h, s) for label, t in found for h, s in text_sentences(t, label)]
        pairs = as_priced(pairs)  # (as the candidates read them: "SURCHARGES" over "Saturday appointment: $40")
        # ("a year of monthly emptying" over "$36.00 / month": 12 months of it, as the candidates read it; a year paid
        # upfront over "Annual prepay: pay for 10 months and get 12")
        cost = cost or (asks_cost(text) and bool(named_operations(year_in_months(text, [s for _, s in pairs])))) or (
            upfront_months(text, [s for _, s in pairs]) is not None)
        if deposit:  # over "A 25% deposit is taken at booking": a share of the bill (simple set 68)
            asked = asked_deposit(text, pairs, embed)
            if asked is not None and (asked.share is not None or asked.over is not None):
                return True
        if cost or numbers_beyond(text, [t for _, t in found]):
            return True
        sentences = [s for _, s in pairs]
        if money and asks_repair_with_parts(text, sentences):  # "a dryer belt replacement including the belt"
            return True
        if money and any(priced_per_count(text, s, unit_first=True) or prices_counted_thing(text, s) for s in sentences):
            return True  # "3 nights in january ... total" over "€95 per night"; "2 laser cut car key blades"
        if asks_price(text) and named_lengths(text) and any(priced_per_count(text, s) for s in sentences):
            # (a length of time priced per its unit: "How much is a 3-hour private lesson?" over "Private lesson: €55.00 per
            # hour", blind set 100, read; not "an adult 10 visit pass", "a 12 inch classic cup")
            return True
        # (each line with the section heading over it, as the candidates read them: "INFLATABLE TUBS")
        sections = dict(zip(sentences, section_headings(pairs)))
        if listed and mentioned_total(text, of_named_documents(text, pairs), sorted({h for h, _ in pairs}), sections):
            return True
        # "What's the price difference between the Ninja Obstacle Course and the Little Jester?"
        if asks_difference(text) and mentioned_difference(text, of_named_documents(text, pairs), sorted({h for h, _ in pairs})):
            return True
        if offers and offer_expressions(text, sentences):
            return True
        if asks_price(text) and (allowance_expressions(text, sentences) or tier_expressions(
                text, [s for _, s in rank_sentences(text, pairs, embed)])):
            return True  # "the van for 5 hours" over "free for up to 3 hours; after that $15 per hour"
        # "what does he pay on a Wednesday" over "On Wednesdays, guests over 65 get 25% off"
        # (a price asked without "how much" only of one thing: "the bungee run for the day. Price?", "timing reset cost
        # with hst pls"; not a bill of several, "express service ... and a bobbin case replacement. total with hst?")
        single = asks_price(text) or (money and not _LISTS_THINGS.search(text))
        if single and (claimed_discount(text, sentences) or claimed_surcharges(text, sentences)):
            return True
        # "How much to unblock my sink including VAT if you come out tomorrow?" over "subject to VAT at 20%, added
        # to your invoice" and "Call-out fee (every home visit): £60.00" (new-user pass): the price with them
        # ("timing reset cost with hst pls": a price asked with its tax, no "how much")
        if single and (claimed_tax(text, sentences) or visit_charge(text, sentences)
                                            or zone_charge(text, sentences)):
            return True
        # "I already paid the deposit. How much do I still owe on the day?" over "a £50 deposit ..., deducted
        # from the final bill": the bill less it
        if balance_due(text, sentences):
            return True
        if least_term_expressions(text, sentences):  # "only stay the minimum period" over "(3-month minimum)"
            return True
        # "I paid the deposit for sole trader year-end accounts but want to cancel before you start. How much would I get
        # back?" over "If you cancel before work has started, we refund your deposit less ... EUR 25.00" (blind set 106)
        if PAID_DEPOSIT.search(text) and refund_window(text, sentences):
            return True
        # "If I no-show on a skin fade booking how much am I charged?" over "No-shows are charged 50% of the service
        # price"; a cancellation with less notice than asked (blind set 95, read)
        if (asks_price(text) or money or asks_cost(text)) and late_cancellation(text, sentences) is not None:
            return True
        if named_operations(text) or not (converts or related):
            return False
        ranked = [s for _, s in rank_sentences(text, pairs, embed)]
        return bool(implied_conversions(text, ranked) or relations(text, [s for s in ranked if NUMBER_RE.search(s)]))

    return replace(SPEC, candidate_arguments=candidates, stated_result=stated_result, relevant=relevant)
