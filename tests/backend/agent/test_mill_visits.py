"""A portable sawmill's rate card and terms as blind set 105 wrote them (issue 15; read after its runs): a
row's label wrapped over two lines, a row whose leader is a gap, a kind whose members are listed in
brackets ("softwood (pine, spruce, ...)"), "HST (13%) is EXTRA", least charges of one kind of work per
load or visit, travel beyond a free distance with a visit's fee, a volume discount over thousands of
board feet, and a refund window from hours to days of a flat deposit. Each test fails on the code
before them."""

from __future__ import annotations

from fractions import Fraction

from backend.agent.tools.identifiers import as_member_kinds
from backend.agent.tools.segmentation import text_sentences

from .test_expressions import first

CARD = ("TAMARACK MOBILE MILLING - 2025 RATE CARD\n"
        "All prices are in Canadian dollars. HST (13%) is EXTRA on every item below.\n\n"
        "ON-SITE MILLING (Wood-Mizer LT40 and operator)\n"
        "  Hourly rate ........................ $115.00 per hour\n"
        "  Board-foot rate, softwood\n"
        "    (pine, spruce, cedar, hemlock) ... $0.55 per board foot\n"
        "  Board-foot rate, hardwood\n"
        "    (oak, maple, cherry, walnut, ash)  $0.70 per board foot\n"
        "  Minimum milling charge per visit ... $345.00 (equal to 3 hours)\n\n"
        "SETUP & TRAVEL\n"
        "  Setup fee (every visit) ............ $60.00\n"
        "  Travel: first 40 km from our yard free, then $1.40 per km\n"
        "  beyond 40 km (one-way road distance, charged once per visit)\n\n"
        "SLABBING (live-edge slabs wider than 30\")\n"
        "  Slab mill with operator ............ $160.00 per hour, 2-hour minimum\n\n"
        "KILN DRYING (at our yard)\n"
        "  Softwood ........................... $0.45 per board foot\n"
        "  Hardwood ........................... $0.85 per board foot\n"
        "  Minimum kiln charge per load ....... $150.00\n\n"
        "VOLUME DISCOUNT\n"
        "Board-foot jobs over 2,000 board feet get 10% off the board-foot\n"
        "milling charge. The discount does not apply to setup, travel,\n"
        "blades, kiln drying or any other fee.\n")
TERMS = ("1. Deposits\nA $150.00 deposit holds your milling date. The deposit is applied\nto your final invoice.\n\n"
         "2. Cancellations by you\n- More than 7 days before your date: deposit refunded in full.\n"
         "- 48 hours to 7 days before: 50% of the deposit is refunded.\n"
         "- Less than 48 hours before, or no access on the day: the deposit\n  is kept in full.\n")


def test_a_label_wrapped_over_two_lines_is_a_row_of_its_own():
    sentences = [s for _, s in text_sentences(CARD)]
    assert "Hourly rate: $115.00 per hour" in sentences
    assert "Board-foot rate, softwood (pine, spruce, cedar, hemlock): $0.55 per board foot" in sentences
    # (a row among rows of dots whose leader is a gap)
    assert "Board-foot rate, hardwood (oak, maple, cherry, walnut, ash): $0.70 per board foot" in sentences
    assert first("If I book you by the hour and the milling takes 5 hours, what's the milling charge alone before HST?",
                 CARD) == 575


def test_a_member_named_as_its_kind():
    lines = [s for _, s in text_sentences(CARD)]
    assert as_member_kinds("800 board feet of pine kiln dried", lines) == "800 board feet of pine softwood kiln dried"
    # (not a kind the question names itself, nor one with no line of its own)
    assert as_member_kinds("800 board feet of softwood pine", lines) == "800 board feet of softwood pine"
    assert as_member_kinds("a blade hit wire", ["Blade ruined by metal (nails, wire, spikes): $45.00"]) == "a blade hit wire"
    assert first("I'd like 800 board feet of pine kiln dried. What's the cost before tax?", CARD) == 360
    # (a label's word saying it is a rate makes it no wider than the kiln's "Hardwood")
    assert first("We've got red oak that should come out to about 1,200 board feet. We're 25 km from you. Board-foot "
                 "pricing please - total including setup and HST?", CARD) == 1017


def test_least_charges_of_one_kind_per_load_or_visit():
    assert first("I want to kiln dry just 120 board feet of cherry. What's that cost including HST?", CARD) == Fraction("169.50")
    assert first("I only have a couple of logs, probably 2 hours of milling on the hourly rate, and I'm 10 km away. What "
                 "will I pay in total with setup and HST?", CARD) == Fraction("457.65")


def test_travel_beyond_the_free_distance_with_the_setup_fee_and_tax():
    assert first("My farm is 65 km from your yard. If I book 4 hours of milling at the hourly rate, what's the total "
                 "with setup, travel and HST?", CARD) == Fraction("627.15")


def test_a_volume_discount_over_thousands_of_board_feet():
    assert first("We need 3,000 board feet of spruce milled at the board-foot rate, 30 km from your yard. What's the "
                 "total including setup and HST after any discount?", CARD) == Fraction("1745.85")


def test_a_flat_deposit_refunded_by_a_window_from_hours_to_days():
    assert first("I paid the deposit but need to cancel - my date is 4 days away. How much of the deposit do I get "
                 "back?", CARD, TERMS) == 75
    assert first("I paid the deposit but need to cancel - my date is 10 days away. How much of the deposit do I get "
                 "back?", CARD, TERMS) == 150


def test_a_least_count_of_things_is_not_met_by_naming_them():
    from backend.agent.tools.discounts import claimed_discount
    offer = ["Board-foot jobs over 2,000 board feet get 10% off the board-foot milling charge."]
    assert claimed_discount("How much do you charge per board foot to mill walnut?", offer) is None
    assert claimed_discount("We need 3,000 board feet of spruce milled. Total after any discount?", offer) is not None


REPAIRS = ("MAPLECREST APPLIANCE REPAIR\n(All prices in Canadian dollars. 13% HST is added to every invoice.)\n\n"
           "SERVICE CALL\nService call, diagnosis and first 30 minutes of labour ...... $99.00\n\n"
           "FLAT-RATE REPAIRS\nFlat rates cover labour and the service call. Parts are extra.\n"
           "  Dryer belt replacement ........................ $129.00\n"
           "  Fridge defrost system repair .................. $189.00\n\n"
           "COMMON PARTS\n  Fridge defrost heater ......................... $55.00\n")


def test_a_visit_fee_the_flat_rate_covers():
    # (blind set 88: "weekday visit is fine" says a visit, and the flat rate covers its service call)
    assert first("my fridge defrost system needs repairing, it will need a new defrost heater. weekday visit is fine. "
                 "How much with tax?", REPAIRS) == Fraction("275.72")  # (189 + 55) * 1.13


def test_a_heading_in_capitals_names_its_surcharge():
    from backend.agent.tools.discounts import claimed_surcharges
    lines = ["EXPRESS SERVICE Want results sooner? Express turnaround adds 25% to the package or hourly research fee."]
    assert claimed_surcharges("What would the Family Tree Builder package cost with the express service?", lines)
