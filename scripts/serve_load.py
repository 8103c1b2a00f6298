#!/usr/bin/env python3
"""Load and clock checks of `blis serve`, with the Python standard library only.

  scripts/serve_load.py --url http://127.0.0.1:8000 --clients 500 --max-tokens 32
      500 concurrent streaming completions, started together: every one must
      get exactly --max-tokens token chunks and [DONE]; the server's
      vllm:request_success_total and vllm:generation_tokens_total must grow by
      as much. Prints one summary line; exit status 1 on any error or lost
      request.

  scripts/serve_load.py --url ... --drift --max-tokens 3000
      One long stream (run the server at --time-scale 1): the wall time from
      the request to [DONE] against the simulated E2E latency the server
      reports for it (vllm:e2e_request_latency_seconds), and the server's own
      lateness of token delivery (blis:delivery_lag_*). docs/serve.md.
"""
import argparse
import http.client
import json
import re
import sys
import threading
import time
import urllib.parse


def metrics(host, port):
    conn = http.client.HTTPConnection(host, port, timeout=60)
    conn.request("GET", "/metrics")
    text = conn.getresponse().read().decode()
    conn.close()
    out = {}
    for line in text.splitlines():
        if line.startswith("#") or not line.strip():
            continue
        m = re.match(r"^([a-zA-Z_:][a-zA-Z0-9_:]*)(\{[^}]*\})? (\S+)$", line)
        if not m:
            raise SystemExit(f"serve_load: not Prometheus text: {line!r}")
        out[m.group(1) + (m.group(2) or "")] = float(m.group(3))
    return out


def pick(figures, name, label=""):
    for key, value in figures.items():
        if key.startswith(name + "{") and label in key or key == name:
            return value
    return 0.0


def stream(host, port, body, result):
    """One streaming completion; fills result with counts and times."""
    start = time.monotonic()
    try:
        conn = http.client.HTTPConnection(host, port, timeout=600)
        conn.request("POST", "/v1/completions", body=json.dumps(body), headers={"Content-Type": "application/json"})
        resp = conn.getresponse()
        if resp.status != 200:
            result["error"] = f"HTTP {resp.status}: {resp.read()[:200]!r}"
            return
        tokens, done, first = 0, False, None
        while True:
            line = resp.readline()
            if not line:
                break
            line = line.decode().strip()
            if not line.startswith("data: "):
                continue
            data = line[6:]
            if data == "[DONE]":
                done = True
                continue
            chunk = json.loads(data)
            if chunk.get("choices"):
                tokens += 1
                if first is None:
                    first = time.monotonic()
        conn.close()
        result.update(tokens=tokens, done=done, ttft=(first or start) - start, e2e=time.monotonic() - start)
    except Exception as e:  # noqa: BLE001 - every failure is a failed request
        result["error"] = repr(e)


def percentile(values, p):
    if not values:
        return 0.0
    values = sorted(values)
    return values[min(len(values) - 1, int(p / 100 * len(values)))]


def load(host, port, args):
    before = metrics(host, port)
    results = [dict() for _ in range(args.clients)]
    barrier = threading.Barrier(args.clients)

    def client(i):
        barrier.wait()
        words = " ".join(f"w{(i * 7 + k) % 97}" for k in range(args.prompt_words))
        stream(host, port, {"prompt": "Shared system prompt of the load test. " + words,
                            "max_tokens": args.max_tokens, "stream": True}, results[i])

    threads = [threading.Thread(target=client, args=(i,)) for i in range(args.clients)]
    start = time.monotonic()
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    wall = time.monotonic() - start
    after = metrics(host, port)
    errors = [r["error"] for r in results if "error" in r]
    short = [r for r in results if "error" not in r and (r["tokens"] != args.max_tokens or not r["done"])]
    served = pick(after, "vllm:request_success_total", 'finished_reason="length"') - \
        pick(before, "vllm:request_success_total", 'finished_reason="length"')
    generated = pick(after, "vllm:generation_tokens_total") - pick(before, "vllm:generation_tokens_total")
    ok = [r for r in results if "error" not in r]
    print(f"clients {args.clients}, max_tokens {args.max_tokens}: {len(ok) - len(short)} complete streams, "
          f"{len(errors)} errors, {len(short)} short or without [DONE]; server counted {served:.0f} requests, "
          f"{generated:.0f} tokens; wall {wall:.2f} s; client TTFT p50 {percentile([r['ttft'] for r in ok], 50):.3f} s "
          f"p99 {percentile([r['ttft'] for r in ok], 99):.3f} s; "
          f"server lag max {pick(after, 'blis:delivery_lag_max_seconds') * 1000:.1f} ms "
          f"mean {pick(after, 'blis:delivery_lag_mean_seconds') * 1000:.2f} ms")
    for e in errors[:5]:
        print("error:", e, file=sys.stderr)
    lost = args.clients - served
    return 0 if not errors and not short and lost == 0 and generated == args.clients * args.max_tokens else 1


def drift(host, port, args):
    before = metrics(host, port)
    result = {}
    stream(host, port, {"prompt": "drift", "max_tokens": args.max_tokens, "stream": True}, result)
    after = metrics(host, port)
    if "error" in result:
        print("error:", result["error"], file=sys.stderr)
        return 1
    sim_e2e = pick(after, "vllm:e2e_request_latency_seconds_sum") - pick(before, "vllm:e2e_request_latency_seconds_sum")
    sim_ttft = pick(after, "vllm:time_to_first_token_seconds_sum") - \
        pick(before, "vllm:time_to_first_token_seconds_sum")
    wall_decode = result["e2e"] - result["ttft"]
    print(f"one stream of {result['tokens']} tokens: wall E2E {result['e2e']:.4f} s, simulated E2E {sim_e2e:.4f} s, "
          f"drift {(result['e2e'] - sim_e2e) * 1000:+.2f} ms; first token to [DONE]: wall {wall_decode:.4f} s, "
          f"simulated {sim_e2e - sim_ttft:.4f} s, drift {(wall_decode - (sim_e2e - sim_ttft)) * 1000:+.2f} ms; "
          f"server lag max {pick(after, 'blis:delivery_lag_max_seconds') * 1000:.2f} ms "
          f"mean {pick(after, 'blis:delivery_lag_mean_seconds') * 1000:.3f} ms")
    return 0


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--url", default="http://127.0.0.1:8000")
    p.add_argument("--clients", type=int, default=500)
    p.add_argument("--max-tokens", type=int, default=32)
    p.add_argument("--prompt-words", type=int, default=64)
    p.add_argument("--drift", action="store_true", help="one long stream: wall time against simulated time")
    args = p.parse_args()
    u = urllib.parse.urlparse(args.url)
    host, port = u.hostname, u.port or 80
    sys.exit(drift(host, port, args) if args.drift else load(host, port, args))


if __name__ == "__main__":
    main()
