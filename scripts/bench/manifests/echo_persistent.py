# Persistent process echo: NDJSON {"id","args"} in, {"id","result"} out.
import json
import sys

for line in sys.stdin:
    request = json.loads(line)
    sys.stdout.write(json.dumps({"id": request["id"], "result": {"text": request["args"]["text"]}}) + "\n")
    sys.stdout.flush()
