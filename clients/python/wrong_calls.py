"""Calls a Python frontend author could get wrong, on the openapi-python-client client
(clients/generated/python/patience_engine_client). A line that ends with a "wrong" comment
is one mistake, which must be a mypy error on that very line; every other line must
type-check. It proves that the contract types its requests tightly enough for the checker
to catch them. tests/clients/test_wrong_calls.py runs `mypy --strict` on it
(clients/python/mypy.ini, the bot's) and compares mypy's error lines with the marked ones.

Only type-checked, never run: `wrong_calls` takes the answers it reads as arguments.
"""

from __future__ import annotations

from patience_engine_client import Client
from patience_engine_client.api.games import deal_game, play_move
from patience_engine_client.api.replays import replay_moves
from patience_engine_client.api.solver import solve
from patience_engine_client.models import (
    AutoEvent,
    Autoplay,
    AutoplayEvent,
    CardMove,
    CardMoveAction,
    DealEvent,
    DealMove,
    DealMoveAction,
    DealRequest,
    DealResponse,
    GameId,
    HintRequest,
    HintResponse,
    Knowledge,
    Limits,
    MoveEvent,
    MoveRequest,
    MoveResponse,
    RedealEvent,
    RedealMove,
    ReplayRequest,
    ReplayResponse,
    SolveRequest,
    SolveResponse,
    SolveResult,
    StateRequest,
    Status,
)

Move = CardMove | DealMove | RedealMove
Event = AutoEvent | AutoplayEvent | DealEvent | MoveEvent | RedealEvent


def wrong_calls(
    client: Client, dealt: DealResponse, played: MoveResponse, hinted: HintResponse, solved: SolveResponse,
    replayed: ReplayResponse, move: Move, event: Event,
) -> None:
    """Each wrong call next to the right ones it changes one thing in."""
    state = dealt.state
    # Right (none may error).
    deal_game.sync(GameId.PENGUIN, client=client, body=DealRequest(deal=1))
    play_move.sync(GameId.PENGUIN, client=client, body=MoveRequest(state=state, move=move, autoplay=Autoplay.SAFE))
    MoveRequest(state=played.state, move=CardMove(action=CardMoveAction.MOVE, from_="tableau:0", to="cell:0", count=1))
    MoveRequest(state=replayed.state, move=DealMove(action=DealMoveAction.DEAL))
    solve.sync(GameId.PENGUIN, client=client, body=SolveRequest(state=state, knowledge=Knowledge.FULL, limits=Limits(max_seconds=1)))
    SolveRequest(state=state, autoplay=Autoplay.SAFE)
    HintRequest(state=state, knowledge=Knowledge.PLAYER, autoplay=Autoplay.NONE)
    replay_moves.sync(GameId.PENGUIN, client=client, body=ReplayRequest(deal=state.deal, moves=[*dealt.legal_moves, *solved.moves]))
    if hinted.move is not None:
        MoveRequest(state=state, move=hinted.move)

    # A move that is not a move.
    MoveRequest(state=state, move="move")  # wrong: a move given as a string
    MoveRequest(state=state, move=42)  # wrong: a move given as a number
    MoveRequest(state=state, move={})  # wrong: a move given as a dict
    MoveRequest(state=state, move=None)  # wrong: a move given as None
    CardMove(action="jump", from_="tableau:0", to="cell:0", count=1)  # wrong: an action no move has
    CardMove(action=DealMoveAction.DEAL, from_="tableau:0", to="cell:0", count=1)  # wrong: a deal move's action on a card move
    CardMove(action=CardMoveAction.MOVE, from_="tableau:0", to="cell:0")  # wrong: a card move without its count
    CardMove(action=CardMoveAction.MOVE, from_="tableau:0", to="cell:0", count="1")  # wrong: a count given as a string
    DealMove(action=DealMoveAction.DEAL, from_="stock:0")  # wrong: a deal move with a card move's field

    # Something else where a move goes.
    MoveRequest(state=state, move=dealt.state)  # wrong: a state where a move goes
    MoveRequest(state=state, move=dealt.legal_moves)  # wrong: a deal answer's legal_moves where one move goes
    MoveRequest(state=state, move=hinted.move)  # wrong: a hint's move, which may be None, where a move goes
    MoveRequest(state=state, move=event)  # wrong: an event where a move goes

    # Something else where a state goes.
    MoveRequest(state=move, move=move)  # wrong: a move where a state goes
    StateRequest(state=dealt)  # wrong: a deal answer where its state goes
    StateRequest(state=state.to_dict())  # wrong: a state's JSON where the state goes

    # Wrong enum values.
    MoveRequest(state=state, move=move, autoplay="all")  # wrong: autoplay given as a string, not an Autoplay
    MoveRequest(state=state, move=move, autoplay=Knowledge.FULL)  # wrong: a knowledge where autoplay goes
    SolveRequest(state=state, knowledge=Autoplay.SAFE)  # wrong: an autoplay where knowledge goes
    SolveRequest(state=state, autoplay="safe")  # wrong: autoplay given as a string, on a solve
    HintRequest(state=state, autoplay=Knowledge.FULL)  # wrong: a knowledge where a hint's autoplay goes
    deal_game.sync("klondike", client=client, body=DealRequest(deal=1))  # wrong: a game id that is not a GameId
    assert replayed.status is not SolveResult.SOLVED  # wrong: a solve result where a replay's status is read

    # Wrong shapes elsewhere.
    ReplayRequest(deal=1, moves=[1, "x", True])  # wrong: a replay's moves that are not moves
    ReplayRequest(deal=1, moves=move)  # wrong: one move where the list of moves goes
    ReplayRequest(deal=1, moves=played.events)  # wrong: events where moves go
    ReplayRequest(deal=state, moves=[move])  # wrong: a state where the deal number goes
    DealRequest(deal=[1])  # wrong: a deal number given as a list
    Limits(max_seconds="2")  # wrong: a limit given as a string
    SolveRequest(state=state, max_seconds=2)  # wrong: a limit outside limits

    # Missing required fields.
    MoveRequest(state=state)  # wrong: a move request without its move
    MoveRequest(move=move)  # wrong: a move request without its state
    ReplayRequest(moves=[move])  # wrong: a replay without its deal

    # Answers read wrong.
    count: int = dealt.deal  # wrong: the answer's deal number is a string
    advice: Move = hinted.move  # wrong: a hint's move may be None
    source: str = move.from_  # wrong: only card moves have piles
    done: Status = replayed.result  # wrong: a replay's result where its status goes
    print(count, advice, source, done)
