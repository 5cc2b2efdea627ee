-- wrk script: POST the file named by BODY_FILE as JSON (without BODY_FILE: GET the URL);
-- counts non-2xx answers as errors.
if os.getenv("BODY_FILE") then
  local f = assert(io.open(os.getenv("BODY_FILE"), "rb"))
  wrk.method = "POST"
  wrk.body = f:read("*a")
  f:close()
  wrk.headers["Content-Type"] = "application/json"
end

local bad = 0
response = function(status, headers, body)
  if status < 200 or status >= 300 then bad = bad + 1 end
end

done = function(summary, latency, requests)
  io.write(string.format("requests: %d, non-2xx: %d, socket errors: %d\n", summary.requests,
    summary.errors.status, summary.errors.connect + summary.errors.read + summary.errors.write + summary.errors.timeout))
  io.write(string.format("throughput: %.0f requests/s\n", summary.requests / (summary.duration / 1e6)))
  io.write(string.format("latency p50 %.2f ms, p90 %.2f ms, p99 %.2f ms, max %.2f ms\n",
    latency:percentile(50) / 1000, latency:percentile(90) / 1000, latency:percentile(99) / 1000, latency.max / 1000))
end
