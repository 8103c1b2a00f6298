-- scores[i] = 1 when the i-th name (1-based in `probes`) is nil in the
-- sandbox, 0 when the script can reach it.
local probes = {
  os, io, require, loadfile, ffi, dofile, load, loadstring, module, package,
  jit, debug, getfenv, setfenv, collectgarbage, math.randomseed, newproxy,
}
local probe_count = 17

function score(n)
  for i = 0, n - 1 do
    scores[i] = (probes[i + 1] == nil) and 1 or 0
  end
end

-- What must stay available.
assert(type(string.format) == "function")
assert(type(table.concat) == "function")
assert(type(math.floor) == "function")
assert(type(bit.band) == "function")
assert(type(pairs) == "function" and type(pcall) == "function")
assert(getmetatable("") ~= string, "string metatable must be hidden")
assert(probe_count == 17)
