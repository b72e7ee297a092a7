"""The ladder: bots registered once stay connected, get matched and rated all day.

A pure core (pairing and ratings live in `cogolf.league.pairing` and `ratings`, shared
with adaptive nights) and thin adapters: the database (`schema`, `db`, `store`), the
server's routes and loop (`service`), the bot's side (`client`), pages and standings.
"""
