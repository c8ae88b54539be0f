-- Full queries, as a search backend makes them: ask for a duel, post each of its rankers'
-- 10-document lists to get the interleaving (or multileaving), then post the clicks (positions 0
-- and 3 of the shown list). Each response queues the query's next request; a connection with
-- nothing queued starts a new query. Every request of a query is a separate round trip, as in
-- production. BENCH_QUERY_EXPERIMENT picks the experiment (BENCH_EXPERIMENT by default).
function init(args)
  queue = {}
  local id = os.getenv("BENCH_QUERY_EXPERIMENT") or os.getenv("BENCH_EXPERIMENT")
  duel_path = "/v1/experiments/" .. id .. "/duels"
  wrk.headers["Content-Type"] = "application/json"
end
-- Ten document ids per ranker: overlapping lists, as the rankers of one query return. The k-th
-- distinct ranker of a query gets list k, built once here rather than per request (this moved
-- the full-query rate by no more than the noise: docs/benchmarks.md).
local list_json = {}
for k = 0, 63 do
  local docs = {}
  for i = 1, 10 do docs[i] = '"doc' .. ((i + 3 * k) % 30) .. '"' end
  list_json[k] = "[" .. table.concat(docs, ",") .. "]"
end
function request()
  local next = table.remove(queue, 1)
  if next then return next end
  return wrk.format("POST", duel_path, nil, "")
end
function response(status, headers, body)
  local duel = body:match('"duel_token":"([^"]+)"')
  if duel then
    -- One list per distinct ranker (a ranker compared with itself takes one list).
    local names, seen, lists = body:match('"rankers":%[([^%]]*)%]'), {}, {}
    for name in names:gmatch('"([^"]+)"') do
      if not seen[name] then
        seen[name] = true
        lists[#lists + 1] = '"' .. name .. '":' .. list_json[#lists]
      end
    end
    table.insert(queue, wrk.format("POST", "/v1/interleavings", nil,
      '{"duel_token":"' .. duel .. '","lists":{' .. table.concat(lists, ",") .. '}}'))
    return
  end
  local il = body:match('"interleaving_token":"([^"]+)"')
  if il then
    table.insert(queue, wrk.format("POST", "/v1/clicks", nil,
      '{"interleaving_token":"' .. il .. '","click_positions":[0,3]}'))
  end
end
