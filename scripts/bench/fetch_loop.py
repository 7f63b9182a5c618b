"""Bench tool: GETs {"url"} {"count"} times with urllib (through HTTP_PROXY when
the environment names one) and prints the milliseconds of each fetch."""
import json
import sys
import time
import urllib.request

args = json.load(sys.stdin)
times = []
for _ in range(args["count"]):
    start = time.perf_counter()
    with urllib.request.urlopen(args["url"], timeout=10) as response:
        response.read()
    times.append((time.perf_counter() - start) * 1000)
print(json.dumps(times))
