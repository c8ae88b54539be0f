-- Posts pre-built batch bodies (one JSON body per line of batches.txt), each once.
local counter = 0
function setup(thread)
  thread:set("id", counter)
  counter = counter + 1
end
function init(args)
  bodies = {}
  local i = 0
  for line in io.lines(os.getenv("BENCH_DIR") .. "/batches.txt") do
    if i % tonumber(os.getenv("BENCH_THREADS")) == id then table.insert(bodies, line) end
    i = i + 1
  end
  next_body = 1
  wrk.headers["Content-Type"] = "application/json"
end
function request()
  local body = bodies[next_body]
  if body == nil then return wrk.format("GET", "/batches-exhausted") end
  next_body = next_body + 1
  return wrk.format("POST", "/v1/outcomes/batch", nil, body)
end
