// The fixed contract of the transaction feed. Do not change this file.

/**
 * A data source hands out pages of untrusted records.
 *
 *   source.fetchPage({ cursor, limit }) -> Promise<{ records: unknown[], nextCursor: string | null }>
 *
 * `cursor` is null for the first page, then the `nextCursor` of the page before;
 * `limit` is the feed's page size. A null `nextCursor` means there are no more pages.
 * The promise may reject (a failed page) or take its time (a slow network).
 *
 * A usable record looks like
 *   { id: "txn-1", amount: -1250, currency: "EUR",
 *     timestamp: "2024-03-01T23:30:00Z", description: "Coffee" }
 * where `amount` is an integer count of minor units (cents), as a JSON number or a
 * string of digits with an optional leading "-".
 *
 * @typedef {{ cursor: string | null, limit: number }} PageRequest
 * @typedef {{ records: unknown[], nextCursor: string | null }} Page
 * @typedef {{ fetchPage(request: PageRequest): Promise<Page> }} TransactionSource
 */

/** The `data-key` attribute values the feed's elements must carry. */
export const KEYS = Object.freeze({
  loading: "feed-loading",
  empty: "feed-empty",
  error: "feed-error",
  retry: "feed-retry",
  list: "feed-list",
  day: "feed-day",
  total: "feed-total",
  skipped: "feed-skipped",
  pageError: "feed-page-error",
  pageRetry: "feed-page-retry",
  rowDescription: "row-description",
  rowAmount: "row-amount",
  rowTime: "row-time",
});

/** The key of a transaction's row: `txn-<id>`. */
export function rowKey(id) {
  return `txn-${id}`;
}

/**
 * Minor units as text: formatMinor(-123456n, "EUR") === "-1,234.56 EUR".
 * @param {bigint} minor
 * @param {string} currency
 */
export function formatMinor(minor, currency) {
  const negative = minor < 0n;
  const abs = negative ? -minor : minor;
  const whole = (abs / 100n).toString().replace(/\B(?=(\d{3})+(?!\d))/g, ",");
  const cents = (abs % 100n).toString().padStart(2, "0");
  return `${negative ? "-" : ""}${whole}.${cents} ${currency}`;
}
