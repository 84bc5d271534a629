// The dashboard's script: one page of rows, live from the watch stream, the filters and the
// pager (both answered by the server: the script asks for the page it shows), the detail of
// a node, and actions through the API with the generation each row shows. Nothing a node
// carries is put into the page as HTML here: rows come rendered (and escaped) by the
// server, and the counts, the pager and the detail are built with textContent.
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
  const info = document.getElementById("page-info");
  const button = (id) => document.getElementById(id);
  let skew = 0; // the server's clock minus this one
  // The page shown: its first row, its size, and how many rows the filters let through.
  const at = { offset: 0, limit: 200, matched: 0 };
  let seen = 0; // the number of the last write the stream told of

  function say(text, bad) {
    message.textContent = text;
    message.className = bad ? "bad" : "good";
  }

  function clock() {
    const now = document.getElementById("now");
    if (now) skew = Number(now.dataset.now) - Date.now();
  }

  function format(ms) {
    const s = Math.floor(Math.abs(ms) / 1000);
    const pad = (n) => String(n).padStart(2, "0");
    const text = s >= 3600 ? `${Math.floor(s / 3600)}h ${pad(Math.floor((s % 3600) / 60))}m`
      : `${Math.floor(s / 60)}m ${pad(s % 60)}s`;
    return ms >= 0 ? `${text} left` : `expired ${text} ago`;
  }

  // `changed 3m ago`, in the largest unit.
  function ago(ms) {
    const a = Math.max(0, Math.round(ms / 1000));
    return a < 60 ? `${a}s` : a < 3600 ? `${Math.floor(a / 60)}m` :
      a < 86400 ? `${Math.floor(a / 3600)}h` : `${Math.floor(a / 86400)}d`;
  }

  function tick() {
    const now = Date.now() + skew;
    for (const el of document.querySelectorAll("time.ago")) {
      el.textContent = `changed ${ago(now - Number(el.dataset.at))} ago`;
    }
    for (const el of document.querySelectorAll(".countdown")) {
      const left = Number(el.dataset.ends) - now;
      el.textContent = format(left);
      el.classList.toggle("late", left < 0);
    }
  }

  // The paging and the counts of the whole workspace, from the hidden row the server sent
  // with the rows. `adopt`: the page asked for is still the one wanted (the server moves an
  // offset past the rows back to the last page).
  function paging(adopt) {
    const d = document.getElementById("paging").dataset;
    if (adopt) at.offset = Number(d.offset);
    at.limit = Number(d.limit);
    at.matched = Number(d.matched);
    const from = Number(d.offset), shown = rows.querySelectorAll("tr[data-id]").length;
    info.textContent = at.matched ? `rows ${from + 1}-${from + shown} of ${at.matched}`
      : "no rows";
    button("page-first").disabled = button("page-prev").disabled = from === 0;
    button("page-next").disabled = button("page-last").disabled =
      from + at.limit >= at.matched;
    const words = d.counts.split(" ").filter(Boolean);
    const box = document.getElementById("counts");
    const spans = [];
    for (let i = 0; i + 1 < words.length; i += 2) {
      const span = document.createElement("span");
      span.className = `count ${words[i]}`;
      span.textContent = `${words[i + 1]} ${words[i]}`;
      spans.push(span);
    }
    box.replaceChildren(...spans);
  }

  // The query of the page shown: the workspace, the filters, the page.
  function query() {
    const f = new FormData(form);
    const q = new URLSearchParams({ workspace });
    for (const k of ["q", "status", "role", "label", "holder", "sort"]) {
      const v = String(f.get(k) || "").trim();
      if (v) q.set(k, v);
    }
    if (at.offset) q.set("offset", String(at.offset));
    if (at.limit !== 200) q.set("limit", String(at.limit));
    return q.toString();
  }

  async function load() {
    const asked = at.offset;
    const q = query();
    // A reload shows the same page (and the same view: `#view=graph` is kept).
    const view = /^#view=\w+$/.test(location.hash) ? location.hash : "";
    history.replaceState(null, "", `/?${q}${view}`);
    // `seen`: the server may answer with a read of these rows that began after that write.
    const r = await fetch(`/rows?${q}${seen ? `&seen=${seen}` : ""}`,
      { credentials: "same-origin" });
    if (!r.ok) {
      const e = await r.json().catch(() => null);
      say(`could not reload: ${(e && e.error && e.error.message) || r.status}`, true);
      return;
    }
    rows.innerHTML = await r.text(); // the server's own rendering, escaped there
    clock(); tick(); paging(at.offset === asked);
  }

  // One fetch at a time: whatever asks for the rows meanwhile (a burst of events, a filter
  // typed) is answered by one more fetch after it. A write after a quiet spell is fetched
  // at once, and fetches start 50 ms apart at least; while events keep coming, they space
  // out (twice the gap each time, at least twice what the last fetch took, at most 2 s),
  // so a burst of a thousand writes costs a few fetches.
  const QUIET = 50, SLOWEST = 2000;
  let busy = false, again = false, last = -Infinity, gap = QUIET;
  async function refresh() {
    if (busy) { again = true; return; }
    busy = true;
    try {
      if (performance.now() - last > 2 * gap) gap = QUIET;
      do {
        const wait = last + gap - performance.now();
        if (wait > 0) await new Promise((done) => setTimeout(done, wait));
        again = false;
        last = performance.now();
        await load();
        if (again) gap = Math.min(SLOWEST, Math.max(2 * gap, 2 * (performance.now() - last)));
      } while (again);
    } catch (e) {
      say(`could not reload: ${e}`, true);
    } finally {
      busy = false;
    }
  }
  // What the person asked for (a page, a filter, a refused action) is fetched at once.
  function asked() { gap = QUIET; refresh(); }

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
    } else if ((verb === "approve" || verb === "reject") && who) {
      body.actor = who;
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
    const pressed = ev.target.closest("button");
    const tr = ev.target.closest("tr[data-id]");
    if (!pressed || !tr) return;
    if (pressed.classList.contains("show")) { location.hash = `node=${tr.dataset.id}`; return; }
    if (!pressed.dataset.verb) return;
    // A write comes back as an event of the stream, which fetches the rows; a refusal
    // writes nothing, and the rows are fetched again for it.
    const done = await act(tr, pressed.dataset.verb);
    if (!done || events.readyState !== EventSource.OPEN) asked();
  });

  async function bulk(verb, which) {
    const shown = [...rows.querySelectorAll("tr[data-id]")].filter(which);
    if (!shown.length) { say(`${verb}: no shown node to ${verb}`, true); return; }
    if (!confirm(`${verb} ${shown.length} node(s) shown on this page?`)) return;
    let done = 0;
    for (const tr of shown) if (await act(tr, verb)) done++;
    if (done === shown.length) say(`${verb}: ${done} of ${shown.length} done`, false);
    asked();
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
    close.onclick = () => { detail.hidden = true; history.replaceState(null, "", location.pathname + location.search); };
    add(detail, "h2", node.reply.summary);
    // Its attempts first: how its tries went is what a lead opens a node for.
    const who = (id, name) => name || id.slice(0, 8);
    attempts(add, log.reply || [], who, node.reply.progress);
    add(detail, "h3", "fields");
    const fields = add(detail, "dl", "");
    // Times as UTC and how long ago (or till); actors by the names kept for them.
    const times = ["claimed_at", "renewed_at", "created_at", "updated_at", "progress_at",
      "not_before", "deadline", "overdue_at"];
    for (const [k, v] of Object.entries(node.reply)) {
      const empty = v === null || v === "" ||
        (typeof v === "object" && !Object.keys(v).length);
      if (empty || k.endsWith("_name")) continue;
      add(fields, "dt", k);
      const name = node.reply[`${k}_name`];
      add(fields, "dd", times.includes(k) ? when(v) : name ? `${name} (${v})` :
        typeof v === "object" ? JSON.stringify(v) : String(v));
    }
    add(detail, "h3", "history");
    const list = add(detail, "ol", "");
    for (const e of (log.reply || [])) {
      add(list, "li", `${when(e.at)} ${e.verb}${e.generation ? ` gen ${e.generation}` : ""}` +
        `${e.by ? ` by ${who(e.by, e.by_name)}${e.actor ? ` for ${who(e.actor, e.actor_name)}` : ""}` :
          e.actor ? ` by ${who(e.actor, e.actor_name)}` : ""}${e.detail ? ` (${e.detail})` : ""}`);
    }
    detail.hidden = false;
  }

  // Each claim of the node and how it ended: who held it, for how long, how often it was
  // renewed, and the output, failure or hand-back that closed it (an open one shows the
  // node's last progress). From the node's history, oldest first.
  const ENDS = { complete: "completed", expire: "lease ran out", reclaim: "reclaimed",
    release: "released", cancel: "cancelled", approve: "approved", reject: "rejected" };
  function attempts(add, log, who, progress) {
    const tries = [];
    for (const e of log) {
      const open = tries.length && !tries[tries.length - 1].end ? tries[tries.length - 1] : null;
      if (e.verb === "claim") {
        tries.push({ at: e.at, gen: e.generation, by: e.actor ? who(e.actor, e.actor_name) : "?",
          renewed: 0, end: null });
      } else if (open && e.verb === "renew") {
        open.renewed++;
      } else if (open && ENDS[e.verb]) {
        open.end = e;
      }
    }
    if (!tries.length) return;
    add(detail, "h3", `attempts (${tries.length})`);
    const table = add(detail, "table", "");
    table.className = "attempts";
    const head = add(table, "tr", "");
    for (const h of ["#", "held by", "claimed", "for", "renewed", "ended"]) add(head, "th", h);
    tries.forEach((t, i) => {
      const tr = add(table, "tr", "");
      const e = t.end;
      tr.className = e ? (e.verb === "complete" ? `ended ${e.detail || "done"}` : `ended ${e.verb}`)
        : "open";
      add(tr, "td", `${i + 1} (gen ${t.gen})`);
      add(tr, "td", t.by);
      add(tr, "td", when(t.at));
      add(tr, "td", e ? ago(e.at - t.at) : "still held");
      add(tr, "td", String(t.renewed));
      let end = e ? `${ENDS[e.verb]}${e.verb === "complete" ? ` ${e.detail || "done"}` :
        e.detail ? ` (${e.detail})` : ""}` : progress ? `progress: ${progress}` : "";
      if (e && e.output !== undefined && e.output !== null) {
        end += `: output ${typeof e.output === "string" ? e.output : JSON.stringify(e.output)}`;
      }
      add(tr, "td", end);
    });
  }

  // `2026-12-06 21:40:12 UTC (3m ago)`: a time of the store's clock, readable.
  function when(ms) {
    const at = new Date(Number(ms));
    const text = at.toISOString().replace("T", " ").slice(0, 19) + " UTC";
    const left = Number(ms) - (Date.now() + skew);
    const span = ago(Math.abs(left));
    return `${text} (${left < 0 ? `${span} ago` : `in ${span}`})`;
  }

  // A deep link to a node (`#node=ID`) opens its detail; the page's links and buttons set it.
  function followHash() {
    const m = /^#node=([0-9a-f]{32})$/.exec(location.hash);
    if (m) show(m[1]);
  }
  window.addEventListener("hashchange", followHash);

  // A filter changed: the first page of what it lets through. Text is asked for once the
  // typing pauses; a menu at once.
  let typing = null;
  function filtered() {
    clearTimeout(typing);
    at.offset = 0;
    asked();
  }
  form.addEventListener("submit", (ev) => ev.preventDefault());
  form.addEventListener("input", (ev) => {
    if (ev.target.name === "actor" || ev.target.tagName === "SELECT") return;
    clearTimeout(typing);
    typing = setTimeout(filtered, 250);
  });
  form.addEventListener("change", (ev) => {
    if (ev.target.tagName === "SELECT" && ev.target.name !== "workspace") filtered();
  });
  form.elements.workspace.addEventListener("change", () => {
    location.search = `?workspace=${encodeURIComponent(form.elements.workspace.value)}`;
  });
  form.elements.actor.value = localStorage.getItem("claimdag-actor") || "";

  const go = (offset) => { at.offset = Math.max(0, offset); asked(); };
  button("page-first").onclick = () => go(0);
  button("page-prev").onclick = () => go(at.offset - at.limit);
  button("page-next").onclick = () => go(at.offset + at.limit);
  button("page-last").onclick = () => go(Math.floor((at.matched - 1) / at.limit) * at.limit);

  const events = new EventSource("/v1/watch");
  events.addEventListener("open", () => { live.textContent = "live"; live.className = "on"; });
  events.addEventListener("error", () => { live.textContent = "reconnecting"; live.className = "off"; });
  events.addEventListener("history", (ev) => {
    try { seen = Math.max(seen, Number(JSON.parse(ev.data).seq) || 0); } catch (e) { /* kept */ }
    refresh();
    document.dispatchEvent(new CustomEvent("claimdag:history"));
  });

  // What the graph and the charts (dashboard-views.js) use of this page.
  window.claimdag = { call, when, ago, workspace };

  clock(); tick(); paging(true); followHash();
  setInterval(tick, 1000);
})();
