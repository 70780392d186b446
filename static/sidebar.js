// Crescent sidebar: the conversation list (grouped by date, pinned first) and each
// conversation's actions (rename in place, pin, export, delete). Search, import of a conversation
// file and opening a conversation at a message are static/sidebar_search.js's.
//
// The list is a model (id -> title, updated time, pinned) rendered into #conversation-list on
// every change. static/chat.js tells it of live changes through window.CrescentSidebar (a
// message sent here or in another tab, and the "conversation" frames: created, renamed, pinned,
// unpinned, deleted). Every text goes through textContent.
// Routes: docs/INTERFACES.md section 9.
"use strict";

(function () {
  function csrfToken() {
    const meta = document.querySelector('meta[name="csrf-token"]');
    return meta ? meta.content : "";
  }

  function api(path, options) {
    const headers = Object.assign({ "X-CSRF-Token": csrfToken() }, (options && options.headers) || {});
    return fetch(path, Object.assign({}, options, { headers, credentials: "same-origin" }));
  }

  async function errorText(response, what) {
    try {
      const body = await response.json();
      if (body && body.error && body.error.message) return what + ": " + body.error.message;
    } catch (e) { /* not JSON */ }
    return what + " (" + response.status + ").";
  }

  // Shared with static/sidebar_search.js: api and errorText on every page that loads this file,
  // the list's interface (below) where there is a list.
  const sidebar = { api, errorText };
  window.CrescentSidebar = sidebar;

  const list = document.getElementById("conversation-list");
  const app = document.getElementById("app");
  if (!list || !app) return;

  const emptyNote = document.getElementById("conversations-empty");

  // ---- the model -------------------------------------------------------------------------------

  // id -> {id, title, updatedAt (Date), pinned}
  const items = new Map();
  let currentId = app.dataset.conversationId || null;
  // While a title is being edited the list is not re-rendered (that would drop the input);
  // changes that arrive meanwhile are rendered when the edit ends.
  let editing = null;
  let renderPending = false;

  for (const li of list.querySelectorAll("li[data-conversation-id]")) {
    const link = li.querySelector("a[data-conversation-id]");
    const when = new Date(li.dataset.updatedAt || "");
    items.set(li.dataset.conversationId, {
      id: li.dataset.conversationId,
      title: link ? link.textContent.trim() : "",
      updatedAt: isNaN(when) ? new Date() : when,
      pinned: li.dataset.pinned === "true",
    });
  }

  // The groups, in the browser's time zone: Pinned, Today, Yesterday, Previous 7 days, Previous
  // 30 days, then one per month ("November 2026").
  function groupOf(item, now) {
    if (item.pinned) return { key: "pinned", label: "Pinned" };
    const today = new Date(now.getFullYear(), now.getMonth(), now.getDate());
    const daysBefore = (n) => new Date(today.getFullYear(), today.getMonth(), today.getDate() - n);
    const t = item.updatedAt;
    if (t >= today) return { key: "today", label: "Today" };
    if (t >= daysBefore(1)) return { key: "yesterday", label: "Yesterday" };
    if (t >= daysBefore(7)) return { key: "week", label: "Previous 7 days" };
    if (t >= daysBefore(30)) return { key: "month", label: "Previous 30 days" };
    const key = "m-" + t.getFullYear() + "-" + String(t.getMonth() + 1).padStart(2, "0");
    return { key, label: t.toLocaleDateString(undefined, { month: "long", year: "numeric" }) };
  }

  function sorted() {
    // Pinned first, then the most recently updated (ties: id, as the server orders them).
    return [...items.values()].sort((a, b) =>
      (b.pinned - a.pinned) || (b.updatedAt - a.updatedAt) || (a.id < b.id ? -1 : 1));
  }

  function itemElement(item) {
    const li = document.createElement("li");
    li.className = "conversation-item";
    li.dataset.conversationId = item.id;
    li.dataset.pinned = item.pinned ? "true" : "false";
    li.dataset.updatedAt = item.updatedAt.toISOString();
    const link = document.createElement("a");
    link.href = "/c/" + encodeURIComponent(item.id);
    link.dataset.conversationId = item.id;
    link.textContent = item.title || "New chat";
    link.title = item.title || "New chat";
    if (item.id === currentId) {
      link.classList.add("current");
      link.setAttribute("aria-current", "page");
    }
    const more = document.createElement("button");
    more.type = "button";
    more.className = "conversation-actions";
    more.dataset.conversationId = item.id;
    more.setAttribute("aria-haspopup", "menu");
    more.setAttribute("aria-expanded", "false");
    more.setAttribute("aria-label", "Actions for " + (item.title || "New chat"));
    more.textContent = "⋯";
    li.append(link, more);
    return li;
  }

  function render() {
    if (editing) {
      renderPending = true;
      return;
    }
    renderPending = false;
    closeMenu();
    const focused = document.activeElement && list.contains(document.activeElement) ? document.activeElement : null;
    const focusedId = focused ? focused.dataset.conversationId : null;
    const focusedTag = focused ? focused.tagName.toLowerCase() : "";
    const now = new Date();
    const groups = [];
    for (const item of sorted()) {
      const group = groupOf(item, now);
      let last = groups[groups.length - 1];
      if (!last || last.key !== group.key) {
        last = { key: group.key, label: group.label, items: [] };
        groups.push(last);
      }
      last.items.push(item);
    }
    const fragment = document.createDocumentFragment();
    for (const group of groups) {
      const li = document.createElement("li");
      li.className = "conversation-group";
      li.dataset.group = group.key;
      const heading = document.createElement("h3");
      heading.className = "conversation-group-title";
      heading.id = "conversation-group-" + group.key;
      heading.textContent = group.label;
      const ul = document.createElement("ul");
      ul.setAttribute("aria-labelledby", heading.id);
      for (const item of group.items) ul.appendChild(itemElement(item));
      li.append(heading, ul);
      fragment.appendChild(li);
    }
    list.replaceChildren(fragment);
    if (emptyNote) emptyNote.hidden = items.size > 0;
    if (focusedId) {
      const again = list.querySelector(focusedTag + '[data-conversation-id="' + CSS.escape(focusedId) + '"]');
      if (again) again.focus();
    }
  }

  // ---- the interface for chat.js ---------------------------------------------------------------

  Object.assign(sidebar, {
    // A conversation with new activity (a message sent, here or in another tab): listed, retitled
    // when a title is given, and dated now (so it moves to the top of Today).
    touch(id, title) {
      const item = items.get(id) || { id, title: "", updatedAt: new Date(), pinned: false };
      if (title !== undefined && title !== null) item.title = title;
      item.updatedAt = new Date();
      items.set(id, item);
      render();
    },
    setCurrent(id) {
      currentId = id;
      render();
    },
    remove(id) {
      if (items.delete(id)) render();
    },
    // A "conversation" frame: {event: created|renamed|pinned|unpinned|deleted, conversation_id, title}.
    apply(frame) {
      const id = frame.conversation_id;
      if (frame.event === "deleted") return sidebar.remove(id);
      if (frame.event === "created") return sidebar.touch(id, frame.title);
      const item = items.get(id);
      if (!item) return undefined;
      if (frame.event === "renamed") item.title = frame.title || "";
      if (frame.event === "pinned" || frame.event === "unpinned") item.pinned = frame.event === "pinned";
      render();
      return undefined;
    },
    has(id) {
      return items.has(id);
    },
    currentId() {
      return currentId;
    },
  });

  // ---- per-conversation actions ----------------------------------------------------------------

  const notice = document.getElementById("sidebar-notice");
  function tell(text) {
    if (!notice) return;
    notice.textContent = text;
    notice.hidden = !text;
  }

  let menu = null;

  function closeMenu() {
    if (!menu) return;
    const button = menu.parentElement && menu.parentElement.querySelector(".conversation-actions");
    if (button) button.setAttribute("aria-expanded", "false");
    menu.remove();
    menu = null;
  }

  function menuItem(tag, action, label) {
    const el = document.createElement(tag);
    el.className = "conversation-menu-item";
    el.dataset.action = action;
    el.setAttribute("role", "menuitem");
    el.textContent = label;
    if (tag === "button") el.type = "button";
    return el;
  }

  function openMenu(button) {
    const id = button.dataset.conversationId;
    const item = items.get(id);
    if (!item) return;
    closeMenu();
    menu = document.createElement("div");
    menu.className = "conversation-menu";
    menu.id = "conversation-menu";
    menu.setAttribute("role", "menu");
    menu.dataset.conversationId = id;
    const exportBase = "/api/conversations/" + encodeURIComponent(id) + "/export";
    const markdown = menuItem("a", "export-md", "Export as Markdown");
    markdown.href = exportBase + "?format=md";
    markdown.title = "The branch on the page";
    const markdownTree = menuItem("a", "export-md-tree", "Export every branch as Markdown");
    markdownTree.href = exportBase + "?format=md&scope=tree";
    const json = menuItem("a", "export-json", "Export as JSON");
    json.href = exportBase + "?format=json";
    json.title = "Every branch, with the conversation's settings; import it again from this list";
    menu.append(
      menuItem("button", "rename", "Rename"),
      menuItem("button", "pin", item.pinned ? "Unpin" : "Pin"),
      markdown,
      markdownTree,
      json,
      menuItem("button", "delete", "Delete…"),
    );
    menu.lastChild.classList.add("danger");
    button.parentElement.appendChild(menu);
    button.setAttribute("aria-expanded", "true");
    menu.querySelector(".conversation-menu-item").focus();
  }

  function startRename(id) {
    const li = list.querySelector('li.conversation-item[data-conversation-id="' + CSS.escape(id) + '"]');
    const item = items.get(id);
    if (!li || !item || editing) return;
    closeMenu();
    const link = li.querySelector("a");
    const input = document.createElement("input");
    input.type = "text";
    input.className = "conversation-rename";
    input.value = item.title;
    input.maxLength = 200;
    input.setAttribute("aria-label", "New title");
    editing = id;
    link.hidden = true;
    li.insertBefore(input, link);
    input.focus();
    input.select();
    let finished = false;
    async function finish(save) {
      if (finished) return;
      finished = true;
      const title = input.value.replace(/\s+/g, " ").trim();
      editing = null;
      input.remove();
      link.hidden = false;
      if (save && title && title !== item.title) {
        const previous = item.title;
        item.title = title;  // shown at once; the "renamed" frame confirms it in every tab
        render();
        const response = await api("/api/conversations/" + encodeURIComponent(id), {
          method: "PATCH",
          headers: { "Content-Type": "application/json" },
          body: JSON.stringify({ title }),
        });
        if (!response.ok) {
          item.title = previous;
          tell(await errorText(response, "The conversation could not be renamed"));
          render();
        }
        return;
      }
      if (renderPending) render();
      link.focus();
    }
    input.addEventListener("keydown", (event) => {
      if (event.key === "Enter" && !event.isComposing) {
        event.preventDefault();
        finish(true);
      } else if (event.key === "Escape") {
        event.preventDefault();
        finish(false);
      }
    });
    input.addEventListener("blur", () => finish(true));
  }

  async function togglePin(id) {
    const item = items.get(id);
    if (!item) return;
    closeMenu();
    const pinned = !item.pinned;
    const response = await api("/api/conversations/" + encodeURIComponent(id), {
      method: "PATCH",
      headers: { "Content-Type": "application/json" },
      body: JSON.stringify({ pinned }),
    });
    if (!response.ok) {
      tell(await errorText(response, "The conversation could not be " + (pinned ? "pinned" : "unpinned")));
      return;
    }
    item.pinned = pinned;
    render();
  }

  async function deleteConversation(id) {
    const item = items.get(id);
    if (!item) return;
    closeMenu();
    const name = item.title || "New chat";
    if (!window.confirm("Delete “" + name + "”? This cannot be undone.")) return;
    const response = await api("/api/conversations/" + encodeURIComponent(id), { method: "DELETE" });
    if (!response.ok && response.status !== 404) {
      tell(await errorText(response, "The conversation could not be deleted"));
      return;
    }
    sidebar.remove(id);
    if (id === currentId && !window.crescentLeaving) {  // once, as chat.js's leaveTo: the "deleted" frame comes too
      window.crescentLeaving = true;
      location.assign("/chat");
    }
  }

  list.addEventListener("click", (event) => {
    const more = event.target.closest(".conversation-actions");
    if (more) {
      event.preventDefault();
      if (menu && menu.dataset.conversationId === more.dataset.conversationId) closeMenu();
      else openMenu(more);
      return;
    }
    // The open conversation's link does not reload the page, so a double-click on it can rename.
    const current = event.target.closest("a.current[data-conversation-id]");
    if (current && !event.ctrlKey && !event.metaKey && !event.shiftKey && event.button === 0) {
      event.preventDefault();
      return;
    }
    const action = event.target.closest(".conversation-menu-item");
    if (!action || !menu) return;
    const id = menu.dataset.conversationId;
    if (action.dataset.action === "rename") startRename(id);
    else if (action.dataset.action === "pin") togglePin(id);
    else if (action.dataset.action === "delete") deleteConversation(id);
    else setTimeout(closeMenu, 0);  // an export link: the download starts, the page stays
  });

  list.addEventListener("dblclick", (event) => {
    const link = event.target.closest("a.current[data-conversation-id]");
    if (!link) return;
    event.preventDefault();
    startRename(link.dataset.conversationId);
  });

  list.addEventListener("keydown", (event) => {
    const link = event.target.closest("a[data-conversation-id]");
    if (link && event.key === "F2") {
      event.preventDefault();
      startRename(link.dataset.conversationId);
    }
    if (menu && event.key === "Escape") {
      const button = menu.parentElement.querySelector(".conversation-actions");
      closeMenu();
      if (button) button.focus();
    }
    if (menu && (event.key === "ArrowDown" || event.key === "ArrowUp") && menu.contains(event.target)) {
      event.preventDefault();
      const entries = [...menu.querySelectorAll(".conversation-menu-item")];
      const at = entries.indexOf(event.target);
      entries[(at + (event.key === "ArrowDown" ? 1 : entries.length - 1)) % entries.length].focus();
    }
  });

  document.addEventListener("click", (event) => {
    if (menu && !menu.contains(event.target) && !event.target.closest(".conversation-actions")) closeMenu();
  });

  render();
})();
