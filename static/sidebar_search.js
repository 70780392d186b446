// Crescent sidebar, the parts that only read the list: search over titles and messages, import of
// a conversation file (in the sidebar and on /account), and opening a conversation at a message
// (/c/ID#m-MESSAGE_ID). Loaded after static/sidebar.js, whose window.CrescentSidebar gives the
// fetch helpers and, where there is a list, the open conversation's id.
//
// Server-rendered HTML is assigned to innerHTML only for search results (escaped on the server,
// with <mark> around hits); every other text goes through textContent.
// Routes: docs/INTERFACES.md section 9.
"use strict";

(function () {
  const SEARCH_DEBOUNCE_MS = 250;
  const HIGHLIGHT_MS = 2500;
  const MESSAGE_HASH = /^#m-([0-9a-f]{32})$/;

  const sidebar = window.CrescentSidebar;
  if (!sidebar) return;
  const { api, errorText } = sidebar;

  // ---- import (the sidebar and /account) ------------------------------------------------------

  // Any input[data-import-conversation]: the chosen file is posted, and the new conversation opens.
  for (const input of document.querySelectorAll("input[data-import-conversation]")) {
    const status = document.getElementById(input.dataset.importConversation);
    input.addEventListener("change", async () => {
      const file = input.files && input.files[0];
      if (!file) return;
      const form = new FormData();
      form.append("file", file);
      if (status) {
        status.hidden = false;
        status.dataset.state = "busy";
        status.textContent = "Importing " + file.name + "…";
      }
      input.value = "";
      let response;
      try {
        response = await api("/api/conversations/import", { method: "POST", body: form });
      } catch (e) {
        response = null;
      }
      if (response && response.status === 201) {
        const body = await response.json();
        if (status) {
          status.dataset.state = "done";
          status.textContent = "Imported “" + body.conversation.title + "”.";
        }
        location.assign(body.url);
        return;
      }
      if (status) {
        status.dataset.state = "error";
        status.textContent = response ? await errorText(response, "The file could not be imported")
          : "The file could not be imported: the server did not answer.";
      }
    });
  }

  const list = document.getElementById("conversation-list");
  if (!list || !document.getElementById("app")) return;
  const nav = document.getElementById("conversations-nav") || list.parentElement;

  // ---- search ----------------------------------------------------------------------------------

  const searchInput = document.getElementById("conversation-search");
  const results = document.getElementById("search-results");
  const resultList = document.getElementById("search-result-list");
  const searchStatus = document.getElementById("search-status");
  let searchTimer = null;
  let searchController = null;

  function showResults(on) {
    results.hidden = !on;
    nav.hidden = on;
  }

  function resultElement(hit) {
    const li = document.createElement("li");
    const link = document.createElement("a");
    link.className = "search-result";
    link.href = hit.url;
    link.dataset.conversationId = hit.conversation_id;
    if (hit.message_id) link.dataset.messageId = hit.message_id;
    const title = document.createElement("span");
    title.className = "search-result-title";
    title.innerHTML = hit.title_html || "New chat";  // escaped by the server, <mark> only
    link.appendChild(title);
    if (hit.snippet_html) {
      const snippet = document.createElement("span");
      snippet.className = "search-result-snippet";
      snippet.innerHTML = hit.snippet_html;  // escaped by the server, <mark> only
      link.appendChild(snippet);
    }
    li.appendChild(link);
    return li;
  }

  async function runSearch(query) {
    if (searchController) searchController.abort();
    const controller = searchController = new AbortController();
    searchStatus.textContent = "Searching…";
    results.dataset.state = "busy";
    let body;
    try {
      const response = await fetch("/api/search?q=" + encodeURIComponent(query), {
        signal: controller.signal, credentials: "same-origin",
      });
      if (!response.ok) throw new Error(await errorText(response, "Search failed"));
      body = await response.json();
    } catch (e) {
      if (controller.signal.aborted) return;
      searchStatus.textContent = e.message || "Search failed.";
      results.dataset.state = "error";
      return;
    }
    if (controller !== searchController) return;
    resultList.replaceChildren(...body.results.map(resultElement));
    searchStatus.textContent = body.results.length ? ""
      : "No conversation mentions “" + query + "”.";
    results.dataset.query = query;
    results.dataset.state = "done";
  }

  if (searchInput && results) {
    searchInput.addEventListener("input", () => {
      clearTimeout(searchTimer);
      const query = searchInput.value.trim();
      if (!query) {
        if (searchController) searchController.abort();
        resultList.replaceChildren();
        searchStatus.textContent = "";
        delete results.dataset.state;
        showResults(false);
        return;
      }
      showResults(true);
      searchTimer = setTimeout(() => runSearch(query), SEARCH_DEBOUNCE_MS);
    });
    searchInput.addEventListener("keydown", (event) => {
      if (event.key === "Escape" && searchInput.value) {
        event.preventDefault();
        searchInput.value = "";
        searchInput.dispatchEvent(new Event("input"));
      }
    });
  }

  // ---- opening a conversation at a message -----------------------------------------------------

  const BRANCH_TRIED = "crescent-branch-tried";

  // /c/ID#m-MESSAGE_ID: scroll the message into view and highlight it for a moment. A message on
  // another branch is not on the page: ask the server to make its branch the active one (once),
  // then load the page again.
  async function revealMessage() {
    const match = MESSAGE_HASH.exec(location.hash);
    if (!match) return;
    const messageId = match[1];
    const el = document.getElementById("msg-" + messageId);
    // On a phone the sidebar covers the page: a hit in this conversation closes it (the scrim's
    // click is chat.js's way to close it).
    const app = document.getElementById("app");
    const scrim = document.getElementById("scrim");
    if (app && scrim && app.classList.contains("sidebar-visible")) scrim.click();
    if (el) {
      sessionStorage.removeItem(BRANCH_TRIED);
      el.scrollIntoView({ block: "center" });
      el.classList.remove("message-found");
      void el.offsetWidth;  // restart the animation when the same message is asked for again
      el.classList.add("message-found");
      setTimeout(() => el.classList.remove("message-found"), HIGHLIGHT_MS);
      return;
    }
    const currentId = sidebar.currentId();
    if (!currentId || sessionStorage.getItem(BRANCH_TRIED) === messageId) {
      sessionStorage.removeItem(BRANCH_TRIED);
      return;
    }
    let response = null;
    try {
      response = await api("/api/conversations/" + encodeURIComponent(currentId) + "/branch", {
        method: "POST",
        headers: { "Content-Type": "application/json" },
        body: JSON.stringify({ message_id: messageId }),
      });
    } catch (e) { /* stay on the page as it is */ }
    if (response && response.ok) {
      sessionStorage.setItem(BRANCH_TRIED, messageId);
      location.reload();
    }
  }

  window.addEventListener("hashchange", revealMessage);
  // After chat.js (deferred scripts run before DOMContentLoaded), which scrolls to the bottom.
  document.addEventListener("DOMContentLoaded", () => requestAnimationFrame(revealMessage));
})();
