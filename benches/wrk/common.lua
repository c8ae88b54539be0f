-- Helpers shared by the wrk scripts (loaded with `dofile`; wrk runs from the repository root).

-- Numbers wrk's threads 0, 1, 2, ... so that each can take its own share of a file.
local counter = 0
function setup(thread)
  thread:set("id", counter)
  counter = counter + 1
end

-- The lines of $BENCH_DIR/NAME that belong to this thread: every BENCH_THREADS-th, from its id.
function thread_lines(name)
  local lines = {}
  local i = 0
  for line in io.lines(os.getenv("BENCH_DIR") .. "/" .. name) do
    if i % tonumber(os.getenv("BENCH_THREADS")) == id then table.insert(lines, line) end
    i = i + 1
  end
  return lines
end
