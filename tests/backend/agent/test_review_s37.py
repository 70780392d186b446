"""Bills a reviewer wrote with its own price lists against the thirty-seventh session's rules (issue 15): each
was right before the session's rules and wrong under their first version (a count after a list read of a date, a
party or a dog; a comma list's "no marquee" bought; a date or a house number counted as things; two designs as one
lot; a least order on a condition; a fee for other days; a next sentence's "not discounted" of other things). Each
must be right or declined, never another amount."""

from __future__ import annotations

from fractions import Fraction

import pytest

from backend.agent.tools.arithmetic import evaluate
from backend.agent.tools.expressions import candidate_expressions

from .test_expressions import result

# (one bakery's price list, asked twice)
BAKERY = ('SUGARLOAF BAKERY - CELEBRATION ORDERS\n\nMini cupcake: £1.20 each\nFrench macaron: £1.50 each\n'
          'Brownie square: £2.00 each\nCelebration cake (serves 20): £45.00\nDelivery within 5 miles: £5.00\n'
          'Orders of 200 or more pieces in one order: 15% off the whole order.')

REVIEW_37 = [
    ('r1_bike_date',
     [('SPOKES & SPROCKETS BIKE WORKSHOP - SERVICE MENU\n'
       '\n'
       'Basic tune-up: $65\n'
       'Full overhaul: $180\n'
       'Hydraulic brake bleed: $35 per brake\n'
       'Chain replacement (labour only): $15\n'
       'Wheel truing: $25 per wheel\n'
       'Tubeless setup: $30 per wheel\n'
       'Pick-up and drop-off within city limits: $20 per booking\n'
       '\n'
       'Parts are extra and quoted before we start. Most jobs are ready within 3 working days.')],
     "I'd like a full overhaul and a chain replacement on 12 May, what will the labour come to?", '195'),
    ('r1_gar_year',
     [('OAKFIELD MOTORS - SERVICE PRICES\n'
       'Interim service: £129\n'
       'Full service: £219\n'
       'MOT test: £54.85\n'
       'Air con regas: £69\n'
       'Courtesy car: free (book ahead)')],
     'A full service and air con regas on 2 March, total?', '288'),
    ('r1_win_date',
     [('CRYSTAL CLEAR WINDOW CLEANING\n'
       'Outside windows, 3-bed house: £22\n'
       'Inside windows, 3-bed house: £28\n'
       'Conservatory roof: £40\n'
       'Gutter clear: £60')],
     'Outside windows and a conservatory roof on 18 August please, how much?', '62'),
    ('r1_valet_dogs',
     [('GLEAM TEAM MOBILE VALETING\n'
       'We come to your home or workplace anywhere in Dublin.\n'
       '\n'
       'PRICES (per vehicle)\n'
       'Exterior wash: €25\n'
       'Interior vacuum & wipe: €30\n'
       'Full valet (inside and out): €70\n'
       'Clay bar & wax: €45\n'
       'Pet hair removal: €15\n'
       'Headlight restoration: €35 per pair\n'
       '\n'
       'Vans and 7-seaters are the same price as cars.')],
     "My car needs an interior vacuum & wipe and pet hair removal for 2 shedding huskies' worth of fur. "
     'How much?', '45'),
    ('r1_tramp_kids',
     [('JUMPSTREET PARTY HIRE\n'
       'All items are hired for the day and include delivery within 10 miles.\n'
       'Bouncy castle: £95\n'
       'Candy floss machine: £45\n'
       'Popcorn machine: £40\n'
       'Soft play set: £70')],
     'How much to hire a bouncy castle and a candy floss machine for 30 children on Saturday?', '140'),
    ('r1_party_guests',
     [('JUMPSTREET PARTY HIRE\n'
       'All items are hired for the day and include delivery within 10 miles.\n'
       'Bouncy castle: £95\n'
       'Candy floss machine: £45\n'
       'Popcorn machine: £40\n'
       'Soft play set: £70\n'
       'Party bags: £3.50 each')],
     'A soft play set and a popcorn machine for 25 little ones on Sunday, how much?', '110'),
    ('r2_comma_no',
     [('BIRCHFIELD MARQUEES - HIRE PRICES\n'
       'Small marquee (6m x 9m): £750\n'
       'Large marquee (9m x 15m): £1,450\n'
       'Trestle table: £9 each\n'
       'Folding chair: £2.50 each\n'
       'Patio heater: £45 each')],
     'Unlike last year, no marquee, 10 trestle tables and 40 folding chairs. Total?', '190'),
    ('r2_comma_nodelivery',
     [BAKERY],
     'Collecting myself, no delivery, 20 mini cupcakes and 10 macarons. How much?', '39'),
    ('r2_comma_not',
     [('SUGARLOAF BAKERY - CELEBRATION ORDERS\n'
       'Mini cupcake: £1.20 each\n'
       'French macaron: £1.50 each\n'
       'Brownie square: £2.00 each\n'
       'Celebration cake (serves 20): £45.00\n'
       'Delivery within 5 miles: £5.00')],
     'To collect, not delivery, 12 brownie squares and 24 mini cupcakes. How much?', '52.80'),
    ('r3_cake_lot_unmet',
     [('SUGARLOAF BAKERY - CELEBRATION ORDERS\n'
       'All orders are for collection from our Harrogate shop.\n'
       '\n'
       'Mini cupcake: £1.20 each\n'
       'French macaron: £1.50 each\n'
       'Brownie square: £2.00 each\n'
       'Celebration cake (serves 20): £45.00\n'
       '\n'
       'Orders of 200 or more pieces in one order: 15% off the whole order.')],
     "I'd like 100 mini cupcakes and 60 macarons for a party at 45 Church Lane. How much?", '210'),
    ('r3_cake_addr',
     [BAKERY],
     "Could I get 150 mini cupcakes for a party at 120 High Street? I'll collect. Price?", '180'),
    ('r3_hoof_lot_unmet',
     [('HOLLYBANK HOOF CARE - CONTRACT PRICES 2025\n'
       'Mobile hoof trimming for dairy and beef farms across Shropshire.\n'
       '\n'
       'Cattle hoof trim (all four feet): £18.00 per animal\n'
       'Lame cattle treatment (block and bandage): £25.00 per animal\n'
       'Herds of 100 or more cattle trimmed in one visit: 10% off the trimming.\n'
       '\n'
       "We don't charge a call-out fee within 30 miles. Prices exclude VAT.")],
     "We've 80 dairy cows that need trimming; the farm is 12 miles out of Shrewsbury and we'd like 20 "
     'March. Price before VAT?', '1440'),
    ('r3_tee_single_unmet_date',
     [('THREADWORKS SCREEN PRINTING - PRICE LIST\n'
       'Prices include the garment and a one-colour front print. Collection is free.\n'
       'T-shirt: £9.00 each\n'
       'Hoodie: £22.00 each\n'
       'Back print: add £3.00 per item\n'
       'Volume discount: 10% off the whole order when 50 or more items are ordered together.')],
     '40 T-shirts please, collecting on 12 June. Total?', '360'),
    ('r3_tee_two_designs',
     [('THREADWORKS SCREEN PRINTING - PRICE LIST\n'
       'Prices include the garment and a one-colour front print. Collection from our Bristol unit is free.\n'
       '\n'
       'T-shirt: £9.00 each\n'
       'Hoodie: £22.00 each\n'
       'Tote bag: £5.50 each\n'
       'Extra print colour: add £0.80 per item\n'
       'Back print: add £3.00 per item\n'
       '\n'
       'Volume discount: 10% off the whole order when 50 or more items of the same design are ordered '
       'together.')],
     'We want 30 T-shirts with design A and 25 T-shirts with design B, front print only. Total?', '495'),
    ('r6_marq_min_with',
     [('BIRCHFIELD MARQUEES - HIRE PRICES\n'
       'All prices are for a weekend hire (Friday to Monday), delivered and set up.\n'
       '\n'
       'Small marquee (6m x 9m): £750\n'
       'Large marquee (9m x 15m): £1,450\n'
       'Trestle table: £9 each\n'
       'Folding chair: £2.50 each\n'
       'Patio heater: £45 each\n'
       'Minimum order for tables, chairs and heaters without a marquee: £150.')],
     'A large marquee plus 6 trestle tables and 20 folding chairs, please. Total?', '1554'),
    ('r8_pot_weekday',
     [('KILN & CO POTTERY STUDIO - WORKSHOPS\n'
       'Six-Week Wheel Course: £260 per person\n'
       'Handbuilding Evening: £40 per person\n'
       'Wheel throwing course supplement: £20 per person for Saturday morning classes\n'
       'Clay and firing are included.')],
     'How much is the six-week wheel throwing course on Tuesday evenings for 2 people?', '520'),
    ('r3_other_notdisc',
     [('THREADWORKS SCREEN PRINTING - PRICE LIST\n'
       'Prices include the garment and a one-colour front print. Collection from our Bristol unit is free.\n'
       '\n'
       'T-shirt: £9.00 each\n'
       'Hoodie: £22.00 each\n'
       'Back print: add £3.00 per item. Blank garments bought without a print are not discounted.\n'
       '\n'
       'Volume discount: 10% off the whole order when 50 or more items are ordered together.')],
     '60 T-shirts, all with a back print as well as the front. Total?', '648'),
]


@pytest.mark.parametrize("name, texts, question, want", REVIEW_37, ids=[c[0] for c in REVIEW_37])
def test_review_of_the_thirty_seventh_session(name, texts, question, want):
    found = candidate_expressions(question, [result(*texts)], None, evaluate)
    got = evaluate(found[0]).q if found else None
    assert got is None or (want is not None and abs(got - Fraction(want)) < Fraction(1, 100)), (question, found[:2])
