"""Mutation twins made by rule, for the evaluators written for them (PHPUnit, Go).

The pytest twins read a hidden suite with `ast`; the shipped PHPUnit and Go
evaluators are ours instead, written so that a twin can be made mechanically from
their checks (`php`, `go`: which checks, which changes). `plant` writes a run's
twins into its copy of the evaluator; `judge` reads the report back with the
shared verdict of `cogolf.evaluation.twins`.
"""

from cogolf.evaluation.ruletwins.plant import RULES, Planted, Rule, Verdict, judge, plant

__all__ = ["RULES", "Planted", "Rule", "Verdict", "judge", "plant"]
