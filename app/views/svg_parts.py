"""Shared pieces of the SVG pictures: number and text formatting, ticks, the document head."""

from __future__ import annotations

import math
from xml.sax.saxutils import escape, quoteattr

FONT = "font-family='DejaVu Sans, Arial, sans-serif' font-size='11'"
SERIES_COLOURS = ("#d62728", "#1f77b4", "#ff7f0e", "#2ca02c", "#9467bd", "#8c564b", "#7f7f7f")
ROLE_COLOURS = {"tuned": "#d62728", "baseline": "#1f77b4", "bound": "#555555", "tiling": "#ff7f0e"}


def num(x: float) -> str:
    """Coordinates with two decimals: enough for a screen, small files."""
    return f"{x:.2f}".rstrip("0").rstrip(".") if math.isfinite(x) else "0"


def data(x: float) -> str:
    """Values in data-* attributes: 6 significant figures, for scripts reading them back."""
    return f"{x:.6g}"


def text(s: object) -> str:
    """Text content, XML-escaped."""
    return escape(str(s))


def attr(s: object) -> str:
    """An attribute value, quoted and escaped."""
    return quoteattr(str(s))


def fmt_us(time_us: float) -> str:
    """A duration for labels: 3 significant figures, in us (ms above 10 000 us)."""
    if time_us >= 10_000:
        return f"{time_us / 1000:.4g} ms"
    return f"{time_us:.4g} us"


def nice_step(span: float, target_ticks: int) -> float:
    """A 1/2/5 x 10^n tick step giving about ``target_ticks`` ticks over ``span``."""
    if span <= 0:
        return 1.0
    raw = span / max(target_ticks, 1)
    mag = 10.0 ** math.floor(math.log10(raw))
    for mult in (1, 2, 5, 10):
        if raw <= mult * mag:
            return mult * mag
    return 10 * mag


def svg_open(width: float, height: float, css_class: str, title: str, id_prefix: str) -> str:
    """The opening tag of a standalone SVG document, its title and a white background."""
    return (
        f"<svg xmlns='http://www.w3.org/2000/svg' class={attr(css_class)} "
        f"id={attr(id_prefix + css_class)} width='{num(width)}' height='{num(height)}' "
        f"viewBox='0 0 {num(width)} {num(height)}' role='img' {FONT}>"
        f"<title>{text(title)}</title>"
        f"<rect class='background' width='100%' height='100%' fill='#ffffff'/>"
    )
