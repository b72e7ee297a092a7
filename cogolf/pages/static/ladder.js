// The ladder's table: redrawn from the server every two seconds.

async function refresh() {
  try {
    const response = await fetch("/ladder", { headers: { Accept: "text/html" } });
    if (response.ok) {
      const doc = new DOMParser().parseFromString(await response.text(), "text/html");
      const fresh = doc.getElementById("ladder-table");
      const old = document.getElementById("ladder-table");
      if (fresh && old) old.replaceWith(document.adoptNode(fresh));
    }
  } finally {
    setTimeout(refresh, 2000);
  }
}

if (document.getElementById("ladder-table")) setTimeout(refresh, 2000);
