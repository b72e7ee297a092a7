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
  const status = document.getElementById("night-status");
  if (status) {
    const shown = doc.state === "stopped" ? "stopped" : "running";
    status.textContent = shown;
    status.className = `badge status-${shown}`;
  }
  const list = document.getElementById("progress-leaders");
  if (list) setLeaders(list, doc.leaders || []);
}

if (root) {
  setInterval(poll, 2000);
}
