// Crescent chat page, the conversation's own settings: system prompt, temperature and max
// tokens per reply, tools on or off (an agent run per turn) (GET/PATCH /api/conversations/{id}/settings, docs/INTERFACES.md section 3).
// An empty field follows the admin's default, shown as the field's placeholder; the server
// checks every value (max tokens within the admin's maximum) and names a refused field.
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
    maxTokens.placeholder = String(d.max_tokens);
    maxTokens.max = String(data.max_max_tokens);
    maxRange.textContent = "(1 to " + data.max_max_tokens.toLocaleString() + ")";
    if (useTools) useTools.checked = Boolean(s.use_tools);
    const off = document.getElementById("settings-tools-off");
    if (off) off.hidden = data.tools_available !== false;
    showTools(Boolean(s.use_tools && data.tools_available));
  }

  // The header's badge and the composer's toggle (#use-tools) follow the stored setting.
  function showTools(on) {
    const badge = document.getElementById("tools-badge");
    if (badge) badge.hidden = !on;
    if (composerTools) composerTools.checked = on;
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
    save({ system_prompt: null, temperature: null, max_tokens: null });
  });
  form.addEventListener("submit", (event) => {
    event.preventDefault();
    // Blank: no instructions of this conversation's own.
    const text = prompt.value;
    save({
      system_prompt: text.trim() === "" ? null : text,
      temperature: number(temperature),
      max_tokens: number(maxTokens),
      use_tools: useTools ? useTools.checked : false,
    });
  });
})();
