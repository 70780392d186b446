"""/admin and /account at a phone's width (390 px), and the /account status line (QA of issue 5).

Screenshots go to $CRESCENT_E2E_SHOTS (when set) for a person to look at."""

from __future__ import annotations

import os

import pytest

from e2e.conftest import PASSWORD

pytestmark = pytest.mark.e2e

NARROW = {"width": 390, "height": 844}


def _log_in(page, username: str) -> None:
    page.goto("/login")
    page.fill("#username", username)
    page.fill("#password", PASSWORD)
    page.click("#submit")
    page.wait_for_url("**/chat")


def _no_sideways_scroll(page) -> None:
    widths = page.evaluate("[document.documentElement.scrollWidth, document.documentElement.clientWidth]")
    assert widths[0] <= widths[1], f"the page scrolls sideways: {widths}"


def _shot(page, name: str) -> None:
    folder = os.environ.get("CRESCENT_E2E_SHOTS")
    if folder:
        page.screenshot(path=os.path.join(folder, name), full_page=True)


def test_admin_page_fits_390px_with_every_action_visible(page, admin_username, sign_up):
    sign_up()  # a second user, so the table has actions to show
    page.context.clear_cookies()
    page.set_viewport_size(NARROW)
    _log_in(page, admin_username)
    page.goto("/admin")
    page.wait_for_selector("#users-body tr[data-user-id]")
    _no_sideways_scroll(page)
    button = page.locator('#users-body button[data-action="status"]').first
    box = button.bounding_box()
    assert box is not None and box["x"] >= 0 and box["x"] + box["width"] <= NARROW["width"]
    _shot(page, "admin-390.png")


def test_account_status_line_is_replaced_on_every_attempt(page, sign_up):
    sign_up()
    page.set_viewport_size(NARROW)
    page.goto("/account")
    _no_sideways_scroll(page)
    page.fill("#current-password", "not my password")
    page.fill("#new-password", "a long enough password")
    page.click("#password-submit")
    status = page.locator("#password-status")
    status.filter(has_text="wrong").wait_for()  # the server's answer
    page.fill("#new-password", "short")  # the browser refuses this one itself (minlength 8)
    page.click("#password-submit")
    text = status.inner_text()
    assert "wrong" not in text and text.startswith("New password:")
    assert "error" in (status.get_attribute("class") or "")
    # The inputs are styled, not the browser's default boxes.
    radius = page.eval_on_selector("#current-password", "e => getComputedStyle(e).borderRadius")
    assert radius == "8px"
    _shot(page, "account-390.png")
