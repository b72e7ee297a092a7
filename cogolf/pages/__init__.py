"""Web pages: server-rendered HTML views of matches and league nights."""
