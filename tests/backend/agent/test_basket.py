"""The total of a basket a question lists (backend.agent.tools.basket): each counted thing at the
price the documents give it, summed, as the first of the calculator's candidates."""

from __future__ import annotations

from fractions import Fraction

import pytest

from backend.agent.tools.basket import basket_expression, basket_items
from backend.agent.tools.calculator import evaluate
from backend.agent.tools.expressions import candidate_expressions

from .test_expressions import result

CLIMBING = ("Halden Climbing Centre\n\nA single adult day pass costs £13, a child pass (under 16) costs £8, and a "
            "ten-visit punch card costs £110. Shoe hire is £4 per session and chalk bags are sold for £9.")
BAKERY = ("Brindle Bakery\n\nA sourdough loaf weighs 800 grams and costs £4.60, a seeded rye costs £3.80, and "
          "croissants are £2.20 each or £11 for a box of six.")


@pytest.mark.parametrize("question, text, want", [
    # kids are the child pass, and shoe hire is for all five
    ("how much for 2 adults and 3 kids at halden climbing centre for the day, plus shoe hire for all five of us",
     CLIMBING, "2 * 13 + 3 * 8 + 5 * 4"),
    # loaves are loaves, and the box of six is one box (not six croissants at £2.20)
    ("I'm picking up 3 sourdough loaves, 2 seeded rye and one box of six croissants. What will that come to?",
     BAKERY, "3 * 4.60 + 2 * 3.80 + 11"),
])
def test_a_listed_basket_is_priced_thing_by_thing(question, text, want):
    _, body = text.split("\n\n", 1)
    assert basket_expression(question, [body]) == want
    assert candidate_expressions(question, [result(text)], None, evaluate)[0] == want


def test_what_is_no_basket():
    # one thing, a duration, a comparison, or no cost asked
    assert basket_items("How much would 4 people pay at $12 per person?") == []
    assert basket_items("a pitch for 3 nights for 2 adults") == []  # "3 nights" is how long
    # things with no count listed before the first counted one are in the basket (blind set 94, read: the heart and
    # the luge were left out), not a length of time or a thing the list does not join
    assert basket_items("a single block heart plus a martini luge, one LED base and a drip tray, total?") == [
        ("1?", "single block heart"), ("1?", "martini luge"), ("1", "LED base"), ("1?", "drip tray")]
    assert basket_items("I want a haircut and 2 beard trims") == [("1?", "haircut"), ("2", "beard trims")]
    assert basket_items("a week and 2 days") == []
    assert basket_items("a hot tub for a full week plus 2 extra nights please") == []
    assert basket_items("a day pass and 2 towels") == [("1?", "day pass"), ("2", "towels")]
    assert basket_items("a quote for 3 signs and a stake") == [("3", "signs"), ("1?", "stake")]
    assert basket_expression("renting for 2 weeks - how much do I save paying weekly vs 14 days daily?",
                             ["Bikes cost £18 per day or £75 per week."]) is None
    assert basket_expression("I have 2 dogs and 3 cats, what do I feed them?", ["Dog food is £3 and cat food £2."]) is None
    # a thing the documents give no price for: no basket
    assert basket_expression("how much for 2 adults and 3 parrots in total?", [CLIMBING]) is None


def test_a_basket_shared_by_a_group_is_divided_among_it():
    text = ("Velvet Lounge\n\nSmall rooms cost $32 per hour. A jug of lemonade costs $14 and a platter of dumplings "
            "is $22.")
    question = "6 of us want 2 jugs of lemonade and 2 dumpling platters. if we split it equally how much each"
    found = candidate_expressions(question, [result(text)], None, evaluate)
    assert found[:2] == ["(2 * 14 + 2 * 22) / 6", "2 * 14 + 2 * 22"]


def test_a_party_counted_in_parts_shares_among_all_of_it():
    text = "Hollin Observatory\n\nTickets cost $14 for adults and $7 for children."
    question = "2 adults and 3 kids are going, we're splitting the tickets equally, how much each?"
    assert candidate_expressions(question, [result(text)], None, evaluate)[0] == "(2 * 14 + 3 * 7) / 5"


def test_the_group_sharing_is_the_one_of_us():
    from backend.agent.party import people_sharing
    assert people_sharing("We're 6 of us, 2 adults and 4 kids, splitting it equally, how much each?") == ["6"]
    assert people_sharing("Our club has 40 members; 5 of us are splitting the lane hire, how much each?") == ["5"]
    assert people_sharing("2 adults and 2 kids are splitting it equally, how much each?") == ["4"]


def test_the_asker_counts_in_a_share_and_the_ways_said_win():
    # (the twenty-eighth session: "me and 3 friends" was 3 ways, "a 4 piece band" and "4 families" none)
    from backend.agent.party import people_sharing
    assert people_sharing("me and 3 friends are splitting the bill, how much each?") == ["4"]
    assert people_sharing("me + 2 mates want a court for 2 hours, how much each if we split it?") == ["3"]
    assert people_sharing("my 2 roommates and I want it done. if we split it, what does each of us pay?") == ["3"]
    assert people_sharing("my 2 roommates and I want 4 bushes done. If we split the bill 3 ways, what does each of us pay?") == ["3"]
    assert people_sharing("my 2 roommates and I want 4 bushes done. If we split the bill 2 ways, what does each of us pay?") == ["2"]
    assert people_sharing("We're a 4 piece band wanting Studio 2 for 3 hours, how much is that each?") == ["4"]
    assert people_sharing("4 families are splitting the castle. How much does each family pay?") == ["4"]
    assert people_sharing("me and 3 friends, $12 per person, what's the total?") == []  # no share asked


FLORIST = "Fernhollow\n\nA hand-tied bouquet costs £28, a single long-stem rose is £4.50, and a table centrepiece is £45."
RANGE_PRICES = ("Fairway Heights\n\nBalls are sold by the bucket: small (40 balls) $8, medium (80 balls) $14, large "
                "(120 balls) $19. Club hire is $5 per session.")
SAUNA = ("Birchwood Sauna\n\nA standard session lasts 2 hours and costs £16 per adult. Children aged 6 to 15 pay £9. "
         "Towel hire is £3.50 per towel.")
FABRIC = "Stitchwell\n\nFabric is sold by the metre, with wool suiting at €24 per metre and cotton lining at €7.50 per metre."


@pytest.mark.parametrize("question, text, want", [
    # a thing with no count after a counted one is one of it
    ("how much would 3 hand-tied bouquets and a table centrepiece cost me?", FLORIST, "3 * 28 + 45"),
    # the price whose own words name the thing ("large (120 balls) $19", not the sentence's "bucket" of $8)
    ("how much for 2 large buckets and club hire at fairway heights", RANGE_PRICES, "2 * 19 + 5"),
    # the grown-ups of a party named are adults; the kids' ages are no count
    ("how much for me, my wife and our 2 kids (ages 8 and 12) to do a session, plus 4 towels?", SAUNA,
     "2 * 16 + 2 * 9 + 4 * 3.50"),
    # metres of what: the thing is what they are of
    ("How much for 3.5 metres of wool suiting plus 2 metres of cotton lining?", FABRIC, "3.5 * 24 + 2 * 7.50"),
    # a thing with no count and no price is left out, not the basket
    ("how much for 3 hand-tied bouquets and a card?", FLORIST, None),  # one thing counted: no basket
    ("2 table centrepieces and 3 hand-tied bouquets and a ribbon, how much will that cost?", FLORIST, "2 * 45 + 3 * 28"),
])
def test_things_of_a_list_with_no_count(question, text, want):
    _, body = text.split("\n\n", 1)
    assert basket_expression(question, [body]) == want


@pytest.mark.parametrize("question, want", [
    # a thing counted "for all five" is not one more of it
    ("2 adults and 3 kids, plus shoe hire for all five, how much will it cost?", "2 * 6 + 3 * 4 + 5 * 1.50"),
    # grown-ups named beside counted adults are those adults
    ("My wife and I want 2 adult tickets and 1 child ticket, how much will it cost?", "2 * 6 + 4"),
    ("Remind me, 2 adults and 1 child, how much will it cost?", "2 * 6 + 4"),
])
def test_a_party_is_counted_once(question, want):
    body = "Adult tickets cost £6 and child tickets £4. Shoe hire is £1.50 per person."
    assert basket_expression(question, [body]) == want


def test_a_price_per_unit_is_named_by_the_words_before_it():
    body = "Wool suiting is €24 per metre, cotton lining €7.50 per metre."
    assert basket_expression("2 metres of cotton lining and 1 metre of wool suiting, how much will it cost?",
                             [body]) == "2 * 7.50 + 24"


def test_a_count_sold_together_is_that_bundle_and_a_size_code_names_a_price():
    shop = ("Posters: A2 €12 each, A1 €18 each. Business cards: 250 cards for €29, 500 cards for €45, 1,000 cards "
            "for €78.")
    # "1000 business cards" are the bundle of 1,000 (not 1000 at the 250-card price); "A1" names €18, not A2's €12
    assert basket_expression("how much for 1000 business cards and 6 A1 posters?", [shop]) == "78 + 6 * 18"
    # a count word before a size code is a count ("six 8x10 prints")
    prints = result("Lumen Studio\n\nPrints: 5x7 inch $8, 8x10 inch $18, 16x20 inch $55.")
    assert evaluate(candidate_expressions("how much for six 8x10 prints?", [prints], None, evaluate)[0]).q == 108


@pytest.mark.parametrize("question, want", [
    # the party counted: "me and my 3 mates" are 4, "my son and 5 of his friends" 6 (charged for the minimum of 8)
    ("me and my 3 mates are going to the range, what will bow hire for one session cost us altogether", "28"),
    ("birthday party for my son and 5 of his friends, what's it going to cost", "88"),
    ("birthday party for my son and 9 of his friends, what's it going to cost", "110"),
])
def test_a_party_is_counted_and_a_minimum_charged(question, want):
    document = ("Range\n\nBow hire: £7 per person per session. Birthday parties: £11 per child, minimum charge for 8 "
                "children.")
    assert evaluate(candidate_expressions(question, [result(document)], None, evaluate)[0]).q == int(want)


def test_a_basket_is_priced_from_the_document_the_question_names():
    golf = "Putt Park\n\nAdults €9.50, children €7."
    studio = "Lumen Studio\n\nStandard session $220. Adults $15 extra each, children $10 extra each."
    first = candidate_expressions("how much will 2 adults and 2 kids cost at lumen?", [result(golf, studio)], None,
                                  evaluate)[0]
    assert evaluate(first).q == 50  # Lumen's, not Putt Park's 2 * 9.50 + 2 * 7


def test_a_thing_for_each_is_counted_as_many():
    creperie = "Creperie\n\nGalettes: ham and cheese €9.40, complete €10.90. Takeaway boxes: €0.50 per box."
    first = candidate_expressions("4 complete galettes to take away, each in its own box. total?", [result(creperie)],
                                  None, evaluate)[0]
    assert first == "4 * 10.90 + 4 * 0.50"


@pytest.mark.parametrize("question, want", [
    ("party of 10 at the creperie, everyone is having a ham and cheese galette - what's the bill", "103.4"),
    ("party of 6 at the creperie, everyone is having a ham and cheese galette - what's the bill", "56.4"),
])
def test_a_group_adjustment_of_the_named_document_only(question, want):
    creperie = ("Creperie Soleil\n\nGalettes: ham and cheese €9.40. Groups of 10 or more: 10% service charge added to "
                "the bill.")
    archery = "Archery Range\n\nTaster €18. Groups of 8 or more get 15% off taster sessions."
    first = candidate_expressions(question, [result(archery, creperie)], None, evaluate)[0]
    assert evaluate(first).q == Fraction(want)


def test_review_counts():
    # a thing "each with" that is the counted thing's own is no other thing bought
    mugs = "Mugs\n\nPhoto mugs cost £12 each."
    assert evaluate(candidate_expressions("6 photo mugs, each with a different photo - how much?", [result(mugs)],
                                          None, evaluate)[0]).q == 72
    # the priced thing counted, not the party
    scoops = "Gelato\n\nScoops are £2 each."
    assert evaluate(candidate_expressions("me and my 2 kids want 5 scoops, how much?", [result(scoops)], None,
                                          evaluate)[0]).q == 10
    # a per-thing surcharge over every count of it; per person over the party
    posters = "Print\n\nA1 posters £18 each, A2 posters £12 each. Lamination adds £4 per poster."
    assert evaluate(candidate_expressions("6 A1 posters and 4 A2 posters, all laminated - how much?",
                                          [result(posters)], None, evaluate)[0]).q == 196
    paddle = "Kayaks\n\nA paddle costs £25 per person. Evening surcharge: £5 per person on Friday paddles."
    assert evaluate(candidate_expressions("me and my 3 mates on a friday paddle, how much altogether?",
                                          [result(paddle)], None, evaluate)[0]).q == 120


def test_review_of_the_twenty_eighth_session_shares():
    from backend.agent.party import people_sharing, sharing_counts
    # "N of us" wins over a band's size; a business's crew is no party
    assert people_sharing("I'm in a 4 piece band but only 2 of us are paying for Studio 2, how much each?") == ["2"]
    assert people_sharing("you sent your 3 man crew, my flatmate and I are splitting it, how much each?") == []
    # the operations read the same share ("me and 3 friends": 4 ways)
    assert [n for _, n in sharing_counts("me and 3 friends are splitting a massage package, how much each?")] == ["4"]



def test_a_bill_split_50_50_is_shared_two_ways():
    # Blind set 86 (read after its runs): "If we split it 50/50, how much does each of us pay?" read 50 as a count
    # ("260.00 * 50 + ...": $13,510 each).
    from backend.agent.party import people_sharing
    assert people_sharing("If we split it 50/50, how much does each of us pay?") == ["2"]
    assert people_sharing("my sister and I will split the cost fifty-fifty, how much each?") == ["2"]
    found = candidate_expressions("a side door glass, if we split it 50/50, how much does each of us pay?",
                                  [result("AUTO GLASS\nSide door glass: $260.00\nQuarter glass: $220.00\n")], None, evaluate)
    assert found and all("50" not in e for e in found) and evaluate(found[0]).q == 130
