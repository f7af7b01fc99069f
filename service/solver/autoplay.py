"""Safe autoplay, and solutions rewritten as the line to play with it.

:func:`run_autoplay` is the one loop of safe moves the moves endpoint and replays make after a
move with ``"autoplay": "safe"`` (each game's :meth:`~service.engine.core.Game.autoplay_move`,
until none is left).

Why lines are rewritten: the search answers plain engine moves to play one by one
without autoplay. A client that plays them with autoplay finds some already made (autoplay
put the card home: the move is then illegal, or names a pile whose cards have changed), so
a solution is walked into the line to play with autoplay (:func:`follow`), in two positions
at once: ``plain``, where the solution's moves lead, and ``played``, what the client holds
(each move followed by autoplay). ``pending`` holds the autoplay moves made in ``played``
that the solution has not made yet, and ``played`` is always ``plain`` with ``pending``
played on it, each move legal (checked exactly at every step): ``played`` is a position of
the solution plus safe moves only, so still winnable (each game's ``autoplay_rule`` says
why its moves never hurt). Each move of the solution is

- skipped when it is a pending move (autoplay made it already) and the rest of ``pending``
  still leads from the new ``plain`` to ``played``;
- kept when it is legal in ``played`` and does there what it does in ``plain`` (``pending``
  leads from ``plain`` after it to ``played`` after it);
- else the walk stops where it diverged, and :func:`autoplay_line` searches again from
  ``played`` with what is left of the budget (positions, never the clock), and walks
  that solution. Every search makes
  the walk longer by one move at least (its first move is legal where it starts, and
  ``pending`` is empty there), so the loop ends, on a won position or the budget.

The line's first move is always the solution's first (nothing is pending before it): a
hint is the same move with autoplay or without.

A line is answered only once :func:`wins_with_autoplay` has played it with autoplay to a
won position.

A position sent with an autoplay move pending (autoplay has not run on it) is taken as
sent: autoplay runs after a move, as on the moves endpoint, never before the first, so the
line starts from that position; its first move is often the pending one (the search makes
safe moves first), made explicitly, and autoplay then makes the rest.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from service.engine.core import Event, EventKind, Game, Move, State

from .plugins import pace_of
from .search import Limits, Outcome, SolveResult, StopReason


def run_autoplay(game: Game, state: State, events: list[Event] | None = None) -> tuple[State, list[Move]]:
    """The position after every safe move autoplay makes from ``state`` (at most one per
    card), and those moves; with ``events``, what happened is appended to it, each card
    move re-kinded ``AUTOPLAY``."""
    made: list[Move] = []
    for _ in range(len(game.deck())):
        move = game.autoplay_move(state)
        if move is None:
            break
        made.append(move)
        if events is None:
            state = game.apply(state, move)
            continue
        state, more = game.play(state, move)
        events.extend(e._replace(kind=EventKind.AUTOPLAY) if e.kind == EventKind.MOVE else e for e in more)
    return state, made


def wins_with_autoplay(game: Game, state: State, moves: list[Move]) -> bool:
    """True when every move is legal in turn, each followed by autoplay, and the last
    position is won (the check every line passes before it is answered)."""
    for move in moves:
        if not game.is_legal(state, move):
            return False
        state, _ = run_autoplay(game, game.apply(state, move))
    return game.is_won(state)


def leads_to(game: Game, state: State, moves: list[Move], target: State) -> bool:
    """Whether ``moves``, each legal in turn from ``state``, lead to ``target``."""
    for move in moves:
        if not game.is_legal(state, move):
            return False
        state = game.apply(state, move)
    return state == target


@dataclass
class Walk:
    """What :func:`follow` made of a solution: the line to play with autoplay, and the
    position it leads to (won when the whole solution was followed)."""

    moves: list[Move]
    position: State


def follow(game: Game, state: State, solution: list[Move]) -> Walk:
    """The line to play with autoplay from ``state`` that follows ``solution`` (a solution
    of ``state`` without autoplay) as far as it can (see the module docstring)."""
    plain = played = state
    pending: list[Move] = []
    line: list[Move] = []
    for move in solution:
        if game.is_won(played):
            break
        if move in pending:
            rest = list(pending)
            rest.remove(move)
            after = game.apply(plain, move)
            if leads_to(game, after, rest, played):
                plain, pending = after, rest
                continue
        if not game.is_legal(played, move):
            break
        plain_after, played_after = game.apply(plain, move), game.apply(played, move)
        if not leads_to(game, plain_after, pending, played_after):
            break
        played, made = run_autoplay(game, played_after)
        plain = plain_after
        pending.extend(made)
        line.append(move)
    return Walk(line, played)


@dataclass
class AutoplayLine:
    """A line to play with autoplay: all of it when ``won``, else the part made before the
    budget ran out (or a search proved the position it reached lost: ``stopped_by``
    ``invalid-solution``); ``states``: the positions its searches visited."""

    moves: list[Move]
    won: bool
    states: int
    stopped_by: StopReason | None = None


Solver = Callable[[Game, State, Limits], SolveResult]


def autoplay_line(game: Game, state: State, solution: list[Move], limits: Limits, solver: Solver) -> AutoplayLine:
    """``solution`` (a verified solution of ``state`` without autoplay) as the line to play
    with autoplay: followed (:func:`follow`), and where it diverges, ``solver`` searches
    again within what is left of ``limits`` (the budget of these searches only, counted
    in positions: :meth:`~.search.Limits.spent`)."""
    pace = pace_of(game)
    walk = follow(game, state, solution)
    line = list(walk.moves)
    states = 0
    while not game.is_won(walk.position):
        left = limits.spent(states, pace)
        if left.max_seconds <= 0 or left.max_states <= 0:
            stop = StopReason.TIME if left.max_seconds <= 0 else StopReason.STATES
            return AutoplayLine(line, False, states, stop)
        again = solver(game, walk.position, left)
        states += again.states
        if again.result is not Outcome.SOLVED:
            # unsolvable: autoplay made the solution's position lost, which its rule says it never does
            return AutoplayLine(line, False, states, again.stopped_by or StopReason.INVALID_SOLUTION)
        walk = follow(game, walk.position, again.moves)
        line.extend(walk.moves)
    if not wins_with_autoplay(game, state, line):
        return AutoplayLine([], False, states, StopReason.INVALID_SOLUTION)
    return AutoplayLine(line, True, states)
