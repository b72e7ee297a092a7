"""Code golf as a solo game: 18 holes in three languages, scored by bytes and correctness.

`holes` loads the public and private halves of the course, `courses` states each
language's submission contract, `runners` execute submissions behind the sandbox
walls, `scoring` and `attempts` turn runs into scores, `results` and `leaderboard`
turn score files into rankings, and `solo` is the pure core of a live solo match.
"""
