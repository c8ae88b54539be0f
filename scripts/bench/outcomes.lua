-- Posts each collected duel token's outcome once: thread n takes every n-th line.
local counter = 0
local threads = {}
function setup(thread)
  thread:set("id", counter)
  counter = counter + 1
  table.insert(threads, thread)
end
function init(args)
  lines = {}
  local i = 0
  for line in io.lines(os.getenv("BENCH_DIR") .. "/tokens.txt") do
    if i % tonumber(os.getenv("BENCH_THREADS")) == id then table.insert(lines, line) end
    i = i + 1
  end
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
