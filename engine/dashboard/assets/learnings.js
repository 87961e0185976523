// The learnings page: what `setctl learn` proposes from every run the
// journal keeps (each proposal with its evidence: run, change, round and
// the failure's own line), and `setctl learn --report`: for each learning
// set.cue adopts, how often the failure it answers recurred before and
// after the run that adopted it, and the ones proposed for removal.
// Nothing here adopts or removes a learning: a person's commit of
// set.cue does. It reads every run, whatever run the page shows, and
// follows the journal live: read again after every burst of events.
"use strict";

// recurrence says how often a signature recurred in some runs, as
// `setctl learn --report` does.
function recurrence(r) {
  if (!r.episodes) return "none";
  const plural = (n, w) => `${n} ${w}${n === 1 ? "" : "s"}`;
  let s = `${plural(r.changes, "change")} in ${plural(r.runs, "run")}, ${r.retries} ${r.retries === 1 ? "retry" : "retries"}`;
  if (r.tokens) s += `, ${fmtTokens(r.tokens)} tokens`;
  return s;
}

// standingOf is where an adopted learning stands, in words and as a
// badge class.
function standingOf(s, expireAfter) {
  if (!s.measured) return ["not measured", "s-pending", "it names no signature: it is enforced, not measured"];
  if (s.remove) return ["remove?", "s-warn", s.remove];
  if (!s.adopted) return ["not adopted yet", "s-queue", "no kept run enforced it yet"];
  return ["kept", "s-done", `its failure recurred within the last ${expireAfter} runs, or it was adopted fewer runs ago`];
}

function learningsPage(page) {
  fetched(page, `/api/p/${app.project}/learnings`, (v) => {
    let h = "";
    if (app.run) h += `<p class="muted">The learnings of every run the journal keeps, not of run ${esc(app.run)} alone.</p>`;
    if (v.error) h += `<p class="error">${esc(v.error)}</p>`;

    h += `<h2>Adopted learnings</h2><p class="muted">How often the failure each learning of set.cue answers recurred before and after the run that adopted it (the first run that enforced it); \`setctl learn --report\` says the same. A learning whose failure has not recurred in ${v.expireAfter} runs since (project.learn.expireAfter), or never matched, is proposed for removal: remove it from set.cue by a commit.</p>`;
    if (!v.report.length) {
      h += '<p class="muted" id="no-adopted">set.cue adopts no learning yet.</p>';
    } else {
      h += '<table id="adopted"><thead><tr><th>learning</th><th>kind</th><th>adopted in</th><th>before</th><th>after</th><th class="num">runs since</th><th class="num">quiet runs</th><th>standing</th></tr></thead><tbody>';
      for (const s of v.report) {
        const [word, cls, why] = standingOf(s, v.expireAfter);
        const measured = s.measured
          ? `<td>${esc(s.adopted || "not yet")}</td><td class="before">${esc(recurrence(s.before))}</td><td class="after">${esc(recurrence(s.after))}</td>
            <td class="num">${s.adopted ? s.runsSince : "-"}</td><td class="num">${s.adopted ? s.quiet : "-"}</td>`
          : '<td colspan="5" class="muted">no signature: enforced, not measured</td>';
        h += `<tr data-learning="${esc(s.name)}" data-standing="${esc(word)}"><td><b>${esc(s.name)}</b>${s.signature ? `<br><code class="muted">${esc(s.signature)}</code>` : ""}</td>
          <td>${esc(s.kind)}</td>${measured}
          <td class="standing" title="${esc(why)}"><span class="badge ${cls}">${esc(word)}</span>${s.remove ? `<br><span class="muted">${esc(s.remove)}</span>` : ""}</td></tr>`;
      }
      h += "</tbody></table>";
      const gone = v.report.filter((s) => s.remove);
      if (gone.length) {
        h += `<div class="card" id="removals"><b>Proposed for removal</b> (a commit deletes each from learnings.cue or set.cue, or turns off one a profile gives with enabled: false):<ul>${gone.map((s) => `<li><b>${esc(s.name)}</b>: ${esc(s.remove)}</li>`).join("")}</ul></div>`;
      }
    }

    h += `<h2>Proposed learnings</h2><p class="muted">Failures seen in at least ${v.threshold} changes or runs (project.learn.threshold) that no learning answers yet, as \`setctl learn\` proposes them; \`setctl learn --write\` adds them to learnings.cue, for you to read, edit and commit.</p>`;
    if (!v.proposals.length) {
      h += '<p class="muted" id="no-proposals">Nothing to propose: no failure recurred that often.</p>';
    } else {
      h += '<table id="proposals"><thead><tr><th>learning</th><th>kind</th><th>text</th><th>seen in</th><th>evidence</th></tr></thead><tbody>';
      for (const p of v.proposals) {
        const evidence = p.evidence.map((e) => `${esc(e.run)} ${esc(e.change)}${e.round ? ` round ${e.round}` : ""}${e.line ? `: <code>${esc(e.line)}</code>` : ""}`).join("<br>");
        h += `<tr data-proposal="${esc(p.name)}"><td><b>${esc(p.name)}</b><br><code class="muted">${esc(p.signature)}</code></td><td>${esc(p.kind)}</td>
          <td>${esc(p.text)}</td><td>${p.changes} change${p.changes === 1 ? "" : "s"}, ${p.runs} run${p.runs === 1 ? "" : "s"}</td><td class="evidence">${evidence}</td></tr>`;
      }
      h += "</tbody></table>";
    }
    page.innerHTML = h;
  });
}

morePages.learnings = learningsPage;
