"""Charges that belong to one section of a price list (issue 15): a least order of on-site work,
a least charge of drop-offs, a trip charge a volume discount is not given on. Read from blind set
98 (a shredding service) after its runs; each test fails when its reading regresses."""

from __future__ import annotations

from fractions import Fraction

import pytest

from backend.agent.tools.arithmetic import evaluate
from backend.agent.tools.basket import basket_items
from backend.agent.tools.discounts import claimed_discount, claimed_surcharges
from backend.agent.tools.expressions import candidate_expressions

from .test_expressions import first, result

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


# The review of the thirty-sixth session: a helper's own price lists on which the session's first rules gave a wrong
# bill where the code before them was right or declined (None: declined is the only right answer). None is wrong now:
# each is right or declined.
REVIEW_36 = [
    ('YOGA STUDIO\nClass      | Drop-in | 10-class pass\nYoga       | £10     | £80\nSpin       | £12     | £100\nMats are £20 each to buy.\n',
     'How much for 2 yoga mats and a spin drop-in?', 52),
    ('KAYAK HIRE\nBoat       | Weekday | Weekend\nSingle kayak | £20   | £30\nDouble kayak | £35   | £45\nPaddle boards are £15 each.\n',
     'How much for 2 single kayaks and a paddle board on Tuesday? The weekend is too busy for us.', 55),
    ('KAYAK HIRE\nBoat       | Weekday | Weekend\nSingle kayak | £20   | £30\nDouble kayak | £35   | £45\nPaddle boards are £15 each.\n',
     "We'd like 2 single kayaks and a paddle board on Tuesday since the weekend is full. Price?", 55),
    ('HOTEL\nDouble room: £90 per night.\nHalf-board supplement: £50 per room per night.\n',
     'How much is a double room for one night and a half-board supplement?', 140),
    ('VENUE\nFull-day hire: £400.\nHalf-day hire: £250.\n',
     'How much to book one day and a half-day the next week?', 650),
    ('CHILDCARE\nFull day: £60.\nHalf day: £35.\n',
     'How much for one day and a half day of childcare?', 95),
    ('KENNELS\nBoarding: £25 per night.\n',
     'How much for one night and a half-day of daycare? Daycare is £15 a half-day', 40),
    ('MAN AND VAN\nMan and van: £40 per hour.\nFlats with no lift: £10 per floor.\n',
     "How much for 3 hours? We're on the ground floor, no lift needed.", 120),
    ('CARPET CLEANING\nCarpet cleaning: $3 per square metre.\nHomes without parking: $20 surcharge.\n',
     "How much to clean 30 square metres? There's no parking problem, we have a driveway.", 90),
    ('CLEANING\nRegular clean: £20 per hour.\nHomes with no vacuum: £5 equipment fee.\n',
     'How much for 3 hours? No vacuum needed, we only have hard floors.', 60),
    ('TUTOR\n- Home tutoring: £35 per hour\n- Travel: £0.40 per mile\n',
     "It's 10 miles each way from your office. How much for the travel?", 4),
    ('MOBILE MECHANIC\n- Call-out: £50 per visit\n- Mileage: £0.50 per mile, return mileage is free\n',
     "I'm 20 miles from your workshop. Can you come out? Total?", 60),
    ('PIANO TUNER\n- Tuning: $100\n- Travel: $1 per mile (return distance not charged)\n',
     "I'm 30 miles from your studio. How much for a tuning?", 130),
    ('DOG GROOMING\n- Full groom: $60\n- Mobile grooming call-out fee: $25 per visit\n',
     'Do you have on-site parking? How much is a full groom?', 60),
    ('CLEANING\n- Cleaning: £20 per hour, minimum 24 hours notice required.\n',
     'How much for 3 hours of cleaning?', 60),
    ('BABYSITTING\n- Babysitting: $15 per hour, minimum 4 hours notice.\n',
     'How much for 2 hours of babysitting tonight?', 30),
    ('BIKE HIRE\n- E-bike: £8 per hour, min. 2 hrs notice for delivery.\n',
     'How much for an e-bike for 1 hour?', 8),
    ('BOAT HIRE\n- Rowing boat: £12 per hour, 2 hours minimum at weekends.\n',
     'How much for a rowing boat for 1 hour on Wednesday?', 12),
    ('STUDIO HIRE\n- Rehearsal room: £15 per hour (minimum 3 hours on Fridays and Saturdays)\n',
     'How much for the rehearsal room for 2 hours on Monday?', 30),
    ('BAKERY\n- Sourdough loaf: £4.50\n- Croissant: £2\n- Minimum online order: £15\n',
     "I'll pop into the shop for 2 sourdough loaves. How much?", 9),
    ("VAN HIRE\nSmall van hire costs £50 per day.\nOur Small Van is perfect for single items, while the Luton Van suits house moves. It's £90 per day.\n",
     'How much is a small van for 2 days?', 100),
    ("GYM\nThe Silver Plan costs £40 a month for off-peak classes.\nUpgrade from the Silver Plan to the Gold Plan for unlimited classes. It's £60 a month.\n",
     'How much is the silver plan for 3 months?', 120),
    ('DOG DAYCARE\n- Daycare: £100 per week\n- Pet insurance add-on: £8 per month\n',
     'How much for a year of daycare?', 5200),
    ('CLEANER\n- Weekly clean: £60 per visit\n- Monthly deep clean: £120 per month\n',
     'What would a year of weekly cleans cost?', 3120),
    ("BIKE SHOP\n- Full service: £90\nWe recommend a Full Service every year. It's £20 off if you book in winter.\n",
     'How much for a full service in summer?', 90),
    ("BIKE SHOP\n- Full service: £90\nWe recommend a Full Service every year. It's £20 off if you book in winter.\n",
     'How much for 2 full services?', 180),
    ('GYM\nMembership: $400 for the year.\nLocker rental: $10 per month.\n',
     'How much is membership for a year?', 400),
    ('GYM\nMembership: $400 for 12 months.\nLocker rental: $10 per month.\n',
     'How much is membership for a year?', 400),
    ('GYM\nMembership: $45 per month.\nPersonal training: $40 per session.\n',
     'How much for a year of weekly personal training sessions?', None),
    ('GYM\nMembership: $45 per month.\nPersonal training: $40 per session.\n',
     "I've been a member for a year. How much are 3 personal training sessions?", 120),
    ('DOG WALKING\nDaily walk: £12 per walk.\nPet insurance partner plan: £8 per month.\n',
     "I've used you for a year now. How much for 5 daily walks?", 60),
    ('LAWN CARE\nFortnightly mowing: $35 per visit.\nMonthly weed treatment: $25 per month.\n',
     'How much for a year of fortnightly mowing?', 910),
    ('LAWN CARE\nFortnightly mowing: $35 per visit.\nPay for the whole year upfront and get 2 months free.\n',
     'How much if I pay the whole year upfront for fortnightly mowing?', None),
    ('GYM\nGold: £60 per month.\nSilver: £40 per month.\nGold members who prepay a full year get 2 months free.\n',
     'If I prepay a year of Silver, how much do I pay?', 480),
    ('TUTORING\nWeekly lesson: £30 per lesson.\nPay a year upfront and get 2 months free.\n',
     'If we pay for the full year upfront for weekly lessons, how much?', None),
    ('STORAGE\nSmall unit: $360 per year or $35 per month.\nPay a year in advance and get one month free.\n',
     'If I pay a year in advance for a small unit what do I pay?', 330),
    ('TRANSLATION\nTranslation: $0.10 per word.\nLegal, medical and technical documents carry a 20% surcharge.\n',
     "I'm a medical student. How much to translate my 1,000-word CV?", 100),
    ('TRANSLATION\nTranslation: $0.10 per word.\nLegal, medical and technical documents carry a 20% surcharge.\n',
     "How much to translate a 1,000-word wedding speech? It's nothing technical.", 100),
    ('DOG GROOMING\n- Bath and brush: £30\n- Nail trim: £12\n- Minimum grooming charge: £25\n',
     'How much for a bath and brush and a nail trim?', 42),
    ('CLEANING\nRegular clean: £25 per hour, minimum 3 hours on Saturdays.\n',
     'How much for 2 hours of regular cleaning on Tuesday?', 50),
    ('DOG GROOMING\nGROOMING\n- Bath and brush: £30\n- Nail trim: £12\n- Minimum grooming charge: £25\n',
     'How much for a bath and brush and a nail trim?', 42),
    ('CAR VALETING\nINTERIOR\n- Vacuum: £15\n- Seat shampoo: £40\n- Minimum interior charge: £30\nEXTERIOR\n- Wash: £12\n',
     'How much for a vacuum and a seat shampoo?', 55),
]


@pytest.mark.parametrize("document, question, want", REVIEW_36)
def test_review_of_the_thirty_sixth_session(document, question, want):
    found = candidate_expressions(question, [result(document)], None, evaluate)
    got = evaluate(found[0]).q if found else None
    assert got is None or (want is not None and abs(got - Fraction(str(want))) < Fraction(1, 100)), (question, found[:2])


def test_regressions_the_programs_half_caught_after_the_review():
    # "Crew rate ...: $160/hr" with a least of 2 hours is the crew's, though "First stump: $160" prices 160 too (blind 78)
    arborist = ("All prices are before 5% GST.\n\nCREW TIME Crew rate (2 certified arborists + truck and chipper): $160/hr\n"
                "Minimum charge per visit: 2 hours\n\nSTUMPS\nFirst stump (up to 30 cm across): $160\n")
    assert first("i only need your crew for about an hour on a weekday, whats that cost including GST", arborist) == 336
    # "3 movers" is no 3 hours of "3 hour minimum": a bill of the travel fee times 3 movers is no bill (blind 58)
    movers = ("3 movers: Mon-Thu $179/hr; Fri-Sun & holidays $199/hr.\n* 3 hour minimum on all local moves.\n"
              "* Travel fee: flat $75 per move (covers drive time to you and back to our yard).\n")
    found = candidate_expressions("If I book 3 movers on a Saturday and the job only takes 2 hours, what do I pay "
                                  "including the travel fee?", [result(movers)], None, evaluate)
    assert not found or evaluate(found[0]).q == 3 * 199 + 75
