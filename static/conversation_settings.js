// Crescent chat page, the conversation's own settings: system prompt, temperature and max
// tokens per reply, tools on or off (an agent run per turn) and the limits of its tool runs
// (steps, tool calls, tokens, seconds: within the admin's maximums)
// (GET/PATCH /api/conversations/{id}/settings, docs/INTERFACES.md section 3).
// An empty field follows the admin's default, shown as the field's placeholder; the server
// checks every value (max tokens within the admin's maximum) and names a refused field.
// A value stored above a maximum the admin lowered since is shown at that maximum; Save sends
// max tokens and the limits only when the person changed them, so that a maximum lowered for a
// while does not lower the stored value for good (the server caps it when a run starts).
"use strict";

(function () {
  const openButton = document.getElementById("conversation-settings");
  const dialog = document.getElementById("settings-dialog");
  if (!openButton || !dialog) return;
  const form = document.getElementById("settings-form");
  const prompt = document.getElementById("settings-system-prompt");
  const temperature = document.getElementById("settings-temperature");
  const maxTokens = document.getElementById("settings-max-tokens");
  const maxRange = document.getElementById("settings-max-range");
  const error = document.getElementById("settings-error");
  const useTools = document.getElementById("settings-use-tools");
  const composerTools = document.getElementById("use-tools");
  const budget = document.getElementById("settings-budget");
  const budgetInputs = Array.from(dialog.querySelectorAll("input[data-budget]"));

  function conversationId() {
    return window.CrescentChat ? window.CrescentChat.conversationId() : document.getElementById("app").dataset.conversationId;
  }

  function url() {
    return "/api/conversations/" + encodeURIComponent(conversationId()) + "/settings";
  }

  function showError(text) {
    error.textContent = text;
    error.hidden = !text;
  }

  function fill(data) {
    const s = data.settings;
    const d = data.defaults;
    prompt.value = s.system_prompt == null ? "" : s.system_prompt;
    prompt.placeholder = d.system_prompt != null ? d.system_prompt
      : d.has_system_prompt ? "Added after the server's instructions" : "The model's own default";
    temperature.value = s.temperature == null ? "" : String(s.temperature);
    temperature.placeholder = String(d.temperature);
    // Stored before the admin lowered his maximum: shown (and used) within it.
    maxTokens.value = s.max_tokens == null ? "" : String(Math.min(s.max_tokens, data.max_max_tokens));
    maxTokens.dataset.shown = maxTokens.value;
    maxTokens.placeholder = String(d.max_tokens);
    maxTokens.max = String(data.max_max_tokens);
    maxRange.textContent = "(1 to " + data.max_max_tokens.toLocaleString() + ")";
    if (useTools) useTools.checked = Boolean(s.use_tools);
    const off = document.getElementById("settings-tools-off");
    if (off) off.hidden = data.tools_available !== false;
    showTools(Boolean(s.use_tools && data.tools_available));
    fillBudget(s, data.agent_limits || {});
    if (budget) budget.hidden = data.tools_available === false;
  }

  // Each limit: the stored value (shown within a maximum the admin lowered since), the admin's
  // default as placeholder, his maximum as the input's max and in the help text.
  function fillBudget(s, limits) {
    for (const input of budgetInputs) {
      const limit = limits[input.dataset.budget];
      if (!limit) continue;
      const own = s[input.dataset.budget];
      input.value = own == null ? "" : String(Math.min(own, limit.maximum));
      input.dataset.shown = input.value;
      input.placeholder = String(limit.default);
      input.min = String(limit.minimum);
      input.max = String(limit.maximum);
      const range = document.getElementById(input.id + "-range");
      if (range) range.textContent = "(at most " + limit.maximum.toLocaleString() + ")";
    }
  }

  // reset: every limit back to the default; else only the limits the person edited.
  function budgetValues(reset) {
    const values = {};
    for (const input of budgetInputs) {
      if (reset) values[input.dataset.budget] = null;
      else if (edited(input)) values[input.dataset.budget] = number(input);
    }
    return values;
  }

  // Whether the person changed the field since fill() drew it (a value shown capped is not a choice).
  function edited(input) {
    return input.value.trim() !== (input.dataset.shown || "");
  }

  // The header's badge and the composer's toggle (#use-tools) follow the stored setting.
  function showTools(on) {
    const badge = document.getElementById("tools-badge");
    if (badge) badge.hidden = !on;
    if (composerTools) composerTools.checked = on;
    documentsImplied(on);
  }

  // With tools on, a turn searches the documents as a step: "Use my documents" has no effect then.
  function documentsImplied(on) {
    const documents = document.getElementById("use-documents");
    const note = document.getElementById("documents-implied");
    if (documents) {
      documents.disabled = on;
      documents.classList.toggle("implied", on);
    }
    if (note) note.hidden = !on;
  }

  function csrf() {
    const meta = document.querySelector('meta[name="csrf-token"]');
    return meta ? meta.content : "";
  }

  async function open() {
    if (!conversationId()) return;
    showError("");
    const response = await fetch(url(), { headers: { Accept: "application/json" } });
    if (!response.ok) {
      showError("The settings could not be loaded (" + response.status + ").");
    } else {
      fill(await response.json());
    }
    dialog.showModal();
    prompt.focus();
  }

  function number(input) {
    const text = input.value.trim();
    return text === "" ? null : Number(text);
  }

  async function save(values) {
    const response = await fetch(url(), {
      method: "PATCH",
      headers: { "Content-Type": "application/json", "X-CSRF-Token": csrf() },
      body: JSON.stringify(values),
    });
    if (response.ok) {
      fill(await response.json());
      dialog.close();
      return;
    }
    let message = "The settings could not be saved (" + response.status + ").";
    try {
      const body = await response.json();
      if (body.error && body.error.message) message = body.error.message;
    } catch (e) { /* not our JSON */ }
    showError(message);
  }

  openButton.addEventListener("click", open);
  // The composer's toggle: stored at once for a conversation; a new chat sends it with its
  // first message (static/chat.js).
  if (composerTools) {
    composerTools.addEventListener("change", async () => {
      const on = composerTools.checked;
      const badge = document.getElementById("tools-badge");
      if (badge) badge.hidden = !on;
      documentsImplied(on);
      if (!conversationId()) return;
      const response = await fetch(url(), {
        method: "PATCH",
        headers: { "Content-Type": "application/json", "X-CSRF-Token": csrf() },
        body: JSON.stringify({ use_tools: on }),
      });
      if (response.ok) fill(await response.json());
      else showTools(!on);  // not stored: show what is
    });
  }
  document.getElementById("settings-cancel").addEventListener("click", () => dialog.close());
  document.getElementById("settings-reset").addEventListener("click", () => {
    save(Object.assign({ system_prompt: null, temperature: null, max_tokens: null }, budgetValues(true)));
  });
  form.addEventListener("submit", (event) => {
    event.preventDefault();
    // Blank: no instructions of this conversation's own.
    const text = prompt.value;
    const values = {
      system_prompt: text.trim() === "" ? null : text,
      temperature: number(temperature),
      use_tools: useTools ? useTools.checked : false,
    };
    if (edited(maxTokens)) values.max_tokens = number(maxTokens);
    save(Object.assign(values, budgetValues(false)));
  });
})();
