// The match list: redrawn from the server every two seconds while matches are live.

async function refresh() {
  const response = await fetch("/", { headers: { Accept: "text/html" } });
  if (response.ok) {
    const doc = new DOMParser().parseFromString(await response.text(), "text/html");
    const fresh = doc.getElementById("index");
    const old = document.getElementById("index");
    if (fresh && old) old.replaceWith(document.adoptNode(fresh));
  }
  setTimeout(refresh, 2000);
}

if (document.getElementById("index")) setTimeout(refresh, 2000);
