"""Who plays the atlas's deals: the solver, seeing every card (the "thoughtful" odds), or a
player who sees only what a player sees and follows the service's player-knowledge hints.

The hint player asks for a hint (:func:`~service.solver.player_hint`, as ``POST /hint``
with ``"knowledge": "player"`` and ``"autoplay": "safe"`` answers it with the default
budget), plays its move, lets safe autoplay run, and asks again, until the game is won, no
hint is left (``stuck``), it has played every legal move of a position from it
(``loop``) or :data:`MAX_HINTS` hints were followed (``cap``). It goes round no circle:
when a hint leads back to a position it has played, it asks again, avoiding that move (the
request's ``avoid``), as a player who sees the hints going round would; only when every
legal move leads back does it go back, by the hint that avoids the moves it has already
played from here (so no move is played twice from one position). Its hints are decided by
positions, never by the clock, so a deal's line is the same on any machine.

The same player following full-knowledge hints (``full-hints``, ``"knowledge": "full"``)
plays as the hint player would if it could see every card: set beside it, it tells what
the hidden cards cost from what following a 1 s hint costs.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum

from service.engine.core import Move, State
from service.engine.registry import get_game
from service.solver import Knowledge, Limits, Outcome, hint, player_hint, solve_position
from service.solver.answers import EveryMoveAvoided
from service.solver.autoplay import run_autoplay

# The budgets are the atlas's own, fixed so that its lines stay comparable; they equal a
# default server's today (tests/atlas checks): a /solve's 10 s and 1,000,000 positions, a
# /hint's 1 s with 8 samples of the hidden cards.
SOLVER_LIMITS = Limits(10.0, 1_000_000)
HINT_LIMITS = Limits(1.0, 1_000_000)
HINT_SAMPLES = 8
MAX_HINTS = 2_000  # far more moves than any won game of these takes


class Player(StrEnum):
    """Who plays the deals (the command line's ``--player``)."""

    SOLVER = "solver"  # the solver, every card known
    HINTS = "hints"  # a player who follows the player-knowledge hints
    FULL_HINTS = "full-hints"  # the same player following full-knowledge hints (every card known)


class HintStop(StrEnum):
    """How a hint player's game ended (a line's ``result``)."""

    WON = "won"
    STUCK = "stuck"  # no hint: no legal move left
    LOOP = "loop"  # every legal move of a position was played from it (lost, in practice)
    CAP = "cap"  # MAX_HINTS hints followed


def solve(game_id: str, deal: int) -> tuple[str, int, int, str | None]:
    """The solver's verdict on the deal: (result, positions, solution length, stopped by)."""
    game = get_game(game_id)
    found = solve_position(game, game.deal_state(deal), SOLVER_LIMITS)
    moves = len(found.moves) if found.result is Outcome.SOLVED else 0
    return found.result.value, found.states, moves, found.stopped_by.value if found.stopped_by else None


@dataclass
class HintGame:
    """A hint player's game: how it ended, the positions its hints searched, and each
    position it played from with the moves it asked the hint there to avoid (those that
    lead back to a position already played, or, when all do, those already played from
    it) and the hinted move it then played."""

    stop: HintStop
    positions: int
    played: list[tuple[State, frozenset[Move], Move]]
    final: State


def play_by_hints(
    game_id: str, deal: int, knowledge: Knowledge = Knowledge.PLAYER, limits: Limits = HINT_LIMITS,
) -> HintGame:
    """Play ``deal`` by the hints of that ``knowledge``, each searched within ``limits``
    (see the module docstring)."""
    game = get_game(game_id)
    state = run_autoplay(game, game.deal_state(deal))[0]
    seen = {state}
    tried: dict[State, set[Move]] = {}  # the moves played from each position
    positions = 0
    played: list[tuple[State, frozenset[Move], Move]] = []
    while len(played) < MAX_HINTS:
        if game.is_won(state):
            return HintGame(HintStop.WON, positions, played, state)
        avoid: frozenset[Move] = frozenset()
        cornered = False  # every legal move leads back: a position may come back, a move from it may not
        while True:
            try:
                given = (
                    player_hint(game, state, limits, HINT_SAMPLES, autoplay=True, avoid=avoid)
                    if knowledge is Knowledge.PLAYER
                    else hint(game, state, limits, autoplay=True, avoid=avoid)
                )
            except EveryMoveAvoided:
                if cornered:
                    return HintGame(HintStop.LOOP, positions, played, state)
                cornered, avoid = True, frozenset(tried.get(state, ()))
                continue
            positions += given.search.states
            if given.move is None:
                return HintGame(HintStop.STUCK, positions, played, state)
            after = run_autoplay(game, game.apply(state, given.move))[0]
            # (a move that reveals a card never leads back: what is face down changed)
            if cornered or game.move_reveals(state, given.move) or after not in seen:
                break
            avoid |= {given.move}  # it would come back: ask again, avoiding it
        tried.setdefault(state, set()).add(given.move)
        played.append((state, avoid, given.move))
        state = after
        seen.add(state)
    return HintGame(HintStop.WON if game.is_won(state) else HintStop.CAP, positions, played, state)


def follow_hints(game_id: str, deal: int, knowledge: Knowledge = Knowledge.PLAYER) -> tuple[str, int, int, str | None]:
    """The hint player's line: (how it ended, positions its hints searched, hints followed, None)."""
    played = play_by_hints(game_id, deal, knowledge)
    return played.stop.value, played.positions, len(played.played), None


def follow_full_hints(game_id: str, deal: int) -> tuple[str, int, int, str | None]:
    """The line of the hint player following full-knowledge hints (:func:`follow_hints`)."""
    return follow_hints(game_id, deal, Knowledge.FULL)


PLAYS = {Player.SOLVER: solve, Player.HINTS: follow_hints, Player.FULL_HINTS: follow_full_hints}
