"""League nights: a night file, its round-robin schedule, the executors that play it, and the
standings recomputed from the replay files alone."""
