-- POST /v1/experiments/{id}/duels with an empty JSON object: the same request shape as
-- unit_duels.lua (a body to read and parse), without a unit.
wrk.method = "POST"
wrk.path = "/v1/experiments/" .. os.getenv("BENCH_EXPERIMENT") .. "/duels"
wrk.headers["content-type"] = "application/json"
wrk.body = "{}"
