"""Forty Thieves' compiled search parts (_forty_thieves_native.c) are the Python
plug-in's: the lost-position test answers as :func:`is_lost` on the positions the
searches of whole deals test and on small end games; a beam pass with the compiled
look-around sees the same positions and ends the same way, with the same moves, as with
the Python one; so the whole search visits the same positions and answers the same
outcome, reason and moves either way (under a positions limit, with the clock out of
play). The Python search (``native=False``) is the reference, and
tests/solver/test_forty_thieves_pruning.py checks the lost test's soundness against the
plain search. Malformed input is refused with ValueError."""

from __future__ import annotations

import pytest

from service.engine.registry import get_game
from service.solver import Limits
from service.solver.plugins import forty_thieves as plugin
from service.solver.plugins.forty_thieves import (
    BeamPass,
    FortyThievesStrategy,
    PassEnd,
    PassResult,
    Piles,
    _Dfs,
    is_lost,
)
from service.solver.search import Outcome, SolveResult, solve
from tests.solver.test_forty_thieves import POSITIONS, WIDE, _search_sample

GAME = get_game("forty-thieves")
NATIVE = plugin._NATIVE
pytestmark = pytest.mark.skipif(NATIVE is None, reason="not built (tests/solver/test_native_build.py fails then)")
FAR = 10**6  # seconds: a budget whose positions outnumber max_states, so that only max_states stops a search


class _Recording(FortyThievesStrategy):
    """The Python search, keeping every position it tests for loss."""

    def __init__(self, deal: int, into: list[Piles]) -> None:
        super().__init__(GAME, GAME.initial_state(deal), native=False)
        self._into = into

    def lost(self, p: Piles) -> bool:
        self._into.append(p)
        return super().lost(p)


def positions_searched(deal: int) -> list[Piles]:
    """The positions a 64-wide beam pass and a depth-first search of ``deal`` test."""
    out: list[Piles] = []
    kn = _Recording(deal, out)
    kn.beam_pass(kn.start(), BeamPass(64, 8, 5.0, 2.0, False), 6000)
    _Dfs(kn, (), kn.start()).run(2000)
    return out


@pytest.mark.parametrize("deal", [1, 3, 5, 46])
def test_the_compiled_test_answers_as_pythons_on_a_deals_searches(deal: int) -> None:
    assert NATIVE is not None
    checked = {True: 0, False: 0}
    for p in positions_searched(deal):
        want = is_lost(p)
        assert NATIVE.is_lost(p) is want, p
        checked[want] += 1
    assert checked[True] >= 20 and checked[False] >= 20, checked


def test_the_compiled_test_answers_as_pythons_on_end_games() -> None:
    assert NATIVE is not None
    checked = {True: 0, False: 0}
    for state in POSITIONS:
        for p in _search_sample(state, 60):
            want = is_lost(p)
            assert NATIVE.is_lost(p) is want, p
            checked[want] += 1
    assert checked[True] >= 100 and checked[False] >= 100, checked


PLANS = [BeamPass(16, 32, 5.0, 2.0, False), BeamPass(64, 8, 8.0, 2.0, True), BeamPass(256, 8, 1.0, 0.0, False)]


def beam_pass(state: object, plan: BeamPass, native: bool, max_states: int) -> PassResult:
    kn = FortyThievesStrategy(GAME, state, native=native)  # type: ignore[arg-type]
    _, root = kn.auto(kn.start())
    return kn.beam_pass(root, plan, max_states)


@pytest.mark.parametrize("deal", [1, 7, 10, 12, 46, 61])
def test_a_beam_pass_is_the_same_with_either_look_around(deal: int) -> None:
    ends = set()
    for plan in PLANS:
        compiled = beam_pass(GAME.initial_state(deal), plan, True, 12_000)
        assert compiled == beam_pass(GAME.initial_state(deal), plan, False, 12_000), plan
        ends.add(compiled.end)
    if deal in (7, 61):
        assert PassEnd.WON in ends
    if deal == 1:
        assert ends == {PassEnd.DROPPED, PassEnd.STATES}


def test_a_pass_over_an_end_game_is_the_same_with_either_look_around() -> None:
    """The end games: passes that drop nothing, so they win or prove a loss."""
    ends = set()
    for state in POSITIONS[::3]:
        compiled = beam_pass(state, WIDE, True, 5_000)
        assert compiled == beam_pass(state, WIDE, False, 5_000), state
        ends.add(compiled.end)
    assert {PassEnd.WON, PassEnd.EXHAUSTED} <= ends


def search(deal: int, native: bool, max_states: int) -> SolveResult:
    """The whole search of ``deal``, beam passes only after the probe (no depth-first
    slices between them), within ``max_states`` positions."""
    kn = FortyThievesStrategy(GAME, GAME.initial_state(deal), native=native)
    kn.dfs_share = 0.0
    return solve(kn, Limits(FAR, max_states))


@pytest.mark.parametrize(("deal", "max_states"), [(2, 40_000), (7, 40_000), (10, 40_000), (46, 40_000), (5, 25_000)])
def test_the_search_is_the_same_with_either_test(deal: int, max_states: int) -> None:
    """Deal 2 is won by the first depth-first slice, 7 and 10 by a beam pass, 46 proved
    lost by the first slice; 5 stops at the positions limit."""
    compiled = search(deal, True, max_states)
    python = search(deal, False, max_states)
    assert (compiled.result, compiled.stopped_by, compiled.states) == (python.result, python.stopped_by, python.states)
    assert compiled.moves == python.moves


def depth_first(state: object, native: bool, prune_lost: bool, max_states: int, slice_of: int) -> tuple[object, ...]:
    """The depth-first search from ``state`` run in slices of ``slice_of`` positions:
    its outcome, positions and moves."""
    kn = FortyThievesStrategy(GAME, state, native=native)  # type: ignore[arg-type]
    kn.prune_lost = prune_lost
    first, root = kn.auto(kn.start())
    dfs = _Dfs(kn, first, root)
    outcome = None
    while outcome is None and dfs.positions < max_states:
        outcome = dfs.run(min(max_states, dfs.positions + slice_of))
    return outcome, dfs.positions, dfs.verdict() if outcome is not None else None


@pytest.mark.parametrize("prune_lost", [True, False])
def test_the_depth_first_search_of_end_games_is_the_same_either_way(prune_lost: bool) -> None:
    outcomes = set()
    for state in POSITIONS[::2]:
        compiled = depth_first(state, True, prune_lost, 3000, 3000)
        assert compiled == depth_first(state, False, prune_lost, 3000, 3000), state
        outcomes.add(compiled[0])
    assert {Outcome.SOLVED, Outcome.UNSOLVABLE} <= outcomes


@pytest.mark.parametrize("deal", [2, 5, 14, 46])
def test_the_depth_first_search_of_a_deal_is_the_same_either_way_in_slices(deal: int) -> None:
    """Deals 2 and 14 are won by the search, 46 proved lost, 5 paused at the limit; in
    slices of 777 positions, as own_search pauses and resumes it."""
    state = GAME.initial_state(deal)
    compiled = depth_first(state, True, True, 12_000, 777)
    assert compiled == depth_first(state, False, True, 12_000, 777)
    assert compiled[0] == {2: Outcome.SOLVED, 5: None, 14: Outcome.SOLVED, 46: Outcome.UNSOLVABLE}[deal]


def test_a_well_formed_position_is_answered() -> None:
    assert NATIVE is not None
    assert NATIVE.is_lost(NO_FOUNDATIONS + TABLEAU + (b"", b"")) is is_lost(NO_FOUNDATIONS + TABLEAU + (b"", b""))


def test_the_strategy_uses_the_compiled_test_unless_told_not_to() -> None:
    state = GAME.initial_state(1)
    assert FortyThievesStrategy(GAME, state).compiled is NATIVE
    assert FortyThievesStrategy(GAME, state, native=False).compiled is None


TABLEAU = tuple(bytes((c,)) for c in range(1, 11))  # the Ace to the Ten of a suit, one a pile
NO_FOUNDATIONS = (b"",) * 8


@pytest.mark.parametrize(
    "piles",
    [
        NO_FOUNDATIONS + TABLEAU + (b"",),  # a pile short
        NO_FOUNDATIONS + TABLEAU + ("", b""),  # a pile not bytes
        NO_FOUNDATIONS + TABLEAU + (b"", b"\x0e"),  # 14 is no card
        NO_FOUNDATIONS + TABLEAU[:9] + (b"", b"", b"\x3f"),  # nor 63 (with a space)
        NO_FOUNDATIONS + TABLEAU + (b"\x01", b"\x01"),  # three copies of a card
        (b"\x21" * 14, *NO_FOUNDATIONS[1:], *TABLEAU, b"", b""),  # a foundation too high
        (b"\x00", *NO_FOUNDATIONS[1:], *TABLEAU, b"", b""),  # a foundation of no card
        NO_FOUNDATIONS + TABLEAU + (b"\x21" * 300, b""),  # more cards than the game has room for
    ],
)
def test_malformed_positions_are_refused(piles: tuple[object, ...]) -> None:
    assert NATIVE is not None
    with pytest.raises(ValueError):
        NATIVE.is_lost(piles)  # type: ignore[arg-type]


def test_malformed_tables_are_refused() -> None:
    assert plugin._forty_thieves_native is not None
    searcher = plugin._forty_thieves_native.Searcher
    good = {
        "layout": (0, 8, 8, 10, 18, 19),
        "goes_on": bytes(64),
        "below": bytes(64),
        "suit": bytes([255] * 64),
        "rank": bytes(64),
        "card_at": bytes([255] * 64),
        "copies": 2,
        "cards": 104,
        "move_action": 1,
        "deal_action": 2,
    }
    searcher(**good)  # type: ignore[arg-type]
    for bad in (
        {"layout": (0, 8, 7, 10, 18, 19)},  # the tableau overlaps the foundations
        {"layout": (0, 8, 8, 10, 18, 18)},  # the stock is the waste
        {"layout": (0, 8, 8, 10, 18, 20)},  # a pile left out
        {"goes_on": bytes(63)},
        {"suit": bytes(64)},  # every slot a card of suit 0, at rank 0
        {"copies": 0},
        {"cards": 0},
    ):
        with pytest.raises(ValueError):
            searcher(**{**good, **bad})  # type: ignore[arg-type]


def test_malformed_beams_are_refused() -> None:
    assert NATIVE is not None
    kn = FortyThievesStrategy(GAME, GAME.initial_state(1))
    root = kn.start()
    other = (*root[:18], root[18][:-1], root[19])
    weights = (5.0, 2.0, 5.0, 1.0)
    for beam in (
        [],
        [(0.0, 0, root)],  # no trail
        [(0.0, 0, root[:19], None)],  # a pile short
        [(0.0, 0, (*root[:19], b"\x0e"), None)],  # 14 is no card
        [(0.0, 0, root, None), (0.0, 1, other, None)],  # two stock levels
        [(0.0, 0, root, "trail")],
    ):
        with pytest.raises(ValueError):
            NATIVE.look_around(beam, kn.home_tables, weights, 10, FAR, 1000, 0, 0, 0)  # type: ignore[arg-type]


def test_bad_home_tables_are_refused_and_errors_pass_through() -> None:
    assert NATIVE is not None
    kn = FortyThievesStrategy(GAME, GAME.initial_state(1))
    beam = [(0.0, 0, kn.start(), None)]
    weights = (5.0, 2.0, 5.0, 1.0)
    for tables in (lambda fnd: b"", lambda fnd: b"\x20" * 128, lambda fnd: None):
        with pytest.raises(ValueError):
            NATIVE.look_around(beam, tables, weights, 10, FAR, 1000, 0, 0, 0)  # type: ignore[arg-type]

    def fails(fnd: Piles) -> bytes:
        raise KeyError(fnd)

    with pytest.raises(KeyError):
        NATIVE.look_around(beam, fails, weights, 10, FAR, 1000, 0, 0, 0)


def test_a_malformed_depth_first_root_is_refused() -> None:
    assert NATIVE is not None
    kn = FortyThievesStrategy(GAME, GAME.initial_state(1))
    root = kn.start()
    for bad in (root[:19], (*root[:19], b"\x0e"), (*root[:19], root[8][:1] * 3), (b"\x21" * 14, *root[1:])):
        with pytest.raises(ValueError):
            NATIVE.depth_first(bad, kn.home_tables, True)  # type: ignore[arg-type]
    with pytest.raises(ValueError):
        NATIVE.depth_first(root, lambda fnd: b"", True)
