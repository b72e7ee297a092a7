"""Reference: adjacent means the eight surrounding cells, diagonals included."""


def solve(grid):
    h, w = len(grid), len(grid[0])
    out = []
    for r in range(h):
        row = []
        for c in range(w):
            n = 0
            for dr in (-1, 0, 1):
                for dc in (-1, 0, 1):
                    rr, cc = r + dr, c + dc
                    if (dr or dc) and 0 <= rr < h and 0 <= cc < w:
                        n += grid[rr][cc]
            row.append(n)
        out.append(row)
    return out
