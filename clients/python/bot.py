"""A bot written as a Python frontend author writes one, on the client that `make clients`
generates from openapi.yaml with openapi-python-client (clients/generated/python).

It lists the games, deals Penguin deal 1, asks for a hint and plays it, plays the first
legal move 20 times, all with `"autoplay": "safe"`, solves the position reached (with the
same autoplay), replays every move played and the solution's from the deal to `won`, and
reads an illegal move (409) and an inconsistent state (422) as typed problems. Each
answer's state and moves go into the next request as they came, as a frontend's do. It is
the proof that the contract needs no cast nor conversion: tests/clients/test_bots.py checks
it with `mypy --strict` and refuses casts, the Any type and silenced errors in it.

Usage: PYTHONPATH=clients/generated/python clients/.venv/bin/python clients/python/bot.py
http://127.0.0.1:8000. Prints what it does, and `won` last.
"""

from __future__ import annotations

import sys
from typing import TypeVar

import attrs
from patience_engine_client import Client
from patience_engine_client.api.games import deal_game, get_game, legal_moves, list_games, play_move
from patience_engine_client.api.replays import replay_moves
from patience_engine_client.api.solver import hint, solve
from patience_engine_client.models import (
    Autoplay,
    CardMove,
    CardMoveAction,
    DealMove,
    DealRequest,
    DealResponse,
    GameId,
    HintRequest,
    Knowledge,
    Limits,
    MoveRequest,
    MoveResponse,
    Problem,
    ProblemCode,
    RedealMove,
    ReplayRequest,
    SolveRequest,
    SolveResult,
    State,
    StateRequest,
    Status,
)
from patience_engine_client.types import Unset

GAME = GameId.PENGUIN
DEAL = 1
WANDER = 20  # first legal moves played before the solver takes over

Move = CardMove | DealMove | RedealMove
Answer = TypeVar("Answer")


class BotError(Exception):
    """The service answered something the bot did not expect."""


def answered(answer: Answer | Problem | None, operation: str) -> Answer:
    """The answer of a call that should succeed; a problem (or no documented answer) stops the bot."""
    if answer is None:
        raise BotError(f"{operation}: an answer the contract does not document")
    if isinstance(answer, Problem):
        raise BotError(f"{operation}: {answer.status} {answer.code}: {answer.detail}")
    return answer


def refused(answer: object, operation: str) -> ProblemCode:
    """The code of a problem the call should have answered, printed with its rule if any."""
    if not isinstance(answer, Problem):
        raise BotError(f"{operation}: accepted, but should have been refused")
    rule = "" if isinstance(answer.rule, Unset) else f" (rule {answer.rule})"
    print(f"  {answer.status} {answer.code}{rule}: {answer.detail}")
    return answer.code


def describe(move: Move) -> str:
    """A move in words; card moves are the only ones with piles and a count."""
    if isinstance(move, CardMove):
        return f"{move.count} card(s) from {move.from_} to {move.to}"
    if isinstance(move, DealMove):
        return "deal from the stock"
    return "redeal"


def illegal_tableau_move(legal: list[Move], piles: int) -> CardMove:
    """A card move between two tableau piles that is not among the legal ones."""
    listed = {(move.from_, move.to) for move in legal if isinstance(move, CardMove)}
    for source in range(piles):
        for target in range(piles):
            pair = (f"tableau:{source}", f"tableau:{target}")
            if source != target and pair not in listed:
                return CardMove(action=CardMoveAction.MOVE, from_=pair[0], to=pair[1], count=1)
    raise BotError("every tableau move is legal")


def with_card_twice(state: State) -> State:
    """The state with the top card of its second tableau pile copied onto the first: a card
    twice (a new state and piles, attrs.evolve's copies; the answer's state is left as it came)."""
    tableau = state.piles.tableau
    if isinstance(tableau, Unset) or len(tableau) < 2 or not tableau[1]:
        raise BotError("the deal has no two tableau piles with cards")
    first, second, *rest = tableau
    piles = attrs.evolve(state.piles, tableau=[[*first, second[-1]], second, *rest])
    return attrs.evolve(state, piles=piles)


def main(base_url: str) -> Status:
    """Plays the game against the service at ``base_url``: the replayed game's status."""
    client = Client(base_url=base_url, raise_on_unexpected_status=True)

    games = answered(list_games.sync(client=client), "list_games")
    print(f"games: {', '.join(game.id for game in games.games)} ({games.state_protection})")
    game = next((each for each in games.games if each.id is GAME), None)
    if game is None:
        raise BotError(f"no game {GAME}")

    detail = answered(get_game.sync(game.id, client=client), "get_game")
    tableau = next((group for group in detail.pile_groups if group.name == "tableau"), None)
    if tableau is None:
        raise BotError("no tableau")
    print(f"{detail.name}: {tableau.count} tableau piles")

    deal = answered(deal_game.sync(game.id, client=client, body=DealRequest(deal=DEAL)), "deal_game")
    print(f"deal {deal.deal}: {deal.status}, {len(deal.legal_moves)} legal moves")

    advice = answered(
        hint.sync(game.id, client=client, body=HintRequest(state=deal.state, autoplay=Autoplay.SAFE)), "hint",
    )
    if advice.move is None:
        raise BotError("no hint on a fresh deal")
    print(f"hint: {describe(advice.move)} ({advice.reason})")

    # Every move sent, in order, for the replay; the position after the last one.
    played: list[Move] = []
    position: DealResponse | MoveResponse = deal
    following: Move | None = advice.move
    while following is not None and len(played) <= WANDER:
        answer = answered(
            play_move.sync(
                game.id, client=client, body=MoveRequest(state=position.state, move=following, autoplay=Autoplay.SAFE),
            ),
            "play_move",
        )
        played.append(following)
        print(f"played {describe(following)}: {', '.join(event.type_ for event in answer.events)}; {answer.status}")
        position = answer
        following = next(iter(position.legal_moves), None)

    solved = answered(
        solve.sync(
            game.id, client=client,
            body=SolveRequest(
                state=position.state, knowledge=Knowledge.FULL, autoplay=Autoplay.SAFE, limits=Limits(max_seconds=10),
            ),
        ),
        "solve",
    )
    if solved.result is not SolveResult.SOLVED:
        raise BotError(f"solve: {solved.result}, stopped by {solved.stats.stopped_by}")
    print(f"solved in {len(solved.moves)} moves, {solved.stats.states} positions")

    replay = ReplayRequest(deal=deal.deal, moves=[*played, *solved.moves], autoplay=Autoplay.SAFE)
    replayed = answered(replay_moves.sync(game.id, client=client, body=replay), "replay_moves")
    print(f"replayed {replayed.moves} moves: {replayed.status}, result {replayed.result.status}")
    if replayed.result.status is not replayed.status:
        raise BotError("the replay's result and its status differ")

    illegal = illegal_tableau_move(deal.legal_moves, tableau.count)
    print(f"{describe(illegal)}:")
    answer_409 = play_move.sync(game.id, client=client, body=MoveRequest(state=deal.state, move=illegal))
    if refused(answer_409, "play_move") is not ProblemCode.ILLEGAL_MOVE:
        raise BotError("an illegal move should be refused as illegal-move")

    print("a card twice:")
    answer_422 = legal_moves.sync(game.id, client=client, body=StateRequest(state=with_card_twice(deal.state)))
    if refused(answer_422, "legal_moves") is not ProblemCode.INVALID_STATE:
        raise BotError("a card twice should be refused as invalid-state")

    return replayed.status


if __name__ == "__main__":
    status = main(sys.argv[1] if len(sys.argv) > 1 else "http://127.0.0.1:8000")
    print(status)
    sys.exit(0 if status is Status.WON else 1)
