"""Signal checks: untrusted records, pagination under failure, lazy rows, in-place updates."""

from datetime import UTC, datetime

from feedkit import (
    browser,  # noqa: F401  (fixture)
    calls,
    click_key,
    click_twice,
    day_records,
    days_in_order,
    has_key,
    key_text,
    mount,
    one_page,
    page,  # noqa: F401  (fixture)
    rec,
    release,
    replace_source,
    row_ids,
    row_part,
    scroll_to_end,
    scroll_to_top,
    scroll_until_row,
    set_feed,
    settle,
    total,
    wait_for,
    wait_key,
    wait_rows,
)

OK = rec("ok", -450, "2024-03-01T10:00:00Z", "Coffee")


def unusable() -> list:
    return [
        {"amount": -100, "currency": "EUR", "timestamp": "2024-03-01T09:00:00Z",
         "description": "no identity"},
        rec(42, -100, "2024-03-01T09:00:00Z"),
        rec("bad-amount", "12.50", "2024-03-01T09:00:00Z"),
        rec("no-time", -100, None),
        rec("", -100, "2024-03-01T09:00:00Z"),
    ]


def test_malformed_records_salvaged(page):
    mount(page, one_page([*unusable(), OK]))
    wait_for(page, "() => rowCount() > 0", what="any row")
    settle(page)
    assert row_ids(page) == ["ok"]
    assert total(page)[1] == "-450"


def test_skipped_count(page):
    mount(page, one_page([*unusable(), OK]))
    wait_key(page, "feed-skipped")
    assert key_text(page, "feed-skipped") == "5 skipped"


def test_wrong_currency_skipped(page):
    mount(page, one_page([rec("usd", -999, "2024-03-02T10:00:00Z", currency="USD"), OK,
                          rec("none", -1, "2024-03-02T11:00:00Z", currency=None)]))
    wait_rows(page, ["ok"])
    assert key_text(page, "feed-skipped") == "2 skipped"
    assert total(page) == ["-4.50 EUR", "-450"]


def test_non_integer_amounts_skipped(page):
    bad = [12.5, "12.50", "1e3", True, None, "", " 12", 2**53 + 2, "0x10", [1], {"v": 1}]
    mount(page, one_page([*(rec(f"b{i}", a, "2024-03-02T10:00:00Z") for i, a in enumerate(bad)),
                          OK, rec("zero", 0, "2024-02-29T10:00:00Z")]))
    wait_rows(page, ["ok", "zero"])
    assert key_text(page, "feed-skipped") == f"{len(bad)} skipped"


def test_bad_timestamps_skipped(page):
    bad = ["yesterday", "2024-02-30T10:00:00Z", "2023-02-29T10:00:00Z", "2024-03-01T10:00:00",
           "2024-03-01T24:00:00Z", "2024-13-01T10:00:00Z", "2024-03-01T10:61:00Z", 1709287200,
           "2024-03-01", "", None]
    mount(page, one_page([*(rec(f"t{i}", -1, ts) for i, ts in enumerate(bad)), OK,
                          rec("frac", -1, "2024-02-29T23:59:59.999+01:00")]))
    wait_rows(page, ["ok", "frac"])
    assert key_text(page, "feed-skipped") == f"{len(bad)} skipped"
    assert days_in_order(page)[-1] == ["2024-02-29", ["frac"]]


def test_non_object_records_skipped(page):
    mount(page, one_page([None, 42, "txn-1", [], ["ok"], OK, True]))
    wait_rows(page, ["ok"])
    assert key_text(page, "feed-skipped") == "6 skipped"


def test_duplicate_within_page(page):
    mount(page, one_page([
        rec("d", -100, "2024-03-02T10:00:00Z", "first"),
        OK,
        rec("d", -9999, "2024-03-03T10:00:00Z", "second"),
    ]))
    wait_rows(page, ["d", "ok"])
    settle(page)
    assert row_ids(page) == ["d", "ok"]
    assert row_part(page, "d", "row-description") == "first"
    assert total(page)[1] == "-550"
    assert not has_key(page, "feed-skipped")


def two_pages(first_extra: list, second: list, second_next: str | None = None) -> dict:
    return {
        None: {"records": [*day_records("p", 20, "2024-03-05"), *first_extra], "nextCursor": "p2"},
        "p2": {"records": second, "nextCursor": second_next},
    }


def load_second(page) -> None:
    wait_for(page, "() => rowCount() >= 20", what="the first page")
    scroll_to_end(page, 3)
    wait_for(page, "() => callCount() >= 2", what="the second page's request")


def test_duplicate_across_pages(page):
    mount(page, two_pages([], [rec("p3", -100, "2024-03-05T23:56:00Z", "again"),
                               rec("q", -7, "2024-03-04T10:00:00Z")]))
    load_second(page)
    wait_for(page, "() => hasRow('q')", what="the second page's rows")
    settle(page)
    ids = row_ids(page)
    assert ids.count("p3") == 1 and len(ids) == 21
    assert row_part(page, "p3", "row-description") == "p item 3"
    assert total(page)[1] == str(-100 * 20 - 7)


def test_cross_page_ordering(page):
    mount(page, two_pages([], [rec("newest", 5, "2024-03-06T08:00:00Z"),
                               rec("inside", 5, "2024-03-05T23:58:30Z"),
                               rec("older", 5, "2024-03-01T08:00:00Z")]))
    load_second(page)
    wait_for(page, "() => hasRow('older')", what="the second page's rows")
    ids = row_ids(page)
    assert ids[:4] == ["newest", "p0", "inside", "p1"] and ids[-1] == "older"
    days = [d for d, _ in days_in_order(page)]
    assert days == ["2024-03-06", "2024-03-05", "2024-03-01"]


def test_tie_break_by_id(page):
    mount(page, one_page([rec(i, -1, "2024-03-01T10:00:00Z") for i in ("b", "c", "a")]))
    wait_rows(page, ["a", "b", "c"])


def test_skipped_count_across_pages(page):
    mount(page, two_pages([None, rec("x", "1.5", "2024-03-01T10:00:00Z")],
                          [rec("y", 1, "bad"), 7, rec("z", 1, "2024-03-01T10:00:00Z", currency="GBP")]),
          hold=["p2"])
    wait_for(page, "() => rowCount() >= 20", what="the first page")
    wait_for(page, "() => keyCount('feed-skipped') > 0", what="feed-skipped")
    assert key_text(page, "feed-skipped") == "2 skipped"
    scroll_to_end(page, 3)
    release(page, "p2")
    wait_for(page, "() => keyText('feed-skipped') === '5 skipped'",
             what="5 skipped after the second page")


def test_no_duplicate_requests(page):
    mount(page, two_pages([], [rec("q", -1, "2024-03-04T10:00:00Z")]), hold=["p2"])
    load_second(page)
    scroll_to_end(page, 5)
    settle(page)
    assert len(calls(page)) == 2
    release(page, "p2")
    wait_for(page, "() => hasRow('q')", what="the held page's rows")
    scroll_to_top(page)
    scroll_to_end(page, 4)
    settle(page)
    assert calls(page) == [{"cursor": None, "limit": 20}, {"cursor": "p2", "limit": 20}]


def test_page_retry_once(page):
    mount(page, two_pages([], [rec("q", -1, "2024-03-04T10:00:00Z")]), fail={"p2": 1},
          hold=["p2"])
    load_second(page)
    release(page, "p2")
    wait_key(page, "feed-page-retry")
    click_twice(page, "feed-page-retry")
    wait_for(page, "() => hasRow('q')", what="the retried page's rows")
    settle(page)
    assert [c["cursor"] for c in calls(page)] == [None, "p2", "p2"]


def test_failed_page_waits_for_retry(page):
    mount(page, two_pages([], [rec("q", -1, "2024-03-04T10:00:00Z")]), fail={"p2": 5})
    load_second(page)
    wait_key(page, "feed-page-error")
    scroll_to_top(page)
    scroll_to_end(page, 4)
    settle(page)
    assert [c["cursor"] for c in calls(page)] == [None, "p2"]
    assert has_key(page, "feed-page-error")


def test_partial_failure_keeps_state(page):
    mount(page, two_pages([rec("bad", "x", "2024-03-01T10:00:00Z")],
                          [rec("q", -1000, "2024-03-04T10:00:00Z")]), fail={"p2": 1})
    load_second(page)
    wait_key(page, "feed-page-error")
    assert total(page) == ["-20.00 EUR", "-2000"]
    assert key_text(page, "feed-skipped") == "1 skipped"
    assert len(row_ids(page)) == 20
    click_key(page, "feed-page-retry")
    wait_for(page, "() => hasRow('q')", what="the retried page's rows")
    assert total(page) == ["-30.00 EUR", "-3000"]


def test_short_pages_keep_loading(page):
    mount(page, {
        None: {"records": [OK], "nextCursor": "p2"},
        "p2": {"records": [None, rec("bad", 1.5, "2024-03-01T10:00:00Z")], "nextCursor": "p3"},
        "p3": {"records": [rec("old", -1, "2024-02-01T10:00:00Z")], "nextCursor": None},
    })
    wait_rows(page, ["ok", "old"], "rows from pages that do not fill the screen")
    settle(page)
    assert [c["cursor"] for c in calls(page)] == [None, "p2", "p3"]


def years(count: int) -> list:
    out = []
    for i in range(count):
        day, minute = divmod(i, 3)
        ts = 1_709_251_200 - day * 86_400 - minute * 3600  # 2024-03-01 back in time
        stamp = datetime.fromtimestamp(ts, UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
        out.append(rec(f"h{i:04d}", -(i % 5000) - 1, stamp, f"History {i} " + "long text " * 8))
    return out


def test_lazy_rows(page):
    history = years(3000)  # about three years of history in one page
    mount(page, one_page(history))
    wait_for(page, "() => rowCount() > 0", what="the first rows", ms=10000)
    settle(page)
    assert len(row_ids(page)) <= 200, "all rows built at once"
    assert row_ids(page)[:2] == ["h0000", "h0001"]
    assert total(page)[1] == str(-sum((i % 5000) + 1 for i in range(3000)))
    assert scroll_until_row(page, "h2999"), "scrolling never built the oldest row"
    assert row_ids(page)[-1] == "h2999"


def test_total_exact_beyond_safe_integers(page):
    huge = "9007199254740993"
    mount(page, one_page([rec(f"h{i}", huge, f"2024-03-0{i + 1}T10:00:00Z") for i in range(3)]))
    wait_rows(page, ["h2", "h1", "h0"])
    assert total(page)[1] == str(3 * int(huge))
    assert row_part(page, "h0", "row-amount") == "90,071,992,547,409.93 EUR"


def test_display_offset_updates_in_place(page):
    mount(page, one_page([rec("a", -1, "2024-03-01T22:30:00Z"), rec("b", -1, "2024-03-01T10:00:00Z")]))
    wait_rows(page, ["a", "b"])
    set_feed(page, "displayOffsetMinutes", 180)
    wait_for(page, "() => keyAttr('feed-day', 'data-day') === '2024-03-02'",
             what="day groups in the new offset")
    assert days_in_order(page) == [["2024-03-02", ["a"]], ["2024-03-01", ["b"]]]
    assert row_part(page, "a", "row-time") == "01:30"
    assert len(calls(page)) == 1


def test_source_and_currency_changes_restart(page):
    mount(page, one_page([rec("a", -1, "2024-03-01T10:00:00Z"), None]))
    wait_rows(page, ["a"])
    replace_source(page, one_page([rec("n", 5, "2024-03-02T10:00:00Z", "new"),
                                   rec("u", 7, "2024-03-02T11:00:00Z", "usd", currency="USD")]))
    wait_rows(page, ["n"], "the new source's rows")
    assert key_text(page, "feed-skipped") == "1 skipped"
    assert total(page)[1] == "5"
    set_feed(page, "currency", "USD")
    wait_rows(page, ["u"], "rows in the new currency")
    assert total(page) == ["0.07 USD", "7"]
    assert [c["cursor"] for c in calls(page)] == [None, None]


def test_stale_response_ignored(page):
    mount(page, one_page([rec("stale", -1, "2024-03-01T10:00:00Z")]), hold=[None])
    wait_for(page, "() => callCount() === 1", what="the first request")
    replace_source(page, one_page([rec("fresh", 5, "2024-03-02T10:00:00Z", "x")]))
    wait_rows(page, ["fresh"])
    release(page, None, source="first")
    settle(page, 500)
    assert row_ids(page) == ["fresh"]
    assert total(page)[1] == "5"
