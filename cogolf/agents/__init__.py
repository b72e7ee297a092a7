"""Coding agents playing the offline games: the model gateway, the walled agent run, the
attempt from a fresh workspace to its score, and the built-in tool-calling agent."""
