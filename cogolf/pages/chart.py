"""The cumulative score chart: coordinates computed here, drawn as SVG by a template
(no script, no inline style), so a finished page and a stand-alone file show it."""

from __future__ import annotations

from dataclasses import dataclass, field

WIDTH = 360
HEIGHT = 120
PAD = 18


@dataclass
class Series:
    label: str
    slot: int
    points: list[tuple[float, float, int]] = field(default_factory=list)  # x, y, value

    @property
    def polyline(self) -> str:
        return " ".join(f"{x:.1f},{y:.1f}" for x, y, _ in self.points)


@dataclass
class Chart:
    width: int
    height: int
    zero_y: float
    series: list[Series]
    ticks: list[tuple[float, int]]  # x of each hole, its number
    low: int
    high: int


def cumulative_chart(points: list[list[int]], holes: int, labels: list[str]) -> Chart:
    """Both seats' running scores after each resolved hole, starting from 0 before hole 1."""
    holes = max(holes, len(points), 1)
    values = [0] + [v for p in points for v in p]
    low, high = min(values), max(values)
    if low == high:
        low, high = low - 1, high + 1
    span_x = (WIDTH - 2 * PAD) / holes
    span_y = (HEIGHT - 2 * PAD) / (high - low)

    def y(v: int) -> float:
        return HEIGHT - PAD - (v - low) * span_y

    series = []
    for slot in (0, 1):
        s = Series(label=labels[slot] if slot < len(labels) else f"seat {slot}", slot=slot)
        s.points.append((PAD, y(0), 0))
        for i, p in enumerate(points, start=1):
            s.points.append((PAD + i * span_x, y(p[slot]), p[slot]))
        series.append(s)
    ticks = [(PAD + i * span_x, i) for i in range(1, holes + 1)]
    return Chart(WIDTH, HEIGHT, y(0), series, ticks, low, high)
