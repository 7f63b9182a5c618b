#!/usr/bin/env python3
"""delete_path: one-shot process tool.

Protocol: the arguments arrive as one JSON object on stdin; the answer is one
JSON value on stdout; a failure is a message on stderr and exit status 1.
The working directory is the workspace root (the first root of the manifest).
"""
import json
import os
import shutil
import stat
import sys


class Refused(Exception):
    pass


def delete(root: str, path: str, recursive: bool) -> dict:
    if os.path.isabs(path):
        raise Refused("path must be relative to the workspace root")
    root_real = os.path.realpath(root)
    target = os.path.normpath(os.path.join(root_real, path))
    # Check the parent's real path: the final component may itself be a symlink,
    # which is deleted as a link, never followed.
    parent_real = os.path.realpath(os.path.dirname(target))
    target = os.path.join(parent_real, os.path.basename(target))
    if target == root_real or os.path.normpath(target) == root_real:
        raise Refused("refusing to delete the workspace root itself")
    if os.path.commonpath([root_real, target]) != root_real:
        raise Refused("path is outside the workspace")
    try:
        info = os.lstat(target)
    except FileNotFoundError:
        raise Refused(f"{path} does not exist")
    if stat.S_ISLNK(info.st_mode):
        os.unlink(target)
        kind = "symlink"
    elif stat.S_ISDIR(info.st_mode):
        if not recursive:
            try:
                os.rmdir(target)
            except OSError:
                raise Refused(f"{path} is a folder that is not empty; pass recursive: true to delete it")
        else:
            shutil.rmtree(target)
        kind = "directory"
    else:
        os.unlink(target)
        kind = "file" if stat.S_ISREG(info.st_mode) else "other"
    return {"path": path, "type": kind}


def main() -> int:
    try:
        args = json.load(sys.stdin)
        if not isinstance(args, dict) or not isinstance(args.get("path"), str):
            raise Refused("arguments must be an object with a string path")
        result = delete(os.getcwd(), args["path"], bool(args.get("recursive", False)))
    except (Refused, OSError, ValueError) as error:
        print(f"delete_path: {error}", file=sys.stderr)
        return 1
    json.dump(result, sys.stdout)
    return 0


if __name__ == "__main__":
    sys.exit(main())
