-- blackbox in Lua: the built-in blackbox latency model, written as a script.
-- A step costs beta0 + beta1 * (prefill tokens) + beta2 * (decode tokens)
-- microseconds, at least 1; a request's queueing delay is
-- alpha0 + alpha1 * (input tokens) and each output token adds alpha2.
-- `blis run` hands every latency model that is not analytical the trained
-- coefficients of the model, GPU and TP (or --alpha-coeffs/--beta-coeffs):
-- they arrive in init(config) as config.alpha_coeffs and config.beta_coeffs.
kind = "latency-model"
summary = "linear in prefill and decode tokens, fitted alpha/beta coefficients (Lua blackbox)"
version = "1.0"

local alpha, beta

-- At least three finite, non-negative numbers.
local function coefficients(config, key)
  local c = config[key]
  if type(c) ~= "table" or #c < 3 then
    error(key .. " needs at least 3 values, got " .. (type(c) == "table" and #c or type(c)))
  end
  for i = 1, #c do
    if not (c[i] >= 0 and c[i] < math.huge) then
      error(key .. "[" .. (i - 1) .. "] must be a finite non-negative number, got " .. tostring(c[i]))
    end
  end
  return c
end

function init(config)
  alpha = coefficients(config, "alpha_coeffs")
  beta = coefficients(config, "beta_coeffs")
  -- All zero is what blis passes when it knows no coefficients for the model.
  if beta[1] == 0 and beta[2] == 0 and beta[3] == 0 then
    error("no coefficients (beta_coeffs are all zero): the model, GPU and TP have no trained "
          .. "coefficients; give --alpha-coeffs and --beta-coeffs")
  end
end

function step_time(n)
  -- New tokens by phase; requests that got no token this step cost nothing.
  local prefill, decode = 0, 0
  for i = 0, n - 1 do
    local e = entries[i]
    local tokens = e.new_tokens
    if tokens > 0 then
      if e.phase == 0 then          -- BLIS_PHASE_PREFILL
        prefill = prefill + tokens
      else
        decode = decode + tokens
      end
    end
  end
  local t = beta[1] + beta[2] * prefill + beta[3] * decode
  if t < 1 then return 1 end
  return t                          -- blis truncates toward zero
end

function queueing_time()
  return alpha[1] + alpha[2] * tonumber(request.input_tokens)
end

function output_token_time()
  return alpha[3]
end
