"""Simple bills of one business's documents: two things named together, a thing counted, a
surcharge of a day, a discount of a customer, a weight band (the simple questions written for sets
65-72 in the twenty-fifth session). Each assertion failed on the code before it."""

from __future__ import annotations

from fractions import Fraction

from backend.agent.operations import asks_bill_total, asks_cost, asks_price
from backend.agent.tools.conditions import applies
from backend.agent.tools.discounts import claimed_discount
from backend.agent.tools.mentions import mentioned_items
from backend.agent.tools.pricing import of_named_documents, prices_counted_thing
from backend.agent.tools.segmentation import text_sentences

from .test_expressions import first

MENU = ("SERVICE MENU - prices are per machine\n\nTUNE-UPS (labor)\n"
        "Full Tune-Up, mechanical .................. $95\nFull Tune-Up, computerized ................ $125\n\n"
        "REPAIRS (labor)\nTiming adjustment (add to any tune-up) .... $40\nMotor brush replacement ................... $30\n\n"
        "Q: Do I pay anything up front?\nA: Embroidery and industrial machines need a $50 deposit per machine at drop-off.\n")
BIKES = ("MOBILE BIKE REPAIR - SERVICE MENU\nFull Tune-Up ............ CA$139\nE-Bike Tune-Up .......... CA$159\n\n"
         "Q: Weekends and evenings?\nA: Saturday and Sunday visits, and any appointment starting after 6 pm, carry a "
         "15% surcharge on labour.\n\nOFFERS\n1) FLEET DEAL\n   Book tune-ups for 3 or more bikes in one visit and get 10% "
         "off all tune-up prices on that visit.\n\n2) STUDENT DISCOUNT\n   15% off labour with a valid student card.\n")
CREMATION = ("INDIVIDUAL CREMATION\n  Weight of pet           Price\n  Up to 5 kg              £145\n"
             "  5.1 - 15 kg             £185\n  15.1 - 30 kg            £225\n  30.1 - 50 kg            £265\n"
             "  Over 50 kg              £265 plus £4 for every kg over 50 kg\n\n  Small pets: £110\n")
KEYS = ("KEY CUTTING\nPadlock key duplicate ......... $4.00 each\nMailbox key duplicate ......... $3.50 each\n"
        "Laser-cut car key blade ....... $85.00\n")


def test_two_things_named_together_and_the_bill_asked_in_short():
    # "Full Tune-Up, mechanical" named by "full tune up on my mechanical machine", not the computerized one that
    # "full tune" names too; "total with tax?" and "all in?" ask the bill; a deposit is no thing of it
    assert asks_bill_total("a drive belt and a cleaning kit, cash. Total with tax?")
    assert asks_bill_total("rear brake adjusted + a new pair of pads. how much all in?")
    assert first("full tune up on my mechanical machine plus a timing adjustment, cash. total?", MENU) == 95 + 40
    sentences = [s for _, s in text_sentences(MENU)]
    assert mentioned_items("Computerized machine needs a full tune-up and a motor brush replacement. what's the total?",
                           sentences) == [("1", "125"), ("1", "30")]


def test_a_heading_word_that_every_document_says_names_no_document():
    pairs = [("Acme Sewing Machine Repair - FAQ", "Every machine gets a test sew-out."),
             ("acme_menu.txt", "Full Tune-Up, mechanical machine: $95")]
    assert len(of_named_documents("full tune up on my mechanical machine, how much?", pairs)) == 2
    shops = [("Lumen Portrait Studio", "Standard session: $120"), ("Crux Climbing Centre", "Day pass: $15")]
    assert of_named_documents("how much is a standard session at Lumen?", shops) == ["Standard session: $120"]


def test_days_and_times_given_as_alternatives():
    rule = "Saturday and Sunday visits, and any appointment starting after 6 pm, carry a 15% surcharge on labour."
    assert applies(rule, "can you come on saturday?") is True
    assert applies(rule, "can you come on tuesday at 7pm?") is True
    assert applies(rule, "can you come on tuesday at 10am?") is False
    assert first("can you come on saturday to do a full tune-up? im downtown. how much", BIKES) == Fraction(139 * 115, 100)


def test_a_thing_named_in_the_singular_and_a_discount_labelled_in_capitals():
    # one e-bike meets no "3 or more bikes"; "2) STUDENT DISCOUNT 15% off labour" is the student's
    question = "student here w/ my card. e-bike tune up on a weekday. how much with the discount?"
    sentences = [s for _, s in text_sentences(BIKES)]
    assert claimed_discount(question, sentences)[0] == "15"
    assert first(question, BIKES.replace("Full Tune-Up ............ CA$139\n", "")) == Fraction(159 * 85, 100)
    # (a question that counts names no one thing by a word in the singular: "6 pairs ... the multi-garment discount")
    garments = ["Customers who bring 5 or more garments at once receive 15% off the total."]
    assert claimed_discount("6 pairs of trousers for hemming. total after the multi-garment discount?", garments)[0] == "15"


def test_weight_bands_read_by_row_and_kinds_of_a_noun():
    # a last line that breaks the table's columns leaves its rows rows; "Over 50 kg ..." prices no 4 kg cat
    rows = [s for _, s in text_sentences(CREMATION)]
    assert "15.1 - 30 kg: Price £225." in rows
    assert first("our cat weighs 4 kg, how much is an individual cremation?", CREMATION) == 145
    assert first("Our dog weighs 25 kg. How much is an individual cremation?", CREMATION) == 225
    kinds = ["Assistance dogs, retired police dogs and registered rescue-charity pets: 20% off the cremation price."]
    assert claimed_discount("Our dog weighs 25 kg. How much is an individual cremation?", kinds) is None
    assert claimed_discount("my assistance dog weighs 25 kg, how much is an individual cremation?", kinds)[0] == "20"


def test_a_thing_counted_and_each_thing_s_own_count():
    question = "need 2 laser cut car key blades, whats the price before tax"
    assert prices_counted_thing(question, "Laser-cut car key blade: $85.00")
    assert not prices_counted_thing("need 1 laser cut car key blade", "Laser-cut car key blade: $85.00")
    assert first(question, KEYS) == 170
    assert asks_cost("2 padlock key copies and 1 mailbox key copy, how much w/ tax?")
    assert asks_price("whats the realtor lockbox cost including tax")
    sentences = [s for _, s in text_sentences(KEYS)] + ["10 or more copies of the same key: $2.75 each"]
    assert mentioned_items("2 padlock key copies and 1 mailbox key copy, how much?", sentences) == [
        ("2", "4.00"), ("1", "3.50")]


def test_a_fee_of_places_listed_by_name():
    from backend.agent.tools.visits import zone_charge
    zones = ["Outside the Greenbelt (Kanata, Orleans, Barrhaven, Stittsville) there is a flat travel fee of CA$20 per visit.",
             "We come to your home anywhere inside the Ottawa Greenbelt at no charge."]
    assert zone_charge("How much for a basic tune-up if I'm in Kanata?", zones) == "20"
    assert zone_charge("im inside the greenbelt, how much", zones) is None
    assert zone_charge("delivery to portobello?", ["Zone B (Leith, Portobello and Musselburgh): delivery charge £8"]) == "8"
    assert first("How much for a full tune-up if I'm in Kanata? Weekday works for me.", BIKES + "\n" + zones[0]) == 139 + 20


def test_a_thing_named_across_a_few_words_and_a_surcharge_label_listing_its_kinds():
    alterations = ("TROUSERS\nTake in / let out waist .......... £16.00\n\nSKIRTS\nShorten hem (lined) .......... £28.00\n"
                   "Take in sides .......... £26.00\n\nSURCHARGES\n- Leather, suede and sequinned fabrics: +30% on the listed price.\n")
    assert first("Could you take in the waist on a pair of trousers and also shorten a lined skirt? How much for the two?",
                 alterations) == 16 + 28
    assert first("i have a suede skirt that needs the sides taken in, how much would that be?", alterations) == Fraction(
        26 * 130, 100)


def test_what_a_thing_is_for_is_no_thing_of_the_bill():
    # "for my caravan" names no "Caravan, up to 7 m" beside "Exterior wash (boat or caravan)", as a thing or an extra
    yard = ("STORAGE RENT - per month (all prices in EUR)\n  Caravan, up to 7 m ---------------- 65.00\n\n"
            "SERVICES - prices excl. VAT, VAT 20% is added\n  Exterior wash (boat or caravan) ----------- 45.00\n"
            "  Tyre check & inflation -------------------- 8.00\n")
    assert first("exterior wash and a tyre check for my caravan please, how much with vat", yard) == Fraction(53 * 120, 100)


def test_a_distance_within_the_free_radius_is_no_count():
    aquarium = ("Add-ons\n- Gravel deep vacuum: $20\n- Fish sitting (feeding visit while you're away): $22 per visit\n\n"
                "Travel\nVisits within 10 miles of our shop are free of travel charges. Beyond 10 miles we add $1.50 for "
                "every mile over 10, charged per visit.\n")
    from backend.agent.tools.allowances import within_free_distance
    assert within_free_distance("we're about 6 miles from your shop", [aquarium]) == "6"
    assert within_free_distance("we're about 16 miles from your shop", [aquarium]) is None
    assert first("going away for a bit, need 3 fish sitting visits. we're about 6 miles from your shop, how much?",
                 aquarium) == 3 * 22


def test_a_price_for_children_alone_is_no_price_of_adults():
    falconry = ("FALCONRY CENTRE - PRICES\n\nHawk Walk (2 hours) - £75 per person\n\nChildren under 12: Owl Encounter £30 and Hawk Walk £50.\n\n"
                "Extras\n- Photo package (around 40 edited photos): £35 per booking\n")
    assert first("2 adults for the hawk walk on a saturday, plus the photo package. how much altogether?", falconry) == 2 * 75 + 35


def test_review_of_the_sets_before():
    # a stated conversion's distance is no customer's ("use 1 mile = 1.609 km"); a surcharge's part is named whole
    from backend.agent.tools.allowances import within_free_distance
    free = ["Visits within 10 miles of our shop are free of travel charges. Beyond 10 miles we add $1.50 for every mile over 10."]
    assert within_free_distance("how far is it in miles? use 1 mile = 1.609 km", free) is None
    assert within_free_distance("We're within 10 miles. Total?", free) == "10"
    windows = ("BRIGHTPANE WINDOW CLEANING\nStandard window, inside and outside: $7 per window.\n"
               "Third-floor windows and above: add $2 per window.\n")
    assert first("how much to get 12 standard windows cleaned inside and out?", windows) == 7 * 12


def test_review_of_the_twenty_fifth_session():
    # a thing named by one word keeps its price beside a longer name holding it ("a cake and cake delivery")
    assert first("a cake and cake delivery please, how much?", "BAKERY\nCake: £30\nCake delivery: £8\n") == 38
    # a price for a family or for infants is no price for children alone
    castle = "CASTLE ADMISSION\nFamily ticket (2 adults + 2 children): £40\nGuidebook: £5 each\n"
    assert first("a family ticket and 2 guidebooks, how much altogether?", castle) == 50
    assert first("a swim lesson for my baby and a towel hire, how much?", "POOL\nInfant swim lesson: £12\nTowel hire: £2\n") == 14
    # no zone fee of a package's list, nor of the places that pay nothing
    shop = ("APPLIANCE SHOP\nBosch washing machine: £350\nDelivery only: £20\n"
            "Delivery, Installation & Removal package: £45\n")
    assert first("the Bosch washing machine plus delivery, how much?", shop) == 370
    from backend.agent.tools.visits import zone_charge
    assert zone_charge("tune-up in Kanata, how much?", [
        "No travel fee for Kanata, Orleans or Barrhaven (Kanata, Orleans, Barrhaven); everywhere else it is $20."]) is None
    # a band's rate is no free radius: the trip's own distance is charged
    cabs = "CITY CABS - FARES\nFares are £2.50 per mile.\nJourneys over 30 miles are charged at £2.00 per mile.\n"
    assert first("how much for a 20 mile taxi ride?", cabs) == 50
    # a discount's name holding the thing in a compound is no one thing; "I'm a carer" claims "Registered carers"
    garments = ["Customers who bring 5 or more garments at once receive 15% off the total."]
    assert claimed_discount("a suit, a dress, a coat, a shirt and a skirt, total after the multi-garment discount?",
                            garments)[0] == "15"
    assert first("I'm a carer, how much is a swim?", "LEISURE CENTRE\nSwim: £6\n"
                 "Registered carers, full-time students and senior citizens: 50% off.\n") == 3
    # "open for lunch" asks the hours; the contact of a business named by its kind is its own
    from backend.agent.tools import search_documents
    from backend.agent.tools.sentences import asks_opening
    assert asks_opening("are you open for lunch on sundays?") and not asks_opening("are you open for new members?")
    assert search_documents.asks_contact("what's the phone number for the clinic?")
    assert search_documents.asks_contact("where is it?")
    assert not search_documents.asks_contact("what's the phone number for the police?")
