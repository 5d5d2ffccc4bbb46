-- SPDX-License-Identifier: GPL-2.0
--
-- ptsynth's LuaJIT scenario (scenarios/list, README.rst "Scenarios"):
-- a hot loop that LuaJIT compiles into traces, then, between two signals
-- the tracer waits for (ptsynth trace --start-on-signal START
-- --stop-on-signal STOP), one more run of the loop through the compiled
-- machine code, exits to the interpreter included.
--
--   luajit luajit-hot.lua [START [STOP [N [WARM]]]]
--
-- START/STOP are signal numbers (default 10 and 12, SIGUSR1 and SIGUSR2),
-- N the iterations of the traced run (default 60), WARM the warming runs
-- of 1000 iterations (default 40). Both signals are ignored (SIG_IGN):
-- without a tracer swallowing them the script runs the same.
local ffi = require("ffi")
ffi.cdef([[
typedef void (*sighandler_t)(int);
sighandler_t signal(int sig, sighandler_t handler);
int raise(int sig);
]])
local raise = ffi.C.raise	-- looked up now, not in the traced window

local start = tonumber(arg[1] or "10")
local stop = tonumber(arg[2] or "12")
local n = tonumber(arg[3] or "60")
local warm = tonumber(arg[4] or "40")
local ign = ffi.cast("sighandler_t", 1)	-- SIG_IGN
ffi.C.signal(start, ign)
ffi.C.signal(stop, ign)

local function hot(n)
	local s = 0
	for i = 1, n do
		if i % 3 == 0 then s = s + i * 2 else s = s - i end
	end
	return s
end

local w = 0
for _ = 1, warm do
	w = w + hot(1000)
end
raise(start)
local r = hot(n)
raise(stop)
print(w, r)
