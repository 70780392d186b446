"""A conversation's messages as a tree, and its active branch.

Every message points at the message before it on its branch (`parent_id`; None for a first
message), so regenerating a reply or editing a question adds a sibling instead of overwriting,
as in ChatGPT and Open WebUI. Siblings are ordered by `position` (creation order). The
conversation's `current_message_id` is the leaf of the branch the person sees; the prompt is the
path from the root to it.

Pure functions over anything with `id`, `parent_id` and `position` (ORM rows or views), so the
rules are tested without a database.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Generic, Protocol, TypeVar


class Node(Protocol):
    @property
    def id(self) -> str: ...
    @property
    def parent_id(self) -> str | None: ...
    @property
    def position(self) -> int: ...


N = TypeVar("N", bound=Node)


class Tree(Generic[N]):
    """The messages of one conversation, indexed by id and by parent.

    Messages whose parent is not among them (a parent deleted by hand, or an import gap) count as
    roots, so no message is ever unreachable.
    """

    def __init__(self, messages: Iterable[N]) -> None:
        self.by_id: dict[str, N] = {}
        for message in sorted(messages, key=lambda m: m.position):
            self.by_id[message.id] = message
        self.children: dict[str | None, list[N]] = {}
        for message in self.by_id.values():
            parent = message.parent_id if message.parent_id in self.by_id else None
            self.children.setdefault(parent, []).append(message)

    def __contains__(self, message_id: object) -> bool:
        return message_id in self.by_id

    def parent_of(self, message: N) -> N | None:
        return self.by_id.get(message.parent_id) if message.parent_id is not None else None

    def siblings(self, message: N) -> list[N]:
        """`message` and the other children of its parent, in creation order."""
        parent = message.parent_id if message.parent_id in self.by_id else None
        return self.children.get(parent, [message])

    def path_to(self, message_id: str | None) -> list[N]:
        """The branch from the root to `message_id` (inclusive), oldest first; [] for None or an
        id not in the tree. A cycle (impossible through this code) is cut where it repeats."""
        path: list[N] = []
        seen: set[str] = set()
        node = self.by_id.get(message_id) if message_id is not None else None
        while node is not None and node.id not in seen:
            seen.add(node.id)
            path.append(node)
            node = self.parent_of(node)
        path.reverse()
        return path

    def newest_leaf(self, message_id: str) -> N | None:
        """The leaf reached from `message_id` by always taking the newest child: where a branch
        switch lands (the continuation the person saw last on that branch). None if unknown."""
        node = self.by_id.get(message_id)
        seen: set[str] = set()
        while node is not None and node.id not in seen:
            seen.add(node.id)
            kids = self.children.get(node.id)
            if not kids:
                return node
            node = kids[-1]
        return node

    def active_leaf(self, current_message_id: str | None) -> N | None:
        """The active branch's leaf: `current_message_id` when it is in the tree, else the
        newest message's branch (a conversation stored before branches existed, or a current
        id that went away). None for an empty conversation."""
        if current_message_id in self.by_id:
            return self.by_id[current_message_id]  # type: ignore[index]
        if not self.by_id:
            return None
        newest = max(self.by_id.values(), key=lambda m: m.position)
        return newest

    def active_path(self, current_message_id: str | None) -> list[N]:
        leaf = self.active_leaf(current_message_id)
        return self.path_to(leaf.id) if leaf is not None else []

    def is_leaf(self, message_id: str) -> bool:
        return message_id in self.by_id and not self.children.get(message_id)


def sibling_ids(tree: Tree[N], path: Sequence[N]) -> list[list[str]]:
    """For each message of `path`, the ids of its siblings (itself included), in order."""
    return [[s.id for s in tree.siblings(m)] for m in path]
