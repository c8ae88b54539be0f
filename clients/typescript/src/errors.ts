// Typed errors. Every failure of a call surfaces as a JoustError: the service's own errors
// carry its HTTP status and stable code; failures before any answer (timeouts, connections)
// carry status 0 and a client-side code, so one `catch` and one `switch (err.code)` cover all.

/** The service's error codes (openapi.yaml, the Error schema's enum); the names never change. */
export const SERVER_ERROR_CODES = [
  "invalid_json",
  "invalid_body",
  "invalid_query",
  "unsupported_media_type",
  "body_too_large",
  "request_timeout",
  "not_found",
  "method_not_allowed",
  "unauthorized",
  "forbidden",
  // Projects and keys.
  "unknown_project",
  "project_exists",
  "unknown_key",
  "invalid_key",
  "unknown_experiment",
  "unknown_ranker",
  "invalid_name",
  "reserved_name",
  "invalid_rankers",
  "duplicate_ranker",
  "invalid_attribution_window",
  "invalid_rankers_per_query",
  "invalid_seed",
  "invalid_policy",
  "invalid_interleaving",
  "memory_budget_exceeded",
  "experiment_concluded",
  "experiment_paused",
  "too_many_rankers",
  "too_few_rankers",
  "ranker_retired",
  "matrix_too_large",
  "invalid_token",
  "duel_expired",
  "invalid_list",
  "lists_mismatch",
  "invalid_clicks",
  "click_not_shown",
  "invalid_outcome",
  "winner_not_in_duel",
  "rankers_mismatch",
  "invalid_credits",
  "invalid_batch",
  "outcome_conflict",
  "database_unavailable",
  "not_ready",
  "internal",
  // Browser clicks (a server with browser_clicks settings).
  "invalid_origin",
  "origin_not_allowed",
  // Metrics and conversions.
  "invalid_metrics",
  "unknown_metric",
  "invalid_conversion",
  "conversion_not_shown",
  "conversion_window_closed",
  "conversion_conflict",
  "conversion_limit_reached",
  "invalid_clock",
  // Units and segments.
  "invalid_units",
  "invalid_unit",
  "invalid_segments",
  "invalid_segment",
  "segment_limit_reached",
  "paging_unsupported",
  // Exports.
  "invalid_cursor",
] as const;

export type ServerErrorCode = (typeof SERVER_ERROR_CODES)[number];

/** Codes of failures that got no answer from the service, or an answer that was not its JSON. */
export type ClientErrorCode = "timeout" | "connection_failed" | "unexpected_response";

export type ErrorCode = ServerErrorCode | ClientErrorCode;

export class JoustError extends Error {
  override name = "JoustError";
  /** The HTTP status; 0 when no answer came (timeout, connection failure). */
  readonly status: number;
  readonly code: ErrorCode;
  /** The server's x-request-id, which its log line for the request repeats. */
  readonly requestId: string | undefined;

  constructor(
    status: number,
    code: ErrorCode,
    message: string,
    options?: { cause?: unknown; requestId?: string | undefined },
  ) {
    super(message, options?.cause === undefined ? undefined : { cause: options.cause });
    this.status = status;
    this.code = code;
    this.requestId = options?.requestId;
  }

  /** Worth sending again as it is: no answer, a 503 or another 5xx (the service records exactly once). */
  get retryable(): boolean {
    return this.status === 0 || this.status >= 500;
  }
}

/** 400: a malformed body or query, or a forged token. */
export class BadRequestError extends JoustError {
  override name = "BadRequestError";
}
/** 401: no API key, or an unknown one. */
export class UnauthorizedError extends JoustError {
  override name = "UnauthorizedError";
}
/** 403: the key's scope does not allow the call (or a browser origin not allowed). */
export class ForbiddenError extends JoustError {
  override name = "ForbiddenError";
}
/** 404: no such experiment or ranker. */
export class NotFoundError extends JoustError {
  override name = "NotFoundError";
}
/** 409: a conflict with the experiment's state, e.g. `outcome_conflict`, `experiment_paused`. */
export class ConflictError extends JoustError {
  override name = "ConflictError";
}
/** 410: the duel's attribution window is over. */
export class ExpiredError extends JoustError {
  override name = "ExpiredError";
}
/** 413, 415 and 422: a body the service will never accept as it is. */
export class InvalidError extends JoustError {
  override name = "InvalidError";
}
/** 503: the database is unreachable; nothing was recorded, retry after `retryAfterMs`. */
export class UnavailableError extends JoustError {
  override name = "UnavailableError";
  readonly retryAfterMs: number | undefined;
  constructor(
    status: number,
    code: ErrorCode,
    message: string,
    options?: {
      cause?: unknown;
      requestId?: string | undefined;
      retryAfterMs?: number | undefined;
    },
  ) {
    super(status, code, message, options);
    this.retryAfterMs = options?.retryAfterMs;
  }
}
/** Any other 5xx. */
export class ServerError extends JoustError {
  override name = "ServerError";
}
/** No answer within the call's time (the client's timeout or a duel's deadline). */
export class TimeoutError extends JoustError {
  override name = "TimeoutError";
}
/** No connection, or it broke before the answer. */
export class ConnectionError extends JoustError {
  override name = "ConnectionError";
}

const errorClassByStatus: Record<number, typeof JoustError> = {
  400: BadRequestError,
  401: UnauthorizedError,
  403: ForbiddenError,
  404: NotFoundError,
  409: ConflictError,
  410: ExpiredError,
  413: InvalidError,
  415: InvalidError,
  422: InvalidError,
};

/** The typed error for an error answer of the service. */
export function errorFromAnswer(
  status: number,
  code: string,
  message: string,
  requestId: string | undefined,
  retryAfterMs: number | undefined,
): JoustError {
  // An unknown code from a newer server passes through as it is: its status still classifies it.
  const typedCode = code as ErrorCode;
  if (status === 503) {
    return new UnavailableError(status, typedCode, message, { requestId, retryAfterMs });
  }
  if (status >= 500) return new ServerError(status, typedCode, message, { requestId });
  const ErrorClass = errorClassByStatus[status] ?? JoustError;
  return new ErrorClass(status, typedCode, message, { requestId });
}
