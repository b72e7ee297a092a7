"""The eight surrounding cells, with edges joined to the opposite edge."""


def solve(grid):
    h, w = len(grid), len(grid[0])
    out = []
    for r in range(h):
        row = []
        for c in range(w):
            n = 0
            for dr in (-1, 0, 1):
                for dc in (-1, 0, 1):
                    if dr or dc:
                        n += grid[(r + dr) % h][(c + dc) % w]
            row.append(n)
        out.append(row)
    return out
