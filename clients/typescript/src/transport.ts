// One HTTP exchange with the service: JSON in and out, the API key, a time limit, and every
// failure turned into a typed JoustError. Kept lean: a duel's deadline budget is milliseconds.

import { ConnectionError, JoustError, TimeoutError, errorFromAnswer } from "./errors.js";

export interface TransportOptions {
  baseUrl: string;
  apiKey?: string | undefined;
  /** Time limit of one request, in ms, unless the call brings its own signal. */
  timeoutMs: number;
  /** A fetch to use instead of the global one (tests, instrumented clients). */
  fetch?: typeof fetch | undefined;
}

export interface RequestOptions {
  body?: unknown;
  /** Ends the request early; its reason (a JoustError) becomes the rejection. */
  signal?: AbortSignal | undefined;
  /** Sent as If-None-Match; a 304 answer then has no body. */
  etag?: string | undefined;
}

export interface Answer {
  status: number;
  headers: Headers;
  /** The parsed JSON body; undefined for 204 and 304. */
  body: unknown;
}

export class Transport {
  readonly baseUrl: string;
  private readonly timeoutMs: number;
  private readonly fetchImpl: typeof fetch;
  // ES private fields (not TypeScript's `private`): the headers carry the API key, and these
  // fields are invisible to console.log, util.inspect and JSON.stringify, so a logged client
  // never prints its key.
  readonly #jsonHeaders: Record<string, string>;
  readonly #plainHeaders: Record<string, string>;

  constructor(options: TransportOptions) {
    this.baseUrl = options.baseUrl.replace(/\/+$/, "");
    this.timeoutMs = options.timeoutMs;
    this.fetchImpl = options.fetch ?? globalThis.fetch.bind(globalThis);
    // Built once: the header objects are the same for every request.
    this.#plainHeaders = { accept: "application/json" };
    if (options.apiKey !== undefined && options.apiKey !== "") {
      this.#plainHeaders.authorization = `Bearer ${options.apiKey}`;
    }
    this.#jsonHeaders = { ...this.#plainHeaders, "content-type": "application/json" };
  }

  async request(method: string, path: string, options: RequestOptions = {}): Promise<Answer> {
    let signal = options.signal;
    let timer: ReturnType<typeof setTimeout> | undefined;
    if (signal === undefined) {
      const controller = new AbortController();
      signal = controller.signal;
      const timeoutMs = this.timeoutMs;
      timer = setTimeout(() => {
        controller.abort(new TimeoutError(0, "timeout", `no answer within ${timeoutMs} ms`));
      }, timeoutMs);
    }
    try {
      return await this.exchange(method, path, options, signal);
    } finally {
      if (timer !== undefined) clearTimeout(timer);
    }
  }

  /**
   * A GET whose body the caller streams (an export page): no time limit on the body, which may
   * take as long as its rows do; a non-2xx answer is read whole and thrown as its typed error.
   */
  async stream(path: string, accept: string): Promise<Response> {
    const headers = { ...this.#plainHeaders, accept };
    let response: Response;
    try {
      response = await this.fetchImpl(this.baseUrl + path, { method: "GET", headers });
    } catch (error) {
      throw failureOf(error, new AbortController().signal, "GET", path);
    }
    if (response.status >= 200 && response.status < 300) return response;
    throw errorAnswer(response.status, response.headers, await response.text());
  }

  private async exchange(
    method: string,
    path: string,
    options: RequestOptions,
    signal: AbortSignal,
  ): Promise<Answer> {
    let headers = options.body === undefined ? this.#plainHeaders : this.#jsonHeaders;
    if (options.etag !== undefined) headers = { ...headers, "if-none-match": options.etag };
    const init: RequestInit = { method, headers, signal };
    if (options.body !== undefined) init.body = JSON.stringify(options.body);
    let response: Response;
    let text: string;
    try {
      response = await this.fetchImpl(this.baseUrl + path, init);
      // Read inside the same guard: the time limit covers the body too.
      text = await response.text();
    } catch (error) {
      throw failureOf(error, signal, method, path);
    }
    const status = response.status;
    if (status >= 200 && status < 300) {
      return { status, headers: response.headers, body: text === "" ? undefined : parse(text) };
    }
    if (status === 304) return { status, headers: response.headers, body: undefined };
    throw errorAnswer(status, response.headers, text);
  }
}

function parse(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch (error) {
    throw new JoustError(0, "unexpected_response", "the service's answer is not JSON", {
      cause: error,
    });
  }
}

/** The typed error for a non-2xx answer; a body that is not the service's error shape still gets one. */
function errorAnswer(status: number, headers: Headers, text: string): JoustError {
  let code = status >= 500 ? "internal" : "invalid_body";
  let message = `HTTP ${status}`;
  try {
    const body = JSON.parse(text) as { error?: { code?: unknown; message?: unknown } };
    if (typeof body.error?.code === "string") code = body.error.code;
    if (typeof body.error?.message === "string") message = body.error.message;
  } catch {
    if (text !== "") message = `HTTP ${status}: ${text.slice(0, 200)}`;
  }
  if (status === 503 && code === "internal") code = "database_unavailable";
  const requestId = headers.get("x-request-id") ?? undefined;
  return errorFromAnswer(status, code, message, requestId, retryAfterMs(headers));
}

/** Retry-After as milliseconds: seconds, or an HTTP date. */
export function retryAfterMs(headers: Headers): number | undefined {
  const value = headers.get("retry-after");
  if (value === null) return undefined;
  const seconds = Number(value);
  if (Number.isFinite(seconds)) return Math.max(0, seconds * 1000);
  const date = Date.parse(value);
  return Number.isNaN(date) ? undefined : Math.max(0, date - Date.now());
}

function failureOf(error: unknown, signal: AbortSignal, method: string, path: string): JoustError {
  if (signal.aborted) {
    const reason: unknown = signal.reason;
    if (reason instanceof JoustError) return reason;
    return new TimeoutError(0, "timeout", `${method} ${path} was aborted`, { cause: reason });
  }
  if (error instanceof JoustError) return error;
  return new ConnectionError(
    0,
    "connection_failed",
    `${method} ${path}: no answer (${describe(error)})`,
    {
      cause: error,
    },
  );
}

function describe(error: unknown): string {
  if (error instanceof Error) {
    const cause: unknown = error.cause;
    if (cause instanceof Error && cause.message !== "") return cause.message;
    return error.message;
  }
  return String(error);
}
