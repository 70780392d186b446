"""How a price list's layout is read into the calculator's candidates (backend.agent.tools):
dot leaders, headings in capitals and label lines as sentence ends, a table cell named by its
row and its column, a discount called by its name, a discount from a day on, a count written
"4+" (no age), and a table's other cells (no extras). Each test's first candidate is the call the
planned policy makes (backend.agent.choice.FIRST_PRIOR). Found on blind set 53."""

from __future__ import annotations

from backend.agent.operations import asks_bill_total, names_a_size
from backend.agent.tools.arithmetic import evaluate
from backend.agent.tools.basket import basket_items
from backend.agent.tools.discounts import claimed_discount, onwards
from backend.agent.tools.expressions import candidate_expressions
from backend.agent.tools.mentions import mentioned_total, named_extras
from backend.agent.tools.segmentation import aligned_tables, text_sentences, without_leaders
from backend.agent.tools.taxes import claimed_tax

from .test_bill_parts import first, value
from .test_expressions import result

CYCLES = """QUAYSIDE CYCLES
Pier Road, Whitby  |  Tel: 01947 555 210

HIRE PRICES (per bike)
Bike type      | 2 hours | Half day (4 hrs) | Full day
Road bike      | £14     | £20              | £30
Tandem         | £20     | £28              | £40
E-bike         | £25     | £36              | £55

- Multi-day hire: 20% off the full day rate for each day from the 3rd day onwards
- Groups of 5 or more bikes get 10% off the total
- Child seat or trailer: £7 extra per day
"""

SALON = """POLISHED NAIL BAR
Phone 0161 555 0100 | Walk-ins welcome
Hours: Tue-Sat 9am-6pm, closed Sundays
MANICURES
- Quick manicure ........ $30
- Gel manicure ... $50
- Builder gel … $65
EXTRAS
- Nail art from $2 per nail
- Chrome finish $12 extra
Hen parties of 4+: 20% off all services booked together.
"""

WASH = """Service              | Car  | Van
Wash & vacuum        | €20  | €30
Mini valet           | €45  | €65
Fleet accounts (5+ vehicles a month): 10% off all services."""


def test_leaders_headings_in_capitals_and_label_lines_end_sentences():
    # Blind set 53: "- Gel manicure ... $58" was two sentences (an ellipsis); a heading in capitals ran
    # on from the line before it ("closed Mondays MANICURES"), and so did a label line ("Walk-ins welcome
    # Hours: ...").
    sentences = [s for _, s in text_sentences(SALON)]
    assert "- Quick manicure: $30" in sentences
    assert "- Gel manicure: $50" in sentences
    assert "- Builder gel: $65" in sentences
    assert "Hours: Tue-Sat 9am-6pm, closed Sundays" in sentences
    assert "POLISHED NAIL BAR Phone 0161 555 0100 | Walk-ins welcome" in sentences
    assert "- Chrome finish $12 extra" in sentences
    assert "MANICURES" in sentences
    # a heading in capitals stays with the line after it ("TRADE ROTA ... Knives swapped ...")
    assert [s for _, s in text_sentences("Open daily.\nTRADE ROTA\nKnives swapped at £3 per knife.")] == [
        "Open daily.", "TRADE ROTA Knives swapped at £3 per knife."]
    # a sentence's own ellipsis before a number is left alone when no number follows on its line
    assert without_leaders("We close early... sometimes.\nOpen 9am.") == "We close early... sometimes.\nOpen 9am."
    assert without_leaders("Gel manicure . . . . $50") == "Gel manicure: $50"
    assert value(first("gel manicure with the chrome finish, how much altogether?", SALON)) == "62"


def test_a_table_cell_is_named_by_its_row_and_its_column():
    # Blind set 53: "4 hybrid bikes for a full day plus one child trailer" read the row's first cell (the
    # "2 hours" price), and the trailer twice (the basket's and the "extra" again).
    assert value(first("how much for 3 tandems for a full day plus one child trailer?", CYCLES)) == "127"
    assert value(first("how much for 2 road bikes for a half day?", CYCLES)) == "40"


def test_a_discount_called_by_its_name_and_one_from_a_day_on():
    # Blind set 53: "with your group discount" took the multi-day discount ("the full day" named it).
    question = "we're a group of 6 and want road bikes for the full day. total with your group discount?"
    assert claimed_discount(question, [s for _, s in text_sentences(CYCLES)])[0] == "10"
    assert value(first(question, CYCLES)) == "162"
    # "from the 3rd day onwards": only days 3 and 4 are 20% off; one day is no 3rd day
    assert onwards("20% off the full day rate for each day from the 3rd day onwards") == (3, "day")
    assert onwards("10% off each night after the first night") == (2, "night")
    assert value(first("id like to hire a tandem for 4 days in a row, how much?", CYCLES)) == "144"
    assert claimed_discount("how much for 2 tandems for a full day?", [s for _, s in text_sentences(CYCLES)]) is None
    assert value(first("how much for 2 tandems for a full day?", CYCLES)) == "80"


def test_a_count_written_with_a_plus_is_no_age():
    # Blind set 53: "Bridal parties of 4+" and "5+ vehicles a month" were read as ages ("aged 60+"): never
    # claimed.
    question = "There are 5 of us in my hen party and we all want gel manicures booked together. Total after the discount?"
    assert value(first(question, SALON)) == "200"
    fleet = "We have a fleet account and need a mini valet on 5 vans this month. Total after the fleet discount?"
    assert claimed_discount(fleet, [s for _, s in text_sentences(WASH)])[0] == "10"


def test_a_tables_other_cells_are_no_extras():
    # "need a mini valet on 5 vans" added every van cell of the table (+ 30 + 65 + 120)
    sentences = [s for _, s in text_sentences(WASH)]
    assert named_extras("We have a fleet account and need a mini valet on 5 vans, total?", sentences, "65 * 5") == []


def test_review_of_the_eighteenth_session():
    # Each found by reading the change above; each gave a wrong bill.
    # the words before a price name it only as a label: "$12 for adults and $8 for kids" (not 2 * 8 + 3 * 8)
    assert first("2 adults and 3 kids, how much in total?", "Tickets are $12 for adults and $8 for kids.") == "2 * 12 + 3 * 8"
    # a thing's own words in the question choose its column, not another thing's ("for a full day")
    table = "Bike type | 2 hours | Half day (4 hrs) | Full day\nRoad bike | £14 | £20 | £30\nTandem | £20 | £28 | £40\n"
    assert value(first("1 tandem for 2 hours and 1 road bike for a full day, total?", table)) == "50"
    # what a discount from a day on saves, when that is asked
    assert value(first("a tandem for 4 days in a row, how much would I save with the multi-day discount?", CYCLES)) == "16"
    # a surcharge of the same amount as a listed thing is still added
    salon = "- Gel manicure: $50\n- Nail art: $12\n- Sunday appointments: $12 surcharge\n"
    assert value(first("gel manicure and nail art with the Sunday surcharge, total?", salon)) == "74"
    # "Label: a £x; b £y." is no table row: its cells are extras by their own words
    cottage = "Seaview Cottage\nThe cottage sleeps 4 and costs £120 per night.\n\nCottage add-ons: hot tub £25 per night; late checkout £15.\n"
    assert value(first("how much is it for 3 nights at the cottage plus late checkout?", cottage)) == "375"
    # a date is no day a discount starts from; an ordinal in words is read
    assert onwards("Members get 10% off all hire from the 1st of May.") is None
    assert onwards("from the third day onwards") == (3, "day")
    kayaks = "Single kayak hire costs £25 per day.\n\nMembers get 10% off all hire from the 1st of May."
    assert value(first("I'm a member. how much to hire a single kayak for 3 days?", kayaks)) == "67.50"
    # an age written "65+" before other words is still an age
    yoga = "Drop-in class: £12.\nPensioners 65+ also get 25% off."
    assert candidate_expressions("I'm 62. How much do I pay for a drop-in class with the pensioner discount?",
                                 [result(yoga)], None, evaluate) == []
    assert value(first("I'm 70. How much do I pay for a drop-in class with the pensioner discount?", yoga)) == "9"
    # a line wrapped after "every" runs on into the next, though that begins with a label-like "...:"
    anchor = "THE ANCHOR INN\nOur famous fish supper, served every\nFriday and Saturday evening: £12.50 per plate.\nBurgers: £10 each."
    assert value(first("2 fish suppers and 1 burger, how much in total?", anchor)) == "35"
    # no leaders: an empty table cell, a range, an ellipsis before words
    assert without_leaders("Pages 1..10 cost £2; open 9.00...17.30") == "Pages 1..10 cost £2; open 9.00...17.30"
    assert without_leaders("Road bike | ... | £20") == "Road bike | ... | £20"


WINDOWS = """SPARKLE WINDOWS - PRICE LIST

Residential (outside only, per visit)
House size              Regular (every 4 wks)   One-off clean
2 bed terrace           $25                     $38
3 bed semi/townhouse    $32                     $48
4 bed detached          $50                     $72

Inside & out: add 50% to the outside price above.

Extras
- Screen cleaning: $2 per screen
- Skylights: $6 each

Card payments carry a 2% surcharge."""

VALETING = """Service              | Car  | SUV  | Van
Exterior wash        | €10  | €14  | €16
Full valet           | €80  | €100 | €115

Add-ons:
- Leather seat clean & condition: €30
- Engine bay clean: €20"""


def test_a_table_laid_out_by_spaces_is_read_by_its_columns():
    # Blind set 55: a table whose columns were lined up with spaces was read as prose: "4 bed detached
    # ... One-off clean" took another row's "Regular" price, and "4 bed" counted 4.
    sentences = [s for _, s in text_sentences(WINDOWS)]
    assert "4 bed detached: Regular (every 4 wks) $50; One-off clean $72." in sentences
    assert aligned_tables("Phone: 0113 555 0100   Email: hi@example.com\nOpen daily.") == (
        "Phone: 0113 555 0100   Email: hi@example.com\nOpen daily.")  # one line is no table
    prose = "We clean all year.  Call us first.\nWe carry 2 ladders.  Prices are fair.\nWe work in 3 towns.  No job too small."
    assert aligned_tables(prose) == prose  # two spaces after a full stop: no table
    assert value(first("how much for inside and out on a 4 bed detached, just a one-off clean?", WINDOWS)) == "108"


def test_rooms_name_a_home_and_a_total_please_asks_a_bill():
    # Blind set 55: "my 3 bed townhouse plus 12 screens ... total please" asked no total ("please"), the
    # row's "Regular" price was taken for a one-off clean named before it, and paying by card added nothing.
    assert names_a_size("fixed price 2 bed move", len("fixed price "))
    assert not names_a_size("we need 2 beds", len("we need "))
    assert asks_bill_total("car full valet + engine bay clean. total pls")
    assert asks_bill_total("one-off clean for my flat plus 2 skylights - total please")
    question = "one-off clean for my 3 bed townhouse plus 12 screens and 2 skylights, I'll pay by card - total please"
    assert value(first(question, WINDOWS)) == "85.68"  # (48 + 12 * 2 + 2 * 6) * 1.02


def test_things_listed_with_plus_signs_over_a_tables_cells():
    # Blind set 53: "car full valet + leather seat clean + engine bay clean. total pls" found nothing: every
    # row's "Car" cell was named by "car", and "engine bay clean" was read from the first "clean".
    question = "car full valet + leather seat clean + engine bay clean. total pls"
    assert mentioned_total(question, [s for _, s in text_sentences(VALETING)]) == "80 + 30 + 20"
    assert value(first(question, VALETING)) == "130"


MOBILE_VALET = """Prices by vehicle size:
                      Small       Medium     Large/SUV
                      (Fiesta,    (Golf,     (Qashqai,
                       Corsa)      Focus)     X5)
Exterior wash & dry   £16         £19        £24
Mini valet (in & out) £30         £36        £44

Prices above do NOT include VAT - VAT at 20% is added to the whole invoice."""

CLEANERS = """DRY CLEANING (per item)
Standard turnaround 3 working days. Express (next working day) +50%.
Trousers ............................ €8.00
2-piece suit ........................ €18.00
3-piece suit ........................ €24.00
All prices include VAT at 23%."""


def test_column_names_over_several_lines_and_a_tax_added_to_the_bill():
    # Blind set 56: column names over three lines (a car's size, then its models) over rows one cell
    # longer; "Prices do not include VAT - VAT at 20% is added" was never added for "inc vat".
    sentences = [s for _, s in text_sentences(MOBILE_VALET)]
    assert ("Mini valet (in & out): Small Fiesta Corsa £30; Medium Golf Focus £36; Large/SUV Qashqai X5 £44."
            in sentences)
    assert claimed_tax("3 mini valets on my golf, total inc vat pls", sentences) == "20"
    assert claimed_tax("3 mini valets on my golf, total before vat?", sentences) is None
    assert claimed_tax("how much for a suit, including vat?", [s for _, s in text_sentences(CLEANERS)]) is None
    assert value(first("2 mini valets for my golf, total inc vat pls", MOBILE_VALET)) == "86.40"


def test_a_surcharge_written_plus_a_percentage_and_a_suit_of_pieces():
    # Blind set 56: "Express (next working day) +50%" was no surcharge, and "a 2 piece suit" counted 2 of
    # the 3-piece suit.
    assert names_a_size("need a 2 piece suit cleaned", len("need a "))
    assert value(first("need a 2 piece suit cleaned for tomorrow (express). how much", CLEANERS)) == "27"


def test_second_review_of_the_eighteenth_session():
    # Each found by reading the change above; each gave a wrong bill or none.
    # names and prices by turns on a line: a row a pair (not "Cut & blow dry: $45; Colour; $80.")
    salon = ("Hair salon prices\n\nCut & blow dry   $45      Colour       $80\nFringe trim      $10      Highlights   $120\n"
             "Kids cut         $20      Toner        $30")
    assert value(first("How much for a colour and a fringe trim?", salon)) == "90"
    # a blank cell keeps the row's other cells in their columns
    windows = ("SPARKLE WINDOWS\n\nHouse size              Regular   One-off\n2 bed terrace           $25       $38\n"
               "3 bed semi                        $48\n4 bed detached          $50       $72\n\nExtras\n- Skylights: $6 each")
    assert "3 bed semi: One-off $48." in [s for _, s in text_sentences(windows)]
    assert value(first("one-off clean for a 4 bed detached plus 2 skylights, total please", windows)) == "84"
    # a line wrapped before a number is no label line ("Children aged under" / "12 years: £6")
    farm = "Farm park tickets\nAdults: £12 per ticket. Children aged under\n12 years: £6 per ticket. Family ticket: £35."
    assert value(first("How much for 2 adults and 3 children?", farm)) == "42"
    # the words opening a question are every listed thing's ("weekend tickets for 2 adults and 1 child")
    tickets = ("Ticket prices\n                       Weekday      Weekend\nAdult                  £15          £25\n"
               "Child (3-15)           £8           £12")
    assert value(first("weekend tickets for 2 adults and 1 child, total?", tickets)) == "62"
    # paying by card: the charge of that card only, the clause right before the amount, a wrapped line too
    skip = "Skip hire costs £200 per week.\n\n"
    assert value(first("how much for 1 week skip hire, paying by debit card?",
                       skip + "Debit cards are free; credit cards carry a 2% surcharge.")) == "200"
    assert value(first("how much for 1 week skip hire, paying by credit card?",
                       skip + "We accept credit cards and cash, and weekend deliveries carry a 10% surcharge.")) == "200"
    assert value(first("how much for 1 week skip hire, paying by card?",
                       "Hire prices\nSkip hire: £200 per week\nCard payments carry a 2% surcharge.")) == "204"
    # a tax: not when asked without it, not when prices include it, once, never on a count
    valets = "Mini valet: £30\nFull valet: £60\n\nPrices exclude VAT at 20%."
    assert value(first("how much for 3 mini valets, not including vat?", valets)) == "90"
    assert value(first("what's the price of 3 mini valets before discount and VAT?", valets)) == "90"
    assert value(first("how much for 3 mini valets inc vat?", valets)) == "108"
    assert not first("How many mini valets can I get for £180 including VAT?", valets).endswith("/ 100")
    assert value(first("3 mini valets, total inc vat please",
                       "Mini valet: £30\nFull valet: £60\n\nAll prices include 20% VAT, no extra charges.")) == "90"
    assert value(first("how much for 3 mini valets inc vat?", "Mini valet: £30 + 20% VAT\nFull valet: £60 + 20% VAT")) == "108"
    # a count of a plural is no size ("3 bed sheets", "4 bed nights")
    linen = "Linen hire\nBed sheet: £8 each\nDuvet cover: £10 each"
    assert value(first("3 bed sheets and 2 duvet covers, total please", linen)) == "44"
    assert value(first("How much for 4 bed nights in the dorm plus towel hire?",
                       "Hostel prices\nDorm bed: £25 per night\nTowel hire: £3")) == "103"


def test_a_caption_with_more_than_its_unit_prices_the_table_per_that_unit():
    # Blind set 54: "ROOM RATES (per night, incl. continental breakfast for 2)" was cut at "incl." and named
    # no unit, and "NZ$275  (sleeps 4)" was no price alone: "3 of us ... family suite for 2 nights in
    # march" took the extra person's "NZ$35 per night".
    lodge = ("ROOM RATES (per night, incl. continental breakfast for 2)\n"
             "Room            | Low season (May–Sep) | High season (Oct–Apr)\n"
             "Garden Queen    | NZ$145               | NZ$189\n"
             "Family Suite    | NZ$210               | NZ$275  (sleeps 4)\n\n"
             "- Extra person in Family Suite: NZ$35 per night (max 5 guests)")
    sentences = [s for _, s in text_sentences(lodge)]
    assert sentences[0] == "ROOM RATES (per night, incl. continental breakfast for 2)"
    assert "Family Suite: Low season (May–Sep) NZ$210 per night; High season (Oct–Apr) NZ$275 per night (sleeps 4)." in sentences
    assert value(first("3 of us are sharing the family suite for 2 nights in march, how much is that each?", lodge)) == "183.33"


def test_a_price_for_a_least_count_and_a_minimum_of_another_thing():
    # Blind set 56: "6 shirts and 2 pairs of trousers" took the single shirt price, asked no cost ("price
    # for ..."), and was charged the curtains' "minimum charge €30" because 6 shirts is "€6".
    cleaners = ("DRY CLEANING (per item)\nShirt (laundered & pressed) ......... €3.50 - 5 or more shirts €3.00 each\n"
                "Trousers ............................ €9.00\n"
                "Curtains €6 per square metre (lined +€2/m2), minimum charge €30")
    assert value(first("price for 6 shirts and 2 pairs of trousers?", cleaners)) == "36"
    assert value(first("how much for 2 shirts and 2 pairs of trousers?", cleaners)) == "25"
    # "2 pairs of trousers" are trousers, not a price "per pair"
    assert basket_items("price for 6 shirts and 2 pairs of trousers?") == [("6", "shirts"), ("2", "trousers")]
    assert value(first("price for 6 shirts and 2 pairs of trousers?", "Headlight restoration - £30 per pair\n" + cleaners)) == "36"


def test_a_short_title_and_a_line_ending_in_a_currency_word_end_sentences():
    # New-user pass: lookups quoted "Policies Cancel at least 12 hours before class ..." and "Drop-in
    # class: 14 dollars 10-class pass: 120 dollars ...".
    from backend.agent.tools.segmentation import split_sentences
    yoga = ("Sunrise Yoga\n\nPrices\nDrop-in class: 14 dollars\n10-class pass: 120 dollars\n\n"
            "Policies\nCancel at least 12 hours before class or lose the credit.\n")
    sentences = split_sentences(yoga)
    assert "Cancel at least 12 hours before class or lose the credit." in sentences
    assert "Drop-in class: 14 dollars" in sentences and "10-class pass: 120 dollars" in sentences
    # a title in capitals stays with its line; wrapped prose is no title
    assert split_sentences("OUR PRICES\nFull service from £40.") == ["OUR PRICES Full service from £40."]
    assert split_sentences("Our fish supper\nis served on Fridays.") == ["Our fish supper is served on Fridays."]
    assert split_sentences("We open at 9am on\nSaturday and Sunday.") == ["We open at 9am on Saturday and Sunday."]
    # review: a clause going on is no title
    assert split_sentences("The gym is\nOpen 24 hours for members.") == ["The gym is Open 24 hours for members."]
    assert split_sentences("Members get\nFree towels and lockers.") == ["Members get Free towels and lockers."]


def test_a_lists_least_amount_on_the_line_before_its_prices():
    # Blind set 57: "7 lbs ... regular wash n fold" under "Priced by weight, 10 lb minimum per order" is
    # charged for 10 lb
    laundry = ("SUDS\n\nWASH & FOLD (drop-off service)\n  Priced by weight, 10 lb minimum per order\n"
               "  Regular .................. $1.75 / lb\n  Same-day (in by 10am) .... $2.25 / lb\n")
    assert first("how much if i drop off 7 lbs of laundry for regular wash n fold", laundry) == "1.75 * 10"
    assert first("how much for 12 lbs regular wash and fold", laundry) == "1.75 * 12"


def test_review_a_lists_least_amount_holds_for_each_of_its_lines():
    laundry = ("SUDS\n\nWASH & FOLD (drop-off service)\n  Priced by weight, 10 lb minimum per order\n"
               "  Regular .................. $1.75 / lb\n  Same-day (in by 10am) .... $2.25 / lb\n\n"
               "DRY CLEANING\n  Shirt $3.50 each\n")
    assert first("7 lbs of same-day wash and fold, how much?", laundry) == "2.25 * 10"
    assert first("how much for 2 shirts dry cleaned?", laundry) == "3.50 * 2"  # another section: none


def test_a_size_after_a_count_and_a_word_is_the_counted_things_size():
    # New-user pass: "4 budget 16 inch tyres" was 4 budget tyres plus 16 "inch tyres" (4 * 65 + 16 * 65)
    tyres = ("Kwik Tyres\n\nPrices\nBudget 16 inch tyre: £65 each, fitted\nPremium 18 inch tyre: £130 each, fitted\n"
             "Wheel alignment: £45\n")
    question = "How much for 4 budget 16 inch tyres fitted?"
    assert names_a_size(question, question.index("16"))
    assert not names_a_size("I need 4 and 16 inch tyres", len("I need 4 and "))
    assert value(first("How much for 4 budget 16 inch tyres fitted?", tyres)) == "260"
    assert value(first("How much for 2 premium 18 inch tyres and a wheel alignment?", tyres)) == "305"
    assert basket_items("3 large 12 inch pizzas and 2 cokes") == [("3", "large 12-inch pizzas"), ("2", "cokes")]


CARPETS = """TIDEMARK CARPET CARE

PRICE GUIDE (AU$, GST included)

Carpets
  Bedroom (up to 16 m2)            $45
  Lounge / living room             $60
  Hallway                          $25

HOME PACKAGE: 3 bedrooms + lounge + hallway for $175 (save $45).

THE FINE PRINT
- Minimum call-out charge is $140. If your job comes to less, you pay $140.
- Saturday bookings attract a flat $40 surcharge.
"""


def test_things_named_with_the_a_call_out_minimum_and_a_package_priced_apart():
    # Blind set 60: "how much to get 2 bedrooms and the hallway carpets cleaned?" was 175 * 2 + 25 (the
    # package's price, "how much to get" no cost asked, "the hallway" no thing, the call-out minimum missed).
    from backend.agent.operations import asks_cost

    question = "how much to get 2 bedrooms and the hallway carpets cleaned? nothing else, weekday is fine"
    assert asks_cost(question) and asks_cost("how much would it be to hire a van?")
    assert basket_items(question) == [("2", "bedrooms"), ("1?", "hallway carpets cleaned")]
    assert candidate_expressions(question, [result(CARPETS)], None, evaluate)[0] == "max(140, 2 * 45 + 25)"
    # the package asked for by name keeps its price
    from backend.agent.tools.basket import _price_of

    lines = [s for _, s in text_sentences(CARPETS, "x.txt")]
    assert _price_of("home package", lines) == "175" and _price_of("bedrooms", lines) == "45"


def test_a_minimum_is_the_one_of_the_document_pricing_the_bill():
    # a dance school's "108 + 30" took a carpet cleaner's call-out minimum, whose "$30 per room" matched the 30
    from backend.agent.tools.passages import format_passages

    from .test_expressions import source

    dance = "Dance School\n\nBallet, Tap or Jazz (ages 6-12): €108 per term.\nRegistration: €30 per family per year."
    carpets = CARPETS + "- Pet odour treatment: $30 per room.\n"
    both = ["2 passages\n\n" + format_passages([source(carpets, 1, "carpets.txt"), source(dance, 2, "dance.txt")])]
    answer = candidate_expressions("My daughter (8) wants to do ballet and tap this term, we're new to the school. "
                                   "How much do we owe for the term incl registration?", both, None, evaluate)[0]
    assert "140" not in answer and "108" in answer


def test_how_much_if_and_how_much_would_that_be_ask_a_cost():
    # Blind set 62: "I've got 4 watches that all need new batteries, how much if I bring them in together?"
    # planned no calculation (no cost asked), and the answer was "I couldn't work out that amount".
    from backend.agent.operations import asks_cost

    assert asks_cost("I've got 4 watches that all need new batteries, how much if I bring them in together?")
    assert asks_cost("how much would that be?")
    assert not asks_cost("how much water if I fill it?") and not asks_cost("how much sugar is in it?")


# A price list stating its currency once, laid out by spaces with dot leaders between the cells, its columns
# sizes and its rows bands of a quantity (blind set 93, read: "250 black 180g 12 inch records" was "5 * 250").
FLYERS = ("PRINTWORKS PRICE LIST\nAll prices in GBP, before VAT.\n\nFLYERS (per flyer)\n"
          "  Quantity          A5 130 gsm    A5 300 gsm\n"
          "  250 - 499 ......    0.12 ......    0.20\n"
          "  500 - 999 ......    0.09 ......    0.15\n"
          "  1000 + .........    0.06 ......    0.10\n")


def test_a_table_of_quantity_bands_and_sizes_laid_out_with_dot_leaders():
    assert [s for _, s in text_sentences(FLYERS)][2:] == [
        "250 - 499: A5 130 gsm 0.12; A5 300 gsm 0.20.", "500 - 999: A5 130 gsm 0.09; A5 300 gsm 0.15.",
        "1000 +: A5 130 gsm 0.06; A5 300 gsm 0.10."]
    # the band holding the count, the column of the size asked
    assert first("how much for 600 A5 flyers on 300gsm?", FLYERS) == "0.15 * 600"
    assert first("600 flyers, A5 130 gsm, price?", FLYERS) == "0.09 * 600"
    assert first("1200 flyers at 300 gsm, total?", FLYERS) == "0.10 * 1200"
    # the sizes of a count's noun phrase are no count, nor a thing of a basket
    from backend.agent.tools.bands import outside_band
    assert outside_band("how much for 250 black 180g 12 inch records?", "100 - 199 records each: 12\" 180 g €7.10.")
    assert not outside_band("how much for 250 black 180g 12 inch records?", "200 - 299 records each: 12\" 180 g €5.50.")
    from backend.agent.tools.basket import basket_items
    assert basket_items("600 flyers, A5 130 gsm, price?") == []
    # the thing a band counts named by its heading's "(per ...)" aside
    posters = ("All prices in GBP.\n\nPRINTING (per poster, full colour)\n  Qty            A2       A1\n"
               "  10 - 49 ....   4.00 ...  6.00\n  50 + .......   3.00 ...  5.00\n")
    assert first("60 A1 posters, how much?", posters) == "5.00 * 60"
    assert first("20 A2 posters, how much?", posters) == "4.00 * 20"
    # a row of amounts alone is no header, and leaders between words are no cells
    assert aligned_tables("  Size     Small    Large\n  Mugs ....   4.00 ...   6.00\n  Cups ....   3.00 ...   5.00\n") == (
        "| Size | Small | Large |\n| Mugs | 4.00 | 6.00 |\n| Cups | 3.00 | 5.00 |\n")



def test_review_of_the_thirty_fourth_session():
    from backend.agent.operations import asks_cost
    from backend.agent.tools.allowances import allowance_expressions
    from backend.agent.tools.conditions import names_date
    from backend.agent.tools.discounts import excluded_from
    from backend.agent.tools.pricing import with_declared_currency
    from backend.agent.tools.segmentation import split_sentences
    from backend.agent.tools.visits import zone_charge
    # a label's length is no allowance of a price per hour, nor of another thing than the one asked
    assert allowance_expressions("a bartender for 6 hours?", ["Bartender (4 hours minimum): $35 per hour.",
                                                              "Each extra hour: $35."]) == []
    assert allowance_expressions("photo booth for 5 hours?", ["DJ package, 4 hours: $650.", "Each extra hour: $100."]) == []
    # a place a zone is within, only where the question is in it
    zones = ["Zone A - within Calgary city limits: $85.00", "Zone B - up to 60 km outside the city: $140.00"]
    assert zone_charge("delivered in Calgary", zones) == "85.00"
    assert zone_charge("We're 30 km from Calgary, how much is delivery?", zones) == "140.00"
    assert zone_charge("Delivery to Cochrane, just outside Calgary", zones) is None
    # a two-column table whose first price is a word keeps its first row
    assert [s for _, s in text_sentences("PRICES\n| Kids cut (under 12) | free |\n| Adult cut | 25.00 |\n"
                                         "| Senior cut | 20.00 |\n")][1:] == [
        "Kids cut (under 12): free.", "Adult cut: 25.00.", "Senior cut: 20.00."]
    # a clock time is no price under a declared currency
    declared = [("h", "All prices in EUR."), ("h", "Check-in from 14.00; check-out by 11.00."),
                ("h", "Reception open 08.30 to 12.00.")]
    assert with_declared_currency(declared)[1:] == declared[1:]
    # who asks is no thing of a basket
    assert basket_items("I'm a student and 3 friends, 2 adult tickets?") == [("3", "friends"), ("2", "adult tickets")]
    assert basket_items("a quick question, 2 adults and 1 child?") == [("2", "adults"), ("1", "child")]
    # a way there is no cost; "but only once per client" excepts nothing; minutes after a number end a sentence
    assert not asks_cost("What's the best way to come to the studio?")
    assert excluded_from("20% off all treatments but only once per client.",
                         ["20% off all treatments but only once per client."]) == []
    assert split_sentences("Dog walk: $20 for 30 min. 2 dogs or more get 10% off.") == [
        "Dog walk: $20 for 30 min.", "2 dogs or more get 10% off."]
    assert names_date("a New Year’s Eve party")  # (a curly apostrophe)
    # a currency declared by any code the answer knows, one map of signs (numerals.currency_sign)
    for declared, sign in (("All prices in SEK.", "¤"), ("All prices in EUR.", "€"), ("Prices are in pounds sterling.", "£"),
                           ("All prices in Canadian dollars.", "$")):
        assert with_declared_currency([("h", declared), ("h", "Cut: 65.00")])[1][1] == f"Cut: {sign}65.00"
