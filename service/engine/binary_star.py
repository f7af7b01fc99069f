"""Binary Star: Black Hole with two decks and two stars.

docs/rules.md "Binary Star". 102 cards in 17 fans of 6; the fans' top cards go to two
stars (started by an Ace of Spades and a King of Hearts) that build up or down by one
regardless of suit, Ace and King consecutive. A star's top card may move to the other
star when it fits there; a star's starting card never moves.

Loss is exact (docs/rules.md **Decided**): the status is ``lost`` when no fan card can be
played to a star now or after any sequence of star-to-star moves. Moving the top of
one star onto the other keeps the string "star 0 bottom to top, then star 1 top to
bottom" unchanged and only shifts the split point between the stars by one, and a
move is possible exactly when the two cards at the split are consecutive; so the
positions reachable by star-to-star moves are the split points of one interval, found
by walking left and right from the current one (:func:`reachable_tops`).
"""

from __future__ import annotations

from typing import Final

from .cards import ACE, ALL_RANKS, HEARTS, KING, RANK_OF, SPADES, Card, card_name, full_suit_deck, make_card, rank_of
from .core import (
    Action,
    Event,
    EventKind,
    Game,
    Move,
    PileGroup,
    Problem,
    Rejection,
    State,
    Status,
)
from .shuffle import pysol_shuffle

FANS: Final = 17
FAN_CARDS: Final = 6
STARS: Final = 2
CARDS: Final = 104
# PySolFC's hook takes deck 0's Ace of Spades and King of Hearts (creation indices 13
# and 38) out of the shuffled talon; they start star 0 and star 1.
STAR_INDICES: Final = (13, 38)
STAR_BASES: Final = (make_card(ACE, SPADES), make_card(KING, HEARTS))

S0 = 0  # stars first, then the fans
F0 = STARS
STAR_RANGE: Final = range(S0, S0 + STARS)
FAN_RANGE: Final = range(F0, F0 + FANS)

N_RANKS: Final = len(ALL_RANKS)
#: The stars' building rule, stated once: ``ONE_APART[a][b]`` for ranks ``a`` and ``b``
#: (1..13; index 0, no rank, is never asked) one apart, Ace and King consecutive. A
#: table, because legal-move generation and the solver ask it in their inner loops.
ONE_APART: Final = tuple(
    tuple((a - b) % N_RANKS in (1, N_RANKS - 1) for b in range(N_RANKS + 1)) for a in range(N_RANKS + 1)
)


def consecutive(a: Card, b: Card) -> bool:
    """Ranks one apart, regardless of suit, Ace and King consecutive."""
    return ONE_APART[rank_of(a)][rank_of(b)]


def reachable_tops(star_a: tuple[Card, ...], star_b: tuple[Card, ...]) -> list[Card]:
    """Every card that is the top of a star in some position reachable from
    (``star_a``, ``star_b``) by star-to-star moves (the current tops included).

    Let ``s`` be ``star_a`` bottom to top followed by ``star_b`` top to bottom, and the
    split ``k = len(star_a)``: star A is ``s[:k]``, star B ``s[k:]`` reversed. Moving
    A's top onto B gives split ``k - 1``, B's top onto A split ``k + 1``; either needs
    ``s[k-1]`` and ``s[k]`` consecutive, and neither star may give up its bottom card
    (``1 <= k <= len(s) - 1``). The tops at split ``k`` are ``s[k-1]`` and ``s[k]``.
    """
    s = star_a + star_b[::-1]
    n = len(s)
    k0 = len(star_a)
    lo = k0
    while lo >= 2 and consecutive(s[lo - 1], s[lo]):
        lo -= 1
    hi = k0
    while hi <= n - 2 and consecutive(s[hi - 1], s[hi]):
        hi += 1
    return list(s[lo - 1 : hi + 1])


class BinaryStar(Game):
    id = "binary-star"
    name = "Binary Star"
    decks = 2
    summary = "Two-deck Black Hole: 17 fans of 6 play onto two stars, up or down by one regardless of suit."
    rules_text = """
Two decks, 104 cards. One Ace of Spades and one King of Hearts are taken out before the
shuffle (as PySolFC does: the first deck's copies) and start the two stars: star 0 is
the Ace of Spades, star 1 the King of Hearts. The other 102 cards are dealt face up to
17 fans, row by row, 6 cards each.

Fans (17): no building; only the top card moves, and only to a star. An emptied fan
stays empty.

Stars (2): build up or down by one regardless of suit, Ace and King counting as
consecutive (K-A and A-K both fit), with no limit on length. The top card of one star
may be moved to the other star if it fits there. Decided: a star's starting card never
moves, so a star is never empty. Star cards never go back to the fans.

Won when all 104 cards are on the two stars. Lost (Decided) when no fan card can be
played to a star, either now or after any sequence of moves between the stars. Cards
could shuttle between the stars for ever, so the status is lost even though
star-to-star moves are still listed as legal moves. (A move between the stars keeps
the cards in one string, star 0 bottom to top then star 1 top to bottom, and only
shifts the point where the string is split; so the reachable star tops are all the
cards of the stars if the two tops are consecutive, else just the two tops.)
"""
    autoplay_rule = (
        "none. Every card move is a choice: a fan card played to a star changes that "
        "star's top and can shut out the other fans' cards that the old top would have "
        "taken, and a move between the stars changes both tops; no move is harmless in "
        "every position, so nothing is ever moved automatically."
    )

    def make_groups(self) -> tuple[PileGroup, ...]:
        return (
            PileGroup(
                "star", STARS, 0, 0,
                description="builds up or down by one regardless of suit, A-K consecutive",
            ),
            PileGroup(
                "fan", FANS, 1, 0, fan="right", per_row=6,
                description="no building; the top card goes to a star",
            ),
        )

    def deck(self) -> tuple[Card, ...]:
        return full_suit_deck(ALL_RANKS, 2)

    # --- the deal ------------------------------------------------------------------
    def deal_state(self, deal: int) -> State:
        cards = self.deck()
        order = pysol_shuffle(range(CARDS), deal)
        talon = [cards[i] for i in order if i not in STAR_INDICES]
        piles: list[list[Card]] = [[] for _ in self.pile_refs]
        for _row in range(FAN_CARDS):
            for f in FAN_RANGE:
                piles[f].append(talon.pop())
        for s, star_base in zip(STAR_RANGE, STAR_BASES, strict=True):
            piles[s].append(star_base)
        return State(tuple(tuple(p) for p in piles), (), deal)

    # --- moves ---------------------------------------------------------------------
    def legal_moves(self, state: State) -> list[Move]:
        piles = state.piles
        MOVE = Action.MOVE
        # RANK_OF, not rank_of: a rank per fan, and a call there would cost measurably
        rank = RANK_OF
        a, b = piles[S0], piles[S0 + 1]
        fits_a, fits_b = ONE_APART[rank[a[-1]]], ONE_APART[rank[b[-1]]]
        moves: list[Move] = []
        for f in FAN_RANGE:
            fp = piles[f]
            if fp:
                r = rank[fp[-1]]
                if fits_a[r]:
                    moves.append(Move(MOVE, f, S0, 1))
                if fits_b[r]:
                    moves.append(Move(MOVE, f, S0 + 1, 1))
        if fits_a[rank[b[-1]]]:
            if len(a) > 1:
                moves.append(Move(MOVE, S0, S0 + 1, 1))
            if len(b) > 1:
                moves.append(Move(MOVE, S0 + 1, S0, 1))
        return moves

    def _apply(self, state: State, move: Move, events: list[Event] | None) -> State:
        piles = list(state.piles)
        src, dst = move.src, move.dst
        sp = piles[src]
        card = sp[-1]
        piles[src] = sp[:-1]
        piles[dst] = piles[dst] + (card,)
        if events is not None:
            events.append(Event(EventKind.MOVE, src, dst, (card,)))
        return State(tuple(piles), state.counters, state.deal)

    def is_won(self, state: State) -> bool:
        p = state.piles
        return len(p[S0]) + len(p[S0 + 1]) == CARDS

    def can_still_play_fan(self, state: State) -> bool:
        """Whether some fan card can go to a star now or after star-to-star moves."""
        piles = state.piles
        tops = {rank_of(c) for c in reachable_tops(piles[S0], piles[S0 + 1])}
        fits = {r for r in ALL_RANKS if any(ONE_APART[r][t] for t in tops)}
        return any(piles[f] and rank_of(piles[f][-1]) in fits for f in FAN_RANGE)

    def status(self, state: State, moves: list[Move] | None = None) -> Status:
        if self.is_won(state):
            return Status.WON
        return Status.PLAYING if self.can_still_play_fan(state) else Status.LOST

    # --- why a move is illegal -----------------------------------------------------
    def why_illegal(self, state: State, move: Move) -> Rejection | None:
        piles = state.piles
        gs, gd = self.group_of[move.src], self.group_of[move.dst]
        if gd == "fan":
            if gs == "star":
                return Rejection(
                    "star-cards-stay", "a card on a star never goes back to the fans"
                )
            return Rejection("fans-take-no-cards", "fans allow no building: nothing is put on a fan")
        if move.count != 1:
            return Rejection("one-card-at-a-time", "only the top card moves, one card at a time")
        sp = piles[move.src]
        if gs == "star" and len(sp) == 1:
            return Rejection(
                "star-base-stays",
                f"the {card_name(sp[0])} started {self.ref(move.src)}: a star's starting card "
                "never moves",
            )
        card = sp[-1]
        top = piles[move.dst][-1]
        return Rejection(
            "star-builds-up-or-down-by-one",
            "a star builds up or down by one regardless of suit (Ace and King consecutive): "
            f"the {card_name(card)} does not go on the {card_name(top)}",
        )

    # --- validation ----------------------------------------------------------------
    def validate_piles(self, state: State) -> list[Problem]:
        problems: list[Problem] = []
        piles = state.piles
        for s, star_base in zip(STAR_RANGE, STAR_BASES, strict=True):
            sp = piles[s]
            if not sp or sp[0] != star_base:
                problems.append(
                    Problem(
                        self.pointer(s, 0) if sp else self.pointer(s),
                        f"{self.ref(s)} starts with the {card_name(star_base)}, which never moves",
                    )
                )
                continue
            for i in range(1, len(sp)):
                if not consecutive(sp[i - 1], sp[i]):
                    problems.append(
                        Problem(
                            self.pointer(s, i),
                            "a star builds up or down by one (Ace and King consecutive)",
                        )
                    )
                    break
        for f in FAN_RANGE:
            if len(piles[f]) > FAN_CARDS:
                problems.append(
                    Problem(self.pointer(f), f"a fan holds at most the {FAN_CARDS} cards dealt to it")
                )
        return problems


GAME = BinaryStar
