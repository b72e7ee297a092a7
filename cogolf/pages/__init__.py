"""Pages: the browser's view of matches, served by `cogolf serve` and written to files.

A match is read as plain journal records (the JSON the replay file and the
spectators' `watch` feed carry, both cut by `server.disclosure`), folded into a
view model (`view`), and rendered by autoescaped Jinja templates (`render`) or as
text (`explain`). The same view model feeds a live page, a finished page, a
stand-alone HTML file and the terminal, so they never disagree.
"""
