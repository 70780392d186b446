"""A customer's short questions put to the business whose documents the person uploaded ("are you
open on mondays", "is there parking?", "whats your phone number?", "is there a fee if i pay with
credit card?", "where is the shop?"): they search the documents and quote the sentence that
answers them (blind sets 63-70, read in the twenty-fourth session). Each assertion failed on the
code before it."""

from __future__ import annotations

from types import SimpleNamespace

import pytest

from backend.agent.routing import addresses_business
from backend.agent.tools import search_documents
from backend.agent.tools.conditions import hours_days
from backend.agent.tools.sentences import best_sentence, states_answer_kind

from .test_expressions import result

STITCHWELL = ("STITCHWELL SEWING MACHINE REPAIR\nHours: Tue-Fri 9:30 am-5:30 pm, Sat 10 am-2 pm.\nClosed Sun & Mon.\n"
              "Call us: (717) 555-0148\n\nQ: How can I pay? A: Cash, check, debit or credit card.\n"
              "Credit cards carry a 3% surcharge on the final amount (tax included).\n"
              "CLASSES \"Know Your Machine\" (2 hours, Saturdays): $45 per person\n")
ESCAPE = "RIDDLE LANE ESCAPE ROOMS\nMon-Thu 12:00 - 21:00, Fri-Sat 10:00 - 23:00.\n"
HARTWELL = ("HARTWELL TAILORING\nOffers, Opening Hours & Contact\n\nFIND US\n14 Market Row, Shrewsbury SY1 1LH\n\n"
            "Can you deliver? Local delivery within 5 miles of the shop: £6.00 flat fee per order.\n")


def quote(question: str, *texts: str) -> str:
    return best_sentence(question, result(*texts), None)[1]


def test_short_day_names_closed_or_listed_name_their_days():
    assert hours_days("Closed Sun & Mon.") == {6, 0}
    assert hours_days("Closed Sun, Mon & public holidays") == {6, 0}
    assert hours_days("closed Mon") == {0} and hours_days("Sat, Sun and bank holidays: 10-4") == {5, 6}
    # words, not days
    assert hours_days("We sat and talked") == frozenset() and hours_days("The sun and moon") == frozenset()


def test_an_opening_question_quotes_the_hours_of_the_day_it_names():
    assert quote("are you guys open on mondays", STITCHWELL) == "Closed Sun & Mon."
    # a day named without a clock or "closed" is no answer
    assert quote("what are your saturday hours", STITCHWELL).startswith("Hours: Tue-Fri")
    assert not states_answer_kind("are you open on saturdays?", 'CLASSES "Know Your Machine" (2 hours, Saturdays): $45')
    # the business's own hours before another's that names the day
    assert quote("Is the sewing machine shop open on Mondays?", STITCHWELL, ESCAPE) == "Closed Sun & Mon."


def test_a_phone_number_sharing_no_word_with_the_question_is_quoted():
    assert quote("whats your phone number?", STITCHWELL) == "Call us: (717) 555-0148"


def test_whether_something_costs_extra_is_answered_by_an_amount_or_by_free():
    assert quote("is there a fee if i pay with credit card?", STITCHWELL).startswith("Credit cards carry a 3% surcharge")
    assert states_answer_kind("Is there a fee if I cancel?", "Cancel anytime online, with no cancellation fee.")
    assert not states_answer_kind("is there a fee if i pay by card?", "Q: How can I pay? A: Cash, check or card.")


def test_where_the_business_is_is_its_street_address():
    assert quote("where is the shop?", HARTWELL) == "FIND US 14 Market Row, Shrewsbury SY1 1LH"
    assert states_answer_kind("what's the address of Suds & Press?", "SUDS & PRESS 1420 Maple Ave, Unit 3")
    assert not states_answer_kind("what's the address of Suds & Press?", "Wash & fold: $1.75 per lb")


def test_british_and_american_spellings_are_one_word():
    assert quote("do you take cheques?", "We accept cash and all major cards. We do not accept personal checks. "
                 "Orders over $100 need a 50% deposit.") == "We do not accept personal checks."


def test_a_question_put_to_the_business_is_told_from_one_of_general_knowledge():
    for text in ("is there parking?", "can I bring my dog along?", "what payment methods do you take?",
                 "are you guys open on mondays"):
        assert addresses_business(text), text
    for text in ("which do you think is better as a first pet, a cat or a dog?", "who invented the sewing machine?",
                 "Give me 3 tips for keeping my dog calm", "what's the capital of Idaho?",
                 # (review: a generic "you", a question of one's own, not a customer's)
                 "what happens if you drink too much coffee?", "can I drink coffee while pregnant?"):
        assert not addresses_business(text), text


@pytest.fixture(scope="module")
def real_embedder():
    from backend.rag import SentenceTransformerEmbedder

    return SentenceTransformerEmbedder()


class Passages:
    """Retriever.search over fixed passages, each at its own similarity."""

    def __init__(self, embedder, *passages: tuple[str, float]) -> None:
        self.embedder, self.passages = embedder, passages

    def search(self, user_id, query, *, k=None, mode="hybrid", min_similarity=None, document_ids=None):
        hits = [SimpleNamespace(similarity=s, score=s, text=t, document_name=f"doc{i}.txt", version=1, heading_path="",
                                page=None, chunk_id=i, document_id=f"{i:032x}", position=0)
                for i, (t, s) in enumerate(self.passages) if s >= (min_similarity or 0)]
        return hits[:k]


VISITOR = ("VISITOR INFORMATION\nClosed Mondays (except bank holidays).\nThere is free parking for 30 cars.\n"
           "Sorry, no dogs on site (except assistance dogs) as they can stress the birds.\n")


def test_a_short_question_put_to_the_business_searches_its_documents(real_embedder):
    relevant = search_documents.spec(Passages(real_embedder, (VISITOR, 0.3))).relevant
    for text in ("is there parking?", "can I bring my dog along?", "are you open on mondays?"):
        assert relevant("ann", text), text
    for text in ("which do you think is better as a first pet, a cat or a dog?", "What time is it in Tokyo?",
                 "Are dogs colour-blind?"):
        assert not relevant("ann", text), text


def test_a_contact_asked_finds_the_passage_that_holds_it_wherever_it_ranks(real_embedder):
    prices = ("PRICE LIST\nTrousers: shorten hem £12.00\nTake in body: £17.00\n", 0.3)
    header = ("HARTWELL TAILORING\nTel: 01632 960418\nEmail: hello@hartwelltailoring.co.uk\n", 0.08)
    retriever = Passages(real_embedder, prices, prices, prices, prices, header)
    spec = search_documents.spec(retriever)
    assert spec.relevant("ann", "What's your email address?")
    context = SimpleNamespace(user_id="ann")
    found = spec.run(context, {"query": "What's your email address?", "top_k": 4})
    assert "hello@hartwelltailoring.co.uk" in found.content
    assert "hello@" not in spec.run(context, {"query": "How much to shorten trousers?", "top_k": 4}).content


RATES = ("ROOM RATES\nRoom A: $25/hour.\n\nCANCELLATIONS\nCancel more than 48 hours before your session: no charge.\n"
         "Within 48 hours: 50% of the booking fee.\nNo-shows are charged 100%.\n\nOpen 10am-midnight, 7 days.")


def test_a_question_about_a_policy_quotes_its_whole_section():
    from backend.agent.answer import asks_section, quoted_answer
    from backend.generator import ChatMessage, ToolCall

    tools = {"search_documents": SimpleNamespace(answer_quote=lambda q, c: best_sentence(q, c, None))}

    def answer(question: str, content: str) -> str:
        call = ToolCall("c1", "search_documents", "{}")
        return quoted_answer(tools, [ChatMessage("user", question), ChatMessage("assistant", "", tool_calls=(call,)),
                                     ChatMessage("tool", content, tool_call_id="c1", name="search_documents")])

    rules = ("CANCELLATIONS Cancel more than 48 hours before your session: no charge. Within 48 hours: 50% of the "
             "booking fee. No-shows are charged 100%. [1]")
    assert answer("What is your cancellation policy?", result(RATES)) == rules
    assert answer("do you have a cancellation policy?", result(RATES)) == rules
    # a heading alone on its block takes the block after it
    assert answer("What is your cancellation policy?", result(RATES.replace("CANCELLATIONS\n", "CANCELLATIONS\n\n"))) == rules
    # a fact asked quotes its sentence alone; an amount asked is no summary
    assert answer("Do no-shows get charged?", result(RATES)) == "No-shows are charged 100%. [1]"
    assert asks_section("what's included in the full groom?") and asks_section("how does the loyalty card work?")
    assert not asks_section("what time do you close?")


def test_review_of_the_twenty_fourth_session():
    # another's contact asked is not the business's own
    assert best_sentence("what's the phone number for the police?", result("TAILOR\nTel: 01632 960418\n"), None) is None
    cottage = ("GUEST GUIDE\nAddress: 12 Harbour Road, Whitby YO21 3PU.\n"
               "The fire extinguisher is in the kitchen under the sink.\n")
    assert quote("where is the fire extinguisher located?", cottage) == (
        "The fire extinguisher is in the kitchen under the sink.")
    assert not states_answer_kind("whats your website address", "Address: 12 Harbour Road, Whitby YO21 3PU.") or (
        states_answer_kind("whats your website address", "Web: www.example.com"))
    # "open to the public" asks no hours
    assert quote("is the gym open to the public?", "GYM\nHours: 6am-10pm daily.\nThe gym is open to members only.\n") == (
        "The gym is open to members only.")


def test_review_a_section_is_no_answer_to_a_task_and_no_whole_passage():
    from backend.agent.answer import asks_section
    from backend.agent.tools.sentences import MAX_SECTION_CHARS, section_of

    for text in ("Write a polite email to a customer explaining our cancellation policy",
                 "Translate the cancellation policy into Spanish", "Why is your cancellation policy so strict?"):
        assert not asks_section(text), text
    long = "\n".join(f"Item {i}: £{i}.00" for i in range(60))
    assert len(long) > MAX_SECTION_CHARS and section_of(long, "Item 3: £3.00", "x") == "Item 3: £3.00"


def test_review_calculations():
    from backend.agent.tools.arithmetic import evaluate
    from backend.agent.tools.expressions import candidate_expressions
    from backend.agent.tools.fact_expressions import operands_of
    from backend.agent.tools.multibuy import multibuy_expression
    from backend.agent.tools.taxes import claimed_tax

    # a count asked reads the pack's size
    assert "5" in operands_of("Universal needles, 5-pack: $4.50", "how many needles do I get in 8 packs?")
    # a tax the prices include is not added again
    assert claimed_tax("3 mowing visits with HST", ["13% HST applies to all services and is included in the prices above."]) is None
    assert claimed_tax("a service including VAT", ["All prices include 20% VAT on labour and parts."]) is None
    # the offer's thing priced by the question's words; a day's offer on its day only
    shirts = ["Kids t-shirt: £8", "Adult t-shirt: £12", "T-shirts: buy 2, get 1 free"]
    assert evaluate(multibuy_expression("how much for 3 adult t-shirts?", shirts)).q == 24
    tickets = ["Cinema ticket: £9.50", "Tuesdays only: cinema tickets 2 for the price of 1"]
    assert multibuy_expression("4 cinema tickets on friday?", tickets) is None
    assert evaluate(multibuy_expression("4 cinema tickets on tuesday?", tickets)).q == 19
    shop = result("Universal needles, 5-pack: $4.50\nUniversal needle 5-packs: buy 3, get the 4th free.")
    found = candidate_expressions("how much would 8 packs of universal needles be without the offer?", [shop], None, evaluate)
    assert found and evaluate(found[0]).q == 36


@pytest.mark.parametrize("question, opening", [
    ("are you open on mondays", True), ("is u open sunday?", True), ("what time do you close on Saturday?", True),
    ("is the library closed on mondays?", True), ("your opening hours please", True),
    ("is the gym open to the public?", False), ("how many hours does the course take?", False),
])
def test_an_opening_question_is_read_in_one_place(question: str, opening: bool) -> None:
    # the search's routing and the quote's kind read the same pattern (they had drifted: "u", "closed", "open to")
    from backend.agent.tools.sentences import asks_opening
    assert asks_opening(question) is opening


@pytest.mark.parametrize("question, own", [
    ("whats your phone number?", True), ("what is the phone number to book?", True), ("email?", True),
    ("whats the phone number for bookings", True), ("how can I reach you?", True), ("where are you based?", True),
    ("what's the phone number for the police?", False), ("the email address of the council?", False),
    ("who do I call if my pipe bursts?", False),
    # (blind sets 99-100, read: a social handle, a postcode, whom to contact, what email to book with)
    ("What's your Instagram handle?", True), ("What's the Eircode for the studio?", True),
    ("Who should I contact if I have a complaint?", True), ("What email address do I use to book?", True),
    ("who should I vote for?", False),
    # (blind set 102, read: where to send a booking; not a CV to another company)
    ("What email address do I send my booking to?", True), ("What email do I send my CV to for the job at Google?", False),
])
def test_the_business_own_contact_is_read_in_one_place(question: str, own: bool) -> None:
    # routing (search_documents.asks_contact) and the quote (sentences) agree: another's contact is no own one
    from backend.agent.tools.sentences import asks_own_contact
    assert asks_own_contact(question) is own
    assert search_documents.asks_contact(question) is own


def test_a_contact_held_and_days_taken_out() -> None:
    from backend.agent.tools.conditions import without_days
    from backend.agent.tools.sentences import holds_contact
    assert [holds_contact(t) for t in ("Call 613-555-0184", "Prices 2024-2025", "pay@rollingwrench.ca",
                                       "14 Market Row, Shrewsbury", "Brake pads (pair) CA$24")] == [True, False, True, True, False]
    assert without_days("is the library closed on mondays or Sat?").split() == ["is", "the", "library", "closed", "on", "or", "?"]


class CountingPassages(Passages):
    """Passages that record the k each search asked for."""

    def __init__(self, embedder, *passages: tuple[str, float]) -> None:
        super().__init__(embedder, *passages)
        self.ks: list[int | None] = []

    def search(self, user_id, query, *, k=None, mode="hybrid", min_similarity=None, document_ids=None):
        self.ks.append(k)
        return super().search(user_id, query, k=k, mode=mode, min_similarity=min_similarity, document_ids=document_ids)


def test_an_amount_asked_reads_the_business_s_terms_too(real_embedder):
    # a bill's parts lie apart (the price in a list, the tax in an FAQ): an amount asked reads MAX_TOP_K passages,
    # and the calculator's cue the other passages found besides the ones it is about (simple sets 65-72)
    from datetime import datetime, timezone

    from backend.agent.tools import ToolContext, calculator
    menu = ("PARTS & SUPPLIES (taxable)\nUniversal foot control: $38.00\nDrive belt: $14.00\n", 0.6)
    faq = ("FAQ\nQ: Do you charge sales tax?\nA: Yes - 6% state sales tax on parts and supplies.\n", 0.15)
    other = [(f"NOTES {i}\nOpening hours: Tue-Fri 9:30 am-5:30 pm.\n", 0.12) for i in range(4)]
    retriever = CountingPassages(real_embedder, menu, *other, faq)
    run = search_documents.spec(retriever).run
    context = ToolContext("ann", "c", "r", "k", datetime.now(timezone.utc))
    result = run(context, {"query": "how much is a universal foot control with tax?"})
    assert retriever.ks[-1] == search_documents.MAX_TOP_K and "6% state sales tax" in result.content
    run(context, {"query": "what are your opening hours?"})
    assert retriever.ks[-1] == search_documents.DEFAULT_TOP_K
    passages = search_documents.make_passages(retriever)
    assert any("sales tax" in text for _, text in passages("ann", "how much is a universal foot control with tax?"))
    assert calculator.spec(real_embedder.embed, passages).relevant("ann", "how much is a universal foot control with tax?")
