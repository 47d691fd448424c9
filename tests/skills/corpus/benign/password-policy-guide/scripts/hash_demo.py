#!/usr/bin/env python3
"""How to hash and verify a password with Argon2id (argon2-cffi)."""
import getpass

from argon2 import PasswordHasher
from argon2.exceptions import VerifyMismatchError

ph = PasswordHasher(time_cost=3, memory_cost=64 * 1024, parallelism=1)  # OWASP 2023 baseline


def register(password: str) -> str:
    return ph.hash(password)  # store this string; it contains salt and parameters


def login(stored: str, password: str) -> bool:
    try:
        ph.verify(stored, password)
    except VerifyMismatchError:
        return False
    if ph.check_needs_rehash(stored):
        print("parameters changed: re-hash and store the new hash")
    return True


if __name__ == "__main__":
    h = register(getpass.getpass("choose a demo password: "))
    print("stored:", h)
    print("verify:", login(h, getpass.getpass("type it again: ")))
