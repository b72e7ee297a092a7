"""Adjacent means sharing a side: up, down, left and right."""


def solve(grid):
    h, w = len(grid), len(grid[0])
    out = []
    for r in range(h):
        row = []
        for c in range(w):
            n = 0
            for dr, dc in ((-1, 0), (1, 0), (0, -1), (0, 1)):
                rr, cc = r + dr, c + dc
                if 0 <= rr < h and 0 <= cc < w:
                    n += grid[rr][cc]
            row.append(n)
        out.append(row)
    return out
