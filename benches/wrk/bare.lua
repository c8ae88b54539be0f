-- POST a small JSON body to the bare axum handler (benches/baselines/bare_json.rs) as fast as
-- possible.
wrk.method = "POST"
wrk.path = "/"
wrk.headers["Content-Type"] = "application/json"
wrk.body = '{"duel_token":"x","winner":"y"}'
