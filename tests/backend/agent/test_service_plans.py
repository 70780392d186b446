"""Bills of a service business read from the terms it writes them in (twenty-third session, blind
sets 67-68): a price band by volume ("up to 55 gallons"), travel beyond a free radius charged per
visit, a plan of so many visits a month with its least term, a refund by how long before a
booking it is cancelled, a deposit that is a share of the bill, an amount saved per person on
named days, a discount only for each additional thing, the adults of a party at the price per
person beside a children's price; and the kinds of figure no bill is made of (a volume or a
percentage of the question as a count, a price read where the question's measure stands, no
price at all, a telephone number's digits). Each failed on the code before it."""

from __future__ import annotations

from fractions import Fraction

from backend.agent.operations import asks_cost
from backend.agent.tools.allowances import travel_charge
from backend.agent.tools.arithmetic import evaluate
from backend.agent.tools.bands import outside_band
from backend.agent.tools.discounts import claimed_discount
from backend.agent.tools.expressions import candidate_expressions
from backend.agent.tools.plans import over_plan, upfront_months, year_in_months
from backend.agent.tools.basket import basket_items
from backend.agent.tools.plausible import misread_figures, plausible
from backend.agent.tools.refunds import refund_expression

from .test_asked_prices import planned
from .test_expressions import first, result

POOLS = """HARBOUR POOL & POND CARE - VISIT PRICES

Pond clean (price per pond, per visit)
- Garden pond up to 500 litres: £55
- Garden pond 501-2000 litres: £80
- Garden pond over 2000 litres: £125
- Koi pond up to 2000 litres: £95
- Koi pond over 2000 litres: £150

Extras (per pond, per visit)
- Pump service: £30
- Extra water change beyond 30%: £12 per additional 10%

Travel
Visits within 8 miles of our yard are free of travel charges. Beyond 8 miles we add £2.00 for every mile over 8, charged per visit.

Call 01632 960 277 to book."""

PLANS = """HARBOUR POOL & POND CARE - PLANS

- Monthly plan: 1 visit per month, 5% off the visit price.
- Fortnightly plan: 2 visits per month, 10% off the visit price.
Plans are billed monthly and need a minimum commitment of 6 months.

Second ponds
If we clean more than one pond at the same address on one visit, every additional pond gets 25% off its visit price.

Deposits
Pond rebuilds need a 30% deposit when you book.

Cancelling a visit: please give us at least 48 hours' notice. Late cancellations are charged 50% of the visit price.

Cancelling a rebuild
- More than 21 days before: full refund minus a £15 admin fee.
- 8 to 21 days before: 40% refund.
- Less than 8 days before: no refund."""

BOATS = """SEAL COVE BOAT TRIPS - PRICES

Island Cruise (2 hours) - £38 per person
Seal Safari (3 hours) - £52 per person
Sunset Sail (1.5 hours) - £30 per person

Children under 14: Island Cruise £20 and Seal Safari £30.

- Hot drinks for Sunset Sail guests: £4.50 per person
- Photo pack (about 30 photos, emailed the same day): £20 per booking
- Private charter: add £50 per booking to any trip

Bank holidays carry a £3 surcharge per passenger.

Weekday saver
Book for a Tuesday or a Wednesday and save £6 per paying passenger on the Island Cruise and the Seal Safari."""


def test_a_band_by_volume_is_the_row_of_the_question_s_size():
    # "Garden pond up to 500 litres: £55" is not the price of an 800 litre pond, nor is 800 a count
    assert outside_band("my 800 litre garden pond", "- Garden pond up to 500 litres: £55")
    assert not outside_band("my 800 litre garden pond", "- Garden pond 501-2000 litres: £80")
    assert outside_band("a 90 gal reef tank", "- Saltwater tank up to 55 gallons: $90")
    assert first("how much to clean my 800 litre garden pond?", POOLS) == 80
    assert first("how much is a clean for a 3000 litre koi pond?", POOLS) == 150


def test_a_volume_or_a_percentage_of_the_question_is_no_count():
    sentences = ["- Garden pond 501-2000 litres: £80", "- Pump service: £30",
                 "- Extra water change beyond 30%: £12 per additional 10%", "Deposit: $90."]
    # a price times the question's volume, or its percentage, unless priced by it
    assert misread_figures("80 * 800", "my 800 litre garden pond, how much?", sentences)
    assert misread_figures("30 * 45", "a 45% water change and a pump service, how much?", sentences)
    assert not misread_figures("12 * 2", "a 50% water change, how much extra?", sentences)
    # a price read where the question's measure stands ("$90" with "my 90 gal tank"), or a measure with a price
    assert misread_figures("90 * 90", "weekly plan on my 90 gal reef tank, monthly cost?", sentences)
    assert misread_figures("90 - 80", "weekly plan on my 90 gal reef tank, monthly cost?", sentences)
    assert misread_figures("80 / 90", "weekly plan on my 90 gal reef tank, monthly cost?", sentences)
    # (a distance less an allowance in the same measure is travel: "(16 - 10)")
    assert not misread_figures("(16 - 8) * 2.00", "I live 16 miles away, what's the travel charge?",
                               ["Beyond 8 miles we add £2.00 for every mile over 8.", "Parking permit: £8."])


def test_travel_beyond_a_free_radius_is_added_and_charged_per_visit():
    sentences = ["Visits within 8 miles of our yard are free of travel charges.",
                 "Beyond 8 miles we add £2.00 for every mile over 8, charged per visit."]
    assert travel_charge("I'm 20 miles from you, how much?", sentences) == ("(20 - 8) * 2.00", "20", True)
    assert travel_charge("I'm 5 miles from you, how much?", sentences) is None
    # the job's price plus the travel beyond 8 miles (not the whole 20 miles at £2)
    assert first("I'm about 20 miles from your yard. How much for one clean of a 300 litre garden pond, "
                 "including travel?", POOLS) == 55 + 12 * 2
    # charged on every visit the question counts
    assert first("we need 3 pump service visits while we're away, 12 miles out from you. total with travel?",
                 POOLS) == 3 * 30 + 3 * 4 * 2


def test_a_plan_s_visits_a_month_and_its_least_term():
    sentence = "- Fortnightly plan: 2 visits per month, 10% off the visit price."
    assert over_plan("(80) * (100 - 10) / 100", "the monthly cost of the fortnightly plan?", sentence, [sentence]) \
        == "(80) * (100 - 10) / 100 * 2"
    assert over_plan("(80) * (100 - 10) / 100", "one visit on the fortnightly plan?", sentence, [sentence]) is None
    assert first("whats the monthly cost for the fortnightly plan on my 800 litre garden pond", POOLS, PLANS) \
        == Fraction(80 * 90 * 2, 100)
    assert first("If I sign up for the monthly plan for my 300 litre garden pond, what's the total I'd pay over "
                 "the minimum commitment?", POOLS, PLANS) == Fraction(55 * 95 * 6, 100)


def test_a_discount_for_each_additional_thing_needs_two():
    sentence = ("If we clean more than one pond at the same address on one visit, every additional pond gets "
                "25% off its visit price.")
    assert claimed_discount("how much to clean my 300 litre garden pond?", [sentence]) is None
    assert claimed_discount("we have a garden pond, what's the visit price?", [sentence]) is None
    assert claimed_discount("we have 2 ponds, how much with the discount?", [sentence]) is not None
    assert first("how much to clean my 300 litre garden pond?", POOLS, PLANS) == 55


def test_a_refund_by_how_long_before_the_booking():
    sentences = ["- More than 21 days before: full refund minus a £15 admin fee.", "- 8 to 21 days before: 40% refund.",
                 "- Less than 8 days before: no refund."]
    assert refund_expression("I paid £600 for a rebuild but need to cancel, it's 10 days away. How much do I get back?",
                             sentences) == "600 * 40 / 100"
    assert refund_expression("I paid £600, cancelling 5 weeks before. What's refunded?", sentences) == "600 - 15"
    assert evaluate(refund_expression("I paid £600 and it's 3 days away, can I get a refund?", sentences)).q == 0
    assert refund_expression("How much do I get back if I cancel?", sentences) is None  # no amount paid
    assert first("I paid £600 for the rebuild but need to cancel, it's 10 days away. How much do I get back?",
                 POOLS, PLANS) == 240


def test_a_deposit_that_is_a_share_of_the_bill():
    assert first("Booking the Seal Safari for 2 adults - how much is the deposit I pay now?", BOATS,
                 "Booking\n\nA 25% deposit is taken at booking and the balance is due on the day.") \
        == Fraction(52 * 2 * 25, 100)


def test_an_amount_saved_per_person_on_named_days():
    assert first("how much for 2 people on the Seal Safari on a Tuesday?", BOATS) == 52 * 2 - 2 * 6
    assert first("how much for 2 people on the Seal Safari on a Monday?", BOATS) == 52 * 2


def test_the_adults_of_a_party_pay_the_price_per_person():
    assert asks_cost("Hi, how much is a Seal Safari for me, my husband and our two kids (9 and 10)?")
    assert first("Hi, how much is a Seal Safari for me, my husband and our two kids (9 and 10)?", BOATS) \
        == 2 * 52 + 2 * 30


def test_a_price_for_whom_a_thing_is_for_is_not_the_thing_s():
    # "Hot drinks for Sunset Sail guests: £4.50" is no price of the sail; "save £6 per paying passenger" none of a trip
    assert first("3 of us want the Sunset Sail, what's the total?", BOATS) == 3 * 30
    assert first("how much is the Island Cruise for 4 people on Saturday?", BOATS) == 4 * 38


def test_a_bill_holds_a_price():
    sentences = ["Groups of 8 or more get 10% off.", "Book midweek and save £10 per paying participant.",
                 "There is free parking for 30 cars."]
    question = "8 of us are coming and 2 more are watching, we're splitting it across all 10 of us, how much each?"
    assert plausible(["(10 + 2) / 10", "(8 + 2) / 10"], question, sentences) == []
    assert plausible(["30 * 4"], "how much will it cost for the 4 of us?", sentences) == []
    # a count of the question equal to a price is still a price times a count
    assert plausible(["5 * 2"], "me and my 2 kids want 5 scoops, how much?", ["Scoops are £2 each."]) == ["5 * 2"]
    # not for a question asking no money ("In total?" over a list of counts)
    assert plausible(["3 + 4"], "In total?", ["3 things. 4 things."]) == ["3 + 4"]


def test_a_telephone_number_s_digits_are_no_figure():
    # the last group of "Tel: 0113 496 0722", read alone
    assert misread_figures("0722 * 15", "What would a sweep cost? I live 15 km out.",
                           ["Unit 4, Tanner's Yard, Leeds LS9 8AB Tel: 0113 496 0722", "Sweep: £85."])


def test_a_party_s_extras_and_a_child_named():
    # a thing per person "with" the trip, for each of the party; a photo pack whose aside holds a comma
    assert first("3 of us want the Sunset Sail with the hot drinks, and we want the photo pack too. total?", BOATS) \
        == 3 * 30 + Fraction("3") * Fraction("4.50") + 20
    # "what's the price for ..." lists things too; a private charter is added per booking
    assert first("what's the price for a private Seal Safari for 4 adults, plus the photo pack?", BOATS) \
        == 4 * 52 + 20 + 50
    # a son named, not counted, beside counted adults: a child, one of the party the surcharge counts
    assert first("how much for the seal safari on the bank holiday monday, 3 adults and my son who's 11?", BOATS) \
        == 3 * 52 + 30 + 4 * 3


def test_the_travel_asked_alone_is_the_travel():
    assert first("Our house is 14 miles from your yard. What's the travel charge?", POOLS) == 6 * 2


def test_a_late_cancellation_is_charged_its_share():
    assert first("ugh I have to cancel tomorrow's clean for my 800 litre garden pond, how much will I be charged?",
                 POOLS, PLANS) == 40
    # with enough notice, no charge is worked out of the price
    assert candidate_expressions("I need to cancel my clean in 5 days, how much will I be charged?",
                                 [result(POOLS, PLANS)], None, evaluate)[:1] != ["80 * 50 / 100"]


def test_a_no_show_and_a_cancellation_with_less_notice_than_asked_are_charged_their_share():
    # blind set 95, read: a no-show was no question for the calculator, and "it's less than 24 hours away" was a day's
    # notice, enough for "at least 24 hours ahead"
    from backend.agent.tools.calculator import spec
    from backend.agent.tools.refunds import late_cancellation
    salon = ("PRICES\nSkin fade: $45\nHot towel shave: $38\n\nHome visits have a minimum service spend of $120.\n\n"
             "CANCELLATIONS\n- Cancel or move your booking at least 24 hours ahead at no cost.\n- Cancellations with "
             "less than 24 hours' notice are charged 30% of the service price.\n- No-shows are charged 50% of the "
             "service price.\n")
    lines = salon.split("\n")
    assert late_cancellation("If I no-show on a skin fade booking how much am I charged?", lines) == "50"
    assert late_cancellation("I need to cancel my shave tomorrow, it's less than 24 hours away. the fee?", lines) == "30"
    assert late_cancellation("I need to cancel my shave, it's 3 days away. the fee?", lines) is None
    assert first("If I no-show on a skin fade booking how much am I charged?", salon) == Fraction("22.5")
    assert first("I need to cancel my hot towel shave tomorrow morning, it's less than 24 hours away. what's the fee?",
                 salon) == Fraction("11.4")
    calc = spec(lambda texts: [[0.0] * 4 for _ in texts], passages=lambda u, t: [("salon.txt", salon)])
    assert calc.relevant("u", "If I no-show on a skin fade booking how much am I charged?")


def test_travel_before_a_bill_is_shared_and_one_visit_with_extras():
    assert first("we need a pump service. we live 14 miles from your yard and there are 2 of us splitting the bill "
                 "evenly, how much each?", POOLS) == Fraction(30 + 6 * 2, 2)
    # "one visit" is the occasion, not a thing bought; the pond's row by its size, then the extra named
    assert first("I have a 300 litre garden pond, how much would one visit be if I add the pump service?", POOLS) \
        == 55 + 30


def test_review_of_the_twenty_third_session():
    # prices written without a sign are prices (the "no price" rule)
    assert first("How much for 3 day passes?", "Monthly membership: 40 CHF. Day pass: 12 CHF.") == 36
    assert first("How much for 2 nights?", "Room rate: USD 95 per night.") == 190
    assert first("How much for 3 thalis?", "Thali: Rs. 250\nLassi: Rs. 80") == 750
    # whom an entry is for names its price
    entry = "Entry for adults: £10\nEntry for children: £5"
    assert first("How much for 2 adults?", entry) == 20
    assert first("How much for 2 children?", entry) == 10
    # a quantity times an equal price per that measure
    assert first("How much for 3 kg of apples?", "FARM SHOP\n\nApples: £3 per kg\nPotatoes: £2 per kg") == 9
    assert first("How much to sand 20 square metres of floor?", "Floor sanding: £20 per square metre.") == 400
    # a booking that might be cancelled is priced, not charged for cancelling
    spa = ("Swedish massage (60 minutes): £60.\nHot stone massage: £75.\nPlease give us at least 48 hours' notice to "
           "cancel. Late cancellations are charged 50% of the treatment price.")
    assert first("I'd like to book 2 Swedish massages for tomorrow, and I might need to cancel. How much would that "
                 "be?", spa) == 120
    assert first("How much for 2 hot stone massages tomorrow? Do you charge if we cancel?", spa) == 150
    # a deposit the documents price is not a share of the bill
    assert first("What's the deposit for 2 bikes?", "Bike hire £30 per day, plus a £50 deposit per bike.\n"
                 "Group bookings of 10 or more pay a 25% deposit when booking.") == 100
    # a son who is no ticket
    tickets = "Adult ticket: £12\nChild ticket: £6"
    assert first("How much for 2 adults? My son is driving us there.", tickets) == 24
    assert first("How much for 2 adult tickets for me and my son? He's 30.", tickets) == 24
    # a plan's visits the question counts itself
    assert first("What would 2 visits a month cost on the fortnightly plan?", "Standard visit: £115.\n"
                 "Fortnightly plan: 2 visits per month, 10% off the regular visit price.") == 207
    # a refund policy in one sentence: each window by its clause
    policy = ("Cancellations receive a full refund more than 7 days before, a 50% refund between 3 and 7 days before, "
              "and no refund within 72 hours.")
    assert first("I paid £300 for the kayak tour and have to cancel, it's 4 days away. How much do I get back?",
                 policy) == 150
    assert first("I paid £300 for the kayak tour and have to cancel, it's 10 days away. How much do I get back?",
                 policy) == 300
    # travel with the days hired, before a share, and never a price per mile for km
    hire = "Bouncy castle hire: £90 per day.\nDelivery is free within 10 miles; after that £2 per mile."
    assert first("How much is the bouncy castle for 2 days? We're 14 miles away.", hire) == 90 * 2 + 4 * 2
    assert first("We're 14 miles away and 4 of us are splitting the bouncy castle for a day, how much each?", hire) \
        == Fraction(90 + 8, 4)
    found = candidate_expressions("The venue is 30 km away, how much for the bouncy castle?", [result(hire)], None,
                                  evaluate)
    assert all(evaluate(e).q not in (2700, 60) for e in found)


GROOMER = """Suds & Snips Mobile Dog Grooming - Prices

Services
- Bath and brush (small dog): £30 per dog
- Bath and brush (large dog): £45 per dog
- Full groom with haircut: £55 per dog
- Nail clipping only: £10 per dog

Travel charge
Travel is free within 4 miles of our yard. Beyond 4 miles we charge £2 per mile for every mile beyond the first 4 miles.

Multi-dog discount
Book 3 or more dogs at the same visit and get 10% off the grooming total (travel is not discounted).

Deposit
A deposit of 20% of the total bill is required when booking.

Cancellation and refunds
Cancel 7 or more days before the appointment: full refund of the deposit.
Cancel 2 to 6 days before the appointment: 50% of the deposit is refunded.
Cancel less than 2 days before the appointment: the deposit is not refunded."""


def test_the_new_user_pass_of_the_twenty_third_session():
    # a refund of what the customer says he paid, by the window of days before
    assert first("I paid a £40 deposit and I cancel 4 days before the appointment. How much do I get back?",
                 GROOMER) == 20
    assert first("I paid a £40 deposit and cancel 10 days before, how much do I get back?", GROOMER) == 40
    assert first("I paid a £40 deposit and cancel 1 day before the appointment. How much do I get back?",
                 GROOMER) == 0
    # a deposit as a share of a bill the question states
    assert first("If my total bill is £180, how much deposit do I have to pay?", GROOMER) == 36
    # "Beyond 4 miles we charge £2 per mile": the first 4 free
    assert first("What is the travel charge if I live 20 miles away?", GROOMER) == 32
    # a name joined by "with" or "and" is one thing ("Full groom with haircut", "Bath and brush")
    assert first("How much is a full groom with haircut for 2 dogs?", GROOMER) == 110
    assert first("How much is a bath and brush for 2 large dogs?", GROOMER) == 90
    # the travel after the discount, which it is not part of
    assert first("3 large dogs bath and brush, 12 miles away, total including travel?", GROOMER) \
        == Fraction(3 * 45 * 90, 100) + 8 * 2


def test_review_of_the_new_user_fixes():
    # an allowance opening the rate's sentence keeps the price of the allowance in the sentence before
    assert first("How much to park for 5 hours?", "Car park\n\nParking costs £5 for up to 2 hours. After 2 hours, "
                 "each extra hour is £3.") == 14
    assert first("How much to hire the main hall for 5 hours?", "Hall hire\n\nThe main hall costs £120 for 3 hours. "
                 "Over 3 hours, each extra hour is £30.") == 180
    assert first("How much is delivery if I live 12 miles away?", "Deliveries\n\nLocal delivery within 5 miles is "
                 "£6. Beyond 5 miles, we charge £1.20 per additional mile.") == Fraction("14.40")
    # the job found before the discount, the travel added after it; a shared bill keeps its basket
    valet = ("Shine Mobile Valeting - Prices\n\n- Mini valet: £25 per car\n- Full valet: £60 per car\n\nTravel: free "
             "within 5 miles, then £1 per mile over 5 miles.\n\nBook 3 or more cars at the same visit and get 10% off "
             "the valeting total.")
    assert first("How much is a full valet for 3 cars? I live 15 miles away.", valet) == 162 + 10
    assert first("2 full valets, we live 15 miles away and the 2 of us split the bill. How much each?", valet) == 65
    # a refund asked of a deposit is the refund, and a unit's price repeated is no bill
    assert first("I paid a £40 deposit and cancel 4 days before the appointment. How much deposit do I get back?",
                 GROOMER) == 20
    assert first("The price of a full groom is £55, right? What's the deposit for 2 dogs?", GROOMER) == 22
    # a price with no sign, beside one with a sign, is still a price
    assert first("How much does it cost to rent a bike for 3 days?", "Bike hire\n\nBikes rent for 25 per day. "
                 "Helmets rent for 4 per day. A £50 deposit is taken per bike.") == 75
    # a thing counted by its own number is no part of another's name
    assert first("How much for 2 wash and dry loads and 3 dry only loads?", "Launderette\n\n- Wash and dry: £8 per "
                 "load\n- Dry only: £4 per load") == 28


SHRED = """SHREDSTACK PRICE LIST
All prices in Canadian dollars. 13% HST is added to every invoice.

SCHEDULED SERVICE (locked consoles emptied on a schedule)
Console size        | Monthly service | Bi-weekly service
Executive (32 gal)  | $28.00 / month  | $42.00 / month
Standard (65 gal)   | $36.00 / month  | $55.00 / month
Prices are per console.
"""


def test_a_year_of_a_monthly_service_is_12_months():
    # blind set 98, read: "36.00 / 65" (the size in gallons) had come first, and the calculator was not planned
    question = ("What would a year of monthly emptying of one standard 65-gallon console cost if I pay month by month, "
                "before tax?")
    assert first(question, SHRED) == 432
    assert planned(question, SHRED)
    assert year_in_months("a standard one for a full year?", ["Standard: $36.00 / month"]) == "a standard one for 12 months?"
    assert year_in_months("a whole year's standard service", ["Standard: $36.00 / month"]) == "12 months' standard service"
    # (not a length the question gives of itself, nor a year of a thing priced by the week beside a monthly add-on: review)
    assert year_in_months("I've been a member for a year. How much is a standard one?", ["Standard: $36.00 / month"]) == (
        "I've been a member for a year. How much is a standard one?")
    assert year_in_months("a year of daycare?", ["Daycare: £100 per week", "Pet insurance add-on: £8 per month"]) == (
        "a year of daycare?")
    # (not a year that is no length of service, nor over documents pricing a year themselves)
    assert year_in_months("I paid a year ago", ["Standard: $36.00 / month"]) == "I paid a year ago"
    assert year_in_months("a year of it", ["$36.00 / month or $400 per year"]) == "a year of it"


SHRED_PLANS = """SHREDSTACK PRICE LIST
All prices in Canadian dollars. 13% HST is added to every invoice.

SCHEDULED SERVICE (locked consoles emptied on a schedule)
Console size        | Monthly service | Bi-weekly service
Executive (32 gal)  | $28.00 / month  | $42.00 / month
Standard (65 gal)   | $36.00 / month  | $55.00 / month
Bin (95 gal)        | $48.00 / month  | $70.00 / month
Prices are per console.

Scheduled service runs on a 12-month agreement. Pay the full year upfront and you pay for 11 months instead of 12.
Lost or damaged consoles are replaced at $150.00 each.
"""


def test_consoles_of_a_table_paid_a_year_upfront():
    # blind set 98, read: "one 95-gallon bin" was no thing of the basket; "executive consoles" were priced at the
    # $150 replacement ("Lost or damaged consoles"), not the Executive row's bi-weekly cell; a year upfront is 11 months
    question = ("We'd like two executive consoles and one 95-gallon bin emptied bi-weekly, and we'll pay the whole year "
                "upfront. What's the total including HST?")
    assert basket_items(question) == [("2", "executive consoles"), ("1", "95-gallon bin emptied")]
    assert first(question, SHRED_PLANS) == Fraction("1914.22")
    assert upfront_months("we pay month by month", [SHRED_PLANS]) is None


def test_a_year_prepaid_as_the_documents_deal():
    # blind sets 20, 40 and 45: a year paid upfront is no 12 months of the monthly price ("240 * 12" had come first
    # once "a full year" was read as 12 months), but the deal: "get 2 months free", "pay for 10 months and get 12"
    desks = ("A day pass costs £18, a hot desk membership is £165 per month, and a dedicated desk is £240 per month. "
             "Members who pay for a full year upfront get 2 months free.")
    assert first("dedicated desk for a full year paid upfront, how much is that", desks) == 2400
    gym = ("• Monthly membership (adults): $95, unlimited classes\n• Annual prepay: pay 12 months of membership upfront "
           "and get 2 months free (you pay for 10)\nFreeze your membership for up to 2 months a year for $10 per month.\n")
    assert first("If I prepay a full year of adult membership, how much do I pay?", gym) == 950
    assert upfront_months("If I prepay a year of the Ultimate plan", ["Annual prepay: pay for 10 months and get 12."]) == "10"
    assert year_in_months("for a full year paid upfront", ["Desk: £240 per month"]) == "for a full year paid upfront"
