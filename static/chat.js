// Crescent chat page: composer, WebSocket client, streamed-message rendering.
//
// Protocol: docs/INTERFACES.md section 4. The server sends HTML that it rendered from Markdown
// and sanitized (bleach); only that server-trusted HTML is ever assigned to innerHTML. Text that
// comes from the person or from error messages goes through textContent.
"use strict";

(function () {
  const app = document.getElementById("app");
  if (!app) return;

  const composer = document.getElementById("composer");
  const form = document.getElementById("composer-form");
  const sendButton = document.getElementById("send");
  const stopButton = document.getElementById("stop");
  const messages = document.getElementById("messages");
  const scroller = document.getElementById("scroller");
  const emptyState = document.getElementById("empty-state");
  const notice = document.getElementById("notice");
  const connection = document.getElementById("connection");
  const chatTitle = document.getElementById("chat-title");

  // Safari fires compositionend *before* the keydown of the Enter that confirms a candidate, and
  // that keydown then has isComposing false. A person does not confirm a candidate and press
  // Enter again to send within this many milliseconds.
  const COMPOSITION_GRACE_MS = 100;
  // Stop takes Send's place the moment a message goes out, so the second click of a double-click
  // on Send lands on Stop: a click this soon after sending is that, not a decision to stop.
  const STOP_GRACE_MS = 300;
  // The protocol's limits, defined once on the server (web/ws_protocol.py) and given by the page.
  function limit(name, fallback) {
    const value = parseInt(app.dataset[name], 10);
    return Number.isFinite(value) && value > 0 ? value : fallback;
  }
  const MAX_TEXT_CHARS = limit("maxTextChars", 32000);
  const RECONNECT_MIN_MS = limit("reconnectMinMs", 500);
  const RECONNECT_MAX_MS = limit("reconnectMaxMs", 15000);
  const PING_INTERVAL_MS = limit("pingIntervalMs", 25000);

  // Wording of how a reply ended; templates/_macros.html holds the same for page loads.
  function endingLabel(status, finishReason, error) {
    if (finishReason === "length") return "Cut at the token limit";
    if (status === "interrupted") return "Interrupted: " + (error || "the reply did not finish");
    // A stop with a reason: an agent run's budget ending (backend/chat/agent_turn.py).
    if (finishReason === "abort") return error ? "Stopped: " + error : "Stopped";
    if (finishReason === "error" || status === "error") return "Failed: " + (error || "unknown error");
    if (status === "streaming") return "Generating…";
    if (status === "pending") return "Waiting…";
    return "";
  }

  function formatDuration(ms) {
    return ms < 1000 ? Math.round(ms) + " ms" : (ms / 1000).toFixed(2) + " s";
  }

  // A wait the server asked for (retry_after_s), in words: "12 s", "5 min", "3 h 20 min".
  function formatWait(seconds) {
    const s = Math.max(1, Math.ceil(seconds));
    if (s < 120) return s + " s";
    if (s < 7200) return Math.ceil(s / 60) + " min";
    const h = Math.floor(s / 3600);
    const m = Math.ceil((s - h * 3600) / 60);
    return h + " h" + (m ? " " + m + " min" : "");
  }

  // What a refused send tells the person: a limit (rate_limited) or a full server (overloaded),
  // with the wait. The server's message adds which limit (per minute, per day, concurrent).
  const REFUSAL_LEAD = {
    rate_limited: "Too many requests: try again in ",
    overloaded: "The server is busy: try again in ",
  };

  // ---- state ---------------------------------------------------------------------------------

  let conversationId = app.dataset.conversationId || null;
  let socket = null;
  let reconnectDelay = RECONNECT_MIN_MS;
  let reconnectTimer = null;
  let pingTimer = null;
  let authFailed = false;
  // Another tab changed this conversation's branch while a reply streamed here.
  let branchStale = false;

  // client_msg_id -> {text, conversationId, userEl, assistantEl, acked, stopRequested}.
  // A send stays here until its reply is done or fails; unacked ones are resent on reconnect.
  const sends = new Map();
  // assistant message id -> {el, lastSeq, clientMsgId (null for a reply this page did not send)}.
  // Every reply streaming on this page is here, and is attached again (from lastSeq) whenever
  // the socket opens: the reply lives on the server, the socket only watches it.
  const streams = new Map();

  let composing = false;
  let compositionEndedAt = -Infinity;
  let sentAt = -Infinity;
  // Stop was pressed and the reply has not ended yet; a message sent meanwhile goes out when it
  // ends (it used to be refused with BUSY_NOTICE, which the reply's end then cleared: the message
  // sat unsent in the box with nothing said).
  let stopping = false;
  let sendAfterStop = false;
  const SEND_AFTER_STOP_NOTICE = "Stopping the reply: your message goes out as soon as it has stopped.";
  // Focus the composer by script only with a mouse: on touch screens it pops the keyboard
  // over the conversation.
  const finePointer = window.matchMedia("(pointer: fine)").matches;
  // On a touch screen Return adds a line and the Send button sends (there is no Shift+Enter);
  // the hints say so (templates/chat.html, .hint-touch).
  const coarsePointer = window.matchMedia("(pointer: coarse)").matches;

  // ---- helpers -------------------------------------------------------------------------------

  function newClientMsgId() {
    if (window.crypto && typeof crypto.randomUUID === "function") return crypto.randomUUID();
    // crypto.randomUUID exists only in secure contexts (https, localhost); plain http on a LAN
    // address still has getRandomValues. RFC 4122 version 4 layout.
    const b = crypto.getRandomValues(new Uint8Array(16));
    b[6] = (b[6] & 0x0f) | 0x40;
    b[8] = (b[8] & 0x3f) | 0x80;
    const h = Array.from(b, (x) => x.toString(16).padStart(2, "0")).join("");
    return h.slice(0, 8) + "-" + h.slice(8, 12) + "-" + h.slice(12, 16) + "-" + h.slice(16, 20) + "-" + h.slice(20);
  }

  function isNearBottom() {
    return scroller.scrollHeight - scroller.scrollTop - scroller.clientHeight < 80;
  }

  function scrollToBottom(force) {
    if (force || isNearBottom()) scroller.scrollTop = scroller.scrollHeight;
  }

  let noticeTimer = null;

  // tone "error" (red: something failed) or "info" (a harmless note, e.g. wait for the reply).
  function showNotice(text, tone) {
    clearInterval(noticeTimer);
    noticeTimer = null;
    delete notice.dataset.code;
    notice.dataset.tone = tone || "error";
    notice.setAttribute("role", tone === "info" ? "status" : "alert");
    notice.textContent = text;
    notice.hidden = !text;
  }

  // A refusal with a wait: counts down once a second, then says the message can be sent again.
  // The typed text is back in the composer, so sending again is one key press.
  function showRefusal(code, retryAfterS, detail) {
    showNotice("");
    const until = performance.now() + retryAfterS * 1000;
    const render = () => {
      const left = (until - performance.now()) / 1000;
      if (left <= 0) {
        clearInterval(noticeTimer);
        noticeTimer = null;
        notice.dataset.tone = "info";
        notice.textContent = "You can send your message again now.";
        return;
      }
      notice.textContent = REFUSAL_LEAD[code] + formatWait(left) + "." + (detail ? " " + detail : "");
    };
    notice.hidden = false;
    notice.dataset.code = code;
    render();
    noticeTimer = setInterval(render, 1000);
  }

  function setConnection(state, text) {
    connection.dataset.state = state;
    connection.textContent = text;
  }

  // A reply is in flight in this conversation from the moment it is sent (from this tab or
  // another) until done or error.
  function isBusy() {
    return sends.size > 0 || streams.size > 0;
  }

  // Said when a message, an edit or a branch switch waits on a reply; gone when the reply ends
  // (it would otherwise stay up, stale, until the next send).
  const BUSY_NOTICE = "A reply is still being written: wait for it or press Stop.";

  function updateControls() {
    const busy = isBusy();
    sendButton.disabled = busy;
    stopButton.hidden = !busy;
    form.dataset.busy = busy ? "true" : "false";
    const waiting = notice.textContent === BUSY_NOTICE || notice.textContent === SEND_AFTER_STOP_NOTICE;
    if (!busy && !notice.hidden && waiting) showNotice("");
    if (!busy) {
      stopping = false;
      if (sendAfterStop) {
        sendAfterStop = false;
        setTimeout(submit, 0);  // outside this call: submit() updates the controls itself
      }
    }
  }

  // ---- message elements ----------------------------------------------------------------------

  function makeMessage(role, status) {
    const el = document.createElement("article");
    el.className = "message";
    el.dataset.role = role;
    el.dataset.status = status;
    el.dataset.finishReason = "";
    el.setAttribute("aria-label", role === "user" ? "You" : "Assistant");
    const bubble = document.createElement("div");
    bubble.className = "message-bubble";
    const body = document.createElement("div");
    body.className = "message-body";
    bubble.appendChild(body);
    if (role === "assistant") {
      const committed = document.createElement("div");
      committed.className = "md-committed";
      const tail = document.createElement("div");
      tail.className = "md-tail";
      body.append(committed, tail);
      const meta = document.createElement("footer");
      meta.className = "message-meta";
      const badge = document.createElement("span");
      badge.className = "badge";
      meta.appendChild(badge);
      bubble.appendChild(meta);
    }
    el.appendChild(bubble);
    return el;
  }

  function appendMessage(el) {
    emptyState.hidden = true;
    messages.appendChild(el);
    scrollToBottom(true);
  }

  function setMessageId(el, id) {
    el.dataset.messageId = id;
    el.id = "msg-" + id;
  }

  function setEnding(el, status, finishReason, error, budgetEnded) {
    el.dataset.status = status;
    el.dataset.finishReason = finishReason || "";
    // An agent reply its run's budget ended ("Stopped: the step limit (3) was reached") is regenerated, not
    // continued (the done frame's budget_ended: backend.conversations.ended_by_budget).
    if (budgetEnded) el.dataset.budgetEnded = "true";
    else delete el.dataset.budgetEnded;
    // Screen readers wait for aria-busy to clear instead of reading every partial update.
    el.setAttribute("aria-busy", status === "streaming" || status === "pending" ? "true" : "false");
    const badge = el.querySelector(".badge");
    if (!badge) return;
    const label = endingLabel(status, finishReason, error);
    badge.textContent = label;
    badge.dataset.ending = status === "interrupted" ? "interrupted" : finishReason || status;
    badge.hidden = !label;
  }

  // Admins get a link to the reply's trace waterfall (web/trace_routes.py) in its Info panel.
  const isAdmin = (document.querySelector("[data-is-admin]") || {dataset: {}}).dataset.isAdmin === "true";

  function setTimings(el, usage, timings, traceId) {
    const meta = el.querySelector(".message-meta");
    if (!meta) return;
    const old = meta.querySelector(".timings");
    if (old) old.remove();
    const parts = [];
    if (timings && timings.queue_ms != null) parts.push("queue " + formatDuration(timings.queue_ms));
    if (timings && timings.ttft_ms != null) parts.push("TTFT " + formatDuration(timings.ttft_ms));
    if (timings && timings.decode_tokens_per_s) parts.push(timings.decode_tokens_per_s.toFixed(1) + " tok/s");
    // (an answer the program wrote, a quoted passage, generated no token: no "0 tokens")
    if (usage && usage.completion_tokens) {
      parts.push(usage.completion_tokens + (usage.completion_tokens === 1 ? " token" : " tokens"));
    }
    // the reply's total time: an answer the program wrote has it too
    if (timings && timings.total_ms != null) parts.push("total " + formatDuration(timings.total_ms));
    // (a reply with no figures, e.g. ended before any, still has its trace)
    const traced = isAdmin && typeof traceId === "string" && /^[0-9a-f]{32}$/.test(traceId);
    if (!parts.length && !traced) return;
    const span = document.createElement("span");
    span.className = "timings";
    span.title = "Time waiting in the queue · time to first token · decode speed · tokens generated · total time of the reply";
    for (const text of parts) {
      const part = document.createElement("span");
      part.className = "timing";
      part.textContent = text;
      span.appendChild(part);
    }
    if (traced) {
      const link = document.createElement("a");
      link.className = "timing trace-link";
      link.href = "/admin/traces/" + traceId;
      link.textContent = "Trace";
      span.appendChild(link);
    }
    meta.appendChild(span);
  }

  function findMessage(id) {
    return id ? document.getElementById("msg-" + id) : null;
  }

  // ---- sidebar -------------------------------------------------------------------------------

  // The conversation list (grouping, pin, rename, search) is static/sidebar.js's; this page only
  // tells it what happened.
  const sidebar = window.CrescentSidebar || { touch() {}, setCurrent() {}, remove() {}, apply() {} };

  // A message went out in the conversation (here or in another tab): listed first of Today.
  function upsertConversationLink(id, title) {
    sidebar.touch(id, title);
  }

  function addConversationToSidebar(id, title) {
    sidebar.touch(id, title);
    sidebar.setCurrent(id);
  }

  function setTitle(title) {
    const text = title || "New chat";
    chatTitle.textContent = text;
    document.title = text + " · Crescent";
  }

  // ---- sending -------------------------------------------------------------------------------

  function transmit(frame) {
    if (socket && socket.readyState === WebSocket.OPEN) {
      socket.send(JSON.stringify(frame));
      return true;
    }
    return false;
  }

  // The frame of a turn: send (after the message the page shows last), edit (a question),
  // regenerate or continue (a reply); docs/INTERFACES.md section 4.
  function sendFrameFor(clientMsgId, entry) {
    const action = entry.action || "send";
    const frame = {
      type: action,
      client_msg_id: clientMsgId,
      conversation_id: entry.conversationId,
    };
    if (action === "send" || action === "edit") frame.text = entry.text;
    if (entry.messageId) frame.message_id = entry.messageId;
    // A new conversation takes "Use my documents" with its first message; an existing one
    // stored the choice when it was switched (static/documents.js).
    const useDocuments = document.getElementById("use-documents");
    if (!entry.conversationId && useDocuments) frame.use_documents = useDocuments.checked;
    const useTools = document.getElementById("use-tools");
    if (!entry.conversationId && useTools) frame.use_tools = useTools.checked;
    // The browser's time zone: "what time is it?" is answered in it (current_time).
    try {
      const zone = Intl.DateTimeFormat().resolvedOptions().timeZone;
      if (typeof zone === "string" && zone) frame.timezone = zone;
    } catch (e) { /* no Intl: the server's UTC */ }
    return frame;
  }

  function submit() {
    const text = composer.value;
    if (!text.trim()) return;
    if (isBusy()) {
      if (stopping) {
        sendAfterStop = true;
        showNotice(SEND_AFTER_STOP_NOTICE, "info");
      } else {
        showNotice(BUSY_NOTICE, "info");
      }
      return;
    }
    const length = [...text].length;  // code points, as the server counts
    if (length > MAX_TEXT_CHARS) {
      showNotice("This message has " + length.toLocaleString() + " characters; the limit is "
        + MAX_TEXT_CHARS.toLocaleString() + ". Shorten it and send again.");
      return;
    }
    showNotice("");
    const clientMsgId = newClientMsgId();
    const userEl = makeMessage("user", "pending");
    const p = document.createElement("p");
    p.className = "plain";
    p.textContent = text;
    userEl.querySelector(".message-body").appendChild(p);
    userEl.dataset.clientMsgId = clientMsgId;
    const assistantEl = makeMessage("assistant", "pending");
    setEnding(assistantEl, "pending", null, null);
    appendMessage(userEl);
    appendMessage(assistantEl);
    const last = lastMessage();
    const entry = { action: "send", text, conversationId, messageId: last ? last.dataset.messageId : null,
                    userEl, assistantEl, acked: false, stopRequested: false };
    sends.set(clientMsgId, entry);
    composer.value = "";
    resizeComposer();
    sentAt = performance.now();
    updateControls();
    // Not open: the frame goes out from the open handler, which resends every unacked send.
    transmit(sendFrameFor(clientMsgId, entry));
  }

  function lastMessage() {
    const all = messages.querySelectorAll(".message[data-message-id]");
    return all.length ? all[all.length - 1] : null;
  }

  function removeFrom(el) {
    while (el) {
      const next = el.nextElementSibling;
      el.remove();
      el = next;
    }
  }

  // Regenerate, edit or continue (static/message_actions.js asks): the branch changes from the
  // target on, the new reply streams in place. Returns false when it cannot start now.
  function startTurn(action, target, text) {
    if (isBusy()) {
      showNotice(BUSY_NOTICE, "info");
      return false;
    }
    if (!conversationId || !target || !target.dataset.messageId) return false;
    showNotice("");
    const clientMsgId = newClientMsgId();
    const entry = { action, text: text || "", conversationId, messageId: target.dataset.messageId,
                    userEl: null, assistantEl: null, acked: false, stopRequested: false,
                    siblings: (target.dataset.siblings || target.dataset.messageId).split(" ") };
    if (action === "continue") {
      entry.assistantEl = target;
      setEnding(target, "pending", null, null);
    } else {
      removeFrom(target);
      if (action === "edit") {
        entry.userEl = makeMessage("user", "pending");
        const p = document.createElement("p");
        p.className = "plain";
        p.textContent = text;
        entry.userEl.querySelector(".message-body").appendChild(p);
        appendMessage(entry.userEl);
      }
      entry.assistantEl = makeMessage("assistant", "pending");
      setEnding(entry.assistantEl, "pending", null, null);
      appendMessage(entry.assistantEl);
    }
    sends.set(clientMsgId, entry);
    sentAt = performance.now();
    updateControls();
    refreshActions();
    transmit(sendFrameFor(clientMsgId, entry));
    return true;
  }

  // The active branch as the server has it (after a branch switch, or a turn from another tab).
  async function showBranch(response) {
    if (!response.ok) {
      showNotice("The conversation could not be loaded (" + response.status + ").");
      return;
    }
    const data = await response.json();
    for (const [id] of streams) streams.delete(id);
    messages.innerHTML = data.html;  // server-rendered and sanitized (templates/_message.html)
    emptyState.hidden = !!messages.querySelector(".message");
    watchStreamingReplies();
    for (const [id] of streams) attach(id);
    updateControls();
    refreshActions();
    if (window.CrescentSources) {
      for (const el of messages.querySelectorAll('.message[data-role="assistant"]')) window.CrescentSources.link(el);
    }
  }

  function csrfHeaders(json) {
    const meta = document.querySelector('meta[name="csrf-token"]');
    const headers = { "X-CSRF-Token": meta ? meta.content : "" };
    if (json) headers["Content-Type"] = "application/json";
    return headers;
  }

  // "‹ 2/3 ›": the branch through `messageId` becomes the active one.
  async function switchBranch(messageId) {
    if (isBusy()) {
      showNotice(BUSY_NOTICE, "info");
      return;
    }
    const url = "/api/conversations/" + encodeURIComponent(conversationId) + "/branch";
    await showBranch(await fetch(url, { method: "POST", headers: csrfHeaders(true),
                                        body: JSON.stringify({ message_id: messageId }) }));
  }

  async function reloadBranch() {
    if (!conversationId) return;
    const url = "/api/conversations/" + encodeURIComponent(conversationId) + "/branch";
    await showBranch(await fetch(url, { headers: { Accept: "application/json" } }));
  }

  // The branch changed elsewhere while this page could not redraw it: redraw it now if it can.
  function reloadIfStale() {
    if (branchStale && !isBusy() && !messages.querySelector(".message.editing")) {
      branchStale = false;
      reloadBranch();
    }
  }

  function refreshActions() {
    if (window.CrescentActions) window.CrescentActions.refreshAll();
  }

  // Stops every reply streaming on this page, whichever tab sent it.
  function stop() {
    if (performance.now() - sentAt < STOP_GRACE_MS) return;  // the double-click's second click
    for (const [, entry] of sends) {
      entry.stopRequested = true;
    }
    for (const [id] of streams) transmit({ type: "stop", message_id: id });
    stopButton.disabled = true;
    stopping = isBusy();
  }

  function finishSend(clientMsgId) {
    if (clientMsgId) sends.delete(clientMsgId);
    stopButton.disabled = false;
    updateControls();
    reloadIfStale();
    if (!isBusy() && finePointer) composer.focus();
  }

  // Watch a reply: the server sends what this page missed after lastSeq, then live deltas.
  function attach(id) {
    const stream = streams.get(id);
    if (stream) transmit({ type: "attach", message_id: id, seq: stream.lastSeq });
  }

  function watch(id, el, clientMsgId) {
    streams.set(id, { el, lastSeq: 0, clientMsgId: clientMsgId || null });
    updateControls();
  }

  // ---- frames from the server ----------------------------------------------------------------

  function onAck(frame) {
    const entry = sends.get(frame.client_msg_id);
    if (!entry) return;
    entry.acked = true;
    if (entry.userEl) {
      entry.userEl.dataset.status = "complete";
      setMessageId(entry.userEl, frame.user_message_id);
    }
    setMessageId(entry.assistantEl, frame.assistant_message_id);
    // A new sibling of the message edited or regenerated: "‹ n/n ›".
    const sibling = entry.action === "edit" ? entry.userEl : entry.action === "regenerate" ? entry.assistantEl : null;
    if (sibling && entry.siblings) {
      const ids = entry.siblings.filter((id) => id !== sibling.dataset.messageId);
      ids.push(sibling.dataset.messageId);
      sibling.dataset.siblings = ids.join(" ");
    }
    setEnding(entry.assistantEl, "streaming", null, null);
    const known = streams.get(frame.assistant_message_id);
    if (known && known.el !== entry.assistantEl) {
      // A retried send answered as a duplicate that this page already showed (attached on load).
      entry.userEl.remove();
      entry.assistantEl.remove();
      sends.delete(frame.client_msg_id);
      known.clientMsgId = frame.client_msg_id;
      sends.set(frame.client_msg_id, entry);
      entry.assistantEl = known.el;
    } else {
      watch(frame.assistant_message_id, entry.assistantEl, frame.client_msg_id);
    }
    if (frame.conversation_id && frame.conversation_id !== conversationId) {
      conversationId = frame.conversation_id;
      app.dataset.conversationId = conversationId;
      history.replaceState(null, "", "/c/" + encodeURIComponent(conversationId));
      for (const id of ["rename", "delete-conversation", "conversation-settings"]) {
        const button = document.getElementById(id);
        if (button) button.hidden = false;
      }
    }
    if (frame.conversation_id) addConversationToSidebar(frame.conversation_id, frame.title);
    if (frame.title) setTitle(frame.title);
    if (entry.stopRequested) transmit({ type: "stop", message_id: frame.assistant_message_id });
    refreshActions();
  }

  function onDelta(frame) {
    const stream = streams.get(frame.message_id);
    if (!stream) return;
    const follow = isNearBottom();
    const el = stream.el;
    if (frame.reset) {
      // A catch-up after an attach: the whole rendering so far replaces what the page had.
      if (frame.seq < stream.lastSeq) return;
      el.querySelector(".md-committed").innerHTML = frame.committed_html || "";
    } else {
      if (frame.seq <= stream.lastSeq) return;  // a replayed or stale frame
      if (frame.seq !== stream.lastSeq + 1) {
        attach(frame.message_id);  // a gap: ask again from what this page has
        return;
      }
      const committed = el.querySelector(".md-committed");
      if (frame.code_html) {
        // New lines of the code block still open: the committed part's last element.
        const code = committed.lastElementChild && committed.lastElementChild.querySelector("pre > code");
        if (!code) {
          attach(frame.message_id);  // out of step with the server: ask for the whole rendering
          return;
        }
        code.insertAdjacentHTML("beforeend", frame.code_html);
      }
      if (frame.committed_html) committed.insertAdjacentHTML("beforeend", frame.committed_html);
    }
    stream.lastSeq = frame.seq;
    if (el.dataset.status !== "streaming") setEnding(el, "streaming", null, null);
    el.querySelector(".md-tail").innerHTML = frame.tail_html || "";
    // the answer is being written: a running step's "Thinking…" is no longer what happens (new-user pass)
    if (window.CrescentAgentSteps) window.CrescentAgentSteps.answering(el);
    if (follow) scrollToBottom(true);
  }

  // An agent run's step started or ended (static/agent_steps.js draws it in the reply).
  function onAgentStep(frame) {
    const stream = streams.get(frame.message_id);
    const el = stream ? stream.el : findMessage(frame.message_id);
    if (!el || !window.CrescentAgentSteps) return;
    const follow = isNearBottom();
    window.CrescentAgentSteps.render(el, frame);
    if (follow) scrollToBottom(true);
  }

  function onDone(frame) {
    const stream = streams.get(frame.message_id);
    const el = stream ? stream.el : findMessage(frame.message_id);
    if (!el) return;
    const follow = isNearBottom();
    el.querySelector(".md-committed").innerHTML = frame.html || "";
    el.querySelector(".md-tail").innerHTML = "";
    setEnding(el, frame.status, frame.finish_reason, frame.error, frame.budget_ended);
    setTimings(el, frame.usage, frame.timings, frame.trace_id);
    if (window.CrescentActions) window.CrescentActions.setSource(el, frame.content);
    // The documents the reply drew on, and its [n] markers as links (static/documents.js).
    if (window.CrescentSources) window.CrescentSources.render(el, frame.sources);
    streams.delete(frame.message_id);
    finishSend(stream ? stream.clientMsgId : null);
    refreshActions();
    if (follow) scrollToBottom(true);
  }

  // A message sent from another tab of this account.
  function onTurn(frame) {
    upsertConversationLink(frame.conversation_id, frame.title);
    if (frame.conversation_id !== conversationId) return;
    if (sends.has(frame.client_msg_id)) return;
    const continued = frame.action === "continue";  // the reply is on the page already
    if (!continued && findMessage(frame.assistant_message_id)) return;
    if (continued && streams.has(frame.assistant_message_id)) return;
    const last = lastMessage();
    if ((frame.action && frame.action !== "send") || (last && frame.parent_id !== last.dataset.messageId)) {
      // Another tab changed the branch (edit, regenerate, continue, or a send after another
      // message): show the branch as the server has it, with the reply streaming in it (once
      // this page's own reply is done, if one is streaming).
      // A question being edited here is not thrown away: the branch is redrawn after it.
      if (isBusy() || messages.querySelector(".message.editing")) branchStale = true;
      else reloadBranch();
      return;
    }
    const userEl = makeMessage("user", "complete");
    const p = document.createElement("p");
    p.className = "plain";
    p.textContent = frame.user_text;
    userEl.querySelector(".message-body").appendChild(p);
    setMessageId(userEl, frame.user_message_id);
    const assistantEl = makeMessage("assistant", "streaming");
    setMessageId(assistantEl, frame.assistant_message_id);
    setEnding(assistantEl, "streaming", null, null);
    appendMessage(userEl);
    appendMessage(assistantEl);
    watch(frame.assistant_message_id, assistantEl, null);
    attach(frame.assistant_message_id);
  }

  // Leaves the page once: deleting a conversation here gets both the DELETE's response and the
  // "deleted" frame, and a second location.assign aborted the first navigation.
  function leaveTo(url) {
    if (window.crescentLeaving) return;
    window.crescentLeaving = true;
    location.assign(url);
  }
  window.addEventListener("pageshow", (event) => {  // back to this page from the cache: here again
    if (event.persisted) window.crescentLeaving = false;
  });

  // A conversation created, renamed, pinned, unpinned or deleted (in this tab or another).
  function onConversation(frame) {
    const id = frame.conversation_id;
    if (frame.event === "deleted") {
      sidebar.remove(id);
      if (id === conversationId) {
        showNotice("This conversation was deleted.", "info");
        leaveTo("/chat");
      }
      return;
    }
    sidebar.apply(frame);  // created, renamed, pinned, unpinned
    if (id === conversationId && frame.event === "renamed") setTitle(frame.title);
  }

  function onError(frame) {
    const text = frame.message || frame.code || "Something went wrong.";
    if (frame.code === "bad_frame" && !frame.client_msg_id && !frame.message_id) {
      // The server could not even read the id; the unacked sends are the only frames it can
      // be about (pings and stops are too small to be malformed), and none would ever be acked.
      for (const [clientMsgId, pending] of sends) {
        if (!pending.acked) onError({ code: frame.code, message: text, client_msg_id: clientMsgId });
      }
      showNotice(text);
      return;
    }
    const entry = frame.client_msg_id ? sends.get(frame.client_msg_id) : null;
    const streamed = frame.message_id ? streams.get(frame.message_id) : null;
    if (entry && !entry.acked) {
      // Refused before anything was stored (busy, rate limited, server full...): take the echo
      // back and return the text to the composer, so nothing on the page claims it was sent and
      // nothing typed is lost (text typed meanwhile is kept after it).
      if (entry.action && entry.action !== "send") {
        finishSend(frame.client_msg_id);
        reloadBranch();  // the edited or regenerated branch comes back as it was
        if (REFUSAL_LEAD[frame.code] && frame.retry_after_s > 0) showRefusal(frame.code, frame.retry_after_s, "");
        else showNotice(text);
        return;
      }
      entry.userEl.remove();
      entry.assistantEl.remove();
      if (!messages.querySelector(".message")) emptyState.hidden = false;
      if (composer.value !== entry.text) {
        composer.value = composer.value.trim() ? entry.text + "\n\n" + composer.value : entry.text;
      }
      resizeComposer();
      finishSend(frame.client_msg_id);
      if (REFUSAL_LEAD[frame.code] && frame.retry_after_s > 0) {
        showRefusal(frame.code, frame.retry_after_s, frame.code === "rate_limited" ? frame.message : "");
      } else {
        showNotice(text);
      }
      return;
    }
    if (streamed && !entry && frame.code === "in_progress") return;  // another server has it
    const el = streamed ? streamed.el : entry ? entry.assistantEl : findMessage(frame.message_id);
    if (el && el.dataset.role === "assistant") {
      setEnding(el, "error", "error", text);
      const clientMsgId = streamed ? streamed.clientMsgId : frame.client_msg_id;
      if (frame.message_id) streams.delete(frame.message_id);
      // (a reply this page only follows, sent from another tab, has no send of its own: null)
      finishSend(clientMsgId || null);
    } else {
      showNotice(text);
    }
  }

  function onFrame(event) {
    let frame;
    try {
      frame = JSON.parse(event.data);
    } catch (e) {
      return;
    }
    switch (frame.type) {
      case "ack": onAck(frame); break;
      case "delta": onDelta(frame); break;
      case "done": onDone(frame); break;
      case "error": onError(frame); break;
      case "turn": onTurn(frame); break;
      case "conversation": onConversation(frame); break;
      case "agent_step": onAgentStep(frame); break;
      default: break;  // pong and anything newer than this page
    }
  }

  // ---- connection ----------------------------------------------------------------------------

  function connect() {
    reconnectTimer = null;
    const scheme = location.protocol === "https:" ? "wss://" : "ws://";
    setConnection("connecting", "Connecting…");
    const ws = new WebSocket(scheme + location.host + "/ws");
    socket = ws;
    ws.addEventListener("open", () => {
      reconnectDelay = RECONNECT_MIN_MS;
      setConnection("open", "Connected");
      // Unacked sends go out again with the same client_msg_id; the server stores and answers
      // each id once.
      for (const [clientMsgId, entry] of sends) {
        if (!entry.acked) ws.send(JSON.stringify(sendFrameFor(clientMsgId, entry)));
      }
      // Every reply this page shows as streaming is watched again from what it already has.
      for (const [id] of streams) attach(id);
      clearInterval(pingTimer);
      pingTimer = setInterval(() => transmit({ type: "ping" }), PING_INTERVAL_MS);
    });
    ws.addEventListener("message", onFrame);
    ws.addEventListener("close", (event) => {
      if (socket !== ws) return;
      socket = null;
      clearInterval(pingTimer);
      if (event.code === 4401) {
        authFailed = true;
        setConnection("closed", "Signed out");
        location.assign("/login");
        return;
      }
      if (event.code === 4403) {
        setConnection("closed", "Refused by the server");
        showNotice("The server refused the connection from this page's origin.");
        return;
      }
      scheduleReconnect();
    });
  }

  function scheduleReconnect() {
    if (reconnectTimer || authFailed) return;
    // Full jitter keeps many tabs from reconnecting in lockstep after a server restart.
    const delay = Math.round(reconnectDelay / 2 + Math.random() * reconnectDelay / 2);
    setConnection("closed", "Reconnecting…");
    reconnectTimer = setTimeout(connect, delay);
    reconnectDelay = Math.min(reconnectDelay * 2, RECONNECT_MAX_MS);
  }

  // ---- composer ------------------------------------------------------------------------------

  const autoSizes = CSS.supports && CSS.supports("field-sizing", "content");

  function resizeComposer() {
    if (autoSizes) return;
    // CSSOM writes are allowed under style-src 'self'; only style="" markup is not.
    composer.style.height = "auto";
    composer.style.height = Math.min(composer.scrollHeight, 240) + "px";
  }

  composer.addEventListener("compositionstart", () => {
    composing = true;
  });
  composer.addEventListener("compositionend", () => {
    composing = false;
    compositionEndedAt = performance.now();
  });
  composer.addEventListener("input", resizeComposer);

  composer.addEventListener("keydown", (event) => {
    if (event.key !== "Enter") return;
    // An Enter that confirms an input-method candidate: composition in progress (standard),
    // keyCode 229 (Chrome/Edge on some IMEs), or right after compositionend (Safari).
    if (event.isComposing || event.keyCode === 229 || composing) return;
    if (performance.now() - compositionEndedAt < COMPOSITION_GRACE_MS) return;
    if (event.shiftKey || coarsePointer) return;  // the default action inserts the newline
    event.preventDefault();
    submit();
  });

  form.addEventListener("submit", (event) => {
    event.preventDefault();
    submit();
  });
  stopButton.addEventListener("click", stop);

  // ---- rename --------------------------------------------------------------------------------

  // In place: the title becomes a text field; Enter or leaving it saves, Escape cancels. The
  // new title reaches every tab (this one too) as a "conversation" frame.
  const renameButton = document.getElementById("rename");
  function rename() {
    if (!conversationId || chatTitle.querySelector("input")) return;
    const before = chatTitle.textContent;
    const input = document.createElement("input");
    input.type = "text";
    input.className = "chat-title-input";
    input.id = "chat-title-input";
    input.value = before;
    input.maxLength = 200;
    input.setAttribute("aria-label", "New title");
    chatTitle.replaceChildren(input);
    input.focus();
    input.select();
    let done = false;
    async function finish(save) {
      if (done) return;
      done = true;
      const title = input.value.replace(/\s+/g, " ").trim();
      chatTitle.textContent = save && title ? title : before;
      if (!save || !title || title === before) return;
      const response = await fetch("/api/conversations/" + encodeURIComponent(conversationId), {
        method: "PATCH",
        headers: csrfHeaders(true),
        body: JSON.stringify({ title: title }),
      });
      if (!response.ok) {
        chatTitle.textContent = before;
        showNotice("The conversation could not be renamed (" + response.status + ").");
      }
    }
    input.addEventListener("keydown", (event) => {
      if (event.key === "Enter" && !event.isComposing && event.keyCode !== 229) {
        event.preventDefault();
        finish(true);
      } else if (event.key === "Escape") {
        finish(false);
      }
    });
    input.addEventListener("blur", () => finish(true));
  }
  if (renameButton) renameButton.addEventListener("click", rename);

  // Deleting ends a reply still streaming in it; every tab drops it from its list.
  const deleteButton = document.getElementById("delete-conversation");
  async function deleteConversation() {
    if (!conversationId || !window.confirm("Delete this conversation? This cannot be undone.")) return;
    const meta = document.querySelector('meta[name="csrf-token"]');
    const response = await fetch("/api/conversations/" + encodeURIComponent(conversationId), {
      method: "DELETE",
      headers: { "X-CSRF-Token": meta ? meta.content : "" },
    });
    if (response.ok) leaveTo("/chat");
    else showNotice("The conversation could not be deleted (" + response.status + ").");
  }
  if (deleteButton) deleteButton.addEventListener("click", deleteConversation);

  // ---- small-screen sidebar ------------------------------------------------------------------

  const sidebarOpen = document.getElementById("sidebar-open");
  const sidebarClose = document.getElementById("sidebar-close");
  const scrim = document.getElementById("scrim");
  function toggleSidebar(open) {
    app.classList.toggle("sidebar-visible", open);
    scrim.hidden = !open;
    sidebarOpen.setAttribute("aria-expanded", open ? "true" : "false");
  }
  sidebarOpen.addEventListener("click", () => toggleSidebar(true));
  sidebarClose.addEventListener("click", () => toggleSidebar(false));
  scrim.addEventListener("click", () => toggleSidebar(false));

  // ---- start ---------------------------------------------------------------------------------

  // Replies the server was still writing when this page was rendered: watch them once connected.
  function watchStreamingReplies() {
    for (const el of messages.querySelectorAll('.message[data-role="assistant"]')) {
      const status = el.dataset.status;
      if ((status === "streaming" || status === "pending") && el.dataset.messageId) {
        watch(el.dataset.messageId, el, null);
      }
    }
  }
  watchStreamingReplies();
  // What static/message_actions.js drives.
  window.CrescentChat = { startTurn, switchBranch, isBusy, reloadIfStale, conversationId: () => conversationId };
  if (coarsePointer) composer.setAttribute("enterkeyhint", "enter");
  updateControls();
  scrollToBottom(true);
  connect();
  if (finePointer) composer.focus();
})();
