-- Posts the same interleaving request (BENCH_DIR/interleave-body.json) again and again.
function init(args)
  local f = io.open(os.getenv("BENCH_DIR") .. "/interleave-body.json")
  wrk.body = f:read("*l")
  f:close()
  wrk.method = "POST"
  wrk.path = "/v1/interleavings"
  wrk.headers["Content-Type"] = "application/json"
end
