"""What the API asks of the solver: solve a position, hint a move, find a winnable deal.

Every solution is replayed through the engine (:func:`~service.solver.search.verify`)
before it leaves this module, so a bug in a plug-in can make the solver slower or less
decisive but never makes it answer a move the moves endpoint would refuse.

Every budget here is counted in positions (:func:`~service.solver.search.budget_of`): what
a later search gets is what the earlier ones left of them, and the deals a winnable-deal
search tries depend on the positions spent, never on the clock, so the same request gets
the same answer however busy the machine is.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from dataclasses import dataclass

from service.engine.core import MAX_DEAL, Game, Move, State

from .autoplay import autoplay_line
from .plugins import pace_of, strategy_for
from .search import Limits, Outcome, SolveResult, StopReason, solve, verify

log = logging.getLogger("service.solver")


def solve_position(game: Game, state: State, limits: Limits, autoplay: bool = False) -> SolveResult:
    """Solve ``state`` within ``limits``; a solution is always a verified one. With
    ``autoplay``, the solution is the line to play with safe autoplay after each move
    (:func:`with_autoplay`)."""
    result = solve(strategy_for(game, state), limits)
    if result.result is Outcome.SOLVED and not verify(game, state, result.moves):
        # Not the deal: in sealed mode ``state.deal`` is a secret seed, which logs must not hold.
        log.error("solver produced an invalid solution for %s (%d moves)", game.id, len(result.moves))
        return SolveResult(Outcome.UNKNOWN, [], result.states, result.seconds, StopReason.INVALID_SOLUTION)
    if autoplay and result.result is Outcome.SOLVED:
        return with_autoplay(game, state, result, limits)
    return result


class EveryMoveAvoided(ValueError):
    """Every legal move of the position was asked to be avoided: no hint is left to give."""


def avoided_here(game: Game, state: State, avoid: frozenset[Move]) -> frozenset[Move]:
    """The moves of ``avoid`` that are legal in ``state`` (the others change nothing);
    raises :class:`EveryMoveAvoided` when they are every legal move of a game that goes on."""
    if not avoid:
        return avoid
    legal = set(game.legal_moves(state))
    here = avoid & legal
    if legal and here == legal:
        raise EveryMoveAvoided(f"all {len(legal)} legal move(s) of the position are avoided: no hint is left to give")
    return frozenset(here)


def avoiding(avoid: frozenset[Move]) -> str:
    """What a hint's reason adds when it avoided moves: nothing when it avoided none."""
    return f" that avoids the {len(avoid)} move(s) asked" if avoid else ""


def solve_avoiding(game: Game, state: State, limits: Limits, avoid: frozenset[Move]) -> SolveResult:
    """A solution of ``state`` that does not start with a move of ``avoid`` (what a
    client that asks a hint ``avoid`` those moves is answered): :func:`solve_position`
    when ``avoid`` is empty; else the position after each other legal move, in the
    heuristic's order, each searched afresh in turn with the positions the earlier ones
    left (the order and the budget a depth-first root gives its children, so one hard
    first move may spend it all). ``unsolvable`` when every such position was proved lost
    (the avoided moves may still win); ``unknown`` when the budget ran out first."""
    if not avoid:
        return solve_position(game, state, limits)
    started = time.monotonic()
    ordered, _ = heuristic_order(game, state, game.legal_moves(state))
    states, stopped = 0, None
    for move in (m for m in ordered if m not in avoid):
        left = left_of(game, limits, states)
        if left.max_states < 1 or left.max_seconds <= 0:
            stopped = StopReason.TIME if left.max_seconds <= 0 else StopReason.STATES
            break
        after = game.apply(state, move)
        found = solve_position(game, after, left)
        states += found.states
        if found.result is Outcome.SOLVED:
            return SolveResult(Outcome.SOLVED, [move, *found.moves], states, time.monotonic() - started)
        if found.result is Outcome.UNKNOWN:
            stopped = stopped or found.stopped_by
    outcome = Outcome.UNSOLVABLE if stopped is None else Outcome.UNKNOWN
    return SolveResult(outcome, [], states, time.monotonic() - started, stopped)


def left_of(game: Game, limits: Limits, states: int) -> Limits:
    """What ``limits`` leave of a search of ``game`` once ``states`` positions are spent."""
    return limits.spent(states, pace_of(game))


def with_autoplay(game: Game, state: State, solved: SolveResult, limits: Limits) -> SolveResult:
    """``solved`` (a verified solution of ``state``) as the line to play with safe autoplay
    (:func:`~.autoplay.autoplay_line`, whose searches get the positions the first left of
    ``limits``); ``unknown`` when that line cannot be completed within them."""
    started = time.monotonic()
    line = autoplay_line(game, state, solved.moves, left_of(game, limits, solved.states), solve_position)
    states, seconds = solved.states + line.states, solved.seconds + time.monotonic() - started
    if line.won:
        return SolveResult(Outcome.SOLVED, line.moves, states, seconds)
    if line.stopped_by is StopReason.INVALID_SOLUTION:
        log.error("no line with autoplay was found for a solution of %s (%d moves)", game.id, len(solved.moves))
    return SolveResult(Outcome.UNKNOWN, [], states, seconds, line.stopped_by)


@dataclass(frozen=True)
class SampleCount:
    """Of ``of`` samples of the hidden cards (:mod:`.sampling`), how many were won."""

    won: int
    of: int


@dataclass
class Hint:
    """The move to make now (None when no move is left), why, and what is known about
    winning from the position: True, False or None (unknown). ``samples``: how the
    samples of a player-knowledge hint went (None when none was searched)."""

    move: Move | None
    reason: str
    winnable: bool | None
    search: SolveResult
    samples: SampleCount | None = None


def settled_hint(game: Game, state: State, legal: list[Move]) -> Hint | None:
    """The hint of a game the table already decides (won, or no legal move left: lost),
    which needs no search; None while it goes on."""
    if game.is_won(state):
        return Hint(None, "the game is already won", True, SolveResult(Outcome.SOLVED))
    if not legal:
        return Hint(None, "no legal move is left: the game is lost", False, SolveResult(Outcome.UNSOLVABLE))
    return None


def heuristic_order(game: Game, state: State, legal: list[Move]) -> tuple[list[Move], str]:
    """The ``legal`` moves in the order the game's search strategy tries them (moves it
    does not list last, in their own order), and what that order prefers, in words (its
    :attr:`~service.solver.search.Strategy.heuristic`)."""
    strategy = strategy_for(game, state)
    ordered = [m for m in strategy.ordered_moves(state) if m in legal]
    return ordered + [m for m in legal if m not in ordered], strategy.heuristic


def heuristic_hint(
    game: Game, state: State, legal: list[Move], why: str, winnable: bool | None,
    search: SolveResult, samples: SampleCount | None = None,
) -> Hint:
    """The heuristic's choice (the first move of :func:`heuristic_order`), with ``why``
    no search found a better one and what the heuristic prefers."""
    ordered, heuristic = heuristic_order(game, state, legal)
    return Hint(ordered[0], f"{why}; the heuristic's choice: {heuristic}", winnable, search, samples)


def hint(game: Game, state: State, limits: Limits, autoplay: bool = False, avoid: frozenset[Move] = frozenset()) -> Hint:
    """A solution's first move if one is found within ``limits``; else the heuristic's
    choice (:func:`heuristic_hint`). With ``autoplay`` the move is the same (autoplay runs
    after a move, so the line to play with it starts with the solution's first move,
    :mod:`.autoplay`); the reason counts that line's moves when it is completed within
    ``limits``. Never a move of ``avoid`` (:func:`solve_avoiding`; :func:`avoided_here`
    raises when it holds every legal move). Reads every card of ``state``, face-down ones
    included: :func:`~service.solver.sampling.player_hint` is the player-knowledge hint."""
    legal = game.legal_moves(state)
    settled = settled_hint(game, state, legal)
    if settled is not None:
        return settled
    avoid = avoided_here(game, state, avoid)
    allowed = [m for m in legal if m not in avoid]
    result = solve_avoiding(game, state, limits, avoid)
    if result.result is Outcome.SOLVED:
        reason = f"first move of a solution of {len(result.moves)} move(s){avoiding(avoid)} found in {result.seconds:.2f} s"
        if autoplay:
            played = with_autoplay(game, state, result, limits)
            if played.result is Outcome.SOLVED:
                n = len(played.moves)
                reason = (
                    f"first move of a solution of {n} move(s){avoiding(avoid)} to play with safe autoplay, "
                    f"found in {played.seconds:.2f} s"
                )
                result = played
            else:
                reason += "; its line to play with safe autoplay, which starts with the same move, was not completed within the budget"
                result = SolveResult(Outcome.SOLVED, result.moves, played.states, played.seconds)
        return Hint(result.moves[0], reason, True, result)
    if result.result is Outcome.UNSOLVABLE:
        if avoid:
            why = f"no line{avoiding(avoid)} wins (the solver searched every position after the other moves)"
            return heuristic_hint(game, state, allowed, why, None, result)
        why = "the game can no longer be won (the solver searched every reachable position)"
        return heuristic_hint(game, state, legal, why, False, result)
    why = f"no solution{avoiding(avoid)} found within {result.seconds:.2f} s"
    return heuristic_hint(game, state, allowed, why, None, result)


@dataclass
class WinnableSearch:
    """The deals tried (``tried``, in order) and the first proved winnable, if any."""

    tried: range
    found: tuple[int, State] | None


def first_winnable_deal(
    game: Game,
    start: int,
    seconds_per_deal: float,
    max_tries: int,
    max_states: int = 1_000_000,
    total_seconds: float | None = None,
    deal_seed: Callable[[int], int] | None = None,
) -> WinnableSearch:
    """The first deal number at or after ``start`` that the solver proves winnable
    within ``seconds_per_deal`` each, trying at most ``max_tries`` deals and, when
    ``total_seconds`` is given, spending no more than that in all (so a request stays
    within the solver's budget however the tries are configured). Seconds are budgets
    counted in positions (:func:`~service.solver.search.budget_of`): the deals tried
    depend on the positions spent, not on the clock. Deal numbers past the engine's last
    one are not tried. ``deal_seed`` maps a deal number to the seed the engine deals from
    (the caller's keyed deals); by default, the number itself."""
    total = None if total_seconds is None else Limits(total_seconds, 1 << 62)
    last = min(start + max_tries, MAX_DEAL + 1)
    for deal in range(start, last):
        seconds = seconds_per_deal if total is None else min(seconds_per_deal, total.max_seconds)
        if seconds <= 0:
            return WinnableSearch(range(start, deal), None)
        state = game.initial_state(deal if deal_seed is None else deal_seed(deal))
        started = time.monotonic()
        result = solve_position(game, state, Limits(seconds, max_states))
        log.debug("winnable-deal search %s deal %d: %s in %.2f s", game.id, deal, result.result, time.monotonic() - started)
        if result.result is Outcome.SOLVED:
            return WinnableSearch(range(start, deal + 1), (deal, state))
        if total is not None:
            total = left_of(game, total, result.states)
    return WinnableSearch(range(start, last), None)
