"""The `search_documents` tool: the user's own and shared documents through the chat's
Retriever (backend/rag/retrieval.py; who may read what is filtered in its SQL)."""

from __future__ import annotations

import re
from typing import Any, Callable

from backend.agent.fact_questions import asks_fact
from backend.agent.numerals import CURRENCY_SIGNS, NUMBER_RE, cue_text
from backend.agent.operations import asks_cost, asks_how_many, asks_money, asks_price
from backend.agent.routing import (MIN_DOCUMENT_SIMILARITY, addresses_business, asks_for_creative_writing,
                                   asks_general_request, asking_part, asks_for_writing, names_documents, query_of)
from backend.agent.tools import ToolContext, ToolResult, ToolSpec
from backend.agent.tools.conditions import hours_days, without_days
from backend.agent.tools.passages import format_passages, passage_records
from backend.agent.tools.segmentation import text_sentences
from backend.agent.tools.sentences import (asks_opening, asks_own_contact, best_sentence, best_similarity, content_words,
                                          holds_contact, phrases, stem_of, states_answer_kind, stems)
from backend.rag import Retriever, Source
from backend.rag.sources import source_label

MAX_QUERY_CHARS = 200
# The most of a message whose similarity to a passage decides whether it is about it (asking_part).
MAX_ASKING_CHARS = 400
MAX_TOP_K = 8
DEFAULT_TOP_K = 4
# Words, not markup: no quote, backslash, bracket, brace, angle bracket, underscore or line break.
# The engine's grammar follows the schema while the model writes the call, so a query closes
# before it could spell the block's end, and SmolLM2-135M cannot pass the tool's own name
# ("search_documents") as its query, which it did for 3 of 10 questions (2026-12-02).
QUERY_PATTERN = r'^[^"\\<>{}\[\]_\n\r\t]+$'
FORBIDDEN_IN_QUERY = '"\\<>{}[]_\n\r\t'  # QUERY_PATTERN's excluded characters

PARAMETERS = {
    "type": "object",
    "properties": {
        "query": {"type": "string", "minLength": 1, "maxLength": MAX_QUERY_CHARS, "pattern": QUERY_PATTERN,
                  "description": "what to look for, in words"},
        "top_k": {"type": "integer", "minimum": 1, "maximum": MAX_TOP_K,
                  "description": f"how many passages to return (default {DEFAULT_TOP_K})"},
    },
    "required": ["query"],
    "additionalProperties": False,
}


# The search's cosine floor (the retriever's default is RagSettings.min_similarity, 0.2): a passage
# whose words match a question asking one fact of it can score less as a whole ("What time do Levels
# 5 and 6 close?" against its car park's passage: 0.09), and the hybrid search's BM25 half finds it
# only above the floor. Lookups of blind sets 11-40 whose quoted sentence holds the answer: 280 of
# 300 at 0.2, 285 at 0.1, 288 at 0.05 and with no floor (docs/BENCHMARKS.md, thirteenth session).
SEARCH_FLOOR = 0.05


def make_run(retriever: Retriever) -> Callable[[ToolContext, dict[str, Any]], ToolResult]:
    def run(context: ToolContext, arguments: dict[str, Any]) -> ToolResult:
        # a bill's parts lie apart: its prices in a list, its tax, surcharges and fees in the terms and
        # the offers; an amount asked reads MAX_TOP_K passages (simple sets 65-72: 10 of 47 answers the
        # program gives over all passages were lost to the 4 best)
        k = arguments.get("top_k", MAX_TOP_K if _asks_amount_of_money(arguments["query"]) else DEFAULT_TOP_K)
        sources = retriever.search(context.user_id, arguments["query"], k=k, min_similarity=SEARCH_FLOOR)
        if asks_contact(arguments["query"]) and not any(holds_contact(source.text) for source in sources):
            # "What's your email address?": the passage holding one, wherever it ranks (a title
            # block's "Tel: ... Email: ..." scores low against the question: blind set 65)
            held = {source.chunk_id for source in sources}
            sources += [source for source in retriever.search(context.user_id, arguments["query"], k=MAX_TOP_K,
                                                               min_similarity=SEARCH_FLOOR)
                        if holds_contact(source.text) and source.chunk_id not in held][:1]
        count = f"{len(sources)} passage{'' if len(sources) == 1 else 's'}"
        if not sources:
            content = "No passages in the user's documents match this query."
        else:
            content = (f"{count} from the user's documents, best first. Cite a passage by its "
                       f"number, like [1].\n\n{format_passages(sources)}")
        return ToolResult(content=content, summary=f"Searched your documents — {count}",
                          sources=tuple(sources), data={"query": arguments["query"], "passages": passage_records(sources)})

    return run


def planned_arguments(text: str) -> dict[str, Any] | None:
    """A planned search's arguments: the person's message is the query (it is what the turn was
    planned on; SmolLM2-135M's own queries were junk such as "search.Halvorsen.bridge.2020.2020…")."""
    query = query_of(text, MAX_QUERY_CHARS, FORBIDDEN_IN_QUERY)
    return None if query is None else {"query": query}


def make_passages(retriever: Retriever) -> Callable[[str, str], list[tuple[str, str]]]:
    """(user_id, text) -> (label, text) of the passages the person may read that the message is
    about (passages_about; the calculator's cue); the label is the one format_passages writes (the
    document's name: "dunmore_skip_hire.txt (version 1)")."""

    def passages(user_id: str, text: str) -> list[tuple[str, str]]:
        money = _asks_amount_of_money(text)
        found, about = passages_about(retriever, user_id, text, k=MAX_TOP_K if money else 3)
        if not about:
            return []
        # (and for an amount asked, the other passages found: its terms, "6% state sales tax on parts")
        chosen = about + [source for source in found if money and source not in about]
        return [(source_label(source), source.text) for source in chosen]

    return passages


def _asks_amount_of_money(text: str) -> bool:
    """Whether `text` asks an amount of money (operations.asks_money, asks_cost; "how much is ...",
    operations.asks_price, but no count: "how many lanes")."""
    return asks_money(text) or asks_cost(text) or (asks_price(text) and not asks_how_many(text))


# A message asking one fact of a passage ("What distance counts as Zone 3?") is less similar to the
# whole passage (a chunk of up to 200 tokens) than to the sentence stating it: of the 300 facts
# asked of the blind sets 11-40, 34 scored under MIN_DOCUMENT_SIMILARITY against their passage, 9
# under SENTENCE_SIMILARITY against their documents' best sentence; of their 240 chat messages
# holding numbers, the highest scored 0.41 against a sentence (docs/BENCHMARKS.md, thirteenth
# session). Routed by either: 298 of the 300 facts (284 before), none of the 240 messages.
SENTENCE_SIMILARITY = 0.45
# The passages read for their sentences: the k most similar to the message at least this similar.
SENTENCE_FLOOR = 0.1


def _similarity(source: Source) -> float:
    return source.similarity if source.similarity is not None else source.score


def passages_about(retriever: Retriever, user_id: str, text: str, k: int = 3) -> tuple[list[Source], list[Source]]:
    """(found, about): the (at most k) passages the person may read most similar to the message,
    at least SENTENCE_FLOOR cosine-similar (one vector search as `user_id`: who may read what is
    the Retriever's), and those of them the message is about: at least MIN_DOCUMENT_SIMILARITY
    similar as a whole; else, for a message asking something (_ASKS) with two content words or
    more, those holding a sentence that shares a word with it (a stem, sentences.stems) and is at
    least SENTENCE_SIMILARITY similar (the sentences of passage_heading's body, each under the
    passage's own title line if it has one, embedded by the retriever's embedder:
    sentences.best_similarity). "Have a lovely day!" or "Any questions?" is about no passage's
    "Let me know if you have any questions". Best first."""
    # (a long message by the part of it that asks: its story first, its question last)
    asking = asking_part(text, MAX_ASKING_CHARS)
    found = retriever.search(user_id, asking, k=k, mode="vector", min_similarity=SENTENCE_FLOOR)
    cue = cue_text(text)
    asked = stems(cue)
    # (a passage sharing no word with the message is about it only when far more similar: "What's the
    # capital of New Zealand?" scored 0.37 against a kayak company's passage, blind set 59)
    about = [source for source in found if _similarity(source) >= MIN_DOCUMENT_SIMILARITY
             and (_shares_a_word(cue, source) or _similarity(source) >= MIN_UNSHARED_SIMILARITY)]
    embedder = getattr(retriever, "embedder", None)
    addressed = addresses_business(text)
    # (one content word is enough for a question put to the business: "is there parking?")
    if about or embedder is None or (len(asked) < 2 and not addressed) or not _ASKS.search(cue):
        return found, about
    specific = asked - _GENERIC_STEMS
    money = asks_money(text) or asks_cost(text)
    # (a question put to the business, or of its hours or a price naming no other place: "opening hours?", "I live 40
    # km away. What is the travel charge?"; not "What time does the Louvre open?", review)
    # (or one fact asked naming no other place: "When is the balance due?" over "The balance is due 14 days before the
    # event." under a long title line; blind sets 39-92: 26 of 862 such questions searched nothing, read after their runs)
    unnamed = addressed or ((asks_opening(cue) or money or asks_fact(cue)) and not _PROPER_NAME.search(cue))
    asked_phrases = {pair for pair in phrases(cue) if not set(pair) & _GENERIC_STEMS}
    days = hours_days(cue)
    # (a question put to the business reads the passages a keyword search finds too: "What are your hours on a
    # Saturday?" found no chunk of "Opening hours - Saturday: 10:00-13:00" among the three most similar, blind set
    # 102, read)
    seen = {source.text for source in found}
    wider = [source for source in retriever.search(user_id, cue, k=MAX_TOP_K, min_similarity=SEARCH_FLOOR)
             if source.text not in seen] if unnamed and not asks_general_request(text) else []  # (not "Can you explain
    # compound interest like I'm 12?" beside "Overdue accounts incur interest at 2% per month", blind set 49)
    for source in found + wider:
        sentences = text_sentences(source.text)
        shared = [pair for pair in sentences if stems(pair[1]) & asked]
        # (each sentence with its title line, and alone: _best_similarity)
        if shared and _best_similarity(asking, shared, embedder, unnamed) >= SENTENCE_SIMILARITY:
            about.append(source)
        elif (asks_opening(cue) and (not _NAMES_PLACE.search(cue)
                                     or _shares_a_word(_OPENING_WORDS.sub(" ", without_days(cue)), source))
              and any((stems(s) & specific or days & hours_days(s)) and states_answer_kind(cue, s) for _, s in sentences)):
            # "What time do you close on Saturday?" over "Saturday 8:30am to 1pm.", "are you open on
            # mondays" over "Closed Sun & Mon.": a sentence naming the question's own thing or day (not
            # only "time") and stating the kind of answer it asks (new-user pass: no search, and the
            # model said it had no access to real-world time; blind sets 67-69)
            about.append(source)
        elif money and any(_PRICE.search(s) and phrases(s) & asked_phrases for _, s in shared):
            # "we'll each grab a drip coffee. total for the 3 of us?" over "Drip coffee: CA$3.25": a
            # thing the passage prices, named by two of its words (blind set 59: no search, no answer)
            about.append(source)
        elif addressed and specific and any(stems(s) & specific for _, s in shared) and _best_similarity(
                asking, [pair for pair in shared if stems(pair[1]) & specific], embedder) >= ADDRESSED_SIMILARITY:
            # a question put to the business ("is there parking?", "can I bring my dog along?", "what
            # payment methods do you take?") over a sentence naming its own thing ("Free parking for 30
            # cars", 0.35): such short questions score low (blind sets 63-70: no search)
            about.append(source)
    return found, about


# A name of a place or a business within a sentence: a capitalised word after its first ("the Louvre", "Tesco").
_PROPER_NAME = re.compile(r"(?<=[a-z,] )[A-Z][a-z]+")


def _best_similarity(asking: str, sentences: list[tuple[str, str]], embedder: Any, alone: bool = True) -> float:
    """The best cosine similarity of `asking` to the (heading, sentence) pairs, each read with its
    title line and, with `alone` (a question put to the business: routing.addresses_business), alone
    too (sentences.best_similarity): a short question scores low against a sentence under a long
    title ("What are your opening hours?": 0.39 against "Opening hours: Tuesday to Saturday, 8:30 am
    to 5:30 pm." under "Bright Paws Mobile Dog Grooming - Price List 2026", 0.82 against the
    sentence; "Do you take cheques?" and "We do not accept cheques": new-user pass, no search either
    time); not "What time does the Louvre open?" (review)."""
    best = best_similarity(asking, sentences, embedder.embed)
    return max(best, best_similarity(asking, [("", sentence) for _, sentence in sentences], embedder.embed)) if alone else best


# The similarity at which a question put to the business (routing.addresses_business) is about a
# sentence naming one of its own words (not a generic one: _GENERIC_STEMS).
ADDRESSED_SIMILARITY = 0.3


# Words any message may hold, naming nothing of a passage.
_ANY_MESSAGE_WORDS = frozenset(
    "you can tell know like please thanks thank what whats why get got need want good best well really "
    "give make let say said see look think much many way thing things something anything someone".split())


def _shares_a_word(text: str, source: Source) -> bool:
    """Whether `text` and the passage (its text or its document's name) share a content word's
    stem's first five letters ("plumbers" and "hartley_plumbing_rates.txt", "laundry" and
    "launderette", "cakes" and "cake")."""
    def prefixes(words: str) -> set[str]:
        return {stem_of(w)[:5] for w in content_words(words.replace("_", " ").replace("-", " "))
                if not w[0].isdigit() and w not in _ANY_MESSAGE_WORDS}
    return bool(prefixes(text) & prefixes(f"{source.text} {source.document_name}"))


# An opening asked of a place named ("is the library closed on mondays?"): the passage must name it too,
# by a word other than a day's or the opening's own (review).
_NAMES_PLACE = re.compile(r"\b(?:is|are)\s+the\s+\w+", re.IGNORECASE)
_OPENING_WORDS = re.compile(r"\b(?:open|closed?|hours)\b", re.IGNORECASE)
# Words of a question that name no thing of a passage by themselves ("what time is it in Tokyo?"
# shares "time" with "Opening times: ...").
# The similarity at which a passage sharing no word with the message is about it all the same.
MIN_UNSHARED_SIMILARITY = 0.45
# A price written with its sign: "CA$3.25", "£9", "€ 4".
_PRICE = re.compile(rf"[{CURRENCY_SIGNS}]\s?[0-9]")
_GENERIC_STEMS = stems("time times today now date day days hour hours week year open opening close closing")


# A message asking something: a question mark, or a question's first word.
_ASKS = re.compile(r"\?|^\W*(?:what|what's|whats|which|who|whom|whose|when|where|why|how|is|are|was|were|do|does|did|"
                   r"can|could|will|would|should|may|tell\s+me)\b", re.IGNORECASE)


# A message that quotes a measure of a passage ("The 9.6-metre pipe weighs how many kilograms?")
# is about it at a lower similarity: such questions, naming neither the document nor its subject,
# scored 0.22 (blind set 11); every chat message of the agent eval scored at most 0.09.
MEASURE_SIMILARITY = 0.2
_YEAR = re.compile(r"1\d{3}|20\d{2}")


def measures(text: str) -> set[str]:
    """The numbers of `text` that few texts share by chance: with a decimal point, or of three
    digits or more that are not a year ("9.6", "1,800" -> "1800"; not "4", "2025")."""
    written = {m.group(1) for m in NUMBER_RE.finditer(text)}  # a year is written without a separator
    return {n.replace(",", "") for n in written if "." in n or (len(n) >= 3 and not _YEAR.fullmatch(n))}


# Words of a file's name that name no document: its kind and extension.
_FILE_WORDS = frozenset({"txt", "pdf", "docx", "doc", "md", "markdown", "html", "htm", "csv", "rtf", "odt", "final",
                         "draft", "copy", "notes", "file", "document", "new", "old", "version"})


def _name_words(document_name: str) -> list[str]:
    """The words of a file's name of four letters or more, in order, its kind and extension aside
    ("lumen", "portrait", "studio" of "lumen_portrait_studio.txt")."""
    return [w for w in re.split(r"[^a-z0-9]+", document_name.lower())
            if len(w) >= 4 and not w.isdigit() and w not in _FILE_WORDS]


def names_document(text: str, document_name: str) -> bool:
    """Whether the message `text` names the document `document_name` by a word of its file's name
    (_name_words: "lumen" of "lumen_portrait_studio.txt")."""
    return bool(set(_name_words(document_name)) & set(re.findall(r"[a-z0-9]+", cue_text(text).lower())))


def refers_to_document(text: str, document_name: str) -> bool:
    """Whether the message `text` refers to the document `document_name`: by the first word of its
    file's name (its name: "Riverside" of riverside_wheels_bike_hire.txt), or by another word of
    it after "the", "my", "your", "our", "this" or "that" ("tips in the employee handbook" of
    employee_handbook.pdf) that ends what it names (not "my driving test" of
    clearway_driving_school.txt), not by a word naming a kind of thing only ("a regular bike", "a
    3-course menu")."""
    named = _name_words(document_name)
    if not named:
        return False
    text = cue_text(text).lower()
    if named[0] in set(re.findall(r"[a-z0-9]+", text)):
        return True
    words = "|".join(re.escape(w) for w in named)
    # the file's word ends what is named ("the employee handbook"; not "my driving test")
    return re.search(rf"\b(?:the|my|your|our|this|that)\s+(?:[a-z0-9'-]+\s+){{0,2}}?(?:{words})\b"
                     rf"(?!\s+(?!(?:for|of|in|on|at|to|with|from|about|and|or|is|are|was|says?|has)\b)[a-z])", text) is not None


def asks_contact(text: str) -> bool:
    """Whether `text` asks how to reach the business (sentences.asks_own_contact), not for advice of the
    model's own. Such a question scores low against a price list as a whole and against its "Phone: ...
    Email: ..." line (new-user pass: 0 of 6 searched)."""
    text = cue_text(text)
    return asks_own_contact(text) and not asks_general_request(text)


# A thing the question names as particular: "the pool", "my deposit", "our booking".
# A particular thing named: "the pool", "your sauna", "which room", "a good day"; not the person's own ("how do I wax my skis at home?",
# "how do I know if my piano needs tuning?": blind sets 51-52), whose dealings with the business
# ("my deposit", "my booking") are _BUSINESS_WORDS of routing; nor words quoted ("how do you say 'where
# is the ski lift' in German?").
_DEFINITE = re.compile(r"\b(?:the|your|which|a\s+good|some\s+good)\s+((?:[a-z][\w-]*\s+){0,2}[a-z][\w-]*)", re.IGNORECASE)
_QUOTED = re.compile(r"(?<!\w)(['\"‘“])[^'\"‘’“”\n]{1,200}['\"’”](?!\w)")
# Words naming nothing particular after "the".
_NOT_A_THING = frozenset(stems("best way most least first next same other whole average difference time paint "
                               "kids children weather"))


# A request to explain or sum up something of a business named: "Explain the allergen policy", "summarise your
# terms" (not "Describe the life cycle of the fur seal" over a passage that names fur seals, review).
# ("What should I tell customers about prices?", second new-user pass: no search)
_EXPLAIN = re.compile(r"\b(?:explain|describe|summari[sz]e|outline|go\s+through|tell\s+(?:[\w-]+\s+){1,2}(?:more\s+)?about"
                      r"|what\s+(?:should|do|can|could)\s+(?:i|we)\s+(?:tell|say\s+to)\s+[\w-]+\s+about)\b",
                      re.IGNORECASE)
_POLICY_STEMS = frozenset(stems("policy policies terms conditions rules prices menu services hours refunds cancellation "
                                "delivery allergens warranty guarantee booking deposit fees charges payment opening"))


def _names_a_found_thing(text: str, found: list[Source]) -> bool:
    """Whether `text` names a particular thing ("the pool", "your sauna") that a found passage names."""
    named = set()
    for m in _DEFINITE.finditer(_QUOTED.sub(" ", cue_text(text))):
        named |= stems(m.group(1))
    named -= _NOT_A_THING
    return bool(named) and any(named & stems(source.text) for source in found)


def make_relevant(retriever: Retriever) -> Callable[[str, str], bool]:
    """Whether a message needs the person's documents: it names them, or it is about a passage he
    may read (passages_about: the passage or one of its sentences similar enough), or a passage
    at least MEASURE_SIMILARITY cosine-similar is of a document the message names by its file's
    name (names_document) or holds a measure the message quotes (measures). A request for advice
    or writing of the model's own (routing.asks_general_request: "Give me 5 tips for cycling in a
    city" beside a bike hire's price list) needs them only when it names them, in words or as a
    found passage's document (refers_to_document: "tips for my first class at Clayhouse")."""

    def relevant(user_id: str, text: str) -> bool:
        if names_documents(text):
            return True
        found, about = passages_about(retriever, user_id, text)
        if asks_contact(text) and any(
                holds_contact(source.text)
                for source in found + retriever.search(user_id, cue_text(text), k=MAX_TOP_K, min_similarity=SEARCH_FLOOR)):
            # "What's your email address?" over "Phone: 01632 960 441. Email: hello@...", which need not
            # be among the passages most similar to it (blind set 65: a title line's passage, 0.1)
            return True
        if asks_for_creative_writing(text):
            return False  # "Write a two-line poem about tyres": its subject, not a question of the documents
        general = asks_general_request(text)
        if general and not asks_for_writing(text):
            # "why is the pool heated?" over "The pool is heated to 28 degrees": a thing of the passages
            general = not _names_a_found_thing(text, found)
        if general:
            return any(refers_to_document(text, source.document_name) for source in found)
        if about:
            return True
        policy = stems(text) & _POLICY_STEMS
        if _EXPLAIN.search(text) and policy and (_names_a_found_thing(text, found)
                                                  or any(policy & stems(source.text) for source in found)):
            # "Explain in detail the allergen policy and the cancellation policy, and why they matter" over "Allergens:
            # all products are made in a kitchen that handles nuts ..." (new-user pass: no search, an invented policy)
            return True
        found = [source for source in found if _similarity(source) >= MEASURE_SIMILARITY]
        if any(names_document(text, source.document_name) for source in found):
            return True  # "how many working days until lumen delivers the files?" over lumen_portrait_studio.txt
        quoted = measures(cue_text(text))
        return bool(quoted) and any(quoted & measures(source.text) for source in found)

    return relevant


def spec(retriever: Retriever) -> ToolSpec:
    return ToolSpec(
        name="search_documents",
        description="Search the user's documents (and documents shared with everyone) for passages "
                    "relevant to a query. Returns numbered passages with their passage ids.",
        parameters=PARAMETERS,
        permission="tools.search_documents",
        side_effect=False,
        run=make_run(retriever),
        relevant=make_relevant(retriever),
        planned_arguments=planned_arguments,
        answer_quote=lambda question, content: best_sentence(cue_text(question), content, retriever.embedder.embed),
    )
