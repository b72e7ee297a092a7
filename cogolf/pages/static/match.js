// A match page: step through holes with the keyboard or the timeline, and, while the
// match is live, redraw from the server whenever the spectators' feed says something
// happened. Every handler is attached here: the pages' policy forbids inline ones.

let current = 0;
let followLatest = true;

const root = () => document.getElementById("match");
const holes = () => Array.from(document.querySelectorAll("#match section.hole"));

function show(n, push) {
  const all = holes();
  if (all.length === 0) return;
  n = Math.max(1, Math.min(n, all.length));
  current = n;
  followLatest = n === all.length;
  for (const section of all) section.classList.toggle("current", Number(section.dataset.hole) === n);
  for (const tile of document.querySelectorAll("#match .tl")) {
    tile.classList.toggle("current", Number(tile.dataset.hole) === n);
  }
  if (push) {
    try { history.replaceState(null, "", "#hole-" + n); } catch { /* some file: pages refuse */ }
  }
}

function bind() {
  const el = root();
  if (!el) return;
  el.classList.add("stepping");
  for (const tile of el.querySelectorAll("a.tl")) {
    tile.addEventListener("click", (event) => {
      event.preventDefault();
      show(Number(tile.dataset.hole), true);
    });
  }
  // the links under a hole: the next hole is read from its top
  for (const link of el.querySelectorAll(".hole-nav a.step")) {
    link.addEventListener("click", (event) => {
      event.preventDefault();
      show(Number(link.dataset.hole), true);
      document.getElementById("hole-" + current)?.scrollIntoView({ block: "start" });
    });
  }
}

function start() {
  bind();
  const el = root();
  if (!el) return;
  const fromHash = /^#hole-(\d+)$/.exec(location.hash);
  const live = el.dataset.live === "1" && el.dataset.ended !== "1";
  show(fromHash ? Number(fromHash[1]) : live ? holes().length : 1, false);
  document.addEventListener("keydown", (event) => {
    if (event.altKey || event.ctrlKey || event.metaKey) return;
    if (event.key === "ArrowLeft") show(current - 1, true);
    else if (event.key === "ArrowRight") show(current + 1, true);
    else return;
    event.preventDefault();
  });
  if (live && el.dataset.poll === "1") follow();
  else if (live) watch(el.dataset.matchId);
}

// A match of a running league night is played on the night's own server: its page here
// is drawn from the journal as it grows, so it is fetched again until the match ends.
function follow() {
  const timer = setInterval(async () => {
    await redraw();
    const el = root();
    if (!el || el.dataset.ended === "1" || el.dataset.live !== "1") clearInterval(timer);
  }, 2000);
}

let pending = null;

async function redraw() {
  pending = null;
  const response = await fetch(location.pathname, { headers: { Accept: "text/html" } });
  if (!response.ok) return;
  const doc = new DOMParser().parseFromString(await response.text(), "text/html");
  const fresh = doc.getElementById("match");
  const old = root();
  if (!fresh || !old) return;
  const follow = followLatest;
  old.replaceWith(document.adoptNode(fresh));
  bind();
  show(follow ? holes().length : current, false);
  tick();
  document.title = doc.title || document.title;
}

function watch(matchId) {
  const scheme = location.protocol === "https:" ? "wss:" : "ws:";
  const socket = new WebSocket(scheme + "//" + location.host + "/matches/" + encodeURIComponent(matchId) + "/watch");
  let ended = false;
  // whatever happened between this page's rendering and the feed's start
  socket.addEventListener("open", () => { if (pending === null) pending = setTimeout(redraw, 50); });
  socket.addEventListener("message", (message) => {
    let doc;
    try { doc = JSON.parse(message.data); } catch { return; }
    if (doc.type === "done") ended = true;
    if (doc.type === "event" || doc.type === "done") {
      if (pending === null) pending = setTimeout(redraw, 50);
    }
  });
  socket.addEventListener("close", () => {
    if (!ended) setTimeout(() => { redraw(); watch(matchId); }, 2000);
  });
}

// An open hole's deadline, counted down each second (the server's clock, as the journal
// recorded the hole's start; a missed deadline is followed by a retry, then the fallback).
function tick() {
  for (const el of document.querySelectorAll("#match .countdown[data-deadline]")) {
    const left = Number(el.dataset.deadline) - Date.now() / 1000;
    el.textContent = left > 0 ? `${Math.ceil(left)} s to the deadline`
      : "deadline passed: a retry, then the fallback";
    el.classList.toggle("late", left <= 5);
  }
}

start();
tick();
setInterval(tick, 1000);
