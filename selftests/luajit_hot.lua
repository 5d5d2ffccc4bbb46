-- SPDX-License-Identifier: GPL-2.0
--
-- A hot loop for LuaJIT to compile into traces, run PASSES times; then,
-- if OUT is given, the machine code of every trace as LuaJIT reads it
-- back (jit.util.tracemc(), what -jdump prints), one line a trace:
-- "TRACE ADDR(hex) LEN HEXBYTES".
--
--   luajit luajit_hot.lua [OUT [PASSES [N]]]
local out = arg[1]
local passes = tonumber(arg[2] or "3")
local n = tonumber(arg[3] or "200000")

local function work(n)
	local s, t = 0, {}
	for i = 1, n do
		if i % 3 == 0 then s = s + i * 2 else s = s - i end
		t[i % 64] = s
	end
	local x = 0
	for i = 1, n do
		x = x + (t[i % 64] or 0) % 7
	end
	local str = 0
	for i = 1, n / 8 do
		str = str + #tostring(i % 1000)
	end
	return s + x + str
end

local r
for _ = 1, passes do
	r = work(n)
end

if out and out ~= "-" then
	local util = require("jit.util")
	local f = assert(io.open(out, "w"))
	for tr = 1, 1000 do
		local mc, addr = util.tracemc(tr)
		if mc then
			local hex = mc:gsub(".", function(c)
				return string.format("%02x", c:byte())
			end)
			f:write(string.format("%d %x %d %s\n", tr, addr, #mc, hex))
		end
	end
	f:close()
end
print(r)
