"""Dark mode: the page follows prefers-color-scheme until the user picks a theme, and the pick
(from the chat header or /account) is remembered for the user, on every page."""

from __future__ import annotations

import pytest

pytestmark = pytest.mark.e2e

LIGHT_BG = "rgb(247, 247, 248)"  # --bg of the light theme (static/style.css)
DARK_BG = "rgb(19, 19, 23)"  # --bg of the dark theme


def background(page) -> str:
    return page.evaluate("getComputedStyle(document.body).backgroundColor")


def theme(page) -> str:
    return page.evaluate("document.documentElement.dataset.theme")


def test_the_theme_follows_the_system_until_picked_and_is_remembered(page, sign_up):
    sign_up()
    assert theme(page) == "system"
    page.emulate_media(color_scheme="light")
    assert background(page) == LIGHT_BG
    page.emulate_media(color_scheme="dark")
    assert background(page) == DARK_BG

    toggle = page.locator("#theme-toggle")
    with page.expect_response("**/api/account/theme") as saved:
        toggle.click()  # system -> light: light even though the device prefers dark
    assert saved.value.ok
    assert theme(page) == "light" and background(page) == LIGHT_BG
    with page.expect_response("**/api/account/theme"):
        toggle.click()  # light -> dark
    assert theme(page) == "dark"
    page.emulate_media(color_scheme="light")
    assert background(page) == DARK_BG  # the pick wins over the device

    # Remembered by the server: a reload, and another page, render it.
    page.reload()
    assert theme(page) == "dark" and background(page) == DARK_BG
    page.goto("/account")
    assert theme(page) == "dark"
    assert page.locator("#theme-select").input_value() == "dark"
    with page.expect_response("**/api/account/theme"):
        page.select_option("#theme-select", "system")
    assert theme(page) == "system" and background(page) == LIGHT_BG
    page.goto("/chat")
    assert theme(page) == "system"
    page.emulate_media(color_scheme="dark")
    assert background(page) == DARK_BG
