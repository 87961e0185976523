// The dashboard's post-mortem views (loaded after app.js, whose helpers
// it uses): the activity timeline drawn with labelled spans, each
// change's rounds as bands and a zoom to one change; a change's verify
// rounds and integration attempts, each with its gates, its verdict,
// what went back to the agent and its diff; links to a change's commit
// and pull request; and what a change's tokens mean when its agent
// reports none.
"use strict";

// ---- measuring text ----

let measureSvg = null;

// textWidth is the width, in pixels, of text drawn in an SVG with attrs
// (a class, a font-size) under the page's style sheet.
function textWidth(text, attrs) {
  if (!measureSvg) {
    measureSvg = el("svg", { width: 0, height: 0, class: "measure", "aria-hidden": "true" });
    document.body.appendChild(measureSvg);
  }
  const t = svgText(measureSvg, 0, 0, text, attrs);
  const w = t.getComputedTextLength();
  t.remove();
  return w;
}

// ---- links ----

// commitLink links a change's commit on main: its page on the forge when
// the project has one (links.commitUrl), else the change's page of the
// run shown, where its diff is.
function commitLink(name, links) {
  if (!links || !links.commit) return "";
  const href = links.commitUrl || hrefOf("change", name);
  const ext = links.commitUrl ? ' target="_blank" rel="noopener"' : "";
  return `<a class="commit-link" data-change="${esc(name)}" href="${esc(href)}"${ext} title="${esc(links.commit)}">${esc(short(links.commit))}</a>`;
}

// prLink links a change's pull request, on the forge.
function prLink(number, href) {
  if (!number) return "";
  return href ? `<a class="pr-link" href="${esc(href)}" target="_blank" rel="noopener">#${number}</a>` : `<span class="pr-link">#${number}</span>`;
}

// changeLinks is a change's commit and pull request, for the overview.
function changeLinks(name) {
  const l = app.overview && app.overview.links && app.overview.links[name];
  if (!l) return "";
  return ` ${commitLink(name, l)}${l.pullRequest ? " " + prLink(l.pullRequest, l.pullRequestUrl) : ""}`;
}

// ---- tokens ----

const noTokensText = "exec agents report no tokens";

// reportsNoTokens says whether a change's token count says nothing of its
// work: its agent ran and no model call of it was journaled (c.calls is
// 0: an exec agent, a replay without usage, reports none).
function reportsNoTokens(c) {
  return !!c.agent && !c.calls;
}

// tokensCell is a change's tokens against its budget, or why it has none.
function tokensCell(c) {
  if (reportsNoTokens(c)) return `<span class="muted no-tokens">${noTokensText}</span>`;
  const bar = c.tokens.budget ? `<progress max="${c.tokens.budget}" value="${Math.min(c.tokens.used, c.tokens.budget)}"></progress> ` : "";
  return bar + used(c.tokens, fmtTokens);
}

// tokensNote says, above the tokens page's charts, which changes' agents
// report no tokens ("" when every one does).
function tokensNote(rep) {
  const none = rep.changes.filter(reportsNoTokens).map((c) => c.name);
  if (!none.length) return "";
  const all = none.length === rep.changes.filter((c) => c.agent).length;
  return `<div class="card" id="no-tokens"><b>${noTokensText}.</b> ` +
    (all ? "No agent of this run reported its usage, so its tokens and cost count only the model calls set made itself (planning, reviews)."
      : `The agents of ${esc(none.join(", "))} reported no usage: their bars count only the model calls set made itself.`) + "</div>";
}

// ---- the timeline ----

// Span rows: the lanes of a change's row, under the band lane.
const spanLanes = { agent: 0, gate: 1, llm: 2, queue: 3, integrate: 3, merge: 3 };

// spanText is what a span says, on it or in its tooltip.
function spanText(s) {
  return s.label + (s.result ? " · " + s.result : s.open ? " · running" : "");
}

// spanShort is a span's short label, for a span too narrow for its
// whole one: the gate or the iteration, and how it ended.
function spanShort(s) {
  const d = s.data || {};
  const end = s.result ? " " + s.result : "";
  if (s.kind === "gate" && d.gate) return d.gate + end;
  if (s.kind === "agent" && d.iteration) return "#" + d.iteration + end;
  return "";
}

// bandText is what a round's band says.
function bandText(b) {
  if (b.stage === "integration") return `integration ${b.attempt} · ${b.verdict}`;
  const its = b.iterations || [];
  return `round ${b.attempt}` + (its.length ? ` · iteration${its.length > 1 ? "s" : ""} ${its.join(", ")}` : "") + ` · ${b.verdict}`;
}

function verdictClass(v) {
  switch (v) {
    case "pass": case "merged": return "v-pass";
    case "running": case "in review": return "v-running";
    case "requeued": case "stopped": return "v-other";
  }
  return "v-fail";
}

// drawTimeline draws tl's spans on a time axis into box, one row per
// change (and one for the run's own spans): each change's rounds as bands
// behind its spans, a span's label on it where it fits and in its tooltip
// always. zoom, a change's name, narrows the axis to that change's time;
// a click on a row's name zooms to it (compact: one change's row, without
// names, as a change's page draws it). A click on a span shows its detail.
function drawTimeline(box, tl, compact, zoom) {
  box.innerHTML = "";
  if (!tl.spans.length) { box.innerHTML = '<p class="muted">Nothing has run yet.</p>'; return; }
  const bands = tl.bands || [];
  let start = Math.min(...tl.spans.map((s) => Date.parse(s.start)), tl.start ? Date.parse(tl.start) : Infinity);
  let end = Math.max(Date.parse(tl.end || 0), ...tl.spans.map((s) => Date.parse(s.end)), start + 1000);
  if (zoom) {
    const mine = tl.spans.filter((s) => s.change === zoom);
    if (mine.length) {
      start = Math.min(...mine.map((s) => Date.parse(s.start)));
      end = Math.max(...mine.map((s) => Date.parse(s.end)), start + 1000);
      const pad = (end - start) * 0.02;
      start -= pad; end += pad;
    }
  }
  const rows = tl.changes.slice();
  if (tl.spans.some((s) => !s.change)) rows.unshift("");
  const L = compact ? 10 : 170, W = Math.max(600, (box.clientWidth || 900) - 20);
  const BL = 16, LH = 18, RH = BL + 4 * LH + 6, top = 24;
  const svg = el("svg", { id: compact ? "change-timeline" : "timeline", width: W, height: top + rows.length * RH + 4, "data-zoom": zoom || "" });
  box.appendChild(svg);
  const plotW = W - L - 10;
  const x = (t) => L + ((Date.parse(t) - start) / (end - start)) * plotW;
  const clip = el("clipPath", { id: svg.id + "-clip" }, el("defs", {}, svg));
  el("rect", { x: L, y: 0, width: plotW, height: top + rows.length * RH }, clip);
  const ticks = 6;
  for (let i = 0; i <= ticks; i++) {
    const t = start + ((end - start) * i) / ticks;
    const tx = L + (plotW * i) / ticks;
    el("line", { class: "tick", x1: tx, x2: tx, y1: top - 6, y2: top + rows.length * RH }, svg);
    svgText(svg, tx, 12, new Date(t).toLocaleTimeString([], { hour12: false }), { class: "dim", "text-anchor": i === 0 ? "start" : i === ticks ? "end" : "middle" });
  }
  const plot = el("g", { "clip-path": `url(#${svg.id}-clip)` }, svg);
  rows.forEach((r, i) => {
    const y = top + i * RH;
    if (!compact) {
      const name = svgText(svg, 4, y + BL + 2 * LH, r || "(run)", { class: "row-name" + (r ? " zoomable" : "") + (r && r === zoom ? " zoomed" : ""), "data-change": r });
      if (r) {
        el("title", {}, name).textContent = r === zoom ? "the whole run" : `zoom to ${r}'s time`;
        name.addEventListener("click", () => go("timeline", r === zoom ? "" : r));
      }
    }
    el("line", { class: "tick", x1: L, x2: W - 10, y1: y + RH, y2: y + RH }, svg);
  });
  // Bands first: they lie behind the spans.
  for (const b of bands) {
    const row = rows.indexOf(b.change);
    if (row < 0) continue;
    const x1 = x(b.start), x2 = Math.max(x(b.end), x1 + 2), y = top + row * RH + 1;
    const g = el("g", { class: `band ${verdictClass(b.verdict)}`, "data-change": b.change, "data-stage": b.stage, "data-attempt": b.attempt }, plot);
    el("rect", { class: "band-bg", x: x1, y, width: x2 - x1, height: RH - 2, rx: 3 }, g);
    el("path", { class: "bracket", d: `M${x1 + 1},${y + BL - 3} V${y + 3} H${x2 - 1} V${y + BL - 3}` }, g);
    el("title", {}, g).textContent = bandText(b) + ` (${fmtMs(Date.parse(b.end) - Date.parse(b.start))})`;
    const text = bandText(b);
    if (textWidth(text, { class: "band-label" }) + 10 <= x2 - x1) svgText(g, x1 + 5, y + BL - 4, text, { class: "band-label" });
  }
  let selected = null;
  tl.spans.forEach((s) => {
    const row = rows.indexOf(s.change);
    if (row < 0 || Date.parse(s.end) < start || Date.parse(s.start) > end) return;
    const x1 = x(s.start), w = Math.max(s.kind === "merge" ? 3 : 2, x(s.end) - x1);
    const y = top + row * RH + BL + spanLanes[s.kind] * LH;
    const cls = `span k-${s.kind} r-${(s.result || "").split(" ")[0]}` + (s.open ? " open" : "");
    const g = el("g", { class: "span-g" }, plot);
    const r = el("rect", { class: cls, x: x1, y, width: w, height: LH - 3, rx: 2, "data-kind": s.kind, "data-change": s.change }, g);
    const text = spanText(s);
    el("title", {}, r).textContent = `${text} (${fmtMs(Date.parse(s.end) - Date.parse(s.start))})`;
    const vis = Math.min(x1 + w, L + plotW) - Math.max(x1, L);
    const fits = s.kind === "merge" ? "" : [text, spanShort(s)].find((l) => l && textWidth(l, { class: "span-label" }) + 8 <= vis);
    if (fits) {
      const t = svgText(g, Math.max(x1, L) + 4, y + LH - 7, fits, { class: "span-label" + (s.kind === "queue" ? " dark" : "") });
      t.addEventListener("click", () => r.dispatchEvent(new MouseEvent("click")));
    }
    r.addEventListener("click", () => {
      if (selected) selected.classList.remove("selected");
      selected = r;
      r.classList.add("selected");
      showSpan(box, s);
    });
  });
}

// zoomBar says which change the timeline is zoomed to, with the way
// back to the whole run.
function zoomBar(zoom) {
  if (!zoom) return '<p class="muted">Click a change\'s name to zoom to its time.</p>';
  return `<p id="zoom-bar">Zoomed to <b>${esc(zoom)}</b>. <button id="zoom-out">whole run</button> <button id="zoom-change">open ${esc(zoom)}</button></p>`;
}

function wireZoomBar(zoom) {
  const out = document.getElementById("zoom-out");
  if (out) out.addEventListener("click", () => go("timeline"));
  const ch = document.getElementById("zoom-change");
  if (ch) ch.addEventListener("click", () => go("change", zoom));
}

// ---- a change's rounds ----

// roundsSection is a change's verify rounds and integration attempts:
// each with its gates' verdicts (gates are the change's VERIFY_GATE
// events, whose index names a gate's output row), its verdict, what
// went back to the agent, and its diff. Retry contexts of no round
// follow them.
function roundsSection(v, gates) {
  let h = "<h2>Verify rounds and integration attempts</h2>";
  const rounds = v.rounds || [];
  if (!rounds.length) return h + '<p class="muted">No gate has judged it yet.</p>' + otherContexts(v, rounds);
  h += '<div id="gates">';
  for (const r of rounds) {
    const title = r.stage === "verify" ? `Verify round ${r.attempt}` : `Integration attempt ${r.attempt}`;
    const its = r.iterations || [];
    const after = its.length ? ` <span class="muted">after iteration${its.length > 1 ? "s" : ""} ${its.join(", ")}</span>` : "";
    const hasDiff = r.from && r.to && r.from !== r.to;
    const diff = hasDiff ? `<button class="diff-link" data-stage="${esc(r.stage)}" data-round="${r.attempt}">diff ${esc(short(r.from))}..${esc(short(r.to))}</button>` : "";
    h += `<section class="round ${verdictClass(r.verdict)}" data-stage="${esc(r.stage)}" data-attempt="${r.attempt}" data-verdict="${esc(r.verdict)}">
      <h3>${title}${after} <span class="verdict ${verdictClass(r.verdict)}">${esc(r.verdict)}</span>
      <span class="muted">${fmtTime(r.start)} – ${fmtTime(r.end)} · ${fmtMs(Date.parse(r.end) - Date.parse(r.start))}</span>
      ${diff} ${r.verdict === "merged" ? commitLink(v.change.name, v.links) : ""} ${prLink(r.pullRequest, r.pullRequestUrl || (r.pullRequest === v.links.pullRequest ? v.links.pullRequestUrl : ""))}</h3>`;
    if (r.gates.length) {
      h += '<table class="round-gates"><thead><tr><th>time</th><th>gate</th><th>result</th><th class="num">took</th><th>reason</th><th>output</th></tr></thead><tbody>';
      for (const e of r.gates) {
        const d = e.data, i = gates.findIndex((g) => g.seq === e.seq);
        h += `<tr data-gate="${esc(d.gate)}"><td>${fmtTime(e.time)}</td><td>${esc(d.gate)}${d.mode && d.mode !== "run" ? ` <span class="muted">(${esc(d.mode)})</span>` : ""}</td>
          <td class="level-${levelOf(e)}">${esc(d.result)}</td><td class="num">${fmtMs(d.durationMs)}</td><td>${esc(d.reason || "")}</td>
          <td>${d.log ? `<button data-gate-log="${i}">${esc(d.log.split("/").pop())}</button>` : "-"}</td></tr>
          <tr hidden data-gate-out="${i}"><td colspan="6"><pre></pre></td></tr>`;
      }
      h += "</tbody></table>";
    } else {
      h += '<p class="muted">No gate judged it.</p>';
    }
    if (r.failure) {
      h += `<p class="level-warn">${esc(describe(r.failure))}</p>`;
      if (r.failure.data.retryContext && !(r.handback && r.handback.data.retryContext === r.failure.data.retryContext)) {
        h += `<pre class="context">${esc(r.failure.data.retryContext)}</pre>`;
      }
    }
    if (r.handback) {
      const d = r.handback.data;
      h += `<div class="handback"><b>Handed back to the agent</b> at ${fmtTime(r.handback.time)}: ${esc(describe(r.handback))}${d.reason ? " (" + esc(d.reason) + ")" : ""}
        ${d.retryContext ? `<pre class="context">${esc(d.retryContext)}</pre>` : ""}</div>`;
    }
    h += '<div class="diff-view" hidden></div></section>';
  }
  return h + "</div>" + otherContexts(v, rounds);
}

// otherContexts are the retry contexts handed to the agent that belong to
// no round.
function otherContexts(v, rounds) {
  const inRound = new Set();
  for (const r of rounds) {
    if (r.handback) inRound.add(r.handback.seq);
    if (r.failure) inRound.add(r.failure.seq);
  }
  const rest = v.events.filter((e) => (e.type === "RETRY_SCHEDULED" || e.type === "CHANGE_INTEGRATION_FAILED") && e.data.retryContext && !inRound.has(e.seq));
  if (!rest.length) return "";
  return "<h2>Other retry contexts handed to the agent</h2>" +
    rest.map((e) => `<p>${fmtTime(e.time)} · ${esc(describe(e))}</p><pre class="context">${esc(e.data.retryContext)}</pre>`).join("");
}

// openDiffs are the rounds whose diff the page shows ("change/stage/
// round"): a change's page drawn again as events come keeps them open.
const openDiffs = new Set();

// wireRounds makes a change page's diff buttons show their round's diff,
// below the round; a click again hides it.
function wireRounds(page, name) {
  for (const b of page.querySelectorAll("button.diff-link")) {
    const key = `${name}/${b.dataset.stage}/${b.dataset.round}`;
    const section = b.closest("section.round");
    b.addEventListener("click", () => {
      if (openDiffs.has(key)) {
        openDiffs.delete(key);
        section.querySelector(".diff-view").hidden = true;
      } else {
        openDiffs.add(key);
        showDiff(section, name, b.dataset.stage, b.dataset.round);
      }
    });
    if (openDiffs.has(key)) showDiff(section, name, b.dataset.stage, b.dataset.round);
  }
}

async function showDiff(section, name, stage, round) {
  const box = section.querySelector(".diff-view");
  box.hidden = false;
  box.innerHTML = '<p class="muted">Reading the diff…</p>';
  try {
    const d = await getJSON(`/api/p/${app.project}/diff`, { change: name, round, stage });
    box.innerHTML = diffHTML(d);
  } catch (err) {
    box.innerHTML = `<p class="error">${esc(err.message)}</p>`;
  }
}

// diffHTML renders a Diff: the patch with its files' headers, hunks, and
// added and removed lines each marked and coloured.
function diffHTML(d) {
  const lines = d.text ? d.text.split("\n") : [];
  const files = lines.filter((l) => l.startsWith("diff --git ")).length;
  const added = lines.filter((l) => l.startsWith("+") && !l.startsWith("+++")).length;
  const removed = lines.filter((l) => l.startsWith("-") && !l.startsWith("---")).length;
  let h = `<p class="diff-summary">${esc(short(d.from))}..${esc(short(d.to))}: ${files} file${files === 1 ? "" : "s"}, <span class="add">+${added}</span> <span class="del">−${removed}</span>${d.truncated ? " (cut at 1 MiB)" : ""}</p>`;
  if (!lines.length) return h + '<p class="muted">No change of files.</p>';
  h += '<pre class="diff">';
  for (const l of lines) {
    let cls = "";
    if (l.startsWith("diff --git ")) cls = "file";
    else if (l.startsWith("+++") || l.startsWith("---") || l.startsWith("index ") || l.startsWith("new file") || l.startsWith("deleted file")) cls = "meta";
    else if (l.startsWith("@@")) cls = "hunk";
    else if (l.startsWith("+")) cls = "add";
    else if (l.startsWith("-")) cls = "del";
    h += `<span class="${cls}">${esc(l)}\n</span>`;
  }
  return h + "</pre>";
}

// ---- the graph ----

// nodeWidth is the width of the graph's boxes: 250 pixels, or more when
// a box's three steps (agent, verify, integration into main) need it, so
// that no label is cut.
function nodeWidth(nodes) {
  let w = 250;
  for (const n of nodes) {
    const steps = ["agent", n.verify, n.integration].map((l) => textWidth(l, {}) + 16);
    w = Math.max(w, 3 * Math.max(...steps) + 28);
  }
  return Math.ceil(w);
}
