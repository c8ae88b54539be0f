-- Posts each collected duel token's outcome once: thread n takes every n-th line. Every request
-- is formatted in `init`, before the clock starts, so that `request` only hands one over, as a
-- backend builds its body before posting it. Formatting each request as it was sent measured
-- 25-32% fewer outcomes/s at the same server CPU per outcome (docs/benchmarks.md).
dofile("benches/wrk/common.lua")
function init(args)
  requests = {}
  for _, line in ipairs(thread_lines("tokens.txt")) do
    local token, winner = line:match("(%S+) (%S+)")
    requests[#requests + 1] = wrk.format("POST", "/v1/outcomes",
      { ["Content-Type"] = "application/json" },
      '{"duel_token":"' .. token .. '","winner":"' .. winner .. '"}')
  end
  -- Out of tokens: fail loudly in the summary rather than measure retries.
  requests[#requests + 1] = wrk.format("GET", "/tokens-exhausted")
  next_request = 0
end
function request()
  if next_request < #requests then next_request = next_request + 1 end
  return requests[next_request]
end
