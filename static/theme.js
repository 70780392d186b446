// The colour scheme: <html data-theme="system|light|dark">, rendered by the server from the
// user's stored theme (templates/base.html); static/style.css holds the colours of each.
// Controls: a button with data-theme-toggle cycles system -> light -> dark; a <select> with
// data-theme-select picks one. Either applies at once and is stored with
// POST /api/account/theme; a refused save puts the previous theme back.
"use strict";

(function () {
  const THEMES = ["system", "light", "dark"];
  const LABELS = { system: "System", light: "Light", dark: "Dark" };
  const ICONS = { system: "◐", light: "☀", dark: "☾" };
  const root = document.documentElement;

  function current() {
    return THEMES.includes(root.dataset.theme) ? root.dataset.theme : "system";
  }

  function apply(theme) {
    root.dataset.theme = theme;
    const scheme = document.querySelector('meta[name="color-scheme"]');
    if (scheme) scheme.content = theme === "system" ? "light dark" : theme;
    for (const button of document.querySelectorAll("[data-theme-toggle]")) {
      button.textContent = ICONS[theme];
      const next = THEMES[(THEMES.indexOf(theme) + 1) % THEMES.length];
      button.setAttribute("aria-label", "Theme: " + LABELS[theme] + " (switch to " + LABELS[next] + ")");
      button.title = "Theme: " + LABELS[theme];
      button.dataset.current = theme;
    }
    for (const select of document.querySelectorAll("[data-theme-select]")) select.value = theme;
  }

  function say(text) {
    const status = document.getElementById("theme-status");
    if (status) {
      status.textContent = text;
      status.classList.toggle("error", Boolean(text));
    }
  }

  async function choose(theme) {
    const previous = current();
    apply(theme);
    const meta = document.querySelector('meta[name="csrf-token"]');
    let ok = false;
    try {
      const response = await fetch("/api/account/theme", {
        method: "POST",
        headers: { "Content-Type": "application/json", "X-CSRF-Token": meta ? meta.content : "" },
        body: JSON.stringify({ theme }),
        credentials: "same-origin",
      });
      ok = response.ok;
    } catch (e) {
      ok = false;
    }
    if (ok) {
      say("");
    } else {
      apply(previous);
      say("The theme could not be saved; try again.");
    }
  }

  function init() {
    apply(current());
    for (const button of document.querySelectorAll("[data-theme-toggle]")) {
      button.addEventListener("click", () => {
        choose(THEMES[(THEMES.indexOf(current()) + 1) % THEMES.length]);
      });
    }
    for (const select of document.querySelectorAll("[data-theme-select]")) {
      select.addEventListener("change", () => choose(select.value));
    }
  }

  if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", init);
  else init();
})();
