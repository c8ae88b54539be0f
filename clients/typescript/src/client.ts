// The backend client: duels within a deadline, interleaving, clicks and outcomes (retried
// safely: the service records each duel exactly once), and the experiment API.

import { duelFromBody, fallbackDuel, type Duel } from "./duel.js";
import { JoustError, TimeoutError } from "./errors.js";
import { interleavingFromBody, localInterleaving, type Interleaving } from "./interleaving.js";
import { OutcomeBuffer, type OutcomeBufferOptions } from "./outcome-buffer.js";
import { ExportRows, type ExportOptions } from "./export.js";
import { defaultRetry, withRetry, type RetryOptions } from "./retry.js";
import { clicksBody, outcomeBody } from "./bodies.js";
import { Transport } from "./transport.js";
import type {
  BatchResult,
  ClickRecord,
  ClickSpec,
  ConversionBatchResult,
  ConversionInput,
  ConversionRecord,
  CreateExperimentInput,
  DuelBody,
  Experiment,
  ExperimentPage,
  ExperimentStatus,
  ExperimentSummary,
  History,
  InterleavingBody,
  KeyScope,
  Matrix,
  OutcomeInput,
  OutcomeRecord,
  OutcomeSpec,
  RankerRef,
} from "./wire.js";

export interface JoustClientOptions {
  /** The service, e.g. "http://127.0.0.1:8080". */
  baseUrl: string;
  /** Sent as `Authorization: Bearer KEY` when the service has API keys. */
  apiKey?: string;
  /** Time limit of each request, in ms (default 10,000); a duel's deadline replaces it. */
  timeoutMs?: number;
  /** Retries of calls that are safe to repeat, on 5xx and lost connections. */
  retry?: Partial<RetryOptions>;
  /** A fetch to use instead of the global one. */
  fetch?: typeof fetch;
}

export interface DuelOptions {
  /** Answer within this many ms, whatever happens (the whole call: connect, send, read). */
  deadlineMs?: number;
  /**
   * The ranker(s) to serve when no duel comes in time or the call fails. With a fallback the
   * call never rejects: it resolves to a duel with `inExperiment: false` and `fallbackReason`.
   */
  fallback?: string | readonly string[];
  /**
   * An opaque user or session id: the same unit and query get the same duel (and the same
   * interleaved list) within the experiment's window. Only a keyed hash of it is kept.
   */
  unit?: string;
  /** The query's key (needs `unit`). */
  query?: string;
  /** A segment label (a locale, a device, a kind of query) for the per-segment report. */
  segment?: string;
}

/** A later page of the same interleaving: its number (from 1) or its first position. */
export interface PageOptions {
  page?: number;
  offset?: number;
}

/** A freshly read resource and its ETag, for the next poll. */
export interface Polled<T> {
  value: T;
  etag: string;
}

export class JoustClient {
  private readonly transport: Transport;
  private readonly retry: RetryOptions;

  constructor(options: JoustClientOptions) {
    this.transport = new Transport({
      baseUrl: options.baseUrl,
      apiKey: options.apiKey,
      timeoutMs: options.timeoutMs ?? 10_000,
      fetch: options.fetch,
    });
    this.retry = { ...defaultRetry, ...options.retry };
  }

  // --- Serving a query -------------------------------------------------------------------

  /** The next duel of the experiment; see DuelOptions for the deadline and the fallback. */
  async duel(experimentId: number, options: DuelOptions = {}): Promise<Duel> {
    const { deadlineMs, fallback, unit, query, segment } = options;
    const request = { unit, query, segment };
    const body = Object.values(request).some((v) => v !== undefined) ? request : undefined;
    const path = `/v1/experiments/${experimentId}/duels`;
    let timer: ReturnType<typeof setTimeout> | undefined;
    let signal: AbortSignal | undefined;
    if (deadlineMs !== undefined) {
      const controller = new AbortController();
      signal = controller.signal;
      timer = setTimeout(() => {
        controller.abort(new TimeoutError(0, "timeout", `no duel within ${deadlineMs} ms`));
      }, deadlineMs);
    }
    try {
      const answer = await this.transport.request("POST", path, { signal, body });
      return duelFromBody(answer.body as DuelBody);
    } catch (error) {
      if (fallback === undefined) throw error;
      return fallbackDuel(experimentId, fallback, asJoustError(error));
    } finally {
      if (timer !== undefined) clearTimeout(timer);
    }
  }

  /**
   * The list to show: the rankers' results interleaved by the experiment's method. For a duel
   * that records nothing (fallback, concluded), the first ranker's list, with no request.
   */
  async interleave(
    duel: Duel,
    lists: Readonly<Record<string, readonly string[]>>,
    pages: PageOptions = {},
  ): Promise<Interleaving> {
    const token = duel.token;
    if (token === null) return localInterleaving(duel, lists);
    const body = { duel_token: token, lists, page: pages.page, offset: pages.offset };
    const answer = await withRetry(this.retry, () =>
      this.transport.request("POST", "/v1/interleavings", { body }),
    );
    return interleavingFromBody(answer.body as InterleavingBody);
  }

  /** Records the duel's outcome from the clicks; undefined (no request) when nothing is recorded. */
  async clicks(shown: Interleaving, clicks: ClickSpec): Promise<ClickRecord | undefined> {
    if (shown.token === null) return undefined;
    const body = clicksBody(shown.token, clicks);
    const answer = await withRetry(this.retry, () =>
      this.transport.request("POST", "/v1/clicks", { body }),
    );
    return answer.body as ClickRecord;
  }

  /** Records the duel's outcome; "duplicate" on a repeat. Undefined (no request) for a fallback. */
  async outcome(duel: Duel, outcome: OutcomeSpec): Promise<OutcomeRecord | undefined> {
    if (duel.token === null) return undefined;
    const body = outcomeBody(duel.token, outcome);
    const answer = await withRetry(this.retry, () =>
      this.transport.request("POST", "/v1/outcomes", { body }),
    );
    return answer.body as OutcomeRecord;
  }

  /** Up to 10,000 outcomes in one request; each item gets its own result, in order. */
  async outcomes(outcomes: readonly OutcomeInput[]): Promise<BatchResult> {
    const answer = await withRetry(this.retry, () =>
      this.transport.request("POST", "/v1/outcomes/batch", { body: { outcomes } }),
    );
    return answer.body as BatchResult;
  }

  /**
   * Records a later event (a purchase) on a shown document for one of the experiment's
   * conversion metrics, exactly once per event id; undefined (no request) for a local list.
   */
  async conversion(
    shown: Interleaving,
    conversion: { metric: string; document: string; eventId: string; value?: number },
  ): Promise<ConversionRecord | undefined> {
    if (shown.token === null) return undefined;
    const body: ConversionInput = {
      interleaving_token: shown.token,
      metric: conversion.metric,
      document: conversion.document,
      event_id: conversion.eventId,
      ...(conversion.value === undefined ? {} : { value: conversion.value }),
    };
    const answer = await withRetry(this.retry, () =>
      this.transport.request("POST", "/v1/conversions", { body }),
    );
    return answer.body as ConversionRecord;
  }

  /** Up to 1,000 conversions in one request; each item gets its own result, in order. */
  async conversions(conversions: readonly ConversionInput[]): Promise<ConversionBatchResult> {
    const answer = await withRetry(this.retry, () =>
      this.transport.request("POST", "/v1/conversions/batch", { body: { conversions } }),
    );
    return answer.body as ConversionBatchResult;
  }

  /** A background buffer that batches outcomes and clicks; see OutcomeBuffer. */
  outcomeBuffer(options: OutcomeBufferOptions = {}): OutcomeBuffer {
    return new OutcomeBuffer(this.transport, options);
  }

  // --- Experiments -------------------------------------------------------------------------

  async createExperiment(input: CreateExperimentInput): Promise<Experiment> {
    // Not retried: a create whose answer was lost may have happened.
    return (await this.transport.request("POST", "/v1/experiments", { body: input }))
      .body as Experiment;
  }

  async experiment(id: number): Promise<Experiment> {
    return (await this.get(`/v1/experiments/${id}`)) as Experiment;
  }

  /** The experiment if it changed since `etag` (its ETag from the last poll); undefined on 304. */
  async pollExperiment(id: number, etag?: string): Promise<Polled<Experiment> | undefined> {
    return this.poll<Experiment>(`/v1/experiments/${id}`, etag);
  }

  async matrix(id: number): Promise<Matrix> {
    return (await this.get(`/v1/experiments/${id}/matrix`)) as Matrix;
  }

  /** The matrix if it changed since `etag`; undefined on 304. */
  async pollMatrix(id: number, etag?: string): Promise<Polled<Matrix> | undefined> {
    return this.poll<Matrix>(`/v1/experiments/${id}/matrix`, etag);
  }

  async history(
    id: number,
    options: { since?: Date | string; maxPoints?: number } = {},
  ): Promise<History> {
    const query = new URLSearchParams();
    if (options.since !== undefined) {
      query.set(
        "since",
        typeof options.since === "string" ? options.since : options.since.toISOString(),
      );
    }
    if (options.maxPoints !== undefined) query.set("max_points", String(options.maxPoints));
    const suffix = query.size > 0 ? `?${query.toString()}` : "";
    return (await this.get(`/v1/experiments/${id}/history${suffix}`)) as History;
  }

  /** One page of experiments, oldest first; pass `next_after` as `after` for the next. */
  async listExperiments(options: { limit?: number; after?: number } = {}): Promise<ExperimentPage> {
    const query = new URLSearchParams();
    if (options.limit !== undefined) query.set("limit", String(options.limit));
    if (options.after !== undefined) query.set("after", String(options.after));
    const suffix = query.size > 0 ? `?${query.toString()}` : "";
    return (await this.get(`/v1/experiments${suffix}`)) as ExperimentPage;
  }

  /** Every experiment, oldest first, fetched a page at a time as the loop goes on. */
  async *experiments(options: { pageSize?: number } = {}): AsyncGenerator<ExperimentSummary> {
    let after: number | undefined;
    for (;;) {
      const page = await this.listExperiments({
        limit: options.pageSize ?? 100,
        ...(after === undefined ? {} : { after }),
      });
      yield* page.experiments;
      if (page.next_after === null) return;
      after = page.next_after;
    }
  }

  async setStatus(id: number, status: ExperimentStatus): Promise<Experiment> {
    return (await this.transport.request("PATCH", `/v1/experiments/${id}`, { body: { status } }))
      .body as Experiment;
  }

  async deleteExperiment(id: number): Promise<void> {
    await this.transport.request("DELETE", `/v1/experiments/${id}`);
  }

  async addRanker(id: number, name: string): Promise<RankerRef> {
    return (
      await this.transport.request("POST", `/v1/experiments/${id}/rankers`, { body: { name } })
    ).body as RankerRef;
  }

  async retireRanker(id: number, name: string): Promise<RankerRef> {
    const path = `/v1/experiments/${id}/rankers/${encodeURIComponent(name)}`;
    return (await this.transport.request("DELETE", path)).body as RankerRef;
  }

  // --- Exports ---------------------------------------------------------------------------

  /** Every recorded outcome of the experiment, oldest first, each once; streamed by pages. */
  outcomeRows(id: number, options: ExportOptions = {}): ExportRows {
    return new ExportRows(this.transport, `/v1/experiments/${id}/outcomes`, options);
  }

  /** Every recorded conversion of the experiment with its duel, as `outcomeRows`. */
  conversionRows(id: number, options: ExportOptions = {}): ExportRows {
    return new ExportRows(this.transport, `/v1/experiments/${id}/conversions`, options);
  }

  /** The scope of this client's key ("open" when the service has no keys). */
  async keyScope(): Promise<KeyScope> {
    return ((await this.get("/v1/key")) as { scope: KeyScope }).scope;
  }

  private async get(path: string): Promise<unknown> {
    return (await withRetry(this.retry, () => this.transport.request("GET", path))).body;
  }

  private async poll<T>(path: string, etag: string | undefined): Promise<Polled<T> | undefined> {
    const answer = await withRetry(this.retry, () => this.transport.request("GET", path, { etag }));
    if (answer.status === 304) return undefined;
    return { value: answer.body as T, etag: answer.headers.get("etag") ?? "" };
  }
}

function asJoustError(error: unknown): JoustError {
  if (error instanceof JoustError) return error;
  return new JoustError(0, "unexpected_response", String(error), { cause: error });
}
