"""An admin opens the waterfall of a reply's trace from its Info panel, live and after a reload
(real server, real model); a user's Info panel has no such link."""

from __future__ import annotations

import re

import pytest

from .test_admin import log_in
from .test_chat import send, wait_finished
from .test_message_actions import action, wait_idle

pytestmark = [pytest.mark.e2e, pytest.mark.slow]

STAGES = ("chat.turn", "ws.receive", "prompt.assemble", "admission", "chat.reply", "engine.queue",
          "engine.prefill", "engine.prefill.chunk", "engine.decode", "persistence.final_write")


def test_an_admin_opens_a_replys_waterfall_from_its_info_panel(page, admin_username):
    log_in(page, admin_username)
    page.wait_for_selector('#connection[data-state="open"]')
    send(page, "Say hello in three words.")
    reply = wait_finished(page)
    wait_idle(page)
    reply.hover()
    action(reply, "info").click()
    link = reply.locator(".timings a.trace-link")
    assert link.is_visible()  # added from the done frame, without a reload
    href = link.get_attribute("href")
    assert re.fullmatch(r"/admin/traces/[0-9a-f]{32}", href)
    page.reload()
    reply = page.locator('#messages .message[data-role="assistant"]').last
    reply.hover()
    action(reply, "info").click()
    assert reply.locator(".timings a.trace-link").get_attribute("href") == href  # server-rendered
    reply.locator(".timings a.trace-link").click()
    page.wait_for_url("**" + href)
    page.wait_for_selector("#trace")
    names = page.locator(".span-row").evaluate_all("rows => rows.map(r => r.dataset.name)")
    assert names[0] == "chat.turn" and set(STAGES) <= set(names)
    assert page.locator(".span-row .span-bar rect").count() == len(names)


def test_a_users_info_panel_has_no_trace_link(page, sign_up):
    sign_up()
    send(page, "Say hi.")
    reply = wait_finished(page)
    wait_idle(page)
    reply.hover()
    action(reply, "info").click()
    assert reply.locator(".timings").is_visible()
    assert reply.locator(".timings a.trace-link").count() == 0
