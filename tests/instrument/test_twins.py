"""The sync and async twins of the proxies and wrappers read alike: a branch one gains, the other must gain too."""

from __future__ import annotations

import ast
import inspect
import textwrap
from collections.abc import Callable
from typing import Final

import pytest

from otel_toolturn.instrument import _botocore, _patches, _proxies

ASYNC_NAMES: Final = {
    "__anext__": "__next__",
    "__aiter__": "__iter__",
    "__aenter__": "__enter__",
    "__aexit__": "__exit__",
    "StopAsyncIteration": "StopIteration",
    "AsyncIterator": "Iterator",
    "AsyncStreamProxy": "StreamProxy",
    "_self_async_events": "_self_events",
    "anext": "next",
    "aclose": "close",
}
"""Each async spelling and the sync spelling it stands for."""


class _Synced(ast.NodeTransformer):
    """An async function's tree as its sync twin would read: no ``await``, ``async`` or async names, no docstring."""

    def _again(self, node: ast.AST) -> ast.AST:
        visited = self.visit(node)
        assert isinstance(visited, ast.AST)
        return visited

    def visit_Await(self, node: ast.Await) -> ast.AST:
        return self._again(node.value)

    def visit_AsyncFor(self, node: ast.AsyncFor) -> ast.AST:
        return self._again(ast.For(**{f: getattr(node, f) for f in node._fields}))

    def visit_AsyncWith(self, node: ast.AsyncWith) -> ast.AST:
        return self._again(ast.With(**{f: getattr(node, f) for f in node._fields}))

    def visit_AsyncFunctionDef(self, node: ast.AsyncFunctionDef) -> ast.AST:
        return self._again(ast.FunctionDef(**{f: getattr(node, f) for f in node._fields}))

    def visit_FunctionDef(self, node: ast.FunctionDef) -> ast.AST:
        node.name = ASYNC_NAMES.get(node.name, node.name)
        body = node.body
        if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant):
            node.body = body[1:] or [ast.Pass()]
        node.returns = None
        self.generic_visit(node)
        return node

    def visit_Name(self, node: ast.Name) -> ast.AST:
        node.id = ASYNC_NAMES.get(node.id, node.id)
        return node

    def visit_Attribute(self, node: ast.Attribute) -> ast.AST:
        node.attr = ASYNC_NAMES.get(node.attr, node.attr)
        self.generic_visit(node)
        return node

    def visit_Constant(self, node: ast.Constant) -> ast.AST:
        if isinstance(node.value, str):
            node.value = ASYNC_NAMES.get(node.value, node.value)
        return node


def _statements(function: Callable[..., object]) -> list[ast.stmt]:
    """The statements of ``function``'s body, as its sync twin would read them."""
    tree = ast.parse(textwrap.dedent(inspect.getsource(function)))
    synced = _Synced().visit(tree)
    definition = synced.body[0]
    assert isinstance(definition, ast.FunctionDef)
    return definition.body


def _inner(factory: Callable[..., object]) -> Callable[..., object]:
    """The ``wrapper`` a wrapper factory returns, for a target that is not looked at."""
    made = factory(None)
    assert callable(made)
    return made


def _dump(statements: list[ast.stmt]) -> list[str]:
    return [ast.dump(statement) for statement in statements]


PROXY_TWINS: Final = [
    (getattr(_proxies.StreamProxy, sync), getattr(_proxies.AsyncStreamProxy, asynchronous))
    for sync, asynchronous in [
        ("__init__", "__init__"),
        ("__iter__", "__aiter__"),
        ("_self_events", "_self_async_events"),
        ("__next__", "__anext__"),
        ("__enter__", "__aenter__"),
        ("__exit__", "__aexit__"),
        ("close", "close"),
    ]
] + [
    (_proxies.StreamManagerProxy.__enter__, _proxies.StreamManagerProxy.__aenter__),
    (_proxies.StreamManagerProxy.__exit__, _proxies.StreamManagerProxy.__aexit__),
    (_proxies.watch_steps, _proxies.watch_async_steps),
    (_botocore.WatchedBody.read, _botocore.AsyncWatchedBody.read),
    (_botocore.WatchedBody.close, _botocore.AsyncWatchedBody.aclose),
    (_proxies.StreamProxy.close, _botocore.AioEventStreamProxy.close),
]


@pytest.mark.parametrize(("sync", "asynchronous"), PROXY_TWINS, ids=lambda f: f.__qualname__)
def test_a_proxy_method_and_its_async_twin_read_alike(
    sync: Callable[..., object], asynchronous: Callable[..., object]
) -> None:
    """With ``await``, ``async`` and the async names mapped away, the two methods are the same statements."""
    assert _dump(_statements(asynchronous)) == _dump(_statements(sync))


def test_the_call_wrapper_and_its_async_run_read_alike() -> None:
    """Past the check that the call is instrumented at all and its positional arguments named, the two are the same."""
    sync = _statements(_inner(_patches._sync_wrapper))[3:]  # what the async wrapper does before its run starts
    assert _dump(_statements(_patches._run_async)) == _dump(sync)


def test_the_send_wrapper_and_its_async_send_read_alike() -> None:
    """Once the call's record is made, the sync and the async send record the request the same way."""
    sync, asynchronous = _statements(_inner(_patches._send_wrapper)), _statements(_patches._send_async)
    assert _dump(asynchronous[-1:]) == _dump(sync[-1:])


def test_the_botocore_call_and_its_aiobotocore_twin_read_alike() -> None:
    """A decided botocore call and an aiobotocore one run pending and fail alike; only the watching differs."""
    assert _dump(_statements(_botocore._sent_async)[:-1]) == _dump(_statements(_botocore._sent)[:-1])
