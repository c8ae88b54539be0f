-- Posts each collected duel token's outcome once: thread n takes every n-th line.
dofile("scripts/bench/common.lua")
function init(args)
  lines = thread_lines("tokens.txt")
  next_line = 1
  wrk.method = "POST"
  wrk.headers["Content-Type"] = "application/json"
end
function request()
  local line = lines[next_line]
  if line == nil then
    -- Out of tokens: fail loudly in the summary rather than measure retries.
    return wrk.format("GET", "/tokens-exhausted")
  end
  next_line = next_line + 1
  local token, winner = line:match("(%S+) (%S+)")
  return wrk.format("POST", "/v1/outcomes", nil, '{"duel_token":"' .. token .. '","winner":"' .. winner .. '"}')
end
