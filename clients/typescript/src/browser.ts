// joust-client/browser: posting clicks straight from the results page, with the interleaving
// token alone as the capability (for experiments whose browser_clicks list the page's origin).
// No Node APIs and no imports at run time: it can be served to a browser as it is.
//
// Transport: fetch with keepalive (the request survives the page being closed, and its answer
// can be read) while the page is visible; navigator.sendBeacon with a text/plain string when
// fetch is missing or the page is being hidden or unloaded, when the browser may not run a
// fetch's promise any more but always sends a queued beacon. A text/plain body is also a
// "simple" request: no CORS preflight, which a page being torn down may not wait for.

import type { ClickRecord } from "./wire.js";

export type { ClickRecord } from "./wire.js";

export type PostClicksOptions = {
  /** The joust service, e.g. "https://joust.example.com". */
  baseUrl: string;
  /** The `interleaving_token` of the shown list (handed to the page by the backend). */
  interleavingToken: string;
  /** "auto" (default) chooses as described above; "fetch" or "beacon" force one. */
  transport?: "auto" | "fetch" | "beacon";
} & (
  | { clicked: readonly string[]; clickPositions?: never }
  | { clickPositions: readonly number[]; clicked?: never }
);

export type PostClicksResult =
  /** The service recorded the clicks (or had already: `record.status` is "duplicate"). */
  | { transport: "fetch"; ok: true; status: number; record: ClickRecord }
  /** The service refused them (status and its error), or no answer came (status 0). */
  | { transport: "fetch"; ok: false; status: number; code: string; message: string }
  /** The browser queued the beacon (ok) or refused it (too large, or no sendBeacon); no answer. */
  | { transport: "beacon"; ok: boolean };

/**
 * Posts the clicks on one shown list. Never rejects: the result says what happened, since a
 * page has nothing better to do with a failed click report than log it.
 */
export async function postClicks(options: PostClicksOptions): Promise<PostClicksResult> {
  const url = `${options.baseUrl.replace(/\/+$/, "")}/v1/clicks`;
  const body = JSON.stringify(
    options.clicked !== undefined
      ? { interleaving_token: options.interleavingToken, clicks: options.clicked }
      : { interleaving_token: options.interleavingToken, click_positions: options.clickPositions },
  );
  if (chooseTransport(options.transport ?? "auto") === "beacon") {
    return { transport: "beacon", ok: sendBeacon(url, body) };
  }
  try {
    const response = await fetch(url, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body,
      keepalive: true,
      // The token is the capability: no cookies or other credentials are sent.
      credentials: "omit",
      mode: "cors",
    });
    const text = await response.text();
    if (response.ok) {
      return {
        transport: "fetch",
        ok: true,
        status: response.status,
        record: JSON.parse(text) as ClickRecord,
      };
    }
    const { code, message } = errorOf(text, response.status);
    return { transport: "fetch", ok: false, status: response.status, code, message };
  } catch (error) {
    const message = error instanceof Error ? error.message : String(error);
    return { transport: "fetch", ok: false, status: 0, code: "connection_failed", message };
  }
}

/**
 * Calls `callback` when the page is hidden (tab switched, closed, navigated away): the last
 * moment a page can be sure to report its clicks. Returns a function that stops listening.
 */
export function whenPageHides(callback: () => void): () => void {
  const onVisibility = (): void => {
    if (document.visibilityState === "hidden") callback();
  };
  document.addEventListener("visibilitychange", onVisibility);
  window.addEventListener("pagehide", callback);
  return () => {
    document.removeEventListener("visibilitychange", onVisibility);
    window.removeEventListener("pagehide", callback);
  };
}

let pageUnloading = false;
if (typeof window !== "undefined" && typeof window.addEventListener === "function") {
  window.addEventListener("pagehide", () => {
    pageUnloading = true;
  });
  // Back from the back/forward cache: the page lives again.
  window.addEventListener("pageshow", () => {
    pageUnloading = false;
  });
}

function chooseTransport(requested: "auto" | "fetch" | "beacon"): "fetch" | "beacon" {
  if (requested !== "auto") return requested;
  if (typeof fetch !== "function") return "beacon";
  const hidden = typeof document !== "undefined" && document.visibilityState === "hidden";
  const beaconAvailable =
    typeof navigator !== "undefined" && typeof navigator.sendBeacon === "function";
  return (hidden || pageUnloading) && beaconAvailable ? "beacon" : "fetch";
}

function sendBeacon(url: string, body: string): boolean {
  if (typeof navigator === "undefined" || typeof navigator.sendBeacon !== "function") return false;
  // A string goes out as text/plain;charset=UTF-8; the service parses it as JSON.
  return navigator.sendBeacon(url, body);
}

function errorOf(text: string, status: number): { code: string; message: string } {
  try {
    const parsed = JSON.parse(text) as { error?: { code?: unknown; message?: unknown } };
    return {
      code: typeof parsed.error?.code === "string" ? parsed.error.code : "unexpected_response",
      message: typeof parsed.error?.message === "string" ? parsed.error.message : `HTTP ${status}`,
    };
  } catch {
    return { code: "unexpected_response", message: `HTTP ${status}` };
  }
}
