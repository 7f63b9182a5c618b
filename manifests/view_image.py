#!/usr/bin/env python3
"""view_image: one-shot process tool with `stdout: output`.

Reads {"path": ...} as JSON on stdin and prints one tool output envelope
(SPEC section 5.1): {"toolhost/output": {"kind": "rich", "parts": [text, image]}},
or a model_error when the file is missing, outside the workspace or not an image.
The working directory is the workspace root. The format is read from the file's
own bytes (its signature), never from its name.
"""
import base64
import json
import os
import struct
import sys

MAX_FILE_BYTES = 8 * 1024 * 1024


class NotAnImage(ValueError):
    pass


def dimensions(data: bytes):
    """(format, MIME type, width, height) from the image's own header."""
    if data.startswith(b"\x89PNG\r\n\x1a\n") and data[12:16] == b"IHDR":
        width, height = struct.unpack(">II", data[16:24])
        return "PNG", "image/png", width, height
    if data[:6] in (b"GIF87a", b"GIF89a"):
        width, height = struct.unpack("<HH", data[6:10])
        return "GIF", "image/gif", width, height
    if data.startswith(b"\xff\xd8"):
        return ("JPEG", "image/jpeg") + jpeg_size(data)
    if data[:4] == b"RIFF" and data[8:12] == b"WEBP":
        return ("WebP", "image/webp") + webp_size(data)
    raise NotAnImage("it is not a PNG, JPEG, GIF or WebP image")


def jpeg_size(data: bytes):
    # Walk the marker segments to the first start-of-frame (SOF0..SOF15 but DHT, JPG, DAC).
    offset = 2
    while offset + 9 <= len(data):
        if data[offset] != 0xFF:
            raise NotAnImage("its JPEG markers are damaged")
        marker = data[offset + 1]
        if marker in (0xD8, 0x01) or 0xD0 <= marker <= 0xD7:
            offset += 2
            continue
        (length,) = struct.unpack(">H", data[offset + 2 : offset + 4])
        if 0xC0 <= marker <= 0xCF and marker not in (0xC4, 0xC8, 0xCC):
            height, width = struct.unpack(">HH", data[offset + 5 : offset + 9])
            return width, height
        offset += 2 + length
    raise NotAnImage("it has no JPEG frame header")


def webp_size(data: bytes):
    chunk = data[12:16]
    if chunk == b"VP8X":
        width = 1 + int.from_bytes(data[24:27], "little")
        height = 1 + int.from_bytes(data[27:30], "little")
        return width, height
    if chunk == b"VP8L":
        bits = int.from_bytes(data[21:25], "little")
        return 1 + (bits & 0x3FFF), 1 + ((bits >> 14) & 0x3FFF)
    if chunk == b"VP8 ":
        width, height = struct.unpack("<HH", data[26:30])
        return width & 0x3FFF, height & 0x3FFF
    raise NotAnImage("its WebP header is not one this tool reads")


def refusal(text: str) -> dict:
    return {"toolhost/output": {"kind": "model_error", "parts": [{"type": "text", "text": text}]}}


def view(root: str, path: str) -> dict:
    root_real = os.path.realpath(root)
    target = os.path.realpath(os.path.join(root_real, path))
    if os.path.isabs(path) or os.path.commonpath([root_real, target]) != root_real:
        return refusal(f"{path} is outside the workspace; give a path relative to the workspace root.")
    if not os.path.isfile(target):
        return refusal(f"{path} is not a file in the workspace.")
    size = os.path.getsize(target)
    if size > MAX_FILE_BYTES:
        return refusal(f"{path} is {size} bytes; view_image reads images up to {MAX_FILE_BYTES} bytes.")
    with open(target, "rb") as handle:
        data = handle.read(MAX_FILE_BYTES + 1)
    try:
        kind, mime_type, width, height = dimensions(data)
    except (NotAnImage, struct.error) as error:
        return refusal(f"{path} cannot be shown: {error if isinstance(error, NotAnImage) else 'its header is truncated'}.")
    description = f"{path}: {kind} image, {width}x{height} pixels, {len(data)} bytes."
    return {
        "toolhost/output": {
            "kind": "rich",
            "parts": [
                {"type": "text", "text": description},
                {"type": "image", "mimeType": mime_type, "data": base64.b64encode(data).decode("ascii")},
            ],
        }
    }


def main() -> int:
    args = json.load(sys.stdin)
    sys.stdout.write(json.dumps(view(os.getcwd(), args["path"])))
    return 0


if __name__ == "__main__":
    sys.exit(main())
