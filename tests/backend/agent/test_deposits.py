"""What is left to pay once the deposit is paid (the twenty-eighth session: blind sets 67, 69 and 72,
read after their runs, asked "already paid the deposit ... how much is left to pay" and got the
whole bill, or no answer): the bill less the one deposit the documents take, an amount, an amount
per thing counted, or a share of the bill. Each assertion failed on the code before it."""

from __future__ import annotations

from fractions import Fraction

from backend.agent.tools.calculator import spec
from backend.agent.tools.deposits import balance_due

from .test_expressions import first

MEMORIAL = ("PRICES\nWitnessed service: £220\nKeepsake locket: £30 each\n\nBOOKING\n"
            "A witnessed service needs a £40 deposit when booked, which is deducted from the final bill.\n")
RESTORER = ("PRICES\nFull restoration: $600\nFrame repair: $150\n\n"
            "A 25% deposit is taken when you book; the rest is due on collection.\n")
BIKES = "SERVICES\nFull service: $90\nPuncture repair: $15\n\nWe take a $20 deposit per bike at drop-off, taken off your bill.\n"


def test_the_bill_less_the_deposit_paid():
    assert first("I booked a witnessed service and already paid the deposit, we'd also like 2 keepsake lockets. "
                 "how much is left to pay?", MEMORIAL) == 220 + 2 * 30 - 40
    assert first("I've paid the deposit for a full restoration and a frame repair, what do I still owe?",
                 RESTORER) == Fraction(750 * 75, 100)
    assert first("dropping off 2 bikes for a full service each. after the deposits, what's left to pay?", BIKES) == 140


def test_no_balance_without_a_deposit_paid_or_with_several_deposits():
    sentences = [MEMORIAL.splitlines()[-1]]
    assert balance_due("I already paid the deposit, how much do I owe?", sentences) == ("-", "40")
    assert balance_due("how much do I owe for a witnessed service?", sentences) is None  # no deposit paid
    assert balance_due("I paid the deposit but have to cancel, how much do I get back?", sentences) is None  # a refund
    several = sentences + ["Cremations of large dogs need a £60 deposit."]
    assert balance_due("I already paid the deposit, how much do I owe?", several) is None


def test_the_router_plans_the_calculator_for_the_rest_of_a_bill():
    found = [("memorial.txt", MEMORIAL)]
    calculator = spec(lambda texts: [[1.0] * 4 for _ in texts], passages=lambda user_id, text: found)
    assert calculator.relevant("u", "I've booked a witnessed service and already paid the deposit. "
                                    "How much do I still owe on the day?")


def test_review_of_the_twenty_eighth_session_deposits():
    # a deposit held and given back is no part of the bill
    castles = ("BOUNCY CASTLE HIRE\nPirate Ship: £120 per day\nDisco Dome: £150 per day\n\n"
               "A £50 refundable security deposit is required, returned after the castle is collected undamaged.\n")
    assert balance_due("I've paid the deposit for the Pirate Ship, how much do I still owe?",
                       castles.splitlines()[-1:]) is None
    bikes = ("BIKE HIRE\nCity bike: £25 per day\nE-bike: £45 per day\n\n"
             "A refundable deposit of £50 per bike is taken at pick-up and returned when the bike comes back.\n")
    assert first("after my deposit, how much do I owe for an e-bike for 2 days?", bikes) == 90
    # so a share of the bill is the deposit paid, not the security deposit beside it
    cottage = ("HOLIDAY COTTAGE\nHigh season: £900 per week\nLow season: £600 per week\n\nA deposit of 30% secures "
               "your booking; the balance is due 6 weeks before arrival. A £150 security deposit is also payable "
               "and returned after your stay.\n")
    assert first("I've paid the deposit for a week in high season, what's the balance?", cottage) == 630


def test_a_refundable_hold_or_a_bond_is_a_deposit():
    # Blind set 84: "a $200 refundable hold is placed on a credit card per rental package" was added to the bill
    # of "2 of us need full gear packages for 5 days" (38 * 5 + 45 + 200).
    from backend.agent.tools.basket import is_deposit
    from backend.agent.tools.pricing import PRICE

    def deposit(sentence: str) -> bool:
        return is_deposit(sentence, list(PRICE.finditer(sentence)), 0)

    assert deposit("Gear rental: a $200 refundable hold is placed on a credit card per rental package.")
    assert deposit("Security bond: £250 per van, returned after.")
    assert deposit("A £100 damage bond is taken at collection.")
    assert not deposit("Gear rental: $45 per day, a hold on your booking until 5pm.")
    assert not deposit("A $50 non-refundable hold fee applies.")
    assert not deposit("Exit clean / bond: $380 (2 bedroom)")  # a bond clean's price (review)


GROOMER = ("PAWS & CLAWS GROOMING\nFull groom (small dog): $45\nFull groom (large dog): $65\nNail trim: $12\n\n"
           "Bookings over $150 require a $30 deposit, taken off the final bill.\n")


def candidates(question: str, *texts: str) -> list[Fraction]:
    from backend.agent.tools.calculator import evaluate
    from backend.agent.tools.expressions import candidate_expressions

    from .test_expressions import result
    return [evaluate(e).q for e in candidate_expressions(question, [result(*texts)], None, evaluate)]


def test_a_deposit_due_only_over_an_amount():
    # The new user's pass of the twenty-ninth session: "Bookings over $150 require a $30 deposit" was answered 60 (the
    # deposit once per dog); the thirtieth session's reader takes it once, on a bill over $150 only.
    assert first("How much deposit do I need for full grooms for 3 large dogs?", GROOMER) == 30
    assert candidates("How much deposit do I pay for full grooms for my 2 small dogs?", GROOMER) == []  # 90: none due
    # a share over an amount: "Orders over £100 require a 50% deposit" (simple set 65)
    tailor = ("PRICES\nReplace lining (jacket): £85.00\nShorten sleeves (plain): £24.00\nTake in waist: £16.00\n\n"
              "Orders over £100 require a 50% deposit when you hand them in.\n")
    assert first("I want to replace the lining of my jacket and shorten the sleeves (plain). How much deposit do I "
                 "pay?", tailor) == Fraction(109, 2)
    assert candidates("How much deposit do I pay to have a waist taken in?", tailor) == []


def test_the_deposit_of_the_thing_asked():
    # Blind set 48: "A 50% deposit is required for cake orders" beside a motor boat's refundable damage deposit; blind
    # set 59: the paddle's 30% beside another business's £20 (no deposit was read: "the documents price one").
    shop = ("CAKES\n10 inch celebration cake: £62\n8 inch sponge: £30\n\nA 50% deposit is required for cake orders; "
            "the balance is due on collection.\n\nBOATS\nMotor boat: £45 per hour\n"
            "A refundable £50 damage deposit is taken per motor boat.\n")
    assert first("how much is the deposit on a 10 inch celebration cake?", shop) == 31
    # the held deposit is the one asked when the question names it
    assert first("how much is the damage deposit for a motor boat?", shop) == 50
    # a share of the total with its tax (simple set 74: "A 50% deposit of the total (including sales tax)")
    lights = ("PRICES\nRoofline lights: $6.50 per ft\n\nMichigan sales tax of 6% is added to every invoice.\n"
              "A 50% deposit of the total (including sales tax) secures your install date.\n")
    assert first("what deposit do I need to pay to book 100 ft of roofline?", lights) == Fraction(650 * 106, 200)


def test_no_deposit_for_the_thing_asked_declines():
    # "Tunings do not need a deposit": no share of the tuning's bill (the run says so, quoting it)
    piano = ("PRICES\nStandard tuning: $145\nFull regulation: $495\n\nTunings do not need a deposit. Regulation work "
             "over $400 requires a deposit of 20% of the estimate.\n")
    assert candidates("how much is the deposit for a standard tuning?", piano) == []
    assert first("how much is the deposit for a full regulation?", piano) == 99


def test_the_router_plans_the_calculator_for_a_share_deposit():
    # simple set 68: "whats the deposit to book the full day course" was left to a quote of "A 25% deposit is taken"
    course = ("COURSES\nFull-Day Falconry Course: £210 per person\n\nA 25% deposit is taken at booking and the "
              "balance is due 7 days before your experience.\n")
    calculator = spec(lambda texts: [[1.0] * 4 for _ in texts], passages=lambda user_id, text: [("c.txt", course)])
    assert calculator.relevant("u", "whats the deposit to book the full day course for 1 person on a saturday")
    assert not calculator.relevant("u", "can I move my booking to another day?")


def test_review_of_the_thirtieth_session_deposits():
    # A helper probed the deposit reader with 218 cases of its own; these failed on its first version.
    vet = ("VET PRICES\nConsultation: £48\nVaccination booster: £55\nDental scale and polish: £240\n\n"
           "Dental procedures need a deposit of 50% when booked.\n")
    assert candidates("what's the deposit for a vaccination booster?", vet) == []  # no deposit of a booster
    assert first("what's the deposit for a dental scale and polish?", vet) == 120
    cleaning = ("CLEANING\nDeep clean (3 bed house): £220\nEnd of tenancy clean: £280\n\n"
                "End of tenancy cleans need a 25% deposit.\n")
    assert candidates("what's the deposit for a deep clean of my 3 bed house?", cleaning) == []
    cake = ("SWEET THINGS BAKERY\n8 inch sponge: £30\nCupcakes: £2.50 each\n\n"
            "A 50% deposit is required for all cake orders; the balance is due on collection.\n")
    assert first("how much deposit for 2 sponges and 12 cupcakes?", cake) == 45  # "all cake orders" (every order)
    assert first("my total bill is £90, what's the deposit?", cake) == 45
    # not a question about deposits as such: no calculation
    calculator = spec(lambda texts: [[1.0] * 4 for _ in texts], passages=lambda user_id, text: [("c.txt", cake)])
    for question in ("what deposit methods do you accept?", "What deposit options do you have?",
                     "what is the deposit policy?"):
        assert not calculator.relevant("u", question), question
    # the threshold of the deposit's own clause ("free delivery over £50" is none), "or more" inclusive
    bakery = ("BAKERY\nCupcakes: £2.50 each\n\nA 50% deposit is required on all orders, with free delivery over £50.\n")
    assert first("what's the deposit for 12 cupcakes?", bakery) == 15
    groomer = ("GROOMING\nFull groom (large dog): $65\n\nBookings of $130 or more require a $30 deposit, taken off "
               "the final bill.\n")
    assert first("what's the deposit for full grooms for 2 large dogs?", groomer) == 30
    tools = ("TOOL HIRE\nCement mixer: £35 per day\n\nA £50 deposit is required for all hires; hires over £500 need a "
             "20% deposit instead.\n")
    assert first("what's the deposit for a cement mixer for 2 days?", tools) == 50  # (the other clause's)
    # a share's least amount; a share written after the word
    booth = "PHOTO BOOTH\n3 hour hire: £300\n\nA 25% deposit (minimum £100) is taken on booking.\n"
    assert first("how much is the deposit for 3 hour hire?", booth) == 100
    glazing = ("GLAZING\nNew window: £420 each\n\nDeposit: 25% of the total at order. A £20 key deposit applies to "
               "lockable handles.\n")
    assert first("what's the deposit for 2 new windows?", glazing) == 210
    # a held deposit asked, counted per thing; "£35 plus deposit" is no deposit
    sup = ("SUP HIRE\nPaddleboard: £35 plus deposit\nWetsuit: £10\n\nA £50 deposit per board is taken at the beach "
           "and given back when it's returned.\n")
    assert first("how much is the security deposit for 2 paddleboards?", sup) == 100


def test_a_deposit_for_what_its_clause_names():
    # simple set 68: "A 25% deposit is taken at booking and the balance is due 7 days before your experience" beside
    # a priced "Half-Day Falconry Experience" names no thing it is for ("experience" is the time it is due by)
    falconry = ("PRICES\nHalf-Day Falconry Experience: £120 per person\nFull-Day Falconry Course: £210 per person\n\n"
                "A 25% deposit is taken at booking and the balance is due 7 days before your experience.\n")
    assert first("whats the deposit to book the full day course for 1 person on a saturday", falconry) == Fraction(105, 2)


def test_a_deposit_of_a_line_with_several_prices_needs_the_bill_read():
    # blind set 48: "Celebration cake: 8-inch $48, 10-inch $62, 12-inch $80" gave half of $48 for a 10 inch cake
    cakes = ("CAKES\nCelebration cake: 8-inch $48, 10-inch $62, 12-inch $80\n\n"
             "A 50% deposit is required for cake orders; the balance is due on collection.\n")
    assert 24 not in candidates("how much is the deposit on a 10 inch celebration cake", cakes)


def test_no_share_of_another_business_for_a_deposit_stated_otherwise():
    # blind sets 42 and 44: "how much is the deposit for an e-bike at riverside" (a refundable £100, quoted) had the
    # calculator planned with another business's 25% share
    from backend.agent.tools.calculator import evaluate
    from backend.agent.tools.expressions import candidate_expressions
    from backend.agent.tools.passages import format_passages

    from .test_expressions import source
    bikes = ("RIVERSIDE WHEELS\nE-bike: £45 per day\nCity bike: £25 per day\n\nA refundable deposit of £50 per bike "
             "(£100 for e-bikes) is taken at pick-up and returned when the bike comes back.\n")
    storage = "KEEPSAFE STORAGE\n50 sq ft unit: £60 per month\n\nA 25% deposit secures your unit.\n"
    content = "Passages.\n\n" + format_passages([source(bikes, 1, "riverside.txt"), source(storage, 2, "keepsafe.txt")])
    question = "how much is the deposit for an e-bike at riverside"
    assert [evaluate(e).q for e in candidate_expressions(question, [content], None, evaluate)] != [Fraction(45 * 25, 100)]
    found = [("riverside.txt", bikes), ("keepsafe.txt", storage)]
    calculator = spec(lambda texts: [[1.0] * 4 for _ in texts], passages=lambda user_id, text: found)
    assert not calculator.relevant("u", question)


def test_a_deposit_the_question_says_it_paid_is_taken_off_the_bill():
    # Blind set 86 (read): "paid the $100 deposit" was no paid deposit (a sum between "the" and "deposit"), and the
    # documents' two deposit amounts ($100 taken, "$50.00 of the deposit is kept") left no amount to take off.
    from backend.agent.tools.deposits import balance_due

    sentences = ["Sedan windscreen: $465.00", "Windscreen replacements require a $100.00 deposit at booking.",
                 "24 to 48 hours' notice: $50.00 of the deposit is kept."]
    assert balance_due("I booked a sedan windscreen and paid the $100 deposit. How much do I owe on the day?",
                       sentences) == ("-", "100")
    assert balance_due("I paid the 30% booking deposit, how much is the balance?",
                       ["A booking deposit of 30% of the hire total is taken."]) == ("%", "30")
    assert balance_due("I paid the $100 deposit, can I get it back if I cancel?", sentences) is None
