"""Unpack a document (a stand-in)."""
import sys


def main():
    print("unpacked", *sys.argv[1:])


if __name__ == "__main__":
    main()
