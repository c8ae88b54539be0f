// Reading an experiment's exported rows (/outcomes, /conversions) page by page, each page's body
// streamed and split into lines, so memory stays flat however many rows there are. The service
// lists only final rows, and rows that become final later sort after them, so a page read again
// from the same URL starts with the same rows: a body that breaks off (a restart, a dropped
// connection) is read again, skipping the rows already yielded, and no row is repeated or
// skipped.

import { JoustError } from "./errors.js";
import type { Transport } from "./transport.js";

/** One exported row, fields as the API names them (see openapi.yaml's OutcomeExportRow). */
export type ExportRow = Record<string, unknown>;

export interface ExportOptions {
  /** Resume after an earlier export's `cursor`. */
  after?: string;
  /** Rows per page (1 to 1,000,000; the service's default is 100,000). */
  pageSize?: number;
  /** Reads of one page that may fail before the export gives up (default 10). */
  retries?: number;
  /** Wait before reading a broken page again, in ms (default 1000). */
  retryWaitMs?: number;
}

/** The URL of a `Link: <url>; rel="next"` header, if any. */
export function nextLink(header: string | null): string | undefined {
  if (header === null) return undefined;
  for (const part of header.split(",")) {
    const match = /^\s*<([^>]*)>\s*;(.*)$/.exec(part);
    if (match?.[2]?.includes('rel="next"')) return match[1];
  }
  return undefined;
}

/**
 * The rows of one export, oldest first in the service's apply order, each once. `cursor` is
 * the position after the last whole page read: pass it as `after` later for the rows recorded
 * since.
 */
export class ExportRows implements AsyncIterable<ExportRow> {
  cursor: string | undefined;
  private url: string | undefined;
  private readonly retries: number;
  private readonly retryWaitMs: number;

  constructor(
    private readonly transport: Transport,
    path: string,
    options: ExportOptions,
  ) {
    const query = new URLSearchParams({ format: "ndjson" });
    if (options.after !== undefined) query.set("after", options.after);
    if (options.pageSize !== undefined) query.set("limit", String(options.pageSize));
    this.url = `${path}?${query.toString()}`;
    this.cursor = options.after;
    this.retries = options.retries ?? 10;
    this.retryWaitMs = options.retryWaitMs ?? 1000;
  }

  async *[Symbol.asyncIterator](): AsyncGenerator<ExportRow> {
    while (this.url !== undefined) yield* this.page(this.url);
  }

  private async *page(url: string): AsyncGenerator<ExportRow> {
    let yielded = 0;
    for (let failures = 0; ; failures++) {
      let seen = 0;
      try {
        const response = await this.transport.stream(url, "application/x-ndjson");
        for await (const line of lines(response)) {
          seen += 1;
          if (seen > yielded) {
            yielded = seen;
            yield JSON.parse(line) as ExportRow;
          }
        }
        this.cursor = response.headers.get("joust-cursor") ?? this.cursor;
        this.url = nextLink(response.headers.get("link"));
        return;
      } catch (error) {
        const retryable =
          !(error instanceof JoustError) || error.status === 0 || error.status >= 500;
        if (!retryable || failures >= this.retries) throw error;
        await new Promise((resolve) => setTimeout(resolve, this.retryWaitMs));
      }
    }
  }
}

/** The non-empty lines of a streamed body; a body that ends mid-line is an error. */
async function* lines(response: Response): AsyncGenerator<string> {
  if (response.body === null) return;
  const decoder = new TextDecoder();
  let pending = "";
  for await (const chunk of response.body as unknown as AsyncIterable<Uint8Array>) {
    pending += decoder.decode(chunk, { stream: true });
    let end = pending.indexOf("\n");
    while (end >= 0) {
      const line = pending.slice(0, end);
      pending = pending.slice(end + 1);
      if (line !== "") yield line;
      end = pending.indexOf("\n");
    }
  }
  pending += decoder.decode();
  if (pending !== "") throw new Error("the export's body ended mid-line");
}
