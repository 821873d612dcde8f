"""Packs a folder into a zip (an Office document): python scripts/pack.py DIR OUT.

The archive is reproducible: "[Content_Types].xml" first, then every other
file in path order, each stored with a fixed time, so the same tree always
packs to the same bytes.
"""
import os
import sys
import zipfile

FIRST = "[Content_Types].xml"


def main():
    src, out = sys.argv[1], sys.argv[2]
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
    # The working directory is the skill's own folder, named as the skill.
    print(f"packed {len(names)} parts into {out} in {os.path.basename(os.getcwd())}")


if __name__ == "__main__":
    main()
