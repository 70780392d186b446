"""A workshop studio's bookings (issue 15): what a discount knocks off, a seat cancelled days ahead,
seats counted by the party, a tax whose aside exempts other things, and a party package with each
additional child. Read from blind set 92 after its runs; each test fails when its reading regresses."""

from __future__ import annotations

from fractions import Fraction

from backend.agent.operations import asks_saving
from backend.agent.tools.allowances import allowance_expressions
from backend.agent.tools.discounts import least_count_met
from backend.agent.tools.refunds import refund_expression
from backend.agent.tools.taxes import claimed_tax

from .test_expressions import first

STUDIO = """EMBER & WICK CANDLE STUDIO
All prices in US dollars and shown BEFORE sales tax.
Sales tax of 5.5% is added at checkout to all purchases, including workshops and parties (gift cards are not taxed).

PUBLIC WORKSHOPS (price per person)
Intro Container Candle (90 min): $48
Double-Wick Soy Jar (2 hrs): $68
Wax Melt & Diffuser Duo (2 hrs): $62

MEMBERS
Members get 15% off any public workshop.

GROUP SAVINGS
Book 6 or more seats on the same public workshop in one transaction and save 10% on those seats.

KIDS' BIRTHDAY PARTIES
Party package: $320 for up to 8 children
Each additional child: $32 (maximum 14 children)

Cancellations
- Public workshops, more than 72 hours ahead: full refund less a $5 processing fee per seat.
"""


def test_what_a_discount_knocks_off():
    assert asks_saving("How many dollars does the member discount knock off the double-wick soy jar workshop?")
    assert first("How many dollars does the member discount knock off the double-wick soy jar workshop?",
                 STUDIO) == Fraction("10.20")


def test_a_seat_cancelled_days_ahead():
    # "cancel my seat" cancels a booking priced by the documents; "it's 5 days away" counts no seats ("48 * 5" is the
    # bill read with the days: the price of one seat)
    window = ["- Public workshops, more than 72 hours ahead: full refund less a $5 processing fee per seat."]
    assert refund_expression("I need to cancel my seat on the intro container candle class - it's 5 days away. How much "
                             "will I get back?", window, "48 * 5") == "48 - 5"


def test_seats_counted_by_the_party_and_a_tax_with_an_aside():
    # "Seven of us" book 7 seats: 10% off; "(gift cards are not taxed)" exempts no workshop: the tax is claimed
    assert abs(first("Seven of us want to book the wax melt and diffuser class together in one go. What's the total "
                     "including tax?", STUDIO) - Fraction("412.08")) < Fraction(1, 100)
    # (five of us are no 6 seats)
    assert abs(first("Five of us want to book the wax melt and diffuser class together in one go. What's the total "
                     "including tax?", STUDIO) - Fraction("327.05")) < Fraction(1, 100)
    assert claimed_tax("How much is a gift card including tax?", [
        "Sales tax of 5.5% is added at checkout to all purchases (gift cards are not taxed)."]) is None


def test_a_package_with_each_additional_child():
    # "Each additional child: $32 (maximum 14 children)" goes on from "Party package: $320 for up to 8 children" (its
    # aside had named something else: "maximum")
    lines = ["Party package: $320 for up to 8 children", "Each additional child: $32 (maximum 14 children)"]
    assert "320 + (10 - 8) * 32" in allowance_expressions("What would a kids' birthday party for 10 children cost?", lines)
    assert allowance_expressions("What would a kids' birthday party for 6 children cost?", lines) == []


def test_seats_are_booked_by_the_party_itself():
    seats = "Book 6 or more seats on the same public workshop in one transaction and save 10% on those seats."
    assert least_count_met(seats, "Seven of us want to book the wax melt and diffuser class together in one go.")
    assert least_count_met(seats, "Five of us want to book the wax melt class.") is False
    # an event run "for 10 people" books no seats (blind set 92: its off-site workshop had taken 10% off)
    assert least_count_met(seats, "Can you run an off-site workshop at our office, 10 miles away, for 10 people?") is None
