#!/usr/bin/env python3
import re
import sys


def syllables(word):
    w = word.lower()
    groups = re.findall(r"[aeiouy]+", w)
    n = len(groups) - (1 if w.endswith("e") and len(groups) > 1 else 0)
    return max(1, n)


text = re.sub(r"```.*?```", " ", sys.stdin.read(), flags=re.S)
sentences = [s for s in re.split(r"(?<=[.!?])\s+", text) if re.search(r"\w", s)]
words = re.findall(r"[A-Za-z']+", text)
syl = sum(syllables(w) for w in words)
W, S = max(1, len(words)), max(1, len(sentences))
ease = 206.835 - 1.015 * W / S - 84.6 * syl / W
grade = 0.39 * W / S + 11.8 * syl / W - 15.59
print(f"reading ease {ease:.0f}, grade {grade:.1f}, {W / S:.1f} words per sentence")
for s in sorted(sentences, key=lambda s: -len(s.split()))[:5]:
    print(f"- ({len(s.split())} words) {s.strip()[:160]}")
