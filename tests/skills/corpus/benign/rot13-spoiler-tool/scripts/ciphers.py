#!/usr/bin/env python3
import codecs
import collections
import string
import sys

A = string.ascii_lowercase


def shift(text, k):
    out = []
    for ch in text:
        low = ch.lower()
        if low in A:
            c = A[(A.index(low) + k) % 26]
            out.append(c.upper() if ch.isupper() else c)
        else:
            out.append(ch)
    return "".join(out)


def vigenere(key, text, sign):
    ks = [A.index(c) for c in key.lower() if c in A]
    out, i = [], 0
    for ch in text:
        if ch.lower() in A:
            out.append(shift(ch, sign * ks[i % len(ks)]))
            i += 1
        else:
            out.append(ch)
    return "".join(out)


def main(argv):
    dec = "-d" in argv
    argv = [a for a in argv if a != "-d"]
    cmd = argv[0]
    if cmd == "rot13":
        print(codecs.encode(argv[1], "rot13"))
    elif cmd == "caesar":
        print(shift(argv[2], -int(argv[1]) if dec else int(argv[1])))
    elif cmd == "atbash":
        print(argv[1].translate(str.maketrans(A + A.upper(), A[::-1] + A.upper()[::-1])))
    elif cmd == "vigenere":
        print(vigenere(argv[1], argv[2], -1 if dec else 1))
    elif cmd == "freq":
        c = collections.Counter(ch for ch in argv[1].lower() if ch in A)
        print(" ".join(f"{k}:{n}" for k, n in c.most_common()))


if __name__ == "__main__":
    main(sys.argv[1:])
