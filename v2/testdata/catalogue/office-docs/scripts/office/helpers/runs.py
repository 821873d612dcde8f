"""Merge adjacent runs: a helper module, not an entry point."""


def merge(runs):
    return "".join(runs)
