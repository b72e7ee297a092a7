"""Replacing every function and method body with a stub, using `ast`.

Signatures, decorators, docstrings, classes and module-level statements stay;
each body becomes its docstring (if any) and a `raise NotImplementedError` whose
message names the function, so that an import that needs a function at import
time can be traced back to it and that function kept (see `prepare`).
"""

from __future__ import annotations

import ast
from dataclasses import dataclass, field

STUB_MARK = "cogolf-stub:"


@dataclass
class StubbedModule:
    source: str
    stubbed: list[str] = field(default_factory=list)  # qualnames whose bodies were replaced


def stub_marker(module: str, qualname: str) -> str:
    return f"{STUB_MARK} {module}:{qualname}"


def stub_source(source: str, module: str, keep: frozenset[str] = frozenset()) -> StubbedModule:
    """Stub every function in `source` (module name `module`) except qualnames in `keep`.

    Raises SyntaxError when `source` does not parse.
    """
    tree = ast.parse(source)
    stubber = _Stubber(module, keep)
    stubber.visit(tree)
    ast.fix_missing_locations(tree)
    return StubbedModule(source=ast.unparse(tree) + "\n", stubbed=stubber.stubbed)


class _Stubber(ast.NodeTransformer):
    def __init__(self, module: str, keep: frozenset[str]) -> None:
        self.module = module
        self.keep = keep
        self.scope: list[str] = []
        self.stubbed: list[str] = []

    def visit_ClassDef(self, node: ast.ClassDef) -> ast.AST:
        self.scope.append(node.name)
        self.generic_visit(node)
        self.scope.pop()
        return node

    def visit_FunctionDef(self, node: ast.FunctionDef) -> ast.AST:
        return self._stub(node)

    def visit_AsyncFunctionDef(self, node: ast.AsyncFunctionDef) -> ast.AST:
        return self._stub(node)

    def _stub(self, node: ast.FunctionDef | ast.AsyncFunctionDef) -> ast.AST:
        qualname = ".".join([*self.scope, node.name])
        if qualname in self.keep:
            return node  # kept whole, nested functions included
        body: list[ast.stmt] = []
        first = node.body[0] if node.body else None
        if (
            isinstance(first, ast.Expr)
            and isinstance(first.value, ast.Constant)
            and isinstance(first.value.value, str)
        ):
            body.append(first)
        message = ast.Constant(stub_marker(self.module, qualname))
        call = ast.Call(func=ast.Name("NotImplementedError", ast.Load()), args=[message],
                        keywords=[])
        body.append(ast.Raise(exc=call, cause=None))
        node.body = body
        self.stubbed.append(qualname)
        return node
