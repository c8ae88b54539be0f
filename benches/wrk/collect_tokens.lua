-- Asks for duels and writes each returned token to tokens-<thread>.txt (one per line).
dofile("benches/wrk/common.lua")
function init(args)
  out = io.open(os.getenv("BENCH_DIR") .. "/tokens-" .. id .. ".txt", "w")
  wrk.method = "POST"
  wrk.path = "/v1/experiments/" .. os.getenv("BENCH_EXPERIMENT") .. "/duels"
end
function response(status, headers, body)
  local token = body:match('"duel_token":"([^"]+)"')
  local winner = body:match('"rankers":%["([^"]+)"')
  if token then out:write(token, " ", winner, "\n") end
end
