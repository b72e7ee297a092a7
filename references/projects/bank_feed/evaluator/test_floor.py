"""Floor checks: the plain feed, its states, pagination and a phone-sized layout."""

from feedkit import (
    amount_box,
    browser,  # noqa: F401  (fixture)
    calls,
    click_key,
    day_records,
    days_in_order,
    has_key,
    mount,
    one_page,
    overflow_report,
    page,  # noqa: F401  (fixture)
    query_count,
    rec,
    release,
    right_to_left,
    row_ids,
    row_part,
    script_ran,
    scroll_to_end,
    settle,
    total,
    wait_for,
    wait_key,
    wait_rows,
)


def test_renders_valid_records(page):
    mount(page, one_page([
        rec("a", -100, "2024-03-03T10:00:00Z"),
        rec("b", 250, "2024-03-02T10:00:00Z"),
        rec("c", -75, "2024-03-01T10:00:00Z"),
    ]))
    wait_rows(page, ["a", "b", "c"])


def test_description_text(page):
    mount(page, one_page([rec("a", -100, "2024-03-01T10:00:00Z", "Corner Shop  #12")]))
    wait_rows(page, ["a"])
    assert row_part(page, "a", "row-description") == "Corner Shop  #12".strip()


def test_negative_amount_format(page):
    mount(page, one_page([rec("a", -123456, "2024-03-01T10:00:00Z")]))
    wait_rows(page, ["a"])
    assert row_part(page, "a", "row-amount") == "-1,234.56 EUR"


def test_small_positive_amount_format(page):
    mount(page, one_page([rec("a", 5, "2024-03-01T10:00:00Z")]))
    wait_rows(page, ["a"])
    assert row_part(page, "a", "row-amount") == "0.05 EUR"


def test_amount_as_digit_string(page):
    mount(page, one_page([rec("a", "-1999", "2024-03-01T10:00:00Z")]))
    wait_rows(page, ["a"])
    assert row_part(page, "a", "row-amount") == "-19.99 EUR"


def test_newest_first(page):
    mount(page, one_page([
        rec("mid", -1, "2024-03-02T09:00:00Z"),
        rec("old", -1, "2024-02-27T09:00:00Z"),
        rec("new", -1, "2024-03-05T09:00:00Z"),
        rec("later-same-day", -1, "2024-03-02T17:30:00Z"),
    ]))
    wait_rows(page, ["new", "later-same-day", "mid", "old"])


def test_time_in_display_offset(page):
    mount(page, one_page([rec("a", -1, "2024-03-01T23:30:00Z")]), displayOffsetMinutes=120)
    wait_rows(page, ["a"])
    assert row_part(page, "a", "row-time") == "01:30"


def test_time_from_zoned_timestamp(page):
    mount(page, one_page([rec("a", -1, "2024-03-01T10:15:00+02:00")]), displayOffsetMinutes=0)
    wait_rows(page, ["a"])
    assert row_part(page, "a", "row-time") == "08:15"


def test_grouped_by_day(page):
    mount(page, one_page([
        rec("a", -1, "2024-03-02T18:00:00Z"),
        rec("b", -1, "2024-03-02T08:00:00Z"),
        rec("c", -1, "2024-03-01T12:00:00Z"),
    ]))
    wait_rows(page, ["a", "b", "c"])
    assert days_in_order(page) == [["2024-03-02", ["a", "b"]], ["2024-03-01", ["c"]]]


def test_day_follows_offset_east(page):
    mount(page, one_page([
        rec("late", -1, "2024-03-01T23:30:00Z"),
        rec("early", -1, "2024-03-01T20:00:00Z"),
    ]), displayOffsetMinutes=60)
    wait_rows(page, ["late", "early"])
    assert days_in_order(page) == [["2024-03-02", ["late"]], ["2024-03-01", ["early"]]]


def test_day_follows_offset_west(page):
    mount(page, one_page([rec("a", -1, "2024-03-01T02:00:00Z")]), displayOffsetMinutes=-300)
    wait_rows(page, ["a"])
    assert days_in_order(page) == [["2024-02-29", ["a"]]]
    assert row_part(page, "a", "row-time") == "21:00"


def test_total_signed(page):
    mount(page, one_page([
        rec("a", -1250, "2024-03-03T10:00:00Z"),
        rec("b", 100000, "2024-03-02T10:00:00Z"),
        rec("c", -1, "2024-03-01T10:00:00Z"),
    ]))
    wait_rows(page, ["a", "b", "c"])
    assert total(page) == ["987.49 EUR", "98749"]


def test_total_negative(page):
    mount(page, one_page([
        rec("a", -500, "2024-03-03T10:00:00Z"),
        rec("b", "-250", "2024-03-02T10:00:00Z"),
    ]))
    wait_rows(page, ["a", "b"])
    assert total(page) == ["-7.50 EUR", "-750"]


def test_loading_state(page):
    mount(page, one_page([rec("a", -1, "2024-03-01T10:00:00Z")]), hold=[None])
    wait_key(page, "feed-loading")
    assert row_ids(page) == []
    assert not has_key(page, "feed-empty") and not has_key(page, "feed-error")
    release(page, None)
    wait_rows(page, ["a"])
    wait_for(page, "() => keyCount('feed-loading') === 0", what="feed-loading to go")


def test_first_request_uses_page_size(page):
    mount(page, one_page([rec("a", -1, "2024-03-01T10:00:00Z")]), pageSize=7)
    wait_rows(page, ["a"])
    assert calls(page) == [{"cursor": None, "limit": 7}]


def test_empty_state(page):
    mount(page, one_page([]))
    wait_key(page, "feed-empty")
    assert row_ids(page) == []
    assert not has_key(page, "feed-error") and not has_key(page, "feed-loading")


def test_initial_error_state(page):
    mount(page, one_page([rec("a", -1, "2024-03-01T10:00:00Z")]), fail={None: 1})
    wait_key(page, "feed-error")
    assert has_key(page, "feed-retry")
    assert not has_key(page, "feed-loading") and not has_key(page, "feed-empty")
    assert row_ids(page) == []


def test_retry_after_initial_error(page):
    mount(page, one_page([rec("a", -1, "2024-03-01T10:00:00Z")]), fail={None: 1})
    wait_key(page, "feed-retry")
    click_key(page, "feed-retry")
    wait_rows(page, ["a"])
    assert not has_key(page, "feed-error")


def test_retry_requests_first_page_again(page):
    mount(page, one_page([rec("a", -1, "2024-03-01T10:00:00Z")]), fail={None: 1})
    wait_key(page, "feed-retry")
    click_key(page, "feed-retry")
    wait_rows(page, ["a"])
    assert calls(page) == [{"cursor": None, "limit": 20}, {"cursor": None, "limit": 20}]


def two_pages(second: list, *, second_next: str | None = None) -> dict:
    return {
        None: {"records": day_records("p", 20, "2024-03-05"), "nextCursor": "p2"},
        "p2": {"records": second, "nextCursor": second_next},
    }


def test_next_page_on_scroll(page):
    mount(page, two_pages(day_records("q", 5, "2024-03-04")))
    wait_for(page, "() => rowCount() >= 20", what="the first page")
    scroll_to_end(page, 3)
    wait_for(page, "() => hasRow('q4')", what="the second page's rows after scrolling")
    assert calls(page)[:2] == [{"cursor": None, "limit": 20}, {"cursor": "p2", "limit": 20}]


def test_no_request_after_last_page(page):
    mount(page, one_page(day_records("p", 20), None))
    wait_for(page, "() => rowCount() === 20", what="the only page")
    scroll_to_end(page, 4)
    settle(page)
    assert calls(page) == [{"cursor": None, "limit": 20}]


def test_page_error_inline(page):
    mount(page, two_pages(day_records("q", 5, "2024-03-04")), fail={"p2": 1})
    wait_for(page, "() => rowCount() >= 20", what="the first page")
    scroll_to_end(page, 3)
    wait_key(page, "feed-page-error")
    assert has_key(page, "feed-page-retry")
    assert row_ids(page) == [f"p{i}" for i in range(20)]
    assert not has_key(page, "feed-error")


def test_page_retry_loads_page(page):
    mount(page, two_pages(day_records("q", 5, "2024-03-04")), fail={"p2": 1})
    wait_for(page, "() => rowCount() >= 20", what="the first page")
    scroll_to_end(page, 3)
    wait_key(page, "feed-page-retry")
    click_key(page, "feed-page-retry")
    wait_for(page, "() => hasRow('q4')", what="the retried page's rows")
    assert not has_key(page, "feed-page-error")
    assert calls(page)[-1] == {"cursor": "p2", "limit": 20}


def test_phone_no_horizontal_overflow(page):
    long_word = "Supercalifragilistic" * 20
    mount(page, one_page([
        rec("long", -4599, "2024-03-02T10:00:00Z", long_word),
        rec("words", -1, "2024-03-01T10:00:00Z", "A very long description " * 30),
    ]))
    wait_rows(page, ["long", "words"])
    report = overflow_report(page)
    assert report["scrollWidth"] <= report["width"], report
    assert report["bad"] == [], report
    assert row_part(page, "long", "row-description") == long_word


def test_large_amount_visible(page):
    mount(page, one_page([
        rec("big", "-99999999999999999999", "2024-03-01T10:00:00Z", "Payment " * 12),
    ]))
    wait_rows(page, ["big"])
    assert row_part(page, "big", "row-amount") == "-999,999,999,999,999,999.99 EUR"
    shown = amount_box(page, "big")
    assert shown is not None, "no row-amount in the row"
    assert shown["left"] >= 0 and shown["right"] <= shown["width"], shown
    assert not shown["clipped"], shown
    assert overflow_report(page)["bad"] == []


def test_emoji_and_rtl_text(page):
    emoji = "Café ☕️ 🎉 👨‍👩‍👧 🇪🇺"
    hebrew = "שלום עולם — קפה"
    arabic = "مرحبا بالعالم ١٢٣"
    mount(page, one_page([
        rec("emoji", -350, "2024-03-03T10:00:00Z", emoji),
        rec("he", -120, "2024-03-02T10:00:00Z", hebrew),
        rec("ar", -99, "2024-03-01T10:00:00Z", arabic),
    ]))
    wait_rows(page, ["emoji", "he", "ar"])
    assert row_part(page, "emoji", "row-description") == emoji
    assert row_part(page, "he", "row-description") == hebrew
    assert row_part(page, "ar", "row-description") == arabic
    assert right_to_left(page, ["emoji", "he", "ar"]) == [False, True, True]
    assert overflow_report(page)["bad"] == []


def test_description_is_text_not_markup(page):
    hostile = '<img src=x onerror="window.pwned=1"><b>bold</b>'
    mount(page, one_page([rec("x", -1, "2024-03-01T10:00:00Z", hostile)]))
    wait_rows(page, ["x"])
    settle(page)
    assert row_part(page, "x", "row-description") == hostile
    assert query_count(page, "img, b") == 0
    assert not script_ran(page)
