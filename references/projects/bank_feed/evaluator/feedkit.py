"""The harness of the feed's evaluator: Debian's Chromium driven by Playwright.

The candidate's files are served from a made-up origin (http://bank-feed.test/) by
request interception, so no socket is opened; the evaluator's own directory is never
served, and any request to another origin (by scheme, host and port; a URL with
user information is refused too) is aborted, besides the page's Content-Security-Policy
allowing its own origin only. Each test gets a fresh browser context with a
phone-sized viewport and a fake data source whose pages, failures and held answers
the test decides.

The candidate's script shares the page with the harness and may replace any global
(`JSON.stringify`, `querySelectorAll`, `Array.prototype.map`, a getter...). So the
harness's helpers come from an init script that runs before any script of the page
and keeps its own copies of every built-in it uses; they read the page with those
copies and answer with strings and numbers (lists and records as JSON text), which
the tests parse in Python; what they are given is one string too. Playwright's own
page-side helpers are made to start, and so take their copies, before the
candidate's module is imported.
"""

from __future__ import annotations

import json
import os
import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import pytest
from playwright.sync_api import Browser, BrowserContext, Page, Route, sync_playwright

# Playwright's driver must not read the system's OpenSSL configuration (outside the walls).
os.environ.setdefault("OPENSSL_CONF", "/dev/null")

HERE = Path(__file__).resolve().parent
WORKSPACE = HERE.parent
HOST = "bank-feed.test"
ORIGIN = f"http://{HOST}"
PHONE = {"width": 390, "height": 844}
WAIT_MS = 3000
CHROMIUM = os.environ.get("BANK_FEED_CHROMIUM", "/usr/bin/chromium")
ARGS = [
    "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
    "--disable-background-networking", "--disable-component-update", "--disable-sync",
]
TYPES = {".js": "text/javascript", ".mjs": "text/javascript", ".html": "text/html",
         ".css": "text/css", ".json": "application/json"}
CSP = ("default-src 'self'; script-src 'self' 'unsafe-inline' 'unsafe-eval'; "
       "style-src 'self' 'unsafe-inline'; img-src 'self' data: blob:; font-src 'self' data:; "
       "connect-src 'self'; object-src 'none'; frame-src 'none'; base-uri 'none'; "
       "form-action 'none'")

HARNESS_JS = r"""
(() => {
  "use strict";
  // Copies of every built-in the helpers use, taken before any script of the page.
  const W = window, doc = document, O = Object;
  const uncurry = Function.prototype.call.bind(Function.prototype.bind, Function.prototype.call);
  const own = O.getOwnPropertyDescriptor, define = O.defineProperty, create = O.create;
  const hasOwn = O.hasOwn, keys = O.keys, freeze = O.freeze;
  const getter = (proto, name) => uncurry(own(proto, name).get);
  const stringify = JSON.stringify, parse = JSON.parse, clone = W.structuredClone;
  const P = W.Promise, E = W.Error, construct = Reflect.construct, reflectSet = Reflect.set;
  const later = uncurry(W.setTimeout);
  const qsa = uncurry(Document.prototype.querySelectorAll);
  const qsaIn = uncurry(Element.prototype.querySelectorAll);
  const count = getter(NodeList.prototype, "length");
  const item = uncurry(NodeList.prototype.item);
  const attr = uncurry(Element.prototype.getAttribute);
  const text = getter(Node.prototype, "textContent");
  const trim = uncurry(String.prototype.trim);
  const slice = uncurry(String.prototype.slice);
  const matches = uncurry(Element.prototype.matches);
  const box = uncurry(Element.prototype.getBoundingClientRect);
  const left = getter(DOMRectReadOnly.prototype, "left");
  const right = getter(DOMRectReadOnly.prototype, "right");
  const clientWidth = getter(Element.prototype, "clientWidth");
  const scrollWidth = getter(Element.prototype, "scrollWidth");
  const scrollHeight = getter(Element.prototype, "scrollHeight");
  const setScrollTop = uncurry(own(Element.prototype, "scrollTop").set);
  const root = getter(Document.prototype, "documentElement");
  const body = getter(Document.prototype, "body");
  const append = uncurry(Element.prototype.append);
  const style = uncurry(W.getComputedStyle);
  const styleValue = uncurry(CSSStyleDeclaration.prototype.getPropertyValue);
  const click = uncurry(HTMLElement.prototype.click);

  // Lists with no prototype: nothing the page adds to Array.prototype reaches them.
  const list = () => { const l = create(null); l.n = 0; return l; };
  const add = (l, v) => { l[l.n] = v; l.n += 1; };
  const json = (l, each) => {
    let out = "[";
    for (let i = 0; i < l.n; i += 1) out += (i ? "," : "") + each(l[i]);
    return out + "]";
  };
  const str = (v) => stringify(v === undefined ? null : v);

  const state = create(null);  // the feed's class, the element, its current and first sources
  let ran = false;  // a page script set window.pwned (the markup test's payload)

  const makeSource = (pages, opts) => {
    const failures = create(null), holds = create(null), waiting = create(null);
    const fail = hasOwn(opts, "fail") ? opts.fail : {}, failKeys = keys(fail);
    for (let i = 0; i < failKeys.length; i += 1) failures[failKeys[i]] = fail[failKeys[i]];
    const hold = hasOwn(opts, "hold") ? opts.hold : [];
    for (let i = 0; i < hold.length; i += 1) holds[hold[i]] = true;
    const calls = list();
    const delay = hasOwn(opts, "delay") ? opts.delay : 0;
    const deliver = (key, resolve, reject) => later(W, () => {
      if (failures[key] > 0) { failures[key] -= 1; reject(new E("network down")); return; }
      if (!hasOwn(pages, key)) { reject(new E("no such page: " + key)); return; }
      resolve(clone(pages[key]));
    }, delay);
    const source = freeze({
      fetchPage(request) {
        const cursor = request ? request.cursor : undefined;
        const limit = request ? request.limit : undefined;
        add(calls, { cursor: cursor === undefined ? "<undefined>" : cursor, limit });
        const key = cursor === null || cursor === undefined ? "" : "" + cursor;
        return new P((resolve, reject) => {
          if (!holds[key]) { deliver(key, resolve, reject); return; }
          if (!waiting[key]) waiting[key] = list();
          add(waiting[key], () => deliver(key, resolve, reject));
        });
      },
    });
    return {
      source,
      calls,
      release(key) {
        holds[key] = false;
        const ready = waiting[key];
        waiting[key] = undefined;
        for (let i = 0; ready && i < ready.n; i += 1) ready[i]();
      },
    };
  };

  const feedQuery = (sel) => {
    const found = qsa(doc, "transaction-feed " + sel), out = list();
    for (let i = 0; i < count(found); i += 1) add(out, item(found, i));
    return out;
  };
  const first = (l) => (l.n ? l[0] : null);
  const feedKey = (key) => feedQuery('[data-key="' + key + '"]');
  const rowIds = () => {
    const rows = feedQuery('[data-key^="txn-"]'), out = list();
    for (let i = 0; i < rows.n; i += 1) add(out, slice(attr(rows[i], "data-key"), 4));
    return out;
  };
  const part = (id, key) => {
    const row = first(feedKey("txn-" + id));
    return row ? item(qsaIn(row, '[data-key="' + key + '"]'), 0) : null;
  };
  const read = (el) => (el ? trim(text(el)) : null);

  const helpers = {
    async loadFeed() {
      const module = await import("/transaction-feed.js");
      state.Feed = module.TransactionFeed;
      return typeof state.Feed === "function";
    },
    mountFeed(argsJson) {
      const args = parse(argsJson);
      state.current = makeSource(args[0], args[1]);
      const options = args[2];
      define(options, "source", { value: state.current.source, enumerable: true, writable: true,
                                  configurable: true });
      state.element = construct(state.Feed, [options]);
      append(body(doc), state.element);
      return true;
    },
    replaceSource(pagesJson) {
      state.first = state.current;
      state.current = makeSource(parse(pagesJson), {});
      return reflectSet(state.element, "source", state.current.source);
    },
    setFeed(argsJson) { const a = parse(argsJson); return reflectSet(state.element, a[0], a[1]); },
    releasePage(argsJson) { const a = parse(argsJson); state[a[0]].release(a[1]); return true; },
    callsJson: () => json(state.current.calls, (c) => '{"cursor":' + str(c.cursor) +
                                                      ',"limit":' + str(c.limit) + "}"),
    callCount: () => state.current.calls.n,
    rowIdsJson: () => json(rowIds(), str),
    rowCount: () => rowIds().n,
    hasRow(id) {
      const ids = rowIds();
      for (let i = 0; i < ids.n; i += 1) if (ids[i] === id) return true;
      return false;
    },
    rowsAre(idsJson) {
      const want = parse(idsJson), got = rowIds();
      if (got.n !== want.length) return false;
      for (let i = 0; i < got.n; i += 1) if (got[i] !== want[i]) return false;
      return true;
    },
    keyCount: (key) => feedKey(key).n,
    keyText: (key) => read(first(feedKey(key))),
    keyAttr(key, name) { const el = first(feedKey(key)); return el ? attr(el, name) : null; },
    rowPart(argsJson) { const a = parse(argsJson); return read(part(a[0], a[1])); },
    totalJson() {
      const el = first(feedKey("feed-total"));
      return el ? "[" + str(read(el)) + "," + str(attr(el, "data-value")) + "]" : "[null,null]";
    },
    daysJson() {
      const els = feedQuery('[data-key="feed-day"], [data-key^="txn-"]'), days = list();
      for (let i = 0; i < els.n; i += 1) {
        const key = attr(els[i], "data-key");
        if (key === "feed-day") add(days, { day: attr(els[i], "data-day"), ids: list() });
        else {
          if (!days.n) add(days, { day: null, ids: list() });
          add(days[days.n - 1].ids, slice(key, 4));
        }
      }
      return json(days, (d) => "[" + str(d.day) + "," + json(d.ids, str) + "]");
    },
    queryCount: (sel) => feedQuery(sel).n,
    overflowJson() {
      const w = clientWidth(root(doc)), bad = list();
      const els = feedQuery('[data-key^="txn-"], [data-key^="row-"], [data-key="feed-total"]');
      for (let i = 0; i < els.n; i += 1) {
        const r = box(els[i]);
        if (left(r) < -0.5 || right(r) > w + 0.5) {
          const key = attr(els[i], "data-key");
          add(bad, "[" + str(key) + "," + str(left(r)) + "," + str(right(r)) + "]");
        }
      }
      return '{"width":' + str(w) + ',"scrollWidth":' + str(scrollWidth(root(doc))) +
             ',"bad":' + json(bad, (b) => b) + "}";
    },
    amountBoxJson(id) {
      const el = part(id, "row-amount");
      if (!el) return "null";
      const r = box(el);
      // an inline box has no client width; a block one must not clip its text
      const clipped = styleValue(style(W, el), "display") !== "inline" &&
                      scrollWidth(el) > clientWidth(el) + 1;
      return '{"left":' + str(left(r)) + ',"right":' + str(right(r)) + ',"width":' +
             str(clientWidth(root(doc))) + ',"clipped":' + str(clipped) + "}";
    },
    rightToLeftJson(idsJson) {
      const ids = parse(idsJson), out = list();
      for (let i = 0; i < ids.length; i += 1) {
        const el = part(ids[i], "row-description");
        add(out, el ? matches(el, ":dir(rtl)") : null);
      }
      return json(out, str);
    },
    scrollFeedToEnd() {
      const el = first(feedKey("feed-list"));
      if (el) setScrollTop(el, scrollHeight(el));
      return true;
    },
    scrollFeedToTop() {
      const el = first(feedKey("feed-list"));
      if (el) setScrollTop(el, 0);
      return true;
    },
    clickTwice(key) {
      const el = first(feedKey(key));
      if (el) { click(el); click(el); }
      return !!el;
    },
    scriptRan: () => ran,
  };
  const names = keys(helpers);
  for (let i = 0; i < names.length; i += 1) {
    define(W, names[i], { value: helpers[names[i]], writable: false, configurable: false });
  }
  define(W, "pwned", { get: () => undefined, set: () => { ran = true; }, configurable: false });
})();
"""

PAGE_HTML = """<!doctype html>
<html><head><meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<style>html, body { margin: 0; height: 100%; }
transaction-feed { display: block; height: 100%; }</style>
</head><body></body></html>"""


def same_origin(url: str) -> bool:
    """Exactly http://bank-feed.test: no other scheme, host, port or user information."""
    try:
        parts = urlsplit(url)
        return parts.scheme == "http" and parts.netloc == HOST and parts.port is None
    except ValueError:
        return False


def _serve(route: Route) -> None:
    path = route.request.url[len(ORIGIN):].split("?", 1)[0].split("#", 1)[0]
    if path == "/__feed__.html":
        route.fulfill(status=200, body=PAGE_HTML, content_type="text/html; charset=utf-8",
                      headers={"Content-Security-Policy": CSP})
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


def _route(route: Route) -> None:
    if same_origin(route.request.url):
        _serve(route)
    else:
        route.abort()


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


def open_feed_page(browser: Browser) -> tuple[BrowserContext, Page]:
    """A fresh context on the feed's page, the harness installed and the candidate's
    module imported (after Playwright's page-side helpers have started)."""
    context = browser.new_context(viewport=PHONE, device_scale_factor=1, locale="en-GB",
                                  timezone_id="UTC")
    context.add_init_script(HARNESS_JS)
    context.route("**/*", _route)
    page = context.new_page()
    page.set_default_timeout(WAIT_MS * 3)
    page.goto(f"{ORIGIN}/__feed__.html")
    page.evaluate("() => 0")
    page.wait_for_function("() => true")
    if page.evaluate("() => loadFeed()") is not True:
        raise AssertionError("transaction-feed.js exports no TransactionFeed class")
    return context, page


@pytest.fixture
def page(browser: Browser) -> Iterator[Page]:
    context, page = open_feed_page(browser)
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


def _keyed(pages: dict[str | None, Any]) -> dict[str, Any]:
    return {("" if k is None else k): v for k, v in pages.items()}


def mount(page: Page, pages: dict[str | None, dict[str, Any]], *,
          fail: dict[str, int] | None = None, hold: list[str | None] | None = None,
          **options: Any) -> None:
    """Create the feed with a fake source; `pages` maps cursors (None: the first) to pages."""
    opts = {"fail": {("" if k is None else k): n for k, n in (fail or {}).items()},
            "hold": ["" if k is None else k for k in (hold or [])]}
    ctor = {"currency": "EUR", "displayOffsetMinutes": 0, "pageSize": 20, **options}
    page.evaluate("(a) => mountFeed(a)", dumps([_keyed(pages), opts, ctor]))


def replace_source(page: Page, pages: dict[str | None, Any]) -> None:
    """Give the feed a new source; the old one stays releasable as `first`."""
    page.evaluate("(p) => replaceSource(p)", dumps(_keyed(pages)))


def set_feed(page: Page, name: str, value: Any) -> None:
    page.evaluate("(a) => setFeed(a)", dumps([name, value]))


def release(page: Page, cursor: str | None, source: str = "current") -> None:
    """Let a held page of the current (or the first) source answer."""
    page.evaluate("(a) => releasePage(a)", dumps([source, "" if cursor is None else cursor]))


def one_page(records: list[Any], next_cursor: str | None = None) -> dict[str | None, Any]:
    return {None: {"records": records, "nextCursor": next_cursor}}


def wait_for(page: Page, expression: str, arg: Any = None, what: str = "",
             ms: int = WAIT_MS) -> None:
    """Wait until the JS `expression` (a function of `arg`, calling the harness's
    helpers only) is truthy, else fail with `what`; checked once more after the wait."""
    try:
        page.wait_for_function(expression, arg=arg, timeout=ms)
    except Exception as exc:  # Playwright's TimeoutError or a script error
        raise AssertionError(f"timed out waiting for {what or expression}: {exc}") from None
    if not page.evaluate(expression, arg):
        raise AssertionError(f"{what or expression} did not hold after the wait")


def wait_rows(page: Page, ids: list[str], what: str = "") -> None:
    wait_for(page, "(ids) => rowsAre(ids)", dumps(ids), what or f"rows {ids}; have {row_ids(page)}")


def wait_key(page: Page, key: str) -> None:
    wait_for(page, "(k) => keyCount(k) > 0", key, f"an element with data-key={key!r}")


def settle(page: Page, ms: int = 300) -> None:
    page.wait_for_timeout(ms)


def row_ids(page: Page) -> list[str]:
    return json.loads(page.evaluate("() => rowIdsJson()"))


def has_key(page: Page, key: str) -> bool:
    return page.evaluate("(k) => keyCount(k) > 0", key)


def key_text(page: Page, key: str) -> str | None:
    return page.evaluate("(k) => keyText(k)", key)


def row_part(page: Page, id: str, part: str) -> str | None:
    return page.evaluate("(a) => rowPart(a)", dumps([id, part]))


def total(page: Page) -> list[str | None]:
    return json.loads(page.evaluate("() => totalJson()"))


def calls(page: Page) -> list[dict[str, Any]]:
    return json.loads(page.evaluate("() => callsJson()"))


def query_count(page: Page, selector: str) -> int:
    return page.evaluate("(s) => queryCount(s)", selector)


def script_ran(page: Page) -> bool:
    """Whether a page script set window.pwned (which nothing can hide once set)."""
    return page.evaluate("() => scriptRan()")


def click_key(page: Page, key: str) -> None:
    page.locator(f'transaction-feed [data-key="{key}"]').first.click()


def click_twice(page: Page, key: str) -> None:
    assert page.evaluate("(k) => clickTwice(k)", key), f"no element with data-key={key!r}"


def scroll_to_end(page: Page, times: int = 1) -> None:
    for _ in range(times):
        page.evaluate("() => scrollFeedToEnd()")
        page.wait_for_timeout(120)


def scroll_to_top(page: Page) -> None:
    page.evaluate("() => scrollFeedToTop()")


def scroll_until_row(page: Page, id: str, seconds: float = 20) -> bool:
    """Scroll to the end again and again until row `id` is built (or time runs out)."""
    for _ in range(int(seconds / 0.04)):
        if page.evaluate("(id) => hasRow(id)", id):
            return True
        page.evaluate("() => scrollFeedToEnd()")
        page.wait_for_timeout(40)
    return False


def days_in_order(page: Page) -> list[list[Any]]:
    """Each day header's data-day with the row ids that follow it in document order."""
    return json.loads(page.evaluate("() => daysJson()"))


def overflow_report(page: Page) -> dict[str, Any]:
    return json.loads(page.evaluate("() => overflowJson()"))


def amount_box(page: Page, id: str) -> dict[str, Any] | None:
    return json.loads(page.evaluate("(id) => amountBoxJson(id)", id))


def right_to_left(page: Page, ids: list[str]) -> list[bool | None]:
    """Whether each row's description reads right to left (`:dir(rtl)`)."""
    return json.loads(page.evaluate("(ids) => rightToLeftJson(ids)", dumps(ids)))


def dumps(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False)
