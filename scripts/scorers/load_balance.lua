-- load-balance: 1 / (1 + effective load), where effective load =
-- queue_depth + batch_size + in_flight. Unlike queue-depth the score does not
-- depend on the other instances: an idle instance always scores 1.
summary = "1 / (1 + effective load)"
version = "1.0"

function score(n)
  for i = 0, n - 1 do
    local inst = instances[i]
    scores[i] = 1.0 / (1 + inst.queue_depth + inst.batch_size + inst.in_flight)
  end
end
