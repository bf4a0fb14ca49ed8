"""Claim cells that record their assertions instead of raising them.

In the run that stands for other machines every claim must be measured, not only the
ones before the first that misses. ``instrument`` rewrites each assert statement of a
claim cell into a call of the recorder that a first cell defines: for a comparison
(``a < x < b``) it records every operand and the operators, for anything else the
condition's truth. Parts of an ``and`` are recorded one by one. Each record says the
cell, the line and the source of the condition, and goes to the JSON-lines file that
``RECORD_VARIABLE`` names in the kernel's environment.
"""

from __future__ import annotations

import ast
import copy

import nbformat

RECORD_VARIABLE = 'BOOK_CLAIMS_RECORD'
RECORDER = '_book_claim_record'

OPERATORS = {
    ast.Lt: '<',
    ast.LtE: '<=',
    ast.Gt: '>',
    ast.GtE: '>=',
    ast.Eq: '==',
    ast.NotEq: '!=',
    ast.Is: 'is',
    ast.IsNot: 'is not',
    ast.In: 'in',
    ast.NotIn: 'not in',
}

RECORDER_SOURCE = f"""\
import json as _json, operator as _operator, os as _os
_book_claim_ops = {{'<': _operator.lt, '<=': _operator.le, '>': _operator.gt,
                   '>=': _operator.ge, '==': _operator.eq, '!=': _operator.ne,
                   'is': _operator.is_, 'is not': _operator.is_not,
                   'in': lambda a, b: a in b, 'not in': lambda a, b: a not in b}}
_book_claim_seen = {{}}


def _book_claim_number(value):
    try:
        return float(value)
    except Exception:
        return None


def _book_claim_holds(ops, values):
    if ops is None:
        return bool(values[0])
    return all(bool(_book_claim_ops[op](a, b)) for op, a, b in zip(ops, values, values[1:]))


def {RECORDER}(cell, line, part, source, ops, constant, operands, forall=False):
    key = (cell, line, part)
    occurrence = _book_claim_seen[key] = _book_claim_seen.get(key, -1) + 1
    record = dict(cell=cell, line=line, part=part, occurrence=occurrence, source=source,
                  ops=ops, constant=constant)
    try:
        rows = operands() if forall else [operands()]
        record.update(
            passed=all(_book_claim_holds(ops, values) for values in rows),
            rows=[[_book_claim_number(v) for v in values] for values in rows])
    except Exception as error:
        record.update(passed=False, error=f'{{type(error).__name__}}: {{error}}')
    with open(_os.environ['{RECORD_VARIABLE}'], 'a') as file:
        file.write(_json.dumps(record) + '\\n')
"""


def _literal(node: ast.AST) -> bool:
    """Whether ``node`` is a number written in the code (a bound), not a result."""
    return not any(
        isinstance(child, (ast.Name, ast.Attribute, ast.Call, ast.Subscript))
        for child in ast.walk(node)
    )


def _comparison(node: ast.AST) -> bool:
    return isinstance(node, ast.Compare) and all(type(op) in OPERATORS for op in node.ops)


def _forall(node: ast.AST) -> ast.GeneratorExp | ast.ListComp | None:
    """The loop of ``all(<comparison> for ...)``, else None."""
    if (
        isinstance(node, ast.Call)
        and isinstance(node.func, ast.Name)
        and node.func.id == 'all'
        and len(node.args) == 1
        and not node.keywords
        and isinstance(node.args[0], (ast.GeneratorExp, ast.ListComp))
        and _comparison(node.args[0].elt)
    ):
        return node.args[0]
    return None


class _Recorded(ast.NodeTransformer):
    def __init__(self, cell: int, source: str) -> None:
        self.cell, self.source = cell, source

    def _call(self, test: ast.expr, line: int, part: int) -> ast.stmt:
        text = ' '.join((ast.get_source_segment(self.source, test) or ast.unparse(test)).split())
        loop = _forall(test)
        compare = loop.elt if loop else test
        if _comparison(compare):
            operands = [compare.left, *compare.comparators]
            ops = ast.List([ast.Constant(OPERATORS[type(op)]) for op in compare.ops])
        else:
            loop, operands, ops = None, [test], ast.Constant(None)
        values = ast.List(operands, ast.Load())
        if loop:  # all(a < b for ...): one row of operands per element
            values = ast.ListComp(values, loop.generators)
        thunk = ast.Lambda(ast.arguments([], [], None, [], [], None, []), values)
        constant = ast.List([ast.Constant(_literal(node)) for node in operands])
        call = ast.Call(
            ast.Name(RECORDER, ast.Load()),
            [
                ast.Constant(self.cell),
                ast.Constant(line),
                ast.Constant(part),
                ast.Constant(text),
                ops,
                constant,
                thunk,
            ],
            [ast.keyword('forall', ast.Constant(bool(loop)))],
        )
        return ast.Expr(call)

    def visit_Assert(self, node: ast.Assert) -> list[ast.stmt]:
        parts = (
            node.test.values
            if isinstance(node.test, ast.BoolOp) and isinstance(node.test.op, ast.And)
            else [node.test]
        )
        return [self._call(test, node.lineno, index) for index, test in enumerate(parts)]


def recorded_source(source: str, cell: int) -> str:
    """``source`` with each assert statement turned into recorder calls."""
    tree = _Recorded(cell, source).visit(ast.parse(source))
    return ast.unparse(ast.fix_missing_locations(tree))


def is_claim(cell: nbformat.NotebookNode) -> bool:
    return cell.cell_type == 'code' and 'claim' in cell.get('metadata', {}).get('tags', [])


def instrument(notebook: nbformat.NotebookNode) -> nbformat.NotebookNode:
    """A copy of ``notebook`` whose claim cells record; the recorder cell comes first.

    Records name each claim cell by its index in ``notebook`` (not in the copy)."""
    copied = copy.deepcopy(notebook)
    for index, cell in enumerate(copied.cells):
        if is_claim(cell):
            cell.source = recorded_source(cell.source, index)
    copied.cells.insert(0, nbformat.v4.new_code_cell(RECORDER_SOURCE))
    return copied
