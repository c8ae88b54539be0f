-- POST /v1/experiments/{id}/duels as fast as possible, with the key in $BENCH_KEY.
wrk.method = "POST"
wrk.path = "/v1/experiments/" .. os.getenv("BENCH_EXPERIMENT") .. "/duels"
wrk.headers["Authorization"] = "Bearer " .. os.getenv("BENCH_KEY")
