"""The Penguin family's search strategy, part by part, against the engine: every child
it builds is reached by legal engine moves, its automatic moves (safe moves home, cell
cards joining their parents) are legal and leave nothing the engine would autoplay, the
canonical key merges exactly the positions that differ only by the order of the cells
and of the tableau piles, and the digging macro ends where its moves say.

Positions are the nodes a real search expands (five presets, a few deals each) and
made-up positions with runs, spaces and full cells (tests/helpers.py)."""

from __future__ import annotations

import random
from collections.abc import Iterator

import pytest

from service.engine.core import Move, State
from service.engine.penguin import PenguinFamily
from service.engine.registry import get_game
from service.solver.plugins.penguin import DIG, INTO_CELLS, PenguinStrategy, Piles
from service.solver.search import Child, Limits, MoveLike, solve
from tests.helpers import built_position

FAMILY = ["penguin", "penguin-ii", "opus", "pelican", "penguin-freecell-moves"]


def family_game(gid: str) -> PenguinFamily:
    game = get_game(gid)
    assert isinstance(game, PenguinFamily)
    return game


class _Recording(PenguinStrategy):
    """The same strategy, keeping the nodes the search expands (the Python search: the
    compiled one expands its nodes in C, tests/solver/test_penguin_native.py)."""

    def __init__(self, game: PenguinFamily, root: State, into: list[Piles]) -> None:
        super().__init__(game, root, native=False)
        self._into = into

    def children(self, piles: Piles) -> Iterator[Child]:
        self._into.append(piles)
        return super().children(piles)


def search_nodes(game: PenguinFamily, deals: range, per_deal: int) -> Iterator[tuple[PenguinStrategy, State, Piles]]:
    """(strategy, its root, a node it expanded) for the first ``per_deal`` nodes a search
    of each deal expands."""
    for deal in deals:
        nodes: list[Piles] = []
        root = game.initial_state(deal)
        solve(_Recording(game, root, nodes), Limits(60, per_deal))
        kn = PenguinStrategy(game, root)
        for node in nodes:
            yield kn, root, node


def made_up_nodes(game: PenguinFamily, count: int, seed: str) -> Iterator[tuple[PenguinStrategy, State, Piles]]:
    """Made-up positions, each after the strategy's automatic moves (as the search
    expands them)."""
    rng = random.Random(seed)
    for _ in range(count):
        state = built_position(game, rng)
        kn = PenguinStrategy(game, state)
        _, node = kn.auto(kn.start())
        yield kn, state, node


def nodes_of(gid: str) -> Iterator[tuple[PenguinStrategy, State, Piles]]:
    game = family_game(gid)
    yield from search_nodes(game, range(1, 7), 200)
    yield from made_up_nodes(game, 60, gid)


def as_state(root: State, node: Piles) -> State:
    return State(tuple(tuple(p) for p in node), root.counters, root.deal)


def as_node(state: State) -> Piles:
    return tuple(bytes(p) for p in state.piles)


def replay(game: PenguinFamily, state: State, moves: tuple[MoveLike, ...]) -> State:
    """Make ``moves`` through the engine, each checked legal first."""
    for m in moves:
        move = Move(*m)
        assert game.is_legal(state, move), (move, game.why_illegal(state, move), state)
        state = game.apply(state, move)
    return state


@pytest.mark.parametrize("gid", FAMILY)
def test_every_child_is_reached_by_legal_engine_moves(gid: str) -> None:
    game = family_game(gid)
    children = 0
    for kn, root, node in nodes_of(gid):
        state = as_state(root, node)
        for moves, child in kn.children(node):
            assert as_node(replay(game, state, moves)) == child
            children += 1
        for move in kn.ordered_moves(state):
            assert game.is_legal(state, move)
    assert children > 1000, children


@pytest.mark.parametrize("gid", FAMILY)
def test_automatic_moves_are_legal_and_complete(gid: str) -> None:
    """Safe moves home and cell-to-parent joins: legal one by one, and afterwards the
    engine finds nothing to autoplay and no cell card fits a tableau top."""
    game = family_game(gid)
    joins = homes = 0
    for kn, root, node in nodes_of(gid):
        state = as_state(root, node)
        # take the position one move further without automatic moves, then let auto run
        for moves, _ in kn.children(node):
            first = replay(game, state, moves[:1])
            auto, after = kn.auto(as_node(first))
            assert as_node(replay(game, first, auto)) == after
            homes += sum(1 for m in auto if m[2] in game.F)
            joins += sum(1 for m in auto if m[1] in game.C and m[2] in game.T)
            done = as_state(root, after)
            assert game.autoplay_move(done) is None, auto
            base = game.base_rank(done)
            tops = {done.piles[t][-1] for t in game.T if done.piles[t]}
            assert not any(game.tableau_parent(done.piles[c][0], base) in tops for c in game.C if done.piles[c])
            break
    assert homes and joins, (homes, joins)


def canonical(kn: PenguinStrategy, node: Piles) -> tuple[list[bytes], list[bytes]]:
    """What the key may keep: the tableau piles and the cells, each as a multiset."""
    return sorted(node[kn.t0 : kn.t1]), sorted(node[kn.c0 : kn.c1])


def variants(kn: PenguinStrategy, node: Piles, rng: random.Random) -> Iterator[Piles]:
    """The position with its cells and piles in another order, and positions one card
    away from it (a top card into a cell or onto another pile, a cell card swapped with
    a top card, a foundation's top card back in a free cell): near misses the key must
    tell apart."""
    cells, piles = list(node[kn.c0 : kn.c1]), list(node[kn.t0 : kn.t1])
    rng.shuffle(cells)
    rng.shuffle(piles)
    yield node[: kn.c0] + tuple(cells) + node[kn.c1 : kn.t0] + tuple(piles) + node[kn.t1 :]
    free = [c for c in kn.C if not node[c]]
    for f in kn.F:
        if free and len(node[f]) > 1:
            lst = list(node)
            lst[free[0]], lst[f] = lst[f][-1:], lst[f][:-1]
            yield tuple(lst)
    tops = [t for t in kn.T if node[t]]
    if not tops:
        return
    t, u = rng.choice(tops), rng.choice(kn.T)
    lst = list(node)
    if t != u:
        lst[u], lst[t] = lst[u] + lst[t][-1:], lst[t][:-1]
        yield tuple(lst)
    for c in kn.C:
        lst = list(node)
        lst[c], lst[t] = lst[t][-1:], lst[t][:-1] + lst[c]
        yield tuple(lst)


@pytest.mark.parametrize("gid", FAMILY)
def test_key_merges_exactly_positions_that_differ_by_cell_and_pile_order(gid: str) -> None:
    rng = random.Random(gid)
    merged = told_apart = 0
    for kn, _, node in nodes_of(gid):
        for other in variants(kn, node, rng):
            same = canonical(kn, other) == canonical(kn, node)
            assert (kn.key(other) == kn.key(node)) is same, (node, other)
            merged += same
            told_apart += not same
    # and no other merge among the children of one position
    for kn, _, node in nodes_of(gid):
        by_key = {kn.key(child): canonical(kn, child) for _, child in kn.children(node)}
        for _, child in kn.children(node):
            assert by_key[kn.key(child)] == canonical(kn, child)
    assert merged > 500 and told_apart > 1000, (merged, told_apart)


@pytest.mark.parametrize("gid", FAMILY)
def test_digging_macro_uncovers_a_card_its_foundation_takes(gid: str) -> None:
    """A dig candidate moves the cards above the shallowest card (two or more deep) its
    foundation takes next, one by one into free cells, as many as its score says; afterwards the engine
    would send that card home."""
    game = family_game(gid)
    digs = 0
    for kn, root, node in nodes_of(gid):
        state = as_state(root, node)
        scored, _ = kn._tableau_candidates(node, kn._next_wanted(node))
        for score, moves in scored:
            src = moves[0][1]
            if score >= INTO_CELLS or len(moves) < 2 or not all(m[1] == src and m[2] in game.C for m in moves):
                continue  # not a dig
            digs += 1
            assert score == DIG + len(moves) and all(m[3] == 1 for m in moves)
            assert len({m[2] for m in moves}) == len(moves)
            dug = replay(game, state, moves)
            card = dug.piles[src][-1]
            base = game.base_rank(dug)
            assert any(game.foundation_takes(dug.piles[f], card, base) for f in game.F)
            # the shallowest such card two or more deep (one deep is an ordinary move)
            above = state.piles[src][-len(moves) : -2]
            assert not any(game.foundation_takes(state.piles[f], c, base) for c in above for f in game.F)
    if gid != "penguin-freecell-moves":  # spaces and long runs there leave little to dig
        assert digs, digs
