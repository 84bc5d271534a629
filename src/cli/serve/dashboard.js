// The dashboard's script: live rows from the watch stream, filters, the detail of a node,
// and actions through the API with the generation each row shows. Nothing a node carries
// is put into the page as HTML here: rows come rendered (and escaped) by the server, and
// the detail is built with textContent.
"use strict";
(function () {
  const meta = (name) => document.querySelector(`meta[name="${name}"]`).content;
  // The session's secret for writes: empty on a page opened without the dashboard's link,
  // which shows the store and cannot act. The session itself is an HttpOnly cookie.
  const csrf = meta("claimdag-csrf");
  const workspace = meta("claimdag-workspace");
  const rows = document.getElementById("rows");
  const message = document.getElementById("message");
  const live = document.getElementById("live");
  const form = document.getElementById("filters");
  const detail = document.getElementById("detail");
  let offset = 0; // the server's clock minus this one

  function say(text, bad) {
    message.textContent = text;
    message.className = bad ? "bad" : "good";
  }

  function clock() {
    const now = document.getElementById("now");
    if (now) offset = Number(now.dataset.now) - Date.now();
  }

  function format(ms) {
    const s = Math.floor(Math.abs(ms) / 1000);
    const pad = (n) => String(n).padStart(2, "0");
    const text = s >= 3600 ? `${Math.floor(s / 3600)}h ${pad(Math.floor((s % 3600) / 60))}m`
      : `${Math.floor(s / 60)}m ${pad(s % 60)}s`;
    return ms >= 0 ? `${text} left` : `expired ${text} ago`;
  }

  function tick() {
    const now = Date.now() + offset;
    for (const el of document.querySelectorAll(".countdown")) {
      const left = Number(el.dataset.ends) - now;
      el.textContent = format(left);
      el.classList.toggle("late", left < 0);
    }
  }

  function filter() {
    const f = new FormData(form);
    const status = f.get("status"), role = f.get("role").trim();
    const label = f.get("label").trim(), holder = f.get("holder").trim().toLowerCase();
    const counts = {};
    for (const tr of rows.querySelectorAll("tr[data-id]")) {
      const d = tr.dataset;
      const show = (!status || d.status === status) && (!role || d.role === role) &&
        (!label || d.labels.split(" ").includes(label)) &&
        (!holder || d.holder.startsWith(holder));
      tr.hidden = !show;
      counts[d.status] = (counts[d.status] || 0) + 1;
    }
    const box = document.getElementById("counts");
    box.replaceChildren(...Object.keys(counts).sort().map((w) => {
      const span = document.createElement("span");
      span.className = `count ${w}`;
      span.textContent = `${counts[w]} ${w}`;
      return span;
    }));
  }

  let pending = null;
  async function refresh() {
    pending = null;
    const r = await fetch(`/rows?workspace=${encodeURIComponent(workspace)}`,
      { credentials: "same-origin" });
    if (!r.ok) { say(`could not reload: ${r.status}`, true); return; }
    rows.innerHTML = await r.text(); // the server's own rendering, escaped there
    clock(); tick(); filter();
  }
  function soon() { if (!pending) pending = setTimeout(refresh, 150); }

  // `who`: the person acting (the "act as" field), recorded in the history beside the
  // actor the request names (a release or completion of a worker's claim names the worker).
  async function call(verb, body, who) {
    const headers = { "Content-Type": "application/json", "X-Claimdag-Csrf": csrf };
    if (who) headers["X-Claimdag-Actor"] = who;
    const r = await fetch(`/v1/${verb}`, {
      method: "POST",
      credentials: "same-origin",
      headers,
      body: JSON.stringify(body),
    });
    const answer = await r.json().catch(() => null);
    // A refusal is {"error": {"code", "message", ...}}, as at every door.
    const reply = !r.ok && answer && answer.error ? answer.error : answer;
    return { ok: r.ok, status: r.status, reply };
  }

  function actor() {
    const a = new FormData(form).get("actor").trim();
    if (a) localStorage.setItem("claimdag-actor", a);
    return a;
  }

  async function act(tr, verb) {
    const id = tr.dataset.id, gen = Number(tr.dataset.gen);
    if (!csrf) {
      say(`${verb}: this page only shows the store; to act, open the dashboard through the ` +
        "link claimdag serve printed when it started (/?token=...)", true);
      return false;
    }
    const who = actor();
    let body = { node: id, gen };
    if (verb === "claim") {
      if (!who) { say("claim: say who acts (act as, e.g. name:you)", true); return false; }
      body = { node: id, gen, assignee: who };
    } else if (verb === "complete" || verb === "fail") {
      body = { node: id, gen, status: verb === "fail" ? "failed" : "done" };
      verb = "complete";
    } else if (verb === "release") {
      body = { node: id, gen, actor: tr.dataset.holder };
    } else if (verb === "cancel") {
      body = { node: id, gen, reason: "cancelled from the dashboard" };
      if (who) body.actor = who;
    }
    const r = await call(verb, body, who);
    const short = id.slice(0, 8);
    if (r.ok) { say(`${verb} ${short}: done`, false); return true; }
    const e = r.reply || {};
    let text = `${verb} ${short} refused: ${e.code || r.status}: ${e.message || ""}`;
    if (e.code === "stale_generation") {
      text = `${verb} ${short} refused: this page showed generation ${gen}, the node is now at ` +
        `${e.generation} (it changed since). Nothing was done; the rows are reloaded.`;
    }
    say(text, true);
    return false;
  }

  rows.addEventListener("click", async (ev) => {
    const button = ev.target.closest("button");
    const tr = ev.target.closest("tr[data-id]");
    if (!button || !tr) return;
    if (button.classList.contains("show")) { show(tr.dataset.id); return; }
    if (button.dataset.verb) { await act(tr, button.dataset.verb); soon(); }
  });

  async function bulk(verb, which) {
    const shown = [...rows.querySelectorAll("tr[data-id]")].filter((tr) => !tr.hidden && which(tr));
    if (!shown.length) { say(`${verb}: no shown node to ${verb}`, true); return; }
    if (!confirm(`${verb} ${shown.length} node(s)?`)) return;
    let done = 0;
    for (const tr of shown) if (await act(tr, verb)) done++;
    if (done === shown.length) say(`${verb}: ${done} of ${shown.length} done`, false);
    soon();
  }
  const finished = ["done", "failed", "cancelled"];
  document.getElementById("bulk-reopen").onclick =
    () => bulk("reopen", (tr) => finished.includes(tr.dataset.status));
  document.getElementById("bulk-cancel").onclick =
    () => bulk("cancel", (tr) => !finished.includes(tr.dataset.status));

  async function show(id) {
    const [node, log] = await Promise.all([call("show", { node: id }), call("log", { node: id })]);
    if (!node.ok) { say(`show ${id.slice(0, 8)}: ${node.reply && node.reply.message}`, true); return; }
    const add = (parent, tag, text) => {
      const el = document.createElement(tag);
      el.textContent = text;
      parent.appendChild(el);
      return el;
    };
    detail.replaceChildren();
    const close = add(detail, "button", "close");
    close.type = "button";
    close.onclick = () => { detail.hidden = true; };
    add(detail, "h2", node.reply.summary);
    const fields = add(detail, "dl", "");
    for (const [k, v] of Object.entries(node.reply)) {
      if (v === null || (Array.isArray(v) && !v.length)) continue;
      add(fields, "dt", k);
      add(fields, "dd", typeof v === "object" ? JSON.stringify(v) : String(v));
    }
    add(detail, "h3", "history");
    const list = add(detail, "ol", "");
    for (const e of (log.reply || [])) {
      const when = new Date(e.at).toISOString().replace("T", " ").slice(0, 19);
      add(list, "li", `${when} ${e.verb}${e.generation ? ` gen ${e.generation}` : ""}` +
        `${e.by ? ` by ${e.by.slice(0, 8)}${e.actor ? ` for ${e.actor.slice(0, 8)}` : ""}` :
          e.actor ? ` by ${e.actor.slice(0, 8)}` : ""}${e.detail ? ` (${e.detail})` : ""}`);
    }
    detail.hidden = false;
  }

  form.addEventListener("input", filter);
  form.addEventListener("change", filter);
  form.elements.workspace.addEventListener("change", () => {
    location.search = `?workspace=${encodeURIComponent(form.elements.workspace.value)}`;
  });
  form.elements.actor.value = localStorage.getItem("claimdag-actor") || "";

  const events = new EventSource("/v1/watch");
  events.addEventListener("open", () => { live.textContent = "live"; live.className = "on"; });
  events.addEventListener("error", () => { live.textContent = "reconnecting"; live.className = "off"; });
  events.addEventListener("history", soon);

  clock(); tick(); filter();
  setInterval(tick, 1000);
})();
