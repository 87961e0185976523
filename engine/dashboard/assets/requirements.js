// The requirements page: every requirement of the spec and where it
// stands on main now, as `setctl plan` prints it under "Requirements:":
// implemented (by which change, in which commit, named by which tests),
// new, changed or removed (why not yet: the change at work on it), or
// uncovered (its change failed for good). It reads the project's spec
// and main as they are now, whatever run the page shows, and follows the
// latest run live: read again after every burst of events and with every
// overview the stream sends.
"use strict";

const requirementStatuses = ["implemented", "new", "changed", "removed", "uncovered"];

function requirementClass(status) {
  return { implemented: "s-done", new: "s-active", changed: "s-warn", removed: "s-queue", uncovered: "s-failed" }[status] || "s-pending";
}

function requirementsPage(page) {
  fetched(page, `/api/p/${app.project}/requirements`, (v) => {
    let h = "";
    if (app.run) h += `<p class="muted">Where the requirements stand on main now, not as run ${esc(app.run)} left them.</p>`;
    if (v.error) h += `<p class="error">${esc(v.error)}</p>`;
    const counts = requirementStatuses.filter((s) => v.counts[s]).map((s) => `${v.counts[s]} ${s}`).join(", ") || "none";
    h += `<div class="card" id="requirement-counts">Requirements: ${esc(counts)}</div>`;
    if (v.rows.length) {
      h += '<table id="requirements"><thead><tr><th>requirement</th><th>title</th><th>status</th><th>change</th><th>commit</th><th>tests that name it</th><th>where it stands</th></tr></thead><tbody>';
      for (const r of v.rows) {
        const inRun = app.overview && app.overview.report.changes.some((c) => c.name === r.change);
        const change = !r.change ? "-" : inRun ? `<a data-change="${esc(r.change)}">${esc(r.change)}</a>` : esc(r.change);
        h += `<tr data-req="${esc(r.id)}" data-status="${esc(r.status)}"><td>${esc(r.id)}</td><td>${esc(r.title)}</td>
          <td class="status"><span class="badge ${requirementClass(r.status)}">${esc(r.status)}</span></td>
          <td>${change}</td><td><code>${esc((r.commit || "").slice(0, 12)) || "-"}</code></td>
          <td>${(r.tests || []).map(esc).join("<br>") || '<span class="muted">none</span>'}</td>
          <td class="muted">${esc(r.detail)}</td></tr>`;
      }
      h += "</tbody></table>";
    }
    if (v.note) h += `<p class="level-warn">${esc(v.note)}</p>`;
    page.innerHTML = h;
    for (const a of page.querySelectorAll("#requirements a[data-change]")) {
      a.addEventListener("click", () => go("change", a.dataset.change));
    }
  });
  // The stream's overview comes every RefreshInterval: main may have
  // moved without an event of the run (the server caches by main's commit
  // and the spec's files, so this is cheap).
  const load = app.refresh;
  app.render = () => { if (!app.run && load) load(); };
}

morePages.requirements = requirementsPage;
