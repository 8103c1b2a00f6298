-- Declares a kind but not its entry point.
kind = "routing-scorer"

function observe(chosen)
end
