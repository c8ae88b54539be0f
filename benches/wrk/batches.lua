-- Posts pre-built batch bodies (one JSON body per line of batches.txt), each once.
dofile("benches/wrk/common.lua")
function init(args)
  bodies = thread_lines("batches.txt")
  next_body = 1
  wrk.headers["Content-Type"] = "application/json"
end
function request()
  local body = bodies[next_body]
  if body == nil then return wrk.format("GET", "/batches-exhausted") end
  next_body = next_body + 1
  return wrk.format("POST", "/v1/outcomes/batch", nil, body)
end
