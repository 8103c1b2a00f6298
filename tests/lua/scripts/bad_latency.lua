-- Returns a negative step time.
function step_time(n)
  return -1
end
