// A background buffer for outcomes and clicks. It never blocks the request path: `add*` only
// queues (or refuses when full). Outcomes go out in batches (POST /v1/outcomes/batch), clicks
// one request each with bounded concurrency. Delivery is at least once, to a service that
// records each duel exactly once: an item leaves the buffer only when the service has answered
// for it (recorded, duplicate, or refused for good), so a retry after a lost answer is safe.

import { backoffDelayMs, defaultBackoff, type BackoffOptions } from "./backoff.js";
import { clicksBody, outcomeBody } from "./bodies.js";
import type { Duel } from "./duel.js";
import { JoustError, UnavailableError, errorFromAnswer } from "./errors.js";
import type { Interleaving } from "./interleaving.js";
import { Queue } from "./queue.js";
import { Sleep, unrefInterval } from "./timers.js";
import type { Transport } from "./transport.js";
import type {
  BatchResult,
  ClickRecord,
  ClickSpec,
  ClicksInput,
  ItemError,
  OutcomeInput,
  OutcomeRecord,
  OutcomeSpec,
} from "./wire.js";

/** The most outcomes POST /v1/outcomes/batch takes. */
export const MAX_BATCH = 10_000;

export interface OutcomeBufferOptions {
  /** Items held at most (queued and in flight); beyond it `add*` returns false. Default 100,000. */
  maxPending?: number;
  /** Outcomes per batch request, at most 10,000. Default 1,000. */
  maxBatch?: number;
  /** How often queued outcomes are sent, in ms. Default 500. */
  flushIntervalMs?: number;
  /** Click requests in flight at most. Default 4. */
  clickConcurrency?: number;
  /** Waits between retries after 503s and lost connections. */
  backoff?: Partial<BackoffOptions>;
  /** Called for every item the service refused for good (a 4xx); it is then counted as rejected. */
  onError?: (error: JoustError, item: BufferedItem) => void;
}

export type BufferedItem =
  { kind: "outcome"; body: OutcomeInput } | { kind: "clicks"; body: ClicksInput };

export interface BufferStats {
  /** Items not yet answered for: queued or in flight. */
  pending: number;
  /** Items refused by `add*` because the buffer was full (or closed). */
  dropped: number;
  /** Items the service recorded. */
  recorded: number;
  /** Items the service had already recorded (a retry after a lost answer). */
  duplicates: number;
  /** Items the service refused for good (4xx); `onError` saw each. */
  rejected: number;
  /** Requests sent again after a 503, a 5xx or a lost connection. */
  retries: number;
}

export class OutcomeBuffer {
  private readonly transport: Transport;
  private readonly maxPending: number;
  private readonly clickConcurrency: number;
  private readonly backoff: BackoffOptions;
  private readonly onError: OutcomeBufferOptions["onError"];
  private batchSize: number;

  private readonly outcomes = new Queue<OutcomeInput>();
  private readonly clicks = new Queue<ClicksInput>();
  private clicksInFlight = 0;
  private readonly counts = { dropped: 0, recorded: 0, duplicates: 0, rejected: 0, retries: 0 };

  private outcomePump: Promise<void> | undefined;
  private readonly clickWorkers = new Set<Promise<void>>();
  private readonly sleeps = new Set<Sleep>();
  private readonly interval: ReturnType<typeof setInterval>;
  private closing = false;
  /** Set when close() runs out of time: the pumps stop at their next step. */
  private givenUp = false;

  /** Made by `JoustClient.outcomeBuffer()`, which hands it the client's connection settings. */
  constructor(transport: Transport, options: OutcomeBufferOptions = {}) {
    this.transport = transport;
    this.maxPending = options.maxPending ?? 100_000;
    this.batchSize = Math.max(1, Math.min(options.maxBatch ?? 1_000, MAX_BATCH));
    this.clickConcurrency = Math.max(1, options.clickConcurrency ?? 4);
    this.backoff = { ...defaultBackoff, ...options.backoff };
    this.onError = options.onError;
    // Unref'd: a buffer alone never keeps a process alive; close() is what waits for delivery.
    this.interval = unrefInterval(() => {
      void this.pumpOutcomes();
    }, options.flushIntervalMs ?? 500);
  }

  get pending(): number {
    return this.outcomes.size + this.clicks.size + this.clicksInFlight;
  }

  get dropped(): number {
    return this.counts.dropped;
  }

  get stats(): BufferStats {
    return { pending: this.pending, ...this.counts };
  }

  /**
   * Queues the duel's outcome. False when the buffer is full or closed (counted in `dropped`);
   * true, with nothing queued, for a duel that records nothing (fallback, concluded).
   */
  addOutcome(duel: Duel, outcome: OutcomeSpec): boolean {
    if (duel.token === null) return true;
    const body = outcomeBody(duel.token, outcome);
    if (!this.admit()) return false;
    this.outcomes.push(body);
    if (this.outcomes.size >= this.batchSize) void this.pumpOutcomes();
    return true;
  }

  /** Queues the clicks on a shown list; as addOutcome for full, closed and no-op cases. */
  addClicks(shown: Interleaving, clicks: ClickSpec): boolean {
    if (shown.token === null) return true;
    const body = clicksBody(shown.token, clicks);
    if (!this.admit()) return false;
    this.clicks.push(body);
    this.startClickWorkers();
    return true;
  }

  /** Sends everything queued now; resolves once nothing is pending (it waits out outages). */
  async flush(): Promise<void> {
    while (this.pending > 0 && !this.givenUp) {
      this.startClickWorkers();
      await Promise.all([this.pumpOutcomes(), ...this.clickWorkers]);
    }
  }

  /**
   * Stops taking items and delivers what is pending, retrying through outages. Without a
   * timeout it waits until every item is answered for; with one it gives up after it and the
   * items still pending are lost (see `stats.pending`).
   */
  async close(options: { timeoutMs?: number } = {}): Promise<BufferStats> {
    this.closing = true;
    clearInterval(this.interval);
    // From now on waits between retries keep the process alive: the caller is waiting on them.
    for (const sleep of this.sleeps) sleep.keepAlive();
    const flushed = this.flush();
    if (options.timeoutMs === undefined) {
      await flushed;
    } else {
      const limit = new Sleep(options.timeoutMs, true);
      await Promise.race([flushed, limit.done]);
      limit.cutShort();
      if (this.pending > 0) {
        this.givenUp = true;
        for (const sleep of this.sleeps) sleep.cutShort();
      }
    }
    return this.stats;
  }

  private admit(): boolean {
    if (this.closing || this.pending >= this.maxPending) {
      this.counts.dropped++;
      return false;
    }
    return true;
  }

  // --- Outcomes: one batch request at a time --------------------------------------------------

  private pumpOutcomes(): Promise<void> {
    this.outcomePump ??= this.sendOutcomes().finally(() => {
      this.outcomePump = undefined;
    });
    return this.outcomePump;
  }

  private async sendOutcomes(): Promise<void> {
    let attempt = 0;
    while (this.outcomes.size > 0 && !this.givenUp) {
      const batch = this.outcomes.peek(this.batchSize);
      let result: BatchResult;
      try {
        const answer = await this.transport.request("POST", "/v1/outcomes/batch", {
          body: { outcomes: batch },
        });
        result = answer.body as BatchResult;
      } catch (error) {
        const failure = asJoustError(error);
        if (failure.retryable) {
          await this.waitToRetry(attempt++, failure);
        } else if (failure.status === 413 && batch.length > 1) {
          // Too large a body for the service: smaller batches from now on.
          this.batchSize = Math.max(1, Math.floor(batch.length / 2));
        } else {
          // The whole batch was refused for good (a key without the scope, say).
          this.outcomes.drop(batch.length);
          for (const body of batch) this.reject(failure, { kind: "outcome", body });
        }
        continue;
      }
      this.outcomes.drop(batch.length);
      let retryLater = 0;
      batch.forEach((body, index) => {
        const itemResult = result.results[index];
        if (itemResult === undefined || isItemError(itemResult)) {
          const failure = itemResult === undefined ? missingResult() : itemErrorOf(itemResult);
          if (failure.retryable) {
            this.outcomes.push(body);
            retryLater++;
          } else {
            this.reject(failure, { kind: "outcome", body });
          }
        } else {
          this.count(itemResult);
        }
      });
      if (retryLater > 0) await this.waitToRetry(attempt++, undefined);
      else attempt = 0;
    }
  }

  // --- Clicks: one request each, a few at a time ----------------------------------------------

  private startClickWorkers(): void {
    while (this.clickWorkers.size < this.clickConcurrency && this.clicks.size > 0) {
      const worker: Promise<void> = this.sendClicks().finally(() => {
        this.clickWorkers.delete(worker);
      });
      this.clickWorkers.add(worker);
    }
  }

  private async sendClicks(): Promise<void> {
    while (!this.givenUp) {
      const body = this.clicks.shift();
      if (body === undefined) return;
      this.clicksInFlight++;
      try {
        await this.deliverClicks(body);
      } finally {
        this.clicksInFlight--;
      }
    }
  }

  private async deliverClicks(body: ClicksInput): Promise<void> {
    for (let attempt = 0; ; attempt++) {
      if (this.givenUp) {
        this.clicks.push(body); // still pending: counted, not delivered
        return;
      }
      try {
        const answer = await this.transport.request("POST", "/v1/clicks", { body });
        this.count(answer.body as ClickRecord);
        return;
      } catch (error) {
        const failure = asJoustError(error);
        if (!failure.retryable) {
          this.reject(failure, { kind: "clicks", body });
          return;
        }
        await this.waitToRetry(attempt, failure);
      }
    }
  }

  // --- Shared ---------------------------------------------------------------------------------

  private count(record: OutcomeRecord): void {
    if (record.status === "duplicate") this.counts.duplicates++;
    else this.counts.recorded++;
  }

  private reject(error: JoustError, item: BufferedItem): void {
    this.counts.rejected++;
    try {
      this.onError?.(error, item);
    } catch {
      // A failing callback must not stop delivery of the other items.
    }
  }

  private async waitToRetry(attempt: number, failure: JoustError | undefined): Promise<void> {
    this.counts.retries++;
    const retryAfter = failure instanceof UnavailableError ? failure.retryAfterMs : undefined;
    const sleep = new Sleep(backoffDelayMs(attempt, this.backoff, retryAfter), this.closing);
    this.sleeps.add(sleep);
    try {
      await sleep.done;
    } finally {
      this.sleeps.delete(sleep);
    }
  }
}

function isItemError(result: OutcomeRecord | ItemError): result is ItemError {
  return "error" in result;
}

function itemErrorOf(result: ItemError): JoustError {
  return errorFromAnswer(
    result.status,
    result.error.code,
    result.error.message,
    undefined,
    undefined,
  );
}

function missingResult(): JoustError {
  return new JoustError(0, "unexpected_response", "the batch answer has no result for this item");
}

function asJoustError(error: unknown): JoustError {
  if (error instanceof JoustError) return error;
  return new JoustError(0, "unexpected_response", String(error), { cause: error });
}
