"""The asyncio driver: turns engine effects into sends, timers and sandbox calls."""
