"""Write a small report, a JSON summary and a PNG badge into the working directory."""
import argparse
import json
import os
import struct
import sys
import zlib

from fmt_helpers import title  # sibling import (the script's folder is on sys.path)
from scripts.fmt_helpers import title as title2  # skill-root import (PYTHONPATH is the skill root)

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)


def png(width: int, height: int, rgb: tuple) -> bytes:
    def chunk(kind: bytes, data: bytes) -> bytes:
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data) & 0xFFFFFFFF)

    raw = b"".join(b"\x00" + bytes(rgb) * width for _ in range(height))
    header = struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0)
    return b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", header) + chunk(b"IDAT", zlib.compress(raw)) + chunk(b"IEND", b"")


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__)
    p.add_argument("name")
    p.add_argument("--style", default="plain")
    a = p.parse_args()
    assert title(a.name) == title2(a.name)
    with open(os.path.join(ROOT, "cards", "greeting.txt"), encoding="utf-8") as f:
        greeting = f.read().strip().format(name=title(a.name))
    with open(os.path.join(ROOT, "templates", "report.md.tmpl"), encoding="utf-8") as f:
        report = f.read().format(name=title(a.name), greeting=greeting, style=a.style)
    with open("report.md", "w", encoding="utf-8") as f:
        f.write(report)
    os.makedirs(os.path.join("dist", "data"), exist_ok=True)
    with open(os.path.join("dist", "data", "summary.json"), "w", encoding="utf-8") as f:
        json.dump({"name": title(a.name), "style": a.style, "chars": len(report)}, f, ensure_ascii=False)
    with open("badge.png", "wb") as f:
        f.write(png(16, 16, (0x42, 0x85, 0xF4)))
    print("writing report for", title(a.name), file=sys.stderr)
    print(f"report for {title(a.name)}: report.md, dist/data/summary.json, badge.png")
    return 0


if __name__ == "__main__":
    sys.exit(main())
