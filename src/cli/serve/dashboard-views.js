// The dashboard's other views, beside its rows: the graph (the workspace's DAG laid out in
// columns by depth, the critical path in red, each node a link to its detail) and the
// activity (claims, completions, hand-backs and time to claim per minute over the last
// hour, as the server counts them: GET /activity). Both are drawn as SVG from data, text
// set with textContent only; both follow the page's live stream while shown.
"use strict";
(function () {
  const page = window.claimdag;
  if (!page) return;
  const SVG = "http://www.w3.org/2000/svg";
  const views = document.getElementById("views");
  let shown = "table";

  function el(tag, attrs, parent, text) {
    const e = document.createElementNS(SVG, tag);
    for (const [k, v] of Object.entries(attrs || {})) e.setAttribute(k, String(v));
    if (text !== undefined) e.textContent = text;
    if (parent) parent.appendChild(e);
    return e;
  }

  function show(view) {
    shown = view;
    for (const b of views.querySelectorAll("button")) b.classList.toggle("on", b.dataset.view === view);
    for (const v of ["table", "graph", "activity"]) {
      document.getElementById(`view-${v}`).hidden = v !== view;
    }
    if (view === "table") history.replaceState(null, "", location.pathname + location.search);
    else history.replaceState(null, "", `${location.pathname}${location.search}#view=${view}`);
    redraw(true);
  }
  views.addEventListener("click", (ev) => {
    const b = ev.target.closest("button[data-view]");
    if (b) show(b.dataset.view);
  });

  // While a view is shown, a write redraws it, at most every 2 s. Each draw has a number:
  // a draw that a later one overtook (or that finishes after its view was left) is dropped.
  let pending = null, lastDraw = 0, drawn = 0;
  function redraw(now) {
    if (shown === "table") return;
    clearTimeout(pending);
    const wait = now ? 0 : Math.max(0, lastDraw + 2000 - performance.now());
    pending = setTimeout(() => {
      lastDraw = performance.now();
      const view = shown, mine = ++drawn;
      const current = () => mine === drawn && view === shown;
      (view === "graph" ? drawGraph : drawActivity)(current).catch((e) => {
        if (current()) document.getElementById(`${view}-info`).textContent = `could not draw: ${e}`;
      });
    }, wait);
  }
  document.addEventListener("claimdag:history", () => redraw(false));

  // ---- the graph ----

  const COLOURS = { ready: "#b7e1a1", scheduled: "#d7c4ec", blocked: "#f4a6a6",
    parked: "#c9a27e", todo: "#e6e6e6", claimed: "#9ec9f0", expired: "#f7c56b", done: "#6fbf73",
    failed: "#e57373", cancelled: "#bdbdbd" };
  const BOX = { w: 190, h: 26, dx: 240, dy: 34, pad: 10 };

  // Columns by depth (the longest chain of prerequisites before a node), then within a
  // column an order that keeps links short: a few sweeps placing each node at the mean
  // place of its neighbours in the column before (then after); the critical path's nodes
  // head their columns, so it reads as one straight line along the top. Linear in the
  // links for each sweep: a thousand nodes lay out in a few milliseconds.
  function layout(g) {
    const at = new Map(g.nodes.map((n, i) => [n.id, i]));
    const n = g.nodes.length;
    const before = Array.from({ length: n }, () => []);
    const after = Array.from({ length: n }, () => []);
    for (const e of g.edges) {
      const a = at.get(e.from), b = at.get(e.to);
      if (a === undefined || b === undefined) continue;
      before[b].push(a);
      after[a].push(b);
    }
    const depth = new Array(n).fill(0);
    const waiting = before.map((p) => p.length);
    const queue = [];
    waiting.forEach((w, i) => { if (!w) queue.push(i); });
    for (let q = 0; q < queue.length; q++) {
      const i = queue[q];
      for (const j of after[i]) {
        depth[j] = Math.max(depth[j], depth[i] + 1);
        if (--waiting[j] === 0) queue.push(j);
      }
    }
    const columns = [];
    depth.forEach((d, i) => (columns[d] = columns[d] || []).push(i));
    const place = new Array(n).fill(0);
    const number = () => columns.forEach((c) => c.forEach((i, k) => (place[i] = k)));
    number();
    const mean = (list, own) => list.length ? list.reduce((s, j) => s + place[j], 0) / list.length : own;
    for (let sweep = 0; sweep < 4; sweep++) {
      const down = sweep % 2 === 0;
      const order = down ? columns : [...columns].reverse();
      for (const c of order) {
        const key = new Map(c.map((i) => [i, g.nodes[i].critical ? -1
          : mean(down ? before[i] : after[i], place[i])]));
        c.sort((a, b) => key.get(a) - key.get(b) || a - b);
        c.forEach((i, k) => (place[i] = k));
      }
    }
    const x = (i) => BOX.pad + depth[i] * BOX.dx;
    const y = (i) => BOX.pad + place[i] * BOX.dy;
    const tallest = Math.max(0, ...columns.map((c) => c.length));
    return { at, x, y, width: BOX.pad * 2 + Math.max(1, columns.length) * BOX.dx - (BOX.dx - BOX.w),
      height: BOX.pad * 2 + Math.max(1, tallest) * BOX.dy };
  }

  // The most nodes the view draws: past it a browser would spend seconds on the picture
  // (and the JSON of 100,000 nodes is some 20 MB); `claimdag graph | dot` draws any size.
  const MOST = 3000;

  // The workspace's nodes the graph would hold, from the counts the page shows.
  function toDraw(finishedToo) {
    const words = document.getElementById("paging").dataset.counts.split(" ").filter(Boolean);
    let n = 0;
    for (let i = 0; i + 1 < words.length; i += 2) {
      if (finishedToo || !["done", "failed", "cancelled"].includes(words[i])) n += Number(words[i + 1]);
    }
    return n;
  }

  // The "finished nodes too" box, as it was.
  function finishedToo(was) {
    const label = document.createElement("label");
    const tick = document.createElement("input");
    tick.type = "checkbox";
    tick.id = "graph-all";
    tick.checked = was ? was.checked : false;
    tick.onchange = () => redraw(true);
    label.append(tick, " finished nodes too");
    return label;
  }

  async function drawGraph(current) {
    const all = document.getElementById("graph-all");
    const info = document.getElementById("graph-info");
    const many = toDraw(all ? all.checked : false);
    if (many > MOST) {
      document.getElementById("graph-box").replaceChildren();
      info.replaceChildren(`${many} nodes: more than the ${MOST} this view draws. Draw ` +
        "them with claimdag graph | dot -Tsvg, or archive finished work. ", finishedToo(all));
      return;
    }
    const r = await page.call("graph", { format: "json", all: all ? all.checked : false,
      workspace: page.workspace });
    if (!current()) return;
    if (!r.ok) { info.textContent = `graph: ${(r.reply && r.reply.message) || r.status}`; return; }
    const g = JSON.parse(r.reply.graph);
    const started = performance.now();
    const pos = layout(g);
    const svg = el("svg", { id: "dag", width: pos.width, height: pos.height,
      viewBox: `0 0 ${pos.width} ${pos.height}`, role: "img" });
    el("title", {}, svg, "the workspace's DAG");
    const links = el("g", { class: "links" }, svg);
    const hot = el("g", { class: "links critical" }, svg);
    for (const e of g.edges) {
      const a = pos.at.get(e.from), b = pos.at.get(e.to);
      if (a === undefined || b === undefined) continue;
      const x1 = pos.x(a) + BOX.w, y1 = pos.y(a) + BOX.h / 2, x2 = pos.x(b), y2 = pos.y(b) + BOX.h / 2;
      const mid = (x1 + x2) / 2;
      el("path", { d: `M${x1},${y1} C${mid},${y1} ${mid},${y2} ${x2},${y2}`,
        class: `link${e.soft ? " soft" : ""}${e.critical ? " critical" : ""}`,
        "data-from": e.from, "data-to": e.to }, e.critical ? hot : links);
    }
    const boxes = el("g", { class: "nodes" }, svg);
    g.nodes.forEach((node, i) => {
      const box = el("g", { class: `node ${node.status}${node.critical ? " critical" : ""}`,
        "data-id": node.id, "data-status": node.status, transform: `translate(${pos.x(i)},${pos.y(i)})`,
        tabindex: 0 }, boxes);
      el("title", {}, box, `${node.summary}\n${node.status}, gen ${node.generation}` +
        `${node.critical ? ", on the critical path" : ""}\n${node.id}`);
      el("rect", { width: BOX.w, height: BOX.h, rx: 5, fill: COLOURS[node.status] || "#eee" }, box);
      const words = node.summary.length > 26 ? `${node.summary.slice(0, 25)}…` : node.summary;
      el("text", { x: 7, y: 17 }, box, words);
    });
    const took = Math.round(performance.now() - started);
    const box = document.getElementById("graph-box");
    box.replaceChildren(svg);
    const onPath = g.nodes.filter((n) => n.critical).length;
    info.replaceChildren(`${g.nodes.length} nodes, ${g.edges.length} links; the critical ` +
      `path (${onPath} nodes) in red; a click opens a node. `, finishedToo(all));
    svg.dataset.took = String(took);
  }

  document.getElementById("graph-box").addEventListener("click", (ev) => {
    const g = ev.target.closest("g.node");
    if (g) location.hash = `node=${g.dataset.id}`;
  });
  document.getElementById("graph-box").addEventListener("keydown", (ev) => {
    const g = ev.target.closest("g.node");
    if (g && ev.key === "Enter") location.hash = `node=${g.dataset.id}`;
  });

  // ---- the activity ----

  const CHARTS = [
    { id: "claims", title: "claims granted", parts: [["claims", "#1c5aa6"]] },
    { id: "completions", title: "completions",
      parts: [["done", "#3d7a4a"], ["failed", "#a1231b"], ["cancelled", "#7a6a7a"]] },
    { id: "handbacks", title: "hand-backs",
      parts: [["expired", "#b35c00"], ["reclaimed", "#c9a27e"], ["released", "#5b6677"]] },
    { id: "waited", title: "time to claim (mean; the mark is the longest)", time: true,
      parts: [["mean_ms", "#6a4fb3"]] },
  ];
  const W = 600, H = 120, LEFT = 48, BOTTOM = 18;

  async function drawActivity(current) {
    const r = await fetch(`/activity?workspace=${encodeURIComponent(page.workspace)}`,
      { credentials: "same-origin" });
    if (!current()) return;
    const info = document.getElementById("activity-info");
    if (!r.ok) { info.textContent = `activity: ${r.status}`; return; }
    const a = await r.json();
    if (!current()) return;
    const minutes = a.minutes;
    const box = document.getElementById("charts");
    box.replaceChildren(...CHARTS.map((c) => chart(c, minutes)));
    info.textContent = `the last hour, a bar a minute, by any process, as this server has ` +
      `counted since ${page.when(a.since)}`;
  }

  const value = (m, key) => key === "mean_ms" ? (m.waited.mean_ms || 0) : m[key];
  const label = (c, v) => c.time ? (v ? page.ago(v) : "0s") : String(v);

  function chart(c, minutes) {
    const figure = document.createElement("figure");
    figure.className = "chart";
    figure.id = `chart-${c.id}`;
    const sums = minutes.map((m) => c.time ? (m.waited.max_ms || 0)
      : c.parts.reduce((s, [k]) => s + value(m, k), 0));
    const top = Math.max(1, ...sums);
    const total = c.time ? minutes.reduce((s, m) => s + m.waited.n, 0)
      : sums.reduce((s, v) => s + v, 0);
    const caption = document.createElement("figcaption");
    caption.textContent = c.time ? `${c.title}: ${total} claims this hour`
      : `${c.title}: ${total} this hour${c.parts.length > 1 ? ` (${c.parts.map(([k]) => k).join(", ")})` : ""}`;
    figure.appendChild(caption);
    const svg = el("svg", { viewBox: `0 0 ${W} ${H}`, class: "bars", role: "img",
      "data-total": total }, figure);
    el("title", {}, svg, caption.textContent);
    const plot = H - BOTTOM - 4, step = (W - LEFT) / minutes.length;
    el("text", { x: LEFT - 4, y: 10, class: "axis", "text-anchor": "end" }, svg, label(c, top));
    el("text", { x: LEFT - 4, y: plot + 4, class: "axis", "text-anchor": "end" }, svg, "0");
    el("line", { x1: LEFT, y1: plot + 4, x2: W, y2: plot + 4, class: "base" }, svg);
    for (const [k, t, anchor] of [[0, "-60m", "start"], [30, "-30m", "middle"], [60, "now", "end"]]) {
      el("text", { x: LEFT + k * step, y: H - 4, class: "axis", "text-anchor": anchor }, svg, t);
    }
    minutes.forEach((m, i) => {
      let y = plot + 4;
      const stamp = new Date(m.at).toISOString().slice(11, 16);
      for (const [k, colour] of c.parts) {
        const v = value(m, k);
        if (!v) continue;
        const h = (v / top) * plot;
        y -= h;
        const bar = el("rect", { x: LEFT + i * step + 1, y, width: Math.max(1, step - 2), height: h,
          fill: colour, "data-at": m.at, "data-key": k, "data-value": v }, svg);
        el("title", {}, bar, `${stamp} UTC: ${label(c, v)} ${c.time ? "mean wait" : k}`);
      }
      if (c.time && m.waited.max_ms) {
        const my = plot + 4 - (m.waited.max_ms / top) * plot;
        el("line", { x1: LEFT + i * step, x2: LEFT + (i + 1) * step, y1: my, y2: my, class: "max",
          "data-value": m.waited.max_ms }, svg);
      }
    });
    return figure;
  }

  const wanted = /^#view=(graph|activity)$/.exec(location.hash);
  if (wanted) show(wanted[1]);
  setInterval(() => redraw(false), 30000);
})();
