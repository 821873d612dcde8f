"""Unpacks a zip (a presentation) into a folder: python scripts/unpack.py DECK OUTDIR."""
import os
import sys
import zipfile


def main():
    src, out = sys.argv[1], sys.argv[2]
    with zipfile.ZipFile(src) as z:
        names = [n for n in z.namelist() if not n.endswith("/")]
        for n in names:
            dest = os.path.normpath(os.path.join(out, n))
            if os.path.isabs(n) or dest.startswith(".."):
                sys.exit(f"unsafe member {n!r}")
            os.makedirs(os.path.dirname(dest), exist_ok=True)
            with open(dest, "wb") as f:
                f.write(z.read(n))
    print(f"unpacked {len(names)} parts of {src} into {out}/")


if __name__ == "__main__":
    main()
