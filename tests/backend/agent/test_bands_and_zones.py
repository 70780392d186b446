"""Rows chosen by the customer's count or place: a price per job by bands of a count ("9 - 16
windows: £32"), the add-ons named after "plus", a delivery zone by the places it lists or by its
distance band (the twenty-sixth session: blind sets 73 and 75 read after their runs). Each
assertion failed on the code before it."""

from __future__ import annotations

from fractions import Fraction

from backend.agent.tools.bands import held_counts, inside_band, outside_band
from backend.agent.tools.mentions import named_extras
from backend.agent.tools.segmentation import text_sentences
from backend.agent.tools.visits import zone_charge

from .test_expressions import first

WINDOWS = ("CLEARVIEW WINDOW CLEANING\nAll prices exclude VAT. VAT at 20% is added to every invoice.\n\n"
           "HOUSES (outside, per visit)\n------------------------------\nNumber of windows    Price (ex VAT)\n"
           "1 - 8 windows        £20\n9 - 16 windows       £32\n17 - 24 windows      £44\n"
           "25+ windows          £44 + £1.50 per window over 24\n------------------------------\n\n"
           "EXTRAS\n* Conservatory roof (glass only, no moss): £45\n* Frames and sills wipe: £1 per window\n"
           "* Solar panels (with a house clean): £4 per panel\n")
DELIVERY = ("LOGSTORE FUEL - DELIVERY\n\nDELIVERY ZONES (per load, excl. VAT)\n"
            "  Zone 1 - Kelso town, within 5 miles: no charge\n"
            "  Zone 2 - 5 to 15 miles: Jedburgh, Coldstream, Melrose: £20.00 per load\n"
            "  Zone 3 - 15 to 30 miles: Hawick, Galashiels, Peebles: £35.00 per load\n\n"
            "Seasoned ash: £110.00 per load\n")


def test_a_band_of_a_count_holds_the_count_the_question_gives():
    assert not outside_band("12 windows please", "9 - 16 windows: Price (ex VAT) £32.")
    assert inside_band("12 windows please", "9 - 16 windows: Price (ex VAT) £32.")
    assert outside_band("12 windows please", "17 - 24 windows: Price (ex VAT) £44.")
    assert outside_band("5 windows please", "9 - 16 windows: Price (ex VAT) £32.")
    # (a range from one is what a price includes, not a band the count is outside: review)
    assert not outside_band("a starter website with 7 pages", "Starter website (1 - 5 pages): $800")
    assert outside_band("12 windows please", "25+ windows £44 + £1.50 per window over 24")
    assert inside_band("30 windows please", "25+ windows £44 + £1.50 per window over 24")
    # (not an allowance: "Walnut plaque (includes up to 6 lines)" is a plaque of 8 lines too)
    assert not outside_band("3 plaques with 8 lines each", "Walnut plaque, 8 x 10 in (includes up to 6 lines) ... $29.00")
    # a noun the band does not count says nothing of it
    assert not outside_band("12 doors please", "1 - 8 windows: £20")


def test_the_row_of_the_count_s_band_is_the_job_s_price_alone():
    # "12 windows" picks "9 - 16 windows: £32" (not 12 times a price per window, nor every row added)
    assert first("how much to clean 12 windows on my house?", WINDOWS) == 32
    assert first("22 windows, price before vat?", WINDOWS) == 44
    assert first("we've got 5 windows, total incl VAT?", WINDOWS) == Fraction(20 * 120, 100)


def test_an_extra_after_plus_is_named_without_its_aside_and_a_tax_word_names_none():
    sentences = [s for _, s in text_sentences(WINDOWS)]
    # "Conservatory roof (glass only, no moss): £45" is a conservatory roof; "Price (ex VAT) £20" no extra of "incl vat"
    question = "10 windows plus the conservatory roof. total incl vat?"
    assert named_extras(question, sentences, "32") == ["45"]
    assert first(question, WINDOWS) == Fraction((32 + 45) * 120, 100)
    # two of its words after "plus" and the rest said before: "solar panels" over "Solar panels (with a house clean)"
    assert named_extras("house with 10 windows, plus 6 solar panels. how much?", sentences, "32") == ["4 * 6"]


def test_a_delivery_zone_by_the_places_it_lists_or_its_distance():
    sentences = [s for _, s in text_sentences(DELIVERY)]
    assert zone_charge("2 loads of ash delivered to coldstream please", sentences) == "20.00"
    assert zone_charge("a load of ash to Hawick, how much?", sentences) == "35.00"
    assert zone_charge("we're about 10 miles out, a load of ash?", sentences) == "20.00"
    assert zone_charge("a load of ash to kelso town", sentences) is None  # its zone pays nothing
    assert zone_charge("a load of ash to Edinburgh", sentences) is None
    assert first("one load of seasoned ash delivered to Melrose, how much?", DELIVERY) == Fraction(130)
    # several zones in one sentence are read one at a time
    line = ["CALL-OUT AREAS Zone A - city centre no charge Zone B - up to 25 km outside €15 travel "
            "Zone C - 25 to 50 km outside €30 travel"]
    assert zone_charge("we're 30 km outside the city", line) == "30"
    assert zone_charge("we're 10 km outside the city", line) == "15"
    # a zone that pays nothing, written without a price; a distance in other words of the same unit
    free = ["Zone 1 - up to 5 kilometres: free", "Zone 2 - 5 to 20 kilometres: €25 delivery"]
    assert zone_charge("we're 3 km away", free) is None and zone_charge("we're 12 km away", free) == "25"


def test_what_a_count_band_does_not_read():
    # a period ("3 hours") and a party ("10 adults") are no counts of a band; nor "120 square metres"
    notice = "Cancel 24 to 72 hours before for 50% back; under 24 hours: no refund."
    assert not inside_band("a boat for 3 hours this saturday", notice)
    assert not outside_band("bike hire for 2 hours", "for rides over 2 hours helmet hire is £3")
    assert not inside_band("10 adults in the private room", "The room seats up to 14 people: £45 per hour")
    assert not held_counts("scarifying a 120 square metre lawn", "Lawns up to 200 square metres: £60")
    # (it is an area, a measure: the band holds 120 square metres and not 250)
    assert inside_band("scarifying a 120 square metre lawn", "Lawns up to 200 square metres: £60")
    assert outside_band("scarifying a 250 m² lawn", "Lawns up to 200 square metres: £60")
    # a range of hours is a band: "about 36 hours from now" over "24 to 48 hours' notice: A$40 fee"
    fees = "CANCELLATIONS\n- More than 48 hours' notice: free.\n- 24 to 48 hours' notice: A$40 fee.\n"
    assert first("I need to cancel, it's booked for about 36 hours from now. What's the fee?", fees) == 40


def test_a_row_s_second_price_is_outside_its_band_only_when_joined_to_the_first():
    # "41+ panels A$240 + A$5.50 per panel over 40": the A$5.50 is the 41+ row's; "Small (under 20 lb) £55,
    # Medium (20-50 lb) £70" keeps the medium price for a 35 lb dog
    assert first("12 windows, how much?", WINDOWS) == 32
    groom = "Full groom: Small (under 20 lb) £55, Medium (20-50 lb) £70, Large (over 50 lb) £90.\nNail trim: £12\n"
    assert first("my dog is 35 lb, how much for a full groom plus a nail trim?", groom) == 70 + 12


def test_a_date_bound_is_met_by_the_date_asked_and_a_booking_bound_by_the_booking_date():
    from backend.agent.tools.conditions import applies, date_bound_met

    early = "Installs scheduled before November 1: $100 surcharge."
    assert applies(early, "how much for 75 ft of roofline? install mid november") is False
    assert applies(early, "install in late November, total?") is False
    assert applies(early, "Can you install on October 28? 80 ft roofline") is True
    assert applies(early, "how much for 75 ft of roofline?") is False  # a deadline is not met by no date
    bird = "Early bird (book by September 30): 10% off"
    assert date_bound_met(bird, "I booked on 2 September for a mid-November install") is True
    assert date_bound_met(bird, "booking now in October for a mid-November install") is False
    assert date_bound_met("Members get 10% off all hire from the 1st of May.", "a kayak for 3 days?") is None
    prices = "LIGHTS\nSingle-story roofline: $6.50 per linear ft\nEARLY INSTALL\n- Installs scheduled before November 1: $100 surcharge.\n"
    assert first("how much for 75 ft of single story roofline? install mid november", prices) == Fraction(975, 2)
    assert first("how much for 75 ft of single story roofline? install on october 20", prices) == Fraction(975, 2) + 100


def test_an_offer_within_a_window_of_dates_needs_a_date_inside_it():
    # blind set 90, read after its runs: "Between 1 November and 28 February all annual services are 15% off" took
    # 15% off a service with no date named, and one in May
    from backend.agent.tools.conditions import date_bound_met

    winter = "Winter Service Offer Between 1 November and 28 February all annual services are 15% off."
    assert date_bound_met(winter, "how much is a ride-on annual service?") is False
    assert date_bound_met(winter, "a ride-on annual service in May?") is False
    assert date_bound_met(winter, "a ride-on annual service in December?") is True
    assert date_bound_met(winter, "a ride-on annual service on 3 January?") is True
    assert date_bound_met(winter, "on 1 March?") is False
    summer = "Summer rate from 1 June to 31 August: 10% off."
    assert (date_bound_met(summer, "in July?"), date_bound_met(summer, "in September?")) == (True, False)
    prices = ("ANNUAL SERVICES\n  Ride-on mower / lawn tractor ....... £165.00\n\nWinter Service Offer\n"
              "Between 1 November and 28 February all annual services are 15% off.\n")
    assert first("2 ride-on mower annual services?", prices) == 330
    assert first("2 ride-on mower annual services in December?", prices) == Fraction(330 * 85, 100)


def test_a_thing_named_by_all_its_words_before_one_with_more():
    wood = "SOFTWOOD\nPine/macrocarpa mix: $105.00 per m3\nPine: $95.00 per m3\n"
    assert first("2 m3 of pine, how much?", wood) == 190
    assert first("2 m3 of the pine/macrocarpa mix, how much?", wood) == 210


def test_a_label_the_question_says_all_of_before_a_price_per_its_unit():
    # simple set 65: "replace the fly zip on 2 pairs of trousers" was 8.00 * 2, the line priced "per pair" first
    tailor = ("TROUSERS & JEANS\nShorten hem (plain): £12.00\nReplace fly zip: £19.50\n\nOFFERS\n"
              "* Back-to-school: school trouser hemming £8.00 per pair, throughout August.\n")
    assert first("how much to replace the fly zip on 2 pairs of trousers?", tailor) == 39
    assert first("how much to hem 2 pairs of school trousers?", tailor) == 16  # (its label: not all said, per pair)
    # (not over a deal whose least count the question reaches: blind set 66, "all 4 lock cylinders rekeyed")
    locks = ("LABOR\nRekey lock cylinder (per cylinder): $25.00\n\nOFFERS\n* Rekey special: rekey 3 or more cylinders in "
             "one visit and pay $20.00 per cylinder instead of $25.00.\n")
    assert first("want all 4 lock cylinders rekeyed. What's the price?", locks) == 80


def test_a_band_the_count_is_outside_picks_no_row():
    # "1-2 bed / flat: ... One-off $45" is no row of "a 4 bed detached": its "4" is no size picking that row
    from backend.agent.tools.bands import banded_measures, states_bands

    question = "how much to service 4 bikes?"
    assert banded_measures(question, "5-9 bikes: $40 each") == set()
    assert banded_measures(question, "3-4 bikes: $150") == {"4"}
    assert states_bands(question, "5-9 bikes: $40 each")  # (a row of the table: no extra)
    # (priced per one, the count multiplies: "Fleet wash 5 to 10 cars: $20 per car" for 8 cars, review)
    assert banded_measures("fleet wash for 8 cars, how much?", "Fleet wash 5 to 10 cars: $20 per car") == set()
    assert first("fleet wash for 8 cars, how much?",
                 "SUDSY CAR WASH\nExterior wash: $25 per car\nFleet wash 5 to 10 cars: $20 per car\n") == 160
    # (a number naming one thing counts nothing: "size 10 shoes", "a 3 seater sofa", review)
    assert banded_measures("resole a pair of size 10 shoes", "Resole (sizes 9 - 13 shoes): $55 per pair") == set()
    from backend.agent.tools.bands import volume_discount
    assert volume_discount("clean a 3 seater sofa, how much?", ["3+ items: 10% off"]) is None
    assert volume_discount("clean 3 armchairs, how much?", ["3+ items: 10% off"])[0] == "10"


AWARDS = ("CUP & PLATE ENGRAVERS - PRICES\nAll prices in US$. 7% sales tax is added to every order.\n\n"
          "AWARDS\n  Crystal star ........................ $40.00\n  Pewter mug .......................... $22.00\n\n"
          "VOLUME DISCOUNT\n  10 to 19 items ... 5% off    20 to 39 items ... 10% off    40+ items ... 20% off\n\n"
          "EXPRESS SERVICE (ready next day): add 30% of the order subtotal (after any discount, before tax and "
          "shipping).\n")


def test_a_volume_discount_by_bands_of_items_and_a_tax_word_claims_no_surcharge():
    from backend.agent.tools.bands import volume_discount
    from backend.agent.tools.discounts import claimed_surcharges

    sentences = [s for _, s in text_sentences(AWARDS)]
    assert volume_discount("12 pewter mugs please", sentences)[0] == "5"
    assert volume_discount("45 pewter mugs please", sentences)[0] == "20"
    assert volume_discount("5 pewter mugs please", sentences) is None
    # "(after any discount, before tax and shipping)" is no claim of "total with tax?"
    assert claimed_surcharges("12 pewter mugs, total with tax?", sentences) == []
    assert first("12 pewter mugs, total with tax?", AWARDS) == Fraction(22 * 12 * 95 * 107, 100 * 100)
    assert first("how much for 20 pewter mugs? include tax", AWARDS) == Fraction(22 * 20 * 90 * 107, 100 * 100)


def test_a_heading_that_alone_names_the_question_s_kind_of_thing_picks_its_lines():
    # "a farm shed with 150 panels" is priced under "COMMERCIAL & FARM SYSTEMS", not by the houses' "41+ panels" row
    prices = ("RESIDENTIAL CLEANING (per visit)\nNumber of panels     Price\n1 - 20 panels        $150\n"
              "21 - 40 panels       $190\n41+ panels           $190 + $4 per panel over 40\n\n"
              "COMMERCIAL & FARM SYSTEMS\n* $3.50 per panel, minimum charge $300 per visit\n")
    assert first("we've got a farm shed with 120 panels. how much?", prices) == Fraction(420)
    assert first("house with 12 panels, how much?", prices) == 150


def test_review_of_the_twenty_sixth_session():
    # a reviewer's reproductions on the first version (old code right, new wrong), each mended
    garden = ("GREENTHUMB GARDENING\nGARDEN MAINTENANCE\nLawn mowing: $45 per visit\nWeeding: $35 per hour\n\n"
              "ONE-OFF JOBS\nHedge trimming: $60 per hour\nGreen waste removal: $80 per load\n")
    assert first("hedge trimming in the back garden, about 3 hours, how much?", garden) == 180  # a place word, no heading
    books = "LEDGER BOOKKEEPING (all prices exclude GST at 15%)\nBookkeeping: $60 per hour\nPayroll run: $40\n"
    assert first("3 hours of bookkeeping, how much? we add GST ourselves", books) == 180  # "add GST" asks no tax
    skis = "SNOWLINE HIRE\nSeason ski pass (buy before June 1): $299\nHelmet hire: $15 per day\nSki hire: $45 per day\n"
    assert first("a season ski pass plus helmet hire for 3 days, total?", skis) == 344  # a deadline, no date asked
    gym = ("ACTIVE HUB GYM\nZone 1 - Cardio, Weights: $12 per visit\nZone 2 - Pool, Spa, Sauna: $20 per visit\n"
           "Personal training: $70 per hour\n")
    assert first("10 visits to the cardio and weights zone, how much?", gym) == 120  # a gym's zone is no delivery zone
    vans = ("WHEELS VAN HIRE\nTransit van: £70 per day\nLuton van: £95 per day\nDelivery to your door\n"
            "Zone 1 - up to 5 miles: free\nZone 2 - 5 to 20 miles: £25\nZone 3 - 20 to 40 miles: £45\n")
    # (where the customer is, not the trip's length)
    assert first("transit van for 2 days for a 30 mile round trip, delivered to us, we're 3 miles from you, how much?",
                 vans) == 140
    assert first("transit van for 2 days, delivered to us, we're 12 miles from you, how much?", vans) == 165


def test_a_verb_written_as_the_label_writes_it():
    # simple set 65: "the lining replaced on my jacket and the sleeves shortened" named no "Replace lining (jacket)" nor
    # "Shorten sleeves (plain)" (a label's words are compared as written)
    from backend.agent.tools.headings import with_label_verbs

    labels = ["Shorten sleeves: £15.00", "Take in body: £17.00", "Trim nails: $12", "Book binding: $20"]
    assert with_label_verbs("sleeves shortened, the body taken in and nails trimmed", labels) == (
        "sleeves shorten, the body take in and nails trim")
    assert with_label_verbs("I booked a trim", labels[:3]) == "I booked a trim"  # no label starts with "book"
    tailor = ("JACKETS\nReplace lining (jacket): £85.00\nShorten sleeves (plain): £24.00\n\n"
              "Orders over £100 require a 50% deposit when you hand them in.\n")
    assert first("I want the lining replaced on my jacket and the sleeves shortened (plain) on the same jacket. how "
                 "much deposit do I pay when I drop it off?", tailor) == Fraction(109, 2)


def test_readings_of_blind_sets_87_and_88():
    # Read after their end runs (thirtieth session). A section heading tells two rows of one name apart, and "how much
    # is X plus Y" asks the two priced: "an inflatable tub for the weekend plus 2 bathrobes" was 24 + 2 + 6 (the
    # "24 hours" an inflatable takes to heat).
    tubs = ("INFLATABLE TUBS (seats 4-6)\n  Weekend (Fri to Mon) ............ £165\n  Midweek (Mon to Fri) ............ "
            "£145\n\nHARDSHELL TUBS (seats up to 7)\n  Weekend (Fri to Mon) ............ £295\n  Midweek (Mon to Fri) "
            "............ £265\n\nADD-ONS\n  Bathrobe ........................ £6 each\n\n"
            "Inflatables take around 24 hours to reach temperature.\n")
    assert first("how much is an inflatable tub for the weekend plus 2 bathrobes?", tubs) == 177
    assert first("how much is a hardshell tub for the weekend plus 2 bathrobes?", tubs) == 307
    # (not the tax of things listed, review: "How much is the VAT on ..." was their total)
    cakes = "CAKES\nVictoria sponge: £28\nChocolate fudge cake: £35\n\nAll prices include VAT at 20%.\n"
    assert first("how much is a victoria sponge plus a chocolate fudge cake?", cakes) == 63
    from backend.agent.tools.calculator import evaluate
    from backend.agent.tools.expressions import candidate_expressions

    from .test_expressions import result
    assert 63 not in [evaluate(e).q for e in candidate_expressions(
        "How much is the VAT on a victoria sponge plus a chocolate fudge cake?", [result(cakes)], None, evaluate)]
    # a senior's age in brackets counts nothing: "Im a senior (68)" was 28.00 * 68
    from backend.agent.party import given_ages
    assert given_ages("Im a senior (68), my dryer belt snapped") == ["68"]
    assert given_ages("2 seniors and 3 adults") == []
