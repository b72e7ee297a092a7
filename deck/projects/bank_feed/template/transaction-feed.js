// <transaction-feed>: a first pass. The constructor and properties are fixed (see prompt.md).
import { KEYS, formatMinor, rowKey } from "./feed-contract.js";

export class TransactionFeed extends HTMLElement {
  /**
   * @param {{ source?: import("./feed-contract.js").TransactionSource, currency?: string,
   *           displayOffsetMinutes?: number, pageSize?: number }} [options]
   */
  constructor({ source = null, currency = "EUR", displayOffsetMinutes = 0, pageSize = 20 } = {}) {
    super();
    this.source = source;
    this.currency = currency;
    this.displayOffsetMinutes = displayOffsetMinutes;
    this.pageSize = pageSize;
  }

  connectedCallback() {
    this.load();
  }

  async load() {
    this.innerHTML = `<div data-key="${KEYS.loading}">Loading…</div>`;
    const page = await this.source.fetchPage({ cursor: null, limit: this.pageSize });
    let total = 0;
    let html = `<div data-key="${KEYS.list}">`;
    for (const r of page.records) {
      total += Number(r.amount);
      html += `<div data-key="${rowKey(r.id)}">
        <span data-key="${KEYS.rowDescription}">${r.description}</span>
        <span data-key="${KEYS.rowAmount}">${formatMinor(BigInt(Math.trunc(Number(r.amount) || 0)), this.currency)}</span>
        <span data-key="${KEYS.rowTime}">${String(r.timestamp).slice(11, 16)}</span>
      </div>`;
    }
    html += "</div>";
    this.innerHTML =
      `<div data-key="${KEYS.total}" data-value="${total}">${formatMinor(BigInt(total), this.currency)}</div>` +
      html;
  }
}

customElements.define("transaction-feed", TransactionFeed);
