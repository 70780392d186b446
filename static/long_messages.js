// Long user messages (a pasted log, a whole file) collapse to a few lines with "Show more" /
// "Show less", instead of one bubble thousands of pixels tall. Works on the messages the server
// rendered and on those static/chat.js adds later (a MutationObserver on #messages), so chat.js
// need not know about it. The text stays in the DOM: only its box is clipped (static/style.css,
// .message[data-collapsed]).
"use strict";

(function () {
  const messages = document.getElementById("messages");
  if (!messages) return;
  // Collapsed height, px; a message is collapsed only when that hides a good share of it.
  const COLLAPSED_PX = 320;
  const MIN_HIDDEN_RATIO = 1.5;

  function setCollapsed(el, button, collapsed) {
    el.dataset.collapsed = collapsed ? "true" : "false";
    button.textContent = collapsed ? "Show more" : "Show less";
    button.setAttribute("aria-expanded", collapsed ? "false" : "true");
  }

  function consider(el) {
    if (!(el instanceof HTMLElement) || !el.matches('.message[data-role="user"]')) return;
    if (el.dataset.collapsed) return;  // already has its button
    const body = el.querySelector(".message-body");
    if (!body || body.scrollHeight <= COLLAPSED_PX * MIN_HIDDEN_RATIO) return;
    const button = document.createElement("button");
    button.type = "button";
    button.className = "show-more";
    if (!body.id) body.id = "body-" + Math.random().toString(36).slice(2);
    button.setAttribute("aria-controls", body.id);
    button.addEventListener("click", () => {
      const collapse = el.dataset.collapsed !== "true";
      setCollapsed(el, button, collapse);
      if (collapse) el.scrollIntoView({ block: "nearest" });
    });
    body.after(button);
    setCollapsed(el, button, true);
  }

  for (const el of messages.querySelectorAll('.message[data-role="user"]')) consider(el);
  new MutationObserver((records) => {
    for (const record of records) for (const node of record.addedNodes) consider(node);
  }).observe(messages, { childList: true });
})();
