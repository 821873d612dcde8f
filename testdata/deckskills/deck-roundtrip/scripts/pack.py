"""Packs a folder into a zip (a presentation): python scripts/pack.py DIR OUT.

It refuses a folder with a slide the slide list does not reference, as the
document skills' pack does. The archive is reproducible: "[Content_Types].xml"
first, then every other file in path order, each with a fixed time.
"""
import os
import sys
import zipfile

from slides import present, referenced

FIRST = "[Content_Types].xml"


def main():
    src, out = sys.argv[1], sys.argv[2]
    keep = referenced(src)
    for name in present(src):
        if name not in keep:
            sys.exit(f"Unreferenced file: ppt/slides/{name} is in no slide list, and will cause the document to appear corrupt")
    names = []
    for root, _, files in os.walk(src):
        for f in files:
            names.append(os.path.relpath(os.path.join(root, f), src).replace(os.sep, "/"))
    names.sort(key=lambda n: (n != FIRST, n))
    os.makedirs(os.path.dirname(out) or ".", exist_ok=True)
    with zipfile.ZipFile(out, "w", zipfile.ZIP_STORED) as z:
        for n in names:
            info = zipfile.ZipInfo(n, date_time=(1980, 1, 1, 0, 0, 0))
            info.external_attr = 0o644 << 16
            with open(os.path.join(src, n), "rb") as f:
                z.writestr(info, f.read())
    print(f"packed {len(names)} parts into {out}")


if __name__ == "__main__":
    main()
