// Copy buttons of code blocks. backend/markdown.py frames every code block of a message as
// .code-block > .code-head > button.code-copy + pre > code, in server-rendered pages and in
// streamed deltas alike, so one click listener on the document serves them all, however late
// they arrive. The copy is the code's plain text (highlighting spans dropped), without the
// newline that ends its last line.
//
// Also the page's one clipboard helper: window.CrescentClipboard.copy(text) returns a Promise
// that rejects when the copy failed (static/message_actions.js uses it).
(function () {
  "use strict";

  const LABEL_MS = 1500;

  // Rejects when the copy failed: a denied clipboard permission, or the fallback refused.
  async function writeClipboard(text) {
    if (navigator.clipboard && window.isSecureContext) {
      await navigator.clipboard.writeText(text);
      return;
    }
    // Plain http on a LAN address has no async clipboard API; a selected textarea still copies.
    const area = document.createElement("textarea");
    area.value = text;
    area.setAttribute("readonly", "");
    area.className = "visually-hidden";
    document.body.appendChild(area);
    area.select();
    const copied = document.execCommand("copy");
    area.remove();
    if (!copied) throw new Error("copy refused");
  }

  function showResult(button, text, state) {
    button.textContent = text;
    button.dataset.state = state;
    clearTimeout(Number(button.dataset.timer));
    button.dataset.timer = String(setTimeout(() => {
      button.textContent = "Copy";
      delete button.dataset.state;
      delete button.dataset.timer;
    }, LABEL_MS));
  }

  window.CrescentClipboard = { copy: writeClipboard };

  document.addEventListener("click", async (event) => {
    const button = event.target instanceof Element ? event.target.closest(".code-block .code-copy") : null;
    if (!button) return;
    const code = button.closest(".code-block").querySelector("pre > code");
    if (!code) return;
    try {
      await writeClipboard(code.textContent.replace(/\n$/, ""));
      showResult(button, "Copied", "copied");
    } catch (err) {
      showResult(button, "Copy failed", "failed");
    }
  });
})();
