"""Fail with a long traceback: the end of stderr carries the signal."""


def level(n: int) -> None:
    if n == 0:
        raise ValueError("the input table is empty: nothing to report")
    level(n - 1)


print("starting")
level(40)
