// joust-client: the backend SDK. The browser click helper is the separate entry point
// "joust-client/browser" (browser.ts), which has no Node dependencies.

export { JoustClient } from "./client.js";
export { ExportRows, nextLink } from "./export.js";
export type { ExportOptions, ExportRow } from "./export.js";
export type { DuelOptions, JoustClientOptions, PageOptions, Polled } from "./client.js";
export type { Duel, FallbackReason } from "./duel.js";
export type { Interleaving } from "./interleaving.js";
export { OutcomeBuffer, MAX_BATCH } from "./outcome-buffer.js";
export type { BufferStats, BufferedItem, OutcomeBufferOptions } from "./outcome-buffer.js";
export type { BackoffOptions } from "./backoff.js";
export type { RetryOptions } from "./retry.js";
export {
  JoustError,
  BadRequestError,
  UnauthorizedError,
  ForbiddenError,
  NotFoundError,
  ConflictError,
  ExpiredError,
  InvalidError,
  UnavailableError,
  ServerError,
  TimeoutError,
  ConnectionError,
  SERVER_ERROR_CODES,
} from "./errors.js";
export type { ErrorCode, ServerErrorCode, ClientErrorCode } from "./errors.js";
export type * from "./wire.js";
