// The "starting" page (templates/starting.html): polls /healthz while the model loads, shows the
// progress it reports, and reloads into the app once the server answers ready.
"use strict";

(function () {
  const card = document.getElementById("starting");
  const percent = document.getElementById("starting-percent");
  if (!card || !percent) return;  // the failure page: nothing to wait for
  const bar = document.getElementById("starting-bar");
  const stage = document.getElementById("starting-stage");
  const POLL_MS = 1000;

  function show(body) {
    if (typeof body.progress !== "number") return;
    const value = Math.round(body.progress * 100);
    percent.textContent = String(value);
    bar.value = value;
    if (stage && body.stage) stage.textContent = body.stage;
  }

  async function poll() {
    let body = null;
    try {
      const response = await fetch(card.dataset.healthUrl, { cache: "no-store" });
      body = await response.json();
      if (response.ok && body.ready) {
        location.reload();
        return;
      }
    } catch (e) {
      // The server restarting, or not listening yet: keep asking.
    }
    if (body && body.status === "failed") {
      location.reload();  // the server renders the failure
      return;
    }
    if (body) show(body);
    setTimeout(poll, POLL_MS);
  }

  setTimeout(poll, POLL_MS);
})();
