-- Duel, then its outcome, as a search backend that shows a duel and posts which side won. Each
-- duel's answer queues its outcome; a connection with nothing queued asks for a new duel, of the
-- experiments in BENCH_EXPERIMENTS (ids separated by commas) in turn.
function init(args)
  queue = {}
  ids = {}
  for id in string.gmatch(os.getenv("BENCH_EXPERIMENTS"), "%d+") do table.insert(ids, id) end
  next_experiment = math.random(#ids)
  prefer_lower = tonumber(os.getenv("BENCH_PREFER_LOWER") or "0.5")
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
    -- The lower-named ranker wins with probability BENCH_PREFER_LOWER (1/2 unless set): a
    -- transitive matrix, so that a policy trained by this load concentrates as on real traffic.
    local low, high = first, second
    if second < first then low, high = second, first end
    local winner = high
    if math.random() < prefer_lower then winner = low end
    table.insert(queue, wrk.format("POST", "/v1/outcomes", nil,
      '{"duel_token":"' .. duel .. '","winner":"' .. winner .. '"}'))
  end
end
