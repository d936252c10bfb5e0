"""Speaker labels: the names that open the lines of a dialogue (``Melanie: …``), and a query without them.

In notes of conversations (one ``Name: text`` line per turn) every chunk says both speakers' names, so a
question that names one ("What has Melanie painted?") gets a part of its embedding from a word that every chunk
shares: a small model then prefers the chunks that say the name most often over the chunks that say what was
painted. The hybrid search therefore embeds a question that names one speaker a second time without that name
(``query.hybrid.drop_speaker_names``) and ranks its vector side by that embedding; the keyword side still
searches the whole question (there the name is a rare-enough word that the rarity weights already discount).
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterable

__all__ = ["LABEL_PATTERN", "speaker_labels", "without_speakers"]

#: A speaker's label: one to three words (a letter first), as ``Melanie`` or ``Dr. Mary Smith``.
LABEL_PATTERN = r"[^\W\d_][\w'.-]*(?: [^\W\d_][\w'.-]*){0,2}"
# A label opening a line, then a colon and the turn's text.
_LABEL = re.compile(rf"^[ \t]*(?:[-*][ \t]+)?({LABEL_PATTERN}):[ \t]+\S", re.MULTILINE)

#: A dialogue: at least two labels, each opening at least this many of the texts' lines.
MIN_LINES = 3


def speaker_labels(texts: Iterable[str], *, min_lines: int = MIN_LINES) -> set[str]:
    """The speakers of the dialogue in ``texts``: capitalised line labels (``Name:``) that each open at least
    ``min_lines`` lines, when at least two of them do (notes with one recurring field, ``Note: …``, are no
    dialogue); else an empty set."""
    counts = Counter(m.group(1) for t in texts for m in _LABEL.finditer(t) if m.group(1)[0].isupper())
    labels = {name for name, n in counts.items() if n >= min_lines}
    return labels if len(labels) >= 2 else set()


def without_speakers(query: str, labels: Iterable[str]) -> str | None:
    """``query`` without the one label it names (as written, a whole word, with a possessive ``'s``), or None
    when it names none of them, more than one (a question about what two speakers did together keeps their
    names), or nothing else is left."""
    named = [(name, pattern) for name in labels
             if (pattern := re.compile(rf"(?<![\w'-]){re.escape(name)}(?:['’]s)?(?![\w-])")).search(query)]
    if len(named) != 1:
        return None
    out = named[0][1].sub("", query)
    out = re.sub(r"\s+", " ", out).strip()
    return out if re.search(r"\w", out) else None
