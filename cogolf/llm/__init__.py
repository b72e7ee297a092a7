"""LLM players: any chat model plays Cogolf and golf from a few lines of TOML.

Nothing here imports a provider client at module level: `openai` and
`anthropic` (the optional `cogolf[llm]` extra) are loaded only when an LLM
player is built, so the CLI, the server and scripted bots never pay for them.
"""
