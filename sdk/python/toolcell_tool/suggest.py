""""Did you mean ...?": the names a model probably meant, ranked as the host ranks them
(toolcell-schema's words/suggest.rs), so native messages match the host's."""

_MAX_COMPARED_CHARS = 64  # a model can send a megabyte as a "name"
_MIN_CONTAINED_CHARS = 3  # `to` is inside far too many names to mean anything


def name_distance(a, b):
    """Edit distance ignoring case; a swap of two neighbouring chars is one edit (OSA)."""
    a, b = a.lower(), b.lower()
    before = [0] * (len(b) + 1)
    previous = list(range(len(b) + 1))
    current = [0] * (len(b) + 1)
    for i, ca in enumerate(a):
        current[0] = i + 1
        for j, cb in enumerate(b):
            best = min(previous[j] + (ca != cb), previous[j + 1] + 1, current[j] + 1)
            if i > 0 and j > 0 and a[i - 1] == cb and ca == b[j - 1]:
                best = min(best, before[j - 1] + 1)
            current[j + 1] = best
        before, previous, current = previous, current, before
    return previous[len(b)]


def _rank(word, candidates):
    ranked = {(name_distance(word, candidate[:_MAX_COMPARED_CHARS]), candidate) for candidate in candidates}
    return sorted(ranked)


def _contains(word, candidate):
    word, candidate = word.lower(), candidate[:_MAX_COMPARED_CHARS].lower()
    shorter, longer = (word, candidate) if len(word) <= len(candidate) else (candidate, word)
    return len(shorter) >= _MIN_CONTAINED_CHARS and shorter in longer


def _is_close(word, candidate, distance):
    within_edits = distance <= max(len(candidate) // 3, 2)
    mostly_kept = distance * 2 < max(len(word), len(candidate))
    return (within_edits and mostly_kept) or _contains(word, candidate)


def closest(word, candidates, limit):
    """Candidates close enough to suggest, closest first, ties by name."""
    word = word[:_MAX_COMPARED_CHARS]
    close = [candidate for distance, candidate in _rank(word, candidates) if _is_close(word, candidate, distance)]
    return close[:limit]


def nearest(word, candidates, limit):
    """The `limit` nearest candidates, however far."""
    word = word[:_MAX_COMPARED_CHARS]
    return [candidate for _, candidate in _rank(word, candidates)][:limit]
