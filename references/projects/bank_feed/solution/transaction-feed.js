// <transaction-feed>: the reference implementation of the contract in prompt.md.
import { KEYS, formatMinor, rowKey } from "./feed-contract.js";

const CHUNK = 100; // rows built per step while scrolling (lazy construction)
const NEAR_END_PX = 300;
const STAMP =
  /^(\d{4})-(\d{2})-(\d{2})T(\d{2}):(\d{2})(?::(\d{2})(?:\.(\d{1,9}))?)?(Z|([+-])(\d{2}):(\d{2}))$/;

const STYLE = `
transaction-feed { display: flex; flex-direction: column; min-height: 0; overflow: hidden;
  font: 15px/1.35 system-ui, sans-serif; box-sizing: border-box; }
transaction-feed .tf-head { display: flex; flex-wrap: wrap; gap: 4px 12px; padding: 8px 12px;
  border-bottom: 1px solid #ddd; }
transaction-feed [data-key="feed-total"] { font-weight: 600; white-space: nowrap; }
transaction-feed [data-key="feed-list"] { flex: 1 1 auto; min-height: 0; overflow-y: auto;
  overflow-x: hidden; }
transaction-feed [data-key="feed-day"] { padding: 6px 12px; background: #f3f3f3; font-weight: 600; }
transaction-feed .tf-row { display: flex; flex-wrap: wrap; align-items: baseline;
  gap: 2px 8px; padding: 8px 12px; border-bottom: 1px solid #eee; }
transaction-feed [data-key="row-description"] { flex: 1 1 12em; min-width: 0;
  overflow-wrap: anywhere; }
transaction-feed [data-key="row-amount"] { margin-left: auto; white-space: nowrap; }
transaction-feed [data-key="row-time"] { color: #666; white-space: nowrap; }
transaction-feed .tf-status { padding: 12px; overflow-wrap: anywhere; }
`;

function installStyle() {
  if (document.getElementById("transaction-feed-style")) return;
  const style = document.createElement("style");
  style.id = "transaction-feed-style";
  style.textContent = STYLE;
  document.head.append(style);
}

function daysIn(year, month) {
  return new Date(Date.UTC(year, month, 0)).getUTCDate();
}

/** Milliseconds since the epoch, or null when the text is not a real zoned date-time. */
function parseStamp(text) {
  if (typeof text !== "string") return null;
  const m = STAMP.exec(text);
  if (!m) return null;
  const [y, mo, d, h, mi] = [1, 2, 3, 4, 5].map((i) => Number(m[i]));
  const s = m[6] === undefined ? 0 : Number(m[6]);
  const ms = m[7] === undefined ? 0 : Number(m[7].slice(0, 3).padEnd(3, "0"));
  if (mo < 1 || mo > 12 || d < 1 || d > daysIn(y, mo) || h > 23 || mi > 59 || s > 59) return null;
  let offset = 0;
  if (m[8] !== "Z") {
    const oh = Number(m[10]);
    const om = Number(m[11]);
    if (oh > 23 || om > 59) return null;
    offset = (m[9] === "-" ? -1 : 1) * (oh * 60 + om);
  }
  const utc = new Date(0);
  utc.setUTCFullYear(y, mo - 1, d);
  utc.setUTCHours(h, mi, s, ms);
  return utc.getTime() - offset * 60000;
}

function parseAmount(value) {
  if (typeof value === "number") return Number.isSafeInteger(value) ? BigInt(value) : null;
  if (typeof value === "string" && /^-?\d+$/.test(value)) return BigInt(value);
  return null;
}

function two(n) {
  return String(n).padStart(2, "0");
}

export class TransactionFeed extends HTMLElement {
  #source;
  #currency;
  #offset;
  #pageSize;
  #generation = 0;
  #started = false;
  #byId = new Map();
  #sorted = [];
  #skipped = 0;
  #total = 0n;
  #nextCursor = null;
  #loadedFirst = false;
  #exhausted = false;
  #pending = false;
  #failed = false;
  #limit = CHUNK;
  #head;
  #list;
  #rows;
  #status;
  #checkQueued = false;
  #built = 0;
  #lastDay = null;

  constructor({ source = null, currency = "EUR", displayOffsetMinutes = 0, pageSize = 20 } = {}) {
    super();
    this.#source = source;
    this.#currency = currency;
    this.#offset = Number(displayOffsetMinutes) || 0;
    this.#pageSize = pageSize;
  }

  get source() { return this.#source; }
  set source(value) { this.#source = value; this.#restart(); }
  get currency() { return this.#currency; }
  set currency(value) { this.#currency = value; this.#restart(); }
  get pageSize() { return this.#pageSize; }
  set pageSize(value) { this.#pageSize = value; this.#restart(); }
  get displayOffsetMinutes() { return this.#offset; }
  set displayOffsetMinutes(value) {
    this.#offset = Number(value) || 0;
    if (this.#started) {
      this.#sorted.forEach((r) => this.#place(r));
      this.#render();
    }
  }

  connectedCallback() {
    if (this.#started) return;
    this.#started = true;
    installStyle();
    this.replaceChildren();
    this.#head = document.createElement("div");
    this.#head.className = "tf-head";
    this.#list = document.createElement("div");
    this.#list.dataset.key = KEYS.list;
    this.#rows = document.createElement("div");
    this.#status = document.createElement("div");
    this.#status.className = "tf-status";
    this.#list.append(this.#rows, this.#status);
    this.append(this.#head, this.#list);
    this.#list.addEventListener("scroll", () => this.#maybeMore(), { passive: true });
    this.#restart();
  }

  #restart() {
    if (!this.#started) return;
    this.#generation += 1;
    this.#byId = new Map();
    this.#sorted = [];
    this.#skipped = 0;
    this.#total = 0n;
    this.#nextCursor = null;
    this.#loadedFirst = false;
    this.#exhausted = false;
    this.#pending = false;
    this.#failed = false;
    this.#limit = CHUNK;
    this.#list.scrollTop = 0;
    this.#fetch();
  }

  async #fetch() {
    if (this.#pending || this.#exhausted || !this.#source) return;
    const generation = this.#generation;
    const cursor = this.#loadedFirst ? this.#nextCursor : null;
    this.#pending = true;
    this.#failed = false;
    this.#render();
    let page;
    try {
      page = await this.#source.fetchPage({ cursor, limit: this.#pageSize });
      if (!page || typeof page !== "object" || !Array.isArray(page.records)) {
        throw new Error("malformed page");
      }
    } catch {
      if (generation !== this.#generation) return;
      this.#pending = false;
      this.#failed = true;
      this.#render();
      return;
    }
    if (generation !== this.#generation) return;
    this.#pending = false;
    this.#loadedFirst = true;
    this.#nextCursor = typeof page.nextCursor === "string" ? page.nextCursor : null;
    this.#exhausted = this.#nextCursor === null;
    this.#ingest(page.records);
    this.#render();
  }

  #ingest(records) {
    let added = false;
    for (const raw of records) {
      const record = this.#validate(raw);
      if (record === null) {
        this.#skipped += 1;
      } else if (!this.#byId.has(record.id)) {
        this.#byId.set(record.id, record);
        this.#place(record);
        this.#sorted.push(record);
        this.#total += record.amount;
        added = true;
      }
    }
    if (added) {
      this.#sorted.sort((a, b) => b.ms - a.ms || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
    }
  }

  #validate(raw) {
    if (raw === null || typeof raw !== "object" || Array.isArray(raw)) return null;
    const { id, amount, currency, timestamp, description } = raw;
    if (typeof id !== "string" || id === "") return null;
    if (typeof description !== "string") return null;
    if (currency !== this.#currency) return null;
    const minor = parseAmount(amount);
    const ms = parseStamp(timestamp);
    if (minor === null || ms === null) return null;
    return { id, amount: minor, ms, description, day: "", time: "" };
  }

  #place(record) {
    const local = new Date(record.ms + this.#offset * 60000);
    record.day = `${String(local.getUTCFullYear()).padStart(4, "0")}-${two(local.getUTCMonth() + 1)}-${two(local.getUTCDate())}`;
    record.time = `${two(local.getUTCHours())}:${two(local.getUTCMinutes())}`;
  }

  #keyed(tag, key, text) {
    const el = document.createElement(tag);
    el.dataset.key = key;
    if (text !== undefined) el.textContent = text;
    return el;
  }

  #render() {
    const initial = !this.#loadedFirst;
    // header: total and skipped count, once something has loaded
    const head = [];
    if (!initial) {
      const total = this.#keyed("div", KEYS.total, formatMinor(this.#total, this.#currency));
      total.dataset.value = this.#total.toString();
      head.push(total);
    }
    if (this.#skipped > 0) head.push(this.#keyed("div", KEYS.skipped, `${this.#skipped} skipped`));
    this.#head.replaceChildren(...head);
    this.#head.hidden = head.length === 0;

    this.#rows.replaceChildren();
    this.#built = 0;
    this.#lastDay = null;
    this.#buildRows(Math.min(this.#limit, this.#sorted.length));

    const status = [];
    if (initial && this.#pending) {
      status.push(this.#keyed("div", KEYS.loading, "Loading…"));
    } else if (initial && this.#failed) {
      const box = this.#keyed("div", KEYS.error, "Could not load transactions. ");
      const retry = this.#keyed("button", KEYS.retry, "Retry");
      retry.type = "button";
      retry.addEventListener("click", () => this.#fetch());
      box.append(retry);
      status.push(box);
    } else if (this.#failed) {
      const box = this.#keyed("div", KEYS.pageError, "Could not load more transactions. ");
      const retry = this.#keyed("button", KEYS.pageRetry, "Retry");
      retry.type = "button";
      retry.addEventListener("click", () => this.#fetch());
      box.append(retry);
      status.push(box);
    } else if (this.#pending) {
      status.push(document.createTextNode("Loading more…"));
    } else if (this.#exhausted && this.#sorted.length === 0) {
      status.push(this.#keyed("div", KEYS.empty, "No transactions yet."));
    }
    this.#status.replaceChildren(...status);
    this.#queueCheck();
  }

  /** Append rows up to `count` (rows are built lazily, a chunk at a time). */
  #buildRows(count) {
    const rows = document.createDocumentFragment();
    for (const r of this.#sorted.slice(this.#built, count)) {
      if (r.day !== this.#lastDay) {
        this.#lastDay = r.day;
        const header = this.#keyed("div", KEYS.day, r.day);
        header.dataset.day = r.day;
        rows.append(header);
      }
      const row = this.#keyed("div", rowKey(r.id));
      row.className = "tf-row";
      const text = this.#keyed("span", KEYS.rowDescription, r.description);
      text.dir = "auto";
      row.append(
        text,
        this.#keyed("span", KEYS.rowAmount, formatMinor(r.amount, this.#currency)),
        this.#keyed("span", KEYS.rowTime, r.time),
      );
      rows.append(row);
    }
    this.#built = Math.max(this.#built, count);
    this.#rows.append(rows);
  }

  #queueCheck() {
    if (this.#checkQueued) return;
    this.#checkQueued = true;
    requestAnimationFrame(() => {
      this.#checkQueued = false;
      this.#maybeMore();
    });
  }

  /** Near the end of the list (or the list not filled): build more rows, else fetch more. */
  #maybeMore() {
    if (!this.#started || !this.isConnected) return;
    const list = this.#list;
    if (list.scrollHeight - list.scrollTop - list.clientHeight > NEAR_END_PX) return;
    if (this.#limit < this.#sorted.length) {
      this.#limit += CHUNK;
      this.#buildRows(Math.min(this.#limit, this.#sorted.length));
      this.#queueCheck();
    } else if (this.#loadedFirst && !this.#failed) {
      this.#fetch();
    }
  }
}

customElements.define("transaction-feed", TransactionFeed);
