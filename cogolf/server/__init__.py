"""The Cogolf server: a starlette app, served by uvicorn, hosting many live matches."""
