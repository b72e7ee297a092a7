"""Cogolf: two seats write code and tests for a drawn hole, judged against hidden references."""
