/**
 * The known key nearest to a mistyped one, for a "did you mean" hint — only when it is close
 * enough to be a typo: at most 2 edits, and at most a third of the key's length (so that "ab"
 * never suggests "id"). Ties go to the first candidate.
 */
export function closestKey(key: string, candidates: readonly string[]): string | undefined {
  const limit = Math.min(2, Math.ceil(key.length / 3));
  let best: string | undefined;
  let bestDistance = limit + 1;
  for (const candidate of candidates) {
    // cheap bound first: a 10,000-character key is never compared character by character
    if (Math.abs(candidate.length - key.length) >= bestDistance) continue;
    const distance = editDistance(key.toLowerCase(), candidate.toLowerCase());
    if (distance < bestDistance) {
      best = candidate;
      bestDistance = distance;
    }
  }
  return best;
}

/**
 * Damerau–Levenshtein distance (optimal string alignment): insertions, deletions, substitutions
 * and swaps of two neighbouring characters each count 1 ("paginaton" → "pagination" is 1,
 * "pagniation" → "pagination" is 1). Counted in UTF-16 code units, which is enough for a hint.
 */
export function editDistance(a: string, b: string): number {
  let before = new Array<number>(b.length + 1).fill(0);
  let previous = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    const current = [i];
    for (let j = 1; j <= b.length; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      current[j] = Math.min(previous[j] + 1, current[j - 1] + 1, previous[j - 1] + cost);
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1])
        current[j] = Math.min(current[j], before[j - 2] + 1);
    }
    before = previous;
    previous = current;
  }
  return previous[b.length];
}
