// The setctl dashboard's page. It shows what setctl's JSON endpoints say:
// the run's report (engine/report) and the journal's events, kept live by
// the server's event stream. It keeps no idea of a change's state of its
// own: every status, count and budget it shows is the report's.
"use strict";

const token = new URLSearchParams(location.search).get("token");
const svgNS = "http://www.w3.org/2000/svg";

// app is what the page holds: the projects, the one shown, the latest
// overview the stream sent, and the page's live connections.
const app = {
  projects: [],
  project: null,
  // run is the run shown: "" for the journal's latest, live; an earlier
  // one's ID (runs.js). stopped is why the server stopped, once it did.
  run: "",
  stopped: "",
  overview: null,
  stream: null,
  logStream: null,
  refreshTimer: null,
  // render redraws the current page; refresh refetches what it shows.
  render: null,
  refresh: null,
};

function url(path, params) {
  const q = new URLSearchParams(params || {});
  if (app.run && path.startsWith("/api/p/")) q.set("run", app.run);
  if (token) q.set("token", token);
  const s = q.toString();
  return s ? path + "?" + s : path;
}

async function getJSON(path, params) {
  const r = await fetch(url(path, params));
  if (!r.ok) throw new Error(path + ": " + r.status + " " + (await r.text()).trim());
  return r.json();
}

function esc(s) {
  return String(s ?? "").replace(/[&<>"']/g, (c) => ({ "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;" })[c]);
}

function el(tag, attrs, parent) {
  const e = document.createElementNS(svgNS, tag);
  for (const [k, v] of Object.entries(attrs || {})) e.setAttribute(k, v);
  if (parent) parent.appendChild(e);
  return e;
}

function svgText(parent, x, y, text, attrs) {
  const t = el("text", Object.assign({ x, y }, attrs || {}), parent);
  t.textContent = text;
  return t;
}

// ---- formatting ----

function fmtTime(t) {
  if (!t) return "-";
  return new Date(t).toLocaleTimeString([], { hour12: false });
}

function fmtMs(ms) {
  if (ms == null) return "-";
  if (ms < 1000) return ms + "ms";
  const s = Math.round(ms / 1000);
  if (s < 60) return s + "s";
  const m = Math.floor(s / 60);
  if (m < 60) return m + "m" + (s % 60 ? (s % 60) + "s" : "");
  return Math.floor(m / 60) + "h" + (m % 60) + "m";
}

function fmtTokens(n) {
  if (!n) return "0";
  if (n >= 1e6) return (n / 1e6).toFixed(n >= 1e7 ? 0 : 1) + "M";
  if (n >= 1e3) return (n / 1e3).toFixed(n >= 1e4 ? 0 : 1) + "k";
  return String(n);
}

function fmtCost(usd) {
  return usd ? "$" + usd.toFixed(usd < 1 ? 3 : 2) : "-";
}

function used(b, fmt) {
  fmt = fmt || String;
  return b.budget ? fmt(b.used) + "/" + fmt(b.budget) : fmt(b.used);
}

// conflicts follows a change's retries, as in setctl status: the merge
// conflicts it went back to its agent for, once it had any.
function conflicts(c) {
  const n = c.retries.conflicts ? c.retries.conflicts.used : 0;
  return n ? `, ${n} conflict${n === 1 ? "" : "s"}` : "";
}

function short(sha) {
  return (sha || "").slice(0, 7);
}

// statusClass is the colour family of a change's status.
function statusClass(s) {
  if (s.startsWith("failed:") || s === "dep-blocked") return "s-failed";
  switch (s) {
    case "dispatched": case "implementing": case "verifying": return "s-active";
    case "verify-failed": case "integration-failed": return "s-warn";
    case "queued": case "integrating": case "in-review": return "s-queue";
    case "merged": case "archived": return "s-done";
  }
  return "s-pending";
}

function badge(status) {
  return `<span class="badge ${statusClass(status)}">${esc(status)}</span>`;
}

// The stages of a change's way to main, as the report's stages count
// them, and the one a status is in.
const stages = ["wait", "agent", "verify", "queue", "main"];
const stageMs = ["waitMs", "agentMs", "verifyMs", "queueMs", "integrateMs"];

function stageOf(status) {
  switch (status) {
    case "pending": return 0;
    case "dispatched": case "implementing": case "verify-failed": case "integration-failed": return 1;
    case "verifying": return 2;
    case "queued": case "integrating": return 3;
    case "in-review": case "merged": return 4;
    case "archived": return 5;
  }
  return -1;
}

// stageStates says, for each stage, "done", "current", "failed" or "".
function stageStates(c) {
  let at = stageOf(c.status);
  const failed = at < 0 && c.status !== "paused";
  if (at < 0) {
    at = 0;
    stageMs.forEach((k, i) => { if (c.stages[k] > 0) at = i; });
  }
  return stages.map((_, i) => (i < at ? "done" : i === at ? (failed ? "failed" : "current") : ""));
}

function stageBar(c) {
  const st = stageStates(c);
  return `<span class="stages" title="${stages.map((s, i) => s + ": " + fmtMs(c.stages[stageMs[i]])).join(", ")}">` +
    st.map((s) => `<span class="${s}"></span>`).join("") + "</span>";
}

// describe says what one journal event is, in a line.
function describe(e) {
  const d = e.data || {};
  switch (e.type) {
    case "RUN_STARTED": return `run ${e.run} ${d.resumed ? "resumed" : "started"}: ${(d.changes || []).length} changes, up to ${d.maxParallel} at once`;
    case "PLAN_CREATED": return `plan created (${d.strategy}): ${(d.changes || []).length} changes, ${d.requirements} requirements`;
    case "STATE_CHANGE": return `${d.from} → ${d.to}${d.reason ? ": " + d.reason : ""}`;
    case "DISPATCH": return `${d.reused ? "resumed in" : "dispatched to"} ${d.worktree} (branch ${d.branch} from ${short(d.base)})`;
    case "AGENT_SESSION_DECISION": return `iteration ${d.iteration || "?"}: ${[d.adapter, d.model].filter(Boolean).join(" ") || "agent"} started, ${d.decision} session (${d.reason})`;
    // No tokens is no usage reported (an exec agent's), as setctl events says.
    case "AGENT_ITERATION": return `iteration ${d.iteration}: ${d.result} (${fmtMs(d.durationMs)}, ${tokensOf(d.tokens) ? fmtTokens(tokensOf(d.tokens)) + " tokens, " : ""}${d.commits} commits)${d.error ? ": " + d.error : ""}`;
    case "LLM_CALL": return `${d.role} call to ${d.model}: ${fmtTokens(tokensOf(d.tokens))} tokens${d.costUsd ? ", " + fmtCost(d.costUsd) : ""}${d.error ? ": " + d.error : ""}`;
    case "GATE_SET_EXPANDED": return `${d.stage} ${d.gate} added: ${d.condition}`;
    case "GATE_STARTED": return `${d.stage} ${d.gate}: started${d.command ? " (" + d.command.join(" ") + ")" : ""}`;
    case "VERIFY_GATE": return `${d.stage} ${d.gate}: ${d.result} (${fmtMs(d.durationMs)})${d.reason ? ": " + d.reason : ""}`;
    case "RETRY_SCHEDULED": return `retry ${d.attempt}/${d.budget} (${d.stage}): back to the agent`;
    case "MERGE_QUEUED": return `in the merge queue at ${short(d.head)}`;
    case "INTEGRATION_ATTEMPT": return `integration attempt ${d.attempt}: merged onto ${short(d.onto)}${(d.ahead || []).length ? " (behind " + d.ahead.join(", ") + ")" : ""}`;
    case "CHANGE_INTEGRATION_FAILED":
      switch (d.reason) {
        case "conflict": return `merging main conflicts in ${(d.paths || []).join(", ")}`;
        case "review": return "a review of its pull request requested changes";
        case "check": return "a check of its pull request failed";
      }
      return `integration failed: ${d.gate}`;
    case "PUSHING": return d.branch ? `pushing ${short(d.commit)} to ${d.remote}'s ${d.branch}` : `pushing ${short(d.commit)} to ${d.remote}'s main`;
    case "PULL_REQUEST_OPENED": return `pull request #${d.number} at ${short(d.head)}${d.way ? ", " + d.way : ""}${d.mergeRefused ? ", merge refused: " + d.mergeRefused : ""}`;
    case "PULL_REQUEST_FEEDBACK": return `pull request #${d.number}: ${d.kind === "review" ? "review by " : "check "}${d.by} back to the agent`;
    case "MERGED": return `merged: main ${short(d.previous)} → ${short(d.commit)}`;
    case "ARCHIVED": return d.skipped ? "archived: nothing to fold, " + d.skipped : `archived: ${(d.capabilities || []).map((c) => "openspec/specs/" + c).join(", ")} updated`;
    case "MONITOR_HEARTBEAT": return `heartbeat: ${(d.active || []).length} active, ${(d.queued || []).length} queued`;
    case "BUDGET_EXCEEDED": return `${d.budget} budget spent (${d.used} of ${d.limit})`;
    case "RUN_FINISHED": return `run finished: ${d.result} (${fmtMs(d.durationMs)})`;
    case "BASELINE_GATE": return `baseline ${d.gate}: ${d.result}${d.reason ? ": " + d.reason : ""}`;
    case "BASELINE_ACCEPTED": return `baseline ${d.gate}: ${(d.failures || []).length} failures accepted`;
    case "REPAIRED": return `repaired after a crash: ${d.problem}`;
    case "GIT_DIR_CHANGED": return `security: git directory changed while no run watched it: ${(d.changes || []).map((c) => `${c.what} (${c.path}): ${c.do}`).join("; ")}`;
    case "SENTINEL_ACTION": return `sentinel: ${[d.rule, d.action, d.step].filter((x) => x != null && x !== "").join(" · ")}`;
  }
  return e.type.toLowerCase();
}

function levelOf(e) {
  const d = e.data || {};
  if (e.type === "VERIFY_GATE") return d.result === "fail" || d.result === "error" ? "error" : d.result === "warn" ? "warn" : "";
  if (e.type === "STATE_CHANGE" && (d.to.startsWith("failed:") || d.to === "dep-blocked")) return "error";
  if (e.type === "BUDGET_EXCEEDED") return "error";
  if (e.type === "RETRY_SCHEDULED" || e.type === "CHANGE_INTEGRATION_FAILED" || e.type === "PULL_REQUEST_FEEDBACK" || e.type === "SENTINEL_ACTION") return "warn";
  return "";
}

function tokensOf(t) {
  return t ? (t.input || 0) + (t.output || 0) + (t.cacheRead || 0) + (t.cacheWrite || 0) : 0;
}

// ---- the shell: projects, navigation, the live stream ----

// route is what the location names: #/p/PROJECT[/run/RUN]/PAGE[/ARG].
function route() {
  const m = location.hash.match(/^#\/p\/([^/]+)(?:\/run\/([^/]+))?\/([a-z]+)(?:\/(.+))?$/);
  if (!m) return { project: app.projects.length ? app.projects[0].id : "0", run: "", page: "overview" };
  return { project: m[1], run: m[2] ? decodeURIComponent(m[2]) : "", page: m[3], arg: m[4] ? decodeURIComponent(m[4]) : "" };
}

// hrefOf is the location of page (with arg) of the run shown, or of the
// run run when given ("" for the latest).
function hrefOf(page, arg, run = app.run) {
  return `#/p/${app.project}` + (run ? "/run/" + encodeURIComponent(run) : "") + `/${page}` + (arg ? "/" + encodeURIComponent(arg) : "");
}

function go(page, arg) {
  location.hash = hrefOf(page, arg);
}

function setLive(on, text) {
  const l = document.getElementById("live");
  l.className = "live " + (on ? "on" : "off");
  l.textContent = text;
}

// connect opens the stream of the project shown.
function connect() {
  if (app.stream) app.stream.close();
  const s = new EventSource(url(`/api/p/${app.project}/stream`));
  app.stream = s;
  s.addEventListener("open", () => setLive(true, "live"));
  s.addEventListener("error", () => setLive(false, "reconnecting…"));
  s.addEventListener("overview", (m) => {
    app.overview = JSON.parse(m.data);
    setLive(true, "live · event " + app.overview.lastSeq);
    showRunLine();
    if (app.render) app.render();
    if (window.setctlControl) setctlControl.update();
  });
  s.addEventListener("journal", () => {
    // Pages that show more than the overview read it again, once a burst
    // of events is over.
    if (!app.refresh) return;
    clearTimeout(app.refreshTimer);
    app.refreshTimer = setTimeout(() => app.refresh && app.refresh(), 150);
  });
  s.addEventListener("problem", (m) => setLive(false, "journal: " + JSON.parse(m.data)));
  s.addEventListener("stopped", streamStopped);
}

function showRunLine() {
  const r = app.overview.report.run;
  const line = document.getElementById("runline");
  let text;
  switch (r.state) {
    case "none": text = "No run in this project yet: `setctl apply` starts one."; break;
    case "starting": text = `Run starting (PID ${r.pid})`; break;
    case "running":
      text = `Run ${r.id}: running (PID ${r.pid}), ${r.onMain} of ${r.changes} changes on main, ${fmtMs(r.durationMs)}`;
      // While gates judge main before the first dispatch, the run waits
      // for its baseline: say which gate runs.
      if (r.waiting) text += `; waits for ${r.waiting}`;
      break;
    case "not running": text = `Run ${r.id}: not running (last event ${fmtTime(r.lastEvent)}): its setctl apply is gone; \`setctl apply\` continues the run`; break;
    default: text = `Run ${r.id}: finished: ${r.result} in ${fmtMs(r.durationMs)}, ${r.onMain} of ${r.changes} changes on main`;
  }
  line.innerHTML = `<b>${esc(app.overview.project)}</b> · <span id="run-state" data-state="${esc(r.state)}">${esc(text)}</span>`;
  document.title = `${app.overview.project} · setctl dashboard`;
}

async function start() {
  try {
    app.projects = await getJSON("/api/projects");
  } catch (err) {
    document.getElementById("page").innerHTML = `<p class="error">${esc(err.message)}</p>`;
    return;
  }
  const sel = document.getElementById("project");
  sel.innerHTML = app.projects.map((p) => `<option value="${esc(p.id)}">${esc(p.name)}</option>`).join("");
  sel.hidden = app.projects.length < 2;
  sel.addEventListener("change", () => { location.hash = `#/p/${sel.value}/overview`; });
  for (const a of document.querySelectorAll("#nav a")) {
    a.addEventListener("click", () => go(a.dataset.page));
  }
  window.addEventListener("hashchange", show);
  show();
}

// morePages are the pages other files add (runs.js, requirements.js), by
// the name the location gives them.
const morePages = {};

// show shows the page the location names.
function show() {
  const r = route();
  if (r.project !== app.project || r.run !== app.run) {
    app.project = r.project;
    app.run = r.run;
    app.overview = null;
    document.getElementById("project").value = r.project;
    showRun();
  }
  if (app.logStream) { app.logStream.close(); app.logStream = null; }
  for (const a of document.querySelectorAll("#nav a")) a.classList.toggle("current", a.dataset.page === r.page);
  const page = document.getElementById("page");
  page.innerHTML = "";
  page.dataset.page = r.page;
  app.render = null;
  app.refresh = null;
  const pages = { overview: overviewPage, graph: graphPage, change: changePage, timeline: timelinePage, tokens: tokensPage, sentinel: sentinelPage };
  (pages[r.page] || morePages[r.page] || overviewPage)(page, r.arg);
}

// fetched makes a page that shows data from path: drawn once it comes,
// and again after every burst of new events. Once the server stopped it
// asks nothing, and says why.
function fetched(page, path, draw) {
  if (app.stopped) {
    page.innerHTML = `<p class="muted">This page was not read before the dashboard stopped. ${esc(app.stopped)}</p>`;
    return;
  }
  let seq = 0;
  const load = async () => {
    const mine = ++seq;
    try {
      const data = await getJSON(path);
      if (mine === seq) draw(data);
    } catch (err) {
      page.innerHTML = `<p class="error">${esc(err.message)}</p>`;
    }
  };
  app.refresh = load;
  load();
}

// ---- overview ----

function overviewPage(page) {
  app.render = () => {
    if (!app.overview) { page.innerHTML = '<p class="muted">Reading the journal…</p>'; return; }
    const rep = app.overview.report;
    if (!rep.changes.length) { page.innerHTML = '<p class="muted">No changes in this run yet.</p>'; return; }
    const counts = Object.entries(rep.run.statuses).map(([s, n]) => `${badge(s)} ${n}`).join(" ");
    let h = `<div class="card">${counts}</div><table id="changes"><thead><tr>
      <th>change</th><th>status</th><th>stages</th><th>activity</th><th class="num">iter</th><th class="num">gates</th>
      <th class="num">retries</th><th class="num">tokens</th><th class="num">cost</th><th class="num">age</th><th>waiting / why</th></tr></thead><tbody>`;
    for (const c of rep.changes) {
      const a = c.activity;
      const act = a ? esc(a.name + (a.iteration ? " #" + a.iteration : "")) + (a.command ? `<br><span class="muted">${esc(a.command)}</span>` : "") : "-";
      h += `<tr class="link" data-change="${esc(c.name)}">
        <td><b>${esc(c.name)}</b></td>
        <td class="status" data-status="${esc(c.status)}">${badge(c.status)}${changeLinks(c.name)}</td>
        <td>${stageBar(c)}</td>
        <td>${act}</td>
        <td class="num">${c.iteration}</td>
        <td class="num">${c.gates.passed}/${c.gates.failed}</td>
        <td class="num">${used(c.retries.verify)}+${used(c.retries.integration)}${conflicts(c)}</td>
        <td class="num">${tokensCell(c)}</td>
        <td class="num">${fmtCost(c.costUsd)}</td>
        <td class="num">${c.since ? fmtMs(c.ageMs) : "-"}</td>
        <td>${c.error ? `<span class="error">${esc(c.error)}</span>` : esc(c.waiting || "")}</td></tr>`;
    }
    const next = document.createElement("div");
    next.innerHTML = h + "</tbody></table>";
    for (const tr of next.querySelectorAll("tr[data-change]")) {
      tr.addEventListener("click", (ev) => { if (!ev.target.closest("a, button")) go("change", tr.dataset.change); });
    }
    if (window.setctlControl) setctlControl.rows(next);
    patchCells(page, next);
  };
  app.render();
}

// patchCells makes page show next. When page shows the same table rows
// (the same changes, in the same order) it replaces only the cells whose
// content changed, so that the overview, drawn again at every event and
// every few seconds as ages grow, never swaps out a button (Pause,
// Resume) or a link under the user's pointer; else it takes next whole.
function patchCells(page, next) {
  const rows = (root) => [...root.querySelectorAll("#changes tr")];
  const was = rows(page), now = rows(next);
  const same = was.length === now.length && was.length > 0 &&
    was.every((tr, i) => tr.dataset.change === now[i].dataset.change && tr.cells.length === now[i].cells.length);
  if (!same) {
    page.replaceChildren(...next.childNodes);
    return;
  }
  const card = page.querySelector(".card"), nextCard = next.querySelector(".card");
  if (card && nextCard && card.outerHTML !== nextCard.outerHTML) card.replaceWith(nextCard);
  was.forEach((tr, i) => {
    [...now[i].cells].forEach((cell, j) => {
      if (tr.cells[j].outerHTML !== cell.outerHTML) tr.cells[j].replaceWith(cell);
    });
  });
}

// ---- execution graph ----

function graphPage(page) {
  let view = null;
  const draw = () => {
    if (!view) return;
    // Statuses come from the live overview when there is one.
    const status = {};
    for (const c of view.changes) status[c.name] = c.status;
    if (app.overview) for (const c of app.overview.report.changes) status[c.name] = c.status;
    const nodes = layoutGraph(view);
    page.innerHTML = (view.error ? `<p class="muted">${esc(view.error)}; drawing the changes and their dependencies from the journal.</p>` : "") +
      '<p class="muted">Each change: its agent, its verify stack, its integration into main, coloured by where the run is; dependencies as arrows, the critical path outlined in red.</p>';
    if (!nodes.length) { page.innerHTML += '<p class="muted">No plan in the journal yet.</p>'; return; }
    const W = nodeWidth(nodes), H = 92, GX = 70, GY = 22, P = 10;
    const cols = Math.max(...nodes.map((n) => n.level)) + 1;
    const rows = Math.max(...nodes.map((n) => n.row)) + 1;
    const svg = el("svg", { id: "graph", width: cols * (W + GX) + P, height: rows * (H + GY) + P });
    const pos = {};
    for (const n of nodes) pos[n.name] = { x: P + n.level * (W + GX), y: P + n.row * (H + GY) };
    for (const n of nodes) {
      for (const d of n.dependsOn) {
        if (!pos[d]) continue;
        const a = pos[d], b = pos[n.name];
        const x1 = a.x + W, y1 = a.y + H / 2, x2 = b.x, y2 = b.y + H / 2;
        el("path", { class: "edge", d: `M${x1},${y1} C${x1 + GX / 2},${y1} ${x2 - GX / 2},${y2} ${x2 - 6},${y2}`, "marker-end": "url(#arrow)" }, svg);
      }
    }
    const defs = el("defs", {}, svg);
    const marker = el("marker", { id: "arrow", viewBox: "0 0 10 10", refX: 8, refY: 5, markerWidth: 6, markerHeight: 6, orient: "auto" }, defs);
    el("path", { d: "M0,0 L10,5 L0,10 z", fill: "#94a3b8" }, marker);
    for (const n of nodes) {
      const { x, y } = pos[n.name];
      const st = status[n.name] || "pending";
      const g = el("g", { class: "node", "data-change": n.name, "data-status": st }, svg);
      el("title", {}, g).textContent = n.title;
      el("rect", { class: "box" + (n.critical ? " critical" : ""), x, y, width: W, height: H, rx: 6 }, g);
      svgText(g, x + 10, y + 18, n.name, { "font-weight": "600" });
      const bw = Math.min(W - 20, textWidth(st, { class: "on" }) + 16);
      el("rect", { class: "badge-bg " + statusClass(st), x: x + W - 10 - bw, y: y + 22, width: bw, height: 18, rx: 9, fill: statusFill(st) }, g);
      svgText(g, x + W - 10 - bw / 2, y + 35, st, { "text-anchor": "middle", class: "on" });
      svgText(g, x + 10, y + 36, n.subtitle.length > 24 ? n.subtitle.slice(0, 23) + "…" : n.subtitle, { class: "dim" });
      const states = stageStates({ status: st, stages: (view.changes.find((c) => c.name === n.name) || {}).stages || {} });
      // The three drawn steps: agent (stage 1), verify (2), integration
      // into main (3 and 4).
      const steps = [["agent", states[1]], [n.verify, states[2]], [n.integration, states[4] === "done" ? "done" : states[3] || states[4]]];
      const sw = (W - 20 - 8) / 3;
      steps.forEach(([label, s], i) => {
        const px = x + 10 + i * (sw + 4);
        el("rect", { class: "pill " + (s || "todo"), x: px, y: y + 50, width: sw, height: 30, rx: 4 }, g);
        svgText(g, px + sw / 2, y + 69, label, { "text-anchor": "middle", class: s ? "on" : "" });
      });
      g.addEventListener("click", () => go("change", n.name));
    }
    page.appendChild(svg);
  };
  app.render = draw;
  fetched(page, `/api/p/${app.project}/graph`, (v) => { view = v; draw(); });
}

function statusFill(s) {
  return { "s-failed": "#dc2626", "s-active": "#2e6fd8", "s-warn": "#d97706", "s-queue": "#7c3aed", "s-done": "#16a34a" }[statusClass(s)] || "#98a2b3";
}

// layoutGraph places the graph's changes in columns by their level (the
// longest chain of dependencies above them), in plan order within one.
function layoutGraph(view) {
  let items;
  if (view.graph) {
    items = view.graph.changes.map((c) => ({
      name: c.name, dependsOn: c.dependsOn || [], level: c.level, critical: !!c.critical,
      subtitle: [c.type, c.size, c.agent, c.model].filter(Boolean).join(" · "),
      verify: `verify (${c.verify.length})`, integration: `→ ${view.graph.mainBranch || "main"} (${c.integration.length})`,
      title: `${c.name}\nverify: ${c.verify.map((g) => g.gate).join(", ")}\nintegration: ${c.integration.map((g) => g.gate).join(", ")}\nrequirements: ${(c.requirements || []).join(", ")}`,
    }));
  } else {
    const level = {};
    const byName = Object.fromEntries(view.changes.map((c) => [c.name, c]));
    const lv = (n, seen) => {
      if (level[n] != null) return level[n];
      if (seen.has(n) || !byName[n]) return 0;
      seen.add(n);
      return (level[n] = Math.max(-1, ...byName[n].dependsOn.map((d) => lv(d, seen))) + 1);
    };
    items = view.changes.map((c) => ({
      name: c.name, dependsOn: c.dependsOn, level: lv(c.name, new Set()), critical: false,
      subtitle: (c.requirements || []).join(", "), verify: "verify", integration: "→ main",
      title: c.name,
    }));
  }
  const rowAt = {};
  for (const it of items) {
    it.row = rowAt[it.level] || 0;
    rowAt[it.level] = it.row + 1;
  }
  return items;
}

// ---- a change ----

function changePage(page, name) {
  let logPath = "";
  let logBox = null;
  const draw = (v) => {
    const c = v.change, s = v.state;
    let h = `<h1 id="change-title" data-change="${esc(c.name)}">${esc(c.name)} <span class="status" data-status="${esc(c.status)}">${badge(c.status)}</span></h1>`;
    h += `<p>${c.error ? `<span class="error">${esc(c.error)}</span>` : c.activity ? "at work: " + esc(c.activity.name + (c.activity.command ? " (" + c.activity.command + ")" : "")) : c.waiting ? "waits for " + esc(c.waiting) : ""}</p>`;
    h += `<div class="card grid">
      <div><b>stages</b>${stageBar(c)}</div>
      <div><b>iteration</b>${c.iteration}</div>
      <div><b>gates passed/failed</b>${c.gates.passed}/${c.gates.failed} (${c.gates.warned} warned)</div>
      <div><b>retries verify+integration</b>${used(c.retries.verify)}+${used(c.retries.integration)}</div>
      <div><b>merge conflicts</b>${used(c.retries.conflicts || {used: 0, budget: 0})}</div>
      <div><b>tokens</b>${tokensCell(c)}</div>
      <div><b>cost</b>${fmtCost(c.costUsd)}</div>
      <div><b>requirements</b>${esc(c.requirements.join(", ") || "none")}</div>
      <div><b>depends on</b>${esc(c.dependsOn.join(", ") || "nothing")}</div>
      <div><b>branch</b>${esc(s.branch || "-")}</div>
      <div><b>commit on main</b>${commitLink(c.name, v.links) || "-"}${v.links.pullRequest ? " · pull request " + prLink(v.links.pullRequest, v.links.pullRequestUrl) : ""}</div></div>`;
    h += `<h2>Activity <a class="muted small" id="on-timeline" href="${esc(hrefOf("timeline", c.name))}">on the run's timeline</a></h2><div id="change-spans"></div>`;
    const gates = v.events.filter((e) => e.type === "VERIFY_GATE");
    h += roundsSection(v, gates);
    h += `<h2>Agent log <span class="muted" id="agent-log-path">${esc(v.agentLog || "")}</span></h2><pre id="agent-log">${v.agentLog ? "" : "No agent iteration yet."}</pre>`;
    h += '<h2>Events</h2><table id="events"><thead><tr><th>time</th><th>event</th></tr></thead><tbody>';
    for (const e of v.events) {
      h += `<tr><td>${fmtTime(e.time)}</td><td class="level-${levelOf(e)}">${esc(describe(e))}</td></tr>`;
    }
    h += "</tbody></table>";
    const keep = logBox ? logBox.textContent : "";
    page.innerHTML = h;
    drawSpans(document.getElementById("change-spans"), { start: null, end: null, changes: [c.name], spans: v.spans, bands: (v.rounds || []).map((r) => Object.assign({ change: c.name }, r)) }, true);
    wireRounds(page, c.name);
    for (const b of page.querySelectorAll("[data-gate-log]")) {
      b.addEventListener("click", () => showGateLog(page, gates[+b.dataset.gateLog], +b.dataset.gateLog));
    }
    // A failing gate shows the end of its output at once.
    gates.forEach((e, i) => { if ((e.data.result === "fail" || e.data.result === "error") && e.data.log) showGateLog(page, e, i); });
    logBox = document.getElementById("agent-log");
    if (v.agentLog && v.agentLog === logPath) logBox.textContent = keep;
    if (v.agentLog && v.agentLog !== logPath) followLog(v.agentLog);
  };
  const followLog = (path) => {
    logPath = path;
    if (app.logStream) app.logStream.close();
    logBox.textContent = "";
    // An earlier run has ended: its log is read once (runs.js).
    if (app.run) { readLog(logBox, path); return; }
    const s = new EventSource(url(`/api/p/${app.project}/log/stream`, { path }));
    app.logStream = s;
    s.addEventListener("log", (m) => {
      const chunk = JSON.parse(m.data);
      const box = document.getElementById("agent-log");
      if (!box) return;
      const atEnd = box.scrollTop + box.clientHeight >= box.scrollHeight - 4;
      box.textContent += chunk.text;
      if (atEnd) box.scrollTop = box.scrollHeight;
    });
  };
  fetched(page, `/api/p/${app.project}/change/${encodeURIComponent(name)}`, draw);
}

// showGateLog shows the end of the output of gate verdict e, the i-th of
// the page's table.
async function showGateLog(page, e, i) {
  const row = page.querySelector(`[data-gate-out="${i}"]`);
  if (!row) return;
  row.hidden = false;
  const pre = row.querySelector("pre");
  try {
    const chunk = await getJSON(`/api/p/${app.project}/log`, { path: e.data.log, offset: -8192 });
    pre.textContent = (chunk.offset > 0 ? `… (${chunk.offset} bytes before)\n` : "") + (chunk.text || "(the log is empty)");
  } catch (err) {
    pre.textContent = err.message;
  }
}

// ---- activity timeline ----

function timelinePage(page, zoom) {
  fetched(page, `/api/p/${app.project}/timeline`, (tl) => {
    page.innerHTML = '<p class="muted">Every agent iteration, gate, model call and merge as a span on the time axis, one row per change, each verify round and integration attempt a band behind its spans. Click a span for its detail.</p>' +
      '<div class="legend"><span><i class="bar-agent"></i>agent</span><span><i class="bar-verify"></i>gate</span><span><i class="bar-other"></i>model call</span><span><i class="bar-plan"></i>integration</span><span><i class="band-key"></i>a round</span></div>' +
      zoomBar(zoom) + '<div id="timeline-box"></div><div id="span-detail" class="card" hidden></div>';
    wireZoomBar(zoom);
    drawTimeline(document.getElementById("timeline-box"), tl, false, zoom);
  });
}

// drawSpans draws tl's spans on a time axis into box (see drawTimeline).
function drawSpans(box, tl, compact) {
  drawTimeline(box, tl, compact, "");
}

function showSpan(box, s) {
  let detail = document.getElementById("span-detail");
  if (!detail) {
    detail = document.createElement("div");
    detail.id = "span-detail";
    detail.className = "card";
    box.after(detail);
  }
  detail.hidden = false;
  const took = Date.parse(s.end) - Date.parse(s.start);
  detail.innerHTML = `<h2>${esc(s.change ? s.change + ": " : "")}${esc(s.label)}</h2>
    <p>${esc(s.kind)} · ${fmtTime(s.start)} → ${s.open ? "still open" : fmtTime(s.end)} · ${fmtMs(took)} · ${esc(s.result || "running")}</p>
    <p>${esc(describe({ type: s.type, data: s.data, run: "" }))}</p>
    ${s.change ? `<p><button id="span-change">open ${esc(s.change)}</button></p>` : ""}
    ${s.log ? `<p>log ${esc(s.log)}</p><pre id="span-log">…</pre>` : ""}
    <pre>${esc(JSON.stringify(s.data, null, 2))}</pre>`;
  const b = document.getElementById("span-change");
  if (b) b.addEventListener("click", () => go("change", s.change));
  if (s.log) {
    getJSON(`/api/p/${app.project}/log`, { path: s.log, offset: -4096 })
      .then((c) => { document.getElementById("span-log").textContent = c.text || "(the log is empty)"; })
      .catch((err) => { document.getElementById("span-log").textContent = err.message; });
  }
}

// ---- tokens and cost ----

function tokensPage(page) {
  app.render = () => {
    if (!app.overview) return;
    const rep = app.overview.report, usage = app.overview.usage;
    const roles = [...new Set([].concat(...Object.values(usage).map((u) => Object.keys(u)), rep.roles.map((r) => r.name)))].sort();
    const legend = '<div class="legend">' + roles.map((r) => `<span><i class="${barClass(r)}"></i>${esc(r)}</span>`).join("") + '<span><i class="budget-key"></i>red line: token budget</span></div>';
    page.innerHTML = `${tokensNote(rep)}<h2>Tokens per change, by role</h2>${legend}<div id="chart-tokens"></div>
      <h2>Cost per change, by role</h2><div id="chart-cost"></div>
      <h2>Run totals by role</h2><table id="roles"><thead><tr><th>role</th><th class="num">calls</th><th class="num">input</th><th class="num">output</th><th class="num">cache read</th><th class="num">cache write</th><th class="num">cost</th></tr></thead><tbody>` +
      rep.roles.map((r) => `<tr><td>${esc(r.name)}</td><td class="num">${r.calls}</td><td class="num">${fmtTokens(r.tokens.input)}</td><td class="num">${fmtTokens(r.tokens.output)}</td><td class="num">${fmtTokens(r.tokens.cacheRead || 0)}</td><td class="num">${fmtTokens(r.tokens.cacheWrite || 0)}</td><td class="num">${fmtCost(r.costUsd)}</td></tr>`).join("") +
      (rep.roles.length ? "" : `<tr><td colspan="7" class="muted">No model calls in this run${rep.changes.some(reportsNoTokens) ? ": " + noTokensText : ""}.</td></tr>`) +
      "</tbody></table>";
    const rows = rep.changes.map((c) => ({
      name: c.name, budget: c.tokens.budget, note: reportsNoTokens(c) ? noTokensText : "",
      parts: roles.map((r) => ({ role: r, tokens: tokensOf((usage[c.name] || {})[r] && usage[c.name][r].tokens), cost: ((usage[c.name] || {})[r] || {}).costUsd || 0 })),
    }));
    barChart(document.getElementById("chart-tokens"), rows, (p) => p.tokens, fmtTokens, true);
    barChart(document.getElementById("chart-cost"), rows, (p) => p.cost, fmtCost, false);
  };
  app.render();
}

function barClass(role) {
  return ["agent", "plan", "review", "verify"].includes(role) ? "bar-" + role : "bar-other";
}

// barChart draws one horizontal bar per row, stacked by role; withBudget
// marks each row's budget.
function barChart(box, rows, value, fmt, withBudget) {
  const L = 170, W = Math.max(500, (box.clientWidth || 800) - 20), BH = 18, G = 8;
  const total = (r) => r.parts.reduce((a, p) => a + value(p), 0);
  const maxV = Math.max(1e-9, ...rows.map((r) => Math.max(total(r), withBudget ? r.budget || 0 : 0)));
  const svg = el("svg", { width: W, height: rows.length * (BH + G) + 4 });
  const scale = (v) => (v / maxV) * (W - L - 80);
  rows.forEach((r, i) => {
    const y = i * (BH + G) + 2;
    svgText(svg, 4, y + 13, r.name, {});
    const parts = r.parts.filter((p) => value(p) > 0);
    if (r.note && !parts.length) {
      svgText(svg, L, y + 13, r.note, { class: "dim note" });
      return;
    }
    let x = L;
    for (const p of r.parts) {
      const w = scale(value(p));
      if (w <= 0) continue;
      const rect = el("rect", { class: barClass(p.role), x, y, width: w, height: BH }, svg);
      el("title", {}, rect).textContent = `${r.name} · ${p.role}: ${fmt(value(p))}`;
      x += w;
    }
    svgText(svg, x + 6, y + 13, fmt(total(r)), { class: "dim" });
    if (withBudget && r.budget) {
      const bx = L + scale(r.budget);
      el("line", { class: "budget", x1: bx, x2: bx, y1: y - 2, y2: y + BH + 2 }, svg);
    }
  });
  box.appendChild(svg);
}

// ---- sentinel ----

function sentinelPage(page) {
  fetched(page, `/api/p/${app.project}/sentinel`, (events) => {
    if (!events.length) {
      page.innerHTML = '<p class="muted">The sentinel has taken no action in this project\'s journal.</p>';
      return;
    }
    let h = '<table id="sentinel"><thead><tr><th>time</th><th>change</th><th>rule</th><th>action</th><th>step</th><th>details</th></tr></thead><tbody>';
    for (const e of events) {
      const d = Object.assign({}, e.data);
      const [rule, action, step] = [d.rule, d.action, d.step];
      delete d.rule; delete d.action; delete d.step;
      const rest = Object.keys(d).length ? `<pre>${esc(JSON.stringify(d, null, 2))}</pre>` : "";
      h += `<tr><td>${fmtTime(e.time)}</td><td>${e.change ? `<a data-change="${esc(e.change)}" href="${esc(hrefOf("change", e.change))}">${esc(e.change)}</a>` : "-"}</td>
        <td>${esc(fmtValue(rule))}</td><td>${esc(fmtValue(action))}</td><td>${esc(fmtValue(step))}</td><td>${rest}</td></tr>`;
    }
    page.innerHTML = h + "</tbody></table>";
  });
}

function fmtValue(v) {
  if (v == null) return "-";
  return typeof v === "object" ? JSON.stringify(v) : String(v);
}

// The pages' other files (loaded after this one, deferred) add theirs
// before the page starts.
document.addEventListener("DOMContentLoaded", start);
