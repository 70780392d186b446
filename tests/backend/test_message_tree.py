"""backend.message_tree: siblings, the path along a branch, where a branch switch lands."""

from __future__ import annotations

from dataclasses import dataclass

from backend.message_tree import Tree, sibling_ids


@dataclass
class M:
    id: str
    parent_id: str | None
    position: int


def tree_of(*edges: tuple[str, str | None]) -> Tree[M]:
    return Tree(M(i, p, n) for n, (i, p) in enumerate(edges))


# q1 -> a1 -> q2 -> a2          (the first branch)
#             q2 -> a2b         (regenerated)
#       a1 -> q2e -> a3         (q2 edited)
EDGES = [("q1", None), ("a1", "q1"), ("q2", "a1"), ("a2", "q2"), ("a2b", "q2"), ("q2e", "a1"), ("a3", "q2e")]


def test_path_follows_parents_to_the_root() -> None:
    tree = tree_of(*EDGES)
    assert [m.id for m in tree.path_to("a2b")] == ["q1", "a1", "q2", "a2b"]
    assert [m.id for m in tree.path_to("a3")] == ["q1", "a1", "q2e", "a3"]
    assert tree.path_to(None) == [] and tree.path_to("nope") == []


def test_siblings_are_in_creation_order() -> None:
    tree = tree_of(*EDGES)
    path = tree.path_to("a2b")
    assert sibling_ids(tree, path) == [["q1"], ["a1"], ["q2", "q2e"], ["a2", "a2b"]]


def test_a_switch_lands_on_the_newest_continuation() -> None:
    tree = tree_of(*EDGES)
    assert tree.newest_leaf("q2").id == "a2b"
    assert tree.newest_leaf("q2e").id == "a3"
    assert tree.newest_leaf("a1").id == "a3"  # q2e is newer than q2
    assert tree.newest_leaf("a2").id == "a2"
    assert tree.newest_leaf("missing") is None


def test_active_leaf_falls_back_to_the_newest_message() -> None:
    tree = tree_of(*EDGES)
    assert tree.active_leaf("a2").id == "a2"
    assert tree.active_leaf(None).id == "a3"
    assert tree.active_leaf("gone").id == "a3"
    assert Tree([]).active_leaf(None) is None and Tree([]).active_path("x") == []


def test_an_orphan_counts_as_a_root_and_a_cycle_ends() -> None:
    tree = tree_of(("x", "deleted"), ("y", "x"))
    assert [m.id for m in tree.path_to("y")] == ["x", "y"]
    assert [s.id for s in tree.siblings(tree.by_id["x"])] == ["x"]
    looped = Tree([M("a", "b", 0), M("b", "a", 1)])
    assert len(looped.path_to("a")) == 2
    assert tree.is_leaf("y") and not tree.is_leaf("x")


def test_edits_of_the_first_message_are_root_siblings() -> None:
    tree = tree_of(("q", None), ("a", "q"), ("q-edit", None), ("a2", "q-edit"))
    assert [s.id for s in tree.siblings(tree.by_id["q-edit"])] == ["q", "q-edit"]
    assert [m.id for m in tree.active_path(None)] == ["q-edit", "a2"]
