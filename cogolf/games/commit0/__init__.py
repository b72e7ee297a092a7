"""Commit-0: implement a whole Python library from its stubs.

A task is a library skeleton (every function and method body replaced by a stub,
signatures and docstrings kept), the library's own test suite kept hidden, and
the reference list of test ids that pass on the original. A submission scores
the fraction of reference ids that pass against it.
"""
