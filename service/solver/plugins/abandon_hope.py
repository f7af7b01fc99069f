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

import time
from collections.abc import Hashable

from service.engine.abandon_hope import MAX_REDEALS, PILES, WASTE
from service.engine.core import REDEAL, Action, Game, Move, State
from service.engine.reshuffle import reshuffle_seed
from service.engine.shuffle import pysol_shuffle

from ..search import Limits, MoveLike, Outcome, SearchPlan, SolveResult, StopReason, Strategy, depth_first

CLUBS_IN_DECK = 13
TOP, BOTTOM, IN_STOCK = 0, 1, 2
# Where sorted card i lands after one reshuffle of n cards: (pile, layer) per card, and
# per pile the sorted index of its top and bottom cards (NONE: no such card).
NONE = 99
Layout = tuple[tuple[tuple[int, int], ...], tuple[int, ...], tuple[int, ...]]


def club_bit(card: int) -> int:
    """The Club's bit in a mask of Clubs (bit rank - 1)."""
    return 1 << ((card & 15) - 1)


def options_free(groups: list[tuple[int, ...]]) -> int:
    """How many Clubs the phase can discard: every option's largest set."""
    return sum(g[-1].bit_count() for g in groups)


class AbandonHopeStrategy(Strategy):
    plan = SearchPlan.OWN

    def __init__(self, game: Game, root: State) -> None:
        super().__init__(game, root)
        self.layouts: dict[tuple[int, int], Layout] = {}
        self.others = 0  # non-Clubs in the tableau and stock (they never leave)

    def key(self, state: State) -> Hashable:
        """Generic key, used only by the fallback search (identical positions)."""
        return (state.piles, state.counters)

    # --- layouts ---------------------------------------------------------------------
    def layout(self, n_redeal: int, n: int) -> Layout:
        """Where each sorted card lands when ``n`` cards are redealt by redeal ``n_redeal``:
        the engine's deal (from the end of the shuffled list, pile 0 to 23, twice)."""
        got = self.layouts.get((n_redeal, n))
        if got is not None:
            return got
        perm = pysol_shuffle(range(n), reshuffle_seed(self.root.deal, n_redeal))
        where = [(0, IN_STOCK)] * n
        top = [NONE] * PILES
        bottom = [NONE] * PILES
        for j, i in enumerate(perm):
            e = n - 1 - j  # dealing order: the list's last card is dealt first
            if e < PILES:
                where[i] = (e, BOTTOM)
                bottom[e] = i
            elif e < 2 * PILES:
                where[i] = (e - PILES, TOP)
                top[e - PILES] = i
        got = (tuple(where), tuple(top), tuple(bottom))
        self.layouts[(n_redeal, n)] = got
        return got

    def groups_after_redeal(self, n_redeal: int, left: int) -> list[tuple[int, ...]]:
        """The phase's discard options after redeal ``n_redeal`` with the Clubs ``left``:
        per pile holding an available Club, the masks it can give (top, then top and
        bottom)."""
        bits = [1 << b for b in range(CLUBS_IN_DECK) if left >> b & 1]
        k = len(bits)
        where, top, bottom = self.layout(n_redeal, k + self.others)
        groups: list[tuple[int, ...]] = []
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

    @staticmethod
    def family(groups: list[tuple[int, ...]]) -> list[int]:
        """Every discard set the phase can make, largest first."""
        fam = [0]
        for g in groups:
            fam = fam + [x | m for m in g for x in fam]
        fam.sort(key=int.bit_count, reverse=True)
        return fam

    # --- the search --------------------------------------------------------------------
    def own_search(self, limits: Limits, first: tuple[MoveLike, ...], root: State, t0: float) -> SolveResult:
        """Depth-first over phase nodes, largest discard sets first; exhaustive."""
        piles = root.piles
        clubs = [c for i in range(WASTE) for c in piles[i] if c < 16]
        left0 = 0
        for c in clubs:
            left0 |= club_bit(c)
        if left0.bit_count() != len(clubs) or any(c & 15 == 0 for c in clubs):
            return depth_first(self, limits, first, root, t0)  # not a valid position
        self.others = sum(len(piles[i]) for i in range(WASTE)) - len(clubs)
        need0 = CLUBS_IN_DECK - len(piles[WASTE])
        groups0: list[tuple[int, ...]] = []
        for t in range(PILES):
            p = piles[t]
            opts: list[int] = []
            m = 0
            for c in reversed(p):
                if c >= 16:
                    break
                m |= club_bit(c)
                opts.append(m)
            if opts:
                groups0.append(tuple(opts))
        deadline = t0 + limits.max_seconds
        max_states = max(1, limits.max_states)
        visited: set[int] = set()
        path: list[int] = []  # discard set of each phase searched so far
        stopped: list[StopReason] = []

        def search(r: int, left: int, groups: list[tuple[int, ...]]) -> bool:
            """Can the phase after ``r`` redeals, with these options, still win?"""
            need = need0 - (left0 ^ left).bit_count()
            if options_free(groups) >= need:
                return True
            if r >= MAX_REDEALS:
                return False
            for d in self.family(groups):
                child = left & ~d
                node = (r + 1) << CLUBS_IN_DECK | child
                if node in visited:
                    continue
                visited.add(node)
                if len(visited) >= max_states:
                    stopped.append(StopReason.STATES)
                    return False
                if time.monotonic() > deadline:  # each node lists up to 2^13 discard sets
                    stopped.append(StopReason.TIME)
                    return False
                path.append(d)
                if search(r + 1, child, self.groups_after_redeal(r + 1, child)):
                    return True
                path.pop()
                if stopped:
                    return False
            return False

        won = search(root.counters[0], left0, groups0)
        states = len(visited) + 1
        seconds = time.monotonic() - t0
        if won:
            moves = [Move(*m) for m in first] + self.replay(root, path)
            return SolveResult(Outcome.SOLVED, moves, states, seconds)
        if stopped:
            return SolveResult(Outcome.UNKNOWN, [], states, seconds, stopped[0])
        return SolveResult(Outcome.UNSOLVABLE, [], states, seconds)

    def replay(self, state: State, path: list[int]) -> list[Move]:
        """Engine moves that discard each phase's set, redeal, and finally discard until
        won (a Club on top of a pile is discarded whenever its bit is wanted)."""
        game = self.game
        moves: list[Move] = []
        for phase, want in enumerate([*path, -1]):
            while want and not game.is_won(state):
                for t in range(PILES):
                    p = state.piles[t]
                    if p and p[-1] < 16 and club_bit(p[-1]) & want:
                        m = Move(Action.MOVE, t, WASTE, 1)
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
