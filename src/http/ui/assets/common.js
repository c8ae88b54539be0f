// Shared by the dashboard pages: API calls with the tab's API key and If-None-Match, the key
// prompt, the "last updated / unreachable" notice, polling, and building DOM from untrusted
// text. Names of experiments and rankers are untrusted: they only ever become text nodes.
"use strict";

const Joust = (() => {
  const KEY = "joust.apiKey";
  const POLL_MS = 2000;
  // Last answer per URL with its ETag: an unchanged answer comes back as 304 with no body.
  const cache = new Map();

  class AuthError extends Error {}
  class ApiError extends Error {
    constructor(status, body) {
      const e = body && body.error;
      super(e ? e.message : "HTTP " + status);
      this.status = status;
      this.code = e ? e.code : "http_" + status;
    }
  }

  function apiKey() {
    return sessionStorage.getItem(KEY);
  }

  function headers() {
    const h = {};
    const k = apiKey();
    if (k) h["Authorization"] = "Bearer " + k;
    return h;
  }

  // GET with If-None-Match; resolves to {changed, body}.
  async function get(url) {
    const h = headers();
    const had = cache.get(url);
    if (had) h["If-None-Match"] = had.etag;
    const r = await fetch(url, { headers: h, cache: "no-store" });
    if (r.status === 304 && had) return { changed: false, body: had.body };
    const body = await r.json().catch(() => null);
    if (r.status === 401) throw new AuthError(body && body.error ? body.error.message : "unauthorized");
    if (!r.ok) throw new ApiError(r.status, body);
    const etag = r.headers.get("ETag");
    if (etag) cache.set(url, { etag, body });
    return { changed: true, body };
  }

  async function send(method, url, body) {
    const h = headers();
    if (body !== undefined) h["Content-Type"] = "application/json";
    const r = await fetch(url, {
      method,
      headers: h,
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    const answer = await r.json().catch(() => null);
    if (r.status === 401) throw new AuthError("unauthorized");
    if (!r.ok) throw new ApiError(r.status, answer);
    return answer;
  }

  // el("td", {className: "num", dataset: {row: name}}, "text", child...): text stays text.
  function el(tag, props, ...children) {
    const e = document.createElement(tag);
    if (props) {
      for (const [k, v] of Object.entries(props)) {
        if (k === "dataset") Object.assign(e.dataset, v);
        else if (k === "style") Object.assign(e.style, v);
        else e[k] = v;
      }
    }
    for (const c of children) {
      if (c === null || c === undefined) continue;
      e.append(c instanceof Node ? c : document.createTextNode(String(c)));
    }
    return e;
  }

  function clear(e) {
    while (e.firstChild) e.removeChild(e.firstChild);
    return e;
  }

  function time(d) {
    return new Date(d).toLocaleTimeString([], { hour12: false });
  }

  function number(n) {
    return Number(n).toLocaleString("en-US");
  }

  function setStatus(text, bad) {
    const s = document.getElementById("status");
    s.textContent = text;
    s.classList.toggle("bad", !!bad);
  }

  // The key's scope ("admin", "read", "ingest" or "open") and project (null for a global
  // key), asked once per key.
  let scope = null;
  async function keyInfo() {
    if (scope === null) scope = (await get("/v1/key")).body;
    return scope;
  }
  async function keyScope() {
    return (await keyInfo()).scope;
  }

  function showKeyPrompt(message, retry) {
    const form = document.getElementById("key-form");
    const input = document.getElementById("key-input");
    document.getElementById("key-message").textContent = message;
    form.hidden = false;
    input.focus();
    form.onsubmit = (ev) => {
      ev.preventDefault();
      const k = input.value.trim();
      if (!k) return;
      sessionStorage.setItem(KEY, k);
      input.value = "";
      scope = null;
      cache.clear();
      form.hidden = true;
      retry();
    };
  }

  function forgetKey() {
    sessionStorage.removeItem(KEY);
    scope = null;
    cache.clear();
  }

  // Calls refresh() now and every POLL_MS; reports when data was last fetched and when the
  // server cannot be reached; asks for a key when one is needed or was refused.
  function poll(refresh) {
    let timer = null;
    let down = null;
    const run = async () => {
      clearTimeout(timer);
      try {
        await refresh();
        down = null;
        setStatus("Last updated " + time(Date.now()));
      } catch (e) {
        if (e instanceof AuthError) {
          const had = apiKey();
          forgetKey();
          setStatus("An API key is needed", true);
          showKeyPrompt(had ? "That key was not accepted: " + e.message + ". Enter another key." :
            "This server needs an API key (a read key is enough to watch).", run);
          return;
        }
        if (e instanceof ApiError) {
          setStatus("The server refused: " + e.message, true);
        } else {
          down = down || Date.now();
          setStatus("Cannot reach the server since " + time(down) + "; retrying", true);
        }
      }
      timer = setTimeout(run, POLL_MS);
    };
    document.getElementById("forget-key").onclick = () => {
      forgetKey();
      location.reload();
    };
    run();
    return run;
  }

  return { get, send, el, clear, time, number, poll, keyInfo, keyScope, ApiError, setStatus };
})();
