// Crescent chat page: an agent run's steps inside its reply (agent_step frames,
// docs/INTERFACES.md section 4). Each step is one collapsible row: a tool step's summary
// ("Searched your documents — 3 passages") with its arguments and result inside; a model step
// that called tools shows as "Thinking…" while it runs. Every text is set with textContent
// (the server's text is data, never markup). A later frame of the same step replaces it.
// After a reload the server draws a finished run's tool steps in the same DOM, collapsed
// (templates/_message.html, backend/agent/step_views.py: keep the two in step).
"use strict";

(function () {
  const LABELS = { ok: "", refused: "refused", invalid: "invalid arguments", error: "failed", running: "running…" };
  // A tool step that ran no call (the run's tool call or time limit came first): step_views.NO_CALL_LINE.
  const NO_CALL = "No tool was run";

  function container(el) {
    let box = el.querySelector(".agent-steps");
    if (!box) {
      box = document.createElement("div");
      box.className = "agent-steps";
      box.setAttribute("aria-label", "Agent steps");
      const body = el.querySelector(".message-body");
      (body || el).insertBefore(box, body ? body.firstChild : null);
    }
    return box;
  }

  function text(tag, className, value) {
    const node = document.createElement(tag);
    node.className = className;
    node.textContent = value;
    return node;
  }

  function toolStep(frame) {
    const details = document.createElement("details");
    details.className = "agent-step agent-step-tool";
    details.dataset.status = frame.status;
    const summary = document.createElement("summary");
    const lines = frame.calls.map((call) => {
      // A summary from the server says what happened ("calculator failed"); without one the
      // tool's name gets its status's label ("calculator (refused)"). "ok" has no label.
      if (call.summary) return call.summary;
      const label = Object.prototype.hasOwnProperty.call(LABELS, call.status) ? LABELS[call.status] : call.status;
      return label ? call.tool + " (" + label + ")" : call.tool;
    });
    summary.textContent = lines.join(" · ") || NO_CALL;
    details.appendChild(summary);
    for (const call of frame.calls) {
      const item = document.createElement("div");
      item.className = "agent-call";
      item.dataset.status = call.status;
      item.appendChild(text("div", "agent-call-tool", call.tool));
      item.appendChild(text("pre", "agent-call-arguments", call.arguments));
      if (call.content) item.appendChild(text("pre", "agent-call-result", call.content));
      details.appendChild(item);
    }
    return details;
  }

  function modelStep(frame) {
    // A model step's own text: a call block (shown by the tool step after it) or the answer
    // (shown as the reply): only a running one is shown, as a placeholder.
    const node = text("div", "agent-step agent-step-model", frame.status === "running" ? "Thinking…" : "");
    node.dataset.status = frame.status;
    node.hidden = frame.status !== "running";
    return node;
  }

  function render(el, frame) {
    if (!el || !frame) return;
    const box = container(el);
    const node = frame.kind === "tool" ? toolStep(frame) : modelStep(frame);
    node.dataset.index = String(frame.index);
    const old = box.querySelector('[data-index="' + String(frame.index) + '"]');
    if (old) {
      if (old.open) node.open = true;  // keep what the reader opened
      box.replaceChild(node, old);
    } else {
      // In index order: a page drawn from the stored run (templates/_message.html) lists only
      // its tool steps, and an attach replays every step from the first.
      const later = Array.from(box.querySelectorAll(".agent-step[data-index]"))
        .find((other) => Number(other.dataset.index) > frame.index);
      box.insertBefore(node, later || null);
    }
  }

  // The reply's text has begun: the running model step's placeholder is hidden (the text is the answer).
  function answering(el) {
    if (!el) return;
    for (const node of el.querySelectorAll('.agent-step-model[data-status="running"]')) node.hidden = true;
  }

  window.CrescentAgentSteps = { render, answering };
})();
