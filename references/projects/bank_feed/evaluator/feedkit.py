"""The harness of the feed's evaluator: Debian's Chromium driven by Playwright.

The candidate's files are served from a made-up origin (http://bank-feed.test/) by
request interception, so no socket is opened; the evaluator's own directory is never
served. Each test gets a fresh browser context with a phone-sized viewport and a fake
data source (`makeSource`) whose pages, failures and held answers the test decides.
"""

from __future__ import annotations

import json
import os
import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from playwright.sync_api import Browser, Page, Route, sync_playwright

# Playwright's driver must not read the system's OpenSSL configuration (outside the walls).
os.environ.setdefault("OPENSSL_CONF", "/dev/null")

HERE = Path(__file__).resolve().parent
WORKSPACE = HERE.parent
ORIGIN = "http://bank-feed.test"
PHONE = {"width": 390, "height": 844}
WAIT_MS = 3000
CHROMIUM = os.environ.get("BANK_FEED_CHROMIUM", "/usr/bin/chromium")
ARGS = [
    "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
    "--disable-background-networking", "--disable-component-update", "--disable-sync",
]
TYPES = {".js": "text/javascript", ".mjs": "text/javascript", ".html": "text/html",
         ".css": "text/css", ".json": "application/json"}

HARNESS_JS = r"""
(() => {
  // Kept out of the candidate's reach: the calls a source saw live in a closure, and
  // the helpers the tests call cannot be replaced (the element shares this window).
  const seen = new WeakMap();
  const makeSource = (pages, opts) => {
    opts = opts || {};
    const failures = Object.assign({}, opts.fail || {});
    const holds = new Set(opts.hold || []);
    const waiting = new Map();
    const calls = [];
    const settle = (key) => new Promise((resolve, reject) => setTimeout(() => {
      if (failures[key] > 0) { failures[key] -= 1; reject(new Error("network down")); return; }
      if (!(key in pages)) { reject(new Error("no such page: " + key)); return; }
      resolve(structuredClone(pages[key]));
    }, opts.delay || 0));
    const src = {
      fetchPage(request) {
        const cursor = request ? request.cursor : undefined;
        calls.push({ cursor: cursor === undefined ? "<undefined>" : cursor,
                     limit: request ? request.limit : undefined });
        const key = cursor === null || cursor === undefined ? "" : String(cursor);
        if (holds.has(key)) {
          return new Promise((resolve, reject) => {
            const list = waiting.get(key) || [];
            list.push(() => settle(key).then(resolve, reject));
            waiting.set(key, list);
          });
        }
        return settle(key);
      },
    };
    seen.set(src, { calls, release(key) {
      holds.delete(key);
      const list = waiting.get(key) || [];
      waiting.delete(key);
      list.forEach((go) => go());
    } });
    return src;
  };
  const feedQuery = (sel) => [...document.querySelectorAll("transaction-feed " + sel)];
  const feedKey = (key) => feedQuery('[data-key="' + key + '"]');
  const helpers = {
    makeSource,
    feedQuery,
    feedKey,
    callsOf: (src) => structuredClone(seen.get(src).calls),
    release: (src, key) => seen.get(src).release(key),
    rowIds: () => feedQuery('[data-key^="txn-"]').map((e) => e.dataset.key.slice(4)),
    scrollFeedToEnd: () => {
      const list = feedKey("feed-list")[0];
      if (list) list.scrollTop = list.scrollHeight;
    },
  };
  for (const [name, value] of Object.entries(helpers)) {
    Object.defineProperty(window, name, { value, writable: false, configurable: false });
  }
})();
"""

PAGE_HTML = f"""<!doctype html>
<html><head><meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<style>html, body {{ margin: 0; height: 100%; }}
transaction-feed {{ display: block; height: 100%; }}</style>
<script>{HARNESS_JS}</script>
<script type="module">
import {{ TransactionFeed }} from "/transaction-feed.js";
window.TransactionFeed = TransactionFeed;
window.feedReady = true;
</script></head><body></body></html>"""


def _serve(route: Route) -> None:
    path = route.request.url[len(ORIGIN):].split("?", 1)[0].split("#", 1)[0]
    if path == "/__feed__.html":
        route.fulfill(status=200, body=PAGE_HTML, content_type="text/html; charset=utf-8")
        return
    target = (WORKSPACE / path.lstrip("/")).resolve()
    kind = TYPES.get(target.suffix)
    if (
        kind is None
        or not target.is_relative_to(WORKSPACE)
        or target.is_relative_to(HERE)
        or not target.is_file()
    ):
        route.fulfill(status=404, body="not found")
        return
    route.fulfill(status=200, body=target.read_bytes(), content_type=f"{kind}; charset=utf-8")


@pytest.fixture(scope="module")
def browser() -> Iterator[Browser]:
    profile = tempfile.mkdtemp(prefix="feed-browser-")
    try:
        with sync_playwright() as pw:
            browser = pw.chromium.launch(executable_path=CHROMIUM, args=ARGS, headless=True,
                                         env={**os.environ, "HOME": profile})
            yield browser
            browser.close()
    finally:
        shutil.rmtree(profile, ignore_errors=True)


@pytest.fixture
def page(browser: Browser) -> Iterator[Page]:
    context = browser.new_context(viewport=PHONE, device_scale_factor=1, locale="en-GB",
                                  timezone_id="UTC")
    context.route(f"{ORIGIN}/**", _serve)
    context.route(lambda url: not url.startswith(ORIGIN), lambda r: r.abort())
    page = context.new_page()
    page.set_default_timeout(WAIT_MS * 3)
    page.goto(f"{ORIGIN}/__feed__.html")
    page.wait_for_function("window.feedReady === true")
    yield page
    context.close()


# --- building and driving a feed ------------------------------------------------------


def rec(id: Any, amount: Any, timestamp: Any, description: Any = "Payment",
        currency: Any = "EUR") -> dict[str, Any]:
    return {"id": id, "amount": amount, "currency": currency, "timestamp": timestamp,
            "description": description}


def day_records(prefix: str, count: int, day: str = "2024-03-01",
                amount: int = -100) -> list[dict[str, Any]]:
    """`count` valid records on one day, newest first, one minute apart from 23:59."""
    out = []
    for i in range(count):
        minutes = 23 * 60 + 59 - i
        out.append(rec(f"{prefix}{i}", amount, f"{day}T{minutes // 60:02d}:{minutes % 60:02d}:00Z",
                       f"{prefix} item {i}"))
    return out


def mount(page: Page, pages: dict[str | None, dict[str, Any]], *, fail: dict[str, int] | None = None,
          hold: list[str | None] | None = None, **options: Any) -> None:
    """Create the feed with a fake source; `pages` maps cursors (None: the first) to pages."""
    keyed = {("" if k is None else k): v for k, v in pages.items()}
    opts = {"fail": {("" if k is None else k): n for k, n in (fail or {}).items()},
            "hold": ["" if k is None else k for k in (hold or [])]}
    ctor = {"currency": "EUR", "displayOffsetMinutes": 0, "pageSize": 20, **options}
    page.evaluate(
        """([pages, opts, ctor]) => {
          window.src = makeSource(pages, opts);
          window.feed = new TransactionFeed({ source: window.src, ...ctor });
          document.body.append(window.feed);
        }""",
        [keyed, opts, ctor],
    )


def one_page(records: list[Any], next_cursor: str | None = None) -> dict[str | None, Any]:
    return {None: {"records": records, "nextCursor": next_cursor}}


def wait_for(page: Page, expression: str, arg: Any = None, what: str = "", ms: int = WAIT_MS) -> None:
    """Wait until the JS `expression` (a function of `arg`) is truthy, else fail with `what`."""
    try:
        page.wait_for_function(expression, arg=arg, timeout=ms)
    except Exception as exc:  # Playwright's TimeoutError or a script error
        raise AssertionError(f"timed out waiting for {what or expression}: {exc}") from None


def wait_rows(page: Page, ids: list[str], what: str = "") -> None:
    wait_for(page, "(ids) => JSON.stringify(rowIds()) === JSON.stringify(ids)", ids,
             what or f"rows {ids}; have {row_ids(page)}")


def wait_key(page: Page, key: str) -> None:
    wait_for(page, "(k) => feedKey(k).length > 0", key, f"an element with data-key={key!r}")


def settle(page: Page, ms: int = 300) -> None:
    page.wait_for_timeout(ms)


def row_ids(page: Page) -> list[str]:
    return page.evaluate("rowIds()")


def has_key(page: Page, key: str) -> bool:
    return page.evaluate("(k) => feedKey(k).length > 0", key)


def key_text(page: Page, key: str) -> str:
    return page.evaluate("(k) => { const e = feedKey(k)[0]; return e ? e.textContent.trim() : null; }",
                         key)


def row_part(page: Page, id: str, part: str) -> str | None:
    return page.evaluate(
        """([id, part]) => {
          const row = feedKey("txn-" + id)[0];
          const el = row && row.querySelector('[data-key="' + part + '"]');
          return el ? el.textContent.trim() : null;
        }""",
        [id, part],
    )


def total(page: Page) -> tuple[str | None, str | None]:
    return page.evaluate(
        """() => { const e = feedKey("feed-total")[0];
                   return e ? [e.textContent.trim(), e.getAttribute("data-value")] : [null, null]; }"""
    )


def calls(page: Page) -> list[dict[str, Any]]:
    return page.evaluate("callsOf(src)")


def click_key(page: Page, key: str) -> None:
    page.locator(f'transaction-feed [data-key="{key}"]').first.click()


def scroll_to_end(page: Page, times: int = 1) -> None:
    for _ in range(times):
        page.evaluate("scrollFeedToEnd()")
        page.wait_for_timeout(120)


def days_in_order(page: Page) -> list[tuple[str, list[str]]]:
    """Each day header's data-day with the row ids that follow it in document order."""
    return page.evaluate(
        """() => {
          const out = [];
          for (const el of feedQuery('[data-key="feed-day"], [data-key^="txn-"]')) {
            if (el.dataset.key === "feed-day") out.push([el.getAttribute("data-day"), []]);
            else if (out.length) out[out.length - 1][1].push(el.dataset.key.slice(4));
            else out.push([null, [el.dataset.key.slice(4)]]);
          }
          return out;
        }"""
    )


def dumps(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False)
