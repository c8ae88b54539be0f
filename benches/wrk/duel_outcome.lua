-- Duel, then its outcome, as a search backend that shows a duel and posts which side won. Each
-- duel's answer queues its outcome; a connection with nothing queued asks for a new duel, of the
-- experiments in BENCH_EXPERIMENTS (ids separated by commas) in turn.
function init(args)
  queue = {}
  ids = {}
  for id in string.gmatch(os.getenv("BENCH_EXPERIMENTS"), "%d+") do table.insert(ids, id) end
  next_experiment = math.random(#ids)
  wrk.headers["Content-Type"] = "application/json"
end
function request()
  local next = table.remove(queue, 1)
  if next then return next end
  next_experiment = next_experiment % #ids + 1
  return wrk.format("POST", "/v1/experiments/" .. ids[next_experiment] .. "/duels", nil, "")
end
function response(status, headers, body)
  local duel = body:match('"duel_token":"([^"]+)"')
  if duel then
    local first, second = body:match('"rankers":%["([^"]+)","([^"]+)"')
    local winner = first
    if math.random(2) == 2 then winner = second end
    table.insert(queue, wrk.format("POST", "/v1/outcomes", nil,
      '{"duel_token":"' .. duel .. '","winner":"' .. winner .. '"}'))
  end
end
