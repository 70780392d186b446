"""Which tools a turn needs, decided by the program (the agent policy "planned", issue 15).

A small model chooses tools badly: SmolLM2-135M, free to choose ("auto"), never calls one, and
forced to call one ("one_call") calls one on every turn ("Hello" got the time) and picks the
wrong one for 3 of 5 document questions (docs/BENCHMARKS.md, "Agent runs with the real
model"). Under "planned" the program picks the tools of a turn from the person's own message,
the model writes each call's arguments (greedy, constrained to that one tool's schema) and then
the answer; a turn that needs no tool is answered without any. This is the loop the issue
describes with the choice of tool taken from the model, as a router in front of a small model
(the tool-retrieval step of Gorilla, Patil et al. 2023, and of ToolBench's retriever, Qin et
al. 2023, here with rules and the documents' own retrieval instead of a trained retriever).

Each tool decides for itself (ToolSpec.relevant(user_id, text) -> bool, blocking: it may
search); tools without it are never planned (read_passage needs an id only a search gives).
A side-effecting tool is planned only when the person's message asks for it
(backend.agent.intent). The plan is in PLAN_ORDER: what finds facts (search_documents,
current_time) before calculator, so a calculation can use a number found in a document; save_note
last, so a note can hold what the other tools found; other tools after, in the given order.

Cues (matched on at most backend.agent.numerals.MAX_CUE_CHARS of the person's own message, never on documents or tool
results):
- calculator: an expression typed with its operator between numbers ("12 * 34", "(17 + 5) * 3";
  "-" and "/" without spaces only in a question asking for a result, never in a date), or an
  arithmetic word next to a number ("144 divided by 12", "15% of 240", "times 2", "multiply ...
  by 7"; "3 times" only in a question about a quantity);
- current_time: a question asking for the time or the date ("what time", "what's the date",
  "what day");
- search_documents: a passage of the person's documents (or shared ones) at least
  MIN_DOCUMENT_SIMILARITY cosine-similar to the message (the chat's embedder), or holding a
  sentence at least search_documents.SENTENCE_SIMILARITY similar (search_documents.passages_about),
  or the message naming his documents ("my documents", "the report", "according to"); a request
  for advice or writing of the model's own (asks_general_request: "Give me 5 tips for ...") only
  when it names them or refers to a found passage's document (search_documents.refers_to_document:
  its name, or "the <word of its file's name>").
"""

from __future__ import annotations

import logging
import re
from typing import Any, Iterable

from backend.agent.numerals import CURRENCY_SIGNS, NUMBER_RE, PERCENT_SIGN, cue_text, with_digits
from backend.agent.operations import asks_amount, asks_quantity, asks_total, named_operations

log = logging.getLogger(__name__)

# Cosine similarity of message and passage (all-MiniLM-L6-v2) above which a turn searches the
# documents. Measured on scripts/agent_policy_eval.py's questions against its document: every
# question about the document scored at least 0.51, every other question at most 0.09.
MIN_DOCUMENT_SIMILARITY = 0.35
PLAN_ORDER = ("search_documents", "read_passage", "current_time", "calculator", "save_note")


# Arithmetic: an expression typed with its operator between two numbers ("12 * 34", "(17 + 5) *
# 3"; "-" and "/" without spaces only beside a word asking for a result, so "2024-05-01",
# "555-1234", "10/11" and "pages 10-20" are not sums), or an arithmetic word next to a number
# ("144 divided by 12", "15% of 240", "2 to the power of 10", "multiplied by 2", "3 times ...
# in total"). Words alone are not enough: "the difference between Python 2 and 3", "I told you
# three times", "give me one example" need no calculator. An operation a question only implies
# ("twice", "a third of", "12.5 metres taller", "over 14 days", named_operations below) counts
# in a question asking for a result or a quantity (needs_calculation).
_SPACED_OPERATOR = re.compile(r"\d\s*\)?\s*(?:\*\*|[*×÷^+]|\s[-/x]\s)\s*\(?\s*-?\d")
_TIGHT_OPERATOR = re.compile(r"(?<![\d/-])\d+(?:\.\d+)?[-/]\d+(?:\.\d+)?(?![\d/-])")
_ASKS_RESULT = re.compile(r"\b(?:what(?:'s| is| are)|how much|calculate|compute|evaluate|solve)\b|="
                          r"|\bwhat\s+(?:do|does|would|will)\s+(?:you|i|we|that|it|this)\s+(?:get|make|give|come\s+to)\b",
                          re.IGNORECASE)
_DATE = re.compile(r"\b\d{1,4}[-/]\d{1,2}[-/]\d{1,4}\b")
_WORD_OPERATIONS = re.compile(
    rf"\d\s*{PERCENT_SIGN}\s*(?:of|off)\s+[{CURRENCY_SIGNS}]?\s*\d"
    # "20% VAT on £23.90", "a 15% tip on $80" (new-user pass)
    rf"|\d\s*{PERCENT_SIGN}\s*(?:vat|tax|sales\s+tax|gst|hst|tip|gratuity|commission|service\s+charge|interest|deposit|"
    rf"fee|surcharge|markup)\s+(?:on|of|for)\s+[{CURRENCY_SIGNS}]?\s*\d"
    r"|\d\s+(?:times|plus|minus|over)\s+\d"
    r"|\b(?:multiplied|divided)\s+by\s+\d"
    r"|\b(?:multiply|divide)\b[^.?!\n]{0,80}?\bby\s+\d"
    r"|\bsubtract\w*\s+\d|\badd\s+\d[\d,.]*\s+(?:to|and)\b"
    r"|\btimes\s+\d"
    r"|\b(?:sum|product|average|mean)\s+of\s+[^.?!\n]{0,40}?\d"
    r"|\b(?:square|cube)\s+root\s+of\s+\d|\bsqrt\s*\(|\d\s*(?:squared|cubed)\b"
    r"|\bto\s+the\s+(?:\d+\w*\s+)?power\b|\bpower\s+of\s+\d"
    r"|\b(?:twice|double|triple|half\s+of)\s+\d",
    re.IGNORECASE)
# A percentage counts beside another number ("20% of $45", "tip 20% on a 45 dollar bill"), or as a
# share of something in a question asking for a result or a quantity ("what is 15% of the
# fee?"); else it is a fact ("it gives 10% of its income to which charity?", "what's the 4% rule?",
# "2% milk").
_PERCENT = re.compile(rf"\d\s*{PERCENT_SIGN}", re.IGNORECASE)
_PERCENT_OF = re.compile(rf"\d\s*{PERCENT_SIGN}\s*of\b", re.IGNORECASE)
# "N times" counts only with a question about a quantity ("cross it 3 times: how far in total?").
_N_TIMES = re.compile(r"\b\d+\s+times\b", re.IGNORECASE)
_QUANTITY = re.compile(r"\b(?:how\s+(?:many|much|far|long)|in\s+total|altogether)\b", re.IGNORECASE)
# The time or the date asked for, not the words used in passing ("today's computers", "a date
# tonight", "I don't have the time").
_TIME = re.compile(
    # "what time" of now, not of an event: "What time is the afternoon tour?", "what time are the ovens lit"
    r"\bwhat\s+time\b(?=\s*(?:[?.!,]|$|(?:is|it's)\s+it\b|it\s+is\b|(?:is\s+)?(?:it\s+)?(?:now|right\s+now|currently)\b"
    # "what time in Lima", "what time is it there" (a place's capitalised name, at most two words,
    # or "there", ending the clause; not "what time in the morning does the ferry leave", "what
    # time at weekends", "what time in Paris is sunset"), "what time do you have"
    r"|(?:is\s+(?:it\s+)?)?(?:in|at)\s+(?-i:[A-Z])[\w'-]*(?:\s+(?-i:[A-Z])[\w'-]*)?\s*(?:[?.!,]|$)"
    r"|(?:is\s+it\s+)?(?:there|here)\s*(?:[?.!,]|$)"
    r"|do\s+you\s+have\b))|\btime\s+is\s+it\b|\bwhat(?:'s|\s+is)\s+the\s+(?:time|date|day)\b|\bcurrent\s+(?:time|date)\b"
    r"|\btoday'?s\s+date\b|\b(?:what|which)\s+(?:day|date|year|month)\s+(?:are\s+we\b"
    # "is it", unless a verb or a preposition makes it a fact: "What year is it due to open?"
    r"|is\s+(?:it|today)\b(?!\s+(?:due|going|expected|scheduled|supposed|set|planned|built|made|from|of|on|"
    r"opening|open|held|celebrated|called|named|when|that|in\s+total)\b)|is\s+this\s*(?:[?.!,]|$))"
    # not "Which day of the week is Fernhollow closed?"
    r"|\bday\s+of\s+the\s+week\s+is\s+(?:it|today|tomorrow|yesterday|the\s+[0-9]{1,2}(?:st|nd|rd|th)?|christmas|new\s+year)\b"
    r"|\bwhat\s+is\s+today\b|\btime\s+now\b|\bdate\s+today\b",
    re.IGNORECASE)
_DOCUMENT_WORDS = re.compile(
    r"\b(?:my (?:documents?|files?|uploads?|pdfs?|papers?)|(?:the|this|that) (?:document|file|report|pdf|"
    r"paper|upload)|according to|in (?:the|my) (?:documents?|files?|sources?))\b", re.IGNORECASE)


# A request for advice or for writing of the model's own ("Give me 5 tips for cycling safely in a
# city", "Suggest 5 names for a small pottery studio", "Explain the difference between a tandem
# and a regular bike", "... in simple terms"): answered from what the model knows, not from the
# person's documents, unless it names them (search_documents). On blind sets 1-44 it matched
# 118 of 320 chat messages and none of 906 questions about the documents; 5 of sets 43-44's 16
# chat messages, on the documents' subjects, searched them and were answered from their passages.
_GENERAL_REQUEST = re.compile(
    r"\b(?:tips|ideas|suggestions|suggest|brainstorm|poem|haiku|limerick|joke|riddle|in\s+simple\s+terms|"
    r"explain\s+the\s+difference|explain\s+(?:how|why)\s+(?:a|an|some|people|you|we|i)|(?:a|some|any)\s+recipes?|"
    r"recipes?\s+(?:for|with|ideas?)|(?:easy|quick|simple)\s+(?:dinner|lunch|breakfast|meal|snack|dessert)s?|"
    r"calm\s+(?:down|my\s+nerves))\b"
    r"|^\W*(?:what|which)\s+(?:[a-z-]+\s+){1,2}(?:is|are)\s+(?:good|best)\s+for\b", re.IGNORECASE)
# Writing of a person's own asked for: "write a short thank-you message to ...", "can you help me
# write an email asking ...", "write a packing list for ..." (not "write a summary of the
# cancellation policy", "draft an invoice for 3 towers": the documents' business).
_WRITING = re.compile(
    r"^\W*(?:(?:please|pls|can\s+you|could\s+you|would\s+you|will\s+you)\s+)?(?:help\s+me\s+)?"
    r"(?:write|draft|compose)\s+(?:me\s+|us\s+)?(?:a|an|some|my)\s+(?:[a-z'-]+\s+){0,3}?"
    r"(?:message|email|e-mail|letter|note|poem|story|card|text|speech|toast|caption|post|bio|invitation|"
    r"packing\s+list|shopping\s+list|to-do\s+list|checklist)s?\b", re.IGNORECASE)


# A question of general knowledge or advice ("how often should I wax my car?", "why do my towels
# smell after washing", "is bouldering safe for a 7 year old?", "should I put my sofa in storage or
# just sell it"), not a question to a business about itself: no "you"/"your" but the generic "how
# do you", no verb of dealing with it ("how do I book", "how can I pay"), no amount asked. Blind
# sets 51-52's chat messages, on the documents' subjects, searched them for 10 of 16; 34 of 64 such
# questions written for sets 43-50 did.
_GENERAL_QUESTION = re.compile(
    r"^\W*(?:(?:hi|hey|hello|ok|so|quick question|question)\b[\s,.!:-]*)?(?:"
    r"how\s+(?:do|can|should|would)\s+(?:i|you|we|one)\s+(?!(?:book|pay|get\s+(?:to|there|in|a\s+refund)|find|contact|"
    r"reach|cancel|reschedule|join|sign|register|enrol|enroll|apply|order|reserve|collect|drop|claim|redeem|park|"
    r"access|top|renew|upgrade|extend|complain|arrange|request|hire|rent|buy|check|add|change|use\s+(?:my|the|a)\s+"
    r"(?:voucher|code|card|pass|membership))\b)"
    r"|why\s+(?:do|does|did|is|are|would|can'?t|won'?t|don'?t|doesn'?t)\b"
    r"|is\s+it\s+(?:worth|better|safe|bad|ok|okay|normal|rude|healthy|dangerous|wise|a\s+good\s+idea)\b"
    r"(?!\s+(?:to|if\s+i)\s+(?:bring|park|arrive|leave|pay|cancel|come|book|stay|smoke|turn|drop|pick|use|camp|wear))"
    r"|should\s+i\s+(?:get|buy|sell|learn|choose|try|switch|put|keep|worry|start|go\s+for|be\s+worried)\b"
    r"|at\s+what\s+age\b|what(?:'s|s|\s+is)\s+the\s+best\s+way\s+to\b|what\s+muscles\b"
    r"|what\s+should\s+i\s+pack\b|how\s+often\s+should\s+(?:i|you|we|one|an?|my|the|[a-z-]+\s+be)\b"
    # "what does 'dry clean only' on a label actually mean?", "is vinegar or dish soap better for cleaning windows"
    r"|what\s+does\s+(?:[\w'\"-]+\s+){1,8}(?:actually\s+|really\s+)?mean\b"
    r"|is\s+(?!it\b|this\b|that\b|there\b)(?:[a-z-]+\s+){1,3}or\s+(?:[a-z-]+\s+){1,3}(?:better|worse|safer|cheaper\s+to\s+run)\b"
    r"|(?:does|do)\s+(?:an?\s+|the\s+|my\s+)?(?:[a-z-]+\s+){1,3}(?:damage|scratch|hurt|ruin|harm|shrink|fade)\b"
    r"(?!\s+(?:waiver|deposit|insurance|policy|cover|fee|charge|protection|excess|repair))"
    r"|is\s+(?!it\b|this\b|that\b|there\b)(?:[a-z-]+\s+){1,2}(?:safe|harder|easier|healthier|dangerous|good\s+for|bad\s+for)\b"
    # "what's a good beginner piece to learn", "which whetstone grit would you recommend for a beginner?",
    # "what should I look for when buying my first horse?", "how do you say 'where is the ski lift' in German?"
    r"|what(?:'s|s|\s+is|\s+are)\s+(?:a|some)\s+good\b|which\s+(?:[a-z-]+\s+){1,3}(?:would|do|should|can)\s+you\s+"
    r"(?:recommend|suggest)\b|what\s+should\s+i\s+(?:look\s+(?:for|out\s+for)|consider|know\s+about)\b"
    r"|how\s+do\s+you\s+say\b)"
    r"|\bany\s+advice\b|\bthe\s+average\s+(?:person|adult|learner|beginner|child|kid|family|household)\b"
    r"|\b(?:generally|in\s+general)\b",
    re.IGNORECASE)
# Words of dealing with a business ("how do I get my deposit back?", "why is the pool closed on
# Mondays?", "is it worth getting the annual pass?", "what's the best way to pay?"): a question
# holding one is about the documents' business, not general knowledge (review: 66 of 87 such
# questions were taken for general ones).
_BUSINESS_WORDS = re.compile(
    r"\b(?:book|booking|bookings|booked|reserve|reservation|appointment|deposit|refund|refunds|discount|discounts|"
    r"voucher|membership|member|members|join|pass|passes|ticket|tickets|price|prices|pricing|fee|fees|rate|rates|"
    r"charge|charges|charged|pay|paying|payment|open|opening|opens|closed|close|closes|hours|policy|cancel\w*|"
    r"package|packages|plan|plans|offer|offers|deal|deals|order|ordering|delivery|deliver|collect|collection)\b",
    re.IGNORECASE)
# The business addressed ("why do you charge a deposit?", "is your pool heated?"), not "how do you".
# ("which whetstone grit would you recommend" asks the model's advice: search_documents still
# searches when a found passage names the thing, "which room would you recommend")
_ADDRESSED = re.compile(r"\b(?<!how do )(?<!how can )(?:you(?!\s+(?:recommend|suggest|say)\b)|your|yours|y'all|u)\b",
                        re.IGNORECASE)


def asks_general_request(text: str) -> bool:
    """Whether `text` asks for advice or writing of the model's own (_GENERAL_REQUEST), or a question
    of general knowledge or advice that does not address the documents' business nor ask an
    amount (_GENERAL_QUESTION)."""
    return asks_for_writing(text) or asks_general_question(text)


def asks_for_writing(text: str) -> bool:
    """Whether `text` asks for advice or writing of the model's own in so many words (_GENERAL_REQUEST:
    tips, ideas, a poem, "explain the difference"; _WRITING: "write a short message to ...")."""
    text = cue_text(text)
    return (_GENERAL_REQUEST.search(text) is not None or _WRITING.search(text) is not None
            or _CREATIVE.search(text) is not None)


# A piece of creative writing asked for: "Write a two-line poem about tyres", "tell me a story about a
# baker", "make up a limerick about yoga" (the documents' business named in it is its subject, not a
# question about them: new-user pass, a poem about tyres was answered with the bakery's prices).
_CREATIVE = re.compile(
    r"^\W*(?:(?:please|pls|can\s+you|could\s+you|would\s+you|will\s+you)\s+)?"
    r"(?:write|compose|make\s+up|tell|give|invent|create)\s+(?:me\s+|us\s+)?(?:a|an|some|one|two|three|another)\s+"
    r"(?:[a-z'-]+\s+){0,3}?(?:poem|story|stories|haiku|limerick|song|lyrics|sonnet|rap|joke|riddle|fable|fairy\s+tale)s?\b",
    re.IGNORECASE)


def asks_for_creative_writing(text: str) -> bool:
    """Whether `text` asks for a poem, a story, a song, a joke (_CREATIVE): writing that needs
    nothing of the documents unless it names them (search_documents' relevant)."""
    return _CREATIVE.search(cue_text(text)) is not None


def asks_for_own_writing(text: str) -> bool:
    """Whether `text` asks for a piece of writing of the person's own (_WRITING: a message, an
    email, a letter, a poem, a packing list), no amount."""
    return _WRITING.search(cue_text(text)) is not None and not asks_amount(text)


# A question put to the business by a customer: "is there parking?", "can I bring my dog?", "do I
# need to book?", "what happens if it rains?", besides the business addressed (_ADDRESSED).
_CUSTOMER_QUESTION = re.compile(r"^\W*(?:is|are)\s+there\b|\b(?:can|could|may|do|should|must)\s+(?:i|we)\s+(?:bring|park|pay|"
                                r"book|cancel|come|visit|use|leave|collect|drop|rent|hire|reserve|order|return|change|"
                                r"reschedule)\b", re.IGNORECASE)
# "you" of a condition is anyone ("what happens if you drink too much coffee?": review).
_GENERIC_YOU = re.compile(r"\b(?:if|when|whether|once|until|unless|after|before)\s+you\b", re.IGNORECASE)


# The model's own opinion asked ("which do you think is better as a first pet?", "what's your favourite").
_ASKS_OPINION = re.compile(r"\byou\s+(?:think|reckon|prefer|like|feel|believe)\b|\byour\s+(?:opinion|favou?rite|view)\b",
                           re.IGNORECASE)


def addresses_business(text: str) -> bool:
    """Whether `text` is a question put to the documents' business ("are you open on mondays?", "is
    there parking?", "can I bring my dog along?"): it addresses it (_ADDRESSED) or asks as its
    customer (_CUSTOMER_QUESTION), and is no question of general knowledge (asks_general_question)
    nor a request for the model's own writing or advice (asks_general_request)."""
    cue = cue_text(text)
    return ((_ADDRESSED.search(_GENERIC_YOU.sub(" ", cue)) is not None or _CUSTOMER_QUESTION.search(cue) is not None)
            and _ASKS_OPINION.search(cue) is None and not asks_general_question(cue) and not asks_general_request(cue))


def asks_general_question(text: str) -> bool:
    """Whether `text` is a question of general knowledge or advice (_GENERAL_QUESTION) that neither
    addresses the documents' business (_ADDRESSED), deals with it (_BUSINESS_WORDS) nor asks an
    amount."""
    text = cue_text(text)
    return (_GENERAL_QUESTION.search(text) is not None and _ADDRESSED.search(text) is None
            and _BUSINESS_WORDS.search(text) is None and not asks_amount(text))


def typed_operator(text: str) -> bool:
    """Whether `text` holds an operator typed between numbers ("12 * 4", "what is 3+4"), or is an
    expression alone ("1/0", "3/4": no date with nothing around it)."""
    if _SPACED_OPERATOR.search(text):
        return True
    if (_EXPRESSION_ALONE.fullmatch(text.strip()) and _OPERATOR_BETWEEN.search(text) and not _DATE.search(text)
            and re.search(r"[*/+^]", text)):  # (not "555-1234", "9-5", "1-800-555-0199": numbers, ranges)
        return True
    return bool(_ASKS_RESULT.search(text) and not _DATE.search(text) and _TIGHT_OPERATOR.search(text))


def states_arithmetic(text: str) -> bool:
    """Whether `text` writes its arithmetic out: a typed expression ("12 * 34"), an operation in
    words ("4 times 16", "17% of 240"), a calculation of its own numbers whatever else it asks."""
    text = cue_text(text)
    return bool(typed_operator(text) or _WORD_OPERATIONS.search(text))


def needs_calculation(text: str) -> bool:
    """Whether `text` asks for arithmetic on its own: a typed expression, or an arithmetic word
    next to a number (see the patterns above). An operation the question only implies ("if it
    were 12.5 metres taller", "over 14 days", "how much would 3 cost", "a third of", "in total")
    counts only in a question asking for a result or a quantity; the calculator's spec also
    plans it for such a question about the person's documents (backend.agent.tools.calculator)."""
    text = cue_text(text)
    if typed_operator(text) or _WORD_OPERATIONS.search(text) or (_N_TIMES.search(text) and _QUANTITY.search(text)):
        return True
    if _PERCENT.search(text) and len(NUMBER_RE.findall(text)) >= 2:  # "tip 20% on a 45 dollar bill"
        return True
    asks = _ASKS_RESULT.search(text) is not None or asks_quantity(text)
    return asks and bool(named_operations(text) or _PERCENT_OF.search(text)
                         or (NUMBER_RE.search(with_digits(text)) and asks_total(text)))


# "... and what time?" ending a question about an event ("which evening is the wheel class and
# what time"): the event's time, not now.
_EVENT_QUESTION = re.compile(r"\b(?:which|when|where)\b", re.IGNORECASE)
_AND_WHAT_TIME = re.compile(r"\band\s+what\s+time\s*[?.!]*\s*$", re.IGNORECASE)


def asks_for_time(text: str) -> bool:
    """Whether `text` asks for the current time or date."""
    text = cue_text(text)
    event = _AND_WHAT_TIME.search(text)
    if event is not None and _EVENT_QUESTION.search(text, 0, event.start()):
        text = text[:event.start()]
    return _TIME.search(text) is not None


def names_documents(text: str) -> bool:
    """Whether `text` refers to the person's documents in words ("my documents", "the report")."""
    return _DOCUMENT_WORDS.search(cue_text(text)) is not None


def query_of(text: str, max_chars: int, forbidden: str) -> str | None:
    """The person's message as a search query: every character in `forbidden` and each run of
    whitespace made one space, its asking part when longer than `max_chars` (asking_part); None
    when nothing is left."""
    cleaned = re.sub(r"\s+", " ", "".join(" " if c in forbidden else c for c in text)).strip()
    return asking_part(cleaned, max_chars) or None


_SENTENCE_BREAK = re.compile(r"(?<=[.!?])\s+")


def asking_part(text: str, max_chars: int) -> str:
    """At most `max_chars` of `text` (whitespace made single spaces): all of it when it fits;
    else its last sentence asking something (ending "?"; else its last sentence) with the
    sentences before it that fit; the end of that sentence, from a word, when it alone does not. A long
    message tells its story first and asks last ("... We've got 12 people coming. How much for
    the hall?"): its first characters searched its story (new-user pass: a 1,000-character message
    ending in a price question found no price)."""
    text = " ".join(text.split())
    if len(text) <= max_chars:
        return text
    sentences = [s for s in _SENTENCE_BREAK.split(text) if s]
    # (a sentence ending "?", not a link's "page?id=4")
    last = max((i for i, s in enumerate(sentences) if s.rstrip("\"')» ").endswith("?")), default=len(sentences) - 1)
    part = sentences[last]
    for sentence in reversed(sentences[:last]):
        if len(sentence) + 1 + len(part) > max_chars:
            break
        part = f"{sentence} {part}"
    if len(part) > max_chars:  # one run-on sentence: its end, where the question is, cut at a word
        cut = part[-max_chars:]
        part = (cut.split(" ", 1)[1] if " " in cut else cut).strip()
    return part


# A message that is an expression and nothing else ("1/0", "(3+4)*5", "2**10").
_EXPRESSION_ALONE = re.compile(r"[-+*/%^().\d\s]+[?=]?")
_EXPRESSION_RUN = re.compile(r"[-+*/%^()×÷.\d\s]+|(?<=\s)x(?=\s)")
_OPERATOR_BETWEEN = re.compile(r"[\d)]\s*(?:[-+*/%^]|\*\*)\s*[\d(+-]")
_NUMBER_WORD = re.compile(
    r"\b(?:zero|one|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve|twenty|thirty|forty|fifty|"
    r"hundred|thousand|million|billion|half|twice|double|triple|quarter)\b", re.IGNORECASE)
_OPERATION_WORD = re.compile(
    r"\b(?:plus|minus|times|multipl\w*|divid\w*|over|squared|cubed|root|power|percent|per\s+cent|sum|product|"
    r"average|mean|then|and\s+then|add|subtract\w*|round\w*|of)\b|%", re.IGNORECASE)
_THOUSANDS = re.compile(r"\d,\d{3}\b")


def typed_expression(text: str, evaluate: Any) -> str | None:
    """The arithmetic typed in `text` when it is the whole of what the message asks to compute
    ("What is (17 + 5) * 3?" -> "(17 + 5) * 3"; " x " and "×" read as "*", "÷" as "/"), which
    `evaluate(expression)` accepts (raising otherwise). None, so that the model writes the call,
    when there is no such run or more than one, when the rest of the message holds another number,
    number word or operation word ("(2 + 3) squared", "3 + 4, then times 10", "15% of 80 + 20"),
    when a number has a thousands separator ("1,200 + 300") or the text holds a date. An expression
    with no value ("1/0": arithmetic.CalculationError) is still the one typed."""
    text = cue_text(text)
    if _THOUSANDS.search(text) or _DATE.search(text):
        return None
    spaced = re.sub(r"(?<=[\d)])\s+x\s+(?=[\d(])", " * ", text).replace("×", "*").replace("÷", "/")
    found: list[re.Match[str]] = []
    for match in _EXPRESSION_RUN.finditer(spaced):
        if _OPERATOR_BETWEEN.search(match.group(0)):
            found.append(match)
    if len(found) != 1:
        return None
    match = found[0]
    run = match.group(0).strip().rstrip(".").strip()
    rest = spaced[:match.start()] + " " + spaced[match.end():]
    if re.search(r"\d", rest) or _NUMBER_WORD.search(rest) or _OPERATION_WORD.search(rest):
        return None
    from backend.agent.tools.arithmetic import CalculationError  # (the tools package imports this module)

    try:
        evaluate(run)
    except CalculationError:
        return run  # "1/0", "2**100000": the calculator says why it has no value
    except Exception:
        return None
    return run


def plan_tools(specs: Iterable[Any], offered: Iterable[str], user_id: str, user_text: str | None) -> list[str]:
    """The names of the tools this turn calls, in PLAN_ORDER: those in `offered` (allowed for
    the user; a side-effecting one only when his message asks for it) whose
    ``relevant(user_id, user_text)`` is true. None or "" plans none. A cue that fails (a
    database error during the search) plans nothing for that tool and is logged."""
    if not user_text or not user_text.strip():
        return []
    offered = set(offered)
    planned: list[str] = []
    for spec in specs:
        relevant = getattr(spec, "relevant", None)
        if spec.name not in offered or relevant is None:
            continue
        try:
            if relevant(user_id, user_text):
                planned.append(spec.name)
        except Exception:
            log.exception("deciding whether %s is needed failed", spec.name)
    rank = {name: i for i, name in enumerate(PLAN_ORDER)}
    return sorted(planned, key=lambda name: rank.get(name, len(PLAN_ORDER)))  # stable: others keep their order
