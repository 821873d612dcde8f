"""Replaces text in one file, in place: python scripts/edit.py FILE OLD NEW."""
import sys


def main():
    path, old, new = sys.argv[1], sys.argv[2], sys.argv[3]
    with open(path, encoding="utf-8") as f:
        text = f.read()
    if old not in text:
        sys.exit(f"{old!r} is not in {path}")
    with open(path, "w", encoding="utf-8", newline="") as f:
        f.write(text.replace(old, new))
    print(f"replaced {text.count(old)} occurrence(s) in {path}")


if __name__ == "__main__":
    main()
