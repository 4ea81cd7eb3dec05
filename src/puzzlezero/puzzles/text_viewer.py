"""SVG drawing of any puzzle's text picture: the board a puzzle without a viewer of its own gets."""

from __future__ import annotations

from xml.sax.saxutils import escape, quoteattr

__all__ = ["text_svg"]

_BOARD = "#3b3f46"
_TEXT = "#f2efe8"


def text_svg(text: str, size: int = 300, label: str = "puzzle") -> str:
    """A standalone ``<svg>`` showing ``text`` (``Puzzle.render_text``) line by line in a monospaced
    font on a dark rounded board, ``size`` pixels wide, scaled so that the longest line fits.

    Each line is one ``<text>`` element with ``xml:space="preserve"``, so columns stay aligned.
    """
    lines = text.splitlines() or [""]
    cols = max(1, *(len(line) for line in lines))
    char_w, line_h, pad = 60.0, 110.0, 40.0  # a monospaced glyph is about 0.6 em of 100 units
    width = cols * char_w + 2 * pad
    height = len(lines) * line_h + 2 * pad
    parts = [
        f'<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 {width:g} {height:g}" width="{size}" '
        f'height="{size * height / width:.0f}" role="img" aria-label={quoteattr(label)}>',
        f'<rect x="0" y="0" width="{width:g}" height="{height:g}" rx="16" fill="{_BOARD}"/>',
    ]
    for i, line in enumerate(lines):
        y = pad + (i + 0.5) * line_h
        parts.append(
            f'<text x="{pad:g}" y="{y:g}" font-family="monospace" font-size="100" fill="{_TEXT}" '
            f'dominant-baseline="central" xml:space="preserve">{escape(line)}</text>'
        )
    parts.append("</svg>")
    return "\n".join(parts)
