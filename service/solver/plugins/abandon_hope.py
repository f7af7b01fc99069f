"""Strategy of Abandon Hope: an exact search over phases (redeals used, cards gathered).

The game's only choices are which available Clubs to discard before each redeal, and
the search looks at nothing else. It is exhaustive, with no heuristic pruning: each
deal is decided (solved or proved unsolvable) unless the position budget runs out.

Why it is exact (each step follows from the rules text in
:mod:`service.engine.abandon_hope`):

- **A phase is decided by its discard set.** Between two redeals the only moves are
  discards; a discard from one pile never changes another pile, and within a pile the
  Clubs leave top first. So the discard sets reachable in a phase are exactly the
  unions of one top run prefix per pile (0, 1 or 2 cards of the pile's run of Clubs
  from its top), in any order; and the phase wins iff it can discard as many Clubs as
  the waste still lacks (discarding never blocks another discard).
- **After a redeal only the cards gathered matter, in their order.** A redeal gathers
  the tableau piles 0-23 then the stock, each bottom to top, and reshuffles them with a
  seed that hashes the deal seed, the redeal count and those cards in that order
  (:func:`~service.engine.reshuffle.reshuffle_seed`, docs/rules.md "Determinism"). The
  gathered sequence is the phase's piles with the discarded Clubs taken out, so a phase
  start is the node ``(redeals used, gathered sequence)`` and equal nodes have the same
  future: a failed node need never be searched again (the visited set). The redeal
  count and the Clubs left are not enough: two lines that leave the same Clubs but
  discard them in different phases gather different sequences, and so get unrelated
  reshuffles; every discard set is a fresh draw of the next layout.
- **Layouts from the engine.** Each node's layout is the engine's own
  (:func:`~service.engine.reshuffle.reshuffle` then
  :func:`~service.engine.abandon_hope.deal_layout`), computed once per node.

Every solution is rebuilt by replaying the chosen discard sets through the engine and
verified again by :func:`~service.solver.answers.solve_position`. A position whose
tableau and stock hold a Club twice (not a valid one) falls back to the generic search.
"""

from __future__ import annotations

from collections.abc import Hashable

from service.engine.abandon_hope import MAX_REDEALS, deal_layout
from service.engine.cards import CLUBS, KING, Card, rank_of, suit_of
from service.engine.core import REDEAL, Action, Game, Move, State
from service.engine.reshuffle import reshuffle

from ..search import (
    Limits,
    MoveLike,
    SearchPlan,
    SolveResult,
    StopReason,
    Strategy,
    check_clock,
    depth_first,
    overrun_deadline,
)

CLUBS_IN_DECK = KING  # one Club of each rank
# A phase's piles: the tableau piles, then the stock, each bottom to top (gathered order).
Phase = tuple[tuple[Card, ...], ...]
# A phase's discard options: per pile holding available Clubs, the masks it can give
# (its top Club, then its top two, ...), each including the one before.
Options = list[tuple[int, ...]]


def is_club(card: Card) -> bool:
    return suit_of(card) == CLUBS


def club_bit(card: Card) -> int:
    """The Club's bit in a mask of Clubs (bit rank - 1)."""
    return 1 << (rank_of(card) - 1)


def options_free(groups: Options) -> int:
    """How many Clubs the phase can discard: every option's largest set."""
    return sum(g[-1].bit_count() for g in groups)


class AbandonHopeStrategy(Strategy):
    """The exact phase search of the module docstring (plan OWN)."""

    plan = SearchPlan.OWN
    positions_per_second = 100_000  # the positions a second of budget buys (bench/positions-budget.md)

    def __init__(self, game: Game, root: State) -> None:
        super().__init__(game, root)
        self.tableau = game.group_range("tableau")
        self.waste = game.group_start["waste"]
        # the piles a redeal gathers, in its order: the tableau, then the stock
        self.in_play = (*self.tableau, game.group_start["stock"])

    def key(self, state: State) -> Hashable:
        """Generic key, used only by the fallback search (identical positions)."""
        return (state.piles, state.counters)

    # --- phases ------------------------------------------------------------------------
    @staticmethod
    def gathered(phase: Phase, discarded: int) -> bytes:
        """The cards a redeal gathers after the phase ``phase`` discards the Clubs of the
        mask ``discarded`` (they leave from the tops, so the rest keep their order)."""
        return bytes(c for p in phase for c in p if not (is_club(c) and club_bit(c) & discarded))

    def redeal(self, gathered: bytes, n_redeal: int) -> Phase:
        """The phase's piles after redeal ``n_redeal`` of ``gathered``: the engine's."""
        return deal_layout(reshuffle(gathered, self.root.deal, n_redeal))

    def groups(self, phase: Phase) -> Options:
        """The discard options of a phase's tableau piles: per pile, its run of Clubs from
        the top, one more card at a time."""
        groups: Options = []
        for pile in phase[: len(self.tableau)]:
            opts: list[int] = []
            m = 0
            for c in reversed(pile):
                if not is_club(c):
                    break
                m |= club_bit(c)
                opts.append(m)
            if opts:
                groups.append(tuple(opts))
        return groups

    @staticmethod
    def family(groups: Options) -> list[int]:
        """Every discard set the phase can make, largest first."""
        fam = [0]
        for g in groups:
            fam = fam + [x | m for m in g for x in fam]
        fam.sort(key=int.bit_count, reverse=True)
        return fam

    # --- the search --------------------------------------------------------------------
    def own_search(self, limits: Limits, first: tuple[MoveLike, ...], root: State, started: float) -> SolveResult:
        """Depth-first over phase nodes, largest discard sets first; exhaustive."""
        piles = root.piles
        clubs = [c for i in self.in_play for c in piles[i] if is_club(c)]
        left = 0
        for c in clubs:
            left |= club_bit(c)
        if left.bit_count() != len(clubs) or any(rank_of(c) == 0 for c in clubs):
            return depth_first(self, limits, first, root, started)  # not a valid position
        phases = _PhaseSearch(self, limits, left, CLUBS_IN_DECK - len(piles[self.waste]))
        won = phases.search(root.counters[0], left, tuple(piles[i] for i in self.in_play))
        states = len(phases.visited) + 1
        if won:
            return SolveResult.solved([Move(*m) for m in first] + self.replay(root, phases.path), states, started)
        if phases.stopped is not None:
            return SolveResult.unknown(phases.stopped, states, started)
        return SolveResult.unsolvable(states, started)

    def replay(self, state: State, path: list[int]) -> list[Move]:
        """Engine moves that discard each phase's set, redeal, and finally discard until
        won (a Club on top of a pile is discarded whenever its bit is wanted)."""
        game = self.game
        moves: list[Move] = []
        for phase, want in enumerate([*path, -1]):
            while want and not game.is_won(state):
                for t in self.tableau:
                    p = state.piles[t]
                    if p and is_club(p[-1]) and club_bit(p[-1]) & want:
                        m = Move(Action.MOVE, t, self.waste, 1)
                        moves.append(m)
                        state = game.apply(state, m)
                        want &= ~club_bit(p[-1])
                        break
                else:
                    break  # nothing wanted is available: verify() will refuse the solution
            if phase < len(path):
                moves.append(REDEAL)
                state = game.apply(state, REDEAL)
        return moves


class _PhaseSearch:
    """One exhaustive depth-first search over phase nodes ``(redeals used, gathered
    sequence)`` from a root whose Clubs in play are ``left0`` and which still lacks
    ``need0`` discards: :attr:`path` is the winning discard sets, :attr:`stopped` why it
    gave up."""

    def __init__(self, strategy: AbandonHopeStrategy, limits: Limits, left0: int, need0: int) -> None:
        self.strategy = strategy
        self.deadline = overrun_deadline()  # the safety cap only: the budget is max_states
        self.max_states = max(1, limits.max_states)
        self.left0 = left0
        self.need0 = need0
        self.visited: set[tuple[int, bytes]] = set()
        self.path: list[int] = []  # discard set of each phase searched so far
        self.stopped: StopReason | None = None

    def search(self, redeals: int, left: int, phase: Phase) -> bool:
        """Can the phase ``phase`` after ``redeals`` redeals, with the Clubs ``left`` in
        play, still win?"""
        strategy, visited = self.strategy, self.visited
        groups = strategy.groups(phase)
        need = self.need0 - (self.left0 ^ left).bit_count()
        if options_free(groups) >= need:
            return True
        if redeals >= MAX_REDEALS:
            return False
        for d in strategy.family(groups):
            gathered = strategy.gathered(phase, d)
            node = (redeals + 1, gathered)
            if node in visited:
                continue
            visited.add(node)
            if len(visited) >= self.max_states:
                self.stopped = StopReason.STATES
                return False
            check_clock(self.deadline)  # each node lists up to 2^13 discard sets
            self.path.append(d)
            if self.search(redeals + 1, left & ~d, strategy.redeal(gathered, redeals + 1)):
                return True
            self.path.pop()
            if self.stopped is not None:
                return False
        return False
