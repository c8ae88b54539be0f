-- POST /v1/experiments/{id}/duels as fast as possible.
wrk.method = "POST"
wrk.path = "/v1/experiments/" .. os.getenv("BENCH_EXPERIMENT") .. "/duels"
