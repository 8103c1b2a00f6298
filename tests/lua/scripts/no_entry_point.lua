-- Defines nothing blis can call.
local x = 1
