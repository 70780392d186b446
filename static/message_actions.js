// Crescent chat page, the actions on each message: copy, edit (a question), regenerate and
// continue (a reply), the timings behind an info button, and "‹ 2/3 ›" between the versions a
// message has (regenerate and edit add siblings instead of overwriting: backend/message_tree.py).
//
// static/chat.js owns the socket and the turns: this file asks it through window.CrescentChat
// (startTurn, switchBranch, isBusy) and it calls window.CrescentActions.refreshAll() whenever a
// message changes. Message text only ever reaches the page through textContent and values.
"use strict";

(function () {
  const messages = document.getElementById("messages");
  if (!messages) return;
  const COPIED_MS = 1500;

  function chat() {
    return window.CrescentChat;
  }

  function source(el) {
    const template = el.querySelector("template.message-source");
    if (template) return template.content.textContent;
    const body = el.querySelector(".message-body");
    return body ? body.innerText : "";
  }

  function setSource(el, text) {
    if (typeof text !== "string" || !el) return;
    let template = el.querySelector("template.message-source");
    if (!template) {
      template = document.createElement("template");
      template.className = "message-source";
      el.prepend(template);
    }
    template.content.textContent = text;
  }

  function button(action, label, text) {
    const b = document.createElement("button");
    b.type = "button";
    b.className = "message-action";
    b.dataset.action = action;
    b.setAttribute("aria-label", label);
    b.title = label;
    b.textContent = text;
    return b;
  }

  function siblings(el) {
    return (el.dataset.siblings || el.dataset.messageId || "").split(" ").filter(Boolean);
  }

  // A reply cut at the token limit, stopped or interrupted, last on its branch, can go on.
  function continuable(el) {
    if (el.dataset.role !== "assistant" || el !== lastMessage()) return false;
    const status = el.dataset.status;
    if (status === "streaming" || status === "pending") return false;
    if (!source(el).trim()) return false;
    const finish = el.dataset.finishReason;
    if (el.dataset.budgetEnded === "true") return false;  // its run's budget ended: Regenerate (ended_by_budget)
    return finish === "length" || finish === "abort" || status === "interrupted";
  }

  function lastMessage() {
    const all = messages.querySelectorAll(".message");
    return all.length ? all[all.length - 1] : null;
  }

  function bar(el) {
    let actions = el.querySelector(".message-actions");
    if (actions) return actions;
    actions = document.createElement("div");
    actions.className = "message-actions";
    actions.setAttribute("role", "toolbar");
    actions.setAttribute("aria-label", el.dataset.role === "user" ? "Your message" : "The reply");
    const nav = document.createElement("span");
    nav.className = "branch-nav";
    const count = document.createElement("span");
    count.className = "branch-count";
    nav.append(button("previous", "Previous version", "‹"), count, button("next", "Next version", "›"));
    actions.appendChild(nav);
    actions.appendChild(button("copy", "Copy", "Copy"));
    if (el.dataset.role === "user") {
      actions.appendChild(button("edit", "Edit", "Edit"));
    } else {
      actions.appendChild(button("regenerate", "Regenerate", "Regenerate"));
      actions.appendChild(button("continue", "Continue", "Continue"));
      const info = button("info", "Timings", "Info");
      info.setAttribute("aria-expanded", "false");
      actions.appendChild(info);
    }
    el.querySelector(".message-bubble").after(actions);
    return actions;
  }

  function refresh(el, busy) {
    if (!el.dataset.messageId || el.classList.contains("editing")) return;
    const actions = bar(el);
    const ids = siblings(el);
    const index = ids.indexOf(el.dataset.messageId);
    const nav = actions.querySelector(".branch-nav");
    nav.hidden = ids.length < 2;
    nav.querySelector(".branch-count").textContent = (index + 1) + "/" + ids.length;
    nav.querySelector('[data-action="previous"]').disabled = busy || index <= 0;
    nav.querySelector('[data-action="next"]').disabled = busy || index < 0 || index >= ids.length - 1;
    const status = el.dataset.status;
    const live = status === "streaming" || status === "pending";
    for (const name of ["edit", "regenerate"]) {
      const b = actions.querySelector('[data-action="' + name + '"]');
      if (b) {
        b.hidden = live;
        b.disabled = busy;
      }
    }
    const more = actions.querySelector('[data-action="continue"]');
    if (more) {
      more.hidden = !continuable(el);
      more.disabled = busy;
    }
    const info = actions.querySelector('[data-action="info"]');
    if (info) info.hidden = !el.querySelector(".timings");
    actions.querySelector('[data-action="copy"]').hidden = live;
  }

  function refreshAll() {
    const busy = chat() ? chat().isBusy() : false;
    for (const el of messages.querySelectorAll(".message")) refresh(el, busy);
  }

  // static/code_blocks.js (loaded before this file) holds the clipboard helper; it rejects when
  // the copy failed, the fallback's refusal included.
  function copyText(text) {
    return window.CrescentClipboard.copy(text);
  }

  async function copy(el, b) {
    try {
      await copyText(source(el));
      b.textContent = "Copied";
    } catch (e) {
      b.textContent = "Copy failed";
    }
    setTimeout(() => { b.textContent = "Copy"; }, COPIED_MS);
  }

  // Editing a question: its text in place, "Save & submit" makes a new version and its reply.
  function edit(el) {
    if (chat().isBusy()) {
      chat().startTurn("edit", null);  // says why it cannot
      return;
    }
    el.classList.add("editing");
    const form = document.createElement("form");
    form.className = "message-edit";
    const area = document.createElement("textarea");
    area.value = source(el);
    area.rows = Math.min(12, area.value.split("\n").length + 1);
    area.setAttribute("aria-label", "Edit your message");
    const save = document.createElement("button");
    save.type = "submit";
    save.className = "button primary small";
    save.textContent = "Save & submit";
    const cancel = document.createElement("button");
    cancel.type = "button";
    cancel.className = "button ghost small";
    cancel.textContent = "Cancel";
    const row = document.createElement("div");
    row.className = "message-edit-buttons";
    row.append(cancel, save);
    form.append(area, row);
    const bubble = el.querySelector(".message-bubble");
    bubble.hidden = true;
    const actions = el.querySelector(".message-actions");
    if (actions) actions.hidden = true;
    bubble.after(form);
    area.focus();
    const close = (redraw) => {
      form.remove();
      bubble.hidden = false;
      if (actions) actions.hidden = false;
      el.classList.remove("editing");
      refreshAll();
      if (redraw) chat().reloadIfStale();
    };
    cancel.addEventListener("click", () => close(true));
    area.addEventListener("keydown", (event) => {
      if (event.key === "Escape") close(true);
      if (event.key === "Enter" && !event.shiftKey && !event.isComposing && event.keyCode !== 229) {
        event.preventDefault();
        form.requestSubmit();
      }
    });
    form.addEventListener("submit", (event) => {
      event.preventDefault();
      const text = area.value;
      if (!text.trim()) return;
      close(false);  // the turn redraws what changed elsewhere once it is done
      chat().startTurn("edit", el, text);
    });
  }

  messages.addEventListener("click", (event) => {
    const b = event.target.closest("button.message-action");
    if (!b || !messages.contains(b)) return;
    const el = b.closest(".message");
    if (!el || !chat()) return;
    const action = b.dataset.action;
    if (action === "copy") copy(el, b);
    else if (action === "edit") edit(el);
    else if (action === "regenerate" || action === "continue") chat().startTurn(action, el);
    else if (action === "info") {
      const open = el.classList.toggle("info-open");
      b.setAttribute("aria-expanded", open ? "true" : "false");
    } else if (action === "previous" || action === "next") {
      const ids = siblings(el);
      const target = ids[ids.indexOf(el.dataset.messageId) + (action === "next" ? 1 : -1)];
      if (target) chat().switchBranch(target);
    }
  });

  window.CrescentActions = { refreshAll, setSource };
  refreshAll();
  // The bars make every message taller: land at the newest message again (chat.js scrolled
  // before they existed), unless the address names a message to show (static/sidebar_search.js).
  document.addEventListener("DOMContentLoaded", () => {
    const scroller = document.getElementById("scroller");
    if (scroller && !location.hash) scroller.scrollTop = scroller.scrollHeight;
  });
})();
