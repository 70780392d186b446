"""The answer step of an agent run: the constraint on its text, the messages it reads, and the
answer the program quotes instead (issue 15).

After tool results the answer is words (ANSWER_PATTERN: SmolLM2-135M repeated the
<tool_response> block as its answer). After a result its tool declares must be stated
(ToolSpec.stated_result: the calculator's value), the answer reads only that last step
(last_step_only) and its first sentence holds the value (stating_pattern), both enforced by the
engine's grammar: SmolLM2-135M, given the passage and the calculation, described the passage's
subject and stated the result for 7 of 11 questions (docs/BENCHMARKS.md). After a search, a
question asking one fact (asks_fact) is answered, under the "planned" policy, by the passages'
sentence that states it, quoted with its citation (quoted_answer).
"""

from __future__ import annotations

import json
import re
from decimal import ROUND_HALF_UP, Decimal, InvalidOperation
from typing import Any, Mapping, Sequence

from backend.agent.calls import NOT_ALLOWED
from backend.agent.fact_questions import asks_fact, asks_task_or_opinion
from backend.agent.numerals import CURRENCY_SIGNS, CURRENCY_NAMES, cue_text, with_currency_signs, with_digits, written_currency
from backend.agent.tools.arithmetic import names_no_value
from backend.agent.tools.passages import document_name, passage_blocks
from backend.agent.tools.pricing import in_major_units
from backend.agent.tools.sentences import section_of, stems
from backend.agent.routing import states_arithmetic
from backend.agent.workings import escaped, occurs, workings
from backend.agent.operations import asks_amount, asks_cost, asks_bill_total, asks_difference, asks_how_many, numbers_beyond
from backend.generator import ChatMessage

# The answer step after tool results: any text whose first character that is not a space is not "<", and
# with no tag of the tool protocol anywhere: "<tool" and "</tool" never occur (SmolLM2-135M repeated its
# <tool_response> block, at the start and after "The result: ", new-user pass); "<12", "a < b", "</div>",
# "cout << x" and "<team@acme.com>" are kept (review). Written without lookahead for the grammar: each "<" (or run
# of them) is followed by anything but the start of "tool" or "/tool", or ends the text within such a start.
_NO_TOOL_TAG = (r"(?:[^<]|<+(?:[^/t<]|/[^t<]|t[^o<]|to[^o<]|too[^l<]|/t[^o<]|/to[^o<]|/too[^l<]))*"
                r"(?:<+(?:/|t|to|too|/t|/to|/too)?)?")


def _opening_but_not(word: str) -> str:
    """A pattern of texts that begin with `word`'s first letter but not with `word` (a text that
    is only a start of it included), then hold no tag of the tool protocol (_NO_TOOL_TAG)."""
    return "|".join(re.escape(word[:i]) + f"(?:[^{re.escape(word[i])}<]{_NO_TOOL_TAG})?" for i in range(1, len(word)))


# (nor does it open as the prompt's restated question or its result: "Question: How can I pay with a credit card?
# Result: ... name: search_documents 4 passages from the user's documents ..." was the answer, echoing the prompt,
# for 5 of 80 lookups of blind sets 85-92, read after their runs)
_ECHOED = ("Question:", "Result:")
ANSWER_PATTERN = (rf"\s*(?:[^<\s{''.join(w[0] for w in _ECHOED)}]{_NO_TOOL_TAG}|"
                  + "|".join(_opening_but_not(w) for w in _ECHOED) + ")")
# The answer after a result it must state (ToolSpec.stated_result: the calculator's value): one
# sentence that holds that number within its first 160 characters, as a number of its own (a
# space, bracket, quote, colon or currency sign right before it, no digit or separator after it; a negative value with its minus sign;
# thousands separators optional), and at most 120 characters after it. SmolLM2-135M, free to go
# on, wrote a 200-token first sentence about the subject and never reached the number, or joined
# it to a word ("we can't200") and rambled after it (new-user run, 2026-12-02).
_BEFORE = r"(?:(?:[^<\s.!?\n][^<.!?\n]{0,158})?[ (\"'“‘:$€£=≈~])?"
_AFTER = r"(?:[.!]|[^0-9.,!?\n][^.!?\n]{0,120}[.!]?|,(?:[^0-9!?\n][^.!?\n]{0,120}[.!]?)?)?\s*"


def stating_pattern(value: str) -> str:
    """The pattern of an answer stating the number `value` ("4680" -> one sentence holding 4680
    or 4,680; "-58" -> holding -58 or "minus 58")."""
    negative = value.startswith("-")
    integer, _, fraction = value.lstrip("-").partition(".")
    head = len(integer) % 3 or 3
    groups = [integer[:head]] + [integer[i:i + 3] for i in range(head, len(integer), 3)]
    number = groups[0] + "".join(",?" + g for g in groups[1:]) + (r"\." + fraction if fraction else "")
    sign = r"(?:-|−|minus )" if negative else ""
    return r"\s*" + _BEFORE + sign + number + _AFTER


# An amount of money written with its currency sign ("£35", "$ 3.25", "€0.10").
_MONEY = re.compile(rf"[{CURRENCY_SIGNS}]\s?\d")
# A value with one decimal place ("177.5").
_TENTHS = re.compile(r"-?\d+\.\d")


def stated_value(tools: Mapping[str, Any], messages: Sequence[ChatMessage]) -> str | None:
    """What the answer must state: ToolSpec.stated_result of the latest tool result in
    `messages` (after the latest user message), when its tool (by name in `tools`) declares one.
    Money is stated in cents: a value with one decimal place ("177.5") is stated as "177.50" when
    the question or this turn's tool results write amounts with a currency sign ("£35 each"), and
    the question asks no count ("how many hours can I book": 4.5)."""
    last_user = max((i for i, m in enumerate(messages) if m.role == "user"), default=-1)
    for message in reversed(messages[last_user + 1:]):
        if message.role == "tool" and message.name in tools:
            state = getattr(tools[message.name], "stated_result", None)
            value = state(message.content) if state is not None else None
            question = messages[last_user].content if last_user >= 0 else ""
            if value is not None and _TENTHS.fullmatch(value) and not asks_how_many(question) and any(
                    _MONEY.search(m.content) for m in messages[max(last_user, 0):] if m.role in ("user", "tool")):
                value += "0"
            return value
    return None


def last_step_only(messages: Sequence[ChatMessage]) -> list[ChatMessage]:
    """`messages` with this run's tool steps before its latest one left out (the run's steps
    are the messages after the latest user message): the answer after a calculation reads the
    calculation, which holds the number it used. SmolLM2-135M, given the passage too, described
    the passage's subject and stated the result within 200 tokens for 7 of 11 questions."""
    last_user = max((i for i, m in enumerate(messages) if m.role == "user"), default=-1)
    calls = [i for i in range(last_user + 1, len(messages)) if messages[i].tool_calls]
    if len(calls) < 2:
        return list(messages)
    return list(messages[:last_user + 1]) + list(messages[calls[-1]:])




# A footnote or citation mark of the document's own ("[7]", "[2, 3]", as the page links them), not
# an index ("a[0]").
_FOOTNOTE = re.compile(r"\s*(?<![\w\]])\[\d{1,4}(?:\s*,\s*\d{1,4})*\]")
# A Markdown link or image of the document's: its text only (a quoted sentence is the assistant's
# answer; a link in it would be a shared document's link presented as the assistant's own).
_LINK = re.compile(r"!?\[([^\[\]\n]{0,200})\]\([^()\n]{0,500}\)")


# What the answer says before the quote when the question needed a calculation the program did not
# plan (no calculator step): the sentence is the nearest fact, not the amount asked.
UNCALCULATED = "I couldn't work out that amount from your documents. The closest passage says:"


def needs_calculation(question: str, sentence: str) -> bool:
    """Whether `question` asks an amount (asks_amount) that the quoted `sentence` does not state: a
    difference ("how much do I save"), a total of things listed ("a shirt and a dress, total?"), or
    one with numbers of its own that the sentence does not hold ("8 kg of laundry", "for 2 adults
    staying 5 nights"); not "What is the total price of a family ticket?"."""
    if not asks_amount(question):
        return False
    listed = asks_bill_total(question) and _LISTED.search(question) is not None
    return asks_difference(question) or listed or bool(numbers_beyond(question, [sentence]))


# Things listed: "a shirt and a dress", "3 boxes, 2 posters", "coffee + platters".
_LISTED = re.compile(r"\b(?:and|plus)\b|[,+&]", re.IGNORECASE)


def quoted_answer(tools: Mapping[str, Any], messages: Sequence[ChatMessage]) -> str | None:
    """The answer quoting a search's sentence: when the latest user message asks for one fact
    (asks_fact) or an amount (asks_amount) and this run's latest message is the result of a tool
    declaring ToolSpec.answer_quote (search_documents), that tool's best sentence for the question
    with its citation ("The bridge was designed by the engineer Ingrid Solberg. [1]"); None
    otherwise. An amount that needed a calculation the run did not make (needs_calculation; the
    search was its last step) is said so first (UNCALCULATED): SmolLM2-135M, left to answer such
    questions, wrote about other documents ("The Oakfield Primary School has a unique and exclusive
    laundry service") for 9 of 12 in the agent eval's sets 45-46.
    SmolLM2-135M, given the passages, answered 7 of 29 fact questions of the agent eval right
    ("a UNESCO World Heritage Site"); the sentence ranked first held the answer for 27 of 29
    (docs/BENCHMARKS.md). Blocking (it embeds)."""
    last_user = max((i for i, m in enumerate(messages) if m.role == "user"), default=-1)
    last = messages[-1] if messages else None
    if last_user < 0 or last is None or last.role != "tool":
        return None
    question = messages[last_user].content
    fact = asks_fact(question)
    section = asks_section(question) and not asks_amount(question)
    if not fact and not section and not asks_amount(question):
        return None
    quote = getattr(tools.get(last.name), "answer_quote", None)
    found = quote(question, last.content) if quote is not None else None
    if found is None:
        return None
    number, sentence = found
    # Its own footnote marks ("[7]", pasted from an encyclopedia) would read as citations of
    # this turn's sources: the passage's number is the only one. Its links keep their text only.
    sentence = _FOOTNOTE.sub("", _LINK.sub(lambda m: m.group(1), sentence)).strip()
    if not sentence or sentence.startswith("<"):  # an answer never begins with a tag (ANSWER_PATTERN)
        return None
    if needs_calculation(question, sentence):
        return f"{UNCALCULATED} {sentence} [{number}]"
    passage = next((label + " " + text for n, label, text in passage_blocks(last.content) if n == number), sentence)
    if section:
        sentence = next((section_of(text, found[1], label) for n, label, text in passage_blocks(last.content)
                         if n == number), sentence)
        sentence = _FOOTNOTE.sub("", _LINK.sub(lambda m: m.group(1), sentence)).strip()
    if asks_amount(question) and not names_something_of(question, passage, empty=True):
        return f"{NOT_FOUND} {sentence} [{number}]"
    return f"{_from_which(last.content, number)}{sentence} [{number}]"


# A question asking what a section of the documents says: a policy, terms or rules, what something
# includes, how it works ("What is your cancellation policy?", "what's included in the full groom?"; not
# "Tell me about the bridge.", which the model answers from the passages).
_ASKS_SECTION = re.compile(
    r"\b(?:policy|policies|terms|rules|conditions)\b|\bwhat(?:'s|\s+is|\s+are|s)?\s+included\b"
    r"|\bwhat\s+do(?:es)?\s+(?:the\s+|a\s+|an\s+|your\s+)?[\w' -]{1,40}?\s+include\b"
    r"|\bhow\s+do(?:es)?\s+(?:the\s+|your\s+)?[\w' -]{1,40}?\s+work\b", re.IGNORECASE)


# What asks more than the section says: why, an explanation, a translation, writing (review: "Write a polite
# email ... explaining our cancellation policy" was answered with the policy quoted).
_NOT_SECTION = re.compile(r"\b(?:why|explain\w*|translat\w*|write|draft|summar\w*|compar\w*|rewrite|improve)\b", re.IGNORECASE)


def asks_section(question: str) -> bool:
    """Whether `question` asks what a section of the documents says (_ASKS_SECTION): its answer quotes
    the block holding the best sentence (sentences.section_of), not that sentence alone."""
    text = cue_text(question)
    return (_ASKS_SECTION.search(text) is not None and _NOT_SECTION.search(text) is None
            and not asks_task_or_opinion(text))


def _from_which(content: str, number: int) -> str:
    """"From price-list.txt: " when the search's passages come from more than one document, so an
    answer picked from one of several ("what time do you close?" over three businesses' lists:
    new-user pass) says whose it is; "" otherwise."""
    names = {n: document_name(label) for n, label, _ in passage_blocks(content)}
    if len(set(names.values())) < 2 or number not in names:
        return ""
    return f"From {escaped(names[number])}: "


# What the answer says before the quote when the passage it comes from names nothing the question
# does ("how much is a unicorn ride?" over a bike hire's price list: new-user pass).
NOT_FOUND = "Your documents don't seem to mention that. The closest passage says:"
# Words any question about a business, or any arithmetic, may hold: they name nothing of it.
_ASKING_WORDS = stems("how much many what whats when where which who is are does do the a an price cost costs pay charge "
                      "fee hire rent your you open time number get need want please pls can could would total "
                      "plus minus times divided multiplied percent split add subtract sum each")
# Words naming the same ("how much for a child?" over "Kids (3-15): £9").
_SAME = {"kid": "child", "children": "child", "junior": "child"}


def names_something_of(question: str, passage: str, empty: bool = False) -> bool:
    """Whether `passage` (a document's name and text) holds a word of `question` besides
    _ASKING_WORDS: by stem, hyphens dropped ("wifi" names "Wi-Fi"), one word within another
    ("haircut" names "Cut and blow dry"), kids and children one; `empty` for a question with no
    such word. Over the lookups of blind sets 41-52, the document holding the answer shared one
    for 119 of 120."""
    asked = {_SAME.get(w, w) for w in stems(question.replace("-", ""))} - _ASKING_WORDS
    if not asked:
        return empty
    held = {_SAME.get(w, w) for w in stems(passage) | stems(passage.replace("-", ""))}
    return any(a == b or (len(b) >= 3 and b in a) or (len(a) >= 4 and a in b) for a in asked for b in held)


def in_cents(value: str) -> str:
    """An amount of money (`value`, a decimal as the calculator states it) as a bill writes it: to
    the cent, half away from zero, when it has more than two decimals and is 1 or more ("281.483" ->
    "281.48": "HST ... rounded to the nearest cent", blind set 88); as it is otherwise (a unit price
    "0.125" per page, "177.50")."""
    try:
        amount = Decimal(value)
    except InvalidOperation:
        return value
    if -amount.as_tuple().exponent <= 2 or abs(amount) < 1:
        return value
    return str(amount.quantize(Decimal("0.01"), rounding=ROUND_HALF_UP))


def _own_arithmetic(question: str, expression: str, value: str, written: set[str], asked: set[str]) -> str | None:
    """The answer to arithmetic of the question's own numbers ("What's 17.5% of £240?"): the
    calculation stated, "240 * 17.5 / 100 = 42." ("That comes to £42: ..." when the question writes
    one currency sign and asks an amount); None when the expression holds a number the question
    does not write (but 100), which the model states. SmolLM2-135M wrote such values inside
    rambling sentences (new-user pass, 2026-12-04)."""
    if not written or not written <= asked | {"100"}:
        return None
    signs = set(_SIGN.findall(question))
    if len(signs) == 1 and asks_amount(question) and not asks_how_many(question):
        return f"That comes to {signs.pop()}{in_cents(value)}: {expression} = {value}."
    return f"{expression} = {value}."


# The answer to a price asked when no passage found holds a number of the calculation and the
# question writes no amount of money: its own numbers are counts and sizes, no price.
NO_PRICE = "I couldn't find a price for that in your documents, so I haven't worked out a total."
# An amount of money the question writes: "£12", "$4 each", "45 dollars", "for 20 each", "120 a night",
# "Tickets are 15 each", "costs 8".
_MONEY_WRITTEN = re.compile(rf"[{CURRENCY_SIGNS}]\s?\d|\d\s*{CURRENCY_NAMES}\b|\d[\d.,]*\s*(?:each|apiece|a\s+piece|per\s+[a-z]+|"
                            r"an?\s+(?:night|day|week|month|year|hour|person|head|ticket|item|piece|kg|lb|kilo|pound|"
                            r"litre|liter|metre|meter|mile|km|session|class|lesson|visit|room|seat|bag|box|unit))\b"
                            r"|\b(?:costs?|priced\s+at|is|are|was|were)\s+\d", re.IGNORECASE)
# A price as written: a currency sign before a number ("£2.50", "€ 130").
# a dollar written with its country ("CA$7", "NZ$139", "US$") keeps it: "$132" is another currency
_SIGN = re.compile(rf"((?<![A-Za-z])[A-Z]{{1,3}}\$|[{CURRENCY_SIGNS}])\s?\d")


def calculated_answer(tools: Mapping[str, Any], messages: Sequence[ChatMessage]) -> str | None:
    """The answer after a calculation over the documents, written by the program: its value, the
    calculation, and the passage it read with its citation ("That comes to £15: 2.50 * 6 = 15,
    from your documents [1]."), when this run's latest result is the calculator's (stated_value)
    and a search of the documents (a tool declaring ToolSpec.answer_quote) came before it this
    turn; for a calculation of the question's own numbers alone (no search), the calculation
    ("240 * 17.5 / 100 = 42."; with the question's one currency sign when it asks an amount: "That
    comes to £42: ..."); None otherwise (the model states the value). The passage cited is
    the one holding most of the calculation's numbers that the question does not write (its
    prices, "8p" holding 0.08); the currency sign is that passage's when it
    writes one kind only. SmolLM2-135M, made to state the value, wrote it inside sentences such as
    "I'm not an AI, I'm just a helpful AI ... it's all just 15 words." (new-user run, 2026-12-04)."""
    value = stated_value(tools, messages)
    last_user = max((i for i, m in enumerate(messages) if m.role == "user"), default=-1)
    if value is None or last_user < 0:
        return None
    turn = messages[last_user + 1:]
    calculation = next((m for m in reversed(turn) if m.role == "tool" and m.name in tools
                        and getattr(tools[m.name], "stated_result", None) is not None), None)
    searches = [m for m in turn if m.role == "tool" and getattr(tools.get(m.name), "answer_quote", None) is not None]
    if calculation is None:
        return None
    expression = calculation.content.rsplit(" = ", 1)[0].strip()
    # the documents' numbers: not the question's own counts ("150 pages" is in no price list)
    question = messages[last_user].content
    asked = set(re.findall(r"[0-9]+(?:\.[0-9]+)?", with_digits(question).replace(",", "")))
    written = set(re.findall(r"[0-9]+(?:\.[0-9]+)?", expression))
    # a price asked of no price at all: "How much for 4 budget 16 inch tyres fitted?" with no passage
    # holding a number of the calculation computed 16 * 4 (new-user pass, a user with no documents)
    unpriced = (written <= asked and asks_cost(question) and not _MONEY_WRITTEN.search(question)
                and not states_arithmetic(question))
    if not searches:
        return NO_PRICE if unpriced else _own_arithmetic(question, expression, value, written, asked)
    numbers = (written - asked) or written  # "the day pass is £18 right? 3 of them": 18 * 3 still cites
    best: tuple[tuple[int, int], int, str] | None = None  # ((numbers held, words shared), passage number, text)
    passages = [block for search in searches for block in passage_blocks(search.content)]
    asked_words = stems(question)
    for number, label, text in passages:
        read = in_major_units([("", text)])[0][1]  # "8p per page" holds the expression's 0.08
        held = sum(1 for n in numbers if occurs(n, read))  # by value: "£1,200" holds 1200
        # of equals, the passage sharing most words with the question: a pest controller's "£25" and "10%"
        # are a kayak company's "NZ$25" and "10%" too (blind set 59 cited the kayaks, and wrote NZ$)
        rank = (held, len(asked_words & stems(f"{label} {text}")))
        if held and (best is None or rank > best[0]):
            best = (rank, number, text)
    if best is None:  # no passage holds its numbers: the question's own arithmetic, or the model's
        return NO_PRICE if unpriced else _own_arithmetic(question, expression, value, written, asked)
    # (a currency written by its code reads as its sign: "8.00 EUR" is "€8.00"; "350 kr" is stated "450 kr")
    signs = set(_SIGN.findall(with_currency_signs(best[2])))
    sign = signs.pop() if len(signs) == 1 and asks_amount(messages[last_user].content) else ""
    after = written_currency(best[2]) if sign == "¤" else None
    amount = (f"{in_cents(value)} {after}" if after else "" if sign == "¤" else f"{sign}{in_cents(value)}") if sign else ""
    cited_first = sorted(passages, key=lambda block: block[0] != best[1])
    shown = workings(expression, question, cited_first)
    return f"That comes to {amount or value}: {expression} = {value}, from your documents [{best[1]}]." + (
        f"\n\n{shown}" if shown else "")


def failed_calculation_answer(tools: Mapping[str, Any], messages: Sequence[ChatMessage]) -> str | None:
    """The answer when this run's latest message is the error of a tool declaring
    ToolSpec.stated_result (the calculator: "error: division by zero"): the expression it was
    given and why it has no value ("10/0 + 5 can't be calculated: division by zero."); None
    otherwise. SmolLM2-135M, given the error, wrote "10/0 + 5 = 25. 10/0 + 5 = 15." (new-user pass)."""
    last = messages[-1] if messages else None
    if (last is None or last.role != "tool" or getattr(tools.get(last.name), "stated_result", None) is None
            or not last.content.startswith(_ERROR)):
        return None
    call = next((c for m in reversed(messages) if m.role == "assistant" for c in m.tool_calls
                 if c.id == last.tool_call_id), None)
    try:
        expression = json.loads(call.arguments).get("expression") if call is not None else None
    except (ValueError, AttributeError):
        expression = None
    if not isinstance(expression, str) or not expression.strip():
        return None
    reason = last.content[len(_ERROR):].strip().rstrip(".")
    if not names_no_value(reason):
        return None  # a syntax error ("expected ')' at position 8"): the model's to mend or explain
    return f"{' '.join(expression.split())} can't be calculated: {reason}."


# How a failed tool call's result begins (backend.agent.calls).
_ERROR = "error: "


def confirmed_answer(tools: Mapping[str, Any], messages: Sequence[ChatMessage]) -> str | None:
    """The program's answer after this run's latest message, the successful result of a tool
    declaring ToolSpec.confirmation (save_note: "Saved to your notes: “Gym code”."); None otherwise."""
    last = messages[-1] if messages else None
    confirm = getattr(tools.get(last.name), "confirmation", None) if last is not None and last.role == "tool" else None
    if confirm is None or last.content.startswith(_ERROR):
        return None
    return confirm(last.content)


# The answer when a tool that changes data was asked for ("Save a note: ...") and the user's role
# may not use it (the admin's "Tools that write", backend.agent.access). SmolLM2-135M, not offered
# save_note, answered "Sending an email to the user..." (new-user pass, 2026-12-04).
WRITES_OFF = ("I didn't do that: {name} changes your data, and tools that change data are turned off for "
              "your account. An admin can allow them in the admin settings (“Tools that write”).")


def refused_answer(tools: Mapping[str, Any], messages: Sequence[ChatMessage]) -> str | None:
    """The program's answer after this run's latest message, the refusal of a side-effecting tool
    the user's role may not use (backend.agent.calls.ToolSteps.check): WRITES_OFF naming it; None
    otherwise (a read-only tool's refusal is the model's to answer around)."""
    last = messages[-1] if messages else None
    spec = tools.get(last.name) if last is not None and last.role == "tool" else None
    if spec is None or not spec.side_effect or not last.content.startswith(f"{NOT_ALLOWED} {last.name!r} is not allowed"):
        return None
    return WRITES_OFF.format(name=last.name)
