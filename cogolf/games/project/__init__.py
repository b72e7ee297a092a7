"""Project attempts: harden a prepared workspace, scored by hidden evaluator checks.

A task ships a template workspace, a prompt, evaluator tests, the command that
runs them, the report format it writes, a score map and a scale. An attempt
applies an entrant's changes to a fresh copy of the template, runs the
evaluator, and turns the failed-check count into points.
"""
