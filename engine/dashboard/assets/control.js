// The dashboard's controls (engine/dashboard/control.go): on the overview,
// start a run (the plan setctl plan prints first, then Apply), pause or
// resume every change, and stop the run; on each change's row, pause or
// resume it. Every request is a POST of JSON with the access token in its
// X-Setctl-Token header when the dashboard has one; a button is disabled
// while its request is pending, and the page shows the apply's answer.
// What the buttons offer follows the report (app.overview) and the
// control view (/api/p/{project}/control); they act on the latest run, so
// a page of an earlier run (app.run) offers none. The page keeps no state of a
// change of its own, but for the changes not started that it asked to
// hold (the report shows them pending).
"use strict";

window.setctlControl = (() => {
  const ctl = {
    project: null,
    view: null, // the control view of app.project
    pending: {}, // change ("" for the run) → action under way
    held: {}, // pending changes this page held
    message: "",
    confirmStop: false,
    error: false,
    plan: null, // the plan preview: {text, error}, or "loading"
    outputTimer: null,
    outputText: "", // the tail of that output, as last read
    outputOpen: null, // whether its box is open; null: while it runs
    drawn: "", // the bar's HTML as last drawn
  };
  // Statuses a pause applies to: at work, or not started (held).
  const pausable = new Set(["pending", "dispatched", "implementing", "verifying", "verify-failed", "integration-failed"]);

  function running() {
    return !!(ctl.view && ctl.view.running);
  }

  async function post(path, body) {
    const headers = { "Content-Type": "application/json" };
    if (ctl.view && ctl.view.token) headers["X-Setctl-Token"] = ctl.view.token;
    const r = await fetch(url(path), { method: "POST", headers, body: JSON.stringify(body || {}) });
    const text = (await r.text()).trim();
    if (!r.ok) throw new Error(text || String(r.status));
    return text ? JSON.parse(text) : null;
  }

  // load reads the control view of the project shown, and redraws.
  async function load() {
    const project = app.project;
    try {
      const v = await getJSON(`/api/p/${project}/control`);
      if (project !== app.project) return;
      if (ctl.project !== project) Object.assign(ctl, { project, pending: {}, held: {}, message: "", plan: null, outputText: "", outputOpen: null });
      ctl.view = v;
    } catch (err) {
      say(err.message, true);
    }
    draw();
    if (app.render && document.getElementById("page").dataset.page === "overview") app.render();
    watchOutput();
  }

  function say(text, error) {
    ctl.message = text;
    ctl.error = !!error;
  }

  // answered is what the page says of a CONTROL event.
  function answered(d) {
    const verb = { pause: "paused", resume: "resumed", stop: "stopping" }[d.action];
    if (d.action === "stop") return "the run stops as on Ctrl-C (asked by " + d.by + ")";
    let s = d.changes.length ? `${verb}: ${d.changes.join(", ")}` : `nothing to ${d.action}`;
    for (const [name, why] of Object.entries(d.skipped || {})) s += `; not ${verb}: ${name} (${why})`;
    return s;
  }

  async function request(action, change) {
    const key = change || "";
    if (ctl.pending[key]) return;
    ctl.pending[key] = action;
    say("");
    redraw();
    try {
      const d = await post(`/api/p/${app.project}/control`, { action, change });
      say(answered(d));
      for (const name of d.changes || []) {
        if (action === "pause" && !change) continue;
        if (action === "pause") ctl.held[name] = true;
        else delete ctl.held[name];
      }
      if (action === "resume" && !change) ctl.held = {};
    } catch (err) {
      say(err.message, true);
    } finally {
      delete ctl.pending[key];
      redraw();
    }
  }

  async function showPlan() {
    ctl.plan = "loading";
    say("");
    draw();
    try {
      ctl.plan = await post(`/api/p/${app.project}/plan`, {});
    } catch (err) {
      ctl.plan = { text: "", error: err.message };
    }
    draw();
  }

  async function apply() {
    ctl.pending[""] = "start";
    draw();
    try {
      const d = await post(`/api/p/${app.project}/start`, {});
      ctl.plan = null;
      say("setctl apply --yes started; its output follows");
      ctl.view = Object.assign({}, ctl.view, { starting: true, output: d.output, exit: "" });
    } catch (err) {
      say(err.message, true);
    } finally {
      delete ctl.pending[""];
      draw();
      watchOutput();
    }
  }

  // watchOutput shows the output of the apply this page started, and
  // follows it while it runs and the dashboard serves.
  function watchOutput() {
    clearTimeout(ctl.outputTimer);
    if (app.stopped) return;
    const box = document.getElementById("apply-output");
    if (!box || !ctl.view || !ctl.view.output) return;
    const path = ctl.view.output;
    getJSON(`/api/p/${app.project}/log`, { path, offset: -20000 }).then((chunk) => {
      ctl.outputText = chunk.text;
      const now = document.getElementById("apply-output");
      if (now) {
        now.textContent = chunk.text;
        now.scrollTop = now.scrollHeight;
      }
    }, () => {});
    if (ctl.view.starting) {
      ctl.outputTimer = setTimeout(async () => {
        if (app.stopped) return;
        try { ctl.view = await getJSON(`/api/p/${app.project}/control`); } catch (err) { /* the next update tries again */ }
        draw();
        watchOutput();
      }, 1000);
    }
  }

  function button(label, action, cls, disabled) {
    return `<button class="control ${cls || ""}" data-action="${action}" ${disabled ? "disabled" : ""}>${esc(label)}</button>`;
  }

  // draw draws the control bar of the overview.
  function draw() {
    const bar = document.getElementById("control");
    if (!bar) return;
    const onOverview = document.getElementById("page").dataset.page === "overview";
    // A stopped dashboard answers no request: it offers none.
    bar.hidden = !onOverview || !!app.stopped || (!ctl.view && !app.run);
    if (bar.hidden) return;
    const v = ctl.view, busy = ctl.pending[""];
    let h = "";
    if (app.run) {
      // An earlier run is shown: every control acts on the latest run,
      // which the banner above leads back to.
      h += `<span class="muted">Run ${esc(app.run)} is over: Start, Pause, Resume and Stop act on the latest run.</span>`;
    } else if (running()) {
      h += button(busy === "pause" ? "Pausing…" : "Pause all", "pause-all", "", busy);
      h += button(busy === "resume" ? "Resuming…" : "Resume all", "resume-all", "", busy);
      if (ctl.confirmStop) {
        h += ` <span class="confirm">Stop the run? Agents and gates are ended as on Ctrl-C; nothing is lost, and \`setctl apply\` continues it.</span> `;
        h += button("Stop now", "stop-now", "danger", busy);
        h += button("Keep running", "keep", "", busy);
      } else {
        h += button(busy === "stop" ? "Stopping…" : "Stop run", "stop", "danger", busy);
      }
    } else if (v.canStart) {
      const starting = v.starting || busy === "start";
      // Once the plan is shown, Apply starts the run.
      if (!ctl.plan) h += button(starting ? "Starting…" : "Start a run…", "preview", "primary", starting);
    } else {
      h += `<span class="muted">No setctl apply runs: \`setctl apply\` starts one.</span>`;
    }
    if (ctl.message) h += ` <span id="control-msg" class="${ctl.error ? "error" : "muted"}">${esc(ctl.message)}</span>`;
    if (ctl.plan === "loading") {
      h += `<div class="card"><p class="muted">Planning (setctl plan)…</p></div>`;
    } else if (ctl.plan) {
      h += `<div class="card" id="plan-card"><b>The plan setctl apply --yes will run</b> (as <code>setctl plan</code> prints it)
        <pre id="plan-preview">${esc(ctl.plan.text)}</pre>`;
      if (ctl.plan.error) h += `<p class="error">${esc(ctl.plan.error)}</p>`;
      h += button(busy === "start" ? "Applying…" : "Apply", "apply", "primary", busy || ctl.plan.error);
      h += button("Cancel", "cancel", "", busy);
      h += `</div>`;
    }
    if (!app.run && v.output) {
      const state = v.starting ? "runs" : `ended (${v.exit})`;
      // Open while it runs, and once it failed: its output is where the
      // page says why (a baseline main fails, a set.cue that does not load).
      const open = ctl.outputOpen === null ? v.starting || v.exit !== "exit status 0" : ctl.outputOpen;
      h += `<details class="card" id="apply-output-card" ${open ? "open" : ""}><summary>setctl apply --yes started from this page: ${esc(state)} · ${esc(v.output)}</summary>
        <pre id="apply-output">${esc(ctl.outputText)}</pre></details>`;
    }
    // The bar is drawn again at every overview the stream sends: only
    // what changed is replaced, so a click never lands on a button the
    // page is swapping out.
    if (h === ctl.drawn && bar.childElementCount) return;
    ctl.drawn = h;
    bar.innerHTML = h;
    const out = document.getElementById("apply-output");
    if (out) {
      out.scrollTop = out.scrollHeight;
      out.parentElement.addEventListener("toggle", (ev) => { ctl.outputOpen = ev.target.open; });
    }
    for (const b of bar.querySelectorAll("button.control")) {
      b.addEventListener("click", () => {
        switch (b.dataset.action) {
          case "pause-all": request("pause", ""); break;
          case "resume-all": request("resume", ""); break;
          case "stop": ctl.confirmStop = true; draw(); break;
          case "keep": ctl.confirmStop = false; draw(); break;
          case "stop-now": ctl.confirmStop = false; request("stop", ""); break;
          case "preview": showPlan(); break;
          case "apply": apply(); break;
          case "cancel": ctl.plan = null; draw(); break;
        }
      });
    }
  }

  // redraw draws the bar and the overview's rows again.
  function redraw() {
    draw();
    if (app.render && document.getElementById("page").dataset.page === "overview") app.render();
  }

  // rows adds a Pause or Resume button to each change's row of the
  // overview's table (app.js calls it once the table is drawn).
  function rows(page) {
    const head = page.querySelector("#changes thead tr");
    // An earlier run's changes are not the running apply's to pause.
    if (!head || !app.overview || app.run || app.stopped) return;
    head.insertAdjacentHTML("beforeend", "<th></th>");
    const byName = {};
    for (const c of app.overview.report.changes) byName[c.name] = c;
    for (const tr of page.querySelectorAll("#changes tbody tr[data-change]")) {
      const name = tr.dataset.change, c = byName[name];
      const td = document.createElement("td");
      td.className = "actions";
      tr.appendChild(td);
      if (!c || !running()) continue;
      const busy = ctl.pending[name];
      let action = "";
      if (c.status === "paused" || (c.status === "pending" && ctl.held[name])) action = "resume";
      else if (pausable.has(c.status)) action = "pause";
      if (!action) continue;
      const label = busy ? (busy === "pause" ? "Pausing…" : "Resuming…") : action === "pause" ? "Pause" : "Resume";
      td.innerHTML = `<button class="control" data-action="${action}" data-change="${esc(name)}" ${busy ? "disabled" : ""}>${label}</button>`;
      td.firstChild.addEventListener("click", (ev) => {
        ev.stopPropagation(); // the row's own click opens the change
        request(action, name);
      });
    }
  }

  window.addEventListener("hashchange", () => setTimeout(draw));
  return { update: load, rows, redraw };
})();
