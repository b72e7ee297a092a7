// A running night's page: polls the night's progress file and updates the bar and leaders,
// reloading once the night has finished so its standings show. Only text nodes are written.
const root = document.querySelector("article.night[data-progress]");

function setLeaders(list, leaders) {
  const items = leaders.map((r) => {
    const li = document.createElement("li");
    const name = document.createElement("span");
    name.className = "name";
    name.textContent = r.name;
    const pts = document.createElement("b");
    pts.textContent = String(r.points);
    const margin = document.createElement("span");
    margin.className = "muted";
    margin.textContent = `(${r.margin >= 0 ? "+" : ""}${r.margin})`;
    li.append(name, " ", pts, " pts ", margin);
    return li;
  });
  list.replaceChildren(...items);
}

async function poll() {
  const url = root.dataset.progress;
  let doc;
  try {
    const res = await fetch(url, { cache: "no-store" });
    if (!res.ok) return;
    doc = await res.json();
  } catch {
    return;
  }
  if (doc.state === "finished") {
    location.reload();
    return;
  }
  const bar = document.getElementById("progress-bar");
  if (bar) {
    bar.max = Math.max(doc.total, 1);
    bar.value = doc.done;
  }
  const text = document.getElementById("progress-text");
  if (text) {
    let line = `${doc.done} of ${doc.total} matches`;
    if (doc.void) line += `, ${doc.void} void`;
    if (doc.state === "solo") line += "; solo games now";
    text.textContent = line;
  }
  const updated = document.getElementById("progress-updated");
  if (updated) updated.textContent = doc.updated_at;
  const elapsed = document.getElementById("progress-elapsed");
  if (elapsed) elapsed.textContent = doc.elapsed;
  const eta = document.getElementById("progress-eta");
  if (eta) {
    eta.textContent = doc.eta ? `about ${doc.eta} left`
      : doc.state === "matches" ? "time left: known after the first match" : "";
  }
  const solo = document.getElementById("progress-solo");
  if (solo && doc.solo) {
    solo.hidden = false;
    document.getElementById("solo-done").textContent = String(doc.solo.done);
    document.getElementById("solo-total").textContent = String(doc.solo.total);
    document.getElementById("solo-left").textContent = String(doc.solo.total - doc.solo.done);
  }
  const playing = document.getElementById("progress-playing");
  const list = document.getElementById("playing-list");
  if (playing && list) {
    const ids = doc.playing || [];
    playing.hidden = ids.length === 0;
    list.replaceChildren(...ids.map((id) => {
      const li = document.createElement("li");
      const a = document.createElement("a");
      a.href = list.dataset.href + encodeURIComponent(id);
      const pill = document.createElement("span");
      pill.className = "pill live";
      pill.textContent = "live";
      a.append(pill, " ", id);
      li.append(a);
      return li;
    }));
  }
  const status = document.getElementById("night-status");
  if (status) {
    const shown = doc.state === "stopped" ? "stopped" : "running";
    status.textContent = shown;
    status.className = `badge status-${shown}`;
  }
  const leaders = document.getElementById("progress-leaders");
  if (leaders) setLeaders(leaders, doc.leaders || []);
}

if (root) {
  setInterval(poll, 2000);
}
