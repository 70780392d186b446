// Crescent chat page, documents: the sidebar's #documents panel (upload, list, delete), the
// per-conversation #use-documents toggle, an admin's "Shared with everyone" box on his own
// documents, and the sources under replies with their [n] citations.
//
// HTTP: docs/INTERFACES.md section 8. Every fetch that changes something sends X-CSRF-Token
// from <meta name="csrf-token">. Document names, excerpts and model output are untrusted: they
// only ever reach the page through textContent, attributes and text nodes, never innerHTML.
// static/chat.js calls window.CrescentSources.render(messageEl, sources) for a reply that
// finishes while the page is open; replies rendered by the server are handled at start here.
"use strict";

(function () {
  const POLL_MS = 1000;
  const CITATION = /\[(\d{1,3}(?:\s*,\s*\d{1,3})*)\]/g;
  const SKIP_TAGS = new Set(["A", "CODE", "PRE", "SCRIPT", "STYLE"]);
  // Wording for a refusal whose body is not our JSON (a proxy's 413, say).
  const STATUS_MESSAGES = {
    401: "You are signed out: log in again.",
    403: "The server refused this: reload the page and try again.",
    404: "That document no longer exists.",
    413: "The file is too large.",
    415: "This kind of file is not supported: upload .txt, .md, .html or .pdf.",
    422: "The file could not be read.",
  };

  // How an upload refusal starts, by the server's error code; its message gives the detail.
  const UPLOAD_REFUSALS = {
    document_too_large: "is too large",
    unsupported_document: "is not a supported kind of file",
    unreadable_document: "could not be read",
    too_many_documents_processing: "was not accepted",
  };

  function csrfToken() {
    const meta = document.querySelector('meta[name="csrf-token"]');
    return meta ? meta.content : "";
  }

  // fetch with the CSRF header; resolves to the parsed JSON (null for 204), rejects with an Error
  // whose message is the server's own ({"error": {"code", "message"}}) when it gave one.
  async function request(method, url, body) {
    const headers = { Accept: "application/json", "X-CSRF-Token": csrfToken() };
    const init = { method, credentials: "same-origin", headers };
    if (body instanceof FormData) {
      init.body = body;  // the browser sets the multipart boundary
    } else if (body !== undefined) {
      headers["Content-Type"] = "application/json";
      init.body = JSON.stringify(body);
    }
    let response;
    try {
      response = await fetch(url, init);
    } catch (e) {
      throw new Error("The server could not be reached. Check the connection and try again.");
    }
    let data = null;
    if (response.status !== 204) {
      try { data = await response.json(); } catch (_) { /* not JSON: the status speaks */ }
    }
    if (!response.ok) {
      const error = data && data.error;
      const err = new Error((error && error.message) || STATUS_MESSAGES[response.status]
        || "The server answered " + response.status + ".");
      err.code = error && error.code;
      err.status = response.status;
      throw err;
    }
    return data;
  }

  // ---- sources and citations -----------------------------------------------------------------

  // "name vN — heading > path / p. N"; templates/_macros.html source_label is the same.
  function sourceLabel(s) {
    const where = [];
    if (s.heading_path) where.push(s.heading_path);
    if (s.page !== null && s.page !== undefined) where.push("p. " + s.page);
    return s.name + " v" + s.version + (where.length ? " — " + where.join(" / ") : "");
  }

  // Addressed by document id too: chunk ids can be reused after a delete, document ids never are.
  function chunkHref(documentId, chunkId) {
    return "/documents/" + encodeURIComponent(String(documentId)) + "/chunks/" + encodeURIComponent(String(chunkId));
  }

  function buildSources(sources) {
    const nav = document.createElement("nav");
    nav.className = "sources";
    nav.setAttribute("aria-label", "Sources");
    const title = document.createElement("p");
    title.className = "sources-title";
    title.textContent = "Sources";
    const list = document.createElement("ol");
    list.className = "sources-list";
    for (const s of sources) {
      const n = Number(s.n);
      const chunkId = Number(s.chunk_id);
      if (!Number.isInteger(n) || !Number.isInteger(chunkId) || !s.document_id) continue;
      const li = document.createElement("li");
      const a = document.createElement("a");
      a.className = "source-link";
      a.href = chunkHref(s.document_id, chunkId);
      a.dataset.n = String(n);
      a.textContent = "[" + n + "] " + sourceLabel(s);
      if (s.excerpt) a.title = s.excerpt;
      li.appendChild(a);
      list.appendChild(li);
    }
    nav.append(title, list);
    return nav;
  }

  // The text nodes of `root` that may hold citation markers: not inside links or code.
  function textNodes(root) {
    const walker = document.createTreeWalker(root, NodeFilter.SHOW_TEXT, {
      acceptNode(node) {
        for (let el = node.parentElement; el && el !== root; el = el.parentElement) {
          if (SKIP_TAGS.has(el.tagName)) return NodeFilter.FILTER_REJECT;
        }
        return node.nodeValue.indexOf("[") >= 0 ? NodeFilter.FILTER_ACCEPT : NodeFilter.FILTER_SKIP;
      },
    });
    const nodes = [];
    while (walker.nextNode()) nodes.push(walker.currentNode);
    return nodes;
  }

  // Each "[n]" (or "[n, m]") in the body whose every number is one of the message's sources
  // becomes a.citation links to those chunks; everything else stays the text it was.
  function linkCitations(body, links) {
    for (const node of textNodes(body)) {
      const text = node.nodeValue;
      CITATION.lastIndex = 0;
      let match;
      let last = 0;
      let fragment = null;
      while ((match = CITATION.exec(text)) !== null) {
        const numbers = match[1].split(",").map((x) => Number(x.trim()));
        if (!numbers.every((n) => links.has(n))) continue;
        fragment = fragment || document.createDocumentFragment();
        if (match.index > last) fragment.appendChild(document.createTextNode(text.slice(last, match.index)));
        for (const n of numbers) {
          const source = links.get(n);
          const a = document.createElement("a");
          a.className = "citation";
          a.href = source.getAttribute("href");
          a.dataset.n = String(n);
          a.title = source.textContent;
          a.textContent = "[" + n + "]";
          fragment.appendChild(a);
        }
        last = match.index + match[0].length;
      }
      if (!fragment) continue;
      if (last < text.length) fragment.appendChild(document.createTextNode(text.slice(last)));
      node.parentNode.replaceChild(fragment, node);
    }
  }

  // Links [n] in an assistant message's body to the message's .sources list.
  function applyCitations(messageEl) {
    const body = messageEl.querySelector(".message-body");
    if (!body) return;
    const links = new Map();
    for (const a of messageEl.querySelectorAll(".sources a.source-link[data-n]")) {
      links.set(Number(a.dataset.n), a);
    }
    if (links.size) linkCitations(body, links);
  }

  // Shows `sources` (citation dicts from the done frame) under the message's body, replacing
  // any list already there, and links the body's [n] markers. No sources: no list.
  function renderSources(messageEl, sources) {
    const old = messageEl.querySelector(".sources");
    if (old) old.remove();
    if (!Array.isArray(sources) || !sources.length) return;
    const body = messageEl.querySelector(".message-body");
    if (!body) return;
    body.after(buildSources(sources));
    applyCitations(messageEl);
  }

  window.CrescentSources = { render: renderSources, label: sourceLabel, link: applyCitations };

  for (const el of document.querySelectorAll('#messages .message[data-role="assistant"]')) {
    applyCitations(el);
  }

  // ---- documents panel -----------------------------------------------------------------------

  const panel = document.getElementById("documents");
  const upload = document.getElementById("document-upload");
  const uploadButton = document.getElementById("document-upload-button");
  const list = document.getElementById("document-list");
  const empty = document.getElementById("documents-empty");
  const errorBox = document.getElementById("document-error");
  const statusBox = document.getElementById("document-status");
  const toggle = document.getElementById("use-documents");
  const app = document.getElementById("app");
  // Only admins may share (the server refuses others with 403); the page says who is looking.
  const isAdmin = Boolean(panel) && panel.dataset.isAdmin === "true";

  function formatSize(bytes) {
    if (bytes < 1024) return bytes + " B";
    if (bytes < 1024 * 1024) return (bytes / 1024).toFixed(1) + " KB";
    return (bytes / (1024 * 1024)).toFixed(1) + " MB";
  }

  function showError(text) {
    errorBox.textContent = text;
    errorBox.hidden = !text;
  }

  function showStatus(text) {
    statusBox.textContent = text;
    statusBox.hidden = !text;
  }

  function documentItem(d) {
    const li = document.createElement("li");
    li.className = "document";
    li.dataset.documentId = d.id;
    li.dataset.status = d.status;
    li.dataset.name = d.name;

    const row = document.createElement("div");
    row.className = "document-row";
    const kind = document.createElement("span");
    kind.className = "document-kind";
    kind.textContent = String(d.kind || "").toUpperCase();
    const name = document.createElement("span");
    name.className = "document-name";
    name.textContent = d.name;
    name.title = d.name;
    row.append(kind, name);
    if (d.is_own !== false) {
      const del = document.createElement("button");
      del.type = "button";
      del.className = "document-delete";
      del.dataset.action = "delete";
      del.setAttribute("aria-label", "Delete " + d.name);
      del.title = "Delete";
      del.textContent = "×";
      row.appendChild(del);
    }

    const meta = document.createElement("div");
    meta.className = "document-meta";
    const parts = ["v" + d.version, formatSize(d.size_bytes || 0)];
    if (d.status === "ready") parts.push(d.num_chunks + (d.num_chunks === 1 ? " chunk" : " chunks"));
    if (d.shared) parts.push(d.is_own === false ? "shared with you" : "shared");
    meta.textContent = parts.join(" · ");

    const state = document.createElement("div");
    state.className = "document-state";
    if (d.status === "processing") {
      const pct = Math.round(Math.max(0, Math.min(1, d.progress || 0)) * 100);
      const label = document.createElement("span");
      label.textContent = "Processing… " + pct + "%";
      const bar = document.createElement("progress");
      bar.max = 100;
      bar.value = pct;
      bar.setAttribute("aria-label", "Processing " + d.name);
      state.append(label, bar);
    } else if (d.status === "failed") {
      state.textContent = "Failed: " + (d.error || "the file could not be processed");
    } else {
      state.textContent = "Ready";
    }
    li.append(row, meta, state);
    if (isAdmin && d.is_own !== false) {
      // An admin's own document: share it (every version of its name) with everyone, or stop.
      const label = document.createElement("label");
      label.className = "document-share";
      const box = document.createElement("input");
      box.type = "checkbox";
      box.dataset.action = "share";
      box.checked = Boolean(d.shared);
      const text = document.createElement("span");
      text.textContent = "Shared with everyone";
      label.append(box, text);
      li.appendChild(label);
    }
    return li;
  }

  let pollTimer = null;
  let loading = null;
  let loadFailed = false;  // the error box shows a failed refresh (cleared by the next good one)

  function render(documents) {
    list.replaceChildren(...documents.map(documentItem));
    empty.textContent = "No documents yet. Upload .txt, .md, .html or .pdf files.";
    empty.hidden = documents.length > 0;
    panel.dataset.count = String(documents.length);
    clearTimeout(pollTimer);
    pollTimer = null;
    // Keep refreshing on its own while something is being processed.
    if (documents.some((d) => d.status === "processing")) pollTimer = setTimeout(refresh, POLL_MS);
  }

  async function refresh() {
    if (loading) return loading;
    loading = (async () => {
      try {
        const data = await request("GET", "/api/documents");
        render((data && data.documents) || []);
        if (loadFailed) showError("");
        loadFailed = false;
      } catch (e) {
        showError("Could not load your documents: " + e.message);
        loadFailed = true;
        if (!list.children.length) empty.textContent = "Your documents could not be loaded.";
        clearTimeout(pollTimer);
        pollTimer = setTimeout(refresh, POLL_MS * 5);
      } finally {
        loading = null;
      }
    })();
    return loading;
  }

  async function uploadFiles(files) {
    const errors = [];
    showError("");  // a new upload replaces the last one's error (kept only if this one fails too)
    for (const file of files) {
      showStatus("Uploading " + file.name + "…");
      const form = new FormData();
      form.append("file", file, file.name);
      try {
        await request("POST", "/api/documents", form);
      } catch (e) {
        const lead = UPLOAD_REFUSALS[e.code];
        errors.push(file.name + (lead ? " " + lead + ": " : ": ") + e.message);
      }
    }
    showStatus("");
    showError(errors.join("\n"));
    await refresh();
  }

  async function deleteDocument(li) {
    const name = li.dataset.name;
    if (!window.confirm('Delete "' + name + '"? Every version of it stops being used in answers.')) return;
    li.dataset.deleting = "true";
    try {
      await request("DELETE", "/api/documents/" + encodeURIComponent(li.dataset.documentId));
      showError("");
      li.remove();
    } catch (e) {
      delete li.dataset.deleting;
      showError("Could not delete " + name + ": " + e.message);
    }
    await refresh();
  }

  // Sends the checkbox's new state; the list then shows what the server stored. A refusal puts
  // the box back and says why in #document-error.
  async function shareDocument(box) {
    const li = box.closest("li");
    const name = li.dataset.name;
    const shared = box.checked;
    box.disabled = true;
    try {
      await request("POST", "/api/documents/" + encodeURIComponent(li.dataset.documentId) + "/share",
        { shared });
      showError("");
    } catch (e) {
      box.checked = !shared;
      showError("Could not " + (shared ? "share " : "stop sharing ") + name + ": " + e.message);
    } finally {
      box.disabled = false;
    }
    if (loading) await loading;  // a refresh begun before the change would show the old state
    await refresh();
  }

  if (panel && upload && list) {
    // The Upload button opens the hidden file input's picker (a click in a user gesture).
    if (uploadButton) uploadButton.addEventListener("click", () => upload.click());
    upload.addEventListener("change", () => {
      const files = Array.from(upload.files || []);
      upload.value = "";  // the same file can be chosen again after a fix
      if (files.length) uploadFiles(files);
    });
    list.addEventListener("click", (event) => {
      const button = event.target.closest("button[data-action='delete']");
      if (button) deleteDocument(button.closest("li"));
    });
    list.addEventListener("change", (event) => {
      const box = event.target.closest("input[data-action='share']");
      if (box) shareDocument(box);
    });
    // Files dropped anywhere on the page are uploaded (and never open in place of the chat,
    // which would lose what is typed); the panel lights up while they are dragged. Dragged text
    // is left alone: the composer takes it.
    const hasFiles = (event) => Boolean(event.dataTransfer)
      && Array.from(event.dataTransfer.types || []).includes("Files");
    let dragDepth = 0;
    window.addEventListener("dragenter", (event) => {
      if (!hasFiles(event)) return;
      event.preventDefault();
      dragDepth += 1;
      panel.classList.add("dragging");
    });
    window.addEventListener("dragover", (event) => {
      if (!hasFiles(event)) return;
      event.preventDefault();
      event.dataTransfer.dropEffect = "copy";
    });
    window.addEventListener("dragleave", (event) => {
      if (!hasFiles(event)) return;
      dragDepth = Math.max(0, dragDepth - 1);
      if (!dragDepth) panel.classList.remove("dragging");
    });
    window.addEventListener("drop", (event) => {
      if (!hasFiles(event)) return;
      event.preventDefault();
      dragDepth = 0;
      panel.classList.remove("dragging");
      const files = Array.from(event.dataTransfer.files || []);
      if (files.length) uploadFiles(files);
    });
    refresh();
  }

  // ---- per-conversation toggle ---------------------------------------------------------------

  // An existing conversation stores the choice at once; a new one sends it with its first
  // message (static/chat.js reads #use-documents into the send frame).
  if (toggle && app) {
    toggle.addEventListener("change", async () => {
      const conversationId = app.dataset.conversationId;
      if (!conversationId) return;
      const on = toggle.checked;
      toggle.disabled = true;
      try {
        await request("PATCH", "/api/conversations/" + encodeURIComponent(conversationId),
          { use_documents: on });
      } catch (e) {
        toggle.checked = !on;
        const notice = document.getElementById("notice");
        if (notice) {
          notice.textContent = "Could not change “Use my documents”: " + e.message;
          notice.hidden = false;
        }
      } finally {
        // (still off while tools are on: they search the documents as a step)
        const tools = document.getElementById("use-tools");
        toggle.disabled = Boolean(tools && tools.checked);
      }
    });
  }
})();
