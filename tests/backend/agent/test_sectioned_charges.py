"""Charges that belong to one section of a price list (issue 15): a least order of on-site work,
a least charge of drop-offs, a trip charge a volume discount is not given on. Read from blind set
98 (a shredding service) after its runs; each test fails when its reading regresses."""

from __future__ import annotations

from fractions import Fraction

from backend.agent.tools.basket import basket_items
from backend.agent.tools.discounts import claimed_discount, claimed_surcharges

from .test_expressions import first

SHRED = """SHREDSTACK - PRICE LIST
All prices in Canadian dollars. 13% HST is added to every invoice.

ON-SITE SHREDDING (our truck comes to you)
- Trip charge: $45.00 per visit
- Standard bankers box (up to 15" x 12" x 10"): $11.00 per box
- Large bag (up to 30 lbs): $14.00 per bag
- Minimum on-site order: $95.00 before tax (trip charge included)

DROP-OFF SHREDDING (at our depot)
- $0.45 per lb, weighed on arrival
- Minimum drop-off charge: $10.00

Booking changes
Visits where our truck arrives and cannot access the material are charged a flat $35.00 fee.

Volume discount
When a single on-site visit includes 50 or more boxes, we take 10% off the box charges. The discount does not apply to
the trip charge, bags, media or extras.
"""


def test_a_least_order_of_a_section_is_that_sections():
    # 3 boxes and the trip charge come to $78: the on-site least, $95, is charged (with tax); the truck named after
    # "and want" is no thing bought (the $35 fee of a truck that cannot reach the material had been added)
    question = ("I just have 3 standard boxes and want your truck to come to my house on a Tuesday afternoon. What will I "
                "actually pay with tax?")
    assert basket_items(question) == []
    assert first(question, SHRED) == Fraction("107.35")
    # (a drop-off is no on-site order: its own least, $10, for 15 lb; none for 40 lb)
    assert first("I've only got about 15 lb of paper to drop off. What will that cost me before tax?", SHRED) == 10
    assert first("If I drop off 40 lb of old paperwork at your depot, how much is that before tax?", SHRED) == 18


def test_a_volume_discount_the_trip_charge_is_not_given():
    # "we take 10% off the box charges" is a discount; "on-site visit" asks the trip charge, added after it
    assert first("We're clearing out our archive: 60 standard bankers boxes, ground floor, weekday on-site visit. What's "
                 "the total including HST?", SHRED) == Fraction("722.07")


ON_SITE = """ON-SITE SHREDDING (our truck comes to you)
- Trip charge: $45.00 per visit
- Standard bankers box: $11.00 per box
- Large bag (up to 30 lbs): $14.00 per bag

EXTRAS
- Certificate of Destruction: free by email; $8.00 for a printed copy mailed to you
- Live video link of your destruction: $15.00 per job
- After-hours visit (before 8 am, after 6 pm, or Saturday): +$60.00 per visit
- Stairs with no elevator: $2.00 per box or bag for each floor above ground level
"""


def test_extras_of_an_on_site_visit_each_by_what_the_question_says():
    # the boxes' count before the floors' ("two floors" had been the count of the $11.00 box); an after-hours visit on a
    # Saturday; a printed certificate wanted in a clause of its own; stairs for a lack stated on both sides ("with no
    # elevator" had been a thing set aside), per box and for each floor
    assert first("Our office is two floors above ground level with no elevator. We need 20 standard boxes shredded "
                 "on-site on a Saturday, and we want a printed certificate mailed to us. What's the total before tax?",
                 ON_SITE) == 45 + 20 * 11 + 60 + 8 + 2 * 20 * 2
    # (on a weekday, at the ground floor, with the certificate by email: the boxes and the trip charge alone)
    assert first("Can you come to our ground-floor office on a weekday to shred 12 standard boxes? Total before tax?",
                 ON_SITE) == 45 + 12 * 11


def test_regressions_the_programs_half_caught():
    # a minimum under a heading of its own words ("MINIMUM CHARGE") is every visit's, whatever else stands under it
    locks = ("SERVICE CALL (TRIP CHARGE)\nEvery mobile visit within our service area .......... $45.00\n\nLABOR\n"
             "Rekey lock cylinder (per cylinder) .................. $25.00\n\nMINIMUM CHARGE\nMinimum charge per mobile "
             "visit: $95.00 for service call plus\nlabor combined.\n\nMILEAGE\nBeyond that we\ncharge $2.00 per mile.\n")
    assert first("can you come rekey just 1 lock cylinder on a weekday morning? how much", locks) == 95
    # a least of the section the bill's own line stands in ("Minimum cleaning charge per visit: £95." under "DRIVEWAY
    # CLEANING" beside the patios' line)
    cleaning = ("DRIVEWAY CLEANING (rate per m2)\nDriveway area     | Rate per m2\nUp to 40 m2       | £3.20\n"
                "Over 200 m2       | £1.90\n\nPATIOS & PATHS: £3.00 per m2, any size.\n"
                "Minimum cleaning charge per visit: £95.\n\nADD-ONS\nSteps: £25 per flight\n")
    assert first("just need my patio done, its about 30 sq m. how much?", cleaning) == 95
    # "we'll take $30 off" of a referral is no discount of a monthly plan, nor a customer's "and take 20% off them" of
    # one custom frame
    referral = ("Refer a friend who signs up to any plan and we'll take $30 off your next monthly plan bill for each new "
                "plan customer you refer.")
    assert claimed_surcharges("whats the monthly cost for the weekly plan on my 90 gal reef tank", [referral]) == []
    assert claimed_discount("a custom 90 cm frame, how much?", ["Buy 3 or more ready-made frames and take 20% off them."]) \
        is None
    # an hourly rate's least hours are not laid on another line's equal price ("Bungee Run: €180" beside "$180/hr, with
    # a 3-hour minimum"); "38 animals" is no rate ("38 a...")
    party = ("Bungee Run: €180.\nCommunity groups get 10% off.\n\nEVENTS Event coverage is €180/hr, with a 3-hour minimum "
             "for all events.\n")
    assert first("We're a community group and just want the bungee run for the day. Price?", party) == 162
