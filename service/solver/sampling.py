"""Player-knowledge hints and solves: search only what the player can see, guess the rest.

Why: a full-knowledge search reads the face-down cards, and in Small Billee and Abandon
Hope the deal's seed that decides every reshuffle to come, so its hint uses what the
player cannot know (a Forty Thieves hint would answer ``winnable: true`` from the order of
a stock the player cannot see). Here the hidden information is sampled instead:

- **samples**: :meth:`~service.engine.core.Game.sample_hidden` deals the face-down cards
  among the face-down piles in a random order (each pile keeping its count) and, where
  redeals reshuffle, draws a random deal seed (a reshuffle hashes the seed with the
  cards gathered, in order, so under a random seed every gathering a sample's line makes
  gets its own random redeal, as it does for the player; nothing here assumes a redeal
  depends on the count only). Its generator is seeded from the visible
  position only (:func:`visible_seed`: the game, its options, every face-up pile, the
  length of each face-down pile, the counters; never the deal number or seed, never the
  hidden cards' order), so the same request gets the same samples, and two positions that
  differ only in what is hidden get the same ones.
- **budget**: each sample is solved with its share of the positions
  (:func:`positions_per_sample`: what the time budget allows at
  :data:`~.settings.SAMPLED_POSITIONS_PER_SECOND`, within ``max_states``, split evenly),
  so the searches end on positions, never on the clock, and the answer depends neither
  on the machine's speed nor on its load (the clock is only the solver process's safety
  cap, whose expiry is an error, never an answer:
  :class:`~service.solver.search.SearchOverrun`).
- **hint**: the move that starts the solutions of the most won samples (ties: the
  heuristic's order); when no sample is won, the heuristic's choice. ``winnable`` is
  ``None`` (unknown): a won sample is a guess, not the game.
- **solve**: ``unknown``, with the solution of the first won sample that starts with the
  hint's move, cut before its first move whose outcome depends on hidden information
  (:meth:`~service.engine.core.Game.move_reveals`: a deal from a face-down pile, a redeal
  that reshuffles), so that every move answered plays the same in the real game.
- **autoplay**: a solve for a client that plays with safe autoplay rewrites the won
  sample's solution, in the sample, as the line to play with it (:mod:`.autoplay`), and
  cuts it before its first move that reveals or whose autoplay reveals (an autoplay move
  that empties a pile refilled from the stock). A hint is the same move either way:
  autoplay runs only after a move, so every line to play with it starts with the first
  move of the solution it follows.

A position whose hidden information can no longer change the game
(:meth:`~service.engine.core.Game.hidden_matters` is False: the full-information games,
an empty stock, no reshuffle to come) is searched exactly, as a full-knowledge request.
The functions here run in the solver pool (:mod:`.pool`), so they stay module-level.
"""

from __future__ import annotations

import hashlib
import json
import random
import time
from dataclasses import dataclass
from enum import StrEnum

from service.engine.core import Game, Move, State

from .answers import (
    Hint,
    SampleCount,
    avoided_here,
    avoiding,
    heuristic_hint,
    heuristic_order,
    hint,
    left_of,
    solve_avoiding,
    solve_position,
)
from .autoplay import autoplay_line, run_autoplay
from .search import Limits, Outcome, SolveResult
from .settings import SAMPLED_POSITIONS_PER_SECOND


class Knowledge(StrEnum):
    """What a hint or solve may read (the API's ``knowledge``)."""

    PLAYER = "player"  # only what the player sees; the hidden cards are sampled
    FULL = "full"  # the position exactly as sent, face-down cards and deal seed included


def visible_seed(game: Game, state: State) -> int:
    """The seed of a position's samples, from what the player sees only: the game id, its
    options, the piles with each face-down pile replaced by its length, and the counters.
    A hash of their JSON, not Python's ``hash``, which differs from process to process."""
    face_down = set(game.face_down_piles)
    piles = [len(p) if i in face_down else list(p) for i, p in enumerate(state.piles)]
    visible = [game.id, game.options, piles, list(state.counters)]
    digest = hashlib.sha256(json.dumps(visible, sort_keys=True, separators=(",", ":")).encode()).digest()
    return int.from_bytes(digest[:8], "big")


def positions_per_sample(limits: Limits, samples: int) -> int:
    """The positions each of ``samples`` samples may visit: the positions the time budget
    allows at the sampled pace, within ``limits.max_states``, split evenly (at least 1)."""
    paced = int(limits.max_seconds * SAMPLED_POSITIONS_PER_SECOND)
    return max(1, min(limits.max_states, paced) // samples)


def sampled_limits(limits: Limits, samples: int) -> Limits:
    """What a sampled search may spend in all: the whole time budget, and every sample's
    positions together."""
    return Limits(limits.max_seconds, positions_per_sample(limits, samples) * samples)


@dataclass
class SampledSearch:
    """Every sample, and its search, in order; ``view`` is the first sample (a position
    the player cannot tell from the real one, for what must not depend on hidden cards)."""

    samples: list[State]
    results: list[SolveResult]
    seconds: float

    @property
    def view(self) -> State:
        return self.samples[0]

    @property
    def count(self) -> SampleCount:
        return SampleCount(sum(r.result is Outcome.SOLVED for r in self.results), len(self.results))

    @property
    def states(self) -> int:
        """The positions every sample's search visited."""
        return sum(r.states for r in self.results)

    def summary(self, moves: list[Move], more_states: int = 0, more_seconds: float = 0.0) -> SolveResult:
        """The whole search as one ``unknown`` result with ``moves``: every sample's
        positions and the time of all (with what a later search added), and what stopped
        the first sample left undecided (None when every sample was decided: the answer is
        unknown because the hidden cards are)."""
        stopped = next((r.stopped_by for r in self.results if r.result is Outcome.UNKNOWN), None)
        return SolveResult(Outcome.UNKNOWN, moves, self.states + more_states, self.seconds + more_seconds, stopped)


def search_samples(
    game: Game, state: State, limits: Limits, samples: int, avoid: frozenset[Move] = frozenset()
) -> SampledSearch:
    """Solve ``samples`` samples of ``state``'s hidden information, each with its share of
    the positions and of the time budget (itself counted in positions), whatever the
    clock says; with ``avoid``, each for a solution that starts with another move
    (:func:`~.answers.solve_avoiding`)."""
    rng = random.Random(visible_seed(game, state))
    drawn = [game.sample_hidden(state, rng) for _ in range(samples)]
    share = Limits(limits.max_seconds / samples, positions_per_sample(limits, samples))
    started = time.monotonic()
    results = [solve_avoiding(game, sample, share, avoid) for sample in drawn]
    return SampledSearch(drawn, results, time.monotonic() - started)


@dataclass(frozen=True)
class Pick:
    """The move that starts the most won samples' solutions, how many, and the first
    sample it won (whose solution a player-knowledge solve answers)."""

    move: Move
    wins: int
    sample: int


def most_won_move(results: list[SolveResult], ranked: list[Move]) -> Pick | None:
    """The move of :class:`Pick` among ``ranked`` (the legal moves, the heuristic's first
    first, which breaks ties); None when no sample was won."""
    wins: dict[Move, list[int]] = {}
    for i, r in enumerate(results):
        if r.result is Outcome.SOLVED and r.moves and r.moves[0] in ranked:
            wins.setdefault(r.moves[0], []).append(i)
    if not wins:
        return None
    move = min(wins, key=lambda m: (-len(wins[m]), ranked.index(m)))
    return Pick(move, len(wins[move]), wins[move][0])


def sample_and_pick(
    game: Game, state: State, limits: Limits, samples: int, avoid: frozenset[Move] = frozenset()
) -> tuple[SampledSearch, Pick | None]:
    """Search the samples of ``state`` and pick the move that wins the most of them, ties
    broken by the heuristic's order on the first sample (:func:`most_won_move`); never a
    move of ``avoid``."""
    sampled = search_samples(game, state, limits, samples, avoid)
    ranked, _ = heuristic_order(game, sampled.view, [m for m in game.legal_moves(state) if m not in avoid])
    return sampled, most_won_move(sampled.results, ranked)


def player_hint(
    game: Game, state: State, limits: Limits, samples: int, autoplay: bool = False, avoid: frozenset[Move] = frozenset()
) -> Hint:
    """The hint of a player who sees only the visible position (see the module docstring);
    the exact :func:`~.answers.hint` where the hidden information cannot matter (a game
    won or lost among them: no legal move is left). ``autoplay`` changes the sampled hint's
    move in nothing (see the module docstring). Never a move of ``avoid``: each sample is
    then searched for a solution that starts with another move (:func:`~.answers.avoided_here`
    raises when it holds every legal move)."""
    if not game.hidden_matters(state):
        return hint(game, state, limits, autoplay, avoid)
    avoid = avoided_here(game, state, avoid)
    sampled, pick = sample_and_pick(game, state, limits, samples, avoid)
    count = sampled.count
    if pick is None:
        why = f"none of {count.of} samples of the hidden cards was won{by_a_line(avoid)} within its share of the budget"
        allowed = [m for m in game.legal_moves(state) if m not in avoid]
        return heuristic_hint(game, sampled.view, allowed, why, None, sampled.summary([]), count)
    reason = (
        f"{count.won} of {count.of} samples of the hidden cards were won{by_a_line(avoid)}, {pick.wins} of them "
        "starting with this move (no other move starts more); the hidden cards are guessed, so "
        "whether the game can be won is unknown"
    )
    return Hint(pick.move, reason, None, sampled.summary([]), count)


def by_a_line(avoid: frozenset[Move]) -> str:
    """How a sampled hint's reason says its samples were won when it avoided moves."""
    return f" by a line{avoiding(avoid)}" if avoid else ""


@dataclass
class PlayerSolve:
    """A player-knowledge solve: the search's answer, and how its samples went (None when
    the position was solved exactly)."""

    search: SolveResult
    samples: SampleCount | None


def safe_line(game: Game, state: State, moves: list[Move], with_autoplay: bool = False) -> list[Move]:
    """The moves of ``moves`` before the first whose outcome depends on hidden information,
    each legal in turn from the real ``state``; ``with_autoplay``: each followed by
    autoplay, and cut before the first whose autoplay makes a move that reveals too."""
    line: list[Move] = []
    for move in moves:
        if not game.is_legal(state, move) or game.move_reveals(state, move):
            break
        state = game.apply(state, move)
        if with_autoplay:
            moved = state
            state, made = run_autoplay(game, moved)
            if reveals_any(game, moved, made):
                break
        line.append(move)
    return line


def reveals_any(game: Game, state: State, moves: list[Move]) -> bool:
    """Whether one of ``moves``, made in turn from ``state``, reveals hidden information."""
    for move in moves:
        if game.move_reveals(state, move):
            return True
        state = game.apply(state, move)
    return False


def player_solve(game: Game, state: State, limits: Limits, samples: int, autoplay: bool = False) -> PlayerSolve:
    """The solve of a player who sees only the visible position (see the module
    docstring); the exact :func:`~.answers.solve_position` where the hidden information
    cannot matter. ``autoplay``: the line to play with safe autoplay."""
    if not game.hidden_matters(state):
        return PlayerSolve(solve_position(game, state, limits, autoplay), None)
    sampled, pick = sample_and_pick(game, state, limits, samples)
    if pick is None:
        return PlayerSolve(sampled.summary([]), sampled.count)
    moves = sampled.results[pick.sample].moves
    if not autoplay:
        return PlayerSolve(sampled.summary(safe_line(game, state, moves)), sampled.count)
    # The won sample's solution as the line to play with autoplay, in that sample; its
    # searches get the positions the samples left.
    started = time.monotonic()
    left = left_of(game, sampled_limits(limits, samples), sampled.states)
    line = autoplay_line(game, sampled.samples[pick.sample], moves, left, solve_position)
    answered = safe_line(game, state, line.moves, with_autoplay=True)
    return PlayerSolve(sampled.summary(answered, line.states, time.monotonic() - started), sampled.count)
