// The Runs page, and which run the other pages show. Every run the
// project's journal keeps is listed; clicking one shows that run on every
// page: the run is part of the location (#/p/PROJECT/run/RUN/PAGE), so a
// link to it works. The journal's latest run is followed live over the
// stream; an earlier one has ended: its pages are read once, with no
// stream, and a banner says which run they show and leads back to the
// latest. Once the server stopped (the apply that served it ended), the
// page keeps what it shows and says so (streamStopped).
"use strict";

// showRun shows the run the location names: the latest, live, or an
// earlier one, read once.
function showRun() {
  if (app.stopped) return; // the server is gone: keep what is shown
  if (!app.run) {
    showBanner();
    connect();
    return;
  }
  if (app.stream) { app.stream.close(); app.stream = null; }
  clearTimeout(app.refreshTimer);
  setLive(false, "not live: an earlier run");
  document.getElementById("live").className = "live past";
  readRun(app.run);
}

// readRun reads the overview of the earlier run id, once. A link to the
// run that is the latest now shows it live.
async function readRun(id) {
  try {
    const [runs, o] = await Promise.all([getJSON(`/api/p/${app.project}/runs`), getJSON(`/api/p/${app.project}/overview`)]);
    if (app.run !== id) return;
    if (runs.latest === id) {
      const r = route();
      location.replace(hrefOf(r.page, r.arg, ""));
      return;
    }
    app.overview = o;
    showRunLine();
    showBanner();
    if (app.render) app.render();
  } catch (err) {
    if (app.run !== id) return;
    showBanner(`<span class="error">${esc(err.message)}</span> — <a id="back-to-latest">back to the latest run</a>`);
  }
}

// goRun shows page (with arg) of the run id ("" for the latest).
function goRun(id, page, arg) {
  location.hash = hrefOf(page, arg, id);
}

// latest shows the page shown, of the latest run.
function latest() {
  const r = route();
  goRun("", r.page, r.arg);
}

// showBanner shows html in the banner above the page; without html, what
// the page shows says it: the server stopped, or an earlier run is shown.
function showBanner(html) {
  const b = document.getElementById("banner");
  if (!html && app.stopped) {
    html = `<b>${esc(app.stopped)}</b>`;
    b.dataset.kind = "stopped";
  } else if (!html && app.run && app.overview) {
    const r = app.overview.report.run;
    const how = r.state === "finished" ? `finished ${fmtDay(r.lastEvent)}, ${r.result}` : `${r.state}, last event ${fmtDay(r.lastEvent)}`;
    html = `You are looking at run <b>${esc(r.id || app.run)}</b> (${esc(how)}), not the latest — <a id="back-to-latest">back to the latest run</a>`;
    b.dataset.kind = "earlier";
  } else {
    b.dataset.kind = html ? "error" : "";
  }
  b.hidden = !html;
  b.innerHTML = html || "";
  const back = document.getElementById("back-to-latest");
  if (back) back.addEventListener("click", latest);
}

// streamStopped handles the stream's last event: the server stopped (the
// run's apply ended). The page stops reconnecting, keeps what it shows
// and says why, and how to open the dashboard again; it offers no control.
function streamStopped(m) {
  app.stopped = JSON.parse(m.data).reason || "This dashboard stopped.";
  for (const s of [app.stream, app.logStream]) if (s) s.close();
  app.stream = app.logStream = null;
  clearTimeout(app.refreshTimer);
  app.refresh = null;
  setLive(false, "stopped");
  document.getElementById("live").className = "live past";
  showBanner();
  if (window.setctlControl) setctlControl.redraw();
}

// readLog shows the end of the log path of an earlier run in box, once.
async function readLog(box, path) {
  try {
    const chunk = await getJSON(`/api/p/${app.project}/log`, { path, offset: -65536 });
    box.textContent = (chunk.offset > 0 ? `… (${chunk.offset} bytes before)\n` : "") + chunk.text;
  } catch (err) {
    box.textContent = err.message;
  }
}

function fmtDay(t) {
  if (!t) return "-";
  const d = new Date(t);
  return d.toLocaleDateString([], { month: "short", day: "numeric" }) + " " + d.toLocaleTimeString([], { hour12: false });
}

// resultOf is how the Runs page says where a run ended.
function resultOf(s) {
  if (s.state === "running" || s.state === "starting") return "running";
  if (s.state === "not running") return "not running (stopped before its end)";
  return s.result || s.state;
}

function runsPage(page) {
  fetched(page, `/api/p/${app.project}/runs`, (v) => {
    if (!v.runs.length) { page.innerHTML = '<p class="muted">No run in this project yet: `setctl apply` starts one.</p>'; return; }
    const shown = app.run || v.latest;
    let h = `<p class="muted">Every run the project's journal (.set/events.jsonl) keeps, newest first; \`setctl runs\` lists the same. Click a run to see it on every page.</p>
      <table id="runs"><thead><tr><th>run</th><th>started</th><th class="num">duration</th><th>result</th><th class="num">changes merged</th><th class="num">tokens</th><th class="num">cost</th><th></th></tr></thead><tbody>`;
    for (const s of v.runs) {
      const none = !s.usage.calls;
      const why = "no model call journaled: exec agents report no tokens";
      h += `<tr class="link${s.id === shown ? " current" : ""}" data-run="${esc(s.id)}">
        <td><a>${esc(s.id)}</a>${s.id === v.latest ? ' <span class="muted">latest</span>' : ""}</td>
        <td>${esc(fmtDay(s.started))}</td><td class="num">${fmtMs(s.durationMs)}</td>
        <td class="result">${esc(resultOf(s))}</td>
        <td class="num">${s.merged} of ${s.changes}</td>
        <td class="num"${none ? ` title="${why}"` : ""}>${none ? '<span class="muted">not reported</span>' : fmtTokens(tokensOf(s.usage.tokens))}</td>
        <td class="num"${none ? ` title="${why}"` : ""}>${none ? '<span class="muted">not reported</span>' : fmtCost(s.usage.costUsd)}</td>
        <td><a data-open="timeline">timeline</a></td></tr>`;
    }
    page.innerHTML = h + "</tbody></table>";
    for (const tr of page.querySelectorAll("#runs tr[data-run]")) {
      tr.addEventListener("click", (ev) => {
        goRun(tr.dataset.run === v.latest ? "" : tr.dataset.run, ev.target.dataset.open || "overview");
      });
    }
  });
  // The stream's overview comes every RefreshInterval: the run that goes
  // lasts longer, events or none.
  const load = app.refresh;
  app.render = () => { if (!app.run && load) load(); };
}

morePages.runs = runsPage;
