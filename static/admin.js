// The admin page: the users table's buttons (JSON API under /admin/api/users) and the live engine
// panel (GET /admin/api/engine every 5 s, drawn as small SVG line charts). No libraries; runs
// under CSP script-src 'self'. User-controlled text (usernames) only ever goes in textContent.
"use strict";

(function () {
  const root = document.getElementById("admin");
  if (!root) return;

  const POLL_MS = 5000;
  const SVG_NS = "http://www.w3.org/2000/svg";
  const CHART_W = 240;
  const CHART_H = 56;
  const PAD = 3;

  function csrfToken() {
    const meta = document.querySelector('meta[name="csrf-token"]');
    return meta ? meta.content : "";
  }

  async function postJSON(url, body) {
    const response = await fetch(url, {
      method: "POST",
      credentials: "same-origin",
      headers: { "Content-Type": "application/json", "X-CSRF-Token": csrfToken(), Accept: "application/json" },
      body: JSON.stringify(body),
    });
    let data = null;
    try { data = await response.json(); } catch (_) { /* not JSON: handled below */ }
    if (!response.ok) {
      const message = data && data.error && data.error.message;
      throw new Error(message || `The server answered ${response.status}.`);
    }
    return data;
  }

  // ---- users table ----------------------------------------------------------------------------

  const usersBody = document.getElementById("users-body");
  const usersError = document.getElementById("users-error");
  const usersCount = document.getElementById("users-count");

  function button(label, action, value, extra) {
    const b = document.createElement("button");
    b.type = "button";
    b.className = "button small" + (extra ? " " + extra : "");
    b.dataset.action = action;
    b.dataset.value = value;
    b.textContent = label;
    return b;
  }

  // Mirrors the user_actions macro in templates/admin.html.
  function actionsFor(u) {
    if (u.id === root.dataset.selfId) {
      const you = document.createElement("span");
      you.className = "muted";
      you.textContent = "you";
      return [you];
    }
    const out = [];
    if (u.status === "pending") out.push(button("Approve", "status", "active", "primary"));
    if (u.status === "disabled") out.push(button("Enable", "status", "active"));
    if (u.status !== "disabled") out.push(button("Disable", "status", "disabled", "danger"));
    out.push(u.role === "admin" ? button("Make user", "role", "user") : button("Make admin", "role", "admin"));
    return out;
  }

  function cell(className, text) {
    const td = document.createElement("td");
    td.className = className;
    td.textContent = text;
    return td;
  }

  function renderUsers(users) {
    const rows = users.map((u) => {
      const tr = document.createElement("tr");
      tr.dataset.userId = u.id;
      tr.dataset.username = u.username;
      tr.dataset.status = u.status;
      tr.dataset.role = u.role;
      const status = document.createElement("td");
      status.className = "status";
      const badge = document.createElement("span");
      badge.className = "badge badge-" + u.status;
      badge.textContent = u.status;
      status.append(badge);
      const created = document.createElement("td");
      created.className = "created";
      const time = document.createElement("time");
      time.dateTime = u.created_at;
      time.textContent = String(u.created_at).slice(0, 10);
      created.append(time);
      const actions = document.createElement("td");
      actions.className = "actions";
      actions.append(...actionsFor(u));
      tr.append(cell("username", u.username), cell("role", u.role), status, created,
        cell("num tokens", String(u.tokens_today)), cell("num keys", String(u.api_keys)), actions);
      return tr;
    });
    usersBody.replaceChildren(...rows);
    usersCount.textContent = `${users.length} account${users.length === 1 ? "" : "s"}`;
  }

  if (usersBody) {
    usersBody.addEventListener("click", async (event) => {
      const target = event.target.closest("button[data-action]");
      if (!target) return;
      const row = target.closest("tr[data-user-id]");
      const action = target.dataset.action; // "status" | "role"
      // Disabling logs the person out everywhere and stops his replies and API keys at once.
      if (action === "status" && target.dataset.value === "disabled" && !window.confirm(
        `Disable ${row.dataset.username}? They are logged out everywhere at once, their replies ` +
        "stop and their API keys stop working until you enable the account again.")) return;
      usersError.hidden = true;
      for (const b of row.querySelectorAll("button")) b.disabled = true;
      try {
        const url = `${root.dataset.usersUrl}/${encodeURIComponent(row.dataset.userId)}/${action}`;
        const data = await postJSON(url, { [action]: target.dataset.value });
        renderUsers(data.users);
      } catch (error) {
        usersError.textContent = error.message;
        usersError.hidden = false;
        for (const b of row.querySelectorAll("button")) b.disabled = false;
      }
    });
  }

  // ---- engine panel ---------------------------------------------------------------------------

  const updated = document.getElementById("engine-updated");

  function last(values) {
    for (let i = values.length - 1; i >= 0; i--) if (values[i] !== null && values[i] !== undefined) return values[i];
    return null;
  }

  function formatMs(ms) {
    if (ms === null) return "–";
    return ms < 1000 ? `${Math.round(ms)} ms` : `${(ms / 1000).toFixed(2)} s`;
  }

  function setValue(key, text) {
    const el = document.getElementById("engine-" + key);
    if (el) el.textContent = text;
  }

  // One polyline per run of known values (a null breaks the line).
  function segments(ts, values, x, y) {
    const out = [];
    let current = [];
    for (let i = 0; i < ts.length; i++) {
      if (values[i] === null || values[i] === undefined) {
        if (current.length) out.push(current);
        current = [];
      } else {
        current.push(`${x(ts[i]).toFixed(1)},${y(values[i]).toFixed(1)}`);
      }
    }
    if (current.length) out.push(current);
    return out;
  }

  function drawChart(key, ts, lines, fixedMax, windowS, now) {
    const svg = document.getElementById("chart-" + key);
    if (!svg) return;
    let max = fixedMax || 0;
    if (!fixedMax) for (const line of lines) for (const v of line.values) if (v !== null && v > max) max = v;
    if (max <= 0) max = 1;
    const start = now - windowS;
    const x = (t) => PAD + ((t - start) / windowS) * (CHART_W - 2 * PAD);
    const y = (v) => CHART_H - PAD - (v / max) * (CHART_H - 2 * PAD);
    const children = [];
    const base = document.createElementNS(SVG_NS, "line");
    base.setAttribute("class", "spark-base");
    base.setAttribute("x1", "0");
    base.setAttribute("x2", String(CHART_W));
    base.setAttribute("y1", String(CHART_H - PAD));
    base.setAttribute("y2", String(CHART_H - PAD));
    children.push(base);
    let points = 0;
    for (const line of lines) {
      for (const seg of segments(ts, line.values, x, y)) {
        points += seg.length;
        const el = document.createElementNS(SVG_NS, seg.length > 1 ? "polyline" : "circle");
        el.setAttribute("class", "spark-line " + line.cls);
        if (seg.length > 1) {
          el.setAttribute("points", seg.join(" "));
        } else {
          const [cx, cy] = seg[0].split(",");
          el.setAttribute("cx", cx);
          el.setAttribute("cy", cy);
          el.setAttribute("r", "1.5");
        }
        children.push(el);
      }
    }
    svg.replaceChildren(...children);
    svg.dataset.points = String(points);
    svg.dataset.max = String(max);
  }

  function renderEngine(s) {
    const now = s.t.length ? s.t[s.t.length - 1] : Date.now() / 1000;
    const w = s.window_s;
    const running = last(s.running);
    const waiting = last(s.waiting);
    const kv = last(s.kv_usage);
    const tps = last(s.tokens_per_s);
    setValue("running", running === null ? "–" : String(running));
    setValue("waiting", waiting === null ? "–" : String(waiting));
    setValue("kv_usage", kv === null ? "–" : `${(kv * 100).toFixed(1)} %`);
    setValue("tokens_per_s", tps === null ? "–" : tps.toFixed(1));
    setValue("ttft", `${formatMs(last(s.ttft_p50_ms))} · ${formatMs(last(s.ttft_p99_ms))}`);
    drawChart("running", s.t, [{ values: s.running, cls: "a" }], 0, w, now);
    drawChart("waiting", s.t, [{ values: s.waiting, cls: "a" }], 0, w, now);
    drawChart("kv_usage", s.t, [{ values: s.kv_usage, cls: "a" }], 1, w, now);
    drawChart("tokens_per_s", s.t, [{ values: s.tokens_per_s, cls: "a" }], 0, w, now);
    drawChart("ttft", s.t, [{ values: s.ttft_p99_ms, cls: "b" }, { values: s.ttft_p50_ms, cls: "a" }], 0, w, now);
    renderInstances(s.instances || [], s.instances_error || null, now);
    updated.textContent = s.t.length
      ? `updated ${new Date(now * 1000).toLocaleTimeString()} · ${s.t.length} samples`
      : "no samples yet";
    updated.dataset.samples = String(s.t.length);
    updated.dataset.last = s.t.length ? String(now) : "";
  }

  // One row per live server process (GET /admin/api/engine's "instances"); text only.
  function renderInstances(instances, error, now) {
    const body = document.getElementById("instances-body");
    if (!body) return;
    const rows = instances.map((p) => {
      const tr = document.createElement("tr");
      tr.dataset.instance = p.instance;
      if (p.this) tr.classList.add("this-instance");
      const ago = Math.max(0, Math.round(Date.now() / 1000 - p.last_seen));
      tr.append(
        cell("instance", p.this ? `${p.instance} (this page)` : p.instance),
        cell("model", p.model),
        cell("num running", p.running === null ? "–" : String(p.running)),
        cell("num waiting", p.waiting === null ? "–" : String(p.waiting)),
        cell("num kv", p.kv_usage === null ? "–" : `${(p.kv_usage * 100).toFixed(1)} %`),
        cell("num tps", p.tokens_per_s === null ? "–" : p.tokens_per_s.toFixed(1)),
        cell("seen", ago <= 1 ? "now" : `${ago} s ago`));
      return tr;
    });
    body.replaceChildren(...rows);
    const errorEl = document.getElementById("instances-error");
    if (errorEl) {
      errorEl.hidden = !error;
      errorEl.textContent = error ? `Only this process is listed: ${error}` : "";
    }
  }

  let timer = null;

  async function pollEngine() {
    try {
      const response = await fetch(root.dataset.engineUrl, {
        credentials: "same-origin", headers: { Accept: "application/json" }, cache: "no-store",
      });
      if (response.status === 401 || response.status === 403) {
        clearInterval(timer); // logged out or no longer an admin: stop asking
        updated.textContent = "stopped: not signed in as an admin any more";
        return;
      }
      if (!response.ok) throw new Error(`HTTP ${response.status}`);
      renderEngine(await response.json());
    } catch (error) {
      updated.textContent = `could not update (${error.message}); retrying`;
    }
  }

  if (updated) {
    pollEngine();
    timer = setInterval(pollEngine, POLL_MS);
  }
})();
