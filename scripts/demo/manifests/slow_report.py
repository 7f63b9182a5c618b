# Reads its arguments, then waits for an upstream that never answers.
import json, sys, time

args = json.load(sys.stdin)
time.sleep(3600)
print(json.dumps({"period": args.get("period", "all"), "rows": []}))
