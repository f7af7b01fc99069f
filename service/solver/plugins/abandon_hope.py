"""Strategy of Abandon Hope: an exact search over (redeals used, Clubs still in play).

The game's only choices are which available Clubs to discard before each redeal, and
the search looks at nothing else. It is exhaustive, with no heuristic pruning: each
deal is decided (solved or proved unsolvable) once at most 3 x 8192 phase nodes are
visited.

Why it is exact (each step follows from the rules text in
:mod:`service.engine.abandon_hope`):

- **A phase is decided by its discard set.** Between two redeals the only moves are
  discards; a discard from one pile never changes another pile, and within a pile the
  Clubs leave top first. So the discard sets reachable in a phase are exactly the
  unions of one top run prefix per pile (0, 1 or 2 cards of the pile's run of Clubs
  from its top), in any order; and the phase wins iff it can discard as many Clubs as
  the waste still lacks (discarding never blocks another discard).
- **After a redeal only the cards left matter.** A redeal gathers and sorts the
  tableau and stock cards, then shuffles them with a seed that depends only on the
  deal number and the redeal count: the layout is a function of (deal, redeals used,
  set of cards left). The non-Clubs never leave, so a phase start is the node
  ``(redeals used, bit mask of the Clubs left)`` and equal nodes have the same future:
  a failed node need never be searched again (the visited set).
- **Fast layouts.** Fisher-Yates moves positions, whatever the cards are, so the
  shuffle of ``n`` sorted cards is one permutation of ``range(n)`` per (redeal, n),
  computed once with the engine's own shuffle. Clubs sort first, so the ``i``-th Club
  left (by rank) is sorted card ``i``; the permutation says which pile and which layer
  it lands in, and which card covers it.

Every solution is rebuilt by replaying the chosen discard sets through the engine and
verified again by :func:`~service.solver.answers.solve_position`. A position whose
tableau and stock hold a Club twice (not a valid one) falls back to the generic search.
"""

from __future__ import annotations

from collections.abc import Hashable

from service.engine.abandon_hope import MAX_REDEALS
from service.engine.cards import CLUBS, KING, Card, rank_of, suit_of
from service.engine.core import REDEAL, Action, Game, Move, State
from service.engine.reshuffle import reshuffle_seed
from service.engine.shuffle import pysol_shuffle

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
TOP, BOTTOM, IN_STOCK = 0, 1, 2
# Where sorted card i lands after one reshuffle of n cards: (pile, layer) per card, and
# per pile the sorted index of its top and bottom cards (NONE: no such card).
NONE = 99
Layout = tuple[tuple[tuple[int, int], ...], tuple[int, ...], tuple[int, ...]]
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
        # the piles a redeal gathers: the tableau, then the stock
        self.in_play = (*self.tableau, game.group_start["stock"])
        self.layouts: dict[tuple[int, int], Layout] = {}
        self.others = 0  # non-Clubs in the tableau and stock (they never leave)

    def key(self, state: State) -> Hashable:
        """Generic key, used only by the fallback search (identical positions)."""
        return (state.piles, state.counters)

    # --- layouts ---------------------------------------------------------------------
    def layout(self, n_redeal: int, n: int) -> Layout:
        """Where each sorted card lands when ``n`` cards are redealt by redeal ``n_redeal``:
        the engine's deal (:func:`~service.engine.abandon_hope.deal_layout`: from the end
        of the shuffled list, one card to each tableau pile in turn, then a second one)."""
        got = self.layouts.get((n_redeal, n))
        if got is not None:
            return got
        piles = len(self.tableau)
        perm = pysol_shuffle(range(n), reshuffle_seed(self.root.deal, n_redeal))
        where = [(0, IN_STOCK)] * n
        top = [NONE] * piles
        bottom = [NONE] * piles
        for j, i in enumerate(perm):
            e = n - 1 - j  # dealing order: the list's last card is dealt first
            if e < piles:
                where[i] = (e, BOTTOM)
                bottom[e] = i
            elif e < 2 * piles:
                where[i] = (e - piles, TOP)
                top[e - piles] = i
        got = (tuple(where), tuple(top), tuple(bottom))
        self.layouts[(n_redeal, n)] = got
        return got

    def groups_after_redeal(self, n_redeal: int, left: int) -> Options:
        """The phase's discard options after redeal ``n_redeal`` with the Clubs ``left``:
        per pile holding an available Club, the masks it can give (top, then top and
        bottom)."""
        bits = [1 << b for b in range(CLUBS_IN_DECK) if left >> b & 1]
        k = len(bits)
        where, top, bottom = self.layout(n_redeal, k + self.others)
        groups: Options = []
        for i in range(k):
            pile, layer = where[i]
            if layer == TOP:
                b = bottom[pile]
                if b < k:
                    groups.append((bits[i], bits[i] | bits[b]))
                else:
                    groups.append((bits[i],))
            elif layer == BOTTOM and top[pile] == NONE:
                groups.append((bits[i],))
        return groups

    def groups_now(self, state: State) -> Options:
        """The discard options of ``state``'s own piles: per tableau pile, its run of
        Clubs from the top, one more card at a time."""
        groups: Options = []
        for t in self.tableau:
            opts: list[int] = []
            m = 0
            for c in reversed(state.piles[t]):
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
        self.others = sum(len(piles[i]) for i in self.in_play) - len(clubs)
        phases = _PhaseSearch(self, limits, left, CLUBS_IN_DECK - len(piles[self.waste]))
        won = phases.search(root.counters[0], left, self.groups_now(root))
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
    """One exhaustive depth-first search over phase nodes ``(redeals used, Clubs left)``
    from a root whose Clubs in play are ``left0`` and which still lacks ``need0``
    discards: :attr:`path` is the winning discard sets, :attr:`stopped` why it gave up."""

    def __init__(self, strategy: AbandonHopeStrategy, limits: Limits, left0: int, need0: int) -> None:
        self.strategy = strategy
        self.deadline = overrun_deadline()  # the safety cap only: the budget is max_states
        self.max_states = max(1, limits.max_states)
        self.left0 = left0
        self.need0 = need0
        self.visited: set[int] = set()
        self.path: list[int] = []  # discard set of each phase searched so far
        self.stopped: StopReason | None = None

    def search(self, redeals: int, left: int, groups: Options) -> bool:
        """Can the phase after ``redeals`` redeals, with these options, still win?"""
        need = self.need0 - (self.left0 ^ left).bit_count()
        if options_free(groups) >= need:
            return True
        if redeals >= MAX_REDEALS:
            return False
        strategy, visited = self.strategy, self.visited
        for d in strategy.family(groups):
            child = left & ~d
            node = (redeals + 1) << CLUBS_IN_DECK | child
            if node in visited:
                continue
            visited.add(node)
            if len(visited) >= self.max_states:
                self.stopped = StopReason.STATES
                return False
            check_clock(self.deadline)  # each node lists up to 2^13 discard sets
            self.path.append(d)
            if self.search(redeals + 1, child, strategy.groups_after_redeal(redeals + 1, child)):
                return True
            self.path.pop()
            if self.stopped is not None:
                return False
        return False
