#!/usr/bin/env python3
"""Probes as orchestrators send them: open loop, a fixed rate, each answer timed.

Usage: probe-client.py PORT SECONDS [RATE]

Every 1/RATE s (default 60/s) one probe is sent, cycling through /healthz, /readyz and
/metrics, each both on a new connection with `Connection: close` (as a kubelet probes)
and on a kept-alive connection (as Prometheus scrapes): six series, RATE/6 probes a
second each. A probe's time runs from the connect (new connection) or the send (kept
alive) to the last byte of the answer. Prints one line per series: count, non-200
answers, failures, p50/p90/p99/max in ms.
"""
import socket
import sys
import time

PATHS = ["/healthz", "/readyz", "/metrics"]


def read_answer(sock):
    """Reads one HTTP/1.1 answer (Content-Length framed); returns its status."""
    data = b""
    while b"\r\n\r\n" not in data:
        chunk = sock.recv(65536)
        if not chunk:
            raise ConnectionError("closed before the head")
        data += chunk
    head, _, body = data.partition(b"\r\n\r\n")
    lines = head.split(b"\r\n")
    status = int(lines[0].split(b" ")[1])
    length = 0
    for line in lines[1:]:
        name, _, value = line.partition(b":")
        if name.strip().lower() == b"content-length":
            length = int(value.strip())
    while len(body) < length:
        chunk = sock.recv(65536)
        if not chunk:
            raise ConnectionError("closed inside the body")
        body += chunk
    return status


def request(path, close):
    return (f"GET {path} HTTP/1.1\r\nHost: 127.0.0.1\r\nUser-Agent: probe-client\r\n"
            + ("Connection: close\r\n" if close else "") + "\r\n").encode()


def percentile(sorted_values, p):
    if not sorted_values:
        return float("nan")
    index = min(len(sorted_values) - 1, max(0, int(round(p / 100 * len(sorted_values) + 0.5)) - 1))
    return sorted_values[index]


def main():
    port, seconds = int(sys.argv[1]), float(sys.argv[2])
    rate = float(sys.argv[3]) if len(sys.argv) > 3 else 60.0
    series = [(path, close) for path in PATHS for close in (True, False)]
    times = {s: [] for s in series}
    bad = {s: 0 for s in series}
    failed = {s: 0 for s in series}
    kept = {}
    interval = 1.0 / rate
    start = time.monotonic()
    n = 0
    while True:
        due = start + n * interval
        now = time.monotonic()
        if due - start >= seconds:
            break
        if due > now:
            time.sleep(due - now)
        path, close = series[n % len(series)]
        n += 1
        try:
            began = time.perf_counter()
            if close:
                sock = socket.create_connection(("127.0.0.1", port), timeout=10)
            else:
                sock = kept.get(path)
                if sock is None:
                    sock = socket.create_connection(("127.0.0.1", port), timeout=10)
                    sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
                    kept[path] = sock
                    began = time.perf_counter()
            sock.sendall(request(path, close))
            status = read_answer(sock)
            elapsed = time.perf_counter() - began
            if close:
                sock.close()
            times[(path, close)].append(elapsed * 1000)
            if status != 200:
                bad[(path, close)] += 1
        except (OSError, ValueError, IndexError):
            failed[(path, close)] += 1
            if not close and path in kept:
                kept.pop(path).close()
    for (path, close) in series:
        values = sorted(times[(path, close)])
        kind = "new connection" if close else "kept alive"
        print(f"{path:9} {kind:15} n={len(values)} non-200={bad[(path, close)]} failed={failed[(path, close)]} "
              f"p50 {percentile(values, 50):.2f} ms, p90 {percentile(values, 90):.2f} ms, "
              f"p99 {percentile(values, 99):.2f} ms, max {values[-1] if values else float('nan'):.2f} ms")


if __name__ == "__main__":
    main()
