// The /account page: change the password, create / revoke API keys through the JSON endpoints
// of web/account_routes.py. Every unsafe call sends the page's CSRF token (meta csrf-token).
"use strict";

(function () {
  const csrfToken = () => document.querySelector('meta[name="csrf-token"]')?.content || "";

  async function call(method, url, body) {
    const response = await fetch(url, {
      method,
      headers: { "Content-Type": "application/json", "X-CSRF-Token": csrfToken() },
      body: body === undefined ? undefined : JSON.stringify(body),
      credentials: "same-origin",
    });
    let data = null;
    if (response.status !== 204) {
      try { data = await response.json(); } catch (_) { data = null; }
    }
    if (!response.ok) {
      let message = (data && data.error && data.error.message) || `Request failed (${response.status})`;
      const wait = response.headers.get("Retry-After");
      if (response.status === 429 && wait) message += ` (try again in ${wait} s)`;
      throw new Error(message);
    }
    return data;
  }

  function say(id, text, isError) {
    const el = document.getElementById(id);
    el.textContent = text;
    el.classList.toggle("error", Boolean(isError));
  }

  function formatTime(iso) {
    if (!iso) return "never";
    return iso.slice(0, 16).replace("T", " ") + " UTC";
  }

  function keyRow(key) {
    const row = document.createElement("tr");
    row.dataset.keyId = key.id;
    row.className = key.revoked_at ? "revoked" : "live";
    const cells = [key.name, null, formatTime(key.created_at), formatTime(key.last_used_at),
                   key.revoked_at ? "revoked" : "active"];
    cells.forEach((text, i) => {
      const td = document.createElement("td");
      if (i === 1) {
        const code = document.createElement("code");
        code.textContent = key.prefix + "…";
        td.appendChild(code);
      } else {
        td.textContent = text;
      }
      row.appendChild(td);
    });
    const action = document.createElement("td");
    if (!key.revoked_at) {
      const button = document.createElement("button");
      button.type = "button";
      button.className = "button ghost revoke";
      button.dataset.keyId = key.id;
      button.textContent = "Revoke";
      action.appendChild(button);
    }
    row.appendChild(action);
    return row;
  }

  async function refreshKeys() {
    const data = await call("GET", "/api/account/keys");
    const body = document.getElementById("keys-body");
    body.replaceChildren(...data.keys.map(keyRow));
    document.getElementById("keys-empty").hidden = data.keys.length > 0;
  }

  function reportBrowserRefusals(form, statusId) {
    let reported = false;
    // A click on the submit button (Enter in a field clicks it too) starts an attempt.
    form.querySelector('[type="submit"]').addEventListener("click", () => {
      reported = false;
      say(statusId, "");
    });
    form.addEventListener("invalid", (event) => {
      if (reported) return;  // the first refused field speaks, as the browser's bubble does
      reported = true;
      const label = form.querySelector(`label[for="${event.target.id}"]`);
      const what = label ? `${label.textContent.trim()}: ` : "";
      say(statusId, what + event.target.validationMessage, true);
    }, true);
  }

  document.addEventListener("DOMContentLoaded", () => {
    const passwordForm = document.getElementById("password-form");
    // Every submit attempt replaces the status line, including one the browser refuses itself
    // (required, minlength): that fires "invalid" on the fields and no "submit" at all.
    reportBrowserRefusals(passwordForm, "password-status");
    passwordForm.addEventListener("submit", async (event) => {
      event.preventDefault();
      say("password-status", "Saving…");
      try {
        await call("POST", "/api/account/password", {
          current_password: passwordForm.current_password.value,
          new_password: passwordForm.new_password.value,
        });
        passwordForm.reset();
        say("password-status", "Password changed. Other sessions were logged out.");
      } catch (error) {
        say("password-status", error.message, true);
      }
    });

    const keyForm = document.getElementById("key-form");
    reportBrowserRefusals(keyForm, "key-status");
    keyForm.addEventListener("submit", async (event) => {
      event.preventDefault();
      say("key-status", "");
      try {
        const data = await call("POST", "/api/account/keys", { name: keyForm.name.value });
        keyForm.reset();
        document.getElementById("new-key-secret").textContent = data.secret;
        document.getElementById("new-key").hidden = false;
        await refreshKeys();
      } catch (error) {
        say("key-status", error.message, true);
      }
    });

    document.getElementById("new-key-copy").addEventListener("click", async () => {
      const secret = document.getElementById("new-key-secret").textContent;
      try {
        await navigator.clipboard.writeText(secret);
        say("key-status", "Copied.");
      } catch (_) {
        say("key-status", "Select the key and copy it by hand.", true);
      }
    });

    document.getElementById("keys-body").addEventListener("click", async (event) => {
      const button = event.target.closest("button.revoke");
      if (!button) return;
      if (!window.confirm("Revoke this key? Programs using it will stop working.")) return;
      try {
        await call("DELETE", `/api/account/keys/${encodeURIComponent(button.dataset.keyId)}`);
        await refreshKeys();
        say("key-status", "Key revoked.");
      } catch (error) {
        say("key-status", error.message, true);
      }
    });
  });
})();
