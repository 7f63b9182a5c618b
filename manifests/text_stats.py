#!/usr/bin/env python3
"""text_stats: persistent process tool.

Protocol (newline-delimited JSON): one request per line on stdin,
{"id": ..., "args": {...}}; one answer per line on stdout, {"id": ..., "result": ...}
or {"id": ..., "error": {"message": ...}}. The working directory is the workspace root.
"""
import json
import os
import sys

MAX_FILE_BYTES = 16 * 1024 * 1024


def count(root: str, path: str) -> dict:
    if not isinstance(path, str) or path == "":
        raise ValueError("path must be a non-empty string")
    if os.path.isabs(path):
        raise ValueError("path must be relative to the workspace root")
    root_real = os.path.realpath(root)
    target = os.path.realpath(os.path.join(root_real, path))
    if os.path.commonpath([root_real, target]) != root_real:
        raise ValueError("path is outside the workspace")
    if not os.path.isfile(target):
        raise ValueError(f"{path} is not a file")
    size = os.path.getsize(target)
    if size > MAX_FILE_BYTES:
        raise ValueError(f"{path} is {size} bytes; text_stats reads files up to {MAX_FILE_BYTES} bytes")
    with open(target, "rb") as handle:
        data = handle.read(MAX_FILE_BYTES + 1)
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        raise ValueError(f"{path} is not UTF-8 text")
    return {
        "path": path,
        "lines": text.count("\n") + (1 if text and not text.endswith("\n") else 0),
        "words": len(text.split()),
        "chars": len(text),
        "bytes": len(data),
    }


def answer(request_line: str) -> dict:
    try:
        request = json.loads(request_line)
    except ValueError:
        # No id to answer to; the host only sends well-formed requests.
        return {"id": None, "error": {"message": "request is not JSON"}}
    request_id = request.get("id") if isinstance(request, dict) else None
    try:
        args = request.get("args") if isinstance(request, dict) else None
        if not isinstance(args, dict):
            raise ValueError("args must be an object")
        return {"id": request_id, "result": count(os.getcwd(), args.get("path"))}
    except (ValueError, OSError) as error:
        return {"id": request_id, "error": {"message": str(error)}}


def main() -> int:
    for line in sys.stdin:
        if not line.strip():
            continue
        sys.stdout.write(json.dumps(answer(line)) + "\n")
        sys.stdout.flush()
    return 0


if __name__ == "__main__":
    sys.exit(main())
