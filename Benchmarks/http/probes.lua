-- wrk script: GET one probe path in a loop; prints its latency percentiles.
local bad = 0
response = function(status, headers, body)
  if status < 200 or status >= 300 then bad = bad + 1 end
end

done = function(summary, latency, requests)
  io.write(string.format("probe requests: %d, non-2xx: %d, socket errors: %d\n", summary.requests,
    summary.errors.status, summary.errors.connect + summary.errors.read + summary.errors.write + summary.errors.timeout))
  io.write(string.format("probe latency p50 %.2f ms, p99 %.2f ms, max %.2f ms\n",
    latency:percentile(50) / 1000, latency:percentile(99) / 1000, latency.max / 1000))
end
