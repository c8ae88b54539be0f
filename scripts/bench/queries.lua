-- Full queries, as a search backend makes them: ask for a duel, post both rankers' 10-document
-- lists to get the interleaving, then post the clicks (positions 0 and 3 of the shown list).
-- Each response queues the query's next request; a connection with nothing queued starts a new
-- query. Every request of a query is a separate round trip, as in production.
function init(args)
  queue = {}
  duel_path = "/v1/experiments/" .. os.getenv("BENCH_EXPERIMENT") .. "/duels"
  wrk.headers["Content-Type"] = "application/json"
end
-- Ten document ids per ranker: overlapping lists, as two rankers of one query return.
local function list_json(offset)
  local docs = {}
  for i = 1, 10 do docs[i] = '"doc' .. ((i + offset) % 15) .. '"' end
  return "[" .. table.concat(docs, ",") .. "]"
end
local list_a, list_b = list_json(0), list_json(3)
function request()
  local next = table.remove(queue, 1)
  if next then return next end
  return wrk.format("POST", duel_path, nil, "")
end
function response(status, headers, body)
  local duel = body:match('"duel_token":"([^"]+)"')
  if duel then
    local a, b = body:match('"rankers":%["([^"]+)","([^"]+)"%]')
    local lists
    if a == b then
      lists = '{"' .. a .. '":' .. list_a .. '}'
    else
      lists = '{"' .. a .. '":' .. list_a .. ',"' .. b .. '":' .. list_b .. '}'
    end
    table.insert(queue, wrk.format("POST", "/v1/interleavings", nil,
      '{"duel_token":"' .. duel .. '","lists":' .. lists .. '}'))
    return
  end
  local il = body:match('"interleaving_token":"([^"]+)"')
  if il then
    table.insert(queue, wrk.format("POST", "/v1/clicks", nil,
      '{"interleaving_token":"' .. il .. '","click_positions":[0,3]}'))
  end
end
