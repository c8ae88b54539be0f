-- POST /v1/experiments/{id}/duels as fast as possible, each naming a unit and a query: 10,000
-- units with 10 queries each, so the keyed hash, the derived seed and the pinned window state
-- are all on the path (the state is pinned once, at the first unit duel of the window).
wrk.method = "POST"
wrk.path = "/v1/experiments/" .. os.getenv("BENCH_EXPERIMENT") .. "/duels"
wrk.headers["content-type"] = "application/json"
local n = 0
request = function()
  n = n + 1
  local body = string.format('{"unit":"user-%d","query":"query %d"}', n % 10000, n % 10)
  return wrk.format(nil, nil, nil, body)
end
