-- Dashboards polling: each connection GETs the experiment, its matrix and its history in turn,
-- one request a second, with If-None-Match set to the ETags fetched before the phase (duels do
-- not change the matrix or the history, so those answer 304; the experiment's duel count does
-- change, so it answers in full). BENCH_POLL_DELAY_MS (default 1000) sets the pause; 0 polls as
-- fast as possible, to measure what a poll costs.
local id = os.getenv("BENCH_EXPERIMENT")
local paths = {
  { "/v1/experiments/" .. id, os.getenv("BENCH_TAG_EXPERIMENT") },
  { "/v1/experiments/" .. id .. "/matrix", os.getenv("BENCH_TAG_MATRIX") },
  { "/v1/experiments/" .. id .. "/history", os.getenv("BENCH_TAG_HISTORY") },
}
local i = 0

request = function()
  i = i % #paths + 1
  local p = paths[i]
  return wrk.format("GET", p[1], { ["If-None-Match"] = p[2] })
end

local pause = tonumber(os.getenv("BENCH_POLL_DELAY_MS") or "1000")

delay = function()
  return pause
end
